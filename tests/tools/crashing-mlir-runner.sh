#!/bin/sh
# A test double around the real mlir-runner ($REAL_MLIR_RUNNER), only for
# mlir_outcome_test.sh: a module holding the marker spin 779 crashes it, so the harness's
# one-case-per-process fallback can be tested. Everything else is the real tool.
for a in "$@"; do
  case "$a" in
  *.mlir)
    if grep -q "779 : i32" "$a" 2>/dev/null; then
      kill -SEGV $$
    fi
    ;;
  esac
done
exec "$REAL_MLIR_RUNNER" "$@"
