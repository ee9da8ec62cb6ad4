//! The onboarding frictions of issue 14, each with the behaviour that fixes it.

use serde_json::json;

use crate::support::Sandbox;

const BROKEN: &str = "\
name: local/broken
tools: [builtin/raed_file, builtin/grep]
includes: [local/missing, local/loop-a]
---
name: local/loop-a
includes: [local/loop-b]
---
name: local/loop-b
includes: [local/loop-a]
";

#[test]
fn add_warns_about_typos_missing_includes_and_cycles_but_still_writes() {
    let sb = Sandbox::new();
    let file = sb.write("broken.yaml", BROKEN);
    let run = sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    assert_eq!(
        run.stdout,
        "added 3 skills from [SANDBOX]/broken.yaml: local/broken, local/loop-a, local/loop-b\n"
    );
    insta::assert_snapshot!("add_warnings", run.stderr);
    assert_eq!(sb.sql_count("skills"), 3);
}

/// A capability override of the wrong type would be stored and do nothing
/// (the summary would still count the tool's own flags): said at once. (In
/// YAML 1.2 `no` is a string, not false.)
#[test]
fn add_warns_about_overrides_of_the_wrong_type() {
    let sb = Sandbox::new();
    let file = sb.write(
        "owt.yaml",
        "name: o/wt\ntools: [builtin/shell]\noverrides:\n  builtin/shell: {read_only: \"true\", writes: no}\n",
    );
    let run = sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    // Each at its key.
    assert_eq!(
        run.stderr,
        "warning: [SANDBOX]/owt.yaml:4:19: Skill 'o/wt': override `read_only` for 'builtin/shell' is a string, expected `true` or `false`; it counts as unset and hides any weaker value of `read_only`\n  |\n4 |   builtin/shell: {read_only: \"true\", writes: no}\n  |                   ^\n\
         warning: [SANDBOX]/owt.yaml:4:38: Skill 'o/wt': override `writes` for 'builtin/shell' is a string, expected `true` or `false`; it counts as unset and hides any weaker value of `writes`\n  |\n4 |   builtin/shell: {read_only: \"true\", writes: no}\n  |                                      ^\n"
    );
    let run = sb
        .run(&["skill", "add", file.to_str().unwrap(), "--strict"])
        .fails(1);
    assert!(
        run.stderr.contains("override `read_only`"),
        "{}",
        run.stderr
    );
}

#[test]
fn add_strict_refuses_the_file_and_writes_nothing() {
    let sb = Sandbox::new();
    let file = sb.write("broken.yaml", BROKEN);
    let run = sb
        .run(&["skill", "add", "--strict", file.to_str().unwrap()])
        .fails(1);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.starts_with(
            "error: [SANDBOX]/broken.yaml: nothing written: 3 problems under --strict\n"
        ),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("did you mean 'builtin/read_file'?"));
    assert_eq!(sb.sql_count("skills"), 0);

    let run = sb
        .run(&[
            "skill",
            "add",
            "--strict",
            "--format",
            "json",
            file.to_str().unwrap(),
        ])
        .fails(1);
    assert_eq!(run.json()[0]["error"]["kind"], "strict");
}

#[test]
fn a_skill_added_before_its_include_warns_then_the_include_clears_it() {
    let sb = Sandbox::new();
    let top = sb.write("top.yaml", "name: local/top\nincludes: [local/base]\n");
    let run = sb.run(&["skill", "add", top.to_str().unwrap()]).ok();
    assert!(
        run.stderr.contains("Included skill 'local/base' not found"),
        "{}",
        run.stderr
    );
    let base = sb.write("base.yaml", "name: local/base\ntools: [builtin/grep]\n");
    let run = sb
        .run(&["skill", "add", "--strict", base.to_str().unwrap()])
        .ok();
    assert_eq!(run.stderr, "");
}

#[test]
fn update_warns_and_json_lists_the_warnings() {
    let sb = Sandbox::new();
    let file = sb.write("a.yaml", "name: local/a\ntools: [builtin/grep]\n");
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    let file = sb.write("a.yaml", "name: local/a\ntools: [builtin/gerp]\n");
    let run = sb
        .run(&[
            "skill",
            "update",
            "--format",
            "json",
            file.to_str().unwrap(),
        ])
        .ok();
    assert_eq!(
        run.json(),
        json!([{
            "file": "[SANDBOX]/a.yaml", "ok": true, "skills": ["local/a"],
            "warnings": ["Skill 'local/a': Tool 'builtin/gerp' is not registered (did you mean 'builtin/grep'?)"]
        }])
    );
    let run = sb
        .run(&["skill", "update", "--strict", file.to_str().unwrap()])
        .fails(1);
    assert!(run.stderr.contains("under --strict"), "{}", run.stderr);
}

#[test]
fn apply_creates_updates_and_leaves_unchanged_skills_alone() {
    let sb = Sandbox::new();
    let file = sb.write(
        "skills.yaml",
        "name: local/a\ntools: [builtin/grep]\n---\nname: local/b\ntools: [builtin/read_file]\n",
    );
    let run = sb.run(&["skill", "apply", file.to_str().unwrap()]).ok();
    assert_eq!(run.stdout, "created local/a\ncreated local/b\n");
    let before = sb
        .run(&["skill", "get", "local/a", "--format", "json"])
        .ok()
        .json();

    let file = sb.write(
        "skills.yaml",
        "name: local/a\ntools: [builtin/grep]\n---\nname: local/b\ndescription: now described\ntools: [builtin/read_file]\n---\nname: local/c\nincludes: [local/a]\n",
    );
    let run = sb.run(&["skill", "apply", file.to_str().unwrap()]).ok();
    assert_eq!(
        run.stdout,
        "unchanged local/a\nupdated local/b\ncreated local/c\n"
    );
    let after = sb
        .run(&["skill", "get", "local/a", "--format", "json"])
        .ok()
        .json();
    assert_eq!(
        before["updated_at"], after["updated_at"],
        "unchanged is not rewritten"
    );

    let run = sb
        .run(&["skill", "apply", "--format", "json", file.to_str().unwrap()])
        .ok();
    assert_eq!(
        run.json()[0]["skills"],
        json!([
            {"name": "local/a", "change": "unchanged"},
            {"name": "local/b", "change": "unchanged"},
            {"name": "local/c", "change": "unchanged"},
        ])
    );
}

#[test]
fn apply_strict_writes_nothing_of_a_file_with_a_warning() {
    let sb = Sandbox::new();
    let file = sb.write(
        "skills.yaml",
        "name: local/a\ntools: [builtin/grep]\n---\nname: local/b\ntools: [builtin/nope]\n",
    );
    let run = sb
        .run(&["skill", "apply", "--strict", file.to_str().unwrap()])
        .fails(1);
    assert!(run.stderr.contains("under --strict"), "{}", run.stderr);
    assert_eq!(sb.sql_count("skills"), 0);
}

