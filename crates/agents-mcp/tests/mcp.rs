#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The MCP client against real processes: our fixture server (every fault mode,
//! stdio and HTTP on 127.0.0.1) and, when installed, the third-party
//! `@modelcontextprotocol/server-everything` (see `scripts/install-mcp-everything.sh`).
//!
//! The fixture is the crate `agents-mcp-fixture`, built by `cargo test -p agents-mcp`
//! as this crate's example of the same name (`CARGO_BIN_EXE_*` only exists for a
//! package's own binaries); `support::fixture_bin` finds it next to this test binary.
//! Process checks read `/proc`, so these tests are Linux-only.

#[path = "mcp/everything.rs"]
mod everything;
#[path = "mcp/support.rs"]
mod support;

use std::time::{Duration, Instant};

use agents_core::{McpSource, ToolSource};
use agents_mcp::{FetchOptions, McpError, McpTransport};
use serde_json::json;
use support::*;
use time::format_description::well_known::Rfc3339;

fn names(fetched: &agents_mcp::FetchedTools) -> Vec<&str> {
    fetched
        .tools
        .iter()
        .map(|tool| tool.name.as_str())
        .collect()
}

#[tokio::test]
async fn normal_stdio_fetch_reports_exact_names_schemas_and_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let mut source = fixture_source("fx", &["normal"]);
    source.cwd = Some(dir.path().display().to_string());
    let started = Instant::now();
    let fetched = fetch_tools(&source, &options(&[])).await.unwrap();
    eprintln!("stdio fetch from the fixture took {:?}", started.elapsed());

    assert_eq!(fetched.server, "fx");
    assert_eq!(fetched.transport, McpTransport::Stdio);
    assert_eq!(
        names(&fetched),
        [
            "mcp:fx/add",
            "mcp:fx/write_note",
            "mcp:fx/delete_everything",
            "mcp:fx/cwd"
        ]
    );
    assert!(fetched.rejected.is_empty());
    let info = fetched.server_info.as_ref().unwrap();
    assert_eq!(
        (info.name.as_str(), info.version.as_str()),
        ("agents-mcp-fixture", "1.2.3")
    );

    let add = &fetched.tools[0];
    assert_eq!(add.description, "Adds two integers");
    assert_eq!(add.source, ToolSource::Mcp);
    assert_eq!(
        add.input_schema,
        Some(json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer", "description": "first addend"},
                "b": {"type": "integer", "description": "second addend"}
            },
            "required": ["a", "b"]
        }))
    );
    assert_eq!(
        add.output_schema,
        Some(
            json!({"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]})
        )
    );
    assert_eq!(
        (add.read_only, add.writes, add.side_effects),
        (Some(true), Some(false), Some(false))
    );

    let metadata = &add.source_metadata;
    assert_eq!(metadata["server"], "fx");
    assert_eq!(metadata["transport"], "stdio");
    assert_eq!(metadata["tool"], "add");
    assert_eq!(metadata["annotations"], json!({"readOnlyHint": true}));
    let fetched_at = metadata["fetched_at"].as_str().unwrap();
    assert!(fetched_at.ends_with('Z'), "{fetched_at}");
    assert_eq!(
        time::OffsetDateTime::parse(fetched_at, &Rfc3339).unwrap(),
        fetched.fetched_at
    );

    let write = &fetched.tools[1];
    assert_eq!(
        (write.read_only, write.writes, write.side_effects),
        (Some(false), Some(true), Some(true))
    );
    let delete = &fetched.tools[2];
    assert_eq!((delete.read_only, delete.writes), (Some(false), Some(true)));
    let cwd = &fetched.tools[3];
    assert_eq!(
        (cwd.read_only, cwd.writes, cwd.side_effects),
        (None, None, None)
    );
    // The child ran in the item's `cwd`.
    assert_eq!(
        std::fs::canonicalize(&cwd.description).unwrap(),
        std::fs::canonicalize(dir.path()).unwrap()
    );
}

#[tokio::test]
async fn env_is_expanded_into_the_child_and_the_source_is_unchanged() {
    let mut source = fixture_source("fx", &["--echo-env", "FIXTURE_SECRET", "normal"]);
    source
        .env
        .insert("FIXTURE_SECRET".into(), "${TOKEN}-and-$${LITERAL}".into());
    let before = source.clone();
    let fetched = fetch_tools(&source, &options(&[("TOKEN", "s3cr3t")]))
        .await
        .unwrap();
    let echo = fetched
        .tools
        .iter()
        .find(|tool| tool.name == "mcp:fx/echo_env")
        .unwrap();
    assert_eq!(echo.description, "s3cr3t-and-${LITERAL}");
    assert_eq!(source, before, "the item keeps `${{VAR}}` as written");
}

#[tokio::test]
async fn a_missing_variable_names_it_and_starts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pids");
    let mut source = fixture_source("fx", &["--pid-file", pid_file.to_str().unwrap(), "normal"]);
    source
        .env
        .insert("API_KEY".into(), "${NOT_SET_ANYWHERE}".into());
    let err = fetch_tools(&source, &options(&[])).await.unwrap_err();
    assert_eq!(
        err,
        McpError::MissingVar {
            server: "fx".into(),
            field: "env.API_KEY".into(),
            var: "NOT_SET_ANYWHERE".into()
        }
    );
    assert_eq!(
        err.to_string(),
        "mcp server `fx`: `env.API_KEY`: environment variable `NOT_SET_ANYWHERE` is not set"
    );
    assert!(!pid_file.exists(), "the server must not be started");
}

