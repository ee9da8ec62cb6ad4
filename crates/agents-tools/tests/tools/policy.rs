//! An entry's overrides as a policy on every call: `read_only`, approval,
//! `timeout_s` and the audit file.

use std::os::unix::fs::PermissionsExt;

use agents_tools::{
    Audit, AuditLog, Builtin, CallContext, CallPolicy, CancellationToken, Rule, ToolError,
};
use serde_json::{Value, json};

use crate::Tree;
use crate::shell::{TREE, pid_in, wait_gone};

fn policy(overrides: Value) -> CallPolicy {
    let Value::Object(map) = overrides else {
        panic!("not an object")
    };
    CallPolicy::from_overrides(&map)
}

#[test]
fn overrides_become_a_policy_and_unknown_keys_are_reported() {
    let p = policy(json!({
        "timeout_s": 7, "read_only": true, "audit": "full", "approval": "required",
        "description": "d", "sandbox": "strict", "rate_limit": 3
    }));
    assert_eq!(p.timeout, Some(std::time::Duration::from_secs(7)));
    assert!(p.read_only && p.approval_required);
    assert_eq!(p.audit, Audit::Full);
    let keys: Vec<&str> = p.not_enforced.iter().map(|n| n.key.as_str()).collect();
    assert_eq!(keys, ["rate_limit"]);
    assert!(p.sandbox);
    assert_eq!(policy(json!({"audit": true})).audit, Audit::Digest);
    assert_eq!(policy(json!({})), CallPolicy::default());
    // What cannot be read narrows, and is reported.
    let p = policy(json!({"read_only": "yes", "approval": "maybe", "sandbox": "tight"}));
    assert!(p.read_only && p.approval_required && p.sandbox);
    assert_eq!(p.not_enforced.len(), 3);
}

async fn run(
    tree: &Tree,
    tool: Builtin,
    args: Value,
    p: &CallPolicy,
    approved: bool,
) -> Result<agents_tools::ToolOutput, ToolError> {
    agents_tools::call(
        &tree.executor(),
        tool,
        args,
        p,
        &CallContext {
            approved,
            ..CallContext::default()
        },
        None,
        CancellationToken::new(),
    )
    .await
}

#[tokio::test]
async fn read_only_refuses_every_writing_builtin_and_lets_reads_run() {
    let tree = Tree::new();
    tree.write("a.txt", "hello\n");
    let p = policy(json!({"read_only": true}));
    for (tool, args) in [
        (Builtin::WriteFile, json!({"path": "b.txt", "content": "x"})),
        (
            Builtin::EditFile,
            json!({"path": "a.txt", "old": "hello", "new": "bye"}),
        ),
        (Builtin::Shell, json!({"command": "touch c.txt"})),
        (Builtin::GitCommit, json!({"message": "m"})),
    ] {
        let err = run(&tree, tool, args, &p, false).await.unwrap_err();
        assert_eq!(err.rule(), Some(Rule::ReadOnly), "{err}");
        assert!(err.to_string().contains("`read-only`"), "{err}");
    }
    assert!(!tree.root.join("b.txt").exists() && !tree.root.join("c.txt").exists());
    assert_eq!(
        std::fs::read_to_string(tree.root.join("a.txt")).unwrap(),
        "hello\n"
    );
    let out = run(
        &tree,
        Builtin::ReadFile,
        json!({"path": "a.txt"}),
        &p,
        false,
    )
    .await
    .unwrap();
    assert!(out.text.contains("hello"));
}

#[tokio::test]
async fn approval_required_refuses_unless_approved() {
    let tree = Tree::new();
    tree.write("a.txt", "hello\n");
    let p = policy(json!({"approval": "required"}));
    let err = run(
        &tree,
        Builtin::ReadFile,
        json!({"path": "a.txt"}),
        &p,
        false,
    )
    .await
    .unwrap_err();
    assert_eq!(err.rule(), Some(Rule::ApprovalRequired), "{err}");
    run(&tree, Builtin::ReadFile, json!({"path": "a.txt"}), &p, true)
        .await
        .unwrap();
}

