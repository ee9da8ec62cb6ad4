//! Files and folders only their owner may read: the `~/.cleveragents` folder,
//! the SQLite database, the trust store and the discovery scope.
//!
//! Modes are set when the file or folder is created (0700 for folders, 0600
//! for files; the umask can only remove bits from these), never changed on
//! something that already exists: a folder or database a user made shareable
//! on purpose stays as they made it. On non-Unix systems these are the
//! ordinary `std::fs` calls.

use std::fs::OpenOptions;
use std::io;
use std::path::Path;

/// The mode of every folder this tool creates.
pub const DIR_MODE: u32 = 0o700;
/// The mode of every file this tool creates.
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
pub fn create_file(path: &Path) -> io::Result<bool> {
    match open_options().write(true).create_new(true).open(path) {
        Ok(_) => Ok(true),
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => Ok(false),
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[cfg(unix)]
    #[test]
    fn new_folders_and_files_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
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
}
