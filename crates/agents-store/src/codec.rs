//! Row encoding shared by both backends: how a [`Skill`] and a [`ToolSpec`]
//! map onto columns, and the store's timestamps. Keeping this in one place is
//! what makes the two backends store byte-identical rows.

use std::collections::{HashMap, HashSet};

use agents_core::{
    AgentSource, Include, IncludeOverrides, InlineTool, ItemKind, McpSource, Meta, Overrides,
    Skill, SkillItem, SkillName, ToolSource, ToolSpec, ValueMap,
};
use serde::{Deserialize, Serialize};
use time::format_description::BorrowedFormatItem;
use time::macros::format_description;
use time::{Duration, OffsetDateTime, PrimitiveDateTime};

use crate::error::StoreError;

const TIMESTAMP: &[BorrowedFormatItem<'static>] =
    format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:6]Z");

const MAX_VERSION: usize = 50;
const MAX_ITEM_NAME: usize = 500;
const MAX_TOOL_NAME: usize = 500;
const MAX_ORIGIN: usize = 255;
/// The longest `registry_meta` key, in characters (both schemas).
pub const MAX_META_KEY: usize = 255;

/// The current time as stored: ISO-8601 UTC with microseconds.
pub(crate) fn now() -> OffsetDateTime {
    let now = OffsetDateTime::now_utc();
    // Stored values have microsecond precision; truncating here keeps the
    // in-memory value equal to what a later read parses back.
    now.replace_nanosecond(now.nanosecond() / 1_000 * 1_000)
        .unwrap_or(now)
}

pub(crate) fn format_timestamp(at: OffsetDateTime) -> String {
    // Formatting a UTC date with a four-digit year cannot fail; fall back to
    // RFC 3339-ish debug text rather than panicking if it ever did.
    at.format(TIMESTAMP).unwrap_or_else(|_| at.to_string())
}

fn parse_timestamp(raw: &str) -> Option<OffsetDateTime> {
    PrimitiveDateTime::parse(raw, TIMESTAMP)
        .ok()
        .map(PrimitiveDateTime::assume_utc)
}

/// The `updated_at` of a write at `now` to a skill last written at
/// `previous`: strictly later than `previous`, so it works as a token.
pub(crate) fn next_updated_at(
    now: OffsetDateTime,
    previous: &str,
    skill: &str,
) -> Result<String, StoreError> {
    let previous = parse_timestamp(previous).ok_or_else(|| {
        StoreError::corrupt(
            "skills",
            skill,
            format!("`updated_at` is `{previous}`, expected an ISO-8601 UTC timestamp like `2026-12-02T14:03:00.123456Z`"),
        )
    })?;
    let next = if now > previous {
        now
    } else {
        previous + Duration::microseconds(1)
    };
    Ok(format_timestamp(next))
}

/// `skills.metadata_json`.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct MetadataJson {
    #[serde(default)]
    metadata: ValueMap,
    #[serde(default)]
    overrides: Overrides,
}

/// `skill_items.item_config` of an include.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct IncludeConfig {
    #[serde(default)]
    overrides: IncludeOverrides,
}

/// A skill's columns, ready to bind.
pub(crate) struct SkillColumns {
    pub name: String,
    pub namespace: String,
    pub short_name: String,
    pub description: Option<String>,
    pub version: Option<String>,
    pub metadata_json: String,
    pub items: Vec<ItemColumns>,
}

/// One `skill_items` row without id, skill name and timestamp.
pub(crate) struct ItemColumns {
    pub item_type: &'static str,
    pub item_name: String,
    pub item_config: Option<String>,
    pub item_order: i32,
}

/// A `skills` row as read; fields in the order of the engine's `SKILL_COLUMNS`.
#[derive(Deserialize)]
pub(crate) struct SkillRow {
    pub name: String,
    pub description: Option<String>,
    pub version: Option<String>,
    pub metadata_json: String,
    pub created_at: String,
    pub updated_at: String,
}

/// A `skill_items` row as read; fields in the order of the engine's `ITEM_COLUMNS`.
#[derive(Deserialize)]
pub(crate) struct ItemRow {
    pub skill_name: String,
    pub item_type: String,
    pub item_name: String,
    pub item_config: Option<String>,
    pub item_order: i64,
}

