//! Export names and the tool formats agents consume (OpenAI Chat Completions,
//! Anthropic Messages, MCP `tools/list`).
//!
//! Registry names (`builtin/read_file`, `mcp:github/create_issue`) are not valid
//! tool names for OpenAI or Anthropic (`^[a-zA-Z0-9_-]{1,64}$`). [`export_names`]
//! maps the names of one tool set to names that are, with one rule used
//! everywhere:
//!
//! - each name is made readable: `mcp:` dropped; `agent_skill:{path}` becomes
//!   `skill__{last path segment}`; `/` and `:` become `__`; any other
//!   character outside the pattern becomes `_` (`builtin/read_file` →
//!   `builtin__read_file`);
//! - the readable name is the export name when it fits (at most 64
//!   characters, not empty), no other name of the set reads the same, and it
//!   does not end like a hashed name (`_` and eight lowercase hex digits);
//! - otherwise (a collision or an overflow) the readable name is cut to 55
//!   characters and `_` plus the first eight hex digits of the SHA-256 of the
//!   full registry name is appended.
//!
//! The result depends on the set of names alone, not on their order: the same
//! tool set exports the same names. A readable name never ends like a hashed
//! one, so the two kinds never meet; two hashed names can only meet if they
//! share the cut prefix *and* the 32-bit hash ([`export_tools`] leaves such
//! entries out). The mapping back is carried in `_meta["io.cleveragents/name"]`
//! (MCP) and `export_name` (JSON).

use std::collections::HashMap;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::resolve::ResolvedToolEntry;
use crate::tool::{ToolSource, ToolSpec};

/// Longest export name (the OpenAI and Anthropic limit).
pub const EXPORT_NAME_MAX: usize = 64;

/// `_meta` key holding the registry name of an exported tool.
pub const META_NAME: &str = "io.cleveragents/name";

const HASH_HEX: usize = 8;

/// True when `name` matches `^[a-zA-Z0-9_-]{1,64}$`.
pub fn is_valid_export_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= EXPORT_NAME_MAX
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn looks_hashed(name: &str) -> bool {
    let Some(split) = name.len().checked_sub(HASH_HEX + 1) else {
        return false;
    };
    match name.as_bytes().split_at_checked(split) {
        Some((_, [b'_', hash @ ..])) => hash
            .iter()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b)),
        _ => false,
    }
}

/// The readable form of a registry name (see the module documentation),
/// cut once it is longer than any export name can be.
fn readable(registry_name: &str) -> String {
    let source: std::borrow::Cow<'_, str> = if let Some(rest) = registry_name.strip_prefix("mcp:") {
        rest.into()
    } else if let Some(path) = registry_name.strip_prefix("agent_skill:") {
        let last = path
            .trim_end_matches(['/', '\\'])
            .rsplit(['/', '\\'])
            .next()
            .unwrap_or_default();
        format!("skill__{last}").into()
    } else {
        registry_name.into()
    };
    let mut out = String::with_capacity(source.len().min(EXPORT_NAME_MAX + 2));
    for c in source.chars() {
        match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '_' | '-' => out.push(c),
            '/' | ':' => out.push_str("__"),
            _ => out.push('_'),
        }
        if out.len() > EXPORT_NAME_MAX {
            break;
        }
    }
    out
}

/// The hashed export name of `registry_name`: its readable form cut to 55
/// characters, `_`, and eight hex digits of its SHA-256.
fn hashed(registry_name: &str, readable: &str) -> String {
    let budget = EXPORT_NAME_MAX - HASH_HEX - 1;
    let base = readable
        .get(..budget.min(readable.len()))
        .unwrap_or(readable);
    let digest = Sha256::digest(registry_name.as_bytes());
    let hash = crate::text::hex(digest.get(..HASH_HEX / 2).unwrap_or(&digest));
    format!("{base}_{hash}")
}

