//! Writing skills: add, update and apply (create-or-update), each checked
//! against the closure of what it writes before it lands.
//!
//! The check is cheap: only the written skills, their include closure and
//! the catalogue entries that closure names are read. Its findings are
//! warnings (a skill may be added before the skills it includes), unless the
//! caller asks for `strict`, where any finding refuses the whole write.

use std::collections::HashSet;

use agents_core::{ResolveWarning, Skill, SkillItem, SkillName, SkillResolver, ToolSource};
use agents_store::{Store, StoreError};
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

/// What a write did to one skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// The skill did not exist and was added.
    Created,
    /// The skill existed with another definition and was replaced.
    Updated,
    /// The skill existed with this very definition; nothing was written.
    Unchanged,
}

impl Change {
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
    pub changes: Vec<(SkillName, Change)>,
    /// Problems found in the closure of the written skills (unknown tools,
    /// missing includes, cycles, ...), one line each.
    pub warnings: Vec<String>,
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

/// The catalogue name closest to `unknown`, if one is close enough to be a
/// likely typo (edit distance with transpositions, at most a quarter of the
/// name and never more than 3).
pub fn did_you_mean<'a>(unknown: &str, candidates: &'a [String]) -> Option<&'a str> {
    let chars = unknown.chars().count();
    let limit = (chars / 4).clamp(1, 3);
    candidates
        .iter()
        // The distance is at least the difference in length: a name that
        // much longer or shorter is no candidate, and costs no edit matrix.
        .filter(|name| name.chars().count().abs_diff(chars) <= limit)
        .map(|name| (strsim::damerau_levenshtein(unknown, name), name))
        .filter(|(distance, _)| *distance <= limit)
        .min_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)))
        .map(|(_, name)| name.as_str())
}

