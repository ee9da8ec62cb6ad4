#!/usr/bin/env bash
# The whole test suite, with everything it needs: a throwaway PostgreSQL
# server (TLS on, loopback only), a real third-party MCP server from npm,
# the official MCP Python SDK from PyPI and TypeScript SDK from npm (real
# third-party clients); then the Python package, built into a fresh venv
# (scripts/test-python.sh).
# Usage: scripts/test.sh [extra cargo test args]
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d "${TMPDIR:-/tmp}/agents-test.XXXXXX")
# The server runs as an unprivileged user when we are root: it must reach its data dir.
chmod 755 "$work"
cleanup() {
    scripts/pg-test-server.sh stop "$work/pg" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

echo "== starting PostgreSQL"
eval "$(scripts/pg-test-server.sh start "$work/pg")"
echo "== installing the MCP reference server (npm)"
AGENTS_TEST_MCP_EVERYTHING=$(scripts/install-mcp-everything.sh)
export AGENTS_TEST_MCP_EVERYTHING
echo "== installing the MCP Python SDK (PyPI) for the gateway tests"
AGENTS_TEST_MCP_PYTHON=$(scripts/install-mcp-python.sh)
export AGENTS_TEST_MCP_PYTHON
echo "== installing the MCP TypeScript SDK (npm) for the keep-alive client tests"
AGENTS_TEST_MCP_TS_SDK=$(scripts/install-mcp-ts-sdk.sh)
export AGENTS_TEST_MCP_TS_SDK
# Tests that need these fail instead of skipping.
export AGENTS_TEST_REQUIRE_ALL=1

echo "== cargo test"
cargo test --workspace --locked "$@"
echo "== python package (pip + maturin into a fresh venv, pytest, mypy --strict, stubtest)"
start=$SECONDS
scripts/test-python.sh "$work/python-venv"
echo "python package: $((SECONDS - start))s"
