//! Front-matter YAML to JSON with a hard budget.
//!
//! yaml_serde limits nesting (128 levels) and alias jumps (100 per event),
//! but a few kilobytes of anchors and aliases can still expand into millions
//! of values ("billion laughs"). Every value built here is charged against a
//! budget, so both the time and the memory spent on one file stay bounded
//! whatever the aliases expand to.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Cost units one file may spend: a value costs [`VALUE_COST`] plus the bytes
/// of its string.
pub(crate) const BUDGET: usize = 32 << 20;
const VALUE_COST: usize = 64;

pub(crate) const BUDGET_MESSAGE: &str = "front-matter is too large once YAML aliases are expanded";

/// A YAML problem with its 1-based position in the text that was parsed.
pub(crate) struct YamlProblem {
    pub message: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
}

/// Parses one YAML document into JSON. A document with no content is
/// `Value::Null`.
pub(crate) fn parse(text: &str) -> Result<Value, YamlProblem> {
    let budget = Cell::new(BUDGET);
    let deserializer = yaml_serde::Deserializer::from_str(text);
    Node { budget: &budget }
        .deserialize(deserializer)
        .map_err(|err| {
            let location = err.location();
            // From the byte index: libyaml's own line also counts lone CRs.
            let (line, column) = match &location {
                Some(at) => {
                    let (line, column) = agents_core::text::yaml_mark_position(text, at.index());
                    (Some(line), Some(column))
                }
                None => (None, None),
            };
            let mut message = err.to_string();
            // The position is reported separately; keep the rest (libyaml's
            // context, e.g. "while parsing a block mapping at line 2 column 1").
            if let Some(at) = &location {
                let suffix = format!(" at line {} column {}", at.line(), at.column());
                if let Some(start) = message.find(&suffix) {
                    message.replace_range(start..start + suffix.len(), "");
                }
            }
            for (terse, plain) in [
                (
                    "repetition limit exceeded",
                    "YAML aliases expand too far (repetition limit exceeded)",
                ),
                (
                    "recursion limit exceeded",
                    "nested deeper than 128 levels (recursion limit exceeded)",
                ),
            ] {
                if message.ends_with(terse) {
                    message.truncate(message.len() - terse.len());
                    message.push_str(plain);
                }
            }
            // libyaml's reader (bad characters) gives a byte offset, not a mark.
            let (line, column) = match byte_position(&message) {
                Some((offset, suffix)) => {
                    message.truncate(message.len() - suffix);
                    let (line, column) = line_and_column(text, offset);
                    (Some(line), Some(column))
                }
                None => (line, column),
            };
            YamlProblem {
                message,
                line,
                column,
            }
        })
}

/// yaml_serde's own nesting limit; [`too_deep`] applies it before libyaml
/// runs, because libyaml's time grows with the square of flow nesting.
pub(crate) const MAX_DEPTH: usize = 128;
pub(crate) const DEPTH_MESSAGE: &str =
    "invalid YAML: nested deeper than 128 levels (recursion limit exceeded)";

/// Byte offset of the first `[` or `{` that opens more than [`MAX_DEPTH`]
/// flow levels. Brackets inside quotes and comments count too: a scanner
/// that tried to skip them could be fooled by a stray `'` into letting a
/// deep document through, and no real front-matter has 128 unclosed
/// brackets in its text.
pub(crate) fn too_deep(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (offset, byte) in text.bytes().enumerate() {
        match byte {
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Some(offset);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// `… at position N` at the end of a message: (N, length of that suffix).
fn byte_position(message: &str) -> Option<(usize, usize)> {
    let start = message.rfind(" at position ")?;
    let offset = message[start + " at position ".len()..].parse().ok()?;
    Some((offset, message.len() - start))
}

/// 1-based line and column (in characters) of a byte offset.
pub(crate) fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |at| at + 1);
    (
        before.matches('\n').count() + 1,
        before[line_start..].chars().count() + 1,
    )
}

fn charge<E: de::Error>(budget: &Cell<usize>, extra_bytes: usize) -> Result<(), E> {
    let cost = VALUE_COST.saturating_add(extra_bytes);
    match budget.get().checked_sub(cost) {
        Some(left) => {
            budget.set(left);
            Ok(())
        }
        None => Err(E::custom(BUDGET_MESSAGE)),
    }
}

#[derive(Clone, Copy)]
struct Node<'a> {
    budget: &'a Cell<usize>,
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a YAML value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        charge(self.budget, 0)?;
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        charge(self.budget, 0)?;
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        charge(self.budget, 0)?;
        Ok(Value::Number(v.into()))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Value, E> {
        Err(E::custom(format!("integer `{v}` is out of range")))
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Value, E> {
        Err(E::custom(format!("integer `{v}` is out of range")))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        charge(self.budget, 0)?;
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("`.nan` and `.inf` are not supported"))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        charge(self.budget, v.len())?;
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        charge(self.budget, v.len())?;
        Ok(Value::String(v))
    }

    fn visit_bytes<E: de::Error>(self, _: &[u8]) -> Result<Value, E> {
        Err(E::custom("binary values are not supported"))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        charge(self.budget, 0)?;
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        charge(self.budget, 0)?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        charge(self.budget, 0)?;
        let mut object = Map::new();
        while let Some(key) = map.next_key_seed(Key {
            budget: self.budget,
        })? {
            let value = map.next_value_seed(self)?;
            if object.contains_key(&key) {
                return Err(de::Error::custom(format!("duplicate key `{key}`")));
            }
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }

    fn visit_enum<A: de::EnumAccess<'de>>(self, _: A) -> Result<Value, A::Error> {
        Err(de::Error::custom(
            "YAML tags such as `!name` are not supported",
        ))
    }
}

