//! The PostgreSQL backend, for registries shared by many machines.
//!
//! Concurrency model (READ COMMITTED): a racing `add` of the same name blocks
//! on the unique index and then fails with a unique violation, reported as
//! [`StoreError::DuplicateSkill`]; `update` locks the row (`FOR UPDATE`)
//! before comparing `updated_at`; tool writes lock the `tools` table against
//! each other so a group replacement is never interleaved with another.
//! Reads that take several queries run in one REPEATABLE READ snapshot.
//!
//! Name lists are bound as one array and joined through `UNNEST`, never
//! `= ANY($1)`: a prepared statement's generic plan tests `ANY` linearly per
//! row, which is quadratic for a 10,000-name closure.

use std::collections::HashSet;
use std::str::FromStr;
use std::time::Duration;

use agents_core::{Skill, SkillName, ToolSource, ToolSpec};
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions, PgRow};
use sqlx::{AssertSqlSafe, ConnectOptions, Connection, Postgres, Row, Transaction};

use crate::codec::{self, ItemColumns, ItemRow, SkillColumns, SkillRow, ToolColumns};
use crate::migrate::{self, Migration};
use crate::url::redact;
use crate::{SkillSummary, Store, StoreError, StoreStatus, ToolGroup};

/// Bounds connecting and waiting for a pooled connection, so an unreachable
/// server is an error within seconds, never a hang.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_CONNECTIONS: u32 = 4;

/// Rows per `INSERT ... SELECT FROM UNNEST(...)`: one statement per chunk,
/// bounded so a huge batch does not become one enormous message.
const SKILLS_PER_INSERT: usize = 5_000;
const ITEMS_PER_INSERT: usize = 10_000;

/// Serializes concurrent migrations of one database across processes.
const MIGRATION_LOCK: i64 = 0x6167_656e_7473; // "agents"

pub(crate) const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    description: "skills, skill_items, tools, registry_meta",
    sql: include_str!("../migrations/postgres/0001_init.sql"),
}];

/// A registry in a PostgreSQL database.
#[derive(Debug, Clone)]
pub struct PostgresStore {
    pool: PgPool,
    location: String,
}

fn is_unique_violation(err: &sqlx::Error) -> bool {
    err.as_database_error()
        .is_some_and(|db| db.is_unique_violation())
}

fn timed_out(what: &str) -> sqlx::Error {
    sqlx::Error::Io(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        format!("{what} within {} s", CONNECT_TIMEOUT.as_secs()),
    ))
}

