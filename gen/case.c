/*
 * case.c: a Case's JSON form, written canonically by hand so the same case always gives the same
 * bytes (case_read.c reads it). See docs/case-format.md for the format. Each op's own fields are
 * its kind's class's (gen_int.h); the views, dependencies and token every kind may have are
 * written here.
 */
#include "gen_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void put_deps(AfBuf *b, const GenOp *o) {
  af_buf_puts(b, ", \"deps\": [");
  for (int d = 0; d < o->ndeps; d++)
    af_buf_printf(b, "%s\"t%d\"", d ? ", " : "", o->deps[d]);
  af_buf_puts(b, "]");
}

static void put_views(AfBuf *b, const GenOp *o) {
  static const char *const key[2] = {"dst_view", "src_view"};
  if (gen_kind_launches(o->kind)) { /* "arg_views", one per argument, null for a whole buffer */
    if (!gen_op_has_view(o))
      return;
    af_buf_puts(b, ", \"arg_views\": [");
    for (int k = 0; k < o->nargs && k < 3; k++) {
      af_buf_puts(b, k ? ", " : "");
      if (o->view[k][1] > 0)
        af_buf_printf(b, "[%d, %d, %d]", o->view[k][0], o->view[k][1], o->view[k][2]);
      else
        af_buf_puts(b, "null");
    }
    af_buf_puts(b, "]");
    return;
  }
  for (int k = 0; k < 2; k++)
    if (o->view[k][1] > 0) /* version 2 */
      af_buf_printf(b, ", \"%s\": [%d, %d, %d]", key[k], o->view[k][0], o->view[k][1],
                    o->view[k][2]);
}

/* Writes ops [from, to] of context ctx and block blk (and nested regions and blocks) at the
 * given depth. */
static int put_body(GenWriter *w, int from, int to, int ctx, int blk, int depth) {
  AfBuf *b = w->b;
  const GenCase *c = w->c;
  int first = 1;
  for (int i = from; i <= to && i < c->nops; i++) {
    const GenOp *o = &c->ops[i];
    if (o->ctx != ctx || o->blk != blk)
      continue;
    af_buf_puts(b, first ? "\n" : ",\n");
    first = 0;
    gen__indent(b, depth);
    af_buf_printf(b, "{\"op\": \"%s\"", gen_op_name(o->kind));
    gen__classes[o->kind]->put(w, o, depth);
    if (gen_op_flags(o->kind) & GEN_K_VIEWS)
      put_views(b, o);
    if (gen_op_takes_deps(o))
      put_deps(b, o);
    if (o->tok >= 0)
      af_buf_printf(b, ", \"token\": \"t%d\"", o->tok);
    af_buf_puts(b, "}");
    i = gen_op_body_end(c, i);
  }
  return !first;
}

