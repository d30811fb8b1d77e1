/*
 * blame.c: the op that wrote an observation's wrong bytes (oracle.h, oracle_wrong_bytes; the
 * rule is docs/signatures.md, "Everything else").
 *
 * A wrong value with no missing edge is a data fault: some op wrote the wrong bytes, or did not
 * write its own. First the views: when the reference, with every view's offset taken as 0 (or
 * every view of one op kind), gives exactly what was seen, and with every stride taken as 1
 * does not (or the other way round), the view lost that parameter, whichever op used it.
 * Then dynamic shared memory: when the reference, with every launch that gives its kernel some
 * giving it none, gives exactly what was seen, the kernels lost it ("shared-memory").
 * Otherwise the reference's write log (oracle_write_log) is walked back from the observation's
 * first wrong word:
 *   - an op that wrote the same buffer after the word's last writer (elsewhere, in the
 *     reference) and wrote the seen value, or wrote through a view, wrote in the wrong place:
 *     it is named;
 *   - a copy that read through a view whose lost offset or stride gives the seen value is named;
 *   - else the walk goes on at a copy's source word, or a kernel's input words (kernels are
 *     elementwise), where only an op that evidently wrote in the wrong place, or whose write
 *     did not land, is named;
 *   - else the word still holding what it held before its last writer wrote says that write did
 *     not land: the writer is named; and at the first level, the last writer is named anyway.
 * An op named through a view is named by the view parameter its wrong elements say it lost
 * ("view-offset", "view-stride", "dim-stride": a view in rows' first dimension's), else by its
 * kind and the element type it writes.
 */
#include "oracle.h"

#include <stdio.h>
#include <string.h>

#define MAX_WRONG 1024 /* wrong words followed (the first ones of the observation) */
#define MAX_HOPS 16
#define MAX_LEVELS 256 /* levels of the walk in all (each a scan of the log) */

typedef struct Walk {
  const GenCase *c;
  const OracleWrite *log;
  int nlog;
  int buf, at; /* the buffer the wrong words are in, and the op before which they were wrong */
  int nw;
  int unknown; /* the seen values of the words are not known (a kernel's inputs) */
  int *budget; /* the levels the whole walk may still visit (kernels branch into inputs) */
  int32_t word[MAX_WRONG], got[MAX_WRONG];
} Walk;

/* The last write to word k of buffer b by an op before op t (the initial content counts), or
 * -1. */
static int last_write(const Walk *w, int b, int k, int t) {
  for (int j = w->nlog - 1; j >= 0; j--)
    if (w->log[j].op < t && w->log[j].buf == b && w->log[j].word == k)
      return j;
  return -1;
}

static int words_per(const GenCase *c, int b) {
  return gen_elem_size(c->bufs[b].elem) == 8 ? 2 : 1;
}

/* Whether element e is in the set of elements {base + k * step : k < len}. */
static int in_run(int e, int base, int step, int len) {
  if (step <= 0)
    return 0;
  return e >= base && (e - base) % step == 0 && (e - base) / step < len;
}

/* Op R wrote operand 0 through view (off, len, s), a view in rows of `row` elements where
 * row > 0 (gen_view_rows): which parameter the wrong elements (words of R's destination) say it
 * lost. Losing one moves where R's elements land: an element can be wrong only where R writes in
 * the one placement or the other. 'o' offset (taken as 0), 's' stride (as 1), 'd' the first
 * dimension's stride (the offset taken as the first row's index), 0 none or more than one. */
static int dst_diag(const Walk *w, const int32_t v[3], int row) {
  int off = v[0], len = v[1], s = v[2] > 0 ? v[2] : 1, wp = words_per(w->c, w->buf);
  /* each lost parameter's placement: its offset and stride, and whether it differs */
  const int alt[3][3] = {
      {0, s, off > 0}, {off, 1, s > 1}, {row > 1 ? off / row : off, s, row > 1 && off > 0}};
  int fits[3], out[3];
  for (int h = 0; h < 3; h++)
    fits[h] = alt[h][2], out[h] = 0;
  for (int i = 0; i < w->nw; i++) {
    int e = w->word[i] / wp, ref = in_run(e, off, s, len);
    for (int h = 0; h < 3; h++) {
      int in = in_run(e, alt[h][0], alt[h][1], len);
      fits[h] = fits[h] && (ref || in);
      out[h] |= !ref && in;
    }
  }
  /* where the moved placement leaves the view, something must show: else nothing says it moved */
  for (int e = 0; e < w->c->bufs[w->buf].n; e++) {
    if (in_run(e, off, s, len))
      continue;
    for (int h = 0; h < 3; h++)
      fits[h] = fits[h] && (out[h] || !in_run(e, alt[h][0], alt[h][1], len));
  }
  int nfit = fits[0] + fits[1] + fits[2];
  return nfit != 1 ? 0 : fits[0] ? 'o' : fits[1] ? 's' : 'd';
}

