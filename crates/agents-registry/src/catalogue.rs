//! The tool catalogue: custom tools added, read, listed and removed, and
//! the names reserved for other tool sources (builtin, Agent Skills, MCP).
//! Builtins live in code and are only read here.

use agents_core::{Meta, Skill, SkillName, ToolSource, ToolSpec};

use crate::error::ServiceError;
use crate::service::{SkillRegistryService, expand_home, suggested};

/// Name prefixes that belong to a tool source other than custom tools:
/// `builtin/` (the tools in code: a custom `builtin/x` would pass for one),
/// `agent_skills/` (discovered Agent Skills) and `mcp:` (MCP servers).
pub const RESERVED_TOOL_PREFIXES: [&str; 3] = ["builtin/", "agent_skills/", "mcp:"];

/// The name segment inline tools' entries end with (`{skill}/_anon_{i}`).
const INLINE_SEGMENT: &str = "_anon_";

/// Whether `name` has the shape of an inline tool's entry name,
/// `namespace/short_name/_anon_{i}`.
pub(crate) fn is_inline_shaped(name: &str) -> bool {
    let mut segments = name.split('/');
    matches!(
        (segments.next(), segments.next(), segments.next(), segments.next()),
        (Some(_), Some(_), Some(last), None) if last.starts_with(INLINE_SEGMENT)
    )
}

/// Refuses a custom tool name in a namespace another tool source owns, or
/// one shaped like an inline tool's entry (`local/s/_anon_0`: as a tool ref
/// in that skill's closure it would take the inline tool's entry over).
pub(crate) fn check_custom_name(name: &str) -> Result<(), ServiceError> {
    let reserved = RESERVED_TOOL_PREFIXES
        .iter()
        .find(|prefix| name.starts_with(**prefix))
        .map(|prefix| (*prefix).to_owned())
        .or_else(|| is_inline_shaped(name).then(|| format!("/{INLINE_SEGMENT}")));
    match reserved {
        Some(prefix) => Err(ServiceError::ReservedToolName {
            name: name.to_owned(),
            prefix,
        }),
        None => Ok(()),
    }
}

impl SkillRegistryService {
    /// Registers custom tools in one transaction. Builtin names are refused;
    /// `replace` overwrites catalogue tools of the same name.
    pub async fn add_tools(&self, tools: &[ToolSpec], replace: bool) -> Result<(), ServiceError> {
        for tool in tools {
            tool.validate().map_err(agents_core::RegistryError::from)?;
            if self.builtins.get(&tool.name).is_some() {
                return Err(ServiceError::BuiltinTool(tool.name.clone()));
            }
            check_custom_name(&tool.name)?;
        }
        self.forget_hint_names();
        Ok(self.store.put_tools(tools, replace).await?)
    }

