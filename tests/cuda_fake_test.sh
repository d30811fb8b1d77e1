#!/bin/bash
# cuda_fake: the cuda backend's own code (libasyncfuzz_cuda.so, the runtime's tagged and raw
# handle modes, the GPU child process and its watchdog, the calibration, mlir-runner on the
# cuda backend, campaigns) against tests/fake_cuda, a TEST DOUBLE of the CUDA driver that runs
# on any machine. It is loaded through LD_LIBRARY_PATH by this test only. The real driver on a
# real GPU is tests/cuda_gpu_test.sh.
#
# usage: cuda_fake_test.sh ASYNCFUZZ SRC FAKE_DRIVER_DIR [PTXAS]
set -u
AF=$1
SRC=$2
. "$SRC/tests/lib.sh"
FAKE=$3
PTXAS=${4:-}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}
ok() { echo "ok: $*"; }
BUILD=$(dirname "$AF")

# ---- the embedded kernels assemble for Hopper (sm_90), with the toolkit's own ptxas ----
if [ -n "$PTXAS" ] && [ -f "$BUILD/af_kernels.ptx" ]; then
  "$PTXAS" -arch=sm_90 "$BUILD/af_kernels.ptx" -o "$T/k.cubin" || fail "ptxas sm_90 refused the kernels"
  for k in af_fill af_transform af_combine; do
    grep -q "\.entry $k(" "$BUILD/af_kernels.ptx" || fail "kernel $k missing from the PTX"
  done
  ok "sentinel kernels: PTX assembles for sm_90"
fi

# ---- no driver at all: a clear refusal, exit 4 ----
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
  env -u LD_LIBRARY_PATH "$AF" device >"$T/o" 2>&1
  [ $? -eq 4 ] || fail "device without a driver should exit 4"
  grep -q "no CUDA driver" "$T/o" || fail "no reason given: $(cat "$T/o")"
  env -u LD_LIBRARY_PATH "$AF" check "$SRC/corpus/region-chain.json" --backend cuda >"$T/o" 2>&1
  [ $? -eq 4 ] || fail "check --backend cuda without a driver should exit 4"
  grep -q "cannot run here" "$T/o" || fail "check gave no reason: $(cat "$T/o")"
  ok "no driver: refused with the reason"
fi

export LD_LIBRARY_PATH="$FAKE${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# ---- device, refusal, calibration ----
FAKE_CUDA_NO_DEVICE=1 "$AF" device >"$T/o" 2>&1
[ $? -eq 4 ] || fail "device with cuInit failing should exit 4"
grep -q "CUDA_ERROR_NO_DEVICE" "$T/o" || fail "the driver's error is not named: $(cat "$T/o")"
"$AF" device --calibrate >"$T/o" 2>"$T/e" || fail "device --calibrate: $(cat "$T/e")"
grep -q "fake CUDA driver (test double) (sm_90" "$T/e" || fail "device line: $(cat "$T/e")"
grep -q "driver 13.0" "$T/e" || fail "no driver version: $(cat "$T/e")"
# the double's clock: 1 ns per spin iteration, so 200 us needs 2^18 iterations
grep -qx "spin 262144" "$T/o" || fail "calibration: $(cat "$T/o" "$T/e")"
"$AF" device --calibrate --target-us 50 >"$T/o" 2>/dev/null
grep -qx "spin 65536" "$T/o" || fail "calibration to 50 us: $(cat "$T/o")"
ok "device, refusal and calibration"

