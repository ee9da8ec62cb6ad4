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
    assert!(
        run.stderr.contains("`--approve` approves"),
        "{}",
        run.stderr
    );
    let mut approved = args.to_vec();
    approved.push("--approve");
    assert!(sb.run(&approved).ok().stdout.contains("alpha"));
}

/// Adds `custom/greet`, a `run` tool writing `greeted` in its root and
/// printing JSON, from the user's own file.
fn greet_tool(sb: &Sandbox) {
    let file = sb.write(
        "greet.yaml",
        "name: custom/greet\ndescription: greet\nwrites: true\ninput_schema: {type: object, properties: {who: {type: string}}, required: [who]}\noutput_schema: {type: object, properties: {hello: {type: string}}}\nrun:\n  command: /bin/sh\n  args: [-c, 'touch greeted; printf \"{{\\\"hello\\\": \\\"%s\\\"}}\" \"$1\"', sh, '{who}']\n",
    );
    sb.run(&["tool", "add", file.to_str().unwrap()]).ok();
}

#[test]
fn a_run_tool_from_the_users_own_file_runs_and_answers_json() {
    let (sb, ws) = workspace();
    greet_tool(&sb);
    let args = [
        "tool",
        "call",
        "custom/greet",
        "--args",
        r#"{"who": "a b"}"#,
        "--root",
        &ws,
    ];
    let run = sb.run(&args).ok();
    assert_eq!(run.stdout, "{\"hello\": \"a b\"}\n");
    let mut json = args.to_vec();
    json.extend(["--format", "json"]);
    let out: Value = serde_json::from_str(&sb.run(&json).ok().stdout).unwrap();
    assert_eq!(out["structured"]["hello"], "a b");
    assert_eq!(out["is_error"], false);
    // Input checked against the schema: nothing runs.
    std::fs::remove_file(sb.path("ws/greeted")).unwrap();
    let run = sb
        .run(&[
            "tool",
            "call",
            "custom/greet",
            "--args",
            "{}",
            "--root",
            &ws,
        ])
        .fails(2);
    assert!(run.stderr.contains("who"), "{}", run.stderr);
    assert!(!sb.path("ws/greeted").exists());
}

#[test]
fn an_untrusted_run_never_starts_until_trusted_by_digest() {
    let (sb, ws) = workspace();
    greet_tool(&sb);
    // Another user's view: this one's trust store does not hold the run.
    std::fs::remove_file(sb.home().join(".cleveragents/trust.json")).unwrap();
    let args = [
        "tool",
        "call",
        "custom/greet",
        "--args",
        r#"{"who": "x"}"#,
        "--root",
        &ws,
    ];
    let run = sb.run(&args).fails(1);
    assert!(run.stderr.contains("is not trusted"), "{}", run.stderr);
    assert!(!sb.path("ws/greeted").exists());
    let digest: String = run
        .stderr
        .split("--digest ")
        .nth(1)
        .unwrap()
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .collect();
    assert_eq!(digest.len(), 64, "{}", run.stderr);
    // Outside a terminal, only the digest trusts it.
    let refused = sb.run(&["tool", "trust", "custom/greet"]).fails(1);
    assert!(refused.stderr.contains("/bin/sh"), "{}", refused.stderr);
    sb.run(&["tool", "trust", "custom/greet", "--digest", &digest[..32]])
        .ok();
    sb.run(&args).ok();
    assert!(sb.path("ws/greeted").exists());
}

