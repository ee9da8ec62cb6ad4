//! `agents-bench service-tools --database-url URL --skill NAME [--runs R]`:
//! `SkillRegistryService::tools` in process, against a registry on disk,
//! built as the Python package builds its service (the CLI's builtin tools,
//! this user's discovery scope and trust store) and called on a runtime as
//! it calls it (`block_on` from the calling thread). One warm-up call, then
//! `R` timed ones; prints one JSON object for `bench/run`, which compares
//! them with the same call from Python.

use agents_core::SkillName;
use agents_registry::{DiscoveryScope, SkillRegistryService, TrustStore, builtin_registry};
use agents_store::DatabaseUrl;
use serde_json::{Value, json};

struct Options {
    url: String,
    skill: String,
    runs: usize,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut values = crate::flag_values(args, &["--database-url", "--skill", "--runs"])?;
    Ok(Options {
        runs: crate::runs_of(&values, 15)?,
        url: values
            .remove("--database-url")
            .ok_or("`--database-url` is required")?,
        skill: values.remove("--skill").ok_or("`--skill` is required")?,
    })
}

pub fn run(args: &[String]) -> Result<Value, String> {
    let options = parse(args)?;
    let runtime = crate::runtime()?;
    let url = DatabaseUrl::parse(&options.url).map_err(|err| err.to_string())?;
    let home = std::env::home_dir().ok_or("cannot find the home directory")?;
    let store = runtime
        .block_on(agents_store::Store::open(&url))
        .map_err(|err| err.to_string())?;
    let scope = DiscoveryScope::load_or_create(&DiscoveryScope::default_path(&home))
        .map_err(|err| err.to_string())?;
    let trust =
        TrustStore::open(&TrustStore::default_path(&home)).map_err(|err| err.to_string())?;
    let service = SkillRegistryService::new(store, home)
        .with_scope(scope)
        .with_builtins(builtin_registry().map_err(|err| err.to_string())?)
        .with_trust(trust);
    let name = SkillName::new(&options.skill).map_err(|err| err.to_string())?;
    let call = || {
        runtime
            .block_on(service.tools(&name))
            .map_err(|err| err.to_string())
    };
    let entries = call()?.entries.len();
    let samples = crate::timed(options.runs, call)?;
    Ok(json!({
        "entries": entries,
        "median_ms": crate::median(&samples),
        "samples_ms": samples,
    }))
}
