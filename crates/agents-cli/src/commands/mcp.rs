use std::process::ExitCode;

use agents_core::ToolSource;
use agents_registry::{FetchOptions, McpRefresh};
use serde_json::{Value, json};

use crate::cli::{Format, McpCommand};
use crate::context::Context;
use crate::output::{self, Failure};

pub async fn run(ctx: &Context, command: McpCommand) -> Result<ExitCode, Failure> {
    output::supported(ctx.format, &[Format::Table, Format::Json], "mcp")?;
    match command {
        McpCommand::Refresh { servers } => {
            let outcomes =
                with_ctrl_c(ctx.service.refresh_mcp(&servers, &fetch_options(ctx))).await??;
            let failed = outcomes.iter().any(|o| o.error.is_some());
            if ctx.format == Format::Json {
                output::json(&outcomes)?;
            } else if outcomes.is_empty() {
                output::line("no MCP servers are defined")?;
            } else {
                for outcome in &outcomes {
                    match &outcome.error {
                        None => output::line(format!(
                            "{}: {} tool(s) cached ({})",
                            outcome.server,
                            outcome.tools.len(),
                            outcome.transport.as_deref().unwrap_or("?")
                        ))?,
                        Some(_) => report_failure(ctx, outcome),
                    }
                    for rejected in &outcome.rejected {
                        output::warn(ctx.format, rejected);
                    }
                }
            }
            Ok(if failed {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        McpCommand::List => {
            let states = ctx.service.mcp_server_states().await?;
            if ctx.format == Format::Json {
                output::json(&states)?;
            } else {
                let rows = states
                    .iter()
                    .map(|s| {
                        [
                            s.server.clone(),
                            s.transport.unwrap_or("undefined").to_owned(),
                            s.defined_in.clone(),
                            s.cached_tools.to_string(),
                            s.fetched_at.clone().unwrap_or_else(|| "never".into()),
                            s.last_error.clone().unwrap_or_default(),
                        ]
                    })
                    .collect();
                output::table(
                    [
                        "SERVER",
                        "TRANSPORT",
                        "DEFINED IN",
                        "TOOLS",
                        "FETCHED",
                        "LAST ERROR",
                    ],
                    rows,
                )?;
            }
            Ok(ExitCode::SUCCESS)
        }
        McpCommand::Tools { server } => {
            let tools: Vec<_> = ctx
                .service
                .list_tools(Some(ToolSource::Mcp))
                .await?
                .into_iter()
                .filter(|t| {
                    t.source_metadata.get("server").and_then(Value::as_str) == Some(server.as_str())
                })
                .collect();
            let known = ctx.service.mcp_server_definitions().await?;
            if tools.is_empty() && !known.contains_key(&server) {
                return Err(Failure::new(
                    "unknown_mcp_server",
                    format!("mcp server `{server}` is not defined in config.toml or in any skill"),
                ));
            }
            if ctx.format == Format::Json {
                output::json(&json!({"server": server, "tools": tools}))?;
            } else if tools.is_empty() {
                output::line(format!(
                    "no cached tools for `{server}`: run `agents mcp refresh {server}`"
                ))?;
            } else {
                let rows = tools
                    .iter()
                    .map(|t| [t.name.clone(), t.description.clone()])
                    .collect();
                output::table(["TOOL", "DESCRIPTION"], rows)?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Options for MCP fetches from the resolved settings.
pub fn fetch_options(ctx: &Context) -> FetchOptions {
    FetchOptions {
        timeout: std::time::Duration::from_secs(ctx.settings.mcp_timeout_s.value),
        ..FetchOptions::default()
    }
}

/// Prints why a server could not be refreshed and what cache is used instead.
pub fn report_failure(ctx: &Context, outcome: &McpRefresh) {
    let error = outcome.error.as_deref().unwrap_or("unknown error");
    let fallback = match &outcome.cached_at {
        Some(at) => format!("; using the tools cached at {at} ({})", age(at)),
        None => "; no cached tools to fall back on".to_owned(),
    };
    output::warn(ctx.format, &format!("{error}{fallback}"));
}

fn age(stamp: &str) -> String {
    let Ok(then) =
        time::OffsetDateTime::parse(stamp, &time::format_description::well_known::Rfc3339)
    else {
        return "age unknown".into();
    };
    let seconds = (time::OffsetDateTime::now_utc() - then)
        .whole_seconds()
        .max(0);
    match seconds {
        s if s < 120 => format!("{s} s old"),
        s if s < 7200 => format!("{} min old", s / 60),
        s if s < 172_800 => format!("{} h old", s / 3600),
        s => format!("{} days old", s / 86_400),
    }
}

/// Runs `future` until it finishes or the user presses Ctrl-C; dropping the
/// future on Ctrl-C runs the MCP client's destructors, which kill servers.
pub async fn with_ctrl_c<T>(future: impl std::future::Future<Output = T>) -> Result<T, Failure> {
    tokio::select! {
        value = future => Ok(value),
        _ = tokio::signal::ctrl_c() => Err(Failure::new("interrupted", "interrupted")),
    }
}