#[tokio::test]
async fn pagination_follows_cursors_in_order() {
    let fetched = fetch_tools(
        &fixture_source("pages", &["paginated", "25", "10"]),
        &options(&[]),
    )
    .await
    .unwrap();
    let expected: Vec<String> = (0..25).map(|i| format!("mcp:pages/tool_{i:04}")).collect();
    assert_eq!(names(&fetched), expected);
    assert_eq!(fetched.tools[24].source_metadata["tool"], "tool_0024");
}

#[tokio::test]
async fn a_slow_server_times_out_within_the_item_timeout_and_dies() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pids");
    let mut source = fixture_source(
        "slow",
        &[
            "--grandchild",
            "--pid-file",
            pid_file.to_str().unwrap(),
            "slow",
            "60",
        ],
    );
    source.timeout_s = Some(1); // wins over the options' 10 s
    let started = Instant::now();
    let err = fetch_tools(&source, &options(&[])).await.unwrap_err();
    let elapsed = started.elapsed();
    assert!(
        matches!(&err, McpError::Timeout { server, stage: "tools/list", timeout, .. }
            if server == "slow" && *timeout == Duration::from_secs(1)),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .starts_with("mcp server `slow`: no answer to `tools/list` within 1 s"),
        "{err}"
    );
    // The timing is the behaviour under test (the item's 1 s wins over the
    // options' 10 s), not a speed claim: it waited the 1 s and gave up well
    // before 10 s.
    let timeout = Duration::from_secs(1);
    assert!(
        elapsed >= timeout && elapsed < 5 * timeout,
        "gave up after {elapsed:?}"
    );
    let pids = read_pids(&pid_file);
    assert_eq!(pids.len(), 2);
    assert_eq!(
        wait_all_dead(&pids, Duration::from_secs(3)),
        Vec::<u32>::new(),
        "server or grandchild survived"
    );
}

#[tokio::test]
async fn a_crash_before_initialize_is_reported_with_status_and_stderr() {
    let err = fetch_tools(&fixture_source("crashy", &["crash"]), &options(&[]))
        .await
        .unwrap_err();
    match &err {
        McpError::ExitedEarly {
            server,
            status,
            stage,
            stderr,
        } => {
            assert_eq!(server, "crashy");
            assert_eq!(status, "exit status: 3");
            assert_eq!(*stage, "initialize");
            assert!(stderr.contains("crashing on purpose"), "{stderr}");
        }
        other => panic!("expected ExitedEarly, got {other:?}"),
    }
}

#[tokio::test]
async fn a_server_echoing_its_secrets_has_them_masked_in_errors() {
    // It prints the environment it was given to stderr and exits: the
    // expanded `${VAR}`, a secret-named literal and a header-style token
    // are each masked in the error; other text stays.
    let mut source = McpSource {
        server: "leaky".into(),
        command: Some("sh".into()),
        args: vec![
            "-c".into(),
            "echo \"starting with OTHER=$OTHER KEY=$API_KEY AUTH=$AUTHORIZATION LEVEL=$LEVEL\" >&2; exit 3".into(),
        ],
        ..McpSource::default()
    };
    source.env.insert("OTHER".into(), "x${MY_SECRET}y".into());
    source.env.insert("API_KEY".into(), "lit3ralpass".into());
    source
        .env
        .insert("AUTHORIZATION".into(), "Bearer t0kenvalue".into());
    source.env.insert("LEVEL".into(), "debug".into());
    let err = fetch_tools(&source, &options(&[("MY_SECRET", "EnvSecret4242")]))
        .await
        .unwrap_err();
    let shown = err.to_string();
    assert!(matches!(err, McpError::ExitedEarly { .. }), "{err:?}");
    for secret in ["EnvSecret4242", "lit3ralpass", "t0kenvalue"] {
        assert!(!shown.contains(secret), "{shown}");
    }
    assert!(shown.contains("starting with OTHER=x***y"), "{shown}");
    assert!(shown.contains("AUTH=***"), "{shown}");
    assert!(shown.contains("LEVEL=debug"), "{shown}");
}

