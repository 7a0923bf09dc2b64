#!/usr/bin/env bash
# The test command: builds everything and runs every test of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo test --workspace
