//! Between the codec's column structs and the neutral SQL values: the
//! column lists and bulk-insert shapes of each table, the bound values of
//! rows to insert, and the decoding of fetched cells into rows.

use agents_core::ToolSpec;

use crate::codec::{self, ItemRow, SkillColumns, SkillRow, ToolColumns};
use crate::error::StoreError;
use crate::sql::{Arg, Cell, Cells, Kind};

pub(crate) const SKILL_COLUMNS: &str =
    "name, description, version, metadata_json, created_at, updated_at";
pub(crate) const ITEM_COLUMNS: &str = "skill_name, item_type, item_name, item_config, item_order";

pub(crate) static SKILL_INSERT: &[(&str, Kind)] = &[
    ("name", Kind::Text),
    ("namespace", Kind::Text),
    ("short_name", Kind::Text),
    ("description", Kind::Text),
    ("version", Kind::Text),
    ("metadata_json", Kind::Text),
    ("created_at", Kind::Text),
    ("updated_at", Kind::Text),
];
pub(crate) static ITEM_INSERT: &[(&str, Kind)] = &[
    ("skill_name", Kind::Text),
    ("item_type", Kind::Text),
    ("item_name", Kind::Text),
    ("item_config", Kind::Text),
    ("item_order", Kind::Int),
    ("created_at", Kind::Text),
];
pub(crate) static TOOL_INSERT: &[(&str, Kind)] = &[
    ("name", Kind::Text),
    ("source", Kind::Text),
    ("origin", Kind::Text),
    ("spec_json", Kind::Text),
    ("created_at", Kind::Text),
    ("updated_at", Kind::Text),
];
pub(crate) static META_INSERT: &[(&str, Kind)] = &[("key", Kind::Text), ("value", Kind::Text)];
pub(crate) const META_UPSERT: &str = " ON CONFLICT (key) DO UPDATE SET value = excluded.value";
pub(crate) const TOOL_UPSERT: &str = " ON CONFLICT (name) DO UPDATE SET source = excluded.source, \
     origin = excluded.origin, spec_json = excluded.spec_json, updated_at = excluded.updated_at";

pub(crate) fn skill_row(row: Vec<Cell>) -> Result<SkillRow, StoreError> {
    let mut cells = Cells::new("skills", row);
    Ok(SkillRow {
        name: cells.text("name")?,
        description: cells.opt_text("description")?,
        version: cells.opt_text("version")?,
        metadata_json: cells.text("metadata_json")?,
        created_at: cells.text("created_at")?,
        updated_at: cells.text("updated_at")?,
    })
}

pub(crate) fn item_row(row: Vec<Cell>) -> Result<ItemRow, StoreError> {
    let mut cells = Cells::new("skill_items", row);
    Ok(ItemRow {
        skill_name: cells.text("skill_name")?,
        item_type: cells.text("item_type")?,
        item_name: cells.text("item_name")?,
        item_config: cells.opt_text("item_config")?,
        item_order: cells.int("item_order")?,
    })
}

pub(crate) fn tool_row(row: Vec<Cell>) -> Result<ToolSpec, StoreError> {
    let mut cells = Cells::new("tools", row);
    let name = cells.text("name")?;
    let spec = cells.text("spec_json")?;
    codec::decode_tool(&name, &spec)
}

/// Every row decoded by `decode`; the first that does not decode fails the
/// whole read.
pub(crate) fn decode_rows<T>(
    rows: Vec<Vec<Cell>>,
    decode: fn(Vec<Cell>) -> Result<T, StoreError>,
) -> Result<Vec<T>, StoreError> {
    rows.into_iter().map(decode).collect()
}

/// The tool rows that decode; each other one is left out with a warning
/// (at most [`CORRUPT_WARNED`] of them named): a listing or a resolution
/// across the catalogue goes on for everyone over one row somebody wrote
/// badly. The tool then reads as unknown. `db export` reads strictly
/// ([`Store::all_tools`](crate::Store::all_tools)).
pub(crate) fn readable_tools(rows: Vec<Vec<Cell>>) -> Vec<ToolSpec> {
    readable("tool", rows, tool_row)
}

/// The rows that `decode` reads, each other one left out with a warning (at
/// most [`CORRUPT_WARNED`] of them named, then a count of `what` rows).
pub(crate) fn readable<T>(
    what: &str,
    rows: Vec<Vec<Cell>>,
    decode: impl Fn(Vec<Cell>) -> Result<T, StoreError>,
) -> Vec<T> {
    let mut corrupt = 0usize;
    let kept = rows
        .into_iter()
        .filter_map(|row| match decode(row) {
            Ok(value) => Some(value),
            Err(err) => {
                corrupt += 1;
                if corrupt <= CORRUPT_WARNED {
                    tracing::warn!("{err}; the row is left out");
                }
                None
            }
        })
        .collect();
    if corrupt > CORRUPT_WARNED {
        tracing::warn!(
            "{} more {what} rows do not decode and are left out",
            corrupt - CORRUPT_WARNED
        );
    }
    kept
}

/// Undecodable tool rows one read names in a warning before counting.
const CORRUPT_WARNED: usize = 5;

pub(crate) fn skill_values<'a>(skills: &'a [SkillColumns], at: &'a str) -> Vec<Arg<'a>> {
    skills
        .iter()
        .flat_map(|skill| {
            [
                Arg::Text(&skill.name),
                Arg::Text(&skill.namespace),
                Arg::Text(&skill.short_name),
                Arg::OptText(skill.description.as_deref()),
                Arg::OptText(skill.version.as_deref()),
                Arg::Text(&skill.metadata_json),
                Arg::Text(at),
                Arg::Text(at),
            ]
        })
        .collect()
}

pub(crate) fn item_values<'a>(skills: &'a [SkillColumns], at: &'a str) -> Vec<Arg<'a>> {
    skills
        .iter()
        .flat_map(|skill| {
            skill.items.iter().flat_map(move |item| {
                [
                    Arg::Text(&skill.name),
                    Arg::Text(item.item_type),
                    Arg::Text(&item.item_name),
                    Arg::OptText(item.item_config.as_deref()),
                    Arg::Int(item.item_order.into()),
                    Arg::Text(at),
                ]
            })
        })
        .collect()
}

pub(crate) fn tool_values<'a>(tools: &'a [ToolColumns], at: &'a str) -> Vec<Arg<'a>> {
    tools
        .iter()
        .flat_map(|tool| {
            [
                Arg::Text(&tool.name),
                Arg::Text(tool.source),
                Arg::OptText(tool.origin.as_deref()),
                Arg::Text(&tool.spec_json),
                Arg::Text(at),
                Arg::Text(at),
            ]
        })
        .collect()
}
