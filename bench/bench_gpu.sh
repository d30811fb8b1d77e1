#!/bin/bash
# bench_gpu.sh: the cuda backend on a real GPU. Prints
#   1. the device and the calibrated spin count;
#   2. throughput at 32 ops: cases/s of a builtin campaign on cuda and on sim (median of REPS
#      runs of SECONDS each, seeds 101, 202, ...; campaign defaults: schedules lazy,random,pct,
#      so 3 runs per case), on cuda with 1, 2, 4, 8 and 16 cases at once (--gpu-jobs), with how
#      busy the device was (nvidia-smi's utilization.gpu, sampled every 200 ms: the share of
#      time a kernel ran; "n/a" without nvidia-smi), and whether the findings of a short
#      campaign with a fault are those of one case at a time;
#   3. for each builtin fault: of RUNS cases in which the fault shows on sim (the checker sees
#      it under the eager schedule), in how many one run on the GPU with the checker off
#      shows it in the observations alone: with the calibrated spin and with --spin 1.
# Without a usable GPU it says why and measures nothing.
# usage: bench_gpu.sh ASYNCFUZZ [RUNS=100] [SECONDS=10] [REPS=3]
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -u
AF=$1
RUNS=${2:-100}
SECS=${3:-10}
REPS=${4:-3}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
if ! "$AF" device --calibrate >"$T/spin" 2>"$T/dev"; then
  echo "bench_gpu: no usable GPU here, nothing measured: $(tail -1 "$T/dev")"
  exit 0
fi
cat "$T/dev"
SPIN=$(sed -n 's/^spin //p' "$T/spin")
echo "calibrated spin: $SPIN"

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
rate() { # SEED BACKEND-ARGS...: cases/s of one campaign
  local seed=$1
  shift
  rm -rf "$T/c"
  "$AF" campaign "$@" --lowering builtin --ops 32 --seconds "$SECS" --seed "$seed" --no-db \
    --no-reduce --quiet --out "$T/c" >/dev/null 2>&1
  # the summary line: "cases": N, ..., "seconds": S (other fields between them)
  sed -n '/"backend"/{s/.*"cases": \([0-9]*\),.*"seconds": \([0-9.]*\),.*/\1 \2/p;q}' "$T/c/summary.json" |
    awk '$2 > 0 {printf "%.1f\n", $1 / $2; n++} END {if (!n) print "?"}'
}
busy_start() { # samples the device's utilization into $T/util until busy_stop
  : >"$T/util"
  UPID=
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 200 >"$T/util" 2>/dev/null &
    UPID=$!
  fi
}
busy_stop() { # the mean of the samples, as "NN%", or n/a
  [ -n "$UPID" ] && kill "$UPID" 2>/dev/null && wait "$UPID" 2>/dev/null
  awk '$1 ~ /^[0-9]+$/ {s += $1; n++} END {if (n) printf "%.0f%%\n", s / n; else print "n/a"}' "$T/util"
}
echo
echo "throughput at 32 ops (cases/s, median of $REPS x ${SECS}s; 3 schedules per case):"
# (the same campaign seeds in every run of this script, so that two builds compare on one machine)
printf "  %-28s %10s %12s\n" "" "cases/s" "device busy"
for j in 1 2 4 8 16; do
  busy_start
  for i in $(seq "$REPS"); do rate $((i * 101)) --backend cuda --spin "$SPIN" --gpu-jobs "$j"; done | median >"$T/cuda.r"
  printf "  %-28s %10s %12s\n" "cuda, $j at once (spin $SPIN)" "$(cat "$T/cuda.r")" "$(busy_stop)"
done
for i in $(seq "$REPS"); do rate $((i * 101)); done | median >"$T/sim.r"
printf "  %-28s %10s\n" "sim" "$(cat "$T/sim.r")"
# the findings of a campaign with a fault: 8 at once against one at a time (the same batches)
sigs() { # DIR: each finding's signature and occurrences, and the failures
  for d in "$1"/failures/*/; do
    [ -f "$d/info.txt" ] && echo "$(sed -n 's/^signature: //p' "$d/info.txt") x$(sed -n 's/^occurrences: //p' "$d/info.txt")"
  done | sort
  grep -o '"failures": [0-9]*' "$1/summary.json"
}
for j in 1 8; do
  rm -rf "$T/f$j"
  "$AF" campaign --backend cuda --spin "$SPIN" --lowering builtin:fault=yield_stream --ops 32 --cases 400 \
    --batch 32 --gpu-jobs $j --seed 4242 --no-db --no-reduce --quiet --out "$T/f$j" >/dev/null 2>&1
  sigs "$T/f$j" >"$T/f$j.sig"
done
if cmp -s "$T/f1.sig" "$T/f8.sig"; then
  echo "  findings of 400 cases with fault yield_stream, 8 at once and one at a time: the same ($(grep -c ' x' "$T/f1.sig") signatures)"
else
  echo "  findings of 400 cases with fault yield_stream, 8 at once and one at a time: DIFFERENT"
  diff "$T/f1.sig" "$T/f8.sig" | head -10 | sed 's/^/    /'
fi

echo
echo "observation alone (checker off), one GPU run per case, $RUNS cases where the fault shows:"
printf "  %-22s %18s %18s\n" fault "spin $SPIN" "spin 1"
for i in $(seq 1 $((RUNS * 4))); do "$AF" gen --seed $((i * 104729)) -o "$T/g$i.json"; done
faults=$("$AF" lower --list-faults | sed -n 's/^  \([a-z_0-9]*\)  .*/\1/p')
for f in $faults; do
  rm -f "$T"/act*.json
  n=0
  for i in $(seq 1 $((RUNS * 4))); do
    [ $n -ge "$RUNS" ] && break
    if ! "$AF" check "$T/g$i.json" --lowering builtin:fault=$f --schedules eager >/dev/null 2>&1; then
      n=$((n + 1))
      cp "$T/g$i.json" "$T/act$n.json"
    fi
  done
  res=()
  for spin in "$SPIN" 1; do
    "$AF" check "$T"/act*.json --lowering builtin:fault=$f --schedules eager --no-checker --json \
      --backend cuda --spin "$spin" >"$T/o.json" 2>/dev/null
    seen=$(grep -c '"observation_failed": true' "$T/o.json")
    res+=("$seen/$n ($(awk -v a="$seen" -v b="$n" 'BEGIN {printf "%.0f", b ? 100 * a / b : 0}')%)")
  done
  printf "  %-22s %18s %18s\n" "$f" "${res[0]}" "${res[1]}"
done
