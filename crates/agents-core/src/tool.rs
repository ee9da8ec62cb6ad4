use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::skill::ValueMap;

const MAX_TOOL_NAME: usize = 500;

/// Where a tool came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolSource {
    /// Shipped with the host program.
    Builtin,
    /// Discovered from an Agent Skills folder (`SKILL.md`).
    AgentSkills,
    /// Reported by an MCP server.
    Mcp,
    /// Defined by a user in YAML (and inline tools).
    Custom,
}

impl ToolSource {
    /// Every source, in display order.
    pub const ALL: [ToolSource; 4] = [Self::Builtin, Self::AgentSkills, Self::Mcp, Self::Custom];

    /// The name used in storage, JSON and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Builtin => "builtin",
            Self::AgentSkills => "agent_skills",
            Self::Mcp => "mcp",
            Self::Custom => "custom",
        }
    }
}

impl fmt::Display for ToolSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ToolSource {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|source| source.as_str() == s)
            .ok_or_else(|| {
                format!("unknown tool source `{s}`: expected `builtin`, `agent_skills`, `mcp` or `custom`")
            })
    }
}

/// A key of [`ToolSpec::source_metadata`] that the registry itself writes
/// and reads. Each is spelled here once; code reads them through
/// [`ToolSpec::meta`] and [`ToolSpec::meta_str`], not by string. A custom
/// tool's YAML `metadata` may hold any other key, and a row from a shared
/// database anything at all, so every read is an `Option`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Meta {
    /// MCP: the server's name, as the skill that defines it writes it.
    Server,
    /// MCP: the tool's own name on its server.
    Tool,
    /// MCP: `stdio` or `http`.
    Transport,
    /// MCP: when the list was fetched (RFC 3339).
    FetchedAt,
    /// MCP: the tool's display title.
    Title,
    /// MCP: the tool's annotations as the server gave them.
    Annotations,
    /// MCP: the digest of the launch spec whose fetch cached the tool.
    SpecDigest,
    /// MCP: the tool's position in the server's `tools/list` answer.
    ListIndex,
    /// MCP: the tool's `execution` as the server gave it (MCP 2025-11-25:
    /// `taskSupport` says whether a call may, must or must not be a task).
    Execution,
    /// Agent Skill: the folder's realpath.
    Path,
    /// Agent Skill: the `SKILL.md` path.
    SkillMd,
    /// Agent Skill: the `license` front-matter field.
    License,
    /// Agent Skill: the `compatibility` front-matter field.
    Compatibility,
    /// Agent Skill: the `metadata` front-matter map.
    Metadata,
    /// Agent Skill: the `allowed-tools` front-matter field.
    AllowedTools,
    /// Discovered Agent Skill: the discovery scope (user and machine) that
    /// wrote the row.
    Scope,
    /// Discovered Agent Skill: the scope's HMAC over the row.
    Seal,
    /// Custom tool: the absolute path of the YAML file it was added from.
    File,
    /// Custom and inline tool: how it runs ([`RunSpec`]).
    Run,
}

impl Meta {
    /// The key as stored.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Server => "server",
            Self::Tool => "tool",
            Self::Transport => "transport",
            Self::FetchedAt => "fetched_at",
            Self::Title => "title",
            Self::Annotations => "annotations",
            Self::SpecDigest => "spec_digest",
            Self::ListIndex => "list_index",
            Self::Execution => "execution",
            Self::Path => "path",
            Self::SkillMd => "skill_md",
            Self::License => "license",
            Self::Compatibility => "compatibility",
            Self::Metadata => "metadata",
            Self::AllowedTools => "allowed-tools",
            Self::Scope => "scope",
            Self::Seal => "seal",
            Self::File => "file",
            Self::Run => "run",
        }
    }
}

/// A tool known to the tool registry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Namespaced name, e.g. `builtin/read_file` or `mcp:github/create_issue`.
    pub name: String,
    /// What the tool does.
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
    /// JSON Schema of the output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Where it came from.
    pub source: ToolSource,
    /// Origin details: path, server, fetch time, ... (the registry's own
    /// keys are the [`Meta`] ones)
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub source_metadata: ValueMap,
    /// The tool only reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// The tool writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writes: Option<bool>,
    /// The tool's effects can be checkpointed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpointable: Option<bool>,
    /// The tool has side effects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side_effects: Option<bool>,
}

