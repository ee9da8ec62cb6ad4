//! `read_file`, `write_file`, `edit_file` and `list_dir`.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write as _};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};
use rustix::io::Errno;

use crate::error::{Rule, ToolError, shown};
use crate::output::Collector;
use crate::roots::Roots;
use crate::spec::{EditFileArgs, ListDirArgs, ReadFileArgs, WriteFileArgs};
use crate::{Limits, ToolOutput};

/// How much of a file's start is looked at for a NUL, the mark of a binary
/// file.
const SNIFF_BYTES: usize = 8192;

pub(crate) fn read_file(
    roots: &Roots,
    limits: &Limits,
    args: ReadFileArgs,
) -> Result<ToolOutput, ToolError> {
    if args.limit == Some(0) {
        return Err(ToolError::InvalidArguments {
            tool: "read_file".into(),
            message: "`limit` must be at least 1".into(),
        });
    }
    let place = roots.locate(&args.path)?;
    // `O_NONBLOCK`: opening a FIFO does not wait for a writer (it is then
    // refused as not a regular file).
    let fd = roots.open(&place, OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY)?;
    let stat = rustix::fs::fstat(&fd).map_err(|err| ToolError::io("read", &args.path, err))?;
    regular(&stat, &args.path)?;
    let mut reader = BufReader::new(File::from(fd));
    let head = reader
        .fill_buf()
        .map_err(|err| ToolError::io("read", &args.path, err))?;
    if head.iter().take(SNIFF_BYTES).any(|&b| b == 0) {
        return Err(ToolError::Failed(format!(
            "`{}` is a binary file ({} bytes); `read_file` shows text",
            shown(&args.path),
            stat.st_size
        )));
    }
    let offset = args.offset.unwrap_or(0);
    let mut line = Vec::new();
    let mut number = 0u64;
    let mut read_line = |line: &mut Vec<u8>| -> Result<bool, ToolError> {
        line.clear();
        let n = reader
            .read_until(b'\n', line)
            .map_err(|err| ToolError::io("read", &args.path, err))?;
        Ok(n > 0)
    };
    while number < offset {
        if !read_line(&mut line)? {
            return Ok(ToolOutput::text(
                format!(
                    "[`{}` has {number} lines; nothing at offset {offset}]\n",
                    shown(&args.path)
                ),
                false,
            ));
        }
        number += 1;
    }
    let mut out = Collector::new(limits.max_output_bytes);
    let last = args
        .limit
        .map_or(u64::MAX, |limit| offset.saturating_add(limit));
    while number < last && read_line(&mut line)? {
        if !out.partial(&String::from_utf8_lossy(&line)) {
            let note = format!(
                "cut: the output reached its limit of {} bytes in line {}; read on with `offset` {number}",
                limits.max_output_bytes,
                number + 1
            );
            return Ok(finish(out, note));
        }
        number += 1;
    }
    if number == last && read_line(&mut line)? {
        let note = format!("more lines follow; read on with `offset` {number}");
        let (mut text, _) = out.finish(String::new);
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!("[{note}]\n"));
        return Ok(ToolOutput::text(text, false));
    }
    let (text, truncated) = out.finish(String::new);
    Ok(ToolOutput::text(text, truncated))
}

fn finish(out: Collector, note: String) -> ToolOutput {
    let (text, truncated) = out.finish(|| note);
    ToolOutput::text(text, truncated)
}

pub(crate) fn write_file(roots: &Roots, args: WriteFileArgs) -> Result<ToolOutput, ToolError> {
    let place = roots.locate(&args.path)?;
    let (parent, name) = roots.open_parent(&place, true)?;
    let existing = target(parent.as_fd(), &name, &args.path)?;
    let mode = existing
        .as_ref()
        .map(|stat| Mode::from_raw_mode(stat.st_mode & 0o777));
    replace(
        parent.as_fd(),
        &name,
        args.content.as_bytes(),
        mode,
        None,
        &args.path,
    )?;
    let verb = if existing.is_some() {
        "replaced"
    } else {
        "created"
    };
    Ok(ToolOutput::text(
        format!(
            "{verb} `{}` ({} bytes)\n",
            shown(&args.path),
            args.content.len()
        ),
        false,
    ))
}