/// Mapping keys become strings; scalar keys such as `1` or `true` keep the
/// text JSON would give them.
#[derive(Clone, Copy)]
struct Key<'a> {
    budget: &'a Cell<usize>,
}

impl<'de> DeserializeSeed<'de> for Key<'_> {
    type Value = String;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Key<'_> {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a scalar mapping key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        charge(self.budget, v.len())?;
        Ok(v.to_owned())
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<String, E> {
        charge(self.budget, v.len())?;
        Ok(v)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<String, E> {
        self.visit_string(v.to_string())
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<String, E> {
        self.visit_string(v.to_string())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<String, E> {
        self.visit_string(v.to_string())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<String, E> {
        self.visit_string(v.to_string())
    }

    fn visit_unit<E: de::Error>(self) -> Result<String, E> {
        self.visit_string("null".to_owned())
    }

    fn visit_none<E: de::Error>(self) -> Result<String, E> {
        self.visit_unit()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<String, A::Error> {
        Err(de::Error::custom(
            "mapping keys must be scalars, got a sequence",
        ))
    }

    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<String, A::Error> {
        Err(de::Error::custom(
            "mapping keys must be scalars, got a mapping",
        ))
    }

    fn visit_enum<A: de::EnumAccess<'de>>(self, _: A) -> Result<String, A::Error> {
        Err(de::Error::custom(
            "YAML tags such as `!name` are not supported",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_documents_parse() {
        let value = match parse("a: 1\nb: [x, true, 1.5]\nc:\n") {
            Ok(v) => v,
            Err(p) => panic!("{}", p.message),
        };
        assert_eq!(
            value,
            serde_json::json!({"a": 1, "b": ["x", true, 1.5], "c": null})
        );
        assert!(matches!(parse("\n# only a comment\n"), Ok(Value::Null)));
    }

    #[test]
    fn alias_bombs_stop_quickly() {
        let mut bomb = String::from(
            "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
        );
        let names: Vec<char> = "bcdefghijk".chars().collect();
        let mut previous = 'a';
        for name in names {
            bomb.push_str(&format!(
                "{name}: &{name} [*{previous},*{previous},*{previous},*{previous},*{previous},*{previous},*{previous},*{previous},*{previous}]\n"
            ));
            previous = name;
        }
        // Stopped by a count, not a clock: yaml_serde's alias repetition
        // limit or this module's budget of built values.
        let problem = match parse(&bomb) {
            Ok(_) => panic!("the bomb was expanded"),
            Err(problem) => problem,
        };
        assert!(
            problem.message.contains("repetition limit exceeded")
                || problem.message.contains(BUDGET_MESSAGE),
            "{}",
            problem.message
        );
    }

    #[test]
    fn one_big_anchor_repeated_hits_the_budget() {
        // Few aliases (so yaml_serde's jump limit does not fire) to a large
        // string: only the budget stops this.
        let big = "x".repeat(600_000);
        let mut text = format!("a: &a \"{big}\"\nb: [");
        for _ in 0..200 {
            text.push_str("*a,");
        }
        text.push_str("*a]\n");
        let problem = match parse(&text) {
            Ok(_) => panic!("expanded 120 MB"),
            Err(problem) => problem,
        };
        assert!(
            problem.message.contains(BUDGET_MESSAGE),
            "{}",
            problem.message
        );
    }

    #[test]
    fn deep_nesting_is_refused() {
        let text = format!("a: {}{}\n", "[".repeat(1_000), "]".repeat(1_000));
        let problem = match parse(&text) {
            Ok(_) => panic!("accepted 10000 levels"),
            Err(problem) => problem,
        };
        assert!(
            problem.message.contains("recursion limit exceeded"),
            "{}",
            problem.message
        );
    }
}
