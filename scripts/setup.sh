#!/usr/bin/env bash
# Installs what a fresh Debian/Ubuntu machine lacks to build and test wtlsperf: the system
# libcrypto headers for the `openssl` crate (libssl-dev, pkg-config), a C compiler, and
# tshark, the Wireshark dissector that the tests use as an independent wire oracle
# (crates/drivers/tests/dissector.rs; without it that check skips itself), and valgrind,
# whose callgrind counts the instructions of each handshake (`wtlsperf count`, the
# instruction columns of cases.csv, tests/counts.rs, scripts/bench-counts.sh). Idempotent:
# does nothing when everything is present. Non-interactive: the wireshark-common question
# "should non-superusers be able to capture packets?" is preseeded to "no" (the tests only
# read capture files, they never capture). Kannel 1.4.5 (Debian's kannel and kannel-extras:
# bearerbox, wapbox and the test programs fakewap and decompile under /usr/lib/kannel/test/)
# is the independent WAP peer of crates/wtlsperf/tests/wap.rs; the tests start and stop
# their own daemons, so the package's service is not needed (it is left as installed).
# redis-server (Debian's redis-server, with redis-cli) is the gateways' shared session
# store (`gateway --session-store`); crates/wtlsperf/tests/session_store.rs starts its own
# servers on loopback, so the package's service is not needed.
# chromium (Debian's, run headless) opens report.html at 1280 px in
# crates/report/tests/browser.rs, which fails on a console error, horizontal overflow or a
# figure whose legend and series disagree; it is also how to screenshot a report.
# nginx (with its stream module) is the fleet's balancer (scripts/fleet.sh), run by the
# fleet scripts as their own process on loopback; its service is not needed either.
# Rust itself comes from rustup (not installed here).
# The `dtls13` feature's wolfSSL (vendored by the wolfssl-sys crate) is configured with
# autotools (autoconf, automake, libtool) and its bindings made by bindgen, which loads
# libclang (libclang-dev).
set -euo pipefail
need=()
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
pkg-config --exists openssl 2>/dev/null || need+=(libssl-dev)
command -v cc >/dev/null 2>&1 || need+=(gcc)
command -v tshark >/dev/null 2>&1 || need+=(tshark)
command -v valgrind >/dev/null 2>&1 || need+=(valgrind)
command -v autoreconf >/dev/null 2>&1 || need+=(autoconf)
command -v automake >/dev/null 2>&1 || need+=(automake)
command -v libtoolize >/dev/null 2>&1 || need+=(libtool)
ls /usr/lib/llvm-*/lib/libclang.so* /usr/lib/x86_64-linux-gnu/libclang*.so* >/dev/null 2>&1 || need+=(libclang-dev)
[ -x /usr/sbin/wapbox ] || need+=(kannel)
[ -x /usr/lib/kannel/test/fakewap ] || need+=(kannel-extras)
# The fleet (scripts/fleet.sh, fleet-faults.sh, soak.sh): nginx's UDP stream balancer,
# Redis for the shared session store, python3 for the scripts' probes and tables.
command -v nginx >/dev/null 2>&1 || need+=(nginx)
[ -e /usr/lib/nginx/modules/ngx_stream_module.so ] || need+=(libnginx-mod-stream)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v python3 >/dev/null 2>&1 || need+=(python3)
# The report's browser test (crates/report/tests/browser.rs): headless Chromium.
command -v chromium >/dev/null 2>&1 || need+=(chromium)
# scripts/bench-wap-kannel.sh times the origin alone with curl (and captures with tshark's
# dumpcap).
command -v curl >/dev/null 2>&1 || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}" >&2
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  if [[ " ${need[*]} " == *" tshark "* ]]; then
    # debconf-set-selections comes with debconf, which every Debian/Ubuntu system has.
    echo "wireshark-common wireshark-common/install-setuid boolean false" |
      $SUDO debconf-set-selections
  fi
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
command -v cargo >/dev/null 2>&1 || { echo "setup: cargo not found; install Rust with rustup (https://rustup.rs)" >&2; exit 1; }
