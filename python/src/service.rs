//! `SkillRegistryService`, `SkillRegistry`, `SkillRepository` and
//! `ToolRegistry`: the registry service of the CLI, built from the same
//! settings chain, with one Rust runtime per service object.
//!
//! Every method reads its Python arguments with the interpreter held, then
//! lets go of it for the database, parsing, discovery and resolution work
//! (other Python threads run meanwhile) and takes it back to build the
//! results. A service is immutable once made (a frozen class over `Sync`
//! state), so any number of Python threads may call it at once; each call
//! runs on the service's runtime.

use std::path::PathBuf;
use std::sync::Mutex;

use agents_config::{CliOverrides, InputKind, InputLimits, Settings};
use agents_core::{Plan, Skill, SkillName, ToolRegistry, ToolSource};
use agents_definition::{DefinitionError, Limits};
use agents_registry::{
    ConflictStrategy, DiscoveryScope, SkillRegistryService, TrustStore, builtin_registry,
    process_identity,
};
use agents_store::{DatabaseUrl, Store};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use serde_json::Value;

use crate::convert::{
    bool_arg, opt_str_arg, path_arg, py_repr, sequence_items, str_arg, to_json, wrong_type,
};
use crate::error::{Class, Failure, Outcome, detached, raise, warn_all};
use crate::model::{
    DICT_LABEL, PyDiscoveryResult, PyResolvedToolEntry, PySkill, PySkillSummary, PySummary,
    PyToolSpec, YAML_LABEL, dict_json, dict_yaml, skill_from_json,
};

type Service = SkillRegistryService;

/// A database URL, checked when made: what the specification's
/// `SkillRepository(session_factory)` becomes here.
#[pyclass(frozen, module = "agents_registry", name = "SkillRepository")]
#[derive(Debug)]
pub(crate) struct PyRepository {
    url: DatabaseUrl,
}

#[pymethods]
impl PyRepository {
    /// `database_url`: `sqlite://PATH` (a relative path is taken against the
    /// current directory now), `sqlite::memory:`, `postgres://...`; or a
    /// path (`str` without a scheme is not taken: pass an `os.PathLike`) of
    /// an SQLite file.
    #[new]
    fn new(py: Python<'_>, database_url: &Bound<'_, PyAny>) -> PyResult<Self> {
        let raw = if database_url.cast::<PyString>().is_ok() {
            raise(py, str_arg(database_url, "database_url"))?
        } else {
            let path = raise(py, path_arg(database_url, "database_url"))?;
            format!("sqlite://{}", path.display())
        };
        let url = raise(py, DatabaseUrl::parse(&raw).map_err(Failure::from))?;
        Ok(Self { url })
    }

    /// The URL, any password hidden.
    #[getter]
    fn database_url(&self) -> String {
        self.url.to_string()
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!("SkillRepository({})", py_repr(py, &self.url.to_string()))
    }
}

/// The in-code tools a host program registers (source `builtin`); made with
/// the tools the `agents` CLI ships unless `builtins=False`. A service takes
/// a copy of it when it is made.
#[pyclass(frozen, module = "agents_registry", name = "ToolRegistry")]
#[derive(Debug)]
pub(crate) struct PyToolRegistry {
    tools: Mutex<ToolRegistry>,
}

