//! Where in a skill's definition a problem is written: the part a problem
//! is about ([`Site`]) and, from the skill, the field path of that part as
//! a definition file spells it ([`FieldPath`]: `tools[2]`,
//! `includes[0].skill`, `overrides.TOOL`), the same names validation gives
//! its fields.
//!
//! Nothing here knows a file or a line: the definition crate turns a field
//! path into a position in the text it was parsed from, and the CLI joins
//! the two for the problems it shows.

use std::fmt;

use crate::name::SkillName;
use crate::skill::{Skill, SkillItem};

/// One step of a [`FieldPath`]: a map key or a list index.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FieldStep {
    /// A key of a map (one step whatever it holds: tool names hold dots).
    Key(String),
    /// An index into a list, from 0.
    Index(usize),
}

/// A field of a skill's definition, as its document writes it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldPath {
    /// From the document's top.
    pub steps: Vec<FieldStep>,
    /// Whether the problem is the last key itself (an override's target),
    /// not the value written under it.
    pub at_key: bool,
}

impl FieldPath {
    fn new(steps: Vec<FieldStep>) -> Self {
        Self {
            steps,
            at_key: false,
        }
    }

    fn key_of(steps: Vec<FieldStep>) -> Self {
        Self {
            steps,
            at_key: true,
        }
    }
}

