/*
 * case_read.c: a Case from its JSON form (read with cJSON), with an error naming the op and the
 * reason for every malformed input. See docs/case-format.md for the format.
 */
#include "gen.h"

#include "../runner/kernels.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- JSON reading ---- */

/* A name table: names of tokens, buffers and regions to ids (linear probing). */
typedef struct NameMap {
  char **keys;
  int *vals;
  int cap, n;
} NameMap;

static void nm_free(NameMap *m) {
  for (int i = 0; i < m->cap; i++)
    af_free(m->keys[i]);
  af_free(m->keys);
  af_free(m->vals);
  memset(m, 0, sizeof *m);
}

static int nm_find(const NameMap *m, const char *k) {
  if (m->cap == 0)
    return -1;
  uint64_t h = af_hash64(k, strlen(k));
  for (int i = 0; i < m->cap; i++) {
    int j = (int)((h + (uint64_t)i) & (uint64_t)(m->cap - 1));
    if (m->keys[j] == NULL)
      return -1;
    if (strcmp(m->keys[j], k) == 0)
      return m->vals[j];
  }
  return -1;
}

static int nm_put(NameMap *m, const char *k, int v) {
  if ((m->n + 1) * 2 > m->cap) {
    NameMap nm = {0};
    nm.cap = m->cap ? m->cap * 2 : 64;
    nm.keys = af_calloc((size_t)nm.cap, sizeof(char *));
    nm.vals = af_calloc((size_t)nm.cap, sizeof(int));
    if (nm.keys == NULL || nm.vals == NULL) {
      af_free(nm.keys);
      af_free(nm.vals);
      return AF_ENOMEM;
    }
    for (int i = 0; i < m->cap; i++) {
      if (m->keys[i] == NULL)
        continue;
      uint64_t h = af_hash64(m->keys[i], strlen(m->keys[i]));
      for (int p = 0;; p++) {
        int j = (int)((h + (uint64_t)p) & (uint64_t)(nm.cap - 1));
        if (nm.keys[j] == NULL) {
          nm.keys[j] = m->keys[i];
          nm.vals[j] = m->vals[i];
          nm.n++;
          break;
        }
      }
    }
    af_free(m->keys);
    af_free(m->vals);
    *m = nm;
  }
  uint64_t h = af_hash64(k, strlen(k));
  for (int p = 0;; p++) {
    int j = (int)((h + (uint64_t)p) & (uint64_t)(m->cap - 1));
    if (m->keys[j] == NULL) {
      m->keys[j] = af_strdup(k);
      if (m->keys[j] == NULL)
        return AF_ENOMEM;
      m->vals[j] = v;
      m->n++;
      return 0;
    }
  }
}

typedef struct Parser {
  GenCase *c;
  AfErr *err;
  NameMap toks, bufs, regions, streams;
  int *tok_def; /* op index (or -2 for a region input) defining each token */
  int captokdef;
  int blk; /* the block whose body is being parsed (0: none) */
} Parser;

static int perr(Parser *p, int rc, const char *fmt, const char *a, const char *b) {
  char msg[400];
  snprintf(msg, sizeof msg, fmt, a ? a : "", b ? b : "");
  return af_err_set(p->err, rc, "op #%d: %s", p->c->nops, msg);
}

static const char *jstr(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int jint(const cJSON *o, const char *key, int *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!cJSON_IsNumber(v))
    return -1;
  double d = v->valuedouble;
  if (d < -2147483648.0 || d > 2147483647.0 || d != (double)(int)d)
    return -1;
  *out = (int)d;
  return 0;
}

static int def_token(Parser *p, const char *name, int def, int *out) {
  if (name == NULL)
    return perr(p, AF_EPARSE, "missing \"token\"%s%s", NULL, NULL);
  int prev = nm_find(&p->toks, name);
  if (prev >= 0)
    return perr(p, AF_EINVALID, "token %s is defined twice (tokens must not be reused)%s", name,
                NULL);
  int id = p->toks.n;
  if (nm_put(&p->toks, name, id) ||
      af_grow((void **)&p->tok_def, &p->captokdef, id + 1, sizeof(int)))
    return af_err_set(p->err, AF_ENOMEM, "out of memory");
  p->tok_def[id] = def;
  *out = id;
  return 0;
}

