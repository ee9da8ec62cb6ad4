#!/usr/bin/env bash
# Runs every fuzz target (or those named) for SECONDS each, starting from the
# checked-in corpus, which is only read: new inputs go to a throwaway folder
# (the first corpus folder is the one libFuzzer writes to).
# Usage: fuzz/run.sh [SECONDS] [TARGET...]     (default: 30 seconds, all targets)
# A crash stops the run with exit 1; its input is kept in fuzz/artifacts/TARGET/.
set -euo pipefail
cd "$(dirname "$0")"

seconds=${1:-30}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(skill_definition skill_md config export lockfile resolve)
fi

# `-s none`: no sanitizer, so no `-Z` flag and the stable toolchain is enough
# (the project has no unsafe code); `-a`: debug assertions and overflow checks.
flags=(-s none -a)
cargo fuzz build "${flags[@]}"

work=$(mktemp -d "${TMPDIR:-/tmp}/agents-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
for target in "${targets[@]}"; do
    echo "== fuzz $target (${seconds}s)"
    mkdir -p "$work/$target" "artifacts/$target"
    start=$SECONDS
    cargo fuzz run "${flags[@]}" "$target" "$work/$target" "corpus/$target" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="artifacts/$target/" 2>"$work/$target.log" || {
        tail -n 60 "$work/$target.log"
        echo "fuzz target $target failed; the input is in fuzz/artifacts/$target/" >&2
        exit 1
    }
    grep -E '^stat::number_of_executed_units|^Done' "$work/$target.log" || true
    echo "corpus: $(ls "corpus/$target" | wc -l) checked in, $(ls "$work/$target" | wc -l) new; $((SECONDS - start))s"
done
