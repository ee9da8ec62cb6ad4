use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use agents_core::SkillName;
use agents_registry::{ConflictStrategy, Progress, Refreshed};

use crate::cli::{ConflictArg, Format};
use crate::commands::mcp;
use crate::context::Context;
use crate::output::{self, Failure};

fn strategy(arg: ConflictArg) -> ConflictStrategy {
    match arg {
        ConflictArg::Skip => ConflictStrategy::Skip,
        ConflictArg::Error => ConflictStrategy::Error,
        ConflictArg::Replace => ConflictStrategy::Replace,
    }
}

/// A progress bar on stderr, only for people at a terminal.
fn progress_bar(format: Format) -> (Option<Progress>, Option<indicatif::ProgressBar>) {
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

/// `agents skill discover`: a full re-scan of the configured (or given)
/// paths, replacing the agent-skill tools in the catalogue.
pub async fn discover(
    ctx: &Context,
    paths: Option<String>,
    on_conflict: ConflictArg,
) -> Result<ExitCode, Failure> {
    let named = paths.is_some();
    let dirs = match paths {
        Some(raw) => crate::context::settings_with_paths(ctx, raw)?,
        None => ctx.settings.agent_skills_paths.value.clone(),
    };
    let refreshed = refresh(ctx, &dirs, named, strategy(on_conflict)).await?;
    if ctx.format.structured() {
        output::json(&refreshed)?;
    } else {
        print_result(ctx, &refreshed, named)?;
    }
    Ok(if refreshed.result.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

async fn refresh(
    ctx: &Context,
    dirs: &[PathBuf],
    named: bool,
    strategy: ConflictStrategy,
) -> Result<Refreshed, Failure> {
    let (progress, bar) = progress_bar(ctx.format);
    let result = ctx
        .service
        .refresh_agent_skills(dirs, named, strategy, progress)
        .await;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let refreshed = result?;
    output::warn_all(ctx.format, &refreshed.result.warnings);
    Ok(refreshed)
}

fn print_result(ctx: &Context, refreshed: &Refreshed, named: bool) -> Result<(), Failure> {
    let result = &refreshed.result;
    output::warn_all(ctx.format, result.conflicts.iter().map(ToString::to_string));
    // One block per folder, as many as a warning list shows; the count of
    // them all is in the summary line below, and `skill lint` lists each.
    for error in result.errors.iter().take(output::MAX_WARNING_LINES) {
        output::report_error(
            ctx.format,
            &Failure::new("invalid_skill_md", error.to_string()),
        );
    }
    if let Some(more) = result
        .errors
        .len()
        .checked_sub(output::MAX_WARNING_LINES)
        .filter(|more| *more > 0)
    {
        output::report_error(
            ctx.format,
            &Failure::new(
                "invalid_skill_md",
                format!(
                    "{more} more folders with errors not shown (`agents skill lint DIR` lists them)"
                ),
            ),
        );
    }
    output::line(format!(
        "discovered {} agent skill(s), {} conflict(s), {} folder(s) with errors",
        result.discovered.len(),
        result.conflicts.len(),
        result.errors.len()
    ))?;
    for tool in &result.discovered {
        let path = tool.meta_str(agents_core::Meta::Path).unwrap_or("");
        output::line(format!("  {}  {path}", tool.name))?;
    }
    print_changes(&refreshed.changes, named)
}

/// The counts of a re-scan's changes, then each skill it removed (it
/// replaces what the scope found before, so a folder not scanned this time
/// is dropped: said, not silent).
fn print_changes(changes: &agents_registry::ScopeChanges, named: bool) -> Result<(), Failure> {
    output::line(format!(
        "{} added, {} kept, {} changed, {} removed",
        changes.added.len(),
        changes.kept.len(),
        changes.changed.len(),
        changes.removed.len()
    ))?;
    for removed in changes.removed.iter().take(output::MAX_WARNING_LINES) {
        let path = removed
            .path
            .as_deref()
            .map(|path| format!("  (was {path})"))
            .unwrap_or_default();
        output::line(format!("  removed {}{path}", removed.name))?;
    }
    if let Some(more) = changes
        .removed
        .len()
        .checked_sub(output::MAX_WARNING_LINES)
        .filter(|more| *more > 0)
    {
        output::line(format!(
            "  and {more} more removed (`--format json` lists them)"
        ))?;
    }
    if named && !changes.removed.is_empty() {
        output::line(
            "  (a discovery replaces every Agent Skill found before with what it finds now: give \
             `--paths` every folder you scan)",
        )?;
    }
    Ok(())
}

/// Discovers the configured Agent Skills folders when `always`, or when
/// nothing was ever discovered: before anything resolves skills (`skill
/// tools`, `skill validate`, `plan validate`, the check of `skill add`), so
/// on a fresh machine each of them sees the same `agent_skills/…` tools.
pub async fn discover_unless_done(ctx: &Context, always: bool) -> Result<(), Failure> {
    if !always && ctx.service.agent_skills_discovered().await? {
        return Ok(());
    }
    let mut dirs = ctx.settings.agent_skills_paths.value.clone();
    if ctx.settings.agent_skills_paths.origin == agents_config::Origin::Default {
        // A fresh machine has no `~/.cleveragents/agent_skills`: not worth a warning
        // on every `skill tools`; `skill discover` and `config show` still say so.
        dirs.retain(|dir| dir.is_dir());
    }
    let result = match refresh(ctx, &dirs, false, ConflictStrategy::Skip).await {
        Ok(refreshed) => refreshed.result,
        // The automatic first discovery is a convenience: a user who may
        // only read the registry (a read-only role, a file they cannot
        // write) still gets what they asked for, without Agent Skills.
        Err(failure) if !always => {
            output::warn(
                ctx.format,
                &format!(
                    "Agent Skills were not discovered ({}); `agents skill discover` with write access to the registry adds them",
                    failure.message
                ),
            );
            return Ok(());
        }
        Err(failure) => return Err(failure),
    };
    for conflict in &result.conflicts {
        output::warn(ctx.format, &conflict.to_string());
    }
    for error in &result.errors {
        output::warn(ctx.format, &error.to_string());
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
    discover_unless_done(ctx, refresh_all).await?;
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

/// `agents skill lint`: validation only, no database.
pub fn lint(format: Format, paths: &[PathBuf]) -> Result<ExitCode, Failure> {
    let report = agents_discovery::lint(paths);
    if format.structured() {
        output::json(&report)?;
    } else {
        output::line(report.to_string())?;
    }
    Ok(if report.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