/// The export names of one tool set's registry names, in the same order
/// (see the module documentation): readable where that is valid and unique
/// in the set, hashed on a collision or an overflow. A name given twice
/// gets the same export name both times.
pub fn export_names<S: AsRef<str>>(names: &[S]) -> Vec<String> {
    let readables: Vec<String> = names.iter().map(|name| readable(name.as_ref())).collect();
    // How many distinct registry names read the same.
    let mut readers: HashMap<&str, Vec<&str>> = HashMap::with_capacity(names.len());
    for (name, readable) in names.iter().zip(&readables) {
        let sharing = readers.entry(readable.as_str()).or_default();
        if !sharing.contains(&name.as_ref()) {
            sharing.push(name.as_ref());
        }
    }
    names
        .iter()
        .zip(&readables)
        .map(|(name, readable)| {
            let unique = readers.get(readable.as_str()).is_some_and(|s| s.len() == 1);
            if unique && is_valid_export_name(readable) && !looks_hashed(readable) {
                readable.clone()
            } else {
                hashed(name.as_ref(), readable)
            }
        })
        .collect()
}

/// The export names of `entries`, by registry name ([`export_names`] of all
/// of them).
pub fn entry_export_names(entries: &[ResolvedToolEntry]) -> HashMap<&str, String> {
    let names: Vec<&str> = entries.iter().map(|entry| entry.name.as_str()).collect();
    names.iter().copied().zip(export_names(&names)).collect()
}

/// A tool format agents consume.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExportFormat {
    /// Chat Completions `tools`: `[{"type":"function","function":{...}}]`.
    OpenAi,
    /// Messages API `tools`: `[{"name","description","input_schema"}]`.
    Anthropic,
    /// The MCP `tools/list` result the gateway serves (MCP and builtin
    /// tools).
    Mcp,
}

/// An entry that was not exported, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOut {
    /// Registry name of the entry.
    pub name: String,
    /// Why it was left out.
    pub reason: String,
}

/// The exported tools and the entries left out.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportedTools {
    /// One JSON value per exported tool, in entry order.
    pub tools: Vec<Value>,
    /// Entries that were not exported.
    pub left_out: Vec<LeftOut>,
    /// What was changed to fit the provider, or will not fit it (a cut
    /// description, too many tools), one line each.
    pub notes: Vec<String>,
    /// The Agent Skills of the entries, by registry name, left out of an
    /// OpenAI or Anthropic function array: an Agent Skill is instructions
    /// the model reads (the `<available_skills>` block of the system
    /// prompt), not a function anything runs.
    pub agent_skills: Vec<String>,
}

/// The capability flags and texts of an entry after its overrides.
#[derive(Debug, Clone, PartialEq)]
pub struct Effective<'a> {
    /// The catalogue spec.
    pub tool: &'a ToolSpec,
    /// Description (override or the tool's).
    pub description: String,
    /// Title override.
    pub title: Option<String>,
    /// The capability flags after overrides.
    pub flags: CapabilityFlags,
}

/// An entry's capability flags after its overrides: an override's value,
/// else its tool's own (none for a tool the registry does not know, whose
/// flags are then what its overrides say).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CapabilityFlags {
    /// `read_only`.
    pub read_only: Option<bool>,
    /// `writes`.
    pub writes: Option<bool>,
    /// `side_effects` (defaults to `writes`).
    pub side_effects: Option<bool>,
    /// `checkpointable`.
    pub checkpointable: Option<bool>,
    /// Whether an override sets `read_only`, `writes` or `side_effects`
    /// (else the flags are the tool's own, for an MCP tool those its
    /// server's annotations gave).
    pub overridden: bool,
}

impl CapabilityFlags {
    /// The flags of `entry` ([`CapabilityFlags`]).
    pub fn of(entry: &ResolvedToolEntry) -> Self {
        let tool = entry.tool.as_ref();
        let set = |key: &str| entry.overrides.get(key).and_then(Value::as_bool);
        let own = |flag: fn(&crate::ToolSpec) -> Option<bool>| tool.and_then(flag);
        let writes = set("writes").or(own(|t| t.writes));
        let makes_write = set("writes") == Some(true) || set("side_effects") == Some(true);
        Self {
            // A tool an override makes write (or have side effects) is not
            // read-only, unless an override says that too.
            read_only: match set("read_only") {
                Some(read_only) => Some(read_only),
                None if makes_write => Some(false),
                None => own(|t| t.read_only),
            },
            writes,
            // `side_effects` defaults to `writes`: a tool an override makes
            // write has side effects unless an override says otherwise (its
            // own value was only the default of its own `writes`, which the
            // override beat).
            side_effects: match set("side_effects") {
                Some(side_effects) => Some(side_effects),
                None if set("writes") == Some(true) => Some(true),
                None => own(|t| t.side_effects).or(writes),
            },
            checkpointable: set("checkpointable").or(own(|t| t.checkpointable)),
            overridden: ["read_only", "writes", "side_effects"]
                .iter()
                .any(|key| set(key).is_some()),
        }
    }