#[tokio::test]
async fn a_crash_during_tools_list_is_reported() {
    let err = fetch_tools(
        &fixture_source("crashy", &["crash-after-init"]),
        &options(&[]),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, McpError::ExitedEarly { status, stage: "tools/list", .. } if status == "exit status: 4"),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_program_that_exits_at_once_is_reported() {
    let source = McpSource {
        server: "quitter".into(),
        command: Some("sh".into()),
        args: vec!["-c".into(), "echo bye >&2; exit 7".into()],
        ..McpSource::default()
    };
    let err = fetch_tools(&source, &options(&[])).await.unwrap_err();
    assert!(
        matches!(&err, McpError::ExitedEarly { status, stderr, .. } if status == "exit status: 7" && stderr == "bye"),
        "{err:?}"
    );
}

#[tokio::test]
async fn garbage_on_stdout_is_a_fast_clear_error() {
    let err = fetch_tools(&fixture_source("noisy", &["garbage"]), &options(&[]))
        .await
        .unwrap_err();
    // "Fast" is structural: `Garbage`, not the `Timeout` that waiting out
    // the options' 10 s would give (with the garbage only in its note).
    match &err {
        McpError::Garbage { server, sample } => {
            assert_eq!(server, "noisy");
            assert!(sample.contains("not JSON-RPC"), "{sample}");
        }
        other => panic!("expected Garbage, got {other:?}"),
    }
    assert!(
        err.to_string()
            .starts_with("mcp server `noisy` wrote output that is not JSON-RPC"),
        "{err}"
    );
}

#[tokio::test]
async fn a_huge_tool_list_is_refused_quickly() {
    let opts = FetchOptions {
        max_tools: 10_000,
        ..options(&[])
    };
    let started = Instant::now();
    let err = fetch_tools(&fixture_source("big", &["huge", "100000"]), &opts)
        .await
        .unwrap_err();
    eprintln!(
        "100 000 tools refused in {:?}; {}",
        started.elapsed(),
        peak_memory()
    );
    assert_eq!(
        err,
        McpError::TooManyTools {
            server: "big".into(),
            limit: 10_000
        }
    );
    assert_eq!(
        err.to_string(),
        "mcp server `big` lists more than 10000 tools"
    );
    // Not a `Timeout`: the page was refused, not waited on. That the stdout
    // watcher counts a page's tools before rmcp builds them is checked in
    // `process::tests::tools_are_counted_across_pages_before_rmcp_sees_them`.
}

#[tokio::test]
async fn an_oversized_message_is_refused() {
    let opts = FetchOptions {
        max_tools: 1_000_000,
        max_message_bytes: 1 << 20,
        ..options(&[])
    };
    let err = fetch_tools(&fixture_source("big", &["huge", "100000"]), &opts)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        McpError::MessageTooLarge {
            server: "big".into(),
            limit: 1 << 20
        }
    );
}

#[tokio::test]
async fn a_huge_tool_list_over_http_is_refused() {
    let server = start_http_fixture(&["huge", "20000"]);
    let source = McpSource {
        server: "big".into(),
        url: Some(server.url.clone()),
        ..McpSource::default()
    };
    let opts = FetchOptions {
        max_tools: 10_000,
        ..options(&[])
    };
    let err = fetch_tools(&source, &opts).await.unwrap_err();
    assert_eq!(
        err,
        McpError::TooManyTools {
            server: "big".into(),
            limit: 10_000
        }
    );
}

#[tokio::test]
async fn a_large_tool_list_under_the_limit_is_accepted() {
    let started = Instant::now();
    let fetched = fetch_tools(&fixture_source("big", &["huge", "5000"]), &options(&[]))
        .await
        .unwrap();
    eprintln!("5 000 tools fetched and checked in {:?}", started.elapsed());
    assert_eq!(fetched.tools.len(), 5000);
    assert_eq!(fetched.tools[4999].name, "mcp:big/tool_004999");
}

#[tokio::test]
async fn a_repeated_cursor_is_a_loop() {
    let err = fetch_tools(&fixture_source("loopy", &["loop-cursor"]), &options(&[]))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        McpError::CursorLoop {
            server: "loopy".into(),
            cursor: "again".into()
        }
    );
}

