/*
 * mlir.c: finding and driving mlir-opt and mlir-runner (see mlir.h).
 */
#define _GNU_SOURCE
#include "mlir_int.h"
#include "../base/feat.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- normalizing what mlir-opt says ---- */

/* digits at m end an identifier after its '_': a suffix a pass adds to keep names unique
 * (async_execute_fn_1), not part of the name */
static int uniquer(const char *m) {
  while (isdigit((unsigned char)*m))
    m++;
  return !isalnum((unsigned char)*m) && *m != '_';
}

void mlir_normalize(const char *m, char *out, size_t n) {
  size_t k = 0;
  while (*m && k + 1 < n) {
    if (*m == '%' && (isalnum((unsigned char)m[1]) || m[1] == '_')) {
      out[k++] = '%';
      m++;
      while (isalnum((unsigned char)*m) || *m == '_' || *m == '#')
        m++;
    } else if (isdigit((unsigned char)*m) && k > 0 && out[k - 1] == '_' && uniquer(m)) {
      k--; /* a pass's uniquing suffix goes: async_execute_fn_1 is async_execute_fn */
      while (isdigit((unsigned char)*m))
        m++;
    } else if (m[0] == '0' && m[1] == 'x' && strspn(m + 2, "0123456789abcdefABCDEF") >= 4 &&
               !(k > 0 && (isalnum((unsigned char)out[k - 1]) || out[k - 1] == '_'))) {
      out[k++] = 'N'; /* an address: 0x55d991295d60 (not a dimension: memref<0xf16>) */
      for (m += 2; isxdigit((unsigned char)*m); m++)
        ;
    } else if (isdigit((unsigned char)*m)) {
      /* a number, or the digits of a name (i32, sm_90) kept whole */
      int name = k > 0 && (isalpha((unsigned char)out[k - 1]) || out[k - 1] == '_');
      if (!name)
        out[k++] = 'N';
      for (; isdigit((unsigned char)*m); m++)
        if (name && k + 1 < n)
          out[k++] = *m;
    } else {
      out[k++] = *m == '|' ? '/' : *m; /* '|' separates a signature's fields */
      m++;
    }
  }
  while (k > 0 && isspace((unsigned char)out[k - 1]))
    k--;
  out[k] = '\0';
}

/* The op at the start of `line` (after any "%results = "), e.g. "gpu.alloc"; "" if none. */
static void op_name(const char *line, char *out, size_t n) {
  const char *p = line;
  while (*p == ' ' || *p == '\t')
    p++;
  if (*p == '%') {
    const char *eq = strstr(p, " = ");
    const char *nl = strchr(p, '\n');
    if (eq == NULL || (nl && eq > nl)) {
      out[0] = '\0';
      return;
    }
    p = eq + 3;
  }
  if (*p == '"')
    p++;
  size_t k = 0;
  int dot = 0;
  while ((isalnum((unsigned char)*p) || *p == '_' || *p == '.') && k + 1 < n) {
    dot |= *p == '.';
    out[k++] = *p++;
  }
  out[k] = '\0';
  if (!dot || !isalpha((unsigned char)out[0]))
    out[0] = '\0';
}

/* Whether the op on `line` of text, with the one dependency dep (its name, len bytes), is
 * threaded (gen_op_threaded): the nearest line before it with an op that is not pure (a
 * constant, a subview) is a gpu op that defines dep. */
static int threaded_dep(const char *text, const char *line, const char *dep, size_t len) {
  const char *s = line;
  while (s > text) {
    const char *e = s - 1; /* (the newline ending the line before) */
    s = e;
    while (s > text && s[-1] != '\n')
      s--;
    char op[96];
    op_name(s, op, sizeof op);
    if (op[0] == '\0' || strncmp(op, "arith.", 6) == 0 || strcmp(op, "memref.subview") == 0 ||
        strcmp(op, "memref.cast") == 0)
      continue;
    const char *eq = strstr(s, " = ");
    if (strncmp(op, "gpu.", 4) != 0 || eq == NULL || eq > e)
      return 0;
    for (const char *p = s; p < eq; p++) /* (a result of the line: "%b, %t = gpu.alloc async") */
      if (strncmp(p, dep, len) == 0 && (p + len == eq || p[len] == ',') &&
          (p == s || p[-1] == ' ' || p[-1] == ','))
        return 1;
    return 0;
  }
  return 0;
}

/* Whether text (an op's line) has a memref type of rank 2 or more: "memref<4x?xi32>". */
static int in_ranked(const char *text) {
  for (const char *m = strstr(text, "memref<"); m; m = strstr(m + 1, "memref<")) {
    const char *p = m + 7;
    int dims = 0;
    for (;;) {
      size_t e = *p == '?' ? 1 : strspn(p, "0123456789");
      if (e == 0 || p[e] != 'x')
        break;
      dims++;
      p += e + 1;
    }
    if (dims >= 2)
      return 1;
  }
  return 0;
}

