#!/usr/bin/env bash
# The fleet-sizing model on a real fleet, as far as 2 cores allow: 2 gateway nodes of one
# worker behind nginx (scripts/fleet-lib.sh), offered Poisson handshakes through the
# balancer at two loads. For each node and load it prints the jobs it served (how evenly
# `hash $remote_addr consistent` split the clients), its measured job rate, utilisation
# and mean wait, and the wait Pollaczek-Khinchin predicts from that node's own measured
# service moments and job rate (the "hashed" model of fleet_sizing.csv, docs/results.md).
#
#   bash scripts/fleet-sizing-check.sh [--case CASE] [--seconds S] [--out FILE]
#
# Defaults: 256p/256p, 15 s per load; utilisations of about 0.15 and 0.3 per node are
# aimed at from a calibration run. Each client answer waits an emulated 20 ms round trip,
# so a handshake's datagrams arrive apart, as on a bearer. What it does not show: on 2
# cores the load generator, nginx and both nodes share the CPUs, so the nodes are not the
# independent servers the model assumes, and the balancer's cost is not separated.
set -euo pipefail
cd "$(dirname "$0")/.."
case_name=256p/256p
seconds=15
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --case) case_name="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n 2,15p "$0"; exit 0 ;;
    *) echo "fleet-sizing-check: unknown option $1 (--help)" >&2; exit 2 ;;
  esac
done
case "$seconds" in ''|*[!0-9]*|0) echo "fleet-sizing-check: --seconds takes a positive whole number, got '$seconds'" >&2; exit 2 ;; esac
[ "$seconds" -le 300 ] || { echo "fleet-sizing-check: --seconds is at most 300" >&2; exit 2; }
# shellcheck source=scripts/fleet-lib.sh
. scripts/fleet-lib.sh
[ -x "$FLEET_BIN" ] || { echo "fleet-sizing-check: $FLEET_BIN not built (cargo build -p wtlsperf)" >&2; exit 1; }
export FLEET_NODES=2 FLEET_WORKERS=1 FLEET_STATS_EVERY_S=0.5
work=$(mktemp -d -t wtlsperf-sizing.XXXXXX)
chmod 755 "$work"
FLEET_DIR="$work"
trap fleet_stop EXIT
trap 'exit 130' INT TERM
fleet_start

# The newest statistics line of each node, as one JSON array, into $1.
snapshot() {
  python3 - "$work" >"$1" <<'EOF'
import json, sys
nodes = []
for i in range(2):
    lines = open(f"{sys.argv[1]}/node{i}.stats.jsonl").read().splitlines()
    nodes.append(json.loads(lines[-1]))
print(json.dumps(nodes))
EOF
}

# Offers $1 handshakes/s for $2 s through the balancer, then waits for a fresh sample.
offer() {
  "$FLEET_BIN" load --connect "127.0.0.1:$FLEET_BALANCER_PORT" --pki "$FLEET_DIR/pki" \
    --case "$case_name" --rate "$1" --duration "$2" --round-trip-ms 20 --timeout-ms 5000 \
    >"$work/load-$1.json" 2>>"$work/load.err"
  sleep 1.5
}

snapshot "$work/s0.json"
offer 10 3
snapshot "$work/s1.json"
# The calibration's server time per handshake sets the two loads.
rates=$(python3 - "$work/s0.json" "$work/s1.json" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
busy = sum(y["mean_service_us"] * y["jobs"] - x["mean_service_us"] * x["jobs"] for x, y in zip(a, b))
hs = sum(sum(y["handshakes_completed"].values()) - sum(x["handshakes_completed"].values()) for x, y in zip(a, b))
per_hs_s = busy / max(hs, 1) / 1e6
# Two nodes: a per-node utilisation u needs 2u / (service per handshake) handshakes/s.
print(" ".join(f"{2 * u / per_hs_s:.1f}" for u in (0.15, 0.3)))
EOF
)
prev="$work/s1.json"
n=2
for r in $rates; do
  echo "fleet-sizing-check: $r handshakes/s for $seconds s" >&2
  offer "$r" "$seconds"
  snapshot "$work/s$n.json"
  python3 scripts/fleet_sizing_check.py "$prev" "$work/s$n.json" "$r" "$seconds" >>"$work/rows.jsonl"
  prev="$work/s$n.json"
  n=$((n + 1))
done
python3 scripts/fleet_sizing_check.py --table "$work/rows.jsonl" ${out:+"$out"}
