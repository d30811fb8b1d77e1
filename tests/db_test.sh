#!/usr/bin/env bash
# The regression database as campaigns and users meet it: two worker processes writing one
# database; a campaign killed with SIGKILL leaves a database that opens, passes
# integrity_check and keeps every finding committed before the kill, and resumes; the db
# commands, their errors, and a report rendered by headless Chromium (its screenshot kept in
# the build directory).
# usage: db_test.sh ASYNCFUZZ SOURCE_DIR BUILD_DIR
set -u
af=$(readlink -f "$1") src=$2 build=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
q() { sqlite3 "$1" "$2"; }
. "$src/tests/lib.sh"
af_need_or_exit "the database" sqlite3

# ---- two workers, one database ----
"$af" campaign --jobs 2 --cases 3000 --seed 11 --lowering builtin:fault=drop_host_wait,copy_wrong_stream \
  --out "$tmp/j" > "$tmp/out" 2> "$tmp/err"
rc=$?
[ $rc -eq 1 ] || { bad "two workers: exit $rc"; sed 's/^/  | /' "$tmp/err" | tail -5; }
grep -qiE "locked|busy|error" "$tmp/err" && bad "two workers: errors: $(grep -iE 'locked|busy|error' "$tmp/err" | head -3)"
grep -q "by 2 workers" "$tmp/out" || bad "two workers: no summary"
grep -q '"cases": 3000' "$tmp/j/summary.json" 2>/dev/null || bad "two workers: summary.json lacks the total"
failing=$(sed -n 's/.* by 2 workers, \([0-9]*\) failing/\1/p' "$tmp/out")
[ "$(q "$tmp/j/results.db" 'PRAGMA integrity_check')" = ok ] || bad "two workers: integrity_check"
hits=$(q "$tmp/j/results.db" 'SELECT sum(hits) FROM occurrences')
counts=$(q "$tmp/j/results.db" 'SELECT sum(count) FROM findings')
[ -n "$failing" ] && [ "$hits" = "$failing" ] && [ "$counts" = "$failing" ] \
  || bad "two workers: $failing failing cases, but $hits occurrences and $counts counted"
[ "$(q "$tmp/j/results.db" 'SELECT count(*) FROM runs')" = 1 ] || bad "two workers: one run expected"
[ "$(q "$tmp/j/results.db" 'SELECT cases FROM runs')" = 3000 ] || bad "two workers: the run's case count"
# the builtin lowering runs every case: all of them reached execution, by the run and the summary
[ "$(q "$tmp/j/results.db" 'SELECT executed FROM runs')" = 3000 ] || bad "two workers: the run's executed count"
grep -q '"cases": 3000, "executed_cases": 3000,' "$tmp/j/summary.json" || bad "two workers: summary.json lacks executed_cases"
# one finding per cause, each with its detailed (victim-level) forms counted to the last hit,
# tallied repeats of both workers included
[ "$(q "$tmp/j/results.db" 'SELECT count(*) FROM findings f WHERE f.count <> (SELECT sum(hits) FROM forms WHERE finding = f.id)')" = 0 ] \
  || bad "two workers: the detailed forms' hits do not add up to the findings' counts"
[ "$(q "$tmp/j/results.db" 'SELECT max(n) FROM (SELECT count(DISTINCT detailed) AS n FROM forms GROUP BY finding)')" -ge 2 ] \
  || bad "two workers: no finding has two detailed forms (one cause, several victims)"
[ "$(q "$tmp/j/results.db" "SELECT count(*) FROM occurrences WHERE case_seed <> '*' AND detailed IS NULL")" = 0 ] \
  || bad "an occurrence recorded one by one lacks its detailed form"
# every finding has its smallest case and a reproduction rate
[ "$(q "$tmp/j/results.db" 'SELECT count(*) FROM findings WHERE smallest_case IS NULL OR repro_runs = 0')" = 0 ] \
  || bad "findings without a smallest case or a reproduction rate"

