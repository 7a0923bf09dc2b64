#!/usr/bin/env bash
# A soak: mixed legitimate load, hostile datagrams and a ClientHello flood, first against
# one gateway, then against the fleet (scripts/fleet-lib.sh), each for the given time.
# Every few seconds it prints each gateway's RSS, table occupancy and counters (the
# gateway's --stats-file), and it fails when
#   - RSS grows without bound: the mean RSS of the last third of a gateway's samples
#     exceeds the largest of its middle third by more than 10 % + 4 MiB (a plateau
#     passes; growth that goes on through the run fails);
#   - table occupancy does (the same rule, by more than 10 % + 0.01 of the table);
#   - legitimate handshakes fail beyond the configured loss (--max-loss, default 0.01:
#     failed over started, the load runs' and the flood's legitimate clients together).
#
#   bash scripts/soak.sh [MINUTES] [--seconds S] [--max-loss X] [--out DIR]
#
# MINUTES (default 10) per target, or --seconds S (CI: 30 per target, one minute in all).
# Samples every 10 s, or every S/12 s when that is shorter (so that a short run still
# has thirds to compare). Legitimate load: `wtlsperf load` runs of at most 10 s in turn,
# 160p/160p with half of them resuming, 256p/256p with 30 %, and 160p/160p mutual, at
# 10 handshakes/s; hostile: 50 datagrams/s of random bytes, truncated and oversized
# records (scripts/soak_hostile.py); flood: `wtlsperf flood` at 100 ClientHellos/s.
# Everything on 127.0.0.1, every loop bounded by the end time, every process stopped by
# pid. The gateways forget idle peers and unfinished handshakes after 5 s. --out keeps the samples (samples-TARGET.csv) there.
#
# Third, the WAP gateway (`gateway --wap` on 127.0.38.1, ports 9200-9203, an HTTP origin
# of python's http.server): legitimate Gets in turn on 9201 (connection mode), 9200
# (connectionless, from the address 9201 proved) and 9203 (connection mode over WTLS),
# each a `wtlsperf client` of at most 10 s, every one of which must answer 200; hostile
# WTP/WSP datagrams toward all four ports at 50/s (scripts/soak_wap.py: random bytes,
# PDUs cut short, absurd TIDs and SAR counts, forged sources); and, at the end, 400
# connectionless Gets of a 20 KB deck from eight forged sources, which must draw at most
# twice the bytes they sent. The same RSS and occupancy rules apply to it.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=600
max_loss=0.01
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --max-loss) max_loss="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n 2,33p "$0"; exit 0 ;;
    [0-9]*) seconds=$(( $1 * 60 )); shift ;;
    *) echo "soak: unknown option $1 (--help)" >&2; exit 2 ;;
  esac
done
case "$seconds" in ''|*[!0-9]*|0) echo "soak: --seconds (or MINUTES) takes a positive whole number, got '$seconds'" >&2; exit 2 ;; esac
[ "$seconds" -le 86400 ] || { echo "soak: at most 1440 minutes" >&2; exit 2; }
python3 -c "import sys; x = float(sys.argv[1]); sys.exit(0 if 0 <= x < 1 else 1)" "$max_loss" 2>/dev/null ||
  { echo "soak: --max-loss takes a share in [0, 1), got '$max_loss'" >&2; exit 2; }
