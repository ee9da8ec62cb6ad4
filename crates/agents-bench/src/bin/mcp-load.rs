//! `mcp-load`: the load client of `bench/run`'s gateway group. It holds
//! `--sessions` MCP sessions at once, each calling one tool in a loop for
//! `--seconds` (after `--warmup`), and prints one JSON object: calls, calls
//! a second, p50/p99 latency, and the CPU time and peak RSS of the server
//! processes watched (`--pid`, or the children it started over stdio).
//!
//! ```text
//! mcp-load http URL [--token T] [--pid PID]... [OPTIONS]
//! mcp-load stdio [OPTIONS] -- COMMAND [ARG...]
//! OPTIONS: --sessions N (1) --seconds S (4) --warmup S (1) --tool NAME (echo)
//!          --arguments JSON ({"message": "hi"})
//! ```
//!
//! A session counts as open once `initialize` and one first call were
//! answered (a proxy may start its upstream at the first call); the clock
//! starts after every session is open.
//!
//! A minimal client on purpose: one blocking thread per session, one write
//! per request, a keep-alive HTTP/1.1 connection with `TCP_NODELAY` (or the
//! server's stdin/stdout), so that what is measured is the server.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Linux's USER_HZ: the unit of utime and stime in /proc/PID/stat.
const TICKS_PER_SECOND: f64 = 100.0;

struct Options {
    mode: String,
    url: String,
    token: Option<String>,
    pids: Vec<u32>,
    sessions: usize,
    seconds: f64,
    warmup: f64,
    tool: String,
    /// The arguments of every call.
    arguments: Value,
    command: Vec<String>,
}

fn usage(message: &str) -> ! {
    let _ = writeln!(
        std::io::stderr(),
        "mcp-load: {message}\nusage: mcp-load http URL [--token T] [--pid PID]... [OPTIONS] | \
         mcp-load stdio [OPTIONS] -- COMMAND [ARG...]"
    );
    std::process::exit(2)
}

fn options() -> Options {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| usage("no mode"));
    let mut options = Options {
        mode,
        url: String::new(),
        token: None,
        pids: Vec::new(),
        sessions: 1,
        seconds: 4.0,
        warmup: 1.0,
        tool: "echo".into(),
        arguments: json!({"message": "hi"}),
        command: Vec::new(),
    };
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .unwrap_or_else(|| usage(&format!("{name} needs a value")))
        };
        match arg.as_str() {
            "--token" => options.token = Some(value("--token")),
            "--pid" => options.pids.push(
                value("--pid")
                    .parse()
                    .unwrap_or_else(|_| usage("bad --pid")),
            ),
            "--sessions" => {
                options.sessions = value("--sessions")
                    .parse()
                    .unwrap_or_else(|_| usage("bad --sessions"))
            }
            "--seconds" => {
                options.seconds = value("--seconds")
                    .parse()
                    .unwrap_or_else(|_| usage("bad --seconds"))
            }
            "--warmup" => {
                options.warmup = value("--warmup")
                    .parse()
                    .unwrap_or_else(|_| usage("bad --warmup"))
            }
            "--tool" => options.tool = value("--tool"),
            "--arguments" => {
                options.arguments = serde_json::from_str(&value("--arguments"))
                    .unwrap_or_else(|_| usage("bad --arguments (a JSON object)"))
            }
            "--" => {
                options.command = args.by_ref().collect();
            }
            url if options.mode == "http" && options.url.is_empty() => options.url = url.to_owned(),
            other => usage(&format!("unexpected argument `{other}`")),
        }
    }
    match options.mode.as_str() {
        "http" if options.url.is_empty() => usage("http needs a URL"),
        "stdio" if options.command.is_empty() => usage("stdio needs `-- COMMAND`"),
        "http" | "stdio" => options,
        _ => usage("the mode is `http` or `stdio`"),
    }
}

