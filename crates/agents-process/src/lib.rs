//! The supervisor of one MCP server process: nothing the server starts
//! outlives the program that started the server, even when that program is
//! killed with SIGKILL.
//!
//! A stdio MCP server is a process of its own, and it may start more: a
//! child in its process group (`npx` → `node`), or one that left the group
//! with `setsid`. When `agents` ends normally it kills the group and the
//! processes it adopted (it is their child subreaper), but a SIGKILL of
//! `agents` runs no code of its: the server itself had a parent-death signal,
//! its children had none and lived on.
//!
//! So `agents` starts each server through a supervisor: itself again, with a
//! hidden first argument, running [`supervise`]. The supervisor
//!
//! - asks for a signal when its parent dies (`PR_SET_PDEATHSIG`, SIGTERM) and
//!   checks that the parent is still the one that started it;
//! - becomes a *child subreaper* (`PR_SET_CHILD_SUBREAPER`): every process
//!   below it whose parent dies is re-parented to it instead of to PID 1, so
//!   none leaves its tree, `setsid` or not;
//! - starts the server as its child (in its own process group, which `agents`
//!   made for it, with its standard streams), through `exec_prefix` when
//!   given: `agents` again, which arms the server's own parent-death signal
//!   before it `exec`s the server, so a SIGKILL of the supervisor takes the
//!   server with it;
//! - waits. When the server exits it kills whatever the server left behind
//!   and ends as the server did (same exit code, or the same signal). When
//!   its parent dies it kills every process below it at once.
//!
//! Signals are taken synchronously (blocked, then `sigwait`), so there is no
//! handler and no `unsafe`. What is left: a SIGKILL of the supervisor and of
//! `agents` both (each can then no longer act), and processes a server had
//! started outside its tree (through a service manager, `at`, or a daemon
//! that another program started for it).

#![deny(clippy::panic, clippy::indexing_slicing)]

use std::ffi::OsString;

/// How the supervised server ended: how the supervisor ends too, so the
/// program that started it sees the server's own exit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// It exited with this code.
    Code(i32),
    /// A signal (its number) killed it.
    Signal(i32),
}

/// Why [`supervise`] did not supervise a server.
#[derive(Debug, thiserror::Error)]
pub enum SuperviseError {
    /// The arguments are not `PARENT_PID PROGRAM [ARGS…]`.
    #[error("usage: PARENT_PID PROGRAM [ARGS...]")]
    Usage,
    /// The parent died before the parent-death signal was armed.
    #[error("the parent process is gone")]
    Orphaned,
    /// A system call the supervisor needs failed.
    #[error("cannot supervise the server: {what}: {reason}")]
    System {
        /// What was being done.
        what: &'static str,
        /// Why it failed.
        reason: String,
    },
    /// The server could not be started.
    #[error("cannot start `{program}`: {source}")]
    Spawn {
        /// The server program.
        program: String,
        /// What failed.
        source: std::io::Error,
    },
}

impl SuperviseError {
    /// A stable machine-readable kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Usage => "launch_usage",
            Self::Orphaned => "launch_orphaned",
            Self::System { .. } => "launch_signal",
            Self::Spawn { .. } => "launch_exec",
        }
    }
}

/// Runs in the supervisor process: `args` are `PARENT_PID PROGRAM
/// [ARGS…]`; `exec_prefix` (empty: none) is the command that arms the
/// server's parent-death signal and `exec`s it, given this process's pid,
/// `PROGRAM` and `ARGS` after it. Returns how the server ended, once it and
/// everything it started are gone; see the crate documentation.
pub fn supervise(args: &[OsString], exec_prefix: &[OsString]) -> Result<Ended, SuperviseError> {
    let [parent, program, rest @ ..] = args else {
        return Err(SuperviseError::Usage);
    };
    let Some(parent) = parent.to_str().and_then(|p| p.parse::<i32>().ok()) else {
        return Err(SuperviseError::Usage);
    };
    imp::supervise(parent, program, rest, exec_prefix)
}

