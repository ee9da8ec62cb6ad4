//! The MCP client of the skill registry: given an `mcp_source`, start or reach the
//! server (stdio child process or streamable HTTP), run `initialize` and a bounded,
//! paginated `tools/list`, shut it down, and return its tools as
//! [`ToolSpec`]s named `mcp:{server}/{tool}` with their real schemas.
//!
//! Built on the official Rust SDK (`rmcp`), which stays behind this crate's API.
//! Caching the catalogue, config references and allow-lists belong to the
//! registry; this crate only talks to servers.
//!
//! Guarantees:
//! - **Bounded**: the whole fetch (start, `initialize`, every page) is bounded by
//!   the timeout (the item's `timeout_s`, else [`FetchOptions::timeout`]); one
//!   message by [`FetchOptions::max_message_bytes`]; the list by [`FetchOptions::max_tools`] and
//!   [`FetchOptions::max_pages`]; a repeated cursor is an error. The clean
//!   shutdown after a success adds at most four times [`FetchOptions::shutdown_grace`]
//!   (usually nothing: servers exit when their stdin closes).
//! - **No orphans** (Unix): a stdio server runs in its own process group. On
//!   success its stdin is closed, then it gets SIGTERM, then SIGKILL, each after
//!   `shutdown_grace`; on any error or timeout the group
//!   gets SIGTERM, then SIGKILL after `shutdown_grace`; and
//!   when the fetch future is dropped (e.g. Ctrl-C handled by the caller) the group
//!   is SIGKILLed from a destructor. Whatever is left of the group (grandchildren
//!   such as the `node` behind `npx`) is killed in every case. Because the server
//!   has its own group, a terminal's Ctrl-C does not reach it directly: the
//!   program must handle SIGINT (e.g. `tokio::signal::ctrl_c`) and drop the future
//!   rather than die on the default action, which runs no destructors.
//!   A grandchild that calls `setsid` leaves the group; a program that called
//!   [`adopt_orphans`] (Linux) gets it back when its parent dies and kills it
//!   with [`stop_adopted`] at exit. A SIGKILL of the program runs no such code:
//!   a launcher that supervises the server (`agents-process`) covers that.
//! - **Secrets**: `${VAR}` in `env` values and `headers` is expanded from
//!   [`FetchOptions::env`] into a copy when the server is started; the
//!   [`McpSource`] is never changed, and errors never contain expanded values.
//!   The child gets only [`INHERITED_ENV`] from this process's environment, plus
//!   the item's `env`. Only a [`TrustedLaunch`] starts: a spec the local user
//!   consented to, which only `agents-trust` decides ([`spec_digest`] names a
//!   spec for it).
//! - **Faults** are [`McpError`]s naming the server: a program that cannot start,
//!   exits early (with its last stderr lines), writes non-JSON-RPC to stdout (a few
//!   banner lines are tolerated, a flood is not), is too slow, lists too much, or an
//!   HTTP endpoint that refuses connections.
//! - **Bad tools** (an invalid JSON Schema, a name the catalogue cannot hold, a
//!   duplicate) do not fail the server: they are left out and reported in
//!   [`FetchedTools::rejected`], each naming the server and the tool.

// Library code returns errors; it does not panic on what it is given.
#![deny(clippy::panic, clippy::indexing_slicing)]

mod error;
mod http;
mod lane;
pub mod launch;
mod list;
mod orphans;
mod process;
mod session;
pub mod sift;
mod source;
mod stdio;
mod substitute;
mod upstream;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use agents_core::{Meta, ToolSpec};

pub use agents_trust::{TrustedLaunch, short_digest, spec_digest};
pub use error::McpError;
pub use lane::{LineWriter, MessageWrite};
pub use launch::{LaunchError, Launcher, exec_server};
pub use orphans::{adopt_orphans, stop_adopted};
pub use session::{ProgressSink, ToolsChanged};
pub use substitute::{VarError, substitute_vars};
pub use upstream::{Caller, Upstream, connect};

