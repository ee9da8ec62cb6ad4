//! How large a JSON Schema is once its `$ref`s are followed.
//!
//! A validator walks a schema with every reference replaced by its target,
//! so a few kilobytes that chain `anyOf` through `$defs`
//! (`d_i = {anyOf: [{$ref: d_(i-1)}, {$ref: d_(i-1)}]}`) cost 2^i steps to
//! check one wrong argument against. The expansion is counted here, with
//! each reference target counted once and reused (memoized), so the count
//! itself costs time linear in the schema; a reference back to a schema
//! being counted (a recursive schema, such as a tree) adds one, as its
//! validation only goes as deep as the value checked against it.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use referencing::{Draft, Registry, Resolver, ResourceRef};
use serde_json::Value;

/// The most subschemas (JSON objects) a schema may expand to through its
/// `$ref`s. Real tool schemas have hundreds; a schema at the bound costs a
/// validator tens of milliseconds to refuse a wrong argument against.
pub const MAX_FOLLOWED_SCHEMA_SIZE: usize = 100_000;

/// The keywords whose string value names another schema.
const REFERENCES: [&str; 3] = ["$ref", "$dynamicRef", "$recursiveRef"];

/// Base URI of a schema without `$id`, as jsonschema resolves it.
const DEFAULT_BASE: &str = "json-schema:///";

/// The most steps [`ArgumentSteps::count`] allows: a validator takes well
/// under a second for them, and an argument of a real tool far fewer.
pub const MAX_ARGUMENT_CHECK_STEPS: usize = 1_000_000;

/// A node being counted by [`unfolded_size`], with what it leads to.
struct Frame<N> {
    key: (usize, usize),
    children: Vec<N>,
    next: usize,
    total: usize,
}

/// The total `weight` of the tree unfolded from `root` by `children`, when
/// at most `limit`; `None` otherwise. A node's size is counted once by its
/// `key` and reused (memoized); a node reached again while its own size is
/// being counted (a cycle) counts 1. Without recursion (a long chain cannot
/// overflow the stack), in time and memory bounded by `limit`: every node
/// listed adds at least one to the total.
fn unfolded_size<N: Clone>(
    root: N,
    key: impl Fn(&N) -> (usize, usize),
    weight: impl Fn(&N) -> usize,
    mut children: impl FnMut(&N) -> Vec<N>,
    limit: usize,
) -> Option<usize> {
    let mut sizes: HashMap<(usize, usize), usize> = HashMap::new();
    let mut open: HashSet<(usize, usize)> = HashSet::new();
    let mut listed = 0usize;
    let mut enter = |node: &N, listed: &mut usize| -> Option<Frame<N>> {
        let children = children(node);
        *listed = listed.saturating_add(children.len());
        (*listed <= limit).then(|| Frame {
            key: key(node),
            children,
            next: 0,
            total: weight(node),
        })
    };
    let first = enter(&root, &mut listed)?;
    open.insert(first.key);
    let mut stack = vec![first];
    loop {
        let frame = stack.last_mut()?;
        if let Some(child) = frame.children.get(frame.next).cloned() {
            frame.next += 1;
            let child_key = key(&child);
            let counted = match sizes.get(&child_key) {
                Some(size) => Some(*size),
                None => open.contains(&child_key).then_some(1),
            };
            match counted {
                Some(size) => {
                    frame.total = frame.total.saturating_add(size);
                    if frame.total > limit {
                        return None;
                    }
                }
                None => {
                    let frame = enter(&child, &mut listed)?;
                    open.insert(frame.key);
                    stack.push(frame);
                }
            }
            continue;
        }
        let done = stack.pop()?;
        open.remove(&done.key);
        sizes.insert(done.key, done.total);
        match stack.last_mut() {
            None => return Some(done.total),
            Some(parent) => {
                parent.total = parent.total.saturating_add(done.total);
                if parent.total > limit {
                    return None;
                }
            }
        }
    }
}

