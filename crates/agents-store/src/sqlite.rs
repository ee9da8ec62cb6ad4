//! The embedded SQLite driver: how it opens a file, a small connection
//! pool, and how statements are bound and rows decoded. Its SQL differences
//! are [`dialect::SQLITE`]; the store's logic is in `store.rs`.
//!
//! The driver is synchronous (rusqlite): a statement runs on the calling
//! task's thread, as in the `sqlite3` CLI. An asynchronous SQLite driver
//! runs each connection on a worker thread and hands every row across; for
//! a closure of 13,000 rows that cost more than the query itself (see
//! BENCHMARKS.md). Blocking the task is fine here: SQLite is embedded,
//! its statements are short, and no transaction is held across a real
//! suspension point (the store's awaits inside a transaction are on this
//! backend's statements, which complete before returning).
//!
//! Concurrency model: every write transaction starts with `BEGIN IMMEDIATE`,
//! so writers (in this process or another) queue on the database lock through
//! the busy timeout instead of failing when a read lock cannot be upgraded.
//! Reads run in deferred transactions, which in WAL mode see one snapshot and
//! never block writers. A connection returned to the pool inside a
//! transaction (an error path) is rolled back first.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, ToSql, params_from_iter};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::codec;
use crate::dialect;
use crate::error::{DriverError, StoreError};
use crate::sql::{Arg, Cell, Insert};

/// How long a statement waits for another writer before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a task waits for a free pooled connection; longer than the busy
/// timeout because the connection holders may themselves be waiting on it.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(30);
const MAX_CONNECTIONS: usize = 4;

/// Where a pool's connections go.
#[derive(Debug)]
enum Target {
    /// A file; `create` when a connection may create it (a read's may not:
    /// a file removed while it runs is not made again, empty).
    File { path: PathBuf, create: bool },
    /// One private in-memory database: the pool holds its only connection.
    Memory,
}

#[derive(Debug)]
struct Shared {
    target: Target,
    idle: Mutex<Vec<Connection>>,
    permits: Arc<Semaphore>,
}

/// At most [`MAX_CONNECTIONS`] connections to one database, opened on
/// first use and kept.
#[derive(Debug, Clone)]
pub(crate) struct SqlitePool {
    shared: Arc<Shared>,
}

impl SqlitePool {
    /// A pool of connections to the file at `path`, which they create only
    /// when `create`.
    pub(crate) fn file(path: &Path, create: bool) -> Self {
        Self::new(
            Target::File {
                path: path.to_path_buf(),
                create,
            },
            Vec::new(),
            MAX_CONNECTIONS,
        )
    }

    /// One private in-memory database.
    pub(crate) fn memory() -> Result<Self, rusqlite::Error> {
        let conn = configure(Connection::open_in_memory()?)?;
        Ok(Self::new(Target::Memory, vec![conn], 1))
    }

    fn new(target: Target, idle: Vec<Connection>, size: usize) -> Self {
        Self {
            shared: Arc::new(Shared {
                target,
                idle: Mutex::new(idle),
                permits: Arc::new(Semaphore::new(size)),
            }),
        }
    }

    /// A connection outside any transaction, waiting for a free one.
    pub(crate) async fn acquire(&self) -> Result<Pooled, DriverError> {
        let permit = tokio::time::timeout(
            ACQUIRE_TIMEOUT,
            Arc::clone(&self.shared.permits).acquire_owned(),
        )
        .await
        .ok()
        .and_then(Result::ok)
        .ok_or_else(|| DriverError::pool_timed_out(ACQUIRE_TIMEOUT))?;
        let idle = self
            .shared
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let conn = match (idle, &self.shared.target) {
            (Some(conn), _) => conn,
            (None, Target::File { path, create }) => configure(open_file(path, *create)?)?,
            // The only connection of a memory database is never closed; a
            // permit without it means it was lost to a panic.
            (None, Target::Memory) => {
                return Err(DriverError::from(rusqlite::Error::InvalidQuery));
            }
        };
        Ok(Pooled {
            conn: Some(conn),
            shared: Arc::clone(&self.shared),
            _permit: permit,
        })
    }

