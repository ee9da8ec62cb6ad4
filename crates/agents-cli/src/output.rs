//! Everything the CLI writes: results on stdout, warnings and errors on
//! stderr, tables for people and JSON/YAML for scripts.
//!
//! Names and descriptions come from files and databases other people
//! control, so nothing here writes a raw control character: table cells
//! show every control character as an escape (`\u{1b}`, `\n`, `\t`, …, see
//! [`agents_core::text::escape_control`]), plain-text lines keep their line
//! breaks and escape the rest, and JSON escapes DEL and the C1 controls as
//! `\u007f`…`\u009f` on top of what the serializer escapes.

use std::borrow::Cow;
use std::io::Write;

use agents_core::text::escape_control;

use comfy_table::{ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use serde::Serialize;
use serde_json::json;

use crate::cli::Format;

/// A command failure: what kind (stable, for scripts) and what to tell people.
#[derive(Debug)]
pub struct Failure {
    pub kind: String,
    pub message: String,
    pub usage: bool,
    /// Registered names likely meant, shown after the message
    /// ([`did_you_mean`]) and as a field of a JSON error.
    pub did_you_mean: Vec<String>,
}

impl Failure {
    pub fn new(kind: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            kind: kind.into(),
            message: message.into(),
            usage: false,
            did_you_mean: Vec::new(),
        }
    }

    /// A problem with how the command was called: exit code 2.
    pub fn usage(message: impl Into<String>) -> Self {
        Self {
            usage: true,
            ..Self::new("usage", message)
        }
    }

    pub fn io(err: std::io::Error) -> Self {
        Self::new("io", err.to_string())
    }

    pub fn exit_code(&self) -> u8 {
        if self.usage { 2 } else { 1 }
    }
}

impl From<agents_registry::ServiceError> for Failure {
    fn from(err: agents_registry::ServiceError) -> Self {
        Self {
            did_you_mean: err.did_you_mean().to_vec(),
            ..Self::new(err.kind(), err.to_string())
        }
    }
}

/// ` (did you mean 'a'?)`, ` (did you mean 'a' or 'b'?)`, … after a
/// message naming something that is not registered; empty without names.
/// The names are anyone's: each escaped and cut.
pub fn did_you_mean(names: &[String]) -> String {
    let quoted: Vec<String> = names
        .iter()
        .map(|name| {
            format!(
                "'{}'",
                agents_core::text::shorten(name, agents_core::text::MAX_ECHO_BYTES)
            )
        })
        .collect();
    match quoted.split_last() {
        None => String::new(),
        Some((last, [])) => format!(" (did you mean {last}?)"),
        Some((last, rest)) => format!(" (did you mean {} or {last}?)", rest.join(", ")),
    }
}

impl From<agents_store::StoreError> for Failure {
    fn from(err: agents_store::StoreError) -> Self {
        Self::new(err.kind(), err.to_string())
    }
}

impl From<agents_definition::DefinitionError> for Failure {
    fn from(err: agents_definition::DefinitionError) -> Self {
        Self::new(err.kind(), err.to_string())
    }
}

impl From<agents_core::InvalidSkillName> for Failure {
    fn from(err: agents_core::InvalidSkillName) -> Self {
        Self::new(err.kind(), err.to_string())
    }
}

impl From<agents_core::LockError> for Failure {
    fn from(err: agents_core::LockError) -> Self {
        Self::new(err.kind(), err.to_string())
    }
}

impl From<agents_config::ConfigError> for Failure {
    fn from(err: agents_config::ConfigError) -> Self {
        Self::new(err.kind(), err.to_string())
    }
}

/// Prints `failure` to stderr: `error: …` for people, one JSON object for
/// scripts.
pub fn report_error(format: Format, failure: &Failure) {
    let message = bounded_lines(&failure.message);
    let text = if format == Format::Json {
        let mut error = json!({"kind": failure.kind, "message": message});
        if !failure.did_you_mean.is_empty() {
            error["did_you_mean"] = json!(failure.did_you_mean);
        }
        json_text(json!({ "error": error }).to_string())
    } else {
        let hint = did_you_mean(&failure.did_you_mean);
        format!("{}{}{}", prefix("error"), plain(&message), plain(&hint))
    };
    to_stderr(&text);
}

