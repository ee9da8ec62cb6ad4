//! Persistent storage for skills and the tool catalogue.
//!
//! [`Store`] is the storage contract: it speaks in core types ([`Skill`],
//! [`ToolSpec`]) and holds no SQL. Its logic is written once (`engine.rs`)
//! and runs on two backends, whose differences (placeholders, bulk insert,
//! locking, the closure CTE, the migrations folder) are one `Dialect` and
//! a few binding functions each:
//!
//! - [`SqliteStore`]: the embedded default (one file, WAL, busy timeout);
//! - [`PostgresStore`]: the shared store for teams.
//!
//! [`open`] picks the backend from a database URL. Every write method is one
//! transaction: it lands whole or not at all.

// Library code returns errors; it does not panic on what it is given.
#![deny(clippy::panic, clippy::indexing_slicing)]

mod any;
mod codec;
mod engine;
mod error;
mod migrate;
mod postgres;
mod sql;
mod sqlite;
mod url;

use std::future::Future;

use agents_core::{Skill, SkillName, ToolSource, ToolSpec};

pub use any::{AnyStore, create, open, open_existing};
pub use codec::MAX_META_KEY;
pub(crate) use error::db_error;
pub use error::{DriverError, StoreError, names_bounded};
pub use postgres::PostgresStore;
pub use sqlite::SqliteStore;
pub use url::DatabaseUrl;

/// A short row of `agents skill list`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SkillSummary {
    /// Full name.
    pub name: SkillName,
    /// Namespace part.
    pub namespace: String,
    /// Short-name part.
    pub short_name: String,
    /// Description, if any.
    pub description: Option<String>,
    /// Version, if any.
    pub version: Option<String>,
    /// Number of items.
    pub items: u64,
    /// ISO-8601 UTC.
    pub updated_at: String,
}

/// What [`Store::readable_skills`] found: the skills that decode, by name,
/// and one [`StoreError::Corrupt`] (or other decoding error) per row that
/// does not.
#[derive(Debug, Default)]
pub struct Readable {
    /// The skills that decode, sorted by name.
    pub skills: Vec<Skill>,
    /// Why each other row was left out.
    pub corrupt: Vec<StoreError>,
}

/// Which tools a [`Store::replace_tool_group`] call replaces: all tools of
/// `source`, narrowed to one `origin` (an MCP launch-spec digest, a discovery
/// scope) when given.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ToolGroup {
    /// The source whose tools are replaced.
    pub source: ToolSource,
    /// The MCP server (or other origin key) within the source.
    pub origin: Option<String>,
}

impl ToolGroup {
    /// The group `tool` is stored in (its source, and the `tools.origin` it
    /// gets: an MCP tool's launch-spec digest, an Agent Skill's discovery
    /// scope, none for a custom tool).
    pub fn of(tool: &ToolSpec) -> Self {
        Self {
            source: tool.source,
            origin: codec::tool_origin(tool),
        }
    }
}

/// What [`Store::status`] reports.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StoreStatus {
    /// `sqlite` or `postgres`.
    pub backend: &'static str,
    /// Where the data lives, with any password removed.
    pub location: String,
    /// Applied schema version.
    pub schema_version: i64,
    /// Newest schema version this build knows.
    pub supported_version: i64,
    /// Rows in `skills`.
    pub skills: u64,
    /// Rows in `skill_items`.
    pub skill_items: u64,
    /// Rows in `tools`.
    pub tools: u64,
}

/// The timestamps [`Store::write_skills`] gave what it wrote. A write returns
/// these rather than copies of the skills, so a file of many skills is not
/// held twice; [`WriteStamps::added`] and [`WriteStamps::updated`] make the
/// copies for a caller that wants them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WriteStamps {
    /// `created_at` (and `updated_at`) of every added skill.
    pub added_at: String,
    /// `(created_at, updated_at)` of each updated skill, in input order.
    pub updated: Vec<(String, String)>,
}

impl WriteStamps {
    /// `add` (the skills given to the write) as stored.
    pub fn added(&self, add: &[Skill]) -> Vec<Skill> {
        add.iter()
            .map(|skill| Skill {
                created_at: Some(self.added_at.clone()),
                updated_at: Some(self.added_at.clone()),
                ..skill.clone()
            })
            .collect()
    }

