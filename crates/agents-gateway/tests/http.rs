#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]
//! The gateway's HTTP endpoint on loopback, driven by raw HTTP/1.1 clients
//! (a keep-alive client as most agents are, slow and silent sockets as an
//! attacker's) and a real HTTP/2 client (hyper's): what goes over the wire
//! is what is checked. No upstream server is needed: the gateway serves an
//! empty plan, and `ping`/`tools/list` take the same path as a call.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use agents_gateway::{BearerToken, Gateway, HttpAccess, Serving};
use serde_json::{Value, json};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const TOKEN: &str = "http-test-t0ken";

/// A gateway serving nothing on 127.0.0.1, behind `token` when given, on
/// a runtime of its own (dropped with it).
fn gateway(token: Option<&str>) -> (tokio::runtime::Runtime, SocketAddr) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let access = match token {
        Some(token) => HttpAccess::Token(BearerToken::new(token)),
        None => HttpAccess::Open,
    };
    let addr = runtime.block_on(async {
        let gateway = Gateway::new(Serving::default(), agents_registry::FetchOptions::default());
        let server = gateway
            .bind_http("127.0.0.1:0".parse().unwrap(), access)
            .await
            .unwrap();
        let addr = server.local_addr();
        tokio::spawn(server.run(None));
        addr
    });
    (runtime, addr)
}

/// One HTTP answer as read off the wire.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC message of an event-stream or JSON answer.
    fn message(&self) -> Value {
        let text = self
            .body
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(str::trim)
            .find(|data| !data.is_empty())
            .unwrap_or(self.body.as_str());
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// A raw HTTP/1.1 client on one keep-alive connection.
struct Client {
    reader: BufReader<TcpStream>,
    addr: SocketAddr,
    extra: String,
    session: Option<String>,
}

impl Client {
    fn connect(addr: SocketAddr, token: Option<&str>) -> Self {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_nodelay(true).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        Self {
            reader: BufReader::new(stream),
            addr,
            extra: token
                .map(|t| format!("Authorization: Bearer {t}\r\n"))
                .unwrap_or_default(),
            session: None,
        }
    }

    fn request(&mut self, method: &str, body: &str) -> Answer {
        let session = self
            .session
            .as_ref()
            .map(|id| format!("Mcp-Session-Id: {id}\r\n"))
            .unwrap_or_default();
        let request = format!(
            "{method} /mcp HTTP/1.1\r\nHost: {}\r\n{}{session}Content-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
            self.addr,
            self.extra,
            body.len()
        );
        // One write, as a keep-alive client sends a request.
        self.reader.get_mut().write_all(request.as_bytes()).unwrap();
        read_answer(&mut self.reader).unwrap()
    }

    /// `initialize` then `notifications/initialized`: the session is open.
    fn open_session(&mut self) {
        let answer = self.request("POST", INITIALIZE);
        assert_eq!(answer.status, 200, "{answer:?}");
        self.session = answer.header("mcp-session-id").map(str::to_owned);
        assert!(self.session.is_some(), "{answer:?}");
        assert_eq!(self.request("POST", INITIALIZED).status, 202);
    }
}

/// Reads one HTTP/1.1 answer (a body of known length, or chunked).
fn read_answer(reader: &mut impl BufRead) -> std::io::Result<Answer> {
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("no status line: {line:?}")))?;
    let mut headers = Vec::new();
    loop {
        line.clear();
        reader.read_line(&mut line)?;
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    let mut answer = Answer {
        status,
        headers,
        body: String::new(),
    };
    if let Some(length) = answer.header("content-length") {
        let mut body = vec![0; length.parse().unwrap()];
        reader.read_exact(&mut body)?;
        answer.body = String::from_utf8(body).unwrap();
    } else if answer.header("transfer-encoding") == Some("chunked") {
        loop {
            line.clear();
            reader.read_line(&mut line)?;
            let size = usize::from_str_radix(line.trim(), 16).unwrap();
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk)?;
            if size == 0 {
                break;
            }
            answer
                .body
                .push_str(std::str::from_utf8(&chunk[..size]).unwrap());
        }
    }
    Ok(answer)
}

fn request_body(id: usize, method: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}}).to_string()
}

/// Every answer on a keep-alive connection comes at once: the gateway sets
/// `TCP_NODELAY` and writes an answer ready at once whole (before, each
/// answer went out in two writes and Nagle held the second until the
/// client's delayed ACK: 44 ms a call). Counted, not timed one by one: of
/// 200 requests, fewer than 20 may take over 20 ms (a loaded machine), where
/// the stall made every one of them take 40 ms or more.
#[test]
fn keep_alive_requests_are_answered_without_delay() {
    let (_runtime, addr) = gateway(Some(TOKEN));
    let mut client = Client::connect(addr, Some(TOKEN));
    client.open_session();
    let mut slow = 0;
    let mut whole = 0;
    for id in 2..202 {
        let method = if id % 2 == 0 { "ping" } else { "tools/list" };
        let started = Instant::now();
        let answer = client.request("POST", &request_body(id, method));
        if started.elapsed() > Duration::from_millis(20) {
            slow += 1;
        }
        assert_eq!(answer.status, 200, "{answer:?}");
        assert_eq!(answer.message()["id"], id, "{answer:?}");
        // Headers, priming event and answer in one body of known length.
        whole += usize::from(answer.header("content-length").is_some());
    }
    assert!(slow < 20, "{slow} of 200 requests took over 20 ms");
    assert!(whole >= 180, "only {whole} of 200 answers came whole");
}

