//! `sandbox: strict`: the processes a `shell` or `run` call starts run under
//! Landlock.
//!
//! The rules are applied to a thread of our own, made for one spawn: Landlock
//! restricts the thread that asks (never the whole process), and a child
//! inherits the restriction of the thread that forked it, so the child and
//! all it starts are confined from their first instruction, with no code of
//! ours between fork and exec. The thread ends after the spawn.
//!
//! What the confined process may do:
//! - read, write, create and remove beneath the roots (only read and
//!   execute where the call is read-only);
//! - read and execute beneath `/usr`, `/bin`, `/sbin`, `/lib*` and read
//!   `/etc`, so programs and their libraries load;
//! - read and write `/dev/null`, `/dev/zero`, `/dev/full`, `/dev/random`,
//!   `/dev/urandom`;
//! - nothing else on the filesystem; no TCP `bind` or `connect` (Landlock
//!   ABI 4, Linux 6.7); no abstract UNIX socket or signal outside the
//!   sandbox (ABI 6, Linux 6.12).
//!
//! A kernel without Landlock refuses the call: it never runs unconfined.

use std::os::fd::AsFd;
use std::path::Path;

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};

use crate::error::{Rule, ToolError};
use crate::roots::Roots;

/// How a call's processes are confined.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Sandbox {
    /// Only the process group and the call's limits (the default).
    #[default]
    Off,
    /// Landlock: the roots (read-only when `read_only`), the system's
    /// programs and libraries, and no network.
    Strict {
        /// The roots may be read, not written.
        read_only: bool,
    },
}

/// The Landlock ABI whose rights the rules are written against: a newer
/// kernel enforces these, an older one what it has of them.
const ABI_USED: ABI = ABI::V6;

/// Read and execute: programs and their libraries.
const SYSTEM_EXEC: [&str; 7] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];

/// Read only.
const SYSTEM_READ: [&str; 1] = ["/etc"];

/// Read and write, as files.
const DEVICES: [&str; 5] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// Spawns `command` confined as `sandbox` says, inside `roots`.
pub(crate) fn spawn(
    command: &mut tokio::process::Command,
    roots: &Roots,
    sandbox: Sandbox,
) -> Result<tokio::process::Child, ToolError> {
    let Sandbox::Strict { read_only } = sandbox else {
        return command.spawn().map_err(|err| spawn_error(command, err));
    };
    let runtime = tokio::runtime::Handle::current();
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                // The child registers with the caller's runtime.
                let _runtime = runtime.enter();
                confine_this_thread(roots, read_only)?;
                command.spawn().map_err(|err| spawn_error(command, err))
            })
            .join()
            .unwrap_or_else(|_| {
                Err(ToolError::Failed(
                    "the thread starting a sandboxed process stopped".into(),
                ))
            })
    })
}

fn spawn_error(command: &tokio::process::Command, err: std::io::Error) -> ToolError {
    let program = command.as_std().get_program().to_string_lossy();
    ToolError::io("run", &program, err)
}

fn unavailable(detail: impl std::fmt::Display) -> ToolError {
    ToolError::refused(
        Rule::SandboxUnavailable,
        format!(
            "the entry asks for `sandbox: strict` and {detail}; the call is refused rather \
             than run unconfined"
        ),
    )
}

/// Restricts the calling thread (and what it forks from now on).
fn confine_this_thread(roots: &Roots, read_only: bool) -> Result<(), ToolError> {
    let failed = |err: landlock::RulesetError| unavailable(format!("Landlock failed: {err}"));
    let root_access = if read_only {
        AccessFs::from_read(ABI_USED)
    } else {
        AccessFs::from_all(ABI_USED)
    };
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(ABI_USED))
        .map_err(failed)?
        .handle_access(AccessNet::from_all(ABI_USED))
        .map_err(failed)?
        .scope(Scope::from_all(ABI_USED))
        .map_err(failed)?
        .create()
        .map_err(failed)?;
    for root in roots.fds() {
        ruleset = ruleset
            .add_rule(PathBeneath::new(root.as_fd(), root_access))
            .map_err(failed)?;
    }
    let device: BitFlags<AccessFs> = AccessFs::ReadFile | AccessFs::WriteFile;
    for (paths, access) in [
        (&SYSTEM_EXEC[..], AccessFs::from_read(ABI_USED)),
        (&SYSTEM_READ[..], AccessFs::ReadFile | AccessFs::ReadDir),
        (&DEVICES[..], device),
    ] {
        for path in paths {
            // What this system does not have is not granted.
            if let Ok(fd) = PathFd::new(Path::new(path)) {
                ruleset = ruleset
                    .add_rule(PathBeneath::new(fd, access))
                    .map_err(failed)?;
            }
        }
    }
    let status = ruleset.restrict_self().map_err(failed)?;
    enforced(status.ruleset)
}

/// The decision on what the kernel said of the rules: enforced, wholly or
/// as far as its ABI goes, the call runs; not enforced (no Landlock) it is
/// refused, never run unconfined.
fn enforced(status: RulesetStatus) -> Result<(), ToolError> {
    match status {
        RulesetStatus::FullyEnforced | RulesetStatus::PartiallyEnforced => Ok(()),
        RulesetStatus::NotEnforced => Err(unavailable("the kernel offers no Landlock")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fed the status a kernel without Landlock gives (`restrict_self`
    /// answers `NotEnforced` there), the call is refused: fail closed.
    #[test]
    fn a_kernel_without_landlock_refuses_the_call() {
        let err = enforced(RulesetStatus::NotEnforced).unwrap_err();
        assert_eq!(err.rule(), Some(Rule::SandboxUnavailable), "{err}");
        assert!(
            err.to_string().contains("rather than run unconfined"),
            "{err}"
        );
        assert!(enforced(RulesetStatus::PartiallyEnforced).is_ok());
        assert!(enforced(RulesetStatus::FullyEnforced).is_ok());
    }
}
