#!/usr/bin/env bash
# The real lowering under test: corpus cases through Debian's mlir-opt 22 (LLVM 22.1.8) and
# mlir-runner, each with its outcome class asserted; batches agree with one case per process;
# a crash or a hang of a tool costs only the case responsible; a missing, unusable or too old
# mlir-opt is a clear error. Skipped (exit 77) where mlir-opt 22 is absent
# (under CI, a failure: tests/lib.sh).
# usage: mlir_outcome_test.sh ASYNCFUZZ SOURCE_DIR
set -u
af=$1 src=$2
. "$src/tests/lib.sh"
af_need_or_exit "the real lowering" mlir-opt-22
opt=$(af_tool mlir-opt-22)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
# the harness's own temporary directories go here, to be checked at the end
export TMPDIR=$tmp/harness-tmp
mkdir -p "$TMPDIR"
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
verdict_of() { # json line -> its verdict
  sed -n 's/^{"case": "[^"]*", "lowering": "[^"]*", .*"verdict": "\([a-z_]*\)", "runs".*/\1/p'
}
expect_class() { # case class [signature substring] [extra args...]
  local c=$1 want=$2 sig=${3:-}; shift 3 2>/dev/null || shift $#
  "$af" check "$src/$c" --lowering mlir-opt --schedules eager,lazy --json "$@" > "$tmp/out" 2> "$tmp/err"
  local got
  got=$(verdict_of < "$tmp/out")
  [ "$got" = "$want" ] || { bad "$c: verdict '$got', expected $want"; sed 's/^/  | /' "$tmp/out" "$tmp/err" | head -5; }
  if [ -n "$sig" ]; then
    grep -qF -- "$sig" "$tmp/out" || { bad "$c: no signature with '$sig'"; head -c 600 "$tmp/out"; echo; }
  fi
  grep -q '"lowering_version": "[^"]*LLVM version 22' "$tmp/out" || bad "$c: no tool version recorded"
  grep -q '"pipeline": "builtin.module(gpu-kernel-outlining,gpu.module(' "$tmp/out" || bad "$c: no pipeline recorded"
}

# ---- the outcome class of each corpus case on LLVM 22.1.8 ----
expect_class corpus/launch-two-deps.json lowering_rejected \
  "mlir-opt|lowering_rejected|gpu.launch_func async|failed to legalize operation 'gpu.launch_func' that was explicitly marked illegal"
expect_class corpus/sync-alloc-dealloc.json lowering_unconverted "mlir-opt|lowering_unconverted|gpu.alloc"
# (the first op left, in sorted order, names it without its dependency count: one pattern
# converts the kind, whatever its count; the detail lists every op left, with the count)
expect_class corpus/memcpy-two-deps-dealloc.json lowering_unconverted "\"signature\": \"mlir-opt|lowering_unconverted|gpu.alloc async\""
grep -qF "ops remain after the pipeline: gpu.alloc async deps=0,gpu.memcpy async deps=2+" "$tmp/out" ||
  bad "memcpy-two-deps-dealloc: the detail lacks the ops left with their dependency counts"
expect_class corpus/region-chain.json lowering_unconverted "mlir-opt|lowering_unconverted|gpu.alloc"
# #170833: the region's yielded token reaches the host's mgpuEventSynchronize as a stream
# (the cause: a stream handle that came out of a region where an event belongs; the call that
# tripped on it is in the detailed form)
expect_class corpus/region-launch-yield.json runtime_error \
  '"signature": "mlir-opt|misused-handle|stream|wrong-kind|via:yield"'
expect_class corpus/region-launch-yield.json runtime_error \
  '"detailed_signature": "mlir-opt|runtime_error|mgpuEventSynchronize|CUDA_ERROR_INVALID_HANDLE|handle of the wrong kind|given=stream"'
# the same yield, of a stream a region captured, reaching another region through a capture of
# the awaited value: still the yield (a capture is followed to its outer token)
expect_class tests/data/mlir-capture-yield.json runtime_error \
  '"signature": "mlir-opt|misused-handle|stream|wrong-kind|via:yield"'
# upstream frees an async dealloc at once: a lifetime error in the strict model only
expect_class tests/data/mlir-simple.json lifetime \
  '"signature": "mlir-opt|missing-edge|dealloc-order|gpu.dealloc async"'
expect_class tests/data/mlir-simple.json lifetime "free_while_in_use|launch.af_fill->dealloc"
expect_class tests/data/mlir-simple.json pass "" --memfree-sync
# a token used again after a host gpu.wait: upstream has destroyed its stream
expect_class tests/data/mlir-run-a.json lifetime \
  '"signature": "mlir-opt|misused-handle|stream|used-after-destroy|destroyed-by:host-wait"'
expect_class tests/data/mlir-run-a.json lifetime "use_of_destroyed_handle|host_wait->launch.af_fill"
# gpu-async-region synchronizes and ends the token's stream before a host call (the observe,
# whose calls the wait is tagged with): the later host wait of that token is named by the host
# wait that destroyed it, as a second gpu.wait of one token is, not by the observe
"$af" check "$src/tests/data/mlir-async-region-destroy.json" --lowering mlir-opt@async-region \
  --schedules eager > "$tmp/out" 2>&1
