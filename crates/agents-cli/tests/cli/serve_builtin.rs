//! `agents mcp serve` running builtin tools itself, driven by the official
//! Python SDK client (`tests/cli/py/builtin_client.py`) over stdio and
//! streamable HTTP, on a temporary tree and git repository.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::serve::{agents_http, nix_kill, python_script, text_of};
use crate::support::{Sandbox, python};

pub(crate) const ALL: [&str; 11] = [
    "read_file",
    "write_file",
    "edit_file",
    "list_dir",
    "glob",
    "grep",
    "shell",
    "http_get",
    "git_status",
    "git_diff",
    "git_commit",
];

/// Registers `l/b` with every builtin (`overrides` as YAML flow map
/// entries under `overrides:`, one a line) and a custom tool the gateway
/// cannot run.
fn builtin_skill(sb: &Sandbox, overrides: &str) {
    sb.write(
        "deploy.yaml",
        "name: custom/deploy\ndescription: Deploy\ninput_schema: {type: object}\n",
    );
    sb.run(&["tool", "add", sb.path("deploy.yaml").to_str().unwrap()])
        .ok();
    let tools: Vec<String> = ALL.iter().map(|t| format!("builtin/{t}")).collect();
    let text = format!(
        "name: l/b\ndescription: Builtins\ntools: [{}, custom/deploy]\noverrides:\n{overrides}",
        tools.join(", ")
    );
    let file = sb.write("b.yaml", &text);
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
}

/// The workspace `ws` (a git repository with `a.txt` committed, `sub/b.txt`,
/// and `link` leading out to `outside/`, which holds `secret.txt`).
fn workspace(sb: &Sandbox) -> (PathBuf, PathBuf) {
    let ws = sb.path("ws");
    let outside = sb.path("outside");
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(ws.join("a.txt"), "hello\nworld\n").unwrap();
    std::fs::write(ws.join("sub/b.txt"), "bee\n").unwrap();
    std::fs::write(outside.join("secret.txt"), "outside-secret\n").unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("link")).unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(&ws)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    };
    git(&["init", "-q"]);
    // `git_commit` runs git as the tool does: the identity is the repository's.
    git(&["config", "user.name", "t"]);
    git(&["config", "user.email", "t@example.com"]);
    git(&["add", "a.txt"]);
    git(&["commit", "-q", "-m", "first"]);
    (ws, outside)
}

/// The Python SDK's interpreter, a sandbox with the workspace (and the
/// folder outside it) and `l/b` overridden `overrides`, and its export
/// names; `None` when the SDK is not installed (outside CI).
#[allow(clippy::type_complexity)]
fn setup(
    test: &str,
    overrides: &str,
) -> Option<(String, Sandbox, PathBuf, PathBuf, HashMap<String, String>)> {
    let python = python(test)?;
    let sb = Sandbox::new();
    let (ws, outside) = workspace(&sb);
    builtin_skill(&sb, overrides);
    let names = export_names(&sb, "l/b");
    Some((python, sb, ws, outside, names))
}

/// Export names by registry name (`builtin/` left off), from `mcp serve
/// --dry-run`.
fn export_names(sb: &Sandbox, skill: &str) -> HashMap<String, String> {
    served(sb, skill)
        .0
        .into_iter()
        .map(|(name, export)| (name.trim_start_matches("builtin/").to_owned(), export))
        .collect()
}

