#!/usr/bin/env bash
# The configuration matrix of the mlir-opt lowering (docs/lowerings.md: "The configuration matrix"):
#  1. cases/s of each configuration of the default matrix alone: a campaign of CASES cases on
#     that one configuration (--matrix with one value per axis), no database, no reduction,
#     the default schedules; the median of REPS runs each;
#  2. the cost of the affected-configurations step per new finding: a campaign over the whole
#     default matrix, and for each new finding the seconds its minimized case took on every
#     configuration (summary.json), as median, min and max, and per configuration.
# usage: bench/bench_matrix.sh ASYNCFUZZ [CASES (default 256)] [REPS (default 3)] [SEED]
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -u
af=$(readlink -f "$1") cases=${2:-256} reps=${3:-3} seed=${4:-1601}
command -v mlir-opt-22 > /dev/null || [ -x /usr/lib/llvm-22/bin/mlir-opt ] ||
  { echo "bench_matrix: mlir-22-tools not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

# the default matrix's configurations, from a one-case campaign's start line
"$af" campaign --lowering mlir-opt --cases 1 --no-db --no-reduce --schedules eager \
  --out "$tmp/probe" > "$tmp/probe.out" 2>&1
sed -n 's/.*"name": "\(mlir-opt-[^"]*\)", "axes": "\([^"]*\)".*/\1|\2/p' "$tmp/probe/summary.json" \
  > "$tmp/configs"
n=$(wc -l < "$tmp/configs")
[ "$n" -gt 0 ] || { echo "bench_matrix: no configurations: $(head -3 "$tmp/probe.out")"; exit 1; }
echo "bench_matrix: $n configurations, $cases cases x $reps runs each (seed $seed), one process"
printf '%-46s %10s %10s\n' "configuration (LLVM, pipeline, target, JIT)" "cases/s" "executed"
while IFS='|' read -r name axes; do
  # the axes back into --matrix values: "LLVM 22.1.8, async-region, rocdl, Odefault"
  llvm=$(echo "$axes" | sed 's/^LLVM \([^,]*\),.*/\1/')
  pipe=$(echo "$axes" | cut -d, -f2 | tr -d ' ')
  tgt=$(echo "$axes" | cut -d, -f3 | tr -d ' ')
  jit=$(echo "$axes" | cut -d, -f4 | tr -d ' ')
  build=/usr/lib/llvm-${llvm%%.*}/bin/mlir-opt
  [ -x "$build" ] || build=$(command -v mlir-opt-22)
  : > "$tmp/rates"
  ex=0
  for r in $(seq "$reps"); do
    "$af" campaign --lowering mlir-opt --matrix "builds=$build" --matrix "pipelines=$pipe" \
      --matrix "targets=$tgt" --matrix "jit=$jit" --cases "$cases" --seed "$((seed + r))" \
      --no-db --no-reduce --quiet --out "$tmp/c" > "$tmp/c.out" 2>&1
    sed -n 's/^campaign done: [0-9]* cases in [0-9.]* s (\([0-9.]*\) cases\/s).*/\1/p' "$tmp/c.out" >> "$tmp/rates"
    ex=$(sed -n 's/^reached execution: \([0-9]*\) of .*/\1/p' "$tmp/c.out")
  done
  printf '%-46s %10s %10s\n' "$axes" "$(median < "$tmp/rates")" "${ex:-?}/$cases"
done < "$tmp/configs"

# the affected-configurations step: every new finding's minimized case on all configurations
"$af" campaign --lowering mlir-opt --cases "$cases" --batch 16 --seed "$seed" --no-db --quiet \
  --out "$tmp/m" > "$tmp/m.out" 2>&1
grep -o '"configurations": {"checked": [0-9]*, "reproduces": [0-9]*, "seconds": [0-9.]*' \
  "$tmp/m/summary.json" | sed 's/.*"checked": \([0-9]*\),.*"seconds": \([0-9.]*\)/\1 \2/' > "$tmp/steps"
k=$(wc -l < "$tmp/steps")
if [ "$k" -eq 0 ]; then
  echo "bench_matrix: no new finding in $cases cases of seed $seed"
  exit 1
fi
echo "affected-configurations step: $k new finding(s) in $cases cases over $n configurations"
printf '  seconds per finding: median %s, min %s, max %s\n' \
  "$(cut -d' ' -f2 "$tmp/steps" | median)" "$(cut -d' ' -f2 "$tmp/steps" | sort -g | head -1)" \
  "$(cut -d' ' -f2 "$tmp/steps" | sort -g | tail -1)"
printf '  seconds per finding and configuration: median %s\n' \
  "$(awk '$1 > 0 { print $2 / $1 }' "$tmp/steps" | median)"
total=$(awk '{ s += $2 } END { printf "%.1f", s }' "$tmp/steps")
secs=$(sed -n 's/.*"seconds": \([0-9.]*\), "failures".*/\1/p' "$tmp/m/summary.json")
echo "  in all ${total} s of the campaign's ${secs} s"