/* The value of word k of buffer b before op t. */
static int value_before(const Walk *w, int b, int k, int t, int32_t *v) {
  int j = last_write(w, b, k, t);
  if (j < 0)
    return 0;
  *v = w->log[j].val;
  return 1;
}

/* Copy m (log entry j wrote the first wrong word) read its source through a view: which
 * parameter the seen value says it lost (0: none or more than one fit, or no view). */
static int src_diag(const Walk *w, int j) {
  const GenOp *o = &w->c->ops[w->log[j].op];
  if (o->view[1][1] <= 0 || w->log[j].sbuf < 0)
    return 0;
  int sb = w->log[j].sbuf, wp = words_per(w->c, sb), row = gen_view_rows(w->c, o, 1);
  int off = o->view[1][0], s = o->view[1][2] > 0 ? o->view[1][2] : 1;
  int e = w->log[j].sword / wp, x = w->log[j].sword % wp, k = (e - off) / s;
  int32_t a = 0, b = 0, d = 0;
  int fa = off > 0 && value_before(w, sb, k * s * wp + x, w->log[j].op, &a) && a == w->got[0];
  int fb = s > 1 && value_before(w, sb, (off + k) * wp + x, w->log[j].op, &b) && b == w->got[0];
  int fd = row > 1 && off > 0 &&
           value_before(w, sb, (off / row + k * s) * wp + x, w->log[j].op, &d) && d == w->got[0];
  return fa + fb + fd != 1 ? 0 : fa ? 'o' : fb ? 's' : 'd';
}

/* The cause word of a lost view parameter ('o', 's', 'd'). */
static const char *lost_name(int diag) {
  return diag == 'o' ? "view-offset" : diag == 's' ? "view-stride" : "dim-stride";
}

void oracle_op_form(const GenCase *c, int op, char *out, size_t n) {
  const GenOp *o = &c->ops[op];
  int elem = (gen_op_flags(o->kind) & GEN_K_TYPED) && o->buf >= 0 && o->buf < c->nbufs
                 ? c->bufs[o->buf].elem
                 : GEN_ELEM_I32;
  snprintf(out, n, "%s %s", gen_op_mlir(o->kind), gen_elem_name(gen_elem_storage(elem)));
}

/* Op r as the cause: by the view parameter it lost, when its wrong elements say which; else by
 * its kind and element type (a view that explains nothing is left out, as in shapes). */
static void name_op(const Walk *w, int r, int diag, char *out, size_t n) {
  if (diag)
    snprintf(out, n, "%s", lost_name(diag));
  else
    oracle_op_form(w->c, r, out, n);
}

/* An op that wrote buffer b after op `after` and before op t, elsewhere: the one that wrote the
 * seen value, else the last one that wrote through a view; -1 when none. */
static int misplaced_writer(const Walk *w, int after, int t) {
  int by_view = -1;
  for (int j = 0; j < w->nlog; j++) {
    const OracleWrite *x = &w->log[j];
    if (x->buf != w->buf || x->op <= after || x->op >= t)
      continue;
    if (x->val == w->got[0] && !w->unknown)
      return x->op;
    if (gen_op_has_view(&w->c->ops[x->op]))
      by_view = x->op;
  }
  return by_view;
}

/* The wrong words that the write of op m put there, moved to the words m copied them from. */
static void to_source(Walk *w, int m) {
  int n = 0, sb = -1;
  for (int i = 0; i < w->nw; i++) {
    int j = last_write(w, w->buf, w->word[i], w->at);
    if (j < 0 || w->log[j].op != m || w->log[j].sbuf < 0 || (sb >= 0 && w->log[j].sbuf != sb))
      continue;
    sb = w->log[j].sbuf;
    w->word[n] = w->log[j].sword;
    w->got[n++] = w->got[i];
  }
  w->nw = n;
  w->buf = sb;
  w->at = m;
}

/* The wrong words of launch m's destination, moved to the words of its input a that computed
 * them (kernels are elementwise, on buffers of one type), their seen values unknown. */
