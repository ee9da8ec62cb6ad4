//! Flattening a skill into its ordered, de-duplicated tool entries.
//!
//! Two iterative traversals keep this linear in the include graph plus the
//! output, whatever its shape (diamond lattices, 10,000-deep chains):
//!
//! - a forward post-order walk that visits each skill once fixes each entry's
//!   *position* (its first occurrence in the depth-first expansion), and finds
//!   missing includes, cycles and non-overridable fields on the way;
//! - a reverse pre-order walk that visits each skill once fixes each entry's
//!   *value* (its last occurrence), with the include path it was reached by.
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

/// The skills from the root to the skill that defines an entry, shared
/// between entries so long chains cost memory once, not once per entry.
#[derive(Clone)]
pub struct IncludePath(Arc<PathNode>);

struct PathNode {
    skill: SkillName,
    parent: Option<IncludePath>,
    len: usize,
    /// The ancestor [`PATH_HEAD`] skills long, on a longer path: where the
    /// head a long path is shown by ends, so showing it never walks the
    /// whole path.
    head_end: Option<IncludePath>,
    /// Include overrides accumulated along the path, outer ones winning.
    overrides: Arc<ValueMap>,
    /// The overrides written on the include edge from the parent to this
    /// skill (`None` when there were none), kept for `--explain`.
    edge: Option<Arc<ValueMap>>,
    /// A 128-bit fingerprint of the skills from the root to here, computed
    /// the first time two paths are compared (see `PartialEq`).
    fingerprint: std::sync::OnceLock<u128>,
}

impl Drop for PathNode {
    /// Unlinks the chain iteratively: the default recursive drop would
    /// overflow the stack on very deep include chains.
    fn drop(&mut self) {
        let mut parent = self.parent.take();
        while let Some(path) = parent {
            match Arc::try_unwrap(path.0) {
                Ok(mut node) => parent = node.parent.take(),
                Err(_) => break,
            }
        }
    }
}

impl IncludePath {
    fn root(skill: SkillName) -> Self {
        Self(Arc::new(PathNode {
            skill,
            parent: None,
            len: 1,
            head_end: None,
            overrides: Arc::new(ValueMap::new()),
            edge: None,
            fingerprint: std::sync::OnceLock::new(),
        }))
    }

    fn child(&self, skill: SkillName, edge_overrides: &ValueMap) -> Self {
        let (overrides, edge) = if edge_overrides.is_empty() {
            (Arc::clone(&self.0.overrides), None)
        } else {
            let mut merged = edge_overrides.clone();
            for (key, value) in self.0.overrides.iter() {
                merged.insert(key.clone(), value.clone());
            }
            (Arc::new(merged), Some(Arc::new(edge_overrides.clone())))
        };
        let head_end = if self.0.len == PATH_HEAD {
            Some(self.clone())
        } else {
            self.0.head_end.clone()
        };
        Self(Arc::new(PathNode {
            skill,
            parent: Some(self.clone()),
            len: self.0.len + 1,
            head_end,
            overrides,
            edge,
            fingerprint: std::sync::OnceLock::new(),
        }))
    }

    /// The path's fingerprint: each node's mixes its parent's with its skill
    /// name, computed once per node (walking up to the nearest node that has
    /// one, then down), so fingerprinting every path of a closure is linear.
    fn fingerprint(&self) -> u128 {
        if let Some(done) = self.0.fingerprint.get() {
            return *done;
        }
        let mut todo = vec![self];
        let mut above = self.0.parent.as_ref();
        let mut acc = 0u128;
        while let Some(path) = above {
            if let Some(done) = path.0.fingerprint.get() {
                acc = *done;
                break;
            }
            todo.push(path);
            above = path.0.parent.as_ref();
        }
        for path in todo.iter().rev() {
            acc = mix(acc, path.0.skill.as_str());
            let _ = path.0.fingerprint.set(acc);
        }
        acc
    }

    /// The skills on the path, root first.
    pub fn skills(&self) -> Vec<&SkillName> {
        let mut out = Vec::with_capacity(self.0.len);
        let mut node = Some(self);
        while let Some(path) = node {
            out.push(&path.0.skill);
            node = path.0.parent.as_ref();
        }
        out.reverse();
        out
    }

    /// Number of skills on the path.
    pub fn len(&self) -> usize {
        self.0.len
    }

    /// Always false: a path holds at least the root.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The last skill: the one that defines the entry.
    pub fn last(&self) -> &SkillName {
        &self.0.skill
    }

    /// The include overrides accumulated along the path (outer ones winning).
    pub fn overrides(&self) -> &ValueMap {
        &self.0.overrides
    }

    /// The path without its last skill; `None` for the root.
    pub fn parent(&self) -> Option<&IncludePath> {
        self.0.parent.as_ref()
    }

    /// Up to `count` skills ending at this one, root-most first.
    fn last_skills(&self, count: usize) -> Vec<&str> {
        let mut out = Vec::with_capacity(count.min(self.0.len));
        let mut node = Some(self);
        while let Some(path) = node.filter(|_| out.len() < count) {
            out.push(path.0.skill.as_str());
            node = path.0.parent.as_ref();
        }
        out.reverse();
        out
    }
}

/// `root -> … -> skill`; a path longer than eleven skills as its first and
/// last five around its length, as errors show include paths, so showing
/// one costs the same however deep it is.
impl fmt::Display for IncludePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let len = self.0.len;
        let kept = match &self.0.head_end {
            Some(head_end) if len > PATH_HEAD + PATH_TAIL + 1 => {
                let mut kept = head_end.last_skills(PATH_HEAD);
                kept.extend(self.last_skills(PATH_TAIL));
                kept
            }
            _ => self.last_skills(len),
        };
        f.write_str(&join_kept(len, &kept))
    }
}

impl fmt::Debug for IncludePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.skills()).finish()
    }
}

/// `acc` extended by one skill name: two SipHash-1-3 runs with different
/// leading bytes, 128 bits in all.
fn mix(acc: u128, skill: &str) -> u128 {
    use std::hash::{Hash, Hasher};
    let half = |tag: u8| {
        let mut hasher = std::hash::DefaultHasher::new();
        (tag, acc, skill).hash(&mut hasher);
        u128::from(hasher.finish())
    };
    (half(1) << 64) | half(2)
}

impl PartialEq for IncludePath {
    /// The same node, or the same length, last skill and 128-bit fingerprint
    /// of the skills on the way (as rustc's incremental fingerprints: a
    /// collision would take about 2^64 paths). Comparing skill by skill made
    /// `--explain`, which compares one path per entry, quadratic on long
    /// include chains.
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
            || (self.0.len == other.0.len
                && self.0.skill == other.0.skill
                && self.fingerprint() == other.fingerprint())
    }
}

