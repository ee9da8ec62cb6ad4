//! Against the real third-party server `@modelcontextprotocol/server-everything`
//! (npm), installed by `scripts/install-mcp-everything.sh`; its entry point comes
//! from `AGENTS_TEST_MCP_EVERYTHING`.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use agents_core::{McpSource, ToolSource};
use agents_mcp::{FetchedTools, McpTransport};
use serde_json::json;

use crate::support::*;

fn check_reference_tools(fetched: &FetchedTools, server: &str) {
    let names: Vec<&str> = fetched
        .tools
        .iter()
        .map(|tool| tool.name.as_str())
        .collect();
    for tool in ["echo", "get-sum", "get-env", "get-tiny-image"] {
        assert!(
            names.contains(&format!("mcp:{server}/{tool}").as_str()),
            "no `{tool}` in {names:?}"
        );
    }
    assert!(fetched.rejected.is_empty(), "{:?}", fetched.rejected);
    let info = fetched.server_info.as_ref().expect("server info");
    assert_eq!(info.name, "mcp-servers/everything");

    let echo = fetched
        .tools
        .iter()
        .find(|tool| tool.name == format!("mcp:{server}/echo"))
        .unwrap();
    assert_eq!(echo.description, "Echoes back the input string");
    assert_eq!(echo.source, ToolSource::Mcp);
    let schema = echo.input_schema.as_ref().unwrap();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["message"]["type"], "string");
    assert_eq!(schema["required"], json!(["message"]));
    assert_eq!(echo.read_only, Some(true));
    assert_eq!(echo.source_metadata["tool"], "echo");
    assert_eq!(echo.source_metadata["server"], server);

    let sum = fetched
        .tools
        .iter()
        .find(|tool| tool.name == format!("mcp:{server}/get-sum"))
        .unwrap();
    let schema = sum.input_schema.as_ref().unwrap();
    assert_eq!(schema["properties"]["a"]["type"], "number");
    assert_eq!(schema["properties"]["b"]["type"], "number");
    assert_eq!(schema["required"], json!(["a", "b"]));

    // MCP 2025-11-25's `execution` is kept: this one cannot be called
    // without a task, which the gateway does not make.
    let research = fetched
        .tools
        .iter()
        .find(|tool| tool.name == format!("mcp:{server}/simulate-research-query"))
        .unwrap();
    assert_eq!(
        research.source_metadata["execution"],
        json!({"taskSupport": "required"})
    );
    assert!(agents_core::gateway_cannot_call(research).is_some());
    assert_eq!(
        sum.source_metadata["execution"],
        json!({"taskSupport": "forbidden"})
    );
    assert_eq!(agents_core::gateway_cannot_call(sum), None);
}

/// Pids of running processes whose command line contains all of `needles`.
fn processes_with(needles: &[&str]) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline);
            needles.iter().all(|needle| cmdline.contains(needle))
        })
        .filter(|pid| alive(*pid))
        .collect()
}

#[tokio::test]
async fn server_everything_over_stdio() {
    let Some(entry) = everything_entry_point("server_everything_over_stdio") else {
        return;
    };
    let entry = entry.display().to_string();
    // The server ignores extra arguments; this one finds its process afterwards.
    let marker = format!(
        "--agents-test-run={}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    let source = McpSource {
        server: "everything".into(),
        command: Some("node".into()),
        args: vec![entry.clone(), "stdio".into(), marker.clone()],
        ..McpSource::default()
    };
    let started = Instant::now();
    let fetched = fetch_tools(&source, &options(&[])).await.unwrap();
    eprintln!(
        "server-everything over stdio: {} tools in {:?}",
        fetched.tools.len(),
        started.elapsed()
    );
    assert_eq!(fetched.transport, McpTransport::Stdio);
    check_reference_tools(&fetched, "everything");
    assert_eq!(fetched.tools[0].source_metadata["transport"], "stdio");
    let survivors = processes_with(&[&marker]);
    assert!(
        survivors.is_empty(),
        "node survived the fetch: {survivors:?}"
    );
}

