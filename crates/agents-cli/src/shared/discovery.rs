//! Discovery as commands show it: a progress bar, and the first-use
//! discovery (the rule is the service's,
//! [`agents_registry::SkillRegistryService::discover_configured`]) with what
//! it found said as warnings.

use std::sync::Arc;

use agents_core::SkillName;
use agents_registry::{FirstUse, Progress};

use crate::cli::Format;
use crate::context::Context;
use crate::output::{self, Failure};
use crate::shared::mcp;

/// A progress bar on stderr, only for people at a terminal.
pub fn progress_bar(format: Format) -> (Option<Progress>, Option<indicatif::ProgressBar>) {
    use std::io::IsTerminal;
    if format == Format::Json || !std::io::stderr().is_terminal() {
        return (None, None);
    }
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template("discovering {bar:30} {pos}/{len} folders")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let handle = bar.clone();
    let progress: Progress = Arc::new(move |done, total| {
        handle.set_length(total as u64);
        handle.set_position(done as u64);
    });
    (Some(progress), Some(bar))
}

/// Discovers the configured Agent Skills folders when `again`, or when
/// nothing was ever discovered (the service's first-use rule), saying what
/// the scan found as warnings. A first discovery that fails is a warning:
/// a user who may only read the registry still gets what they asked for,
/// without Agent Skills.
pub async fn discover_first_use(ctx: &Context, again: bool) -> Result<(), Failure> {
    let (progress, bar) = progress_bar(ctx.format);
    let result = ctx.service.discover_configured(again, progress).await;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    match result? {
        FirstUse::AlreadyDiscovered => {}
        FirstUse::Discovered(refreshed) => {
            let result = refreshed.result;
            output::warn_all(ctx.format, &result.warnings);
            // One call each, as a scan of its own reports them.
            for conflict in &result.conflicts {
                output::warn(ctx.format, &conflict.to_string());
            }
            for error in &result.errors {
                output::warn(ctx.format, &error.to_string());
            }
        }
        FirstUse::NotDiscovered(err) => output::warn(
            ctx.format,
            &format!(
                "Agent Skills were not discovered ({err}); `agents skill discover` with write access to the registry adds them"
            ),
        ),
    }
    Ok(())
}

/// Before `agents skill tools`: refresh when asked, or discover once when
/// nothing was ever discovered. Returns the drift warnings of the refresh
/// (already printed), for a result that lists its warnings.
pub async fn prepare_for_tools(
    ctx: &Context,
    name: &SkillName,
    refresh_all: bool,
) -> Result<Vec<String>, Failure> {
    discover_first_use(ctx, refresh_all).await?;
    let mut drift = Vec::new();
    if refresh_all {
        let spinner = output::spinner(ctx.format, "querying MCP servers…");
        let outcomes = ctx
            .service
            .refresh_mcp_for_skill(name, &mcp::fetch_options(ctx))
            .await;
        spinner.finish_and_clear();
        let outcomes = outcomes?;
        for outcome in &outcomes {
            // The refresh replaced the caches: a changed tool is told here
            // as `mcp refresh` tells it.
            drift.extend(mcp::warn_drift(ctx, outcome));
            if outcome.error.is_some() {
                mcp::report_failure(ctx, outcome);
            }
        }
    }
    Ok(drift)
}
