//! `SkillRegistryService.call_tool`: one call of a builtin or `run` tool
//! through the same preparation, executor and policy as `agents tool call`.

use std::path::PathBuf;

use agents_tools::{AuditLog, CancellationToken, Executor, Limits, Roots, ToolError, ToolOutput};
use pyo3::prelude::*;
use serde_json::Value;

use crate::convert::{
    bool_arg, opt_str_arg, path_arg, py_repr, sequence_items, str_arg, to_json, to_py, wrong_type,
};
use crate::error::{Attr, Class, Failure, Outcome, warn_all};
use crate::service::PyService;

/// What a tool call returned. A tool that ran and failed (a non-zero exit,
/// a refused path) is a result with `is_error` true, as in MCP; a call
/// that could not be made raises.
#[pyclass(frozen, module = "agents_registry", name = "ToolResult")]
pub(crate) struct PyToolResult {
    output: ToolOutput,
}

#[pymethods]
impl PyToolResult {
    /// The tool's text result (at most 256 KiB, saying what was cut).
    #[getter]
    fn text(&self) -> &str {
        &self.output.text
    }

    /// The tool reports a failure.
    #[getter]
    fn is_error(&self) -> bool {
        self.output.is_error
    }

    /// Part of the result was cut to its bound.
    #[getter]
    fn truncated(&self) -> bool {
        self.output.truncated
    }

    /// The exit code of the process a `shell`, git or `run` tool started.
    #[getter]
    fn exit_code(&self) -> Option<i32> {
        self.output.exit_code
    }

    /// The result as JSON, for a `run` tool with an output schema.
    #[getter]
    fn structured<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.output
            .structured
            .as_ref()
            .map(|value| to_py(py, value))
            .transpose()
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "ToolResult(is_error={}, text={})",
            if self.output.is_error {
                "True"
            } else {
                "False"
            },
            py_repr(py, &agents_core::text::shorten(&self.output.text, 200))
        )
    }
}

/// The arguments of one `call_tool`, read while the interpreter is held.
pub(crate) struct CallArgs {
    skill: Option<String>,
    tool: String,
    arguments: Value,
    roots: Vec<PathBuf>,
    approve: bool,
    audit_file: Option<PathBuf>,
}

pub(crate) fn call_args(
    skill: &Bound<'_, PyAny>,
    tool: &Bound<'_, PyAny>,
    arguments: Option<&Bound<'_, PyAny>>,
    roots: Option<&Bound<'_, PyAny>>,
    approve: Option<&Bound<'_, PyAny>>,
    audit_file: Option<&Bound<'_, PyAny>>,
) -> Outcome<CallArgs> {
    let arguments = match arguments.filter(|value| !value.is_none()) {
        Some(value) => to_json(value, "arguments")?,
        None => Value::Object(serde_json::Map::new()),
    };
    let roots = match roots.filter(|value| !value.is_none()) {
        None => Vec::new(),
        Some(value) => {
            let Some(items) = sequence_items(value) else {
                return Err(wrong_type("argument `roots`", "a list of paths", value));
            };
            items
                .iter()
                .map(|item| path_arg(item, "roots"))
                .collect::<Outcome<_>>()?
        }
    };
    Ok(CallArgs {
        skill: opt_str_arg(Some(skill), "skill")?,
        tool: str_arg(tool, "tool")?,
        arguments,
        roots,
        approve: bool_arg(approve, "approve", false)?,
        audit_file: match audit_file.filter(|value| !value.is_none()) {
            Some(value) => Some(path_arg(value, "audit_file")?),
            None => None,
        },
    })
}

/// A call that could not be made, as `ToolCallError` (with the rule it
/// broke, when one did) or `ValidationError` for arguments the tool's
/// schema refuses.
fn call_failure(err: &ToolError) -> Failure {
    if err.is_protocol() {
        return Failure::new(Class::Validation, "invalid_arguments", err.to_string());
    }
    let failure = Failure::new(Class::ToolCall, "tool_error", err.to_string());
    match err.rule() {
        Some(rule) => failure.with("rule", Attr::Text(rule.to_string())),
        None => failure,
    }
}

impl PyService {
    pub(crate) fn call_one(&self, py: Python<'_>, args: CallArgs) -> PyResult<PyToolResult> {
        let (output, not_enforced) = self.run(py, |inner, service| {
            let prepared = inner
                .runtime
                .block_on(service.prepare_call(&args.tool, args.skill.as_deref()))?;
            let mut context = prepared.context;
            // Python has no terminal to ask on: `approve=True` is the answer.
            context.approved = args.approve;
            let roots = Roots::given_or_current(&args.roots)
                .map_err(|err| Failure::new(Class::Validation, "usage", err.to_string()))?;
            let audit = AuditLog::given_or_default(args.audit_file);
            let output = inner
                .runtime
                .block_on(agents_tools::call(
                    &Executor::new(roots, Limits::default()),
                    prepared.tool,
                    args.arguments,
                    &prepared.policy,
                    &context,
                    audit.as_ref(),
                    CancellationToken::new(),
                ))
                .map_err(|err| call_failure(&err))?;
            let not_enforced: Vec<String> = prepared
                .policy
                .not_enforced
                .iter()
                .map(ToString::to_string)
                .collect();
            Ok((output, not_enforced))
        })?;
        warn_all(py, &not_enforced)?;
        Ok(PyToolResult { output })
    }
}
