use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::name::SkillName;
use crate::tool::{check_schema, validate_tool_name};

/// A JSON object: metadata, or the fields of one override.
pub type ValueMap = serde_json::Map<String, Value>;

/// Skill-level overrides: tool (entry) name → fields to merge into that entry.
pub type Overrides = IndexMap<String, ValueMap>;

const MAX_VERSION: usize = 50;
const MAX_ITEM_NAME: usize = 500;

/// A registered (or about to be registered) skill definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skill {
    /// The unique `namespace/short_name`.
    pub name: SkillName,
    /// Free text for people.
    pub description: Option<String>,
    /// Optional version string, at most 50 characters.
    pub version: Option<String>,
    /// Any JSON-compatible map the author wants to keep.
    pub metadata: ValueMap,
    /// Skill-level overrides, keyed by the entry name they apply to.
    pub overrides: Overrides,
    /// The skill's components in their stable `item_order`.
    pub items: Vec<SkillItem>,
    /// ISO-8601 UTC, set by the store.
    pub created_at: Option<String>,
    /// ISO-8601 UTC, set by the store; also the optimistic-concurrency token.
    pub updated_at: Option<String>,
}

/// A tool ref's name: a string of up to 24 bytes kept inline.
pub type ToolName = compact_str::CompactString;

/// One ordered component of a skill, as stored in `skill_items`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "item_type", rename_all = "snake_case")]
pub enum SkillItem {
    /// A named tool in the tool registry.
    ToolRef {
        /// The tool's registry name, e.g. `builtin/read_file`: held inline
        /// when it fits in 24 bytes, as most do, so a closure's tens of
        /// thousands of refs are read without one pointer chase each.
        name: ToolName,
    },
    /// Recursive inclusion of another skill.
    Include(Include),
    /// An anonymous tool defined inline (boxed, as the MCP source: the rare
    /// large variants would otherwise make every item, tool refs included,
    /// several hundred bytes, and a closure of thousands of skills is mostly
    /// tool refs the resolver scans).
    InlineTool(Box<InlineTool>),
    /// Tools served by an MCP server.
    McpSource(Box<McpSource>),
    /// An Agent Skills Standard folder.
    AgentSource(AgentSource),
}

/// The `item_type` discriminator of a [`SkillItem`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemKind {
    /// `tool_ref`
    ToolRef,
    /// `include`
    Include,
    /// `inline_tool`
    InlineTool,
    /// `mcp_source`
    McpSource,
    /// `agent_source`
    AgentSource,
}

/// An include item with its per-include overrides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Include {
    /// The included skill.
    pub skill: SkillName,
    /// Fields shallow-merged onto every entry the included skill contributes.
    #[serde(default, skip_serializing_if = "IncludeOverrides::is_empty")]
    pub overrides: IncludeOverrides,
}

/// An include's overrides: a [`ValueMap`] (it derefs to one) that costs one
/// pointer when empty, as almost every include's is. A map inline would
/// make every [`SkillItem`] 96 bytes instead of 40, and a closure of
/// thousands of skills is scanned item by item: at 20,000 skills that
/// difference decides whether the resolver's working set fits in the
/// last-level cache.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IncludeOverrides(Option<Box<ValueMap>>);

/// What an empty [`IncludeOverrides`] derefs to.
static NO_FIELDS: std::sync::LazyLock<ValueMap> = std::sync::LazyLock::new(ValueMap::new);

impl IncludeOverrides {
    /// No overrides.
    pub const fn new() -> Self {
        Self(None)
    }

    /// True when there are no overrides (no pointer is followed).
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }
}

impl From<ValueMap> for IncludeOverrides {
    fn from(map: ValueMap) -> Self {
        // Never `Some` of an empty map, so `is_empty` needs no dereference.
        Self((!map.is_empty()).then(|| Box::new(map)))
    }
}

impl std::ops::Deref for IncludeOverrides {
    type Target = ValueMap;

    fn deref(&self) -> &ValueMap {
        self.0.as_deref().unwrap_or(&NO_FIELDS)
    }
}

