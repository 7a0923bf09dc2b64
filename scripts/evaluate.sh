#!/usr/bin/env bash
# The main job: builds wtlsperf in release mode and runs the whole evaluation on loopback.
# Extra arguments go to `wtlsperf evaluate` (e.g. --quick, --out DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release -p wtlsperf
exec ./target/release/wtlsperf evaluate "$@"