impl Serialize for IncludePath {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let skills = self.skills();
        let mut seq = serializer.serialize_seq(Some(skills.len()))?;
        for skill in skills {
            seq.serialize_element(skill)?;
        }
        seq.end()
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

/// Why one entry is in a tool set and where its overrides came from
/// ([`SkillResolver::explain`]).
///
/// The resolver walks each skill once (see the module documentation), so a
/// sub-skill shared by many include paths is not expanded once per path. What
/// is recorded for an entry is therefore: one occurrence per skill that
/// defines it, at the include path by which the depth-first walk first
/// reached that skill, in the order the walk finished those skills; then the
/// winning occurrence (the last one in the full expansion, found by the
/// reverse walk), marked `won`, when it is not already the last recorded one.
/// The paths through a shared skill between its first and its last can
/// neither fix the entry's position nor win, so nothing that decided the
/// entry is left out, and the record stays linear in the closure, not in
/// the number of paths (2^40 in a 40-layer diamond lattice).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    /// Where the entry appeared, in depth-first order; the first fixed its
    /// position, the one with `won` its metadata. At most
    /// [`MAX_OCCURRENCES`]: the first and the last half of that many.
    pub occurrences: Vec<Occurrence>,
    /// How many occurrences between those were left out (a chain whose every
    /// skill names the entry has one per skill, each with a path as long as
    /// the chain: listing them all made `--explain --format json` quadratic
    /// in the depth, 2 GB for 12,500 skills).
    pub more_occurrences: usize,
    /// One per key of the entry's final overrides, in their order.
    pub overrides: Vec<OverrideOrigin>,
}

/// One place an entry appeared during flattening.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Occurrence {
    /// From the root to the skill that defines the entry there.
    pub include_path: IncludePath,
    /// The overrides the entry carried there.
    pub overrides: ValueMap,
    /// True for exactly one occurrence: the last, whose metadata the entry has.
    pub won: bool,
}

/// Where one key of an entry's final overrides came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OverrideOrigin {
    /// The override key.
    pub key: String,
    /// The value that won.
    pub winner: OverrideLayer,
    /// Weaker values for the same key it replaced, weakest first: the
    /// [`MAX_REPLACED`] nearest the winner.
    pub replaced: Vec<OverrideLayer>,
    /// How many weaker values there were beyond those (a chain with an
    /// override on every include has one per include: listing them all for
    /// every entry made `--explain` quadratic in the depth).
    pub more_replaced: usize,
}

/// The most replaced values an [`OverrideOrigin`] lists.
pub const MAX_REPLACED: usize = 10;

/// The most occurrences an [`Explanation`] lists: the first half of them
/// (the first fixed the entry's position) and the last half (the winner is
/// last).
pub const MAX_OCCURRENCES: usize = 10;

/// One value an override key had at one layer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OverrideLayer {
    /// The value.
    pub value: serde_json::Value,
    /// The skill that declared it (in its `overrides:` or on an include).
    pub from: SkillName,
    /// From the root to `from`.
    pub include_path: IncludePath,
}

/// A name from someone's rows as a warning shows it: control characters
/// escaped (a line break in an `agent_sources` path or an override key
/// would print a line of its own) and at most 512 bytes, both ends kept.
fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    crate::text::shorten_middle(text, 512)
}

/// Where a mistyped override is, as its warning says it.
fn override_place(site: &Site) -> String {
    match site {
        Site::IncludeOverrideField { include, .. } => format!("on its include of '{include}'"),
        Site::OverrideField { target, .. } => {
            format!("for '{}'", crate::text::shorten(target, 200))
        }
        _ => String::new(),
    }
}

/// A problem that does not stop resolution.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveWarning {
    /// A tool ref the tool registry does not know.
    #[error("Skill '{skill}': Tool '{}' is not registered", shown(.tool))]
    UnknownTool {
        /// The skill holding the ref.
        skill: SkillName,
        /// The unknown tool.
        tool: String,
    },
    /// A skill-level override whose key matches none of the skill's entries.
    #[error(
        "Skill '{skill}': override for '{}' matches no tool of the skill",
        shown(.target)
    )]
    UnmatchedOverride {
        /// The skill declaring the override.
        skill: SkillName,
        /// The key that matched nothing.
        target: String,
    },
    /// An MCP server whose tools were never fetched.
    #[error(
        "Skill '{skill}': MCP server '{server}' has no cached tool list (run `{}` or use `--refresh`)",
        crate::skill::mcp_refresh_command(.server)
    )]
    McpNotCached {
        /// The skill holding the source.
        skill: SkillName,
        /// The server.
        server: String,
    },
    /// An `agent_sources` path that matches no discovered or readable folder.
    #[error(
        "Skill '{skill}': agent source '{}' matches no Agent Skill folder (run `agents skill discover` or check the path)",
        shown(.path)
    )]
    UnknownAgentSkill {
        /// The skill holding the source.
        skill: SkillName,
        /// The path as written.
        path: String,
    },
    /// Two entries of one tool set are the same Agent Skill under two names
    /// (a `tools:` ref `agent_skills/x` and an `agent_sources` path to x's
    /// folder, or two spellings of one folder).
    #[error(
        "Skill '{skill}': entries '{}' and '{}' are the same Agent Skill '{}'; the agent gets it twice",
        shown(.first),
        shown(.second),
        shown(.tool)
    )]
    DuplicateAgentSkill {
        /// The root skill.
        skill: SkillName,
        /// The earlier entry.
        first: String,
        /// The later entry.
        second: String,
        /// The Agent Skill's tool name.
        tool: String,
    },
    /// An override of a field the registry reads, with a value of a type it
    /// cannot use (`read_only: "true"`): it counts as unset, and, being the
    /// stronger layer, it also hides any weaker value of the same field.
    #[error(
        "Skill '{skill}': override `{field}` {} is {found}, expected {expected}; it counts as unset and hides any weaker value of `{field}`",
        override_place(.site)
    )]
    MistypedOverride {
        /// The skill declaring it.
        skill: SkillName,
        /// Where: [`Site::OverrideField`] (a skill-level override, shown
        /// `for 'TOOL'`) or [`Site::IncludeOverrideField`] (`on its include
        /// of 'S'`).
        site: Site,
        /// The field.
        field: String,
        /// What was given: the JSON type, or a number as written (`0`).
        found: String,
        /// What the field takes.
        expected: &'static str,
    },
    /// An allow-listed tool the MCP server does not offer.
    #[error(
        "Skill '{skill}': MCP server '{}' has no tool '{}'",
        shown(.server),
        shown(.tool)
    )]
    McpToolMissing {
        /// The skill holding the source.
        skill: SkillName,
        /// The server.
        server: String,
        /// The allow-listed tool.
        tool: String,
        /// The tool of the server's cached list closest to `tool`, if one
        /// is close enough to be what was meant (the caller shows it).
        did_you_mean: Option<String>,
    },
}

impl ResolveWarning {
    /// The skill whose definition holds the problem and the part of it the
    /// problem is about (see [`ResolveError::site`]). `None` for an MCP
    /// server with no cached list, and for an Agent Skill named twice (a
    /// problem of the tool set, not of one entry); an allow-listed tool its
    /// server's cached list lacks is at the entry's `tools`.
    pub fn site(&self) -> Option<(&SkillName, Site)> {
        match self {
            Self::UnknownTool { skill, tool } => Some((skill, Site::ToolRef(tool.clone()))),
            Self::UnmatchedOverride { skill, target } => {
                Some((skill, Site::Override(target.clone())))
            }
            Self::UnknownAgentSkill { skill, path } => {
                Some((skill, Site::AgentSource(path.clone())))
            }
            Self::MistypedOverride { skill, site, .. } => Some((skill, site.clone())),
            Self::McpToolMissing { skill, server, .. } => Some((
                skill,
                Site::McpSourceField {
                    server: server.clone(),
                    field: "tools".into(),
                },
            )),
            Self::McpNotCached { .. } | Self::DuplicateAgentSkill { .. } => None,
        }
    }