/* Whether text (an op's line) has a memref type in a memory space: "memref<?xi32, 1>". */
static int in_space(const char *text) {
  for (const char *m = strstr(text, "memref<"); m; m = strstr(m + 1, "memref<")) {
    int depth = 0;
    const char *p = m + 6, *last = NULL;
    for (; *p && *p != '\n'; p++) {
      depth += *p == '<';
      depth -= *p == '>';
      if (depth == 1 && *p == ',')
        last = p;
      if (depth == 0)
        break;
    }
    if (last && depth == 0) { /* its last parameter: a number, or #gpu.address_space<...> */
      const char *q = last + 1;
      while (*q == ' ')
        q++;
      if ((*q >= '0' && *q <= '9') || strncmp(q, "#gpu.address_space", 18) == 0)
        return 1;
    }
  }
  return 0;
}

/* "gpu.launch_func async deps=2+": the op, whether it is async, its dependency count (with
 * " unthreaded" for one dependency that is not the token of the op before it: all is the text
 * line is in), " view" when an operand is a strided view (a memref.subview), " space" when one
 * is in a memory space and " ranked" when one is of rank 2 or more, as gen_shape_format says
 * it. */
static void op_shape(const char *all, const char *line, const char *op, char *out, size_t n) {
  size_t len = strcspn(line, "\n");
  const char *at = strstr(line, op);
  const char *end = line + len;
  for (const char *l = strstr(line, " loc("); l && l < end; l = strstr(l + 1, " loc("))
    end = l; /* the location (--mlir-print-debuginfo) is not part of the shape */
  int async = 0, deps = 0, unthreaded = 0;
  const char *dep = NULL;
  size_t dlen = 0;
  if (at && at < end) {
    const char *p = at + strlen(op);
    while (*p == ' ' && p < end)
      p++;
    if (strncmp(p, "async", 5) == 0) {
      async = 1;
      p += 5;
      while (*p == ' ' && p < end)
        p++;
    }
    if (*p == '[') {
      const char *q = p + 1;
      while (q < end && *q != ']') {
        if (*q == '%' && deps++ == 0) {
          dep = q;
          dlen = strcspn(q, ",] ");
        }
        q++;
      }
    }
    unthreaded = async && deps == 1 && !threaded_dep(all, line, dep, dlen);
  }
  if (strcmp(op, "builtin.unrealized_conversion_cast") == 0) {
    /* what could not be converted: the cast's types */
    const char *colon = at ? strstr(at, " : ") : NULL;
    if (colon && colon < end) {
      char types[160];
      af_fmt(types, sizeof types, "%.*s", (int)(end - colon - 3), colon + 3);
      char norm[160];
      mlir_normalize(types, norm, sizeof norm);
      af_fmt(out, n, "unrealized_conversion_cast(%s)", norm);
      return;
    }
  }
  char text[1024];
  af_fmt(text, sizeof text, "%.*s", (int)(end - line < 1000 ? end - line : 1000), line);
  int shared = strcmp(op, "gpu.alloc") == 0 && strstr(text, " host_shared") != NULL;
  af_fmt(out, n, "%s%s%s%s%s%s%s%s", op, shared ? " host_shared" : "", async ? " async" : "",
         !async && deps == 0 ? ""
         : deps == 0         ? " deps=0"
         : deps == 1         ? " deps=1"
                             : " deps=2+",
         unthreaded ? " unthreaded" : "", strstr(text, "strided<") ? " view" : "",
         in_space(text) ? " space" : "", in_ranked(text) ? " ranked" : "");
}

