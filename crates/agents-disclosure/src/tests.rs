//! Plans over a real resolution: a root skill with three tools of its own
//! that includes three skills of MCP tools.

use std::collections::HashMap;

use agents_core::{
    ExportFormat, Include, Resolution, Skill, SkillItem, SkillName, SkillResolver, ToolRegistry,
    ToolSource, ToolSpec,
};
use serde_json::{Value, json};

use crate::plan::{ANTHROPIC_TOOL_SEARCH_NAME, ANTHROPIC_TOOL_SEARCH_TYPE};
use crate::{CALL, Catalog, Cost, Defer, LOADER, Mode, SEARCH};

const ROOT: &str = "team/root";

fn spec(name: &str, description: &str, source: ToolSource, params: &[&str]) -> ToolSpec {
    let mut spec = ToolSpec::new(name, description, source);
    let properties: serde_json::Map<String, Value> = params
        .iter()
        .map(|p| {
            (
                (*p).to_owned(),
                json!({"type": "string", "description": format!("The {p}")}),
            )
        })
        .collect();
    spec.input_schema =
        Some(json!({"type": "object", "properties": properties, "required": params}));
    spec
}

/// `team/root` (3 own tools) includes `team/github` (30), `team/files`
/// (20) and `team/clock` (5).
fn resolution() -> (Resolution, HashMap<String, String>) {
    let mut tools = ToolRegistry::new();
    let mut skills = HashMap::new();
    let mut root = Skill::new(SkillName::new(ROOT).unwrap());
    for (name, description) in [
        ("team/read_notes", "Read the team's shared notes"),
        (
            "team/write_notes",
            "Append a line to the team's shared notes",
        ),
        ("team/whoami", "Tell which user this session acts for"),
    ] {
        tools
            .register(
                spec(name, description, ToolSource::Custom, &["text"]),
                false,
            )
            .unwrap();
        root.items.push(SkillItem::ToolRef { name: name.into() });
    }
    let mut descriptions = HashMap::new();
    for (skill, server, count, topic) in [
        (
            "team/github",
            "github",
            30,
            "issues and pull requests of a GitHub repository",
        ),
        (
            "team/files",
            "fs",
            20,
            "files and directories on the local disk",
        ),
        (
            "team/clock",
            "time",
            5,
            "the current time and timezone conversions",
        ),
    ] {
        let name = SkillName::new(skill).unwrap();
        let mut included = Skill::new(name.clone());
        for i in 0..count {
            let tool = format!("mcp:{server}/{server}_op_{i}");
            tools
                .register(
                    spec(
                        &tool,
                        &format!("Operation {i} on {topic}, with a long enough description to weigh something"),
                        ToolSource::Mcp,
                        &["owner", "target", "options"],
                    ),
                    false,
                )
                .unwrap();
            included.items.push(SkillItem::ToolRef {
                name: tool.as_str().into(),
            });
        }
        descriptions.insert(skill.to_owned(), format!("Tools for {topic}"));
        skills.insert(name.clone(), included);
        root.items.push(SkillItem::Include(Include {
            skill: name,
            overrides: Default::default(),
        }));
    }
    skills.insert(root.name.clone(), root);
    let resolution = SkillResolver::new(&skills, &tools)
        .resolve(&SkillName::new(ROOT).unwrap())
        .unwrap();
    (resolution, descriptions)
}

fn catalog(format: ExportFormat) -> Catalog {
    let (resolution, descriptions) = resolution();
    Catalog::new(ROOT, &resolution.entries, format, &descriptions)
}

fn strict_valid(schema: &Value) {
    assert_eq!(
        agents_core::strict::strict_parameters(schema).as_ref(),
        Some(schema),
        "not strict-mode valid as it is: {schema}"
    );
}

