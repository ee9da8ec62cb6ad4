//! One module per command group; each turns parsed arguments into calls on
//! the registry and hands results to `output`. A command module imports no
//! other command module: what several share is in `crate::shared`.

mod config;
mod db;
mod discover;
pub use agents_cli::formats;
mod mcp;
mod plan;
mod skill;
mod tool;

use std::process::ExitCode;

use crate::cli::{Args, Command, Format};
use crate::context::Context;
use crate::output::{self, Failure};

pub async fn run(args: Args) -> Result<ExitCode, Failure> {
    let Args {
        mut global,
        command,
    } = args;
    if let Some(format) = global.format.filter(|f| f.is_export())
        && !matches!(
            command,
            Command::Skill(crate::cli::SkillCommand::Tools { .. })
        )
    {
        return Err(Failure::usage(format!(
            "`--format {}` is only for `agents skill tools`",
            output::format_name(format)
        )));
    }
    if let Some(format) = global
        .format
        .filter(|f| matches!(f, Format::Dot | Format::Mermaid))
        && !matches!(
            command,
            Command::Skill(crate::cli::SkillCommand::Graph { .. })
        )
    {
        return Err(Failure::usage(format!(
            "`--format {}` is only for `agents skill graph`",
            output::format_name(format)
        )));
    }
    // Every command's formats are checked here, before anything runs.
    let (name, allowed) = formats::of(&command);
    match global.format {
        Some(format) => output::supported(format, allowed, name)?,
        None => global.format = Some(formats::default_of(&command)),
    }
    match command {
        Command::Skill(crate::cli::SkillCommand::Lint { paths }) => {
            discover::lint(global.format_or_table(), &paths)
        }
        Command::Skill(crate::cli::SkillCommand::Discover { paths, on_conflict }) => {
            let ctx = Context::write(&global).await?;
            discover::discover(&ctx, paths, on_conflict).await
        }
        Command::Skill(command) => skill::run(&global, command).await,
        Command::Tool(command) => {
            let ctx = match command {
                crate::cli::ToolCommand::List { .. }
                | crate::cli::ToolCommand::Get { .. }
                | crate::cli::ToolCommand::Call { .. }
                | crate::cli::ToolCommand::Trust { .. } => Context::read(&global).await?,
                crate::cli::ToolCommand::Add { .. } | crate::cli::ToolCommand::Remove { .. } => {
                    Context::write(&global).await?
                }
            };
            tool::run(&ctx, command).await
        }
        Command::Plan(command) => {
            let ctx = Context::read(&global).await?;
            plan::run(&ctx, command).await
        }
        Command::Db(command) => db::run(&global, command).await,
        Command::Mcp(command) => {
            use crate::cli::McpCommand;
            let ctx = match command {
                McpCommand::List
                | McpCommand::Tools { .. }
                | McpCommand::Serve { .. }
                | McpCommand::Export { .. }
                | McpCommand::Trust { list: true, .. } => Context::read(&global).await?,
                McpCommand::Refresh { .. }
                | McpCommand::Import { .. }
                | McpCommand::Trust { .. }
                | McpCommand::Untrust { .. } => Context::write(&global).await?,
            };
            mcp::run(&ctx, command).await
        }
        Command::Config(command) => config::run(&global, command),
        Command::Completions { shell } => {
            let mut text = Vec::new();
            clap_complete::generate(shell, &mut crate::cli::command(), "agents", &mut text);
            output::raw(&String::from_utf8_lossy(&text))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Schema { kind } => {
            let schema = match kind {
                crate::cli::SchemaKind::Skill => agents_definition::skill_schema(),
                crate::cli::SchemaKind::Tool => agents_definition::tool_schema(),
                crate::cli::SchemaKind::Config => agents_config::config_schema(),
            };
            output::json(&schema)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Man { command } => {
            // The page of `agents skill tools` is `agents-skill-tools(1)`,
            // the name `agents(1)`'s SUBCOMMANDS section refers to.
            let mut page = crate::cli::command();
            let mut name = page.get_name().to_owned();
            for word in &command {
                let Some(sub) = page.find_subcommand(word).cloned() else {
                    return Err(Failure::usage(format!(
                        "`{name}` has no subcommand `{}`; `{name} --help` lists them",
                        agents_core::text::shorten(word, agents_core::text::MAX_ECHO_BYTES),
                        name = name.replace('-', " ")
                    )));
                };
                name = format!("{name}-{word}");
                page = sub;
            }
            let page = page.bin_name(name.replace('-', " ")).display_name(name);
            let mut text = Vec::new();
            // Every page's footer names the program and its version, as
            // `agents(1)`'s does (a subcommand's own would be `tools `).
            clap_mangen::Man::new(page)
                .source(format!("agents {}", env!("CARGO_PKG_VERSION")))
                .render(&mut text)
                .map_err(|err| Failure::new("io", format!("cannot render the man page: {err}")))?;
            output::raw(&String::from_utf8_lossy(&text))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
