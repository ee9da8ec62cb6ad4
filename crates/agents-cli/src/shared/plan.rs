//! A plan's validation as `plan validate` and `skill validate` print it.

use std::process::ExitCode;

use agents_core::Plan;
use serde_json::json;

use crate::context::Context;
use crate::output::{self, Failure};

/// Validates `plan`, printing its errors and warnings (the first
/// [`agents_core::MAX_SHOWN`] of each, then how many more); exit 1 on any error.
pub async fn report(ctx: &Context, plan: &Plan, strict: bool) -> Result<ExitCode, Failure> {
    super::discovery::discover_first_use(ctx, false).await?;
    let mut report = if strict {
        let spinner = output::spinner(ctx.format, "querying MCP servers…");
        let report = ctx
            .service
            .validate_plan_strict(plan, &super::mcp::fetch_options(ctx))
            .await;
        spinner.finish_and_clear();
        let (report, outcomes) = report?;
        // The servers' lists replaced their caches: a changed tool is told
        // as `mcp refresh` tells it.
        for outcome in &outcomes {
            super::mcp::warn_drift(ctx, outcome);
        }
        report
    } else {
        ctx.service.validate_plan(plan).await?
    };
    let ok = report.is_ok();
    let (errors, warnings) = report.bound(agents_core::MAX_SHOWN);
    if ctx.format.structured() {
        output::json(&json!({
            "ok": ok,
            "skills": plan.skills,
            "errors": report.errors,
            "warnings": report.warnings,
            "error_count": errors,
            "warning_count": warnings,
        }))?;
    } else {
        // The problems found are the result, warnings as much as errors
        // (the JSON form lists both): stdout, in the table form too.
        for warning in &report.warnings {
            output::line(format!("warning: {warning}"))?;
        }
        for error in &report.errors {
            output::line(format!("error: {error}"))?;
        }
        let warned = match warnings {
            0 => String::new(),
            1 => ", 1 warning".to_owned(),
            n => format!(", {n} warnings"),
        };
        if ok {
            // Each skill once, however often the plan names it.
            let named: std::collections::HashSet<&str> =
                plan.skills.iter().map(String::as_str).collect();
            output::line(format!("ok: {} skill(s) resolve{warned}", named.len()))?;
        } else {
            output::line(format!("{errors} error(s){warned}"))?;
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
