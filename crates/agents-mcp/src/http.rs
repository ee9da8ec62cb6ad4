//! Fetching from a streamable-HTTP server.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use http::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ServerJsonRpcMessage};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::common::client_side_sse::{
    BoxedSseResponse, ExponentialBackoff, SseRetryPolicy,
};
use rmcp::transport::common::http_header::HEADER_SESSION_ID;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::Sse;

use crate::error::McpError;
use crate::list::Failure;
use crate::process::{StdoutReport, invalid_utf8_error, repair_message};
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

fn is_tools_list(message: &ClientJsonRpcMessage) -> bool {
    matches!(
        message,
        ClientJsonRpcMessage::Request(request)
            if matches!(request.request, ClientRequest::ListToolsRequest(_))
    )
}

/// rmcp's reqwest client with these changes:
/// - a `tools/list` request is posted by this client, which reads the
///   answer (a JSON body or server-sent events) as bytes and hands rmcp the
///   message [`repair_message`] makes of it: only the tools that are
///   malformed, too deep or not valid UTF-8 are lost, not the page, and each
///   tool's `execution` is kept. Any other answer (an HTTP error, another
///   content type) is left to rmcp's own POST of the same request, which
///   only reads;
/// - every server-sent event of any other stream goes through
///   [`repair_message`] too, and an event that is not valid UTF-8 on a
///   request's stream (which rmcp's parser refuses, and rmcp then waits or
///   reconnects) answers that request with an error at once;
/// - it records whether the server could be reached at all when rmcp
///   reconnects to resume a stream ([`ResumeUnlessGone`]).
#[derive(Debug, Clone)]
pub(crate) struct RepairingClient {
    inner: reqwest::Client,
    max_tool_depth: usize,
    report: Arc<Mutex<StdoutReport>>,
    /// The last attempt to open a stream could not connect.
    gone: Arc<AtomicBool>,
}

/// rmcp's default reconnection (1 s, doubling) for a stream that broke or
/// ended before its answer, except that a server that no longer accepts
/// connections is not tried again: the request waiting on the stream then
/// fails at once ("the server closed the connection"), where it waited for
/// its timeout while the reconnections were refused.
#[derive(Debug)]
struct ResumeUnlessGone {
    gone: Arc<AtomicBool>,
    backoff: ExponentialBackoff,
}

impl SseRetryPolicy for ResumeUnlessGone {
    fn retry(&self, attempts: usize) -> Option<Duration> {
        // `attempts` is 0 before the first reconnection (made at once after
        // an error, after this delay when the stream ended cleanly).
        if attempts > 0 && self.gone.load(Ordering::Relaxed) {
            return None;
        }
        self.backoff.retry(attempts)
    }
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
            gone: Arc::new(AtomicBool::new(false)),
        })
    }

    /// Posts the `tools/list` request and reads its answer itself (see the
    /// type's documentation); `None` when the answer is not a successful
    /// JSON body or event stream holding an answer this client can read.
    async fn list_tools(
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
        // Checked by rmcp before it calls us.
        for (name, value) in custom_headers {
            request = request.header(name, value);
        }
        if let Some(session) = &session_id {
            request = request.header(HEADER_SESSION_ID, session.as_ref());
        }
        let mut response = request.json(&message).send().await.ok()?;
        if !response.status().is_success() {
            return None;
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .map(|value| value.trim_start().to_ascii_lowercase())
            .unwrap_or_default();
        let session = response
            .headers()
            .get(HEADER_SESSION_ID)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        if content_type.starts_with("application/json") {
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await.ok()? {
                if body.len() + chunk.len() > limits.max_json_response_size {
                    return None;
                }
                body.extend_from_slice(&chunk);
            }
            let body = repair_message(&body, self.max_tool_depth, &self.report).unwrap_or(body);
            let parsed: ServerJsonRpcMessage = serde_json::from_slice(&body).ok()?;
            return Some(StreamableHttpPostResponse::Json(parsed, session));
        }
        if !content_type.starts_with("text/event-stream") {
            return None;
        }
        // The events up to and with the answer (progress, logs and
        // requests may come first), bounded as rmcp bounds them.
        let mut parser = SseParser::default();
        let mut events = Vec::new();
        let mut read = 0usize;
        while let Some(chunk) = response.chunk().await.ok()? {
            read = read.saturating_add(chunk.len());
            if read > limits.max_json_response_size {
                return None;
            }
            let mut parsed = Vec::new();
            parser
                .feed(&chunk, limits.max_sse_event_size, &mut parsed)
                .ok()?;
            for event in parsed {
                let (event, answer) = self.decoded(event);
                events.push(Ok(event));
                if answer {
                    let stream: BoxedSseResponse = futures::stream::iter(events).boxed();
                    return Some(StreamableHttpPostResponse::Sse(stream, session));
                }
            }
        }
        None
    }

    /// An event as rmcp gets it (its data repaired), and whether it is an
    /// answer (to the one request of its stream).
    fn decoded(&self, event: RawEvent) -> (Sse, bool) {
        let data =
            event.data.map(
                |data| match repair_message(&data, self.max_tool_depth, &self.report) {
                    Some(repaired) => String::from_utf8_lossy(&repaired).into_owned(),
                    None => String::from_utf8_lossy(&data).into_owned(),
                },
            );
        let answer = data.as_deref().is_some_and(is_answer);
        let sse = Sse {
            event: event.event,
            data,
            id: event.id,
            retry: event.retry,
        };
        (sse, answer)
    }

    /// `stream` with each event's data repaired; on the stream of the
    /// request `request_id` (raw JSON), an event that is not valid UTF-8
    /// answers it with an error and ends the stream.
    fn repair(&self, stream: BoxedSseResponse, request_id: Option<String>) -> BoxedSseResponse {
        let depth = self.max_tool_depth;
        let report = Arc::clone(&self.report);
        stream
            .map(move |event| match event {
                Ok(mut event) => {
                    if let Some(data) = &event.data
                        && let Some(repaired) = repair_message(data.as_bytes(), depth, &report)
                    {
                        event.data = Some(String::from_utf8_lossy(&repaired).into_owned());
                    }
                    (Ok(event), false)
                }
                Err(SseError::Utf8Parse(err)) if request_id.is_some() => {
                    let what = format!("at offset {} of an event", err.valid_up_to());
                    let id = request_id.as_deref().unwrap_or("null");
                    let event = Sse {
                        data: Some(invalid_utf8_error(id, &what)),
                        ..Sse::default()
                    };
                    (Ok(event), true)
                }
                Err(err) => (Err(err), false),
            })
            .scan(false, |ended, (event, last)| {
                let item = (!*ended).then_some(event);
                *ended = last;
                futures::future::ready(item)
            })
            .boxed()
    }

    /// Notes whether opening a stream reached the server.
    fn note_reached<T>(&self, result: &Result<T, StreamableHttpError<reqwest::Error>>) {
        let refused = matches!(result, Err(StreamableHttpError::Client(err)) if err.is_connect());
        self.gone.store(refused, Ordering::Relaxed);
    }
}