impl PyToolRegistry {
    /// `read` of the registry as it is now.
    fn with<T>(&self, read: impl FnOnce(&ToolRegistry) -> T) -> T {
        read(
            &self
                .tools
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// A copy, for a service.
    fn snapshot(&self) -> ToolRegistry {
        self.with(ToolRegistry::clone)
    }
}

fn cli_builtins() -> Outcome<ToolRegistry> {
    builtin_registry().map_err(|err| Failure::new(Class::Registry, err.kind(), err.to_string()))
}

#[pymethods]
impl PyToolRegistry {
    #[new]
    #[pyo3(signature = (builtins = None))]
    fn new(py: Python<'_>, builtins: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let tools = if raise(py, bool_arg(builtins, "builtins", true))? {
            raise(py, cli_builtins())?
        } else {
            ToolRegistry::new()
        };
        Ok(Self {
            tools: Mutex::new(tools),
        })
    }

    /// Registers a tool given as a `ToolSpec` or a dict in the custom tool
    /// definition's shape (`name`, `description`, `input_schema`, ...); it
    /// is an in-code tool (source `builtin`). A taken name is an error
    /// unless `replace`.
    #[pyo3(signature = (tool, replace = None))]
    fn register(
        &self,
        py: Python<'_>,
        tool: &Bound<'_, PyAny>,
        replace: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyToolSpec> {
        let replace = raise(py, bool_arg(replace, "replace", false))?;
        let spec = if let Ok(spec) = tool.cast::<PyToolSpec>() {
            spec.get().spec.clone()
        } else {
            let value = raise(py, dict_json(tool, "a tool"))?;
            detached(py, || tool_from_json(&value))?
        };
        let mut tools = self
            .tools
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let spec = agents_core::ToolSpec {
            source: ToolSource::Builtin,
            ..spec
        };
        raise(
            py,
            tools
                .register(spec.clone(), replace)
                .map_err(|err| Failure::new(Class::Validation, err.kind(), err.to_string())),
        )?;
        Ok(PyToolSpec { spec })
    }

    /// The tool called `name`, or `None`.
    fn get(&self, name: &str) -> Option<PyToolSpec> {
        self.with(|tools| {
            tools
                .get(name)
                .map(|spec| PyToolSpec { spec: spec.clone() })
        })
    }

    /// Every tool, in registration order.
    fn list(&self) -> Vec<PyToolSpec> {
        self.with(|tools| {
            tools
                .list(None)
                .map(|spec| PyToolSpec { spec: spec.clone() })
                .collect()
        })
    }

    fn __len__(&self) -> usize {
        self.with(|tools| tools.list(None).count())
    }

    fn __contains__(&self, name: &Bound<'_, PyAny>) -> bool {
        name.cast::<PyString>()
            .ok()
            .and_then(|name| name.to_cow().ok().map(|name| name.into_owned()))
            .is_some_and(|name| self.with(|tools| tools.get(&name).is_some()))
    }

    fn __repr__(&self) -> String {
        format!("ToolRegistry(tools={})", self.__len__())
    }
}

/// A custom tool from a dict, through the tool file parser (as
/// [`skill_from_json`] does for skills).
fn tool_from_json(value: &Value) -> Outcome<agents_core::ToolSpec> {
    let text = dict_yaml(value)?;
    let mut tools = agents_definition::parse_tools_with(&text, DICT_LABEL, &Limits::TOOLS)?;
    match (tools.pop(), tools.is_empty()) {
        (Some(tool), true) => Ok(tool),
        _ => Err(Failure::new(
            Class::Validation,
            "invalid_definition",
            format!("{DICT_LABEL}: expected one tool"),
        )),
    }
}

/// A service and the runtime it runs on. The service is dropped inside the
/// runtime (a database pool may hand its connections back to it as it goes),
/// then the runtime.
pub(crate) struct Inner {
    service: Option<Service>,
    settings: Settings,
    /// The database, any password hidden.
    shown_url: String,
    pub(crate) runtime: tokio::runtime::Runtime,
}

impl Drop for Inner {
    fn drop(&mut self) {
        let _inside = self.runtime.enter();
        drop(self.service.take());
    }
}

impl Inner {
    fn service(&self) -> Outcome<&Service> {
        self.service.as_ref().ok_or_else(|| {
            Failure::new(Class::Registry, "closed", "the registry service is closed")
        })
    }

    fn limits(&self) -> &InputLimits {
        &self.settings.limits
    }
}

/// Where a service's database comes from.
enum Database {
    /// A `SkillRepository`'s URL.
    Repository(DatabaseUrl),
    /// The settings chain (`database_url` given or not).
    Settings,
    /// A private in-memory database (`SkillRegistry`).
    Memory,
}

/// The home directory, as the CLI finds it.
fn home_dir() -> Outcome<PathBuf> {
    std::env::home_dir().ok_or_else(|| {
        Failure::new(
            Class::Config,
            "config",
            "cannot find the home directory: set `HOME`",
        )
    })
}

/// Settings, store and service, as the CLI's commands that write build
/// them: the default SQLite file (and its folder) is created when missing,
/// a file named elsewhere is created in a folder that must exist.
fn open(
    database: Database,
    database_url: Option<String>,
    config: Option<PathBuf>,
    tools: Option<ToolRegistry>,
) -> Outcome<Inner> {
    agents_config::check_process_env()?;
    let home = home_dir()?;
    let overrides = CliOverrides {
        config,
        database_url,
        agent_skills_paths: None,
        mcp_timeout_s: None,
    };
    let settings = agents_config::resolve(&overrides, &agents_config::process_env, &home)?;
    let origin = settings.database_url.origin.clone();
    let (url, default) = match database {
        Database::Repository(url) => (url, false),
        Database::Memory => (DatabaseUrl::SqliteMemory, false),
        Database::Settings => {
            let url = DatabaseUrl::parse(&settings.database_url.value).map_err(|err| {
                let failure = Failure::from(err);
                Failure {
                    message: format!("`database.url` from {origin}: {}", failure.message),
                    ..failure
                }
            })?;
            (url, origin == agents_config::Origin::Default)
        }
    };
    let memory = url == DatabaseUrl::SqliteMemory;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("agents-registry")
        .enable_all()
        .build()
        .map_err(|err| {
            Failure::new(
                Class::Registry,
                "io",
                format!("cannot start the registry's runtime: {err}"),
            )
        })?;
    let store = runtime.block_on(async {
        if default {
            Store::create(&url).await
        } else {
            Store::open(&url).await
        }
    })?;
    // A private in-memory registry keeps nothing of this user's: no scope
    // file is made, and no MCP definition but the configured ones runs.
    let (scope, trust) = if memory {
        (DiscoveryScope::default(), TrustStore::in_memory())
    } else {
        let scope = DiscoveryScope::load_or_create(&DiscoveryScope::default_path(&home))
            .map_err(|err| Failure::new(Class::Config, err.kind(), err.to_string()))?;
        let trust = TrustStore::open(&TrustStore::default_path(&home))
            .map_err(|err| Failure::new(Class::Config, err.kind(), err.to_string()))?;
        (scope, trust)
    };
    let builtins = match tools {
        Some(tools) => tools,
        None => cli_builtins()?,
    };
    // First-use discovery scans the configured folders, as the CLI's reads
    // do; a private in-memory registry scans none.
    let folders = if memory {
        agents_registry::DiscoveryFolders::default()
    } else {
        agents_registry::DiscoveryFolders {
            folders: settings.agent_skills_paths.value.clone(),
            defaulted: settings.agent_skills_paths.origin == agents_config::Origin::Default,
        }
    };
    let service = SkillRegistryService::new(store, home)
        .with_scope(scope)
        .with_builtins(builtins)
        .with_mcp_servers(settings.mcp_servers.clone())
        .with_trust(trust)
        .with_identity(process_identity())
        .with_discovery_folders(folders);
    Ok(Inner {
        service: Some(service),
        shown_url: url.to_string(),
        settings,
        runtime,
    })
}

/// The service's first-use discovery before a resolution, as the CLI's
/// reads run it: what it found to warn of (a discovery that fails is one
/// such warning, not an error).
fn first_use(inner: &Inner, service: &Service) -> Outcome<Vec<String>> {
    Ok(
        match inner
            .runtime
            .block_on(service.discover_configured(false, None))?
        {
            agents_registry::FirstUse::AlreadyDiscovered => Vec::new(),
            agents_registry::FirstUse::Discovered(refreshed) => {
                let result = refreshed.result;
                let mut lines = result.warnings;
                lines.extend(result.conflicts.iter().map(ToString::to_string));
                lines.extend(result.errors.iter().map(ToString::to_string));
                lines
            }
            agents_registry::FirstUse::NotDiscovered(err) => {
                vec![format!("Agent Skills were not discovered ({err})")]
            }
        },
    )
}

/// A skill argument before it is parsed: a `Skill` is taken as it is, a
/// dict is read as JSON with the interpreter held and parsed without it.
enum SkillArg {
    Parsed(Box<Skill>),
    Definition(Value),
}

fn skill_arg(value: &Bound<'_, PyAny>) -> Outcome<SkillArg> {
    if let Ok(skill) = value.cast::<PySkill>() {
        return Ok(SkillArg::Parsed(Box::new(skill.get().skill.clone())));
    }
    if value.cast::<PyDict>().is_ok() {
        return Ok(SkillArg::Definition(to_json(value, "a skill")?));
    }
    Err(wrong_type(
        "a skill",
        "a `Skill` or a dict in the skill definition's shape",
        value,
    ))
}

/// A definition error with the advice the CLI adds when a limit caused it.
fn definition_failure(err: DefinitionError, limits: &InputLimits, kind: InputKind) -> Failure {
    let advice = err.limit.and_then(|limit| limits.advice(kind, limit));
    let mut failure = Failure::from(err);
    if let Some(advice) = advice {
        failure.message.push_str(&format!("\n  = help: {advice}"));
    }
    failure
}

impl SkillArg {
    fn parse(self, limits: &InputLimits) -> Outcome<Skill> {
        match self {
            Self::Parsed(skill) => Ok(*skill),
            Self::Definition(value) => skill_from_json(value, &limits.skills(), &|err| {
                definition_failure(err, limits, InputKind::Skills)
            }),
        }
    }
}

fn skill_name(raw: &str) -> Outcome<SkillName> {
    Ok(SkillName::new(raw)?)
}

fn strategy(value: &Bound<'_, PyAny>) -> Outcome<ConflictStrategy> {
    match str_arg(value, "on_conflict")?.as_str() {
        "skip" => Ok(ConflictStrategy::Skip),
        "error" => Ok(ConflictStrategy::Error),
        "replace" => Ok(ConflictStrategy::Replace),
        other => Err(Failure::new(
            Class::Validation,
            "invalid_argument",
            format!(
                "argument `on_conflict`: expected `skip`, `error` or `replace`, got `{}`",
                agents_core::text::shorten(other, agents_core::text::MAX_ECHO_BYTES)
            ),
        )),
    }
}

/// What `paths` names: `None` for the configured folders, a comma-separated
/// `str` (as `skills.agent_skills_paths` is written) or a list of paths.
enum PathsArg {
    Configured,
    Joined(String),
    Each(Vec<PathBuf>),
}

fn paths_arg(value: Option<&Bound<'_, PyAny>>) -> Outcome<PathsArg> {
    let Some(value) = value.filter(|value| !value.is_none()) else {
        return Ok(PathsArg::Configured);
    };
    if value.cast::<PyString>().is_ok() {
        return Ok(PathsArg::Joined(str_arg(value, "paths")?));
    }
    let Some(items) = sequence_items(value) else {
        return Err(wrong_type(
            "argument `paths`",
            "a comma-separated `str` or a list of paths",
            value,
        ));
    };
    items
        .iter()
        .map(|item| path_arg(item, "paths"))
        .collect::<Outcome<Vec<PathBuf>>>()
        .map(PathsArg::Each)
}

impl PathsArg {
    /// The folders, `~` and `$VAR` expanded as configured paths are.
    fn folders(self, settings: &Settings) -> Outcome<Vec<PathBuf>> {
        let env = &agents_config::process_env;
        match self {
            Self::Configured => Ok(settings.agent_skills_paths.value.clone()),
            Self::Joined(raw) => Ok(agents_config::parse_paths(&raw, &settings.home, env)?),
            Self::Each(paths) => paths
                .into_iter()
                .map(|path| match path.to_str() {
                    Some(raw) => Ok(agents_config::expand_path(raw, &settings.home, env)?),
                    None => Ok(path),
                })
                .collect(),
        }
    }
}

/// A plan: `{"skills": [...]}` (the plan file's shape) or a list of names.
enum PlanArg {
    Names(Vec<String>),
    Definition(Value),
}

fn plan_arg(value: &Bound<'_, PyAny>) -> Outcome<PlanArg> {
    if value.cast::<PyDict>().is_ok() {
        return Ok(PlanArg::Definition(to_json(value, "the plan")?));
    }
    let Some(items) = sequence_items(value) else {
        return Err(wrong_type(
            "the plan",
            "a dict `{\"skills\": [...]}` or a list of skill names",
            value,
        ));
    };
    items
        .iter()
        .map(|item| str_arg(item, "plan"))
        .collect::<Outcome<Vec<String>>>()
        .map(PlanArg::Names)
}

impl PlanArg {
    fn parse(self, limits: &InputLimits) -> Outcome<Plan> {
        match self {
            Self::Names(skills) => Ok(Plan { skills }),
            Self::Definition(value) => {
                let text = dict_yaml(&value)?;
                agents_definition::parse_plan_with(&text, DICT_LABEL, &limits.plan())
                    .map_err(|err| definition_failure(err, limits, InputKind::Plan))
            }
        }
    }
}

/// The skill registry over a database: the specification's
/// `SkillRegistryService`, with the `agents` CLI's settings chain.
///
/// `SkillRegistryService(skill_repo=SkillRepository(url))` uses that
/// database; `SkillRegistryService(database_url=None, config=None)` takes
/// the database from the argument, else `CLEVERAGENTS_DATABASE_URL`, else
/// the config file (`config`, else `CLEVERAGENTS_CONFIG`, else
/// `~/.cleveragents/config.toml`), else `~/.cleveragents/cleveragents.db`.
/// The rest of the settings (MCP servers, Agent Skills folders, limits)
/// come from the same chain. `tool_registry` gives the in-code tools
/// (default: the CLI's builtin tools).
#[pyclass(
    frozen,
    subclass,
    module = "agents_registry",
    name = "SkillRegistryService"
)]
pub(crate) struct PyService {
    inner: Inner,
}

