//! Writing skills: add, update and apply (create-or-update), each checked
//! against the closure of what it writes before it lands.
//!
//! The check is cheap: only the written skills, their include closure and
//! the catalogue entries that closure names are read. Its findings are
//! warnings (a skill may be added before the skills it includes), unless the
//! caller asks for `strict`, where any finding refuses the whole write.

use std::collections::{HashMap, HashSet};

use agents_core::{
    ResolveError, ResolveWarning, Site, Skill, SkillItem, SkillName, SkillResolver, ToolSource,
};
use agents_store::StoreError;
use indexmap::IndexSet;
use serde::Serialize;

use crate::error::ServiceError;
use crate::service::{SkillRegistryService, validate_all};

/// How a write treats skills that already exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    /// Every skill must be new.
    Add,
    /// Every skill must exist; a concurrent change in between is a conflict.
    Update,
    /// New skills are added, changed ones replaced, identical ones left alone.
    Apply,
}

/// What a write did to one skill (not [`agents_core::ListingChange`], a change
/// to a cached MCP tool).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteEffect {
    /// The skill did not exist and was added.
    Created,
    /// The skill existed with another definition and was replaced.
    Updated,
    /// The skill existed with this very definition; nothing was written.
    Unchanged,
}

impl WriteEffect {
    /// The word shown to people.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Created => "created",
            Self::Updated => "updated",
            Self::Unchanged => "unchanged",
        }
    }
}

/// The outcome of [`SkillRegistryService::write_skills`].
#[derive(Debug, Clone, PartialEq)]
pub struct WriteOutcome {
    /// Each input skill, in input order, with what happened to it.
    pub effects: Vec<(SkillName, WriteEffect)>,
    /// Problems found in the closure of the written skills (unknown tools,
    /// missing includes, cycles, ...), every one.
    pub warnings: Vec<WriteFinding>,
}

impl WriteOutcome {
    /// [`Self::warnings`] as a terminal shows them (see [`shown_findings`]).
    pub fn shown_warnings(&self) -> (&[WriteFinding], Option<String>) {
        shown_findings(&self.warnings)
    }
}

/// One problem the write-time check found, typed up to the caller: which
/// skill's definition holds it and which part of it ([`Site`]), so a caller
/// that has the file can point at the line ([`Site::field_in`] gives the
/// field path); the service reads no files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteFinding {
    /// The skill whose definition holds the problem, when one does (a
    /// cycle: its first skill).
    pub skill: Option<SkillName>,
    /// The part of that definition the problem is about, when known.
    pub site: Option<Site>,
    /// A stable machine-readable kind (`unknown_tool`, `missing_include`,
    /// `cycle`, `unmatched_override`, `unknown_mcp_server`, ...).
    pub kind: &'static str,
    /// The problem on one line, as it has always been shown: it names the
    /// skill, and every name in it is shortened.
    pub message: String,
    /// The registered names likely meant where the problem is a name that
    /// names nothing (an unknown tool, a missing include, an allow-listed
    /// tool the server's cached list lacks); the caller shows them.
    pub did_you_mean: Vec<String>,
}

impl WriteFinding {
    /// The [`Self::kind`] of a secret written out in an MCP server's
    /// definition.
    pub const LITERAL_SECRET: &'static str = "literal_secret";

    /// Whether the field it points at holds a secret: a line quoted for it
    /// must not show the value.
    pub fn quotes_a_secret(&self) -> bool {
        self.kind == Self::LITERAL_SECRET
    }

    fn of_error(error: &ResolveError) -> Self {
        let (skill, site) = split(error.site());
        Self {
            skill: skill.or_else(|| located_error(error).cloned()),
            site,
            kind: error.kind(),
            message: error.to_string(),
            did_you_mean: Vec::new(),
        }
    }

    fn of_warning(warning: &ResolveWarning, message: String) -> Self {
        let (skill, site) = split(warning.site());
        Self {
            skill: skill.or_else(|| Some(located_warning(warning).clone())),
            site,
            kind: warning.kind(),
            message,
            did_you_mean: Vec::new(),
        }
    }
}

impl std::fmt::Display for WriteFinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

fn split(site: Option<(&SkillName, Site)>) -> (Option<SkillName>, Option<Site>) {
    match site {
        Some((skill, site)) => (Some(skill.clone()), Some(site)),
        None => (None, None),
    }
}

/// What [`SkillRegistryService::import_with`] did to one tool row of an
/// export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolChange {
    /// No row of that name was stored; the file's was written.
    Created,
    /// Another definition was stored and the file's replaced it (`--replace`).
    Updated,
    /// The stored row is the file's; nothing was written.
    Unchanged,
    /// An MCP or Agent Skills cache row the registry has its own of (the
    /// name, or the server definition or discovery scope it was fetched
    /// for): the stored cache was kept, the file's row not written.
    Kept,
}

impl ToolChange {
    /// Whether the row was written.
    pub fn written(self) -> bool {
        matches!(self, Self::Created | Self::Updated)
    }
}

/// The outcome of [`SkillRegistryService::import_with`].
#[derive(Debug, Clone, PartialEq)]
pub struct ImportOutcome {
    /// Each skill of the file, in file order, with what happened to it.
    pub skills: Vec<(SkillName, WriteEffect)>,
    /// Each tool row of the file but the builtins' (skipped: builtins live
    /// in code), in file order, with what happened to it.
    pub tools: Vec<(String, ToolChange)>,
}