impl ToolSpec {
    /// A tool with just a name, description and source.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        source: ToolSource,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            input_schema: None,
            output_schema: None,
            source,
            source_metadata: ValueMap::new(),
            read_only: None,
            writes: None,
            checkpointable: None,
            side_effects: None,
        }
    }

    /// The `SKILL.md` path of an Agent Skill ([`Meta::SkillMd`], written by
    /// discovery); `None` for other sources.
    pub fn skill_md(&self) -> Option<&str> {
        if self.source != ToolSource::AgentSkills {
            return None;
        }
        self.meta_str(Meta::SkillMd)
    }

    /// The value of one of the registry's own [`source_metadata`] keys.
    ///
    /// [`source_metadata`]: Self::source_metadata
    pub fn meta(&self, key: Meta) -> Option<&Value> {
        self.source_metadata.get(key.as_str())
    }

    /// [`Self::meta`] when it is a string (a row from a shared database may
    /// hold anything under any key: another type reads as absent).
    pub fn meta_str(&self, key: Meta) -> Option<&str> {
        self.meta(key)?.as_str()
    }

    /// Sets one of the registry's own metadata keys.
    pub fn set_meta(&mut self, key: Meta, value: impl Into<Value>) {
        self.source_metadata
            .insert(key.as_str().to_owned(), value.into());
    }

    /// Removes one of the registry's own metadata keys.
    pub fn remove_meta(&mut self, key: Meta) -> Option<Value> {
        self.source_metadata.remove(key.as_str())
    }

    /// How the tool runs: `None` when it has no `run` (a catalogue entry,
    /// or a builtin or MCP tool), `Some(Err)` when what is stored under
    /// [`Meta::Run`] is not a run spec (a row from a shared database may
    /// hold anything).
    pub fn run(&self) -> Option<Result<RunSpec, String>> {
        if !matches!(self.source, ToolSource::Custom) {
            return None;
        }
        let value = self.meta(Meta::Run)?;
        Some(
            serde_json::from_value::<RunSpec>(value.clone())
                .map_err(|err| crate::text::bounded_message(&format!("`run`: {err}")))
                .and_then(|spec| spec.check().map(|()| spec)),
        )
    }

    /// Checks the name and both schemas.
    pub fn validate(&self) -> Result<(), InvalidTool> {
        validate_tool_name(&self.name)?;
        for (field, schema) in [
            ("input_schema", &self.input_schema),
            ("output_schema", &self.output_schema),
        ] {
            if let Some(schema) = schema {
                check_schema(schema).map_err(|message| InvalidTool {
                    name: self.name.clone(),
                    message: format!("{field}: {message}"),
                })?;
            }
        }
        if let Some(Err(message)) = self.run() {
            return Err(InvalidTool {
                name: self.name.clone(),
                message,
            });
        }
        Ok(())
    }
}

/// How a custom or inline tool runs: a program and an argv template, no
/// shell. Each `args` word is one argv word after its placeholders are
/// filled: `{param}` is the argument `param` (a string as it is, a number
/// or boolean as JSON text), `{param...}` as a whole word is an array
/// argument spread into one word per element, `{{` and `}}` are literal
/// braces. A word whose placeholder names an absent argument is left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    /// The program: an absolute path, or a name looked up in `PATH`.
    pub command: String,
    /// The argv template (after the program).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Environment variables set for the process (placeholders are filled
    /// in values too).
    #[serde(default, skip_serializing_if = "indexmap::IndexMap::is_empty")]
    #[schemars(with = "std::collections::BTreeMap<String, String>")]
    pub env: indexmap::IndexMap<String, String>,
    /// The working directory, beneath the workspace roots (default the
    /// first root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// A deadline in seconds (an entry's `timeout_s` may shorten it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<u64>,
    /// Text given on standard input (placeholders are filled); none when
    /// absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdin: Option<String>,
}