# ---- the corpus passes with the correct lowering, tagged and raw ----
for b in cuda cuda:raw; do
  "$AF" check "$SRC"/corpus/*.json --backend $b >"$T/o" 2>&1 || fail "corpus on $b: $(grep -B3 FAIL "$T/o")"
  [ "$(grep -c '^PASS' "$T/o")" -eq "$(ls "$SRC"/corpus/*.json | wc -l)" ] || fail "corpus on $b"
done
ok "corpus passes on cuda and cuda:raw"

# ---- sim and cuda agree on every verdict, for every fault of the builtin lowering ----
for i in $(seq 1 12); do "$AF" gen --seed $((i * 7919)) --ops 40 -o "$T/g$i.json" || fail gen; done
verdicts() { sed 's/"also": \[[^]]*\]//g' | grep -o '"schedule": "[^"]*", "verdict": "[^"]*"\|"signature": "[^"]*"'; }
nf=0
faults=$("$AF" lower --list-faults | sed -n 's/^  \([a-z_0-9]*\)  .*/\1/p')
[ "$(echo "$faults" | wc -w)" -ge 17 ] || fail "fault list: $faults"
for f in $faults; do
  "$AF" check "$T"/g*.json --json --lowering builtin:fault=$f >"$T/sim.json"
  "$AF" check "$T"/g*.json --json --lowering builtin:fault=$f --backend cuda >"$T/cuda.json" 2>"$T/e"
  verdicts <"$T/sim.json" >"$T/sim.v"
  verdicts <"$T/cuda.json" >"$T/cuda.v"
  [ -s "$T/sim.v" ] || fail "no verdicts for $f"
  cmp -s "$T/sim.v" "$T/cuda.v" || fail "sim and cuda disagree for $f: $(diff "$T/sim.v" "$T/cuda.v" | head -4)"
  nf=$((nf + $(grep -c '"verdict": "[a-z_]*", "runs"' "$T/cuda.json") - $(grep -c '"verdict": "pass", "runs"' "$T/cuda.json")))
done
[ $nf -gt 0 ] || fail "no fault found anything"
ok "sim and cuda (tagged) agree on every verdict: $(echo "$faults" | wc -w) faults x 12 cases, $nf failing cases"

# ---- several cases at once (--gpu-jobs, each in its own child): one at a time's verdicts ----
grep -q "device: 4 case(s) at once at most (--gpu-jobs 4)" "$T/e" || fail "not 4 at once: $(cat "$T/e")"
for f in $faults; do
  "$AF" check "$T"/g*.json --json --lowering builtin:fault=$f --backend cuda >"$T/four.json" 2>/dev/null
  "$AF" check "$T"/g*.json --json --lowering builtin:fault=$f --backend cuda --gpu-jobs 1 \
    >"$T/one.json" 2>"$T/e1"
  verdicts <"$T/four.json" >"$T/four.v"
  verdicts <"$T/one.json" >"$T/one.v"
  cmp -s "$T/four.v" "$T/one.v" || fail "4 at once and one at a time disagree for $f: $(diff "$T/one.v" "$T/four.v" | head -4)"
