//! `agents mcp import`: the MCP servers other clients already know, written
//! into `config.toml` as `[mcp.servers.NAME]` tables.
//!
//! Read formats: `mcpServers` (Claude Desktop's `claude_desktop_config.json`,
//! Claude Code's `.mcp.json` and `~/.claude.json`) and `servers` (VS Code's
//! `.vscode/mcp.json`), as JSON with comments and trailing commas (JSONC).
//! The config file is edited with `toml_edit`, so its comments, order and
//! formatting stay as they were; a server already in it is skipped, never
//! overwritten. Each server is checked as loading the config would check it,
//! and one that would not load, or that uses a `${…}` agents would not expand
//! as its client does, is skipped with the reason. The result is parsed and
//! checked like any config file before it is handed back, so an import cannot
//! leave a config that fails to load.

use std::path::{Path, PathBuf};

use serde_json::Value;
use toml_edit::{DocumentMut, Item, Table, value};

use crate::ConfigError;

/// Where a client file comes from, which decides whether the servers
/// imported from it start as the config file's own do, or only once
/// trusted on this machine (`untrusted = true` in the config file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Provenance {
    /// A file only this user could have written, not a project's.
    Own,
    /// A project's file (`.mcp.json`, `.vscode/mcp.json`, `.cursor/mcp.json`):
    /// it comes with a checkout, from whoever could commit to it.
    Project,
    /// A file another user owns, or that others may write.
    Others(agents_fs::Exposure),
    /// Standard input: who wrote it is not known.
    Stdin,
}

impl Provenance {
    /// Where the file `path` (`-`: standard input) comes from, given its
    /// metadata as read (`None` for standard input).
    pub fn of(path: &Path, metadata: Option<&std::fs::Metadata>) -> Self {
        let Some(metadata) = metadata else {
            return Self::Stdin;
        };
        // A link named otherwise still points at a project's file.
        let canonical = std::fs::canonicalize(path).ok();
        if is_project_file(path) || canonical.as_deref().is_some_and(is_project_file) {
            return Self::Project;
        }
        match agents_fs::written_by_others(metadata) {
            Some(exposure) => Self::Others(exposure),
            None => Self::Own,
        }
    }

    /// Whether servers from such a file are imported untrusted.
    pub fn untrusted(&self) -> bool {
        *self != Self::Own
    }

    /// Why its servers are imported untrusted; `None` when they are not.
    pub fn reason(&self) -> Option<String> {
        match self {
            Self::Own => None,
            Self::Project => Some(
                "it is a project's file, which comes with a checkout from whoever could commit to it"
                    .to_owned(),
            ),
            Self::Others(exposure) => Some(exposure.to_string()),
            Self::Stdin => Some("it came from standard input, written by anyone".to_owned()),
        }
    }
}

/// `.mcp.json` (Claude Code), or `mcp.json` in a folder whose name starts
/// with a dot (`.vscode/mcp.json`, `.cursor/mcp.json`): files a project
/// carries.
fn is_project_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|name| name.to_str());
    let folder = path
        .parent()
        .and_then(Path::file_name)
        .and_then(|name| name.to_str());
    name == Some(".mcp.json")
        || (name == Some("mcp.json") && folder.is_some_and(|folder| folder.starts_with('.')))
}

/// What an import did.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportReport {
    /// The file the servers came from.
    pub source: PathBuf,
    /// Servers written, in the source's order.
    pub added: Vec<String>,
    /// The servers of `added` as the config file will define them (`${VAR}`
    /// references as written): what importing them consents to.
    pub servers: Vec<agents_core::McpSource>,
    /// Why the added servers are marked `untrusted` (they then start only
    /// once trusted on this machine); `None` when they are not.
    pub untrusted: Option<String>,
    /// Servers left out, each with the reason.
    pub skipped: Vec<(String, String)>,
    /// The new config file text.
    pub config: String,
    /// The same text with literal `env` and `headers` values masked, fit to
    /// print (`${VAR}` references are kept: they are not secrets).
    pub shown: String,
    /// The config file's text the import was made against ([`write_import`]
    /// writes nothing when the file has changed since).
    pub base: String,
}

/// Largest client file read: these files hold a few servers.
const MAX_CLIENT_BYTES: usize = 1 << 20;
/// How much of a client file's JSON error is echoed, in bytes (both ends kept).
const MAX_MESSAGE_BYTES: usize = 200;

/// Merges the servers of the client file `source` (its text `source_text`)
/// into the config file text `config_text` (empty when there is none yet);
/// `config_path` only names the config file in errors. Each server added
/// from a file of `provenance` other than the user's own is marked
/// `untrusted = true`.
pub fn import_mcp_servers(
    source: &Path,
    source_text: &str,
    config_path: &Path,
    config_text: &str,
    provenance: &Provenance,
) -> Result<ImportReport, ConfigError> {
    let fail = |message: String| ConfigError::Import {
        path: source.to_path_buf(),
        message,
    };
    if source_text.len() > MAX_CLIENT_BYTES {
        return Err(fail(format!(
            "file is larger than {MAX_CLIENT_BYTES} bytes"
        )));
    }
    let text = without_comments(agents_core::text::without_bom(source_text));
    let json = agents_core::walk::json_from_str(&text).map_err(|err| {
        let text = err.to_string();
        let shown = agents_core::text::shorten_middle(&text, MAX_MESSAGE_BYTES);
        fail(match err.classify() {
            // A repeated key: the text is JSON, its meaning is not clear.
            serde_json::error::Category::Data => shown.into_owned(),
            _ => format!("not JSON: {shown}"),
        })
    })?;
    let (servers, client) = match (json.get("mcpServers"), json.get("servers")) {
        (Some(servers), _) => (servers.as_object(), Client::Claude),
        (None, Some(servers)) => (servers.as_object(), Client::VsCode),
        (None, None) => (None, Client::Claude),
    };
    let projects = project_servers(&json);
    let no_servers = serde_json::Map::new();
    let servers = match servers {
        Some(servers) => servers,
        // `~/.claude.json` without servers of its own.
        None if json.get("mcpServers").is_none() && !projects.is_empty() => &no_servers,
        None => {
            return Err(fail(
                "expected an `mcpServers` object (Claude Desktop, Claude Code) or a `servers` \
                 object (VS Code)"
                    .into(),
            ));
        }
    };
    // The file as it is must load: what is wrong in it is its own error,
    // never blamed on a server being imported.
    crate::check_config_text(config_path, config_text)?;
    let mut real: DocumentMut = config_text.parse().map_err(|err: toml_edit::TomlError| {
        let span = err.span().unwrap_or(0..0);
        crate::file::located(config_path, config_text, span, err.message().to_owned())
    })?;
    let mut shown = real.clone();
    let mut added = Vec::new();
    let mut added_servers = Vec::new();
    let mut skipped = Vec::new();
    for (name, entry) in servers {
        if has_server(servers_item(&mut real, config_path)?, name) {
            skipped.push((name.clone(), "already in the config file".to_owned()));
            continue;
        }
        // A name the config would refuse skips that server, like any other
        // entry this tool cannot take, instead of failing the whole import.
        if let Err(reason) = agents_core::validate_server_name(name) {
            skipped.push((name.clone(), agents_core::text::bounded_message(&reason)));
            continue;
        }
        match server_tables(name, entry, client) {
            Ok((mut table, mut masked, server)) => {
                if provenance.untrusted() {
                    for t in [&mut table, &mut masked] {
                        t.insert("untrusted", value(true));
                    }
                }
                add_server(servers_item(&mut real, config_path)?, name, table);
                add_server(servers_item(&mut shown, config_path)?, name, masked);
                added.push(name.clone());
                added_servers.push(server);
            }
            // The reason may quote a key of the file whole.
            Err(reason) => {
                skipped.push((name.clone(), agents_core::text::bounded_message(&reason)))
            }
        }
    }
    // Claude Code's per-project servers (`~/.claude.json`): `config.toml`
    // has no per-project servers, and adding them all would start every
    // project's servers everywhere.
    for (project, name) in projects {
        let project = agents_core::text::shorten(project, agents_core::text::MAX_ECHO_BYTES);
        skipped.push((
            name.to_owned(),
            agents_core::text::bounded_message(&format!(
                "a server of the project `{project}` (`projects` in Claude Code's file): \
                 `config.toml` has no per-project servers; define it by hand to have it everywhere"
            )),
        ));
    }
    let config = real.to_string();
    // The result must load like any config file (names, fields, rules).
    crate::check_config_text(config_path, &config)?;
    // What was already in the file is printed too: masked like the new.
    for (key, item) in shown.as_table_mut().iter_mut() {
        mask_item(&key, item, false);
    }
    Ok(ImportReport {
        source: source.to_path_buf(),
        added,
        servers: added_servers,
        untrusted: provenance.reason(),
        skipped,
        config,
        shown: shown.to_string(),
        base: config_text.to_owned(),
    })
}

