use std::path::{Path, PathBuf};
use std::process::ExitCode;

use agents_core::{Explanation, OverrideLayer, ResolvedToolEntry, SkillName};
use agents_definition::{FieldPosition, parse_skill_documents_with, skill_to_json, skills_to_yaml};
use agents_disclosure::{BudgetReport, Catalog, Defer};
use agents_registry::{EntryNote, FileCheck, ToolSet, WriteFinding, WriteMode, WriteOutcome};
use serde_json::{Value, json};

use crate::cli::{Format, GlobalArgs, SkillCommand};
use crate::context::Context;
use crate::output::{self, Failure};
use crate::shared::discovery::{discover_first_use, prepare_for_tools};
use crate::shared::files::{self, Written, parse_definition, read_lock, read_text};
use crate::shared::lock::{DiffTo, gate, print_diff};
use crate::shared::mcp::fetch_options;
use agents_config::InputKind;

/// How many entries with unknown flags the summary line names first.
const UNKNOWN_SHOWN: usize = 10;

pub async fn run(global: &GlobalArgs, command: SkillCommand) -> Result<ExitCode, Failure> {
    let ctx = match command {
        // Routed by `commands::run`.
        SkillCommand::Lint { .. } | SkillCommand::Discover { .. } => {
            return Err(Failure::new("internal", "not a command of this module"));
        }
        SkillCommand::Get { .. }
        | SkillCommand::Prompt { .. }
        | SkillCommand::List { .. }
        | SkillCommand::Tools { .. }
        | SkillCommand::Lock { .. }
        | SkillCommand::Diff { .. }
        | SkillCommand::Graph { .. }
        | SkillCommand::Validate { .. } => Context::read(global).await?,
        SkillCommand::Add { .. }
        | SkillCommand::Update { .. }
        | SkillCommand::Apply { .. }
        | SkillCommand::Remove { .. } => Context::write(global).await?,
    };
    match command {
        SkillCommand::Add { files, strict } => {
            write_files(&ctx, &files, WriteMode::Add, strict).await
        }
        SkillCommand::Update { files, strict } => {
            write_files(&ctx, &files, WriteMode::Update, strict).await
        }
        SkillCommand::Apply { files, strict } => apply(&ctx, &files, strict).await,
        SkillCommand::Get { name, show_secrets } => get(&ctx, &name, show_secrets).await,
        SkillCommand::Prompt { name } => {
            let name = ctx.service.skill_name(&name).await?;
            // No refresh, so no drift to tell.
            prepare_for_tools(&ctx, &name, false).await?;
            let (prompt, left_out) = ctx.service.skill_prompt(&name).await?;
            // As `mcp serve` says what it leaves out: an Agent Skill of the
            // set missing from the prompt is named, with what would add it.
            output::warn_all(ctx.format, &left_out);
            output::raw(&prompt)?;
            Ok(ExitCode::SUCCESS)
        }
        SkillCommand::List { namespace } => list(&ctx, namespace.as_deref()).await,
        SkillCommand::Remove { name, force } => remove(&ctx, &name, force).await,
        SkillCommand::Tools {
            name,
            refresh,
            explain,
            locked,
            budget,
            defer,
            budget_tokens,
        } => {
            let defer: Defer = defer.into();
            // Read by `--budget` and `--defer auto` only: anywhere else it
            // would be ignored without a word.
            if budget_tokens.is_some() && !budget && defer != Defer::Auto {
                return Err(Failure::usage(
                    "`--budget-tokens` is read only by `--budget` and `--defer auto`",
                ));
            }
            let disclosure = Disclosure {
                budget,
                defer,
                budget_tokens: budget_tokens.unwrap_or(agents_disclosure::DEFAULT_BUDGET_TOKENS),
            };
            tools(&ctx, &name, refresh, explain, locked.as_deref(), disclosure).await
        }
        SkillCommand::Lock { names, output } => lock(&ctx, &names, &output).await,
        SkillCommand::Diff { name, lock } => diff(&ctx, &name, &lock).await,
        SkillCommand::Graph { name } => graph(&ctx, &name).await,
        SkillCommand::Validate { names, strict } => {
            let plan = agents_core::Plan { skills: names };
            crate::shared::plan::report(&ctx, &plan, strict).await
        }
        SkillCommand::Lint { .. } | SkillCommand::Discover { .. } => Ok(ExitCode::SUCCESS),
    }
}

async fn write_files(
    ctx: &Context,
    files: &[PathBuf],
    mode: WriteMode,
    strict: bool,
) -> Result<ExitCode, Failure> {
    // The check of what is written resolves it: against the same
    // `agent_skills/…` tools `skill tools` would see on a fresh machine.
    discover_first_use(ctx, false).await?;
    let verb = if mode == WriteMode::Add {
        "added"
    } else {
        "updated"
    };
    let Batch { all, files: parsed } = Batch::read(ctx, files).await;
    let all = &all;
    let mut parsed = parsed.into_iter();
    files::for_each_file(ctx.format, files, verb, "skill", |file| {
        let parsed = parsed
            .next()
            .unwrap_or_else(|| Ok((FileSkills::default(), FileCheck::default())));
        async move {
            let (source, check) = parsed?;
            let skills = all.get(source.range.clone()).unwrap_or_default();
            let pointer = Pointer {
                file,
                skills,
                source: &source,
            };
            let outcome = write_one(ctx, &pointer, check, mode, strict)
                .await
                .map_err(|failure| advise(failure, mode))?;
            let (shown, more) = outcome.shown_warnings();
            Ok(Written {
                names: skills.iter().map(|s| s.name.to_string()).collect(),
                shown: pointer.warnings(shown, more),
                warnings: messages(&outcome.warnings),
            })
        }
    })
    .await
}

