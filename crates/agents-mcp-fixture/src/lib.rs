//! A small MCP server whose behaviour is chosen on the command line, used by the
//! `agents-mcp` tests to exercise the client against well-behaved and broken
//! servers over stdio and streamable HTTP (loopback only).
//!
//! ```text
//! agents-mcp-fixture [--http 127.0.0.1:PORT] [--pid-file PATH] [--grandchild]
//!                    [--echo-env VAR] [--echo-header NAME] MODE [ARGS...]
//! ```
//!
//! Modes:
//! - `normal`: a few tools with real input/output schemas and annotations;
//! - `paginated N PAGE_SIZE`: `N` tools served `PAGE_SIZE` at a time with cursors;
//! - `slow SECONDS`: like `normal`, but `tools/list` sleeps first;
//! - `crash`: reads the `initialize` request and exits with status 3;
//! - `crash-after-init`: answers `initialize`, exits with status 4 on `tools/list`;
//! - `garbage`: answers every line with lines that are not JSON-RPC;
//! - `huge N`: `N` tools in a single page;
//! - `loop-cursor`: every page returns the same `nextCursor`;
//! - `endless`: every page returns a new `nextCursor`;
//! - `bad-schema`: one good tool and one whose input schema is not a JSON Schema;
//! - `list-error`: answers `tools/list` with a JSON-RPC error;
//! - `no-tools`: does not offer the `tools` capability at all.
//! - `any-of-chain N`: the tools `chain`, whose input schema chains `anyOf` through `N`
//!   `$defs` (each definition two references to the one before: 2^N subschemas once
//!   expanded), `tree`, a recursive schema, and `fine`.
//!
//! Modes that speak JSON-RPC by hand (over stdio, or with `--http` as one server-sent
//! event per POST, or with `json` as a plain JSON body), for what rmcp's server would
//! never send:
//! - `malformed-tools DEPTH [json]`: lists, in one page, the good tools `first` and
//!   `last` around three bad ones: `deep`, whose input schema nests `DEPTH` objects,
//!   `badtype`, whose `inputSchema` is a string, and one whose `name` is a number;
//! - `bad-utf8 [json]`: lists `bad`, whose description holds the byte 0xFF (not
//!   UTF-8), and `ok`; every `tools/call` is answered with the text `caf` and the
//!   byte 0xE9 (Latin-1 for `é`);
//! - `tasks [json]`: lists `plain` (`execution.taskSupport: forbidden`) and `research`
//!   (`required`, MCP 2025-11-25), and refuses a call of `research` without a task as
//!   such a server does;
//! - `die-mid-call`: lists `work`; a `tools/call` is answered (over HTTP) with the
//!   start of an event stream, an event with an id, then the whole server exits, as
//!   one killed mid-call would (over stdio it just exits);
//! - `garbage-on-call`: lists `work`; a `tools/call` is answered (over stdio) with
//!   twenty lines that are not JSON-RPC;
//! - `hang-on-call`: speaks MCP 2025-06-18 whatever the client offers; lists `work`
//!   and `hang`; a call of `work` is answered, one of `hang` never is; every line
//!   read is repeated on stderr (stdio only), so a test can see what the client
//!   sent (a `notifications/cancelled`, the ids).
//!
//! Options:
//! - `--http ADDR` serves streamable HTTP on a loopback address (port 0 picks a free
//!   port) and prints `http://ADDR/mcp` on stdout once it is listening; it exits when
//!   its stdin closes, so a test that dies does not leave it running;
//! - `--pid-file PATH` writes this process's pid, and with `--grandchild` the pid of
//!   a `sleep 600` it starts and never waits for, one per line;
//! - `--setsid-grandchild`: like `--grandchild`, but the `sleep 600` calls `setsid`
//!   first, so it leaves the server's process group and session;
//! - `--env-file PATH` writes this process's whole environment, `NAME=VALUE` per
//!   line, sorted, before serving;
//! - `--echo-env VAR` adds a tool `echo_env` whose description is `$VAR`;
//! - `--echo-header NAME` adds a tool `echo_header` whose description is the value
//!   of that HTTP request header.