impl PostgresStore {
    /// Connects to the database at `url` (`postgres://` or `postgresql://`,
    /// parameters such as `sslmode=require` passed to the driver) and applies
    /// pending migrations.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let location = redact(url);
        let options = PgConnectOptions::from_str(url)
            .map_err(|err| StoreError::InvalidUrl {
                url: location.clone(),
                reason: err.to_string(),
            })?
            .application_name("agents");
        let context = format!("cannot connect to postgres `{location}`");
        // One direct connection first: its error says why (refused, auth,
        // TLS), where the pool would retry a refused connection until its
        // timeout and then only report that it timed out.
        let mut conn = tokio::time::timeout(CONNECT_TIMEOUT, options.connect())
            .await
            .map_err(|_| StoreError::Database {
                context: context.clone(),
                source: timed_out("no answer from the server"),
            })?
            .map_err(|source| StoreError::Database { context, source })?;
        let pool = PgPoolOptions::new()
            .max_connections(MAX_CONNECTIONS)
            .min_connections(0)
            .acquire_timeout(CONNECT_TIMEOUT)
            // A pooled connection may have died with a server restart: ping
            // it before use and reconnect if needed.
            .test_before_acquire(true)
            .connect_lazy_with(options);
        let store = Self { pool, location };
        let migrated = tokio::time::timeout(CONNECT_TIMEOUT * 3, store.migrate(&mut conn))
            .await
            .unwrap_or_else(|_| {
                Err(store.db("cannot apply schema migrations")(timed_out(
                    "migrations did not finish",
                )))
            });
        let _ = conn.close().await;
        migrated?;
        Ok(store)
    }

    fn db(&self, what: &str) -> impl FnOnce(sqlx::Error) -> StoreError + use<> {
        let location = self.location.clone();
        let what = what.to_owned();
        move |source| {
            let context = match source {
                sqlx::Error::PoolTimedOut => format!(
                    "{what} in `{location}`: no connection to the server within {} s (is it running?)",
                    CONNECT_TIMEOUT.as_secs()
                ),
                _ => format!("{what} in `{location}`"),
            };
            StoreError::Database { context, source }
        }
    }

    async fn migrate(&self, conn: &mut PgConnection) -> Result<(), StoreError> {
        let supported = migrate::latest(MIGRATIONS);
        loop {
            let mut tx = conn
                .begin()
                .await
                .map_err(self.db("cannot start the migration"))?;
            sqlx::query("SELECT pg_advisory_xact_lock($1)")
                .bind(MIGRATION_LOCK)
                .execute(&mut *tx)
                .await
                .map_err(self.db("cannot lock the schema for migration"))?;
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
                    version     BIGINT NOT NULL PRIMARY KEY,
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
            sqlx::query("INSERT INTO schema_migrations (version, description, applied_at) VALUES ($1, $2, $3)")
                .bind(next.version)
                .bind(next.description)
                .bind(codec::format_timestamp(codec::now()))
                .execute(&mut *tx)
                .await
                .map_err(self.db(&failed))?;
            tx.commit().await.map_err(self.db(&failed))?;
        }
    }

    async fn write(&self) -> Result<Transaction<'static, Postgres>, StoreError> {
        self.pool
            .begin()
            .await
            .map_err(self.db("cannot start a write transaction"))
    }

    async fn read(&self) -> Result<Transaction<'static, Postgres>, StoreError> {
        self.pool
            .begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            .await
            .map_err(self.db("cannot start a read transaction"))
    }

    async fn lock_tools(&self, tx: &mut PgConnection) -> Result<(), StoreError> {
        sqlx::query("LOCK TABLE tools IN SHARE ROW EXCLUSIVE MODE")
            .execute(&mut *tx)
            .await
            .map_err(self.db("cannot lock the tool catalogue"))?;
        Ok(())
    }

    async fn existing(
        &self,
        conn: &mut PgConnection,
        table: &str,
        names: &[&str],
    ) -> Result<HashSet<String>, sqlx::Error> {
        let sql = match table {
            "tools" => {
                "SELECT t.name FROM tools t JOIN UNNEST($1::text[]) AS n(name) ON t.name = n.name"
            }
            _ => {
                "SELECT s.name FROM skills s JOIN UNNEST($1::text[]) AS n(name) ON s.name = n.name"
            }
        };
        let rows: Vec<String> = sqlx::query_scalar(sql)
            .bind(names)
            .fetch_all(&mut *conn)
            .await?;
        Ok(rows.into_iter().collect())
    }

    /// After a unique violation (another writer won the race, and has
    /// committed, since PostgreSQL waited for it), the first taken name.
    async fn taken_after_race(&self, table: &str, names: &[&str]) -> Option<String> {
        let mut conn = self.pool.acquire().await.ok()?;
        let taken = self.existing(&mut conn, table, names).await.ok()?;
        names
            .iter()
            .find(|name| taken.contains(**name))
            .map(|name| (*name).to_owned())
    }

    async fn upsert_tools(
        &self,
        tx: &mut PgConnection,
        tools: &[ToolColumns],
        replace: bool,
    ) -> Result<(), sqlx::Error> {
        let at = codec::format_timestamp(codec::now());
        let conflict = if replace {
            " ON CONFLICT (name) DO UPDATE SET source = excluded.source, origin = excluded.origin, \
             spec_json = excluded.spec_json, updated_at = excluded.updated_at"
        } else {
            ""
        };
        let sql = format!(
            "INSERT INTO tools (name, source, origin, spec_json, created_at, updated_at) \
             SELECT t.name, t.source, t.origin, t.spec_json, $5, $5 \
             FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[]) AS t(name, source, origin, spec_json){conflict}"
        );
        for chunk in tools.chunks(SKILLS_PER_INSERT) {
            let names: Vec<&str> = chunk.iter().map(|tool| tool.name.as_str()).collect();
            let sources: Vec<&str> = chunk.iter().map(|tool| tool.source).collect();
            let origins: Vec<Option<&str>> =
                chunk.iter().map(|tool| tool.origin.as_deref()).collect();
            let specs: Vec<&str> = chunk.iter().map(|tool| tool.spec_json.as_str()).collect();
            sqlx::query(AssertSqlSafe(sql.as_str()))
                .bind(names)
                .bind(sources)
                .bind(origins)
                .bind(specs)
                .bind(at.as_str())
                .execute(&mut *tx)
                .await?;
        }
        Ok(())
    }
}

