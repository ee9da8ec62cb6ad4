#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]
//! The `agents` binary end to end: real processes, a real SQLite file in a
//! temp dir, `HOME` pointed at a temp dir so nothing touches the real one.

mod support;

mod bad_input;
mod db;
mod discover;
mod import;
mod input;
mod lock;
mod mcp;
mod onboard;
mod output;
mod private;
mod providers;
mod schema;
mod serve;
mod serve_builtin;
mod serve_disclose;
mod serve_run;
mod skill;
mod tool;
mod tool_call;
mod trust;
mod workspace;
mod write_lines;
