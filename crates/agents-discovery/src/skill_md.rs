//! `SKILL.md` front-matter: splitting, parsing and the Agent Skills rules.

use std::collections::HashMap;
use std::fmt;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use agents_core::check_schema;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::yaml;

/// The file that makes a folder an Agent Skill.
pub const SKILL_MD: &str = "SKILL.md";
/// The lowercase name the Agent Skills reference also accepts, when a
/// folder has no `SKILL.md`.
pub const SKILL_MD_LOWERCASE: &str = "skill.md";

/// The `SKILL.md` of `folder`: `SKILL.md`, else `skill.md` (as the Agent
/// Skills reference looks for it), `None` when neither is there. An entry
/// counts even when it is a dangling link or a directory: loading it reports
/// why it is no file. On a file system that ignores case the two names are
/// one file, found as `SKILL.md`. `Err` when the folder cannot be looked
/// into (no permission to enter it).
pub fn find_skill_md(folder: &Path) -> std::io::Result<Option<PathBuf>> {
    for name in [SKILL_MD, SKILL_MD_LOWERCASE] {
        let file = folder.join(name);
        match std::fs::symlink_metadata(&file) {
            Ok(_) => return Ok(Some(file)),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(err) => return Err(err),
        }
    }
    Ok(None)
}

/// Larger `SKILL.md` files are refused without being read further.
pub const MAX_SKILL_MD_BYTES: u64 = 1 << 20;
/// `name`: at most this many characters.
pub const MAX_NAME_CHARS: usize = 64;
/// `description`: at most this many characters.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// `compatibility`: at most this many characters.
pub const MAX_COMPATIBILITY_CHARS: usize = 500;

/// The front-matter fields of the Agent Skills standard.
pub const STANDARD_FIELDS: [&str; 6] = [
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
];
/// Fields this registry reads in addition to the standard ones.
pub const EXTENSION_FIELDS: [&str; 2] = ["input_schema", "output_schema"];

/// Longer values are cut in messages so one bad field cannot flood a report.
const SHOWN_CHARS: usize = 80;
/// Beyond this many warnings (or errors) in one file, one summary stands
/// for the rest.
const MAX_WARNINGS: usize = 20;

/// Which rule a problem breaks; stable, for scripts reading `--format json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// The file or folder could not be read.
    Read,
    /// `SKILL.md` is larger than [`MAX_SKILL_MD_BYTES`].
    FileSize,
    /// Not UTF-8, or a byte order mark (a warning).
    Encoding,
    /// The `---` fences around the front-matter.
    Fence,
    /// The front-matter is empty or not a mapping.
    FrontMatter,
    /// The YAML does not parse.
    Yaml,
    /// A field outside the standard (a warning).
    UnknownField,
    /// `name` or `description` is missing.
    MissingField,
    /// A field has the wrong YAML type.
    FieldType,
    /// `name` breaks the character rules.
    NameFormat,
    /// `name` is longer than [`MAX_NAME_CHARS`].
    NameLength,
    /// `name` differs from the folder's name.
    NameFolder,
    /// `description` is empty or too long.
    Description,
    /// `compatibility` is empty or too long.
    Compatibility,
    /// `metadata` is not a map of strings to strings.
    Metadata,
    /// `allowed-tools` is neither a string nor a list of strings.
    AllowedTools,
    /// `input_schema` / `output_schema` is not a JSON Schema.
    Schema,
    /// A path given to discovery or lint is not usable.
    Path,
}

/// One problem in one `SKILL.md`, with where it is and the rule it breaks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillMdError {
    /// The file (or folder) as it was found, not resolved.
    pub file: PathBuf,
    /// 1-based line in the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// 1-based column (in characters) when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
    /// The rule broken.
    pub rule: Rule,
    /// What is wrong and what was expected.
    pub message: String,
}

impl SkillMdError {
    pub(crate) fn new(
        file: &Path,
        line: Option<usize>,
        rule: Rule,
        message: impl Into<String>,
    ) -> Self {
        Self {
            file: file.to_path_buf(),
            line,
            column: None,
            rule,
            message: bounded_message(message.into()),
        }
    }
}

impl fmt::Display for SkillMdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", agents_core::text::shown_path(&self.file))?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for SkillMdError {}