static int use_token(Parser *p, const char *name, int *out) {
  int id = nm_find(&p->toks, name);
  if (id < 0)
    return perr(p, AF_EINVALID, "token %s is used before it is defined%s", name, NULL);
  *out = id;
  return 0;
}

static int use_buf(Parser *p, const cJSON *o, const char *key, int *out) {
  const char *name = jstr(o, key);
  if (name == NULL)
    return perr(p, AF_EPARSE, "missing \"%s\" (a buffer name)%s", key, NULL);
  int id = nm_find(&p->bufs, name);
  if (id < 0)
    return perr(p, AF_EINVALID, "unknown buffer %s%s", name, NULL);
  *out = id;
  return 0;
}

/* The op's "stream": a new name when `define` (a stream_create), else one created before. */
static int use_stream(Parser *p, const cJSON *o, int define, int32_t *out) {
  const char *name = jstr(o, "stream");
  if (name == NULL)
    return perr(p, AF_EPARSE, "missing \"stream\" (a stream name)%s%s", NULL, NULL);
  if (p->c->version < 2)
    return perr(p, AF_EINVALID, "explicit streams (\"stream\") need case format version 2%s%s",
                NULL, NULL);
  int id = nm_find(&p->streams, name);
  if (define) {
    if (id >= 0)
      return perr(p, AF_EINVALID, "stream %s is created twice%s", name, NULL);
    id = p->streams.n;
    if (nm_put(&p->streams, name, id))
      return af_err_set(p->err, AF_ENOMEM, "out of memory");
  } else if (id < 0) {
    return perr(p, AF_EINVALID, "stream %s is used before its stream_create%s", name, NULL);
  }
  *out = id;
  return 0;
}

/* One view, [offset, length, stride], into op->view[k]; what names it in errors. */
static int parse_view(Parser *p, const cJSON *v, const char *what, int32_t *out) {
  if (p->c->version < 2)
    return perr(p, AF_EINVALID, "\"%s\" needs case format version 2%s", what, NULL);
  int ok = cJSON_IsArray(v) && cJSON_GetArraySize(v) == 3;
  for (int q = 0; q < 3 && ok; q++) {
    const cJSON *x = cJSON_GetArrayItem(v, q);
    double d = cJSON_IsNumber(x) ? x->valuedouble : -1;
    ok = d >= (q ? 1 : 0) && d <= 1024 && d == (double)(int)d;
    out[q] = ok ? (int32_t)d : 0;
  }
  if (!ok)
    return perr(p, AF_EPARSE,
                "\"%s\" is [offset, length, stride]: an offset of 0 or more, a length and "
                "a stride of 1 or more%s",
                what, NULL);
  return 0;
}

/* "dst_view" / "src_view" of a memcpy or memset; "arg_views" of a launch, one per argument,
 * null for a whole buffer (version 2). */
static int parse_views(Parser *p, const cJSON *o, GenOp *op) {
  static const char *const key[2] = {"dst_view", "src_view"};
  const cJSON *av = cJSON_GetObjectItemCaseSensitive(o, "arg_views");
  if (av != NULL && op->kind != GEN_OP_LAUNCH)
    return perr(p, AF_EINVALID, "only a launch has \"arg_views\"%s%s", NULL, NULL);
  if (av != NULL) {
    if (!cJSON_IsArray(av) || cJSON_GetArraySize(av) != op->nargs)
      return perr(p, AF_EPARSE,
                  "\"arg_views\" is an array with one entry per argument (a view or null)%s%s",
                  NULL, NULL);
    for (int k = 0; k < op->nargs; k++) {
      const cJSON *v = cJSON_GetArrayItem(av, k);
      int rc = cJSON_IsNull(v) ? 0 : parse_view(p, v, "arg_views", op->view[k]);
      if (rc)
        return rc;
    }
  }
  for (int k = 0; k < 2; k++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key[k]);
    if (v == NULL)
      continue;
    if (op->kind == GEN_OP_LAUNCH || (k == 1 && op->kind != GEN_OP_MEMCPY))
      return perr(p, AF_EINVALID, "\"%s\" belongs to a memcpy%s", key[k],
                  k ? "" : " or memset (a launch has \"arg_views\")");
    int rc = parse_view(p, v, key[k], op->view[k]);
    if (rc)
      return rc;
  }
  return 0;
}

