//! Which `--format`s each command writes, in one table: a format a command
//! cannot write is a usage error (exit 2) before anything runs.

use crate::cli::{
    Command, ConfigCommand, DbCommand, Format, McpCommand, PlanCommand, SkillCommand, ToolCommand,
};

const TABLE: &[Format] = &[Format::Table];
/// A table for people or a JSON (or YAML) result.
const STRUCTURED: &[Format] = &[Format::Table, Format::Json];
const DOCUMENT: &[Format] = &[Format::Table, Format::Json, Format::Yaml];
const TOOLS: &[Format] = &[
    Format::Table,
    Format::Json,
    Format::Openai,
    Format::Anthropic,
    Format::Mcp,
];
const GRAPH: &[Format] = &[Format::Dot, Format::Mermaid, Format::Json];

/// Every command by its name as typed (with the flag that changes what it
/// writes, where one does) and the formats it writes: what `of` checks a
/// command against and what each command's `--help` lists.
pub const COMMANDS: &[(&str, &[Format])] = &[
    ("skill add", STRUCTURED),
    ("skill update", STRUCTURED),
    ("skill apply", STRUCTURED),
    ("skill get", DOCUMENT),
    ("skill prompt", TABLE),
    ("skill list", STRUCTURED),
    ("skill remove", STRUCTURED),
    // The explanation is a table's tree or a JSON field: a tool array for
    // a model API has no place for it.
    ("skill tools --explain", STRUCTURED),
    ("skill tools --budget", STRUCTURED),
    ("skill tools", TOOLS),
    ("skill lock", STRUCTURED),
    ("skill diff", STRUCTURED),
    ("skill graph", GRAPH),
    ("skill validate", STRUCTURED),
    ("skill discover", STRUCTURED),
    ("skill lint", STRUCTURED),
    ("tool add", STRUCTURED),
    ("tool list", STRUCTURED),
    ("tool get --body", TABLE),
    ("tool get", DOCUMENT),
    ("tool remove", STRUCTURED),
    ("tool call", STRUCTURED),
    ("tool trust", TABLE),
    ("mcp refresh", STRUCTURED),
    ("mcp list", STRUCTURED),
    ("mcp tools", STRUCTURED),
    ("mcp serve", STRUCTURED),
    ("mcp import", STRUCTURED),
    ("mcp export", STRUCTURED),
    ("mcp trust", STRUCTURED),
    ("mcp untrust", STRUCTURED),
    ("plan validate", STRUCTURED),
    ("config show", STRUCTURED),
    ("db init", STRUCTURED),
    ("db migrate", STRUCTURED),
    ("db status", STRUCTURED),
    // To stdout it writes the export itself; to a file, a summary.
    ("db export", TABLE),
    ("db export -o", STRUCTURED),
    ("db import", STRUCTURED),
    ("completions", TABLE),
    ("man", TABLE),
    // It writes JSON whatever is asked, and YAML when asked.
    ("schema", STRUCTURED),
];

/// The formats of the command called `name` in [`COMMANDS`].
pub fn by_name(name: &str) -> &'static [Format] {
    COMMANDS
        .iter()
        .find(|(command, _)| *command == name)
        .map_or(TABLE, |(_, formats)| formats)
}

/// The command's name as typed and the formats it writes.
pub fn of(command: &Command) -> (&'static str, &'static [Format]) {
    let name = match command {
        Command::Skill(command) => match command {
            SkillCommand::Add { .. } => "skill add",
            SkillCommand::Update { .. } => "skill update",
            SkillCommand::Apply { .. } => "skill apply",
            SkillCommand::Get { .. } => "skill get",
            SkillCommand::Prompt { .. } => "skill prompt",
            SkillCommand::List { .. } => "skill list",
            SkillCommand::Remove { .. } => "skill remove",
            SkillCommand::Tools { explain: true, .. } => "skill tools --explain",
            SkillCommand::Tools { budget: true, .. } => "skill tools --budget",
            SkillCommand::Tools { .. } => "skill tools",
            SkillCommand::Lock { .. } => "skill lock",
            SkillCommand::Diff { .. } => "skill diff",
            SkillCommand::Graph { .. } => "skill graph",
            SkillCommand::Validate { .. } => "skill validate",
            SkillCommand::Discover { .. } => "skill discover",
            SkillCommand::Lint { .. } => "skill lint",
        },
        Command::Tool(command) => match command {
            ToolCommand::Add { .. } => "tool add",
            ToolCommand::List { .. } => "tool list",
            ToolCommand::Get { body: true, .. } => "tool get --body",
            ToolCommand::Get { .. } => "tool get",
            ToolCommand::Remove { .. } => "tool remove",
            ToolCommand::Call { .. } => "tool call",
            ToolCommand::Trust { .. } => "tool trust",
        },
        Command::Mcp(command) => match command {
            McpCommand::Refresh { .. } => "mcp refresh",
            McpCommand::List => "mcp list",
            McpCommand::Tools { .. } => "mcp tools",
            McpCommand::Serve { .. } => "mcp serve",
            McpCommand::Import { .. } => "mcp import",
            McpCommand::Export { .. } => "mcp export",
            McpCommand::Trust { .. } => "mcp trust",
            McpCommand::Untrust { .. } => "mcp untrust",
        },
        Command::Plan(PlanCommand::Validate { .. }) => "plan validate",
        Command::Config(ConfigCommand::Show) => "config show",
        Command::Db(command) => match command {
            DbCommand::Init => "db init",
            DbCommand::Migrate => "db migrate",
            DbCommand::Status => "db status",
            DbCommand::Export { output: None } => "db export",
            DbCommand::Export { .. } => "db export -o",
            DbCommand::Import { .. } => "db import",
        },
        Command::Completions { .. } => "completions",
        Command::Man { .. } => "man",
        Command::Schema { .. } => "schema",
    };
    (name, by_name(name))
}

/// What a leaf command's `--help` says of `--format`: the formats it
/// writes, and those it writes with one of its flags (`skill tools
/// --explain`, `tool get --body`, `db export -o`).
pub fn help_of(path: &str) -> String {
    let names = |formats: &[Format]| -> String {
        formats
            .iter()
            .filter_map(|format| {
                clap::ValueEnum::to_possible_value(format).map(|v| v.get_name().to_owned())
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut text = format!("Output format: {}", names(by_name(path)));
    for (name, formats) in COMMANDS {
        if let Some(flag) = name
            .strip_prefix(path)
            .and_then(|rest| rest.strip_prefix(' '))
        {
            text.push_str(&format!("; with `{flag}`: {}", names(formats)));
        }
    }
    text
}

/// The format a command writes when none is given: the first it lists
/// (`skill graph` draws `dot`).
pub fn default_of(command: &Command) -> Format {
    of(command).1.first().copied().unwrap_or(Format::Table)
}
