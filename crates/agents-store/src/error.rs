use agents_core::SkillName;

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// `add` of a name that is taken.
    #[error("skill `{0}` is already registered")]
    DuplicateSkill(SkillName),
    /// `update`/`get` of a name that is not registered (the
    /// specification's wording, as every "not registered" failure says it).
    #[error("Skill '{0}' is not registered")]
    SkillNotFound(SkillName),
    /// `remove` of a skill other skills include (without `force`).
    #[error(
        "skill `{name}` is included by {}; remove the includes first, or pass `--force` to break {}",
        names_bounded(.by),
        if .by.len() == 1 { "it" } else { "them" }
    )]
    SkillIncluded {
        /// The skill asked to be removed.
        name: SkillName,
        /// The skills that include it, sorted.
        by: Vec<SkillName>,
    },
    /// Optimistic update lost against another writer.
    #[error(
        "skill `{name}` was changed by someone else (expected updated_at `{expected}`, found `{found}`); fetch it again and retry"
    )]
    Conflict {
        /// The contested skill.
        name: SkillName,
        /// The `updated_at` the caller read.
        expected: String,
        /// The `updated_at` in the store now.
        found: String,
    },
    /// `put_tools` without replace on a taken name.
    #[error("tool `{0}` is already registered")]
    DuplicateTool(String),
    /// The database was written by a newer build.
    #[error(
        "database schema version {found} is newer than this build supports ({supported}); upgrade `agents`"
    )]
    SchemaTooNew {
        /// Version found in the database.
        found: i64,
        /// Newest version this build knows.
        supported: i64,
    },
    /// The URL is not one we can open.
    #[error("invalid database url `{url}`: {reason}")]
    InvalidUrl {
        /// The URL, password removed.
        url: String,
        /// What was expected.
        reason: String,
    },
    /// A stored row does not decode (edited by hand, or a bug).
    #[error("corrupt row in `{table}` for `{key}`: {reason}")]
    Corrupt {
        /// Table name.
        table: &'static str,
        /// Primary key of the row.
        key: String,
        /// What is wrong.
        reason: String,
    },
    /// A value does not fit its column; checked before writing so every
    /// backend rejects the same values.
    #[error("cannot store `{key}`: `{table}.{column}` {reason}")]
    InvalidValue {
        /// Table name.
        table: &'static str,
        /// Column name.
        column: &'static str,
        /// Primary key of the row.
        key: String,
        /// What is wrong.
        reason: String,
    },
    /// The database could not be reached or answered with an error.
    #[error("{context}: {source}")]
    Database {
        /// What we were doing.
        context: String,
        /// The driver's error.
        #[source]
        source: DriverError,
    },
    /// The directory of a SQLite database that is not the default one does
    /// not exist: it is not created behind the user's back.
    #[error(
        "the directory `{}` of the database does not exist; create it with `{}`",
        .0.display(),
        agents_core::Hint::CreateRegistry
    )]
    MissingDirectory(std::path::PathBuf),
    /// A command that only reads found no SQLite file: it is not created
    /// (a mistyped path would become a new, empty registry).
    #[error(
        "no registry exists at `{}`; `{}` creates it (so does any command that writes, such as `{}`)",
        agents_core::text::shown_path(.0),
        agents_core::Hint::CreateRegistry,
        agents_core::Hint::AddSkill
    )]
    MissingDatabase(std::path::PathBuf),
    /// Filesystem trouble (creating the SQLite directory).
    #[error("{context}: {source}")]
    Io {
        /// What we were doing.
        context: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

/// At most ten names in backticks, then how many more: the message stays
/// short however many skills include one.
pub fn names_bounded(names: &[SkillName]) -> String {
    const SHOWN: usize = 10;
    let mut text = names
        .iter()
        .take(SHOWN)
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        text.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    text
}

impl StoreError {
    /// A row that does not decode. The key and the reason (serde's messages
    /// quote the offending value whole) come from a database others may
    /// write, so both are cut to a bounded length.
    pub(crate) fn corrupt(table: &'static str, key: &str, reason: impl AsRef<str>) -> Self {
        use agents_core::text::{MAX_ECHO_BYTES, bounded_message, shorten};
        Self::Corrupt {
            table,
            key: shorten(key, MAX_ECHO_BYTES).into_owned(),
            // A decode error quotes the value it choked on, which may be a
            // `token=…` someone put in a metadata string.
            reason: bounded_message(&agents_core::redact::redact_text(reason.as_ref())),
        }
    }

    /// A stable machine-readable kind, used in `--format json` errors.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::DuplicateSkill(_) => "duplicate_skill",
            Self::SkillNotFound(_) => "skill_not_found",
            Self::SkillIncluded { .. } => "skill_included",
            Self::Conflict { .. } => "conflict",
            Self::DuplicateTool(_) => "duplicate_tool",
            Self::SchemaTooNew { .. } => "schema_too_new",
            Self::InvalidUrl { .. } => "invalid_database_url",
            Self::Corrupt { .. } => "corrupt_data",
            Self::InvalidValue { .. } => "invalid_value",
            Self::Database { .. } => "database",
            Self::MissingDirectory(_) => "missing_database_directory",
            Self::MissingDatabase(_) => "missing_database",
            Self::Io { .. } => "io",
        }
    }
}