# ---- independent causes: each counted under its own finding ----
# the same seeds with a fault that drops edges, and again with one that also leaks events: every
# missing edge is counted as often as without the leak, which no longer hides it, and the leaks
# are findings of their own (--no-avoid: the same cases both times)
for f in record_early record_early,event_leaked; do
  "$af" campaign --cases 1500 --seed 5 --lowering builtin:fault=$f --no-avoid --no-reduce \
    --out "$tmp/ic-$f" --quiet > /dev/null 2>&1
done
edges() { q "$tmp/ic-$1/results.db" "SELECT coalesce(sum(count), 0) FROM findings WHERE signature LIKE '%|missing-edge|%'"; }
e1=$(edges record_early) e2=$(edges record_early,event_leaked)
leaks=$(q "$tmp/ic-record_early,event_leaked/results.db" "SELECT coalesce(sum(count), 0) FROM findings WHERE signature LIKE '%|leaked_event|%'")
[ "$e1" -gt 0 ] && [ "$e1" = "$e2" ] && [ "$leaks" -gt 0 ] \
  || bad "independent causes: $e1 missing edges alone, $e2 beside $leaks leaks"
both=$(q "$tmp/ic-record_early,event_leaked/results.db" "SELECT count(*) FROM occurrences o WHERE o.case_seed <> '*' AND EXISTS (SELECT 1 FROM occurrences p WHERE p.case_seed = o.case_seed AND p.finding <> o.finding)")
[ "$both" -gt 0 ] || bad "independent causes: no case counted under two findings"
echo "independent causes: $e1 missing edges alone and beside $leaks leaks ($both occurrences share their case)"

# ---- the summary and db list in a 100-column terminal: minimized reproducers, new first ----
# a first campaign finds two bugs; the database then forgets one (renamed), so that a second
# campaign on it finds one again ([seen]) and one anew ([new]), which it lists first
L=builtin:fault=drop_host_wait,free_unordered
"$af" campaign --cases 400 --seed 3 --lowering $L --repro 1 --reduce-seconds 2 --out "$tmp/s1" \
  > /dev/null 2>&1
q "$tmp/s1/results.db" "UPDATE findings SET signature = signature || '|renamed' WHERE signature LIKE '%dealloc-order%'"
"$af" campaign --cases 400 --seed 3 --lowering $L --repro 1 --reduce-seconds 2 --no-avoid \
  --out "$tmp/s2" --db "$tmp/s1/results.db" > "$tmp/sum" 2> /dev/null
wide=$(awk 'length($0) > 100' "$tmp/sum" | head -2)
[ -z "$wide" ] || bad "summary: lines wider than 100 columns: $wide"
grep -q "\[new\] $L|missing-edge|dealloc-order" "$tmp/sum" ||
  bad "summary: the new finding is not marked new: $(head -5 "$tmp/sum")"
grep -q "\[seen\] $L|missing-edge|host-wait" "$tmp/sum" ||
  bad "summary: the finding the database had is not marked seen"
first=$(grep -m1 -o '\[[a-z]*\]' "$tmp/sum")
[ "$first" = "[new]" ] || bad "summary: $first first, not a new finding"
repro=$(sed -n 's/^ *minimized: [0-9]* ops[^,]*, \(.*reproducer.mlir\)$/\1/p' "$tmp/sum" | head -1)
[ -n "$repro" ] && grep -q "RUN: mlir-opt" "$repro" || bad "summary: no minimized reproducer path ($repro)"
# where the time went: every bucket in summary.json, adding up to the campaign's seconds (to 10%,
# and the 10 ms that summary.json's two decimals may hide), in the
# summary's last lines, the run's row and the report
tj=$(grep -o '"time": {[^}]*}' "$tmp/s2/summary.json")
for b in generation mlir-opt mlir-runner "other tools" "sim, checker and harness" "recording failures" \
  reduction "matrix checks" database other; do
  echo "$tj" | grep -q "\"$b\": [0-9]" || bad "summary.json: no time for $b: $tj"
done
secs=$(sed -n 's/.*"seconds": \([0-9.]*\),.*/\1/p' "$tmp/s2/summary.json" | head -1)
echo "$tj" | tr ',{}' '\n\n\n' | sed -n 's/.*: \([0-9.]*\)$/\1/p' |
  awk -v s="$secs" '{ t += $1 } END { if (s <= 0 || t < 0.9 * s - 0.02 || t > 1.1 * s + 0.02) exit 1 }' ||
  bad "summary.json: the time buckets do not add up to the $secs s: $tj"
