#!/bin/bash
# check-mlir: programs of our own in the style of MLIR's GPU integration tests
# (tests/data/programs), each with the verdict its EXPECT lines give on LLVM 22.1.8 and 19.1.7
# under the default and async-region pipelines; each racy program's fixed twin passes on all
# four; no launch fails for an unknown kernel; a race between two kernels is found from their
# bodies' effects alone; leaks, exit codes, --lowered, --db, and the programs' RUN lines run
# by lit.
# usage: check_mlir_test.sh ASYNCFUZZ SOURCE_DIR
set -u
af=$1 src=$2
. "$src/tests/lib.sh"
af_need_or_exit "check-mlir on programs" mlir-opt-22 mlir-opt-19 sqlite3
T=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
P=$src/tests/data/programs
o22=$(af_tool mlir-opt-22) o19=$(af_tool mlir-opt-19)
M=(--matrix "builds=$o22,$o19" --matrix pipelines=default,async-region --matrix targets=nvvm
  --matrix jit=O0 --schedules eager,lazy,random:2,pct:2 --json)

# expect FILE LINE: what the EXPECT lines of FILE say for the configuration of JSON line LINE
# (the most specific of EXPECT, EXPECT@PIPELINE, EXPECT-MAJOR, EXPECT-MAJOR@PIPELINE)
expect() {
  local low major pipe e=""
  low=$(echo "$2" | sed -n 's/.*"lowering":"\([^"]*\)".*/\1/p')
  major=$(echo "$low" | sed -n 's/^mlir-opt-\([0-9]*\)\..*/\1/p')
  pipe=default
  case "$low" in *@async-region*) pipe=async-region ;; esac
  for key in "EXPECT" "EXPECT@$pipe" "EXPECT-$major" "EXPECT-$major@$pipe"; do
    local l
    l=$(grep -m1 "^// $key: " "$1" | sed "s|^// $key: ||")
    [ -n "$l" ] && e=$l
  done
  echo "$e"
}

# judge NAME LINE ITEMS: ITEMS separated by ';': pass (not failed), a signature's words among
# the findings, or warn:WORDS among the warnings
judge() {
  local name=$1 line=$2 w findings warnings items
  findings=${line%%\"warnings\":*}
  findings=${findings#*\"findings\":}
  warnings=${line#*\"warnings\":}
  IFS=';' read -ra items <<<"$3"
  for w in "${items[@]}"; do
    w=$(echo "$w" | sed 's/^ *//; s/ *$//')
    case "$w" in
      pass) echo "$line" | grep -q '"failed":false' || bad "$name: want pass: $line" ;;
      warn:*) echo "$warnings" | grep -qF "${w#warn:}" || bad "$name: want warning ${w#warn:}: $warnings" ;;
      *) echo "$findings" | grep -qF "$w" || bad "$name: want a finding $w: $findings" ;;
    esac
  done
}

