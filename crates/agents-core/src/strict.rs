//! OpenAI's strict function calling: which parameter schemas it takes, and
//! the form it takes them in.
//!
//! With `"strict": true` OpenAI decodes arguments under the schema, and takes
//! only a subset of JSON Schema ("Structured Outputs: supported schemas",
//! which function calling's strict mode points to):
//!
//! - every object sets `additionalProperties: false`, and lists every one of
//!   its `properties` in `required`;
//! - the keywords are those listed as supported: `type`, `properties`,
//!   `required`, `additionalProperties`, `items`, `enum`, `const`, `anyOf`,
//!   `$ref` (inside the schema) and `$defs`/`definitions`, `description`,
//!   `title`, and for strings `pattern` and a `format` of `date-time`, `time`,
//!   `date`, `duration`, `email`, `hostname`, `ipv4`, `ipv6` or `uuid`, for
//!   numbers `multipleOf`, `maximum`, `exclusiveMaximum`, `minimum`,
//!   `exclusiveMinimum`, for arrays `minItems` and `maxItems`;
//! - at most [`MAX_DEPTH`] levels of nested objects, [`MAX_PROPERTIES`]
//!   properties and [`MAX_ENUM_VALUES`] enum values in all.
//!
//! [`strict_parameters`] gives a schema in that form when it can be written
//! so without changing which arguments it accepts: closing an object (a
//! model is not meant to send what the tool does not name) is done, but an
//! optional property is never made required. A schema that cannot be made
//! strict is exported as it is, with `"strict": false`.

use serde_json::{Map, Value};

/// The deepest nesting of objects strict mode takes.
pub const MAX_DEPTH: usize = 10;
/// The most object properties strict mode takes, in all.
pub const MAX_PROPERTIES: usize = 5000;
/// The most enum values strict mode takes, in all.
pub const MAX_ENUM_VALUES: usize = 1000;

/// The keywords strict mode takes (see the module documentation).
pub const STRICT_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "definitions",
    "description",
    "title",
    "pattern",
    "format",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "maxItems",
];

/// The string formats strict mode takes.
pub const STRICT_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

const TYPES: &[&str] = &[
    "string", "number", "integer", "boolean", "object", "array", "null",
];

#[derive(Default)]
struct Budget {
    properties: usize,
    enum_values: usize,
}

/// `schema` (an object schema) in the form strict mode takes, or `None` when
/// it cannot be written so without changing what it accepts. The root's
/// `$schema` (an annotation) is dropped.
pub fn strict_parameters(schema: &Value) -> Option<Value> {
    let mut root = schema.as_object()?.clone();
    root.remove("$schema");
    if root.contains_key("anyOf") {
        return None;
    }
    let mut budget = Budget::default();
    strict_node(&Value::Object(root), 1, &mut budget)
}

