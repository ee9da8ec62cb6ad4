use std::fmt;

use agents_core::{
    AgentSource, Include, InlineTool, McpSource, Overrides, Skill, SkillItem, SkillName, ValueMap,
};
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::{DefinitionError, Limits, documents};

/// One skill document, exactly the keys users may write.
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[schemars(title = "CleverAgents skill definition")]
#[serde(deny_unknown_fields)]
pub(crate) struct SkillDocument {
    /// `namespace/short_name`
    name: SkillName,
    /// What the skill is for
    #[serde(default, skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    /// Free-form version label
    #[serde(default, skip_serializing_if = "Option::is_none")]
    version: Option<String>,
    /// Free-form key/values
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    metadata: ValueMap,
    /// Per-entry overrides: entry name → fields merged onto that entry
    #[serde(default, skip_serializing_if = "Overrides::is_empty")]
    overrides: Overrides,
    /// Tool references: `builtin/...`, custom tools, `agent_skills/...`, `mcp:server/tool`
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "capped"
    )]
    #[schemars(with = "Vec<String>")]
    tools: Vec<agents_core::ToolName>,
    /// Skills whose tools this one includes, depth-first
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "capped"
    )]
    includes: Vec<IncludeDocument>,
    /// Anonymous tools defined here
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "capped"
    )]
    inline_tools: Vec<InlineTool>,
    /// MCP servers whose tools this skill offers
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "capped"
    )]
    mcp_sources: Vec<McpSource>,
    /// Agent Skills folders (each holding a `SKILL.md`)
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "capped"
    )]
    agent_sources: Vec<AgentSource>,
}

/// The most entries one list of a skill (`tools`, `includes`,
/// `inline_tools`, `mcp_sources`, `agent_sources`) may hold. Far past any
/// real skill, it keeps what a file costs near its size: an inline tool
/// written `{}` is three bytes of YAML and over a kilobyte parsed.
pub const MAX_ITEMS: usize = 10_000;

/// A list of at most [`MAX_ITEMS`] entries, refused at the first one past.
fn capped<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct Capped<T>(std::marker::PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for Capped<T> {
        type Value = Vec<T>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a sequence")
        }
        fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let mut items = Vec::new();
            while let Some(item) = seq.next_element()? {
                if items.len() == MAX_ITEMS {
                    return Err(de::Error::custom(format_args!(
                        "more than {MAX_ITEMS} entries, the most one list of a skill may hold"
                    )));
                }
                items.push(item);
            }
            Ok(items)
        }
    }
    deserializer.deserialize_seq(Capped(std::marker::PhantomData))
}

/// `- local/base` (short form) or `- skill: local/base` with `overrides`.
#[derive(Debug)]
struct IncludeDocument(Include);

/// The short form (a skill name) or the long form (`skill` + `overrides`).
impl schemars::JsonSchema for IncludeDocument {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "IncludeDocument".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let short = generator.subschema_for::<SkillName>();
        let long = generator.subschema_for::<Include>();
        schemars::json_schema!({ "anyOf": [short, long] })
    }
}

/// The JSON Schema of a skill definition document (what `skill add` reads),
/// generated from the types that parse it.
pub fn skill_schema() -> Value {
    schemars::schema_for!(SkillDocument).to_value()
}

impl Serialize for IncludeDocument {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.0.overrides.is_empty() {
            self.0.skill.serialize(serializer)
        } else {
            self.0.serialize(serializer)
        }
    }
}

impl<'de> Deserialize<'de> for IncludeDocument {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IncludeVisitor;
        impl<'de> Visitor<'de> for IncludeVisitor {
            type Value = IncludeDocument;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a skill name or a map with `skill` and optional `overrides`")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                let skill = SkillName::new(v).map_err(E::custom)?;
                Ok(IncludeDocument(Include {
                    skill,
                    overrides: Default::default(),
                }))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut skill: Option<SkillName> = None;
                let mut overrides: Option<ValueMap> = None;
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "skill" if skill.is_none() => skill = Some(map.next_value()?),
                        "overrides" if overrides.is_none() => overrides = Some(map.next_value()?),
                        "skill" | "overrides" => {
                            return Err(de::Error::custom(format!("duplicate field `{key}`")));
                        }
                        other => {
                            return Err(de::Error::unknown_field(other, &["skill", "overrides"]));
                        }
                    }
                }
                let skill = skill.ok_or_else(|| de::Error::missing_field("skill"))?;
                Ok(IncludeDocument(Include {
                    skill,
                    overrides: overrides.unwrap_or_default().into(),
                }))
            }
        }
        deserializer.deserialize_any(IncludeVisitor)
    }
}

