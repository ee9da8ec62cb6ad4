//! MCP refresh: which server definitions exist, which of them this user
//! trusts, querying them, and replacing each definition's cached tools in the
//! catalogue in one transaction.
//!
//! A cached tool list belongs to the launch spec that fetched it: catalogue
//! rows are named `mcp:{server}@{digest12}/{tool}`, grouped by the full
//! [`agents_mcp::spec_digest`] (`tools.origin`), and carry `spec_digest` in
//! their metadata. A skill's `mcp_source` resolves to the cache of its own
//! spec (a reference to the spec in `config.toml`), so no definition can
//! replace the tools another definition's server served.
//!
//! Nothing per-user goes into shared rows: refresh errors (which may quote a
//! server's stderr) are returned to the caller only; `registry_meta` holds
//! `mcp.{digest}.fetched_at` and `defined_by.{skill}`.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use agents_core::{
    McpSource, Meta, Skill, SkillItem, SkillName, ToolChange, ToolSource, ToolSpec,
    compare_tool_lists,
};
use agents_mcp::{FetchOptions, FetchedTools, fetch_tools, short_digest, spec_digest};
use agents_store::ToolGroup;
use serde::Serialize;

use crate::error::ServiceError;
use crate::service::{ServeSet, SkillRegistryService};
use crate::trust::{Launch, MAX_LAUNCH_BYTES, Trust, quote};

/// How many rows that do not decode a registry-wide listing names.
const CORRUPT_SHOWN: usize = 10;

/// The outcome of refreshing one MCP server definition.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct McpRefresh {
    /// Server name.
    pub server: String,
    /// The definition's launch-spec digest.
    pub digest: String,
    /// `stdio` or `http`.
    pub transport: Option<String>,
    /// Tools now cached (on success), named `mcp:{server}/{tool}`.
    pub tools: Vec<String>,
    /// Tools the server listed but the catalogue refused.
    pub rejected: Vec<String>,
    /// Why the server was not queried or could not be; the old cache is kept.
    pub error: Option<String>,
    /// `untrusted_mcp_server` when the server was not started because this
    /// user does not trust it, else the fetch error's `kind()` (`mcp_timeout`, ...).
    pub error_kind: Option<&'static str>,
    /// When the cache in use was fetched (ISO-8601), if there is one.
    pub cached_at: Option<String>,
    /// Tools that differ from the cache this refresh replaced (empty on a
    /// first fetch); the replaced cache is kept for `agents mcp tools --diff`.
    pub changes: Vec<ToolChange>,
    /// When the replaced cache had been fetched, when there are `changes`.
    pub changed_since: Option<String>,
}

impl McpRefresh {
    /// One warning per tool that changed since the cache this refresh
    /// replaced (`mcp:SERVER/TOOL: description changed since <time>`): what
    /// every command that refreshes (`mcp refresh`, `skill tools --refresh`,
    /// `skill validate --strict`, the gateway after an upstream's
    /// `list_changed`) reports, so a rug pull is heard of however the
    /// list was fetched.
    pub fn drift_warnings(&self) -> Vec<DriftWarning> {
        let since = self.changed_since.as_deref().unwrap_or("the last fetch");
        self.changes
            .iter()
            .map(|change| {
                let fields: Vec<String> = change.fields.iter().map(|f| f.field.clone()).collect();
                let what = match change.change {
                    agents_core::ListingChange::Added => "added".to_owned(),
                    agents_core::ListingChange::Removed => "removed".to_owned(),
                    agents_core::ListingChange::Changed => format!("{} changed", fields.join(", ")),
                };
                DriftWarning {
                    message: format!("{}: {what} since {since}", change.name),
                    kind: "mcp_tool_changed",
                    server: self.server.clone(),
                    tool: change.name.clone(),
                    change: change.change,
                    fields,
                    since: self.changed_since.clone(),
                }
            })
            .collect()
    }
}

/// One tool a refresh found changed since the cache it replaced
/// ([`McpRefresh::drift_warnings`]): the message for people and its parts
/// for scripts (`--format json` prints them as the warning's fields).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DriftWarning {
    /// `mcp:SERVER/TOOL: description changed since <time>` (also `added
    /// since`, `removed since`).
    pub message: String,
    /// Always `mcp_tool_changed`.
    pub kind: &'static str,
    /// The server's name.
    pub server: String,
    /// The tool as skills name it (`mcp:SERVER/TOOL`).
    pub tool: String,
    /// Added, removed or changed.
    pub change: agents_core::ListingChange,
    /// For a changed tool, the fields that changed.
    pub fields: Vec<String>,
    /// When the replaced cache had been fetched.
    pub since: Option<String>,
}

/// The last change of one definition's cached tools: the generation a
/// refresh replaced against the one now cached.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct McpToolDiff {
    /// Server name.
    pub server: String,
    /// The definition's launch-spec digest.
    pub digest: String,
    /// When the previous generation was fetched; `None` when no change was
    /// ever seen (nothing kept).
    pub previous_fetched_at: Option<String>,
    /// When the current cache was fetched.
    pub fetched_at: Option<String>,
    /// What changed, tool by tool.
    pub changes: Vec<ToolChange>,
}

/// The cached tools of one definition of a server (`agents mcp tools
/// SERVER`): two skills, or a skill and the config file, may each define a
/// server of one name with another launch line, and each definition has a
/// cache of its own.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct McpToolGroup {
    /// The definition's digest: what its cache rows are keyed by (for a
    /// server of the config file, keyed with this user's key).
    pub digest: String,
    /// Who defines it: `config` (the user's config file) and the skills
    /// holding this exact spec inline, by name; empty for a cache no
    /// current definition has (the definition was changed or removed).
    pub defined_in: Vec<String>,
    /// Its cached tools, as skills name them (`mcp:{server}/{tool}`).
    pub tools: Vec<ToolSpec>,
}

