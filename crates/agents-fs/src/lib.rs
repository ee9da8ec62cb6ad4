//! The files and folders this tool writes.
//!
//! Whatever it keeps for its user (the `~/.cleveragents` folder, the SQLite
//! database, `config.toml`, the trust store, the discovery scope, an export)
//! is its owner's only: modes are set when the file or folder is created
//! (0700 for folders, 0600 for files; the umask can only remove bits from
//! these), never changed on something that already exists, so a folder or
//! database a user made shareable on purpose stays as they made it. A file
//! that is replaced whole is written through [`write_atomically`], so a crash
//! leaves the old file or the new one, never half of one. On non-Unix
//! systems modes are the ordinary ones.

#![deny(clippy::panic, clippy::indexing_slicing)]

mod input;

pub use input::{Input, InputError, is_stdin, read_input};

use std::fs::OpenOptions;
use std::io::{self, Write as _};
use std::path::Path;

/// The mode of every folder this tool creates.
pub const DIR_MODE: u32 = 0o700;
/// The mode of every private file this tool creates.
pub const FILE_MODE: u32 = 0o600;

/// Creates `path` and any missing parents, each new one with mode 0700.
/// Folders that already exist are left as they are.
pub fn create_dir_all(path: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(DIR_MODE);
    }
    builder.create(path)
}

/// `OpenOptions` whose newly created files get mode 0600; the caller adds
/// `write`, `create`, `create_new` or `truncate` as needed.
pub fn open_options() -> OpenOptions {
    #[allow(unused_mut)]
    let mut options = OpenOptions::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(FILE_MODE);
    }
    options
}

/// Creates `path` as an empty file with mode 0600 unless it exists.
/// Returns whether it was created.
/// A symbolic link whose target does not exist yet counts as missing: its
/// target is created, 0600 too (an exclusive create refuses any link, and
/// whatever opened it next would make the target with the umask's mode).
pub fn create_file(path: &Path) -> io::Result<bool> {
    match open_options().write(true).create_new(true).open(path) {
        Ok(_) => Ok(true),
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
            let dangling = std::fs::symlink_metadata(path)?.file_type().is_symlink()
                && matches!(std::fs::metadata(path), Err(err) if err.kind() == io::ErrorKind::NotFound);
            if dangling {
                // Not exclusive: it follows the link, and makes its target.
                open_options().write(true).create(true).open(path)?;
            }
            Ok(dangling)
        }
        Err(err) => Err(err),
    }
}

/// Sets mode 0600 on `path` if it exists (for files another library
/// created, such as SQLite's `-wal` and `-shm`).
pub fn restrict_if_present(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        match std::fs::set_permissions(path, std::fs::Permissions::from_mode(FILE_MODE)) {
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(())
    }
}

/// Why a file this user's commands act on without asking (the config
/// file, whose MCP servers run unprompted; the trust file; the discovery
/// scope's key) could say what another user wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exposure {
    /// Its group or everyone may write it (`mode` is its permission bits).
    Writable {
        /// The file's permission bits.
        mode: u32,
    },
    /// Another user owns it (root aside: a file root owns is the system's).
    Owner {
        /// The owner's user id.
        uid: u32,
    },
}

impl std::fmt::Display for Exposure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Writable { mode } => write!(
                f,
                "other users may change it (mode {mode:04o}; `chmod go-w` it)"
            ),
            Self::Owner { uid } => write!(f, "another user (uid {uid}) owns it"),
        }
    }
}

/// Whether someone other than this user (or root) can change the file
/// `metadata` describes; `None` when only they can. Always `None` where
/// there are no Unix owners and modes.
pub fn exposure(metadata: &std::fs::Metadata) -> Option<Exposure> {
    changeable_by_others(metadata, true)
}

/// Whether someone other than this user could have written the file
/// `metadata` describes: another user owns it (root too, unlike
/// [`exposure`]: a file root wrote is not this user's word), or its group
/// or everyone may write it. `None` when it is this user's alone, and
/// always where there are no Unix owners and modes.
pub fn written_by_others(metadata: &std::fs::Metadata) -> Option<Exposure> {
    changeable_by_others(metadata, false)
}

