//! Flattening a skill into its ordered, de-duplicated tool entries.
//!
//! The rule is the specification's *first position, last metadata*: an
//! entry keeps the position where its name first occurs in depth-first
//! order and the metadata (source skill, overrides, include path) of its
//! last occurrence. Two iterative traversals ([`flatten`]) keep this linear
//! in the include graph plus the output, whatever its shape (diamond
//! lattices, 10,000-deep chains):
//!
//! - a forward post-order walk that visits each skill once fixes each entry's
//!   *first position*, and finds missing includes, cycles and
//!   non-overridable fields on the way;
//! - a reverse pre-order walk that visits each skill once fixes each entry's
//!   *last metadata*, with the include path it was reached by.
//!
//! Visiting a skill a second time can neither add a new first occurrence (all
//! of its names were already seen) nor a later last occurrence (in reverse
//! order, its first visit is the forward-last one), so skipping is exact.
//! For the same reason the reverse walk stops as soon as every name has its
//! value: a later visit can only meet names already decided.
//!
//! The forward walk numbers every skill an include names and interns every
//! entry name, so both walks index vectors instead of hashing names again;
//! a tool ref's spec is asked of the lookup once per distinct name. It
//! records only the include each skill was entered by, not a path: an
//! error takes its path from the walk's stack (which is that path, cut to
//! head and tail when long), `explain` rebuilds paths from those records on
//! demand, and the reverse walk builds its own for the skills it visits
//! (usually a fraction of the closure, thanks to the early stop).
//!
//! What the forward walk keeps per skill is small on purpose (a tool ref's
//! entry is its name's number; an include's overrides are one pointer when
//! empty): doubling a closure should double the time, and past a few
//! thousand skills the time is set by how much of the closure's memory the
//! walks touch, not by the instructions.
//!
//! Parts: [`flatten`] (the two walks), [`path`] (include paths shared
//! between entries), [`explain`] (why an entry is there and where its
//! overrides came from), [`diagnostics`] (errors, warnings and their words).

#![allow(
    clippy::indexing_slicing,
    reason = "indices are `NodeId`s, `NameId`s and edge ranges that `Analysis` hands out for its own vectors, and stack positions found by `position`"
)]

use std::borrow::Cow;
use std::collections::HashMap;
use std::collections::hash_map::Entry as Slot;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use indexmap::{IndexMap, IndexSet};
use serde::ser::SerializeSeq;
use serde::{Serialize, Serializer};

use crate::name::SkillName;
use crate::site::Site;
use crate::skill::{ItemKind, Skill, SkillItem, ValueMap};
use crate::tool::{ToolSource, ToolSpec};

mod diagnostics;
mod explain;
mod flatten;
mod path;

pub use diagnostics::{Diagnosis, ResolveError, ResolveWarning};
pub use explain::{
    Explanation, MAX_OCCURRENCES, MAX_REPLACED, Occurrence, OverrideLayer, OverrideOrigin,
};
pub use flatten::entry_names;
pub use path::IncludePath;

use diagnostics::{CYCLE_KEPT, duplicate_agent_skills, join_kept, mistyped_fields};
use flatten::{Analysis, NameId, NodeId, Visit, entry_overrides};
use path::PathNode;

/// Fields of a [`ResolvedToolEntry`] that no override may touch.
pub const NON_OVERRIDABLE_FIELDS: [&str; 3] = ["name", "source_skill", "is_inline"];

/// Skills by name, hashed with a fast (randomly seeded) hasher: what a
/// closure loaded for the resolver is best kept in (it looks every included
/// skill up once).
pub type SkillMap = HashMap<SkillName, Skill, foldhash::fast::RandomState>;

/// Where the resolver finds skill definitions (usually the include closure
/// loaded from a store).
pub trait SkillSource {
    /// The skill called `name`, if known.
    fn skill(&self, name: &SkillName) -> Option<&Skill>;