grep -q '^time: ' "$tmp/sum" || bad "summary: no line of where the time went"
q "$tmp/s1/results.db" "SELECT time FROM runs ORDER BY id DESC LIMIT 1" | grep -q '"generation": [0-9]' ||
  bad "the run's row has no time"
"$af" report --html "$tmp/tr.html" --db "$tmp/s1/results.db" > /dev/null
grep -q '<th>time went to</th>' "$tmp/tr.html" && grep -q '<span title="generation [0-9.]* s' "$tmp/tr.html" ||
  bad "the report does not say where a run's time went"
"$af" db list --db "$tmp/s1/results.db" > "$tmp/list"
wide=$(awk 'length($0) > 100' "$tmp/list" | head -2)
[ -z "$wide" ] || bad "db list: lines wider than 100 columns: $wide"
ops=$(q "$tmp/s1/results.db" "SELECT c.ops FROM findings f JOIN cases c ON c.id = f.minimized_case WHERE f.signature = '$L|missing-edge|dealloc-order|gpu.dealloc async'")
grep -qE "^ +[0-9]+ +new +[a-z_]+ +[0-9]+ +$ops " "$tmp/list" || bad "db list: the minimized ops ($ops) are not shown: $(head -3 "$tmp/list")"

# ---- the db commands ----
db=$tmp/j/results.db
"$af" db list --db "$db" > "$tmp/out" || bad "db list"
grep -q "finding(s)" "$tmp/out" || bad "db list: no total"
id=$(q "$db" "SELECT id FROM findings ORDER BY count DESC, id LIMIT 1")
"$af" db show "$id" --db "$db" > "$tmp/out" || bad "db show"
for want in "signature: " "detailed forms (hits, form):" "reproduction: " "replay: asyncfuzz gen --seed" "seen with: lowering version asyncfuzz-builtin-1, backend sim" "smallest case (" "trace excerpt:" "minimized case (" "reproducer (.mlir):" "// RUN: mlir-opt %s"; do
  grep -qF "$want" "$tmp/out" || bad "db show lacks '$want'"
done
# the replay command of a finding reproduces it
(cd "$tmp" && PATH="$(dirname "$af"):$PATH" bash -c "$(sed -n 's/^replay: //p' "$tmp/out")" > "$tmp/rep" 2>&1)
grep -qF "$(sed -n 's/^signature: //p' "$tmp/out")" "$tmp/rep" || bad "db show's replay does not reproduce the signature"
"$af" db mark "$id" --status known --db "$db" > /dev/null || bad "db mark"
[ "$(q "$db" "SELECT status FROM findings WHERE id = $id")" = known ] || bad "db mark did not stick"
"$af" db list --status known --db "$db" > "$tmp/out"
grep -q "^1 finding(s)" "$tmp/out" || bad "db list --status known"
"$af" db stats --db "$db" > "$tmp/out" && grep -q "status known" "$tmp/out" || bad "db stats"
grep -q "3000 cases; 3000 of 3000 reached execution (100.0%)" "$tmp/out" || bad "db stats: the share that reached execution: $(head -2 "$tmp/out")"
"$af" db export --format junit --db "$db" > "$tmp/junit.xml" || bad "db export junit"
n=$(q "$db" "SELECT count(*) FROM findings WHERE status = 'new'")
grep -q "failures=\"$n\"" "$tmp/junit.xml" || bad "junit: $n new findings should be $n failures"
grep -q "detailed forms (hits, form):" "$tmp/junit.xml" || bad "junit: a new finding's failure lacks its detailed forms"
# JSON checked with sqlite3's own JSON functions (no other tool needed): valid, one element per
# finding, and every signature as stored
"$af" db export --format json --db "$db" > "$tmp/export.json" || bad "db export json"
[ "$(q "$db" "SELECT json_valid(readfile('$tmp/export.json'))")" = 1 ] || bad "db export json is not JSON"
[ "$(q "$db" "SELECT json_array_length(readfile('$tmp/export.json')) = (SELECT count(*) FROM findings)
  AND (SELECT count(*) FROM json_each(readfile('$tmp/export.json')) AS e JOIN findings f
       ON f.id = json_extract(e.value, '\$.id') AND f.signature = json_extract(e.value, '\$.signature')
       AND f.status = json_extract(e.value, '\$.status')) = (SELECT count(*) FROM findings)" 2>&1)" = 1 ] \
  || bad "db export json does not list every finding with its id, status and signature"
