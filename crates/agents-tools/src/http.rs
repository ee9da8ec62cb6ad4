//! `http_get`: reqwest over rustls (ring, the provider the rest of the tree
//! uses), no proxy, redirects followed here one hop at a time so that each
//! hop's scheme and addresses are checked as the first one's are.
//!
//! Unless [`Limits::allow_private_network`] is set, every address a name
//! resolves to must be public (one that is not refuses the call, so a name
//! that answers both cannot be used to reach inside), and so must an
//! address written in the URL (which no resolver sees).

use std::error::Error as _;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use tokio_util::sync::CancellationToken;
use url::{Host, Url};

use crate::error::{Rule, ToolError, shown};
use crate::output::{Collector, NOTE_ROOM};
use crate::spec::HttpGetArgs;
use crate::{Limits, ToolOutput};

/// Which addresses a request may reach.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Reach {
    /// Public addresses only.
    Public,
    /// Any address (`allow_private_network`).
    Any,
    /// This address only (tests: a local server is reachable, every other
    /// address refused, public ones too).
    #[cfg(test)]
    Only(IpAddr),
}

impl Reach {
    fn of(limits: &Limits) -> Self {
        if limits.allow_private_network {
            Reach::Any
        } else {
            Reach::Public
        }
    }

    /// Why `ip` may not be reached, or `None` when it may.
    fn refuses(self, ip: IpAddr) -> Option<&'static str> {
        match self {
            Reach::Any => None,
            Reach::Public => non_public(ip),
            #[cfg(test)]
            Reach::Only(only) => (ip != only).then_some("not the address this test allows"),
        }
    }
}

/// The kind of address `ip` is when it is not a public one.
pub(crate) fn non_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(ip) => non_public_v4(ip),
        IpAddr::V6(ip) => non_public_v6(ip),
    }
}

fn non_public_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    match (a, b, c) {
        (0, _, _) => Some("\"this network\" (0.0.0.0/8)"),
        (127, _, _) => Some("loopback"),
        (10, _, _) | (192, 168, _) => Some("private"),
        (172, 16..=31, _) => Some("private"),
        (169, 254, _) => Some("link-local"),
        (100, 64..=127, _) => Some("shared (carrier-grade NAT)"),
        (192, 0, 0) => Some("reserved for protocol assignments"),
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => Some("documentation"),
        (198, 18..=19, _) => Some("benchmarking"),
        (224..=239, _, _) => Some("multicast"),
        (240..=255, _, _) => Some("reserved or broadcast"),
        _ => None,
    }
}

fn non_public_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let segments = ip.segments();
    let embedded = |high: u16, low: u16| {
        let [a, b] = high.to_be_bytes();
        let [c, d] = low.to_be_bytes();
        non_public_v4(Ipv4Addr::new(a, b, c, d))
    };
    match segments {
        [0, 0, 0, 0, 0, 0, 0, 0] => Some("unspecified"),
        [0, 0, 0, 0, 0, 0, 0, 1] => Some("loopback"),
        // IPv4-mapped and IPv4-compatible: the IPv4 address decides.
        [0, 0, 0, 0, 0, 0xffff, high, low] | [0, 0, 0, 0, 0, 0, high, low] => embedded(high, low),
        // NAT64 (the well-known prefix): the IPv4 address decides.
        [0x64, 0xff9b, 0, 0, 0, 0, high, low] => embedded(high, low),
        [0x64, 0xff9b, 1, ..] => Some("local-use NAT64"),
        [0x100, 0, 0, 0, ..] => Some("discard-only"),
        [0x2001, 0xdb8, ..] => Some("documentation"),
        // 6to4: the IPv4 address of the relay decides.
        [0x2002, high, low, ..] => embedded(high, low),
        [first, ..] if first & 0xfe00 == 0xfc00 => Some("unique local (private)"),
        [first, ..] if first & 0xffc0 == 0xfe80 => Some("link-local"),
        [first, ..] if first & 0xffc0 == 0xfec0 => Some("site-local"),
        [first, ..] if first & 0xff00 == 0xff00 => Some("multicast"),
        _ => None,
    }
}

