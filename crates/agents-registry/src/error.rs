//! Errors: why a registry operation failed ([`ServiceError`], with a stable
//! kind for scripts), and the "did you mean" names a failure carries.

use agents_core::{InvalidSkill, RegistryError, ResolveError};
use agents_store::StoreError;

/// Why a registry operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The store refused or failed (duplicate, not found, conflict, I/O, ...).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A definition breaks a rule beyond what the YAML parser checks.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    InvalidSkill(Vec<InvalidSkill>),
    /// The skill cannot be flattened.
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    /// A tool registration was refused.
    #[error(transparent)]
    Tool(#[from] RegistryError),
    /// Builtin tools live in code, not in the catalogue.
    #[error("tool `{0}` is builtin and cannot be changed or removed")]
    BuiltinTool(String),
    /// An export's `source: builtin` row names no builtin tool: builtins
    /// live in code, so the row would be dropped (it is not a custom tool).
    #[error(
        "tool `{shown}` is not a builtin tool, but its row says `source: builtin` (builtins live in code: `{}`); give it `source: custom` to import it as a custom tool",
        agents_core::Hint::ListBuiltins,
        shown = agents_core::text::shorten(.0, agents_core::text::MAX_ECHO_BYTES)
    )]
    NotBuiltin(String),
    /// An export's MCP or Agent Skills row not named in its source's
    /// namespace.
    #[error(
        "tool `{shown}` says `source: {from}` but is not named `{prefix}…`, as every {from} tool is; an export names each row so",
        shown = agents_core::text::shorten(.name, agents_core::text::MAX_ECHO_BYTES)
    )]
    MisnamedCacheRow {
        /// The row's name.
        name: String,
        /// Its source.
        from: agents_core::ToolSource,
        /// The prefix that source's names have.
        prefix: &'static str,
    },
    /// Custom tools may not use a namespace reserved for another source.
    #[error(
        "tool `{name}`: the `{prefix}` namespace is reserved for tools from its source; pick another name"
    )]
    ReservedToolName {
        /// The refused name.
        name: String,
        /// The reserved prefix it starts with.
        prefix: String,
    },
    /// `skill list --namespace` with a namespace no skill name can have.
    #[error(
        "invalid namespace `{0}`: expected the part of a skill name before `/`, 1-100 of `a-z`, `A-Z`, `0-9`, `_` or `-`"
    )]
    InvalidNamespace(String),
    /// The tool is not in the catalogue.
    #[error(
        "Tool '{shown}' is not registered{hint}",
        shown = agents_core::text::shorten(.0, agents_core::text::MAX_ECHO_BYTES),
        hint = .1
    )]
    ToolNotFound(String, Hint),
    /// An `mcp_source` names a server that is neither inline nor configured.
    #[error(
        "Skill '{skill}': MCP server '{server}' is not defined (give `command` or `url` in the item, or add `[mcp.servers.{server}]` to config.toml)"
    )]
    UnknownMcpServer {
        /// The skill holding the item.
        skill: String,
        /// The unknown server.
        server: String,
    },
    /// Agent Skills discovery failed as a whole (e.g. a conflict under `error`).
    #[error(transparent)]
    Discovery(#[from] agents_discovery::DiscoveryError),
    /// The discovery worker stopped before it finished (it panicked or was cancelled).
    #[error("discovery stopped: {0}")]
    DiscoveryStopped(String),
    /// No definition of the MCP server exists (neither in config.toml nor in any skill).
    #[error("mcp server `{server}` is not defined in config.toml or in any skill")]
    McpServerNotDefined {
        /// The server name asked for.
        server: String,
    },
    /// No definition of the MCP server has a digest with the given prefix.
    #[error("no definition of mcp server `{server}` has a digest starting with `{prefix}`")]
    McpDigestNotFound {
        /// The server name.
        server: String,
        /// The digest prefix asked for.
        prefix: String,
    },
    /// `mcp untrust` found nothing to remove: no trusted definition has the
    /// name (and the digest prefix, when given).
    #[error("no trusted definition of mcp server `{server}`{}", .prefix.as_ref().map(|p| format!(" has a digest starting with `{p}`")).unwrap_or_default())]
    McpNotTrusted {
        /// The server name (shortened).
        server: String,
        /// The digest prefix asked for (shortened).
        prefix: Option<String>,
    },
    /// A digest given to trust by is not 32 to 64 hex digits: a shorter prefix
    /// is one whose author could have made a second definition to match.
    #[error(
        "`--digest` needs at least {} hex digits of the definition's digest (the message that named the server shows all 64), got `{given}`",
        crate::mcp::TRUST_DIGEST_MIN
    )]
    McpDigestTooShort {
        /// What was given (shortened).
        given: String,
    },
    /// Several untrusted definitions share the server name: trust needs a digest.
    #[error(
        "mcp server `{server}` has {} untrusted definitions: {}{}; nothing was trusted: choose one with `{}`",
        .definitions.len() + .more,
        .definitions.join("; "),
        if *.more > 0 { format!(" and {} more", .more) } else { String::new() },
        agents_core::Hint::trust(.server, "DIGEST")
    )]
    McpAmbiguousTrust {
        /// The server name (shortened).
        server: String,
        /// Each candidate listed: its digest and who defined it.
        definitions: Vec<String>,
        /// How many more there are.
        more: usize,
    },
    /// What a definition would run is too long to be shown, so to be trusted.
    #[error(
        "mcp server `{server}` (defined in {definer}): what it would run or reach is {bytes} bytes, more than `{}` shows ({}), so it cannot be trusted; nothing was trusted (ask its writer for a shorter definition, or define the server in your config file)",
        agents_core::Hint::ReviewTrust,
        crate::trust::MAX_LAUNCH_BYTES
    )]
    McpLaunchTooLong {
        /// The server name (shortened).
        server: String,
        /// Where it is defined and by whom.
        definer: String,
        /// How long its launch is, as shown.
        bytes: usize,
    },
    /// `agents mcp trust NAME` outside a terminal, without `--digest`.
    #[error(
        "nothing was trusted: without `--digest`, `{}` trusts only after asking in a terminal; if you trust the definition shown above, run `{command}`",
        agents_core::Hint::ReviewTrust
    )]
    McpTrustNeedsDigest {
        /// The command that trusts exactly the definition shown.
        command: String,
    },
    /// The person asked said no.
    #[error("nothing was trusted")]
    McpTrustDeclined,
    /// The MCP server's definition is not trusted on this machine.
    #[error("{message}")]
    UntrustedMcpServer {
        /// What is untrusted and how to trust it.
        message: String,
    },
    /// A tool that cannot be called here: no `run`, an MCP tool, an Agent
    /// Skill, or a `run` that cannot be read.
    #[error(
        "tool `{shown}` cannot be called: {reason}",
        shown = agents_core::text::shorten(.name, agents_core::text::MAX_ECHO_BYTES)
    )]
    NotCallable {
        /// The tool.
        name: String,
        /// Why not.
        reason: String,
    },
    /// The skill's resolved set has no entry for the tool.
    #[error(
        "skill `{skill}` has no entry for tool `{shown}`",
        shown = agents_core::text::shorten(.name, agents_core::text::MAX_ECHO_BYTES)
    )]
    NotInSkill {
        /// The skill.
        skill: String,
        /// The tool.
        name: String,
    },
    /// A `run` tool whose spec this user has not trusted on this machine.
    #[error(
        "tool `{shown}` runs `{launch}`, and that `run` (digest {digest}) is not trusted on this machine, so it is not started",
        shown = agents_core::text::shorten(.name, agents_core::text::MAX_ECHO_BYTES)
    )]
    UntrustedRun {
        /// The tool.
        name: String,
        /// What it runs, one line.
        launch: String,
        /// The digest trust is keyed by.
        digest: String,
    },
    /// `tool get --body` of a tool that is not an Agent Skill.
    #[error("tool `{0}` is not an Agent Skill: only `agent_skills/...` tools have a SKILL.md body")]
    NotAnAgentSkill(String),
    /// The `SKILL.md` of a discovered Agent Skill no longer reads or validates.
    #[error("{}", strict_message_of("cannot read the SKILL.md", .0))]
    SkillMd(Vec<agents_discovery::SkillMdError>),
    /// `--strict`: the write found problems, so nothing was written.
    #[error("{}", strict_message(.0, |_, finding| finding.message.clone()))]
    Strict(Vec<crate::write::WriteFinding>),
    /// An Agent Skills folder's files cannot be digested for a lock.
    #[error(transparent)]
    AgentSkillFiles(#[from] agents_discovery::FolderDigestError),
    /// The local MCP trust store cannot be used.
    #[error(transparent)]
    Trust(#[from] crate::trust::TrustError),
    /// A skill name that does not match the name rule.
    #[error(transparent)]
    InvalidName(#[from] agents_core::InvalidSkillName),
    /// A resolution differs from the lock it is checked against
    /// ([`crate::Locked::mismatch`]).
    #[error("the resolution differs from the lock `{lock}`: {differences}")]
    LockMismatch {
        /// The lock file, as the user named it.
        lock: String,
        /// Each differing skill and what differs, on one line.
        differences: String,
    },
    /// `error` names something that is not registered (or a bare short
    /// name), and these registered names are likely what was meant; the
    /// caller shows them ([`ServiceError::did_you_mean`]).
    #[error("{error}")]
    Suggested {
        /// The failure itself.
        error: Box<ServiceError>,
        /// The registered names, closest first (at most
        /// [`MAX_SUGGESTIONS`]).
        did_you_mean: Vec<String>,
    },
}

/// The most names a "did you mean" offers.
pub const MAX_SUGGESTIONS: usize = 5;

impl ServiceError {
    /// The registered names a failure about an unknown name suggests
    /// instead (empty when none is close).
    pub fn did_you_mean(&self) -> &[String] {
        match self {
            Self::Suggested { did_you_mean, .. } => did_you_mean,
            _ => &[],
        }
    }

    /// A stable machine-readable kind, used in `--format json` errors.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Suggested { error, .. } => error.kind(),
            Self::InvalidName(err) => err.kind(),
            Self::Store(err) => err.kind(),
            Self::InvalidSkill(errors) => {
                errors.first().map_or("invalid_skill", InvalidSkill::kind)
            }
            Self::Resolve(err) => err.kind(),
            Self::Tool(err) => err.kind(),
            Self::BuiltinTool(_) => "builtin_tool",
            Self::ToolNotFound(..) | Self::NotBuiltin(_) => "tool_not_found",
            Self::MisnamedCacheRow { .. } => "invalid_tool",
            Self::InvalidNamespace(_) => "invalid_namespace",
            Self::ReservedToolName { .. } => "reserved_tool_name",
            Self::UnknownMcpServer { .. } => "unknown_mcp_server",
            Self::Discovery(err) => err.kind(),
            Self::DiscoveryStopped(_) => "discovery_stopped",
            Self::McpServerNotDefined { .. } => "mcp_server_not_defined",
            Self::McpDigestNotFound { .. } => "mcp_digest_not_found",
            Self::McpNotTrusted { .. } => "mcp_not_trusted",
            Self::McpDigestTooShort { .. } => "mcp_digest_too_short",
            Self::McpAmbiguousTrust { .. } => "mcp_ambiguous_trust",
            Self::McpLaunchTooLong { .. } => "mcp_launch_too_long",
            Self::McpTrustNeedsDigest { .. } => "mcp_trust_needs_digest",
            Self::McpTrustDeclined => "mcp_trust_declined",
            Self::UntrustedMcpServer { .. } => "untrusted_mcp_server",
            Self::NotCallable { .. } => "not_callable",
            Self::NotInSkill { .. } => "not_in_skill",
            Self::UntrustedRun { .. } => "untrusted_run",
            Self::AgentSkillFiles(err) => err.kind(),
            Self::Trust(err) => err.kind(),
            Self::Strict(_) => "strict",
            Self::NotAnAgentSkill(_) => "not_an_agent_skill",
            Self::SkillMd(_) => "invalid_skill_md",
            Self::LockMismatch { .. } => "lock_mismatch",
        }
    }
}

