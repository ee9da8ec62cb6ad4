//! The shape of a backend's migration list. Each backend owns its SQL and
//! applies it itself (locking differs); the versions must stay in step.

/// One schema step.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Migration {
    /// Strictly increasing from 1.
    pub version: i64,
    /// Short label recorded with the version.
    pub description: &'static str,
    /// The statements, run in one transaction.
    pub sql: &'static str,
}

/// The newest version in `migrations`.
pub(crate) fn latest(migrations: &[Migration]) -> i64 {
    migrations
        .iter()
        .map(|migration| migration.version)
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backends_are_in_step_and_versions_increase() {
        let sqlite = crate::sqlite::MIGRATIONS;
        let postgres = crate::postgres::MIGRATIONS;
        let labels = |list: &[Migration]| {
            list.iter()
                .map(|m| (m.version, m.description))
                .collect::<Vec<_>>()
        };
        assert_eq!(labels(sqlite), labels(postgres));
        for (index, migration) in sqlite.iter().enumerate() {
            assert_eq!(migration.version, index as i64 + 1);
        }
        assert_eq!(latest(sqlite), sqlite.len() as i64);
    }
}