# ---- the programs on the four configurations ----
for f in tokens tokens-racy yield yield-fixed print-unwaited print-waited host-register-racy \
  host-register leak-stream ranked shared-memory; do
  grep -q '^// EXPECT: ' "$P/$f.mlir" || bad "$f.mlir has no EXPECT line"
  "$af" check-mlir "$P/$f.mlir" "${M[@]}" >"$T/$f.json" 2>"$T/$f.err"
  [ "$(wc -l <"$T/$f.json")" = 4 ] || bad "$f: $(wc -l <"$T/$f.json") configurations: $(cat "$T/$f.err")"
  while IFS= read -r line; do
    e=$(expect "$P/$f.mlir" "$line")
    [ -n "$e" ] || bad "$f: no expectation"
    judge "$f ($(echo "$line" | sed -n 's/.*"lowering":"\([^"]*\)".*/\1/p'))" "$line" "$e"
    echo "$line" | grep -q 'no kernel of that name' && bad "$f: a launch failed for an unknown kernel"
  done <"$T/$f.json"
  case "$f" in
    *-fixed | print-waited | tokens | host-register | ranked | shared-memory)
      [ "$(grep -c '"failed":false' "$T/$f.json")" = 4 ] || bad "$f: the fixed program fails somewhere: $(grep -o '"lowering":"[^"]*","version":"[^"]*","failed":true' "$T/$f.json")"
      ;;
  esac
done
echo "ok: 9 programs on LLVM 22.1.8 and 19.1.7, default and async-region"

# ---- a race between two kernels from their bodies alone; two buffers are no race ----
"$af" check-mlir "$P/two-writers.mlir" --lowering "mlir-opt:$o22" --json >"$T/tw.json" 2>&1
[ $? = 1 ] && judge two-writers "$(cat "$T/tw.json")" "$(grep -m1 '^// EXPECT: ' "$P/two-writers.mlir" | sed 's|^// EXPECT: ||')" ||
  bad "two-writers: $(cat "$T/tw.json")"
"$af" check-mlir "$P/two-buffers.mlir" --lowering "mlir-opt:$o22" >"$T/tb.txt" 2>&1 ||
  bad "two-buffers: $(cat "$T/tb.txt")"
grep -q '^verdict: pass$' "$T/tb.txt" || bad "two-buffers: $(cat "$T/tb.txt")"
lu=$("$af" check-mlir "$P/load-unwaited.mlir" --lowering "mlir-opt:$o22" --json 2>&1)
judge load-unwaited "$lu" "$(grep -m1 '^// EXPECT: ' "$P/load-unwaited.mlir" | sed 's|^// EXPECT: ||')"
echo "ok: kernels' effects from their bodies; a host load is a read"
# ... and kernels on the rocdl target (the rocm flavour of the wrappers)
"$af" check-mlir "$P/print-unwaited.mlir" --lowering "mlir-opt/rocdl:$o22" --json >"$T/r1" 2>&1
[ $? = 1 ] && grep -qF 'mlir-opt/rocdl|race|host_read_before_complete' "$T/r1" || bad "rocdl, unwaited: $(cat "$T/r1")"
"$af" check-mlir "$P/print-waited.mlir" --lowering "mlir-opt/rocdl:$o22" --json >"$T/r2" 2>&1 ||
  bad "rocdl, waited: $(cat "$T/r2")"
echo "ok: the rocdl target"

# ---- leaks: a warning, a failure, or nothing; exit codes ----
L=(--lowering "mlir-opt:$o22" --schedules eager)
"$af" check-mlir "$P/leak-stream.mlir" "${L[@]}" >"$T/l1" 2>&1 && grep -q '^warnings:' "$T/l1" ||
  bad "leak: default: $(cat "$T/l1")"
"$af" check-mlir "$P/leak-stream.mlir" "${L[@]}" --leaks error >"$T/l2" 2>&1
[ $? = 1 ] && grep -q '^findings:' "$T/l2" && grep -q 'mlir-opt|leak|stream' "$T/l2" ||
  bad "leak: --leaks error: $(cat "$T/l2")"
"$af" check-mlir "$P/leak-stream.mlir" "${L[@]}" --leaks off >"$T/l3" 2>&1 && ! grep -q 'mlir-opt|leak' "$T/l3" ||
  bad "leak: --leaks off: $(cat "$T/l3")"
"$af" check-mlir "$P/leak-stream.mlir" --leaks maybe >"$T/o" 2>&1
[ $? = 2 ] || bad "--leaks maybe: exit $? ($(cat "$T/o"))"
"$af" check-mlir "$T/nothing.mlir" "${L[@]}" >"$T/o" 2>&1
[ $? = 3 ] && grep -q 'nothing.mlir' "$T/o" || bad "a missing file: $(cat "$T/o")"
"$af" check-mlir "$P/tokens.mlir" --lowering builtin >"$T/o" 2>&1
[ $? = 2 ] && grep -q 'asyncfuzz import' "$T/o" || bad "--lowering builtin: $(cat "$T/o")"
"$af" check-mlir --help | grep -q '^usage: asyncfuzz check-mlir' || bad "check-mlir --help"
echo "not mlir" >"$T/bad.mlir"
"$af" check-mlir "$T/bad.mlir" "${L[@]}" >"$T/o" 2>&1
[ $? = 1 ] && grep -q 'lowering_rejected' "$T/o" || bad "a file mlir-opt cannot parse: $(cat "$T/o")"
cat >"$T/nolink.mlir" <<'M'
module {
  func.func private @nowhere()
  func.func @main() {
    func.call @nowhere() : () -> ()
    return
  }
}
M
"$af" check-mlir "$T/nolink.mlir" "${L[@]}" --json >"$T/o" 2>&1
[ $? = 1 ] && grep -q '"signature":"mlir-opt|jit_crash|[^"/]*nowhere[^"/]*"' "$T/o" ||
  bad "a program that does not link: a jit_crash naming the symbol, no path: $(cat "$T/o")"
echo "ok: leaks and exit codes"

# ---- --lowered: a module lowered by hand (no kernel bodies: every buffer read and written) ----
"$o22" "$P/print-unwaited.mlir" --pass-pipeline="builtin.module(gpu.module(strip-debuginfo,convert-scf-to-cf,convert-gpu-to-nvvm),nvvm-attach-target,expand-strided-metadata,gpu-to-llvm,reconcile-unrealized-casts,gpu-module-to-binary{format=isa},async-to-async-runtime,async-runtime-ref-counting,convert-async-to-llvm,convert-scf-to-cf,convert-func-to-llvm,convert-arith-to-llvm,convert-cf-to-llvm,finalize-memref-to-llvm,reconcile-unrealized-casts)" -o "$T/lowered.mlir" ||
  bad "lowering by hand"
"$af" check-mlir "$T/lowered.mlir" --lowered "${L[@]}" >"$T/o" 2>&1
[ $? = 1 ] && grep -q 'race: mlir-opt|race|host_read_before_complete' "$T/o" && ! grep -q 'no kernel of that name' "$T/o" ||
  bad "--lowered: $(cat "$T/o")"
echo "ok: --lowered"

# ---- --db: findings recorded as a campaign records them, once ----
"$af" check-mlir "$P/print-unwaited.mlir" "${L[@]}" --db "$T/r.db" >"$T/o" 2>"$T/e"
grep -q '[1-9][0-9]* new finding' "$T/e" || bad "--db: $(cat "$T/e")"
[ "$(sqlite3 "$T/r.db" "SELECT count(*) FROM findings WHERE signature LIKE 'mlir-opt|race|host_read_before_complete|%' AND class = 'race'")" = 1 ] ||
  bad "--db: $(sqlite3 "$T/r.db" 'SELECT signature FROM findings')"
"$af" check-mlir "$P/print-unwaited.mlir" "${L[@]}" --db "$T/r.db" >"$T/o" 2>"$T/e"
grep -q ' 0 new finding' "$T/e" || bad "--db again: $(cat "$T/e")"
"$af" db list --db "$T/r.db" | grep -qF 'host_read_before_complete' || bad "db list"
echo "ok: --db"

# ---- import: programs in the case language's subset become cases; check of the case finds
# what check-mlir finds in the program (the same classes, a misused handle by the same words) ----
classes() { grep -o '"class": *"[^"]*"' "$1" | sed 's/.*"\([^"]*\)"$/\1/' | sort -u | tr '\n' ' '; }
n_import=0
for f in tokens yield leak-stream print-unwaited host-register; do
  if ! "$af" import "$P/$f.mlir" -o "$T/$f.json" 2>"$T/$f.imp"; then
    case $f in
      print-unwaited) grep -q 'not one (a case has one meaning).*observe' "$T/$f.imp" || bad "import $f: $(cat "$T/$f.imp")" ;;
      *) bad "import $f: $(cat "$T/$f.imp")" ;;
    esac
    continue
  fi
  n_import=$((n_import + 1))
  "$af" validate "$T/$f.json" >/dev/null || bad "import $f: the case does not validate"
  "$af" check "$T/$f.json" --lowering "mlir-opt:$o22" --schedules eager,lazy,random:2,pct:2 \
    --json >"$T/$f.check" 2>&1
  "$af" check-mlir "$P/$f.mlir" --lowering "mlir-opt:$o22" --schedules eager,lazy,random:2,pct:2 \
    --leaks error --json >"$T/$f.cm" 2>&1
  # check's failing runs' classes (a pass has none) against check-mlir's findings'
  grep -o '"verdict": *"[^"]*"' "$T/$f.check" | sed 's/.*"\([^"]*\)"$/\1/' | grep -v '^pass$' |
    sort -u | tr '\n' ' ' >"$T/$f.c1"
  sed 's/"warnings":.*//' "$T/$f.cm" | grep -o '"class":"[^"]*"' | sed 's/.*"\([^"]*\)"$/\1/' |
    sort -u | tr '\n' ' ' >"$T/$f.c2"
  [ "$(cat "$T/$f.c1")" = "$(cat "$T/$f.c2")" ] ||
    bad "import then check of $f: classes [$(cat "$T/$f.c1")], check-mlir [$(cat "$T/$f.c2")]"
  if grep -q misused-handle "$T/$f.check"; then
    w=$(grep -o 'misused-handle|[a-z]*|[a-z-]*' "$T/$f.check" | head -1)
    grep -qF "$w" "$T/$f.cm" || bad "import then check of $f: $w, not in check-mlir's"
  fi