/// `failure` of a `skill add` or `skill update` that the other command (or
/// `skill apply`, which does both) would have written, with that advice.
fn advise(mut failure: Failure, mode: WriteMode) -> Failure {
    if matches!(
        (mode, failure.kind.as_str()),
        (WriteMode::Add, "duplicate_skill") | (WriteMode::Update, "skill_not_found")
    ) {
        failure
            .message
            .push_str(" (`agents skill apply` adds new skills and updates registered ones)");
    }
    failure
}

/// The messages of `findings`, as the JSON result lists them.
fn messages(findings: &[WriteFinding]) -> Vec<String> {
    findings.iter().map(finding_text).collect()
}

/// A finding's message with the names it suggests.
fn finding_text(finding: &WriteFinding) -> String {
    format!(
        "{}{}",
        finding.message,
        output::did_you_mean(&finding.did_you_mean)
    )
}

/// One file's part of a write: where its skills are in the command's
/// batch, the document of the file each is in, and a fingerprint of the
/// text they were parsed from.
#[derive(Debug, Clone, Default)]
struct FileSkills {
    range: std::ops::Range<usize>,
    documents: Vec<usize>,
    fingerprint: u64,
}

/// A fingerprint of a file's text, to know it is the text read before.
fn fingerprint(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

/// Points the write-time findings of one file at the lines they are
/// about: a finding about a skill the file defines, at the part of its
/// definition the finding names ([`agents_core::Site::field_in`], found in
/// the text by [`agents_definition::locate_fields`]).
///
/// Only the findings shown are located. The parse keeps no positions, so
/// the file is read again (once, and only when a shown finding is about one
/// of its skills) and used only when it still holds the text that was
/// parsed; otherwise the findings name the file alone, as before.
struct Pointer<'a> {
    file: &'a Path,
    skills: &'a [agents_core::Skill],
    source: &'a FileSkills,
}

impl Pointer<'_> {
    /// Where each of `findings` is written in the file, if it can be told.
    fn locate(&self, findings: &[WriteFinding]) -> Vec<Option<FieldPosition>> {
        let mut positions = vec![None; findings.len()];
        let mut requests: Vec<(usize, usize, agents_core::FieldPath)> = Vec::new();
        for (at, finding) in findings.iter().enumerate() {
            let (Some(name), Some(site)) = (&finding.skill, &finding.site) else {
                continue;
            };
            let Some(index) = self.skills.iter().position(|skill| skill.name == *name) else {
                continue;
            };
            let (Some(skill), Some(&document)) =
                (self.skills.get(index), self.source.documents.get(index))
            else {
                continue;
            };
            if let Some(path) = site.field_in(skill) {
                requests.push((at, document, path));
            }
        }
        if requests.is_empty() {
            return positions;
        }
        // Read again only a regular file: a named pipe's writer is gone, and
        // opening it again would wait for another one forever.
        if !std::fs::metadata(self.file).is_ok_and(|meta| meta.is_file()) {
            return positions;
        }
        let Ok(text) = read_text(self.file) else {
            return positions;
        };
        if fingerprint(&text) != self.source.fingerprint {
            return positions;
        }
        let wanted: Vec<(usize, &agents_core::FieldPath)> = requests
            .iter()
            .map(|(_, document, path)| (*document, path))
            .collect();
        let found = agents_definition::locate_fields(&text, &wanted);
        for ((at, ..), mut position) in requests.iter().zip(found) {
            if let Some(position) = &mut position
                && findings.get(*at).is_some_and(WriteFinding::quotes_a_secret)
            {
                position.hide_value();
            }
            if let Some(slot) = positions.get_mut(*at) {
                *slot = position;
            }
        }
        positions
    }

    /// `shown` and the line `more` as stderr shows them: each naming the
    /// file, and the line with a caret where it is known; under `--format
    /// json` the same one-line message as before, the position as fields.
    fn warnings(&self, shown: &[WriteFinding], more: Option<String>) -> Vec<output::Warning> {
        let file = self.file.display().to_string();
        let positions = self.locate(shown);
        let mut warnings: Vec<output::Warning> = shown
            .iter()
            .zip(positions)
            .map(|(finding, position)| {
                let text = finding_text(finding);
                let message = format!("{file}: {text}");
                let mut details = serde_json::Map::new();
                details.insert("kind".into(), finding.kind.into());
                if !finding.did_you_mean.is_empty() {
                    details.insert("did_you_mean".into(), json!(finding.did_you_mean));
                }
                if let Some(skill) = &finding.skill {
                    details.insert("skill".into(), skill.as_str().into());
                }
                details.insert("file".into(), file.clone().into());
                let text = match &position {
                    Some(at) => {
                        details.insert("line".into(), at.line.into());
                        details.insert("column".into(), at.column.into());
                        at.show(&file, &text)
                    }
                    None => message.clone(),
                };
                output::Warning {
                    text,
                    message: Some(message),
                    details,
                }
            })
            .collect();
        warnings.extend(more.map(|more| output::Warning {
            text: format!("{file}: {more}"),
            message: None,
            details: serde_json::Map::new(),
        }));
        warnings
    }

    /// A `--strict` refusal of the file: its findings, the shown ones
    /// pointing at their lines.
    fn refusal(&self, findings: &[WriteFinding]) -> Failure {
        let shown = findings
            .get(..agents_registry::STRICT_SHOWN)
            .unwrap_or(findings);
        let file = self.file.display().to_string();
        let positions = self.locate(shown);
        let message = agents_registry::strict_message(findings, |at, finding| {
            match positions.get(at).and_then(Option::as_ref) {
                Some(at) => at.show(&file, &finding_text(finding)),
                None => finding_text(finding),
            }
        });
        Failure::new("strict", format!("{file}: {message}"))
    }
}

