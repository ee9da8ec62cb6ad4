//! The builtin tools the gateway runs itself, through `agents-tools`'
//! [`Executor`], inside the workspace roots of the client that calls them.
//!
//! Roots: a client that declares the `roots` capability is asked for them
//! (`roots/list`) at its first builtin call, and again after it sends
//! `notifications/roots/list_changed`; a client that does not gets the
//! roots the gateway was started with (`agents mcp serve --root DIR`).

use std::sync::{Arc, Weak};
use std::time::Duration;

use agents_tools::{
    Audit, AuditLog, CallContext, CallPolicy, CancellationToken, Executor, Limits, Roots,
    ToolError, ToolOutput,
};
use rmcp::model::{CallToolResult, ClientConfig, ContentBlock};
use rmcp::service::{Peer, RoleServer};
use serde_json::Value;

/// How the gateway runs builtin tools: the roots a client without roots
/// gets and the limits of every call ([`Executor`]), which tools the local
/// user approved beforehand, and where audit lines go.
#[derive(Debug, Clone)]
pub struct LocalTools {
    /// The executor of every builtin call: its roots are those of a client
    /// that offers none (`--root`), its limits those of every call.
    pub executor: Executor,
    /// Tools the local user approved beforehand (`--approve`,
    /// `--approve-all`).
    pub approve: Approve,
    /// The audit file (`~/.cleveragents/audit.jsonl`, `--audit-file`);
    /// `None` when there is no home: an audited call then fails.
    pub audit_log: Option<AuditLog>,
    /// Audit every call, whatever the entries say (`--audit`).
    pub audit_all: bool,
}

impl Default for LocalTools {
    /// No roots: every file, git and shell call of a client that offers
    /// none is refused (`no-roots`).
    fn default() -> Self {
        Self {
            executor: Executor::new(Roots::none(), Limits::default()),
            approve: Approve::default(),
            audit_log: AuditLog::default_path().map(AuditLog::new),
            audit_all: false,
        }
    }
}

/// The calls the local user approved when starting the gateway: those need
/// no question even where an entry asks for approval.
#[derive(Debug, Clone, Default)]
pub struct Approve {
    /// `--approve-all`.
    pub all: bool,
    /// `--approve TOOL`: export names (`shell`), registry names
    /// (`builtin/shell`) or a builtin's short name.
    pub tools: Vec<String>,
}

impl Approve {
    /// Whether a call of the tool served as `export_name`, registry name
    /// `registry_name`, was approved beforehand.
    pub fn covers(&self, export_name: &str, registry_name: &str) -> bool {
        self.all
            || self.tools.iter().any(|tool| {
                tool == export_name
                    || tool == registry_name
                    || registry_name.strip_prefix("builtin/") == Some(tool.as_str())
            })
    }
}

/// The roots each client session gave (`roots/list`), until it says they
/// changed. A session is told apart by its handshake info, which rmcp keeps
/// once per session; entries of sessions gone are dropped as others come.
#[derive(Default)]
pub(crate) struct ClientRoots {
    sessions: std::sync::Mutex<Vec<(Weak<ClientConfig>, Roots)>>,
}

/// How long a client has to answer `roots/list`.
const ROOTS_TIMEOUT: Duration = Duration::from_secs(10);

impl ClientRoots {
    /// The roots calls from `peer` act in: its own when it offers them,
    /// else `fallback`'s. Err when it offers roots but listing them failed.
    pub(crate) async fn of(
        &self,
        peer: Option<&Peer<RoleServer>>,
        fallback: &Roots,
    ) -> Result<Roots, String> {
        let Some(info) = peer.and_then(Peer::peer_info) else {
            return Ok(fallback.clone());
        };
        if info.capabilities.roots.is_none() {
            return Ok(fallback.clone());
        }
        if let Some(roots) = self.cached(&info) {
            return Ok(roots);
        }
        let Some(peer) = peer else {
            return Ok(fallback.clone());
        };
        #[allow(deprecated)] // roots/list: deprecated by SEP-2577, still what clients offer
        let listed = tokio::time::timeout(ROOTS_TIMEOUT, peer.list_roots()).await;
        let listed = match listed {
            Ok(Ok(listed)) => listed,
            Ok(Err(err)) => {
                return Err(format!(
                    "the client offers workspace roots but `roots/list` failed: {}",
                    agents_core::text::bounded_message(&err.to_string())
                ));
            }
            Err(_) => {
                return Err(format!(
                    "the client offers workspace roots but did not answer `roots/list` within {} s",
                    ROOTS_TIMEOUT.as_secs()
                ));
            }
        };
        #[allow(deprecated)]
        let roots = roots_of(listed.roots.iter().map(|root| root.uri.as_str()));
        let mut sessions = crate::lock(&self.sessions);
        sessions.retain(|(session, _)| session.strong_count() > 0);
        sessions.push((Arc::downgrade(&info), roots.clone()));
        Ok(roots)
    }