    /// A connection inside a transaction opened with `begin`.
    pub(crate) async fn begin(&self, begin: &str) -> Result<Handle<'static>, DriverError> {
        let mut handle = Handle {
            conn: Slot::Owned(self.acquire().await?),
            tx: false,
        };
        handle.conn()?.execute_batch(begin)?;
        handle.tx = true;
        Ok(handle)
    }
}

/// A connection to the file at `path`, which it creates only when `create`
/// (rusqlite's default flags, less `SQLITE_OPEN_CREATE`).
fn open_file(path: &Path, create: bool) -> Result<Connection, rusqlite::Error> {
    use rusqlite::OpenFlags;
    if create {
        return Connection::open(path);
    }
    Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
}

fn configure(conn: Connection) -> Result<Connection, rusqlite::Error> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.execute_batch("PRAGMA foreign_keys = ON")?;
    Ok(conn)
}

/// A pooled connection; back to the pool when dropped (rolled back first
/// if a transaction is open on it).
#[derive(Debug)]
pub(crate) struct Pooled {
    conn: Option<Connection>,
    shared: Arc<Shared>,
    _permit: OwnedSemaphorePermit,
}

impl Drop for Pooled {
    fn drop(&mut self) {
        let Some(conn) = self.conn.take() else {
            return;
        };
        // A connection whose rollback fails is closed rather than reused.
        if !conn.is_autocommit() && conn.execute_batch("ROLLBACK").is_err() {
            return;
        }
        self.shared
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(conn);
    }
}

#[derive(Debug)]
enum Slot<'c> {
    Owned(Pooled),
    Borrowed(&'c mut Pooled),
}

/// A pooled connection or one borrowed from another handle, perhaps in a
/// transaction this handle opened (rolled back if dropped uncommitted).
#[derive(Debug)]
pub(crate) struct Handle<'c> {
    conn: Slot<'c>,
    tx: bool,
}

impl Handle<'_> {
    pub(crate) fn pooled(conn: Pooled) -> Handle<'static> {
        Handle {
            conn: Slot::Owned(conn),
            tx: false,
        }
    }

    fn pooled_mut(&mut self) -> &mut Pooled {
        match &mut self.conn {
            Slot::Owned(conn) => conn,
            Slot::Borrowed(conn) => conn,
        }
    }

    /// The connection. (`Pooled::conn` is `None` only inside its `drop`,
    /// so the error is never seen.)
    pub(crate) fn conn(&mut self) -> Result<&mut Connection, rusqlite::Error> {
        self.pooled_mut()
            .conn
            .as_mut()
            .ok_or(rusqlite::Error::InvalidQuery)
    }

    pub(crate) fn begin(&mut self, begin: &str) -> Result<Handle<'_>, rusqlite::Error> {
        self.conn()?.execute_batch(begin)?;
        Ok(Handle {
            conn: Slot::Borrowed(self.pooled_mut()),
            tx: true,
        })
    }

    pub(crate) fn commit(mut self) -> Result<(), rusqlite::Error> {
        if self.tx {
            self.conn()?.execute_batch("COMMIT")?;
            self.tx = false;
        }
        Ok(())
    }
}

impl Drop for Handle<'_> {
    fn drop(&mut self) {
        if self.tx {
            // Best effort: a connection still in a transaction is rolled
            // back again (or closed) when it returns to the pool.
            if let Ok(conn) = self.conn() {
                let _ = conn.execute_batch("ROLLBACK");
            }
        }
    }
}

/// Makes `path` ready to open: its missing parent directory is created when
/// `create_dirs`, else an error (a mistyped path must not become a new empty
/// registry). The file itself is made here (mode 0600) rather than by SQLite
/// (0644 under the usual umask); SQLite gives its `-wal` and `-shm` files
/// the same mode. Returns whether the file was created.
pub(crate) fn prepare_file(path: &Path, create_dirs: bool) -> Result<bool, StoreError> {
    if let Some(parent) = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
    {
        if create_dirs {
            agents_fs::create_dir_all(parent).map_err(|source| StoreError::Io {
                context: format!("cannot create directory `{}`", parent.display()),
                source,
            })?;
        } else if !parent.is_dir() {
            return Err(StoreError::MissingDirectory(parent.to_path_buf()));
        }
    }
    agents_fs::create_file(path).map_err(|source| StoreError::Io {
        context: format!("cannot create the database file `{}`", path.display()),
        source,
    })
}

