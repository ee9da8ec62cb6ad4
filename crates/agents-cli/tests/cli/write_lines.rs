//! The write-time check's findings point at the line of the file they are
//! about (`FILE:LINE:COLUMN`, the line and a caret), as parse errors do: as
//! warnings, and as the errors of `--strict`.

use crate::support::Sandbox;

/// `skill add FILE` (warnings) and, in a fresh registry, `skill add
/// --strict FILE` (the refusal): both stderrs.
fn add_both_ways(name: &str, text: &str) -> (String, String) {
    let sb = Sandbox::new();
    let file = sb.write(name, text);
    let warned = sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    let sb = Sandbox::new();
    let file = sb.write(name, text);
    let refused = sb
        .run(&["skill", "add", "--strict", file.to_str().unwrap()])
        .fails(1);
    assert_eq!(sb.sql_count("skills"), 0);
    (warned.stderr, refused.stderr)
}

#[test]
fn an_unknown_tool_points_at_its_entry() {
    let (warned, refused) = add_both_ways(
        "typo.yaml",
        "name: local/typo\ndescription: one typo\ntools:\n  - builtin/read_file\n  - builtin/raed_file\n",
    );
    insta::assert_snapshot!("unknown_tool_warning", warned);
    insta::assert_snapshot!("unknown_tool_strict", refused);
}

#[test]
fn a_missing_include_points_at_the_include() {
    let (warned, refused) = add_both_ways(
        "missing.yaml",
        "name: local/needs\nincludes:\n  - skill: local/absent\n    overrides: {timeout_s: 5}\n",
    );
    insta::assert_snapshot!("missing_include_warning", warned);
    insta::assert_snapshot!("missing_include_strict", refused);
}

#[test]
fn a_cycle_points_at_the_include_of_its_first_skill() {
    let (warned, refused) = add_both_ways(
        "loop.yaml",
        "name: local/loop-a\nincludes: [local/loop-b]\n---\nname: local/loop-b\nincludes:\n  - local/loop-a\n",
    );
    insta::assert_snapshot!("cycle_warning", warned);
    insta::assert_snapshot!("cycle_strict", refused);
}

#[test]
fn override_problems_point_at_the_key() {
    // Matches nothing, and a capability flag of the wrong type.
    let (warned, refused) = add_both_ways(
        "overrides.yaml",
        "name: local/over\ntools: [builtin/grep]\noverrides:\n  builtin/grep:\n    read_only: \"yes\"\n  builtin/shell: {writes: false}\n",
    );
    insta::assert_snapshot!("override_warning", warned);
    insta::assert_snapshot!("override_strict", refused);
}

/// A locked field (`name`, `source_skill`, `is_inline`) in an override is
/// refused when the file is read, with or without `--strict`: at its line.
#[test]
fn a_locked_override_is_refused_at_its_line() {
    let text = "name: local/locked\ntools: [builtin/grep]\nincludes:\n  - skill: local/other\n    overrides:\n      name: renamed\n";
    for strict in [false, true] {
        let sb = Sandbox::new();
        let file = sb.write("locked.yaml", text);
        let mut args = vec!["skill", "add", file.to_str().unwrap()];
        if strict {
            args.push("--strict");
        }
        let run = sb.run(&args).fails(1);
        insta::assert_snapshot!("locked_override", run.stderr);
        assert_eq!(sb.sql_count("skills"), 0);
    }
}

/// Each finding points into its own document of a stream, several in one
/// document each at its own line; an MCP reference and an agent source at
/// their entries.
#[test]
fn findings_in_a_later_document_point_into_it() {
    let (warned, refused) = add_both_ways(
        "stream.yaml",
        "name: local/first\ntools: [builtin/grep]\n---\n# the second\nname: local/second\ntools:\n  - builtin/grep\n  - custom/nothing\nagent_sources:\n  - path: ./no-such-folder\nmcp_sources:\n  - server: unconfigured\n",
    );
    insta::assert_snapshot!("second_document_warning", warned);
    insta::assert_snapshot!("second_document_strict", refused);
}

