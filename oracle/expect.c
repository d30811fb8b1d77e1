/*
 * expect.c: the sequential reference (oracle.h). A valid case runs in inline order, every device
 * op completing at once and every region running where it is spawned: one linearization of the
 * case's happens-before order, so what it observes is what every correct execution observes.
 * Each kind's meaning is its expect_<lc> (named by GEN_OP_MAP's rows); a kind that changes no
 * memory and observes nothing has none.
 */
#include "oracle.h"

#include "../kernels/kernels.h"

#include <string.h>

void oracle_expected_free(OracleExpected *e) {
  if (e == NULL)
    return;
  af_free(e->obs);
  af_free(e->data);
  af_free(e);
}

/* The 32-bit words one element of type e takes in an observation: two for an 8-byte one. */
static int words_per(int e) {
  return gen_elem_size(e) == 8 ? 2 : 1;
}

/* The 32-bit words buffer b holds (an observation's length): two per 8-byte element. */
static int words_of(const GenBuf *b) {
  return b->n * words_per(b->elem);
}

/* The sequential machine: each buffer's words, the op that last wrote it, the observations;
 * with `log`, every word each op wrote (oracle_write_log). */
typedef struct Seq {
  const GenCase *c;
  int32_t **mem;
  int *writer;
  OracleExpected *e;
  int64_t off; /* observed words so far */
  OracleWrite *log;
  int nlog, caplog, oom;
} Seq;

static void logw(Seq *q, int op, int b, int k, int32_t old, int sb, int sk) {
  if (q->oom || af_grow((void **)&q->log, &q->caplog, q->nlog + 1, sizeof(OracleWrite))) {
    q->oom = 1;
    return;
  }
  q->log[q->nlog++] = (OracleWrite){op, b, k, old, q->mem[b][k], sb, sk};
}

/* Op i writes v into word k of buffer b (copied from word sk of buffer sb, or sb -1). */
static void put(Seq *q, int i, int b, int k, int32_t v, int sb, int sk) {
  int32_t old = q->mem[b][k];
  q->mem[b][k] = v;
  if (q->caplog >= 0)
    logw(q, i, b, k, old, sb, sk);
}

static void expect_alloc(Seq *q, int i) {
  const GenOp *o = &q->c->ops[i];
  int n = words_of(&q->c->bufs[o->buf]);
  for (int k = 0; k < n; k++)
    put(q, i, o->buf, k, KERNEL_UNINIT, -1, -1);
}

static void expect_dealloc(Seq *q, int i) {
  const GenOp *o = &q->c->ops[i];
  int n = words_of(&q->c->bufs[o->buf]);
  for (int k = 0; k < n; k++)
    put(q, i, o->buf, k, KERNEL_POISON, -1, -1);
}

/* element by element, view to view (distinct buffers) */
static void expect_memcpy(Seq *q, int i) {
  const GenCase *c = q->c;
  const GenOp *o = &c->ops[i];
  int32_t od, ld, sd, os, ls, ss;
  gen_op_view(c, o, 0, &od, &ld, &sd);
  gen_op_view(c, o, 1, &os, &ls, &ss);
  int w = words_per(c->bufs[o->buf].elem);
  for (int k = 0; k < ld && k < ls; k++)
    for (int x = 0; x < w; x++)
      put(q, i, o->buf, (od + k * sd) * w + x, q->mem[o->src][(os + k * ss) * w + x], o->src,
          (os + k * ss) * w + x);
  q->writer[o->buf] = i;
}

static void expect_memset(Seq *q, int i) {
  const GenCase *c = q->c;
  const GenOp *o = &c->ops[i];
  int32_t od, ld, sd;
  gen_op_view(c, o, 0, &od, &ld, &sd);
  int w = words_per(c->bufs[o->buf].elem);
  for (int k = 0; k < ld; k++) {
    int32_t v[2];
    gen_elem_words(c->bufs[o->buf].elem, o->value, v);
    for (int x = 0; x < w; x++)
      put(q, i, o->buf, (od + k * sd) * w + x, v[x], -1, -1);
  }
  q->writer[o->buf] = i;
}

/* over its operands' views (distinct buffers of one type), element by element: a source
 * element's lane is its first word (kernel_lane: an element's words hold its bits sign-extended,
 * an 8-byte one's low half first), the result's words those of the element it stores */
static void expect_launch(Seq *q, int i) {
  const GenCase *c = q->c;
  const GenOp *o = &c->ops[i];
  int e = c->bufs[o->args[0]].elem, w = words_per(e);
  int32_t off[KERNEL_MAX_BUFS] = {0}, len[KERNEL_MAX_BUFS] = {0}, st[KERNEL_MAX_BUFS] = {0};
  for (int a = 0; a < o->nargs; a++)
    gen_op_view(c, o, a, &off[a], &len[a], &st[a]);
  for (int k = 0; k < len[0]; k++) {
    int32_t lane[KERNEL_MAX_BUFS] = {0}, v[2];
    unsigned char el[8] = {0};
    for (int a = 1; a < o->nargs; a++) { /* (its first word: 1 and 2 bytes sign-extended) */
      int32_t first = q->mem[o->args[a]][(off[a] + k * st[a]) * w];
      lane[a] = e == GEN_ELEM_I1 ? first & 1 : first;
    }
    /* (smem -1: a staged kernel given no dynamic shared memory, as blame.c supposes) */
    int32_t r =
        o->smem < 0 ? KERNEL_SMEM_SHORT : kernel_result(o->kernel, k, lane[1], lane[2], o->value);
    kernel_lane_store(e, r, el);
    kernel_elem_words(el, gen_elem_size(e), v);
    for (int x = 0; x < w; x++)
      put(q, i, o->args[0], (off[0] + k * st[0]) * w + x, v[x], -1, -1);
  }
  q->writer[o->args[0]] = i;
}

