//! A long-lived session with one MCP server, for the gateway: started once,
//! then used for many `tools/call`s. [`crate::fetch_tools`] is [`connect`]
//! then [`Upstream::finish`], so a refresh and the gateway share one start-up
//! path (`${VAR}` rules, least environment, process groups). Dropping an
//! [`Upstream`] SIGKILLs the server's group.

use std::time::Duration;

use agents_core::McpSource;
use rmcp::model::{CallToolRequestParams, JsonObject};
use serde_json::Value;

use crate::error::McpError;
use crate::list::Failure;
use crate::process::{ChildGuard, StderrTail};
use crate::session::{self, Handler, ToolsChanged};
use crate::{FetchOptions, FetchedTools, http, source, stdio};

const STAGE_CALL: &str = "tools/call";

/// `tools/call`s on an [`Upstream`]'s session ([`Upstream::caller`]).
#[derive(Clone)]
pub struct Caller {
    server: String,
    peer: rmcp::Peer<rmcp::RoleClient>,
}

impl std::fmt::Debug for Caller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Caller")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl Caller {
    /// Calls `tool` (the server's own name) and returns the `CallToolResult`
    /// as JSON. A result with `isError: true` is a result, not an error; an
    /// error is a broken session, a JSON-RPC error or no answer in `timeout`.
    /// Dropping the future (the client cancelled) sends the server
    /// `notifications/cancelled` for the request.
    pub async fn call_tool(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
        timeout: Duration,
    ) -> Result<Value, McpError> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Some(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        match tokio::time::timeout(timeout, self.peer.call_tool(params)).await {
            Ok(Ok(result)) => serde_json::to_value(&result).map_err(|err| McpError::Protocol {
                server: self.server.clone(),
                stage: STAGE_CALL,
                message: err.to_string(),
            }),
            Ok(Err(err)) => Err(McpError::Protocol {
                server: self.server.clone(),
                stage: STAGE_CALL,
                message: session::error_chain(&err),
            }),
            Err(_elapsed) => Err(McpError::Timeout {
                server: self.server.clone(),
                stage: STAGE_CALL,
                timeout,
                note: String::new(),
            }),
        }
    }
}

/// A running MCP server (or an open HTTP session) and its tool list.
pub struct Upstream {
    server: String,
    client: session::Client,
    guard: Option<ChildGuard>,
    stderr: Option<StderrTail>,
    grace: Duration,
    tools: FetchedTools,
    /// What the stdout watcher saw (stdio only): tools it left out.
    report: Option<std::sync::Arc<std::sync::Mutex<crate::process::StdoutReport>>>,
    /// Limits for a later `tools/list` and its timeout.
    options: FetchOptions,
    timeout: Duration,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

/// Starts or reaches the server `source` describes, runs `initialize` and
/// `tools/list` within its timeout, and keeps the session open.
/// `on_tools_changed` runs when it sends `notifications/tools/list_changed`.
pub async fn connect(
    source: &McpSource,
    options: &FetchOptions,
    on_tools_changed: Option<ToolsChanged>,
) -> Result<Upstream, McpError> {
    let prepared = source::prepare(source, options)?;
    let server = source.server.as_str();
    let handler = Handler { on_tools_changed };
    let (client, tools, guard, stderr, report) = match &prepared.launch {
        source::Launch::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let launch = stdio::StdioLaunch {
                server,
                command,
                args,
                env,
                cwd: cwd.as_deref(),
                timeout: prepared.timeout,
            };
            let (client, tools, guard, stderr, report) =
                stdio::open(launch, options, handler).await?;
            (client, tools, Some(guard), Some(stderr), Some(report))
        }
        source::Launch::Http { url, headers } => {
            let launch = http::HttpLaunch {
                server,
                url,
                headers,
                timeout: prepared.timeout,
            };
            let (client, tools, report) = http::open(launch, options, handler).await?;
            (client, tools, None, None, Some(report))
        }
    };
    Ok(Upstream {
        server: server.to_owned(),
        client,
        guard,
        stderr,
        grace: options.shutdown_grace,
        tools,
        report,
        options: options.clone(),
        timeout: prepared.timeout,
    })
}

impl Upstream {
    /// The tools it listed when it started.
    pub fn tools(&self) -> &FetchedTools {
        &self.tools
    }

    /// Lists the tools again on the open session (after the server sent
    /// `notifications/tools/list_changed`: a new process might not have the
    /// tools this one added), within the server's timeout; the list is kept
    /// as [`Self::tools`] too.
    pub async fn list_tools(&mut self) -> Result<FetchedTools, McpError> {
        let transport = self.tools.transport;
        let fetch = session::fetch(&self.client, &self.server, transport, &self.options);
        match tokio::time::timeout(self.timeout, fetch).await {
            Ok(Ok(mut fetched)) => {
                if let Some(report) = &self.report {
                    fetched
                        .rejected
                        .extend(stdio::take_malformed(&self.server, report));
                }
                self.tools = fetched.clone();
                Ok(fetched)
            }
            Ok(Err(Failure::Fatal(err))) => Err(err),
            Ok(Err(Failure::Service(err))) => Err(McpError::Protocol {
                server: self.server.clone(),
                stage: session::STAGE_LIST,
                message: session::error_chain(&err),
            }),
            Err(_elapsed) => Err(McpError::Timeout {
                server: self.server.clone(),
                stage: session::STAGE_LIST,
                timeout: self.timeout,
                note: String::new(),
            }),
        }
    }

    /// True when the session has ended (the server exited or hung up).
    pub fn is_closed(&mut self) -> bool {
        if self.client.is_closed() {
            return true;
        }
        self.guard.as_mut().is_some_and(ChildGuard::has_exited)
    }

    /// A handle for `tools/call`s on this session that does not borrow it,
    /// so a slow call holds up no other (JSON-RPC matches each answer to its
    /// request). Its calls end when the session does.
    pub fn caller(&self) -> Caller {
        Caller {
            server: self.server.clone(),
            peer: self.client.peer().clone(),
        }
    }

    /// The last lines the server wrote to stderr (a stdio server; empty
    /// otherwise), for this user's log: a server may print its environment,
    /// so they go to no MCP client.
    pub async fn stderr_tail(&mut self) -> String {
        match self.stderr.as_mut() {
            Some(stderr) => stderr.text().await,
            None => String::new(),
        }
    }

    /// Whether the server still answers a `ping` within `timeout`: after a
    /// call timed out, tells a server busy with that call from a hung one.
    pub async fn answers_ping(&self, timeout: Duration) -> bool {
        let ping = self
            .client
            .peer()
            .send_request(rmcp::model::ClientRequest::PingRequest(Default::default()));
        matches!(tokio::time::timeout(timeout, ping).await, Ok(Ok(_)))
    }

    /// Closes it (like [`Self::close`]) and returns the tools it listed at start.
    pub async fn finish(self) -> FetchedTools {
        let Self {
            client,
            guard,
            grace,
            tools,
            ..
        } = self;
        session::close(client, grace).await;
        if let Some(mut guard) = guard {
            guard.shutdown(grace).await;
        }
        tools
    }

    /// Closes the session and stops the server: stdin closed, then SIGTERM,
    /// then SIGKILL, each after the shutdown grace (a hung server is killed).
    pub async fn close(self) {
        self.finish().await;
    }
}