grep -qF 'signature: mlir-opt@async-region|misused-handle|stream|used-after-destroy|destroyed-by:host-wait' "$tmp/out" ||
  bad "a stream gpu-async-region ended before a host call: $(grep -m1 signature "$tmp/out")"
# a leaked stream is named by how it ended when that says more than its maker: the stream of
# a dealloc gpu-async-region made asynchronous, whose order a join took by an event, is left
# behind by that join; a gpu.wait async whose token nothing consumed leaves its stream unconsumed
"$af" check "$src/tests/data/mlir-leak-handed-on.json" --lowering mlir-opt@async-region \
  --schedules eager > "$tmp/out" 2>&1
grep -qF 'signature: mlir-opt@async-region|lifetime|leaked_stream|handed-on:event' "$tmp/out" &&
  grep -qF 'leaked_stream|made-by:gpu.dealloc' "$tmp/out" ||
  bad "a stream handed on by an event: $(grep -m2 'signature\|detailed' "$tmp/out")"
printf '{"format": "asyncfuzz-case", "version": 1, "seed": "0", "spin": 64, "buffers": [],\n "body": [{"op": "wait_async", "deps": [], "token": "t0"}]}\n' > "$tmp/unused.json"
"$af" check "$tmp/unused.json" --lowering mlir-opt --schedules eager > "$tmp/out" 2>&1
grep -qF 'signature: mlir-opt|lifetime|leaked_stream|unconsumed' "$tmp/out" ||
  bad "a stream at the end of a chain nobody consumed: $(grep -m1 signature "$tmp/out")"

# views: kernel operands on strided views lower and run (the view forms of the kernels); a
# memcpy on a view stays unconverted, and the view is in the name; a launch with two
# dependencies is rejected with or without its views, so the view is not in the name
expect_class corpus/kernel-views.json pass
expect_class corpus/views.json lowering_unconverted \
  '"signature": "mlir-opt|lowering_unconverted|gpu.memcpy async view"'
expect_class tests/data/mlir-view-two-deps.json lowering_rejected \
  '"signature": "mlir-opt|lowering_rejected|gpu.launch_func async|failed to legalize'
# ... unless dropping the views gives no valid case (here views even out buffers of 16 and 8
# elements): then nothing shows that the view does not matter, and the name keeps it
sed 's/"name": "\([hc]\)", "kind": "\([a-z]*\)", "n": 8/"name": "\1", "kind": "\2", "n": 16/' \
  "$src/tests/data/mlir-view-two-deps.json" > "$tmp/view16.json"
"$af" check "$tmp/view16.json" --lowering mlir-opt --schedules eager > "$tmp/out" 2>&1
grep -qF 'signature: mlir-opt|lowering_rejected|gpu.launch_func async view|' "$tmp/out" ||
  bad "views that even out sizes: $(cat "$tmp/out")"
# ... but a launch's grid and blocks made for its views, too few threads for its buffers whole,
# do not keep it: without the views the launch takes one thread per element, and the name
# drops the view
sed 's/"value": 2, "arg_views"/"value": 2, "grid": [1, 1, 1], "block": [3, 1, 1], "arg_views"/' \
  "$src/tests/data/mlir-view-two-deps.json" > "$tmp/viewdims.json"
"$af" check "$tmp/viewdims.json" --lowering mlir-opt --schedules eager > "$tmp/out" 2>&1
grep -qF 'signature: mlir-opt|lowering_rejected|gpu.launch_func async|failed' "$tmp/out" ||
  bad "a launch shaped for its views: $(grep -m1 signature "$tmp/out")"

# a campaign names them the same way: about 3% of its cases fail on a launch with two
# dependencies and a view; they count as the launch's finding, not as one of their own
# (on four configurations, not sixteen, and one reproduction run: the findings' checks on every
# configuration are most of a campaign's time, and this test is not about them)
"$af" campaign --cases 256 --lowering mlir-opt --seed 1601 --out "$tmp/cv" --no-reduce --no-db --no-avoid \
  --matrix targets=nvvm --matrix jit=O0 --repro 1 --quiet > "$tmp/cv.out" 2>&1
grep -qF ' mlir-opt|lowering_rejected|gpu.launch_func async|failed' "$tmp/cv.out" ||
  { bad "campaign: no launch rejected for its dependencies"; tail -5 "$tmp/cv.out"; }
grep -qF "async view|failed" "$tmp/cv.out" && bad "campaign: a view splits the launch's finding"
# the forms of types and launches its cases held, per configuration (summary.json), and per form
# the most executed share of a configuration of each release (the output)
grep -qE '"forms": \{"i16": \[[0-9]+, [0-9]+\], ' "$tmp/cv/summary.json" ||
  bad "campaign: no forms per configuration: $(grep -o '"forms": [^}]*}' "$tmp/cv/summary.json" | head -1)"