/// One MCP server definition and whether this user trusts it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct McpDefinition {
    /// Server name.
    pub server: String,
    /// `config` or the first skill (by name) holding this exact spec inline.
    pub defined_in: String,
    /// Who wrote that skill (`user@host`, as recorded when it was written; a
    /// claim made by whoever wrote the row), if known.
    pub defined_by: Option<String>,
    /// [`agents_mcp::spec_digest`] of the spec: what it is trusted by, and
    /// what its cache rows are named and grouped by. For a server of the
    /// config file, which is trusted without the trust store, it is the
    /// spec digest keyed with this user's key instead
    /// ([`SkillRegistryService::config_digest`]): its cache rows are in the
    /// shared database, and a plain digest of a spec holding a literal
    /// secret would let anyone confirm a guess of that secret.
    pub digest: String,
    /// Whether it may start: a server of `config.toml` (unless the file
    /// marks it `untrusted`) or a spec in this user's trust store. Private:
    /// only [`Trust`]'s constructors decide it.
    trusted: Trust,
    /// The spec as written (`${VAR}` unexpanded).
    #[serde(skip)]
    pub source: McpSource,
}

impl McpDefinition {
    /// A definition of `source` (defined in `defined_in`) that may not
    /// start: one made outside the service, which alone asks the trust
    /// store and the config file.
    pub fn untrusted(source: McpSource, defined_in: impl Into<String>) -> Self {
        Self {
            server: source.server.clone(),
            defined_in: defined_in.into(),
            defined_by: None,
            digest: spec_digest(&source),
            trusted: Trust::none(),
            source,
        }
    }

    /// Whether it may start on this machine.
    pub fn trusted(&self) -> bool {
        self.trusted.is_trusted()
    }

    /// What a launcher takes, when it may start ([`Trust::launch`]).
    pub fn trusted_launch(&self) -> Option<crate::trust::TrustedLaunch> {
        self.trusted.launch(&self.source)
    }

    /// What it would run or reach, every word in full: what trusting it
    /// consents to.
    pub fn launch(&self) -> Launch {
        Launch::of(&self.source)
    }

    /// The server's name as a message shows it (escaped and cut: a name
    /// from a configuration or a row read back is checked already, but a
    /// definition can be made by anyone embedding the library).
    pub fn shown_server(&self) -> String {
        agents_core::text::shorten(&self.server, agents_core::text::MAX_ECHO_BYTES).into_owned()
    }

    /// Where it is defined and who wrote it: ``skill `S` by `U` `` (`U` as
    /// the skill's row claims), or `your config file`.
    pub fn definer(&self) -> String {
        if self.defined_in == "config" {
            return if self.trusted() {
                "your config file".to_owned()
            } else {
                "your config file, marked `untrusted`".to_owned()
            };
        }
        let skill = agents_core::text::shorten(&self.defined_in, agents_core::text::MAX_ECHO_BYTES);
        match &self.defined_by {
            Some(user) => format!(
                "skill `{skill}` by `{}`",
                agents_core::text::shorten(user, agents_core::text::MAX_ECHO_BYTES)
            ),
            None => format!("skill `{skill}`, writer unknown"),
        }
    }

    /// [`Self::trust_hint`] as the front end words it (the CLI: `agents
    /// mcp trust NAME --digest DIGEST`).
    pub fn trust_command(&self) -> String {
        self.trust_hint().to_string()
    }

    /// The hint that trusts exactly this definition, its words quoted for
    /// a shell.
    pub fn trust_hint(&self) -> agents_core::Hint {
        agents_core::Hint::Trust {
            server: quote(&self.server),
            digest: quote(&self.digest),
        }
    }

    /// What a message says of what it would run, and how to trust it (see
    /// [`Launch::in_message`]).
    ///
    /// A definition that writes a secret out
    /// ([`agents_core::redact::literal_secret_fields`]) is not shown in a
    /// one-line message: warnings go to logs and CI output, which the
    /// definition's secret should not reach unasked; `agents mcp trust`,
    /// asked to show it, does.
    pub fn launch_in_message(&self) -> String {
        let secrets = agents_core::redact::literal_secret_fields(&self.source);
        if secrets.is_empty() {
            return self.launch().in_message(&self.trust_command());
        }
        format!(
            "what it would run or reach writes secrets out (`{}`), so it is not shown here: `{}` shows all of it and, in a terminal, asks before trusting",
            agents_core::text::head_tail(&secrets, 3, 2, "`, `"),
            self.trust_command()
        )
    }

    /// Says why it was not started, what it would run, and how to trust it.
    pub fn untrusted_message(&self) -> String {
        format!(
            "mcp server `{}` (defined in {}) is not trusted on this machine and was not started; {}",
            self.shown_server(),
            self.definer(),
            self.launch_in_message()
        )
    }

    /// The same without what it would run, for a line repeated per tool:
    /// says it is not shown, and which command shows it.
    pub fn untrusted_hint(&self) -> String {
        format!(
            "mcp server `{}` (defined in {}) is not trusted on this machine; what it would run is not shown here: `{}` shows it and, in a terminal, asks before trusting",
            self.shown_server(),
            self.definer(),
            self.trust_command()
        )
    }
}

/// A definition as `agents mcp trust` shows it for review.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReviewedDefinition {
    /// The definition.
    #[serde(flatten)]
    pub definition: McpDefinition,
    /// What it would run or reach, in full; `None` when it is longer than
    /// [`MAX_LAUNCH_BYTES`] (it then cannot be trusted) or when the review
    /// leaves it out to stay within that many bytes in all.
    pub launch: Option<Launch>,
    /// How many bytes the launch is, as [`Launch::lines`] show it.
    pub launch_bytes: usize,
}

