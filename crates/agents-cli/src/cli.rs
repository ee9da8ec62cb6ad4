use std::path::PathBuf;

use clap::{Args as ClapArgs, Parser, Subcommand, ValueEnum};

/// A registry of namespaced, reusable skills (collections of tools) for AI agents.
#[derive(Debug, Parser)]
#[command(name = "agents", version, about, propagate_version = true)]
pub struct Args {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// The heading the options every command takes are listed under, apart
/// from the command's own.
pub const GLOBAL_HEADING: &str = "Global options";

#[derive(Debug, ClapArgs)]
pub struct GlobalArgs {
    /// Database URL (`sqlite:///abs/path.db`, `sqlite://relative.db`, `postgres://…`)
    #[arg(long, global = true, value_name = "URL", help_heading = GLOBAL_HEADING)]
    pub database_url: Option<String>,
    /// Config file (default `~/.cleveragents/config.toml`)
    #[arg(long, global = true, value_name = "FILE", help_heading = GLOBAL_HEADING)]
    pub config: Option<PathBuf>,
    /// Output format (each command's `--help` lists those it writes)
    #[arg(
        long,
        global = true,
        value_enum,
        hide_possible_values = true,
        help_heading = GLOBAL_HEADING
    )]
    pub format: Option<Format>,
    /// More logging on stderr (`-vv` for debug)
    #[arg(short, long, global = true, action = clap::ArgAction::Count, help_heading = GLOBAL_HEADING)]
    pub verbose: u8,
    /// Colour in log lines: `auto` (only on a terminal, and not when `NO_COLOR` is set), `always`, `never`
    #[arg(
        long,
        global = true,
        value_enum,
        default_value = "auto",
        value_name = "WHEN",
        hide_possible_values = true,
        help_heading = GLOBAL_HEADING
    )]
    pub color: ColorArg,
    /// No warnings or progress notes on stderr (results and errors still print)
    #[arg(
        short,
        long,
        global = true,
        conflicts_with = "verbose",
        help_heading = GLOBAL_HEADING
    )]
    pub quiet: bool,
}

/// The command line as parsed and as `--help`, man pages and completions
/// show it: every leaf command's `--format` help lists only the formats
/// that command writes ([`crate::commands::formats`]).
pub fn command() -> clap::Command {
    /// Gives every leaf under `command` (at `path`) a `--format` of its own,
    /// a copy of the global one with its own help: the global one is then
    /// not added to it when the command is built, and its value still
    /// reaches the global arguments.
    fn adjust(command: clap::Command, path: &str, format: &clap::Arg) -> clap::Command {
        let subs: Vec<String> = command
            .get_subcommands()
            .map(|sub| sub.get_name().to_owned())
            .collect();
        if subs.is_empty() {
            return command.arg(
                format
                    .clone()
                    .global(false)
                    .help(crate::formats::help_of(path)),
            );
        }
        let mut command = command;
        for name in subs {
            let path = if path.is_empty() {
                name.clone()
            } else {
                format!("{path} {name}")
            };
            command = command.mut_subcommand(&name, |sub| adjust(sub, &path, format));
        }
        command
    }
    let command = <Args as clap::CommandFactory>::command();
    let format = command
        .get_arguments()
        .find(|arg| arg.get_id() == "format")
        .cloned();
    match format {
        Some(format) => adjust(command, "", &format),
        None => command,
    }
}

