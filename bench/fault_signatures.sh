#!/usr/bin/env bash
# Signatures per injected fault: each builtin fault over N cases from SEED (no steering, no
# reduction, no database), the number of signatures it gives, and each signature that takes
# over 5% of the failures of two faults (docs/signatures.md: one finding per bug).
# usage: fault_signatures.sh ASYNCFUZZ [CASES [SEED...]]   (default 20000 cases, seed 5)
# Prints, per seed, "fault signatures failures" lines, then "overlap: SIG F1 F2 P% Q%" for a
# signature (less its fault prefix) that takes over 5% of the failures of two faults. With
# LIST=1 in the environment, also every "fault count signature" row (the fault x signature table).
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -u
af=${1:?usage: fault_signatures.sh ASYNCFUZZ [CASES [SEED...]]}
cases=${2:-20000}
shift 2 2>/dev/null || shift $#
seeds=("$@")
[ ${#seeds[@]} -gt 0 ] || seeds=(5)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
faults=$("$af" lower --list-faults | awk 'NR > 1 && $1 != "" { print $1 }')
for seed in "${seeds[@]}"; do
  echo "seed $seed, $cases cases per fault"
  : > "$tmp/all"
  for f in $faults; do
    "$af" campaign --lowering "builtin:fault=$f" --cases "$cases" --seed "$seed" --no-db \
      --no-reduce --no-avoid --quiet --out "$tmp/o" > "$tmp/out" 2>&1
    sed -n "s/^  {\"signature\": \"builtin:fault=$f|\(.*\)\", \"class\": .*\"count\": \([0-9]*\),.*/$f \2 \1/p" \
      "$tmp/o/summary.json" >> "$tmp/all"
    rm -rf "$tmp/o"
  done
  awk '{ n[$1]++; t[$1] += $2 } END { for (f in n) printf "  %-22s %3d signatures %7d failures\n", f, n[f], t[f] }' \
    "$tmp/all" | sort
  [ "${LIST:-0}" = 1 ] && sort -k1,1 -k2,2nr "$tmp/all" | sed 's/^/    /'
  # a signature over 5% of two faults' failures
  awk '{ f = $1; c = $2; $1 = $2 = ""; sub(/^  /, ""); t[f] += c; k[$0, f] = c; s[$0] = 1; fs[f] = 1 }
    END { for (x in s) { m = ""; for (f in fs) if ((x, f) in k && k[x, f] > 0.05 * t[f]) m = m " " f " " sprintf("%.0f%%", 100 * k[x, f] / t[f])
            if (split(m, a, " ") >= 4) print "  overlap: " x ":" m } }' "$tmp/all"
done
