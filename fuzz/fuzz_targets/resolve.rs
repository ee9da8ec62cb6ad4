//! Resolution (`SkillResolver`) over arbitrary small skill graphs, against
//! the naive recursive expansion the specification describes, written out
//! below.
//!
//! Up to 8 skills over a pool of 8 names (so includes may be missing, shared,
//! cyclic or self-includes), each with tool refs, includes (with overrides),
//! inline tools, MCP sources and agent sources, plus skill-level overrides;
//! some override keys are the non-overridable `name`, `source_skill`,
//! `is_inline`.
//!
//! Checks: no panic; entry names unique; the same entries, in the same order,
//! with the same source skill, kind, overrides and include path as the naive
//! expansion (includes depth-first left to right, then the skill's own
//! entries: tool refs, inline tools, MCP tools, agent skills; the first
//! occurrence fixes the position, the last one the entry); the same first
//! error (missing include, cycle, non-overridable field) when it fails;
//! `check`, `diagnose`, `explain` and `include_graph` agree with `resolve`.
#![no_main]

use std::collections::HashMap;

use agents_core::{
    AgentSource, Include, ItemKind, McpSource, NON_OVERRIDABLE_FIELDS, Resolution, ResolveError,
    Skill, SkillItem, SkillName, SkillResolver, ToolRegistry, ToolSource, ToolSpec, ValueMap,
    include_graph,
};
use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

const SKILLS: u8 = 8;
const TOOLS: u8 = 6;
/// Naive expansions larger than this are not compared (the graph is a
/// lattice with too many paths for the naive walk).
const BUDGET: usize = 20_000;

#[derive(Debug, Arbitrary)]
struct Input {
    root: u8,
    skills: Vec<SkillIn>,
    /// Which of the tool pool is registered (bit i: `custom/t{i}`).
    registered: u8,
}

#[derive(Debug, Arbitrary)]
struct SkillIn {
    name: u8,
    items: Vec<ItemIn>,
    overrides: Vec<(TargetIn, FieldsIn)>,
}

#[derive(Debug, Arbitrary)]
enum ItemIn {
    Tool(u8),
    Include(u8, FieldsIn),
    Inline,
    Mcp(u8, Option<Vec<u8>>),
    Agent(u8),
}

/// What a skill-level override is keyed by.
#[derive(Debug, Arbitrary)]
enum TargetIn {
    Tool(u8),
    Inline(u8, u8),
    Mcp(u8, u8),
    Agent(u8),
}

#[derive(Debug, Arbitrary)]
struct FieldsIn(Vec<(u8, u8)>);

fn skill_name(index: u8) -> SkillName {
    SkillName::new(&format!("fuzz/s{}", index % SKILLS)).unwrap()
}

fn tool_name(index: u8) -> String {
    format!("custom/t{}", index % TOOLS)
}

fn server(index: u8) -> String {
    format!("m{}", index % 3)
}

fn fields(input: &FieldsIn) -> ValueMap {
    let mut map = ValueMap::new();
    for (key, value) in input.0.iter().take(3) {
        // Mostly ordinary keys; now and then a non-overridable one.
        let key = if *key >= 240 {
            NON_OVERRIDABLE_FIELDS[usize::from(*key) % NON_OVERRIDABLE_FIELDS.len()]
        } else {
            ["timeout_s", "approval", "audit", "description"][usize::from(*key) % 4]
        };
        map.insert(key.to_owned(), Value::from(*value % 4));
    }
    map
}

fn target(input: &TargetIn) -> String {
    match input {
        TargetIn::Tool(t) => tool_name(*t),
        TargetIn::Inline(s, i) => format!("{}/_anon_{}", skill_name(*s), i % 3),
        TargetIn::Mcp(s, t) => format!("mcp:{}/x{}", server(*s), t % 3),
        TargetIn::Agent(p) => format!("agent_skill:p{}", p % 3),
    }
}

fn build(input: &Input) -> HashMap<SkillName, Skill> {
    let mut skills = HashMap::new();
    for spec in input.skills.iter().take(usize::from(SKILLS)) {
        let mut skill = Skill::new(skill_name(spec.name));
        for item in spec.items.iter().take(6) {
            skill.items.push(match item {
                ItemIn::Tool(t) => SkillItem::ToolRef {
                    name: tool_name(*t).into(),
                },
                ItemIn::Include(s, o) => SkillItem::Include(Include {
                    skill: skill_name(*s),
                    overrides: fields(o).into(),
                }),
                ItemIn::Inline => SkillItem::InlineTool(Box::default()),
                ItemIn::Mcp(s, tools) => SkillItem::McpSource(Box::new(McpSource {
                    server: server(*s),
                    tools: tools
                        .as_ref()
                        .map(|t| t.iter().take(3).map(|t| format!("x{}", t % 3)).collect()),
                    ..McpSource::default()
                })),
                ItemIn::Agent(p) => SkillItem::AgentSource(AgentSource {
                    path: format!("p{}", p % 3),
                }),
            });
        }
        for (key, value) in spec.overrides.iter().take(3) {
            skill.overrides.insert(target(key), fields(value));
        }
        // A later definition of the same name replaces the earlier one.
        skills.insert(skill.name.clone(), skill);
    }
    skills
}

