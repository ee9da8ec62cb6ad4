//! The discovery algorithm (spec steps 1-5, registration left to the caller)
//! and conflict handling.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use agents_core::{ToolSource, ToolSpec};
use serde::{Deserialize, Serialize};

use crate::folder::FolderError;
use crate::scan::{self, Dedup, Probe, ProgressFn};

/// What to do when a discovered name is already taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConflictStrategy {
    /// Keep the existing tool; the conflict is recorded (default).
    #[default]
    Skip,
    /// Fail, naming both origins.
    Error,
    /// Register the discovered tool in place of the existing one.
    Replace,
}

impl ConflictStrategy {
    /// The name used on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Skip => "skip",
            Self::Error => "error",
            Self::Replace => "replace",
        }
    }

    /// What a conflict becomes under this strategy.
    fn resolution(self) -> ConflictResolution {
        match self {
            Self::Skip => ConflictResolution::Skipped,
            Self::Error => ConflictResolution::Failed,
            Self::Replace => ConflictResolution::Replaced,
        }
    }
}

impl fmt::Display for ConflictStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ConflictStrategy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [Self::Skip, Self::Error, Self::Replace]
            .into_iter()
            .find(|strategy| strategy.as_str() == s)
            .ok_or_else(|| {
                format!("unknown conflict strategy `{s}`: expected `skip`, `error` or `replace`")
            })
    }
}

/// A tool already registered under some name, as the caller knows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExistingTool {
    /// Its registry name, e.g. `agent_skills/pdf`.
    pub name: String,
    /// Its source.
    pub source: ToolSource,
    /// Where it came from: a folder path, a server, a file.
    pub origin: String,
}

/// How a conflict was settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConflictResolution {
    /// The existing tool (or the folder found first) was kept.
    Skipped,
    /// The discovered tool replaces the existing one.
    Replaced,
    /// Strategy `error`: discovery failed.
    Failed,
}

/// A discovered name that was already taken.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiscoveryConflict {
    /// The tool name, `agent_skills/<name>`.
    pub name: String,
    /// Source of the tool that had the name first.
    pub existing_source: ToolSource,
    /// Origin of the tool that had the name first.
    pub existing_origin: String,
    /// Realpath of the folder that wants the name.
    pub new_path: PathBuf,
    /// What happened.
    pub resolution: ConflictResolution,
}

impl fmt::Display for DiscoveryConflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "agent skill `{}` at `{}` conflicts with the {} tool from `{}`",
            self.name,
            agents_core::text::shown_path(&self.new_path),
            self.existing_source,
            self.existing_origin
        )?;
        match self.resolution {
            ConflictResolution::Skipped => f.write_str(": kept the existing one"),
            ConflictResolution::Replaced => f.write_str(": replaced it"),
            ConflictResolution::Failed => Ok(()),
        }
    }
}

/// What one discovery run found.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DiscoveryResult {
    /// Tools to register, in configured-path order, then folder name.
    pub discovered: Vec<ToolSpec>,
    /// Names that were already taken, and how each was settled.
    pub conflicts: Vec<DiscoveryConflict>,
    /// Folders that failed validation, with all their problems.
    pub errors: Vec<FolderError>,
    /// Missing paths, unreadable entries, duplicate links, `SKILL.md` warnings.
    pub warnings: Vec<String>,
}

/// Discovery could not complete.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DiscoveryError {
    /// Strategy `error` and at least one name was taken.
    #[error("{}", conflicts_message(.0))]
    Conflicts(Vec<DiscoveryConflict>),
    /// A path the user named is not a directory (see [`require_dirs`]).
    #[error(
        "agent skills path `{}` {problem}: nothing was changed (a re-scan without it would drop the skills found there before)",
        agents_core::text::shown_path(path)
    )]
    MissingPath {
        /// The path as given.
        path: PathBuf,
        /// `does not exist`, `is not a directory` or `cannot be read`.
        problem: &'static str,
    },
    /// The user named paths, and none was left once empty entries were
    /// dropped (`--paths ''`, or `--paths "$DIRS"` with `DIRS` unset).
    #[error(
        "the agent skills paths given name no folder: nothing was changed (a re-scan of none would drop every skill found before)"
    )]
    NoPaths,
}

/// Refuses an empty list, and the first of `paths` that is not a
/// directory. For paths a user
/// named for one run: a re-scan replaces what the scope found before, so a
/// mistyped path would otherwise drop every skill found there, with only a
/// warning. (Configured paths only warn: a default folder not made yet is
/// normal.)
pub fn require_dirs(paths: &[PathBuf]) -> Result<(), DiscoveryError> {
    if paths.is_empty() {
        return Err(DiscoveryError::NoPaths);
    }
    for path in paths {
        let problem = match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => continue,
            Ok(_) => "is not a directory",
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => "does not exist",
            // A link loop, or a folder on the way that cannot be entered.
            Err(_) => "cannot be read",
        };
        return Err(DiscoveryError::MissingPath {
            path: path.clone(),
            problem,
        });
    }
    Ok(())
}

impl DiscoveryError {
    /// A stable machine-readable kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Conflicts(_) => "agent_skill_conflict",
            Self::MissingPath { .. } | Self::NoPaths => "agent_skills_path_missing",
        }
    }
}

fn conflicts_message(conflicts: &[DiscoveryConflict]) -> String {
    let mut message = format!(
        "{} agent skill name conflict(s) with conflict strategy `error`:",
        conflicts.len()
    );
    for conflict in conflicts {
        message.push_str(&format!("\n  {conflict}"));
    }
    message
}

