//! `agents-bench [--skills N] [--seed S] [--runs R]`: resolves the generated
//! `N`-skill DAG and the `2N`-skill DAG in process, `R` times each after one
//! warm-up (the two alternating), times [`agents_bench::floor_walk`] of each
//! the same way, and prints one JSON object (timings in
//! milliseconds, peak memory in bytes) for `bench/run`. It asserts nothing:
//! the harness compares.
//!
//! `agents-bench service-tools ...` times the registry service's `tools`
//! call in process instead (see [`service`]); `agents-bench disclosure ...`
//! measures progressive disclosure (see [`disclosure`]); `agents-bench relay
//! -- CMD` is the floor of a stdio proxy (see [`relay`]).

#![allow(
    clippy::indexing_slicing,
    reason = "a benchmark driver indexing its own sample vectors; not fed user input"
)]

mod builtin;
mod disclosure;
mod relay;
mod service;

use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

use agents_bench::{Dag, floor_walk, generate, peak_rss_bytes};

/// The allocator of the `agents` binary, so the resolver is measured as it
/// runs there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use agents_core::{Resolution, SkillResolver};
use serde_json::{Value, json};

struct Options {
    skills: usize,
    seed: u64,
    runs: usize,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        skills: 10_000,
        seed: 1,
        runs: 15,
    };
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .ok_or_else(|| format!("`{flag}` needs a value"))?;
        let number = |what: &str| {
            value
                .parse::<u64>()
                .map_err(|_| format!("`{what}` expects a whole number, got `{value}`"))
        };
        match flag.as_str() {
            "--skills" => options.skills = number("--skills")? as usize,
            "--seed" => options.seed = number("--seed")?,
            "--runs" => options.runs = number("--runs")?.max(1) as usize,
            other => {
                return Err(format!(
                    "unknown argument `{other}`, expected `--skills`, `--seed` or `--runs`"
                ));
            }
        }
    }
    if options.skills == 0 || options.skills > 1_000_000 {
        return Err("`--skills` expects 1 to 1000000".into());
    }
    Ok(options)
}

/// The runtime a mode calls on: two workers, as the product's.
fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|err| err.to_string())
}

/// `runs` timed calls of `call` (after the caller's warm-up), in ms each.
fn timed<T>(runs: usize, mut call: impl FnMut() -> Result<T, String>) -> Result<Vec<f64>, String> {
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = std::time::Instant::now();
        let out = call()?;
        samples.push(start.elapsed().as_secs_f64() * 1e3);
        std::hint::black_box(out);
    }
    Ok(samples)
}

/// The `--flag value` pairs of a mode's `args`, each flag one of `known`.
fn flag_values(
    args: &[String],
    known: &[&str],
) -> Result<std::collections::HashMap<String, String>, String> {
    let mut values = std::collections::HashMap::new();
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        if !known.contains(&flag.as_str()) {
            let known: Vec<String> = known.iter().map(|k| format!("`{k}`")).collect();
            return Err(format!(
                "unknown argument `{flag}`, expected {}",
                known.join(", ")
            ));
        }
        let value = args
            .next()
            .ok_or_else(|| format!("`{flag}` needs a value"))?;
        values.insert(flag.clone(), value.clone());
    }
    Ok(values)
}

/// `--runs` of `values`: a whole number, at least 1; `default` when absent.
fn runs_of(
    values: &std::collections::HashMap<String, String>,
    default: usize,
) -> Result<usize, String> {
    values.get("--runs").map_or(Ok(default), |value| {
        value
            .parse::<usize>()
            .map(|runs| runs.max(1))
            .map_err(|_| format!("`--runs` expects a whole number, got `{value}`"))
    })
}

fn median(samples: &[f64]) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len().is_multiple_of(2) {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    } else {
        sorted[mid]
    }
}