/// One occurrence in the naive expansion.
#[derive(Debug, Clone, PartialEq)]
struct Occurrence {
    name: String,
    source_skill: SkillName,
    kind: ItemKind,
    overrides: ValueMap,
    path: Vec<SkillName>,
}

fn blocked(fields: &ValueMap) -> Vec<String> {
    NON_OVERRIDABLE_FIELDS
        .iter()
        .filter(|f| fields.contains_key(**f))
        .map(|f| (*f).to_owned())
        .collect()
}

fn joined(path: &[SkillName]) -> String {
    path.iter()
        .map(SkillName::as_str)
        .collect::<Vec<_>>()
        .join(" -> ")
}

/// A skill's own entries, in the specification's order.
fn own(skill: &Skill) -> Vec<(String, ItemKind)> {
    let mut out = Vec::new();
    for item in &skill.items {
        if let SkillItem::ToolRef { name } = item {
            out.push((name.to_string(), ItemKind::ToolRef));
        }
    }
    let inline = skill
        .items
        .iter()
        .filter(|i| matches!(i, SkillItem::InlineTool(_)));
    for (index, _) in inline.enumerate() {
        out.push((
            format!("{}/_anon_{index}", skill.name),
            ItemKind::InlineTool,
        ));
    }
    for item in &skill.items {
        if let SkillItem::McpSource(source) = item {
            // Nothing is cached: the allow-list's names, uncached.
            for tool in source.tools.iter().flatten() {
                out.push((format!("mcp:{}/{tool}", source.server), ItemKind::McpSource));
            }
        }
    }
    for item in &skill.items {
        if let SkillItem::AgentSource(source) = item {
            out.push((
                format!("agent_skill:{}", source.path),
                ItemKind::AgentSource,
            ));
        }
    }
    out
}

enum Naive {
    Failed(ResolveError),
    TooLarge,
}

/// Expands `skill` (reached by `path`, carrying the include overrides
/// `inherited`) into `out`, recursing into every include every time.
fn expand(
    skills: &HashMap<SkillName, Skill>,
    skill: &Skill,
    path: &mut Vec<SkillName>,
    inherited: &ValueMap,
    out: &mut Vec<Occurrence>,
) -> Result<(), Naive> {
    let mut own_blocked: Vec<String> = Vec::new();
    for fields in skill.overrides.values() {
        for field in blocked(fields) {
            if !own_blocked.contains(&field) {
                own_blocked.push(field);
            }
        }
    }
    if !own_blocked.is_empty() {
        return Err(Naive::Failed(ResolveError::NonOverridable {
            fields: own_blocked,
            skill: skill.name.clone(),
            path: joined(path),
        }));
    }
    for include in skill.includes() {
        let fields = blocked(&include.overrides);
        if !fields.is_empty() {
            return Err(Naive::Failed(ResolveError::NonOverridable {
                fields,
                skill: skill.name.clone(),
                path: format!("{} -> {}", joined(path), include.skill),
            }));
        }
        if let Some(start) = path.iter().position(|s| *s == include.skill) {
            let mut cycle = path[start..].to_vec();
            cycle.push(include.skill.clone());
            // A long cycle keeps its first and last five skills only.
            let len = cycle.len();
            if len > 11 {
                cycle.drain(5..len - 5);
            }
            return Err(Naive::Failed(ResolveError::Cycle { cycle, len }));
        }
        let Some(child) = skills.get(&include.skill) else {
            return Err(Naive::Failed(ResolveError::MissingInclude {
                skill: skill.name.clone(),
                include: include.skill.clone(),
                path: joined(path),
            }));
        };
        // Shallow merge: the include's overrides, the outer ones on top.
        let mut merged = (*include.overrides).clone();
        for (key, value) in inherited {
            merged.insert(key.clone(), value.clone());
        }
        path.push(child.name.clone());
        expand(skills, child, path, &merged, out)?;
        path.pop();
    }
    for (name, kind) in own(skill) {
        let mut overrides = skill.overrides.get(&name).cloned().unwrap_or_default();
        for (key, value) in inherited {
            overrides.insert(key.clone(), value.clone());
        }
        out.push(Occurrence {
            name,
            source_skill: skill.name.clone(),
            kind,
            overrides,
            path: path.clone(),
        });
        if out.len() > BUDGET {
            return Err(Naive::TooLarge);
        }
    }
    Ok(())
}

