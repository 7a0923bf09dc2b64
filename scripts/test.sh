#!/usr/bin/env bash
# The test command: builds everything and runs every test of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The checks that need tshark (tests/dissector.rs, pcap.rs) and valgrind (tests/counts.rs,
# wtls record::constant_time) must run, not skip: setup.sh installed both. (Under CI=true
# a missing tool fails them anyway; see crates/testtools.)
export WTLSPERF_REQUIRE_TSHARK=1
export WTLSPERF_REQUIRE_VALGRIND=1
# Kannel (wapbox, fakewap, decompile: tests/wap.rs) likewise, installed by setup.sh.
export WTLSPERF_REQUIRE_KANNEL=1
# redis-server (tests/session_store.rs), installed by setup.sh.
export WTLSPERF_REQUIRE_REDIS_SERVER=1
# chromium (crates/report/tests/browser.rs: the report in a real browser), installed by
# setup.sh.
export WTLSPERF_REQUIRE_CHROMIUM=1
# `dtls13`: DTLS 1.3 and ML-KEM through wolfSSL (GPL-2.0-or-later; README, "Licence").
cargo test --workspace --features wtlsperf/dtls13
# The fleet's short fault run and one minute of soak (nginx, Redis: setup.sh). Each
# script stops what it started; `timeout` bounds them whatever happens.
cargo build -p wtlsperf
export WTLSPERF_REQUIRE_REDIS=1
pki=$(mktemp -d -t wtlsperf-ci-pki.XXXXXX)
trap 'rm -rf "$pki"' EXIT
chmod 755 "$pki"
target/debug/wtlsperf pki init --dir "$pki/pki" >/dev/null
FLEET_PKI="$pki/pki" timeout 150 bash scripts/fleet-faults.sh --short
FLEET_PKI="$pki/pki" timeout 150 bash scripts/soak.sh --seconds 30