/// The draft of `schema` as jsonschema detects it, its base URI, and a
/// registry holding `resource` (`schema` itself, borrowed or shared) under
/// that URI.
fn registry_of<'a>(
    schema: &Value,
    resource: impl referencing::IntoRegistryResource<'a>,
) -> Result<(Registry<'a>, Draft, referencing::Uri<String>), String> {
    let draft = match Draft::default().detect(schema) {
        Draft::Unknown => Draft::default(),
        known => known,
    };
    let described = ResourceRef::new(schema, draft);
    let base = described.id().unwrap_or(DEFAULT_BASE);
    let cannot = |err: referencing::Error| format!("cannot follow its `$ref`s: {err}");
    let base_uri = referencing::uri::from_str(base).map_err(cannot)?;
    let registry = Registry::new()
        .draft(draft)
        .add(base_uri.as_str(), resource)
        .and_then(|builder| builder.prepare())
        .map_err(cannot)?;
    Ok((registry, draft, base_uri))
}

fn address(value: &Value) -> usize {
    std::ptr::from_ref(value) as usize
}

/// The number of subschemas a validator may apply from `schema`, with every
/// `$ref` (also `$dynamicRef`, `$recursiveRef`) replaced by its target, when
/// it is at most `limit`; otherwise an error saying so. Definitions
/// (`$defs`, `definitions`) count where they are referred to, values
/// (`const`, `enum`, `default`, `examples`) not at all; an object under any
/// other keyword counts as a schema. A reference that does not resolve counts
/// as nothing (jsonschema refuses such a schema before this is asked).
pub fn followed_schema_size(schema: &Value, limit: usize) -> Result<usize, String> {
    let (registry, draft, base_uri) = registry_of(schema, schema)?;
    let root = (schema, Kind::Schema, registry.resolver(base_uri));
    unfolded_size(
        root,
        |(value, kind, _)| (address(value), *kind as usize),
        |(_, kind, _)| usize::from(*kind == Kind::Schema),
        |(value, kind, resolver)| children(value, *kind, resolver, draft),
        limit,
    )
    .ok_or_else(|| {
        format!(
            "expands to more than {limit} subschemas through its `$ref`s \
             (checking a value against it would take as many steps)"
        )
    })
}

/// An input schema made ready to count, for any arguments, how many steps a
/// validator takes to check them ([`ArgumentSteps::count`]): its `$ref`
/// registry is built once (building it for every call was about 3% of the
/// gateway's CPU per proxied call).
#[derive(Debug)]
pub struct ArgumentSteps {
    /// The schema, shared with the registry, which resolves references to
    /// its parts: the counting memoizes by address, so the root and the
    /// targets of references must be the same values.
    schema: Arc<Value>,
    registry: Registry<'static>,
    draft: Draft,
    base_uri: referencing::Uri<String>,
}

impl ArgumentSteps {
    /// Prepares `schema`; an error when its references cannot be followed.
    pub fn new(schema: &Value) -> Result<Self, String> {
        let schema = Arc::new(schema.clone());
        let (registry, draft, base_uri) = registry_of(&schema, Arc::clone(&schema))?;
        Ok(Self {
            schema,
            registry,
            draft,
            base_uri,
        })
    }

    /// At most how many times a validator applies a subschema of the
    /// schema to a part of `instance` when checking it (each reference
    /// replaced by its target), when that is at most `limit`; otherwise an
    /// error saying so. Counted with each pair of subschema and part counted
    /// once and reused, in time bounded by `limit`, where a validator checks
    /// every pair again each time it reaches it: a recursive schema that
    /// tries two branches at each level of the value (`{"anyOf":
    /// [{"properties": {"c": {"$ref": "#"}}}, …]}`) costs 2^depth steps for
    /// a value nested `depth` deep, although [`followed_schema_size`] counts
    /// its recursion once. An upper bound: every branch is counted, whether
    /// the value matches it or not, and a `patternProperties` or
    /// `additionalProperties` subschema for every member.
    pub fn count(&self, instance: &Value, limit: usize) -> Result<usize, String> {
        // What a `propertyNames` subschema is applied to: a member's name.
        let name = Value::String(String::new());
        let root = (
            &*self.schema,
            self.registry.resolver(self.base_uri.clone()),
            instance,
        );
        unfolded_size(
            root,
            |(schema, _, instance)| (address(schema), address(instance)),
            |_| 1,
            |(schema, resolver, instance)| applied(schema, resolver, instance, &name, self.draft),
            limit,
        )
        .ok_or_else(|| {
            format!(
                "checking them against the input schema would take more than {limit} steps \
                 (the schema branches at each level of these arguments)"
            )
        })
    }
}

