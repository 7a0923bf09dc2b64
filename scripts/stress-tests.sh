#!/usr/bin/env bash
# The whole test suite N times in a row while busy loops hold every core: the proof that
# no test's outcome depends on scheduling (docs/testing.md).
#
#   bash scripts/stress-tests.sh [--runs N] [--loops K]
#
# Builds the tests once (`cargo test --workspace --no-run`), then starts K busy loops
# (default 2, one per core of the 2-core CI machine; each bounded by `timeout`, and all
# killed when the script exits), runs `cargo test --workspace` N times (default 10) and
# prints one line per run and the count of failed runs. Exit status 1 if any run failed;
# the output of a failed run is kept in target/stress-tests/run-I.log.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=10
loops=2
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --loops) loops="$2"; shift 2 ;;
    -h|--help) sed -n 2,11p "$0"; exit 0 ;;
    *) echo "stress-tests: unknown option $1 (--help)" >&2; exit 2 ;;
  esac
done
for v in "$runs" "$loops"; do
  case "$v" in ''|*[!0-9]*) echo "stress-tests: --runs and --loops take whole numbers, got '$v'" >&2; exit 2 ;; esac
done
export WTLSPERF_REQUIRE_TSHARK="${WTLSPERF_REQUIRE_TSHARK:-1}"
cargo test --workspace --no-run -q
logs=target/stress-tests
mkdir -p "$logs"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
for _ in $(seq 1 "$loops"); do
  # Bounded: a busy loop never outlives four hours, whatever happens to this script.
  timeout 14400 sh -c 'while :; do :; done' &
  pids+=("$!")
done
failed=0
for i in $(seq 1 "$runs"); do
  start=$(date +%s)
  if cargo test --workspace -q >"$logs/run-$i.log" 2>&1; then
    passed=$(awk '/^test result:/ { n += $4 } END { print n + 0 }' "$logs/run-$i.log")
    verdict="passed ($passed tests)"
    rm -f "$logs/run-$i.log"
  else
    verdict="FAILED (log: $logs/run-$i.log)"
    failed=$((failed + 1))
  fi
  echo "run $i of $runs: $verdict in $(( $(date +%s) - start )) s, $loops busy loops"
done
echo "$failed of $runs runs failed"
[ "$failed" -eq 0 ]
