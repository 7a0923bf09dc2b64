#!/usr/bin/env bash
# Reproducibility as a figure: the full evaluation N times in a row, and its headline
# figures side by side.
#
#   bash scripts/repro.sh [--runs N] [--out DIR] [--quick] [--table-only]
#                         [--interference PCT [--interference-burst-ms MS]]
#
# Why: one run of a measurement on a shared machine proves little; what a reader can rely
# on is what holds in every run. The script builds the release binary once, runs
# `wtlsperf evaluate` N times (default 3) into DIR/run-1 .. DIR/run-N (default
# results/repro-<UTC stamp>), and writes DIR/repro.md: one column per run, one row per
# headline figure (queue points on target and within 15 %, the bound ratios and their
# failures, the capacity ratio, the transmission model's error per bearer, the run time),
# read from each run's summary.json and CSV files. docs/results.md quotes that table.
# --table-only rebuilds repro.md from the runs already in DIR. --interference runs every
# evaluation with the load test's interference injector (`evaluate --interference`: a
# thread busy-spinning on the gateway worker's core for PCT of the time, in bursts of MS
# ms, default 10), standing in for a cloud VM's hypervisor; the table's "degraded run" row
# says whether each run judged every designed load point. Needs python3 (Debian's
# python3-minimal) for the table.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=3
out=""
quick=""
table_only=""
interference=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --quick) quick="--quick"; shift ;;
    --table-only) table_only=1; shift ;;
    --interference) interference+=(--interference "$2"); shift 2 ;;
    --interference-burst-ms) interference+=(--interference-burst-ms "$2"); shift 2 ;;
    -h|--help) sed -n 2,20p "$0"; exit 0 ;;
    *) echo "repro: unknown option $1 (--help)" >&2; exit 2 ;;
  esac
done
case "$runs" in ''|*[!0-9]*|0) echo "repro: --runs must be a positive integer, got '$runs'" >&2; exit 2 ;; esac
out="${out:-results/repro-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$out"
command -v python3 >/dev/null 2>&1 || {
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-minimal
}

if [ -z "$table_only" ]; then
  bash scripts/setup.sh
  # The same build as the README's evaluation command (scripts/evaluate.sh): with
  # DTLS 1.3 and ML-KEM.
  cargo build --release -q -p wtlsperf --features dtls13
  for i in $(seq 1 "$runs"); do
    echo "repro: run $i of $runs -> $out/run-$i" >&2
    rm -rf "$out/run-$i"
    ./target/release/wtlsperf evaluate $quick ${interference[@]+"${interference[@]}"} --out "$out/run-$i" >"$out/run-$i.log" 2>&1 ||
      { echo "repro: run $i failed; its log is $out/run-$i.log" >&2; exit 1; }
  done
fi

python3 scripts/repro_table.py "$out" >"$out/repro.md"
cat "$out/repro.md"
