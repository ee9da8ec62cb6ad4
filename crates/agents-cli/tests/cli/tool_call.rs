//! `agents tool call`: one builtin on a real tree, under a skill entry's
//! policy.

use serde_json::Value;

use crate::support::{Sandbox, processes_with, settle};

/// A sandbox with a registry, a workspace `ws` holding `a.txt`, and a file
/// `outside.txt` beside it.
fn workspace() -> (Sandbox, String) {
    let sb = Sandbox::new();
    sb.init_db();
    sb.write("ws/a.txt", "alpha\nbeta needle\n");
    sb.write("outside.txt", "secret\n");
    let ws = sb.path("ws").to_str().unwrap().to_owned();
    (sb, ws)
}

#[test]
fn read_write_and_grep_run_inside_the_root() {
    let (sb, ws) = workspace();
    let run = sb
        .run(&[
            "tool",
            "call",
            "read_file",
            "--args",
            r#"{"path": "a.txt"}"#,
            "--root",
            &ws,
        ])
        .ok();
    assert!(run.stdout.contains("beta needle"), "{}", run.stdout);
    sb.run(&[
        "tool",
        "call",
        "builtin/write_file",
        "--args",
        r#"{"path": "b.txt", "content": "written\n"}"#,
        "--root",
        &ws,
    ])
    .ok();
    assert_eq!(
        std::fs::read_to_string(sb.path("ws/b.txt")).unwrap(),
        "written\n"
    );
    let run = sb
        .run(&[
            "tool",
            "call",
            "grep",
            "--args",
            r#"{"pattern": "needle"}"#,
            "--root",
            &ws,
        ])
        .ok();
    assert!(
        run.stdout.contains("a.txt") && run.stdout.contains("needle"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_root_escape_is_refused_with_its_rule() {
    let (sb, ws) = workspace();
    let run = sb
        .run(&[
            "tool",
            "call",
            "read_file",
            "--args",
            r#"{"path": "../outside.txt"}"#,
            "--root",
            &ws,
        ])
        .fails(1);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(run.stderr.contains("`parent-dir`"), "{}", run.stderr);
    assert!(!run.stderr.contains("secret"));
}

/// A skill naming `write_file` and `shell`, with these overrides on them.
fn skill(sb: &Sandbox, overrides: &str) {
    let file = sb.write(
        "skill.yaml",
        &format!(
            "name: local/t\ndescription: t\nversion: \"1.0.0\"\ntools:\n  - builtin/write_file\n  - builtin/shell\n  - builtin/read_file\noverrides:\n{overrides}\n"
        ),
    );
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
}

#[test]
fn read_only_override_refuses_write_file() {
    let (sb, ws) = workspace();
    skill(&sb, "  builtin/write_file: {read_only: true}");
    let run = sb
        .run(&[
            "tool",
            "call",
            "write_file",
            "--skill",
            "local/t",
            "--args",
            r#"{"path": "b.txt", "content": "x"}"#,
            "--root",
            &ws,
        ])
        .fails(1);
    assert!(run.stderr.contains("`read-only`"), "{}", run.stderr);
    assert!(!sb.path("ws/b.txt").exists());
    // Without the skill, the same call runs.
    sb.run(&[
        "tool",
        "call",
        "write_file",
        "--args",
        r#"{"path": "b.txt", "content": "x"}"#,
        "--root",
        &ws,
    ])
    .ok();
}

#[test]
fn timeout_s_kills_a_shell_sleep_and_audits_the_call() {
    let (sb, ws) = workspace();
    skill(&sb, "  builtin/shell: {timeout_s: 1, audit: true}");
    let marker = "AGENTS_TOOL_CALL_TIMEOUT_MARKER";
    let run = sb
        .run(&[
            "tool",
            "call",
            "shell",
            "--skill",
            "local/t",
            "--args",
            &format!(r#"{{"command": "export {marker}=1; sleep 1000 & sleep 1000; wait"}}"#),
            "--root",
            &ws,
        ])
        .fails(1);
    assert!(run.stderr.contains("timed out after 1 s"), "{}", run.stderr);
    assert_eq!(
        settle(marker),
        0,
        "{} processes left",
        processes_with(marker)
    );
    let audit = std::fs::read_to_string(sb.home().join(".cleveragents/audit.jsonl")).unwrap();
    let line: Value = serde_json::from_str(audit.trim()).unwrap();
    assert_eq!(line["tool"], "shell");
    assert_eq!(line["skill"], "local/t");
    assert_eq!(line["outcome"], "timed_out");
    assert!(line.get("args").is_none());
}

#[test]
fn approval_required_is_refused_outside_a_terminal_unless_approved() {
    let (sb, ws) = workspace();
    skill(&sb, "  builtin/read_file: {approval: required}");
    let args = [
        "tool",
        "call",
        "read_file",
        "--skill",
        "local/t",
        "--args",
        r#"{"path": "a.txt"}"#,
        "--root",
        &ws,
    ];
    let run = sb.run(&args).fails(1);
    assert!(run.stderr.contains("`approval-required`"), "{}", run.stderr);
    let mut approved = args.to_vec();
    approved.push("--approve");
    assert!(sb.run(&approved).ok().stdout.contains("alpha"));
}
