#!/usr/bin/env bash
# The WAP gateway against Kannel 1.4.5's wapbox, driven by Kannel's own test client
# `fakewap` (connection-mode WSP over WTP class 2: Connect, Get, Disconnect per session),
# both gateways proxying to the same nginx origin on loopback. Then, since fakewap has no
# WTLS, our gateway's four ports with `wtlsperf client` one page after another (the
# secure ports 9202/9203 with a WTLS handshake per page), beside curl on the origin alone.
#
#   bash scripts/bench-wap-kannel.sh [--threads "8 32 128"] [--runs 3] [--sessions 2000]
#
# For each thread count and run, fakewap runs once against each gateway (alternating which
# goes first) while dumpcap records the loopback traffic of that gateway's port 9201;
# scripts/bench_wap_kannel.py turns the capture into per-session latencies (from the
# client's Connect to the Reply of its Get, as the network saw them) and fakewap's log into
# completed sessions and protocol errors ("is not Reply"), one CSV row per run, then a
# table of medians. Results go to BENCH_DIR (default: a new temporary directory):
# runs.csv, wtls.csv, table.md, meta.json (UTC start and end, commit, binary, options,
# machine) and every log. `wtlsperf evaluate --only wap_bench --wap-bench DIR` turns
# them into a report section (the command is printed at the end).
#
# Every process it starts (nginx, bearerbox, wapbox, the gateway, dumpcap) is stopped by
# its pid on exit; every client run is bounded by `timeout`; every wait is bounded.
# Needs Debian's kannel and kannel-extras, nginx and dumpcap (scripts/setup.sh), and a
# built BENCH_BIN (default target/debug/wtlsperf). Runs as root (dumpcap on lo).
# BENCH_KEEP_PCAP=1 keeps the captures (for a look with tshark).
set -euo pipefail
cd "$(dirname "$0")/.."

threads="8 32 128"
runs=3
sessions=2000
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --sessions) sessions="$2"; shift 2 ;;
    -h|--help) sed -n 2,24p "$0"; exit 0 ;;
    *) echo "bench-wap-kannel: unknown option $1 (--help)" >&2; exit 2 ;;
  esac
done
for v in $threads "$runs" "$sessions"; do
  case "$v" in ''|*[!0-9]*|0) echo "bench-wap-kannel: --threads, --runs and --sessions take positive whole numbers, got '$v'" >&2; exit 2 ;; esac
done
[ "$runs" -le 20 ] && [ "$sessions" -le 100000 ] ||
  { echo "bench-wap-kannel: at most 20 runs of 100000 sessions" >&2; exit 2; }

BIN="${BENCH_BIN:-target/debug/wtlsperf}"
FAKEWAP=/usr/lib/kannel/test/fakewap
OURS_IP=127.0.3.20
KANNEL_IP=127.0.3.21
# Longest one fakewap run may take (fakewap itself gives up on a silent gateway after 10 s).
RUN_LIMIT_S="${BENCH_RUN_LIMIT_S:-300}"
WTLS_PAGES="${BENCH_WTLS_PAGES:-200}"
for tool in "$FAKEWAP" /usr/sbin/bearerbox /usr/sbin/wapbox; do
  [ -x "$tool" ] || { echo "bench-wap-kannel: $tool missing (scripts/setup.sh installs kannel and kannel-extras)" >&2; exit 1; }
done
for tool in nginx dumpcap python3 setpriv curl bc ss; do
  command -v "$tool" >/dev/null || { echo "bench-wap-kannel: $tool not found (scripts/setup.sh)" >&2; exit 1; }
done
[ -x "$BIN" ] || { echo "bench-wap-kannel: $BIN not built (cargo build -p wtlsperf)" >&2; exit 1; }

DIR="${BENCH_DIR:-$(mktemp -d -t wtlsperf-bench-wap.XXXXXX)}"
STARTED_UTC=$(date -u +%Y-%m-%dT%H:%M:%SZ)
mkdir -p "$DIR"
chmod 755 "$DIR"
# shellcheck source=scripts/fleet-lib.sh
. scripts/fleet-lib.sh
log() { echo "bench-wap-kannel: $*" >&2; }
# fleet_stop stops every pid in FLEET_PIDS (SIGTERM, then SIGKILL after 5 s).
trap fleet_stop EXIT
trap 'exit 130' INT TERM
# Takes a pid that has been waited for out of FLEET_PIDS (its number may be reused).
drop_pid() {
  local keep=() p
  for p in "${FLEET_PIDS[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
  FLEET_PIDS=("${keep[@]}")
}