impl Serialize for IncludeOverrides {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for IncludeOverrides {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        ValueMap::deserialize(deserializer).map(Self::from)
    }
}

impl schemars::JsonSchema for IncludeOverrides {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        ValueMap::schema_name()
    }

    fn inline_schema() -> bool {
        ValueMap::inline_schema()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        ValueMap::json_schema(generator)
    }
}

/// An anonymous tool defined inside a skill.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InlineTool {
    /// What the tool does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The tool only reads.
    #[serde(default)]
    pub read_only: bool,
    /// The tool writes.
    #[serde(default)]
    pub writes: bool,
    /// The tool's effects can be checkpointed.
    #[serde(default)]
    pub checkpointable: bool,
    /// The tool has side effects; `None` means "same as `writes`".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side_effects: Option<bool>,
    /// JSON Schema of the input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
    /// JSON Schema of the output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// How the tool runs; without it the tool is a catalogue entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<crate::RunSpec>,
}

impl InlineTool {
    /// Whether the tool has side effects, defaulting to `writes`.
    pub fn has_side_effects(&self) -> bool {
        self.side_effects.unwrap_or(self.writes)
    }
}

/// Where an MCP server's tools come from. With neither `command` nor `url`, the
/// item refers to a server defined in the configuration under the same name.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpSource {
    /// Server name, used in entry names `mcp:{server}/{tool}`.
    pub server: String,
    /// Program of a stdio server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Arguments of a stdio server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Environment of a stdio server; `${VAR}` is kept as written.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub env: IndexMap<String, String>,
    /// Working directory of a stdio server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Endpoint of a streamable-HTTP server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// HTTP headers; `${VAR}` is kept as written.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub headers: IndexMap<String, String>,
    /// Optional allow-list of the server's tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// Seconds to wait for the server; the configured default when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<u64>,
}

impl McpSource {
    /// True when the item only names a server defined in the configuration.
    pub fn is_reference(&self) -> bool {
        self.command.is_none() && self.url.is_none()
    }

    /// What breaks the rules of an MCP source on its own (its server name,
    /// which fields go together, the URL's scheme, the timeout), each as
    /// the field it is about (`server`, `url`, …; empty for the item as a
    /// whole) and what was expected. Checked when a skill is written
    /// ([`Skill::validate`]), when a configured server is loaded, and when
    /// a stored item is read back: a row written behind the registry's back
    /// must not carry a name that prints as other lines or commands.
    pub fn problems(&self) -> Vec<(&'static str, String)> {
        let mut problems = Vec::new();
        if let Err(message) = validate_server_name(&self.server) {
            problems.push(("server", message));
        }
        if self.command.is_some() && self.url.is_some() {
            problems.push((
                "",
                "give either `command` (stdio) or `url` (streamable HTTP), not both".into(),
            ));
        }
        if self.url.is_none() && !self.headers.is_empty() {
            problems.push(("headers", "headers need a `url` server".into()));
        }
        if self.command.is_none()
            && (!self.args.is_empty() || !self.env.is_empty() || self.cwd.is_some())
        {
            problems.push(("", "`args`, `env` and `cwd` need a `command` server".into()));
        }
        if let Some(url) = &self.url
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            problems.push((
                "url",
                format!(
                    "expected an `http://` or `https://` URL, got `{}`",
                    crate::text::shorten(
                        &crate::redact::redact_url(url),
                        crate::text::MAX_ECHO_BYTES
                    )
                ),
            ));
        }
        if self.timeout_s == Some(0) {
            problems.push(("timeout_s", "must be at least 1 second".into()));
        }
        problems
    }
}

/// An Agent Skills Standard folder, with the path as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentSource {
    /// Folder holding a `SKILL.md`; `~` is expanded when resolved, not stored.
    pub path: String,
}

/// A skill definition that breaks a rule other than the name pattern.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("skill `{skill}`: {field}: {message}")]
pub struct InvalidSkill {
    /// The skill.
    pub skill: String,
    /// The offending field, e.g. `inline_tools[2].input_schema`.
    pub field: String,
    /// What was expected.
    pub message: String,
}