impl GlobalArgs {
    pub fn format_or_table(&self) -> Format {
        self.format.unwrap_or(Format::Table)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorArg {
    /// Only when stderr is a terminal and `NO_COLOR` is not set
    Auto,
    /// Always
    Always,
    /// Never
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
    Yaml,
    /// OpenAI Chat Completions `tools` (only `skill tools`)
    Openai,
    /// Anthropic Messages API `tools` (only `skill tools`)
    Anthropic,
    /// The MCP `tools/list` result `agents mcp serve` answers (only `skill tools`)
    Mcp,
    /// Graphviz (`skill graph` only)
    Dot,
    /// Mermaid flowchart (`skill graph` only)
    Mermaid,
}

impl Format {
    /// JSON or YAML: the same structured result, in either syntax.
    pub fn structured(self) -> bool {
        matches!(self, Self::Json | Self::Yaml)
    }

    /// The formats only `agents skill tools` writes.
    pub fn is_export(self) -> bool {
        matches!(self, Self::Openai | Self::Anthropic | Self::Mcp)
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Register, inspect and resolve skills
    #[command(subcommand)]
    Skill(SkillCommand),
    /// Manage the tool catalogue
    #[command(subcommand)]
    Tool(ToolCommand),
    /// MCP: serve skills as an MCP server (a gateway), import and export
    /// client configs, trust servers, refresh and inspect cached tool lists
    #[command(subcommand)]
    Mcp(McpCommand),
    /// Validate plans
    #[command(subcommand)]
    Plan(PlanCommand),
    /// Show the resolved configuration
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Database maintenance: migrations, status, export and import
    #[command(subcommand)]
    Db(DbCommand),
    /// Print a shell completion script (`agents completions bash > /etc/bash_completion.d/agents`)
    #[command(
        after_help = "Example:\n  agents completions bash > ~/.local/share/bash-completion/completions/agents"
    )]
    Completions {
        /// The shell to complete for
        shell: clap_complete::Shell,
    },
    /// Print a man page (roff), generated from the same definitions as `--help`:
    /// `agents(1)`, or a subcommand's (`agents man skill tools` is `agents-skill-tools(1)`)
    #[command(
        after_help = "Example:\n  agents man > agents.1 && man ./agents.1\n  agents man skill tools > agents-skill-tools.1"
    )]
    Man {
        /// The subcommand whose page to print, e.g. `skill tools`
        command: Vec<String>,
    },
    /// Print the JSON Schema of a file format, for editors
    /// (`# yaml-language-server: $schema=…`)
    #[command(after_help = "Example:\n  agents schema skill > schemas/skill.schema.json")]
    Schema {
        /// Which format
        #[arg(value_enum)]
        kind: SchemaKind,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemaKind {
    /// A skill definition (`skill add`)
    Skill,
    /// A custom tool definition (`tool add`)
    Tool,
    /// `config.toml`
    Config,
}

#[derive(Debug, Subcommand)]
pub enum SkillCommand {
    /// Register the skills defined in YAML files (each file is one transaction)
    ///
    /// The closure of the written skills is checked first: unknown tools,
    /// missing includes and cycles are warnings (the skills are still
    /// written) unless `--strict` is given.
    #[command(after_help = "Example:\n  agents skill add examples/skills/*.yaml")]
    Add {
        /// YAML files of skill definitions (`---` separates several skills)
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Treat every warning as an error: nothing of a file with a warning is written
        #[arg(long)]
        strict: bool,
    },
    /// Replace existing skill definitions from YAML files
    #[command(after_help = "Example:\n  agents skill update examples/skills/git-tools.yaml")]
    Update {
        /// YAML files of skill definitions; every skill must already be registered
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Treat every warning as an error: nothing of a file with a warning is written
        #[arg(long)]
        strict: bool,
    },
    /// Create or update the skills defined in YAML files (each file is one
    /// transaction); prints created / updated / unchanged for each skill
    #[command(after_help = "Example:\n  agents skill apply examples/skills/*.yaml --strict")]
    Apply {
        /// YAML files of skill definitions
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Treat every warning as an error: nothing of a file with a warning is written
        #[arg(long)]
        strict: bool,
    },
    /// Show one skill's definition
    #[command(after_help = "Example:\n  agents skill get local/devops-toolkit --format yaml")]
    Get {
        /// The skill, e.g. `local/devops-toolkit`
        name: String,
        /// Print secrets written out in its MCP servers' definitions (shown as `***` otherwise)
        #[arg(long)]
        show_secrets: bool,
    },
    /// Print the `<available_skills>` block for the Agent Skills of a skill's
    /// flattened set (the Agent Skills reference's `to-prompt` layout)
    #[command(
        after_help = "Example:\n  agents skill prompt local/devops-toolkit >> system-prompt.md"
    )]
    Prompt {
        /// The skill, e.g. `local/devops-toolkit`
        name: String,
    },
    /// List skills, sorted by name
    #[command(after_help = "Example:\n  agents skill list --namespace local --format json")]
    List {
        /// Only skills in this namespace
        #[arg(long, value_name = "NS")]
        namespace: Option<String>,
    },
    /// Remove a skill and its items (refused while other skills include it)
    #[command(after_help = "Example:\n  agents skill remove local/git-tools --force")]
    Remove {
        /// The skill, e.g. `local/devops-toolkit`
        name: String,
        /// Remove it even though other skills include it (they are then broken)
        #[arg(long)]
        force: bool,
    },
    /// Show a skill's flattened tool set and capability summary
    #[command(
        after_help = "Example:\n  agents skill tools local/devops-toolkit --format openai\n  agents skill tools local/devops-toolkit --budget\n  agents skill tools local/devops-toolkit --format anthropic --defer auto --budget-tokens 4000"
    )]
    Tools {
        /// The skill, e.g. `local/devops-toolkit`
        name: String,
        /// Re-scan Agent Skills folders and re-query this skill's MCP servers first
        #[arg(long)]
        refresh: bool,
        /// Say why each tool is there: every occurrence and where each override came from
        #[arg(long)]
        explain: bool,
        /// Fail (exit 1) with the differences when the resolution differs from this lock file
        #[arg(long, value_name = "FILE")]
        locked: Option<PathBuf>,
        /// Print what each disclosure mode (`all`, `skills`, `search`, `auto`) puts in the
        /// context first: tools, bytes and estimated tokens, and each skill's own tools
        #[arg(long, conflicts_with = "explain")]
        budget: bool,
        /// With `--format anthropic`, `openai` or `mcp`: defer tools behind a tool search
        /// (`all`: every tool; `auto`: only when they do not all fit `--budget-tokens`)
        #[arg(long, value_enum, default_value = "none", conflicts_with_all = ["explain", "budget"])]
        defer: DeferArg,
        /// The context budget of `--budget` and `--defer auto`, in estimated tokens (bytes of
        /// the tool JSON / 4; default 8000); nothing else reads it
        #[arg(long, value_name = "N")]
        budget_tokens: Option<usize>,
    },
    /// Write a content-addressed lock of skills' resolved tool sets
    #[command(after_help = "Example:\n  agents skill lock local/devops-toolkit -o skills.lock")]
    Lock {
        /// The skills to lock, e.g. `local/devops-toolkit`
        #[arg(required = true, value_name = "NAME")]
        names: Vec<String>,
        /// The lock file to write
        #[arg(long, short, value_name = "FILE", default_value = "skills.lock")]
        output: PathBuf,
    },
    /// Show how a skill's resolution differs from a lock file (exit 0 either way)
    #[command(after_help = "Example:\n  agents skill diff local/devops-toolkit --lock skills.lock")]
    Diff {
        /// The skill, e.g. `local/devops-toolkit`
        name: String,
        /// The lock file to compare with
        #[arg(long, value_name = "FILE", default_value = "skills.lock")]
        lock: PathBuf,
    },
    /// Print a skill's include closure (`--format dot`, `mermaid` or `json`);
    /// cycles and missing includes are drawn, not errors
    #[command(
        after_help = "Example:\n  agents skill graph local/devops-toolkit --format dot | dot -Tsvg > graph.svg"
    )]
    Graph {
        /// The skill, e.g. `local/devops-toolkit`
        name: String,
    },
    /// Check that skills resolve: includes, cycles, overrides, tool refs
    #[command(after_help = "Example:\n  agents skill validate local/devops-toolkit --strict")]
    Validate {
        /// The skills to check, e.g. `local/devops-toolkit`
        #[arg(required = true, value_name = "NAME")]
        names: Vec<String>,
        /// Also query every MCP server of their closure (it must answer and
        /// list the allow-listed tools), check every Agent Skill folder, and
        /// treat warnings as errors (for CI)
        #[arg(long)]
        strict: bool,
    },
    /// Discover Agent Skills folders and register their tools
    #[command(after_help = "Example:\n  agents skill discover --paths ~/skills,./team-skills")]
    Discover {
        /// Comma-separated directories (overrides config and environment)
        #[arg(long, value_name = "PATHS")]
        paths: Option<String>,
        /// What to do when a discovered name is already taken
        #[arg(long, value_enum, default_value = "skip")]
        on_conflict: ConflictArg,
    },
    /// Validate SKILL.md folders without registering anything
    #[command(after_help = "Example:\n  agents skill lint ./my-skill")]
    Lint {
        /// Folders that hold a `SKILL.md`
        #[arg(required = true, value_name = "PATH")]
        paths: Vec<PathBuf>,
    },
}