/// [`exposure`], and with `root_passes` false [`written_by_others`].
fn changeable_by_others(metadata: &std::fs::Metadata, root_passes: bool) -> Option<Exposure> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let mode = metadata.mode() & 0o7777;
        let uid = metadata.uid();
        if !(root_passes && uid == 0) && uid != nix::unistd::geteuid().as_raw() {
            return Some(Exposure::Owner { uid });
        }
        if mode & 0o022 != 0 {
            return Some(Exposure::Writable { mode });
        }
        None
    }
    #[cfg(not(unix))]
    {
        let _ = (metadata, root_passes);
        None
    }
}

/// The permission bits of a file that should be its owner's only (a trust
/// store, a key) when group or others may read or write it; `None` when
/// they may not, or where there are no Unix modes.
pub fn not_private(metadata: &std::fs::Metadata) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = metadata.permissions().mode() & 0o777;
        (mode & 0o077 != 0).then_some(mode)
    }
    #[cfg(not(unix))]
    {
        let _ = metadata;
        None
    }
}

/// Opens the directory at `path`, a resolved path (absolute, no `.` or
/// `..`, no symbolic link on the way: what `realpath` gives), one component
/// at a time from `/`, each refusing a symbolic link (`O_NOFOLLOW`). A
/// folder recorded by its realpath (an Agent Skill discovery found) and
/// read later is then the folder recorded or nothing: a directory on the
/// way swapped for a link since (`~/skills` made a link to a directory
/// holding another `notes/`) is refused, not followed. The descriptor is
/// what to read the folder through, so later reads cannot be redirected
/// either.
#[cfg(unix)]
pub fn open_resolved_dir(path: &Path) -> io::Result<std::os::fd::OwnedFd> {
    use nix::fcntl::{OFlag, openat};
    use nix::sys::stat::Mode;
    use std::os::unix::fs::OpenOptionsExt;
    use std::path::Component;
    let not_resolved = || {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a resolved path (absolute, without `.` or `..`)",
        )
    };
    let mut components = path.components();
    if components.next() != Some(Component::RootDir) {
        return Err(not_resolved());
    }
    let mut dir: std::os::fd::OwnedFd = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((OFlag::O_DIRECTORY | OFlag::O_CLOEXEC).bits())
        .open("/")?
        .into();
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    for component in components {
        let Component::Normal(name) = component else {
            return Err(not_resolved());
        };
        dir = openat(&dir, name, flags, Mode::empty()).map_err(io::Error::from)?;
    }
    Ok(dir)
}

/// Who may read a file [`write_atomically`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Its owner only (mode 0600): anything that may hold a secret or that
    /// describes the user's registry.
    Owner,
    /// What the umask allows (usually 0644): a project file meant to be
    /// committed and shared, such as a lock file.
    Shared,
    /// Its owner only (0600), at a path the user named for output (`-o`),
    /// often in a project someone else may have written: a symbolic link
    /// there is replaced, as for [`Access::Shared`] (`mcp export -o
    /// .mcp.json` writes secrets, and a cloned project could link that name
    /// to any file of the user's).
    Output,
}

/// Replaces `path` with `bytes`: written to a temporary file next to it
/// (unique per process, so two writers never share one), synced, then
/// renamed over `path`, so a crash or a full disk leaves the old file or the
/// new one, never half of one, and no temporary file behind. `path`'s
/// folder must exist.
///
/// A symbolic link is followed only for an [`Access::Owner`] file, one the
/// user keeps for themselves (a `config.toml` linked from a dotfiles
/// repository stays a link; the file it points to is replaced). A
/// [`Access::Shared`] or [`Access::Output`] file may live in a project
/// someone else wrote:
/// a `skills.lock` there that links to `~/.ssh/authorized_keys` is replaced
/// by a regular file, and what it pointed to is left alone.
pub fn write_atomically(path: &Path, bytes: &[u8], access: Access) -> io::Result<()> {
    let resolved;
    let path = if access == Access::Owner
        && std::fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink())
    {
        resolved = std::fs::canonicalize(path)?;
        resolved.as_path()
    } else {
        path
    };
    // A directory (or a name ending in `/`) cannot be replaced by a file:
    // said as such, not as the rename's "Not a directory".
    if path.is_dir() || path.as_os_str().to_string_lossy().ends_with('/') {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "it is a directory: name a file in it",
        ));
    }
    // Dropped on any error below, the temporary file is removed.
    let mut temp = temp_file_beside(path, access)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|err| err.error)?;
    Ok(())
}