use std::io::Write;
use std::net::SocketAddr;
use std::process::{ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::{
    ErrorData, Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

/// How the server behaves.
#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    /// A few well-formed tools.
    Normal,
    /// `total` tools, `page_size` per page.
    Paginated {
        /// Number of tools.
        total: usize,
        /// Tools per page.
        page_size: usize,
    },
    /// `tools/list` sleeps this long before answering.
    Slow(Duration),
    /// Exits before answering `initialize`.
    Crash,
    /// Exits on `tools/list`.
    CrashAfterInit,
    /// Writes lines that are not JSON-RPC.
    Garbage,
    /// This many tools in one page.
    Huge(usize),
    /// JSON-RPC by hand (see [`Raw`]); `true` for plain JSON bodies over HTTP.
    Raw(Raw, bool),
    /// A tool whose schema chains `anyOf` through this many `$defs`.
    AnyOfChain(usize),
    /// The same `nextCursor` on every page.
    LoopCursor,
    /// A fresh `nextCursor` on every page, forever.
    Endless,
    /// A tool whose input schema is not a JSON Schema.
    BadSchema,
    /// `tools/list` fails, its message padded with this many bytes (a
    /// server's error text is someone else's, of any length).
    ListError(usize),
    /// No `tools` capability.
    NoTools,
}

/// What a hand-written server sends (see the modes in the crate documentation).
#[derive(Debug, Clone, PartialEq)]
pub enum Raw {
    /// A `tools/list` page with malformed tools (one nested this deep)
    /// between good ones.
    MalformedTools(usize),
    /// A tool and a call result that are not valid UTF-8.
    BadUtf8,
    /// Tools with `execution`, one requiring task augmentation.
    Tasks,
    /// Exits in the middle of answering a call.
    DieMidCall,
    /// Answers a call with lines that are not JSON-RPC.
    GarbageOnCall,
    /// Never answers a call of `hang`; repeats what it reads on stderr.
    HangOnCall,
}

/// Parsed command line.
#[derive(Debug, Clone, PartialEq)]
pub struct Args {
    /// Behaviour.
    pub mode: Mode,
    /// Serve streamable HTTP here instead of stdio.
    pub http: Option<SocketAddr>,
    /// Where to write pids.
    pub pid_file: Option<String>,
    /// Start a `sleep 600` grandchild.
    pub grandchild: bool,
    /// Start a `setsid sleep 600` grandchild (its own session).
    pub setsid_grandchild: bool,
    /// Where to write this process's environment.
    pub env_file: Option<String>,
    /// Environment variable echoed by the `echo_env` tool.
    pub echo_env: Option<String>,
    /// HTTP header echoed by the `echo_header` tool.
    pub echo_header: Option<String>,
}

const USAGE: &str = "usage: agents-mcp-fixture [--http 127.0.0.1:PORT] [--pid-file PATH] [--grandchild] \
[--setsid-grandchild] [--env-file PATH] [--echo-env VAR] [--echo-header NAME] \
normal|paginated N PAGE_SIZE|slow SECONDS|crash|crash-after-init|garbage|huge N|loop-cursor|endless|bad-schema|\
list-error [N]|no-tools|any-of-chain N|malformed-tools DEPTH [json]|bad-utf8 [json]|tasks [json]|die-mid-call|garbage-on-call|hang-on-call";

/// Parses the arguments (without the program name).
pub fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut http = None;
    let mut pid_file = None;
    let mut grandchild = false;
    let mut setsid_grandchild = false;
    let mut env_file = None;
    let mut echo_env = None;
    let mut echo_header = None;
    let mut rest = args.iter();
    let mut positional = Vec::new();
    while let Some(arg) = rest.next() {
        let mut value = |name: &str| {
            rest.next()
                .cloned()
                .ok_or_else(|| format!("`{name}` needs a value"))
        };
        match arg.as_str() {
            "--http" => {
                let raw = value("--http")?;
                let addr: SocketAddr = raw
                    .parse()
                    .map_err(|err| format!("`--http {raw}`: {err}"))?;
                if !addr.ip().is_loopback() {
                    return Err(format!(
                        "`--http {raw}`: only loopback addresses are allowed"
                    ));
                }
                http = Some(addr);
            }
            "--pid-file" => pid_file = Some(value("--pid-file")?),
            "--grandchild" => grandchild = true,
            "--setsid-grandchild" => setsid_grandchild = true,
            "--env-file" => env_file = Some(value("--env-file")?),
            "--echo-env" => echo_env = Some(value("--echo-env")?),
            "--echo-header" => echo_header = Some(value("--echo-header")?),
            other if other.starts_with("--") => return Err(format!("unknown option `{other}`")),
            _ => positional.push(arg.as_str()),
        }
    }
    let number = |raw: Option<&&str>, what: &str| -> Result<u64, String> {
        let raw = raw.ok_or_else(|| format!("missing {what}"))?;
        raw.parse()
            .map_err(|_| format!("{what} must be a number, got `{raw}`"))
    };
    let mode = match positional.as_slice() {
        ["normal"] => Mode::Normal,
        ["paginated", args @ ..] => {
            let total = usize::try_from(number(args.first(), "N")?).map_err(|e| e.to_string())?;
            let page_size =
                usize::try_from(number(args.get(1), "PAGE_SIZE")?).map_err(|e| e.to_string())?;
            if page_size == 0 {
                return Err("PAGE_SIZE must be at least 1".into());
            }
            Mode::Paginated { total, page_size }
        }
        ["slow", args @ ..] => Mode::Slow(Duration::from_secs(number(args.first(), "SECONDS")?)),
        ["crash"] => Mode::Crash,
        ["crash-after-init"] => Mode::CrashAfterInit,
        ["garbage"] => Mode::Garbage,
        ["huge", args @ ..] => {
            Mode::Huge(usize::try_from(number(args.first(), "N")?).map_err(|e| e.to_string())?)
        }
        ["loop-cursor"] => Mode::LoopCursor,
        ["endless"] => Mode::Endless,
        ["bad-schema"] => Mode::BadSchema,
        ["list-error", args @ ..] => Mode::ListError(match args.first() {
            Some(_) => usize::try_from(number(args.first(), "N")?).map_err(|e| e.to_string())?,
            None => 0,
        }),
        ["no-tools"] => Mode::NoTools,
        ["malformed-tools", args @ ..] => Mode::Raw(
            Raw::MalformedTools(
                usize::try_from(number(args.first(), "DEPTH")?).map_err(|e| e.to_string())?,
            ),
            args.get(1) == Some(&"json"),
        ),
        ["bad-utf8", args @ ..] => Mode::Raw(Raw::BadUtf8, args.first() == Some(&"json")),
        ["tasks", args @ ..] => Mode::Raw(Raw::Tasks, args.first() == Some(&"json")),
        ["die-mid-call"] => Mode::Raw(Raw::DieMidCall, false),
        ["garbage-on-call"] => Mode::Raw(Raw::GarbageOnCall, false),
        ["hang-on-call"] => Mode::Raw(Raw::HangOnCall, false),
        ["any-of-chain", args @ ..] => Mode::AnyOfChain(
            usize::try_from(number(args.first(), "N")?).map_err(|e| e.to_string())?,
        ),
        [] => return Err("missing MODE".into()),
        other => return Err(format!("unknown mode `{}`", other.join(" "))),
    };
    Ok(Args {
        mode,
        http,
        pid_file,
        grandchild,
        setsid_grandchild,
        env_file,
        echo_env,
        echo_header,
    })
}