impl PyService {
    fn make(
        py: Python<'_>,
        database: Database,
        database_url: Option<String>,
        config: Option<PathBuf>,
        tool_registry: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let tools = match tool_registry.filter(|value| !value.is_none()) {
            None => None,
            Some(value) => match value.cast::<PyToolRegistry>() {
                Ok(registry) => Some(registry.get().snapshot()),
                Err(_) => {
                    return Err(
                        wrong_type("argument `tool_registry`", "a `ToolRegistry`", value)
                            .into_py_err(py),
                    );
                }
            },
        };
        let inner = detached(py, || open(database, database_url, config, tools))?;
        Ok(Self { inner })
    }

    /// Runs `work` on the service's runtime with the interpreter let go of.
    pub(crate) fn run<T: Send>(
        &self,
        py: Python<'_>,
        work: impl FnOnce(&Inner, &Service) -> Outcome<T> + Send,
    ) -> PyResult<T> {
        let inner = &self.inner;
        detached(py, || {
            let service = inner.service()?;
            work(inner, service)
        })
    }

    pub(crate) fn add_one(&self, py: Python<'_>, skill: &Bound<'_, PyAny>) -> PyResult<PySkill> {
        let arg = raise(py, skill_arg(skill))?;
        let skill = self.run(py, |inner, service| {
            let skill = arg.parse(inner.limits())?;
            Ok(inner.runtime.block_on(service.add_skill(&skill))?)
        })?;
        Ok(PySkill { skill })
    }

