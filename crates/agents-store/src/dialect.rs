//! What differs between the backends' SQL, as data: one [`Dialect`] per
//! backend ([`SQLITE`], [`POSTGRES`]), each difference beside the reason for
//! it. The store's logic (`store.rs`) is written once against these fields;
//! the drivers (`sqlite.rs`, `postgres.rs`) only bind values and read rows.
//!
//! Statements are written with `?` placeholders; PostgreSQL's are numbered
//! by [`Dialect::sql`]. Name lists are one bound argument that each dialect
//! expands through [`Dialect::names`].

use std::borrow::Cow;

/// One schema step.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Migration {
    /// From the file name `NNNN_name.sql`; strictly increasing from 1.
    pub version: i64,
    /// The file name's `name` part, recorded with the version.
    pub description: &'static str,
    /// The statements, run in one transaction.
    pub sql: &'static str,
}

/// The SQL files in `migrations/sqlite` and `migrations/postgres`, embedded
/// by `build.rs` in version order.
pub(crate) mod list {
    use super::Migration;
    include!(concat!(env!("OUT_DIR"), "/migrations.rs"));
}

/// What differs between the backends' SQL, in one place per backend.
#[derive(Debug)]
pub(crate) struct Dialect {
    /// `sqlite` or `postgres`.
    pub backend: &'static str,
    /// `$1, $2, ...` instead of `?`.
    pub numbered: bool,
    /// Opens a read transaction (one snapshot).
    pub read_begin: &'static str,
    /// Opens a write transaction that queues behind other writers.
    pub write_begin: &'static str,
    /// Run first in a write to the tool catalogue, if the backend needs it.
    pub lock_tools: Option<&'static str>,
    /// Run first in a migration transaction, if the backend needs it.
    pub migration_lock: Option<&'static str>,
    /// Appended to the read of a row about to be deleted.
    pub for_update: &'static str,
    /// Appended to the read of a row about to be updated (its key kept):
    /// weaker than [`Self::for_update`], so it does not wait for (or
    /// deadlock with) a writer that holds the row key-shared because it
    /// includes the skill.
    pub for_no_key_update: &'static str,
    /// Appended to the read of the skills a write includes: held until the
    /// write commits, it makes a concurrent removal of one of them wait
    /// (and then see the include). Empty where writers are serialized.
    pub for_key_share: &'static str,
    /// A subquery yielding the names of one bound name list as `name`.
    pub names: &'static str,
    /// `WITH RECURSIVE closure(name) AS (...)` from one bound name list.
    pub closure: &'static str,
    /// Opens and closes an aggregate that turns rows of columns into one JSON
    /// text (an array of arrays; NULL or `[]` for no rows), for a driver
    /// whose per-row cost is high: reads of many rows use it so that one row
    /// crosses from the driver, not thousands. `None`: read rows as they are.
    pub json_rows: Option<(&'static str, &'static str)>,
    /// One integer: 1 when `schema_migrations` exists, else 0.
    pub schema_table_exists: &'static str,
    /// Bound values per bulk statement.
    pub insert_params: usize,
    /// The schema steps, in version order.
    pub migrations: &'static [Migration],
}

/// The embedded SQLite dialect.
pub(crate) static SQLITE: Dialect = Dialect {
    backend: "sqlite",
    numbered: false,
    read_begin: "BEGIN",
    // Writers (in this process or another) queue on the database lock
    // through the busy timeout instead of failing when a read lock cannot
    // be upgraded.
    write_begin: "BEGIN IMMEDIATE",
    lock_tools: None,
    migration_lock: None,
    for_update: "",
    for_no_key_update: "",
    // `BEGIN IMMEDIATE` already serializes every writer.
    for_key_share: "",
    names: "SELECT value AS name FROM json_each(?)",
    // Each step must look up the new names' items through
    // (skill_name, item_order), never scan all includes: CROSS JOIN fixes
    // the loop order and the unary `+` keeps `item_type` out of index
    // selection.
    closure: "WITH RECURSIVE closure(name) AS (
                 SELECT value FROM json_each(?)
                 UNION
                 SELECT i.item_name FROM closure c CROSS JOIN skill_items i
                 WHERE i.skill_name = c.name AND +i.item_type = 'include'
             )",
    // Rows are cheap with a synchronous driver: no aggregate.
    json_rows: None,
    schema_table_exists: "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'",
    // Far below SQLite's 32766 parameters, large enough that a 10,000-skill
    // batch is a few dozen statements.
    insert_params: 6_000,
    migrations: list::SQLITE,
};

