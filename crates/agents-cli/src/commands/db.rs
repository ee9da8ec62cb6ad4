use std::process::ExitCode;

use agents_definition::{export_to_yaml, parse_export_with};
use agents_registry::{Change, Store};
use serde_json::json;

use crate::cli::{DbCommand, GlobalArgs};
use crate::context::Context;
use crate::output::{self, Failure};
use agents_config::InputKind;

pub async fn run(global: &GlobalArgs, command: DbCommand) -> Result<ExitCode, Failure> {
    let ctx = if matches!(command, DbCommand::Init) {
        Context::create(global).await?
    } else {
        Context::open(global).await?
    };
    match command {
        DbCommand::Init => {
            let status = ctx.service.store().status().await?;
            if ctx.format.structured() {
                output::json(
                    &json!({"initialized": status.location, "schema_version": status.schema_version}),
                )?;
            } else {
                output::line(format!(
                    "initialized {} (schema version {})",
                    status.location, status.schema_version
                ))?;
            }
        }
        DbCommand::Migrate | DbCommand::Status => {
            let status = ctx.service.store().status().await?;
            if ctx.format.structured() {
                output::json(&status)?;
            } else {
                output::line(format!("backend:        {}", status.backend))?;
                output::line(format!("location:       {}", status.location))?;
                output::line(format!(
                    "schema version: {} (this build supports {})",
                    status.schema_version, status.supported_version
                ))?;
                output::line(format!("skills:         {}", status.skills))?;
                output::line(format!("skill items:    {}", status.skill_items))?;
                output::line(format!("tools:          {}", status.tools))?;
            }
        }
        DbCommand::Export { output: target } => {
            let skills = ctx.service.store().all_skills().await?;
            let tools = ctx.service.store().all_tools().await?;
            let export = export_to_yaml(&skills, &tools)?;
            if let Some(warning) = ctx.settings.limits.import_warning(&export) {
                output::warn(ctx.format, &warning);
            }
            let text = export.text;
            match target {
                Some(path) => {
                    write_atomically(&path, &text)?;
                    let message = format!(
                        "exported {} skill(s) and {} tool(s) to {}",
                        skills.len(),
                        tools.len(),
                        path.display()
                    );
                    if ctx.format.structured() {
                        output::json(
                            &json!({"skills": skills.len(), "tools": tools.len(), "file": path}),
                        )?;
                    } else {
                        output::line(message)?;
                    }
                }
                None => output::raw(&text)?,
            }
        }
        DbCommand::Import { file, replace } => {
            let (skills, tools) =
                super::parse_definition(&ctx, &file, InputKind::Export, parse_export_with)?;
            let changes = ctx
                .service
                .import_with(&skills, &tools, replace)
                .await
                .map_err(|err| {
                    let mut failure = super::in_file(&file, err.into());
                    // Nothing was written; say how to take the file's version.
                    if failure.kind == "duplicate_skill" || failure.kind == "duplicate_tool" {
                        failure.message.push_str(
                            " (nothing was imported; `--replace` takes the file's version of what exists)",
                        );
                    }
                    failure
                })?;
            let count = |wanted: Change| changes.iter().filter(|(_, c)| *c == wanted).count();
            let (created, updated, unchanged) = (
                count(Change::Created),
                count(Change::Updated),
                count(Change::Unchanged),
            );
            if ctx.format.structured() {
                output::json(&json!({
                    "skills": skills.len(), "tools": tools.len(),
                    "created": created, "updated": updated, "unchanged": unchanged,
                }))?;
            } else if replace {
                output::line(format!(
                    "imported {} skill(s) ({created} created, {updated} updated, {unchanged} unchanged) and {} tool(s) from {}",
                    skills.len(),
                    tools.len(),
                    file.display()
                ))?;
            } else {
                output::line(format!(
                    "imported {} skill(s) and {} tool(s) from {}",
                    skills.len(),
                    tools.len(),
                    file.display()
                ))?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes next to the target and renames, so an interrupted export never
/// leaves a truncated file behind. The file gets mode 0600, like the
/// database it copies.
fn write_atomically(path: &std::path::Path, text: &str) -> Result<(), Failure> {
    agents_fs::write_atomically(path, text.as_bytes(), agents_fs::Access::Output)
        .map_err(|err| Failure::new("io", format!("cannot write `{}`: {err}", path.display())))
}