    /// How many skills there are, if known: the walks reserve room for that
    /// many instead of growing (and copying) their tables as they go.
    fn len_hint(&self) -> usize {
        0
    }
}

impl<S: std::hash::BuildHasher> SkillSource for HashMap<SkillName, Skill, S> {
    fn skill(&self, name: &SkillName) -> Option<&Skill> {
        self.get(name)
    }
    fn len_hint(&self) -> usize {
        self.len()
    }
}

impl<S: std::hash::BuildHasher> SkillSource for IndexMap<SkillName, Skill, S> {
    fn skill(&self, name: &SkillName) -> Option<&Skill> {
        self.get(name)
    }
    fn len_hint(&self) -> usize {
        self.len()
    }
}

/// Where the resolver looks up tool specs for the entries it produces.
pub trait ToolLookup {
    /// The tool registered under `name`.
    fn tool(&self, name: &str) -> Option<&ToolSpec>;
    /// The cached tools of the MCP server `source` describes (the item as
    /// written: an implementation may tell two same-named definitions apart by
    /// their launch spec); `None` when never fetched.
    fn mcp_tools(&self, source: &crate::McpSource) -> Option<Vec<&ToolSpec>>;
    /// The Agent Skill found at `path` (as written in the definition).
    fn agent_skill(&self, path: &str) -> Option<&ToolSpec>;
}

impl ToolLookup for crate::registry::ToolRegistry {
    fn tool(&self, name: &str) -> Option<&ToolSpec> {
        self.get(name)
    }

    fn mcp_tools(&self, source: &crate::McpSource) -> Option<Vec<&ToolSpec>> {
        let server = source.server.as_str();
        let tools: Vec<_> = self
            .list(Some(ToolSource::Mcp))
            .filter(|spec| spec.meta_str(crate::Meta::Server) == Some(server))
            .collect();
        (!tools.is_empty()).then_some(tools)
    }

    fn agent_skill(&self, path: &str) -> Option<&ToolSpec> {
        self.list(Some(ToolSource::AgentSkills))
            .find(|spec| spec.meta_str(crate::Meta::Path) == Some(path))
    }
}

/// One tool in a skill's flattened tool set.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResolvedToolEntry {
    /// Entry name: the tool name, `{skill}/_anon_{i}`, `mcp:{server}/{tool}`
    /// or `agent_skill:{path}`.
    pub name: String,
    /// The skill whose item produced the (winning) entry.
    pub source_skill: SkillName,
    /// True for inline tools.
    pub is_inline: bool,
    /// Skill-level overrides with include overrides merged on top.
    pub overrides: ValueMap,
    /// Skills from the root to `source_skill`.
    pub include_path: IncludePath,
    /// The kind of item that produced the entry.
    pub kind: ItemKind,
    /// The tool's spec; `None` when the tool registry does not know it.
    pub tool: Option<ToolSpec>,
}

impl ResolvedToolEntry {
    /// Where the entry's tool comes from: its spec's source, else what the
    /// item that produced it says (an `mcp_sources` entry whose server has
    /// not been queried yet is `mcp`, an `agent_sources` path that matches
    /// no folder `agent_skills`), else the namespace its name is in when
    /// that namespace is reserved for one source (`mcp:`, `agent_skills/`).
    /// `None` for a tool ref the registry does not know in any other
    /// namespace: nothing says where it would come from.
    pub fn source(&self) -> Option<ToolSource> {
        if let Some(tool) = &self.tool {
            return Some(tool.source);
        }
        match self.kind {
            ItemKind::McpSource => Some(ToolSource::Mcp),
            ItemKind::AgentSource => Some(ToolSource::AgentSkills),
            ItemKind::InlineTool => Some(ToolSource::Custom),
            ItemKind::ToolRef | ItemKind::Include => {
                if self.name.starts_with("mcp:") {
                    Some(ToolSource::Mcp)
                } else if self.name.starts_with("agent_skills/") {
                    Some(ToolSource::AgentSkills)
                } else {
                    None
                }
            }
        }
    }
}

