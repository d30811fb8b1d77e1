/*
 * json.c: the case format's shared vocabulary (gen_int.h): the reader's name tables, errors and
 * field readers, the tokens, buffers and streams an op names, the token bindings of regions and
 * blocks; the writer's indentation and bindings. The reader (case_read.c), the writer (case.c)
 * and each kind's class use them.
 */
#include "gen_int.h"

#include <stdio.h>
#include <string.h>

void gen__nm_free(NameMap *m) {
  for (int i = 0; i < m->cap; i++)
    af_free(m->keys[i]);
  af_free(m->keys);
  af_free(m->vals);
  memset(m, 0, sizeof *m);
}

int gen__nm_find(const NameMap *m, const char *k) {
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

int gen__nm_put(NameMap *m, const char *k, int v) {
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

int gen__perr(Parser *p, int rc, const char *fmt, const char *a, const char *b) {
  char msg[400];
  snprintf(msg, sizeof msg, fmt, a ? a : "", b ? b : "");
  return af_err_set(p->err, rc, "op #%d: %s", p->c->nops, msg);
}

const char *gen__jstr(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

int gen__jint(const cJSON *o, const char *key, int *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!cJSON_IsNumber(v))
    return -1;
  double d = v->valuedouble;
  if (d < -2147483648.0 || d > 2147483647.0 || d != (double)(int)d)
    return -1;
  *out = (int)d;
  return 0;
}

int gen__def_token(Parser *p, const char *name, int def, int *out) {
  if (name == NULL)
    return gen__perr(p, AF_EPARSE, "missing \"token\"%s%s", NULL, NULL);
  int prev = gen__nm_find(&p->toks, name);
  if (prev >= 0)
    return gen__perr(p, AF_EINVALID, "token %s is defined twice (tokens must not be reused)%s",
                     name, NULL);
  int id = p->toks.n;
  if (gen__nm_put(&p->toks, name, id) ||
      af_grow((void **)&p->tok_def, &p->captokdef, id + 1, sizeof(int)))
    return af_err_set(p->err, AF_ENOMEM, "out of memory");
  p->tok_def[id] = def;
  *out = id;
  return 0;
}

int gen__use_token(Parser *p, const char *name, int *out) {
  int id = gen__nm_find(&p->toks, name);
  if (id < 0)
    return gen__perr(p, AF_EINVALID, "token %s is used before it is defined%s", name, NULL);
  *out = id;
  return 0;
}

int gen__use_buf(Parser *p, const cJSON *o, const char *key, int *out) {
  const char *name = gen__jstr(o, key);
  if (name == NULL)
    return gen__perr(p, AF_EPARSE, "missing \"%s\" (a buffer name)%s", key, NULL);
  int id = gen__nm_find(&p->bufs, name);
  if (id < 0)
    return gen__perr(p, AF_EINVALID, "unknown buffer %s%s", name, NULL);
  *out = id;
  return 0;
}

/* The op's "stream": a new name when `define` (a stream_create), else one created before. */
int gen__use_stream(Parser *p, const cJSON *o, int define, int32_t *out) {
  const char *name = gen__jstr(o, "stream");
  if (name == NULL)
    return gen__perr(p, AF_EPARSE, "missing \"stream\" (a stream name)%s%s", NULL, NULL);
  if (p->c->version < 2)
    return gen__perr(p, AF_EINVALID, "explicit streams (\"stream\") need case format version 2%s%s",
                     NULL, NULL);
  int id = gen__nm_find(&p->streams, name);
  if (define) {
    if (id >= 0)
      return gen__perr(p, AF_EINVALID, "stream %s is created twice%s", name, NULL);
    id = p->streams.n;
    if (gen__nm_put(&p->streams, name, id))
      return af_err_set(p->err, AF_ENOMEM, "out of memory");
  } else if (id < 0) {
    return gen__perr(p, AF_EINVALID, "stream %s is used before its stream_create%s", name, NULL);
  }
  *out = id;
  return 0;
}

/* [{"token": OUTER, "as": NAME}...]: tokens of the context bound to new names. */
int gen__parse_bindings(Parser *p, const cJSON *arr, const char *what, int def,
                        GenRegionCapture *out, int32_t *n) {
  const cJSON *x;
  cJSON_ArrayForEach(x, arr) {
    GenRegionCapture *gc = &out[*n];
    const char *outer = gen__jstr(x, "token");
    if (outer == NULL)
      return gen__perr(p, AF_EPARSE, "%s needs \"token\" (a token of the context)%s", what, NULL);
    int rc = gen__use_token(p, outer, &gc->outer);
    if (rc == 0)
      rc = gen__def_token(p, gen__jstr(x, "as"), def, &gc->tok);
    if (rc)
      return rc;
    (*n)++;
  }
  return 0;
}

void gen__indent(AfBuf *b, int depth) {
  for (int i = 0; i < depth; i++)
    af_buf_puts(b, "  ");
}

void gen__put_inputs(AfBuf *b, const GenRegionCapture *in, int n) {
  for (int k = 0; k < n; k++)
    af_buf_printf(b, "%s{\"token\": \"t%d\", \"as\": \"t%d\"}", k ? ", " : "", in[k].outer,
                  in[k].tok);
}
