use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::PgConnectOptions;

use crate::error::StoreError;

const EXPECTED_FORMS: &str = "expected `sqlite:///absolute/path.db`, `sqlite://relative/path.db`, \
     `sqlite::memory:`, `postgres://user:password@host:port/database` or `postgresql://...`";

/// Where the registry lives, parsed from `--database-url` and friends.
///
/// `Display` and `Debug` never show a PostgreSQL password.
#[derive(Clone, PartialEq, Eq)]
pub enum DatabaseUrl {
    /// An SQLite file (absolute once parsed).
    Sqlite(PathBuf),
    /// A private in-memory SQLite database (gone when the store is dropped).
    SqliteMemory,
    /// A PostgreSQL connection URL, kept as written (`sslmode=` and other
    /// parameters are passed through to the driver).
    Postgres(String),
}

impl DatabaseUrl {
    /// Parses `raw`; a relative SQLite path is taken relative to the current
    /// directory.
    pub fn parse(raw: &str) -> Result<Self, StoreError> {
        let invalid = |reason: String| StoreError::InvalidUrl {
            url: redact(raw),
            reason,
        };
        if let Some(rest) = raw.strip_prefix("sqlite:") {
            if rest == ":memory:" || rest == "//:memory:" {
                return Ok(Self::SqliteMemory);
            }
            let Some(path) = rest.strip_prefix("//") else {
                return Err(invalid(EXPECTED_FORMS.into()));
            };
            if path.is_empty() {
                return Err(invalid(format!("the file path is empty; {EXPECTED_FORMS}")));
            }
            if path.contains('\0') {
                return Err(invalid("the file path contains a NUL byte".into()));
            }
            // `?mode=ro` and the like are not read: taken as part of the
            // file name, they made a new, empty registry next to the real one.
            if let Some((_, query)) = path.split_once('?') {
                return Err(invalid(format!(
                    "SQLite URLs take no parameters, got `?{}` (a `?` in the file name would be one)",
                    agents_core::text::shorten(&agents_core::redact::redact_text(query), 100)
                )));
            }
            let absolute = std::path::absolute(path).map_err(|err| {
                invalid(format!(
                    "cannot resolve `{path}` against the current directory: {err}"
                ))
            })?;
            return Ok(Self::Sqlite(absolute));
        }
        if raw.starts_with("postgres://") || raw.starts_with("postgresql://") {
            let (driver, _) = connect_timeout(raw).map_err(invalid)?;
            PgConnectOptions::from_str(&driver).map_err(|err| invalid(err.to_string()))?;
            return Ok(Self::Postgres(raw.to_owned()));
        }
        Err(invalid(EXPECTED_FORMS.into()))
    }

    /// `sqlite` or `postgres`.
    pub fn backend(&self) -> &'static str {
        match self {
            Self::Sqlite(_) | Self::SqliteMemory => "sqlite",
            Self::Postgres(_) => "postgres",
        }
    }
}

impl FromStr for DatabaseUrl {
    type Err = StoreError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl fmt::Display for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Sqlite(path) => write!(f, "sqlite://{}", path.display()),
            Self::SqliteMemory => f.write_str("sqlite::memory:"),
            Self::Postgres(url) => f.write_str(&redact(url)),
        }
    }
}

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DatabaseUrl({self})")
    }
}

/// The most `connect_timeout` may be, in seconds.
pub(crate) const MAX_CONNECT_TIMEOUT_S: u64 = 3600;

/// libpq's `connect_timeout=SECONDS` URL parameter, which the driver does
/// not read (it would warn and ignore it): `url` without it, for the
/// driver, and its value. Whole seconds from 1 to
/// [`MAX_CONNECT_TIMEOUT_S`]: unlike libpq, 0 does not mean "wait forever".
pub(crate) fn connect_timeout(url: &str) -> Result<(String, Option<Duration>), String> {
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_owned(), None));
    };
    let mut kept: Vec<&str> = Vec::new();
    let mut timeout = None;
    for pair in query.split('&') {
        match pair.split_once('=') {
            Some(("connect_timeout", value)) => {
                let seconds = value
                    .parse::<u64>()
                    .ok()
                    .filter(|s| (1..=MAX_CONNECT_TIMEOUT_S).contains(s))
                    .ok_or_else(|| {
                        format!(
                            "`connect_timeout` expects whole seconds from 1 to \
                             {MAX_CONNECT_TIMEOUT_S}, got `{}`",
                            agents_core::text::shorten(value, 20)
                        )
                    })?;
                timeout = Some(Duration::from_secs(seconds));
            }
            _ => kept.push(pair),
        }
    }
    let driver = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((driver, timeout))
}

