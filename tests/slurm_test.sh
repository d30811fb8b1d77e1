#!/usr/bin/env bash
# Campaigns on a real Slurm (docs/slurm.md): bad input to `slurm submit` and `campaign --shard`
# first; then a private single-node Slurm from Debian's packages (slurmctld, slurmd,
# slurm-client, munge), started as root with its own ports, paths and munged: 4 shards and the
# merge job, the merged database checked against the shards'; then a task cancelled mid-run,
# the array submitted again, and the shard resumed. Every daemon started is stopped by PID.
# Skipped (77) where Slurm is not installed or the user is not root.
# usage: slurm_test.sh ASYNCFUZZ
set -u
af=$1
. "$(dirname "$0")/lib.sh"
tmp=$(mktemp -d)
chmod 755 "$tmp" # munged wants the socket's directories not writable by others
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2> /dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
q() { sqlite3 "$@"; }

# ---- bad input: each a clear error and its own exit code, nothing started ----
"$af" slurm submit --out "$tmp/x" > "$tmp/out" 2>&1
[ $? -eq 2 ] && grep -q -- '--shards N (1 to 10000 tasks) is required' "$tmp/out" || bad "no --shards: $(cat "$tmp/out")"
"$af" slurm submit --shards 2 --out "$tmp/x" -- --seed 5 > "$tmp/out" 2>&1
[ $? -eq 2 ] && grep -q 'campaign option --seed: each task sets it itself' "$tmp/out" || bad "--seed passed through: $(cat "$tmp/out")"
"$af" slurm submit --shards 0 --out "$tmp/x" > "$tmp/out" 2>&1
[ $? -eq 2 ] || bad "--shards 0: $(cat "$tmp/out")"
for v in 4/4 -1/4 1/0 x 1; do
  "$af" campaign --shard "$v" --cases 1 --no-db --out "$tmp/x" > "$tmp/out" 2>&1
  [ $? -eq 2 ] && grep -qF -- "--shard $v: I/N" "$tmp/out" || bad "--shard $v: $(cat "$tmp/out")"
done
"$af" campaign --shard 1/4 --seed 1000 --cases 8 --no-db --out "$tmp/s" > /dev/null 2>&1
"$af" campaign --shard 1/3 --resume --cases 8 --no-db --out "$tmp/s" > "$tmp/out" 2>&1
[ $? -eq 3 ] && grep -q 'is shard 1/4, not 1/3: its seeds would overlap' "$tmp/out" || bad "resume with another shard count: $(cat "$tmp/out")"
# a shard's state keeps every digit of a seed past 2^53: it goes on from the exact next one
"$af" campaign --shard 2/3 --seed 18446744073709551000 --cases 4 --no-db --out "$tmp/big" > /dev/null 2>&1
grep -q '"next_seed": 18446744073709551012, "shard": 2, "shards": 3, "cases": 4,' "$tmp/big/campaign-state.json" ||
  bad "big seed: $(cat "$tmp/big/campaign-state.json")"
"$af" campaign --shard 2/3 --resume --cases 6 --no-db --out "$tmp/big" > /dev/null 2> "$tmp/err"
grep -q 'seed 18446744073709551012,' "$tmp/err" &&
  grep -q '"next_seed": 18446744073709551018, "shard": 2, "shards": 3, "cases": 6,' "$tmp/big/campaign-state.json" ||
  bad "big seed resumed: $(cat "$tmp/big/campaign-state.json") $(head -1 "$tmp/err")"
# --dry-run writes the scripts and submits nothing; without sbatch they are written too (exit 5)
"$af" slurm submit --shards 3 --limit 2 --gres gpu:1 --time 1:00:00 --seed 7 --out "$tmp/d" \
  --dry-run -- --seconds 60 --lowering "builtin:fault=drop_extra_deps" > "$tmp/out" 2>&1 || bad "--dry-run: $(cat "$tmp/out")"
for want in '#SBATCH --array=0-2%2' '#SBATCH --gres=gpu:1' '#SBATCH --time=1:00:00' \
  'campaign --shard "$shard/3" --seed 7 --out "$out" $resume '"'--seconds' '60' '--lowering' 'builtin:fault=drop_extra_deps'"; do
  grep -qF -- "$want" "$tmp/d/asyncfuzz-array.sh" || bad "array script lacks: $want"
