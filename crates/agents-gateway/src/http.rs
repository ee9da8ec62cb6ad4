//! Streamable HTTP for the gateway: rmcp's `StreamableHttpService` behind a
//! small hyper (HTTP/1.1 and HTTP/2) accept loop, with an optional bearer
//! token checked on every request before rmcp sees it.
//!
//! - A token is required unless `--no-auth` asks for none, which only a
//!   loopback address may ([`HttpAccess`]): every user of the machine can
//!   reach a loopback port, and the tools behind it run with this user's
//!   secrets.
//! - The token is compared in constant time (SHA-256 of both sides, then
//!   `subtle`'s `ct_eq`, so neither content nor length leaks through timing)
//!   and never printed.
//! - On loopback rmcp's `Host` check (DNS-rebinding protection) stays on; with a
//!   token on another address it is off: a browser tricked by DNS rebinding
//!   cannot send the `Authorization` header.
//! - The endpoint is `/mcp`; other paths answer 404.
//! - Every accepted socket has `TCP_NODELAY`, and an answer that is ready at
//!   once goes out whole, headers and body in one write ([`coalesced`]):
//!   without it Nagle held the second write of every answer until the
//!   client's delayed ACK, 44 ms a call on a keep-alive connection.
//! - Two pools of connections ([`Admission`]): a large, cheap one for
//!   connections that have not yet sent an authenticated request, and the
//!   scarce one (256) taken only after a request passed the token check, so
//!   silent or unauthenticated sockets cannot lock authenticated clients out.
//! - A request body must keep coming ([`read_body`]): at a minimum rate after
//!   a grace period, and whole within a deadline, on HTTP/1 and HTTP/2.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::{Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::Body as _;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::{Follow, Gateway, GatewayError};

/// The endpoint path.
pub const ENDPOINT: &str = "/mcp";

/// Connections of authenticated clients served at once (see [`Admission`]).
const MAX_CONNECTIONS: usize = 256;

/// Connections held at once before they have sent an authenticated request
/// (see [`Admission`]): each costs a socket and a small task until it sends
/// a first byte, then hyper's buffers until its headers are read (10 s at
/// most), so thousands are affordable. Fewer when the limit of open files
/// leaves less room ([`unauthenticated_cap`]).
const MAX_UNAUTHENTICATED: usize = 2048;

/// File descriptors left for everything but client connections (upstream
/// servers' pipes, the database, logs) when the cap of unauthenticated
/// connections is taken from the limit of open files.
const FDS_KEPT: u64 = 256;

/// Connections kept free for requests: a `GET` event stream lasts as long
/// as its client wants, so one is refused (503) when fewer than this many
/// connections are free, and streams can never take every connection (256
/// open streams had locked every other client out).
const KEPT_FOR_REQUESTS: usize = 32;

/// Sessions kept at once. Each costs about 88 KB and lives until it is
/// closed (`DELETE`) or idle for rmcp's 5 minutes, so without a cap a
/// client opening sessions in a loop took 1.4 GB in 9 s. A new session
/// beyond it gets 503.
const MAX_SESSIONS: usize = 1024;

/// How long a client has to send a request's headers.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long an authenticated request waits for one of the
/// [`MAX_CONNECTIONS`] before it is answered 503.
const PERMIT_WAIT: Duration = Duration::from_secs(30);

/// A request body may take this long whatever its size...
const BODY_GRACE: Duration = Duration::from_secs(10);

/// ...and must then have come at this many bytes a second or more,
/// counted from its start...
const MIN_BODY_RATE: u64 = 64 * 1024;

/// ...and whole within this (rmcp's 4 MiB at the minimum rate is about 74 s).
const BODY_DEADLINE: Duration = Duration::from_secs(60);

/// How long the headers of an event-stream answer to a `POST` wait for its
/// first message, so that headers and message (and, when that was all, the
/// end) go out in one write.
const HOLD_FOR_ANSWER: Duration = Duration::from_secs(1);

/// Who may use the HTTP endpoint.
#[derive(Debug)]
pub enum HttpAccess {
    /// Requests carrying this bearer token.
    Token(BearerToken),
    /// Anyone who can connect: allowed on a loopback address only, and
    /// only when asked for (`--no-auth`), since every user of the machine
    /// can connect to a loopback port.
    Open,
    /// Neither was given: refused, saying which to give.
    Unset,
}

