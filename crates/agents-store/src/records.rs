//! What the store's methods take and return besides core types.

use agents_core::{Skill, SkillName, ToolSource, ToolSpec};

use crate::codec;
use crate::error::StoreError;

/// A short row of `agents skill list`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SkillSummary {
    /// Full name.
    pub name: SkillName,
    /// Namespace part.
    pub namespace: String,
    /// Short-name part.
    pub short_name: String,
    /// Description, if any.
    pub description: Option<String>,
    /// Version, if any.
    pub version: Option<String>,
    /// Number of items.
    pub items: u64,
    /// ISO-8601 UTC.
    pub updated_at: String,
}

/// What [`Store::readable_skills`](crate::Store::readable_skills) found:
/// the skills that decode, by name, and one [`StoreError::Corrupt`] (or
/// other decoding error) per row that does not.
#[derive(Debug, Default)]
pub struct Readable {
    /// The skills that decode, sorted by name.
    pub skills: Vec<Skill>,
    /// Why each other row was left out.
    pub corrupt: Vec<StoreError>,
}

/// Which tools a
/// [`Store::replace_tool_group`](crate::Store::replace_tool_group) call
/// replaces: all tools of `source`, narrowed to one `origin` (an MCP
/// launch-spec digest, a discovery scope) when given.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ToolGroup {
    /// The source whose tools are replaced.
    pub source: ToolSource,
    /// The MCP server (or other origin key) within the source.
    pub origin: Option<String>,
}

impl ToolGroup {
    /// The group `tool` is stored in (its source, and the `tools.origin` it
    /// gets: an MCP tool's launch-spec digest, an Agent Skill's discovery
    /// scope, none for a custom tool).
    pub fn of(tool: &ToolSpec) -> Self {
        Self {
            source: tool.source,
            origin: codec::tool_origin(tool),
        }
    }
}

/// What [`Store::status`](crate::Store::status) reports.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StoreStatus {
    /// `sqlite` or `postgres`.
    pub backend: &'static str,
    /// Where the data lives, with any password removed.
    pub location: String,
    /// Applied schema version.
    pub schema_version: i64,
    /// Newest schema version this build knows.
    pub supported_version: i64,
    /// Rows in `skills`.
    pub skills: u64,
    /// Rows in `skill_items`.
    pub skill_items: u64,
    /// Rows in `tools`.
    pub tools: u64,
}

/// The timestamps [`Store::write_skills`](crate::Store::write_skills) gave
/// what it wrote. A write returns these rather than copies of the skills, so
/// a file of many skills is not held twice; [`WriteStamps::added`] and [`WriteStamps::updated`] make the
/// copies for a caller that wants them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WriteStamps {
    /// `created_at` (and `updated_at`) of every added skill.
    pub added_at: String,
    /// `(created_at, updated_at)` of each updated skill, in input order.
    pub updated: Vec<(String, String)>,
}

impl WriteStamps {
    /// `add` (the skills given to the write) as stored.
    pub fn added(&self, add: &[Skill]) -> Vec<Skill> {
        add.iter()
            .map(|skill| Skill {
                created_at: Some(self.added_at.clone()),
                updated_at: Some(self.added_at.clone()),
                ..skill.clone()
            })
            .collect()
    }

    /// `update` (the skills given to the write) as stored.
    pub fn updated(&self, update: &[Skill]) -> Vec<Skill> {
        update
            .iter()
            .zip(&self.updated)
            .map(|(skill, (created_at, updated_at))| Skill {
                created_at: Some(created_at.clone()),
                updated_at: Some(updated_at.clone()),
                ..skill.clone()
            })
            .collect()
    }
}
