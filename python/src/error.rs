//! Registry errors as the Python exceptions of `agents_registry.errors`.
//!
//! A [`Failure`] is made without the interpreter (inside a call that let go
//! of it) and becomes a `PyErr` once it is held again. The exception classes
//! are Python classes (several derive from two bases, `SkillNotFoundError`
//! from `KeyError` too, which a class made in Rust for the stable ABI
//! cannot), looked up in `agents_registry.errors` when one is raised.

use agents_core::{InvalidSkillName, ResolveError};
use agents_definition::DefinitionError;
use agents_registry::ServiceError;
use agents_store::StoreError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyType};

/// Which exception class a failure is raised as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Registry,
    DuplicateSkill,
    SkillNotFound,
    Validation,
    ArgumentType,
    Cycle,
    NonOverridable,
    DiscoveryConflict,
    Store,
    Config,
    ToolCall,
}

impl Class {
    fn name(self) -> &'static str {
        match self {
            Self::Registry => "RegistryError",
            Self::DuplicateSkill => "DuplicateSkillError",
            Self::SkillNotFound => "SkillNotFoundError",
            Self::Validation => "ValidationError",
            Self::ArgumentType => "ArgumentTypeError",
            Self::Cycle => "CycleError",
            Self::NonOverridable => "NonOverridableFieldError",
            Self::DiscoveryConflict => "DiscoveryConflictError",
            Self::Store => "StoreError",
            Self::Config => "ConfigError",
            Self::ToolCall => "ToolCallError",
        }
    }
}

/// An attribute the exception carries besides its message and kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Attr {
    Text(String),
    Number(usize),
    Texts(Vec<String>),
}

/// A failure on its way to Python.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    pub class: Class,
    pub kind: &'static str,
    pub message: String,
    pub attrs: Vec<(&'static str, Attr)>,
}

impl Failure {
    pub(crate) fn new(class: Class, kind: &'static str, message: impl Into<String>) -> Self {
        Self {
            class,
            kind,
            message: message.into(),
            attrs: Vec::new(),
        }
    }

    pub(crate) fn with(mut self, name: &'static str, attr: Attr) -> Self {
        self.attrs.push((name, attr));
        self
    }

    /// The Python exception.
    pub(crate) fn into_py_err(self, py: Python<'_>) -> PyErr {
        match self.build(py) {
            Ok(err) => err,
            // The package's own module is missing or broken: say so with
            // the message that was to be raised.
            Err(err) => pyo3::exceptions::PyRuntimeError::new_err(format!(
                "{} (and `agents_registry.errors.{}` cannot be raised: {err})",
                self.message,
                self.class.name()
            )),
        }
    }

    fn build(&self, py: Python<'_>) -> PyResult<PyErr> {
        let class = error_class(py, self.class)?;
        let value = class.call1((self.message.as_str(), self.kind))?;
        for (name, attr) in &self.attrs {
            match attr {
                Attr::Text(text) => value.setattr(*name, text)?,
                Attr::Number(number) => value.setattr(*name, number)?,
                Attr::Texts(texts) => value.setattr(*name, PyList::new(py, texts)?)?,
            }
        }
        Ok(PyErr::from_value(value))
    }
}