[ "$(q "$db" "SELECT count(*) FROM json_each(readfile('$tmp/export.json')) AS e JOIN findings f
       ON f.id = json_extract(e.value, '\$.id') WHERE f.count = (SELECT sum(json_extract(x.value, '\$.hits'))
       FROM json_each(json_extract(e.value, '\$.detailed_forms')) AS x)" 2>&1)" = "$(q "$db" 'SELECT count(*) FROM findings')" ] \
  || bad "db export json: a finding's detailed forms do not add up to its count"
# a known finding is counted, not reported again
"$af" campaign --cases 300 --seed 11 --lowering builtin:fault=drop_host_wait,copy_wrong_stream --out "$tmp/j" --quiet > "$tmp/out" 2>&1
rc=$?
[ $rc -eq 1 ] || bad "a campaign with known findings: exit $rc"
grep -q "(known or wontfix in the database: counted only)" "$tmp/out" || bad "the known finding is not marked known in the summary"
tr "\n" " " < "$tmp/out" | tr -s " " | grep -qE "[1-9][0-9]* occurrence\(s\) of known or wontfix" || bad "known findings are not counted: $(tail -1 "$tmp/out")"
[ "$(q "$db" 'SELECT count(*) FROM runs')" = 2 ] || bad "the second campaign is not a second run"

# ---- steering away from known bugs ----
# findings that name every op shape with two or more dependencies, marked known (a lowering's
# verdicts, written by hand): every case is built without them where the generator has another
# form (--explore 0: no case is made with nothing avoided); where it has none (a for's body takes
# no host wait, and the joins are avoided too) the fault still shows, so the exit is not checked
s1=$tmp/steer.db
"$af" campaign --cases 300 --seed 5 --lowering builtin:fault=drop_extra_deps --no-reduce --db "$s1" \
  --out "$tmp/s0" --quiet > "$tmp/out" 2>&1
[ $? -eq 1 ] || bad "steering: the fault campaign found nothing to begin with"
for s in "gpu.launch_func async deps=2+" "gpu.memcpy async deps=2+" "gpu.memset async deps=2+" \
  "gpu.wait async deps=2+" "gpu.wait deps=2+" "gpu.alloc async deps=2+" "gpu.dealloc async deps=2+"; do
  q "$s1" "INSERT INTO findings(signature, class, lowering, status, count) VALUES('builtin:fault=drop_extra_deps|lowering_rejected|$s|written by the test', 'lowering_rejected', 'builtin:fault=drop_extra_deps', 'known', 0)"
done
# one of another lowering, and one that names no op shape: both ignored
q "$s1" "INSERT INTO findings(signature, class, lowering, status, count) VALUES('mlir-opt|lowering_rejected|gpu.memcpy async deps=1|x', 'lowering_rejected', 'mlir-opt', 'known', 0), ('builtin:fault=drop_extra_deps|lowering_unconverted|unrealized_conversion_cast(i32 to index)', 'lowering_unconverted', 'builtin:fault=drop_extra_deps', 'known', 0)"
"$af" campaign --cases 300 --seed 5 --lowering builtin:fault=drop_extra_deps --no-reduce --db "$s1" \
  --explore 0 --out "$tmp/s1" > "$tmp/out" 2> "$tmp/err"
