#!/bin/bash
# abi_list: the runtime library defines every mgpu* function of MLIR's CUDA and ROCm runtime
# wrappers of each supported LLVM (the checked-in lists of runtime/abi/), and nothing else named
# mgpu*; every mgpu* name LLVM 22's compiler can emit a call to is on the lists.
# usage: abi_list_test.sh LIBASYNCFUZZ_RT SOURCE_DIR
set -u
lib=$1 src=$2
. "$src/tests/lib.sh"
af_need_or_exit "the wrappers' ABI against nm -D" nm
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
lists=("$src"/runtime/abi/mgpu-*.txt)
[ ${#lists[@]} -ge 2 ] || bad "fewer than two lists in runtime/abi: ${lists[*]}"
for l in "${lists[@]}"; do
  grep -v '^#' "$l" | awk 'NF != 3 || $1 !~ /^mgpu/ || $2 !~ /^(cuda|rocm|cuda,rocm)$/ { print }' >"$T/badrows"
  [ -s "$T/badrows" ] && bad "$(basename "$l"): rows not NAME FLAVOURS FAMILY: $(head -3 "$T/badrows")"
done
cat "${lists[@]}" | grep -v '^#' | awk '{ print $1 }' | sort -u >"$T/want"
nm -D --defined-only "$lib" | awk '$3 ~ /^mgpu/ { print $3 }' | sort -u >"$T/have"
missing=$(comm -23 "$T/want" "$T/have" | tr '\n' ' ')
extra=$(comm -13 "$T/want" "$T/have" | tr '\n' ' ')
[ -z "$missing" ] || bad "the wrappers define, the library lacks: $missing"
[ -z "$extra" ] || bad "the library defines, no wrapper list has: $extra"
echo "ok: $(wc -l <"$T/have") mgpu* functions, $(wc -l <"$T/want") listed"
mlir=/usr/lib/llvm-22/lib/libMLIR.so.22.1
if [ -r "$mlir" ] && af_need "the names LLVM 22 emits" strings; then
  strings "$mlir" | grep -x 'mgpu[A-Za-z0-9_]*' | sort -u >"$T/emit"
  off=$(comm -23 "$T/emit" "$T/want" | tr '\n' ' ')
  [ -z "$off" ] || bad "LLVM 22 calls what no list has: $off"
  echo "ok: the $(wc -l <"$T/emit") names LLVM 22 emits are listed"
fi
[ $fail = 0 ] && echo "abi_list: all passed" || echo "abi_list: $fail failure(s)"
[ $fail = 0 ]
