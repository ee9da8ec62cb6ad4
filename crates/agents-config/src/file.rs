//! `config.toml`: its shape, and errors pointing into it.

use std::fmt;
use std::ops::Range;
use std::path::Path;

use indexmap::IndexMap;
use serde::Deserialize;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use toml::Spanned;

use crate::ConfigError;

/// Config files larger than this are refused: a config is a few lines.
pub(crate) const MAX_CONFIG_BYTES: u64 = 1 << 20;

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "CleverAgents config.toml")]
pub(crate) struct FileConfig {
    #[serde(default)]
    pub database: DatabaseTable,
    #[serde(default)]
    pub skills: SkillsTable,
    #[serde(default)]
    pub mcp: McpTable,
    #[serde(default)]
    pub limits: LimitsTable,
}

/// How large and deeply nested the files `agents` reads may be.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct LimitsTable {
    /// Deepest nesting of skill, tool, plan and export files (default 64, at most 128)
    #[schemars(with = "Option<u64>", range(min = 1, max = 128))]
    pub max_depth: Option<Spanned<i64>>,
    /// Largest skill or tool file, in bytes (default 16 MiB, at most 256 MiB)
    #[schemars(with = "Option<u64>", range(min = 1, max = 268435456))]
    pub definition_max_bytes: Option<Spanned<i64>>,
    /// Largest plan file, in bytes (default 1 MiB, at most 256 MiB)
    #[schemars(with = "Option<u64>", range(min = 1, max = 268435456))]
    pub plan_max_bytes: Option<Spanned<i64>>,
    /// Largest `db import` file, in bytes (default 256 MiB, at most 256 MiB)
    #[schemars(with = "Option<u64>", range(min = 1, max = 268435456))]
    pub export_max_bytes: Option<Spanned<i64>>,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DatabaseTable {
    /// `sqlite:///abs/path.db`, `sqlite://relative.db` or `postgres://…`
    #[schemars(with = "Option<String>")]
    pub url: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SkillsTable {
    /// Folders scanned for Agent Skills: a comma-separated string or a list
    #[schemars(with = "Option<PathList>")]
    pub agent_skills_paths: Option<Spanned<PathList>>,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct McpTable {
    /// Seconds to wait for an MCP server (default 30)
    #[schemars(with = "Option<u64>", range(min = 1))]
    pub timeout_s: Option<Spanned<i64>>,
    /// MCP servers by name: `command` (stdio) or `url` (streamable HTTP)
    #[serde(default)]
    #[schemars(with = "IndexMap<String, ServerTable>")]
    pub servers: IndexMap<String, Spanned<ServerTable>>,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ServerTable {
    /// Program of a stdio server
    pub command: Option<String>,
    /// Its arguments
    #[serde(default)]
    pub args: Vec<String>,
    /// Its environment; `${VAR}` is expanded when the server starts
    #[serde(default)]
    pub env: IndexMap<String, String>,
    /// Its working directory
    pub cwd: Option<String>,
    /// Endpoint of a streamable-HTTP server
    pub url: Option<String>,
    /// HTTP headers; `${VAR}` is expanded when the server is queried
    #[serde(default)]
    pub headers: IndexMap<String, String>,
    /// Only these of the server's tools
    pub tools: Option<Vec<String>>,
    /// Seconds to wait for this server
    #[schemars(with = "Option<u64>", range(min = 1))]
    pub timeout_s: Option<Spanned<i64>>,
    /// Not started until its definition is trusted on this machine (set on
    /// servers imported from a project's file or from a file another user
    /// could have written)
    #[serde(default)]
    pub untrusted: bool,
}

/// `agent_skills_paths`: the documented comma-separated string, or a TOML
/// array of strings.
#[derive(Debug)]
pub(crate) enum PathList {
    Joined(String),
    Items(Vec<String>),
}

impl schemars::JsonSchema for PathList {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "PathList".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "anyOf": [
                {"type": "string", "description": "comma-separated folders"},
                {"type": "array", "items": {"type": "string"}},
            ]
        })
    }
}

/// The JSON Schema of `config.toml`, generated from the types that parse it.
pub fn config_schema() -> serde_json::Value {
    schemars::schema_for!(FileConfig).to_value()
}

impl<'de> Deserialize<'de> for PathList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ListVisitor;
        impl<'de> Visitor<'de> for ListVisitor {
            type Value = PathList;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a comma-separated string or an array of strings")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<PathList, E> {
                Ok(PathList::Joined(v.to_owned()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<PathList, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<String>()? {
                    items.push(item);
                }
                Ok(PathList::Items(items))
            }
        }
        deserializer.deserialize_any(ListVisitor)
    }
}