/// Variables a stdio server inherits from this process (when set), as the
/// official MCP SDKs do; everything else it gets comes from the item's `env`.
pub const INHERITED_ENV: &[&str] = &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/// Default for [`FetchOptions::max_message_bytes`]: rmcp's own stdio line limit
/// (16 MiB), which a larger value could not raise.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// Looks up an environment variable for `${VAR}` expansion.
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Default for [`FetchOptions::max_tool_depth`]: far deeper than any real
/// tool schema, and with the message's own levels still under the JSON
/// parser's fixed limit of 128.
pub const DEFAULT_MAX_TOOL_DEPTH: usize = 64;

/// Largest accepted [`FetchOptions::max_tool_depth`]: a `tools/list` answer
/// adds 4 levels above its tools, and rmcp's parser refuses a message deeper
/// than 128.
pub const HARD_MAX_TOOL_DEPTH: usize = 120;

/// How a fetch behaves; [`Default`] reads the process environment.
#[derive(Clone)]
pub struct FetchOptions {
    /// Limit for the whole fetch when the item has no `timeout_s` (default 30 s).
    pub timeout: Duration,
    /// More tools than this is an error (default 10 000).
    pub max_tools: usize,
    /// More `tools/list` pages than this is an error (default 1 000).
    pub max_pages: usize,
    /// Largest single message (a stdio line, an HTTP body or SSE event); more is an
    /// error (default and, for stdio, maximum [`DEFAULT_MAX_MESSAGE_BYTES`]). rmcp holds a parsed HTTP page
    /// at roughly 25 times its size; over stdio, pages are counted against
    /// `max_tools` before rmcp parses them.
    pub max_message_bytes: usize,
    /// Deepest nesting of one listed tool (its object counts as one level;
    /// default [`DEFAULT_MAX_TOOL_DEPTH`], at most [`HARD_MAX_TOOL_DEPTH`]). Over
    /// stdio a deeper or malformed tool is left out with a reason and the
    /// rest of its `tools/list` page is kept.
    pub max_tool_depth: usize,
    /// Each step of the polite shutdown waits this long (default 1 s).
    pub shutdown_grace: Duration,
    /// Source of `${VAR}` values.
    pub env: EnvLookup,
    /// Start stdio servers through this launcher, which is given this
    /// process's pid, the server program and its arguments: one that arms
    /// the parent-death signal (see [`launch`]), or `agents`'s supervisor
    /// (`agents-process`); `None` starts them directly.
    pub launcher: Option<Launcher>,
}

impl Default for FetchOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(30),
            max_tools: 10_000,
            max_pages: 1_000,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            max_tool_depth: DEFAULT_MAX_TOOL_DEPTH,
            shutdown_grace: Duration::from_secs(1),
            env: Arc::new(|name: &str| std::env::var(name).ok()),
            launcher: None,
        }
    }
}

impl FetchOptions {
    /// The same options with another source of `${VAR}` values.
    pub fn with_env(
        mut self,
        lookup: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        self.env = Arc::new(lookup);
        self
    }
}

impl fmt::Debug for FetchOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FetchOptions")
            .field("timeout", &self.timeout)
            .field("max_tools", &self.max_tools)
            .field("max_pages", &self.max_pages)
            .field("max_message_bytes", &self.max_message_bytes)
            .field("max_tool_depth", &self.max_tool_depth)
            .field("shutdown_grace", &self.shutdown_grace)
            .finish_non_exhaustive()
    }
}

/// How the server was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum McpTransport {
    /// A child process speaking JSON-RPC on stdin/stdout.
    Stdio,
    /// Streamable HTTP.
    Http,
}

impl McpTransport {
    /// `stdio` or `http`, as stored in `source_metadata.transport`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stdio => "stdio",
            Self::Http => "http",
        }
    }
}

impl fmt::Display for McpTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the server said about itself in `initialize`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerInfo {
    /// Implementation name.
    pub name: String,
    /// Implementation version.
    pub version: String,
    /// Negotiated MCP protocol version.
    pub protocol_version: String,
}

