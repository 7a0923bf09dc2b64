# A gateway fleet on loopback: Redis (when the gateway has --session-store), N gateway
# processes and nginx's stream module in front (UDP, `hash $remote_addr consistent`).
# Sourced by scripts/fleet.sh, scripts/fleet-faults.sh and scripts/soak.sh; not run alone.
#
# Everything runs on 127.0.0.1 under one temporary directory (FLEET_DIR): nginx with its
# own prefix, configuration, pid file and logs, Redis without persistence. Every process
# is started in the background and its pid kept; fleet_stop stops exactly those pids.
# Every wait is bounded. nginx 1.22 does not take a crashed UDP node out of its ring by
# itself; scripts/fleet_health.py does (docs/network.md). docs/network.md says why nginx, docs/security.md what the
# gateway's per-address limits mean behind it.

FLEET_BIN="${FLEET_BIN:-target/debug/wtlsperf}"
FLEET_NODES="${FLEET_NODES:-2}"
FLEET_WORKERS="${FLEET_WORKERS:-1}"
# Balancer sessions (client sockets) one client address, and one /24 prefix, may hold:
# with the gateway's per-session answer budget these bound reflection toward a forged
# address and network (docs/security.md).
FLEET_SESSIONS_PER_ADDRESS="${FLEET_SESSIONS_PER_ADDRESS:-64}"
FLEET_SESSIONS_PER_PREFIX="${FLEET_SESSIONS_PER_PREFIX:-4096}"
# A client socket silent this long loses its balancer session (and so its gateway peer).
FLEET_SESSION_TIMEOUT="${FLEET_SESSION_TIMEOUT:-15s}"
# nginx takes a node that refused a datagram out of the hash ring for this long.
FLEET_FAIL_TIMEOUT="${FLEET_FAIL_TIMEOUT:-5s}"
FLEET_STATS_EVERY_S="${FLEET_STATS_EVERY_S:-10}"
# Extra gateway options (an array may be set by the caller).
: "${FLEET_GATEWAY_ARGS:=}"

FLEET_PIDS=()
FLEET_NODE_PIDS=()
FLEET_NODE_PORTS=()
FLEET_REDIS_PID=""
FLEET_REDIS_PORT=""
FLEET_NGINX_PID=""
FLEET_BALANCER_PORT=""
FLEET_STORE=0

fleet_log() { echo "fleet: $*" >&2; }

# A free port on 127.0.0.1 for $1 (udp or tcp), as the kernel hands one out.
fleet_free_port() {
  python3 -c 'import socket,sys
t = socket.SOCK_DGRAM if sys.argv[1] == "udp" else socket.SOCK_STREAM
s = socket.socket(socket.AF_INET, t); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' "$1"
}

# Waits (at most $2 tenths of a second) until the command $1 succeeds.
fleet_wait_for() {
  local tries=0
  until eval "$1" >/dev/null 2>&1; do
    tries=$((tries + 1))
    [ "$tries" -ge "$2" ] && return 1
    sleep 0.1
  done
}

# Whether this gateway can share sessions through Redis. A gateway with the store but no
# redis-server here: a failure under CI=true (or WTLSPERF_REQUIRE_REDIS), else a notice.
fleet_has_store() {
  "$FLEET_BIN" gateway --help 2>/dev/null | grep -q -- '--session-store' || return 1
  command -v redis-server >/dev/null 2>&1 && return 0
  if [ "${CI:-}" = true ] || [ "${CI:-}" = 1 ] || [ -n "${WTLSPERF_REQUIRE_REDIS:-}" ]; then
    fleet_log "redis-server not found and required (CI): install it with scripts/setup.sh"
    exit 1
  fi
  fleet_log "redis-server not found: running without the session store (scripts/setup.sh installs it)"
  return 1
}

fleet_start_redis() {
  FLEET_REDIS_PORT=$(fleet_free_port tcp)
  redis-server --bind 127.0.0.1 --port "$FLEET_REDIS_PORT" --save '' --appendonly no \
    --dir "$FLEET_DIR" --daemonize no --loglevel warning \
    >"$FLEET_DIR/redis.log" 2>&1 &
  FLEET_REDIS_PID=$!
  FLEET_PIDS+=("$FLEET_REDIS_PID")
  fleet_wait_for "redis-cli -h 127.0.0.1 -p $FLEET_REDIS_PORT ping | grep -q PONG" 100 ||
    { fleet_log "redis-server did not answer on port $FLEET_REDIS_PORT (log: $FLEET_DIR/redis.log)"; return 1; }
}