pub(crate) fn edit_file(
    roots: &Roots,
    limits: &Limits,
    args: EditFileArgs,
) -> Result<ToolOutput, ToolError> {
    if args.old.is_empty() {
        return Err(ToolError::InvalidArguments {
            tool: "edit_file".into(),
            message: "`old` is empty; give the exact text to replace".into(),
        });
    }
    let place = roots.locate(&args.path)?;
    let (parent, name) = roots.open_parent(&place, false)?;
    if target(parent.as_fd(), &name, &args.path)?.is_none() {
        return Err(ToolError::io("edit", &args.path, Errno::NOENT));
    }
    let fd = rustix::fs::openat(
        &parent,
        &name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|err| open_error(err, &args.path))?;
    let before = rustix::fs::fstat(&fd).map_err(|err| ToolError::io("read", &args.path, err))?;
    writable(&before, &args.path)?;
    if before.st_size as u64 > limits.max_edit_bytes {
        return Err(ToolError::Failed(format!(
            "`{}` is {} bytes; `edit_file` edits files of at most {} bytes",
            shown(&args.path),
            before.st_size,
            limits.max_edit_bytes
        )));
    }
    let mut bytes = Vec::new();
    File::from(fd)
        .take(limits.max_edit_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|err| ToolError::io("read", &args.path, err))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| ToolError::Failed(format!("`{}` is not UTF-8 text", shown(&args.path))))?;
    let count = text.matches(args.old.as_str()).count();
    if count != 1 {
        return Err(ToolError::Matches {
            path: shown(&args.path),
            count,
        });
    }
    let edited = text.replacen(args.old.as_str(), &args.new, 1);
    let mode = Mode::from_raw_mode(before.st_mode & 0o777);
    replace(
        parent.as_fd(),
        &name,
        edited.as_bytes(),
        Some(mode),
        Some(&before),
        &args.path,
    )?;
    Ok(ToolOutput::text(
        format!("replaced 1 match in `{}`\n", shown(&args.path)),
        false,
    ))
}

pub(crate) fn list_dir(
    roots: &Roots,
    limits: &Limits,
    args: ListDirArgs,
) -> Result<ToolOutput, ToolError> {
    let place = roots.locate(&args.path)?;
    let fd = roots.open(&place, OFlags::RDONLY | OFlags::DIRECTORY)?;
    let dir =
        rustix::fs::Dir::read_from(&fd).map_err(|err| ToolError::io("list", &args.path, err))?;
    let mut entries = Vec::new();
    for entry in dir {
        let entry = entry.map_err(|err| ToolError::io("list", &args.path, err))?;
        let name = entry.file_name().to_bytes();
        if name != b"." && name != b".." {
            entries.push((name.to_vec(), entry.file_type()));
        }
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = Collector::new(limits.max_output_bytes);
    let total = entries.len();
    for (shown_count, (name, kind)) in entries.iter().enumerate() {
        let name = OsStr::from_bytes(name);
        let text = agents_core::text::escape_control(&name.to_string_lossy()).into_owned();
        let stat = rustix::fs::statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW).ok();
        let kind = stat
            .as_ref()
            .map_or(*kind, |stat| FileType::from_raw_mode(stat.st_mode));
        let line = match kind {
            FileType::Directory => format!("{text}/"),
            FileType::Symlink => {
                let target = rustix::fs::readlinkat(&fd, name, Vec::new())
                    .map(|t| agents_core::text::escape_control(&t.to_string_lossy()).into_owned())
                    .unwrap_or_else(|_| "?".into());
                format!("{text} -> {target}")
            }
            FileType::RegularFile => match &stat {
                Some(stat) => format!("{text} ({} bytes)", stat.st_size),
                None => text,
            },
            FileType::Fifo => format!("{text} (fifo)"),
            FileType::Socket => format!("{text} (socket)"),
            FileType::CharacterDevice | FileType::BlockDevice => format!("{text} (device)"),
            _ => text,
        };
        if !out.line(&line) {
            let note = format!(
                "cut: {} more entries not shown ({total} in all)",
                total - shown_count
            );
            return Ok(finish(out, note));
        }
    }
    if out.is_empty() {
        return Ok(ToolOutput::text("[empty directory]\n".into(), false));
    }
    let (text, truncated) = out.finish(String::new);
    Ok(ToolOutput::text(text, truncated))
}

/// What `name` in `parent` is now, for a tool about to replace it: `None`
/// when it does not exist; refused when it is a link, not a regular file,
/// or has other hard links.
fn target(parent: BorrowedFd<'_>, name: &OsStr, path: &str) -> Result<Option<Stat>, ToolError> {
    match rustix::fs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => {
            writable(&stat, path)?;
            Ok(Some(stat))
        }
        Err(Errno::NOENT) => Ok(None),
        Err(err) => Err(ToolError::io("look at", path, err)),
    }
}

fn regular(stat: &Stat, path: &str) -> Result<(), ToolError> {
    match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => Ok(()),
        FileType::Directory => Err(ToolError::Failed(format!(
            "`{}` is a directory",
            shown(path)
        ))),
        _ => Err(ToolError::Failed(format!(
            "`{}` is not a regular file",
            shown(path)
        ))),
    }
}

