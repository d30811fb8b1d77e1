#!/bin/bash
# batch: ahead-of-time batches on the simulator. compile-batch lowers and compiles cases into a
# shared object with mlir-opt, mlir-translate, opt and llc (LLVM 22); run-batch, which needs no
# MLIR, must give every case the verdict `check --lowering mlir-opt` gives it.
# usage: batch_test.sh ASYNCFUZZ SRC
set -u
AF=$1
SRC=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}
ok() { echo "ok: $*"; }
. "$(dirname "$0")/lib.sh"
af_need_or_exit "batch (compile-batch needs LLVM 22)" mlir-opt-22 llc-22
D="$SRC/tests/data"

# errors first: no cases, the builtin lowering, a missing or foreign manifest
"$AF" compile-batch -o "$T/x" >/dev/null 2>&1
[ $? -eq 2 ] || fail "compile-batch without cases should exit 2"
"$AF" compile-batch "$D/mlir-simple.json" --lowering builtin -o "$T/x" >"$T/o" 2>&1
[ $? -eq 2 ] && grep -q "mlir-opt lowering" "$T/o" || fail "builtin: $(cat "$T/o")"
"$AF" run-batch "$T/nothing" >"$T/o" 2>&1
[ $? -eq 3 ] && grep -q "manifest.json" "$T/o" || fail "missing batch: $(cat "$T/o")"
mkdir -p "$T/bad" && echo '{"format": "something else"}' >"$T/bad/manifest.json"
"$AF" run-batch "$T/bad" >"$T/o" 2>&1
[ $? -eq 3 ] && grep -q "not a manifest" "$T/o" || fail "foreign manifest: $(cat "$T/o")"
"$AF" compile-batch "$D/mlir-simple.json" -o "$T/x" --lowering mlir-opt:/nonexistent/mlir-opt >"$T/o" 2>&1
[ $? -ne 0 ] || fail "a missing mlir-opt should be refused"
ok "errors"

