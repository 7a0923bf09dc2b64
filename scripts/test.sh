#!/usr/bin/env bash
# The test command: builds everything and runs every test of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The dissector check (tests/dissector.rs) must run, not skip: setup.sh installed tshark.
export WTLSPERF_REQUIRE_TSHARK=1
cargo test --workspace