impl InvalidSkill {
    /// A stable machine-readable kind.
    pub fn kind(&self) -> &'static str {
        "invalid_skill"
    }
}

impl SkillItem {
    /// The `item_type` of this item.
    pub fn kind(&self) -> ItemKind {
        match self {
            Self::ToolRef { .. } => ItemKind::ToolRef,
            Self::Include(_) => ItemKind::Include,
            Self::InlineTool(_) => ItemKind::InlineTool,
            Self::McpSource(_) => ItemKind::McpSource,
            Self::AgentSource(_) => ItemKind::AgentSource,
        }
    }
}

impl ItemKind {
    /// The discriminator as stored in `skill_items.item_type`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ToolRef => "tool_ref",
            Self::Include => "include",
            Self::InlineTool => "inline_tool",
            Self::McpSource => "mcp_source",
            Self::AgentSource => "agent_source",
        }
    }

    /// Parses a stored discriminator.
    pub fn parse(raw: &str) -> Option<Self> {
        Some(match raw {
            "tool_ref" => Self::ToolRef,
            "include" => Self::Include,
            "inline_tool" => Self::InlineTool,
            "mcp_source" => Self::McpSource,
            "agent_source" => Self::AgentSource,
            _ => return None,
        })
    }
}

impl Skill {
    /// A skill with no items, description or metadata.
    pub fn new(name: SkillName) -> Self {
        Self {
            name,
            description: None,
            version: None,
            metadata: ValueMap::new(),
            overrides: Overrides::new(),
            items: Vec::new(),
            created_at: None,
            updated_at: None,
        }
    }

    /// The namespace part of the name.
    pub fn namespace(&self) -> &str {
        self.name.namespace()
    }

    /// The short-name part of the name.
    pub fn short_name(&self) -> &str {
        self.name.short_name()
    }

    /// Items of one kind, in order.
    pub fn items_of(&self, kind: ItemKind) -> impl Iterator<Item = &SkillItem> {
        self.items.iter().filter(move |item| item.kind() == kind)
    }

    /// The skills this one includes, in order.
    pub fn includes(&self) -> impl Iterator<Item = &Include> {
        self.items.iter().filter_map(|item| match item {
            SkillItem::Include(include) => Some(include),
            _ => None,
        })
    }

    /// Name of the `index`-th inline tool (0-based within this skill).
    pub fn inline_tool_name(&self, index: usize) -> String {
        format!("{}/_anon_{index}", self.name)
    }

    /// The names stored in `skill_items.item_name`, one per item in order
    /// (inline tools numbered among themselves), in one pass.
    pub fn item_names(&self) -> Vec<String> {
        let mut inline = 0usize;
        self.items
            .iter()
            .map(|item| match item {
                SkillItem::ToolRef { name } => name.to_string(),
                SkillItem::Include(include) => include.skill.to_string(),
                SkillItem::InlineTool(_) => {
                    inline += 1;
                    self.inline_tool_name(inline - 1)
                }
                SkillItem::McpSource(source) => source.server.clone(),
                SkillItem::AgentSource(source) => source.path.clone(),
            })
            .collect()
    }

    /// The skill as a reader is shown it where secrets are hidden: each MCP
    /// source through [`crate::redact::mask_source`]; with the fields that
    /// hid a secret (`mcp_sources[0].env.GITHUB_TOKEN`), in item order.
    pub fn with_secrets_masked(&self) -> (Skill, Vec<String>) {
        let mut masked = Vec::new();
        let mut index = 0;
        let items = self
            .items
            .iter()
            .map(|item| match item {
                SkillItem::McpSource(source) => {
                    masked.extend(
                        crate::redact::literal_secret_fields(source)
                            .into_iter()
                            .map(|field| format!("mcp_sources[{index}].{field}")),
                    );
                    index += 1;
                    SkillItem::McpSource(Box::new(crate::redact::mask_source(source)))
                }
                other => other.clone(),
            })
            .collect();
        (
            Skill {
                items,
                ..self.clone()
            },
            masked,
        )
    }

