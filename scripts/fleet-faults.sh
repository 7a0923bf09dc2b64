#!/usr/bin/env bash
# Faults under load, measured: while `wtlsperf load` runs against a fleet on loopback
# (scripts/fleet-lib.sh: gateways behind nginx's UDP balancer, Redis when the gateway has
# --session-store), one node is killed with SIGKILL and restarted; then, in a fresh fleet,
# Redis is. Prints one table row per fault (scripts/fleet_faults_table.py says what each
# column means) and fails when a handshake was lost other than in flight on the killed
# node or at nginx's reload by the health checker (which ends the UDP sessions of every
# node: docs/network.md), or when a Redis fault lost any handshake.
#
#   bash scripts/fleet-faults.sh [--short] [--nodes N] [--rate R] [--out FILE]
#
# The full run offers 40 handshakes/s for 20 s per fault (kill at 6 s, restart at 10 s);
# --short (CI) 20/s for 8 s (kill at 3 s, restart at 4.5 s). 30 % of the handshakes offer
# a stored session. Each client answer is held for an emulated bearer round trip of 100 ms
# on average (`load --round-trip-ms`), so that handshakes are in flight, on every node,
# when one dies (on bare loopback a handshake lasts a few ms and hardly any would be). --out writes the table as CSV too. Without the session store (a
# gateway built before it) the Redis fault is skipped and said so; nginx and python3
# are required (scripts/setup.sh installs nginx and Redis).
set -euo pipefail
cd "$(dirname "$0")/.."
short=0
rate=40
duration=20
fault_s=6
restart_s=10
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --short) short=1; rate=20; duration=8; fault_s=3; restart_s=4.5; shift ;;
    --nodes) FLEET_NODES="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n 2,16p "$0"; exit 0 ;;
    *) echo "fleet-faults: unknown option $1 (--help)" >&2; exit 2 ;;
  esac
done
case "${FLEET_NODES:-2}" in ''|*[!0-9]*|0|1) echo "fleet-faults: --nodes takes a whole number of at least 2" >&2; exit 2 ;; esac
python3 -c "import sys; r = float(sys.argv[1]); sys.exit(0 if 0 < r <= 500 else 1)" "$rate" 2>/dev/null ||
  { echo "fleet-faults: --rate takes a number in (0, 500], got '$rate'" >&2; exit 2; }
