//! The service handle: [`SkillRegistryService`] and its configuration
//! (store, builtins, configured MCP servers, trust store, discovery scope
//! and folders, who is writing). What it does is split by job, each module
//! saying what it owns: [`crate::skills`] (skills), [`crate::catalogue`]
//! (the tool catalogue), [`crate::resolve`] (tool sets, serve sets, plans),
//! [`crate::write`] (checked writes and imports), [`crate::mcp`] (MCP
//! sources and their caches), [`crate::trust`] (which definitions may
//! start), [`crate::discovery`] (Agent Skills and the first-use rule),
//! [`crate::lock`] (the lock gate), [`crate::call`] (calling a tool).

use std::path::{Path, PathBuf};

use agents_core::ToolRegistry;
use agents_store::Store;
use indexmap::IndexMap;

use crate::scope::DiscoveryScope;
use crate::trust::TrustStore;

pub use crate::catalogue::RESERVED_TOOL_PREFIXES;
pub(crate) use crate::catalogue::check_custom_name;
pub(crate) use crate::resolve::{Overlay, expand_home, plan_roots};
pub use crate::resolve::{ServeSet, ToolSet, not_discovered};
pub(crate) use crate::skills::{Written, closest_skills, suggested, validate_all};

/// The skill registry over a store.
#[derive(Debug)]
pub struct SkillRegistryService {
    pub(crate) store: Store,
    pub(crate) builtins: ToolRegistry,
    pub(crate) mcp_servers: IndexMap<String, agents_core::McpSource>,
    /// Servers of `mcp_servers` the config file marks `untrusted`.
    pub(crate) untrusted_config_servers: std::collections::BTreeSet<String>,
    pub(crate) home: PathBuf,
    pub(crate) trust: TrustStore,
    pub(crate) identity: Option<String>,
    pub(crate) scope: DiscoveryScope,
    /// What first-use discovery scans.
    pub(crate) discovery_folders: crate::discovery::DiscoveryFolders,
    /// The catalogue names "did you mean" hints are picked from, once read:
    /// a command writing many files read and decoded the whole catalogue
    /// once per file.
    pub(crate) hint_names: std::sync::Mutex<Option<std::sync::Arc<Vec<String>>>>,
    /// Hints this service may still compute: each costs an edit distance to
    /// every catalogue name, and a command prints a few hundred lines at most.
    pub(crate) hints_left: std::sync::atomic::AtomicUsize,
}

/// "Did you mean" hints one service (one command) computes at most.
pub(crate) const MAX_HINTS: usize = 200;

impl SkillRegistryService {
    /// A service over `store` with no builtin tools and no configured MCP
    /// servers; `home` is where `~` in agent source paths points.
    pub fn new(store: Store, home: PathBuf) -> Self {
        Self {
            store,
            builtins: ToolRegistry::new(),
            mcp_servers: IndexMap::new(),
            untrusted_config_servers: std::collections::BTreeSet::new(),
            home,
            trust: TrustStore::in_memory(),
            identity: None,
            scope: DiscoveryScope::default(),
            discovery_folders: crate::discovery::DiscoveryFolders::default(),
            hint_names: std::sync::Mutex::new(None),
            hints_left: std::sync::atomic::AtomicUsize::new(MAX_HINTS),
        }
    }

    /// After this service writes tools: hints read the catalogue again.
    pub(crate) fn forget_hint_names(&self) {
        *self
            .hint_names
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    }

    /// Uses `trust` to decide which MCP definitions not in config may start
    /// (default: an empty in-memory store, so only configured servers run).
    pub fn with_trust(mut self, trust: TrustStore) -> Self {
        self.trust = trust;
        self
    }

    /// Who is writing (`user@host`), recorded as `defined_by` of the skills
    /// this service adds or updates.
    pub fn with_identity(mut self, identity: impl Into<String>) -> Self {
        self.identity = Some(identity.into());
        self
    }

    /// Stores and reads discovered Agent Skills under `scope` (this user on
    /// this machine; default: the fixed scope `local`).
    pub fn with_scope(mut self, scope: DiscoveryScope) -> Self {
        self.scope = scope;
        self
    }

    /// The Agent Skills folders first-use discovery scans (default: none;
    /// see [`Self::discover_configured`]).
    pub fn with_discovery_folders(mut self, folders: crate::discovery::DiscoveryFolders) -> Self {
        self.discovery_folders = folders;
        self
    }

    /// The Agent Skills folders first-use discovery scans.
    pub fn discovery_folders(&self) -> &crate::discovery::DiscoveryFolders {
        &self.discovery_folders
    }

    /// This user's discovery scope.
    pub fn scope(&self) -> &DiscoveryScope {
        &self.scope
    }

    /// This user's MCP trust store.
    pub fn trust(&self) -> &TrustStore {
        &self.trust
    }

    /// Uses `builtins` as the in-code tool registry (source `builtin`).
    pub fn with_builtins(mut self, builtins: ToolRegistry) -> Self {
        self.builtins = builtins;
        self
    }

    /// MCP servers defined in configuration, by name.
    pub fn with_mcp_servers(mut self, servers: IndexMap<String, agents_core::McpSource>) -> Self {
        self.mcp_servers = servers;
        self
    }

    /// Which of the configured MCP servers the config file marks
    /// `untrusted` (imported from a file someone else could have written):
    /// such a server starts only once its spec is in the trust store.
    pub fn with_untrusted_config_servers(
        mut self,
        names: std::collections::BTreeSet<String>,
    ) -> Self {
        self.untrusted_config_servers = names;
        self
    }

    /// The configured MCP servers the config file marks `untrusted`.
    pub fn untrusted_config_servers(&self) -> &std::collections::BTreeSet<String> {
        &self.untrusted_config_servers
    }

    /// The underlying store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The in-code builtin tools.
    pub fn builtins(&self) -> &ToolRegistry {
        &self.builtins
    }

    /// The MCP servers defined in configuration.
    pub fn mcp_servers(&self) -> &IndexMap<String, agents_core::McpSource> {
        &self.mcp_servers
    }

    /// Where `~` points.
    pub fn home(&self) -> &Path {
        &self.home
    }
}
