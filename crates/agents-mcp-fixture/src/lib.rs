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
//! - `malformed-tools DEPTH [json]`: speaks JSON-RPC by hand (over stdio, or with `--http` as
//!   one server-sent event per POST, or with `json` as a plain JSON body) and lists, in one
//!   page, the good tools `first` and `last` around three bad ones: `deep`, whose
//!   input schema nests `DEPTH` objects, `badtype`, whose `inputSchema` is a string,
//!   and one whose `name` is a number.
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
    /// A hand-written `tools/list` page with malformed tools between good ones.
    MalformedTools(usize, bool),
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
list-error [N]|no-tools|malformed-tools DEPTH [json]";

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
        ["malformed-tools", args @ ..] => Mode::MalformedTools(
            usize::try_from(number(args.first(), "DEPTH")?).map_err(|e| e.to_string())?,
            args.get(1) == Some(&"json"),
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
        (Mode::MalformedTools(depth, json), Some(addr)) => {
            serve_malformed_tools_http(*depth, *json, addr).await
        }
        (Mode::MalformedTools(depth, _), None) => answer_malformed_tools(*depth).await,
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

/// The JSON-RPC answer of `malformed-tools` to one request (`None` for a
/// notification).
fn malformed_tools_answer(request: &serde_json::Value, depth: usize) -> Option<String> {
    let id = request.get("id")?;
    let result = match request.get("method").and_then(serde_json::Value::as_str) {
        Some("initialize") => serde_json::json!({
            "protocolVersion": request.pointer("/params/protocolVersion"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "malformed", "version": "1"},
        })
        .to_string(),
        Some("tools/list") => malformed_tools_page(depth),
        _ => "{}".to_owned(),
    };
    Some(format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#
    ))
}

/// `malformed-tools` over streamable HTTP, by hand (rmcp's server would not
/// send a malformed tool): every answer is one server-sent event (or with
/// `json` one JSON body), one request per connection.
async fn serve_malformed_tools_http(
    depth: usize,
    json: bool,
    addr: SocketAddr,
) -> Result<ExitCode, String> {
    serve_connections(addr, move |stream| {
        answer_one_http_request(stream, depth, json)
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

async fn answer_one_http_request(stream: tokio::net::TcpStream, depth: usize, json: bool) {
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
    let response = if request_line.starts_with("POST ") {
        let request: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        match malformed_tools_answer(&request, depth) {
            Some(answer) => {
                let (content_type, body) = if json {
                    ("application/json", answer)
                } else {
                    (
                        "text/event-stream",
                        format!("event: message\ndata: {answer}\n\n"),
                    )
                };
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\nmcp-session-id: malformed\r\n\
                     content-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                )
            }
            None => {
                "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_owned()
            }
        }
    } else if request_line.starts_with("DELETE ") {
        "HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_owned()
    } else {
        "HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            .to_owned()
    };
    let mut stream = reader.into_inner();
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.flush().await;
}

async fn answer_malformed_tools(depth: usize) -> Result<ExitCode, String> {
    let mut stdout = tokio::io::stdout();
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(request) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        let Some(answer) = malformed_tools_answer(&request, depth) else {
            continue; // a notification
        };
        if stdout.write_all(answer.as_bytes()).await.is_err()
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
            Mode::Normal
            | Mode::Crash
            | Mode::Garbage
            | Mode::NoTools
            | Mode::MalformedTools(..) => Ok(page(self.normal_tools(&context), None)),
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
