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
