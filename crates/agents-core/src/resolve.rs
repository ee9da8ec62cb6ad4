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

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use indexmap::IndexMap;
use serde::ser::SerializeSeq;
use serde::{Serialize, Serializer};

use crate::name::SkillName;
use crate::skill::{ItemKind, Skill, SkillItem, ValueMap};
use crate::tool::{ToolSource, ToolSpec};

/// Fields of a [`ResolvedToolEntry`] that no override may touch.
pub const NON_OVERRIDABLE_FIELDS: [&str; 3] = ["name", "source_skill", "is_inline"];

/// Where the resolver finds skill definitions (usually the include closure
/// loaded from a store).
pub trait SkillSource {
    /// The skill called `name`, if known.
    fn skill(&self, name: &SkillName) -> Option<&Skill>;
}

impl SkillSource for HashMap<SkillName, Skill> {
    fn skill(&self, name: &SkillName) -> Option<&Skill> {
        self.get(name)
    }
}

impl SkillSource for IndexMap<SkillName, Skill> {
    fn skill(&self, name: &SkillName) -> Option<&Skill> {
        self.get(name)
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
            .filter(|spec| {
                spec.source_metadata.get("server").and_then(|s| s.as_str()) == Some(server)
            })
            .collect();
        (!tools.is_empty()).then_some(tools)
    }

    fn agent_skill(&self, path: &str) -> Option<&ToolSpec> {
        self.list(Some(ToolSource::AgentSkills))
            .find(|spec| spec.source_metadata.get("path").and_then(|p| p.as_str()) == Some(path))
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
    /// Include overrides accumulated along the path, outer ones winning.
    overrides: Arc<ValueMap>,
    /// The overrides written on the include edge from the parent to this
    /// skill (`None` when there were none), kept for `--explain`.
    edge: Option<Arc<ValueMap>>,
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
            overrides: Arc::new(ValueMap::new()),
            edge: None,
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
        Self(Arc::new(PathNode {
            skill,
            parent: Some(self.clone()),
            len: self.0.len + 1,
            overrides,
            edge,
        }))
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
}

impl fmt::Display for IncludePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, skill) in self.skills().into_iter().enumerate() {
            if i > 0 {
                f.write_str(" -> ")?;
            }
            write!(f, "{skill}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for IncludePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.skills()).finish()
    }
}

impl PartialEq for IncludePath {
    fn eq(&self, other: &Self) -> bool {
        self.skills() == other.skills()
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
    /// position, the one with `won` its metadata.
    pub occurrences: Vec<Occurrence>,
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
    /// Weaker values for the same key it replaced, weakest first.
    pub replaced: Vec<OverrideLayer>,
}

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

/// A problem that does not stop resolution.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveWarning {
    /// A tool ref the tool registry does not know.
    #[error("Skill '{skill}': Tool '{tool}' is not registered")]
    UnknownTool {
        /// The skill holding the ref.
        skill: SkillName,
        /// The unknown tool.
        tool: String,
    },
    /// A skill-level override whose key matches none of the skill's entries.
    #[error("Skill '{skill}': override for '{target}' matches no tool of the skill")]
    UnmatchedOverride {
        /// The skill declaring the override.
        skill: SkillName,
        /// The key that matched nothing.
        target: String,
    },
    /// An MCP server whose tools were never fetched.
    #[error(
        "Skill '{skill}': MCP server '{server}' has no cached tool list (run `agents mcp refresh {server}` or use `--refresh`)"
    )]
    McpNotCached {
        /// The skill holding the source.
        skill: SkillName,
        /// The server.
        server: String,
    },
    /// An `agent_sources` path that matches no discovered or readable folder.
    #[error(
        "Skill '{skill}': agent source '{path}' matches no Agent Skill folder (run `agents skill discover` or check the path)"
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
        "Skill '{skill}': entries '{first}' and '{second}' are the same Agent Skill '{tool}'; the agent gets it twice"
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
    /// An allow-listed tool the MCP server does not offer.
    #[error("Skill '{skill}': MCP server '{server}' has no tool '{tool}'")]
    McpToolMissing {
        /// The skill holding the source.
        skill: SkillName,
        /// The server.
        server: String,
        /// The allow-listed tool.
        tool: String,
    },
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
    #[error("Cycle detected in skill includes: {}", join(cycle))]
    Cycle {
        /// The cycle, starting and ending with the same skill.
        cycle: Vec<SkillName>,
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

/// A cycle as written, or for a long one its first and last skills around
/// its length, so the message stays short.
fn join(names: &[SkillName]) -> String {
    crate::text::head_tail(names, 5, 5, " -> ")
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
    own_entries(skill, tools, &mut Vec::new())
        .into_iter()
        .map(|e| e.name)
        .collect()
}

/// One of a skill's own entries. The spec is borrowed from the lookup (or
/// owned, for inline tools): a closure visits each skill once but a tool is
/// named by many skills, and only the winning occurrence needs its own copy.
struct OwnEntry<'t> {
    name: String,
    kind: ItemKind,
    tool: Option<Cow<'t, ToolSpec>>,
}