/// Runs the fixture; the exit code is 2 for usage errors.
pub fn run(raw_args: Vec<String>) -> ExitCode {
    let args = match parse_args(&raw_args) {
        Ok(args) => args,
        Err(message) => {
            say_err(&format!("agents-mcp-fixture: {message}\n{USAGE}"));
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            say_err(&format!(
                "agents-mcp-fixture: cannot start the runtime: {err}"
            ));
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve(args)) {
        Ok(code) => code,
        Err(message) => {
            say_err(&format!("agents-mcp-fixture: {message}"));
            ExitCode::FAILURE
        }
    }
}

fn say_err(message: &str) {
    let _ = writeln!(std::io::stderr(), "{message}");
}

async fn serve(args: Args) -> Result<ExitCode, String> {
    let mut pids = vec![std::process::id()];
    if let Some(path) = &args.env_file {
        let mut vars: Vec<String> = std::env::vars_os()
            .map(|(name, value)| format!("{}={}", name.to_string_lossy(), value.to_string_lossy()))
            .collect();
        vars.sort();
        let text: String = vars.iter().map(|line| format!("{line}\n")).collect();
        let partial = format!("{path}.partial");
        std::fs::write(&partial, text)
            .and_then(|()| std::fs::rename(&partial, path))
            .map_err(|err| format!("cannot write `{path}`: {err}"))?;
    }
    for (wanted, program, argv) in [
        (args.grandchild, "sleep", &["600"][..]),
        (args.setsid_grandchild, "setsid", &["sleep", "600"][..]),
    ] {
        if !wanted {
            continue;
        }
        // Inherits stdout/stderr like a real wrapper's child (npx -> node) would.
        let child = std::process::Command::new(program)
            .args(argv)
            .stdin(Stdio::null())
            .spawn()
            .map_err(|err| format!("cannot start the grandchild `{program}`: {err}"))?;
        pids.push(child.id());
        // Never waited for on purpose: the client must clean it up.
        std::mem::forget(child);
    }
    if let Some(path) = &args.pid_file {
        let text: String = pids.iter().map(|pid| format!("{pid}\n")).collect();
        // Written under a temporary name, then renamed, so a reader never sees half a file.
        let partial = format!("{path}.partial");
        std::fs::write(&partial, text)
            .and_then(|()| std::fs::rename(&partial, path))
            .map_err(|err| format!("cannot write `{path}`: {err}"))?;
    }

    match (&args.mode, args.http) {
        (Mode::Crash, _) => crash_before_initialize().await,
        (Mode::Garbage, _) => answer_garbage().await,
        (Mode::Raw(raw, json), Some(addr)) => serve_raw_http(raw.clone(), *json, addr).await,
        (Mode::Raw(raw, _), None) => answer_raw_stdio(raw).await,
        (_, Some(addr)) => serve_http(args.clone(), addr).await,
        (_, None) => {
            let service = Fixture::new(args)
                .serve(rmcp::transport::stdio())
                .await
                .map_err(|err| format!("initialize failed: {err}"))?;
            service
                .waiting()
                .await
                .map_err(|err| format!("server task failed: {err}"))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

async fn crash_before_initialize() -> Result<ExitCode, String> {
    let mut line = String::new();
    let _ = BufReader::new(tokio::io::stdin())
        .read_line(&mut line)
        .await;
    say_err("agents-mcp-fixture: crashing on purpose before answering `initialize`");
    Ok(ExitCode::from(3))
}

async fn answer_garbage() -> Result<ExitCode, String> {
    let mut stdout = tokio::io::stdout();
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(_request)) = lines.next_line().await {
        for n in 0..20 {
            let text = format!("hello, this is not JSON-RPC (line {n})\n");
            if stdout.write_all(text.as_bytes()).await.is_err() {
                return Ok(ExitCode::SUCCESS);
            }
        }
        let _ = stdout.flush().await;
    }
    Ok(ExitCode::SUCCESS)
}

/// The `tools/list` result of `malformed-tools`, as JSON text (built as text:
/// a `serde_json::Value` nested that deep could not be parsed back).
fn malformed_tools_page(depth: usize) -> String {
    let object = r#"{"type":"object"}"#;
    let deep = format!("{}{{}}{}", r#"{"a":"#.repeat(depth), "}".repeat(depth));
    format!(
        r#"{{"tools":[{{"name":"first","description":"ok","inputSchema":{}}},{{"name":"deep","inputSchema":{{"type":"object","properties":{}}}}},{{"name":"badtype","inputSchema":"not a schema"}},{{"name":42,"inputSchema":{{"type":"object"}}}},{{"name":"last","description":"ok","inputSchema":{}}}]}}"#,
        object, deep, object
    )
}

/// The `tools/list` result of `bad-utf8`: not UTF-8.
const BAD_UTF8_PAGE: &[u8] = b"{\"tools\":[{\"name\":\"bad\",\"description\":\"x\xff\",\"inputSchema\":{\"type\":\"object\"}},{\"name\":\"ok\",\"description\":\"fine\",\"inputSchema\":{\"type\":\"object\"}}]}";

/// The `tools/call` result of `bad-utf8`: `caf` and a Latin-1 `é`.
const BAD_UTF8_RESULT: &[u8] = b"{\"content\":[{\"type\":\"text\",\"text\":\"caf\xe9\"}]}";

/// What a hand-written server does with one request.
enum RawAnswer {
    /// A notification: nothing.
    None,
    /// This JSON-RPC message.
    Message(Vec<u8>),
    /// Start answering, then exit (`die-mid-call`).
    Die,
    /// Lines that are not JSON-RPC (`garbage-on-call`).
    Garbage,
}

/// The JSON-RPC answer of a hand-written server to one request.
fn raw_answer(request: &serde_json::Value, raw: &Raw) -> RawAnswer {
    let Some(id) = request.get("id") else {
        return RawAnswer::None;
    };
    let method = request.get("method").and_then(serde_json::Value::as_str);
    let result: Vec<u8> = match (method, raw) {
        // A server of an older version, as most are.
        (Some("initialize"), Raw::HangOnCall) => serde_json::json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw", "version": "1"},
        })
        .to_string()
        .into_bytes(),
        (Some("initialize"), _) => serde_json::json!({
            "protocolVersion": request.pointer("/params/protocolVersion"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw", "version": "1"},
        })
        .to_string()
        .into_bytes(),
        (Some("tools/list"), Raw::MalformedTools(depth)) => {
            malformed_tools_page(*depth).into_bytes()
        }
        (Some("tools/list"), Raw::BadUtf8) => BAD_UTF8_PAGE.to_vec(),
        (Some("tools/list"), Raw::Tasks) => serde_json::json!({"tools": [
            {"name": "plain", "inputSchema": {"type": "object"},
             "execution": {"taskSupport": "forbidden"}},
            {"name": "research", "inputSchema": {"type": "object"},
             "execution": {"taskSupport": "required"}},
        ]})
        .to_string()
        .into_bytes(),
        (Some("tools/list"), Raw::DieMidCall | Raw::GarbageOnCall) => serde_json::json!({"tools": [
            {"name": "work", "inputSchema": {"type": "object"}},
        ]})
        .to_string()
        .into_bytes(),
        (Some("tools/call"), Raw::BadUtf8) => BAD_UTF8_RESULT.to_vec(),
        (Some("tools/call"), Raw::DieMidCall) => return RawAnswer::Die,
        (Some("tools/call"), Raw::GarbageOnCall) => return RawAnswer::Garbage,
        (Some("tools/list"), Raw::HangOnCall) => serde_json::json!({"tools": [
            {"name": "work", "inputSchema": {"type": "object"}},
            {"name": "hang", "inputSchema": {"type": "object"}},
        ]})
        .to_string()
        .into_bytes(),
        (Some("tools/call"), Raw::HangOnCall)
            if request.pointer("/params/name") == Some(&serde_json::json!("hang")) =>
        {
            return RawAnswer::None;
        }
        (Some("tools/call"), Raw::Tasks)
            if request.pointer("/params/name") == Some(&serde_json::json!("research")) =>
        {
            let error = serde_json::json!({
                "code": -32601,
                "message": "tool `research` requires task augmentation",
            });
            return RawAnswer::Message(
                format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{error}}}"#).into_bytes(),
            );
        }
        (Some("tools/call"), _) => br#"{"content":[{"type":"text","text":"done"}]}"#.to_vec(),
        _ => b"{}".to_vec(),
    };
    let mut message = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":"#).into_bytes();
    message.extend_from_slice(&result);
    message.push(b'}');
    RawAnswer::Message(message)
}

/// A hand-written server over streamable HTTP (rmcp's server would not
/// send what it sends): every answer is one server-sent event (or with
/// `json` one JSON body), one request per connection.
async fn serve_raw_http(raw: Raw, json: bool, addr: SocketAddr) -> Result<ExitCode, String> {
    serve_connections(addr, move |stream| {
        answer_one_http_request(stream, raw.clone(), json)
    })
    .await
}

/// Listens on `addr`, prints the MCP URL on stdout, and hands each accepted
/// connection to `handle` (in a task of its own) until stdin closes: the
/// parent holds our stdin; when it goes away, so do we.
async fn serve_connections<F, Fut>(addr: SocketAddr, handle: F) -> Result<ExitCode, String>
where
    F: Fn(tokio::net::TcpStream) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|err| format!("cannot listen on {addr}: {err}"))?;
    let bound = listener
        .local_addr()
        .map_err(|err| format!("cannot read the bound address: {err}"))?;
    let mut stdout = tokio::io::stdout();
    stdout
        .write_all(format!("http://{bound}/mcp\n").as_bytes())
        .await
        .and(stdout.flush().await)
        .map_err(|err| format!("cannot write the address to stdout: {err}"))?;
    let accept = async move {
        loop {
            let Ok((stream, _peer)) = listener.accept().await else {
                continue;
            };
            tokio::spawn(handle(stream));
        }
    };
    let stdin_closed = async {
        let mut sink = Vec::new();
        let _ = tokio::io::stdin().read_to_end(&mut sink).await;
    };
    tokio::select! {
        () = accept => {}
        () = stdin_closed => {}
    }
    Ok(ExitCode::SUCCESS)
}