void mlir_line_shape(const char *all, const char *line, char *out, size_t n) {
  const char *p = line + strspn(line, " \t"), *eq = strstr(p, " = ");
  if (*p == '%' && eq && eq < p + strcspn(p, "\n"))
    p = eq + 3; /* (past its results) */
  char op[96];
  af_fmt(op, sizeof op, "%.*s", (int)strcspn(p, " (\n"), p);
  const char *at = strchr(p, '@');
  if ((strcmp(op, "call") == 0 || strcmp(op, "func.call") == 0) && at)
    af_fmt(out, n, "func.call @%.*s", (int)strcspn(at + 1, "( \n"), at + 1);
  else
    op_shape(all, p, op, out, n);
  char *u = strstr(out, " unthreaded"); /* (a case's notion, not a program's) */
  if (u)
    memmove(u, u + 11, strlen(u + 11) + 1);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Line n (1-based) of text, or NULL when it has fewer. */
static const char *text_line(const char *text, long n) {
  const char *p = text;
  for (long k = 1; k < n && p; k++) {
    p = strchr(p, '\n');
    if (p)
      p++;
  }
  return n >= 1 ? p : NULL;
}

/* A shape as a cause names it: without its dependency count. One pattern converts an op kind
 * whatever its count, and what it refuses at one count it refuses by the same check at another
 * (a pipeline's earlier passes, gpu-async-region's among them, change the count before the
 * pattern sees it); the count stays in the detail. */
static void cause_shape(char *shape) {
  char *d = strstr(shape, " deps=");
  if (d == NULL)
    return;
  size_t k = strcspn(d + 1, " ");
  memmove(d, d + 1 + k, strlen(d + 1 + k) + 1);
  if (strncmp(d, " unthreaded", 11) == 0 && (d[11] == '\0' || d[11] == ' ' || d[11] == '|'))
    memmove(d, d + 11, strlen(d + 11) + 1);
}

/* The shape of the unconverted op `op` on `line` of code: as the case's own line has it (the
 * input line its location names, when that line has the same op: a pass such as
 * gpu-async-region may have added dependencies), or the block or region op of that line, else
 * as the output has it. */
static void unconverted_shape(const char *code, const char *line, const char *op, const char *input,
                              int first_line, char *out, size_t n) {
  long ln = input ? mlir_op_line(code, line) : -1;
  const char *src = ln > 0 ? text_line(input, ln - (first_line > 0 ? first_line : 1) + 1) : NULL;
  char iop[96] = "";
  if (src)
    op_name(src, iop, sizeof iop);
  GenShape block;
  if (iop[0] && strcmp(iop, op) != 0 && strncmp(op, "gpu.", 4) != 0 &&
      gen_shape_parse(iop, &block) == 0 &&
      (gen_op_flags(block.kind) & (GEN_K_BLOCK | GEN_K_REGION))) {
    /* an op a pass made of the case's block or region (the cf.br of an scf.if's result): named
     * by it, as the case has it */
    af_fmt(out, n, "%s", iop);
    return;
  }
  if (iop[0] && strcmp(iop, op) == 0)
    op_shape(input, src, op, out, n);
  else
    op_shape(code, line, op, out, n);
}

void mlir_unconverted_ops(const char *code, char *root, size_t rn, char *out, size_t n) {
  mlir_unconverted_ops_in(code, NULL, 0, root, rn, out, n);
}

void mlir_unconverted_ops_in(const char *code, const char *input, int first_line, char *root,
                             size_t rn, char *out, size_t n) {
  enum { MAXS = 16 };
  char shapes[MAXS][96];
  int nshapes = 0, ncasts = 0;
  char casts[MAXS][96];
  for (const char *line = code; line && *line;) {
    const char *nl = strchr(line, '\n');
    char op[96];
    op_name(line, op, sizeof op);
    int bad = op[0] && strncmp(op, "llvm.", 5) != 0 && strcmp(op, "gpu.binary") != 0 &&
              strcmp(op, "builtin.module") != 0 && strcmp(op, "module") != 0;
    if (bad && strcmp(op, "gpu.launch_func") == 0) {
      /* the LLVM-level launch that the binary's offloading handler translates */
      size_t len = nl ? (size_t)(nl - line) : strlen(line);
      char buf[1024];
      af_fmt(buf, sizeof buf, "%.*s", (int)(len < 1000 ? len : 1000), line);
      bad = strstr(buf, "!llvm.ptr") == NULL || strstr(buf, " async") != NULL;
    }
    if (bad) {
      char shape[96];
      unconverted_shape(code, line, op, input, first_line, shape, sizeof shape);
      int is_cast = strncmp(shape, "unrealized_conversion_cast", 26) == 0;
      char(*set)[96] = is_cast ? casts : shapes;
      int *cnt = is_cast ? &ncasts : &nshapes;
      int seen = 0;
      for (int i = 0; i < *cnt && !seen; i++)
        seen = strcmp(set[i], shape) == 0;
      if (!seen)
        af_feat_add(AF_FEAT_UNCONVERTED, shape, strlen(shape));
      if (!seen && *cnt < MAXS)
        af_fmt(set[(*cnt)++], 96, "%s", shape);
    }
    line = nl ? nl + 1 : NULL;
  }
  /* casts are what is left around an op that was not converted: they name the cause only
   * when nothing else remains */
  char(*set)[96] = nshapes ? shapes : casts;
  int cnt = nshapes ? nshapes : ncasts;
  char *ptrs[MAXS];
  for (int i = 0; i < cnt; i++)
    ptrs[i] = set[i];
  qsort(ptrs, (size_t)cnt, sizeof ptrs[0], cmp_str);
  /* an op of the case's dialects names the cause; what is left of the code around it (a
   * func.call of a region body the async passes outlined, say) only when nothing else is */
  int pick = 0;
  for (int i = cnt - 1; i >= 0; i--)
    if (strncmp(ptrs[i], "gpu.", 4) == 0 || strncmp(ptrs[i], "async.", 6) == 0)
      pick = i;
  /* a gpu op before a region: an async.execute is left because an op of its body was (a
   * memset the region's token gave a second dependency), and that op is the cause */
  for (int i = cnt - 1; i >= 0; i--)
    if (strncmp(ptrs[i], "gpu.", 4) == 0)
      pick = i;
  af_fmt(root, rn, "%s", cnt ? ptrs[pick] : "");
  cause_shape(root);
  size_t k = 0;
  out[0] = '\0';
  for (int i = 0; i < cnt && i < 4 && k < n; i++) {
    int w = snprintf(out + k, n - k, "%s%s", i ? "," : "", ptrs[i]);
    k += w > 0 ? (size_t)w : 0;
  }
  if (cnt > 4 && k < n)
    af_fmt(out + k, n - k, ",+%d more", cnt - 4);
}

/* The function of stack frame line (its len bytes: "#N 0xADDR NAME(ARGS) (LIBRARY+0xOFF)"), its
 * arguments dropped, into out: 1, or 0 for a frame of no name (an address in a library) or of the
 * signal machinery (the handler, raise, abort, libc). */
static int frame_name(const char *line, size_t len, char *out, size_t n) {
  const char *p = line, *end = line + len;
  while (p < end && *p == ' ')
    p++;
  if (p >= end || *p != '#')
    return 0;
  const char *sym = strstr(p, " 0x");
  if (sym == NULL || sym >= end)
    return 0;
  sym = memchr(sym + 1, ' ', (size_t)(end - sym - 1));
  if (sym == NULL || sym + 1 >= end ||
      (sym[1] == '(' && strncmp(sym + 1, "(anonymous namespace)", 21) != 0))
    return 0;
  sym++;
  /* the name ends at its argument list: the first '(' that does not open "(anonymous namespace)" */
  const char *q = sym;
  while (q < end) {
    if (*q == '(' && strncmp(q, "(anonymous namespace)", 21) != 0)
      break;
    q += *q == '(' ? 21 : 1;
  }
  af_fmt(out, n, "%.*s", (int)(q - sym), sym);
  static const char *const skip[] = {"llvm::sys::", "SignalHandler", "__restore_rt", "raise",
                                     "abort",       "pthread_kill",  "__libc",       "libc.so"};
  for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++)
    if (strstr(out, skip[i]))
      return 0;
  return out[0] != '\0';
}

