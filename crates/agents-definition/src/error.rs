use std::fmt;

use agents_core::text::{MAX_ECHO_BYTES, escape_control, shorten};

/// Longest message kept, in bytes; a longer one is cut with its length.
const MAX_MESSAGE_BYTES: usize = 1024;
/// Characters of the offending line shown on each side of the column.
const SOURCE_CONTEXT: usize = 60;

/// A definition that could not be read, with enough context to fix it.
///
/// Every field is bounded whatever the input: messages, names and the source
/// line are cut (with an ellipsis and where the cut is), and control
/// characters are escaped, so an error is at most a few KiB.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefinitionError {
    /// The file (or other label) the text came from.
    pub file: String,
    /// 1-based document number within a multi-document stream.
    pub document: Option<usize>,
    /// The skill or tool the document defines, when known.
    pub subject: Option<String>,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// 1-based column (in characters), when known.
    pub column: Option<usize>,
    /// What is wrong and what was expected.
    pub message: String,
    /// The offending source line, or the part of it around `column`.
    pub source_line: Option<SourceLine>,
    /// The input limit the text broke, when that is what is wrong: a caller
    /// adds its own advice by this, not by the message's wording.
    pub limit: Option<Limit>,
}

/// An input limit of [`crate::Limits`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Limit {
    /// The whole input's size (`max_bytes`).
    Bytes,
    /// One YAML document's size (`max_document_bytes`).
    DocumentBytes,
    /// The number of values in one document ([`crate::MAX_VALUES`]).
    Values,
    /// The nesting depth (`max_depth`).
    Depth,
}

/// The part of the offending line that is shown, control characters escaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceLine {
    /// The shown text.
    pub text: String,
    /// Characters of `text` before the caret.
    pub caret: usize,
    /// Byte offset within the line where `text` starts, when cut at the start.
    pub cut_start: Option<usize>,
    /// Whether the line goes on after `text`.
    pub cut_end: bool,
    /// The whole line's length in bytes.
    pub line_bytes: usize,
}

impl std::error::Error for DefinitionError {}

impl DefinitionError {
    /// A stable machine-readable kind.
    pub fn kind(&self) -> &'static str {
        "invalid_definition"
    }

    pub(crate) fn from_yaml(
        file: &str,
        text: &str,
        document: Option<usize>,
        err: &yaml_serde::Error,
    ) -> Self {
        let location = err.location();
        // The parser quotes offending values: a URL among them keeps no
        // password.
        let mut message = agents_core::redact::redact_text(&strip_location(&err.to_string()));
        // From the byte index: libyaml's own line also counts lone CRs.
        let (mut line, mut column) = match &location {
            Some(at) => {
                let (line, column) = agents_core::text::yaml_mark_position(text, at.index());
                (Some(line), Some(column))
            }
            None => (None, None),
        };
        // libyaml's reader (control characters, bad encodings) reports a byte
        // offset instead of a mark.
        if let Some((offset, suffix)) = byte_position(&message) {
            message.truncate(message.len() - suffix);
            let (l, c) = line_and_column(text, offset);
            (line, column) = (Some(l), Some(c));
        }
        let mut limit = None;
        for (terse, plain, broken) in [
            (
                "repetition limit exceeded",
                "YAML aliases expand too far (repetition limit exceeded)",
                None,
            ),
            (
                "recursion limit exceeded",
                "nested deeper than 128 levels (recursion limit exceeded)",
                Some(Limit::Depth),
            ),
        ] {
            if message.ends_with(terse) {
                message.truncate(message.len() - terse.len());
                message.push_str(plain);
                limit = broken;
            }
        }
        if let Some(hint) = line.and_then(|n| misindented(&message, text, n)) {
            message.push_str(&hint);
        }
        Self {
            file: bounded(file),
            document,
            subject: None,
            line,
            column,
            message: bounded_message(&message),
            source_line: line.and_then(|n| source_line(text, n, column.unwrap_or(1))),
            limit,
        }
    }

    pub(crate) fn at_document(
        file: &str,
        document: usize,
        subject: impl AsRef<str>,
        message: impl AsRef<str>,
    ) -> Self {
        Self {
            file: bounded(file),
            document: Some(document),
            subject: Some(bounded(subject.as_ref())),
            line: None,
            column: None,
            message: bounded_message(message.as_ref()),
            source_line: None,
            limit: None,
        }
    }

    /// [`Self::at_document`] pointing at where `field` of the document is
    /// written in `text` (see [`crate::locate`]), when it can be found.
    pub(crate) fn at_field(
        file: &str,
        text: &str,
        document: usize,
        subject: impl AsRef<str>,
        message: impl AsRef<str>,
        field: &str,
    ) -> Self {
        let mut error = Self::at_document(file, document, subject, message);
        // As the parse read it (see `documents`).
        let text = agents_core::text::without_bom(text);
        if let Some(index) = crate::locate::locate(text, document, field) {
            let (line, column) = agents_core::text::yaml_mark_position(text, index);
            error.line = Some(line);
            error.column = Some(column);
            error.source_line = source_line(text, line, column);
        }
        error
    }

    /// A problem with document `document` as a whole (shown as `document N`
    /// after the first).
    pub(crate) fn in_document(file: &str, document: usize, message: impl AsRef<str>) -> Self {
        Self {
            document: Some(document),
            ..Self::whole_file(file, message)
        }
    }

    pub(crate) fn whole_file(file: &str, message: impl AsRef<str>) -> Self {
        Self {
            file: bounded(file),
            document: None,
            subject: None,
            line: None,
            column: None,
            message: bounded_message(message.as_ref()),
            source_line: None,
            limit: None,
        }
    }

    pub(crate) fn at_offset(
        file: &str,
        text: &str,
        offset: usize,
        message: impl AsRef<str>,
    ) -> Self {
        let (line, column) = line_and_column(text, offset);
        Self {
            file: bounded(file),
            document: None,
            subject: None,
            line: Some(line),
            column: Some(column),
            message: bounded_message(message.as_ref()),
            source_line: source_line(text, line, column),
            limit: None,
        }
    }

    /// The same error, recorded as breaking `limit`.
    pub(crate) fn breaking(self, limit: Limit) -> Self {
        Self {
            limit: Some(limit),
            ..self
        }
    }
}

