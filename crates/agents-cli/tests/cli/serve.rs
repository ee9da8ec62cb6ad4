//! `agents mcp serve` driven by a real third-party MCP client (the official
//! Python SDK, installed by `scripts/install-mcp-python.sh`) in front of a
//! real upstream server (server-everything from npm).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::Sandbox;

/// `AGENTS_TEST_MCP_EVERYTHING` and `AGENTS_TEST_MCP_PYTHON`; under
/// `scripts/test.sh` (which sets `AGENTS_TEST_REQUIRE_ALL`) or in CI a missing
/// one fails the test, elsewhere it skips with a note.
fn requirements(test: &str) -> Option<(String, String)> {
    let everything = std::env::var("AGENTS_TEST_MCP_EVERYTHING").ok();
    let python = std::env::var("AGENTS_TEST_MCP_PYTHON").ok();
    match (everything, python) {
        (Some(e), Some(p)) => Some((e, p)),
        _ => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true")
                    && std::env::var("AGENTS_TEST_REQUIRE_ALL").is_err(),
                "AGENTS_TEST_MCP_EVERYTHING and AGENTS_TEST_MCP_PYTHON must be set \
                 (scripts/test.sh installs them with scripts/install-mcp-everything.sh \
                 and scripts/install-mcp-python.sh)"
            );
            eprintln!("SKIPPED (no AGENTS_TEST_MCP_EVERYTHING/AGENTS_TEST_MCP_PYTHON): {test}");
            None
        }
    }
}

/// Processes whose environment carries `marker`.
fn alive(marker: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter_map(|e| std::fs::read(e.path().join("environ")).ok())
        .filter(|environ| String::from_utf8_lossy(environ).contains(marker))
        .count()
}