    /// Whether any capability flag is known.
    pub fn any_known(&self) -> bool {
        self.read_only.is_some()
            || self.writes.is_some()
            || self.side_effects.is_some()
            || self.checkpointable.is_some()
    }
}

/// Applies the `description`, `title` and capability-flag overrides of `entry`
/// (the title an MCP server gave its tool when no override sets one);
/// `None` when its tool is unknown.
pub fn effective(entry: &ResolvedToolEntry) -> Option<Effective<'_>> {
    let tool = entry.tool.as_ref()?;
    let text = |key: &str| entry.overrides.get(key).and_then(Value::as_str);
    Some(Effective {
        tool,
        description: text("description").map_or_else(|| tool.description.clone(), str::to_owned),
        // An override's, else the one the MCP server gave the tool (its
        // own `title`, or its annotations' `title`).
        title: text("title").map(str::to_owned).or_else(|| {
            tool.meta_str(crate::Meta::Title)
                .or_else(|| {
                    tool.meta(crate::Meta::Annotations)
                        .and_then(|a| a.get("title"))
                        .and_then(Value::as_str)
                })
                .map(str::to_owned)
        }),
        flags: CapabilityFlags::of(entry),
    })
}

/// MCP `annotations` from the capability flags:
/// `read_only` → `readOnlyHint`; `writes` or `side_effects` → `destructiveHint`
/// (`false` only when both are `false`); `title` → `title`. `None` when nothing is set.
/// An MCP server's own `destructiveHint` is kept while no override sets a
/// flag: the registry's flags cannot tell an additive update from a
/// destructive one, and would turn the server's `false` into `true`.
pub fn mcp_annotations(tool: &Effective<'_>) -> Option<Value> {
    let mut annotations = Map::new();
    if let Some(title) = &tool.title {
        annotations.insert("title".into(), json!(title));
    }
    let flags = &tool.flags;
    if let Some(read_only) = flags.read_only {
        annotations.insert("readOnlyHint".into(), json!(read_only));
    }
    let own = (!flags.overridden)
        .then(|| {
            tool.tool
                .meta(crate::Meta::Annotations)
                .and_then(|a| a.get("destructiveHint"))
                .and_then(Value::as_bool)
        })
        .flatten();
    let destructive = own.or(match (flags.writes, flags.side_effects) {
        (Some(true), _) | (_, Some(true)) => Some(true),
        (Some(false), Some(false)) | (None, Some(false)) | (Some(false), None) => Some(false),
        (None, None) => None,
    });
    if let Some(destructive) = destructive
        && flags.read_only != Some(true)
    {
        annotations.insert("destructiveHint".into(), json!(destructive));
    }
    (!annotations.is_empty()).then_some(Value::Object(annotations))
}

/// The input schema as an object schema: absent → `{"type":"object"}`, an object
/// schema without `type` gets `"type": "object"`; any other type is an error.
/// For a model API (`properties`) an object schema without `properties` gets
/// `"properties": {}`: OpenAI refuses parameters without them in some
/// cases, and they change nothing it accepts.
fn object_schema(schema: Option<&Value>, properties: bool) -> Result<Value, String> {
    let mut fields = match schema {
        None => Map::new(),
        Some(Value::Object(fields)) => fields.clone(),
        Some(_) => return Err("its input schema is not a JSON object".into()),
    };
    match fields.get("type") {
        None => {
            fields.insert("type".into(), json!("object"));
        }
        Some(Value::String(kind)) if kind == "object" => {}
        Some(other) => {
            return Err(format!(
                "its input schema has `type` {other}, expected `\"object\"`"
            ));
        }
    }
    if properties && !fields.contains_key("properties") {
        fields.insert("properties".into(), json!({}));
    }
    Ok(Value::Object(fields))
}

/// The longest function description OpenAI's API takes, in characters: a
/// longer one fails the whole request (`string_above_max_length`).
pub const OPENAI_MAX_DESCRIPTION: usize = 1024;

/// The most tools OpenAI's API takes in one request.
pub const OPENAI_MAX_TOOLS: usize = 128;

