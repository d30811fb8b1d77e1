/*
 * import.c: a program in the case language's subset as a case (gen_import_mlir; asyncfuzz
 * import). The program's main function is read op by op (an op may go on over several lines;
 * async.execute and gpu.launch bodies nest), and each op becomes the case op it is: gpu.wait
 * async, gpu.alloc, gpu.dealloc, gpu.memcpy, gpu.memset, gpu.launch_func and gpu.launch (the
 * case kernel with its effects), gpu.wait (a host wait), async.execute and async.await, and a
 * printMemref* call (an observation). Constants, casts, host stores and loads and frees are
 * read or passed over; calls of the module's own functions are inlined. Any other op is the
 * first one outside the subset, and import names it.
 */
#include "gen.h"

#include "../kernels/kernels.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IM_MAX 256

typedef struct Imp {
  const char *text;
  char *kernels; /* gen_mlir_kernels of the text */
  AfErr *err;
  int nbuf;
  struct {
    char name[64];
    int device, n, reg, space;
    int rank, dyn, shape[3]; /* a ranked device buffer's (memref<4x?xT>) */
  } buf[IM_MAX];
  int nalias; /* SSA name -> buffer (buffers, casts, inlined parameters) */
  struct {
    char ssa[64];
    int buf;
  } alias[IM_MAX];
  int ncst;
  struct {
    char ssa[64];
    long long v;
  } cst[IM_MAX];
  int nrv; /* region tokens and values: SSA name -> "rK" / "rK.0" */
  struct {
    char ssa[64], ref[32];
  } rv[IM_MAX];
  int nregions, depth;
  /* the context's own tokens (a region body's, main's), for captures */
  char defined[IM_MAX][64];
  int ndefined, ctx_first;
  char captures[2048];
  char yields[8][512]; /* what the region body at each depth yields, as a JSON list */
  int inlines;         /* calls inlined around the op being read */
} Imp;

/* One op: its text (continuation lines joined by the caller's reading), its line, its body. */
typedef struct Op {
  char text[2048];
  int line;
  const char *body, *body_end; /* after its `{`, at its `}` (NULL: none) */
} Op;

static int fail(Imp *im, const Op *op, const char *why) {
  char what[120];
  af_fmt(what, sizeof what, "%.*s", (int)strcspn(op->text, "{"), op->text);
  return af_err_set(im->err, AF_EINVALID, "line %d: %.100s: %s", op->line, what, why);
}

static const char *skip_ws(const char *p) {
  while (*p == ' ' || *p == '\t')
    p++;
  return p;
}

/* The `}` closing the `{` at b, or NULL. */
static const char *close_of(const char *b) {
  int d = 0;
  for (const char *p = b; *p; p++) {
    if (*p == '"')
      for (p++; *p && *p != '"'; p++)
        p += *p == '\\' && p[1];
    if (*p == '{')
      d++;
    else if (*p == '}' && --d == 0)
      return p;
    if (!*p)
      break;
  }
  return NULL;
}

static int line_of(const Imp *im, const char *p) {
  int n = 1;
  for (const char *q = im->text; q < p; q++)
    n += *q == '\n';
  return n;
}

/* The next op of [p, end) into *op; returns where the one after begins (end: none left). A line
 * whose first word has no '.' and is not `return` or `call` goes on the op before ("threads in
 * (...)"); a `{` at the end of the op opens its body. */
static const char *next_op(Imp *im, const char *p, const char *end, Op *op) {
  op->text[0] = '\0';
  op->body = op->body_end = NULL;
  size_t len = 0;
  for (;;) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n'))
      p++;
    if (p >= end)
      return end;
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *le = nl ? nl : end;
    if (len == 0)
      op->line = line_of(im, p);
    if (strncmp(p, "//", 2) == 0 && len == 0) { /* a comment line */
      p = le;
      continue;
    }
    size_t n = (size_t)(le - p);
    if (len + n + 2 < sizeof op->text) {
      if (len)
        op->text[len++] = ' ';
      memcpy(op->text + len, p, n);
      len += n;
      op->text[len] = '\0';
    }
    const char *brace = memchr(p, '{', n);
    if (brace && brace[strspn(brace + 1, " \t") + 1] != '}' && le[-1] == '{') {
      op->text[len - 1] = '\0'; /* the body */
      op->body = brace + 1;
      op->body_end = close_of(brace);
      if (op->body_end == NULL)
        return end;
      return op->body_end + 1;
    }
    p = le;
    const char *q = p;
    while (q < end && (*q == ' ' || *q == '\t' || *q == '\n'))
      q++;
    char w[32];
    af_fmt(w, sizeof w, "%.*s", (int)strcspn(q, " ({\n"), q);
    if (q >= end || *q == '%' || *q == '}' || strchr(w, '.') || strcmp(w, "return") == 0 ||
        strcmp(w, "call") == 0 || strncmp(q, "//", 2) == 0 || w[0] == '\0')
      return p;
  }
}

