//! The PostgreSQL driver, for registries shared by many machines: how it
//! connects, and how statements are bound and rows decoded. Its SQL
//! differences are [`dialect::POSTGRES`]; the store's logic is in
//! `store.rs`.
//!
//! Concurrency model (READ COMMITTED): a racing `add` of the same name blocks
//! on the unique index and then fails with a unique violation, reported as
//! [`StoreError::DuplicateSkill`]; `update` locks the row (`FOR NO KEY
//! UPDATE`, which a writer including the skill does not block) before
//! comparing `updated_at`; `remove` locks its row before it looks for
//! includers, and a write locks the skills it includes (`FOR KEY SHARE`), so
//! a removal and a new include of the same skill are one after the other,
//! as on SQLite; tool writes lock the `tools` table against
//! each other so a group replacement is never interleaved with another.
//! Reads that take several queries run in one REPEATABLE READ snapshot.
//!
//! Name lists are bound as one array and expanded through `UNNEST`, never
//! `= ANY($1)`: a prepared statement's generic plan tests `ANY` linearly per
//! row, which is quadratic for a 10,000-name closure.

use std::str::FromStr;
use std::time::Duration;

use sqlx::pool::PoolConnection;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions, PgRow};
use sqlx::{
    AssertSqlSafe, ConnectOptions, Connection, Postgres, Row, Transaction, TypeInfo, ValueRef,
};

use crate::dialect;
use crate::error::StoreError;
use crate::sql::{Arg, Cell, Insert, Kind};
use crate::url::{connect_timeout, redact};

/// Bounds connecting and waiting for a pooled connection, so an unreachable
/// server is an error within seconds, never a hang.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_CONNECTIONS: u32 = 4;

/// A transaction, a pooled connection or a borrowed one.
#[derive(Debug)]
pub(crate) enum Handle<'c> {
    Tx(Transaction<'c, Postgres>),
    Pooled(PoolConnection<Postgres>),
    Direct(&'c mut PgConnection),
}

impl Handle<'_> {
    pub(crate) fn conn(&mut self) -> &mut PgConnection {
        match self {
            Self::Tx(tx) => tx,
            Self::Pooled(conn) => conn,
            Self::Direct(conn) => conn,
        }
    }

    pub(crate) async fn begin(&mut self, begin: &'static str) -> Result<Handle<'_>, sqlx::Error> {
        Ok(Handle::Tx(self.conn().begin_with(begin).await?))
    }

    pub(crate) async fn commit(self) -> Result<(), sqlx::Error> {
        match self {
            Self::Tx(tx) => tx.commit().await,
            Self::Pooled(_) | Self::Direct(_) => Ok(()),
        }
    }
}

/// What [`connect`] made: a pool (connecting lazily), one live session for
/// the migrations, where it points (password removed) and the timeout that
/// bounds them.
#[derive(Debug)]
pub(crate) struct Connected {
    pub pool: PgPool,
    pub direct: PgConnection,
    pub location: String,
    pub timeout: Duration,
}

pub(crate) fn timed_out(what: &str, timeout: Duration) -> sqlx::Error {
    sqlx::Error::Io(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        format!("{what} within {} s", timeout.as_secs()),
    ))
}

/// How long a statement waits for a lock another session holds before it
/// fails ("canceling statement due to lock timeout"), and how long one of
/// our sessions may sit idle inside a transaction before the server ends it
/// (a stopped `agents` process then holds nobody's locks for long). Our
/// writes hold their locks for a few seconds at most (a 10,000-skill bulk
/// add); a wait longer than this is a stuck client, which a command should
/// report rather than wait for without end.
const SESSION_LIMITS: [(&str, &str); 2] = [
    ("lock_timeout", "60s"),
    ("idle_in_transaction_session_timeout", "60s"),
];

