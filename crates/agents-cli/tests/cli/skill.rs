use serde_json::json;

use crate::support::{Sandbox, add_examples, examples, redact_times};

const BASE: &str =
    "name: local/base\ndescription: Base tools\ntools: [builtin/read_file, builtin/grep]\n";

#[test]
fn add_get_list_remove_round_trip() {
    let sb = Sandbox::new();
    let file = sb.write("base.yaml", BASE);
    let run = sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    assert_eq!(
        run.stdout,
        "added 1 skill from [SANDBOX]/base.yaml: local/base\n"
    );

    let got = sb
        .run(&["skill", "get", "local/base", "--format", "json"])
        .ok()
        .json();
    assert_eq!(got["name"], "local/base");
    assert_eq!(got["namespace"], "local");
    assert_eq!(got["short_name"], "base");
    assert_eq!(got["tools"], json!(["builtin/read_file", "builtin/grep"]));
    assert!(got["created_at"].as_str().unwrap().ends_with('Z'));

    let list = sb.run(&["skill", "list", "--format", "json"]).ok().json();
    assert_eq!(list[0]["name"], "local/base");
    assert_eq!(list[0]["description"], "Base tools");
    assert_eq!(list[0]["version"], json!(null));

    let run = sb.run(&["skill", "remove", "local/base"]).ok();
    assert_eq!(run.stdout, "removed local/base\n");
    let run = sb.run(&["skill", "get", "local/base"]).fails(1);
    assert_eq!(run.stderr, "error: Skill 'local/base' is not registered\n");
}

#[test]
fn yaml_output_round_trips_to_an_identical_skill() {
    let sb = Sandbox::new();
    add_examples(&sb);
    let before = sb
        .run(&["skill", "get", "local/devops-toolkit", "--format", "json"])
        .ok()
        .json();
    let yaml = sb
        .run(&["skill", "get", "local/devops-toolkit", "--format", "yaml"])
        .ok()
        .stdout;
    let items_before = sb.sql_count("skill_items");
    sb.run(&["skill", "remove", "local/devops-toolkit"]).ok();
    let file = sb.write("again.yaml", &yaml);
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    let mut after = sb
        .run(&["skill", "get", "local/devops-toolkit", "--format", "json"])
        .ok()
        .json();
    let mut before = before;
    for v in [&mut before, &mut after] {
        v["created_at"] = json!(null);
        v["updated_at"] = json!(null);
    }
    assert_eq!(before, after);
    assert_eq!(sb.sql_count("skill_items"), items_before);
    insta::assert_snapshot!("devops_toolkit_yaml", yaml);
}

/// Hidden characters come out of `skill get --format yaml` as escapes
/// several times their size: output `skill add` would refuse is written,
/// with a warning naming the setting that reads it back.
#[test]
fn yaml_output_too_large_to_add_back_is_warned_about() {
    let sb = Sandbox::new();
    let file = sb.write(
        "wide.yaml",
        &format!(
            "name: local/wide\ndescription: \"{}\"\n",
            "\u{202e}".repeat(40)
        ),
    );
    let limit = [("CLEVERAGENTS_LIMITS_DEFINITION_MAX_BYTES", "200")];
    sb.run_env(&["skill", "add", file.to_str().unwrap()], &limit)
        .ok();
    let run = sb
        .run_env(&["skill", "get", "local/wide", "--format", "yaml"], &limit)
        .ok();
    assert!(run.stdout.contains("\\u202E"), "{}", run.stdout);
    assert!(
        run.stderr
            .contains("more than the 200 bytes `skill add` reads")
            && run.stderr.contains("limits.definition_max_bytes"),
        "{}",
        run.stderr
    );
    let small = sb
        .run(&["skill", "get", "local/wide", "--format", "yaml"])
        .ok();
    assert!(!small.stderr.contains("warning"), "{}", small.stderr);
}

#[test]
fn item_order_survives_the_database() {
    let sb = Sandbox::new();
    add_examples(&sb);
    let out = std::process::Command::new("sqlite3")
        .arg(sb.db_path())
        .arg("SELECT item_order, item_type, item_name FROM skill_items WHERE skill_name = 'local/devops-toolkit' ORDER BY item_order")
        .output()
        .unwrap();
    insta::assert_snapshot!(
        "devops_toolkit_items",
        String::from_utf8(out.stdout).unwrap()
    );
}

#[test]
fn duplicate_add_fails_and_names_the_skill() {
    let sb = Sandbox::new();
    let file = sb.write("base.yaml", BASE);
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    let run = sb.run(&["skill", "add", file.to_str().unwrap()]).fails(1);
    assert_eq!(
        run.stderr,
        "error: [SANDBOX]/base.yaml: skill `local/base` is already registered (`agents skill apply` adds new skills and updates registered ones)\n"
    );
    // `skill update` of a skill not registered says the same.
    let other = sb.write("other.yaml", "name: local/other\ntools: [builtin/grep]\n");
    let run = sb
        .run(&["skill", "update", other.to_str().unwrap()])
        .fails(1);
    assert_eq!(
        run.stderr,
        "error: [SANDBOX]/other.yaml: Skill 'local/other' is not registered (`agents skill apply` adds new skills and updates registered ones)\n"
    );
    let run = sb
        .run(&["skill", "add", file.to_str().unwrap(), "--format", "json"])
        .fails(1);
    let err = run.stderr_json();
    assert_eq!(err["error"]["kind"], "duplicate_skill");
    assert_eq!(run.json()[0]["ok"], false);
}

#[test]
fn a_file_is_one_transaction_and_files_are_reported_one_by_one() {
    let sb = Sandbox::new();
    let good = sb.write("good.yaml", "name: a/one\n---\nname: a/two\n");
    // The third document clashes with the first file: nothing of this file lands.
    let bad = sb.write(
        "bad.yaml",
        "name: b/one\n---\nname: b/two\n---\nname: a/one\n",
    );
    let run = sb
        .run(&[
            "skill",
            "add",
            good.to_str().unwrap(),
            bad.to_str().unwrap(),
        ])
        .fails(1);
    assert!(
        run.stdout
            .contains("added 2 skills from [SANDBOX]/good.yaml"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr
            .contains("bad.yaml: skill `a/one` is already registered"),
        "{}",
        run.stderr
    );
    let names: Vec<String> = sb
        .run(&["skill", "list", "--format", "json"])
        .ok()
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["a/one", "a/two"]);
    assert_eq!(sb.sql_count("skills"), 2);
}