    /// `update` (the skills given to the write) as stored.
    pub fn updated(&self, update: &[Skill]) -> Vec<Skill> {
        update
            .iter()
            .zip(&self.updated)
            .map(|(skill, (created_at, updated_at))| Skill {
                created_at: Some(created_at.clone()),
                updated_at: Some(updated_at.clone()),
                ..skill.clone()
            })
            .collect()
    }
}

/// The storage contract, implemented once for both backends.
///
/// Timestamps are the store's business: `created_at` is set on add and kept
/// on update, `updated_at` is set on every write and is strictly increasing
/// per skill, so it doubles as the optimistic-concurrency token.
pub trait Store: Send + Sync {
    /// Adds all `skills` in one transaction. Fails with
    /// [`StoreError::DuplicateSkill`] (naming the first taken name, also a name
    /// repeated within `skills`) and then stores none of them. Returns the
    /// skills as stored (with timestamps).
    fn add_skills(
        &self,
        skills: &[Skill],
    ) -> impl Future<Output = Result<Vec<Skill>, StoreError>> + Send;

    /// Replaces existing definitions in one transaction, keeping `created_at`.
    /// A skill whose `updated_at` is `Some` must still have that `updated_at`
    /// in the store, otherwise the call fails with [`StoreError::Conflict`];
    /// `None` means "whatever is there now". A missing skill fails with
    /// [`StoreError::SkillNotFound`]. Either way nothing is written.
    fn update_skills(
        &self,
        skills: &[Skill],
    ) -> impl Future<Output = Result<Vec<Skill>, StoreError>> + Send;

    /// The skill called `name`, with its items in `item_order`.
    fn get_skill(
        &self,
        name: &SkillName,
    ) -> impl Future<Output = Result<Option<Skill>, StoreError>> + Send;

    /// Skills sorted by name, optionally only those in `namespace`.
    fn list_skills(
        &self,
        namespace: Option<&str>,
    ) -> impl Future<Output = Result<Vec<SkillSummary>, StoreError>> + Send;

    /// Deletes the skill and (by cascade) its items; `None` when absent.
    /// While other skills include it, `force` false fails with
    /// [`StoreError::SkillIncluded`] and nothing is written; `force` true
    /// deletes it anyway. `Some` holds the skills that include it (sorted,
    /// itself left out), which are broken from then on. The check and the
    /// delete are one transaction, so an include committed before is always
    /// seen, and so is one a concurrent [`Store::write_skills`] has written
    /// but not committed (the removal waits for it: a write locks the
    /// skills it includes). A write that comes after the delete is not
    /// refused: an include of a missing skill is allowed.
    fn remove_skill(
        &self,
        name: &SkillName,
        force: bool,
    ) -> impl Future<Output = Result<Option<Vec<SkillName>>, StoreError>> + Send;

    /// The given skills and every skill reachable through their includes, in
    /// a bounded number of queries (not one per skill). Missing names are
    /// simply absent from the result.
    fn load_closure(
        &self,
        roots: &[SkillName],
    ) -> impl Future<Output = Result<Vec<Skill>, StoreError>> + Send;

    /// Every skill with its items, sorted by name (for export: one row that
    /// does not decode fails the whole read).
    fn all_skills(&self) -> impl Future<Output = Result<Vec<Skill>, StoreError>> + Send;

    /// Every skill that decodes, sorted by name, and the error of each that
    /// does not: for a listing across the registry, which shows the rest
    /// rather than fail for everyone over one row somebody wrote badly.
    fn readable_skills(&self) -> impl Future<Output = Result<Readable, StoreError>> + Send;

