//! The stdio server's process: started in its own process group, watched, and
//! always killed — group and all — whichever way the fetch ends.

use std::io;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStderr};
use tokio::task::JoinHandle;

use agents_core::text::shorten;

/// Owns the child. Dropping it (the fetch future was dropped, e.g. on Ctrl-C)
/// SIGKILLs the whole process group while the leader is still unreaped, so the
/// group id cannot have been reused; tokio's `kill_on_drop` then reaps the leader.
#[derive(Debug)]
pub(crate) struct ChildGuard {
    child: Child,
    /// The child's pid, which is also its process group id.
    #[cfg_attr(not(unix), allow(dead_code))]
    pgid: Option<i32>,
    finished: bool,
}

#[derive(Debug, Clone, Copy)]
enum GroupSignal {
    Term,
    Kill,
}

impl ChildGuard {
    pub(crate) fn new(child: Child) -> Self {
        let pgid = child.id().and_then(|pid| i32::try_from(pid).ok());
        Self {
            child,
            pgid,
            finished: false,
        }
    }

    fn signal_group(&self, signal: GroupSignal) {
        #[cfg(unix)]
        if let Some(pgid) = self.pgid {
            use nix::sys::signal::{Signal, killpg};
            let signal = match signal {
                GroupSignal::Term => Signal::SIGTERM,
                GroupSignal::Kill => Signal::SIGKILL,
            };
            // ESRCH (nobody left in the group) is the normal case after a clean exit.
            let _ = killpg(nix::unistd::Pid::from_raw(pgid), signal);
        }
        #[cfg(not(unix))]
        let _ = signal;
    }

    /// Waits up to `within` for the leader to exit (reaping it).
    /// True when the server process has exited.
    pub(crate) fn has_exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    pub(crate) async fn wait(&mut self, within: Duration) -> Option<ExitStatus> {
        tokio::time::timeout(within, self.child.wait())
            .await
            .ok()
            .and_then(Result::ok)
    }

    /// Stops the group after an error or a timeout: SIGTERM, then SIGKILL if
    /// the leader is still there after `grace`; reaps the leader and kills what
    /// is left of the group.
    pub(crate) async fn kill(&mut self, grace: Duration) {
        self.signal_group(GroupSignal::Term);
        if self.wait(grace).await.is_none() {
            self.signal_group(GroupSignal::Kill);
            let _ = self.child.start_kill();
            let _ = self.wait(Duration::from_secs(2)).await;
        }
        self.signal_group(GroupSignal::Kill);
        self.finished = true;
    }

    /// The MCP stdio shutdown sequence, after stdin has been closed: wait for the
    /// server to exit, then SIGTERM, then SIGKILL. Whatever is left of its group
    /// (grandchildren such as the `node` behind `npx`) is killed at the end.
    pub(crate) async fn shutdown(&mut self, grace: Duration) {
        if self.wait(grace).await.is_none() {
            tracing::debug!("mcp server did not exit after stdin closed, sending SIGTERM");
            self.signal_group(GroupSignal::Term);
            if self.wait(grace).await.is_none() {
                tracing::debug!("mcp server ignored SIGTERM, sending SIGKILL");
                self.signal_group(GroupSignal::Kill);
                let _ = self.child.start_kill();
                let _ = self.wait(grace).await;
            }
        }
        // The leader is reaped here; a group id stays reserved while any member
        // lives, so this cannot hit an unrelated process group.
        self.signal_group(GroupSignal::Kill);
        self.finished = true;
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if !self.finished {
            self.signal_group(GroupSignal::Kill);
        }
    }
}

/// What the client saw on the server's stdout besides JSON-RPC.
#[derive(Debug, Default, Clone)]
pub(crate) struct StdoutReport {
    pub(crate) garbage_lines: usize,
    pub(crate) first_garbage: Option<String>,
    pub(crate) oversized: bool,
    /// The `tools/list` pages seen so far hold more than the allowed tools.
    pub(crate) too_many_tools: bool,
    /// The watcher cut the stream (any of the above, or a flood of garbage).
    pub(crate) aborted: bool,
    /// Tools taken out of `tools/list` pages before rmcp saw them (too deep or
    /// not a valid MCP `Tool`): (name as given, reason). At most
    /// [`MALFORMED_KEPT`] are kept; the count goes on.
    pub(crate) malformed_tools: Vec<(String, String)>,
    pub(crate) malformed_count: usize,
}

