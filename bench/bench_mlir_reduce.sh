#!/usr/bin/env bash
# asyncfuzz reduce against mlir-reduce (mlir-22-tools) on the same failing case of the real
# lowering: the first #170833-shaped failure (runtime_error, mgpuEventSynchronize given a
# stream) of a short mlir-opt campaign. asyncfuzz reduces the Case; mlir-reduce reduces the
# rendered .mlir with an equivalent interestingness script (the same pipeline, mlir-runner on
# the simulator, the same runtime error in the trace). Prints sizes (host-side gpu/async ops)
# and wall times side by side.
# usage: bench/bench_mlir_reduce.sh ASYNCFUZZ [campaign seed (default 20261122)]
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
set -u
af=$(readlink -f "$1") seed=${2:-20261122}
opt=$(command -v mlir-opt-22 || echo /usr/lib/llvm-22/bin/mlir-opt)
bin=$(dirname "$(readlink -f "$opt")")
reducer=$bin/mlir-reduce
utils=$(ls "$bin"/../lib/libmlir_runner_utils.so* 2>/dev/null | head -1)
rt=$(dirname "$af")/libasyncfuzz_rt.so
[ -x "$opt" ] && [ -x "$reducer" ] && [ -n "$utils" ] || { echo "bench_mlir_reduce: mlir-22-tools not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$af" campaign --lowering mlir-opt --cases 640 --seed "$seed" --no-db --no-reduce --schedules lazy \
  --out "$tmp/c" --quiet > /dev/null 2>&1
info=$(grep -l "^signature: mlir-opt|runtime_error|mgpuEventSynchronize|.*given=stream" "$tmp"/c/failures/*/info.txt | head -1)
[ -n "$info" ] || { echo "bench_mlir_reduce: no such failure in 640 cases of seed $seed"; exit 1; }
dir=$(dirname "$info")
case=$dir/first.json
sched=$(sed -n 's/^first: first.json (case seed [0-9]*, schedule \([a-z]*@[0-9]*\),.*/\1/p' "$info")
ops() { grep -cE '^ *(%[^=]*= )?(gpu\.(alloc|dealloc|memcpy|memset|launch_func|wait)|async\.(execute|await|yield)|memref\.(alloc|dealloc)|func\.call @asyncfuzz_observe)' "$1"; }
"$af" render "$case" > "$tmp/in.mlir"
pipeline=$("$af" lower --help | sed -n '/^  default/{n;s/^ *//;p}')
cat > "$tmp/interesting.sh" <<EOS
#!/bin/sh
# interesting (exit 1) when the real lowering of \$1, run on the simulator, gives the same
# runtime error: mgpuEventSynchronize handed a stream
"$opt" "\$1" --pass-pipeline='$pipeline' -o "\$1.ll.mlir" 2>/dev/null || exit 0
env ASYNCFUZZ_POLICY=${sched%@*} ASYNCFUZZ_SCHED_SEED=${sched#*@} ASYNCFUZZ_TRACE="\$1.trace" \\
  timeout 60 "$bin/mlir-runner" -O0 -e main --entry-point-result=void \\
  --shared-libs=$rt,$utils "\$1.ll.mlir" > /dev/null 2>&1
grep -q 'mgpuEventSynchronize(s[0-9]*) ! CUDA_ERROR_INVALID_HANDLE (handle of the wrong kind)' "\$1.trace" && exit 1
exit 0
EOS
chmod +x "$tmp/interesting.sh"
"$tmp/interesting.sh" "$tmp/in.mlir"
[ $? -eq 1 ] || { echo "bench_mlir_reduce: the interestingness script does not see the failure"; exit 1; }
t0=$(date +%s.%N)
"$af" reduce "$case" --lowering mlir-opt --schedules "$sched" --repro 1 -o "$tmp/a.json" --mlir "$tmp/a.mlir" 2> "$tmp/a.err"
t1=$(date +%s.%N)
(cd "$tmp" && timeout 1800 "$reducer" in.mlir --reduction-tree="traversal-mode=0 test=$tmp/interesting.sh" -o "$tmp/m.mlir" > "$tmp/m.out" 2>&1)
rc=$?
t2=$(date +%s.%N)
echo "bench_mlir_reduce: $(basename "$dir") $(sed -n 's/^signature: //p' "$info"), schedule $sched"
printf "%-14s %10s %12s %10s\n" "reducer" "host ops" "lines" "seconds"
printf "%-14s %10s %12s %10s\n" "input" "$(ops "$tmp/in.mlir")" "$(wc -l < "$tmp/in.mlir")" "-"
printf "%-14s %10s %12s %10.1f\n" "asyncfuzz" "$(ops "$tmp/a.mlir")" "$(grep -vc '^//' "$tmp/a.mlir")" "$(echo "$t1 - $t0" | awk '{print $1 - $3}')"
if [ $rc -eq 0 ] && [ -s "$tmp/m.mlir" ]; then
  printf "%-14s %10s %12s %10.1f\n" "mlir-reduce" "$(ops "$tmp/m.mlir")" "$(wc -l < "$tmp/m.mlir")" "$(echo "$t2 - $t1" | awk '{print $1 - $3}')"
else
  top=$(grep -E '^ *#[0-9]+ 0x[0-9a-f]+ .*mlir::' "$tmp/m.out" | grep -v 'detail::walk' | head -1 |
    sed -E 's/^ *#[0-9]+ 0x[0-9a-f]+ //; s/\(.*$//')
  echo "mlir-reduce: no result: exit $rc after $(echo "$t2 - $t1" | awk '{print $1 - $3}') s (first frame: ${top:-none}; last message: $(grep -m1 'error:' "$tmp/m.out" | cut -c1-120))"
fi
