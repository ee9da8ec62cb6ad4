//! Skills: registering, reading, listing, updating and removing them,
//! recording who wrote them, and the registered names a mistyped one most
//! likely meant ("did you mean"). The checks a write runs over the closure
//! are [`crate::write`]'s.

use agents_core::{Skill, SkillName};
use agents_store::{SkillSummary, StoreError};

use crate::error::ServiceError;
use crate::service::SkillRegistryService;

impl SkillRegistryService {
    /// Registers one skill.
    pub async fn add_skill(&self, skill: &Skill) -> Result<Skill, ServiceError> {
        let mut added = self.add_skills(std::slice::from_ref(skill)).await?;
        added
            .pop()
            .ok_or_else(|| StoreError::SkillNotFound(skill.name.clone()).into())
    }

    /// Registers skills in one transaction: all land or none do (who wrote
    /// them too).
    pub async fn add_skills(&self, skills: &[Skill]) -> Result<Vec<Skill>, ServiceError> {
        validate_all(skills)?;
        Ok(self.write_recorded(&[], skills, &[]).await?.added(skills))
    }

    /// [`Store::write_skills`] with a `defined_by` row per written skill when
    /// this service knows who is writing, in the same transaction.
    pub(crate) async fn write_recorded(
        &self,
        tools: &[agents_core::ToolSpec],
        add: &[Skill],
        update: &[Skill],
    ) -> Result<agents_store::WriteStamps, ServiceError> {
        self.write_recorded_how(tools, add, update, Written::Directly)
            .await
    }

    /// [`Self::write_recorded`], saying how the skills arrived: an imported
    /// skill was written by whoever made the file, not by the importer, and
    /// a trust prompt must not say otherwise.
    pub(crate) async fn write_recorded_how(
        &self,
        tools: &[agents_core::ToolSpec],
        add: &[Skill],
        update: &[Skill],
        how: Written,
    ) -> Result<agents_store::WriteStamps, ServiceError> {
        let by = self.identity.as_ref().map(|identity| match how {
            Written::Directly => identity.clone(),
            Written::Imported => format!("{identity} (db import of a file from anyone)"),
        });
        let keys: Vec<(String, &str)> = match &by {
            Some(by) => add
                .iter()
                .chain(update)
                .map(|skill| (crate::mcp::defined_by_key(&skill.name), by.as_str()))
                .collect(),
            None => Vec::new(),
        };
        let meta: Vec<(&str, &str)> = keys.iter().map(|(key, by)| (key.as_str(), *by)).collect();
        Ok(self.store.write_skills(tools, add, update, &meta).await?)
    }

    /// The skill called `name`.
    pub async fn get_skill(&self, name: &SkillName) -> Result<Skill, ServiceError> {
        let found = self
            .store
            .get_skill(name)
            .await
            .map_err(ServiceError::from)
            .and_then(|skill| skill.ok_or_else(|| StoreError::SkillNotFound(name.clone()).into()));
        self.suggesting(found).await
    }

    /// The descriptions of the skills `names`, by name: a skill without
    /// one, or no longer registered, is left out (what the disclosure
    /// loader offers each included skill by).
    pub async fn skill_descriptions(
        &self,
        names: &[SkillName],
    ) -> Result<std::collections::HashMap<String, String>, ServiceError> {
        let mut out = std::collections::HashMap::with_capacity(names.len());
        for name in names {
            if let Some(description) = self
                .store
                .get_skill(name)
                .await?
                .and_then(|skill| skill.description)
            {
                out.insert(name.to_string(), description);
            }
        }
        Ok(out)
    }

    /// `raw` as a skill name. A bare short name (`assistant`) fails with the
    /// registered skills of that short name (`team/assistant`), or of the
    /// short name closest to it, as [`ServiceError::did_you_mean`].
    pub async fn skill_name(&self, raw: &str) -> Result<SkillName, ServiceError> {
        let err = match SkillName::new(raw) {
            Ok(name) => return Ok(name),
            Err(err) => ServiceError::InvalidName(err),
        };
        if raw.contains('/') {
            return Err(err);
        }
        let names = self.skill_names().await;
        fn short(name: &str) -> &str {
            name.split_once('/').map_or("", |(_, short)| short)
        }
        let mut close: Vec<String> = names
            .iter()
            .filter(|name| short(name) == raw)
            .take(crate::error::MAX_SUGGESTIONS)
            .cloned()
            .collect();
        if close.is_empty() {
            let shorts: Vec<&str> = names.iter().map(|name| short(name)).collect();
            if let Some(near) = agents_core::text::did_you_mean(raw, &shorts) {
                close = names
                    .iter()
                    .filter(|name| short(name) == near)
                    .take(crate::error::MAX_SUGGESTIONS)
                    .cloned()
                    .collect();
            }
        }
        Err(suggested(err, close))
    }

