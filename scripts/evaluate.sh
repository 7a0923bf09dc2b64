#!/usr/bin/env bash
# The main job: builds wtlsperf in release mode and runs the whole evaluation on loopback.
# Extra arguments go to `wtlsperf evaluate` (e.g. --quick, --out DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# `dtls13`: DTLS 1.3 and ML-KEM through wolfSSL (GPL-2.0-or-later; README, "Licence").
cargo build --release -p wtlsperf --features dtls13
exec ./target/release/wtlsperf evaluate "$@"
