//! Discovery: Agent Skills folders scanned into the catalogue. Conflicts
//! are judged against what is stored, and both discovery and refresh
//! replace this user's [discovery scope](crate::scope) (its rows and its
//! `discovered_at`) in one transaction; other scopes are never touched.
//! Owns the first-use rule ([`SkillRegistryService::discover_configured`]):
//! what resolves skills discovers the configured folders once first, so on
//! a fresh machine every caller sees the same `agent_skills/…` tools.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use agents_core::{Meta, ToolSource, ToolSpec};
use agents_discovery::{ConflictStrategy, DiscoveryResult, ExistingTool};
use agents_store::ToolGroup;
use serde::Serialize;

use crate::error::ServiceError;
use crate::service::SkillRegistryService;

/// Progress callback: (folders done, folders total).
pub type Progress = Arc<dyn Fn(usize, usize) + Send + Sync>;

/// A re-scan ([`SkillRegistryService::refresh_agent_skills`]): what it
/// found, and how that changed the Agent Skills this scope had.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Refreshed {
    /// What the scan found.
    #[serde(flatten)]
    pub result: DiscoveryResult,
    /// How the scope's Agent Skills changed.
    pub changes: ScopeChanges,
}

/// How a re-scan changed this scope's Agent Skills, by name (sorted). The
/// re-scan removes every skill found before, then registers what it finds
/// (the specification's refresh): a skill found before and not now is
/// removed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ScopeChanges {
    /// Found now, not before.
    pub added: Vec<String>,
    /// Found before and now, the same.
    pub kept: Vec<String>,
    /// Found before and now, different (its folder, description, schema…).
    pub changed: Vec<String>,
    /// Found before, not now.
    pub removed: Vec<RemovedSkill>,
}

/// An Agent Skill a re-scan removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RemovedSkill {
    /// Its name, `agent_skills/<name>`.
    pub name: String,
    /// The folder it was found in.
    pub path: Option<String>,
}

impl ScopeChanges {
    /// What replacing `before` (the scope's Agent Skills) with `now` does.
    fn between(before: &[ToolSpec], now: &[ToolSpec]) -> Self {
        let before: HashMap<&str, &ToolSpec> = before
            .iter()
            .map(|tool| (tool.name.as_str(), tool))
            .collect();
        let mut changes = Self::default();
        let mut found = std::collections::HashSet::new();
        for tool in now {
            found.insert(tool.name.as_str());
            match before.get(tool.name.as_str()) {
                None => changes.added.push(tool.name.clone()),
                Some(old) if *old == tool => changes.kept.push(tool.name.clone()),
                Some(_) => changes.changed.push(tool.name.clone()),
            }
        }
        for (name, tool) in &before {
            if !found.contains(name) {
                changes.removed.push(RemovedSkill {
                    name: (*name).to_owned(),
                    path: tool.meta_str(Meta::Path).map(str::to_owned),
                });
            }
        }
        changes.added.sort();
        changes.kept.sort();
        changes.changed.sort();
        changes.removed.sort_by(|a, b| a.name.cmp(&b.name));
        changes
    }
}

/// The folders first-use discovery scans
/// ([`SkillRegistryService::with_discovery_folders`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiscoveryFolders {
    /// The configured folders, in order.
    pub folders: Vec<PathBuf>,
    /// The folders are the default ones (nothing configured): one that does
    /// not exist is skipped without a warning (a fresh machine has no
    /// `~/.cleveragents/agent_skills`; `skill discover` still says so).
    pub defaulted: bool,
}

/// What [`SkillRegistryService::discover_configured`] did.
#[derive(Debug)]
pub enum FirstUse {
    /// This scope had discovered before: nothing was scanned.
    AlreadyDiscovered,
    /// The configured folders were scanned and registered.
    Discovered(Refreshed),
    /// The first discovery failed (a read-only role, a file this user
    /// cannot write): the caller goes on without Agent Skills. Discovering
    /// with write access to the registry adds them.
    NotDiscovered(ServiceError),
}

impl SkillRegistryService {
    /// The first-use rule: discovers the configured folders
    /// ([`Self::with_discovery_folders`]) when this scope never discovered,
    /// or always when `again` (a refresh asked for). Before anything
    /// resolves skills (tool sets, validation, the check of a write, a
    /// serve), so on a fresh machine each sees the same `agent_skills/…`
    /// tools. A first discovery that fails is a convenience lost, not an
    /// error ([`FirstUse::NotDiscovered`]); one asked for (`again`) fails.
    pub async fn discover_configured(
        &self,
        again: bool,
        progress: Option<Progress>,
    ) -> Result<FirstUse, ServiceError> {
        if !again && self.agent_skills_discovered().await? {
            return Ok(FirstUse::AlreadyDiscovered);
        }
        let configured = self.discovery_folders();
        let folders: Vec<PathBuf> = configured
            .folders
            .iter()
            .filter(|folder| !configured.defaulted || folder.is_dir())
            .cloned()
            .collect();
        match self
            .refresh_agent_skills(&folders, false, ConflictStrategy::Skip, progress)
            .await
        {
            Ok(refreshed) => Ok(FirstUse::Discovered(refreshed)),
            Err(err) if !again => Ok(FirstUse::NotDiscovered(err)),
            Err(err) => Err(err),
        }
    }