/// A problem of a skill the file does not define (registered before, and
/// reached through an include) names that skill, with no line; the include
/// that reaches it is pointed at under `--strict`.
#[test]
fn a_finding_about_a_skill_elsewhere_has_no_line() {
    let sb = Sandbox::new();
    let old = sb.write("old.yaml", "name: local/old\ntools: [custom/gone]\n");
    sb.run(&["skill", "add", old.to_str().unwrap()]).ok();
    let new = sb.write(
        "new.yaml",
        "name: local/new\ntools: [builtin/grep]\nincludes: [local/old]\n",
    );
    let run = sb.run(&["skill", "add", new.to_str().unwrap()]).ok();
    insta::assert_snapshot!("elsewhere_warning", run.stderr);

    // Across the files of one command: the problem is the defining file's,
    // at its line; the including file's `--strict` refusal points at its
    // include.
    let sb = Sandbox::new();
    let uses = sb.write(
        "uses.yaml",
        "name: local/uses\nincludes:\n  - local/defined\n",
    );
    let defines = sb.write(
        "defines.yaml",
        "name: local/defined\ntools: [custom/gone]\n",
    );
    let run = sb
        .run(&[
            "skill",
            "add",
            "--strict",
            uses.to_str().unwrap(),
            defines.to_str().unwrap(),
        ])
        .fails(1);
    insta::assert_snapshot!("elsewhere_strict", run.stderr);
}

/// `--format json` keeps each warning's one-line message and adds where it
/// is as fields; the result's `warnings` stay strings.
#[test]
fn json_warnings_carry_the_position_as_fields() {
    let sb = Sandbox::new();
    let file = sb.write(
        "typo.yaml",
        "name: local/typo\ntools:\n  - builtin/raed_file\n",
    );
    let run = sb
        .run(&["skill", "add", "--format", "json", file.to_str().unwrap()])
        .ok();
    let warning = &run.stderr_json()["warning"];
    assert_eq!(
        warning["message"],
        "[SANDBOX]/typo.yaml: Skill 'local/typo': Tool 'builtin/raed_file' is not registered (did you mean 'builtin/read_file'?)"
    );
    assert_eq!(warning["kind"], "unknown_tool");
    assert_eq!(warning["skill"], "local/typo");
    assert_eq!(warning["file"], "[SANDBOX]/typo.yaml");
    assert_eq!(
        (warning["line"].as_u64(), warning["column"].as_u64()),
        (Some(3), Some(5))
    );
    assert_eq!(
        run.json()[0]["warnings"][0],
        "Skill 'local/typo': Tool 'builtin/raed_file' is not registered (did you mean 'builtin/read_file'?)"
    );
}

/// `skill apply` shows its findings the same way.
#[test]
fn apply_points_at_lines_too() {
    let sb = Sandbox::new();
    let file = sb.write(
        "typo.yaml",
        "name: local/typo\ntools:\n  - builtin/raed_file\n",
    );
    let run = sb.run(&["skill", "apply", file.to_str().unwrap()]).ok();
    assert!(
        run.stderr
            .starts_with("warning: [SANDBOX]/typo.yaml:3:5: Skill 'local/typo'"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("3 |   - builtin/raed_file\n"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_secret_written_out_is_pointed_at_without_quoting_it() {
    // Block-style `args`, as `skill get --show-secrets` prints them: no
    // key on the secret's line says it is one.
    let text = "name: local/gh\nmcp_sources:\n  - server: gh\n    command: npx\n    args:\n      - --api-key\n      - sk-live-SECRET123\n";
    let (warned, refused) = add_both_ways("gh.yaml", text);
    for stderr in [&warned, &refused] {
        assert!(!stderr.contains("SECRET123"), "{stderr}");
        assert!(stderr.contains("gh.yaml:7:9"), "{stderr}");
        assert!(stderr.contains("7 |       - ***"), "{stderr}");
    }
    let sb = Sandbox::new();
    let file = sb.write("gh.yaml", text);
    let json = sb
        .run(&[
            "skill",
            "add",
            "--strict",
            "--format",
            "json",
            file.to_str().unwrap(),
        ])
        .fails(1);
    assert!(!json.stderr.contains("SECRET123"), "{}", json.stderr);
}

#[test]
fn several_findings_in_an_indented_document_point_at_their_lines() {
    let (warned, _) = add_both_ways(
        "indented.yaml",
        "---\n  name: local/ind\n  tools:\n    - builtin/raed_file\n    - builtin/wrte_file\n",
    );
    assert!(warned.contains("indented.yaml:4:7"), "{warned}");
    assert!(warned.contains("indented.yaml:5:7"), "{warned}");
}