tot=$(grep '"axes": ' "$tmp/cv/summary.json" | grep -o '"registered": \[[0-9]*' | tr -d '[' | awk '{ s += $NF } END { print s + 0 }')
[ "$tot" -gt 0 ] && grep -qE "^  registered +$tot +LLVM 22: +[0-9.]+%   LLVM 19: +[0-9.]+%$" "$tmp/cv.out" ||
  bad "campaign: the registered form's line (of $tot cases): $(grep -A3 '^forms of' "$tmp/cv.out")"
# (its time: mlir-opt's processes counted apart from the harness)
grep -qE '"mlir-opt": ([1-9][0-9]*\.[0-9]+|0\.[0-9]*[1-9])' "$tmp/cv/summary.json" ||
  bad "campaign: no time in mlir-opt: $(grep -o '"time": {[^}]*}' "$tmp/cv/summary.json")"

# ---- runtime calls of mlir-opt's code mapped to the case ops they lower ----
# mlir-run-a: op #2 is the gpu.wait that destroys the stream, op #3 the launch that uses it
"$af" check "$src/tests/data/mlir-run-a.json" --lowering mlir-opt --schedules eager > "$tmp/map" 2>&1
grep -qE 'first .*mgpuStreamDestroy\(s1\) +\[case op #2\]' "$tmp/map" \
  || { bad "the stream's destroy is not mapped to the gpu.wait (op #2)"; head -8 "$tmp/map"; }
grep -qE 'second .*mgpuLaunchKernel\(f:af_fill, s1\).*\[case op #3\]' "$tmp/map" \
  || { bad "the launch is not mapped to its launch_func (op #3)"; head -8 "$tmp/map"; }
# the same verdict, by case ops, in one batch of several cases (the batch module's line map)
"$af" check "$src/tests/data/mlir-run-b.json" "$src/tests/data/mlir-run-a.json" --lowering mlir-opt \
  --schedules eager --json > "$tmp/map2" 2>&1
grep 'mlir-run-a.json' "$tmp/map2" | grep -qF 'use_of_destroyed_handle|host_wait->launch.af_fill' \
  || bad "in a batch, mlir-run-a's calls are not mapped to its ops"
# a pipeline that strips the locations: every call's op is unknown, and the verdict still comes,
# named by the calls (never by a stale or wrong op)
pipe=$("$af" lower --help 2>&1 | grep -o 'builtin.module(gpu-kernel-outlining,gpu.module[^ ]*' | head -1)
"$af" check "$src/tests/data/mlir-run-a.json" --lowering mlir-opt --pipeline "${pipe%)},strip-debuginfo)" \
  --schedules eager > "$tmp/strip" 2>&1
grep -qF 'use_of_destroyed_handle|mgpuStreamDestroy->mgpuLaunchKernel' "$tmp/strip" \
  || { bad "stripped locations: no call-level verdict"; head -5 "$tmp/strip"; }
# (the destroyer is named by what its calls did, a host synchronize and then the destroy, which
# needs no case op)
grep -qF 'signature: mlir-opt@custom|misused-handle|stream|used-after-destroy|destroyed-by:host-wait' "$tmp/strip" \
  || { bad "stripped locations: the cause is not named by the destroying calls"; head -5 "$tmp/strip"; }
grep -q '\[case op #' "$tmp/strip" && bad "stripped locations: a call was given a case op"
grep -qF '[no case op]' "$tmp/strip" || bad "stripped locations: the report does not say the op is unknown"

# ---- a signature names no SSA value, size or seed ----
"$af" check "$src"/corpus/*.json "$src"/tests/data/mlir-*.json --lowering mlir-opt --schedules eager --json > "$tmp/all" 2>&1
if grep -o '"signature": "[^"]*"' "$tmp/all" | grep -E '%[a-z0-9_]|seed|[0-9]{3,}'; then
  bad "a signature holds an SSA name, a seed or a size"
fi

# ---- a batch gives each case the verdict it gets alone ----
cases=("$src"/corpus/*.json "$src"/tests/data/mlir-simple.json "$src"/tests/data/mlir-run-a.json "$src"/tests/data/mlir-run-b.json)
"$af" check "${cases[@]}" --lowering mlir-opt --schedules eager,lazy --json > "$tmp/batch" 2> "$tmp/err" \
  || [ $? -eq 1 ] || bad "batched check failed: $(head -3 "$tmp/err")"
for c in "${cases[@]}"; do
  "$af" check "$c" --lowering mlir-opt --schedules eager,lazy --json > "$tmp/one" 2>/dev/null
  a=$(grep -F "\"case\": \"$c\"" "$tmp/batch" | sed 's/"detail": "[^"]*"//g')
  b=$(sed 's/"detail": "[^"]*"//g' "$tmp/one")
  [ -n "$a" ] && [ "$a" = "$b" ] || { bad "$(basename "$c"): batched result differs from the case alone"; echo "  batch: ${a:0:300}"; echo "  alone: ${b:0:300}"; }
done

# ---- differential: builtin and mlir-opt side by side ----
"$af" check "$src/corpus/region-launch-yield.json" --lowering builtin --lowering mlir-opt --schedules lazy > "$tmp/out" 2>&1
rc=$?
[ $rc -eq 1 ] || bad "differential check: exit $rc, expected 1"
grep -q "DIFFER: verdicts differ: builtin=pass mlir-opt=runtime_error" "$tmp/out" || bad "differential check: no DIFFER line"
# (no reduction, four configurations and one reproduction run, for the test's time as above)
"$af" campaign --lowering mlir-opt --lowering builtin --cases 40 --seed 5 --schedules eager --no-avoid \
  --matrix targets=nvvm --matrix jit=O0 --repro 1 --no-reduce --out "$tmp/camp" --quiet > "$tmp/out" 2> "$tmp/err"
rc=$?
[ $rc -eq 1 ] || bad "mlir-opt campaign: exit $rc, expected 1 (findings)"
grep -qE "differential: verdicts differ on [1-9][0-9]* of 40 cases" "$tmp/out" || { bad "mlir-opt campaign: no differential results"; cat "$tmp/out" | head; }
grep -q '"pipeline": "builtin.module(gpu-kernel-outlining,gpu.module(' "$tmp/camp/summary.json" || bad "campaign summary lacks the pipeline"
# the share of cases that reached execution: the builtin lowering runs every case, and a case
# counts for the campaign only when every lowering ran it; the database's run agrees
ran=$(sed -n 's/.*"swarm": [a-z]*, "cases": 40, "executed_cases": \([0-9]*\),.*/\1/p' "$tmp/camp/summary.json")
grep -q '"name": "builtin", "version": "[^"]*", "executed_cases": 40,' "$tmp/camp/summary.json" \
  || bad "campaign summary: the builtin lowering should have run all 40 cases"
