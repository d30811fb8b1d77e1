#!/usr/bin/env bash
# Installs the Debian packages asyncfuzz needs, when they are missing (idempotent).
# Runs apt-get update only if something must be installed (once, or twice when it adds a
# suite). llvm-22 (opt, llc) is for compile-batch; rocm-device-libs and lld-22 are the ROCm
# device libraries that rocdl code links and the linker of its code objects. With --test, also
# what only the tests need: chromium, to render the HTML report headless; mlir-19-tools,
# mlir-16-tools and lld-19, LLVM releases beside 22; Slurm and munge for a private single-node
# Slurm; libamdhip64-dev and hipcc for the hip backend; valgrind for bench/pipeline_ir.sh. The
# CUDA toolkit is not a Debian package: the cuda backend is built where the toolkit is installed
# (nvcc, the driver stub library), and left out elsewhere.
#
# Everything the scripts, tests and benchmarks run must be in a bare Debian 12 (debootstrap
# --variant=minbase) or in this list: tests/deps_test.sh checks it.
#
# usage: bootstrap.sh [--test] [--list]
#   --list   print the packages (one a line) and install nothing
set -euo pipefail

test_too=0 list=0
for a in "$@"; do
  case "$a" in
    --test) test_too=1 ;;
    --list) list=1 ;;
    -h | --help)
      sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "bootstrap: unknown option $a (try --help)" >&2
      exit 2
      ;;
  esac
done

need=(cmake gcc make pkg-config libcjson-dev libsqlite3-dev sqlite3 mlir-22-tools llvm-22
  libclang-rt-14-dev libstdc++-12-dev
  rocm-device-libs lld-22)
if [ $test_too = 1 ]; then
  # LLVM 19 beside 22, and LLVM 16 (too old: refused). Never libmlir-19: it conflicts with
  # libmlir-22, and apt would remove mlir-22-tools to install it.
  need+=(chromium mlir-19-tools mlir-16-tools lld-19)
  # lit and FileCheck: check-mlir's programs run from their RUN lines (tests/check_mlir_test.sh)
  need+=(llvm-22-tools)
  # a private single-node Slurm for tests/slurm_test.sh (started by the test, not as services)
  need+=(slurmctld slurmd slurm-client munge)
  # the HIP runtime's headers and hipcc: the hip backend and its AMD kernels are built, and
  # tests/hip_fake_test.sh runs it against its test double
  need+=(libamdhip64-dev hipcc)
  # valgrind: bench/pipeline_ir.sh counts the pipeline's instructions with callgrind
  need+=(valgrind)
fi
if [ $list = 1 ]; then
  printf '%s\n' "${need[@]}"
  exit 0
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
unavailable() {
  local p cand
  for p in "${missing[@]}"; do
    cand=$(apt-cache policy "$p" 2>/dev/null | sed -n 's/^ *Candidate: //p')
    if [ -z "$cand" ] || [ "$cand" = "(none)" ]; then echo "$p"; fi
  done
}
mapfile -t unavailable < <(unavailable)
# Debian 12's LLVM 22 (mlir-22-tools, llvm-22) is in bookworm-security. An installed Debian
# lists that suite; a debootstrap'ed one lists only bookworm main. Add it then, and say so.
if [ ${#unavailable[@]} -ne 0 ] && grep -qs '^VERSION_CODENAME=bookworm' /etc/os-release &&
  ! grep -rqs 'bookworm-security' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  list=/etc/apt/sources.list.d/asyncfuzz-bookworm-security.list
  echo "bootstrap: ${unavailable[*]}: not in the configured apt sources; adding Debian's" \
    "bookworm-security suite ($list)"
  echo "deb http://deb.debian.org/debian-security bookworm-security main" | $SUDO tee "$list" >/dev/null
  $SUDO apt-get update -qq
  mapfile -t unavailable < <(unavailable)
fi
# A package that no configured source offers: say which, and where Debian 12 has it, rather
# than apt-get's "Unable to locate package".
if [ ${#unavailable[@]} -ne 0 ]; then
  echo "bootstrap: no configured apt source offers: ${unavailable[*]}" >&2
  echo "bootstrap: on Debian 12 they are in bookworm, bookworm-updates and bookworm-security;" \
    "add the missing suites to /etc/apt/sources.list, e.g." >&2
  echo "  deb http://deb.debian.org/debian-security bookworm-security main" >&2
  echo "  deb http://deb.debian.org/debian bookworm-updates main" >&2
  exit 1
fi
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