    /// The tool set of `name`, its warnings issued as `RegistryWarning`.
    fn tool_set(
        &self,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
    ) -> PyResult<agents_registry::ToolSet> {
        let name = raise(py, str_arg(name, "name"))?;
        let (first, set) = self.run(py, |inner, service| {
            let name = skill_name(&name)?;
            let first = first_use(inner, service)?;
            Ok((first, inner.runtime.block_on(service.tools(&name))?))
        })?;
        warn_all(py, &first)?;
        warn_all(py, &set.warnings)?;
        Ok(set)
    }
}

fn entries_of(entries: Vec<agents_core::ResolvedToolEntry>) -> Vec<PyResolvedToolEntry> {
    entries
        .into_iter()
        .map(|entry| PyResolvedToolEntry { entry })
        .collect()
}

#[pymethods]
impl PyService {
    #[new]
    #[pyo3(signature = (skill_repo = None, tool_registry = None, *, database_url = None, config = None))]
    fn new(
        py: Python<'_>,
        skill_repo: Option<&Bound<'_, PyAny>>,
        tool_registry: Option<&Bound<'_, PyAny>>,
        database_url: Option<&Bound<'_, PyAny>>,
        config: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let database_url = raise(py, opt_str_arg(database_url, "database_url"))?;
        let config = match config.filter(|value| !value.is_none()) {
            Some(value) => Some(raise(py, path_arg(value, "config"))?),
            None => None,
        };
        let database = match skill_repo.filter(|value| !value.is_none()) {
            None => Database::Settings,
            Some(value) => {
                let Ok(repo) = value.cast::<PyRepository>() else {
                    return Err(
                        wrong_type("argument `skill_repo`", "a `SkillRepository`", value)
                            .into_py_err(py),
                    );
                };
                if database_url.is_some() {
                    return Err(Failure::new(
                        Class::Validation,
                        "invalid_argument",
                        "give `skill_repo` or `database_url`, not both",
                    )
                    .into_py_err(py));
                }
                Database::Repository(repo.get().url.clone())
            }
        };
        Self::make(py, database, database_url, config, tool_registry)
    }

