//! A long-lived session with one MCP server, for the gateway: started once,
//! then used for many `tools/call`s. The same start-up code, `${VAR}` rules,
//! least environment and process-group cleanup as [`crate::fetch_tools`]:
//! dropping an [`Upstream`] SIGKILLs the server's group.

use std::time::Duration;

use agents_core::McpSource;
use rmcp::model::{CallToolRequestParams, JsonObject};
use serde_json::Value;

use crate::error::McpError;
use crate::process::{ChildGuard, StderrTail};
use crate::session::{self, Handler, ToolsChanged};
use crate::{FetchOptions, FetchedTools, http, source, stdio};

const STAGE_CALL: &str = "tools/call";

/// A running MCP server (or an open HTTP session) and its tool list.
pub struct Upstream {
    server: String,
    client: session::Client,
    guard: Option<ChildGuard>,
    stderr: Option<StderrTail>,
    grace: Duration,
    tools: FetchedTools,
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
    let (client, tools, guard, stderr) = match &prepared.launch {
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
            let (client, tools, guard, stderr) = stdio::open(launch, options, handler).await?;
            (client, tools, Some(guard), Some(stderr))
        }
        source::Launch::Http { url, headers } => {
            let launch = http::HttpLaunch {
                server,
                url,
                headers,
                timeout: prepared.timeout,
            };
            let (client, tools) = http::open(launch, options, handler).await?;
            (client, tools, None, None)
        }
    };
    Ok(Upstream {
        server: server.to_owned(),
        client,
        guard,
        stderr,
        grace: options.shutdown_grace,
        tools,
    })
}

impl Upstream {
    /// The tools it listed when it started.
    pub fn tools(&self) -> &FetchedTools {
        &self.tools
    }

    /// True when the session has ended (the server exited or hung up).
    pub fn is_closed(&mut self) -> bool {
        if self.client.is_closed() {
            return true;
        }
        self.guard.as_mut().is_some_and(ChildGuard::has_exited)
    }

    /// Calls `tool` (the server's own name) and returns the `CallToolResult`
    /// as JSON. A result with `isError: true` is a result, not an error; an
    /// error is a broken session, a JSON-RPC error or no answer in `timeout`.
    pub async fn call_tool(
        &mut self,
        tool: &str,
        arguments: Option<JsonObject>,
        timeout: Duration,
    ) -> Result<Value, McpError> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Some(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        let call = self.client.peer().call_tool(params);
        match tokio::time::timeout(timeout, call).await {
            Ok(Ok(result)) => serde_json::to_value(&result).map_err(|err| McpError::Protocol {
                server: self.server.clone(),
                stage: STAGE_CALL,
                message: err.to_string(),
            }),
            Ok(Err(err)) => {
                let mut message = session::error_chain(&err);
                if self.is_closed()
                    && let Some(stderr) = self.stderr.as_mut()
                {
                    let text = stderr.text().await;
                    if !text.is_empty() {
                        message.push_str(&format!("; stderr: {text}"));
                    }
                }
                Err(McpError::Protocol {
                    server: self.server.clone(),
                    stage: STAGE_CALL,
                    message,
                })
            }
            Err(_elapsed) => Err(McpError::Timeout {
                server: self.server.clone(),
                stage: STAGE_CALL,
                timeout,
                note: String::new(),
            }),
        }
    }

    /// Closes the session and stops the server: stdin closed, then SIGTERM,
    /// then SIGKILL, each after the shutdown grace (a hung server is killed).
    pub async fn close(self) {
        let Self {
            client,
            guard,
            grace,
            ..
        } = self;
        session::close(client, grace).await;
        if let Some(mut guard) = guard {
            guard.shutdown(grace).await;
        }
    }
}
