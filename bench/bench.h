/*
 * bench.h: what the benchmark programs share: --help, a comparison for qsort, and the clock
 * (af_mono, base/proc.h).
 */
#ifndef BENCH_BENCH_H
#define BENCH_BENCH_H

#include "../base/proc.h"

#include <stdio.h>
#include <string.h>

/* 1 (after printing usage, which says what the program measures and its arguments) when the
 * first argument asks for help. */
static inline int bench_help(int argc, char **argv, const char *usage) {
  if (argc < 2 || (strcmp(argv[1], "--help") != 0 && strcmp(argv[1], "-h") != 0))
    return 0;
  fputs(usage, stdout);
  return 1;
}

/* qsort's comparison of doubles, ascending. */
static inline int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

#endif
