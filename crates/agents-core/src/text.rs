//! Making untrusted text safe and short enough to print.
//!
//! Names, descriptions and source lines come from files and databases other
//! people control. Before any of it reaches a terminal or an error message it
//! goes through [`escape_control`] (no raw control characters, NULs or
//! terminal escape sequences) and [`shorten`] (a bounded number of bytes).

use std::borrow::Cow;
use std::fmt::Write as _;

/// The longest echoed name or value in an error message, in bytes.
pub const MAX_ECHO_BYTES: usize = 200;

/// The candidate closest to `unknown`, if one is close enough to be a
/// likely typo (edit distance with transpositions, at most a quarter of the
/// name and never more than 3; the first by name among equally close ones).
pub fn did_you_mean<'a, S: AsRef<str>>(unknown: &str, candidates: &'a [S]) -> Option<&'a str> {
    let chars = unknown.chars().count();
    let limit = (chars / 4).clamp(1, 3);
    candidates
        .iter()
        .map(AsRef::as_ref)
        // The distance is at least the difference in length: a name that
        // much longer or shorter is no candidate, and costs no edit matrix.
        .filter(|name| name.chars().count().abs_diff(chars) <= limit)
        .map(|name| (strsim::damerau_levenshtein(unknown, name), name))
        .filter(|(distance, _)| *distance <= limit)
        .min_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)))
        .map(|(_, name)| name)
}

/// Cuts `lines` to its first `max`, then one line from `more(how many
/// were cut)`, so a list of problems a hostile input can make endless is
/// shown in a few KiB. Returns how many lines there were in all.
pub fn cap_lines(lines: &mut Vec<String>, max: usize, more: impl FnOnce(usize) -> String) -> usize {
    let total = lines.len();
    if total > max {
        lines.truncate(max);
        lines.push(more(total - max));
    }
    total
}

/// Whether `c` is shown escaped: a control character (C0, DEL, C1), or one
/// that changes how the text around it reads without showing itself: the
/// bidirectional marks, embeddings, overrides and isolates ("Trojan Source":
/// U+202E makes `'safe' #…` of what is really `…# 'evil'`), the zero-width
/// space, the word joiner and the byte-order mark; and the characters that
/// draw nothing, by which text can ride along unseen ("ASCII smuggling": a
/// sentence spelled in Unicode tag characters U+E0020–E007E, which a
/// terminal shows as nothing and a model reads): the soft hyphen, the
/// Hangul fillers, the Mongolian vowel separator, the invisible operators
/// and deprecated format controls, the line and paragraph separators, the
/// interlinear annotation marks, the tags and the supplementary variation
/// selectors. The joiners U+200C/U+200D and the variation selectors
/// U+FE00–FE0F stay: Persian, Indic scripts and emoji need them.
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{ad}'
                | '\u{61c}'
                | '\u{115f}'
                | '\u{1160}'
                | '\u{180e}'
                | '\u{200b}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{206f}'
                | '\u{3164}'
                | '\u{feff}'
                | '\u{ffa0}'
                | '\u{fff9}'..='\u{fffb}'
                | '\u{e0000}'..='\u{e007f}'
                | '\u{e0100}'..='\u{e01ef}'
        )
}

/// Replaces every [`is_hidden`] character with a visible escape: `\n`,
/// `\r`, `\t`, `\0`, or `\u{1b}`. Other text is returned unchanged.
pub fn escape_control(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        push_escaped(&mut out, c);
    }
    Cow::Owned(out)
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\0' => out.push_str("\\0"),
        c if is_hidden(c) => {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
        c => out.push(c),
    }
}

/// At most about `max` bytes of `text`, control characters escaped. A longer
/// text is cut at a character boundary and ends with
/// `… (N bytes in all)`, so the reader knows it was cut and by how much.
pub fn shorten(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max && !text.chars().any(is_hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(max.min(text.len()) + 32);
    let mut cut = false;
    for c in text.chars() {
        if out.len() >= max {
            cut = true;
            break;
        }
        push_escaped(&mut out, c);
    }
    if cut {
        let _ = write!(out, "… ({} bytes in all)", text.len());
    }
    Cow::Owned(out)
}

/// `bytes` as lowercase hexadecimal, two digits a byte: how digests, seals
/// and ids are written.
pub fn hex(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(text, "{byte:02x}");
    }
    text
}

/// A path as a message shows it: control characters escaped, so a newline
/// in a file or folder name cannot start a forged line of output.
pub fn shown_path(path: &std::path::Path) -> String {
    // Both ends kept: the folder it is in and the file's own name.
    shorten_middle(&path.to_string_lossy(), MAX_SHOWN_PATH).into_owned()
}

