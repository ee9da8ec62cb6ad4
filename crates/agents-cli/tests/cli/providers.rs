//! `skill tools --format openai` and `--format anthropic` checked against
//! the providers' published rules for tool definitions, encoded here on
//! their own (not taken from the code under test):
//!
//! - OpenAI, function calling (platform.openai.com/docs/guides/function-calling)
//!   and, for `"strict": true`, Structured Outputs' supported schemas
//!   (platform.openai.com/docs/guides/structured-outputs#supported-schemas):
//!   a function name of `a-z`, `A-Z`, `0-9`, `_` and `-`, at most 64; a
//!   description of at most 1024 characters; `parameters` an object schema
//!   with `properties`, without `oneOf`, `anyOf`, `allOf`, `enum`, `const` or
//!   `not` at its top level. Strict: every object sets `additionalProperties:
//!   false` and names every property in `required`; only the supported
//!   keywords (and string formats); the root is not `anyOf`; at most 10
//!   levels of nested objects, 5000 properties and 1000 enum values in all;
//!   `$ref` only within the schema.
//! - Anthropic, tool use (docs.anthropic.com/en/docs/build-with-claude/tool-use):
//!   `name` matching `^[a-zA-Z0-9_-]{1,64}$`, `description`, and
//!   `input_schema` a JSON Schema object with `"type": "object"`, without
//!   `oneOf`, `allOf` or `anyOf` at its top level.
//!
//! Tool names are unique within one array (a request with two of a name is
//! refused by both).

use std::collections::HashSet;

use serde_json::{Value, json};

use crate::support::{Run, Sandbox, add_examples, everything};

fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

const STRICT_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "definitions",
    "description",
    "title",
    "pattern",
    "format",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "maxItems",
];
const STRICT_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

#[derive(Default)]
struct Counts {
    properties: usize,
    enum_values: usize,
}

/// Strict mode's rules for one schema node, `depth` objects deep.
fn check_strict(node: &Value, depth: usize, at: &str, counts: &mut Counts, out: &mut Vec<String>) {
    let Some(fields) = node.as_object() else {
        out.push(format!("{at}: not a schema object"));
        return;
    };
    for key in fields.keys() {
        if !STRICT_KEYWORDS.contains(&key.as_str()) {
            out.push(format!("{at}: `{key}` is not supported in strict mode"));
        }
    }
    let object = fields.get("type") == Some(&json!("object"))
        || fields
            .get("type")
            .and_then(Value::as_array)
            .is_some_and(|types| types.contains(&json!("object")))
        || fields.contains_key("properties");
    if object {
        if depth > 10 {
            out.push(format!("{at}: objects nested deeper than 10"));
        }
        if fields.get("additionalProperties") != Some(&json!(false)) {
            out.push(format!("{at}: `additionalProperties` is not false"));
        }
        let properties: Vec<&String> = fields
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().collect())
            .unwrap_or_default();
        counts.properties += properties.len();
        let required: HashSet<&str> = fields
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let named: HashSet<&str> = properties.iter().map(|p| p.as_str()).collect();
        if required != named {
            out.push(format!("{at}: `required` is not every property"));
        }
    }
    if let Some(format) = fields.get("format")
        && !format.as_str().is_some_and(|f| STRICT_FORMATS.contains(&f))
    {
        out.push(format!(
            "{at}: format {format} is not supported in strict mode"
        ));
    }
    if let Some(reference) = fields.get("$ref")
        && !reference.as_str().is_some_and(|r| r.starts_with('#'))
    {
        out.push(format!("{at}: `$ref` {reference} leaves the schema"));
    }
    if let Some(values) = fields.get("enum").and_then(Value::as_array) {
        counts.enum_values += values.len();
    }
    for (name, property) in fields
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        check_strict(property, depth + 1, &format!("{at}.{name}"), counts, out);
    }
    if let Some(items) = fields.get("items") {
        check_strict(items, depth + 1, &format!("{at}[]"), counts, out);
    }
    for branch in fields
        .get("anyOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        check_strict(branch, depth, &format!("{at}|"), counts, out);
    }
    for key in ["$defs", "definitions"] {
        for (name, definition) in fields
            .get(key)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            check_strict(definition, depth, &format!("{at}#{name}"), counts, out);
        }
    }
}