/// A host refused for one of its addresses; the resolver's error, found
/// again in the request's error chain.
#[derive(Debug)]
struct Refusal {
    host: String,
    ip: IpAddr,
    kind: &'static str,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` resolves to {} ({}), which is not a public address; an entry's `allow_private_network: true` allows it",
            shown(&self.host),
            self.ip,
            self.kind
        )
    }
}

impl std::error::Error for Refusal {}

/// The addresses `host` resolved to, refused whole when one may not be
/// reached.
fn check_addresses(host: &str, addrs: &[SocketAddr], reach: Reach) -> Result<(), Refusal> {
    for addr in addrs {
        if let Some(kind) = reach.refuses(addr.ip()) {
            return Err(Refusal {
                host: host.to_owned(),
                ip: addr.ip(),
                kind,
            });
        }
    }
    Ok(())
}

/// The system resolver, then [`check_addresses`].
#[derive(Debug)]
struct Guard(Reach);

impl Resolve for Guard {
    fn resolve(&self, name: Name) -> Resolving {
        let reach = self.0;
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            check_addresses(&host, &addrs, reach)?;
            let addrs: Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

/// The client `http_get` sends with, for `limits`.
pub(crate) fn client(limits: &Limits) -> Result<reqwest::Client, String> {
    build(Reach::of(limits), limits)
}

fn build(reach: Reach, limits: &Limits) -> Result<reqwest::Client, String> {
    // Installing fails only when a provider already is; any one serves.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .dns_resolver(Arc::new(Guard(reach)))
        .connect_timeout(limits.http_timeout)
        .user_agent(concat!("agents-tools/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|err| format!("cannot set up the HTTP client: {err}"))
}

pub(crate) async fn get(
    client: &reqwest::Client,
    limits: &Limits,
    args: HttpGetArgs,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    fetch(client, Reach::of(limits), limits, &args.url, cancel).await
}

async fn fetch(
    client: &reqwest::Client,
    reach: Reach,
    limits: &Limits,
    url: &str,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let work = fetch_inner(client, reach, limits, url);
    tokio::select! {
        biased;
        result = work => result,
        () = cancel.cancelled() => Err(ToolError::Cancelled),
        () = tokio::time::sleep(limits.http_timeout) => Err(ToolError::TimedOut(limits.http_timeout)),
    }
}

async fn fetch_inner(
    client: &reqwest::Client,
    reach: Reach,
    limits: &Limits,
    raw: &str,
) -> Result<ToolOutput, ToolError> {
    let mut url = Url::parse(raw)
        .map_err(|err| ToolError::Failed(format!("`{}` is not a URL: {err}", shown(raw))))?;
    let mut hops = 0;
    let mut response = loop {
        check_url(&url, reach)?;
        let response = client
            .get(url.clone())
            .send()
            .await
            .map_err(|err| request_error(err, &url))?;
        let location = response
            .headers()
            .get(reqwest::header::LOCATION)
            .filter(|_| response.status().is_redirection());
        let Some(location) = location else {
            break response;
        };
        hops += 1;
        if hops > limits.max_redirects {
            return Err(ToolError::refused(
                Rule::RedirectLimit,
                format!(
                    "more than {} redirects (the last from `{}`)",
                    limits.max_redirects,
                    shown_url(&url)
                ),
            ));
        }
        let next = location
            .to_str()
            .ok()
            .and_then(|location| url.join(location).ok())
            .ok_or_else(|| {
                ToolError::Failed(format!(
                    "`{}` redirects to a location that is not a URL",
                    shown_url(&url)
                ))
            })?;
        url = next;
    };
    let status = response.status();
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let length = response.content_length();
    let cap = limits.max_output_bytes.saturating_sub(NOTE_ROOM * 2);
    let mut body = Vec::new();
    let mut cut = false;
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|err| request_error(err, &url))?
    {
        let room = cap - body.len();
        if chunk.len() > room {
            body.extend_from_slice(chunk.get(..room).unwrap_or_default());
            cut = true;
            break;
        }
        body.extend_from_slice(&chunk);
    }
    drop(response);
    let mut head = format!(
        "HTTP {} {}\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or("")
    );
    if let Some(kind) = &content_type {
        head.push_str(&format!("content-type: {}\n", shown(kind)));
    }
    if hops > 0 {
        head.push_str(&format!("url: {}\n", shown_url(&url)));
    }
    head.push('\n');
    let mut out = Collector::new(limits.max_output_bytes);
    out.partial(&head);
    let textual = content_type.as_deref().is_none_or(is_text) && !body.contains(&0);
    if textual {
        out.partial(&String::from_utf8_lossy(&body));
    } else {
        out.partial(&format!(
            "[a binary body ({}), {} bytes{}: not shown]\n",
            content_type.as_deref().map_or("no type".into(), shown),
            body.len(),
            if cut { " read before the limit" } else { "" }
        ));
    }
    let (mut text, _) = out.finish(String::new);
    if cut && textual {
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!(
            "[cut: the body was read to {} bytes, the output limit{}]\n",
            body.len(),
            length.map_or(String::new(), |length| format!(
                "; it is {length} bytes in all"
            ))
        ));
    }
    Ok(ToolOutput {
        text,
        is_error: status.is_client_error() || status.is_server_error(),
        truncated: cut,
        exit_code: None,
        structured: None,
    })
}

/// The scheme and, for an address written in the URL, the address.
fn check_url(url: &Url, reach: Reach) -> Result<(), ToolError> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ToolError::refused(
            Rule::HttpScheme,
            format!(
                "`{}` is a `{}` URL; `http_get` fetches `http` and `https` only",
                shown_url(url),
                shown(url.scheme())
            ),
        ));
    }
    let ip = match url.host() {
        Some(Host::Ipv4(ip)) => IpAddr::V4(ip),
        Some(Host::Ipv6(ip)) => IpAddr::V6(ip),
        Some(Host::Domain(_)) => return Ok(()),
        None => {
            return Err(ToolError::Failed(format!(
                "`{}` has no host",
                shown_url(url)
            )));
        }
    };
    match reach.refuses(ip) {
        Some(kind) => Err(ToolError::refused(
            Rule::PrivateNetwork,
            format!(
                "`{}` is at {ip} ({kind}), which is not a public address; an entry's `allow_private_network: true` allows it",
                shown_url(url)
            ),
        )),
        None => Ok(()),
    }
}

