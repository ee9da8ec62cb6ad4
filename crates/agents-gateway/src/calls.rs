//! Upstreams and calls: a `tools/call` is checked (lock, arguments,
//! approval), then proxied to the upstream MCP server it comes from or run
//! in process ([`crate::local`]). Upstreams start on first use, one session
//! per server definition (launch-spec digest), reused across calls; a crashed
//! or timed-out server is dropped (its process group killed) and started
//! again on the next call; one the served set no longer uses is stopped.

use std::sync::Arc;
use std::time::Duration;

use agents_mcp::Upstream;
use agents_registry::McpDefinition;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::service::{Peer, RoleServer};
use serde_json::{Value, json};

use crate::local;
use crate::{Backend, CancellationToken, Gateway, ServedTool, lock};

pub(crate) type Slot = Arc<tokio::sync::Mutex<Option<Upstream>>>;

/// How long a server whose call failed has to answer a `ping` to be kept.
const PING_TIMEOUT: Duration = Duration::from_secs(5);

/// A tool error for the MCP client, with every secret this process gave
/// an upstream masked (`agents_core::redact::remember`): whatever path made
/// the text, it goes to a model.
pub(crate) fn tool_error(text: String) -> CallToolResult {
    let text = agents_core::redact::scrub_remembered(&text).into_owned();
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// An upstream's `tools/call` result as this gateway's own: a complete
/// result (`resultType`, which a 2026-07-28 client requires; rmcp leaves it
/// out for older peers). The upstream session is an older protocol, whose
/// results have no type; rmcp's parse of the answer refuses any type but
/// `complete` (`input_required` cannot be passed on), so the call fails
/// before it gets here.
fn proxied_result(mut result: CallToolResult, server: &str) -> CallToolResult {
    // An error result is a tool error too (a failed command echoing its
    // environment): masked like the gateway's own, every string of it. A
    // successful result is the tool's output, passed on as it is.
    if result.is_error == Some(true) {
        let masked = serde_json::to_value(&result).and_then(|mut value| {
            agents_core::redact::mask_strings(&mut value, &|text| {
                match agents_core::redact::scrub_remembered(text) {
                    std::borrow::Cow::Owned(scrubbed) => Some(scrubbed),
                    std::borrow::Cow::Borrowed(_) => None,
                }
            });
            serde_json::from_value::<CallToolResult>(value)
        });
        result = match masked {
            Ok(masked) => masked,
            Err(err) => {
                return tool_error(format!(
                    "mcp server `{server}` returned an error result the gateway cannot pass on: {err}"
                ));
            }
        };
    }
    result.result_type = Some(rmcp::model::ResultType::COMPLETE);
    result
}

impl Gateway {
    /// The `tools/list` result.
    pub fn list(&self) -> Vec<Value> {
        self.serving()
            .served
            .iter()
            .map(|t| t.tool.clone())
            .collect()
    }

    /// Runs one `tools/call`; `None` when no served tool has that name. The
    /// server's progress for the call goes to `progress`. Builtins act in
    /// the roots of [`LocalTools::executor`].
    pub async fn call(
        &self,
        name: &str,
        arguments: Option<Value>,
        progress: Option<agents_mcp::ProgressSink>,
    ) -> Option<CallToolResult> {
        self.call_from(name, arguments, progress, None, CancellationToken::new())
            .await
    }

    /// Whether a call of `name` may take the stdio lane ([`crate::lane`]):
    /// a tool of an upstream MCP server, with no skills disclosed one by
    /// one, needing no approval it would have to ask the client for. The
    /// call itself goes through [`call_from`](Self::call_from) all the
    /// same; if the served set changes in between so that it needs
    /// approval, it is refused as for a client that cannot be asked.
    pub(crate) fn lane_admits(&self, name: &str) -> bool {
        if self.disclosed().is_some() {
            return false;
        }
        let serving = self.serving();
        let Some(served) = serving.served.iter().find(|t| t.export_name == name) else {
            return false;
        };
        if !matches!(served.backend, Backend::Mcp { .. }) {
            return false;
        }
        let local = self.local();
        !local::policy_of(&served.overrides, local).approval_required
            || local
                .approve
                .covers(&served.export_name, &served.registry_name)
    }

    /// [`call`](Self::call) from the client `peer`: builtins act in its
    /// roots when it offers them. Cancelling `cancel` (or dropping the
    /// future) stops a builtin call, killing its processes.
    pub async fn call_from(
        &self,
        name: &str,
        arguments: Option<Value>,
        progress: Option<agents_mcp::ProgressSink>,
        peer: Option<&Peer<RoleServer>>,
        cancel: CancellationToken,
    ) -> Option<CallToolResult> {
        // The set as it was when the call came, held to the call's end:
        // cheaper than copying the tool (its schemas) out of it.
        let serving = self.serving();
        let served = serving.served.iter().find(|t| t.export_name == name)?;
        if let Some(refused) = self.refused(served) {
            return Some(tool_error(refused));
        }
        let arguments = arguments.unwrap_or_else(|| json!({}));
        if let Err(message) = served.check_arguments(&arguments) {
            return Some(tool_error(message));
        }
        let Value::Object(arguments) = arguments else {
            return Some(tool_error(format!(
                "invalid arguments for `{name}`: expected an object"
            )));
        };
        let local = self.local();
        let policy = local::policy_of(&served.overrides, local);
        // Asked before anything runs; approved beforehand by the local user
        // (`--approve`), or by the person through the client.
        let approved = !policy.approval_required
            || local
                .approve
                .covers(&served.export_name, &served.registry_name);
        if !approved {
            let asked = local::ask_approval(served, &Value::Object(arguments.clone()), peer).await;
            if let Err(refused) = asked {
                return Some(local::refused_unapproved(
                    local, served, &policy, &arguments, refused,
                ));
            }
        }
        // Borrowed from the served set held above: nothing is copied for a call.
        let (definition, launch, server_tool) = match &served.backend {
            Backend::Mcp {
                definition,
                launch,
                server_tool,
            } => (&**definition, &**launch, server_tool.as_str()),
            Backend::Builtin(builtin) => {
                let tool = agents_tools::Callable::Builtin(*builtin);
                return Some(
                    self.call_local(served, tool, Value::Object(arguments), peer, cancel)
                        .await,
                );
            }
            Backend::Run(run) => {
                let tool = agents_tools::Callable::from(agents_tools::TrustedRunTool::clone(run));
                return Some(
                    self.call_local(served, tool, Value::Object(arguments), peer, cancel)
                        .await,
                );
            }
        };
        let started = std::time::Instant::now();
        let audited = (policy.audit != agents_tools::Audit::Off).then(|| arguments.clone());
        let result = self
            .proxy(
                definition,
                launch,
                server_tool,
                served.timeout,
                arguments,
                progress,
            )
            .await;
        match audited {
            Some(arguments) => Some(local::audited(
                local, served, &policy, &arguments, started, result, false,
            )),
            None => Some(result),
        }
    }

    /// Proxies one call of `server_tool` to the server of `definition`,
    /// starting it first if it is not running.
    async fn proxy(
        &self,
        definition: &McpDefinition,
        launch: &agents_trust::TrustedLaunch,
        server_tool: &str,
        timeout: Duration,
        arguments: serde_json::Map<String, Value>,
        progress: Option<agents_mcp::ProgressSink>,
    ) -> CallToolResult {
        let slot = {
            let mut upstreams = self.shared.upstreams.lock().await;
            upstreams
                .entry(definition.digest.clone())
                .or_default()
                .clone()
        };
        // The slot is held only to start the server or take a handle on its
        // session: calls from every client run at once, and a slow one
        // holds up no other.
        let mut upstream = slot.lock().await;
        if upstream.as_mut().is_some_and(Upstream::is_closed) {
            tracing::info!(server = %definition.server, "mcp server is gone; restarting it");
            if let Some(old) = upstream.take() {
                old.close().await;
            }
        }
        if upstream.is_none() {
            let shared = Arc::downgrade(&self.shared);
            let changed = definition.clone();
            let on_changed: agents_mcp::ToolsChanged = Arc::new(move || {
                if let Some(shared) = shared.upgrade() {
                    lock(&shared.upstream_changed).push(changed.clone());
                    shared.upstream_notify.notify_one();
                }
            });
            match agents_mcp::connect(launch, &self.shared.options, Some(on_changed)).await {
                Ok(started) => *upstream = Some(started),
                Err(err) => {
                    // What the server printed is for this user's log only.
                    tracing::warn!(server = %definition.server, "{err}");
                    return tool_error(err.without_server_output().to_string());
                }
            }
        }
        let Some(caller) = upstream.as_ref().map(Upstream::caller) else {
            return tool_error(format!("mcp server `{}` did not start", definition.server));
        };
        drop(upstream);
        match caller
            .call_tool(server_tool, Some(arguments), timeout, progress)
            .await
        {
            Ok(result) => proxied_result(result, &definition.server),
            Err(err) => {
                // The client has its answer now; whether the server is
                // still alive (a ping, which a server busy with the call
                // that timed out answers late) is found out meanwhile.
                let message = err.clone().without_server_output().to_string();
                let gateway = self.clone();
                let definition = definition.clone();
                tokio::spawn(
                    async move { gateway.after_failed_call(&slot, &definition, &err).await },
                );
                tool_error(message)
            }
        }
    }

    /// Runs the builtin or consented `run` `tool` (served as `served`) in
    /// the roots of the client `peer`, under the entry's policy
    /// (`timeout_s`, `read_only`, `audit`, `approval`, `sandbox`).
    async fn call_local(
        &self,
        served: &ServedTool,
        tool: agents_tools::Callable,
        arguments: Value,
        peer: Option<&Peer<RoleServer>>,
        cancel: CancellationToken,
    ) -> CallToolResult {
        let local = self.local();
        let roots = match self
            .shared
            .client_roots
            .of(peer, local.executor.roots())
            .await
        {
            Ok(roots) => roots,
            Err(message) => return tool_error(message),
        };
        let policy = local::policy_of(&served.overrides, local);
        let context = agents_tools::CallContext {
            skill: Some(served.source_skill.clone()),
            include_path: Some(served.include_path.clone()),
            // Asked (or approved beforehand) before the call got here.
            approved: true,
        };
        let executor = local.executor.with_roots(roots);
        local::run(
            &executor,
            tool,
            arguments,
            &policy,
            &context,
            local.audit_log.as_ref(),
            cancel,
        )
        .await
    }

    /// After a call failed: a server that has exited or does not answer a
    /// ping is stopped (the next call starts it again); one that answered
    /// the call with an error, or is only slow with it, keeps serving the
    /// calls in flight. Its last stderr lines go to this
    /// user's log, never to the client (a server may print its environment).
    async fn after_failed_call(
        &self,
        slot: &Slot,
        definition: &McpDefinition,
        err: &agents_mcp::McpError,
    ) {
        // The ping runs without the slot: other calls go on meanwhile.
        let (closed, caller) = {
            let mut upstream = slot.lock().await;
            let Some(running) = upstream.as_mut() else {
                return;
            };
            (running.is_closed(), running.caller())
        };
        if !closed && caller.answers_ping(PING_TIMEOUT).await {
            return;
        }
        let mut upstream = slot.lock().await;
        // Stopped, or started again, by another call in the meantime.
        let Some(running) = upstream.as_mut().filter(|running| caller.is_of(running)) else {
            return;
        };
        let stderr = running.stderr_tail().await;
        tracing::warn!(
            "mcp serve: mcp server `{}` stopped answering ({err}){}; it is started again on the next call",
            definition.server,
            if stderr.is_empty() {
                String::new()
            } else {
                format!("; its stderr: {stderr}")
            }
        );
        if let Some(old) = upstream.take() {
            old.close().await;
        }
    }

    /// Stops the upstream servers the served set no longer serves a tool of: no
    /// longer used, or no longer trusted (`agents mcp untrust` takes effect
    /// at the next poll, for calls in flight too).
    pub(crate) async fn stop_unserved(&self) {
        let serving = self.serving();
        let gone: Vec<Slot> = {
            let mut upstreams = self.shared.upstreams.lock().await;
            let unserved: Vec<String> = upstreams
                .keys()
                .filter(|digest| {
                    !serving
                        .served
                        .iter()
                        .any(|t| t.definition().is_some_and(|d| &d.digest == *digest))
                })
                .cloned()
                .collect();
            unserved
                .iter()
                .filter_map(|digest| upstreams.remove(digest))
                .collect()
        };
        for slot in gone {
            if let Some(upstream) = slot.lock().await.take() {
                tracing::info!("mcp serve: stopping a server no served tool uses any more");
                upstream.close().await;
            }
        }
    }

    /// Stops every upstream server it started.
    pub async fn shutdown(&self) {
        let slots: Vec<Slot> = self
            .shared
            .upstreams
            .lock()
            .await
            .drain()
            .map(|(_, slot)| slot)
            .collect();
        for slot in slots {
            if let Some(upstream) = slot.lock().await.take() {
                upstream.close().await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parsed(value: Value) -> CallToolResult {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_proxied_result_is_complete_or_a_tool_error() {
        let plain = proxied_result(
            parsed(json!({"content": [{"type": "text", "text": "hi"}]})),
            "up",
        );
        assert_eq!(plain.result_type, Some(rmcp::model::ResultType::COMPLETE));
        assert_eq!(plain.is_error, None);
        let typed = proxied_result(
            parsed(json!({"resultType": "complete", "content": [], "isError": true})),
            "up",
        );
        assert_eq!(typed.is_error, Some(true));
        // Another result type (`input_required`) never gets here: rmcp's
        // parse of the answer refuses it.
        assert!(
            serde_json::from_value::<CallToolResult>(
                json!({"resultType": "input_required", "content": []})
            )
            .is_err()
        );
    }

    #[test]
    fn an_error_result_has_the_secrets_given_upstream_masked() {
        agents_core::redact::remember(&["error-result-SECRET-41".to_owned()]);
        let echoed =
            json!({"content": [{"type": "text", "text": "env: TOKEN=error-result-SECRET-41"}]});
        let mut failed = echoed.clone();
        failed["isError"] = json!(true);
        let failed = serde_json::to_string(&proxied_result(parsed(failed), "up")).unwrap();
        assert!(!failed.contains("error-result-SECRET-41"), "{failed}");
        assert!(failed.contains("env: TOKEN="), "{failed}");
        // A successful result is the tool's output, passed on as it is.
        let passed = serde_json::to_string(&proxied_result(parsed(echoed), "up")).unwrap();
        assert!(passed.contains("error-result-SECRET-41"), "{passed}");
    }
}