done
grep -q "device: 1 case(s) at once at most (--gpu-jobs 1)" "$T/e1" || fail "--gpu-jobs 1: $(cat "$T/e1")"
"$AF" check "$T"/g*.json --lowering builtin:fault=drop_extra_deps --backend cuda --gpu-jobs 12 >/dev/null 2>"$T/e"
grep -q "device: 12 case(s) at once at most" "$T/e" || fail "12 at once: $(cat "$T/e")"
"$AF" check "$T/g1.json" --backend cuda --gpu-jobs 0 >"$T/o" 2>&1
[ $? -eq 2 ] || fail "--gpu-jobs 0 should be refused: $(cat "$T/o")"
# a campaign's batches: the same findings with 3 children as with one
for j in 1 3; do
  "$AF" campaign --backend cuda --lowering builtin:fault=drop_extra_deps,yield_stream,free_unordered --cases 48 \
    --batch 12 --gpu-jobs $j --seed 17 --no-reduce --no-db --out "$T/cj$j" --quiet >"$T/o" 2>&1
  [ $? -eq 1 ] || fail "campaign --gpu-jobs $j: $(tail -3 "$T/o")"
  grep -q "\"gpu_jobs\": $j" "$T/cj$j/summary.json" || fail "gpu_jobs not in the summary"
  for d in "$T/cj$j"/failures/*/; do
    echo "signature $(sed -n 's/^signature: //p' "$d/info.txt") x$(sed -n 's/^occurrences: //p' "$d/info.txt")"
  done | sort >"$T/cj$j.sig"
  grep -o '"failures": [0-9]*' "$T/cj$j/summary.json" >>"$T/cj$j.sig"
done
[ "$(grep -c '^signature' "$T/cj1.sig")" -ge 2 ] || fail "campaign: too few findings: $(cat "$T/cj1.sig")"
cmp -s "$T/cj1.sig" "$T/cj3.sig" || fail "campaign: 3 at once and one at a time differ: $(diff "$T/cj1.sig" "$T/cj3.sig")"
ok "several cases at once (--gpu-jobs): verdicts of every fault and a campaign's findings as one at a time"

# ---- raw handles: the #170833 shape reaches the driver, which refuses without waiting ----
"$AF" check "$SRC/corpus/region-launch-yield.json" --lowering builtin:fault=yield_stream \
  --backend cuda:raw --schedules eager --no-checker --json >"$T/raw.json" 2>/dev/null
grep -q 'mgpuEventSynchronize|CUDA_ERROR_INVALID_HANDLE|handle of the wrong kind|given=stream' "$T/raw.json" ||
  fail "raw: $(cat "$T/raw.json")"
"$AF" run "$SRC/corpus/region-launch-yield.json" --lowering builtin:fault=yield_stream \
  --backend cuda:raw --trace - >"$T/o" 2>/dev/null
grep -q 'mgpuEventSynchronize(s[0-9]*) ! CUDA_ERROR_INVALID_HANDLE' "$T/o" || fail "raw trace: $(cat "$T/o")"
ok "raw handles: the driver's answer to an event synchronize on a stream is traced"

# ---- fault isolation: a kernel fault, a driver crash, a hang; the rest of the run goes on ----
iso() { # ENV... : check the corpus, eager only, the second launch of the session misbehaving
  rm -f "$T/once"
  env FAKE_CUDA_ONCE="$T/once" "$@" "$AF" check "$SRC"/corpus/*.json --backend cuda --schedules eager \
    --no-checker >"$T/o" 2>&1
  [ $? -eq 1 ] || fail "isolation ($*): exit $?"
  [ "$(grep -c '^PASS' "$T/o")" -eq $(($(ls "$SRC"/corpus/*.json | wc -l) - 1)) ] ||
    fail "isolation ($*): the other cases: $(cat "$T/o")"
}
iso FAKE_CUDA_FAULT_AT=2
grep -q 'CUDA_ERROR_ILLEGAL_ADDRESS|reported by the driver' "$T/o" || fail "fault verdict: $(cat "$T/o")"
iso FAKE_CUDA_CRASH_AT=2 ASAN_OPTIONS=handle_segv=0:detect_leaks=0 # a sanitizer build: let the signal kill
grep -q 'builtin|runtime_error|device-process|signal-11' "$T/o" || fail "crash verdict: $(cat "$T/o")"
iso FAKE_CUDA_HANG_AT=2 ASYNCFUZZ_GPU_TIMEOUT=2
grep -q 'builtin|timeout|device|hang' "$T/o" || fail "hang verdict: $(cat "$T/o")"
ok "a kernel fault, a driver crash and a hang each cost one case; the child was replaced"

# ---- code compiled by mlir-opt, run by mlir-runner on the cuda backend ----
if af_need "mlir-opt code on the cuda backend" mlir-opt-22; then
  D="$SRC/tests/data"
  "$AF" check "$D/mlir-simple.json" --lowering mlir-opt --backend cuda --no-checker >"$T/o" 2>&1 ||
    fail "mlir-opt on cuda: $(cat "$T/o")"
  "$AF" check "$D/mlir-simple.json" "$D/mlir-run-a.json" "$D/mlir-run-b.json" --lowering mlir-opt \
    --schedules eager --no-checker --json >"$T/sim.json" 2>/dev/null
  "$AF" check "$D/mlir-simple.json" "$D/mlir-run-a.json" "$D/mlir-run-b.json" --lowering mlir-opt \
    --schedules eager --no-checker --json --backend cuda >"$T/cuda.json" 2>/dev/null
  verdicts <"$T/sim.json" >"$T/sim.v"
  verdicts <"$T/cuda.json" >"$T/cuda.v"
  cmp -s "$T/sim.v" "$T/cuda.v" || fail "mlir-opt: sim and cuda disagree: $(diff "$T/sim.v" "$T/cuda.v")"
  # kernels outlined from gpu.launch bodies ("main_kernel", known by their tag) and kernels of
  # every element type, through the driver: each passes, as on the sim
  "$AF" check "$SRC/corpus/launch-inline.json" "$SRC/corpus/typed-kernels.json" --lowering mlir-opt \
    --schedules eager --backend cuda >"$T/o" 2>&1 ||
    fail "outlined and typed kernels on cuda: $(grep -B2 -A6 FAIL "$T/o" | head -20)"
  [ "$(grep -c '^PASS' "$T/o")" -eq 2 ] || fail "outlined and typed kernels on cuda: $(cat "$T/o")"
  # rocdl code is AMD's: refused on cuda (exit 2), and the default matrix leaves rocdl out there
  "$AF" campaign --lowering mlir-opt/rocdl --backend cuda --cases 1 --no-db --out "$T/roc" >"$T/o" 2>&1
  [ $? -eq 2 ] && grep -q 'rocdl code does not run on cuda (it runs on: sim, hip)' "$T/o" ||
    fail "rocdl campaign on cuda: $(tail -2 "$T/o")"
  "$AF" campaign --lowering mlir-opt --backend cuda --cases 1 --no-db --no-reduce --schedules eager \
    --out "$T/mx" >"$T/o" 2>&1
  grep -q 'lowering mlir-opt, a matrix of [0-9]* configurations' "$T/o" && ! grep -q '/rocdl' "$T/o" ||
    fail "matrix on cuda: $(head -3 "$T/o")"
  # a sticky fault in the first case of a batch: that case gets it, the others run in fresh
  # mlir-runner processes and keep their verdicts
  rm -f "$T/once"
  FAKE_CUDA_ONCE="$T/once" FAKE_CUDA_FAULT_AT=1 "$AF" check "$D/mlir-simple.json" "$D/mlir-run-a.json" \
    "$D/mlir-run-b.json" --lowering mlir-opt --schedules eager --no-checker --json --backend cuda \
    >"$T/fault.json" 2>/dev/null
  verdicts <"$T/fault.json" >"$T/fault.v"
  head -2 "$T/fault.v" | grep -q 'CUDA_ERROR_ILLEGAL_ADDRESS' || fail "mlir fault: $(cat "$T/fault.v")"
  [ "$(tail -n +3 "$T/fault.v")" = "$(tail -n +3 "$T/sim.v")" ] || fail "mlir fault: the others changed"
  ok "mlir-opt code on the cuda backend: same verdicts as sim; a sticky fault costs one case"

  # ahead-of-time batches on the cuda backend (the GPU runner's path): the same verdicts as on
  # the sim; a driver crash and a hang in the batch child each cost the case they hit
  if af_need "run-batch on cuda (compile-batch)" llc-22; then
    "$AF" compile-batch "$D/mlir-simple.json" "$D/mlir-run-a.json" "$D/mlir-run-b.json" \
      "$SRC/corpus/region-launch-yield.json" -o "$T/batch" >"$T/o" 2>&1 || fail "compile-batch: $(tail -3 "$T/o")"
    "$AF" run-batch "$T/batch" --schedules eager,lazy --json >"$T/sim.json" 2>/dev/null
    "$AF" run-batch "$T/batch" --schedules eager,lazy --json --backend cuda >"$T/cuda.json" 2>/dev/null
    verdicts <"$T/sim.json" >"$T/sim.v"
    verdicts <"$T/cuda.json" >"$T/cuda.v"
    [ "$(grep -c "^\"schedule\"" "$T/sim.v")" -eq 8 ] || fail "run-batch on sim: $(cat "$T/sim.json")"
    cmp -s "$T/sim.v" "$T/cuda.v" || fail "run-batch: sim and cuda disagree: $(diff "$T/sim.v" "$T/cuda.v")"
    # its cases at once, in 4 children (each its own context), and one at a time: the same
    "$AF" run-batch "$T/batch" --schedules eager,lazy --json --backend cuda --gpu-jobs 1 \
      >"$T/one.json" 2>"$T/e1"
    verdicts <"$T/one.json" >"$T/one.v"
    cmp -s "$T/one.v" "$T/cuda.v" || fail "run-batch: --gpu-jobs 1 differs: $(diff "$T/one.v" "$T/cuda.v")"
    "$AF" run-batch "$T/batch" --schedules eager,lazy --backend cuda >/dev/null 2>"$T/e4"
    grep -q "on cuda .*(4 at once)" "$T/e4" && grep -q "on cuda .*(1 at once)" "$T/e1" ||
      fail "run-batch at once: $(cat "$T/e4" "$T/e1")"
    rm -f "$T/once"
    FAKE_CUDA_ONCE="$T/once" FAKE_CUDA_CRASH_AT=2 ASAN_OPTIONS=handle_segv=0:detect_leaks=0 \
      "$AF" run-batch "$T/batch" --schedules eager,lazy --json --backend cuda >"$T/f.json" 2>"$T/e"
    verdicts <"$T/f.json" >"$T/f.v"
    sigdiff() { diff <(grep signature "$1") <(grep signature "$2") | grep -c '^>'; }
    [ "$(sigdiff "$T/sim.v" "$T/f.v")" -eq 2 ] || fail "batch crash: $(diff "$T/sim.v" "$T/f.v")"
    grep -q 'runtime_error|device-process|signal-11' "$T/f.v" || fail "batch crash verdict"
    grep -q '1 child restart' "$T/e" || fail "batch crash: $(cat "$T/e")"
    rm -f "$T/once"
    FAKE_CUDA_ONCE="$T/once" FAKE_CUDA_HANG_AT=2 ASYNCFUZZ_GPU_TIMEOUT=2 \
      "$AF" run-batch "$T/batch" --schedules eager,lazy --json --backend cuda >"$T/h.json" 2>/dev/null
    verdicts <"$T/h.json" >"$T/h.v"
    grep -q 'mlir-opt|timeout|device|hang' "$T/h.v" || fail "batch hang: $(cat "$T/h.v")"
    [ "$(sigdiff "$T/sim.v" "$T/h.v")" -eq 2 ] || fail "batch hang: the other cases changed"
    ok "run-batch on cuda: sim's verdicts; a crash and a hang each cost one case"
  fi
fi

# ---- campaigns record the device and carry the backend in replay commands ----
"$AF" campaign --backend cuda --lowering builtin:fault=yield_stream --cases 40 --seed 5 --no-reduce \
  --out "$T/camp" --quiet >"$T/o" 2>&1
[ $? -eq 1 ] || fail "campaign on cuda: $(tail -5 "$T/o")"
grep -q 'fake CUDA driver (test double)' "$T/camp/summary.json" "$T/camp"/failures/*/info.txt 2>/dev/null ||
  grep -rq 'fake CUDA driver' "$T/camp/failures" || fail "device not in info.txt"
