use std::process::ExitCode;

use agents_core::{ToolSource, ToolSpec};
use agents_definition::{parse_tools_with, tools_to_yaml};
use serde_json::{Value, json};

use crate::cli::{Format, SourceArg, ToolCommand};
use crate::context::Context;
use crate::output::{self, Failure};
use crate::shared::files;
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
        ToolCommand::Trust { name, digest } => trust(ctx, &name, digest.as_deref()).await,
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
    files::for_each_file(ctx.format, files, "added", "tool", |file| {
        add_file(ctx, file, replace)
    })
    .await
}

async fn add_file(
    ctx: &Context,
    file: &std::path::Path,
    replace: bool,
) -> Result<files::Written, Failure> {
    let shown = file.display().to_string();
    let mut tools = files::parse_definition(ctx, file, InputKind::Tools, parse_tools_with)?;
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
            let mut failure = files::in_file(file, err.into());
            if failure.kind == "duplicate_tool" {
                failure.message.push_str(" (`--replace` overwrites it)");
            }
            failure
        })?;
    // The user chose this file: the `run`s in it are trusted for them.
    let runs: Vec<(String, agents_core::RunSpec)> = tools
        .iter()
        .filter_map(|tool| Some((tool.name.clone(), tool.run()?.ok()?)))
        .collect();
    ctx.service
        .trust_runs_of(
            runs.iter().map(|(name, run)| (name.as_str(), run)),
            &format!("tool add {shown}"),
        )
        .map_err(|err| files::in_file(file, err.into()))?;
    Ok(files::Written {
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

/// `tool call`: one builtin or `run` tool, under the policy of the
/// skill's entry for it.
async fn call(
    ctx: &Context,
    name: &str,
    args: &str,
    skill: Option<&str>,
    roots: Vec<std::path::PathBuf>,
    approve: bool,
    audit_file: Option<std::path::PathBuf>,
) -> Result<ExitCode, Failure> {
    use agents_tools::{AuditLog, Executor, Limits, Roots};
    let args: Value = serde_json::from_str(args)
        .map_err(|err| Failure::usage(format!("`--args` is not JSON: {err}")))?;
    let prepared = ctx.service.prepare_call(name, skill).await.map_err(|err| {
        let hint = match &err {
            agents_registry::ServiceError::UntrustedRun { digest, .. } => Some(format!(
                " (`agents tool trust {name} --digest {}` trusts it)",
                digest.trim_start_matches("sha256:")
            )),
            _ => None,
        };
        let mut failure = Failure::from(err);
        if let Some(hint) = hint {
            failure.message.push_str(&hint);
        }
        failure
    })?;
    let (tool, policy, mut context) = (prepared.tool, prepared.policy, prepared.context);
    output::warn_all(
        ctx.format,
        policy.not_enforced.iter().map(ToString::to_string),
    );
    context.approved = approve || (policy.approval_required && ask_approval(tool.name(), &args)?);
    let roots = Roots::given_or_current(&roots).map_err(|err| Failure::usage(err.to_string()))?;
    let audit = AuditLog::given_or_default(audit_file);
    let result = agents_tools::call(
        &Executor::new(roots, Limits::default()),
        tool,
        args,
        &policy,
        &context,
        audit.as_ref(),
        agents_tools::CancellationToken::new(),
    )
    .await;
    match result {
        Ok(out) if ctx.format.structured() => {
            output::json(&json!({
                "text": out.text,
                "is_error": out.is_error,
                "truncated": out.truncated,
                "exit_code": out.exit_code,
                "structured": out.structured,
            }))?;
            Ok(if out.is_error {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
        Ok(out) if out.is_error => Err(Failure::new("tool_error", out.text)),
        Ok(out) => {
            output::raw(&out.text)?;
            if !out.text.ends_with('\n') && !out.text.is_empty() {
                output::raw("\n")?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(err) if err.is_protocol() => Err(Failure::usage(err.to_string())),
        Err(err) if err.rule() == Some(agents_tools::Rule::ApprovalRequired) => Err(Failure::new(
            "tool_error",
            format!("{err} (stdin is not a terminal to ask on; `--approve` approves the call)"),
        )),
        Err(err) => Err(Failure::new("tool_error", err.to_string())),
    }
}

/// Asks on the terminal whether to run a call needing approval; outside a
/// terminal the answer is no (`--approve` says yes).
fn ask_approval(tool: &str, args: &Value) -> Result<bool, Failure> {
    use std::io::IsTerminal;
    if !std::io::stdin().is_terminal() {
        return Ok(false);
    }
    let masked = agents_core::redact::redact_text(&args.to_string());
    let shown = agents_core::text::shorten(&masked, 512).into_owned();
    output::confirm(&format!(
        "run `{}` with {shown} (its entry needs approval)? [y/N] ",
        agents_core::text::shorten(tool, agents_core::text::MAX_ECHO_BYTES)
    ))
    .map_err(Failure::io)
}

/// `tool trust NAME`: shows the tool's `run` whole and trusts it, after
/// the user confirms at a terminal or by `--digest` elsewhere.
async fn trust(ctx: &Context, name: &str, digest: Option<&str>) -> Result<ExitCode, Failure> {
    let review = ctx.service.run_review(name).await?;
    let full = review.digest.trim_start_matches("sha256:");
    let spec = serde_json::to_string_pretty(&review.tool.spec)
        .map_err(|err| Failure::new("internal", err.to_string()))?;
    if review.trusted {
        output::line(format!("tool `{name}`'s run ({full}) is already trusted"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let agreed = match digest {
        Some(given) => {
            if given.len() < 32 || !full.starts_with(given) {
                return Err(Failure::new(
                    "run_digest_mismatch",
                    format!(
                        "tool `{name}`'s run has digest {full}; `--digest` must be at least its first 32 hex digits"
                    ),
                ));
            }
            true
        }
        None => {
            use std::io::IsTerminal;
            if !std::io::stdin().is_terminal() {
                return Err(Failure::new(
                    "run_trust_needs_digest",
                    format!(
                        "tool `{name}` runs:\n{spec}\nnot at a terminal: give `--digest {full}` to trust it"
                    ),
                ));
            }
            output::confirm(&format!(
                "tool `{name}` runs:\n{spec}\ndigest {full}\ntrust it on this machine? [y/N] "
            ))
            .map_err(Failure::io)?
        }
    };
    if !agreed {
        return Err(Failure::new("run_trust_declined", "nothing was trusted"));
    }
    ctx.service.trust_run(&review.tool, "agents tool trust")?;
    output::line(format!("trusted tool `{name}`'s run ({full})"))?;
    Ok(ExitCode::SUCCESS)
}