impl ImportOutcome {
    /// How many tool rows were written.
    pub fn tools_written(&self) -> usize {
        self.tools
            .iter()
            .filter(|(_, change)| change.written())
            .count()
    }
}

/// Same definition, whatever the timestamps.
fn same_definition(stored: &Skill, new: &Skill) -> bool {
    let strip = |skill: &Skill| Skill {
        created_at: None,
        updated_at: None,
        ..skill.clone()
    };
    strip(stored) == strip(new)
}

pub use agents_core::text::did_you_mean;

impl SkillRegistryService {
    /// Checks `skills` against the closure they would have once written,
    /// then writes them in one transaction under `mode`. With `strict` any
    /// warning is an error ([`ServiceError::Strict`]) and nothing is
    /// written.
    pub async fn write_skills(
        &self,
        skills: &[Skill],
        mode: WriteMode,
        strict: bool,
    ) -> Result<WriteOutcome, ServiceError> {
        validate_all(skills)?;
        let warnings = self.write_warnings(skills).await?;
        self.write_valid(
            skills,
            FileCheck {
                warnings,
                ..FileCheck::default()
            },
            mode,
            strict,
        )
        .await
    }

    /// The check of one file of several a command writes, on its own:
    /// `batch` is every skill of the command's files (this file's too), and
    /// the check takes those of them that `skills` reach as written (a file
    /// may include a skill a later file defines), this file's own
    /// definition winning a name both hold.
    async fn check_among(
        &self,
        skills: &[Skill],
        batch: &[Skill],
    ) -> Result<Vec<WriteFinding>, ServiceError> {
        let pending = reached_in(skills, batch);
        if pending.is_empty() {
            return self.write_warnings(skills).await;
        }
        // Batch skills first: a skill of this file wins a name both hold.
        let combined: Vec<Skill> = pending.into_iter().chain(skills).cloned().collect();
        let own: HashSet<&SkillName> = skills.iter().map(|skill| &skill.name).collect();
        self.warnings_for(&combined, |name| own.contains(name))
            .await
    }

    /// Writes one file's `skills` under `mode`, found as `check` says by
    /// [`Self::check_files`]: with `strict` any problem of the file (or of a
    /// skill it includes, listed for another file) refuses it.
    pub async fn write_skills_checked(
        &self,
        skills: &[Skill],
        check: FileCheck,
        mode: WriteMode,
        strict: bool,
    ) -> Result<WriteOutcome, ServiceError> {
        validate_all(skills)?;
        self.write_valid(skills, check, mode, strict).await
    }

    /// [`Self::write_skills_checked`] of skills already validated.
    async fn write_valid(
        &self,
        skills: &[Skill],
        check: FileCheck,
        mode: WriteMode,
        strict: bool,
    ) -> Result<WriteOutcome, ServiceError> {
        let FileCheck {
            mut warnings,
            reaches,
            ..
        } = check;
        if strict {
            if warnings.is_empty()
                && let Some((skill, included)) = reaches
            {
                warnings.push(WriteFinding {
                    message: format!(
                        "`{skill}` includes `{included}`, which has problems (listed for the file that defines it, or for the first file that reaches it)"
                    ),
                    skill: Some(skill),
                    site: Some(Site::Include(included)),
                    kind: "included_problems",
                    did_you_mean: Vec::new(),
                });
            }
            if !warnings.is_empty() {
                return Err(ServiceError::Strict(warnings));
            }
        }
        if mode == WriteMode::Add {
            let changes = self
                .add_as_given(&[], skills, crate::service::Written::Directly)
                .await?;
            return Ok(WriteOutcome {
                effects: changes,
                warnings,
            });
        }
        // `apply` says what the registry should hold: another writer that
        // created or changed one of these skills in between (two `skill
        // apply` of one file at once) is read again and the write made
        // against what it left. `update`'s conflict stays an error: it is
        // the optimistic-concurrency check.
        let changes = if mode == WriteMode::Apply {
            self.apply_retrying(&[], skills, crate::service::Written::Directly)
                .await?
        } else {
            self.write_against_stored(&[], skills, mode, crate::service::Written::Directly)
                .await?
        };
        Ok(WriteOutcome {
            effects: changes,
            warnings,
        })
    }

    /// One read of the stored versions of `skills`, and the write of what
    /// differs from them under `mode` (not `Add`), in one transaction.
    async fn write_against_stored(
        &self,
        tools: &[agents_core::ToolSpec],
        skills: &[Skill],
        mode: WriteMode,
        how: crate::service::Written,
    ) -> Result<Vec<(SkillName, WriteEffect)>, ServiceError> {
        let mut add = Vec::new();
        let mut update = Vec::new();
        let mut changes = Vec::with_capacity(skills.len());
        // The stored versions in one read (the closure query: a bounded
        // number of statements), not one query per skill: 40,000 skills
        // had taken 40,000 round trips to PostgreSQL.
        let names: Vec<SkillName> = skills.iter().map(|skill| skill.name.clone()).collect();
        let mut stored: std::collections::HashMap<SkillName, Skill> = self
            .store()
            .load_closure(&names)
            .await?
            .into_iter()
            .map(|skill| (skill.name.clone(), skill))
            .collect();
        for skill in skills {
            let change = match stored.remove(&skill.name) {
                None if mode == WriteMode::Update => {
                    return Err(StoreError::SkillNotFound(skill.name.clone()).into());
                }
                None => {
                    add.push(skill.clone());
                    WriteEffect::Created
                }
                Some(stored) if mode == WriteMode::Apply && same_definition(&stored, skill) => {
                    WriteEffect::Unchanged
                }
                Some(stored) => {
                    // The revision read here makes a concurrent writer's
                    // change a conflict, not a silent loss.
                    update.push(Skill {
                        updated_at: stored.updated_at,
                        ..skill.clone()
                    });
                    WriteEffect::Updated
                }
            };
            changes.push((skill.name.clone(), change));
        }
        self.write_recorded_how(tools, &add, &update, how).await?;
        Ok(changes)
    }