fn json<T: Serialize>(value: &T, table: &'static str, key: &str) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|err| StoreError::InvalidValue {
        table,
        column: if table == "skills" {
            "metadata_json"
        } else {
            "item_config"
        },
        key: key.to_owned(),
        reason: format!("cannot be encoded as JSON: {err}"),
    })
}

fn check_text(
    table: &'static str,
    column: &'static str,
    key: &str,
    value: &str,
    max: Option<usize>,
) -> Result<(), StoreError> {
    let invalid = |reason: String| StoreError::InvalidValue {
        table,
        column,
        key: key.to_owned(),
        reason,
    };
    if let Some(max) = max
        && value.chars().count() > max
    {
        return Err(invalid(format!("is longer than {max} characters")));
    }
    // PostgreSQL text cannot hold NUL; refusing it everywhere keeps the
    // backends interchangeable.
    if value.contains('\0') {
        return Err(invalid("must not contain a NUL character".into()));
    }
    Ok(())
}

pub(crate) fn encode_skill(skill: &Skill) -> Result<SkillColumns, StoreError> {
    let name = skill.name.as_str();
    if let Some(description) = &skill.description {
        check_text("skills", "description", name, description, None)?;
    }
    if let Some(version) = &skill.version {
        check_text("skills", "version", name, version, Some(MAX_VERSION))?;
    }
    let metadata_json = json(
        &MetadataJson {
            metadata: skill.metadata.clone(),
            overrides: skill.overrides.clone(),
        },
        "skills",
        name,
    )?;
    let mut items = Vec::with_capacity(skill.items.len());
    for (position, (item, item_name)) in skill.items.iter().zip(skill.item_names()).enumerate() {
        check_text(
            "skill_items",
            "item_name",
            name,
            &item_name,
            Some(MAX_ITEM_NAME),
        )?;
        let item_config = match item {
            SkillItem::ToolRef { .. } | SkillItem::AgentSource(_) => None,
            SkillItem::Include(include) if include.overrides.is_empty() => None,
            SkillItem::Include(include) => Some(json(
                &IncludeConfig {
                    overrides: include.overrides.clone(),
                },
                "skill_items",
                name,
            )?),
            SkillItem::InlineTool(tool) => Some(json(tool, "skill_items", name)?),
            SkillItem::McpSource(source) => Some(json(source, "skill_items", name)?),
        };
        let item_order = i32::try_from(position).map_err(|_| StoreError::InvalidValue {
            table: "skill_items",
            column: "item_order",
            key: name.to_owned(),
            reason: "a skill can have at most 2147483647 items".into(),
        })?;
        items.push(ItemColumns {
            item_type: item.kind().as_str(),
            item_name,
            item_config,
            item_order,
        });
    }
    Ok(SkillColumns {
        name: name.to_owned(),
        namespace: skill.namespace().to_owned(),
        short_name: skill.short_name().to_owned(),
        description: skill.description.clone(),
        version: skill.version.clone(),
        metadata_json,
        items,
    })
}