async fn answer_one_http_request(stream: tokio::net::TcpStream, raw: Raw, json: bool) {
    let mut reader = BufReader::new(stream);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).await.is_err() {
        return;
    }
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).await.is_err() {
            return;
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).await.is_err() {
        return;
    }
    let mut stream = reader.into_inner();
    let response: Vec<u8> = if request_line.starts_with("POST ") {
        let request: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        match raw_answer(&request, &raw) {
            RawAnswer::Message(answer) => {
                let (content_type, body) = if json {
                    ("application/json", answer)
                } else {
                    let mut event = b"event: message\ndata: ".to_vec();
                    event.extend_from_slice(&answer);
                    event.extend_from_slice(b"\n\n");
                    ("text/event-stream", event)
                };
                let mut response = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\nmcp-session-id: raw\r\n\
                     content-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                )
                .into_bytes();
                response.extend_from_slice(&body);
                response
            }
            RawAnswer::Garbage => {
                let body = "this is not JSON-RPC\n".repeat(20);
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\n\
                     connection: close\r\n\r\n{body}",
                    body.len()
                )
                .into_bytes()
            }
            RawAnswer::None => {
                b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_vec()
            }
            RawAnswer::Die => {
                // A chunked event stream cut after its first event (which
                // has an id, so a client may try to resume it).
                let event = "id: 1\ndata: \n\n";
                let start = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nmcp-session-id: raw\r\n\
                     transfer-encoding: chunked\r\n\r\n{:x}\r\n{event}\r\n",
                    event.len()
                );
                let _ = stream.write_all(start.as_bytes()).await;
                let _ = stream.flush().await;
                say_err("agents-mcp-fixture: exiting on purpose in the middle of `tools/call`");
                std::process::exit(0);
            }
        }
    } else if request_line.starts_with("DELETE ") {
        b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_vec()
    } else {
        b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            .to_vec()
    };
    let _ = stream.write_all(&response).await;
    let _ = stream.flush().await;
}