    /// Adds `skills`, every one new, as given: not copied first, as sorting
    /// them into added and updated ones would (a file of many skills, an
    /// export of hundreds of megabytes, would be held twice).
    async fn add_as_given(
        &self,
        tools: &[agents_core::ToolSpec],
        skills: &[Skill],
        how: crate::service::Written,
    ) -> Result<Vec<(SkillName, WriteEffect)>, ServiceError> {
        self.write_recorded_how(tools, skills, &[], how).await?;
        Ok(skills
            .iter()
            .map(|skill| (skill.name.clone(), WriteEffect::Created))
            .collect())
    }

    /// Loads an export: catalogue tools and skills, in one transaction (all
    /// or nothing).
    ///
    /// Skills: without `replace` a registered skill name fails the import;
    /// with it, registered skills are replaced (identical ones are left
    /// alone). Tools are checked as `tool add` checks them first (see
    /// [`Self::check_import_tool`]; a `source: builtin` row naming a builtin
    /// is skipped, since builtins live in code). Then a custom tool already
    /// stored with another definition fails the import without `replace`
    /// ([`StoreError::DuplicateTool`]) and is replaced with it; one stored
    /// as the file has it is left alone. MCP and Agent Skills rows are
    /// caches of their sources (`mcp refresh` and `skill discover` rebuild
    /// them): without `replace` the registry's own cache wins, so a file's
    /// row whose name or group (server definition, discovery scope) is
    /// stored already is kept out (never a mix of two fetches of one
    /// server); with `replace` the file's rows replace same-named ones.
    pub async fn import_with(
        &self,
        skills: &[Skill],
        tools: &[agents_core::ToolSpec],
        replace: bool,
    ) -> Result<ImportOutcome, ServiceError> {
        validate_all(skills)?;
        let mut rows: Vec<&agents_core::ToolSpec> = Vec::with_capacity(tools.len());
        for tool in tools {
            if self.check_import_tool(tool)? {
                rows.push(tool);
            }
        }
        let (written, tool_changes) = self.sort_import_tools(&rows, replace).await?;
        self.forget_hint_names();
        let skills = if replace {
            self.apply_retrying(&written, skills, crate::service::Written::Imported)
                .await?
        } else {
            self.add_as_given(&written, skills, crate::service::Written::Imported)
                .await?
        };
        Ok(ImportOutcome {
            skills,
            tools: tool_changes,
        })
    }

    /// Whether an export's tool row is one to import (`false`: a builtin's
    /// row, skipped because builtins live in code), or why the import
    /// refuses it: a `source: builtin` row that names no builtin, or a row
    /// `tool add` would refuse by its name (a builtin's, or one in a
    /// namespace another source owns). `db export` asks it of every row it
    /// writes, to warn of what its import would refuse.
    pub fn check_import_tool(&self, tool: &agents_core::ToolSpec) -> Result<bool, ServiceError> {
        let builtin = self.builtins().get(&tool.name).is_some();
        match tool.source {
            ToolSource::Builtin if builtin => Ok(false),
            ToolSource::Builtin => Err(ServiceError::NotBuiltin(tool.name.clone())),
            // Stored, it would hide behind the builtin and no command could
            // remove it (`tool remove` of the name removes nothing stored).
            _ if builtin => Err(ServiceError::BuiltinTool(tool.name.clone())),
            // The export's MCP and Agent Skills rows carry their sources'
            // names; a custom tool may not take one (as `tool add` refuses it).
            ToolSource::Custom => crate::service::check_custom_name(&tool.name).map(|()| true),
            // A cache row is named in its own source's namespace: an MCP row
            // called `agent_skills/x` would pass for a discovered skill.
            ToolSource::Mcp | ToolSource::AgentSkills => {
                let prefix = if tool.source == ToolSource::Mcp {
                    "mcp:"
                } else {
                    "agent_skills/"
                };
                // Stored cache rows carry their scope or digest
                // (`agent_skills@SCOPE/x`, `mcp:server@DIGEST/x`).
                let stem = prefix.trim_end_matches('/');
                let named = tool.name.starts_with(prefix)
                    || tool
                        .name
                        .strip_prefix(stem)
                        .is_some_and(|rest| rest.starts_with('@'));
                if named {
                    Ok(true)
                } else {
                    Err(ServiceError::MisnamedCacheRow {
                        name: tool.name.clone(),
                        from: tool.source,
                        prefix,
                    })
                }
            }
        }
    }

