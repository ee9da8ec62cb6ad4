//! Reading a file a command was given as input (a skill, tool, plan or
//! export file, a client's MCP file, a lock file): a regular file, or `-`
//! for standard input, and never more than a limit.
//!
//! A named pipe (FIFO) would block the open until someone writes to it, and
//! a device such as `/dev/zero` never ends: both are refused by their type
//! before anything is read. A regular file is refused by its size before it
//! is read, and read to one byte past the limit at most (it may grow).

use std::io::{self, Read as _};
use std::path::{Path, PathBuf};

/// What [`read_input`] read.
#[derive(Debug)]
pub struct Input {
    /// The content, at most the limit.
    pub bytes: Vec<u8>,
    /// The file's metadata as opened (owner, mode); `None` for standard input.
    pub metadata: Option<std::fs::Metadata>,
}

/// Why [`read_input`] read nothing.
#[derive(Debug)]
pub enum InputError {
    /// The file could not be opened or read.
    Io {
        /// The path as given.
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
    /// The path names something other than a regular file.
    NotAFile {
        /// The path as given.
        path: PathBuf,
        /// What it is (`a named pipe (FIFO)`, `a character device`, …).
        what: &'static str,
    },
    /// The file is larger than the limit.
    TooLarge {
        /// The path as given (`-` for standard input).
        path: PathBuf,
        /// Its size; a lower bound when not `exact` (a stream read to the
        /// limit and one byte more).
        size: u64,
        /// Whether `size` is the file's size.
        exact: bool,
        /// The limit it passed.
        limit: u64,
    },
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Io { path, source } => write!(f, "cannot read `{}`: {source}", path.display()),
            Self::NotAFile { path, what } => write!(
                f,
                "cannot read `{}`: it is {what}, not a regular file (give a file, or `-` for standard input)",
                path.display()
            ),
            Self::TooLarge {
                path, size, limit, ..
            } => write!(
                f,
                "`{}` is larger than {limit} bytes ({size}{} bytes)",
                path.display(),
                if self.exact() { "" } else { " or more" }
            ),
        }
    }
}

impl std::error::Error for InputError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl InputError {
    fn exact(&self) -> bool {
        matches!(self, Self::TooLarge { exact: true, .. })
    }
}

/// Whether `path` names standard input (`-`).
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Reads the input file `path` (`-`: standard input), at most `limit`
/// bytes; see the module documentation for what is refused.
pub fn read_input(path: &Path, limit: u64) -> Result<Input, InputError> {
    let io_error = |source: io::Error| InputError::Io {
        path: path.to_path_buf(),
        source,
    };
    if is_stdin(path) {
        let bytes = read_bounded(io::stdin().lock(), 0, limit, path).map_err(|err| match err {
            Bounded::Io(source) => io_error(source),
            Bounded::TooLarge(err) => err,
        })?;
        return Ok(Input {
            bytes,
            metadata: None,
        });
    }
    // Its type first, without opening it: opening a named pipe waits for a
    // writer, and opening a device can have effects of its own.
    let before = std::fs::metadata(path).map_err(io_error)?;
    check_regular(path, &before, limit)?;
    // Swapped for a pipe since? Opened without waiting, and checked again.
    let file = open_nonblocking(path).map_err(io_error)?;
    let metadata = file.metadata().map_err(io_error)?;
    check_regular(path, &metadata, limit)?;
    let bytes = read_bounded(file, metadata.len(), limit, path).map_err(|err| match err {
        Bounded::Io(source) => io_error(source),
        Bounded::TooLarge(err) => err,
    })?;
    Ok(Input {
        bytes,
        metadata: Some(metadata),
    })
}

/// Refuses anything but a regular file of at most `limit` bytes.
fn check_regular(path: &Path, metadata: &std::fs::Metadata, limit: u64) -> Result<(), InputError> {
    if !metadata.is_file() {
        return Err(InputError::NotAFile {
            path: path.to_path_buf(),
            what: kind_of(&metadata.file_type()),
        });
    }
    if metadata.len() > limit {
        return Err(InputError::TooLarge {
            path: path.to_path_buf(),
            size: metadata.len(),
            exact: true,
            limit,
        });
    }
    Ok(())
}

/// What a file that is not a regular one is, in words.
fn kind_of(file_type: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a named pipe (FIFO)";
        }
        if file_type.is_char_device() {
            return "a character device";
        }
        if file_type.is_block_device() {
            return "a block device";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    if file_type.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// Opens `path` for reading without waiting for a named pipe's writer
/// (`O_NONBLOCK`, which changes nothing for a regular file's reads) and
/// without making a terminal this process's controlling one.
fn open_nonblocking(path: &Path) -> io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use nix::fcntl::OFlag;
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags((OFlag::O_NONBLOCK | OFlag::O_NOCTTY).bits());
    }
    options.open(path)
}

enum Bounded {
    Io(io::Error),
    TooLarge(InputError),
}

/// Reads `reader` to its end or to one byte past `limit`, whichever comes
/// first; `known` is its size when known (the buffer is then made once).
fn read_bounded(
    reader: impl io::Read,
    known: u64,
    limit: u64,
    path: &Path,
) -> Result<Vec<u8>, Bounded> {
    let capacity = usize::try_from(known.min(limit).saturating_add(1)).unwrap_or(0);
    let mut bytes = Vec::with_capacity(capacity);
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(Bounded::Io)?;
    let size = bytes.len() as u64;
    if size > limit {
        return Err(Bounded::TooLarge(InputError::TooLarge {
            path: path.to_path_buf(),
            size,
            exact: false,
            limit,
        }));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_regular_file_is_read_within_its_limit() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("skill.yaml");
        std::fs::write(&path, "name: a/b\n").unwrap();
        let input = read_input(&path, 10).unwrap();
        assert_eq!(input.bytes, b"name: a/b\n");
        assert!(input.metadata.is_some());
        let err = read_input(&path, 9).unwrap_err();
        assert!(
            matches!(
                err,
                InputError::TooLarge {
                    size: 10,
                    exact: true,
                    limit: 9,
                    ..
                }
            ),
            "{err}"
        );
        assert!(
            err.to_string()
                .ends_with("is larger than 9 bytes (10 bytes)")
        );
    }

    #[cfg(unix)]
    #[test]
    fn pipes_devices_and_folders_are_refused_unread() {
        let temp = tempfile::tempdir().unwrap();
        let fifo = temp.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        // Nobody writes to it: a reader that opened it would wait forever.
        let err = read_input(&fifo, 100).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "cannot read `{}`: it is a named pipe (FIFO), not a regular file (give a file, or `-` for standard input)",
                fifo.display()
            )
        );
        let err = read_input(Path::new("/dev/zero"), 1 << 30).unwrap_err();
        assert!(
            matches!(
                err,
                InputError::NotAFile {
                    what: "a character device",
                    ..
                }
            ),
            "{err}"
        );
        let err = read_input(temp.path(), 100).unwrap_err();
        assert!(
            matches!(
                err,
                InputError::NotAFile {
                    what: "a directory",
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn a_stream_is_read_one_byte_past_its_limit_at_most() {
        let endless = io::repeat(b'x');
        let outcome = read_bounded(endless, 0, 1000, Path::new("-"));
        assert!(matches!(
            &outcome,
            Err(Bounded::TooLarge(InputError::TooLarge {
                size: 1001,
                exact: false,
                ..
            }))
        ));
        if let Err(Bounded::TooLarge(err)) = outcome {
            assert!(err.to_string().ends_with("(1001 or more bytes)"));
        }
    }
}
