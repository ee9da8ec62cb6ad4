//! `agents-bench builtin-call --tool NAME --arguments JSON --root DIR [--runs R]`:
//! one builtin called in process through `agents-tools`' `Executor` (the
//! call the gateway makes for a `tools/call`, without the protocol), on a
//! runtime as the gateway's. One warm-up call, then `R` timed ones; prints
//! one JSON object for `bench/run`, which compares them with the same call
//! through `agents mcp serve`.

use agents_tools::{CancellationToken, Executor, Limits, Roots};
use serde_json::{Value, json};

struct Options {
    tool: String,
    arguments: Value,
    root: String,
    runs: usize,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut values = crate::flag_values(args, &["--tool", "--arguments", "--root", "--runs"])?;
    let arguments = match values.get("--arguments") {
        Some(text) => {
            serde_json::from_str(text).map_err(|err| format!("`--arguments` is not JSON: {err}"))?
        }
        None => json!({}),
    };
    Ok(Options {
        runs: crate::runs_of(&values, 200)?,
        tool: values.remove("--tool").ok_or("`--tool` is required")?,
        root: values.remove("--root").ok_or("`--root` is required")?,
        arguments,
    })
}

pub fn run(args: &[String]) -> Result<Value, String> {
    let options = parse(args)?;
    let runtime = crate::runtime()?;
    let roots = Roots::new([&options.root]).map_err(|err| err.to_string())?;
    let executor = Executor::new(roots, Limits::default());
    let call = || {
        let output = runtime
            .block_on(executor.call(
                &options.tool,
                options.arguments.clone(),
                CancellationToken::new(),
            ))
            .map_err(|err| err.to_string())?;
        if output.is_error {
            return Err(format!("`{}` failed: {}", options.tool, output.text));
        }
        Ok(output)
    };
    call()?;
    let samples = crate::timed(options.runs, call)?;
    Ok(json!({
        "tool": options.tool,
        "median_ms": crate::median(&samples),
        "samples_ms": samples,
    }))
}
