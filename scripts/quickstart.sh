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
mkdir -p "$HOME/.cleveragents/agent_skills"
cp -R examples/agent_skills/. "$HOME/.cleveragents/agent_skills/"

"$agents" tool add --replace examples/tools/deploy.yaml >/dev/null
for file in examples/skills/*.yaml; do
    "$agents" skill add "$file" >/dev/null 2>&1 || "$agents" skill update "$file" >/dev/null
done
"$agents" skill discover >/dev/null
exec "$agents" skill tools local/devops-toolkit --format json
