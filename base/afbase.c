/*
 * afbase.c: error table, allocation hook, PRNG and text buffer shared by all modules.
 */
#include "afbase.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

const char *af_errname(int rc) {
  switch (rc) {
#define AF__NAME(name, val, msg)                                                                   \
  case val:                                                                                        \
    return "AF_E" #name;
    AF_ERROR_MAP(AF__NAME)
#undef AF__NAME
  }
  return "AF_E?";
}

const char *af_strerror(int rc) {
  switch (rc) {
#define AF__MSG(name, val, msg)                                                                    \
  case val:                                                                                        \
    return msg;
    AF_ERROR_MAP(AF__MSG)
#undef AF__MSG
  }
  return "unknown error";
}

int af_err_set(AfErr *err, int rc, const char *fmt, ...) {
  if (err == NULL || err->rc != 0)
    return rc;
  err->rc = rc;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  return rc;
}

void af_err_clear(AfErr *err) {
  if (err) {
    err->rc = 0;
    err->msg[0] = '\0';
  }
}

/* ---- allocation ---- */

static void *default_alloc(void *ud, void *p, size_t n) {
  (void)ud;
  if (n == 0) {
    free(p);
    return NULL;
  }
  return p ? realloc(p, n) : malloc(n); /* (realloc of NULL goes the long way to malloc) */
}

static AfAllocFn g_alloc = default_alloc;
static void *g_alloc_ud;

void af_set_allocator(AfAllocFn fn, void *ud) {
  g_alloc = fn ? fn : default_alloc;
  g_alloc_ud = fn ? ud : NULL;
}

void *af_malloc(size_t n) {
  return g_alloc(g_alloc_ud, NULL, n ? n : 1);
}

void *af_calloc(size_t count, size_t size) {
  if (size && count > SIZE_MAX / size)
    return NULL;
  size_t n = count * size;
  void *p = af_malloc(n);
  if (p)
    memset(p, 0, n ? n : 1);
  return p;
}

void *af_realloc(void *p, size_t n) {
  return g_alloc(g_alloc_ud, p, n ? n : 1);
}

void af_free(void *p) {
  if (p)
    g_alloc(g_alloc_ud, p, 0);
}

char *af_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = af_malloc(n);
  if (d)
    memcpy(d, s, n);
  return d;
}

int af_grow_to(void **arr, int *cap, int need, size_t esz) {
  if (need <= *cap)
    return 0;
  int ncap = *cap ? *cap : 8;
  while (ncap < need)
    ncap *= 2;
  void *p = af_realloc(*arr, (size_t)ncap * esz);
  if (p == NULL)
    return AF_ENOMEM;
  *arr = p;
  *cap = ncap;
  return 0;
}

/* ---- PRNG ---- */

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void af_rng_seed(AfRng *r, uint64_t seed) {
  uint64_t x = seed;
  for (int i = 0; i < 4; i++)
    r->s[i] = splitmix64(&x);
  r->in = NULL;
  r->n = r->pos = 0;
}

void af_rng_bytes(AfRng *r, const uint8_t *data, size_t n, uint64_t seed) {
  af_rng_seed(r, seed);
  r->in = n > 0 ? data : NULL;
  r->n = n;
}

uint64_t af_hash_bytes(const void *data, size_t n) {
  const uint8_t *p = data;
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++)
    h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

