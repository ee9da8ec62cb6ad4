//! One MCP session over any rmcp transport: `initialize`, then `tools/list`.

use std::sync::Mutex;

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{ClientInitializeError, RunningService};
use rmcp::transport::IntoTransport;
use rmcp::{RoleClient, ServiceExt};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::list::{Failure, ListLimits, Listing, list_all};
use crate::process::lock;
use crate::{FetchOptions, FetchedTools, McpTransport, ServerInfo};

pub(crate) const STAGE_INITIALIZE: &str = "initialize";
pub(crate) const STAGE_LIST: &str = "tools/list";

/// A failure together with the request that was pending.
#[derive(Debug)]
pub(crate) enum SessionError {
    Init(Box<ClientInitializeError>),
    List(Failure),
}

pub(crate) type Client = RunningService<RoleClient, Handler>;

/// Called when the server sends `notifications/tools/list_changed`.
pub type ToolsChanged = std::sync::Arc<dyn Fn() + Send + Sync>;

/// Called with each `notifications/progress` the server sends for one call.
pub type ProgressSink =
    std::sync::Arc<dyn Fn(rmcp::model::ProgressNotificationParam) + Send + Sync>;

/// The calls waiting for progress, by the progress token rmcp gave each
/// request.
pub(crate) type ProgressSinks =
    std::sync::Arc<Mutex<std::collections::HashMap<rmcp::model::ProgressToken, ProgressSink>>>;

/// The client side of a session: announces itself and passes
/// `notifications/tools/list_changed` and each call's progress on.
#[derive(Clone, Default)]
pub(crate) struct Handler {
    pub(crate) on_tools_changed: Option<ToolsChanged>,
    pub(crate) progress: ProgressSinks,
}

impl std::fmt::Debug for Handler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handler").finish_non_exhaustive()
    }
}

impl rmcp::ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("agents-mcp", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn on_tool_list_changed(&self, _context: rmcp::service::NotificationContext<RoleClient>) {
        if let Some(callback) = &self.on_tools_changed {
            callback();
        }
    }

    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        let sink = lock(&self.progress).get(&params.progress_token).cloned();
        if let Some(sink) = sink {
            sink(params);
        }
    }
}

pub(crate) async fn run<T, E, A>(
    transport: T,
    server: &str,
    kind: McpTransport,
    stage: &Mutex<&'static str>,
    options: &FetchOptions,
    handler: Handler,
) -> Result<(Client, FetchedTools), SessionError>
where
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let client = handler
        .serve(transport)
        .await
        .map_err(|err| SessionError::Init(Box::new(err)))?;
    set_stage(stage, STAGE_LIST);
    let fetched = fetch(&client, server, kind, options)
        .await
        .map_err(SessionError::List)?;
    Ok((client, fetched))
}

/// `tools/list` (every page, within the limits of `options`) on an open
/// session: at start-up, and again when the server says its tools changed.
pub(crate) async fn fetch(
    client: &Client,
    server: &str,
    kind: McpTransport,
    options: &FetchOptions,
) -> Result<FetchedTools, Failure> {
    let fetched_at = OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .unwrap_or_else(|_| OffsetDateTime::now_utc());
    let fetched_at_text = fetched_at.format(&Rfc3339).unwrap_or_default();
    let peer_info = client.peer_info();
    let server_info = peer_info.as_ref().and_then(|info| {
        info.server_info.as_ref().map(|implementation| ServerInfo {
            name: implementation.name.clone(),
            version: implementation.version.clone(),
            protocol_version: info.protocol_version.to_string(),
        })
    });
    let offers_tools = peer_info
        .as_ref()
        .is_none_or(|info| info.capabilities.tools.is_some());
    let listing = if offers_tools {
        let limits = ListLimits {
            max_tools: options.max_tools,
            max_pages: options.max_pages,
        };
        list_all(client.peer(), server, kind, &fetched_at_text, &limits).await?
    } else {
        // A server without the `tools` capability has no tools to list.
        Listing {
            tools: Vec::new(),
            rejected: Vec::new(),
        }
    };
    Ok(FetchedTools {
        server: server.to_owned(),
        transport: kind,
        tools: listing.tools,
        rejected: listing.rejected,
        server_info,
        fetched_at,
    })
}

pub(crate) fn set_stage(stage: &Mutex<&'static str>, value: &'static str) {
    *lock(stage) = value;
}

