#!/usr/bin/env bash
# Instruction counts of every handshake case, for two commits side by side.
#
#   bash scripts/bench-counts.sh [--threshold PCT] [--out DIR] [--jobs N] [--case CASE]... BASE [HEAD]
#
# Why: on a shared machine CPU times drift 10-20 % within minutes, so a 1 % regression
# cannot be seen in them. The instructions one seeded handshake executes can: for each
# commit (HEAD defaults to the work tree) the script builds the release binary (in a
# temporary worktree for a commit) and runs `wtlsperf count`, the same subcommand the
# evaluation's instructions part uses. It counts, under valgrind's callgrind, each side
# of one handshake per case through the in-memory Pair driver (after a warm-up rep) and
# the server's raw public-key operations, with randomness seeded, virtual time and keys
# issued from the seed: two runs of one binary give identical counts, so any change is
# the code's. It then prints both commits side by side and flags every case whose
# server count rose more than the threshold (default 1 %). Exit status 1 if any was.
#
# --case limits the comparison to some cases (default all). A commit's build goes to
# target/bench-counts/ (kept, so a second comparison rebuilds only what changed).
# A commit without `wtlsperf count` cannot be compared (the script says so).
# Needs valgrind (Debian package `valgrind`, installed by scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
threshold=1
jobs=2
out=""
cases=()
while [ $# -gt 0 ]; do
  case "$1" in
    --threshold) threshold="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --case) cases+=(--case "$2"); shift 2 ;;
    -h|--help) sed -n 2,19p "$0"; exit 0 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { echo "bench-counts: give BASE (and optionally HEAD) commits; --help" >&2; exit 2; }
base="$1"; head="${2:-}"
command -v valgrind >/dev/null 2>&1 || bash scripts/setup.sh
work="$(mktemp -d)"
out="${out:-$work}"
mkdir -p "$out"
trap 'git worktree remove --force "$work/src" >/dev/null 2>&1 || true' EXIT

# build REV -> path of its release binary (REV empty: the current work tree)
build() {
  local rev="$1"
  if [ -z "$rev" ]; then
    cargo build --release -q -p wtlsperf >&2
    echo "$PWD/target/release/wtlsperf"
    return
  fi
  git rev-parse --verify -q "$rev^{commit}" >/dev/null || { echo "bench-counts: no commit $rev" >&2; exit 2; }
  git worktree remove --force "$work/src" >/dev/null 2>&1 || true
  git worktree add -q --detach "$work/src" "$rev"
  (cd "$work/src" && CARGO_TARGET_DIR="$root/target/bench-counts" cargo build --release -q -p wtlsperf >&2)
  cp "$root/target/bench-counts/release/wtlsperf" "$work/wtlsperf-$rev"
  echo "$work/wtlsperf-$rev"
}

# counts BINARY LABEL -> OUT/LABEL.csv (wtlsperf count's CSV)
counts() {
  local bin="$1" label="$2"
  "$bin" count --help >/dev/null 2>&1 || { echo "bench-counts: $label has no 'wtlsperf count'" >&2; exit 2; }
  "$bin" count --jobs "$jobs" ${cases[@]+"${cases[@]}"} --csv "$out/$label.csv"
}

counts "$(build "$base")" base
counts "$(build "$head")" head

echo "instruction counts (callgrind Ir), $base -> ${head:-work tree}; written to $out/{base,head}.csv"
# Rows: case,auth,variant,server,client,raw_pk,ratio; joined on case/auth/variant.
key() { tail -n +2 "$1" | awk -F, '{ print $1 "/" $2 "/" $3 "," $4 "," $5 "," $6 }' | sort; }
join -t, -j1 <(key "$out/base.csv") <(key "$out/head.csv") |
  awk -F, -v t="$threshold" '
    BEGIN { printf "%-26s %12s %12s %8s %12s %12s %8s %7s %7s\n", "case/auth/variant", "server base", "server head", "change", "client base", "client head", "change", "srv/pk", "srv/pk"; bad = 0 }
    { ds = ($2 > 0) ? 100 * ($5 - $2) / $2 : 0; dc = ($3 > 0) ? 100 * ($6 - $3) / $3 : 0
      rb = ($4 > 0) ? $2 / $4 : 0; rh = ($7 > 0) ? $5 / $7 : 0
      flag = (ds > t) ? "  <-- server +" sprintf("%.2f", ds) "%" : ""; if (flag != "") bad++
      printf "%-26s %12d %12d %+7.2f%% %12d %12d %+7.2f%% %7.3f %7.3f%s\n", $1, $2, $5, ds, $3, $6, dc, rb, rh, flag }
    END { printf "%d case(s) whose server count rose more than %s %%\n", bad, t; exit (bad > 0) }'
