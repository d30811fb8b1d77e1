#!/usr/bin/env bash
# Fault power under steering: every builtin fault, run under each configuration's final steering
# (summary.json's "steering" of a campaign: what its cases were generated without at the end),
# CASES cases each from SEED, cuda flavour, no database, no reduction, no further steering; and
# once unsteered on the same seeds. A fault is caught under a steering when it fails at least a
# quarter of its unsteered count there (docs/database.md, steering: it must not take the bugs away).
# usage: steering_power.sh ASYNCFUZZ SUMMARY [CASES [SEED]]   (default 1500 cases, seed 9;
#        STEERING_POWER_FAULTS="F1 F2": only those faults)
# Prints the steerings (each with the configurations that share it), then per fault its
# unsteered failing cases and, per steering, the failing cases and caught/MISSED; then the
# (fault, configuration) pairs caught, and each one missed. Then the excuses: for each missed
# pair, the entries of its steering without which the fault is caught (each run again with one
# entry left out), the findings that steered each there (summary.json's "by"), and, where the
# campaign saved the case that made one steer there (failures/DIR/steered-CONF.json beside the
# summary), that case checked on the configuration (asyncfuzz check --lowering): "fails there
# with its signature" is the evidence that the configuration has the bug the fault imitates.
# A missed pair no one entry excuses is listed as NOT EXCUSED.
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
outdir=$(dirname "$sum")

# configuration NAME's "by" rows: ENTRY TAB SIGNATURE TAB TRIGGER; and its --lowering spec
conf_line() {
  if [ "$1" = all ]; then grep '^ *"all": {' "$sum"; else grep "^ *{\"name\": \"$1\"" "$sum"; fi
}
by_rows() {
  conf_line "$1" | sed -n 's/.*"by": \[\[\(.*\)\]\]}, "mix".*/\1/p' |
    awk '{ n = split($0, r, /"\], \[/); for (i = 1; i <= n; i++) { x = r[i]; sub(/^"/, "", x);
           sub(/"$/, "", x); gsub(/", "/, "\t", x); gsub(/\\"/, "\"", x); gsub(/\\\\/, "\\", x);
           print x } }'
}
conf_lowering() { # (without a matrix, the campaign's first lowering)
  if [ "$1" = all ]; then
    grep -m1 '^ *{"name": .*"lowering": ' "$sum" | sed -n 's/.*"lowering": "\([^"]*\)".*/\1/p'
  else
    conf_line "$1" | sed -n 's/.*"lowering": "\([^"]*\)".*/\1/p'
  fi
}

failing() { # ARGS...: the failing cases of a campaign with these extra arguments
  "$af" campaign --lowering "builtin:fault=$f" --cases "$cases" --seed "$seed" --abi cuda --no-db \
    --no-reduce --no-avoid --quiet --out "$tmp/o" "$@" < /dev/null > "$tmp/out" 2>&1
  local rc=$?
  [ $rc -le 1 ] || { echo "steering_power.sh: the campaign failed (exit $rc): $(tail -1 "$tmp/out")" >&2; exit 2; }
  sed -n 's/.*"cases": [0-9]*, "executed_cases": [0-9]*, "seconds": [0-9.]*, "failures": \([0-9]*\),.*/\1/p' \
    "$tmp/o/summary.json"
  rm -rf "$tmp/o"
}

faults=${STEERING_POWER_FAULTS:-$("$af" lower --list-faults | awk 'NR > 1 && $1 != "" { print $1 }')}
printf '%-22s %9s' fault unsteered
for ((i = 1; i <= ng; i++)); do printf ' %14s' "S$i"; done
echo
caught=0 pairs=0
: > "$tmp/missed"
: > "$tmp/excuse"
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
      printf '%s\t%s\t%s\n' "$f" "$g" "$base" >> "$tmp/excuse"
    fi
  done < "$tmp/groups"
  echo
done
echo "caught: $caught of $pairs (fault, configuration) pairs"
if [ -s "$tmp/missed" ]; then
  echo "missed:"
  cat "$tmp/missed"
fi

