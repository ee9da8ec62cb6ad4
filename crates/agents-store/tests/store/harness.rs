//! Runs one test body against a fresh database of either backend.
//!
//! SQLite: a new file in a temp dir. PostgreSQL: a new database
//! `t_<random>` on the server named by `AGENTS_TEST_POSTGRES_URL` (a
//! superuser URL), dropped afterwards even when the body panics. Without that
//! variable the PostgreSQL tests fail under `CI=true` and otherwise print a
//! visible `SKIPPED` notice.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use agents_store::{DatabaseUrl, Store, StoreError};
use sqlx::{Connection, Executor};

pub const POSTGRES_URL_VAR: &str = "AGENTS_TEST_POSTGRES_URL";

#[derive(Debug)]
enum Backend {
    Sqlite {
        _dir: tempfile::TempDir,
        path: PathBuf,
    },
    Postgres {
        url: String,
    },
}

/// A fresh, empty database (no schema yet: the first `open` migrates it).
#[derive(Debug, Clone)]
pub struct Ctx(Arc<Backend>);

impl Ctx {
    pub fn backend(&self) -> &'static str {
        match &*self.0 {
            Backend::Sqlite { .. } => "sqlite",
            Backend::Postgres { .. } => "postgres",
        }
    }

    pub fn url(&self) -> DatabaseUrl {
        match &*self.0 {
            Backend::Sqlite { path, .. } => DatabaseUrl::Sqlite(path.clone()),
            Backend::Postgres { url } => DatabaseUrl::Postgres(url.clone()),
        }
    }

    /// The connection URL (with password) of a PostgreSQL test database.
    pub fn postgres_url(&self) -> Option<&str> {
        match &*self.0 {
            Backend::Postgres { url } => Some(url),
            Backend::Sqlite { .. } => None,
        }
    }

    /// A new, independent store handle (its own pool and connections).
    pub async fn open(&self) -> Store {
        self.try_open()
            .await
            .unwrap_or_else(|err| panic!("open {}: {err}", self.backend()))
    }

    pub async fn try_open(&self) -> Result<Store, StoreError> {
        Store::open(&self.url()).await
    }

    /// Runs `sql` on a connection of its own, outside the store.
    pub async fn execute(&self, sql: &'static str) {
        match &*self.0 {
            Backend::Sqlite { path, .. } => raw_sqlite(path).execute_batch(sql).unwrap(),
            Backend::Postgres { url } => {
                let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
                conn.execute(sql).await.unwrap();
                conn.close().await.unwrap();
            }
        }
    }

    /// The single integer `sql` returns, read outside the store.
    pub async fn scalar(&self, sql: &'static str) -> i64 {
        match &*self.0 {
            Backend::Sqlite { path, .. } => raw_sqlite(path)
                .query_row(sql, [], |row| row.get(0))
                .unwrap(),
            Backend::Postgres { url } => {
                let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
                let value: i64 = sqlx::query_scalar(sql).fetch_one(&mut conn).await.unwrap();
                conn.close().await.unwrap();
                value
            }
        }
    }

    /// Rows of `sql` as strings (NULL as `None`), read outside the store.
    pub async fn rows(&self, sql: &'static str) -> Vec<Vec<Option<String>>> {
        use sqlx::Row;
        match &*self.0 {
            Backend::Sqlite { path, .. } => {
                use rusqlite::types::ValueRef;
                let conn = raw_sqlite(path);
                let mut statement = conn.prepare(sql).unwrap();
                let width = statement.column_count();
                statement
                    .query_map([], |row| {
                        Ok((0..width)
                            .map(|i| match row.get_ref(i).unwrap() {
                                ValueRef::Null => None,
                                ValueRef::Integer(value) => Some(value.to_string()),
                                ValueRef::Text(text) => {
                                    Some(String::from_utf8(text.to_vec()).unwrap())
                                }
                                other => panic!("unexpected value {other:?}"),
                            })
                            .collect())
                    })
                    .unwrap()
                    .map(Result::unwrap)
                    .collect()
            }
            Backend::Postgres { url } => {
                let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
                let rows = sqlx::query(sql).fetch_all(&mut conn).await.unwrap();
                rows.iter()
                    .map(|row| {
                        (0..row.len())
                            .map(|i| row.try_get::<Option<String>, _>(i).unwrap())
                            .collect()
                    })
                    .collect()
            }
        }
    }
}