/// The validated front-matter of one `SKILL.md`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillDoc {
    /// `name`, e.g. `pdf-processing`.
    pub name: String,
    /// `description`, trimmed.
    pub description: String,
    /// `license`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
    /// `compatibility`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compatibility: Option<String>,
    /// `metadata`, string to string, in file order.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub metadata: IndexMap<String, String>,
    /// `allowed-tools` as a space-separated string (a YAML list is joined).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_tools: Option<String>,
    /// `input_schema`, a checked JSON Schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
    /// `output_schema`, a checked JSON Schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// First line of the Markdown body (after the closing fence).
    pub body_line: usize,
    /// Problems that do not stop the skill from loading: unknown fields,
    /// a byte order mark, metadata numbers turned into strings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<SkillMdError>,
}

/// Parses and validates a `SKILL.md` given as bytes.
///
/// `file` is only used in messages and for the folder-name rule: when it has
/// a parent folder with a name, `name` must equal that name. Every problem is
/// returned, in line order, not only the first.
pub fn parse_skill_md(file: &Path, bytes: &[u8]) -> Result<SkillDoc, Vec<SkillMdError>> {
    let folder = file
        .parent()
        .and_then(Path::file_name)
        .map(|name| name.to_string_lossy().into_owned());
    parse_with_folder(file, bytes, folder.as_deref())
}

/// Reads `file` (at most [`MAX_SKILL_MD_BYTES`]) and parses it like
/// [`parse_skill_md`].
pub fn read_skill_md(file: &Path) -> Result<SkillDoc, Vec<SkillMdError>> {
    let bytes = read_capped(file).map_err(|err| vec![err])?;
    parse_skill_md(file, &bytes)
}

/// Reads a `SKILL.md` like [`read_skill_md`] and also returns its Markdown
/// body: the text after the closing `---` fence, as written.
pub fn read_skill_md_body(file: &Path) -> Result<(SkillDoc, String), Vec<SkillMdError>> {
    let bytes = read_capped(file).map_err(|err| vec![err])?;
    let doc = parse_skill_md(file, &bytes)?;
    // Parsing succeeded, so the bytes are UTF-8 (after an optional BOM).
    let text = String::from_utf8_lossy(&bytes);
    let body = text
        .split_inclusive('\n')
        .skip(doc.body_line.saturating_sub(1))
        .collect();
    Ok((doc, body))
}

pub(crate) fn read_capped(file: &Path) -> Result<Vec<u8>, SkillMdError> {
    let fail = |rule, message: String| SkillMdError::new(file, None, rule, message);
    let meta =
        std::fs::metadata(file).map_err(|err| fail(Rule::Read, format!("cannot read: {err}")))?;
    if meta.is_dir() {
        return Err(fail(
            Rule::Read,
            format!("`{SKILL_MD}` is a directory, expected a file"),
        ));
    }
    // Opening a FIFO or a device could block forever.
    if !meta.is_file() {
        return Err(fail(Rule::Read, "not a regular file".into()));
    }
    let too_large = || {
        fail(
            Rule::FileSize,
            format!("file is larger than {MAX_SKILL_MD_BYTES} bytes (1 MiB)"),
        )
    };
    if meta.len() > MAX_SKILL_MD_BYTES {
        return Err(too_large());
    }
    let handle = File::open(file).map_err(|err| fail(Rule::Read, format!("cannot read: {err}")))?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // The file may grow between `metadata` and the read.
    handle
        .take(MAX_SKILL_MD_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| fail(Rule::Read, format!("cannot read: {err}")))?;
    if bytes.len() as u64 > MAX_SKILL_MD_BYTES {
        return Err(too_large());
    }
    Ok(bytes)
}

pub(crate) fn parse_with_folder(
    file: &Path,
    bytes: &[u8],
    folder: Option<&str>,
) -> Result<SkillDoc, Vec<SkillMdError>> {
    parse_all(file, bytes, folder).map_err(|refused| refused.errors)
}

/// Why a `SKILL.md` does not load: every error, and the warnings found
/// beside them (so a report shows a file's findings at once, not its
/// warnings only once its errors are fixed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refused {
    /// What stops it from loading, in line order.
    pub(crate) errors: Vec<SkillMdError>,
    /// What does not.
    pub(crate) warnings: Vec<SkillMdError>,
}

impl From<Vec<SkillMdError>> for Refused {
    fn from(errors: Vec<SkillMdError>) -> Self {
        Self {
            errors,
            warnings: Vec::new(),
        }
    }
}