/// The longest line of an error printed whole; a longer one keeps its
/// head and tail around how much was cut.
pub const MAX_ERROR_LINE_BYTES: usize = 2048;

/// `text` with each line over [`MAX_ERROR_LINE_BYTES`] cut in its middle:
/// an error echoes what it was given (a path, a URL, an argument), and stays
/// a few KiB whatever that was. Errors list at most a few dozen lines.
pub fn bounded_lines(text: &str) -> Cow<'_, str> {
    if text
        .split('\n')
        .all(|line| line.len() <= MAX_ERROR_LINE_BYTES)
    {
        return Cow::Borrowed(text);
    }
    let lines: Vec<Cow<'_, str>> = text
        .split('\n')
        .map(|line| {
            if line.len() <= MAX_ERROR_LINE_BYTES {
                Cow::Borrowed(line)
            } else {
                agents_core::text::shorten_middle(line, MAX_ERROR_LINE_BYTES)
            }
        })
        .collect();
    Cow::Owned(lines.join("\n"))
}

/// Writes `text` and a line break to stderr in one write, with every secret
/// this process gave an MCP server masked (`agents_core::redact::remember`):
/// a server may echo one into any message made from what it said.
fn to_stderr(text: &str) {
    let shown = agents_core::redact::scrub_remembered(text);
    let mut line = String::with_capacity(shown.len() + 1);
    line.push_str(&shown);
    if !line.ends_with('\n') {
        line.push('\n');
    }
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// Prints a warning to stderr (as JSON in JSON mode).
pub fn warn(format: Format, message: &str) {
    warn_all(format, std::iter::once(message));
}

/// `--quiet`: warnings and notes are not printed (results and errors are).
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// `--format yaml`: structured results are written as YAML.
static YAML: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Writes structured results ([`json`]) as YAML for the rest of the process.
pub fn set_yaml() {
    YAML.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Turns `--quiet` on for the rest of the process.
pub fn set_quiet() {
    QUIET.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// `--color`: the `error`/`warning` prefixes on stderr are coloured.
static COLOUR: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Colours the stderr prefixes for the rest of the process.
pub fn set_colour() {
    COLOUR.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// `error: ` or `warning: `, in red or yellow under `--color`.
fn prefix(word: &str) -> String {
    if !COLOUR.load(std::sync::atomic::Ordering::Relaxed) {
        return format!("{word}: ");
    }
    let code = if word == "error" { 31 } else { 33 };
    format!("\x1b[1;{code}m{word}\x1b[0m: ")
}

fn quiet() -> bool {
    QUIET.load(std::sync::atomic::Ordering::Relaxed)
}

/// Warnings one command prints to stderr at most; one line counts the rest.
/// A skill naming 16,000 unknown tools printed 932 KB of them; a command's
/// `--format json` result still lists every one.
pub const MAX_WARNING_LINES: usize = 50;

/// Warning lines one whole command prints at most (a command over 3,200
/// files printed each file's own 50); [`finish`] counts the rest.
pub const MAX_COMMAND_WARNING_LINES: usize = 200;

/// Warning lines printed so far, and those left unprinted past
/// [`MAX_COMMAND_WARNING_LINES`].
static WARNED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static UNSHOWN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Prints warnings to stderr with one write: stderr is unbuffered, and
/// thousands of warnings written one by one cost a syscall per fragment.
/// Past [`MAX_WARNING_LINES`], one line says how many more there were; past
/// the command's [`MAX_COMMAND_WARNING_LINES`], [`finish`] does.
pub fn warn_all<T: AsRef<str>>(format: Format, messages: impl IntoIterator<Item = T>) {
    warn_all_detailed(
        format,
        messages.into_iter().map(|message| Warning {
            text: message.as_ref().to_owned(),
            message: None,
            details: serde_json::Map::new(),
        }),
    );
}

/// One warning with structured details: `text` for people (it may span
/// lines: a source line and a caret under the place it is about), and
/// under `--format json` `{"warning": {"message", ...details}}`, the
/// message being `message` (one line) or else `text`.
pub struct Warning {
    pub text: String,
    pub message: Option<String>,
    pub details: serde_json::Map<String, serde_json::Value>,
}

/// [`warn_all`] of warnings with details, within the same budgets.
pub fn warn_all_detailed(format: Format, warnings: impl IntoIterator<Item = Warning>) {
    use std::sync::atomic::Ordering::Relaxed;
    if quiet() {
        return;
    }
    let mut warnings = warnings.into_iter();
    let budget = MAX_COMMAND_WARNING_LINES.saturating_sub(WARNED.load(Relaxed));
    let shown: Vec<Warning> = warnings
        .by_ref()
        .take(MAX_WARNING_LINES.min(budget))
        .collect();
    let more = warnings.count();
    WARNED.fetch_add(shown.len(), Relaxed);
    if budget < MAX_WARNING_LINES && more > 0 {
        // Out of the command's budget: counted for `finish`.
        UNSHOWN.fetch_add(more, Relaxed);
        return write_warnings(format, &shown, None);
    }
    let summary = (more > 0).then(|| format!("{more} more warnings not shown"));
    write_warnings(format, &shown, summary.as_deref());
}

/// Errors of single files one command over many files prints at most; the
/// JSON result still has every file's.
pub const MAX_FILE_ERRORS: usize = 50;

/// File errors printed so far, and those left unprinted.
static FILE_ERRORS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static FILE_ERRORS_UNSHOWN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Reports that one file of several failed, within the command's
/// [`MAX_FILE_ERRORS`]; [`finish`] counts the rest.
pub fn report_file_error(format: Format, failure: &Failure) {
    use std::sync::atomic::Ordering::Relaxed;
    if FILE_ERRORS.fetch_add(1, Relaxed) < MAX_FILE_ERRORS {
        report_error(format, failure);
    } else {
        FILE_ERRORS_UNSHOWN.fetch_add(1, Relaxed);
    }
}

/// Says how many warnings and file errors the command's budgets left
/// unprinted, if any; run once, as the command ends.
pub fn finish(format: Format) {
    let failed = FILE_ERRORS_UNSHOWN.swap(0, std::sync::atomic::Ordering::Relaxed);
    if failed > 0 {
        report_error(
            format,
            &Failure::new(
                "more_errors",
                format!(
                    "{failed} more files failed (a command prints at most {MAX_FILE_ERRORS} of their errors)"
                ),
            ),
        );
    }
    let unshown = UNSHOWN.swap(0, std::sync::atomic::Ordering::Relaxed);
    if unshown > 0 && !quiet() {
        let summary = format!(
            "{unshown} more warnings not shown (a command prints at most {MAX_COMMAND_WARNING_LINES})"
        );
        write_warnings(format, &[], Some(&summary));
    }
}

fn write_warnings(format: Format, shown: &[Warning], summary: Option<&str>) {
    let mut text = String::new();
    let summary = summary.map(|summary| Warning {
        text: summary.to_owned(),
        message: None,
        details: serde_json::Map::new(),
    });
    for warning in shown.iter().chain(&summary) {
        if format == Format::Json {
            let mut object = serde_json::Map::new();
            let message = warning.message.as_deref().unwrap_or(&warning.text);
            object.insert("message".into(), message.into());
            object.extend(warning.details.clone());
            text.push_str(&json_text(json!({ "warning": object }).to_string()));
        } else {
            text.push_str(&prefix("warning"));
            text.push_str(&plain(&warning.text));
        }
        text.push('\n');
    }
    if !text.is_empty() {
        to_stderr(&text);
    }
}

/// A spinner on stderr while something slow runs (an MCP server starting:
/// a first `npx` download takes seconds); hidden unless a person watches
/// (stderr a terminal, not `--quiet`, not `--format json`).
pub fn spinner(format: Format, message: &str) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if quiet() || format == Format::Json || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_message(message.to_owned());
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar
}

/// Prints one warning with structured details: `warning: message` for
/// people, `{"warning": {"message", ...details}}` in JSON mode.
pub fn warn_detailed(format: Format, message: &str, details: serde_json::Value) {
    if format != Format::Json {
        return warn(format, message);
    }
    let mut warning = serde_json::Map::new();
    warning.insert("message".into(), message.into());
    if let serde_json::Value::Object(fields) = details {
        warning.extend(fields);
    }
    to_stderr(&json_text(json!({ "warning": warning }).to_string()));
}

/// Prints what an error is about on stderr, when stdout is a protocol
/// channel (`mcp serve`): `text` (line breaks kept, other control
/// characters escaped), or `value` as one JSON line under `--format json`.
/// Like an error, it is printed under `--quiet` too.
pub fn report(format: Format, text: &str, value: &serde_json::Value) {
    if format == Format::Json {
        to_stderr(&json_text(value.to_string()));
    } else {
        to_stderr(plain(text).trim_end_matches('\n'));
    }
}

/// Prints a line for people on stderr (when stdout is a protocol channel).
pub fn note(text: &str) {
    if quiet() {
        return;
    }
    to_stderr(&plain(text));
}

/// Asks the person at the terminal `question` on stderr (even under
/// `--quiet`: an answer is needed) and reads one line from stdin: true for
/// `y` or `yes` (any case), false for anything else, an empty line or the
/// end of input.
pub fn confirm(question: &str) -> std::io::Result<bool> {
    use std::io::{BufRead, Read};
    {
        let mut stderr = std::io::stderr().lock();
        stderr.write_all(plain(question).as_bytes())?;
        stderr.flush()?;
    }
    let mut answer = Vec::new();
    // One short line is an answer; more is not read.
    std::io::stdin()
        .lock()
        .take(256)
        .read_until(b'\n', &mut answer)?;
    let answer = String::from_utf8_lossy(&answer);
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// Prints a line for people on stdout (line breaks kept, other control
/// characters escaped).
pub fn line(text: impl AsRef<str>) -> Result<(), Failure> {
    write_line(&plain(text.as_ref()))
}

fn write_line(text: &str) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{text}").map_err(broken_pipe)
}

/// Prints `value` as pretty JSON on stdout.
pub fn json<T: Serialize + ?Sized>(value: &T) -> Result<(), Failure> {
    if YAML.load(std::sync::atomic::Ordering::Relaxed) {
        let text = agents_definition::yaml_text(value)
            .map_err(|err| Failure::new("internal", format!("cannot encode YAML: {err}")))?;
        return raw(&text);
    }
    // Streamed through a buffer, not built as one string first: a closure's
    // tools are megabytes of JSON.
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut serializer = serde_json::Serializer::with_formatter(
        &mut out,
        EscapingFormatter(serde_json::ser::PrettyFormatter::new()),
    );
    value
        .serialize(&mut serializer)
        .map_err(|err| match err.io_error_kind() {
            Some(kind) => broken_pipe(kind.into()),
            None => Failure::new("internal", format!("cannot encode JSON: {err}")),
        })?;
    out.write_all(b"\n").map_err(broken_pipe)?;
    out.flush().map_err(broken_pipe)
}

/// `serde_json`'s pretty printer, but writing the [`json_escaped`]
/// characters (which `serde_json` leaves as they are) as `\uXXXX` escapes,
/// like [`json_text`].
struct EscapingFormatter<'a>(serde_json::ser::PrettyFormatter<'a>);

impl serde_json::ser::Formatter for EscapingFormatter<'_> {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        write_escaped(writer, fragment)
    }

    fn begin_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> std::io::Result<()> {
        self.0.begin_array(writer)
    }

    fn end_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> std::io::Result<()> {
        self.0.end_array(writer)
    }

    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(writer, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(writer)
    }

    fn begin_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> std::io::Result<()> {
        self.0.begin_object(writer)
    }

    fn end_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> std::io::Result<()> {
        self.0.end_object(writer)
    }

    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(writer, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> std::io::Result<()> {
        self.0.begin_object_value(writer)
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> std::io::Result<()> {
        self.0.end_object_value(writer)
    }
}

/// Prints text that already ends with a newline (YAML, reports) with its
/// line breaks kept and other control characters escaped.
pub fn raw(text: &str) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(plain(text).as_bytes())
        .map_err(broken_pipe)?;
    stdout.flush().map_err(broken_pipe)
}

/// `text` with its line breaks kept and every other control character
/// escaped.
pub fn plain(text: &str) -> Cow<'_, str> {
    if !text
        .chars()
        .any(|c| agents_core::text::is_hidden(c) && c != '\n')
    {
        return Cow::Borrowed(text);
    }
    let lines: Vec<Cow<'_, str>> = text.split('\n').map(escape_control).collect();
    Cow::Owned(lines.join("\n"))
}

