//! `read_file`, `write_file`, `edit_file` and `list_dir` on real files.

use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};

use agents_tools::{Limits, ToolError};
use serde_json::json;

use crate::{Tree, call, ok};

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

/// Only the files the test made: no temporary file left behind.
fn names(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn write_file_creates_with_parents_and_replaces_keeping_the_mode() {
    let tree = Tree::new();
    let executor = tree.executor();
    let output = ok(
        &executor,
        "write_file",
        json!({"path": "a/b/new.txt", "content": "one\n"}),
    )
    .await;
    assert_eq!(output.text, "created `a/b/new.txt` (4 bytes)\n");
    let path = tree.root.join("a/b/new.txt");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "one\n");

    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    let inode = std::fs::metadata(&path).unwrap().ino();
    let output = ok(
        &executor,
        "write_file",
        json!({"path": "a/b/new.txt", "content": "two\n"}),
    )
    .await;
    assert_eq!(output.text, "replaced `a/b/new.txt` (4 bytes)\n");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "two\n");
    assert_eq!(mode(&path), 0o640);
    // A new file renamed over the old one, not the old one rewritten.
    assert_ne!(std::fs::metadata(&path).unwrap().ino(), inode);
    assert_eq!(names(&tree.root.join("a/b")), ["new.txt"]);

    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    ok(
        &executor,
        "write_file",
        json!({"path": "a/b/new.txt", "content": ""}),
    )
    .await;
    assert_eq!(mode(&path), 0o755);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "");
}

#[tokio::test]
async fn write_file_refuses_a_directory_and_a_path_without_a_name() {
    let tree = Tree::new();
    std::fs::create_dir(tree.root.join("dir")).unwrap();
    let executor = tree.executor();
    let err = call(
        &executor,
        "write_file",
        json!({"path": "dir", "content": "x"}),
    )
    .await
    .unwrap_err();
    assert_eq!(err.to_string(), "`dir` is a directory");
    let err = call(
        &executor,
        "write_file",
        json!({"path": ".", "content": "x"}),
    )
    .await
    .unwrap_err();
    assert_eq!(err.to_string(), "`.` does not name a file");
    assert!(tree.root.join("dir").is_dir());
}

#[tokio::test]
async fn edit_file_replaces_exactly_one_match() {
    let tree = Tree::new();
    let path = tree.write("code.rs", "fn a() {}\nfn b() {}\nfn b() {}\n");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let executor = tree.executor();
    let output = ok(
        &executor,
        "edit_file",
        json!({"path": "code.rs", "old": "fn a", "new": "pub fn a"}),
    )
    .await;
    assert_eq!(output.text, "replaced 1 match in `code.rs`\n");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "pub fn a() {}\nfn b() {}\nfn b() {}\n"
    );
    assert_eq!(mode(&path), 0o600);
    assert_eq!(names(&tree.root), ["code.rs"]);
}

#[tokio::test]
async fn edit_file_refuses_zero_or_several_matches_naming_the_count() {
    let tree = Tree::new();
    let content = "fn a() {}\nfn b() {}\nfn b() {}\nfn b() {}\n";
    let path = tree.write("code.rs", content);
    let executor = tree.executor();
    let err = call(
        &executor,
        "edit_file",
        json!({"path": "code.rs", "old": "fn c", "new": "x"}),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ToolError::Matches { count: 0, .. }));
    assert_eq!(
        err.to_string(),
        "`old` matches 0 times in `code.rs`; it must match exactly once"
    );
    let err = call(
        &executor,
        "edit_file",
        json!({"path": "code.rs", "old": "fn b", "new": "x"}),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ToolError::Matches { count: 3, .. }));
    assert_eq!(
        err.to_string(),
        "`old` matches 3 times in `code.rs`; it must match exactly once (give more of the surrounding text)"
    );
    let err = call(
        &executor,
        "edit_file",
        json!({"path": "code.rs", "old": "", "new": "x"}),
    )
    .await
    .unwrap_err();
    assert!(err.is_protocol());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), content);
    let err = call(
        &executor,
        "edit_file",
        json!({"path": "missing", "old": "a", "new": "b"}),
    )
    .await
    .unwrap_err();
    assert!(
        err.to_string().starts_with("cannot edit `missing`: "),
        "{err}"
    );
}