/// Masks the secrets under `item` (named `key`) for printing: every value of
/// an `env` or `headers` table but a bare `${NAME}` reference
/// ([`agents_core::redact::redact_setting_value`]), the value of a
/// secret-named key, and a URL's password and secret query values.
fn mask_item(key: &str, item: &mut Item, setting: bool) {
    let setting = setting || key == "env" || key == "headers";
    match item {
        Item::Table(table) => {
            for (key, item) in table.iter_mut() {
                mask_item(&key, item, setting);
            }
        }
        Item::ArrayOfTables(tables) => {
            for table in tables.iter_mut() {
                for (key, item) in table.iter_mut() {
                    mask_item(&key, item, setting);
                }
            }
        }
        Item::Value(value) => mask_value(key, value, setting),
        Item::None => {}
    }
}

/// [`mask_item`] of a value (an inline table's entries are values too).
fn mask_value(key: &str, value: &mut toml_edit::Value, setting: bool) {
    use agents_core::redact::{REDACTED, is_secret_name, redact_setting_value, redact_url};
    let setting = setting || key == "env" || key == "headers";
    match value {
        toml_edit::Value::InlineTable(table) => {
            for (key, value) in table.iter_mut() {
                mask_value(&key, value, setting);
            }
        }
        toml_edit::Value::String(text) => {
            let text = text.value();
            let masked = if setting {
                redact_setting_value(text)
            } else if is_secret_name(key) {
                REDACTED.to_owned()
            } else if text.contains("://") {
                redact_url(text)
            } else {
                return;
            };
            if &masked != text {
                *value = masked.into();
            }
        }
        toml_edit::Value::Array(array) if key == "args" => {
            let args: Vec<&str> = array.iter().filter_map(toml_edit::Value::as_str).collect();
            if args.len() == array.len() {
                let shown: toml_edit::Array = agents_core::redact::redact_args(&args)
                    .iter()
                    .map(String::as_str)
                    .collect();
                *array = shown;
            }
        }
        toml_edit::Value::Array(array) => {
            for element in array.iter_mut() {
                if let toml_edit::Value::String(text) = element
                    && text.value().contains("://")
                {
                    let masked = redact_url(text.value());
                    if &masked != text.value() {
                        *element = masked.into();
                    }
                }
            }
        }
        _ => {}
    }
}

/// `agents mcp import`, before anything is written: the client file's
/// servers merged into the config file at `config_path` as it is now
/// ([`import_mcp_servers`]). [`write_import`] writes the result once the
/// user has seen it.
pub fn prepare_import(
    config_path: &Path,
    source: &Path,
    source_text: &str,
    provenance: &Provenance,
) -> Result<ImportReport, ConfigError> {
    let current = read_config_text(config_path)?.unwrap_or_default();
    import_mcp_servers(source, source_text, config_path, &current, provenance)
}

/// Writes the config file `report` made (nothing when it added no
/// server), unless the file changed since the import read it: then nothing
/// is written, since the user saw what would be added to the file as it was.
pub fn write_import(config_path: &Path, report: &ImportReport) -> Result<(), ConfigError> {
    if report.added.is_empty() {
        return Ok(());
    }
    let current = read_config_text(config_path)?.unwrap_or_default();
    if current != report.base {
        return Err(ConfigError::Import {
            path: config_path.to_path_buf(),
            message: "the config file changed while the import waited; nothing was written".into(),
        });
    }
    write_config_text(config_path, &report.config)
}

/// The config file's text, checked like loading it; `None` when it does
/// not exist yet.
pub fn read_config_text(path: &Path) -> Result<Option<String>, ConfigError> {
    Ok(crate::file::load(path)?.map(|(text, _)| text))
}

/// Writes the config file: a temporary file (mode 0600 — it may hold
/// secrets) renamed over the old one, so a crash leaves the old or the new
/// file, never half of one. A missing directory is created (0700).
pub fn write_config_text(path: &Path, text: &str) -> Result<(), ConfigError> {
    write_private_file(path, text)
}

/// Writes `text` to `path` atomically with mode 0600 (its directory, when
/// missing, 0700): files that may hold secrets.
fn write_private_file(path: &Path, text: &str) -> Result<(), ConfigError> {
    write_file(path, text, agents_fs::Access::Owner)
}

/// [`write_private_file`] for a path given with `-o`: a symbolic link there
/// is replaced, not followed ([`agents_fs::Access::Output`]).
pub fn write_output_file(path: &Path, text: &str) -> Result<(), ConfigError> {
    write_file(path, text, agents_fs::Access::Output)
}

fn write_file(path: &Path, text: &str, access: agents_fs::Access) -> Result<(), ConfigError> {
    let fail = |source: std::io::Error| ConfigError::Write {
        path: path.to_path_buf(),
        source,
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        agents_fs::create_dir_all(parent).map_err(fail)?;
    }
    agents_fs::write_atomically(path, text.as_bytes(), access).map_err(fail)
}

/// Which client's file [`export_mcp_servers`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientFormat {
    /// `{"mcpServers": …}`: Claude Desktop and Claude Code (`.mcp.json`).
    Claude,
    /// `{"servers": …}` with `type`: VS Code (`.vscode/mcp.json`).
    VsCode,
}

/// What [`export_mcp_servers`] made: the client's file, and the values it
/// masked.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientExport {
    /// The client's JSON file.
    pub value: Value,
    /// Each value masked, as `SERVER.env.NAME`, `SERVER.headers.NAME`,
    /// `SERVER.args[N]` or `SERVER.url`: a client given the file as it is
    /// would start those servers with `***` for the value.
    pub masked: Vec<String>,
}

