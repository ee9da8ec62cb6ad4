//! `run` tools: a custom or inline tool that says how it runs (a program
//! and an argv template, no shell). The arguments are checked against the
//! tool's `input_schema`, the template filled ([`RunSpec::argv`]), and the
//! program run in the roots as `shell` is: its own process group, killed
//! whole at the deadline or on cancel, under `sandbox: strict` when the
//! call's limits say so.
//!
//! stdout is the text result; with an `output_schema`, stdout must be JSON
//! that the schema accepts, and becomes the structured result too. A
//! non-zero exit is a tool error (`isError`) with the exit code and the
//! tail of stderr.

use std::time::Duration;

use agents_core::{RunSpec, ToolSpec, ValueMap};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::error::{ToolError, shown};
use crate::output::HeadTail;
use crate::process::{WorkDir, exit_line, run};
use crate::roots::Roots;
use crate::{Limits, ToolOutput};

/// A custom or inline tool that can be called: its name, schemas, whether
/// it writes, and its [`RunSpec`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct RunTool {
    /// The tool's registry name (`custom/deploy`, `inline:local/x/0`).
    pub name: String,
    /// How it runs.
    pub spec: RunSpec,
    /// JSON Schema the arguments must satisfy.
    pub input_schema: Option<Value>,
    /// JSON Schema stdout (as JSON) must satisfy; it is then the
    /// structured result.
    pub output_schema: Option<Value>,
    /// The tool writes (its definition says `writes: true`): refused under
    /// `read_only`.
    pub writes: bool,
}

impl RunTool {
    /// The callable tool `tool` defines: `None` when it has no `run`,
    /// `Some(Err)` when its `run` cannot be read.
    pub fn from_spec(tool: &ToolSpec) -> Option<Result<Self, String>> {
        Some(tool.run()?.map(|spec| Self {
            name: tool.name.clone(),
            spec,
            input_schema: tool.input_schema.clone(),
            output_schema: tool.output_schema.clone(),
            writes: tool.writes.unwrap_or(false),
        }))
    }

    /// The digest local trust in this tool is keyed by (its whole `run`).
    pub fn digest(&self) -> String {
        self.spec.digest()
    }
}

/// A [`RunTool`] whose very `run` the local user consented to (an
/// [`agents_trust::TrustedRun`], which only `agents-trust` makes): what
/// [`crate::Callable::Run`] holds, so no `run` starts without consent.
///
/// ```compile_fail
/// # fn forge(tool: agents_tools::RunTool) -> agents_tools::Callable {
/// // Its fields are private: a `run` cannot be made callable without consent.
/// agents_tools::Callable::Run(std::sync::Arc::new(agents_tools::TrustedRunTool { tool }))
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct TrustedRunTool {
    tool: RunTool,
}

impl TrustedRunTool {
    /// `tool` with `consent`, when the consent is for its `run` (the same
    /// spec, so the same digest); `None` otherwise.
    pub fn new(tool: RunTool, consent: &agents_trust::TrustedRun) -> Option<Self> {
        (consent.spec() == &tool.spec).then_some(Self { tool })
    }

    /// The tool.
    pub fn tool(&self) -> &RunTool {
        &self.tool
    }
}

fn invalid(tool: &RunTool, message: impl AsRef<str>) -> ToolError {
    ToolError::InvalidArguments {
        tool: shown(&tool.name),
        message: agents_core::text::bounded_message(message.as_ref()),
    }
}

