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
