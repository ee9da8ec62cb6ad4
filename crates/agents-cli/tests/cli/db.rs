use serde_json::json;

use crate::support::{Sandbox, examples};

#[test]
fn status_reports_backend_version_and_counts() {
    let sb = Sandbox::new();
    let file = sb.write("s.yaml", "name: a/b\ntools: [builtin/grep, builtin/glob]\n");
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    let status = sb.run(&["db", "status", "--format", "json"]).ok().json();
    assert_eq!(status["backend"], "sqlite");
    assert_eq!(status["skills"], 1);
    assert_eq!(status["skill_items"], 2);
    assert_eq!(status["schema_version"], status["supported_version"]);
    sb.run(&["db", "migrate"]).ok();
}

#[test]
fn export_then_import_into_a_fresh_database() {
    let sb = Sandbox::new();
    for f in ["code-tools.yaml", "git-tools.yaml", "devops-toolkit.yaml"] {
        sb.run(&[
            "skill",
            "add",
            examples().join("skills").join(f).to_str().unwrap(),
        ])
        .ok();
    }
    sb.run(&[
        "tool",
        "add",
        examples().join("tools/deploy.yaml").to_str().unwrap(),
    ])
    .ok();
    let export = sb.path("export.yaml");
    sb.run(&["db", "export", "--output", export.to_str().unwrap()])
        .ok();
    let before = sb
        .run(&["skill", "tools", "local/devops-toolkit", "--format", "json"])
        .ok()
        .json();

    let other = format!("sqlite://{}", sb.path("other.db").display());
    let run = sb
        .run(&[
            "--database-url",
            &other,
            "db",
            "import",
            export.to_str().unwrap(),
        ])
        .ok();
    assert_eq!(
        run.stdout,
        "imported 3 skill(s) and 1 tool(s) from [SANDBOX]/export.yaml\n"
    );
    let after = sb
        .run(&[
            "--database-url",
            &other,
            "skill",
            "tools",
            "local/devops-toolkit",
            "--format",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(before, after);
    // Importing again clashes and changes nothing.
    let run = sb
        .run(&[
            "--database-url",
            &other,
            "db",
            "import",
            export.to_str().unwrap(),
        ])
        .fails(1);
    assert!(
        run.stderr.contains("is already registered")
            && run.stderr.contains("nothing was imported; `--replace`"),
        "{}",
        run.stderr
    );
    let status = sb
        .run(&["--database-url", &other, "db", "status", "--format", "json"])
        .ok()
        .json();
    assert_eq!(status["skills"], json!(3));
}

/// A tool the registry holds with another definition is refused like a
/// registered skill (nothing written), one it holds as the file has it is
/// left alone, and the count is what was written.
#[test]
fn import_refuses_a_registered_tool_unless_replace() {
    let sb = Sandbox::new();
    let tool = sb.write("t.yaml", "name: custom/t\ndescription: one\n");
    sb.run(&["tool", "add", tool.to_str().unwrap()]).ok();
    let export = sb.path("export.yaml");
    sb.run(&["db", "export", "-o", export.to_str().unwrap()])
        .ok();
    let text = std::fs::read_to_string(&export).unwrap();
    let changed = sb.write("t.yaml", "name: custom/t\ndescription: two\n");
    sb.run(&["tool", "add", "--replace", changed.to_str().unwrap()])
        .ok();
    let file = sb.write(
        "with-skill.yaml",
        &format!("{text}---\nskill: {{name: local/new, tools: [custom/t]}}\n"),
    );
    let file = file.to_str().unwrap();
    let description = || {
        sb.run(&["tool", "get", "custom/t", "--format", "json"])
            .ok()
            .json()["description"]
            .clone()
    };

    let run = sb.run(&["db", "import", file]).fails(1);
    assert_eq!(
        run.stderr,
        "error: [SANDBOX]/with-skill.yaml: tool `custom/t` is already registered (nothing was imported; `--replace` takes the file's version of what exists)\n"
    );
    assert_eq!(description(), json!("two"));
    sb.run(&["skill", "get", "local/new"]).fails(1);

    let run = sb.run(&["db", "import", "--replace", file]).ok();
    assert_eq!(
        run.stdout,
        "imported 1 skill(s) (1 created, 0 updated, 0 unchanged) and 1 tool(s) from [SANDBOX]/with-skill.yaml\n"
    );
    assert_eq!(description(), json!("one"));
    // The tool as stored is no clash: left alone, and not counted.
    let run = sb
        .run(&["db", "import", export.to_str().unwrap(), "--format", "json"])
        .ok()
        .json();
    assert_eq!(
        run,
        json!({"skills": 0, "tools": 0, "created": 0, "updated": 0, "unchanged": 0,
               "tools_unchanged": 1, "tools_kept": 0})
    );
    let run = sb.run(&["db", "import", export.to_str().unwrap()]).ok();
    assert_eq!(
        run.stdout,
        "imported 0 skill(s) and 0 tool(s) from [SANDBOX]/export.yaml; 1 tool(s) were stored as the file has them\n"
    );
    // A builtin's row is skipped (builtins live in code), and not counted.
    let rows = sb.write(
        "rows.yaml",
        "format: cleveragents-export/2\n---\ntool: {name: builtin/read_file, source: builtin}\n---\ntool: {name: custom/u, source: custom}\n",
    );
    let run = sb.run(&["db", "import", rows.to_str().unwrap()]).ok();
    assert_eq!(
        run.stdout,
        "imported 0 skill(s) and 1 tool(s) from [SANDBOX]/rows.yaml\n"
    );
    let status = sb.run(&["db", "status", "--format", "json"]).ok().json();
    assert_eq!(status["tools"], json!(2));
}

/// A row no definition file could have made (written by an older client,
/// or straight into the database) is exported with a warning naming it
/// and why `db import` will refuse the file; the file is written all the
/// same.
#[test]
fn export_warns_of_rows_the_import_would_refuse() {
    let sb = Sandbox::new();
    let file = sb.write(
        "s.yaml",
        "name: l/inner\ntools: [builtin/grep]\n---\nname: l/outer\nincludes: [l/inner]\n",
    );
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    let export = sb.path("export.yaml");
    let run = sb
        .run(&["db", "export", "-o", export.to_str().unwrap()])
        .ok();
    assert_eq!(run.stderr, "");
    sb.sqlite3(
        "UPDATE skill_items SET item_config = '{\"overrides\":{\"name\":\"x\"}}' WHERE skill_name = 'l/outer'",
    );
    sb.sqlite3(
        "INSERT INTO tools (name, source, origin, spec_json, created_at, updated_at) VALUES ('builtin/read_file', 'custom', NULL, '{\"name\":\"builtin/read_file\",\"source\":\"custom\"}', '2024-01-01T00:00:00Z', '2024-01-01T00:00:00Z')",
    );
    // A schema no reader of the file accepts (a custom tool's, and an MCP
    // cache row's, which comes back from its server, not from `tool add`).
    sb.sqlite3(
        "INSERT INTO tools (name, source, origin, spec_json, created_at, updated_at) VALUES ('mcp:srv@0123456789ab/t', 'mcp', '0123456789ab', '{\"name\":\"mcp:srv@0123456789ab/t\",\"source\":\"mcp\",\"input_schema\":{\"type\":\"objekt\"}}', '2024-01-01T00:00:00Z', '2024-01-01T00:00:00Z')",
    );
    sb.sqlite3(
        "INSERT INTO tools (name, source, origin, spec_json, created_at, updated_at) VALUES ('custom/bogus', 'custom', NULL, '{\"name\":\"custom/bogus\",\"source\":\"custom\",\"input_schema\":{\"type\":\"bogus\"}}', '2024-01-01T00:00:00Z', '2024-01-01T00:00:00Z')",
    );
    let run = sb
        .run(&["db", "export", "-o", export.to_str().unwrap()])
        .ok();
    insta::assert_snapshot!("export_refused_rows_stderr", run.stderr);
    assert_eq!(
        run.stdout,
        "exported 2 skill(s) and 3 tool(s) to [SANDBOX]/export.yaml\n"
    );
    let other = format!("sqlite://{}", sb.path("other.db").display());
    let run = sb
        .run(&[
            "--database-url",
            &other,
            "db",
            "import",
            export.to_str().unwrap(),
        ])
        .fails(1);
    assert!(
        run.stderr
            .contains("includes[0].overrides: `name` cannot be overridden"),
        "{}",
        run.stderr
    );
}

#[test]
fn sigkill_during_a_large_add_leaves_the_database_consistent() {
    let sb = Sandbox::new();
    let mut text = String::new();
    let batch = 20_000;
    for i in 0..batch {
        text.push_str(&format!(
            "---\nname: bulk/s{i}\ntools: [builtin/read_file, builtin/grep]\ninline_tools:\n  - description: t{i}\n"
        ));
    }
    let file = sb.write("bulk.yaml", &text);
    sb.init_db();
    let mut outcomes = Vec::new();
    for delay_ms in [30u64, 120, 250, 500, 900] {
        let mut child = sb
            .cmd()
            .args(["skill", "add", file.to_str().unwrap()])
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill(); // SIGKILL on Unix
        let status = child.wait().unwrap();
        assert_eq!(sb.sqlite3("PRAGMA integrity_check"), "ok");
        let skills: i64 = sb.sqlite3("SELECT COUNT(*) FROM skills").parse().unwrap();
        let orphans: i64 = sb
            .sqlite3(
            "SELECT COUNT(*) FROM skill_items WHERE skill_name NOT IN (SELECT name FROM skills)",
        )
        .parse()
        .unwrap();
        let partial: i64 = sb.sqlite3("SELECT COUNT(*) FROM skills s WHERE (SELECT COUNT(*) FROM skill_items i WHERE i.skill_name = s.name) <> 3").parse().unwrap();
        assert!(
            skills == 0 || skills == batch,
            "{skills} skills after kill at {delay_ms} ms"
        );
        assert_eq!(orphans, 0);
        assert_eq!(partial, 0);
        outcomes.push((delay_ms, status.success(), skills));
        if skills == batch {
            break;
        }
    }
    // At least one kill must have landed before the commit, or the test proves nothing.
    assert!(
        outcomes.iter().any(|(_, _, skills)| *skills == 0),
        "{outcomes:?}"
    );
}

#[test]
fn postgres_backend_runs_the_same_commands() {
    let Some(pg) = crate::support::PgDatabase::create("same_commands") else {
        return;
    };
    let sb = Sandbox::new();
    let url = pg.url.as_str();
    for f in ["code-tools.yaml", "git-tools.yaml", "devops-toolkit.yaml"] {
        sb.run(&[
            "--database-url",
            url,
            "skill",
            "add",
            examples().join("skills").join(f).to_str().unwrap(),
        ])
        .ok();
    }
    let status = sb
        .run(&["--database-url", url, "db", "status", "--format", "json"])
        .ok()
        .json();
    assert_eq!(status["backend"], "postgres");
    assert_eq!(status["skills"], 3);
    // Same resolution as on SQLite.
    let pg_tools = sb
        .run(&[
            "--database-url",
            url,
            "skill",
            "tools",
            "local/devops-toolkit",
            "--format",
            "json",
        ])
        .ok()
        .json();
    for f in ["code-tools.yaml", "git-tools.yaml", "devops-toolkit.yaml"] {
        sb.run(&[
            "skill",
            "add",
            examples().join("skills").join(f).to_str().unwrap(),
        ])
        .ok();
    }
    let sqlite_tools = sb
        .run(&["skill", "tools", "local/devops-toolkit", "--format", "json"])
        .ok()
        .json();
    assert_eq!(pg_tools, sqlite_tools);
    let run = sb
        .run(&[
            "--database-url",
            url,
            "skill",
            "add",
            examples().join("skills/code-tools.yaml").to_str().unwrap(),
        ])
        .fails(1);
    assert!(
        run.stderr
            .contains("skill `local/code-tools` is already registered"),
        "{}",
        run.stderr
    );
    sb.run(&[
        "--database-url",
        url,
        "skill",
        "remove",
        "local/devops-toolkit",
    ])
    .ok();
    assert_eq!(
        pg.query("SELECT COUNT(*) FROM skill_items WHERE skill_name = 'local/devops-toolkit'"),
        "0"
    );
    // Move the registry from PostgreSQL to a new SQLite file and back.
    let export = sb.path("pg.yaml");
    sb.run(&[
        "--database-url",
        url,
        "db",
        "export",
        "-o",
        export.to_str().unwrap(),
    ])
    .ok();
    let other = format!("sqlite://{}", sb.path("from-pg.db").display());
    sb.run(&[
        "--database-url",
        &other,
        "db",
        "import",
        export.to_str().unwrap(),
    ])
    .ok();
    let listed = sb
        .run(&[
            "--database-url",
            &other,
            "skill",
            "list",
            "--format",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(listed.as_array().unwrap().len(), 2);
}

#[test]
fn sigkill_during_a_large_add_on_postgres_leaves_nothing_half_written() {
    let Some(pg) = crate::support::PgDatabase::create("sigkill") else {
        return;
    };
    let sb = Sandbox::new();
    let batch = 20_000;
    let mut text = String::new();
    for i in 0..batch {
        text.push_str(&format!(
            "---\nname: bulk/s{i}\ntools: [builtin/read_file, builtin/grep]\n"
        ));
    }
    let file = sb.write("bulk.yaml", &text);
    sb.run(&["--database-url", &pg.url, "skill", "list"]).ok();
    let mut saw_absent = false;
    for delay_ms in [50u64, 200, 400, 800, 1500] {
        let mut child = sb
            .cmd()
            .args([
                "--database-url",
                &pg.url,
                "skill",
                "add",
                file.to_str().unwrap(),
            ])
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        // The server rolls back the dead client's transaction once it notices.
        std::thread::sleep(std::time::Duration::from_millis(200));
        let skills: i64 = pg.query("SELECT COUNT(*) FROM skills").parse().unwrap();
        let orphans: i64 = pg.query("SELECT COUNT(*) FROM skill_items i LEFT JOIN skills s ON s.name = i.skill_name WHERE s.name IS NULL").parse().unwrap();
        let items: i64 = pg
            .query("SELECT COUNT(*) FROM skill_items")
            .parse()
            .unwrap();
        assert!(
            skills == 0 || skills == batch,
            "{skills} skills after kill at {delay_ms} ms"
        );
        assert_eq!(orphans, 0);
        assert_eq!(items, skills * 2);
        saw_absent |= skills == 0;
        if skills == batch {
            break;
        }
    }
    assert!(saw_absent, "no kill landed before the commit");
}

/// A user who may only read a shared registry (a read-only PostgreSQL
/// role) still gets `skill tools` and `skill validate`: the automatic first
/// discovery, which writes, is skipped with a warning instead of failing
/// what was asked.
#[test]
fn a_read_only_user_reads_without_the_automatic_discovery() {
    let Some(pg) = crate::support::PgDatabase::create("read_only") else {
        return;
    };
    let owner = Sandbox::new();
    let skill = owner.write("r.yaml", "name: r/one\ntools: [builtin/read_file]\n");
    owner
        .run(&[
            "--database-url",
            &pg.url,
            "skill",
            "add",
            skill.to_str().unwrap(),
        ])
        .ok();
    let role = format!("ro_{}", std::process::id());
    pg.query(&format!("DROP ROLE IF EXISTS {role}"));
    pg.query(&format!("CREATE ROLE {role} LOGIN PASSWORD 'ro-pass'"));
    pg.query(&format!(
        "GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}"
    ));
    // The same server and database, as that role.
    let at = pg.url.find("://").unwrap() + 3;
    let host = pg.url[at..].find('@').unwrap() + at + 1;
    let url = format!("{}{role}:ro-pass@{}", &pg.url[..at], &pg.url[host..]);
    let reader = Sandbox::new();
    for args in [
        vec!["--database-url", url.as_str(), "skill", "tools", "r/one"],
        vec!["--database-url", url.as_str(), "skill", "validate", "r/one"],
    ] {
        let run = reader.run(&args).ok();
        assert!(
            run.stderr.contains("Agent Skills were not discovered"),
            "{args:?}: {}",
            run.stderr
        );
        assert!(!run.stderr.contains("ro-pass"), "{}", run.stderr);
    }
    // Asked for, discovery is a write like any other, and fails.
    reader
        .run(&["--database-url", url.as_str(), "skill", "discover"])
        .fails(1);
    drop(pg);
    let admin = std::env::var("AGENTS_TEST_POSTGRES_URL").unwrap();
    let _ = std::process::Command::new("psql")
        .args([
            "-X",
            "-q",
            &admin,
            "-c",
            &format!("DROP ROLE IF EXISTS {role}"),
        ])
        .output();
}