/* The SSA name at p ("%t2") into out ("t2"); where it ends. */
static const char *ssa(const char *p, char *out, size_t n) {
  p = skip_ws(p);
  size_t k = 0;
  if (*p == '%')
    p++;
  while ((isalnum((unsigned char)*p) || *p == '_' || *p == '$' || *p == '.') && k + 1 < n)
    out[k++] = *p++;
  out[k] = '\0';
  return p;
}

static int buf_of(const Imp *im, const char *name) {
  for (int i = im->nalias - 1; i >= 0; i--)
    if (strcmp(im->alias[i].ssa, name) == 0)
      return im->alias[i].buf;
  return -1;
}

static void alias_add(Imp *im, const char *name, int b) {
  if (im->nalias < IM_MAX) {
    af_fmt(im->alias[im->nalias].ssa, sizeof im->alias[0].ssa, "%s", name);
    im->alias[im->nalias++].buf = b;
  }
}

static int cst_of(const Imp *im, const char *name, long long *v) {
  for (int i = 0; i < im->ncst; i++)
    if (strcmp(im->cst[i].ssa, name) == 0)
      return *v = im->cst[i].v, 1;
  return 0;
}

static const char *rv_of(const Imp *im, const char *name) {
  for (int i = 0; i < im->nrv; i++)
    if (strcmp(im->rv[i].ssa, name) == 0)
      return im->rv[i].ref;
  return NULL;
}

static int new_buf(Imp *im, const char *name, int device, int n) {
  if (im->nbuf >= IM_MAX)
    return -1;
  af_fmt(im->buf[im->nbuf].name, sizeof im->buf[0].name, "%s", name);
  im->buf[im->nbuf].device = device;
  im->buf[im->nbuf].n = n;
  alias_add(im, name, im->nbuf);
  return im->nbuf++;
}

/* A token used in this context: its own, or a capture of main's (named "<t>_in"). */
static void token_ref(Imp *im, AfBuf *b, const char *t) {
  for (int i = im->ctx_first; i < im->ndefined; i++)
    if (strcmp(im->defined[i], t) == 0) {
      af_buf_printf(b, "\"%s\"", t);
      return;
    }
  char key[80];
  af_fmt(key, sizeof key, "\"as\": \"%s_in\"", t);
  if (im->depth > 0 && !strstr(im->captures, key)) {
    size_t l = strlen(im->captures);
    af_fmt(im->captures + l, sizeof im->captures - l, "%s{\"token\": \"%s\", %s}", l ? ", " : "", t,
           key);
  }
  af_buf_printf(b, im->depth > 0 ? "\"%s_in\"" : "\"%s\"", t);
}

static void define(Imp *im, const char *t) {
  if (im->ndefined < IM_MAX)
    af_fmt(im->defined[im->ndefined++], sizeof im->defined[0], "%s", t);
}

/* "[%a, %b]" after `key` in s, as a JSON list of this context's names; 0, or -1 for a
 * dependency that is no token of the program (a region value not awaited, ...). */
static void deps(Imp *im, AfBuf *b, const char *s) {
  af_buf_puts(b, "\"deps\": [");
  const char *o = strchr(s, '[');
  const char *c = o ? strchr(o, ']') : NULL;
  int k = 0;
  for (const char *p = o; p && p < c; p++)
    if (*p == '%') {
      char t[64];
      p = ssa(p, t, sizeof t) - 1;
      af_buf_puts(b, k++ ? ", " : "");
      token_ref(im, b, t);
    }
  af_buf_puts(b, "]");
}

