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
//!
//! The id is public (every row carries it), so it cannot tell this user's
//! rows from rows someone else wrote under it: a row is a folder path that
//! `mcp serve` reads files from and `skill prompt` tells an agent to load.
//! The scope file therefore also holds a random **key**, which never leaves
//! it: each row this scope writes carries a seal (HMAC-SHA256 of the row's
//! canonical JSON under the key), and a row whose seal does not verify is
//! not this scope's, whatever its id says.

use std::io::Read;
use std::path::{Path, PathBuf};

use agents_core::text::hex;
use agents_core::{Meta, ToolSource, ToolSpec};

/// Public prefix of discovered Agent Skills.
const PUBLIC: &str = "agent_skills/";

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
#[derive(Clone)]
pub struct DiscoveryScope {
    id: String,
    /// The key rows are sealed with (never printed).
    key: ring::hmac::Key,
}

impl std::fmt::Debug for DiscoveryScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiscoveryScope")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl PartialEq for DiscoveryScope {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Default for DiscoveryScope {
    fn default() -> Self {
        Self::new("local")
    }
}

impl DiscoveryScope {
    /// A scope with a known id (embedding and tests). Its key is derived
    /// from the id, so its seals only catch accidental edits: the CLI's scope
    /// comes from [`Self::load_or_create`], whose key is random.
    pub fn new(id: impl Into<String>) -> Self {
        let id = id.into();
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, format!("scope:{id}").as_bytes());
        Self { id, key }
    }

    fn with_key(id: &str, key: &str) -> Self {
        Self {
            id: id.to_owned(),
            key: ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key.as_bytes()),
        }
    }

    /// `~/.cleveragents/scope` under `home`.
    pub fn default_path(home: &Path) -> PathBuf {
        home.join(".cleveragents").join("scope")
    }

    /// The scope at `path` if that file exists, else a random one written
    /// nowhere: for a command that reads a registry not created yet (an
    /// empty one in memory), which creates no file; what it discovers lasts
    /// as long as the command.
    pub fn load_or_transient(path: &Path) -> Result<Self, ScopeError> {
        match std::fs::symlink_metadata(path) {
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                let fail = |err: std::io::Error| ScopeError {
                    path: path.display().to_string(),
                    message: format!("cannot make a random id: {err}"),
                };
                let id = random_id().map_err(fail)?;
                let key = random_id().map_err(fail)?;
                Ok(Self::with_key(&id, &key))
            }
            _ => Self::load_or_create(path),
        }
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
                // The key seals this user's discovery rows: one another user
                // wrote, or can read or change, seals nothing.
                let metadata = file.metadata().map_err(|err| fail("read it", err))?;
                if let Some(exposure) = agents_fs::exposure(&metadata) {
                    return Err(ScopeError {
                        path: path.display().to_string(),
                        message: format!("it is not used: {exposure}"),
                    });
                }
                let mut text = String::new();
                file.take(256)
                    .read_to_string(&mut text)
                    .map_err(|err| fail("read it", err))?;
                let mut lines = text.lines().map(str::trim);
                let id = lines.next().unwrap_or_default();
                let key = lines.next();
                let hex =
                    |text: &str| text.len() >= 8 && text.chars().all(|c| c.is_ascii_hexdigit());
                if !hex(id) || key.is_some_and(|key| !hex(key)) {
                    return Err(ScopeError {
                        path: path.display().to_string(),
                        message:
                            "expected a hexadecimal id and key (delete the file to make a new one)"
                                .into(),
                    });
                }
                match key {
                    Some(key) => {
                        // A key others may read seals nothing (a file from
                        // before seals, an id alone, is rewritten 0600 below).
                        if let Some(mode) = agents_fs::not_private(&metadata) {
                            return Err(ScopeError {
                                path: path.display().to_string(),
                                message: format!(
                                    "it is not used: other users may read its key (mode {mode:04o}; `chmod 600` it)"
                                ),
                            });
                        }
                        Ok(Self::with_key(id, key))
                    }
                    None => {
                        // A scope file from before seals: add its key. Its
                        // rows, unsealed, show again after the next discovery.
                        let key = random_id().map_err(|err| fail("make a random key", err))?;
                        agents_fs::write_atomically(
                            path,
                            format!("{id}\n{key}\n").as_bytes(),
                            agents_fs::Access::Owner,
                        )
                        .map_err(|err| fail("add a key to it", err))?;
                        Ok(Self::with_key(id, &key))
                    }
                }
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                let id = random_id().map_err(|err| fail("make a random id", err))?;
                let key = random_id().map_err(|err| fail("make a random key", err))?;
                if let Some(dir) = path.parent() {
                    agents_fs::create_dir_all(dir)
                        .map_err(|err| fail("create its directory", err))?;
                }
                // Made whole or not at all: another `agents` (or thread)
                // making it at the same time reads all of the winner's.
                if agents_fs::create_with(path, format!("{id}\n{key}\n").as_bytes())
                    .map_err(|err| fail("create it", err))?
                {
                    Ok(Self::with_key(&id, &key))
                } else if std::fs::metadata(path).is_err() {
                    // Something is there that opens as nothing (a link to
                    // nothing): reading it again would go round forever.
                    Err(ScopeError {
                        path: path.display().to_string(),
                        message: "it is a link to nothing: remove it to make a new one".into(),
                    })
                } else {
                    // Another `agents` made it first: use theirs.
                    Self::load_or_create(path)
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

    /// A discovered tool as this scope stores it: renamed, with its scope id
    /// and its seal.
    pub(crate) fn row_of(&self, mut tool: ToolSpec) -> ToolSpec {
        if let Some(stored) = self.stored_name(&tool.name) {
            tool.name = stored;
        }
        tool.set_meta(Meta::Scope, self.id.clone());
        tool.remove_meta(Meta::Seal);
        if let Some(tag) = self.seal_of(&tool) {
            tool.set_meta(Meta::Seal, hex(tag.as_ref()));
        }
        tool
    }

    /// The HMAC of `tool`'s sealed text.
    fn seal_of(&self, tool: &ToolSpec) -> Option<ring::hmac::Tag> {
        Some(ring::hmac::sign(&self.key, sealed_text(tool)?.as_bytes()))
    }

    /// Whether `tool` carries this scope's seal.
    fn sealed(&self, tool: &ToolSpec) -> bool {
        let given = tool.meta_str(Meta::Seal).and_then(unhex);
        match (given, sealed_text(tool)) {
            (Some(given), Some(text)) => {
                ring::hmac::verify(&self.key, text.as_bytes(), &given).is_ok()
            }
            _ => false,
        }
    }

    /// A stored Agent Skills row back under its public name when it belongs to
    /// this scope; `None` for other scopes' rows (and rows from before scopes).
    /// Tools of other sources pass unchanged.
    pub(crate) fn visible(&self, mut tool: ToolSpec) -> Option<ToolSpec> {
        if tool.source != ToolSource::AgentSkills {
            return Some(tool);
        }
        let mine = tool.meta_str(Meta::Scope) == Some(self.id.as_str());
        // The id is public; only the seal says this scope wrote the row.
        if !mine || !self.sealed(&tool) {
            return None;
        }
        let rest = tool.name.strip_prefix(&self.prefix())?.to_owned();
        tool.name = format!("{PUBLIC}{rest}");
        tool.remove_meta(Meta::Scope);
        tool.remove_meta(Meta::Seal);
        Some(tool)
    }

    /// `registry_meta` key recording when this scope last discovered.
    pub(crate) fn discovered_key(&self) -> String {
        format!("agent_skills.{}.discovered_at", self.id)
    }

    /// A digest of `text` under this scope's key (hex HMAC-SHA256 of
    /// `purpose`, a NUL and `text`), for a name of something of this user's
    /// that goes into the shared database: nobody without the key can
    /// confirm a guess of what it names. (A seal covers a row's JSON, which
    /// never starts with a purpose word, so the two cannot be confused.)
    pub(crate) fn keyed_digest(&self, purpose: &str, text: &str) -> String {
        let mut context = ring::hmac::Context::with_key(&self.key);
        context.update(purpose.as_bytes());
        context.update(b"\0");
        context.update(text.as_bytes());
        hex(context.sign().as_ref())
    }
}

