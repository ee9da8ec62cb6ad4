//! Finding skill folders and loading them in parallel.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use crate::folder::{self, FolderError, LoadedSkill};
use crate::skill_md::{Rule, SKILL_MD, SkillMdError};

/// Progress callback: (folders done, folders total).
pub type ProgressFn<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// A folder to load: as found, and resolved.
#[derive(Clone)]
pub(crate) struct Candidate {
    pub folder: PathBuf,
    pub realpath: PathBuf,
}

/// The immediate, non-hidden subdirectories of `dir` (symlinks followed)
/// that hold an entry named `SKILL.md`, sorted by name. Nothing deeper is
/// visited, so a symlink pointing back up cannot make this loop.
pub(crate) fn skill_folders(dir: &Path, warnings: &mut Vec<String>) -> Vec<PathBuf> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) => {
            warnings.push(format!("cannot read agent skills path `{}`: {err}", dir.display()));
            return Vec::new();
        }
    };
    let mut found = Vec::new();
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                warnings.push(format!("cannot read an entry of `{}`: {err}", dir.display()));
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
                    warnings.push(format!("cannot follow symlink `{}`: {err}", path.display()));
                    false
                }
            },
            Ok(_) => false,
            Err(err) => {
                warnings.push(format!("cannot read `{}`: {err}", path.display()));
                false
            }
        };
        // `symlink_metadata`: a dangling `SKILL.md` link is reported when
        // loading, not silently skipped.
        if is_dir && std::fs::symlink_metadata(path.join(SKILL_MD)).is_ok() {
            found.push((name, path));
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found.into_iter().map(|(_, path)| path).collect()
}

/// Drops folders already seen under another path or link.
#[derive(Default)]
pub(crate) struct Dedup {
    seen: HashMap<PathBuf, PathBuf>,
}

impl Dedup {
    /// `Ok(None)` for a folder already taken.
    pub fn add(&mut self, folder: PathBuf, warnings: &mut Vec<String>) -> Result<Option<Candidate>, FolderError> {
        let realpath = std::fs::canonicalize(&folder).map_err(|err| FolderError {
            problems: vec![SkillMdError::new(&folder, None, Rule::Path, format!("cannot resolve folder: {err}"))],
            folder: folder.clone(),
        })?;
        if let Some(first) = self.seen.get(&realpath) {
            warnings.push(format!(
                "`{}` is the same folder as `{}` (`{}`): loaded once",
                folder.display(),
                first.display(),
                realpath.display()
            ));
            return Ok(None);
        }
        self.seen.insert(realpath.clone(), folder.clone());
        Ok(Some(Candidate { folder, realpath }))
    }
}

/// Loads every candidate on the rayon pool; the output keeps the input order.
pub(crate) fn load_all(candidates: &[Candidate], progress: Option<ProgressFn<'_>>) -> Vec<Result<LoadedSkill, FolderError>> {
    let total = candidates.len();
    if let Some(report) = progress {
        report(0, total);
    }
    let done = AtomicUsize::new(0);
    candidates
        .par_iter()
        .map(|candidate| {
            let loaded = folder::load_resolved(&candidate.folder, &candidate.realpath);
            let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
            if let Some(report) = progress {
                report(finished, total);
            }
            loaded
        })
        .collect()
}