async fn applied_version(conn: &mut PgConnection) -> Result<i64, sqlx::Error> {
    let exists: bool = sqlx::query_scalar("SELECT to_regclass('schema_migrations') IS NOT NULL")
        .fetch_one(&mut *conn)
        .await?;
    if !exists {
        return Ok(0);
    }
    let version: Option<i64> = sqlx::query_scalar("SELECT MAX(version) FROM schema_migrations")
        .fetch_one(&mut *conn)
        .await?;
    Ok(version.unwrap_or(0))
}

async fn insert_skills(
    conn: &mut PgConnection,
    skills: &[SkillColumns],
    at: &str,
) -> Result<(), sqlx::Error> {
    for chunk in skills.chunks(SKILLS_PER_INSERT) {
        let names: Vec<&str> = chunk.iter().map(|skill| skill.name.as_str()).collect();
        let namespaces: Vec<&str> = chunk.iter().map(|skill| skill.namespace.as_str()).collect();
        let short_names: Vec<&str> = chunk
            .iter()
            .map(|skill| skill.short_name.as_str())
            .collect();
        let descriptions: Vec<Option<&str>> = chunk
            .iter()
            .map(|skill| skill.description.as_deref())
            .collect();
        let versions: Vec<Option<&str>> =
            chunk.iter().map(|skill| skill.version.as_deref()).collect();
        let metadata: Vec<&str> = chunk
            .iter()
            .map(|skill| skill.metadata_json.as_str())
            .collect();
        sqlx::query(
            "INSERT INTO skills (name, namespace, short_name, description, version, metadata_json, created_at, updated_at)
             SELECT s.name, s.namespace, s.short_name, s.description, s.version, s.metadata_json, $7, $7
             FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
                  AS s(name, namespace, short_name, description, version, metadata_json)",
        )
        .bind(names)
        .bind(namespaces)
        .bind(short_names)
        .bind(descriptions)
        .bind(versions)
        .bind(metadata)
        .bind(at)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

async fn insert_items<'a>(
    conn: &mut PgConnection,
    skills: impl Iterator<Item = (&'a str, &'a [ItemColumns])>,
    at: &str,
) -> Result<(), sqlx::Error> {
    let rows: Vec<(&str, &ItemColumns)> = skills
        .flat_map(|(name, items)| items.iter().map(move |item| (name, item)))
        .collect();
    for chunk in rows.chunks(ITEMS_PER_INSERT) {
        let skill_names: Vec<&str> = chunk.iter().map(|(skill, _)| *skill).collect();
        let types: Vec<&str> = chunk.iter().map(|(_, item)| item.item_type).collect();
        let names: Vec<&str> = chunk
            .iter()
            .map(|(_, item)| item.item_name.as_str())
            .collect();
        let configs: Vec<Option<&str>> = chunk
            .iter()
            .map(|(_, item)| item.item_config.as_deref())
            .collect();
        let orders: Vec<i32> = chunk.iter().map(|(_, item)| item.item_order).collect();
        sqlx::query(
            "INSERT INTO skill_items (skill_name, item_type, item_name, item_config, item_order, created_at)
             SELECT i.skill_name, i.item_type, i.item_name, i.item_config, i.item_order, $6
             FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::int4[])
                  AS i(skill_name, item_type, item_name, item_config, item_order)",
        )
        .bind(skill_names)
        .bind(types)
        .bind(names)
        .bind(configs)
        .bind(orders)
        .bind(at)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

fn column<'r, T>(row: &'r PgRow, table: &'static str, name: &str) -> Result<T, StoreError>
where
    T: sqlx::Decode<'r, Postgres> + sqlx::Type<Postgres>,
{
    row.try_get(name).map_err(|err| StoreError::Corrupt {
        table,
        key: row.try_get::<String, _>(0).unwrap_or_default(),
        reason: format!("column `{name}`: {err}"),
    })
}

const SKILL_COLUMNS: &str = "name, description, version, metadata_json, created_at, updated_at";
const ITEM_COLUMNS: &str = "skill_name, item_type, item_name, item_config, item_order";

fn skill_row(row: &PgRow) -> Result<SkillRow, StoreError> {
    Ok(SkillRow {
        name: column(row, "skills", "name")?,
        description: column(row, "skills", "description")?,
        version: column(row, "skills", "version")?,
        metadata_json: column(row, "skills", "metadata_json")?,
        created_at: column(row, "skills", "created_at")?,
        updated_at: column(row, "skills", "updated_at")?,
    })
}

fn item_row(row: &PgRow) -> Result<ItemRow, StoreError> {
    Ok(ItemRow {
        skill_name: column(row, "skill_items", "skill_name")?,
        item_type: column(row, "skill_items", "item_type")?,
        item_name: column(row, "skill_items", "item_name")?,
        item_config: column(row, "skill_items", "item_config")?,
        item_order: i64::from(column::<i32>(row, "skill_items", "item_order")?),
    })
}

fn tool_row(row: &PgRow) -> Result<ToolSpec, StoreError> {
    let name: String = column(row, "tools", "name")?;
    let spec: String = column(row, "tools", "spec_json")?;
    codec::decode_tool(&name, &spec)
}

fn count(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

impl Store for PostgresStore {
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
        let names: Vec<&str> = skills.iter().map(|skill| skill.name.as_str()).collect();
        let mut tx = self.write().await?;
        let taken = self
            .existing(&mut tx, "skills", &names)
            .await
            .map_err(self.db("cannot check for registered skills"))?;
        if let Some(skill) = skills
            .iter()
            .find(|skill| taken.contains(skill.name.as_str()))
        {
            return Err(StoreError::DuplicateSkill(skill.name.clone()));
        }
        let at = codec::format_timestamp(codec::now());
        if let Err(err) = insert_skills(&mut tx, &encoded, &at).await {
            drop(tx);
            if is_unique_violation(&err)
                && let Some(name) = self.taken_after_race("skills", &names).await
                && let Some(skill) = skills.iter().find(|skill| skill.name.as_str() == name)
            {
                return Err(StoreError::DuplicateSkill(skill.name.clone()));
            }
            return Err(self.db("cannot add skills")(err));
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
        if let Err(err) = tx.commit().await {
            return Err(self.db("cannot commit the new skills")(err));
        }
        Ok(skills
            .iter()
            .map(|skill| Skill {
                created_at: Some(at.clone()),
                updated_at: Some(at.clone()),
                ..skill.clone()
            })
            .collect())
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
            let row: Option<(String, String)> = sqlx::query_as(
                "SELECT created_at, updated_at FROM skills WHERE name = $1 FOR UPDATE",
            )
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
                "UPDATE skills SET description = $1, version = $2, metadata_json = $3, updated_at = $4 \
                 WHERE name = $5 AND updated_at = $6",
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
            sqlx::query("DELETE FROM skill_items WHERE skill_name = $1")
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
        let failed = "cannot read the skill";
        let mut tx = self.read().await?;
        let row = sqlx::query(AssertSqlSafe(format!(
            "SELECT {SKILL_COLUMNS} FROM skills WHERE name = $1"
        )))
        .bind(name.as_str())
        .fetch_optional(&mut *tx)
        .await
        .map_err(self.db(failed))?;
        let Some(row) = row else {
            return Ok(None);
        };
        let items = sqlx::query(AssertSqlSafe(format!(
            "SELECT {ITEM_COLUMNS} FROM skill_items WHERE skill_name = $1 ORDER BY item_order"
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
                "{select} WHERE s.namespace = $1 ORDER BY s.name"
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
        let done = sqlx::query("DELETE FROM skills WHERE name = $1")
            .bind(name.as_str())
            .execute(&self.pool)
            .await
            .map_err(self.db("cannot remove the skill"))?;
        Ok(done.rows_affected() > 0)
    }

    async fn load_closure(&self, roots: &[SkillName]) -> Result<Vec<Skill>, StoreError> {
        if roots.is_empty() {
            return Ok(Vec::new());
        }
        let failed = "cannot load the skills and their includes";
        let roots: Vec<&str> = roots.iter().map(SkillName::as_str).collect();
        let mut tx = self.read().await?;
        // Both terms are cast to one type and collation: PostgreSQL requires
        // the recursive column to agree. The LATERAL ... OFFSET 0 makes each
        // step an index lookup per new name whatever the statistics say;
        // a plain join, planned before the first ANALYZE of a bulk-loaded
        // table, scans every include once per step (seconds for a 10,000
        // deep chain instead of milliseconds).
        let rows = sqlx::query(AssertSqlSafe(format!(
            "WITH RECURSIVE closure(name) AS (
                 SELECT CAST(r AS TEXT) COLLATE \"C\" FROM UNNEST($1::text[]) AS r
                 UNION
                 SELECT step.name FROM closure c CROSS JOIN LATERAL (
                     SELECT CAST(i.item_name AS TEXT) COLLATE \"C\" AS name FROM skill_items i
                     WHERE i.skill_name = c.name AND i.item_type = 'include'
                     OFFSET 0
                 ) AS step
             )
             SELECT {SKILL_COLUMNS} FROM skills WHERE name IN (SELECT name FROM closure) ORDER BY name"
        )))
        .bind(&roots)
        .fetch_all(&mut *tx)
        .await
        .map_err(self.db(failed))?;
        let skills = rows.iter().map(skill_row).collect::<Result<Vec<_>, _>>()?;
        let names: Vec<&str> = skills.iter().map(|skill| skill.name.as_str()).collect();
        let items = sqlx::query(AssertSqlSafe(format!(
            "SELECT {ITEM_COLUMNS} FROM skill_items JOIN UNNEST($1::text[]) AS n(name) ON skill_name = n.name"
        )))
            .bind(&names)
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
        let names: Vec<&str> = encoded.iter().map(|tool| tool.name.as_str()).collect();
        let mut tx = self.write().await?;
        self.lock_tools(&mut tx).await?;
        if !replace {
            let taken = self
                .existing(&mut tx, "tools", &names)
                .await
                .map_err(self.db("cannot check for registered tools"))?;
            if let Some(name) = names.iter().find(|name| taken.contains(**name)) {
                return Err(StoreError::DuplicateTool((*name).to_owned()));
            }
        }
        if let Err(err) = self.upsert_tools(&mut tx, &encoded, replace).await {
            drop(tx);
            if is_unique_violation(&err)
                && let Some(name) = self.taken_after_race("tools", &names).await
            {
                return Err(StoreError::DuplicateTool(name));
            }
            return Err(self.db("cannot add tools")(err));
        }
        tx.commit()
            .await
            .map_err(self.db("cannot commit the tools"))
    }

    async fn get_tool(&self, name: &str) -> Result<Option<ToolSpec>, StoreError> {
        let row = sqlx::query("SELECT name, spec_json FROM tools WHERE name = $1")
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
        let rows = sqlx::query("SELECT t.name, t.spec_json FROM tools t JOIN UNNEST($1::text[]) AS n(name) ON t.name = n.name")
            .bind(names)
            .fetch_all(&self.pool)
            .await
            .map_err(self.db("cannot read tools"))?;
        let tools = rows.iter().map(tool_row).collect::<Result<Vec<_>, _>>()?;
        Ok(codec::in_request_order(names, tools))
    }

    async fn list_tools(&self, source: Option<ToolSource>) -> Result<Vec<ToolSpec>, StoreError> {
        let query = match source {
            Some(source) => {
                sqlx::query("SELECT name, spec_json FROM tools WHERE source = $1 ORDER BY name")
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
        let failed = "cannot remove the tool";
        let mut tx = self.write().await?;
        self.lock_tools(&mut tx).await?;
        let done = sqlx::query("DELETE FROM tools WHERE name = $1")
            .bind(name)
            .execute(&mut *tx)
            .await
            .map_err(self.db(failed))?;
        tx.commit().await.map_err(self.db(failed))?;
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
        self.lock_tools(&mut tx).await?;
        let deleted = match &group.origin {
            Some(origin) => sqlx::query("DELETE FROM tools WHERE source = $1 AND origin = $2")
                .bind(group.source.as_str())
                .bind(origin.as_str()),
            None => sqlx::query("DELETE FROM tools WHERE source = $1").bind(group.source.as_str()),
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
        sqlx::query_scalar("SELECT value FROM registry_meta WHERE key = $1")
            .bind(key)
            .fetch_optional(&self.pool)
            .await
            .map_err(self.db("cannot read `registry_meta`"))
    }

    async fn set_meta(&self, key: &str, value: &str) -> Result<(), StoreError> {
        codec::check_meta(key, value)?;
        sqlx::query("INSERT INTO registry_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
            .bind(key)
            .bind(value)
            .execute(&self.pool)
            .await
            .map_err(self.db("cannot write `registry_meta`"))?;
        Ok(())
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
            backend: "postgres",
            location: self.location.clone(),
            schema_version,
            supported_version: migrate::latest(MIGRATIONS),
            skills: count(skills),
            skill_items: count(skill_items),
            tools: count(tools),
        })
    }
}
