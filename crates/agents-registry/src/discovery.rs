//! Agent Skills discovery against the catalogue: conflicts are judged
//! against what is stored, and a refresh replaces every agent-skill tool in
//! one transaction.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use agents_core::{ToolSource, ToolSpec};
use agents_discovery::{ConflictStrategy, DiscoveryResult, ExistingTool};
use agents_store::{Store, ToolGroup};

use crate::error::ServiceError;
use crate::service::SkillRegistryService;

/// Progress callback: (folders done, folders total).
pub type Progress = Arc<dyn Fn(usize, usize) + Send + Sync>;

const DISCOVERED_AT: &str = "agent_skills.discovered_at";

impl<S: Store> SkillRegistryService<S> {
    /// Scans `paths` and registers what it finds next to what is there:
    /// previously discovered agent skills count as existing tools.
    pub async fn discover_and_register(
        &self,
        paths: &[PathBuf],
        strategy: ConflictStrategy,
        progress: Option<Progress>,
    ) -> Result<DiscoveryResult, ServiceError> {
        let existing = self.existing_tools(true).await?;
        let result = run_discovery(paths.to_vec(), existing, strategy, progress).await?;
        self.store().put_tools(&result.discovered, true).await?;
        self.mark_discovered().await?;
        Ok(result)
    }

    /// Re-scans `paths`: removes every previously discovered agent-skill tool
    /// and registers what is found now, in one transaction. Tools of other
    /// sources are untouched (unless `replace` wins a conflict).
    pub async fn refresh_agent_skills(
        &self,
        paths: &[PathBuf],
        strategy: ConflictStrategy,
        progress: Option<Progress>,
    ) -> Result<DiscoveryResult, ServiceError> {
        let existing = self.existing_tools(false).await?;
        let result = run_discovery(paths.to_vec(), existing, strategy, progress).await?;
        let group = ToolGroup {
            source: ToolSource::AgentSkills,
            origin: None,
        };
        self.store()
            .replace_tool_group(&group, &result.discovered)
            .await?;
        self.mark_discovered().await?;
        Ok(result)
    }

    /// True once any discovery has run against this database.
    pub async fn agent_skills_discovered(&self) -> Result<bool, ServiceError> {
        Ok(self.store().get_meta(DISCOVERED_AT).await?.is_some())
    }

    async fn mark_discovered(&self) -> Result<(), ServiceError> {
        let now = time::OffsetDateTime::now_utc()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        Ok(self.store().set_meta(DISCOVERED_AT, &now).await?)
    }

    /// Builtins and catalogue tools a discovered name may collide with.
    async fn existing_tools(
        &self,
        include_agent_skills: bool,
    ) -> Result<HashMap<String, ExistingTool>, ServiceError> {
        let mut existing = HashMap::new();
        let stored = self.store().list_tools(None).await?;
        let builtins: Vec<ToolSpec> = self.builtins().list(None).cloned().collect();
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
    for key in ["path", "file", "server"] {
        if let Some(value) = tool.source_metadata.get(key).and_then(|v| v.as_str()) {
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
    .map_err(|err| ServiceError::Discovery(format!("discovery stopped: {err}")))?;
    joined.map_err(|err| ServiceError::Discovery(err.to_string()))
}
