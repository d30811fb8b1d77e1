#!/usr/bin/env bash
# Campaign throughput with and without the regression database, on one core: the same
# campaign (same seed, same seconds) alternately with --no-db and with a fresh database,
# REPS times each; prints the median cases/s of each and the database's cost.
# Workloads: the correct builtin lowering (no failures: the run's bookkeeping only), a builtin
# fault that fails about 60% of the cases (every failure recorded or tallied), and the real
# lowering (mlir-opt 22 and builtin, every case failing in mlir-opt) when it is installed.
# usage: bench/bench_db.sh ASYNCFUZZ [seconds per campaign (default 3)] [reps (default 5)]
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -u
af=$(readlink -f "$1") secs=${2:-3} reps=${3:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
rate() { sed -n 's/.*(\([0-9.]*\) cases\/s).*/\1/p' | head -1; }
run() { # name, seconds, campaign args...
  local name=$1 s=$2; shift 2
  : > "$tmp/off"; : > "$tmp/on"
  for r in $(seq 1 "$reps"); do
    rm -rf "$tmp/c"
    taskset -c 0 "$af" campaign --seconds "$s" --seed 1 --out "$tmp/c" --quiet --no-db "$@" 2>/dev/null | rate >> "$tmp/off"
    rm -rf "$tmp/c"
    taskset -c 0 "$af" campaign --seconds "$s" --seed 1 --out "$tmp/c" --quiet "$@" 2>/dev/null | rate >> "$tmp/on"
  done
  local off on
  off=$(median < "$tmp/off"); on=$(median < "$tmp/on")
  awk -v n="$name" -v a="$off" -v b="$on" 'BEGIN { printf "%-34s %14.1f %14.1f %8.1f%%\n", n, a, b, (1 - b / a) * 100 }'
}
echo "bench_db: campaign cases/s on one core, median of $reps alternating runs of $secs s"
printf "%-34s %14s %14s %9s\n" "workload" "without db" "with db" "db cost"
run "builtin (no failures)" "$secs"
run "builtin:fault=yield_stream" "$secs" --lowering builtin:fault=yield_stream
if "$af" lower --lowering mlir-opt --help > /dev/null 2>&1 && command -v mlir-opt-22 > /dev/null; then
  run "mlir-opt + builtin" $((secs * 3)) --lowering mlir-opt --lowering builtin
fi
