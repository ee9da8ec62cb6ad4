//! The `agents` command-line tool: parses arguments, builds the registry
//! from settings, runs one command and turns the outcome into output and an
//! exit code. All real work lives in the library crates; this is the only
//! place that prints or exits.

mod cli;
mod commands;
mod context;
mod output;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = match cli::Args::try_parse() {
        Ok(args) => args,
        Err(err) => {
            // `--help`/`--version` are not errors; everything else is a usage error.
            let code = if err.use_stderr() { 2 } else { 0 };
            let _ = err.print();
            return ExitCode::from(code);
        }
    };
    init_tracing(args.global.verbose);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            output::report_error(args.global.format_or_table(), &output::Failure::io(err));
            return ExitCode::from(1);
        }
    };
    let format = args.global.format_or_table();
    // Grandchildren of MCP servers that left their process group come back to
    // us when their parent dies, and are killed before we exit.
    agents_mcp::adopt_orphans();
    let outcome = runtime.block_on(commands::run(args));
    drop(runtime);
    agents_mcp::stop_adopted();
    match outcome {
        Ok(code) => code,
        Err(failure) => {
            output::report_error(format, &failure);
            ExitCode::from(failure.exit_code())
        }
    }
}

fn init_tracing(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("CLEVERAGENTS_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .try_init();
}