#[test]
fn a_tool_without_run_is_not_callable_and_read_only_refuses_a_writing_run() {
    let (sb, ws) = workspace();
    let file = sb.write("plain.yaml", "name: custom/plain\ndescription: p\n");
    sb.run(&["tool", "add", file.to_str().unwrap()]).ok();
    let run = sb
        .run(&["tool", "call", "custom/plain", "--root", &ws])
        .fails(1);
    assert!(run.stderr.contains("has no `run`"), "{}", run.stderr);
    greet_tool(&sb);
    let skill = sb.write(
        "s.yaml",
        "name: local/g\ndescription: g\nversion: \"1.0.0\"\ntools:\n  - custom/greet\noverrides:\n  custom/greet: {read_only: true}\n",
    );
    sb.run(&["skill", "add", skill.to_str().unwrap()]).ok();
    let run = sb
        .run(&[
            "tool",
            "call",
            "custom/greet",
            "--skill",
            "local/g",
            "--args",
            r#"{"who": "x"}"#,
            "--root",
            &ws,
        ])
        .fails(1);
    assert!(run.stderr.contains("`read-only`"), "{}", run.stderr);
    assert!(!sb.path("ws/greeted").exists());
}

#[test]
fn an_inline_run_tool_under_sandbox_strict_cannot_write_outside_its_root() {
    let (sb, ws) = workspace();
    let outside = sb.path("escaped");
    let skill = sb.write(
        "s.yaml",
        &format!(
            "name: local/w\ndescription: w\nversion: \"1.0.0\"\ninline_tools:\n  - description: w\n    run:\n      command: /bin/sh\n      args: [-c, 'echo x > {}; echo y > inside']\n",
            outside.display()
        ),
    );
    sb.run(&["skill", "add", skill.to_str().unwrap()]).ok();
    let with = |sandbox: &str| {
        let file = sb.write(
            "s2.yaml",
            &format!(
                "name: local/outer\ndescription: o\nversion: \"1.0.0\"\nincludes:\n  - skill: local/w\n    overrides:\n      sandbox: {sandbox}\n"
            ),
        );
        sb.run(&["skill", "apply", file.to_str().unwrap()]).ok();
        sb.run(&[
            "tool",
            "call",
            "local/w/_anon_0",
            "--skill",
            "local/outer",
            "--root",
            &ws,
        ])
    };
    with("strict").ok();
    assert!(!outside.exists());
    assert!(sb.path("ws/inside").exists());
    // Without the sandbox the same tool writes outside: the sandbox did it.
    with("none").ok();
    assert!(outside.exists());
}

#[test]
fn skill_tools_says_what_is_not_callable_not_enforced_or_refused() {
    let (sb, _ws) = workspace();
    let file = sb.write("plain.yaml", "name: custom/plain\ndescription: p\n");
    sb.run(&["tool", "add", file.to_str().unwrap()]).ok();
    greet_tool(&sb);
    skill(
        &sb,
        "  builtin/write_file: {read_only: true}\n  builtin/shell: {rate_limit: 3}",
    );
    let extra = sb.write(
        "x.yaml",
        "name: local/x\ndescription: x\nversion: \"1.0.0\"\ntools: [custom/plain, custom/greet]\n",
    );
    sb.run(&["skill", "add", extra.to_str().unwrap()]).ok();
    let run = sb.run(&["skill", "tools", "local/t"]).ok();
    assert!(
        run.stderr
            .contains("`builtin/write_file` is overridden `read_only: true` but writes"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("`builtin/shell`: override `rate_limit` is not enforced"),
        "{}",
        run.stderr
    );
    let json: Value = serde_json::from_str(
        &sb.run(&["skill", "tools", "local/t", "--format", "json"])
            .ok()
            .stdout,
    )
    .unwrap();
    let shell = json["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "builtin/shell")
        .unwrap();
    assert_eq!(shell["not_enforced"][0]["key"], "rate_limit");
    let json: Value = serde_json::from_str(
        &sb.run(&["skill", "tools", "local/x", "--format", "json"])
            .ok()
            .stdout,
    )
    .unwrap();
    let tools = json["tools"].as_array().unwrap();
    assert_eq!(tools[0]["callable"], false);
    assert!(
        tools[0]["not_callable"]
            .as_str()
            .unwrap()
            .contains("no `run`"),
        "{}",
        tools[0]
    );
    assert_eq!(tools[1]["callable"], true);
}