/// Export names by registry name, and the whole `mcp serve --dry-run
/// --format json`.
pub(crate) fn served(sb: &Sandbox, skill: &str) -> (HashMap<String, String>, Value) {
    let out = sb
        .run(&["mcp", "serve", skill, "--dry-run", "--format", "json"])
        .ok()
        .json();
    let names = out["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["_meta"]["io.cleveragents/name"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
                t["name"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    (names, out)
}

/// Runs `builtin_client.py` with `config`, then `args` (`-- agents mcp
/// serve …` or `--url URL`).
pub(crate) fn client(sb: &Sandbox, python: &str, config: &Value, args: &[String]) -> Value {
    python_script(sb, python, "builtin_client.py", &config.to_string(), args)
}

/// `agents mcp serve l/b --root WS` over HTTP without a token: the child
/// and its URL.
fn http_gateway(sb: &Sandbox, ws: &Path) -> (std::process::Child, String) {
    let args = ["mcp", "serve", "l/b", "--root", ws.to_str().unwrap()];
    let http = ["--http", "127.0.0.1:0", "--no-auth"];
    agents_http(sb, &[&args[..], &http[..]].concat(), &[])
}

/// `-- agents mcp serve l/b EXTRA…` (stdio).
fn stdio(extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = vec!["--".into(), env!("CARGO_BIN_EXE_agents").into()];
    args.extend(["mcp", "serve", "l/b"].map(String::from));
    args.extend(extra.iter().map(|a| (*a).to_owned()));
    args
}

fn call(names: &HashMap<String, String>, tool: &str, arguments: Value) -> Value {
    json!({"call": names[tool], "arguments": arguments})
}

/// Every builtin once on the workspace, then every root escape.
fn every_builtin_steps(names: &HashMap<String, String>, outside: &Path) -> Value {
    json!([
        {"list": true},
        call(names, "read_file", json!({"path": "a.txt"})),
        call(names, "write_file", json!({"path": "new.txt", "content": "x1\n"})),
        call(names, "edit_file", json!({"path": "new.txt", "old": "x1", "new": "y2"})),
        call(names, "list_dir", json!({"path": "."})),
        call(names, "glob", json!({"pattern": "**/*.txt"})),
        call(names, "grep", json!({"pattern": "wor+ld"})),
        call(names, "shell", json!({"command": "echo shell-ran; git add new.txt"})),
        call(names, "http_get", json!({"url": "http://127.0.0.1:9/"})),
        call(names, "git_status", json!({})),
        call(names, "git_diff", json!({"rev": "HEAD"})),
        call(names, "git_commit", json!({"message": "from the gateway"})),
        // Escapes: `..`, an absolute path outside, a link out, a write
        // through a link out.
        call(names, "read_file", json!({"path": "../outside/secret.txt"})),
        call(names, "read_file", json!({"path": outside.join("secret.txt")})),
        call(names, "read_file", json!({"path": "link/secret.txt"})),
        call(names, "write_file", json!({"path": "link/evil.txt", "content": "no"})),
    ])
}

fn check_every_builtin(out: &Value, ws: &Path, outside: &Path) {
    let steps = out["steps"].as_array().unwrap();
    let tools = steps[0]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 11, "{}", steps[0]);
    let annotations = |name: &str| {
        tools
            .iter()
            .find(|t| t["_meta"]["io.cleveragents/name"] == format!("builtin/{name}"))
            .unwrap()["annotations"]
            .clone()
    };
    assert_eq!(annotations("read_file")["readOnlyHint"], true);
    assert_eq!(annotations("write_file")["destructiveHint"], true);
    assert_eq!(annotations("write_file")["readOnlyHint"], false);
    let ok = |i: usize, contains: &str| {
        assert_ne!(steps[i]["isError"], true, "step {i}: {}", steps[i]);
        assert!(
            text_of(&steps[i]).contains(contains),
            "step {i}: {}",
            steps[i]
        );
    };
    ok(1, "hello");
    ok(4, "a.txt");
    ok(5, "sub/b.txt");
    ok(6, "a.txt");
    ok(7, "shell-ran");
    ok(9, "new.txt");
    ok(10, "y2");
    assert_eq!(
        std::fs::read_to_string(ws.join("new.txt")).unwrap(),
        "y2\n",
        "write_file then edit_file"
    );
    assert_eq!(steps[8]["isError"], true, "{}", steps[8]);
    assert!(
        text_of(&steps[8]).contains("private-network"),
        "{}",
        steps[8]
    );
    assert_ne!(steps[11]["isError"], true, "{}", steps[11]);
    let log = Command::new("git")
        .args(["log", "--format=%s"])
        .current_dir(ws)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&log.stdout).contains("from the gateway"));
    for (i, rule) in [
        (12, "parent-dir"),
        (13, "outside-roots"),
        (14, "symlink-escape"),
        (15, "symlink-escape"),
    ] {
        assert_eq!(steps[i]["isError"], true, "step {i}: {}", steps[i]);
        let text = text_of(&steps[i]);
        assert!(text.contains(rule), "step {i} should name {rule}: {text}");
        assert!(!text.contains("outside-secret"), "{text}");
    }
    assert!(!outside.join("evil.txt").exists());
}

