//! Agent Skills of the served set as MCP resources, per the MCP Skills
//! Extension (SEP-2640): every file of a skill's folder is the resource
//! `skill://<name>/<relative path>`, and `skills/list` / `skills/get` give
//! each skill's manifest (sha256 digest and size of every file).
//!
//! Files are read at request time from the folder discovery recorded
//! (`source_metadata.path`, its realpath). Folders may come from others, so
//! reading is bounded: the folder is opened one directory at a time from
//! `/`, refusing a symbolic link at every step (a parent swapped for a link
//! is not followed), and read through that descriptor; hidden entries (a
//! name starting with `.`) and symlinks are skipped, only regular files and
//! directories are walked, at most [`MAX_DEPTH`] levels, [`MAX_ENTRIES`]
//! entries read, [`MAX_FILES`] files and [`MAX_FILE_BYTES`] bytes per file
//! (larger files are left out of the listing and refused on read). A
//! regular file with more than one hard link is left out and refused too: a
//! hard link is the same file as one anywhere else on the file system (a
//! `~/.ssh/id_rsa`), and nothing in the folder says which. A requested path
//! with `..`, `.`, empty or hidden segments is refused. What a listing
//! leaves out is logged when it changes, not at every request.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use agents_core::{Meta, ToolSource, ToolSpec};
use agents_registry::FileStamp;

use crate::lock;
use base64::Engine;
use rmcp::model::{
    ReadResourceResult, Resource, ResourceContents, SKILL_MD, Skill, SkillFrontmatter,
    SkillResource, SkillResources,
};

/// Files served per skill at most; further files are left out (and logged).
pub const MAX_FILES: usize = 256;
/// Bytes per file at most; a larger file is not served.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// Directory levels below the skill folder walked at most.
pub const MAX_DEPTH: usize = 8;
/// Entries (files, folders, hidden names, links: every name read) one
/// listing of a skill folder reads at most, its subfolders included: a
/// folder of 150,000 entries costs no more to list than one of this many.
pub const MAX_ENTRIES: usize = 4096;

const SCHEME: &str = "skill://";

/// One Agent Skill whose folder is served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedSkill {
    /// The skill name (the `SKILL.md` front-matter `name`).
    pub name: String,
    /// The front-matter `description`.
    pub description: String,
    /// The folder discovery found.
    pub folder: PathBuf,
    /// The entry it is served for (`agent_skills/<name>`, as a lock names it).
    pub entry: String,
    /// The digests of its files as last listed.
    digests: Digests,
    /// The digests of its files as last checked against a lock.
    locked: LockDigests,
    /// What its last listing left out, as logged.
    warned: Warned,
}

/// Part of a served folder a listing leaves out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Omission {
    /// A file over [`MAX_FILE_BYTES`].
    TooLarge(String),
    /// A regular file with more than one hard link.
    HardLinked(String),
    /// More than [`MAX_FILES`] files: the rest.
    TooManyFiles,
    /// More than [`MAX_ENTRIES`] entries: the rest were not read.
    TooManyEntries,
}

impl std::fmt::Display for Omission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = |path: &str| agents_core::text::escape_control(path).into_owned();
        match self {
            Self::TooLarge(path) => write!(
                f,
                "`{}` is over {MAX_FILE_BYTES} bytes; not served",
                shown(path)
            ),
            Self::HardLinked(path) => write!(
                f,
                "`{}` has more than one hard link (it is the same file as one elsewhere); not served",
                shown(path)
            ),
            Self::TooManyFiles => write!(
                f,
                "it has more than {MAX_FILES} files; the rest are not served"
            ),
            Self::TooManyEntries => write!(
                f,
                "it has more than {MAX_ENTRIES} entries; the rest are not read or served"
            ),
        }
    }
}

/// What one listing of a served folder found.
#[derive(Debug, Default)]
struct Listing {
    /// The files served, as relative `/`-separated paths.
    files: Vec<String>,
    /// Files left out, each with why.
    omitted: Vec<Omission>,
    /// Stopped at [`MAX_FILES`].
    too_many_files: bool,
    /// Stopped at [`MAX_ENTRIES`].
    too_many_entries: bool,
    /// Entries read, `.` and `..` aside.
    visited: usize,
}

