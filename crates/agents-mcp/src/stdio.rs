//! Fetching from a stdio server started as a child process.

use std::process::Stdio;
use std::sync::Mutex;
use std::time::Duration;

use crate::error::McpError;
use crate::list::Failure;
use crate::process::{ChildGuard, StderrTail, StdoutReport, WatchedStdout, read_report};
use crate::session::{self, STAGE_INITIALIZE, SessionError, get_stage};
use crate::{DEFAULT_MAX_MESSAGE_BYTES, FetchOptions, FetchedTools, McpTransport, RejectedTool};

#[derive(Debug)]
pub(crate) struct StdioLaunch<'a> {
    pub(crate) server: &'a str,
    pub(crate) command: &'a str,
    pub(crate) args: &'a [String],
    pub(crate) env: &'a [(String, String)],
    pub(crate) cwd: Option<&'a str>,
    pub(crate) timeout: Duration,
    /// What its stderr is masked of (see `source::Prepared::secrets`).
    pub(crate) secrets: &'a [String],
}

/// Starts the server and runs `initialize` and `tools/list`; the session and
/// the process stay up (the guard kills the group when dropped).
pub(crate) async fn open(
    launch: StdioLaunch<'_>,
    options: &FetchOptions,
    handler: session::Handler,
) -> Result<
    (
        session::Client,
        FetchedTools,
        ChildGuard,
        StderrTail,
        std::sync::Arc<Mutex<StdoutReport>>,
        crate::lane::Lane,
    ),
    McpError,
