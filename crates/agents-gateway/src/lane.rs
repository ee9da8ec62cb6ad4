//! The short path for a proxied `tools/call` over stdio: the client's
//! request is taken off standard input before rmcp reads it, called through
//! the same [`Gateway::call_from`] as any call, and answered on standard
//! output beside rmcp's own messages.
//!
//! rmcp's server side cost a proxied call more than all the gateway's own
//! work: the request parsed against every request type, a task and two
//! channels per request, the answer through its service loop. The lane
//! parses one shape and calls straight through; with the upstream's lane
//! ([`agents_mcp::Caller::call_tool`]) a call never enters rmcp.
//!
//! It takes a line only when it gives the client exactly what rmcp would:
//! - the session was opened with `initialize` (not the inline lifecycle,
//!   which requires metadata on each request);
//! - the line is `{"jsonrpc":"2.0","id":…,"method":"tools/call","params":
//!   {"name":…,"arguments":{…}}}` and nothing more (no `_meta`: no progress
//!   token, no per-request protocol version; no task);
//! - the tool is served from an upstream MCP server, no skills are
//!   disclosed one by one, and the call needs no approval it could only ask
//!   through rmcp (elicitation) ([`Gateway::lane_admits`]).
//!
//! Everything else, and every line longer than [`MAX_LANE_LINE`], passes to
//! rmcp byte for byte, in order. The answer is shaped for the session's
//! protocol version as rmcp shapes it. A `notifications/cancelled` for a
//! call on the lane stops it, and it is not answered (rmcp drops the answer
//! to a cancelled request too); the notification passes on to rmcp as well,
//! which knows no such request and ignores it.

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex, OnceLock};

use agents_mcp::LineWriter;
use rmcp::model::{CallToolResult, JsonObject, ProtocolVersion, RequestId, ServerResult};
use rmcp::service::{Peer, RoleServer};
use serde_json::Value;

use crate::{CancellationToken, Gateway, lock};

/// The longest line the lane looks at; a longer one goes to rmcp as it
/// comes, without being held whole.
pub(crate) const MAX_LANE_LINE: usize = 64 * 1024;

/// The lane of one stdio session.
#[derive(Clone)]
pub(crate) struct Lane {
    gateway: Gateway,
    writer: LineWriter,
    /// Whether the session is older than 2026-07-28, once rmcp has opened
    /// it with `initialize`: nothing is taken before, nor ever on a session
    /// opened otherwise.
    legacy: Arc<OnceLock<bool>>,
    /// The calls on the lane, by the client's id (as JSON), to cancel.
    running: Arc<Mutex<HashMap<String, CancellationToken>>>,
}

impl Lane {
    pub(crate) fn new(gateway: Gateway, writer: LineWriter) -> Self {
        Self {
            gateway,
            writer,
            legacy: Arc::default(),
            running: Arc::default(),
        }
    }

    /// Opens the lane: the session with `peer` is initialized. Its version
    /// is read once here; it does not change.
    pub(crate) fn open(&self, peer: &Peer<RoleServer>) {
        if let Some(legacy) = session_version(peer) {
            let _ = self.legacy.set(legacy);
        }
    }

    /// Takes `line` when it is a call the lane serves (and starts it), or
    /// stops the lane call a `notifications/cancelled` names. `false`
    /// leaves the line to rmcp.
    fn take(&self, line: &[u8]) -> bool {
        let Some(&legacy) = self.legacy.get() else {
            return false;
        };
        if memchr::memmem::find(line, b"notifications/cancelled").is_some() {
            self.cancel(line);
            return false;
        }
        if memchr::memmem::find(line, b"tools/call").is_none() {
            return false;
        }
        let Some(call) = lane_call(line) else {
            return false;
        };
        if !self.gateway.lane_admits(&call.params.name) {
            return false;
        }
        let Ok(key) = serde_json::to_string(&call.id) else {
            return false;
        };
        tracing::trace!(
            id = %agents_core::text::shorten(&key, agents_core::text::MAX_ECHO_BYTES),
            "tools/call on the lane"
        );
        let cancel = CancellationToken::new();
        lock(&self.running).insert(key.clone(), cancel.clone());
        let lane = self.clone();
        tokio::spawn(async move {
            let LaneCall { id, params, .. } = call;
            let arguments = params.arguments.map(Value::Object);
            let called = tokio::select! {
                called = lane.gateway.call_from(
                    &params.name,
                    arguments,
                    None,
                    None,
                    cancel.child_token(),
                ) => Some(called),
                () = cancel.cancelled() => None,
            };
            lock(&lane.running).remove(&key);
            // Cancelled by the client: no answer, as rmcp gives none.
            let Some(called) = called else {
                return;
            };
            let answer = match called {
                Some(result) => answer(&id, result, legacy),
                None => serde_json::to_vec(&serde_json::json!({
                    "jsonrpc": "2.0",
                    "id": id,
                    "error": crate::handler::unknown_tool(&params.name),
                })),
            };
            if let Ok(mut answer) = answer {
                answer.push(b'\n');
                let _ = lane.writer.send(&answer).await;
            }
        });
        true
    }

