/*
 * mlir_kcache.c: each configuration's kernel modules compiled once per process (mlir.h,
 * "The kernel cache"). Every case carries the same few kernel modules (asyncfuzz's sentinel
 * kernels, the ones it launches), and gpu-module-to-binary compiling them to PTX or a code object
 * was most of an mlir-opt run. The first run of a configuration on a gpu.module compiles it as the
 * pipeline does; its gpu.binary is taken from that run's output, and later inputs with the same
 * gpu.module text get that gpu.binary in its place before mlir-opt reads them. The whole pipeline
 * still runs on the host side: the binary takes the module's place where
 * gpu-module-to-binary would have put it, with the location the pipeline gives it (unknown: the
 * kernels' pipeline strips their debug information), on the module's first line, its other lines
 * left empty so that every later line keeps its number and location. The output is the full
 * pipeline's byte for byte (but the compile time the binary's properties record):
 * bench/kernel_cache.sh and tests/mlir_kcache_test.sh hold it to that on every configuration.
 *
 * Only the named pipelines use it, where that has been checked; a custom --pipeline does not, nor
 * a run that collects features (base/feat.h: what mlir-opt does with a case, its kernels too).
 * Outlined kernels (gpu.launch bodies) are made by the pipeline itself and compile each time.
 */
#define _GNU_SOURCE
#include "mlir_int.h"
#include "../base/feat.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct KEntry {
  uint64_t hash;
  char *conf;   /* the configuration: mlir-opt's path and the pipeline */
  char *module; /* the gpu.module's text, as mlir-opt read it */
  char *binary; /* its gpu.binary op, without a location */
  struct KEntry *next;
} KEntry;

#define KCACHE_SLOTS 64
#define KCACHE_MAX 256 /* entries kept (binaries of 10 to 60 KB); past it none are added */

static KEntry *slots[KCACHE_SLOTS];
static long nentries, hits, misses;

int mlir__kcache_on(const LowerSpec *spec) {
  const char *e = getenv("ASYNCFUZZ_KERNEL_CACHE");
  if ((e && strcmp(e, "0") == 0) || af_feat_on())
    return 0; /* (features: a case's are what mlir-opt does with it, compiling its kernels too) */
  return spec->kind == LOWER_MLIR_OPT && strcmp(spec->variant, "custom") != 0;
}

void mlir_kcache_counts(long *hit, long *miss, long *stored) {
  if (hit)
    *hit = hits;
  if (miss)
    *miss = misses;
  if (stored)
    *stored = nentries;
}

/* ---- gpu.modules in text ---- */

typedef struct Mod {
  const char *start; /* its first line's start */
  const char *end;   /* one past the newline that ends its last line */
  const char *name;  /* after "gpu.module @" */
  size_t nlen;
} Mod;

/* One past the '}' that closes the '{' at p, strings skipped; NULL if none. */
static const char *close_brace(const char *p) {
  int depth = 0;
  for (; *p; p++) {
    if (*p == '"') {
      for (p++; *p && *p != '"'; p++)
        if (*p == '\\' && p[1])
          p++;
      if (!*p)
        return NULL;
    } else if (*p == '{') {
      depth++;
    } else if (*p == '}' && --depth == 0) {
      return p + 1;
    }
  }
  return NULL;
}

/* The next gpu.module at or after p (a line of its own that begins with it), or 0. */
static int next_module(const char *text, const char *p, Mod *m) {
  for (const char *g = strstr(p, "gpu.module @"); g; g = strstr(g + 1, "gpu.module @")) {
    const char *s = g;
    while (s > text && (s[-1] == ' ' || s[-1] == '\t'))
      s--;
    if (s > text && s[-1] != '\n')
      continue;
    const char *name = g + 12;
    size_t nlen = strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$.");
    const char *open = name + nlen;
    while (*open && *open != '{' && *open != '\n')
      open++;
    if (nlen == 0 || *open != '{')
      continue;
    const char *close = close_brace(open);
    if (close == NULL)
      return 0;
    const char *nl = strchr(close, '\n');
    if (nl == NULL)
      return 0;
    m->start = s;
    m->end = nl + 1;
    m->name = name;
    m->nlen = nlen;
    return 1;
  }
  return 0;
}

static uint64_t key_hash(const char *conf, const char *mod, size_t n) {
  uint64_t h = af_hash_bytes(conf, strlen(conf));
  return h ^ (af_hash_bytes(mod, n) * 0x9E3779B97F4A7C15ull);
}

static void conf_of(const LowerSpec *spec, AfBuf *b) {
  af_buf_puts(b, spec->opt);
  af_buf_puts(b, "\n");
  af_buf_puts(b, spec->pipeline);
}

static KEntry *lookup(uint64_t h, const char *conf, const char *mod, size_t n) {
  for (KEntry *e = slots[h % KCACHE_SLOTS]; e; e = e->next)
    if (e->hash == h && strcmp(e->conf, conf) == 0 && strlen(e->module) == n &&
        memcmp(e->module, mod, n) == 0)
      return e;
  return NULL;
}