grep -q "\"name\": \"mlir-opt\".*\"executed_cases\": $ran," "$tmp/camp/summary.json" \
  || bad "campaign summary: mlir-opt's executed cases should be the campaign's ($ran)"
[ -n "$ran" ] && [ "$ran" -le 40 ] || bad "campaign summary: executed_cases '$ran'"
grep -qF "reached execution: $ran of 40 cases" "$tmp/out" || bad "campaign output lacks the share that ran"
[ "$(sqlite3 "$tmp/camp/results.db" 'SELECT executed FROM runs')" = "$ran" ] || bad "the run's row lacks executed = $ran"
# steering (the default): after its first batches, the campaign builds cases without what the
# findings mlir-opt stopped cases on name, so a larger share of its cases runs than with
# --no-avoid (40 cases above). Steering is narrow: the forms that failed (a dependency count),
# found one by one, so it takes 80 cases to show (four configurations, as above)
"$af" campaign --lowering mlir-opt --cases 80 --seed 5 --schedules eager --batch 8 \
  --matrix targets=nvvm --matrix jit=O0 --repro 1 \
  --no-db --no-reduce --out "$tmp/campav" --quiet > "$tmp/out" 2>&1
grep -qE '"steered_from": \["[^"]*\(found' "$tmp/campav/summary.json" || bad "steering: nothing avoided"
grep -qE '"steered_cases": [1-9]' "$tmp/campav/summary.json" || bad "steering: no case steered"
ran2=$(sed -n 's/.*"swarm": [a-z]*, "cases": 80, "executed_cases": \([0-9]*\),.*/\1/p' "$tmp/campav/summary.json")
[ -n "$ran2" ] && [ -n "$ran" ] && [ "$ran2" -gt $((2 * ran)) ] || bad "--avoid-found: $ran2 of 80 cases ran, not a larger share than $ran of 40"
# each configuration's steering, as gen arguments: the launch mlir-opt rejects (two or more
# dependencies) by its count only, never every async launch; the arguments make cases again,
# with that avoid set in their config
sum="$tmp/campav/summary.json"
grep -q '"avoid": \[[^]]*"gpu.launch_func async deps=2+"' "$sum" || bad "steering: the rejected launch's count is not avoided"
grep -qE '"avoid": \[[^]]*"gpu\.(launch_func|memcpy|memset) async"[],]' "$sum" && bad "steering: an async op kind avoided whole"
nconf=0
while IFS= read -r line; do
  avoid=$(sed -n 's/.*"steering": {"avoid": \(\[[^]]*\]\).*/\1/p' <<< "$line")
  args=$(sed -n 's/.*"gen_args": "\([^"]*\)".*/\1/p' <<< "$line")
  eval "\"\$af\" gen --seed 3 $args" > "$tmp/steered.json" 2>&1 || { bad "gen $args failed"; continue; }
  got=$(sed -n 's/.*"avoid": \(\[[^]]*\]\).*/\1/p' "$tmp/steered.json")
  [ "$avoid" = "[]" ] && got=${got:-[]}
  [ "$got" = "$avoid" ] || bad "gen $args: avoid $got, not the configuration's $avoid"
  grep -qE '"mix": \{"launch": \{"executed": [0-9]+, "executed_share": [01]\.[0-9]+, "unsteered_share": [01]\.[0-9]+\}' <<< "$line" \
    || bad "a configuration's mix: ${line:0:200}"
  nconf=$((nconf + 1))