> {
    let server = launch.server;
    let spawn_error = |reason: String| McpError::Spawn {
        server: server.to_owned(),
        command: launch.command.to_owned(),
        reason,
    };
    if let Some(cwd) = launch.cwd
        && !std::path::Path::new(cwd).is_dir()
    {
        return Err(spawn_error(format!(
            "working directory `{cwd}` is not a directory"
        )));
    }

    let mut command = match &options.launcher {
        None => {
            let mut command = tokio::process::Command::new(launch.command);
            command.args(launch.args);
            command
        }
        Some(launcher) => {
            // The launcher `exec`s the program, so find it now: a missing
            // program is reported as such, not as a launcher that exited.
            let path = launch
                .env
                .iter()
                .rev()
                .find(|(name, _)| name == "PATH")
                .map(|(_, value)| value.clone())
                .or_else(|| std::env::var("PATH").ok());
            // A relative path is relative to the server's working directory.
            let command = match launch.cwd {
                Some(cwd) if launch.command.contains('/') && !launch.command.starts_with('/') => {
                    std::path::Path::new(cwd)
                        .join(launch.command)
                        .display()
                        .to_string()
                }
                _ => launch.command.to_owned(),
            };
            let program =
                crate::launch::resolve_program(&command, path.as_deref()).map_err(spawn_error)?;
            let mut command = tokio::process::Command::new(&launcher.program);
            command
                .args(&launcher.args)
                .arg(std::process::id().to_string())
                .arg(program)
                .args(launch.args);
            command
        }
    };
    // Least environment: a few variables from this process, then the item's `env`.
    command.env_clear();
    for name in crate::INHERITED_ENV {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    command
        .envs(launch.env.iter().map(|(name, value)| (name, value)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(cwd) = launch.cwd {
        command.current_dir(cwd);
    }
    // Its own group, so that one signal reaches the grandchildren too (npx -> node).
    #[cfg(unix)]
    command.process_group(0);

    crate::orphans::note_spawn();
    let mut child = command.spawn().map_err(|err| {
        spawn_error(match err.kind() {
            std::io::ErrorKind::NotFound => "command not found".into(),
            std::io::ErrorKind::PermissionDenied => "permission denied".into(),
            _ => err.to_string(),
        })
    })?;
    let pipes = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let mut guard = ChildGuard::new(child);
    let (Some(stdin), Some(stdout), Some(stderr)) = pipes else {
        guard.kill(options.shutdown_grace).await;
        return Err(spawn_error(
            "its standard streams could not be opened".into(),
        ));
    };
    let mut stderr_tail = StderrTail::spawn(stderr, server.to_owned(), launch.secrets.to_vec());
    let (stdout, report) = WatchedStdout::watch(
        stdout,
        max_line(options),
        options.max_tools,
        options.max_tool_depth.min(crate::HARD_MAX_TOOL_DEPTH),
    );
    // rmcp and the lane share the pipes: rmcp's writes go through the
    // lane's writer, the lane's answers are taken out by the watcher.
    let lane = crate::lane::Lane {
        writer: crate::lane::LineWriter::new(stdin),
        waiting: std::sync::Arc::default(),
    };
    let stdout = stdout.with_lane(lane.waiting.clone());
    let stdin = lane.writer.for_rmcp();

    let stage = Mutex::new(STAGE_INITIALIZE);
    let work = async {
        match session::run(
            (stdout, stdin),
            server,
            McpTransport::Stdio,
            &stage,
            options,
            handler,
        )
        .await
        {
            Ok(done) => Ok(done),
            Err(failure) => Err(diagnose(
                server,
                get_stage(&stage),
                failure,
                &report,
                &mut guard,
                &mut stderr_tail,
                options,
            )
            .await),
        }
    };
    // Bound to a local so the future (and its borrows of `guard`) is gone before the match.
    let outcome = tokio::time::timeout(launch.timeout, work).await;
    match outcome {
        Ok(Ok((client, mut fetched))) => {
            fetched.rejected.extend(take_malformed(server, &report));
            Ok((client, fetched, guard, stderr_tail, report, lane))
        }
        Ok(Err(err)) => {
            guard.kill(options.shutdown_grace).await;
            Err(err)
        }
        Err(_elapsed) => {
            guard.kill(options.shutdown_grace).await;
            let seen = read_report(&report);
            let mut note = String::new();
            if let Some(sample) = &seen.first_garbage {
                note.push_str(&format!(
                    "; it wrote output that is not JSON-RPC to stdout, e.g. `{sample}`"
                ));
            }
            let stderr = stderr_tail.text().await;
            if !stderr.is_empty() {
                note.push_str(&format!("; stderr: {stderr}"));
            }
            Err(McpError::Timeout {
                server: server.to_owned(),
                stage: get_stage(&stage),
                timeout: launch.timeout,
                note,
            })
        }
    }
}

/// The tools the stdout watcher took out of `tools/list` pages so far, as
/// rejections (and forgets them, so a later listing reports only its own).
pub(crate) fn take_malformed(server: &str, report: &Mutex<StdoutReport>) -> Vec<RejectedTool> {
    let mut report = crate::process::lock(report);
    let mut out: Vec<RejectedTool> = std::mem::take(&mut report.malformed_tools)
        .into_iter()
        .map(|(tool, reason)| RejectedTool {
            server: server.to_owned(),
            tool,
            reason,
        })
        .collect();
    let more = std::mem::take(&mut report.malformed_count).saturating_sub(out.len());
    if more > 0 {
        out.push(RejectedTool {
            server: server.to_owned(),
            tool: format!("… {more} more"),
            reason: "also left out (too deep or not valid MCP tools)".into(),
        });
    }
    out
}

async fn diagnose(
    server: &str,
    stage: &'static str,
    failure: SessionError,
    report: &Mutex<StdoutReport>,
    guard: &mut ChildGuard,
    stderr_tail: &mut StderrTail,
    options: &FetchOptions,
) -> McpError {
    if let SessionError::List(Failure::Fatal(err)) = failure {
        return err;
    }
    let protocol = |failure: &SessionError| McpError::Protocol {
        server: server.to_owned(),
        stage,
        message: failure
            .as_std()
            .map(session::error_chain)
            .unwrap_or_else(|| "unknown error".into()),
    };
    if failure.is_error_answer() {
        return protocol(&failure);
    }
    let seen = read_report(report);
    if seen.too_many_tools {
        return McpError::TooManyTools {
            server: server.to_owned(),
            limit: options.max_tools,
        };
    }
    let garbage = |sample: Option<String>| McpError::Garbage {
        server: server.to_owned(),
        sample: sample.unwrap_or_default(),
    };
    if seen.oversized {
        return McpError::MessageTooLarge {
            server: server.to_owned(),
            limit: max_line(options),
        };
    }
    if seen.aborted {
        return garbage(seen.first_garbage);
    }
    // A closed stream usually means the process is gone: say so, with its last words.
    if let Some(status) = guard.wait(Duration::from_millis(500)).await {
        return McpError::ExitedEarly {
            server: server.to_owned(),
            status: status.to_string(),
            stage,
            stderr: stderr_tail.text().await,
        };
    }
    if seen.first_garbage.is_some() {
        return garbage(seen.first_garbage);
    }
    protocol(&failure)
}

/// rmcp drops longer lines itself, so the limit can be lowered but not raised.
pub(crate) fn max_line(options: &FetchOptions) -> usize {
    options.max_message_bytes.min(DEFAULT_MAX_MESSAGE_BYTES)
}
