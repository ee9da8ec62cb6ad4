//! Settings → store → registry service: everything a command needs, built
//! in one place so every command resolves settings the same way.

use std::path::PathBuf;

use agents_config::{CliOverrides, Settings};
use agents_registry::{DiscoveryScope, SkillRegistryService, TrustStore, builtin_registry};
use agents_store::{AnyStore, DatabaseUrl};

use crate::cli::{Format, GlobalArgs};
use crate::output::Failure;

pub struct Context {
    pub format: Format,
    pub settings: Settings,
    pub service: SkillRegistryService<AnyStore>,
}

pub fn home_dir() -> Result<PathBuf, Failure> {
    std::env::home_dir()
        .ok_or_else(|| Failure::new("config", "cannot find the home directory: set `HOME`"))
}

/// Resolves settings: flag > environment > config file > default.
pub fn settings(
    global: &GlobalArgs,
    agent_skills_paths: Option<String>,
) -> Result<Settings, Failure> {
    let overrides = CliOverrides {
        config: global.config.clone(),
        database_url: global.database_url.clone(),
        agent_skills_paths,
        mcp_timeout_s: None,
    };
    agents_config::check_process_env()?;
    Ok(agents_config::resolve(
        &overrides,
        &agents_config::process_env,
        &home_dir()?,
    )?)
}

impl Context {
    /// Opens the configured store. A SQLite file's missing directory is
    /// created only at the default location (`~/.cleveragents/`); anywhere
    /// else it is an error pointing at `agents db init`.
    pub async fn open(global: &GlobalArgs) -> Result<Self, Failure> {
        Self::open_inner(global, false).await
    }

    /// `agents db init`: creates the SQLite file's directory wherever it is.
    pub async fn create(global: &GlobalArgs) -> Result<Self, Failure> {
        Self::open_inner(global, true).await
    }

    async fn open_inner(global: &GlobalArgs, create: bool) -> Result<Self, Failure> {
        let format = global.format_or_table();
        let settings = settings(global, None)?;
        // Where the URL came from, as other settings' errors say it.
        let url = DatabaseUrl::parse(&settings.database_url.value).map_err(|err| {
            let mut failure = Failure::from(err);
            failure.message = format!(
                "`database.url` from {}: {}",
                settings.database_url.origin, failure.message
            );
            failure
        })?;
        let store = if create || settings.database_url.origin == agents_config::Origin::Default {
            agents_store::create(&url).await?
        } else {
            agents_store::open(&url).await?
        };
        let builtins =
            builtin_registry().map_err(|err| Failure::new("internal", err.to_string()))?;
        let trust = TrustStore::open(&TrustStore::default_path(&settings.home))
            .map_err(|err| Failure::new(err.kind(), err.to_string()))?;
        let scope = DiscoveryScope::load_or_create(&DiscoveryScope::default_path(&settings.home))
            .map_err(|err| Failure::new(err.kind(), err.to_string()))?;
        let service = SkillRegistryService::new(store, settings.home.clone())
            .with_scope(scope)
            .with_builtins(builtins)
            .with_mcp_servers(settings.mcp_servers.clone())
            .with_trust(trust)
            .with_identity(identity());
        Ok(Self {
            format,
            settings,
            service,
        })
    }
}

/// The directories of a `--paths` flag, expanded like the configured ones.
pub fn settings_with_paths(ctx: &Context, raw: String) -> Result<Vec<PathBuf>, Failure> {
    Ok(agents_config::parse_paths(
        &raw,
        &ctx.settings.home,
        &agents_config::process_env,
    )?)
}

/// `user@host` of whoever runs this command, recorded with the skills they write.
fn identity() -> String {
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_else(|_| "unknown".into());
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|h| h.trim().to_owned())
        .unwrap_or_default();
    if host.is_empty() {
        user
    } else {
        format!("{user}@{host}")
    }
}