/// Reads and parses `path`; `Ok(None)` when it does not exist.
pub(crate) fn load(path: &Path) -> Result<Option<(String, FileConfig)>, ConfigError> {
    let read_error = |source: std::io::Error| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    };
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(read_error(err)),
    };
    if !meta.is_file() {
        return Err(ConfigError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    // Its MCP servers run, with this user's secrets, without asking: a file
    // another user can change is refused, as ssh refuses such a config.
    if let Some(exposure) = agents_fs::exposure(&meta) {
        return Err(ConfigError::Exposed {
            path: path.to_path_buf(),
            exposure,
        });
    }
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(ConfigError::TooLarge {
            path: path.to_path_buf(),
            limit: MAX_CONFIG_BYTES,
        });
    }
    let bytes = std::fs::read(path).map_err(read_error)?;
    let text = String::from_utf8(bytes).map_err(|err| {
        let at = err.utf8_error().valid_up_to();
        // Everything before `at` is valid, so its line and column are those
        // of the lossy text; the bad byte shows as U+FFFD under the caret.
        let lossy = String::from_utf8_lossy(err.as_bytes());
        located(
            path,
            &lossy,
            at..at + 1,
            "config file is not valid UTF-8".into(),
        )
    })?;
    let config = toml::from_str::<FileConfig>(&text).map_err(|err| {
        let span = err.span().unwrap_or(0..0);
        located(path, &text, span, err.message().trim_end().to_owned())
    })?;
    Ok(Some((text, config)))
}

/// An error at `span` of `text`: `file:line:column: message`, then the line
/// with a caret under the span.
pub(crate) fn located(path: &Path, text: &str, span: Range<usize>, message: String) -> ConfigError {
    let start = floor_char_boundary(text, span.start.min(text.len()));
    let line_start = text[..start].rfind('\n').map_or(0, |at| at + 1);
    let line_end = text[start..].find('\n').map_or(text.len(), |at| start + at);
    let line_text = text[line_start..line_end].trim_end_matches('\r');
    let line = text[..start].matches('\n').count() + 1;
    let column = text[line_start..start].chars().count() + 1;
    // `start` may sit on the `\r` trimmed off the line (or after it): then
    // the caret marks one column there, never a negative width.
    let line_end = (line_start + line_text.len()).max(start);
    let end = floor_char_boundary(text, span.end.clamp(start, line_end));
    let width = text[start..end].chars().count().max(1);
    let gutter = " ".repeat(line.to_string().len());
    let secret_table = in_secret_table(&text[..line_start]);
    let original = line_text;
    let line_text = shown_line(original, secret_table);
    // The echoed line is cut to a few hundred characters: the caret stays
    // within it (the position is in the message's line:column anyway), and
    // moves with the text where a value before it was masked.
    let shown = line_text.chars().count();
    let pad = agents_core::text::masked_caret(original, &line_text, column - 1, |text| {
        shown_line(text, secret_table)
    })
    .unwrap_or(column - 1)
    .min(shown);
    let width = width.min(shown.saturating_sub(pad)).max(1);
    let snippet = format!(
        "{gutter} |\n{line} | {line_text}\n{gutter} | {}{}",
        " ".repeat(pad),
        "^".repeat(width)
    );
    ConfigError::File {
        path: path.to_path_buf(),
        line,
        column,
        // Messages quote names from the file (a server name may hold any
        // character TOML can escape): shown, never sent raw, and cut.
        message: agents_core::text::bounded_message(&agents_core::redact::redact_text(&message)),
        snippet,
    }
}

/// Whether the last table header in `before` (the file up to a line) opens
/// an `env` or `headers` table, whose every value may be a secret.
fn in_secret_table(before: &str) -> bool {
    before
        .lines()
        .rev()
        .map(str::trim)
        .find(|line| line.starts_with('['))
        .and_then(|header| header.trim_matches(['[', ']']).rsplit('.').next())
        .is_some_and(|last| matches!(last.trim().trim_matches(['"', '\'']), "env" | "headers"))
}

/// The echoed line, without secrets (a URL's password, a secret-named key's
/// value, an inline `env`/`headers` table) or control characters, and short.
fn shown_line(line_text: &str, secret_table: bool) -> String {
    use agents_core::redact::{REDACTED, is_secret_name, redact_url};
    let key = line_text.split('=').next().unwrap_or_default().trim();
    // A quoted key (`"password" = …`) is the same key.
    let bare = key.trim_matches(['"', '\'']);
    let text = if line_text.contains('=') && secret_table {
        format!("{key} = {REDACTED}")
    } else if line_text.contains("://") {
        redact_url(line_text)
    } else if line_text.contains('=')
        && (is_secret_name(bare) || bare == "env" || bare == "headers")
    {
        format!("{key} = {REDACTED}")
    } else {
        line_text.to_owned()
    };
    // A value may hold a `password=…` pair whatever its key.
    let text = agents_core::redact::redact_inline_args(&agents_core::redact::redact_text(&text));
    agents_core::text::shorten(&text, 400).into_owned()
}

fn floor_char_boundary(text: &str, mut index: usize) -> usize {
    while index > 0 && !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}