impl Listing {
    /// Everything left out, the caps last.
    fn omissions(&self) -> Vec<Omission> {
        let mut all = self.omitted.clone();
        if self.too_many_files {
            all.push(Omission::TooManyFiles);
        }
        if self.too_many_entries {
            all.push(Omission::TooManyEntries);
        }
        all
    }
}

/// The omissions of a served folder's last listing, so each is logged when
/// it appears, not at every `resources/list` or `skills/list` (a client
/// polling a large folder filled the log with one line per call). Shared by
/// the clones of one served skill.
#[derive(Debug, Clone, Default)]
struct Warned(Arc<Mutex<Vec<Omission>>>);

impl PartialEq for Warned {
    /// A record of the log: no part of what a served skill is.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Warned {}

/// Omissions logged one by one after a change; more are counted.
const OMISSIONS_LOGGED: usize = 10;

/// What [`agents_registry::agent_folder_digests`] keeps of a served folder
/// between the checks against a lock (`--locked`), shared by the clones of
/// one served skill.
#[derive(Debug, Clone, Default)]
pub(crate) struct LockDigests(pub(crate) Arc<agents_registry::DigestCache>);

impl PartialEq for LockDigests {
    /// A cache: no part of what a served skill is.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for LockDigests {}

/// Each file's digest by relative path, with the stamp it was computed
/// for: `skills/list` hashes only files whose stamp changed since the last
/// listing, so a client asking again and again does not make the gateway
/// read every served byte each time. Shared by the clones of one served
/// skill; a reload of the served set starts afresh.
#[derive(Debug, Clone, Default)]
struct Digests(Arc<Mutex<Cached>>);

#[derive(Debug, Default)]
struct Cached {
    files: HashMap<String, (FileStamp, SkillResource)>,
    /// Files read and hashed in all, for the tests.
    hashed: usize,
}

impl PartialEq for Digests {
    /// A cache: no part of what a served skill is.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Digests {}

impl ServedSkill {
    /// The Agent Skill behind a served entry, if it is one and names its folder.
    pub fn of(spec: &ToolSpec) -> Option<Self> {
        if spec.source != ToolSource::AgentSkills {
            return None;
        }
        let folder = spec.meta_str(Meta::Path)?;
        let name = spec
            .name
            .strip_prefix("agent_skills/")
            .unwrap_or(&spec.name)
            .to_owned();
        Some(Self {
            name,
            description: spec.description.clone(),
            folder: PathBuf::from(folder),
            entry: spec.name.clone(),
            digests: Digests::default(),
            locked: LockDigests::default(),
            warned: Warned::default(),
        })
    }

    /// The digest of the folder by the rule a lock records it, and of each
    /// of its files (see [`agents_registry::agent_folder_digests`]).
    pub(crate) fn lock_digests(
        &self,
    ) -> Result<(String, std::collections::BTreeMap<String, String>), SkillFileError> {
        agents_registry::agent_folder_digests(&self.folder, &self.locked.0)
            .map_err(|err| SkillFileError::Io(err.to_string()))
    }

    /// The folder, opened through real directories only
    /// ([`agents_fs::open_resolved_dir`]): neither it nor any directory
    /// above it may be a symbolic link, as none was when discovery
    /// recorded its realpath. A link put in the place of either (in a
    /// directory others can write, such as `/tmp`, or a `~/skills` made a
    /// link to a directory holding another `notes/`) would otherwise serve
    /// whatever it points at.
    fn open_folder(&self) -> Result<std::os::fd::OwnedFd, SkillFileError> {
        agents_fs::open_resolved_dir(&self.folder).map_err(|_| SkillFileError::NotFound)
    }

    /// The URI of the skill's `SKILL.md`.
    pub fn skill_md_uri(&self) -> String {
        self.uri_of(SKILL_MD)
    }

    fn uri_of(&self, relative: &str) -> String {
        format!("{SCHEME}{}/{relative}", self.name)
    }

    /// The files served, as relative `/`-separated paths, sorted; `SKILL.md`
    /// first.
    pub fn files(&self) -> Result<Vec<String>, SkillFileError> {
        let listing = self.listing()?;
        for line in self.newly_omitted(&listing.omissions()) {
            tracing::warn!(
                "mcp serve: skill `{}`: {line}",
                agents_core::text::escape_control(&self.name)
            );
        }
        Ok(listing.files)
    }

