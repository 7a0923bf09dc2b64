#!/usr/bin/env bash
# Starts a gateway fleet on loopback and keeps it up until SECONDS pass or a signal comes:
# Redis (when the gateway has --session-store), N gateways and nginx in front (UDP,
# `hash $remote_addr consistent`). Prints the ports, then stops everything it started,
# by pid, on exit, SIGINT or SIGTERM.
#
#   bash scripts/fleet.sh [--nodes N] [--workers W] [--seconds S]
#
# Defaults: 2 nodes of 1 worker for 600 s (at most 86400). Clients send to the
# `balancer=` address, e.g. `wtlsperf load --connect ADDR --pki DIR/pki` with the printed
# `dir=`. Builds nothing: FLEET_BIN (default target/debug/wtlsperf) must exist.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=600
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) FLEET_NODES="$2"; shift 2 ;;
    --workers) FLEET_WORKERS="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    -h|--help) sed -n 2,11p "$0"; exit 0 ;;
    *) echo "fleet: unknown option $1 (--help)" >&2; exit 2 ;;
  esac
done
for v in "${FLEET_NODES:-2}" "${FLEET_WORKERS:-1}" "$seconds"; do
  case "$v" in ''|*[!0-9]*|0) echo "fleet: --nodes, --workers and --seconds take positive whole numbers, got '$v'" >&2; exit 2 ;; esac
done
[ "$seconds" -le 86400 ] || { echo "fleet: --seconds is at most 86400" >&2; exit 2; }
# shellcheck source=scripts/fleet-lib.sh
. scripts/fleet-lib.sh
[ -x "$FLEET_BIN" ] || { echo "fleet: $FLEET_BIN not built (cargo build -p wtlsperf)" >&2; exit 1; }
trap fleet_stop EXIT
trap 'exit 130' INT TERM
fleet_start
fleet_print_ports
end=$(( $(date +%s) + seconds ))
while [ "$(date +%s)" -lt "$end" ]; do sleep 1; done