/// The parser's messages for a line whose indentation puts it in no block
/// (libyaml says what token it expected, not why it is missing).
const INDENTATION_SYMPTOMS: &[&str] = &[
    "did not find expected key",
    "did not find expected '-' indicator",
    "did not find expected <document start>",
    "mapping values are not allowed in this context",
    "block sequence entries are not allowed in this context",
];

/// What to add to the parser's `message` about line `line` (1-based) of
/// `text` when its indentation matches none of the blocks open above it: a
/// key indented one space in (` includes:` under `name:`), or one space
/// short of its siblings. The open blocks are read upwards from the line:
/// each line less indented than all below it opens one (a `- key:` item
/// opens two: the list at its dash, the item's mapping after it), up to the margin or
/// the document's start. `None` when the indentation matches one (the
/// problem is something else).
fn misindented(message: &str, text: &str, line: usize) -> Option<String> {
    if !INDENTATION_SYMPTOMS.iter().any(|s| message.starts_with(s)) {
        return None;
    }
    let lines: Vec<&str> = text.split('\n').take(line).collect();
    let (current, above) = lines.split_last()?;
    let indent = |l: &str| l.len() - l.trim_start_matches(' ').len();
    let own = indent(current);
    let mut open: Vec<(usize, usize)> = Vec::new();
    let mut least = usize::MAX;
    for (index, above) in above.iter().enumerate().rev() {
        let content = above.trim();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        if content == "---" || content == "..." || above.starts_with("--- ") {
            break;
        }
        let at = indent(above);
        if at >= least {
            continue;
        }
        if let Some(item) = content.strip_prefix("- ") {
            let inner = at + 2 + (item.len() - item.trim_start().len());
            let mapping = item.contains(": ") || item.trim_end().ends_with(':');
            if inner < least && mapping {
                open.push((inner, index + 1));
            }
        }
        open.push((at, index + 1));
        least = at;
        if at == 0 {
            break;
        }
    }
    if open.is_empty() || open.iter().any(|(at, _)| *at == own) {
        return None;
    }
    open.sort_unstable();
    open.dedup_by_key(|(at, _)| *at);
    let spaces = |n: usize| {
        if n == 1 {
            "1 space".to_owned()
        } else {
            format!("{n} spaces")
        }
    };
    let blocks: Vec<String> = open
        .iter()
        .map(|(at, line)| format!("{} (line {line})", spaces(*at)))
        .collect();
    Some(format!(
        ": the indentation does not match the block it is in (line {line} is indented {}; the blocks open there are indented {})",
        spaces(own),
        blocks.join(", ")
    ))
}