static void to_input(Walk *w, int m, int a) {
  const GenOp *o = &w->c->ops[m];
  int32_t od, ld, sd, oa, la, sa;
  gen_op_view(w->c, o, 0, &od, &ld, &sd);
  gen_op_view(w->c, o, a, &oa, &la, &sa);
  int n = 0, wpe = gen_elem_size(w->c->bufs[o->args[0]].elem) == 8 ? 2 : 1; /* words an element */
  for (int i = 0; i < w->nw; i++) {
    int e = w->word[i] / wpe, x = w->word[i] % wpe;
    int k = sd > 0 ? (e - od) / sd : -1;
    if (k < 0 || k >= la || (e - od) % sd)
      continue;
    w->word[n] = (oa + k * sa) * wpe + x;
    w->got[n++] = 0;
  }
  w->nw = n;
  w->buf = o->args[a];
  w->at = m;
  w->unknown = 1;
}

static int explain(const Walk *w, int depth, char *out, size_t n);

/* The walk goes on from w, moved by move(child, m, a); 1 when it named an op. */
static int deeper(const Walk *w, int depth, int m, int a, char *out, size_t n) {
  Walk *d = af_malloc(sizeof *d);
  if (d == NULL)
    return 0;
  *d = *w;
  if (a < 0)
    to_source(d, m);
  else
    to_input(d, m, a);
  int r = d->nw > 0 && d->buf >= 0 && explain(d, depth + 1, out, n);
  af_free(d);
  return r;
}

/* Names the op that explains w's wrong words: at the first level, whatever wrote them last; deeper
 * (a copy's source, a kernel's input), only an op that evidently wrote in the wrong place. */
static int explain(const Walk *w, int depth, char *out, size_t n) {
  const GenCase *c = w->c;
  int j = last_write(w, w->buf, w->word[0], w->at);
  if (j < 0 || depth > MAX_HOPS || --*w->budget < 0)
    return 0;
  int m = w->log[j].op; /* (-1: the word still held its initial content) */
  int x = misplaced_writer(w, m, w->at);

  if (x >= 0) {
    name_op(w, x,
            c->ops[x].view[0][1] > 0
                ? dst_diag(w, c->ops[x].view[0], gen_view_rows(c, &c->ops[x], 0))
                : 0,
            out, n);
    return 1;
  }
  if (m < 0)
    return 0; /* an initial content read wrong, and no op wrote there: none to name */
  const GenOp *o = &c->ops[m];
  /* (a copy whose write did not land read nothing from the wrong place, whatever it read) */
  int d = (gen_op_flags(o->kind) & GEN_K_SRC) && !w->unknown && w->got[0] != w->log[j].old
              ? src_diag(w, j)
              : 0;
  if (d) {
    name_op(w, m, d, out, n);
    return 1;
  }
  /* a copy whose write did not land, seen so, is named before its source is looked into: what
   * its source held before (the same value, where it was copied from there) explains less */
  int missed = !w->unknown && w->got[0] == w->log[j].old; /* the write did not land */
  if (!missed && (gen_op_flags(o->kind) & GEN_K_SRC) && deeper(w, depth, m, -1, out, n))
    return 1;
  for (int a = 1; !missed && gen_kind_launches(o->kind) && a < o->nargs; a++)
    if (deeper(w, depth, m, a, out, n))
      return 1;
  if (!missed && depth > 0)
    return 0;
  name_op(w, m,
          o->view[0][1] > 0 ? dst_diag(w, o->view[0], gen_view_rows(w->c, o, 0)) : src_diag(w, j),
          out, n);
  return 1;
}

/* Case c with its ops copied into *alt (to change some), or -1 out of memory. */
static int alt_case(const GenCase *c, GenCase *alt) {
  *alt = *c;
  alt->ops = af_malloc(sizeof(GenOp) * (size_t)(c->nops + 1));
  if (alt->ops == NULL)
    return -1;
  memcpy(alt->ops, c->ops, sizeof(GenOp) * (size_t)c->nops);
  return 0;
}

/* Whether the reference of alt (an alt_case, freed here) gives exactly the seen values of
 * observation x: -1 when nothing was changed (not run), else 1 or 0. */
static int alt_reproduces(GenCase *alt, int changed, const OracleObs *x, const int32_t *got) {
  OracleExpected *e = NULL;
  AfErr err;
  af_err_clear(&err);
  int same = 0;
  if (changed && oracle_expect(alt, &e, &err) == 0)
    for (int k = 0; k < e->nobs; k++)
      if (e->obs[k].id == x->id && e->obs[k].n == x->n)
        same = memcmp(e->obs[k].vals, got, sizeof(int32_t) * (size_t)x->n) == 0;
  oracle_expected_free(e);
  af_free(alt->ops);
  return changed ? same : -1;
}

