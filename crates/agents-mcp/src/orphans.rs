//! Processes that left a server's process group (a grandchild that called
//! `setsid`) escape `killpg`. On Linux this process can make itself their
//! *child subreaper*: when their parent dies they are re-parented here instead
//! of to PID 1, and [`stop_adopted`] finds and kills them at exit.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set once this process has started a server: only then can it have
/// adopted orphans, so a run that started none skips the `/proc` scan at
/// exit (a few milliseconds per hundred processes on the machine).
static SPAWNED: AtomicBool = AtomicBool::new(false);

/// Records that a server process is about to be started.
pub(crate) fn note_spawn() {
    SPAWNED.store(true, Ordering::Relaxed);
}

/// Makes this process the subreaper of its descendants (Linux; elsewhere a
/// no-op returning `false`). Call once at program start, before starting any
/// server; it changes this whole process, which is why the library never does
/// it on its own.
pub fn adopt_orphans() -> bool {
    #[cfg(target_os = "linux")]
    {
        nix::sys::prctl::set_child_subreaper(true).is_ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// Kills (SIGKILL) and reaps every child process of this process, repeating
/// while killing one re-parents its own children here; returns how many were
/// killed. Meant for the end of a program that called [`adopt_orphans`] and
/// has no children of its own left: every MCP server this crate starts is
/// stopped and reaped before its fetch returns, so what is left are orphans.
/// Free when this process never started a server.
pub fn stop_adopted() -> usize {
    if !SPAWNED.load(Ordering::Relaxed) {
        return 0;
    }
    #[cfg(target_os = "linux")]
    {
        use nix::sys::signal::{Signal, kill};
        use nix::sys::wait::waitpid;
        use nix::unistd::Pid;
        let mut killed = 0;
        // Each round kills one generation; a few rounds cover any real tree.
        for _ in 0..16 {
            let children = children_of(std::process::id());
            if children.is_empty() {
                break;
            }
            for pid in children {
                let Ok(raw) = i32::try_from(pid) else {
                    continue;
                };
                let pid = Pid::from_raw(raw);
                if kill(pid, Signal::SIGKILL).is_ok() {
                    killed += 1;
                }
                // Our own child: collect it so it does not stay a zombie.
                let _ = waitpid(pid, None);
            }
        }
        killed
    }
    #[cfg(not(target_os = "linux"))]
    {
        0
    }
}

/// Pids whose parent is `parent`, from `/proc/*/stat`.
#[cfg(target_os = "linux")]
fn children_of(parent: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| {
                    // `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
                    let (_, rest) = stat.rsplit_once(')')?;
                    rest.split_whitespace().nth(1)?.parse::<u32>().ok()
                })
                == Some(parent)
        })
        .collect()
}