impl HttpAccess {
    /// What [`Gateway::bind_http`] refuses for `addr`, asked before
    /// anything starts (so `--dry-run` refuses it too).
    pub fn check(&self, addr: SocketAddr) -> Result<(), GatewayError> {
        match self {
            Self::Token(_) => Ok(()),
            Self::Open if addr.ip().is_loopback() => Ok(()),
            Self::Unset if addr.ip().is_loopback() => {
                Err(GatewayError::LoopbackTokenRequired(addr))
            }
            Self::Open | Self::Unset => Err(GatewayError::TokenRequired(addr)),
        }
    }
}

/// A bearer token, kept as its SHA-256 only.
#[derive(Clone)]
pub struct BearerToken {
    digest: [u8; 32],
}

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerToken(<redacted>)")
    }
}

impl BearerToken {
    /// The token held by environment variable `var` (which must be set and
    /// not empty).
    pub fn from_env(var: &str) -> Result<Self, GatewayError> {
        match std::env::var(var) {
            Ok(value) if !value.trim().is_empty() => Ok(Self::new(value.trim())),
            _ => Err(GatewayError::TokenMissing(var.to_owned())),
        }
    }

    /// A token from its text.
    pub fn new(token: &str) -> Self {
        Self {
            digest: Sha256::digest(token.as_bytes()).into(),
        }
    }

    /// True when an `Authorization` header value is `Bearer <this token>`.
    pub fn accepts(&self, authorization: Option<&[u8]>) -> bool {
        let Some(value) = authorization else {
            return false;
        };
        let Some(given) = value
            .get(..7)
            .filter(|scheme| scheme.eq_ignore_ascii_case(b"bearer "))
            .and_then(|_| value.get(7..))
        else {
            return false;
        };
        let given: [u8; 32] = Sha256::digest(given.trim_ascii()).into();
        given.ct_eq(&self.digest).into()
    }
}

/// A bound, not yet serving, HTTP endpoint.
#[derive(Debug)]
pub struct HttpServer {
    listener: tokio::net::TcpListener,
    local: SocketAddr,
    token: Option<BearerToken>,
    gateway: Gateway,
}

type Body = BoxBody<Bytes, Infallible>;

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

impl Gateway {
    /// Binds `addr` for streamable HTTP behind `access`: a token, or none
    /// ([`HttpAccess::Open`]) on a loopback address only.
    pub async fn bind_http(
        &self,
        addr: SocketAddr,
        access: HttpAccess,
    ) -> Result<HttpServer, GatewayError> {
        access.check(addr)?;
        let token = match access {
            HttpAccess::Token(token) => Some(token),
            HttpAccess::Open | HttpAccess::Unset => None,
        };
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|err| GatewayError::Bind(addr, err))?;
        let local = listener
            .local_addr()
            .map_err(|err| GatewayError::Bind(addr, err))?;
        Ok(HttpServer {
            listener,
            local,
            token,
            gateway: self.clone(),
        })
    }
}

impl HttpServer {
    /// The address actually bound (port 0 resolved).
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The endpoint URL (`http://ADDR/mcp`).
    pub fn url(&self) -> String {
        format!("http://{}{ENDPOINT}", self.local)
    }

    /// Serves until the future is dropped (the CLI drops it on a signal; the
    /// gateway's upstream guards then stop their servers), following the
    /// registry meanwhile when `follow` is given.
    pub async fn run(self, follow: Option<Follow<'_>>) {
        let gateway = self.gateway.clone();
        tokio::select! {
            () = self.accept() => {}
            () = gateway.follow_or_wait(follow.as_ref()) => {}
        }
    }