done
grep -q 'db merge "$f" --db "$db"' "$tmp/d/asyncfuzz-merge.sh" || bad "merge script: $(head -20 "$tmp/d/asyncfuzz-merge.sh")"
PATH=/nonexistent "$af" slurm submit --shards 2 --out "$tmp/n" > "$tmp/out" 2>&1
[ $? -eq 5 ] && grep -q 'sbatch not found' "$tmp/out" && [ -x "$tmp/n/asyncfuzz-array.sh" ] ||
  bad "without sbatch: $(cat "$tmp/out")"

# ---- a private Slurm ----
[ "$(id -u)" = 0 ] || { echo "skip: a private Slurm: it needs root"; [ $fail -eq 0 ] && exit 77; exit 1; }
for c in slurmctld slurmd sbatch scontrol scancel sinfo munged mungekey sqlite3; do
  p=$(command -v $c || ls /usr/sbin/$c 2> /dev/null)
  [ -n "$p" ] || { af_skip "a private Slurm" "$c is missing: install slurmctld slurmd slurm-client munge (scripts/bootstrap.sh --test does)"; [ $fail -eq 0 ] && exit 77; exit 1; }
done
export PATH=$PATH:/usr/sbin
host=$(hostname -s)
port=$((20000 + RANDOM % 20000))
m=$tmp/munge
mkdir -p "$m" "$tmp/state" "$tmp/spool"
chmod 755 "$m"
mungekey --create --keyfile="$m/munge.key" > /dev/null 2>&1 || mungekey -c -k "$m/munge.key"
munged -F --force --key-file="$m/munge.key" --socket="$m/munge.socket" --pid-file="$m/munged.pid" \
  --log-file="$m/munged.log" --seed-file="$m/munged.seed" > /dev/null 2>&1 &
pids+=($!)
cat > "$tmp/slurm.conf" << EOF
ClusterName=asyncfuzz
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$m/munge.socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
KillWait=10
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=1000 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$tmp/slurm.conf
for _ in $(seq 50); do [ -S "$m/munge.socket" ] && break; sleep 0.1; done
slurmctld -D > "$tmp/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D > "$tmp/slurmd.out" 2>&1 &
slurmd_pid=$!
pids+=($slurmd_pid)
up=
for _ in $(seq 100); do
  [ "$(sinfo -h -o %T 2> /dev/null)" = idle ] && { up=1; break; }
  sleep 0.2
done
# the last lines of each daemon's log, each under its name
logs() {
  for f in "$tmp/slurmctld.log" "$tmp/slurmctld.out" "$tmp/slurmd.log" "$tmp/slurmd.out" \
    "$m/munged.log"; do
    [ -s "$f" ] || continue
    echo "  --- $(basename "$f"), last lines:"
    tail -n 5 "$f" | sed 's/^/    /'
  done
}
if [ -z "$up" ]; then
  # slurmd that cannot run here (no cgroup filesystem mounted, as in many containers) is the
  # machine's limit, not asyncfuzz's: skip with the reason
  if ! kill -0 "$slurmd_pid" 2> /dev/null && grep -qi cgroup "$tmp/slurmd.log" "$tmp/slurmd.out" 2> /dev/null; then
    echo "skip: a private Slurm: slurmd cannot run on this machine (it needs a cgroup filesystem, and none is mounted):"
    logs
    [ $fail -eq 0 ] && exit 77
    exit 1
  fi
  bad "Slurm did not come up within 20 s (sinfo never showed the node idle):"
  logs
  exit 1
fi
# the state of job $1 (empty when Slurm has forgotten it)
state() { scontrol show job "$1" 2> /dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -1; }
wait_done() { # job id, seconds: until it is no longer pending or running
  for _ in $(seq $(($2 * 5))); do
    case "$(state "$1")" in PENDING | RUNNING | CONFIGURING | COMPLETING) sleep 0.2 ;; *) return 0 ;; esac
  done
  return 1
}

# ---- 4 shards and the merge ----
"$af" slurm submit --shards 4 --seed 1000 --out "$tmp/c" -- --cases 60 \
  --lowering builtin:fault=drop_extra_deps --repro 1 > "$tmp/sub" 2>&1 || bad "submit: $(cat "$tmp/sub")"
