#!/usr/bin/env bash
# Fault power under steering: every builtin fault, run under each configuration's final steering
# (summary.json's "steering" of a campaign: what its cases were generated without at the end),
# CASES cases each from SEED, cuda flavour, no database, no reduction, no further steering; and
# once unsteered on the same seeds. A fault is caught under a steering when it fails at least a
# quarter of its unsteered count there (docs/steering.md: steering must not take the bugs away).
# usage: steering_power.sh ASYNCFUZZ SUMMARY [CASES [SEED]]   (default 1500 cases, seed 9)
# Prints the steerings (each with the configurations that share it), then per fault its
# unsteered failing cases and, per steering, the failing cases and caught/MISSED; then the
# (fault, configuration) pairs caught, and each one missed.
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -u
af=${1:?usage: steering_power.sh ASYNCFUZZ SUMMARY [CASES [SEED]]}
sum=${2:?usage: steering_power.sh ASYNCFUZZ SUMMARY [CASES [SEED]]}
cases=${3:-1500}
seed=${4:-9}
[ -f "$sum" ] || { echo "steering_power.sh: no summary at $sum" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# each configuration's steering (gen arguments), one line: NAME TAB ARGS; without a matrix, the
# run's ("all")
grep '"axes": .*"steering": ' "$sum" | sed -n 's/^ *{"name": "\([^"]*\)".*"gen_args": "\([^"]*\)".*/\1\t\2/p' \
  > "$tmp/confs"
if [ ! -s "$tmp/confs" ]; then
  sed -n 's/.*"all": {"cases": [0-9]*, "steering": .*"gen_args": "\([^"]*\)".*/all\t\1/p' "$sum" > "$tmp/confs"
fi
[ -s "$tmp/confs" ] || { echo "steering_power.sh: $sum has no steering (an older asyncfuzz?)" >&2; exit 2; }
cut -f2 "$tmp/confs" | awk '!seen[$0]++' > "$tmp/groups"
ng=$(wc -l < "$tmp/groups")
echo "$(wc -l < "$tmp/confs") configuration(s), $ng distinct steering(s); $cases cases per run, seed $seed, cuda flavour"
g=0
while IFS= read -r args; do
  g=$((g + 1))
  names=$(awk -F'\t' -v a="$args" '$2 == a { printf "%s%s", n++ ? ", " : "", $1 }' "$tmp/confs")
  echo "  S$g: ${args:-(nothing avoided)}"
  echo "      on: $names"
done < "$tmp/groups"

failing() { # ARGS...: the failing cases of a campaign with these extra arguments
  "$af" campaign --lowering "builtin:fault=$f" --cases "$cases" --seed "$seed" --abi cuda --no-db \
    --no-reduce --no-avoid --quiet --out "$tmp/o" "$@" < /dev/null > "$tmp/out" 2>&1
  local rc=$?
  [ $rc -le 1 ] || { echo "steering_power.sh: the campaign failed (exit $rc): $(tail -1 "$tmp/out")" >&2; exit 2; }
  sed -n 's/.*"cases": [0-9]*, "executed_cases": [0-9]*, "seconds": [0-9.]*, "failures": \([0-9]*\),.*/\1/p' \
    "$tmp/o/summary.json"
  rm -rf "$tmp/o"
}

faults=$("$af" lower --list-faults | awk 'NR > 1 && $1 != "" { print $1 }')
printf '%-22s %9s' fault unsteered
for ((i = 1; i <= ng; i++)); do printf ' %14s' "S$i"; done
echo
caught=0 pairs=0
: > "$tmp/missed"
for f in $faults; do
  base=$(failing)
  printf '%-22s %9s' "$f" "$base"
  g=0
  while IFS= read -r args; do
    g=$((g + 1))
    eval "set -- $args"
    n=$(failing "$@")
    nconf=$(awk -F'\t' -v a="$args" '$2 == a' "$tmp/confs" | wc -l)
    pairs=$((pairs + nconf))
    if [ "$base" -gt 0 ] && [ $((4 * n)) -ge "$base" ]; then
      caught=$((caught + nconf))
      printf ' %7s caught' "$n"
    else
      printf ' %7s MISSED' "$n"
      awk -F'\t' -v a="$args" -v f="$f" -v n="$n" -v b="$base" -v s="S$g" \
        '$2 == a { print "  " f " on " $1 " (" s "): " n " failing cases, unsteered " b }' "$tmp/confs" >> "$tmp/missed"
    fi
  done < "$tmp/groups"
  echo
done
echo "caught: $caught of $pairs (fault, configuration) pairs"
if [ -s "$tmp/missed" ]; then
  echo "missed:"
  cat "$tmp/missed"
fi