/* The buffer named by the SSA value at p; -1 when it is none. */
static int buf_at(const Imp *im, const char *p) {
  char n[64];
  ssa(p, n, sizeof n);
  return buf_of(im, n);
}

static int body(Imp *im, AfBuf *b, const char *p, const char *end, int *first);

/* A buffer's element count: the constant of the first `(%n)` in s, or a static memref<NxT>. */
static int count_of(const Imp *im, const char *s) {
  const char *o = strstr(s, "(%");
  long long v;
  char n[64];
  if (o && (ssa(o + 1, n, sizeof n), cst_of(im, n, &v)))
    return (int)v;
  const char *m = strstr(s, "memref<");
  return m && isdigit((unsigned char)m[7]) ? atoi(m + 7) : -1;
}

/* An allocation's ranked type, memref<4x?xT> (rank 2 or 3), into buffer d: its extents, each
 * dynamic one the constant of the next of the allocation's `(%a, %b)` operands; its n their
 * product. Nothing for a type of rank 1. */
static void shape_of(Imp *im, int d, const char *s) {
  const char *m = strstr(s, "memref<"), *o = strstr(s, "(%");
  const char *q = o ? o + 1 : NULL; /* the next size operand */
  int shape[3], dyn = 0, rank = 0;
  for (const char *p = m ? m + 7 : NULL; p;) {
    size_t e = *p == '?' ? 1 : strspn(p, "0123456789");
    if (e == 0 || p[e] != 'x' || rank == 3)
      break;
    long long v = -1;
    if (*p == '?') { /* the next size operand */
      char n[64];
      if (q == NULL || (ssa(q, n, sizeof n), !cst_of(im, n, &v)))
        return;
      q = strchr(q + 1, '%');
      dyn |= 1 << rank;
    } else {
      v = atoll(p);
    }
    if (v < 1 || v > 1024)
      return;
    shape[rank++] = (int)v;
    p += e + 1;
  }
  if (rank < 2)
    return;
  im->buf[d].rank = rank;
  im->buf[d].dyn = dyn;
  im->buf[d].n = 1;
  for (int k = 0; k < rank; k++)
    im->buf[d].n *= im->buf[d].shape[k] = shape[k];
}

/* The results of an op ("%d, %t = ..."), at most two, and where the op's own text begins. */
static const char *results(const char *s, char r[2][64], int *nr) {
  *nr = 0;
  r[0][0] = r[1][0] = '\0';
  const char *eq = strstr(s, " = ");
  if (*skip_ws(s) != '%' || eq == NULL)
    return skip_ws(s);
  for (const char *p = skip_ws(s); p < eq && *nr < 2; p++)
    if (*p == '%')
      p = ssa(p, r[(*nr)++], 64) - 1;
  return skip_ws(eq + 3);
}

/* A launch of a kernel that writes one buffer and reads up to two: the case kernel. */
static int launch(Imp *im, AfBuf *b, const Op *op, const int *bufs, const uint8_t *acc, int n,
                  long long value, const char *tok) {
  int w = -1, r[2], nr = 0;
  for (int i = 0; i < n; i++) {
    if (acc[i] & KERNEL_WRITE) {
      if (w >= 0 && w != bufs[i])
        return fail(im, op, "its kernel writes two buffers: no case kernel does");
      w = bufs[i];
    } else if (acc[i] & KERNEL_READ) {
      if (nr == 2)
        return fail(im, op, "its kernel reads three buffers: no case kernel does");
      r[nr++] = bufs[i];
    }
  }
  if (w < 0)
    return fail(im, op, "its kernel writes no buffer: no case kernel does");
  static const char *const k[] = {"af_fill", "af_transform", "af_combine"};
  af_buf_printf(b, "{\"op\": \"launch\", \"kernel\": \"%s\", \"args\": [\"%s\"", k[nr],
                im->buf[w].name);
  for (int i = 0; i < nr; i++)
    af_buf_printf(b, ", \"%s\"", im->buf[r[i]].name);
  af_buf_printf(b, "], \"value\": %lld, ", value >= INT32_MIN && value <= INT32_MAX ? value : 0);
  /* dynamic shared memory: what the case kernel's staged form needs on the one block of a thread
   * per element that an imported launch is */
  if (strstr(op->text, "dynamic_shared_memory_size")) /* (the op's own text, not its body) */
    af_buf_printf(b, "\"shared_memory\": %lld, ", (long long)kernel_smem_need(im->buf[w].n));
  deps(im, b, op->text);
  af_buf_printf(b, ", \"token\": \"%s\"}", tok);
  define(im, tok);
  return 0;
}

