//! `agents mcp serve`: a real MCP server (rmcp's server side) that serves the
//! resolved tool set of one or more skills: MCP tools are proxied to the
//! upstream servers they come from, builtin tools run in process.
//!
//! - MCP and builtin tools are served; custom and inline tools have no
//!   executor here, and tools of an untrusted server are left out (an
//!   untrusted server is never started). [`Plan::left_out`] says which and
//!   why, and so do the server's `instructions`.
//! - Builtins ([`local`]) run through `agents-tools`' executor inside the
//!   calling client's workspace roots (`roots/list`, listed again after
//!   `notifications/roots/list_changed`), or, for a client that offers
//!   none, the roots of [`LocalTools::executor`] (`--root`); a refusal
//!   (`refused by rule `parent-dir`: …`), failure or timeout is a tool error.
//! - Upstreams start on first use, one session per server definition (launch-spec
//!   digest), reused across calls; a crashed or timed-out server is dropped (its
//!   process group killed) and started again on the next call.
//! - Arguments are validated against the tool's input schema before they are
//!   forwarded; a violation is a tool error (`isError: true`) naming the field.
//! - Live updates ([`Follow`]): the registry's change stamp is polled every
//!   [`POLL_EVERY`]; when it moved, or an upstream sent
//!   `notifications/tools/list_changed` (its tools are listed again on the
//!   gateway's own session and cached first), the skills are resolved again
//!   and, if the served list changed, every connected client gets
//!   `notifications/tools/list_changed`: on its session (handshake era) or on
//!   its `subscriptions/listen` stream (2026-07-28). A failed resolution keeps
//!   the last good list and is logged on stderr; the session goes on.
//! - With a lock ([`Gateway::locked`], `agents mcp serve --locked FILE`) every
//!   re-resolution is checked against it first: one that differs is not
//!   served (the last plan that matched stays, no list_changed goes out), the
//!   difference is logged once per change, and a `tools/call` of an entry that
//!   differs is refused; once the registry matches the lock again it is
//!   served as usual. The files of an Agent Skill are read at request time,
//!   so its folder is checked against the lock at every request too: a
//!   skill whose folder (or entry) differs is left out of `resources/list`
//!   and `skills/list`, and reading its files is refused naming the lock.
//! - Agent Skills of the set ([`skills`]): every file of each skill's folder
//!   is the resource `skill://<name>/<relative path>` and the server declares
//!   the SEP-2640 skills extension (`skills/list`, `skills/get` with sha256
//!   digests); files are read, bounded, at request time.
//! - Shutdown: [`Gateway::shutdown`] closes every upstream; dropping the gateway
//!   (e.g. on a signal) SIGKILLs their process groups.

// Library code returns errors; it does not panic on what it is given.
#![deny(clippy::panic, clippy::indexing_slicing)]

mod http;
pub mod local;
pub mod skills;
mod stdio;

pub use http::{BearerToken, ENDPOINT, HttpAccess, HttpServer, raise_open_files_limit};
pub use local::{Approve, LocalTools};
pub use skills::{ServedSkill, SkillFileError};

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use agents_core::SkillName;
use agents_core::{ExportFormat, LeftOut, LockDiff, Lockfile, Meta, ToolSource, export_tools};
use agents_mcp::{FetchOptions, Upstream};
use agents_registry::{McpDefinition, McpRefresh, ServeSet, SkillRegistryService};
use rmcp::ErrorData;
use rmcp::model::SubscriptionFilter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, CustomRequest,
    CustomResult, GetSkillRequestParams, GetSkillResult, Implementation, ListResourcesResult,
    ListSkillsResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ServerCapabilities, ServerConfig, Skill,
    Tool,
};
use rmcp::service::{
    NotificationContext, Peer, RequestContext, RoleServer, SubscriptionContext, SubscriptionSink,
};
use serde_json::{Value, json};

pub use agents_tools::{AuditLog, CancellationToken, Executor, Limits, Roots};

/// What runs a served tool.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Backend {
    /// A tool of an upstream MCP server, proxied.
    Mcp {
        /// The server definition it comes from.
        definition: Box<McpDefinition>,
        /// The tool's own name on its server.
        server_tool: String,
    },
    /// A builtin tool, run in process ([`local`]).
    Builtin(agents_tools::Builtin),
}

/// One tool the gateway serves.
#[derive(Debug, Clone)]
pub struct ServedTool {
    /// The MCP `Tool` as served (export name, schemas, annotations, `_meta`).
    pub tool: Value,
    /// Export name.
    pub export_name: String,
    /// Registry name (`mcp:{server}/{tool}`, `builtin/read_file`).
    pub registry_name: String,
    /// What runs it.
    pub backend: Backend,
    /// The skill whose item produced the entry.
    pub source_skill: String,
    /// The include path from the served skill to `source_skill`.
    pub include_path: String,
    /// The entry's overrides, merged (the policy of its calls).
    pub overrides: agents_core::ValueMap,
    /// The deadline of a proxied call (the entry's `timeout_s`, else its
    /// server's, else the default); a builtin call has one only when the
    /// entry's `timeout_s` sets it.
    pub timeout: Duration,
    /// The validator of its arguments, compiled at its first call and
    /// reused by every call after it; each resolution makes new tools, so
    /// a changed schema is compiled again (compiling it for every call was
    /// most of the gateway's own work per call).
    validator: Arc<std::sync::OnceLock<Result<jsonschema::Validator, String>>>,
}

impl ServedTool {
    /// The server definition of a proxied tool.
    pub fn definition(&self) -> Option<&McpDefinition> {
        match &self.backend {
            Backend::Mcp { definition, .. } => Some(definition),
            Backend::Builtin(_) => None,
        }
    }

    /// Checks `arguments` against the tool's input schema, as
    /// [`check_arguments`] does, with the validator compiled once.
    pub fn check_arguments(&self, arguments: &Value) -> Result<(), String> {
        let schema = self.tool.get("inputSchema").unwrap_or(&Value::Null);
        let validator = self
            .validator
            .get_or_init(|| compile(&self.export_name, schema))
            .as_ref()?;
        check_with(&self.export_name, schema, validator, arguments)
    }
}

/// What the gateway serves and what it leaves out.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// Served tools, in entry order.
    pub served: Vec<ServedTool>,
    /// Agent Skills served as resources, in entry order.
    pub skills: Vec<ServedSkill>,
    /// Entries not served, and why.
    pub left_out: Vec<LeftOut>,
    /// Resolution warnings.
    pub warnings: Vec<String>,
}