done < <(grep '"axes": .*"steering": ' "$sum")
[ "$nconf" -ge 2 ] || bad "summary.json: steering of $nconf configurations"
# per case: a case mlir-opt rejects never runs; one it lowers does
"$af" check "$src/corpus/launch-two-deps.json" "$src/tests/data/mlir-run-a.json" --lowering mlir-opt \
  --schedules eager --json > "$tmp/ex" 2> /dev/null
grep -q 'launch-two-deps.json".*"executed": false}$' "$tmp/ex" || bad "check --json: a rejected case is marked executed"
grep -q 'mlir-run-a.json".*"executed": true}$' "$tmp/ex" || bad "check --json: a lowered case is not marked executed"
grep -q '"version": "[^"]*LLVM version 22' "$tmp/camp/summary.json" || bad "campaign summary lacks the tool version"
info=$(ls "$tmp"/camp/failures/*/info.txt 2>/dev/null | head -1)
if [ -n "$info" ]; then
  grep -q "^pipeline: builtin.module(" "$info" || bad "info.txt lacks the pipeline"
  replay=$(sed -n 's/^replay: asyncfuzz //p' "$info")
  "$af" $replay > "$tmp/rep" 2>&1
  [ $? -eq 1 ] || bad "the replay command does not reproduce: $replay"
  grep -qF "$(sed -n 's/^signature: //p' "$info")" "$tmp/rep" || bad "the replay gives another signature"
else
  bad "mlir-opt campaign saved no failure"
fi

# ---- a crashing or hanging mlir-opt costs only its case ----
"$af" gen --seed 3 --ops 6 --spin 777 -o "$tmp/crash.json"
"$af" gen --seed 4 --ops 6 --spin 778 -o "$tmp/hang.json"
export REAL_MLIR_OPT=$opt REAL_MLIR_RUNNER
REAL_MLIR_RUNNER=$(dirname "$(readlink -f "$opt")")/mlir-runner
utils=$(ls "$(dirname "$(readlink -f "$opt")")"/../lib/libmlir_runner_utils.so* | head -1)
ASYNCFUZZ_MLIR_RUNNER=$REAL_MLIR_RUNNER ASYNCFUZZ_RUNNER_UTILS=$utils ASYNCFUZZ_TOOL_TIMEOUT=4 \
  "$af" check "$tmp/crash.json" "$src/corpus/launch-two-deps.json" "$tmp/hang.json" "$src/tests/data/mlir-simple.json" \
  --lowering "mlir-opt:$src/tests/tools/crashing-mlir-opt.sh" --schedules eager --json > "$tmp/out" 2> "$tmp/err"
v() { grep -F "$1" "$tmp/out" | verdict_of; }
[ "$(v crash.json)" = lowering_crash ] || bad "crashing mlir-opt: verdict '$(v crash.json)'"
grep -F crash.json "$tmp/out" | grep -qF "lowering_crash|Segmentation fault|Assertion \`op && \\\"marker N\\\"' failed." \
  || { bad "crash signature: no normalized assertion"; grep -F crash.json "$tmp/out" | head -c 500; echo; }
[ "$(v hang.json)" = timeout ] || bad "hanging mlir-opt: verdict '$(v hang.json)'"
[ "$(v launch-two-deps.json)" = lowering_rejected ] || bad "a batch neighbour of a crash: '$(v launch-two-deps.json)'"
[ "$(v mlir-simple.json)" = lifetime ] || bad "a batch neighbour of a crash: '$(v mlir-simple.json)'"

# ---- a crash in a batch of 8 is found by halves: fewer runs than one per case, same verdicts ----
for s in 11 12 13 14 15; do "$af" gen --seed $s --ops 6 -o "$tmp/n$s.json"; done
nb=("$src/corpus/launch-two-deps.json" "$src/tests/data/mlir-simple.json" "$tmp"/n1[1-5].json)
ASYNCFUZZ_MLIR_RUNNER=$REAL_MLIR_RUNNER ASYNCFUZZ_RUNNER_UTILS=$utils \
  "$af" check "${nb[@]}" --lowering "mlir-opt:$src/tests/tools/crashing-mlir-opt.sh" --schedules eager \
  --json > "$tmp/alone8" 2> "$tmp/err"
rm -f "$tmp/opt-runs"
ASYNCFUZZ_MLIR_RUNNER=$REAL_MLIR_RUNNER ASYNCFUZZ_RUNNER_UTILS=$utils OPT_RUN_LOG=$tmp/opt-runs \
  "$af" check "${nb[@]:0:4}" "$tmp/crash.json" "${nb[@]:4}" --lowering "mlir-opt:$src/tests/tools/crashing-mlir-opt.sh" \
  --schedules eager --json > "$tmp/with8" 2> "$tmp/err"
[ "$(grep -F crash.json "$tmp/with8" | verdict_of)" = lowering_crash ] ||
  bad "a crash among 8: verdict '$(grep -F crash.json "$tmp/with8" | verdict_of)'"
for c in "${nb[@]}"; do
  a=$(grep -F "\"case\": \"$c\"" "$tmp/alone8" | verdict_of)
  b=$(grep -F "\"case\": \"$c\"" "$tmp/with8" | verdict_of)
  [ -n "$a" ] && [ "$a" = "$b" ] || bad "$(basename "$c") beside a crash: '$b', without it '$a'"
done
alone=$(grep -c '/one-[0-9]*\.mlir ' "$tmp/opt-runs" 2>/dev/null)
# (by halves: 8, 4 and 4, 2 and 2, then the crashing pair's 2 cases alone, and whatever the batch
# lowers alone in any case (3 here); one case per process lowered all 8 alone: 11)
[ "${alone:-0}" -ge 2 ] && [ "${alone:-0}" -le 6 ] ||
  bad "a crash among 8: $alone case(s) lowered alone (by halves: at most 6)"
grep -c 'split-input-file' "$tmp/opt-runs" | grep -qx 5 || bad "a crash among 8: not found by halves: $(cut -c1-80 "$tmp/opt-runs")"

# ---- a crashing mlir-runner: the batch falls back to one case per process ----
ASYNCFUZZ_MLIR_RUNNER=$src/tests/tools/crashing-mlir-runner.sh ASYNCFUZZ_RUNNER_UTILS=$utils \
  "$af" check "$src/tests/data/mlir-simple.json" "$src/tests/data/mlir-marked-779.json" "$src/tests/data/mlir-run-a.json" \
  --lowering mlir-opt --schedules eager --json > "$tmp/out" 2> "$tmp/err"
[ "$(v mlir-marked-779.json)" = runtime_error ] || bad "crashing runner: verdict '$(v mlir-marked-779.json)'"
grep -F mlir-marked-779.json "$tmp/out" | grep -q "mlir-runner killed by Segmentation fault" || bad "crashing runner: no signature"
[ "$(v mlir-simple.json)" = lifetime ] || bad "runner fallback: mlir-simple gives '$(v mlir-simple.json)'"
[ "$(v mlir-run-a.json)" = lifetime ] || bad "runner fallback: mlir-run-a gives '$(v mlir-run-a.json)'"

# ---- a runtime error keeps a form's word in its name only where it matters ----
# (the host reads a host_shared allocation the rocdl runtime made on the device: the same error
# whatever the buffer's rank, so a ranked one is named as the rank-1 finding, one finding)
"$af" check "$src/tests/data/mlir-host-shared-ranked.json" --lowering mlir-opt/rocdl --schedules eager --json > "$tmp/out" 2> "$tmp/err"
grep -qF '"signature": "mlir-opt/rocdl|runtime_error|CUDA_ERROR_ILLEGAL_ADDRESS|host access to device memory|gpu.alloc host_shared"' "$tmp/out" ||
  bad "runtime error on a ranked buffer: $(head -c 600 "$tmp/out")"

# ---- a crash named by its frames, and by the forms it needs ----
# (a release build's stack dump: the first named frame and the op's method below it; the case
# again without each form it holds shows which the crash needs: here the ranked memrefs)
"$af" gen --seed 1 --ops 6 --ranked 100 -o "$tmp/ranked.json"
CRASH_ON_RANKED=1 ASYNCFUZZ_MLIR_RUNNER=$REAL_MLIR_RUNNER "$af" check "$tmp/ranked.json" --lowering "mlir-opt:$src/tests/tools/crashing-mlir-opt.sh" \
  --schedules eager --json > "$tmp/out" 2> "$tmp/err"
grep -qF '"signature": "mlir-opt|lowering_crash|Segmentation fault|in mlir::Fake::onRanked from mlir::memref::FakeOp::build"' "$tmp/out" ||
  bad "crash by its frames: $(head -c 600 "$tmp/out")"
grep -qF '(needs: ranked; without it, it does not crash this way)' "$tmp/out" ||
  bad "crash: the form it needs is not named: $(head -c 900 "$tmp/out")"
# a campaign steers by it: after the first batch, no case has a ranked buffer (but exploration's)
CRASH_ON_RANKED=1 ASYNCFUZZ_MLIR_RUNNER=$REAL_MLIR_RUNNER "$af" campaign --lowering "mlir-opt:$src/tests/tools/crashing-mlir-opt.sh" --ranked 100 \
  --ops 8 --cases 64 --batch 8 --explore 0 --seed 1 --no-db --no-reduce --quiet --out "$tmp/cr" > "$tmp/out" 2>&1
info=$(grep -l "^signature: .*Fake::onRanked" "$tmp"/cr/failures/*/info.txt 2> /dev/null | head -1)
if [ -z "$info" ]; then
  bad "campaign: no crash finding: $(tail -5 "$tmp/out")"
