//! Settings of the `agents` program, resolved in one place with one rule:
//! command-line flag > environment variable > config file > default. Each
//! resolved value remembers where it came from ([`Origin`]), so
//! `agents config show` can say why a value is what it is.
//!
//! The config file is `~/.cleveragents/config.toml` unless `--config FILE`
//! or `CLEVERAGENTS_CONFIG` names another; a missing default file is fine, a
//! missing named one is an error. Unknown keys and wrong types are errors
//! pointing at the file, line and column.
//!
//! This crate reads the config file and checks whether configured
//! directories exist, but it reads the environment only through the function
//! its caller passes, and never prints.

// Library code returns errors; it does not panic on what it is given.
#![deny(clippy::panic, clippy::indexing_slicing)]

mod file;
mod import;
mod path_vars;

use std::fmt;
use std::path::{Path, PathBuf};

use agents_core::{McpSource, Skill, SkillItem, SkillName};
use agents_definition::{Export, HARD_MAX_DEPTH, Limit, Limits};
use indexmap::IndexMap;
use serde::{Serialize, Serializer};
use toml::Spanned;

pub use file::config_schema;
use file::{FileConfig, PathList, located};
pub use import::{
    ClientExport, ClientFormat, ImportReport, Provenance, export_mcp_servers, import_mcp_servers,
    prepare_import, read_config_text, write_config_text, write_import, write_output_file,
};
pub use path_vars::expand_path;

/// One environment variable the program reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct EnvVar {
    /// The variable, e.g. `CLEVERAGENTS_DATABASE_URL`.
    pub name: &'static str,
    /// The setting it overrides, e.g. `database.url`.
    pub key: &'static str,
    /// What it is for.
    pub description: &'static str,
}

/// Names the config file instead of `~/.cleveragents/config.toml`.
pub const ENV_CONFIG: &str = "CLEVERAGENTS_CONFIG";
/// Overrides `database.url`.
pub const ENV_DATABASE_URL: &str = "CLEVERAGENTS_DATABASE_URL";
/// Overrides `skills.agent_skills_paths`.
pub const ENV_AGENT_SKILLS_PATHS: &str = "CLEVERAGENTS_SKILLS_AGENT_SKILLS_PATHS";
/// Overrides `mcp.timeout_s`.
pub const ENV_MCP_TIMEOUT_S: &str = "CLEVERAGENTS_MCP_TIMEOUT_S";
/// Overrides `limits.max_depth`.
pub const ENV_LIMITS_MAX_DEPTH: &str = "CLEVERAGENTS_LIMITS_MAX_DEPTH";
/// Overrides `limits.definition_max_bytes`.
pub const ENV_LIMITS_DEFINITION_MAX_BYTES: &str = "CLEVERAGENTS_LIMITS_DEFINITION_MAX_BYTES";
/// Overrides `limits.plan_max_bytes`.
pub const ENV_LIMITS_PLAN_MAX_BYTES: &str = "CLEVERAGENTS_LIMITS_PLAN_MAX_BYTES";
/// Overrides `limits.export_max_bytes`.
pub const ENV_LIMITS_EXPORT_MAX_BYTES: &str = "CLEVERAGENTS_LIMITS_EXPORT_MAX_BYTES";

/// Every environment variable read, declared once. An empty value counts as
/// unset.
pub const ENV_VARS: &[EnvVar] = &[
    EnvVar {
        name: ENV_CONFIG,
        key: "config",
        description: "config file to read instead of `~/.cleveragents/config.toml`",
    },
    EnvVar {
        name: ENV_DATABASE_URL,
        key: "database.url",
        description: "database URL: `sqlite://PATH` or `postgres://...` (default: `~/.cleveragents/cleveragents.db`)",
    },
    EnvVar {
        name: ENV_AGENT_SKILLS_PATHS,
        key: "skills.agent_skills_paths",
        description: "comma-separated directories scanned for Agent Skills folders (default: `~/.cleveragents/agent_skills`)",
    },
    EnvVar {
        name: ENV_MCP_TIMEOUT_S,
        key: "mcp.timeout_s",
        description: "seconds to wait for an MCP server, at least 1 (default: 30)",
    },
    EnvVar {
        name: ENV_LIMITS_MAX_DEPTH,
        key: "limits.max_depth",
        description: "deepest nesting of skill, tool, plan and export files, 1 to 128 (default: 64)",
    },
    EnvVar {
        name: ENV_LIMITS_DEFINITION_MAX_BYTES,
        key: "limits.definition_max_bytes",
        description: "largest skill or tool file in bytes, up to 256 MiB (default: 16 MiB)",
    },
    EnvVar {
        name: ENV_LIMITS_PLAN_MAX_BYTES,
        key: "limits.plan_max_bytes",
        description: "largest plan file in bytes, up to 256 MiB (default: 1 MiB)",
    },
    EnvVar {
        name: ENV_LIMITS_EXPORT_MAX_BYTES,
        key: "limits.export_max_bytes",
        description: "largest `db import` file in bytes, up to 256 MiB (default: 256 MiB)",
    },
];