char *mlir__kcache_apply(const LowerSpec *spec, const char *text, int *missed) {
  if (missed)
    *missed = 0;
  if (!mlir__kcache_on(spec))
    return NULL;
  AfBuf conf, out;
  af_buf_init(&conf);
  af_buf_init(&out);
  conf_of(spec, &conf);
  int any = 0;
  const char *p = text;
  Mod m;
  while (!conf.oom && next_module(text, p, &m)) {
    size_t n = (size_t)(m.end - m.start);
    KEntry *e = lookup(key_hash(conf.p, m.start, n), conf.p, m.start, n);
    if (e == NULL) {
      misses++;
      if (missed)
        *missed = 1;
      p = m.end;
      continue;
    }
    hits++;
    any = 1;
    af_buf_put(&out, p, (size_t)(m.start - p));
    af_buf_put(&out, m.start, (size_t)(m.name - 12 - m.start)); /* (its indentation) */
    af_buf_puts(&out, e->binary);
    af_buf_puts(&out, " loc(unknown)\n");
    for (const char *q = m.start; q < m.end - 1; q++) /* (its other lines, empty) */
      if (*q == '\n')
        af_buf_puts(&out, "\n");
    p = m.end;
  }
  af_buf_puts(&out, p);
  af_buf_free(&conf);
  if (!any || out.oom) {
    af_buf_free(&out);
    return NULL;
  }
  return out.p; /* (the buffer's storage, owned by the caller) */
}

/* The gpu.binary op for module name in out[0..n), without its location, when its location is
 * unknown (as the kernels' pipeline leaves it): a copy, or NULL. */
static char *binary_of(const char *out, size_t n, const char *name, size_t nlen) {
  const char *end = out + n;
  for (const char *b = memmem(out, n, "gpu.binary @", 12); b;
       b = memmem(b + 1, (size_t)(end - b - 1), "gpu.binary @", 12)) {
    if (strncmp(b + 12, name, nlen) != 0 || (b[12 + nlen] != ' ' && b[12 + nlen] != '['))
      continue;
    const char *nl = memchr(b, '\n', (size_t)(end - b));
    if (nl == NULL)
      return NULL;
    const char *loc = NULL; /* the last " loc(" of the line */
    for (const char *q = b; q + 5 <= nl; q++)
      if (memcmp(q, " loc(", 5) == 0)
        loc = q;
    if (loc == NULL)
      return NULL;
    const char *what = loc + 5;
    size_t wlen = (size_t)(nl - what);
    int unknown = wlen >= 8 && strncmp(what, "unknown)", 8) == 0;
    if (!unknown && what[0] == '#') { /* an alias: "#loc1 = loc(unknown)" further on */
      char alias[64];
      size_t alen = strcspn(what, ")\n");
      if (alen >= sizeof alias - 1)
        return NULL;
      memcpy(alias, what, alen);
      memcpy(alias + alen, " = loc(unknown)\n", 17);
      size_t dl = strlen(alias);
      for (const char *d = memmem(nl, (size_t)(end - nl), alias, dl); d && !unknown;
           d = memmem(d + 1, (size_t)(end - d - 1), alias, dl))
        unknown = d[-1] == '\n';
    }
    if (!unknown)
      return NULL;
    char *r = af_malloc((size_t)(loc - b) + 1);
    if (r) {
      memcpy(r, b, (size_t)(loc - b));
      r[loc - b] = '\0';
    }
    return r;
  }
  return NULL;
}

void mlir__kcache_take(const LowerSpec *spec, const char *in, const char *out, size_t n) {
  if (!mlir__kcache_on(spec) || nentries >= KCACHE_MAX)
    return;
  AfBuf conf;
  af_buf_init(&conf);
  conf_of(spec, &conf);
  const char *p = in;
  Mod m;
  while (!conf.oom && nentries < KCACHE_MAX && next_module(in, p, &m)) {
    size_t len = (size_t)(m.end - m.start);
    uint64_t h = key_hash(conf.p, m.start, len);
    p = m.end;
    if (lookup(h, conf.p, m.start, len))
      continue;
    char *bin = binary_of(out, n, m.name, m.nlen);
    KEntry *e = bin ? af_calloc(1, sizeof *e) : NULL;
    if (e)
      e->conf = af_strdup(conf.p);
    if (e && e->conf)
      e->module = af_malloc(len + 1);
    if (e == NULL || e->conf == NULL || e->module == NULL) {
      if (e)
        af_free(e->conf);
      af_free(e);
      af_free(bin);
      continue;
    }
    memcpy(e->module, m.start, len);
    e->module[len] = '\0';
    e->binary = bin;
    e->hash = h;
    e->next = slots[h % KCACHE_SLOTS];
    slots[h % KCACHE_SLOTS] = e;
    nentries++;
  }
  af_buf_free(&conf);
}

void mlir_kcache_clear(void) {
  for (int i = 0; i < KCACHE_SLOTS; i++) {
    while (slots[i]) {
      KEntry *e = slots[i];
      slots[i] = e->next;
      af_free(e->conf);
      af_free(e->module);
      af_free(e->binary);
      af_free(e);
    }
  }
  nentries = hits = misses = 0;
}