fn decode_item(skill: &str, row: ItemRow) -> Result<SkillItem, StoreError> {
    // Only an error names the row: not built for every item read.
    let key = || format!("{skill}#{}", row.item_order);
    let kind = ItemKind::parse(&row.item_type).ok_or_else(|| {
        StoreError::corrupt(
            "skill_items",
            &key(),
            format!(
                "unknown `item_type` `{}`, expected `tool_ref`, `include`, `inline_tool`, `mcp_source` or `agent_source`",
                row.item_type
            ),
        )
    })?;
    let config = |required: bool| -> Result<Option<String>, StoreError> {
        match (&row.item_config, required) {
            (None, true) => Err(StoreError::corrupt(
                "skill_items",
                &key(),
                format!("`{}` item has no `item_config`", row.item_type),
            )),
            (config, _) => Ok(config.clone()),
        }
    };
    let parse_err = |err: serde_json::Error| {
        StoreError::corrupt(
            "skill_items",
            &key(),
            format!("`item_config` does not decode: {err}"),
        )
    };
    // Read back as strictly as written (`Skill::validate`): a row written
    // behind the registry's back must not carry a name that prints as lines
    // of its own, or as words of a command line a user is told to run.
    Ok(match kind {
        ItemKind::ToolRef => {
            if let Err(err) = agents_core::validate_tool_name(&row.item_name) {
                return Err(StoreError::corrupt(
                    "skill_items",
                    &key(),
                    format!("`item_name`: {}", err.message),
                ));
            }
            SkillItem::ToolRef {
                name: row.item_name.into(),
            }
        }
        ItemKind::AgentSource => {
            if row.item_name.trim().is_empty() {
                return Err(StoreError::corrupt(
                    "skill_items",
                    &key(),
                    "`item_name`: an `agent_source` path must not be empty",
                ));
            }
            SkillItem::AgentSource(AgentSource {
                path: row.item_name,
            })
        }
        ItemKind::Include => {
            let skill = SkillName::new(&row.item_name).map_err(|err| {
                StoreError::corrupt("skill_items", &key(), format!("`item_name`: {err}"))
            })?;
            let overrides = match config(false)? {
                Some(raw) => {
                    serde_json::from_str::<IncludeConfig>(&raw)
                        .map_err(parse_err)?
                        .overrides
                }
                None => IncludeOverrides::new(),
            };
            SkillItem::Include(Include { skill, overrides })
        }
        ItemKind::InlineTool => {
            let raw = config(true)?.unwrap_or_default();
            SkillItem::InlineTool(serde_json::from_str::<Box<InlineTool>>(&raw).map_err(parse_err)?)
        }
        ItemKind::McpSource => {
            let raw = config(true)?.unwrap_or_default();
            let source = serde_json::from_str::<Box<McpSource>>(&raw).map_err(parse_err)?;
            let problems: Vec<String> = source
                .problems()
                .into_iter()
                .map(|(field, message)| match field {
                    "" => message,
                    field => format!("`{field}`: {message}"),
                })
                .collect();
            if !problems.is_empty() {
                return Err(StoreError::corrupt(
                    "skill_items",
                    &key(),
                    format!("`item_config`: {}", problems.join("; ")),
                ));
            }
            SkillItem::McpSource(source)
        }
    })
}

/// Rebuilds a skill from its row and its item rows (in any order).
pub(crate) fn decode_skill(row: SkillRow, mut items: Vec<ItemRow>) -> Result<Skill, StoreError> {
    let name = SkillName::new(&row.name)
        .map_err(|err| StoreError::corrupt("skills", &row.name, format!("`name`: {err}")))?;
    let meta: MetadataJson = serde_json::from_str(&row.metadata_json).map_err(|err| {
        StoreError::corrupt(
            "skills",
            &row.name,
            format!("`metadata_json` does not decode: {err}"),
        )
    })?;
    items.sort_by_key(|item| item.item_order);
    let mut skill = Skill::new(name);
    skill.description = row.description;
    skill.version = row.version;
    skill.metadata = meta.metadata;
    skill.overrides = meta.overrides;
    skill.created_at = Some(row.created_at);
    skill.updated_at = Some(row.updated_at);
    skill.items = items
        .into_iter()
        .map(|item| decode_item(&row.name, item))
        .collect::<Result<_, _>>()?;
    // A skill names each MCP server once, as when written: two definitions
    // of one name in one skill would be two rows `mcp trust` cannot tell
    // apart by where they are defined.
    let servers = skill.items.iter().filter_map(|item| match item {
        SkillItem::McpSource(source) => Some(source.server.as_str()),
        _ => None,
    });
    if let Some(twice) = first_repeat(servers) {
        return Err(StoreError::corrupt(
            "skills",
            &row.name,
            format!("two `mcp_source` items name the server `{twice}`"),
        ));
    }
    Ok(skill)
}

/// Rows from a closure aggregate of `table`: a JSON array of arrays whose
/// columns are in the order of `T`'s fields (serde reads a struct from a
/// sequence in field order).
pub(crate) fn rows_from_json<T: serde::de::DeserializeOwned>(
    text: &str,
    table: &'static str,
) -> Result<Vec<T>, StoreError> {
    serde_json::from_str(text).map_err(|err| {
        StoreError::corrupt(
            table,
            "(closure)",
            format!("cannot decode the rows read: {err}"),
        )
    })
}

/// Pairs skill rows with their item rows; keeps the order of `rows`.
pub(crate) fn decode_skills(
    rows: Vec<SkillRow>,
    items: Vec<ItemRow>,
) -> Result<Vec<Skill>, StoreError> {
    decode_each(rows, items).collect()
}