/// Decides what to serve from a resolved set. The call timeout is the
/// entry's `timeout_s` override, else the server's `timeout_s`, else
/// `default_timeout`.
pub fn plan(set: &ServeSet, default_timeout: Duration) -> Plan {
    let exported = export_tools(&set.entries, ExportFormat::Mcp);
    // Looked up by name once each, not found by a scan per entry: a set of
    // tens of thousands of entries cost seconds.
    let by_name: std::collections::HashMap<&str, &agents_core::ResolvedToolEntry> = set
        .entries
        .iter()
        .map(|entry| (entry.name.as_str(), entry))
        .collect();
    let mut skills: Vec<ServedSkill> = Vec::new();
    let mut skill_names: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut not_own: Vec<LeftOut> = Vec::new();
    for entry in &set.entries {
        let Some(spec) = entry.tool.as_ref() else {
            continue;
        };
        let Some(mut skill) = ServedSkill::of(spec) else {
            continue;
        };
        // As a lock names it.
        skill.entry.clone_from(&entry.name);
        if !set.is_own_folder(spec) {
            not_own.push(LeftOut {
                name: entry.name.clone(),
                reason: agents_registry::not_discovered(&skill.folder),
            });
            continue;
        }
        if skill_names.insert(skill.name.clone()) {
            skills.push(skill);
        }
    }
    // Agent Skills are served as resources, not as tools.
    let mut left_out: Vec<LeftOut> = exported
        .left_out
        .into_iter()
        .filter(|l| {
            by_name
                .get(l.name.as_str())
                .is_none_or(|e| e.tool.as_ref().and_then(ServedSkill::of).is_none())
        })
        .map(|mut l| {
            // An MCP tool the catalogue does not know because its server is
            // not trusted, or was never queried: said as such.
            let unknown = by_name
                .get(l.name.as_str())
                .is_some_and(|e| e.tool.is_none());
            if let Some(reason) = mcp_server_of(&l.name)
                .filter(|_| unknown)
                .and_then(|server| unlisted_reason(set, server))
            {
                l.reason = reason;
            }
            l
        })
        .collect();
    // A server none of whose tools a skill names (no allow-list) and whose
    // list was never fetched leaves out everything it has: said once.
    for server in &set.uncached {
        let named = set
            .entries
            .iter()
            .any(|e| mcp_server_of(&e.name) == Some(server.as_str()));
        if !named && let Some(reason) = unlisted_reason(set, server) {
            left_out.push(LeftOut {
                name: format!("mcp:{server}"),
                reason,
            });
        }
    }
    left_out.extend(not_own);
    let mut served = Vec::new();
    for tool in exported.tools {
        let Some(registry_name) = tool
            .get("_meta")
            .and_then(|meta| meta.get(agents_core::META_NAME))
            .and_then(Value::as_str)
        else {
            continue;
        };
        let Some(entry) = by_name.get(registry_name).copied() else {
            continue;
        };
        let registry_name = entry.name.as_str();
        let export_name = tool
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let timeout_override = timeout_s(&entry.overrides).map(|t| t.as_secs());
        let served_tool = |backend: Backend, timeout: Duration, tool: Value| ServedTool {
            export_name: export_name.clone(),
            registry_name: registry_name.to_owned(),
            backend,
            source_skill: entry.source_skill.to_string(),
            include_path: entry.include_path.to_string(),
            overrides: entry.overrides.clone(),
            timeout,
            tool,
            validator: Arc::default(),
        };
        if entry
            .tool
            .as_ref()
            .is_some_and(|t| t.source == ToolSource::Builtin)
        {
            match agents_tools::Builtin::from_name(&entry.name) {
                Some(builtin) => served.push(served_tool(
                    Backend::Builtin(builtin),
                    timeout_override.map_or(default_timeout, Duration::from_secs),
                    tool,
                )),
                None => left_out.push(LeftOut {
                    name: entry.name.clone(),
                    reason: "no builtin of this version of `agents` has that name".into(),
                }),
            }
            continue;
        }
        let Some(spec) = entry.tool.as_ref().filter(|t| t.source == ToolSource::Mcp) else {
            continue;
        };
        let (Some(digest), Some(server_tool)) =
            (spec.meta_str(Meta::SpecDigest), spec.meta_str(Meta::Tool))
        else {
            left_out.push(LeftOut {
                name: entry.name.clone(),
                reason: "its cached entry names no server definition".into(),
            });
            continue;
        };
        let Some(definition) = set.servers.iter().find(|d| d.digest == digest) else {
            left_out.push(LeftOut {
                name: entry.name.clone(),
                reason: "its server definition is no longer used by the skill".into(),
            });
            continue;
        };
        if !definition.trusted() {
            left_out.push(LeftOut {
                name: entry.name.clone(),
                reason: definition.untrusted_hint(),
            });
            continue;
        }
        let timeout = timeout_override
            .or(definition.source.timeout_s)
            .map_or(default_timeout, Duration::from_secs);
        served.push(served_tool(
            Backend::Mcp {
                definition: Box::new(definition.clone()),
                server_tool: server_tool.to_owned(),
            },
            timeout,
            tool,
        ));
    }
    Plan {
        served,
        skills,
        left_out,
        warnings: set.warnings.clone(),
    }
}

/// The deadline an entry's `timeout_s` override sets.
fn timeout_s(overrides: &agents_core::ValueMap) -> Option<Duration> {
    overrides
        .get("timeout_s")
        .and_then(Value::as_u64)
        .filter(|s| *s > 0)
        .map(Duration::from_secs)
}

/// The server of an MCP entry (`mcp:{server}/{tool}`).
fn mcp_server_of(name: &str) -> Option<&str> {
    name.strip_prefix("mcp:")?
        .split_once('/')
        .map(|(server, _)| server)
}

/// Why the tools of `server` are not known, when that is because no
/// definition of it the set uses is trusted here, or because it has no
/// cached tool list; `None` otherwise (a tool its list does not have).
fn unlisted_reason(set: &ServeSet, server: &str) -> Option<String> {
    let definitions: Vec<&McpDefinition> =
        set.servers.iter().filter(|d| d.server == server).collect();
    let trusted = definitions.iter().find(|d| d.trusted());
    match trusted {
        None => definitions.first().map(|d| d.untrusted_hint()),
        Some(d) if set.uncached.iter().any(|s| s == server) => Some(format!(
            "mcp server `{}` has no cached tool list, so none of its tools is known",
            d.shown_server()
        )),
        Some(_) => None,
    }
}

/// The left-out entries the server's `instructions` name one by one.
const LEFT_OUT_IN_INSTRUCTIONS: usize = 10;

/// The longest reason the server's `instructions` give, in bytes.
const MAX_REASON_BYTES: usize = 400;

/// The server's `instructions` (the `initialize` result): what it serves
/// and, where the skills name something it does not serve, what and why,
/// so a client whose user never sees the gateway's log (Claude Desktop)
/// can tell. Reasons are the plan's own, which never quote what an
/// untrusted definition would run: what a skill's writer wrote does not
/// reach the model as instructions.
fn instructions(plan: &Plan) -> String {
    let mut text = String::from(
        "Tools of skills resolved by the `agents` skill registry; \
         `_meta[\"io.cleveragents/name\"]` is each tool's registry name. \
         Agent Skills of those skills are resources under `skill://<name>/` \
         (see `skills/list`).",
    );
    if plan.left_out.is_empty() {
        return text;
    }
    text.push_str(&format!(
        "\n\nServing {} tool(s) and {} Agent Skill(s); left out of what the skills name ({}):",
        plan.served.len(),
        plan.skills.len(),
        plan.left_out.len()
    ));
    for l in plan.left_out.iter().take(LEFT_OUT_IN_INSTRUCTIONS) {
        text.push_str(&format!(
            "\n- `{}`: {}",
            agents_core::text::escape_control(&agents_core::text::shorten(
                &l.name,
                agents_core::text::MAX_ECHO_BYTES
            )),
            agents_core::text::escape_control(&agents_core::text::shorten(
                &l.reason,
                MAX_REASON_BYTES
            ))
        ));
    }
    if let Some(more) = plan
        .left_out
        .len()
        .checked_sub(LEFT_OUT_IN_INSTRUCTIONS)
        .filter(|more| *more > 0)
    {
        text.push_str(&format!("\n- and {more} more"));
    }
    text
}

