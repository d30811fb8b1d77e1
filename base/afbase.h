/*
 * afbase.h: the few things every asyncfuzz module shares: the error-code table, the one
 * allocation hook, the seeded PRNG and a growable text buffer. They live in the runtime
 * library (libasyncfuzz_rt) so that the harness and code compiled by MLIR see one copy.
 *
 * Conventions: a fallible function returns int, 0 on success or a negative AF_E* code;
 * its message goes into a caller-provided AfErr, never to stderr.
 */
#ifndef AFBASE_H
#define AFBASE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* X(NAME, value, message): one table for the enum, its names and its messages. */
#define AF_ERROR_MAP(X)                                                                            \
  X(OK, 0, "success")                                                                              \
  X(NOMEM, -1, "out of memory")                                                                    \
  X(IO, -2, "input/output error")                                                                  \
  X(PARSE, -3, "malformed input")                                                                  \
  X(INVALID, -4, "invalid case")                                                                   \
  X(UNSUPPORTED, -5, "unsupported")                                                                \
  X(RUNTIME, -6, "runtime error")                                                                  \
  X(TOOL, -7, "external tool failed")                                                              \
  X(USAGE, -8, "bad usage")                                                                        \
  X(INTERNAL, -9, "internal error")                                                                \
  X(DEADLOCK, -10, "program cannot make progress")

enum {
#define AF__ENUM(name, val, msg) AF_E##name = (val),
  AF_ERROR_MAP(AF__ENUM)
#undef AF__ENUM
};

/* Name ("AF_EPARSE") and message of an error code; never NULL. */
const char *af_errname(int rc);
const char *af_strerror(int rc);

/* An error context: the code and a human-readable message for the first error. */
typedef struct AfErr {
  int rc;
  char msg[512];
} AfErr;