    /// A tool from the builtins or the catalogue.
    pub async fn get_tool(&self, name: &str) -> Result<ToolSpec, ServiceError> {
        if let Some(tool) = self.builtins.get(name) {
            return Ok(tool.clone());
        }
        let stored = self
            .scope
            .stored_name(name)
            .unwrap_or_else(|| name.to_owned());
        if let Some(tool) = self
            .store
            .get_tool(&stored)
            .await?
            .and_then(|tool| self.scope.visible(tool))
        {
            return Ok(tool);
        }
        // An Agent Skill as `skill tools` names an `agent_sources` entry
        // (`agent_skill:{path}`): the folder's own spec, as resolution reads it.
        if let Some(path) = name.strip_prefix("agent_skill:") {
            let folder = expand_home(path, self.home());
            return agents_discovery::load_folder(&folder).map_err(|err| {
                ServiceError::ToolNotFound(
                    name.to_owned(),
                    crate::error::Hint(Some(agents_core::text::bounded_message(&err.to_string()))),
                )
            });
        }
        // Not a catalogue name: an MCP tool as `skill tools` and lock files
        // name it (`mcp:SERVER/TOOL`, without the definition's digest) is
        // the one cached row of that server's definitions that has it;
        // anything else may be a typo.
        let tools = self.list_tools(None).await?;
        let (hint, close) = match name
            .strip_prefix("mcp:")
            .and_then(|rest| rest.split_once('/'))
        {
            Some((server, tool)) if !server.contains('@') => {
                let prefix = format!("mcp:{server}@");
                let suffix = format!("/{tool}");
                let cached: Vec<&ToolSpec> = tools
                    .iter()
                    .filter(|t| t.name.starts_with(&prefix) && t.name.ends_with(&suffix))
                    .collect();
                if let [only] = cached.as_slice() {
                    return Ok((*only).clone());
                }
                if cached.is_empty() {
                    // A near miss among the names `skill tools` shows.
                    let shown: Vec<String> = tools
                        .iter()
                        .filter(|t| t.source == ToolSource::Mcp)
                        .filter_map(|t| {
                            let server = t.meta_str(Meta::Server)?;
                            let tool = t.meta_str(Meta::Tool)?;
                            Some(format!("mcp:{server}/{tool}"))
                        })
                        .collect();
                    let close = crate::write::did_you_mean(name, &shown).map(str::to_owned);
                    (None, close)
                } else {
                    let names: Vec<&str> = cached.iter().map(|t| t.name.as_str()).take(5).collect();
                    let note = format!(
                        "{} definitions of `{server}` list it: `{}`",
                        cached.len(),
                        names.join("`, `")
                    );
                    (Some(note), None)
                }
            }
            _ => {
                let names: Vec<String> = tools.into_iter().map(|t| t.name).collect();
                let close = crate::write::did_you_mean(name, &names).map(str::to_owned);
                (None, close)
            }
        };
        Err(suggested(
            ServiceError::ToolNotFound(name.to_owned(), crate::error::Hint(hint)),
            close.into_iter().collect(),
        ))
    }

    /// Builtins then catalogue tools (sorted by name), optionally of one source.
    pub async fn list_tools(
        &self,
        source: Option<ToolSource>,
    ) -> Result<Vec<ToolSpec>, ServiceError> {
        let mut tools: Vec<ToolSpec> = self.builtins.list(source).cloned().collect();
        if source != Some(ToolSource::Builtin) {
            let mut stored: Vec<ToolSpec> = self
                .store
                .list_tools(source)
                .await?
                .into_iter()
                .filter_map(|t| self.scope.visible(t))
                .filter(|t| self.builtins.get(&t.name).is_none())
                .collect();
            // Scoped rows come back in the order of their stored names.
            stored.sort_by(|a, b| a.name.cmp(&b.name));
            tools.extend(stored);
        }
        Ok(tools)
    }

    /// Removes a catalogue tool. Unlike an include, a tool ref that names
    /// no tool is a warning, not an error, so the removal is not refused;
    /// the result names the skills that still refer to it.
    pub async fn remove_tool(&self, name: &str) -> Result<Vec<SkillName>, ServiceError> {
        if self.builtins.get(name).is_some() {
            return Err(ServiceError::BuiltinTool(name.to_owned()));
        }
        let stored = self
            .scope
            .stored_name(name)
            .unwrap_or_else(|| name.to_owned());
        self.forget_hint_names();
        self.store.remove_tool(&stored, name).await?.ok_or_else(|| {
            ServiceError::ToolNotFound(name.to_owned(), crate::error::Hint::default())
        })
    }

    /// Loads an export into a registry that holds none of its skills (see
    /// [`Self::import_with`] without `replace`): catalogue tools and skills,
    /// together in one transaction (all or nothing).
    pub async fn import(&self, skills: &[Skill], tools: &[ToolSpec]) -> Result<(), ServiceError> {
        self.import_with(skills, tools, false).await.map(|_| ())
    }
}
