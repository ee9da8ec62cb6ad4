//! The include closure of a skill as a graph (`agents skill graph`): skills
//! as nodes, includes as edges labelled with their overrides, MCP servers and
//! Agent Skills as leaves. Cycles and missing includes are drawn, not errors,
//! so the graph is how a user sees what is wrong. One iterative walk visits
//! each skill once.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde::Serialize;
use serde_json::Value;

use crate::name::SkillName;
use crate::resolve::SkillSource;
use crate::skill::{SkillItem, ValueMap};

/// What a node stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    /// A registered skill.
    Skill,
    /// An included skill that is not registered.
    MissingSkill,
    /// An MCP server (`mcp:{server}`).
    McpServer,
    /// An Agent Skill folder (`agent_skill:{path}`).
    AgentSkill,
}

/// One node of an [`IncludeGraph`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GraphNode {
    /// Skill name, `mcp:{server}` or `agent_skill:{path}`.
    pub id: String,
    /// What it is.
    pub kind: NodeKind,
}

/// One edge of an [`IncludeGraph`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GraphEdge {
    /// The including skill.
    pub from: String,
    /// The included skill or the leaf.
    pub to: String,
    /// The include's overrides (empty for leaves).
    pub overrides: ValueMap,
    /// True when the edge closes a cycle of includes.
    pub cycle: bool,
}

/// The include closure of one skill.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IncludeGraph {
    /// The root skill.
    pub root: SkillName,
    /// Nodes in the order the depth-first walk met them.
    pub nodes: Vec<GraphNode>,
    /// Edges in the order written, skill by skill.
    pub edges: Vec<GraphEdge>,
}

/// Builds the include graph of `root` (a missing root is one missing node).
pub fn include_graph(root: &SkillName, skills: &dyn SkillSource) -> IncludeGraph {
    let mut graph = IncludeGraph {
        root: root.clone(),
        nodes: Vec::new(),
        edges: Vec::new(),
    };
    // `true` while on the stack, `false` once finished.
    let mut state: HashMap<String, bool> = HashMap::new();
    let mut known: HashMap<String, ()> = HashMap::new();
    let mut add_node = |graph: &mut IncludeGraph, id: String, kind: NodeKind| {
        if known.insert(id.clone(), ()).is_none() {
            graph.nodes.push(GraphNode { id, kind });
        }
    };
    let Some(root_skill) = skills.skill(root) else {
        add_node(&mut graph, root.to_string(), NodeKind::MissingSkill);
        return graph;
    };
    add_node(&mut graph, root.to_string(), NodeKind::Skill);
    let mut stack = vec![(root_skill, 0usize)];
    state.insert(root.to_string(), true);
    while let Some((skill, next)) = stack.last_mut() {
        let skill = *skill;
        let item = skill.items.get(*next);
        *next += 1;
        let Some(item) = item else {
            state.insert(skill.name.to_string(), false);
            stack.pop();
            continue;
        };
        let from = skill.name.to_string();
        match item {
            SkillItem::Include(include) => {
                let to = include.skill.to_string();
                let cycle = state.get(&to) == Some(&true);
                graph.edges.push(GraphEdge {
                    from,
                    to: to.clone(),
                    overrides: (*include.overrides).clone(),
                    cycle,
                });
                if state.contains_key(&to) {
                    continue;
                }
                match skills.skill(&include.skill) {
                    Some(child) => {
                        add_node(&mut graph, to.clone(), NodeKind::Skill);
                        state.insert(to, true);
                        stack.push((child, 0));
                    }
                    None => {
                        add_node(&mut graph, to.clone(), NodeKind::MissingSkill);
                        state.insert(to, false);
                    }
                }
            }
            SkillItem::McpSource(source) => {
                let to = format!("mcp:{}", source.server);
                add_node(&mut graph, to.clone(), NodeKind::McpServer);
                graph.edges.push(GraphEdge {
                    from,
                    to,
                    overrides: ValueMap::new(),
                    cycle: false,
                });
            }
            SkillItem::AgentSource(source) => {
                let to = format!("agent_skill:{}", source.path);
                add_node(&mut graph, to.clone(), NodeKind::AgentSkill);
                graph.edges.push(GraphEdge {
                    from,
                    to,
                    overrides: ValueMap::new(),
                    cycle: false,
                });
            }
            SkillItem::ToolRef { .. } | SkillItem::InlineTool(_) => {}
        }
    }
    graph
}