#[tokio::test]
async fn endless_pages_are_bounded() {
    let opts = FetchOptions {
        max_pages: 50,
        ..options(&[])
    };
    let err = fetch_tools(&fixture_source("endless", &["endless"]), &opts)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        McpError::TooManyPages {
            server: "endless".into(),
            limit: 50
        }
    );
}

#[tokio::test]
async fn a_tool_with_an_invalid_schema_is_left_out_and_reported() {
    let fetched = fetch_tools(&fixture_source("bad", &["bad-schema"]), &options(&[]))
        .await
        .unwrap();
    assert_eq!(names(&fetched), ["mcp:bad/fine"]);
    assert_eq!(fetched.rejected.len(), 1);
    let rejected = &fetched.rejected[0];
    assert_eq!(
        (rejected.server.as_str(), rejected.tool.as_str()),
        ("bad", "broken")
    );
    assert!(
        rejected.to_string().starts_with(
            "mcp server `bad`: tool `broken` skipped: `inputSchema`: not a valid JSON Schema"
        ),
        "{rejected}"
    );
}

#[tokio::test]
async fn an_error_answer_to_tools_list_is_reported() {
    let err = fetch_tools(&fixture_source("sad", &["list-error"]), &options(&[]))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, McpError::Protocol { server, stage: "tools/list", message }
            if server == "sad" && message.contains("the tool catalogue is unavailable")),
        "{err:?}"
    );
    // A megabyte of error text from the server is cut in the middle.
    let err = fetch_tools(
        &fixture_source("sad", &["list-error", "1000000"]),
        &options(&[]),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(err.len() < 4096, "{}", err.len());
    assert!(err.contains("the tool catalogue is unavailable"), "{err}");
    assert!(err.contains("bytes cut"), "{err}");
}

#[tokio::test]
async fn a_server_without_the_tools_capability_has_no_tools() {
    let fetched = fetch_tools(&fixture_source("bare", &["no-tools"]), &options(&[]))
        .await
        .unwrap();
    assert!(fetched.tools.is_empty());
    assert!(fetched.server_info.is_some());
}

#[tokio::test]
async fn the_allow_list_selects_tools_and_reports_unknown_ones() {
    let fetched = fetch_tools(&fixture_source("fx", &["normal"]), &options(&[]))
        .await
        .unwrap();
    let allowed = [
        "add".to_string(),
        "mcp:fx/cwd".to_string(),
        "nope".to_string(),
    ];
    let selection = fetched.select(Some(&allowed));
    let selected: Vec<&str> = selection
        .tools
        .iter()
        .map(|tool| tool.name.as_str())
        .collect();
    assert_eq!(selected, ["mcp:fx/add", "mcp:fx/cwd"]);
    assert_eq!(selection.missing, ["nope"]);
    assert_eq!(fetched.select(None).tools.len(), fetched.tools.len());
}

#[tokio::test]
async fn a_missing_program_or_directory_cannot_start() {
    let source = McpSource {
        server: "ghost".into(),
        command: Some("agents-mcp-no-such-program".into()),
        ..McpSource::default()
    };
    let err = fetch_tools(&source, &options(&[])).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "mcp server `ghost`: cannot start `agents-mcp-no-such-program`: command not found"
    );

    let mut source = fixture_source("ghost", &["normal"]);
    source.cwd = Some("/definitely/not/here".into());
    let err = fetch_tools(&source, &options(&[])).await.unwrap_err();
    assert!(
        err.to_string()
            .ends_with("working directory `/definitely/not/here` is not a directory"),
        "{err}"
    );
}

#[tokio::test]
async fn sources_that_are_not_fully_specified_are_rejected() {
    let both = McpSource {
        server: "x".into(),
        command: Some("a".into()),
        url: Some("http://127.0.0.1:1/mcp".into()),
        ..McpSource::default()
    };
    assert!(matches!(
        fetch_tools(&both, &options(&[])).await,
        Err(McpError::InvalidSource { .. })
    ));
    let reference = McpSource {
        server: "x".into(),
        ..McpSource::default()
    };
    let err = fetch_tools(&reference, &options(&[])).await.unwrap_err();
    assert!(
        err.to_string().contains("neither `command` nor `url`"),
        "{err}"
    );
    let zero = McpSource {
        timeout_s: Some(0),
        ..fixture_source("x", &["normal"])
    };
    assert!(matches!(
        fetch_tools(&zero, &options(&[])).await,
        Err(McpError::InvalidSource { .. })
    ));
}