#[test]
fn all_puts_every_exported_tool_first() {
    let (resolution, descriptions) = resolution();
    let catalog = Catalog::new(
        ROOT,
        &resolution.entries,
        ExportFormat::Anthropic,
        &descriptions,
    );
    let exported = agents_core::export_tools(&resolution.entries, ExportFormat::Anthropic);
    let plan = catalog.plan(Mode::All, 1_000_000);
    assert_eq!(plan.mode, Mode::All);
    assert_eq!(plan.eager.len(), 58);
    assert!(plan.meta.is_empty());
    assert_eq!(catalog.initial_tools(&plan), exported.tools);
    assert_eq!(plan.cost, Cost::of(&exported.tools));
    assert_eq!(catalog.export(Defer::None, 0), exported.tools);
}

#[test]
fn skills_mode_holds_the_root_tools_and_a_strict_loader() {
    let catalog = catalog(ExportFormat::Anthropic);
    let plan = catalog.plan(Mode::Skills, 0);
    let first = catalog.initial_tools(&plan);
    let names: Vec<&str> = first.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(
        names,
        [
            "team__read_notes",
            "team__write_notes",
            "team__whoami",
            LOADER
        ]
    );
    let loader = &first[3];
    strict_valid(&loader["input_schema"]);
    assert_eq!(
        loader["input_schema"]["properties"]["skills"]["items"]["enum"],
        json!(["team/github", "team/files", "team/clock"])
    );
    let description = loader["description"].as_str().unwrap();
    assert!(
        description.contains("- team/github (30 tools): Tools for issues and pull requests"),
        "{description}"
    );
    assert!(plan.cost.tokens * 4 < catalog.all_cost().tokens);
    // Loading a skill gives its own tools.
    let loaded = catalog.load("team/clock").unwrap();
    assert_eq!(loaded.len(), 5);
    assert!(loaded.iter().all(|tool| tool.skill == "team/clock"));
    assert!(catalog.load("team/unknown").is_none());
}

#[test]
fn search_mode_holds_only_the_strict_search_pair() {
    for format in [
        ExportFormat::Anthropic,
        ExportFormat::OpenAi,
        ExportFormat::Mcp,
    ] {
        let catalog = catalog(format);
        let plan = catalog.plan(Mode::Search, 0);
        assert!(plan.eager.is_empty());
        let first = catalog.initial_tools(&plan);
        assert_eq!(first.len(), 2);
        let (names, schemas): (Vec<&str>, Vec<&Value>) = first
            .iter()
            .map(|tool| match format {
                ExportFormat::OpenAi => {
                    assert_eq!(tool["function"]["strict"], json!(true));
                    (
                        tool["function"]["name"].as_str().unwrap(),
                        &tool["function"]["parameters"],
                    )
                }
                ExportFormat::Anthropic => (tool["name"].as_str().unwrap(), &tool["input_schema"]),
                ExportFormat::Mcp => (tool["name"].as_str().unwrap(), &tool["inputSchema"]),
            })
            .unzip();
        assert_eq!(names, [SEARCH, CALL]);
        for schema in schemas {
            strict_valid(schema);
        }
    }
}

#[test]
fn search_ranks_every_tool_and_finds_them_by_name() {
    let catalog = catalog(ExportFormat::Anthropic);
    let found = catalog.search("timezone conversion", 3);
    assert!(!found.is_empty());
    assert!(
        found.iter().all(|m| m.tool.skill == "team/clock"),
        "{found:?}"
    );
    assert_eq!(
        catalog.search("whoami", 1)[0].tool.export_name,
        "team__whoami"
    );
    assert_eq!(
        catalog.search("op", 500).len(),
        crate::plan::MAX_SEARCH_LIMIT
    );
    assert_eq!(
        catalog.tool("mcp:time/time_op_2").unwrap().export_name,
        "time__time_op_2"
    );
    assert_eq!(
        catalog.tool("time__time_op_2").unwrap().registry_name,
        "mcp:time/time_op_2"
    );
}

