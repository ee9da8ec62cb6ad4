//! `glob` and `grep` honour `.gitignore`, stay beneath the roots, and are
//! bounded.

use std::os::unix::fs::symlink;

use agents_tools::{Limits, Rule};
use serde_json::json;

use crate::{Tree, call, ok, refused};

/// A small project: sources, ignored build output, a hidden file, a log
/// the root's `.gitignore` ignores in a subdirectory too.
fn project() -> Tree {
    let tree = Tree::new();
    tree.write(".gitignore", "target/\n*.log\nignored.rs\n");
    tree.write("src/main.rs", "fn main() {\n    needle();\n}\n");
    tree.write("src/lib.rs", "pub fn needle() {}\n// NEEDLE in caps\n");
    tree.write("src/ignored.rs", "fn needle() {}\n");
    tree.write("src/deep/more.rs", "// no match here\n");
    tree.write("src/deep/run.log", "needle in a log\n");
    tree.write("target/debug/out.rs", "fn needle() {}\n");
    tree.write(".hidden.rs", "fn needle() {}\n");
    tree.write("README.md", "a needle in the readme\n");
    std::fs::write(tree.root.join("src/blob.bin"), b"needle\x00\x01\x02").unwrap();
    tree
}

#[tokio::test]
async fn glob_matches_beneath_the_root_honouring_gitignore() {
    let tree = project();
    let executor = tree.executor();
    let output = ok(&executor, "glob", json!({"pattern": "**/*.rs"})).await;
    assert_eq!(output.text, "src/deep/more.rs\nsrc/lib.rs\nsrc/main.rs\n");
    // `*` does not cross a `/`.
    assert_eq!(
        ok(&executor, "glob", json!({"pattern": "*.md"})).await.text,
        "README.md\n"
    );
    assert_eq!(
        ok(&executor, "glob", json!({"pattern": "src/*.rs"}))
            .await
            .text,
        "src/lib.rs\nsrc/main.rs\n"
    );
    // Relative to `root`, shown relative to the workspace root.
    let output = ok(
        &executor,
        "glob",
        json!({"pattern": "*.rs", "root": "src/deep"}),
    )
    .await;
    assert_eq!(output.text, "src/deep/more.rs\n");
    // The root's `.gitignore` applies beneath a subdirectory asked for.
    let output = ok(
        &executor,
        "glob",
        json!({"pattern": "**/*.log", "root": "src"}),
    )
    .await;
    assert_eq!(output.text, "[no files match `**/*.log`]\n");
    // An ignored directory asked for by name is walked.
    let output = ok(
        &executor,
        "glob",
        json!({"pattern": "**", "root": "target"}),
    )
    .await;
    assert_eq!(output.text, "target/debug/out.rs\n");
}

#[tokio::test]
async fn glob_refuses_patterns_that_leave_the_root_and_follows_no_link() {
    let tree = project();
    symlink(&tree.outside, tree.root.join("out")).unwrap();
    symlink("src", tree.root.join("alias")).unwrap();
    let executor = tree.executor();
    refused(
        &executor,
        "glob",
        json!({"pattern": "/etc/*"}),
        Rule::OutsideRoots,
    )
    .await;
    refused(
        &executor,
        "glob",
        json!({"pattern": "../**"}),
        Rule::ParentDir,
    )
    .await;
    refused(
        &executor,
        "glob",
        json!({"pattern": "src/../../*"}),
        Rule::ParentDir,
    )
    .await;
    // Links are not walked, neither out nor inside.
    let output = ok(&executor, "glob", json!({"pattern": "**/secret"})).await;
    assert_eq!(output.text, "[no files match `**/secret`]\n");
    let output = ok(&executor, "glob", json!({"pattern": "alias/**"})).await;
    assert_eq!(output.text, "[no files match `alias/**`]\n");
    let err = call(&executor, "glob", json!({"pattern": "a[b"}))
        .await
        .unwrap_err();
    assert!(
        err.to_string().starts_with("invalid glob pattern `a[b`: "),
        "{err}"
    );
}