/// The most any `limits.*_max_bytes` may be: what `agents` reads of a file
/// at most, whatever the kind.
pub const MAX_INPUT_BYTES: u64 = 256 << 20;

/// The config file, relative to the home directory.
pub const DEFAULT_CONFIG_FILE: &str = ".cleveragents/config.toml";
/// The embedded default database, relative to the home directory.
pub const DEFAULT_DATABASE_FILE: &str = ".cleveragents/cleveragents.db";
/// `skills.agent_skills_paths` when nothing sets it.
pub const DEFAULT_AGENT_SKILLS_PATHS: &str = "~/.cleveragents/agent_skills";
/// `mcp.timeout_s` when nothing sets it.
pub const DEFAULT_MCP_TIMEOUT_S: u64 = 30;

/// Where a resolved value came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Origin {
    /// A command-line flag.
    Flag,
    /// An environment variable.
    Env {
        /// Its name.
        var: &'static str,
    },
    /// The config file.
    File {
        /// The file.
        path: PathBuf,
        /// The line of the value.
        line: usize,
    },
    /// Nothing set it.
    Default,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Flag => f.write_str("command-line flag"),
            Self::Env { var } => write!(f, "environment variable `{var}`"),
            Self::File { path, line } => {
                write!(f, "`{}:{line}`", agents_core::text::shown_path(path))
            }
            Self::Default => f.write_str("default"),
        }
    }
}

/// A resolved value and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Setting<T> {
    /// The value.
    pub value: T,
    /// Where it came from.
    pub origin: Origin,
}

impl<T> Setting<T> {
    fn new(value: T, origin: Origin) -> Self {
        Self { value, origin }
    }
}

/// Values given on the command line; `None` means "not given".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CliOverrides {
    /// `--config FILE`.
    pub config: Option<PathBuf>,
    /// The database URL flag.
    pub database_url: Option<String>,
    /// Comma-separated Agent Skills directories.
    pub agent_skills_paths: Option<String>,
    /// MCP timeout in seconds.
    pub mcp_timeout_s: Option<u64>,
}

/// Every setting, resolved.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Settings {
    /// The config file consulted (whether or not it exists).
    pub config_file: Setting<PathBuf>,
    /// Whether `config_file` existed and was read.
    pub config_file_loaded: bool,
    /// `database.url` (default `sqlite://~/.cleveragents/cleveragents.db`,
    /// expanded). Any password is masked in `Display` and JSON.
    #[serde(serialize_with = "serialize_database_url")]
    pub database_url: Setting<String>,
    /// `skills.agent_skills_paths`, expanded, empty entries dropped.
    pub agent_skills_paths: Setting<Vec<PathBuf>>,
    /// `mcp.timeout_s`.
    pub mcp_timeout_s: Setting<u64>,
    /// `[limits]`: how large and deeply nested input files may be.
    pub limits: InputLimits,
    /// `[mcp.servers.NAME]`, validated, in file order. `env` and `headers`
    /// values are hidden in JSON.
    #[serde(serialize_with = "serialize_mcp_servers")]
    pub mcp_servers: IndexMap<String, McpSource>,
    /// The servers of `mcp_servers` marked `untrusted = true`: they start
    /// only once trusted on this machine.
    #[serde(skip_serializing_if = "std::collections::BTreeSet::is_empty")]
    pub untrusted_mcp_servers: std::collections::BTreeSet<String>,
    /// Problems that do not stop the program, e.g. a configured directory
    /// that does not exist.
    pub warnings: Vec<String>,
    /// The home directory `~` expanded to.
    pub home: PathBuf,
}

impl Settings {
    /// What an `agents mcp serve` entry written for another program (`mcp
    /// export --serve`) needs in its environment to see the registry this
    /// command sees: each setting given by a flag or a variable (a file
    /// value is read again from the same file), as the variable that sets
    /// it. Without it a client would start the gateway on the default
    /// database, where the skill may not exist.
    pub fn serve_env(&self) -> Vec<(&'static str, String)> {
        let given = |origin: &Origin| matches!(origin, Origin::Flag | Origin::Env { .. });
        let mut env = Vec::new();
        if given(&self.config_file.origin) {
            env.push((ENV_CONFIG, self.config_file.value.display().to_string()));
        }
        if given(&self.database_url.origin) {
            env.push((ENV_DATABASE_URL, self.database_url.value.clone()));
        }
        if given(&self.agent_skills_paths.origin) {
            let paths: Vec<String> = self
                .agent_skills_paths
                .value
                .iter()
                .map(|path| path.display().to_string())
                .collect();
            env.push((ENV_AGENT_SKILLS_PATHS, paths.join(",")));
        }
        env
    }
}

