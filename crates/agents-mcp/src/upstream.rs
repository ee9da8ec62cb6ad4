//! A long-lived session with one MCP server, for the gateway: started once,
//! then used for many `tools/call`s. [`crate::fetch_tools`] is [`connect`]
//! then [`Upstream::finish`], so a refresh and the gateway share one start-up
//! path (`${VAR}` rules, least environment, process groups). Dropping an
//! [`Upstream`] SIGKILLs the server's group.

use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientNotification, ClientRequest, JsonObject, ServerResult,
};
use rmcp::service::PeerRequestOptions;

use crate::error::McpError;
use crate::list::Failure;
use crate::process::{ChildGuard, StderrTail, lock};
use crate::session::{self, Handler, ProgressSink, ToolsChanged};
use crate::{FetchOptions, FetchedTools, http, source, stdio};

const STAGE_CALL: &str = "tools/call";

/// How long a call that listens for progress keeps listening after its
/// answer (see [`Caller::call_tool`]).
const PROGRESS_GRACE: Duration = Duration::from_millis(20);

/// `tools/call`s on an [`Upstream`]'s session ([`Upstream::caller`]).
#[derive(Clone)]
pub struct Caller {
    server: String,
    peer: rmcp::Peer<rmcp::RoleClient>,
    progress: session::ProgressSinks,
    session: u64,
    /// What the stdout watcher saw (stdio only), and the line limit it
    /// enforced: a session it ended for a message too large says so.
    report: Option<std::sync::Arc<std::sync::Mutex<crate::process::StdoutReport>>>,
    max_line: usize,
    /// What its errors must not show (the session's `secrets`): a server's
    /// JSON-RPC error may quote a value it was given.
    secrets: std::sync::Arc<[String]>,
    /// The short path for calls (a stdio session; see [`crate::lane`]).
    lane: Option<crate::lane::Lane>,
}

impl std::fmt::Debug for Caller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Caller")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl Caller {
    /// Whether `upstream` is the session this handle was taken from (not
    /// one started since in its place).
    pub fn is_of(&self, upstream: &Upstream) -> bool {
        self.session == upstream.session
    }

    /// Whether the server still answers a `ping` within `timeout`: after a
    /// failed call, tells a server that answered with an error, or is busy,
    /// from one that is gone or hung.
    pub async fn answers_ping(&self, timeout: Duration) -> bool {
        let ping = self
            .peer
            .send_request(rmcp::model::ClientRequest::PingRequest(Default::default()));
        matches!(tokio::time::timeout(timeout, ping).await, Ok(Ok(_)))
    }

    /// Calls `tool` (the server's own name) and returns its result. A
    /// result with `isError: true` is a result, not an error; an error is a
    /// broken session, a JSON-RPC error or no answer in `timeout`. Each
    /// `notifications/progress` the server sends for the call goes to
    /// `progress`. Dropping the future (the client cancelled) or the timeout
    /// sends the server `notifications/cancelled` for the request.
    ///
    /// On a stdio session a call without `progress` takes the lane
    /// ([`crate::lane`]); any other goes through rmcp.
    pub async fn call_tool(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
        timeout: Duration,
        progress: Option<ProgressSink>,
    ) -> Result<CallToolResult, McpError> {
        let answer = match (&self.lane, progress) {
            (Some(lane), None) => {
                let call = lane.call(tool, arguments.as_ref());
                tokio::time::timeout(timeout, call)
                    .await
                    .map(|answer| match answer {
                        Ok(line) => lane_answer(&line),
                        Err(crate::lane::Closed) => Err(rmcp::ServiceError::TransportClosed),
                    })
            }
            (_, progress) => {
                tokio::time::timeout(timeout, self.call_on_rmcp(tool, arguments, progress)).await
            }
        };
        let answer = match answer {
            Ok(answer) => answer,
            Err(_elapsed) => {
                return Err(McpError::Timeout {
                    server: self.server.clone(),
                    stage: STAGE_CALL,
                    timeout,
                    note: String::new(),
                });
            }
        };
        self.outcome(answer)
    }

    /// [`call_tool`](Self::call_tool) through rmcp: the result as rmcp
    /// parsed it.
    async fn call_on_rmcp(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
        progress: Option<ProgressSink>,
    ) -> Result<ServerResult, rmcp::ServiceError> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Some(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = self
            .peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await?;
        // rmcp gives every request its own progress token: the server's
        // progress for this call arrives under it.
        let listening =
            progress.map(|sink| Listening::new(&self.progress, &handle.progress_token, sink));
        let mut unanswered = Unanswered {
            peer: &self.peer,
            id: Some(handle.id.clone()),
        };
        let answer = handle.await_response().await;
        unanswered.id = None;
        if listening.is_some() {
            // rmcp hands each notification to a task of its own, and the
            // answer straight to us: progress sent just before the answer
            // may not have reached the sink yet. It gets a moment.
            tokio::time::sleep(PROGRESS_GRACE).await;
        }
        answer
    }

    /// The answer to a `tools/call`, as the caller's result or error.
    fn outcome(
        &self,
        answer: Result<ServerResult, rmcp::ServiceError>,
    ) -> Result<CallToolResult, McpError> {
        let protocol = |message: String| McpError::Protocol {
            server: self.server.clone(),
            stage: STAGE_CALL,
            message,
        };
        let result = match answer {
            Ok(ServerResult::CallToolResult(result)) => Ok(result),
            Ok(_) => Err(protocol(
                "the server answered `tools/call` with something other than a tool result".into(),
            )),
            // The watcher ends the stream on a line over the limit, which
            // rmcp sees only as a closed transport.
            Err(_) if self.report.as_ref().is_some_and(|r| lock(r).oversized) => {
                Err(McpError::MessageTooLarge {
                    server: self.server.clone(),
                    limit: self.max_line,
                })
            }
            // The watcher ended the stream on a flood of lines that are not
            // JSON-RPC.
            Err(rmcp::ServiceError::TransportClosed)
                if self.report.as_ref().is_some_and(|r| lock(r).aborted) =>
            {
                let sample = self
                    .report
                    .as_ref()
                    .and_then(|r| lock(r).first_garbage.clone())
                    .unwrap_or_default();
                Err(McpError::Garbage {
                    server: self.server.clone(),
                    sample,
                })
            }
            // The process exited, or the HTTP server dropped the connection
            // (and takes no new one) before the answer.
            Err(rmcp::ServiceError::TransportClosed) => Err(protocol(
                "the server closed the connection before answering".into(),
            )),
            // Put in place of an answer that was not valid UTF-8: its
            // message says where, without rmcp's `Mcp error: -32700: `.
            Err(rmcp::ServiceError::McpError(error))
                if error
                    .data
                    .as_ref()
                    .is_some_and(|data| data.get(crate::process::INVALID_UTF8_DATA).is_some()) =>
            {
                Err(protocol(error.message.into_owned()))
            }
            Err(err) => Err(protocol(session::error_chain(&err))),
        };
        result.map_err(|err| err.scrubbed(&self.secrets))
    }
}