impl ReviewedDefinition {
    /// The lines for people: who defined it, its digest, and what it
    /// would run in full (or why that is not shown).
    pub fn lines(&self) -> Vec<String> {
        let d = &self.definition;
        let state = if d.trusted() {
            "trusted on this machine"
        } else {
            "not trusted on this machine"
        };
        let mut lines = vec![
            format!(
                "mcp server `{}`, defined in {}: {state}",
                d.shown_server(),
                d.definer()
            ),
            format!("  digest: {}", d.digest),
        ];
        match &self.launch {
            Some(launch) => lines.extend(launch.lines().into_iter().map(|line| format!("  {line}"))),
            None if self.launch_bytes > MAX_LAUNCH_BYTES => lines.push(format!(
                "  what it would run or reach is {} bytes, more than `{}` shows ({MAX_LAUNCH_BYTES}): it cannot be trusted",
                self.launch_bytes,
                agents_core::Hint::ReviewTrust
            )),
            None => lines.push(format!(
                "  what it would run or reach ({} bytes) is not shown with the others: `{}` shows it",
                self.launch_bytes,
                d.trust_command()
            )),
        }
        lines
    }
}

/// The definitions of one server name `agents mcp trust` is asked about,
/// shown before anything is trusted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrustReview {
    /// The name asked for (shortened).
    pub server: String,
    /// The untrusted definitions of that name (with that digest, when one
    /// was given), in full as far as [`MAX_LAUNCH_BYTES`] in all allows.
    pub candidates: Vec<ReviewedDefinition>,
    /// How many more untrusted definitions there are than `candidates`
    /// lists ([`REVIEWED_MAX`] at most are listed).
    pub more_candidates: usize,
    /// The definitions of that name already trusted (the config file's,
    /// or trusted before); their launch is not shown.
    pub trusted: Vec<McpDefinition>,
}

/// How many untrusted definitions of one name a review lists.
pub const REVIEWED_MAX: usize = 20;

/// What `agents mcp trust` does after the review.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TrustStep<'a> {
    /// Nothing to trust: every definition of the name is trusted.
    AlreadyTrusted,
    /// Ask the person at the terminal whether to trust this definition.
    Ask(&'a McpDefinition),
    /// Trust it: its digest was given, outside a terminal.
    Trust(&'a McpDefinition),
}

impl TrustReview {
    /// Which step follows, given whether `--digest` was given and whether a
    /// person can be asked (stdin a terminal, output for people). A
    /// definition is trusted only when it is the one candidate, it was
    /// shown in full, and either the person confirms or its digest was
    /// given (read where a message showed it): a name alone never trusts a
    /// definition nobody was shown, such as one someone else wrote under
    /// the name of a server in your config file.
    pub fn step(&self, digest_given: bool, can_ask: bool) -> Result<TrustStep<'_>, ServiceError> {
        let [only] = self.candidates.as_slice() else {
            if self.candidates.is_empty() {
                return Ok(TrustStep::AlreadyTrusted);
            }
            return Err(ServiceError::McpAmbiguousTrust {
                server: self.server.clone(),
                definitions: self
                    .candidates
                    .iter()
                    .map(|c| format!("{} ({})", c.definition.digest, c.definition.definer()))
                    .collect(),
                more: self.more_candidates,
            });
        };
        if self.more_candidates > 0 {
            return Err(ServiceError::McpAmbiguousTrust {
                server: self.server.clone(),
                definitions: vec![format!(
                    "{} ({})",
                    only.definition.digest,
                    only.definition.definer()
                )],
                more: self.more_candidates,
            });
        }
        let definition = &only.definition;
        if only.launch.is_none() {
            return Err(ServiceError::McpLaunchTooLong {
                server: definition.shown_server(),
                definer: definition.definer(),
                bytes: only.launch_bytes,
            });
        }
        match (can_ask, digest_given) {
            (true, _) => Ok(TrustStep::Ask(definition)),
            (false, true) => Ok(TrustStep::Trust(definition)),
            (false, false) => Err(ServiceError::McpTrustNeedsDigest {
                command: definition.trust_command(),
            }),
        }
    }
}

/// A definition with its cache state, for `agents mcp list`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct McpServerState {
    /// Server name.
    pub server: String,
    /// Where it is defined: `config` or the first skill that defines it inline.
    pub defined_in: String,
    /// Who wrote that skill, if known.
    pub defined_by: Option<String>,
    /// Launch-spec digest (empty for a reference to an undefined server).
    pub digest: String,
    /// Whether this user trusts it.
    pub trusted: bool,
    /// `stdio` or `http`; `None` for a reference to an undefined server.
    pub transport: Option<&'static str>,
    /// Number of cached tools of this definition.
    pub cached_tools: usize,
    /// When this definition's cache was fetched.
    pub fetched_at: Option<String>,
}

fn fetched_key(digest: &str) -> String {
    format!("mcp.{digest}.fetched_at")
}

/// When the generation kept in `tools_previous` had been fetched.
fn previous_fetched_key(digest: &str) -> String {
    format!("mcp.{digest}.previous_fetched_at")
}

fn group_of(digest: &str) -> ToolGroup {
    ToolGroup {
        source: ToolSource::Mcp,
        origin: Some(digest.to_owned()),
    }
}

/// `registry_meta` key recording who last wrote a skill.
pub(crate) fn defined_by_key(skill: &SkillName) -> String {
    let key = format!("defined_by.{skill}");
    // A skill name may be 251 characters long and a key at most 255: a
    // longer key names the skill by its digest (shorter ones keep the form
    // registries already hold).
    if key.chars().count() <= agents_store::MAX_META_KEY {
        key
    } else {
        format!(
            "defined_by#{}",
            agents_core::sha256_digest(skill.as_str().as_bytes())
        )
    }
}

fn bounded(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let cut: String = text.chars().take(max).collect();
        format!("{cut}…")
    }
}

/// The catalogue name of a cached tool: `mcp:{server}@{digest12}/{tool}`.
fn cached_name(server: &str, digest: &str, tool: &str) -> String {
    format!("mcp:{server}@{}/{tool}", short_digest(digest))
}

/// The tool's own name as the server gave it.
fn tool_of(spec: &ToolSpec) -> Option<&str> {
    spec.meta_str(Meta::Tool)
}

