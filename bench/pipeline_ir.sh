#!/bin/sh
# Instructions per op of the in-process builtin pipeline (bench_pipeline's work: generate,
# validate, lower, simulate under lazy, random and pct, judge), counted by valgrind's callgrind:
# a count that machine load does not move, where bench_pipeline's cases/s on a shared machine
# moves by 30% from one run to the next. For each size, with the checker off and on: the
# instructions of cases N+1..2N (a 2N-case run less an N-case run, so start-up drops out), per
# case, per op and per trace record; then the growth against the first size and the checker's cost.
# PROFILE=1 also prints the 12 largest functions (inclusive) of each size's 2N-case run, checker on.
# SEEDS=campaign seeds each schedule on its own, as a campaign does (bench_pipeline --campaign-seeds).
# usage: pipeline_ir.sh BENCH_PIPELINE [N=200] [OPS,OPS,...=32,256]
set -eu
case "${1:-}" in
-h | --help | "")
  echo "usage: pipeline_ir.sh BENCH_PIPELINE [N=200] [OPS,OPS,...=32,256]"
  echo "Instructions per op of the builtin pipeline (callgrind), per size, checker off and on."
  echo "PROFILE=1: the largest functions too; SEEDS=campaign: each schedule its own seed."
  exit 0
  ;;
esac
bp=$1
seedflag=""
[ "${SEEDS:-}" = campaign ] && seedflag=--campaign-seeds
n=${2:-200}
sizes=${3:-32,256}
command -v valgrind > /dev/null || { echo "pipeline_ir.sh: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# callgrind counts each iteration of a rep-prefixed string instruction: glibc clears or copies a
# block of 2 KiB or more with rep stosb / rep movsb, which it then counts once per byte (a 64 KiB
# memset: 65,552 instructions; with vector stores: 3,598). The tunables keep glibc on vector
# stores, so that a large clear or copy counts about what it costs.
export GLIBC_TUNABLES="glibc.cpu.x86_rep_stosb_threshold=0x7fffffffffff:glibc.cpu.x86_rep_movsb_threshold=0x7fffffffffff${GLIBC_TUNABLES:+:$GLIBC_TUNABLES}"
# ir CASES OPS CHECKER: "instructions mean_ops mean_records"
ir() {
  out=$(valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$1.$2.$3" "$bp" $seedflag --cases "$1" "$2" "$3" 2> /dev/null)
  tot=$(sed -n 's/^totals: //p' "$tmp/cg.$1.$2.$3")
  mo=$(echo "$out" | sed -n 's/.*mean_case_ops=\([0-9.]*\).*/\1/p')
  mr=$(echo "$out" | sed -n 's/.*mean_case_records=\([0-9.]*\).*/\1/p')
  [ -n "$tot" ] && [ -n "$mr" ] ||
    echo "pipeline_ir.sh: no count from $bp --cases $1 $2 $3 (valgrind failed, or a bench_pipeline without --cases)" >&2
  echo "$tot $mo $mr"
}
echo "# pipeline_ir.sh: callgrind instructions of cases $((n + 1))..$((2 * n)) (a $((2 * n))-case run less a $n-case run)"
echo "# records: trace records (runtime calls and device steps) of a case's last schedule"
if [ -n "$seedflag" ]; then
  echo "# schedules: each its own seed, as in a campaign (--campaign-seeds)"
else
  echo "# schedules: all three seeded with the case seed (SEEDS=campaign: each its own)"
fi
first="" firstr=""
for ops in $(echo "$sizes" | tr ',' ' '); do
  line="ops=$ops"
  per="" perr=""
  for ck in 0 1; do
    set -- $(ir "$n" "$ops" "$ck")
    a=$1 ma=$2 ra=$3
    set -- $(ir "$((2 * n))" "$ops" "$ck")
    b=$1 mb=$2 rb=$3
    res=$(awk -v a="$a" -v b="$b" -v ma="$ma" -v mb="$mb" -v ra="$ra" -v rb="$rb" -v n="$n" 'BEGIN {
      ops = 2 * mb - ma; recs = 2 * rb - ra; c = (b - a) / n
      printf "%.0f %.1f %.0f %.1f %.0f", c, ops, c / ops, recs, c / recs }')
    set -- $res
    line="$line checker=$ck ir_per_case=$1 mean_case_ops=$2 ir_per_op=$3 mean_case_records=$4 ir_per_record=$5"
    per="$per $3"
    perr="$perr $5"
  done
  set -- $per
  off=$1 on=$2
  set -- $perr
  onr=$2
  [ -n "$first" ] || { first=$on; firstr=$onr; }
  echo "$line"
  awk -v ops="$ops" -v off="$off" -v on="$on" -v f="$first" -v onr="$onr" -v fr="$firstr" 'BEGIN {
    printf "ops=%s checker_cost=%.1f%% per_op_vs_first_size=%.2fx per_record_vs_first_size=%.2fx\n",
      ops, (on / off - 1) * 100, on / f, onr / fr }'
  if [ "${PROFILE:-0}" = 1 ]; then
    callgrind_annotate --inclusive=yes "$tmp/cg.$((2 * n)).$ops.1" 2> /dev/null |
      grep -E '^ *[0-9,]+ \(' | head -14 | tail -12 | sed 's/^/  /'
  fi
done