/// Why a provider's API refuses `schema` as a tool's parameters: OpenAI and
/// Anthropic take an object schema and refuse `oneOf`, `anyOf` and `allOf`
/// at its top level, and OpenAI also `enum`, `const` and `not` ("schema
/// must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/
/// 'const'/'not' at the top level"): one such tool fails the whole request;
/// and the `"type": "object"` added to a schema without `type` would change
/// what a combination with a non-object branch means.
fn provider_refuses(schema: &Value, format: ExportFormat) -> Option<String> {
    let (provider, refused): (&str, &[&str]) = match format {
        ExportFormat::Mcp => return None,
        ExportFormat::OpenAi => (
            "OpenAI",
            &["oneOf", "anyOf", "allOf", "enum", "const", "not"],
        ),
        ExportFormat::Anthropic => ("Anthropic", &["oneOf", "anyOf", "allOf"]),
    };
    refused
        .iter()
        .find(|key| schema.get(**key).is_some())
        .map(|key| {
            format!("its input schema has `{key}` at the top level, which {provider}'s API refuses")
        })
}

/// Why the gateway cannot call the MCP tool `tool`, if it cannot:
/// - it requires task augmentation (MCP 2025-11-25, its cached `execution`
///   has `taskSupport: "required"`): the gateway makes plain calls, which
///   such a server refuses;
/// - its input schema expands to more than
///   [`MAX_FOLLOWED_SCHEMA_SIZE`](crate::MAX_FOLLOWED_SCHEMA_SIZE) subschemas through
///   its `$ref`s (a refresh refuses such a tool; one cached before that
///   check would make every argument check that long).
pub fn gateway_cannot_call(tool: &ToolSpec) -> Option<String> {
    let task_support = tool
        .meta(crate::Meta::Execution)
        .and_then(|execution| execution.get("taskSupport"))
        .and_then(Value::as_str);
    if task_support == Some("required") {
        return Some(
            "it requires task augmentation (`execution.taskSupport` is `required`), \
             which the gateway does not support"
                .into(),
        );
    }
    let schema = tool.input_schema.as_ref()?;
    if !has_reference(schema) {
        return None;
    }
    crate::schema_size::followed_schema_size(schema, crate::schema_size::MAX_FOLLOWED_SCHEMA_SIZE)
        .err()
        .map(|message| format!("its input schema {message}"))
}

/// True when `value` holds a `$ref` (or `$dynamicRef`, `$recursiveRef`) key.
fn has_reference(value: &Value) -> bool {
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        match value {
            Value::Object(map) => {
                if map
                    .keys()
                    .any(|key| matches!(key.as_str(), "$ref" | "$dynamicRef" | "$recursiveRef"))
                {
                    return true;
                }
                pending.extend(map.values());
            }
            Value::Array(items) => pending.extend(items),
            _ => {}
        }
    }
    false
}