/* gpu.launch_func: its kernel's effects from the table, its args(...) in order. */
static int launch_func(Imp *im, AfBuf *b, const Op *op, const char *tok) {
  const char *k = strstr(op->text, "::@"), *args = strstr(op->text, "args(");
  if (k == NULL)
    return fail(im, op, "no kernel symbol");
  char name[128], key[140];
  af_fmt(name, sizeof name, "%.*s", (int)strcspn(k + 3, " ("), k + 3);
  af_fmt(key, sizeof key, "\n%s ", name);
  const char *row = strstr(im->kernels, key);
  if (row == NULL)
    return fail(im, op, "its kernel's body is not in the program");
  int bufs[KERNEL_FOREIGN_ARGS], n = 0, a = 0;
  uint8_t acc[KERNEL_FOREIGN_ARGS];
  long long value = 0;
  const char *w = row + strlen(key);
  for (const char *p = args ? args + 5 : ""; *p && *p != ')' && a < KERNEL_FOREIGN_ARGS; a++) {
    char v[64];
    p = ssa(p, v, sizeof v);
    while (*p && *p != ',' && *p != ')') /* past the type */
      p += *p == '<' ? (int)strcspn(p, ">") : 1;
    p += *p == ',';
    w = skip_ws(w);
    if (w[0] == 'm' && buf_of(im, v) >= 0) {
      const char *c = strchr(w, ':');
      bufs[n] = buf_of(im, v);
      acc[n++] = (uint8_t)((c && c[1] == 'r' ? KERNEL_READ : 0) |
                           (c && (c[1] == 'w' || c[2] == 'w') ? KERNEL_WRITE : 0));
    } else if (w[0] == 'm') {
      return fail(im, op, "a memref argument that is no buffer of the program");
    } else {
      cst_of(im, v, &value); /* (a scalar: the launch's value, when constant) */
    }
    w += strcspn(w, " \n");
  }
  return launch(im, b, op, bufs, acc, n, value, tok);
}

/* gpu.launch: the body's effects on every buffer of the program. */
static int launch_body(Imp *im, AfBuf *b, const Op *op, const char *tok) {
  const char *names[IM_MAX];
  char keep[IM_MAX][66];
  int bufs[IM_MAX];
  uint8_t acc[IM_MAX];
  int n = 0;
  for (int i = 0; i < im->nalias && n < KERNEL_FOREIGN_ARGS; i++) {
    af_fmt(keep[n], sizeof keep[n], "%%%s", im->alias[i].ssa);
    names[n] = keep[n];
    bufs[n++] = im->alias[i].buf;
  }
  gen_mlir_effects(op->body, op->body_end, names, n, acc);
  return launch(im, b, op, bufs, acc, n, 0, tok);
}