#[test]
fn every_builtin_runs_in_the_root_over_stdio_and_escapes_are_refused() {
    let Some((python, sb, ws, outside, names)) = setup("serve_builtins_stdio", "") else {
        return;
    };
    let config = json!({"steps": every_builtin_steps(&names, &outside)});
    let out = client(
        &sb,
        &python,
        &config,
        &stdio(&["--root", ws.to_str().unwrap()]),
    );
    check_every_builtin(&out, &ws, &outside);
    // What is not served, and why, is in the instructions.
    let instructions = out["instructions"].as_str().unwrap();
    assert!(
        instructions.contains("`custom/deploy`: `custom` tools have no executor"),
        "{instructions}"
    );
}

#[test]
fn every_builtin_runs_over_streamable_http() {
    let Some((python, sb, ws, outside, names)) = setup("serve_builtins_http", "") else {
        return;
    };
    let (mut child, url) = http_gateway(&sb, &ws);
    let config = json!({"steps": every_builtin_steps(&names, &outside)});
    let out = client(&sb, &python, &config, &["--url".into(), url]);
    nix_kill(child.id());
    assert!(child.wait().unwrap().success());
    check_every_builtin(&out, &ws, &outside);
}

#[test]
fn builtins_act_in_the_clients_roots_and_follow_their_changes() {
    let Some(python) = python("serve_builtins_roots") else {
        return;
    };
    let sb = Sandbox::new();
    builtin_skill(&sb, "");
    let names = export_names(&sb, "l/b");
    let (one, two, flag) = (sb.path("one"), sb.path("two"), sb.path("flag"));
    for (dir, text) in [(&one, "in one"), (&two, "in two"), (&flag, "in flag")] {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("where.txt"), text).unwrap();
    }
    let read = call(&names, "read_file", json!({"path": "where.txt"}));
    // The server may handle the notification after the call sent behind it.
    let mut until_two = read.clone();
    until_two["until"] = json!("in two");
    let config = json!({
        "roots": [one],
        "steps": [read, {"set_roots": [two]}, until_two],
    });
    // `--root` is for clients that offer no roots: this one does.
    let out = client(
        &sb,
        &python,
        &config,
        &stdio(&["--root", flag.to_str().unwrap()]),
    );
    let steps = out["steps"].as_array().unwrap();
    assert_eq!(text_of(&steps[0]), "in one", "{}", steps[0]);
    assert_eq!(text_of(&steps[2]), "in two", "{}", steps[2]);
    assert_eq!(out["roots_listed"], 2, "{out}");
    // A client without roots gets `--root`.
    let config = json!({"steps": [read]});
    let out = client(
        &sb,
        &python,
        &config,
        &stdio(&["--root", flag.to_str().unwrap()]),
    );
    assert_eq!(text_of(&out["steps"][0]), "in flag", "{out}");
}