/// A file the tools may replace: a regular file with one link.
fn writable(stat: &Stat, path: &str) -> Result<(), ToolError> {
    if FileType::from_raw_mode(stat.st_mode) == FileType::Symlink {
        return Err(ToolError::refused(
            Rule::SymlinkWrite,
            format!(
                "`{}` is a symbolic link; the tools write regular files only",
                shown(path)
            ),
        ));
    }
    regular(stat, path)?;
    if stat.st_nlink > 1 {
        return Err(ToolError::refused(
            Rule::HardLink,
            format!(
                "`{}` has {} hard links; another name (maybe outside the roots) shares its contents",
                shown(path),
                stat.st_nlink
            ),
        ));
    }
    Ok(())
}

fn open_error(err: Errno, path: &str) -> ToolError {
    if err == Errno::LOOP {
        ToolError::refused(
            Rule::SymlinkWrite,
            format!(
                "`{}` is a symbolic link; the tools write regular files only",
                shown(path)
            ),
        )
    } else {
        ToolError::io("open", path, err)
    }
}

/// Names of temporary files, unique in this process.
static NEXT_TEMP: AtomicU64 = AtomicU64::new(0);

/// Replaces `name` in `parent` with `content`: written to a new file in the
/// same directory, flushed, given `mode` (or the umask's for a new file),
/// then renamed over `name` (a reader sees the old file or the new one,
/// never half of one). With `was`, refused when `name` changed since it
/// was read.
fn replace(
    parent: BorrowedFd<'_>,
    name: &OsStr,
    content: &[u8],
    mode: Option<Mode>,
    was: Option<&Stat>,
    path: &str,
) -> Result<(), ToolError> {
    let (temp, fd) = create_temp(parent, path)?;
    let written = fill(fd, content, mode).and_then(|()| {
        if let Some(was) = was {
            let now = rustix::fs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW)?;
            let same = (
                now.st_dev,
                now.st_ino,
                now.st_size,
                now.st_mtime,
                now.st_mtime_nsec,
            ) == (
                was.st_dev,
                was.st_ino,
                was.st_size,
                was.st_mtime,
                was.st_mtime_nsec,
            );
            if !same {
                return Err(Errno::STALE);
            }
        }
        rustix::fs::renameat(parent, &temp, parent, name)
    });
    written.map_err(|err| {
        let _ = rustix::fs::unlinkat(parent, &temp, AtFlags::empty());
        if err == Errno::STALE {
            ToolError::Failed(format!(
                "`{}` changed while it was being edited; nothing was written",
                shown(path)
            ))
        } else {
            ToolError::io("write", path, err)
        }
    })
}

fn create_temp(parent: BorrowedFd<'_>, path: &str) -> Result<(String, OwnedFd), ToolError> {
    loop {
        let temp = format!(
            ".agents-tools.{}.{}.tmp",
            std::process::id(),
            NEXT_TEMP.fetch_add(1, Ordering::Relaxed)
        );
        match rustix::fs::openat(
            parent,
            &temp,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o666),
        ) {
            Ok(fd) => return Ok((temp, fd)),
            Err(Errno::EXIST) => continue,
            Err(err) => return Err(ToolError::io("write", path, err)),
        }
    }
}

fn fill(fd: OwnedFd, content: &[u8], mode: Option<Mode>) -> Result<(), Errno> {
    if let Some(mode) = mode {
        rustix::fs::fchmod(&fd, mode)?;
    }
    let mut file = File::from(fd);
    file.write_all(content).map_err(errno)?;
    file.sync_all().map_err(errno)
}

fn errno(err: std::io::Error) -> Errno {
    Errno::from_io_error(&err).unwrap_or(Errno::IO)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A write goes to the directory its parent was resolved to, even when
    /// that directory has since been moved and a link out put in its place.
    #[test]
    fn a_write_lands_where_its_parent_was_resolved() {
        for walk in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let (root, outside) = (dir.path().join("root"), dir.path().join("outside"));
            std::fs::create_dir_all(root.join("d")).unwrap();
            std::fs::create_dir(&outside).unwrap();
            let roots = Roots::new([&root]).unwrap();
            let roots = if walk { roots.walking() } else { roots };
            let place = roots.locate("d/f").unwrap();
            let (parent, name) = roots.open_parent(&place, false).unwrap();
            // Mid-call: `d` moved aside, a link out in its place.
            std::fs::rename(root.join("d"), root.join("moved")).unwrap();
            symlink(&outside, root.join("d")).unwrap();
            replace(parent.as_fd(), &name, b"x", None, None, "d/f").unwrap();
            assert_eq!(std::fs::read(root.join("moved/f")).unwrap(), b"x");
            assert!(!outside.join("f").exists());
            // A new call resolves again, and is refused.
            let err = roots
                .open_parent(&roots.locate("d/f").unwrap(), false)
                .unwrap_err();
            assert_eq!(err.rule(), Some(Rule::SymlinkEscape), "{err}");
        }
    }
}
