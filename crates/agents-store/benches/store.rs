#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]
//! Store throughput: bulk `add_skills` in one transaction and `load_closure`
//! of a deep include chain, each against a naive baseline measured in the
//! same run (one transaction per skill; one `get_skill` per include).
//!
//! SQLite always; PostgreSQL too when `AGENTS_TEST_POSTGRES_URL` names a
//! superuser URL (a scratch database is created and dropped).
//! Run: `cargo bench -p agents-store --bench store` (under a minute; the
//! summary with skills/s and ratios is printed last, to stderr).

use std::collections::{BTreeMap, VecDeque};
use std::hint::black_box;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use agents_core::{Include, Skill, SkillItem, SkillName};
use agents_store::{DatabaseUrl, Store};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use sqlx::{Connection, Executor};
use tokio::runtime::Runtime;

const NAIVE_SKILLS: usize = 50;
const CHAIN: usize = 10_000;
const NAIVE_CHAIN: usize = 200;

fn name(raw: &str) -> SkillName {
    SkillName::new(raw).unwrap()
}

fn batch(count: usize) -> Vec<Skill> {
    (0..count)
        .map(|i| {
            let mut skill = Skill::new(name(&format!("bulk/skill-{i:05}")));
            skill.description = Some(format!("skill number {i}"));
            skill.items = vec![
                SkillItem::ToolRef {
                    name: "builtin/read_file".into(),
                },
                SkillItem::ToolRef {
                    name: format!("custom/t{i}").into(),
                },
                SkillItem::Include(Include {
                    skill: name("bulk/skill-00000"),
                    overrides: Default::default(),
                }),
                SkillItem::InlineTool(Box::default()),
                SkillItem::ToolRef {
                    name: "builtin/write_file".into(),
                },
            ];
            skill
        })
        .collect()
}

fn chain(depth: usize) -> Vec<Skill> {
    (0..depth)
        .map(|i| {
            let mut skill = Skill::new(name(&format!("chain/s{i:05}")));
            skill.items.push(SkillItem::ToolRef {
                name: format!("t/{i}").into(),
            });
            if i + 1 < depth {
                skill.items.push(SkillItem::Include(Include {
                    skill: name(&format!("chain/s{:05}", i + 1)),
                    overrides: Default::default(),
                }));
            }
            skill
        })
        .collect()
}

/// Where fresh, empty stores come from.
enum Target {
    Sqlite(tempfile::TempDir),
    Postgres {
        admin: String,
        url: String,
        database: String,
    },
}

impl Target {
    fn label(&self) -> &'static str {
        match self {
            Target::Sqlite(_) => "sqlite",
            Target::Postgres { .. } => "postgres",
        }
    }

    /// An empty store (a new file, or the scratch database truncated).
    async fn fresh(&self) -> Store {
        match self {
            Target::Sqlite(dir) => {
                static NEXT: Mutex<u64> = Mutex::new(0);
                let n = {
                    let mut next = NEXT.lock().unwrap();
                    *next += 1;
                    *next
                };
                Store::open(&DatabaseUrl::Sqlite(dir.path().join(format!("{n}.db"))))
                    .await
                    .unwrap()
            }
            Target::Postgres { url, .. } => {
                let store = Store::open(&DatabaseUrl::Postgres(url.clone()))
                    .await
                    .unwrap();
                let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
                conn.execute("TRUNCATE skills, skill_items, tools")
                    .await
                    .unwrap();
                conn.close().await.unwrap();
                // Open the pool's connection (TLS, SCRAM) outside the timing.
                store.status().await.unwrap();
                store
            }
        }
    }

    async fn cleanup(self) {
        if let Target::Postgres {
            admin, database, ..
        } = self
        {
            let mut conn = sqlx::PgConnection::connect(&admin).await.unwrap();
            conn.execute(sqlx::AssertSqlSafe(format!(
                "DROP DATABASE IF EXISTS \"{database}\" WITH (FORCE)"
            )))
            .await
            .unwrap();
        }
    }
}

