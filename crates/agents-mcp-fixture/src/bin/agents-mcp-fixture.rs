//! Thin entry point; see the library for the modes.

fn main() -> std::process::ExitCode {
    agents_mcp_fixture::run(std::env::args().skip(1).collect())
}
