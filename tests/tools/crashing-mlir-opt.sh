#!/bin/sh
# A test double around the real mlir-opt ($REAL_MLIR_OPT), only for mlir_outcome_test.sh: a
# real mlir-opt cannot be made to crash or hang on demand, and the harness's handling of both
# must be tested. An input holding the marker spin 777 crashes it (with an assertion message
# on stderr, as an LLVM assertion build prints); 778 hangs it. Everything else is the real tool.
for a in "$@"; do
  case "$a" in
  *.mlir)
    if grep -q "arith.constant 777 : i32" "$a" 2>/dev/null; then
      echo "mlir-opt: /build/llvm/mlir/lib/Fake.cpp:123: void f(): Assertion \`op && \"marker 777\"' failed." >&2
      kill -SEGV $$
    fi
    if grep -q "arith.constant 778 : i32" "$a" 2>/dev/null; then
      sleep 600
    fi
    ;;
  esac
done
exec "$REAL_MLIR_OPT" "$@"
