use std::process::ExitCode;

use agents_core::{ToolSource, ToolSpec};
use agents_definition::{parse_tools_with, tools_to_yaml};
use serde_json::{Value, json};

use crate::cli::{Format, SourceArg, ToolCommand};
use crate::context::Context;
use crate::output::{self, Failure};
use agents_config::InputKind;

pub async fn run(ctx: &Context, command: ToolCommand) -> Result<ExitCode, Failure> {
    match command {
        ToolCommand::Add { files, replace } => add(ctx, &files, replace).await,
        ToolCommand::List { source } => list(ctx, source.map(to_source)).await,
        ToolCommand::Get { name, body: true } => {
            output::raw(&ctx.service.agent_skill_body(&name).await?)?;
            Ok(ExitCode::SUCCESS)
        }
        ToolCommand::Get { name, body: false } => {
            let tool = ctx.service.get_tool(&name).await?;
            match ctx.format {
                Format::Json => output::json(&tool_json(&tool))?,
                _ => {
                    output::raw(&tools_to_yaml(std::slice::from_ref(&tool))?)?;
                    if ctx.format == Format::Table {
                        output::line(format!("# source: {}", tool.source))?;
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        ToolCommand::Remove { name } => {
            let users = ctx.service.remove_tool(&name).await?;
            if ctx.format.structured() {
                output::json(&json!({"removed": name, "still_named_by": users}))?;
            } else if users.is_empty() {
                output::line(format!("removed {name}"))?;
            } else {
                output::line(format!(
                    "removed {name}; these skills still name it and now warn that it is unknown: {}",
                    agents_store::names_bounded(&users)
                ))?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

pub fn to_source(arg: SourceArg) -> ToolSource {
    match arg {
        SourceArg::Builtin => ToolSource::Builtin,
        SourceArg::AgentSkills => ToolSource::AgentSkills,
        SourceArg::Mcp => ToolSource::Mcp,
        SourceArg::Custom => ToolSource::Custom,
    }
}

async fn add(
    ctx: &Context,
    files: &[std::path::PathBuf],
    replace: bool,
) -> Result<ExitCode, Failure> {
    super::for_each_file(ctx.format, files, "added", "tool", |file| {
        add_file(ctx, file, replace)
    })
    .await
}

async fn add_file(
    ctx: &Context,
    file: &std::path::Path,
    replace: bool,
) -> Result<super::Written, Failure> {
    let shown = file.display().to_string();
    let mut tools = super::parse_definition(ctx, file, InputKind::Tools, parse_tools_with)?;
    if tools.is_empty() {
        return Err(Failure::new(
            "invalid_definition",
            format!("{shown}: no tool definitions found"),
        ));
    }
    let absolute = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
    for tool in &mut tools {
        tool.set_meta(agents_core::Meta::File, absolute.display().to_string());
    }
    ctx.service
        .add_tools(&tools, replace)
        .await
        .map_err(|err| {
            let mut failure = super::in_file(file, err.into());
            if failure.kind == "duplicate_tool" {
                failure.message.push_str(" (`--replace` overwrites it)");
            }
            failure
        })?;
    Ok(super::Written {
        names: tools.into_iter().map(|t| t.name).collect(),
        warnings: Vec::new(),
        shown: Vec::new(),
    })
}

async fn list(ctx: &Context, source: Option<ToolSource>) -> Result<ExitCode, Failure> {
    let tools = ctx.service.list_tools(source).await?;
    if ctx.format.structured() {
        let rows: Vec<Value> = tools.iter().map(tool_json).collect();
        return output::json(&rows).map(|()| ExitCode::SUCCESS);
    }
    let rows = tools
        .iter()
        .map(|t| [t.name.clone(), t.source.to_string(), t.description.clone()])
        .collect();
    output::table(["NAME", "SOURCE", "DESCRIPTION"], rows)?;
    Ok(ExitCode::SUCCESS)
}

pub fn tool_json(tool: &ToolSpec) -> Value {
    serde_json::to_value(tool).unwrap_or(Value::Null)
}