    /// Scans `paths` and registers what it finds next to what is there:
    /// previously discovered agent skills (of this scope) count as existing
    /// tools and are kept.
    pub async fn discover_and_register(
        &self,
        paths: &[PathBuf],
        strategy: ConflictStrategy,
        progress: Option<Progress>,
    ) -> Result<DiscoveryResult, ServiceError> {
        let existing = self.existing_tools(true).await?;
        let result = run_discovery(paths.to_vec(), existing, strategy, progress).await?;
        let mut kept: Vec<ToolSpec> = self.list_tools(Some(ToolSource::AgentSkills)).await?;
        kept.retain(|old| !result.discovered.iter().any(|new| new.name == old.name));
        kept.extend(result.discovered.iter().cloned());
        self.replace_scope(&kept).await?;
        Ok(result)
    }

    /// Re-scans `paths`: replaces every agent-skill tool this scope
    /// discovered before with what is found now, in one transaction, and
    /// says what that added, kept, changed and removed. Tools of other
    /// sources and other scopes are untouched (unless `replace` wins a
    /// conflict with a custom tool). `named`: the user named `paths` for
    /// this run, so each must be a directory or nothing is written (a
    /// configured path that is missing is only a warning).
    pub async fn refresh_agent_skills(
        &self,
        paths: &[PathBuf],
        named: bool,
        strategy: ConflictStrategy,
        progress: Option<Progress>,
    ) -> Result<Refreshed, ServiceError> {
        if named {
            agents_discovery::require_dirs(paths)?;
        }
        let existing = self.existing_tools(false).await?;
        let before = self.list_tools(Some(ToolSource::AgentSkills)).await?;
        let result = run_discovery(paths.to_vec(), existing, strategy, progress).await?;
        self.replace_scope(&result.discovered).await?;
        let changes = ScopeChanges::between(&before, &result.discovered);
        Ok(Refreshed { result, changes })
    }

    /// True once any discovery has run in this scope.
    pub async fn agent_skills_discovered(&self) -> Result<bool, ServiceError> {
        Ok(self
            .store()
            .get_meta(&self.scope().discovered_key())
            .await?
            .is_some())
    }

    /// This scope's rows become `tools`, with `discovered_at`, in one transaction.
    async fn replace_scope(&self, tools: &[ToolSpec]) -> Result<(), ServiceError> {
        let now = time::OffsetDateTime::now_utc()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        let scope = self.scope();
        let rows: Vec<ToolSpec> = tools.iter().cloned().map(|t| scope.row_of(t)).collect();
        let group = ToolGroup {
            source: ToolSource::AgentSkills,
            origin: Some(scope.id().to_owned()),
        };
        let key = scope.discovered_key();
        self.forget_hint_names();
        self.store()
            .replace_tool_group(&group, &rows, &[(key.as_str(), now.as_str())])
            .await?;
        Ok(())
    }

    /// Builtins and catalogue tools a discovered name may collide with.
    async fn existing_tools(
        &self,
        include_agent_skills: bool,
    ) -> Result<HashMap<String, ExistingTool>, ServiceError> {
        let mut existing = HashMap::new();
        let stored = self.store().list_tools(None).await?;
        let builtins: Vec<ToolSpec> = self.builtins().list(None).cloned().collect();
        let stored = stored.into_iter().filter_map(|t| self.scope().visible(t));
        for tool in builtins.into_iter().chain(stored) {
            if tool.source == ToolSource::AgentSkills && !include_agent_skills {
                continue;
            }
            let origin = origin_of(&tool);
            existing.insert(
                tool.name.clone(),
                ExistingTool {
                    name: tool.name,
                    source: tool.source,
                    origin,
                },
            );
        }
        Ok(existing)
    }
}

/// Where a tool came from, for conflict messages.
fn origin_of(tool: &ToolSpec) -> String {
    for key in [Meta::Path, Meta::File, Meta::Server] {
        if let Some(value) = tool.meta_str(key) {
            return value.to_owned();
        }
    }
    tool.source.to_string()
}

async fn run_discovery(
    paths: Vec<PathBuf>,
    existing: HashMap<String, ExistingTool>,
    strategy: ConflictStrategy,
    progress: Option<Progress>,
) -> Result<DiscoveryResult, ServiceError> {
    // Parsing is CPU-bound and uses rayon: keep it off the async workers.
    let joined = tokio::task::spawn_blocking(move || {
        let lookup = |name: &str| existing.get(name).cloned();
        let progress_ref = progress
            .as_deref()
            .map(|p| p as &(dyn Fn(usize, usize) + Sync));
        agents_discovery::discover(&paths, &lookup, strategy, progress_ref)
    })
    .await
    .map_err(|err| ServiceError::DiscoveryStopped(err.to_string()))?;
    Ok(joined?)
}