impl<S: Store> SkillRegistryService<S> {
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
        self.write_skills_among(skills, &[], mode, strict).await
    }

    /// [`Self::write_skills`] for one file of several a command writes:
    /// `batch` is every skill of the command's files (this file's too), and
    /// the check takes those of them that `skills` reach as written, so a
    /// file may include a skill a later file of the same command defines
    /// (`skill apply skills/*.yaml --strict`). Each file is still its own
    /// transaction: a later file that fails leaves that include missing.
    pub async fn write_skills_among(
        &self,
        skills: &[Skill],
        batch: &[Skill],
        mode: WriteMode,
        strict: bool,
    ) -> Result<WriteOutcome, ServiceError> {
        validate_all(skills)?;
        let pending = reached_in(skills, batch);
        let warnings = if pending.is_empty() {
            self.write_warnings(skills).await?
        } else {
            // Batch skills first: a skill of this file wins a name both hold.
            let combined: Vec<Skill> = pending.into_iter().chain(skills).cloned().collect();
            let own: HashSet<&SkillName> = skills.iter().map(|skill| &skill.name).collect();
            self.warnings_for(&combined, |name| own.contains(name))
                .await?
        };
        if strict && !warnings.is_empty() {
            return Err(ServiceError::Strict(warnings));
        }
        let warnings = bounded(warnings);
        if mode == WriteMode::Add {
            let changes = self
                .add_as_given(&[], skills, crate::service::Written::Directly)
                .await?;
            return Ok(WriteOutcome { changes, warnings });
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
        Ok(WriteOutcome { changes, warnings })
    }

    /// One read of the stored versions of `skills`, and the write of what
    /// differs from them under `mode` (not `Add`), in one transaction.
    async fn write_against_stored(
        &self,
        tools: &[agents_core::ToolSpec],
        skills: &[Skill],
        mode: WriteMode,
        how: crate::service::Written,
    ) -> Result<Vec<(SkillName, Change)>, ServiceError> {
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
                    Change::Created
                }
                Some(stored) if mode == WriteMode::Apply && same_definition(&stored, skill) => {
                    Change::Unchanged
                }
                Some(stored) => {
                    // The revision read here makes a concurrent writer's
                    // change a conflict, not a silent loss.
                    update.push(Skill {
                        updated_at: stored.updated_at,
                        ..skill.clone()
                    });
                    Change::Updated
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
    ) -> Result<Vec<(SkillName, Change)>, ServiceError> {
        self.write_recorded_how(tools, skills, &[], how).await?;
        Ok(skills
            .iter()
            .map(|skill| (skill.name.clone(), Change::Created))
            .collect())
    }

    /// Loads an export: catalogue tools (replacing same-named ones) and
    /// skills, in one transaction (all or nothing). Without `replace` a
    /// registered skill name fails the import; with it, registered skills
    /// are replaced (identical ones are left alone). Builtin tools in the
    /// export are skipped because they live in code.
    pub async fn import_with(
        &self,
        skills: &[Skill],
        tools: &[agents_core::ToolSpec],
        replace: bool,
    ) -> Result<Vec<(SkillName, Change)>, ServiceError> {
        validate_all(skills)?;
        let tools: Vec<agents_core::ToolSpec> = tools
            .iter()
            .filter(|t| t.source != ToolSource::Builtin)
            .cloned()
            .collect();
        // The export's MCP and Agent Skills rows carry their sources' names;
        // a custom tool may not take one (as `tool add` refuses it).
        for tool in tools.iter().filter(|t| t.source == ToolSource::Custom) {
            crate::service::check_custom_name(&tool.name)?;
        }
        self.forget_hint_names();
        if !replace {
            return self
                .add_as_given(&tools, skills, crate::service::Written::Imported)
                .await;
        }
        self.apply_retrying(&tools, skills, crate::service::Written::Imported)
            .await
    }

    /// [`Self::write_against_stored`] in `Apply` mode, read and written
    /// again while another writer got in between (at most
    /// [`APPLY_ATTEMPTS`] times): what the registry should hold is written
    /// against what that writer left.
    async fn apply_retrying(
        &self,
        tools: &[agents_core::ToolSpec],
        skills: &[Skill],
        how: crate::service::Written,
    ) -> Result<Vec<(SkillName, Change)>, ServiceError> {
        let mut attempt = 1;
        loop {
            match self
                .write_against_stored(tools, skills, WriteMode::Apply, how)
                .await
            {
                Err(ServiceError::Store(
                    StoreError::DuplicateSkill(_) | StoreError::Conflict { .. },
                )) if attempt < APPLY_ATTEMPTS => attempt += 1,
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
    pub async fn write_warnings(&self, written: &[Skill]) -> Result<Vec<String>, ServiceError> {
        self.warnings_for(written, |_| true).await
    }

    /// [`Self::write_warnings`] of the skills of `written` that `checked`
    /// picks, the others taken as written too (skills of a later file).
    async fn warnings_for(
        &self,
        written: &[Skill],
        checked: impl Fn(&SkillName) -> bool,
    ) -> Result<Vec<String>, ServiceError> {
        let names: HashSet<&SkillName> = written.iter().map(|skill| &skill.name).collect();
        let mut roots: Vec<SkillName> = written
            .iter()
            .flat_map(|skill| &skill.items)
            .filter_map(|item| match item {
                SkillItem::Include(include) if !names.contains(&include.skill) => {
                    Some(include.skill.clone())
                }
                _ => None,
            })
            .collect();
        roots.sort();
        roots.dedup();
        let (skills, catalog) = self.load_with(&roots, written).await?;
        let resolver = SkillResolver::new(&skills, &catalog);
        let mut lines: IndexSet<String> = IndexSet::new();
        let mut unknown: IndexSet<(SkillName, String)> = IndexSet::new();
        // One walk over all written skills: diagnosing each alone would cost
        // the sum of their closures (quadratic when they include one another).
        let (errors, warnings) = resolver.diagnose_all(
            written
                .iter()
                .map(|skill| &skill.name)
                .filter(|name| checked(name)),
        );
        // The walk follows each include once, so it meets each cycle once
        // (by the one back edge that closes it).
        for error in errors {
            lines.insert(error.to_string());
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
                    lines.insert(warning.to_string());
                }
                ResolveWarning::McpNotCached { .. } | ResolveWarning::McpToolMissing { .. } => {}
            }
        }
        for error in self.check_mcp_references(skills.skills()) {
            lines.insert(error.to_string());
        }
        if !unknown.is_empty() {
            let candidates = self.hint_names().await?;
            for (skill, tool) in unknown {
                // A hint costs an edit distance to every catalogue name; only
                // lines that can be shown get one (a file naming thousands of
                // unknown tools spent most of its `skill add` here), and a
                // command a few hundred in all.
                let hint = if lines.len() < MAX_WRITE_WARNINGS && self.take_hint() {
                    did_you_mean(&tool, &candidates)
                        .map(|name| format!(" (did you mean '{name}'?)"))
                        .unwrap_or_default()
                } else {
                    String::new()
                };
                let line = ResolveWarning::UnknownTool { skill, tool }.to_string();
                lines.insert(format!("{line}{hint}"));
            }
        }
        Ok(lines.into_iter().collect())
    }
}

impl<S: Store> SkillRegistryService<S> {
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
const APPLY_ATTEMPTS: usize = 5;

fn bounded(mut warnings: Vec<String>) -> Vec<String> {
    agents_core::text::cap_lines(&mut warnings, MAX_WRITE_WARNINGS, |more| {
        format!("… and {more} more problems (`agents skill validate` lists them per skill)")
    });
    warnings
}

#[cfg(test)]
mod tests {
    use super::{bounded, did_you_mean};

    #[test]
    fn write_warnings_are_bounded() {
        let many: Vec<String> = (0..1000).map(|i| format!("w{i}")).collect();
        let shown = bounded(many);
        assert_eq!(shown.len(), 21);
        assert_eq!(
            shown[20],
            "… and 980 more problems (`agents skill validate` lists them per skill)"
        );
        assert_eq!(bounded(vec!["one".into()]), ["one"]);
    }

    #[test]
    fn suggests_the_closest_name_only_when_close() {
        let names: Vec<String> = ["builtin/read_file", "builtin/grep", "builtin/write_file"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            did_you_mean("builtin/raed_file", &names),
            Some("builtin/read_file")
        );
        assert_eq!(did_you_mean("builtin/gerp", &names), Some("builtin/grep"));
        assert_eq!(did_you_mean("local/deploy", &names), None);
    }
}