    fn cached(&self, info: &Arc<ClientConfig>) -> Option<Roots> {
        crate::lock(&self.sessions)
            .iter()
            .find(|(session, _)| std::ptr::eq(session.as_ptr(), Arc::as_ptr(info)))
            .map(|(_, roots)| roots.clone())
    }

    /// Forgets the roots of `peer`'s session: they are listed again at its
    /// next call (`notifications/roots/list_changed`).
    pub(crate) fn changed(&self, peer: &Peer<RoleServer>) {
        let Some(info) = peer.peer_info() else {
            return;
        };
        crate::lock(&self.sessions).retain(|(session, _)| {
            session.strong_count() > 0 && !std::ptr::eq(session.as_ptr(), Arc::as_ptr(&info))
        });
    }
}

/// The roots named by `uris` (`file://` URIs of directories); one that is
/// not such a URI, or not a directory here, is logged and left out.
fn roots_of<'a>(uris: impl Iterator<Item = &'a str>) -> Roots {
    let mut dirs = Vec::new();
    for uri in uris {
        let path = url::Url::parse(uri)
            .ok()
            .filter(|url| url.scheme() == "file")
            .and_then(|url| url.to_file_path().ok());
        match path {
            Some(path) if path.is_dir() => dirs.push(path),
            _ => tracing::warn!(
                "mcp serve: the client's root `{}` is not a `file://` URI of a directory here; left out",
                agents_core::text::escape_control(&agents_core::text::shorten(
                    uri,
                    agents_core::text::MAX_ECHO_BYTES
                ))
            ),
        }
    }
    // Each was a directory a moment ago; one gone since leaves out the rest
    // rather than widening anything.
    Roots::new(&dirs).unwrap_or_else(|err| {
        tracing::warn!("mcp serve: the client's roots cannot be used: {err}");
        Roots::none()
    })
}

/// The policy of a call of the entry overridden `overrides`: its own
/// ([`CallPolicy::from_overrides`]), audited too under `--audit`.
pub(crate) fn policy_of(overrides: &agents_core::ValueMap, local: &LocalTools) -> CallPolicy {
    let mut policy = CallPolicy::from_overrides(overrides);
    if local.audit_all && policy.audit == Audit::Off {
        policy.audit = Audit::Digest;
    }
    policy
}

/// Runs `builtin` with `arguments` on `executor` (the call's roots) under
/// `policy` ([`agents_tools::call`]: refusals, the deadline, the audit
/// line); a refusal, failure or timeout is a tool error naming why.
pub(crate) async fn run(
    executor: &Executor,
    tool: agents_tools::Callable,
    arguments: Value,
    policy: &CallPolicy,
    context: &CallContext,
    audit: Option<&AuditLog>,
    cancel: CancellationToken,
) -> CallToolResult {
    match agents_tools::call(executor, tool, arguments, policy, context, audit, cancel).await {
        Ok(output) => result_of(&output),
        Err(err) => crate::tool_error(error_text(&err)),
    }
}

/// How long the person has to answer an approval question.
const APPROVAL_TIMEOUT: Duration = Duration::from_secs(600);

/// The longest the arguments shown in an approval question are, in bytes.
const MAX_SHOWN_ARGUMENTS: usize = 2048;