/// A hand-written server over stdio: one line per answer.
async fn answer_raw_stdio(raw: &Raw) -> Result<ExitCode, String> {
    let mut stdout = tokio::io::stdout();
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if *raw == Raw::HangOnCall {
            say_err(&line);
        }
        let Ok(request) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        let answer = match raw_answer(&request, raw) {
            RawAnswer::None => continue,
            RawAnswer::Message(answer) => answer,
            RawAnswer::Die => {
                say_err("agents-mcp-fixture: exiting on purpose in the middle of `tools/call`");
                return Ok(ExitCode::SUCCESS);
            }
            RawAnswer::Garbage => "this is not JSON-RPC\n".repeat(19).into_bytes(),
        };
        if stdout.write_all(&answer).await.is_err()
            || stdout.write_all(b"\n").await.is_err()
            || stdout.flush().await.is_err()
        {
            break;
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn serve_http(args: Args, addr: SocketAddr) -> Result<ExitCode, String> {
    let fixture = Fixture::new(args);
    let service: StreamableHttpService<Fixture, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(fixture.clone()),
        Default::default(),
        StreamableHttpServerConfig::default(),
    );
    serve_connections(addr, move |stream| {
        let service = service.clone();
        async move {
            let io = hyper_util::rt::TokioIo::new(stream);
            let service = hyper_util::service::TowerToHyperService::new(service);
            let _ =
                hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new())
                    .serve_connection(io, service)
                    .await;
        }
    })
    .await
}