# Restarts Redis on the same port (after fleet_kill_redis).
fleet_restart_redis() {
  redis-server --bind 127.0.0.1 --port "$FLEET_REDIS_PORT" --save '' --appendonly no \
    --dir "$FLEET_DIR" --daemonize no --loglevel warning \
    >>"$FLEET_DIR/redis.log" 2>&1 &
  FLEET_REDIS_PID=$!
  FLEET_PIDS+=("$FLEET_REDIS_PID")
  fleet_wait_for "redis-cli -h 127.0.0.1 -p $FLEET_REDIS_PORT ping | grep -q PONG" 100
}

fleet_kill_redis() {
  kill -KILL "$FLEET_REDIS_PID" 2>/dev/null || true
  wait "$FLEET_REDIS_PID" 2>/dev/null || true
}

# Starts gateway $1 (0-based) on its port (chosen on its first start, kept on restarts).
fleet_start_node() {
  local i=$1
  [ -n "${FLEET_NODE_PORTS[$i]:-}" ] || FLEET_NODE_PORTS[i]=$(fleet_free_port udp)
  local port=${FLEET_NODE_PORTS[$i]}
  local store=()
  if [ "$FLEET_STORE" = 1 ]; then
    store=(--session-store "redis://127.0.0.1:$FLEET_REDIS_PORT" --session-key "$FLEET_DIR/session.key")
  fi
  # shellcheck disable=SC2086 # FLEET_GATEWAY_ARGS is a list of words by design
  "$FLEET_BIN" gateway --listen "127.0.0.1:$port" --pki "$FLEET_DIR/pki" \
    --workers "$FLEET_WORKERS" --balancer 127.0.0.1 \
    --stats-file "$FLEET_DIR/node$i.stats.jsonl" --stats-every-s "$FLEET_STATS_EVERY_S" \
    "${store[@]}" $FLEET_GATEWAY_ARGS \
    >>"$FLEET_DIR/node$i.out" 2>>"$FLEET_DIR/node$i.err" &
  FLEET_NODE_PIDS[i]=$!
  FLEET_PIDS+=("$!")
  fleet_wait_for "[ \$(grep -c 'gateway listening on' '$FLEET_DIR/node$i.err') -ge ${2:-1} ]" 300 ||
    { fleet_log "gateway $i did not start (log: $FLEET_DIR/node$i.err)"; return 1; }
}

# SIGKILL for gateway $1: no clean-up, as a crash.
fleet_kill_node() {
  kill -KILL "${FLEET_NODE_PIDS[$1]}" 2>/dev/null || true
  wait "${FLEET_NODE_PIDS[$1]}" 2>/dev/null || true
}

# The nginx configuration: one UDP server in front of the gateways.
fleet_nginx_conf() {
  local module
  module=$(ls /usr/lib/nginx/modules/ngx_stream_module.so 2>/dev/null || true)
  [ -n "$module" ] && echo "load_module $module;"
  cat <<EOF
daemon off;
master_process on;
worker_processes 1;
pid $FLEET_DIR/nginx/nginx.pid;
error_log $FLEET_DIR/nginx/error.log warn;
events { worker_connections 16384; }
stream {
    log_format fleet '\$msec \$remote_addr:\$remote_port \$upstream_addr \$status \$session_time';
    access_log $FLEET_DIR/nginx/access.log fleet;
    limit_conn_zone \$binary_remote_addr zone=per_address:1m;
    map \$remote_addr \$client_prefix {
        "~^(?<net>\\d+\\.\\d+\\.\\d+)\\.\\d+\$" \$net;
        default \$remote_addr;
    }
    limit_conn_zone \$client_prefix zone=per_prefix:1m;
    upstream gateways {
        hash \$remote_addr consistent;
EOF
  local p
  for p in "${FLEET_NODE_PORTS[@]}"; do
    echo "        server 127.0.0.1:$p max_fails=1 fail_timeout=$FLEET_FAIL_TIMEOUT;"
  done
  cat <<EOF
    }
    server {
        listen 127.0.0.1:$FLEET_BALANCER_PORT udp;
        proxy_pass gateways;
        proxy_bind 127.0.0.1;
        proxy_timeout $FLEET_SESSION_TIMEOUT;
        limit_conn per_address $FLEET_SESSIONS_PER_ADDRESS;
        limit_conn per_prefix $FLEET_SESSIONS_PER_PREFIX;
    }
}
EOF
}