#[tokio::test]
async fn no_process_survives_a_successful_fetch() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pids");
    let source = fixture_source(
        "clean",
        &[
            "--grandchild",
            "--pid-file",
            pid_file.to_str().unwrap(),
            "normal",
        ],
    );
    let started = Instant::now();
    fetch_tools(&source, &options(&[])).await.unwrap();
    eprintln!(
        "fetch + shutdown with a grandchild took {:?}",
        started.elapsed()
    );
    let pids = read_pids(&pid_file);
    assert_eq!(pids.len(), 2);
    assert_eq!(
        wait_all_dead(&pids, Duration::from_secs(3)),
        Vec::<u32>::new(),
        "server or grandchild survived"
    );
}

#[tokio::test]
async fn no_process_survives_a_dropped_fetch() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pids");
    let source = fixture_source(
        "dropped",
        &[
            "--grandchild",
            "--pid-file",
            pid_file.to_str().unwrap(),
            "slow",
            "60",
        ],
    );
    let task = tokio::spawn(async move { fetch_tools(&source, &options(&[])).await });
    wait_for_file(&pid_file, Duration::from_secs(5)).await;
    let pids = read_pids(&pid_file);
    assert!(
        pids.iter().all(|pid| alive(*pid)),
        "both processes run before the drop"
    );
    // What a Ctrl-C handler that drops the fetch does.
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    assert_eq!(
        wait_all_dead(&pids, Duration::from_secs(3)),
        Vec::<u32>::new(),
        "server or grandchild survived"
    );
}

#[tokio::test]
async fn http_fetch_sends_expanded_headers() {
    let server = start_http_fixture(&["--echo-header", "x-fixture-token", "normal"]);
    let source = McpSource {
        server: "web".into(),
        url: Some(server.url.clone()),
        headers: [("X-Fixture-Token".to_string(), "Bearer ${TOKEN}".to_string())]
            .into_iter()
            .collect(),
        ..McpSource::default()
    };
    let before = source.clone();
    let started = Instant::now();
    let fetched = fetch_tools(&source, &options(&[("TOKEN", "abc123")]))
        .await
        .unwrap();
    eprintln!("http fetch from the fixture took {:?}", started.elapsed());
    assert_eq!(fetched.transport, McpTransport::Http);
    assert_eq!(
        names(&fetched),
        [
            "mcp:web/add",
            "mcp:web/write_note",
            "mcp:web/delete_everything",
            "mcp:web/cwd",
            "mcp:web/echo_header"
        ]
    );
    assert_eq!(fetched.tools[4].description, "Bearer abc123");
    assert_eq!(fetched.tools[0].source_metadata["transport"], "http");
    assert_eq!(
        fetched.tools[0].input_schema.as_ref().unwrap()["required"],
        json!(["a", "b"])
    );
    assert_eq!(source, before);
}

#[tokio::test]
async fn http_pagination_and_missing_header_variable() {
    let server = start_http_fixture(&["paginated", "7", "3"]);
    let mut source = McpSource {
        server: "web".into(),
        url: Some(server.url.clone()),
        ..McpSource::default()
    };
    let fetched = fetch_tools(&source, &options(&[])).await.unwrap();
    assert_eq!(fetched.tools.len(), 7);

    source
        .headers
        .insert("Authorization".into(), "Bearer ${GONE}".into());
    let err = fetch_tools(&source, &options(&[])).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "mcp server `web`: `headers.Authorization`: environment variable `GONE` is not set"
    );
}

#[tokio::test]
async fn http_slow_server_times_out() {
    let server = start_http_fixture(&["slow", "30"]);
    let source = McpSource {
        server: "web".into(),
        url: Some(server.url.clone()),
        timeout_s: Some(1),
        ..McpSource::default()
    };
    let started = Instant::now();
    let err = fetch_tools(&source, &options(&[])).await.unwrap_err();
    let elapsed = started.elapsed();
    assert!(
        matches!(
            err,
            McpError::Timeout {
                stage: "tools/list",
                timeout,
                ..
            } if timeout == Duration::from_secs(1)
        ),
        "{err:?}"
    );
    // The timing is the behaviour under test (the item's 1 s, not the
    // options' 10 s), not a speed claim.
    let timeout = Duration::from_secs(1);
    assert!(
        elapsed >= timeout && elapsed < 5 * timeout,
        "gave up after {elapsed:?}"
    );
}

#[tokio::test]
async fn http_connection_refused_is_reported() {
    let url = format!("http://127.0.0.1:{}/mcp", free_port());
    let source = McpSource {
        server: "down".into(),
        url: Some(url.clone()),
        ..McpSource::default()
    };
    // The refusal itself is reported, not the `Timeout` that retrying until
    // the options' 10 s would give.
    let err = fetch_tools(&source, &options(&[])).await.unwrap_err();
    assert_eq!(
        err,
        McpError::Connect {
            server: "down".into(),
            url,
            reason: "connection refused".into()
        }
    );
    // A password and a token in the URL (here from `${VAR}`s) are not shown.
    let port = free_port();
    let source = McpSource {
        server: "down".into(),
        url: Some(format!(
            "http://bob:${{PW}}@127.0.0.1:{port}/mcp?token=${{TOKEN}}&v=1"
        )),
        ..McpSource::default()
    };
    let err = fetch_tools(
        &source,
        &options(&[("PW", "pw-sEcret"), ("TOKEN", "tok-sEcret")]),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "mcp server `down`: cannot connect to `http://bob:***@127.0.0.1:{port}/mcp?token=***&v=1`: connection refused"
        )
    );
}