/// The digest of one spec's cached rows as stored (canonical JSON of each,
/// in name order): what [`crate::trust::TrustStore::record_list`] keeps
/// of a list this user fetched, to tell it from one someone else wrote.
///
/// The fetch time is left out: the same list fetched again (by another of
/// this user's processes, or into another database) is the same list.
pub(crate) fn list_digest<'a>(rows: impl IntoIterator<Item = &'a ToolSpec>) -> String {
    let mut texts: Vec<(&str, String)> = rows
        .into_iter()
        .map(|row| {
            let mut value = serde_json::to_value(row).unwrap_or_default();
            if let Some(meta) = value
                .get_mut("source_metadata")
                .and_then(serde_json::Value::as_object_mut)
            {
                meta.remove(Meta::FetchedAt.as_str());
            }
            (row.name.as_str(), agents_core::canonical(&value))
        })
        .collect();
    texts.sort();
    let joined: Vec<&str> = texts.iter().map(|(_, text)| text.as_str()).collect();
    agents_core::sha256_digest(joined.join("\n").as_bytes())
}

/// The spec digest a cached row belongs to.
pub(crate) fn row_digest(row: &ToolSpec) -> Option<&str> {
    row.meta_str(Meta::SpecDigest)
}

/// A cached row back in the shape skills see: `mcp:{server}/{tool}`.
pub(crate) fn restore_cached(mut spec: ToolSpec) -> Option<(String, ToolSpec)> {
    let digest = spec.meta_str(Meta::SpecDigest)?.to_owned();
    let server = spec.meta_str(Meta::Server)?.to_owned();
    let tool = tool_of(&spec)?.to_owned();
    spec.name = format!("mcp:{server}/{tool}");
    Some((digest, spec))
}

impl SkillRegistryService {
    pub(crate) fn definition(
        &self,
        source: &McpSource,
        defined_in: &str,
        defined_by: Option<String>,
    ) -> McpDefinition {
        let digest = if defined_in == "config" {
            self.config_digest(source)
        } else {
            spec_digest(source)
        };
        let trusted = if defined_in == "config" {
            Trust::of_config_server(
                self.trust(),
                source,
                self.untrusted_config_servers().contains(&source.server),
            )
        } else {
            Trust::of_spec(self.trust(), source)
        };
        McpDefinition {
            server: source.server.clone(),
            defined_in: defined_in.to_owned(),
            defined_by,
            digest,
            trusted,
            source: source.clone(),
        }
    }

    /// Who wrote `skill`, as its row says: anyone's text, so escaped and
    /// cut to [`MAX_ECHO_BYTES`](agents_core::text::MAX_ECHO_BYTES) for
    /// every message and listing that shows it.
    pub(crate) async fn defined_by(
        &self,
        skill: &SkillName,
    ) -> Result<Option<String>, ServiceError> {
        Ok(self
            .store()
            .get_meta(&defined_by_key(skill))
            .await?
            .filter(|s| !s.is_empty())
            .map(|s| {
                agents_core::text::shorten(&s, agents_core::text::MAX_ECHO_BYTES).into_owned()
            }))
    }

    /// Every MCP server definition the registry knows, one per distinct spec:
    /// configured servers first, then specs held inline by skills (by skill
    /// name; the first skill holding a spec is where it is shown as defined).
    /// A skill row that does not decode is left out with a warning.
    pub async fn mcp_server_definitions(&self) -> Result<Vec<McpDefinition>, ServiceError> {
        let skills = self.readable_skills().await?;
        self.definitions_in(&skills).await
    }

    /// Every skill that decodes. Each row that does not is named in a
    /// warning (the first [`CORRUPT_SHOWN`], then how many more) and left
    /// out: anyone who can write the database could otherwise stop every
    /// user's registry-wide command with one bad row.
    async fn readable_skills(&self) -> Result<Vec<Skill>, ServiceError> {
        let readable = self.store().readable_skills().await?;
        for err in readable.corrupt.iter().take(CORRUPT_SHOWN) {
            tracing::warn!("{err}; that skill is left out");
        }
        if let Some(more) = readable.corrupt.len().checked_sub(CORRUPT_SHOWN)
            && more > 0
        {
            tracing::warn!("{more} more skill rows do not decode and are left out");
        }
        Ok(readable.skills)
    }

    /// [`Self::mcp_server_definitions`] over `skills`.
    async fn definitions_in(&self, skills: &[Skill]) -> Result<Vec<McpDefinition>, ServiceError> {
        let mut definitions: Vec<McpDefinition> = self
            .mcp_servers()
            .values()
            .map(|source| self.definition(source, "config", None))
            .collect();
        // A registry of thousands of servers: one probe each, not a scan.
        let mut seen: HashSet<String> = definitions.iter().map(|d| d.digest.clone()).collect();
        for skill in skills {
            for item in &skill.items {
                let SkillItem::McpSource(source) = item else {
                    continue;
                };
                if source.is_reference() {
                    continue;
                }
                let digest = spec_digest(source);
                if !seen.insert(digest) {
                    continue;
                }
                let by = self.defined_by(&skill.name).await?;
                definitions.push(self.definition(source, skill.name.as_ref(), by));
            }
        }
        Ok(definitions)
    }

    /// The definitions used by `skills` (inline, or from config for references).
    pub(crate) async fn definitions_of(
        &self,
        skills: &[Skill],
    ) -> Result<Vec<McpDefinition>, ServiceError> {
        let mut definitions: Vec<McpDefinition> = Vec::new();
        let mut seen: HashSet<String> = HashSet::new();
        for skill in skills {
            for item in &skill.items {
                let SkillItem::McpSource(source) = item else {
                    continue;
                };
                let definition = if source.is_reference() {
                    let configured = self.mcp_servers().get(&source.server).ok_or_else(|| {
                        ServiceError::UnknownMcpServer {
                            skill: skill.name.to_string(),
                            server: source.server.clone(),
                        }
                    })?;
                    self.definition(configured, "config", None)
                } else {
                    let by = self.defined_by(&skill.name).await?;
                    self.definition(source, skill.name.as_ref(), by)
                };
                if seen.insert(definition.digest.clone()) {
                    definitions.push(definition);
                }
            }
        }
        Ok(definitions)
    }

