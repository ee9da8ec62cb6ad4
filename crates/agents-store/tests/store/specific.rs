//! Tests of one backend's own promises: SQLite files and journal mode,
//! PostgreSQL TLS, unreachable servers and restarts.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use agents_store::{DatabaseUrl, Store, StoreError};
use sqlx::{Connection, Executor};

use crate::fixtures::*;
use crate::harness::{self, postgres_admin_url};

/// The URL of the SQLite file at `path`.
fn sqlite(path: &Path) -> DatabaseUrl {
    DatabaseUrl::Sqlite(path.to_path_buf())
}

/// A PostgreSQL URL as given, not parsed (as a configured URL reaches the
/// store).
fn postgres(url: String) -> DatabaseUrl {
    DatabaseUrl::Postgres(url)
}

/// The PostgreSQL store's connect and acquire timeout (its errors say
/// "within 10 s").
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

#[tokio::test]
async fn sqlite_creates_its_directory_only_when_asked_and_uses_wal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/deeper/registry.db");
    // `open` never creates directories: a mistyped path is an error.
    let err = Store::open(&sqlite(&path)).await.unwrap_err();
    assert_eq!(err.kind(), "missing_database_directory");
    assert_eq!(
        err.to_string(),
        format!(
            "the directory `{}` of the database does not exist; create it with `{}`",
            path.parent().unwrap().display(),
            agents_core::Hint::CreateRegistry
        )
    );
    assert!(!dir.path().join("nested").exists());
    let store = Store::create(&sqlite(&path)).await.unwrap();
    store
        .add_skills(&[skill("local/x", vec![tool_ref("a/b")])])
        .await
        .unwrap();
    assert!(path.is_file());
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |row| row.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .unwrap();
    assert_eq!(check, "ok");
}

/// A read never creates the file or its directory; a file that exists is
/// opened as any open does, an older schema migrated.
#[tokio::test]
async fn sqlite_open_existing_never_creates_and_migrates_an_older_schema() {
    let dir = tempfile::tempdir().unwrap();
    for path in [
        dir.path().join("registry.db"),
        dir.path().join("nested/registry.db"),
    ] {
        let err = Store::open_existing(&sqlite(&path)).await.unwrap_err();
        assert!(
            matches!(&err, StoreError::MissingDatabase(p) if *p == path),
            "{err}"
        );
        assert_eq!(err.kind(), "missing_database");
        assert_eq!(
            err.to_string(),
            format!(
                "no registry exists at `{}`; `{}` creates it \
                 (so does any command that writes, such as `{}`)",
                path.display(),
                agents_core::Hint::CreateRegistry,
                agents_core::Hint::AddSkill
            )
        );
        let url = DatabaseUrl::Sqlite(path.clone());
        let err = Store::open_existing(&url).await.unwrap_err();
        assert_eq!(err.kind(), "missing_database");
        assert!(!path.exists());
        assert!(!dir.path().join("nested").exists());
    }
    // An empty registry standing in for the missing file: it says where
    // the file would be, holds what is written for as long as it lives, and
    // never reaches the disk.
    let path = dir.path().join("registry.db");
    let stand_in = Store::missing(&path).await.unwrap();
    let status = stand_in.status().await.unwrap();
    assert_eq!(status.location, format!("sqlite://{}", path.display()));
    assert_eq!(
        (status.skills, status.schema_version),
        (0, status.supported_version)
    );
    stand_in
        .add_skills(&[skill("local/x", vec![tool_ref("a/b")])])
        .await
        .unwrap();
    assert_eq!(stand_in.status().await.unwrap().skills, 1);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // A registry at schema version 1 (before `tools_previous`): a read
    // brings it up to date, keeping its rows, as opening it always did.
    let store = Store::create(&sqlite(&path)).await.unwrap();
    store
        .add_skills(&[skill("local/x", vec![tool_ref("a/b")])])
        .await
        .unwrap();
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "DROP TABLE tools_previous; DELETE FROM schema_migrations WHERE version = 2",
    )
    .unwrap();
    drop(conn);
    let store = Store::open_existing(&sqlite(&path)).await.unwrap();
    let status = store.status().await.unwrap();
    assert_eq!(
        (
            status.schema_version,
            status.supported_version,
            status.skills
        ),
        (2, 2, 1)
    );
    assert!(store.get_skill(&name("local/x")).await.unwrap().is_some());
}

