#!/bin/sh
# fault_signatures: one finding per injected bug (docs/signatures.md), and every independent cause
# of a run counted (the last check below). Each builtin fault over
# CASES generated cases (seed 5, no steering, no reduction, no database):
#   - it shows (some case fails);
#   - its main signature takes at least 90% of its failures, or its main two do where they are
#     of two classes (a fault that shows as a runtime error in some cases and as a wrong value
#     in others, as copy_size_i32 overruns a narrow element's buffer and copies half of a wide
#     one: one finding per symptom, which no name can merge);
#   - it gives at most 3 signatures;
#   - no over-merging: no signature (less its fault prefix) takes more than 5% of the
#     failures of two different faults.
# usage: fault_signatures_test.sh ASYNCFUZZ [CASES=3000]
set -u
af=$1
cases=${2:-3000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}
faults=$("$af" lower --list-faults | awk 'NR > 1 && $1 != "" { print $1 }')
[ "$(echo "$faults" | wc -w)" -ge 18 ] || fail "fault list: $faults"
: >"$tmp/all"
for f in $faults; do
  "$af" campaign --lowering "builtin:fault=$f" --cases "$cases" --seed 5 --no-db --no-reduce \
    --no-avoid --quiet --out "$tmp/o" >"$tmp/out" 2>&1
  # (each signature and its count, from summary.json: a line per signature)
  n=$(sed -n "s/^  {\"signature\": \"builtin:fault=$f|\(.*\)\", \"class\": .*\"count\": \([0-9]*\),.*/$f \2 \1/p" \
    "$tmp/o/summary.json" | tee -a "$tmp/all" | wc -l)
  [ "$n" -gt 0 ] || fail "$f: no failure in $cases cases: $(tail -5 "$tmp/out")"
  rm -rf "$tmp/o"
done
# per fault: signatures, failures, the main signature's share
awk '
  { f = $1; c = $2; $1 = $2 = ""; sub(/^  /, ""); sigs[f]++; tot[f] += c
    cls = $0; sub(/\|.*/, "", cls)
    if (c > top[f]) { sec[f] = top[f]; seccls[f] = topcls[f]; top[f] = c; topcls[f] = cls }
    else if (c > sec[f]) { sec[f] = c; seccls[f] = cls } }
  END {
    bad = 0
    for (f in sigs) {
      share = 100 * top[f] / tot[f]
      two = sec[f] > 0 && seccls[f] != topcls[f] ? 100 * (top[f] + sec[f]) / tot[f] : 0
      printf "  %-22s %3d signatures (at most 3), main %5.1f%% of %d failures", f, sigs[f], share, tot[f]
      if (two > 0) printf " (with the main one of another class, %s: %.1f%%)", seccls[f], two
      printf "\n"
      if (share < 90 && two < 90) { printf "FAIL: %s: main signature %.1f%% < 90%%\n", f, share; bad = 1 }
      if (sigs[f] > 3) { printf "FAIL: %s: %d signatures > 3\n", f, sigs[f]; bad = 1 }
    }
    exit bad
  }' "$tmp/all" || fail "signatures per fault (above)"
# over-merging
awk '{ f = $1; c = $2; $1 = $2 = ""; sub(/^  /, ""); t[f] += c; k[$0, f] = c; s[$0] = 1; fs[f] = 1 }
  END { bad = 0
        for (x in s) { m = ""; n = 0
          for (f in fs) if ((x, f) in k && k[x, f] > 0.05 * t[f]) { m = m " " f; n++ }
          if (n >= 2) { print "FAIL: " x " takes over 5% of the failures of" m; bad = 1 } }
        exit bad }' "$tmp/all" || fail "a signature shared by two faults (above)"
# every independent cause of a run counts (oracle.c, judge_also): beside a refused handle
# (yield_stream) the dropped host wait is named within 10% as often as alone, and two faults
# together give no signature that neither gives alone
sigs() { # lowering -> "count signature" lines, the fault prefix left out
  "$af" campaign --lowering "$1" --cases "$cases" --seed 5 --no-db --no-reduce --no-avoid --quiet \
    --out "$tmp/p" >/dev/null 2>&1
  sed -n 's/^  {"signature": "builtin:fault=[a-z_0-9,]*|\(.*\)", "class": .*"count": \([0-9]*\),.*/\2 \1/p' "$tmp/p/summary.json"
  rm -rf "$tmp/p"
}
sigs builtin:fault=drop_host_wait >"$tmp/a"
sigs builtin:fault=yield_stream >"$tmp/b"
sigs builtin:fault=drop_host_wait,yield_stream >"$tmp/ab"
alone=$(sed -n 's/^\([0-9]*\) missing-edge|host-wait|gpu.wait$/\1/p' "$tmp/a")
both=$(sed -n 's/^\([0-9]*\) missing-edge|host-wait|gpu.wait$/\1/p' "$tmp/ab")
[ -n "$alone" ] && [ -n "$both" ] && [ $((both * 10)) -ge $((alone * 9)) ] && [ $((both * 10)) -le $((alone * 11)) ] ||
  fail "drop_host_wait beside yield_stream: named ${both:-0} times, alone ${alone:-0}"
cut -d' ' -f2- "$tmp/a" "$tmp/b" | sort -u >"$tmp/union"
extra=$(cut -d' ' -f2- "$tmp/ab" | sort -u | comm -23 - "$tmp/union")
[ -z "$extra" ] || fail "drop_host_wait,yield_stream gives what neither gives alone: $extra"
echo "fault_signatures: independent causes: drop_host_wait named $both times beside yield_stream, $alone alone"
# a finding says which forms of types and launches its minimized case holds: dim_stride_dropped's
# needs a copy or set in rows of a ranked buffer (info.txt, the listing, summary.json)
"$af" campaign --lowering builtin:fault=dim_stride_dropped --cases 200 --seed 1 --no-db \
  --out "$tmp/h" >"$tmp/h.log" 2>&1
[ $? -eq 1 ] || fail "dim_stride_dropped campaign: $(tail -5 "$tmp/h.log")"
grep -q "^holds: .*ranked, rows (forms of types and launches its minimized case holds" "$tmp"/h/failures/*/info.txt ||
  fail "info.txt holds: $(cat "$tmp"/h/failures/*/info.txt)"
grep -q "^           holds: .*ranked, rows" "$tmp/h.log" || fail "listing holds: $(cat "$tmp/h.log")"
grep -q '"holds": \[[^]]*"ranked", "rows"' "$tmp/h/summary.json" || fail "summary.json holds: $(cat "$tmp/h/summary.json")"
echo "fault_signatures: a finding's forms: $(sed -n 's/^holds: \([^(]*\) (.*/\1/p' "$tmp"/h/failures/*/info.txt | head -1)"
echo "fault_signatures: all passed ($(echo "$faults" | wc -w) faults, $cases cases each)"
