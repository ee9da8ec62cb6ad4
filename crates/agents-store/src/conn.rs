//! A pool and a connection of either backend: [`Pool`] hands out [`Conn`]s,
//! and a [`Conn`] hands each statement (neutral `?` SQL and [`Arg`]s) to its
//! backend's driver, numbering PostgreSQL's placeholders on the way.

use sqlx::Executor;
use sqlx::postgres::PgPool;

use crate::dialect::{self, Dialect};
use crate::error::DriverError;
use crate::postgres;
use crate::sql::{Arg, Cell, Insert};
use crate::sqlite::{self, SqlitePool};

/// A pool of either backend: the backend is this value, not a type.
#[derive(Debug, Clone)]
pub(crate) enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

impl Pool {
    /// The SQL differences of this pool's backend.
    pub(crate) fn dialect(&self) -> &'static Dialect {
        match self {
            Self::Sqlite(_) => &dialect::SQLITE,
            Self::Postgres(_) => &dialect::POSTGRES,
        }
    }

    /// A pooled connection outside any transaction.
    pub(crate) async fn conn(&self) -> Result<Conn<'static>, DriverError> {
        Ok(match self {
            Self::Sqlite(pool) => Conn::Sqlite(sqlite::Handle::pooled(pool.acquire().await?)),
            Self::Postgres(pool) => Conn::Postgres(postgres::Handle::Pooled(pool.acquire().await?)),
        })
    }

    /// A pooled connection inside a transaction opened with `begin`.
    pub(crate) async fn begin(&self, begin: &'static str) -> Result<Conn<'static>, DriverError> {
        Ok(match self {
            Self::Sqlite(pool) => Conn::Sqlite(pool.begin(begin).await?),
            Self::Postgres(pool) => {
                Conn::Postgres(postgres::Handle::Tx(pool.begin_with(begin).await?))
            }
        })
    }
}

/// A connection of either backend, perhaps inside a transaction.
#[derive(Debug)]
pub(crate) enum Conn<'c> {
    Sqlite(sqlite::Handle<'c>),
    Postgres(postgres::Handle<'c>),
}

impl Conn<'_> {
    pub(crate) fn dialect(&self) -> &'static Dialect {
        match self {
            Self::Sqlite(_) => &dialect::SQLITE,
            Self::Postgres(_) => &dialect::POSTGRES,
        }
    }

    /// Runs one statement; returns the rows it changed.
    pub(crate) async fn execute(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
    ) -> Result<u64, DriverError> {
        Ok(match self {
            Self::Sqlite(handle) => sqlite::execute(handle.conn()?, sql, args)?,
            Self::Postgres(handle) => {
                postgres::execute(handle.conn(), &dialect::POSTGRES.sql(sql), args).await?
            }
        })
    }

    /// Runs several statements without arguments.
    pub(crate) async fn execute_script(&mut self, sql: &'static str) -> Result<(), DriverError> {
        match self {
            Self::Sqlite(handle) => handle.conn()?.execute_batch(sql)?,
            Self::Postgres(handle) => {
                handle.conn().execute(sqlx::raw_sql(sql)).await?;
            }
        }
        Ok(())
    }

    /// All rows of one query.
    pub(crate) async fn fetch(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
    ) -> Result<Vec<Vec<Cell>>, DriverError> {
        Ok(match self {
            Self::Sqlite(handle) => sqlite::fetch(handle.conn()?, sql, args)?,
            Self::Postgres(handle) => {
                postgres::fetch(handle.conn(), &dialect::POSTGRES.sql(sql), args).await?
            }
        })
    }

    /// The first column of the first row as an integer (`None` for no row
    /// or NULL).
    pub(crate) async fn fetch_int(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
    ) -> Result<Option<i64>, DriverError> {
        let rows = self.fetch(sql, args).await?;
        Ok(
            match rows
                .into_iter()
                .next()
                .and_then(|row| row.into_iter().next())
            {
                Some(Cell::Int(value)) => Some(value),
                _ => None,
            },
        )
    }

    /// The first column of every row, as text (other values skipped).
    pub(crate) async fn fetch_texts(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
    ) -> Result<Vec<String>, DriverError> {
        let rows = self.fetch(sql, args).await?;
        Ok(rows
            .into_iter()
            .filter_map(|row| match row.into_iter().next() {
                Some(Cell::Text(text)) => Some(text),
                _ => None,
            })
            .collect())
    }

    /// A bulk insert, chunked.
    pub(crate) async fn insert(&mut self, insert: &Insert<'_>) -> Result<(), DriverError> {
        if insert.values.is_empty() {
            return Ok(());
        }
        match self {
            Self::Sqlite(handle) => sqlite::insert(handle.conn()?, insert)?,
            Self::Postgres(handle) => postgres::insert(handle.conn(), insert).await?,
        }
        Ok(())
    }

    /// A transaction on this connection, opened with `begin`.
    pub(crate) async fn begin(&mut self, begin: &'static str) -> Result<Conn<'_>, DriverError> {
        Ok(match self {
            Self::Sqlite(handle) => Conn::Sqlite(handle.begin(begin)?),
            Self::Postgres(handle) => Conn::Postgres(handle.begin(begin).await?),
        })
    }

    /// Commits a transaction; a no-op on a plain connection.
    pub(crate) async fn commit(self) -> Result<(), DriverError> {
        match self {
            Self::Sqlite(handle) => handle.commit()?,
            Self::Postgres(handle) => handle.commit().await?,
        }
        Ok(())
    }
}