/// A lane answer (one JSON-RPC line) as rmcp would have handed it over:
/// a tool result, a JSON-RPC error, or, for anything else, a result that
/// is not a tool result. A tool result is parsed once, straight into its
/// type; only a line that does not parse so is read again, for its error.
fn lane_answer(line: &[u8]) -> Result<ServerResult, rmcp::ServiceError> {
    #[derive(serde::Deserialize)]
    struct Answer {
        result: Option<CallToolResult>,
        error: Option<rmcp::ErrorData>,
    }
    #[derive(serde::Deserialize)]
    struct Failed {
        error: Option<rmcp::ErrorData>,
    }
    let (result, error) = match serde_json::from_slice::<Answer>(line) {
        Ok(Answer { result, error }) => (result, error),
        // A result that is not a tool result, or an error that is not one.
        Err(_) => (
            None,
            serde_json::from_slice::<Failed>(line)
                .ok()
                .and_then(|failed| failed.error),
        ),
    };
    match (result, error) {
        (_, Some(error)) => Err(rmcp::ServiceError::McpError(error)),
        (Some(result), None) => Ok(ServerResult::CallToolResult(result)),
        (None, None) => Ok(ServerResult::empty(())),
    }
}

/// A call's progress sink, registered under its token while the call runs.
struct Listening<'a> {
    sinks: &'a session::ProgressSinks,
    token: rmcp::model::ProgressToken,
}

impl<'a> Listening<'a> {
    fn new(
        sinks: &'a session::ProgressSinks,
        token: &rmcp::model::ProgressToken,
        sink: ProgressSink,
    ) -> Self {
        lock(sinks).insert(token.clone(), sink);
        Self {
            sinks,
            token: token.clone(),
        }
    }
}

impl Drop for Listening<'_> {
    fn drop(&mut self) {
        lock(self.sinks).remove(&self.token);
    }
}

/// A request sent and not answered yet: dropped so (the caller gave up, or
/// its time ran out), it tells the server with `notifications/cancelled`.
struct Unanswered<'a> {
    peer: &'a rmcp::Peer<rmcp::RoleClient>,
    id: Option<rmcp::model::RequestId>,
}

