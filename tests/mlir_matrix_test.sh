#!/usr/bin/env bash
# The configurations of the real lowering: the rocdl target beside nvvm, and the matrix of
# configurations a campaign rotates through (builds, pipelines, targets, JIT levels), with the
# verdict of each new finding's minimized case on every configuration. Skipped (exit 77) where
# mlir-opt 22 is absent (under CI, a failure: tests/lib.sh).
# usage: mlir_matrix_test.sh ASYNCFUZZ SOURCE_DIR
set -u
af=$1 src=$2
. "$src/tests/lib.sh"
af_need_or_exit "the real lowering" mlir-opt-22
opt=$(af_tool mlir-opt-22)
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
  # gfx90a (no NVVM attribute reaches mlir-opt), are loaded with mgpuModuleLoad and run (under
  # the cuda flavour of the runtime ABI; the rocm flavour is below)
  for c in kernel-views typed-buffers wide-types registered-host memory-space-cast launch-shapes \
    launch-inline typed-kernels ranked; do
    mkdir -p "$tmp/keep-$c"
    ASYNCFUZZ_KEEP_TMP=1 TMPDIR=$tmp/keep-$c "$af" check "$src/corpus/$c.json" \
      --lowering mlir-opt/rocdl --schedules eager,lazy --abi cuda --json > "$tmp/out" \
      2> "$tmp/err" || true
    [ "$(verdict_of < "$tmp/out")" = pass ] ||
      bad "rocdl: $c does not pass: $(head -c 400 "$tmp/out") $(head -3 "$tmp/err")"
    grep -q '"lowering": "mlir-opt/rocdl"' "$tmp/out" || bad "rocdl: $c: name: $(head -c 300 "$tmp/out")"
    grep -q 'convert-gpu-to-rocdl' "$tmp/out" || bad "rocdl: $c: pipeline: $(head -c 600 "$tmp/out")"
    "$af" check "$src/corpus/$c.json" --lowering mlir-opt --schedules eager,lazy --json > "$tmp/nv" 2>&1
    [ "$(verdict_of < "$tmp/nv")" = pass ] || bad "nvvm: $c does not pass: $(head -c 300 "$tmp/nv")"
  done
  lowered=$(find "$tmp/keep-kernel-views" -name '*.out.mlir' | head -1)
  if [ -n "$lowered" ]; then
    grep -q '#gpu.object<#rocdl.target<chip = "gfx90a">, \(bin\|offload\)' "$lowered" ||
      bad "rocdl: the kernels are not a gfx90a object: $(grep -o 'gpu.binary.\{0,120\}' "$lowered" | head -1)"
    ! grep -q nvvm "$lowered" || bad "rocdl: NVVM left in the lowered module"
  else
    bad "rocdl: ASYNCFUZZ_KEEP_TMP kept no lowered module"
  fi
  # rocdl code runs under the rocm flavour by default, whose wrappers have no mgpuMemset16: the
  # i16 memset gpu-to-llvm emits is a finding there, and kernel-views (no i16) still passes
  "$af" check "$src/corpus/typed-buffers.json" --lowering mlir-opt/rocdl --schedules eager \
    --json > "$tmp/out" 2>&1
  sig_of < "$tmp/out" | grep -qF "mlir-opt/rocdl|runtime_error|CUDA_ERROR_NOT_FOUND|not in this ABI flavour's runtime wrappers|gpu.memset async" ||
    bad "rocdl under rocm: typed-buffers: $(head -c 400 "$tmp/out")"
  # (the detailed form closes with the op and its element type: what steering avoids)
  grep -qF "mgpuMemset16|CUDA_ERROR_NOT_FOUND|not in this ABI flavour's runtime wrappers|gpu.memset async i16\"" "$tmp/out" ||
    bad "rocdl under rocm: typed-buffers: no element type in the detailed form: $(head -c 400 "$tmp/out")"
  "$af" check "$src/corpus/kernel-views.json" --lowering mlir-opt/rocdl --schedules eager,lazy \
    --json > "$tmp/out" 2>&1
  [ "$(verdict_of < "$tmp/out")" = pass ] || bad "rocdl under rocm: kernel-views: $(head -c 400 "$tmp/out")"
  # where the lowering is wrong, both find it with the same verdict kind
  "$af" check "$src/corpus/launch-two-deps.json" --lowering mlir-opt/rocdl --schedules eager \
    --json > "$tmp/out" 2>&1
  sig_of < "$tmp/out" | grep -qF 'mlir-opt/rocdl|lowering_rejected|gpu.launch_func async|' ||
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
  # compiled ahead of time (compile-batch) and run (run-batch) on the sim, as nvvm batches are;
  # not on a GPU
  "$af" compile-batch "$src/corpus/kernel-views.json" "$src/corpus/typed-buffers.json" \
    --lowering mlir-opt/rocdl -o "$tmp/rb" > "$tmp/out" 2>&1 || bad "rocdl compile-batch: $(tail -2 "$tmp/out")"
  "$af" run-batch "$tmp/rb" --abi cuda > "$tmp/out" 2>&1 && grep -q '^PASS: ' "$tmp/out" ||
    bad "rocdl run-batch: $(tail -3 "$tmp/out")"
  "$af" run-batch "$tmp/rb" > "$tmp/out" 2>&1
  [ $? -eq 1 ] && grep -q "not in this ABI flavour" "$tmp/out" ||
    bad "rocdl run-batch under rocm: $(tail -3 "$tmp/out")"
  "$af" run-batch "$tmp/rb" --backend cuda > "$tmp/out" 2>&1
  [ $? -eq 2 ] && grep -q 'rocdl code does not run on cuda' "$tmp/out" ||
    bad "rocdl run-batch on cuda: $(tail -2 "$tmp/out")"
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
[ "$rc" -eq 2 ] && grep -q 'rocdl code does not run on cuda' "$tmp/out" ||
  bad "rocdl on cuda: rc $rc: $(head -3 "$tmp/out")"