    /// Re-queries the MCP servers used by `name` and its includes (trusted
    /// ones; untrusted ones are reported, not started).
    pub async fn refresh_mcp_for_skill(
        &self,
        name: &SkillName,
        options: &FetchOptions,
    ) -> Result<Vec<McpRefresh>, ServiceError> {
        let mut skills = self
            .store()
            .load_closure(std::slice::from_ref(name))
            .await?;
        skills.sort_by(|a, b| a.name.cmp(&b.name));
        let definitions = self.definitions_of(&skills).await?;
        self.refresh_definitions(definitions, options).await
    }

    /// Re-queries every definition of the named servers (all known servers
    /// when `names` is empty); untrusted ones are reported, not started.
    pub async fn refresh_mcp(
        &self,
        names: &[String],
        options: &FetchOptions,
    ) -> Result<Vec<McpRefresh>, ServiceError> {
        let known = self.mcp_server_definitions().await?;
        let mut chosen = Vec::new();
        if names.is_empty() {
            chosen = known;
        } else {
            for name in names {
                let matching: Vec<McpDefinition> = known
                    .iter()
                    .filter(|d| &d.server == name)
                    .cloned()
                    .collect();
                if matching.is_empty() {
                    return Err(ServiceError::McpServerNotDefined {
                        server: name.clone(),
                    });
                }
                chosen.extend(matching);
            }
        }
        self.refresh_definitions(chosen, options).await
    }

    /// Fetches the tool list of every trusted MCP server definition of
    /// `set` whose server has no cached list there (`set.uncached`): what
    /// `agents mcp serve` does at start, so a server that is configured or
    /// trusted and was never queried has its tools served rather than none.
    /// Untrusted definitions are not started, and not in the outcomes; one
    /// outcome per definition fetched (its error, if the fetch failed).
    pub async fn fetch_missing_tool_lists(
        &self,
        set: &ServeSet,
        options: &FetchOptions,
    ) -> Result<Vec<McpRefresh>, ServiceError> {
        let missing: Vec<McpDefinition> = set
            .servers
            .iter()
            .filter(|d| d.trusted() && set.uncached.contains(&d.server))
            .cloned()
            .collect();
        if missing.is_empty() {
            return Ok(Vec::new());
        }
        self.refresh_definitions(missing, options).await
    }

    /// Fetches the tool list of `definition` as this user's trust store now
    /// says of it: what `agents mcp trust` offers once it trusted one.
    pub async fn fetch_definition(
        &self,
        definition: &McpDefinition,
        options: &FetchOptions,
    ) -> Result<Vec<McpRefresh>, ServiceError> {
        // Decided again, as any definition is: by the config file or the
        // trust store as they are now.
        let definition = self.definition(
            &definition.source,
            &definition.defined_in,
            definition.defined_by.clone(),
        );
        self.refresh_definitions(vec![definition], options).await
    }

    /// Whether a tool list of the definition with `digest` was ever stored.
    pub async fn tool_list_fetched(&self, digest: &str) -> Result<bool, ServiceError> {
        Ok(self.cached_at(digest).await?.is_some())
    }

    async fn cached_at(&self, digest: &str) -> Result<Option<String>, ServiceError> {
        Ok(self
            .store()
            .get_meta(&fetched_key(digest))
            .await?
            .filter(|s| !s.is_empty()))
    }

    /// Stores a tool list fetched on a session that is already open (the
    /// gateway's, after the server sent `notifications/tools/list_changed`)
    /// as `definition`'s cache, with the same drift check and one-transaction
    /// write as a refresh. An untrusted definition is refused: its server
    /// should never have been started.
    pub async fn refresh_mcp_from(
        &self,
        definition: &McpDefinition,
        fetched: FetchedTools,
    ) -> Result<McpRefresh, ServiceError> {
        if !definition.trusted() {
            return Err(ServiceError::UntrustedMcpServer {
                message: definition.untrusted_message(),
            });
        }
        self.record_fetched(definition, fetched).await
    }

    async fn record_fetched(
        &self,
        definition: &McpDefinition,
        mut fetched: FetchedTools,
    ) -> Result<McpRefresh, ServiceError> {
        let digest = definition.digest.clone();
        for (index, tool) in fetched.tools.iter_mut().enumerate() {
            // The server's order, which the resolver keeps.
            tool.set_meta(Meta::ListIndex, index);
        }
        let stamp = fetched
            .fetched_at
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        // Drift: compare with the cache this fetch replaces.
        let before = self.cached_of(&digest).await?;
        let previous_at = self.cached_at(&digest).await?;
        let changes = if before.is_empty() && previous_at.is_none() {
            Vec::new()
        } else {
            compare_tool_lists(&before, &fetched.tools)
        };
        let shown: Vec<String> = fetched.tools.iter().map(|t| t.name.clone()).collect();
        let rows: Vec<ToolSpec> = fetched
            .tools
            .into_iter()
            .map(|mut tool| {
                let own = tool_of(&tool).unwrap_or_default().to_owned();
                tool.name = cached_name(&definition.server, &digest, &own);
                tool.set_meta(Meta::SpecDigest, digest.clone());
                tool
            })
            .collect();
        let group = group_of(&digest);
        let key = fetched_key(&digest);
        let list = list_digest(&rows);
        self.forget_hint_names();
        if changes.is_empty() {
            self.store()
                .replace_tool_group(&group, &rows, &[(key.as_str(), stamp.as_str())])
                .await?;
        } else {
            let previous_key = previous_fetched_key(&digest);
            let since = previous_at.clone().unwrap_or_default();
            self.store()
                .replace_tool_group_keeping_previous(
                    &group,
                    &rows,
                    &[
                        (key.as_str(), stamp.as_str()),
                        (previous_key.as_str(), since.as_str()),
                    ],
                )
                .await?;
        }
        // Written: now remember, on this machine, what this user fetched.
        self.trust().record_list(&digest, &list)?;
        let changed_since = if changes.is_empty() {
            None
        } else {
            previous_at
        };
        Ok(McpRefresh {
            server: definition.server.clone(),
            digest,
            transport: Some(fetched.transport.as_str().to_owned()),
            tools: shown,
            rejected: fetched.rejected.iter().map(ToString::to_string).collect(),
            error: None,
            error_kind: None,
            cached_at: Some(stamp),
            changes,
            changed_since,
        })
    }