/// The class `class` of `agents_registry.errors`.
pub(crate) fn error_class(py: Python<'_>, class: Class) -> PyResult<Bound<'_, PyType>> {
    Ok(py
        .import("agents_registry.errors")?
        .getattr(class.name())?
        .cast_into::<PyType>()?)
}

/// `agents_registry.errors.RegistryWarning`.
pub(crate) fn warning_class(py: Python<'_>) -> PyResult<Bound<'_, PyType>> {
    Ok(py
        .import("agents_registry.errors")?
        .getattr("RegistryWarning")?
        .cast_into::<PyType>()?)
}

/// Issues each of `lines` as a `RegistryWarning` (a filter may make one an
/// error, which is returned).
pub(crate) fn warn_all(py: Python<'_>, lines: &[String]) -> PyResult<()> {
    if lines.is_empty() {
        return Ok(());
    }
    let category = warning_class(py)?;
    for line in lines {
        // `stacklevel` 2: the caller's line, not the binding's.
        let message = std::ffi::CString::new(line.replace('\0', "\\0"))
            .map_err(|err| pyo3::exceptions::PyValueError::new_err(err.to_string()))?;
        PyErr::warn(py, &category, &message, 2)?;
    }
    Ok(())
}

impl From<ServiceError> for Failure {
    fn from(err: ServiceError) -> Self {
        let kind = err.kind();
        let message = err.to_string();
        match err {
            ServiceError::Store(err) => err.into(),
            ServiceError::Resolve(err) => err.into(),
            ServiceError::InvalidSkill(_)
            | ServiceError::InvalidNamespace(_)
            | ServiceError::ReservedToolName { .. }
            | ServiceError::Tool(_)
            | ServiceError::BuiltinTool(_) => Self::new(Class::Validation, kind, message),
            ServiceError::Discovery(agents_discovery::DiscoveryError::Conflicts(_)) => {
                Self::new(Class::DiscoveryConflict, kind, message)
            }
            ServiceError::Discovery(_) => Self::new(Class::Validation, kind, message),
            _ => Self::new(Class::Registry, kind, message),
        }
    }
}

impl From<StoreError> for Failure {
    fn from(err: StoreError) -> Self {
        let kind = err.kind();
        let message = err.to_string();
        let class = match err {
            StoreError::DuplicateSkill(_) => Class::DuplicateSkill,
            StoreError::SkillNotFound(_) => Class::SkillNotFound,
            StoreError::InvalidValue { .. } | StoreError::InvalidUrl { .. } => Class::Validation,
            _ => Class::Store,
        };
        Self::new(class, kind, message)
    }
}

impl From<ResolveError> for Failure {
    fn from(err: ResolveError) -> Self {
        let kind = err.kind();
        let message = err.to_string();
        match err {
            ResolveError::SkillNotFound { .. } | ResolveError::MissingInclude { .. } => {
                Self::new(Class::SkillNotFound, kind, message)
            }
            ResolveError::Cycle { cycle, .. } => Self::new(Class::Cycle, kind, message).with(
                "cycle",
                Attr::Texts(cycle.iter().map(ToString::to_string).collect()),
            ),
            ResolveError::NonOverridable {
                fields,
                skill,
                path,
            } => Self::new(Class::NonOverridable, kind, message)
                .with("fields", Attr::Texts(fields))
                .with("skill", Attr::Text(skill.to_string()))
                .with("include_path", Attr::Text(path)),
        }
    }
}

impl From<DefinitionError> for Failure {
    fn from(err: DefinitionError) -> Self {
        let mut failure = Self::new(Class::Validation, err.kind(), err.to_string())
            .with("file", Attr::Text(err.file.clone()));
        if let Some(line) = err.line {
            failure = failure.with("line", Attr::Number(line));
        }
        if let Some(column) = err.column {
            failure = failure.with("column", Attr::Number(column));
        }
        failure
    }
}

impl From<InvalidSkillName> for Failure {
    fn from(err: InvalidSkillName) -> Self {
        Self::new(Class::Validation, "invalid_skill_name", err.to_string())
    }
}

impl From<agents_config::ConfigError> for Failure {
    fn from(err: agents_config::ConfigError) -> Self {
        Self::new(Class::Config, err.kind(), err.to_string())
    }
}

/// What a method returns before it is back with the interpreter.
pub(crate) type Outcome<T> = Result<T, Failure>;

/// Runs `work` with the interpreter let go of (other Python threads run
/// meanwhile), and raises its failure once it is held again.
pub(crate) fn detached<T: Send>(
    py: Python<'_>,
    work: impl FnOnce() -> Outcome<T> + Send,
) -> PyResult<T> {
    py.detach(work).map_err(|failure| failure.into_py_err(py))
}

/// Raises `failure` (for conversions made with the interpreter held).
pub(crate) fn raise<T>(py: Python<'_>, outcome: Outcome<T>) -> PyResult<T> {
    outcome.map_err(|failure| failure.into_py_err(py))
}
