/*
 * hb.c: the happens-before checker (see hb.h). Agents are host threads and streams; each has
 * a dense vector clock. The replay's state is hb_int.h; hb_replay.c replays each call against
 * the clocks and the shadow memory. Here: the driver (the tables sized from the trace, the
 * replay, the reports sorted), what each case op knew, and the text of a report.
 */
#include "hb_int.h"

#include <stdlib.h>

static const char *const kind_names[] = {
#define HB__KNAME(id, name, err) name,
    HB_KIND_MAP(HB__KNAME)
#undef HB__KNAME
};

const char *hb_kind_name(int kind) {
  return kind >= 0 && kind < HB__KIND_COUNT ? kind_names[kind] : "?";
}

int hb_kind_is_error(int kind) {
  return hb__is_error(kind);
}

const char *hb_subkind_name(int sub) {
  static const char *const n[] = {"", "RAW", "WAR", "WAW", "wrong kind"};
  return sub >= 0 && sub <= HB_SUB_WRONG_KIND ? n[sub] : "?";
}

/* Leaks are found at the end of the run: they sort after everything else. */
static int64_t sort_key(const HbReport *r) {
  int leak = r->kind == HB_LEAK_STREAM || r->kind == HB_LEAK_EVENT || r->kind == HB_LEAK_BUFFER;
  return leak ? (int64_t)INT32_MAX + r->seq2 : r->seq2;
}

static int cmp_report(const void *x, const void *y) {
  const HbReport *a = x, *b = y;
  if (sort_key(a) != sort_key(b))
    return sort_key(a) < sort_key(b) ? -1 : 1;
  if (a->seq1 != b->seq1)
    return a->seq1 < b->seq1 ? -1 : 1;
  return a->kind - b->kind;
}

/* ---- what each case op knew (HbOptions.nops) ---- */

static int know_alloc(H *h) {
  HbResult *res = h->res;
  res->nops = h->opt.nops;
  res->nagents = h->A;
  res->ntrace = h->n;
  res->know = af_malloc(sizeof(uint32_t) * (size_t)res->nops * (size_t)h->A + 1);
  res->known = af_calloc((size_t)res->nops, 1);
  res->agent = af_malloc(sizeof(int32_t) * (size_t)h->n + 1);
  res->clock = af_calloc((size_t)h->n + 1, sizeof(uint32_t));
  if (!res->know || !res->known || !res->agent || !res->clock)
    return AF_ENOMEM;
  for (int i = 0; i < h->n; i++)
    res->agent[i] = -1;
  return 0;
}

int hb_op_knows(const HbResult *r, int op, int32_t seq) {
  if (r == NULL || r->know == NULL || op < 0 || op >= r->nops || !r->known[op] || seq < 0 ||
      seq >= r->ntrace || r->agent[seq] < 0)
    return -1;
  return r->know[(size_t)op * (size_t)r->nagents + (size_t)r->agent[seq]] >= r->clock[seq];
}

void hb_result_free(HbResult *r) {
  if (r == NULL)
    return;
  af_free(r->know);
  af_free(r->known);
  af_free(r->agent);
  af_free(r->clock);
  af_free(r->reports);
  af_free(r);
}

void hb_options_for(HbOptions *ho, int abi, int memfree_sync) {
  ho->lenient_free = memfree_sync || abi == RT_ABI_ROCM;
  ho->legacy_sync = abi == RT_ABI_ROCM;
}

