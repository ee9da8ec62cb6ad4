//! Disclosure over a real plan: `t/root` serves three builtins of its own
//! and includes `t/git` (three) and `t/web` (two).

use std::collections::HashMap;
use std::time::Duration;

use agents_core::{Include, Skill, SkillItem, SkillName, SkillResolver, ToolRegistry};
use agents_mcp::FetchOptions;
use agents_registry::ServeSet;

use super::*;

fn served_plan() -> Serving {
    let mut tools = ToolRegistry::new();
    for spec in agents_tools::builtin_tools() {
        tools.register(spec, false).unwrap();
    }
    let skill = |name: &str, builtins: &[&str]| {
        let mut skill = Skill::new(SkillName::new(name).unwrap());
        for builtin in builtins {
            skill.items.push(SkillItem::ToolRef {
                name: format!("builtin/{builtin}").as_str().into(),
            });
        }
        skill
    };
    let mut root = skill("t/root", &["read_file", "list_dir", "write_file"]);
    let mut skills = HashMap::new();
    for included in [
        skill("t/git", &["git_status", "git_diff", "git_commit"]),
        skill("t/web", &["http_get", "shell"]),
    ] {
        root.items.push(SkillItem::Include(Include {
            skill: included.name.clone(),
            overrides: Default::default(),
        }));
        skills.insert(included.name.clone(), included);
    }
    skills.insert(root.name.clone(), root);
    let resolution = SkillResolver::new(&skills, &tools)
        .resolve(&SkillName::new("t/root").unwrap())
        .unwrap();
    let set = ServeSet {
        entries: resolution.entries,
        servers: Vec::new(),
        warnings: Vec::new(),
        uncached: Vec::new(),
        own_folders: Default::default(),
        runs: Default::default(),
    };
    Serving::decide(&set, Duration::from_secs(5))
}

fn shell(serving: &mut Serving) -> &mut crate::ServedTool {
    serving
        .served
        .iter_mut()
        .find(|t| t.export_name == "builtin__shell")
        .unwrap()
}

fn descriptions() -> HashMap<String, String> {
    HashMap::from([
        ("t/git".to_owned(), "Git history and commits".to_owned()),
        ("t/web".to_owned(), "The web and a shell".to_owned()),
    ])
}

fn disclosed(plan: &Serving, mode: Mode, budget_tokens: usize) -> Result<Disclosed, DiscloseError> {
    Disclosed::of(
        plan,
        &["t/root".to_owned()],
        &descriptions(),
        DiscloseOptions {
            mode,
            budget_tokens,
        },
    )
}

fn names(tools: &[Value]) -> Vec<&str> {
    tools.iter().filter_map(|t| t["name"].as_str()).collect()
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.clone()))
        .collect()
}

#[test]
fn skills_mode_lists_the_roots_tools_then_what_a_session_loaded() {
    let plan = served_plan();
    assert_eq!(plan.served.len(), 8);
    let skills = disclosed(&plan, Mode::Skills, 8_000).unwrap();
    let summary = skills.summary();
    assert_eq!(
        summary.eager,
        [
            "builtin__read_file",
            "builtin__list_dir",
            "builtin__write_file"
        ]
    );
    assert_eq!(summary.meta, [LOADER]);
    assert_eq!(
        summary.offered,
        [
            OfferedSkill {
                skill: "t/git".into(),
                tools: 3
            },
            OfferedSkill {
                skill: "t/web".into(),
                tools: 2
            }
        ]
    );
    assert_eq!(summary.deferred, 5);
    assert!(summary.tokens < summary.all_tokens);
    let first = skills.tools_for(&BTreeSet::new());
    assert_eq!(
        names(&first),
        [
            "builtin__read_file",
            "builtin__list_dir",
            "builtin__write_file",
            LOADER
        ]
    );
    let loaded = skills.tools_for(&BTreeSet::from(["t/web".to_owned(), "t/gone".to_owned()]));
    assert_eq!(
        names(&loaded),
        [
            "builtin__read_file",
            "builtin__list_dir",
            "builtin__write_file",
            "builtin__http_get",
            "builtin__shell",
            LOADER
        ]
    );
    let instructions = skills.instructions();
    assert!(
        instructions.contains("- t/git (3 tools): Git history and commits"),
        "{instructions}"
    );
}

#[test]
fn search_mode_lists_the_pair_and_finds_tools_with_their_schemas() {
    let plan = served_plan();
    let search = disclosed(&plan, Mode::Search, 8_000).unwrap();
    assert_eq!(names(&search.tools_for(&BTreeSet::new())), [SEARCH, CALL]);
    let args = |query: &str, limit: u64| {
        json!({"query": query, "limit": limit})
            .as_object()
            .unwrap()
            .clone()
    };
    let found = search_tools(&search, &args("commit my staged changes", 2));
    assert_ne!(found.is_error, Some(true));
    let found: Value = serde_json::from_str(&text(&found)).unwrap();
    assert_eq!(found["tools"][0]["name"], "builtin__git_commit", "{found}");
    assert_eq!(found["tools"][0]["skill"], "t/git", "{found}");
    assert!(found["tools"][0]["inputSchema"]["properties"].is_object());
    assert_eq!(found["of"], 8);
    let none: Value =
        serde_json::from_str(&text(&search_tools(&search, &args("kubernetes pods", 5)))).unwrap();
    assert_eq!(none["tools"], json!([]));
    assert!(none["note"].is_string());
    for bad in [
        args("x", 0),
        args("x", 21),
        json!({"query": 3, "limit": 2}).as_object().unwrap().clone(),
    ] {
        let refused = search_tools(&search, &bad);
        assert_eq!(refused.is_error, Some(true), "{bad:?}");
        assert!(text(&refused).contains("invalid arguments for `search_tools`"));
    }
}

