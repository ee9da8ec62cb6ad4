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
        ToolCommand::Call {
            name,
            args,
            skill,
            roots,
            approve,
            audit_file,
        } => {
            call(
                ctx,
                &name,
                &args,
                skill.as_deref(),
                roots,
                approve,
                audit_file,
            )
            .await
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

/// `tool call`: one builtin, under the policy of the skill's entry for it.
async fn call(
    ctx: &Context,
    name: &str,
    args: &str,
    skill: Option<&str>,
    roots: Vec<std::path::PathBuf>,
    approve: bool,
    audit_file: Option<std::path::PathBuf>,
) -> Result<ExitCode, Failure> {
    use agents_tools::{AuditLog, Builtin, CallContext, CallPolicy, Executor, Limits, Roots};
    let shown = agents_core::text::shorten(name, agents_core::text::MAX_ECHO_BYTES);
    let builtin = Builtin::from_name(name).ok_or_else(|| {
        Failure::new(
            "unknown_tool",
            format!("`{shown}` is not a builtin tool; only builtins can be called"),
        )
    })?;
    let args: Value = serde_json::from_str(args)
        .map_err(|err| Failure::usage(format!("`--args` is not JSON: {err}")))?;
    let (policy, mut context) = match skill {
        None => (CallPolicy::default(), CallContext::default()),
        Some(skill) => {
            let skill = ctx.service.skill_name(skill).await?;
            let set = ctx.service.tools(&skill).await?;
            let entry = set
                .entries
                .iter()
                .find(|entry| {
                    entry.tool.as_ref().is_some_and(|tool| {
                        tool.source == ToolSource::Builtin
                            && Builtin::from_name(&tool.name) == Some(builtin)
                    })
                })
                .ok_or_else(|| {
                    Failure::new(
                        "not_in_skill",
                        format!(
                            "skill `{skill}` has no entry for builtin `{}`",
                            builtin.name()
                        ),
                    )
                })?;
            let context = CallContext {
                skill: Some(skill.to_string()),
                include_path: Some(entry.include_path.to_string()),
                approved: false,
            };
            (CallPolicy::from_overrides(&entry.overrides), context)
        }
    };
    output::warn_all(
        ctx.format,
        policy
            .not_enforced
            .iter()
            .map(|n| format!("override `{}` is not enforced: {}", n.key, n.reason)),
    );
    context.approved = approve || (policy.approval_required && ask_approval(builtin, &args)?);
    let roots = if roots.is_empty() {
        vec![std::env::current_dir().map_err(Failure::io)?]
    } else {
        roots
    };
    let roots = Roots::new(roots).map_err(|err| Failure::usage(err.to_string()))?;
    let audit = audit_file
        .map(AuditLog::new)
        .or_else(|| AuditLog::default_path().map(AuditLog::new));
    let result = agents_tools::call(
        &Executor::new(roots, Limits::default()),
        builtin,
        args,
        &policy,
        &context,
        audit.as_ref(),
        agents_tools::CancellationToken::new(),
    )
    .await;
    match result {
        Ok(out) if out.is_error => Err(Failure::new("tool_error", out.text)),
        Ok(out) => {
            output::raw(&out.text)?;
            if !out.text.ends_with('\n') && !out.text.is_empty() {
                output::raw("\n")?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(err) if err.is_protocol() => Err(Failure::usage(err.to_string())),
        Err(err) => Err(Failure::new("tool_error", err.to_string())),
    }
}

/// Asks on the terminal whether to run a call needing approval; outside a
/// terminal the answer is no (`--approve` says yes).
fn ask_approval(tool: agents_tools::Builtin, args: &Value) -> Result<bool, Failure> {
    use std::io::IsTerminal;
    if !std::io::stdin().is_terminal() {
        return Ok(false);
    }
    let shown = agents_core::text::shorten(&args.to_string(), 512).into_owned();
    output::confirm(&format!(
        "run `{}` with {shown} (its entry needs approval)? [y/N] ",
        tool.name()
    ))
    .map_err(Failure::io)
}