/// Exports `entries` in `format`, each under its name of [`export_names`]
/// over all of them. For OpenAI and Anthropic, Agent Skills are left out
/// and named in [`ExportedTools::agent_skills`]; OpenAI's functions are
/// `strict` when [`crate::strict::strict_parameters`] can write their
/// schema so. Entries whose tool is unknown, or whose input
/// schema is not an object schema (or, for OpenAI and Anthropic, combines
/// schemas at its top level), are left out; [`ExportFormat::Mcp`] also leaves
/// out everything the gateway cannot execute (all but MCP and builtin tools,
/// and the MCP tools [`gateway_cannot_call`] names). For
/// OpenAI a description over [`OPENAI_MAX_DESCRIPTION`] characters is cut
/// to it, and more than [`OPENAI_MAX_TOOLS`] tools are said in `notes`.
pub fn export_tools(entries: &[ResolvedToolEntry], format: ExportFormat) -> ExportedTools {
    let export_names = entry_export_names(entries);
    let mut tools = Vec::new();
    let mut left_out = Vec::new();
    let mut notes = Vec::new();
    let mut agent_skills = Vec::new();
    for entry in entries {
        let mut leave = |reason: String| {
            left_out.push(LeftOut {
                name: entry.name.clone(),
                reason,
            })
        };
        let Some(tool) = effective(entry) else {
            leave("its source is unknown (not in the tool catalogue)".into());
            continue;
        };
        // The gateway runs MCP tools (proxied), builtins and custom or
        // inline tools with a `run` (in process, when this user trusts it).
        if format == ExportFormat::Mcp
            && !matches!(tool.tool.source, ToolSource::Mcp | ToolSource::Builtin)
            && tool.tool.run().is_none()
        {
            leave(format!(
                "`{}` tools have no executor in the gateway{}",
                tool.tool.source,
                if tool.tool.source == ToolSource::Custom {
                    ": its definition has no `run`"
                } else {
                    ""
                }
            ));
            continue;
        }
        if format != ExportFormat::Mcp && tool.tool.source == ToolSource::AgentSkills {
            agent_skills.push(entry.name.clone());
            continue;
        }
        if format == ExportFormat::Mcp
            && let Some(reason) = gateway_cannot_call(tool.tool)
        {
            leave(reason);
            continue;
        }
        if let Some(reason) = tool
            .tool
            .input_schema
            .as_ref()
            .and_then(|schema| provider_refuses(schema, format))
        {
            leave(reason);
            continue;
        }
        let schema =
            match object_schema(tool.tool.input_schema.as_ref(), format != ExportFormat::Mcp) {
                Ok(schema) => schema,
                Err(reason) => {
                    leave(reason);
                    continue;
                }
            };
        let name = export_names
            .get(entry.name.as_str())
            .cloned()
            .unwrap_or_else(|| readable(&entry.name));
        let value = match format {
            ExportFormat::OpenAi => {
                let chars = tool.description.chars().count();
                let description = if chars > OPENAI_MAX_DESCRIPTION {
                    notes.push(format!(
                        "the description of `{}` is cut to the {OPENAI_MAX_DESCRIPTION} characters OpenAI takes (it has {chars})",
                        crate::text::shorten(&entry.name, crate::text::MAX_ECHO_BYTES)
                    ));
                    let mut cut: String = tool
                        .description
                        .chars()
                        .take(OPENAI_MAX_DESCRIPTION - 1)
                        .collect();
                    cut.push('…');
                    std::borrow::Cow::Owned(cut)
                } else {
                    std::borrow::Cow::Borrowed(tool.description.as_str())
                };
                // Strict when the schema can be written as strict mode
                // takes it without changing what it accepts.
                let (parameters, strict) = match crate::strict::strict_parameters(&schema) {
                    Some(strict) => (strict, true),
                    None => (schema, false),
                };
                json!({
                    "type": "function",
                    "function": {
                        "name": name,
                        "description": description,
                        "parameters": parameters,
                        "strict": strict,
                    },
                })
            }
            ExportFormat::Anthropic => {
                json!({"name": name, "description": tool.description, "input_schema": schema})
            }
            ExportFormat::Mcp => mcp_tool(entry, &tool, name.clone(), schema),
        };
        tools.push((name, entry.name.as_str(), value));
    }
    // A hashed name keeps 32 bits of its digest: two registry names that
    // share one can be found in a fraction of a second, and a model (or the
    // gateway) calling one would get the other. Every entry of a shared
    // name is left out rather than one served under the other's name.
    let mut by_name: HashMap<&str, Vec<&str>> = HashMap::new();
    for (name, registry_name, _) in &tools {
        by_name.entry(name).or_default().push(registry_name);
    }
    let shared: HashMap<String, Vec<&str>> = by_name
        .into_iter()
        .filter(|(_, sharing)| sharing.len() > 1)
        .map(|(name, sharing)| (name.to_owned(), sharing))
        .collect();
    let mut kept = Vec::with_capacity(tools.len());
    for (name, registry_name, value) in tools {
        let Some(sharing) = shared.get(&name) else {
            kept.push(value);
            continue;
        };
        let others: Vec<String> = sharing
            .iter()
            .filter(|other| **other != registry_name)
            .take(3)
            .map(|other| format!("`{}`", crate::text::shorten(other, 100)))
            .collect();
        left_out.push(LeftOut {
            name: registry_name.to_owned(),
            reason: format!(
                "its export name `{name}` is also that of {}: all of them are left out, so none is called for another",
                others.join(", ")
            ),
        });
    }
    if format == ExportFormat::OpenAi && kept.len() > OPENAI_MAX_TOOLS {
        notes.push(format!(
            "{} tools, more than the {OPENAI_MAX_TOOLS} OpenAI takes in one request",
            kept.len()
        ));
    }
    ExportedTools {
        tools: kept,
        left_out,
        notes,
        agent_skills,
    }
}

