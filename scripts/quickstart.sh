#!/usr/bin/env bash
# Builds `agents`, registers the shipped examples in the embedded default
# registry (SQLite at ~/.cleveragents/cleveragents.db) and prints the
# flattened tool set of `local/devops-toolkit`. Safe to run again: existing
# definitions are updated, not duplicated.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --quiet --locked -p agents-cli
agents=target/debug/agents

# The example Agent Skills go where discovery looks by default.
[ -d "$HOME/.cleveragents" ] || install -d -m 700 "$HOME/.cleveragents"
mkdir -p "$HOME/.cleveragents/agent_skills"
cp -R examples/agent_skills/. "$HOME/.cleveragents/agent_skills/"

"$agents" tool add --replace examples/tools/deploy.yaml >/dev/null
# Create or update; -q: a file may name an include the next file adds.
"$agents" -q skill apply examples/skills/*.yaml >/dev/null
"$agents" skill discover >/dev/null
exec "$agents" skill tools local/devops-toolkit --format json
