use agents_core::SkillName;

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// `add` of a name that is taken.
    #[error("skill `{0}` is already registered")]
    DuplicateSkill(SkillName),
    /// `update`/`get` of a name that is not registered.
    #[error("skill `{0}` is not registered")]
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
        source: sqlx::Error,
    },
    /// The directory of a SQLite database that is not the default one does
    /// not exist: it is not created behind the user's back.
    #[error(
        "the directory `{}` of the database does not exist; create it with `agents db init`",
        .0.display()
    )]
    MissingDirectory(std::path::PathBuf),
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
            Self::Io { .. } => "io",
        }
    }
}

/// Maps a driver error to [`StoreError::Database`] with `what` we were
/// doing and where (password removed).
pub(crate) fn db_error(
    what: &str,
    location: &str,
) -> impl FnOnce(sqlx::Error) -> StoreError + use<> {
    let context = format!("{what} in `{location}`");
    move |source| {
        let context = match source {
            sqlx::Error::PoolTimedOut => {
                format!("{context}: no connection to the database in time (is the server running?)")
            }
            _ => context,
        };
        StoreError::Database { context, source }
    }
}