/// Whether serialized JSON writes `c` as a `\uXXXX` escape here, though
/// `serde_json` leaves it as it is: DEL, the C1 controls, and the bidi and
/// invisible characters of [`agents_core::text::is_hidden`] (a terminal
/// would show the text around a U+202E in another order).
fn json_escaped(c: char) -> bool {
    c == '\u{7f}' || (!c.is_ascii() && agents_core::text::is_hidden(c))
}

/// Whether `text` may hold a [`json_escaped`] character: each starts with
/// one of these bytes (DEL, C1 controls and U+00AD, U+061C, U+1xxx, U+2xxx,
/// U+3164, U+FExx–FFxx, the tags U+E0xxx), so a byte scan rules most texts
/// out without decoding them.
fn may_need_escapes(text: &str) -> bool {
    text.bytes()
        .any(|b| matches!(b, 0x7f | 0xc2 | 0xd8 | 0xe1 | 0xe2 | 0xe3 | 0xef | 0xf3))
}

/// Serialized JSON with every [`json_escaped`] character written as a
/// `\uXXXX` escape. They can only occur inside strings, so the result is
/// the same JSON value.
fn json_text(text: String) -> String {
    if !may_need_escapes(&text) || !text.chars().any(json_escaped) {
        return text;
    }
    let mut out = Vec::with_capacity(text.len() + 16);
    // Writing to a `Vec` cannot fail.
    let _ = write_escaped(&mut out, &text);
    String::from_utf8(out).unwrap_or(text)
}