    async fn refresh_definitions(
        &self,
        definitions: Vec<McpDefinition>,
        options: &FetchOptions,
    ) -> Result<Vec<McpRefresh>, ServiceError> {
        let (trusted, untrusted): (Vec<_>, Vec<_>) = definitions
            .into_iter()
            .map(|d| (d.trusted_launch(), d))
            .partition(|(launch, _)| launch.is_some());
        let untrusted: Vec<McpDefinition> = untrusted.into_iter().map(|(_, d)| d).collect();
        // Servers are independent: query the trusted ones concurrently.
        let fetches =
            trusted
                .iter()
                .filter_map(|(launch, definition)| launch.as_ref().map(|l| (l, definition)))
                .map(|(launch, definition)| async move {
                    (definition, fetch_tools(launch, options).await)
                });
        let results = futures::future::join_all(fetches).await;
        let mut outcomes = Vec::with_capacity(results.len() + untrusted.len());
        for (definition, result) in results {
            let digest = definition.digest.clone();
            match result {
                Ok(fetched) => outcomes.push(self.record_fetched(definition, fetched).await?),
                Err(err) => {
                    // The message may quote the server's stderr: it goes to this
                    // user only, never into the shared database.
                    outcomes.push(McpRefresh {
                        server: definition.server.clone(),
                        cached_at: self.cached_at(&digest).await?,
                        digest,
                        transport: None,
                        tools: Vec::new(),
                        rejected: Vec::new(),
                        error: Some(bounded(&err.to_string(), 4000)),
                        error_kind: Some(err.kind()),
                        changes: Vec::new(),
                        changed_since: None,
                    });
                }
            }
        }
        for definition in untrusted {
            outcomes.push(McpRefresh {
                server: definition.server.clone(),
                cached_at: self.cached_at(&definition.digest).await?,
                digest: definition.digest.clone(),
                transport: None,
                tools: Vec::new(),
                rejected: Vec::new(),
                error: Some(definition.untrusted_message()),
                error_kind: Some("untrusted_mcp_server"),
                changes: Vec::new(),
                changed_since: None,
            });
        }
        Ok(outcomes)
    }

    /// Known definitions with their cache state, plus references to servers
    /// defined nowhere.
    pub async fn mcp_server_states(&self) -> Result<Vec<McpServerState>, ServiceError> {
        let skills = self.readable_skills().await?;
        let known = self.definitions_in(&skills).await?;
        let cached = self.store().list_tools(Some(ToolSource::Mcp)).await?;
        let mut states = Vec::with_capacity(known.len());
        for definition in &known {
            let cached_tools = cached
                .iter()
                .filter(|t| row_digest(t) == Some(definition.digest.as_str()))
                .count();
            let transport = if definition.source.url.is_some() {
                Some("http")
            } else {
                Some("stdio")
            };
            states.push(McpServerState {
                server: definition.server.clone(),
                defined_in: definition.defined_in.clone(),
                defined_by: definition.defined_by.clone(),
                digest: definition.digest.clone(),
                trusted: definition.trusted(),
                transport,
                cached_tools,
                fetched_at: self.cached_at(&definition.digest).await?,
            });
        }
        // References to a server that is neither configured nor inline anywhere.
        for skill in &skills {
            for item in &skill.items {
                if let SkillItem::McpSource(source) = item
                    && source.is_reference()
                    && !self.mcp_servers().contains_key(&source.server)
                    && !states.iter().any(|s| s.server == source.server)
                {
                    states.push(McpServerState {
                        server: source.server.clone(),
                        defined_in: skill.name.to_string(),
                        defined_by: None,
                        digest: String::new(),
                        trusted: false,
                        transport: None,
                        cached_tools: 0,
                        fetched_at: None,
                    });
                }
            }
        }
        Ok(states)
    }

    /// The cached tools of every definition named `server`, as skills see
    /// them (`mcp:{server}/{tool}`), with the digest each belongs to.
    pub async fn mcp_cached_tools(
        &self,
        server: &str,
    ) -> Result<Vec<(String, ToolSpec)>, ServiceError> {
        Ok(self
            .store()
            .list_tools(Some(ToolSource::Mcp))
            .await?
            .into_iter()
            .filter_map(restore_cached)
            .filter(|(_, spec)| spec.meta_str(Meta::Server) == Some(server))
            .collect())
    }

    /// The cached tools of one definition, as skills name them.
    async fn cached_of(&self, digest: &str) -> Result<Vec<ToolSpec>, ServiceError> {
        Ok(self
            .store()
            .list_tools(Some(ToolSource::Mcp))
            .await?
            .into_iter()
            .filter_map(restore_cached)
            .filter(|(d, _)| d == digest)
            .map(|(_, spec)| spec)
            .collect())
    }