void mlir_crash_cause(const char *report, char *out, size_t n) {
  static const char *const keys[] = {"Assertion", "LLVM ERROR:", "UNREACHABLE", "error:"};
  char raw[512] = "";
  for (size_t i = 0; i < sizeof keys / sizeof keys[0] && !raw[0]; i++) {
    const char *k = strstr(report, keys[i]);
    if (k) {
      size_t len = strcspn(k, "\n");
      af_fmt(raw, sizeof raw, "%.*s", (int)(len < 400 ? len : 400), k);
    }
  }
  if (!raw[0]) { /* the first named stack frame that is not the signal machinery, and the first
                   op's method from there (what the code that crashed was building or folding) */
    char first[200] = "", op[200] = "";
    for (const char *line = report; line && *line && !op[0];) {
      const char *nl = strchr(line, '\n');
      size_t len = nl ? (size_t)(nl - line) : strlen(line);
      char f[200];
      if (frame_name(line, len, f, sizeof f)) {
        if (!first[0])
          af_fmt(first, sizeof first, "%s", f);
        else if (strstr(f, "Op::") && !strstr(first, "Op::"))
          af_fmt(op, sizeof op, "%s", f);
      }
      line = nl ? nl + 1 : NULL;
    }
    if (first[0])
      af_fmt(raw, sizeof raw, "in %s%s%s", first, op[0] ? " from " : "", op);
  }
  if (!raw[0])
    af_fmt(raw, sizeof raw, "no crash report");
  /* no paths: keep what follows the last slash of each word */
  char nopath[512];
  size_t k = 0;
  for (const char *p = raw; *p && k + 1 < sizeof nopath;) {
    const char *w = p;
    while (*p && *p != ' ')
      p++;
    const char *slash = NULL;
    for (const char *q = w; q < p; q++)
      if (*q == '/')
        slash = q;
    const char *from = slash ? slash + 1 : w;
    while (from < p && k + 1 < sizeof nopath)
      nopath[k++] = *from++;
    while (*p == ' ' && k + 1 < sizeof nopath)
      nopath[k++] = *p++;
  }
  nopath[k] = '\0';
  mlir_normalize(nopath, out, n);
}

/* ---- running the tools ---- */

void mlir_retarget(const LowerSpec *spec, char *text) {
  static const char attr[] = " [#nvvm.target]";
  if (!lower_is_rocdl(spec))
    return;
  for (char *a = strstr(text, attr); a; a = strstr(a, attr))
    memmove(a, a + sizeof attr - 1, strlen(a + sizeof attr - 1) + 1);
}