/// The longest one argument problem is shown, in bytes.
const MAX_PROBLEM_BYTES: usize = 400;

/// Checks `arguments` against `schema`; the error names the field, and
/// stays a few KiB whatever the arguments (at most five problems, each cut
/// to [`MAX_PROBLEM_BYTES`]). Arguments that would take a validator more
/// than [`agents_core::MAX_ARGUMENT_CHECK_STEPS`] steps are refused
/// unchecked.
pub fn check_arguments(tool: &str, schema: &Value, arguments: &Value) -> Result<(), String> {
    check_with(tool, schema, &compile(tool, schema)?, arguments)
}

/// The validator of `schema`, the input schema of `tool`.
fn compile(tool: &str, schema: &Value) -> Result<jsonschema::Validator, String> {
    #[cfg(test)]
    tests::COMPILED.with(|compiled| compiled.set(compiled.get() + 1));
    jsonschema::validator_for(schema)
        .map_err(|err| format!("tool `{tool}` has an invalid input schema: {err}"))
}

/// [`check_arguments`] with `validator`, compiled from `schema`.
fn check_with(
    tool: &str,
    schema: &Value,
    validator: &jsonschema::Validator,
    arguments: &Value,
) -> Result<(), String> {
    // A validator tries every branch again at each level of the value: a
    // branching recursive schema costs 2^depth. Counted first, bounded.
    agents_core::argument_check_steps(schema, arguments, agents_core::MAX_ARGUMENT_CHECK_STEPS)
        .map_err(|message| format!("cannot check the arguments for `{tool}`: {message}"))?;
    let problems: Vec<String> = validator
        .iter_errors(arguments)
        .take(5)
        .map(|err| {
            let path = err.instance_path().to_string();
            let text = if path.is_empty() {
                err.to_string()
            } else {
                format!("`{path}`: {err}")
            };
            // The validator quotes the offending value whole (a 1.4 MB
            // argument made a 1.5 MB error, five times over): both ends
            // kept, which say where and what was expected.
            agents_core::text::shorten_middle(&text, MAX_PROBLEM_BYTES).into_owned()
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "invalid arguments for `{tool}`: {}",
            problems.join("; ")
        ))
    }
}

type Slot = Arc<tokio::sync::Mutex<Option<Upstream>>>;

struct Shared {
    plan: RwLock<Arc<Plan>>,
    options: FetchOptions,
    upstreams: tokio::sync::Mutex<HashMap<String, Slot>>,
    /// Connected clients, told when the tool list changes.
    peers: std::sync::Mutex<Vec<Peer<RoleServer>>>,
    /// Open `subscriptions/listen` streams (2026-07-28 protocol), by a
    /// number of ours: request ids repeat across connections.
    listeners: std::sync::Mutex<Vec<(u64, SubscriptionSink)>>,
    next_listener: std::sync::atomic::AtomicU64,
    /// Server definitions whose session sent `notifications/tools/list_changed`.
    upstream_changed: std::sync::Mutex<Vec<McpDefinition>>,
    upstream_notify: tokio::sync::Notify,
    /// `--locked`: the lock every re-resolution must match.
    locked: Option<Locked>,
    /// How builtins run ([`Gateway::with_local`]).
    local: std::sync::OnceLock<LocalTools>,
    /// The roots each client session gave.
    client_roots: local::ClientRoots,
}

/// The lock a gateway serves under, and what the last check refused.
struct Locked {
    lock: Lockfile,
    /// The lock file as messages name it.
    file: String,
    drift: std::sync::Mutex<Drift>,
    /// Per entry of the served skills, the `upstream` digests the lock
    /// records for it (of an Agent Skill, its folder's files): a served folder is
    /// checked against them at every request, since its files are read
    /// then, not when the skills were resolved.
    folders: HashMap<String, Vec<String>>,
    /// The Agent Skills (entry names) refused for their folder now, each
    /// logged once when refused and once when it matches again.
    refused_folders: std::sync::Mutex<std::collections::HashSet<String>>,
    /// The served Agent Skills (entry names) withheld when the clients were
    /// last told the resources ([`Gateway::withheld_changed`]).
    withheld: std::sync::Mutex<Vec<String>>,
}

/// How the registry differs from the lock now (empty while it matches).
#[derive(Default)]
struct Drift {
    /// The differences last written to the log: each change is written once.
    reported: Vec<LockDiff>,
    /// Entries (registry names) that differ from the lock, with the skill
    /// and what changed: their calls are refused.
    entries: HashMap<String, String>,
}

/// Entry lines of one skill's difference from the lock the log shows.
const MAX_DRIFT_LINES: usize = 20;

/// How long a server whose call failed has to answer a `ping` to be kept.
const PING_TIMEOUT: Duration = Duration::from_secs(5);

/// How often [`Follow`] polls the registry's change stamp.
pub const POLL_EVERY: Duration = Duration::from_secs(1);

/// What to re-resolve when the registry changes: the service and the skill
/// names being served.
#[derive(Debug)]
pub struct Follow<'a> {
    /// The registry.
    pub service: &'a SkillRegistryService,
    /// The skills served.
    pub names: &'a [SkillName],
}

/// The gateway: an rmcp [`rmcp::ServerHandler`]; clones share one state.
#[derive(Clone)]
pub struct Gateway {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway").finish_non_exhaustive()
    }
}