    /// The last change of each cached definition named `server`: the tool
    /// list a refresh replaced (kept one generation) against the current one
    /// (`agents mcp tools SERVER --diff`).
    /// `agents mcp tools SERVER`: its cached tools, one group per
    /// definition (those of the config file first, then of skills in the
    /// order they are read, then caches no definition has any more), each
    /// naming who defines it; an error when nothing is cached and no
    /// definition of it exists.
    pub async fn mcp_server_tool_groups(
        &self,
        server: &str,
    ) -> Result<Vec<McpToolGroup>, ServiceError> {
        let cached = self.mcp_cached_tools(server).await?;
        let skills = self.readable_skills().await?;
        let mut groups: Vec<McpToolGroup> = Vec::new();
        let mut at: HashMap<String, usize> = HashMap::new();
        let mut group = |digest: String| -> usize {
            *at.entry(digest.clone()).or_insert_with(|| {
                groups.push(McpToolGroup {
                    digest,
                    defined_in: Vec::new(),
                    tools: Vec::new(),
                });
                groups.len() - 1
            })
        };
        let mut definers: Vec<(usize, String)> = Vec::new();
        if let Some(source) = self.mcp_servers().get(server) {
            definers.push((group(self.config_digest(source)), "config".to_owned()));
        }
        for skill in &skills {
            for item in &skill.items {
                if let SkillItem::McpSource(source) = item
                    && !source.is_reference()
                    && source.server == server
                {
                    definers.push((group(spec_digest(source)), skill.name.to_string()));
                }
            }
        }
        let mut tools: Vec<(usize, ToolSpec)> = Vec::with_capacity(cached.len());
        for (digest, tool) in cached {
            tools.push((group(digest), tool));
        }
        // Each once: the config file, and a skill names a server once.
        for (index, definer) in definers {
            if let Some(found) = groups.get_mut(index) {
                found.defined_in.push(definer);
            }
        }
        for (index, tool) in tools {
            if let Some(found) = groups.get_mut(index) {
                found.tools.push(tool);
            }
        }
        if groups.is_empty() {
            return Err(ServiceError::McpServerNotDefined {
                server: server.to_owned(),
            });
        }
        Ok(groups)
    }

    /// `agents mcp tools SERVER`: its cached tools; an error when nothing is
    /// cached and no definition of it exists.
    pub async fn mcp_server_tools(&self, server: &str) -> Result<Vec<ToolSpec>, ServiceError> {
        let tools: Vec<ToolSpec> = self
            .mcp_cached_tools(server)
            .await?
            .into_iter()
            .map(|(_, tool)| tool)
            .collect();
        if tools.is_empty()
            && !self
                .mcp_server_definitions()
                .await?
                .iter()
                .any(|d| d.server == server)
        {
            return Err(ServiceError::McpServerNotDefined {
                server: server.to_owned(),
            });
        }
        Ok(tools)
    }

    /// The last change of each definition's cached tools; an error when the
    /// server has neither a cache nor a definition.
    pub async fn mcp_tool_diff(&self, server: &str) -> Result<Vec<McpToolDiff>, ServiceError> {
        let mut digests: Vec<String> = Vec::new();
        for (digest, _) in self.mcp_cached_tools(server).await? {
            if !digests.contains(&digest) {
                digests.push(digest);
            }
        }
        for definition in self.mcp_server_definitions().await? {
            if definition.server == server && !digests.contains(&definition.digest) {
                digests.push(definition.digest);
            }
        }
        let mut diffs = Vec::with_capacity(digests.len());
        for digest in digests {
            let previous: Vec<ToolSpec> = self
                .store()
                .previous_tools(&group_of(&digest))
                .await?
                .into_iter()
                .filter_map(restore_cached)
                .map(|(_, spec)| spec)
                .collect();
            let previous_fetched_at = self
                .store()
                .get_meta(&previous_fetched_key(&digest))
                .await?
                .filter(|s| !s.is_empty());
            let current = self.cached_of(&digest).await?;
            let changes = if previous.is_empty() && previous_fetched_at.is_none() {
                Vec::new()
            } else {
                compare_tool_lists(&previous, &current)
            };
            diffs.push(McpToolDiff {
                server: server.to_owned(),
                fetched_at: self.cached_at(&digest).await?,
                digest,
                previous_fetched_at,
                changes,
            });
        }
        if diffs.is_empty() {
            return Err(ServiceError::McpServerNotDefined {
                server: server.to_owned(),
            });
        }
        Ok(diffs)
    }

    /// Trusts the inline MCP specs and inline tools' `run`s of `skills` for
    /// this user (they come from a file the user chose); returns the newly
    /// trusted definitions (server and tool names).
    pub fn trust_specs_of(
        &self,
        skills: &[Skill],
        reason: &str,
    ) -> Result<Vec<String>, ServiceError> {
        let runs: Vec<(String, &agents_core::RunSpec)> = skills
            .iter()
            .flat_map(|skill| {
                skill
                    .items
                    .iter()
                    .filter_map(|item| match item {
                        SkillItem::InlineTool(tool) => Some(tool.run.as_ref()),
                        _ => None,
                    })
                    .enumerate()
                    .filter_map(|(index, run)| Some((skill.inline_tool_name(index), run?)))
            })
            .collect();
        let mut added =
            self.trust_runs_of(runs.iter().map(|(name, run)| (name.as_str(), *run)), reason)?;
        let inline = skills.iter().flat_map(|skill| {
            skill.items.iter().filter_map(|item| match item {
                SkillItem::McpSource(source) if !source.is_reference() => Some(&**source),
                _ => None,
            })
        });
        added.extend(
            self.trust()
                .trust_all(inline, reason)?
                .into_iter()
                .map(|source| source.server.clone()),
        );
        Ok(added)
    }

