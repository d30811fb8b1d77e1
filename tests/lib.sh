# tests/lib.sh: what the shell tests share about the tools they need. Sourced:
#   . "$SRC/tests/lib.sh"
# A part of a test that cannot run says so with `skip:` and its reason. CI runs where
# scripts/bootstrap.sh --test has installed every tool: there, a part skipped for want of one
# fails the test (a skip would hide a check). What no bootstrap gives (a GPU, root) is always a
# skip (af_skip_env).

# af_tool NAME: prints the path of tool NAME and succeeds, or fails when it is missing: on PATH,
# else, for NAME-VV (mlir-opt-22, llc-22, ld.lld-22), as NAME in /usr/lib/llvm-VV/bin.
# ASYNCFUZZ_TEST_HIDE lists tools (space-separated) to treat as missing everywhere, as on a
# machine without them (tests/skips_test.sh).
af_tool() {
  case " ${ASYNCFUZZ_TEST_HIDE:-} " in *" $1 "*) return 1 ;; esac
  command -v "$1" 2>/dev/null && return 0
  case "$1" in
    *-[0-9][0-9])
      [ -x "/usr/lib/llvm-${1##*-}/bin/${1%-*}" ] || return 1
      echo "/usr/lib/llvm-${1##*-}/bin/${1%-*}"
      return 0
      ;;
  esac
  return 1
}

# af_skip WHAT WHY: WHAT is skipped for want of something the bootstrap installs: prints
# "skip: WHAT: WHY" and returns 1; under CI prints "FAIL: WHAT skipped under CI: WHY" and exits 1.
af_skip() {
  if [ -n "${CI:-}" ]; then
    echo "FAIL: $1 skipped under CI: $2"
    exit 1
  fi
  echo "skip: $1: $2"
  return 1
}

# af_need WHAT TOOL...: succeeds when every TOOL is there (af_tool); otherwise af_skip WHAT.
af_need() {
  local what=$1 t missing=""
  shift
  for t in "$@"; do af_tool "$t" >/dev/null || missing="$missing $t"; done
  [ -z "$missing" ] && return 0
  af_skip "$what" "no${missing} (scripts/bootstrap.sh --test installs it)"
}

# af_need_or_exit WHAT TOOL...: af_need for a whole test: exits 77 (ctest's skip) when a tool is
# missing (under CI, 1).
af_need_or_exit() {
  af_need "$@" || exit 77
}

# af_skip_env WHAT WHY: skipped for what no bootstrap gives (a GPU, root): always a skip.
af_skip_env() { echo "skip: $1: $2"; }