impl RunSpec {
    /// The rules a run spec keeps whatever its arguments: a command, no NUL
    /// anywhere, a `timeout_s` from 1.
    pub fn check(&self) -> Result<(), String> {
        if self.command.is_empty() {
            return Err("`run.command` must not be empty".into());
        }
        let words = std::iter::once(&self.command)
            .chain(&self.args)
            .chain(self.env.keys())
            .chain(self.env.values())
            .chain(&self.cwd)
            .chain(&self.stdin);
        if words.clone().any(|word| word.contains('\0')) {
            return Err("`run` holds a NUL byte".into());
        }
        if self.timeout_s == Some(0) {
            return Err("`run.timeout_s` must be at least 1".into());
        }
        if self
            .env
            .keys()
            .any(|key| key.is_empty() || key.contains('='))
        {
            return Err("`run.env` names must be non-empty and hold no `=`".into());
        }
        for (index, word) in self.args.iter().enumerate() {
            if spread_param(word).is_none() {
                template(word).map_err(|err| format!("`run.args[{index}]`: {err}"))?;
            }
        }
        for (field, text) in self
            .env
            .values()
            .map(|value| ("env", value))
            .chain(self.cwd.iter().map(|cwd| ("cwd", cwd)))
            .chain(self.stdin.iter().map(|stdin| ("stdin", stdin)))
        {
            template(text).map_err(|err| format!("`run.{field}`: {err}"))?;
        }
        Ok(())
    }

    /// The argv after the program, filled from `args` (the validated
    /// arguments): see [`RunSpec`] for the placeholders.
    pub fn argv(&self, args: &ValueMap) -> Result<Vec<String>, String> {
        let mut out = Vec::with_capacity(self.args.len());
        for word in &self.args {
            if let Some(name) = spread_param(word) {
                match args.get(name) {
                    None | Some(Value::Null) => {}
                    Some(Value::Array(items)) => {
                        for item in items {
                            out.push(scalar(name, item)?);
                        }
                    }
                    Some(other) => {
                        return Err(format!(
                            "`{name}` is {}; `{{{name}...}}` spreads an array",
                            json_kind(other)
                        ));
                    }
                }
            } else if let Some(filled) = fill_word(word, args)? {
                out.push(filled);
            }
        }
        Ok(out)
    }

    /// `text` (an `env` value, `cwd`, `stdin`) filled from `args`; an absent
    /// argument fills in as nothing.
    pub fn fill(text: &str, args: &ValueMap) -> Result<String, String> {
        let mut out = String::new();
        for segment in template(text)? {
            match segment {
                Segment::Text(text) => out.push_str(&text),
                Segment::Param(name) => match args.get(name) {
                    None | Some(Value::Null) => {}
                    Some(value) => out.push_str(&scalar(name, value)?),
                },
            }
        }
        Ok(out)
    }

    /// The digest local trust is keyed by: SHA-256 of the canonical JSON of
    /// the whole spec, as `sha256:<hex>`.
    pub fn digest(&self) -> String {
        let value = serde_json::to_value(self).unwrap_or(Value::Null);
        crate::sha256_digest(crate::canonical(&value).as_bytes())
    }
}

/// A piece of a template word.
enum Segment<'a> {
    Text(String),
    Param(&'a str),
}

/// `{name...}` as a whole word: the parameter it spreads.
fn spread_param(word: &str) -> Option<&str> {
    let name = word.strip_prefix('{')?.strip_suffix("...}")?;
    is_param_name(name).then_some(name)
}

fn is_param_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// `word` split into text and `{param}` placeholders (`{{`, `}}` literal).
fn template(word: &str) -> Result<Vec<Segment<'_>>, String> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut rest = word;
    while let Some(at) = rest.find(['{', '}']) {
        let (before, from) = rest.split_at(at);
        text.push_str(before);
        if let Some(after) = from.strip_prefix("{{") {
            text.push('{');
            rest = after;
        } else if let Some(after) = from.strip_prefix("}}") {
            text.push('}');
            rest = after;
        } else if let Some(after) = from.strip_prefix('{') {
            let end = after
                .find('}')
                .ok_or_else(|| format!("a `{{` without its `}}` in `{word}`"))?;
            let (name, after) = after.split_at(end);
            if !is_param_name(name) {
                return Err(format!(
                    "`{{{name}}}` is not a placeholder: expected a parameter name (letters, digits, `_`, `-`), or `{{{{` for a literal brace"
                ));
            }
            if !text.is_empty() {
                out.push(Segment::Text(std::mem::take(&mut text)));
            }
            out.push(Segment::Param(name));
            rest = after.get(1..).unwrap_or_default();
        } else {
            return Err(format!(
                "a lone `}}` in `{word}`; write `}}}}` for a literal brace"
            ));
        }
    }
    text.push_str(rest);
    if !text.is_empty() {
        out.push(Segment::Text(text));
    }
    Ok(out)
}