fn bounded(text: &str) -> String {
    shorten(text, MAX_ECHO_BYTES).into_owned()
}

/// Messages quote names and values from the input; keep each quoted part and
/// the whole message short.
fn bounded_message(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(MAX_MESSAGE_BYTES) + 40);
    // Cut every backtick-quoted literal to MAX_ECHO_BYTES.
    for (index, part) in message.split('`').enumerate() {
        if index > 0 {
            out.push('`');
        }
        if index % 2 == 1 {
            out.push_str(&shorten(part, MAX_ECHO_BYTES));
        } else {
            out.push_str(&escape_control(part));
        }
        if out.len() > MAX_MESSAGE_BYTES * 4 {
            break;
        }
    }
    shorten(&out, MAX_MESSAGE_BYTES).into_owned()
}

/// Line `line` (1-based) of `text`, cut to a window around `column`, with
/// its secrets hidden (see [`masked`]).
fn source_line(text: &str, line: usize, column: usize) -> Option<SourceLine> {
    let start = match line.checked_sub(2) {
        None => 0,
        Some(before) => text.match_indices('\n').nth(before)?.0 + 1,
    };
    source_line_at(text, start, column)
}

/// [`source_line`] of the line that starts at byte `start` of `text`.
fn source_line_at(text: &str, start: usize, column: usize) -> Option<SourceLine> {
    let (above, rest) = (text.get(..start)?, text.get(start..)?);
    let whole = rest.split('\n').next().unwrap_or_default();
    let whole = whole.strip_suffix('\r').unwrap_or(whole);
    let secret_map = in_secret_map(above, whole);
    let hidden = masked(whole, secret_map);
    let mut column = column.max(1) - 1;
    if hidden != whole {
        // The caret moves with the text; when it pointed into what is now
        // hidden, it stands at the first hidden character.
        column = agents_core::text::masked_caret(whole, &hidden, column, |text| {
            masked(text, secret_map)
        })
        .unwrap_or_else(|| {
            let same = whole
                .chars()
                .zip(hidden.chars())
                .take_while(|(a, b)| a == b)
                .count();
            column.min(same)
        });
    }
    let whole = hidden.as_str();
    let first = column.saturating_sub(SOURCE_CONTEXT);
    let mut chars = whole.char_indices().skip(first);
    let start_byte = chars.next().map_or(whole.len(), |(at, _)| at);
    let shown_chars = column - first + SOURCE_CONTEXT;
    let rest = whole.get(start_byte..).unwrap_or_default();
    let end_byte = rest
        .char_indices()
        .nth(shown_chars)
        .map_or(rest.len(), |(at, _)| at);
    let window = rest.get(..end_byte).unwrap_or_default();
    let before: String = window.chars().take(column - first).collect();
    let caret = escape_control(&before).chars().count();
    Some(SourceLine {
        text: escape_control(window).into_owned(),
        caret,
        cut_start: (start_byte > 0).then_some(start_byte),
        cut_end: end_byte < rest.len(),
        line_bytes: whole.len(),
    })
}

