#!/usr/bin/env bash
# Creates a Python venv with the official MCP Python SDK (`mcp` from PyPI,
# pinned) and prints the path of its python, the value the gateway tests
# expect in AGENTS_TEST_MCP_PYTHON:
#
#   export AGENTS_TEST_MCP_PYTHON=$(scripts/install-mcp-python.sh [DIR])
#
# DIR defaults to $AGENTS_MCP_PYTHON_DIR, else ~/.cache/agents/mcp-python.
# When that version is already installed there, pip is not run (works offline).
# Needs python3 (>= 3.10) with the venv module. Only the path goes to stdout.
set -euo pipefail

version=2.3.0
dir=${1:-${AGENTS_MCP_PYTHON_DIR:-${HOME}/.cache/agents/mcp-python}}
python=$dir/bin/python

if ! command -v python3 >/dev/null 2>&1; then
    echo "install-mcp-python: \`python3\` is not installed" >&2
    exit 1
fi

installed_version() {
    [ -x "$python" ] || return 0
    "$python" -c 'import importlib.metadata as m; print(m.version("mcp"), end="")' 2>/dev/null || true
}

if [ "$(installed_version)" != "$version" ]; then
    echo "install-mcp-python: installing mcp==$version into $dir" >&2
    python3 -m venv "$dir" >&2
    "$python" -m pip install --quiet --disable-pip-version-check "mcp==$version" >&2
fi

if [ "$(installed_version)" != "$version" ]; then
    echo "install-mcp-python: mcp $version is missing from $dir after pip install" >&2
    exit 1
fi
echo "$python"