/// Every file's skills, parsed and checked before any is written, so that
/// the check of one file sees the skills the command's other files define.
struct Batch {
    all: Vec<agents_core::Skill>,
    /// Each file's skills in `all` and what the check found, or why the
    /// file could not be read.
    files: Vec<Result<(FileSkills, FileCheck), Failure>>,
}

impl Batch {
    async fn read(ctx: &Context, paths: &[PathBuf]) -> Self {
        let Parsed { all, files } = Parsed::parse(ctx, paths);
        let ranges: Vec<std::ops::Range<usize>> = files
            .iter()
            .filter_map(|file| file.as_ref().ok().map(|file| file.range.clone()))
            .collect();
        let mut checks = ctx.service.check_files(&all, &ranges).await.into_iter();
        let files = files
            .into_iter()
            .zip(paths)
            .map(|(file, path)| {
                let range = file?;
                let check = checks
                    .next()
                    .unwrap_or_else(|| Ok(FileCheck::default()))
                    .map_err(|err| files::in_file(path, err.into()))?;
                Ok((range, check))
            })
            .collect();
        Self { all, files }
    }
}

/// Every file's skills, parsed.
struct Parsed {
    all: Vec<agents_core::Skill>,
    /// Each file's skills in `all`, or why it could not be read.
    files: Vec<Result<FileSkills, Failure>>,
}

impl Parsed {
    fn parse(ctx: &Context, files: &[PathBuf]) -> Self {
        let mut all = Vec::new();
        let files = files
            .iter()
            .map(|file| {
                read_skills(ctx, file).map(|(skills, documents, fingerprint)| {
                    let start = all.len();
                    if all.is_empty() {
                        // The first (usually only) file's skills are moved,
                        // not copied: a large file is held once.
                        all = skills;
                    } else {
                        all.extend(skills);
                    }
                    FileSkills {
                        range: start..all.len(),
                        documents,
                        fingerprint,
                    }
                })
            })
            .collect();
        Self { all, files }
    }
}