/// `agents mcp export`: the configured servers as a client's JSON file, plus
/// one entry named `agents` serving `serve` (when not empty) by running
/// `serve_command mcp serve SKILL…`, with `serve_env`
/// ([`crate::Settings::serve_env`]) as its `env`. With `mask`, only what
/// looks secret is masked, as [`agents_core::redact::mask_source`] hides it
/// (values of secret-named `env` and `headers` entries and options, URL
/// passwords, credentials by their shape; `${VAR}` references stay), and
/// [`ClientExport::masked`] says where.
pub fn export_mcp_servers(
    servers: &indexmap::IndexMap<String, agents_core::McpSource>,
    serve: &[String],
    serve_command: &str,
    serve_env: &[(&str, String)],
    format: ClientFormat,
    mask: bool,
) -> ClientExport {
    // VS Code expands `${env:VAR}`, not `${VAR}` (which it would pass on
    // as written): the form `mcp import` reads back as `${VAR}`.
    let vars = |text: &str| -> String {
        if format == ClientFormat::VsCode {
            to_vscode_vars(text)
        } else {
            text.to_owned()
        }
    };
    let shown = |map: &indexmap::IndexMap<String, String>| -> Value {
        map.iter()
            .map(|(k, v)| (k.clone(), Value::String(vars(v))))
            .collect::<serde_json::Map<_, _>>()
            .into()
    };
    let mut masked = Vec::new();
    let mut out = serde_json::Map::new();
    for (name, source) in servers {
        let masked_source;
        let source = if mask {
            masked.extend(
                agents_core::redact::literal_secret_fields(source)
                    .into_iter()
                    .map(|field| format!("{name}.{field}")),
            );
            masked_source = agents_core::redact::mask_source(source);
            &masked_source
        } else {
            source
        };
        let mut entry = serde_json::Map::new();
        if let Some(url) = &source.url {
            entry.insert("type".into(), "http".into());
            entry.insert("url".into(), vars(url).into());
            if !source.headers.is_empty() {
                entry.insert("headers".into(), shown(&source.headers));
            }
        } else if let Some(command) = &source.command {
            if format == ClientFormat::VsCode {
                entry.insert("type".into(), "stdio".into());
            }
            entry.insert("command".into(), vars(command).into());
            let args: Vec<Value> = source.args.iter().map(|a| vars(a).into()).collect();
            entry.insert("args".into(), args.into());
            if !source.env.is_empty() {
                entry.insert("env".into(), shown(&source.env));
            }
            if let Some(cwd) = &source.cwd {
                entry.insert("cwd".into(), vars(cwd).into());
            }
        } else {
            continue;
        }
        out.insert(name.clone(), Value::Object(entry));
    }
    if !serve.is_empty() {
        let mut args = vec![Value::from("mcp"), Value::from("serve")];
        args.extend(serve.iter().map(|s| Value::String(s.clone())));
        let mut entry = serde_json::Map::new();
        if format == ClientFormat::VsCode {
            entry.insert("type".into(), "stdio".into());
        }
        entry.insert("command".into(), serve_command.into());
        entry.insert("args".into(), Value::Array(args));
        if !serve_env.is_empty() {
            // A database URL may hold a password: masked when printed, as
            // written in a file `-o` makes 0600, like a literal `env` value.
            let env: serde_json::Map<String, Value> = serve_env
                .iter()
                .map(|(var, value)| {
                    let shown = if mask {
                        agents_core::redact::redact_url(value)
                    } else {
                        value.clone()
                    };
                    if shown != *value {
                        masked.push(format!("agents.env.{var}"));
                    }
                    ((*var).to_owned(), Value::String(shown))
                })
                .collect();
            entry.insert("env".into(), Value::Object(env));
        }
        out.insert("agents".into(), Value::Object(entry));
    }
    let key = match format {
        ClientFormat::Claude => "mcpServers",
        ClientFormat::VsCode => "servers",
    };
    ClientExport {
        value: serde_json::json!({ key: out }),
        masked,
    }
}

/// `[mcp.servers]` of `doc`, created (implicit, so no empty headers are
/// written) when missing. It may be an inline table (`servers = { a = … }`,
/// or inside `mcp = { … }`) or dotted keys (`mcp.servers.a.command = …`):
/// [`add_server`] writes a server in the form the file uses.
fn servers_item<'d>(
    doc: &'d mut DocumentMut,
    config_path: &Path,
) -> Result<&'d mut Item, ConfigError> {
    // The file was checked to load, so this is only a guard.
    let not_table = |key: &str| ConfigError::Import {
        path: config_path.to_path_buf(),
        message: format!("`{key}` in the config file is not a table"),
    };
    let implicit = || {
        let mut table = Table::new();
        table.set_implicit(true);
        Item::Table(table)
    };
    match doc.entry("mcp").or_insert_with(implicit) {
        Item::Table(mcp) => Ok(mcp.entry("servers").or_insert_with(implicit)),
        Item::Value(toml_edit::Value::InlineTable(mcp)) => {
            if !mcp.contains_key("servers") {
                push_inline(mcp, "servers", toml_edit::InlineTable::new().into());
            }
            toml_edit::TableLike::get_mut(mcp, "servers").ok_or_else(|| not_table("mcp.servers"))
        }
        _ => Err(not_table("mcp")),
    }
    .and_then(|servers| {
        if servers.is_table_like() {
            Ok(servers)
        } else {
            Err(not_table("mcp.servers"))
        }
    })
}

/// Adds `key = value` at the end of the inline table `table`, spaced as
/// `{ a = 1, key = value }`: the space before the closing `}` moves behind
/// the new entry.
fn push_inline(table: &mut toml_edit::InlineTable, key: &str, mut value: toml_edit::Value) {
    let last = table.iter_mut().last().map(|(_, last)| {
        let suffix = last.decor().suffix().cloned();
        last.decor_mut().set_suffix("");
        suffix
    });
    value.decor_mut().set_prefix(" ");
    match last.flatten() {
        Some(suffix) => value.decor_mut().set_suffix(suffix),
        None => value.decor_mut().set_suffix(" "),
    }
    table.insert(key, value);
}

/// Whether the servers of [`servers_item`] hold `name`.
fn has_server(servers: &Item, name: &str) -> bool {
    servers
        .as_table_like()
        .is_some_and(|servers| servers.contains_key(name))
}

/// Adds the server `name` to the servers of [`servers_item`] in their own
/// form: an inline table to an inline table, dotted keys to dotted keys,
/// else a `[mcp.servers.NAME]` table.
fn add_server(servers: &mut Item, name: &str, mut table: Table) {
    match servers {
        Item::Table(servers) => {
            table.set_dotted(servers.is_dotted());
            servers.insert(name, Item::Table(table));
        }
        Item::Value(toml_edit::Value::InlineTable(servers)) => {
            let mut inline = table.into_inline_table();
            inline.fmt();
            push_inline(servers, name, inline.into());
        }
        // `servers_item` hands out nothing else.
        _ => {}
    }
}

/// Which client wrote the file: it says what a `${…}` in it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Client {
    /// `mcpServers` (Claude Desktop, Claude Code): `${VAR}` and
    /// `${VAR:-default}`.
    Claude,
    /// `servers` (VS Code): `${env:VAR}`, `${input:…}` and the other
    /// `${kind:…}` forms, and predefined variables such as
    /// `${workspaceFolder}`.
    VsCode,
}

