#!/bin/bash
# abi: the rocm flavour of the runtime ABI through the command line (docs/abi.md): the corpus and
# generated cases pass with the builtin lowering under --abi rocm; the flavour reaches the trace
# and check-trace follows it; replay commands carry it; bad uses are refused with the reason.
# The flavours' differences one by one are tests/test_abi.c.
#
# usage: abi_test.sh ASYNCFUZZ SRC
set -u
af=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad() {
  echo "FAIL: $*"
  exit 1
}

# the corpus and 200 generated cases (more host_shared buffers and typed ones than by
# default, so the rocm mode's staging copies run) pass under both flavours
"$af" check "$src"/corpus/*.json --abi rocm > "$tmp/out" 2>&1 || bad "corpus under rocm: $(grep -B2 -A4 FAIL "$tmp/out" | head -20)"
for i in $(seq 1 200); do
  "$af" gen --seed $((i * 104729)) --ops 40 --host-shared 40 --typed 60 -o "$tmp/g$i.json" || bad gen
done
for abi in rocm cuda; do
  "$af" check "$tmp"/g*.json --abi $abi --json > "$tmp/$abi.json" 2>&1 || bad "generated cases under $abi: $(grep -v '"verdict": "pass", "runs"' "$tmp/$abi.json" | head -c 600)"
  [ "$(grep -c '"verdict": "pass", "runs"' "$tmp/$abi.json")" -eq 200 ] || bad "$abi: not 200 passes"
done
# the rocm mode did what the flavour needs: a host_shared buffer is read through a copy, and a
# 16-bit memset is mgpuMemset32 plus copies; mgpuMemset16 never appears
n16=0
nstaged=0
for i in $(seq 1 40); do
  "$af" run "$tmp/g$i.json" --abi rocm --trace - > "$tmp/t" 2>&1 || bad "run g$i under rocm: $(tail -3 "$tmp/t")"
  ! grep -q mgpuMemset16 "$tmp/t" || bad "g$i: mgpuMemset16 under rocm"
  "$af" run "$tmp/g$i.json" --trace - > "$tmp/tc" 2>&1
  grep -q mgpuMemset16 "$tmp/tc" && n16=$((n16 + 1))
  [ "$(grep -c host_init "$tmp/t")" -gt "$(grep -c host_init "$tmp/tc")" ] && nstaged=$((nstaged + 1))
done
echo "sample: $n16 case(s) with a 16-bit memset, $nstaged with a staging copy"
[ $n16 -gt 0 ] && [ $nstaged -gt 0 ] || bad "the sample has no 16-bit memset ($n16) or staging buffer ($nstaged)"

# the trace records the flavour and check-trace follows it: with the free_unordered fault the
# lowering frees a buffer while a copy may still use it, which cuda's mgpuMemFree does not
# order and rocm's (hipFree, which synchronizes the device first) does
c=$src/corpus/memcpy-two-deps-dealloc.json
for abi in cuda rocm; do
  "$af" check "$c" --lowering builtin:fault=free_unordered --abi $abi > "$tmp/$abi.out" 2>&1
  echo $? > "$tmp/$abi.rc"
  "$af" run "$c" --lowering builtin:fault=free_unordered --policy lazy --abi $abi \
    --trace-bin "$tmp/$abi.bin" > /dev/null 2>&1
  "$af" check-trace "$tmp/$abi.bin" > "$tmp/$abi.ct" 2>&1
  echo $? >> "$tmp/$abi.rc"
done
[ "$(cat "$tmp/cuda.rc" | tr '\n' ' ')" = "1 1 " ] && grep -q free_while_in_use "$tmp/cuda.ct" ||
  bad "free_unordered under cuda: $(cat "$tmp/cuda.rc") $(head -5 "$tmp/cuda.ct")"
[ "$(cat "$tmp/rocm.rc" | tr '\n' ' ')" = "0 0 " ] ||
  bad "free_unordered under rocm: $(cat "$tmp/rocm.rc") $(head -5 "$tmp/rocm.ct")"
# and the reducer judges under the flavour it is given
"$af" reduce "$c" --lowering builtin:fault=free_unordered --abi rocm > /dev/null 2> "$tmp/err"
[ $? -eq 1 ] && grep -q "does not fail" "$tmp/err" || bad "reduce under rocm: $(cat "$tmp/err")"
"$af" reduce "$c" --lowering builtin:fault=free_unordered --abi cuda -o "$tmp/red.json" 2> "$tmp/err" ||
  bad "reduce under cuda: $(cat "$tmp/err")"
# a trace with an unknown flavour is refused as corrupt
"$af" gen --seed 5 -o "$tmp/c5.json" && "$af" run "$tmp/c5.json" --abi rocm --trace-bin "$tmp/r.bin" > /dev/null 2>&1
"$af" check-trace "$tmp/r.bin" > /dev/null 2>&1 || bad "check-trace of a rocm trace: $("$af" check-trace "$tmp/r.bin" 2>&1 | tail -2)"
printf '\x07' | dd of="$tmp/r.bin" bs=1 seek=28 conv=notrunc 2> /dev/null
"$af" check-trace "$tmp/r.bin" > "$tmp/out" 2>&1
[ $? -eq 3 ] && grep -q "unknown ABI flavour 7" "$tmp/out" || bad "corrupt flavour: $(cat "$tmp/out")"

# replay commands name the flavour
"$af" check "$src/corpus/region-chain.json" --lowering builtin:fault=yield_stream --abi rocm > "$tmp/out" 2>&1
grep -q 'replay with: .* --abi rocm' "$tmp/out" || bad "replay without --abi: $(grep replay "$tmp/out")"

# refusals
"$af" check "$src/corpus/region-chain.json" --abi hip > "$tmp/out" 2>&1
[ $? -eq 2 ] && grep -q -- "--abi takes cuda or rocm, not hip" "$tmp/out" || bad "--abi hip: $(cat "$tmp/out")"
"$af" check "$src/corpus/region-chain.json" --abi rocm --backend cuda > "$tmp/out" 2>&1
[ $? -eq 2 ] && grep -q "cuda flavour of the runtime ABI only" "$tmp/out" || bad "--abi rocm on cuda: $(cat "$tmp/out")"
"$af" check --help | grep -q -- "--abi cuda|rocm" || bad "check --help does not show --abi"
"$af" campaign --help | grep -q -- "--abi cuda|rocm" || bad "campaign --help does not show --abi"
echo "abi: ok"