# an unknown target is refused with the valid ones
"$af" check "$src/corpus/kernel-views.json" --lowering mlir-opt/spirv > "$tmp/out" 2>&1
[ $? -eq 2 ] && grep -q 'unknown target "spirv".*(targets: nvvm, rocdl)' "$tmp/out" ||
  bad "unknown target: $(head -3 "$tmp/out")"

# ---- memory spaces: a gpu.alloc in memory space 1 is rejected by the lowering of both versions
# (named by its shape with " space"); the same case through the default space passes (above) ----
for o in /usr/lib/llvm-22/bin/mlir-opt /usr/lib/llvm-19/bin/mlir-opt; do
  [ -x "$o" ] || continue
  "$af" check "$src/corpus/memory-space.json" --lowering "mlir-opt:$o" --schedules eager --json \
    > "$tmp/out" 2>&1
  case "$(sig_of < "$tmp/out")" in
    *"|lowering_rejected|gpu.alloc async space|"*) ;;
    *) bad "memory-space.json through $o: $(head -c 400 "$tmp/out")" ;;
  esac
done

# an op on a buffer in a memory space is named with " space" only where the space matters: this
# case's unconverted memset of a view fails the same way with every buffer in the default space
"$af" check "$src/tests/data/mlir-space-word.json" --lowering mlir-opt --schedules eager \
  > "$tmp/out" 2>&1
grep -q 'signature: mlir-opt|lowering_unconverted|gpu.memset async view$' "$tmp/out" &&
  grep -q 'with every buffer in the default memory space it fails the same way' "$tmp/out" ||
  bad "the space word kept where it does not matter: $(head -c 600 "$tmp/out")"

# and with " ranked" only where the rank matters: the unconverted copy of a view in rows (a
# multi-dimensional subview) fails the same way with every buffer of rank 1
"$af" check "$src/corpus/ranked-rows.json" --lowering mlir-opt --schedules eager \
  > "$tmp/out" 2>&1
grep -q 'signature: mlir-opt|lowering_unconverted|gpu.memcpy async view$' "$tmp/out" &&
  grep -q 'gpu.memcpy async deps=1 unthreaded view ranked' "$tmp/out" &&
  grep -q 'with every buffer of rank 1 it fails the same way' "$tmp/out" ||
  bad "the ranked word kept where it does not matter: $(head -c 600 "$tmp/out")"

