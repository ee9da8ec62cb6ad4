use serde_json::json;

use crate::support::{Sandbox, examples};

#[test]
fn builtin_tools_are_listed_and_protected() {
    let sb = Sandbox::new();
    sb.init_db();
    let list = sb
        .run(&["tool", "list", "--source", "builtin", "--format", "json"])
        .ok()
        .json();
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"builtin/read_file") && names.contains(&"builtin/shell"),
        "{names:?}"
    );
    assert!(
        list.as_array()
            .unwrap()
            .iter()
            .all(|t| t["source"] == "builtin")
    );
    let run = sb.run(&["tool", "remove", "builtin/read_file"]).fails(1);
    assert_eq!(
        run.stderr,
        "error: tool `builtin/read_file` is builtin and cannot be changed or removed\n"
    );
    let table = sb.run(&["tool", "list", "--source", "builtin"]).ok().stdout;
    insta::assert_snapshot!("builtin_tools_table", table);
}

#[test]
fn custom_tools_add_get_list_remove() {
    let sb = Sandbox::new();
    let file = examples().join("tools/deploy.yaml");
    let run = sb.run(&["tool", "add", file.to_str().unwrap()]).ok();
    assert!(
        run.stdout.starts_with("added 1 tool from"),
        "{}",
        run.stdout
    );
    let tool = sb
        .run(&["tool", "get", "custom/deploy", "--format", "json"])
        .ok()
        .json();
    assert_eq!(tool["source"], "custom");
    assert_eq!(tool["writes"], true);
    assert_eq!(
        tool["input_schema"]["required"],
        json!(["environment", "version"])
    );
    assert!(
        tool["source_metadata"]["file"]
            .as_str()
            .unwrap()
            .ends_with("deploy.yaml")
    );
    let run = sb.run(&["tool", "add", file.to_str().unwrap()]).fails(1);
    assert!(
        run.stderr
            .contains("tool `custom/deploy` is already registered (`--replace` overwrites it)"),
        "{}",
        run.stderr
    );
    sb.run(&["tool", "add", "--replace", file.to_str().unwrap()])
        .ok();
    let list = sb
        .run(&["tool", "list", "--source", "custom", "--format", "json"])
        .ok()
        .json();
    assert_eq!(list.as_array().unwrap().len(), 1);
    // Skills that still name the tool are listed, not refused: an unknown
    // tool ref is a warning.
    let skills = sb.write(
        "users.yaml",
        "name: local/ships
tools: [custom/deploy]
---
name: local/wraps
includes: [local/ships]
",
    );
    sb.run(&["skill", "add", skills.to_str().unwrap()]).ok();
    let run = sb
        .run(&["tool", "remove", "custom/deploy", "--format", "json"])
        .ok();
    assert_eq!(
        run.json(),
        json!({"removed": "custom/deploy", "still_named_by": ["local/ships"]})
    );
    let run = sb.run(&["skill", "tools", "local/wraps"]).ok();
    assert!(run.stderr.contains("custom/deploy"), "{}", run.stderr);
    sb.run(&["tool", "add", file.to_str().unwrap()]).ok();
    let run = sb.run(&["tool", "remove", "custom/deploy"]).ok();
    assert_eq!(
        run.stdout,
        "removed custom/deploy; these skills still name it and now warn that it is unknown: `local/ships`\n"
    );
    sb.run(&["skill", "remove", "local/wraps"]).ok();
    sb.run(&["skill", "remove", "local/ships"]).ok();
    sb.run(&["tool", "add", file.to_str().unwrap()]).ok();
    let run = sb.run(&["tool", "remove", "custom/deploy"]).ok();
    assert_eq!(run.stdout, "removed custom/deploy\n");
    let run = sb.run(&["tool", "get", "custom/deploy"]).fails(1);
    assert_eq!(
        run.stderr,
        "error: Tool 'custom/deploy' is not registered\n"
    );
    sb.run(&["tool", "remove", "custom/deploy"]).fails(1);
    // The `agent_skill:{path}` name `skill tools` shows for an
    // `agent_sources` entry: the folder's own spec.
    let folder = examples().join("agent_skills/pdf-processing");
    let got = sb
        .run(&[
            "tool",
            "get",
            &format!("agent_skill:{}", folder.display()),
            "--format",
            "json",
        ])
        .ok()
        .json();
    assert_eq!(got["name"], "agent_skills/pdf-processing");
    let run = sb
        .run(&["tool", "get", "agent_skill:/no/such/folder"])
        .fails(1);
    assert!(
        run.stderr.contains("cannot resolve folder"),
        "{}",
        run.stderr
    );
    // A close name is suggested.
    let run = sb.run(&["tool", "get", "builtin/read_fil"]).fails(1);
    assert_eq!(
        run.stderr,
        "error: Tool 'builtin/read_fil' is not registered (did you mean 'builtin/read_file'?)\n"
    );
}

#[test]
fn invalid_tool_definitions_are_refused_whole() {
    let sb = Sandbox::new();
    let file = sb.write(
        "tools.yaml",
        "name: custom/ok\n---\nname: custom/bad\ninput_schema: {type: objekt}\n",
    );
    let run = sb.run(&["tool", "add", file.to_str().unwrap()]).fails(1);
    assert!(
        run.stderr
            .contains("`custom/bad`: input_schema: not a valid JSON Schema"),
        "{}",
        run.stderr
    );
    let list = sb
        .run(&["tool", "list", "--source", "custom", "--format", "json"])
        .ok()
        .json();
    assert_eq!(list, json!([]));
    let file = sb.write("builtin.yaml", "name: builtin/read_file\n");
    let run = sb.run(&["tool", "add", file.to_str().unwrap()]).fails(1);
    assert!(run.stderr.contains("is builtin"), "{}", run.stderr);
}

#[test]
fn registered_custom_tools_resolve_in_skills() {
    let sb = Sandbox::new();
    sb.run(&[
        "tool",
        "add",
        examples().join("tools/deploy.yaml").to_str().unwrap(),
    ])
    .ok();
    let file = sb.write(
        "s.yaml",
        "name: l/ship\ntools: [custom/deploy, builtin/shell]\n",
    );
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    let run = sb
        .run(&["skill", "tools", "l/ship", "--format", "json"])
        .ok();
    let out = run.json();
    assert_eq!(out["tools"][0]["source"], "custom");
    assert_eq!(
        out["tools"][0]["description"],
        "Deploy a build to an environment"
    );
    assert_eq!(out["tools"][1]["source"], "builtin");
    assert!(!run.stderr.contains("is not registered"), "{}", run.stderr);
}