    /// The MCP server fields that hold `***` where a secret goes
    /// ([`crate::redact::masked_secret_fields`]): the definition as
    /// `skill get` prints it with secrets masked, written back. Checked
    /// when a skill is written (not by [`Self::validate`], which a config
    /// file's servers and stored rows also go through: `skill get` has
    /// nothing to do with them).
    pub fn masked_secret_problems(&self) -> Vec<InvalidSkill> {
        let sources = self.items.iter().filter_map(|item| match item {
            SkillItem::McpSource(source) => Some(source),
            _ => None,
        });
        sources
            .enumerate()
            .flat_map(|(index, source)| {
                crate::redact::masked_secret_fields(source)
                    .into_iter()
                    .map(move |part| InvalidSkill {
                        skill: self.name.to_string(),
                        field: format!("mcp_sources[{index}].{part}"),
                        message: format!(
                            "holds `{}`, which `{}` prints in place of a secret; write the secret, or a `${{VAR}}` reference to it",
                            crate::redact::REDACTED,
                            crate::Hint::GetSkill
                        ),
                    })
            })
            .collect()
    }

    /// Checks every rule beyond the name pattern: lengths, tool names, schemas,
    /// MCP connection fields. Returns all problems, not just the first.
    pub fn validate(&self) -> Result<(), Vec<InvalidSkill>> {
        let mut problems = Vec::new();
        let mut fail = |field: String, message: String| {
            problems.push(InvalidSkill {
                skill: self.name.to_string(),
                field,
                message,
            });
        };
        // Stored in text columns, which PostgreSQL cannot give a NUL.
        for (field, text) in [
            ("description", &self.description),
            ("version", &self.version),
        ] {
            if text.as_deref().is_some_and(|text| text.contains('\0')) {
                fail(
                    field.into(),
                    "must not contain a NUL character (`\\0`)".into(),
                );
            }
        }
        if let Some(version) = &self.version
            && version.chars().count() > MAX_VERSION
        {
            fail(
                "version".into(),
                format!("at most {MAX_VERSION} characters are allowed"),
            );
        }
        for (name, fields) in self.overrides.iter() {
            if name.is_empty() {
                fail("overrides".into(), "tool name must not be empty".into());
            }
            if let Some(message) = locked_message(fields) {
                fail(
                    format!(
                        "overrides.{}",
                        crate::text::shorten(name, crate::text::MAX_ECHO_BYTES)
                    ),
                    message,
                );
            }
        }
        let (mut tools, mut includes, mut inline, mut mcp, mut agent) = (0, 0, 0, 0, 0);
        let mut servers: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for item in &self.items {
            match item {
                SkillItem::ToolRef { name } => {
                    if let Err(err) = validate_tool_name(name) {
                        fail(format!("tools[{tools}]"), err.message);
                    }
                    tools += 1;
                }
                SkillItem::Include(include) => {
                    if let Some(message) = locked_message(&include.overrides) {
                        fail(format!("includes[{includes}].overrides"), message);
                    }
                    includes += 1;
                }
                SkillItem::InlineTool(tool) => {
                    for (label, schema) in [
                        ("input_schema", &tool.input_schema),
                        ("output_schema", &tool.output_schema),
                    ] {
                        if let Some(schema) = schema
                            && let Err(message) = check_schema(schema)
                        {
                            fail(format!("inline_tools[{inline}].{label}"), message);
                        }
                    }
                    if let Some(Err(message)) = tool.run.as_ref().map(crate::RunSpec::check) {
                        fail(format!("inline_tools[{inline}].run"), message);
                    }
                    inline += 1;
                }
                SkillItem::McpSource(source) => {
                    let field = format!("mcp_sources[{mcp}]");
                    let mut report = |(part, message): (&str, String)| {
                        if part.is_empty() {
                            fail(field.clone(), message);
                        } else {
                            fail(format!("{field}.{part}"), message);
                        }
                    };
                    let (name, others): (Vec<_>, Vec<_>) = source
                        .problems()
                        .into_iter()
                        .partition(|(part, _)| *part == "server");
                    name.into_iter().for_each(&mut report);
                    // Its tools are named `mcp:{server}/{tool}`: two sources
                    // of one name would give two servers' tools one name,
                    // and `mcp list`/`mcp trust` two rows of one name.
                    if let Some(first) = servers.get(source.server.as_str()) {
                        report((
                            "server",
                            format!(
                                "`{}` is already the server of `mcp_sources[{first}]`; a skill names each server once",
                                crate::text::shorten(&source.server, crate::text::MAX_ECHO_BYTES)
                            ),
                        ));
                    } else {
                        servers.insert(source.server.as_str(), mcp);
                    }
                    others.into_iter().for_each(&mut report);
                    mcp += 1;
                }
                SkillItem::AgentSource(source) => {
                    if source.path.trim().is_empty() {
                        fail(
                            format!("agent_sources[{agent}].path"),
                            "must not be empty".into(),
                        );
                    }
                    agent += 1;
                }
            }
        }
        // Named by the list the user wrote it in, not by its place among
        // all items (which is how it is stored).
        let mut counts: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for (item, name) in self.items.iter().zip(self.item_names()) {
            let list = match item {
                SkillItem::ToolRef { .. } => "tools",
                SkillItem::Include(_) => "includes",
                SkillItem::InlineTool(_) => "inline_tools",
                SkillItem::McpSource(_) => "mcp_sources",
                SkillItem::AgentSource(_) => "agent_sources",
            };
            let count = counts.entry(list).or_insert(0);
            let index = *count;
            *count += 1;
            if name.chars().count() > MAX_ITEM_NAME {
                fail(
                    format!("{list}[{index}]"),
                    format!(
                        "the name it is stored under is longer than {MAX_ITEM_NAME} characters"
                    ),
                );
            }
            if name.contains('\0') {
                fail(
                    format!("{list}[{index}]"),
                    "must not contain a NUL character (`\\0`)".into(),
                );
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        }
    }
}

/// The fields of `fields` the resolver sets itself
/// ([`crate::NON_OVERRIDABLE_FIELDS`]), in that list's order.
pub(crate) fn locked_fields(fields: &ValueMap) -> Vec<String> {
    if fields.is_empty() {
        // The usual case, once per include edge: no probing, no collecting.
        return Vec::new();
    }
    crate::NON_OVERRIDABLE_FIELDS
        .iter()
        .filter(|field| fields.contains_key(**field))
        .map(|field| (*field).to_owned())
        .collect()
}

/// Why an override map that sets a locked field is refused when written:
/// it could never resolve (the resolver fails on it wherever it applies),
/// unlike a missing include, which a later write can supply.
fn locked_message(fields: &ValueMap) -> Option<String> {
    let locked = locked_fields(fields);
    (!locked.is_empty()).then(|| {
        format!(
            "{} cannot be overridden (the resolver sets {})",
            locked
                .iter()
                .map(|field| format!("`{field}`"))
                .collect::<Vec<_>>()
                .join(", "),
            if locked.len() == 1 { "it" } else { "them" }
        )
    })
}

/// MCP server names become part of tool names (`mcp:{server}/{tool}`), so they
/// are kept to a conservative alphabet.
pub fn validate_server_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 100
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if ok {
        Ok(())
    } else {
        // The name is anyone's text: shown escaped (a line break in it
        // would print as a line of its own) and cut.
        Err(format!(
            "server name `{}` must be 1-100 characters of letters, digits, `_`, `-` or `.`",
            crate::text::shorten(name, crate::text::MAX_ECHO_BYTES)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(items: Vec<SkillItem>) -> Skill {
        let mut skill = Skill::new(SkillName::new("local/s").unwrap());
        skill.items = items;
        skill
    }

    #[test]
    fn inline_item_names_count_within_the_skill() {
        let s = skill(vec![
            SkillItem::ToolRef { name: "a/b".into() },
            SkillItem::InlineTool(Box::default()),
            SkillItem::InlineTool(Box::default()),
        ]);
        let names = s.item_names();
        assert_eq!(names[1], "local/s/_anon_0");
        assert_eq!(names[2], "local/s/_anon_1");
    }

    #[test]
    fn locked_fields_in_any_override_map_are_refused_when_written() {
        let map = |json: serde_json::Value| json.as_object().unwrap().clone();
        let mut s = skill(vec![
            SkillItem::Include(Include {
                skill: SkillName::new("local/a").unwrap(),
                overrides: map(serde_json::json!({"approval": "required"})).into(),
            }),
            SkillItem::Include(Include {
                skill: SkillName::new("local/b").unwrap(),
                overrides: map(serde_json::json!({"is_inline": true, "source_skill": "x"})).into(),
            }),
        ]);
        s.overrides.insert(
            "builtin/grep".into(),
            map(serde_json::json!({"name": "x", "read_only": true})),
        );
        s.overrides.insert(
            "builtin/ls".into(),
            map(serde_json::json!({"writes": true})),
        );
        let problems: Vec<(String, String)> = s
            .validate()
            .unwrap_err()
            .into_iter()
            .map(|p| (p.field, p.message))
            .collect();
        assert_eq!(
            problems,
            [
                (
                    "overrides.builtin/grep".to_owned(),
                    "`name` cannot be overridden (the resolver sets it)".to_owned()
                ),
                (
                    "includes[1].overrides".to_owned(),
                    "`source_skill`, `is_inline` cannot be overridden (the resolver sets them)"
                        .to_owned()
                ),
            ]
        );
        // Without them the skill is valid.
        s.overrides.shift_remove("builtin/grep");
        s.items.pop();
        assert!(s.validate().is_ok());
    }

    #[test]
    fn a_nul_in_a_text_column_is_refused_by_its_field() {
        let mut s = skill(vec![]);
        s.description = Some("a\0b".into());
        let problems = s.validate().unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].field, "description");
        assert_eq!(
            problems[0].message,
            "must not contain a NUL character (`\\0`)"
        );
    }

    #[test]
    fn an_overlong_item_is_named_by_the_list_it_is_written_in() {
        let s = skill(vec![
            SkillItem::ToolRef {
                name: "builtin/grep".into(),
            },
            SkillItem::AgentSource(AgentSource {
                path: "p".repeat(600),
            }),
        ]);
        let problems = s.validate().unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].field, "agent_sources[0]");
        assert_eq!(
            problems[0].message,
            "the name it is stored under is longer than 500 characters"
        );
    }

    #[test]
    fn a_skill_names_each_mcp_server_once() {
        let source = |server: &str, command: &str| {
            SkillItem::McpSource(Box::new(McpSource {
                server: server.into(),
                command: Some(command.into()),
                ..McpSource::default()
            }))
        };
        let s = skill(vec![source("s", "a"), source("t", "b"), source("s", "c")]);
        let problems = s.validate().unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].field, "mcp_sources[2].server");
        assert_eq!(
            problems[0].message,
            "`s` is already the server of `mcp_sources[0]`; a skill names each server once"
        );
    }

    #[test]
    fn side_effects_default_to_writes() {
        let mut tool = InlineTool {
            writes: true,
            ..InlineTool::default()
        };
        assert!(tool.has_side_effects());
        tool.side_effects = Some(false);
        assert!(!tool.has_side_effects());
    }

    #[test]
    fn validation_reports_every_problem_with_its_field() {
        let mut s = skill(vec![
            SkillItem::ToolRef { name: "".into() },
            SkillItem::InlineTool(Box::new(InlineTool {
                input_schema: Some(serde_json::json!({"type": 5})),
                ..InlineTool::default()
            })),
            SkillItem::McpSource(Box::new(McpSource {
                server: "bad name".into(),
                command: Some("x".into()),
                url: Some("ftp://x".into()),
                ..McpSource::default()
            })),
        ]);
        s.version = Some("v".repeat(51));
        let problems = s.validate().unwrap_err();
        let fields: Vec<_> = problems.iter().map(|p| p.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "version",
                "tools[0]",
                "inline_tools[0].input_schema",
                "mcp_sources[0].server",
                "mcp_sources[0]",
                "mcp_sources[0].url"
            ]
        );
    }
}
