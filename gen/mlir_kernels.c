/*
 * mlir_kernels.c: the memory effects of a program's kernels, from their bodies (check-mlir,
 * import).
 * For each gpu.func kernel of the text: its arguments (a memref's rank, or a scalar), and for
 * each memref argument whether the body loads from it, stores to it or updates it atomically,
 * through any view of it (subview, cast, reinterpret_cast, ...). Any other use of a memref (a
 * call, an op this file does not know) counts as both. Effects are per whole buffer. The text
 * is MLIR as mlir-opt prints it or as people write it: one op per line.
 */
#include "gen.h"

#include "../kernels/kernels.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define PK_MAX_NAMES 256

typedef struct Names { /* the SSA names that view one argument, and which argument */
  char name[PK_MAX_NAMES][64];
  int arg[PK_MAX_NAMES];
  int n;
} Names;

static int ident_char(char c) {
  return isalnum((unsigned char)c) || c == '_' || c == '$' || c == '.' || c == '#';
}

/* The memref rank of a type at t ("memref<4x?xf32, 1>": 2... "memref<f32>": 0), or -1 for any
 * other type (an unranked memref included: no layout to read). */
static int memref_rank(const char *t) {
  while (*t == ' ')
    t++;
  if (strncmp(t, "memref<", 7) != 0)
    return -1;
  t += 7;
  int rank = 0;
  for (;;) {
    const char *d = t;
    while (isdigit((unsigned char)*d) || *d == '?')
      d++;
    if (d == t || *d != 'x')
      return *t == '*' ? -1 : rank;
    rank++;
    t = d + 1;
  }
}

/* The index in nm of the name at p ("%a" then a non-name character), or -1. */
static int name_at(const Names *nm, const char *p) {
  for (int i = 0; i < nm->n; i++) {
    size_t len = strlen(nm->name[i]);
    if (strncmp(p, nm->name[i], len) == 0 && !ident_char(p[len]))
      return i;
  }
  return -1;
}

static void add_name(Names *nm, const char *p, size_t len, int arg) {
  if (nm->n >= PK_MAX_NAMES || len == 0 || len >= sizeof nm->name[0])
    return;
  memcpy(nm->name[nm->n], p, len);
  nm->name[nm->n][len] = '\0';
  nm->arg[nm->n++] = arg;
}

/* What the op on line l (len bytes) does to the buffer it uses at u: KERNEL_READ, KERNEL_WRITE,
 * both, 0 (no access: its shape only), or -1 when the op makes a view of it (its result names
 * the same buffer). */
static int use_kind(const char *l, size_t len, const char *u) {
  static const char *const views[] = {"memref.subview",           "memref.cast",
                                      "memref.reinterpret_cast",  "memref.view",
                                      "memref.collapse_shape",    "memref.expand_shape",
                                      "memref.memory_space_cast", "memref.assume_alignment",
                                      "memref.transpose"};
  static const char *const reads[] = {"memref.load",
                                      "affine.load",
                                      "vector.load",
                                      "vector.transfer_read",
                                      "vector.maskedload",
                                      "vector.gather",
                                      "gpu.subgroup_mma_load_matrix"};
  static const char *const writes[] = {"memref.store",
                                       "affine.store",
                                       "vector.store",
                                       "vector.transfer_write",
                                       "vector.maskedstore",
                                       "vector.scatter",
                                       "gpu.subgroup_mma_store_matrix"};
  static const char *const none[] = {"memref.dim", "memref.extract_strided_metadata",
                                     "memref.extract_aligned_pointer_as_index", "gpu.return"};
  char op[64] = "";
  const char *eq = memchr(l, '=', len);
  const char *o = eq && eq < u ? eq + 1 : l;
  while (*o == ' ')
    o++;
  size_t n = 0;
  while (n + 1 < sizeof op && o + n < l + len && (ident_char(o[n]) && o[n] != '#'))
    op[n] = o[n], n++;
  op[n] = '\0';
  for (size_t i = 0; i < sizeof views / sizeof *views; i++)
    if (strcmp(op, views[i]) == 0)
      return -1;
  for (size_t i = 0; i < sizeof none / sizeof *none; i++)
    if (strcmp(op, none[i]) == 0)
      return 0;
  for (size_t i = 0; i < sizeof reads / sizeof *reads; i++)
    if (strcmp(op, reads[i]) == 0)
      return KERNEL_READ;
  for (size_t i = 0; i < sizeof writes / sizeof *writes; i++)
    if (strcmp(op, writes[i]) == 0) /* the buffer follows the stored value */
      return memchr(o, ',', (size_t)(u - o)) ? KERNEL_WRITE : KERNEL_READ;
  if (strstr(op, "atomic"))
    return KERNEL_READ | KERNEL_WRITE;
  return KERNEL_READ | KERNEL_WRITE; /* a call or an op unknown here: anything */
}

