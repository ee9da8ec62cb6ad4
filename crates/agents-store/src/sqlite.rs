//! The embedded SQLite backend.
//!
//! Concurrency model: every write transaction starts with `BEGIN IMMEDIATE`,
//! so writers (in this process or another) queue on the database lock through
//! the busy timeout instead of failing when a read lock cannot be upgraded.
//! Reads run in deferred transactions, which in WAL mode see one snapshot and
//! never block writers.

use std::collections::HashSet;
use std::path::Path;
use std::str::FromStr;
use std::time::{Duration, Instant};

use agents_core::{Skill, SkillName, ToolSource, ToolSpec};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqlitePool, SqlitePoolOptions, SqliteRow,
};
use sqlx::{AssertSqlSafe, Connection, Row, Sqlite, Transaction};

use crate::codec::{self, ItemColumns, ItemRow, SkillColumns, SkillRow, ToolColumns};
use crate::migrate::{self, Migration};
use crate::{SkillSummary, Store, StoreError, StoreStatus, ToolGroup};

/// How long a statement waits for another writer before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a task waits for a free pooled connection; longer than the busy
/// timeout because the connection holders may themselves be waiting on it.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(30);
const MAX_CONNECTIONS: u32 = 4;

/// Rows per multi-row `INSERT`: far below SQLite's 32766 parameters, large
/// enough that a 10,000-skill batch is a few dozen statements.
const SKILLS_PER_INSERT: usize = 500;
const ITEMS_PER_INSERT: usize = 1000;
const TOOLS_PER_INSERT: usize = 500;

pub(crate) const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    description: "skills, skill_items, tools, registry_meta",
    sql: include_str!("../migrations/sqlite/0001_init.sql"),
}];

/// A registry in one SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
    location: String,
}

fn io_error(context: String) -> impl FnOnce(std::io::Error) -> StoreError {
    move |source| StoreError::Io { context, source }
}

fn is_busy(err: &sqlx::Error) -> bool {
    err.as_database_error()
        .and_then(|db| db.code())
        .and_then(|code| code.parse::<i32>().ok())
        // SQLITE_BUSY and SQLITE_LOCKED, with any extended code.
        .is_some_and(|code| matches!(code & 0xff, 5 | 6))
}

fn is_unique_violation(err: &sqlx::Error) -> bool {
    err.as_database_error()
        .is_some_and(|db| db.is_unique_violation())
}

