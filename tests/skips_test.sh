#!/bin/bash
# skips: tests say what they skip (tests/lib.sh). A tool hidden (ASYNCFUZZ_TEST_HIDE), as on a
# machine without it: af_tool does not find it, on PATH or in LLVM's own bin directory; a part
# that needs it prints "skip:" with its reason and the test goes on, and under CI (where the
# bootstrap installed everything) the test fails with that reason instead. The tests that need
# mlir-opt-22 throughout (batch, mlir_outcome) skip as a whole (77), or fail under CI.
# usage: skips_test.sh ASYNCFUZZ SRC
set -u
AF=$1 SRC=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
. "$SRC/tests/lib.sh"

# ---- the helpers ----
if af_tool mlir-opt-22 >/dev/null; then
  [ -x "$(af_tool mlir-opt-22)" ] || bad "af_tool mlir-opt-22: $(af_tool mlir-opt-22)"
  ASYNCFUZZ_TEST_HIDE="llc-22 mlir-opt-22" af_tool mlir-opt-22 >/dev/null && bad "a hidden tool was found"
fi
af_tool no-such-tool-22 >/dev/null && bad "a missing tool was found"
# a part skipped without CI: "skip:" and the reason, status 1, the test goes on
out=$(CI='' af_need "the part" no-such-tool-22; echo "status $?")
[ "$out" = "skip: the part: no no-such-tool-22 (scripts/bootstrap.sh --test installs it)
status 1" ] || bad "af_need without CI: $out"
# under CI: a FAIL line, and the test ends with 1
out=$(CI=true; af_need "the part" no-such-tool-22; echo "went on")
[ $? -eq 1 ] && [ "$out" = "FAIL: the part skipped under CI: no no-such-tool-22 (scripts/bootstrap.sh --test installs it)" ] ||
  bad "af_need under CI: $out"
out=$(CI=true; af_skip_env "the GPU backend" "no GPU"; echo "went on")
[ "$out" = "skip: the GPU backend: no GPU
went on" ] || bad "af_skip_env under CI: $out"
(CI='' af_need_or_exit "all" no-such-tool-22 >/dev/null)
[ $? -eq 77 ] || bad "af_need_or_exit without CI: not 77"

# ---- whole tests with mlir-opt-22 hidden ----
for t in batch mlir_outcome; do
  CI='' ASYNCFUZZ_TEST_HIDE=mlir-opt-22 bash "$SRC/tests/${t}_test.sh" "$AF" "$SRC" >"$T/o" 2>&1
  rc=$?
  [ $rc -eq 77 ] && grep -q "^skip: .*no mlir-opt-22" "$T/o" || bad "$t, mlir-opt-22 hidden: exit $rc: $(head -3 "$T/o")"
  CI=true ASYNCFUZZ_TEST_HIDE=mlir-opt-22 bash "$SRC/tests/${t}_test.sh" "$AF" "$SRC" >"$T/o" 2>&1
  rc=$?
  [ $rc -eq 1 ] && grep -q "^FAIL: .* skipped under CI: no mlir-opt-22" "$T/o" ||
    bad "$t, mlir-opt-22 hidden, CI: exit $rc: $(head -3 "$T/o")"
done
# ---- no bare skips: every skip in a test goes through tests/lib.sh or says skip: itself ----
for f in "$SRC"/tests/*_test.sh; do
  [ "$(basename "$f")" = skips_test.sh ] && continue
  grep -n 'echo "SKIP' "$f" | sed "s|^|$(basename "$f"):|"
done >"$T/bare"
[ -s "$T/bare" ] && bad "skips not through tests/lib.sh: $(cat "$T/bare")"
if [ "$fail" -eq 0 ]; then echo "skips: ok"; else echo "skips: $fail failure(s)"; fi
[ "$fail" -eq 0 ]