static int parse_deps(Parser *p, const cJSON *o, GenOp *op) {
  const cJSON *deps = cJSON_GetObjectItemCaseSensitive(o, "deps");
  op->ndeps = 0;
  if (deps == NULL)
    return 0;
  if (!cJSON_IsArray(deps))
    return perr(p, AF_EPARSE, "\"deps\" must be an array of token names%s%s", NULL, NULL);
  int n = cJSON_GetArraySize(deps);
  if (n > GEN_MAX_DEPS)
    return perr(p, AF_EINVALID, "too many dependencies (at most 4)%s%s", NULL, NULL);
  const cJSON *d;
  cJSON_ArrayForEach(d, deps) {
    if (!cJSON_IsString(d))
      return perr(p, AF_EPARSE, "\"deps\" must be an array of token names%s%s", NULL, NULL);
    int rc = use_token(p, d->valuestring, &op->deps[op->ndeps]);
    if (rc)
      return rc;
    op->ndeps++;
  }
  return 0;
}

static int parse_value_ref(Parser *p, const char *s, int *region, int *vidx) {
  const char *dot = s ? strrchr(s, '.') : NULL;
  if (dot == NULL)
    return perr(p, AF_EPARSE, "bad region value \"%s\" (expected rN.K)%s", s ? s : "", NULL);
  char name[128];
  size_t len = (size_t)(dot - s);
  if (len >= sizeof name)
    return perr(p, AF_EPARSE, "region name too long%s%s", NULL, NULL);
  memcpy(name, s, len);
  name[len] = '\0';
  char *end;
  long k = strtol(dot + 1, &end, 10);
  if (*end != '\0' || k < 0 || k >= GEN_MAX_REGION_IO)
    return perr(p, AF_EPARSE, "bad value index in \"%s\"%s", s, NULL);
  int r = nm_find(&p->regions, name);
  if (r < 0)
    return perr(p, AF_EINVALID, "region %s is used before its execute op%s", name, NULL);
  *region = r;
  *vidx = (int)k;
  return 0;
}

static int parse_body(Parser *p, const cJSON *body, int ctx);

/* [{"token": OUTER, "as": NAME}...]: tokens of the context bound to new names. */
static int parse_bindings(Parser *p, const cJSON *arr, const char *what, int def,
                          GenRegionCapture *out, int32_t *n) {
  const cJSON *x;
  cJSON_ArrayForEach(x, arr) {
    GenRegionCapture *gc = &out[*n];
    const char *outer = jstr(x, "token");
    if (outer == NULL)
      return perr(p, AF_EPARSE, "%s needs \"token\" (a token of the context)%s", what, NULL);
    int rc = use_token(p, outer, &gc->outer);
    if (rc == 0)
      rc = def_token(p, jstr(x, "as"), def, &gc->tok);
    if (rc)
      return rc;
    (*n)++;
  }
  return 0;
}

/* A call, if, for or branch op: its block's inputs, body (parsed here) and yield; the op's token,
 * bound after the body. Adds the op itself. */