/// Checks `value` against `schema`; the first few problems, joined.
fn validate(schema: &Value, value: &Value) -> Result<(), String> {
    let validator = jsonschema::validator_for(schema).map_err(|err| err.to_string())?;
    let problems: Vec<String> = validator
        .iter_errors(value)
        .take(3)
        .map(|err| {
            let at = err.instance_path().to_string();
            if at.is_empty() {
                err.to_string()
            } else {
                format!("{at}: {err}")
            }
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// The most bytes Linux's `execve` takes in one argument or environment
/// string, its NUL included (`MAX_ARG_STRLEN`, 32 pages of 4 KiB).
const MAX_ARG_STRLEN: usize = 32 * 4096;

/// A word of `argv` (or an `env` entry) too long for `execve`: refused
/// before anything starts, naming the template word it was filled from, so
/// the caller learns why rather than the program's `E2BIG`.
fn check_word_lengths(
    tool: &RunTool,
    args: &ValueMap,
    argv: &[String],
    env: &[(String, String)],
) -> Result<(), ToolError> {
    let too_long = |word: &str| word.len() >= MAX_ARG_STRLEN;
    let advice = format!(
        "Linux takes at most {} bytes in one argument (`MAX_ARG_STRLEN`); a value this large \
         goes on `run.stdin`",
        MAX_ARG_STRLEN - 1
    );
    if argv.iter().any(|word| too_long(word)) {
        for (index, template) in tool.spec.args.iter().enumerate() {
            let one = RunSpec {
                args: vec![template.clone()],
                ..tool.spec.clone()
            };
            if let Some(word) = one
                .argv(args)
                .ok()
                .and_then(|words| words.into_iter().find(|word| too_long(word)))
            {
                return Err(invalid(
                    tool,
                    format!(
                        "`run.args[{index}]` (`{}`) fills to {} bytes: {advice}",
                        shown(template),
                        word.len()
                    ),
                ));
            }
        }
    }
    for (key, value) in env {
        // `KEY=value` and its NUL.
        if key.len() + value.len() + 1 >= MAX_ARG_STRLEN {
            return Err(invalid(
                tool,
                format!(
                    "`run.env.{}` fills to {} bytes: {advice}",
                    shown(key),
                    value.len()
                ),
            ));
        }
    }
    Ok(())
}

fn holds_nul(value: &Value) -> bool {
    match value {
        Value::String(text) => text.contains('\0'),
        Value::Array(items) => items.iter().any(holds_nul),
        Value::Object(map) => map.iter().any(|(k, v)| k.contains('\0') || holds_nul(v)),
        _ => false,
    }
}

pub(crate) async fn call(
    roots: &Roots,
    limits: &Limits,
    tool: &RunTool,
    args: Value,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let args = match args {
        Value::Null => ValueMap::new(),
        Value::Object(map) => map,
        _ => return Err(invalid(tool, "the arguments must be a JSON object")),
    };
    if let Some(schema) = &tool.input_schema {
        validate(schema, &Value::Object(args.clone())).map_err(|err| invalid(tool, err))?;
    }
    if args.values().any(holds_nul) {
        return Err(ToolError::refused(
            crate::Rule::NulByte,
            "an argument holds a NUL byte",
        ));
    }
    let spec = &tool.spec;
    let argv = spec.argv(&args).map_err(|err| invalid(tool, err))?;
    let fill = |text: &str| RunSpec::fill(text, &args).map_err(|err| invalid(tool, err));
    let cwd = spec
        .cwd
        .as_deref()
        .map(fill)
        .transpose()?
        .unwrap_or_default();
    let stdin = spec.stdin.as_deref().map(fill).transpose()?;
    let env = spec
        .env
        .iter()
        .map(|(key, value)| Ok((key.clone(), fill(value)?)))
        .collect::<Result<Vec<_>, ToolError>>()?;
    check_word_lengths(tool, &args, &argv, &env)?;
    let dir = WorkDir::open(roots, &cwd)?;
    let mut command = tokio::process::Command::new(&spec.command);
    command.args(&argv).env_remove("PWD").envs(env);
    let timeout = spec
        .timeout_s
        .map_or(limits.shell_timeout, Duration::from_secs);
    let timeout = limits.timeout.map_or(timeout, |call| timeout.min(call));
    let cap = limits.max_output_bytes.saturating_sub(64);
    // stdout whole up to the limit (JSON is read from it); stderr's tail.
    let kept = (HeadTail::new(cap, false), HeadTail::new(cap / 4, true));
    let finished = run(
        command,
        &dir,
        kept,
        timeout,
        cancel,
        Some((roots, limits.sandbox)),
        stdin.map(String::into_bytes),
    )
    .await?;
    let exit_code = finished.status.code();
    let (stdout, stdout_cut) = finished.stdout.finish("stdout");
    if !finished.status.success() {
        let (stderr, stderr_cut) = finished.stderr.finish("stderr");
        let mut text = exit_line(&finished.status);
        text.push('\n');
        if !stderr.is_empty() {
            text.push_str("[stderr]\n");
            text.push_str(&stderr);
            if !text.ends_with('\n') {
                text.push('\n');
            }
        }
        return Ok(ToolOutput {
            text,
            is_error: true,
            truncated: stderr_cut,
            exit_code,
            structured: None,
        });
    }
    let mut output = ToolOutput {
        text: stdout,
        is_error: false,
        truncated: stdout_cut,
        exit_code,
        structured: None,
    };
    if let Some(schema) = &tool.output_schema {
        let problem = if stdout_cut {
            Some("stdout was cut to fit the limit, so it cannot be read as JSON".to_owned())
        } else {
            match serde_json::from_str::<Value>(&output.text) {
                Err(err) => Some(format!("stdout is not JSON: {err}")),
                Ok(value) => match validate(schema, &value) {
                    Ok(()) => {
                        output.structured = Some(value);
                        None
                    }
                    Err(err) => Some(format!("stdout does not match `output_schema`: {err}")),
                },
            }
        };
        if let Some(problem) = problem {
            output.is_error = true;
            output.text = agents_core::text::bounded_message(&problem);
        }
    }
    Ok(output)
}