/// A database driver's error, from either backend.
///
/// Its text is cut to [`agents_core::text::MAX_MESSAGE_BYTES`]: a
/// PostgreSQL server is someone else's program (a shared registry's, or one
/// a URL points at), and the driver repeats whatever message it sends.
#[derive(Debug)]
pub struct DriverError(Driver);

impl From<Driver> for DriverError {
    fn from(driver: Driver) -> Self {
        Self(driver)
    }
}

impl std::fmt::Display for DriverError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&agents_core::text::bounded_message(&self.0.to_string()))
    }
}

impl std::error::Error for DriverError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        // What `#[error(transparent)]` gave: the driver's own cause.
        std::error::Error::source(&self.0)
    }
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum Driver {
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
    #[error(transparent)]
    Postgres(#[from] sqlx::Error),
    #[error("no free connection to the database within {} s", .0.as_secs())]
    PoolTimedOut(std::time::Duration),
}

impl From<rusqlite::Error> for DriverError {
    fn from(err: rusqlite::Error) -> Self {
        Self(Driver::Sqlite(err))
    }
}

impl From<sqlx::Error> for DriverError {
    fn from(err: sqlx::Error) -> Self {
        Self(Driver::Postgres(err))
    }
}

impl DriverError {
    pub(crate) fn pool_timed_out(after: std::time::Duration) -> Self {
        Self(Driver::PoolTimedOut(after))
    }

    /// A write lost a race on a primary key or unique index.
    pub(crate) fn is_unique_violation(&self) -> bool {
        match &self.0 {
            Driver::Sqlite(rusqlite::Error::SqliteFailure(err, _)) => matches!(
                err.extended_code,
                rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
                    | rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
            ),
            Driver::Postgres(err) => err
                .as_database_error()
                .is_some_and(|db| db.is_unique_violation()),
            _ => false,
        }
    }

    /// SQLite's `SQLITE_BUSY` or `SQLITE_LOCKED` (a lock the busy timeout
    /// does not wait for).
    pub(crate) fn is_busy(&self) -> bool {
        matches!(&self.0, Driver::Sqlite(rusqlite::Error::SqliteFailure(err, _))
            if matches!(err.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked))
    }

    fn is_pool_timeout(&self) -> bool {
        matches!(
            self.0,
            Driver::PoolTimedOut(_) | Driver::Postgres(sqlx::Error::PoolTimedOut)
        )
    }
}

/// Maps a driver error to [`StoreError::Database`] with `what` we were
/// doing and where (password removed).
pub(crate) fn db_error<E: Into<DriverError>>(
    what: &str,
    location: &str,
) -> impl FnOnce(E) -> StoreError + use<E> {
    let context = format!("{what} in `{location}`");
    move |source| {
        let source = source.into();
        let context = if source.is_pool_timeout() {
            format!("{context}: no connection to the database in time (is the server running?)")
        } else {
            context
        };
        StoreError::Database { context, source }
    }
}
