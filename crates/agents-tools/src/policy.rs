//! The policy an entry's overrides put on every call: a deadline
//! (`timeout_s`), narrowing to reading (`read_only`), an audit line
//! (`audit`), the person's approval (`approval: required`), and Landlock
//! on the processes a call starts (`sandbox: strict`).
//!
//! [`CallPolicy::from_overrides`] reads the overrides as the resolver
//! merged them (outer include wins); [`call`] runs one builtin under it.
//! Override keys the policy is asked to enforce but cannot are reported in
//! [`CallPolicy::not_enforced`], never silently dropped.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agents_core::ValueMap;
use serde::Serialize;
use serde_json::Value;

use crate::error::shown;
use crate::{Callable, CancellationToken, Executor, Rule, Sandbox, ToolError, ToolOutput};

/// What an audit line records of the arguments.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Audit {
    /// No line.
    #[default]
    Off,
    /// A line with the digest of the arguments (`audit: true`).
    Digest,
    /// A line with the digest and the arguments themselves (`audit: full`).
    Full,
}

/// An override key the policy was asked to enforce but does not.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NotEnforced {
    /// The override key.
    pub key: String,
    /// Why it is not enforced.
    pub reason: String,
}

impl std::fmt::Display for NotEnforced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "override `{}` is not enforced: {}",
            self.key, self.reason
        )
    }
}

/// The policy one call runs under.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct CallPolicy {
    /// A deadline for the whole call (`timeout_s`).
    pub timeout: Option<Duration>,
    /// Refuse tools that write (`read_only: true`).
    pub read_only: bool,
    /// What the call's audit line records (`audit`).
    pub audit: Audit,
    /// The person must approve the call first (`approval: required`).
    pub approval_required: bool,
    /// `http_get` may reach private addresses (`allow_private_network: true`).
    pub allow_private_network: bool,
    /// The processes `shell` (and `run` tools) start run under Landlock
    /// (`sandbox: strict`), read-only beneath the roots when
    /// [`read_only`](Self::read_only).
    pub sandbox: bool,
    /// Keys asking for enforcement this policy does not give.
    pub not_enforced: Vec<NotEnforced>,
}

/// Override keys that describe a tool and ask nothing of a call.
const DESCRIPTIVE: [&str; 5] = [
    "description",
    "title",
    "writes",
    "checkpointable",
    "side_effects",
];

impl CallPolicy {
    /// The policy `overrides` ask for. A value of the wrong type for an
    /// enforced key narrows where it can (an unreadable `read_only` or
    /// `approval` counts as set) and is reported in `not_enforced`.
    pub fn from_overrides(overrides: &ValueMap) -> Self {
        let mut policy = CallPolicy::default();
        for (key, value) in overrides.iter() {
            let mut unusable = |expected: &str| {
                policy.not_enforced.push(NotEnforced {
                    key: shown(key),
                    reason: format!("expected {expected}"),
                });
            };
            match key.as_str() {
                "timeout_s" => match value.as_u64().filter(|secs| *secs > 0) {
                    Some(secs) => policy.timeout = Some(Duration::from_secs(secs)),
                    None => unusable("a whole number of seconds from 1"),
                },
                "read_only" => match value.as_bool() {
                    Some(read_only) => policy.read_only = read_only,
                    None => {
                        unusable("`true` or `false`");
                        policy.read_only = true;
                    }
                },
                "audit" => match value {
                    Value::Bool(true) => policy.audit = Audit::Digest,
                    Value::Bool(false) => policy.audit = Audit::Off,
                    Value::String(s) if s == "full" => policy.audit = Audit::Full,
                    Value::String(s) if s == "digest" => policy.audit = Audit::Digest,
                    _ => {
                        unusable("`true`, `false`, `digest` or `full`");
                        policy.audit = Audit::Digest;
                    }
                },
                "approval" => match value {
                    Value::String(s) if s == "required" => policy.approval_required = true,
                    Value::String(s) if s == "never" => policy.approval_required = false,
                    Value::Bool(required) => policy.approval_required = *required,
                    _ => {
                        unusable("`required` or `never`");
                        policy.approval_required = true;
                    }
                },
                "allow_private_network" => match value.as_bool() {
                    Some(allow) => policy.allow_private_network = allow,
                    None => unusable("`true` or `false`"),
                },
                "sandbox" => match value {
                    Value::String(s) if s == "strict" => policy.sandbox = true,
                    Value::String(s) if s == "none" => policy.sandbox = false,
                    Value::Bool(false) => policy.sandbox = false,
                    _ => {
                        unusable("`strict` or `none`");
                        policy.sandbox = true;
                    }
                },
                _ if DESCRIPTIVE.contains(&key.as_str()) => {}
                _ => policy.not_enforced.push(NotEnforced {
                    key: shown(key),
                    reason: "not an override key calls enforce".into(),
                }),
            }
        }
        policy
    }

    /// Refuses `tool` if the policy forbids it: a writing tool under
    /// `read_only`, or any tool needing approval that was not given.
    pub fn check(&self, tool: impl Into<Callable>, approved: bool) -> Result<(), ToolError> {
        let tool = tool.into();
        if self.read_only && tool.writes() {
            return Err(ToolError::refused(
                Rule::ReadOnly,
                format!(
                    "`{}` writes and the entry is overridden `read_only: true`",
                    shown(tool.name())
                ),
            ));
        }
        if self.approval_required && !approved {
            return Err(ToolError::refused(
                Rule::ApprovalRequired,
                format!(
                    "`{}` is overridden `approval: required` and the call was not approved",
                    shown(tool.name())
                ),
            ));
        }
        Ok(())
    }
}

