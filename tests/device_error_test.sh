#!/bin/sh
# device_error: a device that fails calls on purpose (--fail-calls PCT, docs/signatures.md). Its
# runs get device_error verdicts naming the call, counted in summary.json and never recorded as
# findings; a campaign runs to its end; the same cases pass without it; a lowering's own bug is
# still found beside it; the run after a sticky error passes (each run has a fresh context); and
# the real lowering's runs in mlir-runner fail the same way.
# usage: device_error_test.sh ASYNCFUZZ SOURCE_DIR
set -u
af=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}
field() { # summary.json key
  sed -n "s/.*\"$2\": \([0-9]*\).*/\1/p" "$1" | head -1
}
"$af" campaign --cases 3000 --seed 5 --fail-calls 5 --no-db --out "$tmp/f5" --quiet >"$tmp/f5.log" 2>&1 ||
  fail "--fail-calls 5: exit $?: $(tail -3 "$tmp/f5.log")"
[ "$(field "$tmp/f5/summary.json" cases)" = 3000 ] || fail "--fail-calls 5: the campaign did not run to its end"
d5=$(field "$tmp/f5/summary.json" device_error_cases)
[ "${d5:-0}" -gt 0 ] || fail "--fail-calls 5: no device_error in 3000 cases"
[ "$(field "$tmp/f5/summary.json" failures)" = 0 ] || fail "--fail-calls 5: failures beside device errors"
grep -q "device errors: $d5 of 3000 cases" "$tmp/f5.log" || fail "--fail-calls 5: no count in the summary: $(tail -4 "$tmp/f5.log")"
"$af" campaign --cases 3000 --seed 5 --fail-calls 0 --no-db --out "$tmp/f0" --quiet >/dev/null 2>&1 ||
  fail "the same cases without injection do not pass"
[ "$(field "$tmp/f0/summary.json" device_error_cases)" = 0 ] || fail "--fail-calls 0: device errors"
# a lowering's bug is found beside injected failures, and no finding is a device error
"$af" campaign --cases 600 --seed 5 --fail-calls 5 --lowering builtin:fault=drop_host_wait --no-db \
  --no-reduce --out "$tmp/ff" --quiet >/dev/null 2>&1
[ $? = 1 ] || fail "a fault beside --fail-calls: not found"
grep -q '"signature": "builtin:fault=drop_host_wait|missing-edge' "$tmp/ff/summary.json" ||
  fail "a fault beside --fail-calls: its signature is missing"
grep -q '"signature": "[^"]*device_error' "$tmp/ff/summary.json" && fail "a device error recorded as a finding"
# check: the failed call named, a sticky error, and the next run (a fresh context) passes
"$af" check "$src/corpus/wide-types.json" --fail-calls 100 --schedules eager,lazy >"$tmp/c" 2>&1 ||
  fail "check --fail-calls 100: exit $?: $(cat "$tmp/c")"
grep -q "signature: builtin|device_error|mgpu[A-Za-z]*|CUDA_ERROR_[A-Z_]*|sticky" "$tmp/c" ||
  fail "check --fail-calls 100: no sticky device_error naming its call: $(cat "$tmp/c")"
grep -q "^lazy@[0-9]* *pass" "$tmp/c" || fail "the run after a sticky error does not pass: $(cat "$tmp/c")"
grep -q "not judged" "$tmp/c" || fail "check does not say the run was not judged"
# the real lowering: the calls of each case's runs in mlir-runner fail the same way (never what
# the batch does before its first case), and a sticky error leaves the next run healthy
. "$src/tests/lib.sh"
if af_need "--fail-calls through mlir-opt" mlir-opt-22 mlir-runner-22; then
  "$af" check "$src/corpus/wide-types.json" --lowering mlir-opt --fail-calls 100 \
    --schedules eager,lazy >"$tmp/m" 2>&1 || fail "mlir-opt with --fail-calls 100: exit $?: $(cat "$tmp/m")"
  grep -q "signature: mlir-opt|device_error|mgpu[A-Za-z]*|CUDA_ERROR_[A-Z_]*" "$tmp/m" ||
    fail "mlir-opt with --fail-calls 100: no device_error: $(cat "$tmp/m")"
  "$af" check "$src/corpus/wide-types.json" --lowering mlir-opt --schedules eager,lazy >"$tmp/m0" 2>&1 ||
    fail "mlir-opt without --fail-calls: $(cat "$tmp/m0")"
fi
echo "device_error: $d5 of 3000 cases with a device error at --fail-calls 5, 0 failures; all passed"