/// `text` with every [`json_escaped`] character as a `\uXXXX` escape: what
/// [`json_text`] and [`EscapingFormatter`] write.
fn write_escaped<W: ?Sized + Write>(writer: &mut W, text: &str) -> std::io::Result<()> {
    if !may_need_escapes(text) {
        return writer.write_all(text.as_bytes());
    }
    let mut start = 0;
    for (at, c) in text.char_indices() {
        if json_escaped(c) {
            writer.write_all(text.get(start..at).unwrap_or_default().as_bytes())?;
            // Past U+FFFF (the tag characters), JSON spells a character
            // as its UTF-16 surrogate pair.
            for unit in c.encode_utf16(&mut [0; 2]) {
                write!(writer, "\\u{unit:04x}")?;
            }
            start = at + c.len_utf8();
        }
    }
    writer.write_all(text.get(start..).unwrap_or_default().as_bytes())
}

/// A table with a header row, fitted to the terminal.
pub fn table<const N: usize>(header: [&str; N], rows: Vec<[String; N]>) -> Result<(), Failure> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        // Piped: tab-separated lines (cells escaped, so a cell holds no tab
        // or line break) for `cut`, `awk` and spreadsheets; no guessed width.
        let mut text = header.join("\t");
        for row in rows {
            text.push('\n');
            let cells: Vec<String> = row.iter().map(|c| escape_control(c).into_owned()).collect();
            text.push_str(&cells.join("\t"));
        }
        return write_line(&text);
    }
    let mut table = Table::new();
    // A terminal that reports no size (0 columns: a pseudo-terminal nobody
    // sized) is one of unknown width: left unfitted, not squeezed to a
    // character per column.
    let arrangement = match table.width() {
        Some(0) => ContentArrangement::Disabled,
        _ => ContentArrangement::Dynamic,
    };
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(arrangement)
        .set_header(header);
    for row in rows {
        table.add_row(row.map(|cell| escape_control(&cell).into_owned()));
    }
    write_line(&table.to_string())
}

