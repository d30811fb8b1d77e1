#!/usr/bin/env bash
# Installs the Debian packages asyncfuzz needs, when they are missing (idempotent).
# Runs apt-get update once, and only if something must be installed. With --test, also what
# only the tests need (chromium, to render the HTML report headless). llvm-22 (opt, llc) is
# for compile-batch. The CUDA toolkit is not a Debian package: the cuda backend is built where
# the toolkit is installed (nvcc, the driver stub library), and left out elsewhere.
set -euo pipefail

need=(cmake gcc make pkg-config libcjson-dev libsqlite3-dev sqlite3 mlir-22-tools llvm-22)
if [ "${1:-}" = --test ]; then
  need+=(chromium)
fi
missing=()
for p in "${need[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "bootstrap: all packages present"
  exit 0
fi
echo "bootstrap: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "bootstrap: not root and no sudo; run: apt-get update && apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