    async fn accept(self) {
        let Self {
            listener,
            local,
            token,
            gateway,
        } = self;
        let mut config = StreamableHttpServerConfig::default();
        if local.ip().is_loopback() {
            // rmcp's defaults (`localhost`, `127.0.0.1`, `::1`) and the
            // address bound: any other loopback address (`127.0.0.2`) was
            // answered 403 for its own Host header. A DNS-rebinding page's
            // Host is still refused.
            let mut hosts = config.allowed_hosts.clone();
            hosts.push(local.ip().to_string());
            config = config.with_allowed_hosts(hosts);
            // A browser sends `Origin`: only a page served from this
            // machine's loopback may call (any port), not one from the web
            // that reaches the port through the visitor's browser. Clients
            // that are not browsers send none and are not affected.
            let own = match local.ip() {
                std::net::IpAddr::V6(ip) => format!("http://[{ip}]:*"),
                std::net::IpAddr::V4(ip) => format!("http://{ip}:*"),
            };
            config = config.with_allowed_origins([
                "http://localhost:*".to_owned(),
                "http://127.0.0.1:*".to_owned(),
                "http://[::1]:*".to_owned(),
                own,
            ]);
        } else {
            // Clients elsewhere hold the token; a browser page they open
            // must not call with it on their behalf: any `Origin` is
            // refused (403), as the specification asks of an origin the
            // server does not know.
            config = config.disable_allowed_hosts().enforce_origin_validation();
        }
        let max_body = config.max_request_body_bytes;
        let sessions = Arc::new(LocalSessionManager::default());
        let mcp: StreamableHttpService<Gateway, LocalSessionManager> =
            StreamableHttpService::new(move || Ok(gateway.clone()), sessions.clone(), config);
        let shared = Arc::new(Served {
            mcp,
            sessions,
            token,
            max_body,
            serving: Arc::new(Semaphore::new(MAX_CONNECTIONS)),
        });
        // A permit of the cheap pool is taken before `accept`, so
        // connections beyond it wait in the kernel's backlog instead of
        // using up the process's file descriptors (which the servers it
        // starts need too).
        let unauthenticated = Arc::new(Semaphore::new(unauthenticated_cap()));
        loop {
            // The semaphore is never closed.
            let Ok(permit) = unauthenticated.clone().acquire_owned().await else {
                return;
            };
            let (stream, _peer) = match listener.accept().await {
                Ok(accepted) => accepted,
                Err(err) => {
                    // Out of file descriptors and the like: say so, keep serving.
                    tracing::warn!(error = %err, "mcp serve: accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            // Answers are written whole (see `coalesced`): nothing is gained
            // by waiting for more, and Nagle's wait for the client's delayed
            // ACK cost 44 ms per call.
            if let Err(err) = stream.set_nodelay(true) {
                tracing::debug!(error = %err, "mcp serve: cannot set TCP_NODELAY");
            }
            let shared = shared.clone();
            tokio::spawn(serve_connection(stream, permit, shared));
        }
    }
}

/// What every connection shares: the MCP service, its sessions, the token
/// and the scarce pool of connections.
struct Served {
    mcp: StreamableHttpService<Gateway, LocalSessionManager>,
    sessions: Arc<LocalSessionManager>,
    token: Option<BearerToken>,
    max_body: usize,
    /// The [`MAX_CONNECTIONS`] permits of authenticated connections.
    serving: Arc<Semaphore>,
}

/// The unauthenticated connections held at once: [`MAX_UNAUTHENTICATED`],
/// or fewer when the limit of open files leaves less room beside the
/// [`MAX_CONNECTIONS`] and [`FDS_KEPT`].
fn unauthenticated_cap() -> usize {
    let soft = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .map_or(1024, |(soft, _)| soft);
    let room = soft.saturating_sub(MAX_CONNECTIONS as u64 + FDS_KEPT);
    usize::try_from(room)
        .unwrap_or(usize::MAX)
        .clamp(16, MAX_UNAUTHENTICATED)
}

/// Raises this process's soft limit of open files to its hard limit (at
/// most 65,536) and returns the soft limit now in force: the HTTP gateway
/// holds a socket per connection ([`MAX_UNAUTHENTICATED`] and
/// [`MAX_CONNECTIONS`]) besides its upstream servers' pipes, and a soft limit
/// of 1,024 is common.
pub fn raise_open_files_limit() -> std::io::Result<u64> {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE)?;
    let wanted = hard.min(65_536);
    if wanted > soft {
        setrlimit(Resource::RLIMIT_NOFILE, wanted, hard)?;
        return Ok(wanted);
    }
    Ok(soft)
}

/// The permits of one connection. Until one of its requests passes the token
/// check (any request, without a token) it holds a permit of the cheap pool;
/// then it takes one of the [`MAX_CONNECTIONS`] and gives the cheap one
/// back. Silent, slow-to-speak or unauthenticated sockets therefore never
/// hold what authenticated clients need: before, 300–700 silent sockets,
/// reopened as soon as they were dropped, held every one of the 256 and
/// delayed authenticated requests by 8–10 s.
struct Admission {
    waiting: std::sync::Mutex<Option<OwnedSemaphorePermit>>,
    serving: tokio::sync::OnceCell<OwnedSemaphorePermit>,
}

impl Admission {
    /// Takes a permit of `serving` for this connection unless it holds one;
    /// false when none came free within [`PERMIT_WAIT`].
    async fn admit(&self, serving: &Arc<Semaphore>) -> bool {
        let admitted = self
            .serving
            .get_or_try_init(|| async {
                match tokio::time::timeout(PERMIT_WAIT, serving.clone().acquire_owned()).await {
                    Ok(Ok(permit)) => Ok(permit),
                    // Timed out (the semaphore is never closed).
                    _ => Err(()),
                }
            })
            .await
            .is_ok();
        if admitted {
            crate::lock(&self.waiting).take();
        }
        admitted
    }
}

/// Serves one accepted connection, which holds `permit` of the cheap pool.
async fn serve_connection(
    stream: tokio::net::TcpStream,
    permit: OwnedSemaphorePermit,
    shared: Arc<Served>,
) {
    // A connection that sends nothing is dropped: the header timeout below
    // starts only once hyper has seen enough to tell HTTP/1 from HTTP/2.
    let mut first = [0u8; 1];
    if !matches!(
        tokio::time::timeout(HEADER_READ_TIMEOUT, stream.peek(&mut first)).await,
        Ok(Ok(1..))
    ) {
        return;
    }
    let admission = Arc::new(Admission {
        waiting: std::sync::Mutex::new(Some(permit)),
        serving: tokio::sync::OnceCell::new(),
    });
    let service = hyper::service::service_fn(move |request| {
        let shared = shared.clone();
        let admission = admission.clone();
        async move { Ok::<_, Infallible>(route(&shared, &admission, request).await) }
    });
    let io = hyper_util::rt::TokioIo::new(stream);
    let mut builder =
        hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new());
    // A client that never finishes its headers (before the token is even
    // checked) is dropped instead of holding a connection.
    builder
        .http1()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT);
    // HTTP/2 has no header timeout: a peer that stops answering pings is
    // dropped instead.
    builder
        .http2()
        .timer(hyper_util::rt::TokioTimer::new())
        .keep_alive_interval(Some(HEADER_READ_TIMEOUT))
        .keep_alive_timeout(HEADER_READ_TIMEOUT);
    // The permits go back when the connection ends (the service holds them).
    let _ = builder.serve_connection(io, service).await;
}

