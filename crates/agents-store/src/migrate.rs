//! Schema migrations: one runner for both backends over the dialect's
//! embedded SQL files (`migrations/sqlite`, `migrations/postgres`), applied
//! in version order and recorded in `schema_migrations`.

use crate::codec;
use crate::conn::Conn;
use crate::dialect::Dialect;
use crate::error::{DriverError, StoreError, db_error};
use crate::sql::Arg;

const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS schema_migrations (
    version     BIGINT NOT NULL PRIMARY KEY,
    description VARCHAR(255) NOT NULL,
    applied_at  VARCHAR(30) NOT NULL
)";

/// The applied schema version (0 for an empty database).
pub(crate) async fn applied_version(conn: &mut Conn<'_>) -> Result<i64, DriverError> {
    let exists = conn
        .fetch_int(conn.dialect().schema_table_exists, &[])
        .await?;
    if exists.unwrap_or(0) == 0 {
        return Ok(0);
    }
    Ok(conn
        .fetch_int("SELECT MAX(version) FROM schema_migrations", &[])
        .await?
        .unwrap_or(0))
}

/// Brings the schema to the newest version this build knows. `conn` is a
/// connection outside any transaction. The common case (up to date) costs
/// two small reads ([`applied_version`]); otherwise each step runs in its own locked transaction, so
/// concurrent first opens apply every step exactly once.
pub(crate) async fn run(conn: &mut Conn<'_>, location: &str) -> Result<(), StoreError> {
    let dialect: &Dialect = conn.dialect();
    let migrations = dialect.migrations;
    let supported = dialect.latest_version();
    let db = |what: &str| db_error(what, location);
    let current = applied_version(conn)
        .await
        .map_err(db("cannot read the schema version"))?;
    if current > supported {
        return Err(StoreError::SchemaTooNew {
            found: current,
            supported,
        });
    }
    if current == supported {
        return Ok(());
    }
    loop {
        let mut tx = conn
            .begin(dialect.write_begin)
            .await
            .map_err(db("cannot start the migration"))?;
        if let Some(lock) = dialect.migration_lock {
            tx.execute(lock, &[])
                .await
                .map_err(db("cannot lock the schema for migration"))?;
        }
        let current = applied_version(&mut tx)
            .await
            .map_err(db("cannot read the schema version"))?;
        if current > supported {
            return Err(StoreError::SchemaTooNew {
                found: current,
                supported,
            });
        }
        let Some(next) = migrations
            .iter()
            .find(|migration| migration.version > current)
        else {
            tx.commit()
                .await
                .map_err(db("cannot finish the migration"))?;
            return Ok(());
        };
        let failed = format!(
            "cannot apply schema migration {} ({})",
            next.version, next.description
        );
        tx.execute_script(CREATE_TABLE).await.map_err(db(&failed))?;
        tx.execute_script(next.sql).await.map_err(db(&failed))?;
        let at = codec::format_timestamp(codec::now());
        tx.execute(
            "INSERT INTO schema_migrations (version, description, applied_at) VALUES (?, ?, ?)",
            &[
                Arg::Int(next.version),
                Arg::Text(next.description),
                Arg::Text(&at),
            ],
        )
        .await
        .map_err(db(&failed))?;
        tx.commit().await.map_err(db(&failed))?;
    }
}