static int parse_block(Parser *p, const cJSON *o, int ctx, GenOp *opp) {
  const char *kind = gen_op_name(opp->kind);
  if (p->c->version < 2)
    return perr(p, AF_EINVALID, "\"%s\" needs case format version 2%s", kind, NULL);
  if (p->blk)
    return perr(p, AF_EINVALID, "a %s inside a block body (blocks do not nest)%s", kind, NULL);
  GenBlock k;
  memset(&k, 0, sizeof k);
  k.op = p->c->nops;
  k.yield = -1;
  k.trips = 1;
  const cJSON *taken = cJSON_GetObjectItemCaseSensitive(o, "taken");
  if (opp->kind == GEN_OP_IF || opp->kind == GEN_OP_BRANCH) {
    if (!cJSON_IsBool(taken))
      return perr(p, AF_EPARSE, "%s needs \"taken\": true or false (the condition at run time)%s",
                  kind, NULL);
    k.taken = cJSON_IsTrue(taken);
  }
  if (opp->kind == GEN_OP_FOR && (jint(o, "trips", &k.trips) || k.trips < 1 || k.trips > 64))
    return perr(p, AF_EINVALID, "for needs \"trips\", 1 to 64 iterations%s%s", NULL, NULL);
  const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(o, "inputs");
  if (inputs && !cJSON_IsArray(inputs))
    return perr(p, AF_EPARSE, "\"inputs\" must be an array%s%s", NULL, NULL);
  if (cJSON_GetArraySize(inputs) > GEN_MAX_REGION_IO)
    return perr(p, AF_EINVALID, "too many block inputs (at most 4)%s%s", NULL, NULL);
  int rc = parse_bindings(p, inputs, "a block input", k.op, k.inputs, &k.ninputs);
  if (rc)
    return rc;
  const cJSON *bargs = cJSON_GetObjectItemCaseSensitive(o, "buffer_args");
  if (bargs && (!cJSON_IsArray(bargs) || cJSON_GetArraySize(bargs) > GEN_MAX_REGION_IO ||
                opp->kind != GEN_OP_BRANCH))
    return perr(p, AF_EINVALID, "\"buffer_args\" is a branch's array of at most 4 buffer names%s%s",
                NULL, NULL);
  const cJSON *ba;
  cJSON_ArrayForEach(ba, bargs) {
    int id = cJSON_IsString(ba) ? nm_find(&p->bufs, ba->valuestring) : -1;
    if (id < 0)
      return perr(p, AF_EINVALID, "a buffer argument is not a known buffer%s%s", NULL, NULL);
    k.bufargs[k.nbufargs++] = id;
  }
  opp->block = p->c->nblocks;
  int idx = p->c->nops;
  if (gen_case_add_block(p->c, &k) < 0 || gen_case_add_op(p->c, opp) < 0)
    return af_err_set(p->err, AF_ENOMEM, "out of memory");
  const cJSON *body = cJSON_GetObjectItemCaseSensitive(o, "body");
  if (body && !cJSON_IsArray(body))
    return perr(p, AF_EPARSE, "\"body\" must be an array of ops%s%s", NULL, NULL);
  p->blk = opp->block;
  rc = body ? parse_body(p, body, ctx) : 0;
  p->blk = 0;
  if (rc)
    return rc;
  const cJSON *yields = cJSON_GetObjectItemCaseSensitive(o, "yields");
  if (yields && (!cJSON_IsArray(yields) || cJSON_GetArraySize(yields) > 1))
    return perr(p, AF_EPARSE, "a block's \"yields\" is an array of at most one token%s%s", NULL,
                NULL);
  const cJSON *y = yields ? cJSON_GetArrayItem(yields, 0) : NULL;
  GenBlock *kb = &p->c->blocks[p->c->ops[idx].block];
  if (y && (!cJSON_IsString(y) || (rc = use_token(p, y->valuestring, &kb->yield))))
    return rc ? rc : perr(p, AF_EPARSE, "\"yields\" must name a token%s%s", NULL, NULL);
  const char *tn = jstr(o, "token");
  if ((y != NULL) != (tn != NULL))
    return perr(p, AF_EINVALID, "a %s has a \"token\" exactly when its body yields one%s", kind,
                NULL);
  if (tn)
    return def_token(p, tn, idx, &p->c->ops[idx].tok);
  return 0;
}

