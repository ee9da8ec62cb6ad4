//! Finding skill folders and loading them in parallel.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use crate::folder::{self, FolderError, LoadedSkill};
use crate::skill_md::{Rule, SKILL_MD, SkillMdError};

/// Progress callback: (folders done, folders total).
pub type ProgressFn<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// The immediate, non-hidden subdirectories of `dir` (symlinks followed),
/// sorted by name. Nothing deeper is visited, so a symlink pointing back up
/// cannot make this loop. Whether each holds a `SKILL.md` is checked by
/// [`probe_all`], in parallel: on slow filesystems the `stat` calls cost as
/// much as the parsing.
pub(crate) fn subfolders(dir: &Path, warnings: &mut Vec<String>) -> Vec<PathBuf> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) => {
            warnings.push(format!(
                "cannot read agent skills path `{}`: {err}",
                agents_core::text::shown_path(dir)
            ));
            return Vec::new();
        }
    };
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
    found.into_iter().map(|(_, path)| path).collect()
}

/// What one folder turned out to be.
pub(crate) enum Probe {
    /// No entry named `SKILL.md`.
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
    // `symlink_metadata`: a dangling `SKILL.md` link is reported when
    // loading, not silently skipped.
    if std::fs::symlink_metadata(folder.join(SKILL_MD)).is_err() {
        return Probe::NotASkill;
    }
    match std::fs::canonicalize(folder) {
        Ok(realpath) => {
            let outcome = Box::new(folder::load_resolved(folder, &realpath));
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
        }),
    }
}

/// Keeps the first folder seen for each realpath.
#[derive(Default)]
pub(crate) struct Dedup {
    seen: HashMap<PathBuf, PathBuf>,
}

impl Dedup {
    /// True the first time `realpath` is seen; later ones add a warning.
    pub fn first(&mut self, folder: &Path, realpath: &Path, warnings: &mut Vec<String>) -> bool {
        if let Some(first) = self.seen.get(realpath) {
            warnings.push(format!(
                "`{}` is the same folder as `{}` (`{}`): loaded once",
                agents_core::text::shown_path(folder),
                agents_core::text::shown_path(first),
                agents_core::text::shown_path(realpath)
            ));
            return false;
        }
        self.seen
            .insert(realpath.to_path_buf(), folder.to_path_buf());
        true
    }
}