grep -q -- '--backend cuda' "$T/camp"/failures/*/info.txt || fail "replay without --backend"
if af_need "the database's rows" sqlite3; then
  sqlite3 "$T/camp/results.db" "select device from runs" | grep -q 'cuda asyncfuzz fake CUDA driver' ||
    fail "device not in the database"
  sqlite3 "$T/camp/results.db" "select distinct backend from occurrences" | grep -qx cuda ||
    fail "occurrences not on cuda"
fi
# the replay command from info.txt reproduces
cmd=$(sed -n 's/^replay: //p' "$T/camp"/failures/*/info.txt | head -1)
(eval "$AF ${cmd#asyncfuzz }") >"$T/o" 2>&1
[ $? -eq 1 ] || fail "replay: $cmd"
# two workers, each with its own GPU child
"$AF" campaign --backend cuda --lowering builtin --cases 20 --seed 9 --jobs 2 --out "$T/camp2" \
  --quiet >"$T/o" 2>&1 || fail "campaign --jobs 2 on cuda: $(tail -5 "$T/o")"
ok "campaigns on cuda: device recorded, replay reproduces, --jobs 2"

# ---- a device failing on purpose (--fail-calls): a sticky error ends the GPU child after its
# case, and the next case passes in a new one; a campaign runs to its end, without findings ----
"$AF" check "$SRC/corpus/wide-types.json" "$SRC/corpus/branch-merge.json" --backend cuda \
  --fail-calls 100 --schedules eager@7960286522194355700 >"$T/o" 2>"$T/e" ||
  fail "check --fail-calls on cuda: $(cat "$T/o" "$T/e")"