/// VS Code's predefined variables (its "Variables reference"; `${/}` is
/// `${pathSeparator}`, `${workspaceRoot}` the old `${workspaceFolder}`),
/// which it replaces in `mcp.json` and `agents` does not know.
const VSCODE_PREDEFINED: &[&str] = &[
    "userHome",
    "workspaceFolder",
    "workspaceFolderBasename",
    "workspaceRoot",
    "file",
    "fileWorkspaceFolder",
    "relativeFile",
    "relativeFileDirname",
    "fileBasename",
    "fileBasenameNoExtension",
    "fileExtname",
    "fileDirname",
    "fileDirnameBasename",
    "cwd",
    "lineNumber",
    "columnNumber",
    "selectedText",
    "execPath",
    "execInstallFolder",
    "defaultBuildTask",
    "pathSeparator",
    "/",
];

/// The client file's text with its comments (`//`, `/* */`) and trailing
/// commas replaced by spaces, byte for byte and with every line break kept,
/// so the JSON parser's line and column are the file's. VS Code's `mcp.json`
/// is JSONC, where both are routine. A `/` that starts no comment is left
/// to the parser, which says where it is.
fn without_comments(text: &str) -> std::borrow::Cow<'_, str> {
    let mut bytes = text.as_bytes().to_vec();
    if json_strip_comments::strip_slice(&mut bytes).is_err() {
        return text.into();
    }
    // The crate blanks a block comment's line breaks too.
    for (byte, original) in bytes.iter_mut().zip(text.as_bytes()) {
        if *original == b'\n' {
            *byte = b'\n';
        }
    }
    // Only whole comments (ASCII bounds) became spaces, so it stays UTF-8.
    String::from_utf8(bytes).map_or(text.into(), Into::into)
}

/// Claude Code's per-project servers in `~/.claude.json`
/// (`projects.<path>.mcpServers`): each project's path and server name.
fn project_servers(json: &Value) -> Vec<(&str, &str)> {
    let Some(projects) = json.get("projects").and_then(Value::as_object) else {
        return Vec::new();
    };
    projects
        .iter()
        .filter_map(|(path, project)| {
            let servers = project.get("mcpServers")?.as_object()?;
            Some(
                servers
                    .keys()
                    .map(move |name| (path.as_str(), name.as_str())),
            )
        })
        .flatten()
        .collect()
}

/// The `[mcp.servers.NAME]` table of one client entry and its masked twin,
/// or why the entry cannot be imported: anything loading the config would
/// refuse of it (so one server never fails the import, nor is blamed on the
/// config file), and any `${…}` that `agents` would not read as its client
/// does.
fn server_tables(
    name: &str,
    entry: &Value,
    client: Client,
) -> Result<(Table, Table, agents_core::McpSource), String> {
    let object = entry
        .as_object()
        .ok_or("expected an object with `command` or `url`")?;
    let kind = match object.get("type") {
        None | Some(Value::Null) => None,
        Some(Value::String(kind)) => Some(kind.as_str()),
        Some(_) => return Err("`type` is not a string".into()),
    };
    let http = match kind {
        None => None,
        Some("stdio") => Some(false),
        Some("http" | "streamable-http" | "streamableHttp") => Some(true),
        Some("sse") => {
            return Err(
                "the SSE transport is not supported (only stdio and streamable HTTP)".into(),
            );
        }
        Some(other) => {
            return Err(format!(
                "`type` `{}` is not supported (only stdio and streamable HTTP)",
                agents_core::text::shorten(other, agents_core::text::MAX_ECHO_BYTES)
            ));
        }
    };
    let mut table = Table::new();
    let mut masked = Table::new();
    let text = |key: &str| -> Result<Option<String>, String> {
        match object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(convert_vars(s, key, Place::Literal(key), client)?)),
            Some(_) => Err(format!("`{key}` is not a string")),
        }
    };
    let command = text("command")?;
    let url = text("url")?;
    match (&command, &url) {
        (Some(_), None) if http == Some(true) => {
            return Err(format!(
                "`type` is `{}` but the server has a `command`, not a `url`",
                kind.unwrap_or_default()
            ));
        }
        (None, Some(_)) if http == Some(false) => {
            return Err("`type` is `stdio` but the server has a `url`, not a `command`".into());
        }
        (Some(command), None) => {
            for t in [&mut table, &mut masked] {
                t.insert("command", value(command.as_str()));
            }
            if let Some(args) = object.get("args") {
                let args = args
                    .as_array()
                    .ok_or("`args` is not a list")?
                    .iter()
                    .enumerate()
                    .map(|(i, a)| {
                        a.as_str()
                            .ok_or_else(|| "`args` holds a non-string".to_owned())
                            .and_then(|a| {
                                convert_vars(
                                    a,
                                    &format!("args[{i}]"),
                                    Place::Literal("args"),
                                    client,
                                )
                            })
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                if !args.is_empty() {
                    let array: toml_edit::Array = args.iter().map(String::as_str).collect();
                    table.insert("args", value(array));
                    let shown: toml_edit::Array = agents_core::redact::redact_args(&args)
                        .iter()
                        .map(String::as_str)
                        .collect();
                    masked.insert("args", value(shown));
                }
            }
            if let Some(cwd) = text("cwd")? {
                for t in [&mut table, &mut masked] {
                    t.insert("cwd", value(cwd.as_str()));
                }
            }
            map_field(object, "env", client, &mut table, &mut masked)?;
        }
        (None, Some(url)) => {
            for t in [&mut table, &mut masked] {
                t.insert("url", value(url.as_str()));
            }
            map_field(object, "headers", client, &mut table, &mut masked)?;
        }
        (Some(_), Some(_)) => return Err("has both `command` and `url`".into()),
        (None, None) => return Err("has neither `command` nor `url`".into()),
    }
    if object.contains_key("envFile") {
        return Err("uses `envFile`, which has no equivalent here; define it by hand".into());
    }
    // What loading the config checks of a server (`url`'s scheme, …).
    let server = crate::check_server_table(name, &table)?;
    Ok((table, masked, server))
}

/// `env` or `headers`: string to string, as an inline table.
fn map_field(
    object: &serde_json::Map<String, Value>,
    key: &str,
    client: Client,
    table: &mut Table,
    masked: &mut Table,
) -> Result<(), String> {
    let Some(map) = object.get(key) else {
        return Ok(());
    };
    let map = map
        .as_object()
        .ok_or_else(|| format!("`{key}` is not an object"))?;
    if map.is_empty() {
        return Ok(());
    }
    let mut real = toml_edit::InlineTable::new();
    let mut shown = toml_edit::InlineTable::new();
    for (name, v) in map {
        let v = v
            .as_str()
            .ok_or_else(|| format!("`{key}.{name}` is not a string"))?;
        let v = convert_vars(v, &format!("{key}.{name}"), Place::Expanded, client)?;
        let visible = agents_core::redact::redact_setting_value(&v);
        real.insert(name, v.as_str().into());
        shown.insert(name, visible.as_str().into());
    }
    table.insert(key, value(real));
    masked.insert(key, value(shown));
    Ok(())
}

/// `${VAR}` as VS Code writes it, `${env:VAR}` (the reverse of
/// [`convert_vars`]); `${VAR:-default}` and other forms are left as they are.
fn to_vscode_vars(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let (before, from) = rest.split_at(start);
        out.push_str(before);
        let after = from.get(2..).unwrap_or_default();
        let Some(end) = after.find('}') else {
            out.push_str(from);
            return out;
        };
        let inner = after.get(..end).unwrap_or_default();
        if !inner.is_empty() && inner.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            out.push_str("${env:");
        } else {
            out.push_str("${");
        }
        out.push_str(inner);
        out.push('}');
        rest = after.get(end + 1..).unwrap_or_default();
    }
    out.push_str(rest);
    out
}

