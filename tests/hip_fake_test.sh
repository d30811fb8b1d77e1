#!/bin/bash
# hip_fake: the hip backend's own code (libasyncfuzz_hip.so, the runtime's tagged and raw handle
# modes under the rocm flavour, the GPU child process and its watchdog, the calibration,
# campaigns) against tests/fake_hip, a TEST DOUBLE of the HIP runtime that runs on any machine.
# It is loaded through LD_LIBRARY_PATH by this test only. The real runtime on a real AMD GPU is
# tests/hip_gpu_test.sh.
#
# usage: hip_fake_test.sh ASYNCFUZZ SRC FAKE_RUNTIME_DIR
set -u
AF=$1
SRC=$2
. "$SRC/tests/lib.sh"
FAKE=$3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}
ok() { echo "ok: $*"; }
BUILD=$(dirname "$AF")

# ---- the embedded kernels: a clang offload bundle with a code object per AMD GPU ----
if [ -f "$BUILD/af_kernels.hipfb" ]; then
  head -c 24 "$BUILD/af_kernels.hipfb" | grep -q __CLANG_OFFLOAD_BUNDLE__ || fail "not an offload bundle"
  for a in gfx90a gfx908; do
    grep -q "amdgcn-amd-amdhsa--$a" "$BUILD/af_kernels.hipfb" || fail "no code object for $a"
  done
  for k in af_fill af_transform af_combine; do
    grep -q "$k" "$BUILD/af_kernels.hipfb" || fail "kernel $k missing from the code objects"
  done
  ok "sentinel kernels: code objects for gfx90a and gfx908"
fi

# ---- without the double: the real runtime (or none) on a machine without an AMD GPU ----
env -u LD_LIBRARY_PATH "$AF" device --backend hip >"$T/o" 2>&1
[ $? -eq 4 ] || fail "device --backend hip without a GPU should exit 4: $(cat "$T/o")"
grep -q "the hip backend cannot run here: " "$T/o" || fail "no reason given: $(cat "$T/o")"
env -u LD_LIBRARY_PATH "$AF" check "$SRC/corpus/region-chain.json" --backend hip >"$T/o" 2>&1
[ $? -eq 4 ] && grep -q "cannot run here" "$T/o" || fail "check --backend hip without a GPU: $(cat "$T/o")"
ok "no AMD GPU: refused with the reason ($(sed 's/.*cannot run here: //' "$T/o" | head -c 80))"

export LD_LIBRARY_PATH="$FAKE${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# ---- device, refusal, calibration ----
FAKE_HIP_NO_DEVICE=1 "$AF" device --backend hip >"$T/o" 2>&1
[ $? -eq 4 ] && grep -q "hipErrorNoDevice" "$T/o" || fail "no device: $(cat "$T/o")"
"$AF" device --backend hip --calibrate >"$T/o" 2>"$T/e" || fail "device --calibrate: $(cat "$T/e")"
grep -q "fake HIP runtime (test double) (gfx90a:sramecc+:xnack-, 1 CUs" "$T/e" || fail "device line: $(cat "$T/e")"
grep -q "built with HIP 5.2" "$T/e" || fail "no HIP version: $(cat "$T/e")"
grep -qx "spin 262144" "$T/o" || fail "calibration: $(cat "$T/o" "$T/e")" # 1 ns per spin, 200 us
ok "device, refusal and calibration"

# ---- the corpus passes with the correct lowering (its rocm mode), tagged and raw ----
for b in hip hip:raw; do
  "$AF" check "$SRC"/corpus/*.json --backend $b >"$T/o" 2>&1 || fail "corpus on $b: $(grep -B3 FAIL "$T/o" | head -20)"
  [ "$(grep -c '^PASS' "$T/o")" -eq "$(ls "$SRC"/corpus/*.json | wc -l)" ] || fail "corpus on $b"
done
ok "corpus passes on hip and hip:raw"

# ---- sim (rocm flavour) and hip agree on every verdict, for every fault of the builtin lowering ----
for i in $(seq 1 12); do "$AF" gen --seed $((i * 7919)) --ops 40 --host-shared 30 -o "$T/g$i.json" || fail gen; done
verdicts() { sed 's/"also": \[[^]]*\]//g' | grep -o '"schedule": "[^"]*", "verdict": "[^"]*"\|"signature": "[^"]*"'; }
nf=0
faults=$("$AF" lower --list-faults | sed -n 's/^  \([a-z_0-9]*\)  .*/\1/p')
[ "$(echo "$faults" | wc -l)" -ge 17 ] || fail "fault list: $faults"
for f in $faults; do
  "$AF" check "$T"/g*.json --json --lowering builtin:fault=$f --abi rocm >"$T/sim.json"
  "$AF" check "$T"/g*.json --json --lowering builtin:fault=$f --backend hip >"$T/hip.json" 2>"$T/e"
  verdicts <"$T/sim.json" >"$T/sim.v"
  verdicts <"$T/hip.json" >"$T/hip.v"
  [ -s "$T/sim.v" ] || fail "no verdicts for $f"
  cmp -s "$T/sim.v" "$T/hip.v" || fail "sim and hip disagree for $f: $(diff "$T/sim.v" "$T/hip.v" | head -4)"
  nf=$((nf + $(grep -c '"verdict": "[a-z_]*", "runs"' "$T/hip.json") - $(grep -c '"verdict": "pass", "runs"' "$T/hip.json")))
