#!/usr/bin/env bash
# Renders the corpus and generated cases to MLIR and checks that mlir-opt parses and verifies
# each, and that the kernels of one case compile to PTX through the NVVM path.
# usage: mlir_render_test.sh ASYNCFUZZ MLIR_OPT SOURCE_DIR
set -u
af=$1 opt=$2 src=$3
. "$src/tests/lib.sh"
af_tool mlir-opt-22 >/dev/null || opt="" # (hidden: tests/skips_test.sh)
[ -n "$opt" ] && [ -x "$opt" ] || {
  af_skip "mlir-opt's parser and verifier" "no mlir-opt (mlir-22-tools; scripts/bootstrap.sh installs it)"
  exit 77
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0
check() { # file
  n=$((n + 1))
  if ! "$opt" "$1" -o /dev/null 2>"$tmp/err"; then
    echo "FAIL: mlir-opt rejects $2:"; head -5 "$tmp/err"; fail=$((fail + 1))
  fi
}
for c in "$src"/corpus/*.json; do
  "$af" render "$c" > "$tmp/c.mlir" || { echo "FAIL: render $c"; fail=$((fail + 1)); continue; }
  check "$tmp/c.mlir" "$c"
done
for s in $(seq 1 60); do
  "$af" gen --seed "$s" --ops $((8 + s * 2)) --regions $((s % 40)) --nesting $((s % 4)) \
    --max-deps $((2 + s % 3)) --host-shared 25 --sync 30 --mlir > "$tmp/g.mlir" || { fail=$((fail + 1)); continue; }
  check "$tmp/g.mlir" "generated seed $s"
done
# 300 cases with the default knobs (every construct of the language at its default rate),
# verified by one mlir-opt process over a --split-input-file input
: > "$tmp/all.mlir"
for s in $(seq 1001 1300); do
  [ "$s" -gt 1001 ] && printf '\n// -----\n' >> "$tmp/all.mlir"
  "$af" gen --seed "$s" --mlir >> "$tmp/all.mlir" || { echo "FAIL: gen --seed $s"; fail=$((fail + 1)); }
done
n=$((n + 300))
if ! "$opt" --split-input-file "$tmp/all.mlir" -o /dev/null 2>"$tmp/err"; then
  echo "FAIL: mlir-opt rejects $(grep -c 'error:' "$tmp/err") of 300 default cases:"; head -5 "$tmp/err"
  fail=$((fail + 1))
fi
grep -q 'async.execute' "$tmp/all.mlir" && grep -q 'gpu.wait$' "$tmp/all.mlir" \
  || { echo "FAIL: the default cases lack regions or waits with no operands"; fail=$((fail + 1)); }
grep -q 'gpu.func @af_[a-z]*_v(%dst: memref<?xi32, strided<\[?\], offset: ?>>' "$tmp/all.mlir" \
  && grep -q 'memref.cast .* : memref<?xi32> to memref<?xi32, strided<' "$tmp/all.mlir" \
  || { echo "FAIL: the default cases launch no kernel on views"; fail=$((fail + 1)); }
# a single-dependency case: 22.1.8 rejects multi-dependency launches (upstream #156984)
"$af" render "$src/corpus/region-launch-yield.json" > "$tmp/k.mlir"
if ! "$opt" "$tmp/k.mlir" \
     --pass-pipeline="builtin.module(gpu.module(strip-debuginfo,convert-scf-to-cf,convert-gpu-to-nvvm),nvvm-attach-target)" \
     -o "$tmp/k2.mlir" 2>"$tmp/err" ||
   ! "$opt" "$tmp/k2.mlir" -gpu-to-llvm -reconcile-unrealized-casts -gpu-module-to-binary=format=isa \
     -o "$tmp/k3.mlir" 2>>"$tmp/err" ||
   ! grep -q "atom.global.exch.b32" "$tmp/k3.mlir"; then
  echo "FAIL: kernels do not compile to PTX with atomic sentinel stores:"; head -5 "$tmp/err"; fail=$((fail + 1))
fi
echo "mlir render: $n modules checked with $("$opt" --version | grep -o 'version [0-9.]*' | head -1), $fail failure(s)"
[ "$fail" -eq 0 ]
