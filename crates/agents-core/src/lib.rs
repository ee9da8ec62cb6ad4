//! The pure core of the skill registry: the skill and tool model, name rules,
//! the in-memory tool registry, the flattening resolver, the capability summary
//! and plan validation.
//!
//! Nothing in this crate performs I/O, reads the clock or the environment, or is
//! async. Storage, discovery, MCP and the CLI build on top of it; it must never
//! depend on any of them.

// Library code returns errors; it does not panic on what it is given.
#![deny(clippy::panic, clippy::indexing_slicing)]

mod export;
mod graph;
pub mod hint;
mod lock;
mod name;
mod plan;
mod prompt;
pub mod redact;
mod registry;
mod resolve;
mod schema_size;
mod site;
mod skill;
pub mod strict;
mod summary;
pub mod text;
mod tool;
pub mod walk;
mod warnings;

pub use export::{
    CapabilityFlags, EXPORT_NAME_MAX, Effective, ExportFormat, ExportedTools, LeftOut, META_NAME,
    effective, entry_export_names, export_names, export_tools, gateway_cannot_call,
    is_valid_export_name, mcp_annotations,
};
pub use graph::{GraphEdge, GraphNode, IncludeGraph, NodeKind, include_graph};
pub use hint::Hint;
pub use lock::{
    AgentFiles, ChangedEntry, FieldChange, LOCK_FIELDS, LOCK_VERSION, ListingChange, LockDiff,
    LockError, LockedEntry, LockedSkill, Lockfile, ToolChange, agent_files_digest, canonical,
    canonicalize, compare_tool_lists, diff_lock, entry_definition, listed_tool_fields, lock_entry,
    lock_skill, sha256_digest,
};
pub use name::{InvalidSkillName, SKILL_NAME_PATTERN, SkillName};
pub use plan::{MAX_SHOWN, Plan, PlanDiagnosis, PlanReport, diagnose_plan, validate_plan};
pub use prompt::{PromptSkill, available_skills_prompt, prompt_skills};
pub use registry::{RegistryError, ToolRegistry};
pub use resolve::{
    Diagnosis, Explanation, IncludePath, MAX_OCCURRENCES, MAX_REPLACED, NON_OVERRIDABLE_FIELDS,
    Occurrence, OverrideLayer, OverrideOrigin, Resolution, ResolveError, ResolveWarning,
    ResolvedToolEntry, SkillMap, SkillResolver, SkillSource, ToolLookup, entry_names,
};
pub use schema_size::{
    ArgumentSteps, MAX_ARGUMENT_CHECK_STEPS, MAX_FOLLOWED_SCHEMA_SIZE, followed_schema_size,
};
pub use site::{FieldPath, FieldStep, Site};
pub use skill::{
    AgentSource, Include, IncludeOverrides, InlineTool, InvalidSkill, ItemKind, McpSource,
    Overrides, Skill, SkillItem, ToolName, ValueMap, validate_server_name,
};
pub use summary::{
    EffectiveCapabilities, SkillCapabilitySummary, compute_capability_summary,
    compute_effective_capabilities,
};
pub use tool::{
    InvalidTool, Meta, RunSpec, ToolSource, ToolSpec, check_schema, validate_tool_name,
};
pub use warnings::summarize_warnings;