/// [`parse_with_folder`], keeping the warnings of a file that does not load.
pub(crate) fn parse_all(
    file: &Path,
    bytes: &[u8],
    folder: Option<&str>,
) -> Result<SkillDoc, Refused> {
    let one = |line: Option<usize>, rule, message: String| {
        vec![SkillMdError::new(file, line, rule, message)]
    };
    if bytes.len() as u64 > MAX_SKILL_MD_BYTES {
        return Err(one(
            None,
            Rule::FileSize,
            format!("file is larger than {MAX_SKILL_MD_BYTES} bytes (1 MiB)"),
        )
        .into());
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => {
            let valid = bytes.get(..err.valid_up_to()).unwrap_or_default();
            let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
            let line_start = valid
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |at| at + 1);
            let column = String::from_utf8_lossy(valid.get(line_start..).unwrap_or_default())
                .chars()
                .count()
                + 1;
            return Err(vec![SkillMdError {
                column: Some(column),
                ..SkillMdError::new(file, Some(line), Rule::Encoding, "not valid UTF-8 text")
            }]
            .into());
        }
    };
    let mut warnings = Vec::new();
    let text = match text.strip_prefix('\u{feff}') {
        Some(rest) => {
            warnings.push(SkillMdError::new(
                file,
                Some(1),
                Rule::Encoding,
                "byte order mark ignored: save the file as UTF-8 without a BOM",
            ));
            rest
        }
        None => text,
    };
    // An error from here on keeps the warnings found so far.
    let refuse = |errors: Vec<SkillMdError>, warnings: &mut Vec<SkillMdError>| Refused {
        errors,
        warnings: std::mem::take(warnings),
    };

    let front = split_front_matter(text)
        .map_err(|(line, message)| refuse(one(Some(line), Rule::Fence, message), &mut warnings))?;
    if let Some(offset) = yaml::too_deep(&front.yaml) {
        let (line, column) = yaml::line_and_column(&front.yaml, offset);
        return Err(refuse(
            vec![SkillMdError {
                column: Some(column),
                ..SkillMdError::new(file, Some(line), Rule::Yaml, yaml::DEPTH_MESSAGE)
            }],
            &mut warnings,
        ));
    }
    let parsed = yaml::parse(&front.yaml).map_err(|problem| {
        let error = SkillMdError {
            file: file.to_path_buf(),
            line: problem.line.or(Some(1)),
            column: problem.column,
            rule: Rule::Yaml,
            message: bounded_message(format!("invalid YAML: {}", problem.message)),
        };
        refuse(vec![error], &mut warnings)
    })?;
    let fields = match parsed.value {
        Value::Object(mut fields) if !fields.is_empty() => {
            keep_scalar_text(&front.yaml, &mut fields, parsed.loosened);
            // A `.inf`, `.nan` or over-wide integer outside the fields read
            // as text (in a schema): refused where it stands, as JSON cannot
            // hold it.
            if parsed.loosened
                && let Some((top, below)) = fields
                    .iter()
                    .find_map(|(key, value)| Some((key, yaml::placeholder_at(value)?)))
            {
                let path = format!("{top}{below}");
                let error = one(
                    front.top_keys.get(top).copied().or(Some(1)),
                    Rule::Yaml,
                    format!(
                        "invalid YAML: {}: `.nan`, `.inf` and integers wider than 64 bits are not supported (JSON cannot hold them; quote them for the text)",
                        agents_core::text::shorten(&path, agents_core::text::MAX_ECHO_BYTES)
                    ),
                );
                return Err(refuse(error, &mut warnings));
            }
            fields
        }
        Value::Null | Value::Object(_) => {
            let error = one(
                Some(1),
                Rule::FrontMatter,
                "front-matter is empty, expected at least `name` and `description`".into(),
            );
            return Err(refuse(error, &mut warnings));
        }
        other => {
            let error = one(
                Some(2),
                Rule::FrontMatter,
                format!(
                    "front-matter must be a YAML mapping of fields, got {}",
                    kind(&other)
                ),
            );
            return Err(refuse(error, &mut warnings));
        }
    };
    let mut checker = Checker {
        file,
        front: &front,
        errors: Vec::new(),
        warnings,
        near: Vec::new(),
    };
    let doc = checker.check(fields, folder, front.body_line);
    let Checker {
        mut errors,
        mut warnings,
        ..
    } = checker;
    cap(&mut warnings, file, "warnings");
    match doc {
        Some(mut doc) if errors.is_empty() => {
            doc.warnings = warnings;
            Ok(doc)
        }
        _ => {
            errors.sort_by_key(|err| (err.line, err.column));
            cap(&mut errors, file, "errors");
            Err(Refused { errors, warnings })
        }
    }
}

