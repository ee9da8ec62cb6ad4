//! What stops a resolution (errors) and what does not (warnings), and
//! how they are worded.

#[allow(
    clippy::wildcard_imports,
    reason = "a part of `resolve`, which it names whole"
)]
use super::*;

/// A name from someone's rows as a warning shows it: control characters
/// escaped (a line break in an `agent_sources` path or an override key
/// would print a line of its own) and at most 512 bytes, both ends kept.
pub(super) fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    crate::text::shorten_middle(text, 512)
}

/// Where a mistyped override is, as its warning says it.
pub(super) fn override_place(site: &Site) -> String {
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
        crate::Hint::refresh(.server)
    )]
    McpNotCached {
        /// The skill holding the source.
        skill: SkillName,
        /// The server.
        server: String,
    },
    /// An `agent_sources` path that matches no discovered or readable folder.
    #[error(
        "Skill '{skill}': agent source '{}' matches no Agent Skill folder (run `{}` or check the path)",
        shown(.path),
        crate::Hint::Discover
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
pub(super) const CYCLE_KEPT: usize = PATH_HEAD + PATH_TAIL;

/// A cycle as written, or for a long one its first and last skills around
/// its length, so the message stays short.
pub(super) fn join_cycle(kept: &[SkillName], len: usize) -> String {
    let kept: Vec<&str> = kept.iter().map(SkillName::as_str).collect();
    join_kept(len, &kept)
}

/// A chain of `len` skills as errors show one (see
/// [`crate::text::head_tail_by`]), from the skills `kept` of it: all of
/// them, or for a long one only the first [`PATH_HEAD`] and last
/// [`PATH_TAIL`], which are all that is shown.
pub(super) fn join_kept(len: usize, kept: &[&str]) -> String {
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

pub(super) fn quote_list(fields: &[String]) -> String {
    fields
        .iter()
        .map(|f| format!("'{f}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Forward walks from one root after another over one shared numbering
/// ([`SkillResolver::diagnosis`]): a skill an earlier root reached is not
/// walked again, so diagnosing many roots costs their combined closure once.
pub struct Diagnosis<'r, 'a> {
    pub(super) resolver: &'r SkillResolver<'a>,
    pub(super) analysis: Analysis<'a>,
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

/// Warns once per extra entry that resolves to an Agent Skill already in the
/// tool set under another name.
pub(super) fn duplicate_agent_skills(
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
pub(super) const TYPED_FIELDS: [(&str, &str); 7] = [
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
pub(super) fn mistyped_fields(fields: &ValueMap) -> Vec<(String, String, &'static str)> {
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
