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

/// Capability counts over *every* resolved entry whose flags are known
/// (builtin, custom and inline tools, MCP annotations, and overrides of the
/// flags), reported beside the seven spec fields, whose capability counts
/// consider inline tools only. `side_effects` defaults to `writes` as in the exports.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EffectiveCapabilities {
    /// Entries with at least one known capability flag.
    pub known_tools: usize,
    /// Entries that are read-only.
    pub read_only_tools: usize,
    /// Entries that write.
    pub write_tools: usize,
    /// Entries that are checkpointable.
    pub checkpointable_tools: usize,
    /// True if any entry has side effects.
    pub has_side_effects: bool,
    /// Names of the entries whose capabilities are not known (unregistered
    /// tools, Agent Skills, MCP tools without annotations), in entry order.
    pub unknown: Vec<String>,
}

/// The [`EffectiveCapabilities`] of a flattened tool set.
pub fn compute_effective_capabilities(entries: &[ResolvedToolEntry]) -> EffectiveCapabilities {
    let mut out = EffectiveCapabilities::default();
    for entry in entries {
        // Also for a tool the registry does not know: a skill that declares
        // it `writes: true` has a tool with side effects.
        let flags = crate::export::CapabilityFlags::of(entry);
        if !flags.any_known() {
            out.unknown.push(entry.name.clone());
            continue;
        }
        out.known_tools += 1;
        out.read_only_tools += usize::from(flags.read_only == Some(true));
        out.write_tools += usize::from(flags.writes == Some(true));
        out.checkpointable_tools += usize::from(flags.checkpointable == Some(true));
        out.has_side_effects |= flags.side_effects == Some(true);
    }
    out
}
