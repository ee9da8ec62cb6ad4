//! Where a field is written, for problems found after the typed parse
//! (a skill's validation, a tool's schema check): their errors then point at
//! a line as the parser's own do.
//!
//! The parser keeps no positions in what it builds, but an error it reports
//! carries the position of the value being read. So the document is read
//! again, only down the field's path, and the walk fails on purpose at the
//! field's value; the position of that failure is the field's. Only a
//! document that failed is read again, once.

use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// One step of a field path: a map key or a list index.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
}

/// `field` (as validation names it: `tools[0]`, `includes[1].overrides`,
/// `mcp_sources[0].url`, `overrides.TOOL`) as steps. A key of `overrides` is
/// one step whatever it holds: tool names may hold dots.
fn steps(field: &str) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut rest = field;
    while !rest.is_empty() {
        if let Some(key) = rest.strip_prefix("overrides.") {
            steps.push(Step::Key("overrides".into()));
            steps.push(Step::Key(key.to_owned()));
            break;
        }
        let (part, after) = rest.split_once('.').unwrap_or((rest, ""));
        match part.split_once('[') {
            Some((key, index)) => {
                steps.push(Step::Key(key.to_owned()));
                match index.strip_suffix(']').and_then(|i| i.parse().ok()) {
                    Some(index) => steps.push(Step::Index(index)),
                    None => break,
                }
            }
            None => steps.push(Step::Key(part.to_owned())),
        }
        rest = after;
    }
    steps
}

/// The byte index, in `text`, of the value of `field` in document
/// `document` (1-based), or of the nearest enclosing value the path reaches
/// (a key cut short in a message is not found; its map is).
pub(crate) fn locate(text: &str, document: usize, field: &str) -> Option<usize> {
    let steps = steps(field);
    let deserializer = yaml_serde::Deserializer::from_str(text).nth(document.checked_sub(1)?)?;
    match (Seek { steps: &steps }).deserialize(deserializer) {
        Ok(()) => None,
        Err(err) => err.location().map(|at| at.index()),
    }
}

/// Walks down `steps` and fails at the value they lead to.
struct Seek<'s> {
    steps: &'s [Step],
}

/// The walk's deliberate failure (never shown: only its position is used).
const FOUND: &str = "found";

impl<'de> DeserializeSeed<'de> for Seek<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        if self.steps.is_empty() {
            // Any value is refused, at its own position.
            return deserializer.deserialize_any(Here);
        }
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seek<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map or a list")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Some((Step::Key(wanted), rest)) = self.steps.split_first() else {
            return Err(de::Error::custom(FOUND));
        };
        while let Some(key) = map.next_key::<KeyText>()? {
            if key.0.as_deref() == Some(wanted.as_str()) {
                return map.next_value_seed(Seek { steps: rest });
            }
            map.next_value::<IgnoredAny>()?;
        }
        // Not there (a key cut short): the end of this map is as near as
        // the walk gets.
        Err(de::Error::custom(FOUND))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Some((Step::Index(wanted), rest)) = self.steps.split_first() else {
            return Err(de::Error::custom(FOUND));
        };
        for _ in 0..*wanted {
            if seq.next_element::<IgnoredAny>()?.is_none() {
                return Err(de::Error::custom(FOUND));
            }
        }
        match seq.next_element_seed(Seek { steps: rest })? {
            Some(()) => Ok(()),
            None => Err(de::Error::custom(FOUND)),
        }
    }
}

/// A map key as text, or `None` for a key that is not a string.
struct KeyText(Option<String>);

impl<'de> de::Deserialize<'de> for KeyText {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Text;
        impl Visitor<'_> for Text {
            type Value = KeyText;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<KeyText, E> {
                Ok(KeyText(Some(v.to_owned())))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<KeyText, E> {
                Ok(KeyText(None))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<KeyText, E> {
                Ok(KeyText(Some(v.to_string())))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<KeyText, E> {
                Ok(KeyText(Some(v.to_string())))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<KeyText, E> {
                Ok(KeyText(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<KeyText, E> {
                Ok(KeyText(None))
            }
        }
        deserializer.deserialize_any(Text)
    }
}

/// Refuses whatever value it is handed.
struct Here;

impl Visitor<'_> for Here {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(FOUND)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn line_of(text: &str, document: usize, field: &str) -> Option<usize> {
        locate(text, document, field).map(|at| text[..at].matches('\n').count() + 1)
    }

    #[test]
    fn fields_are_found_where_they_are_written() {
        let text = "name: a/one\n---\nname: a/two\ndescription: x\ntools:\n  - t/one\n  - t/two\nincludes:\n  - a/one\n  - skill: a/three\n    overrides: {k: 1}\noverrides:\n  tool.with.dots: {k: 2}\nmcp_sources:\n  - server: s\n    url: ftp://x\n";
        assert_eq!(line_of(text, 2, "description"), Some(4));
        assert_eq!(line_of(text, 2, "tools[1]"), Some(7));
        assert_eq!(line_of(text, 2, "includes[1].overrides"), Some(11));
        assert_eq!(line_of(text, 2, "overrides.tool.with.dots"), Some(13));
        assert_eq!(line_of(text, 2, "mcp_sources[0].url"), Some(16));
        assert_eq!(line_of(text, 1, "name"), Some(1));
    }

    #[test]
    fn a_path_not_there_stops_nearby_or_finds_nothing() {
        let text = "name: a/b\noverrides:\n  t: {k: 1}\nother: 1\n";
        // A key cut short in a message: the map holding it.
        assert!(line_of(text, 1, "overrides.t…").is_some());
        assert_eq!(line_of(text, 3, "name"), None);
        assert_eq!(line_of(text, 0, "name"), None);
        assert_eq!(steps("tools[x]"), vec![Step::Key("tools".into())]);
    }
}
