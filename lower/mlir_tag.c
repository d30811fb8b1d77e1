/*
 * mlir_tag.c: the case op of each runtime call in lowered code (see mlir.h): its location, kept
 * with --mlir-print-debuginfo, names a line of the rendered case. And LLVM 19's locations of a
 * --split-input-file chunk, rewritten to the file's lines (mlir_int.h).
 */
#include "mlir_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- LLVM 19's split locations ---- */

/* LLVM 19 locates what --split-input-file parsed relative to its chunk, as
 * `within split at FILE:N offset :L:C` (quoted in printed locations: loc("within split at
 * FILE:N offset ":L:C)), where LLVM 20 and newer give the file's own line, N + L - 1. Returns
 * text with the older form rewritten to the newer (FILE:LINE:C, loc("FILE":LINE:C)), or NULL
 * when out of memory. */
char *mlir__unsplit_locs(const char *text) {
  static const char key[] = "within split at ";
  AfBuf b;
  af_buf_init(&b);
  const char *p = text;
  for (const char *k = strstr(p, key); k; k = strstr(p, key)) {
    const char *f = k + sizeof key - 1, *off = strstr(f, " offset ");
    const char *nl = strchr(f, '\n');
    const char *colon = off ? off : NULL; /* FILE:N ends where " offset " begins */
    while (colon && colon > f && *colon != ':')
      colon--;
    const char *after = off ? off + 8 : NULL; /* `:L:C` or `":L:C` */
    int quoted = after && *after == '"';
    if (!off || (nl && off > nl) || colon <= f || after[quoted] != ':') {
      af_buf_put(&b, p, (size_t)(f - p)); /* not the form: kept as it is */
      p = f;
      continue;
    }
    long n = strtol(colon + 1, NULL, 10);
    char *end = NULL;
    long l = strtol(after + quoted + 1, &end, 10);
    af_buf_put(&b, p, (size_t)(k - p));
    af_buf_put(&b, f, (size_t)(colon - f));
    af_buf_printf(&b, "%s:%ld", quoted ? "\"" : "", n + l - 1);
    p = end;
  }
  af_buf_puts(&b, p);
  if (b.oom) {
    af_buf_free(&b);
    return NULL;
  }
  return b.p ? b.p : af_strdup("");
}

/* ---- case ops for the calls of lowered code ---- */

typedef struct LocAlias {
  const char *name; /* "#loc12" */
  size_t nlen;
  const char *val; /* what follows "= " on its line */
  size_t vlen;
} LocAlias;

/* The input line a location names: its first "FILE":LINE:COL, through aliases (depth-limited).
 * -1 when there is none (unknown, or a location made of names only). */
static int loc_line(const char *s, size_t n, const LocAlias *al, int nal, int depth) {
  for (size_t i = 0; i + 1 < n; i++) {
    if (s[i] == '"') { /* a string: "FILE":LINE:COL, or a name */
      size_t j = i + 1;
      while (j < n && s[j] != '"')
        j += s[j] == '\\' ? 2 : 1;
      if (j + 2 < n && s[j + 1] == ':' && isdigit((unsigned char)s[j + 2]))
        return (int)strtol(s + j + 2, NULL, 10);
      i = j;
    } else if (s[i] == '#' && depth < 8) {
      size_t j = i + 1;
      while (j < n && (isalnum((unsigned char)s[j]) || s[j] == '_'))
        j++;
      for (int k = 0; k < nal; k++)
        if (al[k].nlen == j - i && memcmp(al[k].name, s + i, j - i) == 0) {
          int l = loc_line(al[k].val, al[k].vlen, al, nal, depth + 1);
          if (l > 0)
            return l;
        }
      i = j - 1;
    }
  }
  return -1;
}

/* 1: the line calls the runtime library (a call, a printMemref* of a program included, or an
 * LLVM-level gpu.launch_func, which becomes mgpuLaunchKernel when the module is translated); 2: it
 * returns from a function (the op is reset there, so nothing after it, such as the module unload at
 * exit, keeps a stale one); 0: neither. */
