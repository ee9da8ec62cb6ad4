use serde_json::json;

use crate::support::{Sandbox, everything, processes_with, python};

/// The real MCP reference server installed by `scripts/install-mcp-everything.sh`.
#[test]
fn skill_tools_refresh_queries_a_real_mcp_server_and_falls_back_to_the_cache() {
    let Some(entry) = everything("skill_tools_refresh") else {
        return;
    };
    let sb = Sandbox::new();
    let pid = std::process::id();
    let definition = |command: &str| {
        format!(
            "name: l/mcp\nmcp_sources:\n  - server: everything\n    command: {command}\n    args: [\"{entry}\", stdio]\n    env: {{AGENTS_TEST_MARKER: refresh-{pid}}}\n    tools: [echo, get-sum, no-such-tool]\n"
        )
    };
    // A wrapper, so the server can break later without its launch spec changing.
    let wrapper = sb.write("node-wrapper", "#!/bin/sh\nexec node \"$@\"\n");
    make_executable(&wrapper);
    let file = sb.write("s.yaml", &definition(wrapper.to_str().unwrap()));
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();

    // Before any refresh: allow-listed names without specs, and a warning.
    let run = sb
        .run(&["skill", "tools", "l/mcp", "--format", "json"])
        .ok();
    // The origin is known from the item: `mcp`, not fetched yet.
    let unfetched = &run.json()["tools"][0];
    assert_eq!(unfetched["source"], "mcp", "{unfetched}");
    assert_eq!(unfetched["callable"], false, "{unfetched}");
    assert_eq!(
        unfetched["not_callable"],
        "not fetched yet: mcp server `everything` has no cached tool list listing it (`agents mcp refresh everything`)"
    );
    let table = sb.run(&["skill", "tools", "l/mcp"]).ok();
    assert!(
        table
            .stdout
            .contains("mcp:everything/echo\tmcp\tl/mcp\t\t(not fetched yet: "),
        "{}",
        table.stdout
    );
    assert!(
        run.stderr.contains("has no cached tool list"),
        "{}",
        run.stderr
    );

    let run = sb
        .run(&["skill", "tools", "l/mcp", "--refresh", "--format", "json"])
        .ok();
    let out = run.json();
    let names: Vec<&str> = out["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["mcp:everything/echo", "mcp:everything/get-sum"]);
    let echo = &out["tools"][0];
    assert_eq!(echo["source"], "mcp");
    assert_eq!(echo["callable"], true);
    assert_eq!(echo.get("not_callable"), None);
    assert_eq!(
        echo["input_schema"]["properties"]["message"]["type"],
        "string"
    );
    assert_eq!(echo["source_metadata"]["server"], "everything");
    assert_eq!(echo["source_metadata"]["transport"], "stdio");
    // `tool get` takes the name `skill tools` shows, without the digest.
    let got = sb
        .run(&["tool", "get", "mcp:everything/echo", "--format", "json"])
        .ok()
        .json();
    assert!(
        got["name"].as_str().unwrap().starts_with("mcp:everything@"),
        "{got}"
    );
    let missing = sb.run(&["tool", "get", "mcp:everything/nope"]).fails(1);
    assert!(
        missing.stderr.contains("is not registered"),
        "{}",
        missing.stderr
    );
    // A near miss gets the name `skill tools` shows.
    let missing = sb.run(&["tool", "get", "mcp:everything/ecoh"]).fails(1);
    assert!(
        missing
            .stderr
            .contains("(did you mean 'mcp:everything/echo'?)"),
        "{}",
        missing.stderr
    );
    assert!(
        run.stderr
            .contains("MCP server 'everything' has no tool 'no-such-tool'"),
        "{}",
        run.stderr
    );
    assert_eq!(
        processes_with(&format!("AGENTS_TEST_MARKER=refresh-{pid}")),
        0,
        "an MCP server outlived the command"
    );

    let listed = sb.run(&["mcp", "list", "--format", "json"]).ok().json();
    assert_eq!(listed[0]["server"], "everything");
    assert!(listed[0]["cached_tools"].as_u64().unwrap() >= 2);
    let cached = sb
        .run(&["mcp", "tools", "everything", "--format", "json"])
        .ok()
        .json();
    assert!(
        cached["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "mcp:everything/echo")
    );

    // The server breaks: the refresh warns with the cache's age and keeps it.
    sb.write("node-wrapper", "#!/bin/sh\necho broken >&2\nexit 1\n");
    let run = sb
        .run(&["skill", "tools", "l/mcp", "--refresh", "--format", "json"])
        .ok();
    assert!(
        run.stderr.contains("using the tools cached at"),
        "{}",
        run.stderr
    );
    assert_eq!(run.json()["tools"][0]["source"], "mcp");
    let run = sb.run(&["mcp", "refresh", "everything"]).fails(1);
    assert!(run.stderr.contains("everything"), "{}", run.stderr);
    // The exit status has its error line, after the warning that says why.
    assert!(
        run.stderr
            .ends_with("error: 1 of 1 mcp server(s) could not be refreshed: everything\n"),
        "{}",
        run.stderr
    );
    let cached = sb
        .run(&["mcp", "tools", "everything", "--format", "json"])
        .ok()
        .json();
    assert!(
        !cached["tools"].as_array().unwrap().is_empty(),
        "the cache was lost"
    );

    // A changed launch spec is a different server: the old cache never stands in for it.
    let file = sb.write("s.yaml", &definition("/nonexistent/node"));
    sb.run(&["skill", "update", file.to_str().unwrap()]).ok();
    let run = sb
        .run(&["skill", "tools", "l/mcp", "--refresh", "--format", "json"])
        .ok();
    assert!(run.stderr.contains("cannot start"), "{}", run.stderr);
    assert!(
        run.stderr.contains("no cached tools to fall back on"),
        "{}",
        run.stderr
    );
}

fn make_executable(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn servers_can_be_defined_in_config_and_unknown_ones_are_errors() {
    let sb = Sandbox::new();
    let file = sb.write("s.yaml", "name: l/ref\nmcp_sources:\n  - server: github\n");
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    let run = sb.run(&["skill", "tools", "l/ref"]).fails(1);
    assert!(
        run.stderr.contains("MCP server 'github' is not defined"),
        "{}",
        run.stderr
    );
    let run = sb.run(&["skill", "validate", "l/ref"]).fails(1);
    assert!(
        run.stdout.contains("MCP server 'github' is not defined"),
        "{}",
        run.stdout
    );
    let Some(entry) = everything("config_servers") else {
        return;
    };
    sb.write(
        "home/.cleveragents/config.toml",
        &format!("[mcp.servers.github]\ncommand = \"node\"\nargs = [\"{entry}\", \"stdio\"]\ntools = [\"echo\"]\nenv = {{ AGENTS_TEST_MARKER = \"config-{}\" }}\n", std::process::id()),
    );
    sb.run(&["skill", "validate", "l/ref"]).ok();
    let out = sb
        .run(&["skill", "tools", "l/ref", "--refresh", "--format", "json"])
        .ok()
        .json();
    assert!(
        out["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "mcp:github/echo" && t["source"] == "mcp"),
        "{out}"
    );
    assert_eq!(
        processes_with(&format!("AGENTS_TEST_MARKER=config-{}", std::process::id())),
        0
    );
}

#[test]
fn a_skill_row_that_does_not_decode_is_left_out_of_mcp_listings_with_a_warning() {
    // Anyone who can write a shared database could otherwise stop every
    // user's `mcp list`, `mcp refresh` and `mcp trust` with one bad row.
    let sb = Sandbox::new();
    let file = sb.write(
        "s.yaml",
        "name: l/good\nmcp_sources:\n  - server: gh\n    command: gh-mcp\n---\nname: l/bad\nmcp_sources:\n  - server: other\n    command: other-mcp\n",
    );
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    sb.sqlite3("UPDATE skills SET metadata_json = '{bad' WHERE name = 'l/bad'");
    let run = sb.run(&["mcp", "list", "--format", "json"]).ok();
    let listed = run.json();
    let servers: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["server"].as_str().unwrap())
        .collect();
    assert_eq!(servers, ["gh"]);
    assert!(
        run.stderr
            .contains("corrupt row in `skills` for `l/bad`: `metadata_json` does not decode")
            && run.stderr.contains("that skill is left out"),
        "{}",
        run.stderr
    );
    // Untrusted, so reported rather than started; the bad row is no error.
    let run = sb.run(&["mcp", "refresh"]).fails(1);
    assert!(
        run.stderr.contains("`gh`") || run.stdout.contains("gh"),
        "{}{}",
        run.stdout,
        run.stderr
    );
    assert!(!run.stderr.contains("error: corrupt row"), "{}", run.stderr);
    // An export copies every row, so it still refuses to leave one out.
    let run = sb.run(&["db", "export"]).fails(1);
    assert!(
        run.stderr.contains("corrupt row in `skills` for `l/bad`"),
        "{}",
        run.stderr
    );
}

#[test]
fn secrets_stay_as_written_in_the_database() {
    let sb = Sandbox::new();
    let file = sb.write(
        "s.yaml",
        "name: l/secret\nmcp_sources:\n  - server: gh\n    command: /nonexistent\n    env: {GITHUB_TOKEN: \"${AGENTS_TEST_SECRET}\"}\n",
    );
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    let out = sb
        .cmd()
        .args(["skill", "tools", "l/secret", "--refresh"])
        .env("AGENTS_TEST_SECRET", "hunter2")
        .output()
        .unwrap();
    assert!(out.status.success());
    let dump = std::process::Command::new("sqlite3")
        .arg(sb.db_path())
        .arg(".dump")
        .output()
        .unwrap();
    let dump = String::from_utf8_lossy(&dump.stdout);
    assert!(dump.contains("${AGENTS_TEST_SECRET}"));
    assert!(!dump.contains("hunter2"));
    // A missing variable is named.
    let run = sb.run(&["mcp", "refresh", "gh"]).fails(1);
    assert!(run.stderr.contains("AGENTS_TEST_SECRET"), "{}", run.stderr);
}

#[test]
fn validate_strict_queries_the_servers_and_checks_agent_skill_folders() {
    let Some(entry) = everything("validate_strict") else {
        return;
    };
    let sb = Sandbox::new();
    let pid = std::process::id();
    let file = sb.write(
        "s.yaml",
        &format!(
            "name: l/strict\nmcp_sources:\n  - server: everything\n    command: node\n    args: [\"{entry}\", stdio]\n    env: {{AGENTS_TEST_MARKER: strict-{pid}}}\n    tools: [echo, no-such-tool]\n  - server: broken\n    command: /bin/false\nagent_sources:\n  - path: ./no-such-folder\n"
        ),
    );
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    // Without --strict nothing is started: the definitions resolve.
    sb.run(&["skill", "validate", "l/strict"]).ok();
    let run = sb
        .run(&[
            "skill", "validate", "l/strict", "--strict", "--format", "json",
        ])
        .fails(1);
    let errors: Vec<String> = run.json()["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap().to_owned())
        .collect();
    assert!(
        errors.contains(
            &"mcp server `everything` does not list the allow-listed tool `no-such-tool`"
                .to_owned()
        ),
        "{errors:#?}"
    );
    assert!(
        errors.iter().any(|e| e.starts_with("mcp server `broken` ")),
        "{errors:#?}"
    );
    // Each error names its server once.
    assert!(
        !errors.iter().any(|e| e.matches("mcp server `").count() > 1),
        "{errors:#?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("skill `l/strict`: agent_sources `./no-such-folder`: ")),
        "{errors:#?}"
    );
    assert!(
        !errors.iter().any(|e| e.contains("`echo`")),
        "echo is listed: {errors:#?}"
    );
    assert_eq!(processes_with(&format!("strict-{pid}")), 0);

    // A server never fetched before passes on the first run: the check
    // reads the list the run has just fetched, not the missing cache.
    let fresh = sb.write(
        "fresh.yaml",
        &format!(
            "name: l/fresh\nmcp_sources:\n  - server: everything\n    command: node\n    args: [\"{entry}\", stdio]\n    env: {{AGENTS_TEST_MARKER: fresh-{pid}}}\n    tools: [echo]\n"
        ),
    );
    sb.run(&["skill", "add", fresh.to_str().unwrap()]).ok();
    let run = sb.run(&["skill", "validate", "l/fresh", "--strict"]).ok();
    assert!(
        !run.stdout.contains("no cached tool list"),
        "{}",
        run.stdout
    );
    assert_eq!(processes_with(&format!("fresh-{pid}")), 0);
}

#[test]
fn an_undefined_server_is_the_same_error_for_tools_diff_and_refresh() {
    let sb = Sandbox::new();
    sb.init_db();
    for args in [
        &["mcp", "tools", "nope"][..],
        &["mcp", "tools", "nope", "--diff"],
        &["mcp", "refresh", "nope"],
    ] {
        let mut with_json = args.to_vec();
        with_json.extend(["--format", "json"]);
        let run = sb.run(&with_json).fails(1);
        let error = &run.stderr_json()["error"];
        assert_eq!(error["kind"], "mcp_server_not_defined", "{args:?}: {error}");
        assert_eq!(
            error["message"], "mcp server `nope` is not defined in config.toml or in any skill",
            "{args:?}"
        );
    }
}

/// Each tool a server lists but the catalogue cannot hold is said once, as a
/// warning (a log line used to repeat each one at the default verbosity).
#[test]
fn each_left_out_tool_is_one_warning() {
    let Some(python) = python("left_out_tools") else {
        return;
    };
    let sb = Sandbox::new();
    // One valid tool, one whose input schema is not a JSON Schema, and one
    // that is not a tool at all.
    let tools = sb.write(
        "tools.json",
        r#"[{"name": "fine", "description": "a valid tool", "inputSchema": {"type": "object"}},
            {"name": "broken", "inputSchema": {"type": "objekt"}},
            {"name": 42, "inputSchema": {"type": "object"}}]"#,
    );
    sb.write(
        "home/.cleveragents/config.toml",
        &format!(
            "[mcp.servers.odd]\ncommand = \"{python}\"\nargs = [\"{}\", \"{}\"]\n",
            crate::support::py_script("listing_server.py").display(),
            tools.display()
        ),
    );
    let run = sb.run(&["mcp", "refresh", "odd"]).ok();
    assert_eq!(run.stdout, "odd: 1 tool(s) cached (stdio)\n");
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{}", run.stderr);
    assert!(
        lines.iter().all(|line| line.starts_with("warning: ")),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("`broken`"), "{}", run.stderr);
}

#[test]
fn a_server_s_left_out_tools_are_one_capped_list() {
    let Some(python) = python("left_out_capped") else {
        return;
    };
    let sb = Sandbox::new();
    // 120 tools whose input schema is not a JSON Schema: 50 lines, then how
    // many more (the documented cap on one list), not 120 or the command's 200.
    let tools: Vec<serde_json::Value> = (0..120)
        .map(|i| json!({"name": format!("broken{i}"), "inputSchema": {"type": "objekt"}}))
        .collect();
    let tools = sb.write("tools.json", &serde_json::to_string(&tools).unwrap());
    sb.write(
        "home/.cleveragents/config.toml",
        &format!(
            "[mcp.servers.odd]\ncommand = \"{python}\"\nargs = [\"{}\", \"{}\"]\n",
            crate::support::py_script("listing_server.py").display(),
            tools.display()
        ),
    );
    let run = sb.run(&["mcp", "refresh", "odd"]).ok();
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 51, "{}", run.stderr);
    assert_eq!(
        lines[50], "warning: 70 more warnings not shown",
        "{}",
        run.stderr
    );
}

/// Two definitions of one server name (the config file's and one two
/// skills share), each with a cache of its own: `mcp tools SERVER` shows
/// each definition's tools under a heading naming who defines it and its
/// digest, and `--format json` gives each tool its `definition`. With one
/// definition the output is as it always was.
#[test]
fn tools_of_a_server_defined_twice_are_shown_per_definition() {
    let Some(python) = python("tools_per_definition") else {
        return;
    };
    let sb = Sandbox::new();
    let script = crate::support::py_script("listing_server.py");
    let tool = |name: &str, description: &str| json!({"name": name, "description": description, "inputSchema": {"type": "object"}});
    let mine = sb.write(
        "mine.json",
        &json!([tool("alpha", "Alpha of mine")]).to_string(),
    );
    let theirs = sb.write(
        "theirs.json",
        &json!([tool("alpha", "Alpha of theirs"), tool("beta", "Beta")]).to_string(),
    );
    sb.write(
        "home/.cleveragents/config.toml",
        &format!(
            "[mcp.servers.gh]\ncommand = \"{python}\"\nargs = [\"{}\", \"{}\"]\n",
            script.display(),
            mine.display()
        ),
    );
    sb.run(&["mcp", "refresh", "gh"]).ok();
    // One definition: a plain table, no `definition` field.
    let run = sb.run(&["mcp", "tools", "gh"]).ok();
    assert_eq!(
        run.stdout,
        "TOOL\tDESCRIPTION\nmcp:gh/alpha\tAlpha of mine\n"
    );
    let one = sb
        .run(&["mcp", "tools", "gh", "--format", "json"])
        .ok()
        .json();
    assert_eq!(one["tools"].as_array().unwrap().len(), 1, "{one}");
    assert!(one["tools"][0].get("definition").is_none(), "{one}");

    for skill in ["l/two", "l/one"] {
        let file = sb.write(
            "s.yaml",
            &format!(
                "name: {skill}\nmcp_sources:\n  - server: gh\n    command: {python}\n    args: [\"{}\", \"{}\"]\n",
                script.display(),
                theirs.display()
            ),
        );
        sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    }
    sb.run(&["mcp", "refresh", "gh"]).ok();
    let list = sb.run(&["mcp", "list", "--format", "json"]).ok().json();
    let digest_of = |defined_in: &str| -> String {
        list.as_array()
            .unwrap()
            .iter()
            .find(|s| s["server"] == "gh" && s["defined_in"] == defined_in)
            .unwrap_or_else(|| panic!("{defined_in}: {list}"))["digest"]
            .as_str()
            .unwrap()[..12]
            .to_owned()
    };
    let (config, skills) = (digest_of("config"), digest_of("l/one"));
    assert_ne!(config, skills);

    let run = sb.run(&["mcp", "tools", "gh"]).ok();
    assert_eq!(
        run.stdout,
        format!(
            "gh ({config}): defined in your config file, 1 cached tool(s)\n\
             TOOL\tDESCRIPTION\nmcp:gh/alpha\tAlpha of mine\n\
             \n\
             gh ({skills}): defined in skills `l/one`, `l/two`, 2 cached tool(s)\n\
             TOOL\tDESCRIPTION\nmcp:gh/alpha\tAlpha of theirs\nmcp:gh/beta\tBeta\n"
        )
    );
    let json = sb
        .run(&["mcp", "tools", "gh", "--format", "json"])
        .ok()
        .json();
    let rows: Vec<(String, String, serde_json::Value)> = json["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_owned(),
                t["definition"]["digest"].as_str().unwrap()[..12].to_owned(),
                t["definition"]["defined_in"].clone(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("mcp:gh/alpha".into(), config.clone(), json!(["config"])),
            (
                "mcp:gh/alpha".into(),
                skills.clone(),
                json!(["l/one", "l/two"])
            ),
            (
                "mcp:gh/beta".into(),
                skills.clone(),
                json!(["l/one", "l/two"])
            ),
        ]
    );
}

#[test]
fn a_server_named_like_an_option_is_suggested_after_a_double_dash() {
    let sb = Sandbox::new();
    let file = sb.write(
        "dash.yaml",
        "name: l/dash\nmcp_sources:\n  - server: -x\n    command: \"false\"\n",
    );
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    let run = sb.run(&["skill", "tools", "l/dash"]).ok();
    assert!(
        run.stderr.contains("run `agents mcp refresh -- -x`"),
        "{}",
        run.stderr
    );
    let run = sb.run(&["mcp", "tools", "--", "-x"]).ok();
    assert!(
        run.stdout.contains("run `agents mcp refresh -- -x`"),
        "{}",
        run.stdout
    );
    // The suggested line is a command that runs: the server's own failure,
    // not a usage error (exit 2).
    let run = sb.run(&["mcp", "refresh", "--", "-x"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("-x"), "{}", run.stderr);
    assert!(
        !run.stderr.contains("unexpected argument"),
        "{}",
        run.stderr
    );
}

/// An allow-listed tool the server's cached list lacks is warned of at
/// `skill add`, with the listed tool likely meant.
#[test]
fn an_allow_listed_typo_is_warned_at_add_when_the_list_is_cached() {
    let Some(entry) = everything("allow_list_typo") else {
        return;
    };
    let sb = Sandbox::new();
    sb.write(
        "home/.cleveragents/config.toml",
        &format!("[mcp.servers.everything]\ncommand = \"node\"\nargs = [\"{entry}\", \"stdio\"]\n"),
    );
    let file = sb.write(
        "s.yaml",
        "name: l/typo\nmcp_sources:\n  - server: everything\n    tools: [echo, ecko]\n",
    );
    // Nothing cached yet: nothing to compare with, no warning.
    let run = sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    assert!(!run.stderr.contains("ecko"), "{}", run.stderr);
    sb.run(&["mcp", "refresh", "everything"]).ok();
    let run = sb.run(&["skill", "apply", file.to_str().unwrap()]).ok();
    assert!(
        run.stderr.contains(
            "Skill 'l/typo': MCP server 'everything' has no tool 'ecko' (did you mean 'echo'?)"
        ),
        "{}",
        run.stderr
    );
    // It points at the allow-list.
    assert!(run.stderr.contains("s.yaml:4:"), "{}", run.stderr);
}