/// Entries of the naive expansion: first position, last occurrence.
fn naive(
    skills: &HashMap<SkillName, Skill>,
    root: &SkillName,
) -> Result<Vec<(Occurrence, Occurrence)>, Naive> {
    let skill = skills
        .get(root)
        .ok_or_else(|| Naive::Failed(ResolveError::SkillNotFound { name: root.clone() }))?;
    let mut all = Vec::new();
    expand(
        skills,
        skill,
        &mut vec![root.clone()],
        &ValueMap::new(),
        &mut all,
    )?;
    let mut order: Vec<String> = Vec::new();
    let mut first: HashMap<String, Occurrence> = HashMap::new();
    let mut last: HashMap<String, Occurrence> = HashMap::new();
    for occurrence in all {
        if !first.contains_key(&occurrence.name) {
            order.push(occurrence.name.clone());
            first.insert(occurrence.name.clone(), occurrence.clone());
        }
        last.insert(occurrence.name.clone(), occurrence);
    }
    Ok(order
        .into_iter()
        .map(|name| (first.remove(&name).unwrap(), last.remove(&name).unwrap()))
        .collect())
}

fn compare(resolution: &Resolution, expected: &[(Occurrence, Occurrence)], tools: &ToolRegistry) {
    let names: Vec<&str> = resolution.entries.iter().map(|e| e.name.as_str()).collect();
    let mut unique = names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(
        unique.len(),
        names.len(),
        "duplicate entry names: {names:?}"
    );
    let wanted: Vec<&str> = expected
        .iter()
        .map(|(_, last)| last.name.as_str())
        .collect();
    assert_eq!(names, wanted, "entry order");
    for (entry, (_, last)) in resolution.entries.iter().zip(expected) {
        assert_eq!(
            entry.source_skill, last.source_skill,
            "{}: source_skill",
            entry.name
        );
        assert_eq!(entry.kind, last.kind, "{}: kind", entry.name);
        assert_eq!(
            entry.is_inline,
            last.kind == ItemKind::InlineTool,
            "{}",
            entry.name
        );
        assert_eq!(entry.overrides, last.overrides, "{}: overrides", entry.name);
        let path: Vec<SkillName> = entry.include_path.skills().into_iter().cloned().collect();
        assert_eq!(path, last.path, "{}: include path", entry.name);
        let known = match entry.kind {
            ItemKind::ToolRef => tools.get(&entry.name).is_some(),
            ItemKind::InlineTool => true,
            _ => false,
        };
        assert_eq!(entry.tool.is_some(), known, "{}: tool spec", entry.name);
    }
}

fuzz_target!(|input: Input| {
    let skills = build(&input);
    let mut tools = ToolRegistry::new();
    for t in 0..TOOLS {
        if input.registered & (1 << t) != 0 {
            tools
                .register(
                    ToolSpec::new(tool_name(t), "a tool", ToolSource::Custom),
                    false,
                )
                .unwrap();
        }
    }
    let root = skill_name(input.root);
    let resolver = SkillResolver::new(&skills, &tools);
    let resolved = resolver.resolve(&root);
    let checked = resolver.check(&root);
    let (diagnosed, _) = resolver.diagnose(&root);
    assert_eq!(checked, diagnosed);
    let _ = include_graph(&root, &skills);
    match &resolved {
        Ok(resolution) => {
            assert!(checked.is_empty(), "resolved, yet check says {checked:?}");
            let (again, explanations) = resolver.explain(&root).unwrap();
            assert_eq!(&again, resolution);
            assert_eq!(explanations.len(), resolution.entries.len());
            for (entry, explanation) in resolution.entries.iter().zip(&explanations) {
                let won: Vec<_> = explanation.occurrences.iter().filter(|o| o.won).collect();
                assert_eq!(won.len(), 1, "{}: {explanation:?}", entry.name);
                let last = explanation.occurrences.last().unwrap();
                assert!(last.won && last.include_path == entry.include_path);
                assert_eq!(last.overrides, entry.overrides);
                for origin in &explanation.overrides {
                    assert_eq!(Some(&origin.winner.value), entry.overrides.get(&origin.key));
                }
            }
            match naive(&skills, &root) {
                Ok(expected) => {
                    compare(resolution, &expected, &tools);
                    for (explanation, (first, _)) in explanations.iter().zip(&expected) {
                        let path: Vec<SkillName> = explanation.occurrences[0]
                            .include_path
                            .skills()
                            .into_iter()
                            .cloned()
                            .collect();
                        assert_eq!(path, first.path, "{}: first occurrence", first.name);
                    }
                }
                Err(Naive::TooLarge) => {}
                Err(Naive::Failed(err)) => panic!("resolved, but the naive expansion fails: {err}"),
            }
        }
        Err(err) => {
            assert_eq!(checked.first(), Some(err), "check disagrees with resolve");
            match naive(&skills, &root) {
                Ok(_) => panic!("the naive expansion resolves, but resolve fails: {err}"),
                Err(Naive::TooLarge) => {}
                Err(Naive::Failed(expected)) => assert_eq!(err, &expected, "first error"),
            }
        }
    }
});
