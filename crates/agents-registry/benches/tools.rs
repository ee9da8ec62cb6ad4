#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]
//! `tools()` end to end on each backend (closure load + catalogue lookup +
//! resolution), against pure in-memory resolution of the same skills measured
//! in the same run; plus bulk `add_skills` throughput.
//!
//! PostgreSQL runs when `AGENTS_TEST_POSTGRES_URL` points at a server whose
//! user may create databases.

use std::collections::HashMap;
use std::hint::black_box;
use std::time::Instant;

use agents_core::{Include, Skill, SkillItem, SkillName, SkillResolver, ToolRegistry};
use agents_registry::{SkillRegistryService, builtin_tools};
use agents_store::{DatabaseUrl, Store};
use criterion::{Criterion, criterion_group, criterion_main};

fn name(s: &str) -> SkillName {
    SkillName::new(s).unwrap()
}

/// 200 skills: 20 layers of 10, each including three skills of the next layer,
/// each with four builtin tool refs and one inline tool.
fn graph() -> Vec<Skill> {
    let tools = builtin_tools();
    let mut skills = Vec::new();
    for layer in 0..20 {
        for i in 0..10 {
            let mut s = Skill::new(name(&format!("g/l{layer}s{i}")));
            for k in 0..4 {
                s.items.push(SkillItem::ToolRef {
                    name: tools[(layer + i + k) % tools.len()].name.as_str().into(),
                });
            }
            s.items.push(SkillItem::InlineTool(Default::default()));
            if layer < 19 {
                for j in 0..3 {
                    s.items.push(SkillItem::Include(Include {
                        skill: name(&format!("g/l{}s{}", layer + 1, (i + j) % 10)),
                        overrides: Default::default(),
                    }));
                }
            }
            skills.push(s);
        }
    }
    skills
}

fn bulk(n: usize) -> Vec<Skill> {
    (0..n)
        .map(|i| {
            let mut s = Skill::new(name(&format!("bulk/s{i}")));
            s.description = Some(format!("skill {i}"));
            s.items.push(SkillItem::ToolRef {
                name: "builtin/read_file".into(),
            });
            s.items.push(SkillItem::ToolRef {
                name: "builtin/grep".into(),
            });
            s.items.push(SkillItem::Include(Include {
                skill: name("g/l0s0"),
                overrides: Default::default(),
            }));
            s.items.push(SkillItem::InlineTool(Default::default()));
            s
        })
        .collect()
}

fn builtins() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    for tool in builtin_tools() {
        registry.register(tool, false).unwrap();
    }
    registry
}

async fn service(url: &DatabaseUrl) -> SkillRegistryService {
    let store = Store::open(url).await.unwrap();
    SkillRegistryService::new(store, std::env::temp_dir()).with_builtins(builtins())
}

fn postgres_url(runtime: &tokio::runtime::Runtime) -> Option<DatabaseUrl> {
    let admin = std::env::var("AGENTS_TEST_POSTGRES_URL").ok()?;
    let db = format!("bench_{}", std::process::id());
    let status = std::process::Command::new("psql")
        .args([
            "-X",
            "-q",
            &admin,
            "-c",
            &format!("DROP DATABASE IF EXISTS {db}"),
            "-c",
            &format!("CREATE DATABASE {db}"),
        ])
        .status()
        .ok()?;
    if !status.success() {
        return None;
    }
    let _ = runtime;
    let (base, query) = admin
        .split_once('?')
        .map_or((admin.as_str(), None), |(b, q)| (b, Some(q)));
    let host_end = base.rfind('/').unwrap_or(base.len());
    let url = match query {
        Some(q) => format!("{}/{db}?{q}", &base[..host_end]),
        None => format!("{}/{db}", &base[..host_end]),
    };
    DatabaseUrl::parse(&url).ok()
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut backends = vec![("sqlite", DatabaseUrl::Sqlite(dir.path().join("bench.db")))];
    match postgres_url(&runtime) {
        Some(url) => backends.push(("postgres", url)),
        None => println!("SKIPPED postgres (no AGENTS_TEST_POSTGRES_URL)"),
    }
    let skills = graph();
    let root = name("g/l0s0");
    let registry = builtins();
    let in_memory: HashMap<SkillName, Skill> =
        skills.iter().map(|s| (s.name.clone(), s.clone())).collect();

    let mut group = c.benchmark_group("tools_200_skill_lattice");
    group.bench_function("in_memory_baseline", |b| {
        b.iter(|| {
            black_box(
                SkillResolver::new(&in_memory, &registry)
                    .resolve(&root)
                    .unwrap(),
            )
        })
    });
    for (label, url) in &backends {
        let svc = runtime.block_on(service(url));
        runtime.block_on(svc.add_skills(&skills)).unwrap();
        group.bench_function(*label, |b| {
            b.to_async(&runtime)
                .iter(|| async { black_box(svc.tools(&root).await.unwrap()) })
        });
    }
    group.finish();

    // Bulk add: one transaction of 10,000 skills (4 items each), timed once per
    // backend after a warm-up; reported as skills/s.
    for (label, url) in &backends {
        let svc = runtime.block_on(service(url));
        let batch = bulk(10_000);
        let started = Instant::now();
        runtime.block_on(svc.add_skills(&batch)).unwrap();
        let elapsed = started.elapsed();
        println!(
            "bulk add {label}: 10000 skills in {:.0} ms = {:.0} skills/s",
            elapsed.as_secs_f64() * 1000.0,
            10_000.0 / elapsed.as_secs_f64()
        );
        let status = runtime.block_on(svc.store().status()).unwrap();
        assert!(status.skills >= 10_000);
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