/// `[limits]`: size and nesting limits of the files `agents` reads, each
/// with its origin. The defaults are [`Limits`]'s.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InputLimits {
    /// `limits.max_depth`: every kind of file.
    pub max_depth: Setting<u64>,
    /// `limits.definition_max_bytes`: skill and tool files.
    pub definition_max_bytes: Setting<u64>,
    /// `limits.plan_max_bytes`.
    pub plan_max_bytes: Setting<u64>,
    /// `limits.export_max_bytes`: `db import` files.
    pub export_max_bytes: Setting<u64>,
}

/// A kind of file `limits.*` bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// Skill definition files.
    Skills,
    /// Custom tool files.
    Tools,
    /// Plans.
    Plan,
    /// `db import` files.
    Export,
}

/// How `what` (reading back `bytes` bytes) can be let through: the setting
/// to raise, or that none can.
fn raise_to(what: &str, key: &str, var: &str, bytes: usize) -> String {
    if bytes as u64 <= MAX_INPUT_BYTES {
        format!("{what} needs `{key}` (or `{var}`) of at least {bytes}")
    } else {
        format!("no setting lets `agents` read more than {MAX_INPUT_BYTES} bytes")
    }
}

impl InputLimits {
    /// The limits for `kind`.
    pub fn of(&self, kind: InputKind) -> Limits {
        match kind {
            InputKind::Skills => self.skills(),
            InputKind::Tools => self.tools(),
            InputKind::Plan => self.plan(),
            InputKind::Export => self.export(),
        }
    }

    /// How to let through a `kind` file refused by `limit`: the setting
    /// that raises it and its environment variable, or `None` when the
    /// setting is already at its most.
    pub fn advice(&self, kind: InputKind, limit: Limit) -> Option<String> {
        let (key, setting, most) = match (kind, limit) {
            (_, Limit::Depth) => ("limits.max_depth", &self.max_depth, HARD_MAX_DEPTH as u64),
            (InputKind::Plan, Limit::Bytes) => (
                "limits.plan_max_bytes",
                &self.plan_max_bytes,
                MAX_INPUT_BYTES,
            ),
            (InputKind::Export, Limit::Bytes) => (
                "limits.export_max_bytes",
                &self.export_max_bytes,
                MAX_INPUT_BYTES,
            ),
            // One document of an export may be as large as a skill file.
            (_, Limit::Bytes | Limit::DocumentBytes) => (
                "limits.definition_max_bytes",
                &self.definition_max_bytes,
                MAX_INPUT_BYTES,
            ),
            _ => return None,
        };
        if setting.value >= most {
            return None;
        }
        let var = ENV_VARS.iter().find(|var| var.key == key)?;
        Some(format!(
            "`{key}` (or `{}`) raises the limit of {}, up to {most}",
            var.name, setting.value
        ))
    }

    /// What keeps `db import` from reading `export` back under these
    /// limits, with the setting that would let it through: the file's size
    /// or its largest document's. `None` when it can be imported as it is.
    pub fn import_warning(&self, export: &Export) -> Option<String> {
        let limits = self.export();
        let fix = |key: &str, var: &str, bytes: usize| raise_to("importing it", key, var, bytes);
        if export.text.len() > limits.max_bytes {
            let bytes = export.text.len();
            return Some(format!(
                "the export is {bytes} bytes, more than the {} bytes `db import` reads: {}",
                limits.max_bytes,
                fix(
                    "limits.export_max_bytes",
                    ENV_LIMITS_EXPORT_MAX_BYTES,
                    bytes
                )
            ));
        }
        let largest = export.largest.as_ref()?;
        (largest.bytes > limits.max_document_bytes).then(|| {
            format!(
                "`{}` is exported as a document of {} bytes, more than the {} bytes `db import` \
                 reads in one document: {}",
                largest.subject,
                largest.bytes,
                limits.max_document_bytes,
                fix(
                    "limits.definition_max_bytes",
                    ENV_LIMITS_DEFINITION_MAX_BYTES,
                    largest.bytes
                )
            )
        })
    }

    /// What keeps `skill add` from reading back a skill definition of
    /// `bytes` bytes (`skill get --format yaml`, where hidden characters
    /// are written as escapes several times their size), with the setting
    /// that would let it through. `None` when it fits.
    pub fn definition_warning(&self, bytes: usize) -> Option<String> {
        let max = self.skills().max_bytes;
        (bytes > max).then(|| {
            format!(
                "this definition is {bytes} bytes, more than the {max} bytes `skill add` reads: {}",
                raise_to(
                    "adding it",
                    "limits.definition_max_bytes",
                    ENV_LIMITS_DEFINITION_MAX_BYTES,
                    bytes
                )
            )
        })
    }