impl SqliteStore {
    /// Opens (creating it and its directory if needed) the database at
    /// `path` and applies pending migrations.
    pub async fn open(path: &Path) -> Result<Self, StoreError> {
        if let Some(parent) = path
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())
        {
            std::fs::create_dir_all(parent).map_err(io_error(format!(
                "cannot create directory `{}`",
                parent.display()
            )))?;
        }
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .foreign_keys(true)
            .busy_timeout(BUSY_TIMEOUT);
        let pool = SqlitePoolOptions::new()
            .max_connections(MAX_CONNECTIONS)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect_lazy_with(options);
        let store = Self {
            pool,
            location: format!("sqlite://{}", path.display()),
        };
        store.init(true).await?;
        Ok(store)
    }

    /// A private in-memory database, gone when the last handle is dropped.
    pub async fn open_memory() -> Result<Self, StoreError> {
        let location = "sqlite::memory:".to_owned();
        let options = SqliteConnectOptions::from_str(&location)
            .map_err(|source| StoreError::Database {
                context: "cannot configure an in-memory sqlite database".into(),
                source,
            })?
            .foreign_keys(true);
        // One connection that never expires: each new connection would be a
        // different, empty database.
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .min_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect_lazy_with(options);
        let store = Self { pool, location };
        store.init(false).await?;
        Ok(store)
    }

    fn db(&self, what: &str) -> impl FnOnce(sqlx::Error) -> StoreError + use<> {
        let context = format!("{what} in `{}`", self.location);
        move |source| StoreError::Database { context, source }
    }

    async fn init(&self, wal: bool) -> Result<(), StoreError> {
        let mut conn = self
            .pool
            .acquire()
            .await
            .map_err(self.db("cannot open the database"))?;
        if wal {
            enable_wal(&mut conn)
                .await
                .map_err(self.db("cannot switch to WAL journal mode"))?;
        }
        self.migrate(&mut conn).await
    }

    async fn migrate(&self, conn: &mut SqliteConnection) -> Result<(), StoreError> {
        let supported = migrate::latest(MIGRATIONS);
        loop {
            let mut tx = conn
                .begin_with("BEGIN IMMEDIATE")
                .await
                .map_err(self.db("cannot start the migration"))?;
            let current = applied_version(&mut tx)
                .await
                .map_err(self.db("cannot read the schema version"))?;
            if current > supported {
                return Err(StoreError::SchemaTooNew {
                    found: current,
                    supported,
                });
            }
            let Some(next) = MIGRATIONS
                .iter()
                .find(|migration| migration.version > current)
            else {
                tx.commit()
                    .await
                    .map_err(self.db("cannot finish the migration"))?;
                return Ok(());
            };
            let failed = format!(
                "cannot apply schema migration {} ({})",
                next.version, next.description
            );
            sqlx::raw_sql(
                "CREATE TABLE IF NOT EXISTS schema_migrations (
                    version     INTEGER NOT NULL PRIMARY KEY,
                    description VARCHAR(255) NOT NULL,
                    applied_at  VARCHAR(30) NOT NULL
                )",
            )
            .execute(&mut *tx)
            .await
            .map_err(self.db(&failed))?;
            sqlx::raw_sql(next.sql)
                .execute(&mut *tx)
                .await
                .map_err(self.db(&failed))?;
            sqlx::query(
                "INSERT INTO schema_migrations (version, description, applied_at) VALUES (?, ?, ?)",
            )
            .bind(next.version)
            .bind(next.description)
            .bind(codec::format_timestamp(codec::now()))
            .execute(&mut *tx)
            .await
            .map_err(self.db(&failed))?;
            tx.commit().await.map_err(self.db(&failed))?;
        }
    }

    async fn write(&self) -> Result<Transaction<'static, Sqlite>, StoreError> {
        self.pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(self.db("cannot start a write transaction"))
    }

    async fn read(&self) -> Result<Transaction<'static, Sqlite>, StoreError> {
        self.pool
            .begin()
            .await
            .map_err(self.db("cannot start a read transaction"))
    }

    async fn existing_skills(
        &self,
        conn: &mut SqliteConnection,
        names: &[&str],
    ) -> Result<HashSet<String>, sqlx::Error> {
        let rows: Vec<String> = sqlx::query_scalar(
            "SELECT name FROM skills WHERE name IN (SELECT value FROM json_each(?))",
        )
        .bind(codec::json_array(names.iter().copied()))
        .fetch_all(&mut *conn)
        .await?;
        Ok(rows.into_iter().collect())
    }

    async fn existing_tools(
        &self,
        conn: &mut SqliteConnection,
        names: &[&str],
    ) -> Result<HashSet<String>, sqlx::Error> {
        let rows: Vec<String> = sqlx::query_scalar(
            "SELECT name FROM tools WHERE name IN (SELECT value FROM json_each(?))",
        )
        .bind(codec::json_array(names.iter().copied()))
        .fetch_all(&mut *conn)
        .await?;
        Ok(rows.into_iter().collect())
    }

    async fn add_inner(
        &self,
        skills: &[Skill],
        encoded: &[SkillColumns],
    ) -> Result<Vec<Skill>, StoreError> {
        let names: Vec<&str> = skills.iter().map(|skill| skill.name.as_str()).collect();
        let mut tx = self.write().await?;
        let taken = self
            .existing_skills(&mut tx, &names)
            .await
            .map_err(self.db("cannot check for registered skills"))?;
        if let Some(skill) = skills
            .iter()
            .find(|skill| taken.contains(skill.name.as_str()))
        {
            return Err(StoreError::DuplicateSkill(skill.name.clone()));
        }
        let at = codec::format_timestamp(codec::now());
        let inserted = insert_skills(&mut tx, encoded, &at).await;
        if let Err(err) = inserted {
            drop(tx);
            return Err(self.duplicate_or(skills, err).await);
        }
        insert_items(
            &mut tx,
            encoded
                .iter()
                .map(|skill| (skill.name.as_str(), skill.items.as_slice())),
            &at,
        )
        .await
        .map_err(self.db("cannot add skill items"))?;
        tx.commit()
            .await
            .map_err(self.db("cannot commit the new skills"))?;
        Ok(skills
            .iter()
            .map(|skill| Skill {
                created_at: Some(at.clone()),
                updated_at: Some(at.clone()),
                ..skill.clone()
            })
            .collect())
    }

    /// Turns a unique violation (another writer won a race) into
    /// `DuplicateSkill` naming the first taken name.
    async fn duplicate_or(&self, skills: &[Skill], err: sqlx::Error) -> StoreError {
        if is_unique_violation(&err) {
            let names: Vec<&str> = skills.iter().map(|skill| skill.name.as_str()).collect();
            if let Ok(mut conn) = self.pool.acquire().await
                && let Ok(taken) = self.existing_skills(&mut conn, &names).await
                && let Some(skill) = skills
                    .iter()
                    .find(|skill| taken.contains(skill.name.as_str()))
            {
                return StoreError::DuplicateSkill(skill.name.clone());
            }
        }
        self.db("cannot add skills")(err)
    }

    async fn upsert_tools(
        &self,
        tx: &mut SqliteConnection,
        tools: &[ToolColumns],
        replace: bool,
    ) -> Result<(), sqlx::Error> {
        let at = codec::format_timestamp(codec::now());
        for chunk in tools.chunks(TOOLS_PER_INSERT) {
            let mut sql = values_sql(
                "INSERT INTO tools (name, source, origin, spec_json, created_at, updated_at) VALUES ",
                6,
                chunk.len(),
            );
            if replace {
                sql.push_str(
                    " ON CONFLICT (name) DO UPDATE SET source = excluded.source, origin = excluded.origin, \
                     spec_json = excluded.spec_json, updated_at = excluded.updated_at",
                );
            }
            let mut query = sqlx::query(AssertSqlSafe(sql));
            for tool in chunk {
                query = query
                    .bind(tool.name.as_str())
                    .bind(tool.source)
                    .bind(tool.origin.as_deref())
                    .bind(tool.spec_json.as_str())
                    .bind(at.as_str())
                    .bind(at.as_str());
            }
            query.execute(&mut *tx).await?;
        }
        Ok(())
    }
}