done
[ $nf -gt 0 ] || fail "no fault found anything"
ok "sim (rocm) and hip (tagged) agree on every verdict: $(echo "$faults" | wc -l) faults x 12 cases, $nf failing cases"

# ---- several cases at once (--gpu-jobs, each in its own child): one at a time's verdicts ----
grep -q "device: 4 case(s) at once at most (--gpu-jobs 4)" "$T/e" || fail "not 4 at once: $(cat "$T/e")"
for f in $faults; do
  "$AF" check "$T"/g*.json --json --lowering builtin:fault=$f --backend hip --gpu-jobs 1 \
    >"$T/one.json" 2>"$T/e1"
  "$AF" check "$T"/g*.json --json --lowering builtin:fault=$f --backend hip --gpu-jobs 6 \
    >"$T/six.json" 2>"$T/e6"
  verdicts <"$T/one.json" >"$T/one.v"
  verdicts <"$T/six.json" >"$T/six.v"
  cmp -s "$T/six.v" "$T/one.v" || fail "6 at once and one at a time disagree for $f: $(diff "$T/one.v" "$T/six.v" | head -4)"
done
grep -q "device: 1 case(s) at once at most (--gpu-jobs 1)" "$T/e1" && grep -q "device: 6 case(s) at once" "$T/e6" ||
  fail "--gpu-jobs: $(cat "$T/e1" "$T/e6")"
ok "several cases at once on hip (--gpu-jobs): every fault's verdicts as one at a time"

# ---- raw handles: the #170833 shape reaches the runtime, which refuses the stream ----
"$AF" run "$SRC/corpus/region-launch-yield.json" --lowering builtin:fault=yield_stream \
  --backend hip:raw --trace - >"$T/o" 2>/dev/null
grep -q 'mgpuEventSynchronize(s[0-9]*) ! CUDA_ERROR_INVALID_HANDLE' "$T/o" || fail "raw trace: $(cat "$T/o")"
ok "raw handles: the runtime's answer to an event synchronize on a stream is traced"

