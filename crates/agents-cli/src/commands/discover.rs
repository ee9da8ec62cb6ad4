//! `agents skill discover` and `agents skill lint`.

use std::path::PathBuf;
use std::process::ExitCode;

use agents_registry::{ConflictStrategy, Refreshed};

use crate::cli::{ConflictArg, Format};
use crate::context::Context;
use crate::output::{self, Failure};
use crate::shared::discovery::progress_bar;

fn strategy(arg: ConflictArg) -> ConflictStrategy {
    match arg {
        ConflictArg::Skip => ConflictStrategy::Skip,
        ConflictArg::Error => ConflictStrategy::Error,
        ConflictArg::Replace => ConflictStrategy::Replace,
    }
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
