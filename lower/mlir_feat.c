/*
 * mlir_feat.c: features (base/feat.h) of what mlir-opt did with a case: the rewrite patterns its
 * action log (--log-actions-to) says it tried, each with the op it was tried on, and each pair
 * tried one after the other within one pass's run (a gpu.wait async is tried as a host wait
 * first, then as an async one); and the mgpu* call sequences of the lowered code, per function.
 * A batch's log is read through a FIFO as mlir-opt writes it (see mlir__feat_arg).
 */
#include "mlir_int.h"
#include "../base/feat.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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

/* The cases of the next run's input, by line (mlir_feat_lines). */
static struct {
  const long *first;
  const int *cases;
  int n;
} g_lines;

void mlir_feat_lines(const long *first, const int *cases, int n) {
  g_lines.first = first;
  g_lines.cases = cases;
  g_lines.n = first ? n : 0;
}

/* The line the op of an action line [p, end) is located at: its last loc(...), the first
 * "FILE":LINE in it (a fused or named location's too); 0 when none (loc(unknown)). */
static long action_line(const char *p, const char *end) {
  const char *l = NULL;
  for (const char *q = strstr(p, "loc("); q && q < end; q = strstr(q + 4, "loc("))
    l = q;
  for (const char *q = l; q && q + 2 < end; q++)
    if (q[0] == '"' && q[1] == ':' && q[2] >= '0' && q[2] <= '9')
      return strtol(q + 2, NULL, 10);
  return 0;
}

/* The case of line ln of the input (-1: before the first case's). */
static int line_case(long ln) {
  int i = -1;
  while (i + 1 < g_lines.n && g_lines.first[i + 1] <= ln)
    i++;
  return i < 0 ? -1 : g_lines.cases ? g_lines.cases[i] : i;
}

void mlir_feat_actions(const char *log) {
  static const char key[] = "Action `apply-pattern pattern: ";
  static const char pass[] = "Action `pass-execution`";
  char prev[200] = "";
  int cur = af_feat_current_case(), kernels = 0;
  for (const char *p = log; p && *p;) {
    const char *nl = strchr(p, '\n');
    const char *end = nl ? nl : p + strlen(p);
    const char *a = strstr(p, key), *x = strstr(p, pass);
    if (g_lines.n && ((x && x < end) || (a && a < end))) {
      long ln = action_line(p, end); /* (the case whose op it is; none: as the action before) */
      if (ln > 0)
        af_feat_case(line_case(ln));
    }
    if (x && x < end) {
      /* a pass starts: pairs are of patterns within one pass's run, so none spans two chunks of
       * a batch (each chunk starts with a pass), whatever the log shows between them. The
       * library kernels' module (not the gpu.launch bodies outlined) is no case's: a batch's
       * has every kernel its cases launch, one case's its own, and the same kernels lower the
       * same way whatever the case; its patterns are not counted */
      prev[0] = '\0';
      const char *k = strstr(x, "gpu.module @asyncfuzz_kernels");
      kernels = k && k < end;
    } else if (a && a < end && !kernels) {
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
      /* pairs are of patterns within one function: none spans two functions, which a batch's
       * module orders otherwise than one case's */
      if (strncmp(op, "gpu.func/", 9) == 0 || strncmp(op, "func.func/", 10) == 0 ||
          strncmp(op, "llvm.func/", 10) == 0)
        prev[0] = '\0';
      if (prev[0])
        af_feat_addf(AF_FEAT_PATTERN_PAIR, "%s then %s", prev, pat);
      memcpy(prev, pat, sizeof prev);
    }
    p = nl ? nl + 1 : NULL;
  }
  af_feat_case(cur);
}

static void feat_calls(const char *code, int by_case) {
  char seq[3][48] = {"", "", ""};
  int cur = af_feat_current_case();
  for (const char *p = code; p && *p;) {
    const char *nl = strchr(p, '\n');
    const char *end = nl ? nl : p + strlen(p);
    const char *f = strstr(p, "llvm.func ");
    const char *c = strstr(p, "llvm.call @mgpu");
    if (f && f < end) { /* a new function: a new sequence */
      seq[0][0] = seq[1][0] = seq[2][0] = '\0';
      const char *k = strstr(f, "@af_case_");
      if (by_case) /* (a batch's case function; another, outlined from one, is no one case's) */
        af_feat_case(k && k < end ? (int)strtol(k + 9, NULL, 10) : -1);
    } else if (c && c < end) {
      const char *name = c + 11;
      size_t len = strcspn(name, "( \n");
      memmove(seq[0], seq[1], sizeof seq[0]);
      memmove(seq[1], seq[2], sizeof seq[1]);
      af_fmt(seq[2], sizeof seq[2], "%.*s", (int)(len < 40 ? len : 40), name);
      af_feat_addf(AF_FEAT_CALLS, "%s %s %s", seq[0], seq[1], seq[2]);
    }
    p = nl ? nl + 1 : NULL;
  }
  af_feat_case(cur);
}

