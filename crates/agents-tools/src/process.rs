//! Processes the tools start (`shell`, git): each in a process group of its
//! own, its output read to a bound, the whole group killed when the call
//! times out, is cancelled or dropped, and when its first process exits
//! (what it left running in the background goes too).
//!
//! A process that leaves the group (`setsid`, `setpgid`) is beyond this;
//! `sandbox: strict` ([`crate::sandbox`]) confines what it can reach.

use std::os::fd::{AsRawFd, OwnedFd};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use rustix::fs::OFlags;
use rustix::process::{Pid, Signal};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio_util::sync::CancellationToken;

use crate::error::ToolError;
use crate::output::HeadTail;
use crate::roots::Roots;
use crate::sandbox::Sandbox;
use crate::spec::ShellArgs;
use crate::{Limits, ToolOutput};

/// What a finished process gave.
#[derive(Debug)]
pub(crate) struct Finished {
    pub(crate) status: ExitStatus,
    pub(crate) stdout: HeadTail,
    pub(crate) stderr: HeadTail,
}

/// Kills a process group when dropped.
#[derive(Debug)]
struct Group(Option<Pid>);

impl Group {
    fn kill(&self) {
        if let Some(pid) = self.0 {
            // `ESRCH` once every member is gone.
            let _ = rustix::process::kill_process_group(pid, Signal::KILL);
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A directory beneath the roots, held open, as a path a child process can
/// change into: `/proc/self/fd/N` names this very directory (the child
/// changes into it before it executes, while it still has the descriptor),
/// whatever has been renamed or swapped for a link since it was resolved.
pub(crate) struct WorkDir {
    fd: OwnedFd,
}

impl WorkDir {
    pub(crate) fn open(roots: &Roots, path: &str) -> Result<Self, ToolError> {
        let place = roots.locate(path)?;
        let fd = roots.open(&place, OFlags::PATH | OFlags::DIRECTORY)?;
        Ok(Self { fd })
    }

    pub(crate) fn proc_path(&self) -> String {
        format!("/proc/self/fd/{}", self.fd.as_raw_fd())
    }
}

/// Runs `command` in `dir` and its own process group, reading stdout and
/// stderr into the two bounded buffers given; until it exits, `timeout`
/// passes, or `cancel` fires.
pub(crate) async fn run(
    mut command: tokio::process::Command,
    dir: &WorkDir,
    (stdout_kept, stderr_kept): (HeadTail, HeadTail),
    timeout: Duration,
    cancel: &CancellationToken,
    confine: Option<(&Roots, Sandbox)>,
    stdin: Option<Vec<u8>>,
) -> Result<Finished, ToolError> {
    command
        .current_dir(dir.proc_path())
        .process_group(0)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let program = command
        .as_std()
        .get_program()
        .to_string_lossy()
        .into_owned();
    let mut child = match confine {
        Some((roots, sandbox)) => crate::sandbox::spawn(&mut command, roots, sandbox)?,
        None => command
            .spawn()
            .map_err(|err| ToolError::io("run", &program, err))?,
    };
    // The child is the group's leader: its pid is the group's id.
    let group = Group(child.id().and_then(|id| Pid::from_raw(id as i32)));
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let input = child.stdin.take();
    let feed = async move {
        if let (Some(mut pipe), Some(bytes)) = (input, stdin) {
            // A process that does not read all of it closes the pipe: not
            // an error of the call.
            let _ = tokio::io::AsyncWriteExt::write_all(&mut pipe, &bytes).await;
        }
    };
    let work = async {
        let waited = async {
            let status = child.wait().await;
            // Whatever it left in the background goes with it (and the
            // pipes it holds close, so the reads below end).
            group.kill();
            status
        };
        let (status, stdout, stderr, ()) = tokio::join!(
            waited,
            read(stdout, stdout_kept),
            read(stderr, stderr_kept),
            feed
        );
        let status = status.map_err(|err| ToolError::io("wait for", &program, err))?;
        Ok(Finished {
            status,
            stdout,
            stderr,
        })
    };
    tokio::select! {
        biased;
        finished = work => finished,
        () = cancel.cancelled() => {
            group.kill();
            Err(ToolError::Cancelled)
        }
        () = tokio::time::sleep(timeout) => {
            group.kill();
            Err(ToolError::TimedOut(timeout))
        }
    }
}

async fn read(stream: Option<impl AsyncRead + Unpin>, mut kept: HeadTail) -> HeadTail {
    if let Some(mut stream) = stream {
        let mut buffer = vec![0u8; 16 * 1024];
        // A read error ends the stream: what came before is kept.
        while let Ok(n) = stream.read(&mut buffer).await {
            match buffer.get(..n) {
                Some(bytes) if n > 0 => kept.push(bytes),
                _ => break,
            }
        }
    }
    kept
}

/// How a finished process is described after its output.
pub(crate) fn exit_line(status: &ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("[exit code {code}]"),
        (None, Some(signal)) => format!("[killed by signal {signal}]"),
        (None, None) => "[ended]".to_owned(),
    }
}

pub(crate) async fn shell(
    roots: &Roots,
    limits: &Limits,
    args: ShellArgs,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    if args.command.contains('\0') {
        return Err(ToolError::refused(
            crate::Rule::NulByte,
            "the command holds a NUL byte",
        ));
    }
    if args.timeout_s == Some(0) {
        return Err(ToolError::InvalidArguments {
            tool: "shell".into(),
            message: "`timeout_s` must be at least 1".into(),
        });
    }
    let dir = WorkDir::open(roots, args.cwd.as_deref().unwrap_or(""))?;
    let timeout = args
        .timeout_s
        .map_or(limits.shell_timeout, Duration::from_secs);
    let timeout = limits.timeout.map_or(timeout, |call| timeout.min(call));
    let mut command = tokio::process::Command::new("/bin/sh");
    command.arg("-c").arg(&args.command).env_remove("PWD");
    // Half the limit each (less the lines added below); each says how it
    // was cut.
    let cap = limits.max_output_bytes.saturating_sub(64) / 2;
    let kept = (HeadTail::new(cap, true), HeadTail::new(cap, true));
    let finished = run(
        command,
        &dir,
        kept,
        timeout,
        cancel,
        Some((roots, limits.sandbox)),
        None,
    )
    .await?;
    let (stdout, stdout_cut) = finished.stdout.finish("stdout");
    let stderr_total = finished.stderr.total();
    let (stderr, stderr_cut) = finished.stderr.finish("stderr");
    let mut text = stdout;
    if stderr_total > 0 {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("[stderr]\n");
        text.push_str(&stderr);
    }
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&exit_line(&finished.status));
    text.push('\n');
    Ok(ToolOutput {
        text,
        is_error: !finished.status.success(),
        truncated: stdout_cut || stderr_cut,
        exit_code: finished.status.code(),
        structured: None,
    })
}