fn mcp_tool(entry: &ResolvedToolEntry, tool: &Effective<'_>, name: String, schema: Value) -> Value {
    let mut object = Map::new();
    object.insert("name".into(), json!(name));
    if let Some(title) = &tool.title {
        object.insert("title".into(), json!(title));
    }
    object.insert("description".into(), json!(tool.description));
    object.insert("inputSchema".into(), schema);
    if let Some(output) = &tool.tool.output_schema
        && output.get("type").and_then(Value::as_str) == Some("object")
    {
        object.insert("outputSchema".into(), output.clone());
    }
    if let Some(annotations) = mcp_annotations(tool) {
        object.insert("annotations".into(), annotations);
    }
    let mut meta = Map::new();
    meta.insert(META_NAME.into(), json!(entry.name));
    meta.insert("io.cleveragents/source".into(), json!(tool.tool.source));
    meta.insert(
        "io.cleveragents/source_skill".into(),
        json!(entry.source_skill),
    );
    meta.insert(
        "io.cleveragents/include_path".into(),
        json!(entry.include_path),
    );
    if let Some(checkpointable) = tool.flags.checkpointable {
        meta.insert(
            "io.cleveragents/checkpointable".into(),
            json!(checkpointable),
        );
    }
    // What the skill says of the tool beyond MCP's hints (`approval:
    // required`, `timeout_s`, `audit`): the gateway cannot ask a person, so
    // a client that can is told.
    if !entry.overrides.is_empty() {
        meta.insert(
            "io.cleveragents/overrides".into(),
            Value::Object(entry.overrides.clone()),
        );
    }
    object.insert("_meta".into(), Value::Object(meta));
    Value::Object(object)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readable_names_are_kept_unless_they_collide_or_overflow() {
        let names = [
            "deploy",
            "run-it_2",
            "mcp:github/create_issue",
            "builtin/read_file",
            "agent_skill:~/.cleveragents/agent_skills/pdf-processing",
        ];
        assert_eq!(
            export_names(&names),
            [
                "deploy",
                "run-it_2",
                "github__create_issue",
                "builtin__read_file",
                "skill__pdf-processing"
            ]
        );
        // Two names that read the same: both hashed, each its own way.
        let both = export_names(&["builtin/read_file", "builtin:read_file"]);
        assert_ne!(both[0], both[1]);
        for name in &both {
            assert!(name.starts_with("builtin__read_file_"), "{name}");
            assert_eq!(name.len(), "builtin__read_file_".len() + 8);
        }
        // The same set in another order: the same names.
        let reversed = export_names(&["builtin:read_file", "builtin/read_file"]);
        assert_eq!(reversed, [both[1].clone(), both[0].clone()]);
        // A name given twice is one name.
        assert_eq!(export_names(&["a/b", "a/b"]), ["a__b", "a__b"]);
    }

    #[test]
    fn names_that_look_hashed_are_hashed_again() {
        let github = export_names(&["mcp:github/create_issue", "mcp:github:create_issue"]);
        let again = export_names(&[github[0].as_str()]);
        assert_ne!(again[0], github[0]);
        assert!(is_valid_export_name(&again[0]));
    }

    #[test]
    fn entries_whose_export_names_collide_are_all_left_out() {
        use crate::{Skill, SkillItem, SkillMap, SkillName, SkillResolver, ToolRegistry};
        // Same first 55 characters, and the same first 32 bits of SHA-256
        // (found by a birthday search over `t0`, `t1`, …).
        let prefix = "a".repeat(60);
        let names = [
            format!("{prefix}/t52916"),
            format!("{prefix}/t74784"),
            "local/fine".to_owned(),
        ];
        let exported = export_names(&names);
        assert_eq!(exported[0], exported[1]);
        let mut tools = ToolRegistry::new();
        let mut skill = Skill::new(SkillName::new("x/root").unwrap());
        for name in &names {
            tools
                .register(ToolSpec::new(name.clone(), "d", ToolSource::Custom), false)
                .unwrap();
            skill.items.push(SkillItem::ToolRef {
                name: name.as_str().into(),
            });
        }
        let mut skills = SkillMap::default();
        skills.insert(skill.name.clone(), skill.clone());
        let resolution = SkillResolver::new(&skills, &tools)
            .resolve(&skill.name)
            .unwrap();
        for format in [ExportFormat::OpenAi, ExportFormat::Anthropic] {
            let exported = export_tools(&resolution.entries, format);
            assert_eq!(exported.tools.len(), 1, "{:?}", exported.tools);
            let left: Vec<&str> = exported.left_out.iter().map(|l| l.name.as_str()).collect();
            assert_eq!(left, [names[0].as_str(), names[1].as_str()]);
            assert!(
                exported.left_out[0]
                    .reason
                    .contains(&format!("`{}`", names[1])),
                "{}",
                exported.left_out[0].reason
            );
        }
    }

    /// Resolves one skill naming `specs` (all registered) and returns its entries.
    fn entries_of(specs: Vec<ToolSpec>) -> Vec<ResolvedToolEntry> {
        use crate::{Skill, SkillItem, SkillMap, SkillName, SkillResolver, ToolRegistry};
        let mut tools = ToolRegistry::new();
        let mut skill = Skill::new(SkillName::new("x/root").unwrap());
        for spec in specs {
            skill.items.push(SkillItem::ToolRef {
                name: spec.name.as_str().into(),
            });
            tools.register(spec, false).unwrap();
        }
        let mut skills = SkillMap::default();
        skills.insert(skill.name.clone(), skill.clone());
        SkillResolver::new(&skills, &tools)
            .resolve(&skill.name)
            .unwrap()
            .entries
    }

    #[test]
    fn the_gateway_leaves_out_mcp_tools_it_cannot_call() {
        use crate::{Meta, Skill, SkillItem, SkillMap, SkillName, SkillResolver, ToolRegistry};
        let mcp = |name: &str| {
            let mut spec = ToolSpec::new(format!("mcp:s/{name}"), "d", ToolSource::Mcp);
            spec.input_schema = Some(json!({"type": "object"}));
            spec
        };
        let mut task = mcp("task");
        task.set_meta(Meta::Execution, json!({"taskSupport": "required"}));
        let mut optional = mcp("optional");
        optional.set_meta(Meta::Execution, json!({"taskSupport": "optional"}));
        // Cached before refreshes checked the expansion: registered as such.
        let mut chain = mcp("chain");
        chain.input_schema = Some(crate::schema_size::tests::any_of_chain(40));
        let mut tools = ToolRegistry::new();
        let mut skill = Skill::new(SkillName::new("x/root").unwrap());
        for spec in [task, optional, chain, mcp("plain")] {
            skill.items.push(SkillItem::ToolRef {
                name: spec.name.as_str().into(),
            });
            tools.register_known_valid(spec).unwrap();
        }
        let mut skills = SkillMap::default();
        skills.insert(skill.name.clone(), skill.clone());
        let entries = SkillResolver::new(&skills, &tools)
            .resolve(&skill.name)
            .unwrap()
            .entries;
        let exported = export_tools(&entries, ExportFormat::Mcp);
        let served: Vec<&str> = exported
            .tools
            .iter()
            .map(|tool| tool["_meta"][META_NAME].as_str().unwrap())
            .collect();
        assert_eq!(served, ["mcp:s/optional", "mcp:s/plain"]);
        let left: Vec<(&str, &str)> = exported
            .left_out
            .iter()
            .map(|l| (l.name.as_str(), l.reason.as_str()))
            .collect();
        assert_eq!(left[0].0, "mcp:s/task");
        assert!(
            left[0].1.contains("requires task augmentation"),
            "{}",
            left[0].1
        );
        assert_eq!(left[1].0, "mcp:s/chain");
        assert!(
            left[1]
                .1
                .starts_with("its input schema expands to more than 100000 subschemas"),
            "{}",
            left[1].1
        );
        // A model API export is only a schema: nothing to call there.
        assert_eq!(
            export_tools(&entries, ExportFormat::Anthropic).tools.len(),
            4
        );
    }

    #[test]
    fn what_a_provider_refuses_is_left_out_cut_or_said() {
        let mut combined = ToolSpec::new("custom/oneof", "d", ToolSource::Custom);
        combined.input_schema = Some(json!({"oneOf": [{"type": "object"}, {"type": "string"}]}));
        let mut wordy = ToolSpec::new("custom/wordy", "w".repeat(5000), ToolSource::Custom);
        wordy.input_schema = Some(json!({"type": "object"}));
        let entries = entries_of(vec![combined, wordy]);
        for format in [ExportFormat::OpenAi, ExportFormat::Anthropic] {
            let exported = export_tools(&entries, format);
            assert_eq!(exported.tools.len(), 1);
            assert_eq!(exported.left_out[0].name, "custom/oneof");
            assert!(
                exported.left_out[0]
                    .reason
                    .contains("`oneOf` at the top level")
            );
        }
        // OpenAI also refuses `enum`, `const` and `not` at the top level;
        // Anthropic takes them.
        for (key, value) in [
            ("enum", json!([{"a": "x"}])),
            ("const", json!({"a": "x"})),
            ("not", json!({"required": ["a"]})),
        ] {
            let mut tool = ToolSpec::new(format!("custom/{key}"), "d", ToolSource::Custom);
            tool.input_schema = Some(json!({"type": "object", key: value}));
            let entries = entries_of(vec![tool]);
            let openai = export_tools(&entries, ExportFormat::OpenAi);
            assert!(openai.tools.is_empty(), "{key}");
            assert!(
                openai.left_out[0].reason.contains(&format!(
                    "`{key}` at the top level, which OpenAI's API refuses"
                )),
                "{:?}",
                openai.left_out
            );
            assert_eq!(
                export_tools(&entries, ExportFormat::Anthropic).tools.len(),
                1
            );
        }
        let openai = export_tools(&entries, ExportFormat::OpenAi);
        let description = openai.tools[0]["function"]["description"].as_str().unwrap();
        assert_eq!(description.chars().count(), OPENAI_MAX_DESCRIPTION);
        assert!(
            openai.notes[0].contains("cut to the 1024 characters"),
            "{:?}",
            openai.notes
        );
        // Anthropic takes the whole description; MCP clients the combination.
        let anthropic = export_tools(&entries, ExportFormat::Anthropic);
        assert_eq!(
            anthropic.tools[0]["description"].as_str().unwrap().len(),
            5000
        );
        assert!(anthropic.notes.is_empty());
        let many: Vec<ToolSpec> = (0..130)
            .map(|i| ToolSpec::new(format!("custom/t{i}"), "d", ToolSource::Custom))
            .collect();
        let openai = export_tools(&entries_of(many), ExportFormat::OpenAi);
        assert_eq!(openai.tools.len(), 130);
        assert_eq!(
            openai.notes,
            ["130 tools, more than the 128 OpenAI takes in one request"]
        );
    }

    #[test]
    fn an_mcp_tools_own_title_goes_out_unless_overridden() {
        let mut titled = ToolSpec::new("mcp:s/a", "d", ToolSource::Mcp);
        titled.set_meta(crate::Meta::Title, "Server title".to_owned());
        let mut annotated = ToolSpec::new("mcp:s/b", "d", ToolSource::Mcp);
        annotated
            .source_metadata
            .insert("annotations".into(), json!({"title": "From annotations"}));
        let exported = export_tools(&entries_of(vec![titled, annotated]), ExportFormat::Mcp);
        assert_eq!(exported.tools[0]["title"], "Server title");
        assert_eq!(exported.tools[0]["annotations"]["title"], "Server title");
        assert_eq!(exported.tools[1]["title"], "From annotations");
    }

    #[test]
    fn agent_skills_are_not_functions() {
        let skill = ToolSpec::new("agent_skills/pdf", "Read PDFs", ToolSource::AgentSkills);
        let tool = ToolSpec::new("custom/t", "d", ToolSource::Custom);
        let entries = entries_of(vec![skill, tool]);
        for format in [ExportFormat::OpenAi, ExportFormat::Anthropic] {
            let exported = export_tools(&entries, format);
            assert_eq!(exported.tools.len(), 1);
            assert_eq!(exported.agent_skills, ["agent_skills/pdf"]);
            assert!(exported.left_out.is_empty(), "{:?}", exported.left_out);
        }
        // Every function has `properties`, and OpenAI's are strict when they can be.
        let openai = export_tools(&entries, ExportFormat::OpenAi);
        assert_eq!(
            openai.tools[0]["function"]["parameters"],
            json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
        );
        assert_eq!(openai.tools[0]["function"]["strict"], true);
    }

    #[test]
    fn long_names_are_cut_and_hashed() {
        let long = "a".repeat(64);
        assert_eq!(export_names(&[long.as_str()]), [long.as_str()]);
        let longer = "a".repeat(65);
        let exported = export_names(&[longer.as_str(), "a".repeat(66).as_str()]);
        assert_eq!(exported[0].len(), 64);
        assert_ne!(exported[0], exported[1]);
        let wide = "é".repeat(200);
        assert!(is_valid_export_name(&export_names(&[wide])[0]));
    }
}