    /// Limits for skill definition files.
    pub fn skills(&self) -> Limits {
        self.apply(Limits::SKILLS, &self.definition_max_bytes)
    }

    /// Limits for custom tool files.
    pub fn tools(&self) -> Limits {
        self.apply(Limits::TOOLS, &self.definition_max_bytes)
    }

    /// Limits for plans.
    pub fn plan(&self) -> Limits {
        self.apply(Limits::PLAN, &self.plan_max_bytes)
    }

    /// Limits for `db import` files: one document of an export (a skill, a
    /// tool, or a whole `cleveragents-export/1` registry) may be as large as
    /// a skill file.
    pub fn export(&self) -> Limits {
        let document = usize::try_from(self.definition_max_bytes.value)
            .unwrap_or(Limits::EXPORT.max_document_bytes);
        self.apply(Limits::EXPORT, &self.export_max_bytes)
            .with_max_document_bytes(document)
    }

    fn apply(&self, kind: Limits, max_bytes: &Setting<u64>) -> Limits {
        // Both were range-checked when resolved, so they fit a `usize`.
        kind.with_max_bytes(usize::try_from(max_bytes.value).unwrap_or(kind.max_bytes))
            .with_max_depth(usize::try_from(self.max_depth.value).unwrap_or(kind.max_depth))
    }
}

/// Why settings cannot be resolved.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The config file exists but cannot be read.
    #[error(
        "cannot read config file `{}`: {source}",
        agents_core::text::shown_path(path)
    )]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The config file is a directory or another non-file.
    #[error(
        "config file `{}` is not a regular file",
        agents_core::text::shown_path(path)
    )]
    NotAFile {
        /// The path.
        path: PathBuf,
    },
    /// Another user can change the config file, whose MCP servers run
    /// without asking.
    #[error(
        "config file `{}` is not used: {exposure}, and the MCP servers it defines run without asking",
        path.display()
    )]
    Exposed {
        /// The file.
        path: PathBuf,
        /// Who else can change it.
        exposure: agents_fs::Exposure,
    },
    /// The config file is unreasonably large.
    #[error(
        "config file `{}` is larger than {limit} bytes",
        agents_core::text::shown_path(path)
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The limit.
        limit: u64,
    },
    /// An edit (`mcp import`) would make the config file larger than any
    /// command reads; nothing was written.
    #[error(
        "config file `{}` would be {size} bytes, over the {limit} a config file may have; nothing was written",
        agents_core::text::shown_path(path)
    )]
    WouldBeTooLarge {
        /// The file.
        path: PathBuf,
        /// The size it would have.
        size: usize,
        /// The limit.
        limit: u64,
    },
    /// A config file named by `--config` or `CLEVERAGENTS_CONFIG` is missing.
    #[error(
        "config file `{}` (from {origin}) does not exist",
        agents_core::text::shown_path(path)
    )]
    MissingFile {
        /// The file.
        path: PathBuf,
        /// Who named it.
        origin: Origin,
    },
    /// A problem at a place in the config file.
    #[error(
        "{}:{line}:{column}: {message}\n{snippet}",
        agents_core::text::shown_path(path)
    )]
    File {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
        /// What is wrong.
        message: String,
        /// The line with a caret under the problem.
        snippet: String,
    },
    /// A value from a flag or the environment is invalid.
    #[error("invalid `{key}` from {origin}: {message}")]
    Invalid {
        /// The setting.
        key: &'static str,
        /// Where the value came from.
        origin: Origin,
        /// What was expected.
        message: String,
    },
    /// The config file cannot be written.
    #[error("cannot write `{}`: {source}", agents_core::text::shown_path(path))]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A client's MCP config file (`mcp import`) cannot be used.
    #[error("cannot import `{}`: {message}", agents_core::text::shown_path(path))]
    Import {
        /// The client file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A path could not be expanded.
    #[error("cannot expand `{raw}`: {message}")]
    Expand {
        /// The path as written.
        raw: String,
        /// Why.
        message: String,
    },
}

impl ConfigError {
    /// A stable machine-readable kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Read { .. } => "config_read",
            Self::NotAFile { .. } => "config_not_a_file",
            Self::Exposed { .. } => "config_permissions",
            Self::TooLarge { .. } | Self::WouldBeTooLarge { .. } => "config_too_large",
            Self::MissingFile { .. } => "config_missing_file",
            Self::File { .. } => "config_invalid",
            Self::Invalid { .. } => "config_invalid_value",
            Self::Expand { .. } => "config_expand",
            Self::Import { .. } => "mcp_import",
            Self::Write { .. } => "config_write",
        }
    }
}

