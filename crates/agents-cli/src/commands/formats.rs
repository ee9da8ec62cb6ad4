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

/// The command's name as typed and the formats it writes.
pub fn of(command: &Command) -> (&'static str, &'static [Format]) {
    match command {
        Command::Skill(command) => match command {
            SkillCommand::Add { .. } => ("skill add", STRUCTURED),
            SkillCommand::Update { .. } => ("skill update", STRUCTURED),
            SkillCommand::Apply { .. } => ("skill apply", STRUCTURED),
            SkillCommand::Get { .. } => ("skill get", DOCUMENT),
            SkillCommand::Prompt { .. } => ("skill prompt", TABLE),
            SkillCommand::List { .. } => ("skill list", STRUCTURED),
            SkillCommand::Remove { .. } => ("skill remove", STRUCTURED),
            // The explanation is a table's tree or a JSON field: a tool
            // array for a model API has no place for it.
            SkillCommand::Tools { explain: true, .. } => ("skill tools --explain", STRUCTURED),
            SkillCommand::Tools { .. } => ("skill tools", TOOLS),
            SkillCommand::Lock { .. } => ("skill lock", STRUCTURED),
            SkillCommand::Diff { .. } => ("skill diff", STRUCTURED),
            SkillCommand::Graph { .. } => ("skill graph", GRAPH),
            SkillCommand::Validate { .. } => ("skill validate", STRUCTURED),
            SkillCommand::Discover { .. } => ("skill discover", STRUCTURED),
            SkillCommand::Lint { .. } => ("skill lint", STRUCTURED),
        },
        Command::Tool(command) => match command {
            ToolCommand::Add { .. } => ("tool add", STRUCTURED),
            ToolCommand::List { .. } => ("tool list", STRUCTURED),
            ToolCommand::Get { body: true, .. } => ("tool get --body", TABLE),
            ToolCommand::Get { .. } => ("tool get", DOCUMENT),
            ToolCommand::Remove { .. } => ("tool remove", STRUCTURED),
        },
        Command::Mcp(command) => match command {
            McpCommand::Refresh { .. } => ("mcp refresh", STRUCTURED),
            McpCommand::List => ("mcp list", STRUCTURED),
            McpCommand::Tools { .. } => ("mcp tools", STRUCTURED),
            McpCommand::Serve { .. } => ("mcp serve", STRUCTURED),
            McpCommand::Import { .. } => ("mcp import", STRUCTURED),
            McpCommand::Export { .. } => ("mcp export", STRUCTURED),
            McpCommand::Trust { .. } => ("mcp trust", STRUCTURED),
            McpCommand::Untrust { .. } => ("mcp untrust", STRUCTURED),
        },
        Command::Plan(PlanCommand::Validate { .. }) => ("plan validate", STRUCTURED),
        Command::Config(ConfigCommand::Show) => ("config show", STRUCTURED),
        Command::Db(command) => match command {
            DbCommand::Init => ("db init", STRUCTURED),
            DbCommand::Migrate => ("db migrate", STRUCTURED),
            DbCommand::Status => ("db status", STRUCTURED),
            // To stdout it writes the export itself; to a file, a summary.
            DbCommand::Export { output: None } => ("db export", TABLE),
            DbCommand::Export { .. } => ("db export -o", STRUCTURED),
            DbCommand::Import { .. } => ("db import", STRUCTURED),
        },
        Command::Completions { .. } => ("completions", TABLE),
        Command::Man { .. } => ("man", TABLE),
        // It writes JSON whatever is asked, and YAML when asked.
        Command::Schema { .. } => ("schema", STRUCTURED),
    }
}

/// The format a command writes when none is given: the first it lists
/// (`skill graph` draws `dot`).
pub fn default_of(command: &Command) -> Format {
    of(command).1.first().copied().unwrap_or(Format::Table)
}
