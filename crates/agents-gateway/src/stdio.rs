//! Standard input and output for the stdio gateway, read and written on the
//! runtime's own threads.
//!
//! `tokio::io::stdin()`/`stdout()` run every read and write on tokio's
//! blocking pool: each message hopped threads (11 context switches, 16
//! futex calls per proxied call; 54% of the time in the kernel). Here a pipe
//! or a Unix socket (what MCP clients launch a server with: Python's
//! `subprocess` gives pipes, Node's `child_process` socket pairs) is driven by
//! tokio's reactor instead, with no thread of its own:
//!
//! - a pipe is opened again through `/proc/self/fd/N`, which gives the
//!   gateway its own open file description: `O_NONBLOCK` on it changes
//!   nothing for the process's standard streams or whoever shares them;
//! - a socket cannot be opened again: a duplicate of it is made non-blocking
//!   (which the other holders of the same description see, the client being
//!   on the other end, not among them) and blocking again when the
//!   transport is dropped ([`Restore`]);
//! - anything else (a terminal, a file, `/dev/null`) keeps tokio's blocking
//!   handles.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The client's end of a stdio session: what reads standard input.
#[derive(Debug)]
pub(crate) enum Input {
    Pipe(tokio::net::unix::pipe::Receiver),
    Socket {
        socket: tokio::net::UnixStream,
        _restore: Restore,
    },
    Blocking(tokio::io::Stdin),
}

/// What writes standard output.
#[derive(Debug)]
pub(crate) enum Output {
    Pipe(tokio::net::unix::pipe::Sender),
    Socket {
        socket: tokio::net::UnixStream,
        _restore: Restore,
    },
    Blocking(tokio::io::Stdout),
}

/// Standard input and output as the reactor can drive them (see the module
/// docs); must be called within a tokio runtime.
pub(crate) fn stdio() -> (Input, Output) {
    let input = match kind(io::stdin().as_fd()) {
        Kind::Pipe(path) => reopened(&path, false)
            .and_then(|file| tokio::net::unix::pipe::Receiver::from_file(file).ok())
            .map(Input::Pipe),
        Kind::Socket(fd) => socket(fd).map(|(socket, restore)| Input::Socket {
            socket,
            _restore: restore,
        }),
        Kind::Other => None,
    };
    let output = match kind(io::stdout().as_fd()) {
        Kind::Pipe(path) => reopened(&path, true)
            .and_then(|file| tokio::net::unix::pipe::Sender::from_file(file).ok())
            .map(Output::Pipe),
        Kind::Socket(fd) => socket(fd).map(|(socket, restore)| Output::Socket {
            socket,
            _restore: restore,
        }),
        Kind::Other => None,
    };
    (
        input.unwrap_or_else(|| Input::Blocking(tokio::io::stdin())),
        output.unwrap_or_else(|| Output::Blocking(tokio::io::stdout())),
    )
}

enum Kind {
    /// A pipe, reachable again at this path.
    Pipe(String),
    /// A socket, duplicated.
    Socket(OwnedFd),
    Other,
}

fn kind(fd: std::os::fd::BorrowedFd<'_>) -> Kind {
    use std::os::fd::AsRawFd;
    let Ok(file) = fd.try_clone_to_owned().map(File::from) else {
        return Kind::Other;
    };
    let Ok(metadata) = file.metadata() else {
        return Kind::Other;
    };
    let file_type = metadata.file_type();
    if file_type.is_fifo() {
        Kind::Pipe(format!("/proc/self/fd/{}", fd.as_raw_fd()))
    } else if file_type.is_socket() {
        Kind::Socket(OwnedFd::from(file))
    } else {
        Kind::Other
    }
}

/// The pipe at `path` opened again, non-blocking from the start (opening
/// the reading end of a pipe whose writers are gone would otherwise wait).
fn reopened(path: &str, write: bool) -> Option<File> {
    std::fs::OpenOptions::new()
        .read(!write)
        .write(write)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)
        .ok()
}

/// A duplicate of a stream socket, non-blocking for the reactor, and what
/// makes it blocking again.
fn socket(fd: OwnedFd) -> Option<(tokio::net::UnixStream, Restore)> {
    let socket = std::os::unix::net::UnixStream::from(fd);
    let restore = Restore(socket.try_clone().ok()?);
    socket.set_nonblocking(true).ok()?;
    let socket = tokio::net::UnixStream::from_std(socket).ok()?;
    Some((socket, restore))
}

/// Makes a standard stream's socket blocking again when dropped: its open
/// file description is shared with the process's own descriptor 0 or 1.
#[derive(Debug)]
pub(crate) struct Restore(std::os::unix::net::UnixStream);

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = self.0.set_nonblocking(false);
    }
}

impl AsyncRead for Input {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Pipe(pipe) => Pin::new(pipe).poll_read(cx, buf),
            Self::Socket { socket, .. } => Pin::new(socket).poll_read(cx, buf),
            Self::Blocking(stdin) => Pin::new(stdin).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Output {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Self::Pipe(pipe) => Pin::new(pipe).poll_write(cx, buf),
            Self::Socket { socket, .. } => Pin::new(socket).poll_write(cx, buf),
            Self::Blocking(stdout) => Pin::new(stdout).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Pipe(pipe) => Pin::new(pipe).poll_flush(cx),
            Self::Socket { socket, .. } => Pin::new(socket).poll_flush(cx),
            Self::Blocking(stdout) => Pin::new(stdout).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Pipe(pipe) => Pin::new(pipe).poll_shutdown(cx),
            // Shutting the socket down would end the client's reading
            // too early for nothing: the descriptor is closed on drop.
            Self::Socket { .. } => Poll::Ready(Ok(())),
            Self::Blocking(stdout) => Pin::new(stdout).poll_shutdown(cx),
        }
    }
}