    /// A stable machine-readable kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::UnknownTool { .. } => "unknown_tool",
            Self::UnmatchedOverride { .. } => "unmatched_override",
            Self::McpNotCached { .. } => "mcp_not_cached",
            Self::UnknownAgentSkill { .. } => "unknown_agent_skill",
            Self::DuplicateAgentSkill { .. } => "duplicate_agent_skill",
            Self::MistypedOverride { .. } => "mistyped_override",
            Self::McpToolMissing { .. } => "mcp_tool_missing",
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

/// Why a skill cannot be flattened.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ResolveError {
    /// The root skill does not exist.
    #[error("Skill '{name}' is not registered")]
    SkillNotFound {
        /// The missing root.
        name: SkillName,
    },
    /// An include names a skill that does not exist.
    #[error("Skill '{skill}': Included skill '{include}' not found (include path: {path})")]
    MissingInclude {
        /// The skill that declares the include.
        skill: SkillName,
        /// The missing skill.
        include: SkillName,
        /// From the root to `skill`.
        path: String,
    },
    /// Includes loop back on themselves.
    #[error("Cycle detected in skill includes: {}", join_cycle(cycle, *len))]
    Cycle {
        /// The cycle, starting and ending with the same skill: all of it,
        /// or, for one of more than 11 skills, its first 5 and last 5 only
        /// (what the message shows), so finding a cycle costs the same
        /// however deep the walk is.
        cycle: Vec<SkillName>,
        /// How many skills the whole cycle has (its first counted twice):
        /// `cycle.len()` when nothing was left out.
        len: usize,
    },
    /// An override touches `name`, `source_skill` or `is_inline`.
    #[error(
        "Non-overridable field(s) {} in overrides from skill '{skill}' (include path: {path})",
        quote_list(fields)
    )]
    NonOverridable {
        /// The offending fields.
        fields: Vec<String>,
        /// The skill that declares the override.
        skill: SkillName,
        /// From the root to `skill` (and the included skill, for include overrides).
        path: String,
    },
}

impl ResolveError {
    /// The skill whose definition holds the problem and the part of it the
    /// problem is about: a missing include at the include, a cycle at its
    /// first skill's include of the second. `None` for a root that does not
    /// exist, and for a non-overridable field (refused when a definition is
    /// parsed, so only a stored row holds one).
    pub fn site(&self) -> Option<(&SkillName, Site)> {
        match self {
            Self::MissingInclude { skill, include, .. } => {
                Some((skill, Site::Include(include.clone())))
            }
            Self::Cycle { cycle, .. } => match cycle.as_slice() {
                [first, second, ..] => Some((first, Site::Include(second.clone()))),
                _ => None,
            },
            Self::SkillNotFound { .. } | Self::NonOverridable { .. } => None,
        }
    }

    /// A stable machine-readable kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::SkillNotFound { .. } => "skill_not_found",
            Self::MissingInclude { .. } => "missing_include",
            Self::Cycle { .. } => "cycle",
            Self::NonOverridable { .. } => "non_overridable_field",
        }
    }
}

/// The most skills of a long cycle a [`ResolveError::Cycle`] keeps: half
/// from each end.
const CYCLE_KEPT: usize = PATH_HEAD + PATH_TAIL;

/// A cycle as written, or for a long one its first and last skills around
/// its length, so the message stays short.
fn join_cycle(kept: &[SkillName], len: usize) -> String {
    let kept: Vec<&str> = kept.iter().map(SkillName::as_str).collect();
    join_kept(len, &kept)
}

/// A chain of `len` skills as errors show one (see
/// [`crate::text::head_tail_by`]), from the skills `kept` of it: all of
/// them, or for a long one only the first [`PATH_HEAD`] and last
/// [`PATH_TAIL`], which are all that is shown.
fn join_kept(len: usize, kept: &[&str]) -> String {
    // Positions past the head map onto the kept tail.
    let left_out = len.saturating_sub(kept.len());
    crate::text::head_tail_by(
        len,
        |i| {
            let at = if i < PATH_HEAD {
                Some(i)
            } else {
                i.checked_sub(left_out)
            };
            at.and_then(|at| kept.get(at)).copied().unwrap_or_default()
        },
        PATH_HEAD,
        PATH_TAIL,
        " -> ",
    )
}

fn quote_list(fields: &[String]) -> String {
    fields
        .iter()
        .map(|f| format!("'{f}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The names a skill's own items contribute, in the order the spec gives:
/// tool refs, inline tools, MCP tools, agent skills.
pub fn entry_names(skill: &Skill, tools: &dyn ToolLookup) -> Vec<String> {
    let mut names: Vec<String> = tool_ref_names(skill).map(str::to_owned).collect();
    names.extend(
        other_entries(skill, tools, &mut Vec::new())
            .into_iter()
            .map(|e| e.name),
    );
    names
}

/// The names of a skill's tool refs, in order: its first own entries.
fn tool_ref_names(skill: &Skill) -> impl Iterator<Item = &str> {
    skill.items.iter().filter_map(|item| match item {
        SkillItem::ToolRef { name } => Some(name.as_str()),
        _ => None,
    })
}

/// One of a skill's own entries other than its tool refs. The spec is
/// borrowed from the lookup (or owned, for inline tools): a closure visits
/// each skill once but a tool is named by many skills, and only the winning
/// occurrence needs its own copy.
struct OwnEntry<'t> {
    name: String,
    kind: ItemKind,
    tool: Option<Cow<'t, ToolSpec>>,
}

/// A skill's own entries after its tool refs: inline tools, MCP tools,
/// agent skills, in that order.
fn other_entries<'t>(
    skill: &Skill,
    tools: &'t dyn ToolLookup,
    warnings: &mut Vec<ResolveWarning>,
) -> Vec<OwnEntry<'t>> {
    let mut out = Vec::new();
    let inline = skill.items.iter().filter_map(|item| match item {
        SkillItem::InlineTool(tool) => Some(tool),
        _ => None,
    });
    for (index, tool) in inline.enumerate() {
        let name = skill.inline_tool_name(index);
        let mut spec = ToolSpec::new(
            name.clone(),
            tool.description.clone().unwrap_or_default(),
            ToolSource::Custom,
        );
        spec.input_schema = tool.input_schema.clone();
        spec.output_schema = tool.output_schema.clone();
        spec.read_only = Some(tool.read_only);
        spec.writes = Some(tool.writes);
        spec.checkpointable = Some(tool.checkpointable);
        spec.side_effects = Some(tool.has_side_effects());
        if let Some(run) = &tool.run
            && let Ok(run) = serde_json::to_value(run)
        {
            spec.set_meta(crate::Meta::Run, run);
        }
        out.push(OwnEntry {
            name,
            kind: ItemKind::InlineTool,
            tool: Some(Cow::Owned(spec)),
        });
    }
    for item in &skill.items {
        let SkillItem::McpSource(source) = item else {
            continue;
        };
        let prefix = format!("mcp:{}/", source.server);
        match tools.mcp_tools(source) {
            Some(served) => {
                // One order whether cached or not: the allow-list's when there
                // is one, else the server's own listing order.
                let short_of = |spec: &&ToolSpec| {
                    spec.name
                        .strip_prefix(&prefix)
                        .unwrap_or(&spec.name)
                        .to_owned()
                };
                let chosen: Vec<&ToolSpec> = match &source.tools {
                    Some(allow) => {
                        let by_short: HashMap<String, &ToolSpec> =
                            served.iter().map(|spec| (short_of(spec), *spec)).collect();
                        let mut chosen = Vec::with_capacity(allow.len());
                        for wanted in allow {
                            match by_short.get(wanted) {
                                Some(spec) => chosen.push(*spec),
                                None => {
                                    let offered: Vec<&str> =
                                        by_short.keys().map(String::as_str).collect();
                                    warnings.push(ResolveWarning::McpToolMissing {
                                        skill: skill.name.clone(),
                                        server: source.server.clone(),
                                        tool: wanted.clone(),
                                        did_you_mean: crate::text::did_you_mean(wanted, &offered)
                                            .map(str::to_owned),
                                    });
                                }
                            }
                        }
                        chosen
                    }
                    None => served,
                };
                for spec in chosen {
                    out.push(OwnEntry {
                        name: format!("{prefix}{}", short_of(&spec)),
                        kind: ItemKind::McpSource,
                        tool: Some(Cow::Borrowed(spec)),
                    });
                }
            }
            None => {
                warnings.push(ResolveWarning::McpNotCached {
                    skill: skill.name.clone(),
                    server: source.server.clone(),
                });
                for wanted in source.tools.iter().flatten() {
                    out.push(OwnEntry {
                        name: format!("{prefix}{wanted}"),
                        kind: ItemKind::McpSource,
                        tool: None,
                    });
                }
            }
        }
    }
    for item in &skill.items {
        if let SkillItem::AgentSource(source) = item {
            out.push(OwnEntry {
                name: format!("agent_skill:{}", source.path),
                kind: ItemKind::AgentSource,
                tool: tools.agent_skill(&source.path).map(Cow::Borrowed),
            });
        }
    }
    out
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

/// Forward walks from one root after another over one shared numbering
/// ([`SkillResolver::diagnosis`]): a skill an earlier root reached is not
/// walked again, so diagnosing many roots costs their combined closure once.
pub struct Diagnosis<'r, 'a> {
    resolver: &'r SkillResolver<'a>,
    analysis: Analysis<'a>,
}

impl fmt::Debug for Diagnosis<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Diagnosis").finish_non_exhaustive()
    }
}