/* Whether the reference reproduces the seen values when the views of every op of kind `kind`
 * (-1: of every kind) before the observation lose parameter h ('o': the offset taken as 0, 's':
 * the stride as 1, 'd': a view in rows' offset as its first row's index): -1 when no view
 * changes, else 1 or 0. */
static int view_lost(const GenCase *c, const OracleObs *x, const int32_t *got, int kind, int h) {
  GenCase alt;
  if (alt_case(c, &alt))
    return 0;
  int changed = 0;
  for (int i = 0; i < x->id; i++)
    for (int k = 0; k < 3 && (kind < 0 || alt.ops[i].kind == kind); k++) {
      int32_t *v = alt.ops[i].view[k];
      int row = h == 'd' ? gen_view_rows(c, &c->ops[i], k) : 0;
      if (v[1] > 0 && h == 'o' && v[0] != 0)
        v[0] = 0, changed = 1;
      if (v[1] > 0 && h == 's' && v[2] > 1)
        v[2] = 1, changed = 1;
      if (v[1] > 0 && row > 1 && v[0] != 0)
        v[0] /= row, changed = 1;
    }
  return alt_reproduces(&alt, changed, x, got);
}

/* The view parameter whose loss, by every op or by the ops of one kind, reproduces exactly
 * what was seen: 'o', 's', 'd' (views in rows: gen_view_rows), or 0 when none or more than one
 * does. */
static int view_explains(const GenCase *c, const OracleObs *x, const int32_t *got) {
  int kinds[GEN_OP__COUNT + 1], nk = 0;
  kinds[nk++] = -1;
  for (int launches = 0; launches < 2;
       launches++) /* the kinds with views: copies, sets, launches */
    for (int k = 0; k < GEN_OP__COUNT; k++)
      if ((gen_op_flags(k) & GEN_K_VIEWS) && gen_kind_launches(k) == launches)
        kinds[nk++] = k;
  for (int k = 0; k < nk; k++) {
    int o = view_lost(c, x, got, kinds[k], 'o'), s = view_lost(c, x, got, kinds[k], 's');
    int d = view_lost(c, x, got, kinds[k], 'd');
    if (o < 0 && s < 0 && kinds[k] < 0)
      return 0; /* no view at all */
    if ((o == 1) + (s == 1) + (d == 1) == 1)
      return o == 1 ? 'o' : s == 1 ? 's' : 'd';
  }
  return 0;
}

/* Whether the reference reproduces the seen values when every launch before the observation
 * that gives its kernel dynamic shared memory gives it none (its staged kernel's every thread
 * then writes KERNEL_SMEM_SHORT, kernels.h): -1 when there is no such launch, else 1 or 0. */
static int smem_lost(const GenCase *c, const OracleObs *x, const int32_t *got) {
  GenCase alt;
  if (alt_case(c, &alt))
    return 0;
  int changed = 0;
  for (int i = 0; i < x->id; i++)
    if (gen_kind_launches(alt.ops[i].kind) && alt.ops[i].smem > 0)
      alt.ops[i].smem = -1, changed = 1;
  return alt_reproduces(&alt, changed, x, got);
}

int oracle_wrong_bytes(const GenCase *c, const OracleObs *x, const int32_t *got, char *out,
                       size_t n) {
  snprintf(out, n, "%s", "");
  if (x->buf < 0 || x->buf >= c->nbufs || x->id < 0 || x->id >= c->nops)
    return 0;
  int v = view_explains(c, x, got);
  if (v) {
    snprintf(out, n, "%s", lost_name(v));
    return 0;
  }
  if (smem_lost(c, x, got) == 1) {
    snprintf(out, n, "%s", "shared-memory");
    return 0;
  }
  Walk *w = af_calloc(1, sizeof *w);
  if (w == NULL)
    return AF_ENOMEM;
  AfErr err;
  af_err_clear(&err);
  OracleWrite *log = NULL;
  int nlog = 0;
  if (oracle_write_log(c, &log, &nlog, &err)) {
    af_free(w);
    return AF_ENOMEM;
  }
  w->c = c;
  w->log = log;
  w->nlog = nlog;
  int budget = MAX_LEVELS;
  w->buf = x->buf;
  w->at = x->id;
  w->budget = &budget;
  for (int64_t i = 0; i < x->n && w->nw < MAX_WRONG; i++)
    if (got[i] != x->vals[i]) {
      w->word[w->nw] = (int32_t)i;
      w->got[w->nw++] = got[i];
    }
  if (w->nw > 0)
    explain(w, 0, out, n);
  af_free(log);
  af_free(w);
  return 0;
}