#[tokio::test]
async fn sqlite_default_path_and_url_forms_open() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join(".cleveragents/cleveragents.db");
    let url = DatabaseUrl::parse(&format!("sqlite://{}", path.display())).unwrap();
    assert_eq!(url, DatabaseUrl::Sqlite(path.clone()));
    let store = Store::create(&url).await.unwrap();
    assert_eq!(
        store.status().await.unwrap().location,
        format!("sqlite://{}", path.display())
    );
    assert!(home.path().join(".cleveragents/cleveragents.db").is_file());
}

#[tokio::test]
async fn sqlite_in_memory_works_and_keeps_data() {
    let store = Store::open(&DatabaseUrl::parse("sqlite::memory:").unwrap())
        .await
        .unwrap();
    store.add_skills(&[everything("mem/all")]).await.unwrap();
    // Several operations, possibly on other tasks: still the same database.
    let again = store.clone();
    let got = tokio::spawn(async move { again.get_skill(&name("mem/all")).await.unwrap() })
        .await
        .unwrap();
    assert_eq!(got.unwrap().items, everything("mem/all").items);
    assert_eq!(store.status().await.unwrap().location, "sqlite::memory:");
}

#[tokio::test]
async fn sqlite_unwritable_directory_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("file");
    std::fs::write(&blocker, "not a directory").unwrap();
    let err = Store::create(&sqlite(&blocker.join("registry.db")))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Io { .. }), "{err}");
    assert!(
        err.to_string().starts_with("cannot create directory"),
        "{err}"
    );
}

#[tokio::test]
async fn postgres_with_tls_required() {
    let Some(admin) = postgres_admin_url("specific::postgres_with_tls_required") else {
        return;
    };
    let separator = if admin.contains('?') { '&' } else { '?' };
    let url = format!("{admin}{separator}sslmode=require");
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    let ssl: bool = sqlx::query_scalar("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert!(ssl, "the connection is encrypted");
    let database = format!("t_tls_{}", std::process::id());
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "CREATE DATABASE \"{database}\""
    )))
    .execute(&mut conn)
    .await
    .unwrap();
    let result = async {
        let store = Store::open(&postgres(harness::with_database(&url, &database))).await?;
        store
            .add_skills(&[skill("tls/s", vec![tool_ref("a/b")])])
            .await?;
        store.status().await
    }
    .await;
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "DROP DATABASE \"{database}\" WITH (FORCE)"
    )))
    .execute(&mut conn)
    .await
    .unwrap();
    let status = result.unwrap();
    assert_eq!((status.backend, status.skills), ("postgres", 1));
    assert!(
        status.location.contains("sslmode=require"),
        "{}",
        status.location
    );
}

#[tokio::test]
async fn postgres_closed_port_fails_fast_and_clearly() {
    // No server needed: nothing listens on port 1.
    let err = Store::open(
        &DatabaseUrl::parse("postgres://agents:topsecret@127.0.0.1:1/registry").unwrap(),
    )
    .await
    .unwrap_err();
    let message = err.to_string();
    // "Fast" is structural, not timed: the refusal is the error of the one
    // direct connection. The pool retries a refused connection until its
    // 10 s timeout and then reports only that it timed out.
    assert!(
        !message.contains("timed out") && !message.contains("within"),
        "{message}"
    );
    assert!(
        message
            .starts_with("cannot connect to postgres `postgres://agents:***@127.0.0.1:1/registry`"),
        "{message}"
    );
    assert!(message.to_lowercase().contains("refused"), "{message}");
    assert!(!message.contains("topsecret"), "{message}");
    assert_eq!(err.kind(), "database");
}

