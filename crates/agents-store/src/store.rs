//! The store: one type, [`Store`], whose logic is written once for both
//! backends. The backend is data: a [`Pool`] of either kind, whose
//! [`Dialect`] holds every SQL difference. Statements are neutral `?` SQL
//! run through [`Conn`].

use std::collections::HashSet;
use std::path::Path;

use agents_core::{Skill, SkillName, ToolSource, ToolSpec};

use crate::codec::{self, ItemRow, SkillColumns, SkillRow, ToolColumns};
use crate::conn::{Conn, Pool};
use crate::dialect::Dialect;
use crate::error::{DriverError, StoreError, db_error};
use crate::migrate;
use crate::postgres;
use crate::records::{Readable, SkillSummary, StoreStatus, ToolGroup, WriteStamps};
use crate::rows::{
    ITEM_COLUMNS, ITEM_INSERT, META_INSERT, META_UPSERT, SKILL_COLUMNS, SKILL_INSERT, TOOL_INSERT,
    TOOL_UPSERT, decode_rows, item_row, item_values, readable, readable_tools, skill_row,
    skill_values, tool_row, tool_values,
};
use crate::sql::{Arg, Cell, Cells, Insert};
use crate::sqlite::{self, SqlitePool};
use crate::url::DatabaseUrl;

/// A registry's storage, on SQLite or PostgreSQL (chosen by the URL it is
/// opened with): skills and the tool catalogue, in core types.
///
/// Every write method is one transaction: it lands whole or not at all.
/// Timestamps are the store's business: `created_at` is set on add and kept
/// on update, `updated_at` is set on every write and is strictly increasing
/// per skill, so it doubles as the optimistic-concurrency token.
#[derive(Debug, Clone)]
pub struct Store {
    pool: Pool,
    /// Where the data lives, password removed.
    location: String,
}

/// The one statement [`Store::load_closure`] runs: the closure of the
/// bound root names, then its skills' rows and its items' rows.
fn closure_sql(dialect: &Dialect) -> String {
    match dialect.json_rows {
        // One row: the closure's skills and items, each as one JSON text.
        Some((open, close)) => format!(
            "{closure} SELECT \
             (SELECT {open}{SKILL_COLUMNS}{close} FROM skills WHERE name IN (SELECT name FROM closure)), \
             (SELECT {open}{ITEM_COLUMNS}{close} FROM skill_items WHERE skill_name IN (SELECT name FROM closure))",
            closure = dialect.closure
        ),
        // One statement, so the closure is computed once: its skills' rows
        // and their items' rows, told apart by the first column (items
        // padded to the skills' width).
        None => format!(
            "{closure} SELECT 0, {SKILL_COLUMNS} FROM skills WHERE name IN (SELECT name FROM closure) \
             UNION ALL \
             SELECT 1, {ITEM_COLUMNS}, NULL FROM skill_items WHERE skill_name IN (SELECT name FROM closure)",
            closure = dialect.closure
        ),
    }
}

/// How often [`Store::write_skills`] makes its write again after its insert
/// met a name another writer added and removed in between.
const RACED_INSERT_ATTEMPTS: usize = 3;

fn is_unique_violation(err: &StoreError) -> bool {
    matches!(err, StoreError::Database { source, .. } if source.is_unique_violation())
}

