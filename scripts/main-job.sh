#!/usr/bin/env bash
# The main job: bootstrap, build, and run a 30-second campaign on the simulator against the
# real lowering (Debian's mlir-opt 22, and 19 where installed), with the builtin lowering
# alongside for differential verdicts. Small batches (4 cases) and short per-finding work
# (2 s of reduction, 2 re-runs) give every target and pipeline of the matrix its turn within
# the 30 seconds (one JIT level: O0). Then it prints one finding's minimized reproducer and
# writes the report page. Extra arguments go to `asyncfuzz campaign` (e.g. --seconds 600);
# OUT (default campaign-out) is where everything goes. Exits with the campaign's status.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh || exit
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release > /dev/null || exit
cmake --build build -j"$(nproc)" || exit
out=${OUT:-campaign-out}
build/asyncfuzz campaign --seconds 30 --lowering mlir-opt --lowering builtin --matrix jit=O0 \
  --batch 4 --reduce-seconds 2 --repro 2 --out "$out" "$@"
rc=$?
# the first minimized reproducer of the summary (new findings come first there)
repro=$(sed -n 's/.*"reproducer": "\([^"]*\)".*/\1/p' "$out/summary.json" 2> /dev/null | head -1)
if [ -n "$repro" ] && [ -f "$out/$repro" ]; then
  echo
  echo "== one finding's minimized reproducer, $out/$repro (its RUN lines replay it):"
  cat "$out/$repro"
fi
echo
if build/asyncfuzz report --html "$out/report.html" --db "$out/results.db" > /dev/null; then
  echo "== the report: $out/report.html (open it in a browser: a line per finding, each opening"
  echo "   its reproducer); asyncfuzz db list --db $out/results.db lists them in a terminal"
fi
exit $rc