# ---- allocations of a strided layout: still left unconverted by both releases ----
# (docs/case-format.md, "Layouts": why the generator allocates only the identity layout; if a
# release converts them, the generator should make them)
for o in /usr/lib/llvm-22/bin/mlir-opt /usr/lib/llvm-19/bin/mlir-opt; do
  [ -x "$o" ] || { bad "no $o (scripts/bootstrap.sh --test installs it)"; continue; }
  "$o" "$src/tests/data/layouts/strided-alloc.mlir" \
    --pass-pipeline='builtin.module(gpu-to-llvm,finalize-memref-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts)' \
    > "$tmp/strided.out" 2>&1
  n=$(grep -cE '= (gpu|memref)\.alloc' "$tmp/strided.out")
  [ "$n" = 3 ] || bad "$o: strided allocations left unconverted: $n of 3: $(head -c 400 "$tmp/strided.out")"
done

# ---- the matrix: a campaign over LLVM 22 and 19 ----
# (a second of reduction per finding: its two dozen findings' reductions were most of its time)
o22=/usr/lib/llvm-22/bin/mlir-opt o19=/usr/lib/llvm-19/bin/mlir-opt
if [ -x "$o19" ] && [ -x "$o22" ]; then
  "$af" campaign --lowering mlir-opt --matrix "builds=$o22,$o19" --matrix pipelines=default \
    --matrix targets=nvvm --matrix jit=O0 --cases 64 --batch 16 --seed 1601 --schedules lazy \
    --features --reduce-seconds 1 --out "$tmp/m" > "$tmp/m.out" 2> "$tmp/m.err"
  rc=$?
  [ $rc -eq 1 ] || bad "matrix campaign: exit $rc: $(tail -3 "$tmp/m.err")"
  # its features (asyncfuzz fuzz's, counted by --features): the ops LLVM 19 leaves unconverted,
  # and the two releases' disagreement on the findings' cases (the regression below)
  for kind in unconverted disagree shape-verdict; do
    grep -q "\"$kind\": [1-9]" "$tmp/m/summary.json" ||
      bad "matrix campaign: no $kind features: $(grep -o '"features": [^}]*' "$tmp/m/summary.json")"
  done
  grep -q 'mlir-opt, a matrix of 2 configurations (mlir-opt-22.1.8 mlir-opt-19.1.7)' "$tmp/m.err" ||
    bad "matrix campaign: start line: $(head -2 "$tmp/m.err")"
  # batches take turns: each configuration gets its share, shown as it goes and at the end
  tail -1 "$tmp/m.err" | grep -q 'configs 2 (32-32 cases each)' ||
    bad "matrix campaign: status line: $(tail -1 "$tmp/m.err")"
  # ... with the lowest and highest executed and clean shares of a configuration, which the
  # summary's per-configuration counts give
  line=$(tail -1 "$tmp/m.err")
  counts=$(sed -n 's/^  LLVM .* O0 *\([0-9]*\) (\([0-9]*\), \([0-9]*\)).*/\1 \2 \3/p' "$tmp/m.out")
  want=$(echo "$counts" | awk '{ e = 100 * $2 / $1; c = 100 * ($1 - $3) / $1;
      if (NR == 1 || e < el) el = e; if (NR == 1 || e > eh) eh = e;
      if (NR == 1 || c < cl) cl = c; if (NR == 1 || c > ch) ch = c }
    END { printf "(%.0f-%.0f%% per config), clean", el, eh; printf " CLEAN(%.0f-%.0f%%)", cl, ch }')
  echo "$line" | grep -qF "${want% CLEAN*}" && echo "$line" | grep -qF "% ${want#* CLEAN}" ||
    bad "matrix campaign: per-config shares: want $want: $line"
  # the timeline's last point is the end: each configuration's counts as the summary has them
  pts=$(echo "$counts" | awk '{ printf "%s[%d, %d, %d]", (NR > 1 ? ", " : ""), $1, $2, $3 }')
  grep -qF "\"configurations\": [$pts]}" "$tmp/m/summary.json" ||
    bad "matrix campaign: timeline: want [$pts]: $(grep -A2 '"timeline"' "$tmp/m/summary.json" | tail -1)"
  grep -q '^  LLVM 22.1.8, default, nvvm, O0 *32 (' "$tmp/m.out" &&
    grep -q '^  LLVM 19.1.7, default, nvvm, O0 *32 (' "$tmp/m.out" ||
    bad "matrix campaign: cases per configuration: $(grep -A3 '^configurations' "$tmp/m.out")"
  grep -q '"name": "mlir-opt-19.1.7", "axes": "LLVM 19.1.7, default, nvvm, O0", "version": "[^"]*", "cases": 32,' \
    "$tmp/m/summary.json" || bad "matrix campaign: summary: $(grep -A3 '"configurations"' "$tmp/m/summary.json" | head -4)"
  # one finding per cause, whatever configuration found it; each new one checked on both
  db=$tmp/m/results.db
  nf=$(sqlite3 "$db" 'SELECT count(*) FROM findings')
  nc=$(sqlite3 "$db" 'SELECT count(*) FROM finding_configs')
  [ "$nf" -gt 0 ] && [ "$nc" -eq $((2 * nf)) ] || bad "matrix: $nf findings, $nc verdicts (expected 2 each)"
  ! sqlite3 "$db" 'SELECT signature FROM findings' | grep -v '^mlir-opt|' | grep -q . ||
    bad "matrix: a signature names its configuration: $(sqlite3 "$db" 'SELECT signature FROM findings' | grep -v '^mlir-opt|' | head -2)"
  [ "$(sqlite3 "$db" 'SELECT count(*) FROM run_configs WHERE cases = 32')" = 2 ] ||
    bad "matrix: run_configs: $(sqlite3 "$db" 'SELECT * FROM run_configs')"
  # LLVM 22 rejects the cf.br of a block's token that LLVM 19 leaves unconverted (named by the
  # case's scf.if or scf.for its location names): each finding's minimized case fails on both
  # releases, differently, so neither a regression nor a fix: listed as such (a fix is a
  # release where it passes every run)
  "$af" db list --db "$db" --regressions > "$tmp/reg" 2>&1
  sed -n '/^not regressions:/,$p' "$tmp/reg" | grep -qE "19\.1\.7 -> 22\.1\.8 \(1 config\)  mlir-opt\|lowering_rejected\|scf\.(if|for)\|failed to legalize operation 'cf\.br'" ||
    bad "db list --regressions: $(cat "$tmp/reg")"
  "$af" db list --db "$db" --fixed > "$tmp/fix" 2>&1
  sed -n '/^not fixed:/,$p' "$tmp/fix" | grep -qE '19\.1\.7 -> 22\.1\.8 \(1 config\)  mlir-opt\|lowering_unconverted\|scf\.(if|for)' ||
    bad "db list --fixed: $(cat "$tmp/fix")"
  id=$(sed -n 's/^ *\([0-9]*\) .*scf\.\(if\|for\).*/\1/p' "$tmp/reg" | head -1)
  "$af" db show "${id:-1}" --db "$db" > "$tmp/show" 2>&1
  grep -q '^configurations (the minimized case on each): reproduces on 1 of 2' "$tmp/show" &&
    grep -qE '^  19\.1\.7 .*refused by the lowering: mlir-opt\|lowering_unconverted\|scf\.(if|for)' "$tmp/show" &&
    grep -q '^  22.1.8 .*reproduces' "$tmp/show" || bad "db show: $(grep -A4 '^configurations' "$tmp/show")"
  "$af" report --db "$db" --html "$tmp/r.html" > /dev/null 2>&1
  grep -q '<table id="regressions">' "$tmp/r.html" && grep -q '<table id="configs">' "$tmp/r.html" ||
    bad "report: no regressions or configurations table"
  # ... whose rows give each configuration's executed and clean shares of its cases
  rows=$(sed -n '/<table id="configs">/,/<\/table>/p' "$tmp/r.html" | grep '^<tr><td>' |
    sed 's/<[^>]*>/ /g' | awk '{ n = $(NF - 4); x = $(NF - 3); f = $(NF - 2); r++
      if (n == 0 || sprintf("%.1f%%", 100 * x / n) != $(NF - 1) ||
          sprintf("%.1f%%", 100 * (n - f) / n) != $NF) print "wrong: " $0 }
    END { print r " rows" }')
  [ "$rows" = "2 rows" ] || bad "report: configuration shares: $rows"
  # a matrix finding's replay gives its signature (a "matrix:" spec names signatures as the
  # matrix does)
  info=$(grep -l 'cf.br' "$tmp"/m/failures/*/info.txt | head -1)
  replay=$(sed -n 's/^replay: asyncfuzz //p' "$info")
  "$af" $replay > "$tmp/rep" 2>&1
  grep -qF "$(sed -n 's/^signature: //p' "$info")" "$tmp/rep" || bad "matrix replay: $replay: $(head -3 "$tmp/rep")"
  # with two workers: the turns span both, and each new finding is checked once
  "$af" campaign --lowering mlir-opt --matrix "builds=$o22,$o19" --matrix pipelines=default \
    --matrix targets=nvvm --matrix jit=O0 --cases 64 --batch 8 --jobs 2 --seed 77 --no-reduce \
    --schedules lazy --out "$tmp/mj" > "$tmp/mj.out" 2>&1
  nf=$(sqlite3 "$tmp/mj/results.db" 'SELECT count(*) FROM findings')
  grep -q "^matrix: $nf new finding(s) checked on every configuration" "$tmp/mj.out" &&
    [ "$(sqlite3 "$tmp/mj/results.db" 'SELECT count(*) FROM finding_configs')" = $((2 * nf)) ] &&
    [ "$(sqlite3 "$tmp/mj/results.db" 'SELECT group_concat(cases) FROM run_configs')" = 32,32 ] ||
    bad "matrix with --jobs 2: $nf findings: $(grep -A3 '^configurations' "$tmp/mj.out")"
  # without --batch, a matrix's batches are 16 cases: both configurations have had their turn
  # after 32 cases
  "$af" campaign --lowering mlir-opt --matrix "builds=$o22,$o19" --matrix pipelines=default \
    --matrix targets=nvvm --matrix jit=O0 --cases 32 --seed 78 --no-reduce --repro 1 \
    --schedules lazy --no-db --out "$tmp/mb" > "$tmp/mb.out" 2>&1
  grep -q '^  LLVM 22.1.8, default, nvvm, O0 *16 (' "$tmp/mb.out" &&
    grep -q '^  LLVM 19.1.7, default, nvvm, O0 *16 (' "$tmp/mb.out" ||
    bad "a matrix's default batch: $(grep -A3 '^configurations' "$tmp/mb.out")"
  # a finding steers the configurations where its minimized case reproduces, and every one it
  # occurs on: a case reduced on one pipeline can fail another way first on the other (a
  # synchronous gpu.alloc the default pipeline leaves unconverted), where steered cases still
  # show the cause
  "$af" campaign --lowering mlir-opt --matrix "builds=$o22" --matrix pipelines=default,async-region \
    --matrix targets=nvvm --matrix jit=O0 --cases 64 --batch 16 --seed 1601 --schedules lazy \
    --no-reduce --repro 1 --no-db --out "$tmp/ms" > "$tmp/ms.out" 2>&1
  steer=$(grep -o '"reproduces_on": [^}]*' "$tmp/ms/summary.json" | awk '{
      gsub(/[^0-9\]]+/, " "); n++
      split($0, p, "]"); split(p[1], r, " "); split(p[2], s, " "); split(p[3], t, " ")
      delete want; for (i in r) want[r[i]] = 1
      for (i in s) { if (!(s[i] in want)) recur++; want[s[i]] = 1 }
      got = ""; for (i in t) got = got " " t[i]
      w = 0; for (c in want) w++
      if (w != length(t)) bad++; else for (i in t) if (!(t[i] in want)) bad++
    } END { printf "%d findings, %d recurring where their case did not reproduce, %d wrong\n", n, recur, bad }')
  case "$steer" in
    *", 0 wrong") [ "${steer#*findings, }" != "0 recurring where their case did not reproduce, 0 wrong" ] ||
      bad "steering where a finding recurs: nothing recurred: $steer" ;;
    *) bad "steering where a finding recurs: $steer" ;;
  esac
  # the same spec with two builds is the matrix of those builds
  "$af" campaign --lowering "mlir-opt:$o22" --lowering "mlir-opt:$o19" --cases 2 --no-db \
    --no-reduce --schedules eager --out "$tmp/m2" > "$tmp/out" 2>&1
  grep -q 'a matrix of 2 configurations (mlir-opt-22.1.8 mlir-opt-19.1.7)' "$tmp/out" ||
    bad "two builds: $(head -3 "$tmp/out")"
  # the default matrix: every build found x 2 pipelines x 2 targets x 2 levels
  "$af" campaign --lowering mlir-opt --cases 1 --no-db --no-reduce --schedules eager \
    --out "$tmp/m3" > "$tmp/out" 2>&1
  grep -q 'mlir-opt, a matrix of 16 configurations (mlir-opt-22.1.8 mlir-opt-22.1.8+Odefault mlir-opt-22.1.8/rocdl ' "$tmp/out" ||
    bad "default matrix: $(head -3 "$tmp/out")"
  grep -q 'mlir-opt-19.1.7@async-region/rocdl+Odefault)' "$tmp/out" || bad "default matrix: no LLVM 19 configurations"
  # bad input: each a clear error naming what is wrong, exit 2
  mkdir -p "$tmp/norunner"
  printf '#!/bin/sh\nexec %s "$@"\n' "$o22" > "$tmp/norunner/mlir-opt"
  chmod +x "$tmp/norunner/mlir-opt"
  for t in "--matrix colour=red|--matrix \"colour=red\": unknown axis; AXIS=V1,V2" \
    "--matrix targets=spirv|unknown target \"spirv\" (nvvm, rocdl)" \
    "--matrix jit=O9|unknown level \"O9\" (O0, O1, O2, O3, Odefault)" \
    "--matrix jit=O0,Odefault,O0|--matrix: jit names a value twice" \
    "--matrix pipelines=fast|unknown pipeline \"fast\"" \
    "--pipeline builtin.module(canonicalize) --matrix pipelines=default|--pipeline replaces the matrix's pipelines" \
    "--matrix builds=$tmp/norunner|build $tmp/norunner: mlir-runner not found next to" \
    "--matrix builds=$o22,$(command -v mlir-opt-22 || echo "$o22")|are both \"Debian LLVM version 22"; do
    args=${t%%|*} want=${t#*|}
    # shellcheck disable=SC2086
    "$af" campaign --lowering mlir-opt $args --cases 1 --no-db --out "$tmp/bad" > "$tmp/out" 2>&1
    rc=$?
    [ $rc -eq 2 ] && grep -qF -- "$want" "$tmp/out" || bad "$args: exit $rc: $(head -2 "$tmp/out")"
  done
  "$af" campaign --lowering builtin --matrix jit=O0 --cases 1 --no-db --out "$tmp/bad" > "$tmp/out" 2>&1
  [ $? -eq 2 ] && grep -q 'add --lowering mlir-opt' "$tmp/out" || bad "--matrix without mlir-opt: $(head -2 "$tmp/out")"
else
  bad "LLVM 19 and 22 side by side: install mlir-19-tools and mlir-22-tools (scripts/bootstrap.sh --test does)"
fi

# ---- features of a batch: the action log of every chunk ----
# mlir-opt truncates --log-actions-to's file for each --split-input-file chunk; read through a FIFO,
# a batch's log holds every chunk's actions, so batches count the features one case per run does
# (the same cases: --no-avoid keeps findings from steering the generator differently)
for b in 8 1; do
  "$af" campaign --lowering "mlir-opt@default/nvvm:$opt" --cases 24 --batch $b --seed 5 --features \
    --no-avoid --no-reduce --no-db --schedules lazy --out "$tmp/fb$b" > "$tmp/fb$b.out" 2>&1
  rc=$?
  [ $rc -le 1 ] || bad "features, batch $b: exit $rc: $(tail -2 "$tmp/fb$b.out")"
done
fnum() { grep -o "\"$2\": [0-9]*" "$1/summary.json" | head -1 | grep -o '[0-9]*$'; }
f8=$(fnum "$tmp/fb8" total) f1=$(fnum "$tmp/fb1" total)
[ -n "$f8" ] && [ "$f8" = "$f1" ] || bad "features: batches of 8 count ${f8:-none}, one case per run ${f1:-none}"
[ "$(fnum "$tmp/fb8" pattern-pair)" -gt 100 ] 2>/dev/null ||
  bad "features: batches of 8: $(fnum "$tmp/fb8" pattern-pair) pattern pairs"

# ---- no temporary directory is left behind ----
left=$(find "$TMPDIR" -mindepth 1 -maxdepth 1 -name 'asyncfuzz-*' | wc -l)
[ "$left" -eq 0 ] || bad "$left temporary directories left behind"

if [ "$fail" -eq 0 ]; then echo "mlir matrix: ok"; else echo "mlir matrix: $fail failure(s)"; fi
[ "$fail" -eq 0 ]