#[tokio::test]
async fn the_child_gets_only_the_documented_environment_plus_its_env() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("env.txt");
    let mut source = fixture_source("fx", &["--env-file", file.to_str().unwrap(), "normal"]);
    source.env.insert("FROM_ITEM".into(), "yes".into());
    // Whatever this process has beyond the documented set (the test runner
    // sets many CARGO_* variables) must not reach the server.
    assert!(std::env::var_os("CARGO").is_some() || std::env::var_os("CARGO_PKG_NAME").is_some());
    fetch_tools(&source, &options(&[])).await.unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    let names: Vec<&str> = text
        .lines()
        .filter_map(|line| line.split_once('=').map(|(name, _)| name))
        .collect();
    let mut expected: Vec<&str> = agents_mcp::INHERITED_ENV
        .iter()
        .copied()
        .filter(|name| std::env::var_os(name).is_some())
        .chain(["FROM_ITEM"])
        .collect();
    expected.sort();
    assert_eq!(names, expected, "{text}");
    assert!(text.contains("FROM_ITEM=yes\n"), "{text}");
}

/// A malformed or too-deep tool costs only itself, over stdio and over
/// streamable HTTP: the rest of its page is kept, each bad one is named with
/// the reason, and nothing waits for a timeout.
#[tokio::test]
async fn malformed_and_too_deep_tools_are_left_out_not_the_page() {
    for depth in [100, 200, 100_000] {
        let source = fixture_source("odd", &["malformed-tools", &depth.to_string()]);
        let fetched = fetch_tools(&source, &options(&[])).await.unwrap();
        assert_eq!(
            names(&fetched),
            ["mcp:odd/first", "mcp:odd/last"],
            "{depth}"
        );
        let rejected: Vec<(String, String)> = fetched
            .rejected
            .iter()
            .map(|r| (r.tool.clone(), r.reason.clone()))
            .collect();
        assert_eq!(rejected.len(), 3, "{depth}: {rejected:?}");
        assert_eq!(rejected[0].0, "deep");
        assert_eq!(rejected[0].1, "nested deeper than 64 levels");
        assert_eq!(rejected[1].0, "badtype");
        assert!(
            rejected[1].1.starts_with("not a valid MCP tool: "),
            "{}",
            rejected[1].1
        );
        assert_eq!(rejected[2].0, "?", "a tool without a string name");
        // No time bound needed: a lost answer would end in a `Timeout`
        // error, and the fetch succeeded.
    }
    // The same over streamable HTTP: each answer a server-sent event, or a
    // plain JSON body (which rmcp would fail as a whole: asked again and
    // repaired).
    for (depth, body) in [
        (100, "sse"),
        (100_000, "sse"),
        (100, "json"),
        (100_000, "json"),
    ] {
        let server = start_http_fixture(&["malformed-tools", &depth.to_string(), body]);
        let source = McpSource {
            server: "odd".into(),
            url: Some(server.url.clone()),
            ..McpSource::default()
        };
        let fetched = fetch_tools(&source, &options(&[])).await.unwrap();
        assert_eq!(
            names(&fetched),
            ["mcp:odd/first", "mcp:odd/last"],
            "http {depth} {body}"
        );
        let rejected: Vec<&str> = fetched.rejected.iter().map(|r| r.tool.as_str()).collect();
        assert_eq!(rejected, ["deep", "badtype", "?"], "http {depth} {body}");
        assert_eq!(fetched.rejected[0].reason, "nested deeper than 64 levels");
    }
    // A higher limit lets a 100-level tool through.
    let opts = FetchOptions {
        max_tool_depth: 110,
        ..options(&[])
    };
    let source = fixture_source("odd", &["malformed-tools", "100"]);
    let fetched = fetch_tools(&source, &opts).await.unwrap();
    assert_eq!(
        names(&fetched),
        ["mcp:odd/first", "mcp:odd/deep", "mcp:odd/last"]
    );
}

/// The same raw server over stdio, and over streamable HTTP with its
/// answers as server-sent events and as plain JSON bodies.
enum RawServer {
    Stdio,
    Http(Server),
}