/// How many findings a `--strict` refusal lists before "and N more".
pub const STRICT_SHOWN: usize = 10;

/// The message of a [`ServiceError::Strict`] refusal: how many problems,
/// then up to [`STRICT_SHOWN`] of them as `show` words each (given its
/// index in `findings`; indented, and a finding shown on several lines, with
/// the line of the file it is at, indented throughout), then how many more.
/// `show` is asked only of the findings shown.
pub fn strict_message(
    findings: &[crate::write::WriteFinding],
    show: impl Fn(usize, &crate::write::WriteFinding) -> String,
) -> String {
    let plural = if findings.len() == 1 { "" } else { "s" };
    let shown: Vec<String> = findings
        .iter()
        .take(STRICT_SHOWN)
        .enumerate()
        .map(|(at, finding)| show(at, finding))
        .collect();
    let mut text = strict_message_of(
        &format!(
            "nothing written: {} problem{plural} under --strict",
            findings.len()
        ),
        &shown,
    );
    if findings.len() > STRICT_SHOWN {
        text.push_str(&format!("\n  … and {} more", findings.len() - STRICT_SHOWN));
    }
    text
}

/// `head`, then up to [`STRICT_SHOWN`] findings, one per line (the lines of
/// one indented together), then how many more.
fn strict_message_of(head: &str, warnings: &[impl ToString]) -> String {
    let mut text = head.to_owned();
    for warning in warnings.iter().take(STRICT_SHOWN) {
        text.push_str("\n  ");
        text.push_str(&warning.to_string().replace('\n', "\n  "));
    }
    if warnings.len() > STRICT_SHOWN {
        text.push_str(&format!("\n  … and {} more", warnings.len() - STRICT_SHOWN));
    }
    text
}

/// What a "not found" error adds to help: ` (did you mean 'x'?)`, or nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hint(pub Option<String>);

impl std::fmt::Display for Hint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Some(text) => write!(f, " ({text})"),
            None => Ok(()),
        }
    }
}
