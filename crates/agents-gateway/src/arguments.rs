//! Checking a call's arguments against the tool's input schema before
//! anything runs: the error names the field and stays bounded whatever the
//! arguments.

use serde_json::Value;

#[cfg(test)]
thread_local! {
    /// Validators compiled on this thread.
    pub(crate) static COMPILED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The longest one argument problem is shown, in bytes.
const MAX_PROBLEM_BYTES: usize = 400;

/// Checks `arguments` against `schema`; the error names the field, and
/// stays a few KiB whatever the arguments (at most five problems, each cut
/// to [`MAX_PROBLEM_BYTES`]). Arguments that would take a validator more
/// than [`agents_core::MAX_ARGUMENT_CHECK_STEPS`] steps are refused
/// unchecked.
pub fn check_arguments(tool: &str, schema: &Value, arguments: &Value) -> Result<(), String> {
    compile(tool, schema)?.check(tool, arguments)
}

/// A tool's input schema compiled for checking arguments: its validator,
/// and what counts the validator's steps first.
#[derive(Debug)]
pub(crate) struct Checker {
    validator: jsonschema::Validator,
    steps: agents_core::ArgumentSteps,
}

/// The checker of `schema`, the input schema of `tool`.
pub(crate) fn compile(tool: &str, schema: &Value) -> Result<Checker, String> {
    #[cfg(test)]
    COMPILED.with(|compiled| compiled.set(compiled.get() + 1));
    let invalid = |err: String| format!("tool `{tool}` has an invalid input schema: {err}");
    Ok(Checker {
        validator: jsonschema::validator_for(schema).map_err(|err| invalid(err.to_string()))?,
        steps: agents_core::ArgumentSteps::new(schema).map_err(invalid)?,
    })
}

impl Checker {
    /// [`check_arguments`] with the compiled schema.
    pub(crate) fn check(&self, tool: &str, arguments: &Value) -> Result<(), String> {
        // A validator tries every branch again at each level of the value:
        // a branching recursive schema costs 2^depth. Counted first, bounded.
        self.steps
            .count(arguments, agents_core::MAX_ARGUMENT_CHECK_STEPS)
            .map_err(|message| format!("cannot check the arguments for `{tool}`: {message}"))?;
        check_with(tool, &self.validator, arguments)
    }
}

/// The validator's problems with `arguments`, at most five, each cut short.
fn check_with(
    tool: &str,
    validator: &jsonschema::Validator,
    arguments: &Value,
) -> Result<(), String> {
    let problems: Vec<String> = validator
        .iter_errors(arguments)
        .take(5)
        .map(|err| {
            let path = err.instance_path().to_string();
            let text = if path.is_empty() {
                err.to_string()
            } else {
                format!("`{path}`: {err}")
            };
            // The validator quotes the offending value whole (a 1.4 MB
            // argument made a 1.5 MB error, five times over): both ends
            // kept, which say where and what was expected.
            agents_core::text::shorten_middle(&text, MAX_PROBLEM_BYTES).into_owned()
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "invalid arguments for `{tool}`: {}",
            problems.join("; ")
        ))
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_argument_error_stays_short_whatever_the_argument() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "integer"},
            "d": {"type": "integer"}, "e": {"type": "integer"}, "f": {"type": "integer"}}});
        let big = "x".repeat(1_000_000);
        let arguments = json!({"a": big, "b": big, "c": big, "d": big, "e": big, "f": big});
        let Err(message) = check_arguments("t", &schema, &arguments) else {
            panic!("the arguments are invalid");
        };
        assert!(message.len() < 3_000, "{}", message.len());
        assert!(
            message.starts_with("invalid arguments for `t`: `/"),
            "{message}"
        );
        assert!(message.contains("integer"), "{message}");
        assert!(check_arguments("t", &schema, &json!({"a": 1})).is_ok());
    }
}