# shellcheck source=scripts/fleet-lib.sh
. scripts/fleet-lib.sh
[ -x "$FLEET_BIN" ] || { echo "soak: $FLEET_BIN not built (cargo build -p wtlsperf)" >&2; exit 1; }
# Short time-outs, so that the table reaches its steady state early in a short run and
# the growth rules compare a plateau with a plateau.
gateway_args="--idle-timeout-ms 5000 --handshake-timeout-ms 5000"
export FLEET_GATEWAY_ARGS="$gateway_args"
every=$(( seconds / 12 < 10 ? (seconds / 12 > 0 ? seconds / 12 : 1) : 10 ))
export FLEET_STATS_EVERY_S=$every
work=$(mktemp -d -t wtlsperf-soak.XXXXXX)
chmod 755 "$work"
[ -n "$out" ] && mkdir -p "$out"
pids=()
# On success the run's files go (--out keeps the samples); on failure they stay.
cleanup() {
  local rc=$? p
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  fleet_stop
  if [ "$rc" -eq 0 ]; then rm -rf "$work"; else echo "soak: the run's files are in $work" >&2; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Legitimate load against $1 until Unix time $2: load runs of at most 10 s in turn.
legit_loop() {
  local target=$1 end=$2 dir=$3 n=0
  local cases=("160p/160p server 0.5" "256p/256p server 0.3" "160p/160p mutual 0.0")
  while [ "$(date +%s)" -lt $((end - 2)) ]; do
    local left=$(( end - $(date +%s) - 1 ))
    local len=$(( left < 10 ? left : 10 ))
    # shellcheck disable=SC2086 # three words: case, authentication, resumption share
    set -- ${cases[$((n % 3))]}
    "$FLEET_BIN" load --connect "$target" --pki "$dir/pki" --case "$1" --auth "$2" \
      --resume-ratio "$3" --rate 10 --duration "$len" --timeout-ms 5000 --seed "$n" \
      --out "$dir/load-$n.json" >/dev/null 2>>"$dir/load.err" || true
    n=$((n + 1))
  done
}

# The ClientHello flood against $1 until $2, in runs of at most 300 s (its bound).
flood_loop() {
  local target=$1 end=$2 dir=$3 n=0
  while [ "$(date +%s)" -lt $((end - 2)) ]; do
    local left=$(( end - $(date +%s) - 1 ))
    "$FLEET_BIN" flood --connect "$target" --pki "$dir/pki" --case 160p/160p \
      --rate 100 --duration $(( left < 300 ? left : 300 )) --legit-rate 1 \
      >"$dir/flood-$n.json" 2>>"$dir/flood.err" || true
    n=$((n + 1))
  done
}

# Prints the newest sample of every gateway of $1 until $2.
monitor() {
  local dir=$1 end=$2
  while [ "$(date +%s)" -lt "$end" ]; do
    sleep "$every"
    python3 scripts/soak_report.py live "$dir" || true
  done
}

# One target: $1 is `single` or `fleet`.
soak_target() {
  local name=$1 target
  FLEET_DIR="$work/$name"
  mkdir -p "$FLEET_DIR"
  if [ "$name" = fleet ]; then
    FLEET_PKI="${FLEET_PKI:-$work/single/pki}" fleet_start
    target="127.0.0.1:$FLEET_BALANCER_PORT"
  else
    if [ -n "${FLEET_PKI:-}" ]; then
      cp -a "$FLEET_PKI" "$FLEET_DIR/pki"
    else
      "$FLEET_BIN" pki init --dir "$FLEET_DIR/pki" >"$FLEET_DIR/pki.log" 2>&1
    fi
    local port
    port=$(fleet_free_port udp)
    "$FLEET_BIN" gateway --listen "127.0.0.1:$port" --pki "$FLEET_DIR/pki" \
      --stats-file "$FLEET_DIR/node0.stats.jsonl" --stats-every-s "$every" $gateway_args \
      >"$FLEET_DIR/node0.out" 2>"$FLEET_DIR/node0.err" &
    FLEET_PIDS+=("$!")
    fleet_wait_for "grep -q 'gateway listening on' '$FLEET_DIR/node0.err'" 300 ||
      { echo "soak: the gateway did not start (log: $FLEET_DIR/node0.err)" >&2; return 1; }
    target="127.0.0.1:$port"
  fi
  local end=$(( $(date +%s) + seconds ))
  echo "soak: $name at $target for $seconds s, samples every $every s" >&2
  legit_loop "$target" "$end" "$FLEET_DIR" & pids+=("$!")
  flood_loop "$target" "$end" "$FLEET_DIR" & pids+=("$!")
  python3 scripts/soak_hostile.py "$target" 50 "$seconds" >"$FLEET_DIR/hostile.log" 2>&1 & pids+=("$!")
  monitor "$FLEET_DIR" "$end" & pids+=("$!")
  local p
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
  fleet_stop
  [ -n "$out" ] && cp "$FLEET_DIR"/node*.stats.jsonl "$out/" 2>/dev/null && for f in "$out"/node*.stats.jsonl; do mv "$f" "$out/$name-$(basename "$f")"; done
  return 0
}

# Legitimate WSP Gets against the WAP gateway at $1 (its address) until $2: each a
# `wtlsperf client` run of at most 10 s; the tally goes to load-wap.json.
wap_legit_loop() {
  local ip=$1 end=$2 dir=$3 url=$4 started=0 failed=0 n=0 out
  while [ "$(date +%s)" -lt $((end - 2)) ]; do
    local args
    case $((n % 3)) in
      0) args=(--connect "$ip:9201" --no-wtls --wsp-mode connection) ;;
      1) args=(--connect "$ip:9200" --no-wtls --wsp-mode connectionless) ;;
      *) args=(--connect "$ip:9203" --pki "$dir/../single/pki" --case 160p/160p --wsp-mode connection) ;;
    esac
    started=$((started + 1))
    out=$(timeout 10 "$FLEET_BIN" client "${args[@]}" --wsp-get "$url" 2>>"$dir/wap-client.err" || true)
    case "$out" in *"status 200"*) ;; *) failed=$((failed + 1)); echo "$n ${args[*]}: $out" >>"$dir/wap-client.err" ;; esac
    n=$((n + 1))
    printf '{"started": %d, "failed": %d}\n' "$started" "$failed" >"$dir/load-wap.json"
    sleep 0.2
  done
}