/// Waits (bounded) until no process carries `marker`; returns how many remain.
fn settle(marker: &str) -> usize {
    for _ in 0..100 {
        if alive(marker) == 0 {
            return 0;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    alive(marker)
}

fn gateway_skill(sb: &Sandbox, entry: &str, marker: &str) {
    let text = format!(
        "name: l/gw\ndescription: Gateway test\ntools: [builtin/read_file]\nmcp_sources:\n  - server: everything\n    command: node\n    args: [\"{entry}\", stdio]\n    env: {{AGENTS_TEST_MARKER: {marker}}}\n    tools: [echo, get-sum]\noverrides:\n  mcp:everything/echo: {{description: Say it back, title: Echo, read_only: true}}\n  mcp:everything/get-sum: {{timeout_s: 30}}\n"
    );
    let file = sb.write("gw.yaml", &text);
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    sb.run(&["skill", "tools", "l/gw", "--refresh"]).ok();
}

fn python_client(sb: &Sandbox, python: &str, steps: &Value) -> Value {
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/py/mcp_client.py");
    let out = Command::new(python)
        .arg(script)
        .arg(steps.to_string())
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_agents"))
        .args(["mcp", "serve", "l/gw"])
        .current_dir(sb.dir.path())
        .env("HOME", sb.home())
        .env("CLEVERAGENTS_DATABASE_URL", sb.db_url())
        .env_remove("CLEVERAGENTS_CONFIG")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "client failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("client output is not JSON ({e}):\n{stdout}\nstderr:\n{stderr}"))
}

fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

#[test]
fn dry_run_says_what_is_served_and_what_is_left_out() {
    let Some((entry, _)) = requirements("dry_run") else {
        return;
    };
    let sb = Sandbox::new();
    let marker = format!("gw-dry-{}", std::process::id());
    gateway_skill(&sb, &entry, &marker);
    let out = sb
        .run(&["mcp", "serve", "l/gw", "--dry-run", "--format", "json"])
        .ok()
        .json();
    let names: Vec<&str> = out["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["_meta"]["io.cleveragents/name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["mcp:everything/echo", "mcp:everything/get-sum"]);
    assert_eq!(out["left_out"][0]["name"], "builtin/read_file");
    assert!(
        out["left_out"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("no executor"),
        "{out}"
    );
    assert_eq!(settle(&marker), 0);
}

#[test]
fn python_sdk_client_lists_calls_and_survives_an_upstream_crash() {
    let Some((entry, python)) = requirements("python_sdk_client") else {
        return;
    };
    let sb = Sandbox::new();
    let marker = format!("gw-py-{}", std::process::id());
    gateway_skill(&sb, &entry, &marker);
    let steps = json!([
        {"list": true},
        {"call": "everything__echo_", "arguments": {"message": "hello"}},
        {"call": "everything__echo_", "arguments": {}},
        {"call": "everything__echo_", "arguments": {"message": 7}},
        {"call": "everything__get-sum_", "arguments": {"a": 2, "b": 3}},
        {"kill_upstream": marker},
        {"call": "everything__echo_", "arguments": {"message": "after crash"}},
        {"call": "everything__echo_", "arguments": {"message": "restarted"}},
    ]);
    // Export names carry a hash: fill them in from a dry run.
    let dry = sb
        .run(&["mcp", "serve", "l/gw", "--dry-run", "--format", "json"])
        .ok()
        .json();
    let echo = dry["tools"][0]["name"].as_str().unwrap().to_owned();
    let sum = dry["tools"][1]["name"].as_str().unwrap().to_owned();
    let steps: Value = serde_json::from_str(
        &steps
            .to_string()
            .replace("everything__echo_", &echo)
            .replace("everything__get-sum_", &sum),
    )
    .unwrap();
    let out = python_client(&sb, &python, &steps);
    let steps = out["steps"].as_array().unwrap();

    let tools = steps[0]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 2, "{tools:?}");
    let listed = &tools[0];
    assert_eq!(listed["name"], echo.as_str());
    assert_eq!(listed["title"], "Echo");
    assert_eq!(listed["description"], "Say it back");
    assert_eq!(listed["annotations"]["readOnlyHint"], true);
    assert_eq!(
        listed["inputSchema"]["properties"]["message"]["type"],
        "string"
    );
    assert_eq!(
        listed["_meta"]["io.cleveragents/name"],
        "mcp:everything/echo"
    );
    assert_eq!(listed["_meta"]["io.cleveragents/source"], "mcp");
    assert_eq!(listed["_meta"]["io.cleveragents/source_skill"], "l/gw");
    assert_eq!(
        listed["_meta"]["io.cleveragents/include_path"],
        json!(["l/gw"])
    );

    // A proxied call.
    assert_ne!(steps[1]["isError"], true, "{}", steps[1]);
    assert!(text_of(&steps[1]).contains("hello"), "{}", steps[1]);
    // Schema violations never reach the server and name the field.
    assert_eq!(steps[2]["isError"], true, "{}", steps[2]);
    assert!(text_of(&steps[2]).contains("message"), "{}", steps[2]);
    assert_eq!(steps[3]["isError"], true, "{}", steps[3]);
    assert!(text_of(&steps[3]).contains("/message"), "{}", steps[3]);
    assert!(text_of(&steps[4]).contains('5'), "{}", steps[4]);
    // The upstream is killed: the next call is a tool error naming the server
    // (or, if the gateway already saw it go, a fresh start); then it runs again.
    assert!(steps[5]["killed"].as_u64().unwrap() >= 1, "{}", steps[5]);
    if steps[6]["isError"] == true {
        assert!(text_of(&steps[6]).contains("everything"), "{}", steps[6]);
    } else {
        assert!(text_of(&steps[6]).contains("after crash"), "{}", steps[6]);
    }
    assert_ne!(steps[7]["isError"], true, "{}", steps[7]);
    assert!(text_of(&steps[7]).contains("restarted"), "{}", steps[7]);
    // The client disconnected: the gateway stopped every upstream.
    assert_eq!(settle(&marker), 0, "an upstream outlived the gateway");
}

#[test]
fn sigterm_stops_the_gateway_and_its_upstreams() {
    let Some((entry, _)) = requirements("sigterm") else {
        return;
    };
    let sb = Sandbox::new();
    let marker = format!("gw-term-{}", std::process::id());
    gateway_skill(&sb, &entry, &marker);
    let dry = sb
        .run(&["mcp", "serve", "l/gw", "--dry-run", "--format", "json"])
        .ok()
        .json();
    let echo = dry["tools"][0]["name"].as_str().unwrap().to_owned();
    let mut child = sb
        .cmd()
        .args(["mcp", "serve", "l/gw"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |message: Value| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}}),
    );
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": echo, "arguments": {"message": "up"}}}));
    line.clear();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("up"), "{line}");
    assert!(alive(&marker) >= 1, "the upstream is not running");
    nix_kill(child.id());
    let status = child.wait().unwrap();
    assert!(!status.success());
    assert_eq!(settle(&marker), 0, "an upstream outlived the gateway");
}

fn nix_kill(pid: u32) {
    let status = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}
