//! The YAML definition formats users write: skills, custom tools and plans.
//!
//! Parsing is strict (unknown keys are errors) and every error names the file,
//! the document, and where known the line and column, with the offending
//! source line and a caret. [`skills_to_yaml`] prints definitions that
//! [`parse_skills`] reads back into identical skills.
//!
//! This crate reads no files itself: callers pass the text and a label.

mod error;
mod export;
mod plan;
mod skill;
mod tool;

pub use error::DefinitionError;
pub use export::{EXPORT_FORMAT, export_to_yaml, parse_export};
pub use plan::parse_plan;
pub use skill::{parse_skills, skill_to_json, skills_to_yaml};
pub use tool::{parse_tools, tools_to_yaml};

/// Splits a multi-document YAML stream and deserializes each document,
/// skipping empty ones (a stream may start or end with `---`). Returns each
/// value with its 1-based document number.
fn documents<T: serde::de::DeserializeOwned>(
    text: &str,
    file: &str,
) -> Result<Vec<(usize, T)>, DefinitionError> {
    let mut out = Vec::new();
    for (index, document) in yaml_serde::Deserializer::from_str(text).enumerate() {
        let number = index + 1;
        let parsed = Option::<T>::deserialize(document)
            .map_err(|err| DefinitionError::from_yaml(file, text, Some(number), &err))?;
        if let Some(parsed) = parsed {
            out.push((number, parsed));
        }
    }
    Ok(out)
}

use serde::Deserialize;