    /// The rows of `rows` an import writes, and what happens to each row,
    /// against the stored catalogue (see [`Self::import_with`]).
    async fn sort_import_tools(
        &self,
        rows: &[&agents_core::ToolSpec],
        replace: bool,
    ) -> Result<(Vec<agents_core::ToolSpec>, Vec<(String, ToolChange)>), ServiceError> {
        if rows.is_empty() {
            return Ok((Vec::new(), Vec::new()));
        }
        let names: Vec<String> = rows.iter().map(|tool| tool.name.clone()).collect();
        let stored: std::collections::HashMap<String, agents_core::ToolSpec> = self
            .store()
            .get_tools(&names)
            .await?
            .into_iter()
            .map(|tool| (tool.name.clone(), tool))
            .collect();
        // The cache groups the registry holds rows of (read only when the
        // file has cache rows a stored group would keep out).
        let mut groups: HashSet<agents_store::ToolGroup> = HashSet::new();
        if !replace {
            for source in [ToolSource::Mcp, ToolSource::AgentSkills] {
                if rows.iter().any(|tool| tool.source == source) {
                    groups.extend(
                        self.store()
                            .list_tools(Some(source))
                            .await?
                            .iter()
                            .map(agents_store::ToolGroup::of),
                    );
                }
            }
        }
        let mut written = Vec::new();
        let mut changes = Vec::with_capacity(rows.len());
        for tool in rows {
            let cache = matches!(tool.source, ToolSource::Mcp | ToolSource::AgentSkills);
            let change = match stored.get(&tool.name) {
                Some(old) if old == *tool => ToolChange::Unchanged,
                Some(_) if replace => ToolChange::Updated,
                Some(_) if cache => ToolChange::Kept,
                Some(_) => return Err(StoreError::DuplicateTool(tool.name.clone()).into()),
                None if cache && groups.contains(&agents_store::ToolGroup::of(tool)) => {
                    ToolChange::Kept
                }
                None => ToolChange::Created,
            };
            if change.written() {
                written.push((*tool).clone());
            }
            changes.push((tool.name.clone(), change));
        }
        Ok((written, changes))
    }

    /// [`Self::write_against_stored`] in `Apply` mode, read and written
    /// again while another writer got in between (at most
    /// [`APPLY_ATTEMPTS`] times): what the registry should hold is written
    /// against what that writer left. The writer may have added a skill this
    /// read as missing, changed one (a conflict), or removed one this read as
    /// stored: `apply` is create-or-update, so that one is created.
    async fn apply_retrying(
        &self,
        tools: &[agents_core::ToolSpec],
        skills: &[Skill],
        how: crate::service::Written,
    ) -> Result<Vec<(SkillName, WriteEffect)>, ServiceError> {
        let mut attempt = 1;
        loop {
            match self
                .write_against_stored(tools, skills, WriteMode::Apply, how)
                .await
            {
                Err(ServiceError::Store(
                    StoreError::DuplicateSkill(_)
                    | StoreError::Conflict { .. }
                    | StoreError::SkillNotFound(_),
                )) if attempt < APPLY_ATTEMPTS => {
                    // Writers that keep meeting one another (several
                    // applies of the names another keeps removing) are
                    // spread apart, each by its own random wait.
                    tokio::time::sleep(apply_backoff(attempt)).await;
                    attempt += 1;
                }
                outcome => return outcome,
            }
        }
    }

    /// Problems in the closure of `written` as it will be once written:
    /// errors that stop a resolution (missing includes, cycles, forbidden
    /// overrides), unknown tools (with the closest catalogue name), overrides
    /// that match nothing, agent sources that match no folder and MCP
    /// references to unconfigured servers. Cache state (an MCP server not
    /// refreshed yet) is not a problem of the definition and is left out.
    pub async fn write_warnings(
        &self,
        written: &[Skill],
    ) -> Result<Vec<WriteFinding>, ServiceError> {
        self.warnings_for(written, |_| true).await
    }

    /// [`Self::write_warnings`] of the skills of `written` that `checked`
    /// picks, the others taken as written too (skills of a later file).
    async fn warnings_for(
        &self,
        written: &[Skill],
        checked: impl Fn(&SkillName) -> bool,
    ) -> Result<Vec<WriteFinding>, ServiceError> {
        let names: HashSet<&SkillName> = written.iter().map(|skill| &skill.name).collect();
        let roots = included_elsewhere(written, |name| names.contains(name));
        let (skills, catalog) = self.load_with(&roots, written).await?;
        let resolver = SkillResolver::new(&skills, &catalog);
        // One walk over all written skills: diagnosing each alone would cost
        // the sum of their closures (quadratic when they include one another).
        let (errors, warnings) = resolver.diagnose_all(
            written
                .iter()
                .map(|skill| &skill.name)
                .filter(|name| checked(name)),
        );
        let references = self.check_mcp_references(skills.skills());
        self.lines(errors, warnings, references, written).await
    }