/// A body that is not JSON is a JSON-RPC parse error (HTTP 400), JSON of
/// another shape an invalid request (rmcp answered both 415, as if the
/// content type were wrong); a wrong content type stays 415.
#[test]
fn an_unreadable_message_is_a_json_rpc_error() {
    let (_runtime, addr) = gateway(None);
    let mut client = Client::connect(addr, None);
    let garbage = client.request("POST", "{not json");
    assert_eq!(garbage.status, 400, "{garbage:?}");
    assert_eq!(garbage.header("content-type"), Some("application/json"));
    let error = garbage.message();
    assert_eq!(error["error"]["code"], -32700, "{error}");
    assert_eq!(error["id"], Value::Null);
    let shape = client.request("POST", r#"{"hello": "world"}"#);
    assert_eq!(shape.status, 400, "{shape:?}");
    assert_eq!(shape.message()["error"]["code"], -32600, "{shape:?}");
    // The connection is still usable.
    client.open_session();
    let mut raw = TcpStream::connect(addr).unwrap();
    write!(
        raw,
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: text/plain\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: 2\r\n\r\n{{}}"
    )
    .unwrap();
    let answer = read_answer(&mut BufReader::new(raw)).unwrap();
    assert_eq!(answer.status, 415);
}

/// `DELETE` of a session closes it with 204 (the SDKs expect 200 or 204;
/// rmcp said 202), and of an unknown or closed one answers 404.
#[test]
fn delete_answers_204_for_a_session_and_404_for_none() {
    let (_runtime, addr) = gateway(None);
    let mut client = Client::connect(addr, None);
    client.open_session();
    assert_eq!(client.request("DELETE", "").status, 204);
    assert_eq!(client.request("DELETE", "").status, 404);
    client.session = Some("no-such-session".into());
    assert_eq!(client.request("DELETE", "").status, 404);
}

/// The status of an authenticated `initialize` on a new connection to
/// `addr`, read within `within` (connecting included).
fn initialize_over(addr: SocketAddr, within: Duration) -> std::io::Result<u16> {
    let stream = TcpStream::connect_timeout(&addr, within)?;
    stream.set_read_timeout(Some(within))?;
    let mut reader = BufReader::new(stream);
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{INITIALIZE}",
        INITIALIZE.len()
    );
    reader.get_mut().write_all(request.as_bytes())?;
    Ok(read_answer(&mut reader)?.status)
}

/// Raises this process's soft limit of open files to its hard limit: the
/// tests below hold hundreds of sockets.
fn raise_fd_limit() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    if soft < hard {
        setrlimit(Resource::RLIMIT_NOFILE, hard, hard).unwrap();
    }
}