    /// One walk of the folder, through the descriptor of [`Self::open_folder`].
    fn listing(&self) -> Result<Listing, SkillFileError> {
        let dir = nix::dir::Dir::from_fd(self.open_folder()?)
            .map_err(|err| SkillFileError::Io(err.to_string()))?;
        let mut listing = Listing::default();
        walk(dir, "", 0, &mut listing);
        listing
            .files
            .sort_by(|a, b| (a != SKILL_MD).cmp(&(b != SKILL_MD)).then(a.cmp(b)));
        Ok(listing)
    }

    /// The log lines for `omitted`, the omissions of a listing: none when
    /// they are those of the last listing, else each new one (at most
    /// [`OMISSIONS_LOGGED`], then how many more).
    fn newly_omitted(&self, omitted: &[Omission]) -> Vec<String> {
        let mut last = lock(&self.warned.0);
        if last.as_slice() == omitted {
            return Vec::new();
        }
        let new: Vec<&Omission> = omitted.iter().filter(|o| !last.contains(o)).collect();
        let mut lines: Vec<String> = new
            .iter()
            .take(OMISSIONS_LOGGED)
            .map(ToString::to_string)
            .collect();
        if new.len() > OMISSIONS_LOGGED {
            lines.push(format!(
                "and {} more files are not served",
                new.len() - OMISSIONS_LOGGED
            ));
        }
        *last = omitted.to_vec();
        lines
    }

    /// The bytes of one served file, re-checked at request time.
    pub fn read(&self, relative: &str) -> Result<Vec<u8>, SkillFileError> {
        let (file, _) = self.open(relative)?;
        read_all(&file, relative)
    }

    /// One served file opened for reading, and what `fstat` says of it.
    fn open(&self, relative: &str) -> Result<(std::fs::File, std::fs::Metadata), SkillFileError> {
        let segments: Vec<&str> = relative.split('/').collect();
        if segments.len() > MAX_DEPTH + 1
            || segments
                .iter()
                .any(|s| s.is_empty() || s.starts_with('.') || s.contains('\\'))
        {
            return Err(SkillFileError::BadPath(
                agents_core::text::shorten(relative, agents_core::text::MAX_ECHO_BYTES)
                    .into_owned(),
            ));
        }
        // Each step is opened relative to the directory opened before it,
        // refusing a symbolic link (`O_NOFOLLOW`), and the file is checked
        // on the descriptor it is read from: a path checked first and opened
        // after could be swapped for a link in between by anyone who can
        // write the folder. `O_NONBLOCK` keeps a FIFO put there from hanging
        // the open; it is then refused as not a regular file.
        use nix::fcntl::{OFlag, openat};
        use nix::sys::stat::Mode;
        use std::os::unix::fs::MetadataExt;
        let mut dir = self.open_folder()?;
        let (last, parents) = segments.split_last().ok_or(SkillFileError::NotFound)?;
        for segment in parents {
            let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
            dir = openat(&dir, *segment, flags, Mode::empty())
                .map_err(|_| SkillFileError::NotFound)?;
        }
        let flags = OFlag::O_RDONLY
            | OFlag::O_NOFOLLOW
            | OFlag::O_CLOEXEC
            | OFlag::O_NONBLOCK
            | OFlag::O_NOCTTY;
        let file = std::fs::File::from(
            openat(&dir, *last, flags, Mode::empty()).map_err(|_| SkillFileError::NotFound)?,
        );
        let meta = file.metadata().map_err(|_| SkillFileError::NotFound)?;
        if !meta.file_type().is_file() {
            return Err(SkillFileError::NotFound);
        }
        if meta.nlink() > 1 {
            return Err(SkillFileError::HardLinked(relative.to_owned()));
        }
        if meta.len() > MAX_FILE_BYTES {
            return Err(SkillFileError::TooLarge(relative.to_owned()));
        }
        Ok((file, meta))
    }

    /// The `resources/list` entries of this skill.
    pub fn resources(&self) -> Result<Vec<Resource>, SkillFileError> {
        Ok(self
            .files()?
            .into_iter()
            .map(|relative| {
                let uri = self.uri_of(&relative);
                if relative == SKILL_MD {
                    Resource::new(uri, self.name.clone())
                        .with_description(self.description.clone())
                        .with_mime_type("text/markdown")
                } else {
                    Resource::new(uri, relative.clone()).with_mime_type(mime_of(&relative))
                }
            })
            .collect())
    }