    /// Problems as a write reports them: errors first, then warnings
    /// (cache state left out), references to unconfigured MCP servers, and
    /// unknown tools with the closest catalogue name; a problem shown in
    /// the same words as one before it is left out.
    async fn lines(
        &self,
        errors: Vec<ResolveError>,
        warnings: Vec<ResolveWarning>,
        references: Vec<ServiceError>,
        batch: &[Skill],
    ) -> Result<Vec<WriteFinding>, ServiceError> {
        let mut lines = Findings::default();
        let mut unknown: IndexSet<(SkillName, String)> = IndexSet::new();
        // The walk follows each include once, so it meets each cycle once
        // (by the one back edge that closes it).
        // Registered names and those the command writes, read once and
        // only for a missing include.
        let mut skill_names: Option<Vec<String>> = None;
        for error in &errors {
            let mut finding = WriteFinding::of_error(error);
            if let ResolveError::MissingInclude { include, .. } = error
                && lines.len() < MAX_WRITE_WARNINGS
            {
                if skill_names.is_none() {
                    let mut names = self.skill_names().await;
                    names.extend(batch.iter().map(|skill| skill.name.to_string()));
                    skill_names = Some(names);
                }
                finding.did_you_mean = crate::service::closest_skills(
                    include.as_str(),
                    skill_names.as_deref().unwrap_or_default(),
                );
            }
            lines.push(finding);
        }
        for warning in warnings {
            match warning {
                ResolveWarning::UnknownTool { skill, tool } => {
                    unknown.insert((skill, tool));
                }
                ResolveWarning::UnmatchedOverride { .. }
                | ResolveWarning::MistypedOverride { .. }
                | ResolveWarning::UnknownAgentSkill { .. }
                | ResolveWarning::DuplicateAgentSkill { .. } => {
                    lines.push(WriteFinding::of_warning(&warning, warning.to_string()));
                }
                // Cached: the server's list says which tools it offers.
                ResolveWarning::McpToolMissing {
                    ref did_you_mean, ..
                } => {
                    let mut finding = WriteFinding::of_warning(&warning, warning.to_string());
                    finding.did_you_mean = did_you_mean.iter().cloned().collect();
                    lines.push(finding);
                }
                // Not a problem of the definition: nothing fetched yet.
                ResolveWarning::McpNotCached { .. } => {}
            }
        }
        for error in references {
            let finding = match &error {
                ServiceError::UnknownMcpServer { skill, server } => WriteFinding {
                    skill: SkillName::new(skill).ok(),
                    site: Some(Site::McpSource(server.clone())),
                    kind: error.kind(),
                    message: error.to_string(),
                    did_you_mean: Vec::new(),
                },
                other => WriteFinding {
                    skill: None,
                    site: None,
                    kind: other.kind(),
                    message: other.to_string(),
                    did_you_mean: other.did_you_mean().to_vec(),
                },
            };
            lines.push(finding);
        }
        if !unknown.is_empty() {
            let candidates = self.hint_names().await?;
            for (skill, tool) in unknown {
                // A hint costs an edit distance to every catalogue name; only
                // lines that can be shown get one (a file naming thousands of
                // unknown tools spent most of its `skill add` here), and a
                // command a few hundred in all.
                let close = if lines.len() < MAX_WRITE_WARNINGS && self.take_hint() {
                    did_you_mean(&tool, &candidates).map(str::to_owned)
                } else {
                    None
                };
                let warning = ResolveWarning::UnknownTool { skill, tool };
                let mut finding = WriteFinding::of_warning(&warning, warning.to_string());
                finding.did_you_mean = close.into_iter().collect();
                lines.push(finding);
            }
        }
        Ok(lines.found)
    }
}

/// Findings in order, each message once.
#[derive(Default)]
struct Findings {
    found: Vec<WriteFinding>,
    seen: HashSet<String>,
}

impl Findings {
    fn push(&mut self, finding: WriteFinding) {
        if self.seen.insert(finding.message.clone()) {
            self.found.push(finding);
        }
    }

    fn len(&self) -> usize {
        self.found.len()
    }
}

/// What the write-time check found for one file of a command
/// ([`SkillRegistryService::check_files`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileCheck {
    /// The file's problems: those of its own skills, and those of stored
    /// skills it is the first file of the command to reach.
    pub warnings: Vec<WriteFinding>,
    /// The findings of [`Self::warnings`] about stored skills this file is
    /// the first of the command to reach: shown even when the file's write
    /// fails, since no later file lists them.
    pub from_stored: Vec<WriteFinding>,
    /// A skill of the file and a skill it includes whose closure has
    /// problems listed for another file (`--strict` refuses the file then).
    pub reaches: Option<(SkillName, SkillName)>,
}

/// One warning per secret `skill` writes out in an MCP server's definition,
/// with what to write instead.
fn literal_secret_warnings(skill: &Skill) -> impl Iterator<Item = WriteFinding> + '_ {
    skill
        .items
        .iter()
        .filter_map(|item| match item {
            agents_core::SkillItem::McpSource(source) => Some(source),
            _ => None,
        })
        .flat_map(move |source| {
            agents_core::redact::literal_secret_fields(source)
                .into_iter()
                .map(move |field| {
                    let instead = if field.starts_with("env.") || field.starts_with("headers.") {
                        "write a `${VAR}` reference there and set VAR where the server runs"
                    } else {
                        "pass it through `env` or `headers` as a `${VAR}` reference (agents expands those only)"
                    };
                    WriteFinding {
                        message: format!(
                            "Skill '{}': MCP server '{}': `{field}` holds a secret written out, which everyone who reads the registry sees (`{}` prints it); {instead}",
                            skill.name,
                            agents_core::text::shorten(&source.server, agents_core::text::MAX_ECHO_BYTES),
                            agents_core::Hint::ShowSecrets,
                        ),
                        skill: Some(skill.name.clone()),
                        site: Some(Site::McpSourceField {
                            server: source.server.clone(),
                            field,
                        }),
                        kind: WriteFinding::LITERAL_SECRET,
                        did_you_mean: Vec::new(),
                    }
                })
        })
}