/// The kind of a failure to write because the reader went away
/// (`agents … | head -1`): the command ends quietly, with success, as
/// ripgrep does, rather than with an error about its own output.
pub const BROKEN_PIPE: &str = "broken_pipe";

fn broken_pipe(err: std::io::Error) -> Failure {
    if err.kind() == std::io::ErrorKind::BrokenPipe {
        return Failure::new(BROKEN_PIPE, "the reader of the output went away");
    }
    Failure::new("io", format!("cannot write output: {err}"))
}

/// Refuses formats a command does not support, as a usage error.
pub fn supported(format: Format, allowed: &[Format], command: &str) -> Result<(), Failure> {
    // YAML is JSON's structure in another syntax: offered wherever JSON is.
    if allowed.contains(&format) || (format == Format::Yaml && allowed.contains(&Format::Json)) {
        Ok(())
    } else if allowed == [Format::Table] {
        Err(Failure::usage(format!(
            "`{command}` writes its own text and takes no `--format` (`--format {}` was given)",
            format_name(format),
        )))
    } else {
        let mut names: Vec<String> = allowed
            .iter()
            .map(|f| format!("`{}`", format_name(*f)))
            .collect();
        if allowed.contains(&Format::Json) && !allowed.contains(&Format::Yaml) {
            names.push(format!("`{}`", format_name(Format::Yaml)));
        }
        let last = names.pop().unwrap_or_default();
        let choices = if names.is_empty() {
            last
        } else {
            format!("{} or {last}", names.join(", "))
        };
        Err(Failure::usage(format!(
            "`{command}` does not support `--format {}`; use {choices}",
            format_name(format),
        )))
    }
}