impl RawServer {
    fn all(args: &[&str]) -> Vec<(&'static str, RawServer)> {
        let with = |body: &str| {
            let mut args = args.to_vec();
            if body == "json" {
                args.push("json");
            }
            RawServer::Http(start_http_fixture(&args))
        };
        vec![
            ("stdio", RawServer::Stdio),
            ("sse", with("sse")),
            ("json", with("json")),
        ]
    }

    fn source(&self, server: &str, args: &[&str]) -> McpSource {
        match self {
            RawServer::Stdio => fixture_source(server, args),
            RawServer::Http(http) => McpSource {
                server: server.into(),
                url: Some(http.url.clone()),
                ..McpSource::default()
            },
        }
    }
}

/// One byte that is not UTF-8 in one tool lost every tool of the server,
/// after the whole timeout (stdio) or at once (HTTP); in a call's answer it
/// became a timeout too.
#[tokio::test]
async fn a_byte_that_is_not_utf8_loses_its_tool_or_fails_its_call_at_once() {
    // Long enough that a lost answer could not pass for a quick failure.
    let opts = FetchOptions {
        timeout: Duration::from_secs(60),
        ..options(&[])
    };
    for (transport, server) in RawServer::all(&["bad-utf8"]) {
        let source = server.source("u", &["bad-utf8"]);
        let fetched = fetch_tools(&source, &opts).await.unwrap();
        assert_eq!(names(&fetched), ["mcp:u/ok"], "{transport}");
        assert_eq!(fetched.rejected.len(), 1, "{transport}");
        let rejected = &fetched.rejected[0];
        assert_eq!(rejected.tool, "bad", "{transport}");
        assert!(
            rejected
                .reason
                .starts_with("not valid UTF-8 (byte 0xff at offset "),
            "{transport}: {}",
            rejected.reason
        );
        assert!(
            rejected.reason.ends_with(" of the server's answer)"),
            "{transport}: {}",
            rejected.reason
        );

        let upstream = connect(&source, &opts, None).await.unwrap();
        let err = upstream
            .caller()
            .call_tool("ok", None, Duration::from_secs(60), None)
            .await
            .unwrap_err();
        let McpError::Protocol {
            server,
            stage,
            message,
        } = &err
        else {
            panic!("{transport}: {err:?}");
        };
        assert_eq!((server.as_str(), *stage), ("u", "tools/call"));
        match transport {
            // rmcp parses a plain JSON answer itself: its parser says where.
            "json" => assert!(
                message.contains("invalid unicode code point at line 1 column"),
                "{transport}: {message}"
            ),
            "sse" => assert!(
                message.starts_with("its answer is not valid UTF-8 (at offset "),
                "{transport}: {message}"
            ),
            _ => assert!(
                message.starts_with("its answer is not valid UTF-8 (byte 0xe9 at offset "),
                "{transport}: {message}"
            ),
        }
        upstream.close().await;
    }
}

/// `anyOf` chained through `$defs` made checking one wrong argument cost
/// 2^N steps in the gateway: such a tool is left out at refresh, a
/// recursive one is not.
#[tokio::test]
async fn a_schema_that_expands_exponentially_is_left_out_with_a_reason() {
    let fetched = fetch_tools(&fixture_source("x", &["any-of-chain", "40"]), &options(&[]))
        .await
        .unwrap();
    assert_eq!(names(&fetched), ["mcp:x/tree", "mcp:x/fine"]);
    assert_eq!(fetched.rejected.len(), 1);
    assert_eq!(fetched.rejected[0].tool, "chain");
    assert!(
        fetched.rejected[0].reason.starts_with(
            "`inputSchema`: expands to more than 100000 subschemas through its `$ref`s"
        ),
        "{}",
        fetched.rejected[0].reason
    );
    let fetched = fetch_tools(&fixture_source("x", &["any-of-chain", "8"]), &options(&[]))
        .await
        .unwrap();
    assert_eq!(names(&fetched), ["mcp:x/chain", "mcp:x/tree", "mcp:x/fine"]);
}

/// MCP 2025-11-25's `execution`, which rmcp's `Tool` drops, is kept in the
/// cache: it says which tools the gateway cannot call.
#[tokio::test]
async fn a_tools_execution_is_kept() {
    for (transport, server) in RawServer::all(&["tasks"]) {
        let fetched = fetch_tools(&server.source("t", &["tasks"]), &options(&[]))
            .await
            .unwrap();
        assert_eq!(
            names(&fetched),
            ["mcp:t/plain", "mcp:t/research"],
            "{transport}"
        );
        assert!(
            fetched.rejected.is_empty(),
            "{transport}: {:?}",
            fetched.rejected
        );
        assert_eq!(
            fetched.tools[0].source_metadata["execution"],
            json!({"taskSupport": "forbidden"}),
            "{transport}"
        );
        assert_eq!(
            fetched.tools[1].source_metadata["execution"],
            json!({"taskSupport": "required"}),
            "{transport}"
        );
        assert!(
            agents_core::gateway_cannot_call(&fetched.tools[1])
                .is_some_and(|reason| reason.contains("task augmentation")),
            "{transport}"
        );
        assert_eq!(agents_core::gateway_cannot_call(&fetched.tools[0]), None);
    }
}

