#!/usr/bin/env bash
# What the shared session store costs a handshake, measured in one run on loopback:
#   - abbreviated handshakes resumed from Redis vs from the gateway's in-process cache;
#   - full handshakes with the store up (each stores its session) vs down (the gateway
#     skips the store) vs the in-process cache;
#   - resumption attempts while the store is down (they fall back to full handshakes).
# Two gateways (one per store), the client run in interleaved rounds of 10 handshakes
# (one client process each) so that both see the same machine load; medians over every handshake of a kind (client-side duration,
# ClientHello out to handshake complete). Bounded: ROUNDS rounds of a few handshakes.
# Usage: scripts/bench-session-store.sh [ROUNDS, default 4]   (WTLSPERF=path/to/binary to choose it)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-4}"
bin="${WTLSPERF:-}"
if [ -z "$bin" ]; then
  if [ -x target/release/wtlsperf ]; then bin=target/release/wtlsperf; else bin=target/debug/wtlsperf; fi
fi
[ -x "$bin" ] || { echo "bench-session-store: no $bin; cargo build -p wtlsperf first" >&2; exit 1; }
command -v redis-server >/dev/null || { echo "bench-session-store: no redis-server; run scripts/setup.sh" >&2; exit 1; }

dir="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT

# redis-server on a free port, ready when it says so.
for _ in 1 2 3 4 5; do
  port="$(shuf -i 20000-31999 -n 1)"
  redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --save "" --appendonly no \
    --logfile "" >"$dir/redis.log" 2>&1 &
  redis_pid=$!
  for _ in $(seq 100); do
    grep -qs "Ready to accept connections" "$dir/redis.log" && break
    kill -0 "$redis_pid" 2>/dev/null || break
    sleep 0.1
  done
  grep -qs "Ready to accept connections" "$dir/redis.log" && break
done
grep -q "Ready to accept connections" "$dir/redis.log" || { echo "redis-server did not start" >&2; cat "$dir/redis.log" >&2; exit 1; }
pids+=("$redis_pid")

"$bin" pki init --dir "$dir/pki" >/dev/null
head -c 32 /dev/urandom >"$dir/fleet.key"
chmod 600 "$dir/fleet.key"

# Starts a gateway (stopping by itself after 15 minutes at the latest); sets gw_addr.
# The response-rate limiter is off: the client's back-to-back handshakes from one
# address would otherwise wait out its budget (a 1 s retransmission), and this measures
# the store, not the limiter.
start_gateway() { # name, extra options...
  local name="$1"; shift
  "$bin" gateway --pki "$dir/pki" --listen 127.0.0.1:0 --duration-s 900 \
    --rrl-address-bytes 0 --rrl-prefix-bytes 0 "$@" \
    >"$dir/$name.out" 2>"$dir/$name.err" &
  pids+=("$!")
  for _ in $(seq 600); do
    grep -q "listening on" "$dir/$name.err" && break
    sleep 0.1
  done
  gw_addr="$(grep "wtlsperf gateway listening on" "$dir/$name.err" | awk '{print $NF}')"
  [ -n "$gw_addr" ] || { echo "gateway $name did not start" >&2; cat "$dir/$name.err" >&2; exit 1; }
}
start_gateway local
local_gw="$gw_addr"
start_gateway store --session-store "redis://127.0.0.1:$port" --session-key "$dir/fleet.key"
store_gw="$gw_addr"

# Appends "KIND ms" for every handshake of one client run to $dir/<label>.
run_client() { # label, gateway, client options...
  local label="$1" gw="$2"; shift 2
  "$bin" client --pki "$dir/pki" --connect "$gw" "$@" |
    awk '/^handshake [0-9]+ /{ ms=$0; sub(/.*: /, "", ms); sub(/ ms,.*/, "", ms); print $3, ms }' >>"$dir/$label"
}

median() { # label, kind
  awk -v k="$2" '$1 == k { print $2 }' "$dir/$1" | sort -g |
    awk '{ v[NR] = $1 } END { if (NR == 0) { print "-" } else if (NR % 2) { print v[(NR + 1) / 2] } else { printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 } }'
}
count() { awk -v k="$2" '$1 == k' "$dir/$1" | wc -l; }

# Rounds of a few handshakes each, alternating the gateways: the machine's load
# changes by the second, and both must see the same.
for _ in $(seq "$rounds"); do
  run_client local "$local_gw" --count 10 --resume
  run_client store "$store_gw" --count 10 --resume
  run_client local "$local_gw" --count 10
  run_client store "$store_gw" --count 10
done
kill "$redis_pid"
wait "$redis_pid" 2>/dev/null || true
for _ in $(seq "$rounds"); do
  run_client down "$store_gw" --count 10
  run_client local_again "$local_gw" --count 10
  run_client down_resume "$store_gw" --count 10 --resume
done

printf '%-48s %8s %6s\n' "handshakes" "median" "n"
printf '%-48s %8s %6s\n' "abbreviated, in-process cache" "$(median local Abbreviated) ms" "$(count local Abbreviated)"
printf '%-48s %8s %6s\n' "abbreviated, Redis store" "$(median store Abbreviated) ms" "$(count store Abbreviated)"
printf '%-48s %8s %6s\n' "full, in-process cache" "$(median local Full) ms" "$(count local Full)"
printf '%-48s %8s %6s\n' "full, Redis store up" "$(median store Full) ms" "$(count store Full)"
printf '%-48s %8s %6s\n' "full, Redis store down" "$(median down Full) ms" "$(count down Full)"
printf '%-48s %8s %6s\n' "full, in-process cache (while the store is down)" "$(median local_again Full) ms" "$(count local_again Full)"
printf '%-48s %8s %6s\n' "full, --resume with the store down (falls back)" "$(median down_resume Full) ms" "$(count down_resume Full)"
printf '%-48s %8s %6s\n' "  of which abbreviated (must be 0)" "" "$(count down_resume Abbreviated)"
for p in "${pids[@]:1}"; do kill -TERM "$p" 2>/dev/null || true; done
for p in "${pids[@]:1}"; do wait "$p" 2>/dev/null || true; done
echo "store counters of the Redis gateway:"
sed -n '/"session_store"/,/}/p' "$dir/store.out"
grep -E "session store|resumption fell back" "$dir/store.err" | sed 's/^/  log: /' | head -5
