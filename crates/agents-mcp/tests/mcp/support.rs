//! Helpers: locating the fixture binary, building sources, watching pids.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use agents_core::McpSource;
use agents_mcp::FetchOptions;

/// The fixture server. `cargo test -p agents-mcp` builds it as this crate's
/// example `agents-mcp-fixture` (in `target/<profile>/examples/`); the fixture
/// crate's own binary (`cargo build -p agents-mcp-fixture`) is the fallback.
pub fn fixture_bin() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    // target/<profile>/deps/mcp-<hash>
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("test binary lives in target/<profile>/deps");
    let candidates = [
        profile_dir.join("examples").join("agents-mcp-fixture"),
        profile_dir.join("agents-mcp-fixture"),
    ];
    candidates
        .iter()
        .find(|path| path.is_file())
        .cloned()
        .unwrap_or_else(|| {
            panic!(
                "fixture server not found at {candidates:?}: run `cargo test -p agents-mcp` \
                 (which builds the example) or `cargo build -p agents-mcp-fixture`"
            )
        })
}

pub fn fixture_source(server: &str, args: &[&str]) -> McpSource {
    McpSource {
        server: server.into(),
        command: Some(fixture_bin().display().to_string()),
        args: args.iter().map(|arg| arg.to_string()).collect(),
        ..McpSource::default()
    }
}

/// Short timeouts so the suite stays fast, and a fixed environment for `${VAR}`.
pub fn options(vars: &[(&str, &str)]) -> FetchOptions {
    let vars: HashMap<String, String> = vars
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect();
    FetchOptions {
        timeout: Duration::from_secs(10),
        shutdown_grace: Duration::from_millis(500),
        ..FetchOptions::default()
    }
    .with_env(move |name| vars.get(name).cloned())
}

/// Running, i.e. present in /proc and not a zombie (a zombie has exited; only its
/// parent, possibly a non-reaping PID 1 in a container, has yet to collect it).
pub fn alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .unwrap_or("?");
    !matches!(state, "Z" | "X" | "x")
}

/// Waits until none of `pids` is running; returns the survivors otherwise.
pub fn wait_all_dead(pids: &[u32], within: Duration) -> Vec<u32> {
    let deadline = Instant::now() + within;
    loop {
        let survivors: Vec<u32> = pids.iter().copied().filter(|pid| alive(*pid)).collect();
        if survivors.is_empty() || Instant::now() > deadline {
            return survivors;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The pids the fixture wrote: its own, then its grandchild's.
pub fn read_pids(path: &Path) -> Vec<u32> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|err| panic!("pid file {}: {err}", path.display()))
        .lines()
        .map(|line| line.parse().expect("pid"))
        .collect()
}

pub async fn wait_for_file(path: &Path, within: Duration) {
    let deadline = Instant::now() + within;
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} did not appear within {within:?}",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A server process started by a test (HTTP mode); killed when dropped.
pub struct Server {
    child: Child,
    pub url: String,
}

impl Server {
    /// Kills the server with SIGKILL, as a crash would.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the fixture in `--http 127.0.0.1:0` mode and reads the URL it prints.
pub fn start_http_fixture(args: &[&str]) -> Server {
    let mut child = Command::new(fixture_bin())
        .args(["--http", "127.0.0.1:0"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the http fixture");
    let stdout = child.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("read the fixture's url");
    let url = line.trim().to_owned();
    assert!(
        url.starts_with("http://127.0.0.1:"),
        "unexpected fixture output {url:?}"
    );
    Server { child, url }
}

/// Starts any command as an HTTP server and waits until `port` accepts connections.
pub fn start_http_command(mut command: Command, port: u16) -> Server {
    let child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the http server");
    let server = Server {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    };
    let deadline = Instant::now() + Duration::from_secs(15);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "server on port {port} did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    server
}

/// A port nobody listens on right now (bound, then released).
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

/// Path of the `@modelcontextprotocol/server-everything` entry point, or `None`
/// (after printing a visible notice) when it is not installed. In CI
/// (`CI=true`) a missing install fails the test instead.
pub fn everything_entry_point(test: &str) -> Option<PathBuf> {
    match std::env::var_os("AGENTS_TEST_MCP_EVERYTHING") {
        Some(path) if !path.is_empty() => {
            let path = PathBuf::from(path);
            assert!(
                path.is_file(),
                "AGENTS_TEST_MCP_EVERYTHING={} is not a file",
                path.display()
            );
            Some(path)
        }
        _ => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "AGENTS_TEST_MCP_EVERYTHING is not set but CI=true: run scripts/install-mcp-everything.sh \
                 and export its output"
            );
            // Straight to the process's stderr: libtest captures `eprintln!` of passing tests.
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED (no AGENTS_TEST_MCP_EVERYTHING): {test}"
            );
            None
        }
    }
}

/// This test process's peak resident memory (all tests running in it), for the log.
pub fn peak_memory() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|line| line.starts_with("VmHWM:"))
                .map(|line| {
                    line.split_whitespace()
                        .skip(1)
                        .collect::<Vec<_>>()
                        .join(" ")
                })
        })
        .map(|peak| format!("peak RSS of the test process {peak}"))
        .unwrap_or_default()
}

/// `source` as a launch the local user consented to: a server of their own
/// config file, as `agents-trust` decides it.
pub fn consented(source: &McpSource) -> agents_mcp::TrustedLaunch {
    let store = agents_trust::TrustStore::in_memory();
    agents_trust::Trust::of_config_server(&store, source, false)
        .launch(source)
        .expect("a config file's own server is trusted")
}

/// [`agents_mcp::fetch_tools`] of `source`, consented to.
pub async fn fetch_tools(
    source: &McpSource,
    options: &FetchOptions,
) -> Result<agents_mcp::FetchedTools, agents_mcp::McpError> {
    agents_mcp::fetch_tools(&consented(source), options).await
}

/// [`agents_mcp::connect`] to `source`, consented to.
pub async fn connect(
    source: &McpSource,
    options: &FetchOptions,
    on_tools_changed: Option<agents_mcp::ToolsChanged>,
) -> Result<agents_mcp::Upstream, agents_mcp::McpError> {
    agents_mcp::connect(&consented(source), options, on_tools_changed).await
}