/// The subschemas `schema` applies to `instance` or to its parts, each with
/// the part (`name` standing for a member's name), references resolved.
fn applied<'r, 'i>(
    schema: &'r Value,
    resolver: &Resolver<'r>,
    instance: &'i Value,
    name: &'i Value,
    draft: Draft,
) -> Vec<(&'r Value, Resolver<'r>, &'i Value)> {
    let Value::Object(map) = schema else {
        return Vec::new();
    };
    let resolver = resolver
        .in_subresource(ResourceRef::new(schema, draft))
        .unwrap_or_else(|_| resolver.clone());
    let mut out = Vec::new();
    let apply = |out: &mut Vec<_>, subschema: &'r Value, part: &'i Value| {
        if subschema.is_object() {
            out.push((subschema, resolver.clone(), part));
        }
    };
    let members: Vec<&'i Value> = match instance {
        Value::Object(members) => members.values().collect(),
        _ => Vec::new(),
    };
    let items: &[Value] = match instance {
        Value::Array(items) => items,
        _ => &[],
    };
    for (key, child) in map {
        match (key.as_str(), child) {
            (keyword, Value::String(reference)) if REFERENCES.contains(&keyword) => {
                if let Ok(resolved) = resolver.lookup(reference) {
                    out.push((resolved.contents(), resolved.resolver().clone(), instance));
                }
            }
            ("allOf" | "anyOf" | "oneOf", Value::Array(branches)) => {
                for branch in branches {
                    apply(&mut out, branch, instance);
                }
            }
            ("not" | "if" | "then" | "else", _) => apply(&mut out, child, instance),
            ("dependentSchemas" | "dependencies", Value::Object(schemas)) => {
                for subschema in schemas.values() {
                    apply(&mut out, subschema, instance);
                }
            }
            ("properties", Value::Object(schemas)) => {
                if let Value::Object(members) = instance {
                    for (member, subschema) in schemas {
                        if let Some(part) = members.get(member) {
                            apply(&mut out, subschema, part);
                        }
                    }
                }
            }
            ("patternProperties", Value::Object(schemas)) => {
                for subschema in schemas.values() {
                    for part in &members {
                        apply(&mut out, subschema, part);
                    }
                }
            }
            ("additionalProperties" | "unevaluatedProperties", _) => {
                for part in &members {
                    apply(&mut out, child, part);
                }
            }
            ("propertyNames", _) => {
                for _ in &members {
                    apply(&mut out, child, name);
                }
            }
            ("items" | "prefixItems", Value::Array(tuple)) => {
                for (subschema, part) in tuple.iter().zip(items) {
                    apply(&mut out, subschema, part);
                }
            }
            ("items" | "additionalItems" | "unevaluatedItems" | "contains", _) => {
                for part in items {
                    apply(&mut out, child, part);
                }
            }
            _ => {}
        }
    }
    out
}

/// Keywords whose value is no schema a validator applies: definitions (reached
/// through references, and counted there) and values.
const NOT_APPLIED: [&str; 6] = [
    "$defs",
    "definitions",
    "const",
    "enum",
    "default",
    "examples",
];

/// Keywords whose value maps names to schemas.
const SCHEMA_MAPS: [&str; 4] = [
    "properties",
    "patternProperties",
    "dependentSchemas",
    "dependencies",
];

/// What an object is to the count: a schema (one, plus what it leads to) or
/// a map of names to schemas (nothing itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Schema,
    Map,
}

