//! Content digests of a skill folder, for lock files: every regular file
//! under the folder, by `/`-separated path relative to it, with the sha256
//! of its bytes (`sha256:<hex>`), sorted by path.
//!
//! Symlinked files are read through their link (their content is what an
//! agent would load); symlinked directories are not entered, so a link cycle
//! cannot loop and nothing outside the folder is pulled in by a directory link.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Most files digested in one folder: a skill folder is a handful of files; a
/// mistaken path (a home directory) fails instead of reading the disk.
pub const MAX_DIGEST_FILES: usize = 10_000;

/// A folder whose files cannot be digested.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot digest the files of skill folder `{}`: {message}", agents_core::text::shown_path(.folder))]
pub struct FolderDigestError {
    /// The folder.
    pub folder: PathBuf,
    /// What failed, naming the file.
    pub message: String,
}

impl FolderDigestError {
    /// A stable machine-readable kind.
    pub fn kind(&self) -> &'static str {
        "agent_skill_files"
    }
}

/// The digest of every file in `folder` (see the module documentation).
pub fn folder_digests(folder: &Path) -> Result<BTreeMap<String, String>, FolderDigestError> {
    let fail = |message: String| FolderDigestError {
        folder: folder.to_path_buf(),
        message,
    };
    let mut digests = BTreeMap::new();
    let mut pending: Vec<(PathBuf, String)> = vec![(folder.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = pending.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|err| {
            fail(format!(
                "cannot list `{}`: {err}",
                agents_core::text::shown_path(&dir)
            ))
        })?;
        for entry in entries {
            let entry = entry.map_err(|err| {
                fail(format!(
                    "cannot list `{}`: {err}",
                    agents_core::text::shown_path(&dir)
                ))
            })?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let relative = if prefix.is_empty() {
                name
            } else {
                format!("{prefix}/{name}")
            };
            let path = entry.path();
            let kind = entry
                .file_type()
                .map_err(|err| fail(format!("cannot stat `{relative}`: {err}")))?;
            if kind.is_dir() {
                pending.push((path, relative));
                continue;
            }
            // A symlink counts when it leads to a regular file.
            let is_file = kind.is_file()
                || (kind.is_symlink() && std::fs::metadata(&path).is_ok_and(|m| m.is_file()));
            if !is_file {
                continue;
            }
            if digests.len() >= MAX_DIGEST_FILES {
                return Err(fail(format!("more than {MAX_DIGEST_FILES} files")));
            }
            let digest = file_digest(&path)
                .map_err(|err| fail(format!("cannot read `{relative}`: {err}")))?;
            digests.insert(relative, digest);
        }
    }
    Ok(digests)
}

fn file_digest(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher)?;
    Ok(format!(
        "sha256:{}",
        agents_core::text::hex(&hasher.finalize())
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_is_digested_by_its_relative_path() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("SKILL.md"), "abc").unwrap();
        std::fs::create_dir(dir.path().join("scripts")).unwrap();
        std::fs::write(dir.path().join("scripts/run.sh"), "").unwrap();
        let digests = folder_digests(dir.path()).unwrap();
        let keys: Vec<&str> = digests.keys().map(String::as_str).collect();
        assert_eq!(keys, ["SKILL.md", "scripts/run.sh"]);
        assert_eq!(
            digests["SKILL.md"],
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            digests["scripts/run.sh"],
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        std::fs::write(dir.path().join("SKILL.md"), "abd").unwrap();
        assert_ne!(
            folder_digests(dir.path()).unwrap()["SKILL.md"],
            digests["SKILL.md"]
        );
    }
}