else
  grep -q "^needs: ranked (without it, the first case does not crash this way)" "$info" || bad "campaign: info.txt: $(head -20 "$info")"
  n=$(sed -n 's/^occurrences: //p' "$info")
  [ "$n" -ge 1 ] && [ "$n" -le 8 ] || bad "campaign: the crash recurred $n times in 64 cases: not steered past"
  grep -q '"needs": "ranked"' "$tmp/cr/summary.json" || bad "campaign: summary.json has no needs"
  grep -q '\["gpu.alloc async ranked", "mlir-opt|lowering_crash|Segmentation fault|in mlir::Fake::onRanked' "$tmp/cr/summary.json" ||
    bad "campaign: the crash steers no ranked allocation: $(grep -o '"avoid": [^]]*' "$tmp/cr/summary.json" | head -2)"
fi
# one that needs the dynamic extents of ranked buffers (a memref<?x?x...>, which views would
# make too: none here) is steered to static ones: ranked buffers are still made
"$af" gen --seed 1 --ops 6 --ranked 100 --views 0 -o "$tmp/dyn.json"
CRASH_ON_RANKED=dynamic ASYNCFUZZ_MLIR_RUNNER=$REAL_MLIR_RUNNER "$af" check "$tmp/dyn.json" \
  --lowering "mlir-opt:$src/tests/tools/crashing-mlir-opt.sh" --schedules eager --json > "$tmp/out" 2> "$tmp/err"