/// Where a client's text goes in `config.toml`: `agents` expands `${VAR}`
/// (and `${VAR:-default}`) in `env` and `headers` values only.
#[derive(Debug, Clone, Copy)]
enum Place<'a> {
    /// An `env` or `headers` value, expanded when the server starts.
    Expanded,
    /// `command`, `args`, `cwd` or `url` (the name given), taken as written.
    Literal(&'a str),
}

/// What a client means by one `${INNER}`.
enum Reference<'a> {
    /// A variable (`NAME` or `NAME:-default`), as `agents` writes it.
    Variable(std::borrow::Cow<'a, str>),
    /// A VS Code predefined variable (`workspaceFolder`, `/`, also
    /// `workspaceFolder:NAME`).
    Predefined,
    /// Another VS Code `${kind:…}` form (`input`, `config`, `command`).
    VsCodeKind(&'a str),
    /// Nothing `agents` can expand (`${}`, `${1A}`, `${A-B}`).
    Malformed,
}

fn reference(inner: &str, client: Client) -> Reference<'_> {
    if let Some((name, default)) = inner.split_once(":-")
        && is_var_name(name)
    {
        return if default.contains("${") {
            Reference::Malformed
        } else {
            Reference::Variable(inner.into())
        };
    }
    if client == Client::VsCode {
        let kind = inner.split_once(':').map_or(inner, |(kind, _)| kind);
        if VSCODE_PREDEFINED.contains(&kind) {
            return Reference::Predefined;
        }
        if let Some((kind, var)) = inner.split_once(':') {
            return match kind {
                "env" if is_var_name(var) => Reference::Variable(var.into()),
                _ if !kind.is_empty() && kind.chars().all(|c| c.is_ascii_alphabetic()) => {
                    Reference::VsCodeKind(kind)
                }
                _ => Reference::Malformed,
            };
        }
    }
    if is_var_name(inner) {
        Reference::Variable(inner.into())
    } else {
        Reference::Malformed
    }
}

