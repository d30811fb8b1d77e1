#!/usr/bin/env bash
# The asyncfuzz command as a user meets it: --help everywhere, documented exit codes, clear
# errors (never a crash) on malformed input, campaigns that save replayable failures.
# usage: cli_test.sh ASYNCFUZZ SOURCE_DIR
set -u
af=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
expect() { # exit-code, description, command...
  local want=$1 what=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"; local got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL: $what: exit $got, expected $want"; sed 's/^/  | /' "$tmp/err" | head -5; fail=$((fail + 1))
  fi
  if [ "$got" -ge 128 ]; then echo "FAIL: $what: crashed (signal $((got - 128)))"; fail=$((fail + 1)); fi
}
expect_err() { # substring: the last command's stderr must contain it
  grep -qF -- "$1" "$tmp/err" || { echo "FAIL: stderr lacks \"$1\":"; sed 's/^/  | /' "$tmp/err" | head -5; fail=$((fail + 1)); }
}
expect_out() {
  grep -qF -- "$1" "$tmp/out" || { echo "FAIL: stdout lacks \"$1\":"; sed 's/^/  | /' "$tmp/out" | head -5; fail=$((fail + 1)); }
}

# help and usage
expect 0 "--help" "$af" --help; expect_out "commands:"
expect 2 "no command" "$af"
expect 2 "unknown command" "$af" frob; expect_err "unknown command"
for c in gen render validate lower run check campaign check-trace reduce db report; do
  expect 0 "$c --help" "$af" "$c" --help; expect_out "usage: asyncfuzz $c"
