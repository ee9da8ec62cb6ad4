//! The neutral values a statement speaks in, whichever backend runs it:
//! bound arguments ([`Arg`]), fetched cells ([`Cell`], read column by column
//! through [`Cells`]) and bulk inserts ([`Insert`]). The drivers
//! (`sqlite.rs`, `postgres.rs`) turn them into their own types.

use crate::error::StoreError;

/// One bound value.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Arg<'a> {
    Text(&'a str),
    OptText(Option<&'a str>),
    Int(i64),
    /// A list of names, expanded in SQL by the dialect's `names`.
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
