#!/usr/bin/env bash
# Bootstrap, build and run every test through ctest: once in a normal build, once with
# AddressSanitizer + UndefinedBehaviorSanitizer (set ASYNCFUZZ_SKIP_ASAN=1 to skip that).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh --test
jobs="$(nproc)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DASYNCFUZZ_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs")
if [ "${ASYNCFUZZ_SKIP_ASAN:-0}" != 1 ]; then
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DASYNCFUZZ_SANITIZE=ON -DASYNCFUZZ_WERROR=ON >/dev/null
  cmake --build build-asan -j"$jobs"
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --output-on-failure -j"$jobs")
fi