fn own_entries<'t>(
    skill: &Skill,
    tools: &'t dyn ToolLookup,
    warnings: &mut Vec<ResolveWarning>,
) -> Vec<OwnEntry<'t>> {
    let mut out = Vec::new();
    for item in &skill.items {
        if let SkillItem::ToolRef { name } = item {
            out.push(OwnEntry {
                name: name.clone(),
                kind: ItemKind::ToolRef,
                tool: tools.tool(name).map(Cow::Borrowed),
            });
        }
    }
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
                                None => warnings.push(ResolveWarning::McpToolMissing {
                                    skill: skill.name.clone(),
                                    server: source.server.clone(),
                                    tool: wanted.clone(),
                                }),
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

struct Analysis<'a> {
    errors: Vec<ResolveError>,
    warnings: Vec<ResolveWarning>,
    order: Vec<String>,
    own: HashMap<&'a SkillName, Vec<OwnEntry<'a>>>,
    /// The path by which the forward walk first reached each skill.
    first_path: HashMap<&'a SkillName, IncludePath>,
    /// Skills in the order the forward walk finished them (post-order).
    finished: Vec<&'a SkillName>,
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
        let entries = self.collect_values(root, &mut analysis);
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
        let entries = self.collect_values(root, &mut analysis);
        duplicate_agent_skills(root, &entries, &mut analysis.warnings);
        let explanations = self.explanations(&analysis, &entries);
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
    ) -> Vec<Explanation> {
        let mut seen: HashMap<&str, Vec<Occurrence>> = HashMap::with_capacity(entries.len());
        for name in &analysis.finished {
            let (Some(skill), Some(path), Some(own)) = (
                self.skills.skill(name),
                analysis.first_path.get(name),
                analysis.own.get(name),
            ) else {
                continue;
            };
            for entry in own {
                seen.entry(entry.name.as_str())
                    .or_default()
                    .push(Occurrence {
                        include_path: path.clone(),
                        overrides: entry_overrides(skill, &entry.name, path),
                        won: false,
                    });
            }
        }
        entries
            .iter()
            .map(|entry| {
                let mut occurrences = seen.remove(entry.name.as_str()).unwrap_or_default();
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
                let overrides = self.override_origins(entry);
                Explanation {
                    occurrences,
                    overrides,
                }
            })
            .collect()
    }

    /// Where each of `entry`'s final overrides came from, walking the layers
    /// from the weakest (the defining skill's own `overrides:`) to the
    /// strongest (the root's include edge).
    fn override_origins(&self, entry: &ResolvedToolEntry) -> Vec<OverrideOrigin> {
        let mut layers: Vec<(&ValueMap, &SkillName, &IncludePath)> = Vec::new();
        if let Some(own) = self
            .skills
            .skill(&entry.source_skill)
            .and_then(|skill| skill.overrides.get(&entry.name))
        {
            layers.push((own, &entry.source_skill, &entry.include_path));
        }
        let mut node = &entry.include_path;
        while let Some(parent) = node.parent() {
            if let Some(edge) = &node.0.edge {
                layers.push((edge, parent.last(), parent));
            }
            node = parent;
        }
        entry
            .overrides
            .iter()
            .filter_map(|(key, _)| {
                let mut found: Vec<OverrideLayer> = layers
                    .iter()
                    .filter_map(|(fields, from, path)| {
                        fields.get(key).map(|value| OverrideLayer {
                            value: value.clone(),
                            from: (*from).clone(),
                            include_path: (*path).clone(),
                        })
                    })
                    .collect();
                let winner = found.pop()?;
                Some(OverrideOrigin {
                    key: key.clone(),
                    winner,
                    replaced: found,
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

    fn analyze(&self, root: &SkillName) -> Result<Analysis<'a>, ResolveError> {
        let root_skill = self
            .skills
            .skill(root)
            .ok_or_else(|| ResolveError::SkillNotFound { name: root.clone() })?;
        let mut analysis = Analysis {
            errors: Vec::new(),
            warnings: Vec::new(),
            order: Vec::new(),
            own: HashMap::new(),
            first_path: HashMap::new(),
            finished: Vec::new(),
        };
        let mut seen_names: HashSet<String> = HashSet::new();
        // `true` while on the stack, `false` once finished.
        let mut state: HashMap<&SkillName, bool> = HashMap::new();
        struct Frame<'s> {
            skill: &'s Skill,
            path: IncludePath,
            includes: Vec<&'s crate::skill::Include>,
            next: usize,
        }
        let mut stack: Vec<Frame<'a>> = Vec::new();
        let root_path = IncludePath::root(root.clone());
        self.enter(root_skill, root_path.clone(), &mut analysis);
        state.insert(&root_skill.name, true);
        stack.push(Frame {
            skill: root_skill,
            path: root_path,
            includes: root_skill.includes().collect(),
            next: 0,
        });
        while let Some(frame) = stack.last_mut() {
            let skill = frame.skill;
            let include = frame.includes.get(frame.next).copied();
            frame.next += 1;
            let Some(include) = include else {
                state.insert(&skill.name, false);
                analysis.finished.push(&skill.name);
                if let Some(own) = analysis.own.get(&skill.name) {
                    for entry in own {
                        if seen_names.insert(entry.name.clone()) {
                            analysis.order.push(entry.name.clone());
                        }
                    }
                }
                stack.pop();
                continue;
            };
            let path = frame.path.clone();
            let blocked = blocked_fields(&include.overrides);
            if !blocked.is_empty() {
                analysis.errors.push(ResolveError::NonOverridable {
                    fields: blocked,
                    skill: skill.name.clone(),
                    path: format!("{path} -> {}", include.skill),
                });
            }
            match state.get(&include.skill) {
                Some(false) => continue,
                Some(true) => {
                    let start = stack
                        .iter()
                        .position(|f| f.skill.name == include.skill)
                        .unwrap_or(0);
                    let mut cycle: Vec<SkillName> = stack[start..]
                        .iter()
                        .map(|f| f.skill.name.clone())
                        .collect();
                    cycle.push(include.skill.clone());
                    analysis.errors.push(ResolveError::Cycle { cycle });
                    continue;
                }
                None => {}
            }
            let Some(child) = self.skills.skill(&include.skill) else {
                analysis.errors.push(ResolveError::MissingInclude {
                    skill: skill.name.clone(),
                    include: include.skill.clone(),
                    path: path.to_string(),
                });
                // Report each missing skill once per declaring skill.
                continue;
            };
            let child_path = path.child(child.name.clone(), &include.overrides);
            self.enter(child, child_path.clone(), &mut analysis);
            state.insert(&child.name, true);
            stack.push(Frame {
                skill: child,
                path: child_path,
                includes: child.includes().collect(),
                next: 0,
            });
        }
        Ok(analysis)
    }

    /// First visit of a skill in the forward walk: check its own overrides and
    /// compute its own entries.
    fn enter(&self, skill: &'a Skill, path: IncludePath, analysis: &mut Analysis<'a>) {
        let mut blocked: Vec<String> = Vec::new();
        for fields in skill.overrides.values() {
            for field in blocked_fields(fields) {
                if !blocked.contains(&field) {
                    blocked.push(field);
                }
            }
        }
        if !blocked.is_empty() {
            analysis.errors.push(ResolveError::NonOverridable {
                fields: blocked,
                skill: skill.name.clone(),
                path: path.to_string(),
            });
        }
        analysis.first_path.insert(&skill.name, path);
        let own = own_entries(skill, self.tools, &mut analysis.warnings);
        for entry in &own {
            if entry.tool.is_some() {
                continue;
            }
            match entry.kind {
                ItemKind::ToolRef => analysis.warnings.push(ResolveWarning::UnknownTool {
                    skill: skill.name.clone(),
                    tool: entry.name.clone(),
                }),
                ItemKind::AgentSource => {
                    let path = entry
                        .name
                        .strip_prefix("agent_skill:")
                        .unwrap_or(&entry.name);
                    analysis.warnings.push(ResolveWarning::UnknownAgentSkill {
                        skill: skill.name.clone(),
                        path: path.to_owned(),
                    });
                }
                _ => {}
            }
        }
        for target in skill.overrides.keys() {
            if !own.iter().any(|entry| &entry.name == target) {
                analysis.warnings.push(ResolveWarning::UnmatchedOverride {
                    skill: skill.name.clone(),
                    target: target.clone(),
                });
            }
        }
        analysis.own.insert(&skill.name, own);
    }

    fn collect_values(
        &self,
        root: &SkillName,
        analysis: &mut Analysis<'a>,
    ) -> Vec<ResolvedToolEntry> {
        let mut winners: HashMap<String, ResolvedToolEntry> =
            HashMap::with_capacity(analysis.order.len());
        let mut visited: HashSet<&SkillName> = HashSet::new();
        let mut stack: Vec<(&'a Skill, IncludePath)> = Vec::new();
        if let Some(skill) = self.skills.skill(root) {
            stack.push((skill, IncludePath::root(root.clone())));
        }
        while let Some((skill, path)) = stack.pop() {
            if !visited.insert(&skill.name) {
                continue;
            }
            if let Some(own) = analysis.own.get(&skill.name) {
                for entry in own.iter().rev() {
                    if winners.contains_key(&entry.name) {
                        continue;
                    }
                    let overrides = entry_overrides(skill, &entry.name, &path);
                    winners.insert(
                        entry.name.clone(),
                        ResolvedToolEntry {
                            name: entry.name.clone(),
                            source_skill: skill.name.clone(),
                            is_inline: entry.kind == ItemKind::InlineTool,
                            overrides,
                            include_path: path.clone(),
                            kind: entry.kind,
                            tool: entry.tool.as_deref().cloned(),
                        },
                    );
                }
            }
            for include in skill.includes() {
                if let Some(child) = self.skills.skill(&include.skill)
                    && !visited.contains(&child.name)
                {
                    stack.push((child, path.child(child.name.clone(), &include.overrides)));
                }
            }
        }
        analysis
            .order
            .iter()
            .filter_map(|name| winners.remove(name))
            .collect()
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

fn blocked_fields(fields: &ValueMap) -> Vec<String> {
    NON_OVERRIDABLE_FIELDS
        .iter()
        .filter(|field| fields.contains_key(**field))
        .map(|field| (*field).to_owned())
        .collect()
}