/// One word filled; `None` when a placeholder names an absent argument.
fn fill_word(word: &str, args: &ValueMap) -> Result<Option<String>, String> {
    let mut out = String::new();
    for segment in template(word)? {
        match segment {
            Segment::Text(text) => out.push_str(&text),
            Segment::Param(name) => match args.get(name) {
                None | Some(Value::Null) => return Ok(None),
                Some(value) => out.push_str(&scalar(name, value)?),
            },
        }
    }
    Ok(Some(out))
}

/// An argument as the text of one word.
fn scalar(name: &str, value: &Value) -> Result<String, String> {
    match value {
        Value::String(text) => Ok(text.clone()),
        Value::Number(_) | Value::Bool(_) => Ok(value.to_string()),
        Value::Array(_) => Err(format!(
            "`{name}` is an array; a whole word `{{{name}...}}` spreads it into several"
        )),
        other => Err(format!(
            "`{name}` is {}; expected text, a number or a boolean",
            json_kind(other)
        )),
    }
}

/// A tool definition that breaks a rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid tool `{name}`: {message}")]
pub struct InvalidTool {
    /// The tool's name as given.
    pub name: String,
    /// What was expected.
    pub message: String,
}

impl InvalidTool {
    /// A stable machine-readable kind.
    pub fn kind(&self) -> &'static str {
        "invalid_tool"
    }
}

/// Tool names are free-form but must fit `skill_items.item_name` and be
/// printable on one line.
pub fn validate_tool_name(name: &str) -> Result<(), InvalidTool> {
    let fail = |message: String| InvalidTool {
        name: name.to_owned(),
        message,
    };
    if name.is_empty() {
        return Err(fail("tool name must not be empty".into()));
    }
    if name.chars().count() > MAX_TOOL_NAME {
        return Err(fail(format!(
            "tool name is longer than {MAX_TOOL_NAME} characters"
        )));
    }
    if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(fail(
            "tool name must not contain whitespace or control characters".into(),
        ));
    }
    // A name reads like a path (`custom/deploy`); `..`, `.` and empty parts
    // only make look-alikes of other names.
    if name
        .split('/')
        .any(|part| part.is_empty() || part == "." || part == "..")
    {
        return Err(fail(
            "tool name must not have empty, `.` or `..` parts between `/`".into(),
        ));
    }
    Ok(())
}

/// Checks that `schema` is a JSON Schema object valid against its meta-schema
/// (the draft named by `$schema`, 2020-12 when absent), and that a validator
/// can be built from it: every `pattern` a regular expression, every `$ref`
/// resolvable within the schema (nothing is fetched: the crate is built
/// without remote resolution). A schema that passes the meta-schema but
/// cannot validate anything would fail only later, in whichever client
/// tried to use it. And that it expands to at most
/// [`MAX_FOLLOWED_SCHEMA_SIZE`](crate::MAX_FOLLOWED_SCHEMA_SIZE) subschemas through
/// its `$ref`s: checking a value against it costs as many steps.
pub fn check_schema(schema: &Value) -> Result<(), String> {
    if !schema.is_object() {
        return Err(format!(
            "expected a JSON Schema object, got {}",
            json_kind(schema)
        ));
    }
    // The validator quotes the value it refused, which may be a
    // `password=…` somebody typed where a type belongs.
    let refused = |what: &str, err: &dyn std::fmt::Display| {
        crate::redact::redact_text(&format!("{what}: {err}"))
    };
    jsonschema::meta::validate(schema).map_err(|err| refused("not a valid JSON Schema", &err))?;
    jsonschema::validator_for(schema).map_err(|err| refused("not a usable JSON Schema", &err))?;
    crate::schema_size::followed_schema_size(schema, crate::schema_size::MAX_FOLLOWED_SCHEMA_SIZE)
        .map(|_| ())
}

