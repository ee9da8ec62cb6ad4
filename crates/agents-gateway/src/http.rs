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

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use agents_registry::Store;

use crate::{Follow, Gateway, GatewayError};

/// The endpoint path.
pub const ENDPOINT: &str = "/mcp";

/// Connections served at once (see `accept`).
const MAX_CONNECTIONS: usize = 256;

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
const HEADER_READ_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

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
    pub async fn run<S: Store>(self, follow: Option<Follow<'_, S>>) {
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
        let sessions = Arc::new(LocalSessionManager::default());
        let mcp: StreamableHttpService<Gateway, LocalSessionManager> =
            StreamableHttpService::new(move || Ok(gateway.clone()), sessions.clone(), config);
        // At most this many connections at once: a permit is taken before
        // `accept`, so connections beyond it wait in the kernel's backlog
        // instead of using up the process's file descriptors (which the
        // servers it starts need too).
        let open = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
        loop {
            // The semaphore is never closed.
            let Ok(permit) = open.clone().acquire_owned().await else {
                return;
            };
            let (stream, _peer) = match listener.accept().await {
                Ok(accepted) => accepted,
                Err(err) => {
                    // Out of file descriptors and the like: say so, keep serving.
                    tracing::warn!(error = %err, "mcp serve: accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    continue;
                }
            };
            let mcp = mcp.clone();
            let token = token.clone();
            let sessions = sessions.clone();
            let open = open.clone();
            tokio::spawn(async move {
                // A connection that sends nothing is dropped: the header
                // timeout below starts only once hyper has seen enough to
                // tell HTTP/1 from HTTP/2, so 256 silent sockets held every
                // permit.
                let mut first = [0u8; 1];
                if !matches!(
                    tokio::time::timeout(HEADER_READ_TIMEOUT, stream.peek(&mut first)).await,
                    Ok(Ok(1..))
                ) {
                    drop(permit);
                    return;
                }
                let service = hyper::service::service_fn(move |request| {
                    let mcp = mcp.clone();
                    let token = token.clone();
                    let sessions = sessions.clone();
                    let free = open.available_permits();
                    async move {
                        let limits = Limits {
                            sessions: &sessions,
                            free_connections: free,
                        };
                        Ok::<_, Infallible>(route(&mcp, limits, token.as_ref(), request).await)
                    }
                });
                let io = hyper_util::rt::TokioIo::new(stream);
                let mut builder = hyper_util::server::conn::auto::Builder::new(
                    hyper_util::rt::TokioExecutor::new(),
                );
                // A client that never finishes its headers (before the token
                // is even checked) is dropped instead of holding a connection.
                builder
                    .http1()
                    .timer(hyper_util::rt::TokioTimer::new())
                    .header_read_timeout(HEADER_READ_TIMEOUT);
                // HTTP/2 has no header timeout: a peer that stops answering
                // pings is dropped instead.
                builder
                    .http2()
                    .timer(hyper_util::rt::TokioTimer::new())
                    .keep_alive_interval(Some(HEADER_READ_TIMEOUT))
                    .keep_alive_timeout(HEADER_READ_TIMEOUT);
                let _ = builder.serve_connection(io, service).await;
                drop(permit);
            });
        }
    }
}

/// What `route` refuses beyond: the sessions kept and the connections
/// free when the request came.
struct Limits<'a> {
    sessions: &'a LocalSessionManager,
    free_connections: usize,
}

async fn route(
    mcp: &StreamableHttpService<Gateway, LocalSessionManager>,
    limits: Limits<'_>,
    token: Option<&BearerToken>,
    request: Request<hyper::body::Incoming>,
) -> Response<Body> {
    if let Some(token) = token {
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
    if request.method() == hyper::Method::GET && limits.free_connections < KEPT_FOR_REQUESTS {
        return plain(
            StatusCode::SERVICE_UNAVAILABLE,
            "too many event streams are open: try again later\n",
        );
    }
    // A POST without a session id may open a session.
    if request.method() == hyper::Method::POST
        && !request.headers().contains_key("mcp-session-id")
        && limits.sessions.sessions.read().await.len() >= MAX_SESSIONS
    {
        return plain(
            StatusCode::SERVICE_UNAVAILABLE,
            "too many sessions: close one (DELETE with its Mcp-Session-Id) or wait for an idle one to expire\n",
        );
    }
    mcp.handle(request).await
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