/* A gpu op (the name after "gpu."). */
static int gpu_op(Imp *im, AfBuf *b, const Op *op, const char *s, char r[2][64], int nr) {
  int async = strstr(s, " async") != NULL;
  const char *tok = nr == 2 ? r[1] : r[0];
  if (strncmp(s, "gpu.host_register", 17) == 0) { /* a host buffer, registered from the start */
    int h = buf_at(im, s + 17);
    if (h < 0 || im->buf[h].device)
      return fail(im, op, "gpu.host_register of something not a host buffer of the program");
    im->buf[h].reg = 1;
    return 0;
  }
  if (strncmp(s, "gpu.host_unregister", 19) == 0)
    return 0; /* (a case's registered buffers stay so to its end) */
  if (strncmp(s, "gpu.wait", 8) == 0 && async) {
    af_buf_puts(b, "{\"op\": \"wait_async\", ");
  } else if (strncmp(s, "gpu.wait", 8) == 0) {
    af_buf_puts(b, "{\"op\": \"host_wait\", ");
    deps(im, b, s);
    af_buf_puts(b, "}");
    return 0;
  } else if (!async && strncmp(s, "gpu.alloc", 9) != 0 && strncmp(s, "gpu.dealloc", 11) != 0) {
    return fail(im, op, "a synchronous op: the case language's are async");
  } else if (strncmp(s, "gpu.alloc", 9) == 0) {
    int d = new_buf(im, r[0], 1, count_of(im, s));
    if (d < 0)
      return fail(im, op, "too many buffers");
    im->buf[d].space = strstr(s, ", 1>") != NULL; /* memref<?xT, 1> */
    shape_of(im, d, s);
    af_buf_printf(b, "{\"op\": \"alloc\", \"buf\": \"%s\", \"mode\": \"%s\"", r[0],
                  async                      ? "async"
                  : strstr(s, "host_shared") ? "host_shared"
                                             : "sync");
    if (!async)
      return af_buf_puts(b, "}"), 0;
    af_buf_puts(b, ", ");
  } else if (strncmp(s, "gpu.dealloc", 11) == 0) {
    int d = buf_at(im, strrchr(s, ']') ? strrchr(s, ']') + 1 : s + 11);
    if (d < 0)
      return fail(im, op, "not a buffer of the program");
    af_buf_printf(b, "{\"op\": \"dealloc\", \"buf\": \"%s\", \"async\": %s", im->buf[d].name,
                  async ? "true, " : "false}");
    if (!async)
      return 0;
  } else if (strncmp(s, "gpu.memcpy", 10) == 0 || strncmp(s, "gpu.memset", 10) == 0) {
    const char *o = strrchr(s, ']') ? strrchr(s, ']') + 1 : s + 16;
    int dst = buf_at(im, o), src = buf_at(im, strchr(o, ',') ? strchr(o, ',') + 1 : o);
    char v[64];
    long long val = 0;
    ssa(strchr(o, ',') ? strchr(o, ',') + 1 : o, v, sizeof v);
    if (dst < 0 || (s[7] == 'c' && src < 0))
      return fail(im, op, "an operand that is no buffer of the program");
    if (s[7] == 's' && !cst_of(im, v, &val))
      return fail(im, op, "a value that is no constant");
    if (s[7] == 'c')
      af_buf_printf(b, "{\"op\": \"memcpy\", \"dst\": \"%s\", \"src\": \"%s\", ", im->buf[dst].name,
                    im->buf[src].name);
    else
      af_buf_printf(b, "{\"op\": \"memset\", \"dst\": \"%s\", \"value\": %lld, ", im->buf[dst].name,
                    val);
  } else if (strncmp(s, "gpu.launch_func", 15) == 0) {
    return launch_func(im, b, op, tok);
  } else if (strncmp(s, "gpu.launch", 10) == 0 && op->body) {
    return launch_body(im, b, op, tok);
  } else {
    return fail(im, op, "outside the case language");
  }
  deps(im, b, s);
  af_buf_printf(b, ", \"token\": \"%s\"}", tok);
  define(im, tok);
  return 0;
}