/* A launch's kernel, its buffer arguments and its value (the dependencies are parsed after). */
static int parse_kernel(Parser *p, const cJSON *o, GenOp *opp) {
  const char *kn = jstr(o, "kernel");
  int k = kn ? kernel_lookup(kn) : -1;
  if (k < 0)
    return perr(p, AF_EINVALID, "unknown kernel \"%s\"%s", kn ? kn : "(missing)", NULL);
  if (k >= KERNEL__COUNT)
    return perr(p, AF_EINVALID,
                "kernel \"%s\" is the view form the renderer picks; name %s and give "
                "\"arg_views\"",
                kn, kernel_info(KERNEL_BASE(k))->name);
  opp->kernel = (uint8_t)k;
  const cJSON *args = cJSON_GetObjectItemCaseSensitive(o, "args");
  if (!cJSON_IsArray(args))
    return perr(p, AF_EPARSE, "launch needs \"args\", an array of buffer names%s%s", NULL, NULL);
  int n = cJSON_GetArraySize(args);
  if (n != kernel_info(k)->nbufs)
    return perr(p, AF_EINVALID, "kernel %s takes a different number of buffers%s", kn, NULL);
  const cJSON *a;
  cJSON_ArrayForEach(a, args) {
    int id = cJSON_IsString(a) ? nm_find(&p->bufs, a->valuestring) : -1;
    if (id < 0)
      return perr(p, AF_EINVALID, "launch argument is not a known buffer%s%s", NULL, NULL);
    opp->args[opp->nargs++] = id;
  }
  opp->buf = opp->args[0];
  if (jint(o, "value", &opp->value))
    opp->value = 0;
  return 0;
}

/* An execute op: its region, inputs, body (recursively) and yields. Adds the op itself. */
static int parse_region(Parser *p, const cJSON *o, int ctx, GenOp *opp) {
  int rc;
  const char *rn = jstr(o, "region");
  GenRegion g;
  memset(&g, 0, sizeof g);
  g.parent = ctx;
  g.exec_op = p->c->nops;
  int ridx = p->c->nregions;
  if (rn && nm_find(&p->regions, rn) >= 0)
    return perr(p, AF_EINVALID, "region %s is defined twice%s", rn, NULL);
  const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(o, "inputs");
  if (inputs && !cJSON_IsArray(inputs))
    return perr(p, AF_EPARSE, "\"inputs\" must be an array%s%s", NULL, NULL);
  if (cJSON_GetArraySize(inputs) > GEN_MAX_REGION_IO)
    return perr(p, AF_EINVALID, "too many region inputs (at most 4)%s%s", NULL, NULL);
  const cJSON *in;
  cJSON_ArrayForEach(in, inputs) {
    GenRegionInput *gi = &g.inputs[g.ninputs];
    rc = parse_value_ref(p, jstr(in, "value"), &gi->region, &gi->vidx);
    if (rc)
      return rc;
    rc = def_token(p, jstr(in, "as"), -2 - ridx, &gi->tok);
    if (rc)
      return rc;
    g.ninputs++;
  }
  const cJSON *caps = cJSON_GetObjectItemCaseSensitive(o, "captures");
  if (caps && !cJSON_IsArray(caps))
    return perr(p, AF_EPARSE, "\"captures\" must be an array%s%s", NULL, NULL);
  if (caps && p->c->version < 2)
    return perr(p, AF_EINVALID, "\"captures\" needs case format version 2%s%s", NULL, NULL);
  if (cJSON_GetArraySize(caps) > GEN_MAX_REGION_IO)
    return perr(p, AF_EINVALID, "too many captured tokens (at most 4)%s%s", NULL, NULL);
  if ((rc = parse_bindings(p, caps, "a capture", -2 - ridx, g.captures, &g.ncaptures)))
    return rc;
  opp->region = ridx;
  if (gen_case_add_region(p->c, &g) < 0 || gen_case_add_op(p->c, opp) < 0)
    return af_err_set(p->err, AF_ENOMEM, "out of memory");
  char autoname[32];
  snprintf(autoname, sizeof autoname, "r%d", ridx);
  if (nm_put(&p->regions, rn ? rn : autoname, ridx))
    return af_err_set(p->err, AF_ENOMEM, "out of memory");
  const cJSON *body = cJSON_GetObjectItemCaseSensitive(o, "body");
  if (body && !cJSON_IsArray(body))
    return perr(p, AF_EPARSE, "\"body\" must be an array of ops%s%s", NULL, NULL);
  if (body && (rc = parse_body(p, body, ridx)))
    return rc;
  const cJSON *yields = cJSON_GetObjectItemCaseSensitive(o, "yields");
  if (yields && !cJSON_IsArray(yields))
    return perr(p, AF_EPARSE, "\"yields\" must be an array of token names%s%s", NULL, NULL);
  if (cJSON_GetArraySize(yields) > GEN_MAX_REGION_IO)
    return perr(p, AF_EINVALID, "too many yielded values (at most 4)%s%s", NULL, NULL);
  GenRegion *gr = &p->c->regions[ridx];
  const cJSON *y;
  cJSON_ArrayForEach(y, yields) {
    if (!cJSON_IsString(y))
      return perr(p, AF_EPARSE, "\"yields\" must be an array of token names%s%s", NULL, NULL);
    rc = use_token(p, y->valuestring, &gr->yields[gr->nyields]);
    if (rc)
      return rc;
    gr->nyields++;
  }
  return 0;
}

