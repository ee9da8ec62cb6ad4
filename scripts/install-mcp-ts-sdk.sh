#!/usr/bin/env bash
# Installs the official MCP TypeScript SDK `@modelcontextprotocol/sdk`
# (pinned) from the npm registry and prints the folder it was installed into
# (the one holding `node_modules`), the value the gateway tests expect in
# AGENTS_TEST_MCP_TS_SDK:
#
#   export AGENTS_TEST_MCP_TS_SDK=$(scripts/install-mcp-ts-sdk.sh [DIR])
#
# DIR defaults to $AGENTS_MCP_TS_SDK_DIR, else ~/.cache/agents/mcp-ts-sdk.
# When that version is already installed there, npm is not run (works offline).
# The test clients load it with `createRequire(DIR + "/")`: its client reuses
# one keep-alive connection, as most Node-based agents do.
# Needs node >= 18 and npm. Only the folder's path goes to stdout.
set -euo pipefail

version=1.32.2
package=@modelcontextprotocol/sdk
dir=${1:-${AGENTS_MCP_TS_SDK_DIR:-${HOME}/.cache/agents/mcp-ts-sdk}}
package_dir=$dir/node_modules/$package

installed_version() {
    [ -f "$package_dir/package.json" ] || return 0
    node -e 'process.stdout.write(require(process.argv[1]).version)' "$package_dir/package.json" 2>/dev/null || true
}

for tool in node npm; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "install-mcp-ts-sdk: \`$tool\` is not installed" >&2
        exit 1
    fi
done

if [ "$(installed_version)" != "$version" ]; then
    mkdir -p "$dir"
    echo "install-mcp-ts-sdk: installing $package@$version into $dir" >&2
    npm install --prefix "$dir" --no-audit --no-fund --save-exact "$package@$version" >&2
fi

if [ "$(installed_version)" != "$version" ]; then
    echo "install-mcp-ts-sdk: $package $version is missing from $dir after npm install" >&2
    exit 1
fi
echo "$dir"