/// An answer of `status` closing an HTTP/1 connection whose request body
/// was not read whole (HTTP/2 resets only the stream).
fn closing(version: http::Version, status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = plain(status, text);
    if version < http::Version::HTTP_2 {
        response.headers_mut().insert(
            header::CONNECTION,
            header::HeaderValue::from_static("close"),
        );
    }
    response
}

async fn route(
    served: &Served,
    admission: &Admission,
    request: Request<hyper::body::Incoming>,
) -> Response<Body> {
    if let Some(token) = &served.token {
        let authorization = request
            .headers()
            .get(header::AUTHORIZATION)
            .map(header::HeaderValue::as_bytes);
        if !token.accepts(authorization) {
            let mut response = plain(
                StatusCode::UNAUTHORIZED,
                "a valid bearer token is required\n",
            );
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
            return response;
        }
    }
    if request.uri().path() != ENDPOINT {
        return plain(StatusCode::NOT_FOUND, "the MCP endpoint is /mcp\n");
    }
    if !admission.admit(&served.serving).await {
        return closing(
            request.version(),
            StatusCode::SERVICE_UNAVAILABLE,
            "too many connections are open: try again later\n",
        );
    }
    let method = request.method().clone();
    if method == hyper::Method::GET && served.serving.available_permits() < KEPT_FOR_REQUESTS {
        return plain(
            StatusCode::SERVICE_UNAVAILABLE,
            "too many event streams are open: try again later\n",
        );
    }
    let session = request
        .headers()
        .get("mcp-session-id")
        .map(|id| id.to_str().unwrap_or_default().to_owned());
    match (&method, &session) {
        // A POST without a session id may open a session.
        (&hyper::Method::POST, None)
            if served.sessions.sessions.read().await.len() >= MAX_SESSIONS =>
        {
            return plain(
                StatusCode::SERVICE_UNAVAILABLE,
                "too many sessions: close one (DELETE with its Mcp-Session-Id) or wait for an idle one to expire\n",
            );
        }
        // rmcp answers 202 for any id; the specification (and the SDKs'
        // clients) expect 404 for a session that is not (or no longer) there.
        (&hyper::Method::DELETE, Some(id))
            if !served
                .sessions
                .sessions
                .read()
                .await
                .contains_key(id.as_str()) =>
        {
            return plain(
                StatusCode::NOT_FOUND,
                "no such session: it was closed, or expired\n",
            );
        }
        _ => {}
    }
    let version = request.version();
    let (parts, body) = request.into_parts();
    let body = if method == hyper::Method::POST {
        match read_body(body, served.max_body).await {
            Ok(body) => body,
            Err(refused) => return closing(version, refused.status(), refused.text()),
        }
    } else {
        // rmcp reads no body of another method.
        Bytes::new()
    };
    let json = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            value
                .split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .eq_ignore_ascii_case("application/json")
        });
    let request = Request::from_parts(parts, Full::new(body.clone()));
    let response = served.mcp.handle(request).await;
    match response.status() {
        // rmcp answers a JSON body it cannot read as a JSON-RPC message 415,
        // as if its type were wrong.
        StatusCode::UNSUPPORTED_MEDIA_TYPE if json => unreadable_message(&body),
        // The session is closed: rmcp says 202, the SDKs expect 200 or 204
        // (the Python SDK logged "Session termination failed: 202").
        StatusCode::ACCEPTED if method == hyper::Method::DELETE => {
            let mut response = response;
            *response.status_mut() = StatusCode::NO_CONTENT;
            response
        }
        _ if method == hyper::Method::POST => coalesced(response).await,
        _ => response,
    }
}