/// What kind of JSON value `value` is, for a message (`a string`, `an array`).
pub(crate) fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_schema_that_cannot_validate_anything_is_refused() {
        for (schema, says) in [
            (
                serde_json::json!({"type": "string", "pattern": "(unclosed"}),
                "regex",
            ),
            (serde_json::json!({"$ref": "#/$defs/nope"}), "nope"),
            (
                serde_json::json!({"$ref": "https://example.com/s.json"}),
                "example.com",
            ),
        ] {
            let message = super::check_schema(&schema).unwrap_err();
            assert!(
                message.starts_with("not a usable JSON Schema: "),
                "{message}"
            );
            assert!(message.contains(says), "{message}");
        }
        let local = serde_json::json!({
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/a"}},
            "$defs": {"a": {"type": "string", "pattern": "^[a-z]+$"}}
        });
        assert!(super::check_schema(&local).is_ok());
    }

    #[test]
    fn a_schema_that_expands_exponentially_is_refused() {
        // Valid and a few KB, but 2^40 subschemas once its `$ref`s are
        // followed: checking one wrong argument never ended.
        let chain = crate::schema_size::tests::any_of_chain(40);
        assert!(chain.to_string().len() < 8192);
        let message = super::check_schema(&chain).unwrap_err();
        assert!(
            message.starts_with("expands to more than 100000 subschemas through its `$ref`s"),
            "{message}"
        );
        assert!(super::check_schema(&crate::schema_size::tests::any_of_chain(8)).is_ok());
    }

    #[test]
    fn a_refused_schema_does_not_echo_a_secret_pair() {
        let schema = serde_json::json!({"type": "password=hunter2sch"});
        let message = super::check_schema(&schema).unwrap_err();
        assert!(!message.contains("hunter2sch"), "{message}");
        assert!(message.starts_with("not a valid JSON Schema"), "{message}");
    }

    #[test]
    fn registry_metadata_is_read_by_key_and_type() {
        let mut spec = ToolSpec::new("mcp:gh/x", "", ToolSource::Mcp);
        spec.set_meta(Meta::Server, "gh");
        spec.set_meta(Meta::ListIndex, 3);
        // Stored under the documented spelling, beside any user key.
        spec.source_metadata.insert("team".into(), json!("infra"));
        assert_eq!(spec.source_metadata["server"], json!("gh"));
        assert_eq!(spec.meta_str(Meta::Server), Some("gh"));
        assert_eq!(spec.meta(Meta::ListIndex), Some(&json!(3)));
        // A row may hold another type under a known key: it reads as absent.
        assert_eq!(spec.meta_str(Meta::ListIndex), None);
        assert_eq!(spec.remove_meta(Meta::Server), Some(json!("gh")));
        assert_eq!(spec.meta_str(Meta::Server), None);
        // The skill_md path is an Agent Skill's only.
        spec.set_meta(Meta::SkillMd, "/x/SKILL.md");
        assert_eq!(spec.skill_md(), None);
    }

    #[test]
    fn schemas_are_checked_against_the_meta_schema() {
        assert!(
            check_schema(&json!({"type": "object", "properties": {"q": {"type": "string"}}}))
                .is_ok()
        );
        let err = check_schema(&json!({"type": "objekt"})).unwrap_err();
        assert!(err.starts_with("not a valid JSON Schema"), "{err}");
        assert_eq!(
            check_schema(&json!("object")).unwrap_err(),
            "expected a JSON Schema object, got a string"
        );
    }

    #[test]
    fn tool_names_are_checked() {
        assert!(validate_tool_name("mcp:github/create_issue").is_ok());
        assert!(validate_tool_name("").is_err());
        assert!(validate_tool_name("a b").is_err());
        assert!(validate_tool_name(&"x".repeat(501)).is_err());
    }

    #[test]
    fn sources_parse_and_print() {
        for source in ToolSource::ALL {
            assert_eq!(source.as_str().parse::<ToolSource>().unwrap(), source);
        }
        assert!("web".parse::<ToolSource>().is_err());
    }
}