fleet_start_nginx() {
  command -v nginx >/dev/null 2>&1 || { fleet_log "nginx not found (scripts/setup.sh installs it)"; return 1; }
  FLEET_BALANCER_PORT=$(fleet_free_port udp)
  mkdir -p "$FLEET_DIR/nginx"
  fleet_nginx_conf >"$FLEET_DIR/nginx/nginx.conf"
  local run=()
  if [ "$(id -u)" -eq 0 ]; then
    # Unprivileged: the ports are above 1024 and nothing needs root.
    chown -R nobody:nogroup "$FLEET_DIR/nginx"
    run=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
  fi
  "${run[@]}" nginx -p "$FLEET_DIR/nginx" -c "$FLEET_DIR/nginx/nginx.conf" \
    -e "$FLEET_DIR/nginx/error.log" >>"$FLEET_DIR/nginx/stderr.log" 2>&1 &
  FLEET_NGINX_PID=$!
  FLEET_PIDS+=("$FLEET_NGINX_PID")
  fleet_wait_for "[ -s '$FLEET_DIR/nginx/nginx.pid' ]" 100 ||
    { fleet_log "nginx did not start (log: $FLEET_DIR/nginx/error.log)"; cat "$FLEET_DIR/nginx/error.log" >&2; return 1; }
}

# The health checker (scripts/fleet_health.py): marks a node that refuses datagrams
# `down` in nginx's configuration and reloads nginx, and brings it back when it answers.
FLEET_HEALTH_INTERVAL_S="${FLEET_HEALTH_INTERVAL_S:-0.1}"
fleet_start_health() {
  python3 scripts/fleet_health.py "$FLEET_DIR/nginx/nginx.conf" "$FLEET_NGINX_PID" \
    "$FLEET_HEALTH_INTERVAL_S" 86400 "${FLEET_NODE_PORTS[@]}" \
    >>"$FLEET_DIR/health.log" 2>&1 &
  FLEET_PIDS+=("$!")
}

# Starts the whole fleet in FLEET_DIR (created when unset).
fleet_start() {
  [ -n "${FLEET_DIR:-}" ] || FLEET_DIR=$(mktemp -d -t wtlsperf-fleet.XXXXXX)
  chmod 755 "$FLEET_DIR"
  # Issuing the PKI takes a debug build some 20 s: FLEET_PKI reuses one.
  if [ -n "${FLEET_PKI:-}" ]; then
    cp -a "$FLEET_PKI" "$FLEET_DIR/pki"
  else
    "$FLEET_BIN" pki init --dir "$FLEET_DIR/pki" >"$FLEET_DIR/pki.log" 2>&1 ||
      { fleet_log "pki init failed (log: $FLEET_DIR/pki.log)"; return 1; }
  fi
  if fleet_has_store; then
    FLEET_STORE=1
    head -c 32 /dev/urandom >"$FLEET_DIR/session.key"
    fleet_start_redis || return 1
  fi
  local i
  for i in $(seq 0 $((FLEET_NODES - 1))); do
    fleet_start_node "$i" || return 1
  done
  fleet_start_nginx || return 1
  fleet_start_health
}

fleet_print_ports() {
  echo "dir=$FLEET_DIR"
  echo "balancer=127.0.0.1:$FLEET_BALANCER_PORT pid=$FLEET_NGINX_PID"
  local i
  for i in "${!FLEET_NODE_PORTS[@]}"; do
    echo "node$i=127.0.0.1:${FLEET_NODE_PORTS[$i]} pid=${FLEET_NODE_PIDS[$i]}"
  done
  if [ "$FLEET_STORE" = 1 ]; then
    echo "redis=127.0.0.1:$FLEET_REDIS_PORT pid=$FLEET_REDIS_PID"
  else
    echo "redis=none (this gateway has no --session-store: sessions stay on their node)"
  fi
}

# Stops every process this fleet started, by pid: SIGTERM, then SIGKILL after 5 s.
fleet_stop() {
  local p
  for p in "${FLEET_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  local tries=0
  for p in "${FLEET_PIDS[@]}"; do
    while kill -0 "$p" 2>/dev/null && [ "$tries" -lt 50 ]; do
      sleep 0.1
      tries=$((tries + 1))
    done
    kill -KILL "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  FLEET_PIDS=()
}
