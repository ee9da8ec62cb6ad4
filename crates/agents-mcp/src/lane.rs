//! The short path for `tools/call` on a stdio session: the request is
//! written and its answer read beside rmcp's own traffic, on the same pipes,
//! without going through rmcp's service loop.
//!
//! A proxied call spent most of the gateway's own time in rmcp: a message
//! hopping through its service task and channels, and its answer parsed
//! against every type a server may answer with (an untagged enum, which
//! builds and drops a serde error for each variant tried) before the one the
//! caller waits for. The lane knows what it waits for:
//!
//! - the request goes out under an id of its own ([`ID_PREFIX`] and a
//!   number), which rmcp, whose ids are numbers, never uses;
//! - the watcher of the server's stdout ([`crate::process::WatchedStdout`])
//!   hands a line answering such an id to the waiting call ([`Waiting`])
//!   instead of to rmcp, after the same checks as every line (size, UTF-8);
//! - the answer is parsed once, straight into a tool result.
//!
//! rmcp keeps everything else: `initialize`, listings, notifications,
//! requests from the server (whatever their id), calls that listen for
//! progress, and every call of a session on a version without `initialize`
//! (2026-07-28 on), whose requests carry metadata rmcp adds. Both write to
//! the server's stdin through one [`LineWriter`], a whole message at a
//! time, so neither cuts into the other's.
//!
//! When the stream ends (the server exited, or the watcher ended it) every
//! waiting call gets a closed channel, as an rmcp request gets a closed
//! transport, and no new one is taken.

use std::collections::HashMap;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::oneshot;

use crate::process::lock;

/// What a lane request id starts with: a string, where rmcp's are numbers.
pub(crate) const ID_PREFIX: &str = "agents-lane-";

type BoxedWrite = Pin<Box<dyn AsyncWrite + Send>>;

/// The stream, and what of the message being written has not gone out yet.
struct Stream {
    write: BoxedWrite,
    /// Kept when a writer gives up half way (its future dropped: a timeout,
    /// a cancelled call), so the next one finishes that message before its
    /// own instead of following half a line.
    unwritten: Vec<u8>,
    written: usize,
}

/// One writer shared by rmcp and a lane (here, and the gateway's for its
/// client): each message is written whole under its lock (a FIFO lock: no
/// writer waits forever), and one dropped half way is finished by the
/// next. rmcp's side owns the stream: when rmcp shuts its writer down or
/// drops it, the stream is dropped (the other end sees it end), whoever
/// else still holds a handle.
#[derive(Clone)]
pub struct LineWriter {
    inner: Arc<tokio::sync::Mutex<Option<Stream>>>,
}

impl std::fmt::Debug for LineWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineWriter").finish_non_exhaustive()
    }
}

/// A message buffer kept longer than this is let go once written.
const KEEP_BUFFER: usize = 1 << 20;

impl LineWriter {
    pub fn new(write: impl AsyncWrite + Send + 'static) -> Self {
        let stream = Stream {
            write: Box::pin(write),
            unwritten: Vec::new(),
            written: 0,
        };
        Self {
            inner: Arc::new(tokio::sync::Mutex::new(Some(stream))),
        }
    }

    /// Writes `message` (one or more whole lines) after whatever an earlier
    /// writer left half written, and flushes it.
    pub async fn send(&self, message: &[u8]) -> io::Result<()> {
        let mut inner = self.inner.lock().await;
        let Some(stream) = inner.as_mut() else {
            return Err(io::ErrorKind::BrokenPipe.into());
        };
        stream.unwritten.extend_from_slice(message);
        while let Some(rest) = stream
            .unwritten
            .get(stream.written..)
            .filter(|rest| !rest.is_empty())
        {
            let n = stream.write.write(rest).await?;
            if n == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            stream.written += n;
        }
        stream.unwritten.clear();
        stream.written = 0;
        if stream.unwritten.capacity() > KEEP_BUFFER {
            stream.unwritten = Vec::new();
        }
        stream.write.flush().await
    }

    /// Finishes a message left half written, shuts the stream down and
    /// drops it.
    async fn close(&self) -> io::Result<()> {
        let finished = self.send(b"").await;
        let taken = self.inner.lock().await.take();
        match taken {
            Some(mut stream) => finished.and(stream.write.shutdown().await),
            None => Ok(()),
        }
    }

    /// The writer rmcp's transport is given: it keeps what rmcp writes
    /// until rmcp flushes (the end of each message), then sends it whole.
    pub fn for_rmcp(&self) -> MessageWrite {
        MessageWrite {
            writer: self.clone(),
            buffer: Vec::new(),
            pending: None,
        }
    }
}