#[derive(Debug, Clone)]
struct Fixture {
    args: Arc<Args>,
    pages_served: Arc<AtomicUsize>,
}

impl Fixture {
    fn new(args: Args) -> Self {
        Self {
            args: Arc::new(args),
            pages_served: Arc::new(AtomicUsize::new(0)),
        }
    }

    fn normal_tools(&self, context: &RequestContext<RoleServer>) -> Vec<Tool> {
        let mut tools = vec![
            tool(
                "add",
                "Adds two integers",
                json!({
                    "type": "object",
                    "properties": {
                        "a": {"type": "integer", "description": "first addend"},
                        "b": {"type": "integer", "description": "second addend"}
                    },
                    "required": ["a", "b"]
                }),
            )
            .with_raw_output_schema(Arc::new(object(json!({
                "type": "object",
                "properties": {"sum": {"type": "integer"}},
                "required": ["sum"]
            }))))
            .with_annotations(ToolAnnotations::new().read_only(true)),
            tool(
                "write_note",
                "Appends a note",
                json!({
                    "type": "object",
                    "properties": {
                        "text": {"type": "string"},
                        "tags": {"type": "array", "items": {"type": "string"}}
                    },
                    "required": ["text"]
                }),
            )
            .with_annotations(ToolAnnotations::new().read_only(false).destructive(false)),
            tool(
                "delete_everything",
                "Deletes every note",
                json!({"type": "object", "properties": {}}),
            )
            .with_annotations(ToolAnnotations::new().destructive(true).idempotent(true)),
            tool(
                "cwd",
                std::env::current_dir()
                    .map(|dir| dir.display().to_string())
                    .unwrap_or_default(),
                json!({"type": "object"}),
            ),
        ];
        if let Some(var) = &self.args.echo_env {
            let value = std::env::var(var).unwrap_or_else(|_| "<unset>".into());
            tools.push(tool("echo_env", value, json!({"type": "object"})));
        }
        if let Some(name) = &self.args.echo_header {
            let value = context
                .extensions
                .get::<http::request::Parts>()
                .and_then(|parts| parts.headers.get(name.as_str()))
                .and_then(|value| value.to_str().ok())
                .unwrap_or("<missing>")
                .to_owned();
            tools.push(tool("echo_header", value, json!({"type": "object"})));
        }
        tools
    }
}