#[test]
fn bad_yaml_points_at_the_line_and_changes_nothing() {
    let sb = Sandbox::new();
    let file = sb.write(
        "bad.yaml",
        "name: local/x\ntools: [builtin/read_file]\ntoolz: [oops]\n",
    );
    let run = sb.run(&["skill", "add", file.to_str().unwrap()]).fails(1);
    insta::assert_snapshot!("unknown_key_error", run.stderr);
    let file = sb.write("name.yaml", "name: local/has space\n");
    let run = sb.run(&["skill", "add", file.to_str().unwrap()]).fails(1);
    insta::assert_snapshot!("invalid_name_error", run.stderr);
    let file = sb.write("binary.yaml", "name: a/b\ndescription: \u{0}\u{0}");
    let mut bytes = std::fs::read(&file).unwrap();
    bytes.extend_from_slice(&[0xff, 0xfe]);
    std::fs::write(&file, bytes).unwrap();
    let run = sb.run(&["skill", "add", file.to_str().unwrap()]).fails(1);
    assert!(
        run.stderr
            .contains("binary.yaml:2: file is not valid UTF-8"),
        "{}",
        run.stderr
    );
    let run = sb
        .run(&["skill", "add", sb.path("missing.yaml").to_str().unwrap()])
        .fails(1);
    assert!(
        run.stderr
            .starts_with("error: cannot read `[SANDBOX]/missing.yaml`: "),
        "{}",
        run.stderr
    );
    assert_eq!(
        sb.run(&["skill", "list", "--format", "json"]).ok().json(),
        json!([])
    );
}

#[test]
fn invalid_names_are_rejected_everywhere() {
    let sb = Sandbox::new();
    sb.init_db();
    for args in [
        ["skill", "get", "nope"],
        ["skill", "remove", "a/b/c"],
        ["skill", "tools", "x y"],
    ] {
        let run = sb.run(&args).fails(1);
        assert!(run.stderr.contains("invalid skill name"), "{}", run.stderr);
        assert!(
            run.stderr.contains("^[a-zA-Z0-9_-]+/[a-zA-Z0-9_-]+$"),
            "{}",
            run.stderr
        );
    }
}

#[test]
fn remove_cascades_to_items() {
    let sb = Sandbox::new();
    add_examples(&sb);
    assert!(sb.sql_count("skill_items") > 0);
    // Includers first: a skill others include is refused.
    for name in [
        "local/devops-toolkit",
        "local/git-tools",
        "local/code-tools",
    ] {
        sb.run(&["skill", "remove", name]).ok();
    }
    assert_eq!(sb.sql_count("skill_items"), 0);
    let run = sb
        .run(&["skill", "remove", "local/code-tools", "--format", "json"])
        .fails(1);
    assert_eq!(run.stderr_json()["error"]["kind"], "skill_not_found");
}

#[test]
fn namespace_filter_and_sorting() {
    let sb = Sandbox::new();
    let file = sb.write(
        "many.yaml",
        "name: zeta/b\n---\nname: alpha/z\n---\nname: zeta/a\n---\nname: alpha/a\n",
    );
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    let names = |args: &[&str]| -> Vec<String> {
        sb.run(args)
            .ok()
            .json()
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        names(&["skill", "list", "--format", "json"]),
        ["alpha/a", "alpha/z", "zeta/a", "zeta/b"]
    );
    assert_eq!(
        names(&["skill", "list", "--namespace", "zeta", "--format", "json"]),
        ["zeta/a", "zeta/b"]
    );
    let table = sb
        .run(&["skill", "list", "--namespace", "alpha"])
        .ok()
        .stdout;
    insta::assert_snapshot!("list_table", table);
    // An empty namespace says which (on stderr: stdout is still a table,
    // the header only, for a script), not that nothing is registered.
    let run = sb.run(&["skill", "list", "--namespace", "nope"]).ok();
    assert_eq!(run.stdout, "NAME\tVERSION\tITEMS\tDESCRIPTION\n");
    assert_eq!(run.stderr, "no skills in namespace `nope`\n");
}

#[test]
fn update_replaces_keeps_created_at_and_bumps_updated_at() {
    let sb = Sandbox::new();
    let file = sb.write("base.yaml", BASE);
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    let before = sb
        .run(&["skill", "get", "local/base", "--format", "json"])
        .ok()
        .json();
    let file = sb.write(
        "base2.yaml",
        "name: local/base\ndescription: Changed\ntools: [builtin/glob]\n",
    );
    let run = sb.run(&["skill", "update", file.to_str().unwrap()]).ok();
    assert!(run.stdout.starts_with("updated 1 skill"), "{}", run.stdout);
    let after = sb
        .run(&["skill", "get", "local/base", "--format", "json"])
        .ok()
        .json();
    assert_eq!(after["created_at"], before["created_at"]);
    assert!(after["updated_at"].as_str().unwrap() > before["updated_at"].as_str().unwrap());
    assert_eq!(after["tools"], json!(["builtin/glob"]));
    assert_eq!(after["description"], "Changed");
    let absent = sb.write("absent.yaml", "name: local/absent\n");
    let run = sb
        .run(&["skill", "update", absent.to_str().unwrap()])
        .fails(1);
    assert!(
        run.stderr
            .contains("Skill 'local/absent' is not registered"),
        "{}",
        run.stderr
    );
}

