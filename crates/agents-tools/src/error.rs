//! What a call can fail with: a protocol error (no such tool, arguments the
//! schema does not allow) the caller answers as a request error, or a tool
//! error (a refusal naming its rule, a failure, a timeout) it answers as a
//! result the model reads (`isError`).

use std::fmt;
use std::time::Duration;

/// A rule a path, URL or argument broke; its [`name`](Rule::name) is in the
/// message so a reader (or a model) knows which one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Rule {
    /// There are no roots, so no file, git or shell tool can run.
    NoRoots,
    /// An absolute path that is beneath none of the roots.
    OutsideRoots,
    /// A `..` that climbs above the root the path is resolved in.
    ParentDir,
    /// A symbolic link that leads out of the root (or to an absolute path).
    SymlinkEscape,
    /// A write to a file with more than one hard link: another name, maybe
    /// outside the roots, shares its contents.
    HardLink,
    /// A write to a symbolic link: the tools write regular files only.
    SymlinkWrite,
    /// A NUL byte in a path, pattern or argument the system cannot take.
    NulByte,
    /// A URL whose scheme is not `http` or `https`.
    HttpScheme,
    /// A loopback, link-local, private or otherwise non-public address.
    PrivateNetwork,
    /// More redirects than the limit.
    RedirectLimit,
    /// A git repository whose working tree is outside the roots.
    RepoOutsideRoots,
    /// An argument that git would read as an option (`-` first).
    OptionLike,
    /// A tool that writes, called through an entry overridden
    /// `read_only: true`.
    ReadOnly,
    /// A call needing the person's approval that was not given.
    ApprovalRequired,
    /// `sandbox: strict` asked of a kernel without Landlock (or Landlock
    /// failed): the call is refused, never run unconfined.
    SandboxUnavailable,
}

impl Rule {
    /// The rule's name, as messages show it.
    pub fn name(self) -> &'static str {
        match self {
            Rule::NoRoots => "no-roots",
            Rule::OutsideRoots => "outside-roots",
            Rule::ParentDir => "parent-dir",
            Rule::SymlinkEscape => "symlink-escape",
            Rule::HardLink => "hard-link",
            Rule::SymlinkWrite => "symlink-write",
            Rule::NulByte => "nul-byte",
            Rule::HttpScheme => "http-scheme",
            Rule::PrivateNetwork => "private-network",
            Rule::RedirectLimit => "redirect-limit",
            Rule::RepoOutsideRoots => "repo-outside-roots",
            Rule::OptionLike => "option-like",
            Rule::ReadOnly => "read-only",
            Rule::ApprovalRequired => "approval-required",
            Rule::SandboxUnavailable => "sandbox-unavailable",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a call gave no result. [`is_protocol`](ToolError::is_protocol)
/// tells the two kinds apart; every message is bounded (names and paths
/// from the arguments are shortened, control characters escaped).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// Protocol: no builtin has this name.
    #[error("unknown tool `{0}`")]
    UnknownTool(String),
    /// Protocol: the arguments do not fit the tool's schema.
    #[error("invalid arguments for `{tool}`: {message}")]
    InvalidArguments { tool: String, message: String },
    /// Tool: refused by a rule, before anything was read or written.
    #[error("refused by rule `{rule}`: {detail}")]
    Refused { rule: Rule, detail: String },
    /// Tool: `edit_file`'s `old` did not match exactly once.
    #[error(
        "`old` matches {count} times in `{path}`; it must match exactly once{}",
        if *.count == 0 { "" } else { " (give more of the surrounding text)" }
    )]
    Matches { path: String, count: usize },
    /// Tool: the system refused or failed an operation on `path`.
    #[error("cannot {action} `{path}`: {source}")]
    Io {
        action: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// Tool: any other failure; the message says what and where.
    #[error("{0}")]
    Failed(String),
    /// Tool: the call ran out of time; any process it started was killed
    /// with its whole process group.
    #[error("timed out after {}", seconds(*.0))]
    TimedOut(Duration),
    /// Tool: the caller cancelled the call; any process it started was
    /// killed with its whole process group.
    #[error("cancelled")]
    Cancelled,
}

fn seconds(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if secs.fract() == 0.0 {
        format!("{secs:.0} s")
    } else {
        format!("{secs:.1} s")
    }
}

impl ToolError {
    /// Whether this is a protocol error (unknown tool, invalid arguments),
    /// to answer as a request error; all others are the tool's own errors,
    /// answered as a result with `isError`.
    pub fn is_protocol(&self) -> bool {
        matches!(
            self,
            ToolError::UnknownTool(_) | ToolError::InvalidArguments { .. }
        )
    }

    /// The rule that refused the call, if one did.
    pub fn rule(&self) -> Option<Rule> {
        match self {
            ToolError::Refused { rule, .. } => Some(*rule),
            _ => None,
        }
    }

    pub(crate) fn refused(rule: Rule, detail: impl Into<String>) -> Self {
        ToolError::Refused {
            rule,
            detail: detail.into(),
        }
    }

    pub(crate) fn io(action: &'static str, path: &str, source: impl Into<std::io::Error>) -> Self {
        ToolError::Io {
            action,
            path: shown(path),
            source: source.into(),
        }
    }
}

/// How a path, pattern or name from the arguments appears in a message:
/// control characters escaped, both ends of a long one kept.
pub(crate) fn shown(text: &str) -> String {
    agents_core::text::shorten_middle(text, agents_core::text::MAX_ECHO_BYTES).into_owned()
}
