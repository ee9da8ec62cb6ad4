//! The test fixture MCP server (crate `agents-mcp-fixture`), built as an example
//! of this crate so that `cargo test -p agents-mcp` always builds a fresh copy
//! next to the test binary.

fn main() -> std::process::ExitCode {
    agents_mcp_fixture::run(std::env::args().skip(1).collect())
}