# data cases that lower, the corpus (which mostly does not, with LLVM 22.1.8) and 24 generated
"$AF" compile-batch "$D/mlir-simple.json" "$D/mlir-run-a.json" "$D/mlir-run-b.json" "$SRC"/corpus/*.json \
  --gen 24 --seed 11 -o "$T/b" >"$T/o" 2>&1 || fail "compile-batch: $(cat "$T/o")"
[ -f "$T/b/batch.so" ] && [ -f "$T/b/manifest.json" ] || fail "no batch.so or manifest"
n=$(ls "$T/b/cases" | wc -l)
[ "$n" -eq $((3 + $(ls "$SRC"/corpus/*.json | wc -l) + 24)) ] || fail "cases: $n"
grep -q '"llc": "Debian LLVM version 22' "$T/b/manifest.json" || fail "tool versions not recorded"
grep -q '"lowering_version": "' "$T/b/manifest.json" || fail "lowering version not recorded"
# the object needs no MLIR library at run time: only the runtime's symbols and libc
ldd "$T/b/batch.so" | grep -qi mlir && fail "batch.so links an MLIR library"
nm -D --undefined-only "$T/b/batch.so" | grep -q mgpuLaunchKernel || fail "batch.so calls no kernel"

list=$(for i in $(seq 0 $((n - 1))); do echo "$T/b/cases/case-$i.json"; done)
"$AF" run-batch "$T/b" --schedules eager,lazy,random@5 --json >"$T/run.json" 2>"$T/e"
rc=$?
"$AF" check $list --lowering mlir-opt --schedules eager,lazy,random@5 --json >"$T/check.json" 2>/dev/null
[ $rc -eq $? ] || fail "exit status differs from check's"
verdicts() { sed 's/"also": \[[^]]*\]//g' | grep -o '"schedule": "[^"]*", "verdict": "[^"]*"\|"signature": "[^"]*"'; }
verdicts <"$T/run.json" >"$T/run.v"
verdicts <"$T/check.json" | grep -v '^"schedule"' >"$T/c1"
grep -v '^"schedule"' "$T/run.v" >"$T/r1"
cmp -s "$T/r1" "$T/c1" || fail "run-batch and check disagree: $(diff "$T/r1" "$T/c1" | head)"
grep -q "compiled" "$T/e" || fail "no summary line: $(cat "$T/e")"
ok "run-batch gives every one of $n cases check's verdicts ($(grep -c '"lowered": true' "$T/b/manifest.json") compiled)"
# a device failing calls on purpose: the same device_error verdicts as check's, and no failure more
"$AF" run-batch "$T/b" --schedules eager,lazy,random@5 --fail-calls 100 --json >"$T/runf.json" 2>"$T/ef"
rcf=$?
"$AF" check $list --lowering mlir-opt --schedules eager,lazy,random@5 --fail-calls 100 --json \
  >"$T/checkf.json" 2>/dev/null
[ $rcf -eq $? ] || fail "--fail-calls: exit status differs from check's"
verdicts <"$T/runf.json" | grep -v '^"schedule"' >"$T/rf"
verdicts <"$T/checkf.json" | grep -v '^"schedule"' >"$T/cf"
cmp -s "$T/rf" "$T/cf" || fail "--fail-calls: run-batch and check disagree: $(diff "$T/rf" "$T/cf" | head)"
grep -q '|device_error|mgpu' "$T/rf" || fail "--fail-calls 100: no device_error in run-batch's verdicts"
grep -q "device failed a call on purpose" "$T/ef" || fail "--fail-calls: no count: $(cat "$T/ef")"
ok "run-batch --fail-calls: check's device_error verdicts"
# the regression database: a run with the manifest's tools, each failing case once; a second
# run of the same batch finds nothing new
"$AF" run-batch "$T/b" --schedules eager --db "$T/r.db" >/dev/null 2>"$T/e"
grep -q "new finding(s)" "$T/e" || fail "no database line: $(cat "$T/e")"
nf=$(sed -n 's/.*: \([0-9]*\) new finding(s).*/\1/p' "$T/e")
[ "$nf" -gt 0 ] || fail "no findings recorded"
"$AF" run-batch "$T/b" --schedules eager --db "$T/r.db" >/dev/null 2>"$T/e"
grep -q ": 0 new finding(s)" "$T/e" || fail "second run: $(cat "$T/e")"
if af_need "the database's rows" sqlite3; then
  [ "$(sqlite3 "$T/r.db" 'select count(*) from runs')" -eq 2 ] || fail "runs"
  sqlite3 "$T/r.db" 'select tools from runs' | grep -q '"llc": "Debian LLVM version 22' || fail "tools"
  sqlite3 "$T/r.db" 'select replay from findings' | grep -q "^asyncfuzz check .*/cases/case-[0-9]*.json --lowering mlir-opt --schedules eager@" ||
    fail "replay: $(sqlite3 "$T/r.db" 'select replay from findings limit 1')"
  # each occurrence as a campaign records it: its detailed (victim-level) form, one of those
  # check gives, and the lowering's version
  sqlite3 "$T/r.db" 'select distinct detailed from forms' | sort >"$T/dbforms"
  grep -o '"detailed_signature": "[^"]*"' "$T/check.json" | sed 's/^[^:]*: "//; s/"$//' | sort -u >"$T/chkforms"
  [ -z "$(comm -23 "$T/dbforms" "$T/chkforms")" ] || fail "forms check never gave: $(comm -23 "$T/dbforms" "$T/chkforms" | head -3)"
  [ "$(sqlite3 "$T/r.db" 'select count(*) from forms f join findings g on g.id = f.finding where f.detailed != g.signature')" -gt 0 ] ||
    fail "no detailed form recorded: $(head -3 "$T/dbforms")"
  ver=$(sed -n 's/.*"lowering_version": "\([^"]*\)".*/\1/p' "$T/b/manifest.json" | head -1)
  [ "$(sqlite3 "$T/r.db" 'select distinct lowering_version from occurrences')" = "$ver" ] || fail "lowering versions"
fi
ok "run-batch --db: $nf findings, none new the second time"
echo "batch: all passed"