    /// Adds tools in one transaction. With `replace` false a taken name fails
    /// with [`StoreError::DuplicateTool`] and nothing is written.
    fn put_tools(
        &self,
        tools: &[ToolSpec],
        replace: bool,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// The tool called `name`.
    fn get_tool(
        &self,
        name: &str,
    ) -> impl Future<Output = Result<Option<ToolSpec>, StoreError>> + Send;

    /// The tools called `names` (those that exist), in one query.
    fn get_tools(
        &self,
        names: &[String],
    ) -> impl Future<Output = Result<Vec<ToolSpec>, StoreError>> + Send;

    /// Every tool, sorted by name (for export: one row that does not decode
    /// fails the whole read).
    fn all_tools(&self) -> impl Future<Output = Result<Vec<ToolSpec>, StoreError>> + Send;

    /// Tools sorted by name, optionally of one source only. A row that does
    /// not decode is left out with a warning, here and in
    /// [`Self::get_tools`]: a listing goes on for everyone over one bad row.
    fn list_tools(
        &self,
        source: Option<ToolSource>,
    ) -> impl Future<Output = Result<Vec<ToolSpec>, StoreError>> + Send;

    /// Deletes the tool stored as `name`; `None` when absent. `Some` holds
    /// the skills (sorted) whose tool refs name it as `named_as` (the name
    /// skills write; a discovered tool is stored under its scope's name):
    /// their tool sets warn about an unknown tool from then on.
    fn remove_tool(
        &self,
        name: &str,
        named_as: &str,
    ) -> impl Future<Output = Result<Option<Vec<SkillName>>, StoreError>> + Send;

    /// In one transaction, deletes every tool of `group`, inserts `tools`
    /// (which replace same-named tools of any source) and upserts the
    /// `registry_meta` rows `meta` (such as when the group was fetched). Used
    /// by discovery and MCP refresh so a failure leaves the old catalogue and
    /// its meta intact. Returns how many tools were deleted.
    fn replace_tool_group(
        &self,
        group: &ToolGroup,
        tools: &[ToolSpec],
        meta: &[(&str, &str)],
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// [`Store::replace_tool_group`] that first keeps the group's current
    /// rows as its previous generation (replacing the one kept before), in
    /// the same transaction: a refresh that changed the group calls this.
    fn replace_tool_group_keeping_previous(
        &self,
        group: &ToolGroup,
        tools: &[ToolSpec],
        meta: &[(&str, &str)],
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// The previous generation of `group` (sorted by name); empty when none was kept.
    fn previous_tools(
        &self,
        group: &ToolGroup,
    ) -> impl Future<Output = Result<Vec<ToolSpec>, StoreError>> + Send;

    /// A value from the small key/value `registry_meta` table.
    fn get_meta(
        &self,
        key: &str,
    ) -> impl Future<Output = Result<Option<String>, StoreError>> + Send;

    /// Sets a `registry_meta` value.
    fn set_meta(
        &self,
        key: &str,
        value: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// In one transaction, writes catalogue `tools` (replacing same-named
    /// ones) and adds `skills` (as [`Store::add_skills`]): an import that
    /// fails on a taken skill name leaves no tool behind.
    fn import(
        &self,
        tools: &[ToolSpec],
        skills: &[Skill],
    ) -> impl Future<Output = Result<Vec<Skill>, StoreError>> + Send;

    /// In one transaction: upserts catalogue `tools`, adds `add` (as
    /// [`Store::add_skills`]), replaces `update` (as
    /// [`Store::update_skills`]) and upserts the `registry_meta` rows `meta`
    /// (such as who wrote each skill); all land or none do. Returns the
    /// timestamps the skills were given. The rows are encoded and inserted a
    /// statement's worth at a time, so the write holds little beyond `add`.
    fn write_skills(
        &self,
        tools: &[ToolSpec],
        add: &[Skill],
        update: &[Skill],
        meta: &[(&str, &str)],
    ) -> impl Future<Output = Result<WriteStamps, StoreError>> + Send;

    /// Backend, schema version and row counts.
    fn status(&self) -> impl Future<Output = Result<StoreStatus, StoreError>> + Send;

    /// A cheap fingerprint of the whole registry (one query over indexed
    /// columns: row counts and the latest `updated_at` of skills and tools,
    /// the item count and the latest `registry_meta` value): it changes when a
    /// skill is added, updated or removed and when the catalogue is written
    /// (tool add/remove, discovery, MCP refresh). Equal stamps mean "probably
    /// unchanged"; callers re-read to learn what changed.
    fn change_stamp(&self) -> impl Future<Output = Result<String, StoreError>> + Send;
}

/// Implements [`Store`] for a type by handing every call to the engine that
/// `$engine` (a method of the type) returns.
macro_rules! store_via_engine {
    ($type:ty, $engine:ident) => {
        impl $crate::Store for $type {
            async fn add_skills(&self, skills: &[Skill]) -> Result<Vec<Skill>, StoreError> {
                self.$engine().add_skills(skills).await
            }
            async fn update_skills(&self, skills: &[Skill]) -> Result<Vec<Skill>, StoreError> {
                self.$engine().update_skills(skills).await
            }
            async fn get_skill(&self, name: &SkillName) -> Result<Option<Skill>, StoreError> {
                self.$engine().get_skill(name).await
            }
            async fn list_skills(
                &self,
                namespace: Option<&str>,
            ) -> Result<Vec<SkillSummary>, StoreError> {
                self.$engine().list_skills(namespace).await
            }
            async fn remove_skill(
                &self,
                name: &SkillName,
                force: bool,
            ) -> Result<Option<Vec<SkillName>>, StoreError> {
                self.$engine().remove_skill(name, force).await
            }
            async fn load_closure(&self, roots: &[SkillName]) -> Result<Vec<Skill>, StoreError> {
                self.$engine().load_closure(roots).await
            }
            async fn all_skills(&self) -> Result<Vec<Skill>, StoreError> {
                self.$engine().all_skills().await
            }
            async fn readable_skills(&self) -> Result<Readable, StoreError> {
                self.$engine().readable_skills().await
            }
            async fn put_tools(&self, tools: &[ToolSpec], replace: bool) -> Result<(), StoreError> {
                self.$engine().put_tools(tools, replace).await
            }
            async fn get_tool(&self, name: &str) -> Result<Option<ToolSpec>, StoreError> {
                self.$engine().get_tool(name).await
            }
            async fn get_tools(&self, names: &[String]) -> Result<Vec<ToolSpec>, StoreError> {
                self.$engine().get_tools(names).await
            }
            async fn all_tools(&self) -> Result<Vec<ToolSpec>, StoreError> {
                self.$engine().all_tools().await
            }
            async fn list_tools(
                &self,
                source: Option<ToolSource>,
            ) -> Result<Vec<ToolSpec>, StoreError> {
                self.$engine().list_tools(source).await
            }
            async fn remove_tool(
                &self,
                name: &str,
                named_as: &str,
            ) -> Result<Option<Vec<SkillName>>, StoreError> {
                self.$engine().remove_tool(name, named_as).await
            }
            async fn replace_tool_group(
                &self,
                group: &ToolGroup,
                tools: &[ToolSpec],
                meta: &[(&str, &str)],
            ) -> Result<u64, StoreError> {
                self.$engine()
                    .replace_tool_group(group, tools, meta, false)
                    .await
            }
            async fn replace_tool_group_keeping_previous(
                &self,
                group: &ToolGroup,
                tools: &[ToolSpec],
                meta: &[(&str, &str)],
            ) -> Result<u64, StoreError> {
                self.$engine()
                    .replace_tool_group(group, tools, meta, true)
                    .await
            }
            async fn previous_tools(&self, group: &ToolGroup) -> Result<Vec<ToolSpec>, StoreError> {
                self.$engine().previous_tools(group).await
            }
            async fn get_meta(&self, key: &str) -> Result<Option<String>, StoreError> {
                self.$engine().get_meta(key).await
            }
            async fn set_meta(&self, key: &str, value: &str) -> Result<(), StoreError> {
                self.$engine().set_meta(key, value).await
            }
            async fn import(
                &self,
                tools: &[ToolSpec],
                skills: &[Skill],
            ) -> Result<Vec<Skill>, StoreError> {
                self.$engine().import(tools, skills).await
            }
            async fn write_skills(
                &self,
                tools: &[ToolSpec],
                add: &[Skill],
                update: &[Skill],
                meta: &[(&str, &str)],
            ) -> Result<$crate::WriteStamps, StoreError> {
                self.$engine().write_skills(tools, add, update, meta).await
            }
            async fn status(&self) -> Result<StoreStatus, StoreError> {
                self.$engine().status().await
            }
            async fn change_stamp(&self) -> Result<String, StoreError> {
                self.$engine().change_stamp().await
            }
        }
    };
}

impl SqliteStore {
    fn engine(&self) -> &engine::Engine {
        &self.engine
    }
}

impl PostgresStore {
    fn engine(&self) -> &engine::Engine {
        &self.engine
    }
}

store_via_engine!(SqliteStore, engine);
store_via_engine!(PostgresStore, engine);
store_via_engine!(AnyStore, engine);
