#!/usr/bin/env bash
# The Python package's checks: builds python/ into a fresh venv with pip
# (maturin from PyPI as the build backend, the debug profile in the
# workspace's target folder, so what `cargo test` compiled is reused), then
# runs its pytest suite, `mypy --strict` on the examples, and mypy's
# stubtest of the shipped stubs against the built module.
#
#   scripts/test-python.sh DIR [pytest args]
#
# DIR is the venv to create (it must not exist). The tests that need the
# PostgreSQL server (AGENTS_TEST_POSTGRES_URL) or the `agents` binary
# (AGENTS_BIN, else target/debug/agents) skip without them, or fail with
# AGENTS_TEST_REQUIRE_ALL=1; scripts/test.sh provides all three.
set -euo pipefail
cd "$(dirname "$0")/.."

[[ $# -ge 1 ]] || { echo "usage: $0 DIR [pytest args]" >&2; exit 2; }
dir=$1
shift
[[ ! -e $dir ]] || { echo "test-python: \`$dir\` exists; give a new folder" >&2; exit 2; }

# Pinned, as the other tools CI installs.
PYTEST_VERSION=9.2.0
MYPY_VERSION=2.4.1

export PYTHONDONTWRITEBYTECODE=1
python3 -m venv "$dir"
py=$dir/bin/python
pip=("$py" -m pip install --quiet --disable-pip-version-check)
"${pip[@]}" "pytest==$PYTEST_VERSION" "mypy==$MYPY_VERSION"
MATURIN_PEP517_ARGS="--profile dev" "${pip[@]}" ./python

target=${CARGO_TARGET_DIR:-$PWD/target}
export AGENTS_BIN=${AGENTS_BIN:-$target/debug/agents}
"$py" -m pytest -q -p no:cacheprovider python/tests "$@"
"$py" -m mypy --strict --cache-dir "$dir/mypy-cache" python/examples
"$py" -m mypy.stubtest agents_registry