/// `url` fit to print: the one redaction every crate uses.
pub(crate) fn redact(url: &str) -> String {
    agents_core::redact::redact_url(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_timeout_is_read_and_taken_out_for_the_driver() {
        assert_eq!(
            connect_timeout("postgres://u@h/db").unwrap(),
            ("postgres://u@h/db".to_owned(), None)
        );
        assert_eq!(
            connect_timeout(
                "postgres://u@h/db?sslmode=require&connect_timeout=3&application_name=x"
            )
            .unwrap(),
            (
                "postgres://u@h/db?sslmode=require&application_name=x".to_owned(),
                Some(Duration::from_secs(3))
            )
        );
        assert_eq!(
            connect_timeout("postgres://u@h/db?connect_timeout=3600").unwrap(),
            (
                "postgres://u@h/db".to_owned(),
                Some(Duration::from_secs(3600))
            )
        );
        for bad in ["0", "3601", "-1", "1.5", "", "ten"] {
            let err = DatabaseUrl::parse(&format!(
                "postgres://u:topsecret@h/db?connect_timeout={bad}"
            ))
            .unwrap_err()
            .to_string();
            assert!(
                err.contains(&format!(
                    "`connect_timeout` expects whole seconds from 1 to 3600, got `{bad}`"
                )) && !err.contains("topsecret"),
                "{err}"
            );
        }
        assert!(DatabaseUrl::parse("postgres://u@h/db?connect_timeout=5").is_ok());
    }

    #[test]
    fn sqlite_urls_take_no_parameters() {
        let err = DatabaseUrl::parse("sqlite:///tmp/x.db?mode=ro").unwrap_err();
        assert!(
            err.to_string()
                .contains("take no parameters, got `?mode=ro`"),
            "{err}"
        );
        let err = DatabaseUrl::parse("sqlite:///tmp/x.db?password=hunter2").unwrap_err();
        assert!(!err.to_string().contains("hunter2"), "{err}");
    }

    #[test]
    fn sqlite_forms() {
        assert_eq!(
            DatabaseUrl::parse("sqlite:///abs/x.db").unwrap(),
            DatabaseUrl::Sqlite(PathBuf::from("/abs/x.db"))
        );
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(
            DatabaseUrl::parse("sqlite://rel/x.db").unwrap(),
            DatabaseUrl::Sqlite(cwd.join("rel/x.db"))
        );
        assert_eq!(
            DatabaseUrl::parse("sqlite::memory:").unwrap(),
            DatabaseUrl::SqliteMemory
        );
        assert_eq!(
            DatabaseUrl::parse("sqlite::memory:").unwrap().backend(),
            "sqlite"
        );
        assert_eq!(
            DatabaseUrl::Sqlite(PathBuf::from("/abs/x.db")).to_string(),
            "sqlite:///abs/x.db"
        );
    }

    #[test]
    fn postgres_forms_keep_parameters_and_hide_passwords() {
        let raw = "postgres://alice:s3cret@db.example:5433/registry?sslmode=require";
        let url = DatabaseUrl::parse(raw).unwrap();
        assert_eq!(url, DatabaseUrl::Postgres(raw.into()));
        assert_eq!(url.backend(), "postgres");
        assert_eq!(
            url.to_string(),
            "postgres://alice:***@db.example:5433/registry?sslmode=require"
        );
        assert!(!format!("{url:?}").contains("s3cret"));
        let url = DatabaseUrl::parse("postgresql://bob@localhost/db?password=pw&sslmode=disable")
            .unwrap();
        assert_eq!(
            url.to_string(),
            "postgresql://bob@localhost/db?password=***&sslmode=disable"
        );
        assert_eq!(redact("postgres://h/db"), "postgres://h/db");
        assert_eq!(redact("postgres://u:p@h"), "postgres://u:***@h");
    }

    #[test]
    fn invalid_urls_name_the_expected_forms_without_the_password() {
        for bad in [
            "",
            "mysql://x",
            "sqlite:",
            "sqlite://",
            "sqlite:rel.db",
            "http://x",
        ] {
            let err = DatabaseUrl::parse(bad).unwrap_err();
            assert!(matches!(err, StoreError::InvalidUrl { .. }), "{bad}: {err}");
            assert!(err.to_string().contains("sqlite:///"), "{bad}: {err}");
        }
        let err = DatabaseUrl::parse("postgres://u:hidden@h:notaport/db").unwrap_err();
        let message = err.to_string();
        assert!(
            message.starts_with("invalid database url `postgres://u:***@h:notaport/db`"),
            "{message}"
        );
        assert!(!message.contains("hidden"), "{message}");
        let err = DatabaseUrl::parse("postgres://h/db?sslmode=sometimes").unwrap_err();
        assert!(matches!(err, StoreError::InvalidUrl { .. }), "{err}");
    }
}
