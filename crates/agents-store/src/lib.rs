//! Persistent storage for skills and the tool catalogue.
//!
//! [`Store`] is the one store type: it speaks in core types ([`Skill`],
//! [`ToolSpec`]) and its logic is written once. The backend, SQLite (the
//! embedded default: one file, WAL, busy timeout) or PostgreSQL (the shared
//! store for teams), is data picked from a [`DatabaseUrl`] when the store is
//! opened: a pool of either kind and its `Dialect`, which holds every
//! difference in their SQL (placeholders, bulk insert, locking, the closure
//! CTE, the migrations folder).
//!
//! Modules import one way, each only from those listed before it:
//! `error`, `url`, `codec`, `dialect` (the SQL differences as data), `sql`
//! (neutral arguments and cells), `sqlite` and `postgres` (the drivers),
//! `conn` (a pool or connection of either backend), `migrate`, `records`
//! (what the methods return), `rows` (tables' columns to and from neutral
//! values), `store`.
//!
//! [`Skill`]: agents_core::Skill
//! [`ToolSpec`]: agents_core::ToolSpec

// Library code returns errors; it does not panic on what it is given.
#![deny(clippy::panic, clippy::indexing_slicing)]

mod codec;
mod conn;
mod dialect;
mod error;
mod migrate;
mod postgres;
mod records;
mod rows;
mod sql;
mod sqlite;
mod store;
mod url;

pub use codec::MAX_META_KEY;
pub use error::{DriverError, StoreError, names_bounded};
pub use records::{Readable, SkillSummary, StoreStatus, ToolGroup, WriteStamps};
pub use store::Store;
pub use url::DatabaseUrl;