int mlir_lower_file(const LowerSpec *spec, const char *in_path, const char *out_path,
                    const char *err_path, double timeout_s, ProcResult *r, AfErr *err) {
  char *text = NULL; /* the input, retargeted; its compiled kernels in place where cached */
  int missed = 0;    /* (a kernel module the cache lacks: its binary to take from the output) */
  if (lower_is_rocdl(spec) || mlir__kcache_on(spec)) {
    size_t len;
    int rc = af_read_file(in_path, &text, &len, err);
    char *sub = NULL;
    if (rc == 0) {
      mlir_retarget(spec, text);
      sub = mlir__kcache_apply(spec, text, &missed);
    }
    if (rc == 0 && (sub || lower_is_rocdl(spec)))
      rc = af_write_file(in_path, sub ? sub : text, strlen(sub ? sub : text), err);
    af_free(sub);
    if (rc) {
      af_free(text);
      return rc;
    }
  }
  char pp[sizeof spec->pipeline + 32], log[4400];
  af_fmt(pp, sizeof pp, "--pass-pipeline=%s", spec->pipeline);
  mlir__feat_arg(out_path, 0, log, sizeof log);
  char *argv[] = {(char *)spec->opt,
                  "--mlir-disable-threading",
                  "--mlir-print-debuginfo",
                  (char *)in_path,
                  pp,
                  "-o",
                  (char *)out_path,
                  log[0] ? log : NULL,
                  NULL};
  int rc = af_proc_run(argv, NULL, NULL, NULL, err_path, timeout_s, r, err);
  if (log[0])
    mlir__feat_take(out_path, 1);
  if (rc == 0 && text && missed && r->exited && r->code == 0) {
    char *out = NULL;
    size_t n;
    AfErr e = {0};
    if (af_read_file(out_path, &out, &n, &e) == 0)
      mlir__kcache_take(spec, text, out, n);
    af_free(out);
  }
  af_free(text);
  return rc;
}

int mlir_run_file(const LowerSpec *spec, const char *path, char *const env[], const char *out_path,
                  const char *err_path, double timeout_s, ProcResult *r, AfErr *err) {
  char libs[2200], opt[8];
  af_fmt(libs, sizeof libs, "--shared-libs=%s%s%s", spec->rtlib, spec->utils[0] ? "," : "",
         spec->utils);
  mlir_jit_flag(spec, opt, sizeof opt);
  char *argv[8];
  int k = 0;
  argv[k++] = (char *)spec->runner;
  if (opt[0]) /* (none: the runner's default level) */
    argv[k++] = opt;
  argv[k++] = "-e";
  argv[k++] = "main";
  argv[k++] = "--entry-point-result=void";
  argv[k++] = libs;
  argv[k++] = (char *)path;
  argv[k] = NULL;
  return af_proc_run(argv, env, NULL, out_path, err_path, timeout_s, r, err);
}

void mlir_lowered_free(MlirLowered *l, int n) {
  for (int i = 0; l && i < n; i++) {
    af_free(l[i].code);
    l[i].code = NULL;
  }
}

static void set_outcome(MlirLowered *l, int outcome, const char *cause, const char *detail) {
  l->outcome = outcome;
  l->form[0] = '\0';
  af_fmt(l->cause, sizeof l->cause, "%s", cause);
  af_fmt(l->detail, sizeof l->detail, "%s", detail);
}

/* The first line of text that contains key, as a string. */
static void first_line_with(const char *text, const char *key, char *out, size_t n) {
  const char *k = strstr(text, key);
  out[0] = '\0';
  if (k == NULL)
    return;
  const char *s = k;
  while (s > text && s[-1] != '\n')
    s--;
  size_t len = strcspn(s, "\n");
  af_fmt(out, n, "%.*s", (int)(len < n - 1 ? len : n - 1), s);
}

/* A rejection: mlir-opt's error `msg` located at line `ln` of `chunk` (1-based; 0: not
 * located). The op on that line gives the cause its shape. */
static void set_rejected(MlirLowered *l, const char *chunk, long ln, const char *msg) {
  const char *src = ln > 0 ? text_line(chunk, ln) : NULL;
  char shape[96] = "", op[96], norm[200], cause[200], detail[768];
  if (src) {
    op_name(src, op, sizeof op);
    if (op[0])
      op_shape(chunk, src, op, shape, sizeof shape);
    while (*src == ' ' || *src == '\t')
      src++;
  }
  mlir_normalize(msg, norm, sizeof norm);
  char form[200];
  af_fmt(form, sizeof form, "%s|%s", shape[0] ? shape : "module", norm);
  cause_shape(shape);
  af_fmt(cause, sizeof cause, "%s|%s", shape[0] ? shape : "module", norm);
  af_fmt(detail, sizeof detail, "error: %.*s%s%.*s", (int)strcspn(msg, "\n"), msg,
         src ? "\n  at: " : "", src ? (int)strcspn(src, "\n") : 0, src ? src : "");
  set_outcome(l, MLIR_REJECTED, cause, detail);
  af_fmt(l->form, sizeof l->form, "%s", form);
}