/// The `SET` statements of [`SESSION_LIMITS`] a new session runs, each
/// unless the URL's `options` parameter sets it (`options=-c
/// lock_timeout=5s`). Set after connecting, not as an `options` startup
/// parameter: a connection pooler (PgBouncer) refuses a startup parameter
/// it does not know.
fn session_limits(options: &PgConnectOptions) -> String {
    let given = given_settings(options.get_options().unwrap_or_default());
    SESSION_LIMITS
        .into_iter()
        .filter(|(name, _)| !given.iter().any(|given| given == name))
        .map(|(name, value)| format!("SET {name} = '{value}';"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The names of the settings an `options` value sets: `-c name=value`,
/// `-cname=value` and `--name=value`, compared whole (`deadlock_timeout`
/// is not `lock_timeout`).
fn given_settings(options: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut words = options.split_whitespace();
    while let Some(word) = words.next() {
        let setting = match word {
            "-c" => words.next(),
            _ => word.strip_prefix("-c").or_else(|| word.strip_prefix("--")),
        };
        if let Some((name, _)) = setting.and_then(|setting| setting.split_once('=')) {
            names.push(name.replace('-', "_"));
        }
    }
    names
}

/// Runs `limits` ([`session_limits`]) on a new session.
async fn limit_session(conn: &mut PgConnection, limits: &str) -> Result<(), sqlx::Error> {
    if !limits.is_empty() {
        sqlx::raw_sql(AssertSqlSafe(limits.to_owned()))
            .execute(conn)
            .await?;
    }
    Ok(())
}

/// Connects to the database at `url` (`postgres://` or `postgresql://`,
/// parameters such as `sslmode=require` passed to the driver, and libpq's
/// `connect_timeout=SECONDS`, 10 by default, bounding the connection, each
/// pooled connection's wait and, three times over, the migrations).
pub(crate) async fn connect(url: &str) -> Result<Connected, StoreError> {
    let location = redact(url);
    let (driver_url, timeout) = connect_timeout(url).map_err(|reason| StoreError::InvalidUrl {
        url: location.clone(),
        reason,
    })?;
    let timeout = timeout.unwrap_or(CONNECT_TIMEOUT);
    let options = PgConnectOptions::from_str(&driver_url)
        .map_err(|err| StoreError::InvalidUrl {
            url: location.clone(),
            reason: err.to_string(),
        })?
        .application_name("agents");
    let limits = session_limits(&options);
    let context = format!("cannot connect to postgres `{location}`");
    // One direct connection first: its error says why (refused, auth,
    // TLS), where the pool would retry a refused connection until its
    // timeout and then only report that it timed out.
    let mut direct = tokio::time::timeout(timeout, options.connect())
        .await
        .map_err(|_| StoreError::Database {
            context: context.clone(),
            source: timed_out("no answer from the server", timeout).into(),
        })?
        .map_err(|source| StoreError::Database {
            context: context.clone(),
            source: source.into(),
        })?;
    limit_session(&mut direct, &limits)
        .await
        .map_err(|source| StoreError::Database {
            context,
            source: source.into(),
        })?;
    let pool = PgPoolOptions::new()
        .max_connections(MAX_CONNECTIONS)
        .min_connections(0)
        .acquire_timeout(timeout)
        // A pooled connection may have died with a server restart: ping
        // it before use and reconnect if needed.
        .test_before_acquire(true)
        .after_connect(move |conn, _| {
            let limits = limits.clone();
            Box::pin(async move { limit_session(conn, &limits).await })
        })
        .connect_lazy_with(options);
    Ok(Connected {
        pool,
        direct,
        location,
        timeout,
    })
}

type Query<'q> = sqlx::query::Query<'q, Postgres, <Postgres as sqlx::Database>::Arguments>;

fn bind<'q>(mut query: Query<'q>, args: &[Arg<'_>]) -> Query<'q> {
    for arg in args {
        query = match *arg {
            Arg::Text(text) => query.bind(text),
            Arg::OptText(text) => query.bind(text),
            Arg::Int(value) => query.bind(value),
            Arg::Names(names) => query.bind(names),
        };
    }
    query
}

pub(crate) async fn execute(
    conn: &mut PgConnection,
    sql: &str,
    args: &[Arg<'_>],
) -> Result<u64, sqlx::Error> {
    let done = bind(sqlx::query(AssertSqlSafe(sql)), args)
        .execute(conn)
        .await?;
    Ok(done.rows_affected())
}

pub(crate) async fn fetch(
    conn: &mut PgConnection,
    sql: &str,
    args: &[Arg<'_>],
) -> Result<Vec<Vec<Cell>>, sqlx::Error> {
    let rows = bind(sqlx::query(AssertSqlSafe(sql)), args)
        .fetch_all(conn)
        .await?;
    Ok(rows.iter().map(cells).collect())
}

fn cells(row: &PgRow) -> Vec<Cell> {
    (0..row.len())
        .map(|index| {
            let decoded = match row.try_get_raw(index) {
                Ok(value) if value.is_null() => return Cell::Null,
                Ok(value) => match value.type_info().name() {
                    "INT8" => row.try_get::<i64, _>(index).map(Cell::Int),
                    "INT4" => row
                        .try_get::<i32, _>(index)
                        .map(|value| Cell::Int(value.into())),
                    "INT2" => row
                        .try_get::<i16, _>(index)
                        .map(|value| Cell::Int(value.into())),
                    _ => row.try_get::<String, _>(index).map(Cell::Text),
                },
                Err(err) => return Cell::Bad(err.to_string()),
            };
            decoded.unwrap_or_else(|err| Cell::Bad(err.to_string()))
        })
        .collect()
}

/// `INSERT ... SELECT FROM UNNEST(...)` with one array per column.
pub(crate) async fn insert(
    conn: &mut PgConnection,
    insert: &Insert<'_>,
) -> Result<(), sqlx::Error> {
    let width = insert.columns.len();
    let arrays = insert
        .columns
        .iter()
        .enumerate()
        .map(|(index, (_, kind))| match kind {
            Kind::Text => format!("CAST(${} AS TEXT[])", index + 1),
            Kind::Int => format!("CAST(${} AS INT8[])", index + 1),
        })
        .collect::<Vec<_>>()
        .join(", ");
    let sql = format!(
        "INSERT INTO {} ({}) SELECT * FROM UNNEST({arrays}){}",
        insert.table,
        insert.column_list(),
        insert.suffix
    );
    let rows = dialect::POSTGRES.rows_per_insert(width);
    for chunk in insert.values.chunks(rows * width) {
        let mut query = sqlx::query(AssertSqlSafe(sql.as_str()));
        for (column, (_, kind)) in insert.columns.iter().enumerate() {
            let values = chunk.iter().skip(column).step_by(width);
            query = match kind {
                Kind::Text => query.bind(
                    values
                        .map(|arg| match *arg {
                            Arg::Text(text) => Some(text),
                            Arg::OptText(text) => text,
                            Arg::Int(_) | Arg::Names(_) => None,
                        })
                        .collect::<Vec<_>>(),
                ),
                Kind::Int => query.bind(
                    values
                        .map(|arg| match *arg {
                            Arg::Int(value) => value,
                            _ => 0,
                        })
                        .collect::<Vec<_>>(),
                ),
            };
        }
        query.execute(&mut *conn).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn session_limits_are_set_unless_the_url_sets_them() {
        let plain = PgConnectOptions::from_str("postgres://h/db").unwrap();
        assert_eq!(
            session_limits(&plain),
            "SET lock_timeout = '60s'; SET idle_in_transaction_session_timeout = '60s';"
        );
        // No startup parameter of ours: a pooler may refuse one.
        assert_eq!(plain.get_options(), None);
        let own =
            PgConnectOptions::from_str("postgres://h/db?options=-c%20lock_timeout%3D5s").unwrap();
        assert_eq!(
            session_limits(&own),
            "SET idle_in_transaction_session_timeout = '60s';"
        );
        // Names are compared whole.
        let other =
            PgConnectOptions::from_str("postgres://h/db?options=-c%20deadlock_timeout%3D5s")
                .unwrap();
        assert_eq!(
            session_limits(&other),
            "SET lock_timeout = '60s'; SET idle_in_transaction_session_timeout = '60s';"
        );
        assert_eq!(
            given_settings(
                "-c lock_timeout=1s -cstatement_timeout=2s --idle-in-transaction-session-timeout=3s"
            ),
            [
                "lock_timeout",
                "statement_timeout",
                "idle_in_transaction_session_timeout"
            ]
        );
    }
}