/// The fields whose value is a string: a plain scalar in one of them is
/// read as the text it was written as.
const STRING_FIELDS: [&str; 5] = [
    "name",
    "description",
    "license",
    "compatibility",
    "allowed-tools",
];

/// Puts back the text of plain scalars YAML read as numbers or booleans in
/// the string fields and the `metadata` values (`version: 1.10` is
/// `"1.10"`, `0x1F` stays `"0x1F"`), as the standard's reference reader
/// does: every front-matter scalar is text. The second read of the front
/// matter this needs is skipped when no such scalar is there, as in almost
/// every file.
fn keep_scalar_text(yaml: &str, fields: &mut Map<String, Value>, loosened: bool) {
    let typed = |value: &Value| matches!(value, Value::Number(_) | Value::Bool(_));
    let needed = loosened
        || STRING_FIELDS
            .iter()
            .any(|key| fields.get(*key).is_some_and(typed))
        || matches!(fields.get("metadata"), Some(Value::Object(entries)) if entries.values().any(typed));
    if !needed {
        return;
    }
    let wanted = yaml::Wanted {
        fields: &STRING_FIELDS,
        map: "metadata",
    };
    let Some(texts) = yaml::scalar_texts(yaml, fields, &wanted) else {
        return;
    };
    for (key, text) in texts.fields {
        fields.insert(key, Value::String(text));
    }
    if let Some(Value::Object(entries)) = fields.get_mut("metadata") {
        for (key, text) in texts.map {
            entries.insert(key, Value::String(text));
        }
    }
}

/// Keeps the first [`MAX_WARNINGS`] of `problems` and says how many more
/// there were: a file of tens of thousands of bad `metadata` keys would
/// otherwise print one line each (hundreds of megabytes with a long path).
fn cap(problems: &mut Vec<SkillMdError>, file: &Path, what: &str) {
    if let Some(cut) = problems.get(MAX_WARNINGS) {
        let more = problems.len() - MAX_WARNINGS;
        let (line, rule) = (cut.line, cut.rule);
        problems.truncate(MAX_WARNINGS);
        problems.push(SkillMdError::new(
            file,
            line,
            rule,
            format!("{more} more {what} not shown"),
        ));
    }
}

/// The YAML between the fences, padded so that its line numbers are the
/// file's line numbers.
struct FrontMatter {
    yaml: String,
    /// Line of the closing fence.
    closing_line: usize,
    body_line: usize,
    /// First line of each top-level key written in block style; built once
    /// so that many keys cost linear time.
    top_keys: HashMap<String, usize>,
}

fn split_front_matter(text: &str) -> Result<FrontMatter, (usize, String)> {
    let is_fence = |line: &str| line.trim_end_matches(['\n', '\r', ' ', '\t']) == "---";
    let mut lines = text.split_inclusive('\n');
    let Some(first) = lines.next() else {
        return Err((
            1,
            "file is empty, expected front-matter between `---` lines".into(),
        ));
    };
    if !is_fence(first) {
        // Classic Mac line endings: the whole file is one "line".
        if first.starts_with("---\r") && !first.contains('\n') {
            return Err((
                1,
                "lines end in a lone carriage return (`\\r`, classic Mac line endings): save the file with `\\n` or `\\r\\n` line endings".into(),
            ));
        }
        return Err((
            1,
            "expected `---` on the first line to open the front-matter".into(),
        ));
    }
    let mut offset = first.len();
    for (index, line) in lines.enumerate() {
        if is_fence(line) {
            let closing_line = index + 2;
            // The opening fence becomes an empty line: YAML line N is file line N.
            let yaml = format!("\n{}", &text[first.len()..offset]);
            let mut front = FrontMatter {
                yaml,
                closing_line,
                body_line: closing_line + 1,
                top_keys: HashMap::new(),
            };
            front.top_keys = key_lines(front.lines());
            return Ok(front);
        }
        offset += line.len();
    }
    Err((
        1,
        "front-matter opened on line 1 is never closed by a `---` line".into(),
    ))
}

impl FrontMatter {
    /// Line of a top-level key written in block style (`key:` at column 1).
    fn key_line(&self, key: &str) -> Option<usize> {
        self.top_keys.get(key).copied()
    }