impl SkillDocument {
    pub(crate) fn into_skill(self) -> Skill {
        let mut skill = Skill::new(self.name);
        skill.description = self.description;
        skill.version = self.version;
        skill.metadata = self.metadata;
        skill.overrides = self.overrides;
        let items = &mut skill.items;
        items.extend(
            self.tools
                .into_iter()
                .map(|name| SkillItem::ToolRef { name }),
        );
        items.extend(self.includes.into_iter().map(|i| SkillItem::Include(i.0)));
        items.extend(
            self.inline_tools
                .into_iter()
                .map(|tool| SkillItem::InlineTool(Box::new(tool))),
        );
        items.extend(
            self.mcp_sources
                .into_iter()
                .map(|source| SkillItem::McpSource(Box::new(source))),
        );
        items.extend(self.agent_sources.into_iter().map(SkillItem::AgentSource));
        skill
    }

    pub(crate) fn from_skill(skill: &Skill) -> Self {
        let mut document = Self {
            name: skill.name.clone(),
            description: skill.description.clone(),
            version: skill.version.clone(),
            metadata: skill.metadata.clone(),
            overrides: skill.overrides.clone(),
            tools: Vec::new(),
            includes: Vec::new(),
            inline_tools: Vec::new(),
            mcp_sources: Vec::new(),
            agent_sources: Vec::new(),
        };
        for item in &skill.items {
            match item {
                SkillItem::ToolRef { name } => document.tools.push(name.clone()),
                SkillItem::Include(include) => {
                    document.includes.push(IncludeDocument(include.clone()));
                }
                SkillItem::InlineTool(tool) => document.inline_tools.push((**tool).clone()),
                SkillItem::McpSource(source) => document.mcp_sources.push((**source).clone()),
                SkillItem::AgentSource(source) => document.agent_sources.push(source.clone()),
            }
        }
        document
    }
}

/// Parses every skill in `text` (one document, or a `---` stream), labelled
/// `file` in errors, within [`Limits::SKILLS`]. Rejects unknown keys, invalid
/// names, invalid schemas and a name defined twice in the same stream.
///
/// Items are ordered by kind (tools, includes, inline tools, MCP sources,
/// agent sources), each kind in the order written.
pub fn parse_skills(text: &str, file: &str) -> Result<Vec<Skill>, DefinitionError> {
    parse_skills_with(text, file, &Limits::SKILLS)
}

/// [`parse_skills`] with explicit limits.
pub fn parse_skills_with(
    text: &str,
    file: &str,
    limits: &Limits,
) -> Result<Vec<Skill>, DefinitionError> {
    parse_skill_documents_with(text, file, limits).map(|(skills, _)| skills)
}

/// [`parse_skills_with`], with the 1-based number of the document each
/// skill is in (empty documents are skipped, so it is not always its
/// index plus one): what [`crate::locate_fields`] takes to find where a
/// later check's problem with one of them is written.
pub fn parse_skill_documents_with(
    text: &str,
    file: &str,
    limits: &Limits,
) -> Result<(Vec<Skill>, Vec<usize>), DefinitionError> {
    let mut numbers: Vec<usize> = Vec::new();
    let mut skills: Vec<Skill> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    documents(text, file, limits, |number, document: SkillDocument| {
        let skill = document.into_skill();
        if let Err(problems) = skill.validate() {
            // The caret under the first problem's field.
            let field = problems
                .first()
                .map_or("", |problem| problem.field.as_str());
            return Err(DefinitionError::at_field(
                file,
                text,
                number,
                skill.name.as_str(),
                describe_problems(&problems),
                field,
            ));
        }
        if !seen.insert(skill.name.clone()) {
            return Err(DefinitionError::at_field(
                file,
                text,
                number,
                skill.name.as_str(),
                "skill is defined more than once in this file",
                "name",
            ));
        }
        skills.push(skill);
        numbers.push(number);
        Ok(())
    })?;
    Ok((skills, numbers))
}

