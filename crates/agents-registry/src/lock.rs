//! Locking: the lock gate. Locks skills' resolutions (with the file digests
//! of their Agent Skills folders), diffs a resolution against a lock, and
//! decides whether what would be used matches it ([`Locked`], one verdict
//! for `skill tools --locked`, `mcp serve --locked` and the gateway's
//! reloads). The digests and the diff themselves are pure
//! ([`agents_core::Lockfile`]).

use std::collections::BTreeMap;
use std::path::Path;

use agents_core::{
    AgentFiles, LockDiff, LockedSkill, Lockfile, Meta, ResolvedToolEntry, SkillName, ToolSource,
    diff_lock, lock_skill,
};

use crate::error::ServiceError;
use crate::service::{ServeSet, SkillRegistryService, ToolSet};

/// Digests the folder of every Agent Skill entry (by entry name).
fn agent_files(entries: &[ResolvedToolEntry]) -> Result<AgentFiles, ServiceError> {
    let mut files = AgentFiles::new();
    for entry in entries {
        let Some(tool) = &entry.tool else { continue };
        if tool.source != ToolSource::AgentSkills {
            continue;
        }
        if let Some(path) = tool.meta_str(Meta::Path) {
            files.insert(
                entry.name.clone(),
                agents_discovery::folder_digests(Path::new(path))?,
            );
        }
    }
    Ok(files)
}

/// The folder of an Agent Skill as a lock records it: the `upstream` field
/// digest ([`agents_core::agent_files_digest`], what [`lock_skill`] puts in
/// a lock) and the digest of each file it covers, by relative path. Files
/// unchanged since `cache` last read them are not read again
/// ([`agents_discovery::folder_digests_cached`]): the gateway checks a
/// served folder at every request under `--locked`.
pub fn agent_folder_digests(
    folder: &Path,
    cache: &agents_discovery::DigestCache,
) -> Result<(String, BTreeMap<String, String>), agents_discovery::FolderDigestError> {
    let files = agents_discovery::folder_digests_cached(folder, cache)?;
    Ok((agents_core::agent_files_digest(&files), files))
}

/// What the lock gate found: a value (a tool set, a serve set) and how the
/// resolution it came from compares with the lock, skill by skill. The value
/// is used only when [`Self::matches`]; otherwise [`Self::mismatch`] is the
/// refusal.
#[derive(Debug, Clone, PartialEq)]
pub struct Locked<T> {
    /// What was resolved.
    pub value: T,
    /// One diff per skill checked (clean ones too), in the order named.
    pub diffs: Vec<LockDiff>,
}

impl<T> Locked<T> {
    /// True when every skill's resolution matches the lock.
    pub fn matches(&self) -> bool {
        self.diffs.iter().all(LockDiff::is_clean)
    }

    /// The diffs of the skills whose resolution differs from the lock.
    pub fn drifted(&self) -> impl Iterator<Item = &LockDiff> {
        self.diffs.iter().filter(|diff| !diff.is_clean())
    }

    /// The refusal when a resolution differs from the lock `file` (as the
    /// user named it), naming each difference; `None` when all match.
    pub fn mismatch(&self, file: &str) -> Option<ServiceError> {
        (!self.matches()).then(|| ServiceError::LockMismatch {
            lock: file.to_owned(),
            differences: mismatch_text(&self.diffs),
        })
    }
}

/// Each differing skill of `diffs` and what differs, on one line.
fn mismatch_text(diffs: &[LockDiff]) -> String {
    let mut parts = Vec::new();
    for diff in diffs.iter().filter(|d| !d.is_clean()) {
        let mut what = Vec::new();
        if diff.not_locked {
            what.push("not locked".to_owned());
        }
        for changed in &diff.changed {
            what.push(format!(
                "`{}` changed ({})",
                changed.name,
                changed.fields.join(", ")
            ));
        }
        if !diff.added.is_empty() && !diff.not_locked {
            what.push(format!("added {}", diff.added.join(", ")));
        }
        if !diff.removed.is_empty() {
            what.push(format!("removed {}", diff.removed.join(", ")));
        }
        if diff.reordered {
            what.push("order changed".to_owned());
        }
        parts.push(format!("skill `{}`: {}", diff.skill, what.join("; ")));
    }
    // One line, however many entries differ (a caller lists each).
    agents_core::text::shorten(&parts.join("; "), agents_core::text::MAX_MESSAGE_BYTES).into_owned()
}