#[tokio::test]
async fn postgres_unanswering_server_times_out() {
    // A listener that accepts TCP but never speaks PostgreSQL.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let hold = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let started = Instant::now();
    // libpq's `connect_timeout`, which the driver itself does not read.
    let err = Store::open(&postgres(format!(
        "postgres://u@127.0.0.1:{port}/db?sslmode=disable&connect_timeout=1"
    )))
    .await
    .unwrap_err();
    let took = started.elapsed();
    hold.abort();
    // The timing is the behaviour under test (the store waits out the
    // connect timeout the URL gives, then gives up), not a speed claim:
    // at least that long, and not the 10 s default.
    assert!(
        took >= Duration::from_secs(1) && took < CONNECT_TIMEOUT,
        "gave up after {took:?}"
    );
    assert!(err.to_string().contains("within 1 s"), "{err}");
}

#[tokio::test]
async fn postgres_server_error_text_is_bounded() {
    // A server that answers the startup message with a 1 MB error (a
    // hostile or broken shared registry): the driver repeats it whole.
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let serve = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        // The startup message: its length (itself included), then the rest.
        let len = socket.read_u32().await.unwrap() as usize;
        let mut startup = vec![0; len - 4];
        socket.read_exact(&mut startup).await.unwrap();
        let message = format!("{}THE END", "x".repeat(1_000_000));
        let mut fields = Vec::new();
        for (code, value) in [(b'S', "FATAL"), (b'C', "28000"), (b'M', &message)] {
            fields.push(code);
            fields.extend_from_slice(value.as_bytes());
            fields.push(0);
        }
        fields.push(0);
        let mut reply = vec![b'E'];
        reply.extend_from_slice(&(fields.len() as u32 + 4).to_be_bytes());
        reply.extend_from_slice(&fields);
        socket.write_all(&reply).await.unwrap();
        let _ = socket.shutdown().await;
    });
    let err = Store::open(&postgres(format!(
        "postgres://u:secret@127.0.0.1:{port}/db?sslmode=disable"
    )))
    .await
    .unwrap_err();
    serve.await.unwrap();
    assert_eq!(err.kind(), "database");
    let text = err.to_string();
    assert!(text.len() < 2_048, "{} bytes", text.len());
    // Both ends kept: who failed, and how the message ended.
    assert!(
        text.starts_with(&format!(
            "cannot connect to postgres `postgres://u:***@127.0.0.1:{port}/db"
        )),
        "{text}"
    );
    assert!(text.ends_with("THE END"), "{text}");
    assert!(text.contains("bytes cut"), "{text}");
    assert!(!text.contains("secret"), "{text}");
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/pg-test-server.sh")
}

fn server(command: &str, dir: &Path) -> String {
    let output = Command::new("bash")
        .arg(script())
        .arg(command)
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "pg-test-server.sh {command}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Stops the private server even when the test fails.
struct PrivateServer(PathBuf);

impl Drop for PrivateServer {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(script())
            .arg("stop")
            .arg(&self.0)
            .output();
    }
}

#[tokio::test]
async fn postgres_restart_is_survived_and_a_stopped_server_is_a_clear_error() {
    if postgres_admin_url(
        "specific::postgres_restart_is_survived_and_a_stopped_server_is_a_clear_error",
    )
    .is_none()
    {
        return;
    }
    // A private server: restarting the shared one would break other tests.
    let dir = tempfile::Builder::new()
        .prefix("agents-pg-")
        .tempdir_in("/tmp")
        .unwrap();
    let data = dir.path().join("pg");
    let exports = server("start", &data);
    let _guard = PrivateServer(data.clone());
    let url = exports
        .lines()
        .find_map(|line| line.strip_prefix("export AGENTS_TEST_POSTGRES_URL='"))
        .and_then(|rest| rest.strip_suffix('\''))
        .unwrap()
        .to_owned();
    // A short connect timeout, so the stopped server below is given up on
    // in 2 s rather than the default 10.
    let separator = if url.contains('?') { '&' } else { '?' };
    let url = format!("{url}{separator}connect_timeout=2");

    let store = Store::open(&postgres(url.clone())).await.unwrap();
    store
        .add_skills(&[skill("pg/before", vec![tool_ref("a/b")])])
        .await
        .unwrap();
    server("restart", &data);
    // The pooled connection died with the server; the store reconnects.
    let after = tokio::time::timeout(
        3 * CONNECT_TIMEOUT,
        store.add_skills(&[skill("pg/after", vec![])]),
    )
    .await;
    after
        .expect("add_skills after the restart neither failed nor returned within 3 x the connect timeout")
        .unwrap();
    assert_eq!(store.list_skills(Some("pg")).await.unwrap().len(), 2);

    server("stop", &data);
    // A hang guard, not a speed claim: the pool gives up on a stopped
    // server by its acquire timeout (the URL's 2 s); the default's three
    // times over is a hang.
    let result = tokio::time::timeout(3 * CONNECT_TIMEOUT, store.list_skills(None))
        .await
        .expect("list_skills neither failed nor returned within 3 x the connect timeout");
    let err = result.unwrap_err();
    assert!(matches!(err, StoreError::Database { .. }), "{err}");
    assert!(
        err.to_string()
            .starts_with("cannot list skills in `postgres://postgres:***@127.0.0.1:"),
        "{err}"
    );
    let err = Store::open(&postgres(url.clone())).await.unwrap_err();
    assert!(err.to_string().to_lowercase().contains("refused"), "{err}");
}