/// Each skill row with its items, decoded, in row order: one row that does
/// not decode is one `Err` among the others.
pub(crate) fn decode_each(
    rows: Vec<SkillRow>,
    items: Vec<ItemRow>,
) -> impl Iterator<Item = Result<Skill, StoreError>> {
    let mut by_skill: HashMap<String, Vec<ItemRow>> = HashMap::with_capacity(rows.len());
    for mut item in items {
        // The key takes the row's name: `decode_item` does not read it again.
        by_skill
            .entry(std::mem::take(&mut item.skill_name))
            .or_default()
            .push(item);
    }
    rows.into_iter().map(move |row| {
        let items = by_skill.remove(&row.name).unwrap_or_default();
        decode_skill(row, items)
    })
}

/// The first of `names` that occurs twice.
pub(crate) fn first_repeat<'a, T: Eq + std::hash::Hash + ?Sized>(
    names: impl IntoIterator<Item = &'a T>,
) -> Option<&'a T> {
    let mut seen = HashSet::new();
    names.into_iter().find(|name| !seen.insert(*name))
}

/// A tool's columns, ready to bind.
pub(crate) struct ToolColumns {
    pub name: String,
    pub source: &'static str,
    pub origin: Option<String>,
    pub spec_json: String,
}

/// The `tools.origin` of a spec, the group a refresh replaces as a whole: for
/// an MCP tool the launch-spec digest that fetched it (`spec_digest`; the bare
/// `server` for rows written before digests), for a discovered Agent Skill the
/// discovery scope (`scope`) of the user and machine that found it.
pub(crate) fn tool_origin(tool: &ToolSpec) -> Option<String> {
    let keys: &[Meta] = match tool.source {
        ToolSource::Mcp => &[Meta::SpecDigest, Meta::Server],
        ToolSource::AgentSkills => &[Meta::Scope],
        ToolSource::Builtin | ToolSource::Custom => return None,
    };
    keys.iter()
        .find_map(|key| tool.meta(*key))
        .map(|value| match value {
            serde_json::Value::String(text) => text.clone(),
            other => other.to_string(),
        })
}

pub(crate) fn encode_tool(tool: &ToolSpec) -> Result<ToolColumns, StoreError> {
    check_text("tools", "name", &tool.name, &tool.name, Some(MAX_TOOL_NAME))?;
    let origin = tool_origin(tool);
    if let Some(origin) = &origin {
        check_text("tools", "origin", &tool.name, origin, Some(MAX_ORIGIN))?;
    }
    let spec_json = serde_json::to_string(tool).map_err(|err| StoreError::InvalidValue {
        table: "tools",
        column: "spec_json",
        key: tool.name.clone(),
        reason: format!("cannot be encoded as JSON: {err}"),
    })?;
    Ok(ToolColumns {
        name: tool.name.clone(),
        source: tool.source.as_str(),
        origin,
        spec_json,
    })
}

pub(crate) fn decode_tool(name: &str, spec_json: &str) -> Result<ToolSpec, StoreError> {
    let tool: ToolSpec = serde_json::from_str(spec_json).map_err(|err| {
        StoreError::corrupt("tools", name, format!("`spec_json` does not decode: {err}"))
    })?;
    if tool.name != name {
        return Err(StoreError::corrupt(
            "tools",
            name,
            format!(
                "`spec_json` names the tool `{}`",
                agents_core::text::shorten(&tool.name, agents_core::text::MAX_ECHO_BYTES)
            ),
        ));
    }
    // Every writer checks a catalogue name (`tool add`, an MCP refresh,
    // discovery); a row written around them is read as strictly.
    if let Err(err) = agents_core::validate_tool_name(name) {
        return Err(StoreError::corrupt(
            "tools",
            name,
            format!("`name`: {}", err.message),
        ));
    }
    // A cached MCP tool is shown as `mcp:{server}/{tool}` from these two.
    if tool.source == ToolSource::Mcp {
        let server = tool.meta_str(Meta::Server);
        if let Some(Err(message)) = server.map(agents_core::validate_server_name) {
            return Err(StoreError::corrupt(
                "tools",
                name,
                format!("`source_metadata.server`: {message}"),
            ));
        }
        if let (Some(server), Some(own)) = (server, tool.meta_str(Meta::Tool))
            && let Err(err) = agents_core::validate_tool_name(&format!("mcp:{server}/{own}"))
        {
            return Err(StoreError::corrupt(
                "tools",
                name,
                format!("`source_metadata.tool`: {}", err.message),
            ));
        }
    }
    Ok(tool)
}