/// How many left-out tools [`StdoutReport`] describes one by one.
const MALFORMED_KEPT: usize = 100;

/// Non-JSON lines tolerated before giving up (some servers print a banner).
const GARBAGE_LINES_TOLERATED: usize = 8;
/// How much of a non-JSON line or of a left-out tool's name a message shows,
/// in bytes (what [`agents_core::text::shorten`] keeps).
const SAMPLE_SHOWN: usize = 80;
/// How much of a non-JSON line is looked at.
const SAMPLE_BYTES: usize = 256;

/// Sits between the server's stdout and rmcp, checking each line before rmcp
/// may see its end (and so before rmcp parses it):
/// - rmcp silently skips lines that are not JSON and drops oversized ones, which
///   would turn a broken server into a silent wait for the timeout;
/// - rmcp turns a `tools/list` page into typed tools at about 25 times its size
///   in memory, so the tools in a page are counted first (without building
///   them) and a page that goes over `max_tools` never reaches it.
///
/// In each case the stream is ended with an error and the reason is recorded.
/// Memory: one line (at most `max_line` bytes) and one read chunk. A line
/// answering a lane call goes to it instead ([`crate::lane`]).
pub(crate) type WatchedStdout<R> = crate::sift::Sifted<R, StdoutWatch>;

/// The sieve of [`WatchedStdout`].
#[derive(Debug)]
pub(crate) struct StdoutWatch {
    max_line: usize,
    max_tools: usize,
    max_tool_depth: usize,
    tools_seen: usize,
    report: Arc<Mutex<StdoutReport>>,
    /// The lane calls waiting for an answer ([`crate::lane`]): a line
    /// answering one goes to it, not to rmcp.
    lane: Option<Arc<crate::lane::Waiting>>,
}

impl<R> WatchedStdout<R> {
    pub(crate) fn watch(
        inner: R,
        max_line: usize,
        max_tools: usize,
        max_tool_depth: usize,
    ) -> (Self, Arc<Mutex<StdoutReport>>) {
        let report = Arc::new(Mutex::new(StdoutReport::default()));
        let watch = StdoutWatch {
            max_line,
            max_tools,
            max_tool_depth,
            tools_seen: 0,
            report: report.clone(),
            lane: None,
        };
        (Self::new(inner, watch), report)
    }

    /// Hands each answer to a lane call to `waiting`, and closes it when
    /// the stream ends.
    pub(crate) fn with_lane(mut self, waiting: Arc<crate::lane::Waiting>) -> Self {
        self.sieve_mut().lane = Some(waiting);
        self
    }
}

impl crate::sift::Sieve for StdoutWatch {
    /// rmcp counts the newline too: a line must end before it would
    /// discard it.
    fn max_line(&self) -> usize {
        self.max_line
    }

    fn long_line(&mut self) -> io::Result<()> {
        let mut report = lock(&self.report);
        report.oversized = true;
        report.aborted = true;
        Err(invalid_data(format!(
            "message larger than {} bytes",
            self.max_line
        )))
    }

    /// Checks the line and moves it (or its repaired form) to `ready`, with
    /// its newline, or to the lane call it answers. A line is handed on
    /// whole: a tools page may be rewritten first.
    fn line(&mut self, line: &[u8], ready: &mut Vec<u8>) -> io::Result<()> {
        self.check_line(line)?;
        let repaired = self.repair_tools_page(line);
        let checked = repaired.as_deref().unwrap_or(line);
        if !self.lane.as_ref().is_some_and(|lane| lane.take(checked)) {
            ready.extend_from_slice(checked);
            ready.push(b'\n');
        }
        Ok(())
    }

    /// No lane call is answered any more.
    fn ended(&mut self) {
        if let Some(waiting) = &self.lane {
            waiting.close();
        }
    }
}

impl StdoutWatch {
    /// A `tools/list` page with tools that are too deep or not valid MCP
    /// tools, without them (each recorded in the report); `None` when the
    /// line is not such a page or every tool is fine.
    fn repair_tools_page(&mut self, line: &[u8]) -> Option<Vec<u8>> {
        let body = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        repair_message(body, self.max_tool_depth, &self.report)
    }