/// One MCP session the load runs on.
trait Session: Send {
    /// Sends `message` (with `id`) and returns the answer with that id.
    fn call(&mut self, id: u64, message: &Value) -> Result<Value, String>;
    /// Sends a notification.
    fn notify(&mut self, message: &Value) -> Result<(), String>;
}

/// `initialize`, then one call of `tool` before the clock starts: a proxy
/// may start its upstream at the first call (the gateway does), and 32 of
/// them starting at once took longer than the warm-up.
fn open(session: &mut dyn Session, tool: &str, arguments: &Value) -> Result<(), String> {
    initialize(session)?;
    let answer = session.call(1, &call_of(1, tool, arguments))?;
    match answer.get("result") {
        Some(result) if result["isError"] != json!(true) => Ok(()),
        _ => Err(format!("the first call of `{tool}` failed: {answer}")),
    }
}

/// A `tools/call` of `tool` with `arguments` and id `id`.
fn call_of(id: u64, tool: &str, arguments: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}})
}

fn initialize(session: &mut dyn Session) -> Result<(), String> {
    let answer = session.call(
        0,
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "mcp-load", "version": "1"}}}),
    )?;
    if answer.get("result").is_none() {
        return Err(format!("initialize failed: {answer}"));
    }
    session.notify(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
}

// ----- stdio ---------------------------------------------------------------

struct StdioSession {
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
}

impl Session for StdioSession {
    fn call(&mut self, id: u64, message: &Value) -> Result<Value, String> {
        self.notify(message)?;
        loop {
            self.line.clear();
            let read = self
                .stdout
                .read_line(&mut self.line)
                .map_err(|e| e.to_string())?;
            if read == 0 {
                return Err("the server closed its stdout".into());
            }
            let Ok(answer) = serde_json::from_str::<Value>(&self.line) else {
                continue;
            };
            if answer.get("id") == Some(&json!(id)) {
                return Ok(answer);
            }
        }
    }

    fn notify(&mut self, message: &Value) -> Result<(), String> {
        let mut text = message.to_string();
        text.push('\n');
        self.stdin
            .write_all(text.as_bytes())
            .map_err(|e| e.to_string())
    }
}

fn spawn(command: &[String]) -> Result<(Child, StdioSession), String> {
    let (program, args) = command.split_first().ok_or("no command")?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start `{program}`: {e}"))?;
    let stdin = child.stdin.take().ok_or("no stdin")?;
    let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
    Ok((
        child,
        StdioSession {
            stdin,
            stdout,
            line: String::new(),
        },
    ))
}

// ----- streamable HTTP -------------------------------------------------------

/// An HTTP answer: status, headers (names in lower case), body.
type Answer = (u16, Vec<(String, String)>, String);

/// A session opened, with the server process it started (over stdio).
type Opened = (Option<Child>, Box<dyn Session>);

struct HttpSession {
    reader: BufReader<TcpStream>,
    authority: String,
    path: String,
    token: Option<String>,
    session: Option<String>,
}

impl HttpSession {
    fn connect(url: &str, token: Option<String>) -> Result<Self, String> {
        let rest = url.strip_prefix("http://").ok_or("only http:// URLs")?;
        let (authority, path) = rest.split_once('/').map_or((rest, "/"), |(a, p)| (a, p));
        let stream = TcpStream::connect(authority).map_err(|e| format!("{authority}: {e}"))?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .map_err(|e| e.to_string())?;
        Ok(Self {
            reader: BufReader::new(stream),
            authority: authority.to_owned(),
            path: format!("/{}", path.trim_start_matches('/')),
            token,
            session: None,
        })
    }

