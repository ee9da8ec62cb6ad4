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
    check_with(tool, schema, &compile(tool, schema)?, arguments)
}

/// The validator of `schema`, the input schema of `tool`.
pub(crate) fn compile(tool: &str, schema: &Value) -> Result<jsonschema::Validator, String> {
    #[cfg(test)]
    COMPILED.with(|compiled| compiled.set(compiled.get() + 1));
    jsonschema::validator_for(schema)
        .map_err(|err| format!("tool `{tool}` has an invalid input schema: {err}"))
}

/// [`check_arguments`] with `validator`, compiled from `schema`.
pub(crate) fn check_with(
    tool: &str,
    schema: &Value,
    validator: &jsonschema::Validator,
    arguments: &Value,
) -> Result<(), String> {
    // A validator tries every branch again at each level of the value: a
    // branching recursive schema costs 2^depth. Counted first, bounded.
    agents_core::argument_check_steps(schema, arguments, agents_core::MAX_ARGUMENT_CHECK_STEPS)
        .map_err(|message| format!("cannot check the arguments for `{tool}`: {message}"))?;
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