    /// Lines of the keys indented under the top-level `parent`.
    fn child_lines(&self, parent: &str) -> HashMap<String, usize> {
        let Some(start) = self.key_line(parent) else {
            return HashMap::new();
        };
        let block = self
            .lines()
            .skip_while(|(number, _)| *number <= start)
            .take_while(|(_, line)| line.is_empty() || line.starts_with([' ', '\t', '#']))
            .map(|(number, line)| (number, line.trim_start()));
        key_lines(block)
    }

    fn lines(&self) -> impl Iterator<Item = (usize, &str)> {
        self.yaml
            .split('\n')
            .enumerate()
            .map(|(index, line)| (index + 1, line.trim_end_matches('\r')))
            .take_while(|(number, _)| *number < self.closing_line)
    }
}

/// The key each `key: value` line starts with (plain, `"quoted"` or
/// `'quoted'`), first occurrence kept.
fn key_lines<'a>(lines: impl Iterator<Item = (usize, &'a str)>) -> HashMap<String, usize> {
    let mut keys = HashMap::new();
    for (number, line) in lines {
        if let Some(key) = leading_key(line) {
            keys.entry(key.to_owned()).or_insert(number);
        }
    }
    keys
}

fn leading_key(line: &str) -> Option<&str> {
    let (key, rest) = match line.chars().next()? {
        quote @ ('"' | '\'') => {
            let inner = &line[1..];
            let end = inner.find(quote)?;
            (&inner[..end], &inner[end + 1..])
        }
        ' ' | '\t' | '#' | '-' => return None,
        _ => {
            let colon = line
                .match_indices(':')
                .map(|(at, _)| at)
                .find(|&at| line[at + 1..].is_empty() || line[at + 1..].starts_with([' ', '\t']))?;
            (line[..colon].trim_end(), &line[colon..])
        }
    };
    rest.trim_start_matches([' ', '\t'])
        .starts_with(':')
        .then_some(key)
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a sequence",
        Value::Object(_) => "a mapping",
    }
}

/// `value` quoted for a message, cut to [`SHOWN_CHARS`].
/// Longest message of one `SkillMdError`, in bytes.
const MAX_MESSAGE_BYTES: usize = 2048;

/// Every message may quote the file: control characters escaped, cut to
/// [`MAX_MESSAGE_BYTES`] (found by the `skill_md` fuzz target: a YAML error
/// quoted a tab raw).
fn bounded_message(message: String) -> String {
    match agents_core::text::shorten(&message, MAX_MESSAGE_BYTES) {
        std::borrow::Cow::Borrowed(_) => message,
        std::borrow::Cow::Owned(shown) => shown,
    }
}

/// A value quoted in a message: cut, and control characters escaped (a
/// name with tabs or escapes came out raw; found by the `skill_md` fuzz target).
fn shown(value: &str) -> String {
    let escaped = |text: &str| agents_core::text::escape_control(text).into_owned();
    if value.chars().count() <= SHOWN_CHARS {
        format!("`{}`", escaped(value))
    } else {
        let cut: String = value.chars().take(SHOWN_CHARS).collect();
        format!("`{}…`", escaped(&cut))
    }
}

struct Checker<'a> {
    file: &'a Path,
    front: &'a FrontMatter,
    errors: Vec<SkillMdError>,
    warnings: Vec<SkillMdError>,
    /// Unknown keys that look like a misspelled field: (field, key, line).
    near: Vec<(&'static str, String, Option<usize>)>,
}

/// The field `key` looks like a misspelling of: at most two edits away
/// (a swap counting one), for a key no longer than any field.
fn misspelled_field(key: &str) -> Option<&'static str> {
    if key.len() > 32 {
        return None;
    }
    STANDARD_FIELDS
        .iter()
        .chain(EXTENSION_FIELDS.iter())
        .map(|field| (strsim::damerau_levenshtein(key, field), *field))
        .filter(|(distance, field)| *distance <= 2 && *distance < field.len() / 2)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, field)| field)
}