    /// The `skills/list` entry: every file with its digest and size (hashed
    /// again only when its stamp changed, see [`Digests`]).
    pub fn manifest(&self) -> Result<Skill, SkillFileError> {
        self.manifest_at(SystemTime::now())
    }

    /// [`Self::manifest`] with the clock at `now`.
    fn manifest_at(&self, now: SystemTime) -> Result<Skill, SkillFileError> {
        // A copy (at most `MAX_FILES` entries), so the lock is not held while
        // files are read and listings at once all use what is cached.
        let mut before = lock(&self.digests.0).files.clone();
        let mut hashed = 0;
        let mut kept = HashMap::new();
        let mut files = Vec::new();
        for relative in self.files()? {
            let (file, meta) = self.open(&relative)?;
            let stamp = FileStamp::of(&meta);
            let resource = match before.remove(&relative) {
                Some((was, resource)) if was == stamp => resource,
                _ => {
                    hashed += 1;
                    let bytes = read_all(&file, &relative)?;
                    SkillResource::from_bytes(self.uri_of(&relative), &bytes)
                }
            };
            if stamp.settled_at(now) {
                kept.insert(relative, (stamp, resource.clone()));
            }
            files.push(resource);
        }
        let mut cached = lock(&self.digests.0);
        cached.files = kept;
        cached.hashed += hashed;
        drop(cached);
        let skill = Skill::new(
            self.skill_md_uri(),
            SkillFrontmatter::new(self.name.clone(), self.description.clone()),
            SkillResources::Files(files),
        );
        skill
            .validate()
            .map_err(|err| SkillFileError::Invalid(err.to_string()))?;
        Ok(skill)
    }
}

/// Why a skill file could not be listed or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SkillFileError {
    /// No such served file (missing, hidden, a symlink or not a regular file).
    #[error("no such skill file")]
    NotFound,
    /// A path with `..`, `.`, empty or hidden segments, or too deep.
    #[error("refused skill file path `{0}`")]
    BadPath(String),
    /// Over [`MAX_FILE_BYTES`].
    #[error("skill file `{0}` is over {MAX_FILE_BYTES} bytes")]
    TooLarge(String),
    /// A regular file with more than one hard link: it is the same file as
    /// one that may be anywhere on the file system.
    #[error("skill file `{0}` has more than one hard link; it is not served")]
    HardLinked(String),
    /// The folder could not be read.
    #[error("cannot read the skill folder: {0}")]
    Io(String),
    /// The skill breaks a SEP-2640 rule (e.g. its name).
    #[error("the skill cannot be listed: {0}")]
    Invalid(String),
    /// Served under a lock (`--locked`) and no longer what it recorded:
    /// why, naming the lock.
    #[error("{0}")]
    Refused(String),
}

impl SkillFileError {
    /// A stable name for scripts.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::NotFound => "not_found",
            Self::BadPath(_) => "bad_path",
            Self::TooLarge(_) => "too_large",
            Self::HardLinked(_) => "hard_linked",
            Self::Io(_) => "io",
            Self::Invalid(_) => "invalid_skill",
            Self::Refused(_) => "lock_mismatch",
        }
    }
}

/// The bytes of an opened served file, at most [`MAX_FILE_BYTES`].
fn read_all(file: &std::fs::File, relative: &str) -> Result<Vec<u8>, SkillFileError> {
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(file, MAX_FILE_BYTES + 1),
        &mut bytes,
    )
    .map_err(|err| SkillFileError::Io(err.to_string()))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(SkillFileError::TooLarge(relative.to_owned()));
    }
    Ok(bytes)
}