/// rmcp's side of a [`LineWriter`] (see [`LineWriter::for_rmcp`]).
pub struct MessageWrite {
    writer: LineWriter,
    buffer: Vec<u8>,
    /// The send or close under way.
    pending: Option<BoxFuture<'static, io::Result<()>>>,
}

impl std::fmt::Debug for MessageWrite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MessageWrite").finish_non_exhaustive()
    }
}

impl MessageWrite {
    fn drive(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if let Some(pending) = self.pending.as_mut() {
            let done = std::task::ready!(pending.as_mut().poll(cx));
            self.pending = None;
            done?;
        }
        Poll::Ready(Ok(()))
    }
}

/// rmcp lets go of its writer (its transport closed or dropped): the stream
/// is closed for everyone, as it was when rmcp owned it alone.
impl Drop for MessageWrite {
    fn drop(&mut self) {
        match self.writer.inner.try_lock() {
            Ok(mut inner) => drop(inner.take()),
            // Someone is writing: closed once they are done.
            Err(_) => {
                if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                    let writer = self.writer.clone();
                    runtime.spawn(async move { drop(writer.inner.lock().await.take()) });
                }
            }
        }
    }
}

impl AsyncWrite for MessageWrite {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().buffer.extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            std::task::ready!(this.drive(cx))?;
            if this.buffer.is_empty() {
                return Poll::Ready(Ok(()));
            }
            let message = std::mem::take(&mut this.buffer);
            let writer = this.writer.clone();
            this.pending = Some(Box::pin(async move { writer.send(&message).await }));
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        std::task::ready!(self.as_mut().poll_flush(cx))?;
        let this = self.get_mut();
        let writer = this.writer.clone();
        this.pending = Some(Box::pin(async move { writer.close().await }));
        this.drive(cx)
    }
}

/// The lane calls waiting for their answer, by number.
#[derive(Debug, Default)]
pub(crate) struct Waiting {
    state: Mutex<WaitingState>,
}

#[derive(Debug, Default)]
struct WaitingState {
    closed: bool,
    calls: HashMap<u64, oneshot::Sender<Vec<u8>>>,
}

impl Waiting {
    /// Registers call `number`; `None` once the stream has ended.
    fn expect(&self, number: u64) -> Option<oneshot::Receiver<Vec<u8>>> {
        let mut state = lock(&self.state);
        if state.closed {
            return None;
        }
        let (sender, receiver) = oneshot::channel();
        state.calls.insert(number, sender);
        Some(receiver)
    }

    fn forget(&self, number: u64) {
        lock(&self.state).calls.remove(&number);
    }

    /// Takes `line` when it answers a lane call: given to the call waiting
    /// for it, or dropped when none is (it gave up). `false` leaves the line
    /// to rmcp.
    pub(crate) fn take(&self, line: &[u8]) -> bool {
        let Some(number) = answered_call(line) else {
            return false;
        };
        if let Some(sender) = lock(&self.state).calls.remove(&number) {
            let _ = sender.send(line.to_vec());
        }
        true
    }

    /// The stream ended: every waiting call is told (its channel closes),
    /// and no new one is taken.
    pub(crate) fn close(&self) {
        let mut state = lock(&self.state);
        state.closed = true;
        state.calls.clear();
    }
}

/// The number of the lane call `line` answers, if it answers one.
fn answered_call(line: &[u8]) -> Option<u64> {
    #[derive(serde::Deserialize)]
    struct Head<'a> {
        #[serde(borrow)]
        id: Option<std::borrow::Cow<'a, str>>,
        /// A request of the server's (whatever its id) is not an answer.
        method: Option<serde::de::IgnoredAny>,
    }
    // Cheap pre-filter: almost every other line has no such string.
    memchr::memmem::find(line, ID_PREFIX.as_bytes())?;
    let head: Head<'_> = serde_json::from_slice(line).ok()?;
    if head.method.is_some() {
        return None;
    }
    head.id?.strip_prefix(ID_PREFIX)?.parse().ok()
}

/// A session's lane: its writer and its waiting calls.
#[derive(Clone, Debug)]
pub(crate) struct Lane {
    pub(crate) writer: LineWriter,
    pub(crate) waiting: Arc<Waiting>,
}

/// Numbers lane calls, across sessions (an answer names the call).
static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A lane call ended without its answer: the stream ended, or writing the
/// request failed.
#[derive(Debug)]
pub(crate) struct Closed;