impl Diagnosis<'_, '_> {
    /// The problems first met from `root`: none for a root an earlier one
    /// already reached (its problems were reported then), and
    /// [`ResolveError::SkillNotFound`] for one that does not exist.
    pub fn root(&mut self, root: &SkillName) -> (Vec<ResolveError>, Vec<ResolveWarning>) {
        let analysis = &mut self.analysis;
        let node = match analysis.index.get(root.as_str()) {
            Some(&node) => node,
            None => match self.resolver.skills.skill(root) {
                Some(skill) => analysis.add_node(skill.name.as_str(), skill),
                None => {
                    return (
                        vec![ResolveError::SkillNotFound { name: root.clone() }],
                        Vec::new(),
                    );
                }
            },
        };
        if matches!(
            analysis.nodes.get(node).map(|n| n.visit),
            Some(Visit::Pending)
        ) {
            self.resolver.walk(node, analysis);
        }
        (
            std::mem::take(&mut analysis.errors),
            std::mem::take(&mut analysis.warnings),
        )
    }
}

/// The walks' hash maps: names are hashed once per include edge and once
/// per own entry, so a fast (randomly seeded) hasher matters.
type FastHash = foldhash::fast::RandomState;

/// A skill reached by the forward walk: its index in [`Analysis::nodes`].
type NodeId = usize;
/// An entry name: its index in [`Analysis::names`].
type NameId = usize;

/// Where the forward walk is with a skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Visit {
    /// Named by an include already entered, not entered yet.
    Pending,
    /// On the walk's stack, at this index (so a back edge finds where its
    /// cycle starts without searching the stack).
    Open(u32),
    /// Done.
    Finished,
}

/// A skill the forward walk reached, numbered when an include first names it.
struct Node<'a> {
    skill: &'a Skill,
    visit: Visit,
    /// The skill whose include the forward walk entered it by, and that
    /// include (`None` for a root). The path it was first reached by is
    /// rebuilt from these only for `explain` ([`FirstPaths`]): the walk
    /// itself allocates no path.
    entered_by: Option<(NodeId, &'a crate::skill::Include)>,
    /// Its tool refs' entries: a range of [`Analysis::refs`] (set on
    /// entering); its other own entries come after them.
    refs: Range<usize>,
    /// Its other own entries: a range of [`Analysis::entries`] (set on entering).
    others: Range<usize>,
    /// Its includes in order: a range of [`Analysis::edges`] (set on entering).
    edges: Range<usize>,
}

impl<'a> Node<'a> {
    fn new(skill: &'a Skill) -> Self {
        Self {
            skill,
            visit: Visit::Pending,
            entered_by: None,
            refs: 0..0,
            others: 0..0,
            edges: 0..0,
        }
    }
}

/// One of a reached skill's own entries.
#[derive(Clone, Copy)]
struct Entry<'a> {
    name: NameId,
    kind: ItemKind,
    tool: EntryTool<'a>,
}

/// An [`Entry`]'s spec.
#[derive(Clone, Copy)]
enum EntryTool<'a> {
    /// The lookup does not know it.
    Unknown,
    /// Borrowed from the lookup.
    Found(&'a ToolSpec),
    /// An inline tool's spec: an index into [`Analysis::inline`].
    Inline(usize),
}

/// An include of a reached skill and the node of the skill it names
/// (`None`: no such skill).
struct Edge<'a> {
    include: &'a crate::skill::Include,
    target: Option<NodeId>,
}

/// How many tool refs and includes [`Analysis::reserve`] makes room for
/// per skill: a guess (a typical skill names a handful of tools and includes
/// a skill or two); a closure with more grows its vectors as usual.
const REFS_PER_SKILL: usize = 8;
const INCLUDES_PER_SKILL: usize = 2;

/// How many skills of a long include path an error shows at each end.
const PATH_HEAD: usize = 5;
const PATH_TAIL: usize = 5;

/// A skill on the forward walk's stack. The stack is the include path the
/// walk reached the skill on top by.
struct Frame {
    node: NodeId,
    /// The next of the node's edges to follow, and the end of them.
    next: usize,
    end: usize,
}

struct Analysis<'a> {
    errors: Vec<ResolveError>,
    warnings: Vec<ResolveWarning>,
    nodes: Vec<Node<'a>>,
    /// The node of each skill reached, by the name it was looked up by.
    index: HashMap<&'a str, NodeId, FastHash>,
    /// The entries of tool refs, as names only: a closure has one per tool
    /// ref of every skill in it, and a ref's spec is per name
    /// ([`Analysis::ref_tools`]), so 8 bytes each instead of an [`Entry`]'s 32.
    refs: Vec<NameId>,
    /// Every other own entry (inline tools, MCP tools, agent skills).
    entries: Vec<Entry<'a>>,
    edges: Vec<Edge<'a>>,
    /// Every entry name met, each once.
    names: IndexSet<Cow<'a, str>, FastHash>,
    /// Per name: what the lookup said for a tool ref of that name, asked on
    /// the first such ref only.
    ref_tools: Vec<Option<Option<&'a ToolSpec>>>,
    /// Per name: already placed in `order`.
    placed: Vec<bool>,
    /// The specs of inline tools (built, not borrowed).
    inline: Vec<ToolSpec>,
    /// Entry names in first-occurrence order.
    order: Vec<NameId>,
    /// Skills in the order the forward walk finished them (post-order).
    finished: Vec<NodeId>,
}