fn count(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

impl Store {
    /// Opens the store `url` names, applying pending migrations. A SQLite
    /// file is created if missing, its directory is not (a mistyped path
    /// must not become a new empty registry).
    pub async fn open(url: &DatabaseUrl) -> Result<Self, StoreError> {
        Self::open_in(url, false).await
    }

    /// Like [`Store::open`], but a SQLite file's missing directories are
    /// created (`agents db init` and the default location).
    pub async fn create(url: &DatabaseUrl) -> Result<Self, StoreError> {
        Self::open_in(url, true).await
    }

    /// Like [`Store::open`], for a command that only reads: a SQLite file
    /// that does not exist is [`StoreError::MissingDatabase`], never created.
    /// The file is opened read-write all the same, so an older schema is
    /// migrated as any open migrates it, and the connections are opened
    /// without `SQLITE_OPEN_CREATE`, so a file removed meanwhile is not made
    /// again. PostgreSQL opens as with [`Store::open`].
    pub async fn open_existing(url: &DatabaseUrl) -> Result<Self, StoreError> {
        let DatabaseUrl::Sqlite(path) = url else {
            return Self::open(url).await;
        };
        tracing::debug!(database = %url, "opening the registry to read");
        // One `stat`; a dangling symbolic link counts as missing (SQLite
        // would not open it without creating its target either).
        if matches!(path.try_exists(), Ok(false)) {
            return Err(StoreError::MissingDatabase(path.clone()));
        }
        let pool = Pool::Sqlite(SqlitePool::file(path, false));
        Self::init(pool, sqlite::location_of(path), true).await
    }

    /// An empty registry standing in for the SQLite database that does not
    /// exist yet at `path` (a fresh machine's default location, read before
    /// anything was written): in memory, migrated, reporting `path` as its
    /// location, and never written to disk.
    pub async fn missing(path: &Path) -> Result<Self, StoreError> {
        Self::memory(sqlite::location_of(path)).await
    }

    async fn open_in(url: &DatabaseUrl, create_dirs: bool) -> Result<Self, StoreError> {
        // `DatabaseUrl`'s display has the password removed.
        tracing::debug!(database = %url, "opening the registry");
        match url {
            DatabaseUrl::Sqlite(path) => {
                let created = sqlite::prepare_file(path, create_dirs)?;
                let pool = Pool::Sqlite(SqlitePool::file(path, true));
                let store = Self::init(pool, sqlite::location_of(path), true).await?;
                if created {
                    sqlite::restrict_side_files(path)?;
                }
                Ok(store)
            }
            DatabaseUrl::SqliteMemory => Self::memory("sqlite::memory:".to_owned()).await,
            DatabaseUrl::Postgres(raw) => Self::connect(raw).await,
        }
    }

    /// A private in-memory SQLite database, gone when the last handle is
    /// dropped.
    async fn memory(location: String) -> Result<Self, StoreError> {
        let pool = SqlitePool::memory().map_err(db_error(
            "cannot open an in-memory sqlite database",
            &location,
        ))?;
        Self::init(Pool::Sqlite(pool), location, false).await
    }

    /// A SQLite store over `pool`, switched to WAL when `wal`, migrated.
    async fn init(pool: Pool, location: String, wal: bool) -> Result<Self, StoreError> {
        let store = Self { pool, location };
        let mut conn = store.conn("cannot open the database").await?;
        if wal && let Conn::Sqlite(handle) = &mut conn {
            let conn = handle
                .conn()
                .map_err(store.db("cannot open the database"))?;
            sqlite::enable_wal(conn)
                .await
                .map_err(store.db("cannot switch to WAL journal mode"))?;
        }
        migrate::run(&mut conn, &store.location).await?;
        drop(conn);
        Ok(store)
    }

    /// A PostgreSQL store at `url`, migrated on a session of its own within
    /// three times the connect timeout.
    async fn connect(url: &str) -> Result<Self, StoreError> {
        let postgres::Connected {
            pool,
            mut direct,
            location,
            timeout,
        } = postgres::connect(url).await?;
        let store = Self {
            pool: Pool::Postgres(pool),
            location,
        };
        let mut conn = Conn::Postgres(postgres::Handle::Direct(&mut direct));
        let migrated = tokio::time::timeout(timeout * 3, migrate::run(&mut conn, &store.location))
            .await
            .unwrap_or_else(|_| {
                Err(store.db("cannot apply schema migrations")(
                    postgres::timed_out("migrations did not finish", timeout * 3),
                ))
            });
        drop(conn);
        let _ = sqlx::Connection::close(direct).await;
        migrated?;
        Ok(store)
    }

    fn dialect(&self) -> &'static Dialect {
        self.pool.dialect()
    }

    fn db<E: Into<DriverError>>(&self, what: &str) -> impl FnOnce(E) -> StoreError + use<E> {
        db_error(what, &self.location)
    }

    /// A pooled connection outside any transaction.
    async fn conn(&self, what: &str) -> Result<Conn<'static>, StoreError> {
        self.pool.conn().await.map_err(self.db(what))
    }

    async fn begin(&self, sql: &'static str, what: &str) -> Result<Conn<'static>, StoreError> {
        self.pool.begin(sql).await.map_err(self.db(what))
    }

    /// A read transaction: one snapshot, never blocks writers.
    async fn read(&self) -> Result<Conn<'static>, StoreError> {
        self.begin(self.dialect().read_begin, "cannot start a read transaction")
            .await
    }

    /// A write transaction, queued behind other writers.
    async fn write(&self) -> Result<Conn<'static>, StoreError> {
        self.begin(
            self.dialect().write_begin,
            "cannot start a write transaction",
        )
        .await
    }

    async fn commit(&self, tx: Conn<'_>, what: &str) -> Result<(), StoreError> {
        tx.commit().await.map_err(self.db(what))
    }

    async fn lock_tools(&self, tx: &mut Conn<'_>) -> Result<(), StoreError> {
        if let Some(lock) = self.dialect().lock_tools {
            tx.execute(lock, &[])
                .await
                .map_err(self.db("cannot lock the tool catalogue"))?;
        }
        Ok(())
    }

    async fn existing(
        &self,
        conn: &mut Conn<'_>,
        table: &'static str,
        names: &[&str],
    ) -> Result<HashSet<String>, StoreError> {
        let sql = format!(
            "SELECT name FROM {table} WHERE name IN ({})",
            self.dialect().names
        );
        let found = conn
            .fetch_texts(&sql, &[Arg::Names(names)])
            .await
            .map_err(self.db(&format!("cannot check for registered {table}")))?;
        Ok(found.into_iter().collect())
    }

    /// After a unique violation (another writer won the race and has
    /// committed), the first of `names` that is taken now.
    async fn taken_after_race<'n>(
        &self,
        table: &'static str,
        names: &[&'n str],
    ) -> Option<&'n str> {
        let mut conn = self.conn("cannot check for registered names").await.ok()?;
        let taken = self.existing(&mut conn, table, names).await.ok()?;
        names.iter().copied().find(|name| taken.contains(*name))
    }

    /// Inserts new skills and their items inside `tx`; a taken name is
    /// [`StoreError::DuplicateSkill`] (or a unique violation when another
    /// writer got there first).
    async fn insert_skills(
        &self,
        tx: &mut Conn<'_>,
        skills: &[SkillColumns],
        at: &str,
    ) -> Result<(), StoreError> {
        let names: Vec<&str> = skills.iter().map(|skill| skill.name.as_str()).collect();
        let taken = self.existing(tx, "skills", &names).await?;
        if let Some(name) = names.iter().find(|name| taken.contains(**name)) {
            return Err(StoreError::DuplicateSkill(self.skill_name(name)?));
        }
        tx.insert(&Insert {
            table: "skills",
            columns: SKILL_INSERT,
            values: skill_values(skills, at),
            suffix: "",
        })
        .await
        .map_err(self.db("cannot add skills"))?;
        tx.insert(&Insert {
            table: "skill_items",
            columns: ITEM_INSERT,
            values: item_values(skills, at),
            suffix: "",
        })
        .await
        .map_err(self.db("cannot add skill items"))
    }

    fn skill_name(&self, raw: &str) -> Result<SkillName, StoreError> {
        SkillName::new(raw)
            .map_err(|err| StoreError::corrupt("skills", raw, format!("`name`: {err}")))
    }

    /// Writes tools inside `tx` (the catalogue already locked).
    async fn upsert_tools(
        &self,
        tx: &mut Conn<'_>,
        tools: &[ToolColumns],
        replace: bool,
    ) -> Result<(), StoreError> {
        let at = codec::format_timestamp(codec::now());
        tx.insert(&Insert {
            table: "tools",
            columns: TOOL_INSERT,
            values: tool_values(tools, &at),
            suffix: if replace { TOOL_UPSERT } else { "" },
        })
        .await
        .map_err(self.db("cannot add tools"))
    }

    /// Adds all `skills` in one transaction. Fails with
    /// [`StoreError::DuplicateSkill`] (naming the first taken name, also a name
    /// repeated within `skills`) and then stores none of them. Returns the
    /// skills as stored (with timestamps).
    pub async fn add_skills(&self, skills: &[Skill]) -> Result<Vec<Skill>, StoreError> {
        self.import(&[], skills).await
    }

    /// In one transaction, writes catalogue `tools` (replacing same-named
    /// ones) and adds `skills` (as [`Store::add_skills`]): an import that
    /// fails on a taken skill name leaves no tool behind.
    pub async fn import(
        &self,
        tools: &[ToolSpec],
        skills: &[Skill],
    ) -> Result<Vec<Skill>, StoreError> {
        Ok(self
            .write_skills(tools, skills, &[], &[])
            .await?
            .added(skills))
    }

    /// Replaces existing definitions in one transaction, keeping `created_at`.
    /// A skill whose `updated_at` is `Some` must still have that `updated_at`
    /// in the store, otherwise the call fails with [`StoreError::Conflict`];
    /// `None` means "whatever is there now". A missing skill fails with
    /// [`StoreError::SkillNotFound`]. Either way nothing is written.
    pub async fn update_skills(&self, skills: &[Skill]) -> Result<Vec<Skill>, StoreError> {
        Ok(self
            .write_skills(&[], &[], skills, &[])
            .await?
            .updated(skills))
    }

    /// In one transaction: upserts catalogue `tools`, adds `add` (as
    /// [`Store::add_skills`]), replaces `update` (as
    /// [`Store::update_skills`]) and upserts the `registry_meta` rows `meta`
    /// (such as who wrote each skill); all land or none do. Returns the
    /// timestamps the skills were given.
    ///
    /// New skills are encoded and inserted one statement's worth at a time:
    /// the encoded rows and their bound values of a many-skill file never
    /// all exist at once (they would cost several times the skills).
    pub async fn write_skills(
        &self,
        tools: &[ToolSpec],
        add: &[Skill],
        update: &[Skill],
        meta: &[(&str, &str)],
    ) -> Result<WriteStamps, StoreError> {
        let now = codec::now();
        let at = codec::format_timestamp(now);
        if add.is_empty() && update.is_empty() && tools.is_empty() && meta.is_empty() {
            return Ok(WriteStamps {
                added_at: at,
                updated: Vec::new(),
            });
        }
        for (key, value) in meta {
            codec::check_meta(key, value)?;
        }
        if let Some(repeat) = codec::first_repeat(add.iter().chain(update).map(|skill| &skill.name))
        {
            return Err(StoreError::DuplicateSkill(repeat.clone()));
        }
        let encoded_updates = update
            .iter()
            .map(codec::encode_skill)
            .collect::<Result<Vec<_>, _>>()?;
        let tools = codec::last_wins(tools)
            .into_iter()
            .map(codec::encode_tool)
            .collect::<Result<Vec<_>, _>>()?;
        let mut attempt = 1;
        'write: loop {
            let mut tx = self.write().await?;
            if !tools.is_empty() {
                self.lock_tools(&mut tx).await?;
                self.upsert_tools(&mut tx, &tools, true).await?;
            }
            self.lock_included(&mut tx, add.iter().chain(update))
                .await?;
            for batch in add.chunks(self.dialect().rows_per_insert(SKILL_INSERT.len())) {
                let encoded = batch
                    .iter()
                    .map(codec::encode_skill)
                    .collect::<Result<Vec<_>, _>>()?;
                if let Err(err) = self.insert_skills(&mut tx, &encoded, &at).await {
                    drop(tx);
                    if is_unique_violation(&err) {
                        let names: Vec<&str> =
                            add.iter().map(|skill| skill.name.as_str()).collect();
                        if let Some(name) = self.taken_after_race("skills", &names).await {
                            return Err(StoreError::DuplicateSkill(self.skill_name(name)?));
                        }
                        // Another writer added one of the names after this
                        // transaction checked them and has removed it again
                        // since: every name is free, so the write is made
                        // again, as if it had come after both.
                        if attempt < RACED_INSERT_ATTEMPTS {
                            attempt += 1;
                            continue 'write;
                        }
                    }
                    return Err(err);
                }
            }
            let updated = self
                .replace_skills(&mut tx, update, &encoded_updates, now)
                .await?;
            self.upsert_meta(&mut tx, meta)
                .await
                .map_err(self.db("cannot write `registry_meta`"))?;
            self.commit(tx, "cannot commit the skills").await?;
            return Ok(WriteStamps {
                added_at: at,
                updated,
            });
        }
    }

    /// Locks, until `tx` ends, the registered skills that `written` include
    /// (those it does not write itself), where writers are not serialized
    /// anyway: a concurrent [`Store::remove_skill`] of one of them then
    /// either waits and sees this write's include, or has removed it
    /// before this write reads it (an include of a missing skill, as when
    /// the write came later).
    async fn lock_included<'s>(
        &self,
        tx: &mut Conn<'_>,
        written: impl Iterator<Item = &'s Skill>,
    ) -> Result<(), StoreError> {
        let lock = self.dialect().for_key_share;
        if lock.is_empty() {
            return Ok(());
        }
        let written: Vec<&Skill> = written.collect();
        let own: HashSet<&str> = written.iter().map(|skill| skill.name.as_str()).collect();
        let mut targets: Vec<&str> = written
            .iter()
            .flat_map(|skill| skill.includes())
            .map(|include| include.skill.as_str())
            .filter(|target| !own.contains(target))
            .collect();
        if targets.is_empty() {
            return Ok(());
        }
        // Each row once, in one order whoever writes.
        targets.sort_unstable();
        targets.dedup();
        let sql = format!(
            "SELECT name FROM skills WHERE name IN ({}) ORDER BY name{lock}",
            self.dialect().names
        );
        tx.fetch_texts(&sql, &[Arg::Names(&targets)])
            .await
            .map_err(self.db("cannot lock the included skills"))?;
        Ok(())
    }

    /// Replaces existing skills inside `tx`.
    async fn replace_skills(
        &self,
        tx: &mut Conn<'_>,
        skills: &[Skill],
        encoded: &[SkillColumns],
        now: time::OffsetDateTime,
    ) -> Result<Vec<(String, String)>, StoreError> {
        let read = format!(
            "SELECT created_at, updated_at FROM skills WHERE name = ?{}",
            self.dialect().for_no_key_update
        );
        let mut updated = Vec::with_capacity(skills.len());
        for (skill, columns) in skills.iter().zip(encoded) {
            let row = tx
                .fetch(&read, &[Arg::Text(&columns.name)])
                .await
                .map_err(self.db("cannot read the skill to update"))?
                .into_iter()
                .next();
            let Some(row) = row else {
                return Err(StoreError::SkillNotFound(skill.name.clone()));
            };
            let mut cells = Cells::new("skills", row);
            let created_at = cells.text("created_at")?;
            let found = cells.text("updated_at")?;
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
            let changed = tx
                .execute(
                    "UPDATE skills SET description = ?, version = ?, metadata_json = ?, updated_at = ? \
                     WHERE name = ? AND updated_at = ?",
                    &[
                        Arg::OptText(columns.description.as_deref()),
                        Arg::OptText(columns.version.as_deref()),
                        Arg::Text(&columns.metadata_json),
                        Arg::Text(&at),
                        Arg::Text(&columns.name),
                        Arg::Text(&found),
                    ],
                )
                .await
                .map_err(self.db("cannot update the skill"))?;
            if changed != 1 {
                return Err(StoreError::Conflict {
                    name: skill.name.clone(),
                    expected: found.clone(),
                    found,
                });
            }
            tx.execute(
                "DELETE FROM skill_items WHERE skill_name = ?",
                &[Arg::Text(&columns.name)],
            )
            .await
            .map_err(self.db("cannot replace the skill's items"))?;
            tx.insert(&Insert {
                table: "skill_items",
                columns: ITEM_INSERT,
                values: item_values(std::slice::from_ref(columns), &at),
                suffix: "",
            })
            .await
            .map_err(self.db("cannot replace the skill's items"))?;
            updated.push((created_at, at));
        }
        Ok(updated)
    }

    /// The skill called `name`, with its items in `item_order`.
    pub async fn get_skill(&self, name: &SkillName) -> Result<Option<Skill>, StoreError> {
        let failed = "cannot read the skill";
        let mut tx = self.read().await?;
        let row = tx
            .fetch(
                &format!("SELECT {SKILL_COLUMNS} FROM skills WHERE name = ?"),
                &[Arg::Text(name.as_str())],
            )
            .await
            .map_err(self.db(failed))?
            .into_iter()
            .next();
        let Some(row) = row else {
            return Ok(None);
        };
        let items = tx
            .fetch(
                &format!(
                    "SELECT {ITEM_COLUMNS} FROM skill_items WHERE skill_name = ? ORDER BY item_order"
                ),
                &[Arg::Text(name.as_str())],
            )
            .await
            .map_err(self.db(failed))?;
        self.commit(tx, failed).await?;
        codec::decode_skill(skill_row(row)?, decode_rows(items, item_row)?).map(Some)
    }

    /// Skills sorted by name, optionally only those in `namespace`.
    pub async fn list_skills(
        &self,
        namespace: Option<&str>,
    ) -> Result<Vec<SkillSummary>, StoreError> {
        let select = "SELECT s.name, s.namespace, s.short_name, s.description, s.version, s.updated_at, \
                      (SELECT COUNT(*) FROM skill_items i WHERE i.skill_name = s.name) AS items FROM skills s";
        let failed = "cannot list skills";
        let mut conn = self.conn(failed).await?;
        let found = match namespace {
            Some(namespace) => {
                conn.fetch(
                    &format!("{select} WHERE s.namespace = ? ORDER BY s.name"),
                    &[Arg::Text(namespace)],
                )
                .await
            }
            None => conn.fetch(&format!("{select} ORDER BY s.name"), &[]).await,
        }
        .map_err(self.db(failed))?;
        let summary = |row: Vec<Cell>| -> Result<SkillSummary, StoreError> {
            let mut cells = Cells::new("skills", row);
            Ok(SkillSummary {
                name: self.skill_name(&cells.text("name")?)?,
                namespace: cells.text("namespace")?,
                short_name: cells.text("short_name")?,
                description: cells.opt_text("description")?,
                version: cells.opt_text("version")?,
                updated_at: cells.text("updated_at")?,
                items: count(cells.int("items")?),
            })
        };
        // A row with a name no skill may have (written by hand or by another
        // client) is left out with a warning, as `readable_skills` leaves out
        // a row that does not decode: the listing goes on for everyone.
        Ok(readable("skill", found, summary))
    }

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
    pub async fn remove_skill(
        &self,
        name: &SkillName,
        force: bool,
    ) -> Result<Option<Vec<SkillName>>, StoreError> {
        let failed = "cannot remove the skill";
        let mut tx = self.write().await?;
        // The row first, then its includers: a writer that includes it holds
        // a key-share lock on it until it commits ([`Self::lock_included`]),
        // so this waits for that include and then reads it (each statement
        // of a READ COMMITTED transaction sees what committed before it); a
        // writer coming later waits for this delete. SQLite's writers are
        // serialized by `BEGIN IMMEDIATE`.
        if !self.dialect().for_update.is_empty() {
            let lock = format!(
                "SELECT name FROM skills WHERE name = ?{}",
                self.dialect().for_update
            );
            tx.fetch_texts(&lock, &[Arg::Text(name.as_str())])
                .await
                .map_err(self.db(failed))?;
        }
        let includers = tx
            .fetch_texts(
                "SELECT DISTINCT skill_name FROM skill_items \
                 WHERE item_name = ? AND item_type = 'include' AND skill_name <> ? \
                 ORDER BY skill_name",
                &[Arg::Text(name.as_str()), Arg::Text(name.as_str())],
            )
            .await
            .map_err(self.db(failed))?
            .iter()
            .map(|n| self.skill_name(n))
            .collect::<Result<Vec<_>, _>>()?;
        if !includers.is_empty() && !force {
            return Err(StoreError::SkillIncluded {
                name: name.clone(),
                by: includers,
            });
        }
        let done = tx
            .execute(
                "DELETE FROM skills WHERE name = ?",
                &[Arg::Text(name.as_str())],
            )
            .await
            .map_err(self.db(failed))?;
        self.commit(tx, failed).await?;
        Ok((done > 0).then_some(includers))
    }

    /// The given skills and every skill reachable through their includes, in
    /// a bounded number of queries (not one per skill). Missing names are
    /// simply absent from the result.
    pub async fn load_closure(&self, roots: &[SkillName]) -> Result<Vec<Skill>, StoreError> {
        if roots.is_empty() {
            return Ok(Vec::new());
        }
        let failed = "cannot load the skills and their includes";
        let roots: Vec<&str> = roots.iter().map(SkillName::as_str).collect();
        let dialect = self.dialect();
        let sql = closure_sql(dialect);
        let mut conn = self.conn(failed).await?;
        let (mut skills, items) = match dialect.json_rows {
            Some(_) => {
                let found = conn
                    .fetch(&sql, &[Arg::Names(&roots)])
                    .await
                    .map_err(self.db(failed))?;
                let mut cells = found.into_iter().next().unwrap_or_default().into_iter();
                let mut json_cell = |table: &'static str| -> Result<String, StoreError> {
                    match cells.next() {
                        Some(Cell::Text(text)) => Ok(text),
                        Some(Cell::Null) | None => Ok("[]".to_owned()),
                        Some(_) => Err(StoreError::corrupt(
                            table,
                            "(closure)",
                            "the closure aggregate is not JSON text",
                        )),
                    }
                };
                let skills = json_cell("skills")?;
                let items = json_cell("skill_items")?;
                (
                    codec::rows_from_json::<codec::SkillRow>(&skills, "skills")?,
                    codec::rows_from_json::<ItemRow>(&items, "skill_items")?,
                )
            }
            None => {
                let found = conn
                    .fetch(&sql, &[Arg::Names(&roots)])
                    .await
                    .map_err(self.db(failed))?;
                let mut skills = Vec::new();
                let mut items = Vec::with_capacity(found.len());
                for mut row in found {
                    let tag = if row.is_empty() {
                        Cell::Null
                    } else {
                        row.remove(0)
                    };
                    match tag {
                        Cell::Int(0) => skills.push(skill_row(row)?),
                        _ => items.push(item_row(row)?),
                    }
                }
                (skills, items)
            }
        };
        // Byte order, the same on both backends (a PostgreSQL collation need
        // not be).
        skills.sort_by(|a, b| a.name.cmp(&b.name));
        codec::decode_skills(skills, items)
    }

    /// Every skill with its items, sorted by name (for export: one row that
    /// does not decode fails the whole read).
    pub async fn all_skills(&self) -> Result<Vec<Skill>, StoreError> {
        let (skills, items) = self.all_skill_rows().await?;
        codec::decode_skills(skills, items)
    }

    /// Every skill that decodes, sorted by name, and the error of each that
    /// does not: for a listing across the registry, which shows the rest
    /// rather than fail for everyone over one row somebody wrote badly.
    pub async fn readable_skills(&self) -> Result<Readable, StoreError> {
        let (skills, items) = self.all_skill_rows().await?;
        let mut readable = Readable::default();
        for decoded in codec::decode_each(skills, items) {
            match decoded {
                Ok(skill) => readable.skills.push(skill),
                Err(err) => readable.corrupt.push(err),
            }
        }
        Ok(readable)
    }

    /// Every skill row, by name, and every item row.
    async fn all_skill_rows(&self) -> Result<(Vec<SkillRow>, Vec<ItemRow>), StoreError> {
        let failed = "cannot read all skills";
        let mut tx = self.read().await?;
        let skills = tx
            .fetch(
                &format!("SELECT {SKILL_COLUMNS} FROM skills ORDER BY name"),
                &[],
            )
            .await
            .map_err(self.db(failed))?;
        let items = tx
            .fetch(&format!("SELECT {ITEM_COLUMNS} FROM skill_items"), &[])
            .await
            .map_err(self.db(failed))?;
        self.commit(tx, failed).await?;
        Ok((
            decode_rows(skills, skill_row)?,
            decode_rows(items, item_row)?,
        ))
    }

    /// Adds tools in one transaction. With `replace` false a taken name fails
    /// with [`StoreError::DuplicateTool`] and nothing is written.
    pub async fn put_tools(&self, tools: &[ToolSpec], replace: bool) -> Result<(), StoreError> {
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
            .into_iter()
            .map(codec::encode_tool)
            .collect::<Result<Vec<_>, _>>()?;
        let names: Vec<&str> = encoded.iter().map(|tool| tool.name.as_str()).collect();
        let mut tx = self.write().await?;
        self.lock_tools(&mut tx).await?;
        if !replace {
            let taken = self.existing(&mut tx, "tools", &names).await?;
            if let Some(name) = names.iter().find(|name| taken.contains(**name)) {
                return Err(StoreError::DuplicateTool((*name).to_owned()));
            }
        }
        if let Err(err) = self.upsert_tools(&mut tx, &encoded, replace).await {
            drop(tx);
            if is_unique_violation(&err)
                && let Some(name) = self.taken_after_race("tools", &names).await
            {
                return Err(StoreError::DuplicateTool(name.to_owned()));
            }
            return Err(err);
        }
        self.commit(tx, "cannot commit the tools").await
    }

    /// The tool called `name`.
    pub async fn get_tool(&self, name: &str) -> Result<Option<ToolSpec>, StoreError> {
        let failed = "cannot read the tool";
        let mut conn = self.conn(failed).await?;
        let row = conn
            .fetch(
                "SELECT name, spec_json FROM tools WHERE name = ?",
                &[Arg::Text(name)],
            )
            .await
            .map_err(self.db(failed))?
            .into_iter()
            .next();
        row.map(tool_row).transpose()
    }

    /// The tools called `names` (those that exist), in one query.
    pub async fn get_tools(&self, names: &[String]) -> Result<Vec<ToolSpec>, StoreError> {
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let list: Vec<&str> = names.iter().map(String::as_str).collect();
        let failed = "cannot read tools";
        let mut conn = self.conn(failed).await?;
        let found = conn
            .fetch(
                &format!(
                    "SELECT name, spec_json FROM tools WHERE name IN ({})",
                    self.dialect().names
                ),
                &[Arg::Names(&list)],
            )
            .await
            .map_err(self.db(failed))?;
        Ok(codec::in_request_order(names, readable_tools(found)))
    }

    /// Tools sorted by name, optionally of one source only. A row that does
    /// not decode is left out with a warning, here and in
    /// [`Self::get_tools`]: a listing goes on for everyone over one bad row.
    pub async fn list_tools(
        &self,
        source: Option<ToolSource>,
    ) -> Result<Vec<ToolSpec>, StoreError> {
        let failed = "cannot list tools";
        let mut conn = self.conn(failed).await?;
        let found = match source {
            Some(source) => {
                conn.fetch(
                    "SELECT name, spec_json FROM tools WHERE source = ? ORDER BY name",
                    &[Arg::Text(source.as_str())],
                )
                .await
            }
            None => {
                conn.fetch("SELECT name, spec_json FROM tools ORDER BY name", &[])
                    .await
            }
        }
        .map_err(self.db(failed))?;
        Ok(readable_tools(found))
    }

    /// Every tool, sorted by name (for export: one row that does not decode
    /// fails the whole read).
    pub async fn all_tools(&self) -> Result<Vec<ToolSpec>, StoreError> {
        let failed = "cannot read all tools";
        let mut conn = self.conn(failed).await?;
        let found = conn
            .fetch("SELECT name, spec_json FROM tools ORDER BY name", &[])
            .await
            .map_err(self.db(failed))?;
        decode_rows(found, tool_row)
    }

    /// The previous generation of `group` (sorted by name); empty when none was kept.
    pub async fn previous_tools(&self, group: &ToolGroup) -> Result<Vec<ToolSpec>, StoreError> {
        let failed = "cannot list the previous tools";
        let mut conn = self.conn(failed).await?;
        let found = match &group.origin {
            Some(origin) => {
                conn.fetch(
                    "SELECT name, spec_json FROM tools_previous WHERE source = ? AND origin = ? ORDER BY name",
                    &[Arg::Text(group.source.as_str()), Arg::Text(origin)],
                )
                .await
            }
            None => {
                conn.fetch(
                    "SELECT name, spec_json FROM tools_previous WHERE source = ? ORDER BY name",
                    &[Arg::Text(group.source.as_str())],
                )
                .await
            }
        }
        .map_err(self.db(failed))?;
        decode_rows(found, tool_row)
    }

    /// Deletes the tool stored as `name`; `None` when absent. `Some` holds
    /// the skills (sorted) whose tool refs name it as `named_as` (the name
    /// skills write; a discovered tool is stored under its scope's name):
    /// their tool sets warn about an unknown tool from then on.
    pub async fn remove_tool(
        &self,
        name: &str,
        named_as: &str,
    ) -> Result<Option<Vec<SkillName>>, StoreError> {
        let failed = "cannot remove the tool";
        let mut tx = self.write().await?;
        self.lock_tools(&mut tx).await?;
        let done = tx
            .execute("DELETE FROM tools WHERE name = ?", &[Arg::Text(name)])
            .await
            .map_err(self.db(failed))?;
        if done == 0 {
            return Ok(None);
        }
        // In the same transaction as the delete, so the list is the skills
        // the removal left naming an unknown tool (the index on
        // `(item_name, item_type)` answers it).
        let users = tx
            .fetch_texts(
                "SELECT DISTINCT skill_name FROM skill_items \
                 WHERE item_name = ? AND item_type = 'tool_ref' ORDER BY skill_name",
                &[Arg::Text(named_as)],
            )
            .await
            .map_err(self.db(failed))?
            .iter()
            .map(|n| self.skill_name(n))
            .collect::<Result<Vec<_>, _>>()?;
        self.commit(tx, failed).await?;
        Ok(Some(users))
    }

    /// In one transaction, deletes every tool of `group`, inserts `tools`
    /// (which replace same-named tools of any source) and upserts the
    /// `registry_meta` rows `meta` (such as when the group was fetched). Used
    /// by discovery and MCP refresh so a failure leaves the old catalogue and
    /// its meta intact. Returns how many tools were deleted.
    pub async fn replace_tool_group(
        &self,
        group: &ToolGroup,
        tools: &[ToolSpec],
        meta: &[(&str, &str)],
    ) -> Result<u64, StoreError> {
        self.replace_group(group, tools, meta, false).await
    }

    /// [`Store::replace_tool_group`] that first keeps the group's current
    /// rows as its previous generation (replacing the one kept before), in
    /// the same transaction: a refresh that changed the group calls this.
    pub async fn replace_tool_group_keeping_previous(
        &self,
        group: &ToolGroup,
        tools: &[ToolSpec],
        meta: &[(&str, &str)],
    ) -> Result<u64, StoreError> {
        self.replace_group(group, tools, meta, true).await
    }

    async fn replace_group(
        &self,
        group: &ToolGroup,
        tools: &[ToolSpec],
        meta: &[(&str, &str)],
        keep_previous: bool,
    ) -> Result<u64, StoreError> {
        for (key, value) in meta {
            codec::check_meta(key, value)?;
        }
        let encoded = codec::last_wins(tools)
            .into_iter()
            .map(codec::encode_tool)
            .collect::<Result<Vec<_>, _>>()?;
        let failed = "cannot replace the tool group";
        let mut tx = self.write().await?;
        self.lock_tools(&mut tx).await?;
        if keep_previous {
            // One generation: the group's rows as they are now replace the
            // previous generation of the same group.
            let (filter, args): (&str, Vec<Arg<'_>>) = match &group.origin {
                Some(origin) => (
                    "source = ? AND origin = ?",
                    vec![Arg::Text(group.source.as_str()), Arg::Text(origin)],
                ),
                None => ("source = ?", vec![Arg::Text(group.source.as_str())]),
            };
            tx.execute(&format!("DELETE FROM tools_previous WHERE {filter}"), &args)
                .await
                .map_err(self.db(failed))?;
            tx.execute(
                &format!(
                    "INSERT INTO tools_previous (name, source, origin, spec_json, created_at, updated_at) \
                     SELECT name, source, origin, spec_json, created_at, updated_at FROM tools WHERE {filter}"
                ),
                &args,
            )
            .await
            .map_err(self.db(failed))?;
        }
        let deleted = match &group.origin {
            Some(origin) => {
                tx.execute(
                    "DELETE FROM tools WHERE source = ? AND origin = ?",
                    &[Arg::Text(group.source.as_str()), Arg::Text(origin)],
                )
                .await
            }
            None => {
                tx.execute(
                    "DELETE FROM tools WHERE source = ?",
                    &[Arg::Text(group.source.as_str())],
                )
                .await
            }
        }
        .map_err(self.db(failed))?;
        self.upsert_tools(&mut tx, &encoded, true).await?;
        self.upsert_meta(&mut tx, meta)
            .await
            .map_err(self.db(failed))?;
        self.commit(tx, failed).await?;
        Ok(deleted)
    }

    /// Why one statement: an upsert, so the same key written twice keeps one
    /// row, and one bulk statement for all of them (a skill add records its
    /// writer per skill: 10,000 rows are one round trip, not 10,000).
    async fn upsert_meta(
        &self,
        tx: &mut Conn<'_>,
        meta: &[(&str, &str)],
    ) -> Result<(), DriverError> {
        if meta.is_empty() {
            return Ok(());
        }
        // The last value of a key given twice: one statement cannot upsert a
        // key twice.
        let mut seen = HashSet::with_capacity(meta.len());
        let values = meta
            .iter()
            .rev()
            .filter(|(key, _)| seen.insert(*key))
            .flat_map(|(key, value)| [Arg::Text(key), Arg::Text(value)])
            .collect();
        tx.insert(&Insert {
            table: "registry_meta",
            columns: META_INSERT,
            values,
            suffix: META_UPSERT,
        })
        .await
    }

    /// A value from the small key/value `registry_meta` table.
    pub async fn get_meta(&self, key: &str) -> Result<Option<String>, StoreError> {
        let failed = "cannot read `registry_meta`";
        let mut conn = self.conn(failed).await?;
        let found = conn
            .fetch(
                "SELECT value FROM registry_meta WHERE key = ?",
                &[Arg::Text(key)],
            )
            .await
            .map_err(self.db(failed))?;
        match found.into_iter().next() {
            Some(row) => Cells::new("registry_meta", row).text("value").map(Some),
            None => Ok(None),
        }
    }

    /// Sets a `registry_meta` value.
    pub async fn set_meta(&self, key: &str, value: &str) -> Result<(), StoreError> {
        codec::check_meta(key, value)?;
        let failed = "cannot write `registry_meta`";
        let mut tx = self.write().await?;
        self.upsert_meta(&mut tx, &[(key, value)])
            .await
            .map_err(self.db(failed))?;
        self.commit(tx, failed).await
    }

    /// A cheap fingerprint of the whole registry (one query over indexed
    /// columns: row counts and the latest `updated_at` of skills and tools,
    /// the item count and the latest `registry_meta` value): it changes when a
    /// skill is added, updated or removed and when the catalogue is written
    /// (tool add/remove, discovery, MCP refresh). Equal stamps mean "probably
    /// unchanged"; callers re-read to learn what changed.
    pub async fn change_stamp(&self) -> Result<String, StoreError> {
        let failed = "cannot read the registry's change stamp";
        let mut conn = self.conn(failed).await?;
        let found = conn
            .fetch(
                "SELECT CAST((SELECT COUNT(*) FROM skills) AS TEXT) || ':' || \
                 COALESCE((SELECT MAX(updated_at) FROM skills), '') || ':' || \
                 CAST((SELECT COUNT(*) FROM skill_items) AS TEXT) || ':' || \
                 CAST((SELECT COUNT(*) FROM tools) AS TEXT) || ':' || \
                 COALESCE((SELECT MAX(updated_at) FROM tools), '') || ':' || \
                 CAST((SELECT COUNT(*) FROM registry_meta) AS TEXT) || ':' || \
                 COALESCE((SELECT MAX(value) FROM registry_meta), '') AS stamp",
                &[],
            )
            .await
            .map_err(self.db(failed))?;
        Cells::new(
            "registry_meta",
            found.into_iter().next().unwrap_or_default(),
        )
        .text("stamp")
    }

    /// Backend, schema version and row counts.
    pub async fn status(&self) -> Result<StoreStatus, StoreError> {
        let failed = "cannot read the store status";
        let dialect = self.dialect();
        let mut tx = self.read().await?;
        let schema_version = migrate::applied_version(&mut tx)
            .await
            .map_err(self.db(failed))?;
        let found = tx
            .fetch(
                "SELECT (SELECT COUNT(*) FROM skills), (SELECT COUNT(*) FROM skill_items), \
                 (SELECT COUNT(*) FROM tools)",
                &[],
            )
            .await
            .map_err(self.db(failed))?;
        self.commit(tx, failed).await?;
        let mut cells = Cells::new("skills", found.into_iter().next().unwrap_or_default());
        Ok(StoreStatus {
            backend: dialect.backend,
            location: self.location.clone(),
            schema_version,
            supported_version: dialect.latest_version(),
            skills: count(cells.int("skills")?),
            skill_items: count(cells.int("skill_items")?),
            tools: count(cells.int("tools")?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agents_core::{Include, SkillItem};

    use crate::dialect;

    /// `depth` skills, each with a tool and an include of the next.
    fn chain(depth: usize) -> Vec<Skill> {
        (0..depth)
            .map(|i| {
                let name = |i: usize| SkillName::new(&format!("chain/s{i:05}")).unwrap();
                let mut skill = Skill::new(name(i));
                skill.items.push(SkillItem::ToolRef {
                    name: format!("t/{i}").as_str().into(),
                });
                if i + 1 < depth {
                    skill.items.push(SkillItem::Include(Include {
                        skill: name(i + 1),
                        overrides: Default::default(),
                    }));
                }
                skill
            })
            .collect()
    }

    /// The work SQLite does for [`closure_sql`] from the head of a
    /// `depth`-long chain, as SQLite counts it: (rows returned, virtual
    /// machine steps, full-scan steps).
    async fn sqlite_closure_work(depth: usize) -> (usize, i32, i32) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("registry.db");
        let store = Store::create(&DatabaseUrl::Sqlite(path.clone()))
            .await
            .unwrap();
        store.add_skills(&chain(depth)).await.unwrap();
        let conn = rusqlite::Connection::open(&path).unwrap();
        let mut statement = conn.prepare(&closure_sql(&dialect::SQLITE)).unwrap();
        let roots = codec::json_array(["chain/s00000"]);
        let rows = statement
            .query_map([roots], |_| Ok(()))
            .unwrap()
            .map(Result::unwrap)
            .count();
        (
            rows,
            statement.get_status(rusqlite::StatementStatus::VmStep),
            statement.get_status(rusqlite::StatementStatus::FullscanStep),
        )
    }

    /// Each step of the recursive closure must look up only the new name's
    /// items; a plan that scans every include per step is quadratic in the
    /// chain's depth. Counted by SQLite, not timed: twice the depth may cost
    /// at most about twice the steps.
    #[tokio::test]
    async fn sqlite_closure_work_is_linear_in_the_chain_depth() {
        const DEPTH: usize = 2_000;
        let (rows, steps, scans) = sqlite_closure_work(DEPTH).await;
        let (rows2, steps2, scans2) = sqlite_closure_work(2 * DEPTH).await;
        // Every skill's row and its items' rows (the last has no include).
        assert_eq!((rows, rows2), (3 * DEPTH - 1, 6 * DEPTH - 1));
        eprintln!(
            "closure of {DEPTH}: {steps} VM steps, {scans} full-scan steps; of {}: {steps2}, {scans2}",
            2 * DEPTH
        );
        assert!(
            f64::from(steps2) <= 2.2 * f64::from(steps),
            "VM steps: {steps} at depth {DEPTH}, {steps2} at twice that"
        );
        assert!(
            f64::from(scans2) <= 2.2 * f64::from(scans.max(1)),
            "full-scan steps: {scans} at depth {DEPTH}, {scans2} at twice that"
        );
    }

    /// `url` pointing at database `database` instead, parameters kept.
    fn with_database(url: &str, database: &str) -> String {
        let (base, query) = url
            .split_once('?')
            .map_or((url, None), |(b, q)| (b, Some(q)));
        let authority = base.find("://").map_or(0, |at| at + 3);
        let path = base[authority..]
            .find('/')
            .map_or(base.len(), |at| at + authority);
        match query {
            Some(query) => format!("{}/{database}?{query}", &base[..path]),
            None => format!("{}/{database}", &base[..path]),
        }
    }

    /// The rows PostgreSQL's executor handles for [`closure_sql`] from the
    /// head of a `depth`-long chain, bulk-loaded and not yet analyzed, as
    /// `EXPLAIN ANALYZE` counts them: each plan node's rows (kept and removed
    /// by a filter) times its loops.
    async fn postgres_closure_work(admin_url: &str, depth: usize) -> u64 {
        use sqlx::{Connection, Executor};
        let database = format!("t_closure_work_{}_{depth}", std::process::id());
        let mut admin = sqlx::PgConnection::connect(admin_url).await.unwrap();
        admin
            .execute(sqlx::AssertSqlSafe(format!(
                "CREATE DATABASE \"{database}\""
            )))
            .await
            .unwrap();
        let url = with_database(admin_url, &database);
        // Its own task, so that a panic still drops the database.
        let outcome = tokio::spawn(async move {
            let store = Store::open(&DatabaseUrl::Postgres(url.clone()))
                .await
                .unwrap();
            store.add_skills(&chain(depth)).await.unwrap();
            let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
            let sql = format!(
                "EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) {}",
                closure_sql(&dialect::POSTGRES)
            );
            let plan: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(
                dialect::POSTGRES.sql(&sql).into_owned(),
            ))
            .bind(vec!["chain/s00000"])
            .fetch_all(&mut conn)
            .await
            .unwrap();
            let _ = conn.close().await;
            plan
        })
        .await;
        admin
            .execute(sqlx::AssertSqlSafe(format!(
                "DROP DATABASE IF EXISTS \"{database}\" WITH (FORCE)"
            )))
            .await
            .unwrap();
        let plan = outcome.unwrap();
        let number = |text: &str, after: &str| -> Option<u64> {
            let rest = &text[text.find(after)? + after.len()..];
            rest.split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()
        };
        let (mut work, mut loops) = (0, 1);
        for line in &plan {
            if let (Some(rows), Some(node_loops)) = (number(line, "rows="), number(line, "loops="))
            {
                loops = node_loops;
                work += rows * loops;
            } else if let Some(removed) = number(line, "Rows Removed by Filter: ") {
                work += removed * loops;
            }
        }
        assert!(work > 0, "no row counts in the plan: {plan:#?}");
        work
    }

    /// The PostgreSQL closure must stay an index lookup per new name even
    /// before the first ANALYZE: a plain join then scans every include once
    /// per step. Counted by the executor, not timed.
    #[tokio::test]
    async fn postgres_closure_work_is_linear_in_the_chain_depth() {
        const VAR: &str = "AGENTS_TEST_POSTGRES_URL";
        let Some(admin_url) = std::env::var(VAR).ok().filter(|url| !url.trim().is_empty()) else {
            assert!(
                std::env::var("CI").as_deref() != Ok("true")
                    && std::env::var("AGENTS_TEST_REQUIRE_ALL").is_err(),
                "{VAR} is not set; PostgreSQL tests must not be skipped here"
            );
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED (no {VAR}): postgres_closure_work_is_linear_in_the_chain_depth"
            );
            return;
        };
        const DEPTH: usize = 2_000;
        let work = postgres_closure_work(&admin_url, DEPTH).await;
        let work2 = postgres_closure_work(&admin_url, 2 * DEPTH).await;
        eprintln!(
            "closure of {DEPTH}: {work} rows handled; of {}: {work2}",
            2 * DEPTH
        );
        assert!(
            work2 as f64 <= 2.2 * work as f64,
            "rows handled: {work} at depth {DEPTH}, {work2} at twice that"
        );
    }
}
