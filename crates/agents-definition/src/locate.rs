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
    seek(deserializer, &steps, false)
}

/// The byte index the walk down `steps` fails at in `document`: the value
/// they lead to (with `at_key`, the last step's key), or the nearest
/// enclosing value.
fn seek(document: yaml_serde::Deserializer<'_>, steps: &[Step], at_key: bool) -> Option<usize> {
    match (Seek { steps, at_key }).deserialize(document) {
        Ok(()) => None,
        Err(err) => err.location().map(|at| at.index()),
    }
}

/// A field path's steps as the walk takes them.
fn path_steps(path: &agents_core::FieldPath) -> Vec<Step> {
    path.steps
        .iter()
        .map(|step| match step {
            agents_core::FieldStep::Key(key) => Step::Key(key.clone()),
            agents_core::FieldStep::Index(index) => Step::Index(*index),
        })
        .collect()
}

/// Where each of `wanted` (a 1-based document number and a field of it) is
/// written in `text`: the byte index of the field's value (of its last key,
/// for a path `at_key`), or of the nearest enclosing value the walk
/// reaches; `None` where the document is not there.
///
/// The parse keeps no positions, so the stream is read again, once, up to
/// the last document asked for; only the documents asked for are walked.
/// A document asked for one field is walked once in that read. One asked
/// for several is cut out of the text where its top value starts, and each
/// field walks that document alone (its events are read again, not the
/// stream's before it): the cost is one read of the stream plus the size of
/// those documents times the fields asked of them.
pub(crate) fn locate_all(
    text: &str,
    wanted: &[(usize, &agents_core::FieldPath)],
) -> Vec<Option<usize>> {
    let mut found = vec![None; wanted.len()];
    let mut by_document: std::collections::BTreeMap<usize, Vec<usize>> =
        std::collections::BTreeMap::new();
    for (at, (document, _)) in wanted.iter().enumerate() {
        by_document.entry(*document).or_default().push(at);
    }
    let Some(&last) = by_document.keys().next_back() else {
        return found;
    };
    for (index, document) in yaml_serde::Deserializer::from_str(text).enumerate() {
        let number = index + 1;
        if number > last {
            break;
        }
        let Some(asked) = by_document.get(&number) else {
            continue;
        };
        match asked.as_slice() {
            [one] => {
                if let (Some(slot), Some((_, path))) = (found.get_mut(*one), wanted.get(*one)) {
                    *slot = seek(document, &path_steps(path), path.at_key);
                }
            }
            many => {
                // Where the document's top value starts: the walk down no
                // steps fails there.
                let Some(value) = seek(document, &[], false) else {
                    continue;
                };
                // From the start of its line: a map indented under `---`
                // cut at its first key would lose the indentation its
                // other keys share, and read as another document.
                let start = text
                    .get(..value)
                    .and_then(|before| before.rfind('\n'))
                    .map_or(0, |newline| newline + 1);
                let Some(rest) = text.get(start..) else {
                    continue;
                };
                for &at in many {
                    let (Some(slot), Some((_, path))) = (found.get_mut(at), wanted.get(at)) else {
                        continue;
                    };
                    // The first document of the rest is this one: only its
                    // events are read.
                    *slot = yaml_serde::Deserializer::from_str(rest)
                        .next()
                        .and_then(|document| seek(document, &path_steps(path), path.at_key))
                        .map(|index| index + start);
                }
            }
        }
    }
    found
}

/// Walks down `steps` and fails at the value they lead to (with `at_key`,
/// at the last step's key).
struct Seek<'s> {
    steps: &'s [Step],
    at_key: bool,
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
        // The key itself is what is sought: the walk fails at it.
        let stop_at = (self.at_key && rest.is_empty()).then_some(wanted.as_str());
        while let Some(key) = map.next_key_seed(KeySeed { stop_at })? {
            if key.0.as_deref() == Some(wanted.as_str()) {
                return map.next_value_seed(Seek {
                    steps: rest,
                    at_key: self.at_key,
                });
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
        match seq.next_element_seed(Seek {
            steps: rest,
            at_key: self.at_key,
        })? {
            Some(()) => Ok(()),
            None => Err(de::Error::custom(FOUND)),
        }
    }
}

/// A map key as text, or `None` for a key that is not a string.
struct KeyText(Option<String>);

/// Reads a map key as [`KeyText`], and fails at it when it is `stop_at`.
struct KeySeed<'s> {
    stop_at: Option<&'s str>,
}

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = KeyText;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<KeyText, D::Error> {
        struct Text<'s>(Option<&'s str>);
        impl Text<'_> {
            fn key<E: de::Error>(&self, key: Option<String>) -> Result<KeyText, E> {
                if key.is_some() && key.as_deref() == self.0 {
                    return Err(E::custom(FOUND));
                }
                Ok(KeyText(key))
            }
        }
        impl Visitor<'_> for Text<'_> {
            type Value = KeyText;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<KeyText, E> {
                self.key(Some(v.to_owned()))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<KeyText, E> {
                Ok(KeyText(None))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<KeyText, E> {
                self.key(Some(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<KeyText, E> {
                self.key(Some(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<KeyText, E> {
                Ok(KeyText(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<KeyText, E> {
                Ok(KeyText(None))
            }
        }
        deserializer.deserialize_any(Text(self.stop_at))
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

    fn path(at_key: bool, steps: &[agents_core::FieldStep]) -> agents_core::FieldPath {
        agents_core::FieldPath {
            steps: steps.to_vec(),
            at_key,
        }
    }

    #[test]
    fn several_fields_of_several_documents_are_found_in_one_read() {
        use agents_core::FieldStep::{Index, Key};
        let key = |k: &str| Key(k.to_owned());
        // An empty document counts: the parse numbers documents so too.
        let text = "name: a/one\ntools: [x, y]\n---\n---\n# c\nname: a/three\ntools:\n  - t/one\n  - t/two\nincludes:\n  - a/x\n  - skill: a/y\noverrides:\n  t.two:\n    read_only: 1\n";
        let tools_1 = path(false, &[key("tools"), Index(1)]);
        let tool = path(false, &[key("tools"), Index(1)]);
        let short_include = path(false, &[key("includes"), Index(0), key("skill")]);
        let long_include = path(false, &[key("includes"), Index(1), key("skill")]);
        let target = path(true, &[key("overrides"), key("t.two")]);
        let field = path(true, &[key("overrides"), key("t.two"), key("read_only")]);
        let gone = path(true, &[key("overrides"), key("t.three")]);
        let wanted = [
            (3, &tool),
            (1, &tools_1),
            (3, &short_include),
            (3, &long_include),
            (3, &target),
            (3, &field),
            (3, &gone),
            (9, &tool),
        ];
        let found = locate_all(text, &wanted);
        let at = |i: usize| {
            found[i].map(|at| {
                let (line, column) = agents_core::text::yaml_mark_position(text, at);
                (line, column)
            })
        };
        assert_eq!(at(0), Some((9, 5)));
        assert_eq!(at(1), Some((2, 12)));
        assert_eq!(at(2), Some((11, 5)));
        assert_eq!(at(3), Some((12, 12)));
        assert_eq!(at(4), Some((14, 3)));
        assert_eq!(at(5), Some((15, 5)));
        // Not there: the map that would hold it.
        assert_eq!(at(6).map(|(line, _)| line), Some(14));
        assert_eq!(at(7), None);
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
