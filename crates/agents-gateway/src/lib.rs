//! `agents mcp serve`: a real MCP server (rmcp's server side) that serves the
//! resolved tool set of one or more skills: MCP tools are proxied to the
//! upstream servers they come from, builtin tools run in process.
//!
//! - MCP and builtin tools are served; custom and inline tools have no
//!   executor here, and tools of an untrusted server are left out (an
//!   untrusted server is never started). [`Serving::left_out`] says which and
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
//!   served (the last served set that matched stays, no list_changed goes out), the
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

mod arguments;
mod calls;
pub mod disclose;
mod error;
mod follow;
mod handler;
mod http;
mod lane;
pub mod local;
mod serving;
mod skill_files;
pub mod skills;
mod stdio;

pub use arguments::check_arguments;
pub use disclose::{DiscloseError, DiscloseOptions, Disclosed};
pub use error::GatewayError;
pub use follow::{Follow, POLL_EVERY};
pub use http::{BearerToken, ENDPOINT, HttpAccess, HttpServer, raise_open_files_limit};
pub use local::{Approve, LocalTools};
pub use serving::{Backend, ServedTool, Serving};
pub use skills::{ServedSkill, SkillFileError};

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use agents_core::{Lockfile, SkillName};
use agents_mcp::FetchOptions;
use agents_registry::McpDefinition;
use rmcp::service::{Peer, RoleServer, SubscriptionSink};

use calls::Slot;
pub(crate) use calls::tool_error;
use follow::{Drift, Locked};

pub use agents_tools::{AuditLog, CancellationToken, Executor, Limits, Roots};

struct Shared {
    serving: RwLock<Arc<Serving>>,
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
    /// `--disclose`: what is disclosed, and what each session loaded.
    disclose: disclose::State,
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

impl Gateway {
    /// A gateway serving `serving`; upstreams are started with `options`.
    pub fn new(serving: Serving, options: FetchOptions) -> Self {
        Self::with_lock(serving, options, None)
    }

    /// A gateway serving `serving` of the skills `names`, which matches `lock`
    /// (read from `file`, as messages name it): every re-resolution is
    /// checked against the lock before it is served ([`Gateway::reload`]),
    /// and the folder of an Agent Skill at every request for its files.
    pub fn locked(
        serving: Serving,
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
            serving,
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

    fn with_lock(serving: Serving, options: FetchOptions, locked: Option<Locked>) -> Self {
        Self {
            shared: Arc::new(Shared {
                serving: RwLock::new(Arc::new(serving)),
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
                disclose: disclose::State::default(),
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

    pub(crate) fn local(&self) -> &LocalTools {
        self.shared.local.get_or_init(LocalTools::default)
    }

    /// What is being served.
    pub fn serving(&self) -> Arc<Serving> {
        self.shared
            .serving
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Replaces the served set (after a re-resolution); true when the tool list changed.
    pub fn replace_serving(&self, serving: Serving) -> bool {
        self.replace_serving_changes(serving).0
    }

    /// Replaces the served set; (tool list changed, served skills changed).
    pub(crate) fn replace_serving_changes(&self, serving: Serving) -> (bool, bool) {
        let mut current = self
            .shared
            .serving
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let changed = current
            .served
            .iter()
            .map(|t| &t.tool)
            .ne(serving.served.iter().map(|t| &t.tool));
        let skills_changed = current.skills != serving.skills;
        *current = Arc::new(serving);
        (changed, skills_changed)
    }
}