async fn targets() -> Vec<Target> {
    let mut targets = vec![Target::Sqlite(tempfile::tempdir().unwrap())];
    match std::env::var("AGENTS_TEST_POSTGRES_URL") {
        Ok(admin) if !admin.is_empty() => {
            let database = format!("bench_{}", std::process::id());
            let mut conn = sqlx::PgConnection::connect(&admin).await.unwrap();
            conn.execute(sqlx::AssertSqlSafe(format!(
                "CREATE DATABASE \"{database}\""
            )))
            .await
            .unwrap();
            let (base, query) = admin
                .split_once('?')
                .map_or((admin.as_str(), None), |(b, q)| (b, Some(q)));
            let authority = base.find("://").map_or(0, |i| i + 3);
            let path = base[authority..]
                .find('/')
                .map_or(base.len(), |i| i + authority);
            let mut url = format!("{}/{database}", &base[..path]);
            if let Some(query) = query {
                url = format!("{url}?{query}");
            }
            targets.push(Target::Postgres {
                admin,
                url,
                database,
            });
        }
        _ => eprintln!("note: AGENTS_TEST_POSTGRES_URL is not set; benchmarking SQLite only"),
    }
    targets
}

/// Mean time per iteration of each benchmark, for the summary.
static MEANS: Mutex<BTreeMap<String, (Duration, u64)>> = Mutex::new(BTreeMap::new());

fn record(key: String, total: Duration, iters: u64) {
    let mut means = MEANS.lock().unwrap();
    let entry = means.entry(key).or_insert((Duration::ZERO, 0));
    entry.0 += total;
    entry.1 += iters;
}

fn mean(key: &str) -> Option<Duration> {
    let means = MEANS.lock().unwrap();
    means
        .get(key)
        .map(|(total, iters)| *total / (*iters).max(1) as u32)
}

fn bulk_add(c: &mut Criterion, rt: &Runtime, targets: &[Target]) {
    let mut group = c.benchmark_group("add_skills");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_secs(1));
    for target in targets {
        for count in [1_000, 10_000] {
            let skills = batch(count);
            let key = format!("{}/batched/{count}", target.label());
            group.bench_function(
                BenchmarkId::new(format!("{}/one_transaction", target.label()), count),
                |b| {
                    b.iter_custom(|iters| {
                        rt.block_on(async {
                            let mut total = Duration::ZERO;
                            for _ in 0..iters {
                                let store = target.fresh().await;
                                let started = Instant::now();
                                black_box(store.add_skills(&skills).await.unwrap());
                                total += started.elapsed();
                            }
                            record(key.clone(), total, iters);
                            total
                        })
                    })
                },
            );
        }
        let skills = batch(NAIVE_SKILLS);
        let key = format!("{}/naive/{NAIVE_SKILLS}", target.label());
        group.bench_function(
            BenchmarkId::new(
                format!("{}/transaction_per_skill", target.label()),
                NAIVE_SKILLS,
            ),
            |b| {
                b.iter_custom(|iters| {
                    rt.block_on(async {
                        let mut total = Duration::ZERO;
                        for _ in 0..iters {
                            let store = target.fresh().await;
                            let started = Instant::now();
                            for skill in &skills {
                                black_box(
                                    store.add_skills(std::slice::from_ref(skill)).await.unwrap(),
                                );
                            }
                            total += started.elapsed();
                        }
                        record(key.clone(), total, iters);
                        total
                    })
                })
            },
        );
    }
    group.finish();
}

/// The N+1 walk a store without a recursive query would do.
async fn naive_closure(store: &Store, root: &SkillName) -> Vec<Skill> {
    let mut seen = std::collections::HashSet::new();
    let mut queue = VecDeque::from([root.clone()]);
    let mut out = Vec::new();
    while let Some(next) = queue.pop_front() {
        if !seen.insert(next.clone()) {
            continue;
        }
        if let Some(skill) = store.get_skill(&next).await.unwrap() {
            queue.extend(skill.includes().map(|include| include.skill.clone()));
            out.push(skill);
        }
    }
    out
}

