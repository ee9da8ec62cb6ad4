//! YAML text for people's terminals that reads back as what was written.
//!
//! The emitter writes a character YAML calls printable as it is, in any
//! scalar style: a bidi override (U+202E) or a zero-width space in a plain
//! scalar, a tab inside a literal block. A terminal would then show text in
//! another order than it runs (and the CLI's last step, which escapes such
//! characters for display, would turn them into backslash text that reads
//! back as something else). So every such character (see
//! [`agents_core::text::is_hidden`]; a line break aside) is written as a
//! YAML escape, `\u202E`, inside a double-quoted scalar.
//!
//! The emitter quotes a string a YAML 1.2 reader would take for another
//! type (`true`, `null`, `1e3`), but writes plain what only YAML 1.1 gives
//! another type, and most YAML readers in use are 1.1 ones (PyYAML, Ruby's
//! Psych, Go's yaml.v2): an override `approval: no` read as `false`, an enum
//! value `yes` as `true`, `2024-01-01` as a date. Such strings are quoted
//! too (see [`yaml_1_1_typed`]).
//!
//! The emitter chooses the style, so the trick is to make it choose double
//! quotes: each hidden character goes in as a marker of non-printable
//! characters (which the emitter can only write double-quoted, as `\x01`),
//! and the markers come out as the character's own escape; a string to
//! quote starts with an empty marker, which comes out as nothing.

use agents_core::text::is_hidden;
use serde::Serialize;
use serde_json::Value;

/// Starts and ends a marker; the emitter writes it as `\x01`.
const MARK: char = '\u{1}';
/// How the emitter writes [`MARK`].
const MARK_ESCAPED: &str = "\\x01";

/// The empty marker: the string it starts is written double-quoted.
const QUOTE: &str = "\u{1}------\u{1}";
/// How the emitter writes [`QUOTE`].
const QUOTE_ESCAPED: &str = "\\x01------\\x01";
/// The marker of a number written as text: its string comes out unquoted.
const NUMBER: &str = "\u{1}++++++\u{1}";
/// How the emitter writes [`NUMBER`], after the opening quote.
const NUMBER_ESCAPED: &str = "\"\\x01++++++\\x01";

/// `value` as YAML with every hidden character (other than a line break)
/// escaped in a double-quoted scalar, and every string a YAML 1.1 reader
/// would take for another type quoted. Text without either is what the
/// emitter writes anyway.
pub fn yaml_text<T: Serialize + ?Sized>(value: &T) -> Result<String, yaml_serde::Error> {
    let mut tree =
        serde_json::to_value(value).map_err(<yaml_serde::Error as serde::ser::Error>::custom)?;
    if !mark(&mut tree) {
        return yaml_serde::to_string(value);
    }
    let marked = yaml_serde::to_string(&tree)?;
    Ok(unmark(&marked))
}

fn needs_escape(c: char) -> bool {
    c != '\n' && is_hidden(c)
}

/// Whether a YAML 1.1 reader takes `text`, written plain, for something
/// other than this string: a 1.1 boolean (`yes`, `off`, `y`), the merge key
/// `<<` or the value key `=`, or text starting like a number (a date
/// `2024-01-01`, `1_000`, sexagesimal `1:30`, `.5`, `+1`). Words YAML 1.2
/// types too (`true`, `null`, `~`) the emitter quotes itself. Quoting all
/// text that starts with a digit also quotes some that 1.1 would read as
/// text (`1.0.0`): harmless, and one rule instead of 1.1's regular
/// expressions.
fn yaml_1_1_typed(text: &str) -> bool {
    const WORDS: &[&str] = &[
        "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off",
        "OFF", "<<", "=",
    ];
    if WORDS.contains(&text) {
        return true;
    }
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    let digits = unsigned.strip_prefix('.').unwrap_or(unsigned);
    digits.starts_with(|c: char| c.is_ascii_digit())
}

/// A float as text both YAML 1.1 and 1.2 read as that float, where the
/// emitter's own would be a string to 1.1: its exponent form (`1e300`,
/// `1.5e-7`) lacks the dot and the exponent sign 1.1 requires
/// (`1.0e+300`, `1.5e-7`).
fn yaml_1_1_float(number: &serde_json::Number) -> Option<String> {
    if !number.is_f64() {
        return None;
    }
    let text = number.to_string();
    let (mantissa, exponent) = text.split_once(['e', 'E'])?;
    let dot = if mantissa.contains('.') { "" } else { ".0" };
    let sign = if exponent.starts_with(['-', '+']) {
        ""
    } else {
        "+"
    };
    Some(format!("{mantissa}{dot}e{sign}{exponent}"))
}

/// Marks every hidden character of every string and key as
/// `MARK hex MARK`, and starts every string or key to quote with
/// [`QUOTE`]; whether anything was marked.
fn mark(value: &mut Value) -> bool {
    match value {
        Value::String(text) => match marked(text) {
            Some(marked) => {
                *text = marked;
                true
            }
            None => false,
        },
        Value::Array(items) => items.iter_mut().fold(false, |any, item| mark(item) | any),
        Value::Object(map) => {
            if map.keys().any(|key| marked(key).is_some()) {
                let entries = std::mem::take(map);
                for (key, mut item) in entries {
                    mark(&mut item);
                    map.insert(marked(&key).unwrap_or(key), item);
                }
                true
            } else {
                map.values_mut().fold(false, |any, item| mark(item) | any)
            }
        }
        Value::Number(number) => match yaml_1_1_float(number) {
            Some(text) => {
                *value = Value::String(format!("{NUMBER}{text}"));
                true
            }
            None => false,
        },
        Value::Null | Value::Bool(_) => false,
    }
}