/// A tool the server listed but the catalogue cannot hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("mcp server `{server}`: tool `{tool}` skipped: {reason}")]
pub struct RejectedTool {
    /// Server name.
    pub server: String,
    /// The tool's name as the server gave it.
    pub tool: String,
    /// What is wrong with it.
    pub reason: String,
}

/// The tools one server reported.
#[derive(Debug, Clone, PartialEq)]
pub struct FetchedTools {
    /// Server name (from the item).
    pub server: String,
    /// How it was reached.
    pub transport: McpTransport,
    /// Its tools, in the server's order, named `mcp:{server}/{tool}`.
    pub tools: Vec<ToolSpec>,
    /// Tools left out, with the reason.
    pub rejected: Vec<RejectedTool>,
    /// Name and version, when the server reported them.
    pub server_info: Option<ServerInfo>,
    /// When the list was fetched (UTC, whole seconds); also in each tool's
    /// `source_metadata.fetched_at` as RFC 3339.
    pub fetched_at: time::OffsetDateTime,
}

/// The result of applying an item's `tools:` allow-list.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    /// The allowed tools the server has, in the server's order.
    pub tools: Vec<ToolSpec>,
    /// Allowed names the server does not have, as written.
    pub missing: Vec<String>,
}

impl FetchedTools {
    /// The same listing with `secrets` masked in what it quotes of a tool
    /// the catalogue cannot hold (its name and why): a server may put a
    /// value it was given anywhere, and these are printed and stored.
    pub(crate) fn scrubbed(mut self, secrets: &[String]) -> Self {
        if secrets.is_empty() {
            return self;
        }
        for rejected in &mut self.rejected {
            rejected.tool = agents_core::redact::scrub(&rejected.tool, secrets);
            rejected.reason = agents_core::redact::scrub(&rejected.reason, secrets);
        }
        self
    }

    /// Keeps the tools named in `allowed` (by the server's name, `create_issue`,
    /// or the full name, `mcp:github/create_issue`); `None` keeps everything.
    pub fn select(&self, allowed: Option<&[String]>) -> Selection {
        let Some(allowed) = allowed else {
            return Selection {
                tools: self.tools.clone(),
                missing: Vec::new(),
            };
        };
        let original = |spec: &ToolSpec| {
            spec.meta_str(Meta::Tool)
                .map(str::to_owned)
                .unwrap_or_default()
        };
        let wanted = |spec: &ToolSpec, name: &str| name == spec.name || name == original(spec);
        let tools = self
            .tools
            .iter()
            .filter(|spec| allowed.iter().any(|name| wanted(spec, name)))
            .cloned()
            .collect();
        let missing = allowed
            .iter()
            .filter(|name| !self.tools.iter().any(|spec| wanted(spec, name)))
            .cloned()
            .collect();
        Selection { tools, missing }
    }
}

/// Starts or reaches the server `launch` describes and lists its tools.
///
/// The item must be fully specified (`command` or `url`); resolving a reference
/// to `[mcp.servers.NAME]` is the caller's job. See the crate documentation for
/// the limits and the cleanup guarantees.
pub async fn fetch_tools(
    launch: &TrustedLaunch,
    options: &FetchOptions,
) -> Result<FetchedTools, McpError> {
    let source = launch.source();
    let server = source.server.as_str();
    let started = std::time::Instant::now();
    // One start-up path with the gateway: connect, keep the listing, close.
    let result = match upstream::connect(launch, options, None).await {
        Ok(upstream) => Ok(upstream.finish().await),
        Err(err) => Err(err),
    };
    match &result {
        Ok(fetched) => tracing::debug!(
            server,
            tools = fetched.tools.len(),
            rejected = fetched.rejected.len(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            "fetched mcp tools"
        ),
        Err(err) => tracing::debug!(server, error = %err, "mcp fetch failed"),
    }
    result
}
