use std::process::ExitCode;

use agents_core::Plan;
use agents_definition::parse_plan_with;
use serde_json::json;

use crate::cli::{Format, PlanCommand};
use crate::commands::read_definition;
use crate::context::Context;
use crate::output::{self, Failure};

pub async fn run(ctx: &Context, command: PlanCommand) -> Result<ExitCode, Failure> {
    match command {
        PlanCommand::Validate { file } => {
            let limits = ctx.settings.limits.plan();
            let text = read_definition(&file, &limits)?;
            let shown = file.display().to_string();
            let plan = parse_plan_with(&text, &shown, &limits)?;
            report(ctx, &plan, false).await
        }
    }
}

/// Validates `plan`, printing every error and warning; exit 1 on any error.
pub async fn report(ctx: &Context, plan: &Plan, strict: bool) -> Result<ExitCode, Failure> {
    output::supported(ctx.format, &[Format::Table, Format::Json], "validate")?;
    let report = if strict {
        let spinner = output::spinner(ctx.format, "querying MCP servers…");
        let report = ctx
            .service
            .validate_plan_strict(plan, &super::mcp::fetch_options(ctx))
            .await;
        spinner.finish_and_clear();
        report?
    } else {
        ctx.service.validate_plan(plan).await?
    };
    if ctx.format.structured() {
        output::json(&json!({
            "ok": report.is_ok(),
            "skills": plan.skills,
            "errors": report.errors,
            "warnings": report.warnings,
        }))?;
    } else {
        for warning in &report.warnings {
            output::warn(ctx.format, warning);
        }
        for error in &report.errors {
            output::line(format!("error: {error}"))?;
        }
        if report.is_ok() {
            output::line(format!("ok: {} skill(s) resolve", plan.skills.len()))?;
        } else {
            output::line(format!("{} error(s)", report.errors.len()))?;
        }
    }
    Ok(if report.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