/// `skill apply`: one line per skill (`created local/x`), warnings on
/// stderr; exit 1 when any file failed.
async fn apply(ctx: &Context, files: &[PathBuf], strict: bool) -> Result<ExitCode, Failure> {
    discover_first_use(ctx, false).await?;
    let mut results = Vec::new();
    let mut failed = false;
    let Batch { all, files: parsed } = Batch::read(ctx, files).await;
    for (file, parsed) in files.iter().zip(parsed) {
        let shown = file.display().to_string();
        let (source, written) = match parsed {
            Ok((source, check)) => {
                let skills = all.get(source.range.clone()).unwrap_or_default();
                let pointer = Pointer {
                    file,
                    skills,
                    source: &source,
                };
                let written = write_one(ctx, &pointer, check, WriteMode::Apply, strict).await;
                (source, written)
            }
            Err(failure) => (FileSkills::default(), Err(failure)),
        };
        match written {
            Ok(outcome) => {
                let (shown_findings, more) = outcome.shown_warnings();
                let pointer = Pointer {
                    file,
                    skills: all.get(source.range.clone()).unwrap_or_default(),
                    source: &source,
                };
                output::warn_all_detailed(ctx.format, pointer.warnings(shown_findings, more));
                if ctx.format == Format::Table {
                    for (name, effect) in &outcome.effects {
                        output::line(format!("{} {name}", effect.as_str()))?;
                    }
                }
                let skills: Vec<Value> = outcome
                    .effects
                    .iter()
                    .map(|(name, effect)| json!({"name": name, "change": effect}))
                    .collect();
                results.push(json!({"file": shown, "ok": true, "skills": skills, "warnings": messages(&outcome.warnings)}));
            }
            Err(failure) => {
                failed = true;
                output::report_file_error(ctx.format, &failure);
                results.push(json!({"file": shown, "ok": false, "error": {"kind": failure.kind, "message": failure.message}}));
            }
        }
    }
    if ctx.format.structured() {
        output::json(&results)?;
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Parses one file of skill definitions (at least one), with the document
/// each is in and a [`fingerprint`] of the text.
fn read_skills(
    ctx: &Context,
    file: &Path,
) -> Result<(Vec<agents_core::Skill>, Vec<usize>, u64), Failure> {
    let mut print = 0;
    let (skills, documents) =
        parse_definition(ctx, file, InputKind::Skills, |text, shown, limits| {
            print = fingerprint(text);
            parse_skill_documents_with(text, shown, limits)
        })?;
    if skills.is_empty() {
        return Err(Failure::new(
            "invalid_definition",
            format!("{}: no skill definitions found", file.display()),
        ));
    }
    Ok((skills, documents, print))
}

/// Writes one file's `skills` under `mode` (as the command's check found
/// them) and trusts their launch specs for this user (they chose the file).
async fn write_one(
    ctx: &Context,
    pointer: &Pointer<'_>,
    check: FileCheck,
    mode: WriteMode,
    strict: bool,
) -> Result<WriteOutcome, Failure> {
    let (file, skills) = (pointer.file, pointer.skills);
    let shown = file.display().to_string();
    let in_file = |err: agents_registry::ServiceError| files::in_file(file, err.into());
    // A file that fails still shows the problems of stored skills its
    // check found: each is listed for the first file that reaches it, and
    // the files after it do not list it again.
    let found = check.from_stored.clone();
    let outcome = match ctx
        .service
        .write_skills_checked(skills, check, mode, strict)
        .await
    {
        Ok(outcome) => outcome,
        Err(agents_registry::ServiceError::Strict(findings)) => {
            return Err(pointer.refusal(&findings));
        }
        Err(err) => {
            let (found, more) = agents_registry::shown_findings(&found);
            output::warn_all_detailed(ctx.format, pointer.warnings(found, more));
            return Err(in_file(err));
        }
    };
    // The user chose this file: the launch specs in it are trusted for them.
    let verb = match mode {
        WriteMode::Add => "add",
        WriteMode::Update => "update",
        WriteMode::Apply => "apply",
    };
    ctx.service
        .trust_specs_of(skills, &format!("skill {verb} {shown}"))
        .map_err(in_file)?;
    Ok(outcome)
}

async fn get(ctx: &Context, name: &str, show_secrets: bool) -> Result<ExitCode, Failure> {
    let name = ctx.service.skill_name(name).await?;
    let mut skill = ctx.service.get_skill(&name).await?;
    if !show_secrets {
        let (masked, fields) = skill.with_secrets_masked();
        if !fields.is_empty() {
            output::warn(ctx.format, &masked_note(&name, &fields));
            skill = masked;
        }
    }
    match ctx.format {
        Format::Json => output::json(&skill_to_json(&skill))?,
        _ => {
            let yaml = skills_to_yaml(std::slice::from_ref(&skill))?;
            if let Some(warning) = ctx.settings.limits.definition_warning(yaml.len()) {
                output::warn(ctx.format, &warning);
            }
            output::raw(&yaml)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What `skill get` says when it shows secrets as `***`: the fields, and
/// that a definition printed so cannot be written back as it is.
fn masked_note(name: &SkillName, fields: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut named: Vec<String> = fields
        .iter()
        .take(SHOWN)
        .map(|field| format!("`{}`", agents_core::text::shorten(field, 256)))
        .collect();
    if fields.len() > SHOWN {
        named.push(format!("{} more", fields.len() - SHOWN));
    }
    format!(
        "`{name}`: secrets written out in its definition are shown as `{}` ({}); `--show-secrets` prints them, and a write of the masked definition is refused",
        agents_core::redact::REDACTED,
        named.join(", ")
    )
}

async fn list(ctx: &Context, namespace: Option<&str>) -> Result<ExitCode, Failure> {
    let skills = ctx.service.list_skills(namespace).await?;
    if ctx.format.structured() {
        let rows: Vec<Value> = skills
            .iter()
            .map(|s| {
                json!({
                    "name": s.name, "namespace": s.namespace, "short_name": s.short_name,
                    "description": s.description, "version": s.version, "items": s.items,
                    "updated_at": s.updated_at,
                })
            })
            .collect();
        return output::json(&rows).map(|()| ExitCode::SUCCESS);
    }
    if skills.is_empty() {
        // Said on stderr: stdout stays a table (a header only), as a script
        // reading it expects.
        output::note(&match namespace {
            Some(namespace) => format!(
                "no skills in namespace `{}`",
                agents_core::text::shorten(namespace, agents_core::text::MAX_ECHO_BYTES)
            ),
            None => "no skills registered".to_owned(),
        });
    }
    let rows = skills
        .iter()
        .map(|s| {
            [
                s.name.to_string(),
                s.version.clone().unwrap_or_default(),
                s.items.to_string(),
                s.description.clone().unwrap_or_default(),
            ]
        })
        .collect();
    output::table(["NAME", "VERSION", "ITEMS", "DESCRIPTION"], rows)?;
    Ok(ExitCode::SUCCESS)
}

async fn remove(ctx: &Context, name: &str, force: bool) -> Result<ExitCode, Failure> {
    let name = ctx.service.skill_name(name).await?;
    let broken = ctx.service.remove_skill(&name, force).await?;
    if ctx.format.structured() {
        output::json(&json!({"removed": name, "broken": broken}))?;
    } else if broken.is_empty() {
        output::line(format!("removed {name}"))?;
    } else {
        output::line(format!(
            "removed {name}; these skills include it and are now broken: {}",
            agents_store::names_bounded(&broken)
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `skill tools --format mcp`: the `tools/list` result `agents mcp serve`
/// would serve now, from the gateway's own plan, so what it leaves out (an
/// untrusted server's tools, a tool it cannot run) is left out here too.
async fn served_tools(
    ctx: &Context,
    name: &SkillName,
    locked: Option<(&agents_core::Lockfile, &Path)>,
) -> Result<ExitCode, Failure> {
    let names = [name.clone()];
    let set = match locked {
        Some((lock, file)) => gate(
            ctx.format,
            ctx.service.locked_serve_set(&names, lock).await?,
            file,
            |set| set.warnings.clone(),
            DiffTo::Stdout,
        )?,
        None => ctx.service.serve_set(&names).await?,
    };
    let plan = agents_gateway::Serving::decide(&set, fetch_options(ctx).timeout);
    output::warn_all(ctx.format, plan.warnings.iter().map(String::as_str));
    output::warn_all(
        ctx.format,
        plan.left_out
            .iter()
            .map(|l| format!("`{}` is not served: {}", l.name, l.reason)),
    );
    let served: Vec<&Value> = plan.served.iter().map(|tool| &tool.tool).collect();
    output::json(&json!({ "tools": served }))?;
    Ok(ExitCode::SUCCESS)
}

/// What `skill tools` says of progressive disclosure.
#[derive(Debug, Clone, Copy)]
struct Disclosure {
    /// `--budget`: each mode's first tool list.
    budget: bool,
    /// `--defer`.
    defer: Defer,
    /// `--budget-tokens`.
    budget_tokens: usize,
}

async fn tools(
    ctx: &Context,
    name: &str,
    refresh: bool,
    explain: bool,
    locked: Option<&Path>,
    disclosure: Disclosure,
) -> Result<ExitCode, Failure> {
    if disclosure.defer != Defer::None && export_format(ctx.format).is_none() {
        return Err(Failure::usage(
            "`--defer` needs `--format anthropic`, `openai` or `mcp`",
        ));
    }
    let name = ctx.service.skill_name(name).await?;
    let lock = locked.map(read_lock).transpose()?;
    let drift = prepare_for_tools(ctx, &name, refresh).await?;
    if export_format(ctx.format) == Some(agents_core::ExportFormat::Mcp)
        && disclosure.defer == Defer::None
    {
        return served_tools(ctx, &name, lock.as_ref().zip(locked)).await;
    }
    let set = match (&lock, locked) {
        (Some(lock), Some(file)) => gate(
            ctx.format,
            ctx.service.locked_tools(&name, explain, lock).await?,
            file,
            |set| set.warnings.clone(),
            DiffTo::Stdout,
        )?,
        _ if explain => ctx.service.explain_tools(&name).await?,
        _ => ctx.service.tools(&name).await?,
    };
    output::warn_all(ctx.format, set.warnings.iter().map(String::as_str));
    if disclosure.budget {
        let catalog = catalog(
            ctx,
            &name,
            &set.entries,
            agents_core::ExportFormat::Anthropic,
        )
        .await?;
        print_budget(ctx.format, &catalog.budget(disclosure.budget_tokens))?;
        return Ok(ExitCode::SUCCESS);
    }
    // What `agents mcp serve` cannot call (`--format mcp`, the gateway's
    // plan, has returned above, leaving it out with the reason).
    output::warn_all(ctx.format, set.not_served().iter().map(note_text));
    output::warn_all(ctx.format, set.policy_notes().iter().map(note_text));
    if let Some(format) = export_format(ctx.format) {
        print_export(ctx, &name, &set, format, disclosure).await?;
    } else if ctx.format.structured() {
        print_json(&name, &set, &drift)?;
    } else {
        print_table(&set)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `skill tools --format openai|anthropic|mcp` (deferred): the function
/// array, and what it leaves out as warnings.
async fn print_export(
    ctx: &Context,
    name: &SkillName,
    set: &ToolSet,
    format: agents_core::ExportFormat,
    disclosure: Disclosure,
) -> Result<(), Failure> {
    let (tools, exported) = if disclosure.defer == Defer::None {
        let mut exported = agents_core::export_tools(&set.entries, format);
        (std::mem::take(&mut exported.tools), exported)
    } else {
        let catalog = catalog(ctx, name, &set.entries, format).await?;
        let tools = catalog.export(disclosure.defer, disclosure.budget_tokens);
        if tools.iter().any(|tool| tool.get("defer_loading").is_some()) {
            output::note(&format!(
                "deferred tools and `{}` need Anthropic's `{ANTHROPIC_BETA}` beta header",
                agents_disclosure::plan::ANTHROPIC_TOOL_SEARCH_TYPE
            ));
        }
        (tools, catalog.exported().clone())
    };
    // The notes first (more tools than OpenAI takes), so the cap on
    // warnings never hides them behind a long list of left-out entries.
    let left_out: Vec<String> = exported
        .notes
        .iter()
        .cloned()
        .chain(
            exported
                .left_out
                .iter()
                .map(|l| format!("`{}` is not exported: {}", l.name, l.reason)),
        )
        .collect();
    output::warn_all(ctx.format, left_out.iter().map(String::as_str));
    if !exported.agent_skills.is_empty() {
        // Not functions: the model reads them, from the system prompt.
        output::warn_detailed(
            ctx.format,
            &format!(
                "{} Agent Skill(s) left out of the function array: an Agent Skill is instructions the model reads, not a function; `agents skill prompt {name}` prints their <available_skills> block for the system prompt",
                exported.agent_skills.len()
            ),
            json!({"kind": "agent_skills_left_out", "agent_skills": exported.agent_skills}),
        );
    }
    output::json(&tools)
}

/// `skill tools --format json|yaml`: the entries, the summary and every
/// warning (what `--refresh` found changed first).
fn print_json(name: &SkillName, set: &ToolSet, drift: &[String]) -> Result<(), Failure> {
    let explanations = set.explanations.as_deref().unwrap_or_default();
    // The names `--format openai` and `anthropic` give the same set.
    let mut export_names = agents_core::entry_export_names(&set.entries);
    let tools: Vec<EntryJson<'_>> = set
        .entries
        .iter()
        .enumerate()
        .map(|(i, entry)| EntryJson {
            explain: explanations.get(i).map(ExplainJson),
            ..entry_json(
                entry,
                export_names.remove(entry.name.as_str()).unwrap_or_default(),
            )
        })
        .collect();
    let mut summary = serde_json::to_value(set.summary)
        .map_err(|err| Failure::new("internal", err.to_string()))?;
    if let Value::Object(fields) = &mut summary {
        fields.insert(
            "effective".into(),
            serde_json::to_value(&set.effective)
                .map_err(|err| Failure::new("internal", err.to_string()))?,
        );
    }
    #[derive(serde::Serialize)]
    struct ToolsJson<'a> {
        skill: &'a SkillName,
        tools: Vec<EntryJson<'a>>,
        summary: Value,
        warnings: Vec<&'a str>,
    }
    output::json(&ToolsJson {
        skill: name,
        tools,
        summary,
        // What `--refresh` found changed, then the resolution's own.
        warnings: drift
            .iter()
            .chain(&set.warnings)
            .map(String::as_str)
            .collect(),
    })
}

/// `skill tools` for people: a table of the entries, the summary lines and,
/// with `--explain`, each entry's tree.
fn print_table(set: &ToolSet) -> Result<(), Failure> {
    let rows = set
        .entries
        .iter()
        .map(|e| {
            [
                e.name.clone(),
                e.source()
                    .map_or("?".to_owned(), |source| source.to_string()),
                e.source_skill.to_string(),
                if e.overrides.is_empty() {
                    String::new()
                } else {
                    Value::Object(e.overrides.clone()).to_string()
                },
                // Where there is no description, why there is none.
                e.tool.as_ref().map_or_else(
                    || format!("({})", not_callable(e).unwrap_or_default()),
                    |t| t.description.clone(),
                ),
            ]
        })
        .collect();
    output::table(
        ["TOOL", "SOURCE", "FROM SKILL", "OVERRIDES", "DESCRIPTION"],
        rows,
    )?;
    let s = set.summary;
    output::line(format!(
        "{} tool(s), {} MCP source(s), {} agent skill source(s); inline tools only: {} read-only, {} write, {} checkpointable, inline side effects: {}",
        s.total_tools,
        s.mcp_sources,
        s.agent_skill_sources,
        s.read_only_tools,
        s.write_tools,
        s.checkpointable_tools,
        if s.has_side_effects { "yes" } else { "no" },
    ))?;
    let e = &set.effective;
    output::line(format!(
        "effective (overrides applied) over all {} tools with known flags: {} read-only, {} write, {} checkpointable, effective side effects: {}; unknown: {}",
        e.known_tools,
        e.read_only_tools,
        e.write_tools,
        e.checkpointable_tools,
        if e.has_side_effects { "yes" } else { "no" },
        if e.unknown.is_empty() {
            "none".to_owned()
        } else {
            // Names from anyone's rows: each escaped (a line break in one
            // would print a line of its own) and cut, and not all of a
            // long list (`--format json` has every one).
            agents_core::text::head_tail(&e.unknown, UNKNOWN_SHOWN, 2, ", ")
        }
    ))?;
    if let Some(explanations) = &set.explanations {
        let mut text = String::new();
        for (entry, explanation) in set.entries.iter().zip(explanations) {
            explain_tree(&mut text, entry, explanation);
        }
        output::raw(&text)?;
    }
    Ok(())
}

/// The beta header Anthropic's tool search and `defer_loading` need.
const ANTHROPIC_BETA: &str = "advanced-tool-use-2025-11-20";

/// The disclosure catalogue of `name`'s resolved `entries` in `format`.
async fn catalog(
    ctx: &Context,
    name: &SkillName,
    entries: &[ResolvedToolEntry],
    format: agents_core::ExportFormat,
) -> Result<Catalog, Failure> {
    let mut skills: Vec<SkillName> = Vec::new();
    for entry in entries {
        if !skills.contains(&entry.source_skill) {
            skills.push(entry.source_skill.clone());
        }
    }
    let descriptions = ctx.service.skill_descriptions(&skills).await?;
    Ok(Catalog::new(name.as_str(), entries, format, &descriptions))
}

/// `skill tools --budget`: each mode's first tool list, then each skill's
/// own tools (a JSON object under `--format json`).
fn print_budget(format: Format, report: &BudgetReport) -> Result<(), Failure> {
    if format.structured() {
        return output::json(report);
    }
    let yes_no = |fits: bool| if fits { "yes" } else { "no" }.to_owned();
    let modes = report
        .modes
        .iter()
        .map(|mode| {
            [
                if mode.mode == mode.applied {
                    mode.mode.to_string()
                } else {
                    format!("{} ({})", mode.mode, mode.applied)
                },
                mode.tools.to_string(),
                mode.meta_tools.to_string(),
                mode.deferred.to_string(),
                mode.bytes.to_string(),
                mode.tokens.to_string(),
                format!("{:.1}%", mode.percent_of_all),
                yes_no(mode.fits),
            ]
        })
        .collect();
    output::table(
        [
            "MODE", "TOOLS", "META", "DEFERRED", "BYTES", "TOKENS", "OF ALL", "FITS",
        ],
        modes,
    )?;
    let skills = report
        .skills
        .iter()
        .map(|skill| {
            [
                skill.skill.clone(),
                if skill.root { "root" } else { "included" }.to_owned(),
                skill.tools.to_string(),
                skill.bytes.to_string(),
                skill.tokens.to_string(),
            ]
        })
        .collect();
    output::table(["SKILL", "ROLE", "TOOLS", "BYTES", "TOKENS"], skills)?;
    output::line(format!(
        "tokens estimated as {}; budget {} tokens (`auto` and FITS)",
        report.method, report.budget_tokens
    ))
}

async fn lock(ctx: &Context, names: &[String], file: &Path) -> Result<ExitCode, Failure> {
    let mut parsed = Vec::with_capacity(names.len());
    for name in names {
        parsed.push(ctx.service.skill_name(name).await?);
    }
    let names = parsed;
    let (lock, warnings) = ctx.service.lock_skills(&names).await?;
    // What `skill tools` warns of each skill: a lock of an incomplete
    // resolution (a server never fetched, an unknown tool) is not silent.
    output::warn_all(ctx.format, &warnings);
    let shown = file.display().to_string();
    let text = lock.to_text();
    readable_lock(text.len(), files::MAX_DEFINITION_BYTES)?;
    // A project file, meant to be committed: the usual mode, not the owner's only.
    agents_fs::write_atomically(file, text.as_bytes(), agents_fs::Access::Shared)
        .map_err(|err| Failure::new("io", format!("cannot write `{shown}`: {err}")))?;
    if ctx.format.structured() {
        let skills: serde_json::Map<String, Value> = lock
            .skills
            .iter()
            .map(|(name, s)| {
                (
                    name.clone(),
                    json!({"digest": s.digest, "entries": s.entries.len()}),
                )
            })
            .collect();
        output::json(&json!({
            "file": shown,
            "digest": lock.digest,
            "skills": skills,
            "warnings": warnings,
        }))?;
    } else {
        let entries: usize = lock.skills.values().map(|s| s.entries.len()).sum();
        output::line(format!(
            "locked {} skill(s), {entries} entries, to {shown} ({})",
            lock.skills.len(),
            lock.digest
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}

async fn diff(ctx: &Context, name: &str, file: &Path) -> Result<ExitCode, Failure> {
    let name = ctx.service.skill_name(name).await?;
    let lock = read_lock(file)?;
    let diff = ctx.service.diff_lock(&name, &lock).await?;
    print_diff(ctx.format, &diff, file)?;
    Ok(ExitCode::SUCCESS)
}

fn export_format(format: Format) -> Option<agents_core::ExportFormat> {
    match format {
        Format::Openai => Some(agents_core::ExportFormat::OpenAi),
        Format::Anthropic => Some(agents_core::ExportFormat::Anthropic),
        Format::Mcp => Some(agents_core::ExportFormat::Mcp),
        Format::Table | Format::Json | Format::Yaml | Format::Dot | Format::Mermaid => None,
    }
}

async fn graph(ctx: &Context, name: &str) -> Result<ExitCode, Failure> {
    let name = ctx.service.skill_name(name).await?;
    let graph = ctx.service.include_graph(&name).await?;
    match ctx.format {
        Format::Json | Format::Yaml => output::json(&graph)?,
        Format::Mermaid => output::raw(&graph.to_mermaid())?,
        _ => output::raw(&graph.to_dot())?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The `explain` object of one entry, serialized straight from the
/// explanation: include paths share their prefixes in memory, and building
/// a JSON value of each would cost the sum of their lengths (quadratic in a
/// deep include chain) before a byte is written.
pub struct ExplainJson<'a>(&'a Explanation);

impl serde::Serialize for ExplainJson<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        /// `overrides`: each key's winning layer with the layers it replaced.
        struct Origins<'a>(&'a [agents_core::OverrideOrigin]);
        #[derive(serde::Serialize)]
        struct Origin<'a> {
            #[serde(flatten)]
            winner: &'a OverrideLayer,
            replaced: &'a [OverrideLayer],
            #[serde(skip_serializing_if = "is_zero")]
            more_replaced: usize,
        }
        fn is_zero(count: &usize) -> bool {
            *count == 0
        }
        impl serde::Serialize for Origins<'_> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut map = serializer.serialize_map(Some(self.0.len()))?;
                for origin in self.0 {
                    map.serialize_entry(
                        &origin.key,
                        &Origin {
                            winner: &origin.winner,
                            replaced: &origin.replaced,
                            more_replaced: origin.more_replaced,
                        },
                    )?;
                }
                map.end()
            }
        }
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("occurrences", &self.0.occurrences)?;
        // Like `more_replaced`: only when some were left out.
        if self.0.more_occurrences > 0 {
            map.serialize_entry("more_occurrences", &self.0.more_occurrences)?;
        }
        map.serialize_entry("overrides", &Origins(&self.0.overrides))?;
        map.end()
    }
}

/// One entry of the `--explain` tree in table format.
fn explain_tree(out: &mut String, entry: &ResolvedToolEntry, explanation: &Explanation) {
    use std::fmt::Write as _;
    let compact = |map: &agents_core::ValueMap| {
        if map.is_empty() {
            String::new()
        } else {
            format!("  {}", Value::Object(map.clone()))
        }
    };
    let _ = writeln!(out, "\n{}", entry.name);
    let _ = writeln!(out, "  occurrences:");
    let count = explanation.occurrences.len();
    for (i, o) in explanation.occurrences.iter().enumerate() {
        if explanation.more_occurrences > 0 && i == agents_core::MAX_OCCURRENCES / 2 {
            let _ = writeln!(
                out,
                "    │  … {} more occurrence(s) between these not shown",
                explanation.more_occurrences
            );
        }
        let branch = if i + 1 == count { "└─" } else { "├─" };
        let mut notes = Vec::new();
        if i == 0 {
            notes.push("position");
        }
        if o.won {
            notes.push("won");
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!("  ({})", notes.join(", "))
        };
        let _ = writeln!(
            out,
            "    {branch} {}{}{notes}",
            o.include_path,
            compact(&o.overrides)
        );
    }
    if explanation.overrides.is_empty() {
        return;
    }
    let _ = writeln!(out, "  overrides:");
    let count = explanation.overrides.len();
    for (i, origin) in explanation.overrides.iter().enumerate() {
        let (branch, stem) = if i + 1 == count {
            ("└─", "   ")
        } else {
            ("├─", "│  ")
        };
        let w = &origin.winner;
        let _ = writeln!(
            out,
            "    {branch} {} = {}  from {} (at {})",
            origin.key, w.value, w.from, w.include_path
        );
        if origin.more_replaced > 0 {
            let _ = writeln!(
                out,
                "    {stem}   … {} weaker value(s) before these not shown",
                origin.more_replaced
            );
        }
        for r in &origin.replaced {
            let _ = writeln!(
                out,
                "    {stem}   replaced {} from {} (at {})",
                r.value, r.from, r.include_path
            );
        }
    }
}

/// One entry of `agents skill tools --format json`, serialized straight from
/// the entry: no `Value` tree in between, since a large closure's include
/// paths are hundreds of thousands of strings. Keys in this order; `source`,
/// `description` and `input_schema` are `null` when absent, the fields after
/// them are left out. `source` is known from the item when the tool is not
/// ([`ResolvedToolEntry::source`]: an MCP server not queried yet is `mcp`);
/// whether the entry can be given to a model as a function is `callable`,
/// and why not `not_callable`.
#[derive(serde::Serialize)]
pub struct EntryJson<'a> {
    name: &'a str,
    export_name: String,
    source: Option<agents_core::ToolSource>,
    callable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    not_callable: Option<String>,
    source_skill: &'a SkillName,
    is_inline: bool,
    kind: agents_core::ItemKind,
    overrides: &'a agents_core::ValueMap,
    include_path: &'a agents_core::IncludePath,
    description: Option<&'a str>,
    input_schema: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_schema: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    source_metadata: Option<&'a agents_core::ValueMap>,
    #[serde(skip_serializing_if = "Option::is_none")]
    read_only: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    writes: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    checkpointable: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    side_effects: Option<bool>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    not_enforced: Vec<agents_tools::NotEnforced>,
    #[serde(skip_serializing_if = "Option::is_none")]
    explain: Option<ExplainJson<'a>>,
}

/// One entry of `agents skill tools --format json`.
pub fn entry_json(entry: &ResolvedToolEntry, export_name: String) -> EntryJson<'_> {
    let tool = entry.tool.as_ref();
    let not_callable = not_callable(entry);
    EntryJson {
        name: &entry.name,
        export_name,
        source: entry.source(),
        callable: not_callable.is_none(),
        not_callable,
        source_skill: &entry.source_skill,
        is_inline: entry.is_inline,
        kind: entry.kind,
        overrides: &entry.overrides,
        include_path: &entry.include_path,
        description: tool.map(|t| t.description.as_str()),
        input_schema: tool.and_then(|t| t.input_schema.as_ref()),
        output_schema: tool.and_then(|t| t.output_schema.as_ref()),
        source_metadata: tool
            .map(|t| &t.source_metadata)
            .filter(|metadata| !metadata.is_empty()),
        read_only: tool.and_then(|t| t.read_only),
        writes: tool.and_then(|t| t.writes),
        checkpointable: tool.and_then(|t| t.checkpointable),
        side_effects: tool.and_then(|t| t.side_effects),
        not_enforced: agents_tools::CallPolicy::from_overrides(&entry.overrides).not_enforced,
        explain: None,
    }
}

/// A note on an entry of a tool set, as a warning line (names from
/// anyone's rows: escaped and cut).
fn note_text(note: &EntryNote) -> String {
    let shown = |name: &str| {
        agents_core::text::shorten(name, agents_core::text::MAX_ECHO_BYTES).into_owned()
    };
    match note {
        EntryNote::NotServed { entry, reason } => format!(
            "`{}` is not served by `agents mcp serve`: {reason}",
            shown(entry)
        ),
        EntryNote::NotEnforced { entry, key } => format!("`{}`: {key}", shown(entry)),
        EntryNote::ReadOnlyButWrites { entry } => format!(
            "`{}` is overridden `read_only: true` but writes: every call of it is refused",
            shown(entry)
        ),
    }
}

/// Why `entry` cannot be given to a model as a function, if it cannot: its
/// MCP server has not been queried (or does not list it), its tool is not
/// registered, or it is an Agent Skill (instructions the model reads, as
/// `skill prompt` lists them, not a function anything runs).
fn not_callable(entry: &ResolvedToolEntry) -> Option<String> {
    if let Some(tool) = &entry.tool {
        return match tool.source {
            agents_core::ToolSource::AgentSkills => Some(
                "an Agent Skill is instructions for the model, not a function: \
                 `agents skill prompt` lists it"
                    .to_owned(),
            ),
            agents_core::ToolSource::Custom => match tool.run() {
                None => Some("a catalogue entry: its definition has no `run`".to_owned()),
                Some(Err(err)) => Some(err),
                Some(Ok(_)) => None,
            },
            _ => None,
        };
    }
    Some(match entry.source() {
        Some(agents_core::ToolSource::Mcp) => match mcp_server_of(&entry.name) {
            Some(server) => format!(
                "not fetched yet: mcp server `{server}` has no cached tool list listing it (`{}`)",
                crate::hints::refresh(&server)
            ),
            None => "not fetched yet: its mcp server has no cached tool list listing it".into(),
        },
        Some(agents_core::ToolSource::AgentSkills) => {
            "no discovered Agent Skill folder matches it (`agents skill discover`)".into()
        }
        _ => "not registered".into(),
    })
}

/// The server of an entry named `mcp:{server}/{tool}`, escaped and short.
fn mcp_server_of(name: &str) -> Option<String> {
    let (server, _) = name.strip_prefix("mcp:")?.split_once('/')?;
    Some(agents_core::text::shorten(server, agents_core::text::MAX_ECHO_BYTES).into_owned())
}

/// `--locked` and `skill diff` read at most `limit` bytes: a lock of `len`
/// bytes they would refuse is not written.
fn readable_lock(len: usize, limit: u64) -> Result<(), Failure> {
    if len as u64 <= limit {
        return Ok(());
    }
    Err(Failure::new(
        "lock_too_large",
        format!(
            "the lock would be {} MiB, more than the {} MiB `skill tools --locked` and `skill diff` read; nothing was written",
            len.div_ceil(1 << 20),
            limit / 1024 / 1024
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_its_readers_would_refuse_is_not_written() {
        assert!(readable_lock(256 << 20, 256 << 20).is_ok());
        let err = readable_lock((256 << 20) + 1, 256 << 20).unwrap_err();
        assert_eq!(err.kind, "lock_too_large");
        assert!(
            err.message.contains("257 MiB, more than the 256 MiB"),
            "{}",
            err.message
        );
    }
}