/// Who asked for a call, as its audit line records it.
#[derive(Clone, Debug, Default)]
pub struct CallContext {
    /// The skill whose entry was called.
    pub skill: Option<String>,
    /// The entry's include path, from the root skill.
    pub include_path: Option<String>,
    /// The person approved the call (the caller asked them, or they
    /// approved every call beforehand).
    pub approved: bool,
}

/// An append-only file of audit lines, one JSON object each.
#[derive(Clone, Debug)]
pub struct AuditLog {
    path: PathBuf,
}

/// One audit line.
#[derive(Debug, Serialize)]
struct AuditLine<'a> {
    time: String,
    skill: Option<&'a str>,
    tool: &'a str,
    include_path: Option<&'a str>,
    args_digest: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    args: Option<&'a Value>,
    outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    duration_ms: u128,
    exit_code: Option<i32>,
}

impl AuditLog {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// `~/.cleveragents/audit.jsonl`, when `HOME` is set.
    pub fn default_path() -> Option<PathBuf> {
        let home = std::env::var_os("HOME").filter(|home| !home.is_empty())?;
        Some(Path::new(&home).join(".cleveragents").join("audit.jsonl"))
    }

    /// The log at `path` when one is given, else at [`default_path`](Self::default_path).
    pub fn given_or_default(path: Option<PathBuf>) -> Option<Self> {
        path.or_else(Self::default_path).map(Self::new)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `line` and a newline with one `write` on a file opened
    /// `O_APPEND` (created 0600), so lines from concurrent writers never
    /// interleave.
    pub fn append(&self, line: &Value) -> std::io::Result<()> {
        if let Some(parent) = self.path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        let mut file = OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .open(&self.path)?;
        let mut bytes = line.to_string().into_bytes();
        bytes.push(b'\n');
        let written = file.write(&bytes)?;
        if written != bytes.len() {
            return Err(std::io::Error::other(format!(
                "wrote {written} of {} bytes of an audit line",
                bytes.len()
            )));
        }
        Ok(())
    }
}

/// Runs `tool` (a builtin or a `run` tool) with `args` under `policy`: refused if the policy forbids
/// it, stopped at the policy's deadline (its processes killed), and, when
/// the policy audits, recorded in `audit`.
///
/// An audit line that cannot be written fails the call (after it ran):
/// a call that must be audited is never silently unaudited.
pub async fn call(
    executor: &Executor,
    tool: impl Into<Callable>,
    args: Value,
    policy: &CallPolicy,
    context: &CallContext,
    audit: Option<&AuditLog>,
    cancel: CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let tool = tool.into();
    let started = Instant::now();
    let audited = if policy.audit == Audit::Off {
        None
    } else {
        Some(audit.ok_or_else(|| {
            ToolError::Failed(format!(
                "`{}` is overridden to be audited and no audit file is set",
                shown(tool.name())
            ))
        })?)
    };
    let digest =
        audited.map(|_| agents_core::sha256_digest(agents_core::canonical(&args).as_bytes()));
    let raw = (policy.audit == Audit::Full).then(|| args.clone());
    let result = match policy.check(tool.clone(), context.approved) {
        Ok(()) => {
            let mut limits = executor.limits().clone();
            if let Some(timeout) = policy.timeout {
                limits.timeout = Some(limits.timeout.map_or(timeout, |t| t.min(timeout)));
            }
            limits.allow_private_network |= policy.allow_private_network;
            if policy.sandbox {
                limits.sandbox = Sandbox::Strict {
                    read_only: policy.read_only,
                };
            }
            executor
                .with_limits(limits)
                .call_tool(&tool, args, cancel)
                .await
        }
        Err(err) => Err(err),
    };
    if let (Some(log), Some(digest)) = (audited, digest) {
        let (outcome, error, exit_code) = match &result {
            Ok(output) if output.is_error => ("tool_error", None, output.exit_code),
            Ok(output) => ("ok", None, output.exit_code),
            Err(ToolError::Refused { .. }) => ("refused", Some(result_message(&result)), None),
            Err(ToolError::TimedOut(_)) => ("timed_out", Some(result_message(&result)), None),
            Err(ToolError::Cancelled) => ("cancelled", None, None),
            Err(_) => ("error", Some(result_message(&result)), None),
        };
        let line = AuditLine {
            time: now(),
            skill: context.skill.as_deref(),
            tool: tool.name(),
            include_path: context.include_path.as_deref(),
            args_digest: digest,
            args: raw.as_ref(),
            outcome,
            error,
            duration_ms: started.elapsed().as_millis(),
            exit_code,
        };
        let line = serde_json::to_value(&line).map_err(|err| ToolError::Failed(err.to_string()))?;
        log.append(&line).map_err(|err| {
            ToolError::io(
                "append an audit line to",
                &log.path.display().to_string(),
                err,
            )
        })?;
    }
    result
}

fn result_message(result: &Result<ToolOutput, ToolError>) -> String {
    match result {
        Err(err) => agents_core::text::bounded_message(&err.to_string()),
        Ok(_) => String::new(),
    }
}

fn now() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}
