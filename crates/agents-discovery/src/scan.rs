//! Finding skill folders and loading them in parallel.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use crate::folder::{self, FolderError, LoadedSkill};
use crate::skill_md::{self, Rule, SkillMdError};

/// Progress callback: (folders done, folders total).
pub type ProgressFn<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// The immediate, non-hidden subdirectories of `dir` (symlinks followed),
/// sorted by name. Nothing deeper is visited, so a symlink pointing back up
/// cannot make this loop. Whether each holds a `SKILL.md` is checked by
/// [`probe_all`], in parallel: on slow filesystems the `stat` calls cost as
/// much as the parsing.
/// `Err` when `dir` itself cannot be read.
pub(crate) fn subfolders(
    dir: &Path,
    warnings: &mut Vec<String>,
) -> Result<Vec<PathBuf>, std::io::Error> {
    let entries = std::fs::read_dir(dir)?;
    let mut found = Vec::new();
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                warnings.push(format!(
                    "cannot read an entry of `{}`: {err}",
                    agents_core::text::shown_path(dir)
                ));
                continue;
            }
        };
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        let is_dir = match entry.file_type() {
            Ok(kind) if kind.is_dir() => true,
            Ok(kind) if kind.is_symlink() => match std::fs::metadata(&path) {
                Ok(meta) => meta.is_dir(),
                Err(err) => {
                    warnings.push(format!(
                        "cannot follow symlink `{}`: {err}",
                        agents_core::text::shown_path(&path)
                    ));
                    false
                }
            },
            Ok(_) => false,
            Err(err) => {
                warnings.push(format!(
                    "cannot read `{}`: {err}",
                    agents_core::text::shown_path(&path)
                ));
                false
            }
        };
        if is_dir {
            found.push((name, path));
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(found.into_iter().map(|(_, path)| path).collect())
}

/// `.` (or `..`) has no name for the folder-name rule: use the resolved path.
pub(crate) fn resolve_unnamed(folder: PathBuf) -> PathBuf {
    if folder.file_name().is_some() {
        return folder;
    }
    std::fs::canonicalize(&folder).unwrap_or(folder)
}

/// The problem of a folder that cannot be looked into (no permission to
/// list or enter it): reported like an unreadable `SKILL.md`, not skipped.
pub(crate) fn unreadable(folder: &Path, err: &std::io::Error) -> FolderError {
    FolderError {
        folder: folder.to_path_buf(),
        problems: vec![SkillMdError::new(
            folder,
            None,
            Rule::Read,
            format!("cannot read folder: {err}"),
        )],
        warnings: Vec::new(),
    }
}

/// What one folder turned out to be.
pub(crate) enum Probe {
    /// No entry named `SKILL.md` (or `skill.md`).
    NotASkill,
    /// The folder could not be resolved.
    Unresolved(FolderError),
    /// A skill folder, loaded or not.
    Skill {
        realpath: PathBuf,
        outcome: Box<Result<LoadedSkill, FolderError>>,
    },
}

/// Checks and loads every folder on the rayon pool; the output keeps the
/// input order.
pub(crate) fn probe_all(folders: &[PathBuf], progress: Option<ProgressFn<'_>>) -> Vec<Probe> {
    let total = folders.len();
    if let Some(report) = progress {
        report(0, total);
    }
    let done = AtomicUsize::new(0);
    folders
        .par_iter()
        .map(|folder| {
            let probe = probe(folder);
            let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
            if let Some(report) = progress {
                report(finished, total);
            }
            probe
        })
        .collect()
}

fn probe(folder: &Path) -> Probe {
    let file = match skill_md::find_skill_md(folder) {
        Ok(Some(file)) => file,
        Ok(None) => return Probe::NotASkill,
        Err(err) => return Probe::Unresolved(unreadable(folder, &err)),
    };
    match std::fs::canonicalize(folder) {
        Ok(realpath) => {
            let outcome = Box::new(folder::load_resolved(folder, &realpath, file));
            Probe::Skill { realpath, outcome }
        }
        Err(err) => Probe::Unresolved(FolderError {
            folder: folder.to_path_buf(),
            problems: vec![SkillMdError::new(
                folder,
                None,
                Rule::Path,
                format!("cannot resolve folder: {err}"),
            )],
            warnings: Vec::new(),
        }),
    }
}

/// One folder kept for each realpath that several found paths reach (links
/// to one folder): the first whose own name the skill's `name` may equal
/// (it loaded, or failed for other reasons than the folder-name rule), else
/// the first.
pub(crate) struct Dedup {
    /// Realpath → index of the kept folder, and whether it was not the
    /// first (then the warning says why it was kept).
    kept: HashMap<PathBuf, (usize, bool)>,
}

/// Whether the skill's `name` may equal this folder's own name.
fn named_alike(outcome: &Result<LoadedSkill, FolderError>) -> bool {
    match outcome {
        Ok(_) => true,
        Err(err) => !err
            .problems
            .iter()
            .any(|problem| problem.rule == Rule::NameFolder),
    }
}

impl Dedup {
    /// Chooses among the probes of `folders` (one each, same order).
    pub fn new<'a>(probes: impl IntoIterator<Item = Option<&'a Probe>>) -> Self {
        let mut kept: HashMap<PathBuf, (usize, bool)> = HashMap::new();
        let mut fits: HashMap<PathBuf, bool> = HashMap::new();
        for (index, probe) in probes.into_iter().enumerate() {
            let Some(Probe::Skill { realpath, outcome }) = probe else {
                continue;
            };
            let alike = named_alike(outcome);
            match kept.get_mut(realpath) {
                None => {
                    kept.insert(realpath.clone(), (index, false));
                    fits.insert(realpath.clone(), alike);
                }
                Some(slot) => {
                    if alike && fits.get(realpath) == Some(&false) {
                        *slot = (index, true);
                        fits.insert(realpath.clone(), true);
                    }
                }
            }
        }
        Self { kept }
    }

    /// Whether the folder at `index` is the one kept for `realpath`; the
    /// others add a warning naming the kept one.
    pub fn keep(
        &self,
        index: usize,
        folder: &Path,
        realpath: &Path,
        folders: &[PathBuf],
        warnings: &mut Vec<String>,
    ) -> bool {
        let Some(&(kept, not_first)) = self.kept.get(realpath) else {
            return true;
        };
        if kept == index {
            return true;
        }
        let kept_folder = folders.get(kept).map_or(realpath, PathBuf::as_path);
        let mut warning = format!(
            "`{}` is the same folder as `{}` (`{}`): loaded once",
            agents_core::text::shown_path(folder),
            agents_core::text::shown_path(kept_folder),
            agents_core::text::shown_path(realpath),
        );
        if not_first {
            warning.push_str(&format!(
                ", as `{}`, whose folder name matches the skill's `name`",
                agents_core::text::shown_path(kept_folder)
            ));
        }
        warnings.push(warning);
        false
    }
}