grep -q "steering away from: gpu.launch_func async deps=2+ (known)" "$tmp/err" || bad "steering: the shapes avoided are not said"
grep -q "memcpy async deps=1" "$tmp/err" && bad "steering: a finding of another lowering was followed"
grep -qE '"steered_cases": 300,' "$tmp/s1/summary.json" || bad "steering: summary.json does not count 300 steered cases"
[ "$(grep -o '(known)' "$tmp/s1/summary.json" | wc -l)" -eq 7 ] || bad "steering: summary.json does not list the 7 shapes"
grep -qE "steering: 300 of 300 case\(s\) built without what [0-9]+ cause\(s\) known or found name" "$tmp/out" || bad "steering: no summary line: $(grep steering "$tmp/out")"
"$af" campaign --cases 300 --seed 5 --lowering builtin:fault=drop_extra_deps --no-reduce --db "$s1" \
  --out "$tmp/s2" --no-avoid --quiet > "$tmp/out" 2>&1
[ $? -eq 1 ] || bad "steering: --no-avoid still avoided"
# with launches alone avoided, failures remain; each saved case, steered or not, records the
# seed, knobs and avoid set that made it: its regenerate command gives it back byte for byte
s3=$tmp/steer3.db
"$af" campaign --cases 1 --seed 5 --no-reduce --db "$s3" --out "$tmp/s3x" --quiet > /dev/null 2>&1
q "$s3" "INSERT INTO findings(signature, class, lowering, status, count) VALUES('builtin:fault=drop_extra_deps|lowering_rejected|gpu.launch_func async deps=2+|by the test', 'lowering_rejected', 'builtin:fault=drop_extra_deps', 'known', 0)"
"$af" campaign --cases 300 --seed 5 --lowering builtin:fault=drop_extra_deps --no-reduce --db "$s3" \
  --out "$tmp/s3" --quiet > "$tmp/out" 2>&1
grep -qE '"steered_cases": [1-9]' "$tmp/s3/summary.json" || bad "steering: no launch avoided"
nregen=0
for d in "$tmp"/s3/failures/*/; do
  regen=$(sed -n 's/^regenerate: //p' "$d/info.txt")
  (cd "$tmp" && PATH="$(dirname "$af"):$PATH" bash -c "$regen -o $d/regen.json" > /dev/null 2>&1)
  cmp -s "$d/regen.json" "$d/smallest.json" || bad "steering: $regen does not give $(basename "$d")'s smallest case"
  grep -q '"kernel"' "$d/smallest.json" && grep -qE '"op": "launch"[^}]*"deps": \["t[0-9]+", "t' "$d/smallest.json" \
    && bad "steering: a saved case has a launch with two dependencies"
  nregen=$((nregen + 1))
done
[ "$nregen" -gt 0 ] || bad "steering: no failure to regenerate"
# exploration: a known finding whose cause steering takes out of every steered case (an explicit
# stream's ordering: no case gets one) is still counted in the cases made with nothing avoided
# (--explore, 2% by default); with --explore 0 its count stays
s4=$tmp/steer4.db
"$af" campaign --cases 2000 --seed 5 --lowering builtin:fault=stream_ignored --no-reduce --db "$s4" \
  --out "$tmp/s4a" --quiet > /dev/null 2>&1
q "$s4" "UPDATE findings SET status = 'known'"
cp "$s4" "$tmp/steer4-copy.db"
before=$(q "$s4" 'SELECT sum(count) FROM findings')
"$af" campaign --cases 3000 --seed 9000 --explore 0 --lowering builtin:fault=stream_ignored --no-reduce \
  --db "$tmp/steer4-copy.db" --out "$tmp/s4c" --quiet > /dev/null 2>&1
none=$(q "$tmp/steer4-copy.db" 'SELECT sum(count) FROM findings')
"$af" campaign --cases 3000 --seed 9000 --lowering builtin:fault=stream_ignored --no-reduce --db "$s4" \
  --out "$tmp/s4b" --quiet > /dev/null 2>&1
after=$(q "$s4" 'SELECT sum(count) FROM findings')
steered=$(sed -n 's/.*"steered_cases": \([0-9]*\).*/\1/p' "$tmp/s4b/summary.json")
[ "${steered:-0}" -gt 2850 ] && [ "${steered:-0}" -lt 3000 ] && [ "$none" = "$before" ] && [ "$after" -gt "$before" ] \
  || bad "exploration: $steered of 3000 cases steered; known counts $before -> $after ($none without exploration)"
echo "exploration: $steered of 3000 cases steered; the known finding's count went from $before to $after ($none with --explore 0)"