#[test]
fn strict_files_may_include_what_a_later_file_of_the_command_defines() {
    let sb = Sandbox::new();
    // `a` includes `b` of a later file, which includes `c` already stored.
    let stored = sb.write("c.yaml", "name: local/c\ntools: [builtin/grep]\n");
    sb.run(&["skill", "add", stored.to_str().unwrap()]).ok();
    let a = sb.write("a.yaml", "name: local/a\nincludes: [local/b]\n");
    let b = sb.write(
        "b.yaml",
        "name: local/b\nincludes: [local/c]\ntools: [builtin/read_file]\n",
    );
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let run = sb.run(&["skill", "apply", "--strict", a, b]).ok();
    assert!(run.stdout.contains("created local/a"), "{}", run.stdout);
    assert!(run.stdout.contains("created local/b"), "{}", run.stdout);
    assert!(!run.stderr.contains("warning"), "{}", run.stderr);
    sb.run(&["skill", "tools", "local/a"]).ok();
    // The same for `skill add`; a problem in the later file still counts
    // against the file that includes it.
    let d = sb.write("d.yaml", "name: local/d\nincludes: [local/e]\n");
    let e = sb.write("e.yaml", "name: local/e\ntools: [builtin/nope]\n");
    let (d, e) = (d.to_str().unwrap(), e.to_str().unwrap());
    let run = sb.run(&["skill", "add", "--strict", d, e]).fails(1);
    assert!(
        run.stderr.contains("d.yaml: nothing written"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("builtin/nope"), "{}", run.stderr);
    sb.write("e.yaml", "name: local/e\ntools: [builtin/grep]\n");
    sb.run(&["skill", "add", "--strict", d, e]).ok();
    // A later file that cannot be read is no help.
    let f = sb.write("f.yaml", "name: local/f\nincludes: [local/g]\n");
    let g = sb.write("g.yaml", "name: local/g\ntools: [builtin/grep\n");
    let run = sb
        .run(&[
            "skill",
            "add",
            "--strict",
            f.to_str().unwrap(),
            g.to_str().unwrap(),
        ])
        .fails(1);
    assert!(run.stderr.contains("local/g"), "{}", run.stderr);
    sb.run(&["skill", "get", "local/f"]).fails(1);
}

/// Files that include one another are checked in one walk: a problem is
/// listed once, for the file that defines its skill (a stored skill's, for
/// the first file that reaches it), not again for every file whose closure
/// holds it; `--strict` still refuses every file that reaches it.
#[test]
fn a_problem_reached_by_many_files_is_listed_once() {
    // Files a -> b -> c in a chain; c names an unknown tool, b also
    // includes a stored skill that names one; `ok` stands alone.
    let chain = |sb: &Sandbox, b_includes: &str| -> Vec<String> {
        [
            ("a.yaml", "name: local/a\nincludes: [local/b]\n".to_owned()),
            (
                "b.yaml",
                format!("name: local/b\nincludes: [{b_includes}]\n"),
            ),
            (
                "c.yaml",
                "name: local/c\ntools: [builtin/nope]\n".to_owned(),
            ),
            (
                "ok.yaml",
                "name: local/ok\ntools: [builtin/grep]\n".to_owned(),
            ),
        ]
        .iter()
        .map(|(file, text)| sb.write(file, text).to_str().unwrap().to_owned())
        .collect()
    };
    let sb = Sandbox::new();
    let stored = sb.write("s.yaml", "name: local/stored\ntools: [builtin/gone]\n");
    sb.run(&["skill", "add", stored.to_str().unwrap()]).ok();
    let files = chain(&sb, "local/c, local/stored");
    let mut args = vec!["skill", "add"];
    args.extend(files.iter().map(String::as_str));
    let run = sb.run(&args).ok();
    let lines_naming = |tool: &str| -> Vec<String> {
        run.stderr
            .lines()
            .filter(|line| line.starts_with("warning: ") && line.contains(tool))
            .map(str::to_owned)
            .collect()
    };
    let nope = lines_naming("builtin/nope");
    assert_eq!(nope.len(), 1, "{}", run.stderr);
    // At its line in the file that defines the skill; the stored skill's
    // problem has none.
    assert!(nope[0].contains("c.yaml:2:9: "), "{}", run.stderr);
    let gone = lines_naming("builtin/gone");
    assert_eq!(gone.len(), 1, "{}", run.stderr);
    assert!(gone[0].contains("a.yaml: "), "{}", run.stderr);

    let sb = Sandbox::new();
    let files = chain(&sb, "local/c");
    let mut args = vec!["skill", "apply", "--strict"];
    args.extend(files.iter().map(String::as_str));
    let run = sb.run(&args).fails(1);
    for refused in [
        "a.yaml: nothing written",
        "b.yaml: nothing written",
        "c.yaml: nothing written",
    ] {
        assert!(run.stderr.contains(refused), "{refused}\n{}", run.stderr);
    }
    assert!(
        run.stderr
            .contains("`local/a` includes `local/b`, which has problems"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.contains("created local/ok"), "{}", run.stdout);
    assert_eq!(sb.sql_count("skills"), 1);
}

/// A stored row that does not decode fails only the files that reach it;
/// and a file that fails still shows what its check found (a stored
/// skill's problem is listed for the first file reaching it, not again).
#[test]
fn one_file_failing_costs_the_others_nothing() {
    let sb = Sandbox::new();
    let stored = sb.write(
        "stored.yaml",
        "name: t/z\ntools: [builtin/grep]\n---\nname: t/s\ntools: [nosuch/tool]\n---\nname: t/a\n",
    );
    sb.run(&["skill", "add", stored.to_str().unwrap()]).ok();
    sb.sqlite3("UPDATE skills SET metadata_json = '{bad' WHERE name = 't/z'");
    let fine = sb.write("fine.yaml", "name: t/fine\ntools: [builtin/grep]\n");
    let bad = sb.write("bad.yaml", "name: t/bad\nincludes: [t/z]\n");
    let run = sb
        .run(&[
            "skill",
            "add",
            fine.to_str().unwrap(),
            bad.to_str().unwrap(),
        ])
        .fails(1);
    assert!(
        run.stdout
            .contains("added 1 skill from [SANDBOX]/fine.yaml"),
        "{}",
        run.stdout
    );
    assert!(run.stderr.contains("bad.yaml: "), "{}", run.stderr);

    // `a.yaml` fails (already registered) but still says what `t/s` lacks.
    let a = sb.write("a.yaml", "name: t/a\nincludes: [t/s]\n");
    let b = sb.write("b.yaml", "name: t/b\nincludes: [t/s]\n");
    let run = sb
        .run(&["skill", "add", a.to_str().unwrap(), b.to_str().unwrap()])
        .fails(1);
    assert!(
        run.stderr
            .contains("a.yaml: Skill 't/s': Tool 'nosuch/tool' is not registered"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("already registered"), "{}", run.stderr);
    assert!(
        run.stdout.contains("added 1 skill from [SANDBOX]/b.yaml"),
        "{}",
        run.stdout
    );
}

#[test]
fn db_import_replace_loads_into_a_non_empty_registry() {
    let sb = Sandbox::new();
    let file = sb.write(
        "skills.yaml",
        "name: local/a\ntools: [builtin/grep]\n---\nname: local/b\ntools: [builtin/read_file]\n",
    );
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    let export = sb.path("export.yaml");
    sb.run(&["db", "export", "-o", export.to_str().unwrap()])
        .ok();
    let changed = sb.write(
        "b.yaml",
        "name: local/b\ndescription: edited\ntools: [builtin/grep]\n",
    );
    sb.run(&["skill", "update", changed.to_str().unwrap()]).ok();

    let run = sb.run(&["db", "import", export.to_str().unwrap()]).fails(1);
    assert!(run.stderr.contains("already registered"), "{}", run.stderr);

    let run = sb
        .run(&["db", "import", "--replace", export.to_str().unwrap()])
        .ok();
    assert_eq!(
        run.stdout,
        "imported 2 skill(s) (0 created, 1 updated, 1 unchanged) and 0 tool(s) from [SANDBOX]/export.yaml\n"
    );
    let b = sb
        .run(&["skill", "get", "local/b", "--format", "json"])
        .ok()
        .json();
    assert_eq!(b["description"], json!(null));
}

#[test]
fn remove_refuses_an_included_skill_and_force_names_what_broke() {
    let sb = Sandbox::new();
    let file = sb.write(
        "pair.yaml",
        "name: local/git-tools\ntools: [builtin/grep]\n---\nname: local/devops\nincludes: [local/git-tools]\n",
    );
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    let run = sb.run(&["skill", "remove", "local/git-tools"]).fails(1);
    assert_eq!(
        run.stderr,
        "error: skill `local/git-tools` is included by `local/devops`; remove the includes first, \
         or pass `--force` to break it\n"
    );
    assert_eq!(sb.sql_count("skills"), 2);
    let run = sb
        .run(&["--format", "json", "skill", "remove", "local/git-tools"])
        .fails(1);
    assert_eq!(run.stderr_json()["error"]["kind"], "skill_included");
    let run = sb
        .run(&["skill", "remove", "local/git-tools", "--force"])
        .ok();
    assert_eq!(
        run.stdout,
        "removed local/git-tools; these skills include it and are now broken: `local/devops`\n"
    );
    assert_eq!(sb.sql_count("skills"), 1);
    // Removing the includer itself needs no force.
    let run = sb
        .run(&["--format", "json", "skill", "remove", "local/devops"])
        .ok();
    assert_eq!(run.json(), json!({"removed": "local/devops", "broken": []}));
}

#[test]
fn a_database_in_a_missing_directory_is_an_error_until_db_init_creates_it() {
    let sb = Sandbox::new();
    let url = format!("sqlite://{}/nonexistent/dir/x.db", sb.dir.path().display());
    let tools = sb.write("t.yaml", "name: custom/t\ndescription: a tool\n");
    let run = sb
        .run(&[
            "--database-url",
            &url,
            "tool",
            "add",
            tools.to_str().unwrap(),
        ])
        .fails(1);
    assert_eq!(
        run.stderr,
        "error: the directory `[SANDBOX]/nonexistent/dir` of the database does not exist; \
         create it with `agents db init`\n"
    );
    assert!(!sb.path("nonexistent").exists());
    let run = sb.run(&["--database-url", &url, "db", "init"]).ok();
    assert_eq!(
        run.stdout,
        "initialized sqlite://[SANDBOX]/nonexistent/dir/x.db (schema version 2)\n"
    );
    assert!(sb.path("nonexistent/dir/x.db").is_file());
    let run = sb.run(&["--database-url", &url, "skill", "list"]).ok();
    assert_eq!(run.stdout, "NAME\tVERSION\tITEMS\tDESCRIPTION\n");
    assert_eq!(run.stderr, "no skills registered\n");
    // The default location is still created by the first write.
    let run = sb
        .cmd()
        .env_remove("CLEVERAGENTS_DATABASE_URL")
        .args(["tool", "add", tools.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(sb.home().join(".cleveragents/cleveragents.db").is_file());
}

/// Every command that only reads the registry, with the arguments it needs.
const READS: &[&[&str]] = &[
    &["skill", "list"],
    &["skill", "get", "l/x"],
    &["skill", "tools", "nope/x"],
    &["skill", "prompt", "l/x"],
    &["skill", "graph", "l/x"],
    &["skill", "validate", "l/x"],
    &["skill", "lock", "l/x", "-o", "lock.json"],
    &["skill", "diff", "l/x", "--lock", "lock.json"],
    &["tool", "list"],
    &["tool", "get", "builtin/grep"],
    &["mcp", "list"],
    &["mcp", "tools", "gh"],
    &["mcp", "export"],
    &["mcp", "serve", "l/x", "--dry-run"],
    &["mcp", "trust", "--list"],
    &["db", "status"],
    &["db", "export"],
    &["plan", "validate", "plan.yaml"],
];

/// A mistyped registry path read by any command is an error naming the path
/// and where it was set, and nothing is created: not the file, not its
/// directory. A write to the same path creates it as before.
#[test]
fn a_read_of_a_registry_that_does_not_exist_is_an_error_and_creates_nothing() {
    let sb = Sandbox::new();
    sb.write("plan.yaml", "skills: [l/x]\n");
    sb.write("lock.json", "{}\n");
    let missing_dir = format!("sqlite://{}/nodir/r.db", sb.dir.path().display());
    for url in ["sqlite://regstry.db", missing_dir.as_str()] {
        for args in READS {
            let mut all = vec!["--database-url", url];
            all.extend_from_slice(args);
            let run = sb.run(&all).fails(1);
            assert!(
                run.stderr.starts_with(
                    "error: `database.url` from command-line flag: no registry exists at `"
                ),
                "{args:?}: {}",
                run.stderr
            );
            assert!(!sb.path("regstry.db").exists(), "{args:?}");
            assert!(!sb.path("nodir").exists(), "{args:?}");
        }
    }
    let run = sb
        .run(&[
            "--database-url",
            "sqlite://regstry.db",
            "--format",
            "json",
            "skill",
            "list",
        ])
        .fails(1);
    assert_eq!(run.stderr_json()["error"]["kind"], "missing_database");
    let run = sb
        .run(&["--database-url", "sqlite://regstry.db", "skill", "list"])
        .fails(1);
    assert_eq!(
        run.stderr,
        "error: `database.url` from command-line flag: no registry exists at `[SANDBOX]/regstry.db`; \
         `agents db init` creates it (so does any command that writes, such as `agents skill add`)\n"
    );
    // The sandbox sets the URL in the environment; its file is not made yet.
    let run = sb.run(&["skill", "tools", "nope/x"]).fails(1);
    assert_eq!(
        run.stderr,
        "error: `database.url` from environment variable `CLEVERAGENTS_DATABASE_URL`: \
         no registry exists at `[SANDBOX]/registry.db`; `agents db init` creates it \
         (so does any command that writes, such as `agents skill add`)\n"
    );
    assert!(!sb.db_path().exists());
    // From the config file.
    let config = sb.write(
        "conf/config.toml",
        &format!(
            "[database]\nurl = \"sqlite://{}/nodir/c.db\"\n",
            sb.dir.path().display()
        ),
    );
    let mut cmd = sb.cmd();
    cmd.env_remove("CLEVERAGENTS_DATABASE_URL").args([
        "--config",
        config.to_str().unwrap(),
        "db",
        "status",
    ]);
    let run = crate::support::Run::from(cmd.output().unwrap(), &sb).fails(1);
    assert_eq!(
        run.stderr,
        "error: `database.url` from `[SANDBOX]/conf/config.toml:2`: \
         no registry exists at `[SANDBOX]/nodir/c.db`; `agents db init` creates it \
         (so does any command that writes, such as `agents skill add`)\n"
    );
    assert!(!sb.path("nodir").exists());
    // A write to the same explicit path creates it, as before; reads then work.
    let file = sb.write("s.yaml", "name: l/x\ntools: [builtin/grep]\n");
    sb.run(&[
        "--database-url",
        "sqlite://regstry.db",
        "skill",
        "add",
        file.to_str().unwrap(),
    ])
    .ok();
    assert!(sb.path("regstry.db").is_file());
    let run = sb
        .run(&[
            "--database-url",
            "sqlite://regstry.db",
            "skill",
            "list",
            "--format",
            "json",
        ])
        .ok();
    assert_eq!(run.json()[0]["name"], "l/x");
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    assert!(sb.db_path().is_file());
}

/// A fresh user who has written nothing reads the default location as an
/// empty registry, as before, and nothing is created in their home.
#[test]
fn a_read_of_the_default_location_on_a_fresh_home_is_empty_and_creates_nothing() {
    let sb = Sandbox::new();
    sb.write("plan.yaml", "skills: [l/x]\n");
    sb.write("lock.json", "{}\n");
    let run_default = |args: &[&str]| {
        let mut cmd = sb.cmd();
        cmd.env_remove("CLEVERAGENTS_DATABASE_URL").args(args);
        crate::support::Run::from(cmd.output().unwrap(), &sb)
    };
    let run = run_default(&["skill", "list"]).ok();
    assert_eq!(run.stdout, "NAME\tVERSION\tITEMS\tDESCRIPTION\n");
    assert_eq!(run.stderr, "no skills registered\n");
    let run = run_default(&["skill", "tools", "nope/x"]).fails(1);
    assert_eq!(run.stderr, "error: Skill 'nope/x' is not registered\n");
    let run = run_default(&["db", "status", "--format", "json"]).ok();
    let status = run.json();
    assert_eq!(
        status["location"],
        "sqlite://[SANDBOX]/home/.cleveragents/cleveragents.db"
    );
    assert_eq!(status["skills"], 0);
    assert_eq!(status["schema_version"], status["supported_version"]);
    let run = run_default(&["tool", "list", "--format", "json"]).ok();
    assert!(
        run.json()
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "builtin/grep")
    );
    // Every other read runs as on an empty registry (its own errors for a
    // skill that is not there) and leaves the home as it was.
    for args in READS {
        let run = run_default(args);
        assert!(
            !run.stderr.contains("no registry"),
            "{args:?}: {}",
            run.stderr
        );
        assert_eq!(
            std::fs::read_dir(sb.home()).unwrap().count(),
            0,
            "{args:?} created something in HOME"
        );
    }
}

#[test]
fn skill_prompt_lists_the_agent_skills_and_tool_get_body_prints_skill_md() {
    let sb = Sandbox::new();
    sb.write(
        "skills/pdf-tools/SKILL.md",
        "---\nname: pdf-tools\ndescription: Work with <PDF> & forms\n---\n\n# PDF tools\n\nUse `pdftotext`.\n",
    );
    let dir = sb.path("skills");
    sb.run(&["skill", "discover", "--paths", dir.to_str().unwrap()])
        .ok();
    let file = sb.write(
        "s.yaml",
        &format!(
            "name: l/docs\ntools: [builtin/grep]\nagent_sources:\n  - path: {}\n",
            dir.join("pdf-tools").display()
        ),
    );
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    let run = sb.run(&["skill", "prompt", "l/docs"]).ok();
    assert_eq!(
        run.stdout,
        "<available_skills>\n<skill>\n<name>\npdf-tools\n</name>\n<description>\n\
         Work with &lt;PDF&gt; &amp; forms\n</description>\n<location>\n\
         [SANDBOX]/skills/pdf-tools/SKILL.md\n</location>\n</skill>\n</available_skills>\n"
    );
    let run = sb
        .run(&["tool", "get", "agent_skills/pdf-tools", "--body"])
        .ok();
    assert_eq!(run.stdout, "\n# PDF tools\n\nUse `pdftotext`.\n");
    let run = sb.run(&["tool", "get", "builtin/grep", "--body"]).fails(1);
    assert_eq!(
        run.stderr,
        "error: tool `builtin/grep` is not an Agent Skill: only `agent_skills/...` tools have a SKILL.md body\n"
    );
}

#[test]
fn completions_generate_for_every_shell_and_man_renders() {
    let sb = Sandbox::new();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let run = sb.run(&["completions", shell]).ok();
        assert!(run.stdout.contains("agents"), "{shell}: {}", run.stdout);
        assert!(run.stdout.contains("skill"), "{shell}");
    }
    let run = sb.run(&["completions", "tcsh"]).fails(2);
    assert!(run.stderr.contains("tcsh"), "{}", run.stderr);
    let run = sb.run(&["man"]).ok();
    assert!(run.stdout.contains(".TH agents"), "{}", run.stdout);
    // Every page `agents(1)` refers to exists: `agents man skill tools` is
    // `agents-skill-tools(1)`, with that command's own options.
    assert!(run.stdout.contains("agents\\-skill(1)"), "{}", run.stdout);
    let run = sb.run(&["man", "skill"]).ok();
    assert!(run.stdout.contains(".TH agents-skill 1"), "{}", run.stdout);
    assert!(
        run.stdout.contains("agents\\-skill\\-tools(1)"),
        "{}",
        run.stdout
    );
    let run = sb.run(&["man", "skill", "tools"]).ok();
    assert!(
        run.stdout.contains(".TH agents-skill-tools 1"),
        "{}",
        run.stdout
    );
    // The footer names the program and its version, not `tools `.
    let footer = format!(
        ".TH agents-skill-tools 1  \"agents {}\"",
        env!("CARGO_PKG_VERSION")
    );
    assert!(run.stdout.contains(&footer), "{}", run.stdout);
    assert!(run.stdout.contains("\\-\\-explain"), "{}", run.stdout);
    assert!(
        run.stdout.contains("\\fBagents skill tools\\fR"),
        "{}",
        run.stdout
    );
    let run = sb.run(&["man", "skill", "nope"]).fails(2);
    assert_eq!(
        run.stderr,
        "error: `agents skill` has no subcommand `nope`; `agents skill --help` lists them\n"
    );
}

#[test]
fn quiet_drops_warnings_but_not_results_or_errors() {
    let sb = Sandbox::new();
    let file = sb.write("broken.yaml", BROKEN);
    let run = sb.run(&["-q", "skill", "add", file.to_str().unwrap()]).ok();
    assert_eq!(run.stderr, "");
    assert!(run.stdout.starts_with("added 3 skills"), "{}", run.stdout);
    let run = sb.run(&["--quiet", "skill", "get", "local/nope"]).fails(1);
    assert_eq!(run.stderr, "error: Skill 'local/nope' is not registered\n");
}

const CLAUDE_DESKTOP: &str = r#"{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"]
    },
    "github": {
      "command": "docker",
      "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_literal_secret_value"}
    }
  },
  "globalShortcut": "Ctrl+Space"
}"#;