#[test]
fn auto_takes_all_within_the_budget_else_the_cheaper_mode() {
    let catalog = catalog(ExportFormat::Anthropic);
    let all = catalog.all_cost().tokens;
    let within = catalog.plan(Mode::Auto, all);
    assert_eq!((within.requested, within.mode), (Mode::Auto, Mode::All));
    let over = catalog.plan(Mode::Auto, all - 1);
    let skills = catalog.plan(Mode::Skills, 0).cost.tokens;
    let search = catalog.plan(Mode::Search, 0).cost.tokens;
    let expected = if skills <= search {
        Mode::Skills
    } else {
        Mode::Search
    };
    assert_eq!(over.mode, expected);
    assert_eq!(over.cost.tokens, skills.min(search));
    assert!(over.fits());
}

#[test]
fn anthropic_export_defers_with_the_tool_search_tool() {
    let catalog = catalog(ExportFormat::Anthropic);
    let search_tool =
        json!({"type": ANTHROPIC_TOOL_SEARCH_TYPE, "name": ANTHROPIC_TOOL_SEARCH_NAME});
    let deferred = |tools: &[Value]| {
        tools
            .iter()
            .filter(|t| t.get("defer_loading") == Some(&json!(true)))
            .count()
    };
    let all = catalog.export(Defer::All, 1_000_000);
    assert_eq!(all.len(), 59);
    assert_eq!(deferred(&all), 58);
    assert_eq!(all.last(), Some(&search_tool));
    // Auto: nothing deferred while everything fits.
    let budget = catalog.all_cost().tokens;
    assert_eq!(
        catalog.export(Defer::Auto, budget),
        catalog.export(Defer::None, 0)
    );
    // Over it: the root's own tools stay, the rest are deferred.
    let auto = catalog.export(Defer::Auto, budget - 1);
    assert_eq!(deferred(&auto), 55);
    let loaded: Vec<&str> = auto
        .iter()
        .filter(|t| t.get("defer_loading").is_none())
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(
        loaded,
        [
            "team__read_notes",
            "team__write_notes",
            "team__whoami",
            ANTHROPIC_TOOL_SEARCH_NAME
        ]
    );
    assert_eq!(auto.last(), Some(&search_tool));
    // A budget too small even for the root's tools defers them too.
    assert_eq!(deferred(&catalog.export(Defer::Auto, 10)), 58);
}

#[test]
fn other_exports_get_the_meta_tools() {
    let catalog = catalog(ExportFormat::OpenAi);
    let names = |tools: Vec<Value>| -> Vec<String> {
        tools
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(names(catalog.export(Defer::All, 1_000_000)), [SEARCH, CALL]);
    let auto = names(catalog.export(Defer::Auto, 100));
    assert!(
        auto.last().is_some_and(|n| n == LOADER || n == CALL),
        "{auto:?}"
    );
    assert_eq!(catalog.export(Defer::Auto, 1_000_000).len(), 58);
    // MCP: the included MCP tools only (the root's custom tools have no
    // executor in the gateway), and the loader annotated read-only.
    let mcp = catalog_mcp_skills();
    assert_eq!(mcp["annotations"], json!({"readOnlyHint": true}));
}

fn catalog_mcp_skills() -> Value {
    let catalog = catalog(ExportFormat::Mcp);
    assert_eq!(catalog.tools().len(), 55);
    let plan = catalog.plan(Mode::Skills, 0);
    assert!(plan.eager.is_empty());
    catalog.initial_tools(&plan).pop().unwrap()
}

#[test]
fn budget_reports_every_mode_and_skill() {
    let catalog = catalog(ExportFormat::Anthropic);
    let all = catalog.all_cost();
    let report = catalog.budget(all.tokens / 2);
    let modes: Vec<Mode> = report.modes.iter().map(|m| m.mode).collect();
    assert_eq!(modes, Mode::ALL);
    assert_eq!(report.modes[0].tokens, all.tokens);
    assert!((report.modes[0].percent_of_all - 100.0).abs() < f64::EPSILON);
    assert!(!report.modes[0].fits);
    assert_ne!(report.modes[3].applied, Mode::Auto);
    assert!(report.modes[3].fits);
    let skills: Vec<(&str, bool, usize)> = report
        .skills
        .iter()
        .map(|s| (s.skill.as_str(), s.root, s.tools))
        .collect();
    assert_eq!(
        skills,
        [
            (ROOT, true, 3),
            ("team/github", false, 30),
            ("team/files", false, 20),
            ("team/clock", false, 5)
        ]
    );
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["modes"][1]["mode"], json!("skills"));
    assert_eq!(json["method"], json!(crate::budget::METHOD));
}