/// Lists `dir` into `listing` (its files as `prefix` and their names),
/// and its subfolders down to [`MAX_DEPTH`], in name order, reading at most
/// what is left of [`MAX_ENTRIES`]. Every entry is looked at through `dir`'s
/// descriptor without following a link. Returns `false` once a cap is
/// reached: nothing more is read.
fn walk(mut dir: nix::dir::Dir, prefix: &str, depth: usize, listing: &mut Listing) -> bool {
    use nix::fcntl::{AtFlags, OFlag};
    use nix::sys::stat::{Mode, SFlag, fstatat};
    let mut names = Vec::new();
    for entry in dir.iter() {
        let Ok(entry) = entry else {
            break;
        };
        let name = entry.file_name();
        if name == c"." || name == c".." {
            continue;
        }
        if listing.visited >= MAX_ENTRIES {
            listing.too_many_entries = true;
            break;
        }
        listing.visited += 1;
        names.push(name.to_owned());
    }
    names.sort();
    for name in names {
        let Ok(text) = name.to_str() else {
            continue;
        };
        if text.starts_with('.') || text.contains('\\') {
            continue;
        }
        let Ok(stat) = fstatat(&dir, name.as_c_str(), AtFlags::AT_SYMLINK_NOFOLLOW) else {
            continue;
        };
        let kind = SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT;
        let relative = format!("{prefix}{text}");
        if kind == SFlag::S_IFDIR {
            if depth >= MAX_DEPTH {
                continue;
            }
            let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
            let Ok(below) = nix::dir::Dir::openat(&dir, name.as_c_str(), flags, Mode::empty())
            else {
                continue;
            };
            if !walk(below, &format!("{relative}/"), depth + 1, listing) {
                return false;
            }
        } else if kind == SFlag::S_IFREG {
            if u64::try_from(stat.st_size).unwrap_or(u64::MAX) > MAX_FILE_BYTES {
                listing.omitted.push(Omission::TooLarge(relative));
            } else if stat.st_nlink > 1 {
                listing.omitted.push(Omission::HardLinked(relative));
            } else if listing.files.len() >= MAX_FILES {
                listing.too_many_files = true;
                return false;
            } else {
                listing.files.push(relative);
            }
        }
    }
    !listing.too_many_entries
}

/// A mime type guessed from the extension, else `application/octet-stream`.
pub fn mime_of(relative: &str) -> &'static str {
    let ext = relative
        .rsplit_once('.')
        .map(|(_, ext)| ext.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" | "text" => "text/plain",
        "py" => "text/x-python",
        "sh" | "bash" => "application/x-sh",
        "js" | "mjs" | "cjs" => "text/javascript",
        "ts" => "text/x-typescript",
        "rs" => "text/x-rust",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "xml" => "application/xml",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        _ => "application/octet-stream",
    }
}

/// Splits `skill://<name>/<relative>`.
pub fn split_uri(uri: &str) -> Option<(&str, &str)> {
    let rest = uri.strip_prefix(SCHEME)?;
    let (name, relative) = rest.split_once('/')?;
    (!name.is_empty() && !relative.is_empty()).then_some((name, relative))
}