pub(crate) fn check_meta(key: &str, value: &str) -> Result<(), StoreError> {
    check_text("registry_meta", "key", key, key, Some(MAX_META_KEY))?;
    check_text("registry_meta", "value", key, value, None)
}

/// Keeps the last of several same-named tools, in first-seen order.
pub(crate) fn last_wins(tools: &[ToolSpec]) -> Vec<&ToolSpec> {
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut out: Vec<&ToolSpec> = Vec::with_capacity(tools.len());
    for tool in tools {
        match index.get(tool.name.as_str()) {
            Some(&at) => {
                if let Some(slot) = out.get_mut(at) {
                    *slot = tool;
                }
            }
            None => {
                index.insert(&tool.name, out.len());
                out.push(tool);
            }
        }
    }
    out
}

/// Orders fetched tools like the requested `names` (duplicates once).
pub(crate) fn in_request_order(names: &[String], tools: Vec<ToolSpec>) -> Vec<ToolSpec> {
    let mut by_name: HashMap<String, ToolSpec> = tools
        .into_iter()
        .map(|tool| (tool.name.clone(), tool))
        .collect();
    names
        .iter()
        .filter_map(|name| by_name.remove(name))
        .collect()
}

/// A JSON array of strings, for SQLite's `json_each(?)`.
pub(crate) fn json_array<'a>(values: impl IntoIterator<Item = &'a str>) -> String {
    serde_json::Value::Array(
        values
            .into_iter()
            .map(|value| serde_json::Value::String(value.to_owned()))
            .collect(),
    )
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn timestamps_have_microseconds_and_strictly_increase() {
        let at = OffsetDateTime::from_unix_timestamp_nanos(1_796_220_180_123_456_000).unwrap();
        let text = format_timestamp(at);
        assert_eq!(text.len(), 27);
        assert!(text.ends_with(".123456Z"), "{text}");
        assert_eq!(parse_timestamp(&text), Some(at));
        let later = next_updated_at(at, &text, "a/b").unwrap();
        assert!(later > text, "{later} <= {text}");
        assert!(later.ends_with(".123457Z"), "{later}");
        let future = format_timestamp(at + Duration::hours(1));
        assert!(next_updated_at(at, &future, "a/b").unwrap() > future);
        let much_later = next_updated_at(at + Duration::hours(2), &text, "a/b").unwrap();
        assert_eq!(much_later, format_timestamp(at + Duration::hours(2)));
        let err = next_updated_at(at, "yesterday", "a/b").unwrap_err();
        assert!(
            matches!(
                err,
                StoreError::Corrupt {
                    table: "skills",
                    ..
                }
            ),
            "{err}"
        );
        assert_eq!(now().nanosecond() % 1_000, 0);
    }

    fn row(items: &[(&str, &str, Option<&str>)]) -> (SkillRow, Vec<ItemRow>) {
        let skill = SkillRow {
            name: "a/b".into(),
            description: None,
            version: None,
            metadata_json: "{}".into(),
            created_at: "c".into(),
            updated_at: "u".into(),
        };
        let items = items
            .iter()
            .enumerate()
            .map(|(order, (kind, name, config))| ItemRow {
                skill_name: "a/b".into(),
                item_type: (*kind).into(),
                item_name: (*name).into(),
                item_config: config.map(Into::into),
                item_order: order as i64,
            })
            .collect();
        (skill, items)
    }

    #[test]
    fn undecodable_rows_are_corrupt_not_panics() {
        for (items, needle) in [
            (vec![("gadget", "x", None)], "unknown `item_type` `gadget`"),
            (vec![("include", "not a name", None)], "`item_name`"),
            (
                vec![("include", "a/c", Some("[1]"))],
                "`item_config` does not decode",
            ),
            (
                vec![("inline_tool", "a/b/_anon_0", None)],
                "has no `item_config`",
            ),
            (
                vec![("mcp_source", "srv", Some("{\"server\": 5}"))],
                "`item_config` does not decode",
            ),
        ] {
            let (skill, items) = row(&items);
            let err = decode_skill(skill, items).unwrap_err();
            assert!(
                matches!(
                    err,
                    StoreError::Corrupt {
                        table: "skill_items",
                        ..
                    }
                ),
                "{err}"
            );
            assert!(err.to_string().contains(needle), "{err}");
        }
        let (mut skill, _) = row(&[]);
        skill.metadata_json = "{\"metadata\": 3}".into();
        let err = decode_skill(skill, vec![]).unwrap_err();
        assert!(
            err.to_string().contains("`metadata_json` does not decode"),
            "{err}"
        );
        let err = decode_tool("x/y", "{\"name\": \"x/z\", \"source\": \"custom\"}").unwrap_err();
        assert!(err.to_string().contains("names the tool `x/z`"), "{err}");
        assert!(decode_tool("x/y", "nope").is_err());
    }

    /// A shared database is someone else's data: a row that quotes a huge
    /// value where serde expected another type, under a huge key, still
    /// makes an error of a few KiB that says what was expected.
    #[test]
    fn a_corrupt_row_makes_a_short_error_however_large_it_is() {
        let huge = "A".repeat(1 << 20);
        let spec = "{\"name\": \"x/y\", \"source\": \"custom\", \"description\": []}";
        let err = decode_tool(&format!("x/{huge}"), spec)
            .unwrap_err()
            .to_string();
        assert!(err.len() < 4096, "{}", err.len());
        assert!(err.contains("bytes in all"), "{err}");
        let spec = format!("{{\"name\": \"x/y\", \"source\": \"{huge}\"}}");
        let err = decode_tool("x/y", &spec).unwrap_err().to_string();
        assert!(err.len() < 4096, "{}", err.len());
        assert!(err.contains("bytes cut"), "{err}");
        assert!(err.contains("expected one of"), "{err}");
        assert!(err.contains("line 1 column"), "{err}");
    }

    #[test]
    fn values_that_a_column_cannot_hold_are_refused() {
        let mut skill = Skill::new(SkillName::new("a/b").unwrap());
        skill.version = Some("v".repeat(51));
        let err = encode_skill(&skill).err().unwrap();
        assert_eq!(
            err.to_string(),
            "cannot store `a/b`: `skills.version` is longer than 50 characters"
        );
        skill.version = None;
        skill.description = Some("nul\0".into());
        assert_eq!(encode_skill(&skill).err().unwrap().kind(), "invalid_value");
        let tool = ToolSpec::new("x".repeat(501), "", ToolSource::Custom);
        assert!(encode_tool(&tool).is_err());
    }

    #[test]
    fn origin_is_the_spec_digest_or_the_discovery_scope() {
        let mut tool = ToolSpec::new("mcp:gh/x", "", ToolSource::Mcp);
        assert_eq!(tool_origin(&tool), None);
        tool.source_metadata.insert("server".into(), json!("gh"));
        assert_eq!(tool_origin(&tool).as_deref(), Some("gh"));
        tool.source_metadata
            .insert("spec_digest".into(), json!("d1"));
        assert_eq!(tool_origin(&tool).as_deref(), Some("d1"));
        tool.source = ToolSource::Custom;
        assert_eq!(tool_origin(&tool), None);
        let mut found = ToolSpec::new("agent_skills/x", "", ToolSource::AgentSkills);
        assert_eq!(tool_origin(&found), None);
        found.source_metadata.insert("scope".into(), json!("s1"));
        assert_eq!(tool_origin(&found).as_deref(), Some("s1"));
    }

    #[test]
    fn helpers() {
        assert_eq!(first_repeat(["a", "b", "a", "b"]), Some("a"));
        assert_eq!(first_repeat(["a", "b"]), None);
        let a1 = ToolSpec::new("a", "1", ToolSource::Custom);
        let b = ToolSpec::new("b", "", ToolSource::Custom);
        let a2 = ToolSpec::new("a", "2", ToolSource::Custom);
        let tools = [a1, b, a2];
        let kept: Vec<_> = last_wins(&tools)
            .into_iter()
            .map(|t| (t.name.as_str(), t.description.as_str()))
            .collect();
        assert_eq!(kept, [("a", "2"), ("b", "")]);
        assert_eq!(json_array(["a\"b", "c"]), r#"["a\"b","c"]"#);
    }
}
