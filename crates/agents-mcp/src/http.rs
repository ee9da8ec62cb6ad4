//! Fetching from a streamable-HTTP server.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use http::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ServerJsonRpcMessage, ServerResult};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::common::http_header::HEADER_SESSION_ID;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};

use crate::error::McpError;
use crate::list::Failure;
use crate::process::{StdoutReport, repair_tools_message};
use crate::session::{self, STAGE_INITIALIZE, SessionError, get_stage};
use crate::{FetchOptions, FetchedTools, McpTransport};

/// Redirects followed for one request (same origin, 307/308 only).
const MAX_REDIRECTS: usize = 10;

/// A post's arguments, kept to send it again.
type Request = (
    Arc<str>,
    ClientJsonRpcMessage,
    Option<Arc<str>>,
    Option<String>,
    HashMap<HeaderName, HeaderValue>,
);

/// A `tools/list` result or a JSON-RPC error: nothing to repair.
fn is_tools_answer(message: &ServerJsonRpcMessage) -> bool {
    match message {
        ServerJsonRpcMessage::Response(response) => {
            matches!(response.result, ServerResult::ListToolsResult(_))
        }
        _ => true,
    }
}

fn is_tools_list(message: &ClientJsonRpcMessage) -> bool {
    matches!(
        message,
        ClientJsonRpcMessage::Request(request)
            if matches!(request.request, ClientRequest::ListToolsRequest(_))
    )
}

/// rmcp's reqwest client with one change: a `tools/list` answer loses only
/// its malformed or too-deep tools (recorded in `report`), not the whole
/// page. Each server-sent event is checked before rmcp parses it; a plain
/// JSON answer (`Content-Type: application/json`) that rmcp cannot parse is
/// asked for once more and repaired before parsing.
#[derive(Debug, Clone)]
pub(crate) struct RepairingClient {
    inner: reqwest::Client,
    max_tool_depth: usize,
    report: Arc<Mutex<StdoutReport>>,
}

impl RepairingClient {
    fn new(max_tool_depth: usize) -> Result<Self, reqwest::Error> {
        // As rmcp's default client: no idle pooling (a half-read body would
        // stall the next request on delayed ACKs) and same-origin 307/308
        // redirects only.
        // reqwest is built without a TLS provider (its default, aws-lc-rs,
        // spends 40 ms of CPU seeding its RNG in every process): ring, the
        // provider sqlx uses too. Installing fails only when one already is,
        // and any installed provider serves.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let inner = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(reqwest::redirect::Policy::custom(|attempt| {
                let keeps_body = matches!(
                    attempt.status(),
                    reqwest::StatusCode::TEMPORARY_REDIRECT
                        | reqwest::StatusCode::PERMANENT_REDIRECT
                );
                let same_origin = attempt
                    .previous()
                    .first()
                    .is_some_and(|first| first.origin() == attempt.url().origin());
                if !keeps_body || !same_origin {
                    attempt.stop()
                } else if attempt.previous().len() > MAX_REDIRECTS {
                    attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
                } else {
                    attempt.follow()
                }
            }))
            .build()?;
        Ok(Self {
            inner,
            max_tool_depth,
            report: Arc::new(Mutex::new(StdoutReport::default())),
        })
    }

    /// Posts the `tools/list` request again and repairs its JSON body;
    /// `None` when the answer is not a successful JSON body that repairing
    /// turns into a message.
    async fn list_repaired(
        &self,
        (uri, message, session_id, auth_header, custom_headers): Request,
        limits: StreamableHttpResponseLimits,
    ) -> Option<StreamableHttpPostResponse> {
        let mut request = self.inner.post(uri.as_ref()).header(
            reqwest::header::ACCEPT,
            "application/json, text/event-stream",
        );
        if let Some(token) = auth_header {
            request = request.bearer_auth(token);
        }
        // Already checked by rmcp on the first request.
        for (name, value) in custom_headers {
            request = request.header(name, value);
        }
        if let Some(session) = &session_id {
            request = request.header(HEADER_SESSION_ID, session.as_ref());
        }
        let mut response = request.json(&message).send().await.ok()?;
        let json = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.trim_start().starts_with("application/json"));
        if !response.status().is_success() || !json {
            return None;
        }
        let session = response
            .headers()
            .get(HEADER_SESSION_ID)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.ok()? {
            if body.len() + chunk.len() > limits.max_json_response_size {
                return None;
            }
            body.extend_from_slice(&chunk);
        }
        let repaired = repair_tools_message(&body, self.max_tool_depth, &self.report)?;
        let parsed: ServerJsonRpcMessage = serde_json::from_slice(&repaired).ok()?;
        Some(StreamableHttpPostResponse::Json(parsed, session))
    }

    fn repair(&self, stream: BoxedSseResponse) -> BoxedSseResponse {
        let depth = self.max_tool_depth;
        let report = Arc::clone(&self.report);
        stream
            .map(move |event| {
                event.map(|mut event| {
                    if let Some(data) = &event.data
                        && let Some(repaired) =
                            repair_tools_message(data.as_bytes(), depth, &report)
                        && let Ok(repaired) = String::from_utf8(repaired)
                    {
                        event.data = Some(repaired);
                    }
                    event
                })
            })
            .boxed()
    }
}