fn marked(text: &str) -> Option<String> {
    // Text that spells a marker's escape (`\x01`) is double-quoted too, so
    // the emitter writes its backslash escaped (`\\x01`), which `unmark`
    // tells from a marker.
    let quote = yaml_1_1_typed(text) || text.contains(MARK_ESCAPED);
    if !quote && !text.chars().any(needs_escape) {
        return None;
    }
    let mut out = String::with_capacity(text.len() + 16);
    if quote {
        out.push_str(QUOTE);
    }
    for c in text.chars() {
        if needs_escape(c) {
            out.push(MARK);
            out.push_str(&format!("{:06X}", u32::from(c)));
            out.push(MARK);
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// Each `\x01XXXXXX\x01` the emitter wrote back as the character's YAML
/// escape (`\t`, `\u202E`, `\U0001F5FF`).
fn unmark(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(MARK_ESCAPED) {
        let (before, after) = rest.split_at(at);
        // Text that holds a backslash and `x01` itself is written `\\x01`:
        // a backslash escaped by another one starts no marker.
        if before.bytes().rev().take_while(|b| *b == b'\\').count() % 2 == 1 {
            out.push_str(before);
            out.push_str(MARK_ESCAPED);
            rest = after.get(MARK_ESCAPED.len()..).unwrap_or_default();
            continue;
        }
        // A number's text: the quotes around it go (it holds neither a
        // quote nor an escape).
        if let Some(quoted) = before.strip_suffix('"')
            && let Some(number) = rest
                .get(quoted.len()..)
                .and_then(|r| r.strip_prefix(NUMBER_ESCAPED))
            && let Some((digits, after)) = number.split_once('"')
        {
            out.push_str(quoted);
            out.push_str(digits);
            rest = after;
            continue;
        }
        out.push_str(before);
        if let Some(after) = after.strip_prefix(QUOTE_ESCAPED) {
            rest = after;
            continue;
        }
        let after = after.get(MARK_ESCAPED.len()..).unwrap_or_default();
        let hex = after.get(..6).unwrap_or_default();
        let closed = after.get(6..6 + MARK_ESCAPED.len()) == Some(MARK_ESCAPED);
        match u32::from_str_radix(hex, 16).ok().filter(|_| closed) {
            Some(code) => {
                match code {
                    0x09 => out.push_str("\\t"),
                    0x0d => out.push_str("\\r"),
                    0..=0xffff => out.push_str(&format!("\\u{code:04X}")),
                    _ => out.push_str(&format!("\\U{code:08X}")),
                }
                rest = after.get(6 + MARK_ESCAPED.len()..).unwrap_or_default();
            }
            None => {
                // Not one of ours (cannot happen: every U+0001 of the input
                // was marked itself); kept as the emitter wrote it.
                out.push_str(MARK_ESCAPED);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn hidden_characters_read_back_and_show_as_escapes() {
        let value = json!({
            "bidi": "evil\u{202e}rev",
            "zero": "zero\u{200b}width",
            "block": "line one\n\tline two\n",
            "controls": "a\u{1}b\u{7}c\u{7f}d\u{feff}",
            "plain": "nothing to hide",
            "key\u{2066}": ["x\u{61c}y", 1, true, null],
        });
        let text = yaml_text(&value).unwrap();
        assert!(!text.chars().any(needs_escape), "{text}");
        assert!(text.contains("\"evil\\u202Erev\""), "{text}");
        assert!(text.contains("plain: nothing to hide"), "{text}");
        let back: Value = yaml_serde::from_str(&text).unwrap();
        assert_eq!(back, value, "{text}");
    }

    #[test]
    fn what_yaml_1_1_types_is_quoted_and_reads_back() {
        let value = json!({
            "approval": "no",
            "enum": ["yes", "On", "y", "<<", "="],
            "date": "2024-01-01",
            "underscored": "1_000",
            "sexagesimal": "1:30",
            "version": "1.10",
            "dot": ".5",
            "signed": "-1x",
            "yes": "text",
            "plain": "nothing to quote",
            "number": 3,
            "flag": false,
            "floats": [1e300, 1.5e-7, 2.5, -1e-300],
        });
        let text = yaml_text(&value).unwrap();
        for line in [
            "approval: \"no\"",
            "- \"yes\"",
            "- \"On\"",
            "- \"y\"",
            "- \"<<\"",
            "- \"=\"",
            "date: \"2024-01-01\"",
            "underscored: \"1_000\"",
            "sexagesimal: \"1:30\"",
            "version: \"1.10\"",
            "dot: \".5\"",
            "signed: \"-1x\"",
            "\"yes\": text",
            "plain: nothing to quote",
            "number: 3",
            "flag: false",
            "- 1.0e+300",
            "- 1.5e-7",
            "- 2.5",
            "- -1.0e-300",
        ] {
            assert!(text.lines().any(|l| l.trim() == line), "{line} in\n{text}");
        }
        let back: Value = yaml_serde::from_str(&text).unwrap();
        assert_eq!(back, value, "{text}");
    }

    #[test]
    fn text_that_spells_a_marker_reads_back() {
        let value = json!({
            "spelled": "a\\x01------\\x01b",
            "hex": "c\\x01000041\\x01d",
            "number": "\\x01++++++\\x011",
            "with": "yes",
            "hidden": "e\u{202e}f\\x01------\\x01",
        });
        let text = yaml_text(&value).unwrap();
        let back: Value = yaml_serde::from_str(&text).unwrap();
        assert_eq!(back, value, "{text}");
    }

    #[test]
    fn text_without_them_is_the_emitters() {
        let value = json!({"a": "b\nc", "d": [1, 2]});
        assert_eq!(
            yaml_text(&value).unwrap(),
            yaml_serde::to_string(&value).unwrap()
        );
    }
}
