//! `shell` runs in its own process group; the whole tree dies on timeout,
//! cancel, drop, and when the shell exits.

use std::path::Path;

use agents_tools::{CancellationToken, Limits, ToolError};
use serde_json::json;

use crate::{Tree, call, ok};

/// Whether process `pid` is gone (a zombie counts: it runs no more, and
/// whoever inherited it reaps it in its own time).
pub(crate) fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
    }
}

/// Waits (by polling, a bounded number of times) until `pid` is gone.
pub(crate) async fn wait_gone(pid: u32) -> bool {
    for _ in 0..500 {
        if gone(pid) {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    false
}

/// The pid a command wrote to `file`, once it has.
pub(crate) async fn pid_in(file: &Path) -> u32 {
    for _ in 0..1000 {
        if let Ok(text) = std::fs::read_to_string(file)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("no pid in {}", file.display());
}

/// A shell that starts a sleeping grandchild, writes its pid, and waits.
pub(crate) const TREE: &str = "sleep 1000 & echo $! > grandchild.pid; wait";

#[tokio::test]
async fn shell_runs_in_the_root_and_reports_exit_and_stderr() {
    let tree = Tree::new();
    tree.write("sub/file", "");
    let executor = tree.executor();
    let output = ok(
        &executor,
        "shell",
        json!({"command": "pwd; echo out; echo err >&2"}),
    )
    .await;
    assert_eq!(
        output.text,
        format!(
            "{}\nout\n[stderr]\nerr\n[exit code 0]\n",
            tree.root.display()
        )
    );
    assert!(!output.is_error);
    assert_eq!(output.exit_code, Some(0));
    let output = ok(
        &executor,
        "shell",
        json!({"command": "ls; exit 3", "cwd": "sub"}),
    )
    .await;
    assert_eq!(output.text, "file\n[exit code 3]\n");
    assert!(output.is_error);
    assert_eq!(output.exit_code, Some(3));
    let output = ok(&executor, "shell", json!({"command": "kill -9 $$"})).await;
    assert_eq!(output.text, "[killed by signal 9]\n");
    assert_eq!(output.exit_code, None);
}

#[tokio::test]
async fn cancel_kills_the_whole_tree() {
    let tree = Tree::new();
    let executor = tree.executor();
    let cancel = CancellationToken::new();
    let call = tokio::spawn({
        let (executor, cancel) = (executor.clone(), cancel.clone());
        async move {
            executor
                .call("shell", json!({"command": TREE}), cancel)
                .await
        }
    });
    let grandchild = pid_in(&tree.root.join("grandchild.pid")).await;
    assert!(!gone(grandchild));
    cancel.cancel();
    assert!(matches!(call.await.unwrap(), Err(ToolError::Cancelled)));
    assert!(
        wait_gone(grandchild).await,
        "grandchild {grandchild} still runs"
    );
}

#[tokio::test]
async fn timeout_kills_the_whole_tree() {
    let tree = Tree::new();
    let executor = tree.executor();
    let err = call(&executor, "shell", json!({"command": TREE, "timeout_s": 1}))
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::TimedOut(_)), "{err}");
    assert_eq!(err.to_string(), "timed out after 1 s");
    let grandchild = pid_in(&tree.root.join("grandchild.pid")).await;
    assert!(
        wait_gone(grandchild).await,
        "grandchild {grandchild} still runs"
    );
}

#[tokio::test]
async fn the_call_deadline_bounds_the_shell_too() {
    let tree = Tree::new();
    let mut limits = Limits::default();
    limits.timeout = Some(std::time::Duration::from_secs(1));
    let executor = tree.with_limits(limits);
    let err = call(
        &executor,
        "shell",
        json!({"command": TREE, "timeout_s": 1000}),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ToolError::TimedOut(_)), "{err}");
    let grandchild = pid_in(&tree.root.join("grandchild.pid")).await;
    assert!(wait_gone(grandchild).await);
}

#[tokio::test]
async fn dropping_the_call_kills_the_whole_tree() {
    let tree = Tree::new();
    let executor = tree.executor();
    let call = tokio::spawn({
        let executor = executor.clone();
        async move {
            executor
                .call("shell", json!({"command": TREE}), CancellationToken::new())
                .await
        }
    });
    let grandchild = pid_in(&tree.root.join("grandchild.pid")).await;
    call.abort();
    assert!(call.await.unwrap_err().is_cancelled());
    assert!(
        wait_gone(grandchild).await,
        "grandchild {grandchild} still runs"
    );
}

#[tokio::test]
async fn what_the_shell_leaves_behind_dies_when_it_exits() {
    let tree = Tree::new();
    let executor = tree.executor();
    let output = ok(
        &executor,
        "shell",
        json!({"command": "sleep 1000 & echo $! > grandchild.pid; echo started"}),
    )
    .await;
    assert_eq!(output.text, "started\n[exit code 0]\n");
    let grandchild = pid_in(&tree.root.join("grandchild.pid")).await;
    assert!(
        wait_gone(grandchild).await,
        "grandchild {grandchild} still runs"
    );
}

#[tokio::test]
async fn shell_output_keeps_both_ends_within_the_limit() {
    let tree = Tree::new();
    let mut limits = Limits::default();
    limits.max_output_bytes = 8192;
    let executor = tree.with_limits(limits);
    let output = ok(
        &executor,
        "shell",
        json!({"command": "echo first; head -c 10000000 /dev/zero | tr '\\0' x; echo; echo last; echo oops >&2"}),
    )
    .await;
    assert!(output.truncated);
    assert!(output.text.len() <= 8192, "{}", output.text.len());
    assert!(output.text.starts_with("first\n"));
    assert!(
        output
            .text
            .contains(" bytes of stdout cut from the middle; 10000012 in all …]\n"),
        "{}",
        output.text
    );
    assert!(
        output
            .text
            .ends_with("last\n[stderr]\noops\n[exit code 0]\n"),
        "{}",
        output.text
    );
}

#[tokio::test]
async fn hostile_commands_get_bounded_errors() {
    let tree = Tree::new();
    let executor = tree.executor();
    let err = call(&executor, "shell", json!({"command": "echo a\u{0}b"}))
        .await
        .unwrap_err();
    assert_eq!(err.rule(), Some(agents_tools::Rule::NulByte));
    let err = call(
        &executor,
        "shell",
        json!({"command": "true", "timeout_s": 0}),
    )
    .await
    .unwrap_err();
    assert!(err.is_protocol());
    // An argument past the system's limit: a tool error, not a panic.
    let huge = "x".repeat(4 << 20);
    let err = call(
        &executor,
        "shell",
        json!({"command": format!("echo {huge}")}),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().len() < 2048, "{err}");
}
