//! The `agents` command-line tool: parses arguments, builds the registry
//! from settings, runs one command and turns the outcome into output and an
//! exit code. All real work lives in the library crates; this is the only
//! place that prints or exits.

mod commands;
mod context;
mod hints;
mod logs;
mod output;
mod shared;

use std::process::ExitCode;

use agents_cli::cli;

use crate::output::Failure;

/// Reading and resolving a large closure makes hundreds of thousands of
/// short-lived allocations; mimalloc makes them cheaper than the system
/// allocator and touches fewer fresh pages (measured in BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Hidden first argument: run as the supervisor of an MCP server (see
/// `agents_process`), which starts it through [`EXEC_ARG`].
pub(crate) const LAUNCH_ARG: &str = "__mcp-launch";

/// Hidden first argument: arm the parent-death signal, then `exec` the MCP
/// server in place (see `agents_mcp::launch`).
const EXEC_ARG: &str = "__mcp-exec";

fn main() -> ExitCode {
    // Library messages' hints read as this program's commands.
    hints::install();
    let first = std::env::args_os().nth(1);
    if first.as_deref() == Some(std::ffi::OsStr::new(LAUNCH_ARG)) {
        let rest: Vec<std::ffi::OsString> = std::env::args_os().skip(2).collect();
        // The server is started by this program again, so that it too gets
        // a parent-death signal: a SIGKILL of the supervisor takes it along.
        let exec: Vec<std::ffi::OsString> = std::env::current_exe()
            .map(|program| vec![program.into_os_string(), EXEC_ARG.into()])
            .unwrap_or_default();
        return match agents_process::supervise(&rest, &exec) {
            Ok(ended) => agents_process::end_as(ended),
            Err(err) => {
                // This is the server's stderr: the refresh that started it reports it.
                output::report_error(
                    cli::Format::Table,
                    &Failure::new(err.kind(), err.to_string()),
                );
                ExitCode::from(127)
            }
        };
    }
    if first.as_deref() == Some(std::ffi::OsStr::new(EXEC_ARG)) {
        let rest: Vec<std::ffi::OsString> = std::env::args_os().skip(2).collect();
        let err = agents_mcp::exec_server(&rest);
        output::report_error(
            cli::Format::Table,
            &Failure::new(err.kind(), err.to_string()),
        );
        return ExitCode::from(127);
    }
    let args = match cli::command()
        .try_get_matches()
        .and_then(|matches| <cli::Args as clap::FromArgMatches>::from_arg_matches(&matches))
    {
        Ok(args) => args,
        Err(err) => {
            // `--help`/`--version` are not errors; everything else is a usage error.
            if !err.use_stderr() {
                let _ = err.print();
                return ExitCode::SUCCESS;
            }
            // A script that asked for JSON gets its usage error as JSON too,
            // though the command line did not parse.
            if asks_for_json(std::env::args_os().skip(1)) {
                let text = err.to_string();
                let message = text.trim_end();
                let message = message.strip_prefix("error: ").unwrap_or(message);
                output::report_error(cli::Format::Json, &Failure::usage(message));
            } else {
                // clap echoes the argument it could not take, however long.
                let text = err.to_string();
                match output::bounded_lines(&text) {
                    std::borrow::Cow::Borrowed(_) => {
                        let _ = err.print();
                    }
                    std::borrow::Cow::Owned(cut) => {
                        let message = cut.trim_end();
                        let message = message.strip_prefix("error: ").unwrap_or(message);
                        output::report_error(cli::Format::Table, &Failure::usage(message));
                    }
                }
            }
            return ExitCode::from(2);
        }
    };
    logs::init(
        args.global.verbose,
        args.global.quiet,
        args.global.format_or_table(),
        args.global.color,
    );
    if args.global.format == Some(cli::Format::Yaml) {
        output::set_yaml();
    }
    if args.global.quiet {
        output::set_quiet();
    }
    if logs::colour(args.global.color) {
        output::set_colour();
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers(&args.command))
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
    // A gateway runs until it is stopped: a signal is its normal end (exit 0,
    // as a service manager expects), not a failure.
    let serving = matches!(
        args.command,
        cli::Command::Mcp(cli::McpCommand::Serve { .. })
    );
    // Grandchildren of MCP servers that left their process group come back to
    // us when their parent dies, and are killed before we exit.
    agents_mcp::adopt_orphans();
    runtime.spawn(exit_when_stuck(format));
    let outcome = runtime
        .block_on(until_signal(commands::run(args)))
        .and_then(|inner| inner);
    // Do not wait for a blocking stdin read (the MCP stdio transport) forever.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    agents_mcp::stop_adopted();
    output::finish(format);
    match outcome {
        Ok(code) => code,
        Err(failure) if failure.kind == output::BROKEN_PIPE => ExitCode::SUCCESS,
        Err(failure) if serving && failure.kind == INTERRUPTED => {
            output::note(&format!("mcp serve: stopped ({})", failure.message));
            ExitCode::SUCCESS
        }
        Err(failure) => {
            output::report_error(format, &failure);
            ExitCode::from(failure.exit_code())
        }
    }
}