/* ---- each kind's fields: parse_<lc> (GEN_OP_MAP). The views of a GEN_K_VIEWS kind and the
 * dependencies of an op that takes them are parsed after (parse_op), and the op's token. A kind
 * with a body (an execute, a block op) adds its op itself. */

static int parse_wait_async(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  (void)p, (void)o, (void)op, (void)ctx;
  return 0;
}

static int parse_host_wait(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  return parse_wait_async(p, o, op, ctx);
}

static int parse_alloc(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  (void)ctx;
  const char *mode = jstr(o, "mode");
  if (mode == NULL || strcmp(mode, "async") == 0)
    op->mode = GEN_ALLOC_ASYNC;
  else if (strcmp(mode, "sync") == 0)
    op->mode = GEN_ALLOC_SYNC;
  else if (strcmp(mode, "host_shared") == 0)
    op->mode = GEN_ALLOC_HOST_SHARED;
  else
    return perr(p, AF_EPARSE, "unknown alloc mode \"%s\"%s", mode, NULL);
  op->async = op->mode == GEN_ALLOC_ASYNC;
  return use_buf(p, o, "buf", &op->buf);
}

static int parse_dealloc(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  (void)ctx;
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "async");
  op->async = a == NULL || cJSON_IsTrue(a);
  return use_buf(p, o, "buf", &op->buf);
}

static int parse_memcpy(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  (void)ctx;
  int rc = use_buf(p, o, "dst", &op->buf);
  return rc ? rc : use_buf(p, o, "src", &op->src);
}

static int parse_memset(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  (void)ctx;
  int rc = use_buf(p, o, "dst", &op->buf);
  if (!rc && jint(o, "value", &op->value))
    rc = perr(p, AF_EPARSE, "memset needs an integer \"value\"%s%s", NULL, NULL);
  return rc;
}

static int parse_launch(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  (void)ctx;
  int rc = parse_kernel(p, o, op);
  if (!rc && jstr(o, "stream"))
    rc = use_stream(p, o, 0, &op->stream);
  return rc;
}

static int parse_stream_create(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  (void)ctx;
  return use_stream(p, o, op->kind == GEN_OP_STREAM_CREATE, &op->stream);
}

static int parse_stream_sync(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  return parse_stream_create(p, o, op, ctx);
}

static int parse_stream_destroy(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  return parse_stream_create(p, o, op, ctx);
}

static int parse_observe(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  (void)ctx;
  return use_buf(p, o, "buf", &op->buf);
}

static int parse_await(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  (void)ctx;
  const char *v = jstr(o, "value");
  if (v)
    return parse_value_ref(p, v, &op->region, &op->vidx);
  const char *rn = jstr(o, "region");
  op->region = rn ? nm_find(&p->regions, rn) : -1;
  if (op->region < 0)
    return perr(p, AF_EINVALID, "await names no known region (\"value\" or \"region\")%s%s", NULL,
                NULL);
  return 0;
}

static int parse_execute(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  if (p->blk)
    return perr(p, AF_EINVALID, "an execute inside a block body%s%s", NULL, NULL);
  return parse_region(p, o, ctx, op);
}

static int parse_call(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  return parse_block(p, o, ctx, op);
}

static int parse_if(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  return parse_block(p, o, ctx, op);
}

static int parse_for(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  return parse_block(p, o, ctx, op);
}

static int parse_branch(Parser *p, const cJSON *o, GenOp *op, int ctx) {
  return parse_block(p, o, ctx, op);
}