# The origin: nginx serving one WML deck over HTTP/1.1 with keep-alive, unprivileged.
start_nginx() {
  ORIGIN_PORT=$(fleet_free_port tcp)
  mkdir -p "$DIR/nginx/www"
  cp /usr/lib/kannel/test/hello.wml "$DIR/nginx/www/page.wml"
  cat >"$DIR/nginx/nginx.conf" <<EOF
daemon off;
worker_processes 1;
pid $DIR/nginx/nginx.pid;
error_log $DIR/nginx/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  types { text/vnd.wap.wml wml; }
  keepalive_requests 1000000;
  client_body_temp_path $DIR/nginx/tmp/body;
  proxy_temp_path $DIR/nginx/tmp/proxy;
  fastcgi_temp_path $DIR/nginx/tmp/fastcgi;
  uwsgi_temp_path $DIR/nginx/tmp/uwsgi;
  scgi_temp_path $DIR/nginx/tmp/scgi;
  server { listen 127.0.0.1:$ORIGIN_PORT; root $DIR/nginx/www; }
}
EOF
  mkdir -p "$DIR/nginx/tmp"
  chown -R nobody:nogroup "$DIR/nginx"
  setpriv --reuid=nobody --regid=nogroup --clear-groups \
    nginx -p "$DIR/nginx" -c "$DIR/nginx/nginx.conf" -e "$DIR/nginx/error.log" \
    >>"$DIR/nginx/stderr.log" 2>&1 &
  FLEET_PIDS+=("$!")
  URL="http://127.0.0.1:$ORIGIN_PORT/page.wml"
  fleet_wait_for "python3 -c 'import urllib.request,sys; urllib.request.urlopen(sys.argv[1], timeout=1)' '$URL'" 100 ||
    { log "nginx did not serve $URL (log: $DIR/nginx/error.log)"; return 1; }
}

# Our gateway on the four WAP ports of OURS_IP.
start_ours() {
  "$BIN" pki init --dir "$DIR/pki" >"$DIR/pki.log" 2>&1 || { log "pki init failed ($DIR/pki.log)"; return 1; }
  "$BIN" gateway --wap --listen "$OURS_IP:9200" --pki "$DIR/pki" --duration-s 86400 \
    >"$DIR/ours.json" 2>"$DIR/ours.log" &
  FLEET_PIDS+=("$!")
  fleet_wait_for "grep -q 'connection-mode WSP over WTLS' '$DIR/ours.log'" 300 ||
    { log "our gateway did not start (log: $DIR/ours.log)"; return 1; }
}

# Kannel's bearerbox and wapbox with WDP on KANNEL_IP (ports 9200 and 9201), the
# configuration of crates/wtlsperf/tests/wap.rs with warnings-only logs (Kannel at debug
# level spends its time logging).
start_kannel() {
  local admin wapbox_port
  admin=$(fleet_free_port tcp)
  wapbox_port=$(fleet_free_port tcp)
  cat >"$DIR/kannel.conf" <<EOF
group = core
admin-port = $admin
admin-password = bench
admin-allow-ip = "127.0.0.1"
wapbox-port = $wapbox_port
wdp-interface-name = "$KANNEL_IP"
box-allow-ip = "127.0.0.1"
udp-allow-ip = "127.0.0.1"
log-file = "$DIR/bearerbox.log"
log-level = 2

group = wapbox
bearerbox-host = "127.0.0.1"
log-file = "$DIR/wapbox.log"
log-level = 2
syslog-level = none
EOF
  /usr/sbin/bearerbox "$DIR/kannel.conf" >"$DIR/bearerbox.out" 2>&1 &
  FLEET_PIDS+=("$!")
  fleet_wait_for "ss -Htln | grep -q ':$wapbox_port '" 300 || { log "bearerbox did not start ($DIR/bearerbox.log)"; return 1; }
  /usr/sbin/wapbox "$DIR/kannel.conf" >"$DIR/wapbox.out" 2>&1 &
  FLEET_PIDS+=("$!")
  fleet_wait_for "ss -Htn state established | grep -q ':$wapbox_port '" 300 ||
    { log "wapbox did not connect ($DIR/wapbox.log)"; return 1; }
}

# One fakewap run: $1 gateway name, $2 its address, $3 threads, $4 run number.
fakewap_run() {
  local name=$1 ip=$2 t=$3 r=$4 base cap start end
  base="$DIR/$name-c$t-r$r"
  dumpcap -q -i lo -P -B 64 -f "udp and host $ip and port 9201" -w "$base.pcap" >"$base.dumpcap.log" 2>&1 &
  cap=$!
  FLEET_PIDS+=("$cap")
  fleet_wait_for "grep -q 'Capturing on' '$base.dumpcap.log'" 100 || { log "dumpcap did not start ($base.dumpcap.log)"; return 1; }
  start=$(date +%s.%N)
  set +e
  timeout "$RUN_LIMIT_S" "$FAKEWAP" -g "$ip" -p 9201 -M 1 -t 2 -c "$t" -m "$sessions" -i 0 "$URL" \
    >"$base.out" 2>"$base.err"
  echo $? >"$base.rc"
  set -e
  end=$(date +%s.%N)
  sleep 0.5
  kill -INT "$cap" 2>/dev/null || true
  wait "$cap" 2>/dev/null || true
  drop_pid "$cap"
  python3 scripts/bench_wap_kannel.py run --gateway "$name" --threads "$t" --run "$r" \
    --sessions "$sessions" --wall-s "$(echo "$end - $start" | bc)" --rc "$(cat "$base.rc")" \
    --pcap "$base.pcap" --log "$base.err" >>"$DIR/runs.csv"
  [ -n "${BENCH_KEEP_PCAP:-}" ] || rm -f "$base.pcap"
  tail -n 1 "$DIR/runs.csv" >&2
}

