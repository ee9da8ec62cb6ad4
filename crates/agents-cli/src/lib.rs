//! The definition of the `agents` command line, as a library: the binary
//! parses with it, and tests walk it (the generated CLI reference in
//! `docs/reference/cli.md`). Nothing here runs a command.

// Library code returns errors; it does not panic on what it is given.
#![deny(clippy::panic, clippy::indexing_slicing)]

pub mod cli;
pub mod formats;