/// The `resources/read` result of one file: text when it is UTF-8, else a
/// base64 blob.
pub fn contents(uri: &str, relative: &str, bytes: Vec<u8>) -> ReadResourceResult {
    let mime = if relative == SKILL_MD {
        "text/markdown"
    } else {
        mime_of(relative)
    };
    let contents = match String::from_utf8(bytes) {
        Ok(text) => ResourceContents::text(text, uri).with_mime_type(mime),
        Err(err) => ResourceContents::blob(
            base64::engine::general_purpose::STANDARD.encode(err.into_bytes()),
            uri,
        )
        .with_mime_type(mime),
    };
    ReadResourceResult::new(vec![contents])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    pub(crate) fn skill(dir: &Path) -> ServedSkill {
        ServedSkill {
            name: "notes".into(),
            description: "Take notes".into(),
            folder: dir.to_path_buf(),
            entry: "agent_skills/notes".into(),
            digests: Digests::default(),
            locked: LockDigests::default(),
            warned: Warned::default(),
        }
    }

    /// A temporary folder holding the skill folder `notes` with its
    /// `SKILL.md`, by its realpath (as discovery records it).
    fn notes_folder() -> (tempfile::TempDir, PathBuf) {
        let root = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(root.path()).unwrap().join("notes");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("SKILL.md"), "---\nname: notes\n---\n").unwrap();
        (root, dir)
    }

    fn digests(manifest: &Skill) -> Vec<(String, String)> {
        let SkillResources::Files(files) = &manifest.resources else {
            panic!("not a file list");
        };
        files
            .iter()
            .map(|file| (file.uri.clone(), file.digest.clone()))
            .collect()
    }

    fn hashed(skill: &ServedSkill) -> usize {
        lock(&skill.digests.0).hashed
    }

    #[test]
    fn listing_again_hashes_only_the_files_that_changed() {
        let (_root, dir) = notes_folder();
        std::fs::write(dir.join("a.txt"), "alpha").unwrap();
        std::fs::write(dir.join("b.txt"), "bravo").unwrap();
        let skill = skill(&dir);
        // An hour on, every file has settled.
        let later = SystemTime::now() + std::time::Duration::from_secs(3600);
        let first = skill.manifest_at(later).unwrap();
        assert_eq!(hashed(&skill), 3);
        assert_eq!(digests(&skill.manifest_at(later).unwrap()), digests(&first));
        assert_eq!(hashed(&skill), 3, "an unchanged file was read again");
        // The same size, and the modification time set back: the change
        // time still moves, so the new bytes are hashed.
        let old = std::fs::metadata(dir.join("a.txt"))
            .unwrap()
            .modified()
            .unwrap();
        std::fs::write(dir.join("a.txt"), "ALPHA").unwrap();
        std::fs::File::options()
            .write(true)
            .open(dir.join("a.txt"))
            .unwrap()
            .set_modified(old)
            .unwrap();
        let second = skill.manifest_at(later).unwrap();
        assert_eq!(hashed(&skill), 4);
        let (before, after) = (digests(&first), digests(&second));
        assert_ne!(before[1], after[1], "{after:?}");
        assert_eq!((&before[0], &before[2]), (&after[0], &after[2]));
        assert_eq!(
            after[1].1,
            SkillResource::from_bytes("x", b"ALPHA").digest,
            "the digest is of the new bytes"
        );
        // A removed file leaves the listing and the cache.
        std::fs::remove_file(dir.join("b.txt")).unwrap();
        assert_eq!(digests(&skill.manifest_at(later).unwrap()).len(), 2);
        assert_eq!(lock(&skill.digests.0).files.len(), 2);
    }

    #[test]
    fn a_file_changed_just_now_is_hashed_on_every_listing() {
        // Its time stamp may not yet tell a later write from this one.
        let (_root, dir) = notes_folder();
        let skill = skill(&dir);
        skill.manifest().unwrap();
        skill.manifest().unwrap();
        assert_eq!(hashed(&skill), 2);
        assert!(lock(&skill.digests.0).files.is_empty());
    }

    #[test]
    fn lists_reads_and_refuses_escapes() {
        let root = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(root.path()).unwrap().join("notes");
        std::fs::create_dir_all(dir.join("scripts")).unwrap();
        std::fs::create_dir_all(dir.join(".git")).unwrap();
        std::fs::write(dir.join("SKILL.md"), "---\nname: notes\n---\n").unwrap();
        std::fs::write(dir.join("scripts/run.py"), "print(1)\n").unwrap();
        std::fs::write(dir.join(".git/config"), "x").unwrap();
        std::fs::write(root.path().join("secret"), "s").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(root.path().join("secret"), dir.join("link")).unwrap();
        let s = skill(&dir);
        assert_eq!(s.files().unwrap(), ["SKILL.md", "scripts/run.py"]);
        assert_eq!(s.read("scripts/run.py").unwrap(), b"print(1)\n");
        for bad in [
            "../secret",
            "scripts/../../secret",
            ".git/config",
            "",
            "a//b",
        ] {
            assert!(s.read(bad).is_err(), "{bad}");
        }
        #[cfg(unix)]
        assert_eq!(s.read("link"), Err(SkillFileError::NotFound));
        let manifest = s.manifest().unwrap();
        let SkillResources::Files(files) = &manifest.resources else {
            panic!("dynamic");
        };
        assert_eq!(files.len(), 2);
        assert!(files[0].digest.starts_with("sha256:"));
        assert_eq!(split_uri("skill://notes/a/b.md"), Some(("notes", "a/b.md")));
        let blob = contents("skill://notes/x.bin", "x.bin", vec![0xff, 0]);
        let json = serde_json::to_value(&blob).unwrap();
        assert_eq!(json["contents"][0]["blob"], "/wA=");
        assert_eq!(json["contents"][0]["mimeType"], "application/octet-stream");
    }

    #[cfg(unix)]
    #[test]
    fn a_folder_swapped_for_a_symbolic_link_is_not_served() {
        let (root, dir) = notes_folder();
        let private = root.path().join("private");
        std::fs::create_dir_all(&private).unwrap();
        std::fs::write(private.join("id_rsa"), "KEY").unwrap();
        let s = skill(&dir);
        assert_eq!(s.files().unwrap(), ["SKILL.md"]);
        std::fs::rename(&dir, root.path().join("notes.real")).unwrap();
        std::os::unix::fs::symlink(&private, &dir).unwrap();
        assert_eq!(s.files(), Err(SkillFileError::NotFound));
        assert_eq!(s.read("id_rsa"), Err(SkillFileError::NotFound));
    }

    /// The race the check-then-open reading lost: a file swapped for a link
    /// (by `rename`, so either is always there) between the check and the
    /// read. Reading through the descriptors never returns the link's target.
    #[cfg(unix)]
    #[test]
    fn a_file_swapped_for_a_link_while_reading_is_never_followed() {
        let root = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(root.path()).unwrap().join("race");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("SKILL.md"), "---\nname: race\n---\n").unwrap();
        std::fs::write(root.path().join("secret"), "SECRET").unwrap();
        std::fs::write(dir.join("plain"), "harmless").unwrap();
        std::os::unix::fs::symlink(root.path().join("secret"), dir.join("link")).unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let swapper = {
            let (dir, stop) = (dir.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let _ = std::fs::rename(dir.join("plain"), dir.join("f"));
                    let _ = std::fs::rename(dir.join("f"), dir.join("plain"));
                    let _ = std::fs::rename(dir.join("link"), dir.join("f"));
                    let _ = std::fs::rename(dir.join("f"), dir.join("link"));
                }
            })
        };
        let s = skill(&dir);
        for _ in 0..20_000 {
            if let Ok(bytes) = s.read("f") {
                assert_eq!(bytes, b"harmless");
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        swapper.join().unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let root = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(root.path()).unwrap().join("notes");
        std::fs::create_dir_all(&dir).unwrap();
        nix::unistd::mkfifo(&dir.join("pipe"), nix::sys::stat::Mode::S_IRUSR).unwrap();
        assert_eq!(skill(&dir).read("pipe"), Err(SkillFileError::NotFound));
    }

    /// The attack: `~/skills/notes` is served; `~/skills` is replaced by a
    /// link to a directory holding another `notes/` with a `secret.txt`.
    #[test]
    fn a_parent_swapped_for_a_symbolic_link_is_not_followed() {
        let root = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(root.path()).unwrap();
        let dir = home.join("skills/notes");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("SKILL.md"), "---\nname: notes\n---\n").unwrap();
        std::fs::create_dir_all(home.join("elsewhere/notes")).unwrap();
        std::fs::write(home.join("elsewhere/notes/SKILL.md"), "x").unwrap();
        std::fs::write(home.join("elsewhere/notes/secret.txt"), "SECRET").unwrap();
        let s = skill(&dir);
        assert_eq!(s.files().unwrap(), ["SKILL.md"]);
        std::fs::rename(home.join("skills"), home.join("skills.real")).unwrap();
        std::os::unix::fs::symlink(home.join("elsewhere"), home.join("skills")).unwrap();
        // The path still names a folder with the secret in it.
        assert!(dir.join("secret.txt").is_file());
        assert_eq!(s.files(), Err(SkillFileError::NotFound));
        assert_eq!(s.read("secret.txt"), Err(SkillFileError::NotFound));
        assert_eq!(s.read("SKILL.md"), Err(SkillFileError::NotFound));
        assert!(s.manifest().is_err());
        // Put back, it is served again.
        std::fs::remove_file(home.join("skills")).unwrap();
        std::fs::rename(home.join("skills.real"), home.join("skills")).unwrap();
        assert_eq!(s.read("SKILL.md").unwrap(), b"---\nname: notes\n---\n");
    }

    #[test]
    fn a_file_with_another_hard_link_is_neither_listed_nor_read() {
        let (root, dir) = notes_folder();
        let outside = root.path().join("id_rsa");
        std::fs::write(&outside, "PRIVATE KEY").unwrap();
        std::fs::create_dir_all(dir.join("keys")).unwrap();
        std::fs::hard_link(&outside, dir.join("keys/id_rsa")).unwrap();
        std::fs::write(dir.join("plain.txt"), "plain").unwrap();
        let s = skill(&dir);
        assert_eq!(s.files().unwrap(), ["SKILL.md", "plain.txt"]);
        assert_eq!(
            s.read("keys/id_rsa"),
            Err(SkillFileError::HardLinked("keys/id_rsa".into()))
        );
        assert_eq!(s.read("plain.txt").unwrap(), b"plain");
        let SkillResources::Files(files) = s.manifest().unwrap().resources else {
            panic!("not a file list");
        };
        assert_eq!(files.len(), 2);
        // The other link gone, the file is the folder's own again.
        std::fs::remove_file(&outside).unwrap();
        assert_eq!(s.read("keys/id_rsa").unwrap(), b"PRIVATE KEY");
    }

    #[test]
    fn a_listing_reads_no_more_entries_than_its_cap() {
        let (_root, dir) = notes_folder();
        // Far more entries than the cap, in the folder and below it.
        let wide = MAX_ENTRIES + 1000;
        for i in 0..wide {
            std::fs::write(dir.join(format!("f{i:05}")), "").unwrap();
        }
        std::fs::create_dir_all(dir.join("a/b")).unwrap();
        for i in 0..MAX_ENTRIES {
            std::fs::write(dir.join(format!("a/b/g{i:05}")), "").unwrap();
        }
        let listing = skill(&dir).listing().unwrap();
        assert!(listing.visited <= MAX_ENTRIES, "{}", listing.visited);
        assert!(listing.too_many_entries || listing.too_many_files);
        assert!(listing.files.len() <= MAX_FILES);
        // Under both caps, every file is listed, in name order.
        let (_root, small) = notes_folder();
        for i in 0..10 {
            std::fs::write(small.join(format!("f{i}")), "").unwrap();
        }
        let listing = skill(&small).listing().unwrap();
        assert_eq!(listing.files.len(), 11);
        assert_eq!(listing.visited, 11);
        assert!(listing.omissions().is_empty());
        // Over the file cap only: the first files by name are served.
        let (_root, many) = notes_folder();
        for i in 0..MAX_FILES + 5 {
            std::fs::write(many.join(format!("f{i:04}")), "").unwrap();
        }
        let listing = skill(&many).listing().unwrap();
        assert_eq!(listing.omissions(), [Omission::TooManyFiles]);
        assert_eq!(listing.files.len(), MAX_FILES);
        assert_eq!(listing.files[0], "SKILL.md");
        assert_eq!(
            listing.files[MAX_FILES - 1],
            format!("f{:04}", MAX_FILES - 2)
        );
    }

    #[test]
    fn what_a_listing_leaves_out_is_logged_once_per_change() {
        let (_root, dir) = notes_folder();
        for i in 0..MAX_FILES + 1 {
            std::fs::write(dir.join(format!("f{i:04}")), "").unwrap();
        }
        let s = skill(&dir);
        let logged = |s: &ServedSkill| {
            let listing = s.listing().unwrap();
            s.newly_omitted(&listing.omissions())
        };
        let first = logged(&s);
        assert_eq!(first.len(), 1, "{first:?}");
        assert!(first[0].contains("more than 256 files"), "{first:?}");
        for _ in 0..5 {
            assert_eq!(logged(&s), Vec::<String>::new());
        }
        // A change: a file over the size cap (sparse) is said, once.
        let big = std::fs::File::create(dir.join("big.bin")).unwrap();
        big.set_len(MAX_FILE_BYTES + 1).unwrap();
        let second = logged(&s);
        assert_eq!(second.len(), 1, "{second:?}");
        assert!(second[0].contains("`big.bin` is over"), "{second:?}");
        assert_eq!(logged(&s), Vec::<String>::new());
        // Under the caps again, then over: said again.
        std::fs::remove_file(dir.join("big.bin")).unwrap();
        std::fs::remove_file(dir.join("f0000")).unwrap();
        std::fs::remove_file(dir.join("f0001")).unwrap();
        assert_eq!(logged(&s), Vec::<String>::new());
        std::fs::write(dir.join("f0000"), "").unwrap();
        std::fs::write(dir.join("f0001"), "").unwrap();
        assert_eq!(logged(&s).len(), 1);
    }
}