# Our client, one page after another: $1 port, $2 WSP mode, $3 run. The secure ports
# run a WTLS handshake (RSA 1024, server-authenticated) before each page.
wtls_run() {
  local port=$1 mode=$2 r=$3 base start end security
  base="$DIR/wtls-$port-r$r"
  case "$port" in
    9202|9203) security=(--pki "$DIR/pki" --case rsa1024/rsa1024) ;;
    *) security=(--no-wtls) ;;
  esac
  start=$(date +%s.%N)
  timeout "$RUN_LIMIT_S" "$BIN" client --connect "$OURS_IP:$port" "${security[@]}" \
    --wsp-mode "$mode" --wsp-get "$URL" --count "$WTLS_PAGES" \
    >"$base.out" 2>"$base.err" || log "wtlsperf client on $port exited $? ($base.err)"
  end=$(date +%s.%N)
  python3 scripts/bench_wap_kannel.py wtls --port "$port" --run "$r" --pages "$WTLS_PAGES" \
    --wall-s "$(echo "$end - $start" | bc)" --log "$base.out" >>"$DIR/wtls.csv"
  tail -n 1 "$DIR/wtls.csv" >&2
}

# The origin alone, for the gateway's overhead: curl's total time for the same page.
origin_run() {
  local r=$1 i
  for i in $(seq 1 "$WTLS_PAGES"); do
    curl -s -o /dev/null -w '%{time_total}\n' --max-time 5 "$URL"
  done >"$DIR/origin-r$r.txt"
  python3 scripts/bench_wap_kannel.py origin --run "$r" --times "$DIR/origin-r$r.txt" >>"$DIR/wtls.csv"
  tail -n 1 "$DIR/wtls.csv" >&2
}

log "results in $DIR"
start_nginx
start_ours
start_kannel
# One session each, to see both answer before measuring.
for target in "ours $OURS_IP" "kannel $KANNEL_IP"; do
  set -- $target
  timeout 20 "$FAKEWAP" -g "$2" -p 9201 -M 1 -m 1 "$URL" >"$DIR/warmup-$1.log" 2>&1 ||
    { log "$1 did not answer fakewap (log: $DIR/warmup-$1.log)"; exit 1; }
done
python3 scripts/bench_wap_kannel.py header run >"$DIR/runs.csv"
python3 scripts/bench_wap_kannel.py header wtls >"$DIR/wtls.csv"
# fakewap's threads share one TID counter (a static in test/fakewap.c), so a thread asked
# to prove a TID (WAP-224's TID test) answers only if no other thread moved the counter
# meanwhile, and otherwise waits out its 10 s time-out. A new fakewap whose socket got a
# port the previous run's client used is asked when the gateway still holds that port's
# TID: ours for its TID cache's lifetime (59 s on the IP bearer: 8 retransmissions 7 s
# apart plus the 3 s MPL, docs/wap.md), Kannel's for ever. So a run never starts within
# that lifetime of the end of the last run against ours, as separate clients on a
# network would not meet a gateway's memory of each other.
TID_LIFETIME_S=60
ours_done=0
for t in $threads; do
  for r in $(seq 1 "$runs"); do
    if [ $((r % 2)) -eq 1 ]; then order="ours kannel"; else order="kannel ours"; fi
    for g in $order; do
      if [ "$g" = ours ]; then
        ip=$OURS_IP
        wait_s=$((ours_done + TID_LIFETIME_S - $(date +%s)))
        [ "$wait_s" -le 0 ] || sleep "$wait_s"
      else
        ip=$KANNEL_IP
      fi
      fakewap_run "$g" "$ip" "$t" "$r"
      [ "$g" != ours ] || ours_done=$(date +%s)
    done
  done
done
for r in $(seq 1 "$runs"); do
  origin_run "$r"
  wtls_run 9200 connectionless "$r"
  wtls_run 9201 connection "$r"
  wtls_run 9202 connectionless "$r"
  wtls_run 9203 connection "$r"
done
python3 scripts/bench_wap_kannel.py table --runs "$DIR/runs.csv" --wtls "$DIR/wtls.csv" | tee "$DIR/table.md"
# What a report needs to say when, where and how this was measured.
python3 scripts/bench_wap_kannel.py meta --started "$STARTED_UTC" --binary "$BIN" \
  --commit "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
  --options "--threads '$threads' --runs $runs --sessions $sessions (BENCH_WTLS_PAGES=$WTLS_PAGES, BENCH_RUN_LIMIT_S=$RUN_LIMIT_S)" \
  >"$DIR/meta.json"
log "results in $DIR"
log "into a report: $BIN evaluate --only wap_bench --wap-bench $DIR --out $DIR/report (or --wap-bench $DIR in a whole evaluation)"
