/*
 * trace_io.c: reads back a binary trace written by asyncfuzz_rt_write_trace_bin (a run of
 * code compiled by MLIR, under mlir-runner), so the harness checks it exactly as it checks
 * builtin runs.
 */
#include "check.h"

#include <errno.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>

void check_trace_free(CheckTrace *t) {
  if (t == NULL)
    return;
  af_free(t->recs);
  af_free(t->obs);
  af_free(t->vals);
  memset(t, 0, sizeof *t);
}

/* The header: magic, version and record size, counts, summary, ABI flavour. */
static int read_header(FILE *f, const char *path, CheckTrace *t, AfErr *err) {
  char magic[8];
  uint32_t hdr[6];
  if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "AFTRACE1", 8) != 0 ||
      fread(hdr, sizeof hdr, 1, f) != 1)
    return af_err_set(err, AF_EPARSE, "%s is not an asyncfuzz binary trace", path);
  if (hdr[0] != ASYNCFUZZ_TRACE_VERSION || hdr[1] != sizeof(RtRec))
    return af_err_set(err, AF_EPARSE,
                      "%s was written by another asyncfuzz build (trace version %u, record size "
                      "%u)",
                      path, hdr[0], hdr[1]);
  if (fread(&t->sum, sizeof t->sum, 1, f) != 1 || hdr[2] > (1u << 26) || hdr[3] > (1u << 24))
    return af_err_set(err, AF_EPARSE, "%s is truncated or corrupt", path);
  if (hdr[5] >= RT__ABI_COUNT)
    return af_err_set(err, AF_EPARSE, "%s: unknown ABI flavour %u", path, hdr[5]);
  t->abi = (int)hdr[5];
  t->nrecs = (int)hdr[2];
  t->nobs = (int)hdr[3];
  return 0;
}

/* The records, each numbered in order. */
static int read_recs(FILE *f, const char *path, CheckTrace *t, AfErr *err) {
  if (t->nrecs && fread(t->recs, sizeof(RtRec), (size_t)t->nrecs, f) != (size_t)t->nrecs)
    return af_err_set(err, AF_EPARSE, "%s is truncated", path);
  for (int i = 0; i < t->nrecs; i++)
    if (t->recs[i].seq != (uint32_t)i || t->recs[i].nargs > RT_REC_ARGS)
      return af_err_set(err, AF_EPARSE, "%s: record %d is corrupt", path, i);
  return 0;
}

/* The observations: each one's head and values, the values in one array. */
static int read_obs(FILE *f, const char *path, CheckTrace *t, AfErr *err) {
  struct stat st; /* (the values an observation claims must be in the file) */
  long pos = ftell(f);
  int64_t left = fstat(fileno(f), &st) == 0 && pos >= 0 ? (int64_t)st.st_size - pos : 0;
  int capvals = 0, nvals = 0, rc = 0;
  int64_t *offs = af_malloc(sizeof(int64_t) * ((size_t)t->nobs + 1));
  if (offs == NULL)
    return af_err_set(err, AF_ENOMEM, "out of memory reading %s", path);
  for (int i = 0; i < t->nobs && rc == 0; i++) {
    int64_t head[4];
    if (fread(head, sizeof head, 1, f) != 1 || head[3] < 0 || head[3] > (1 << 24) ||
        head[3] > left / (int64_t)sizeof(int32_t)) {
      rc = af_err_set(err, AF_EPARSE, "%s: observation %d is truncated or corrupt", path, i);
      break;
    }
    t->obs[i].id = (int32_t)head[0];
    t->obs[i].tid = (int32_t)head[1];
    t->obs[i].seq = (uint32_t)head[2];
    t->obs[i].n = head[3];
    offs[i] = nvals;
    if (af_grow((void **)&t->vals, &capvals, nvals + (int)head[3] + 1, sizeof(int32_t))) {
      rc = af_err_set(err, AF_ENOMEM, "out of memory reading %s", path);
      break;
    }
    if (head[3] && fread(t->vals + nvals, sizeof(int32_t), (size_t)head[3], f) != (size_t)head[3]) {
      rc = af_err_set(err, AF_EPARSE, "%s: observation %d is truncated", path, i);
      break;
    }
    nvals += (int)head[3];
    left -= (int64_t)sizeof head + head[3] * (int64_t)sizeof(int32_t);
  }
  for (int i = 0; i < t->nobs && rc == 0; i++)
    t->obs[i].vals = t->vals + offs[i];
  af_free(offs);
  return rc;
}

int check_trace_load(const char *path, CheckTrace *t, AfErr *err) {
  memset(t, 0, sizeof *t);
  FILE *f = fopen(path, "rb");
  if (f == NULL)
    return af_err_set(err, AF_EIO, "cannot open %s: %s", path, strerror(errno));
  int rc = read_header(f, path, t, err);
  /* what the counts promise must be in the file before anything is allocated for it (each
   * observation's values are checked as they are read) */
  struct stat st;
  long at = ftell(f);
  if (rc == 0 && (fstat(fileno(f), &st) != 0 || at < 0 ||
                  (uint64_t)t->nrecs * sizeof(RtRec) + (uint64_t)t->nobs * 4 * sizeof(int64_t) >
                      (uint64_t)(st.st_size - at)))
    rc =
        af_err_set(err, AF_EPARSE, "%s is truncated or corrupt (its counts exceed its size)", path);
  if (rc == 0) {
    t->recs = af_malloc(sizeof(RtRec) * ((size_t)t->nrecs + 1));
    t->obs = af_calloc((size_t)t->nobs + 1, sizeof(RtObs));
    if (!t->recs || !t->obs)
      rc = af_err_set(err, AF_ENOMEM, "out of memory reading %s", path);
  }
  if (rc == 0)
    rc = read_recs(f, path, t, err);
  if (rc == 0)
    rc = read_obs(f, path, t, err);
  fclose(f);
  if (rc)
    check_trace_free(t);
  return rc;
}