done
expect 0 "--version" "$af" --version; expect_out "asyncfuzz "
# a repeatable option (--lowering) takes at most 8 values, and says so
nine=(); for i in 1 2 3 4 5 6 7 8 9; do nine+=(--lowering builtin); done
expect 2 "check, 9 lowerings" "$af" check "$src/corpus/region-chain.json" "${nine[@]}"
expect_err "--lowering given more than 8 times"
expect 2 "campaign, 9 lowerings" "$af" campaign --cases 1 --no-db --out "$tmp/nine" "${nine[@]}"
expect_err "--lowering given more than 8 times"
expect 0 "check, 8 lowerings" "$af" check "$src/corpus/region-chain.json" "${nine[@]:2}"
# the benchmarks (built beside asyncfuzz, in bench/) and their scripts: --help says what each
# measures and how it is called, and measures nothing
for b in "$src"/bench/*.sh "$src"/bench/*.c; do
  n=$(basename "$b"); n=${n%.c}
  case "$b" in
  *.sh) expect 0 "$n --help" bash "$b" --help ;;
  *) [ -x "$(dirname "$af")/bench/$n" ] || { echo "FAIL: bench/$n is not built beside asyncfuzz"; fail=$((fail + 1)); continue; }
     expect 0 "$n --help" "$(dirname "$af")/bench/$n" --help ;;
  esac
  expect_out "usage: "
done
# bench_pipeline --cases (what bench/pipeline_ir.sh counts under valgrind): exactly N cases, and
# the records a case made; a bad count is refused
bp="$(dirname "$af")/bench/bench_pipeline"
expect 0 "bench_pipeline --cases" "$bp" --cases 3 16 1; expect_out "cases=3 ops=16 checker=1 mean_case_ops="
grep -Eq "mean_case_records=[1-9]" "$tmp/out" || { echo "FAIL: bench_pipeline --cases counted no trace records"; fail=$((fail + 1)); }
expect 2 "bench_pipeline --cases 0" "$bp" --cases 0 16 1; expect_err "--cases needs N > 0"
# --campaign-seeds: the same cases with each schedule its own seed, as a campaign seeds them
expect 0 "bench_pipeline --campaign-seeds --cases" "$bp" --campaign-seeds --cases 3 16 1
expect_out "cases=3 ops=16 checker=1 mean_case_ops="
expect 0 "bench_pipeline --campaign-seeds (timed)" "$bp" --campaign-seeds 0.01 16
expect_out "schedules seeded each its own"
expect 0 "bench_pipeline (timed)" "$bp" 0.01 16,32
expect_out "schedules seeded all with the case seed"
# each case checked both ways (the checker's cost from paired times), and each size's time per op
# against the first size's, and against 32 ops' when 32 is a later size
expect_out "ops=32 checker_cost="
expect_out "ops=32 checker=1 us_per_op_median="
expect_out "per_op_vs_ops_16="
expect_out "ops=16 checker=1 per_op_vs_ops_32="
expect 2 "bench_pipeline bad size" "$bp" 0.01 16,0; expect_err "sizes: at most 16, each > 0"

# gen: deterministic bytes, knob validation
expect 0 "gen" "$af" gen --seed 7 -o "$tmp/a.json"
expect 0 "gen again" "$af" gen --seed 7 -o "$tmp/b.json"
cmp -s "$tmp/a.json" "$tmp/b.json" || { echo "FAIL: gen is not deterministic"; fail=$((fail + 1)); }
expect 2 "gen bad knob" "$af" gen --max-deps 9; expect_err "--max-deps needs an integer in 2..4"
expect 2 "gen bad seed" "$af" gen --seed -3; expect_err "--seed needs a non-negative integer"
expect 0 "validate generated" "$af" validate "$tmp/a.json"; expect_out "valid"

# bad input: exit 3 with a message naming the problem
printf '{"format": "asyncfuzz-case", "version": 1, "spin": 1, "buffers": [' > "$tmp/trunc.json"
expect 3 "malformed JSON" "$af" check "$tmp/trunc.json"; expect_err "malformed JSON near line 1"
expect 3 "missing file" "$af" check "$tmp/nope.json"; expect_err "cannot open"
cat > "$tmp/race.json" <<'JSON'
{"format": "asyncfuzz-case", "version": 1, "seed": "0", "spin": 1,
 "buffers": [{"name": "d", "kind": "device", "n": 4}],
 "body": [{"op": "alloc", "buf": "d", "mode": "sync"},
          {"op": "memset", "dst": "d", "value": 1, "deps": [], "token": "a"},
          {"op": "memset", "dst": "d", "value": 2, "deps": [], "token": "b"}]}
JSON
expect 3 "ill-formed case" "$af" check "$tmp/race.json"; expect_err "op #2 (memset): writes b0, which op #1 also writes"
sed 's/"memset", "dst": "d", "value": 2, "deps": \[\]/"launch", "kernel": "af_bogus", "args": ["d"], "deps": ["a"]/' "$tmp/race.json" > "$tmp/kern.json"
expect 3 "unknown kernel" "$af" run "$tmp/kern.json"; expect_err "unknown kernel \"af_bogus\""
head -c 1000 /dev/urandom > "$tmp/noise.json"
expect 3 "binary noise" "$af" validate "$tmp/noise.json"
expect 2 "bad lowering" "$af" check "$src/corpus/sync-alloc-dealloc.json" --lowering builtin:fault=nope; expect_err "unknown fault"
expect 2 "bad schedule" "$af" check "$src/corpus/sync-alloc-dealloc.json" --schedules warp; expect_err "unknown schedule policy"
expect 2 "campaign bad schedule" "$af" campaign --cases 5 --schedules warp --out "$tmp/bad-sched"; expect_err "unknown schedule policy"
# a seed that is not a whole decimal number in range, a launch value that is no int32, JSON
# nested deeper than the reader takes: one line naming the field, exit 3
for s in '"12abc"' '""' '"-1"' '"18446744073709551616"' '12'; do
  sed "s/\"seed\": \"0\"/\"seed\": $s/" "$src/corpus/call-token-arg.json" > "$tmp/seed.json"
  expect 3 "case seed $s" "$af" validate "$tmp/seed.json"; expect_err '"seed" must be a string holding a whole decimal number'
done
for v in 4.5 3000000000 '"4"'; do
  sed "s/\"value\": 4,/\"value\": $v,/" "$src/corpus/call-token-arg.json" > "$tmp/value.json"
  expect 3 "launch value $v" "$af" check "$tmp/value.json"; expect_err 'launch "value" must be an integer'
done
sed 's/"value": 4, //' "$src/corpus/call-token-arg.json" > "$tmp/value.json"
expect 0 "launch value absent (its default)" "$af" validate "$tmp/value.json"
{ printf '{"a": '; for i in $(seq 1000); do printf '['; done; for i in $(seq 1000); do printf ']'; done; printf '}'; } > "$tmp/deep.json"
expect 3 "JSON nested 1,000 deep" "$af" validate "$tmp/deep.json"; expect_err "JSON nested deeper than 256 levels"
for s in 12abc -1 0x10 ''; do
  ASYNCFUZZ_SCHED_SEED=$s expect 3 "ASYNCFUZZ_SCHED_SEED=$s" "$af" check "$src/corpus/views.json"
  expect_err "ASYNCFUZZ_SCHED_SEED=$s is not a whole decimal number"
done
ASYNCFUZZ_SCHED_SEED=18446744073709551615 expect 0 "ASYNCFUZZ_SCHED_SEED=2^64-1" "$af" check "$src/corpus/views.json"

# check and run: exit codes and the replay line
expect 0 "check corpus" "$af" check "$src/corpus/region-launch-yield.json"; expect_out "PASS"
expect 1 "check fault" "$af" check "$src/corpus/region-launch-yield.json" --lowering builtin:fault=yield_stream --schedules lazy@3
expect_out "replay with: asyncfuzz run"
expect 0 "check --json" "$af" check "$src/corpus/launch-two-deps.json" --json --schedules lazy,random:2
expect_out '"verdict": "pass"'
expect 1 "run with trace" "$af" run "$src/corpus/region-launch-yield.json" --lowering builtin:fault=yield_stream --policy lazy --trace "$tmp/trace.txt"
grep -q "mgpuEventSynchronize(s1) ! CUDA_ERROR_INVALID_HANDLE" "$tmp/trace.txt" || { echo "FAIL: trace lacks the failing call"; fail=$((fail + 1)); }
expect 0 "lower" "$af" lower "$src/corpus/launch-two-deps.json"; expect_out "mgpuStreamWaitEvent"
# the backend table and --help agree: every backend is in every command's help that takes
# --backend, nothing else is, and --backend refuses others naming them all
expect 0 "device --list-backends" "$af" device --list-backends
backends=$(awk '{ print $1 }' "$tmp/out")
[ "$(echo "$backends" | wc -w)" -ge 3 ] || { echo "FAIL: backends: $backends"; fail=$((fail + 1)); }
for c in check run campaign run-batch; do
  "$af" $c --help > "$tmp/help" 2>&1
  helped=$(sed -n 's/^  --backend \([a-z0-9][a-z0-9]*\)[ [].*/\1/p' "$tmp/help" | sort -u)
  [ "$helped" = "$(echo "$backends" | sort -u)" ] ||
    { echo "FAIL: $c --help lists backends [$helped], the table [$backends]"; fail=$((fail + 1)); }
