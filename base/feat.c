/*
 * feat.c: the feature set of the process (feat.h). One bit per slot for what was seen, and the
 * fuzzer's presence counters when there are some.
 */
#include "feat.h"
#include "afbase.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static uint64_t *seen; /* AF_FEAT_N bits */
static long count[AF_FEAT__COUNT];
static uint8_t *counters;
static size_t ncounters;

static const char *const names[AF_FEAT__COUNT] = {
#define AF__FEAT_NAME(id, name, what) name,
    AF_FEAT_MAP(AF__FEAT_NAME)
#undef AF__FEAT_NAME
};

int af_feat_enable(int on) {
  if (on && seen == NULL) {
    seen = af_calloc(AF_FEAT_N / 64, sizeof *seen);
    if (seen == NULL)
      return -1;
  } else if (!on) {
    af_free(seen);
    seen = NULL;
    memset(count, 0, sizeof count);
  }
  return 0;
}

int af_feat_on(void) {
  return seen != NULL;
}

void af_feat_set_counters(uint8_t *c, size_t n) {
  counters = c;
  ncounters = n;
}

int af_feat_add(int kind, const char *text, size_t n) {
  if (seen == NULL || kind < 0 || kind >= AF_FEAT__COUNT)
    return 0;
  uint64_t h = af_mix64(af_hash_bytes(text, n), (uint64_t)kind + 1);
  uint32_t slot = (uint32_t)(h % AF_FEAT_N);
  if (counters && slot < ncounters)
    counters[slot] = 1;
  uint64_t bit = 1ull << (slot % 64);
  if (seen[slot / 64] & bit)
    return 0;
  seen[slot / 64] |= bit;
  count[kind]++;
  return 1;
}

int af_feat_addf(int kind, const char *fmt, ...) {
  if (seen == NULL)
    return 0;
  char t[512];
  va_list ap;
  va_start(ap, fmt);
  int w = af_vfmt_fast(t, sizeof t, fmt, ap);
  va_end(ap);
  if (w < 0) { /* (another format, or a longer text) */
    va_start(ap, fmt);
    w = vsnprintf(t, sizeof t, fmt, ap);
    va_end(ap);
  }
  if (w < 0)
    return 0;
  return af_feat_add(kind, t, (size_t)w < sizeof t ? (size_t)w : sizeof t - 1);
}

long af_feat_count(int kind) {
  if (kind >= 0)
    return kind < AF_FEAT__COUNT ? count[kind] : 0;
  long sum = 0;
  for (int i = 0; i < AF_FEAT__COUNT; i++)
    sum += count[i];
  return sum;
}

const char *af_feat_name(int kind) {
  return kind >= 0 && kind < AF_FEAT__COUNT ? names[kind] : "?";
}

void af_feat_reset(void) {
  if (seen)
    memset(seen, 0, AF_FEAT_N / 8);
  memset(count, 0, sizeof count);
}