done
[ $n_import -ge 4 ] || bad "import: $n_import of 5 programs"
# a gpu.host_register of a host buffer: the buffer is registered in the case, and rendered so
grep -q '"name": "h", "kind": "host", "n": 8, "init": 1, "registered": true' "$T/host-register.json" ||
  bad "import of host-register: $(head -12 "$T/host-register.json")"
"$af" render "$T/host-register.json" | grep -q 'gpu.host_register %u0 : memref<\*xi32>' ||
  bad "render of the imported host-register case: no gpu.host_register"
# a ranked device buffer (memref<?x4xi32>, reshaped for its copy and its kernel): the case's buffer
# has its shape, the reshapes are the buffer, and the case passes on mlir-opt as the program does
"$af" import "$P/ranked.mlir" -o "$T/ranked.json" 2>"$T/ranked.imp" || bad "import ranked: $(cat "$T/ranked.imp")"
grep -q '"name": "d", "kind": "device", "n": 8, "shape": \[2, 4\], "dynamic": \[0\]' "$T/ranked.json" ||
  bad "import of ranked: $(head -12 "$T/ranked.json")"
"$af" render "$T/ranked.json" | grep -q 'gpu.alloc async \[%t[0-9]*\] (%k[0-9]*) : memref<?x4xi32>' ||
  bad "render of the imported ranked case: no ranked gpu.alloc"