grep -qF '(needs: dynamic-extents; without it, it does not crash this way)' "$tmp/out" ||
  bad "crash on dynamic extents: $(head -c 900 "$tmp/out")"
CRASH_ON_RANKED=dynamic ASYNCFUZZ_MLIR_RUNNER=$REAL_MLIR_RUNNER "$af" campaign --lowering "mlir-opt:$src/tests/tools/crashing-mlir-opt.sh" \
  --ranked 100 --views 0 --ops 8 --cases 64 --batch 8 --explore 0 --seed 1 --no-db --no-reduce --quiet --out "$tmp/cd" > "$tmp/out" 2>&1
grep -q '\["dynamic-extents", "mlir-opt|lowering_crash|Segmentation fault|in mlir::Fake::onRanked' "$tmp/cd/summary.json" ||
  bad "campaign: the crash on dynamic extents does not steer them: $(grep -o '"avoid": [^]]*' "$tmp/cd/summary.json" | head -2)"
r=$(grep -o '"forms": {[^}]*' "$tmp/cd/summary.json" | tail -1 | sed -n 's/.*"ranked": \[\([0-9]*\),.*/\1/p')
[ "${r:-0}" -ge 20 ] || bad "campaign: steered past dynamic extents, only ${r:-0} of 64 cases hold ranked buffers"

# ---- a missing, unusable or too old mlir-opt ----
"$af" check "$src/corpus/launch-two-deps.json" --lowering mlir-opt:/nonexistent/mlir-opt > "$tmp/out" 2>&1
[ $? -eq 2 ] && grep -q "mlir-opt /nonexistent/mlir-opt not found or not executable" "$tmp/out" || bad "missing mlir-opt: $(cat "$tmp/out")"
ASYNCFUZZ_MLIR_OPT=/nonexistent "$af" campaign --lowering mlir-opt --cases 1 --out "$tmp/x" > "$tmp/out" 2>&1
[ $? -eq 2 ] && grep -q "ASYNCFUZZ_MLIR_OPT=/nonexistent: not found" "$tmp/out" || bad "ASYNCFUZZ_MLIR_OPT missing: $(cat "$tmp/out")"
"$af" check "$src/corpus/launch-two-deps.json" --lowering mlir-opt:/bin/true > "$tmp/out" 2>&1
[ $? -eq 2 ] && grep -q "does not name an LLVM version" "$tmp/out" || bad "not an mlir-opt: $(cat "$tmp/out")"
# Debian's LLVM 16 (mlir-16-tools, which bootstrap.sh --test installs) is too old
if [ -x /usr/lib/llvm-16/bin/mlir-opt ]; then
  "$af" check "$src/corpus/launch-two-deps.json" --lowering mlir-opt:/usr/lib/llvm-16/bin/mlir-opt > "$tmp/out" 2>&1
  [ $? -eq 2 ] && grep -q "is Debian LLVM version 16.0.6; asyncfuzz needs LLVM 19 or newer" "$tmp/out" ||
    bad "too old: $(cat "$tmp/out")"
else
  bad "no /usr/lib/llvm-16/bin/mlir-opt: install mlir-16-tools (scripts/bootstrap.sh --test does)"
fi
"$af" check "$src/corpus/launch-two-deps.json" --lowering mlir-opt@nosuch > "$tmp/out" 2>&1
[ $? -eq 2 ] && grep -q "unknown mlir-opt pipeline \"nosuch\" (named pipelines: default, async-region)" "$tmp/out" || bad "unknown variant: $(cat "$tmp/out")"

# ---- the runner's JIT optimization level ----
# At its default level (no -O flag) LLVM 22's JIT aborts compiling mlir-run-a's lowered module
# (it runs at -O0 and -O2): a jit_crash of that case alone; its batch neighbour keeps its verdict
"$af" check "$src/tests/data/mlir-run-a.json" "$src/tests/data/mlir-run-b.json" \
  --lowering mlir-opt+Odefault --schedules eager --json > "$tmp/out" 2> "$tmp/err"
[ "$(v mlir-run-a.json)" = jit_crash ] || bad "JIT abort: verdict '$(v mlir-run-a.json)'"
grep -F mlir-run-a.json "$tmp/out" |
  grep -qF '"signature": "mlir-opt+Odefault|jit_crash|LLVM ERROR: Do not know how to promote this operator' ||
  bad "JIT abort: signature: $(grep -F mlir-run-a.json "$tmp/out" | head -c 600)"
