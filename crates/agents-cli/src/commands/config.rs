use std::process::ExitCode;

use crate::cli::{ConfigCommand, GlobalArgs};
use crate::context::settings;
use crate::output::{self, Failure};

pub fn run(global: &GlobalArgs, command: ConfigCommand) -> Result<ExitCode, Failure> {
    let format = global.format_or_table();
    match command {
        ConfigCommand::Show => {
            let settings = settings(global, None)?;
            for warning in &settings.warnings {
                output::warn(format, warning);
            }
            if format.structured() {
                output::json(&settings)?;
            } else {
                output::line(settings.to_string())?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