grep -q "signature: builtin|device_error|mgpu[A-Za-z]*|CUDA_ERROR_[A-Z_]*|sticky" "$T/o" ||
  fail "no sticky device_error on cuda: $(cat "$T/o")"
[ "$(grep -c '^eager@[0-9]* *pass' "$T/o")" = 1 ] || fail "the case after the sticky error: $(cat "$T/o")"
grep -q "device: 1 GPU child process(es) replaced" "$T/e" || fail "no new child after it: $(cat "$T/e")"
# host memory a run registered and could not unregister (a sticky error made the unregister
# fail): given back at the end of the run, or a later run's buffers at the same addresses could
# not be registered (a runtime_error finding on a real GPU). The double logs what it registers.
FAKE_CUDA_HOST_LOG="$T/hostlog" "$AF" check "$SRC/corpus/registered-host.json" --backend cuda \
  --fail-calls 50 --schedules eager@21,eager@22 >"$T/o" 2>&1 || fail "registered-host --fail-calls: $(cat "$T/o")"
grep -q "eager@21 *device_error" "$T/o" && grep -q "eager@22 *pass" "$T/o" ||
  fail "registered-host: eager@21 should fail a call after registering, eager@22 pass: $(cat "$T/o")"
[ "$(grep -c '^register ' "$T/hostlog")" -ge 4 ] || fail "host log: $(cat "$T/hostlog")"
left=$(awk '{n[$2] += $1 == "register" ? 1 : -1} END {for (a in n) if (n[a]) print a}' "$T/hostlog")
[ -z "$left" ] || fail "host memory left registered after a sticky error: $left ($(cat "$T/hostlog"))"
"$AF" campaign --backend cuda --cases 60 --seed 5 --fail-calls 30 --no-db --out "$T/fc" \
  --quiet >"$T/o" 2>&1 || fail "campaign --fail-calls on cuda: $(tail -5 "$T/o")"
grep -q '"cases": 60, .*"failures": 0, "device_error_cases": [1-9]' "$T/fc/summary.json" ||
  fail "campaign --fail-calls on cuda: $(head -c 600 "$T/fc/summary.json")"
ok "a failing device on cuda: device_error, a new child after a sticky error, the next case passes"
# the bundle for GPU runners: it runs from its own folder
if af_need "the gpu bundle" mlir-opt-22 llc-22; then
  bash "$SRC/scripts/gpu-bundle.sh" "$BUILD" "$T/gb" 5 >"$T/o" 2>&1 || fail "gpu-bundle: $(tail -3 "$T/o")"
  "$T/gb/run.sh" device >"$T/o" 2>&1 || fail "bundle device: $(cat "$T/o")"
  "$T/gb/run.sh" run-batch "$T/gb/batch" --backend cuda --schedules eager --json >"$T/o" 2>/dev/null
  [ $? -eq 1 ] && grep -q '"verdict"' "$T/o" || fail "bundle run-batch: $(head -3 "$T/o")"
  ok "gpu-bundle: device and run-batch from the bundle"
fi
echo "cuda_fake: all passed"