/// A source line fit to print: every URL's password and secret query
/// values hidden ([`agents_core::redact::redact_text`]), and everything after
/// a key that holds secrets (`env`, `headers`, or a secret-named key such as
/// `token` or `password`), or after any key when the line is inside an
/// `env` or `headers` map, and the value of a secret option in a flow list
/// (`args: ["--api-key", "***"]`). Skill files may hold an MCP server's credentials,
/// and an error quotes the line it is about.
fn masked(line: &str, in_secret_map: bool) -> String {
    use agents_core::redact::{REDACTED, is_secret_name, redact_inline_args, redact_text};
    let text = redact_inline_args(&redact_text(line));
    for (at, _) in text.match_indices(':') {
        let before = text.get(..at).unwrap_or_default();
        let key = before
            .trim_end_matches(['"', '\''])
            .rsplit(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.')))
            .next()
            .unwrap_or_default();
        let value = text.get(at + 1..).unwrap_or_default();
        let secret = in_secret_map || matches!(key, "env" | "headers") || is_secret_name(key);
        if secret && !key.is_empty() && !value.trim().is_empty() {
            return format!("{before}: {REDACTED}");
        }
    }
    text
}

/// Whether line `current`, below the text `above` (which ends where it
/// starts), is inside a block-style `env:` or `headers:` map: some
/// less-indented line above it, each nearer the top than the last, is that
/// key. Read upwards only as far as the first line at the margin.
fn in_secret_map(above: &str, current: &str) -> bool {
    let indent = |l: &str| l.len() - l.trim_start_matches([' ', '-']).len();
    let mut within = indent(current);
    let above = above.strip_suffix('\n').unwrap_or(above);
    // A line at the margin is inside no map; no line above need be read.
    if above.is_empty() || within == 0 {
        return false;
    }
    for above in above.rsplit('\n') {
        let trimmed = above.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || indent(above) >= within {
            continue;
        }
        within = indent(above);
        let key = trimmed
            .trim_start_matches(['-', ' '])
            .split(':')
            .next()
            .unwrap_or_default()
            .trim_matches(['"', '\'', ' ']);
        if matches!(key, "env" | "headers") {
            return true;
        }
        if within == 0 {
            break;
        }
    }
    false
}

/// `… at position N` at the end of a message: (N, length of that suffix).
fn byte_position(message: &str) -> Option<(usize, usize)> {
    let start = message.rfind(" at position ")?;
    let offset = message.get(start + " at position ".len()..)?.parse().ok()?;
    Some((offset, message.len() - start))
}

/// 1-based line and column (in characters) of a byte offset.
pub(crate) fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    agents_core::text::yaml_mark_position(text, offset)
}

/// yaml_serde appends ` at line L column C`; we print the location ourselves.
fn strip_location(message: &str) -> String {
    if let Some(at) = message.rfind(" at line ") {
        let tail = message.get(at + " at line ".len()..).unwrap_or_default();
        let mut parts = tail.splitn(3, ' ');
        let is_location = matches!(
            (parts.next(), parts.next(), parts.next()),
            (Some(line), Some("column"), Some(col))
                if line.chars().all(|c| c.is_ascii_digit())
                    && col.split(',').next().is_some_and(|c| c.chars().all(|c| c.is_ascii_digit()))
        );
        if is_location {
            return message.get(..at).unwrap_or_default().to_owned();
        }
    }
    message.to_owned()
}

impl fmt::Display for DefinitionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        f.write_str(": ")?;
        match (&self.subject, self.document) {
            (Some(subject), _) => write!(f, "`{subject}`: ")?,
            (None, Some(document)) if document > 1 => write!(f, "document {document}: ")?,
            _ => {}
        }
        f.write_str(&self.message)?;
        if let (Some(line), Some(source)) = (self.line, &self.source_line) {
            write_source(f, line, source)?;
        }
        Ok(())
    }
}

/// The quoted line under a message: the line with its number, a caret
/// under the column, and where a long line was cut.
fn write_source(f: &mut fmt::Formatter<'_>, line: usize, source: &SourceLine) -> fmt::Result {
    let gutter = line.to_string().len();
    let lead = if source.cut_start.is_some() {
        "…"
    } else {
        ""
    };
    let tail = if source.cut_end { "…" } else { "" };
    let pad = " ".repeat(source.caret + usize::from(source.cut_start.is_some()));
    write!(
        f,
        "\n{:gutter$} |\n{line} | {lead}{}{tail}\n{:gutter$} | {pad}^",
        "", source.text, ""
    )?;
    if source.cut_start.is_some() || source.cut_end {
        write!(
            f,
            "\n{:gutter$} = line {line} is {} bytes long; shown from byte {}",
            "",
            source.line_bytes,
            source.cut_start.unwrap_or(0)
        )?;
    }
    Ok(())
}

/// Where a field of a definition is written, found after the parse (see
/// [`locate_fields`]): for a problem a later check finds in what the file
/// defines, shown as the parser's own errors are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldPosition {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// The line, cut around the column, its secrets hidden.
    pub source_line: Option<SourceLine>,
}

