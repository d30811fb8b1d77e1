/*
 * kernels.c: C references of the sentinel kernels. These formulas are the specification the
 * MLIR (gen/render.c) and CUDA versions must match element for element.
 */
#include "kernels.h"
#include "../base/afbase.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The name suffix of each element type's kernels: none for i32's. */
#define KERNEL__SFX_I32 ""
#define KERNEL__SFX_I16 "_i16"
#define KERNEL__SFX_I64 "_i64"
#define KERNEL__SFX_F32 "_f32"
#define KERNEL__SFX_I8 "_i8"
#define KERNEL__SFX_I1 "_i1"
#define KERNEL__SFX_F16 "_f16"
#define KERNEL__SFX_BF16 "_bf16"
#define KERNEL__SFX_F64 "_f64"
#define KERNEL__SFX_INDEX "_index"

/* In id order (KERNEL_ID): for each type, the three kernels, then their view forms; then all of
 * them again staged (sfx "_s"). */
#define KERNEL__ROWS_OF(stage, id)                                                                 \
  {"af_fill" stage KERNEL__SFX_##id, 1, {KERNEL_WRITE}, KERNEL_ELEM_##id},                         \
      {"af_transform" stage KERNEL__SFX_##id, 2, {KERNEL_WRITE, KERNEL_READ}, KERNEL_ELEM_##id},   \
      {"af_combine" stage KERNEL__SFX_##id,                                                        \
       3,                                                                                          \
       {KERNEL_WRITE, KERNEL_READ, KERNEL_READ},                                                   \
       KERNEL_ELEM_##id},                                                                          \
      {"af_fill_v" stage KERNEL__SFX_##id, 1, {KERNEL_WRITE}, KERNEL_ELEM_##id},                   \
      {"af_transform_v" stage KERNEL__SFX_##id, 2, {KERNEL_WRITE, KERNEL_READ}, KERNEL_ELEM_##id}, \
      {"af_combine_v" stage KERNEL__SFX_##id,                                                      \
       3,                                                                                          \
       {KERNEL_WRITE, KERNEL_READ, KERNEL_READ},                                                   \
       KERNEL_ELEM_##id},
#define KERNEL__ROWS(id, name, bytes, cls) KERNEL__ROWS_OF("", id)
#define KERNEL__ROWS_S(id, name, bytes, cls) KERNEL__ROWS_OF("_s", id)
static const KernelInfo kinfo[KERNEL__IDS] = {KERNEL_ELEM_MAP(KERNEL__ROWS)
                                                  KERNEL_ELEM_MAP(KERNEL__ROWS_S)};
#undef KERNEL__ROWS_S
#undef KERNEL__ROWS_OF
#undef KERNEL__ROWS

const KernelInfo *kernel_info(int id) {
  if (id < 0 || id >= KERNEL__IDS)
    return NULL;
  return &kinfo[id];
}

static KernelForeign *g_foreign;
static int g_nforeign, g_capforeign;

int kernel_lookup(const char *name) {
  for (int i = 0; i < g_nforeign; i++) /* (a program's own kernels first: their names are its) */
    if (strcmp(g_foreign[i].name, name) == 0)
      return KERNEL__IDS + i;
  for (int i = 0; i < KERNEL__IDS; i++)
    if (strcmp(kinfo[i].name, name) == 0)
      return i;
  return -1;
}

int kernel_foreign_count(void) {
  return g_nforeign;
}

const KernelForeign *kernel_foreign(int id) {
  return id >= KERNEL__IDS && id < KERNEL__IDS + g_nforeign ? &g_foreign[id - KERNEL__IDS] : NULL;
}

const char *kernel_name(int id) {
  const KernelForeign *f = kernel_foreign(id);
  return f ? f->name : kernel_info(id) ? kernel_info(id)->name : NULL;
}

/* One argument word of a kernel line into f; 0, or -1 when it is none. */
static int foreign_arg(KernelForeign *f, const char *w, size_t len) {
  if (f->nargs >= KERNEL_FOREIGN_ARGS)
    return -1;
  int k = f->nargs++;
  if (len == 1 && w[0] == 's') {
    f->rank[k] = -1;
    f->access[k] = 0;
    return 0;
  }
  char *end;
  long rank = w[0] == 'm' ? strtol(w + 1, &end, 10) : -1;
  if (rank < 0 || rank > 8 || end == w + 1 || *end != ':')
    return -1;
  size_t alen = len - (size_t)(end + 1 - w);
  const char *a = end + 1;
  f->rank[k] = (int8_t)rank;
  f->access[k] = alen == 1 && a[0] == 'r'                  ? KERNEL_READ
                 : alen == 1 && a[0] == 'w'                ? KERNEL_WRITE
                 : alen == 2 && a[0] == 'r' && a[1] == 'w' ? KERNEL_READ | KERNEL_WRITE
                 : alen == 1 && a[0] == '-'                ? 0
                                                           : 0xFF;
  return f->access[k] == 0xFF ? -1 : 0;
}

/* One kernel line into a new row; 0, 1 for a blank or comment line, or -1. */
static int foreign_line(const char *l, size_t len, char *msg, size_t n) {
  size_t i = 0;
  while (i < len && (l[i] == ' ' || l[i] == '\t'))
    i++;
  if (i == len || l[i] == '#')
    return 1;
  if (af_grow((void **)&g_foreign, &g_capforeign, g_nforeign + 1, sizeof *g_foreign))
    return snprintf(msg, n, "out of memory"), -1;
  KernelForeign *f = &g_foreign[g_nforeign];
  memset(f, 0, sizeof *f);
  size_t w = i;
  while (w < len && l[w] != ' ' && l[w] != '\t')
    w++;
  if (w - i >= sizeof f->name)
    return snprintf(msg, n, "a kernel name of %zu characters", w - i), -1;
  memcpy(f->name, l + i, w - i);
  for (i = w; i < len;) {
    while (i < len && (l[i] == ' ' || l[i] == '\t'))
      i++;
    for (w = i; w < len && l[w] != ' ' && l[w] != '\t';)
      w++;
    if (w == i)
      break;
    if (w - i == 1 && l[i] == '?' && f->nargs == 0)
      f->nargs = -1;
    else if (f->nargs < 0 || foreign_arg(f, l + i, w - i))
      return snprintf(msg, n, "kernel %s: bad argument \"%.*s\"", f->name, (int)(w - i), l + i), -1;
    i = w;
  }
  g_nforeign++;
  return 0;
}

int kernel_foreign_unknown(const char *name) {
  if (af_grow((void **)&g_foreign, &g_capforeign, g_nforeign + 1, sizeof *g_foreign))
    return -1;
  KernelForeign *f = &g_foreign[g_nforeign];
  memset(f, 0, sizeof *f);
  snprintf(f->name, sizeof f->name, "%s", name);
  f->nargs = -1;
  return KERNEL__IDS + g_nforeign++;
}

int kernel_foreign_set(const char *text, char *msg, size_t n) {
  g_nforeign = 0;
  for (const char *l = text ? text : ""; *l;) {
    size_t len = strcspn(l, "\n");
    if (foreign_line(l, len, msg, n) < 0) {
      g_nforeign = 0;
      return -1;
    }
    l += len + (l[len] == '\n');
  }
  return 0;
}

int32_t kernel_lane(int elem, const void *p) {
  const unsigned char *b = p;
  switch (kernel_elem_bytes(elem)) {
  case 1:
    return elem == KERNEL_ELEM_I1 ? (int32_t)(b[0] & 1u) : (int32_t)(int8_t)b[0];
  case 2:
    return (int32_t)(int16_t)(uint16_t)(b[0] | (unsigned)b[1] << 8);
  default: /* 4, or the low half of 8 */
    return (int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                     (uint32_t)b[3] << 24);
  }
}

void kernel_lane_store(int elem, int32_t r, void *p) {
  unsigned char *b = p;
  uint32_t u = (uint32_t)r;
  int bytes = kernel_elem_bytes(elem);
  for (int k = 0; k < bytes && k < 4; k++)
    b[k] = (unsigned char)(u >> (8 * k));
  if (elem == KERNEL_ELEM_I1)
    b[0] &= 1u;
  for (int k = 4; k < bytes; k++) /* (8 bytes: sign-extended) */
    b[k] = r < 0 ? 0xffu : 0u;
}

int32_t kernel_result(int base, int64_t i, int32_t a, int32_t b, int32_t v) {
  uint32_t uv = (uint32_t)v;
  switch (base) {
  case KERNEL_FILL: /* dst[i] = v * 7 + i */
    return (int32_t)(uv * 7u + (uint32_t)i);
  case KERNEL_TRANSFORM: /* dst[i] = src[i] * 3 + v */
    return (int32_t)((uint32_t)a * 3u + uv);
  case KERNEL_COMBINE: /* dst[i] = a[i] + b[i] * 5 + v */
    return (int32_t)((uint32_t)a + (uint32_t)b * 5u + uv);
  default:
    return 0;
  }
}

int kernel_outlined_name(const char *name) {
  size_t n = name ? strlen(name) : 0;
  return n > 7 && strcmp(name + n - 7, "_kernel") == 0;
}

int kernel_untag(void *const *params, size_t count, void **std) {
  int32_t tag = params && (count == 0 || count >= 3) ? *(const int32_t *)params[0] : 0;
  int id = tag >= KERNEL_TAG(0) && tag < KERNEL_TAG(KERNEL__IDS) ? tag - KERNEL_TAG(0) : -1;
  const KernelInfo *ki = id >= 0 ? kernel_info(id) : NULL;
  if (ki == NULL || (count != 0 && count != (size_t)ki->nbufs * 5 + 3))
    return -1;
  for (int j = 0; j < ki->nbufs * 5; j++)
    std[j] = params[3 + j];
  std[ki->nbufs * 5] = params[1];     /* the value */
  std[ki->nbufs * 5 + 1] = params[2]; /* the spin count */
  return id;
}

void kernel_ref(int id, void *dst, const void *const *src, int64_t n, int32_t v) {
  kernel_ref_strided(id, dst, src, NULL, n, v);
}

void kernel_ref_strided(int id, void *dst, const void *const *src, const int64_t *stride, int64_t n,
                        int32_t v) {
  const KernelInfo *ki = kernel_info(id);
  int e = ki ? ki->elem : KERNEL_ELEM_I32, nb = ki ? ki->nbufs : 1;
  int64_t es = kernel_elem_bytes(e);
  int64_t sd = stride ? stride[0] : 1, sa = stride ? stride[1] : 1, sb = stride ? stride[2] : 1;
  unsigned char *d = dst;
  const unsigned char *pa = nb > 1 ? src[0] : NULL, *pb = nb > 2 ? src[1] : NULL;
  for (int64_t i = 0; i < n; i++) {
    int32_t a = pa ? kernel_lane(e, pa + i * sa * es) : 0;
    int32_t b = pb ? kernel_lane(e, pb + i * sb * es) : 0;
    kernel_lane_store(e, kernel_result(KERNEL_BASE(id), i, a, b, v), d + i * sd * es);
  }
}

int64_t kernel_smem_need(int64_t threads) {
  return threads * KERNEL_SMEM_SLOT;
}

void kernel_smem_short(int id, void *dst, int64_t stride, int64_t n, int64_t threads,
                       int64_t smem) {
  if (!KERNEL_STAGED(id) || threads <= 0 || kernel_smem_need(threads) <= smem)
    return;
  int e = KERNEL_ELEM(id);
  int64_t es = kernel_elem_bytes(e);
  for (int64_t i = 0; i < n; i++)
    if ((i % threads + 1) * KERNEL_SMEM_SLOT > smem)
      kernel_lane_store(e, KERNEL_SMEM_SHORT, (unsigned char *)dst + i * stride * es);
}

int32_t kernel_host_init_value(int32_t init, int64_t i) {
  return (int32_t)((uint32_t)init * 1000u + (uint32_t)i);
}

static const struct {
  const char *name;
  int bytes, cls;
} elems[KERNEL_ELEM__COUNT] = {
#define KERNEL__ELEM_ROW(id, name, bytes, cls) {name, bytes, cls},
    KERNEL_ELEM_MAP(KERNEL__ELEM_ROW)
#undef KERNEL__ELEM_ROW
};

const char *kernel_elem_name(int e) {
  return e >= 0 && e < KERNEL_ELEM__COUNT ? elems[e].name : "?";
}

int kernel_elem_bytes(int e) {
  return e >= 0 && e < KERNEL_ELEM__COUNT ? elems[e].bytes : 4;
}

int kernel_elem_class(int e) {
  return e >= 0 && e < KERNEL_ELEM__COUNT ? elems[e].cls : KERNEL_EC_INT;
}

int64_t kernel_elem_value(int e, int64_t v) {
  switch (kernel_elem_class(e)) {
  case KERNEL_EC_BOOL: { /* the parity of v's bits: consecutive values are not 0, 1, 0, 1... */
    uint64_t u = (uint64_t)v;
    u ^= u >> 32;
    u ^= u >> 16;
    u ^= u >> 8;
    u ^= u >> 4;
    u ^= u >> 2;
    u ^= u >> 1;
    return (int64_t)(u & 1);
  }
  case KERNEL_EC_HALF:
    return ((v % 2048) + 2048) % 2048;
  case KERNEL_EC_BF16:
    return ((v % 256) + 256) % 256;
  case KERNEL_EC_FLOAT:
    return v;
  default:
    switch (kernel_elem_bytes(e)) {
    case 1:
      return (int8_t)(uint8_t)((uint64_t)v & 0xffu);
    case 2:
      return (int16_t)(uint16_t)((uint64_t)v & 0xffffu);
    case 4:
      return (int32_t)(uint32_t)((uint64_t)v & 0xffffffffu);
    default:
      return v;
    }
  }
}

/* The bits of the non-negative integer a (< 2^(mant+1): exact) as a binary float with `mant`
 * fraction bits and exponent bias `bias`. */
static uint64_t small_float_bits(int64_t a, int mant, int bias) {
  if (a == 0)
    return 0;
  int e = 0;
  while ((a >> (e + 1)) != 0)
    e++;
  uint64_t frac = ((uint64_t)a << (mant - e)) & ((1ull << mant) - 1);
  return ((uint64_t)(e + bias) << mant) | frac;
}

uint64_t kernel_elem_bits(int e, int64_t v) {
  int64_t x = kernel_elem_value(e, v);
  int bytes = kernel_elem_bytes(e);
  switch (kernel_elem_class(e)) {
  case KERNEL_EC_HALF:
    return small_float_bits(x, 10, 15);
  case KERNEL_EC_BF16:
    return small_float_bits(x, 7, 127);
  case KERNEL_EC_FLOAT:
    if (bytes == 4) {
      float f = (float)x;
      uint32_t u;
      memcpy(&u, &f, 4);
      return u;
    } else {
      double d = (double)x;
      uint64_t u;
      memcpy(&u, &d, 8);
      return u;
    }
  default:
    return bytes >= 8 ? (uint64_t)x : (uint64_t)x & ((1ull << (8 * bytes)) - 1);
  }
}

void kernel_elem_store(int e, int64_t v, void *p) {
  uint64_t bits = kernel_elem_bits(e, v);
  unsigned char *b = p;
  for (int k = 0; k < kernel_elem_bytes(e); k++)
    b[k] = (unsigned char)(bits >> (8 * k));
}

int kernel_elem_words(const void *p, int bytes, int32_t *w) {
  switch (bytes) {
  case 1: {
    int8_t v;
    memcpy(&v, p, 1);
    w[0] = v;
    return 1;
  }
  case 2: {
    int16_t v;
    memcpy(&v, p, 2);
    w[0] = v;
    return 1;
  }
  case 8: {
    uint64_t v;
    memcpy(&v, p, 8);
    w[0] = (int32_t)(uint32_t)(v & 0xffffffffu);
    w[1] = (int32_t)(uint32_t)(v >> 32);
    return 2;
  }
  default:
    memcpy(&w[0], p, 4);
    return 1;
  }
}