/// The schemas (and maps of them) `value`, a `kind`, applies, each
/// reference replaced by its target (resolved from where it stands).
fn children<'r>(
    value: &'r Value,
    kind: Kind,
    resolver: &Resolver<'r>,
    draft: Draft,
) -> Vec<(&'r Value, Kind, Resolver<'r>)> {
    let Value::Object(map) = value else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if kind == Kind::Map {
        for child in map.values().filter(|child| child.is_object()) {
            out.push((child, Kind::Schema, resolver.clone()));
        }
        return out;
    }
    // A schema with its own `$id` is the base of the references in it.
    let resolver = resolver
        .in_subresource(ResourceRef::new(value, draft))
        .unwrap_or_else(|_| resolver.clone());
    for (key, child) in map {
        let key = key.as_str();
        match child {
            Value::String(reference) if REFERENCES.contains(&key) => {
                if let Ok(resolved) = resolver.lookup(reference) {
                    out.push((
                        resolved.contents(),
                        Kind::Schema,
                        resolved.resolver().clone(),
                    ));
                }
            }
            _ if NOT_APPLIED.contains(&key) => {}
            Value::Object(_) if SCHEMA_MAPS.contains(&key) => {
                out.push((child, Kind::Map, resolver.clone()));
            }
            Value::Object(_) => out.push((child, Kind::Schema, resolver.clone())),
            Value::Array(items) => out.extend(
                items
                    .iter()
                    .filter(|item| item.is_object())
                    .map(|item| (item, Kind::Schema, resolver.clone())),
            ),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// `d_0 = {type: string}`, `d_i = {anyOf: [{$ref: d_(i-1)}, {$ref: d_(i-1)}]}`,
    /// and a property `p` of type `d_(n-1)`.
    pub(crate) fn any_of_chain(n: usize) -> Value {
        let mut defs = serde_json::Map::new();
        defs.insert("d0".into(), json!({"type": "string"}));
        for i in 1..n {
            let previous = format!("#/$defs/d{}", i - 1);
            defs.insert(
                format!("d{i}"),
                json!({"anyOf": [{"$ref": previous}, {"$ref": previous}]}),
            );
        }
        json!({
            "type": "object",
            "properties": {"p": {"$ref": format!("#/$defs/d{}", n - 1)}},
            "$defs": defs,
        })
    }

    #[test]
    fn counts_objects_with_references_followed() {
        assert_eq!(followed_schema_size(&json!({"type": "object"}), 10), Ok(1));
        let schema = json!({
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/s"}, "b": {"$ref": "#/$defs/s"}},
            "$defs": {"s": {"type": "object", "properties": {"x": {"type": "string"}}}}
        });
        // The root, then `a` and `b` (each itself, and `s` with its property
        // `x`); `properties` is no schema, `$defs` counts where referred to.
        assert_eq!(followed_schema_size(&schema, 100), Ok(1 + 3 + 3));
        assert!(followed_schema_size(&schema, 6).is_err());
        // A property may be called like a keyword.
        let named = json!({"properties": {"$defs": {"$ref": "#/$defs/s"}, "enum": {}},
                           "$defs": {"s": {"type": "string"}}});
        assert_eq!(followed_schema_size(&named, 100), Ok(1 + 2 + 1));
    }

    #[test]
    fn a_chain_of_any_of_through_defs_is_refused_fast() {
        assert!(followed_schema_size(&any_of_chain(8), MAX_FOLLOWED_SCHEMA_SIZE).is_ok());
        // 2^60 if expanded: counted in one pass over the 60 definitions.
        let err = followed_schema_size(&any_of_chain(60), MAX_FOLLOWED_SCHEMA_SIZE).unwrap_err();
        assert!(
            err.starts_with("expands to more than 100000 subschemas"),
            "{err}"
        );
    }

    #[test]
    fn a_recursive_schema_counts_its_recursion_once() {
        let tree = json!({
            "type": "object",
            "properties": {
                "left": {"$ref": "#"},
                "right": {"$ref": "#"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}
            },
            "$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}}
        });
        let size = followed_schema_size(&tree, MAX_FOLLOWED_SCHEMA_SIZE).unwrap();
        assert!(size < 20, "{size}");
    }

    #[test]
    fn references_by_id_and_anchor_are_followed_too() {
        let mut defs = serde_json::Map::new();
        defs.insert(
            "d0".into(),
            json!({"$id": "urn:d0", "$anchor": "a0", "type": "string"}),
        );
        for i in 1..40 {
            // Alternately through an `$id` and through an anchor.
            let previous = if i % 2 == 0 {
                format!("urn:d{}", i - 1)
            } else {
                format!("urn:d{}#a{}", i - 1, i - 1)
            };
            defs.insert(
                format!("d{i}"),
                json!({"$id": format!("urn:d{i}"), "$anchor": format!("a{i}"),
                       "anyOf": [{"$ref": previous}, {"$ref": previous}]}),
            );
        }
        let schema = json!({"$defs": defs, "properties": {"p": {"$ref": "urn:d39"}}});
        assert!(jsonschema::validator_for(&schema).is_ok());
        let err = followed_schema_size(&schema, MAX_FOLLOWED_SCHEMA_SIZE).unwrap_err();
        assert!(err.starts_with("expands to more than"), "{err}");
    }

    fn check_steps(schema: &Value, instance: &Value, limit: usize) -> Result<usize, String> {
        ArgumentSteps::new(schema)?.count(instance, limit)
    }

    /// `{"c": {"c": … 5 …}}`, `depth` deep.
    fn nested(depth: usize) -> Value {
        let mut value = json!(5);
        for _ in 0..depth {
            value = json!({ "c": value });
        }
        value
    }

    #[test]
    fn checking_arguments_against_a_recursive_branching_schema_is_bounded() {
        // Two branches at each level of the value: 2^depth steps for a
        // validator, though the schema's own expansion is 9.
        let branching = json!({"$defs": {"n": {"anyOf": [
            {"type": "object", "properties": {"c": {"$ref": "#/$defs/n"}}},
            {"type": "object", "properties": {"c": {"$ref": "#/$defs/n"}}, "required": ["x"]}
        ]}}, "type": "object", "properties": {"p": {"$ref": "#/$defs/n"}}});
        assert!(followed_schema_size(&branching, 100).is_ok());
        let shallow = json!({ "p": nested(4) });
        assert!(check_steps(&branching, &shallow, MAX_ARGUMENT_CHECK_STEPS).is_ok());
        let deep = json!({ "p": nested(60) });
        let err = check_steps(&branching, &deep, MAX_ARGUMENT_CHECK_STEPS).unwrap_err();
        assert!(
            err.starts_with(
                "checking them against the input schema would take more than 1000000 steps"
            ),
            "{err}"
        );
        // A tree schema costs one step per part of the value however deep.
        let tree = json!({"$defs": {"node": {"type": "object", "properties": {
            "left": {"$ref": "#/$defs/node"}, "right": {"$ref": "#/$defs/node"},
            "c": {"$ref": "#/$defs/node"}}}}, "$ref": "#/$defs/node"});
        let steps = check_steps(&tree, &nested(100), MAX_ARGUMENT_CHECK_STEPS).unwrap();
        assert!(steps < 300, "{steps}");
        // The JSON value schema: each member and item once.
        let json_value = json!({"$defs": {"v": {"anyOf": [
            {"type": ["string", "number", "boolean", "null"]},
            {"type": "array", "items": {"$ref": "#/$defs/v"}},
            {"type": "object", "additionalProperties": {"$ref": "#/$defs/v"}}
        ]}}, "$ref": "#/$defs/v"});
        let value = json!({"a": [1, 2, {"b": [3, {"c": nested(50)}]}], "d": "e"});
        let steps = check_steps(&json_value, &value, MAX_ARGUMENT_CHECK_STEPS).unwrap();
        assert!(steps < 1000, "{steps}");
        // The chain that expands exponentially: bounded for any value.
        let chain = any_of_chain(60);
        assert!(check_steps(&chain, &json!({"p": 5}), MAX_ARGUMENT_CHECK_STEPS).is_err());
    }

    #[test]
    fn a_long_chain_of_references_does_not_recurse() {
        // 20,000 definitions, each referring to the next: no stack overflow,
        // and each counted once (60,000 in all, not their sum).
        let mut defs = serde_json::Map::new();
        for i in 0..20_000 {
            defs.insert(
                format!("d{i}"),
                json!({"properties": {"n": {"$ref": format!("#/$defs/d{}", i + 1)}}}),
            );
        }
        defs.insert("d20000".into(), json!({"type": "string"}));
        let schema = json!({"$defs": defs, "$ref": "#/$defs/d0"});
        assert_eq!(
            followed_schema_size(&schema, 1_000_000),
            Ok(1 + 20_000 * 2 + 1)
        );
    }
}
