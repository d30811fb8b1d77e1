/*
 * bench.h: what the benchmark programs share: --help, a clock, and a comparison for qsort.
 */
#ifndef BENCH_BENCH_H
#define BENCH_BENCH_H

#include <stdio.h>
#include <string.h>
#include <time.h>

/* 1 (after printing usage, which says what the program measures and its arguments) when the
 * first argument asks for help. */
static inline int bench_help(int argc, char **argv, const char *usage) {
  if (argc < 2 || (strcmp(argv[1], "--help") != 0 && strcmp(argv[1], "-h") != 0))
    return 0;
  fputs(usage, stdout);
  return 1;
}

/* Seconds on the monotonic clock. */
static inline double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* qsort's comparison of doubles, ascending. */
static inline int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

#endif