    /// Every registered skill name, sorted (what a "did you mean" picks
    /// from; none when they cannot be read: a hint is no reason to fail).
    pub(crate) async fn skill_names(&self) -> Vec<String> {
        self.store
            .list_skills(None)
            .await
            .map(|skills| skills.into_iter().map(|s| s.name.to_string()).collect())
            .unwrap_or_default()
    }

    /// `result`, its error (when it says a skill, or an included one, is not
    /// registered) with the registered names likely meant: the closest by
    /// edit distance, else those of the same short name in another
    /// namespace.
    pub(crate) async fn suggesting<T>(
        &self,
        result: Result<T, ServiceError>,
    ) -> Result<T, ServiceError> {
        let err = match result {
            Ok(value) => return Ok(value),
            Err(err) => err,
        };
        let missing = match &err {
            ServiceError::Store(StoreError::SkillNotFound(name))
            | ServiceError::Resolve(agents_core::ResolveError::SkillNotFound { name }) => {
                name.as_str()
            }
            ServiceError::Resolve(agents_core::ResolveError::MissingInclude {
                include, ..
            }) => include.as_str(),
            _ => return Err(err),
        };
        let close = closest_skills(missing, &self.skill_names().await);
        Err(suggested(err, close))
    }

    /// Skills sorted by name, optionally in one namespace.
    pub async fn list_skills(
        &self,
        namespace: Option<&str>,
    ) -> Result<Vec<SkillSummary>, ServiceError> {
        // A namespace no skill name can have is a mistake, not an empty list.
        if let Some(namespace) = namespace
            && SkillName::new(&format!("{namespace}/x")).is_err()
        {
            return Err(ServiceError::InvalidNamespace(
                agents_core::text::shorten(namespace, agents_core::text::MAX_ECHO_BYTES)
                    .into_owned(),
            ));
        }
        Ok(self.store.list_skills(namespace).await?)
    }

    /// Replaces an existing definition (see [`Store::update_skills`] for the
    /// optimistic check on `updated_at`).
    pub async fn update_skill(&self, skill: &Skill) -> Result<Skill, ServiceError> {
        let mut updated = self.update_skills(std::slice::from_ref(skill)).await?;
        updated
            .pop()
            .ok_or_else(|| StoreError::SkillNotFound(skill.name.clone()).into())
    }

    /// Replaces existing definitions in one transaction.
    pub async fn update_skills(&self, skills: &[Skill]) -> Result<Vec<Skill>, ServiceError> {
        validate_all(skills)?;
        Ok(self.write_recorded(&[], &[], skills).await?.updated(skills))
    }

    /// Deletes a skill and its items. A skill other skills include is
    /// refused unless `force`; the result names the skills the removal broke.
    pub async fn remove_skill(
        &self,
        name: &SkillName,
        force: bool,
    ) -> Result<Vec<SkillName>, ServiceError> {
        let removed = match self.store.remove_skill(name, force).await {
            Ok(Some(broken)) => Ok(broken),
            Ok(None) => Err(StoreError::SkillNotFound(name.clone()).into()),
            Err(err) => Err(err.into()),
        };
        self.suggesting(removed).await
    }
}

pub(crate) fn validate_all(skills: &[Skill]) -> Result<(), ServiceError> {
    let problems: Vec<_> = skills
        .iter()
        .flat_map(|skill| {
            let mut problems = skill.validate().err().unwrap_or_default();
            problems.extend(skill.masked_secret_problems());
            problems
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(ServiceError::InvalidSkill(problems))
    }
}

/// How written skills arrived, for their `defined_by` record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Written {
    /// From this user's own definition files.
    Directly,
    /// From an export file (`db import`), which anyone may have written.
    Imported,
}

/// The registered names of `names` likely meant by `missing`: the closest
/// by edit distance, else (at most [`crate::MAX_SUGGESTIONS`]) those with
/// its short name in another namespace.
pub(crate) fn closest_skills(missing: &str, names: &[String]) -> Vec<String> {
    if let Some(close) = agents_core::text::did_you_mean(missing, names) {
        return vec![close.to_owned()];
    }
    let Some((_, short)) = missing.split_once('/') else {
        return Vec::new();
    };
    names
        .iter()
        .filter(|name| {
            name.split_once('/')
                .is_some_and(|(_, other)| other == short)
        })
        .take(crate::error::MAX_SUGGESTIONS)
        .cloned()
        .collect()
}

/// `err` with `close` to suggest, when there is any.
pub(crate) fn suggested(err: ServiceError, close: Vec<String>) -> ServiceError {
    if close.is_empty() {
        err
    } else {
        ServiceError::Suggested {
            error: Box::new(err),
            did_you_mean: close,
        }
    }
}