pub(crate) fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A tool error for the MCP client, with every secret this process gave
/// an upstream masked (`agents_core::redact::remember`): whatever path made
/// the text, it goes to a model.
fn tool_error(text: String) -> CallToolResult {
    let text = agents_core::redact::scrub_remembered(&text).into_owned();
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// An upstream's `tools/call` result as this gateway's own: a complete
/// result (`resultType`, which a 2026-07-28 client requires; rmcp leaves it
/// out for older peers). The upstream session is an older protocol, whose
/// results have no type; one that sends another type (`input_required`)
/// cannot be passed on, and is a tool error.
fn proxied_result(mut result: Value, server: &str) -> CallToolResult {
    // An error result is a tool error too (a failed command echoing its
    // environment): masked like the gateway's own. A successful result is
    // the tool's output, passed on as it is.
    if result.get("isError") == Some(&Value::Bool(true)) {
        agents_core::redact::mask_strings(&mut result, &|text| {
            match agents_core::redact::scrub_remembered(text) {
                std::borrow::Cow::Owned(scrubbed) => Some(scrubbed),
                std::borrow::Cow::Borrowed(_) => None,
            }
        });
    }
    let mut result: CallToolResult = match serde_json::from_value(result) {
        Ok(result) => result,
        Err(err) => {
            return tool_error(format!(
                "mcp server `{server}` returned a result that is not a CallToolResult: {err}"
            ));
        }
    };
    match &result.result_type {
        None => result.result_type = Some(rmcp::model::ResultType::COMPLETE),
        Some(kind) if *kind == rmcp::model::ResultType::COMPLETE => {}
        Some(kind) => {
            return tool_error(format!(
                "mcp server `{server}` answered with a `{}` result, which the gateway cannot pass on",
                agents_core::text::shorten(&kind.to_string(), 64)
            ));
        }
    }
    result
}

impl Gateway {
    /// A gateway serving `plan`; upstreams are started with `options`.
    pub fn new(plan: Plan, options: FetchOptions) -> Self {
        Self::with_lock(plan, options, None)
    }

    /// A gateway serving `plan` of the skills `names`, which matches `lock`
    /// (read from `file`, as messages name it): every re-resolution is
    /// checked against the lock before it is served ([`Gateway::reload`]),
    /// and the folder of an Agent Skill at every request for its files.
    pub fn locked(
        plan: Plan,
        options: FetchOptions,
        lock: Lockfile,
        file: String,
        names: &[SkillName],
    ) -> Self {
        // Every entry of the served skills, not only the Agent Skills served
        // now: a later resolution may serve a folder this one left out (one
        // the user's discovery has found since).
        let mut folders: HashMap<String, Vec<String>> = HashMap::new();
        for name in names {
            let Some(locked) = lock.skills.get(name.as_str()) else {
                continue;
            };
            for entry in &locked.entries {
                let digests = folders.entry(entry.name.clone()).or_default();
                // Each skill that locked it recorded its folder; a folder
                // can match only one record, so two differing ones refuse it.
                if let Some(digest) = entry.fields.get("upstream")
                    && !digests.contains(digest)
                {
                    digests.push(digest.clone());
                }
            }
        }
        Self::with_lock(
            plan,
            options,
            Some(Locked {
                lock,
                file,
                drift: std::sync::Mutex::new(Drift::default()),
                folders,
                refused_folders: std::sync::Mutex::new(std::collections::HashSet::new()),
                withheld: std::sync::Mutex::new(Vec::new()),
            }),
        )
    }

    fn with_lock(plan: Plan, options: FetchOptions, locked: Option<Locked>) -> Self {
        Self {
            shared: Arc::new(Shared {
                plan: RwLock::new(Arc::new(plan)),
                options,
                upstreams: tokio::sync::Mutex::new(HashMap::new()),
                peers: std::sync::Mutex::new(Vec::new()),
                listeners: std::sync::Mutex::new(Vec::new()),
                next_listener: std::sync::atomic::AtomicU64::new(0),
                upstream_changed: std::sync::Mutex::new(Vec::new()),
                upstream_notify: tokio::sync::Notify::new(),
                locked,
                local: std::sync::OnceLock::new(),
                client_roots: local::ClientRoots::default(),
            }),
        }
    }

    /// The same gateway running builtins as `local` says (its roots for
    /// clients that offer none, its limits, the tools approved
    /// beforehand); without it, a client that offers no roots has none.
    /// Set once, before serving: a second call changes nothing.
    pub fn with_local(self, local: LocalTools) -> Self {
        let _ = self.shared.local.set(local);
        self
    }

    fn local(&self) -> &LocalTools {
        self.shared.local.get_or_init(LocalTools::default)
    }

    /// The plan being served.
    pub fn plan(&self) -> Arc<Plan> {
        self.shared
            .plan
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Replaces the plan (after a re-resolution); true when the tool list changed.
    pub fn replace_plan(&self, plan: Plan) -> bool {
        self.replace_plan_changes(plan).0
    }

    /// Replaces the plan; (tool list changed, served skills changed).
    fn replace_plan_changes(&self, plan: Plan) -> (bool, bool) {
        let mut current = self
            .shared
            .plan
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let changed = current
            .served
            .iter()
            .map(|t| &t.tool)
            .ne(plan.served.iter().map(|t| &t.tool));
        let skills_changed = current.skills != plan.skills;
        *current = Arc::new(plan);
        (changed, skills_changed)
    }

    fn skill(&self, name: &str) -> Option<ServedSkill> {
        self.plan().skills.iter().find(|s| s.name == name).cloned()
    }

    /// The `resources/list` entries: every served file of every Agent Skill
    /// (a folder that cannot be read, or under a lock no longer matches it,
    /// is logged and left out).
    pub fn skill_resources(&self) -> Vec<Resource> {
        let mut out = Vec::new();
        for skill in &self.plan().skills {
            if self.folder_check(skill).is_err() {
                // Logged by the check, once.
                continue;
            }
            match skill.resources() {
                Ok(resources) => out.extend(resources),
                Err(err) => tracing::warn!("mcp serve: skill `{}`: {err}", skill.name),
            }
        }
        out
    }

    /// The `skills/list` entries (a skill that cannot be read, breaks a
    /// SEP-2640 rule or under a lock no longer matches it is logged and left
    /// out).
    pub fn skill_manifests(&self) -> Vec<Skill> {
        let mut out = Vec::new();
        for skill in &self.plan().skills {
            match self.checked_manifest(skill) {
                Ok(manifest) => out.push(manifest),
                // Logged by the check, once.
                Err(SkillFileError::Refused(_)) => {}
                Err(err) => tracing::warn!("mcp serve: skill `{}`: {err}", skill.name),
            }
        }
        out
    }

    /// The manifest of `skill`, under a lock only when its folder is what
    /// the lock recorded and every file listed has the digest checked.
    fn checked_manifest(&self, skill: &ServedSkill) -> Result<Skill, SkillFileError> {
        let checked = self.folder_check(skill)?;
        let manifest = skill.manifest()?;
        if let (Some(files), rmcp::model::SkillResources::Files(listed)) =
            (&checked, &manifest.resources)
        {
            for file in listed {
                let relative = skills::split_uri(&file.uri).map_or("", |(_, relative)| relative);
                if !is_checked(files, relative, &file.digest) {
                    return Err(self.refused_skill(skill, &changed_while_read(relative)));
                }
            }
        }
        Ok(manifest)
    }

    /// One `resources/read`, read from the folder now (under a lock, only
    /// when the folder, and the bytes read, are what the lock recorded).
    pub fn read_skill_file(&self, uri: &str) -> Result<ReadResourceResult, SkillFileError> {
        let (name, relative) = skills::split_uri(uri).ok_or(SkillFileError::NotFound)?;
        let skill = self.skill(name).ok_or(SkillFileError::NotFound)?;
        let checked = self.folder_check(&skill)?;
        let bytes = skill.read(relative)?;
        if let Some(files) = &checked
            && !is_checked(files, relative, &agents_core::sha256_digest(&bytes))
        {
            // Changed between the check and the read.
            return Err(self.refused_skill(&skill, &changed_while_read(relative)));
        }
        Ok(skills::contents(uri, relative, bytes))
    }

    /// Whether the files of `skill` may be served: `Ok(None)` without a
    /// lock; under one `Ok(Some(digests))` (each file's, as checked) when
    /// its entry is not among those a re-resolution found differing and its
    /// folder is what the lock recorded (its files are read at request
    /// time, not when the skills were resolved), else why not.
    fn folder_check(
        &self,
        skill: &ServedSkill,
    ) -> Result<Option<std::collections::BTreeMap<String, String>>, SkillFileError> {
        let Some(locked) = self.shared.locked.as_ref() else {
            return Ok(None);
        };
        let recorded = lock(&locked.drift).entries.get(&skill.entry).cloned();
        let outcome = match recorded {
            Some(what) => Err(what),
            None => match skill.lock_digests() {
                Err(err) => Err(format!("its folder cannot be checked: {err}")),
                Ok((digest, files)) => match locked.folders.get(&skill.entry) {
                    Some(recorded) if !recorded.is_empty() => {
                        if recorded.iter().all(|r| *r == digest) {
                            Ok(files)
                        } else {
                            Err("the files of its folder changed".to_owned())
                        }
                    }
                    _ => Err("the lock records no files of it".to_owned()),
                },
            },
        };
        let mut refused = lock(&locked.refused_folders);
        match outcome {
            Ok(files) => {
                if refused.remove(&skill.entry) {
                    tracing::warn!(
                        "mcp serve: Agent Skill `{}` matches the lock `{}` again; serving its files",
                        agents_core::text::escape_control(&skill.name),
                        locked.file
                    );
                }
                Ok(Some(files))
            }
            Err(what) => {
                let err = self.refused_skill(skill, &what);
                if refused.insert(skill.entry.clone()) {
                    tracing::warn!("mcp serve: {err}");
                }
                Err(err)
            }
        }
    }

    /// Why the files of `skill` are refused: `what` of it differs from the
    /// lock (a `resources/read` answer, and the log's line).
    fn refused_skill(&self, skill: &ServedSkill, what: &str) -> SkillFileError {
        let file = self
            .shared
            .locked
            .as_ref()
            .map_or("", |locked| locked.file.as_str());
        SkillFileError::Refused(format!(
            "Agent Skill `{}` (`{}`) is refused: it no longer matches the lock `{file}` ({}), so \
             its files are not what was reviewed; review the change (`agents skill diff SKILL \
             --lock {file}`), then lock again or undo it",
            agents_core::text::escape_control(&skill.name),
            agents_core::text::escape_control(&skill.entry),
            agents_core::text::escape_control(what),
        ))
    }

    /// Runs `work` (reading skill folders: `skills/list` reads and hashes
    /// every served file, up to 256 × 4 MiB a skill) on a blocking thread,
    /// so the async workers keep answering other requests meanwhile.
    async fn off_runtime<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Gateway) -> T + Send + 'static,
    ) -> Result<T, ErrorData> {
        let gateway = self.clone();
        tokio::task::spawn_blocking(move || work(&gateway))
            .await
            .map_err(|err| {
                ErrorData::internal_error(format!("reading the skill folders failed: {err}"), None)
            })
    }

    /// The `tools/list` result.
    pub fn list(&self) -> Vec<Value> {
        self.plan().served.iter().map(|t| t.tool.clone()).collect()
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
        let plan = self.plan();
        let served = plan.served.iter().find(|t| t.export_name == name)?.clone();
        drop(plan);
        if let Some(refused) = self.refused(&served) {
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
            let asked = local::ask_approval(&served, &Value::Object(arguments.clone()), peer).await;
            if let Err(refused) = asked {
                return Some(local::refused_unapproved(
                    local, &served, &policy, &arguments, refused,
                ));
            }
        }
        let (definition, server_tool) = match &served.backend {
            Backend::Mcp {
                definition,
                server_tool,
            } => (McpDefinition::clone(definition), server_tool.clone()),
            Backend::Builtin(builtin) => {
                let builtin = *builtin;
                return Some(
                    self.call_builtin(&served, builtin, Value::Object(arguments), peer, cancel)
                        .await,
                );
            }
        };
        let started = std::time::Instant::now();
        let audited = (policy.audit != agents_tools::Audit::Off).then(|| arguments.clone());
        let result = self
            .proxy(
                definition,
                &server_tool,
                served.timeout,
                arguments,
                progress,
            )
            .await;
        match audited {
            Some(arguments) => Some(local::audited(
                local, &served, &policy, &arguments, started, result, false,
            )),
            None => Some(result),
        }
    }

    /// Proxies one call of `server_tool` to the server of `definition`,
    /// starting it first if it is not running.
    async fn proxy(
        &self,
        definition: McpDefinition,
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
            match agents_mcp::connect(&definition.source, &self.shared.options, Some(on_changed))
                .await
            {
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
                tokio::spawn(
                    async move { gateway.after_failed_call(&slot, &definition, &err).await },
                );
                tool_error(message)
            }
        }
    }

    /// Runs the builtin `builtin` (served as `served`) in the roots of the
    /// client `peer`, under the entry's policy (`timeout_s`, `read_only`,
    /// `audit`, `approval`, `sandbox`).
    async fn call_builtin(
        &self,
        served: &ServedTool,
        builtin: agents_tools::Builtin,
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
            builtin,
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

    /// Sends `notifications/tools/list_changed` to every connected client
    /// (legacy sessions and `subscriptions/listen` streams).
    pub async fn notify_tools_changed(&self) {
        for peer in self.peers() {
            if let Err(err) = peer.notify_tool_list_changed().await {
                tracing::debug!(error = %err, "a client did not take notifications/tools/list_changed");
            }
        }
        for sink in self.listeners() {
            if let Err(err) = sink.notify_tool_list_changed().await {
                tracing::debug!(error = %err, "a subscription did not take notifications/tools/list_changed");
            }
        }
    }

    /// Sends `notifications/resources/list_changed` to every connected client.
    pub async fn notify_resources_changed(&self) {
        for peer in self.peers() {
            if let Err(err) = peer.notify_resource_list_changed().await {
                tracing::debug!(error = %err, "a client did not take notifications/resources/list_changed");
            }
        }
        for sink in self.listeners() {
            if let Err(err) = sink.notify_resource_list_changed().await {
                tracing::debug!(error = %err, "a subscription did not take notifications/resources/list_changed");
            }
        }
    }

    /// Legacy sessions still open.
    fn peers(&self) -> Vec<Peer<RoleServer>> {
        let mut peers = lock(&self.shared.peers);
        peers.retain(|peer| !peer.is_transport_closed());
        peers.clone()
    }

    /// Open `subscriptions/listen` streams.
    fn listeners(&self) -> Vec<SubscriptionSink> {
        lock(&self.shared.listeners)
            .iter()
            .map(|(_, sink)| sink.clone())
            .collect()
    }

    /// Resolves the skills again; on success replaces the plan and tells the
    /// clients when the served list changed, on failure keeps the last good
    /// plan and logs why. Under a lock ([`Gateway::locked`]) a resolution
    /// that differs from it is not served: the plan that last matched stays
    /// (less the tools of servers no longer trusted), the difference is
    /// logged once, and calls of the entries that differ are refused.
    pub async fn reload(&self, follow: &Follow<'_>) {
        let resolved = match &self.shared.locked {
            Some(locked) => {
                follow
                    .service
                    .locked_serve_set(follow.names, &locked.lock)
                    .await
            }
            None => follow
                .service
                .serve_set(follow.names)
                .await
                .map(|set| (set, Vec::new())),
        };
        let (set, diffs) = match resolved {
            Ok(resolved) => resolved,
            Err(err) => {
                tracing::warn!(
                    "mcp serve: the registry changed but the skills no longer resolve \
                     ({err}); still serving the last good tool list"
                );
                return;
            }
        };
        let plan = match &self.shared.locked {
            Some(locked) if diffs.iter().any(|d| !d.is_clean()) => {
                self.refuse_drift(locked, diffs);
                self.kept_plan(&set)
            }
            Some(locked) => {
                matches_again(locked);
                plan(&set, self.shared.options.timeout)
            }
            None => plan(&set, self.shared.options.timeout),
        };
        let (tools_changed, mut skills_changed) = self.replace_plan_changes(plan);
        // An Agent Skill refused (or served again) leaves (or rejoins) the
        // resources listed.
        skills_changed |= self.withheld_changed().await;
        self.stop_unserved().await;
        if skills_changed {
            self.notify_resources_changed().await;
        }
        if tools_changed {
            tracing::warn!(
                "mcp serve: the tool list changed ({} tool(s)); telling the client(s)",
                self.plan().served.len()
            );
            self.notify_tools_changed().await;
        }
    }

    /// The plan that last matched the lock, less the tools whose server
    /// `set` no longer uses or this user no longer trusts: trust is not in
    /// the lock, and `agents mcp untrust` stops a server whatever else changed.
    fn kept_plan(&self, set: &ServeSet) -> Plan {
        let mut kept = Plan::clone(&self.plan());
        kept.served.retain(|tool| {
            tool.definition().is_none_or(|definition| {
                set.servers
                    .iter()
                    .any(|d| d.digest == definition.digest && d.trusted())
            })
        });
        kept
    }

    /// Records the entries of `diffs` (which differ from the lock) as
    /// refused, and logs the difference unless it is the one logged last.
    fn refuse_drift(&self, locked: &Locked, diffs: Vec<LockDiff>) {
        let differing: Vec<LockDiff> = diffs.into_iter().filter(|d| !d.is_clean()).collect();
        let mut entries: HashMap<String, String> = HashMap::new();
        for diff in &differing {
            let names = diff
                .changed
                .iter()
                .map(|c| &c.name)
                .chain(&diff.removed)
                .chain(&diff.added);
            for name in names {
                if let Some(what) = diff.entry_change(name) {
                    entries
                        .entry(name.clone())
                        .or_insert_with(|| format!("skill `{}`: {what}", diff.skill));
                }
            }
        }
        let mut drift = lock(&locked.drift);
        drift.entries = entries;
        if drift.reported == differing {
            return;
        }
        let report: String = differing
            .iter()
            .map(|diff| diff.to_text(&locked.file, Some(MAX_DRIFT_LINES)))
            .collect();
        tracing::warn!(
            "mcp serve: the registry no longer matches the lock `{}`: still serving the tool list \
             that matched it (clients are not told of the change), and calls of the entries that \
             differ are refused until it matches again\n{}",
            locked.file,
            report.trim_end()
        );
        drift.reported = differing;
    }

    /// Why a call of `served` is refused: its entry differs from the lock.
    fn refused(&self, served: &ServedTool) -> Option<String> {
        let locked = self.shared.locked.as_ref()?;
        let drift = lock(&locked.drift);
        let what = drift.entries.get(&served.registry_name)?;
        Some(format!(
            "tool `{}` (`{}`) is refused: it no longer matches the lock `{}` ({}), so the server \
             behind it is not what was reviewed; review the change (`agents skill diff SKILL --lock \
             {}`), then lock again or undo it",
            served.export_name,
            agents_core::text::escape_control(&served.registry_name),
            locked.file,
            agents_core::text::escape_control(what),
            locked.file,
        ))
    }

    /// Follows the registry forever (see the crate docs): polls the change
    /// stamp every [`POLL_EVERY`] and reloads when it moved or an upstream
    /// said its tools changed (refreshing that server's cache first).
    pub async fn follow(&self, follow: &Follow<'_>) {
        // No stamp yet: the first tick resolves once more, so a change made
        // between the first resolution and now is not missed.
        let mut last: Option<String> = None;
        // What the clients were shown so far.
        self.withheld_changed().await;
        loop {
            tokio::select! {
                () = tokio::time::sleep(POLL_EVERY) => {}
                () = self.shared.upstream_notify.notified() => {
                    let mut changed = std::mem::take(&mut *lock(&self.shared.upstream_changed));
                    changed.sort_by(|a, b| a.digest.cmp(&b.digest));
                    changed.dedup_by(|a, b| a.digest == b.digest);
                    for definition in &changed {
                        self.refresh_upstream(follow, definition).await;
                    }
                }
            }
            match follow.service.change_stamp().await {
                Ok(stamp) if last.as_ref() == Some(&stamp) => {}
                Ok(stamp) => {
                    last = Some(stamp);
                    self.reload(follow).await;
                }
                Err(err) => tracing::warn!("mcp serve: cannot read the registry: {err}"),
            }
            // A folder that drifts from the lock, or matches it again, while
            // the registry stays the same: the clients list resources again.
            if self.withheld_changed().await {
                self.notify_resources_changed().await;
            }
        }
    }

    /// Under a lock, whether the served Agent Skills whose files are
    /// withheld ([`Self::folder_check`]: a folder, or an entry a
    /// re-resolution recorded, differing from the lock) are others than when
    /// last asked; always false without a lock. Asked after every
    /// re-resolution and at every poll, so a folder rug-pulled while the
    /// registry is unchanged is heard of without waiting for a request
    /// (unchanged files are not hashed again), and the clients are told once.
    async fn withheld_changed(&self) -> bool {
        let Some(locked) = self.shared.locked.as_ref() else {
            return false;
        };
        let checked = self
            .off_runtime(|gateway| {
                gateway
                    .plan()
                    .skills
                    .iter()
                    .filter(|skill| gateway.folder_check(skill).is_err())
                    .map(|skill| skill.entry.clone())
                    .collect::<Vec<String>>()
            })
            .await;
        let Ok(now) = checked else {
            // The check could not run: nothing is known to have changed.
            return false;
        };
        let mut told = lock(&locked.withheld);
        if *told == now {
            return false;
        }
        *told = now;
        true
    }

    /// Lists the tools of a server that said they changed, on the gateway's
    /// own session (a fresh process might not have the tools this one
    /// added), and stores them as its cache; the next stamp check then
    /// resolves again. Without a live session it is fetched like `mcp refresh`.
    async fn refresh_upstream(&self, follow: &Follow<'_>, definition: &McpDefinition) {
        let slot = self
            .shared
            .upstreams
            .lock()
            .await
            .get(&definition.digest)
            .cloned();
        let listed = match slot {
            Some(slot) => {
                let mut upstream = slot.lock().await;
                match upstream.as_mut() {
                    Some(running) => {
                        if running.is_closed() {
                            None
                        } else {
                            Some(running.list_tools().await)
                        }
                    }
                    None => None,
                }
            }
            None => None,
        };
        let outcome = match listed {
            Some(Ok(fetched)) => follow
                .service
                .refresh_mcp_from(definition, fetched)
                .await
                .map(Some),
            Some(Err(err)) => {
                tracing::warn!(
                    "mcp serve: mcp server `{}` changed its tools but did not list them: {err}",
                    definition.server
                );
                return;
            }
            None => follow
                .service
                .refresh_mcp(
                    std::slice::from_ref(&definition.server),
                    &self.shared.options,
                )
                .await
                .map(|outcomes| outcomes.into_iter().find(|o| o.digest == definition.digest)),
        };
        match outcome {
            Ok(outcome) => {
                // The list replaced the cache: its drift is told as
                // `mcp refresh` tells it.
                for warning in outcome.iter().flat_map(McpRefresh::drift_warnings) {
                    tracing::warn!(
                        "mcp serve: {}",
                        agents_core::text::escape_control(&warning.message)
                    );
                }
                if let Some(error) = outcome.and_then(|o| o.error) {
                    tracing::warn!(
                        "mcp serve: mcp server `{}` changed its tools but could not be refreshed: {error}",
                        definition.server
                    );
                }
            }
            Err(err) => tracing::warn!("mcp serve: refresh after a tool change failed: {err}"),
        }
    }

    /// Stops the upstream servers the plan no longer serves a tool of: no
    /// longer used, or no longer trusted (`agents mcp untrust` takes effect
    /// at the next poll, for calls in flight too).
    async fn stop_unserved(&self) {
        let plan = self.plan();
        let gone: Vec<Slot> = {
            let mut upstreams = self.shared.upstreams.lock().await;
            let unserved: Vec<String> = upstreams
                .keys()
                .filter(|digest| {
                    !plan
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
                tracing::info!("mcp serve: stopping a server no tool of the plan uses any more");
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

impl rmcp::ServerHandler for Gateway {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_skills()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(
                "agents-gateway",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(instructions(&self.plan()))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let mut peers = lock(&self.shared.peers);
        // Closed sessions were dropped only when a notification went out, so
        // a gateway nothing changed under kept every session it ever had
        // (10 KB each). Pruned at each power of two: linear in all.
        if peers.len() >= 64 && peers.len().is_power_of_two() {
            peers.retain(|peer| !peer.is_transport_closed());
        }
        peers.push(context.peer);
    }

    /// The client's roots changed: they are listed again at its next
    /// builtin call.
    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.shared.client_roots.changed(&context.peer);
    }

    /// 2026-07-28 clients ask for change notifications with
    /// `subscriptions/listen`: the two list changes the gateway sends.
    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(
            SubscriptionFilter::builder()
                .tools_list_changed()
                .resources_list_changed()
                .build(),
        )
    }

    /// Keeps the stream's sink until the client cancels it or hangs up.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let id = self
            .shared
            .next_listener
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        lock(&self.shared.listeners).push((id, context.sink().clone()));
        context.cancelled().await;
        lock(&self.shared.listeners).retain(|(other, _)| *other != id);
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools: Vec<Tool> = self
            .list()
            .into_iter()
            .filter_map(|tool| serde_json::from_value(tool).ok())
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let resources = self
            .off_runtime(|gateway| gateway.skill_resources())
            .await?;
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.clone();
        let read = self
            .off_runtime(move |gateway| gateway.read_skill_file(&uri))
            .await?;
        match read {
            Ok(result) => Ok(result.into()),
            Err(SkillFileError::NotFound) => Err(ErrorData::resource_not_found(
                echoed(&request.uri).into_owned(),
                None,
            )),
            Err(err) => Err(ErrorData::invalid_params(
                format!("{}: {err}", echoed(&request.uri)),
                Some(json!({"kind": err.kind()})),
            )),
        }
    }

    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let manifests = self
            .off_runtime(|gateway| gateway.skill_manifests())
            .await?;
        Ok(ListSkillsResult::with_all_items(manifests))
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let skill = skills::split_uri(&request.uri)
            .filter(|(_, relative)| *relative == rmcp::model::SKILL_MD)
            .and_then(|(name, _)| self.skill(name));
        let Some(skill) = skill else {
            return Err(ErrorData::invalid_params(
                format!("no skill at {}", echoed(&request.uri)),
                None,
            ));
        };
        let manifest = self
            .off_runtime(move |gateway| gateway.checked_manifest(&skill))
            .await?;
        manifest.map(GetSkillResult::new).map_err(|err| {
            let message = format!("{}: {err}", echoed(&request.uri));
            let data = Some(json!({"kind": err.kind()}));
            match err {
                SkillFileError::Refused(_) => ErrorData::invalid_params(message, data),
                _ => ErrorData::internal_error(message, data),
            }
        })
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.map(Value::Object);
        let (progress, forwarding) = context
            .meta
            .get_progress_token()
            .map(|token| forward_progress(context.peer.clone(), token))
            .unzip();
        // A client's `notifications/cancelled` drops the call, which tells
        // the upstream server to cancel it too.
        let called = tokio::select! {
            called = self.call_from(
                &request.name,
                arguments,
                progress,
                Some(&context.peer),
                context.ct.child_token(),
            ) => Some(called),
            () = context.ct.cancelled() => None,
        };
        // The call's sink is gone with it: the progress already received is
        // sent before the answer (none may follow it), then the answer.
        if let Some(forwarding) = forwarding {
            let _ = tokio::time::timeout(PROGRESS_FLUSH, forwarding).await;
        }
        let Some(called) = called else {
            return Err(ErrorData::internal_error("cancelled by the client", None));
        };
        match called {
            Some(result) => Ok(CallToolResponse::Complete(result)),
            None => Err(ErrorData::invalid_params(
                format!("unknown tool `{}`", echoed(&request.name)),
                None,
            )),
        }
    }

    /// What rmcp could not read as a request it knows lands here: for a
    /// method the gateway answers, the params did not fit (`-32602`, as
    /// JSON-RPC asks: `tools/call` with array arguments, a missing name);
    /// any other method is not offered (`-32601`). The method is repeated
    /// cut either way (rmcp's own answer repeated all of it).
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let method = echoed(&request.method);
        if SERVED_METHODS.contains(&request.method.as_str()) {
            Err(ErrorData::invalid_params(
                format!("invalid params for `{method}`"),
                None,
            ))
        } else {
            Err(ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                format!("method not found: `{method}`"),
                None,
            ))
        }
    }
}

