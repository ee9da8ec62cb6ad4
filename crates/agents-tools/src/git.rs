//! `git_status`, `git_diff` and `git_commit`, through the `git` command.
//!
//! The repository is the one git finds from the directory asked for (the
//! first root when none is), and its working tree must be beneath a root:
//! git is asked where it is first, and then run with
//! `GIT_CEILING_DIRECTORIES` above the root, so it cannot wander up to a
//! repository outside. The environment variables that would point git
//! elsewhere (`GIT_DIR`, `GIT_WORK_TREE`, ...) are removed, and a
//! repository's `core.fsmonitor` (a command git would run on `status`) is
//! turned off.

use std::path::PathBuf;

use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use crate::error::{Rule, ToolError, shown};
use crate::output::HeadTail;
use crate::process::{Finished, WorkDir, exit_line, run};
use crate::roots::Roots;
use crate::spec::{GitCommitArgs, GitDiffArgs, GitStatusArgs};
use crate::{Limits, ToolOutput};

/// Variables that choose another repository, work tree or index than the
/// one found from the directory.
const REDIRECTING: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
    "PWD",
];

/// The longest commit message taken, in bytes (one argument of a command
/// line is at most 128 KiB on Linux).
const MAX_MESSAGE: usize = 64 * 1024;

pub(crate) async fn status(
    roots: &Roots,
    limits: &Limits,
    args: GitStatusArgs,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let repo = Repo::find(roots, limits, args.repo.as_deref(), cancel).await?;
    let mut command = repo.git();
    command.args(["status", "--short", "--branch"]);
    repo.run(command, limits, cancel, "").await
}

pub(crate) async fn diff(
    roots: &Roots,
    limits: &Limits,
    args: GitDiffArgs,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    if let Some(rev) = &args.rev {
        argument("rev", rev)?;
    }
    let repo = Repo::find(roots, limits, args.repo.as_deref(), cancel).await?;
    let mut command = repo.git();
    command.args(["diff", "--no-color", "--no-ext-diff", "--no-textconv"]);
    if let Some(rev) = &args.rev {
        command.arg("--end-of-options").arg(rev);
    }
    command.arg("--");
    repo.run(command, limits, cancel, "[no changes]").await
}

pub(crate) async fn commit(
    roots: &Roots,
    limits: &Limits,
    args: GitCommitArgs,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    if args.message.trim().is_empty() {
        return Err(ToolError::InvalidArguments {
            tool: "git_commit".into(),
            message: "`message` is empty".into(),
        });
    }
    if args.message.len() > MAX_MESSAGE {
        return Err(ToolError::InvalidArguments {
            tool: "git_commit".into(),
            message: format!(
                "`message` is {} bytes; at most {MAX_MESSAGE} are taken",
                args.message.len()
            ),
        });
    }
    if args.message.contains('\0') {
        return Err(ToolError::refused(
            Rule::NulByte,
            "`message` holds a NUL byte",
        ));
    }
    let repo = Repo::find(roots, limits, args.repo.as_deref(), cancel).await?;
    let mut command = repo.git();
    // `--message=`: the message is never read as an option.
    command
        .arg("commit")
        .arg(format!("--message={}", args.message));
    repo.run(command, limits, cancel, "").await
}

/// An argument given to git: refused when git could read it as an option.
fn argument(name: &str, value: &str) -> Result<(), ToolError> {
    if value.contains('\0') {
        return Err(ToolError::refused(
            Rule::NulByte,
            format!("`{name}` holds a NUL byte"),
        ));
    }
    if value.starts_with('-') {
        return Err(ToolError::refused(
            Rule::OptionLike,
            format!(
                "`{name}` `{}` starts with `-`, as an option does",
                shown(value)
            ),
        ));
    }
    Ok(())
}

struct Repo {
    dir: WorkDir,
    /// Above the root the working tree is in: git looks no further up.
    ceiling: Option<PathBuf>,
}

impl Repo {
    /// The repository `repo` (a directory beneath the roots) is in;
    /// refused when its working tree is outside every root.
    async fn find(
        roots: &Roots,
        limits: &Limits,
        repo: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<Self, ToolError> {
        let raw = repo.unwrap_or("");
        let dir = WorkDir::open(roots, raw)?;
        let mut command = git_command(None);
        command.args(["rev-parse", "--show-toplevel"]);
        let kept = (HeadTail::new(64 * 1024, false), HeadTail::new(4096, true));
        let found = run(command, &dir, kept, limits.git_timeout, cancel, None, None).await?;
        let (top, _) = found.stdout.finish("output");
        if !found.status.success() {
            let (stderr, _) = found.stderr.finish("stderr");
            return Err(ToolError::Failed(format!(
                "`{}` is not in a git working tree: {}",
                shown(if raw.is_empty() { "." } else { raw }),
                agents_core::text::bounded_message(stderr.trim())
            )));
        }
        let top = PathBuf::from(top.trim_end_matches('\n'));
        let Some(root) = roots.paths().find(|root| top.starts_with(root)) else {
            return Err(ToolError::refused(
                Rule::RepoOutsideRoots,
                format!(
                    "the repository of `{}` has its working tree at `{}`, outside the workspace roots",
                    shown(if raw.is_empty() { "." } else { raw }),
                    agents_core::text::shown_path(&top)
                ),
            ));
        };
        let ceiling = root.parent().map(PathBuf::from);
        Ok(Self { dir, ceiling })
    }

    fn git(&self) -> Command {
        git_command(self.ceiling.as_deref())
    }

    /// Runs `command`; its output (or `empty` when it printed nothing),
    /// then stderr and the exit code when it failed.
    async fn run(
        &self,
        command: Command,
        limits: &Limits,
        cancel: &CancellationToken,
        empty: &str,
    ) -> Result<ToolOutput, ToolError> {
        let cap = limits.max_output_bytes.saturating_sub(64);
        let Finished {
            status,
            stdout,
            stderr,
        } = run(
            command,
            &self.dir,
            // A diff is read from the top; git's complaints are at the end.
            (
                HeadTail::new(cap * 3 / 4, false),
                HeadTail::new(cap / 4, true),
            ),
            limits.git_timeout,
            cancel,
            None,
            None,
        )
        .await?;
        let stderr_total = stderr.total();
        let (mut text, stdout_cut) = stdout.finish("output");
        let (stderr, stderr_cut) = stderr.finish("stderr");
        if text.is_empty() && status.success() && stderr_total == 0 && !empty.is_empty() {
            text = format!("{empty}\n");
        }
        if stderr_total > 0 {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str("[stderr]\n");
            text.push_str(&stderr);
        }
        if !status.success() {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&exit_line(&status));
            text.push('\n');
        }
        Ok(ToolOutput {
            text,
            is_error: !status.success(),
            truncated: stdout_cut || stderr_cut,
            exit_code: status.code(),
            structured: None,
        })
    }
}

fn git_command(ceiling: Option<&std::path::Path>) -> Command {
    let mut command = Command::new("git");
    for name in REDIRECTING {
        command.env_remove(name);
    }
    command
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_EDITOR", "true")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .args([
            "--no-pager",
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.quotePath=false",
            "-c",
            "color.ui=false",
        ]);
    if let Some(ceiling) = ceiling {
        command.env("GIT_CEILING_DIRECTORIES", ceiling);
    }
    command
}
