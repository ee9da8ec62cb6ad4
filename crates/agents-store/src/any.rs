//! One store type for whichever backend the URL names.

use agents_core::{Skill, SkillName, ToolSource, ToolSpec};

use crate::{
    DatabaseUrl, PostgresStore, SkillSummary, SqliteStore, Store, StoreError, StoreStatus,
    ToolGroup,
};

/// A store on either backend, chosen at run time by [`open`].
#[derive(Debug, Clone)]
pub enum AnyStore {
    /// The embedded SQLite store.
    Sqlite(SqliteStore),
    /// The shared PostgreSQL store.
    Postgres(PostgresStore),
}

/// Opens the store `url` names, applying pending migrations.
pub async fn open(url: &DatabaseUrl) -> Result<AnyStore, StoreError> {
    Ok(match url {
        DatabaseUrl::Sqlite(path) => AnyStore::Sqlite(SqliteStore::open(path).await?),
        DatabaseUrl::SqliteMemory => AnyStore::Sqlite(SqliteStore::open_memory().await?),
        DatabaseUrl::Postgres(raw) => AnyStore::Postgres(PostgresStore::connect(raw).await?),
    })
}

macro_rules! delegate {
    ($self:ident, $store:ident => $call:expr) => {
        match $self {
            AnyStore::Sqlite($store) => $call.await,
            AnyStore::Postgres($store) => $call.await,
        }
    };
}

impl Store for AnyStore {
    async fn add_skills(&self, skills: &[Skill]) -> Result<Vec<Skill>, StoreError> {
        delegate!(self, store => store.add_skills(skills))
    }

    async fn update_skills(&self, skills: &[Skill]) -> Result<Vec<Skill>, StoreError> {
        delegate!(self, store => store.update_skills(skills))
    }

    async fn get_skill(&self, name: &SkillName) -> Result<Option<Skill>, StoreError> {
        delegate!(self, store => store.get_skill(name))
    }

    async fn list_skills(&self, namespace: Option<&str>) -> Result<Vec<SkillSummary>, StoreError> {
        delegate!(self, store => store.list_skills(namespace))
    }

    async fn remove_skill(&self, name: &SkillName) -> Result<bool, StoreError> {
        delegate!(self, store => store.remove_skill(name))
    }

    async fn load_closure(&self, roots: &[SkillName]) -> Result<Vec<Skill>, StoreError> {
        delegate!(self, store => store.load_closure(roots))
    }

    async fn all_skills(&self) -> Result<Vec<Skill>, StoreError> {
        delegate!(self, store => store.all_skills())
    }

    async fn put_tools(&self, tools: &[ToolSpec], replace: bool) -> Result<(), StoreError> {
        delegate!(self, store => store.put_tools(tools, replace))
    }

    async fn get_tool(&self, name: &str) -> Result<Option<ToolSpec>, StoreError> {
        delegate!(self, store => store.get_tool(name))
    }

    async fn get_tools(&self, names: &[String]) -> Result<Vec<ToolSpec>, StoreError> {
        delegate!(self, store => store.get_tools(names))
    }

    async fn list_tools(&self, source: Option<ToolSource>) -> Result<Vec<ToolSpec>, StoreError> {
        delegate!(self, store => store.list_tools(source))
    }

    async fn remove_tool(&self, name: &str) -> Result<bool, StoreError> {
        delegate!(self, store => store.remove_tool(name))
    }

    async fn replace_tool_group(
        &self,
        group: &ToolGroup,
        tools: &[ToolSpec],
    ) -> Result<u64, StoreError> {
        delegate!(self, store => store.replace_tool_group(group, tools))
    }

    async fn get_meta(&self, key: &str) -> Result<Option<String>, StoreError> {
        delegate!(self, store => store.get_meta(key))
    }

    async fn set_meta(&self, key: &str, value: &str) -> Result<(), StoreError> {
        delegate!(self, store => store.set_meta(key, value))
    }

    async fn status(&self) -> Result<StoreStatus, StoreError> {
        delegate!(self, store => store.status())
    }
}