/// Whether `digest` is what `files` (a folder's digests as checked against
/// a lock) holds for `relative`. A file the folder's digest covers under
/// another path (a directory reached through a link is digested under the
/// first path to it) is checked against every digest.
fn is_checked(
    files: &std::collections::BTreeMap<String, String>,
    relative: &str,
    digest: &str,
) -> bool {
    files.get(relative).map_or_else(
        || files.values().any(|d| d == digest),
        |locked| locked == digest,
    )
}

/// A file of a checked folder whose bytes were not those checked.
fn changed_while_read(relative: &str) -> String {
    format!(
        "its file `{}` changed as it was read",
        agents_core::text::shorten(relative, agents_core::text::MAX_ECHO_BYTES)
    )
}

/// The registry matches the lock: calls are no longer refused, and a
/// difference logged before is said to be over.
fn matches_again(locked: &Locked) {
    let mut drift = lock(&locked.drift);
    if !drift.reported.is_empty() {
        tracing::warn!(
            "mcp serve: the registry matches the lock `{}` again; serving it",
            locked.file
        );
    }
    *drift = Drift::default();
}

/// The methods the gateway answers: a request for one of them that rmcp
/// could not read had params that do not fit.
const SERVED_METHODS: [&str; 9] = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "skills/list",
    "skills/get",
    "subscriptions/listen",
];