impl SkillRegistryService {
    /// Checks every file of one command at once: `all` is every skill of the
    /// command, `files` each file's part of it (in order), and every skill
    /// is checked with the others taken as written (a file may include a
    /// skill a later file defines).
    ///
    /// One walk over the closure of all of them, not one per file: checking
    /// each file against its own closure costs the sum of their sizes,
    /// quadratic when the files include one another in a chain (3,200 such
    /// files took 5.3 s). So each problem is listed once, for the file that
    /// defines the skill it is in (a stored skill's, for the first file that
    /// reaches it), and a file whose skills only include a skill with
    /// problems learns it from [`FileCheck::reaches`]. When two files define
    /// one name, each file is checked on its own, its own definition
    /// winning, as a lone write would be.
    ///
    /// Each file's skills that write a secret out in an MCP server's
    /// definition ([`agents_core::redact::literal_secret_fields`]) get a
    /// warning too: stored, the secret is everyone's who reads the registry.
    pub async fn check_files(
        &self,
        all: &[Skill],
        files: &[std::ops::Range<usize>],
    ) -> Vec<Result<FileCheck, ServiceError>> {
        let mut checks = self.check_resolution(all, files).await;
        for (check, range) in checks.iter_mut().zip(files) {
            if let Ok(check) = check {
                for skill in all.get(range.clone()).unwrap_or_default() {
                    check.warnings.extend(literal_secret_warnings(skill));
                }
            }
        }
        checks
    }

    /// [`Self::check_files`] of how the skills resolve.
    async fn check_resolution(
        &self,
        all: &[Skill],
        files: &[std::ops::Range<usize>],
    ) -> Vec<Result<FileCheck, ServiceError>> {
        let mut file_of: HashMap<&SkillName, usize> = HashMap::with_capacity(all.len());
        let mut repeated = false;
        for (index, range) in files.iter().enumerate() {
            for skill in all.get(range.clone()).unwrap_or_default() {
                if file_of
                    .insert(&skill.name, index)
                    .is_some_and(|earlier| earlier != index)
                {
                    repeated = true;
                }
            }
        }
        if !repeated {
            // A stored row the closure reaches that does not decode fails
            // the one walk: then each file is checked on its own, and only
            // the files that reach the row fail ("one bad row stops nobody
            // else").
            if let Ok(checks) = self.check_together(all, files, &file_of).await {
                return checks.into_iter().map(Ok).collect();
            }
        }
        let mut checks = Vec::with_capacity(files.len());
        for range in files {
            let skills = all.get(range.clone()).unwrap_or_default();
            checks.push(
                self.check_among(skills, all)
                    .await
                    .map(|warnings| FileCheck {
                        warnings,
                        ..FileCheck::default()
                    }),
            );
        }
        checks
    }

    /// [`Self::check_files`] in one walk, every name defined once.
    async fn check_together(
        &self,
        all: &[Skill],
        files: &[std::ops::Range<usize>],
        file_of: &HashMap<&SkillName, usize>,
    ) -> Result<Vec<FileCheck>, ServiceError> {
        let roots = included_elsewhere(all, |name| file_of.contains_key(name));
        let (skills, catalog) = self.load_with(&roots, all).await?;
        let resolver = SkillResolver::new(&skills, &catalog);
        let (errors, warnings) = resolver.diagnose_all(all.iter().map(|skill| &skill.name));
        let graph = Graph { skills: &skills };
        // A stored skill's problems go to the first file that reaches it.
        let first_reach = graph.first_reach(files.iter().map(|range| {
            all.get(range.clone())
                .unwrap_or_default()
                .iter()
                .map(|skill| &skill.name)
        }));
        let file_for = |skill: &SkillName| -> usize {
            file_of
                .get(skill)
                .or_else(|| first_reach.get(skill))
                .copied()
                .unwrap_or(0)
        };
        // Each file's problems: of its own skills, and of stored ones.
        let mut found: Vec<[Found; 2]> = std::iter::repeat_with(Default::default)
            .take(files.len())
            .collect();
        let place =
            |skill: &SkillName| (file_for(skill), usize::from(!file_of.contains_key(skill)));
        let mut troubled: HashSet<SkillName> = HashSet::new();
        for error in errors {
            let Some(at) = located_error(&error) else {
                continue;
            };
            let at = at.clone();
            if let Some(found) = slot(&mut found, place(&at)) {
                found.errors.push(error);
            }
            troubled.insert(at);
        }
        for warning in warnings {
            if matches!(warning, ResolveWarning::McpNotCached { .. }) {
                continue;
            }
            let at = located_warning(&warning).clone();
            // What a server's cached list lacks is said of the skill that
            // allow-lists it, not of every skill that includes it.
            let of_cache = matches!(warning, ResolveWarning::McpToolMissing { .. });
            if let Some(found) = slot(&mut found, place(&at)) {
                found.warnings.push(warning);
            }
            if !of_cache {
                troubled.insert(at);
            }
        }
        for error in self.check_mcp_references(skills.skills()) {
            if let ServiceError::UnknownMcpServer { skill, .. } = &error
                && let Ok(name) = SkillName::new(skill)
            {
                if let Some(found) = slot(&mut found, place(&name)) {
                    found.references.push(error);
                }
                troubled.insert(name);
            }
        }
        let bad = graph.reaching(all.iter().map(|skill| &skill.name), &troubled);
        let mut checks = Vec::with_capacity(files.len());
        for (range, [own, stored]) in files.iter().zip(found) {
            let mut warnings = self
                .lines(own.errors, own.warnings, own.references, all)
                .await?;
            let from_stored = self
                .lines(stored.errors, stored.warnings, stored.references, all)
                .await?;
            warnings.extend(from_stored.iter().cloned());
            let reaches = all
                .get(range.clone())
                .unwrap_or_default()
                .iter()
                .find_map(|skill| {
                    graph
                        .includes(&skill.name)
                        .find(|included| bad.contains(included))
                        .map(|included| (skill.name.clone(), included.clone()))
                });
            checks.push(FileCheck {
                warnings,
                from_stored,
                reaches,
            });
        }
        Ok(checks)
    }
}