/// One timed resolution of `dag`'s root, in milliseconds.
fn time_once(resolver: &SkillResolver<'_>, dag: &Dag) -> Result<f64, String> {
    let start = Instant::now();
    let resolution = resolver.resolve(&dag.root).map_err(|err| err.to_string())?;
    let elapsed = start.elapsed().as_secs_f64() * 1e3;
    std::hint::black_box(resolution);
    Ok(elapsed)
}

/// One timed [`floor_walk`] of `dag`, in milliseconds.
fn time_floor(dag: &Dag) -> f64 {
    let start = Instant::now();
    let names = floor_walk(dag);
    let elapsed = start.elapsed().as_secs_f64() * 1e3;
    std::hint::black_box(names);
    elapsed
}

/// The untimed warm-up resolution, whose counts the report gives.
fn warm_up(resolver: &SkillResolver<'_>, dag: &Dag) -> Result<Resolution, String> {
    resolver.resolve(&dag.root).map_err(|err| err.to_string())
}

fn report(dag: &Dag, warm: &Resolution, samples: Vec<f64>) -> Value {
    json!({
        "skills": dag.skills.len(),
        "include_edges": dag.includes,
        "entries": warm.entries.len(),
        "warnings": warm.warnings.len(),
        "median_ms": median(&samples),
        "samples_ms": samples,
    })
}

fn run(options: &Options) -> Result<Value, String> {
    let start = Instant::now();
    let small = generate(options.skills, options.seed)?;
    let load_ms = start.elapsed().as_secs_f64() * 1e3;
    let small_resolver = SkillResolver::new(&small.skills, &small.tools);
    let small_warm = warm_up(&small_resolver, &small)?;
    // Peak memory with the N-skill graph built and resolved, before the 2N one exists.
    let peak = peak_rss_bytes();
    let large = generate(options.skills * 2, options.seed)?;
    let large_resolver = SkillResolver::new(&large.skills, &large.tools);
    let large_warm = warm_up(&large_resolver, &large)?;
    // The two sizes alternate, so a slower stretch of a shared machine (its
    // last-level cache is shared with other tenants) falls on both alike.
    let mut single = Vec::with_capacity(options.runs);
    let mut double = Vec::with_capacity(options.runs);
    // The floor: the same graphs only read (see `floor_walk`), in the
    // same alternation.
    let (mut floor_single, mut floor_double) = (Vec::new(), Vec::new());
    time_floor(&small);
    time_floor(&large);
    for _ in 0..options.runs {
        single.push(time_once(&small_resolver, &small)?);
        double.push(time_once(&large_resolver, &large)?);
        floor_single.push(time_floor(&small));
        floor_double.push(time_floor(&large));
    }
    Ok(json!({
        "seed": options.seed,
        "build_graph_ms": load_ms,
        "single": report(&small, &small_warm, single),
        "double": report(&large, &large_warm, double),
        "floor": {
            "single_median_ms": median(&floor_single),
            "double_median_ms": median(&floor_double),
            "single_samples_ms": floor_single,
            "double_samples_ms": floor_double,
        },
        "peak_rss_bytes": peak,
    }))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some((mode, rest)) = args.split_first()
        && mode == "relay"
    {
        return relay::run(rest);
    }
    let result = match args.split_first() {
        Some((mode, rest)) if mode == "service-tools" => service::run(rest),
        Some((mode, rest)) if mode == "disclosure" => disclosure::run(rest),
        Some((mode, rest)) if mode == "builtin-call" => builtin::run(rest),
        _ => parse(&args).and_then(|options| run(&options)),
    };
    match result {
        Ok(report) => {
            let mut out = std::io::stdout().lock();
            match writeln!(out, "{report}") {
                Ok(()) => ExitCode::SUCCESS,
                Err(_) => ExitCode::FAILURE,
            }
        }
        Err(message) => {
            let mut err = std::io::stderr().lock();
            let _ = writeln!(err, "error: {message}");
            ExitCode::from(2)
        }
    }
}