#[tokio::test]
async fn grep_finds_lines_honouring_gitignore_and_skipping_binaries() {
    let tree = project();
    let executor = tree.executor();
    let output = ok(&executor, "grep", json!({"pattern": "needle"})).await;
    assert_eq!(
        output.text,
        "README.md:1:a needle in the readme\nsrc/lib.rs:1:pub fn needle() {}\nsrc/main.rs:2:    needle();\n"
    );
    let output = ok(
        &executor,
        "grep",
        json!({"pattern": "needle", "ignore_case": true, "path": "src"}),
    )
    .await;
    assert_eq!(
        output.text,
        "src/lib.rs:1:pub fn needle() {}\nsrc/lib.rs:2:// NEEDLE in caps\nsrc/main.rs:2:    needle();\n"
    );
    // A file asked for by name is searched whatever the ignore files say.
    let output = ok(
        &executor,
        "grep",
        json!({"pattern": "needle", "path": "src/ignored.rs"}),
    )
    .await;
    assert_eq!(output.text, "src/ignored.rs:1:fn needle() {}\n");
    let output = ok(&executor, "grep", json!({"pattern": "haystack"})).await;
    assert_eq!(output.text, "[no matches]\n");
    let err = call(&executor, "grep", json!({"pattern": "(unclosed"}))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("invalid regular expression `(unclosed`: "),
        "{err}"
    );
    assert!(!err.is_protocol());
}

#[tokio::test]
async fn grep_reads_nothing_through_a_link() {
    let tree = project();
    symlink(tree.outside.join("secret"), tree.root.join("leak")).unwrap();
    symlink(&tree.outside, tree.root.join("out")).unwrap();
    let executor = tree.executor();
    assert_eq!(
        ok(&executor, "grep", json!({"pattern": "secret"}))
            .await
            .text,
        "[no matches]\n"
    );
    refused(
        &executor,
        "grep",
        json!({"pattern": "secret", "path": "leak"}),
        Rule::SymlinkEscape,
    )
    .await;
}

#[tokio::test]
async fn glob_output_is_bounded_with_a_note() {
    let tree = Tree::new();
    for n in 0..2000 {
        tree.write(&format!("many/{n:05}.txt"), "");
    }
    let mut limits = Limits::default();
    limits.max_output_bytes = 4096;
    let executor = tree.with_limits(limits);
    let output = ok(&executor, "glob", json!({"pattern": "**/*.txt"})).await;
    assert!(output.truncated);
    assert!(output.text.len() <= 4096, "{}", output.text.len());
    assert!(output.text.starts_with("many/"));
    let note = output.text.lines().last().unwrap();
    assert!(
        note.starts_with("[cut: ") && note.contains(" paths shown; "),
        "{note}"
    );
}

#[tokio::test]
async fn grep_output_is_bounded_with_a_note() {
    let tree = Tree::new();
    for n in 0..50 {
        let lines: String = (0..100).map(|line| format!("match {line}\n")).collect();
        tree.write(&format!("f{n:02}.txt"), &lines);
    }
    tree.write("minified.js", &format!("match{}\n", "x".repeat(100_000)));
    let mut limits = Limits::default();
    limits.max_output_bytes = 8192;
    let executor = tree.with_limits(limits);
    let output = ok(&executor, "grep", json!({"pattern": "match"})).await;
    assert!(output.truncated);
    assert!(output.text.len() <= 8192, "{}", output.text.len());
    let note = output.text.lines().last().unwrap();
    assert!(
        note.starts_with("[cut: the matches reached the output limit"),
        "{note}"
    );
    // A very long line is cut in itself.
    let output = ok(
        &executor,
        "grep",
        json!({"pattern": "match", "path": "minified.js"}),
    )
    .await;
    assert!(
        output
            .text
            .contains("[… 98981 more bytes of this line cut]"),
        "{}",
        output.text
    );
}

#[tokio::test]
async fn hostile_patterns_get_bounded_errors() {
    let tree = project();
    let executor = tree.executor();
    let huge = "a".repeat(1_000_000);
    let err = call(
        &executor,
        "grep",
        json!({"pattern": format!("({huge}){{1000}}")}),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().len() < 2048);
    refused(
        &executor,
        "grep",
        json!({"pattern": "a\u{0}b"}),
        Rule::NulByte,
    )
    .await;
    let err = call(&executor, "glob", json!({"pattern": huge}))
        .await
        .unwrap_err();
    assert!(err.to_string().len() < 2048);
    // The longest pattern taken, of the costliest kind, is an answer.
    let alternates = format!("{{{}}}", vec!["a*b"; 1000].join(","));
    let output = ok(&executor, "glob", json!({"pattern": alternates})).await;
    assert!(output.text.len() < 2048);
}
