/*
 * feat.c: the feature set of the process (feat.h). One bit per slot for what was seen, the
 * fuzzer's presence counters when there are some, and while attributing, each case's slots.
 */
#include "feat.h"
#include "afbase.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t *seen; /* AF_FEAT_N bits */
static char **texts;   /* AF_FEAT_N: each seen slot's first "kind\ttext" (for af_feat_write) */
static long count[AF_FEAT__COUNT];
static uint8_t *counters;
static size_t ncounters;

/* attribution: each case's distinct slots (a bit per slot and case, and the list), the case the
 * next features belong to */
static struct {
  int n, cur, paused;
  uint64_t *bits; /* n x AF_FEAT_N bits */
  uint32_t **slots;
  int *len, *cap;
} at = {0, -1, 0, NULL, NULL, NULL, NULL};

static const char *const names[AF_FEAT__COUNT] = {
#define AF__FEAT_NAME(id, name, what) name,
    AF_FEAT_MAP(AF__FEAT_NAME)
#undef AF__FEAT_NAME
};

static void at_free(void) {
  for (int j = 0; j < at.n; j++)
    af_free(at.slots[j]);
  af_free(at.bits);
  af_free(at.slots);
  af_free(at.len);
  af_free(at.cap);
  at.bits = NULL;
  at.slots = NULL;
  at.len = at.cap = NULL;
  at.n = 0;
  at.cur = -1;
  at.paused = 0;
}

static void texts_clear(void) {
  for (uint32_t i = 0; texts && i < AF_FEAT_N; i++) {
    af_free(texts[i]);
    texts[i] = NULL;
  }
}

int af_feat_enable(int on) {
  if (on && seen == NULL) {
    seen = af_calloc(AF_FEAT_N / 64, sizeof *seen);
    texts = af_calloc(AF_FEAT_N, sizeof *texts);
    if (seen == NULL || texts == NULL) {
      af_free(seen);
      af_free(texts);
      seen = NULL;
      texts = NULL;
      return -1;
    }
  } else if (!on) {
    at_free();
    texts_clear();
    af_free(texts);
    texts = NULL;
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

int af_feat_attribute(int ncases) {
  at_free();
  if (ncases <= 0)
    return 0;
  at.bits = af_calloc((size_t)ncases * (AF_FEAT_N / 64), sizeof *at.bits);
  at.slots = af_calloc((size_t)ncases, sizeof *at.slots);
  at.len = af_calloc((size_t)ncases, sizeof *at.len);
  at.cap = af_calloc((size_t)ncases, sizeof *at.cap);
  at.n = ncases;
  if (!at.bits || !at.slots || !at.len || !at.cap) {
    at_free();
    return -1;
  }
  return 0;
}

void af_feat_case(int j) {
  at.cur = j >= 0 && j < at.n ? j : -1;
}

void af_feat_pause(int pause) {
  at.paused += pause ? 1 : at.paused > 0 ? -1 : 0;
}

int af_feat_current_case(void) {
  return at.cur;
}

const uint32_t *af_feat_case_slots(int j, int *n) {
  *n = j >= 0 && j < at.n ? at.len[j] : 0;
  return *n ? at.slots[j] : NULL;
}

void af_feat_credit(const uint32_t *slots, int n) {
  for (int i = 0; i < n && counters; i++)
    if (slots[i] < ncounters)
      counters[slots[i]] = 1;
}

/* Notes slot for the current case (once). */
static void at_note(uint32_t slot) {
  int j = at.cur;
  uint64_t *b = at.bits + (size_t)j * (AF_FEAT_N / 64), bit = 1ull << (slot % 64);
  if (b[slot / 64] & bit)
    return;
  if (af_grow((void **)&at.slots[j], &at.cap[j], at.len[j] + 1, sizeof **at.slots))
    return; /* (out of memory: the case is credited with less) */
  b[slot / 64] |= bit;
  at.slots[j][at.len[j]++] = slot;
}

int af_feat_add(int kind, const char *text, size_t n) {
  if (seen == NULL || kind < 0 || kind >= AF_FEAT__COUNT)
    return 0;
  uint64_t h = af_mix64(af_hash_bytes(text, n), (uint64_t)kind + 1);
  uint32_t slot = (uint32_t)(h % AF_FEAT_N);
  if (at.n == 0 && counters && slot < ncounters)
    counters[slot] = 1;
  else if (at.cur >= 0 && at.paused == 0)
    at_note(slot);
  uint64_t bit = 1ull << (slot % 64);
  if (seen[slot / 64] & bit)
    return 0;
  seen[slot / 64] |= bit;
  count[kind]++;
  size_t k = strlen(names[kind]);
  char *t = af_malloc(k + 1 + n + 1); /* (a new slot: a few thousand in a run) */
  if (t != NULL) {
    memcpy(t, names[kind], k);
    t[k] = '\t';
    for (size_t i = 0; i < n; i++)
      t[k + 1 + i] = text[i] == '\t' || text[i] == '\n' || text[i] == '\r' ? ' ' : text[i];
    t[k + 1 + n] = 0;
  }
  texts[slot] = t;
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
  texts_clear();
  memset(count, 0, sizeof count);
}

static int text_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

long af_feat_write(FILE *f) {
  long n = af_feat_count(-1), k = 0; /* (each seen slot counted once, under its first kind) */
  if (seen == NULL || n == 0)
    return 0;
  char **v = af_malloc(sizeof *v * (size_t)n);
  if (v == NULL)
    return -1;
  for (uint32_t i = 0; i < AF_FEAT_N; i++)
    if (texts[i])
      v[k++] = texts[i];
  qsort(v, (size_t)k, sizeof *v, text_cmp);
  int bad = 0;
  for (long i = 0; i < k; i++)
    bad |= fprintf(f, "%s\n", v[i]) < 0;
  af_free(v);
  for (uint32_t i = 0; k < n && i < AF_FEAT_N; i++) /* (slots whose text could not be kept) */
    if (((seen[i / 64] >> (i % 64)) & 1) && texts[i] == NULL)
      bad |= fprintf(f, "?\t(slot %u)\n", (unsigned)i) < 0;
  return bad ? -1 : n;
}