/// The skills `written` include that are not `written` themselves (whose
/// stored closure a check reads), sorted, each once.
fn included_elsewhere(
    written: &[Skill],
    is_written: impl Fn(&SkillName) -> bool,
) -> Vec<SkillName> {
    let mut roots: Vec<SkillName> = written
        .iter()
        .flat_map(Skill::includes)
        .filter(|include| !is_written(&include.skill))
        .map(|include| include.skill.clone())
        .collect();
    roots.sort();
    roots.dedup();
    roots
}

/// The problems of file `file`, of its own skills (`stored` 0) or of stored
/// ones (1).
fn slot(found: &mut [[Found; 2]], (file, stored): (usize, usize)) -> Option<&mut Found> {
    found.get_mut(file)?.get_mut(stored)
}

/// One file's problems, as the check found them.
#[derive(Debug, Default)]
struct Found {
    errors: Vec<ResolveError>,
    warnings: Vec<ResolveWarning>,
    references: Vec<ServiceError>,
}

/// The skill a problem is in (a cycle: its first member).
fn located_error(error: &ResolveError) -> Option<&SkillName> {
    match error {
        ResolveError::SkillNotFound { name } => Some(name),
        ResolveError::MissingInclude { skill, .. } | ResolveError::NonOverridable { skill, .. } => {
            Some(skill)
        }
        ResolveError::Cycle { cycle, .. } => cycle.first(),
    }
}

fn located_warning(warning: &ResolveWarning) -> &SkillName {
    match warning {
        ResolveWarning::UnknownTool { skill, .. }
        | ResolveWarning::UnmatchedOverride { skill, .. }
        | ResolveWarning::McpNotCached { skill, .. }
        | ResolveWarning::UnknownAgentSkill { skill, .. }
        | ResolveWarning::DuplicateAgentSkill { skill, .. }
        | ResolveWarning::MistypedOverride { skill, .. }
        | ResolveWarning::McpToolMissing { skill, .. } => skill,
    }
}

/// The include graph of an overlay, for the walks of
/// [`SkillRegistryService::check_files`].
struct Graph<'g, 'a> {
    skills: &'g crate::service::Overlay<'a>,
}

impl<'g> Graph<'g, '_> {
    /// The skills `name` includes (registered or not).
    fn includes(&self, name: &SkillName) -> impl Iterator<Item = &'g SkillName> + use<'g, '_> {
        use agents_core::SkillSource;
        self.skills
            .skill(name)
            .into_iter()
            .flat_map(Skill::includes)
            .map(|include| &include.skill)
    }

    /// For each skill reached, the index of the first of `roots`' groups
    /// that reaches it (each skill entered once in all).
    fn first_reach<'r>(
        &self,
        groups: impl Iterator<Item = impl Iterator<Item = &'r SkillName>>,
    ) -> HashMap<&'g SkillName, usize> {
        use agents_core::SkillSource;
        let mut first: HashMap<&'g SkillName, usize> = HashMap::new();
        let mut stack: Vec<&'g SkillName> = Vec::new();
        for (index, group) in groups.enumerate() {
            for root in group {
                if let Some(skill) = self.skills.skill(root)
                    && !first.contains_key(&skill.name)
                {
                    first.insert(&skill.name, index);
                    stack.push(&skill.name);
                }
                while let Some(name) = stack.pop() {
                    for included in self.includes(name) {
                        if let Some(skill) = self.skills.skill(included)
                            && !first.contains_key(&skill.name)
                        {
                            first.insert(&skill.name, index);
                            stack.push(&skill.name);
                        }
                    }
                }
            }
        }
        first
    }

    /// The skills, of those reached from `roots`, whose closure holds one
    /// of `troubled` or a missing include: one depth-first walk, each skill
    /// finished once (an include back onto the walk's path is a cycle,
    /// itself a problem).
    fn reaching<'r>(
        &self,
        roots: impl Iterator<Item = &'r SkillName>,
        troubled: &HashSet<SkillName>,
    ) -> HashSet<&'g SkillName> {
        use agents_core::SkillSource;
        #[derive(Clone, Copy, PartialEq, Eq)]
        enum State {
            OnPath,
            Done(bool),
        }
        let mut state: HashMap<&'g SkillName, State> = HashMap::new();
        let mut bad: HashSet<&'g SkillName> = HashSet::new();
        for root in roots {
            let Some(skill) = self.skills.skill(root) else {
                continue;
            };
            if state.contains_key(&skill.name) {
                continue;
            }
            // (skill, its includes, whether one of them is bad so far)
            let mut stack: Vec<(&'g SkillName, Vec<&'g SkillName>, bool)> = Vec::new();
            state.insert(&skill.name, State::OnPath);
            stack.push((
                &skill.name,
                self.includes(&skill.name).collect(),
                troubled.contains(&skill.name),
            ));
            while let Some((name, pending, worse)) = stack.last_mut() {
                let Some(next) = pending.pop() else {
                    let (name, worse) = (*name, *worse);
                    stack.pop();
                    state.insert(name, State::Done(worse));
                    if worse {
                        bad.insert(name);
                    }
                    if let Some(parent) = stack.last_mut() {
                        parent.2 |= worse;
                    }
                    continue;
                };
                match self.skills.skill(next) {
                    None => *worse = true,
                    Some(included) => match state.get(&included.name) {
                        Some(State::OnPath) => *worse = true,
                        Some(State::Done(b)) => *worse |= *b,
                        None => {
                            state.insert(&included.name, State::OnPath);
                            stack.push((
                                &included.name,
                                self.includes(&included.name).collect(),
                                troubled.contains(&included.name),
                            ));
                        }
                    },
                }
            }
        }
        bad
    }
}

