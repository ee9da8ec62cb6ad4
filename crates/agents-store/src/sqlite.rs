//! The embedded SQLite backend: its dialect, how it opens a file, and how
//! statements are bound and rows decoded. The store's logic is in
//! `engine.rs`.
//!
//! Concurrency model: every write transaction starts with `BEGIN IMMEDIATE`,
//! so writers (in this process or another) queue on the database lock through
//! the busy timeout instead of failing when a read lock cannot be upgraded.
//! Reads run in deferred transactions, which in WAL mode see one snapshot and
//! never block writers.

use std::path::Path;
use std::str::FromStr;
use std::time::{Duration, Instant};

use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection, SqlitePoolOptions, SqliteRow};
use sqlx::{AssertSqlSafe, Row, Sqlite, TypeInfo, ValueRef};

use crate::StoreError;
use crate::engine::{Engine, Pool};
use crate::migrate;
use crate::sql::{Arg, Cell, Conn, Dialect, Insert};

/// How long a statement waits for another writer before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a task waits for a free pooled connection; longer than the busy
/// timeout because the connection holders may themselves be waiting on it.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(30);
const MAX_CONNECTIONS: u32 = 4;

pub(crate) static DIALECT: Dialect = Dialect {
    backend: "sqlite",
    numbered: false,
    read_begin: "BEGIN",
    write_begin: "BEGIN IMMEDIATE",
    lock_tools: None,
    migration_lock: None,
    for_update: "",
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
    json_rows: ("json_group_array(json_array(", "))"),
    schema_table_exists: "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'",
    // Far below SQLite's 32766 parameters, large enough that a 10,000-skill
    // batch is a few dozen statements.
    insert_params: 6_000,
    migrations: migrate::list::SQLITE,
};

/// A registry in one SQLite file.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pub(crate) engine: Engine,
}

fn is_busy(err: &sqlx::Error) -> bool {
    err.as_database_error()
        .and_then(|db| db.code())
        .and_then(|code| code.parse::<i32>().ok())
        // SQLITE_BUSY and SQLITE_LOCKED, with any extended code.
        .is_some_and(|code| matches!(code & 0xff, 5 | 6))
}

impl SqliteStore {
    /// Opens (creating it and its directory if needed) the database at
    /// `path` and applies pending migrations.
    pub async fn open(path: &Path) -> Result<Self, StoreError> {
        Self::open_in(path, false).await
    }

    /// Like [`open`](Self::open), but creates the file's missing parent
    /// directories first (`agents db init` and the default location).
    pub async fn create(path: &Path) -> Result<Self, StoreError> {
        Self::open_in(path, true).await
    }

    /// Opens `path`; a missing parent directory is created when `create_dirs`,
    /// else an error (a mistyped path must not become a new empty registry).
    async fn open_in(path: &Path, create_dirs: bool) -> Result<Self, StoreError> {
        if let Some(parent) = path
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())
        {
            if create_dirs {
                crate::private::create_dir_all(parent).map_err(|source| StoreError::Io {
                    context: format!("cannot create directory `{}`", parent.display()),
                    source,
                })?;
            } else if !parent.is_dir() {
                return Err(StoreError::MissingDirectory(parent.to_path_buf()));
            }
        }
        // Made here (mode 0600) rather than by SQLite (0644 under the usual
        // umask); SQLite gives its `-wal` and `-shm` files the same mode.
        let created = crate::private::create_file(path).map_err(|source| StoreError::Io {
            context: format!("cannot create the database file `{}`", path.display()),
            source,
        })?;
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .foreign_keys(true)
            .busy_timeout(BUSY_TIMEOUT);
        let pool = SqlitePoolOptions::new()
            .max_connections(MAX_CONNECTIONS)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect_lazy_with(options);
        let engine = Engine::new(Pool::Sqlite(pool), format!("sqlite://{}", path.display()));
        let store = Self::init(engine, true).await?;
        if created {
            for suffix in ["-wal", "-shm"] {
                let mut side = path.as_os_str().to_owned();
                side.push(suffix);
                crate::private::restrict_if_present(Path::new(&side)).map_err(|source| {
                    StoreError::Io {
                        context: format!("cannot make `{}` private", Path::new(&side).display()),
                        source,
                    }
                })?;
            }
        }
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
        Self::init(Engine::new(Pool::Sqlite(pool), location), false).await
    }

    async fn init(engine: Engine, wal: bool) -> Result<Self, StoreError> {
        let mut conn = engine.conn("cannot open the database").await?;
        if wal && let Conn::Sqlite(handle) = &mut conn {
            enable_wal(handle.conn())
                .await
                .map_err(engine.db("cannot switch to WAL journal mode"))?;
        }
        migrate::run(&mut conn, engine.location()).await?;
        drop(conn);
        Ok(Self { engine })
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

type Query<'q> = sqlx::query::Query<'q, Sqlite, <Sqlite as sqlx::Database>::Arguments>;

fn bind<'q>(mut query: Query<'q>, args: &[Arg<'_>]) -> Query<'q> {
    for arg in args {
        query = match *arg {
            Arg::Text(text) => query.bind(text),
            Arg::OptText(text) => query.bind(text),
            Arg::Int(value) => query.bind(value),
            Arg::Names(names) => query.bind(crate::codec::json_array(names.iter().copied())),
        };
    }
    query
}

pub(crate) async fn execute(
    conn: &mut SqliteConnection,
    sql: &str,
    args: &[Arg<'_>],
) -> Result<u64, sqlx::Error> {
    let done = bind(sqlx::query(AssertSqlSafe(sql)), args)
        .execute(conn)
        .await?;
    Ok(done.rows_affected())
}

pub(crate) async fn fetch(
    conn: &mut SqliteConnection,
    sql: &str,
    args: &[Arg<'_>],
) -> Result<Vec<Vec<Cell>>, sqlx::Error> {
    let rows = bind(sqlx::query(AssertSqlSafe(sql)), args)
        .fetch_all(conn)
        .await?;
    Ok(rows.iter().map(cells).collect())
}

fn cells(row: &SqliteRow) -> Vec<Cell> {
    (0..row.len())
        .map(|index| {
            let kind = match row.try_get_raw(index) {
                Ok(value) if value.is_null() => return Cell::Null,
                Ok(value) => value.type_info().name() == "INTEGER",
                Err(err) => return Cell::Bad(err.to_string()),
            };
            let decoded = if kind {
                row.try_get::<i64, _>(index).map(Cell::Int)
            } else {
                row.try_get::<String, _>(index).map(Cell::Text)
            };
            decoded.unwrap_or_else(|err| Cell::Bad(err.to_string()))
        })
        .collect()
}

/// Multi-row `VALUES`, chunked below SQLite's parameter limit.
pub(crate) async fn insert(
    conn: &mut SqliteConnection,
    insert: &Insert<'_>,
) -> Result<(), sqlx::Error> {
    let width = insert.columns.len();
    let group = format!("({})", vec!["?"; width].join(", "));
    let rows = DIALECT.rows_per_insert(width);
    for chunk in insert.values.chunks(rows * width) {
        let mut sql = format!(
            "INSERT INTO {} ({}) VALUES ",
            insert.table,
            insert.column_list()
        );
        for row in 0..chunk.len() / width {
            if row > 0 {
                sql.push_str(", ");
            }
            sql.push_str(&group);
        }
        sql.push_str(insert.suffix);
        bind(sqlx::query(AssertSqlSafe(sql)), chunk)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}