impl<'a> Analysis<'a> {
    fn new() -> Self {
        Self {
            errors: Vec::new(),
            warnings: Vec::new(),
            nodes: Vec::new(),
            index: HashMap::default(),
            refs: Vec::new(),
            entries: Vec::new(),
            edges: Vec::new(),
            names: IndexSet::default(),
            ref_tools: Vec::new(),
            placed: Vec::new(),
            inline: Vec::new(),
            order: Vec::new(),
            finished: Vec::new(),
        }
    }

    /// Room for `skills` nodes (at most every skill is reached once), and
    /// for a few entries and includes each. Growing these vectors instead
    /// copies them about once more in all, into memory the process has not
    /// touched yet: for a closure of 20,000 skills that copying was about a
    /// sixth of the walk's instructions.
    fn reserve(&mut self, skills: usize) {
        self.nodes.reserve(skills);
        self.index.reserve(skills);
        self.finished.reserve(skills);
        self.refs.reserve(skills.saturating_mul(REFS_PER_SKILL));
        self.edges
            .reserve(skills.saturating_mul(INCLUDES_PER_SKILL));
    }

    /// Numbers `skill`, looked up as `name`.
    fn add_node(&mut self, name: &'a str, skill: &'a Skill) -> NodeId {
        let id = self.nodes.len();
        self.nodes.push(Node::new(skill));
        self.index.insert(name, id);
        id
    }

    fn intern(&mut self, name: Cow<'a, str>) -> NameId {
        let (id, new) = self.names.insert_full(name);
        if new {
            self.ref_tools.push(None);
            self.placed.push(false);
        }
        id
    }

    /// [`Self::intern`] of a tool ref's name, keeping a copy of a new name
    /// rather than a pointer into the skill that named it: the few hundred
    /// distinct names then sit together in memory, and each of the tens of
    /// thousands of refs compares against a key already in cache instead of
    /// one in some far-off skill's items.
    fn intern_ref(&mut self, name: &str) -> NameId {
        match self.names.get_index_of(name) {
            Some(id) => id,
            None => self.intern(Cow::Owned(name.to_owned())),
        }
    }

    fn name(&self, id: NameId) -> &str {
        self.names.get_index(id).map_or("", |name| name.as_ref())
    }

    /// The include path along `stack`, then `last`, as an error prints it:
    /// a long one as its head and tail around its length (see
    /// [`crate::text::head_tail`]), so neither the message nor the time to
    /// make it grows with the depth (a chain of thousands of skills, each
    /// with a missing include, is one error per skill).
    fn path_text(&self, stack: &[Frame], last: Option<&str>) -> String {
        let len = stack.len() + usize::from(last.is_some());
        crate::text::head_tail_by(
            len,
            |i| match stack.get(i) {
                Some(frame) => self.nodes[frame.node].skill.name.as_str(),
                None => last.unwrap_or_default(),
            },
            PATH_HEAD,
            PATH_TAIL,
            " -> ",
        )
    }

    /// `node`'s own entries in order: its tool refs, then the others.
    fn own(&self, node: &Node<'a>) -> impl DoubleEndedIterator<Item = Entry<'a>> + '_ {
        let refs = self.refs[node.refs.clone()].iter().map(|&name| Entry {
            name,
            kind: ItemKind::ToolRef,
            tool: match self.ref_tools[name] {
                Some(Some(spec)) => EntryTool::Found(spec),
                _ => EntryTool::Unknown,
            },
        });
        refs.chain(self.entries[node.others.clone()].iter().copied())
    }

    fn spec(&self, tool: EntryTool<'a>) -> Option<&ToolSpec> {
        match tool {
            EntryTool::Unknown => None,
            EntryTool::Found(spec) => Some(spec),
            EntryTool::Inline(index) => self.inline.get(index),
        }
    }
}

/// One override layer: the value, the skill that wrote it and the path to
/// that skill.
type Layer<'e> = (&'e serde_json::Value, &'e SkillName, &'e IncludePath);

/// The include-edge layers setting one key on the path from the root to a
/// path node, strongest (nearest the root) first: the first
/// `MAX_REPLACED + 1` of them, and how many there are in all.
#[derive(Default, Clone)]
struct EdgeLayers<'e> {
    kept: Vec<Layer<'e>>,
    count: usize,
}

/// [`EdgeLayers`] per path node and key, for `--explain`: a node's are its
/// parent's plus its own include edge, so each (node, key) is computed once
/// and entries sharing a path do not each walk it (a chain of thousands of
/// skills with an override on every include walked it once per entry:
/// quadratic).
#[derive(Default)]
struct PathLayers<'e> {
    /// By the path node's address (the entries keep every node alive while
    /// this exists) and the key.
    known: HashMap<(*const PathNode, &'e str), Arc<EdgeLayers<'e>>>,
    /// Path nodes computed, for the test that pins the linear cost.
    steps: usize,
}

impl<'e> PathLayers<'e> {
    fn of(&mut self, path: &'e IncludePath, key: &'e str) -> Arc<EdgeLayers<'e>> {
        // Up to the nearest node already known (or past the root)...
        let mut todo: Vec<&'e IncludePath> = Vec::new();
        let mut known = Arc::new(EdgeLayers::default());
        let mut at = Some(path);
        while let Some(node) = at {
            if let Some(done) = self.known.get(&(Arc::as_ptr(&node.0), key)) {
                known = Arc::clone(done);
                break;
            }
            todo.push(node);
            at = node.parent();
        }
        // ... then down again, adding each node's include edge.
        for node in todo.into_iter().rev() {
            self.steps += 1;
            let edge = node.0.edge.as_deref().and_then(|edge| edge.get(key));
            if let (Some(value), Some(parent)) = (edge, node.parent()) {
                let mut next = EdgeLayers::clone(&known);
                next.count += 1;
                if next.kept.len() <= MAX_REPLACED {
                    next.kept.push((value, parent.last(), parent));
                }
                known = Arc::new(next);
            }
            self.known
                .insert((Arc::as_ptr(&node.0), key), Arc::clone(&known));
        }
        known
    }
}

/// The [`IncludePath`] each reached skill was first entered by, built on
/// demand from [`Node::entered_by`] and kept, so building the paths of every
/// skill costs one path node per skill (a path shares its parent's).
struct FirstPaths(Vec<Option<IncludePath>>);

impl FirstPaths {
    fn new(nodes: usize) -> Self {
        let mut paths = Vec::new();
        paths.resize_with(nodes, || None);
        Self(paths)
    }

    fn get(&mut self, analysis: &Analysis<'_>, node: NodeId) -> IncludePath {
        // Up to the nearest path already built (or the root's, built now),
        // then down, building and keeping each path on the way.
        let mut below = Vec::new();
        let mut at = node;
        let mut path = loop {
            if let Some(path) = &self.0[at] {
                break path.clone();
            }
            match analysis.nodes[at].entered_by {
                Some((parent, include)) => {
                    below.push((at, include));
                    at = parent;
                }
                None => {
                    let root = IncludePath::root(analysis.nodes[at].skill.name.clone());
                    self.0[at] = Some(root.clone());
                    break root;
                }
            }
        };
        for &(id, include) in below.iter().rev() {
            path = path.child(analysis.nodes[id].skill.name.clone(), &include.overrides);
            self.0[id] = Some(path.clone());
        }
        path
    }
}

