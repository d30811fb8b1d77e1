#!/bin/bash
# hip_gpu: the hip backend on a real AMD GPU through the real HIP runtime. Skipped (77), with
# the reason, where asyncfuzz was built without the HIP headers or no AMD GPU can be opened.
#   - every corpus case, and 1000 generated cases, pass with the correct builtin lowering (its
#     rocm mode);
#   - for every builtin fault, the sim under the rocm flavour and hip give the same verdict on
#     every run;
#   - hip:raw reproduces the #170833 shape through the runtime.
# usage: hip_gpu_test.sh ASYNCFUZZ SRC HAVE_HIP [CASES]
set -u
AF=$1
SRC=$2
HAVE=$3
. "$SRC/tests/lib.sh"
CASES=${4:-1000}
if [ "$HAVE" != "ON" ]; then
  af_skip_env "the GPU backend" "asyncfuzz was built without the HIP headers (no hip backend; apt-get install libamdhip64-dev)"
  exit 77
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}
ok() { echo "ok: $*"; }
case "${LD_LIBRARY_PATH:-}" in *fake_hip*)
  af_skip_env "the GPU backend" "LD_LIBRARY_PATH points at the test double of the HIP runtime"
  exit 77
  ;;
esac
if ! "$AF" device --backend hip --calibrate >"$T/o" 2>"$T/e"; then
  af_skip_env "the GPU backend" "no usable AMD GPU here: $(tail -1 "$T/e")"
  exit 77
fi
cat "$T/e" "$T/o"

"$AF" check "$SRC"/corpus/*.json --backend hip --spin auto >"$T/o" 2>&1 ||
  fail "corpus on the GPU: $(grep -B3 FAIL "$T/o")"
ok "corpus passes on the GPU"

"$AF" campaign --backend hip --spin auto --lowering builtin --cases "$CASES" --seed 20261123 \
  --no-db --no-reduce --out "$T/camp" --quiet >"$T/o" 2>&1 || fail "generated cases: $(tail -20 "$T/o")"
grep -q "\"cases\": $CASES" "$T/camp/summary.json" || fail "summary: $(cat "$T/camp/summary.json")"
ok "$CASES generated cases pass on the GPU"

for i in $(seq 1 30); do "$AF" gen --seed $((i * 7919)) --ops 40 -o "$T/g$i.json" || fail gen; done
verdicts() { sed 's/"also": \[[^]]*\]//g' | grep -o '"schedule": "[^"]*", "verdict": "[^"]*"\|"signature": "[^"]*"'; }
faults=$("$AF" lower --list-faults | sed -n 's/^  \([a-z_0-9]*\)  .*/\1/p')
[ "$(echo "$faults" | wc -w)" -ge 17 ] || fail "fault list: $faults"
for f in $faults; do
  "$AF" check "$T"/g*.json --json --lowering builtin:fault=$f --abi rocm >"$T/sim.json"
  "$AF" check "$T"/g*.json --json --lowering builtin:fault=$f --backend hip --spin auto \
    >"$T/hip.json" 2>/dev/null
  verdicts <"$T/sim.json" >"$T/sim.v"
  verdicts <"$T/hip.json" >"$T/hip.v"
  cmp -s "$T/sim.v" "$T/hip.v" || fail "sim and hip disagree for $f: $(diff "$T/sim.v" "$T/hip.v" | head -6)"
done
ok "sim (rocm) and hip agree on every verdict for every builtin fault (30 cases each)"

"$AF" check "$SRC/corpus/region-launch-yield.json" --lowering builtin:fault=yield_stream \
  --backend hip:raw --schedules eager --no-checker --json >"$T/raw.json" 2>/dev/null
grep -q 'mgpuEventSynchronize|CUDA_ERROR_INVALID_HANDLE' "$T/raw.json" ||
  fail "hip:raw: $(cat "$T/raw.json")"
ok "hip:raw: the runtime refuses an event synchronize given a stream"
echo "hip_gpu: all passed"