/// Every rule an OpenAI `tools` array breaks, one line each.
fn openai_violations(tools: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut names = HashSet::new();
    for tool in tools.as_array().into_iter().flatten() {
        let function = &tool["function"];
        let name = function["name"].as_str().unwrap_or_default();
        if tool["type"] != "function" {
            out.push(format!("{name}: `type` is not `function`"));
        }
        if !valid_name(name) {
            out.push(format!("{name:?}: invalid function name"));
        }
        if !names.insert(name) {
            out.push(format!("{name}: name given twice"));
        }
        match function["description"].as_str() {
            Some(text) if text.chars().count() <= 1024 => {}
            _ => out.push(format!(
                "{name}: description missing or over 1024 characters"
            )),
        }
        let parameters = &function["parameters"];
        if parameters["type"] != "object" {
            out.push(format!("{name}: parameters are not an object schema"));
        }
        if !parameters["properties"].is_object() {
            out.push(format!("{name}: parameters have no `properties`"));
        }
        for key in ["oneOf", "anyOf", "allOf", "enum", "const", "not"] {
            if parameters.get(key).is_some() {
                out.push(format!("{name}: `{key}` at the top level"));
            }
        }
        match &function["strict"] {
            Value::Bool(true) => {
                let mut counts = Counts::default();
                check_strict(parameters, 1, name, &mut counts, &mut out);
                if counts.properties > 5000 || counts.enum_values > 1000 {
                    out.push(format!("{name}: over strict mode's size limits"));
                }
            }
            Value::Bool(false) => {}
            other => out.push(format!("{name}: `strict` is {other}, not a boolean")),
        }
    }
    out
}

/// Every rule an Anthropic `tools` array breaks, one line each.
fn anthropic_violations(tools: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut names = HashSet::new();
    for tool in tools.as_array().into_iter().flatten() {
        let name = tool["name"].as_str().unwrap_or_default();
        if !valid_name(name) {
            out.push(format!("{name:?}: invalid tool name"));
        }
        if !names.insert(name) {
            out.push(format!("{name}: name given twice"));
        }
        if !tool["description"].is_string() {
            out.push(format!("{name}: no description"));
        }
        let schema = &tool["input_schema"];
        if schema["type"] != "object" {
            out.push(format!("{name}: input_schema is not `type: object`"));
        }
        for key in ["oneOf", "allOf", "anyOf"] {
            if schema.get(key).is_some() {
                out.push(format!("{name}: `{key}` at the top level"));
            }
        }
    }
    out
}

/// Custom tools with the schemas a provider tells apart: none at all, an
/// object without `properties`, optional and required properties, nested
/// objects, `$defs`, keywords and formats strict mode does not take.
const TOOLS: &str = "\
name: custom/bare
description: No schema at all
---
name: custom/noprops
description: An object without properties
input_schema: {type: object}
---
name: custom/closed
description: Every property required, nested too
input_schema:
  $schema: http://json-schema.org/draft-07/schema#
  type: object
  properties:
    when: {type: string, format: date-time}
    target:
      type: object
      properties:
        host: {type: string}
        port: {type: integer, minimum: 1}
      required: [host, port]
    tags: {type: array, items: {$ref: '#/$defs/tag'}}
  required: [when, target, tags]
  $defs:
    tag: {type: string, enum: [a, b]}
---
name: custom/optional
description: An optional property
input_schema:
  type: object
  properties:
    path: {type: string}
    limit: {type: integer}
  required: [path]
---
name: custom/unsupported
description: Keywords strict mode does not take
input_schema:
  type: object
  properties:
    url: {type: string, format: uri}
    name: {type: string, minLength: 1}
  required: [url, name]
";

fn providers_sandbox() -> Sandbox {
    let sb = Sandbox::new();
    add_examples(&sb);
    let tools = sb.write("shapes.yaml", TOOLS);
    sb.run(&["tool", "add", tools.to_str().unwrap()]).ok();
    // An Agent Skill in the set: left out of the function arrays.
    sb.write(
        "skills/pdf/SKILL.md",
        "---\nname: pdf\ndescription: Read PDFs\n---\nUse pdftotext.\n",
    );
    let skill = sb.write(
        "shapes-skill.yaml",
        &format!(
            "name: local/shapes\ntools: [custom/bare, custom/noprops, custom/closed, custom/optional, custom/unsupported]\nincludes: [local/devops-toolkit]\nagent_sources:\n  - path: {}\n",
            sb.path("skills/pdf").display()
        ),
    );
    sb.run(&["skill", "add", skill.to_str().unwrap()]).ok();
    sb.run(&[
        "skill",
        "discover",
        "--paths",
        sb.path("skills").to_str().unwrap(),
    ])
    .ok();
    sb
}

