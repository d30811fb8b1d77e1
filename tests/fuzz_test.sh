#!/bin/sh
# fuzz: guided generation end to end (asyncfuzz fuzz, libFuzzer linked in). The correct builtin
# lowering gives no finding; its corpus is kept, every entry makes a valid case, and a plain
# campaign replaying it (--seeds) reaches the features the guided run reached; a fault is found,
# recorded and stored as in a campaign; a plain campaign counts features with --features.
# Through mlir-opt (MLIR_OPT given), feedback is deferred over batches: each input of a batch is
# credited with its own features when libFuzzer reloads it from the corpus, where it is written
# under the name libFuzzer gives it (its SHA-1).
# Skipped (77) where asyncfuzz was built without libFuzzer.
# usage: fuzz_test.sh ASYNCFUZZ [MLIR_OPT]
set -u
af=$1
opt=${2:-}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail=0
bad() {
  echo "FAIL: $*"
  fail=$((fail + 1))
}
# a number from summary.json: key "K": N (the first)
num() { grep -o "\"$2\": [0-9]*" "$1" | head -1 | sed 's/.*: //'; }

. "$(dirname "$0")/lib.sh"
"$af" fuzz --help | grep -q "usage: asyncfuzz fuzz" || bad "asyncfuzz fuzz --help"
if ! "$af" fuzz --cases 1 --out "$t/probe" --no-db --quiet >/dev/null 2>"$t/probe.err"; then
  if grep -q "without libFuzzer" "$t/probe.err"; then
    # (clang and libclang-rt-14-dev, which the bootstrap installs, link it in)
    af_skip "guided generation" "$(cat "$t/probe.err")"
    exit 77
  fi
  bad "one guided case: $(cat "$t/probe.err")"
fi

# the correct lowering: no finding, a corpus, features
"$af" fuzz --cases 2000 --seed 7 --structure 30 --out "$t/ok" --quiet >"$t/ok.log" 2>&1
rc=$?
[ $rc = 0 ] || bad "correct lowering under fuzz: exit $rc (want 0): $(grep -v '^#' "$t/ok.log" | tail -5)"
[ "$(num "$t/ok/summary.json" failures)" = 0 ] || bad "correct lowering: failures in summary.json"
[ "$(num "$t/ok/summary.json" cases)" = 2000 ] || bad "correct lowering: not 2000 cases"
feat=$(num "$t/ok/summary.json" total)
[ "${feat:-0}" -gt 100 ] || bad "guided run reached ${feat:-no} features"
n=$(ls "$t/ok/corpus" | wc -l)
[ "$n" -gt 20 ] || bad "corpus has $n entries"
json=0
for f in "$t/ok/corpus"/*; do
  if [ "$(head -c 1 "$f" | tr -d '\000')" = "{" ]; then
    json=$((json + 1))
    "$af" validate "$f" >/dev/null 2>&1 || bad "corpus entry $(basename "$f") is not a valid case"
  fi
done
[ "$json" -gt 0 ] || bad "no structure-aware (JSON) entry in the corpus"
grep -q "structure-aware mutation" "$t/ok.log" || bad "no mutation report"
# a JSON input mutated or crossed over again is not read again (the replay below checks the cases
# kept are the inputs' own)
reused=$(sed -n 's/.* JSON input(s) read, \([0-9]*\) found read before.*/\1/p' "$t/ok.log")
[ "${reused:-0}" -gt 0 ] || bad "no JSON input found read before: $(grep "^guided:" "$t/ok.log")"
# fresh draws (--fresh): none by default; with --fresh 100, every
# mutation is one (no structure-aware move, though --structure asks for half), and each makes a
# case as any byte input does (the run's cases all checked)
grep -q "fresh draw" "$t/ok.log" && bad "fresh draws by default: $(grep "^guided:" "$t/ok.log")"
"$af" fuzz --cases 300 --seed 7 --fresh 100 --structure 50 --out "$t/fr" --no-db --quiet >"$t/fr.log" 2>&1 ||
  bad "fuzz --fresh 100: $(grep -v '^#' "$t/fr.log" | tail -3)"
drawn=$(sed -n 's/.*; \([0-9]*\) fresh draw(s).*/\1/p' "$t/fr.log")
[ "${drawn:-0}" -gt 50 ] || bad "fuzz --fresh 100: ${drawn:-no} fresh draws in 300 cases: $(grep "^guided:" "$t/fr.log")"
[ "$(num "$t/fr/summary.json" cases)" = 300 ] || bad "fuzz --fresh 100: not 300 cases"
grep -q "structure-aware mutation(s): " "$t/fr.log" && bad "fuzz --fresh 100: a structure-aware mutation"

