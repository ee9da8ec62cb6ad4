//! What commands that fetch from MCP servers print alike: the options a
//! fetch takes from the settings, a tool that changed since the cache
//! (drift), and a server that could not be refreshed.

use agents_registry::{FetchOptions, McpRefresh};
use serde_json::json;

use crate::context::Context;
use crate::output;

/// One warning per tool that changed since the cache this refresh replaced
/// (`mcp:SERVER/TOOL: description changed since <time>`, with its parts
/// under `--format json`): every command that refreshes prints them, from
/// [`McpRefresh::drift_warnings`]. Returns the messages.
pub fn warn_drift(ctx: &Context, outcome: &McpRefresh) -> Vec<String> {
    let warnings = outcome.drift_warnings();
    for warning in &warnings {
        output::warn_detailed(
            ctx.format,
            &warning.message,
            json!({
                "kind": warning.kind,
                "server": warning.server,
                "tool": warning.tool,
                "change": warning.change,
                "fields": warning.fields,
                "since": warning.since,
            }),
        );
    }
    warnings.into_iter().map(|w| w.message).collect()
}

/// Options for MCP fetches from the resolved settings.
pub fn fetch_options(ctx: &Context) -> FetchOptions {
    FetchOptions {
        timeout: std::time::Duration::from_secs(ctx.settings.mcp_timeout_s.value),
        // This program is its own launcher: see `crate::LAUNCH_ARG`.
        launcher: std::env::current_exe()
            .ok()
            .map(|program| agents_mcp::Launcher {
                program,
                args: vec![crate::LAUNCH_ARG.into()],
            }),
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