array=$(sed -n 's/^submitted: array job \([0-9]*\) .*/\1/p' "$tmp/sub")
merge=$(sed -n 's/.*, merge job \([0-9]*\) after it/\1/p' "$tmp/sub")
[ -n "$array" ] && [ -n "$merge" ] || bad "submit printed no job ids: $(cat "$tmp/sub")"
wait_done "$merge" 240 || bad "the merge job did not end: $(squeue 2>&1 | head)"
db=$tmp/c/results.db
[ -f "$db" ] && [ -f "$tmp/c/report.html" ] && [ -f "$tmp/c/junit.xml" ] ||
  bad "merge: no database, report or JUnit file: $(cat "$tmp/c/logs/merge.log" 2>&1 | tail -5)"
# (db list: the lowering on a finding's line, its cause on the next)
grep -q '^new findings:' "$tmp/c/logs/merge.log" && grep -q ' builtin:fault=drop_extra_deps$' "$tmp/c/logs/merge.log" &&
  grep -q '^ *missing-edge|' "$tmp/c/logs/merge.log" ||
  bad "merge log lists no new findings: $(tail -5 "$tmp/c/logs/merge.log")"
grep -q '4 of 4 shard databases merged' "$tmp/c/logs/merge.log" || bad "merge: $(head -3 "$tmp/c/logs/merge.log")"
# every shard's findings and occurrences, once
sigs_shards=$(for i in 0 1 2 3; do q "$tmp/c/shard-$i/results.db" 'SELECT signature FROM findings'; done | sort -u)
[ -n "$sigs_shards" ] && [ "$sigs_shards" = "$(q "$db" 'SELECT signature FROM findings ORDER BY signature' | sort)" ] ||
  bad "merged findings differ from the shards'"
occ=0 hits=0
for i in 0 1 2 3; do
  occ=$((occ + $(q "$tmp/c/shard-$i/results.db" 'SELECT count(*) FROM occurrences')))
  hits=$((hits + $(q "$tmp/c/shard-$i/results.db" 'SELECT coalesce(sum(count), 0) FROM findings')))
done
[ "$(q "$db" 'SELECT count(*) FROM occurrences')" = "$occ" ] || bad "merged occurrences: $(q "$db" 'SELECT count(*) FROM occurrences'), shards $occ"
[ "$(q "$db" 'SELECT sum(count) FROM findings')" = "$hits" ] || bad "merged counts: $(q "$db" 'SELECT sum(count) FROM findings'), shards $hits"
[ "$(q "$db" 'SELECT count(*) FROM runs')" = 4 ] || bad "merged runs: $(q "$db" 'SELECT count(*) FROM runs')"
# the shards' case seeds: shard I has SEED + I + 4k only, so no two shards share one
for i in 0 1 2 3; do
  n=$(q "$tmp/c/shard-$i/results.db" "SELECT count(*) FROM occurrences WHERE case_seed <> '*' AND (case_seed - 1000) % 4 <> $i")
  [ "$n" = 0 ] || bad "shard $i: $n case seeds of another shard"
  # (the seed the shard goes on from is SEED + 4 * 60: its next case, 1240 + I)
  grep -q '"next_seed": 1240, "shard": '"$i"', "shards": 4, "cases": 60' "$tmp/c/shard-$i/campaign-state.json" ||
    bad "shard $i state: $(cat "$tmp/c/shard-$i/campaign-state.json")"
done
[ "$(q "$db" "SELECT count(DISTINCT case_seed) FROM occurrences WHERE case_seed <> '*'")" = \
  "$(q "$db" "SELECT count(*) FROM (SELECT DISTINCT case_seed, run FROM occurrences WHERE case_seed <> '*')")" ] ||
  bad "a case seed occurs in two shards"
# merging again changes nothing
before=$(q "$db" 'SELECT count(*), sum(count) FROM findings; SELECT count(*) FROM occurrences')
bash "$tmp/c/asyncfuzz-merge.sh" > /dev/null 2>&1
[ "$(q "$db" 'SELECT count(*), sum(count) FROM findings; SELECT count(*) FROM occurrences')" = "$before" ] ||
  bad "merging twice changed the database"

