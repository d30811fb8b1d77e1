#!/bin/sh
# A test double around the real mlir-opt ($REAL_MLIR_OPT), only for mlir_outcome_test.sh: a
# real mlir-opt cannot be made to crash or hang on demand, and the harness's handling of both
# must be tested. An input holding the marker spin 777 crashes it (with an assertion message
# on stderr, as an LLVM assertion build prints); 778 hangs it. With CRASH_ON_RANKED=1, an input
# with a memref of rank 2 or 3 crashes it, with a stack dump as a release build prints (a crash
# that needs the ranked form); with CRASH_ON_RANKED=dynamic, one with a memref<?x?x...> (a crash
# that needs dynamic extents). Everything else is the real tool. With OPT_RUN_LOG, each run
# adds its arguments as a line to that file.
[ -n "${OPT_RUN_LOG:-}" ] && echo "run $*" >> "$OPT_RUN_LOG"
for a in "$@"; do
  case "$a" in
  *.mlir)
    if grep -q "arith.constant 777 : i32" "$a" 2>/dev/null; then
      echo "mlir-opt: /build/llvm/mlir/lib/Fake.cpp:123: void f(): Assertion \`op && \"marker 777\"' failed." >&2
      kill -SEGV $$
    fi
    if { [ "${CRASH_ON_RANKED:-}" = 1 ] && grep -Eq 'memref<[0-9?]+x[0-9?]+x' "$a" 2>/dev/null; } ||
      { [ "${CRASH_ON_RANKED:-}" = dynamic ] && grep -q 'memref<?x?x' "$a" 2>/dev/null; }; then
      cat >&2 <<'STACK'
PLEASE submit a bug report to https://github.com/llvm/llvm-project/issues/ and include the crash backtrace.
Stack dump:
 #0 0x00007f44d54b8786 llvm::sys::PrintStackTrace(llvm::raw_ostream&, int) (/lib/x86_64-linux-gnu/libLLVM.so.22.1+0x4eb8786)
 #1 0x00007f44d54b94f4 (/lib/x86_64-linux-gnu/libLLVM.so.22.1+0x4eb94f4)
 #2 0x00007f44d045a050 (/lib/x86_64-linux-gnu/libc.so.6+0x3c050)
 #3 0x00007f44df690cd3 mlir::Fake::onRanked() const (/usr/lib/llvm-22/bin/../lib/libMLIR.so.22.1+0x6090cd3)
 #4 0x00007f44de02cd2e mlir::memref::FakeOp::build(mlir::OpBuilder&) (/usr/lib/llvm-22/bin/../lib/libMLIR.so.22.1+0x4a2cd2e)
STACK
      kill -SEGV $$
    fi
    if grep -q "arith.constant 778 : i32" "$a" 2>/dev/null; then
      sleep 600
    fi
    ;;
  esac
done
exec "$REAL_MLIR_OPT" "$@"