impl SkillRegistryService {
    /// The catalogue names (MCP tools aside) hints are picked from, read
    /// once per service (one command) and again after it writes tools: a
    /// hint only suggests, so another process's tool written meanwhile may
    /// go unsuggested.
    async fn hint_names(&self) -> Result<std::sync::Arc<Vec<String>>, ServiceError> {
        if let Some(names) = self
            .hint_names
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
        {
            return Ok(names.clone());
        }
        let names: std::sync::Arc<Vec<String>> = std::sync::Arc::new(
            self.list_tools(None)
                .await?
                .into_iter()
                .filter(|tool| tool.source != ToolSource::Mcp)
                .map(|tool| tool.name)
                .collect(),
        );
        *self
            .hint_names
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(names.clone());
        Ok(names)
    }

    /// Whether one more hint may be computed ([`crate::service::MAX_HINTS`]).
    fn take_hint(&self) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        self.hints_left
            .fetch_update(Relaxed, Relaxed, |left| left.checked_sub(1))
            .is_ok()
    }
}

/// The skills of `batch` that `skills` reach through includes among
/// `batch` (and that `skills` do not define themselves), each once.
fn reached_in<'b>(skills: &[Skill], batch: &'b [Skill]) -> Vec<&'b Skill> {
    // `batch` holds `skills`: no larger, it holds nothing else.
    if batch.len() <= skills.len() {
        return Vec::new();
    }
    let own: HashSet<&SkillName> = skills.iter().map(|skill| &skill.name).collect();
    // The last definition of a name in the batch, as the files are written in order.
    let by_name: std::collections::HashMap<&SkillName, &Skill> = batch
        .iter()
        .filter(|skill| !own.contains(&skill.name))
        .map(|skill| (&skill.name, skill))
        .collect();
    let mut seen: HashSet<&SkillName> = HashSet::new();
    let mut reached = Vec::new();
    let mut todo: Vec<&Skill> = skills.iter().collect();
    while let Some(skill) = todo.pop() {
        for item in &skill.items {
            if let SkillItem::Include(include) = item
                && let Some(&target) = by_name.get(&include.skill)
                && seen.insert(&include.skill)
            {
                reached.push(target);
                todo.push(target);
            }
        }
    }
    reached
}

/// How many write-time warnings are printed before "and N more" (`--strict`
/// shows fewer): a file of thousands of broken skills must not print
/// megabytes.
const MAX_WRITE_WARNINGS: usize = 20;

/// How often `skill apply` reads and writes again when another writer got
/// in between (each time it read, someone else wrote).
const APPLY_ATTEMPTS: usize = 40;

/// The wait before `skill apply`'s next attempt: random, up to a bound that
/// doubles with each attempt from 2 ms to 128 ms (at most about 4 s over
/// all attempts; in a test of 8 writers racing on 12 names the most any
/// apply took was 17 attempts).
fn apply_backoff(attempt: usize) -> std::time::Duration {
    use std::hash::{BuildHasher, Hasher};
    let bound = 1u64 << attempt.clamp(1, 7);
    // `RandomState` is seeded at random per instance: a source of jitter
    // that needs no crate.
    let random = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    std::time::Duration::from_micros(random % (bound * 1000))
}

/// Write findings as a terminal shows them: the first
/// [`MAX_WRITE_WARNINGS`] (the only ones a caller needs to point at a line
/// for), then a line saying how many more, if any.
pub fn shown_findings(findings: &[WriteFinding]) -> (&[WriteFinding], Option<String>) {
    let shown = findings.get(..MAX_WRITE_WARNINGS).unwrap_or(findings);
    let more = findings.len() - shown.len();
    let trailer = (more > 0).then(|| {
        format!(
            "… and {more} more problems (`{}` lists them per skill)",
            agents_core::Hint::ValidateSkills
        )
    });
    (shown, trailer)
}

#[cfg(test)]
mod tests {
    use super::{WriteFinding, shown_findings};

    #[test]
    fn write_warnings_are_bounded() {
        let finding = |message: String| WriteFinding {
            skill: None,
            site: None,
            kind: "test",
            message,
            did_you_mean: Vec::new(),
        };
        let many: Vec<WriteFinding> = (0..1000).map(|i| finding(format!("w{i}"))).collect();
        let (shown, more) = shown_findings(&many);
        assert_eq!(shown.len(), 20);
        assert_eq!(
            more.as_deref(),
            Some("… and 980 more problems (`validate the skills` lists them per skill)")
        );
        let one = [finding("one".into())];
        assert_eq!(shown_findings(&one), (&one[..], None));
    }
}
