#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Resolver cost on the shapes that break naive flattening, against a naive
//! full depth-first expansion measured in the same run.

use std::collections::HashMap;
use std::hint::black_box;

use agents_core::{Include, Skill, SkillItem, SkillName, SkillResolver, ToolRegistry};
use criterion::{Criterion, criterion_group, criterion_main};

fn name(s: &str) -> SkillName {
    SkillName::new(s).unwrap()
}

fn include(s: &str) -> SkillItem {
    SkillItem::Include(Include {
        skill: name(s),
        overrides: Default::default(),
    })
}

fn tool(t: String) -> SkillItem {
    SkillItem::ToolRef { name: t.into() }
}

/// `layers` layers of two skills, each including both skills below.
fn lattice(layers: usize) -> HashMap<SkillName, Skill> {
    let mut skills = HashMap::new();
    for layer in 0..layers {
        for side in ["l", "r"] {
            let mut s = Skill::new(name(&format!("d/{side}{layer}")));
            s.items.push(tool(format!("t{layer}{side}")));
            s.items.push(tool("shared".into()));
            if layer + 1 < layers {
                s.items.push(include(&format!("d/l{}", layer + 1)));
                s.items.push(include(&format!("d/r{}", layer + 1)));
            }
            skills.insert(s.name.clone(), s);
        }
    }
    let mut root = Skill::new(name("d/root"));
    root.items.push(include("d/l0"));
    root.items.push(include("d/r0"));
    skills.insert(root.name.clone(), root);
    skills
}

fn chain(depth: usize) -> HashMap<SkillName, Skill> {
    (0..depth)
        .map(|i| {
            let mut s = Skill::new(name(&format!("c/s{i}")));
            s.items.push(tool(format!("t{i}")));
            if i + 1 < depth {
                s.items.push(include(&format!("c/s{}", i + 1)));
            }
            (s.name.clone(), s)
        })
        .collect()
}

/// The textbook algorithm: expand every include path, then de-duplicate.
fn naive(skills: &HashMap<SkillName, Skill>, root: &SkillName) -> Vec<String> {
    fn expand(skills: &HashMap<SkillName, Skill>, s: &SkillName, out: &mut Vec<String>) {
        let skill = &skills[s];
        for inc in skill.includes() {
            expand(skills, &inc.skill, out);
        }
        for item in &skill.items {
            if let SkillItem::ToolRef { name } = item {
                out.push(name.to_string());
            }
        }
    }
    let mut all = Vec::new();
    expand(skills, root, &mut all);
    let mut seen = std::collections::HashSet::new();
    all.into_iter().filter(|n| seen.insert(n.clone())).collect()
}

fn bench(c: &mut Criterion) {
    let registry = ToolRegistry::new();
    let small = lattice(14);
    let root = name("d/root");
    let mut group = c.benchmark_group("diamond_lattice_14_layers");
    group.sample_size(10);
    group.bench_function("naive_expansion_baseline", |b| {
        b.iter(|| black_box(naive(&small, &root)))
    });
    group.bench_function("resolver", |b| {
        b.iter(|| {
            black_box(
                SkillResolver::new(&small, &registry)
                    .resolve(&root)
                    .unwrap(),
            )
        })
    });
    group.finish();

    let big = lattice(40);
    c.bench_function("diamond_lattice_40_layers/resolver", |b| {
        b.iter(|| black_box(SkillResolver::new(&big, &registry).resolve(&root).unwrap()))
    });

    let deep = chain(10_000);
    let top = name("c/s0");
    let mut group = c.benchmark_group("chain_10000");
    group.sample_size(10);
    group.bench_function("resolver", |b| {
        b.iter(|| black_box(SkillResolver::new(&deep, &registry).resolve(&top).unwrap()))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
