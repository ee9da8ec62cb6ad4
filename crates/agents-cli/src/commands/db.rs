use std::process::ExitCode;

use agents_definition::{export_to_yaml, parse_export_with};
use agents_registry::{ToolChange, WriteEffect};
use serde_json::json;

use crate::cli::{DbCommand, GlobalArgs};
use crate::context::{Access, Context};
use crate::output::{self, Failure};
use crate::shared::files;
use agents_config::InputKind;

pub async fn run(global: &GlobalArgs, command: DbCommand) -> Result<ExitCode, Failure> {
    let access = match command {
        DbCommand::Init => Access::Init,
        DbCommand::Migrate | DbCommand::Import { .. } => Access::Write,
        DbCommand::Status | DbCommand::Export { .. } => Access::Read,
    };
    let ctx = Context::open(global, access).await?;
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
            // Rows written past the checks (by an older client, or straight
            // into the database) that `db import` would refuse: the file is
            // written all the same, and says which.
            let sources: std::collections::HashMap<&str, agents_core::ToolSource> = tools
                .iter()
                .map(|tool| (tool.name.as_str(), tool.source))
                .collect();
            let refused_skills = export.refused.iter().map(|refused| {
                // The command that rewrites such a row: a cache row comes
                // back from its source, not from `tool add`.
                let fix = if refused.kind == "skill" {
                    "agents skill update"
                } else {
                    match sources.get(refused.subject.as_str()) {
                        Some(agents_core::ToolSource::Mcp) => "agents mcp refresh",
                        Some(agents_core::ToolSource::AgentSkills) => "agents skill discover",
                        _ => "agents tool add --replace",
                    }
                };
                format!(
                    "`db import` will refuse the exported file: {} `{}`: {}; fix it with `{fix}` and export again",
                    refused.kind,
                    refused.subject,
                    agents_core::text::bounded_message(&refused.reason)
                )
            });
            let refused_tools = tools.iter().filter_map(|tool| {
                let err = ctx.service.check_import_tool(tool).err()?;
                Some(format!(
                    "`db import` will refuse the exported file: {}",
                    agents_core::text::bounded_message(&err.to_string())
                ))
            });
            output::warn_all(ctx.format, refused_skills.chain(refused_tools));
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
                files::parse_definition(&ctx, &file, InputKind::Export, parse_export_with)?;
            let outcome = ctx
                .service
                .import_with(&skills, &tools, replace)
                .await
                .map_err(|err| {
                    let mut failure = files::in_file(&file, err.into());
                    // Nothing was written; say how to take the file's version.
                    if failure.kind == "duplicate_skill" || failure.kind == "duplicate_tool" {
                        failure.message.push_str(
                            " (nothing was imported; `--replace` takes the file's version of what exists)",
                        );
                    }
                    failure
                })?;
            let count =
                |wanted: WriteEffect| outcome.skills.iter().filter(|(_, c)| *c == wanted).count();
            let (created, updated, unchanged) = (
                count(WriteEffect::Created),
                count(WriteEffect::Updated),
                count(WriteEffect::Unchanged),
            );
            // What was written: the builtins' rows are skipped (builtins
            // live in code), and rows stored already are left as they are.
            let written = outcome.tools_written();
            let tools_count =
                |wanted: ToolChange| outcome.tools.iter().filter(|(_, c)| *c == wanted).count();
            let (tools_unchanged, tools_kept) = (
                tools_count(ToolChange::Unchanged),
                tools_count(ToolChange::Kept),
            );
            if ctx.format.structured() {
                output::json(&json!({
                    "skills": skills.len(), "tools": written,
                    "created": created, "updated": updated, "unchanged": unchanged,
                    "tools_unchanged": tools_unchanged, "tools_kept": tools_kept,
                }))?;
            } else {
                let breakdown = if replace {
                    format!(" ({created} created, {updated} updated, {unchanged} unchanged)")
                } else {
                    String::new()
                };
                let mut line = format!(
                    "imported {} skill(s){breakdown} and {written} tool(s) from {}",
                    skills.len(),
                    file.display()
                );
                if tools_unchanged > 0 {
                    line.push_str(&format!(
                        "; {tools_unchanged} tool(s) were stored as the file has them"
                    ));
                }
                if tools_kept > 0 {
                    line.push_str(&format!(
                        "; {tools_kept} cached MCP or Agent Skills tool(s) of servers or scopes the registry has its own cache of were kept as stored (`--replace` takes the file's)"
                    ));
                }
                output::line(line)?;
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