/// server-everything listens on all interfaces (`app.listen(PORT)`); this
/// preload pins it to 127.0.0.1 so the test never opens a public port.
const LOOPBACK_PRELOAD: &str = r#"
import net from "node:net";
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || (typeof args[0] === "string" && /^\d+$/.test(args[0]))) {
    const callbacks = args.slice(1).filter((arg) => typeof arg === "function");
    return listen.call(this, Number(args[0]), "127.0.0.1", ...callbacks);
  }
  return listen.apply(this, args);
};
"#;

/// Local addresses (hex, as in /proc/net/tcp*) listening on `port`.
fn listeners_on(port: u16) -> Vec<String> {
    let port_hex = format!(":{port:04X}");
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|path| std::fs::read_to_string(path).ok())
        .flat_map(|table| {
            table
                .lines()
                .skip(1)
                .filter_map(|line| {
                    let fields: Vec<&str> = line.split_whitespace().collect();
                    let (local, state) = (fields.get(1)?, fields.get(3)?);
                    (local.ends_with(&port_hex) && *state == "0A").then(|| local.to_string())
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Starts server-everything over streamable HTTP on 127.0.0.1 (see
/// [`LOOPBACK_PRELOAD`]); the directory holds the preload.
fn start_everything_http(entry: &Path) -> (Server, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let preload = dir.path().join("loopback.mjs");
    std::fs::write(&preload, LOOPBACK_PRELOAD).unwrap();
    let port = free_port();
    let mut command = Command::new("node");
    command
        .arg(format!("--import=file://{}", preload.display()))
        .arg(entry)
        .arg("streamableHttp")
        .env("PORT", port.to_string());
    let server = start_http_command(command, port);
    assert_eq!(
        listeners_on(port),
        [format!("0100007F:{port:04X}")],
        "must listen on 127.0.0.1 only"
    );
    (server, dir)
}

/// Killed in the middle of a call (its event stream has ids, so rmcp tries
/// to resume it), the server's call ends at once, not at its timeout.
#[tokio::test]
async fn server_everything_killed_mid_call_over_http_ends_the_call_at_once() {
    let Some(entry) =
        everything_entry_point("server_everything_killed_mid_call_over_http_ends_the_call_at_once")
    else {
        return;
    };
    let (mut server, _dir) = start_everything_http(&entry);
    let source = McpSource {
        server: "everything-http".into(),
        url: Some(server.url.clone()),
        ..McpSource::default()
    };
    let upstream = connect(&source, &options(&[]), None).await.unwrap();
    let (progressed, mut progress) = tokio::sync::mpsc::unbounded_channel();
    let sink: agents_mcp::ProgressSink = std::sync::Arc::new(move |note| {
        let _ = progressed.send(note);
    });
    let caller = upstream.caller();
    let call = tokio::spawn(async move {
        let arguments = json!({"duration": 6, "steps": 3});
        caller
            .call_tool(
                "trigger-long-running-operation",
                arguments.as_object().cloned(),
                std::time::Duration::from_secs(60),
                Some(sink),
            )
            .await
    });
    // The first progress (after 2 s): the call is under way.
    progress.recv().await.unwrap();
    server.kill();
    let err = call.await.unwrap().unwrap_err();
    assert_eq!(
        err.to_string(),
        "mcp server `everything-http`: `tools/call` failed: the server closed the connection before answering"
    );
    upstream.close().await;
}

#[tokio::test]
async fn server_everything_over_streamable_http_on_loopback() {
    let Some(entry) = everything_entry_point("server_everything_over_streamable_http_on_loopback")
    else {
        return;
    };
    let (server, _dir) = start_everything_http(&entry);
    let source = McpSource {
        server: "everything-http".into(),
        url: Some(server.url.clone()),
        ..McpSource::default()
    };
    let started = Instant::now();
    let fetched = fetch_tools(&source, &options(&[])).await.unwrap();
    eprintln!(
        "server-everything over http: {} tools in {:?}",
        fetched.tools.len(),
        started.elapsed()
    );
    assert_eq!(fetched.transport, McpTransport::Http);
    check_reference_tools(&fetched, "everything-http");
    assert_eq!(fetched.tools[0].source_metadata["transport"], "http");
    drop(server);
}