fn lock_entries(entries: &[ResolvedToolEntry]) -> Result<LockedSkill, ServiceError> {
    Ok(lock_skill(entries, &agent_files(entries)?))
}

impl SkillRegistryService {
    /// A lock of each skill's resolution (`agents skill lock`), and the
    /// warnings resolving them gave (each line once, in order: those `agents
    /// skill tools` prints of each skill), so an incomplete resolution (an
    /// MCP server never fetched, an unknown tool) is not locked silently.
    pub async fn lock_skills(
        &self,
        names: &[SkillName],
    ) -> Result<(Lockfile, Vec<String>), ServiceError> {
        let mut skills = BTreeMap::new();
        let mut warnings: Vec<String> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let resolved = self.resolve_each(names).await;
        for (name, entries, lines) in self.suggesting(resolved).await? {
            skills.insert(name.to_string(), lock_entries(&entries)?);
            for line in lines {
                if seen.insert(line.clone()) {
                    warnings.push(line);
                }
            }
        }
        Ok((Lockfile::new(skills), warnings))
    }

    /// Each of `names` resolved (a name given twice once), with the lines
    /// of its warnings, over one load of all their closures: loading each
    /// name's closure on its own read a chain's skills once per name named
    /// (8,000 names of one chain: 99 s).
    async fn resolve_each<'n>(
        &self,
        names: &'n [SkillName],
    ) -> Result<Vec<(&'n SkillName, Vec<ResolvedToolEntry>, Vec<String>)>, ServiceError> {
        let (skills, catalog) = self.load_checked(names).await?;
        let resolver = agents_core::SkillResolver::new(&skills, &catalog);
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        for name in names {
            if seen.insert(name) {
                let resolution = resolver.resolve(name)?;
                let warnings = self.warning_lines(&skills, &resolution.warnings).await?;
                out.push((name, resolution.entries, warnings));
            }
        }
        Ok(out)
    }

    /// How the resolution of `name` differs from `lock` (`agents skill diff`).
    pub async fn diff_lock(
        &self,
        name: &SkillName,
        lock: &Lockfile,
    ) -> Result<LockDiff, ServiceError> {
        let set = self.tools(name).await?;
        Ok(diff_lock(name.as_ref(), lock, &lock_entries(&set.entries)?))
    }

    /// [`Self::tools`] (or [`Self::explain_tools`]) and how the result
    /// differs from `lock` (`agents skill tools --locked`).
    pub async fn locked_tools(
        &self,
        name: &SkillName,
        explain: bool,
        lock: &Lockfile,
    ) -> Result<Locked<ToolSet>, ServiceError> {
        let set = if explain {
            self.explain_tools(name).await?
        } else {
            self.tools(name).await?
        };
        let diff = diff_lock(name.as_ref(), lock, &lock_entries(&set.entries)?);
        Ok(Locked {
            value: set,
            diffs: vec![diff],
        })
    }

    /// [`Self::serve_set`] and, per skill, how its resolution differs from
    /// `lock` (`agents mcp serve --locked`, at start and at every change the
    /// gateway sees): both from one load, so what is checked is what is served.
    pub async fn locked_serve_set(
        &self,
        names: &[SkillName],
        lock: &Lockfile,
    ) -> Result<Locked<ServeSet>, ServiceError> {
        let mut diffs = Vec::with_capacity(names.len());
        let set = self
            .serve_set_with(names, |name, entries| {
                diffs.push(diff_lock(name.as_ref(), lock, &lock_entries(entries)?));
                Ok(())
            })
            .await;
        Ok(Locked {
            value: self.suggesting(set).await?,
            diffs,
        })
    }
}