pub(crate) fn get_stage(stage: &Mutex<&'static str>) -> &'static str {
    *lock(stage)
}

/// Closes the session without waiting longer than `grace`.
pub(crate) async fn close(client: Client, grace: std::time::Duration) {
    if tokio::time::timeout(grace, client.cancel()).await.is_err() {
        tracing::debug!("mcp session did not close within {grace:?}");
    }
}

/// rmcp's HTTP transport error, as it arrives inside a `DynamicTransportError`.
type HttpTransportError = rmcp::transport::worker::WorkerQuitReason<
    rmcp::transport::streamable_http_client::StreamableHttpError<reqwest::Error>,
>;

/// `err.source()`, bridging the links rmcp leaves out (fields named `error`, or
/// variants without `#[source]`), so the root cause (e.g. the `io::Error` of a
/// refused connection) can be reached.
fn next_source<'a>(
    err: &'a (dyn std::error::Error + 'static),
) -> Option<&'a (dyn std::error::Error + 'static)> {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    use rmcp::transport::worker::WorkerQuitReason;
    if let Some(ClientInitializeError::TransportError { error, .. }) =
        err.downcast_ref::<ClientInitializeError>()
    {
        return Some(error);
    }
    if let Some(WorkerQuitReason::Fatal { error, .. }) = err.downcast_ref::<HttpTransportError>() {
        return Some(error);
    }
    if let Some(StreamableHttpError::Client(error)) =
        err.downcast_ref::<StreamableHttpError<reqwest::Error>>()
    {
        return Some(error);
    }
    err.source()
}

/// True for rmcp's wrappers whose own text is only noise (type names, "Send
/// message error") around the real cause.
fn is_wrapper(err: &(dyn std::error::Error + 'static)) -> bool {
    use rmcp::transport::DynamicTransportError;
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    matches!(
        err.downcast_ref::<ClientInitializeError>(),
        Some(ClientInitializeError::TransportError { .. })
    ) || matches!(
        err.downcast_ref::<rmcp::ServiceError>(),
        Some(rmcp::ServiceError::TransportSend(_))
    ) || err.is::<DynamicTransportError>()
        || err.is::<HttpTransportError>()
        || matches!(
            err.downcast_ref::<StreamableHttpError<reqwest::Error>>(),
            Some(StreamableHttpError::Client(_))
        )
}

/// An error and its causes on one line, without rmcp's wrappers or repeats.
pub(crate) fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut current = Some(err);
    while let Some(err) = current {
        if !is_wrapper(err) {
            let text = err.to_string();
            if !parts.iter().any(|part| part.contains(&text)) {
                parts.push(text);
            }
        }
        current = next_source(err);
    }
    if parts.is_empty() {
        parts.push(err.to_string());
    }
    // A server's error text is someone else's, of any length.
    agents_core::text::bounded_message(&parts.join(": "))
}

/// The innermost cause's message.
pub(crate) fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut current = err;
    while let Some(next) = next_source(current) {
        current = next;
    }
    agents_core::text::bounded_message(&current.to_string())
}

/// The `reqwest::Error` among `err` and its causes.
pub(crate) fn find_reqwest_error<'a>(
    err: &'a (dyn std::error::Error + 'static),
) -> Option<&'a reqwest::Error> {
    let mut current = Some(err);
    while let Some(err) = current {
        if let Some(found) = err.downcast_ref::<reqwest::Error>() {
            return Some(found);
        }
        current = next_source(err);
    }
    None
}

/// The first `std::io::Error` among `err` and its causes.
pub(crate) fn io_error_kind(err: &(dyn std::error::Error + 'static)) -> Option<std::io::ErrorKind> {
    let mut current = Some(err);
    while let Some(err) = current {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            return Some(io.kind());
        }
        current = next_source(err);
    }
    None
}

impl SessionError {
    /// True when the server answered with a JSON-RPC error: the connection is
    /// fine, so there is nothing more to diagnose.
    pub(crate) fn is_error_answer(&self) -> bool {
        matches!(
            self,
            Self::Init(err) if matches!(**err, ClientInitializeError::JsonRpcError(_))
        ) || matches!(
            self,
            Self::List(Failure::Service(rmcp::ServiceError::McpError(_)))
        )
    }

    pub(crate) fn as_std(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Init(err) => Some(err.as_ref()),
            Self::List(Failure::Service(err)) => Some(err),
            Self::List(Failure::Fatal(_)) => None,
        }
    }
}