#[tokio::test]
async fn timeout_s_kills_the_shell_tree() {
    let tree = Tree::new();
    let p = policy(json!({"timeout_s": 1}));
    let err = run(&tree, Builtin::Shell, json!({"command": TREE}), &p, false)
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::TimedOut(_)), "{err}");
    let grandchild = pid_in(&tree.root.join("grandchild.pid")).await;
    assert!(
        wait_gone(grandchild).await,
        "grandchild {grandchild} still runs"
    );
}

#[test]
fn concurrent_audit_lines_never_interleave() {
    const THREADS: usize = 8;
    const CALLS: usize = 50;
    let tree = Tree::new();
    tree.write("a.txt", "hello\n");
    let log = AuditLog::new(tree.dir.path().join("audit").join("audit.jsonl"));
    let full = policy(json!({"audit": "full"}));
    let digest = policy(json!({"audit": true}));
    // A long argument makes every line several KiB, so a torn write would show.
    let pad = "x".repeat(8192);
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            let (tree, log, pad) = (&tree, &log, &pad);
            let p = if thread % 2 == 0 { &full } else { &digest };
            scope.spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                runtime.block_on(async {
                    let context = CallContext {
                        skill: Some("local/demo".into()),
                        include_path: Some("local/demo".into()),
                        approved: false,
                    };
                    for call in 0..CALLS {
                        agents_tools::call(
                            &tree.executor(),
                            Builtin::ReadFile,
                            json!({"path": "a.txt", "pad": format!("{thread}-{call}-{pad}")}),
                            p,
                            &context,
                            Some(log),
                            CancellationToken::new(),
                        )
                        .await
                        .ok();
                    }
                });
            });
        }
    });
    let text = std::fs::read_to_string(log.path()).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), THREADS * CALLS);
    for line in &lines {
        assert_eq!(line["tool"], "read_file");
        assert_eq!(line["skill"], "local/demo");
        assert!(line["args_digest"].as_str().unwrap().starts_with("sha256:"));
        assert!(line["time"].is_string() && line["duration_ms"].is_u64());
        assert!(line.get("exit_code").is_some());
    }
    let with_args = lines.iter().filter(|l| l.get("args").is_some()).count();
    assert_eq!(
        with_args,
        THREADS / 2 * CALLS,
        "raw arguments only with `audit: full`"
    );
    let mode = std::fs::metadata(log.path()).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[tokio::test]
async fn an_audited_call_refused_is_still_audited() {
    let tree = Tree::new();
    let log = AuditLog::new(tree.dir.path().join("audit.jsonl"));
    let p = policy(json!({"audit": true, "read_only": true}));
    let err = agents_tools::call(
        &tree.executor(),
        Builtin::WriteFile,
        json!({"path": "b.txt", "content": "x"}),
        &p,
        &CallContext::default(),
        Some(&log),
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert_eq!(err.rule(), Some(Rule::ReadOnly));
    let line: Value =
        serde_json::from_str(std::fs::read_to_string(log.path()).unwrap().trim()).unwrap();
    assert_eq!(line["outcome"], "refused");
    assert_eq!(line["tool"], "write_file");
}

#[tokio::test]
async fn sandbox_strict_confines_the_shell_a_policy_runs() {
    let tree = Tree::new();
    let escaped = tree.outside.join("escaped");
    let command = format!("echo x > '{}'; echo y > inside", escaped.display());
    let p = policy(json!({"sandbox": "strict"}));
    let out = run(
        &tree,
        Builtin::Shell,
        json!({"command": command}),
        &p,
        false,
    )
    .await
    .unwrap();
    assert!(out.text.contains("Permission denied"), "{}", out.text);
    assert!(!escaped.exists() && tree.root.join("inside").exists());
}