/// The process environment, for callers that want it (the CLI).
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Refuses a variable of [`ENV_VARS`] set to bytes that are not UTF-8: read
/// as unset, it would silently give way to the file or the default (a
/// `CLEVERAGENTS_DATABASE_URL` naming another registry, and the write going
/// to the default one).
pub fn check_process_env() -> Result<(), ConfigError> {
    for var in ENV_VARS {
        if std::env::var_os(var.name).is_some_and(|value| value.to_str().is_none()) {
            return Err(ConfigError::Invalid {
                key: var.key,
                origin: Origin::Env { var: var.name },
                message: "not valid UTF-8".into(),
            });
        }
    }
    Ok(())
}

/// Splits a comma-separated list of directories, drops empty entries and
/// expands each with [`expand_path`].
pub fn parse_paths(
    raw: &str,
    home: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<PathBuf>, ConfigError> {
    raw.split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(|entry| expand_path(entry, home, env))
        .collect()
}

/// Resolves every setting: flag > environment > config file > default.
///
/// `env` is how the environment is read (the CLI passes [`process_env`],
/// tests pass a map); an empty value counts as unset. `home` is what `~`
/// means. Relative paths in the config file are relative to its folder;
/// relative paths from a flag or the environment are left relative.
pub fn resolve(
    cli: &CliOverrides,
    env: &dyn Fn(&str) -> Option<String>,
    home: &Path,
) -> Result<Settings, ConfigError> {
    let env_value = |name: &str| env(name).filter(|value| !value.is_empty());
    let mut warnings = Vec::new();

    let config_file = pick(
        cli.config.as_ref().map(|path| {
            found(Origin::Flag, move |_| match path.to_str() {
                Some(raw) => expand_path(raw, home, env),
                None => Ok(path.clone()),
            })
        }),
        env_value(ENV_CONFIG).map(|raw| {
            found(Origin::Env { var: ENV_CONFIG }, move |_| {
                expand_path(&raw, home, env)
            })
        }),
        None,
        || Ok(home.join(DEFAULT_CONFIG_FILE)),
    )?;
    let loaded = file::load(&config_file.value)?;
    if loaded.is_none() && config_file.origin != Origin::Default {
        return Err(ConfigError::MissingFile {
            path: config_file.value.clone(),
            origin: config_file.origin.clone(),
        });
    }
    let config_file_loaded = loaded.is_some();
    let (text, file) = loaded.unwrap_or_default();
    let path = config_file.value.as_path();
    let at = |span: std::ops::Range<usize>, message: String| located(path, &text, span, message);
    let file_origin = |span: std::ops::Range<usize>| Origin::File {
        path: path.to_path_buf(),
        line: text[..span.start.min(text.len())].matches('\n').count() + 1,
    };
    let FileConfig {
        database,
        skills,
        mcp,
        limits,
    } = file;

    let database_url = pick(
        cli.database_url
            .clone()
            .map(|url| found(Origin::Flag, move |_| Ok(url))),
        env_value(ENV_DATABASE_URL).map(|url| {
            found(
                Origin::Env {
                    var: ENV_DATABASE_URL,
                },
                move |_| Ok(url),
            )
        }),
        database
            .url
            .map(|url| found(file_origin(url.span()), move |_| Ok(url.into_inner()))),
        || default_database_url(home),
    )?;

    let agent_skills_paths = pick(
        cli.agent_skills_paths
            .as_ref()
            .map(|raw| found(Origin::Flag, move |_| parse_paths(raw, home, env))),
        env_value(ENV_AGENT_SKILLS_PATHS).map(|raw| {
            found(
                Origin::Env {
                    var: ENV_AGENT_SKILLS_PATHS,
                },
                move |origin| {
                    parse_paths(&raw, home, env).map_err(|err| ConfigError::Invalid {
                        key: "skills.agent_skills_paths",
                        origin: origin.clone(),
                        message: err.to_string(),
                    })
                },
            )
        }),
        skills.agent_skills_paths.map(|list| {
            let span = list.span();
            found(file_origin(span.clone()), move |_| {
                let base = path.parent().unwrap_or(Path::new(""));
                let entries: Vec<String> = match list.into_inner() {
                    PathList::Joined(raw) => raw
                        .split(',')
                        .map(|entry| entry.trim().to_owned())
                        .collect(),
                    PathList::Items(items) => items,
                };
                let mut paths = Vec::new();
                for entry in entries
                    .iter()
                    .map(|entry| entry.trim())
                    .filter(|entry| !entry.is_empty())
                {
                    let expanded = expand_path(entry, home, env)
                        .map_err(|err| at(span.clone(), err.to_string()))?;
                    paths.push(base.join(expanded));
                }
                Ok(paths)
            })
        }),
        || parse_paths(DEFAULT_AGENT_SKILLS_PATHS, home, env),
    )?;
    for dir in &agent_skills_paths.value {
        match std::fs::metadata(dir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => warnings.push(format!(
                "agent skills path `{}` (from {}) is not a directory",
                dir.display(),
                agent_skills_paths.origin
            )),
            Err(_) => warnings.push(format!(
                "agent skills path `{}` (from {}) does not exist",
                dir.display(),
                agent_skills_paths.origin
            )),
        }
    }

    let timeout_rule = "expected whole seconds, at least 1";
    let whole = |spec: Whole, flag: Option<u64>, file: Option<Spanned<i64>>| {
        whole_number(&spec, flag, env_value(spec.var), file, &file_origin, &at)
    };
    let mcp_timeout_s = whole(
        Whole {
            key: "mcp.timeout_s",
            var: ENV_MCP_TIMEOUT_S,
            rule: timeout_rule,
            range: (1, i64::MAX.unsigned_abs()),
            default: DEFAULT_MCP_TIMEOUT_S,
        },
        cli.mcp_timeout_s,
        mcp.timeout_s,
    )?;
    let bytes_rule = "expected a whole number of bytes from 1 to 268435456 (256 MiB)";
    let bytes = |key, var, file, default: usize| {
        whole(
            Whole {
                key,
                var,
                rule: bytes_rule,
                range: (1, MAX_INPUT_BYTES),
                default: default as u64,
            },
            None,
            file,
        )
    };
    let limits = InputLimits {
        max_depth: whole(
            Whole {
                key: "limits.max_depth",
                var: ENV_LIMITS_MAX_DEPTH,
                rule: "expected a whole number from 1 to 128",
                range: (1, HARD_MAX_DEPTH as u64),
                default: Limits::SKILLS.max_depth as u64,
            },
            None,
            limits.max_depth,
        )?,
        definition_max_bytes: bytes(
            "limits.definition_max_bytes",
            ENV_LIMITS_DEFINITION_MAX_BYTES,
            limits.definition_max_bytes,
            Limits::SKILLS.max_bytes,
        )?,
        plan_max_bytes: bytes(
            "limits.plan_max_bytes",
            ENV_LIMITS_PLAN_MAX_BYTES,
            limits.plan_max_bytes,
            Limits::PLAN.max_bytes,
        )?,
        export_max_bytes: bytes(
            "limits.export_max_bytes",
            ENV_LIMITS_EXPORT_MAX_BYTES,
            limits.export_max_bytes,
            Limits::EXPORT.max_bytes,
        )?,
    };

    let mut mcp_servers = IndexMap::new();
    let mut untrusted_mcp_servers = std::collections::BTreeSet::new();
    for (name, table) in mcp.servers {
        let span = table.span();
        let table = table.into_inner();
        if table.untrusted {
            untrusted_mcp_servers.insert(name.clone());
        }
        let timeout_s = match &table.timeout_s {
            None => None,
            Some(seconds) => Some(positive_seconds(*seconds.get_ref()).ok_or_else(|| {
                at(
                    seconds.span(),
                    format!(
                        "mcp server `{name}`: `timeout_s`: {timeout_rule}, got `{}`",
                        seconds.get_ref()
                    ),
                )
            })?),
        };
        let source = server_source(&name, table, timeout_s);
        let problems = server_problems(&source);
        if !problems.is_empty() {
            return Err(at(
                span,
                format!("mcp server `{name}`: {}", problems.join("; ")),
            ));
        }
        mcp_servers.insert(name, source);
    }

    Ok(Settings {
        config_file_loaded,
        config_file,
        database_url,
        agent_skills_paths,
        mcp_timeout_s,
        limits,
        mcp_servers,
        untrusted_mcp_servers,
        warnings,
        home: home.to_path_buf(),
    })
}

/// A set source of a setting: where the value comes from, and how to read it
/// (called only for the source that wins, so a shadowed bad value is no error).
type Found<'a, T> = (
    Origin,
    Box<dyn FnOnce(&Origin) -> Result<T, ConfigError> + 'a>,
);

