#!/bin/sh
# Guided against unguided: asyncfuzz fuzz and asyncfuzz campaign --features side by side, one core
# each (taskset), the same seconds, seed and configuration, each with its own database. Prints each
# one's distinct semantic features (counted the same way: base/feat.h) and distinct findings
# (signatures) over time, then its cases, cases/s, features by kind and where its time went, and
# the features (features.txt) each mode reached that the other did not.
# usage: guided.sh ASYNCFUZZ [SECONDS=600] [SEED=1] [LOWERING=mlir-opt] [EXTRA...]
#   EXTRA: more options for both (e.g. --matrix jit=O0)
set -eu
case "${1:-}" in
-h | --help | "")
  echo "usage: guided.sh ASYNCFUZZ [SECONDS=600] [SEED=1] [LOWERING=mlir-opt] [EXTRA...]"
  echo "Features and findings over time of asyncfuzz fuzz against a plain campaign, one core each."
  exit 0
  ;;
esac
af=$1
secs=${2:-600}
seed=${3:-1}
low=${4:-mlir-opt}
shift $(($# < 4 ? $# : 4))
out=${GUIDED_OUT:-$(mktemp -d)}
mkdir -p "$out"
cores=$(nproc)
pin() { if [ "$cores" -ge 2 ] && command -v taskset > /dev/null; then echo "taskset -c $1"; fi; }
echo "guided.sh: $secs s, seed $seed, --lowering $low $*; output in $out"
$(pin 0) "$af" fuzz --seconds "$secs" --seed "$seed" --lowering "$low" --out "$out/guided" "$@" \
  > "$out/guided.log" 2>&1 &
g=$!
$(pin 1) "$af" campaign --features --seconds "$secs" --seed "$seed" --lowering "$low" \
  --out "$out/unguided" "$@" > "$out/unguided.log" 2>&1 &
u=$!
wait $g || true
wait $u || true
# the timeline: "seconds features signatures cases" per point
points() {
  tr '\n' ' ' < "$1/summary.json" | sed 's/.*"timeline": \[//; s/\],  *"signatures".*//' |
    tr '}' '\n' | sed -n 's/.*"seconds": \([0-9.]*\), "cases": \([0-9]*\).*"signatures": \([0-9]*\), "features": \([0-9]*\).*/\1 \4 \3 \2/p'
}
for m in guided unguided; do
  [ -f "$out/$m/summary.json" ] || { echo "guided.sh: $m wrote no summary ($out/$m.log)"; exit 1; }
  points "$out/$m" > "$out/$m.points"
done
step=$((secs / 10 > 0 ? secs / 10 : 1))
printf '%8s  %10s %9s  %10s %9s\n' seconds "guided ft" findings "plain ft" findings
t=$step
while [ "$t" -le "$secs" ]; do
  gl=$(awk -v t="$t" '$1 <= t + 2.5 { l = $0 } END { print l }' "$out/guided.points")
  ul=$(awk -v t="$t" '$1 <= t + 2.5 { l = $0 } END { print l }' "$out/unguided.points")
  printf '%8d  %10s %9s  %10s %9s\n' "$t" "$(echo "$gl" | cut -d' ' -f2)" "$(echo "$gl" | cut -d' ' -f3)" \
    "$(echo "$ul" | cut -d' ' -f2)" "$(echo "$ul" | cut -d' ' -f3)"
  t=$((t + step))
done
for m in guided unguided; do
  s="$out/$m/summary.json"
  cases=$(grep -o '"swarm": [a-z]*, "cases": [0-9]*' "$s" | head -1 | sed 's/.*: //')
  el=$(grep -o '"executed_cases": [0-9]*, "seconds": [0-9.]*' "$s" | head -1 | sed 's/.*: //')
  ft=$(grep -o '"features": {[^}]*}' "$s" | sed 's/"features": //')
  sigs=$(grep -c '^  {"signature": ' "$s" || true)
  echo "$m: $cases cases in $el s ($(awk -v c="$cases" -v e="$el" 'BEGIN { printf "%.1f", (e > 0 ? c / e : 0) }') cases/s), $sigs findings"
  echo "  features $ft"
  grep '^time:' -A2 "$out/$m.log" | sed 's/^/  /'
done
gf=$(tail -1 "$out/guided.points" | cut -d' ' -f2)
uf=$(tail -1 "$out/unguided.points" | cut -d' ' -f2)
echo "features guided/unguided: $(awk -v a="$gf" -v b="$uf" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')x"
# which features each mode reached that the other did not (features.txt: kind, tab, text; sorted)
g="$out/guided/features.txt"
u="$out/unguided/features.txt"
if [ -f "$g" ] && [ -f "$u" ]; then
  echo "features reached by guided only / by plain only / by both, by kind:"
  LC_ALL=C comm -23 "$g" "$u" | cut -f1 | sort | uniq -c > "$out/guided-only"
  LC_ALL=C comm -13 "$g" "$u" | cut -f1 | sort | uniq -c > "$out/plain-only"
  LC_ALL=C comm -12 "$g" "$u" | cut -f1 | sort | uniq -c > "$out/both"
  cat "$g" "$u" | cut -f1 | sort -u | while read -r kind; do
    n() { awk -v k="$kind" '$2 == k { c = $1 } END { print c + 0 }' "$1"; }
    printf '  %-14s %6s %6s %6s\n' "$kind" "$(n "$out/guided-only")" "$(n "$out/plain-only")" "$(n "$out/both")"
  done
  printf '  %-14s %6s %6s %6s\n' total "$(LC_ALL=C comm -23 "$g" "$u" | wc -l)" \
    "$(LC_ALL=C comm -13 "$g" "$u" | wc -l)" "$(LC_ALL=C comm -12 "$g" "$u" | wc -l)"
fi