pub fn format_name(format: Format) -> &'static str {
    match format {
        Format::Table => "table",
        Format::Json => "json",
        Format::Yaml => "yaml",
        Format::Openai => "openai",
        Format::Anthropic => "anthropic",
        Format::Mcp => "mcp",
        Format::Dot => "dot",
        Format::Mermaid => "mermaid",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_keeps_line_breaks_and_escapes_the_rest() {
        assert_eq!(plain("a\nb"), "a\nb");
        assert_eq!(
            plain("\u{1b}]0;T\u{7}\nx\r\0\u{9b}"),
            "\\u{1b}]0;T\\u{7}\nx\\r\\0\\u{9b}"
        );
    }

    #[test]
    fn json_escapes_c1_controls_and_stays_the_same_value() {
        let value = json!({"d": "a\u{7f}b\u{9b}c\u{1b}", "bidi\u{202e}": "x\u{200b}y\u{feff}\u{61c}é", "tag": "a\u{e0049}\u{ad}\u{3164}\u{115f}"});
        let text = json_text(value.to_string());
        assert!(!text.chars().any(agents_core::text::is_hidden), "{text}");
        assert!(text.contains("\\u202e") && text.contains('é'), "{text}");
        // A tag character is its surrogate pair.
        assert!(
            text.contains("a\\udb40\\udc49\\u00ad\\u3164\\u115f"),
            "{text}"
        );
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).unwrap(),
            value
        );
    }
}