fn found<'a, T>(
    origin: Origin,
    read: impl FnOnce(&Origin) -> Result<T, ConfigError> + 'a,
) -> Found<'a, T> {
    (origin, Box::new(read))
}

/// The one precedence rule: flag > environment > config file > default. The
/// first source that is set decides, and only its value is read.
fn pick<T>(
    flag: Option<Found<'_, T>>,
    env: Option<Found<'_, T>>,
    file: Option<Found<'_, T>>,
    default: impl FnOnce() -> Result<T, ConfigError>,
) -> Result<Setting<T>, ConfigError> {
    match [flag, env, file].into_iter().flatten().next() {
        Some((origin, read)) => Ok(Setting::new(read(&origin)?, origin)),
        None => Ok(Setting::new(default()?, Origin::Default)),
    }
}

/// `sqlite://HOME/.cleveragents/cleveragents.db`: the embedded default.
fn default_database_url(home: &Path) -> Result<String, ConfigError> {
    let file = home.join(DEFAULT_DATABASE_FILE);
    match file.to_str() {
        Some(path) => Ok(format!("sqlite://{path}")),
        None => Err(ConfigError::Invalid {
            key: "database.url",
            origin: Origin::Default,
            message: format!(
                "the default database `{}` is not valid UTF-8; set `database.url`",
                file.display()
            ),
        }),
    }
}