# the excuses: each missed (fault, steering). A fault's own trigger (lower --list-faults: what a
# finding of the same bug makes steering avoid) left out: caught then, the findings that steered
# it excuse the miss, each shown failing on the configuration by the case that made it steer
# there. Not caught, or no trigger in the steering: each other entry left out in turn names the
# steering that takes the fault's cases away (collateral: NOT EXCUSED).
[ -s "$tmp/excuse" ] || exit 0
"$af" lower --list-faults | sed -n 's/^  \([a-z_0-9]*\) .*; its trigger: \(.*\)/\1\t\2/p' > "$tmp/trig"
# the findings that steered entry E on the configurations of steering G, and their triggers' checks
findings_of() {
  local e=$1 g=$2 conf sig trig key low
  awk -F'\t' -v a="$(sed -n "${g}p" "$tmp/groups")" '$2 == a { print $1 }' "$tmp/confs" > "$tmp/on"
  while IFS= read -r conf; do
    by_rows "$conf" | awk -F'\t' -v e="$e" '$1 == e' > "$tmp/why"
    [ -s "$tmp/why" ] || { echo "      on $conf: no finding listed (an older summary?)"; continue; }
    while IFS=$'\t' read -r _ sig trig; do
      if [ -z "$trig" ] || [ ! -f "$outdir/$trig" ]; then
        echo "      on $conf: $sig (known: its cases are in the database)"
        continue
      fi
      key=$(printf '%s %s' "$conf" "$trig" | cksum | cut -d' ' -f1)
      if [ ! -f "$tmp/v$key" ]; then
        low=$(conf_lowering "$conf")
        "$af" check --lowering "$low" "$outdir/$trig" < /dev/null > "$tmp/chk" 2>&1
        # (the check names the bug as the campaign did, but for the lowering's own name)
        if grep -qF -- "${sig#*|}" "$tmp/chk"; then
          echo "fails there with its signature" > "$tmp/v$key"
        else
          echo "does NOT fail there with it (but: $(sed -n 's/^ *signature: //p' "$tmp/chk" |
            sort -u | paste -sd ' ' -))" > "$tmp/v$key"
        fi
      fi
      echo "      on $conf: $sig; its trigger $trig $(cat "$tmp/v$key")"
    done < "$tmp/why"
  done < "$tmp/on"
}
echo "excuses (the fault's own trigger left out of the steering; else each other entry in turn):"
unexcused=0 excused=0
while IFS=$'\t' read -r f g base; do
  args=$(sed -n "${g}p" "$tmp/groups")
  eval "set -- $args"
  own=() rest=()
  words=$(awk -F'\t' -v f="$f" '$1 == f { print $2 }' "$tmp/trig")
  while [ $# -gt 0 ]; do
    hit=0
    IFS=, read -r -a ws <<< "$words"
    for w in "${ws[@]}"; do [ -n "$w" ] && [[ "$2" == *"$w"* ]] && hit=1; done
    if [ $hit -eq 1 ]; then own+=("$2"); else rest+=("$2"); fi
    shift 2
  done
  keep=()
  for x in "${rest[@]}"; do keep+=(--avoid "$x"); done
  n=0
  [ ${#own[@]} -gt 0 ] && n=$(failing "${keep[@]}")
  if [ ${#own[@]} -gt 0 ] && [ $((4 * n)) -ge "$base" ]; then
    excused=$((excused + 1))
    echo "  $f (S$g): excused, its own trigger: without $(printf "'%s' " "${own[@]}")$n failing cases (unsteered $base)"
    for e in "${own[@]}"; do
      echo "    '$e' steered by:"
      findings_of "$e" "$g"
    done
    continue
  fi
  unexcused=$((unexcused + 1))
  msg="  $f (S$g): NOT EXCUSED"
  [ ${#own[@]} -gt 0 ] && msg="$msg (its own trigger $(printf "'%s' " "${own[@]}")left out too: $n failing cases)"
  echo "$msg"
  any=0
  for e in "${rest[@]}"; do
    less=()
    for x in "${rest[@]}"; do [ "$x" = "$e" ] || less+=(--avoid "$x"); done
    n=$(failing "${less[@]}")
    [ $((4 * n)) -ge "$base" ] || continue
    any=1
    echo "    collateral: caught without '$e' ($n failing cases); steered by:"
    findings_of "$e" "$g"
  done
  [ $any -eq 1 ] || echo "    no one other entry left out gets it caught"
done < "$tmp/excuse"
echo "missed (fault, steering) pairs: $excused excused by their own trigger, $unexcused not excused"