fn closure(c: &mut Criterion, rt: &Runtime, targets: &[Target]) {
    let mut group = c.benchmark_group("load_closure");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(100))
        .measurement_time(Duration::from_secs(1));
    let root = name("chain/s00000");
    for target in targets {
        for (depth, naive) in [(NAIVE_CHAIN, true), (CHAIN, false)] {
            let store = rt.block_on(async {
                let store = target.fresh().await;
                store.add_skills(&chain(depth)).await.unwrap();
                store
            });
            let key = format!("{}/closure/{depth}", target.label());
            group.bench_function(
                BenchmarkId::new(format!("{}/recursive_query", target.label()), depth),
                |b| {
                    b.iter_custom(|iters| {
                        rt.block_on(async {
                            let started = Instant::now();
                            for _ in 0..iters {
                                assert_eq!(
                                    black_box(
                                        store
                                            .load_closure(std::slice::from_ref(&root))
                                            .await
                                            .unwrap()
                                    )
                                    .len(),
                                    depth
                                );
                            }
                            let total = started.elapsed();
                            record(key.clone(), total, iters);
                            total
                        })
                    })
                },
            );
            if naive {
                let key = format!("{}/naive_closure/{depth}", target.label());
                group.bench_function(
                    BenchmarkId::new(format!("{}/get_skill_per_include", target.label()), depth),
                    |b| {
                        b.iter_custom(|iters| {
                            rt.block_on(async {
                                let started = Instant::now();
                                for _ in 0..iters {
                                    assert_eq!(
                                        black_box(naive_closure(&store, &root).await).len(),
                                        depth
                                    );
                                }
                                let total = started.elapsed();
                                record(key.clone(), total, iters);
                                total
                            })
                        })
                    },
                );
            }
        }
    }
    group.finish();
}

fn summary(targets: &[Target]) {
    eprintln!("\n== summary (means over every measured iteration)");
    for target in targets {
        let label = target.label();
        let rate = |count: usize, time: Duration| count as f64 / time.as_secs_f64();
        let naive = mean(&format!("{label}/naive/{NAIVE_SKILLS}"));
        for count in [1_000, 10_000] {
            if let Some(batched) = mean(&format!("{label}/batched/{count}")) {
                let line = format!(
                    "{label}: add_skills {count} skills x 5 items in one transaction: {batched:.2?} = {:.0} skills/s",
                    rate(count, batched)
                );
                match naive {
                    Some(naive) => eprintln!(
                        "{line}; transaction per skill: {:.0} skills/s; ratio {:.1}x",
                        rate(NAIVE_SKILLS, naive),
                        rate(count, batched) / rate(NAIVE_SKILLS, naive)
                    ),
                    None => eprintln!("{line}"),
                }
            }
        }
        for depth in [NAIVE_CHAIN, CHAIN] {
            if let Some(fast) = mean(&format!("{label}/closure/{depth}")) {
                match mean(&format!("{label}/naive_closure/{depth}")) {
                    Some(slow) => eprintln!(
                        "{label}: load_closure of a {depth}-deep chain: {fast:.2?}; get_skill per include: {slow:.2?}; ratio {:.1}x",
                        slow.as_secs_f64() / fast.as_secs_f64()
                    ),
                    None => eprintln!("{label}: load_closure of a {depth}-deep chain: {fast:.2?}"),
                }
            }
        }
    }
}

fn benches(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let targets = rt.block_on(targets());
    bulk_add(c, &rt, &targets);
    closure(c, &rt, &targets);
    summary(&targets);
    for target in targets {
        rt.block_on(target.cleanup());
    }
}

criterion_group!(store, benches);
criterion_main!(store);
