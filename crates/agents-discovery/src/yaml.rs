//! Front-matter YAML to JSON with a hard budget.
//!
//! yaml_serde limits nesting (128 levels) and alias jumps (100 per event),
//! but a few kilobytes of anchors and aliases can still expand into millions
//! of values ("billion laughs"). Every value built here is charged against a
//! budget ([`agents_core::walk`]), so both the time and the memory spent on
//! one file stay bounded whatever the aliases expand to; a key repeated in a
//! map is refused, pointing at it.

use std::collections::HashMap;
use std::fmt;

use agents_core::walk::Walk;
use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};

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

/// One YAML document as JSON. A document with no content is `Value::Null`.
pub(crate) struct Parsed {
    pub value: Value,
    /// An integer wider than 64 bits, `.inf` or `.nan` was built as a
    /// placeholder string (their text is read by [`scalar_texts`]).
    pub loosened: bool,
}

/// Where in `value` the first placeholder of [`parse`] is left, as the
/// path below it (`.properties.n.default`, `[2]`; empty for `value`
/// itself). The path is built only for the one found: built at every level
/// of a deep document with long keys, it would cost the square.
pub(crate) fn placeholder_at(value: &Value) -> Option<String> {
    enum Step<'v> {
        Key(&'v str),
        Index(usize),
    }
    fn find(value: &Value) -> Option<Vec<Step<'_>>> {
        match value {
            Value::String(text) => text
                .starts_with(agents_core::walk::LOOSE_MARK)
                .then(Vec::new),
            Value::Array(items) => items.iter().enumerate().find_map(|(index, item)| {
                let mut steps = find(item)?;
                steps.push(Step::Index(index));
                Some(steps)
            }),
            Value::Object(map) => map.iter().find_map(|(key, item)| {
                let mut steps = find(item)?;
                steps.push(Step::Key(key));
                Some(steps)
            }),
            Value::Null | Value::Bool(_) | Value::Number(_) => None,
        }
    }
    let steps = find(value)?;
    let mut path = String::new();
    for step in steps.iter().rev() {
        match step {
            Step::Key(key) => {
                path.push('.');
                path.push_str(key);
            }
            Step::Index(index) => path.push_str(&format!("[{index}]")),
        }
    }
    Some(path)
}

/// Parses one YAML document into JSON, numbers JSON cannot hold as
/// placeholders ([`agents_core::walk::LOOSE_MARK`]: a reader takes the
/// text of those in text fields, and refuses the others,
/// [`placeholder_at`]).
pub(crate) fn parse(text: &str) -> Result<Parsed, YamlProblem> {
    let walk = Walk::new(BUDGET, VALUE_COST, BUDGET_MESSAGE).loose_numbers();
    let deserializer = yaml_serde::Deserializer::from_str(text);
    let value = walk.json().deserialize(deserializer).map_err(|err| {
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
    })?;
    Ok(Parsed {
        value,
        loosened: walk.loosened(),
    })
}

/// Which scalars [`scalar_texts`] reads as written: the top-level `fields`
/// and the values of the top-level mapping `map`.
pub(crate) struct Wanted<'a> {
    pub fields: &'a [&'a str],
    pub map: &'a str,
}

/// The source text of scalars [`parse`] read as something else.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct ScalarTexts {
    /// Top-level field → its scalar as written.
    pub fields: HashMap<String, String>,
    /// Key of the [`Wanted::map`] mapping → its scalar as written.
    pub map: HashMap<String, String>,
}

/// Reads `text` a second time, taking each wanted scalar as its text (a
/// plain `1.10` is `"1.10"`, `0x1F` is `"0x1F"`, `true` is `"true"`):
/// YAML's typed reading of plain scalars loses what was written. `shape` is
/// what [`parse`] built of the same text (a mapping), so the reader knows
/// which values are scalars before it reads them; null scalars are left out
/// (their text is no value). Only run on text [`parse`] accepted, so its
/// budget already bounds this walk.
pub(crate) fn scalar_texts(
    text: &str,
    shape: &Map<String, Value>,
    wanted: &Wanted<'_>,
) -> Option<ScalarTexts> {
    let deserializer = yaml_serde::Deserializer::from_str(text);
    deserializer.deserialize_map(Top { shape, wanted }).ok()
}

fn is_text(value: Option<&Value>) -> bool {
    matches!(
        value,
        Some(Value::Bool(_) | Value::Number(_) | Value::String(_))
    )
}

struct Top<'a> {
    shape: &'a Map<String, Value>,
    wanted: &'a Wanted<'a>,
}

impl<'de> Visitor<'de> for Top<'_> {
    type Value = ScalarTexts;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a mapping")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ScalarTexts, A::Error> {
        let mut texts = ScalarTexts::default();
        while let Some(key) = map.next_key::<String>()? {
            let shape = self.shape.get(&key);
            if self.wanted.fields.contains(&key.as_str()) && is_text(shape) {
                let text = map.next_value_seed(AsText)?;
                texts.fields.insert(key, text);
            } else if key == self.wanted.map
                && let Some(Value::Object(entries)) = shape
            {
                texts.map = map.next_value_seed(Entries { shape: entries })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(texts)
    }
}

struct Entries<'a> {
    shape: &'a Map<String, Value>,
}

impl<'de> DeserializeSeed<'de> for Entries<'_> {
    type Value = HashMap<String, String>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Entries<'_> {
    type Value = HashMap<String, String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a mapping")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut texts = HashMap::new();
        while let Some(key) = map.next_key::<String>()? {
            if is_text(self.shape.get(&key)) {
                let text = map.next_value_seed(AsText)?;
                texts.insert(key, text);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(texts)
    }
}

/// A scalar as written (`deserialize_str` hands over any scalar's text).
struct AsText;

impl<'de> DeserializeSeed<'de> for AsText {
    type Value = String;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        String::deserialize(deserializer)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_documents_parse() {
        let value = match parse("a: 1\nb: [x, true, 1.5]\nc:\n") {
            Ok(v) => v.value,
            Err(p) => panic!("{}", p.message),
        };
        assert_eq!(
            value,
            serde_json::json!({"a": 1, "b": ["x", true, 1.5], "c": null})
        );
        assert!(matches!(
            parse("\n# only a comment\n"),
            Ok(Parsed {
                value: Value::Null,
                ..
            })
        ));
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
