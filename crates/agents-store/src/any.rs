//! One store type for whichever backend the URL names.

use crate::engine::Engine;
use crate::{DatabaseUrl, PostgresStore, SqliteStore, StoreError};

/// A store on either backend, chosen at run time by [`open`].
#[derive(Debug, Clone)]
pub enum AnyStore {
    /// The embedded SQLite store.
    Sqlite(SqliteStore),
    /// The shared PostgreSQL store.
    Postgres(PostgresStore),
}

/// Opens the store `url` names, applying pending migrations.
pub async fn open(url: &DatabaseUrl) -> Result<AnyStore, StoreError> {
    open_in(url, false).await
}

/// Like [`open`], but a SQLite file's missing directories are created.
pub async fn create(url: &DatabaseUrl) -> Result<AnyStore, StoreError> {
    open_in(url, true).await
}

/// Like [`open`], for a command that only reads: a SQLite file that does
/// not exist is [`StoreError::MissingDatabase`] and is not created
/// ([`SqliteStore::open_existing`]). PostgreSQL opens as with [`open`].
pub async fn open_existing(url: &DatabaseUrl) -> Result<AnyStore, StoreError> {
    match url {
        DatabaseUrl::Sqlite(path) => {
            tracing::debug!(database = %url, "opening the registry to read");
            Ok(AnyStore::Sqlite(SqliteStore::open_existing(path).await?))
        }
        _ => open(url).await,
    }
}

async fn open_in(url: &DatabaseUrl, create_dirs: bool) -> Result<AnyStore, StoreError> {
    // `DatabaseUrl`'s display has the password removed.
    tracing::debug!(database = %url, "opening the registry");
    Ok(match url {
        DatabaseUrl::Sqlite(path) if create_dirs => {
            AnyStore::Sqlite(SqliteStore::create(path).await?)
        }
        DatabaseUrl::Sqlite(path) => AnyStore::Sqlite(SqliteStore::open(path).await?),
        DatabaseUrl::SqliteMemory => AnyStore::Sqlite(SqliteStore::open_memory().await?),
        DatabaseUrl::Postgres(raw) => AnyStore::Postgres(PostgresStore::connect(raw).await?),
    })
}

impl AnyStore {
    pub(crate) fn engine(&self) -> &Engine {
        match self {
            Self::Sqlite(store) => &store.engine,
            Self::Postgres(store) => &store.engine,
        }
    }
}