/// Switches the file to WAL. This needs a lock the busy timeout does not
/// wait for, so two processes creating the database at once retry here.
async fn enable_wal(conn: &mut SqliteConnection) -> Result<(), sqlx::Error> {
    let deadline = Instant::now() + BUSY_TIMEOUT;
    let mut pause = Duration::from_millis(5);
    loop {
        match sqlx::query_scalar::<_, String>("PRAGMA journal_mode = WAL")
            .fetch_one(&mut *conn)
            .await
        {
            Ok(_) => return Ok(()),
            Err(err) if is_busy(&err) && Instant::now() < deadline => {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_millis(200));
            }
            Err(err) => return Err(err),
        }
    }
}

async fn applied_version(conn: &mut SqliteConnection) -> Result<i64, sqlx::Error> {
    let exists: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'",
    )
    .fetch_one(&mut *conn)
    .await?;
    if exists == 0 {
        return Ok(0);
    }
    let version: Option<i64> = sqlx::query_scalar("SELECT MAX(version) FROM schema_migrations")
        .fetch_one(&mut *conn)
        .await?;
    Ok(version.unwrap_or(0))
}

/// `prefix` followed by `rows` groups of `columns` placeholders.
fn values_sql(prefix: &str, columns: usize, rows: usize) -> String {
    let group = format!("({})", vec!["?"; columns].join(", "));
    let mut sql = String::with_capacity(prefix.len() + rows * (group.len() + 2));
    sql.push_str(prefix);
    for row in 0..rows {
        if row > 0 {
            sql.push_str(", ");
        }
        sql.push_str(&group);
    }
    sql
}

