#!/usr/bin/env bash
# The main job: bootstrap, build, and run a short campaign on the simulator against the real
# lowering (Debian's mlir-opt 22), with the builtin lowering alongside for differential
# verdicts. Extra arguments go to `asyncfuzz campaign` (e.g. --seconds 600).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
exec build/asyncfuzz campaign --seconds 30 --lowering mlir-opt --lowering builtin --out campaign-out "$@"