const CLAUDE_CODE: &str = r#"{
  "mcpServers": {
    "sentry": {"type": "http", "url": "https://mcp.sentry.dev/mcp",
               "headers": {"Authorization": "Bearer ${SENTRY_TOKEN}"}},
    "legacy": {"type": "sse", "url": "https://example.com/sse"},
    "filesystem": {"command": "npx", "args": ["other"]}
  }
}"#;

const VSCODE: &str = r#"{
  "inputs": [{"type": "promptString", "id": "api-key", "description": "Key", "password": true}],
  "servers": {
    "fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"],
              "env": {"HOME_DIR": "${env:HOME}"}},
    "perplexity": {"type": "stdio", "command": "npx", "args": ["-y", "server-perplexity-ask"],
                   "env": {"PERPLEXITY_API_KEY": "${input:api-key}"}}
  }
}"#;

#[test]
fn mcp_import_reads_claude_desktop_claude_code_and_vscode_and_keeps_comments() {
    let sb = Sandbox::new();
    let config = sb.write(
        "home/.cleveragents/config.toml",
        "# my settings\n[mcp]\ntimeout_s = 20  # slow servers\n",
    );
    let desktop = sb.write("claude_desktop_config.json", CLAUDE_DESKTOP);
    let code = sb.write(".mcp.json", CLAUDE_CODE);
    let vscode = sb.write(".vscode/mcp.json", VSCODE);

    // Dry run: the TOML on stdout with the literal secret masked; nothing written.
    let run = sb
        .run(&["mcp", "import", desktop.to_str().unwrap(), "--dry-run"])
        .ok();
    insta::assert_snapshot!("mcp_import_dry_run", run.stdout);
    assert!(
        run.stderr.contains("would add mcp server `github`"),
        "{}",
        run.stderr
    );
    assert!(!run.stdout.contains("ghp_literal"), "{}", run.stdout);
    assert!(!run.stderr.contains("ghp_literal"), "{}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        "# my settings\n[mcp]\ntimeout_s = 20  # slow servers\n"
    );

    let run = sb
        .run(&["mcp", "import", desktop.to_str().unwrap(), "--yes"])
        .ok();
    // Each server is shown first, a secret written out as `***` (the file
    // is the user's own: imported trusted).
    assert_eq!(
        run.stdout,
        "mcp server `filesystem`:\n  runs: npx -y @modelcontextprotocol/server-filesystem /Users/me/Desktop\n\
         mcp server `github`:\n  runs: env 'GITHUB_PERSONAL_ACCESS_TOKEN=***' docker run -i --rm -e \
         GITHUB_PERSONAL_ACCESS_TOKEN ghcr.io/github/github-mcp-server\n  secrets written out are shown \
         as `***`: `env.GITHUB_PERSONAL_ACCESS_TOKEN`\n\
         added mcp server `filesystem`\nadded mcp server `github`\n\
         wrote 2 server(s) to [SANDBOX]/home/.cleveragents/config.toml\n"
    );
    let run = sb
        .run(&[
            "mcp",
            "import",
            code.to_str().unwrap(),
            "--yes",
            "--format",
            "json",
        ])
        .ok();
    assert_eq!(run.json()["added"], json!(["sentry"]));
    // A project's file: its servers are imported untrusted.
    assert!(
        run.json()["untrusted"]
            .as_str()
            .is_some_and(|why| why.starts_with("it is a project's file")),
        "{}",
        run.json()
    );
    assert_eq!(
        run.json()["skipped"],
        json!([
            {"server": "legacy", "reason": "the SSE transport is not supported (only stdio and streamable HTTP)"},
            {"server": "filesystem", "reason": "already in the config file"},
        ])
    );
    let run = sb
        .run(&["mcp", "import", vscode.to_str().unwrap(), "--yes"])
        .ok();
    assert!(
        run.stdout.contains("added mcp server `fetch`"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "skipped mcp server `perplexity`: `env.PERPLEXITY_API_KEY` uses `${input:…}`"
        ),
        "{}",
        run.stdout
    );
    // Comments and the existing setting survive; the file is private.
    let written = std::fs::read_to_string(&config).unwrap();
    insta::assert_snapshot!("mcp_import_config", written);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&config).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    // The imported servers load as configured servers.
    let list = sb.run(&["mcp", "list", "--format", "json"]).ok().json();
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["server"].as_str())
        .collect();
    for name in ["filesystem", "github", "sentry", "fetch"] {
        assert!(names.contains(&name), "{name} missing from {list}");
    }
    // A file that is not a client config is a clear error.
    let bad = sb.write("bad.json", "{\"foo\": 1}");
    let run = sb
        .run(&["mcp", "import", bad.to_str().unwrap(), "--yes"])
        .fails(1);
    assert_eq!(
        run.stderr,
        "error: cannot import `[SANDBOX]/bad.json`: expected an `mcpServers` object (Claude Desktop, \
         Claude Code) or a `servers` object (VS Code)\n"
    );
}

