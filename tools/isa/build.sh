#!/usr/bin/env bash
# Builds the executed-cost firmware: Mbed TLS (Debian's source package) and PQClean's
# portable `clean` ML-KEM-512/768 and ML-DSA-44/65 (as bundled in the crates.io crates
# pqcrypto-mlkem and pqcrypto-mldsa), compiled from the same source with Debian's
# gcc-arm-none-eabi and newlib for three cores. Sources and images go to target/isa/
# (never committed). Usage: tools/isa/build.sh OUT_DIR
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="${1:?usage: build.sh OUT_DIR}"
SRC="$OUT/src"
mkdir -p "$SRC"

MBEDTLS_VERSION=2.28.3
PQ_CRATES=("pqcrypto-mlkem 0.1.1" "pqcrypto-mldsa 0.1.2")

fetch_mbedtls() {
  [ -d "$SRC/mbedtls" ] && return
  # Debian's source package; deb-src is added for the one download when it is absent.
  if ! (cd "$SRC" && apt-get source --download-only -qq "mbedtls=${MBEDTLS_VERSION}-1" >/dev/null 2>&1); then
    local list=/etc/apt/sources.list.d/wtlsperf-isa-src.sources
    . /etc/os-release
    printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      "$VERSION_CODENAME" >"$list"
    apt-get update -qq
    (cd "$SRC" && apt-get source --download-only -qq "mbedtls=${MBEDTLS_VERSION}-1")
  fi
  mkdir -p "$SRC/mbedtls"
  tar xzf "$SRC/mbedtls_${MBEDTLS_VERSION}.orig.tar.gz" -C "$SRC/mbedtls" --strip-components=1
}