static int (*const parsers[GEN_OP__COUNT])(Parser *p, const cJSON *o, GenOp *op, int ctx) = {
#define GEN__PARSER(id, lc, name, mlir, weight, flags) [GEN_OP_##id] = parse_##lc,
    GEN_OP_MAP(GEN__PARSER)
#undef GEN__PARSER
};

static int parse_op(Parser *p, const cJSON *o, int ctx) {
  if (!cJSON_IsObject(o))
    return perr(p, AF_EPARSE, "an op must be a JSON object%s%s", NULL, NULL);
  const char *kind = jstr(o, "op");
  if (kind == NULL)
    return perr(p, AF_EPARSE, "missing \"op\"%s%s", NULL, NULL);
  GenOp op;
  memset(&op, 0, sizeof op);
  op.ctx = ctx;
  op.tok = -1;
  op.buf = op.src = op.region = op.vidx = op.stream = -1;
  op.blk = p->blk;
  int k = gen_op_lookup(kind);
  if (k < 0)
    return perr(p, AF_EPARSE, "unknown op \"%s\"%s", kind, NULL);
  op.kind = (uint8_t)k;
  unsigned f = gen_op_flags(k);
  int rc = parsers[k](p, o, &op, ctx);
  if (rc || (f & (GEN_K_REGION | GEN_K_BLOCK))) /* (those added their op) */
    return rc;
  if (f & GEN_K_VIEWS)
    rc = parse_views(p, o, &op);
  if (!rc && gen_op_takes_deps(&op))
    rc = parse_deps(p, o, &op);
  if (rc)
    return rc;
  if (gen_op_has_token(p->c, &op)) {
    rc = def_token(p, jstr(o, "token"), p->c->nops, &op.tok);
    if (rc)
      return rc;
  } else if (jstr(o, "token")) {
    return perr(p, AF_EINVALID, "a synchronous %s defines no token%s", kind, NULL);
  }
  if (gen_case_add_op(p->c, &op) < 0)
    return af_err_set(p->err, AF_ENOMEM, "out of memory");
  return 0;
}

static int parse_body(Parser *p, const cJSON *body, int ctx) {
  const cJSON *o;
  cJSON_ArrayForEach(o, body) {
    int rc = parse_op(p, o, ctx);
    if (rc)
      return rc;
  }
  return 0;
}