#[test]
fn usage_errors_exit_2() {
    let sb = Sandbox::new();
    sb.run(&["skill"]).fails(2);
    sb.run(&["skill", "add"]).fails(2);
    sb.run(&["skill", "list", "--format", "xml"]).fails(2);
    let run = sb.run(&["skill", "list", "--format", "dot"]).fails(2);
    assert_eq!(
        run.stderr,
        "error: `--format dot` is only for `agents skill graph`\n"
    );
    sb.run(&["--version"]).ok();
    // Every command refuses a format it cannot write, by its own name,
    // before it opens anything.
    for (args, name) in [
        (&["db", "init", "--format", "dot"][..], "db init"),
        (&["db", "migrate", "--format", "mermaid"], "db migrate"),
        (&["db", "export", "--format", "json"], "db export"),
        (&["man", "--format", "json"], "man"),
        (&["completions", "bash", "--format", "json"], "completions"),
        (&["schema", "skill", "--format", "mermaid"], "schema"),
        (&["mcp", "list", "--format", "dot"], "mcp list"),
        (&["mcp", "export", "--format", "dot"], "mcp export"),
        (
            &["plan", "validate", "p.yaml", "--format", "dot"],
            "plan validate",
        ),
        (
            &["skill", "validate", "a/b", "--format", "dot"],
            "skill validate",
        ),
        (
            &["tool", "get", "x/y", "--body", "--format", "json"],
            "tool get --body",
        ),
    ] {
        let run = sb.run(args).fails(2);
        // A graph format names the one command that draws it; a command
        // that writes its own text says it takes no format.
        let graph = args.contains(&"dot") || args.contains(&"mermaid");
        assert!(
            run.stderr
                .contains(&format!("`{name}` does not support `--format "))
                || run.stderr.contains(&format!(
                    "`{name}` writes its own text and takes no `--format`"
                ))
                || (graph && run.stderr.contains("is only for `agents skill graph`")),
            "{args:?}: {}",
            run.stderr
        );
    }
    // `--explain` is a table's tree or a JSON field: a tool array for a
    // model API has no place for it, so it is refused, naming the formats
    // it works with, not silently dropped.
    for format in ["openai", "anthropic", "mcp"] {
        let run = sb
            .run(&["skill", "tools", "t/top", "--explain", "--format", format])
            .fails(2);
        assert_eq!(
            run.stderr,
            format!(
                "error: `skill tools --explain` does not support `--format {format}`; use `table`, `json` or `yaml`\n"
            )
        );
    }
    // `skill graph` draws `dot` when no format is given.
    let file = sb.write("g.yaml", "name: a/g\ntools: [builtin/grep]\n");
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    let run = sb.run(&["skill", "graph", "a/g"]).ok();
    assert!(run.stdout.starts_with("digraph"), "{}", run.stdout);
}

#[test]
fn two_processes_adding_at_once_both_land() {
    let sb = Sandbox::new();
    // Create the database first so both racers only insert.
    sb.init_db();
    let mut text_a = String::new();
    let mut text_b = String::new();
    for i in 0..300 {
        text_a.push_str(&format!("---\nname: a/s{i}\ntools: [builtin/read_file]\n"));
        text_b.push_str(&format!("---\nname: b/s{i}\ntools: [builtin/grep]\n"));
    }
    let a = sb.write("a.yaml", &text_a);
    let b = sb.write("b.yaml", &text_b);
    let mut children: Vec<_> = [a, b]
        .iter()
        .map(|f| {
            sb.cmd()
                .args(["skill", "add", f.to_str().unwrap()])
                .spawn()
                .unwrap()
        })
        .collect();
    for child in &mut children {
        assert!(child.wait().unwrap().success());
    }
    assert_eq!(sb.sql_count("skills"), 600);
    assert_eq!(sb.sql_count("skill_items"), 600);
}

#[test]
fn tools_of_the_example_toolkit() {
    let sb = Sandbox::new();
    add_examples(&sb);
    let run = sb
        .run(&["skill", "tools", "local/devops-toolkit", "--format", "json"])
        .ok();
    let out = run.json();
    assert_eq!(out["skill"], "local/devops-toolkit");
    let names: Vec<&str> = out["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "builtin/read_file",
            "builtin/grep",
            "builtin/glob",
            "builtin/edit_file",
            "builtin/git_status",
            "builtin/git_diff",
            "builtin/git_commit",
            "builtin/shell",
            "builtin/http_get",
            "custom/deploy",
            "local/devops-toolkit/_anon_0",
            "local/devops-toolkit/_anon_1",
            "mcp:everything/echo",
            "mcp:everything/get-sum",
            "agent_skill:~/.cleveragents/agent_skills/pdf-processing",
        ]
    );
    // custom/deploy was never added: kept with a null source and a warning.
    let deploy = &out["tools"][9];
    assert_eq!(deploy["source"], json!(null));
    assert_eq!(deploy["callable"], false);
    assert_eq!(deploy["not_callable"], "not registered");
    assert!(
        run.stderr
            .contains("Tool 'custom/deploy' is not registered"),
        "{}",
        run.stderr
    );
    // Last occurrence wins: read_file reached through git-tools (the later include).
    let read_file = &out["tools"][0];
    assert_eq!(read_file["source_skill"], "local/code-tools");
    assert_eq!(
        read_file["include_path"],
        json!([
            "local/devops-toolkit",
            "local/git-tools",
            "local/code-tools"
        ])
    );
    assert_eq!(
        read_file["overrides"],
        json!({"timeout_s": 10, "approval": "required", "audit": true})
    );
    assert_eq!(read_file["source"], "builtin");
    let shell = &out["tools"][7];
    assert_eq!(
        shell["overrides"],
        json!({"timeout_s": 120, "sandbox": "strict"})
    );
    let inline = &out["tools"][10];
    assert_eq!(inline["is_inline"], true);
    assert_eq!(inline["source"], "custom");
    // The shipped inline tools say how they run: callable (a tool without
    // `run` is a catalogue entry: `tool_call`'s tests).
    assert_eq!(inline["callable"], true, "{inline}");
    assert!(inline.get("not_callable").is_none(), "{inline}");
    // The MCP entries before their server is queried: `mcp`, not callable yet.
    for unfetched in [&out["tools"][12], &out["tools"][13]] {
        assert_eq!(unfetched["source"], "mcp", "{unfetched}");
        assert_eq!(unfetched["callable"], false, "{unfetched}");
        assert!(
            unfetched["not_callable"]
                .as_str()
                .unwrap()
                .starts_with("not fetched yet: mcp server `everything`"),
            "{unfetched}"
        );
    }
    // The spec's seven fields, exactly as specified (inline tools only)...
    let mut summary = out["summary"].clone();
    let effective = summary
        .as_object_mut()
        .unwrap()
        .remove("effective")
        .unwrap();
    assert_eq!(
        summary,
        json!({
            "total_tools": 15, "read_only_tools": 1, "write_tools": 1, "checkpointable_tools": 1,
            "has_side_effects": true, "mcp_sources": 1, "agent_skill_sources": 1,
        })
    );
    // ...and beside them the effective block over every entry with known flags.
    assert_eq!(
        effective,
        json!({
            "known_tools": 11, "read_only_tools": 7, "write_tools": 4, "checkpointable_tools": 1,
            "has_side_effects": true,
            "unknown": [
                "custom/deploy", "mcp:everything/echo", "mcp:everything/get-sum",
                "agent_skill:~/.cleveragents/agent_skills/pdf-processing",
            ],
        })
    );
    let table = sb.run(&["skill", "tools", "local/git-tools"]).ok();
    // The two summaries say which is which: the specification's counts
    // inline tools only, the effective one every tool with known flags.
    assert!(
        table.stdout.contains("inline tools only:")
            && table.stdout.contains("inline side effects: no")
            && table.stdout.contains("effective side effects: yes"),
        "{}",
        table.stdout
    );
    insta::assert_snapshot!("git_tools_table", table.stdout);
}

