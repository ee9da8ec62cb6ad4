//! The YAML definition formats users write: skills, custom tools and plans.
//!
//! Parsing is strict (unknown keys are errors) and every error names the file,
//! the document, and where known the line and column, with the offending
//! source line and a caret. [`skills_to_yaml`] prints definitions that
//! [`parse_skills`] reads back into identical skills.
//!
//! Every parser first checks the input against its [`Limits`] (size and
//! nesting depth) in one linear pass, then deserializes one document at a
//! time, so cost is linear in the input and errors are bounded.
//!
//! This crate reads no files itself: callers pass the text and a label.

// Library code returns errors; it does not panic on what it is given.
#![deny(clippy::panic, clippy::indexing_slicing)]

mod alias_budget;
mod emit;
mod error;
mod export;
mod limits;
mod locate;
mod plan;
mod skill;
mod tool;

pub use emit::yaml_text;
pub use error::{DefinitionError, FieldPosition, Limit, SourceLine, locate_fields};
pub use export::{
    EXPORT_FORMAT, EXPORT_FORMAT_V1, Export, LargestDocument, RefusedDocument, export_to_yaml,
    parse_export, parse_export_with,
};
pub use limits::{DEFAULT_MAX_DEPTH, HARD_MAX_DEPTH, Limits, MAX_VALUES};
pub use plan::{parse_plan, parse_plan_with};
pub use skill::{
    MAX_ITEMS, parse_skill_documents_with, parse_skills, parse_skills_with, skill_schema,
    skill_to_json, skills_to_yaml,
};
pub use tool::{parse_tools, parse_tools_with, tool_schema, tools_to_yaml};

/// Checks `text` against `limits` and walks it once (see [`expansion`]),
/// then deserializes each document of the
/// YAML stream in turn and hands it to `each` with its 1-based number,
/// skipping empty documents (a stream may start or end with `---`). Only one
/// document's parse events are held at a time.
fn documents<T, F>(
    text: &str,
    file: &str,
    limits: &Limits,
    mut each: F,
) -> Result<(), DefinitionError>
where
    T: serde::de::DeserializeOwned,
    F: FnMut(usize, T) -> Result<(), DefinitionError>,
{
    limits::check(text, file, limits)?;
    // A byte order mark (Windows editors write one) is not part of the
    // first document: libyaml took it as content and refused the next line.
    // Lines and columns then count as an editor shows them.
    let text = agents_core::text::without_bom(text);
    let walk = alias_budget::walk_for(text.len());
    // The walk's own refusals end the parse at once. Any other error (a
    // syntax error, or a value its tag does not fit, such as `!!int abc`)
    // ends the walk, so the documents after it are unchecked: the typed
    // parse then reads up to that document (reporting an earlier problem
    // first, in its words), and never past it.
    let mut unchecked: Option<(usize, yaml_serde::Error)> = None;
    for (index, document) in yaml_serde::Deserializer::from_str(text).enumerate() {
        match walk.check().deserialize(document) {
            Ok(_) => {}
            Err(err) if walk.stopped().is_some() => {
                return Err(DefinitionError::from_yaml(
                    file,
                    text,
                    Some(index + 1),
                    &err,
                ));
            }
            Err(err) => {
                unchecked = Some((index, err));
                break;
            }
        }
    }
    let walk_error = |(index, err): (usize, yaml_serde::Error)| {
        DefinitionError::from_yaml(file, text, Some(index + 1), &err)
    };
    for (index, document) in yaml_serde::Deserializer::from_str(text).enumerate() {
        if let Some((failed, _)) = &unchecked
            && index > *failed
        {
            break;
        }
        let number = index + 1;
        let parsed = Option::<T>::deserialize(document)
            .map_err(|err| DefinitionError::from_yaml(file, text, Some(number), &err))?;
        if let Some(parsed) = parsed {
            each(number, parsed)?;
        }
    }
    match unchecked {
        Some(failed) => Err(walk_error(failed)),
        None => Ok(()),
    }
}

use serde::Deserialize;
use serde::de::DeserializeSeed;
