#!/usr/bin/env bash
# The main job: bootstrap, build, and run a short campaign on the simulator with the builtin
# lowering. Extra arguments go to `asyncfuzz campaign` (e.g. --seconds 120 --lowering ...).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
exec build/asyncfuzz campaign --seconds 30 --out campaign-out "$@"