/// Whether the gateway closed `stream` (reading sees the end or an error)
/// within `within`.
fn closed_within(stream: &TcpStream, within: Duration) -> bool {
    stream.set_read_timeout(Some(within)).unwrap();
    let mut sink = Vec::new();
    match (&*stream).read_to_end(&mut sink) {
        Ok(_) => true,
        Err(err) => !matches!(
            err.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
    }
}

/// 300 authenticated clients that send their headers and then a byte of
/// their body every second (more than the 256 connections served at once)
/// are dropped after the 10 s grace, and a legitimate `initialize` is served
/// meanwhile, within 30 s (before, the slow bodies held every connection for
/// as long as they went on, and it was never served).
#[test]
fn slow_bodies_are_dropped_and_initialize_is_served() {
    raise_fd_limit();
    let (_runtime, addr) = gateway(Some(TOKEN));
    let started = Instant::now();
    let mut slow: Vec<TcpStream> = (0..300)
        .map(|_| {
            let mut stream = TcpStream::connect(addr).unwrap();
            write!(
                stream,
                "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\n\
                 Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
                 Content-Length: 1000\r\n\r\n{{"
            )
            .unwrap();
            stream
        })
        .collect();
    // The senders trickle on (a byte a second, for up to 40 s) while the
    // legitimate client waits for its answer.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let trickle = {
        let stop = stop.clone();
        let streams: Vec<TcpStream> = slow.iter().map(|s| s.try_clone().unwrap()).collect();
        std::thread::spawn(move || {
            for _ in 0..40 {
                if stop.load(std::sync::atomic::Ordering::Relaxed) {
                    break;
                }
                for mut stream in &streams {
                    let _ = stream.write_all(b" ");
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        })
    };
    let served = std::thread::spawn(move || {
        let status = initialize_over(addr, Duration::from_secs(30)).ok();
        (status, started.elapsed())
    });
    let (status, after) = served.join().unwrap();
    // Every slow sender is dropped (answered 408 and closed) by 40 s.
    let dropped = slow
        .iter_mut()
        .filter(|stream| {
            let left = Duration::from_secs(40).saturating_sub(started.elapsed());
            closed_within(stream, left.max(Duration::from_millis(1)))
        })
        .count();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    trickle.join().unwrap();
    assert_eq!(status, Some(200), "initialize after {after:?}");
    assert!(after < Duration::from_secs(30), "served after {after:?}");
    assert_eq!(dropped, 300, "slow senders still open after 40 s");
}

/// A request body over HTTP/2 that stops coming is refused (408) after the
/// grace period too, and the connection serves other streams meanwhile.
#[test]
fn a_slow_body_over_http2_is_refused() {
    let (runtime, addr) = gateway(Some(TOKEN));
    runtime.block_on(async {
        let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (mut sender, connection) = hyper::client::conn::http2::handshake(
            hyper_util::rt::TokioExecutor::new(),
            hyper_util::rt::TokioIo::new(stream),
        )
        .await
        .unwrap();
        tokio::spawn(connection);
        let request = |body: Trickle| {
            http::Request::post(format!("http://{addr}/mcp"))
                .header("authorization", format!("Bearer {TOKEN}"))
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .body(body)
                .unwrap()
        };
        // A body that sends one byte, then nothing (its sender kept).
        let (slow_tx, slow_rx) = tokio::sync::mpsc::channel(1);
        slow_tx.send(bytes::Bytes::from_static(b"{")).await.unwrap();
        let started = Instant::now();
        let slow = sender.send_request(request(Trickle(slow_rx)));
        // Meanwhile a whole request on the same connection is answered.
        let (whole_tx, whole_rx) = tokio::sync::mpsc::channel(1);
        whole_tx
            .send(bytes::Bytes::from_static(INITIALIZE.as_bytes()))
            .await
            .unwrap();
        drop(whole_tx);
        let mut other = sender.clone();
        let whole = request(Trickle(whole_rx));
        let whole = tokio::spawn(async move { other.send_request(whole).await });
        let slow = tokio::time::timeout(Duration::from_secs(30), slow)
            .await
            .expect("the slow body was never refused")
            .unwrap();
        assert_eq!(slow.status(), 408);
        assert!(started.elapsed() >= Duration::from_secs(9));
        let whole = whole.await.unwrap().unwrap();
        assert_eq!(whole.status(), 200);
        drop(slow_tx);
    });
}

/// A request body fed from a channel, frame by frame.
struct Trickle(tokio::sync::mpsc::Receiver<bytes::Bytes>);

impl hyper::body::Body for Trickle {
    type Data = bytes::Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<bytes::Bytes>, Self::Error>>> {
        self.get_mut()
            .0
            .poll_recv(cx)
            .map(|data| data.map(|data| Ok(hyper::body::Frame::data(data))))
    }
}

/// 700 silent sockets (no byte sent, each opened again as soon as the
/// gateway drops it after 10 s) take only connections of the cheap pool:
/// an authenticated client opening a connection every 250 ms is served
/// within 1 s nearly every time. Before, the 256 connections were taken
/// before a byte was read, and such a client waited 8–10 s.
#[test]
fn silent_sockets_do_not_keep_authenticated_clients_waiting() {
    raise_fd_limit();
    let (_runtime, addr) = gateway(Some(TOKEN));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let cycling = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut silent: Vec<TcpStream> = Vec::new();
            let mut opened = 0usize;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                // Whatever the gateway closed is opened again.
                silent.retain(|stream| {
                    stream.set_nonblocking(true).unwrap();
                    let mut byte = [0u8; 1];
                    matches!((&*stream).read(&mut byte), Err(ref e) if e.kind() == std::io::ErrorKind::WouldBlock)
                });
                while silent.len() < 700 {
                    match TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
                        Ok(stream) => {
                            silent.push(stream);
                            opened += 1;
                        }
                        Err(_) => break,
                    }
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            opened
        })
    };
    // Let the silent sockets take their places first.
    std::thread::sleep(Duration::from_secs(1));
    let attempts = 48;
    let mut served = 0;
    for _ in 0..attempts {
        let started = Instant::now();
        if initialize_over(addr, Duration::from_secs(1)).is_ok_and(|status| status == 200)
            && started.elapsed() < Duration::from_secs(1)
        {
            served += 1;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let opened = cycling.join().unwrap();
    // The silent sockets did cycle: dropped after 10 s and opened again.
    assert!(opened > 700, "only {opened} silent sockets were opened");
    assert!(
        served >= attempts - 4,
        "{served} of {attempts} requests were served within 1 s"
    );
}