void mlir_root_forms(const char *root, const char *ops, char *out, size_t n) {
  size_t k = 0;
  out[0] = '\0';
  for (const char *p = ops; *p && k < n;) {
    size_t len = strcspn(p, ",");
    char one[200];
    af_fmt(one, sizeof one, "%.*s", (int)(len < 199 ? len : 199), p);
    cause_shape(one);
    if (strcmp(one, root) == 0) {
      int w = snprintf(out + k, n - k, "%s%.*s", k ? "," : "", (int)len, p);
      k += w > 0 ? (size_t)w : 0;
    }
    p += len + (p[len] == ',');
  }
  if (k == 0)
    af_fmt(out, n, "%s", root);
}

/* mlir-opt lowered the case: it is runnable, or unconverted ops remain (code is taken). */
static void set_lowered(MlirLowered *l, char *code, const char *chunk) {
  char root[200], ops[400], d[600];
  mlir_unconverted_ops_in(code, chunk, l->first_line, root, sizeof root, ops, sizeof ops);
  if (ops[0]) {
    af_fmt(d, sizeof d, "ops remain after the pipeline: %s", ops);
    set_outcome(l, MLIR_UNCONVERTED, root, d);
    mlir_root_forms(root, ops, l->form, sizeof l->form);
    af_free(code);
    return;
  }
  set_outcome(l, MLIR_OK, "", "");
  l->code = code;
}

/* Classifies one case lowered alone: in.mlir -> out.mlir in dir/one-<i>. */
static int lower_one(const LowerSpec *spec, const char *dir, int i, const char *chunk,
                     MlirLowered *l, AfErr *err) {
  char in[4200], outp[4200], errp[4200];
  l->first_line = 1;
  af_fmt(in, sizeof in, "%s/one-%d.mlir", dir, i);
  af_fmt(outp, sizeof outp, "%s/one-%d.out.mlir", dir, i);
  af_fmt(errp, sizeof errp, "%s/one-%d.err", dir, i);
  int rc = af_write_file(in, chunk, strlen(chunk), err);
  ProcResult r;
  if (rc == 0)
    rc = mlir_lower_file(spec, in, outp, errp, spec->timeout, &r, err);
  if (rc)
    return rc;
  char *report = NULL;
  if (af_read_file(errp, &report, NULL, err))
    return err->rc;
  int out_rc = 0;
  if (r.timed_out) {
    char d[128];
    af_fmt(d, sizeof d, "mlir-opt ran past %.0f s on this case alone", spec->timeout);
    set_outcome(l, MLIR_TIMEOUT, "mlir-opt timeout", d);
  } else if (r.signaled) {
    char cause[200];
    mlir_crash_cause(report, cause, sizeof cause);
    char c2[200];
    af_fmt(c2, sizeof c2, "%s|%s", strsignal(r.sig), cause);
    char d[768];
    af_fmt(d, sizeof d, "mlir-opt killed by %s: %.600s", strsignal(r.sig), report);
    set_outcome(l, MLIR_CRASH, c2, d);
  } else if (r.code != 0) {
    /* a located error (one-N.mlir:LINE:COL: error: MSG), as a group classifies it */
    char line[600];
    first_line_with(report, "error:", line, sizeof line);
    const char *msg = strstr(line, "error:");
    const char *colon = strchr(line, ':');
    set_rejected(l, chunk, colon ? strtol(colon + 1, NULL, 10) : 0, msg ? msg + 7 : report);
  } else {
    char *code = NULL;
    out_rc = af_read_file(outp, &code, NULL, err);
    if (out_rc == 0)
      set_lowered(l, code, chunk);
  }
  af_free(report);
  return out_rc;
}

/* The chunks as one --split-input-file input in in; start[i]: chunk i's first line,
 * start[n]: one past the last. */
static void join_chunks(char *const *chunks, int n, AfBuf *in, long *start) {
  long line = 1;
  for (int i = 0; i < n; i++) {
    if (i) {
      af_buf_puts(in, "// -----\n");
      line++;
    }
    start[i] = line;
    af_buf_puts(in, chunks[i]);
    for (const char *p = chunks[i]; *p; p++)
      line += *p == '\n';
  }
  start[n] = line + 1;
}

/* mlir-opt over the joined input (dir/batch.mlir) of n chunks: *r, and unless it was killed
 * its output (*text) and diagnostics (*report), LLVM 19's split locations undone. */
