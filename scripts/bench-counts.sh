#!/usr/bin/env bash
# Instruction counts of every handshake case, for two commits side by side.
#
#   bash scripts/bench-counts.sh [--threshold PCT] [--reps N] [--out DIR] BASE [HEAD]
#
# Why: on a shared machine CPU times drift 10-20 % within minutes, so a 1 % regression
# cannot be seen in them. Instructions executed (valgrind's callgrind, as rustls'
# ci-bench does) are the same from run to run for the same binary and inputs, whatever
# else the machine is doing. For each commit (HEAD defaults to the work tree) the script
# builds the release binary in a temporary worktree, runs `wtlsperf handshake --all`
# under callgrind twice and reads, per case, the inclusive instruction counts of
#   - the server's `ServerConnection::handle_datagram` and the client's
#     `Client::handle_datagram` (a probed handshake plus one echoed record; the pass
#     runs with --no-bound so nothing else calls them), and
#   - `RawServerOps::run` (the server's raw public-key operations: the bound's
#     denominator; second pass; 0 for a commit before it was kept out of line),
# each divided by the reps (default 5: RSA blinding makes one RSA handshake's count
# move by up to ~3 %, the mean of five by about a third of that),
# then prints both commits side by side and flags every case whose server count rose
# more than the threshold (default 1 %). Exit status 1 if any case was flagged.
#
# Counts are exact for one binary; what still moves them is the data the code runs on
# (fresh random keys, nonces and RSA blinding per run): with five reps, EC cases move
# by under 0.3 % and RSA cases by up to about 1.5 % between two runs of one commit;
# run the same commit twice to see that spread on a given machine.
# Needs valgrind (Debian package `valgrind`; installed here if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
threshold=1
reps=5
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --threshold) threshold="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --reps) reps="$2"; shift 2 ;;
    -h|--help) sed -n 2,25p "$0"; exit 0 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { echo "bench-counts: give BASE (and optionally HEAD) commits; --help" >&2; exit 2; }
base="$1"; head="${2:-}"
command -v valgrind >/dev/null 2>&1 || {
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq valgrind
}
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
  (cd "$work/src" && CARGO_TARGET_DIR="$work/target-$rev" cargo build --release -q -p wtlsperf >&2)
  cp "$work/target-$rev/release/wtlsperf" "$work/wtlsperf-$rev"
  echo "$work/wtlsperf-$rev"
}

# inclusive FILE PATTERN -> inclusive Ir of the function(s) matching PATTERN in one dump
inclusive() {
  callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null |
    awk -v pat="$2" -v reps="$reps" '$0 ~ pat && $0 !~ /^ *\./ { gsub(",", "", $1); if ($1 + 0 > best) best = $1 + 0 }
      END { printf "%d\n", best / reps }'
}

# counts BINARY LABEL -> LABEL.csv: case,auth,server_ir,client_ir,raw_pk_ir
counts() {
  local bin="$1" label="$2" dir="$work/$2"
  mkdir -p "$dir"
  "$bin" pki init --dir "$work/pki" >/dev/null 2>&1 || true
  for pass in hs bound; do
    local extra="--no-bound"; [ "$pass" = bound ] && extra=""
    # One dump per case: each starts where the runner enters the next case.
    valgrind --tool=callgrind --callgrind-out-file="$dir/$pass.out" \
      --dump-before='*runner*measure_case*' \
      "$bin" handshake --pki "$work/pki" --all --reps "$reps" --warmup 0 --no-probe-overhead $extra \
      >"$dir/$pass.log" 2>&1
  done
  # The case order is the runner's table order (its first two columns).
  awk '$1 ~ /^[0-9a-z]+\/[0-9a-z]+$/ && ($2 == "server" || $2 == "mutual") { print $1 "," $2 }' "$dir/hs.log" | awk '!seen[$0]++' >"$dir/cases"
  echo "case,auth,server_ir,client_ir,raw_pk_ir" >"$out/$label.csv"
  local i=2 c
  while read -r c; do
    local hs="$dir/hs.out.$i" bd="$dir/bound.out.$i"
    [ -f "$hs" ] || hs="$dir/hs.out"
    [ -f "$bd" ] || bd="$dir/bound.out"
    echo "$c,$(inclusive "$hs" 'ServerConnection::handle_datagram'),$(inclusive "$hs" 'client::Client::handle_datagram'),$(inclusive "$bd" 'RawServerOps::run')" >>"$out/$label.csv"
    i=$((i + 1))
  done <"$dir/cases"
}

counts "$(build "$base")" base
counts "$(build "$head")" head

echo "instruction counts (callgrind Ir), $base -> ${head:-work tree}; written to $out/{base,head}.csv"
join -t, -j1 \
  <(tail -n +2 "$out/base.csv" | awk -F, '{ print $1 "/" $2 "," $3 "," $4 "," $5 }' | sort) \
  <(tail -n +2 "$out/head.csv" | awk -F, '{ print $1 "/" $2 "," $3 "," $4 "," $5 }' | sort) |
  awk -F, -v t="$threshold" '
    BEGIN { printf "%-22s %14s %14s %8s %14s %14s %8s %7s %7s\n", "case/auth", "server base", "server head", "change", "client base", "client head", "change", "srv/pk", "srv/pk"; bad = 0 }
    { ds = ($2 > 0) ? 100 * ($5 - $2) / $2 : 0; dc = ($3 > 0) ? 100 * ($6 - $3) / $3 : 0
      rb = ($4 > 0) ? $2 / $4 : 0; rh = ($7 > 0) ? $5 / $7 : 0
      flag = (ds > t) ? "  <-- server +" sprintf("%.2f", ds) "%" : ""; if (flag != "") bad++
      printf "%-22s %14d %14d %+7.2f%% %14d %14d %+7.2f%% %7.3f %7.3f%s\n", $1, $2, $5, ds, $3, $6, dc, rb, rh, flag }
    END { printf "%d case(s) whose server count rose more than %s %%\n", bad, t; exit (bad > 0) }'