    /// Stops the lane call a `notifications/cancelled` line names.
    fn cancel(&self, line: &[u8]) {
        #[derive(serde::Deserialize)]
        struct Cancelled {
            method: String,
            params: Params,
        }
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Params {
            request_id: Option<RequestId>,
        }
        let Ok(cancelled) = serde_json::from_slice::<Cancelled>(line) else {
            return;
        };
        if cancelled.method != "notifications/cancelled" {
            return;
        }
        let Some(key) = cancelled
            .params
            .request_id
            .and_then(|id| serde_json::to_string(&id).ok())
        else {
            return;
        };
        if let Some(cancel) = lock(&self.running).remove(&key) {
            cancel.cancel();
        }
    }
}

/// A `tools/call` request of the one shape the lane takes.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct LaneCall {
    jsonrpc: String,
    id: RequestId,
    method: String,
    params: LaneParams,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct LaneParams {
    name: String,
    #[serde(default)]
    arguments: Option<JsonObject>,
}

fn lane_call(line: &[u8]) -> Option<LaneCall> {
    let call: LaneCall = serde_json::from_slice(line).ok()?;
    (call.jsonrpc == "2.0" && call.method == "tools/call").then_some(call)
}

/// Whether the session is older than 2026-07-28 (`Some(true)`) or not
/// (`Some(false)`); `None` when it was not opened with `initialize` (rmcp
/// keeps no peer info for a session on the inline lifecycle, whose every
/// request must carry its metadata).
fn session_version(peer: &Peer<RoleServer>) -> Option<bool> {
    let info = peer.peer_info()?;
    Some(info.protocol_version.as_str() < ProtocolVersion::V_2026_07_28.as_str())
}

/// The answer line (without its newline), shaped as rmcp's handler shapes
/// a `tools/call` result for the session's version.
fn answer(id: &RequestId, result: CallToolResult, legacy: bool) -> serde_json::Result<Vec<u8>> {
    #[derive(serde::Serialize)]
    struct Answer<'a> {
        jsonrpc: &'static str,
        id: &'a RequestId,
        result: &'a ServerResult,
    }
    let mut result = ServerResult::CallToolResult(result);
    if legacy {
        result.strip_result_type_for_legacy_peer();
        result.strip_non_object_output_for_legacy_peer();
    } else {
        result.fill_missing_cache_hints();
    }
    serde_json::to_vec(&Answer {
        jsonrpc: "2.0",
        id,
        result: &result,
    })
}

/// Standard input as rmcp reads it, less the lines the lane takes.
pub(crate) type Diverting<R> = agents_mcp::sift::Sifted<R, Lane>;

/// The lane as the sieve of standard input: it looks at lines up to
/// [`MAX_LANE_LINE`]; a longer one passes to rmcp as it comes.
impl agents_mcp::sift::Sieve for Lane {
    fn max_line(&self) -> usize {
        MAX_LANE_LINE
    }

    fn long_line(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn line(&mut self, line: &[u8], ready: &mut Vec<u8>) -> io::Result<()> {
        if !self.take(line) {
            ready.extend_from_slice(line);
            ready.push(b'\n');
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_plain_shape_is_a_lane_call() {
        let plain = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","arguments":{"a":1}}}"#;
        let call = lane_call(plain).unwrap();
        assert_eq!(call.params.name, "t");
        assert!(
            lane_call(br#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"t"}}"#)
                .is_some()
        );
        for other in [
            // Progress wanted, or anything else in `_meta`.
            &br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":1}}}"#[..],
            br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","task":{}}}"#,
            br#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"name":"t"}}"#,
            br#"{"jsonrpc":"1.0","id":3,"method":"tools/call","params":{"name":"t"}}"#,
            br#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"t"}}"#,
            br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","arguments":[1]}}"#,
            br#"[{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t"}}]"#,
        ] {
            assert!(lane_call(other).is_none(), "{}", String::from_utf8_lossy(other));
        }
    }

    #[test]
    fn answers_are_shaped_for_the_sessions_version() {
        let result = CallToolResult::success(vec![rmcp::model::ContentBlock::text("hi")]);
        let mut typed = result.clone();
        typed.result_type = Some(rmcp::model::ResultType::COMPLETE);
        let id = RequestId::Number(4);
        let legacy: Value =
            serde_json::from_slice(&answer(&id, typed.clone(), true).unwrap()).unwrap();
        assert_eq!(legacy["id"], 4);
        assert!(legacy["result"].get("resultType").is_none(), "{legacy}");
        let current: Value = serde_json::from_slice(&answer(&id, typed, false).unwrap()).unwrap();
        assert_eq!(current["result"]["resultType"], "complete");
        assert_eq!(current["result"]["content"][0]["text"], "hi");
    }
}