/// Makes the `-wal` and `-shm` files of the database at `path`, where
/// present, private (mode 0600).
pub(crate) fn restrict_side_files(path: &Path) -> Result<(), StoreError> {
    for suffix in ["-wal", "-shm"] {
        let mut side = path.as_os_str().to_owned();
        side.push(suffix);
        agents_fs::restrict_if_present(Path::new(&side)).map_err(|source| StoreError::Io {
            context: format!("cannot make `{}` private", Path::new(&side).display()),
            source,
        })?;
    }
    Ok(())
}

/// The location a store at `path` reports (`db status`, errors).
pub(crate) fn location_of(path: &Path) -> String {
    format!("sqlite://{}", path.display())
}

/// Switches the file to WAL. This needs a lock the busy timeout does not
/// wait for, so two processes creating the database at once retry here.
pub(crate) async fn enable_wal(conn: &mut Connection) -> Result<(), DriverError> {
    let deadline = Instant::now() + BUSY_TIMEOUT;
    let mut pause = Duration::from_millis(5);
    loop {
        match conn.query_row("PRAGMA journal_mode = WAL", [], |row| {
            row.get::<_, String>(0)
        }) {
            Ok(_) => return Ok(()),
            Err(err) => {
                let err = DriverError::from(err);
                if !err.is_busy() || Instant::now() >= deadline {
                    return Err(err);
                }
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_millis(200));
            }
        }
    }
}

impl ToSql for Arg<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match *self {
            Arg::Text(text) => ToSqlOutput::Borrowed(ValueRef::Text(text.as_bytes())),
            Arg::OptText(Some(text)) => ToSqlOutput::Borrowed(ValueRef::Text(text.as_bytes())),
            Arg::OptText(None) => ToSqlOutput::Borrowed(ValueRef::Null),
            Arg::Int(value) => ToSqlOutput::Borrowed(ValueRef::Integer(value)),
            Arg::Names(names) => ToSqlOutput::Owned(rusqlite::types::Value::Text(
                codec::json_array(names.iter().copied()),
            )),
        })
    }
}

pub(crate) fn execute(
    conn: &Connection,
    sql: &str,
    args: &[Arg<'_>],
) -> Result<u64, rusqlite::Error> {
    let changed = conn.prepare(sql)?.execute(params_from_iter(args))?;
    Ok(u64::try_from(changed).unwrap_or(u64::MAX))
}

pub(crate) fn fetch(
    conn: &Connection,
    sql: &str,
    args: &[Arg<'_>],
) -> Result<Vec<Vec<Cell>>, rusqlite::Error> {
    let mut statement = conn.prepare(sql)?;
    let width = statement.column_count();
    let mut rows = statement.query(params_from_iter(args))?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        let mut cells = Vec::with_capacity(width);
        for index in 0..width {
            cells.push(cell(row.get_ref(index)?));
        }
        out.push(cells);
    }
    Ok(out)
}

fn cell(value: ValueRef<'_>) -> Cell {
    match value {
        ValueRef::Null => Cell::Null,
        ValueRef::Integer(value) => Cell::Int(value),
        ValueRef::Text(bytes) => match std::str::from_utf8(bytes) {
            Ok(text) => Cell::Text(text.to_owned()),
            Err(err) => Cell::Bad(format!("text is not valid UTF-8 ({err})")),
        },
        ValueRef::Real(value) => Cell::Bad(format!(
            "expected text or an integer, found the real {value}"
        )),
        ValueRef::Blob(bytes) => Cell::Bad(format!(
            "expected text or an integer, found a blob of {} bytes",
            bytes.len()
        )),
    }
}

/// Multi-row `VALUES`, chunked below SQLite's parameter limit.
pub(crate) fn insert(conn: &Connection, insert: &Insert<'_>) -> Result<(), rusqlite::Error> {
    let width = insert.columns.len();
    let group = format!("({})", vec!["?"; width].join(", "));
    let rows = dialect::SQLITE.rows_per_insert(width);
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
        conn.prepare(&sql)?.execute(params_from_iter(chunk))?;
    }
    Ok(())
}