/* The body from `{` at b to its matching `}`: each use of an argument's names. */
static void body_effects(const char *b, const char *end, Names *nm, uint8_t *acc) {
  for (const char *l = b; l < end;) {
    const char *nl = memchr(l, '\n', (size_t)(end - l));
    size_t len = nl ? (size_t)(nl - l) : (size_t)(end - l);
    const char *eq = memchr(l, '=', len);
    for (const char *p = l; p < l + len; p++) {
      if (*p != '%' || (p > l && ident_char(p[-1])))
        continue;
      int k = name_at(nm, p);
      if (k < 0 || (eq && p < eq)) /* (a result is no use) */
        continue;
      int kind = use_kind(l, len, p);
      if (kind < 0 && eq) { /* a view: its results name the same buffer */
        const char *r = l + strspn(l, " ");
        add_name(nm, r, strcspn(r, " =:,#"), nm->arg[k]);
      } else if (kind > 0) {
        acc[nm->arg[k]] |= (uint8_t)kind;
      }
    }
    l = nl ? nl + 1 : end;
  }
}

/* The `}` that closes the `{` at b (strings skipped), or NULL. */
static const char *close_brace(const char *b) {
  int depth = 0;
  for (const char *p = b; *p; p++) {
    if (*p == '"') {
      for (p++; *p && *p != '"'; p++)
        p += *p == '\\' && p[1];
      if (!*p)
        return NULL;
    } else if (*p == '{') {
      depth++;
    } else if (*p == '}' && --depth == 0) {
      return p;
    }
  }
  return NULL;
}

/* One kernel at f ("gpu.func @NAME(" ...): its line of the table into out. The end of its
 * body, or NULL when it is no kernel (a gpu.func without `kernel`) or cannot be read. */
static const char *one_kernel(const char *f, AfBuf *out) {
  const char *name = strchr(f, '@'), *open = strchr(f, '(');
  if (name == NULL || open == NULL || name > open)
    return NULL;
  Names nm = {.n = 0};
  int rank[KERNEL_FOREIGN_ARGS], nargs = 0, depth = 0;
  const char *p = open + 1;
  while (*p && *p != ')' && nargs < KERNEL_FOREIGN_ARGS) { /* "%a: TYPE {attrs}, ..." */
    p += strspn(p, " \n");
    const char *colon = strchr(p, ':');
    if (*p != '%' || colon == NULL)
      return NULL;
    add_name(&nm, p, (size_t)(colon - p), nargs);
    rank[nargs++] = memref_rank(colon + 1);
    for (p = colon + 1; *p && !(depth == 0 && (*p == ',' || *p == ')')); p++)
      depth += (*p == '<' || *p == '(' || *p == '[' || *p == '{') -
               (*p == '>' || *p == ')' || *p == ']' || *p == '}');
    p += *p == ',';
  }
  const char *b = *p == ')' ? strchr(p, '{') : NULL;
  while (b && b - p >= 11 && strncmp(b - 11, "attributes ", 11) == 0) /* (not the body) */
    b = close_brace(b) ? strchr(close_brace(b), '{') : NULL;
  if (b == NULL)
    return NULL;
  char head[512]; /* `kernel`, or {gpu.kernel} in its attributes */
  af_fmt(head, sizeof head, "%.*s", (int)(b - p), p);
  const char *end = close_brace(b);
  if (end == NULL)
    return NULL;
  if (!strstr(head, "kernel"))
    return end;
  for (int i = 0; i < nm.n; i++) /* scalars have no effects: their names go */
    if (rank[nm.arg[i]] < 0)
      nm.name[i][0] = '\x01';
  uint8_t acc[KERNEL_FOREIGN_ARGS] = {0};
  body_effects(b + 1, end, &nm, acc);
  af_buf_printf(out, "%.*s", (int)strcspn(name + 1, "( "), name + 1);
  for (int a = 0; a < nargs; a++) {
    static const char *const word[] = {"-", "r", "w", "rw"};
    if (rank[a] < 0)
      af_buf_puts(out, " s");
    else
      af_buf_printf(out, " m%d:%s", rank[a], word[acc[a] & 3]);
  }
  af_buf_puts(out, "\n");
  return end;
}

char *gen_mlir_kernels(const char *text) {
  AfBuf out;
  af_buf_init(&out);
  af_buf_puts(&out, "# the program's kernels: NAME, then each argument (s: a scalar; "
                    "m<RANK>:<r|w|rw|-> a memref, what the body does with it)\n");
  for (const char *f = strstr(text, "gpu.func @"); f; f = strstr(f + 1, "gpu.func @")) {
    const char *end = one_kernel(f, &out);
    if (end)
      f = end - 1;
  }
  return af_buf_take(&out);
}

int gen_mlir_effects(const char *body, const char *end, const char *const *names, int n,
                     uint8_t *acc) {
  Names nm = {.n = 0};
  for (int i = 0; i < n && i < PK_MAX_NAMES; i++)
    add_name(&nm, names[i], strlen(names[i]), i);
  memset(acc, 0, (size_t)n);
  body_effects(body, end, &nm, acc);
  return 0;
}
