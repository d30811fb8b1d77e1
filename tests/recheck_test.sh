#!/bin/bash
# recheck: a finding's verdict on a configuration comes from several runs (its own schedule and
# the adversarial ones): reproduces, passes (every run: the only verdict that counts as fixed),
# fails differently, or refused by the lowering; `db recheck` gives verdicts on configurations
# the database has not seen. The bug: a build of LLVM 22 whose mlir-opt deletes one
# mgpuStreamWaitEvent from its output (a wrapper script, as a custom build of the matrix); a
# second build crashes where the output waits for an event.
# usage: recheck_test.sh ASYNCFUZZ SOURCE_DIR
set -u
af=$1 src=$2
. "$src/tests/lib.sh"
af_need_or_exit "verdicts from repeated runs" mlir-opt-22 sqlite3
T=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
real=$(dirname "$(readlink -f "$(af_tool mlir-opt-22)")")
# build DIR MODE VERSION: LLVM 22's tools in DIR/bin, its mlir-opt saying VERSION and (drop)
# deleting the first mgpuStreamWaitEvent of each output chunk, (crash) crashing on one, or
# (plain) doing nothing more
build() {
  mkdir -p "$1/bin"
  for f in "$real"/*; do ln -sf "$f" "$1/bin/"; done
  rm -f "$1/bin/mlir-opt"
  ln -sfn "$real/../lib" "$1/lib"
  cat >"$1/bin/mlir-opt" <<W
#!/bin/sh
case "\$1" in --version) "$real/mlir-opt" --version | sed 's/LLVM version [0-9.]*/LLVM version $3/'; exit ;; esac
out= prev=
for a in "\$@"; do [ "\$prev" = -o ] && out=\$a; prev=\$a; done
"$real/mlir-opt" "\$@" || exit \$?
[ -n "\$out" ] || exit 0
if [ $2 = drop ]; then
  awk '/^\/\/ -----/ { done = 0 } !done && /llvm.call @mgpuStreamWaitEvent\(/ { done = 1; next } { print }' "\$out" >"\$out.w" && mv "\$out.w" "\$out"
elif [ $2 = crash ] && grep -q 'llvm.call @mgpuStreamWaitEvent(' "\$out"; then
  kill -SEGV \$\$
fi
W
  chmod +x "$1/bin/mlir-opt"
}
build "$T/drop" drop 22.9.1
build "$T/crash" crash 22.9.2
build "$T/plain" plain 22.9.3
mkdir "$T/seeds"
cp "$src/tests/data/mlir-join-waits.json" "$T/seeds/" # (three streams joined by events)
M=(--lowering mlir-opt --matrix pipelines=default --matrix targets=nvvm --matrix jit=O0)
sig='mlir-opt|missing-edge|own-dep|gpu.launch_func async'
verdict() { # db release -> the finding's verdict there
  sqlite3 "$1" "SELECT fc.reproduces FROM finding_configs fc JOIN findings f ON f.id = fc.finding
    WHERE f.signature = '$sig' AND fc.llvm = '$2'"
}
# ---- the dropped wait over 20 campaign seeds (20 own schedules): reproduces on that build in
# every check, passes on Debian's ----
for s in $(seq 1 20); do
  "$af" campaign "${M[@]}" --matrix "builds=$T/drop/bin/mlir-opt,$real/mlir-opt" --seeds "$T/seeds" \
    --cases 1 --seed $((s * 7919)) --schedules lazy --memfree-sync --no-reduce --repro 1 --quiet \
    --out "$T/c$s" >"$T/o" 2>&1
  [ "$(verdict "$T/c$s/results.db" 22.9.1)" = 1 ] && [ "$(verdict "$T/c$s/results.db" 22.1.8)" = 0 ] ||
    bad "seed $s: verdicts $(verdict "$T/c$s/results.db" 22.9.1), $(verdict "$T/c$s/results.db" 22.1.8) (want 1, 0): $(tail -3 "$T/o")"
done
db=$T/c1/results.db
"$af" db list --db "$db" --regressions >"$T/reg"
grep -qF "22.1.8 -> 22.9.1 (1 config)  $sig" "$T/reg" || bad "regressions: $(cat "$T/reg")"
# ---- a configuration the database has not seen: db recheck gives every finding a verdict ----
"$af" db recheck "${M[@]}" --matrix "builds=$T/crash/bin/mlir-opt" --memfree-sync --db "$db" >"$T/o" 2>&1 ||
  bad "db recheck: $(cat "$T/o")"
nf=$(sqlite3 "$db" 'SELECT count(*) FROM findings')
[ "$nf" -gt 0 ] && [ "$(sqlite3 "$db" "SELECT count(*) FROM finding_configs WHERE llvm = '22.9.2'")" = "$nf" ] ||
  bad "db recheck: not every finding has a verdict on 22.9.2: $(cat "$T/o")"
grep -q "^recheck: $nf verdict(s) on 1 configuration(s)" "$T/o" || bad "db recheck says: $(cat "$T/o")"
# ... where the crash is "fails differently", never fixed
[ "$(verdict "$db" 22.9.2)" = 2 ] || bad "the crashing build: verdict $(verdict "$db" 22.9.2), want 2 (fails differently)"
"$af" db list --db "$db" --fixed >"$T/fix"
grep -q '^0 finding(s) gone in' "$T/fix" && grep -q '^not fixed: 1 finding(s)' "$T/fix" &&
  grep -qF "22.9.1 -> 22.9.2 (1 config)  $sig" "$T/fix" || bad "db list --fixed: $(cat "$T/fix")"
id=$(sqlite3 "$db" "SELECT id FROM findings WHERE signature = '$sig'")
"$af" db show "$id" --db "$db" >"$T/show"
grep -q '^  22.9.2 .*fails differently: mlir-opt|lowering_crash' "$T/show" &&
  grep -q '^  22.1.8 .*passes$' "$T/show" && grep -q '^  22.9.1 .*reproduces$' "$T/show" ||
  bad "db show: $(grep -A5 '^configurations' "$T/show")"
# ... and again: nothing left to check
"$af" db recheck "${M[@]}" --matrix "builds=$T/crash/bin/mlir-opt" --memfree-sync --db "$db" >"$T/o" 2>&1
grep -q "have verdicts on every configuration" "$T/o" || bad "db recheck twice: $(cat "$T/o")"
# a campaign meeting a configuration its database has no verdicts on gives them before its cases
"$af" campaign "${M[@]}" --matrix "builds=$T/plain/bin/mlir-opt" --seeds "$T/seeds" --cases 1 \
  --seed 5 --schedules lazy --memfree-sync --no-reduce --repro 1 --quiet --db "$db" --out "$T/c-new" \
  >"$T/o" 2>&1
grep -q "^recheck: $nf verdict(s) on 1 configuration(s)" "$T/o" && [ "$(verdict "$db" 22.9.3)" = 0 ] ||
  bad "a campaign on a new configuration: verdict $(verdict "$db" 22.9.3) (want 0: passes): $(grep recheck "$T/o")"
# a database made before the verdicts were repeated (schema 7, a fail-differently verdict as 0)
# reads as fails differently
sqlite3 "$db" "UPDATE finding_configs SET reproduces = 0 WHERE llvm = '22.9.2'; PRAGMA user_version = 7"
"$af" db show "$id" --db "$db" >"$T/show"
grep -q '^  22.9.2 .*fails differently' "$T/show" || bad "schema 7 migrated: $(grep -A5 '^configurations' "$T/show")"
if [ "$fail" -eq 0 ]; then echo "recheck: ok"; else echo "recheck: $fail failure(s)"; fi
[ "$fail" -eq 0 ]