/* The sizes of the agent and handle tables: the options' hints, else from the trace. */
static void size_tables(H *h, const RtRec *trace, int n, const HbOptions *opt) {
  int maxtid = 0, maxs = 0, maxe = -1, maxr = -1, maxa = -1;
  int hinted = opt && opt->nthreads > 0 && opt->nstreams > 0;
  if (hinted) {
    maxtid = opt->nthreads - 1;
    maxs = opt->nstreams - 1;
    maxe = opt->nevents - 1;
    maxr = opt->nregions - 1;
    maxa = opt->nasync - 1;
  }
  for (int i = 0; i < n && !hinted; i++) {
    const RtRec *r = &trace[i];
    if (r->tid > maxtid)
      maxtid = r->tid;
    for (int k = 0; k <= r->nargs; k++) {
      RtRef x = k < r->nargs ? r->args[k] : r->ret;
      int id = RT_REF_ID(x);
      if (RT_REF_KIND(x) == RT_REF_STREAM && id > maxs)
        maxs = id;
      if (RT_REF_KIND(x) == RT_REF_EVENT && id > maxe)
        maxe = id;
      if (RT_REF_KIND(x) == RT_REF_REGION && id > maxr)
        maxr = id;
      if (RT_REF_KIND(x) == RT_REF_ASYNC && id > maxa)
        maxa = id;
    }
  }
  /* The runtime numbers threads, streams, events, regions and async objects as it makes them,
   * each with a record: an id past the trace's length (a corrupt trace) counts as unknown, where
   * it sized the tables (an id of 0xFFFFFF: 16M agents and their clocks, squared). */
  maxtid = maxtid < n ? maxtid : n;
  maxs = maxs < n ? maxs : n;
  maxe = maxe < n ? maxe : n;
  maxr = maxr < n ? maxr : n;
  maxa = maxa < n ? maxa : n;
  h->nthreads = maxtid + 1;
  h->nstreams = maxs + 1;
  h->nevents = maxe + 1;
  h->nregions = maxr + 1;
  h->nasync = maxa + 1;
  h->A = h->nthreads + h->nstreams;
}

/* Carves n elements of esz bytes from the block at *off (16-byte aligned, as malloc aligns); with
 * base NULL it only counts. */
static void *carve(char *base, size_t *off, size_t n, size_t esz) {
  void *p = base ? base + *off : NULL;
  *off += (n * esz + 15) & ~(size_t)15;
  return p;
}

/* Lays the tables out in one block (base NULL: counts its bytes): first those that start
 * zeroed, up to *zeroed bytes (the clocks' extents among them), then the clocks (read only
 * within their extents), the destroy sequences and the events' snapshot slots (-1). */
static size_t lay_tables(H *h, char *base, size_t *zeroed) {
  size_t A = (size_t)h->A, ns = (size_t)h->nstreams, ne = (size_t)h->nevents + 1;
  size_t nr = (size_t)h->nregions + 1, na = (size_t)h->nasync + 1, off = 0;
  h->hi = carve(base, &off, A, sizeof(uint32_t));
  h->snap_hi = carve(base, &off, ne, sizeof(uint32_t));
  h->spawn_hi = carve(base, &off, nr, sizeof(uint32_t));
  h->yield_hi = carve(base, &off, nr, sizeof(uint32_t));
  h->async_hi = carve(base, &off, na, sizeof(uint32_t));
  h->ver = carve(base, &off, A, sizeof(uint32_t));
  h->jver = carve(base, &off, ns * (size_t)h->nthreads, sizeof(uint32_t));
  h->s_seq = carve(base, &off, ns, sizeof(int32_t));
  h->e_seq = carve(base, &off, ne, sizeof(int32_t));
  h->s_created = carve(base, &off, ns, 1);
  h->s_destroyed = carve(base, &off, ns, 1);
  h->e_created = carve(base, &off, ne, 1);
  h->e_destroyed = carve(base, &off, ne, 1);
  h->yielded = carve(base, &off, nr, 1);
  h->spawned = carve(base, &off, nr, 1);
  h->released = carve(base, &off, na, 1);
  *zeroed = off;
  h->vc = carve(base, &off, A * A, sizeof(uint32_t));
  h->s_dseq = carve(base, &off, ns, sizeof(int32_t));
  h->e_dseq = carve(base, &off, ne, sizeof(int32_t));
  h->e_slot = carve(base, &off, ne, sizeof(int32_t));
  h->free_slot = carve(base, &off, ne, sizeof(int32_t));
  h->spawn_vc = carve(base, &off, nr * A, sizeof(uint32_t));
  h->yield_vc = carve(base, &off, nr * A, sizeof(uint32_t));
  h->async_vc = carve(base, &off, na * A, sizeof(uint32_t));
  return off;
}

