//! Settings → store → registry service: everything a command needs, built
//! in one place so every command resolves settings the same way.

use std::path::PathBuf;

use agents_config::{CliOverrides, Settings};
use agents_registry::{DiscoveryScope, SkillRegistryService, TrustStore, builtin_registry};
use agents_store::{DatabaseUrl, Store, StoreError};

use crate::cli::{Format, GlobalArgs};
use crate::output::Failure;

pub struct Context {
    pub format: Format,
    pub settings: Settings,
    pub service: SkillRegistryService,
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

/// What a command does with the registry, which decides whether opening it
/// may create a SQLite file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Only reads: a missing file is never created. Set explicitly (flag,
    /// environment, config file), it is an error naming where the setting
    /// came from; at the default location (nothing written yet) it reads
    /// as an empty registry, kept in memory.
    Read,
    /// Writes: the file is created; its missing directory only at the
    /// default location (`~/.cleveragents/`), anywhere else it is an error
    /// pointing at `agents db init`.
    Write,
    /// `agents db init`: the file and its directory, wherever they are.
    Init,
}

impl Context {
    /// Opens the configured store for a command that only reads it.
    pub async fn read(global: &GlobalArgs) -> Result<Self, Failure> {
        Self::open(global, Access::Read).await
    }

    /// Opens the configured store for a command that writes it.
    pub async fn write(global: &GlobalArgs) -> Result<Self, Failure> {
        Self::open(global, Access::Write).await
    }

    /// Opens the configured store as `access` says.
    pub async fn open(global: &GlobalArgs, access: Access) -> Result<Self, Failure> {
        let format = global.format_or_table();
        let settings = settings(global, None)?;
        let origin = &settings.database_url.origin;
        // Where the URL came from, as other settings' errors say it.
        let from_setting = |failure: Failure| Failure {
            message: format!("`database.url` from {origin}: {}", failure.message),
            ..failure
        };
        let url = DatabaseUrl::parse(&settings.database_url.value)
            .map_err(|err| from_setting(Failure::from(err)))?;
        let default = *origin == agents_config::Origin::Default;
        let mut missing = false;
        let store = match access {
            Access::Init => Store::create(&url).await?,
            Access::Write if default => Store::create(&url).await?,
            Access::Write => Store::open(&url).await?,
            Access::Read => match Store::open_existing(&url).await {
                Err(StoreError::MissingDatabase(path)) if default => {
                    missing = true;
                    Store::missing(&path).await?
                }
                Err(err @ StoreError::MissingDatabase(_)) => {
                    return Err(from_setting(Failure::from(err)));
                }
                other => other?,
            },
        };
        let scope_path = DiscoveryScope::default_path(&settings.home);
        // A registry read before it exists creates nothing, not even the
        // scope file in its directory.
        let scope = if missing {
            DiscoveryScope::load_or_transient(&scope_path)
        } else {
            DiscoveryScope::load_or_create(&scope_path)
        }
        .map_err(|err| Failure::new(err.kind(), err.to_string()))?;
        let builtins =
            builtin_registry().map_err(|err| Failure::new("internal", err.to_string()))?;
        let trust = TrustStore::open(&TrustStore::default_path(&settings.home))
            .map_err(|err| Failure::new(err.kind(), err.to_string()))?;
        let service = SkillRegistryService::new(store, settings.home.clone())
            .with_scope(scope)
            .with_builtins(builtins)
            .with_mcp_servers(settings.mcp_servers.clone())
            .with_untrusted_config_servers(settings.untrusted_mcp_servers.clone())
            .with_trust(trust)
            .with_identity(agents_registry::process_identity())
            .with_discovery_folders(agents_registry::DiscoveryFolders {
                folders: settings.agent_skills_paths.value.clone(),
                defaulted: settings.agent_skills_paths.origin == agents_config::Origin::Default,
            });
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