#[tokio::test]
async fn edit_file_refuses_binary_and_oversized_files() {
    let tree = Tree::new();
    std::fs::write(tree.root.join("bin"), b"\xff\xfe\x00abc").unwrap();
    tree.write("big", &"x".repeat(2000));
    let mut limits = Limits::default();
    limits.max_edit_bytes = 1000;
    let executor = tree.with_limits(limits);
    let err = call(
        &executor,
        "edit_file",
        json!({"path": "bin", "old": "abc", "new": "d"}),
    )
    .await
    .unwrap_err();
    assert_eq!(err.to_string(), "`bin` is not UTF-8 text");
    let err = call(
        &executor,
        "edit_file",
        json!({"path": "big", "old": "x", "new": "y"}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "`big` is 2000 bytes; `edit_file` edits files of at most 1000 bytes"
    );
}

#[tokio::test]
async fn read_file_reads_lines_from_offset_to_limit() {
    let tree = Tree::new();
    let lines: String = (1..=10).map(|n| format!("line {n}\n")).collect();
    tree.write("ten", &lines);
    let executor = tree.executor();
    assert_eq!(
        ok(&executor, "read_file", json!({"path": "ten"}))
            .await
            .text,
        lines
    );
    let output = ok(
        &executor,
        "read_file",
        json!({"path": "ten", "offset": 2, "limit": 3}),
    )
    .await;
    assert_eq!(
        output.text,
        "line 3\nline 4\nline 5\n[more lines follow; read on with `offset` 5]\n"
    );
    let output = ok(
        &executor,
        "read_file",
        json!({"path": "ten", "offset": 7, "limit": 3}),
    )
    .await;
    assert_eq!(output.text, "line 8\nline 9\nline 10\n");
    let output = ok(&executor, "read_file", json!({"path": "ten", "offset": 20})).await;
    assert_eq!(output.text, "[`ten` has 10 lines; nothing at offset 20]\n");
    let err = call(&executor, "read_file", json!({"path": "ten", "limit": 0}))
        .await
        .unwrap_err();
    assert!(err.is_protocol());
}

#[tokio::test]
async fn read_file_is_bounded_and_says_where_to_read_on() {
    let tree = Tree::new();
    let lines: String = (0..10_000).map(|n| format!("{n:07}\n")).collect();
    tree.write("long", &lines);
    let mut limits = Limits::default();
    limits.max_output_bytes = 4096;
    let executor = tree.with_limits(limits);
    let output = ok(&executor, "read_file", json!({"path": "long"})).await;
    assert!(output.truncated);
    assert!(output.text.len() <= 4096, "{}", output.text.len());
    let note = output.text.lines().last().unwrap();
    assert!(note.starts_with("[cut: the output reached its limit of 4096 bytes in line 481; read on with `offset` 480]"), "{note}");
    let next = ok(
        &executor,
        "read_file",
        json!({"path": "long", "offset": 480, "limit": 1}),
    )
    .await;
    assert!(next.text.starts_with("0000480\n"));
    // One line longer than the limit is cut inside.
    tree.write("one", &"y".repeat(100_000));
    let output = ok(&executor, "read_file", json!({"path": "one"})).await;
    assert!(output.truncated && output.text.len() <= 4096);
}

#[tokio::test]
async fn read_file_refuses_binary_files_directories_and_fifos() {
    let tree = Tree::new();
    std::fs::write(tree.root.join("bin"), b"ELF\x00\x01\x02").unwrap();
    std::fs::create_dir(tree.root.join("dir")).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(tree.root.join("fifo"))
        .status()
        .unwrap();
    assert!(status.success());
    let executor = tree.executor();
    let err = call(&executor, "read_file", json!({"path": "bin"}))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "`bin` is a binary file (6 bytes); `read_file` shows text"
    );
    let err = call(&executor, "read_file", json!({"path": "dir"}))
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "`dir` is a directory");
    // Does not wait for a writer.
    let err = call(&executor, "read_file", json!({"path": "fifo"}))
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "`fifo` is not a regular file");
}

#[tokio::test]
async fn list_dir_lists_sorted_entries_with_their_kinds() {
    let tree = Tree::new();
    tree.write("b.txt", "12345");
    tree.write("a/inner", "");
    symlink("b.txt", tree.root.join("c")).unwrap();
    let executor = tree.executor();
    let output = ok(&executor, "list_dir", json!({"path": ""})).await;
    assert_eq!(output.text, "a/\nb.txt (5 bytes)\nc -> b.txt\n");
    let output = ok(&executor, "list_dir", json!({"path": "a"})).await;
    assert_eq!(output.text, "inner (0 bytes)\n");
    std::fs::create_dir(tree.root.join("empty")).unwrap();
    assert_eq!(
        ok(&executor, "list_dir", json!({"path": "empty"}))
            .await
            .text,
        "[empty directory]\n"
    );
    let err = call(&executor, "list_dir", json!({"path": "b.txt"}))
        .await
        .unwrap_err();
    assert!(
        err.to_string().starts_with("cannot open `b.txt`: "),
        "{err}"
    );
}

#[tokio::test]
async fn list_dir_is_bounded() {
    let tree = Tree::new();
    for n in 0..2000 {
        tree.write(&format!("many/{n:05}"), "");
    }
    let mut limits = Limits::default();
    limits.max_output_bytes = 4096;
    let executor = tree.with_limits(limits);
    let output = ok(&executor, "list_dir", json!({"path": "many"})).await;
    assert!(output.truncated && output.text.len() <= 4096);
    let note = output.text.lines().last().unwrap();
    assert!(
        note.starts_with("[cut: ") && note.ends_with(" more entries not shown (2000 in all)]"),
        "{note}"
    );
    assert!(
        output
            .text
            .starts_with("00000 (0 bytes)\n00001 (0 bytes)\n")
    );
}