fn request_error(err: reqwest::Error, url: &Url) -> ToolError {
    let mut source = err.source();
    while let Some(cause) = source {
        if let Some(refusal) = cause.downcast_ref::<Refusal>() {
            return ToolError::refused(Rule::PrivateNetwork, refusal.to_string());
        }
        source = cause.source();
    }
    if err.is_timeout() {
        return ToolError::Failed(format!("`{}` did not answer in time", shown_url(url)));
    }
    let err = err.without_url();
    let mut message = err.to_string();
    let mut cause = err.source();
    while let Some(next) = cause {
        message.push_str(": ");
        message.push_str(&next.to_string());
        cause = next.source();
    }
    ToolError::Failed(format!(
        "cannot get `{}`: {}",
        shown_url(url),
        agents_core::text::bounded_message(&message)
    ))
}

/// A URL as messages show it: no user name, password or query (where
/// tokens ride).
fn shown_url(url: &Url) -> String {
    let mut url = url.clone();
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.set_query(None);
    url.set_fragment(None);
    shown(url.as_str())
}

/// Whether a body of `content_type` is shown as text.
fn is_text(content_type: &str) -> bool {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    essence.starts_with("text/")
        || essence.ends_with("+json")
        || essence.ends_with("+xml")
        || matches!(
            essence.as_str(),
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/ecmascript"
                | "application/x-www-form-urlencoded"
                | "application/yaml"
                | "application/x-yaml"
                | "application/toml"
                | "application/x-ndjson"
                | "application/jsonl"
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;

    /// A local HTTP/1.1 server on a thread: `/hello`, `/missing` (404),
    /// `/big` (1 MiB), `/binary`, `/hops/N` (N redirects, then `/hello`),
    /// `/to?URL` (a redirect to URL). One connection, one answer.
    fn server() -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let here = base.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request = String::new();
                reader.read_line(&mut request).unwrap();
                let mut line = String::new();
                while reader.read_line(&mut line).unwrap() > 2 {
                    line.clear();
                }
                let target = request.split(' ').nth(1).unwrap_or("/").to_owned();
                let (status, headers, body): (&str, String, Vec<u8>) = match target.as_str() {
                    "/hello" => (
                        "200 OK",
                        "content-type: text/plain\r\n".into(),
                        b"hello\n".to_vec(),
                    ),
                    "/missing" => (
                        "404 Not Found",
                        "content-type: text/plain\r\n".into(),
                        b"no\n".to_vec(),
                    ),
                    "/big" => (
                        "200 OK",
                        "content-type: text/plain\r\n".into(),
                        vec![b'x'; 1 << 20],
                    ),
                    "/binary" => (
                        "200 OK",
                        "content-type: image/png\r\n".into(),
                        vec![0x89, b'P', 0, 1],
                    ),
                    hops if hops.starts_with("/hops/") => {
                        let left: usize = hops["/hops/".len()..].parse().unwrap();
                        let next = if left == 0 {
                            "/hello".to_owned()
                        } else {
                            format!("/hops/{}", left - 1)
                        };
                        ("302 Found", format!("location: {next}\r\n"), Vec::new())
                    }
                    to if to.starts_with("/to?") => (
                        "302 Found",
                        format!("location: {}\r\n", &to["/to?".len()..]),
                        Vec::new(),
                    ),
                    _ => ("400 Bad Request", String::new(), Vec::new()),
                };
                let head = format!(
                    "HTTP/1.1 {status}\r\n{headers}content-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(head.as_bytes());
                let _ = stream.write_all(&body);
            }
        });
        here
    }

    fn limits() -> Limits {
        Limits {
            allow_private_network: true,
            ..Limits::default()
        }
    }

    async fn get(reach: Reach, limits: &Limits, url: &str) -> Result<ToolOutput, ToolError> {
        let client = build(reach, limits).unwrap();
        fetch(&client, reach, limits, url, &CancellationToken::new()).await
    }

    #[tokio::test]
    async fn fetches_text_and_reports_error_statuses() {
        let base = server();
        let output = get(Reach::Any, &limits(), &format!("{base}/hello"))
            .await
            .unwrap();
        assert_eq!(
            output.text,
            "HTTP 200 OK\ncontent-type: text/plain\n\nhello\n"
        );
        assert!(!output.is_error && !output.truncated);
        let output = get(Reach::Any, &limits(), &format!("{base}/missing"))
            .await
            .unwrap();
        assert_eq!(
            output.text,
            "HTTP 404 Not Found\ncontent-type: text/plain\n\nno\n"
        );
        assert!(output.is_error);
        let output = get(Reach::Any, &limits(), &format!("{base}/binary"))
            .await
            .unwrap();
        assert_eq!(
            output.text,
            "HTTP 200 OK\ncontent-type: image/png\n\n[a binary body (image/png), 4 bytes: not shown]\n"
        );
    }

    #[tokio::test]
    async fn the_body_is_read_to_the_limit_only() {
        let base = server();
        let mut limits = limits();
        limits.max_output_bytes = 8192;
        let output = get(Reach::Any, &limits, &format!("{base}/big"))
            .await
            .unwrap();
        assert!(output.truncated);
        assert!(output.text.len() <= 8192, "{}", output.text.len());
        let note = output.text.lines().last().unwrap();
        assert_eq!(
            note,
            "[cut: the body was read to 7680 bytes, the output limit; it is 1048576 bytes in all]"
        );
    }

    #[tokio::test]
    async fn redirects_are_followed_to_the_limit() {
        let base = server();
        // Five redirects: `/hops/4` to `/hops/0`, then `/hello`.
        let output = get(Reach::Any, &limits(), &format!("{base}/hops/4"))
            .await
            .unwrap();
        assert_eq!(
            output.text,
            format!("HTTP 200 OK\ncontent-type: text/plain\nurl: {base}/hello\n\nhello\n")
        );
        let err = get(Reach::Any, &limits(), &format!("{base}/hops/5"))
            .await
            .unwrap_err();
        assert_eq!(err.rule(), Some(Rule::RedirectLimit));
        assert_eq!(
            err.to_string(),
            format!(
                "refused by rule `redirect-limit`: more than 5 redirects (the last from `{base}/hops/0`)"
            )
        );
    }

    #[tokio::test]
    async fn every_hop_is_checked_as_the_first() {
        let base = server();
        let local = IpAddr::V4(Ipv4Addr::LOCALHOST);
        // The first hop is allowed; the one it redirects to is not.
        let port = base.rsplit(':').next().unwrap();
        let url = format!("{base}/to?http://127.0.0.2:{port}/hello");
        let err = get(Reach::Only(local), &limits(), &url).await.unwrap_err();
        assert_eq!(err.rule(), Some(Rule::PrivateNetwork), "{err}");
        // A name is checked where it resolves, at any hop.
        let url = format!("{base}/to?http://localhost.localdomain.invalid:{port}/hello");
        let err = get(Reach::Only(local), &limits(), &url).await.unwrap_err();
        assert!(
            err.to_string()
                .starts_with("cannot get `http://localhost.localdomain.invalid"),
            "{err}"
        );
        let url = format!("{base}/to?file:///etc/passwd");
        let err = get(Reach::Only(local), &limits(), &url).await.unwrap_err();
        assert_eq!(err.rule(), Some(Rule::HttpScheme), "{err}");
        // The same server is reached while it is the one allowed.
        let url = format!("{base}/to?http://127.0.0.1:{port}/hello");
        assert!(get(Reach::Only(local), &limits(), &url).await.is_ok());
        // And by default, not at all.
        let err = get(Reach::Public, &Limits::default(), &format!("{base}/hello"))
            .await
            .unwrap_err();
        assert_eq!(err.rule(), Some(Rule::PrivateNetwork));
    }

    #[test]
    fn every_resolved_address_must_be_allowed() {
        let public: SocketAddr = "93.184.215.14:0".parse().unwrap();
        let private: SocketAddr = "10.0.0.1:0".parse().unwrap();
        assert!(check_addresses("example.com", &[public], Reach::Public).is_ok());
        let refusal =
            check_addresses("rebind.example", &[public, private], Reach::Public).unwrap_err();
        assert_eq!(refusal.ip, private.ip());
        assert!(check_addresses("rebind.example", &[public, private], Reach::Any).is_ok());
    }

    #[test]
    fn address_kinds() {
        for (ip, kind) in [
            ("127.0.0.1", Some("loopback")),
            ("10.2.3.4", Some("private")),
            ("172.31.0.1", Some("private")),
            ("192.168.1.1", Some("private")),
            ("169.254.169.254", Some("link-local")),
            ("100.64.0.1", Some("shared (carrier-grade NAT)")),
            ("0.0.0.0", Some("\"this network\" (0.0.0.0/8)")),
            ("255.255.255.255", Some("reserved or broadcast")),
            ("224.0.0.1", Some("multicast")),
            ("::1", Some("loopback")),
            ("::", Some("unspecified")),
            ("::ffff:10.0.0.1", Some("private")),
            ("::ffff:169.254.1.1", Some("link-local")),
            ("64:ff9b::7f00:1", Some("loopback")),
            ("2002:c0a8:0101::1", Some("private")),
            ("fd12::1", Some("unique local (private)")),
            ("fe80::1", Some("link-local")),
            ("ff02::1", Some("multicast")),
            ("2001:db8::1", Some("documentation")),
            ("8.8.8.8", None),
            ("172.32.0.1", None),
            ("::ffff:8.8.8.8", None),
            ("2606:4700::1111", None),
        ] {
            assert_eq!(non_public(ip.parse().unwrap()), kind, "{ip}");
        }
    }
}
