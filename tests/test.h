/*
 * test.h: the tiny assertion layer of asyncfuzz's tests (after libuv's test runner): each
 * test binary is its own process run by ctest; a failed check prints both operands and the
 * location, and the binary exits non-zero. Exit code 77 means "skipped" (with a reason).
 */
#ifndef ASYNCFUZZ_TEST_H
#define ASYNCFUZZ_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failures;

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);                     \
      test_failures++;                                                                             \
    }                                                                                              \
  } while (0)

#define CHECK_EQ(a, b)                                                                             \
  do {                                                                                             \
    long long va_ = (long long)(a), vb_ = (long long)(b);                                          \
    if (va_ != vb_) {                                                                              \
      fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %s (%lld vs %lld)\n", __FILE__, __LINE__, #a, \
              #b, va_, vb_);                                                                       \
      test_failures++;                                                                             \
    }                                                                                              \
  } while (0)

#define CHECK_STR(a, b)                                                                            \
  do {                                                                                             \
    const char *sa_ = (a), *sb_ = (b);                                                             \
    if (sa_ == NULL || sb_ == NULL || strcmp(sa_, sb_) != 0) {                                     \
      fprintf(stderr, "%s:%d: CHECK_STR failed: %s == %s\n  got:      %s\n  expected: %s\n",       \
              __FILE__, __LINE__, #a, #b, sa_ ? sa_ : "(null)", sb_ ? sb_ : "(null)");             \
      test_failures++;                                                                             \
    }                                                                                              \
  } while (0)

#define CHECK_CONTAINS(hay, needle)                                                                \
  do {                                                                                             \
    const char *h_ = (hay), *n_ = (needle);                                                        \
    if (h_ == NULL || strstr(h_, n_) == NULL) {                                                    \
      fprintf(stderr, "%s:%d: CHECK_CONTAINS failed: \"%s\" not in \"%s\"\n", __FILE__, __LINE__,  \
              n_, h_ ? h_ : "(null)");                                                             \
      test_failures++;                                                                             \
    }                                                                                              \
  } while (0)

/* A part of a test skipped for want of a tool the bootstrap installs (mlir-opt): prints "skip:"
 * and the reason; under CI (where scripts/bootstrap.sh --test ran) a failure instead, as in
 * tests/lib.sh. */
static inline void test_skip(const char *what, const char *why) {
  const char *ci = getenv("CI");
  if (ci && *ci) {
    fprintf(stderr, "FAIL: %s skipped under CI: %s\n", what, why);
    test_failures++;
  } else {
    printf("skip: %s: %s\n", what, why);
  }
}

/* Ends a test binary: prints a one-line result and returns its exit code. */
#define TEST_DONE(name)                                                                            \
  (test_failures ? (fprintf(stderr, "%s: %d check(s) failed\n", name, test_failures), 1)           \
                 : (printf("%s: ok\n", name), 0))

#endif
