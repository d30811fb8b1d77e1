#!/usr/bin/env bash
# mlir_campaign.sh: two asyncfuzz builds side by side on the default real-lowering campaign
# (`campaign --lowering mlir-opt`, every default), the figure issue 63 is measured by: cases that
# reached execution per second, where the time went (the summary's `time:`), and whether the new
# build's signatures are a superset of the old one's on each seed.
#
# usage: bench/mlir_campaign.sh OLD_ASYNCFUZZ NEW_ASYNCFUZZ [SECONDS (600)] [SEEDS (881223,2,3)]
#          [WARM_DB]
#
# WARM_DB: a results.db from an earlier campaign, copied for every run, so that the findings a
# nightly database knows already steer both builds alike (without one, most of a run goes to
# reducing and matrix-checking the bugs every fresh database finds first). The two builds run at
# the same time, one core each (taskset), seed by seed, so that both meet the same load; each
# build's own directory goes first in LD_LIBRARY_PATH (its runtime library). Prints one line per
# run and the medians and their ratio. Output under $BENCH_OUT (default a temporary directory).
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -u
old=${1:?usage: mlir_campaign.sh OLD NEW [SECONDS] [SEEDS] [WARM_DB]}
new=${2:?usage: mlir_campaign.sh OLD NEW [SECONDS] [SEEDS] [WARM_DB]}
secs=${3:-600}
seeds=${4:-881223,2,3}
warm=${5:-}
out=${BENCH_OUT:-$(mktemp -d)}
mkdir -p "$out"
cores=$(nproc)

run() { # build-name binary seed core
  local d="$out/$1-$3"
  rm -rf "$d"
  mkdir -p "$d"
  [ -n "$warm" ] && cp "$warm" "$d/results.db"
  local lib
  lib=$(dirname "$(readlink -f "$2")")
  LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" taskset -c "$4" \
    "$2" campaign --lowering mlir-opt --seconds "$secs" --seed "$3" --out "$d" --quiet \
    > "$d/stdout.txt" 2> "$d/stderr.txt"
}

IFS=, read -r -a seedv <<< "$seeds"
for s in "${seedv[@]}"; do
  if [ "$cores" -ge 2 ]; then
    run old "$old" "$s" 0 &
    run new "$new" "$s" 1 &
    wait
  else
    run old "$old" "$s" 0
    run new "$new" "$s" 0
  fi
done

python3 - "$out" "$seeds" <<'PYEOF'
import json, sys, statistics
out, seeds = sys.argv[1], sys.argv[2].split(',')
rate = {'old': [], 'new': []}
harness = {'old': [], 'new': []}
for s in seeds:
    sigs = {}
    for b in ('old', 'new'):
        d = json.load(open(f'{out}/{b}-{s}/summary.json'))
        t = d['time']
        total = sum(t.values())
        own = t.get('sim, checker and harness', 0) + t.get('generation', 0) + t.get('other', 0) \
            + t.get('database', 0)
        r = d['executed_cases'] / d['seconds']
        rate[b].append(r)
        harness[b].append(100 * own / total if total else 0)
        sigs[b] = {x['signature'] for x in d['signatures']}
        top = ', '.join(f'{k} {v:.0f} s' for k, v in sorted(t.items(), key=lambda kv: -kv[1])[:4])
        print(f'seed {s} {b}: {d["cases"]} cases, {d["executed_cases"]} executed in '
              f'{d["seconds"]:.0f} s: {r:.2f} executed/s; harness {harness[b][-1]:.1f}%; '
              f'{len(sigs[b])} signatures; {top}')
    lost = sigs['old'] - sigs['new']
    print(f'seed {s}: new signatures a superset of old: {"yes" if not lost else "no"}'
          + ''.join(f'\n  only old: {x}' for x in sorted(lost)))
mo, mn = statistics.median(rate['old']), statistics.median(rate['new'])
print(f'median executed cases/s: old {mo:.2f}, new {mn:.2f}: {mn / mo if mo else 0:.2f}x')
print(f'median harness share: old {statistics.median(harness["old"]):.1f}%, '
      f'new {statistics.median(harness["new"]):.1f}%')
PYEOF
echo "runs under $out"