/// A whole-number setting: its key, variable, what it must be and its
/// default.
struct Whole {
    key: &'static str,
    var: &'static str,
    /// What a valid value is, e.g. "expected whole seconds, at least 1".
    rule: &'static str,
    /// The smallest and largest valid value.
    range: (u64, u64),
    default: u64,
}

/// One rule for every whole-number setting, through [`pick`]: the same
/// range whichever source sets it, and an error that names the source.
fn whole_number(
    spec: &Whole,
    flag: Option<u64>,
    env: Option<String>,
    file: Option<Spanned<i64>>,
    file_origin: &dyn Fn(std::ops::Range<usize>) -> Origin,
    at: &dyn Fn(std::ops::Range<usize>, String) -> ConfigError,
) -> Result<Setting<u64>, ConfigError> {
    let (min, max) = spec.range;
    let valid = move |n: u64| (min..=max).contains(&n).then_some(n);
    let invalid = |origin: &Origin, got: &dyn fmt::Display| ConfigError::Invalid {
        key: spec.key,
        origin: origin.clone(),
        message: format!("{}, got `{got}`", spec.rule),
    };
    pick(
        flag.map(|n| {
            found(Origin::Flag, move |origin| {
                valid(n).ok_or_else(|| invalid(origin, &n))
            })
        }),
        env.map(|raw| {
            found(Origin::Env { var: spec.var }, move |origin| {
                raw.trim()
                    .parse::<u64>()
                    .ok()
                    .and_then(valid)
                    .ok_or_else(|| invalid(origin, &raw))
            })
        }),
        file.map(|n| {
            let span = n.span();
            found(file_origin(span.clone()), move |_| {
                u64::try_from(*n.get_ref())
                    .ok()
                    .and_then(valid)
                    .ok_or_else(|| {
                        at(
                            span,
                            format!("`{}`: {}, got `{}`", spec.key, spec.rule, n.get_ref()),
                        )
                    })
            })
        }),
        || Ok(spec.default),
    )
}

fn positive_seconds(seconds: i64) -> Option<u64> {
    u64::try_from(seconds).ok().filter(|&s| s >= 1)
}

/// The rules `Skill::validate` applies to MCP sources, plus: a configured
/// server must say how to reach it.
/// The `[mcp.servers.NAME]` table as the MCP source it defines.
fn server_source(name: &str, table: file::ServerTable, timeout_s: Option<u64>) -> McpSource {
    McpSource {
        server: name.to_owned(),
        command: table.command,
        args: table.args,
        env: table.env,
        cwd: table.cwd,
        url: table.url,
        headers: table.headers,
        tools: table.tools,
        timeout_s,
    }
}

/// Checks config file text the way loading it would: TOML syntax, known
/// fields, and every `[mcp.servers.NAME]` table's rules.
pub(crate) fn check_config_text(path: &Path, text: &str) -> Result<(), ConfigError> {
    // Larger, it would be refused by every command that reads it.
    if text.len() as u64 > file::MAX_CONFIG_BYTES {
        return Err(ConfigError::WouldBeTooLarge {
            path: path.to_path_buf(),
            size: text.len(),
            limit: file::MAX_CONFIG_BYTES,
        });
    }
    let config = toml::from_str::<FileConfig>(text).map_err(|err| {
        let span = err.span().unwrap_or(0..0);
        located(path, text, span, err.message().trim_end().to_owned())
    })?;
    for (name, table) in config.mcp.servers {
        let span = table.span();
        let table = table.into_inner();
        let source = server_source(&name, table, None);
        let problems = server_problems(&source);
        if !problems.is_empty() {
            return Err(located(
                path,
                text,
                span,
                format!("mcp server `{name}`: {}", problems.join("; ")),
            ));
        }
    }
    Ok(())
}

/// The server the `[mcp.servers.NAME]` table `table` defines, or what
/// loading the config would refuse of it (its problems, joined as the
/// config's error lists them): `mcp import` skips such a server instead of
/// writing a config that does not load.
pub(crate) fn check_server_table(
    name: &str,
    table: &toml_edit::Table,
) -> Result<McpSource, String> {
    let text = toml_edit::DocumentMut::from(table.clone()).to_string();
    let table = toml::from_str::<file::ServerTable>(&text)
        .map_err(|err| err.message().trim_end().to_owned())?;
    let source = server_source(name, table, None);
    let problems = server_problems(&source);
    if problems.is_empty() {
        Ok(source)
    } else {
        Err(problems.join("; "))
    }
}

