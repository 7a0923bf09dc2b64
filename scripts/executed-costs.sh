#!/usr/bin/env bash
# Regenerates the executed device costs: builds the client crypto firmware (Mbed TLS from
# Debian's source package, PQClean's portable ML-KEM/ML-DSA from the pqcrypto crates) for
# the ARM7TDMI, Cortex-M0+ and Cortex-M4 with gcc-arm-none-eabi and newlib (plus, for the
# validation, the M4 image linked with pqm4's SHA-3 and the micro-ecc images built as
# micro-ecc's published benchmarks were, tools/isa/third_party), executes every
# operation on Unicorn, prices each instruction with the core's timing table
# (tools/isa/timings.csv) and writes, into data/devices/:
#   executed_counts.csv              instructions and cycles by class, per operation and core
#   executed.csv                     the device-profile rows (kind "executed")
#   executed_validation.csv          each published reference beside the executed estimate
#   executed_validation_summary.csv  median and worst error per scope
# Takes tens of minutes (the emulator calls back into Python once per executed block); the
# results are checked in, and the models crate's tests check them for consistency.
# Needs root (or sudo) for apt-get; installs what is missing and nothing else.
# Usage: bash scripts/executed-costs.sh
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="$ROOT/target/isa"
OUT="$ROOT/data/devices"

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
need=()
command -v arm-none-eabi-gcc >/dev/null 2>&1 || need+=(gcc-arm-none-eabi)
[ -f /usr/lib/arm-none-eabi/lib/libc.a ] || need+=(libnewlib-arm-none-eabi)
if [ ${#need[@]} -gt 0 ]; then
  echo "executed-costs: installing ${need[*]}" >&2
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
python3 -c 'import unicorn, capstone' 2>/dev/null ||
  python3 -m pip install -q "unicorn==2.1.4" "capstone==5.0.9"

bash "$ROOT/tools/isa/build.sh" "$BUILD"
cd "$ROOT/tools/isa"
# the instruction sets side by side (each is one single-threaded emulator); the fourth is
# the M4 image with pqm4's SHA-3, counted only for the validation against pqm4; the
# micro-ecc validation images (small) run one after another beside them
BUILDS=(arm7tdmi cortex-m0plus cortex-m4 cortex-m4-pqm4keccak)
MICROECC=(cortex-m4-microecc cortex-m0-microecc2013-192p cortex-m0-microecc2013-256p)
pids=()
for isa in "${BUILDS[@]}"; do
  python3 execute.py run "$BUILD" "$isa" "$BUILD/counts-$isa.csv" &
  pids+=($!)
done
(for isa in "${MICROECC[@]}"; do
  python3 execute.py run "$BUILD" "$isa" "$BUILD/counts-$isa.csv" || exit 1
done) &
pids+=($!)
for pid in "${pids[@]}"; do wait "$pid"; done
partials=()
for isa in "${BUILDS[@]}" "${MICROECC[@]}"; do partials+=("$BUILD/counts-$isa.csv"); done
python3 execute.py merge "$BUILD" "$OUT" "${partials[@]}"
python3 validate.py "$OUT/executed_counts.csv" references.csv "$OUT"
echo "executed-costs: wrote $OUT/executed*.csv" >&2