    /// The definitions named `server` (only those whose digest starts with
    /// `digest`, when given), for `agents mcp trust` to show before it
    /// trusts any: see [`TrustReview::step`].
    pub async fn trust_review(
        &self,
        server: &str,
        digest: Option<&str>,
    ) -> Result<TrustReview, ServiceError> {
        // A digest is chosen by whoever wrote the definition: 48 bits of it
        // were found to collide with a second definition of theirs in
        // seconds, so a prefix of fewer than 128 bits trusts nothing.
        if let Some(given) = digest
            && (given.len() < TRUST_DIGEST_MIN || !given.bytes().all(|b| b.is_ascii_hexdigit()))
        {
            return Err(ServiceError::McpDigestTooShort {
                given: agents_core::text::shorten(given, 80).into_owned(),
            });
        }
        // Both are as typed, however long: shown cut.
        let shown = |text: &str, max| agents_core::text::shorten(text, max).into_owned();
        let shown_server = shown(server, agents_core::text::MAX_ECHO_BYTES);
        let known = self.mcp_server_definitions().await?;
        let (trusted, pending): (Vec<McpDefinition>, Vec<McpDefinition>) = known
            .into_iter()
            .filter(|d| d.server == server)
            .filter(|d| digest.is_none_or(|prefix| d.digest.starts_with(prefix)))
            .partition(|d| d.trusted());
        if trusted.is_empty() && pending.is_empty() {
            return Err(match digest {
                Some(prefix) => ServiceError::McpDigestNotFound {
                    server: shown_server,
                    prefix: shown(prefix, 80),
                },
                None => ServiceError::McpServerNotDefined {
                    server: shown_server,
                },
            });
        }
        let more_candidates = pending.len().saturating_sub(REVIEWED_MAX);
        // Each launch in full, as long as all of them stay within what one
        // definition may be: a database can hold any number of them.
        let mut budget = MAX_LAUNCH_BYTES;
        let candidates = pending
            .into_iter()
            .take(REVIEWED_MAX)
            .map(|definition| {
                let launch = definition.launch();
                let launch_bytes = launch.bytes();
                let shown = launch_bytes <= budget;
                if shown {
                    budget -= launch_bytes;
                }
                ReviewedDefinition {
                    definition,
                    launch: shown.then_some(launch),
                    launch_bytes,
                }
            })
            .collect();
        Ok(TrustReview {
            server: shown_server,
            candidates,
            more_candidates,
            trusted,
        })
    }

    /// Trusts `definition`, as a review showed it (its digest is of the
    /// spec shown, whatever the database holds now); false when it already
    /// was. One longer than [`MAX_LAUNCH_BYTES`] is refused: it could not
    /// have been shown.
    pub fn trust_definition(&self, definition: &McpDefinition) -> Result<bool, ServiceError> {
        let bytes = definition.launch().bytes();
        if bytes > MAX_LAUNCH_BYTES {
            return Err(ServiceError::McpLaunchTooLong {
                server: definition.shown_server(),
                definer: definition.definer(),
                bytes,
            });
        }
        let reason = format!("agents mcp trust ({})", definition.definer());
        Ok(self.trust().trust(&definition.source, &reason)?)
    }
}

impl SkillRegistryService {
    /// Removes this machine's trust in the definitions named `server` (only
    /// those whose digest starts with `digest`, when given). Removing
    /// nothing is an error: a mistyped name must not read as done.
    pub fn untrust_server(
        &self,
        server: &str,
        digest: Option<&str>,
    ) -> Result<Vec<crate::trust::TrustEntry>, ServiceError> {
        let gone = self
            .trust()
            .untrust(|e| e.server == server && digest.is_none_or(|p| e.digest.starts_with(p)))?;
        if gone.is_empty() {
            let shown = |text: &str, max| agents_core::text::shorten(text, max).into_owned();
            return Err(ServiceError::McpNotTrusted {
                server: shown(server, agents_core::text::MAX_ECHO_BYTES),
                prefix: digest.map(|p| shown(p, 80)),
            });
        }
        Ok(gone)
    }
}

/// The fewest hex digits of a definition's digest `agents mcp trust
/// --digest` accepts: 128 bits, beyond anyone's collision search.
pub const TRUST_DIGEST_MIN: usize = 32;

/// Default per-server timeout, used when config gives none.
pub const DEFAULT_MCP_TIMEOUT: Duration = Duration::from_secs(30);

impl SkillRegistryService {
    /// `skill validate --strict`: [`validate_plan`](Self::validate_plan),
    /// then every MCP server of the skills' closure is queried (an untrusted
    /// or unreachable one is an error) and must list every allow-listed
    /// tool, every `agent_sources` folder must load, and warnings count as
    /// errors.
    ///
    /// The refresh outcomes come back too: the tool lists it fetched replaced
    /// the caches, so their [`McpRefresh::drift_warnings`] are to be told.
    pub async fn validate_plan_strict(
        &self,
        plan: &agents_core::Plan,
        options: &FetchOptions,
    ) -> Result<(agents_core::PlanReport, Vec<McpRefresh>), ServiceError> {
        // The servers are refreshed before the plan is checked, so what
        // the check says of their tools is what they list now (checked
        // first, a first run failed on lists it had just fetched).
        let mut errors = Vec::new();
        let mut closure = self
            .store()
            .load_closure(&crate::service::plan_roots(plan))
            .await?;
        closure.sort_by(|a, b| a.name.cmp(&b.name));
        for skill in &closure {
            for item in &skill.items {
                if let SkillItem::AgentSource(source) = item {
                    let folder = crate::service::expand_home(&source.path, self.home());
                    if let Err(err) = agents_discovery::load_folder(&folder) {
                        errors.push(format!(
                            "skill `{}`: agent_sources `{}`: {err}",
                            skill.name, source.path
                        ));
                    }
                }
            }
        }
        let definitions = self.definitions_of(&closure).await?;
        // Outcomes come back trusted first: match them to their allow-list by digest.
        let allowed: std::collections::HashMap<String, Vec<String>> = definitions
            .iter()
            .filter_map(|d| Some((d.digest.clone(), d.source.tools.clone()?)))
            .collect();
        let outcomes = self.refresh_definitions(definitions, options).await?;
        for outcome in &outcomes {
            let allow = allowed.get(&outcome.digest);
            if let Some(err) = &outcome.error {
                // The error names the server already.
                errors.push(err.clone());
                continue;
            }
            for tool in allow.into_iter().flatten() {
                let listed = format!("mcp:{}/{tool}", outcome.server);
                if !outcome.tools.contains(&listed) {
                    errors.push(format!(
                        "mcp server `{}` does not list the allow-listed tool `{tool}`",
                        outcome.server
                    ));
                }
            }
        }
        let mut report = self.validate_plan(plan).await?;
        report.errors.extend(errors);
        let warnings = std::mem::take(&mut report.warnings);
        report.errors.extend(
            warnings
                .into_iter()
                .map(|w| format!("{w} (an error under --strict)")),
        );
        Ok((report, outcomes))
    }
}
