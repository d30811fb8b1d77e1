#!/bin/sh
# steer_known: two builtin faults whose findings share an op kind (copy_wrong_stream: a copy not
# ordered after its own dependency, `missing-edge|own-dep|gpu.memcpy async`; copy_size_i32: an
# i16 or i64 copy of the wrong size), the first one marked known. A campaign on the same
# database counts the known one, steers past it (its copies with dependencies), and still finds
# the other: at least a quarter of the failures it has unsteered on the same seed, with the
# copies it needs still generated.
# usage: steer_known_test.sh ASYNCFUZZ
set -u
af=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}
. "$(dirname "$0")/lib.sh"
af_need_or_exit "the database" sqlite3
L=builtin:fault=copy_wrong_stream,copy_size_i32
"$af" campaign --lowering "$L" --cases 1500 --seed 9 --db "$tmp/db" --no-reduce --quiet \
  --out "$tmp/o1" >"$tmp/out1" 2>&1
known=$(sqlite3 "$tmp/db" "SELECT id FROM findings WHERE signature LIKE '%|own-dep|gpu.memcpy async'")
[ -n "$known" ] || fail "the first campaign did not find copy_wrong_stream: $(tail -5 "$tmp/out1")"
sqlite3 "$tmp/db" "SELECT signature FROM findings" | grep -q '|gpu.memcpy\( i[0-9]*\)\{0,1\}$' ||
  fail "the first campaign did not find copy_size_i32"
"$af" db mark "$known" --status known --db "$tmp/db" >/dev/null || fail "db mark"
# (the other fault's failures in a run: its signatures' counts in summary.json)
size_failures() {
  sed -n 's/^  {"signature": "[^"]*|gpu\.memcpy\( i[0-9]*\)\{0,1\}", "class": .*"count": \([0-9]*\),.*/\2/p' \
    "$1" | awk '{ n += $1 } END { print n + 0 }'
}
"$af" campaign --lowering "$L" --cases 1500 --seed 10 --db "$tmp/db" --no-reduce --quiet \
  --out "$tmp/o2" >"$tmp/out2" 2>&1
"$af" campaign --lowering "$L" --cases 1500 --seed 10 --no-db --no-reduce --no-avoid --quiet \
  --out "$tmp/o3" >"$tmp/out3" 2>&1
grep -q '"steered_from": \[[^]]*(known)' "$tmp/o2/summary.json" ||
  fail "the known finding did not steer: $(grep -o '"steered_from": [^]]*]' "$tmp/o2/summary.json")"
avoid=$(sed -n 's/.*"all": {.*"steering": {"avoid": \(\[[^]]*\]\).*/\1/p' "$tmp/o2/summary.json")
echo "$avoid" | grep -q 'gpu.memcpy async deps=1' || fail "steering lacks the known copy form: $avoid"
steered=$(size_failures "$tmp/o2/summary.json")
unsteered=$(size_failures "$tmp/o3/summary.json")
copies=$(sed -n 's/.*"all": {.*"copy": {"executed": \([0-9]*\).*/\1/p' "$tmp/o2/summary.json")
echo "steer_known: known $(sqlite3 "$tmp/db" "SELECT count FROM findings WHERE id = $known") hits" \
  "of the copy_wrong_stream finding; copy_size_i32 failures $steered steered (avoid $avoid)," \
  "$unsteered unsteered; cases with an ordered copy: ${copies:-?}"
[ "$unsteered" -gt 0 ] || fail "copy_size_i32 never fails unsteered on seed 10"
[ $((steered * 4)) -ge "$unsteered" ] ||
  fail "copy_size_i32 steered past: $steered failures against $unsteered unsteered"
echo "steer_known: all passed"