done
expect 2 "unknown backend" "$af" check "$src/corpus/region-chain.json" --backend nope
for b in $backends; do expect_err "$b"; done
"$af" device --list-backends | grep ' gpu$' | while read -r b _; do
  "$af" device --help | grep -q -- "--backend [a-z|]*$b" || echo "FAIL: device --help lacks $b"
done | tee "$tmp/dev" | grep -q FAIL && fail=$((fail + 1))

# the fault switches: the list docs/lowerings.md shows is the one `lower --list-faults` prints
expect 0 "lower --list-faults" "$af" lower --list-faults; expect_out "yield_stream"
awk '/^<!-- asyncfuzz lower --list-faults -->$/ { on = 1; next } on && /^```$/ { if (++fence == 2) exit; next }
  on' "$src/docs/lowerings.md" > "$tmp/readme-faults"
cmp -s "$tmp/out" "$tmp/readme-faults" ||
  { echo "FAIL: docs/lowerings.md's fault list is not lower --list-faults':"; diff "$tmp/out" "$tmp/readme-faults" | head -5; fail=$((fail + 1)); }

# a saved binary trace is checked again, alone or against its case
expect 1 "run with --trace-bin" "$af" run "$src/corpus/launch-two-deps.json" --lowering builtin:fault=drop_extra_deps --trace-bin "$tmp/t.bin"
expect 1 "check-trace" "$af" check-trace "$tmp/t.bin"; expect_out "error: data_race (RAW)"
expect 1 "check-trace --case" "$af" check-trace "$tmp/t.bin" --case "$src/corpus/launch-two-deps.json" --lowering builtin:fault=drop_extra_deps
expect_out "signature: builtin:fault=drop_extra_deps|missing-edge|extra-dep"
expect_out "|dependency|extra-dep-of:gpu.launch_func async"
expect_out "detailed: builtin:fault=drop_extra_deps|race|missing-edge|data_race.RAW|launch.af_fill->launch.af_combine"
expect 0 "run clean --trace-bin" "$af" run "$src/corpus/launch-two-deps.json" --trace-bin "$tmp/ok.bin"
expect 0 "check-trace clean" "$af" check-trace "$tmp/ok.bin" --case "$src/corpus/launch-two-deps.json"; expect_out "verdict: pass"
head -c 200 "$tmp/t.bin" > "$tmp/trunc.bin"
expect 3 "truncated trace" "$af" check-trace "$tmp/trunc.bin"; expect_err "truncated"
expect 0 "render" "$af" render "$src/corpus/region-chain.json"; expect_out "async.execute"