async fn insert_skills(
    conn: &mut SqliteConnection,
    skills: &[SkillColumns],
    at: &str,
) -> Result<(), sqlx::Error> {
    for chunk in skills.chunks(SKILLS_PER_INSERT) {
        let sql = values_sql(
            "INSERT INTO skills (name, namespace, short_name, description, version, metadata_json, created_at, updated_at) VALUES ",
            8,
            chunk.len(),
        );
        let mut query = sqlx::query(AssertSqlSafe(sql));
        for skill in chunk {
            query = query
                .bind(skill.name.as_str())
                .bind(skill.namespace.as_str())
                .bind(skill.short_name.as_str())
                .bind(skill.description.as_deref())
                .bind(skill.version.as_deref())
                .bind(skill.metadata_json.as_str())
                .bind(at)
                .bind(at);
        }
        query.execute(&mut *conn).await?;
    }
    Ok(())
}

async fn insert_items<'a>(
    conn: &mut SqliteConnection,
    skills: impl Iterator<Item = (&'a str, &'a [ItemColumns])>,
    at: &str,
) -> Result<(), sqlx::Error> {
    let rows: Vec<(&str, &ItemColumns)> = skills
        .flat_map(|(name, items)| items.iter().map(move |item| (name, item)))
        .collect();
    for chunk in rows.chunks(ITEMS_PER_INSERT) {
        let sql = values_sql(
            "INSERT INTO skill_items (skill_name, item_type, item_name, item_config, item_order, created_at) VALUES ",
            6,
            chunk.len(),
        );
        let mut query = sqlx::query(AssertSqlSafe(sql));
        for (skill, item) in chunk {
            query = query
                .bind(*skill)
                .bind(item.item_type)
                .bind(item.item_name.as_str())
                .bind(item.item_config.as_deref())
                .bind(item.item_order)
                .bind(at);
        }
        query.execute(&mut *conn).await?;
    }
    Ok(())
}

fn column<'r, T>(row: &'r SqliteRow, table: &'static str, name: &str) -> Result<T, StoreError>
where
    T: sqlx::Decode<'r, Sqlite> + sqlx::Type<Sqlite>,
{
    row.try_get(name).map_err(|err| StoreError::Corrupt {
        table,
        key: row.try_get::<String, _>(0).unwrap_or_default(),
        reason: format!("column `{name}`: {err}"),
    })
}

const SKILL_COLUMNS: &str = "name, description, version, metadata_json, created_at, updated_at";
const ITEM_COLUMNS: &str = "skill_name, item_type, item_name, item_config, item_order";

fn skill_row(row: &SqliteRow) -> Result<SkillRow, StoreError> {
    Ok(SkillRow {
        name: column(row, "skills", "name")?,
        description: column(row, "skills", "description")?,
        version: column(row, "skills", "version")?,
        metadata_json: column(row, "skills", "metadata_json")?,
        created_at: column(row, "skills", "created_at")?,
        updated_at: column(row, "skills", "updated_at")?,
    })
}

fn item_row(row: &SqliteRow) -> Result<ItemRow, StoreError> {
    Ok(ItemRow {
        skill_name: column(row, "skill_items", "skill_name")?,
        item_type: column(row, "skill_items", "item_type")?,
        item_name: column(row, "skill_items", "item_name")?,
        item_config: column(row, "skill_items", "item_config")?,
        item_order: column(row, "skill_items", "item_order")?,
    })
}