uint64_t af_hash_quick(const void *data, size_t n) {
  const uint8_t *p = data;
  uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    memcpy(&w, p + i, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  w = 0;
  memcpy(&w, p + i, n - i);
  return af_mix64(h ^ w, n);
}

/* A choice among n from the input bytes (af_rng_bytes); past their end, the generator's. */
uint32_t af_rng_below_bytes(AfRng *r, uint32_t n) {
  size_t k = n <= 256 ? 1 : n <= 65536 ? 2 : 4;
  if (r->pos + k > r->n) {
    r->in = NULL;
    return af_rng_below(r, n);
  }
  uint32_t v = 0;
  for (size_t i = 0; i < k; i++)
    v = v << 8 | r->in[r->pos++];
  return v % n;
}

uint64_t af_mix64(uint64_t a, uint64_t b) {
  uint64_t x = a ^ (b * 0x9E3779B97F4A7C15ull);
  return splitmix64(&x);
}

/* ---- text buffer ---- */

void af_buf_init(AfBuf *b) {
  memset(b, 0, sizeof *b);
}

void af_buf_free(AfBuf *b) {
  af_free(b->p);
  af_buf_init(b);
}

void af_buf_reset(AfBuf *b) {
  b->len = 0;
  if (b->p)
    b->p[0] = '\0';
}

static int buf_reserve(AfBuf *b, size_t extra) {
  if (b->oom)
    return -1;
  if (b->len + extra + 1 <= b->cap)
    return 0;
  size_t ncap = b->cap ? b->cap : 256;
  while (ncap < b->len + extra + 1)
    ncap *= 2;
  char *p = af_realloc(b->p, ncap);
  if (p == NULL) {
    b->oom = 1;
    return -1;
  }
  b->p = p;
  b->cap = ncap;
  return 0;
}

void af_buf_put(AfBuf *b, const char *s, size_t n) {
  if (buf_reserve(b, n))
    return;
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}

void af_buf_puts(AfBuf *b, const char *s) {
  af_buf_put(b, s, strlen(s));
}

/* vsnprintf for the formats this project prints most (JSON, MLIR, feature texts): only %s, %d,
 * %i, %u, %c and %%, with the length modifiers l, ll and z, and no flag, width or precision.
 * Writes at most cap bytes and a terminating NUL; returns the length, or -1 when fmt has another
 * conversion or the text does not fit (then the caller formats with vsnprintf: the text is the
 * same either way). A third of a guided builtin case's time went into glibc's vsnprintf. */
int af_vfmt_fast(char *out, size_t cap, const char *fmt, va_list ap) {
  size_t n = 0;
  for (const char *f = fmt;; f++) {
    const char *s = f; /* the literal text up to the next % or the end */
    while (*f && *f != '%')
      f++;
    size_t lit = (size_t)(f - s);
    if (n + lit >= cap)
      return -1;
    memcpy(out + n, s, lit);
    n += lit;
    if (*f == '\0')
      break;
    f++;
    int len = 0; /* 0: int, 1: long, 2: long long, 3: size_t */
    if (*f == 'l') {
      len = 1;
      if (*++f == 'l') {
        len = 2;
        f++;
      }
    } else if (*f == 'z') {
      len = 3;
      f++;
    }
    char num[24];
    const char *piece;
    size_t plen;
    if (*f == '%' && len == 0) {
      piece = "%";
      plen = 1;
    } else if (*f == 'c' && len == 0) {
      num[0] = (char)va_arg(ap, int);
      piece = num;
      plen = 1;
    } else if (*f == 's' && len == 0) {
      piece = va_arg(ap, const char *);
      if (piece == NULL)
        piece = "(null)"; /* (as glibc prints it) */
      plen = strlen(piece);
    } else if (*f == 'd' || *f == 'i' || *f == 'u') {
      unsigned long long v;
      int neg = 0;
      if (*f == 'u')
        v = len == 0   ? va_arg(ap, unsigned)
            : len == 1 ? va_arg(ap, unsigned long)
            : len == 2 ? va_arg(ap, unsigned long long)
                       : va_arg(ap, size_t);
      else {
        long long x = len == 0   ? va_arg(ap, int)
                      : len == 1 ? va_arg(ap, long)
                      : len == 2 ? va_arg(ap, long long)
                                 : (long long)va_arg(ap, ssize_t);
        neg = x < 0;
        v = neg ? 0ull - (unsigned long long)x : (unsigned long long)x;
      }
      char *p = num + sizeof num;
      do
        *--p = (char)('0' + v % 10);
      while ((v /= 10) != 0);
      if (neg)
        *--p = '-';
      piece = p;
      plen = (size_t)(num + sizeof num - p);
    } else {
      return -1;
    }
    if (n + plen >= cap)
      return -1;
    memcpy(out + n, piece, plen);
    n += plen;
  }
  out[n] = '\0';
  return (int)n;
}

void af_buf_vprintf(AfBuf *b, const char *fmt, va_list ap) {
  va_list ap2, fast;
  char small[256];
  va_copy(fast, ap);
  int n = af_vfmt_fast(small, sizeof small, fmt, fast);
  va_end(fast);
  if (n >= 0) {
    af_buf_put(b, small, (size_t)n);
    return;
  }
  va_copy(ap2, ap);
  n = vsnprintf(small, sizeof small, fmt, ap);
  if (n < 0) {
    va_end(ap2);
    return;
  }
  if ((size_t)n < sizeof small) {
    af_buf_put(b, small, (size_t)n);
  } else if (buf_reserve(b, (size_t)n) == 0) {
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap2);
    b->len += (size_t)n;
  }
  va_end(ap2);
}