#[test]
fn exports_follow_the_providers_published_rules() {
    let sb = providers_sandbox();
    let run = sb
        .run(&["skill", "tools", "local/shapes", "--format", "openai"])
        .ok();
    let openai = run.json();
    assert_eq!(
        openai_violations(&openai),
        Vec::<String>::new(),
        "{openai:#}"
    );
    let by_name = |name: &str| -> Value {
        openai
            .as_array()
            .unwrap()
            .iter()
            .find(|tool| tool["function"]["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {openai:#}"))["function"]
            .clone()
    };
    // No schema, or no properties: `properties` all the same, and strict.
    for name in ["custom__bare", "custom__noprops"] {
        assert_eq!(
            by_name(name)["parameters"],
            json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false}),
            "{name}"
        );
        assert_eq!(by_name(name)["strict"], true, "{name}");
    }
    // Every property required: strict, every object closed.
    let closed = by_name("custom__closed");
    assert_eq!(closed["strict"], true, "{closed:#}");
    assert_eq!(
        closed["parameters"]["properties"]["target"]["additionalProperties"],
        false
    );
    assert_eq!(closed["parameters"].get("$schema"), None);
    // An optional property, or a keyword strict mode does not take: exported
    // as written, not strict (making a property required would change the tool).
    for name in ["custom__optional", "custom__unsupported"] {
        assert_eq!(by_name(name)["strict"], false, "{name}");
        assert_eq!(
            by_name(name)["parameters"].get("additionalProperties"),
            None
        );
    }
    assert_eq!(
        by_name("custom__optional")["parameters"]["required"],
        json!(["path"])
    );
    // The Agent Skill is not a function: left out, and said where it goes.
    assert!(!run.stdout.contains("skill__pdf"), "{}", run.stdout);
    assert!(
        run.stderr.contains(
            "1 Agent Skill(s) left out of the function array: an Agent Skill is instructions the model reads, not a function; `agents skill prompt local/shapes` prints"
        ),
        "{}",
        run.stderr
    );

    let anthropic = sb
        .run(&["skill", "tools", "local/shapes", "--format", "anthropic"])
        .ok()
        .json();
    assert_eq!(
        anthropic_violations(&anthropic),
        Vec::<String>::new(),
        "{anthropic:#}"
    );
    let bare = anthropic
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "custom__bare")
        .unwrap();
    assert_eq!(
        bare["input_schema"],
        json!({"type": "object", "properties": {}})
    );
    assert_eq!(
        anthropic.as_array().unwrap().len(),
        openai.as_array().unwrap().len()
    );
}

/// The checks catch what they are about: a schema without `properties`, a
/// strict one left open, a name with a slash.
#[test]
fn the_provider_checks_catch_what_they_check() {
    let tool = |name: &str, parameters: Value, strict: bool| {
        json!([{"type": "function", "function": {
            "name": name, "description": "d", "parameters": parameters, "strict": strict,
        }}])
    };
    assert!(!openai_violations(&tool("a", json!({"type": "object"}), false)).is_empty());
    assert!(
        !openai_violations(&tool(
            "a",
            json!({"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}),
            true
        ))
        .is_empty()
    );
    assert!(
        !openai_violations(&tool(
            "a/b",
            json!({"type": "object", "properties": {}}),
            false
        ))
        .is_empty()
    );
    assert!(
        openai_violations(&tool(
            "a",
            json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false}),
            true
        ))
        .is_empty()
    );
    assert!(
        !anthropic_violations(
            &json!([{"name": "a", "description": "d", "input_schema": {"anyOf": []}}])
        )
        .is_empty()
    );
}