/// A new temporary file next to `path` (`.NAME.XXXXXX.partial`, with the
/// mode `access` gives), removed when dropped; leftovers of writes that
/// were killed are removed first.
fn temp_file_beside(path: &Path, access: Access) -> io::Result<tempfile::NamedTempFile> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    // The temporary file's name is an implementation detail: an error
    // making it names the directory (tempfile's own names the file).
    let in_dir = |err: io::Error| {
        let why = match err.kind() {
            io::ErrorKind::NotFound => "no such directory".to_owned(),
            io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
            kind => kind.to_string(),
        };
        io::Error::new(
            err.kind(),
            format!("cannot create a file in `{}`: {why}", dir.display()),
        )
    };
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(path.file_name().unwrap_or_default());
    prefix.push(".");
    let mut builder = tempfile::Builder::new();
    builder
        .prefix(&prefix)
        .suffix(".partial")
        .rand_bytes(RANDOM_LEN);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(match access {
            Access::Owner | Access::Output => FILE_MODE,
            Access::Shared => 0o666,
        }));
    }
    #[cfg(not(unix))]
    let _ = access;
    remove_stale_partials(dir, &prefix);
    builder.tempfile_in(dir).map_err(in_dir)
}

/// Creates `path` holding `bytes` (mode 0600) unless a file is there: the
/// bytes are written to a temporary file next to it, synced, then linked
/// into place, so whoever opens `path` reads all of them, never a file made
/// but not written yet. Returns whether it was created (`false`: another
/// writer's file was there first, and is left as it is).
pub fn create_with(path: &Path, bytes: &[u8]) -> io::Result<bool> {
    let mut temp = temp_file_beside(path, Access::Owner)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    match temp.persist_noclobber(path) {
        Ok(_) => Ok(true),
        // Dropped with the error, the temporary file is removed.
        Err(err) if err.error.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(err) => Err(err.error),
    }
}

/// Random characters in a temporary file's name.
const RANDOM_LEN: usize = 6;

/// How old a leftover temporary file must be before a later write of the
/// same file removes it: far longer than any write takes, so a concurrent
/// writer's file is never taken.
const STALE_PARTIAL: std::time::Duration = std::time::Duration::from_secs(600);