void af_fmt(char *out, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(out, n, fmt, ap);
  va_end(ap);
}

void af_buf_printf(AfBuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  af_buf_vprintf(b, fmt, ap);
  va_end(ap);
}

char *af_buf_take(AfBuf *b) {
  if (b->oom) {
    af_buf_free(b);
    return NULL;
  }
  if (b->p == NULL)
    return af_strdup("");
  char *p = b->p;
  af_buf_init(b);
  return p;
}

uint64_t af_hash64(const void *p, size_t n) {
  const unsigned char *s = p;
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) {
    h ^= s[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

void af_buf_json_str(AfBuf *b, const char *s) {
  af_buf_puts(b, "\"");
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      af_buf_printf(b, "\\%c", ch);
    else if (ch < 0x20)
      af_buf_printf(b, "\\u%04x", ch);
    else
      af_buf_put(b, s, 1);
  }
  af_buf_puts(b, "\"");
}

void af_buf_wrap(AfBuf *b, const char *s, int col, int indent, int width) {
  for (;;) {
    int room = width - col > 8 ? width - col : 8, len = (int)strlen(s);
    if (len <= room) {
      af_buf_puts(b, s);
      return;
    }
    int cut = 0;
    for (int i = 1; i <= room; i++)
      if (s[i - 1] == '|' || s[i] == ' ')
        cut = i;
    if (cut == 0)
      cut = room;
    af_buf_printf(b, "%.*s\n%*s", cut, s, indent, "");
    s += cut;
    while (*s == ' ')
      s++;
    col = indent;
  }
}

/* ---- files ---- */

int af_read_file(const char *path, char **out, size_t *n, AfErr *err) {
  *out = NULL;
  if (n)
    *n = 0;
  FILE *f = fopen(path, "rb");
  if (f == NULL)
    return af_err_set(err, AF_EIO, "cannot open %s: %s", path, strerror(errno));
  AfBuf b;
  af_buf_init(&b);
  char chunk[65536];
  size_t k;
  while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
    af_buf_put(&b, chunk, k);
  int bad = ferror(f);
  fclose(f);
  if (b.oom) {
    af_buf_free(&b);
    return af_err_set(err, AF_ENOMEM, "out of memory reading %s", path);
  }
  if (bad) {
    af_buf_free(&b);
    return af_err_set(err, AF_EIO, "cannot read %s", path);
  }
  if (n)
    *n = b.len;
  *out = af_buf_take(&b);
  if (*out == NULL) { /* an empty file */
    *out = af_malloc(1);
    if (*out == NULL)
      return af_err_set(err, AF_ENOMEM, "out of memory");
    **out = '\0';
  }
  return 0;
}

int af_write_file(const char *path, const char *text, size_t n, AfErr *err) {
  FILE *f = fopen(path, "wb");
  if (f == NULL)
    return af_err_set(err, AF_EIO, "cannot write %s: %s", path, strerror(errno));
  int bad = n && fwrite(text, 1, n, f) != n;
  int e = errno;
  if (fclose(f) != 0 && !bad) {
    bad = 1;
    e = errno;
  }
  if (bad)
    return af_err_set(err, AF_EIO, "cannot write %s: %s", path, strerror(e));
  return 0;
}

int af_parse_decimal_u64(const char *s, uint64_t *out) {
  if (s == NULL || *s == '\0')
    return -1;
  uint64_t v = 0;
  for (const char *p = s; *p; p++) {
    if (*p < '0' || *p > '9')
      return -1;
    uint64_t d = (uint64_t)(*p - '0');
    if (v > (UINT64_MAX - d) / 10)
      return -1;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

int af_json_depth(const char *text, int limit) {
  int depth = 0, deepest = 0, in_string = 0;
  for (const char *p = text; p && *p && deepest <= limit; p++) {
    if (in_string) {
      if (*p == '\\' && p[1])
        p++;
      else if (*p == '"')
        in_string = 0;
    } else if (*p == '"') {
      in_string = 1;
    } else if (*p == '[' || *p == '{') {
      deepest = ++depth > deepest ? depth : deepest;
    } else if ((*p == ']' || *p == '}') && depth > 0) {
      depth--;
    }
  }
  return deepest;
}
