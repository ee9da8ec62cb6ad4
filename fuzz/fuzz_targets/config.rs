//! `config.toml` (`agents_config::resolve` reading it from a file) and
//! `mcp import` (`import_mcp_servers`) on arbitrary bytes.
//!
//! The input is the config file; when it holds a `0xFF` byte (never part of
//! UTF-8), what follows the first one is a client's JSON file to import.
//!
//! Checks: no panic; errors bounded and escaped; `config show` (text and
//! JSON) never prints a literal `env`/`headers` value; an import into a
//! config that loads gives a config that loads too, with every server it
//! says it added.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use agents_config::{CliOverrides, Provenance, Settings, import_mcp_servers, resolve};
use agents_fuzz::check_error;
use libfuzzer_sys::fuzz_target;

/// A folder of this process's own for the config file (`resolve` reads a path).
fn workdir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("agents-fuzz-config-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("home")).unwrap();
        dir
    })
}

fn load(text: &[u8]) -> Result<Settings, agents_config::ConfigError> {
    let file = workdir().join("config.toml");
    std::fs::write(&file, text).unwrap();
    let cli = CliOverrides {
        config: Some(file),
        ..CliOverrides::default()
    };
    resolve(&cli, &|_| None, &workdir().join("home"))
}

/// A literal secret value must not reach `config show` in any format.
fn check_shown(settings: &Settings) {
    let shown = format!("{settings}");
    let json = serde_json::to_string(settings).unwrap();
    let mut bare = settings.clone();
    for server in bare.mcp_servers.values_mut() {
        server.env.clear();
        server.headers.clear();
    }
    let bare_text = format!("{bare}");
    let bare_json = serde_json::to_string(&bare).unwrap();
    for server in settings.mcp_servers.values() {
        for (key, value) in server.env.iter().chain(server.headers.iter()) {
            let reference = value.starts_with("${") && value.ends_with('}');
            // Short values and values that also occur elsewhere (a key, the
            // command) cannot be told apart from the rest of the output.
            if reference
                || value.len() < 6
                || key.contains(value.as_str())
                || bare_text.contains(value.as_str())
                || bare_json.contains(value.as_str())
                || serde_json::to_string(key).unwrap().contains(value.as_str())
            {
                continue;
            }
            assert!(
                !shown.contains(value.as_str()),
                "`{key}` shown in config show: {shown}"
            );
            assert!(
                !json.contains(value.as_str()),
                "`{key}` shown in config show --format json: {json}"
            );
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let (config, client) = match data.iter().position(|b| *b == 0xFF) {
        Some(at) => (&data[..at], Some(&data[at + 1..])),
        None => (data, None),
    };
    let loaded = load(config);
    match &loaded {
        Ok(settings) => check_shown(settings),
        Err(err) => check_error("config", err),
    }
    let (Some(client), Ok(config_text)) = (client, std::str::from_utf8(config)) else {
        return;
    };
    let Ok(client) = std::str::from_utf8(client) else {
        return;
    };
    let config_path = workdir().join("config.toml");
    // A project's file: every server it adds must load marked untrusted.
    match import_mcp_servers(
        Path::new("client.json"),
        client,
        &config_path,
        config_text,
        &Provenance::Project,
    ) {
        Ok(report) => {
            if loaded.is_ok() {
                let after = load(report.config.as_bytes()).unwrap_or_else(|err| {
                    panic!("imported config does not load: {err}\n{}", report.config)
                });
                for name in &report.added {
                    assert!(
                        after.mcp_servers.contains_key(name)
                            && after.untrusted_mcp_servers.contains(name),
                        "`{name}` not in, or not untrusted in\n{}",
                        report.config
                    );
                }
            }
        }
        Err(err) => check_error("mcp import", &err),
    }
});