fn tool_row(row: &SqliteRow) -> Result<ToolSpec, StoreError> {
    let name: String = column(row, "tools", "name")?;
    let spec: String = column(row, "tools", "spec_json")?;
    codec::decode_tool(&name, &spec)
}

fn count(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

impl Store for SqliteStore {
    async fn add_skills(&self, skills: &[Skill]) -> Result<Vec<Skill>, StoreError> {
        if skills.is_empty() {
            return Ok(Vec::new());
        }
        if let Some(repeat) = codec::first_repeat(skills.iter().map(|skill| &skill.name)) {
            return Err(StoreError::DuplicateSkill(repeat.clone()));
        }
        let encoded = skills
            .iter()
            .map(codec::encode_skill)
            .collect::<Result<Vec<_>, _>>()?;
        self.add_inner(skills, &encoded).await
    }

    async fn update_skills(&self, skills: &[Skill]) -> Result<Vec<Skill>, StoreError> {
        if skills.is_empty() {
            return Ok(Vec::new());
        }
        let encoded = skills
            .iter()
            .map(codec::encode_skill)
            .collect::<Result<Vec<_>, _>>()?;
        let mut tx = self.write().await?;
        let now = codec::now();
        let mut updated = Vec::with_capacity(skills.len());
        for (skill, columns) in skills.iter().zip(&encoded) {
            let row: Option<(String, String)> =
                sqlx::query_as("SELECT created_at, updated_at FROM skills WHERE name = ?")
                    .bind(columns.name.as_str())
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err(self.db("cannot read the skill to update"))?;
            let Some((created_at, found)) = row else {
                return Err(StoreError::SkillNotFound(skill.name.clone()));
            };
            if let Some(expected) = &skill.updated_at
                && *expected != found
            {
                return Err(StoreError::Conflict {
                    name: skill.name.clone(),
                    expected: expected.clone(),
                    found,
                });
            }
            let at = codec::next_updated_at(now, &found, skill.name.as_str())?;
            let changed = sqlx::query(
                "UPDATE skills SET description = ?, version = ?, metadata_json = ?, updated_at = ? WHERE name = ? AND updated_at = ?",
            )
            .bind(columns.description.as_deref())
            .bind(columns.version.as_deref())
            .bind(columns.metadata_json.as_str())
            .bind(at.as_str())
            .bind(columns.name.as_str())
            .bind(found.as_str())
            .execute(&mut *tx)
            .await
            .map_err(self.db("cannot update the skill"))?;
            if changed.rows_affected() != 1 {
                return Err(StoreError::Conflict {
                    name: skill.name.clone(),
                    expected: found.clone(),
                    found,
                });
            }
            sqlx::query("DELETE FROM skill_items WHERE skill_name = ?")
                .bind(columns.name.as_str())
                .execute(&mut *tx)
                .await
                .map_err(self.db("cannot replace the skill's items"))?;
            insert_items(
                &mut tx,
                std::iter::once((columns.name.as_str(), columns.items.as_slice())),
                &at,
            )
            .await
            .map_err(self.db("cannot replace the skill's items"))?;
            updated.push(Skill {
                created_at: Some(created_at),
                updated_at: Some(at),
                ..skill.clone()
            });
        }
        tx.commit()
            .await
            .map_err(self.db("cannot commit the updated skills"))?;
        Ok(updated)
    }

    async fn get_skill(&self, name: &SkillName) -> Result<Option<Skill>, StoreError> {
        let mut tx = self.read().await?;
        let failed = "cannot read the skill";
        let row = sqlx::query(AssertSqlSafe(format!(
            "SELECT {SKILL_COLUMNS} FROM skills WHERE name = ?"
        )))
        .bind(name.as_str())
        .fetch_optional(&mut *tx)
        .await
        .map_err(self.db(failed))?;
        let Some(row) = row else {
            return Ok(None);
        };
        let items = sqlx::query(AssertSqlSafe(format!(
            "SELECT {ITEM_COLUMNS} FROM skill_items WHERE skill_name = ? ORDER BY item_order"
        )))
        .bind(name.as_str())
        .fetch_all(&mut *tx)
        .await
        .map_err(self.db(failed))?;
        tx.commit().await.map_err(self.db(failed))?;
        let items = items.iter().map(item_row).collect::<Result<Vec<_>, _>>()?;
        codec::decode_skill(skill_row(&row)?, items).map(Some)
    }

    async fn list_skills(&self, namespace: Option<&str>) -> Result<Vec<SkillSummary>, StoreError> {
        let select = "SELECT s.name, s.namespace, s.short_name, s.description, s.version, s.updated_at, \
                      (SELECT COUNT(*) FROM skill_items i WHERE i.skill_name = s.name) AS items FROM skills s";
        let query = match namespace {
            Some(namespace) => sqlx::query(AssertSqlSafe(format!(
                "{select} WHERE s.namespace = ? ORDER BY s.name"
            )))
            .bind(namespace),
            None => sqlx::query(AssertSqlSafe(format!("{select} ORDER BY s.name"))),
        };
        let rows = query
            .fetch_all(&self.pool)
            .await
            .map_err(self.db("cannot list skills"))?;
        rows.iter()
            .map(|row| {
                let raw: String = column(row, "skills", "name")?;
                let name = SkillName::new(&raw).map_err(|err| StoreError::Corrupt {
                    table: "skills",
                    key: raw.clone(),
                    reason: format!("`name`: {err}"),
                })?;
                Ok(SkillSummary {
                    name,
                    namespace: column(row, "skills", "namespace")?,
                    short_name: column(row, "skills", "short_name")?,
                    description: column(row, "skills", "description")?,
                    version: column(row, "skills", "version")?,
                    items: count(column(row, "skills", "items")?),
                    updated_at: column(row, "skills", "updated_at")?,
                })
            })
            .collect()
    }

    async fn remove_skill(&self, name: &SkillName) -> Result<bool, StoreError> {
        let mut tx = self.write().await?;
        let done = sqlx::query("DELETE FROM skills WHERE name = ?")
            .bind(name.as_str())
            .execute(&mut *tx)
            .await
            .map_err(self.db("cannot remove the skill"))?;
        tx.commit()
            .await
            .map_err(self.db("cannot remove the skill"))?;
        Ok(done.rows_affected() > 0)
    }

    async fn load_closure(&self, roots: &[SkillName]) -> Result<Vec<Skill>, StoreError> {
        if roots.is_empty() {
            return Ok(Vec::new());
        }
        let failed = "cannot load the skills and their includes";
        let mut tx = self.read().await?;
        // Each step must look up the new names' items through
        // (skill_name, item_order), never scan all includes: CROSS JOIN fixes
        // the loop order and the unary `+` keeps `item_type` out of index
        // selection.
        let rows = sqlx::query(AssertSqlSafe(format!(
            "WITH RECURSIVE closure(name) AS (
                 SELECT value FROM json_each(?)
                 UNION
                 SELECT i.item_name FROM closure c CROSS JOIN skill_items i
                 WHERE i.skill_name = c.name AND +i.item_type = 'include'
             )
             SELECT {SKILL_COLUMNS} FROM skills WHERE name IN (SELECT name FROM closure) ORDER BY name"
        )))
        .bind(codec::json_array(roots.iter().map(SkillName::as_str)))
        .fetch_all(&mut *tx)
        .await
        .map_err(self.db(failed))?;
        let skills = rows.iter().map(skill_row).collect::<Result<Vec<_>, _>>()?;
        let items = sqlx::query(AssertSqlSafe(format!(
            "SELECT {ITEM_COLUMNS} FROM skill_items WHERE skill_name IN (SELECT value FROM json_each(?))"
        )))
        .bind(codec::json_array(skills.iter().map(|skill| skill.name.as_str())))
        .fetch_all(&mut *tx)
        .await
        .map_err(self.db(failed))?;
        tx.commit().await.map_err(self.db(failed))?;
        let items = items.iter().map(item_row).collect::<Result<Vec<_>, _>>()?;
        codec::decode_skills(skills, items)
    }

    async fn all_skills(&self) -> Result<Vec<Skill>, StoreError> {
        let failed = "cannot read all skills";
        let mut tx = self.read().await?;
        let rows = sqlx::query(AssertSqlSafe(format!(
            "SELECT {SKILL_COLUMNS} FROM skills ORDER BY name"
        )))
        .fetch_all(&mut *tx)
        .await
        .map_err(self.db(failed))?;
        let items = sqlx::query(AssertSqlSafe(format!(
            "SELECT {ITEM_COLUMNS} FROM skill_items"
        )))
        .fetch_all(&mut *tx)
        .await
        .map_err(self.db(failed))?;
        tx.commit().await.map_err(self.db(failed))?;
        let skills = rows.iter().map(skill_row).collect::<Result<Vec<_>, _>>()?;
        let items = items.iter().map(item_row).collect::<Result<Vec<_>, _>>()?;
        codec::decode_skills(skills, items)
    }

    async fn put_tools(&self, tools: &[ToolSpec], replace: bool) -> Result<(), StoreError> {
        if tools.is_empty() {
            return Ok(());
        }
        let kept: Vec<&ToolSpec> = if replace {
            codec::last_wins(tools)
        } else {
            if let Some(repeat) = codec::first_repeat(tools.iter().map(|tool| tool.name.as_str())) {
                return Err(StoreError::DuplicateTool(repeat.to_owned()));
            }
            tools.iter().collect()
        };
        let encoded = kept
            .iter()
            .map(|tool| codec::encode_tool(tool))
            .collect::<Result<Vec<_>, _>>()?;
        let mut tx = self.write().await?;
        if !replace {
            let names: Vec<&str> = encoded.iter().map(|tool| tool.name.as_str()).collect();
            let taken = self
                .existing_tools(&mut tx, &names)
                .await
                .map_err(self.db("cannot check for registered tools"))?;
            if let Some(name) = names.iter().find(|name| taken.contains(**name)) {
                return Err(StoreError::DuplicateTool((*name).to_owned()));
            }
        }
        if let Err(err) = self.upsert_tools(&mut tx, &encoded, replace).await {
            drop(tx);
            if is_unique_violation(&err) {
                let names: Vec<&str> = encoded.iter().map(|tool| tool.name.as_str()).collect();
                if let Ok(mut conn) = self.pool.acquire().await
                    && let Ok(taken) = self.existing_tools(&mut conn, &names).await
                    && let Some(name) = names.iter().find(|name| taken.contains(**name))
                {
                    return Err(StoreError::DuplicateTool((*name).to_owned()));
                }
            }
            return Err(self.db("cannot add tools")(err));
        }
        tx.commit()
            .await
            .map_err(self.db("cannot commit the tools"))
    }

    async fn get_tool(&self, name: &str) -> Result<Option<ToolSpec>, StoreError> {
        let row = sqlx::query("SELECT name, spec_json FROM tools WHERE name = ?")
            .bind(name)
            .fetch_optional(&self.pool)
            .await
            .map_err(self.db("cannot read the tool"))?;
        row.as_ref().map(tool_row).transpose()
    }

    async fn get_tools(&self, names: &[String]) -> Result<Vec<ToolSpec>, StoreError> {
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let rows = sqlx::query(
            "SELECT name, spec_json FROM tools WHERE name IN (SELECT value FROM json_each(?))",
        )
        .bind(codec::json_array(names.iter().map(String::as_str)))
        .fetch_all(&self.pool)
        .await
        .map_err(self.db("cannot read tools"))?;
        let tools = rows.iter().map(tool_row).collect::<Result<Vec<_>, _>>()?;
        Ok(codec::in_request_order(names, tools))
    }

    async fn list_tools(&self, source: Option<ToolSource>) -> Result<Vec<ToolSpec>, StoreError> {
        let query = match source {
            Some(source) => {
                sqlx::query("SELECT name, spec_json FROM tools WHERE source = ? ORDER BY name")
                    .bind(source.as_str())
            }
            None => sqlx::query("SELECT name, spec_json FROM tools ORDER BY name"),
        };
        let rows = query
            .fetch_all(&self.pool)
            .await
            .map_err(self.db("cannot list tools"))?;
        rows.iter().map(tool_row).collect()
    }

    async fn remove_tool(&self, name: &str) -> Result<bool, StoreError> {
        let mut tx = self.write().await?;
        let done = sqlx::query("DELETE FROM tools WHERE name = ?")
            .bind(name)
            .execute(&mut *tx)
            .await
            .map_err(self.db("cannot remove the tool"))?;
        tx.commit()
            .await
            .map_err(self.db("cannot remove the tool"))?;
        Ok(done.rows_affected() > 0)
    }

    async fn replace_tool_group(
        &self,
        group: &ToolGroup,
        tools: &[ToolSpec],
    ) -> Result<u64, StoreError> {
        let encoded = codec::last_wins(tools)
            .into_iter()
            .map(codec::encode_tool)
            .collect::<Result<Vec<_>, _>>()?;
        let failed = "cannot replace the tool group";
        let mut tx = self.write().await?;
        let deleted = match &group.origin {
            Some(origin) => sqlx::query("DELETE FROM tools WHERE source = ? AND origin = ?")
                .bind(group.source.as_str())
                .bind(origin.as_str()),
            None => sqlx::query("DELETE FROM tools WHERE source = ?").bind(group.source.as_str()),
        }
        .execute(&mut *tx)
        .await
        .map_err(self.db(failed))?
        .rows_affected();
        self.upsert_tools(&mut tx, &encoded, true)
            .await
            .map_err(self.db(failed))?;
        tx.commit().await.map_err(self.db(failed))?;
        Ok(deleted)
    }

    async fn get_meta(&self, key: &str) -> Result<Option<String>, StoreError> {
        sqlx::query_scalar("SELECT value FROM registry_meta WHERE key = ?")
            .bind(key)
            .fetch_optional(&self.pool)
            .await
            .map_err(self.db("cannot read `registry_meta`"))
    }

    async fn set_meta(&self, key: &str, value: &str) -> Result<(), StoreError> {
        codec::check_meta(key, value)?;
        let failed = "cannot write `registry_meta`";
        let mut tx = self.write().await?;
        sqlx::query("INSERT INTO registry_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
            .bind(key)
            .bind(value)
            .execute(&mut *tx)
            .await
            .map_err(self.db(failed))?;
        tx.commit().await.map_err(self.db(failed))
    }

    async fn status(&self) -> Result<StoreStatus, StoreError> {
        let failed = "cannot read the store status";
        let mut tx = self.read().await?;
        let schema_version = applied_version(&mut tx).await.map_err(self.db(failed))?;
        let (skills, skill_items, tools): (i64, i64, i64) = sqlx::query_as(
            "SELECT (SELECT COUNT(*) FROM skills), (SELECT COUNT(*) FROM skill_items), (SELECT COUNT(*) FROM tools)",
        )
        .fetch_one(&mut *tx)
        .await
        .map_err(self.db(failed))?;
        tx.commit().await.map_err(self.db(failed))?;
        Ok(StoreStatus {
            backend: "sqlite",
            location: self.location.clone(),
            schema_version,
            supported_version: migrate::latest(MIGRATIONS),
            skills: count(skills),
            skill_items: count(skill_items),
            tools: count(tools),
        })
    }
}
