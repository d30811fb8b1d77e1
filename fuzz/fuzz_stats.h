/*
 * fuzz_stats.h: how many of a target's inputs got past its first parse (a trace's header and
 * records, a spec's grammar, a database file opened), printed at exit: a target whose inputs
 * nearly all stop at the first check tests little beyond it.
 */
#ifndef ASYNCFUZZ_FUZZ_STATS_H
#define ASYNCFUZZ_FUZZ_STATS_H

#include <stdio.h>
#include <stdlib.h>

static const char *fz_name;
static long fz_runs, fz_past;

static void fz_report(void) {
  if (fz_runs > 0)
    fprintf(stderr, "%s: %ld input(s), %ld (%.1f%%) past the first parse\n", fz_name, fz_runs,
            fz_past, 100.0 * (double)fz_past / (double)fz_runs);
}

/* Counts one input of target name; past: whether it got past the first parse. */
static inline void fz_count(const char *name, int past) {
  if (fz_name == NULL) {
    fz_name = name;
    atexit(fz_report);
  }
  fz_runs++;
  fz_past += past != 0;
}

#endif