/// Waits until `count` sessions of the database at `url` wait on a lock,
/// or `done` holds (which fails the caller's expectations instead).
async fn until_waiting_on_locks(url: &str, count: i64, done: impl Fn() -> bool) {
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    loop {
        let waiting: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_stat_activity \
             WHERE datname = current_database() AND wait_event_type = 'Lock'",
        )
        .fetch_one(&mut conn)
        .await
        .unwrap();
        if waiting >= count || done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A connection of its own inside a transaction that has run `sql` (a
/// lock it holds until the test ends the transaction).
async fn holding(url: &str, sql: &'static str) -> sqlx::PgConnection {
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    conn.execute("BEGIN").await.unwrap();
    conn.execute(sql).await.unwrap();
    conn
}

/// The database's URL and a store holding `race/base`.
async fn with_base(ctx: &harness::Ctx) -> (String, std::sync::Arc<Store>) {
    let url = ctx.postgres_url().unwrap().to_string();
    let store = std::sync::Arc::new(ctx.open().await);
    store
        .add_skills(&[skill("race/base", vec![tool_ref("a/b")])])
        .await
        .unwrap();
    (url, store)
}

/// A removal that starts while another writer's include of the skill is
/// written but not committed waits for that writer and then refuses, as on
/// SQLite (whose writers are serialized): it never leaves the committed
/// include pointing at nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_remove_waits_for_an_uncommitted_include_and_refuses() {
    let name = "specific::postgres_remove_waits_for_an_uncommitted_include_and_refuses";
    if postgres_admin_url(name).is_none() {
        return;
    }
    harness::postgres(name, |ctx| async move {
        let (url, store) = with_base(&ctx).await;
        // Holds the `registry_meta` key the add writes last, so the add
        // stops there: its skill and include rows written, not committed.
        let mut pause = holding(
            &url,
            "INSERT INTO registry_meta (key, value) VALUES ('race.pause', 'held')",
        )
        .await;
        let adding = {
            let store = store.clone();
            tokio::spawn(async move {
                let user = skill("race/user", vec![include("race/base")]);
                store
                    .write_skills(&[], &[user], &[], &[("race.pause", "added")])
                    .await
            })
        };
        until_waiting_on_locks(&url, 1, || adding.is_finished()).await;
        assert!(
            !adding.is_finished(),
            "the add did not stop at the held key"
        );
        let removing = {
            let store = store.clone();
            tokio::spawn(async move {
                store
                    .remove_skill(&agents_core::SkillName::new("race/base").unwrap(), false)
                    .await
            })
        };
        until_waiting_on_locks(&url, 2, || removing.is_finished()).await;
        assert!(
            !removing.is_finished(),
            "the removal went ahead of an uncommitted include of its skill: {:?}",
            removing.await
        );
        pause.execute("ROLLBACK").await.unwrap();
        adding.await.unwrap().unwrap();
        match removing.await.unwrap() {
            Err(StoreError::SkillIncluded { name, by }) => {
                assert_eq!(name.as_str(), "race/base");
                assert_eq!(by.len(), 1);
                assert_eq!(by[0].as_str(), "race/user");
            }
            other => panic!("expected `skill_included`, got {other:?}"),
        }
        assert!(
            store
                .get_skill(&agents_core::SkillName::new("race/base").unwrap())
                .await
                .unwrap()
                .is_some()
        );
    })
    .await;
}

/// A write that includes a skill whose removal has started (its row locked,
/// not yet deleted) waits for the removal: the include is then of a missing
/// skill, written after the removal, never one the removal could not see.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_include_waits_for_a_removal_in_progress() {
    let name = "specific::postgres_include_waits_for_a_removal_in_progress";
    if postgres_admin_url(name).is_none() {
        return;
    }
    harness::postgres(name, |ctx| async move {
        let (url, store) = with_base(&ctx).await;
        // A removal as the store makes one: the row locked, no includer seen.
        let mut remover = holding(
            &url,
            "SELECT name FROM skills WHERE name = 'race/base' FOR UPDATE",
        )
        .await;
        let adding = {
            let store = store.clone();
            tokio::spawn(async move {
                let user = skill("race/user", vec![include("race/base")]);
                store.add_skills(&[user]).await
            })
        };
        until_waiting_on_locks(&url, 1, || adding.is_finished()).await;
        assert!(
            !adding.is_finished(),
            "the include was written while the removal of its skill was under way: {:?}",
            adding.await
        );
        remover
            .execute("DELETE FROM skills WHERE name = 'race/base'")
            .await
            .unwrap();
        remover.execute("COMMIT").await.unwrap();
        adding.await.unwrap().unwrap();
        let user = store
            .get_skill(&agents_core::SkillName::new("race/user").unwrap())
            .await
            .unwrap();
        assert!(user.is_some());
    })
    .await;
}