# ---- errors ----
printf 'hello, not a database at all; just text that is long enough\n' > "$tmp/text.db"
"$af" db list --db "$tmp/text.db" > "$tmp/out" 2>&1
[ $? -eq 3 ] && grep -q "is not an asyncfuzz database" "$tmp/out" || bad "not a database: $(cat "$tmp/out")"
"$af" db list --db "$tmp/none.db" > "$tmp/out" 2>&1
[ $? -eq 4 ] && grep -q "cannot open" "$tmp/out" || bad "missing database: $(cat "$tmp/out")"
[ -e "$tmp/none.db" ] && bad "db list created a database"
"$af" db show 99999 --db "$db" > "$tmp/out" 2>&1
[ $? -eq 2 ] && grep -q "no finding 99999" "$tmp/out" || bad "db show of a missing finding"
"$af" db merge "$tmp/text.db" --db "$db" > "$tmp/out" 2>&1
[ $? -eq 3 ] || bad "merging a non-database: $(cat "$tmp/out")"
"$af" campaign --cases 5 --db "$tmp/text.db" --out "$tmp/x" > "$tmp/out" 2>&1
[ $? -eq 3 ] && grep -q "is not an asyncfuzz database" "$tmp/out" || bad "campaign into a non-database: $(cat "$tmp/out")"

# ---- merge: twice is once ----
"$af" campaign --cases 200 --seed 500 --lowering builtin:fault=yield_stream --out "$tmp/m" --quiet > /dev/null 2>&1
"$af" db merge "$tmp/m/results.db" --db "$tmp/central.db" > /dev/null || bad "db merge"
"$af" db merge "$db" --db "$tmp/central.db" > /dev/null || bad "db merge 2"
q "$tmp/central.db" .dump > "$tmp/d1"
"$af" db merge "$tmp/m/results.db" --db "$tmp/central.db" > /dev/null
"$af" db merge "$db" --db "$tmp/central.db" > /dev/null
q "$tmp/central.db" .dump > "$tmp/d2"
cmp -s "$tmp/d1" "$tmp/d2" || bad "merging twice changed the database"
a=$(q "$db" "SELECT count(*) FROM findings"); b=$(q "$tmp/m/results.db" "SELECT count(*) FROM findings")
c=$(q "$tmp/central.db" "SELECT count(*) FROM findings")
[ "$c" -eq $((a + b)) ] || bad "central has $c findings, expected $a + $b"

# ---- SIGKILL in the middle of a campaign ----
"$af" campaign --seconds 60 --seed 77 --lowering builtin:fault=copy_wrong_stream --out "$tmp/k" --quiet > /dev/null 2>&1 &
pid=$!
for _ in $(seq 1 100); do
  [ -f "$tmp/k/campaign-state.json" ] && [ "$(q "$tmp/k/results.db" 'SELECT count(*) FROM findings' 2>/dev/null || echo 0)" -gt 3 ] && break
  sleep 0.1
done
sleep 0.5
before=$(q "$tmp/k/results.db" "SELECT group_concat(signature, char(10)) FROM (SELECT signature FROM findings ORDER BY signature)")
kill -9 $pid
wait $pid 2> /dev/null
[ -n "$before" ] || bad "the killed campaign had committed nothing to compare"
[ "$(q "$tmp/k/results.db" 'PRAGMA integrity_check')" = ok ] || bad "after SIGKILL: integrity_check"
after=$(q "$tmp/k/results.db" "SELECT group_concat(signature, char(10)) FROM (SELECT signature FROM findings ORDER BY signature)")
while IFS= read -r sig; do
  grep -qxF -- "$sig" <<< "$after" || bad "after SIGKILL: lost finding $sig"
done <<< "$before"
"$af" db list --db "$tmp/k/results.db" > /dev/null || bad "after SIGKILL: db list"
# --cases counts the cases of every run the campaign resumes: 100 more than the killed one did
done=$(sed -n 's/.*"cases": \([0-9]*\).*/\1/p' "$tmp/k/campaign-state.json")
"$af" campaign --cases $((${done:-0} + 100)) --resume --lowering builtin:fault=copy_wrong_stream \
  --out "$tmp/k" > "$tmp/out" 2> "$tmp/err"