    fn check_line(&mut self, line: &[u8]) -> io::Result<()> {
        let body = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        match body.iter().find(|b| !b.is_ascii_whitespace()) {
            None => Ok(()),
            Some(b'{') => {
                if let Some(count) = count_listed_tools(body) {
                    self.tools_seen = self.tools_seen.saturating_add(count);
                    if self.tools_seen > self.max_tools {
                        let mut report = lock(&self.report);
                        report.too_many_tools = true;
                        report.aborted = true;
                        return Err(invalid_data(format!("more than {} tools", self.max_tools)));
                    }
                }
                Ok(())
            }
            Some(b'[') => Ok(()),
            Some(_) => {
                let head = line.get(..SAMPLE_BYTES).unwrap_or(line);
                let sample =
                    shorten(String::from_utf8_lossy(head).trim(), SAMPLE_SHOWN).into_owned();
                tracing::warn!(line = %sample, "mcp server wrote a non-JSON-RPC line to stdout");
                let mut report = lock(&self.report);
                report.garbage_lines += 1;
                report.first_garbage.get_or_insert(sample);
                if report.garbage_lines > GARBAGE_LINES_TOLERATED {
                    report.aborted = true;
                    return Err(invalid_data("too many lines that are not JSON-RPC".into()));
                }
                Ok(())
            }
        }
    }
}

/// One JSON-RPC message as it may reach rmcp, or `None` when it can go as
/// it is. Each left-out tool is recorded in `report`. Shared by the stdio
/// watcher and the HTTP client (`http::RepairingClient`):
/// - a `tools/list` answer loses only its tools that are too deep, not
///   valid MCP tools, or not valid UTF-8; a tool's `execution` (MCP
///   2025-11-25, which rmcp's `Tool` does not keep) is moved under its
///   `_meta` as [`EXECUTION_META`];
/// - any other answer that is not valid UTF-8 becomes a JSON-RPC error
///   for its request, saying where (rmcp would skip it, and the request
///   wait for its timeout);
/// - any other message that is not valid UTF-8 (a notification, a
///   request) has its invalid bytes replaced with U+FFFD.
pub(crate) fn repair_message(
    body: &[u8],
    max_depth: usize,
    report: &Mutex<StdoutReport>,
) -> Option<Vec<u8>> {
    use std::borrow::Cow;
    // Invalid bytes masked one for one (`?`), so that what the JSON parser
    // finds in the text is where it is in `body`.
    let (text, invalid): (Cow<'_, str>, _) = match std::str::from_utf8(body) {
        Ok(text) => (Cow::Borrowed(text), None),
        Err(err) => {
            let at = err.valid_up_to();
            let byte = body.get(at).copied().unwrap_or_default();
            (Cow::Owned(masked(body)), Some((at, byte)))
        }
    };
    if let Some((repaired, dropped)) = repair_tools_page(&text, body, invalid.is_some(), max_depth)
    {
        let mut report = lock(report);
        for (name, reason) in dropped {
            // Debug only: `report` carries them to the caller (the first
            // hundred and the count), and a server listing thousands of broken
            // tools would otherwise print a line for each.
            tracing::debug!(tool = %name, "mcp server listed a tool that is left out: {reason}");
            report.malformed_count += 1;
            if report.malformed_tools.len() < MALFORMED_KEPT {
                report.malformed_tools.push((name, reason));
            }
        }
        return Some(repaired);
    }
    let (at, byte) = invalid?;
    let what = format!("byte 0x{byte:02x} at offset {at}");
    if let Some(id) = response_id(&text) {
        tracing::debug!("mcp server answered with a message that is not valid UTF-8 ({what})");
        return Some(invalid_utf8_error(&id, &what).into_bytes());
    }
    tracing::debug!("mcp server sent a message that is not valid UTF-8 ({what}); read with U+FFFD");
    Some(String::from_utf8_lossy(body).into_owned().into_bytes())
}

/// `_meta` key under which a listed tool's `execution` reaches
/// [`crate::list`] (rmcp's `Tool` has no such field and drops it).
pub(crate) const EXECUTION_META: &str = "io.cleveragents/execution";

/// `error.data` key of the error [`repair_message`] puts in place of an
/// answer that is not valid UTF-8; its value is the offset.
pub(crate) const INVALID_UTF8_DATA: &str = "io.cleveragents/invalid_utf8";

/// `bytes` with every byte of an invalid UTF-8 sequence replaced by `?`:
/// valid UTF-8 of the same length, each byte where it was.
fn masked(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        text.push_str(chunk.valid());
        text.extend(std::iter::repeat_n('?', chunk.invalid().len()));
    }
    text
}