/// `[A-Za-z_][A-Za-z0-9_]*`: a variable name `agents` expands.
fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// The text of the client's field `field` as `config.toml` holds it
/// (VS Code's `${env:VAR}` becomes `${VAR}`), or why the server is skipped:
/// a `${…}` where `agents` expands none (`command`, `args`, `cwd`, `url`),
/// a VS Code variable `agents` does not know (`${input:…}`,
/// `${workspaceFolder}`), or one `agents` cannot expand.
fn convert_vars(
    text: &str,
    field: &str,
    place: Place<'_>,
    client: Client,
) -> Result<String, String> {
    let shown = |text: &str| agents_core::text::shorten(text, 100).into_owned();
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let (before, from) = rest.split_at(start);
        out.push_str(before);
        let after = from.get(2..).unwrap_or_default();
        let Some(end) = after.find('}') else {
            if let Place::Expanded = place {
                return Err(format!(
                    "`{field}` has a `${{` without a closing `}}`, which agents cannot expand; \
                     define it by hand"
                ));
            }
            out.push_str(from);
            return Ok(out);
        };
        let inner = after.get(..end).unwrap_or_default();
        let written = from.get(..end + 3).unwrap_or_default();
        match (reference(inner, client), place) {
            (Reference::Predefined, _) => {
                return Err(format!(
                    "`{field}` uses `{}`, a VS Code predefined variable agents does not know; \
                     define it by hand",
                    shown(written)
                ));
            }
            (Reference::VsCodeKind(kind), _) => {
                return Err(format!(
                    "`{field}` uses `${{{}:…}}`, a VS Code variable with no equivalent here; \
                     define it by hand",
                    shown(kind)
                ));
            }
            (_, Place::Literal(kind)) => {
                return Err(format!(
                    "`{field}` uses `{}`, which agents does not expand in `{kind}`; \
                     define it by hand",
                    shown(written)
                ));
            }
            (Reference::Malformed, Place::Expanded) => {
                return Err(format!(
                    "`{field}` uses `{}`, which agents cannot expand (a variable's name is \
                     letters, digits and `_`, not starting with a digit); define it by hand",
                    shown(written)
                ));
            }
            // `agents` reads `$${` as a literal `${`, where the client
            // expands the variable after a `$`.
            (Reference::Variable(_), Place::Expanded) if before.ends_with('$') => {
                return Err(format!(
                    "`{field}` has `${}`, which agents reads as the literal text `{}`; \
                     define it by hand",
                    shown(written),
                    shown(written)
                ));
            }
            (Reference::Variable(var), Place::Expanded) => {
                out.push_str("${");
                out.push_str(&var);
                out.push('}');
            }
        }
        rest = after.get(end + 1..).unwrap_or_default();
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(text: &str, client: Client) -> Result<String, String> {
        convert_vars(text, "env.X", Place::Expanded, client)
    }

    fn arg(text: &str, client: Client) -> Result<String, String> {
        convert_vars(text, "args[2]", Place::Literal("args"), client)
    }

    #[test]
    fn vscode_variables_convert_or_refuse() {
        use Client::VsCode;
        assert_eq!(
            env("Bearer ${env:TOKEN}", VsCode).unwrap(),
            "Bearer ${TOKEN}"
        );
        assert_eq!(env("${HOME}/x", VsCode).unwrap(), "${HOME}/x");
        assert!(env("${input:key}", VsCode).unwrap_err().contains("input"));
        assert_eq!(arg("a ${b", VsCode).unwrap(), "a ${b");
        assert!(
            env("a ${b", VsCode)
                .unwrap_err()
                .contains("without a closing")
        );
    }

    /// Found by an audit: `${…}` where `agents` expands nothing was
    /// imported (VS Code's `${env:MODE}` in `args` as `${MODE}`, Claude
    /// Code's `"command": "${FXBIN}"`), and VS Code's predefined variables
    /// were passed as literals or read as environment variables; each server
    /// then failed at every start.
    #[test]
    fn a_reference_agents_would_not_expand_as_the_client_does_is_a_reason() {
        use Client::{Claude, VsCode};
        assert_eq!(
            arg("--mode=${env:MODE}", VsCode).unwrap_err(),
            "`args[2]` uses `${env:MODE}`, which agents does not expand in `args`; define it by hand"
        );
        assert_eq!(
            convert_vars("${FXBIN}", "command", Place::Literal("command"), Claude).unwrap_err(),
            "`command` uses `${FXBIN}`, which agents does not expand in `command`; define it by hand"
        );
        for (text, client) in [("${API_URL}/mcp", Claude), ("${env:API_URL}/mcp", VsCode)] {
            let err = convert_vars(text, "url", Place::Literal("url"), client).unwrap_err();
            assert!(
                err.contains("which agents does not expand in `url`"),
                "{err}"
            );
        }
        // VS Code's predefined variables are named as such, wherever they are.
        for text in [
            "${workspaceFolder}/db",
            "${userHome}",
            "a${/}b",
            "${workspaceFolder:api}",
        ] {
            for err in [
                env(text, VsCode).unwrap_err(),
                arg(text, VsCode).unwrap_err(),
            ] {
                assert!(err.contains("a VS Code predefined variable"), "{err}");
            }
        }
        assert_eq!(
            env("${workspaceFolderBasename}", VsCode).unwrap_err(),
            "`env.X` uses `${workspaceFolderBasename}`, a VS Code predefined variable agents does \
             not know; define it by hand"
        );
        // In a Claude file the same text is an environment variable.
        assert_eq!(env("${userHome}", Claude).unwrap(), "${userHome}");
        // What no client expands the same way.
        for text in ["${}", "${1A}", "${A-B}", "${env:X}", "${A:-${B}}"] {
            let err = env(text, Claude).unwrap_err();
            assert!(err.contains("which agents cannot expand"), "{text}: {err}");
        }
        assert!(
            env("$${TOKEN}", Claude)
                .unwrap_err()
                .contains("literal text")
        );
        assert_eq!(env("$5 and $HOME", Claude).unwrap(), "$5 and $HOME");
    }

    /// Found by an audit: `${AB:-x}` was skipped as "a VS Code variable",
    /// `${A_B:-x}` imported and then refused at every start. Both are
    /// Claude Code's default form, which `agents` expands in `env` and
    /// `headers` too.
    #[test]
    fn a_default_is_kept_where_agents_expands_it_and_a_reason_elsewhere() {
        for client in [Client::Claude, Client::VsCode] {
            for text in ["${AB:-x}", "${A_B:-x}", "a ${A_B:-b:c} d", "${A:-}"] {
                assert_eq!(env(text, client).unwrap(), text);
                let err = arg(text, client).unwrap_err();
                assert!(err.contains("does not expand in `args`"), "{err}");
            }
        }
    }

    fn import(client: &str, config: &str) -> Result<ImportReport, ConfigError> {
        import_mcp_servers(
            Path::new("mcp.json"),
            client,
            Path::new("c.toml"),
            config,
            &Provenance::Own,
        )
    }

    /// Found by an attack of the release build: a cloned project's
    /// `.mcp.json` was imported as the config file's own, and its servers
    /// ran at the next refresh without anyone trusting them.
    #[test]
    fn servers_of_a_file_from_others_are_imported_untrusted() {
        let client = r#"{"mcpServers": {"helper": {"command": "sh", "args": ["-c", "id"]},
            "web": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${KEY}"}}}}"#;
        let own = import(client, "").unwrap();
        assert_eq!(own.untrusted, None);
        assert!(!own.config.contains("untrusted"), "{}", own.config);
        for provenance in [
            Provenance::Project,
            Provenance::Stdin,
            Provenance::Others(agents_fs::Exposure::Owner { uid: 1234 }),
        ] {
            let report = import_mcp_servers(
                Path::new("x.json"),
                client,
                Path::new("c.toml"),
                "",
                &provenance,
            )
            .unwrap();
            assert!(report.untrusted.is_some());
            assert_eq!(report.config.matches("untrusted = true").count(), 2);
            assert_eq!(report.shown.matches("untrusted = true").count(), 2);
            // What the user is shown is what the config will hold.
            assert_eq!(report.servers[0].args, ["-c", "id"]);
            assert_eq!(report.servers[1].headers["Authorization"], "Bearer ${KEY}");
            crate::check_config_text(Path::new("c.toml"), &report.config).unwrap();
        }
        for (path, project) in [
            (".mcp.json", true),
            ("p/.vscode/mcp.json", true),
            ("p/.cursor/mcp.json", true),
            ("p/mcp.json", false),
            ("claude_desktop_config.json", false),
        ] {
            assert_eq!(is_project_file(Path::new(path)), project, "{path}");
        }
    }

    /// Found by an attack of the release build: a file a Windows editor
    /// saved with a byte order mark was refused as not JSON.
    #[test]
    fn a_byte_order_mark_is_skipped_and_positions_stay() {
        let report = import(
            "\u{feff}{\"mcpServers\": {\"fetch\": {\"command\": \"uvx\"}}}",
            "",
        )
        .unwrap();
        assert_eq!(report.added, ["fetch"]);
        // Columns count as an editor shows the line (without the mark), and
        // lines as they were.
        for (text, at) in [
            ("\u{feff}{\"mcpServers\": x}", "line 1 column 16"),
            ("\u{feff}{\n\"mcpServers\": {}\n,}x", "line 3 column 3"),
        ] {
            let err = import(text, "").unwrap_err().to_string();
            assert!(err.contains("not JSON: ") && err.contains(at), "{err}");
        }
    }

    /// Found by an audit: VS Code's `mcp.json` is JSONC and was refused.
    #[test]
    fn comments_and_trailing_commas_are_read_and_positions_stay() {
        let client = "{\n  // my servers\n  \"servers\": {\n    /* a\n       b */ \"fetch\": {\n      \
                      \"command\": \"uvx\", // the runner\n      \"args\": [\"mcp-server-fetch\",],\n    },\n  },\n}\n";
        let report = import(client, "").unwrap();
        assert_eq!(report.added, ["fetch"]);
        assert!(
            report.config.contains("args = [\"mcp-server-fetch\"]"),
            "{}",
            report.config
        );
        // Text inside strings is not a comment.
        let report = import(
            r#"{"mcpServers": {"u": {"url": "https://h.example/a//b/*c*/", /* x */}}}"#,
            "",
        )
        .unwrap();
        assert!(
            report.config.contains("https://h.example/a//b/*c*/"),
            "{}",
            report.config
        );
        // Errors that remain keep the file's own line and column, after a
        // block comment over several lines too.
        let err = import(
            "{\"servers\": {\n/* one\ntwo\nthree */\n\"a\": {\"command\": \"x\"},\n\"a\": {}}}",
            "",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("duplicate key `a` at line 6 column 3"),
            "{err}"
        );
        let err = import(
            "{\"servers\": {\n// c\n\"a\": {\"command\": \"x\"} \"b\": 1}}",
            "",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("not JSON: expected `,` or `}` at line 3 column 23"),
            "{err}"
        );
        let err = import("{\"servers\": {}}\n/ x", "")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("not JSON") && err.contains("line 2 column 1"),
            "{err}"
        );
    }

    /// Found by an audit: one such server failed the whole import with an
    /// error against a line of `config.toml` that did not exist yet.
    #[test]
    fn a_server_the_config_would_refuse_is_skipped_and_the_others_imported() {
        let client = r#"{"mcpServers": {
            "api": {"type": "http", "url": "${API_URL}/mcp"},
            "ws": {"type": "websocket", "url": "wss://h.example/mcp"},
            "ftp": {"type": "http", "url": "ftp://h.example/mcp"},
            "odd": {"type": "stdio", "url": "https://h.example/mcp"},
            "zero": {"command": "x", "cwd": "/tmp", "args": []},
            "ok": {"type": "http", "url": "https://h.example/mcp"}
        }}"#;
        let report = import(client, "[mcp]\ntimeout_s = 5\n").unwrap();
        assert_eq!(report.added, ["zero", "ok"]);
        let reasons: std::collections::HashMap<_, _> = report.skipped.iter().cloned().collect();
        assert_eq!(
            reasons["api"],
            "`url` uses `${API_URL}`, which agents does not expand in `url`; define it by hand"
        );
        assert_eq!(
            reasons["ws"],
            "`type` `websocket` is not supported (only stdio and streamable HTTP)"
        );
        assert_eq!(
            reasons["ftp"],
            "`url`: expected an `http://` or `https://` URL, got `ftp://h.example/mcp`"
        );
        assert!(reasons["odd"].contains("`type` is `stdio`"), "{reasons:?}");
    }

    /// Found by an audit: a valid config whose servers are an inline table
    /// made the import fail ("`mcp.servers` … is not a table", from "default").
    #[test]
    fn servers_are_added_in_the_form_the_config_file_uses() {
        let client = r#"{"mcpServers": {"new": {"command": "npx", "env": {"KEY": "sec1"}}}}"#;
        for (config, expected) in [
            (
                "[mcp]\nservers = { a = { command = \"x\" } }\n",
                "[mcp]\nservers = { a = { command = \"x\" }, new = { command = \"npx\", env = { KEY = \"sec1\" } } }\n",
            ),
            (
                "mcp = { timeout_s = 5 }\n",
                "mcp = { timeout_s = 5, servers = { new = { command = \"npx\", env = { KEY = \"sec1\" } } } }\n",
            ),
            (
                "mcp.servers.a.command = \"x\"\n",
                "mcp.servers.a.command = \"x\"\nmcp.servers.new.command = \"npx\"\nmcp.servers.new.env = { KEY = \"sec1\" }\n",
            ),
            (
                "[mcp]\nservers.a = { command = \"x\" }\n",
                "[mcp]\nservers.a = { command = \"x\" }\nservers.new.command = \"npx\"\nservers.new.env = { KEY = \"sec1\" }\n",
            ),
        ] {
            let report = import(client, config).unwrap();
            assert_eq!(report.config, expected);
            assert_eq!(report.shown, expected.replace("sec1", "***"));
        }
        // A file that does not load is its own error, located in it.
        let err = import(client, "[mcp]\nservers = 5\n").unwrap_err();
        assert_eq!(err.kind(), "config_invalid");
        assert!(err.to_string().starts_with("c.toml:2:"), "{err}");
    }

    /// Found by an audit: the servers of `projects.<path>.mcpServers` in
    /// Claude Code's `~/.claude.json` were dropped without a word.
    #[test]
    fn claude_code_project_servers_are_each_reported() {
        let client = r#"{
            "numStartups": 3,
            "mcpServers": {"global": {"command": "g"}},
            "projects": {
                "/home/me/api": {"allowedTools": [], "mcpServers": {"db": {"command": "d"}, "global": {"command": "h"}}},
                "/home/me/web": {"mcpServers": {}},
                "/home/me/old": {}
            }
        }"#;
        let report = import(client, "").unwrap();
        assert_eq!(report.added, ["global"]);
        let reason = "a server of the project `/home/me/api` (`projects` in Claude Code's file): \
                      `config.toml` has no per-project servers; define it by hand to have it everywhere";
        assert_eq!(
            report.skipped,
            [
                ("db".to_owned(), reason.to_owned()),
                ("global".to_owned(), reason.to_owned())
            ]
        );
        // A file with project servers only is no error either.
        let report = import(
            r#"{"projects": {"/p": {"mcpServers": {"db": {"command": "d"}}}}}"#,
            "",
        )
        .unwrap();
        assert!(report.added.is_empty());
        assert_eq!(report.skipped.len(), 1);
    }

    #[test]
    fn an_import_shows_the_whole_config_masked_and_writes_it_whole() {
        let config = r#"[database]
url = "postgres://registry:dbpw1@db.example/registry"

[mcp.servers.mine]
url = "https://mcp.example/mcp?api_key=qk1"
headers = { Authorization = "Bearer ${TOKEN}", X-Static = "hdr1" }

[mcp.servers.local]
command = "node"
args = ["server.js", "--url", "https://u:argpw1@h.example/"]
env = { LEVEL = "debug" }
"#;
        let client = r#"{"mcpServers": {"new": {"command": "npx", "env": {"KEY": "newsecret1"}}}}"#;
        let report = import_mcp_servers(
            Path::new(".mcp.json"),
            client,
            Path::new("config.toml"),
            config,
            &Provenance::Own,
        )
        .unwrap();
        for secret in ["dbpw1", "qk1", "hdr1", "argpw1", "newsecret1", "debug"] {
            assert!(!report.shown.contains(secret), "{secret}: {}", report.shown);
            assert!(
                report.config.contains(secret),
                "{secret}: {}",
                report.config
            );
        }
        assert_eq!(
            report.shown,
            r#"[database]
url = "postgres://registry:***@db.example/registry"

[mcp.servers.mine]
url = "https://mcp.example/mcp?api_key=***"
headers = { Authorization = "Bearer ${TOKEN}", X-Static = "***" }

[mcp.servers.local]
command = "node"
args = ["server.js", "--url", "https://u:***@h.example/"]
env = { LEVEL = "***" }

[mcp.servers.new]
command = "npx"
env = { KEY = "***" }
"#
        );
        assert_eq!(report.added, ["new"]);
    }

    #[test]
    fn an_import_that_would_outgrow_the_config_file_is_refused() {
        // Written, it would have stopped every later command (all refuse a
        // config file over 1 MiB).
        let servers: Vec<String> = (0..32_000)
            .map(|i| format!("\"s{i}\": {{\"command\": \"x\"}}"))
            .collect();
        let client = format!("{{\"mcpServers\": {{{}}}}}", servers.join(","));
        let err = import_mcp_servers(
            Path::new(".mcp.json"),
            &client,
            Path::new("c.toml"),
            "",
            &Provenance::Own,
        )
        .unwrap_err();
        assert_eq!(err.kind(), "config_too_large");
        assert!(err.to_string().contains("nothing was written"), "{err}");
    }

    #[test]
    fn secret_options_in_args_are_shown_masked_and_written_whole() {
        let config =
            "[mcp.servers.old]\ncommand = \"x\"\nargs = [\"--token=argsecret1\", \"-v\"]\n";
        let client = r#"{"mcpServers": {"new": {"command": "npx", "args": ["-y", "srv", "--api-key", "argsecret2"]}}}"#;
        let report = import_mcp_servers(
            Path::new(".mcp.json"),
            client,
            Path::new("c.toml"),
            config,
            &Provenance::Own,
        )
        .unwrap();
        for secret in ["argsecret1", "argsecret2"] {
            assert!(!report.shown.contains(secret), "{}", report.shown);
            assert!(report.config.contains(secret), "{}", report.config);
        }
        assert!(
            report.shown.contains(r#"args = ["--token=***", "-v"]"#),
            "{}",
            report.shown
        );
        assert!(
            report
                .shown
                .contains(r#"args = ["-y", "srv", "--api-key", "***"]"#),
            "{}",
            report.shown
        );
    }

    /// Found by an audit: a header or an environment entry given in `args`
    /// was printed whole by `--dry-run` and by `mcp export`.
    #[test]
    fn secret_headers_and_env_entries_in_args_are_shown_masked() {
        let client = r#"{"mcpServers": {
            "remote": {"command": "npx", "args": ["-y", "mcp-remote", "https://h.example/mcp",
                       "--header", "Authorization: Bearer sk-LEAK1"]},
            "gh": {"command": "docker", "args": ["run", "-i", "-e",
                   "GITHUB_PERSONAL_ACCESS_TOKEN=ghp_LEAK2", "--env", "LOG_LEVEL=debug", "img"]}
        }}"#;
        let report = import_mcp_servers(
            Path::new(".mcp.json"),
            client,
            Path::new("c.toml"),
            "",
            &Provenance::Own,
        )
        .unwrap();
        assert_eq!(report.added, ["remote", "gh"]);
        for secret in ["sk-LEAK1", "ghp_LEAK2"] {
            assert!(!report.shown.contains(secret), "{}", report.shown);
            assert!(report.config.contains(secret), "{}", report.config);
        }
        assert!(
            report
                .shown
                .contains(r#""--header", "Authorization: Bearer ***"]"#),
            "{}",
            report.shown
        );
        assert!(
            report.shown.contains(
                r#"["run", "-i", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN=***", "--env", "LOG_LEVEL=debug", "img"]"#
            ),
            "{}",
            report.shown
        );
        // `mcp export` prints them as masked.
        let source = agents_core::McpSource {
            server: "gh".into(),
            command: Some("docker".into()),
            args: ["-e", "GITHUB_PERSONAL_ACCESS_TOKEN=ghp_LEAK2", "--header"]
                .into_iter()
                .chain(["Authorization: Bearer sk-LEAK1", "LOG_LEVEL=debug"])
                .map(String::from)
                .collect(),
            ..Default::default()
        };
        let servers = indexmap::IndexMap::from([("gh".to_owned(), source)]);
        let masked =
            export_mcp_servers(&servers, &[], "agents", &[], ClientFormat::VsCode, true).value;
        assert_eq!(
            masked["servers"]["gh"]["args"],
            serde_json::json!([
                "-e",
                "GITHUB_PERSONAL_ACCESS_TOKEN=***",
                "--header",
                "Authorization: Bearer ***",
                "LOG_LEVEL=debug"
            ])
        );
    }

    #[test]
    fn a_server_named_twice_is_refused_not_picked() {
        // A reader of a cloned project's `.mcp.json` sees the first; serde
        // would keep the second.
        let client = "{\"mcpServers\": {\n  \"gh\": {\"command\": \"gh-mcp\"},\n  \"gh\": {\"command\": \"sh\"}\n}}";
        let err = import_mcp_servers(
            Path::new(".mcp.json"),
            client,
            Path::new("c.toml"),
            "",
            &Provenance::Own,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("duplicate key `gh` at line 3"), "{err}");
        assert!(!err.contains("not JSON"), "{err}");
        let err = import_mcp_servers(
            Path::new(".mcp.json"),
            "{",
            Path::new("c.toml"),
            "",
            &Provenance::Own,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("not JSON"), "{err}");
    }

    #[test]
    fn a_masked_export_shows_references_not_literals() {
        let token = format!("ghp_{}", "k3Y".repeat(12));
        let default = format!("${{KEY:-{token}}}");
        let source = agents_core::McpSource {
            server: "gh".into(),
            command: Some("docker".into()),
            env: [
                ("TOKEN", "ghp_literal"),
                ("HOME_DIR", "${HOME}"),
                // A shell-style default may be the secret itself: masked
                // (by its shape here), the reference kept.
                ("FALLBACK", default.as_str()),
                ("TWO", "${A}${B}"),
                // Only what looks secret is masked.
                ("NODE_ENV", "production"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
            args: vec!["run".into(), "--token".into(), "ghp_arg".into()],
            ..Default::default()
        };
        let servers = indexmap::IndexMap::from([("gh".to_owned(), source)]);
        let export = export_mcp_servers(&servers, &[], "agents", &[], ClientFormat::Claude, true);
        assert_eq!(
            export.masked,
            ["gh.env.TOKEN", "gh.env.FALLBACK", "gh.args[2]"]
        );
        let masked = export.value;
        assert_eq!(
            masked["mcpServers"]["gh"]["env"],
            serde_json::json!({
                "TOKEN": "***", "HOME_DIR": "${HOME}", "FALLBACK": "${KEY:-***}",
                "TWO": "${A}${B}", "NODE_ENV": "production",
            })
        );
        assert_eq!(
            masked["mcpServers"]["gh"]["args"],
            serde_json::json!(["run", "--token", "***"])
        );
        let http = agents_core::McpSource {
            server: "api".into(),
            url: Some("https://bob:pw1@api.example/mcp?token=tok1&v=2".into()),
            ..Default::default()
        };
        let servers = indexmap::IndexMap::from([
            ("gh".to_owned(), servers["gh"].clone()),
            ("api".to_owned(), http),
        ]);
        let masked =
            export_mcp_servers(&servers, &[], "agents", &[], ClientFormat::Claude, true).value;
        assert_eq!(
            masked["mcpServers"]["api"]["url"],
            "https://bob:***@api.example/mcp?token=***&v=2"
        );
        let plain =
            export_mcp_servers(&servers, &[], "agents", &[], ClientFormat::Claude, false).value;
        assert_eq!(
            plain["mcpServers"]["api"]["url"],
            "https://bob:pw1@api.example/mcp?token=tok1&v=2"
        );
        assert_eq!(plain["mcpServers"]["gh"]["env"]["FALLBACK"], default);
        assert_eq!(plain["mcpServers"]["gh"]["args"][2], "ghp_arg");
    }

    #[test]
    fn a_vs_code_export_writes_variables_as_vs_code_expands_them() {
        let source = agents_core::McpSource {
            server: "gh".into(),
            command: Some("docker".into()),
            args: vec!["--token=${GH_TOKEN}".into(), "${KEY:-x}".into()],
            env: [("HOME_DIR".to_owned(), "${HOME}/x".to_owned())]
                .into_iter()
                .collect(),
            ..Default::default()
        };
        let servers = indexmap::IndexMap::from([("gh".to_owned(), source)]);
        let vscode =
            export_mcp_servers(&servers, &[], "agents", &[], ClientFormat::VsCode, false).value;
        let gh = &vscode["servers"]["gh"];
        assert_eq!(
            gh["args"],
            serde_json::json!(["--token=${env:GH_TOKEN}", "${KEY:-x}"])
        );
        assert_eq!(gh["env"]["HOME_DIR"], "${env:HOME}/x");
        // And `mcp import` reads them back as written here.
        assert_eq!(env("${env:HOME}/x", Client::VsCode).unwrap(), "${HOME}/x");
        let claude =
            export_mcp_servers(&servers, &[], "agents", &[], ClientFormat::Claude, false).value;
        assert_eq!(claude["mcpServers"]["gh"]["env"]["HOME_DIR"], "${HOME}/x");
    }
}