/// The tools of a real MCP server, exported for both providers, follow
/// their rules.
#[test]
fn a_real_servers_tools_follow_the_providers_rules() {
    let Some(entry) = everything("providers_everything") else {
        return;
    };
    let sb = Sandbox::new();
    sb.write(
        "home/.cleveragents/config.toml",
        &format!("[mcp.servers.everything]\ncommand = \"node\"\nargs = [\"{entry}\", \"stdio\"]\n"),
    );
    let skill = sb.write(
        "s.yaml",
        "name: l/all\nmcp_sources:\n  - server: everything\n",
    );
    sb.run(&["skill", "add", skill.to_str().unwrap()]).ok();
    sb.run(&["mcp", "refresh", "everything"]).ok();
    let openai = sb
        .run(&["skill", "tools", "l/all", "--format", "openai"])
        .ok()
        .json();
    assert!(openai.as_array().unwrap().len() > 3, "{openai:#}");
    assert_eq!(
        openai_violations(&openai),
        Vec::<String>::new(),
        "{openai:#}"
    );
    let anthropic = sb
        .run(&["skill", "tools", "l/all", "--format", "anthropic"])
        .ok()
        .json();
    assert_eq!(
        anthropic_violations(&anthropic),
        Vec::<String>::new(),
        "{anthropic:#}"
    );
}

/// `agents skill tools local/big ARGS`.
fn big(sb: &Sandbox, args: &[&str]) -> Run {
    let mut all = vec!["skill", "tools", "local/big"];
    all.extend_from_slice(args);
    sb.run(&all)
}

/// `local/big` (3 tools of its own) includes `local/issues` (20),
/// `local/files` (15) and `local/clock` (5), all custom tools with
/// parameters, and each skill a description.
fn disclosure_sandbox() -> Sandbox {
    let sb = Sandbox::new();
    let mut tools = Vec::new();
    let mut skills = Vec::new();
    let mut includes = Vec::new();
    for (skill, prefix, count, topic) in [
        ("local/issues", "issue", 20, "issues of a tracker"),
        ("local/files", "file", 15, "files on the local disk"),
        ("local/clock", "clock", 5, "time zones and the current time"),
    ] {
        let names: Vec<String> = (0..count)
            .map(|i| format!("custom/{prefix}_op_{i}"))
            .collect();
        for name in &names {
            tools.push(format!(
                "name: {name}\ndescription: One operation on {topic}, described at some length so it weighs\ninput_schema:\n  type: object\n  properties:\n    target: {{type: string}}\n    options: {{type: string}}\n  required: [target, options]\n"
            ));
        }
        skills.push(format!(
            "name: {skill}\ndescription: Tools for {topic}\ntools: [{}]\n",
            names.join(", ")
        ));
        includes.push(skill);
    }
    for name in ["custom/notes_read", "custom/notes_write", "custom/whoami"] {
        tools.push(format!(
            "name: {name}\ndescription: The root's own {name}\n"
        ));
    }
    skills.push(format!(
        "name: local/big\ndescription: Everything\ntools: [custom/notes_read, custom/notes_write, custom/whoami]\nincludes: [{}]\n",
        includes.join(", ")
    ));
    let tools = sb.write("big-tools.yaml", &tools.join("---\n"));
    sb.run(&["tool", "add", tools.to_str().unwrap()]).ok();
    let skills = sb.write("big-skills.yaml", &skills.join("---\n"));
    sb.run(&["skill", "add", skills.to_str().unwrap()]).ok();
    sb
}

#[test]
fn budget_prints_each_modes_first_tool_list_and_each_skill() {
    let sb = disclosure_sandbox();
    let report = big(&sb, &["--budget", "--format", "json"]).ok().json();
    let all = big(&sb, &["--format", "anthropic"]).ok().json();
    let all_bytes = serde_json::to_vec(&all).unwrap().len() as u64;
    let modes = report["modes"].as_array().unwrap();
    let row = |mode: &str| modes.iter().find(|m| m["mode"] == json!(mode)).unwrap();
    // `all` is exactly the Anthropic export, in bytes and in tokens.
    assert_eq!(row("all")["tools"], json!(43));
    assert_eq!(row("all")["bytes"], json!(all_bytes));
    assert_eq!(row("all")["tokens"], json!(all_bytes.div_ceil(4)));
    assert_eq!(row("all")["fits"], json!(true));
    // `skills`: the root's three tools and the loader; `search`: the pair.
    assert_eq!(
        (
            row("skills")["tools"].clone(),
            row("skills")["meta_tools"].clone()
        ),
        (json!(3), json!(1))
    );
    assert_eq!(
        (
            row("search")["tools"].clone(),
            row("search")["meta_tools"].clone()
        ),
        (json!(0), json!(2))
    );
    for mode in ["skills", "search"] {
        assert!(row(mode)["tokens"].as_u64().unwrap() * 3 < row("all")["tokens"].as_u64().unwrap());
    }
    // The default budget holds all 43 tools: `auto` is `all`.
    assert_eq!(row("auto")["applied"], json!("all"));
    let skills: Vec<(String, u64)> = report["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["skill"].as_str().unwrap().to_owned(),
                s["tools"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        skills,
        [
            ("local/big".to_owned(), 3),
            ("local/issues".to_owned(), 20),
            ("local/files".to_owned(), 15),
            ("local/clock".to_owned(), 5)
        ]
    );
    // A budget under `all`'s tokens: `auto` takes the cheaper mode.
    let tight = (row("all")["tokens"].as_u64().unwrap() - 1).to_string();
    let report = big(
        &sb,
        &["--budget", "--budget-tokens", &tight, "--format", "json"],
    )
    .ok()
    .json();
    let auto = &report["modes"][3];
    assert_ne!(auto["applied"], json!("all"), "{report:#}");
    assert_eq!(auto["fits"], json!(true));
    // The table: both tables and the method.
    let text = big(&sb, &["--budget"]).ok().stdout;
    for needle in ["MODE", "skills", "search", "local/clock", "included", "/ 4"] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }
}