/// A name or URI the client sent, as an error repeats it: cut, so a 10 MB
/// name does not come back as a 10 MB error.
fn echoed(text: &str) -> std::borrow::Cow<'_, str> {
    agents_core::text::shorten(text, agents_core::text::MAX_ECHO_BYTES)
}

/// How long an answer waits for the progress received before it to be sent.
const PROGRESS_FLUSH: Duration = Duration::from_secs(1);

/// A sink that passes the upstream server's progress for one call to the
/// client, under the token the client gave, and the task doing it, which
/// ends once the sink is dropped and what it took is sent. rmcp hands each
/// notification to a task of its own, so they may come out of order:
/// progress must increase (the MCP specification), so one that does not is
/// dropped rather than sent late.
fn forward_progress(
    peer: Peer<RoleServer>,
    token: rmcp::model::ProgressToken,
) -> (agents_mcp::ProgressSink, tokio::task::JoinHandle<()>) {
    let (sender, mut received) =
        tokio::sync::mpsc::unbounded_channel::<rmcp::model::ProgressNotificationParam>();
    let forwarding = tokio::spawn(async move {
        let mut last = f64::NEG_INFINITY;
        while let Some(mut params) = received.recv().await {
            if params.progress <= last {
                continue;
            }
            last = params.progress;
            params.progress_token = token.clone();
            if peer.notify_progress(params).await.is_err() {
                break;
            }
        }
    });
    let sink: agents_mcp::ProgressSink = Arc::new(move |params| {
        let _ = sender.send(params);
    });
    (sink, forwarding)
}