# reduce: a 200-op failing case to a few ops with the same signature and a reproducer
expect 0 "gen big" "$af" gen --seed 3 --ops 200 -o "$tmp/big.json"
expect 0 "reduce" "$af" reduce "$tmp/big.json" --lowering builtin:fault=yield_stream -o "$tmp/small.json" --mlir "$tmp/small.mlir"
expect_err "reproduces in 10 of 10 runs on sim"
expect 0 "reduced case is valid" "$af" validate "$tmp/small.json"
n=$(grep -c '"op":' "$tmp/small.json")
[ "$n" -le 8 ] || { echo "FAIL: reduced to $n ops"; fail=$((fail + 1)); }
expect 1 "reduced case still fails" "$af" check "$tmp/small.json" --lowering builtin:fault=yield_stream --schedules eager
expect_out "given=stream"
grep -q "^// RUN: mlir-opt %s --pass-pipeline='builtin.module(" "$tmp/small.mlir" || { echo "FAIL: reproducer has no RUN line"; fail=$((fail + 1)); }
grep -q "^// verdict: runtime_error" "$tmp/small.mlir" || { echo "FAIL: reproducer has no verdict"; fail=$((fail + 1)); }
grep -q "^module attributes {gpu.container_module}" "$tmp/small.mlir" || { echo "FAIL: reproducer has no module"; fail=$((fail + 1)); }
expect 1 "reduce a passing case" "$af" reduce "$tmp/small.json"; expect_err "does not fail"
# the same for a host wait that destroys what it waited on (the generator waits on tokens again)
expect 0 "reduce wait_destroys" "$af" reduce "$tmp/big.json" --lowering builtin:fault=wait_destroys -o "$tmp/small2.json"
n=$(grep -c '"op":' "$tmp/small2.json")
[ "$n" -le 8 ] || { echo "FAIL: wait_destroys reduced to $n ops"; fail=$((fail + 1)); }
expect 1 "reduced wait_destroys case still fails" "$af" check "$tmp/small2.json" --lowering builtin:fault=wait_destroys --schedules eager
expect_out "destroyed-by:host-wait"
# a region's host wait on a captured token: with nothing handed over for the capture, the
# capture is the missing link under every schedule (not the host wait that lost it)
expect 0 "capture-wait, correct" "$af" check "$src/tests/data/capture-wait.json"
expect 1 "capture-wait, capture_dropped" "$af" check "$src/tests/data/capture-wait.json" \
  --lowering builtin:fault=capture_dropped --schedules lazy,eager,random:3