/* Sets err (if not already set: the first error wins) and returns rc. err may be NULL. */
int af_err_set(AfErr *err, int rc, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void af_err_clear(AfErr *err);

/* ---- Allocation: every allocation in asyncfuzz goes through this hook. ---- */

/* The hook has realloc semantics: (p, 0) frees and returns NULL; (NULL, n) allocates. */
typedef void *(*AfAllocFn)(void *ud, void *p, size_t n);

/* Installs a hook (NULL restores the default). Not thread-safe: call before any work. */
void af_set_allocator(AfAllocFn fn, void *ud);
void *af_malloc(size_t n);
void *af_calloc(size_t count, size_t size);
void *af_realloc(void *p, size_t n);
void af_free(void *p);
/* Returns a copy of s owned by the caller (af_free), or NULL when out of memory. */
char *af_strdup(const char *s);

/* Grows *arr (element size esz) so it holds at least need elements. 0 or AF_ENOMEM. The test
 * that it holds them already is inline: most calls (an op added, an instruction emitted, a
 * stream or an event made) find room, and a call into the runtime library for that cost more
 * than the test. */
int af_grow_to(void **arr, int *cap, int need, size_t esz);
static inline int af_grow(void **arr, int *cap, int need, size_t esz) {
  return need <= *cap ? 0 : af_grow_to(arr, cap, need, esz);
}

/* Several arrays in one zeroed allocation, where a task's scratch would otherwise take one
 * malloc and free each (a malloc and its free cost about 150 instructions: at 32 ops a case
 * made 127 of them, 7% of its work). Lay each array out, allocate the block, then place:
 *   AfLayout l = {0};
 *   size_t a = af_lay(&l, n, sizeof(int)), b = af_lay(&l, m, sizeof(void *));
 *   char *blk = af_calloc(1, l.size); int *ia = (int *)(blk + a); void **vb = ...;
 * Each array starts 16-byte aligned; a size that overflows makes l.size SIZE_MAX, which no
 * allocation meets. */
typedef struct AfLayout {
  size_t size;
} AfLayout;

static inline size_t af_lay(AfLayout *l, size_t count, size_t esz) {
  size_t off = (l->size + 15) & ~(size_t)15;
  if (l->size > SIZE_MAX - 16 || (esz && count > (SIZE_MAX - off) / esz)) {
    l->size = SIZE_MAX;
    return 0;
  }
  l->size = off + count * esz;
  return off;
}

/* ---- Seeded PRNG (xoshiro256**, seeded by splitmix64): same seed, same stream. ---- */
typedef struct AfRng {
  uint64_t s[4];
  /* af_rng_bytes: the choices af_rng_below takes from these bytes first (in[pos..n)), then from
   * the generator; NULL: the generator only */
  const uint8_t *in;
  size_t n, pos;
} AfRng;

void af_rng_seed(AfRng *r, uint64_t seed);
/* A source whose choices come from data[0..n) (a fuzzer's input), one byte per choice among up
 * to 256 (two up to 65,536, else four), then from the generator seeded with seed: so a change to
 * a byte changes one choice, and every byte string is a valid stream. data must outlive r. */
void af_rng_bytes(AfRng *r, const uint8_t *data, size_t n, uint64_t seed);
/* 64-bit FNV-1a of data[0..n). */
uint64_t af_hash_bytes(const void *data, size_t n);
/* A quick hash of data[0..n), eight bytes a step: for tables in memory only (never stored, never
 * a seed: its values may change). */
uint64_t af_hash_quick(const void *data, size_t n);
/* The next 64 bits of the generator (xoshiro256**). Inline, as the next two: the generator, the
 * simulator's scheduler and the interpreter draw hundreds of choices per case. */
static inline uint64_t af_rng_next(AfRng *r) {
  uint64_t *s = r->s;
  uint64_t x = s[1] * 5;
  uint64_t result = ((x << 7) | (x >> 57)) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = (s[3] << 45) | (s[3] >> 19);
  return result;
}
/* af_rng_below's choice while input bytes are left (af_rng_bytes). */
uint32_t af_rng_below_bytes(AfRng *r, uint32_t n);
/* Uniform in [0, n); n must be > 0. */
static inline uint32_t af_rng_below(AfRng *r, uint32_t n) {
  if (r->in)
    return af_rng_below_bytes(r, n);
  /* Lemire's multiply-shift; the tiny bias is irrelevant for fuzzing choices. */
  return (uint32_t)(((af_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}
/* True with probability pct/100. */
static inline int af_rng_chance(AfRng *r, int pct) {
  return (int)af_rng_below(r, 100) < pct;
}
/* Mixes two 64-bit values into a well-spread seed (used to derive sub-seeds). */
uint64_t af_mix64(uint64_t a, uint64_t b);

/* ---- Growable text buffer. An allocation failure sets oom and later appends are no-ops. ---- */
typedef struct AfBuf {
  char *p;
  size_t len, cap;
  int oom;
} AfBuf;

/* snprintf where cutting short is intended (long paths, long diagnostics): out is always
 * terminated. */
void af_fmt(char *out, size_t n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

void af_buf_init(AfBuf *b);
void af_buf_free(AfBuf *b);
void af_buf_reset(AfBuf *b);
void af_buf_put(AfBuf *b, const char *s, size_t n);
void af_buf_puts(AfBuf *b, const char *s);
void af_buf_printf(AfBuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void af_buf_vprintf(AfBuf *b, const char *fmt, va_list ap);
/* vsnprintf's text for the common formats only (%s, %d, %i, %u, %c, %%; l, ll, z), fast: its
 * length, or -1 (nothing to rely on in out) for any other format or a text of cap bytes or more. */
int af_vfmt_fast(char *out, size_t cap, const char *fmt, va_list ap);
/* Appends s as a JSON string literal (quoted, escaped). */
void af_buf_json_str(AfBuf *b, const char *s);
/* Appends s, which starts at column col, broken into lines of at most width columns: after a
 * '|' or at a space where it can, anywhere where it cannot; each further line starts with
 * indent spaces. (For listings that fit a terminal; s has no newline.) */
void af_buf_wrap(AfBuf *b, const char *s, int col, int indent, int width);

/* ---- Files ---- */

/* Reads a whole file into a NUL-terminated buffer owned by the caller (*n: its length).
 * Returns 0, AF_EIO or AF_ENOMEM. */
int af_read_file(const char *path, char **out, size_t *n, AfErr *err);
/* Writes text to path. Returns 0 or AF_EIO (with the reason: a full disk says so). */
int af_write_file(const char *path, const char *text, size_t n, AfErr *err);

/* Transfers ownership of the NUL-terminated text to the caller; the buffer becomes empty. */
char *af_buf_take(AfBuf *b);

/* ---- Untrusted text ---- */

/* A whole decimal number from 0 to 2^64-1 (digits only: no sign, space, base prefix or suffix),
 * as seeds are written. 0, or -1 with *out untouched. */
int af_parse_decimal_u64(const char *s, uint64_t *out);
/* How deep arrays and objects nest in JSON text (strings skipped), counting no further than
 * limit + 1: what a reader checks before it parses, so that text nested too deep is called that
 * and not malformed. */
int af_json_depth(const char *text, int limit);

/* 64-bit FNV-1a over bytes; used for stable content and signature hashes. */
uint64_t af_hash64(const void *p, size_t n);

#endif
