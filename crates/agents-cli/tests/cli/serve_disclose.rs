//! `agents mcp serve --disclose`, driven by the official Python SDK client
//! (`tests/cli/py/builtin_client.py`) on a skill of 300 tools: the tool
//! lists 17 real MCP servers from npm publish (`bench/disclosure/tools.json`,
//! served again by `listing_server.py`, one included skill a server), the
//! 11 builtins as the root's own, and an inline tool (which the gateway
//! has no executor for, so leaves out).

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::serve::text_of;
use crate::serve_builtin::client;
use crate::support::{Sandbox, python};

const ROOT: &str = "d/all";

/// The fixture's servers: (name, npm package, tools).
fn servers() -> Vec<(String, String, Vec<Value>)> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../bench/disclosure/tools.json"
    );
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    fixture["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|server| {
            (
                server["server"].as_str().unwrap().to_owned(),
                server["package"].as_str().unwrap().to_owned(),
                server["tools"].as_array().unwrap().clone(),
            )
        })
        .collect()
}

/// The Python SDK's interpreter, a sandbox with `d/all` registered and
/// every server's tool list cached, and a workspace (`ws/a.txt`); `None`
/// when the SDK is not installed (outside CI).
fn setup(test: &str) -> Option<(String, Sandbox, PathBuf)> {
    let python = python(test)?;
    let sb = Sandbox::new();
    let ws = sb.path("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("a.txt"), "hello\n").unwrap();
    let listing = crate::support::py_script("listing_server.py");
    let mut documents = Vec::new();
    let mut includes = Vec::new();
    for (server, package, tools) in servers() {
        let file = sb.write(
            &format!("tools-{server}.json"),
            &serde_json::to_string(&tools).unwrap(),
        );
        documents.push(format!(
            "name: d/{server}\ndescription: The tools of {package}\nmcp_sources:\n  - server: {server}\n    command: {python}\n    args: [\"{}\", \"{}\", --reread]\n",
            listing.display(),
            file.display()
        ));
        // Every GitHub tool needs approval (an include's overrides).
        includes.push(if server == "github" {
            format!("{{skill: d/{server}, overrides: {{approval: required}}}}")
        } else {
            format!("d/{server}")
        });
    }
    let builtins = crate::serve_builtin::ALL.map(|b| format!("builtin/{b}"));
    documents.push(format!(
        "name: {ROOT}\ndescription: Everything\ntools: [{}]\nincludes: [{}]\ninline_tools:\n  - description: Report disk usage of the build directory\n    read_only: true\noverrides:\n  builtin/shell: {{timeout_s: 1}}\n  builtin/write_file: {{read_only: true}}\n  builtin/list_dir: {{approval: required}}\n",
        builtins.join(", "),
        includes.join(", ")
    ));
    let file = sb.write("skills.yaml", &documents.join("---\n"));
    sb.run(&["skill", "add", file.to_str().unwrap()]).ok();
    sb.run(&["mcp", "refresh"]).ok();
    Some((python, sb, ws))
}

/// `-- agents mcp serve d/all --root WS EXTRA…` (stdio).
fn stdio(ws: &std::path::Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = vec!["--".into(), env!("CARGO_BIN_EXE_agents").into()];
    args.extend(["mcp", "serve", ROOT, "--root", ws.to_str().unwrap()].map(String::from));
    args.extend(extra.iter().map(|a| (*a).to_owned()));
    args
}

fn names(list: &Value) -> Vec<&str> {
    list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

/// The estimated tokens of a `tools/list` result's tools (bytes of the
/// compact JSON array / 4, rounded up: the gateway's own estimate).
fn tokens(list: &Value) -> usize {
    serde_json::to_vec(&list["tools"])
        .unwrap()
        .len()
        .div_ceil(4)
}

fn call(name: &str, arguments: Value) -> Value {
    json!({"call": name, "arguments": arguments})
}

fn via_call_tool(name: &str, arguments: Value) -> Value {
    call(
        "call_tool",
        json!({"name": name, "arguments": arguments.to_string()}),
    )
}

/// `mcp serve --dry-run --format json` with `extra`: its `disclosure`.
fn dry_run(sb: &Sandbox, extra: &[&str]) -> Value {
    let mut args = vec!["mcp", "serve", ROOT, "--dry-run", "--format", "json"];
    args.extend(extra);
    sb.run(&args).ok().json()
}

#[test]
fn skills_mode_lists_the_roots_tools_and_loads_a_skill_with_list_changed() {
    let Some((python, sb, ws)) = setup("disclose_skills") else {
        return;
    };
    let config = json!({"steps": [
        {"list": true},
        call("load_skills", json!({"skills": ["d/github", "d/slack"]})),
        {"wait_list_changed": 30},
        {"list": true},
        // Loaded already: nothing new, no notification.
        call("load_skills", json!({"skills": ["d/github"]})),
        call("load_skills", json!({"skills": ["d/githbu"]})),
        {"list": true},
    ]});
    let out = client(
        &sb,
        &python,
        &config,
        &stdio(&ws, &["--disclose", "skills"]),
    );
    let steps = out["steps"].as_array().unwrap();
    assert_eq!(out["capabilities"]["tools"]["listChanged"], true, "{out}");
    let first = names(&steps[0]);
    assert_eq!(first.len(), 12, "{first:?}");
    assert!(
        first[..11].iter().all(|n| n.starts_with("builtin__")),
        "{first:?}"
    );
    assert_eq!(first[11], "load_skills");
    assert!(tokens(&steps[0]) <= 8_000, "{}", tokens(&steps[0]));
    let loader = &steps[0]["tools"][11];
    let offered = loader["inputSchema"]["properties"]["skills"]["items"]["enum"]
        .as_array()
        .unwrap();
    assert_eq!(offered.len(), 17, "{loader}");
    assert_eq!(loader["inputSchema"]["additionalProperties"], false);
    assert!(
        loader["description"]
            .as_str()
            .unwrap()
            .contains("- d/github (26 tools): The tools of @modelcontextprotocol/server-github"),
        "{loader}"
    );
    let instructions = out["instructions"].as_str().unwrap();
    assert!(
        instructions.contains("- d/slack (8 tools)"),
        "{instructions}"
    );
    assert!(
        instructions.contains("`load_skills`, which adds"),
        "{instructions}"
    );
    assert_ne!(steps[1]["isError"], true, "{}", steps[1]);
    assert!(
        text_of(&steps[1]).contains("github__create_issue"),
        "{}",
        steps[1]
    );
    assert_eq!(steps[2]["list_changed"], true, "{out}");
    let loaded = names(&steps[3]);
    assert_eq!(loaded.len(), 12 + 26 + 8, "{loaded:?}");
    assert!(loaded.contains(&"github__create_issue"));
    assert!(loaded.contains(&"slack__slack_post_message"));
    assert_eq!(loaded.last(), Some(&"load_skills"));
    assert_ne!(steps[4]["isError"], true, "{}", steps[4]);
    assert_eq!(steps[5]["isError"], true, "{}", steps[5]);
    assert!(
        text_of(&steps[5]).contains("did you mean `d/github`?"),
        "{}",
        steps[5]
    );
    // One notification: loading a skill again changes nothing.
    assert_eq!(out["list_changed"], 1, "{out}");
    assert_eq!(names(&steps[6]), loaded);
}

/// What one session loads is that session's: another client of the same
/// gateway still has the first list.
#[test]
fn loaded_skills_are_per_session_over_http() {
    let Some((python, sb, ws)) = setup("disclose_sessions") else {
        return;
    };
    let args = [
        "mcp",
        "serve",
        ROOT,
        "--root",
        ws.to_str().unwrap(),
        "--disclose",
        "skills",
        "--http",
        "127.0.0.1:0",
        "--no-auth",
    ];
    let (mut child, url) = crate::serve::agents_http(&sb, &args, &[]);
    let load = json!({"steps": [
        call("load_skills", json!({"skills": ["d/memory"]})),
        {"wait_list_changed": 30},
        {"list": true},
    ]});
    let loaded = client(&sb, &python, &load, &["--url".into(), url.clone()]);
    let other = client(
        &sb,
        &python,
        &json!({"steps": [{"list": true}]}),
        &["--url".into(), url],
    );
    crate::serve::nix_kill(child.id());
    assert!(child.wait().unwrap().success());
    assert_eq!(loaded["steps"][1]["list_changed"], true, "{loaded}");
    assert_eq!(names(&loaded["steps"][2]).len(), 12 + 9, "{loaded}");
    assert_eq!(names(&other["steps"][0]).len(), 12, "{other}");
}

/// Queries written for this test (not the bench's), each with the tool it
/// should find among the first five of `search_tools`.
const QUERIES: [(&str, &str); 10] = [
    (
        "open an issue in a GitHub repository",
        "github__create_issue",
    ),
    (
        "post a message to a Slack channel",
        "slack__slack_post_message",
    ),
    (
        "take a screenshot of the page in the browser",
        "playwright__browser_take_screenshot",
    ),
    (
        "show the logs of a Kubernetes pod",
        "kubernetes__kubectl_logs",
    ),
    (
        "turn a street address into coordinates",
        "google-maps__maps_geocode",
    ),
    (
        "scrape the content of one web page",
        "firecrawl__firecrawl_scrape",
    ),
    (
        "commit the staged changes with a message",
        "builtin__git_commit",
    ),
    (
        "insert documents into a MongoDB collection",
        "mongodb__insert-many",
    ),
    (
        "search the web with Brave",
        "brave-search__brave_web_search",
    ),
    (
        "create a merge request on GitLab",
        "gitlab__create_merge_request",
    ),
];

#[test]
fn search_mode_finds_the_expected_tools_for_written_queries() {
    let Some((python, sb, ws)) = setup("disclose_search") else {
        return;
    };
    let mut steps = vec![json!({"list": true})];
    steps.extend(
        QUERIES
            .iter()
            .map(|(query, _)| call("search_tools", json!({"query": query, "limit": 5}))),
    );
    steps.push(call("search_tools", json!({"query": "x", "limit": 50})));
    let out = client(
        &sb,
        &python,
        &json!({"steps": steps}),
        &stdio(&ws, &["--disclose", "search"]),
    );
    let steps = out["steps"].as_array().unwrap();
    assert_eq!(names(&steps[0]), ["search_tools", "call_tool"]);
    assert!(tokens(&steps[0]) <= 8_000);
    for tool in steps[0]["tools"].as_array().unwrap() {
        let schema = &tool["inputSchema"];
        assert_eq!(schema["additionalProperties"], false, "{tool}");
        let properties: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        let required: Vec<&str> = schema["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        assert_eq!(properties, required, "every field required: {tool}");
    }
    for (i, (query, expected)) in QUERIES.iter().enumerate() {
        let found: Value = serde_json::from_str(&text_of(&steps[i + 1])).unwrap();
        let names: Vec<&str> = found["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert!(names.contains(expected), "{query}: {names:?}");
        let tool = found["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == *expected)
            .unwrap();
        assert!(tool["inputSchema"]["type"] == "object", "{tool}");
        assert!(tool["skill"].as_str().unwrap().starts_with("d/"), "{tool}");
        assert_eq!(found["of"], 300, "{found}");
    }
    let refused = steps.last().unwrap();
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(text_of(refused).contains("from 1 to 20"), "{refused}");
}

/// `call_tool` answers as a direct call of the same tool does: the
/// timeout, `read_only`, approval through elicitation and the proxying of
/// MCP tools; an unknown name gets a did-you-mean.
#[test]
fn call_tool_enforces_the_policy_of_a_direct_call() {
    let Some((python, sb, ws)) = setup("disclose_call_tool") else {
        return;
    };
    let pairs = [
        ("builtin__shell", json!({"command": "sleep 30"})),
        (
            "builtin__write_file",
            json!({"path": "ro.txt", "content": "no"}),
        ),
        ("builtin__list_dir", json!({"path": "."})),
        (
            "github__create_issue",
            json!({"owner": "o", "repo": "r", "title": "t"}),
        ),
        ("slack__slack_list_channels", json!({})),
        ("builtin__read_file", json!({"path": "a.txt"})),
    ];
    let mut steps = Vec::new();
    for (name, arguments) in &pairs {
        steps.push(call(name, arguments.clone()));
        steps.push(via_call_tool(name, arguments.clone()));
    }
    steps.push(via_call_tool("github__create_isue", json!({})));
    steps.push(via_call_tool("builtin__read_file", json!({"path": 5})));
    let run = |answer: &str| {
        let config = json!({"elicitation": answer, "steps": steps});
        client(
            &sb,
            &python,
            &config,
            &stdio(&ws, &["--disclose", "search"]),
        )
    };
    let declined = run("decline");
    let steps_out = declined["steps"].as_array().unwrap();
    let pair = |i: usize| (&steps_out[2 * i], &steps_out[2 * i + 1]);
    for (i, (name, _)) in pairs.iter().enumerate() {
        let (direct, called) = pair(i);
        assert_eq!(
            direct["isError"], called["isError"],
            "{name}: {direct} / {called}"
        );
    }
    let check = |i: usize, expected: &str, error: bool| {
        let (direct, called) = pair(i);
        for result in [direct, called] {
            assert_eq!(result["isError"] == true, error, "{}: {result}", pairs[i].0);
            assert!(
                text_of(result).contains(expected),
                "{}: {expected} not in {result}",
                pairs[i].0
            );
        }
    };
    check(0, "timed out", true);
    check(1, "read-only", true);
    check(2, "declined", true);
    check(3, "declined", true);
    check(4, "called slack_list_channels", false);
    check(5, "hello", false);
    // Two questions a run, one per call of each tool that needs approval.
    assert_eq!(
        declined["elicited"].as_array().unwrap().len(),
        4,
        "{declined}"
    );
    let unknown = &steps_out[12];
    assert_eq!(unknown["isError"], true, "{unknown}");
    assert!(
        text_of(unknown).contains("did you mean `github__create_issue`?"),
        "{unknown}"
    );
    let invalid = &steps_out[13];
    assert_eq!(invalid["isError"], true, "{invalid}");
    assert!(
        text_of(invalid).contains("invalid arguments for `builtin__read_file`"),
        "{invalid}"
    );
    // Approved, both run.
    let accepted = run("accept");
    let steps_out = accepted["steps"].as_array().unwrap();
    for i in [4, 5, 6, 7] {
        assert_ne!(steps_out[i]["isError"], true, "{}", steps_out[i]);
    }
    assert!(text_of(&steps_out[5]).contains("a.txt"), "{}", steps_out[5]);
    assert!(
        text_of(&steps_out[7]).contains("called create_issue"),
        "{}",
        steps_out[7]
    );
}

#[test]
fn auto_mode_is_all_within_the_budget_else_the_cheaper_mode() {
    let Some((python, sb, ws)) = setup("disclose_auto") else {
        return;
    };
    let roomy = dry_run(&sb, &["--disclose", "auto", "--budget-tokens", "1000000"]);
    assert_eq!(roomy["disclosure"]["mode"], "all", "{roomy}");
    assert_eq!(roomy["disclosure"]["eager"].as_array().unwrap().len(), 300);
    let tight = dry_run(&sb, &["--disclose", "auto", "--budget-tokens", "3000"]);
    let mode = tight["disclosure"]["mode"].as_str().unwrap().to_owned();
    assert!(mode == "skills" || mode == "search", "{tight}");
    assert_eq!(tight["disclosure"]["fits"], true, "{tight}");
    let out = client(
        &sb,
        &python,
        &json!({"steps": [{"list": true}]}),
        &stdio(&ws, &["--disclose", "auto", "--budget-tokens", "3000"]),
    );
    let first = &out["steps"][0];
    assert!(tokens(first) <= 3_000, "{}", tokens(first));
    let expected: Vec<&str> = tight["disclosure"]["eager"]
        .as_array()
        .unwrap()
        .iter()
        .chain(tight["disclosure"]["meta"].as_array().unwrap())
        .map(|n| n.as_str().unwrap())
        .collect();
    assert_eq!(names(first), expected);
    // `all` is every tool, over the budget.
    let all = client(
        &sb,
        &python,
        &json!({"steps": [{"list": true}]}),
        &stdio(&ws, &[]),
    );
    assert_eq!(names(&all["steps"][0]).len(), 300);
    assert!(tokens(&all["steps"][0]) > 8_000);
}

/// `--dry-run` says what each mode would put first and what it costs
/// against `all` (the numbers are printed for the record).
#[test]
fn dry_run_says_what_would_be_disclosed() {
    let Some((_, sb, _)) = setup("disclose_dry_run") else {
        return;
    };
    let plain = dry_run(&sb, &[]);
    assert!(plain.get("disclosure").is_none(), "{plain}");
    for mode in ["skills", "search", "auto"] {
        let out = dry_run(&sb, &["--disclose", mode]);
        let d = &out["disclosure"];
        eprintln!(
            "disclose {mode} ({}): {} tools + {} meta, {} bytes, {} tokens; all: {} bytes, {} tokens",
            d["mode"],
            d["eager"].as_array().unwrap().len(),
            d["meta"].as_array().unwrap().len(),
            d["bytes"],
            d["tokens"],
            d["all_bytes"],
            d["all_tokens"]
        );
        assert_eq!(d["requested"], mode, "{d}");
        assert_eq!(d["fits"], true, "{d}");
        assert!(
            d["tokens"].as_u64().unwrap() * 10 <= d["all_tokens"].as_u64().unwrap(),
            "within 10% of all: {d}"
        );
        assert_eq!(out["tools"].as_array().unwrap().len(), 300);
    }
    let text = sb
        .run(&["mcp", "serve", ROOT, "--dry-run", "--disclose", "skills"])
        .ok()
        .stdout;
    assert!(
        text.contains(
            "disclose skills: the first tool list holds 11 served tool(s) and `load_skills`"
        ),
        "{text}"
    );
    assert!(
        text.contains("289 tool(s) deferred; budget 8000 tokens: fits"),
        "{text}"
    );
    assert!(
        text.contains("offer skill d/github (26 tool(s)) through `load_skills`"),
        "{text}"
    );
    let search = sb
        .run(&[
            "mcp",
            "serve",
            ROOT,
            "--dry-run",
            "--disclose",
            "search",
            "--budget-tokens",
            "10",
        ])
        .ok()
        .stdout;
    assert!(
        search
            .contains("the first tool list holds 0 served tool(s) and `search_tools`, `call_tool`"),
        "{search}"
    );
    assert!(search.contains("budget 10 tokens: over"), "{search}");
}

/// `--budget-tokens` where nothing reads it is a usage error, not ignored.
#[test]
fn budget_tokens_without_a_reader_is_a_usage_error() {
    let sb = Sandbox::new();
    sb.write("s.yaml", "name: l/s\ntools: [builtin/read_file]\n");
    sb.run(&["skill", "add", sb.path("s.yaml").to_str().unwrap()])
        .ok();
    let tools = sb
        .run(&["skill", "tools", "l/s", "--budget-tokens", "100"])
        .fails(2);
    assert!(
        tools
            .stderr
            .contains("`--budget-tokens` is read only by `--budget` and `--defer auto`"),
        "{}",
        tools.stderr
    );
    for defer in [
        &["--format", "anthropic", "--defer", "all"][..],
        &["--format", "openai"][..],
    ] {
        let mut args = vec!["skill", "tools", "l/s", "--budget-tokens", "100"];
        args.extend(defer);
        sb.run(&args).fails(2);
    }
    sb.run(&[
        "skill",
        "tools",
        "l/s",
        "--budget",
        "--budget-tokens",
        "100",
    ])
    .ok();
    sb.run(&[
        "skill",
        "tools",
        "l/s",
        "--format",
        "anthropic",
        "--defer",
        "auto",
        "--budget-tokens",
        "100",
    ])
    .ok();
    let serve = sb
        .run(&["mcp", "serve", "l/s", "--dry-run", "--budget-tokens", "100"])
        .fails(2);
    assert!(
        serve
            .stderr
            .contains("`--budget-tokens` is the budget of `--disclose"),
        "{}",
        serve.stderr
    );
    sb.run(&[
        "mcp",
        "serve",
        "l/s",
        "--dry-run",
        "--disclose",
        "auto",
        "--budget-tokens",
        "100",
    ])
    .ok();
}

/// `search_tools` ranks what the gateway serves now: a tool a registry
/// write adds while the gateway runs is found after the re-resolution
/// (the one-second poll; the second session asks again, bounded, until the
/// catalogue has it), and was not before it.
#[test]
fn search_follows_a_re_resolution_of_the_served_skill() {
    let Some(python) = python("disclose_re_resolution") else {
        return;
    };
    let sb = Sandbox::new();
    let ws = sb.path("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let skill = |tools: &str| {
        let file = sb.write(
            "r.yaml",
            &format!("name: r/s\ndescription: Grows\ntools: [{tools}]\n"),
        );
        sb.run(&["skill", "apply", file.to_str().unwrap()]).ok();
    };
    skill("builtin/read_file");
    let args = [
        "mcp",
        "serve",
        "r/s",
        "--root",
        ws.to_str().unwrap(),
        "--disclose",
        "search",
        "--http",
        "127.0.0.1:0",
        "--no-auth",
    ];
    let (mut child, url) = crate::serve::agents_http(&sb, &args, &[]);
    let query = json!({"query": "run a shell command", "limit": 5});
    let before = client(
        &sb,
        &python,
        &json!({"steps": [call("search_tools", query.clone())]}),
        &["--url".into(), url.clone()],
    );
    skill("builtin/read_file, builtin/shell");
    let mut again = call("search_tools", query);
    again["until"] = json!("builtin__shell");
    let after = client(
        &sb,
        &python,
        &json!({"steps": [again]}),
        &["--url".into(), url],
    );
    crate::serve::nix_kill(child.id());
    assert!(child.wait().unwrap().success());
    let found = |out: &Value| text_of(&out["steps"][0]).contains("builtin__shell");
    assert!(!found(&before), "{before}");
    assert!(found(&after), "{after}");
}
