#!/usr/bin/env bash
# Builds `agents`, registers the shipped examples in the embedded default
# registry (SQLite at ~/.cleveragents/cleveragents.db), prints the
# flattened tool set of `local/devops-toolkit` (JSON, on stdout) and then
# the next step to try (on stderr). Safe to run again: existing definitions
# are updated, not duplicated.
#
# The binary run is the one cargo says it built, wherever that is
# (`CARGO_TARGET_DIR`, `build.target-dir`): sourcing this file defines
# `agents_executable` only, which reads that path from cargo's JSON messages.
set -euo pipefail

# The path of the `agents` binary in cargo's JSON messages on stdin (the
# `executable` of the compiler artifact whose target is named `agents`);
# nothing when there is none.
agents_executable() {
    sed -n 's/.*"target":{[^}]*"name":"agents"[^}]*}.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1
}

main() {
    cd "$(dirname "$0")/.."

    local agents
    agents=$(cargo build --locked -p agents-cli --bin agents --message-format=json-render-diagnostics |
        agents_executable)
    if [ -z "$agents" ] || [ ! -x "$agents" ]; then
        echo "quickstart: cargo did not say where it built \`agents\`" >&2
        exit 1
    fi

    # The example Agent Skills go where discovery looks by default.
    [ -d "$HOME/.cleveragents" ] || install -d -m 700 "$HOME/.cleveragents"
    mkdir -p "$HOME/.cleveragents/agent_skills"
    cp -R examples/agent_skills/. "$HOME/.cleveragents/agent_skills/"

    "$agents" tool add --replace examples/tools/deploy.yaml >/dev/null
    # Create or update; -q: a file may name an include the next file adds.
    "$agents" -q skill apply examples/skills/*.yaml >/dev/null
    "$agents" skill discover >/dev/null
    "$agents" skill tools local/devops-toolkit --format json

    cat >&2 <<EOF

Next, ask why each of these tools is there:
  $agents skill tools local/devops-toolkit --explain
then serve them to Claude Desktop, Claude Code or VS Code: docs/guide/agents.md
EOF
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    main "$@"
fi