"$af" check "$T/ranked.json" --lowering mlir-opt --schedules eager,lazy >"$T/o" 2>&1 ||
  bad "check of the imported ranked case: $(tail -3 "$T/o")"
# a gpu.launch given dynamic shared memory: the case's launch gives its staged kernel what its one
# block of a thread per element needs (4 bytes a thread), which renders again, passes on mlir-opt
# as the program does, and fails with the lowering that drops it
"$af" import "$P/shared-memory.mlir" -o "$T/smem.json" 2>"$T/smem.imp" || bad "import shared-memory: $(cat "$T/smem.imp")"
grep -q '"op": "launch", "kernel": "af_fill", "args": \["d"\], "value": 0, "shared_memory": 16,' "$T/smem.json" ||
  bad "import of shared-memory: $(grep launch "$T/smem.json")"
"$af" render "$T/smem.json" | grep -q '@af_fill_s blocks in .* dynamic_shared_memory_size %k[0-9]* args' ||
  bad "render of the imported shared-memory case: no staged launch"
"$af" check "$T/smem.json" --lowering mlir-opt --schedules eager,lazy >"$T/o" 2>&1 ||
  bad "check of the imported shared-memory case: $(tail -3 "$T/o")"
"$af" check "$T/smem.json" --lowering builtin:fault=smem_dropped --schedules eager >"$T/o" 2>&1
grep -q 'wrong_result|shared-memory' "$T/o" || bad "smem_dropped on the imported case: $(tail -3 "$T/o")"
"$af" import "$P/tokens.mlir" --lowering x >"$T/o" 2>&1
[ $? = 2 ] || bad "import --lowering x: $(cat "$T/o")"
echo 'module { func.func @main() { %x = scf.execute_region -> i32 { scf.yield } return } }' >"$T/o.mlir"
"$af" import "$T/o.mlir" >"$T/o" 2>&1
[ $? = 3 ] && grep -q 'line 1: .*scf.execute_region.*outside the case language' "$T/o" ||
  bad "import of an op outside the subset: $(cat "$T/o")"
echo "ok: import ($n_import of 5), check of the case as check-mlir"

# ---- the README's example is what the command prints ----
sed -n '/^\$ build\/asyncfuzz check-mlir tests\/data\/programs\/print-unwaited.mlir --schedules eager,lazy$/,/^```$/p' \
  "$src/README.md" | sed '1d;$d' >"$T/readme.want"
(cd "$src" && "$af" check-mlir tests/data/programs/print-unwaited.mlir --schedules eager,lazy \
  --lowering "mlir-opt:$o22" 2>/dev/null) | sed "s|^tests/data/programs/print-unwaited.mlir: .*|tests/data/programs/print-unwaited.mlir: mlir-opt|" >"$T/readme.got"
[ -s "$T/readme.want" ] && diff "$T/readme.want" "$T/readme.got" >"$T/readme.diff" ||
  bad "the README's check-mlir example is not what it prints: $(head -20 "$T/readme.diff")"
echo "ok: the README's example"

# ---- the programs' RUN lines, run by lit (with FileCheck) as an MLIR test directory would ----
if af_need "the RUN lines under lit" lit-22 FileCheck-22; then
  cp -r "$P" "$T/lit"
  PATH="$(dirname "$(readlink -f "$af")"):$(dirname "$(readlink -f "$(af_tool FileCheck-22)")"):$PATH" \
    "$(af_tool lit-22)" -a "$T/lit" >"$T/lit.out" 2>&1 || bad "lit: $(tail -20 "$T/lit.out")"
  grep -q 'Passed: 14' "$T/lit.out" || bad "lit: $(tail -5 "$T/lit.out")"
  echo "ok: lit"
fi

[ $fail = 0 ] && echo "check_mlir: all passed" || echo "check_mlir: $fail failure(s)"
[ $fail = 0 ]
