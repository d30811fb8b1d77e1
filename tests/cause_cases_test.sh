#!/bin/sh
# cause_cases: small cases whose failures under a builtin fault must be named by the link that
# lost the order, or the op that wrote the wrong bytes (docs/signatures.md), not by a victim or
# a crossing on the way, nor by a view that only seems to explain them. Each case
# passes under the correct lowering, and fails with the signature given under the fault.
# usage: cause_cases_test.sh ASYNCFUZZ SRCDIR
set -u
af=$1
data=$2/tests/data
fail=0
while read -r file fault want; do
  [ -n "$file" ] || continue
  if ! "$af" check "$data/$file" >/dev/null 2>&1; then
    echo "FAIL: $file fails under the correct lowering"
    fail=$((fail + 1))
  fi
  got=$("$af" check "$data/$file" --lowering "builtin:fault=$fault" 2>&1 |
    sed -n 's/^ *signature: //p' | sort -u)
  if [ "$got" != "builtin:fault=$fault|$want" ]; then
    echo "FAIL: $file under $fault: want builtin:fault=$fault|$want, got:"
    echo "$got" | sed 's/^/  /'
    fail=$((fail + 1))
  fi
done <<'TABLE'
cause-loop-body-extra-dep.json drop_extra_deps missing-edge|extra-dep
cause-loop-body-extra-dep.json loop_carried_initial missing-edge|loop-carried|scf.for
cause-loop-chain-carried.json loop_carried_initial missing-edge|loop-carried|scf.for
cause-loop-copy-stream.json copy_wrong_stream missing-edge|own-dep|gpu.memcpy async
cause-dealloc-two-deps.json drop_extra_deps missing-edge|extra-dep
cause-dealloc-two-deps.json free_unordered missing-edge|dealloc-order|gpu.dealloc async
cause-copy-half-landed.json copy_size_i32 wrong_result|gpu.memcpy i64
TABLE
[ "$fail" -eq 0 ] || { echo "cause_cases: $fail failure(s)"; exit 1; }
echo "cause_cases: all passed"