#[test]
fn resolution_errors_exit_1_with_the_spec_messages() {
    let sb = Sandbox::new();
    let file = sb.write(
        "broken.yaml",
        "name: l/root\nincludes: [l/a]\n---\nname: l/a\nincludes: [l/ghost]\n---\nname: l/c1\nincludes: [l/c2]\n---\nname: l/c2\nincludes: [l/c1]\n---\nname: l/ov\ntools: [builtin/grep]\noverrides:\n  builtin/grep: {read_only: true}\n",
    );
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    // `skill add` refuses a locked field, so only a row written some other
    // way (an older release, another client of a shared database) holds
    // one; resolving it fails with the spec's message.
    sb.sqlite3(
        "UPDATE skills SET metadata_json = '{\"metadata\":{},\"overrides\":{\"builtin/grep\":{\"is_inline\":true}}}' WHERE name = 'l/ov'",
    );
    let run = sb.run(&["skill", "tools", "l/root"]).fails(1);
    assert_eq!(
        run.stderr,
        "error: Skill 'l/a': Included skill 'l/ghost' not found (include path: l/root -> l/a)\n"
    );
    let run = sb
        .run(&["skill", "tools", "l/c1", "--format", "json"])
        .fails(1);
    assert_eq!(
        run.stderr_json(),
        json!({"error": {"kind": "cycle", "message": "Cycle detected in skill includes: l/c1 -> l/c2 -> l/c1"}})
    );
    let run = sb.run(&["skill", "tools", "l/ov"]).fails(1);
    assert!(
        run.stderr
            .contains("Non-overridable field(s) 'is_inline' in overrides from skill 'l/ov'"),
        "{}",
        run.stderr
    );
    let run = sb
        .run(&[
            "skill", "validate", "l/root", "l/c1", "l/ov", "l/none", "--format", "json",
        ])
        .fails(1);
    let report = run.json();
    assert_eq!(report["ok"], false);
    assert_eq!(report["errors"].as_array().unwrap().len(), 4, "{report}");
    let plan = sb.write("plan.json", r#"{"skills": ["l/none"]}"#);
    let run = sb
        .run(&["plan", "validate", plan.to_str().unwrap()])
        .fails(1);
    assert_eq!(
        run.stdout,
        "error: Skill 'l/none' referenced in plan is not registered\n1 error(s)\n"
    );
}

/// stderr shows a file's first 20 write warnings and how many more; the
/// `--format json` result has every one.
#[test]
fn json_write_results_keep_every_warning() {
    let sb = Sandbox::new();
    let tools: Vec<String> = (0..30).map(|i| format!("nowhere/t{i}")).collect();
    let file = sb.write(
        "many.yaml",
        &format!("name: l/many\ntools: [{}]\n", tools.join(", ")),
    );
    let run = sb
        .run(&["skill", "add", file.to_str().unwrap(), "--format", "json"])
        .ok();
    let warnings = run.json()[0]["warnings"].as_array().unwrap().clone();
    assert_eq!(warnings.len(), 30, "{warnings:?}");
    let sb = Sandbox::new();
    let file = sb.write(
        "many.yaml",
        &format!("name: l/many\ntools: [{}]\n", tools.join(", ")),
    );
    let run = sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    // Each warning quotes the line it points at under it.
    let warnings = run
        .stderr
        .lines()
        .filter(|line| line.starts_with("warning: "))
        .count();
    assert_eq!(warnings, 21, "{}", run.stderr);
    assert_eq!(
        run.stderr.matches("  |         ^\n").count(),
        1,
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("warning: [SANDBOX]/many.yaml:2:246: Skill 'l/many': Tool 'nowhere/t19'"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("… and 10 more problems"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_cycle_per_skill_costs_little_and_shows_a_bounded_report() {
    // Every skill of a 5,000-deep chain also includes the first: a cycle
    // per skill, the longest 5,001 skills long.
    let sb = Sandbox::new();
    let n = 5_000;
    let mut text = String::new();
    for i in 0..n {
        let next = if i + 1 < n {
            format!(", l/s{}", i + 1)
        } else {
            String::new()
        };
        text.push_str(&format!("---\nname: l/s{i}\nincludes: [l/s0{next}]\n"));
    }
    let file = sb.write("chain.yaml", &text);
    let added = sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    assert!(added.stderr.len() < 8 << 10, "{} bytes", added.stderr.len());
    assert!(
        added.stderr.contains("… and 4980 more problems"),
        "{}",
        added.stderr
    );
    let run = sb.run(&["skill", "validate", "l/s0"]).fails(1);
    assert!(run.stdout.len() < 32 << 10, "{} bytes", run.stdout.len());
    assert!(
        run.stdout
            .ends_with("error: … and 4900 more errors\n5000 error(s)\n"),
        "{}",
        run.stdout
    );
    let run = sb
        .run(&["skill", "validate", "l/s0", "--format", "json"])
        .fails(1);
    let report = run.json();
    assert_eq!(report["error_count"], n);
    assert_eq!(report["warning_count"], 0);
    assert_eq!(report["errors"].as_array().unwrap().len(), 101, "{report}");
}

#[test]
fn json_errors_are_machine_readable() {
    let sb = Sandbox::new();
    sb.init_db();
    let run = sb
        .run(&["skill", "get", "local/none", "--format", "json"])
        .fails(1);
    assert_eq!(
        run.stderr_json(),
        json!({"error": {"kind": "skill_not_found", "message": "Skill 'local/none' is not registered"}})
    );
    assert_eq!(run.stdout, "");
    let text = redact_times(&run.stderr);
    assert!(!text.contains("[TIMESTAMP]"));
}

#[test]
fn an_unknown_tool_named_by_many_skills_is_one_warning_line() {
    let sb = Sandbox::new();
    let mut text = String::from("name: l/root\nincludes:\n");
    for i in 0..20 {
        text.push_str(&format!("  - l/s{i}\n"));
    }
    let mut files = vec![sb.write("root.yaml", &text)];
    for i in 0..20 {
        files.push(sb.write(
            &format!("s{i}.yaml"),
            &format!("name: l/s{i}\ntools:\n  - custom/missing\n  - builtin/read_file\n"),
        ));
    }
    for file in &files {
        sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    }
    let run = sb.run(&["skill", "tools", "l/root"]).ok();
    let lines: Vec<&str> = run
        .stderr
        .lines()
        .filter(|line| line.contains("custom/missing"))
        .collect();
    assert_eq!(
        lines,
        [
            "warning: Tool 'custom/missing' is not registered (named by 20 skills: 'l/s0', 'l/s1', 'l/s2' and 17 more)"
        ],
        "{}",
        run.stderr
    );
}

/// The three export formats of the shipped examples (custom/deploy added; the
/// MCP server of devops-toolkit has no cached tool list, so its tools and the
/// tools the gateway cannot run are left out with warnings).
#[test]
fn export_formats_of_the_shipped_examples() {
    let sb = Sandbox::new();
    add_examples(&sb);
    let deploy = examples().join("tools").join("deploy.yaml");
    sb.run(&["tool", "add", deploy.to_str().unwrap()]).ok();
    for skill in [
        "local/code-tools",
        "local/git-tools",
        "local/devops-toolkit",
    ] {
        for format in ["openai", "anthropic", "mcp"] {
            let run = sb.run(&["skill", "tools", skill, "--format", format]).ok();
            let short = skill.trim_start_matches("local/");
            insta::assert_snapshot!(
                format!("export_{short}_{format}"),
                format!("{}\n--- stderr\n{}", run.stdout, run.stderr)
            );
            let out = run.json();
            let tools = if format == "mcp" {
                out["tools"].as_array().unwrap().clone()
            } else {
                out.as_array().unwrap().clone()
            };
            for tool in &tools {
                let name = match format {
                    "openai" => &tool["function"]["name"],
                    _ => &tool["name"],
                };
                let name = name.as_str().unwrap();
                assert!(
                    !name.is_empty()
                        && name.len() <= 64
                        && name
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
                    "{name}"
                );
            }
        }
    }
    // `export_name` on every JSON entry.
    let out = sb
        .run(&["skill", "tools", "local/devops-toolkit", "--format", "json"])
        .ok()
        .json();
    for entry in out["tools"].as_array().unwrap() {
        assert!(entry["export_name"].is_string(), "{entry}");
    }
    // Readable, no hash: nothing else in the set reads `custom__deploy`;
    // the same name `--format openai` gives it.
    assert_eq!(out["tools"][9]["export_name"], "custom__deploy");
    let openai = sb
        .run(&[
            "skill",
            "tools",
            "local/devops-toolkit",
            "--format",
            "openai",
        ])
        .ok()
        .json();
    assert!(
        openai
            .as_array()
            .unwrap()
            .iter()
            .any(|tool| tool["function"]["name"] == "custom__deploy"),
        "{openai}"
    );
    // The export formats are for `skill tools` only.
    let run = sb.run(&["skill", "list", "--format", "openai"]).fails(2);
    assert!(
        run.stderr.contains("only for `agents skill tools`"),
        "{}",
        run.stderr
    );
}

#[test]
fn overrides_change_what_is_exported() {
    let sb = Sandbox::new();
    let file = sb.write(
        "s.yaml",
        "name: l/o\ntools: [builtin/read_file, builtin/shell]\noverrides:\n  builtin/shell: {description: Run one vetted command, title: Vetted shell, read_only: true, writes: false, side_effects: false}\n",
    );
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    let openai = sb
        .run(&["skill", "tools", "l/o", "--format", "openai"])
        .ok()
        .json();
    assert_eq!(
        openai[1]["function"]["description"],
        "Run one vetted command"
    );
    let anthropic = sb
        .run(&["skill", "tools", "l/o", "--format", "anthropic"])
        .ok()
        .json();
    assert_eq!(anthropic[1]["description"], "Run one vetted command");
    assert_eq!(anthropic[1]["input_schema"]["type"], "object");
}

#[test]
fn too_many_tools_for_openai_is_said_before_the_capped_list() {
    // 60 unknown refs (each left out with a warning) and 200 inline tools:
    // the cap on warning lines must not hide that 200 is over OpenAI's 128.
    let sb = Sandbox::new();
    let mut yaml = String::from("name: l/many\ntools:\n");
    for i in 0..60 {
        yaml.push_str(&format!("  - nope/t{i}\n"));
    }
    yaml.push_str("inline_tools:\n");
    for i in 0..200 {
        yaml.push_str(&format!("  - description: inline {i}\n"));
    }
    let file = sb.write("many.yaml", &yaml);
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    let run = sb
        .run(&["skill", "tools", "l/many", "--format", "openai"])
        .ok();
    assert!(
        run.stderr
            .contains("200 tools, more than the 128 OpenAI takes in one request"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("more warnings not shown"),
        "{}",
        run.stderr
    );
}

#[test]
fn explain_shows_every_occurrence_and_the_origin_of_each_override() {
    let sb = Sandbox::new();
    add_examples(&sb);
    let run = sb
        .run(&[
            "skill",
            "tools",
            "local/devops-toolkit",
            "--format",
            "json",
            "--explain",
        ])
        .ok();
    let out = run.json();
    // read_file: a diamond. Its position comes from the direct include of
    // code-tools, its metadata from the later path through git-tools.
    let read_file = &out["tools"][0];
    assert_eq!(read_file["name"], "builtin/read_file");
    assert_eq!(
        read_file["explain"]["occurrences"],
        json!([
            {"include_path": ["local/devops-toolkit", "local/code-tools"],
             "overrides": {"timeout_s": 10}, "won": false},
            {"include_path": ["local/devops-toolkit", "local/git-tools", "local/code-tools"],
             "overrides": {"timeout_s": 10, "approval": "required", "audit": true}, "won": true},
        ])
    );
    assert_eq!(
        read_file["explain"]["overrides"]["approval"],
        json!({"value": "required", "from": "local/devops-toolkit",
               "include_path": ["local/devops-toolkit"], "replaced": []})
    );
    assert_eq!(
        read_file["explain"]["overrides"]["timeout_s"]["from"],
        "local/code-tools"
    );
    // git_commit: its own `approval: required` is replaced by the include's.
    let commit = out["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "builtin/git_commit")
        .unwrap();
    assert_eq!(
        commit["explain"]["overrides"]["approval"]["replaced"],
        json!([{"value": "required", "from": "local/git-tools",
                "include_path": ["local/devops-toolkit", "local/git-tools"]}])
    );
    // Without --explain there is no explain object.
    let plain = sb
        .run(&["skill", "tools", "local/devops-toolkit", "--format", "json"])
        .ok()
        .json();
    assert!(plain["tools"][0].get("explain").is_none());
    let table = sb
        .run(&["skill", "tools", "local/git-tools", "--explain"])
        .ok();
    insta::assert_snapshot!("git_tools_explain_table", table.stdout);
}

#[test]
fn graph_of_a_broken_closure_is_drawn_not_refused() {
    let sb = Sandbox::new();
    let file = sb.write(
        "broken.yaml",
        "name: g/root\nincludes:\n  - skill: g/a\n    overrides: {approval: required}\n  - g/gone\nmcp_sources:\n  - server: github\n    command: gh-mcp\nagent_sources:\n  - path: ~/skills/pdf\n---\nname: g/a\nincludes: [g/b]\n---\nname: g/b\nincludes: [g/a]\n",
    );
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    let dot = sb
        .run(&["skill", "graph", "g/root", "--format", "dot"])
        .ok();
    insta::assert_snapshot!("broken_graph_dot", dot.stdout);
    let mermaid = sb
        .run(&["skill", "graph", "g/root", "--format", "mermaid"])
        .ok();
    insta::assert_snapshot!("broken_graph_mermaid", mermaid.stdout);
    let json = sb
        .run(&["skill", "graph", "g/root", "--format", "json"])
        .ok()
        .json();
    assert_eq!(json["root"], "g/root");
    assert!(
        json["edges"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["cycle"] == true)
    );
    // Tables are not a graph format: a usage error when asked for; with no
    // format the graph is drawn as `dot`.
    let run = sb.run(&["skill", "graph", "g/root", "--format", "table"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let run = sb.run(&["skill", "graph", "g/root"]).ok();
    assert!(run.stdout.starts_with("digraph"), "{}", run.stdout);
}

/// Text with bidi, zero-width or control characters comes out of every
/// YAML writer as YAML escapes (a terminal shows them, and nothing in
/// another order), and reads back as it was: `skill get --format yaml` into
/// `skill update`, `db export` to stdout into `db import`. JSON escapes
/// them too.
#[test]
fn hidden_characters_round_trip_through_yaml_and_show_as_escapes() {
    let sb = Sandbox::new();
    let file = sb.write(
        "hidden.yaml",
        "name: cc/a\ndescription: \"evil\\u202Erev zero\\u200Bw tab\\tx bell\\u0007 bom\\uFEFF\"\ntools: [\"a/b\\u200b\"]\nmetadata: {\"key\\u2066\": \"block\\n\\tindented\\n\"}\n",
    );
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    let stored = sb.run(&["skill", "get", "cc/a", "--format", "json"]).ok();
    let hidden = |text: &str| {
        text.chars()
            .any(|c| c != '\n' && agents_core::text::is_hidden(c))
    };
    assert!(!hidden(&stored.stdout), "{}", stored.stdout);
    assert!(
        stored.stdout.contains("evil\\u202erev"),
        "{}",
        stored.stdout
    );
    let stored = stored.json();
    let yaml = sb
        .run(&["skill", "get", "cc/a", "--format", "yaml"])
        .ok()
        .stdout;
    assert!(!hidden(&yaml), "{yaml}");
    assert!(yaml.contains("\"evil\\u202Erev zero\\u200Bw"), "{yaml}");
    let again = sb.write("again.yaml", &yaml);
    sb.run(&["skill", "update", again.to_str().unwrap()]).ok();
    let updated = sb
        .run(&["skill", "get", "cc/a", "--format", "json"])
        .ok()
        .json();
    assert_eq!(updated["description"], stored["description"]);
    assert_eq!(updated["metadata"], stored["metadata"]);
    assert_eq!(updated["tools"], stored["tools"]);

    let export = sb.run(&["db", "export"]).ok().stdout;
    assert!(!hidden(&export), "{export}");
    let dump = sb.write("dump.yaml", &export);
    let other = format!("sqlite://{}", sb.path("other.db").display());
    sb.run(&["--database-url", &other, "db", "init"]).ok();
    sb.run(&[
        "--database-url",
        &other,
        "db",
        "import",
        dump.to_str().unwrap(),
    ])
    .ok();
    let imported = sb
        .run(&[
            "--database-url",
            &other,
            "skill",
            "get",
            "cc/a",
            "--format",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(imported["description"], stored["description"]);
    assert_eq!(imported["metadata"], stored["metadata"]);
    assert_eq!(imported["tools"], stored["tools"]);
}

/// What `skill validate` and `plan validate` find is their result, warnings
/// as much as errors: stdout in the table form too (so `-q`, which hides
/// warnings about a command, does not hide them), with their count.
#[test]
fn validate_reports_warnings_on_stdout_with_the_errors() {
    let sb = Sandbox::new();
    let file = sb.write(
        "w.yaml",
        "name: v/warned\ntools: [builtin/read_file]\noverrides:\n  builtin/read_file: {read_only: \"true\"}\n",
    );
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    for quiet in [false, true] {
        let mut args = vec!["skill", "validate", "v/warned"];
        if quiet {
            args.insert(0, "-q");
        }
        let run = sb.run(&args).ok();
        assert_eq!(run.stderr, "", "{quiet}");
        assert!(
            run.stdout
                .starts_with("warning: Skill 'v/warned': override `read_only`"),
            "{}",
            run.stdout
        );
        assert!(
            run.stdout.ends_with("ok: 1 skill(s) resolve, 1 warning\n"),
            "{}",
            run.stdout
        );
    }
    // A skill the plan names twice is one skill.
    let twice = sb.write("twice.yaml", "skills: [v/warned, v/warned]\n");
    let run = sb.run(&["plan", "validate", twice.to_str().unwrap()]).ok();
    assert!(
        run.stdout.ends_with("ok: 1 skill(s) resolve, 1 warning\n"),
        "{}",
        run.stdout
    );
    // A namespace no skill can have is a mistake, not an empty listing.
    let run = sb
        .run(&["skill", "list", "--namespace", "bad ns", "--format", "json"])
        .fails(1);
    assert_eq!(run.stderr_json()["error"]["kind"], "invalid_namespace");
    let plan = sb.write("p.yaml", "skills: [v/warned, v/missing]\n");
    let run = sb
        .run(&["plan", "validate", plan.to_str().unwrap()])
        .fails(1);
    assert_eq!(run.stderr, "");
    assert!(
        run.stdout.contains("warning: Skill 'v/warned'"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.ends_with("1 error(s), 1 warning\n"),
        "{}",
        run.stdout
    );
}

/// One tool row nobody can decode (written by hand, or by a broken writer)
/// stops nobody else: resolution and listings leave it out with a warning,
/// `db export`, which copies every row, refuses.
#[test]
fn a_tool_row_that_does_not_decode_stops_nobody_else() {
    let sb = Sandbox::new();
    sb.run(&[
        "tool",
        "add",
        examples().join("tools/deploy.yaml").to_str().unwrap(),
    ])
    .ok();
    add_examples(&sb);
    sb.sqlite3("UPDATE tools SET spec_json = '{not json' WHERE name = 'custom/deploy'");
    let run = sb.run(&["skill", "tools", "local/devops-toolkit"]).ok();
    assert!(
        run.stderr.contains("`custom/deploy`") && run.stderr.contains("left out"),
        "{}",
        run.stderr
    );
    let run = sb.run(&["tool", "list", "--format", "json"]).ok();
    assert!(!run.stdout.contains("custom/deploy"), "{}", run.stdout);
    let run = sb.run(&["db", "export"]).fails(1);
    assert!(run.stderr.contains("custom/deploy"), "{}", run.stderr);
    sb.sqlite3("UPDATE skills SET name = 'no slash' WHERE name = 'local/git-tools'");
    let run = sb.run(&["skill", "list", "--format", "json"]).ok();
    assert!(
        run.stdout.contains("local/devops-toolkit"),
        "{}",
        run.stdout
    );
}

/// A command over thousands of files prints a bounded stderr: at most 200
/// warning lines and 50 file errors in all, then a count of the rest; its
/// JSON result still has every file's.
#[test]
fn a_command_over_many_files_prints_a_bounded_stderr() {
    let sb = Sandbox::new();
    let files: Vec<String> = (0..300)
        .map(|i| {
            sb.write(
                &format!("many/s{i}.yaml"),
                &format!("name: m/s{i}\ntools: [custom/nope{i}]\n"),
            )
            .display()
            .to_string()
        })
        .collect();
    let mut add = vec!["skill", "add"];
    add.extend(files.iter().map(String::as_str));
    let run = sb.run(&add).ok();
    // Each warning quotes the line it points at under it.
    let lines: Vec<&str> = run
        .stderr
        .lines()
        .filter(|line| line.starts_with("warning: "))
        .collect();
    assert_eq!(lines.len(), 201, "{}", run.stderr);
    assert_eq!(
        lines[200],
        "warning: 100 more warnings not shown (a command prints at most 200)"
    );
    let run = sb.run(&add).fails(1);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 51, "{}", run.stderr);
    assert_eq!(
        lines[50],
        "error: 250 more files failed (a command prints at most 50 of their errors)"
    );
    add.extend(["--format", "json"]);
    let run = sb.run(&add).fails(1);
    assert_eq!(run.json().as_array().unwrap().len(), 300);
}

/// `skill apply` says what the registry should hold, so running it several
/// times at once succeeds every time: a run that finds another got in
/// between reads again and writes against what that one left.
#[test]
fn concurrent_applies_of_one_file_all_succeed() {
    let sb = Sandbox::new();
    let text: String = (0..300)
        .map(|i| format!("---\nname: c/s{i}\ntools: [builtin/read_file]\n"))
        .collect();
    let file = sb.write("all.yaml", &text);
    sb.run(&["db", "init"]).ok();
    let children: Vec<std::process::Child> = (0..6)
        .map(|_| {
            sb.cmd()
                .args(["skill", "apply", file.to_str().unwrap()])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(sb.sql_count("skills"), 300);
}

#[test]
fn a_secret_written_out_in_a_definition_is_warned_about_and_refused_under_strict() {
    let sb = Sandbox::new();
    let file = sb.write(
        "gh.yaml",
        "name: l/gh\nmcp_sources:\n  - server: gh\n    command: npx\n    args: [\"--api-key\", \"sk-LITERAL1\"]\n    env: {GITHUB_TOKEN: ghp_LITERAL2, API_KEY: \"${API_KEY}\"}\n",
    );
    let run = sb
        .run(&["skill", "add", "--strict", file.to_str().unwrap()])
        .fails(1);
    assert!(run.stderr.contains("nothing written"), "{}", run.stderr);
    let run = sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    for field in ["`env.GITHUB_TOKEN`", "`args[1]`"] {
        assert!(
            run.stderr.contains(&format!(
                "Skill 'l/gh': MCP server 'gh': {field} holds a secret written out"
            )),
            "{field}: {}",
            run.stderr
        );
    }
    // The reference is not a secret written out, and no warning shows one.
    assert!(!run.stderr.contains("env.API_KEY"), "{}", run.stderr);
    assert!(!run.stderr.contains("LITERAL"), "{}", run.stderr);
}

#[test]
fn skill_get_masks_secrets_written_out_and_refuses_the_masked_definition_back() {
    let sb = Sandbox::new();
    let file = sb.write(
        "gh.yaml",
        "name: l/gh\nmcp_sources:\n  - server: gh\n    command: npx\n    args: [\"--api-key\", \"sk-LITERAL1\", \"-y\"]\n    env: {GITHUB_TOKEN: ghp_LITERAL2, API_KEY: \"${API_KEY}\", LOG: debug}\n  - server: web\n    url: \"https://bot:pw-LITERAL3@mcp.example.com/mcp\"\n",
    );
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    for format in ["table", "yaml", "json"] {
        let run = sb.run(&["skill", "get", "l/gh", "--format", format]).ok();
        assert!(!run.stdout.contains("LITERAL"), "{format}: {}", run.stdout);
        assert!(!run.stderr.contains("LITERAL"), "{format}: {}", run.stderr);
        // What is not a secret stays as written.
        for kept in ["${API_KEY}", "debug", "--api-key", "mcp.example.com"] {
            assert!(run.stdout.contains(kept), "{format} {kept}: {}", run.stdout);
        }
        for field in [
            "mcp_sources[0].env.GITHUB_TOKEN",
            "mcp_sources[0].args[1]",
            "mcp_sources[1].url",
        ] {
            assert!(
                run.stderr.contains(field),
                "{format} {field}: {}",
                run.stderr
            );
        }
    }
    let shown = sb
        .run(&["skill", "get", "l/gh", "--show-secrets"])
        .ok()
        .stdout;
    for secret in ["sk-LITERAL1", "ghp_LITERAL2", "pw-LITERAL3"] {
        assert!(shown.contains(secret), "{secret}: {shown}");
    }
    // The masked definition written back would store `***` as the secret:
    // refused, at the line, and the stored secrets are kept.
    let masked = sb.run(&["skill", "get", "l/gh", "--format", "yaml"]).ok();
    let back = sb.write("back.yaml", &masked.stdout);
    let run = sb.run(&["skill", "apply", back.to_str().unwrap()]).fails(1);
    assert!(
        run.stderr.contains("back.yaml:")
            && run
                .stderr
                .contains("mcp_sources[0].env.GITHUB_TOKEN: holds `***`"),
        "{}",
        run.stderr
    );
    for field in ["mcp_sources[0].args[1]", "mcp_sources[1].url"] {
        assert!(run.stderr.contains(field), "{field}: {}", run.stderr);
    }
    let shown = sb
        .run(&["skill", "get", "l/gh", "--show-secrets"])
        .ok()
        .stdout;
    assert!(shown.contains("ghp_LITERAL2"), "{shown}");
    // `***` where no secret goes is an ordinary value.
    let plain = sb.write(
        "plain.yaml",
        "name: l/plain\nmcp_sources:\n  - server: p\n    command: tool\n    args: [\"***\", \"x***\"]\n    env: {PATTERN: \"***\"}\n",
    );
    sb.run(&["skill", "add", plain.to_str().unwrap()]).ok();
    let run = sb.run(&["skill", "get", "l/plain"]).ok();
    assert!(!run.stderr.contains("shown as"), "{}", run.stderr);
}

#[test]
fn a_url_whose_whole_userinfo_was_masked_is_refused_back_and_config_may_hold_the_mask() {
    let sb = Sandbox::new();
    let file = sb.write(
        "u.yaml",
        "name: l/u\nmcp_sources:\n  - server: web\n    url: \"https://user%3AS3CR3TPW@mcp.example.com/mcp\"\n",
    );
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    let masked = sb.run(&["skill", "get", "l/u", "--format", "yaml"]).ok();
    assert!(!masked.stdout.contains("S3CR3TPW"), "{}", masked.stdout);
    let back = sb.write("back.yaml", &masked.stdout);
    let run = sb
        .run(&["skill", "update", back.to_str().unwrap()])
        .fails(1);
    assert!(
        run.stderr.contains("mcp_sources[0].url: holds `***`"),
        "{}",
        run.stderr
    );
    let shown = sb.run(&["skill", "get", "l/u", "--show-secrets"]).ok();
    assert!(shown.stdout.contains("S3CR3TPW"), "{}", shown.stdout);
    // A config file is not `skill get` output: `***` there is a value.
    let config = sb.write(
        "config.toml",
        "[mcp.servers.x]\ncommand = \"tool\"\nenv = { API_KEY = \"***\" }\n",
    );
    sb.run(&["--config", config.to_str().unwrap(), "skill", "list"])
        .ok();
}

/// A name that is not registered fails in the specification's words
/// (`Skill 'NAME' ... is not registered`), whichever command meets it and
/// whether the store or the resolver finds it missing.
#[test]
fn not_registered_is_worded_one_way() {
    let sb = Sandbox::new();
    sb.init_db();
    let absent = sb.write("absent.yaml", "name: local/none\n");
    for args in [
        vec!["skill", "get", "local/none"],
        vec!["skill", "tools", "local/none"],
        vec!["skill", "remove", "local/none"],
        vec!["skill", "prompt", "local/none"],
        vec!["skill", "update", absent.to_str().unwrap()],
    ] {
        let run = sb.run(&args).fails(1);
        assert!(
            run.stderr.contains("Skill 'local/none' is not registered"),
            "{args:?}: {}",
            run.stderr
        );
    }
    let run = sb.run(&["tool", "get", "custom/none"]).fails(1);
    assert_eq!(run.stderr, "error: Tool 'custom/none' is not registered\n");
}

/// A name that names nothing registered comes with the registered names
/// likely meant, as data (`did_you_mean` in a JSON error or warning) and
/// after the message: a typo of a skill name, a bare short name, a missing
/// include.
#[test]
fn unknown_skill_names_suggest_the_registered_ones() {
    let sb = Sandbox::new();
    let file = sb.write(
        "team.yaml",
        "name: team/base\ntools: [builtin/grep]\n---\nname: team/assistant\nincludes: [team/base]\n",
    );
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();

    let run = sb.run(&["skill", "tools", "team/asistant"]).fails(1);
    assert_eq!(
        run.stderr,
        "error: Skill 'team/asistant' is not registered (did you mean 'team/assistant'?)\n"
    );
    let run = sb
        .run(&["skill", "get", "team/asistant", "--format", "json"])
        .fails(1);
    assert_eq!(
        run.stderr_json(),
        json!({"error": {
            "kind": "skill_not_found",
            "message": "Skill 'team/asistant' is not registered",
            "did_you_mean": ["team/assistant"],
        }})
    );
    // The same short name in another namespace.
    let run = sb.run(&["skill", "get", "local/assistant"]).fails(1);
    assert!(
        run.stderr.ends_with("(did you mean 'team/assistant'?)\n"),
        "{}",
        run.stderr
    );
    // A bare short name: the registered skills of that short name.
    for bare in ["assistant", "asistant"] {
        let run = sb.run(&["skill", "tools", bare]).fails(1);
        assert!(
            run.stderr.contains("invalid skill name")
                && run.stderr.ends_with("(did you mean 'team/assistant'?)\n"),
            "{bare}: {}",
            run.stderr
        );
    }
    // Nothing close: no hint.
    let run = sb.run(&["skill", "get", "other/zzz"]).fails(1);
    assert_eq!(run.stderr, "error: Skill 'other/zzz' is not registered\n");

    // A missing include: warned at `skill add`, an error at `skill tools`.
    let typo = sb.write("typo.yaml", "name: team/typo\nincludes: [team/bsae]\n");
    let run = sb
        .run(&["skill", "add", typo.to_str().unwrap(), "--format", "json"])
        .ok();
    let warning = run
        .stderr
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap()["warning"].clone())
        .find(|warning| warning["kind"] == "missing_include")
        .unwrap_or_else(|| panic!("{}", run.stderr));
    assert_eq!(warning["did_you_mean"], json!(["team/base"]), "{warning}");
    assert!(
        warning["message"]
            .as_str()
            .unwrap()
            .ends_with("(did you mean 'team/base'?)"),
        "{warning}"
    );
    let run = sb.run(&["skill", "tools", "team/typo"]).fails(1);
    assert!(
        run.stderr.contains("Included skill 'team/bsae' not found")
            && run.stderr.ends_with("(did you mean 'team/base'?)\n"),
        "{}",
        run.stderr
    );
}