#[test]
fn an_unknown_name_gets_a_did_you_mean() {
    let plan = served_plan();
    let search = disclosed(&plan, Mode::Search, 8_000).unwrap();
    let typo = text(&unknown_tool(&search, "builtin__git_comit"));
    assert!(
        typo.contains("did you mean `builtin__git_commit`?"),
        "{typo}"
    );
    let words = text(&unknown_tool(&search, "http"));
    assert!(words.contains("`builtin__http_get`"), "{words}");
    let nothing = text(&unknown_tool(&search, "zzzz"));
    assert!(
        nothing.contains("find tools with `search_tools`"),
        "{nothing}"
    );
    let meta = text(&unknown_tool(&search, SEARCH));
    assert!(meta.contains("call `search_tools` directly"), "{meta}");
}

#[test]
fn auto_is_all_within_the_budget_else_a_cheaper_mode() {
    let plan = served_plan();
    let all = disclosed(&plan, Mode::All, 8_000).unwrap().summary();
    let within = disclosed(&plan, Mode::Auto, all.all_tokens).unwrap();
    assert_eq!(within.mode(), Mode::All);
    assert_eq!(within.summary().meta, Vec::<String>::new());
    let over = disclosed(&plan, Mode::Auto, all.all_tokens - 1).unwrap();
    assert!(matches!(over.mode(), Mode::Skills | Mode::Search));
    assert!(over.summary().fits);
    assert!(over.summary().tokens < all.all_tokens);
}

/// A served tool exported as `search_tools` (or the loader) collides with
/// the meta tool of the mode that adds it, and only with that one.
#[test]
fn a_served_tool_named_like_a_meta_tool_is_refused() {
    let mut plan = served_plan();
    let renamed = shell(&mut plan);
    renamed.export_name = SEARCH.into();
    renamed.tool["name"] = json!(SEARCH);
    let err = disclosed(&plan, Mode::Search, 8_000).unwrap_err();
    assert_eq!(
        err,
        DiscloseError::Collision {
            mode: Mode::Search,
            meta: SEARCH.into(),
            registry_name: "builtin/shell".into(),
            skill: "t/web".into(),
        }
    );
    assert_eq!(err.kind(), "disclosure_collision");
    assert!(err.to_string().contains("`builtin/shell`"), "{err}");
    assert!(disclosed(&plan, Mode::Skills, 8_000).is_ok());
    assert!(disclosed(&plan, Mode::All, 8_000).is_ok());
    // `auto` collides only when it applies the mode.
    assert!(disclosed(&plan, Mode::Auto, 1_000_000).is_ok());
    let renamed = plan
        .served
        .iter_mut()
        .find(|t| t.export_name == SEARCH)
        .unwrap();
    renamed.export_name = LOADER.into();
    renamed.tool["name"] = json!(LOADER);
    assert!(matches!(
        disclosed(&plan, Mode::Skills, 8_000),
        Err(DiscloseError::Collision { meta, .. }) if meta == LOADER
    ));
}

/// `call_tool` takes the path of a direct call: the same result, refusal
/// or policy error, whatever the tool.
#[tokio::test]
async fn call_tool_answers_as_a_direct_call() {
    let mut plan = served_plan();
    let write = plan
        .served
        .iter_mut()
        .find(|t| t.export_name == "builtin__write_file")
        .unwrap();
    write.overrides.insert("read_only".into(), json!(true));
    let roots = [SkillName::new("t/root").unwrap()];
    let gateway = Gateway::new(plan, FetchOptions::default())
        .with_disclosure(
            DiscloseOptions {
                mode: Mode::Search,
                budget_tokens: 8_000,
            },
            &roots,
            &descriptions(),
        )
        .unwrap();
    let run = |name: &'static str, arguments: Value| {
        gateway.dispatch(name, Some(arguments), None, None, CancellationToken::new())
    };
    let via = |name: &str, arguments: &str| json!({"name": name, "arguments": arguments});
    for (name, arguments) in [
        (
            "builtin__write_file",
            json!({"path": "x.txt", "content": "no"}),
        ),
        ("builtin__list_dir", json!({"path": "."})),
        ("builtin__read_file", json!({"path": 5})),
    ] {
        let direct = run(name, arguments.clone()).await.unwrap();
        let called = run(CALL, via(name, &arguments.to_string())).await.unwrap();
        assert_eq!(direct.is_error, Some(true), "{name}: {}", text(&direct));
        assert_eq!(text(&called), text(&direct), "{name}");
    }
    // By registry name too.
    let by_registry = run(CALL, via("builtin/write_file", "{}")).await.unwrap();
    assert_eq!(by_registry.is_error, Some(true));
    for (arguments, expected) in [
        ("[1]", "must be a JSON object"),
        ("{not json", "is not JSON text"),
    ] {
        let refused = run(CALL, via("builtin__list_dir", arguments))
            .await
            .unwrap();
        assert!(text(&refused).contains(expected), "{}", text(&refused));
    }
    let unknown = run(CALL, via("builtin__lst_dir", "{}")).await.unwrap();
    assert!(
        text(&unknown).contains("did you mean `builtin__list_dir`?"),
        "{}",
        text(&unknown)
    );
    // The meta tools of another mode are no tools here.
    assert!(run(LOADER, json!({"skills": []})).await.is_none());
    // Without a session, nothing can be loaded.
    assert_eq!(names(&gateway.list_for(None)), [SEARCH, CALL]);
}
