//! The parent-death signal, without `unsafe`.
//!
//! On Linux a child can ask the kernel to send it a signal when its parent
//! dies (`PR_SET_PDEATHSIG`), which covers the one exit no handler sees:
//! SIGKILL of `agents`. Setting it between `fork` and `exec` needs a
//! `pre_exec` hook, which is `unsafe`. Instead the embedding program can act
//! as its own launcher: [`FetchOptions::launcher`](crate::FetchOptions) names
//! a command (the program itself with a hidden first argument) that
//! [`exec_server`] runs as: set the parent-death signal, check the parent is
//! still the one that started it (it may have died before the signal was
//! armed), then `exec` the server in place — same pid, same process group,
//! same environment and working directory.
//!
//! `agents` names itself as a supervisor (`agents-process`), which starts the
//! server through [`exec_server`] in turn, so the server dies with it.
//!
//! The signal fires when the *thread* that spawned the child exits. Servers
//! are spawned from the future the program blocks on or from runtime worker
//! threads, which live as long as the program, so this is the process's death.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// How to start servers through a launcher.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launcher {
    /// The launcher program (usually `std::env::current_exe()`).
    pub program: PathBuf,
    /// Arguments before the launcher's own (`[parent pid, server program, args…]`).
    pub args: Vec<OsString>,
}

impl LaunchError {
    /// A stable machine-readable kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Usage => "launch_usage",
            Self::Orphaned => "launch_orphaned",
            Self::Signal(_) => "launch_signal",
            Self::Exec { .. } => "launch_exec",
        }
    }
}

/// Why [`exec_server`] did not become the server.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The arguments are not `PARENT_PID PROGRAM [ARGS…]`.
    #[error("usage: PARENT_PID PROGRAM [ARGS...]")]
    Usage,
    /// The parent died before the parent-death signal was armed.
    #[error("the parent process is gone")]
    Orphaned,
    /// The parent-death signal could not be set.
    #[error("cannot set the parent-death signal: {0}")]
    Signal(String),
    /// `exec` failed.
    #[error("cannot start `{program}`: {source}")]
    Exec {
        /// The server program.
        program: String,
        /// What failed.
        source: std::io::Error,
    },
}

/// Runs in the launcher process: arms the parent-death signal and replaces
/// this process with the server. Returns only on failure.
pub fn exec_server(args: &[OsString]) -> LaunchError {
    let [parent, program, rest @ ..] = args else {
        return LaunchError::Usage;
    };
    let Some(parent) = parent.to_str().and_then(|p| p.parse::<i32>().ok()) else {
        return LaunchError::Usage;
    };
    #[cfg(target_os = "linux")]
    {
        if let Err(err) = nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL) {
            return LaunchError::Signal(err.to_string());
        }
        if nix::unistd::getppid().as_raw() != parent {
            return LaunchError::Orphaned;
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = parent;
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let source = std::process::Command::new(program).args(rest).exec();
        LaunchError::Exec {
            program: program.to_string_lossy().into_owned(),
            source,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (program, rest);
        LaunchError::Signal("not supported on this platform".into())
    }
}

/// Finds `command` the way `exec` would (a path, or a name searched in
/// `path`), so a launcher's failure to start it is reported before the
/// launcher runs: `Err` is `command not found` or `permission denied`.
pub(crate) fn resolve_program(command: &str, path: Option<&str>) -> Result<PathBuf, String> {
    let executable = |candidate: &Path| -> Result<(), String> {
        let metadata = std::fs::metadata(candidate).map_err(|_| "command not found".to_owned())?;
        if !metadata.is_file() {
            return Err("permission denied".into());
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            if metadata.permissions().mode() & 0o111 == 0 {
                return Err("permission denied".into());
            }
        }
        Ok(())
    };
    if command.contains('/') {
        let candidate = PathBuf::from(command);
        executable(&candidate)?;
        return Ok(candidate);
    }
    for dir in path.unwrap_or_default().split(':') {
        let dir = if dir.is_empty() { "." } else { dir };
        let candidate = Path::new(dir).join(command);
        if executable(&candidate).is_ok() {
            return Ok(candidate);
        }
    }
    Err("command not found".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_found_like_exec_finds_them() {
        assert!(resolve_program("sh", Some("/nonexistent:/bin:/usr/bin")).is_ok());
        assert_eq!(
            resolve_program("no-such-program-here", Some("/bin")).unwrap_err(),
            "command not found"
        );
        assert_eq!(
            resolve_program("/nonexistent/node", None).unwrap_err(),
            "command not found"
        );
        assert_eq!(resolve_program("/", None).unwrap_err(), "permission denied");
    }

    #[test]
    fn bad_arguments_are_a_usage_error() {
        assert!(matches!(exec_server(&[]), LaunchError::Usage));
        assert!(matches!(
            exec_server(&["x".into(), "sh".into()]),
            LaunchError::Usage
        ));
    }
}