/// Where a caret at `column` (0-based, in characters) of `original` stands
/// in `shown`, the line as `mask` shows it (an error's quoted source line
/// with its secrets masked): moved with the text when what precedes the
/// caret masks the same way on its own (a value masked before it is shorter
/// now). `None` when nothing was masked, or when it does not (the caret
/// pointed into what is now hidden).
pub fn masked_caret(
    original: &str,
    shown: &str,
    column: usize,
    mask: impl Fn(&str) -> String,
) -> Option<usize> {
    if shown == original {
        return None;
    }
    let before: String = original.chars().take(column).collect();
    let before = mask(&before);
    (shown.starts_with(&before) && before.len() < shown.len()).then(|| before.chars().count())
}

/// The most of a path a message shows, in bytes (see [`shown_path`]).
const MAX_SHOWN_PATH: usize = 512;

/// The longest message a parser gave about someone else's data that an
/// error keeps, in bytes (see [`shorten_middle`]).
pub const MAX_MESSAGE_BYTES: usize = 1024;

/// At most about `max` bytes of `text`, control characters escaped, keeping
/// both ends and saying how much of the middle was cut. For a parser's
/// message about untrusted data: serde's `invalid type: string "…"` quotes
/// the offending value whole, however long, and the end says what was
/// expected and where.
pub fn shorten_middle(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return escape_control(text);
    }
    let half = max / 2;
    let mut out = String::with_capacity(max + 40);
    let mut head_end = 0;
    for (at, c) in text.char_indices() {
        if out.len() >= half {
            break;
        }
        push_escaped(&mut out, c);
        head_end = at + c.len_utf8();
    }
    // The tail: as many whole characters from the end as fit in `half`
    // bytes once escaped, never reaching into the head.
    let mut one = String::new();
    let (mut tail_start, mut tail_len) = (text.len(), 0);
    for (at, c) in text.char_indices().rev() {
        if tail_len >= half || at < head_end {
            break;
        }
        one.clear();
        push_escaped(&mut one, c);
        tail_len += one.len();
        tail_start = at;
    }
    let _ = write!(out, "… ({} bytes cut) …", tail_start - head_end);
    out.push_str(&escape_control(text.get(tail_start..).unwrap_or_default()));
    Cow::Owned(out)
}

/// A message a parser or a server gave about someone else's data, cut to
/// [`MAX_MESSAGE_BYTES`] by [`shorten_middle`]: what an error keeps of it.
pub fn bounded_message(message: &str) -> String {
    shorten_middle(message, MAX_MESSAGE_BYTES).into_owned()
}

/// `text` without a leading UTF-8 byte order mark, which Windows editors
/// write and JSON and YAML parsers refuse or take as content. Lines stay as
/// they were, and columns count as an editor shows them (it hides the mark).
pub fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// 1-based line and column (in characters) in `text` of a position libyaml
/// reported, given as its mark's byte `index`.
///
/// libyaml's own line and column cannot be used: it also ends a line at a
/// lone `\r`, NEL, LS and PS, so a file with one of those got positions past
/// its real line (even past its last line). Its index counts bytes of the
/// whole input (a leading byte order mark included). Lines here end at `\n`
/// only, as editors and the echoed source line count them.
pub fn yaml_mark_position(text: &str, index: usize) -> (usize, usize) {
    let mut offset = index.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = text.get(..offset).unwrap_or_default();
    let line_start = before.rfind('\n').map_or(0, |at| at + 1);
    (
        before.bytes().filter(|b| *b == b'\n').count() + 1,
        before.get(line_start..).unwrap_or_default().chars().count() + 1,
    )
}

/// A long list as its first `head` and last `tail` items around
/// `… (N in all) …`; a short list as is. Items are joined with `separator`.
pub fn head_tail<T: AsRef<str>>(items: &[T], head: usize, tail: usize, separator: &str) -> String {
    head_tail_by(
        items.len(),
        |i| items.get(i).map_or("", AsRef::as_ref),
        head,
        tail,
        separator,
    )
}