    /// The database, any password hidden.
    #[getter]
    fn database_url(&self) -> &str {
        &self.inner.shown_url
    }

    /// Registers one skill (a `Skill`, or a dict in the YAML definition's
    /// shape); returns it as stored, with its timestamps.
    fn add_skill(&self, py: Python<'_>, skill: &Bound<'_, PyAny>) -> PyResult<PySkill> {
        self.add_one(py, skill)
    }

    /// Registers several skills in one transaction: all or none.
    fn add_skills(&self, py: Python<'_>, skills: &Bound<'_, PyAny>) -> PyResult<Vec<PySkill>> {
        if skills.cast::<PyDict>().is_ok() || skills.cast::<PyString>().is_ok() {
            return Err(wrong_type(
                "argument `skills`",
                "an iterable of skills (`add_skill` takes one)",
                skills,
            )
            .into_py_err(py));
        }
        let args = skills
            .try_iter()
            .map_err(|_| {
                wrong_type("argument `skills`", "an iterable of skills", skills).into_py_err(py)
            })?
            .map(|item| raise(py, skill_arg(&item?)))
            .collect::<PyResult<Vec<SkillArg>>>()?;
        let added = self.run(py, |inner, service| {
            let skills = args
                .into_iter()
                .map(|arg| arg.parse(inner.limits()))
                .collect::<Outcome<Vec<Skill>>>()?;
            Ok(inner.runtime.block_on(service.add_skills(&skills))?)
        })?;
        Ok(added.into_iter().map(|skill| PySkill { skill }).collect())
    }

