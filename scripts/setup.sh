#!/usr/bin/env bash
# Installs what a fresh Debian/Ubuntu machine lacks to build wtlsperf: the system libcrypto
# headers for the `openssl` crate (libssl-dev, pkg-config) and a C compiler. Idempotent:
# does nothing when everything is present. Rust itself comes from rustup (not installed here).
set -euo pipefail
need=()
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
pkg-config --exists openssl 2>/dev/null || need+=(libssl-dev)
command -v cc >/dev/null 2>&1 || need+=(gcc)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}" >&2
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}"
fi
command -v cargo >/dev/null 2>&1 || { echo "setup: cargo not found; install Rust with rustup (https://rustup.rs)" >&2; exit 1; }
