//! `sandbox: strict`: `shell` under Landlock, on this kernel (which has it).

use std::net::TcpListener;

use agents_tools::{Limits, Sandbox};
use serde_json::json;

use crate::{Tree, ok};

fn strict(tree: &Tree, read_only: bool) -> agents_tools::Executor {
    let mut limits = Limits::default();
    limits.sandbox = Sandbox::Strict { read_only };
    tree.with_limits(limits)
}

#[tokio::test]
async fn strict_shell_writes_inside_its_root_and_nowhere_else() {
    let tree = Tree::new();
    let escaped = tree.outside.join("escaped");
    let command = format!(
        "echo in > inside.txt; echo out > '{}'; cat '{}'; ls /root >/dev/null",
        escaped.display(),
        tree.outside.join("secret").display()
    );
    let out = ok(&strict(&tree, false), "shell", json!({"command": command})).await;
    assert_eq!(
        std::fs::read_to_string(tree.root.join("inside.txt")).unwrap(),
        "in\n",
        "{}",
        out.text
    );
    assert!(!escaped.exists(), "{}", out.text);
    assert!(!out.text.contains("outside secret"), "{}", out.text);
    assert_eq!(
        out.text.matches("Permission denied").count(),
        3,
        "{}",
        out.text
    );
    // Unconfined, the same command writes outside: the sandbox made the difference.
    ok(&tree.executor(), "shell", json!({"command": command})).await;
    assert!(escaped.exists());
}

#[tokio::test]
async fn strict_read_only_shell_cannot_write_in_its_root() {
    let tree = Tree::new();
    tree.write("a.txt", "kept\n");
    let out = ok(
        &strict(&tree, true),
        "shell",
        json!({"command": "cat a.txt; echo changed > a.txt; touch b.txt"}),
    )
    .await;
    assert!(out.text.starts_with("kept\n"), "{}", out.text);
    assert_eq!(
        std::fs::read_to_string(tree.root.join("a.txt")).unwrap(),
        "kept\n"
    );
    assert!(!tree.root.join("b.txt").exists(), "{}", out.text);
}

#[tokio::test]
async fn strict_shell_cannot_connect_over_tcp() {
    let tree = Tree::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let command = format!("/usr/bin/bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}'");
    let accepted = |listener: &TcpListener| std::iter::from_fn(|| listener.accept().ok()).count();
    let out = ok(&strict(&tree, false), "shell", json!({"command": command})).await;
    assert!(out.is_error, "{}", out.text);
    assert_eq!(accepted(&listener), 0, "{}", out.text);
    // Unconfined, it connects.
    let out = ok(&tree.executor(), "shell", json!({"command": command})).await;
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(accepted(&listener), 1);
}