/// Whether a command line that did not parse still says `--format json`
/// (`--format json` or `--format=json`, before any `--`).
fn asks_for_json(args: impl Iterator<Item = std::ffi::OsString>) -> bool {
    let mut previous_was_format = false;
    for arg in args {
        if arg == "--" {
            break;
        }
        if (previous_was_format && arg == "json") || arg == "--format=json" {
            return true;
        }
        previous_was_format = arg == "--format";
    }
    false
}

/// Runs `future` until it finishes or SIGINT, SIGTERM or SIGHUP arrives.
/// Dropping the future runs the MCP clients' destructors, which kill every
/// server's process group, so no command leaves a server behind.
async fn until_signal<T>(future: impl std::future::Future<Output = T>) -> Result<T, Failure> {
    let mut signals = Signals::install()?;
    tokio::select! {
        value = future => Ok(value),
        failure = signals.next() => Err(failure),
    }
}

/// How long a command has to stop after a signal before
/// [`exit_when_stuck`] ends the process.
const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// The runtime's worker threads. A stdio gateway answers one client, one
/// message after another: one worker keeps each message on one thread,
/// where two handed every proxied call between them (3.6 context switches
/// and 2 futex calls a call). Blocking work still goes to the blocking pool.
fn workers(command: &cli::Command) -> usize {
    match command {
        cli::Command::Mcp(cli::McpCommand::Serve { http: None, .. }) => 1,
        _ => 2,
    }
}

/// Runs on a worker thread beside the command: when a signal arrived and
/// the command has not stopped within [`STOP_GRACE`], reports it and exits.
/// [`until_signal`] can drop the command only where it awaits, and
/// resolving or printing a large closure computes for long without once
/// doing so (SIGTERM went unheeded until SIGKILL). The servers the command
/// started die with the process (each is launched with the parent-death
/// signal); adopted orphans are stopped here.
async fn exit_when_stuck(format: cli::Format) {
    let Ok(mut signals) = Signals::install() else {
        return;
    };
    let failure = signals.next().await;
    tokio::time::sleep(STOP_GRACE).await;
    output::report_error(format, &failure);
    agents_mcp::stop_adopted();
    std::process::exit(i32::from(failure.exit_code()));
}

/// The kind of the failure a stopping signal ends a command with.
const INTERRUPTED: &str = "interrupted";

/// The signals that stop a command.
struct Signals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    hup: tokio::signal::unix::Signal,
}

impl Signals {
    fn install() -> Result<Self, Failure> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            match (
                signal(SignalKind::terminate()),
                signal(SignalKind::hangup()),
            ) {
                (Ok(term), Ok(hup)) => Ok(Self { term, hup }),
                _ => Err(Failure::new("internal", "cannot install signal handlers")),
            }
        }
        #[cfg(not(unix))]
        Ok(Self {})
    }

    /// The next signal, as the failure it ends the command with.
    async fn next(&mut self) -> Failure {
        #[cfg(unix)]
        tokio::select! {
            _ = tokio::signal::ctrl_c() => Failure::new(INTERRUPTED, "interrupted"),
            _ = self.term.recv() => Failure::new(INTERRUPTED, "terminated (SIGTERM)"),
            _ = self.hup.recv() => Failure::new(INTERRUPTED, "hung up (SIGHUP)"),
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            Failure::new(INTERRUPTED, "interrupted")
        }
    }
}