/// Removes the temporary files (`.NAME.XXXXXX.partial`) that writes of the
/// same file left behind when the process was killed between creating and
/// renaming one (a `kill -9`, a power cut), once they are
/// [`STALE_PARTIAL`] old. Best effort: what cannot be read or removed stays.
fn remove_stale_partials(dir: &Path, prefix: &std::ffi::OsStr) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let prefix = prefix.as_encoded_bytes();
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let name = name.as_encoded_bytes();
        // Exactly the prefix, the random part and `.partial` (so not the
        // leftover of `NAME.toml` when writing `NAME`).
        let random = name
            .strip_prefix(prefix)
            .and_then(|rest| rest.strip_suffix(b".partial"));
        if !random.is_some_and(|r| r.len() == RANDOM_LEN && r.iter().all(u8::is_ascii_alphanumeric))
        {
            continue;
        }
        // `DirEntry::metadata` does not follow a symlink: only regular files.
        let stale = entry.metadata().is_ok_and(|meta| {
            meta.file_type().is_file()
                && meta
                    .modified()
                    .ok()
                    .and_then(|at| at.elapsed().ok())
                    .is_some_and(|age| age > STALE_PARTIAL)
        });
        if stale {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_new_file_is_private_even_behind_a_dangling_link() {
        use std::os::unix::fs::PermissionsExt;
        let temp = tempfile::tempdir().unwrap();
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        let plain = temp.path().join("plain.db");
        assert!(create_file(&plain).unwrap());
        assert!(!create_file(&plain).unwrap());
        assert_eq!(mode(&plain), 0o600);
        let target = temp.path().join("target.db");
        let link = temp.path().join("link.db");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(create_file(&link).unwrap());
        assert_eq!(mode(&target), 0o600);
        // Once the target exists, the link is an existing file.
        assert!(!create_file(&link).unwrap());
        // A link to an existing file keeps that file's mode.
        let other = temp.path().join("other.db");
        std::fs::write(&other, "").unwrap();
        std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o640)).unwrap();
        let to_other = temp.path().join("to-other.db");
        std::os::unix::fs::symlink(&other, &to_other).unwrap();
        assert!(!create_file(&to_other).unwrap());
        assert_eq!(mode(&other), 0o640);
    }

    #[cfg(unix)]
    #[test]
    fn create_with_makes_a_whole_private_file_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("scope");
        assert!(create_with(&path, b"first\n").unwrap());
        assert!(!create_with(&path, b"second\n").unwrap());
        assert_eq!(std::fs::read(&path).unwrap(), b"first\n");
        #[cfg(unix)]
        assert_eq!(mode(&path), FILE_MODE);
        // No temporary file is left beside it.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(names, ["scope"]);
    }

    #[test]
    fn a_resolved_dir_is_opened_only_through_real_directories() {
        let temp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(temp.path()).unwrap();
        std::fs::create_dir_all(root.join("skills/notes")).unwrap();
        std::fs::create_dir_all(root.join("other/notes")).unwrap();
        std::fs::write(root.join("other/notes/secret.txt"), "SECRET").unwrap();
        let notes = root.join("skills/notes");
        let dir = std::fs::File::from(open_resolved_dir(&notes).unwrap());
        assert!(dir.metadata().unwrap().is_dir());
        // A parent swapped for a link: refused, though the path still
        // leads to a directory named `notes`.
        std::fs::rename(root.join("skills"), root.join("skills.real")).unwrap();
        std::os::unix::fs::symlink(root.join("other"), root.join("skills")).unwrap();
        assert!(notes.is_dir());
        // (`ENOTDIR` on Linux: `O_DIRECTORY` meets the link first.)
        let err = open_resolved_dir(&notes).unwrap_err();
        assert!(
            [Some(nix::libc::ELOOP), Some(nix::libc::ENOTDIR)].contains(&err.raw_os_error()),
            "{err}"
        );
        // The folder itself a link: refused too.
        let linked = root.join("skills.real/linked");
        std::os::unix::fs::symlink(root.join("other/notes"), &linked).unwrap();
        assert!(open_resolved_dir(&linked).is_err());
        // Not a resolved path: refused before anything is opened.
        for path in ["relative/notes", "/tmp/../tmp"] {
            let err = open_resolved_dir(Path::new(path)).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{path}");
        }
    }

    #[test]
    fn a_write_removes_the_stale_leftovers_of_killed_writes_only() {
        let temp = tempfile::tempdir().unwrap();
        let target = temp.path().join("skills.lock");
        let stale = temp.path().join(".skills.lock.AbC123.partial");
        let fresh = temp.path().join(".skills.lock.XyZ789.partial");
        let other = temp.path().join(".skills.lock.toml.AbC123.partial");
        for file in [&stale, &fresh, &other] {
            std::fs::write(file, "half").unwrap();
        }
        let old = std::time::SystemTime::now() - STALE_PARTIAL * 2;
        for file in [&stale, &other] {
            std::fs::File::options()
                .write(true)
                .open(file)
                .unwrap()
                .set_modified(old)
                .unwrap();
        }
        write_atomically(&target, b"whole", Access::Shared).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"whole");
        assert!(!stale.exists(), "a stale leftover of this file stays");
        assert!(fresh.exists(), "a write in progress lost its file");
        assert!(other.exists(), "another file's leftover was taken");
        let left: Vec<_> = std::fs::read_dir(temp.path()).unwrap().collect();
        assert_eq!(left.len(), 3);
    }

    #[test]
    fn a_directory_or_a_missing_one_is_said_as_such() {
        let temp = tempfile::tempdir().unwrap();
        let err = write_atomically(temp.path(), b"x", Access::Output).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::IsADirectory);
        assert_eq!(err.to_string(), "it is a directory: name a file in it");
        let slash = format!("{}/new/", temp.path().display());
        let err = write_atomically(Path::new(&slash), b"x", Access::Output).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::IsADirectory);
        let missing = temp.path().join("nowhere").join("x.lock");
        let err = write_atomically(&missing, b"x", Access::Shared).unwrap_err();
        let text = err.to_string();
        assert!(text.ends_with("nowhere`: no such directory"), "{text}");
        assert!(!text.contains(".partial"), "{text}");
    }

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[cfg(unix)]
    #[test]
    fn new_folders_and_files_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("a").join("b");
        create_dir_all(&dir).unwrap();
        assert_eq!(mode(&temp.path().join("a")), 0o700);
        assert_eq!(mode(&dir), 0o700);
        let file = dir.join("f");
        assert!(create_file(&file).unwrap());
        assert!(!create_file(&file).unwrap());
        assert_eq!(mode(&file), 0o600);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        restrict_if_present(&file).unwrap();
        assert_eq!(mode(&file), 0o600);
        restrict_if_present(&dir.join("missing")).unwrap();
    }

    #[test]
    fn an_atomic_write_replaces_the_whole_file_and_leaves_nothing_else() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("config.toml");
        std::fs::write(&path, "old contents, longer than the new\n").unwrap();
        write_atomically(&path, b"new\n", Access::Owner).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new\n");
        #[cfg(unix)]
        assert_eq!(mode(&path), 0o600);
        let shared = temp.path().join("skills.lock");
        write_atomically(&shared, b"lock\n", Access::Shared).unwrap();
        let plain = temp.path().join("plain");
        std::fs::write(&plain, "").unwrap();
        #[cfg(unix)]
        assert_eq!(mode(&shared), mode(&plain), "the umask's usual mode");
        let names: Vec<_> = std::fs::read_dir(temp.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 3, "{names:?}");
    }

    #[cfg(unix)]
    #[test]
    fn a_private_files_link_is_followed_and_a_project_files_is_not() {
        let temp = tempfile::tempdir().unwrap();
        let dotfiles = temp.path().join("dotfiles");
        std::fs::create_dir(&dotfiles).unwrap();
        let real = dotfiles.join("config.toml");
        std::fs::write(&real, "old").unwrap();
        let link = temp.path().join("config.toml");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_atomically(&link, b"new", Access::Owner).unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
        // A project file's link is replaced, never followed: what it
        // points to may be anything of the user's.
        let victim = temp.path().join("authorized_keys");
        std::fs::write(&victim, "ssh-ed25519 AAAA").unwrap();
        let lock = temp.path().join("skills.lock");
        std::os::unix::fs::symlink(&victim, &lock).unwrap();
        write_atomically(&lock, b"{}", Access::Shared).unwrap();
        assert!(
            std::fs::symlink_metadata(&lock)
                .unwrap()
                .file_type()
                .is_file()
        );
        assert_eq!(std::fs::read_to_string(&lock).unwrap(), "{}");
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "ssh-ed25519 AAAA"
        );
        // An output file (`mcp export -o`): private, and its link replaced.
        let precious = temp.path().join("precious.txt");
        std::fs::write(&precious, "precious").unwrap();
        let out = temp.path().join(".mcp.json");
        std::os::unix::fs::symlink(&precious, &out).unwrap();
        write_atomically(&out, b"{\"secret\": 1}", Access::Output).unwrap();
        let meta = std::fs::symlink_metadata(&out).unwrap();
        assert!(meta.file_type().is_file());
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        }
        assert_eq!(std::fs::read_to_string(&precious).unwrap(), "precious");
        // A dangling link is an error, not a file written in its place.
        std::fs::remove_file(&real).unwrap();
        assert!(write_atomically(&link, b"x", Access::Owner).is_err());
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }

    #[test]
    fn a_failed_write_keeps_the_old_file_and_no_temporary_one() {
        let temp = tempfile::tempdir().unwrap();
        // The target is a folder: the rename fails after the temporary file
        // was written.
        let path = temp.path().join("taken");
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join("inside"), "kept").unwrap();
        assert!(write_atomically(&path, b"new", Access::Owner).is_err());
        assert_eq!(
            std::fs::read_to_string(path.join("inside")).unwrap(),
            "kept"
        );
        let names: Vec<_> = std::fs::read_dir(temp.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "{names:?}");
        // A missing folder is an error, not created here.
        let missing = temp.path().join("none").join("f");
        assert!(write_atomically(&missing, b"x", Access::Owner).is_err());
    }
}