fetch_pqclean() {
  [ -d "$SRC/pqclean" ] && return
  local proj="$SRC/pqfetch"
  mkdir -p "$proj/src"
  {
    printf '[workspace]\n[package]\nname = "pqfetch"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\n'
    for c in "${PQ_CRATES[@]}"; do set -- $c; printf '%s = "=%s"\n' "$1" "$2"; done
  } >"$proj/Cargo.toml"
  echo 'fn main() {}' >"$proj/src/main.rs"
  CARGO_HOME="$SRC/cargo" cargo fetch -q --manifest-path "$proj/Cargo.toml"
  mkdir -p "$SRC/pqclean"
  for c in "${PQ_CRATES[@]}"; do
    set -- $c
    tar xzf "$SRC"/cargo/registry/cache/*/"$1-$2.crate" -C "$SRC"
    cp -r "$SRC/$1-$2/pqclean/." "$SRC/pqclean/"
  done
}

# build name, compiler flags (the multilib newlib is chosen from them)
CORES=(
  "arm7tdmi|-mcpu=arm7tdmi -marm"
  "cortex-m0plus|-mcpu=cortex-m0plus -mthumb"
  "cortex-m4|-mcpu=cortex-m4 -mthumb -mfloat-abi=soft"
  "cortex-m4-pqm4keccak|-mcpu=cortex-m4 -mthumb -mfloat-abi=soft"
)
# The validation build: the same M4 image, but SHA-3/SHAKE from what pqm4's `clean` builds
# link (mupq's common/fips202.c over pqm4's ARMv7-M assembler Keccak-f[1600], copied
# unchanged into tools/isa/third_party/pqm4 with their commits named there), so that
# pqm4's published cycle counts are compared with the same code. The device rows keep the
# portable fips202.c: it is what a core without that assembler (M0+, ARM7TDMI) runs.
PQM4="$HERE/third_party/pqm4"
# Each library with its own release optimisation: Mbed TLS's CMake Release build is -O2,
# PQClean's Makefiles (and pqm4's builds of them) use -O3.
COMMON_FLAGS="-ffunction-sections -fdata-sections -std=c99 -DMBEDTLS_CONFIG_FILE=\"isa_config.h\""
MBEDTLS_OPT="-O2"
PQCLEAN_OPT="-O3"

build_core() {
  local core="$1" flags="$2" dir="$OUT/$1"
  mkdir -p "$dir/obj"
  local first=() keccak=("$SRC/pqclean/common/fips202.c")
  if [ "$core" = cortex-m4-pqm4keccak ]; then
    first=(-I"$PQM4") keccak=("$PQM4/fips202.c" "$PQM4/keccakf1600.S")
  fi
  local inc=("${first[@]}" -I"$HERE/firmware" -I"$OUT" -I"$SRC/mbedtls/include" -I"$SRC/pqclean" -I"$SRC/pqclean/common")
  local sources=("$HERE/firmware/harness.c" "$SRC"/mbedtls/library/{bignum,ecp,ecp_curves,ecdh,ecdsa,asn1parse,asn1write,rsa,rsa_internal,oid,md,sha256,aes,ctr_drbg,platform_util,constant_time}.c "${keccak[@]}")
  for v in crypto_kem/ml-kem-512 crypto_kem/ml-kem-768 crypto_sign/ml-dsa-44 crypto_sign/ml-dsa-65; do
    sources+=("$SRC/pqclean/$v/clean/"*.c)
  done
  local objs=()
  for s in "${sources[@]}"; do
    local rel="${s#"$SRC"/}"
    rel="${rel#"$HERE"/third_party/}"
    local o="$dir/obj/$(echo "$rel" | tr '/' '_').o"
    local vinc=() opt="$MBEDTLS_OPT"
    case "$s" in */clean/*) vinc=(-I"$(dirname "$s")") ;; esac
    case "$s" in */pqclean/* | */third_party/pqm4/*) opt="$PQCLEAN_OPT" ;; esac
    # shellcheck disable=SC2086
    arm-none-eabi-gcc $flags $opt $COMMON_FLAGS "${vinc[@]}" "${inc[@]}" -c "$s" -o "$o"
    objs+=("$o")
  done
  # shellcheck disable=SC2086
  arm-none-eabi-gcc $flags -O2 -nostartfiles --specs=nosys.specs -Wl,--gc-sections \
    -T "$HERE/firmware/isa.ld" "${objs[@]}" -o "$dir/firmware.elf"
  echo "$flags $COMMON_FLAGS (Mbed TLS and the harness $MBEDTLS_OPT, PQClean $PQCLEAN_OPT)" >"$dir/flags.txt"
}

# The micro-ecc validation images (tools/isa/third_party/micro-ecc*, commits named in its
# README): each library built as its published benchmark built it, so that the published
# time and the executed estimate compare the same code. They price no device row.
#   cortex-m4-microecc: micro-ecc 4b1709c as RIOT's package (the thingsat benchmark on a
#     Nucleo F446RE): RIOT's Cortex-M -Os, the benchmark's uECC_OPTIMIZATION_LEVEL=3,
#     -fomit-frame-pointer and its five curves; micro-ecc's ARM Thumb-2 inline assembler
#     (with UMAAL) is on, as micro-ecc selects it by default for this core. The soft-float
#     ABI of the other M4 images where RIOT passes the hard one: no floating point here.
#   cortex-m0-microecc2013-{192p,256p}: micro-ecc 033a451 (2013) as its README measured it
#     on the LPC1114: -mcpu=cortex-m0 -mthumb -ffunction-sections -fdata-sections -Os,
#     ECC_ASM=ecc_asm_thumb (its Thumb inline assembler), ECC_SQUARE_FUNC on (ecc.h's
#     default), one curve per image as that version compiles.
UECC="$HERE/third_party/micro-ecc"
UECC2013="$HERE/third_party/micro-ecc-2013"
MICROECC_IMAGES=(
  "cortex-m4-microecc|-mcpu=cortex-m4 -mthumb -mfloat-abi=soft -Os -fomit-frame-pointer -ffunction-sections -fdata-sections -DuECC_OPTIMIZATION_LEVEL=3 -DuECC_SUPPORTS_secp160r1=1 -DuECC_SUPPORTS_secp192r1=1 -DuECC_SUPPORTS_secp224r1=1 -DuECC_SUPPORTS_secp256r1=1 -DuECC_SUPPORTS_secp256k1=1"
  "cortex-m0-microecc2013-192p|-mcpu=cortex-m0 -mthumb -ffunction-sections -fdata-sections -Os -DECC_ASM=ecc_asm_thumb -DECC_CURVE=secp192r1"
  "cortex-m0-microecc2013-256p|-mcpu=cortex-m0 -mthumb -ffunction-sections -fdata-sections -Os -DECC_ASM=ecc_asm_thumb -DECC_CURVE=secp256r1"
)

build_microecc() {
  local image="$1" flags="$2" dir="$OUT/$1"
  mkdir -p "$dir/obj"
  local sources inc
  case "$image" in
    *microecc2013*)
      inc=(-I"$UECC2013")
      # speedtest.c supplies the benchmark's own vectors; its main() and timer, unused,
      # are renamed and dropped by --gc-sections (it needs <stddef.h> for NULL)
      sources=("$HERE/firmware/uecc2013_harness.c" "$UECC2013/ecc.c" "$UECC2013/test/speedtest.c") ;;
    *)
      inc=(-I"$UECC")
      sources=("$HERE/firmware/uecc_harness.c" "$UECC/uECC.c") ;;
  esac
  local objs=()
  for s in "${sources[@]}"; do
    local o="$dir/obj/$(basename "$s").o" extra=()
    case "$s" in */speedtest.c) extra=(-include stddef.h -Dmain=speedtest_main) ;; esac
    # shellcheck disable=SC2086
    arm-none-eabi-gcc $flags "${extra[@]}" "${inc[@]}" -c "$s" -o "$o"
    objs+=("$o")
  done
  local cpu="${flags%% -O*}"
  # shellcheck disable=SC2086
  arm-none-eabi-gcc $cpu -nostartfiles --specs=nosys.specs -Wl,--gc-sections \
    -T "$HERE/firmware/isa.ld" "${objs[@]}" -o "$dir/firmware.elf"
  echo "$flags" >"$dir/flags.txt"
}

fetch_mbedtls
fetch_pqclean
[ -f "$OUT/rsa_keys.h" ] || python3 "$HERE/rsa_keys.py" "$OUT/rsa_keys.h"
for entry in "${CORES[@]}"; do
  build_core "${entry%%|*}" "${entry#*|}"
done
for entry in "${MICROECC_IMAGES[@]}"; do
  build_microecc "${entry%%|*}" "${entry#*|}"
done
echo "$MBEDTLS_VERSION" >"$OUT/mbedtls_version.txt"