/* async.execute: a region of its own, its body one context deeper. */
static int execute(Imp *im, AfBuf *b, const Op *op, char r[2][64], int nr) {
  if (strstr(op->text, "async.execute [") || im->depth >= 4)
    return fail(im, op,
                strstr(op->text, "[") ? "token dependencies of a region: the case "
                                        "language's regions take values and captures"
                                      : "regions nested four deep");
  int k = ++im->nregions;
  AfBuf inputs, sub;
  af_buf_init(&inputs);
  af_buf_init(&sub);
  int save_first = im->ctx_first, save_def = im->ndefined;
  char save_caps[sizeof im->captures];
  memcpy(save_caps, im->captures, sizeof save_caps);
  im->captures[0] = '\0';
  im->ctx_first = im->ndefined;
  const char *o = strstr(op->text, "async.execute (");
  for (const char *p = o ? o + 15 : NULL; p && *p && *p != ')';) { /* (%v as %x: type, ...) */
    char v[64], x[64];
    p = ssa(p, v, sizeof v);
    const char *as = strstr(p, " as ");
    p = as ? ssa(as + 4, x, sizeof x) : p + strlen(p);
    const char *ref = rv_of(im, v);
    if (ref == NULL || strchr(ref, '.') == NULL) {
      af_buf_free(&inputs);
      return fail(im, op, "an operand that is no region's value");
    }
    af_buf_printf(&inputs, "%s{\"value\": \"%s\", \"as\": \"%s\"}", inputs.len ? ", " : "", ref, x);
    define(im, x);
    while (*p && *p != ',' && *p != ')')
      p += *p == '<' ? (int)strcspn(p, ">") : 1;
    p += *p == ',';
  }
  im->depth++;
  im->yields[im->depth][0] = '\0';
  int first = 1;
  int rc = body(im, &sub, op->body, op->body_end, &first);
  im->depth--;
  if (rc == 0) {
    af_buf_printf(b,
                  "{\"op\": \"execute\", \"region\": \"r%d\", \"inputs\": [%s], \"captures\": "
                  "[%s], \"body\": [%s], \"yields\": [%s]}",
                  k, inputs.p ? inputs.p : "", im->captures, sub.p ? sub.p : "",
                  im->yields[im->depth + 1]);
    af_fmt(im->rv[im->nrv].ssa, sizeof im->rv[0].ssa, "%s", r[0]);
    af_fmt(im->rv[im->nrv++].ref, sizeof im->rv[0].ref, "r%d", k);
    if (nr == 2 && im->nrv < IM_MAX) {
      af_fmt(im->rv[im->nrv].ssa, sizeof im->rv[0].ssa, "%s", r[1]);
      af_fmt(im->rv[im->nrv++].ref, sizeof im->rv[0].ref, "r%d.0", k);
    }
  }
  af_buf_free(&inputs);
  af_buf_free(&sub);
  im->ctx_first = save_first;
  im->ndefined = save_def;
  memcpy(im->captures, save_caps, sizeof save_caps);
  return rc;
}

/* A call: printMemref* is an observation; a function of the module is inlined. */
static int call(Imp *im, AfBuf *b, const Op *op, const char *s, int *first, int inlines) {
  const char *at = strchr(s, '@'), *open = at ? strchr(at, '(') : NULL;
  char fn[128];
  af_fmt(fn, sizeof fn, "%.*s", at ? (int)strcspn(at + 1, "( ") : 0, at ? at + 1 : "");
  if (strncmp(fn, "printMemref", 11) == 0) {
    int h = open ? buf_at(im, open + 1) : -1;
    if (h < 0 || im->buf[h].device || im->depth > 0)
      return fail(im, op,
                  im->depth ? "a print in a region: a case observes in main only"
                            : "a print of no host buffer");
    af_buf_printf(b, "{\"op\": \"observe\", \"buf\": \"%s\"}", im->buf[h].name);
    return 0;
  }
  char key[160];
  af_fmt(key, sizeof key, "func.func @%s(", fn);
  const char *def = strstr(im->text, key);
  const char *lb = def ? strchr(def, '{') : NULL;
  if (def == NULL || lb == NULL || inlines > 8 || strstr(s, "->  (") || !strstr(s, "-> ()"))
    return fail(im, op,
                "a call the case language cannot express (a function of the module "
                "with no results is inlined)");
  const char *pp = def + strlen(key), *ap = open + 1;
  while (*pp && *pp != ')' && *ap && *ap != ')') { /* parameters take the arguments' names */
    char pn[64], an[64];
    pp = ssa(pp, pn, sizeof pn);
    ap = ssa(ap, an, sizeof an);
    long long v;
    if (buf_of(im, an) >= 0)
      alias_add(im, pn, buf_of(im, an));
    else if (cst_of(im, an, &v) && im->ncst < IM_MAX) {
      af_fmt(im->cst[im->ncst].ssa, sizeof im->cst[0].ssa, "%s", pn);
      im->cst[im->ncst++].v = v;
    } else
      return fail(im, op, "an argument that is no buffer or constant");
    while (*pp && *pp != ',' && *pp != ')')
      pp += *pp == '<' ? (int)strcspn(pp, ">") : 1;
    pp += *pp == ',';
    ap += strcspn(ap, ",)");
    ap += *ap == ',';
  }
  im->inlines = inlines + 1;
  int rc = body(im, b, lb + 1, close_of(lb), first);
  im->inlines = inlines;
  return rc;
}