n=$(grep -c "signature: builtin:fault=capture_dropped|missing-edge|capture$" "$tmp/out")
[ "$n" -eq 5 ] || { echo "FAIL: capture-wait: $n of 5 schedules name the capture"; fail=$((fail + 1)); }
printf "{ not json" > "$tmp/malformed.json"
expect 3 "reduce a malformed case" "$af" reduce "$tmp/malformed.json"

# campaigns: correct lowering finds nothing; a fault is found, saved and replayable
expect 0 "campaign clean" "$af" campaign --cases 300 --seed 1 --out "$tmp/c0" --quiet
expect_out "0 failing"
[ -f "$tmp/c0/summary.json" ] || { echo "FAIL: no summary.json"; fail=$((fail + 1)); }
expect 1 "campaign fault" "$af" campaign --cases 200 --seed 1 --out "$tmp/c1" --lowering builtin:fault=drop_host_wait
grep -qE "[1-9][0-9]* failing, [1-9][0-9]* signature" "$tmp/out" || { echo "FAIL: the fault campaign reports no failures"; fail=$((fail + 1)); }
info=$(ls "$tmp"/c1/failures/*/info.txt 2>/dev/null | head -1)
if [ -z "$info" ]; then echo "FAIL: campaign saved no failure"; fail=$((fail + 1)); else
  grep -q "^signature: builtin:fault=drop_host_wait|" "$info" || { echo "FAIL: info.txt lacks the signature"; fail=$((fail + 1)); }
  grep -q "^regenerate: asyncfuzz gen --seed" "$info" || { echo "FAIL: info.txt lacks the generator seed"; fail=$((fail + 1)); }
  replay=$(sed -n 's/^replay: asyncfuzz //p' "$info")
  sig=$(sed -n 's/^signature: //p' "$info")
  # shellcheck disable=SC2086
  expect 1 "replay of a saved failure" "$af" $replay
  grep -qF "signature: $sig" "$tmp/out" || { echo "FAIL: replay gave another signature"; sed 's/^/  | /' "$tmp/out" | head; fail=$((fail + 1)); }
fi
expect 4 "campaign into an unwritable place" "$af" campaign --cases 5 --out /proc/asyncfuzz-x --quiet
expect_err "cannot create"

# a campaign stopped by SIGINT still writes its summary. Ready: its first resume state is written
# (after it took the signal over), within 20 s
"$af" campaign --seconds 60 --out "$tmp/c2" --quiet >"$tmp/out" 2>"$tmp/err" & pid=$!
for _ in $(seq 1 200); do [ -f "$tmp/c2/campaign-state.json" ] && break; sleep 0.1; done
[ -f "$tmp/c2/campaign-state.json" ] || { echo "FAIL: the campaign never wrote its state"; fail=$((fail + 1)); }
kill -INT $pid; wait $pid; rc=$?
[ $rc -eq 0 ] || { echo "FAIL: interrupted campaign exit $rc"; fail=$((fail + 1)); }
grep -q "campaign stopped" "$tmp/out" || { echo "FAIL: no summary after SIGINT"; fail=$((fail + 1)); }
[ -f "$tmp/c2/summary.json" ] || { echo "FAIL: no summary.json after SIGINT"; fail=$((fail + 1)); }

if [ "$fail" -eq 0 ]; then echo "cli: ok"; else echo "cli: $fail failure(s)"; fi
[ "$fail" -eq 0 ]