fn object(value: Value) -> serde_json::Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    }
}

fn tool(name: &str, description: impl Into<String>, schema: Value) -> Tool {
    Tool::new(
        name.to_owned(),
        description.into(),
        Arc::new(object(schema)),
    )
}

/// An object schema whose property `p` is `d_(n-1)`, where `d_0` is a string
/// and `d_i` is `anyOf` two references to `d_(i-1)`.
pub fn any_of_chain(n: usize) -> Value {
    let mut defs = serde_json::Map::new();
    defs.insert("d0".into(), json!({"type": "string"}));
    for i in 1..n {
        let previous = format!("#/$defs/d{}", i - 1);
        defs.insert(
            format!("d{i}"),
            json!({"anyOf": [{"$ref": previous}, {"$ref": previous}]}),
        );
    }
    json!({
        "type": "object",
        "properties": {"p": {"$ref": format!("#/$defs/d{}", n.saturating_sub(1))}},
        "$defs": defs,
    })
}

fn page_number(request: &Option<PaginatedRequestParams>) -> Result<usize, ErrorData> {
    match request.as_ref().and_then(|params| params.cursor.as_deref()) {
        None => Ok(0),
        Some(cursor) => cursor
            .strip_prefix("page-")
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| ErrorData::invalid_params(format!("unknown cursor `{cursor}`"), None)),
    }
}

fn page(tools: Vec<Tool>, next_cursor: Option<String>) -> ListToolsResult {
    let mut result = ListToolsResult::with_all_items(tools);
    result.next_cursor = next_cursor;
    result
}