static int run_group(const LowerSpec *spec, const char *dir, const char *input, int n,
                     ProcResult *r, char **text, char **report, AfErr *err) {
  char inp[4200], outp[4200], errp[4200];
  af_fmt(inp, sizeof inp, "%s/batch.mlir", dir);
  af_fmt(outp, sizeof outp, "%s/batch.out.mlir", dir);
  af_fmt(errp, sizeof errp, "%s/batch.err", dir);
  int rc = af_write_file(inp, input, strlen(input), err);
  if (rc == 0) {
    char pp[sizeof spec->pipeline + 32], log[4400];
    af_fmt(pp, sizeof pp, "--pass-pipeline=%s", spec->pipeline);
    mlir__feat_arg(outp, 1, log, sizeof log);
    /* output to stdout: with --split-input-file, mlir-opt streams each chunk's result as it
     * goes, so the chunks that lowered are there even when others failed */
    char *argv[] = {(char *)spec->opt,
                    "--mlir-disable-threading",
                    "--mlir-print-debuginfo",
                    "--split-input-file",
                    inp,
                    pp,
                    log[0] ? log : NULL,
                    NULL};
    rc = af_proc_run(argv, NULL, NULL, outp, errp, spec->timeout + 2.0 * n, r, err);
    /* (a run that failed as a whole is run again a case at a time: their actions count, not
     * those of its chunks before the failure, as one case per run would count them) */
    if (log[0])
      mlir__feat_take(outp,
                      rc == 0 && !r->timed_out && !r->signaled && !(r->exited && r->code > 1));
  }
  if (rc == 0 && !r->timed_out && !r->signaled)
    rc = af_read_file(outp, text, NULL, err);
  if (rc == 0 && !r->timed_out && !r->signaled)
    rc = af_read_file(errp, report, NULL, err);
  for (int t = 0; t < 2 && rc == 0 && (t ? *report : *text); t++) { /* LLVM 19's locations */
    char **x = t ? report : text;
    if (strstr(*x, "within split at ") == NULL)
      continue;
    char *u = mlir__unsplit_locs(*x);
    if (u == NULL)
      return af_err_set(err, AF_ENOMEM, "out of memory");
    af_free(*x);
    *x = u;
  }
  return rc;
}

/* The located errors of the report (batch.mlir:LINE:COL: error: MSG): the first per chunk
 * rejects it. */
static void take_errors(const char *report, char *const *chunks, int n, const long *start,
                        MlirLowered *out) {
  const char *base = "batch.mlir:";
  for (const char *p = report; p && *p;) {
    const char *nl = strchr(p, '\n');
    const char *b = strstr(p, base);
    if (b && (nl == NULL || b < nl)) {
      long ln = strtol(b + strlen(base), NULL, 10);
      const char *e = strstr(b, ": error: ");
      if (e && (nl == NULL || e < nl) && ln > 0) {
        int i = 0;
        while (i + 1 < n && start[i + 1] <= ln)
          i++;
        if (out[i].outcome == MLIR_OK && out[i].cause[0] == '\0') {
          char msg[512];
          size_t len = nl ? (size_t)(nl - e - 9) : strlen(e + 9);
          af_fmt(msg, sizeof msg, "%.*s", (int)(len < 500 ? len : 500), e + 9);
          set_rejected(&out[i], chunks[i], ln - start[i] + 1, msg);
        }
      }
    }
    p = nl ? nl + 1 : NULL;
  }
}

/* The chunks of the output, in input order (a failed chunk's is empty): each lowered chunk's
 * code; a chunk that failed without a located error is lowered again alone. in[i]: chunk i as
 * mlir-opt read it but for the kernel cache (retargeted); NULL where that is sub[i], as read;
 * missed[i]: whether it held a kernel module the cache lacks (its binary to take). */
static int take_outputs(const LowerSpec *spec, const char *dir, const char *text,
                        char *const *chunks, const char *const *in, const char *const *sub,
                        const char *missed, int n, int base, const long *start, MlirLowered *out,
                        AfErr *err) {
  const char *p = text;
  int rc = 0;
  for (int i = 0; i < n && rc == 0; i++) {
    af_feat_case(i); /* (n > 1: chunk i is case i) */
    const char *sep = strstr(p, "// -----\n");
    while (sep && sep != text && sep[-1] != '\n')
      sep = strstr(sep + 1, "// -----\n");
    size_t len = sep ? (size_t)(sep - p) : strlen(p);
    if (out[i].outcome != MLIR_REJECTED) {
      int empty = 1;
      for (size_t k = 0; k < len && empty; k++)
        empty = isspace((unsigned char)p[k]);
      if (empty) {
        rc = lower_one(spec, dir, base + i, chunks[i], &out[i], err);
      } else {
        char *code = af_malloc(len + 1);
        if (code == NULL)
          return af_err_set(err, AF_ENOMEM, "out of memory");
        memcpy(code, p, len);
        code[len] = '\0';
        if (missed[i])
          mlir__kcache_take(spec, in[i] ? in[i] : sub[i], code, len);
        out[i].first_line = (int)start[i];
        set_lowered(&out[i], code, chunks[i]);
      }
    }
    p = sep ? sep + 9 : p + len;
  }
  return rc;
}