char *gen_case_to_json(const GenCase *c) {
  AfBuf b;
  af_buf_init(&b);
  int version = 1; /* the oldest version that has every construct the case uses */
  for (int r = 1; r < c->nregions; r++)
    if (c->regions[r].ncaptures)
      version = 2;
  for (int i = 0; i < c->nops; i++)
    if (c->ops[i].stream >= 0 || (gen_op_flags(c->ops[i].kind) & GEN_K_V2) ||
        gen_op_has_view(&c->ops[i]) || c->ops[i].dims[0] || c->ops[i].inl || c->ops[i].spacecast ||
        c->ops[i].smem)
      version = 2;
  for (int i = 0; i < c->nbufs; i++)
    if (c->bufs[i].elem != GEN_ELEM_I32 || c->bufs[i].stat || c->bufs[i].reg || c->bufs[i].space ||
        c->bufs[i].rank)
      version = 2;
  af_buf_printf(&b, "{\n  \"format\": \"asyncfuzz-case\",\n  \"version\": %d,\n", version);
  af_buf_printf(&b, "  \"seed\": \"%llu\",\n", (unsigned long long)c->seed);
  if (c->has_config) { /* the knobs a case always holds, the op mix, those written when set */
    const GenConfig *g = &c->cfg;
    af_buf_puts(&b, "  \"config\": {");
    for (int i = 0, n = 0; i < GEN_KNOB_COUNT; i++)
      if (gen_knob(i)->always)
        af_buf_printf(&b, "%s\"%s\": %d", n++ ? ", " : "", gen_knob(i)->field,
                      gen_knob_value(g, gen_knob(i)));
    af_buf_puts(&b, ", \"mix\": [");
    for (int k = 0; k < GEN_MIX_COUNT; k++)
      af_buf_printf(&b, "%s%d", k ? ", " : "", g->w[k]);
    af_buf_puts(&b, "]");
    for (int i = 0; i < GEN_KNOB_COUNT; i++)
      if (!gen_knob(i)->always && gen_knob_value(g, gen_knob(i)) != 0)
        af_buf_printf(&b, ", \"%s\": %d", gen_knob(i)->field, gen_knob_value(g, gen_knob(i)));
    for (int i = 0, n = gen_avoid_count(&g->avoid); i < n; i++) { /* only when set */
      char t[96];
      gen_avoid_text(&g->avoid, i, t, sizeof t);
      af_buf_printf(&b, "%s\"%s\"%s", i ? ", " : ", \"avoid\": [", t, i == n - 1 ? "]" : "");
    }
    af_buf_puts(&b, "},\n");
  }
  af_buf_printf(&b, "  \"spin\": %d,\n  \"buffers\": [", c->spin);
  for (int i = 0; i < c->nbufs; i++) {
    const GenBuf *g = &c->bufs[i];
    af_buf_printf(&b, "%s\n    {\"name\": \"b%d\", \"kind\": \"%s\", \"n\": %d", i ? "," : "", i,
                  g->kind == GEN_BUF_HOST ? "host" : "device", g->n);
    if (g->elem != GEN_ELEM_I32) /* version 2 */
      af_buf_printf(&b, ", \"type\": \"%s\"", gen_elem_name(g->elem));
    if (g->stat) /* version 2 */
      af_buf_puts(&b, ", \"static\": true");
    if (g->space) /* version 2 */
      af_buf_printf(&b, ", \"space\": %d", g->space);
    if (g->rank) { /* version 2 */
      af_buf_puts(&b, ", \"shape\": [");
      for (int d = 0; d < g->rank && d < 3; d++)
        af_buf_printf(&b, "%s%d", d ? ", " : "", g->shape[d]);
      af_buf_puts(&b, "]");
      for (int d = 0, n = 0; d < g->rank && d < 3; d++)
        if (g->dyn >> d & 1)
          af_buf_printf(&b, "%s%d", n++ ? ", " : ", \"dynamic\": [", d);
      if (g->dyn)
        af_buf_puts(&b, "]");
    }
    if (g->kind == GEN_BUF_HOST)
      af_buf_printf(&b, ", \"init\": %d", g->init);
    if (g->reg) /* version 2 */
      af_buf_puts(&b, ", \"registered\": true");
    af_buf_puts(&b, "}");
  }
  af_buf_puts(&b, "\n  ],\n  \"body\": [");
  GenWriter w = {&b, c, put_body};
  if (put_body(&w, 0, c->nops - 1, 0, 0, 2))
    af_buf_puts(&b, "\n  ");
  af_buf_puts(&b, "]\n}\n");
  return af_buf_take(&b);
}

uint64_t gen_case_hash(const GenCase *c) {
  /* The hash is over the content only: seed and config do not change what the case means. */
  GenCase tmp = *c;
  tmp.seed = 0;
  tmp.has_config = 0;
  char *j = gen_case_to_json(&tmp);
  if (j == NULL)
    return 0;
  uint64_t h = af_hash64(j, strlen(j));
  af_free(j);
  return h;
}

int gen_case_save(const GenCase *c, const char *path, AfErr *err) {
  char *j = gen_case_to_json(c);
  if (j == NULL)
    return af_err_set(err, AF_ENOMEM, "out of memory rendering case JSON");
  size_t plen = strlen(path);
  char *tmp = af_malloc(plen + 16);
  int rc = 0;
  if (tmp == NULL) {
    rc = af_err_set(err, AF_ENOMEM, "out of memory");
    goto out;
  }
  snprintf(tmp, plen + 16, "%s.tmp%d", path, (int)getpid());
  FILE *f = fopen(tmp, "wb");
  if (f == NULL) {
    rc = af_err_set(err, AF_EIO, "cannot write %s: %s", tmp, strerror(errno));
    goto out;
  }
  size_t n = strlen(j);
  int werr = fwrite(j, 1, n, f) != n;
  werr |= fflush(f) != 0;
  int saved = errno;
  werr |= fclose(f) != 0;
  if (werr) {
    remove(tmp);
    rc = af_err_set(err, AF_EIO, "cannot write %s: %s", path, strerror(saved ? saved : EIO));
    goto out;
  }
  if (rename(tmp, path) != 0) {
    saved = errno;
    remove(tmp);
    rc = af_err_set(err, AF_EIO, "cannot rename %s to %s: %s", tmp, path, strerror(saved));
  }
out:
  af_free(tmp);
  af_free(j);
  return rc;
}