impl fmt::Display for FieldPath {
    /// As validation names fields: `tools[2]`, `overrides.TOOL`, each key
    /// shortened to [`crate::text::MAX_ECHO_BYTES`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (at, step) in self.steps.iter().enumerate() {
            match step {
                FieldStep::Key(key) => {
                    if at > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(&crate::text::shorten(key, crate::text::MAX_ECHO_BYTES))?;
                }
                FieldStep::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// The part of one skill's definition a problem is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Site {
    /// A tool ref (its first occurrence in `tools`).
    ToolRef(String),
    /// The include of a skill (its first in `includes`).
    Include(SkillName),
    /// A skill-level override's key.
    Override(String),
    /// One field of a skill-level override (`overrides.TOOL.FIELD`).
    OverrideField {
        /// The override's key.
        target: String,
        /// The field.
        field: String,
    },
    /// One field of the overrides on the include of a skill.
    IncludeOverrideField {
        /// The included skill.
        include: SkillName,
        /// The field.
        field: String,
    },
    /// An `agent_sources` entry, by its path as written.
    AgentSource(String),
    /// An `mcp_sources` entry, by its server.
    McpSource(String),
    /// A field of an `mcp_sources` entry, as
    /// [`crate::redact::literal_secret_fields`] names it (`env.NAME`,
    /// `headers.NAME`, `args[N]`, `url`).
    McpSourceField {
        /// The entry's server.
        server: String,
        /// The field.
        field: String,
    },
}

impl Site {
    /// Where this is written in `skill`, as a field path; `None` when
    /// `skill` holds no such part. Linear in the skill's items: asked only
    /// of the problems that are shown.
    pub fn field_in(&self, skill: &Skill) -> Option<FieldPath> {
        use FieldStep::{Index, Key};
        let key = |text: &str| Key(text.to_owned());
        match self {
            Self::ToolRef(tool) => {
                let at = nth_of(
                    skill,
                    |item| matches!(item, SkillItem::ToolRef { name } if name.as_str() == tool),
                    |item| matches!(item, SkillItem::ToolRef { .. }),
                )?;
                Some(FieldPath::new(vec![key("tools"), Index(at)]))
            }
            Self::Include(included) => {
                let at = include_index(skill, included)?;
                Some(FieldPath::new(vec![
                    key("includes"),
                    Index(at),
                    key("skill"),
                ]))
            }
            Self::Override(target) => skill
                .overrides
                .contains_key(target)
                .then(|| FieldPath::key_of(vec![key("overrides"), key(target)])),
            Self::OverrideField { target, field } => skill
                .overrides
                .get(target)?
                .contains_key(field)
                .then(|| FieldPath::key_of(vec![key("overrides"), key(target), key(field)])),
            Self::IncludeOverrideField { include, field } => {
                let at = include_index(skill, include)?;
                Some(FieldPath::key_of(vec![
                    key("includes"),
                    Index(at),
                    key("overrides"),
                    key(field),
                ]))
            }
            Self::AgentSource(path) => {
                let at = nth_of(
                    skill,
                    |item| matches!(item, SkillItem::AgentSource(source) if source.path == *path),
                    |item| matches!(item, SkillItem::AgentSource(_)),
                )?;
                Some(FieldPath::new(vec![
                    key("agent_sources"),
                    Index(at),
                    key("path"),
                ]))
            }
            Self::McpSource(server) => {
                let at = mcp_index(skill, server)?;
                Some(FieldPath::new(vec![
                    key("mcp_sources"),
                    Index(at),
                    key("server"),
                ]))
            }
            Self::McpSourceField { server, field } => {
                let at = mcp_index(skill, server)?;
                let mut steps = vec![key("mcp_sources"), Index(at)];
                let at_key = if let Some((map, name)) = field
                    .split_once('.')
                    .filter(|(map, _)| matches!(*map, "env" | "headers"))
                {
                    steps.extend([key(map), key(name)]);
                    true
                } else if let Some(index) = field
                    .strip_prefix("args[")
                    .and_then(|rest| rest.strip_suffix(']'))
                    .and_then(|index| index.parse().ok())
                {
                    steps.extend([key("args"), Index(index)]);
                    false
                } else {
                    steps.push(key(field));
                    false
                };
                Some(FieldPath { steps, at_key })
            }
        }
    }
}

/// The index, among the items `kind` picks (one list of the document), of
/// the first item `wanted` picks.
fn nth_of(
    skill: &Skill,
    wanted: impl Fn(&SkillItem) -> bool,
    kind: impl Fn(&SkillItem) -> bool,
) -> Option<usize> {
    skill
        .items
        .iter()
        .filter(|item| kind(item))
        .position(wanted)
}

fn include_index(skill: &Skill, included: &SkillName) -> Option<usize> {
    nth_of(
        skill,
        |item| matches!(item, SkillItem::Include(include) if include.skill == *included),
        |item| matches!(item, SkillItem::Include(_)),
    )
}

fn mcp_index(skill: &Skill, server: &str) -> Option<usize> {
    nth_of(
        skill,
        |item| matches!(item, SkillItem::McpSource(source) if source.server == server),
        |item| matches!(item, SkillItem::McpSource(_)),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::skill::{AgentSource, Include, McpSource};

    fn name(text: &str) -> SkillName {
        SkillName::new(text).unwrap()
    }

    #[test]
    fn each_part_is_named_by_its_list_and_index_there() {
        let mut skill = Skill::new(name("a/b"));
        skill.items = vec![
            SkillItem::ToolRef {
                name: "t/one".into(),
            },
            SkillItem::Include(Include {
                skill: name("a/x"),
                overrides: Default::default(),
            }),
            SkillItem::ToolRef {
                name: "t/two".into(),
            },
            SkillItem::AgentSource(AgentSource { path: "p".into() }),
            SkillItem::McpSource(Box::new(McpSource {
                server: "s".into(),
                ..McpSource::default()
            })),
        ];
        skill.overrides.insert("t.one".into(), Default::default());
        let field = |site: Site| site.field_in(&skill).map(|path| path.to_string());
        assert_eq!(field(Site::ToolRef("t/two".into())).unwrap(), "tools[1]");
        assert_eq!(
            field(Site::Include(name("a/x"))).unwrap(),
            "includes[0].skill"
        );
        assert_eq!(
            field(Site::AgentSource("p".into())).unwrap(),
            "agent_sources[0].path"
        );
        assert_eq!(
            field(Site::McpSource("s".into())).unwrap(),
            "mcp_sources[0].server"
        );
        let secret = Site::McpSourceField {
            server: "s".into(),
            field: "headers.X.Y".into(),
        }
        .field_in(&skill)
        .unwrap();
        assert!(secret.at_key);
        assert_eq!(secret.steps.last(), Some(&FieldStep::Key("X.Y".into())));
        let key = Site::Override("t.one".into()).field_in(&skill).unwrap();
        assert!(key.at_key);
        assert_eq!(key.steps.len(), 2);
        assert_eq!(field(Site::ToolRef("t/three".into())), None);
        assert_eq!(field(Site::Override("nothing".into())), None);
    }
}
