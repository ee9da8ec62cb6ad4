//! `agents-bench disclosure --fixture FILE --queries FILE [--big N] [--runs R]`:
//! progressive disclosure measured in process (`agents-disclosure`), for
//! `bench/run`'s `disclosure` group. Prints one JSON object:
//!
//! - `context`: each mode's first tool list for the fixture skill (the
//!   builtin tools as the root's own, one included skill per MCP server of
//!   the fixture), in estimated tokens, against `all`;
//! - `recall`: recall@1 and recall@5 of `Catalog::search` over the query
//!   set (each query names the tool it should find), with every miss;
//! - `ranking`: a skill of `N` tools (the fixture's servers repeated under
//!   other names) ranked for every query, `R` rounds: the median and p99
//!   of all samples, the slowest query by the median of its rounds, in
//!   microseconds, and the build time.
//!
//! It asserts nothing: the harness compares with the targets.

use std::collections::HashMap;
use std::time::Instant;

use agents_core::{
    ExportFormat, Include, ResolvedToolEntry, Skill, SkillItem, SkillName, SkillResolver,
    ToolRegistry, ToolSource, ToolSpec,
};
use agents_disclosure::{Catalog, DEFAULT_BUDGET_TOKENS, Ranker};
use serde_json::{Value, json};

struct Options {
    fixture: String,
    queries: String,
    big: usize,
    runs: usize,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        fixture: "bench/disclosure/tools.json".into(),
        queries: "bench/disclosure/queries.json".into(),
        big: 5_000,
        runs: 20,
    };
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .ok_or_else(|| format!("`{flag}` needs a value"))?;
        let number = || {
            value
                .parse::<usize>()
                .map_err(|_| format!("`{flag}` expects a whole number, got `{value}`"))
        };
        match flag.as_str() {
            "--fixture" => options.fixture = value.clone(),
            "--queries" => options.queries = value.clone(),
            "--big" => options.big = number()?.max(1),
            "--runs" => options.runs = number()?.max(1),
            other => {
                return Err(format!(
                    "unknown argument `{other}`, expected `--fixture`, `--queries`, `--big` or `--runs`"
                ));
            }
        }
    }
    Ok(options)
}

/// One MCP server's tool list in the fixture.
struct Server {
    name: String,
    package: String,
    tools: Vec<Value>,
}

fn read_json(path: &str) -> Result<Value, String> {
    let text =
        std::fs::read_to_string(path).map_err(|err| format!("cannot read `{path}`: {err}"))?;
    serde_json::from_str(&text).map_err(|err| format!("`{path}` is not JSON: {err}"))
}

fn servers(fixture: &Value) -> Result<Vec<Server>, String> {
    let text = |value: &Value, key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    fixture
        .get("servers")
        .and_then(Value::as_array)
        .ok_or("the fixture has no `servers` array")?
        .iter()
        .map(|server| {
            Ok(Server {
                name: text(server, "server").ok_or("a server without `server`")?,
                package: text(server, "package").unwrap_or_default(),
                tools: server
                    .get("tools")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default(),
            })
        })
        .collect()
}

/// A catalogue of the builtin tools (the root's own) and `copies` rounds
/// of the fixture's servers (one included skill each), cut at `limit`
/// tools.
fn catalog(
    servers: &[Server],
    copies: usize,
    limit: usize,
) -> Result<(Catalog, Vec<ResolvedToolEntry>), String> {
    let root_name = SkillName::new("bench/all-tools").map_err(|err| err.to_string())?;
    let mut tools = ToolRegistry::new();
    let mut root = Skill::new(root_name.clone());
    let mut skills = HashMap::new();
    let mut descriptions = HashMap::new();
    let mut count = 0;
    for spec in agents_registry::builtin_tools() {
        root.items.push(SkillItem::ToolRef {
            name: spec.name.as_str().into(),
        });
        tools.register(spec, false).map_err(|err| err.to_string())?;
        count += 1;
    }
    'copies: for copy in 0..copies {
        for server in servers {
            let server_name = if copy == 0 {
                server.name.clone()
            } else {
                format!("{}-{copy}", server.name)
            };
            let name =
                SkillName::new(&format!("bench/{server_name}")).map_err(|err| err.to_string())?;
            let mut skill = Skill::new(name.clone());
            for tool in &server.tools {
                if count >= limit {
                    break;
                }
                let tool_name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
                let mut spec = ToolSpec::new(
                    format!("mcp:{server_name}/{tool_name}"),
                    tool.get("description")
                        .and_then(Value::as_str)
                        .unwrap_or_default(),
                    ToolSource::Mcp,
                );
                spec.input_schema = tool.get("inputSchema").cloned();
                skill.items.push(SkillItem::ToolRef {
                    name: spec.name.as_str().into(),
                });
                tools.register(spec, false).map_err(|err| err.to_string())?;
                count += 1;
            }
            descriptions.insert(name.to_string(), format!("The tools of {}", server.package));
            skills.insert(name.clone(), skill);
            root.items.push(SkillItem::Include(Include {
                skill: name,
                overrides: Default::default(),
            }));
            if count >= limit {
                break 'copies;
            }
        }
    }
    skills.insert(root_name.clone(), root);
    let resolution = SkillResolver::new(&skills, &tools)
        .resolve(&root_name)
        .map_err(|err| err.to_string())?;
    let catalog = Catalog::new(
        root_name.as_str(),
        &resolution.entries,
        ExportFormat::Anthropic,
        &descriptions,
    );
    Ok((catalog, resolution.entries))
}