/// Asks the person behind `peer` (MCP elicitation) whether the call of
/// `served` with `arguments` may run: the tool, the skill and include path
/// of the entry whose override asks for approval, and the arguments with
/// secrets masked. `Ok` when they accept; why not otherwise (declined,
/// cancelled, a client that cannot ask), as the tool error says it.
pub(crate) async fn ask_approval(
    served: &crate::ServedTool,
    arguments: &Value,
    peer: Option<&Peer<RoleServer>>,
) -> Result<(), String> {
    let refused = |why: &str| {
        format!(
            "refused by rule `approval-required`: `{}` is overridden `approval: required` and {why}",
            served.export_name
        )
    };
    let Some(peer) = peer.filter(|peer| {
        peer.supported_elicitation_modes()
            .contains(&rmcp::service::ElicitationMode::Form)
    }) else {
        return Err(refused(
            "this client cannot ask for it (it offers no form elicitation); \
             the local user can approve the tool beforehand when starting the gateway",
        ));
    };
    let message = format!(
        "Allow the tool `{}` ({}) to run?\n\
         Approval is required by the overrides of skill `{}` (include path: {}).\n\
         Arguments (secrets masked):\n{}",
        served.export_name,
        agents_core::text::escape_control(&served.registry_name),
        agents_core::text::escape_control(&served.source_skill),
        agents_core::text::escape_control(&served.include_path),
        masked_arguments(arguments),
    );
    let params = rmcp::model::ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: rmcp::model::ElicitationSchema::new(std::collections::BTreeMap::new()),
    };
    let answer = tokio::time::timeout(APPROVAL_TIMEOUT, peer.create_elicitation(params)).await;
    match answer {
        Ok(Ok(result)) => match result.action {
            rmcp::model::ElicitationAction::Accept => Ok(()),
            rmcp::model::ElicitationAction::Decline => Err(refused("the person declined it")),
            rmcp::model::ElicitationAction::Cancel => Err(refused("the person cancelled it")),
            _ => Err(refused("the answer was neither accept nor decline")),
        },
        Ok(Err(err)) => Err(refused(&format!(
            "asking for it failed: {}",
            agents_core::text::bounded_message(&err.to_string())
        ))),
        Err(_) => Err(refused(&format!(
            "no answer came within {} s",
            APPROVAL_TIMEOUT.as_secs()
        ))),
    }
}

/// `arguments` as an approval question shows them: the value of every
/// secret-named key (`token`, `password`, `api_key`) hidden, and secrets in
/// strings (credentials in URLs, `NAME=value` pairs, secrets handed to MCP
/// servers, `--api-key VALUE` in a string or a list of words) masked; cut to [`MAX_SHOWN_ARGUMENTS`].
fn masked_arguments(arguments: &Value) -> String {
    use agents_core::redact::{
        REDACTED, is_secret_name, redact_inline_args, redact_text, scrub_remembered,
    };
    let mut shown = arguments.clone();
    let mut pending = vec![&mut shown];
    while let Some(value) = pending.pop() {
        match value {
            Value::Object(fields) => {
                for (key, field) in fields.iter_mut() {
                    if is_secret_name(key) {
                        *field = Value::String(REDACTED.into());
                    } else {
                        pending.push(field);
                    }
                }
            }
            Value::Array(items) => {
                // An argv-like list: the word after `--token` is a secret.
                let words: Option<Vec<&str>> = items.iter().map(Value::as_str).collect();
                if let Some(words) = words {
                    let masked = agents_core::redact::redact_args(&words);
                    *items = masked.into_iter().map(Value::String).collect();
                }
                pending.extend(items.iter_mut());
            }
            _ => {}
        }
    }
    agents_core::redact::mask_strings(&mut shown, &|text| {
        let masked = redact_inline_args(&redact_text(&scrub_remembered(text)));
        (masked != text).then_some(masked)
    });
    let text = serde_json::to_string_pretty(&shown).unwrap_or_default();
    agents_core::text::escape_control(&agents_core::text::shorten_middle(
        &text,
        MAX_SHOWN_ARGUMENTS,
    ))
    .into_owned()
}

/// The tool error of a call of `served` the person did not approve,
/// audited as refused when the entry is audited.
pub(crate) fn refused_unapproved(
    local: &LocalTools,
    served: &crate::ServedTool,
    policy: &CallPolicy,
    arguments: &serde_json::Map<String, Value>,
    why: String,
) -> CallToolResult {
    let refused = crate::tool_error(why);
    if policy.audit == Audit::Off {
        return refused;
    }
    let now = std::time::Instant::now();
    audited(local, served, policy, arguments, now, refused, true)
}

