//! The seam between the store's logic (written once, in `engine.rs`) and
//! the two backends: neutral arguments and cells, the per-backend SQL
//! differences as data ([`Dialect`]), and one connection type that hands
//! each statement to its backend's module.
//!
//! Statements are written with `?` placeholders; PostgreSQL's are numbered
//! here. Name lists are one argument ([`Arg::Names`]) that each dialect
//! expands through [`Dialect::names`].

use std::borrow::Cow;

use sqlx::pool::PoolConnection;
use sqlx::{Connection, Database, Postgres, Transaction};

use crate::StoreError;
use crate::error::DriverError;
use crate::migrate::Migration;
use crate::{postgres, sqlite};

/// One bound value.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Arg<'a> {
    Text(&'a str),
    OptText(Option<&'a str>),
    Int(i64),
    /// A list of names, expanded in SQL by [`Dialect::names`].
    Names(&'a [&'a str]),
}

/// A column's type in a bulk [`Insert`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Text,
    Int,
}

/// One fetched value.
#[derive(Debug, Default)]
pub(crate) enum Cell {
    #[default]
    Null,
    Int(i64),
    Text(String),
    /// The driver could not decode it (why).
    Bad(String),
}

/// A multi-row insert: multi-row `VALUES` on SQLite, `UNNEST` of one array
/// per column on PostgreSQL, in chunks sized by the dialect.
#[derive(Debug)]
pub(crate) struct Insert<'a> {
    pub table: &'static str,
    pub columns: &'static [(&'static str, Kind)],
    /// Row-major, `columns.len()` values per row.
    pub values: Vec<Arg<'a>>,
    /// `ON CONFLICT ...`, or empty.
    pub suffix: &'static str,
}

impl Insert<'_> {
    pub(crate) fn column_list(&self) -> String {
        self.columns
            .iter()
            .map(|(name, _)| *name)
            .collect::<Vec<_>>()
            .join(", ")
    }
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
    /// A subquery yielding the names of one [`Arg::Names`] as `name`.
    pub names: &'static str,
    /// `WITH RECURSIVE closure(name) AS (...)` from one [`Arg::Names`].
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
    pub migrations: &'static [Migration],
}

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
}

/// A PostgreSQL transaction, a pooled connection or a borrowed one.
#[derive(Debug)]
pub(crate) enum Handle<'c, DB: Database> {
    Tx(Transaction<'c, DB>),
    Pooled(PoolConnection<DB>),
    Direct(&'c mut DB::Connection),
}

impl<DB: Database> Handle<'_, DB> {
    pub(crate) fn conn(&mut self) -> &mut DB::Connection {
        match self {
            Self::Tx(tx) => tx,
            Self::Pooled(conn) => conn,
            Self::Direct(conn) => conn,
        }
    }

    async fn commit(self) -> Result<(), sqlx::Error> {
        match self {
            Self::Tx(tx) => tx.commit().await,
            Self::Pooled(_) | Self::Direct(_) => Ok(()),
        }
    }
}

/// A connection of either backend.
#[derive(Debug)]
pub(crate) enum Conn<'c> {
    Sqlite(sqlite::Handle<'c>),
    Postgres(Handle<'c, Postgres>),
}

impl Conn<'_> {
    pub(crate) fn dialect(&self) -> &'static Dialect {
        match self {
            Self::Sqlite(_) => &sqlite::DIALECT,
            Self::Postgres(_) => &postgres::DIALECT,
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
                postgres::execute(handle.conn(), &postgres::DIALECT.sql(sql), args).await?
            }
        })
    }

    /// Runs several statements without arguments.
    pub(crate) async fn execute_script(&mut self, sql: &'static str) -> Result<(), DriverError> {
        use sqlx::Executor;
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
                postgres::fetch(handle.conn(), &postgres::DIALECT.sql(sql), args).await?
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
            Self::Postgres(handle) => {
                Conn::Postgres(Handle::Tx(handle.conn().begin_with(begin).await?))
            }
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

/// Reads one fetched row column by column, naming the table and the row's
/// key (its first column) when a value is not what the schema promises.
#[derive(Debug)]
pub(crate) struct Cells {
    table: &'static str,
    key: String,
    cells: std::vec::IntoIter<Cell>,
}

impl Cells {
    pub(crate) fn new(table: &'static str, row: Vec<Cell>) -> Self {
        let key = match row.first() {
            Some(Cell::Text(text)) => text.clone(),
            _ => String::new(),
        };
        Self {
            table,
            key,
            cells: row.into_iter(),
        }
    }

    fn corrupt(&self, column: &str, reason: String) -> StoreError {
        StoreError::corrupt(
            self.table,
            &self.key,
            format!("column `{column}`: {reason}"),
        )
    }

    pub(crate) fn opt_text(&mut self, column: &str) -> Result<Option<String>, StoreError> {
        match self.cells.next() {
            Some(Cell::Text(text)) => Ok(Some(text)),
            Some(Cell::Null) => Ok(None),
            Some(Cell::Int(value)) => {
                Err(self.corrupt(column, format!("expected text, found the integer {value}")))
            }
            Some(Cell::Bad(reason)) => Err(self.corrupt(column, reason)),
            None => Err(self.corrupt(column, "missing".into())),
        }
    }

    pub(crate) fn text(&mut self, column: &str) -> Result<String, StoreError> {
        self.opt_text(column)?
            .ok_or_else(|| self.corrupt(column, "expected text, found NULL".into()))
    }

    pub(crate) fn int(&mut self, column: &str) -> Result<i64, StoreError> {
        match self.cells.next() {
            Some(Cell::Int(value)) => Ok(value),
            Some(Cell::Text(_)) => {
                Err(self.corrupt(column, "expected an integer, found text".into()))
            }
            Some(Cell::Null) => Err(self.corrupt(column, "expected an integer, found NULL".into())),
            Some(Cell::Bad(reason)) => Err(self.corrupt(column, reason)),
            None => Err(self.corrupt(column, "missing".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_placeholders_are_numbered() {
        assert_eq!(
            postgres::DIALECT.sql("SELECT ? WHERE a = ? AND b = ?"),
            "SELECT $1 WHERE a = $2 AND b = $3"
        );
        assert_eq!(sqlite::DIALECT.sql("SELECT ?"), "SELECT ?");
    }
}
