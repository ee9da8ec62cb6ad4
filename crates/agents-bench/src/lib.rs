//! A deterministic include DAG for the in-process resolver benchmark that
//! `bench/run` drives (see the binary `agents-bench`).
//!
//! Skill `bench/sNNNNN` has 7 tool refs (out of a catalogue of
//! [`CATALOGUE`] tools) and up to 3 includes, each to a skill at most
//! [`WINDOW`] places after it, so the graph is acyclic by construction.
//! `bench/root` includes every skill nothing else includes, so its closure
//! is the whole graph.

#![allow(
    clippy::indexing_slicing,
    reason = "a benchmark generator indexing the tables it builds; not fed user input"
)]

use std::collections::HashSet;

use agents_core::{
    Include, InvalidSkillName, Skill, SkillItem, SkillMap, SkillName, ToolRegistry, ToolSource,
    ToolSpec,
};

/// Distinct tool names the skills refer to.
pub const CATALOGUE: usize = 600;
/// Tool refs per skill.
pub const TOOL_REFS: usize = 7;
/// Most includes per skill.
pub const MAX_INCLUDES: usize = 3;
/// How far ahead an include may point.
pub const WINDOW: usize = 50;

/// SplitMix64: a tiny, well-known seeded generator (no dependency needed).
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator started at `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `0..bound` (`bound` > 0; the tiny modulo bias is irrelevant here).
    pub fn below(&mut self, bound: usize) -> usize {
        (self.next_u64() % bound as u64) as usize
    }
}

/// The generated graph: skills by name, the root and the tool catalogue.
#[derive(Debug)]
pub struct Dag {
    /// Every skill, `bench/root` included.
    pub skills: SkillMap,
    /// `bench/root`.
    pub root: SkillName,
    /// The [`CATALOGUE`] custom tools the skills refer to.
    pub tools: ToolRegistry,
    /// Include edges, root's included.
    pub includes: usize,
}

fn skill_name(i: usize) -> Result<SkillName, InvalidSkillName> {
    SkillName::new(&format!("bench/s{i:05}"))
}

/// The tool name `custom/tNNN`.
pub fn tool_name(j: usize) -> String {
    format!("custom/t{j:03}")
}

/// Builds the `n`-skill DAG for `seed`; the same arguments give the same graph.
pub fn generate(n: usize, seed: u64) -> Result<Dag, String> {
    let mut rng = SplitMix64::new(seed);
    let mut tools = ToolRegistry::new();
    for j in 0..CATALOGUE {
        tools
            .register(
                ToolSpec::new(tool_name(j), "bench tool", ToolSource::Custom),
                false,
            )
            .map_err(|err| err.to_string())?;
    }
    let mut included = vec![false; n];
    let mut skills = SkillMap::with_capacity_and_hasher(n + 1, Default::default());
    let mut edges = 0;
    for i in 0..n {
        let mut skill = Skill::new(skill_name(i).map_err(|err| err.to_string())?);
        for _ in 0..TOOL_REFS {
            skill.items.push(SkillItem::ToolRef {
                name: tool_name(rng.below(CATALOGUE)).into(),
            });
        }
        let ahead = (n - 1 - i).min(WINDOW);
        let mut targets: Vec<usize> = Vec::with_capacity(MAX_INCLUDES);
        if ahead > 0 {
            for _ in 0..=rng.below(MAX_INCLUDES) {
                let target = i + 1 + rng.below(ahead);
                if !targets.contains(&target) {
                    targets.push(target);
                }
            }
        }
        for target in targets {
            included[target] = true;
            edges += 1;
            skill.items.push(SkillItem::Include(Include {
                skill: skill_name(target).map_err(|err| err.to_string())?,
                overrides: Default::default(),
            }));
        }
        skills.insert(skill.name.clone(), skill);
    }
    let root_name = SkillName::new("bench/root").map_err(|err| err.to_string())?;
    let mut root = Skill::new(root_name.clone());
    for (i, _) in included.iter().enumerate().filter(|(_, inc)| !**inc) {
        edges += 1;
        root.items.push(SkillItem::Include(Include {
            skill: skill_name(i).map_err(|err| err.to_string())?,
            overrides: Default::default(),
        }));
    }
    skills.insert(root_name.clone(), root);
    Ok(Dag {
        skills,
        root: root_name,
        tools,
        includes: edges,
    })
}

/// The least any resolver does with the graph: enter each skill reachable
/// from the root once (one look-up by name per new include target, one
/// set probe per include) and put each tool ref's name in a set, keeping
/// first occurrences in order. No overrides, specs, errors or paths.
/// Returns how many distinct names it met.
///
/// Its time is what reading the graph out of memory costs on this machine:
/// the floor the resolver's own doubling is read against (if this walk's
/// time more than doubles with the graph, the caches, not the resolver,
/// are why).
pub fn floor_walk(dag: &Dag) -> usize {
    type Fast = foldhash::fast::RandomState;
    let mut entered: HashSet<&str, Fast> =
        HashSet::with_capacity_and_hasher(dag.skills.len(), Fast::default());
    let mut names: HashSet<&str, Fast> = HashSet::default();
    let mut order: Vec<&str> = Vec::new();
    let mut todo: Vec<&Skill> = dag.skills.get(&dag.root).into_iter().collect();
    entered.insert(dag.root.as_str());
    while let Some(skill) = todo.pop() {
        for item in &skill.items {
            match item {
                SkillItem::ToolRef { name } if names.insert(name.as_str()) => {
                    order.push(name.as_str());
                }
                SkillItem::Include(include) if entered.insert(include.skill.as_str()) => {
                    todo.extend(dag.skills.get(&include.skill));
                }
                _ => {}
            }
        }
    }
    std::hint::black_box(&order);
    order.len()
}

/// Peak resident memory of this process in bytes (`VmHWM`), where Linux tells it.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use agents_core::SkillResolver;

    #[test]
    fn same_seed_same_graph_other_seed_other_graph() {
        let a = generate(300, 7).unwrap();
        let b = generate(300, 7).unwrap();
        let c = generate(300, 8).unwrap();
        assert_eq!(a.skills, b.skills);
        assert_ne!(a.skills, c.skills);
    }

    #[test]
    fn the_root_closure_is_the_whole_acyclic_graph() {
        let dag = generate(2_000, 1).unwrap();
        assert_eq!(dag.skills.len(), 2_001);
        let resolution = SkillResolver::new(&dag.skills, &dag.tools)
            .resolve(&dag.root)
            .unwrap();
        // Every tool ref is known, so there is nothing to warn about.
        assert!(resolution.warnings.is_empty());
        assert_eq!(resolution.entries.len(), CATALOGUE);
        // The floor walk meets the same names.
        assert_eq!(floor_walk(&dag), CATALOGUE);
        // Every skill is reachable from the root.
        let mut seen = std::collections::HashSet::from([dag.root.clone()]);
        let mut todo = vec![dag.root.clone()];
        while let Some(name) = todo.pop() {
            for include in dag.skills[&name].includes() {
                if seen.insert(include.skill.clone()) {
                    todo.push(include.skill.clone());
                }
            }
        }
        assert_eq!(seen.len(), dag.skills.len());
        for skill in dag.skills.values() {
            assert!(skill.includes().count() <= MAX_INCLUDES || skill.name == dag.root);
            assert_eq!(
                skill.items.len() - skill.includes().count(),
                if skill.name == dag.root { 0 } else { TOOL_REFS }
            );
        }
    }
}