fn label(overrides: &ValueMap) -> String {
    overrides
        .iter()
        .map(|(key, value)| match value {
            Value::String(text) => format!("{key}: {text}"),
            other => format!("{key}: {other}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn dot_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' | '\r' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Text for a quoted Mermaid label. Mermaid reads HTML and `#…;` entity
/// codes inside labels, and a label starting with a backquote as Markdown:
/// each of those characters is written as its entity code, so a skill name
/// or an override value shows as written and never becomes markup.
fn mermaid_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("#quot;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '#' => out.push_str("#35;"),
            '`' => out.push_str("#96;"),
            '&' => out.push_str("#amp;"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

impl IncludeGraph {
    /// Graphviz `dot`: skills as boxes, missing skills dashed red, MCP servers
    /// as ellipses, Agent Skills as notes, cycle edges red.
    pub fn to_dot(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "digraph {} {{", dot_quote(self.root.as_str()));
        let _ = writeln!(out, "  rankdir=LR;");
        for node in &self.nodes {
            let attrs = match node.kind {
                NodeKind::Skill => "shape=box".to_owned(),
                NodeKind::MissingSkill => format!(
                    "shape=box, style=dashed, color=red, label={}",
                    dot_quote(&format!("{} (missing)", node.id))
                ),
                NodeKind::McpServer => "shape=ellipse".to_owned(),
                NodeKind::AgentSkill => "shape=note".to_owned(),
            };
            let _ = writeln!(out, "  {} [{attrs}];", dot_quote(&node.id));
        }
        for edge in &self.edges {
            let mut attrs = Vec::new();
            let text = label(&edge.overrides);
            if edge.cycle {
                attrs.push("color=red".to_owned());
                attrs.push(format!(
                    "label={}",
                    dot_quote(&if text.is_empty() {
                        "cycle".to_owned()
                    } else {
                        format!("cycle; {text}")
                    })
                ));
            } else if !text.is_empty() {
                attrs.push(format!("label={}", dot_quote(&text)));
            }
            let attrs = if attrs.is_empty() {
                String::new()
            } else {
                format!(" [{}]", attrs.join(", "))
            };
            let _ = writeln!(
                out,
                "  {} -> {}{attrs};",
                dot_quote(&edge.from),
                dot_quote(&edge.to)
            );
        }
        out.push_str("}\n");
        out
    }

    /// Mermaid `flowchart`: skills as rectangles, missing skills in the
    /// `missing` class, MCP servers as stadiums, Agent Skills as subroutines,
    /// cycle edges dotted.
    pub fn to_mermaid(&self) -> String {
        let ids: HashMap<&str, String> = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, node)| (node.id.as_str(), format!("n{i}")))
            .collect();
        let mut out = String::from("flowchart LR\n");
        for node in &self.nodes {
            let Some(id) = ids.get(node.id.as_str()) else {
                continue;
            };
            let text = mermaid_text(&node.id);
            let _ = match node.kind {
                NodeKind::Skill => writeln!(out, "  {id}[\"{text}\"]"),
                NodeKind::MissingSkill => {
                    writeln!(out, "  {id}[\"{text} (missing)\"]:::missing")
                }
                NodeKind::McpServer => writeln!(out, "  {id}([\"{text}\"])"),
                NodeKind::AgentSkill => writeln!(out, "  {id}[[\"{text}\"]]"),
            };
        }
        for edge in &self.edges {
            let (Some(from), Some(to)) = (ids.get(edge.from.as_str()), ids.get(edge.to.as_str()))
            else {
                continue;
            };
            let text = mermaid_text(&label(&edge.overrides));
            let arrow = if edge.cycle { "-.->" } else { "-->" };
            let text = match (edge.cycle, text.is_empty()) {
                (true, true) => "cycle".to_owned(),
                (true, false) => format!("cycle; {text}"),
                (false, _) => text,
            };
            if text.is_empty() {
                let _ = writeln!(out, "  {from} {arrow} {to}");
            } else {
                let _ = writeln!(out, "  {from} {arrow}|\"{text}\"| {to}");
            }
        }
        if self.nodes.iter().any(|n| n.kind == NodeKind::MissingSkill) {
            out.push_str("  classDef missing stroke:#d00,stroke-dasharray:5 5\n");
        }
        out
    }
}