/// `result` of a proxied call of `served`, its audit line appended first
/// (the shape of `agents_tools::call`'s lines, `tool` the registry name).
/// A line that cannot be written fails the call: a call that must be
/// audited is never silently unaudited.
pub(crate) fn audited(
    local: &LocalTools,
    served: &crate::ServedTool,
    policy: &CallPolicy,
    arguments: &serde_json::Map<String, Value>,
    started: std::time::Instant,
    result: CallToolResult,
    refused: bool,
) -> CallToolResult {
    let Some(log) = local.audit_log.as_ref() else {
        return crate::tool_error(format!(
            "`{}` is to be audited and no audit file is set",
            served.export_name
        ));
    };
    let arguments = Value::Object(arguments.clone());
    let outcome = match result.is_error {
        Some(true) if refused => "refused",
        Some(true) => "tool_error",
        _ => "ok",
    };
    let mut line = serde_json::json!({
        "time": time::OffsetDateTime::now_utc()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default(),
        "skill": served.source_skill,
        "tool": served.registry_name,
        "include_path": served.include_path,
        "args_digest": agents_core::sha256_digest(agents_core::canonical(&arguments).as_bytes()),
        "outcome": outcome,
        "duration_ms": started.elapsed().as_millis(),
        "exit_code": Value::Null,
    });
    if policy.audit == Audit::Full
        && let Some(fields) = line.as_object_mut()
    {
        fields.insert("args".into(), arguments);
    }
    match log.append(&line) {
        Ok(()) => result,
        Err(err) => crate::tool_error(format!(
            "cannot append an audit line to `{}`: {err}",
            agents_core::text::shown_path(log.path())
        )),
    }
}

fn result_of(output: &ToolOutput) -> CallToolResult {
    let content = vec![ContentBlock::text(output.text.clone())];
    if output.is_error {
        crate::tool_error(output.text.clone())
    } else {
        let mut result = CallToolResult::success(content);
        // A `run` tool's JSON stdout, checked against its output schema.
        result.structured_content.clone_from(&output.structured);
        result
    }
}

/// A tool error's text: the refusal names its rule (`refused by rule
/// `parent-dir`: …`).
fn error_text(err: &ToolError) -> String {
    err.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approval_beforehand_covers_the_names_of_a_tool() {
        let approve = Approve {
            all: false,
            tools: vec!["shell".into(), "mcp:up/echo".into()],
        };
        assert!(approve.covers("shell", "builtin/shell"));
        assert!(approve.covers("anything", "builtin/shell"));
        assert!(approve.covers("up__echo", "mcp:up/echo"));
        assert!(!approve.covers("write_file", "builtin/write_file"));
        let all = Approve {
            all: true,
            tools: Vec::new(),
        };
        assert!(all.covers("write_file", "builtin/write_file"));
    }

    #[test]
    fn approval_questions_show_arguments_with_secrets_masked() {
        let shown = masked_arguments(&serde_json::json!({
            "command": "curl https://user:pw-in-url-7@example.com/ && echo PASSWORD=hunter2-secret",
            "nested": {"api_key": "sk-live-123456", "list": ["--token", "tok-in-args-9"]},
            "path": "a.txt",
        }));
        for secret in [
            "pw-in-url-7",
            "hunter2-secret",
            "sk-live-123456",
            "tok-in-args-9",
        ] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        assert!(shown.contains("a.txt") && shown.contains("curl"), "{shown}");
        let long = masked_arguments(&serde_json::json!({"x": "y".repeat(100_000)}));
        assert!(long.len() <= MAX_SHOWN_ARGUMENTS + 64, "{}", long.len());
    }

    #[test]
    fn only_file_uris_of_directories_are_roots() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let dir_uri = url::Url::from_directory_path(dir.path()).unwrap();
        let file_uri = url::Url::from_file_path(&file).unwrap();
        let roots = roots_of(
            [
                dir_uri.as_str(),
                file_uri.as_str(),
                "https://example.com/",
                "file:///no/such/dir",
            ]
            .into_iter(),
        );
        let paths: Vec<_> = roots.paths().map(std::path::Path::to_path_buf).collect();
        assert_eq!(paths, [std::fs::canonicalize(dir.path()).unwrap()]);
    }
}