/// The raw `id` of `text` when it is a JSON-RPC answer (`result` or `error`).
fn response_id(text: &str) -> Option<String> {
    use serde_json::value::RawValue;
    let message: std::collections::BTreeMap<String, &RawValue> = serde_json::from_str(text).ok()?;
    let answer = message.contains_key("result") || message.contains_key("error");
    let id = message.get("id").filter(|_| answer)?;
    Some(id.get().to_owned())
}

/// A JSON-RPC error answering the request `id` (raw JSON) in place of an
/// answer that is not valid UTF-8.
pub(crate) fn invalid_utf8_error(id: &str, what: &str) -> String {
    let error = serde_json::json!({
        "code": -32700,
        "message": format!("its answer is not valid UTF-8 ({what})"),
        "data": {INVALID_UTF8_DATA: what},
    });
    format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{error}}}"#)
}

fn invalid_data(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

/// The length of `result.tools` when `line` is a response carrying that array,
/// found without building the tools.
fn count_listed_tools(line: &[u8]) -> Option<usize> {
    #[derive(serde::Deserialize)]
    struct Response {
        result: Option<ResultBody>,
    }
    #[derive(serde::Deserialize)]
    struct ResultBody {
        tools: Option<Count>,
    }
    struct Count(usize);
    impl<'de> serde::Deserialize<'de> for Count {
        fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct Counter;
            impl<'de> serde::de::Visitor<'de> for Counter {
                type Value = Count;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("an array")
                }
                fn visit_seq<A: serde::de::SeqAccess<'de>>(
                    self,
                    mut seq: A,
                ) -> Result<Count, A::Error> {
                    let mut count = 0usize;
                    while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                        count += 1;
                    }
                    Ok(Count(count))
                }
            }
            deserializer.deserialize_seq(Counter)
        }
    }
    // Cheap pre-filter: most messages are not tool pages.
    memchr::memmem::find(line, b"\"tools\"")?;
    let response: Response = match serde_json::from_slice(line) {
        Ok(response) => response,
        // Counted all the same: its tools are left out one by one.
        Err(_) if std::str::from_utf8(line).is_err() => serde_json::from_str(&masked(line)).ok()?,
        Err(_) => return None,
    };
    Some(response.result?.tools?.0)
}

/// A tool taken out of a page: (name as given, reason).
type Dropped = (String, String);