impl ServerHandler for Fixture {
    fn get_info(&self) -> ServerConfig {
        let capabilities = match self.args.mode {
            Mode::NoTools => ServerCapabilities::default(),
            _ => ServerCapabilities::builder().enable_tools().build(),
        };
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("agents-mcp-fixture", "1.2.3"))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let served = self.pages_served.fetch_add(1, Ordering::SeqCst);
        match &self.args.mode {
            Mode::ListError(padding) => Err(ErrorData::internal_error(
                format!(
                    "the tool catalogue is unavailable{}",
                    " (details)".repeat(padding / 10)
                ),
                None,
            )),
            Mode::Normal | Mode::Crash | Mode::Garbage | Mode::NoTools | Mode::Raw(..) => {
                Ok(page(self.normal_tools(&context), None))
            }
            Mode::AnyOfChain(n) => Ok(page(
                vec![
                    tool(
                        "chain",
                        "its schema expands exponentially",
                        any_of_chain(*n),
                    ),
                    tool(
                        "tree",
                        "a recursive schema",
                        json!({
                            "type": "object",
                            "properties": {"root": {"$ref": "#/$defs/node"}},
                            "$defs": {"node": {"type": "object", "properties": {
                                "left": {"$ref": "#/$defs/node"},
                                "right": {"$ref": "#/$defs/node"}
                            }}}
                        }),
                    ),
                    tool("fine", "a valid tool", json!({"type": "object"})),
                ],
                None,
            )),
            Mode::Slow(delay) => {
                tokio::time::sleep(*delay).await;
                Ok(page(self.normal_tools(&context), None))
            }
            Mode::CrashAfterInit => {
                say_err("agents-mcp-fixture: crashing on purpose in `tools/list`");
                std::process::exit(4);
            }
            Mode::Paginated { total, page_size } => {
                let number = page_number(&request)?;
                let start = number.saturating_mul(*page_size);
                let end = start.saturating_add(*page_size).min(*total);
                let schema = Arc::new(object(json!({
                    "type": "object",
                    "properties": {"page": {"type": "integer", "minimum": 0}}
                })));
                let tools = (start..end)
                    .map(|i| {
                        Tool::new(
                            format!("tool_{i:04}"),
                            format!("tool number {i}"),
                            schema.clone(),
                        )
                    })
                    .collect();
                let next = (end < *total).then(|| format!("page-{}", number.saturating_add(1)));
                Ok(page(tools, next))
            }
            Mode::Huge(total) => {
                let schema = Arc::new(object(json!({
                    "type": "object",
                    "properties": {"value": {"type": "string"}}
                })));
                let tools = (0..*total)
                    .map(|i| Tool::new(format!("tool_{i:06}"), "one of very many", schema.clone()))
                    .collect();
                Ok(page(tools, None))
            }
            Mode::LoopCursor => Ok(page(
                vec![tool(
                    &format!("loop_{served}"),
                    "again",
                    json!({"type": "object"}),
                )],
                Some("again".into()),
            )),
            Mode::Endless => {
                let number = page_number(&request)?;
                Ok(page(
                    vec![tool(
                        &format!("endless_{number}"),
                        "more",
                        json!({"type": "object"}),
                    )],
                    Some(format!("page-{}", number.saturating_add(1))),
                ))
            }
            Mode::BadSchema => Ok(page(
                vec![
                    tool("fine", "a valid tool", json!({"type": "object"})),
                    tool(
                        "broken",
                        "its input schema names a type that does not exist",
                        json!({"type": "objekt", "properties": {"x": {"type": "strin"}}}),
                    ),
                ],
                None,
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn parses_modes_and_options() {
        let args = parse_args(&strings(&[
            "--http",
            "127.0.0.1:0",
            "--grandchild",
            "paginated",
            "10",
            "3",
        ]))
        .unwrap();
        assert_eq!(
            args.mode,
            Mode::Paginated {
                total: 10,
                page_size: 3
            }
        );
        assert!(args.grandchild);
        assert_eq!(args.http, Some("127.0.0.1:0".parse().unwrap()));
        assert_eq!(
            parse_args(&strings(&["slow", "2"])).unwrap().mode,
            Mode::Slow(Duration::from_secs(2))
        );
    }

    #[test]
    fn rejects_non_loopback_and_bad_modes() {
        assert!(
            parse_args(&strings(&["--http", "0.0.0.0:1", "normal"]))
                .unwrap_err()
                .contains("loopback")
        );
        assert!(
            parse_args(&strings(&["dance"]))
                .unwrap_err()
                .contains("unknown mode")
        );
        assert!(parse_args(&strings(&["paginated", "3", "0"])).is_err());
        assert!(parse_args(&strings(&[])).is_err());
    }
}