static void expect_observe(Seq *q, int i) {
  const GenOp *o = &q->c->ops[i];
  int n = words_of(&q->c->bufs[o->buf]);
  OracleObs *ob = &q->e->obs[q->e->nobs++];
  ob->id = i;
  ob->buf = o->buf;
  ob->writer = q->writer[o->buf];
  ob->n = n;
  memcpy(q->e->data + q->off, q->mem[o->buf], sizeof(int32_t) * (size_t)n);
  ob->vals = (const int32_t *)(intptr_t)q->off; /* (an offset until the data is complete) */
  q->off += n;
}

/* The kinds that change no memory and observe nothing (a block's body is its own ops, a region's
 * too: both run in place). */
#define expect_wait_async NULL
#define expect_host_wait NULL
#define expect_execute NULL
#define expect_await NULL
#define expect_stream_create NULL
#define expect_stream_sync NULL
#define expect_stream_destroy NULL
#define expect_call NULL
#define expect_if NULL
#define expect_for NULL
#define expect_branch NULL

static void (*const meaning[GEN_OP__COUNT])(Seq *q, int i) = {
#define ORACLE__EXPECT(id, lc, name, mlir, weight, flags) [GEN_OP_##id] = expect_##lc,
    GEN_OP_MAP(ORACLE__EXPECT)
#undef ORACLE__EXPECT
};

/* The buffers' contents before the first op: host buffers initialized, device ones not. Each
 * buffer's words follow the one before's in the block after the writers (seq_run). */
static void init_mem(Seq *q) {
  const GenCase *c = q->c;
  for (int b = 0; b < c->nbufs; b++) {
    const GenBuf *gb = &c->bufs[b];
    q->mem[b] =
        b ? q->mem[b - 1] + words_of(&c->bufs[b - 1]) : (int32_t *)(q->writer + c->nbufs + 1);
    q->writer[b] = -1;
    for (int k = 0, w = 0; k < gb->n; k++) {
      if (gb->kind == GEN_BUF_HOST)
        w += gen_elem_words(gb->elem, kernel_host_init_value(gb->init, k), &q->mem[b][w]);
      else
        for (int x = words_per(gb->elem); x > 0; x--)
          q->mem[b][w++] = KERNEL_UNINIT;
    }
  }
}

/* Runs the sequential machine over c: its observations into *out, and with log, every word
 * each op wrote (the buffers' initial words first, as op -1). */
static int seq_run(const GenCase *c, OracleExpected **out, OracleWrite **log, int *nlog,
                   AfErr *err) {
  *out = NULL;
  /* the buffers' pointers, then their writers and their words, in one block */
  size_t words = 0;
  for (int b = 0; b < c->nbufs; b++)
    words += (size_t)words_of(&c->bufs[b]);
  AfLayout lay = {0};
  af_lay(&lay, (size_t)c->nbufs + 1, sizeof(int32_t *));
  size_t o_writer = af_lay(&lay, (size_t)c->nbufs + 1 + words, sizeof(int32_t));
  char *blk = af_malloc(lay.size);
  Seq q = {.c = c,
           .mem = (int32_t **)blk,
           .writer = blk ? (int *)(blk + o_writer) : NULL,
           .e = af_calloc(1, sizeof(OracleExpected)),
           .caplog = log ? 0 : -1};
  int64_t total = 0;
  int nobs = 0, rc = 0;
  for (int i = 0; i < c->nops; i++)
    if (c->ops[i].kind == GEN_OP_OBSERVE) {
      nobs++;
      total += words_of(&c->bufs[c->ops[i].buf]);
    }
  if (q.e) {
    q.e->obs = af_calloc((size_t)nobs + 1, sizeof(OracleObs));
    q.e->data = af_malloc(sizeof(int32_t) * (size_t)(total + 1));
  }
  if (!blk || !q.e || !q.e->obs || !q.e->data) {
    rc = af_err_set(err, AF_ENOMEM, "out of memory computing expected observations");
  } else {
    init_mem(&q);
    for (int b = 0; log && b < c->nbufs; b++)
      for (int k = 0; k < words_of(&c->bufs[b]); k++)
        logw(&q, -1, b, k, q.mem[b][k], -1, -1);
    for (int i = 0; i < c->nops; i++)
      if (meaning[c->ops[i].kind])
        meaning[c->ops[i].kind](&q, i);
    for (int k = 0; k < q.e->nobs; k++)
      q.e->obs[k].vals = q.e->data + (intptr_t)q.e->obs[k].vals;
    *out = q.e;
    q.e = NULL;
    if (q.oom) {
      rc = af_err_set(err, AF_ENOMEM, "out of memory logging the reference's writes");
    } else if (log) {
      *log = q.log;
      *nlog = q.nlog;
      q.log = NULL;
    }
  }
  af_free(blk);
  af_free(q.log);
  oracle_expected_free(q.e);
  return rc;
}

int oracle_expect(const GenCase *c, OracleExpected **out, AfErr *err) {
  return seq_run(c, out, NULL, NULL, err);
}

int oracle_write_log(const GenCase *c, OracleWrite **log, int *nlog, AfErr *err) {
  OracleExpected *e = NULL;
  *log = NULL;
  *nlog = 0;
  int rc = seq_run(c, &e, log, nlog, err);
  oracle_expected_free(e);
  return rc;
}