/// Ends this process as the server ended: the caller's `main` returns the
/// exit code this gives. A signal is raised again on this process, with core
/// dumps off (the server's crash is not this program's); should the process
/// survive it (a signal whose default is to be ignored), `128 + signal`.
pub fn end_as(ended: Ended) -> std::process::ExitCode {
    match ended {
        Ended::Code(code) => std::process::ExitCode::from(u8::try_from(code & 0xff).unwrap_or(1)),
        Ended::Signal(signal) => {
            imp::raise(signal);
            std::process::ExitCode::from(u8::try_from((128 + signal) & 0xff).unwrap_or(1))
        }
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use std::collections::HashMap;
    use std::ffi::OsString;
    use std::time::Duration;

    use nix::sys::signal::{SigSet, Signal, kill};
    use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
    use nix::unistd::{Pid, getpid, getppid};

    use super::{Ended, SuperviseError};

    /// How many rounds of killing (each a scan of `/proc`, then a short
    /// wait for the killed to be gone) the supervisor makes before it gives
    /// up on a process that will not die (one in uninterruptible sleep).
    const KILL_ROUNDS: u32 = 200;

    fn system(what: &'static str) -> impl FnOnce(nix::Error) -> SuperviseError {
        move |err| SuperviseError::System {
            what,
            reason: err.desc().to_owned(),
        }
    }

    pub(super) fn supervise(
        parent: i32,
        program: &OsString,
        rest: &[OsString],
        exec_prefix: &[OsString],
    ) -> Result<Ended, SuperviseError> {
        // Taken with `sigwait`, never by a handler: blocked first (a child
        // process starts with none blocked: `Command` resets its mask).
        let mut watched = SigSet::empty();
        for signal in [
            Signal::SIGCHLD,
            Signal::SIGTERM,
            Signal::SIGINT,
            Signal::SIGHUP,
        ] {
            watched.add(signal);
        }
        watched
            .thread_block()
            .map_err(system("block the signals it waits for"))?;
        nix::sys::prctl::set_pdeathsig(Signal::SIGTERM)
            .map_err(system("set the parent-death signal"))?;
        if getppid().as_raw() != parent {
            return Err(SuperviseError::Orphaned);
        }
        nix::sys::prctl::set_child_subreaper(true)
            .map_err(system("become the subreaper of the server's processes"))?;
        let mut command = match exec_prefix.split_first() {
            Some((launcher, args)) => {
                let mut command = std::process::Command::new(launcher);
                command
                    .args(args)
                    .arg(getpid().as_raw().to_string())
                    .arg(program)
                    .args(rest);
                command
            }
            None => {
                let mut command = std::process::Command::new(program);
                command.args(rest);
                command
            }
        };
        let child = command.spawn().map_err(|source| SuperviseError::Spawn {
            program: program.to_string_lossy().into_owned(),
            source,
        })?;
        let Ok(raw) = i32::try_from(child.id()) else {
            return Err(SuperviseError::System {
                what: "start the server",
                reason: "its pid is out of range".into(),
            });
        };
        let server = Pid::from_raw(raw);
        // The child is reaped with `waitpid` below, not through `child`.
        drop(child);
        loop {
            let signal = watched.wait().map_err(system("wait for the server"))?;
            if getppid().as_raw() != parent {
                // The program that started the server is gone (SIGKILL):
                // nothing it started may outlive it.
                stop_descendants();
                return Ok(Ended::Signal(Signal::SIGKILL as i32));
            }
            if signal == Signal::SIGCHLD
                && let Some(ended) = reap(server).server
            {
                // What the server left behind goes with it.
                stop_descendants();
                return Ok(ended);
            }
            // SIGTERM, SIGINT or SIGHUP while the parent lives: sent to the
            // whole process group, so the server has it too; its exit ends
            // this loop.
        }
    }

    /// What [`reap`] found.
    struct Reaped {
        /// How the server ended, if it has.
        server: Option<Ended>,
        /// Whether a child is left (running, or stopped).
        children_left: bool,
    }

    /// Reaps every child that has ended; says how `server` ended, if it
    /// has, and whether any child is left.
    fn reap(server: Pid) -> Reaped {
        let mut ended = None;
        loop {
            match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::Exited(pid, code)) if pid == server => {
                    ended = Some(Ended::Code(code));
                }
                Ok(WaitStatus::Signaled(pid, signal, _)) if pid == server => {
                    ended = Some(Ended::Signal(signal as i32));
                }
                Ok(WaitStatus::StillAlive) => {
                    return Reaped {
                        server: ended,
                        children_left: true,
                    };
                }
                Err(_) => {
                    return Reaped {
                        server: ended,
                        children_left: false,
                    };
                }
                Ok(_) => {}
            }
        }
    }

    /// Kills (SIGKILL) every process below this one and reaps them, round
    /// after round while killing re-parents more here or one was started in
    /// between. Without a child left nothing is below it, and no `/proc`
    /// scan is made (the usual end: the server exited alone).
    pub(super) fn stop_descendants() {
        let me = getpid().as_raw();
        for round in 0..KILL_ROUNDS {
            if !reap(Pid::from_raw(0)).children_left {
                return;
            }
            let below = descendants(me);
            if below.is_empty() {
                break;
            }
            for pid in below {
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
            // The killed need a moment to be gone (and their children to
            // come here); the waits grow to 10 ms, about 2 s in all.
            std::thread::sleep(Duration::from_millis(u64::from(round.min(10))));
        }
        let _ = reap(Pid::from_raw(0));
    }

    /// The live (not zombie) processes below `root`, from `/proc`.
    fn descendants(root: i32) -> Vec<i32> {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
        for entry in entries.filter_map(Result::ok) {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|name| name.parse::<i32>().ok())
            else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            // `pid (comm) state ppid …`; comm may hold spaces and parentheses.
            let Some((_, rest)) = stat.rsplit_once(')') else {
                continue;
            };
            let mut fields = rest.split_whitespace();
            let state = fields.next();
            let Some(ppid) = fields.next().and_then(|p| p.parse::<i32>().ok()) else {
                continue;
            };
            if state != Some("Z") {
                children.entry(ppid).or_default().push(pid);
            }
        }
        let mut found = Vec::new();
        let mut next = vec![root];
        while let Some(pid) = next.pop() {
            if let Some(below) = children.remove(&pid) {
                found.extend_from_slice(&below);
                next.extend(below);
            }
        }
        found
    }

    pub(super) fn raise(signal: i32) {
        let Ok(signal) = Signal::try_from(signal) else {
            return;
        };
        // The server's crash is not this program's: no core file of it.
        let _ = nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_CORE, 0, 0);
        let mut set = SigSet::empty();
        set.add(signal);
        let _ = set.thread_unblock();
        let _ = nix::sys::signal::raise(signal);
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use std::ffi::OsString;

    use super::{Ended, SuperviseError};

    /// Elsewhere: the server runs as a child and its end is passed on;
    /// nothing more is watched.
    pub(super) fn supervise(
        _parent: i32,
        program: &OsString,
        rest: &[OsString],
        _exec_prefix: &[OsString],
    ) -> Result<Ended, SuperviseError> {
        let status = std::process::Command::new(program)
            .args(rest)
            .status()
            .map_err(|source| SuperviseError::Spawn {
                program: program.to_string_lossy().into_owned(),
                source,
            })?;
        Ok(Ended::Code(status.code().unwrap_or(1)))
    }

    pub(super) fn raise(_signal: i32) {}
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn bad_arguments_are_a_usage_error() {
        assert!(matches!(supervise(&[], &[]), Err(SuperviseError::Usage)));
        assert!(matches!(
            supervise(&["x".into(), "sh".into()], &[]),
            Err(SuperviseError::Usage)
        ));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_supervisor_whose_parent_is_not_the_one_named_starts_nothing() {
        let temp = tempfile::tempdir().unwrap();
        let marker = temp.path().join("ran");
        // pid 1 is nobody's parent here.
        let outcome = supervise(
            &[
                "1".into(),
                "/bin/sh".into(),
                "-c".into(),
                format!("touch {}", marker.display()).into(),
            ],
            &[],
        );
        assert!(matches!(outcome, Err(SuperviseError::Orphaned)));
        assert!(!marker.exists());
    }
}