impl Checker<'_> {
    fn line_of(&self, key: &str) -> Option<usize> {
        self.front.key_line(key).or(Some(1))
    }

    fn error(&mut self, key: &str, rule: Rule, message: String) {
        let line = self.line_of(key);
        self.errors
            .push(SkillMdError::new(self.file, line, rule, message));
    }

    fn check(
        &mut self,
        mut fields: Map<String, Value>,
        folder: Option<&str>,
        body_line: usize,
    ) -> Option<SkillDoc> {
        let unknown: Vec<&String> = fields
            .keys()
            .filter(|key| {
                !STANDARD_FIELDS.contains(&key.as_str())
                    && !EXTENSION_FIELDS.contains(&key.as_str())
            })
            .collect();
        for key in unknown {
            let line = self.line_of(key);
            let near = misspelled_field(key);
            let hint = near.map_or(String::new(), |field| format!(" (did you mean `{field}`?)"));
            self.warnings.push(SkillMdError::new(
                self.file,
                line,
                Rule::UnknownField,
                format!(
                    "unknown field {} ignored{hint}: the Agent Skills standard defines `name`, `description`, `license`, `compatibility`, `metadata` and `allowed-tools` (this registry also reads `input_schema` and `output_schema`)",
                    shown(key)
                ),
            ));
            if let Some(field) = near {
                self.near.push((field, key.clone(), line));
            }
        }
        let name = self.name(fields.remove("name"), folder);
        let description = self.description(fields.remove("description"));
        let license = self.optional_string("license", fields.remove("license"));
        let compatibility = self.compatibility(fields.remove("compatibility"));
        let metadata = self.metadata(fields.remove("metadata"));
        let allowed_tools = self.allowed_tools(fields.remove("allowed-tools"));
        let input_schema = self.schema("input_schema", fields.remove("input_schema"));
        let output_schema = self.schema("output_schema", fields.remove("output_schema"));
        Some(SkillDoc {
            name: name?,
            description: description?,
            license,
            compatibility,
            metadata,
            allowed_tools,
            input_schema,
            output_schema,
            body_line,
            warnings: Vec::new(),
        })
    }

    /// A required string field: missing, null and non-strings are errors.
    fn required_string(&mut self, key: &str, value: Option<Value>) -> Option<String> {
        match value {
            None => {
                // The warning about a misspelled key would not show with
                // the error it explains (a folder that fails lists errors).
                let hint = self.near.iter().find(|(field, ..)| *field == key).map_or(
                    String::new(),
                    |(_, found, line)| {
                        let at = line.map_or(String::new(), |line| format!(" on line {line}"));
                        format!(" (is {}{at} a misspelling of it?)", shown(found))
                    },
                );
                self.errors.push(SkillMdError::new(
                    self.file,
                    Some(1),
                    Rule::MissingField,
                    format!("missing required field `{key}`{hint}"),
                ));
                None
            }
            Some(Value::Null) => Some(String::new()),
            Some(Value::String(text)) => Some(text),
            Some(other) => {
                self.error(
                    key,
                    Rule::FieldType,
                    format!("`{key}` must be a string, got {}", kind(&other)),
                );
                None
            }
        }
    }

    /// An optional string field: null counts as absent.
    fn optional_string(&mut self, key: &str, value: Option<Value>) -> Option<String> {
        match value? {
            Value::Null => None,
            Value::String(text) => Some(text),
            other => {
                self.error(
                    key,
                    Rule::FieldType,
                    format!("`{key}` must be a string, got {}", kind(&other)),
                );
                None
            }
        }
    }

    fn name(&mut self, value: Option<Value>, folder: Option<&str>) -> Option<String> {
        let name = self.required_string("name", value)?;
        let before = self.errors.len();
        if name.trim().is_empty() {
            self.error("name", Rule::NameFormat, "`name` must not be empty".into());
            return None;
        }
        let count = name.chars().count();
        if count > MAX_NAME_CHARS {
            self.error(
                "name",
                Rule::NameLength,
                format!(
                    "name {} is {count} characters, at most {MAX_NAME_CHARS} are allowed",
                    shown(&name)
                ),
            );
        }
        if !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            self.error(
                "name",
                Rule::NameFormat,
                format!(
                    "name {} must be lowercase ASCII letters, digits and hyphens",
                    shown(&name)
                ),
            );
        }
        if name.starts_with('-') || name.ends_with('-') {
            self.error(
                "name",
                Rule::NameFormat,
                format!("name {} must not start or end with a hyphen", shown(&name)),
            );
        }
        if name.contains("--") {
            self.error(
                "name",
                Rule::NameFormat,
                format!("name {} must not contain consecutive hyphens", shown(&name)),
            );
        }
        if let Some(folder) = folder
            && folder != name
        {
            self.error(
                "name",
                Rule::NameFolder,
                format!(
                    "name {} must equal its folder's name {}",
                    shown(&name),
                    shown(folder)
                ),
            );
        }
        (self.errors.len() == before).then_some(name)
    }

    fn description(&mut self, value: Option<Value>) -> Option<String> {
        let text = self.required_string("description", value)?;
        let trimmed = text.trim();
        if trimmed.is_empty() {
            self.error(
                "description",
                Rule::Description,
                "`description` must not be empty".into(),
            );
            return None;
        }
        let count = trimmed.chars().count();
        if count > MAX_DESCRIPTION_CHARS {
            self.error(
                "description",
                Rule::Description,
                format!("`description` is {count} characters, at most {MAX_DESCRIPTION_CHARS} are allowed"),
            );
            return None;
        }
        Some(trimmed.to_owned())
    }

    fn compatibility(&mut self, value: Option<Value>) -> Option<String> {
        let text = self.optional_string("compatibility", value)?;
        if text.trim().is_empty() {
            self.error(
                "compatibility",
                Rule::Compatibility,
                "`compatibility` must not be empty when given".into(),
            );
            return None;
        }
        let count = text.chars().count();
        if count > MAX_COMPATIBILITY_CHARS {
            self.error(
                "compatibility",
                Rule::Compatibility,
                format!("`compatibility` is {count} characters, at most {MAX_COMPATIBILITY_CHARS} are allowed"),
            );
            return None;
        }
        Some(text)
    }

    fn metadata(&mut self, value: Option<Value>) -> IndexMap<String, String> {
        let mut out = IndexMap::new();
        let entries = match value {
            None | Some(Value::Null) => return out,
            Some(Value::Object(entries)) => entries,
            Some(other) => {
                self.error(
                    "metadata",
                    Rule::Metadata,
                    format!(
                        "`metadata` must be a mapping of strings to strings, got {}",
                        kind(&other)
                    ),
                );
                return out;
            }
        };
        let children = self.front.child_lines("metadata");
        for (key, value) in entries {
            let line = children
                .get(&key)
                .copied()
                .or_else(|| self.line_of("metadata"));
            let text = match value {
                Value::String(text) => text,
                // `key:`, `key: ~`, `key: null`: no value, but the key was
                // written; a map of strings keeps it, empty.
                Value::Null => {
                    self.warnings.push(SkillMdError::new(
                        self.file,
                        line,
                        Rule::Metadata,
                        format!(
                            "metadata {} is null, stored as the empty string: quote its value to keep a text",
                            shown(&key)
                        ),
                    ));
                    String::new()
                }
                // Plain scalars are read back as written (`keep_scalar_text`);
                // this is only reached if that second read failed.
                Value::Number(_) | Value::Bool(_) => {
                    let text = value.to_string();
                    self.warnings.push(SkillMdError::new(
                        self.file,
                        line,
                        Rule::Metadata,
                        format!(
                            "metadata {} is {}, stored as the string `{text}`: quote it to keep it exactly as written",
                            shown(&key),
                            kind(&value)
                        ),
                    ));
                    text
                }
                other => {
                    self.errors.push(SkillMdError::new(
                        self.file,
                        line,
                        Rule::Metadata,
                        format!(
                            "metadata {} must be a string, got {}",
                            shown(&key),
                            kind(&other)
                        ),
                    ));
                    continue;
                }
            };
            out.insert(key, text);
        }
        out
    }

    fn allowed_tools(&mut self, value: Option<Value>) -> Option<String> {
        let joined = match value? {
            Value::Null => return None,
            Value::String(text) => text,
            Value::Array(items) if items.iter().all(Value::is_string) => items
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" "),
            other => {
                let got = match &other {
                    Value::Array(_) => "a sequence with non-string items",
                    other => kind(other),
                };
                self.error(
                    "allowed-tools",
                    Rule::AllowedTools,
                    format!("`allowed-tools` must be a space-separated string or a list of strings, got {got}"),
                );
                return None;
            }
        };
        let joined = joined.trim();
        (!joined.is_empty()).then(|| joined.to_owned())
    }

    fn schema(&mut self, key: &str, value: Option<Value>) -> Option<Value> {
        match value? {
            Value::Null => None,
            schema => match check_schema(&schema) {
                Ok(()) => Some(schema),
                Err(message) => {
                    self.error(key, Rule::Schema, format!("`{key}`: {message}"));
                    None
                }
            },
        }
    }
}