/// The JSON-RPC error for a body that is not a JSON-RPC message, with HTTP
/// status 400: `-32700` (parse error) when it is not JSON at all,
/// `-32600` (invalid request) when it is JSON of another shape.
fn unreadable_message(body: &[u8]) -> Response<Body> {
    let (code, message) = match serde_json::from_slice::<serde_json::Value>(body) {
        Err(err) => (
            -32700,
            format!("parse error: the request body is not JSON ({err})"),
        ),
        Ok(_) => (
            -32600,
            "invalid request: the request body is JSON but not a JSON-RPC message".to_owned(),
        ),
    };
    let error = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": code, "message": message},
    });
    let mut response = Response::new(Full::new(Bytes::from(error.to_string())).boxed());
    *response.status_mut() = StatusCode::BAD_REQUEST;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

/// Why a request body was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BodyRefused {
    /// It came too slowly ([`read_body`]).
    TooSlow,
    /// It was larger than rmcp takes.
    TooLarge,
    /// The client broke it off, or sent what is not HTTP.
    Broken,
}

impl BodyRefused {
    fn status(self) -> StatusCode {
        match self {
            Self::TooSlow => StatusCode::REQUEST_TIMEOUT,
            Self::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::Broken => StatusCode::BAD_REQUEST,
        }
    }

    fn text(self) -> &'static str {
        match self {
            Self::TooSlow => {
                "the request body came too slowly: after its first 10 s it must have come at \
                 64 KiB/s or more, and whole within 60 s\n"
            }
            Self::TooLarge => "the request body is larger than 4 MiB\n",
            Self::Broken => "the request body could not be read\n",
        }
    }
}

/// By when the next part of a body must have come, `received` bytes of it
/// having come since `start`: [`BODY_GRACE`] plus the time
/// [`MIN_BODY_RATE`] takes for what came, and never past [`BODY_DEADLINE`].
fn body_due(start: tokio::time::Instant, received: usize) -> tokio::time::Instant {
    let earned = Duration::from_millis(
        u64::try_from(received)
            .unwrap_or(u64::MAX)
            .saturating_mul(1000)
            / MIN_BODY_RATE,
    );
    start + (BODY_GRACE + earned).min(BODY_DEADLINE)
}

/// Reads a request body of at most `limit` bytes, at the pace [`body_due`]
/// sets: a client that sends `Content-Length: 1000` and then a byte every
/// 5 s held its connection forever (260 of them locked every other client
/// out), with HTTP/1 and HTTP/2 alike.
async fn read_body(mut body: hyper::body::Incoming, limit: usize) -> Result<Bytes, BodyRefused> {
    let start = tokio::time::Instant::now();
    let mut held = BytesMut::new();
    loop {
        let frame = tokio::time::timeout_at(body_due(start, held.len()), body.frame())
            .await
            .map_err(|_| BodyRefused::TooSlow)?;
        let Some(frame) = frame else {
            return Ok(held.freeze());
        };
        let Ok(data) = frame.map_err(|_| BodyRefused::Broken)?.into_data() else {
            // Trailers.
            continue;
        };
        if data.len() > limit.saturating_sub(held.len()) {
            return Err(BodyRefused::TooLarge);
        }
        if held.is_empty() && body.is_end_stream() {
            // The usual case: the whole body in one frame.
            return Ok(data);
        }
        held.extend_from_slice(&data);
    }
}