#[test]
fn defer_marks_anthropic_tools_and_adds_its_tool_search_tool() {
    let sb = disclosure_sandbox();
    // `--budget-tokens` only with `--defer auto`, the one mode that reads it.
    let run = |defer: &str, budget: &str| {
        let mut args = vec!["--format", "anthropic", "--defer", defer];
        if defer == "auto" {
            args.extend(["--budget-tokens", budget]);
        }
        big(&sb, &args).ok()
    };
    let search_tool =
        json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"});
    let plain = big(&sb, &["--format", "anthropic"]).ok().json();
    let all = run("all", "100000");
    assert!(
        all.stderr.contains("advanced-tool-use-2025-11-20"),
        "{}",
        all.stderr
    );
    let all = all.json();
    let tools = all.as_array().unwrap();
    assert_eq!(tools.len(), 44);
    assert_eq!(tools.last(), Some(&search_tool));
    assert!(
        tools[..43]
            .iter()
            .all(|t| t["defer_loading"] == json!(true))
    );
    // Apart from the flag, the tools are the plain export's.
    let stripped: Vec<Value> = tools[..43]
        .iter()
        .map(|t| {
            let mut t = t.clone();
            t.as_object_mut().unwrap().remove("defer_loading");
            t
        })
        .collect();
    assert_eq!(Value::Array(stripped.clone()), plain);
    assert_eq!(
        anthropic_violations(&Value::Array(stripped)),
        Vec::<String>::new()
    );
    // Auto within the budget: the plain export.
    assert_eq!(run("auto", "100000").json(), plain);
    // Auto over it: only the root's own tools and the search tool load.
    let auto = run("auto", "1000").json();
    let loaded: Vec<&str> = auto
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t.get("defer_loading").is_none())
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(
        loaded,
        [
            "custom__notes_read",
            "custom__notes_write",
            "custom__whoami",
            "tool_search_tool_bm25"
        ]
    );
}

#[test]
fn defer_gives_other_formats_strict_meta_tools() {
    let sb = disclosure_sandbox();
    let openai = big(&sb, &["--format", "openai", "--defer", "all"])
        .ok()
        .json();
    assert_eq!(
        openai_violations(&openai),
        Vec::<String>::new(),
        "{openai:#}"
    );
    let names: Vec<&str> = openai
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["search_tools", "call_tool"]);
    assert!(
        openai
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["function"]["strict"] == json!(true))
    );
    // Auto over the budget: the cheaper of the loader and the pair.
    let auto = big(
        &sb,
        &[
            "--format",
            "openai",
            "--defer",
            "auto",
            "--budget-tokens",
            "100",
        ],
    )
    .ok()
    .json();
    assert_eq!(openai_violations(&auto), Vec::<String>::new(), "{auto:#}");
    let last = auto.as_array().unwrap().last().unwrap()["function"]["name"].clone();
    assert!(
        last == json!("load_skills") || last == json!("call_tool"),
        "{auto:#}"
    );
    // Without an export format, `--defer` is a usage error.
    let run = big(&sb, &["--defer", "all"]).fails(2);
    assert!(
        run.stderr.contains("`--defer` needs `--format anthropic`"),
        "{}",
        run.stderr
    );
    // `--budget` and `--explain` exclude each other.
    big(&sb, &["--budget", "--explain"]).fails(2);
}
