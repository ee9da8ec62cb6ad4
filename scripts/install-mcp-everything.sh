#!/usr/bin/env bash
# Installs the MCP reference server `@modelcontextprotocol/server-everything`
# (pinned) from the npm registry and prints the path of its entry point, the
# value the agents-mcp tests expect in AGENTS_TEST_MCP_EVERYTHING:
#
#   export AGENTS_TEST_MCP_EVERYTHING=$(scripts/install-mcp-everything.sh [DIR])
#
# DIR defaults to $AGENTS_MCP_EVERYTHING_DIR, else ~/.cache/agents/mcp-everything.
# When that version is already installed there, npm is not run (works offline).
# The server is then started as `node ENTRY stdio` or, with PORT=NNNN in its
# environment, `node ENTRY streamableHttp` (endpoint http://HOST:PORT/mcp).
# Needs node >= 18 and npm. Only the entry point's path goes to stdout.
set -euo pipefail

version=2026.8.31
package=@modelcontextprotocol/server-everything
dir=${1:-${AGENTS_MCP_EVERYTHING_DIR:-${HOME}/.cache/agents/mcp-everything}}
package_dir=$dir/node_modules/$package
entry=$package_dir/dist/index.js

installed_version() {
    [ -f "$package_dir/package.json" ] || return 0
    node -e 'process.stdout.write(require(process.argv[1]).version)' "$package_dir/package.json" 2>/dev/null || true
}

for tool in node npm; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "install-mcp-everything: \`$tool\` is not installed" >&2
        exit 1
    fi
done

if [ ! -f "$entry" ] || [ "$(installed_version)" != "$version" ]; then
    mkdir -p "$dir"
    echo "install-mcp-everything: installing $package@$version into $dir" >&2
    npm install --prefix "$dir" --no-audit --no-fund --save-exact "$package@$version" >&2
fi

if [ ! -f "$entry" ]; then
    echo "install-mcp-everything: $entry is missing after npm install" >&2
    exit 1
fi
echo "$entry"
