#!/bin/sh
# steering_power: the excuse table of bench/steering_power.sh. A campaign on yield_stream finds
# its misused handle (via:yield) and steers 'yield': summary.json says which finding steered
# the entry and saves the case that made it steer (steered-all.json). Under that steering the
# fault is missed, excused by its own trigger, with that case failing with the finding's
# signature; another fault (copy_size_i32) is still caught. A steering that takes a fault's
# cases with something other than its trigger (copies with a dependency, which a for loop's body
# needs, for loop_carried_initial) is reported NOT EXCUSED, with the entry that does it.
# usage: steering_power_test.sh ASYNCFUZZ SOURCE_DIR
set -u
af=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}
"$af" campaign --lowering builtin:fault=yield_stream --cases 400 --seed 9 --no-reduce --no-db \
  --quiet --out "$tmp/o" >"$tmp/out" 2>&1
sum=$tmp/o/summary.json
by=$(sed -n 's/.*"all": {.*"by": \(\[[^]]*\]\]\).*/\1/p' "$sum")
echo "$by" | grep -q '^\[\["yield", "builtin:fault=yield_stream|misused-handle|stream|wrong-kind|via:yield", "failures/[0-9a-f]*/steered-all.json"\]\]$' ||
  fail "summary.json does not say what steered 'yield': $by"
trig=$(echo "$by" | sed 's/.*"\(failures[^"]*\)".*/\1/')
[ -f "$tmp/o/$trig" ] || fail "no trigger case at $trig"
STEERING_POWER_FAULTS="yield_stream copy_size_i32" bash "$src/bench/steering_power.sh" "$af" \
  "$sum" 300 9 >"$tmp/p1" 2>&1 || fail "steering_power.sh failed: $(tail -3 "$tmp/p1")"
cat "$tmp/p1"
grep -q '^yield_stream  *[1-9][0-9]*  *0 MISSED$' "$tmp/p1" || fail "yield_stream not missed under 'yield'"
grep -q '^copy_size_i32  *\([1-9][0-9]*\)  *[0-9]* caught$' "$tmp/p1" || fail "copy_size_i32 not caught"
grep -q "^  yield_stream (S1): excused, its own trigger: without 'yield' [1-9]" "$tmp/p1" ||
  fail "yield_stream not excused by its own trigger"
grep -q "on all: builtin:fault=yield_stream|misused-handle|stream|wrong-kind|via:yield; its trigger failures/.*/steered-all.json fails there with its signature" "$tmp/p1" ||
  fail "the excusing finding's trigger case was not shown failing with its signature"
grep -q 'missed (fault, steering) pairs: 1 excused by their own trigger, 0 not excused' "$tmp/p1" ||
  fail "the excuse count"
# copies with one dependency avoided instead: loop_carried_initial's cases go (no for loop can
# hold its body), and its trigger (scf.for) is not why
sed "s/\"avoid\": \[\"yield\"\], \"gen_args\": \"--avoid 'yield'\"/\"avoid\": [\"gpu.memcpy async deps=1\"], \"gen_args\": \"--avoid 'gpu.memcpy async deps=1'\"/" \
  "$sum" >"$tmp/o/copies.json"
grep -q "gen_args\": \"--avoid 'gpu.memcpy async deps=1'\"" "$tmp/o/copies.json" || fail "the edited summary"
STEERING_POWER_FAULTS="loop_carried_initial" bash "$src/bench/steering_power.sh" "$af" \
  "$tmp/o/copies.json" 300 9 >"$tmp/p2" 2>&1 || fail "steering_power.sh failed: $(tail -3 "$tmp/p2")"
cat "$tmp/p2"
grep -q '^  loop_carried_initial (S1): NOT EXCUSED$' "$tmp/p2" ||
  fail "loop_carried_initial excused without its trigger"
grep -q "^    collateral: caught without 'gpu.memcpy async deps=1' ([1-9]" "$tmp/p2" ||
  fail "the entry that takes loop_carried_initial's cases was not named"
echo "steering_power: all passed"
