#!/usr/bin/env bash
# The configurations of the real lowering: the rocdl target beside nvvm, and the matrix of
# configurations a campaign rotates through (builds, pipelines, targets, JIT levels), with the
# verdict of each new finding's minimized case on every configuration. Skipped (exit 77) where
# mlir-opt 22 is absent.
# usage: mlir_matrix_test.sh ASYNCFUZZ SOURCE_DIR
set -u
af=$1 src=$2
opt=$(command -v mlir-opt-22 || true)
[ -z "$opt" ] && [ -x /usr/lib/llvm-22/bin/mlir-opt ] && opt=/usr/lib/llvm-22/bin/mlir-opt
if [ -z "$opt" ]; then
  echo "SKIP: mlir-opt 22 not found (install mlir-22-tools; scripts/bootstrap.sh does)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
export TMPDIR=$tmp/harness-tmp
mkdir -p "$TMPDIR"
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
verdict_of() { # json line -> its verdict
  sed -n 's/^{"case": "[^"]*", "lowering": "[^"]*", .*"verdict": "\([a-z_]*\)", "runs".*/\1/p'
}
sig_of() { # json line -> its first signature
  grep -o '"signature": "[^"]*"' | head -1 | sed 's/^"signature": "//; s/"$//'
}

# ---- the rocdl target ----
if [ -f /usr/lib/x86_64-linux-gnu/amdgcn/bitcode/ockl.bc ] || [ -n "${ASYNCFUZZ_ROCM_PATH:-}" ] ||
  [ -d /opt/rocm/amdgcn/bitcode ]; then
  # where the lowering is correct for both targets, both pass: the same cases lower for
  # gfx90a (no NVVM attribute reaches mlir-opt), are loaded with mgpuModuleLoad and run
  for c in kernel-views typed-buffers; do
    mkdir -p "$tmp/keep-$c"
    ASYNCFUZZ_KEEP_TMP=1 TMPDIR=$tmp/keep-$c "$af" check "$src/corpus/$c.json" \
      --lowering mlir-opt/rocdl --schedules eager,lazy --json > "$tmp/out" 2> "$tmp/err" ||
      true
    [ "$(verdict_of < "$tmp/out")" = pass ] ||
      bad "rocdl: $c does not pass: $(head -c 400 "$tmp/out") $(head -3 "$tmp/err")"
    grep -q '"lowering": "mlir-opt/rocdl"' "$tmp/out" || bad "rocdl: $c: name: $(head -c 300 "$tmp/out")"
    grep -q 'convert-gpu-to-rocdl' "$tmp/out" || bad "rocdl: $c: pipeline: $(head -c 600 "$tmp/out")"
    "$af" check "$src/corpus/$c.json" --lowering mlir-opt --schedules eager,lazy --json > "$tmp/nv" 2>&1
    [ "$(verdict_of < "$tmp/nv")" = pass ] || bad "nvvm: $c does not pass: $(head -c 300 "$tmp/nv")"
  done
  lowered=$(find "$tmp/keep-kernel-views" -name '*.out.mlir' | head -1)
  if [ -n "$lowered" ]; then
    grep -q '#gpu.object<#rocdl.target<chip = "gfx90a">, offload' "$lowered" ||
      bad "rocdl: the kernels are not a gfx90a object: $(grep -o 'gpu.binary.\{0,120\}' "$lowered" | head -1)"
    ! grep -q nvvm "$lowered" || bad "rocdl: NVVM left in the lowered module"
  else
    bad "rocdl: ASYNCFUZZ_KEEP_TMP kept no lowered module"
  fi
  # where the lowering is wrong, both find it with the same verdict kind
  "$af" check "$src/corpus/launch-two-deps.json" --lowering mlir-opt/rocdl --schedules eager \
    --json > "$tmp/out" 2>&1
  sig_of < "$tmp/out" | grep -qF 'mlir-opt/rocdl|lowering_rejected|gpu.launch_func async deps=2+|' ||
    bad "rocdl: launch-two-deps: $(head -c 400 "$tmp/out")"
  # the NVVM dialect changes how gpu-to-llvm lowers a yielded token: the stream that reaches
  # the host as an event (#170833) is an nvvm finding only
  "$af" check "$src/corpus/region-launch-yield.json" --lowering mlir-opt --schedules eager \
    --json > "$tmp/nv" 2>&1
  "$af" check "$src/corpus/region-launch-yield.json" --lowering mlir-opt/rocdl --schedules eager \
    --json > "$tmp/roc" 2>&1
  sig_of < "$tmp/nv" | grep -qF 'mlir-opt|misused-handle|stream|wrong-kind|via:yield' &&
    [ "$(verdict_of < "$tmp/roc")" = pass ] ||
    bad "region-launch-yield: nvvm $(sig_of < "$tmp/nv"), rocdl $(verdict_of < "$tmp/roc") (expected the yield's misused stream, pass)"
  # its reproducer has no NVVM attribute: the pipeline attaches the rocdl target
  "$af" reduce "$src/corpus/launch-two-deps.json" --lowering mlir-opt/rocdl --schedules eager \
    -o "$tmp/r.json" --mlir "$tmp/r.mlir" > /dev/null 2>&1
  grep -q 'rocdl-attach-target' "$tmp/r.mlir" && ! grep -q 'nvvm' "$tmp/r.mlir" ||
    bad "rocdl reproducer: $(grep -n 'nvvm\|RUN' "$tmp/r.mlir" | head -5)"
else
  bad "no ROCm device libraries: install rocm-device-libs (scripts/bootstrap.sh does)"
fi
# rocdl code runs on the sim only
"$af" check "$src/corpus/kernel-views.json" --lowering mlir-opt/rocdl --backend cuda > "$tmp/out" 2>&1
rc=$?
[ "$rc" -eq 2 ] && grep -q 'runs on the sim backend only' "$tmp/out" ||
  bad "rocdl on cuda: rc $rc: $(head -3 "$tmp/out")"
# an unknown target is refused with the valid ones
"$af" check "$src/corpus/kernel-views.json" --lowering mlir-opt/spirv > "$tmp/out" 2>&1
[ $? -eq 2 ] && grep -q 'unknown target "spirv".*(targets: nvvm, rocdl)' "$tmp/out" ||
  bad "unknown target: $(head -3 "$tmp/out")"

# ---- no temporary directory is left behind ----
left=$(find "$TMPDIR" -mindepth 1 -maxdepth 1 -name 'asyncfuzz-*' | wc -l)
[ "$left" -eq 0 ] || bad "$left temporary directories left behind"

if [ "$fail" -eq 0 ]; then echo "mlir matrix: ok"; else echo "mlir matrix: $fail failure(s)"; fi
[ "$fail" -eq 0 ]