/// All of a skill's validation problems on one line, field first.
pub(crate) fn describe_problems(problems: &[agents_core::InvalidSkill]) -> String {
    problems
        .iter()
        .map(|p| format!("{}: {}", p.field, p.message))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Prints skills as a YAML stream that [`parse_skills`] reads back identically.
pub fn skills_to_yaml(skills: &[Skill]) -> Result<String, DefinitionError> {
    let mut out = String::new();
    for (index, skill) in skills.iter().enumerate() {
        if index > 0 {
            out.push_str("---\n");
        }
        let text = crate::yaml_text(&SkillDocument::from_skill(skill)).map_err(|err| {
            DefinitionError::at_document(
                "<output>",
                index + 1,
                skill.name.as_str(),
                err.to_string(),
            )
        })?;
        out.push_str(&text);
    }
    Ok(out)
}

/// The definition keys plus `namespace`, `short_name`, `created_at` and
/// `updated_at`, for `--format json`.
pub fn skill_to_json(skill: &Skill) -> Value {
    let mut object = ValueMap::new();
    object.insert("name".into(), Value::String(skill.name.to_string()));
    object.insert("namespace".into(), Value::String(skill.namespace().into()));
    object.insert(
        "short_name".into(),
        Value::String(skill.short_name().into()),
    );
    let document = SkillDocument::from_skill(skill);
    let full = serde_json::to_value(&document).unwrap_or(Value::Null);
    if let Value::Object(fields) = full {
        for (key, value) in fields {
            if key != "name" {
                object.insert(key, value);
            }
        }
    }
    for key in ["description", "version"] {
        object.entry(key).or_insert(Value::Null);
    }
    for key in ["metadata", "overrides"] {
        object
            .entry(key)
            .or_insert_with(|| Value::Object(ValueMap::new()));
    }
    for key in [
        "tools",
        "includes",
        "inline_tools",
        "mcp_sources",
        "agent_sources",
    ] {
        object
            .entry(key)
            .or_insert_with(|| Value::Array(Vec::new()));
    }
    let stamp = |s: &Option<String>| s.clone().map_or(Value::Null, Value::String);
    object.insert("created_at".into(), stamp(&skill.created_at));
    object.insert("updated_at".into(), stamp(&skill.updated_at));
    Value::Object(object)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FULL: &str = r#"
name: local/code-tools            # required
description: Read and edit code
version: "1.2.0"
metadata: {owner: platform-team}
overrides:
  builtin/read_file: {timeout_s: 10}
tools: [builtin/read_file, builtin/grep]
includes:
  - local/base-tools
  - skill: local/git-tools
    overrides: {approval: required}
inline_tools:
  - description: Run the formatter
    read_only: false
    writes: true
    checkpointable: true
    side_effects: true
    input_schema: {type: object, properties: {path: {type: string}}}
    output_schema: {type: object}
mcp_sources:
  - server: github
    command: npx
    args: ["-y", "@modelcontextprotocol/server-github"]
    env: {GITHUB_TOKEN: "${GITHUB_TOKEN}"}
    tools: [create_issue, list_issues]
agent_sources:
  - path: ~/.cleveragents/agent_skills/pdf-processing
"#;

    fn error(text: &str) -> DefinitionError {
        parse_skills(text, "s.yaml").unwrap_err()
    }

    #[test]
    fn parses_the_full_example_in_kind_order() {
        let skills = parse_skills(FULL, "s.yaml").unwrap();
        assert_eq!(skills.len(), 1);
        let skill = &skills[0];
        assert_eq!(skill.name.as_str(), "local/code-tools");
        assert_eq!(skill.version.as_deref(), Some("1.2.0"));
        let kinds: Vec<_> = skill.items.iter().map(|i| i.kind().as_str()).collect();
        assert_eq!(
            kinds,
            [
                "tool_ref",
                "tool_ref",
                "include",
                "include",
                "inline_tool",
                "mcp_source",
                "agent_source"
            ]
        );
        let SkillItem::Include(include) = &skill.items[3] else {
            panic!()
        };
        assert_eq!(include.skill.as_str(), "local/git-tools");
        assert_eq!(include.overrides["approval"], "required");
        let SkillItem::McpSource(mcp) = &skill.items[5] else {
            panic!()
        };
        assert_eq!(mcp.env["GITHUB_TOKEN"], "${GITHUB_TOKEN}");
        assert_eq!(skill.overrides["builtin/read_file"]["timeout_s"], 10);
    }

    #[test]
    fn yaml_round_trip_is_identical() {
        let skills = parse_skills(FULL, "s.yaml").unwrap();
        let yaml = skills_to_yaml(&skills).unwrap();
        assert_eq!(parse_skills(&yaml, "out.yaml").unwrap(), skills);
    }

    #[test]
    fn multi_document_streams_hold_several_skills() {
        let skills = parse_skills("---\nname: a/one\n---\nname: a/two\n---\n", "s.yaml").unwrap();
        let names: Vec<_> = skills.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a/one", "a/two"]);
    }

    #[test]
    fn unknown_keys_point_at_line_and_column() {
        let err = error("name: a/b\ntoolz: [x]\n");
        assert_eq!((err.line, err.column), (Some(2), Some(1)));
        assert!(
            err.message
                .starts_with("unknown field `toolz`, expected one of"),
            "{}",
            err.message
        );
        let shown = err.to_string();
        assert!(
            shown.starts_with("s.yaml:2:1: unknown field `toolz`"),
            "{shown}"
        );
        assert!(shown.contains("2 | toolz: [x]\n  | ^"), "{shown}");
    }

    #[test]
    fn unknown_keys_inside_items_are_errors_too() {
        let err = error("name: a/b\ninline_tools:\n  - descripton: x\n");
        assert_eq!(err.line, Some(3));
        assert!(
            err.message.contains("unknown field `descripton`"),
            "{}",
            err.message
        );
        let err = error("name: a/b\nincludes:\n  - skill: a/c\n    overides: {}\n");
        assert!(
            err.message.contains("unknown field `overides`"),
            "{}",
            err.message
        );
        let err = error("name: a/b\nmcp_sources:\n  - server: s\n    comand: x\n");
        assert!(
            err.message.contains("unknown field `comand`"),
            "{}",
            err.message
        );
    }

    #[test]
    fn errors_in_later_documents_name_the_document_and_absolute_line() {
        let err = error("name: a/one\n---\nname: a/two\nbogus: 1\n");
        assert_eq!(err.document, Some(2));
        assert_eq!(err.line, Some(4));
    }

    #[test]
    fn invalid_names_are_rejected_with_the_rule() {
        let err = error("name: not-namespaced\n");
        assert!(
            err.message.contains("invalid skill name `not-namespaced`"),
            "{}",
            err.message
        );
        assert_eq!(err.line, Some(1));
        let err = error("name: a/b\nincludes: [bad name]\n");
        assert!(
            err.message.contains("invalid skill name `bad name`"),
            "{}",
            err.message
        );
    }

    #[test]
    fn missing_name_and_wrong_types_are_reported() {
        assert!(
            error("description: x\n")
                .message
                .contains("missing field `name`")
        );
        let err = error("name: a/b\ntools: builtin/x\n");
        assert!(err.message.contains("invalid type"), "{}", err.message);
        // Unquoted scalars keep their text: `1.10` stays `1.10`, not `1.1`.
        let skill = parse_skills("name: a/b\nversion: 1.10\n", "s.yaml")
            .unwrap()
            .remove(0);
        assert_eq!(skill.version.as_deref(), Some("1.10"));
        let err = error("- a\n- b\n");
        assert!(err.message.contains("invalid type"), "{}", err.message);
    }

    #[test]
    fn syntax_errors_point_at_the_line() {
        let err = error("name: a/b\ntools: [x\n");
        assert!(err.line.is_some(), "{err}");
    }

    #[test]
    fn semantic_errors_name_the_skill_and_field() {
        let err = error("name: a/b\ninline_tools:\n  - input_schema: {type: 7}\n");
        assert_eq!(err.subject.as_deref(), Some("a/b"));
        assert!(
            err.message
                .starts_with("inline_tools[0].input_schema: not a valid JSON Schema"),
            "{}",
            err.message
        );
        let err = error("name: a/b\n---\nname: a/b\n");
        assert_eq!(err.document, Some(2));
        assert!(err.message.contains("more than once"));
    }

    #[test]
    fn alias_bombs_and_deep_nesting_fail_fast() {
        // The anchors sit inside `metadata`, which takes any value, so the
        // bomb is reached (a top-level `a:` would stop at "unknown field").
        let mut bomb = String::from(
            "name: a/b\nmetadata:\n  a: &a [\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\",\"x\"]\n",
        );
        for i in 0..9 {
            let prev = if i == 0 {
                "a".to_string()
            } else {
                format!("l{}", i - 1)
            };
            bomb.push_str(&format!(
                "  l{i}: &l{i} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"
            ));
        }
        bomb.push_str("  x: *l8\n");
        // Stopped by counts, not a clock: yaml_serde's alias repetition
        // limit (9^10 values unexpanded), and the 64-level nesting limit at
        // the 65th bracket.
        let err = parse_skills(&bomb, "bomb.yaml").unwrap_err().to_string();
        assert!(err.contains("(repetition limit exceeded)"), "{err}");
        let deep = format!(
            "name: a/b\nmetadata: {{x: {}{}}}\n",
            "[".repeat(10_000),
            "]".repeat(10_000)
        );
        let err = parse_skills(&deep, "deep.yaml").unwrap_err().to_string();
        assert!(
            err.starts_with("deep.yaml:2:77: nested deeper than 64 levels (the nesting limit)"),
            "{err}"
        );
    }

    #[test]
    fn a_repeated_key_is_an_error_at_its_second_occurrence() {
        // serde keeps a map's last value; each of these lost the first.
        for (text, expected) in [
            (
                "name: a/b\ndescription: one\ntools: [x/y]\ndescription: two\n",
                "s.yaml:4:1: duplicate key `description`",
            ),
            (
                "name: a/b\ntools: [x/y]\noverrides:\n  x/y:\n    timeout_s: 5\n    approval: never\n    timeout_s: 50\n",
                "s.yaml:7:5: overrides.x/y: duplicate key `timeout_s`",
            ),
            (
                "name: a/b\ntools: [x/y, x/z]\noverrides:\n  x/y: {read_only: true}\n  x/z: {}\n  x/y: {read_only: false}\n",
                "s.yaml:6:3: overrides: duplicate key `x/y`",
            ),
            (
                "name: a/b\nincludes:\n  - skill: a/c\n    overrides: {x/y: {writes: true, writes: false}}\n",
                "s.yaml:4:37: includes[0].overrides.x/y: duplicate key `writes`",
            ),
            (
                "name: a/b\nmetadata:\n  1: one\n  \"1\": also one\n",
                "s.yaml:4:3: metadata: duplicate key `1`",
            ),
            (
                "name: a/one\n---\nname: a/b\ninline_tools:\n  - description: d\n    input_schema: {type: object, type: array}\n",
                "s.yaml:6:34: document 2: inline_tools[0].input_schema: duplicate key `type`",
            ),
        ] {
            let err = error(text).to_string();
            assert!(err.starts_with(expected), "{err}\nexpected {expected}");
        }
        // The same key in two maps is no repeat.
        let fine = "name: a/b\ntools: [x/y, x/z]\noverrides:\n  x/y: {read_only: true}\n  x/z: {read_only: true}\n";
        assert_eq!(parse_skills(fine, "ok.yaml").unwrap().len(), 1);
    }

    #[test]
    fn keys_are_compared_as_the_typed_parse_reads_them() {
        // Written differently, read the same: refused. A tag on a key is
        // ignored by the parse, so it is no way around the rule.
        for (text, key) in [
            ("metadata: {~: one, \"~\": two}", "~"),
            ("metadata:\n  owner: alice\n  !x owner: mallory", "owner"),
            (
                "tools: [x/y]\noverrides:\n  x/y: {timeout_s: 600}\n  !t x/y: {timeout_s: 5}",
                "x/y",
            ),
            ("metadata: {True: 1, \"True\": 2}", "True"),
        ] {
            let err = error(&format!("name: a/b\n{text}\n")).to_string();
            assert!(err.contains(&format!("duplicate key `{key}`")), "{err}");
        }
        // Read as different keys, kept as such.
        let skill = parse_skills(
            "name: a/b\nmetadata: {1: a, 1.0: b, true: c, True: d, null: e, ~: f}\n",
            "ok.yaml",
        )
        .unwrap()
        .remove(0);
        assert_eq!(skill.metadata.len(), 6, "{:?}", skill.metadata);
    }

    #[test]
    fn a_value_its_tag_does_not_fit_is_refused_not_left_unchecked() {
        // `!!int abc` stops the first walk; what follows it was checked by
        // nothing, so the file is refused rather than read past it.
        let err =
            error("name: a/b\ndescription: !!int abc\nmetadata: {owner: alice, owner: mallory}\n")
                .to_string();
        assert!(err.starts_with("s.yaml:2:"), "{err}");
        // An earlier document's problem is still the one reported.
        let err =
            error("name: a/one\ntoolz: []\n---\nname: a/b\ndescription: !!int abc\n").to_string();
        assert!(err.contains("unknown field `toolz`"), "{err}");
    }

    #[test]
    fn aliases_of_a_large_string_stop_at_a_budget_proportional_to_the_file() {
        // 1 MB of text that would expand to 500 MB: refused, at the anchor
        // (whose events the aliases replay) and the alias that ran out.
        let text = format!(
            "name: a/b\nmetadata:\n  s: &s \"{}\"\n  l: [{}]\n",
            "x".repeat(1_000_000),
            vec!["*s"; 500].join(",")
        );
        let err = parse_skills(&text, "amp.yaml").unwrap_err().to_string();
        assert!(
            err.starts_with("amp.yaml:3:6: metadata.l[")
                && err.contains("]: YAML aliases expand to too much data"),
            "{}",
            &err[..err.len().min(300)]
        );
        assert!(err.len() < 4_096, "{} bytes", err.len());
        // Anchors that expand modestly, and a `&` that is no anchor, parse.
        let fine = "name: a/b\ndescription: R&D tools\nmetadata:\n  base: &b {team: x, tier: 1}\n  copy: *b\n";
        let skill = parse_skills(fine, "ok.yaml").unwrap().remove(0);
        assert_eq!(skill.metadata["copy"]["tier"], 1);
    }

    #[test]
    fn json_view_has_every_key() {
        let skill = parse_skills("name: a/b\n", "s.yaml").unwrap().remove(0);
        let json = skill_to_json(&skill);
        for key in [
            "name",
            "namespace",
            "short_name",
            "description",
            "version",
            "metadata",
            "overrides",
            "tools",
            "includes",
            "inline_tools",
            "mcp_sources",
            "agent_sources",
            "created_at",
            "updated_at",
        ] {
            assert!(json.get(key).is_some(), "{key}");
        }
        assert_eq!(json["namespace"], "a");
    }

    #[test]
    fn deep_nesting_is_refused_by_the_pre_scan_with_its_position() {
        let deep = format!(
            "name: a/b\nmetadata: {{x: {}{}}}\n",
            "[".repeat(200_000),
            "]".repeat(200_000)
        );
        let err = error_of(&deep);
        assert!(
            err.message.contains("nested deeper than 64 levels"),
            "{err}"
        );
        assert_eq!(err.line, Some(2));
        assert_eq!(err.limit, Some(crate::Limit::Depth));
        assert!(err.to_string().len() < 4096, "{}", err.to_string().len());
        let shallow = format!(
            "name: a/b\nmetadata: {{x: {}{}}}\n",
            "[".repeat(30),
            "]".repeat(30)
        );
        assert!(parse_skills(&shallow, "s.yaml").is_ok());
        let limits = Limits::SKILLS.with_max_depth(10);
        assert!(parse_skills_with(&shallow, "s.yaml", &limits).is_err());
    }

    #[test]
    fn a_list_of_a_skill_holds_at_most_max_items_entries() {
        // `{}` is three bytes and an inline tool parsed: refused past the cap,
        // at the entry past it, before the rest is built.
        for (field, entry) in [
            ("inline_tools", "{}"),
            ("tools", "a/b"),
            ("includes", "a/c"),
        ] {
            let at_cap = format!(
                "name: a/b\n{field}: [{}]\n",
                vec![entry; MAX_ITEMS].join(",")
            );
            assert!(parse_skills(&at_cap, "s.yaml").is_ok(), "{field}");
            let past = format!(
                "name: a/b\n{field}:\n{}",
                format!("  - {entry}\n").repeat(MAX_ITEMS + 100)
            );
            let err = error(&past);
            assert!(
                err.message
                    .contains("more than 10000 entries, the most one list of a skill may hold"),
                "{err}"
            );
            assert!(err.message.starts_with(field), "{err}");
            // At the list, which the error names.
            assert_eq!(err.line, Some(3), "{field}: {err}");
        }
    }

    #[test]
    fn a_document_of_more_than_max_values_values_is_refused_before_parsing() {
        // Three bytes a value: 375 KB, over 60 MB of parser events had it
        // been parsed.
        let dense = format!(
            "name: a/b\nmetadata: {{k: [{}0]}}\n",
            "[],".repeat(crate::MAX_VALUES / 2 + 1)
        );
        let err = error(&dense);
        assert_eq!(err.limit, Some(crate::Limit::Values));
        assert!(err.message.contains("more than 250000 values"), "{err}");
        assert_eq!(err.line, Some(2));
        assert!(err.to_string().len() < 4096);
    }

    #[test]
    fn size_limit_is_checked_first() {
        let limits = Limits::SKILLS.with_max_bytes(20);
        let err =
            parse_skills_with("name: a/b\ndescription: too long\n", "s.yaml", &limits).unwrap_err();
        assert!(
            err.message.contains("larger than the limit of 20 bytes"),
            "{err}"
        );
        assert_eq!(err.limit, Some(crate::Limit::Bytes));
        // Any other error breaks no limit.
        assert_eq!(error_of("name: a/b\ntoolz: 1\n").limit, None);
        assert_eq!(Limits::SKILLS.max_bytes, 16 << 20);
        assert_eq!(Limits::PLAN.max_bytes, 1 << 20);
    }

    #[test]
    fn errors_stay_short_and_escape_control_characters() {
        let long_name = format!("name: {}\n", "n".repeat(1 << 20));
        let shown = error_of(&long_name).to_string();
        assert!(shown.len() < 4096, "{}", shown.len());
        let one_line = format!(
            "{{\"name\": \"a/b\", {}\"toolz\": 1}}",
            "\"k\": 1, ".repeat(100_000)
        );
        let shown = error_of(&one_line).to_string();
        assert!(shown.len() < 4096, "{}", shown.len());
        assert!(shown.contains("shown from byte"), "{shown}");
        let err = error_of("name: a/b\ndescription: x\u{1}y\n");
        assert_eq!(err.line, Some(2), "{err}");
        assert!(!err.to_string().contains('\u{1}'), "{err}");
        let shown = error_of("\0\0\0\0").to_string();
        assert!(!shown.contains('\0'), "{shown}");
    }

    #[test]
    fn a_secret_option_value_on_the_quoted_line_is_masked_and_the_caret_follows() {
        let err = error_of(
            "name: l/a\nmcp_sources:\n  - server: s\n    command: x\n    args: [\"--api-key\", \"sk-live-ARGSECRET\", {a: 1}]\n",
        );
        let shown = err.to_string();
        assert!(!shown.contains("ARGSECRET"), "{shown}");
        assert!(
            shown.ends_with("5 |     args: [\"--api-key\", \"***\", {a: 1}]\n  |                                ^"),
            "{shown}"
        );
    }

    fn error_of(text: &str) -> DefinitionError {
        parse_skills(text, "s.yaml").unwrap_err()
    }
}
