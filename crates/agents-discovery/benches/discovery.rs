#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Discovery of 10,000 generated skill folders: the default (parallel) rayon
//! pool against a one-thread pool, measured in the same run.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agents_discovery::{ConflictStrategy, DiscoveryResult, ExistingTool, discover};
use criterion::{Criterion, criterion_group};

const FOLDERS: usize = 10_000;

fn nothing_exists(_: &str) -> Option<ExistingTool> {
    None
}

/// A realistic `SKILL.md`: the standard's optional fields and a small schema.
fn generate(root: &Path) {
    for index in 0..FOLDERS {
        let name = format!("skill-{index:05}");
        let folder = root.join(&name);
        std::fs::create_dir_all(&folder).expect("create a skill folder");
        let text = format!(
            "---\nname: {name}\ndescription: Generated skill number {index}. Use it when benchmarking discovery.\nlicense: MIT\ncompatibility: Requires nothing\nmetadata:\n  author: bench\n  version: \"1.{index}\"\nallowed-tools: Read Write\ninput_schema:\n  type: object\n  properties:\n    query:\n      type: string\n  required: [query]\n---\n\n# {name}\n\nInstructions for the agent.\n"
        );
        std::fs::write(folder.join("SKILL.md"), text).expect("write SKILL.md");
    }
}

fn run(paths: &[PathBuf]) -> DiscoveryResult {
    let result = discover(paths, &nothing_exists, ConflictStrategy::Skip, None).expect("discovery");
    assert_eq!(result.discovered.len(), FOLDERS);
    result
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    generate(dir.path());
    let paths = vec![dir.path().to_path_buf()];
    let sequential = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("one-thread pool");
    let mut group = c.benchmark_group("discover_10000_folders");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.bench_function("parallel", |b| b.iter(|| run(&paths)));
    group.bench_function("sequential", |b| {
        b.iter(|| sequential.install(|| run(&paths)))
    });
    group.finish();

    if !std::env::args().any(|arg| arg == "--test" || arg == "--list") {
        report_ratio(&paths, &sequential);
    }
}

fn median_of_five(mut once: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..5)
        .map(|_| {
            let started = Instant::now();
            once();
            started.elapsed()
        })
        .collect();
    times.sort();
    times[2]
}

#[allow(clippy::print_stderr)]
fn report_ratio(paths: &[PathBuf], sequential: &rayon::ThreadPool) {
    let parallel_time = median_of_five(|| {
        run(paths);
    });
    let sequential_time = median_of_five(|| {
        sequential.install(|| run(paths));
    });
    eprintln!(
        "discover {FOLDERS} folders: parallel {:.1} ms on {} threads, sequential {:.1} ms, speed-up {:.2}x",
        parallel_time.as_secs_f64() * 1e3,
        rayon::current_num_threads(),
        sequential_time.as_secs_f64() * 1e3,
        sequential_time.as_secs_f64() / parallel_time.as_secs_f64()
    );
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