impl Drop for Unanswered<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        let notification = CancelledNotification::new(CancelledNotificationParam::new(
            Some(id),
            Some("the gateway's caller gave up on the call".into()),
        ));
        let peer = self.peer.clone();
        tokio::spawn(async move {
            let _ = peer
                .send_notification(ClientNotification::CancelledNotification(notification))
                .await;
        });
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
    /// This process's number for the session (see [`Caller::is_of`]).
    session: u64,
    /// What its errors must not show (see `source::Prepared::secrets`),
    /// shared with every [`Caller`] taken from it.
    secrets: std::sync::Arc<[String]>,
    /// The short path for calls (stdio only; see [`crate::lane`]).
    lane: Option<crate::lane::Lane>,
}

/// Numbers sessions, so a [`Caller`] can tell whether an [`Upstream`] is
/// still the session it was taken from.
static SESSIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

/// Starts or reaches the server `launch` (a spec the local user consented
/// to) describes, runs `initialize` and
/// `tools/list` within its timeout, and keeps the session open.
/// `on_tools_changed` runs when it sends `notifications/tools/list_changed`.
pub async fn connect(
    launch: &agents_trust::TrustedLaunch,
    options: &FetchOptions,
    on_tools_changed: Option<ToolsChanged>,
) -> Result<Upstream, McpError> {
    let source = launch.source();
    let prepared = source::prepare(source, options)?;
    let server = source.server.as_str();
    let handler = Handler {
        on_tools_changed,
        ..Handler::default()
    };
    let (client, tools, guard, stderr, report, lane) = match &prepared.launch {
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
                secrets: &prepared.secrets,
            };
            let (client, tools, guard, stderr, report, lane) =
                stdio::open(launch, options, handler)
                    .await
                    .map_err(|err| err.scrubbed(&prepared.secrets))?;
            (
                client,
                tools,
                Some(guard),
                Some(stderr),
                Some(report),
                Some(lane),
            )
        }
        source::Launch::Http { url, headers } => {
            let launch = http::HttpLaunch {
                server,
                url,
                headers,
                timeout: prepared.timeout,
            };
            let (client, tools, report) = http::open(launch, options, handler)
                .await
                .map_err(|err| err.scrubbed(&prepared.secrets))?;
            (client, tools, None, None, Some(report), None)
        }
    };
    let tools = tools.scrubbed(&prepared.secrets);
    // A session on a version without `initialize` (2026-07-28 on) carries
    // metadata on every request, which rmcp adds: its calls go through rmcp.
    let lane = lane.filter(|_| {
        client
            .peer_info()
            .is_some_and(|info| info.protocol_version.has_initialize())
    });
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
        session: SESSIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        secrets: prepared.secrets.into(),
        lane,
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
        let outcome = match tokio::time::timeout(self.timeout, fetch).await {
            Ok(Ok(mut fetched)) => {
                if let Some(report) = &self.report {
                    fetched
                        .rejected
                        .extend(stdio::take_malformed(&self.server, report));
                }
                let fetched = fetched.scrubbed(&self.secrets);
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
        };
        outcome.map_err(|err| err.scrubbed(&self.secrets))
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
            progress: self.client.service().progress.clone(),
            session: self.session,
            report: self.report.clone(),
            max_line: stdio::max_line(&self.options),
            secrets: self.secrets.clone(),
            lane: self.lane.clone(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lane_answer_is_a_tool_result_an_error_or_neither() {
        let result = lane_answer(
            br#"{"jsonrpc":"2.0","id":"agents-lane-1","result":{"content":[{"type":"text","text":"hi"}]}}"#,
        );
        assert!(
            matches!(&result, Ok(ServerResult::CallToolResult(r)) if r.content.len() == 1),
            "{result:?}"
        );
        // An error, beside a result that is not a tool result or not.
        for line in [
            &br#"{"jsonrpc":"2.0","id":"agents-lane-1","error":{"code":-32602,"message":"no"}}"#[..],
            br#"{"jsonrpc":"2.0","id":"agents-lane-1","result":7,"error":{"code":-32602,"message":"no"}}"#,
        ] {
            let answer = lane_answer(line);
            assert!(
                matches!(&answer, Err(rmcp::ServiceError::McpError(e)) if e.message == "no"),
                "{answer:?}"
            );
        }
        // Anything else is a result that is not a tool result.
        for line in [
            &br#"{"jsonrpc":"2.0","id":"agents-lane-1","result":{"resultType":"input_required"}}"#
                [..],
            br#"{"jsonrpc":"2.0","id":"agents-lane-1","result":7}"#,
            br#"{"jsonrpc":"2.0","id":"agents-lane-1","error":"no"}"#,
            br#"{"jsonrpc":"2.0","id":"agents-lane-1"}"#,
            b"not json",
        ] {
            let answer = lane_answer(line);
            assert!(
                matches!(&answer, Ok(ServerResult::EmptyResult(_))),
                "{}: {answer:?}",
                String::from_utf8_lossy(line)
            );
        }
    }
}
