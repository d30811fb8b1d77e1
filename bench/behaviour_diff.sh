#!/usr/bin/env bash
# Behaviour of two builds compared: the same fixed-seed campaigns (the builtin lowering, builtin
# faults, the mlir-opt matrix next to the builtin lowering) run with each, and what they leave
# compared: what the command printed (less its status lines), summary.json, every file under
# failures/, and the database's findings, occurrences, detailed forms and configuration
# verdicts, timings left out. A refactoring should print
# "identical" for every campaign. Prints figures only; the exit status says whether all matched.
# usage: bench/behaviour_diff.sh OLD_ASYNCFUZZ NEW_ASYNCFUZZ [WORKDIR]
#   ASYNCFUZZ_DIFF_QUICK=1: smaller campaigns (about a minute)
#   ASYNCFUZZ_DIFF_FAULTS=all: a campaign for every builtin fault (NEW's lower --list-faults), 4,000
#     cases each (QUICK: 1,000), beside the ones below
#   ASYNCFUZZ_DIFF_MLIR=N: the mlir-opt campaign's cases (default 160, QUICK 48)
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -u
old=$(realpath "${1:?usage: behaviour_diff.sh OLD_ASYNCFUZZ NEW_ASYNCFUZZ [WORKDIR]}")
new=$(realpath "${2:?usage: behaviour_diff.sh OLD_ASYNCFUZZ NEW_ASYNCFUZZ [WORKDIR]}")
work=${3:-$(mktemp -d)}
mkdir -p "$work"
command -v sqlite3 > /dev/null || { echo "behaviour_diff: sqlite3 is missing"; exit 2; }
big=20000 small=4000 mlir=160
if [ "${ASYNCFUZZ_DIFF_QUICK:-0}" = 1 ]; then big=4000 small=1000 mlir=48; fi
mlir=${ASYNCFUZZ_DIFF_MLIR:-$mlir}

# name|arguments (the campaigns, each run by both builds)
campaigns=(
  "builtin|--cases $big --seed 5 --lowering builtin"
  "merge_first_pred|--cases $small --seed 5 --lowering builtin:fault=merge_first_pred"
  "yield_stream|--cases $small --seed 6 --lowering builtin:fault=yield_stream"
  "copy_size_i32|--cases $small --seed 7 --lowering builtin:fault=copy_size_i32 --abi rocm"
  "view_offset|--cases $small --seed 5 --lowering builtin:fault=view_offset_dropped"
  # (its reductions stop at --reduce-seconds, wall time: under another load they end elsewhere)
  "mlir-opt|--cases $mlir --seed 7 --lowering mlir-opt --lowering builtin --no-reduce"
)
if [ ! -x /usr/lib/llvm-22/bin/mlir-opt ]; then
  unset 'campaigns[5]'
  echo "behaviour_diff: no mlir-opt 22 (mlir-22-tools): the mlir-opt campaign is left out"
fi
if [ "${ASYNCFUZZ_DIFF_FAULTS:-}" = all ]; then
  for f in $("$new" lower --list-faults | awk 'NR > 1 { print $1 }'); do
    campaigns+=("fault-$f|--cases $small --seed 11 --lowering builtin:fault=$f")
  done
fi

# What a campaign left, less what differs from run to run (times, durations).
normalize() { # DIR LOG OUT
  local d=$1 log=$2 out=$3
  {
    echo "== output (the status lines left out)"
    grep -v '^\[ *[0-9.]*s\]' "$log" | sed -E 's/[0-9]+\.[0-9]+ (s|cases\/s)\b/T \1/g' |
      awk '/^time: / { print "time: T"; t = 1; next } t && /^  / { next } { t = 0; print }'
    echo "== summary.json"
    sed -E 's/"(seconds|first_at|matrix_seconds|cases_per_second|reduce_seconds)": [0-9.e+-]+/"\1": T/g
      s/"time": \{[^}]*\}/"time": T/' "$d/summary.json" |
      grep -v '^ *{"seconds": T, "cases"' # (the timeline: a point per progress period of the clock)
    for f in $(cd "$d" && { [ ! -d failures ] || find failures -type f; } | sort); do
      echo "== $f"
      sed -E 's/after [0-9.]+ s\)/after T s)/; s/[0-9]+\.[0-9]+ s\b/T s/g' "$d/$f"
    done
    echo "== findings"
    sqlite3 "$d/results.db" "SELECT f.signature, f.class, f.lowering, f.detail, f.count,
      f.repro_runs, f.repro_hits, f.status, f.smallest_ops, f.replay, f.trace,
      (SELECT hash FROM cases WHERE id = f.smallest_case),
      (SELECT hash FROM cases WHERE id = f.minimized_case) FROM findings f ORDER BY f.signature"
    echo "== occurrences"
    sqlite3 "$d/results.db" "SELECT f.signature, o.case_seed, o.lowering, o.lowering_version,
      o.pipeline, o.backend, o.schedule, o.hits, (SELECT hash FROM cases WHERE id = o.case_id)
      FROM occurrences o JOIN findings f ON f.id = o.finding
      ORDER BY f.signature, o.case_seed, o.lowering, o.schedule"
    echo "== forms"
    sqlite3 "$d/results.db" "SELECT f.signature, m.detailed, m.hits FROM forms m
      JOIN findings f ON f.id = m.finding ORDER BY f.signature, m.detailed"
    echo "== finding_configs"
    sqlite3 "$d/results.db" "SELECT f.signature, c.config, c.lowering_version, c.class,
      c.signature, c.reproduces FROM finding_configs c JOIN findings f ON f.id = c.finding
      ORDER BY f.signature, c.config"
    echo "== runs"
    sqlite3 "$d/results.db" "SELECT asyncfuzz_version, tools, device, config, cases, executed
      FROM runs ORDER BY id"
    sqlite3 "$d/results.db" "SELECT config, lowering_version, cases, executed, failures
      FROM run_configs ORDER BY config"
  } > "$out"
}

fail=0
for c in "${campaigns[@]}"; do
  name=${c%%|*} args=${c#*|}
  for side in old new; do
    bin=$old
    [ "$side" = new ] && bin=$new
    # the same --out name on both sides: replay commands name it
    mkdir -p "$work/$side"
    rm -rf "${work:?}/$side/$name"
    start=$(date +%s%N)
    # shellcheck disable=SC2086 # the arguments are words
    (cd "$work/$side" && "$bin" campaign $args --out "$name" > "$name.log" 2>&1)
    end=$(date +%s%N)
    normalize "$work/$side/$name" "$work/$side/$name.log" "$work/$side-$name.norm"
    printf '%-18s %s: %4d ms, %s lines\n' "$name" "$side" $(((end - start) / 1000000)) \
      "$(wc -l < "$work/$side-$name.norm")"
  done
  if cmp -s "$work/old-$name.norm" "$work/new-$name.norm"; then
    echo "$name: identical ($(grep -c '^== failures/' "$work/new-$name.norm") failure files)"
  else
    echo "$name: DIFFERENT (diff $work/old-$name.norm $work/new-$name.norm)"
    diff "$work/old-$name.norm" "$work/new-$name.norm" | head -20
    fail=1
  fi
done
exit $fail