# the corpus replayed by a plain campaign: every entry a case, the same features (libFuzzer
# replaces an entry by a smaller one with the same features it counts: within 1%). libFuzzer
# runs the empty input first and never writes it to the corpus: it is replayed too (an empty
# file: the generator's case of no bytes), else its case's features are missing
: >"$t/ok/corpus/empty-input"
n=$((n + 1))
"$af" campaign --features --seeds "$t/ok/corpus" --cases "$n" --seed 7 --out "$t/replay" \
  --quiet >"$t/replay.log" 2>&1 || bad "replaying the corpus: $(tail -3 "$t/replay.log")"
[ "$(num "$t/replay/summary.json" cases)" = "$n" ] || bad "replay ran not $n cases"
got=$(num "$t/replay/summary.json" total)
[ "${got:-0}" -ge $((feat * 99 / 100)) ] || bad "replay reached ${got:-no} features, the run $feat"
[ "${got:-0}" -le "$feat" ] || bad "replay reached ${got:-no} features, more than the run's $feat"

# the corpus merged into an empty one (libFuzzer -merge=1, its child processes asyncfuzz
# --libfuzzer-child): fewer entries, the same features
mkdir -p "$t/merged" "$t/tmp"
TMPDIR=$t/tmp "$af" fuzz --merge --corpus "$t/merged" --seeds "$t/ok/corpus" --structure 30 --out "$t/m" \
  >"$t/merge.log" 2>&1 || bad "merge: $(tail -3 "$t/merge.log")"
m=$(ls "$t/merged" | wc -l)
[ "$m" -gt 0 ] && [ "$m" -le "$n" ] || bad "merge kept $m of $n entries"
grep -q "MERGE-OUTER: $m new files" "$t/merge.log" || bad "merge: libFuzzer's count is not $m"
"$af" campaign --features --seeds "$t/merged" --cases "$m" --seed 7 --out "$t/replay2" \
  --quiet >/dev/null 2>&1 || bad "replaying the merged corpus"
got2=$(num "$t/replay2/summary.json" total)
[ "${got2:-0}" -ge $((feat * 98 / 100)) ] || bad "merged corpus reached ${got2:-no} features, the run $feat"
[ -z "$(ls "$t/tmp")" ] || bad "merge left its children's directories: $(ls "$t/tmp")"

# a fault: found and recorded as by a campaign
"$af" fuzz --cases 1500 --seed 7 --lowering builtin:fault=drop_host_wait --out "$t/f" \
  --reduce-seconds 1 --repro 2 --quiet >"$t/f.log" 2>&1
rc=$?
[ $rc = 1 ] || bad "fault under fuzz: exit $rc (want 1)"
grep -q '"signature": "builtin:fault=drop_host_wait|' "$t/f/summary.json" ||
  bad "fault: no signature of drop_host_wait in summary.json"
"$af" db list --db "$t/f/results.db" 2>/dev/null | grep -q "drop_host_wait" ||
  bad "fault: not in the database"
ls "$t/f/failures"/*/first.json >/dev/null 2>&1 || bad "fault: no failures/*/first.json"
grep -q "^regenerate: a guided case" "$t"/f/failures/*/info.txt || bad "fault: info.txt offers a seed that does not make the case"
replay=$(sed -n 's/^replay: asyncfuzz //p' "$t"/f/failures/*/info.txt | head -1)
"$af" $replay >/dev/null 2>&1
[ $? = 1 ] || bad "fault: the replay command does not fail: $replay"

# a plain campaign counts the same features
"$af" campaign --features --cases 300 --seed 7 --out "$t/plain" --quiet >/dev/null 2>&1 ||
  bad "plain campaign with --features"
[ "$(num "$t/plain/summary.json" total)" -gt 100 ] 2>/dev/null || bad "plain campaign: no features"
for kind in handle shape-verdict; do
  [ "$(num "$t/plain/summary.json" "$kind")" -gt 0 ] 2>/dev/null || bad "plain campaign: no $kind features"
done
# the features themselves, a line each (features.txt: kind, tab, text; sorted), as many as
# summary.json counts; the replay's list holds the guided run's but for the 1% above
for d in ok plain replay; do
  ft=$(num "$t/$d/summary.json" total)
  [ "$(wc -l < "$t/$d/features.txt")" = "${ft:-none}" ] 2>/dev/null ||
    bad "$d: features.txt has $(wc -l < "$t/$d/features.txt" 2>/dev/null) lines, summary.json ${ft:-none} features"
  LC_ALL=C sort -c "$t/$d/features.txt" 2>/dev/null || bad "$d: features.txt not sorted"
  grep -Evq '^(pattern|pattern-pair|calls|verdict|signature|edge|shape|runtime|link|handle|unconverted|shape-verdict|disagree)	[^	]+$' \
    "$t/$d/features.txt" && bad "$d: features.txt has a line that is not a kind and a text"