/* One op of a body into b (after a comma unless *first). */
static int one_op(Imp *im, AfBuf *b, const Op *op, int *first) {
  char r[2][64];
  int nr;
  const char *s = results(op->text, r, &nr);
  char name[64];
  af_fmt(name, sizeof name, "%.*s", (int)strcspn(s, " (<{"), s);
  AfBuf one;
  af_buf_init(&one);
  int rc = 0;
  if (strcmp(name, "arith.constant") == 0) {
    const char *v = skip_ws(s + 14);
    char *e;
    long long x = strtoll(v, &e, 10);
    if (e != v && (*e == ' ' || *e == ':') && nr == 1 && im->ncst < IM_MAX) {
      af_fmt(im->cst[im->ncst].ssa, sizeof im->cst[0].ssa, "%s", r[0]);
      im->cst[im->ncst++].v = x;
    }
  } else if (strncmp(name, "arith.", 6) == 0 || strcmp(name, "memref.store") == 0 ||
             strcmp(name, "memref.load") == 0 || strcmp(name, "memref.dealloc") == 0 ||
             strcmp(name, "memref.dim") == 0 || strcmp(name, "return") == 0 ||
             strcmp(name, "func.return") == 0 || strcmp(name, "gpu.thread_id") == 0) {
    /* (host values and frees: the case's own) */
  } else if (strcmp(name, "memref.alloc") == 0 || strcmp(name, "memref.alloca") == 0) {
    if (new_buf(im, r[0], 0, count_of(im, s)) < 0)
      rc = fail(im, op, "too many buffers");
  } else if (strcmp(name, "memref.cast") == 0 && buf_at(im, s + 11) >= 0) {
    alias_add(im, r[0], buf_at(im, s + 11));
  } else if (strcmp(name, "memref.memory_space_cast") == 0 && buf_at(im, s + 24) >= 0) {
    alias_add(im, r[0], buf_at(im, s + 24)); /* (the same buffer, seen in another space) */
  } else if ((strcmp(name, "memref.collapse_shape") == 0 ||
              strcmp(name, "memref.expand_shape") == 0) &&
             buf_at(im, s + strlen(name)) >= 0) {
    alias_add(im, r[0], buf_at(im, s + strlen(name))); /* (the same buffer, reshaped) */
  } else if (strcmp(name, "async.yield") == 0) {
    AfBuf y;
    af_buf_init(&y);
    int k = 0;
    for (const char *p = s + 11; *p && *p != ':'; p++)
      if (*p == '%') {
        char t[64];
        p = ssa(p, t, sizeof t) - 1;
        af_buf_puts(&y, k++ ? ", " : "");
        token_ref(im, &y, t);
      }
    af_fmt(im->yields[im->depth], sizeof im->yields[0], "%s", y.p ? y.p : "");
    af_buf_free(&y);
  } else if (strncmp(name, "gpu.", 4) == 0) {
    rc = gpu_op(im, &one, op, s, r, nr);
  } else if (strcmp(name, "async.execute") == 0 && op->body) {
    rc = execute(im, &one, op, r, nr);
  } else if (strcmp(name, "async.await") == 0) {
    char v[64];
    ssa(s + 11, v, sizeof v);
    const char *ref = rv_of(im, v);
    if (ref == NULL)
      rc = fail(im, op, "no region's token or value");
    else if (strchr(ref, '.')) {
      af_buf_printf(&one, "{\"op\": \"await\", \"value\": \"%s\", \"token\": \"%s\"}", ref, r[0]);
      define(im, r[0]);
    } else
      af_buf_printf(&one, "{\"op\": \"await\", \"region\": \"%s\"}", ref);
  } else if (strcmp(name, "call") == 0 || strcmp(name, "func.call") == 0) {
    int inner = 1; /* (the inlined ops, joined here; one's place in b below) */
    rc = call(im, &one, op, s, &inner, im->inlines);
  } else {
    rc = fail(im, op, "outside the case language");
  }
  if (rc == 0 && one.len) {
    af_buf_printf(b, "%s%s", *first ? "" : ",\n", one.p);
    *first = 0;
  }
  af_buf_free(&one);
  return rc;
}