fn strict_node(node: &Value, depth: usize, budget: &mut Budget) -> Option<Value> {
    let fields = node.as_object()?;
    if fields
        .keys()
        .any(|key| !STRICT_KEYWORDS.contains(&key.as_str()))
    {
        return None;
    }
    let types: Vec<&str> = match fields.get("type") {
        None => Vec::new(),
        Some(Value::String(kind)) => vec![kind.as_str()],
        Some(Value::Array(kinds)) => kinds.iter().map(Value::as_str).collect::<Option<_>>()?,
        Some(_) => return None,
    };
    if types.iter().any(|kind| !TYPES.contains(kind)) {
        return None;
    }
    let is_object = types.contains(&"object") || fields.contains_key("properties");
    if is_object && depth > MAX_DEPTH {
        return None;
    }
    if let Some(format) = fields.get("format")
        && !format
            .as_str()
            .is_some_and(|format| STRICT_FORMATS.contains(&format))
    {
        return None;
    }
    if let Some(reference) = fields.get("$ref")
        && !reference.as_str().is_some_and(|r| r.starts_with('#'))
    {
        return None;
    }
    if let Some(values) = fields.get("enum") {
        budget.enum_values += values.as_array()?.len();
        if budget.enum_values > MAX_ENUM_VALUES {
            return None;
        }
    }
    let mut out = Map::with_capacity(fields.len() + 2);
    for (key, value) in fields {
        let value = match key.as_str() {
            "properties" => {
                let properties = value.as_object()?;
                budget.properties += properties.len();
                if budget.properties > MAX_PROPERTIES {
                    return None;
                }
                let mut strict = Map::with_capacity(properties.len());
                for (name, property) in properties {
                    strict.insert(name.clone(), strict_node(property, depth + 1, budget)?);
                }
                Value::Object(strict)
            }
            "items" => strict_node(value, depth + 1, budget)?,
            "anyOf" => Value::Array(
                value
                    .as_array()?
                    .iter()
                    .map(|branch| strict_node(branch, depth, budget))
                    .collect::<Option<_>>()?,
            ),
            "$defs" | "definitions" => {
                let mut strict = Map::new();
                for (name, definition) in value.as_object()? {
                    strict.insert(name.clone(), strict_node(definition, depth, budget)?);
                }
                Value::Object(strict)
            }
            // Only `false` (or left out, below) keeps what the schema accepts
            // and is what strict mode needs.
            "additionalProperties" if *value != Value::Bool(false) => return None,
            _ => value.clone(),
        };
        out.insert(key.clone(), value);
    }
    if is_object {
        let names: Vec<String> = out
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        let required: Vec<&str> = match fields.get("required") {
            None => Vec::new(),
            Some(list) => list
                .as_array()?
                .iter()
                .map(Value::as_str)
                .collect::<Option<_>>()?,
        };
        // An optional property would have to become required, a required
        // name that is no property dropped: neither is done.
        if names.iter().any(|name| !required.contains(&name.as_str()))
            || required.iter().any(|name| !names.iter().any(|n| n == name))
        {
            return None;
        }
        out.entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        out.insert(
            "required".into(),
            Value::Array(names.into_iter().map(Value::String).collect()),
        );
        out.insert("additionalProperties".into(), Value::Bool(false));
    }
    Some(Value::Object(out))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn closes_objects_whose_properties_are_all_required() {
        let strict = strict_parameters(&json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "a": {"type": "object", "properties": {"b": {"type": ["string", "null"]}}, "required": ["b"]},
                "c": {"type": "array", "items": {"$ref": "#/$defs/d"}},
            },
            "required": ["c", "a"],
            "$defs": {"d": {"type": "object", "properties": {}, "additionalProperties": false}},
        }))
        .unwrap();
        assert_eq!(
            strict,
            json!({
                "type": "object",
                "properties": {
                    "a": {"type": "object", "properties": {"b": {"type": ["string", "null"]}},
                          "required": ["b"], "additionalProperties": false},
                    "c": {"type": "array", "items": {"$ref": "#/$defs/d"}},
                },
                "required": ["a", "c"],
                "$defs": {"d": {"type": "object", "properties": {}, "required": [], "additionalProperties": false}},
                "additionalProperties": false,
            })
        );
        assert_eq!(
            strict_parameters(&json!({"type": "object", "properties": {}})).unwrap(),
            json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
        );
    }

    #[test]
    fn leaves_what_it_would_have_to_change_or_cannot_take() {
        for schema in [
            // An optional property.
            json!({"type": "object", "properties": {"a": {"type": "string"}}}),
            // Open to more properties.
            json!({"type": "object", "properties": {}, "additionalProperties": true}),
            json!({"type": "object", "properties": {}, "additionalProperties": {"type": "string"}}),
            // Keywords and formats strict mode does not take.
            json!({"type": "object", "properties": {"a": {"type": "string", "minLength": 1}}, "required": ["a"]}),
            json!({"type": "object", "properties": {"a": {"type": "string", "format": "uri"}}, "required": ["a"]}),
            json!({"type": "object", "properties": {}, "allOf": []}),
            json!({"type": "object", "properties": {}, "default": {}}),
            // A reference out of the schema; a required name with no property.
            json!({"type": "object", "properties": {"a": {"$ref": "other.json"}}, "required": ["a"]}),
            json!({"type": "object", "properties": {}, "required": ["ghost"]}),
        ] {
            assert_eq!(strict_parameters(&schema), None, "{schema}");
        }
        // Eleven levels of objects.
        let mut deep = json!({"type": "object", "properties": {}});
        for _ in 0..10 {
            deep = json!({"type": "object", "properties": {"x": deep}, "required": ["x"]});
        }
        assert_eq!(strict_parameters(&deep), None);
        let many: serde_json::Map<String, Value> = (0..=MAX_ENUM_VALUES)
            .map(|i| (format!("p{i}"), json!({"enum": [i]})))
            .collect();
        let names: Vec<&String> = many.keys().collect();
        assert_eq!(
            strict_parameters(&json!({"type": "object", "properties": many, "required": names})),
            None
        );
    }
}