/* The tables of the sizes size_tables found, in one block of the check's memory. 0 or
 * AF_ENOMEM. */
static int alloc_tables(H *h) {
  size_t zeroed, bytes = lay_tables(h, NULL, &zeroed);
  h->res = af_calloc(1, sizeof(HbResult));
  char *block = hb__arena(h, bytes);
  if (!h->res || !block)
    return AF_ENOMEM;
  lay_tables(h, block, &zeroed);
  memset(block, 0, zeroed);
  for (int s = 0; s < h->nstreams; s++)
    h->s_dseq[s] = -1;
  for (int e = 0; e <= h->nevents; e++)
    h->e_dseq[e] = h->e_slot[e] = -1;
  return h->opt.nops > 0 ? know_alloc(h) : 0;
}

static void free_tables(H *h) {
  hb_result_free(h->res);
  hb__arena_free(h);
}

int hb_check(const RtRec *trace, int n, const HbOptions *opt, HbResult **out, AfErr *err) {
  *out = NULL;
  H h;
  memset(&h, 0, sizeof h);
  h.t = trace;
  h.n = n;
  if (opt)
    h.opt = *opt;
  size_tables(&h, trace, n, opt);
  int rc = alloc_tables(&h);
  if (rc == 0) {
    h.res->lenient_free = h.opt.lenient_free;
    h.res->legacy_sync = h.opt.legacy_sync;
    hb__replay(&h);
  }
  if (rc || h.oom) {
    free_tables(&h);
    return af_err_set(err, AF_ENOMEM, "out of memory in the happens-before checker");
  }
  if (h.res->nreports > 1)
    qsort(h.res->reports, (size_t)h.res->nreports, sizeof(HbReport), cmp_report);
  *out = h.res;
  h.res = NULL;
  free_tables(&h);
  return 0;
}

static void fmt_agent(AfBuf *b, int32_t agent) {
  if (agent == HB_NO_AGENT)
    af_buf_puts(b, "-");
  else if (agent >= 0)
    af_buf_printf(b, "T%d", agent);
  else
    af_buf_printf(b, "s%d", -1 - agent);
}

void hb_format_report(AfBuf *b, const HbReport *r, const RtRec *trace, int n) {
  af_buf_printf(b, "%s: %s", hb_kind_is_error(r->kind) ? "error" : "warning",
                hb_kind_name(r->kind));
  if (r->subkind)
    af_buf_printf(b, " (%s)", hb_subkind_name(r->subkind));
  int k = RT_REF_KIND(r->buf);
  if (k == RT_REF_BUF || k == RT_REF_HOST) {
    int id = RT_REF_ID(r->buf);
    if (k == RT_REF_HOST && (id & 0x800000))
      af_buf_printf(b, " on hr%d [%u, %u)", id & 0x7FFFFF, r->lo, r->hi);
    else
      af_buf_printf(b, " on %s%d [%u, %u)", k == RT_REF_BUF ? "b" : "h", id, r->lo, r->hi);
  }
  if (r->seq1 >= 0 && r->seq1 < n) {
    af_buf_puts(b, "\n    first (");
    fmt_agent(b, r->agent1);
    af_buf_puts(b, "):  ");
    asyncfuzz_rt_format_rec(b, &trace[r->seq1]);
    af_buf_printf(b, r->op1 >= 0 ? "   [case op #%d]" : "   [no case op]", r->op1);
  }
  if (r->seq2 >= 0 && r->seq2 < n) {
    af_buf_puts(b, "\n    second (");
    fmt_agent(b, r->agent2);
    af_buf_puts(b, "): ");
    asyncfuzz_rt_format_rec(b, &trace[r->seq2]);
    af_buf_printf(b, r->op2 >= 0 ? "   [case op #%d]" : "   [no case op]", r->op2);
  }
}