# The WAP gateway: legitimate Gets, hostile datagrams, then the reflection check.
soak_wap() {
  local dir="$work/wap" ip=127.0.38.1 port
  mkdir -p "$dir/www"
  python3 scripts/soak_wap.py decks "$dir/www"
  port=$(fleet_free_port tcp)
  python3 -m http.server "$port" --bind 127.0.0.1 -d "$dir/www" >"$dir/origin.log" 2>&1 &
  FLEET_PIDS+=("$!")
  "$FLEET_BIN" gateway --wap --listen "$ip:9200" --pki "$work/single/pki" \
    --stats-file "$dir/node0.stats.jsonl" --stats-every-s "$every" --access-log "$dir/access.log" \
    >"$dir/node0.out" 2>"$dir/node0.err" &
  FLEET_PIDS+=("$!")
  fleet_wait_for "grep -q 'connection-mode WSP over WTLS' '$dir/node0.err'" 300 ||
    { echo "soak: the WAP gateway did not start (log: $dir/node0.err)" >&2; return 1; }
  local end=$(( $(date +%s) + seconds ))
  echo "soak: wap at $ip:9200-9203 for $seconds s, samples every $every s" >&2
  wap_legit_loop "$ip" "$end" "$dir" "http://127.0.0.1:$port/deck2k.wml" & pids+=("$!")
  python3 scripts/soak_wap.py hostile "$ip" 9200 50 "$seconds" >"$dir/hostile.log" 2>&1 & pids+=("$!")
  monitor "$dir" "$end" & pids+=("$!")
  local p
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
  python3 scripts/soak_wap.py reflect "$ip:9200" "http://127.0.0.1:$port/deck20k.wml" 400 \
    --sources 127.4.0 >"$dir/reflection.json"
  echo "soak: wap reflection $(cat "$dir/reflection.json")" >&2
  fleet_stop
  [ -n "$out" ] && cp "$dir/node0.stats.jsonl" "$out/wap-node0.stats.jsonl"
  return 0
}

soak_target single
soak_target fleet
soak_wap
python3 scripts/soak_report.py verdict "$work/single" "$work/fleet" "$work/wap" --max-loss "$max_loss"