/// A write waits for a lock another session holds at most the lock timeout
/// (60 s by default, here the URL's own), then fails saying so: a stuck
/// client cannot hang every other user's command.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_a_held_lock_is_waited_for_a_bounded_time() {
    let name = "specific::postgres_a_held_lock_is_waited_for_a_bounded_time";
    if postgres_admin_url(name).is_none() {
        return;
    }
    harness::postgres(name, |ctx| async move {
        let url = ctx.postgres_url().unwrap().to_string();
        drop(ctx.open().await);
        let mut holder = holding(&url, "LOCK TABLE skills IN ACCESS EXCLUSIVE MODE").await;
        let separator = if url.contains('?') { '&' } else { '?' };
        let short = format!("{url}{separator}options=-c%20lock_timeout%3D300ms");
        let store = Store::open(&postgres(short)).await.unwrap();
        let err = store
            .add_skills(&[skill("lock/waiter", vec![tool_ref("a/b")])])
            .await
            .unwrap_err();
        assert!(err.to_string().contains("lock timeout"), "{err}");
        holder.execute("ROLLBACK").await.unwrap();
        store
            .add_skills(&[skill("lock/waiter", vec![tool_ref("a/b")])])
            .await
            .unwrap();
    })
    .await;
}

/// An update of a skill another writer includes (holding its row
/// key-shared until it commits) does not wait for that writer: two writes
/// that each include what the other updates would otherwise deadlock.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_an_update_does_not_wait_for_a_writer_including_the_skill() {
    let name = "specific::postgres_an_update_does_not_wait_for_a_writer_including_the_skill";
    if postgres_admin_url(name).is_none() {
        return;
    }
    harness::postgres(name, |ctx| async move {
        let (url, store) = with_base(&ctx).await;
        // A writer whose skill includes `race/base`, not committed yet.
        let mut includer = holding(
            &url,
            "SELECT name FROM skills WHERE name = 'race/base' FOR KEY SHARE",
        )
        .await;
        let updating = {
            let store = store.clone();
            tokio::spawn(async move {
                let mut changed = skill("race/base", vec![tool_ref("a/c")]);
                changed.description = Some("changed".into());
                store.update_skills(&[changed]).await
            })
        };
        until_waiting_on_locks(&url, 1, || updating.is_finished()).await;
        assert!(
            updating.is_finished(),
            "the update waited for a writer that only includes the skill"
        );
        updating.await.unwrap().unwrap();
        includer.execute("COMMIT").await.unwrap();
    })
    .await;
}
