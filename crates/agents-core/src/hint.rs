//! Hints as data: what a message advises doing next (refresh a server's
//! tool list, trust a definition, discover, lock again, …), held as a
//! [`Hint`] rather than written as a command of one front end. A front end
//! installs a renderer once ([`set_renderer`]: the CLI renders each hint as
//! its `agents …` command line); without one, a hint reads as a neutral
//! description of the operation ([`Hint::describe`]). Messages show a hint
//! through its `Display`, which asks the renderer.

use std::sync::OnceLock;

/// What a message advises doing next.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "hint", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Hint {
    /// Fetch an MCP server's tool list again.
    Refresh {
        /// The server, as configured or defined in a skill.
        server: String,
    },
    /// Trust exactly one definition of an MCP server (its words as a shell
    /// reads them: the caller quotes what needs it).
    Trust {
        /// The server name.
        server: String,
        /// The definition's digest (or a placeholder for one).
        digest: String,
    },
    /// Review (and trust) MCP server definitions, with nothing named.
    ReviewTrust,
    /// Scan the configured Agent Skills folders.
    Discover,
    /// Scan the Agent Skills folders given (every folder scanned).
    DiscoverPaths,
    /// Write the lock file again.
    LockAgain,
    /// Compare the skills with the lock file `lock`.
    DiffLock {
        /// The lock file, as given.
        lock: String,
    },
    /// Create the registry.
    CreateRegistry,
    /// Write a skill (which creates the registry too).
    AddSkill,
    /// List the builtin tools.
    ListBuiltins,
    /// Validate the skills one by one.
    ValidateSkills,
    /// Print a skill (secrets masked).
    GetSkill,
    /// Print a skill with its secrets.
    ShowSecrets,
}

impl Hint {
    /// [`Hint::Refresh`] of `server`.
    pub fn refresh(server: &str) -> Self {
        Self::Refresh {
            server: server.to_owned(),
        }
    }

    /// [`Hint::Trust`] of `server`'s definition with `digest`.
    pub fn trust(server: &str, digest: &str) -> Self {
        Self::Trust {
            server: server.to_owned(),
            digest: digest.to_owned(),
        }
    }

    /// The operation in words, for a reader without a front end's
    /// commands (what [`Display`](std::fmt::Display) shows when no renderer
    /// is installed).
    pub fn describe(&self) -> String {
        match self {
            Self::Refresh { server } => format!("refresh mcp server {server}"),
            Self::Trust { server, digest } => {
                format!("trust mcp server {server} with digest {digest}")
            }
            Self::ReviewTrust => "the trust review".to_owned(),
            Self::Discover => "discover Agent Skills".to_owned(),
            Self::DiscoverPaths => "discover Agent Skills in folders".to_owned(),
            Self::LockAgain => "lock the skills".to_owned(),
            Self::DiffLock { lock } => format!("compare the skill with the lock {lock}"),
            Self::CreateRegistry => "create the registry".to_owned(),
            Self::AddSkill => "add a skill".to_owned(),
            Self::ListBuiltins => "list the builtin tools".to_owned(),
            Self::ValidateSkills => "validate the skills".to_owned(),
            Self::GetSkill => "print a skill".to_owned(),
            Self::ShowSecrets => "print a skill with its secrets".to_owned(),
        }
    }
}

/// How a front end words hints.
pub type Renderer = fn(&Hint) -> String;

static RENDERER: OnceLock<Renderer> = OnceLock::new();

/// Words every hint shown from now on with `render` (once per process: a
/// second call is ignored and returns false).
pub fn set_renderer(render: Renderer) -> bool {
    RENDERER.set(render).is_ok()
}

impl std::fmt::Display for Hint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match RENDERER.get() {
            Some(render) => f.write_str(&render(self)),
            None => f.write_str(&self.describe()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Hint;

    /// Without a front end's renderer, a hint names the operation, never a
    /// program's command.
    #[test]
    fn a_hint_without_a_renderer_is_described() {
        let refresh = Hint::Refresh {
            server: "gh".into(),
        };
        assert_eq!(refresh.to_string(), "refresh mcp server gh");
        for hint in [
            refresh,
            Hint::LockAgain,
            Hint::CreateRegistry,
            Hint::Discover,
            Hint::ReviewTrust,
            Hint::DiffLock {
                lock: "skills.lock".into(),
            },
        ] {
            assert!(!hint.to_string().contains("agents "), "{hint}");
        }
    }
}