/// Nesting depth of the JSON text `json` (an object or array is one level),
/// in one pass over the bytes without building anything.
fn json_depth(json: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &b in json {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// The `tools/list` answer `text` without its tools that are deeper than
/// `max_depth`, do not parse as an MCP `Tool`, or (when `masked`: `text` is
/// `original` with its invalid UTF-8 masked) are not valid UTF-8 in
/// `original`; and each kept tool's `execution` moved under its `_meta`
/// ([`EXECUTION_META`]). With what was dropped (name, reason). `None` when
/// `text` is no such answer, or it goes to rmcp as it is.
/// Tools are split out as raw text (serde_json skips raw values without
/// recursing), so a tool nested thousands deep costs linear time and never
/// reaches rmcp, whose parse of the whole message would fail and lose the
/// page.
fn repair_tools_page(
    text: &str,
    original: &[u8],
    masked: bool,
    max_depth: usize,
) -> Option<(Vec<u8>, Vec<Dropped>)> {
    use serde_json::value::RawValue;
    use std::borrow::Cow;
    // Key order does not matter to a JSON-RPC peer.
    type RawMap<'a> = std::collections::BTreeMap<String, &'a RawValue>;
    if !text.contains("\"tools\"") {
        return None;
    }
    let mut message: RawMap<'_> = serde_json::from_str(text).ok()?;
    let mut result: RawMap<'_> = serde_json::from_str(message.get("result")?.get()).ok()?;
    let tools: Vec<&RawValue> = serde_json::from_str(result.get("tools")?.get()).ok()?;
    let mut kept: Vec<Cow<'_, RawValue>> = Vec::with_capacity(tools.len());
    let mut dropped = Vec::new();
    let mut changed = masked;
    for tool in tools {
        let raw = tool.get();
        let reason = if json_depth(raw.as_bytes()) > max_depth {
            Some(format!("nested deeper than {max_depth} levels"))
        } else if let Some(what) = masked
            .then(|| invalid_utf8_in(text, raw, original))
            .flatten()
        {
            Some(format!("not valid UTF-8 ({what} of the server's answer)"))
        } else {
            serde_json::from_str::<rmcp::model::Tool>(raw)
                .err()
                .map(|err| format!("not a valid MCP tool: {}", shorten(&err.to_string(), 200)))
        };
        if let Some(reason) = reason {
            dropped.push((tool_name(raw), reason));
            changed = true;
            continue;
        }
        match with_execution_in_meta(raw) {
            Some(moved) => {
                kept.push(Cow::Owned(moved));
                changed = true;
            }
            None => kept.push(Cow::Borrowed(tool)),
        }
    }
    if !changed {
        return None;
    }
    let kept = serde_json::value::to_raw_value(&kept).ok()?;
    result.insert("tools".to_owned(), &kept);
    let result = serde_json::value::to_raw_value(&result).ok()?;
    message.insert("result".to_owned(), &result);
    Some((serde_json::to_vec(&message).ok()?, dropped))
}

/// Where the first invalid UTF-8 byte of `tool` is in `original`, when
/// there is one: `tool` is a slice of `text`, which is `original` masked
/// byte for byte.
fn invalid_utf8_in(text: &str, tool: &str, original: &[u8]) -> Option<String> {
    let start = (tool.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    let bytes = original.get(start..start.checked_add(tool.len())?)?;
    let err = std::str::from_utf8(bytes).err()?;
    let at = err.valid_up_to();
    let byte = bytes.get(at).copied().unwrap_or_default();
    Some(format!("byte 0x{byte:02x} at offset {}", start + at))
}

/// The tool `raw` with its `execution` moved into its `_meta` as
/// [`EXECUTION_META`]; `None` when it has no `execution` (or a `_meta` that
/// is no object, which rmcp refuses anyway).
fn with_execution_in_meta(raw: &str) -> Option<Box<serde_json::value::RawValue>> {
    use serde_json::value::RawValue;
    type RawMap<'a> = std::collections::BTreeMap<String, &'a RawValue>;
    if !raw.contains("\"execution\"") {
        return None;
    }
    let mut tool: RawMap<'_> = serde_json::from_str(raw).ok()?;
    let execution = tool.remove("execution")?;
    let mut meta: RawMap<'_> = match tool.get("_meta") {
        Some(meta) => serde_json::from_str(meta.get()).ok()?,
        None => RawMap::new(),
    };
    meta.insert(EXECUTION_META.to_owned(), execution);
    let meta = serde_json::value::to_raw_value(&meta).ok()?;
    tool.insert("_meta".to_owned(), &meta);
    serde_json::value::to_raw_value(&tool).ok()
}

/// The `name` of a raw tool, bounded, or `?` when it has none.
fn tool_name(tool: &str) -> String {
    #[derive(serde::Deserialize)]
    struct Named {
        name: Option<String>,
    }
    serde_json::from_str::<Named>(tool)
        .ok()
        .and_then(|named| named.name)
        .map(|name| shorten(&name, SAMPLE_SHOWN).into_owned())
        .unwrap_or_else(|| "?".to_owned())
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

pub(crate) fn read_report(report: &Mutex<StdoutReport>) -> StdoutReport {
    lock(report).clone()
}

/// The last bytes the server wrote to stderr, for error messages.
#[derive(Debug)]
pub(crate) struct StderrTail {
    tail: Arc<Mutex<Vec<u8>>>,
    task: JoinHandle<()>,
    secrets: Vec<String>,
}

const STDERR_TAIL_BYTES: usize = 4096;

impl StderrTail {
    /// Drains `stderr` so the server never blocks on a full pipe, logging it at
    /// debug level and keeping only the last few KiB; both masked of
    /// `secrets` (a server may print the environment it was given).
    pub(crate) fn spawn(mut stderr: ChildStderr, server: String, secrets: Vec<String>) -> Self {
        let tail = Arc::new(Mutex::new(Vec::new()));
        let keep = tail.clone();
        let secrets_kept = secrets.clone();
        let task = tokio::spawn(async move {
            let mut chunk = vec![0u8; 4096];
            loop {
                match stderr.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let bytes = chunk.get(..n).unwrap_or_default();
                        let shown = agents_core::redact::scrub(
                            String::from_utf8_lossy(bytes).trim_end(),
                            &secrets,
                        );
                        tracing::debug!(server = %server, stderr = %shown, "mcp server stderr");
                        let mut tail = lock(&keep);
                        tail.extend_from_slice(bytes);
                        if tail.len() > STDERR_TAIL_BYTES {
                            let cut = tail.len() - STDERR_TAIL_BYTES;
                            // Up to the end of the line the cut falls in: a
                            // line's tail could be the end of a secret that
                            // masking no longer recognises.
                            let cut = tail
                                .iter()
                                .skip(cut)
                                .position(|&b| b == b'\n')
                                .map_or(cut, |at| cut + at + 1);
                            tail.drain(..cut);
                        }
                    }
                }
            }
        });
        Self {
            tail,
            task,
            secrets: secrets_kept,
        }
    }

    /// The last few lines, on one line; waits briefly for the pipe to drain.
    pub(crate) async fn text(&mut self) -> String {
        let _ = tokio::time::timeout(Duration::from_millis(300), &mut self.task).await;
        let bytes = lock(&self.tail).clone();
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .collect();
        let last = lines
            .get(lines.len().saturating_sub(3)..)
            .unwrap_or_default();
        // Masked before it is cut, so a cut cannot leave half a secret.
        shorten(
            &agents_core::redact::scrub(&last.join(" | "), &self.secrets),
            500,
        )
        .into_owned()
    }
}

impl Drop for StderrTail {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    fn scan_all(
        chunks: &[&[u8]],
        max_line: usize,
        max_tools: usize,
    ) -> (io::Result<Vec<u8>>, StdoutReport) {
        let (mut watched, report) =
            WatchedStdout::watch(tokio::io::empty(), max_line, max_tools, 64);
        let mut passed = Vec::new();
        for chunk in chunks {
            match watched.scan_taking(chunk) {
                Ok(ready) => passed.extend_from_slice(&ready),
                Err(err) => return (Err(err), read_report(&report)),
            }
        }
        (Ok(passed), read_report(&report))
    }

    #[test]
    fn depth_counts_brackets_outside_strings_only() {
        assert_eq!(json_depth(b"1"), 0);
        assert_eq!(json_depth(br#"{"a":[1,{"b":2}]}"#), 3);
        assert_eq!(json_depth(br#"{"a":"[[[{{{","b":"\"[["}"#), 1);
        assert_eq!(json_depth(br#"[[],[[]]]"#), 3);
    }

    fn page(text: &str) -> Option<(Vec<u8>, Vec<Dropped>)> {
        repair_tools_page(text, text.as_bytes(), false, 64)
    }

    #[test]
    fn a_page_without_bad_tools_is_passed_unchanged() {
        let line = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}}"#;
        assert!(page(line).is_none());
        let (repaired, dropped) = page(
            r#"{"jsonrpc":"2.0","id":1,"result":{"nextCursor":"c","tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"b"}]}}"#,
        )
        .unwrap();
        assert_eq!(dropped.len(), 1);
        assert_eq!(dropped[0].0, "b");
        let repaired: serde_json::Value = serde_json::from_slice(&repaired).unwrap();
        assert_eq!(repaired["result"]["nextCursor"], "c");
        assert_eq!(repaired["result"]["tools"].as_array().unwrap().len(), 1);
        assert_eq!(repaired["id"], 1);
    }

    #[test]
    fn a_tools_execution_is_moved_under_its_meta() {
        let (repaired, dropped) = page(
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{},"execution":{"taskSupport":"required"},"_meta":{"k":1}},{"name":"b","inputSchema":{}}]}}"#,
        )
        .unwrap();
        assert!(dropped.is_empty());
        let repaired: serde_json::Value = serde_json::from_slice(&repaired).unwrap();
        let tools = &repaired["result"]["tools"];
        assert_eq!(tools[0]["_meta"][EXECUTION_META]["taskSupport"], "required");
        assert_eq!(tools[0]["_meta"]["k"], 1);
        assert!(tools[0].get("execution").is_none());
        assert_eq!(tools[1]["name"], "b");
    }

    #[test]
    fn invalid_utf8_loses_its_tool_fails_an_answer_and_is_replaced_elsewhere() {
        let report = Mutex::new(StdoutReport::default());
        let page = b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"bad\",\"description\":\"x\xff\",\"inputSchema\":{}},{\"name\":\"ok\",\"inputSchema\":{}}]}}";
        let repaired = repair_message(page, 64, &report).unwrap();
        let repaired: serde_json::Value = serde_json::from_slice(&repaired).unwrap();
        assert_eq!(repaired["result"]["tools"].as_array().unwrap().len(), 1);
        assert_eq!(repaired["result"]["tools"][0]["name"], "ok");
        let at = page.iter().position(|&b| b == 0xff).unwrap();
        assert_eq!(
            read_report(&report).malformed_tools,
            [(
                "bad".to_owned(),
                format!("not valid UTF-8 (byte 0xff at offset {at} of the server's answer)")
            )]
        );

        let answer = b"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"caf\xe9\"}]}}";
        let error = repair_message(answer, 64, &report).unwrap();
        let error: serde_json::Value = serde_json::from_slice(&error).unwrap();
        assert_eq!(error["id"], 7);
        assert_eq!(
            error["error"]["message"],
            "its answer is not valid UTF-8 (byte 0xe9 at offset 71)"
        );

        let note = b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"caf\xe9\"}}";
        let note = repair_message(note, 64, &report).unwrap();
        let note: serde_json::Value = serde_json::from_slice(&note).unwrap();
        assert_eq!(note["params"]["data"], "caf\u{fffd}");
        assert!(repair_message(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#, 64, &report).is_none());
    }

    #[test]
    fn json_lines_split_across_reads_pass_unchanged() {
        let input: &[&[u8]] = &[b"{\"jsonrpc\":", b"\"2.0\"}\n\n  [1]\r\n\xEF\xBB\xBF{}\n"];
        let (passed, report) = scan_all(input, 1 << 20, 10);
        assert_eq!(passed.unwrap(), input.concat());
        assert_eq!(report.garbage_lines, 0);
    }

    #[test]
    fn a_banner_is_tolerated_but_a_flood_is_not() {
        let (result, report) = scan_all(&[b"Server started\n{}\n"], 1 << 20, 10);
        assert!(result.is_ok());
        assert_eq!(report.first_garbage.as_deref(), Some("Server started"));
        let flood = b"nope\n".repeat(GARBAGE_LINES_TOLERATED + 1);
        let (result, report) = scan_all(&[&flood], 1 << 20, 10);
        assert!(result.is_err());
        assert!(report.aborted);
    }

    #[test]
    fn oversized_lines_end_the_stream() {
        let (result, report) = scan_all(&[b"{\"a\":", b"\"0123456789\"}"], 12, 10);
        assert!(result.is_err());
        assert!(report.oversized);
        let (result, _) = scan_all(&[b"{\"a\":1}\n", b"{\"b\":2}\n"], 12, 10);
        assert!(result.is_ok());
    }

    #[test]
    fn tools_are_counted_across_pages_before_rmcp_sees_them() {
        let page = |n: usize| {
            let tools: Vec<String> = (0..n)
                .map(|i| format!("{{\"name\":\"t{i}\",\"inputSchema\":{{}}}}"))
                .collect();
            format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{\"tools\":[{}]}}}}\n",
                tools.join(",")
            )
            .into_bytes()
        };
        assert_eq!(count_listed_tools(&page(3)), Some(3));
        assert_eq!(
            count_listed_tools(br#"{"result":{"capabilities":{"tools":{}}}}"#),
            None
        );
        let (result, report) = scan_all(&[&page(6), &page(4)], 1 << 20, 10);
        assert!(result.is_ok());
        assert!(!report.too_many_tools);
        let (result, report) = scan_all(&[&page(6), &page(5)], 1 << 20, 10);
        assert!(result.is_err());
        assert!(report.too_many_tools);
    }

    #[tokio::test]
    async fn reads_pass_through_and_errors_end_the_stream() {
        let input = b"{\"a\":1}\n{\"b\":2}\n".repeat(2000);
        let (mut watched, _) = WatchedStdout::watch(&input[..], 1 << 20, 10, 64);
        let mut out = Vec::new();
        watched.read_to_end(&mut out).await.unwrap();
        assert_eq!(out, input);
        let garbage = b"garbage\n".repeat(20);
        let (mut watched, report) = WatchedStdout::watch(&garbage[..], 1 << 20, 10, 64);
        assert!(watched.read_to_end(&mut Vec::new()).await.is_err());
        assert!(read_report(&report).aborted);
    }
}
