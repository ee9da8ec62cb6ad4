#!/usr/bin/env bash
# Supply-chain checks: `cargo deny check` (advisories, bans, licenses,
# sources) against the RustSec snapshot in third_party/rustsec-advisory-db,
# so no network is needed; then proves the advisories check is live by adding
# one made-up advisory against a crate in the tree and expecting the check to
# fail on it.
#
#   scripts/deny.sh            the checks (what .ci/run runs)
#   scripts/deny.sh --refresh  replace the snapshot with the newest database
#                              (needs GitHub), then run the checks
set -euo pipefail
cd "$(dirname "$0")/.."

snapshot=third_party/rustsec-advisory-db
upstream=https://github.com/rustsec/advisory-db
# cargo-deny keeps the database for the default URL in this folder under
# `db-path` (the folder name is cargo-deny's hash of that URL; cargo-deny is
# pinned in .ci/run, and a change of name fails this script loudly).
db_folder=advisory-db-3157b0e258782691

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [[ ${1:-} == --refresh ]]; then
    git clone --quiet --depth 1 "$upstream" "$tmp/upstream"
    commit=$(git -C "$tmp/upstream" rev-parse HEAD)
    date=$(git -C "$tmp/upstream" show -s --format=%cI HEAD)
    header=$(grep '^#' "$snapshot/SNAPSHOT")
    rm -rf "$snapshot"
    mkdir -p "$snapshot"
    git -C "$tmp/upstream" archive HEAD crates LICENSE.txt LICENSES | tar -x -C "$snapshot"
    printf '%s\ncommit=%s\ndate=%s\n' "$header" "$commit" "$date" >"$snapshot/SNAPSHOT"
    echo "advisory snapshot now at $commit ($date)"
fi

date=$(sed -n 's/^date=//p' "$snapshot/SNAPSHOT")
db="$tmp/dbs/$db_folder"
mkdir -p "$db"
cp -R "$snapshot/." "$db"
commit_all() {
    git -C "$db" add -A
    GIT_AUTHOR_DATE=$date GIT_COMMITTER_DATE=$date \
        git -C "$db" -c user.name=snapshot -c user.email=snapshot@localhost \
        commit --quiet --message "$1"
}
git -C "$db" init --quiet
commit_all "RustSec advisory database snapshot"
days=$((($(date +%s) - $(date -d "$date" +%s)) / 86400))
echo "advisory snapshot of $date ($days days old), $(find "$db/crates" -name '*.md' | wc -l) advisories"

# deny.toml as it is, with the snapshot's folder as the database path.
sed "s|^\[advisories\]$|&\ndb-path = \"$tmp/dbs\"|" deny.toml >"$tmp/deny.toml"
grep -q "^db-path = \"$tmp/dbs\"$" "$tmp/deny.toml"
# cargo-deny reads the whole dependency graph, every platform's crates too,
# and offline it cannot download one: fetch them first (from the package
# registry, which CI reaches; a warm cache makes this a no-op).
cargo fetch --locked --quiet
cargo deny --locked --offline --config "$tmp/deny.toml" check

# Liveness: an advisory no published version has a fix for, against a crate
# every build of ours has, must fail the check. Its ID has the real form
# (cargo-deny passes over an advisory whose ID it cannot parse, silently).
crate=serde
mkdir -p "$db/crates/$crate"
cat >"$db/crates/$crate/RUSTSEC-2000-9999.md" <<ADVISORY
\`\`\`toml
[advisory]
id = "RUSTSEC-2000-9999"
package = "$crate"
date = "2000-01-01"

[versions]
patched = [">= 9999.0.0"]
\`\`\`

# Made up by scripts/deny.sh to prove the advisories check reads the snapshot
ADVISORY
commit_all "made-up advisory"
if cargo deny --locked --offline --config "$tmp/deny.toml" check advisories >"$tmp/live.out" 2>&1; then
    cat "$tmp/live.out"
    echo "deny.sh: a made-up advisory against \`$crate\` did not fail the advisories check" >&2
    exit 1
fi
if ! grep -q RUSTSEC-2000-9999 "$tmp/live.out"; then
    cat "$tmp/live.out"
    echo "deny.sh: the advisories check failed, but not on the made-up advisory" >&2
    exit 1
fi
echo "advisories check is live: a made-up advisory against \`$crate\` fails it"