/// [`head_tail`] of the `len` items `item(0)`, `item(1)`, …, asking only
/// for those it shows: the cost does not grow with `len`.
pub fn head_tail_by<'a>(
    len: usize,
    item: impl Fn(usize) -> &'a str,
    head: usize,
    tail: usize,
    separator: &str,
) -> String {
    let shown = |range: std::ops::Range<usize>| {
        range
            .map(|i| shorten(item(i), MAX_ECHO_BYTES).into_owned())
            .collect::<Vec<_>>()
            .join(separator)
    };
    if len <= head + tail + 1 {
        return shown(0..len);
    }
    format!(
        "{}{separator}… ({len} in all) …{separator}{}",
        shown(0..head),
        shown(len - tail..len)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_the_closest_name_only_when_close() {
        let names = ["builtin/read_file", "builtin/grep", "builtin/write_file"];
        assert_eq!(
            did_you_mean("builtin/raed_file", &names),
            Some("builtin/read_file")
        );
        assert_eq!(did_you_mean("builtin/gerp", &names), Some("builtin/grep"));
        assert_eq!(did_you_mean("local/deploy", &names), None);
        assert_eq!(did_you_mean("ecko", &["echo", "get-sum"]), Some("echo"));
    }

    #[test]
    fn names_and_paths_in_messages_are_cut() {
        let long = format!("/{}/file.yaml", "d".repeat(100_000));
        let shown = shown_path(std::path::Path::new(&long));
        assert!(shown.len() < 700, "{}", shown.len());
        assert!(
            shown.starts_with("/ddd") && shown.ends_with("/file.yaml"),
            "{shown}"
        );
        let err = crate::SkillName::new(&"b".repeat(100_000)).unwrap_err();
        assert!(err.to_string().len() < 400, "{}", err.to_string().len());
    }

    #[test]
    fn shorten_middle_keeps_both_ends() {
        assert_eq!(shorten_middle("short", 100), "short");
        assert_eq!(shorten_middle("a\u{1b}b", 100), "a\\u{1b}b");
        let long = format!(
            "invalid type: string \"{}\", expected a map at line 1 column 9",
            "A".repeat(100_000)
        );
        let shown = shorten_middle(&long, 200);
        assert!(shown.len() < 260, "{}", shown.len());
        assert!(shown.starts_with("invalid type: string \"AAA"), "{shown}");
        assert!(
            shown.ends_with("expected a map at line 1 column 9"),
            "{shown}"
        );
        assert!(shown.contains(" bytes cut) …"), "{shown}");
        // Characters are never split, and the bytes cut are counted exactly.
        let wide = "é".repeat(1_000);
        let shown = shorten_middle(&wide, 101);
        let kept = shown.chars().filter(|c| *c == 'é').count();
        assert!(
            shown.contains(&format!("({} bytes cut)", 2_000 - 2 * kept)),
            "{shown}"
        );
        // Control characters in the kept ends are escaped.
        let noisy = format!("\u{7}{}\u{7}", "x".repeat(5_000));
        let shown = shorten_middle(&noisy, 64);
        assert!(!shown.contains('\u{7}'), "{shown}");
        assert!(
            shown.starts_with("\\u{7}") && shown.ends_with("\\u{7}"),
            "{shown}"
        );
    }

    #[test]
    fn escapes_controls_and_terminal_sequences() {
        assert_eq!(escape_control("plain"), "plain");
        assert_eq!(
            escape_control("\u{1b}]0;TITLE\u{7}\u{1b}[2J\0\n\u{9b}"),
            "\\u{1b}]0;TITLE\\u{7}\\u{1b}[2J\\0\\n\\u{9b}"
        );
        // Bidi overrides and invisible characters, not the joiners.
        assert_eq!(
            escape_control("sh \u{202e}#\u{202c} safe\u{200b}\u{feff} ZW\u{200d}J"),
            "sh \\u{202e}#\\u{202c} safe\\u{200b}\\u{feff} ZW\u{200d}J"
        );
        // Text that draws nothing: a sentence in tag characters, the soft
        // hyphen, the Hangul filler, the line separator; emoji variation
        // selectors stay.
        let smuggled: String = "Ignore"
            .chars()
            .map(|c| char::from_u32(0xE0000 + u32::from(c)).unwrap())
            .collect();
        assert_eq!(
            escape_control(&format!(
                "Format{smuggled} a\u{ad}b\u{3164}c\u{2028}d \u{2764}\u{fe0f}"
            )),
            "Format\\u{e0049}\\u{e0067}\\u{e006e}\\u{e006f}\\u{e0072}\\u{e0065} a\\u{ad}b\\u{3164}c\\u{2028}d \u{2764}\u{fe0f}"
        );
    }

    #[test]
    fn shortens_with_the_full_length() {
        assert_eq!(shorten("short", 10), "short");
        let long = "é".repeat(1000);
        let cut = shorten(&long, 11);
        assert_eq!(cut, format!("{}… (2000 bytes in all)", "é".repeat(6)));
        assert!(shorten(&"\0".repeat(1_000_000), 20).len() < 60);
    }

    #[test]
    fn yaml_positions_count_only_line_feeds() {
        // libyaml would call the `x` line 3 (a lone CR ends a line for it).
        assert_eq!(yaml_mark_position("a: 1\rb: 2\nx", 10), (2, 1));
        assert_eq!(yaml_mark_position("\u{feff}ab\ncd", 7), (2, 2));
        assert_eq!(yaml_mark_position("é", 1), (1, 1));
        assert_eq!(yaml_mark_position("ab", 99), (1, 3));
    }

    #[test]
    fn long_lists_show_head_and_tail() {
        let items: Vec<String> = (0..20_000).map(|i| format!("s/{i}")).collect();
        assert_eq!(
            head_tail(&items, 2, 2, " -> "),
            "s/0 -> s/1 -> … (20000 in all) … -> s/19998 -> s/19999"
        );
        assert_eq!(
            head_tail(&items[..5], 2, 2, " -> "),
            "s/0 -> s/1 -> s/2 -> s/3 -> s/4"
        );
    }
}