impl StreamableHttpClient for RepairingClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        // Kept for asking again: only a `tools/list` request, which reads.
        let again = is_tools_list(&message).then(|| {
            (
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
            )
        });
        let response = self
            .inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        // rmcp parses a plain JSON answer itself: one bad tool fails the whole
        // page, or makes it parse as some other result that `list_tools` then
        // refuses. A `tools/list` is asked once more and its body repaired
        // before parsing; what rmcp made of the first answer stands when the
        // second is no JSON page with something to repair.
        let unparsed = match &response {
            Ok(StreamableHttpPostResponse::Json(message, _)) => !is_tools_answer(message),
            Err(StreamableHttpError::UnexpectedServerResponse(_)) => true,
            _ => false,
        };
        if unparsed
            && let Some(request) = again
            && let Some(repaired) = self.list_repaired(request, limits).await
        {
            return Ok(repaired);
        }
        match response {
            Ok(StreamableHttpPostResponse::Sse(stream, session)) => Ok(
                StreamableHttpPostResponse::Sse(self.repair(stream), session),
            ),
            other => other,
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxedSseResponse, StreamableHttpError<Self::Error>> {
        let stream = self
            .inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await?;
        Ok(self.repair(stream))
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxedSseResponse, StreamableHttpError<Self::Error>> {
        let stream = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await?;
        Ok(self.repair(stream))
    }
}

#[derive(Debug)]
pub(crate) struct HttpLaunch<'a> {
    pub(crate) server: &'a str,
    pub(crate) url: &'a str,
    pub(crate) headers: &'a [(String, String)],
    pub(crate) timeout: Duration,
}

/// Connects and runs `initialize` and `tools/list`; the session stays open.
/// The report collects the tools left out of this and later listings.
pub(crate) async fn open(
    launch: HttpLaunch<'_>,
    options: &FetchOptions,
    handler: session::Handler,
) -> Result<(session::Client, FetchedTools, Arc<Mutex<StdoutReport>>), McpError> {
    let server = launch.server;
    let mut headers = HashMap::new();
    for (name, value) in launch.headers {
        let invalid = |what: &str| McpError::InvalidSource {
            server: server.to_owned(),
            message: format!("`headers.{name}`: {what}"),
        };
        let header_name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| invalid("not a valid HTTP header name"))?;
        // The value may hold an expanded secret: never echo it.
        let header_value = HeaderValue::from_str(value)
            .map_err(|_| invalid("the expanded value is not a valid HTTP header value"))?;
        headers.insert(header_name, header_value);
    }
    let config = StreamableHttpClientTransportConfig::with_uri(launch.url)
        .custom_headers(headers)
        .max_json_response_size(options.max_message_bytes)
        .max_sse_event_size(options.max_message_bytes);
    let client = RepairingClient::new(options.max_tool_depth.min(crate::HARD_MAX_TOOL_DEPTH))
        .map_err(|err| McpError::Connect {
            server: server.to_owned(),
            url: agents_core::redact::redact_url(launch.url),
            reason: format!("cannot set up the HTTP client: {err}"),
        })?;
    let report = Arc::clone(&client.report);
    let transport = StreamableHttpClientTransport::with_client(client, config);

    let stage = Mutex::new(STAGE_INITIALIZE);
    let outcome = tokio::time::timeout(
        launch.timeout,
        session::run(
            transport,
            server,
            McpTransport::Http,
            &stage,
            options,
            handler,
        ),
    )
    .await;
    match outcome {
        Ok(Ok((client, mut fetched))) => {
            fetched
                .rejected
                .extend(crate::stdio::take_malformed(server, &report));
            Ok((client, fetched, report))
        }
        Ok(Err(failure)) => Err(diagnose(server, launch.url, get_stage(&stage), failure)),
        Err(_elapsed) => Err(McpError::Timeout {
            server: server.to_owned(),
            stage: get_stage(&stage),
            timeout: launch.timeout,
            note: String::new(),
        }),
    }
}

/// The error of a failed HTTP session. `url` is the expanded endpoint: the
/// error shows it without its password or secret query values, and scrubs
/// them from the driver's text too (reqwest names the URL it failed on).
fn diagnose(server: &str, url: &str, stage: &'static str, failure: SessionError) -> McpError {
    use agents_core::redact::{redact_url, scrub, url_secrets};
    if let SessionError::List(Failure::Fatal(err)) = failure {
        return err;
    }
    let secrets = url_secrets(url);
    let Some(err) = failure.as_std() else {
        return McpError::Protocol {
            server: server.to_owned(),
            stage,
            message: "unknown error".into(),
        };
    };
    let connect = |reason: String| McpError::Connect {
        server: server.to_owned(),
        url: redact_url(url),
        reason: scrub(&reason, &secrets),
    };
    if session::io_error_kind(err) == Some(std::io::ErrorKind::ConnectionRefused) {
        return connect("connection refused".into());
    }
    if session::find_reqwest_error(err).is_some_and(|err| err.is_connect()) {
        return connect(session::root_cause(err));
    }
    McpError::Protocol {
        server: server.to_owned(),
        stage,
        message: scrub(&session::error_chain(err), &secrets),
    }
}