/// Why the gateway could not serve.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GatewayError {
    /// The client's `initialize` failed or the transport broke at once.
    #[error("mcp serve: the client session could not start: {0}")]
    Session(#[source] Box<rmcp::service::ServerInitializeError>),
    /// A non-loopback address without `--auth-token-env`.
    #[error(
        "mcp serve: refusing to listen on {0} without a token: anything but a loopback address \
         needs `--auth-token-env VAR` (clients then send `Authorization: Bearer <value of VAR>`)"
    )]
    TokenRequired(std::net::SocketAddr),
    /// A loopback address with neither a token nor `--no-auth`.
    #[error(
        "mcp serve: refusing to listen on {0} without a token: every user of this machine can \
         connect to a loopback port and call your servers with your secrets; pass \
         `--auth-token-env VAR` (clients then send `Authorization: Bearer <value of VAR>`), or \
         `--no-auth` on a machine only you use"
    )]
    LoopbackTokenRequired(std::net::SocketAddr),
    /// `--auth-token-env VAR` names an unset or empty variable.
    #[error("mcp serve: environment variable `{0}` (from --auth-token-env) is not set or empty")]
    TokenMissing(String),
    /// The address could not be bound.
    #[error("mcp serve: cannot listen on {0}: {1}")]
    Bind(std::net::SocketAddr, #[source] std::io::Error),
}

