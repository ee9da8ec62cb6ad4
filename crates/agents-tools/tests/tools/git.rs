//! The git tools on real repositories, and only on those inside the roots.

use std::path::Path;
use std::process::Command;

use agents_tools::{Executor, Limits, Roots, Rule};
use serde_json::json;

use crate::{Tree, call, ok, refused};

fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// A repository at `dir` with one commit of `a.txt`.
fn repo(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.name", "Test"]);
    git(dir, &["config", "user.email", "test@example.com"]);
    git(dir, &["config", "commit.gpgsign", "false"]);
    std::fs::write(dir.join("a.txt"), "one\n").unwrap();
    git(dir, &["add", "a.txt"]);
    git(dir, &["commit", "-q", "-m", "first"]);
}

#[tokio::test]
async fn status_diff_and_commit() {
    let tree = Tree::new();
    repo(&tree.root);
    let executor = tree.executor();
    std::fs::write(tree.root.join("a.txt"), "one\ntwo\n").unwrap();
    std::fs::write(tree.root.join("new.txt"), "new\n").unwrap();
    let output = ok(&executor, "git_status", json!({})).await;
    assert_eq!(output.text, "## main\n M a.txt\n?? new.txt\n");
    let output = ok(&executor, "git_diff", json!({})).await;
    assert!(
        output
            .text
            .contains("--- a/a.txt\n+++ b/a.txt\n@@ -1 +1,2 @@\n one\n+two\n"),
        "{}",
        output.text
    );
    let output = ok(&executor, "git_diff", json!({"rev": "HEAD"})).await;
    assert!(output.text.contains("+two\n"));

    git(&tree.root, &["add", "a.txt"]);
    assert_eq!(
        ok(&executor, "git_diff", json!({})).await.text,
        "[no changes]\n"
    );
    // A message that looks like an option is a message.
    let output = ok(
        &executor,
        "git_commit",
        json!({"message": "--amend: second"}),
    )
    .await;
    assert!(!output.is_error, "{}", output.text);
    assert!(output.text.contains("--amend: second"), "{}", output.text);
    assert_eq!(
        git(&tree.root, &["log", "--format=%s"]),
        "--amend: second\nfirst\n"
    );
    // Nothing staged: git's own answer, as a failed result.
    let output = ok(&executor, "git_commit", json!({"message": "third"})).await;
    assert!(output.is_error);
    assert!(output.text.ends_with("[exit code 1]\n"), "{}", output.text);
}

#[tokio::test]
async fn a_subdirectory_of_the_repository_is_a_repo_argument() {
    let tree = Tree::new();
    repo(&tree.root);
    tree.write("sub/b.txt", "b\n");
    let executor = tree.executor();
    // git shows paths from the directory it ran in.
    let output = ok(&executor, "git_status", json!({"repo": "sub"})).await;
    assert_eq!(output.text, "## main\n?? ./\n");
}

#[tokio::test]
async fn a_repository_outside_the_roots_is_refused() {
    let tree = Tree::new();
    repo(&tree.root);
    tree.write("sub/b.txt", "b\n");
    // The root is a directory inside the repository: the repository is not
    // beneath it.
    let executor = Executor::new(
        Roots::new([tree.root.join("sub")]).unwrap(),
        Limits::default(),
    );
    let message = refused(&executor, "git_status", json!({}), Rule::RepoOutsideRoots).await;
    assert!(
        message.contains(&tree.root.display().to_string()),
        "{message}"
    );
    refused(&executor, "git_diff", json!({}), Rule::RepoOutsideRoots).await;
    refused(
        &executor,
        "git_commit",
        json!({"message": "x"}),
        Rule::RepoOutsideRoots,
    )
    .await;
    assert_eq!(git(&tree.root, &["log", "--format=%s"]), "first\n");
}

#[tokio::test]
async fn not_a_repository_is_a_tool_error() {
    let tree = Tree::new();
    let executor = tree.executor();
    let err = call(&executor, "git_status", json!({})).await.unwrap_err();
    assert!(!err.is_protocol());
    assert!(
        err.to_string()
            .starts_with("`.` is not in a git working tree: "),
        "{err}"
    );
}

#[tokio::test]
async fn option_like_revisions_are_refused() {
    let tree = Tree::new();
    repo(&tree.root);
    let executor = tree.executor();
    let output = tree.outside.join("written");
    let rev = format!("--output={}", output.display());
    refused(&executor, "git_diff", json!({"rev": rev}), Rule::OptionLike).await;
    refused(
        &executor,
        "git_diff",
        json!({"rev": "-p"}),
        Rule::OptionLike,
    )
    .await;
    assert!(!output.exists());
    let err = call(&executor, "git_commit", json!({"message": "  "}))
        .await
        .unwrap_err();
    assert!(err.is_protocol());
}

#[tokio::test]
async fn a_repository_fsmonitor_command_is_not_run() {
    let tree = Tree::new();
    repo(&tree.root);
    let marker = tree.outside.join("fsmonitor-ran");
    let hook = format!("touch {}; false", marker.display());
    git(&tree.root, &["config", "core.fsmonitor", &hook]);
    let executor = tree.executor();
    ok(&executor, "git_status", json!({})).await;
    ok(&executor, "git_diff", json!({})).await;
    assert!(!marker.exists());
}

#[tokio::test]
async fn git_output_is_bounded() {
    let tree = Tree::new();
    repo(&tree.root);
    let lines: String = (0..20_000).map(|n| format!("line {n}\n")).collect();
    std::fs::write(tree.root.join("a.txt"), lines).unwrap();
    let mut limits = Limits::default();
    limits.max_output_bytes = 8192;
    let executor = tree.with_limits(limits);
    let output = ok(&executor, "git_diff", json!({})).await;
    assert!(output.truncated);
    assert!(output.text.len() <= 8192, "{}", output.text.len());
    assert!(output.text.starts_with("diff --git a/a.txt b/a.txt\n"));
    assert!(
        output.text.lines().last().unwrap().starts_with("[cut: "),
        "{}",
        output.text
    );
}