# ---- a task cancelled mid-run goes on when the array is submitted again ----
sub() { "$af" slurm submit --shards 2 --seed 5000 --out "$tmp/r" -- --seconds 16 \
  --lowering builtin:fault=drop_extra_deps --repro 1 --no-reduce > "$tmp/sub" 2>&1; }
sub || bad "submit (resume): $(cat "$tmp/sub")"
array=$(sed -n 's/^submitted: array job \([0-9]*\) .*/\1/p' "$tmp/sub")
merge=$(sed -n 's/.*, merge job \([0-9]*\) after it/\1/p' "$tmp/sub")
st=$tmp/r/shard-1/campaign-state.json
for _ in $(seq 150); do # until shard 1 has written its state with some cases
  [ -f "$st" ] && grep -q '"cases": [1-9]' "$st" && break
  sleep 0.2
done
scancel "${array}_1" || bad "scancel ${array}_1"
wait_done "$merge" 120 || bad "the merge job did not end after the cancel"
cases1=$(sed -n 's/.*"cases": \([0-9]*\).*/\1/p' "$st")
next1=$(sed -n 's/.*"next_seed": \([0-9]*\).*/\1/p' "$st")
secs1=$(sed -n 's/.*"seconds": \([0-9]*\).*/\1/p' "$st")
[ -n "$cases1" ] && [ "${secs1:-99}" -lt 16 ] || bad "the cancelled shard: state $(cat "$st" 2>&1)"
runs0=$(q "$tmp/r/shard-0/results.db" 'SELECT count(*) FROM runs')
sub || bad "submit again: $(cat "$tmp/sub")"
merge=$(sed -n 's/.*, merge job \([0-9]*\) after it/\1/p' "$tmp/sub")
wait_done "$merge" 120 || bad "the second merge job did not end"
grep -q "shard 1 of 2.*(resumed)" "$tmp/r/logs/shard-1.log" && grep -q "asyncfuzz campaign: resumed;" "$tmp/r/logs/shard-1.log" ||
  bad "shard 1 did not resume: $(tail -5 "$tmp/r/logs/shard-1.log")"
# it went on from its seed, for what was left of its 16 seconds, and kept its first run's work
[ "$(q "$tmp/r/shard-1/results.db" 'SELECT count(*) FROM runs')" = 2 ] || bad "shard 1: not two runs"
low=$(q "$tmp/r/shard-1/results.db" "SELECT min(CAST(case_seed AS INTEGER)) FROM occurrences WHERE case_seed <> '*' AND run = 2")
[ -z "$low" ] || [ "$low" -ge "$next1" ] || bad "shard 1 restarted: a case seed $low below $next1"
cases2=$(sed -n 's/.*"cases": \([0-9]*\).*/\1/p' "$st")
[ "${cases2:-0}" -gt "${cases1:-0}" ] || bad "shard 1: $cases2 cases after resuming, $cases1 before"
# shard 0 had done its work: nothing again
grep -q "has done its seconds already: nothing to resume" "$tmp/r/logs/shard-0.log" &&
  [ "$(q "$tmp/r/shard-0/results.db" 'SELECT count(*) FROM runs')" = "$runs0" ] ||
  bad "shard 0 ran again: $(tail -3 "$tmp/r/logs/shard-0.log")"
[ "$(q "$tmp/r/results.db" 'SELECT count(*) FROM runs')" = 3 ] || bad "the central database: $(q "$tmp/r/results.db" 'SELECT count(*) FROM runs') runs, not 3"

# ---- the controller gone: exit 5, the scripts written ----
kill "${pids[1]}" 2> /dev/null
wait "${pids[1]}" 2> /dev/null
timeout 120 "$af" slurm submit --shards 2 --out "$tmp/gone" > "$tmp/out" 2>&1
rc=$?
[ $rc -eq 5 ] && grep -q 'sbatch .* failed' "$tmp/out" && [ -x "$tmp/gone/asyncfuzz-array.sh" ] ||
  bad "an unreachable controller: exit $rc: $(cat "$tmp/out")"

if [ "$fail" -eq 0 ]; then echo "slurm: ok"; else echo "slurm: $fail failure(s)"; fi
[ "$fail" -eq 0 ]