static int tag_kind(const char *line, size_t len) {
  /* @printMemref and @asyncfuzz_read: a program's host reads (not _mlir_ciface_printMemref*: a
   * wrapper's call keeps its caller's op) */
  static const char *const callee[] = {
      "@mgpu",        "@mlirAsyncRuntime", "@asyncfuzz_observe(", "@asyncfuzz_host_init(",
      "@printMemref", "@asyncfuzz_read"};
  char buf[256];
  af_fmt(buf, sizeof buf, "%.*s", (int)(len < 255 ? len : 255), line);
  const char *p = buf + strspn(buf, " ");
  if (strncmp(p, "llvm.return", 11) == 0)
    return 2;
  if (strncmp(p, "gpu.launch_func", 15) == 0)
    return 1;
  const char *c = strstr(buf, "llvm.call @");
  if (c == NULL)
    return 0;
  for (size_t k = 0; k < sizeof callee / sizeof callee[0]; k++)
    if (strncmp(c + 10, callee[k], strlen(callee[k])) == 0)
      return 1;
  return 0;
}

/* The location aliases of code, its lines "#locN = loc(...)": 0 (*out, *n of them; *out NULL
 * when none) or -1 out of memory. */
static int loc_aliases(const char *code, LocAlias **out, int *n) {
  LocAlias *al = NULL;
  int nal = 0, cap = 0;
  for (const char *l = code; l && *l;) {
    const char *nl = strchr(l, '\n');
    size_t len = nl ? (size_t)(nl - l) : strlen(l);
    const char *eq = l[0] == '#' ? strstr(l, " = ") : NULL;
    if (eq && eq < l + len) {
      if (af_grow((void **)&al, &cap, nal + 1, sizeof *al)) {
        af_free(al);
        return -1;
      }
      al[nal++] = (LocAlias){l, (size_t)(eq - l), eq + 3, len - (size_t)(eq + 3 - l)};
    }
    l = nl ? nl + 1 : NULL;
  }
  *out = al;
  *n = nal;
  return 0;
}

/* The op's own location on a line (the last " loc(" of it), or NULL. */
static const char *own_loc(const char *l, size_t len) {
  const char *loc = NULL;
  for (const char *q = l; (q = strstr(q, " loc(")) != NULL && q < l + len; q++)
    loc = q;
  return loc;
}

int mlir_op_line(const char *code, const char *line) {
  size_t len = strcspn(line, "\n");
  const char *loc = own_loc(line, len);
  LocAlias *al = NULL;
  int nal = 0;
  if (loc == NULL || loc_aliases(code, &al, &nal) != 0)
    return -1;
  int ln = loc_line(loc, (size_t)(line + len - loc), al, nal, 0);
  af_free(al);
  return ln;
}

char *mlir_tag_calls(const char *code, const GenLineMap *map, int first_line, int *ncalls,
                     int *ntagged) {
  *ncalls = *ntagged = 0;
  if (first_line < 1)
    first_line = 1;
  LocAlias *al = NULL;
  int nal = 0;
  if (loc_aliases(code, &al, &nal) != 0)
    return NULL;
  AfBuf b;
  af_buf_init(&b);
  int k = 0, declared = 0;
  for (const char *l = code; l && *l;) {
    const char *nl = strchr(l, '\n');
    size_t len = nl ? (size_t)(nl - l) : strlen(l);
    int kind = tag_kind(l, len);
    if (kind) {
      int op = -1;
      const char *loc = own_loc(l, len); /* the op's own location ends its line */
      if (loc && kind == 1) {
        int line = loc_line(loc, (size_t)(l + len - loc), al, nal, 0);
        int at = line - first_line;
        if (map && line > 0 && at >= 0 && at < map->nlines)
          op = map->op[at];
      }
      size_t ind = strspn(l, " ");
      af_buf_printf(&b,
                    "%.*s%%afop%d = llvm.mlir.constant(%d : i32) : i32\n"
                    "%.*sllvm.call @asyncfuzz_rt_set_op(%%afop%d) : (i32) -> ()\n",
                    (int)ind, l, k, op, (int)ind, l, k);
      k++;
      *ncalls += kind == 1;
      *ntagged += op >= 0;
    }
    af_buf_put(&b, l, len);
    af_buf_puts(&b, "\n");
    if (!declared && strncmp(l, "module", 6) == 0) { /* the module's first line */
      af_buf_puts(&b, "  llvm.func @asyncfuzz_rt_set_op(i32) attributes {sym_visibility = "
                      "\"private\"}\n");
      declared = 1;
    }
    l = nl ? nl + 1 : NULL;
  }
  af_free(al);
  return af_buf_take(&b);
}