# shellcheck source=scripts/fleet-lib.sh
. scripts/fleet-lib.sh
[ -x "$FLEET_BIN" ] || { echo "fleet-faults: $FLEET_BIN not built (cargo build -p wtlsperf)" >&2; exit 1; }
# Sessions of one handshake each: a short balancer session time-out writes nginx's access
# log soon after the load ends.
export FLEET_SESSION_TIMEOUT=2s
# Statistics every half second: the fault waits for the load's first datagrams.
export FLEET_STATS_EVERY_S=0.5
work=$(mktemp -d -t wtlsperf-faults.XXXXXX)
# nginx runs as nobody when this script runs as root: it must reach its directory.
chmod 755 "$work"
load_pid=""
# On success the run's files go; on failure they stay for a look.
cleanup() {
  local rc=$?
  [ -n "$load_pid" ] && kill -TERM "$load_pid" 2>/dev/null || true
  [ -n "$load_pid" ] && wait "$load_pid" 2>/dev/null || true
  fleet_stop
  if [ "$rc" -eq 0 ]; then rm -rf "$work"; else echo "fleet-faults: the run's files are in $work" >&2; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
now_ms() { date +%s%3N; }

# One fault: $1 names it (node or redis). Prints the row's JSON to $work/$1.json.
run_fault() {
  local name=$1
  FLEET_DIR="$work/$name"
  mkdir -p "$FLEET_DIR"
  fleet_start
  [ -n "${FLEET_PKI:-}" ] || FLEET_PKI="$FLEET_DIR/pki"
  export FLEET_PKI
  "$FLEET_BIN" load --connect "127.0.0.1:$FLEET_BALANCER_PORT" --pki "$FLEET_DIR/pki" \
    --case 160p/160p --rate "$rate" --duration "$duration" --resume-ratio 0.3 \
    --round-trip-ms 100 --timeout-ms 5000 --outcomes "$FLEET_DIR/outcomes.csv" \
    >"$FLEET_DIR/load.json" 2>"$FLEET_DIR/load.err" &
  load_pid=$!
  # The fault is timed from the load's first datagrams (its key pool takes a while).
  fleet_wait_for "grep -q '\"datagrams_received\":[1-9]' '$FLEET_DIR'/node*.stats.jsonl" 600 ||
    { echo "fleet-faults: the load sent nothing within 60 s (log: $FLEET_DIR/load.err)" >&2; return 1; }
  sleep "$fault_s"
  local fault restart dead=-
  fault=$(now_ms)
  if [ "$name" = node ]; then
    dead=${FLEET_NODE_PORTS[0]}
    fleet_kill_node 0
  else
    fleet_kill_redis
  fi
  sleep "$(python3 -c "print(max(0.0, $restart_s - $fault_s))")"
  restart=$(now_ms)
  if [ "$name" = node ]; then
    fleet_start_node 0 2
  else
    fleet_restart_redis
  fi
  wait "$load_pid" || { echo "fleet-faults: the load failed (log: $FLEET_DIR/load.err)" >&2; return 1; }
  load_pid=""
  # nginx logs a session when it ends: after its time-out of silence.
  sleep "$(python3 -c "print(float('${FLEET_SESSION_TIMEOUT%s}') + 1.0)")"
  fleet_stop
  python3 scripts/fleet_faults_table.py "$FLEET_DIR/outcomes.csv" "$FLEET_DIR/nginx/access.log" \
    "$FLEET_DIR/health.log" "$fault" "$restart" "$((restart + 1000))" "$dead" >"$work/$name.json"
}

faults=(node)
if fleet_has_store; then
  faults+=(redis)
else
  echo "fleet-faults: this gateway has no --session-store: sessions stay on the node that made them, and the Redis fault is skipped" >&2
fi
for f in "${faults[@]}"; do
  echo "fleet-faults: $f fault, ${FLEET_NODES:-2} nodes, $rate handshakes/s for $duration s" >&2
  run_fault "$f"
done
python3 - "$work" "$out" "${faults[@]}" <<'EOF'
import csv, json, sys
work, out, faults = sys.argv[1], sys.argv[2], sys.argv[3:]
cols = ["fault", "started", "completed", "lost", "lost_on_node", "lost_at_reload",
        "lost_elsewhere", "in_flight_on_node", "sent_to_dead", "detect_ms", "reroute_ms", "restart_ms", "resume_before", "resume_during",
        "resume_after", "offered_before", "offered_during", "offered_after"]
rows = []
for f in faults:
    r = json.load(open(f"{work}/{f}.json"))
    r["fault"] = f
    rows.append(r)
def cell(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.2f}" if v < 10 else f"{v:.0f}"
    return str(v)
print(" ".join(f"{c:>17}" for c in cols))
for r in rows:
    print(" ".join(f"{cell(r.get(c)):>17}" for c in cols))
if out:
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(cols)
        for r in rows:
            w.writerow(["" if r.get(c) is None else r.get(c) for c in cols])
bad = []
for r in rows:
    if r["lost_elsewhere"] > 0:
        bad.append(f"{r['fault']}: {r['lost_elsewhere']} handshakes lost neither on the killed node nor at an nginx reload")
    if r["fault"] == "node" and r["lost_on_node"] > r["in_flight_on_node"] + r["sent_to_dead"]:
        bad.append(f"node: {r['lost_on_node']} lost on the killed node, more than the {r['in_flight_on_node']} in flight there at the kill and the {r['sent_to_dead']} sent there before the balancer routed around it")
    if r["fault"] == "redis" and r["lost"] > 0:
        bad.append(f"redis: {r['lost']} handshakes lost (a store fault may cost only resumption)")
    if r["started"] == 0 or r["offered_before"] == 0:
        bad.append(f"{r['fault']}: the load had not started before the fault")
for b in bad:
    print("fleet-faults: FAILED " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