    /// Registers every skill of YAML text (one document or a `---` stream)
    /// in one transaction; `source` labels its errors, which are the CLI's
    /// (file, line, column and the line with a caret).
    #[pyo3(signature = (text, source = None))]
    fn add_skills_yaml(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
        source: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<PySkill>> {
        let text = raise(py, str_arg(text, "text"))?;
        let source =
            raise(py, opt_str_arg(source, "source"))?.unwrap_or_else(|| YAML_LABEL.to_owned());
        let added = self.run(py, |inner, service| {
            let limits = inner.limits();
            let skills = agents_definition::parse_skills_with(&text, &source, &limits.skills())
                .map_err(|err| definition_failure(err, limits, InputKind::Skills))?;
            Ok(inner.runtime.block_on(service.add_skills(&skills))?)
        })?;
        Ok(added.into_iter().map(|skill| PySkill { skill }).collect())
    }

    /// The skill called `name`.
    fn get_skill(&self, py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<PySkill> {
        let name = raise(py, str_arg(name, "name"))?;
        let skill = self.run(py, |inner, service| {
            let name = skill_name(&name)?;
            Ok(inner.runtime.block_on(service.get_skill(&name))?)
        })?;
        Ok(PySkill { skill })
    }

    /// Every skill (without its items), sorted by name; only those of
    /// `namespace` when given.
    #[pyo3(signature = (namespace = None))]
    fn list_skills(
        &self,
        py: Python<'_>,
        namespace: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<PySkillSummary>> {
        let namespace = raise(py, opt_str_arg(namespace, "namespace"))?;
        let summaries = self.run(py, |inner, service| {
            Ok(inner
                .runtime
                .block_on(service.list_skills(namespace.as_deref()))?)
        })?;
        Ok(summaries
            .into_iter()
            .map(|summary| PySkillSummary { summary })
            .collect())
    }

    /// Replaces a registered skill's definition. A `Skill` read from the
    /// registry carries its `updated_at`: when the stored skill changed
    /// since, nothing is written (`StoreError`, kind `conflict`).
    fn update_skill(&self, py: Python<'_>, skill: &Bound<'_, PyAny>) -> PyResult<PySkill> {
        let arg = raise(py, skill_arg(skill))?;
        let skill = self.run(py, |inner, service| {
            let skill = arg.parse(inner.limits())?;
            Ok(inner.runtime.block_on(service.update_skill(&skill))?)
        })?;
        Ok(PySkill { skill })
    }

    /// Removes a skill and its items. A skill other skills include is
    /// refused unless `force`; returns the names of the skills the removal
    /// left with a missing include.
    #[pyo3(signature = (name, *, force = None))]
    fn remove_skill(
        &self,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        force: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<String>> {
        let name = raise(py, str_arg(name, "name"))?;
        let force = raise(py, bool_arg(force, "force", false))?;
        let broken = self.run(py, |inner, service| {
            let name = skill_name(&name)?;
            Ok(inner.runtime.block_on(service.remove_skill(&name, force))?)
        })?;
        Ok(broken.into_iter().map(|name| name.to_string()).collect())
    }

    /// Scans `paths` (a comma-separated `str` as in the config file, a list
    /// of paths, or `None` for the configured `skills.agent_skills_paths`)
    /// for Agent Skills folders and registers what it finds next to the
    /// Agent Skills found before. A name already taken is settled by
    /// `on_conflict`: `skip` (keep the existing tool), `error`
    /// (`DiscoveryConflictError`, nothing registered) or `replace`.
    #[pyo3(signature = (paths = None, on_conflict = None))]
    fn discover_and_register(
        &self,
        py: Python<'_>,
        paths: Option<&Bound<'_, PyAny>>,
        on_conflict: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyDiscoveryResult> {
        self.discover(py, paths, on_conflict, false)
    }

    /// Re-scans `paths` (as `discover_and_register` takes them): the Agent
    /// Skills found before are replaced by what is found now. A missing
    /// folder is a warning in the result, as for configured folders.
    #[pyo3(signature = (paths = None, on_conflict = None))]
    fn refresh_agent_skills(
        &self,
        py: Python<'_>,
        paths: Option<&Bound<'_, PyAny>>,
        on_conflict: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyDiscoveryResult> {
        self.discover(py, paths, on_conflict, true)
    }

    /// The flattened tool set of `name` (problems that do not stop it, such
    /// as an unknown tool, are issued as `RegistryWarning`).
    fn resolve_tools(
        &self,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<PyResolvedToolEntry>> {
        Ok(entries_of(self.tool_set(py, name)?.entries))
    }

    /// The seven-field summary of `skill`'s tool set: of the `entries` given
    /// (from `resolve_tools`), else of its resolution. `skill` is a name or
    /// a `Skill`.
    #[pyo3(signature = (skill, entries = None))]
    fn compute_capability_summary(
        &self,
        py: Python<'_>,
        skill: &Bound<'_, PyAny>,
        entries: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PySummary> {
        let Some(entries) = entries.filter(|value| !value.is_none()) else {
            let name = match skill.cast::<PySkill>() {
                Ok(skill) => PyString::new(py, skill.get().skill.name.as_str()).into_any(),
                Err(_) => skill.clone(),
            };
            let set = self.tool_set(py, &name)?;
            return Ok(PySummary {
                summary: set.summary,
            });
        };
        let entries = entries
            .try_iter()
            .map_err(|_| {
                wrong_type(
                    "argument `entries`",
                    "a list of `ResolvedToolEntry`",
                    entries,
                )
                .into_py_err(py)
            })?
            .map(|item| {
                let item = item?;
                match item.cast::<PyResolvedToolEntry>() {
                    Ok(entry) => Ok(entry.get().entry.clone()),
                    Err(_) => Err(wrong_type(
                        "argument `entries`",
                        "a list of `ResolvedToolEntry`",
                        &item,
                    )
                    .into_py_err(py)),
                }
            })
            .collect::<PyResult<Vec<_>>>()?;
        let root = match skill.cast::<PySkill>() {
            Ok(skill) => skill.get().skill.clone(),
            Err(_) => self.get_skill(py, skill)?.skill,
        };
        Ok(PySummary {
            summary: agents_core::compute_capability_summary(&root, &entries),
        })
    }

    /// `(resolve_tools(name), compute_capability_summary(name))` from one
    /// resolution.
    fn tools(
        &self,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
    ) -> PyResult<(Vec<PyResolvedToolEntry>, PySummary)> {
        let set = self.tool_set(py, name)?;
        Ok((
            entries_of(set.entries),
            PySummary {
                summary: set.summary,
            },
        ))
    }

    /// Checks that every skill a plan references is satisfiable; returns
    /// every problem as the specification words it (an empty list when the
    /// plan is fine). `plan` is `{"skills": [...]}` or a list of names.
    /// Warnings are issued as `RegistryWarning`.
    fn validate_plan(&self, py: Python<'_>, plan: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
        let arg = raise(py, plan_arg(plan))?;
        let (first, report) = self.run(py, |inner, service| {
            let plan = arg.parse(inner.limits())?;
            let first = first_use(inner, service)?;
            Ok((first, inner.runtime.block_on(service.validate_plan(&plan))?))
        })?;
        warn_all(py, &first)?;
        warn_all(py, &report.warnings)?;
        Ok(report.errors)
    }

    /// Calls `tool` (a builtin such as `read_file`, or a custom or inline
    /// tool with a `run`) with `arguments`, as `skill`'s entry when `skill`
    /// is given (its overrides are the policy: timeout, read-only, audit,
    /// approval, sandbox), inside `roots` (default: the current folder).
    /// The same preparation, executor and policy as `agents tool call`;
    /// `approve=True` approves an entry that needs approval.
    #[pyo3(signature = (skill, tool, arguments = None, *, roots = None, approve = None, audit_file = None))]
    #[allow(clippy::too_many_arguments)]
    fn call_tool(
        &self,
        py: Python<'_>,
        skill: &Bound<'_, PyAny>,
        tool: &Bound<'_, PyAny>,
        arguments: Option<&Bound<'_, PyAny>>,
        roots: Option<&Bound<'_, PyAny>>,
        approve: Option<&Bound<'_, PyAny>>,
        audit_file: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<crate::call::PyToolResult> {
        let args = raise(
            py,
            crate::call::call_args(skill, tool, arguments, roots, approve, audit_file),
        )?;
        self.call_one(py, args)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "SkillRegistryService(database_url={})",
            py_repr(py, &self.inner.shown_url)
        )
    }
}

impl PyService {
    fn discover(
        &self,
        py: Python<'_>,
        paths: Option<&Bound<'_, PyAny>>,
        on_conflict: Option<&Bound<'_, PyAny>>,
        refresh: bool,
    ) -> PyResult<PyDiscoveryResult> {
        let paths = raise(py, paths_arg(paths))?;
        let strategy = match on_conflict.filter(|value| !value.is_none()) {
            Some(value) => raise(py, strategy(value))?,
            None => ConflictStrategy::Skip,
        };
        let (result, changes) = self.run(py, |inner, service| {
            let folders = paths.folders(&inner.settings)?;
            if refresh {
                let refreshed = inner
                    .runtime
                    .block_on(service.refresh_agent_skills(&folders, false, strategy, None))?;
                Ok((refreshed.result, Some(refreshed.changes)))
            } else {
                let found = inner
                    .runtime
                    .block_on(service.discover_and_register(&folders, strategy, None))?;
                Ok((found, None))
            }
        })?;
        Ok(PyDiscoveryResult { result, changes })
    }
}

/// An in-memory skill registry (nothing is written to disk): the
/// specification's `SkillRegistry`. Skills are registered into it with
/// `register` (or `add_skill`, `add_skills`, `add_skills_yaml`); it has
/// every method of `SkillRegistryService`. Settings other than the
/// database (configured MCP servers, Agent Skills folders, limits) come
/// from the CLI's chain, `config` naming the config file.
#[pyclass(frozen, extends = PyService, module = "agents_registry", name = "SkillRegistry")]
pub(crate) struct PySkillRegistry;

#[pymethods]
impl PySkillRegistry {
    #[new]
    #[pyo3(signature = (tool_registry = None, *, config = None))]
    fn new(
        py: Python<'_>,
        tool_registry: Option<&Bound<'_, PyAny>>,
        config: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let config = match config.filter(|value| !value.is_none()) {
            Some(value) => Some(raise(py, path_arg(value, "config"))?),
            None => None,
        };
        let service = PyService::make(py, Database::Memory, None, config, tool_registry)?;
        Ok(PyClassInitializer::from(service).add_subclass(Self))
    }

    /// Registers one skill (as `add_skill`).
    fn register(slf: &Bound<'_, Self>, skill: &Bound<'_, PyAny>) -> PyResult<PySkill> {
        slf.as_super().get().add_one(slf.py(), skill)
    }

    fn __repr__(&self) -> String {
        "SkillRegistry()".to_owned()
    }
}