# ---- fault isolation: a kernel fault, a runtime crash, a hang; the rest of the run goes on ----
iso() {
  rm -f "$T/once"
  env FAKE_HIP_ONCE="$T/once" "$@" "$AF" check "$SRC"/corpus/*.json --backend hip --schedules eager \
    --no-checker >"$T/o" 2>&1
  [ $? -eq 1 ] || fail "isolation ($*): exit $?"
  [ "$(grep -c '^PASS' "$T/o")" -eq $(($(ls "$SRC"/corpus/*.json | wc -l) - 1)) ] ||
    fail "isolation ($*): the other cases: $(cat "$T/o")"
}
iso FAKE_HIP_FAULT_AT=2
grep -q 'CUDA_ERROR_ILLEGAL_ADDRESS|reported by the driver' "$T/o" || fail "fault verdict: $(cat "$T/o")"
iso FAKE_HIP_CRASH_AT=2 ASAN_OPTIONS=handle_segv=0:detect_leaks=0
grep -q 'builtin|runtime_error|device-process|signal-11' "$T/o" || fail "crash verdict: $(cat "$T/o")"
iso FAKE_HIP_HANG_AT=2 ASYNCFUZZ_GPU_TIMEOUT=2
grep -q 'builtin|timeout|device|hang' "$T/o" || fail "hang verdict: $(cat "$T/o")"
ok "a kernel fault, a runtime crash and a hang each cost one case; the child was replaced"

# ---- code compiled by mlir-opt for rocdl (a code object), run by mlir-runner on hip ----
if af_need "rocdl code on hip" mlir-opt-22 ld.lld-22; then
  cs="$SRC/corpus/kernel-views.json $SRC/corpus/typed-buffers.json $SRC/corpus/region-launch-yield.json"
  cs="$cs $SRC/tests/data/mlir-simple.json $SRC/tests/data/mlir-run-a.json $SRC/tests/data/mlir-run-b.json"
  # shellcheck disable=SC2086
  "$AF" check $cs --lowering mlir-opt/rocdl --schedules eager,lazy --json >"$T/sim.json" 2>/dev/null
  grep -q 'format=bin' "$T/sim.json" || fail "rocdl without a code object: $(head -c 600 "$T/sim.json")"
  # shellcheck disable=SC2086
  "$AF" check $cs --lowering mlir-opt/rocdl --schedules eager,lazy --json --backend hip >"$T/hip.json" 2>/dev/null
  verdicts <"$T/sim.json" >"$T/sim.v"
  verdicts <"$T/hip.json" >"$T/hip.v"
  [ "$(grep -c . "$T/sim.v")" -ge 14 ] || fail "rocdl on sim: $(head -c 600 "$T/sim.json")"
  cmp -s "$T/sim.v" "$T/hip.v" || fail "rocdl: sim and hip disagree: $(diff "$T/sim.v" "$T/hip.v" | head -6)"
  grep -q "not in this ABI flavour's runtime wrappers|gpu.memset" "$T/hip.v" || fail "typed-buffers on hip: $(cat "$T/hip.v")"
  # ahead of time: compile-batch, then run-batch on hip
  # shellcheck disable=SC2086
  "$AF" compile-batch $cs --lowering mlir-opt/rocdl -o "$T/rb" >"$T/o" 2>&1 || fail "rocdl compile-batch: $(tail -2 "$T/o")"
  "$AF" run-batch "$T/rb" --schedules eager --json >"$T/sim.json" 2>/dev/null
  "$AF" run-batch "$T/rb" --schedules eager --json --backend hip >"$T/hip.json" 2>"$T/e"
  verdicts <"$T/sim.json" >"$T/sim.v"
  verdicts <"$T/hip.json" >"$T/hip.v"
  [ -s "$T/sim.v" ] && cmp -s "$T/sim.v" "$T/hip.v" || fail "rocdl run-batch: $(diff "$T/sim.v" "$T/hip.v" | head -6) $(tail -2 "$T/e")"
  grep -q "on hip .*(4 at once)" "$T/e" || fail "rocdl run-batch at once: $(tail -2 "$T/e")"
  "$AF" run-batch "$T/rb" --schedules eager --json --backend hip --gpu-jobs 1 >"$T/one.json" 2>/dev/null
  verdicts <"$T/one.json" >"$T/one.v"
  cmp -s "$T/one.v" "$T/hip.v" || fail "rocdl run-batch: --gpu-jobs 1 differs: $(diff "$T/one.v" "$T/hip.v" | head -6)"
  ok "rocdl code objects from mlir-opt run on hip with the sim's verdicts (check and run-batch)"
fi

# ---- what the hip backend refuses, with the reason ----
"$AF" check "$SRC/corpus/region-chain.json" --backend hip --abi cuda >"$T/o" 2>&1
[ $? -eq 2 ] && grep -q "rocm flavour of the runtime ABI only" "$T/o" || fail "hip --abi cuda: $(cat "$T/o")"
ok "refusals: the cuda flavour on hip"
if af_need "the refusal of NVIDIA code on hip" mlir-opt-22; then
  "$AF" check "$SRC/corpus/region-chain.json" --lowering mlir-opt --backend hip >"$T/o" 2>&1
  [ $? -eq 2 ] && grep -q "nvvm code does not run on hip" "$T/o" || fail "nvvm on hip: $(cat "$T/o")"
  ok "refusals: NVIDIA code on hip"
fi

# ---- campaigns record the device and carry the backend in replay commands ----
"$AF" campaign --backend hip --lowering builtin:fault=yield_stream --cases 40 --seed 5 --no-reduce \
  --out "$T/camp" --quiet >"$T/o" 2>&1
[ $? -eq 1 ] || fail "campaign on hip: $(tail -5 "$T/o")"
grep -rq 'fake HIP runtime' "$T/camp/failures" || fail "device not in info.txt"
grep -q -- '--backend hip' "$T/camp"/failures/*/info.txt || fail "replay without --backend"
if af_need "the database's rows" sqlite3; then
  sqlite3 "$T/camp/results.db" "select device from runs" | grep -q '^hip asyncfuzz fake HIP runtime' ||
    fail "device not in the database: $(sqlite3 "$T/camp/results.db" "select device from runs")"
  sqlite3 "$T/camp/results.db" "select config from runs" | grep -q '"backend": "hip"' ||
    fail "backend not in the run's config"
fi
cmd=$(sed -n 's/^replay: //p' "$T/camp"/failures/*/info.txt | head -1)
(eval "$AF ${cmd#asyncfuzz }") >"$T/o" 2>&1
[ $? -eq 1 ] || fail "replay: $cmd"
"$AF" campaign --backend hip --lowering builtin --cases 20 --seed 9 --jobs 2 --out "$T/camp2" \
  --quiet >"$T/o" 2>&1 || fail "campaign --jobs 2 on hip: $(tail -5 "$T/o")"
ok "campaigns on hip: device recorded, replay reproduces, --jobs 2"
echo "hip_fake: all passed"
