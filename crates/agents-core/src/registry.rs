use indexmap::IndexMap;

use crate::tool::{InvalidTool, ToolSource, ToolSpec};

/// An in-memory tool registry: what a host program fills with its builtin
/// tools and what the resolver looks tools up in.
#[derive(Debug, Clone, Default)]
pub struct ToolRegistry {
    tools: IndexMap<String, ToolSpec>,
}

/// Why a registry operation failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RegistryError {
    /// The name is taken and replacing was not asked for.
    #[error("tool `{name}` is already registered (source `{existing}`)")]
    DuplicateTool {
        /// The contested name.
        name: String,
        /// Source of the tool already registered.
        existing: ToolSource,
    },
    /// The spec breaks a rule.
    #[error(transparent)]
    Invalid(#[from] InvalidTool),
}

impl RegistryError {
    /// A stable machine-readable kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::DuplicateTool { .. } => "duplicate_tool",
            Self::Invalid(err) => err.kind(),
        }
    }
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `spec`. A taken name is an error unless `replace` is set;
    /// schemas must be valid JSON Schema.
    pub fn register(&mut self, spec: ToolSpec, replace: bool) -> Result<(), RegistryError> {
        spec.validate()?;
        self.insert(spec, replace)
    }

    /// Registers `spec` like [`Self::register`] (no replacing), checking its
    /// name but not its schemas: for specs whose schemas are checked where
    /// they are written, such as builtin tools (checking against the
    /// meta-schema compiles a validator, which costs more than the rest of a
    /// cold command start).
    pub fn register_known_valid(&mut self, spec: ToolSpec) -> Result<(), RegistryError> {
        crate::tool::validate_tool_name(&spec.name)?;
        self.insert(spec, false)
    }

    /// Adds a checked `spec`; a taken name is an error unless `replace` is set.
    fn insert(&mut self, spec: ToolSpec, replace: bool) -> Result<(), RegistryError> {
        if !replace && let Some(existing) = self.tools.get(&spec.name) {
            return Err(RegistryError::DuplicateTool {
                name: spec.name,
                existing: existing.source,
            });
        }
        self.tools.insert(spec.name.clone(), spec);
        Ok(())
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&ToolSpec> {
        self.tools.get(name)
    }

    /// All tools in registration order, optionally of one source only.
    pub fn list(&self, source: Option<ToolSource>) -> impl Iterator<Item = &ToolSpec> {
        self.tools
            .values()
            .filter(move |spec| source.is_none_or(|wanted| spec.source == wanted))
    }

    /// Removes and returns the tool called `name`.
    pub fn remove(&mut self, name: &str) -> Option<ToolSpec> {
        self.tools.shift_remove(name)
    }

    /// Removes every tool of `source`, returning how many went.
    pub fn remove_source(&mut self, source: ToolSource) -> usize {
        let before = self.tools.len();
        self.tools.retain(|_, spec| spec.source != source);
        before - self.tools.len()
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// True when no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, source: ToolSource) -> ToolSpec {
        ToolSpec::new(name, "d", source)
    }

    #[test]
    fn duplicate_names_need_replace() {
        let mut registry = ToolRegistry::new();
        registry
            .register(tool("builtin/a", ToolSource::Builtin), false)
            .unwrap();
        let err = registry
            .register(tool("builtin/a", ToolSource::Custom), false)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "tool `builtin/a` is already registered (source `builtin`)"
        );
        registry
            .register(tool("builtin/a", ToolSource::Custom), true)
            .unwrap();
        assert_eq!(
            registry.get("builtin/a").unwrap().source,
            ToolSource::Custom
        );
        assert_eq!(registry.len(), 1);
    }

    #[test]
    fn list_filters_by_source_and_remove_works() {
        let mut registry = ToolRegistry::new();
        registry
            .register(tool("builtin/a", ToolSource::Builtin), false)
            .unwrap();
        registry
            .register(tool("mcp:s/b", ToolSource::Mcp), false)
            .unwrap();
        registry
            .register(tool("builtin/c", ToolSource::Builtin), false)
            .unwrap();
        let names: Vec<_> = registry
            .list(Some(ToolSource::Builtin))
            .map(|t| t.name.as_str())
            .collect();
        assert_eq!(names, ["builtin/a", "builtin/c"]);
        assert!(registry.remove("builtin/a").is_some());
        assert!(registry.remove("builtin/a").is_none());
        assert_eq!(registry.remove_source(ToolSource::Mcp), 1);
        assert_eq!(registry.len(), 1);
    }

    #[test]
    fn invalid_schemas_are_refused() {
        let mut registry = ToolRegistry::new();
        let mut spec = tool("custom/x", ToolSource::Custom);
        spec.input_schema = Some(json!({"type": 12}));
        let err = registry.register(spec, false).unwrap_err();
        assert!(
            err.to_string()
                .contains("input_schema: not a valid JSON Schema"),
            "{err}"
        );
        assert!(registry.is_empty());
    }
}