    fn post(&mut self, message: &Value) -> Result<Answer, String> {
        let body = message.to_string();
        let mut head = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            self.path,
            self.authority,
            body.len()
        );
        if let Some(token) = &self.token {
            head.push_str(&format!("Authorization: Bearer {token}\r\n"));
        }
        if let Some(session) = &self.session {
            head.push_str(&format!(
                "Mcp-Session-Id: {session}\r\nMcp-Protocol-Version: 2025-06-18\r\n"
            ));
        }
        head.push_str("\r\n");
        head.push_str(&body);
        self.reader
            .get_mut()
            .write_all(head.as_bytes())
            .map_err(|e| e.to_string())?;
        read_answer(&mut self.reader).map_err(|e| e.to_string())
    }
}

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
        if reader.read_line(&mut line)? == 0 {
            return Err(std::io::Error::other("the connection closed"));
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    let find = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    let mut body = Vec::new();
    if let Some(length) = find("content-length") {
        body.resize(length.parse().map_err(std::io::Error::other)?, 0);
        reader.read_exact(&mut body)?;
    } else if find("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        loop {
            line.clear();
            reader.read_line(&mut line)?;
            let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or("0"), 16)
                .map_err(std::io::Error::other)?;
            let start = body.len();
            body.resize(start + size + 2, 0);
            if let Some(chunk) = body.get_mut(start..) {
                reader.read_exact(chunk)?;
            }
            body.truncate(start + size);
            if size == 0 {
                break;
            }
        }
    }
    Ok((status, headers, String::from_utf8_lossy(&body).into_owned()))
}

impl Session for HttpSession {
    fn call(&mut self, id: u64, message: &Value) -> Result<Value, String> {
        let (status, headers, body) = self.post(message)?;
        if status != 200 {
            return Err(format!("HTTP {status}: {body}"));
        }
        if let Some((_, session)) = headers.iter().find(|(n, _)| n == "mcp-session-id") {
            self.session = Some(session.clone());
        }
        let json = body.trim_start().starts_with('{');
        let messages: Vec<Value> = if json {
            serde_json::from_str(&body).into_iter().collect()
        } else {
            body.lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .filter_map(|data| serde_json::from_str(data.trim()).ok())
                .collect()
        };
        messages
            .into_iter()
            .find(|m: &Value| m.get("id") == Some(&json!(id)))
            .ok_or_else(|| format!("no answer with id {id} in: {body}"))
    }

    fn notify(&mut self, message: &Value) -> Result<(), String> {
        let (status, _, body) = self.post(message)?;
        if (200..300).contains(&status) {
            Ok(())
        } else {
            Err(format!("HTTP {status}: {body}"))
        }
    }
}

// ----- measuring -------------------------------------------------------------

/// utime + stime of `pid`, in seconds.
fn cpu_seconds(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    // The command name may hold spaces: fields are counted after its `)`.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let field = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // Fields 14 and 15 of the whole line are the 12th and 13th after `)`.
    (field(11) + field(12)) / TICKS_PER_SECOND
}

/// VmHWM of `pid`, in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    // The nearest rank: the smallest sample at or above a share `p`.
    let rank = ((sorted.len() as f64) * p).ceil() as usize;
    sorted
        .get(rank.clamp(1, sorted.len().max(1)) - 1)
        .copied()
        .unwrap_or(0.0)
}