fn server_problems(source: &McpSource) -> Vec<String> {
    let mut problems = Vec::new();
    if source.is_reference() {
        problems.push(
            "needs `command` (a stdio server) or `url` (a streamable-HTTP server)".to_owned(),
        );
    }
    // A one-item skill reuses the core's checks instead of copying them.
    if let Ok(name) = SkillName::new("config/mcp_servers") {
        let mut skill = Skill::new(name);
        skill
            .items
            .push(SkillItem::McpSource(Box::new(source.clone())));
        if let Err(invalid) = skill.validate() {
            for problem in invalid {
                let field = problem
                    .field
                    .strip_prefix("mcp_sources[0]")
                    .map(|rest| rest.trim_start_matches('.'))
                    .unwrap_or(&problem.field);
                if field.is_empty() {
                    problems.push(problem.message);
                } else {
                    problems.push(format!("`{field}`: {}", problem.message));
                }
            }
        }
    }
    problems
}

/// A database URL fit to print: the one redaction of
/// [`agents_core::redact::redact_url`] (password, however encoded, and
/// password-like query values).
pub fn mask_database_url(url: &str) -> String {
    agents_core::redact::redact_url(url)
}

/// `[mcp.servers]` as printed: `env` and `headers` values hidden (a pure
/// `${VAR}` reference is kept), URLs redacted, secret options' values in
/// `args` hidden.
fn serialize_mcp_servers<S: Serializer>(
    servers: &IndexMap<String, McpSource>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    use agents_core::redact::{redact_args, redact_setting_value, redact_url};
    let shown: IndexMap<&String, McpSource> = servers
        .iter()
        .map(|(name, server)| {
            let mut server = server.clone();
            for value in server.env.values_mut().chain(server.headers.values_mut()) {
                *value = redact_setting_value(value);
            }
            server.url = server.url.as_deref().map(redact_url);
            server.args = redact_args(&server.args);
            (name, server)
        })
        .collect();
    shown.serialize(serializer)
}

fn serialize_database_url<S: Serializer>(
    setting: &Setting<String>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    Setting::new(mask_database_url(&setting.value), setting.origin.clone()).serialize(serializer)
}

impl fmt::Display for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let row = |f: &mut fmt::Formatter<'_>, key: &str, value: &str, origin: &Origin| {
            writeln!(f, "{key:<27} {value}  ({origin})")
        };
        let file = if self.config_file_loaded {
            self.config_file.value.display().to_string()
        } else {
            format!("{} (not found)", self.config_file.value.display())
        };
        row(f, "config file", &file, &self.config_file.origin)?;
        let url = mask_database_url(&self.database_url.value);
        row(f, "database.url", &url, &self.database_url.origin)?;
        let paths = if self.agent_skills_paths.value.is_empty() {
            "(none)".to_owned()
        } else {
            self.agent_skills_paths
                .value
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        row(
            f,
            "skills.agent_skills_paths",
            &paths,
            &self.agent_skills_paths.origin,
        )?;
        row(
            f,
            "mcp.timeout_s",
            &self.mcp_timeout_s.value.to_string(),
            &self.mcp_timeout_s.origin,
        )?;
        let limits = [
            ("limits.max_depth", &self.limits.max_depth),
            (
                "limits.definition_max_bytes",
                &self.limits.definition_max_bytes,
            ),
            ("limits.plan_max_bytes", &self.limits.plan_max_bytes),
            ("limits.export_max_bytes", &self.limits.export_max_bytes),
        ];
        for (key, setting) in limits {
            row(f, key, &setting.value.to_string(), &setting.origin)?;
        }
        if self.mcp_servers.is_empty() {
            write!(f, "{:<27} (none)", "mcp.servers")?;
        } else {
            write!(f, "mcp.servers")?;
            for (name, server) in &self.mcp_servers {
                let how = match (&server.command, &server.url) {
                    (Some(command), _) => format!("stdio: {command}"),
                    (None, Some(url)) => {
                        format!("http: {}", agents_core::redact::redact_url(url))
                    }
                    (None, None) => "(no transport)".to_owned(),
                };
                let how = if self.untrusted_mcp_servers.contains(name) {
                    format!("{how} (untrusted)")
                } else {
                    how
                };
                write!(f, "\n  {name:<25} {how}")?;
            }
        }
        writeln!(f)?;
        writeln!(f)?;
        write!(
            f,
            "environment variables (flag > environment > config file > default):"
        )?;
        for var in ENV_VARS {
            write!(f, "\n  {:<40} {}", var.name, var.key)?;
        }
        Ok(())
    }
}