/// An HTTP server that dies in the middle of a call (after an event with an
/// id, which a client may resume from) ends the call at once, as over
/// stdio; it waited for the call's timeout while rmcp tried to reconnect.
#[tokio::test]
async fn a_server_that_dies_mid_call_ends_the_call_at_once() {
    let call_timeout = Duration::from_secs(60);
    let http = start_http_fixture(&["die-mid-call"]);
    for source in [
        fixture_source("d", &["die-mid-call"]),
        McpSource {
            server: "d".into(),
            url: Some(http.url.clone()),
            ..McpSource::default()
        },
    ] {
        let upstream = connect(&source, &options(&[]), None).await.unwrap();
        let err = upstream
            .caller()
            .call_tool("work", None, call_timeout, None)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, McpError::Protocol { server, stage: "tools/call", message }
                if server == "d" && message == "the server closed the connection before answering"),
            "{err:?}"
        );
        upstream.close().await;
    }
}

/// A server that answers a call with a flood of lines that are not JSON-RPC
/// has its stream ended by the watcher: the call says so, not that the
/// server closed the connection.
#[tokio::test]
async fn a_call_answered_with_garbage_says_so() {
    let source = fixture_source("g", &["garbage-on-call"]);
    let upstream = connect(&source, &options(&[]), None).await.unwrap();
    let err = upstream
        .caller()
        .call_tool("work", None, Duration::from_secs(60), None)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, McpError::Garbage { server, sample }
            if server == "g" && sample == "this is not JSON-RPC"),
        "{err:?}"
    );
    upstream.close().await;
}

/// The last lines a `hang-on-call` fixture read, as JSON, once one of them
/// is a `notifications/cancelled` (bounded: the cancellation is sent from a
/// task of its own).
async fn read_until_cancelled(upstream: &mut agents_mcp::Upstream) -> Vec<serde_json::Value> {
    for _ in 0..50 {
        let seen: Vec<serde_json::Value> = upstream
            .stderr_tail()
            .await
            .split(" | ")
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        if seen
            .last()
            .is_some_and(|last| last["method"] == "notifications/cancelled")
        {
            return seen;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "the server was never told the call was cancelled: {}",
        upstream.stderr_tail().await
    );
}

/// A call that gets no answer in time is cancelled on the server, whichever
/// way it went: on the lane (no progress wanted, under a string id of the
/// lane's own) or through rmcp (a numeric id); the session goes on serving.
#[tokio::test]
async fn a_call_that_times_out_is_cancelled_on_the_server() {
    let source = fixture_source("h", &["hang-on-call"]);
    let mut upstream = connect(&source, &options(&[]), None).await.unwrap();
    let caller = upstream.caller();
    let short = Duration::from_millis(300);

    let err = caller
        .call_tool("hang", None, short, None)
        .await
        .unwrap_err();
    assert!(
        matches!(
            &err,
            McpError::Timeout {
                stage: "tools/call",
                ..
            }
        ),
        "{err:?}"
    );
    let seen = read_until_cancelled(&mut upstream).await;
    let call = seen.iter().find(|m| m["method"] == "tools/call").unwrap();
    let id = call["id"].as_str().unwrap();
    assert!(id.starts_with("agents-lane-"), "{call}");
    assert_eq!(seen.last().unwrap()["params"]["requestId"], id);

    let sink: agents_mcp::ProgressSink = std::sync::Arc::new(|_| {});
    let err = caller
        .call_tool("hang", None, short, Some(sink))
        .await
        .unwrap_err();
    assert!(matches!(&err, McpError::Timeout { .. }), "{err:?}");
    let seen = read_until_cancelled(&mut upstream).await;
    let call = seen.iter().rfind(|m| m["method"] == "tools/call").unwrap();
    assert!(call["id"].is_number(), "{call}");
    assert_eq!(seen.last().unwrap()["params"]["requestId"], call["id"]);

    let done = caller
        .call_tool("work", None, Duration::from_secs(60), None)
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&done).unwrap()["content"][0]["text"],
        "done"
    );
    upstream.close().await;
}