impl Lane {
    /// Sends `tools/call` for `tool` and waits for the answer line.
    /// Dropping the future before the answer (a timeout, the caller gone)
    /// tells the server with `notifications/cancelled`.
    pub(crate) async fn call(
        &self,
        tool: &str,
        arguments: Option<&rmcp::model::JsonObject>,
    ) -> Result<Vec<u8>, Closed> {
        #[derive(serde::Serialize)]
        struct Request<'a> {
            jsonrpc: &'static str,
            id: &'a str,
            method: &'static str,
            params: Params<'a>,
        }
        #[derive(serde::Serialize)]
        struct Params<'a> {
            name: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            arguments: Option<&'a rmcp::model::JsonObject>,
        }
        let number = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let id = format!("{ID_PREFIX}{number}");
        let request = Request {
            jsonrpc: "2.0",
            id: &id,
            method: "tools/call",
            params: Params {
                name: tool,
                arguments,
            },
        };
        let mut line = serde_json::to_vec(&request).map_err(|_| Closed)?;
        line.push(b'\n');
        let answer = self.waiting.expect(number).ok_or(Closed)?;
        let mut unanswered = Unanswered {
            lane: self,
            number: Some(number),
        };
        if self.writer.send(&line).await.is_err() {
            return Err(Closed);
        }
        let answer = answer.await.map_err(|_| Closed);
        unanswered.number = None;
        answer
    }
}

/// A lane call not answered yet: dropped so, it is forgotten and the server
/// told.
struct Unanswered<'a> {
    lane: &'a Lane,
    number: Option<u64>,
}

impl Drop for Unanswered<'_> {
    fn drop(&mut self) {
        let Some(number) = self.number.take() else {
            return;
        };
        self.lane.waiting.forget(number);
        let notification = serde_json::json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {
                "requestId": format!("{ID_PREFIX}{number}"),
                "reason": "the gateway's caller gave up on the call",
            },
        });
        let Ok(mut line) = serde_json::to_vec(&notification) else {
            return;
        };
        line.push(b'\n');
        let writer = self.lane.writer.clone();
        tokio::spawn(async move {
            let _ = writer.send(&line).await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_answer_to_a_lane_id_is_taken() {
        let waiting = Waiting::default();
        let mut answer = waiting.expect(7).unwrap();
        // rmcp's own ids, and the prefix inside a result, stay rmcp's.
        assert!(!waiting.take(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#));
        assert!(!waiting.take(
            br#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"agents-lane-7"}]}}"#
        ));
        // A request of the server's under such an id is not an answer.
        assert!(!waiting.take(
            br#"{"jsonrpc":"2.0","id":"agents-lane-7","method":"sampling/createMessage","params":{}}"#
        ));
        assert!(answer.try_recv().is_err());
        let line = br#"{"result":{"content":[]},"id":"agents-lane-7","jsonrpc":"2.0"}"#;
        assert!(waiting.take(line));
        assert_eq!(answer.try_recv().unwrap(), line.to_vec());
        // A late answer (the call gave up) is dropped, not handed to rmcp.
        assert!(waiting.take(br#"{"jsonrpc":"2.0","id":"agents-lane-9","result":{}}"#));
    }

    #[test]
    fn a_closed_stream_fails_the_waiting_calls_and_takes_no_new_one() {
        let waiting = Waiting::default();
        let mut answer = waiting.expect(1).unwrap();
        waiting.close();
        assert!(matches!(
            answer.try_recv(),
            Err(oneshot::error::TryRecvError::Closed)
        ));
        assert!(waiting.expect(2).is_none());
    }

    #[tokio::test]
    async fn messages_from_both_sides_are_written_whole() {
        let (client, mut server) = tokio::io::duplex(16);
        let writer = LineWriter::new(client);
        let mut rmcp = writer.for_rmcp();
        let lane = writer.clone();
        let big = vec![b'x'; 1000];
        let reading = tokio::spawn(async move {
            let mut all = Vec::new();
            tokio::io::AsyncReadExt::read_to_end(&mut server, &mut all)
                .await
                .unwrap();
            all
        });
        let from_rmcp = async {
            for _ in 0..20 {
                rmcp.write_all(&big).await.unwrap();
                rmcp.write_all(b"\n").await.unwrap();
                rmcp.flush().await.unwrap();
            }
        };
        let from_lane = async {
            for _ in 0..20 {
                lane.send(b"lane\n").await.unwrap();
                // A sender that gives up half way leaves no half message.
                let message = [&big[..], b"\n"].concat();
                let _ = tokio::time::timeout(std::time::Duration::ZERO, lane.send(&message)).await;
            }
        };
        tokio::join!(from_rmcp, from_lane);
        rmcp.shutdown().await.unwrap();
        // Closed for the lane too.
        assert!(lane.send(b"late\n").await.is_err());
        let all = reading.await.unwrap();
        let lines: Vec<&[u8]> = all
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        assert!(lines.len() >= 40, "{}", lines.len());
        assert!(lines.iter().all(|l| *l == b"lane" || *l == &big[..]));
    }
}
