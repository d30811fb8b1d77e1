#!/bin/bash
# cuda_gpu: the cuda backend on a real NVIDIA GPU through the real driver. Skipped (77), with
# the reason, where asyncfuzz was built without the CUDA toolkit or no GPU can be opened.
#   - every corpus case, and 1000 generated cases, pass with the correct builtin lowering;
#   - for every builtin fault, sim and cuda give the same verdict on every run;
#   - with calls failing on purpose (--fail-calls 5), a campaign has device errors and no finding;
#   - cuda:raw reproduces the #170833 shape through the driver;
#   - code lowered by mlir-opt runs on the GPU where mlir-opt is installed.
# usage: cuda_gpu_test.sh ASYNCFUZZ SRC HAVE_CUDA [CASES]
set -u
AF=$1
SRC=$2
HAVE=$3
. "$SRC/tests/lib.sh"
CASES=${4:-1000}
if [ "$HAVE" != "ON" ]; then
  af_skip_env "the GPU backend" "asyncfuzz was built without the CUDA toolkit (no cuda backend)"
  exit 77
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}
ok() { echo "ok: $*"; }
case "${LD_LIBRARY_PATH:-}" in *fake_cuda*)
  af_skip_env "the GPU backend" "LD_LIBRARY_PATH points at the test double of the driver"
  exit 77
  ;;
esac
if ! "$AF" device --calibrate >"$T/o" 2>"$T/e"; then
  af_skip_env "the GPU backend" "no usable NVIDIA GPU here: $(tail -1 "$T/e")"
  exit 77
fi
cat "$T/e" "$T/o"

"$AF" check "$SRC"/corpus/*.json --backend cuda --spin auto >"$T/o" 2>&1 ||
  fail "corpus on the GPU: $(grep -B3 FAIL "$T/o")"
ok "corpus passes on the GPU"

"$AF" campaign --backend cuda --spin auto --lowering builtin --cases "$CASES" --seed 20261122 \
  --no-db --no-reduce --out "$T/camp" --quiet >"$T/o" 2>&1 || fail "generated cases: $(tail -20 "$T/o")"
grep -q "\"cases\": $CASES" "$T/camp/summary.json" || fail "summary: $(cat "$T/camp/summary.json")"
ok "$CASES generated cases pass on the GPU"

# a device failing calls on purpose: device_error verdicts only, never a finding (what a run left
# registered once made the next run's registration fail: a runtime_error on the GPU only)
"$AF" campaign --backend cuda --spin auto --lowering builtin --cases 400 --seed 62 --fail-calls 5 \
  --no-db --no-reduce --out "$T/fc" --quiet >"$T/o" 2>&1 || fail "--fail-calls 5: $(tail -12 "$T/o")"
grep -q '"cases": 400, .*"failures": 0, "device_error_cases": [1-9]' "$T/fc/summary.json" ||
  fail "--fail-calls 5: $(head -c 600 "$T/fc/summary.json")"
ok "--fail-calls 5 on the GPU: device errors only, the campaign ran to its end"

for i in $(seq 1 30); do "$AF" gen --seed $((i * 7919)) --ops 40 -o "$T/g$i.json" || fail gen; done
verdicts() { sed 's/"also": \[[^]]*\]//g' | grep -o '"schedule": "[^"]*", "verdict": "[^"]*"\|"signature": "[^"]*"'; }
faults=$("$AF" lower --list-faults | sed -n 's/^  \([a-z_0-9]*\)  .*/\1/p')
[ "$(echo "$faults" | wc -w)" -ge 17 ] || fail "fault list: $faults"
for f in $faults; do
  "$AF" check "$T"/g*.json --json --lowering builtin:fault=$f >"$T/sim.json"
  "$AF" check "$T"/g*.json --json --lowering builtin:fault=$f --backend cuda --spin auto \
    >"$T/cuda.json" 2>/dev/null
  verdicts <"$T/sim.json" >"$T/sim.v"
  verdicts <"$T/cuda.json" >"$T/cuda.v"
  cmp -s "$T/sim.v" "$T/cuda.v" || fail "sim and cuda disagree for $f: $(diff "$T/sim.v" "$T/cuda.v" | head -6)"
done
ok "sim and cuda agree on every verdict for the $(echo "$faults" | wc -w) builtin faults (30 cases each)"

"$AF" check "$SRC/corpus/region-launch-yield.json" --lowering builtin:fault=yield_stream \
  --backend cuda:raw --schedules eager --no-checker --json >"$T/raw.json" 2>/dev/null
# which status the driver gives varies: INVALID_HANDLE in the reference, CONTEXT_IS_DESTROYED
# (709) from driver 13 on an H200; any refusal is the #170833 shape (the host does not wait)
st=$(grep -o 'mgpuEventSynchronize|CUDA_ERROR_[A-Z_]*' "$T/raw.json" | head -1)
[ -n "$st" ] || fail "raw #170833: $(cat "$T/raw.json")"
case "$st" in *CUDA_ERROR_OTHER) fail "raw #170833: an unnamed driver status: $(cat "$T/raw.json")" ;; esac
ok "cuda:raw: the driver refuses an event synchronize on a stream (${st#*|})"

# a batch compiled on a CPU machine (compile-batch), carried here: cuda gives sim's verdicts
B=${ASYNCFUZZ_GPU_TEST_BATCH:-}
if [ -z "$B" ] && af_tool mlir-opt-22 >/dev/null && af_tool llc-22 >/dev/null; then
  "$AF" compile-batch "$SRC/tests/data/mlir-simple.json" "$SRC/tests/data/mlir-run-b.json" \
    --gen 200 --seed 7 -o "$T/batch" >"$T/o" 2>&1 || fail "compile-batch: $(tail -3 "$T/o")"
  B="$T/batch"
fi
if [ -n "$B" ]; then
  "$AF" run-batch "$B" --schedules eager,lazy --json >"$T/bs.json" 2>/dev/null
  "$AF" run-batch "$B" --schedules eager,lazy --json --backend cuda --spin auto >"$T/bc.json" 2>"$T/e"
  verdicts <"$T/bs.json" >"$T/bs.v"
  verdicts <"$T/bc.json" >"$T/bc.v"
  [ -s "$T/bs.v" ] || fail "run-batch on sim gave nothing"
  cmp -s "$T/bs.v" "$T/bc.v" || fail "run-batch: sim and cuda disagree: $(diff "$T/bs.v" "$T/bc.v" | head -6)"
  ok "run-batch: the batch's verdicts on the GPU are the sim's ($(tail -1 "$T/e"))"
else
  af_skip "run-batch on the GPU" "no compile-batch directory (ASYNCFUZZ_GPU_TEST_BATCH) and no mlir-opt-22 and llc-22 to make one"
fi

if af_need "mlir-opt code on the GPU (see asyncfuzz compile-batch)" mlir-opt-22; then
  "$AF" check "$SRC/tests/data/mlir-simple.json" --lowering mlir-opt --backend cuda --no-checker \
    >"$T/o" 2>&1 || fail "mlir-opt code on the GPU: $(cat "$T/o")"
  ok "mlir-opt code runs on the GPU"
fi
echo "cuda_gpu: all passed"