fn main() {
    let options = options();
    let mut children: Vec<Child> = Vec::new();
    let mut sessions: Vec<Box<dyn Session>> = Vec::new();
    let mut pids = options.pids.clone();
    // Sessions open in parallel: 32 servers starting one after the other
    // took as long as the run.
    let opened: Vec<Result<Opened, String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..options.sessions)
            .map(|_| {
                scope.spawn(|| -> Result<Opened, String> {
                    let (child, mut session): (Option<Child>, Box<dyn Session>) = if options.mode
                        == "http"
                    {
                        (
                            None,
                            Box::new(HttpSession::connect(&options.url, options.token.clone())?),
                        )
                    } else {
                        let (child, session) = spawn(&options.command)?;
                        (Some(child), Box::new(session))
                    };
                    if let Err(err) = open(session.as_mut(), &options.tool, &options.arguments) {
                        if let Some(mut child) = child {
                            let _ = child.kill();
                            let _ = child.wait();
                        }
                        return Err(err);
                    }
                    Ok((child, session))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a session thread panicked".into()))
            })
            .collect()
    });
    let mut failed = None;
    for result in opened {
        match result {
            Ok((child, session)) => {
                if let Some(child) = child {
                    pids.push(child.id());
                    children.push(child);
                }
                sessions.push(session);
            }
            Err(err) => failed = Some(err),
        }
    }
    if let Some(err) = failed {
        for child in &mut children {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = writeln!(std::io::stderr(), "mcp-load: {err}");
        std::process::exit(1);
    }

    let barrier = Arc::new(Barrier::new(options.sessions + 1));
    let start = Instant::now() + Duration::from_millis(100);
    let measure_from = start + Duration::from_secs_f64(options.warmup);
    let end = measure_from + Duration::from_secs_f64(options.seconds);
    let tool = options.tool.clone();
    let arguments = options.arguments.clone();
    let workers: Vec<_> = sessions
        .into_iter()
        .map(|mut session| {
            let barrier = barrier.clone();
            let tool = tool.clone();
            let arguments = arguments.clone();
            std::thread::spawn(move || {
                barrier.wait();
                let mut latencies: Vec<f64> = Vec::new();
                let mut errors = 0usize;
                let mut last_error = None;
                let mut id = 1u64;
                loop {
                    let began = Instant::now();
                    if began >= end {
                        break;
                    }
                    id += 1;
                    match session.call(id, &call_of(id, &tool, &arguments)) {
                        Ok(answer)
                            if answer.get("result").is_some()
                                && answer["result"]["isError"] != json!(true) =>
                        {
                            if began >= measure_from {
                                latencies.push(began.elapsed().as_secs_f64());
                            }
                        }
                        Ok(answer) => {
                            errors += 1;
                            last_error = Some(answer.to_string());
                        }
                        Err(err) => {
                            errors += 1;
                            last_error = Some(err);
                            break;
                        }
                    }
                }
                (latencies, errors, last_error)
            })
        })
        .collect();
    barrier.wait();
    std::thread::sleep(measure_from.saturating_duration_since(Instant::now()));
    let cpu_before: f64 = pids.iter().map(|pid| cpu_seconds(*pid)).sum();
    std::thread::sleep(end.saturating_duration_since(Instant::now()));
    let cpu_after: f64 = pids.iter().map(|pid| cpu_seconds(*pid)).sum();
    let mut latencies = Vec::new();
    let mut errors = 0;
    let mut last_error = None;
    for worker in workers {
        if let Ok((mut l, e, last)) = worker.join() {
            latencies.append(&mut l);
            errors += e;
            last_error = last_error.or(last);
        }
    }
    let peak_rss_kib = pids.iter().map(|pid| peak_rss_kib(*pid)).max().unwrap_or(0);
    for child in &mut children {
        drop(child.stdin.take());
        let _ = child.kill();
        let _ = child.wait();
    }
    latencies.sort_by(f64::total_cmp);
    let calls = latencies.len();
    let cpu = cpu_after - cpu_before;
    let report = json!({
        "mode": options.mode,
        "sessions": options.sessions,
        "seconds": options.seconds,
        "calls": calls,
        "calls_per_s": calls as f64 / options.seconds,
        "p50_ms": percentile(&latencies, 0.50) * 1e3,
        "p99_ms": percentile(&latencies, 0.99) * 1e3,
        "cpu_s": cpu,
        "cpu_per_call_us": if calls > 0 { cpu / calls as f64 * 1e6 } else { 0.0 },
        "peak_rss_kib": peak_rss_kib,
        "processes": pids.len(),
        "errors": errors,
        "last_error": last_error,
    });
    let _ = writeln!(std::io::stdout(), "{report}");
}