/// Scans each directory of `paths` for immediate subfolders holding a
/// `SKILL.md` (or, lacking one, a `skill.md`; hidden entries skipped,
/// symlinks followed once), parses them in parallel and returns the tools in
/// a deterministic order. A path that holds a `SKILL.md` itself is a skill
/// folder too, found before its subfolders (which are still scanned). A folder that cannot be read (no permission) is an error, not
/// skipped. Several links to one folder load it once, under the link whose
/// name the skill's `name` equals when there is one.
///
/// `existing` is asked about each discovered name (`agent_skills/<name>`). An
/// existing agent-skill tool whose origin is the same realpath is the same
/// skill seen again, not a conflict. Two folders with the same name under
/// different paths: the first configured path wins under `skip` and
/// `replace`, and both are named under `error`.
pub fn discover(
    paths: &[PathBuf],
    existing: &dyn Fn(&str) -> Option<ExistingTool>,
    strategy: ConflictStrategy,
    progress: Option<ProgressFn<'_>>,
) -> Result<DiscoveryResult, DiscoveryError> {
    let mut result = DiscoveryResult::default();
    let mut folders = Vec::new();
    let mut scanned: HashMap<PathBuf, &Path> = HashMap::new();
    for dir in paths {
        match std::fs::metadata(dir) {
            Err(err) => {
                let problem = if err.kind() == std::io::ErrorKind::NotFound {
                    "does not exist".to_owned()
                } else {
                    format!("cannot be read: {err}")
                };
                result.warnings.push(format!(
                    "agent skills path `{}` {problem}",
                    agents_core::text::shown_path(dir)
                ));
                continue;
            }
            Ok(meta) if !meta.is_dir() => {
                result.warnings.push(format!(
                    "agent skills path `{}` is not a directory",
                    agents_core::text::shown_path(dir)
                ));
                continue;
            }
            Ok(_) => {}
        }
        if let Ok(real) = std::fs::canonicalize(dir) {
            if let Some(first) = scanned.get(&real) {
                result.warnings.push(format!(
                    "agent skills path `{}` is the same directory as `{}`: scanned once",
                    agents_core::text::shown_path(dir),
                    agents_core::text::shown_path(first)
                ));
                continue;
            }
            scanned.insert(real, dir);
        }
        // A path that is a skill folder itself is that skill too (as `skill
        // lint` takes it), before its subfolders: the specification finds
        // the immediate subfolders holding a `SKILL.md` of every path, so
        // its own `SKILL.md` hides none of them.
        if let Ok(Some(_)) = crate::skill_md::find_skill_md(dir) {
            folders.push(scan::resolve_unnamed(dir.clone()));
        }
        match scan::subfolders(dir, &mut result.warnings) {
            Ok(found) => folders.extend(found),
            Err(err) => result.warnings.push(format!(
                "cannot read agent skills path `{}`: {err}",
                agents_core::text::shown_path(dir)
            )),
        }
    }

    let probes = scan::probe_all(&folders, progress);
    let dedup = Dedup::new(probes.iter().map(Some));
    // Each name met so far: the folder that holds it, and where its skill
    // is in `result.discovered` (when it was kept).
    let mut first_seen: HashMap<String, (PathBuf, Option<usize>)> = HashMap::new();
    for (index, (folder, probe)) in folders.iter().zip(probes).enumerate() {
        let (path, outcome) = match probe {
            Probe::NotASkill => continue,
            Probe::Unresolved(err) => {
                result.errors.push(err);
                continue;
            }
            Probe::Skill { realpath, outcome } => (realpath, *outcome),
        };
        if !dedup.keep(index, folder, &path, &folders, &mut result.warnings) {
            continue;
        }
        let skill = match outcome {
            Ok(skill) => skill,
            Err(mut err) => {
                // Said with the errors, not only once they are fixed.
                result
                    .warnings
                    .extend(err.warnings.drain(..).map(|warning| warning.to_string()));
                result.errors.push(err);
                continue;
            }
        };
        result
            .warnings
            .extend(skill.warnings.iter().map(ToString::to_string));
        let name = skill.tool.name.clone();
        let conflict = |source, origin, resolution| DiscoveryConflict {
            name: name.clone(),
            existing_source: source,
            existing_origin: origin,
            new_path: path.clone(),
            resolution,
        };
        let resolution = strategy.resolution();
        if let Some((first, at)) = first_seen.get(&name) {
            let origin = first.to_string_lossy().into_owned();
            result
                .conflicts
                .push(conflict(ToolSource::AgentSkills, origin, resolution));
            // `replace`: a later folder of the same scan takes the name
            // (under `skip` and `error` the first keeps it).
            if let (ConflictResolution::Replaced, Some(at)) = (resolution, *at)
                && let Some(slot) = result.discovered.get_mut(at)
            {
                *slot = skill.tool;
                first_seen.insert(name, (path, Some(at)));
            }
            continue;
        }
        let kept = match existing(&name) {
            Some(taken)
                if !(taken.source == ToolSource::AgentSkills
                    && Path::new(&taken.origin) == path.as_path()) =>
            {
                result
                    .conflicts
                    .push(conflict(taken.source, taken.origin, resolution));
                resolution == ConflictResolution::Replaced
            }
            _ => true,
        };
        first_seen.insert(name, (path, kept.then_some(result.discovered.len())));
        if kept {
            result.discovered.push(skill.tool);
        }
    }
    if strategy == ConflictStrategy::Error && !result.conflicts.is_empty() {
        return Err(DiscoveryError::Conflicts(result.conflicts));
    }
    Ok(result)
}