done
grep -q '^shape	' "$t/plain/features.txt" || bad "plain: features.txt has no shape feature"
# (a slot keeps the text of the first feature that hashed to it: of two features sharing a slot,
# which one a list names depends on the order of the cases, so the lists differ by about the
# pairs that share one, feat^2 / 2^17 of AF_FEAT_N = 2^16 slots, on top of the 1%)
only=$(LC_ALL=C comm -23 "$t/ok/features.txt" "$t/replay/features.txt" | wc -l)
[ "$only" -le $((feat / 100 + feat * feat / 131072)) ] ||
  bad "features.txt: $only of the guided run's $feat features not in the replay's"

# two lowerings that disagree (a fault against the correct one): disagreement features
"$af" campaign --features --cases 300 --seed 7 --lowering builtin --lowering builtin:fault=drop_host_wait \
  --out "$t/two" --no-db --quiet >/dev/null 2>&1
[ "$(num "$t/two/summary.json" disagree)" -gt 0 ] 2>/dev/null || bad "two lowerings: no disagree features"

# the builtin lowering: each input checked as it comes, no batch
grep -q "feedback deferred" "$t/ok.log" && bad "builtin lowering: feedback deferred"

# through mlir-opt: batches of 8, each input credited with its own features one batch late
af_tool mlir-opt-22 >/dev/null || opt="" # (hidden: tests/skips_test.sh)
if [ -n "$opt" ] && [ -x "$opt" ]; then
  "$af" fuzz --cases 40 --seed 3 --batch 8 --lowering "mlir-opt@default/nvvm:$opt" --out "$t/d" \
    --no-db --no-reduce --quiet >"$t/d.log" 2>&1
  rc=$?
  [ $rc = 0 ] || [ $rc = 1 ] || bad "fuzz through mlir-opt: exit $rc: $(tail -3 "$t/d.log")"
  [ "$(num "$t/d/summary.json" cases)" = 40 ] || bad "fuzz through mlir-opt: not 40 cases"
  line=$(grep "feedback deferred over batches of 8" "$t/d.log")
  [ -n "$line" ] || bad "fuzz through mlir-opt: no deferred feedback: $(grep guided: "$t/d.log")"
  # (the first inputs are checked at once: libFuzzer's empty one and its first to collect)
  b=$(echo "$line" | sed -n 's/.*: \([0-9]*\) batch(es).*/\1/p')
  w=$(echo "$line" | sed -n 's/.* \([0-9]*\) input(s) written into the corpus.*/\1/p')
  r=$(echo "$line" | sed -n 's/.* \([0-9]*\) credited when libFuzzer reloaded them.*/\1/p')
  [ "${b:-0}" -ge 4 ] || bad "fuzz through mlir-opt: ${b:-no} batches of 38 inputs"
  [ "${w:-0}" -ge 1 ] || bad "fuzz through mlir-opt: no input written into the corpus"
  [ "${r:-0}" -ge 1 ] || bad "fuzz through mlir-opt: no input credited on reload ($w written)"
  nc=0
  for f in "$t/d/corpus"/*; do
    [ -f "$f" ] || continue
    nc=$((nc + 1))
    [ "$(sha1sum < "$f" | cut -c1-40)" = "$(basename "$f")" ] || bad "corpus file $(basename "$f") is not named by its SHA-1"
  done
  [ "$nc" -ge "${w:-1}" ] || bad "fuzz through mlir-opt: $nc corpus file(s), $w written"
  # every entry a valid case; replayed, they reach the run's features, but for what was no one
  # case's (a batch's kernels lowered as one module, a pattern pair across two of its cases)
  "$af" campaign --features --seeds "$t/d/corpus" --cases "$nc" --seed 3 --batch 8 \
    --lowering "mlir-opt@default/nvvm:$opt" --out "$t/dr" --no-db --no-reduce --quiet \
    >"$t/dr.log" 2>&1
  grep -q "not a valid case" "$t/dr.log" && bad "deferred corpus: $(grep -m1 'not a valid case' "$t/dr.log")"
  fd=$(num "$t/d/summary.json" total)
  fr=$(num "$t/dr/summary.json" total)
  echo "deferred: $nc corpus entries of 40 inputs replayed reach ${fr:-no} of the run's ${fd:-no} features"
  [ "${fr:-0}" -ge $((${fd:-1} * 85 / 100)) ] || bad "deferred corpus replayed: ${fr:-no} features, the run ${fd:-no}"
else
  af_skip "deferred feedback through mlir-opt" "no mlir-opt (mlir-22-tools; scripts/bootstrap.sh installs it)"
fi

if [ $fail = 0 ]; then echo "fuzz: ok"; else echo "fuzz: $fail failure(s)"; fi
[ $fail = 0 ]