#[test]
fn dry_run_and_stderr_say_which_entries_are_not_served() {
    let sb = Sandbox::new();
    builtin_skill(&sb, "");
    let out = sb.run(&["mcp", "serve", "l/b", "--dry-run"]).ok();
    assert!(
        out.stdout
            .contains("serve builtin__read_file (builtin/read_file, run by the gateway)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("left out `custom/deploy`: `custom` tools have no executor"),
        "{}",
        out.stdout
    );
    let json = sb
        .run(&["mcp", "serve", "l/b", "--dry-run", "--format", "json"])
        .ok()
        .json();
    assert_eq!(json["tools"].as_array().unwrap().len(), 11, "{json}");
    assert_eq!(json["left_out"][0]["name"], "custom/deploy", "{json}");
    // Serving (stdin closed at once): the start-up line on stderr names it.
    let served = sb
        .cmd()
        .args(["mcp", "serve", "l/b"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&served.stderr);
    assert!(
        stderr.contains("serving 11 tool(s)") && stderr.contains("`custom/deploy`"),
        "{stderr}"
    );
}

/// The overrides of the policy tests: a one-second deadline on `shell`,
/// `write_file` narrowed to reading, `read_file` audited.
const POLICY: &str = "  builtin/shell: {timeout_s: 1}\n  builtin/write_file: {read_only: true}\n  builtin/read_file: {audit: true}\n";

#[test]
fn a_shell_tree_dies_at_timeout_s_and_read_only_refuses_write_file() {
    let Some((python, sb, ws, _, names)) = setup("serve_builtins_policy", POLICY) else {
        return;
    };
    // A tree: the shell, two sleeps in the background and one waited on.
    let marker = "987651";
    let config = json!({"steps": [
        call(&names, "shell", json!({"command": format!("sleep {marker}1 & sleep {marker}2 & sleep {marker}3; wait")})),
        {"count": marker, "after": 1, "within": 10},
        call(&names, "write_file", json!({"path": "ro.txt", "content": "no"})),
        {"list": true},
    ]});
    let out = client(
        &sb,
        &python,
        &config,
        &stdio(&["--root", ws.to_str().unwrap()]),
    );
    let steps = out["steps"].as_array().unwrap();
    assert_eq!(steps[0]["isError"], true, "{}", steps[0]);
    assert!(text_of(&steps[0]).contains("timed out"), "{}", steps[0]);
    assert_eq!(
        steps[1]["running"], 0,
        "a process of the tree outlived the call"
    );
    assert_eq!(steps[2]["isError"], true, "{}", steps[2]);
    assert!(text_of(&steps[2]).contains("read-only"), "{}", steps[2]);
    assert!(!ws.join("ro.txt").exists());
    // Narrowed, it is served as read-only too.
    let write = steps[3]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["_meta"]["io.cleveragents/name"] == "builtin/write_file")
        .unwrap();
    assert_eq!(write["annotations"]["readOnlyHint"], true, "{write}");
}

#[test]
fn concurrent_audited_calls_over_http_write_whole_lines_to_one_file() {
    let Some((python, sb, ws, _, names)) = setup("serve_builtins_audit", POLICY) else {
        return;
    };
    let (mut child, url) = http_gateway(&sb, &ws);
    let calls: Vec<Value> = (0..8)
        .map(|i| call(&names, "read_file", json!({"path": "a.txt", "offset": i})))
        .collect();
    // `list_dir` is not audited: no line.
    let config =
        json!({"steps": [{"together": calls}, call(&names, "list_dir", json!({"path": "."}))]});
    let out = client(&sb, &python, &config, &["--url".into(), url]);
    nix_kill(child.id());
    assert!(child.wait().unwrap().success());
    for result in out["steps"][0].as_array().unwrap() {
        assert_ne!(result["isError"], true, "{result}");
    }
    let file = sb.home().join(".cleveragents/audit.jsonl");
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    assert_eq!(lines.len(), 8, "{text}");
    let mut digests = std::collections::HashSet::new();
    for line in &lines {
        assert_eq!(line["tool"], "read_file", "{line}");
        assert_eq!(line["skill"], "l/b", "{line}");
        assert_eq!(line["outcome"], "ok", "{line}");
        assert!(line.get("args").is_none(), "digest only: {line}");
        digests.insert(line["args_digest"].as_str().unwrap().to_owned());
    }
    assert_eq!(digests.len(), 8, "one line a call");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn the_audit_flag_audits_every_call_into_the_audit_file() {
    let Some((python, sb, ws, _, names)) = setup("serve_builtins_audit_flag", "") else {
        return;
    };
    let file = sb.path("my-audit.jsonl");
    let config = json!({"steps": [call(&names, "list_dir", json!({"path": "."}))]});
    client(
        &sb,
        &python,
        &config,
        &stdio(&[
            "--root",
            ws.to_str().unwrap(),
            "--audit",
            "--audit-file",
            file.to_str().unwrap(),
        ]),
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.contains("\"tool\":\"list_dir\""), "{text}");
    assert!(!sb.home().join(".cleveragents/audit.jsonl").exists());
}

#[test]
fn approval_is_asked_through_elicitation_with_secrets_masked() {
    let Some((python, sb, ws, _, names)) = setup(
        "serve_builtins_approval",
        "  builtin/shell: {approval: required}\n",
    ) else {
        return;
    };
    let root = ["--root", ws.to_str().unwrap()];
    let command = "echo PASSWORD=hunter2-secret >/dev/null; echo approved-and-ran";
    let steps = json!([call(&names, "shell", json!({"command": command}))]);
    let run = |answer: Option<&str>, extra: &[&str]| {
        let mut config = json!({"steps": steps});
        if let Some(answer) = answer {
            config["elicitation"] = json!(answer);
        }
        client(&sb, &python, &config, &stdio(&[&root[..], extra].concat()))
    };
    let accepted = run(Some("accept"), &[]);
    assert!(
        text_of(&accepted["steps"][0]).contains("approved-and-ran"),
        "{accepted}"
    );
    let asked = accepted["elicited"][0].as_str().unwrap();
    for shown in [
        names["shell"].as_str(),
        "builtin/shell",
        "l/b",
        "echo PASSWORD=",
    ] {
        assert!(asked.contains(shown), "{shown} not in {asked}");
    }
    assert!(!asked.contains("hunter2-secret"), "{asked}");
    for (answer, why) in [("decline", "declined"), ("cancel", "cancelled")] {
        let out = run(Some(answer), &[]);
        assert_eq!(out["steps"][0]["isError"], true, "{out}");
        let text = text_of(&out["steps"][0]);
        assert!(
            text.contains("approval-required") && text.contains(why),
            "{text}"
        );
        assert!(!text.contains("approved-and-ran"), "{text}");
    }
    // A client that cannot ask: refused, unless approved beforehand.
    let unasked = run(None, &[]);
    assert_eq!(unasked["steps"][0]["isError"], true, "{unasked}");
    assert!(
        text_of(&unasked["steps"][0]).contains("cannot ask"),
        "{unasked}"
    );
    for flag in [&["--approve", "shell"][..], &["--approve-all"][..]] {
        let approved = run(None, flag);
        assert!(
            text_of(&approved["steps"][0]).contains("approved-and-ran"),
            "{flag:?}: {approved}"
        );
        assert_eq!(approved["elicited"], json!([]));
    }
}

#[test]
fn approval_is_asked_over_streamable_http() {
    let Some((python, sb, ws, _, names)) = setup(
        "serve_builtins_approval_http",
        "  builtin/list_dir: {approval: required}\n",
    ) else {
        return;
    };
    let (mut child, url) = http_gateway(&sb, &ws);
    let list = call(&names, "list_dir", json!({"path": "."}));
    let accept = json!({"elicitation": "accept", "steps": [list]});
    let accepted = client(&sb, &python, &accept, &["--url".into(), url.clone()]);
    let decline = json!({"elicitation": "decline", "steps": [list]});
    let declined = client(&sb, &python, &decline, &["--url".into(), url]);
    nix_kill(child.id());
    assert!(child.wait().unwrap().success());
    assert!(
        text_of(&accepted["steps"][0]).contains("a.txt"),
        "{accepted}"
    );
    assert_eq!(declined["steps"][0]["isError"], true, "{declined}");
}

#[test]
fn the_shipped_devops_toolkit_serves_every_builtin_it_composes() {
    let sb = Sandbox::new();
    crate::support::add_examples(&sb);
    let out = sb
        .run(&[
            "mcp",
            "serve",
            "local/devops-toolkit",
            "--dry-run",
            "--format",
            "json",
        ])
        .ok()
        .json();
    let mut served: Vec<&str> = out["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["_meta"]["io.cleveragents/name"].as_str())
        .filter(|name| name.starts_with("builtin/"))
        .collect();
    served.sort_unstable();
    assert_eq!(
        served,
        [
            "builtin/edit_file",
            "builtin/git_commit",
            "builtin/git_diff",
            "builtin/git_status",
            "builtin/glob",
            "builtin/grep",
            "builtin/http_get",
            "builtin/read_file",
            "builtin/shell",
        ]
    );
    let left_out = out["left_out"].to_string();
    assert!(!left_out.contains("builtin/"), "{left_out}");
}

/// Proxied tools get the policy too: an audited `echo` leaves a line (with
/// its arguments under `audit: full`), and `get-sum`, which needs approval,
/// is refused for a client that cannot ask, and audited as refused.
#[test]
fn proxied_calls_are_audited_and_need_their_approval() {
    let (Some(entry), Some(python)) = (
        crate::support::everything("serve_proxied_policy"),
        python("serve_proxied_policy"),
    ) else {
        return;
    };
    let sb = Sandbox::new();
    let marker = format!("gw-policy-{}", std::process::id());
    let text = format!(
        "name: l/b\ndescription: Proxied policy\nmcp_sources:\n  - server: everything\n    command: node\n    args: [\"{entry}\", stdio]\n    env: {{AGENTS_TEST_MARKER: {marker}}}\n    tools: [echo, get-sum]\noverrides:\n  mcp:everything/echo: {{audit: full}}\n  mcp:everything/get-sum: {{approval: required, audit: true}}\n"
    );
    let file = sb.write("p.yaml", &text);
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    sb.run(&["skill", "tools", "l/b", "--refresh"]).ok();
    let names = export_names(&sb, "l/b");
    let config = json!({"steps": [
        call(&names, "mcp:everything/echo", json!({"message": "audited"})),
        call(&names, "mcp:everything/get-sum", json!({"a": 1, "b": 2})),
    ]});
    let out = client(&sb, &python, &config, &stdio(&[]));
    let steps = out["steps"].as_array().unwrap();
    assert!(text_of(&steps[0]).contains("audited"), "{}", steps[0]);
    assert_eq!(steps[1]["isError"], true, "{}", steps[1]);
    assert!(
        text_of(&steps[1]).contains("approval-required"),
        "{}",
        steps[1]
    );
    let audit = std::fs::read_to_string(sb.home().join(".cleveragents/audit.jsonl")).unwrap();
    let lines: Vec<Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{audit}");
    assert_eq!(lines[0]["tool"], "mcp:everything/echo");
    assert_eq!(lines[0]["outcome"], "ok");
    assert_eq!(lines[0]["args"]["message"], "audited", "audit: full");
    assert_eq!(lines[1]["tool"], "mcp:everything/get-sum");
    assert_eq!(lines[1]["outcome"], "refused");
    assert!(lines[1].get("args").is_none(), "{}", lines[1]);
    assert_eq!(crate::support::settle(&marker), 0);
}

/// `local/devops-toolkit` as the shipped files register it (with
/// `custom/deploy` and the example Agent Skills) is served whole through
/// the Python SDK client: every entry `skill tools` lists, nothing left
/// out; its `run` tools run, and a `git-tools` entry (that include is
/// overridden `approval: required, audit: true`) asks through elicitation
/// and writes one audit line. `npx` is a stand-in on `PATH` that starts
/// the locally installed server-everything the shipped launch line names.
#[test]
fn the_shipped_devops_toolkit_is_served_whole_with_its_policy() {
    let (Some(entry), Some(python)) = (
        crate::support::everything("serve_shipped_whole"),
        python("serve_shipped_whole"),
    ) else {
        return;
    };
    let sb = Sandbox::new();
    let (ws, _) = workspace(&sb);
    std::fs::write(ws.join("spaces.txt"), "one  \ntwo\t\nthree\n").unwrap();
    let examples = crate::support::examples();
    let skills = sb.home().join(".cleveragents/agent_skills");
    for name in ["pdf-processing", "release-notes"] {
        let from = examples.join("agent_skills").join(name);
        for file in std::fs::read_dir(&from).unwrap() {
            let file = file.unwrap();
            std::fs::create_dir_all(skills.join(name)).unwrap();
            std::fs::copy(file.path(), skills.join(name).join(file.file_name())).unwrap();
        }
    }
    let npx = sb.write(
        "bin/npx",
        &format!("#!/bin/sh\nexec node '{entry}' stdio\n"),
    );
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&npx, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!(
        "PATH={}:{}",
        sb.path("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let deploy = examples.join("tools/deploy.yaml");
    sb.run(&["tool", "add", deploy.to_str().unwrap()]).ok();
    crate::support::add_examples(&sb);
    sb.run(&["skill", "discover"]).ok();
    let listed = sb
        .run_env(
            &[
                "skill",
                "tools",
                "local/devops-toolkit",
                "--refresh",
                "--format",
                "json",
            ],
            &[("PATH", &path["PATH=".len()..])],
        )
        .ok()
        .json();
    let entries: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let (names, dry) = served(&sb, "local/devops-toolkit");
    assert_eq!(dry["left_out"], json!([]), "{dry}");
    assert_eq!(dry["skills"][0]["name"], "pdf-processing", "{dry}");

    let audit = sb.path("audit.jsonl");
    let args: Vec<String> = [
        "--",
        "env",
        &path,
        env!("CARGO_BIN_EXE_agents"),
        "mcp",
        "serve",
        "local/devops-toolkit",
        "--root",
        ws.to_str().unwrap(),
        "--audit-file",
        audit.to_str().unwrap(),
    ]
    .map(String::from)
    .to_vec();
    let config = json!({"elicitation": "accept", "steps": [
        {"list": true},
        call(&names, "custom/deploy", json!({"environment": "staging", "version": "1.4.2"})),
        call(&names, "builtin/git_status", json!({})),
        call(&names, "local/devops-toolkit/_anon_0", json!({"path": "spaces.txt"})),
        call(&names, "local/devops-toolkit/_anon_1", json!({})),
        call(&names, "mcp:everything/get-sum", json!({"a": 2, "b": 3})),
    ]});
    let out = client(&sb, &python, &config, &args);
    let steps = out["steps"].as_array().unwrap();
    // Served whole: every tool entry (an Agent Skill is served as a resource).
    let mut served_names: Vec<&str> = steps[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["_meta"]["io.cleveragents/name"].as_str().unwrap())
        .collect();
    let mut tool_entries: Vec<&str> = entries
        .iter()
        .copied()
        .filter(|name| !name.starts_with("agent_skill:"))
        .collect();
    served_names.sort_unstable();
    tool_entries.sort_unstable();
    assert_eq!(served_names, tool_entries);
    assert_eq!(tool_entries.len(), 14, "{entries:?}");
    assert!(
        !out["instructions"]
            .as_str()
            .unwrap_or("")
            .contains("left out"),
        "{}",
        out["instructions"]
    );
    assert_eq!(
        text_of(&steps[1]),
        "deploying 1.4.2 to staging\n",
        "{}",
        steps[1]
    );
    assert_ne!(steps[2]["isError"], true, "{}", steps[2]);
    assert_eq!(
        std::fs::read_to_string(ws.join("spaces.txt")).unwrap(),
        "one\ntwo\nthree\n",
        "{}",
        steps[3]
    );
    assert!(
        text_of(&steps[4]).trim_end().ends_with("\t."),
        "{}",
        steps[4]
    );
    assert!(text_of(&steps[5]).contains('5'), "{}", steps[5]);
    // Only git_status came through `local/git-tools`: one question, one line.
    let asked = out["elicited"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "{out}");
    let asked = asked[0].as_str().unwrap();
    assert!(
        asked.contains("builtin/git_status") && asked.contains("local/git-tools"),
        "{asked}"
    );
    let lines = std::fs::read_to_string(&audit).unwrap();
    assert_eq!(lines.lines().count(), 1, "{lines}");
    let line: Value = serde_json::from_str(lines.trim()).unwrap();
    assert!(
        line["tool"].as_str().unwrap().contains("git_status"),
        "{line}"
    );
    assert_eq!(line["outcome"], "ok", "{line}");
}

#[test]
fn hostile_arguments_through_the_gateway_get_bounded_tool_errors() {
    let Some((python, sb, ws, outside, names)) = setup("serve_builtins_hostile", "") else {
        return;
    };
    // Too large for a command line: the steps go in a file.
    let huge = "a".repeat(1_000_000);
    let hostile = [
        call(&names, "read_file", json!({"path": huge})),
        call(&names, "write_file", json!({"path": huge, "content": "x"})),
        call(
            &names,
            "grep",
            json!({"pattern": format!("({huge}){{1000}}")}),
        ),
        call(&names, "grep", json!({"pattern": "a\u{0}b"})),
        call(&names, "read_file", json!({"path": "a.txt\u{0}../outside"})),
        call(&names, "glob", json!({"pattern": "/**"})),
        call(&names, "glob", json!({"pattern": "../**"})),
        call(
            &names,
            "read_file",
            json!({"path": "a.txt\n../../outside/secret.txt"}),
        ),
        call(
            &names,
            "write_file",
            json!({"path": "../outside/new\nline.txt", "content": "no"}),
        ),
    ];
    let mut steps: Vec<Value> = hostile.to_vec();
    // The session goes on answering after them.
    steps.push(call(&names, "read_file", json!({"path": "a.txt"})));
    let config = sb.write("hostile.json", &json!({"steps": steps}).to_string());
    let out = python_script(
        &sb,
        &python,
        "builtin_client.py",
        &format!("@{}", config.display()),
        &stdio(&["--root", ws.to_str().unwrap()]),
    );
    let steps = out["steps"].as_array().unwrap();
    for (i, step) in steps.iter().enumerate().take(hostile.len()) {
        assert_eq!(step["isError"], true, "step {i}: {step}");
        let text = text_of(step);
        assert!(text.len() < 4096, "step {i}: {} bytes", text.len());
        assert!(!text.contains("outside-secret"), "step {i}: {text}");
    }
    for (i, rule) in [
        (3, "nul"),
        (5, "outside-roots"),
        (6, "parent-dir"),
        (8, "parent-dir"),
    ] {
        let text = text_of(&steps[i]);
        assert!(text.contains(rule), "step {i} should name {rule}: {text}");
    }
    assert!(text_of(&steps[hostile.len()]).contains("hello"));
    // Nothing was written outside the roots.
    let outside_files: Vec<_> = std::fs::read_dir(&outside).unwrap().collect();
    assert_eq!(outside_files.len(), 1, "{outside_files:?}");
}