/// How the reverse walk reached a skill.
enum Via<'a> {
    Root,
    Include(IncludePath, &'a ValueMap),
}

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
        let (entries, _) = self.collect_values(root, &analysis);
        duplicate_agent_skills(root, &entries, &mut analysis.warnings);
        Ok(Resolution {
            root: root.clone(),
            entries,
            warnings: analysis.warnings,
        })
    }

    /// Flattens `root` like [`Self::resolve`] and says, for every entry, where
    /// it occurred and where each of its final overrides came from (the
    /// explanations are parallel to `entries`; see [`Explanation`] for what
    /// is recorded). Cost: linear in the occurrences recorded (at most one per
    /// skill defining the entry, plus the winning one), times the length of
    /// the include paths printed with them.
    pub fn explain(
        &self,
        root: &SkillName,
    ) -> Result<(Resolution, Vec<Explanation>), ResolveError> {
        let mut analysis = self.analyze(root)?;
        if !analysis.errors.is_empty() {
            return Err(analysis.errors.swap_remove(0));
        }
        let (entries, ids) = self.collect_values(root, &analysis);
        duplicate_agent_skills(root, &entries, &mut analysis.warnings);
        let explanations = self.explanations(&analysis, &entries, &ids);
        Ok((
            Resolution {
                root: root.clone(),
                entries,
                warnings: analysis.warnings,
            },
            explanations,
        ))
    }

    fn explanations(
        &self,
        analysis: &Analysis<'a>,
        entries: &[ResolvedToolEntry],
        ids: &[NameId],
    ) -> Vec<Explanation> {
        let mut seen: Vec<Vec<Occurrence>> = Vec::new();
        seen.resize_with(analysis.names.len(), Vec::new);
        let mut paths = FirstPaths::new(analysis.nodes.len());
        let mut layers = PathLayers::default();
        for &id in &analysis.finished {
            let node = &analysis.nodes[id];
            let path = paths.get(analysis, id);
            for entry in analysis.own(node) {
                seen[entry.name].push(Occurrence {
                    include_path: path.clone(),
                    overrides: entry_overrides(node.skill, analysis.name(entry.name), &path),
                    won: false,
                });
            }
        }
        entries
            .iter()
            .zip(ids)
            .map(|(entry, &id)| {
                let mut occurrences = std::mem::take(&mut seen[id]);
                match occurrences.last_mut() {
                    Some(last)
                        if last.include_path == entry.include_path
                            && last.overrides == entry.overrides =>
                    {
                        last.won = true;
                    }
                    _ => occurrences.push(Occurrence {
                        include_path: entry.include_path.clone(),
                        overrides: entry.overrides.clone(),
                        won: true,
                    }),
                }
                let overrides = self.override_origins(entry, &mut layers);
                let more_occurrences = occurrences.len().saturating_sub(MAX_OCCURRENCES);
                if more_occurrences > 0 {
                    let head = MAX_OCCURRENCES / 2;
                    occurrences.drain(head..head + more_occurrences);
                }
                Explanation {
                    occurrences,
                    more_occurrences,
                    overrides,
                }
            })
            .collect()
    }

    /// Where each of `entry`'s final overrides came from: the layers from the
    /// strongest (the root's include edge) to the weakest (the defining
    /// skill's own `overrides:`). The include edges come from `layers`, which
    /// walks each path node once per key however many entries share it.
    fn override_origins<'e>(
        &self,
        entry: &'e ResolvedToolEntry,
        layers: &mut PathLayers<'e>,
    ) -> Vec<OverrideOrigin> {
        // No final override, no origin to find: the path is not walked.
        if entry.overrides.is_empty() {
            return Vec::new();
        }
        let own = self
            .skills
            .skill(&entry.source_skill)
            .and_then(|skill| skill.overrides.get(&entry.name));
        entry
            .overrides
            .iter()
            .filter_map(|(key, _)| {
                let edges = layers.of(&entry.include_path, key);
                let own = own
                    .and_then(|fields| fields.get(key))
                    .map(|value| (value, &entry.source_skill, &entry.include_path));
                let total = edges.count + usize::from(own.is_some());
                // Strongest first: the winner, then the layers it replaced,
                // of which the nearest `MAX_REPLACED` are kept.
                let mut found =
                    edges
                        .kept
                        .iter()
                        .copied()
                        .chain(own)
                        .map(|(value, from, path): Layer<'_>| OverrideLayer {
                            value: value.clone(),
                            from: from.clone(),
                            include_path: path.clone(),
                        });
                let winner = found.next()?;
                let mut replaced: Vec<OverrideLayer> = found.take(MAX_REPLACED).collect();
                let more_replaced = total - 1 - replaced.len();
                replaced.reverse();
                Some(OverrideOrigin {
                    key: key.clone(),
                    winner,
                    replaced,
                    more_replaced,
                })
            })
            .collect()
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

    /// The forward walk (see the module documentation).
    fn analyze(&self, root: &SkillName) -> Result<Analysis<'a>, ResolveError> {
        let root_skill = self
            .skills
            .skill(root)
            .ok_or_else(|| ResolveError::SkillNotFound { name: root.clone() })?;
        let mut analysis = Analysis::new();
        analysis.reserve(self.skills.len_hint());
        let root_node = analysis.add_node(root_skill.name.as_str(), root_skill);
        self.walk(root_node, &mut analysis);
        Ok(analysis)
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

    /// The forward walk from `root_node` (not yet entered) over the skills
    /// `analysis` has not reached yet.
    fn walk(&self, root_node: NodeId, analysis: &mut Analysis<'a>) {
        let mut stack: Vec<Frame> = Vec::new();
        let edges = self.enter(root_node, None, &stack, analysis);
        stack.push(Frame {
            node: root_node,
            next: edges.start,
            end: edges.end,
        });
        while let Some(frame) = stack.last_mut() {
            let parent = frame.node;
            let at = frame.next;
            if at == frame.end {
                let node = &mut analysis.nodes[parent];
                node.visit = Visit::Finished;
                analysis.finished.push(parent);
                let (refs, others) = (node.refs.clone(), node.others.clone());
                let names = analysis.refs[refs]
                    .iter()
                    .copied()
                    .chain(analysis.entries[others].iter().map(|entry| entry.name));
                for name in names {
                    if !analysis.placed[name] {
                        analysis.placed[name] = true;
                        analysis.order.push(name);
                    }
                }
                stack.pop();
                continue;
            }
            frame.next += 1;
            let Edge { include, target } = analysis.edges[at];
            let skill = analysis.nodes[parent].skill;
            for (field, found, expected) in mistyped_fields(&include.overrides) {
                analysis.warnings.push(ResolveWarning::MistypedOverride {
                    skill: skill.name.clone(),
                    site: Site::IncludeOverrideField {
                        include: include.skill.clone(),
                        field: field.clone(),
                    },
                    field,
                    found,
                    expected,
                });
            }
            let blocked = crate::skill::locked_fields(&include.overrides);
            if !blocked.is_empty() {
                analysis.errors.push(ResolveError::NonOverridable {
                    fields: blocked,
                    skill: skill.name.clone(),
                    path: analysis.path_text(&stack, Some(include.skill.as_str())),
                });
            }
            let Some(target) = target else {
                analysis.errors.push(ResolveError::MissingInclude {
                    skill: skill.name.clone(),
                    include: include.skill.clone(),
                    path: analysis.path_text(&stack, None),
                });
                // Report each missing skill once per declaring skill.
                continue;
            };
            match analysis.nodes[target].visit {
                Visit::Finished => continue,
                Visit::Open(start) => {
                    // The cycle is the stack from `target` up, then `target`
                    // again; only its ends are kept (see `CYCLE_KEPT`).
                    let on_stack = stack.get(start as usize..).unwrap_or_default();
                    let len = on_stack.len() + 1;
                    let name = |frame: &Frame| analysis.nodes[frame.node].skill.name.clone();
                    let mut cycle: Vec<SkillName> = if len <= CYCLE_KEPT + 1 {
                        on_stack.iter().map(name).collect()
                    } else {
                        let tail = on_stack.len() - (PATH_TAIL - 1);
                        on_stack[..PATH_HEAD]
                            .iter()
                            .chain(&on_stack[tail..])
                            .map(name)
                            .collect()
                    };
                    cycle.push(include.skill.clone());
                    analysis.errors.push(ResolveError::Cycle { cycle, len });
                    continue;
                }
                Visit::Pending => {}
            }
            let edges = self.enter(target, Some((parent, include)), &stack, analysis);
            stack.push(Frame {
                node: target,
                next: edges.start,
                end: edges.end,
            });
        }
    }

    /// First visit of a skill in the forward walk (`stack` is the path to
    /// it): check its own overrides, number the skills it includes and
    /// compute its own entries. Returns its edges.
    fn enter(
        &self,
        node: NodeId,
        entered_by: Option<(NodeId, &'a crate::skill::Include)>,
        stack: &[Frame],
        analysis: &mut Analysis<'a>,
    ) -> Range<usize> {
        let skill = analysis.nodes[node].skill;
        analysis.nodes[node].entered_by = entered_by;
        let mut blocked: Vec<String> = Vec::new();
        for fields in skill.overrides.values() {
            for field in crate::skill::locked_fields(fields) {
                if !blocked.contains(&field) {
                    blocked.push(field);
                }
            }
        }
        if !blocked.is_empty() {
            analysis.errors.push(ResolveError::NonOverridable {
                fields: blocked,
                skill: skill.name.clone(),
                path: analysis.path_text(stack, Some(skill.name.as_str())),
            });
        }
        for (target, fields) in skill.overrides.iter() {
            for (field, found, expected) in mistyped_fields(fields) {
                analysis.warnings.push(ResolveWarning::MistypedOverride {
                    skill: skill.name.clone(),
                    site: Site::OverrideField {
                        target: target.clone(),
                        field: field.clone(),
                    },
                    field,
                    found,
                    expected,
                });
            }
        }
        // One pass over the items (a closure is mostly tool refs and
        // includes): edges and tool-ref entries in item order.
        let edges_start = analysis.edges.len();
        let refs_start = analysis.refs.len();
        let mut others = false;
        for item in &skill.items {
            match item {
                SkillItem::Include(include) => {
                    // One hash of the name, whether it is new or not.
                    let target = match analysis.index.entry(include.skill.as_str()) {
                        Slot::Occupied(slot) => Some(*slot.get()),
                        Slot::Vacant(slot) => self.skills.skill(&include.skill).map(|child| {
                            let id = analysis.nodes.len();
                            slot.insert(id);
                            analysis.nodes.push(Node::new(child));
                            id
                        }),
                    };
                    analysis.edges.push(Edge { include, target });
                }
                SkillItem::ToolRef { name } => {
                    let id = analysis.intern_ref(name);
                    if analysis.ref_tools[id].is_none() {
                        analysis.ref_tools[id] = Some(self.tools.tool(name));
                    }
                    analysis.refs.push(id);
                }
                SkillItem::InlineTool(_) | SkillItem::McpSource(_) | SkillItem::AgentSource(_) => {
                    others = true;
                }
            }
        }
        let edges = edges_start..analysis.edges.len();
        let refs = refs_start..analysis.refs.len();
        let others_start = analysis.entries.len();
        let others = if others {
            other_entries(skill, self.tools, &mut analysis.warnings)
        } else {
            Vec::new()
        };
        for entry in others {
            let id = analysis.intern(Cow::Owned(entry.name));
            let tool = match entry.tool {
                None => EntryTool::Unknown,
                Some(Cow::Borrowed(spec)) => EntryTool::Found(spec),
                Some(Cow::Owned(spec)) => {
                    analysis.inline.push(spec);
                    EntryTool::Inline(analysis.inline.len() - 1)
                }
            };
            analysis.entries.push(Entry {
                name: id,
                kind: entry.kind,
                tool,
            });
        }
        let others = others_start..analysis.entries.len();
        let entered = &mut analysis.nodes[node];
        // u32 keeps a node at 80 bytes; no stack is 4 billion skills deep.
        entered.visit = Visit::Open(u32::try_from(stack.len()).unwrap_or(u32::MAX));
        entered.refs = refs;
        entered.others = others;
        entered.edges = edges.clone();
        let entered = &analysis.nodes[node];
        // Collected first: the entries are borrowed from `analysis`.
        let mut warnings = Vec::new();
        for entry in analysis.own(entered) {
            if !matches!(entry.tool, EntryTool::Unknown) {
                continue;
            }
            let name = analysis.name(entry.name);
            match entry.kind {
                ItemKind::ToolRef => warnings.push(ResolveWarning::UnknownTool {
                    skill: skill.name.clone(),
                    tool: name.to_owned(),
                }),
                ItemKind::AgentSource => {
                    let path = name.strip_prefix("agent_skill:").unwrap_or(name);
                    warnings.push(ResolveWarning::UnknownAgentSkill {
                        skill: skill.name.clone(),
                        path: path.to_owned(),
                    });
                }
                _ => {}
            }
        }
        for target in skill.overrides.keys() {
            if !analysis
                .own(entered)
                .any(|entry| analysis.name(entry.name) == target)
            {
                warnings.push(ResolveWarning::UnmatchedOverride {
                    skill: skill.name.clone(),
                    target: target.clone(),
                });
            }
        }
        analysis.warnings.append(&mut warnings);
        edges
    }

    /// The reverse walk (see the module documentation): each entry's winning
    /// occurrence, in first-occurrence order, with the name of each.
    fn collect_values(
        &self,
        root: &SkillName,
        analysis: &Analysis<'a>,
    ) -> (Vec<ResolvedToolEntry>, Vec<NameId>) {
        let mut winners: Vec<Option<ResolvedToolEntry>> = Vec::new();
        winners.resize_with(analysis.names.len(), || None);
        // A slot, once filled, is never replaced: when every name has its
        // winner, the rest of the walk cannot change anything.
        let mut open = analysis.names.len();
        let mut visited = vec![false; analysis.nodes.len()];
        // The root is node 0 whenever the forward walk found it.
        let mut stack: Vec<(NodeId, Via<'a>)> = Vec::new();
        if !analysis.nodes.is_empty() {
            stack.push((0, Via::Root));
        }
        while let Some((id, via)) = stack.pop() {
            if open == 0 {
                break;
            }
            if visited[id] {
                continue;
            }
            visited[id] = true;
            let node = &analysis.nodes[id];
            let skill = node.skill;
            let path = match via {
                Via::Root => IncludePath::root(root.clone()),
                Via::Include(parent, overrides) => parent.child(skill.name.clone(), overrides),
            };
            for entry in analysis.own(node).rev() {
                let slot = &mut winners[entry.name];
                if slot.is_some() {
                    continue;
                }
                open -= 1;
                let name = analysis.name(entry.name);
                *slot = Some(ResolvedToolEntry {
                    name: name.to_owned(),
                    source_skill: skill.name.clone(),
                    is_inline: entry.kind == ItemKind::InlineTool,
                    overrides: entry_overrides(skill, name, &path),
                    include_path: path.clone(),
                    kind: entry.kind,
                    tool: analysis.spec(entry.tool).cloned(),
                });
            }
            for edge in &analysis.edges[node.edges.clone()] {
                if let Some(child) = edge.target
                    && !visited[child]
                {
                    stack.push((child, Via::Include(path.clone(), &edge.include.overrides)));
                }
            }
        }
        let mut ids = Vec::with_capacity(analysis.order.len());
        let entries = analysis
            .order
            .iter()
            .filter_map(|&id| {
                let entry = winners[id].take()?;
                ids.push(id);
                Some(entry)
            })
            .collect();
        (entries, ids)
    }
}

/// An entry's overrides at one occurrence: the defining skill's own
/// `overrides:` for it, with the path's include overrides merged on top.
fn entry_overrides(skill: &Skill, name: &str, path: &IncludePath) -> ValueMap {
    let mut overrides = skill.overrides.get(name).cloned().unwrap_or_default();
    for (key, value) in path.0.overrides.iter() {
        overrides.insert(key.clone(), value.clone());
    }
    overrides
}

/// Warns once per extra entry that resolves to an Agent Skill already in the
/// tool set under another name.
fn duplicate_agent_skills(
    root: &SkillName,
    entries: &[ResolvedToolEntry],
    warnings: &mut Vec<ResolveWarning>,
) {
    let mut first: HashMap<&str, &str> = HashMap::new();
    for entry in entries {
        let Some(tool) = &entry.tool else { continue };
        if tool.source != ToolSource::AgentSkills {
            continue;
        }
        match first.get(tool.name.as_str()) {
            Some(earlier) => warnings.push(ResolveWarning::DuplicateAgentSkill {
                skill: root.clone(),
                first: (*earlier).to_owned(),
                second: entry.name.clone(),
                tool: tool.name.clone(),
            }),
            None => {
                first.insert(&tool.name, &entry.name);
            }
        }
    }
}

/// The overridable fields the registry reads, with the type each takes:
/// the capability flags and texts (`effective`), and the gateway's call
/// timeout.
const TYPED_FIELDS: [(&str, &str); 7] = [
    ("read_only", "`true` or `false`"),
    ("writes", "`true` or `false`"),
    ("checkpointable", "`true` or `false`"),
    ("side_effects", "`true` or `false`"),
    ("description", "a string"),
    ("title", "a string"),
    ("timeout_s", "a whole number of seconds from 1"),
];

/// Each field of `fields` the registry reads whose value it cannot use:
/// (field, the type given, what it takes).
fn mistyped_fields(fields: &ValueMap) -> Vec<(String, String, &'static str)> {
    if fields.is_empty() {
        return Vec::new();
    }
    TYPED_FIELDS
        .iter()
        .filter_map(|(field, expected)| {
            let value = fields.get(*field)?;
            let fits = match *field {
                "description" | "title" => value.is_string(),
                "timeout_s" => value.as_u64().is_some_and(|secs| secs > 0),
                _ => value.is_boolean(),
            };
            (!fits).then(|| {
                // A number of the wrong kind (`0`, `-1`, `2.5`) is shown:
                // "is a number" would not say what is wrong with it.
                let found = match value {
                    serde_json::Value::Number(number) if *field == "timeout_s" => {
                        format!("`{number}`")
                    }
                    other => crate::tool::json_kind(other).to_owned(),
                };
                ((*field).to_owned(), found, *expected)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn path(skills: &[&str]) -> IncludePath {
        let name = |s: &str| SkillName::new(s).unwrap();
        let mut path = IncludePath::root(name(skills[0]));
        for skill in &skills[1..] {
            path = path.child(name(skill), &ValueMap::new());
        }
        path
    }

    #[test]
    fn paths_built_apart_compare_by_their_skills() {
        let a = path(&["a/root", "a/x", "a/y", "a/z"]);
        assert_eq!(a, path(&["a/root", "a/x", "a/y", "a/z"]));
        assert_eq!(a, a.clone());
        assert_ne!(a, path(&["a/root", "a/y", "a/x", "a/z"]));
        assert_ne!(a, path(&["a/root", "a/x", "a/z"]));
        assert_ne!(a, path(&["b/root", "a/x", "a/y", "a/z"]));
        // A prefix compared first keeps its fingerprint for the longer path.
        let prefix = a.parent().unwrap().clone();
        assert_eq!(prefix, path(&["a/root", "a/x", "a/y"]));
        assert_eq!(a, path(&["a/root", "a/x", "a/y", "a/z"]));
    }

    #[test]
    fn explaining_a_deep_chain_walks_each_path_node_once_per_key() {
        // 2,000 skills in a chain, each with its own tool, `lvl` overridden
        // on every include: every entry's path is a prefix of the deepest,
        // so the layers cost one step per node, not one per node per entry.
        const DEPTH: usize = 2_000;
        let name = |i: usize| SkillName::new(&format!("c/s{i}")).unwrap();
        let mut skills = SkillMap::default();
        let mut tools = crate::ToolRegistry::new();
        for i in 0..DEPTH {
            let mut skill = Skill::new(name(i));
            let tool = format!("c/t{i}");
            tools
                .register(ToolSpec::new(&tool, "t", ToolSource::Custom), false)
                .unwrap();
            skill.items.push(SkillItem::ToolRef {
                name: tool.as_str().into(),
            });
            if i + 1 < DEPTH {
                let mut overrides = ValueMap::new();
                overrides.insert("lvl".into(), serde_json::json!(i));
                skill.items.push(SkillItem::Include(crate::Include {
                    skill: name(i + 1),
                    overrides: overrides.into(),
                }));
            }
            skills.insert(skill.name.clone(), skill);
        }
        let resolver = SkillResolver::new(&skills, &tools);
        let (resolution, explanations) = resolver.explain(&name(0)).unwrap();
        let last = format!("c/t{}", DEPTH - 1);
        let at = resolution
            .entries
            .iter()
            .position(|e| e.name == last)
            .unwrap();
        let deepest = &explanations[at].overrides[0];
        assert_eq!(deepest.winner.value, serde_json::json!(0));
        assert_eq!(deepest.more_replaced, DEPTH - 2 - MAX_REPLACED);
        let mut layers = PathLayers::default();
        for entry in &resolution.entries {
            resolver.override_origins(entry, &mut layers);
        }
        assert!(layers.steps <= DEPTH, "{} steps", layers.steps);
    }
}