fn random_id() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(hex(&bytes))
}

/// What a row's seal covers: its canonical JSON, the seal left out.
fn sealed_text(tool: &ToolSpec) -> Option<String> {
    let mut value = serde_json::to_value(tool).ok()?;
    if let Some(meta) = value
        .get_mut("source_metadata")
        .and_then(serde_json::Value::as_object_mut)
    {
        meta.remove(Meta::Seal.as_str());
    }
    Some(agents_core::canonical(&value))
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(text.get(at..at + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn processes_making_the_scope_at_once_all_read_one_whole_file() {
        // Each round, threads race to make the file: whoever loses must read
        // the winner's id and key, never a file made but not written yet.
        for _ in 0..40 {
            let dir = tempfile::tempdir().unwrap();
            let path = DiscoveryScope::default_path(dir.path());
            let start = std::sync::Barrier::new(8);
            let scopes: Vec<Result<DiscoveryScope, ScopeError>> = std::thread::scope(|threads| {
                let racers: Vec<_> = (0..8)
                    .map(|_| {
                        threads.spawn(|| {
                            start.wait();
                            DiscoveryScope::load_or_create(&path)
                        })
                    })
                    .collect();
                racers
                    .into_iter()
                    .map(|racer| racer.join().unwrap())
                    .collect()
            });
            let ids: Vec<String> = scopes
                .into_iter()
                .map(|scope| scope.unwrap().id().to_owned())
                .collect();
            assert!(ids.iter().all(|id| *id == ids[0]), "{ids:?}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_scope_file_linked_to_nothing_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = DiscoveryScope::default_path(dir.path());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(dir.path().join("gone"), &path).unwrap();
        let err = DiscoveryScope::load_or_create(&path).unwrap_err();
        assert!(err.message.contains("link to nothing"), "{err}");
    }

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
    fn a_row_written_under_the_scope_id_without_its_key_is_not_the_scopes() {
        let dir = tempfile::tempdir().unwrap();
        let path = DiscoveryScope::default_path(dir.path());
        let mine = DiscoveryScope::load_or_create(&path).unwrap();
        let mut tool = ToolSpec::new("agent_skills/notes", "Team notes", ToolSource::AgentSkills);
        tool.source_metadata
            .insert("path".into(), "/home/bob/skills/notes".into());
        let row = mine.row_of(tool.clone());
        assert_eq!(mine.visible(row.clone()), Some(tool.clone()));
        // Someone who read the id from the database writes a row under it,
        // or edits the path of a real one: neither verifies.
        let forged = DiscoveryScope::new(mine.id()).row_of(tool.clone());
        assert_eq!(
            forged.source_metadata["scope"],
            row.source_metadata["scope"]
        );
        assert_eq!(mine.visible(forged), None);
        let mut edited = row.clone();
        edited
            .source_metadata
            .insert("path".into(), "/home/bob/.ssh".into());
        assert_eq!(mine.visible(edited), None);
        let mut unsealed = row;
        unsealed.source_metadata.shift_remove("seal");
        assert_eq!(mine.visible(unsealed), None);
        // The key is kept: the same scope reads its rows in a later process.
        let again = DiscoveryScope::load_or_create(&path).unwrap();
        assert_eq!(again.visible(mine.row_of(tool.clone())), Some(tool));
    }

    #[test]
    fn a_scope_file_from_before_seals_gets_a_key_and_keeps_its_id() {
        let dir = tempfile::tempdir().unwrap();
        let path = DiscoveryScope::default_path(dir.path());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "0123456789abcdef0123456789abcdef\n").unwrap();
        let scope = DiscoveryScope::load_or_create(&path).unwrap();
        assert_eq!(scope.id(), "0123456789abcdef0123456789abcdef");
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0], scope.id());
        assert_eq!(lines[1].len(), 32);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
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