fn unique_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!(
        "{}_{}_{}",
        std::process::id(),
        nanos % 1_000_000_000_000,
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

pub async fn sqlite<F, Fut>(test: F)
where
    F: FnOnce(Ctx) -> Fut,
    Fut: Future<Output = ()>,
{
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("registry.db");
    test(Ctx(Arc::new(Backend::Sqlite { _dir: dir, path }))).await;
}

/// The superuser URL, or `None` after printing the skip notice.
pub fn postgres_admin_url(test: &str) -> Option<String> {
    match std::env::var(POSTGRES_URL_VAR) {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!(
                    "{test}: CI=true but {POSTGRES_URL_VAR} is not set; PostgreSQL tests must not be skipped in CI \
                     (start a server with `eval \"$(scripts/pg-test-server.sh start DIR)\"`)"
                );
            }
            // Straight to the stderr handle: libtest captures `eprintln!`
            // of passing tests, and this notice must be seen.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "SKIPPED (no {POSTGRES_URL_VAR}): {test}");
            None
        }
    }
}

/// `url` pointing at database `database` instead, parameters kept.
pub fn with_database(url: &str, database: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let authority_start = base.find("://").map(|i| i + 3).unwrap_or(0);
    let path_start = base[authority_start..]
        .find('/')
        .map(|i| i + authority_start)
        .unwrap_or(base.len());
    let mut out = format!("{}/{database}", &base[..path_start]);
    if let Some(query) = query {
        out.push('?');
        out.push_str(query);
    }
    out
}

pub async fn postgres<F, Fut>(test_name: &str, test: F)
where
    F: FnOnce(Ctx) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let Some(admin_url) = postgres_admin_url(test_name) else {
        return;
    };
    let database = format!("t_{}", unique_suffix());
    let mut admin = sqlx::PgConnection::connect(&admin_url)
        .await
        .unwrap_or_else(|err| panic!("{test_name}: cannot connect to {POSTGRES_URL_VAR}: {err}"));
    admin
        .execute(sqlx::AssertSqlSafe(format!(
            "CREATE DATABASE \"{database}\""
        )))
        .await
        .unwrap();
    let ctx = Ctx(Arc::new(Backend::Postgres {
        url: with_database(&admin_url, &database),
    }));
    // Run the body as its own task so a panic still lets us drop the database.
    let outcome = tokio::spawn(test(ctx)).await;
    admin
        .execute(sqlx::AssertSqlSafe(format!(
            "DROP DATABASE IF EXISTS \"{database}\" WITH (FORCE)"
        )))
        .await
        .unwrap();
    let _ = admin.close().await;
    if let Err(err) = outcome {
        if err.is_panic() {
            std::panic::resume_unwind(err.into_panic());
        }
        panic!("{test_name}: {err}");
    }
}

#[test]
fn with_database_replaces_only_the_path() {
    assert_eq!(
        with_database("postgres://u:p@h:5/postgres?sslmode=require", "t_1"),
        "postgres://u:p@h:5/t_1?sslmode=require"
    );
    assert_eq!(with_database("postgres://h", "t_1"), "postgres://h/t_1");
}

/// A connection to the SQLite file outside the store, configured as the
/// store configures its own.
fn raw_sqlite(path: &std::path::Path) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.busy_timeout(std::time::Duration::from_secs(10))
        .unwrap();
    conn.execute_batch("PRAGMA foreign_keys = ON").unwrap();
    conn
}
