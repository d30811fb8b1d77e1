/*
 * mlir_feat.c: features (base/feat.h) of what mlir-opt did with a case: the rewrite patterns its
 * action log (--log-actions-to) says it tried, each with the op it was tried on, and each pair
 * tried one after the other (a gpu.wait async is tried as a host wait first, then as an async
 * one); and the mgpu* call sequences of the lowered code, per function.
 */
#include "mlir_int.h"
#include "../base/feat.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The op an action names, "(%3 = \"gpu.wait\"(%1) ...)" or "(gpu.func @k ...)", as its name and
 * the number of !gpu.async.token it mentions (0..3, 3: more): "gpu.wait/2". */
static void action_op(const char *p, const char *end, char *out, size_t n) {
  const char *q = p;
  if (*q == '%') { /* results: "%a, %b = " or "%3:2 = " */
    const char *eq = strstr(q, " = ");
    q = eq && eq < end ? eq + 3 : q;
  }
  if (*q == '"')
    q++;
  size_t len = 0;
  while (q + len < end && q[len] != '"' && q[len] != ' ' && q[len] != '(' && q[len] != '<')
    len++;
  int toks = 0;
  for (const char *t = strstr(p, "!gpu.async.token"); t && t < end && toks < 3;
       t = strstr(t + 1, "!gpu.async.token"))
    toks++;
  af_fmt(out, n, "%.*s/%d", (int)(len < 80 ? len : 80), q, toks);
}

void mlir_feat_actions(const char *log) {
  static const char key[] = "Action `apply-pattern pattern: ";
  char prev[200] = "";
  for (const char *p = log; p && *p;) {
    const char *nl = strchr(p, '\n');
    const char *end = nl ? nl : p + strlen(p);
    const char *a = strstr(p, key);
    if (a && a < end) {
      const char *name = a + sizeof key - 1, *q = name;
      int depth = 0; /* the name ends at " (" outside its template arguments */
      while (q < end && !(depth == 0 && q[0] == ' ' && q[1] == '(')) {
        depth += *q == '<' ? 1 : *q == '>' ? -1 : 0;
        q++;
      }
      char pat[200], op[100];
      af_fmt(pat, sizeof pat, "%.*s", (int)(q - name < 190 ? q - name : 190), name);
      action_op(q < end ? q + 2 : end, end, op, sizeof op);
      af_feat_addf(AF_FEAT_PATTERN, "%s on %s", pat, op);
      if (prev[0])
        af_feat_addf(AF_FEAT_PATTERN_PAIR, "%s then %s", prev, pat);
      memcpy(prev, pat, sizeof prev);
    }
    p = nl ? nl + 1 : NULL;
  }
}

void mlir_feat_calls(const char *code) {
  char seq[3][48] = {"", "", ""};
  for (const char *p = code; p && *p;) {
    const char *nl = strchr(p, '\n');
    const char *end = nl ? nl : p + strlen(p);
    const char *f = strstr(p, "llvm.func ");
    const char *c = strstr(p, "llvm.call @mgpu");
    if (f && f < end) /* a new function: a new sequence */
      seq[0][0] = seq[1][0] = seq[2][0] = '\0';
    else if (c && c < end) {
      const char *name = c + 11;
      size_t len = strcspn(name, "( \n");
      memmove(seq[0], seq[1], sizeof seq[0]);
      memmove(seq[1], seq[2], sizeof seq[1]);
      af_fmt(seq[2], sizeof seq[2], "%.*s", (int)(len < 40 ? len : 40), name);
      af_feat_addf(AF_FEAT_CALLS, "%s %s %s", seq[0], seq[1], seq[2]);
    }
    p = nl ? nl + 1 : NULL;
  }
}

void mlir__feat_arg(const char *out_path, char *arg, size_t n) {
  if (af_feat_on())
    af_fmt(arg, n, "--log-actions-to=%s.actions", out_path);
  else if (n > 0)
    arg[0] = '\0';
}

void mlir__feat_take(const char *out_path) {
  if (!af_feat_on())
    return;
  char path[4300];
  af_fmt(path, sizeof path, "%s.actions", out_path);
  char *log = NULL;
  AfErr err = {0};
  if (af_read_file(path, &log, NULL, &err) == 0)
    mlir_feat_actions(log);
  af_free(log);
  unlink(path);
}