static int body(Imp *im, AfBuf *b, const char *p, const char *end, int *first) {
  Op op;
  while (p && p < end) {
    p = next_op(im, p, end, &op);
    if (op.text[0] == '\0' && op.body == NULL)
      continue;
    int rc = one_op(im, b, &op, first);
    if (rc)
      return rc;
  }
  return 0;
}

int gen_import_mlir(const char *text, char **json, AfErr *err) {
  *json = NULL;
  const char *m = strstr(text, "func.func @main(");
  const char *lb = m ? strchr(m, '{') : NULL, *rb = lb ? close_of(lb) : NULL;
  if (rb == NULL)
    return af_err_set(err, AF_EPARSE, "no func.func @main with a body");
  Imp *im = af_calloc(1, sizeof *im);
  if (im == NULL)
    return af_err_set(err, AF_ENOMEM, "out of memory");
  im->text = text;
  im->err = err;
  char *k = gen_mlir_kernels(text);
  size_t kl = k ? strlen(k) : 0;
  im->kernels = af_malloc(kl + 2);
  if (im->kernels)
    af_fmt(im->kernels, kl + 2, "\n%s", k ? k : "");
  af_free(k);
  AfBuf ops, out;
  af_buf_init(&ops);
  af_buf_init(&out);
  int first = 1;
  int rc = im->kernels ? body(im, &ops, lb + 1, rb, &first) : AF_ENOMEM;
  for (int i = 0; rc == 0 && i < im->nbuf; i++)
    if (im->buf[i].n < 1 || im->buf[i].n > 1024)
      rc = af_err_set(err, AF_EINVALID,
                      "buffer %%%s: %d elements (a case's buffers have 1 to 1024, "
                      "a constant count)",
                      im->buf[i].name, im->buf[i].n);
  if (rc == 0) {
    af_buf_puts(&out, "{\n  \"format\": \"asyncfuzz-case\",\n  \"version\": 2,\n  \"seed\": \"0\","
                      "\n  \"spin\": 64,\n  \"buffers\": [\n");
    for (int i = 0; i < im->nbuf; i++) {
      char shape[96] = "";
      const int *e = im->buf[i].shape;
      if (im->buf[i].rank == 2)
        af_fmt(shape, sizeof shape, ", \"shape\": [%d, %d]", e[0], e[1]);
      else if (im->buf[i].rank == 3)
        af_fmt(shape, sizeof shape, ", \"shape\": [%d, %d, %d]", e[0], e[1], e[2]);
      for (int d = 0, nd = 0; d < im->buf[i].rank; d++)
        if (im->buf[i].dyn >> d & 1) {
          size_t l = strlen(shape);
          af_fmt(shape + l, sizeof shape - l, "%s%d", nd++ ? ", " : ", \"dynamic\": [", d);
        }
      if (im->buf[i].dyn) {
        size_t l = strlen(shape);
        af_fmt(shape + l, sizeof shape - l, "]");
      }
      af_buf_printf(&out, "    {\"name\": \"%s\", \"kind\": \"%s\", \"n\": %d%s%s%s%s}%s\n",
                    im->buf[i].name, im->buf[i].device ? "device" : "host", im->buf[i].n,
                    im->buf[i].device ? "" : ", \"init\": 1",
                    im->buf[i].reg ? ", \"registered\": true" : "",
                    im->buf[i].space ? ", \"space\": 1" : "", shape, i + 1 < im->nbuf ? "," : "");
    }
    af_buf_printf(&out, "  ],\n  \"body\": [\n%s\n  ]\n}\n", ops.p ? ops.p : "");
  }
  GenCase c; /* (gen_case_from_json makes it, or leaves it empty) */
  int parsed = rc == 0 && !out.oom;
  if (parsed && (gen_case_from_json(&c, out.p, err) || gen_validate(&c, err))) {
    char why[sizeof err->msg];
    af_fmt(why, sizeof why, "%s", err->msg);
    af_err_clear(err);
    rc = af_err_set(err, AF_EINVALID,
                    "the program as a case is not one (a case has one meaning): %s", why);
  }
  if (parsed)
    gen_case_free(&c);
  if (rc == 0 && !out.oom)
    *json = af_buf_take(&out);
  af_buf_free(&ops);
  af_buf_free(&out);
  af_free(im->kernels);
  af_free(im);
  return rc ? rc : *json ? 0 : AF_ENOMEM;
}