int gen_case_from_json(GenCase *c, const char *text, AfErr *err) {
  gen_case_init(c);
  if (c->nregions != 1 || c->nblocks != 1)
    return af_err_set(err, AF_ENOMEM, "out of memory");
  Parser p;
  memset(&p, 0, sizeof p);
  p.c = c;
  p.err = err;
  int rc = 0;
  cJSON *root = cJSON_Parse(text);
  if (root == NULL) {
    const char *at = cJSON_GetErrorPtr();
    long off = at && at >= text ? (long)(at - text) : -1;
    int line = 1;
    for (long i = 0; i < off; i++)
      line += text[i] == '\n';
    rc = af_err_set(err, AF_EPARSE, "malformed JSON near line %d (byte %ld)", line, off);
    goto out;
  }
  const char *fmt = jstr(root, "format");
  if (!cJSON_IsObject(root) || fmt == NULL || strcmp(fmt, "asyncfuzz-case") != 0) {
    rc =
        af_err_set(err, AF_EPARSE, "not an asyncfuzz case (\"format\" must be \"asyncfuzz-case\")");
    goto out;
  }
  if (jint(root, "version", &c->version) || c->version < 1 || c->version > GEN_FORMAT_VERSION) {
    rc = af_err_set(err, AF_EPARSE, "unsupported case format version (this build reads 1 to %d)",
                    GEN_FORMAT_VERSION);
    goto out;
  }
  const char *seed = jstr(root, "seed");
  c->seed = seed ? strtoull(seed, NULL, 10) : 0;
  const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(root, "config");
  if (cJSON_IsObject(cfg)) {
    GenConfig *g = &c->cfg;
    gen_config_default(g);
    c->has_config = 1;
    for (int i = 0; i < GEN_KNOB_COUNT; i++) {
      const GenKnob *k = gen_knob(i);
      if (!k->always)
        *gen_knob_field(g, k) = 0; /* absent: a case made before the knob existed */
      jint(cfg, k->field, gen_knob_field(g, k));
    }
    const cJSON *mix = cJSON_GetObjectItemCaseSensitive(cfg, "mix");
    if (cJSON_IsArray(mix) && cJSON_GetArraySize(mix) == GEN_MIX_COUNT)
      for (int k = 0; k < GEN_MIX_COUNT; k++) { /* the weights of the first kinds */
        const cJSON *x = cJSON_GetArrayItem(mix, k);
        if (cJSON_IsNumber(x))
          g->w[k] = x->valueint;
      }
  }
  if (jint(root, "spin", &c->spin) || c->spin < 0) {
    rc = af_err_set(err, AF_EPARSE, "\"spin\" must be a non-negative integer");
    goto out;
  }
  const cJSON *bufs = cJSON_GetObjectItemCaseSensitive(root, "buffers");
  if (!cJSON_IsArray(bufs)) {
    rc = af_err_set(err, AF_EPARSE, "\"buffers\" must be an array");
    goto out;
  }
  const cJSON *b;
  cJSON_ArrayForEach(b, bufs) {
    const char *name = jstr(b, "name");
    const char *kind = jstr(b, "kind");
    GenBuf gb;
    memset(&gb, 0, sizeof gb);
    if (name == NULL || kind == NULL || jint(b, "n", &gb.n) || gb.n <= 0 || gb.n > 1024) {
      rc = af_err_set(err, AF_EPARSE,
                      "buffer #%d needs \"name\", \"kind\" and \"n\" (1..1024 elements)", c->nbufs);
      goto out;
    }
    if (strcmp(kind, "host") == 0)
      gb.kind = GEN_BUF_HOST;
    else if (strcmp(kind, "device") == 0)
      gb.kind = GEN_BUF_DEVICE;
    else {
      rc = af_err_set(err, AF_EPARSE, "buffer %s: kind must be \"host\" or \"device\"", name);
      goto out;
    }
    jint(b, "init", &gb.init);
    const char *type = jstr(b, "type");
    int e = type ? gen_elem_lookup(type) : GEN_ELEM_I32;
    if (e < 0 || (type && c->version < 2)) {
      rc = af_err_set(err, AF_EPARSE,
                      e < 0 ? "buffer %s: type must be i32, i16, i64 or f32"
                            : "buffer %s: \"type\" needs case format version 2",
                      name);
      goto out;
    }
    gb.elem = (uint8_t)e;
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(b, "static");
    if (st && (!cJSON_IsBool(st) || c->version < 2 || gb.kind != GEN_BUF_DEVICE)) {
      rc = af_err_set(err, AF_EPARSE,
                      "buffer %s: \"static\" (true or false) is for device buffers, in case "
                      "format version 2",
                      name);
      goto out;
    }
    gb.stat = cJSON_IsTrue(st);
    if (nm_find(&p.bufs, name) >= 0) {
      rc = af_err_set(err, AF_EINVALID, "buffer %s is declared twice", name);
      goto out;
    }
    if (nm_put(&p.bufs, name, c->nbufs) || gen_case_add_buf(c, &gb) < 0) {
      rc = af_err_set(err, AF_ENOMEM, "out of memory");
      goto out;
    }
  }
  const cJSON *body = cJSON_GetObjectItemCaseSensitive(root, "body");
  if (!cJSON_IsArray(body)) {
    rc = af_err_set(err, AF_EPARSE, "\"body\" must be an array of ops");
    goto out;
  }
  rc = parse_body(&p, body, 0);
  if (rc == 0)
    rc = gen_case_finish(c, err);
out:
  cJSON_Delete(root);
  nm_free(&p.toks);
  nm_free(&p.bufs);
  nm_free(&p.regions);
  nm_free(&p.streams);
  af_free(p.tok_def);
  if (rc) {
    gen_case_free(c);
    gen_case_init(c);
  }
  return rc;
}

int gen_case_load(GenCase *c, const char *path, AfErr *err) {
  gen_case_init(c);
  char *text;
  int rc = af_read_file(path, &text, NULL, err);
  if (rc)
    return rc;
  gen_case_free(c);
  rc = gen_case_from_json(c, text, err);
  af_free(text);
  return rc;
}