[ "$(v mlir-run-b.json)" = lifetime ] || bad "a batch neighbour of a JIT abort: '$(v mlir-run-b.json)'"
"$af" check "$src/tests/data/mlir-run-a.json" --lowering mlir-opt+O2 --schedules eager --json > "$tmp/out" 2>&1
[ "$(v mlir-run-a.json)" = lifetime ] || bad "-O2: mlir-run-a gives '$(v mlir-run-a.json)'"
grep -qF '"lowering": "mlir-opt+O2"' "$tmp/out" || bad "-O2: the lowering's name: $(head -c 300 "$tmp/out")"
"$af" check "$src/tests/data/mlir-run-a.json" --lowering mlir-opt+O7 > "$tmp/out" 2>&1
[ $? -eq 2 ] && grep -qF 'unknown JIT optimization level "+O7"' "$tmp/out" || bad "+O7: $(cat "$tmp/out")"

# ---- LLVM 19 (mlir-19-tools, its runner mlir-cpu-runner) beside LLVM 22 ----
o19=/usr/lib/llvm-19/bin/mlir-opt
if [ -x "$o19" ]; then
  "$af" check "$src/corpus/launch-two-deps.json" "$src/corpus/kernel-views.json" \
    "$src/tests/data/mlir-simple.json" --lowering "mlir-opt:$o19" --schedules eager,lazy --json \
    > "$tmp/out19" 2> "$tmp/err19"
  grep -q '"lowering_version": "Debian LLVM version 19\.' "$tmp/out19" || bad "LLVM 19: version not recorded"
  [ "$(grep -F launch-two-deps.json "$tmp/out19" | verdict_of)" = lowering_rejected ] ||
    bad "LLVM 19: launch-two-deps: $(head -c 400 "$tmp/out19") $(head -3 "$tmp/err19")"
  [ "$(grep -F kernel-views.json "$tmp/out19" | verdict_of)" = pass ] ||
    bad "LLVM 19: kernel-views does not run: $(grep -F kernel-views.json "$tmp/out19" | head -c 400)"
  [ "$(grep -F mlir-simple.json "$tmp/out19" | verdict_of)" = lifetime ] ||
    bad "LLVM 19: mlir-simple: $(grep -F mlir-simple.json "$tmp/out19" | head -c 400)"
  # in one batch, LLVM 19's chunk-relative locations ("within split at") are read as 22's:
  # the rejected op is located and the neighbour's calls are mapped to its ops, so the names
  # are the ones LLVM 22 gives
  grep -F launch-two-deps.json "$tmp/out19" |
    grep -qF '"signature": "mlir-opt|lowering_rejected|gpu.launch_func async|failed' ||
    bad "LLVM 19: the rejected op is not located: $(grep -F launch-two-deps.json "$tmp/out19" | head -c 400)"
  grep -F mlir-simple.json "$tmp/out19" |
    grep -qF '"signature": "mlir-opt|missing-edge|dealloc-order|gpu.dealloc async"' ||
    bad "LLVM 19: calls not mapped to ops: $(grep -F mlir-simple.json "$tmp/out19" | head -c 400)"
  # its reproducer names LLVM 19's runner
  "$af" reduce "$src/corpus/launch-two-deps.json" --lowering "mlir-opt:$o19" --schedules eager \
    -o "$tmp/r19.json" --mlir "$tmp/r19.mlir" > /dev/null 2>&1
  grep -q "RUN:   mlir-cpu-runner -O0" "$tmp/r19.mlir" || bad "LLVM 19 reproducer: $(head -12 "$tmp/r19.mlir")"
else
  bad "no $o19: install mlir-19-tools (scripts/bootstrap.sh --test does)"
fi

# ---- the async-region variant and a custom pipeline run ----
"$af" check "$src/corpus/region-launch-yield.json" --lowering mlir-opt@async-region --schedules eager --json > "$tmp/out" 2>&1
grep -q '"pipeline": "builtin.module(gpu-kernel-outlining,func.func(gpu-async-region),' "$tmp/out" || bad "async-region variant: $(head -c 300 "$tmp/out")"
"$af" check "$src/corpus/launch-two-deps.json" --lowering mlir-opt --pipeline 'builtin.module(canonicalize)' --schedules eager --json > "$tmp/out" 2>&1
grep -q '"lowering": "mlir-opt@custom"' "$tmp/out" && [ "$(verdict_of < "$tmp/out")" = lowering_unconverted ] || bad "custom pipeline: $(head -c 300 "$tmp/out")"

# ---- no temporary directory is left behind ----
left=$(find "$TMPDIR" -mindepth 1 -maxdepth 1 -name 'asyncfuzz-*' | wc -l)
[ "$left" -eq 0 ] || bad "$left temporary directories left behind"

if [ "$fail" -eq 0 ]; then echo "mlir outcomes: ok"; else echo "mlir outcomes: $fail failure(s)"; fi
[ "$fail" -eq 0 ]