/// An event-stream answer to a `POST` whose headers wait (up to
/// [`HOLD_FOR_ANSWER`]) for its first message, so that they go out in one
/// write with it, and with the end of the stream when that message was the
/// answer (then as a body of known length). rmcp starts every such stream
/// with a priming event (an id and a retry time), ready at once, and the
/// message comes later: hyper wrote the two apart.
async fn coalesced(response: Response<Body>) -> Response<Body> {
    let event_stream = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().starts_with(b"text/event-stream"));
    if !event_stream {
        return response;
    }
    let (parts, mut body) = response.into_parts();
    let until = tokio::time::Instant::now() + HOLD_FOR_ANSWER;
    let mut held = BytesMut::new();
    // What has come: nothing but priming, a message, or the answer itself
    // (after which rmcp ends the stream at once).
    let mut seen = Seen::Priming;
    loop {
        let next = match seen {
            Seen::Priming => tokio::time::timeout_at(until, body.frame()).await.ok(),
            Seen::Answer => tokio::time::timeout(WAIT_FOR_END, body.frame()).await.ok(),
            // Progress and the like go out at once, with what is ready.
            Seen::Message => match poll_once(&mut body).await {
                Poll::Ready(next) => Some(next),
                Poll::Pending => None,
            },
        };
        let Some(next) = next else {
            break;
        };
        match next {
            None => {
                return Response::from_parts(parts, Full::new(held.freeze()).boxed());
            }
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    seen = seen.max(Seen::of(&data));
                    held.extend_from_slice(&data);
                }
            }
            Some(Err(never)) => match never {},
        }
    }
    let head = (!held.is_empty()).then(|| held.freeze());
    Response::from_parts(parts, Prefixed { head, rest: body }.boxed())
}

/// How long the end of an event stream is waited for once its answer came
/// (it comes at once: rmcp closes the stream right after sending it).
const WAIT_FOR_END: Duration = Duration::from_millis(50);

/// What an event stream has brought so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Seen {
    /// Ids, retry times, empty data, comments.
    Priming,
    /// A notification or a request of the server's.
    Message,
    /// A JSON-RPC response: the last message of the stream.
    Answer,
}

impl Seen {
    fn of(data: &[u8]) -> Self {
        let mut seen = Self::Priming;
        for line in data.split(|byte| *byte == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let Some(value) = line.strip_prefix(b"data:") else {
                if !(line.is_empty()
                    || line.starts_with(b"id:")
                    || line.starts_with(b"retry:")
                    || line.starts_with(b":"))
                {
                    seen = seen.max(Self::Message);
                }
                continue;
            };
            let value = value.trim_ascii();
            if value.is_empty() {
                continue;
            }
            let answer = serde_json::from_slice::<serde_json::Value>(value).is_ok_and(|message| {
                message.get("id").is_some()
                    && (message.get("result").is_some() || message.get("error").is_some())
            });
            seen = seen.max(if answer { Self::Answer } else { Self::Message });
        }
        seen
    }
}

/// Polls `body` for a frame once.
async fn poll_once(body: &mut Body) -> Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>> {
    std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut *body).poll_frame(cx))).await
}

/// A body whose first frame was read already: `head`, then the rest.
struct Prefixed {
    head: Option<Bytes>,
    rest: Body,
}

impl hyper::body::Body for Prefixed {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        if let Some(head) = this.head.take() {
            return Poll::Ready(Some(Ok(hyper::body::Frame::data(head))));
        }
        Pin::new(&mut this.rest).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.head.is_none() && self.rest.is_end_stream()
    }
}

#[cfg(test)]
mod tests {
    use super::BearerToken;

    #[test]
    fn bearer_tokens_match_only_exactly() {
        let token = BearerToken::new("s3cret");
        assert!(token.accepts(Some(b"Bearer s3cret")));
        assert!(token.accepts(Some(b"bearer s3cret")));
        assert!(!token.accepts(Some(b"Bearer s3cre")));
        assert!(!token.accepts(Some(b"Bearer s3cret2")));
        assert!(!token.accepts(Some(b"Basic s3cret")));
        assert!(!token.accepts(Some(b"s3cret")));
        assert!(!token.accepts(None));
        assert!(!format!("{token:?}").contains("s3cret"));
    }
}