void mlir_feat_calls(const char *code) {
  feat_calls(code, 0);
}

void mlir_feat_calls_group(const char *code) {
  feat_calls(code, 1);
}

/* A batch's action log, as mlir-opt writes it. mlir-opt opens --log-actions-to's path again for
 * each --split-input-file chunk, which truncates a file: the file would hold the last chunk's log
 * only. So for a batch the path is a FIFO, which a thread reads, one open after another, until the
 * tool is done. (Plain malloc, not af_malloc: the allocator hook is not made for two threads.) */
static struct {
  pthread_t th;
  char path[4300];
  char *text;
  size_t len, cap;
  int running;
  int full; /* out of memory: what comes after is not kept (a hole would join two lines) */
  atomic_int stop, done;
} L;

static void keep(const char *buf, size_t k) {
  if (L.full)
    return;
  if (L.len + k + 1 > L.cap) {
    size_t cap = (L.len + k + 1) * 2;
    char *t = realloc(L.text, cap);
    if (t == NULL) { /* (read on, not kept: the tool must not block; the features are fewer) */
      L.full = 1;
      return;
    }
    L.text = t;
    L.cap = cap;
  }
  memcpy(L.text + L.len, buf, k);
  L.len += k;
  L.text[L.len] = '\0';
}

static void *drain(void *arg) {
  (void)arg;
  static char buf[65536];
  while (!atomic_load(&L.stop)) {
    int fd = open(L.path, O_RDONLY | O_CLOEXEC); /* (waits for a writer) */
    if (fd < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    for (;;) {
      ssize_t k = read(fd, buf, sizeof buf);
      if (k < 0 && errno == EINTR)
        continue;
      if (k <= 0)
        break;
      keep(buf, (size_t)k);
    }
    close(fd);
  }
  atomic_store(&L.done, 1);
  return NULL;
}

/* Ends the reader, which may be waiting in open for a writer that will not come: the FIFO is
 * opened for writing (and closed) until the thread is done. */
static void drain_end(void) {
  atomic_store(&L.stop, 1);
  while (!atomic_load(&L.done)) {
    int fd = open(L.path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0)
      close(fd);
    else
      nanosleep(&(struct timespec){0, 1000000}, NULL); /* (the reader is not in open yet) */
  }
  pthread_join(L.th, NULL);
  L.running = 0;
}

void mlir__feat_arg(const char *out_path, int batch, char *arg, size_t n) {
  if (!af_feat_on()) {
    if (n > 0)
      arg[0] = '\0';
    return;
  }
  char path[sizeof L.path];
  af_fmt(path, sizeof path, "%s.actions", out_path);
  af_fmt(arg, n, "--log-actions-to=%s", path);
  if (L.running) /* (a run whose log was not taken) */
    drain_end();
  unlink(path);
  if (!batch)
    return;
  memcpy(L.path, path, sizeof path);
  L.len = 0;
  L.full = 0;
  atomic_store(&L.stop, 0);
  atomic_store(&L.done, 0);
  if (mkfifo(L.path, 0600) == 0 && pthread_create(&L.th, NULL, drain, NULL) == 0)
    L.running = 1;
  else /* a plain file, then, which holds the batch's last chunk only */
    unlink(L.path);
}

void mlir__feat_take(const char *out_path, int keep) {
  if (!af_feat_on())
    return;
  char path[sizeof L.path];
  af_fmt(path, sizeof path, "%s.actions", out_path);
  const char *log = NULL;
  char *own = NULL, *unsplit = NULL;
  if (L.running && strcmp(path, L.path) == 0) {
    drain_end();
    log = L.len ? L.text : NULL; /* (read where the reader kept it) */
  } else {
    AfErr err = {0};
    if (af_read_file(path, &own, NULL, &err) == 0)
      log = own;
  }
  if (log && g_lines.n && strstr(log, "within split at ")) /* LLVM 19: the file's lines */
    unsplit = mlir__unsplit_locs(log);
  if (log && keep)
    mlir_feat_actions(unsplit ? unsplit : log);
  af_free(unsplit);
  af_free(own);
  unlink(path);
}