impl FieldPosition {
    /// `message` about `file` at this position, as errors are shown:
    /// `FILE:LINE:COLUMN: message`, then the line and a caret under the
    /// column. Bounded whatever the input: the file name, the message (as
    /// a [`DefinitionError`]'s) and the line shown are cut.
    pub fn show(&self, file: &str, message: &str) -> String {
        struct Shown<'a>(&'a FieldPosition, String, String);
        impl fmt::Display for Shown<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let Self(at, file, message) = self;
                write!(f, "{file}:{}:{}: {message}", at.line, at.column)?;
                match &at.source_line {
                    Some(source) => write_source(f, at.line, source),
                    None => Ok(()),
                }
            }
        }
        Shown(self, bounded(file), bounded_message(message)).to_string()
    }

    /// The quoted line without the value at the caret: a finding about a
    /// secret written out points at it, and the line-based masking cannot
    /// tell every such value (a block list's `- sk-…` item) from another.
    pub fn hide_value(&mut self) {
        if let Some(source) = &mut self.source_line {
            let kept: String = source.text.chars().take(source.caret).collect();
            source.text = format!("{kept}{}", agents_core::redact::REDACTED);
            source.cut_end = false;
        }
    }
}

/// Where each of `wanted` (a 1-based document number of `text` and a field
/// of that document) is written: its value, or with
/// [`agents_core::FieldPath::at_key`] its last key, or the nearest
/// enclosing value the path reaches; `None` where it cannot be found.
///
/// `text` is the text the definitions were parsed from (a leading byte
/// order mark is skipped, as the parse skips it). Meant for the few
/// problems a command shows: the stream is read once up to the last
/// document asked for and only the documents asked for are walked (see
/// the module `locate`), and the positions are counted in one more pass.
pub fn locate_fields(
    text: &str,
    wanted: &[(usize, &agents_core::FieldPath)],
) -> Vec<Option<FieldPosition>> {
    let text = agents_core::text::without_bom(text);
    let found = crate::locate::locate_all(text, wanted);
    // Lines and columns of every index found, in one pass over the text.
    let mut order: Vec<(usize, usize)> = found
        .iter()
        .enumerate()
        .filter_map(|(at, index)| index.map(|index| (index.min(text.len()), at)))
        .collect();
    order.sort_unstable();
    let mut positions = vec![None; found.len()];
    let (mut line, mut line_start, mut scanned) = (1, 0, 0);
    for (index, at) in order {
        let mut offset = index;
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let between = text.get(scanned..offset).unwrap_or_default();
        for (newline, _) in between.match_indices('\n') {
            line += 1;
            line_start = scanned + newline + 1;
        }
        scanned = offset;
        let column = text
            .get(line_start..offset)
            .unwrap_or_default()
            .chars()
            .count()
            + 1;
        if let Some(slot) = positions.get_mut(at) {
            *slot = Some(FieldPosition {
                line,
                column,
                source_line: source_line_at(text, line_start, column),
            });
        }
    }
    positions
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key indented into no block says so, with the line and the
    /// indentations it could have had; a YAML error of another kind, or a
    /// line whose indentation matches a block, gets no such words.
    #[test]
    fn an_indentation_slip_says_the_block_does_not_match() {
        let slip = |text: &str| crate::parse_skills(text, "s.yaml").unwrap_err();
        // One space in, after a list (libyaml: `did not find expected key`).
        let err = slip("name: team/x\ntools:\n  - builtin/grep\n includes: [team/base]\n");
        assert_eq!((err.line, err.column), (Some(4), Some(2)));
        assert!(
            err.message.starts_with("did not find expected key"),
            "{err}"
        );
        assert!(
            err.message.ends_with(
                ": the indentation does not match the block it is in (line 4 is indented 1 space; \
                 the blocks open there are indented 0 spaces (line 2), 2 spaces (line 3))"
            ),
            "{err}"
        );
        assert_eq!(err.source_line.as_ref().map(|l| l.caret), Some(1));
        // One space in, after a scalar (`mapping values are not allowed`).
        let err = slip("name: team/x\ndescription: d\n includes: [team/base]\n");
        assert!(
            err.message.contains(
                "the indentation does not match the block it is in (line 3 is indented 1 space"
            ),
            "{err}"
        );
        // One space short of its siblings in a list item's mapping.
        let err = slip("name: a/b\nmcp_sources:\n  - server: s\n    command: x\n   args: [y]\n");
        assert!(
            err.message.contains(
                "line 5 is indented 3 spaces; the blocks open there are indented 0 spaces (line 2), 2 spaces (line 3), 4 spaces (line 4)"
            ),
            "{err}"
        );
        // Not an indentation problem: nothing added.
        let err = slip("name: a/b\ntools: [x\n");
        assert!(!err.message.contains("indentation"), "{err}");
        let err = slip("name: a/b\ndescription: a: b\n");
        assert!(!err.message.contains("indentation"), "{err}");
    }

    #[test]
    fn source_lines_keep_no_secrets() {
        use crate::parse_skills;
        for (text, secret, shown) in [
            (
                "name: a/b\nmcp_sources:\n  - server: s\n    url: https://u:SECRETA7@h\n    url: https://u:SECRETA7@h\n",
                "SECRETA7",
                "url: https://u:***@h",
            ),
            (
                "name: a/b\nmcp_sources:\n  - server: s\n    command: x\n    env: {TOKEN: [SECRETB3]}\n",
                "SECRETB3",
                "env: ***",
            ),
            (
                "name: a/b\nmcp_sources:\n  - {server: s, bogus: 1, url: \"https://u:SECRETB1@h\"}\n",
                "SECRETB1",
                "https://u:***@h",
            ),
            (
                "name: a/b\nmcp_sources:\n  - server: s\n    command: x\n    env:\n      LEVEL: [SECRETC4]\n",
                "SECRETC4",
                "LEVEL: ***",
            ),
            (
                "name: a/b\nmcp_sources:\n  - server: s\n    command: x\n    headers:\n      X-Plain: a\n      X-Plain: SECRETD5\n",
                "SECRETD5",
                "X-Plain: ***",
            ),
        ] {
            let err = parse_skills(text, "s.yaml").unwrap_err().to_string();
            assert!(!err.contains(secret), "{err}");
            assert!(err.contains(shown), "{err}");
        }
    }

    #[test]
    fn located_fields_show_their_line_with_secrets_hidden() {
        use agents_core::FieldStep::{Index, Key};
        let text = "\u{feff}name: a/b\nmcp_sources:\n  - server: s\n    command: x\n    env:\n      TOKEN: SECRETE6\n";
        let token = agents_core::FieldPath {
            steps: vec![
                Key("mcp_sources".into()),
                Index(0),
                Key("env".into()),
                Key("TOKEN".into()),
            ],
            at_key: true,
        };
        let found = locate_fields(text, &[(1, &token), (2, &token)]);
        let at = found[0].as_ref().unwrap();
        assert_eq!((at.line, at.column), (6, 7));
        let shown = at.show("s.yaml", "Skill 'a/b': a secret");
        assert_eq!(
            shown,
            "s.yaml:6:7: Skill 'a/b': a secret\n  |\n6 |       TOKEN: ***\n  |       ^"
        );
        assert_eq!(found[1], None);
    }

    #[test]
    fn strips_only_a_trailing_location() {
        assert_eq!(
            strip_location("unknown field `x` at line 3 column 5"),
            "unknown field `x`"
        );
        assert_eq!(strip_location("bad at line one"), "bad at line one");
    }

    /// The `skill_md` fuzz target found libyaml's line numbers counting a
    /// lone CR as a line break; definitions read positions the same way.
    #[test]
    fn positions_count_line_feeds_only() {
        let text = "name: a/b\rdescription: x\rversion: 1\ntools: [x\n";
        let err = crate::parse_skills(text, "s.yaml").unwrap_err();
        let lines = text.matches('\n').count() + 1;
        assert!(
            err.line.is_some_and(|line| line <= lines),
            "line {:?} of {lines}: {err}",
            err.line
        );
        let text = "name: a/b\rdescription: x\ntoolz: [x]\n";
        let err = crate::parse_skills(text, "s.yaml").unwrap_err();
        assert_eq!((err.line, err.column), (Some(2), Some(1)), "{err}");
        assert!(err.source_line.is_some_and(|s| s.text.starts_with("toolz")));
    }

    #[test]
    fn long_lines_and_quoted_names_are_cut() {
        let line = format!("{}X{}", "a".repeat(100_000), "b".repeat(100_000));
        let source = source_line(&line, 1, 100_001).unwrap();
        assert_eq!(source.cut_start, Some(100_000 - SOURCE_CONTEXT));
        assert!(source.cut_end);
        assert_eq!(source.text.chars().nth(source.caret), Some('X'));
        let message = bounded_message(&format!(
            "invalid skill name `{}`: bad",
            "n".repeat(1 << 20)
        ));
        assert!(message.len() < 300, "{}", message.len());
        assert!(
            message.ends_with("(1048576 bytes in all)`: bad"),
            "{message}"
        );
    }
}