/// A successful flattening.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolution {
    /// The root skill.
    pub root: SkillName,
    /// Entries in first-occurrence order.
    pub entries: Vec<ResolvedToolEntry>,
    /// Problems that do not stop resolution (unknown tools, unmatched
    /// overrides, MCP servers with nothing cached).
    pub warnings: Vec<ResolveWarning>,
}

/// Flattens skills from a [`SkillSource`] against a [`ToolLookup`].
pub struct SkillResolver<'a> {
    skills: &'a dyn SkillSource,
    tools: &'a dyn ToolLookup,
}

impl fmt::Debug for SkillResolver<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SkillResolver").finish_non_exhaustive()
    }
}

/// How many skills of a long include path an error shows at each end.
const PATH_HEAD: usize = 5;
const PATH_TAIL: usize = 5;

impl<'a> SkillResolver<'a> {
    /// A resolver over `skills`, looking tools up in `tools`.
    pub fn new(skills: &'a dyn SkillSource, tools: &'a dyn ToolLookup) -> Self {
        Self { skills, tools }
    }

    /// Flattens `root`, failing on the first problem found.
    pub fn resolve(&self, root: &SkillName) -> Result<Resolution, ResolveError> {
        let mut analysis = self.analyze(root)?;
        if !analysis.errors.is_empty() {
            return Err(analysis.errors.swap_remove(0));
        }
        let (entries, _) = self.collect_last_metadata(root, &analysis);
        duplicate_agent_skills(root, &entries, &mut analysis.warnings);
        Ok(Resolution {
            root: root.clone(),
            entries,
            warnings: analysis.warnings,
        })
    }

    /// Every problem that stops `root` from resolving; empty when it resolves.
    pub fn check(&self, root: &SkillName) -> Vec<ResolveError> {
        match self.analyze(root) {
            Ok(analysis) => analysis.errors,
            Err(err) => vec![err],
        }
    }

    /// Warnings and errors together (plan validation, write-time checks).
    pub fn diagnose(&self, root: &SkillName) -> (Vec<ResolveError>, Vec<ResolveWarning>) {
        match self.analyze(root) {
            Ok(analysis) => (analysis.errors, analysis.warnings),
            Err(err) => (vec![err], Vec::new()),
        }
    }

    /// [`Self::diagnose`] of every skill in `roots` at once, for a write of
    /// many skills that include one another: one forward walk from each root
    /// not already reached by an earlier one, so every skill is entered and
    /// every include followed once in all (diagnosing each root alone costs
    /// the sum of their closures, quadratic for a chain). A problem inside a
    /// shared part is reported once, with the path of the walk that reached
    /// it first; every cycle is met (a depth-first walk finds a back edge in
    /// each cyclic part), though not necessarily from each of its members.
    /// Roots that do not exist come first.
    pub fn diagnose_all<'r>(
        &self,
        roots: impl IntoIterator<Item = &'r SkillName>,
    ) -> (Vec<ResolveError>, Vec<ResolveWarning>) {
        let mut diagnosis = self.diagnosis();
        let (mut missing, mut errors, mut warnings) = (Vec::new(), Vec::new(), Vec::new());
        for root in roots {
            let (found, noted) = diagnosis.root(root);
            for error in found {
                match error {
                    ResolveError::SkillNotFound { .. } => missing.push(error),
                    other => errors.push(other),
                }
            }
            warnings.extend(noted);
        }
        missing.append(&mut errors);
        (missing, warnings)
    }

    /// A [`Diagnosis`]: [`Self::diagnose_all`] one root at a time, for a
    /// caller that reports each root's new problems under its name.
    pub fn diagnosis(&self) -> Diagnosis<'_, 'a> {
        Diagnosis {
            resolver: self,
            analysis: Analysis::new(),
        }
    }
}
