//! Discovery scopes: Agent Skills found on one machine by one user belong to
//! that user and machine only.
//!
//! `agents skill discover` stores what it finds in the registry's catalogue,
//! which a team may share. Folders are machine-local (their absolute paths mean
//! nothing elsewhere), so discovered rows are kept under a **scope**: a random
//! id created once per user and machine (`~/.cleveragents/scope`, mode 0600).
//! A scoped row is named `agent_skills@{id12}/{name}` and carries the full id as
//! `tools.origin` (see `agents_store`'s origin rule), so
//!
//! - discovery and refresh replace only their own scope (one
//!   [`agents_store::Store::replace_tool_group`] call, meta included);
//! - resolution, `tool list` and `tool get` see only this scope's rows, under
//!   their public names `agent_skills/{name}`;
//! - two users discovering on two machines keep both.
//!
//! A random id rather than `user@host`: container hosts are routinely all
//! called `localhost` and run as `root`, which would merge their scopes.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use agents_core::{ToolSource, ToolSpec};

/// Public prefix of discovered Agent Skills.
const PUBLIC: &str = "agent_skills/";

/// `source_metadata` key holding a row's scope id.
pub(crate) const SCOPE_KEY: &str = "scope";

/// Why the scope file cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("discovery scope `{path}`: {message}")]
pub struct ScopeError {
    path: String,
    message: String,
}

impl ScopeError {
    /// A stable machine-readable kind.
    pub fn kind(&self) -> &'static str {
        "discovery_scope"
    }
}

/// This user's discovery scope on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveryScope {
    id: String,
}

impl Default for DiscoveryScope {
    fn default() -> Self {
        Self::new("local")
    }
}

impl DiscoveryScope {
    /// A scope with a known id (embedding and tests).
    pub fn new(id: impl Into<String>) -> Self {
        Self { id: id.into() }
    }

    /// `~/.cleveragents/scope` under `home`.
    pub fn default_path(home: &Path) -> PathBuf {
        home.join(".cleveragents").join("scope")
    }

    /// Reads the scope id at `path`, creating a random one (mode 0600) the
    /// first time.
    pub fn load_or_create(path: &Path) -> Result<Self, ScopeError> {
        let fail = |what: &str, err: std::io::Error| ScopeError {
            path: path.display().to_string(),
            message: format!("cannot {what}: {err}"),
        };
        match std::fs::File::open(path) {
            Ok(file) => {
                let mut text = String::new();
                file.take(256)
                    .read_to_string(&mut text)
                    .map_err(|err| fail("read it", err))?;
                let id = text.trim();
                if id.len() < 8 || !id.chars().all(|c| c.is_ascii_hexdigit()) {
                    return Err(ScopeError {
                        path: path.display().to_string(),
                        message: "expected a hexadecimal id (delete the file to make a new one)"
                            .into(),
                    });
                }
                Ok(Self::new(id))
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                let id = random_id().map_err(|err| fail("make a random id", err))?;
                if let Some(dir) = path.parent() {
                    agents_fs::create_dir_all(dir)
                        .map_err(|err| fail("create its directory", err))?;
                }
                match agents_fs::open_options()
                    .write(true)
                    .create_new(true)
                    .open(path)
                {
                    Ok(mut file) => {
                        file.write_all(format!("{id}\n").as_bytes())
                            .and_then(|()| file.sync_all())
                            .map_err(|err| fail("write it", err))?;
                        Ok(Self::new(id))
                    }
                    // Another `agents` made it first: use theirs.
                    Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
                        Self::load_or_create(path)
                    }
                    Err(err) => Err(fail("create it", err)),
                }
            }
            Err(err) => Err(fail("read it", err)),
        }
    }

    /// The full id (`tools.origin` of this scope's rows).
    pub fn id(&self) -> &str {
        &self.id
    }

    fn prefix(&self) -> String {
        let short: String = self.id.chars().take(12).collect();
        format!("agent_skills@{short}/")
    }

    /// The stored row name of a public `agent_skills/…` name; other names
    /// are stored as they are.
    pub(crate) fn stored_name(&self, name: &str) -> Option<String> {
        name.strip_prefix(PUBLIC)
            .map(|rest| format!("{}{rest}", self.prefix()))
    }

    /// A discovered tool as this scope stores it.
    pub(crate) fn row_of(&self, mut tool: ToolSpec) -> ToolSpec {
        if let Some(stored) = self.stored_name(&tool.name) {
            tool.name = stored;
        }
        tool.source_metadata
            .insert(SCOPE_KEY.into(), self.id.clone().into());
        tool
    }

    /// A stored Agent Skills row back under its public name when it belongs to
    /// this scope; `None` for other scopes' rows (and rows from before scopes).
    /// Tools of other sources pass unchanged.
    pub(crate) fn visible(&self, mut tool: ToolSpec) -> Option<ToolSpec> {
        if tool.source != ToolSource::AgentSkills {
            return Some(tool);
        }
        let mine =
            tool.source_metadata.get(SCOPE_KEY).and_then(|v| v.as_str()) == Some(self.id.as_str());
        if !mine {
            return None;
        }
        let rest = tool.name.strip_prefix(&self.prefix())?.to_owned();
        tool.name = format!("{PUBLIC}{rest}");
        tool.source_metadata.remove(SCOPE_KEY);
        Some(tool)
    }

    /// `registry_meta` key recording when this scope last discovered.
    pub(crate) fn discovered_key(&self) -> String {
        format!("agent_skills.{}.discovered_at", self.id)
    }
}

fn random_id() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip_only_in_their_own_scope() {
        let mine = DiscoveryScope::new("aaaaaaaaaaaaaaaa");
        let theirs = DiscoveryScope::new("bbbbbbbbbbbbbbbb");
        let tool = ToolSpec::new("agent_skills/pdf", "x", ToolSource::AgentSkills);
        let row = mine.row_of(tool.clone());
        assert_eq!(row.name, "agent_skills@aaaaaaaaaaaa/pdf");
        assert_eq!(mine.visible(row.clone()), Some(tool.clone()));
        assert_eq!(theirs.visible(row), None);
        // A row from before scopes belongs to nobody.
        assert_eq!(mine.visible(tool), None);
        let custom = ToolSpec::new("custom/x", "x", ToolSource::Custom);
        assert_eq!(mine.visible(custom.clone()), Some(custom));
    }

    #[test]
    fn the_scope_file_is_created_once_with_mode_0600() {
        let dir = tempfile::tempdir().unwrap();
        let path = DiscoveryScope::default_path(dir.path());
        let first = DiscoveryScope::load_or_create(&path).unwrap();
        let again = DiscoveryScope::load_or_create(&path).unwrap();
        assert_eq!(first, again);
        assert_eq!(first.id().len(), 32);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        let other = tempfile::tempdir().unwrap();
        let elsewhere =
            DiscoveryScope::load_or_create(&DiscoveryScope::default_path(other.path())).unwrap();
        assert_ne!(first, elsewhere);
        std::fs::write(&path, "not hex\n").unwrap();
        let err = DiscoveryScope::load_or_create(&path).unwrap_err();
        assert!(err.to_string().contains("hexadecimal"), "{err}");
    }
}