/// True when `data` is a JSON-RPC answer (`result` or `error` with an `id`).
fn is_answer(data: &str) -> bool {
    use serde_json::value::RawValue;
    serde_json::from_str::<std::collections::BTreeMap<String, &RawValue>>(data).is_ok_and(
        |message| {
            message.contains_key("id")
                && (message.contains_key("result") || message.contains_key("error"))
        },
    )
}

/// One server-sent event, its data as bytes (they need not be UTF-8).
#[derive(Debug, Default)]
struct RawEvent {
    event: Option<String>,
    data: Option<Vec<u8>>,
    id: Option<String>,
    retry: Option<u64>,
    /// A field was seen since the last event.
    started: bool,
}

/// A reader of `text/event-stream` that takes any bytes (sse-stream, which
/// rmcp uses, refuses a line that is not UTF-8).
#[derive(Debug, Default)]
struct SseParser {
    line: Vec<u8>,
    event: RawEvent,
    /// The last line ended with `\r`: a `\n` right after it ends nothing.
    after_cr: bool,
}

impl SseParser {
    /// Reads `chunk`, putting each complete event in `out`; an error when
    /// one line or one event's data is over `max` bytes.
    fn feed(&mut self, chunk: &[u8], max: usize, out: &mut Vec<RawEvent>) -> Result<(), ()> {
        for &byte in chunk {
            let after_cr = std::mem::take(&mut self.after_cr);
            match byte {
                b'\n' if after_cr => {}
                b'\n' | b'\r' => {
                    self.after_cr = byte == b'\r';
                    self.end_line(out);
                }
                _ => {
                    self.line.push(byte);
                    let data = self.event.data.as_ref().map_or(0, Vec::len);
                    if self.line.len().saturating_add(data) > max {
                        return Err(());
                    }
                }
            }
        }
        Ok(())
    }

    fn end_line(&mut self, out: &mut Vec<RawEvent>) {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            if self.event.started {
                out.push(std::mem::take(&mut self.event));
            }
            return;
        }
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(at) => line.split_at(at),
            None => (line.as_slice(), &b""[..]),
        };
        let value = value.strip_prefix(b":").unwrap_or(value);
        let value = value.strip_prefix(b" ").unwrap_or(value);
        let text = || String::from_utf8_lossy(value).into_owned();
        match name {
            b"data" => {
                self.event.started = true;
                match &mut self.event.data {
                    Some(data) => {
                        data.push(b'\n');
                        data.extend_from_slice(value);
                    }
                    None => self.event.data = Some(value.to_vec()),
                }
            }
            b"event" => {
                self.event.started = true;
                self.event.event = Some(text());
            }
            b"id" if !value.contains(&0) => {
                self.event.started = true;
                self.event.id = Some(text());
            }
            b"retry" => {
                if let Ok(retry) = text().trim().parse() {
                    self.event.started = true;
                    self.event.retry = Some(retry);
                }
            }
            // A comment (empty name) or a field nobody defined.
            _ => {}
        }
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
        if is_tools_list(&message) {
            let request = (
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
            );
            if let Some(answer) = self.list_tools(request, limits).await {
                return Ok(answer);
            }
        }
        let request_id = match &message {
            ClientJsonRpcMessage::Request(request) => serde_json::to_string(&request.id).ok(),
            _ => None,
        };
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
        match response {
            Ok(StreamableHttpPostResponse::Sse(stream, session)) => Ok(
                StreamableHttpPostResponse::Sse(self.repair(stream, request_id), session),
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
            .await;
        self.note_reached(&stream);
        Ok(self.repair(stream?, None))
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
            .await;
        self.note_reached(&stream);
        Ok(self.repair(stream?, None))
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
    let client = RepairingClient::new(options.max_tool_depth.min(crate::HARD_MAX_TOOL_DEPTH))
        .map_err(|err| McpError::Connect {
            server: server.to_owned(),
            url: agents_core::redact::redact_url(launch.url),
            reason: format!("cannot set up the HTTP client: {err}"),
        })?;
    let mut config = StreamableHttpClientTransportConfig::with_uri(launch.url)
        .custom_headers(headers)
        .max_json_response_size(options.max_message_bytes)
        .max_sse_event_size(options.max_message_bytes);
    config.retry_config = Arc::new(ResumeUnlessGone {
        gone: Arc::clone(&client.gone),
        backoff: ExponentialBackoff::default(),
    });
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