/// The registry name a query's `expected` (`server/tool` or
/// `builtin/tool`) stands for.
fn registry_name(expected: &str) -> String {
    if expected.starts_with("builtin/") {
        expected.to_owned()
    } else {
        format!("mcp:{expected}")
    }
}

pub fn run(args: &[String]) -> Result<Value, String> {
    let options = parse(args)?;
    let servers = servers(&read_json(&options.fixture)?)?;
    let queries: Vec<(String, String)> = read_json(&options.queries)?
        .as_array()
        .ok_or("the queries are not an array")?
        .iter()
        .filter_map(|q| {
            Some((
                q.get("query")?.as_str()?.to_owned(),
                registry_name(q.get("expected")?.as_str()?),
            ))
        })
        .collect();

    // Context: the fixture skill, every tool once.
    let (small, _) = catalog(&servers, 1, usize::MAX)?;
    for (_, expected) in &queries {
        if small.tool(expected).is_none() {
            return Err(format!(
                "the query set expects `{expected}`, which the fixture lacks"
            ));
        }
    }
    let report = small.budget(DEFAULT_BUDGET_TOKENS);
    let all_tokens = small.all_cost().tokens;
    let modes: Vec<Value> = report
        .modes
        .iter()
        .map(|m| {
            json!({
                "mode": m.mode, "applied": m.applied, "tools": m.tools, "meta_tools": m.meta_tools,
                "bytes": m.bytes, "tokens": m.tokens,
                "ratio": if all_tokens == 0 { 0.0 } else { m.tokens as f64 / all_tokens as f64 },
            })
        })
        .collect();

    // Recall over the query set.
    let (mut at1, mut at5) = (0usize, 0usize);
    let mut misses = Vec::new();
    for (query, expected) in &queries {
        let found: Vec<&str> = small
            .search(query, 5)
            .iter()
            .map(|m| m.tool.registry_name.as_str())
            .collect();
        if found.first() == Some(&expected.as_str()) {
            at1 += 1;
        }
        if found.contains(&expected.as_str()) {
            at5 += 1;
        } else {
            misses.push(json!({"query": query, "expected": expected, "found": found}));
        }
    }
    let total = queries.len().max(1) as f64;

    // Ranking time on the big skill.
    let started = Instant::now();
    let (big, entries) = catalog(
        &servers,
        options.big.div_ceil(small.tools().len().max(1)) + 1,
        options.big,
    )?;
    let build_ms = started.elapsed().as_secs_f64() * 1e3;
    // The ranker alone, as a re-resolution rebuilds it.
    let started = Instant::now();
    let ranker = Ranker::from_entries(&entries);
    let index_ms = started.elapsed().as_secs_f64() * 1e3;
    drop(ranker);
    // Per query, its times over the rounds (rounds outside, so one query's
    // runs are spread over the whole measure).
    let mut per_query: Vec<Vec<f64>> = vec![Vec::with_capacity(options.runs); queries.len()];
    let mut found = 0usize;
    for _ in 0..options.runs {
        for ((query, _), times) in queries.iter().zip(&mut per_query) {
            let started = Instant::now();
            let hits = big.search(query, 5);
            times.push(started.elapsed().as_secs_f64() * 1e6);
            found += hits.len();
        }
    }
    let quantile = |sorted: &[f64], q: f64| -> f64 {
        let i = ((sorted.len() as f64 - 1.0) * q).round() as usize;
        sorted.get(i).copied().unwrap_or_default()
    };
    // The slowest query, by the median of its rounds: a sample preempted on
    // a busy machine does not decide it.
    let worst_query_us = per_query
        .iter_mut()
        .map(|times| {
            times.sort_by(f64::total_cmp);
            quantile(times, 0.5)
        })
        .fold(0.0, f64::max);
    let mut samples_us: Vec<f64> = per_query.into_iter().flatten().collect();
    samples_us.sort_by(f64::total_cmp);
    let at = |q: f64| quantile(&samples_us, q);
    Ok(json!({
        "context": {
            "skill_tools": small.tools().len(),
            "skills": report.skills.len(),
            "method": report.method,
            "modes": modes,
        },
        "recall": {
            "queries": queries.len(),
            "at1": at1 as f64 / total,
            "at5": at5 as f64 / total,
            "misses": misses,
        },
        "ranking": {
            "tools": big.tools().len(),
            "build_ms": build_ms,
            "index_ms": index_ms,
            "queries": samples_us.len(),
            "median_us": at(0.5),
            "p99_us": at(0.99),
            "worst_query_median_us": worst_query_us,
            "max_us": samples_us.last().copied().unwrap_or_default(),
            "hits": found,
        },
    }))
}