/// The PostgreSQL dialect (READ COMMITTED writes, row locks where SQLite
/// serializes writers; see `postgres.rs` for the concurrency model).
pub(crate) static POSTGRES: Dialect = Dialect {
    backend: "postgres",
    numbered: true,
    read_begin: "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY",
    write_begin: "BEGIN",
    // Tool writes lock the table against each other so a group
    // replacement is never interleaved with another.
    lock_tools: Some("LOCK TABLE tools IN SHARE ROW EXCLUSIVE MODE"),
    // Serializes concurrent migrations of one database across processes
    // (the key spells "agents").
    migration_lock: Some("SELECT pg_advisory_xact_lock(107096711263347)"),
    for_update: " FOR UPDATE",
    for_no_key_update: " FOR NO KEY UPDATE",
    // The weakest row lock a DELETE waits for: an update of the included
    // skill (`FOR NO KEY UPDATE`, then an UPDATE that keeps its name) goes
    // on beside it.
    for_key_share: " FOR KEY SHARE",
    // Bound as one array and expanded through `UNNEST`, never `= ANY($1)`:
    // a prepared statement's generic plan tests `ANY` linearly per row,
    // which is quadratic for a 10,000-name closure.
    names: "SELECT UNNEST(CAST(? AS TEXT[])) AS name",
    // Both terms are cast to one type and collation: PostgreSQL requires
    // the recursive column to agree. The LATERAL ... OFFSET 0 makes each
    // step an index lookup per new name whatever the statistics say;
    // a plain join, planned before the first ANALYZE of a bulk-loaded
    // table, scans every include once per step (seconds for a 10,000
    // deep chain instead of milliseconds).
    closure: "WITH RECURSIVE closure(name) AS (
                 SELECT CAST(r AS TEXT) COLLATE \"C\" FROM UNNEST(CAST(? AS TEXT[])) AS r
                 UNION
                 SELECT step.name FROM closure c CROSS JOIN LATERAL (
                     SELECT CAST(i.item_name AS TEXT) COLLATE \"C\" AS name FROM skill_items i
                     WHERE i.skill_name = c.name AND i.item_type = 'include'
                     OFFSET 0
                 ) AS step
             )",
    // sqlx decodes each row of a result separately; one JSON text is
    // cheaper for a closure of thousands of rows.
    json_rows: Some(("CAST(json_agg(json_build_array(", ")) AS TEXT)")),
    // A catalogue scan, not `to_regclass`: that answers from a per-session
    // cache that waiting on the migration lock does not refresh.
    schema_table_exists: "SELECT COUNT(*) FROM pg_catalog.pg_tables \
         WHERE schemaname = current_schema() AND tablename = 'schema_migrations'",
    // Each bulk statement is one message; bounded so a huge batch is not
    // one enormous one.
    insert_params: 60_000,
    migrations: list::POSTGRES,
};

impl Dialect {
    /// `sql` with this dialect's placeholders.
    pub(crate) fn sql<'s>(&self, sql: &'s str) -> Cow<'s, str> {
        if !self.numbered || !sql.contains('?') {
            return Cow::Borrowed(sql);
        }
        let mut out = String::with_capacity(sql.len() + 16);
        let mut number = 0;
        for ch in sql.chars() {
            if ch == '?' {
                number += 1;
                out.push('$');
                out.push_str(&number.to_string());
            } else {
                out.push(ch);
            }
        }
        Cow::Owned(out)
    }

    /// Rows per statement of a bulk insert with `columns` columns.
    pub(crate) fn rows_per_insert(&self, columns: usize) -> usize {
        (self.insert_params / columns.max(1)).max(1)
    }

    /// The newest schema version this build knows.
    pub(crate) fn latest_version(&self) -> i64 {
        self.migrations
            .iter()
            .map(|migration| migration.version)
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_placeholders_are_numbered() {
        assert_eq!(
            POSTGRES.sql("SELECT ? WHERE a = ? AND b = ?"),
            "SELECT $1 WHERE a = $2 AND b = $3"
        );
        assert_eq!(SQLITE.sql("SELECT ?"), "SELECT ?");
    }

    #[test]
    fn backends_are_in_step_and_versions_increase() {
        let labels = |list: &[Migration]| {
            list.iter()
                .map(|m| (m.version, m.description))
                .collect::<Vec<_>>()
        };
        assert_eq!(labels(SQLITE.migrations), labels(POSTGRES.migrations));
        for (index, migration) in SQLITE.migrations.iter().enumerate() {
            assert_eq!(migration.version, index as i64 + 1);
        }
        assert_eq!(SQLITE.latest_version(), SQLITE.migrations.len() as i64);
    }
}