#[test]
fn lint_notes_the_registry_extensions_the_reference_validator_rejects() {
    let sb = Sandbox::new();
    let folder = crate::support::examples().join("agent_skills/pdf-processing");
    let run = sb.run(&["skill", "lint", folder.to_str().unwrap()]).ok();
    assert!(
        run.stdout.contains(
            "  note: `input_schema` is an extension of this registry: the Agent Skills reference \
             validator (`skills-ref validate`) rejects it\n"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .ends_with("1 skill folder(s) checked, 0 with errors\n")
    );
    let json = sb
        .run(&[
            "skill",
            "lint",
            folder.to_str().unwrap(),
            "--format",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(json["folders"][0]["notes"].as_array().unwrap().len(), 1);
}

#[test]
fn mcp_export_writes_claude_and_vscode_files_with_a_serve_entry() {
    let sb = Sandbox::new();
    sb.write(
        "home/.cleveragents/config.toml",
        "[mcp.servers.github]\ncommand = \"docker\"\nargs = [\"run\", \"-i\"]\n\
         env = { TOKEN = \"ghp_literal\", HOME_DIR = \"${HOME}\", NODE_ENV = \"production\" }\n\
         [mcp.servers.sentry]\nurl = \"https://mcp.sentry.dev/mcp\"\n\
         headers = { Authorization = \"Bearer ${SENTRY_TOKEN}\" }\n",
    );
    // A serve entry must name a registered skill.
    sb.init_db();
    let run = sb
        .run(&["mcp", "export", "--serve", "local/devops-toolkit"])
        .fails(1);
    assert!(
        run.stderr.contains("local/devops-toolkit"),
        "{}",
        run.stderr
    );
    let skill = sb.write(
        "d.yaml",
        "name: local/devops-toolkit\ntools: [builtin/read_file]\n",
    );
    sb.run(&["skill", "add", skill.to_str().unwrap()]).ok();
    let run = sb
        .run(&["mcp", "export", "--serve", "local/devops-toolkit"])
        .ok();
    assert!(!run.stdout.contains("ghp_literal"), "{}", run.stdout);
    // The serve entry runs this very program, by its absolute path: a
    // client's PATH often lacks `~/.cargo/bin`.
    let program = std::fs::canonicalize(env!("CARGO_BIN_EXE_agents")).unwrap();
    assert_eq!(
        run.json(),
        json!({"mcpServers": {
            // Only what looks secret is masked: `NODE_ENV` is not.
            "github": {"command": "docker", "args": ["run", "-i"],
                       "env": {"TOKEN": "***", "HOME_DIR": "${HOME}", "NODE_ENV": "production"}},
            "sentry": {"type": "http", "url": "https://mcp.sentry.dev/mcp",
                       "headers": {"Authorization": "Bearer ${SENTRY_TOKEN}"}},
            // The sandbox's database is not the default one (it is set by
            // `CLEVERAGENTS_DATABASE_URL`): the entry carries it, so the
            // client's gateway reads the registry this command read.
            "agents": {"command": program.display().to_string(),
                       "args": ["mcp", "serve", "local/devops-toolkit"],
                       "env": {"CLEVERAGENTS_DATABASE_URL": "sqlite://[SANDBOX]/registry.db"}},
        }})
    );
    // What was masked is said on stderr, with where the whole file comes from.
    assert!(
        run.stderr
            .contains("1 value(s) that look secret are masked as `***` (github.env.TOKEN)")
            && run.stderr.contains("`-o FILE` writes them whole"),
        "{}",
        run.stderr
    );
    // `--bare-command` keeps the name, for a client whose PATH has it.
    let run = sb
        .run(&[
            "mcp",
            "export",
            "--serve",
            "local/devops-toolkit",
            "--bare-command",
        ])
        .ok();
    assert_eq!(run.json()["mcpServers"]["agents"]["command"], "agents");
    // Nothing that looks secret: nothing masked, nothing said.
    let quiet = Sandbox::new();
    quiet.write(
        "home/.cleveragents/config.toml",
        "[mcp.servers.fs]\ncommand = \"npx\"\nenv = { NODE_ENV = \"production\" }\n",
    );
    quiet.init_db();
    let run = quiet.run(&["mcp", "export"]).ok();
    assert_eq!(run.stderr, "");
    assert_eq!(
        run.json()["mcpServers"]["fs"]["env"]["NODE_ENV"],
        "production"
    );
    // A flag too, and a config file named by `--config`; a password in a
    // database URL is masked when printed.
    let config = sb.home().join(".cleveragents/config.toml");
    let run = sb
        .run(&[
            "--config",
            config.to_str().unwrap(),
            "--database-url",
            "postgres://u:hunter2@127.0.0.1:1/reg",
            "mcp",
            "export",
            "--serve",
            "local/devops-toolkit",
        ])
        .fails(1);
    // (that database cannot be reached, so the skill cannot be checked)
    assert!(!run.stderr.contains("hunter2"), "{}", run.stderr);
    let run = sb
        .run(&[
            "--config",
            config.to_str().unwrap(),
            "mcp",
            "export",
            "--serve",
            "local/devops-toolkit",
        ])
        .ok();
    assert_eq!(
        run.json()["mcpServers"]["agents"]["env"],
        json!({"CLEVERAGENTS_CONFIG": "[SANDBOX]/home/.cleveragents/config.toml",
               "CLEVERAGENTS_DATABASE_URL": "sqlite://[SANDBOX]/registry.db"})
    );
    let out = sb.path(".vscode/mcp.json");
    std::fs::create_dir_all(sb.path(".vscode")).unwrap();
    let run = sb
        .run(&[
            "mcp",
            "export",
            "--client",
            "vscode",
            "-o",
            out.to_str().unwrap(),
        ])
        .ok();
    assert_eq!(
        run.stdout,
        "wrote 2 server(s) to [SANDBOX]/.vscode/mcp.json\n"
    );
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(written["servers"]["github"]["env"]["TOKEN"], "ghp_literal");
    assert_eq!(written["servers"]["github"]["type"], "stdio");
    // The file round-trips through `mcp import` into a fresh config.
    let other = Sandbox::new();
    let run = other
        .run(&[
            "mcp",
            "import",
            out.to_str().unwrap(),
            "--yes",
            "--format",
            "json",
        ])
        .ok();
    assert_eq!(run.json()["added"], json!(["github", "sentry"]));
}

#[test]
fn a_slow_mcp_start_shows_a_spinner_on_a_terminal_only() {
    let sb = Sandbox::new();
    sb.write(
        "home/.cleveragents/config.toml",
        "[mcp.servers.slow]\ncommand = \"sh\"\nargs = [\"-c\", \"sleep 1; exit 3\"]\n",
    );
    // Piped: no spinner, just the failure.
    let run = sb.run(&["mcp", "refresh", "slow"]).fails(1);
    assert!(
        !run.stderr.contains("querying MCP servers"),
        "{}",
        run.stderr
    );
    // On a terminal (`script` gives the command a pseudo-terminal).
    let Some(script) =
        crate::support::script_program("a_slow_mcp_start_shows_a_spinner_on_a_terminal_only")
    else {
        return;
    };
    let line = format!("{} mcp refresh slow", env!("CARGO_BIN_EXE_agents"));
    let out = sb
        .command(script)
        .args(["-qec", &line, "/dev/null"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("querying MCP servers…"), "{text}");
}

#[test]
fn a_terminal_of_unknown_width_gets_whole_cells() {
    let sb = Sandbox::new();
    sb.init_db();
    let Some(script) =
        crate::support::script_program("a_terminal_of_unknown_width_gets_whole_cells")
    else {
        return;
    };
    let agents = env!("CARGO_BIN_EXE_agents");
    // `script`'s pseudo-terminal has no size (0 columns) unless told one.
    for (setup, whole) in [("", true), ("stty cols 40; ", false)] {
        let line = format!("{setup}{agents} tool list --source builtin");
        let out = sb
            .command(&script)
            .args(["-qec", &line, "/dev/null"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("┆"), "not a table: {text}");
        assert_eq!(
            text.contains("builtin/write_file"),
            whole,
            "{setup:?}: {text}"
        );
    }
}

#[test]
fn yaml_works_wherever_json_does_and_says_the_same() {
    let sb = Sandbox::new();
    let examples = crate::support::examples();
    sb.run(&[
        "tool",
        "add",
        examples.join("tools/deploy.yaml").to_str().unwrap(),
    ])
    .ok();
    for file in ["code-tools", "git-tools"] {
        let path = examples.join(format!("skills/{file}.yaml"));
        sb.run(&["skill", "add", path.to_str().unwrap()]).ok();
    }
    let plan = sb.write("plan.yaml", "skills: [local/git-tools]\n");
    let commands: Vec<Vec<&str>> = vec![
        vec!["skill", "list"],
        vec!["skill", "tools", "local/git-tools"],
        vec!["skill", "validate", "local/git-tools"],
        vec!["skill", "graph", "local/git-tools"],
        vec!["tool", "list", "--source", "custom"],
        vec!["mcp", "list"],
        vec!["config", "show"],
        vec!["db", "status"],
        vec!["plan", "validate", plan.to_str().unwrap()],
    ];
    for command in commands {
        let mut json_args = command.clone();
        json_args.extend(["--format", "json"]);
        let mut yaml_args = command.clone();
        yaml_args.extend(["--format", "yaml"]);
        // `[SANDBOX]` (the test's path placeholder) would read as a YAML list.
        let plain = |text: String| text.replace("[SANDBOX]", "SANDBOX");
        let json: serde_json::Value =
            serde_json::from_str(&plain(sb.run(&json_args).ok().stdout)).unwrap();
        let yaml = plain(sb.run(&yaml_args).ok().stdout);
        let parsed: serde_json::Value = yaml_serde::from_str(&yaml)
            .unwrap_or_else(|e| panic!("{command:?}: not YAML ({e}):\n{yaml}"));
        assert_eq!(parsed, json, "{command:?}");
    }
}

#[test]
fn piped_tables_are_tab_separated_and_color_is_chosen_by_flag() {
    let sb = Sandbox::new();
    sb.init_db();
    let run = sb.run(&["tool", "list", "--source", "builtin"]).ok();
    let mut lines = run.stdout.lines();
    assert_eq!(lines.next(), Some("NAME\tSOURCE\tDESCRIPTION"));
    assert!(lines.all(|l| l.split('\t').count() == 3), "{}", run.stdout);
    // Log colour: never into a pipe by default, on request with --color always.
    let logs = |extra: &[&str]| {
        let mut args = vec!["skill", "list"];
        args.extend(extra);
        let out = sb
            .cmd()
            .env("CLEVERAGENTS_LOG", "debug")
            .env_remove("NO_COLOR")
            .args(&args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    assert!(!logs(&[]).contains('\u{1b}'));
    assert!(!logs(&["--color", "never"]).contains('\u{1b}'));
    let coloured = logs(&["--color", "always"]);
    assert!(coloured.contains("\u{1b}["), "{coloured}");
}

/// A port nothing listens on: a connection to it is refused at once.
fn refused_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_failing_http_refresh_prints_one_clean_error_and_json_lines_under_json() {
    let sb = Sandbox::new();
    let port = refused_port();
    sb.write(
        "home/.cleveragents/config.toml",
        &format!("[mcp.servers.web]\nurl = \"http://127.0.0.1:{port}/mcp\"\n"),
    );
    let run = sb.run(&["mcp", "refresh", "web"]).fails(1);
    let all = format!("{}{}", run.stdout, run.stderr);
    assert!(!all.contains('\u{1b}'), "{all}");
    assert!(
        !all.contains("ERROR"),
        "a dependency's log line leaked: {all}"
    );
    assert!(!all.contains("reqwest::Error"), "{all}");
    let run = sb
        .run(&["mcp", "refresh", "web", "--format", "json"])
        .fails(1);
    for line in run.stderr.lines() {
        serde_json::from_str::<serde_json::Value>(line)
            .unwrap_or_else(|e| panic!("stderr line is not JSON ({e}): {line}"));
    }
    serde_json::from_str::<serde_json::Value>(&run.stdout).unwrap();
}

#[test]
fn log_lines_of_dependencies_are_redacted_at_every_verbosity() {
    let sb = Sandbox::new();
    let port = refused_port();
    sb.write(
        "home/.cleveragents/config.toml",
        &format!("[mcp.servers.web]\nurl = \"http://u:pw-5ecret@127.0.0.1:{port}/mcp?token=tok-5ecret\"\n"),
    );
    for args in [
        &["-v", "mcp", "refresh", "web"][..],
        &["-vv", "mcp", "refresh", "web"],
        &["-vv", "mcp", "refresh", "web", "--format", "json"],
        // Colour codes must not come between a field's name and its value.
        &["-vv", "--color", "always", "mcp", "refresh", "web"],
    ] {
        let run = sb.run(args).fails(1);
        // rmcp logs the failed connection's `reqwest::Error`, URL and all.
        assert!(run.stderr.contains("127.0.0.1"), "{args:?}: {}", run.stderr);
        assert!(!run.stderr.contains("5ecret"), "{args:?}: {}", run.stderr);
        if args.contains(&"json") {
            for line in run.stderr.lines() {
                serde_json::from_str::<serde_json::Value>(line)
                    .unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            }
        }
    }
}

/// A server name the config would refuse skips that server with the
/// reason, like any other entry `mcp import` cannot take; it used to fail
/// the whole import with a line of the generated text as its place.
#[test]
fn mcp_import_skips_a_server_with_a_name_the_config_refuses() {
    let sb = Sandbox::new();
    let file = sb.write(
        "client.json",
        &json!({"mcpServers": {
            "weird name!": {"command": "x"},
            "fine": {"command": "y"},
        }})
        .to_string(),
    );
    let run = sb
        .run(&["mcp", "import", file.to_str().unwrap(), "--yes"])
        .ok();
    assert!(
        run.stdout.contains("added mcp server `fine`"),
        "{}",
        run.stdout
    );
    let all = format!("{}{}", run.stdout, run.stderr);
    assert!(
        all.contains("skipped mcp server `weird name!`: server name `weird name!` must be"),
        "{all}"
    );
    let config = std::fs::read_to_string(sb.home().join(".cleveragents/config.toml")).unwrap();
    assert!(
        config.contains("[mcp.servers.fine]") && !config.contains("weird"),
        "{config}"
    );
}

#[test]
fn mcp_import_reports_skipped_servers_briefly() {
    let sb = Sandbox::new();
    let mut servers = serde_json::Map::new();
    for i in 0..30 {
        servers.insert(format!("bad{i}"), json!({"command": "x", "env": {"N": 5}}));
    }
    let long_key = "K".repeat(100_000);
    servers.insert("long".into(), json!({"command": "x", "env": {long_key: 5}}));
    let file = sb.write("client.json", &json!({"mcpServers": servers}).to_string());
    let run = sb
        .run(&["mcp", "import", file.to_str().unwrap(), "--dry-run"])
        .ok();
    let skipped: Vec<&str> = run
        .stdout
        .lines()
        .chain(run.stderr.lines())
        .filter(|line| line.contains("skipped"))
        .collect();
    assert_eq!(skipped.len(), 21, "{skipped:?}");
    assert_eq!(
        skipped[20],
        "… and 11 more skipped (`--format json` lists them all)"
    );
    assert!(
        run.stdout.len() + run.stderr.len() < 8_192,
        "{}",
        run.stderr.len()
    );
    let json = sb
        .run(&[
            "mcp",
            "import",
            file.to_str().unwrap(),
            "--dry-run",
            "--format",
            "json",
        ])
        .ok()
        .json();
    let skipped = json["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 31);
    assert!(skipped[30]["reason"].as_str().unwrap().len() < 2_048);
}

/// Found by an audit of the release binary: a secret header given to
/// `mcp-remote` and a secret environment entry given to docker in `args`
/// were printed whole by `mcp import --dry-run` (text and JSON) and `mcp
/// export`; a harmless `NAME=VALUE` stays readable.
#[test]
fn mcp_import_and_export_mask_secrets_given_in_args() {
    let sb = Sandbox::new();
    let file = sb.write(
        "client.json",
        &json!({"mcpServers": {
            "remote": {"command": "npx", "args": ["-y", "mcp-remote", "https://h.example/mcp",
                       "--header", "Authorization: Bearer sk-LEAK1"]},
            "gh": {"command": "docker", "args": ["run", "-i", "--rm", "-e",
                   "GITHUB_PERSONAL_ACCESS_TOKEN=ghp_LEAK2", "-e", "LOG_LEVEL=debug", "img"]},
        }})
        .to_string(),
    );
    let dry = sb
        .run(&["mcp", "import", file.to_str().unwrap(), "--dry-run"])
        .ok();
    let json = sb
        .run(&[
            "mcp",
            "import",
            file.to_str().unwrap(),
            "--dry-run",
            "--format",
            "json",
        ])
        .ok();
    for shown in [&dry.stdout, &json.json()["config"].to_string()] {
        assert!(!shown.contains("LEAK"), "{shown}");
        assert!(shown.contains("Authorization: Bearer ***"), "{shown}");
        assert!(
            shown.contains("GITHUB_PERSONAL_ACCESS_TOKEN=***"),
            "{shown}"
        );
        assert!(shown.contains("LOG_LEVEL=debug"), "{shown}");
    }
    sb.run(&["mcp", "import", file.to_str().unwrap(), "--yes"])
        .ok();
    let config = std::fs::read_to_string(sb.home().join(".cleveragents/config.toml")).unwrap();
    assert!(
        config.contains("sk-LEAK1") && config.contains("ghp_LEAK2"),
        "{config}"
    );
    let export = sb.run(&["mcp", "export"]).ok();
    assert!(!export.stdout.contains("LEAK"), "{}", export.stdout);
    assert_eq!(
        export.json()["mcpServers"]["gh"]["args"],
        json!([
            "run",
            "-i",
            "--rm",
            "-e",
            "GITHUB_PERSONAL_ACCESS_TOKEN=***",
            "-e",
            "LOG_LEVEL=debug",
            "img"
        ])
    );
    assert_eq!(
        export.json()["mcpServers"]["remote"]["args"][4],
        "Authorization: Bearer ***"
    );
}

/// Found by an audit: VS Code's `.vscode/mcp.json` is JSONC, and its
/// comments and trailing commas were refused ("not JSON: key must be a
/// string"); an error that remains still names the file's line and column.
#[test]
fn mcp_import_reads_comments_and_trailing_commas() {
    let sb = Sandbox::new();
    let vscode = sb.write(
        ".vscode/mcp.json",
        r#"{
  // Servers for this workspace.
  "servers": {
    /* The fetch server,
       from PyPI. */
    "fetch": {
      "type": "stdio",
      "command": "uvx", // via uv
      "args": ["mcp-server-fetch",],
    },
  },
}
"#,
    );
    let run = sb
        .run(&["mcp", "import", vscode.to_str().unwrap(), "--yes"])
        .ok();
    assert!(
        run.stdout.contains("added mcp server `fetch`"),
        "{}",
        run.stdout
    );
    let config = std::fs::read_to_string(sb.home().join(".cleveragents/config.toml")).unwrap();
    assert!(config.contains("args = [\"mcp-server-fetch\"]"), "{config}");
    let broken = sb.write(
        "broken.json",
        "{\n  // one\n  \"servers\": {\n    /* two\n    */ \"a\": {\"command\": \"x\"}\n    \"b\": {}\n  }\n}\n",
    );
    let run = sb
        .run(&["mcp", "import", broken.to_str().unwrap(), "--yes"])
        .fails(1);
    assert_eq!(
        run.stderr,
        "error: cannot import `[SANDBOX]/broken.json`: not JSON: expected `,` or `}` at line 6 column 5\n"
    );
}

/// Found by an audit: one server that loading the config would refuse (a
/// `${VAR}` in `url`, `type: websocket`, an `ftp://` URL) failed the whole
/// import with an error against a line of `config.toml` that did not exist;
/// and `${…}` where `agents` expands nothing (`command`, `args`, `url`),
/// VS Code's predefined variables, and Claude Code's `${VAR:-default}` were
/// imported as servers that failed at every start, or skipped for the wrong
/// reason. Each is now that server's skip reason, or (a default in `env`)
/// imported as `agents` expands it.
#[test]
fn mcp_import_skips_each_server_it_cannot_take_with_the_reason() {
    let sb = Sandbox::new();
    let claude = sb.write(
        ".mcp.json",
        &json!({"mcpServers": {
            "api": {"type": "http", "url": "${API_URL}/mcp"},
            "ws": {"type": "websocket", "url": "wss://h.example/mcp"},
            "ftp": {"type": "http", "url": "ftp://h.example/mcp"},
            "fx": {"command": "${FXBIN}", "args": ["serve"]},
            "mode": {"command": "srv", "args": ["--mode", "${AB:-fast}"]},
            "defaults": {"command": "srv", "env": {"LEVEL": "${AB:-x}", "DIR": "${A_B:-/tmp}"}},
            "fine": {"command": "srv"},
        }})
        .to_string(),
    );
    let run = sb
        .run(&[
            "mcp",
            "import",
            claude.to_str().unwrap(),
            "--yes",
            "--format",
            "json",
        ])
        .ok();
    assert_eq!(run.json()["added"], json!(["defaults", "fine"]));
    assert_eq!(
        run.json()["skipped"],
        json!([
            {"server": "api", "reason": "`url` uses `${API_URL}`, which agents does not expand in `url`; define it by hand"},
            {"server": "ws", "reason": "`type` `websocket` is not supported (only stdio and streamable HTTP)"},
            {"server": "ftp", "reason": "`url`: expected an `http://` or `https://` URL, got `ftp://h.example/mcp`"},
            {"server": "fx", "reason": "`command` uses `${FXBIN}`, which agents does not expand in `command`; define it by hand"},
            {"server": "mode", "reason": "`args[1]` uses `${AB:-fast}`, which agents does not expand in `args`; define it by hand"},
        ])
    );
    let config = std::fs::read_to_string(sb.home().join(".cleveragents/config.toml")).unwrap();
    assert!(
        config.contains(r#"env = { LEVEL = "${AB:-x}", DIR = "${A_B:-/tmp}" }"#),
        "{config}"
    );
    let vscode = sb.write(
        ".vscode/mcp.json",
        &json!({"servers": {
            "mode": {"type": "stdio", "command": "srv", "args": ["--mode", "${env:MODE}"]},
            "db": {"type": "stdio", "command": "srv", "env": {"DB": "${workspaceFolder}/db.sqlite"}},
            "home": {"type": "stdio", "command": "srv", "args": ["${userHome}/x"]},
        }})
        .to_string(),
    );
    let run = sb
        .run(&["mcp", "import", vscode.to_str().unwrap(), "--yes"])
        .ok();
    assert_eq!(
        run.stdout,
        "skipped mcp server `mode`: `args[1]` uses `${env:MODE}`, which agents does not expand in \
         `args`; define it by hand\n\
         skipped mcp server `db`: `env.DB` uses `${workspaceFolder}`, a VS Code predefined variable \
         agents does not know; define it by hand\n\
         skipped mcp server `home`: `args[0]` uses `${userHome}`, a VS Code predefined variable \
         agents does not know; define it by hand\n\
         nothing added; [SANDBOX]/home/.cleveragents/config.toml unchanged\n"
    );
}

/// Found by an audit: a valid config whose servers are an inline table
/// failed every import ("invalid `mcp.servers` from default"); the server
/// is now added to that inline table.
#[test]
fn mcp_import_adds_to_an_inline_table_of_servers() {
    let sb = Sandbox::new();
    let config = sb.write(
        "home/.cleveragents/config.toml",
        "[mcp]\nservers = { a = { command = \"x\" } }\n",
    );
    let client = sb.write(
        "client.json",
        &json!({"mcpServers": {"b": {"command": "y", "args": ["--token", "tok-SECRET"]}}})
            .to_string(),
    );
    let run = sb
        .run(&["mcp", "import", client.to_str().unwrap(), "--dry-run"])
        .ok();
    assert_eq!(
        run.stdout,
        "[mcp]\nservers = { a = { command = \"x\" }, b = { command = \"y\", args = [\"--token\", \"***\"] } }\n"
    );
    sb.run(&["mcp", "import", client.to_str().unwrap(), "--yes"])
        .ok();
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        "[mcp]\nservers = { a = { command = \"x\" }, b = { command = \"y\", args = [\"--token\", \"tok-SECRET\"] } }\n"
    );
    let list = sb.run(&["mcp", "list", "--format", "json"]).ok().json();
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["server"].as_str())
        .collect();
    assert_eq!(names, ["a", "b"]);
}

/// Found by an audit: Claude Code's `~/.claude.json` keeps per-project
/// servers under `projects.<path>.mcpServers`, which were dropped without
/// a word; each is now reported (the config has no per-project servers).
#[test]
fn mcp_import_reports_claude_code_project_servers() {
    let sb = Sandbox::new();
    let file = sb.write(
        ".claude.json",
        &json!({
            "numStartups": 12,
            "mcpServers": {"everywhere": {"command": "e"}},
            "projects": {"/home/me/api": {"mcpServers": {"db": {"command": "d"}}}},
        })
        .to_string(),
    );
    let run = sb
        .run(&["mcp", "import", file.to_str().unwrap(), "--yes"])
        .ok();
    assert_eq!(
        run.stdout,
        "mcp server `everywhere`:\n  runs: e\n\
         added mcp server `everywhere`\n\
         skipped mcp server `db`: a server of the project `/home/me/api` (`projects` in Claude \
         Code's file): `config.toml` has no per-project servers; define it by hand to have it \
         everywhere\n\
         wrote 1 server(s) to [SANDBOX]/home/.cleveragents/config.toml\n"
    );
}

/// SIGTERM stops a command that is computing (it never reaches an `await`
/// where it could be dropped): within a few seconds, with the same error as
/// a command stopped while it waits. Bounded: the child is SIGKILLed after
/// 120 s, long after the signal should have taken effect.
#[test]
fn sigterm_stops_a_command_busy_computing() {
    let sb = Sandbox::new();
    // A 10,000-deep chain whose every skill names a tool of its own: the
    // JSON of its tool set carries each entry's include path whole, as the
    // specification's `include_path` is a list (quadratic in the depth by
    // definition), so it computes for far longer than the test waits.
    let mut text = String::new();
    for i in 0..10_000 {
        text.push_str(&format!("---\nname: k/s{i}\ntools: [custom/t{i}]\n"));
        if i < 9_999 {
            text.push_str(&format!(
                "includes:\n  - skill: k/s{}\n    overrides: {{lvl: {i}}}\n",
                i + 1
            ));
        }
    }
    let file = sb.write("chain.yaml", &text);
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    let mut child = sb
        .cmd()
        .args(["skill", "tools", "k/s0", "--format", "json"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let waited = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if waited.elapsed() > std::time::Duration::from_secs(120) {
            let _ = child.kill();
            panic!("SIGTERM did not stop the command");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("terminated (SIGTERM)"), "{stderr}");
}

/// `scripts/quickstart.sh` runs the `agents` cargo says it built, wherever
/// that is (it ran a hard-coded `target/debug/agents`, and failed with exit
/// 127 after the whole build when `CARGO_TARGET_DIR` was set), and ends
/// with the next step to try. The build is cargo's JSON message of a fresh
/// artifact in another target directory (a real build takes minutes); the
/// rest of the script runs for real, on the sandbox's home.
#[test]
fn quickstart_runs_what_cargo_built_and_ends_with_the_next_step() {
    let sb = Sandbox::new();
    let target = sb.path("elsewhere/target/debug");
    std::fs::create_dir_all(&target).unwrap();
    let agents = target.join("agents");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_agents"), &agents).unwrap();
    let library = json!({"reason": "compiler-artifact", "target": {"kind": ["lib"], "name": "agents_core"}, "executable": null, "fresh": true});
    let binary = json!({"reason": "compiler-artifact", "target": {"kind": ["bin"], "crate_types": ["bin"], "name": "agents", "src_path": "main.rs"}, "filenames": [agents], "executable": agents, "fresh": true});
    let done = json!({"reason": "build-finished", "success": true});
    let args = sb.path("cargo-args");
    sb.write(
        "bin/cargo",
        &format!(
            "#!/bin/sh\necho \"$*\" > '{}'\nprintf '%s\\n' '{library}' '{binary}' '{done}'\n",
            args.display()
        ),
    );
    {
        use std::os::unix::fs::PermissionsExt;
        let cargo = sb.path("bin/cargo");
        std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!(
        "{}:{}",
        sb.path("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/quickstart.sh");
    let out = sb
        .command("bash")
        .arg(&script)
        .env("PATH", path)
        .env("CARGO_TARGET_DIR", sb.path("elsewhere/target"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert_eq!(
        std::fs::read_to_string(&args).unwrap(),
        "build --locked -p agents-cli --bin agents --message-format=json-render-diagnostics\n"
    );
    let tools: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(tools["skill"], "local/devops-toolkit");
    assert!(
        stderr.ends_with(&format!(
            "\nNext, ask why each of these tools is there:\n  {} skill tools local/devops-toolkit --explain\nthen serve them to Claude Desktop, Claude Code or VS Code: docs/guide/agents.md\n",
            agents.display()
        )),
        "{stderr}"
    );
    assert!(sb.home().join(".cleveragents/agent_skills").is_dir());
}

/// `agents --help` says all `mcp` does; a command's `--help` lists its own
/// options first and the global ones apart, and `--format` there names only
/// the formats that command writes.
#[test]
fn help_says_what_each_command_does_and_takes() {
    let sb = Sandbox::new();
    let top = sb.run(&["--help"]).ok().stdout;
    let mcp = top
        .lines()
        .find(|line| line.trim_start().starts_with("mcp "))
        .unwrap_or_else(|| panic!("{top}"));
    for word in ["serve", "import", "export", "trust", "cached"] {
        assert!(mcp.contains(word), "{word}: {mcp}");
    }
    let format_line = |help: &str| -> String {
        help.lines()
            .find(|line| line.trim_start().starts_with("--format"))
            .unwrap_or_else(|| panic!("{help}"))
            .to_owned()
    };
    let serve = sb.run(&["mcp", "serve", "--help"]).ok().stdout;
    let own = serve
        .find("\nOptions:\n")
        .unwrap_or_else(|| panic!("{serve}"));
    let global = serve
        .find("\nGlobal options:\n")
        .unwrap_or_else(|| panic!("{serve}"));
    assert!(own < global, "{serve}");
    // Its own options under its heading, the global ones under theirs.
    assert!(serve.find("--dry-run").unwrap() < global, "{serve}");
    assert!(serve.find("--database-url").unwrap() > global, "{serve}");
    assert!(
        format_line(&serve).ends_with("Output format: table, json"),
        "{serve}"
    );
    // Shorter than the options of every command and every format: under 40 lines.
    assert!(serve.lines().count() < 40, "{serve}");
    let tools = sb.run(&["skill", "tools", "--help"]).ok().stdout;
    assert!(
        format_line(&tools).ends_with(
            "Output format: table, json, openai, anthropic, mcp; with `--explain`: table, json; \
             with `--budget`: table, json"
        ),
        "{tools}"
    );
    let graph = sb.run(&["skill", "graph", "--help"]).ok().stdout;
    assert!(
        format_line(&graph).ends_with("Output format: dot, mermaid, json"),
        "{graph}"
    );
    // The format still parses wherever it is given.
    sb.init_db();
    sb.run(&["--format", "json", "skill", "list"]).ok();
    sb.run(&["skill", "list", "--format", "json"]).ok();
    let run = sb.run(&["skill", "list", "--format", "openai"]).fails(2);
    assert!(
        run.stderr.contains("only for `agents skill tools`"),
        "{}",
        run.stderr
    );
}