/// Which exported tools `skill tools --defer` defers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DeferArg {
    // What each means is in the flag's help: variant docs would make
    // `--help` list them on lines of their own.
    None,
    Auto,
    All,
}

impl From<DeferArg> for agents_disclosure::Defer {
    fn from(defer: DeferArg) -> Self {
        match defer {
            DeferArg::None => Self::None,
            DeferArg::Auto => Self::Auto,
            DeferArg::All => Self::All,
        }
    }
}

/// How `mcp serve --disclose` puts the tools in the context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DiscloseArg {
    // As for `DeferArg`: the flag's help says what each means.
    All,
    Skills,
    Search,
    Auto,
}

impl From<DiscloseArg> for agents_disclosure::Mode {
    fn from(mode: DiscloseArg) -> Self {
        match mode {
            DiscloseArg::All => Self::All,
            DiscloseArg::Skills => Self::Skills,
            DiscloseArg::Search => Self::Search,
            DiscloseArg::Auto => Self::Auto,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ConflictArg {
    Skip,
    Error,
    Replace,
}

#[derive(Debug, Subcommand)]
pub enum ToolCommand {
    /// Register custom tools defined in YAML files
    #[command(after_help = "Example:\n  agents tool add examples/tools/deploy.yaml --replace")]
    Add {
        /// YAML files of tool definitions (`---` separates several tools)
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Overwrite catalogue tools with the same name
        #[arg(long)]
        replace: bool,
    },
    /// List builtin and catalogue tools
    #[command(after_help = "Example:\n  agents tool list --source mcp")]
    List {
        /// Only tools of this source
        #[arg(long, value_enum)]
        source: Option<SourceArg>,
    },
    /// Show one tool
    #[command(after_help = "Example:\n  agents tool get agent_skills/pdf-processing --body")]
    Get {
        /// The tool's registry name, e.g. `builtin/read_file` or `agent_skills/pdf`
        name: String,
        /// Print the Markdown body of an Agent Skill's SKILL.md instead
        #[arg(long)]
        body: bool,
    },
    /// Remove a catalogue tool
    #[command(after_help = "Example:\n  agents tool remove custom/deploy")]
    Remove {
        /// The tool's registry name, e.g. `custom/deploy`
        name: String,
    },
    /// Run one builtin or `run` tool inside the roots, under a skill
    /// entry's policy (`--format json`: the result as JSON)
    #[command(
        after_help = "Example:\n  agents tool call read_file --args '{\"path\": \"Cargo.toml\"}' --skill local/devops-toolkit"
    )]
    Call {
        /// The tool: a builtin (`read_file` or `builtin/read_file`), or a
        /// custom or inline tool with a `run`
        name: String,
        /// The arguments, a JSON object
        #[arg(long, default_value = "{}", value_name = "JSON")]
        args: String,
        /// Apply this skill's resolved overrides for the entry (timeout_s,
        /// read_only, audit, approval)
        #[arg(long, value_name = "SKILL")]
        skill: Option<String>,
        /// A workspace root the tool acts in (repeatable; default the
        /// current directory)
        #[arg(long = "root", value_name = "DIR")]
        roots: Vec<PathBuf>,
        /// Approve the call without asking (for `approval: required`)
        #[arg(long)]
        approve: bool,
        /// Append audit lines to this file instead of
        /// `~/.cleveragents/audit.jsonl`
        #[arg(long, value_name = "FILE")]
        audit_file: Option<PathBuf>,
    },
    /// Show a custom tool's `run` in full and trust it on this machine: at
    /// a terminal after you confirm, otherwise only by `--digest`
    #[command(
        after_help = "Example:\n  agents tool trust custom/deploy --digest 3f2a9c0e5b7d41a6c8e2f09b1d3a5c7e"
    )]
    Trust {
        /// The tool's registry name, e.g. `custom/deploy`
        name: String,
        /// The run's digest (at least its first 32 hex digits), as the
        /// message that refused the call printed it
        #[arg(long, value_name = "DIGEST")]
        digest: Option<String>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SourceArg {
    Builtin,
    #[value(name = "agent_skills")]
    AgentSkills,
    Mcp,
    Custom,
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Re-query MCP servers and replace their cached tools (all known servers by default)
    #[command(after_help = "Example:\n  agents mcp refresh github")]
    Refresh {
        /// Server names (from config.toml or skills); all known servers when none
        servers: Vec<String>,
    },
    /// List known MCP servers and their cache state
    #[command(after_help = "Example:\n  agents mcp list --format json")]
    List,
    /// Show the cached tools of one server
    #[command(after_help = "Example:\n  agents mcp tools github --diff")]
    Tools {
        /// The server's name
        server: String,
        /// Show what the last refresh that changed the tools changed, field by field
        #[arg(long)]
        diff: bool,
    },
    /// Serve the tools of skills as an MCP server over stdio or streamable
    /// HTTP (a gateway to their MCP servers)
    #[command(after_help = "Example:\n  agents mcp serve local/devops-toolkit")]
    Serve {
        /// Skills whose flattened tool sets are served together
        #[arg(required = true)]
        skills: Vec<String>,
        /// Serve streamable HTTP on this address (e.g. 127.0.0.1:8808; port 0
        /// picks one) at `/mcp` instead of stdio; the URL is printed on stderr
        #[arg(long, value_name = "ADDR:PORT")]
        http: Option<std::net::SocketAddr>,
        /// Require `Authorization: Bearer <value of VAR>` on every HTTP request
        /// (`--http` needs this or `--no-auth`)
        #[arg(long, value_name = "VAR", requires = "http")]
        auth_token_env: Option<String>,
        /// Serve HTTP without a token: a loopback address only, on a machine
        /// only you use (any local user can connect to a loopback port)
        #[arg(long, requires = "http", conflicts_with = "auth_token_env")]
        no_auth: bool,
        /// Print what would be served and what is left out, then exit
        #[arg(long)]
        dry_run: bool,
        /// Refuse to serve (exit 1) when a skill's resolution differs from this lock file
        #[arg(long, value_name = "FILE")]
        locked: Option<PathBuf>,
        /// A workspace root the builtin tools act in, for clients that offer
        /// no roots of their own (repeatable; default the current directory)
        #[arg(long = "root", value_name = "DIR")]
        roots: Vec<PathBuf>,
        /// Append a JSON line for every call to the audit file, whatever the
        /// skills' `audit` overrides say
        #[arg(long)]
        audit: bool,
        /// The audit file (default `~/.cleveragents/audit.jsonl`; created 0600)
        #[arg(long, value_name = "PATH")]
        audit_file: Option<PathBuf>,
        /// Approve beforehand every call of this tool (export or registry
        /// name) whose entry says `approval: required` (repeatable)
        #[arg(long = "approve", value_name = "TOOL")]
        approve: Vec<String>,
        /// Approve beforehand every call whose entry says `approval: required`
        #[arg(long, conflicts_with = "approve")]
        approve_all: bool,
        /// How the tools reach the client's context: `all` (every tool), `skills` (the
        /// skills' own tools and a loader of their included skills), `search` (a search
        /// tool and a call tool), `auto` (`all` within `--budget-tokens`, else the
        /// cheaper of `skills` and `search`)
        #[arg(long, value_enum, default_value = "all")]
        disclose: DiscloseArg,
        /// The budget of the first tool list of `--disclose`, in estimated tokens (bytes
        /// of the tool JSON / 4; default 8000)
        #[arg(long, value_name = "N")]
        budget_tokens: Option<usize>,
    },
    /// Copy the MCP servers of Claude Desktop (`claude_desktop_config.json`),
    /// Claude Code (`.mcp.json`) or VS Code (`.vscode/mcp.json`) into
    /// config.toml, keeping its comments; servers already there are skipped.
    /// Shows what each server runs or reaches and asks first; servers of a
    /// project's file or of a file others could write are imported
    /// `untrusted` (not started until `agents mcp trust`)
    ///
    /// Example: `agents mcp import ~/.config/Claude/claude_desktop_config.json --dry-run`
    #[command(after_help = "Example:\n  agents mcp import .mcp.json --dry-run")]
    Import {
        /// The client's JSON file (`mcpServers` or `servers`; `-` for standard input)
        file: PathBuf,
        /// Print the resulting config.toml (secrets masked) instead of writing it
        #[arg(long)]
        dry_run: bool,
        /// Import what is shown without asking (needed outside a terminal)
        #[arg(long, short)]
        yes: bool,
    },
    /// Write the configured MCP servers as a Claude Desktop / Claude Code or
    /// VS Code file, optionally with an entry serving skills through
    /// `agents mcp serve`
    #[command(
        after_help = "Example:\n  agents mcp export --serve local/devops-toolkit -o .mcp.json"
    )]
    Export {
        /// Add an `agents` server that serves these skills
        #[arg(long, value_name = "SKILL")]
        serve: Vec<String>,
        /// Whose file format to write
        #[arg(long, value_enum, default_value = "claude")]
        client: ClientArg,
        /// Write here (mode 0600, secrets included) instead of stdout (values
        /// that look secret masked, and said on stderr)
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
        /// Write the serve entry's command as `agents` (found on the
        /// client's PATH) instead of this program's absolute path
        #[arg(long)]
        bare_command: bool,
    },
    /// Show an MCP server's definitions from the registry in full (what
    /// each would run, who defined it) and trust one on this machine: at a
    /// terminal after you confirm, otherwise only by `--digest`; or list
    /// trusted ones
    #[command(
        after_help = "Example:\n  agents mcp trust github --digest 3f2a9c0e5b7d41a6c8e2f09b1d3a5c7e9f0b2d4a6c8e1f3b5d7a9c0e2f4b6d8a"
    )]
    Trust {
        /// The server's name
        #[arg(required_unless_present = "list")]
        server: Option<String>,
        /// Only the definition with this digest (as the message that named the
        /// server printed it; at least its first 32 hex digits); outside a
        /// terminal, trusts it without asking
        #[arg(long, value_name = "DIGEST")]
        digest: Option<String>,
        /// List the trusted definitions
        #[arg(long, conflicts_with = "server")]
        list: bool,
    },
    /// Forget the trust given to an MCP server's definitions
    #[command(after_help = "Example:\n  agents mcp untrust github")]
    Untrust {
        /// The server's name
        server: String,
        /// Only the definition whose digest starts with this
        #[arg(long, value_name = "PREFIX")]
        digest: Option<String>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClientArg {
    /// `{"mcpServers": …}`: Claude Desktop, Claude Code (`.mcp.json`)
    Claude,
    /// `{"servers": …}`: VS Code (`.vscode/mcp.json`)
    Vscode,
}

#[derive(Debug, Subcommand)]
pub enum PlanCommand {
    /// Validate a plan file (`skills: [...]` in YAML or JSON)
    #[command(after_help = "Example:\n  agents plan validate plan.yaml --format json")]
    Validate {
        /// A plan file (`skills: [...]` in YAML or JSON)
        file: PathBuf,
    },
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print every setting with where its value came from
    #[command(after_help = "Example:\n  agents config show --format json")]
    Show,
}

#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// Create the database (and a SQLite file's directory) and apply the
    /// migrations; other commands never create a directory outside the
    /// default location
    #[command(
        after_help = "Example:\n  agents --database-url sqlite:///srv/agents/registry.db db init"
    )]
    Init,
    /// Apply pending migrations (opening the database does this too)
    #[command(after_help = "Example:\n  agents db migrate")]
    Migrate,
    /// Backend, schema version and row counts
    #[command(after_help = "Example:\n  agents db status")]
    Status,
    /// Write all skills and catalogue tools as YAML
    #[command(after_help = "Example:\n  agents db export -o backup.yaml")]
    Export {
        /// Write here instead of stdout
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Load skills and tools from an export (one transaction)
    #[command(after_help = "Example:\n  agents db import backup.yaml --replace")]
    Import {
        /// A file written by `agents db export`
        file: PathBuf,
        /// Replace registered skills of the same name instead of failing
        #[arg(long)]
        replace: bool,
    },
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every argument of every command says what it is in `--help`.
    #[test]
    fn every_argument_has_help_text() {
        fn walk(command: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in command.get_arguments() {
                let builtin = matches!(arg.get_id().as_str(), "help" | "version");
                if !builtin && !arg.is_hide_set() && arg.get_help().is_none() {
                    missing.push(format!("{path} {}", arg.get_id()));
                }
            }
            for sub in command.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        walk(&super::Args::command(), "agents", &mut missing);
        assert!(missing.is_empty(), "arguments without help: {missing:#?}");
    }

    /// Every leaf command has its formats in the one table `--format` is
    /// checked against and its `--help` lists.
    #[test]
    fn every_leaf_command_has_its_formats() {
        fn walk(command: &clap::Command, path: &str, missing: &mut Vec<String>) {
            let subs: Vec<_> = command
                .get_subcommands()
                .filter(|sub| sub.get_name() != "help")
                .collect();
            if subs.is_empty() {
                let known = crate::formats::COMMANDS
                    .iter()
                    .any(|(name, _)| *name == path);
                if !known {
                    missing.push(path.to_owned());
                }
            }
            for sub in subs {
                let path = if path.is_empty() {
                    sub.get_name().to_owned()
                } else {
                    format!("{path} {}", sub.get_name())
                };
                walk(sub, &path, missing);
            }
        }
        let mut missing = Vec::new();
        walk(&super::command(), "", &mut missing);
        assert!(missing.is_empty(), "commands without formats: {missing:#?}");
    }

    /// Every command that runs something shows one example in `--help`.
    #[test]
    fn every_leaf_command_has_an_example() {
        fn walk(command: &clap::Command, path: &str, missing: &mut Vec<String>) {
            let subs: Vec<_> = command.get_subcommands().collect();
            if subs.is_empty() {
                let example = command
                    .get_after_help()
                    .map(|h| h.to_string())
                    .unwrap_or_default();
                if !example.starts_with("Example:\n  agents ") {
                    missing.push(path.to_owned());
                }
            }
            for sub in subs {
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        walk(&super::Args::command(), "agents", &mut missing);
        assert!(
            missing.is_empty(),
            "commands without an example: {missing:#?}"
        );
    }
}