impl GatewayError {
    /// A stable name for scripts.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Session(_) => "mcp_serve",
            Self::TokenRequired(_) | Self::LoopbackTokenRequired(_) => "auth_token_required",
            Self::TokenMissing(_) => "auth_token_missing",
            Self::Bind(..) => "bind",
        }
    }
}

impl Gateway {
    /// Serves one client over stdin/stdout until it disconnects, following
    /// the registry meanwhile when `follow` is given, then stops every
    /// upstream.
    pub async fn serve_stdio(&self, follow: Option<Follow<'_>>) -> Result<(), GatewayError> {
        use rmcp::ServiceExt;
        let running = self
            .clone()
            .serve(stdio::stdio())
            .await
            .map_err(|err| GatewayError::Session(Box::new(err)))?;
        tokio::select! {
            quit = running.waiting() => tracing::debug!(?quit, "mcp client disconnected"),
            () = self.follow_or_wait(follow.as_ref()) => {}
        }
        self.shutdown().await;
        Ok(())
    }

    async fn follow_or_wait(&self, follow: Option<&Follow<'_>>) {
        match follow {
            Some(follow) => self.follow(follow).await,
            None => std::future::pending().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// Validators compiled on this thread.
        pub(crate) static COMPILED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    fn served_tool(schema: Value) -> ServedTool {
        ServedTool {
            tool: json!({"name": "t", "inputSchema": schema}),
            export_name: "t".into(),
            registry_name: "mcp:up/t".into(),
            backend: Backend::Mcp {
                server_tool: "t".into(),
                definition: Box::new(McpDefinition::untrusted(
                    agents_core::McpSource {
                        server: "up".into(),
                        ..agents_core::McpSource::default()
                    },
                    "config",
                )),
            },
            source_skill: "l/s".into(),
            include_path: "l/s".into(),
            overrides: agents_core::ValueMap::default(),
            timeout: Duration::from_secs(1),
            validator: Arc::default(),
        }
    }

    #[test]
    fn a_validator_is_compiled_once_per_resolved_tool() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
        let tool = served_tool(schema.clone());
        let before = COMPILED.with(std::cell::Cell::get);
        for _ in 0..3 {
            assert!(tool.check_arguments(&json!({"a": 1})).is_ok());
            assert!(tool.check_arguments(&json!({"a": "x"})).is_err());
        }
        // A clone (what a call takes from the plan) shares it.
        assert!(tool.clone().check_arguments(&json!({"a": 2})).is_ok());
        assert_eq!(COMPILED.with(std::cell::Cell::get) - before, 1);
        // Another resolution's tool compiles its own.
        let again = served_tool(schema);
        assert!(again.check_arguments(&json!({"a": 1})).is_ok());
        assert_eq!(COMPILED.with(std::cell::Cell::get) - before, 2);
        // An invalid schema is said at every call, compiled once too.
        let broken = served_tool(json!({"type": 5}));
        for _ in 0..2 {
            let err = broken.check_arguments(&json!({})).unwrap_err();
            assert!(err.contains("invalid input schema"), "{err}");
        }
        assert_eq!(COMPILED.with(std::cell::Cell::get) - before, 3);
    }

    #[test]
    fn a_proxied_result_is_complete_or_a_tool_error() {
        let plain = proxied_result(json!({"content": [{"type": "text", "text": "hi"}]}), "up");
        assert_eq!(plain.result_type, Some(rmcp::model::ResultType::COMPLETE));
        assert_eq!(plain.is_error, None);
        let typed = proxied_result(
            json!({"resultType": "complete", "content": [], "isError": true}),
            "up",
        );
        assert_eq!(typed.is_error, Some(true));
        let other = proxied_result(json!({"resultType": "input_required", "content": []}), "up");
        assert_eq!(other.is_error, Some(true));
        assert_eq!(other.result_type, Some(rmcp::model::ResultType::COMPLETE));
        let broken = proxied_result(json!({"content": 5}), "up");
        assert_eq!(broken.is_error, Some(true));
    }

    #[test]
    fn an_error_result_has_the_secrets_given_upstream_masked() {
        agents_core::redact::remember(&["error-result-SECRET-41".to_owned()]);
        let echoed =
            json!({"content": [{"type": "text", "text": "env: TOKEN=error-result-SECRET-41"}]});
        let mut failed = echoed.clone();
        failed["isError"] = json!(true);
        let failed = serde_json::to_string(&proxied_result(failed, "up")).unwrap();
        assert!(!failed.contains("error-result-SECRET-41"), "{failed}");
        assert!(failed.contains("env: TOKEN="), "{failed}");
        // A successful result is the tool's output, passed on as it is.
        let passed = serde_json::to_string(&proxied_result(echoed, "up")).unwrap();
        assert!(passed.contains("error-result-SECRET-41"), "{passed}");
    }

    #[test]
    fn an_argument_error_stays_short_whatever_the_argument() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "integer"},
            "d": {"type": "integer"}, "e": {"type": "integer"}, "f": {"type": "integer"}}});
        let big = "x".repeat(1_000_000);
        let arguments = json!({"a": big, "b": big, "c": big, "d": big, "e": big, "f": big});
        let Err(message) = check_arguments("t", &schema, &arguments) else {
            panic!("the arguments are invalid");
        };
        assert!(message.len() < 3_000, "{}", message.len());
        assert!(
            message.starts_with("invalid arguments for `t`: `/"),
            "{message}"
        );
        assert!(message.contains("integer"), "{message}");
        assert!(check_arguments("t", &schema, &json!({"a": 1})).is_ok());
    }
}