#[test]
fn an_unknown_name_gets_a_did_you_mean() {
    let catalog = catalog(ExportFormat::Anthropic);
    // A typo: the one name it is.
    assert_eq!(catalog.suggest("team__whoamj"), ["team__whoami"]);
    // No typo of any name: the best matches of its words.
    let suggested = catalog.suggest("convert timezone");
    assert!(
        !suggested.is_empty() && suggested.len() <= 3,
        "{suggested:?}"
    );
    assert!(
        suggested.iter().all(|name| name.starts_with("time__")),
        "{suggested:?}"
    );
    assert!(catalog.suggest("kubernetes").is_empty());
}

/// A catalogue of tools exported already, as the gateway builds one from
/// what it serves: every root's own tools come first in `skills`, and a
/// meta tool named like a tool is a collision.
#[test]
fn a_catalogue_of_exported_tools_has_several_roots_and_finds_collisions() {
    let (resolution, descriptions) = resolution();
    let full = Catalog::new(ROOT, &resolution.entries, ExportFormat::Mcp, &descriptions);
    let parts: Vec<(crate::CatalogTool, crate::ToolText)> = full
        .tools()
        .iter()
        .map(|tool| {
            let text = crate::ToolText {
                name: tool.registry_name.clone(),
                description: tool.value["description"].as_str().unwrap_or("").to_owned(),
                skills: vec![tool.skill.clone()],
                parameters: vec![],
            };
            (tool.clone(), text)
        })
        .collect();
    let two = Catalog::from_tools(
        &["team/clock", "team/files"],
        ExportFormat::Mcp,
        parts.clone(),
        &descriptions,
    );
    assert_eq!(two.root(), "team/clock");
    let plan = two.plan(Mode::Skills, 0);
    assert_eq!(plan.eager.len(), 25);
    let loader = catalog_meta(&two, &plan);
    assert_eq!(
        loader["inputSchema"]["properties"]["skills"]["items"]["enum"],
        json!(["team/github"])
    );
    assert!(two.collisions(&plan).is_empty());
    assert_eq!(two.search("timezone", 1)[0].tool.skill, "team/clock");
    // A tool exported as `search_tools` collides with the search pair only.
    let mut renamed = parts;
    renamed[0].0.export_name = SEARCH.into();
    renamed[0].0.value["name"] = json!(SEARCH);
    let named = Catalog::from_tools(&[ROOT], ExportFormat::Mcp, renamed, &descriptions);
    let search = named.plan(Mode::Search, 0);
    let collisions = named.collisions(&search);
    assert_eq!(collisions.len(), 1);
    assert_eq!(collisions[0].meta, SEARCH);
    assert_eq!(collisions[0].tool.registry_name, "mcp:github/github_op_0");
    assert!(named.collisions(&named.plan(Mode::Skills, 0)).is_empty());
    assert!(named.collisions(&named.plan(Mode::All, 0)).is_empty());
}

fn catalog_meta(catalog: &Catalog, plan: &crate::Disclosure) -> Value {
    catalog.initial_tools(plan).pop().unwrap()
}
