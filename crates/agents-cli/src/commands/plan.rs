//! `agents plan validate`.

use std::process::ExitCode;

use agents_definition::parse_plan_with;

use crate::cli::PlanCommand;
use crate::context::Context;
use crate::output::Failure;
use crate::shared::files::parse_definition;
use crate::shared::plan::report;
use agents_config::InputKind;

pub async fn run(ctx: &Context, command: PlanCommand) -> Result<ExitCode, Failure> {
    match command {
        PlanCommand::Validate { file } => {
            let plan = parse_definition(ctx, &file, InputKind::Plan, parse_plan_with)?;
            report(ctx, &plan, false).await
        }
    }
}