[ $? -eq 1 ] && grep -q "resumed" "$tmp/err" && grep -q "^campaign done: 100 cases" "$tmp/out" ||
  bad "resume after SIGKILL: $(tail -2 "$tmp/err") $(head -1 "$tmp/out")"

# ---- the report: escaped, and rendered by headless Chromium ----
# a finding whose text is markup and SQL (inserted as a lowering's message could carry it)
q "$db" "INSERT INTO findings(signature, class, lowering, detail, first_seen, last_seen, count)
  VALUES('evil|race|<img src=x onerror=alert(1)>''); DROP TABLE runs; --', 'race', 'builtin',
  '<script>document.title=\"pwned\"</script> & <b>', 1.0, 2.0, 1)"
"$af" db list --db "$db" | grep -qF "evil|race|<img src=x onerror=alert(1)>'); DROP TABLE runs; --" \
  || bad "db list does not show the markup verbatim"
# ... and exported as the same string in JSON
"$af" db export --format json --db "$db" > "$tmp/export.json" || bad "db export json (markup)"
[ "$(q "$db" "SELECT count(*) FROM json_each(readfile('$tmp/export.json')) AS e JOIN findings f
  ON f.signature = json_extract(e.value, '\$.signature') AND f.detail = json_extract(e.value, '\$.detail')
  WHERE f.signature LIKE 'evil|%'" 2>&1)" = 1 ] || bad "db export json: the markup finding does not round-trip"
"$af" report --html "$tmp/report.html" --db "$db" > /dev/null || bad "report"
# (the findings are the page's data: JSON in which '<' and '>' are escaped)
grep -qF "\\u003cimg src=x onerror=alert(1)\\u003e'); DROP TABLE runs; --" "$tmp/report.html" || bad "report: markup not escaped"
grep -qF '<img' "$tmp/report.html" && bad "report: raw markup in the page"
grep -q '<table id="findings">' "$tmp/report.html" || bad "report: no findings table"
[ "$(grep -c '<svg' "$tmp/report.html")" -ge 3 ] || bad "report: fewer than 3 charts"
# each picture's top label is a round number (1, 2, 2.5 or 5 times a power of ten), short enough
# for its margin, not the peak's digits (a rate of 2.910448 once read 910448, clipped)
for chart in rate discovery; do
  top=$(sed -n "s/.*<svg id=\"$chart\"[^>]*><rect [^>]*\/><text [^>]*>\([^<]*\)<\/text>.*/\1/p" "$tmp/report.html")
  echo "$top" | grep -qE '^((1|2|5)0*|2\.5|250*)$' || bad "report: the $chart picture's top label: ${top:-none}"
done
chromium=$(af_tool chromium || af_tool chromium-browser || true)
if [ -n "$chromium" ] || af_need "the report rendered by chromium" chromium; then
  cp "$tmp/report.html" "$build/report.html"
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --dump-dom "file://$build/report.html" > "$tmp/dom.html" 2> "$tmp/chromium.err"
  grep -q '<table id="findings">' "$tmp/dom.html" || bad "chromium: the page shows no findings table"
  # (the page's own scripts, its data and its code, are its only script elements)
  grep -q '<img' "$tmp/dom.html" && bad "chromium: markup from a finding became an element"
  [ "$(grep -o '<script' "$tmp/dom.html" | wc -l)" -eq 2 ] || bad "chromium: a script from a finding became an element"
  grep -qF '&lt;img src=x onerror=alert(1)&gt;' "$tmp/dom.html" || bad "chromium: the markup is not shown as text"
  rows=$(grep -o '<tr class="f"' "$tmp/dom.html" | wc -l)
  [ "$rows" -eq "$(q "$db" 'SELECT count(*) FROM findings')" ] || bad "chromium: $rows rows shown"
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --window-size=1280,1600 --screenshot="$build/report.png" "file://$build/report.html" > /dev/null 2>&1
  [ -s "$build/report.png" ] || bad "chromium: no screenshot"
fi

if [ "$fail" -eq 0 ]; then echo "db: ok"; else echo "db: $fail failure(s)"; fi
[ "$fail" -eq 0 ]
