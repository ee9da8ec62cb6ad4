//! The files of the served Agent Skills as the gateway answers for them
//! (`resources/list`, `resources/read`, `skills/list`, `skills/get`): read
//! at request time, bounded, and under a lock served only while the folder
//! is what the lock recorded.

use rmcp::ErrorData;
use rmcp::model::{ReadResourceResult, Resource, Skill};

use crate::{Gateway, ServedSkill, SkillFileError, lock, skills};

impl Gateway {
    pub(crate) fn skill(&self, name: &str) -> Option<ServedSkill> {
        self.serving()
            .skills
            .iter()
            .find(|s| s.name == name)
            .cloned()
    }

    /// The `resources/list` entries: every served file of every Agent Skill
    /// (a folder that cannot be read, or under a lock no longer matches it,
    /// is logged and left out).
    pub fn skill_resources(&self) -> Vec<Resource> {
        let mut out = Vec::new();
        for skill in &self.serving().skills {
            if self.folder_check(skill).is_err() {
                // Logged by the check, once.
                continue;
            }
            match skill.resources() {
                Ok(resources) => out.extend(resources),
                Err(err) => tracing::warn!("mcp serve: skill `{}`: {err}", skill.name),
            }
        }
        out
    }

    /// The `skills/list` entries (a skill that cannot be read, breaks a
    /// SEP-2640 rule or under a lock no longer matches it is logged and left
    /// out).
    pub fn skill_manifests(&self) -> Vec<Skill> {
        let mut out = Vec::new();
        for skill in &self.serving().skills {
            match self.checked_manifest(skill) {
                Ok(manifest) => out.push(manifest),
                // Logged by the check, once.
                Err(SkillFileError::Refused(_)) => {}
                Err(err) => tracing::warn!("mcp serve: skill `{}`: {err}", skill.name),
            }
        }
        out
    }

    /// The manifest of `skill`, under a lock only when its folder is what
    /// the lock recorded and every file listed has the digest checked.
    pub(crate) fn checked_manifest(&self, skill: &ServedSkill) -> Result<Skill, SkillFileError> {
        let checked = self.folder_check(skill)?;
        let manifest = skill.manifest()?;
        if let (Some(files), rmcp::model::SkillResources::Files(listed)) =
            (&checked, &manifest.resources)
        {
            for file in listed {
                let relative = skills::split_uri(&file.uri).map_or("", |(_, relative)| relative);
                if !is_checked(files, relative, &file.digest) {
                    return Err(self.refused_skill(skill, &changed_while_read(relative)));
                }
            }
        }
        Ok(manifest)
    }

    /// One `resources/read`, read from the folder now (under a lock, only
    /// when the folder, and the bytes read, are what the lock recorded).
    pub fn read_skill_file(&self, uri: &str) -> Result<ReadResourceResult, SkillFileError> {
        let (name, relative) = skills::split_uri(uri).ok_or(SkillFileError::NotFound)?;
        let skill = self.skill(name).ok_or(SkillFileError::NotFound)?;
        let checked = self.folder_check(&skill)?;
        let bytes = skill.read(relative)?;
        if let Some(files) = &checked
            && !is_checked(files, relative, &agents_core::sha256_digest(&bytes))
        {
            // Changed between the check and the read.
            return Err(self.refused_skill(&skill, &changed_while_read(relative)));
        }
        Ok(skills::contents(uri, relative, bytes))
    }

    /// Whether the files of `skill` may be served: `Ok(None)` without a
    /// lock; under one `Ok(Some(digests))` (each file's, as checked) when
    /// its entry is not among those a re-resolution found differing and its
    /// folder is what the lock recorded (its files are read at request
    /// time, not when the skills were resolved), else why not.
    pub(crate) fn folder_check(
        &self,
        skill: &ServedSkill,
    ) -> Result<Option<std::collections::BTreeMap<String, String>>, SkillFileError> {
        let Some(locked) = self.shared.locked.as_ref() else {
            return Ok(None);
        };
        let recorded = lock(&locked.drift).entries.get(&skill.entry).cloned();
        let outcome = match recorded {
            Some(what) => Err(what),
            None => match skill.lock_digests() {
                Err(err) => Err(format!("its folder cannot be checked: {err}")),
                Ok((digest, files)) => match locked.folders.get(&skill.entry) {
                    Some(recorded) if !recorded.is_empty() => {
                        if recorded.iter().all(|r| *r == digest) {
                            Ok(files)
                        } else {
                            Err("the files of its folder changed".to_owned())
                        }
                    }
                    _ => Err("the lock records no files of it".to_owned()),
                },
            },
        };
        let mut refused = lock(&locked.refused_folders);
        match outcome {
            Ok(files) => {
                if refused.remove(&skill.entry) {
                    tracing::warn!(
                        "mcp serve: Agent Skill `{}` matches the lock `{}` again; serving its files",
                        agents_core::text::escape_control(&skill.name),
                        locked.file
                    );
                }
                Ok(Some(files))
            }
            Err(what) => {
                let err = self.refused_skill(skill, &what);
                if refused.insert(skill.entry.clone()) {
                    tracing::warn!("mcp serve: {err}");
                }
                Err(err)
            }
        }
    }

    /// Why the files of `skill` are refused: `what` of it differs from the
    /// lock (a `resources/read` answer, and the log's line).
    fn refused_skill(&self, skill: &ServedSkill, what: &str) -> SkillFileError {
        let file = self
            .shared
            .locked
            .as_ref()
            .map_or("", |locked| locked.file.as_str());
        SkillFileError::Refused(format!(
            "Agent Skill `{}` (`{}`) is refused: it no longer matches the lock `{file}` ({}), so \
             its files are not what was reviewed; review the change (`{}`), then lock again or \
             undo it",
            agents_core::text::escape_control(&skill.name),
            agents_core::text::escape_control(&skill.entry),
            agents_core::text::escape_control(what),
            agents_core::Hint::DiffLock {
                lock: file.to_owned()
            },
        ))
    }

    /// Runs `work` (reading skill folders: `skills/list` reads and hashes
    /// every served file, up to 256 × 4 MiB a skill) on a blocking thread,
    /// so the async workers keep answering other requests meanwhile.
    pub(crate) async fn off_runtime<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Gateway) -> T + Send + 'static,
    ) -> Result<T, ErrorData> {
        let gateway = self.clone();
        tokio::task::spawn_blocking(move || work(&gateway))
            .await
            .map_err(|err| {
                ErrorData::internal_error(format!("reading the skill folders failed: {err}"), None)
            })
    }
}

/// Whether `digest` is what `files` (a folder's digests as checked against
/// a lock) holds for `relative`. A file the folder's digest covers under
/// another path (a directory reached through a link is digested under the
/// first path to it) is checked against every digest.
fn is_checked(
    files: &std::collections::BTreeMap<String, String>,
    relative: &str,
    digest: &str,
) -> bool {
    files.get(relative).map_or_else(
        || files.values().any(|d| d == digest),
        |locked| locked == digest,
    )
}

/// A file of a checked folder whose bytes were not those checked.
fn changed_while_read(relative: &str) -> String {
    format!(
        "its file `{}` changed as it was read",
        agents_core::text::shorten(relative, agents_core::text::MAX_ECHO_BYTES)
    )
}
