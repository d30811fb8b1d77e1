/*
 * case_read.c: a Case from its JSON form (read with cJSON), with an error naming the op and the
 * reason for every malformed input. See docs/case-format.md for the format. Each op's own fields
 * are its kind's class's (gen_int.h); the views, dependencies and token every kind may have are
 * read here.
 */
#include "gen_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_body(Parser *p, const cJSON *body, int ctx);

/* One view, [offset, length, stride], into op->view[k]; what names it in errors. */
static int parse_view(Parser *p, const cJSON *v, const char *what, int32_t *out) {
  if (p->c->version < 2)
    return gen__perr(p, AF_EINVALID, "\"%s\" needs case format version 2%s", what, NULL);
  int ok = cJSON_IsArray(v) && cJSON_GetArraySize(v) == 3;
  for (int q = 0; q < 3 && ok; q++) {
    const cJSON *x = cJSON_GetArrayItem(v, q);
    double d = cJSON_IsNumber(x) ? x->valuedouble : -1;
    ok = d >= (q ? 1 : 0) && d <= 1024 && d == (double)(int)d;
    out[q] = ok ? (int32_t)d : 0;
  }
  if (!ok)
    return gen__perr(p, AF_EPARSE,
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
  if (av != NULL && !gen_kind_launches(op->kind))
    return gen__perr(p, AF_EINVALID, "only a launch has \"arg_views\"%s%s", NULL, NULL);
  if (av != NULL) {
    if (!cJSON_IsArray(av) || cJSON_GetArraySize(av) != op->nargs)
      return gen__perr(p, AF_EPARSE,
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
    if (gen_kind_launches(op->kind) || (k == 1 && !(gen_op_flags(op->kind) & GEN_K_SRC)))
      return gen__perr(p, AF_EINVALID, "\"%s\" belongs to a memcpy%s", key[k],
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
    return gen__perr(p, AF_EPARSE, "\"deps\" must be an array of token names%s%s", NULL, NULL);
  int n = cJSON_GetArraySize(deps);
  if (n > GEN_MAX_DEPS)
    return gen__perr(p, AF_EINVALID, "too many dependencies (at most 4)%s%s", NULL, NULL);
  const cJSON *d;
  cJSON_ArrayForEach(d, deps) {
    if (!cJSON_IsString(d))
      return gen__perr(p, AF_EPARSE, "\"deps\" must be an array of token names%s%s", NULL, NULL);
    int rc = gen__use_token(p, d->valuestring, &op->deps[op->ndeps]);
    if (rc)
      return rc;
    op->ndeps++;
  }
  return 0;
}

static int parse_op(Parser *p, const cJSON *o, int ctx) {
  if (!cJSON_IsObject(o))
    return gen__perr(p, AF_EPARSE, "an op must be a JSON object%s%s", NULL, NULL);
  const char *kind = gen__jstr(o, "op");
  if (kind == NULL)
    return gen__perr(p, AF_EPARSE, "missing \"op\"%s%s", NULL, NULL);
  GenOp op = gen_op_blank(0, ctx); /* (its kind, once read) */
  op.blk = p->blk;
  int k = gen_op_lookup(kind);
  if (k < 0)
    return gen__perr(p, AF_EPARSE, "unknown op \"%s\"%s", kind, NULL);
  op.kind = (uint8_t)k;
  unsigned f = gen_op_flags(k);
  int rc = gen__classes[k]->parse(p, o, &op, ctx);
  if (rc || (f & (GEN_K_REGION | GEN_K_BLOCK))) /* (those added their op) */
    return rc;
  if (f & GEN_K_VIEWS)
    rc = parse_views(p, o, &op);
  if (!rc && gen_op_takes_deps(&op))
    rc = parse_deps(p, o, &op);
  if (rc)
    return rc;
  if (gen_op_has_token(p->c, &op)) {
    rc = gen__def_token(p, gen__jstr(o, "token"), p->c->nops, &op.tok);
    if (rc)
      return rc;
  } else if (gen__jstr(o, "token")) {
    return gen__perr(p, AF_EINVALID, "a synchronous %s defines no token%s", kind, NULL);
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

/* The header: format, version, seed, the knobs that made the case, spin. */
static int parse_header(GenCase *c, const cJSON *root, AfErr *err) {
  const char *fmt = gen__jstr(root, "format");
  if (!cJSON_IsObject(root) || fmt == NULL || strcmp(fmt, "asyncfuzz-case") != 0)
    return af_err_set(err, AF_EPARSE,
                      "not an asyncfuzz case (\"format\" must be \"asyncfuzz-case\")");
  if (gen__jint(root, "version", &c->version) || c->version < 1 || c->version > GEN_FORMAT_VERSION)
    return af_err_set(err, AF_EPARSE, "unsupported case format version (this build reads 1 to %d)",
                      GEN_FORMAT_VERSION);
  const cJSON *seed = cJSON_GetObjectItemCaseSensitive(root, "seed");
  c->seed = 0; /* (absent: 0) */
  if (seed && (!cJSON_IsString(seed) || af_parse_decimal_u64(seed->valuestring, &c->seed)))
    return af_err_set(err, AF_EPARSE,
                      "\"seed\" must be a string holding a whole decimal number from 0 to "
                      "18446744073709551615 (got %s%.40s%s)",
                      cJSON_IsString(seed) ? "\"" : "",
                      cJSON_IsString(seed) ? seed->valuestring : "no string",
                      cJSON_IsString(seed) ? "\"" : "");
  const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(root, "config");
  if (cJSON_IsObject(cfg)) {
    GenConfig *g = &c->cfg;
    gen_config_default(g);
    c->has_config = 1;
    for (int i = 0; i < GEN_KNOB_COUNT; i++) {
      const GenKnob *k = gen_knob(i);
      if (!k->always)
        *gen_knob_field(g, k) = 0; /* absent: a case made before the knob existed */
      gen__jint(cfg, k->field, gen_knob_field(g, k));
    }
    const cJSON *avoid = cJSON_GetObjectItemCaseSensitive(cfg, "avoid"), *a;
    if (avoid && !cJSON_IsArray(avoid))
      return af_err_set(err, AF_EPARSE, "\"config\".\"avoid\" must be an array of names");
    cJSON_ArrayForEach(a, avoid) {
      if (!cJSON_IsString(a) || gen_avoid_add(&g->avoid, a->valuestring) < 0)
        return af_err_set(err, AF_EPARSE,
                          "\"config\".\"avoid\": %s%s%s is not an op shape or a construct "
                          "(see asyncfuzz gen --help)",
                          cJSON_IsString(a) ? "\"" : "", cJSON_IsString(a) ? a->valuestring : "?",
                          cJSON_IsString(a) ? "\"" : "");
    }
    const cJSON *mix = cJSON_GetObjectItemCaseSensitive(cfg, "mix");
    if (cJSON_IsArray(mix) && cJSON_GetArraySize(mix) == GEN_MIX_COUNT)
      for (int k = 0; k < GEN_MIX_COUNT; k++) { /* the weights of the first kinds */
        const cJSON *x = cJSON_GetArrayItem(mix, k);
        if (cJSON_IsNumber(x))
          g->w[k] = x->valueint;
      }
  }
  if (gen__jint(root, "spin", &c->spin) || c->spin < 0)
    return af_err_set(err, AF_EPARSE, "\"spin\" must be a non-negative integer");
  return 0;
}

/* A device buffer's "shape" (2 or 3 extents, their product its n) and "dynamic" (the indices
 * of its dynamic dimensions). */
static int parse_shape(Parser *p, const cJSON *b, const char *name, GenBuf *gb) {
  const cJSON *sh = cJSON_GetObjectItemCaseSensitive(b, "shape");
  const cJSON *dy = cJSON_GetObjectItemCaseSensitive(b, "dynamic");
  if (sh == NULL && dy == NULL)
    return 0;
  int n = cJSON_IsArray(sh) ? cJSON_GetArraySize(sh) : 0;
  long prod = 1;
  const cJSON *x;
  cJSON_ArrayForEach(x, sh) {
    if (!cJSON_IsNumber(x) || x->valuedouble < 1 || x->valuedouble > 1024 ||
        x->valuedouble != (int)x->valuedouble) {
      n = 0;
      break;
    }
    if (gb->rank < 3)
      gb->shape[gb->rank++] = (int32_t)x->valuedouble;
    prod *= (long)x->valuedouble;
  }
  if (p->c->version < 2 || gb->kind != GEN_BUF_DEVICE || n < 2 || n > 3 || prod != gb->n)
    return af_err_set(p->err, AF_EPARSE,
                      "buffer %s: \"shape\" (2 or 3 extents whose product is its n) is for "
                      "device buffers, in case format version 2",
                      name);
  if (dy && !cJSON_IsArray(dy))
    n = -1;
  cJSON_ArrayForEach(x, dy) {
    if (!cJSON_IsNumber(x) || x->valuedouble < 0 || x->valuedouble >= gb->rank ||
        x->valuedouble != (int)x->valuedouble) {
      n = -1;
      break;
    }
    gb->dyn |= (uint8_t)(1u << (int)x->valuedouble);
  }
  if (n < 0)
    return af_err_set(p->err, AF_EPARSE,
                      "buffer %s: \"dynamic\" lists dimensions of its shape (0 to %d)", name,
                      gb->rank - 1);
  return 0;
}

/* One entry of "buffers": name, kind, n, init, type, static, registered, space, shape. */
static int parse_buf(Parser *p, const cJSON *b) {
  GenCase *c = p->c;
  AfErr *err = p->err;
  const char *name = gen__jstr(b, "name");
  const char *kind = gen__jstr(b, "kind");
  GenBuf gb;
  memset(&gb, 0, sizeof gb);
  if (name == NULL || kind == NULL || gen__jint(b, "n", &gb.n) || gb.n <= 0 || gb.n > 1024)
    return af_err_set(err, AF_EPARSE,
                      "buffer #%d needs \"name\", \"kind\" and \"n\" (1..1024 elements)", c->nbufs);
  if (strcmp(kind, "host") == 0)
    gb.kind = GEN_BUF_HOST;
  else if (strcmp(kind, "device") == 0)
    gb.kind = GEN_BUF_DEVICE;
  else
    return af_err_set(err, AF_EPARSE, "buffer %s: kind must be \"host\" or \"device\"", name);
  gen__jint(b, "init", &gb.init);
  const char *type = gen__jstr(b, "type");
  int e = type ? gen_elem_lookup(type) : GEN_ELEM_I32;
  if (e < 0 || (type && c->version < 2))
    return af_err_set(err, AF_EPARSE,
                      e < 0 ? "buffer %s: type must be i32, i16, i64 or f32"
                            : "buffer %s: \"type\" needs case format version 2",
                      name);
  gb.elem = (uint8_t)e;
  const cJSON *st = cJSON_GetObjectItemCaseSensitive(b, "static");
  if (st && (!cJSON_IsBool(st) || c->version < 2 || gb.kind != GEN_BUF_DEVICE))
    return af_err_set(err, AF_EPARSE,
                      "buffer %s: \"static\" (true or false) is for device buffers, in case "
                      "format version 2",
                      name);
  gb.stat = cJSON_IsTrue(st);
  const cJSON *rg = cJSON_GetObjectItemCaseSensitive(b, "registered");
  if (rg && (!cJSON_IsBool(rg) || c->version < 2 || gb.kind != GEN_BUF_HOST))
    return af_err_set(err, AF_EPARSE,
                      "buffer %s: \"registered\" (true or false) is for host buffers, in case "
                      "format version 2",
                      name);
  gb.reg = cJSON_IsTrue(rg);
  const cJSON *sp = cJSON_GetObjectItemCaseSensitive(b, "space");
  if (sp && (!cJSON_IsNumber(sp) || c->version < 2 || gb.kind != GEN_BUF_DEVICE ||
             (sp->valuedouble != 0 && sp->valuedouble != 1)))
    return af_err_set(err, AF_EPARSE,
                      "buffer %s: \"space\" (0 or 1, its memory space) is for device buffers, in "
                      "case format version 2",
                      name);
  gb.space = sp && sp->valuedouble == 1;
  int rc = parse_shape(p, b, name, &gb);
  if (rc)
    return rc;
  if (gen__nm_find(&p->bufs, name) >= 0)
    return af_err_set(err, AF_EINVALID, "buffer %s is declared twice", name);
  if (gen__nm_put(&p->bufs, name, c->nbufs) || gen_case_add_buf(c, &gb) < 0)
    return af_err_set(err, AF_ENOMEM, "out of memory");
  return 0;
}

/* The case of a parsed document: header, buffers, body. */
static int parse_case(Parser *p, const cJSON *root) {
  int rc = parse_header(p->c, root, p->err);
  if (rc)
    return rc;
  const cJSON *bufs = cJSON_GetObjectItemCaseSensitive(root, "buffers");
  if (!cJSON_IsArray(bufs))
    return af_err_set(p->err, AF_EPARSE, "\"buffers\" must be an array");
  const cJSON *b;
  cJSON_ArrayForEach(b, bufs) {
    if ((rc = parse_buf(p, b)) != 0)
      return rc;
  }
  const cJSON *body = cJSON_GetObjectItemCaseSensitive(root, "body");
  if (!cJSON_IsArray(body))
    return af_err_set(p->err, AF_EPARSE, "\"body\" must be an array of ops");
  rc = parse_body(p, body, 0);
  return rc ? rc : gen_case_finish(p->c, p->err);
}

int gen_case_from_json(GenCase *c, const char *text, AfErr *err) {
  gen_case_init(c);
  if (c->nregions != 1 || c->nblocks != 1)
    return af_err_set(err, AF_ENOMEM, "out of memory");
  Parser p;
  memset(&p, 0, sizeof p);
  p.c = c;
  p.err = err;
  p.body = parse_body;
  int rc;
  int deep = af_json_depth(text, GEN_JSON_MAX_DEPTH);
  cJSON *root = deep > GEN_JSON_MAX_DEPTH ? NULL : cJSON_Parse(text);
  if (deep > GEN_JSON_MAX_DEPTH) {
    rc = af_err_set(err, AF_EPARSE,
                    "JSON nested deeper than %d levels (a case nests a level or "
                    "two per region or block)",
                    GEN_JSON_MAX_DEPTH);
  } else if (root == NULL) {
    const char *at = cJSON_GetErrorPtr();
    long off = at && at >= text ? (long)(at - text) : -1;
    int line = 1;
    for (long i = 0; i < off; i++)
      line += text[i] == '\n';
    rc = af_err_set(err, AF_EPARSE, "malformed JSON near line %d (byte %ld)", line, off);
  } else {
    rc = parse_case(&p, root);
  }
  cJSON_Delete(root);
  gen__nm_free(&p.toks);
  gen__nm_free(&p.bufs);
  gen__nm_free(&p.regions);
  gen__nm_free(&p.streams);
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
