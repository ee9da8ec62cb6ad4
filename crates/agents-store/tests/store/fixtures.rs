//! Small builders for skills and tools.

use agents_core::{
    AgentSource, Include, InlineTool, McpSource, Skill, SkillItem, SkillName, ToolSource, ToolSpec,
};
use serde_json::json;

pub fn name(raw: &str) -> SkillName {
    SkillName::new(raw).unwrap()
}

pub fn skill(raw: &str, items: Vec<SkillItem>) -> Skill {
    let mut skill = Skill::new(name(raw));
    skill.items = items;
    skill
}

pub fn tool_ref(tool: &str) -> SkillItem {
    SkillItem::ToolRef { name: tool.into() }
}

pub fn include(raw: &str) -> SkillItem {
    SkillItem::Include(Include {
        skill: name(raw),
        overrides: Default::default(),
    })
}

/// A skill that uses every item kind, overrides and nested metadata whose
/// key order is not alphabetical.
pub fn everything(raw: &str) -> Skill {
    let mut skill = skill(raw, Vec::new());
    skill.description = Some("does everything — ünïcode included".into());
    skill.version = Some("1.2.3".into());
    skill.metadata = json!({"zeta": 1, "alpha": {"nested": [1, 2.5, "x"], "b": null}, "mid": true})
        .as_object()
        .unwrap()
        .clone();
    skill.overrides.insert(
        "builtin/read_file".into(),
        json!({"read_only": true, "description": "reads"})
            .as_object()
            .unwrap()
            .clone(),
    );
    skill.overrides.insert(
        "mcp:gh/create_issue".into(),
        json!({"writes": false}).as_object().unwrap().clone(),
    );
    let include_with = Include {
        skill: name("lib/helpers"),
        overrides: json!({"checkpointable": true})
            .as_object()
            .unwrap()
            .clone()
            .into(),
    };
    let mut mcp = McpSource {
        server: "gh".into(),
        command: Some("npx".into()),
        args: vec!["-y".into(), "server".into()],
        tools: Some(vec!["create_issue".into()]),
        timeout_s: Some(30),
        ..McpSource::default()
    };
    mcp.env.insert("TOKEN".into(), "${GITHUB_TOKEN}".into());
    mcp.env.insert("A".into(), "1".into());
    skill.items = vec![
        tool_ref("builtin/read_file"),
        SkillItem::InlineTool(Box::new(InlineTool {
            description: Some("first inline".into()),
            writes: true,
            input_schema: Some(json!({"type": "object", "properties": {"q": {"type": "string"}}})),
            ..InlineTool::default()
        })),
        SkillItem::Include(include_with),
        SkillItem::McpSource(Box::new(mcp)),
        SkillItem::AgentSource(AgentSource {
            path: "~/skills/pdf".into(),
        }),
        include("lib/plain"),
        SkillItem::InlineTool(Box::new(InlineTool {
            side_effects: Some(false),
            ..InlineTool::default()
        })),
        SkillItem::McpSource(Box::new(McpSource {
            server: "remote".into(),
            url: Some("https://mcp.example/mcp".into()),
            ..McpSource::default()
        })),
        tool_ref("mcp:gh/create_issue"),
    ];
    skill
}

pub fn tool(tool: &str, source: ToolSource) -> ToolSpec {
    ToolSpec::new(tool, format!("the {tool} tool"), source)
}

pub fn mcp_tool(server: &str, tool: &str) -> ToolSpec {
    let mut spec = ToolSpec::new(format!("mcp:{server}/{tool}"), "from mcp", ToolSource::Mcp);
    spec.source_metadata.insert("server".into(), json!(server));
    spec.input_schema = Some(json!({"type": "object"}));
    spec.read_only = Some(true);
    spec
}
