use serde::{Deserialize, Serialize};

use crate::resolve::ResolvedToolEntry;
use crate::skill::{ItemKind, Skill};

/// Capability metadata aggregated over a skill's resolved tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SkillCapabilitySummary {
    /// Total number of resolved tool entries.
    pub total_tools: usize,
    /// Inline tools with `read_only` set.
    pub read_only_tools: usize,
    /// Inline tools with `writes` set.
    pub write_tools: usize,
    /// Inline tools with `checkpointable` set.
    pub checkpointable_tools: usize,
    /// True if any inline tool has side effects.
    pub has_side_effects: bool,
    /// MCP server sources on the root skill itself.
    pub mcp_sources: usize,
    /// Agent skill sources on the root skill itself.
    pub agent_skill_sources: usize,
}

/// Aggregates `entries` (the flattened tool set of `root`) into a summary.
pub fn compute_capability_summary(
    root: &Skill,
    entries: &[ResolvedToolEntry],
) -> SkillCapabilitySummary {
    let inline = entries
        .iter()
        .filter(|entry| entry.is_inline)
        .filter_map(|entry| entry.tool.as_ref());
    let mut summary = SkillCapabilitySummary {
        total_tools: entries.len(),
        mcp_sources: root.items_of(ItemKind::McpSource).count(),
        agent_skill_sources: root.items_of(ItemKind::AgentSource).count(),
        ..SkillCapabilitySummary::default()
    };
    for tool in inline {
        summary.read_only_tools += usize::from(tool.read_only == Some(true));
        summary.write_tools += usize::from(tool.writes == Some(true));
        summary.checkpointable_tools += usize::from(tool.checkpointable == Some(true));
        summary.has_side_effects |= tool.side_effects == Some(true);
    }
    summary
}