static int lower_joined(const LowerSpec *spec, const char *dir, char *const *chunks, int n,
                        int base, MlirLowered *out, AfErr *err);

int mlir_lower_group(const LowerSpec *spec, const char *dir, char *const *chunks, int n,
                     MlirLowered *out, AfErr *err) {
  memset(out, 0, sizeof *out * (size_t)n);
  /* (features attributed to cases: chunk i is case i, one chunk the current case) */
  int cur = af_feat_current_case();
  int rc = n == 1 ? lower_one(spec, dir, 0, chunks[0], &out[0], err)
                  : lower_joined(spec, dir, chunks, n, 0, out, err);
  for (int i = 0; i < n && rc == 0 && af_feat_on(); i++) {
    if (n > 1)
      af_feat_case(i);
    if (out[i].code)
      mlir_feat_calls(out[i].code);
  }
  af_feat_case(cur);
  return rc;
}

/* mlir_lower_group of n > 1 chunks: one mlir-opt over them all, one per chunk where it failed
 * as a whole (by halves where it crashed). base: the group's number of chunks[0] (a case lowered
 * alone is in one-<base + i>.mlir, as a crash report names it). */
static int lower_joined(const LowerSpec *spec, const char *dir, char *const *chunks, int n,
                        int base, MlirLowered *out, AfErr *err) {
  AfBuf in;
  af_buf_init(&in);
  long *start = af_malloc(sizeof *start * (size_t)(n + 1));
  /* each chunk retargeted (work), and with its cached kernels in place (sub) */
  char **work = af_calloc((size_t)n, sizeof *work), **sub = af_calloc((size_t)n, sizeof *sub);
  char *missed = af_calloc((size_t)n, 1);
  int rc = 0;
  for (int i = 0; i < n && rc == 0 && start && work && sub && missed; i++) {
    work[i] = af_strdup(chunks[i]);
    if (work[i] == NULL) {
      rc = af_err_set(err, AF_ENOMEM, "out of memory");
      break;
    }
    mlir_retarget(spec, work[i]);
    int miss;
    sub[i] = mlir__kcache_apply(spec, work[i], &miss);
    missed[i] = (char)miss;
    if (sub[i] == NULL) { /* (none cached: the chunk as it is) */
      sub[i] = work[i];
      work[i] = NULL;
    }
  }
  if (rc == 0 && (start == NULL || work == NULL || sub == NULL || missed == NULL))
    rc = af_err_set(err, AF_ENOMEM, "out of memory");
  if (rc == 0)
    join_chunks(sub, n, &in, start);
  if (rc == 0 && in.oom)
    rc = af_err_set(err, AF_ENOMEM, "out of memory");
  ProcResult r;
  memset(&r, 0, sizeof r);
  char *text = NULL, *report = NULL;
  if (rc == 0) {
    mlir_feat_lines(start, NULL, n);
    rc = run_group(spec, dir, in.p, n, &r, &text, &report, err);
    mlir_feat_lines(NULL, NULL, 0);
  }
  af_buf_free(&in);
  if (rc == 0 && !r.timed_out && (r.signaled || (r.exited && r.code > 1)) && n >= 4 &&
      !af_feat_on()) {
    /* the group crashed: each half again (one chunk: alone), down to the cases responsible, in
     * about 2 log2(n) runs per crashing case where one per case took n (each chunk's outcome in
     * a group is what it is alone, as in any group; features are credited by the whole group's
     * lines, so a run that collects them lowers one case per process) */
    int h = n / 2; /* (2 or more each) */
    rc = lower_joined(spec, dir, chunks, h, base, out, err);
    if (rc == 0)
      rc = lower_joined(spec, dir, chunks + h, n - h, base + h, out + h, err);
  } else if (rc == 0 && (r.timed_out || r.signaled || (r.exited && r.code > 1))) {
    /* the group as a whole failed: one case per process finds the case responsible */
    for (int i = 0; i < n && rc == 0; i++) {
      af_feat_case(i);
      rc = lower_one(spec, dir, base + i, chunks[i], &out[i], err);
    }
  } else if (rc == 0) {
    take_errors(report, chunks, n, start, out);
    rc = take_outputs(spec, dir, text, chunks, (const char *const *)work, (const char *const *)sub,
                      missed, n, base, start, out, err);
  }
  for (int i = 0; work && sub && i < n; i++) {
    af_free(work[i]);
    af_free(sub[i]);
  }
  af_free(work);
  af_free(sub);
  af_free(missed);
  af_free(text);
  af_free(report);
  af_free(start);
  return rc;
}
