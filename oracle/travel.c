/*
 * travel.c: how a misused handle reached the op that misused it (oracle.c, the `via:` word of a
 * misused-handle signature; docs/signatures.md): by the path that carried that handle from the
 * op that made it, not by any dependency of the op that misused it.
 */
#include "oracle.h"

/* How a token crosses into a block's body, and out of it, by the block op's kind. */
static const char *const block_in[GEN_OP__COUNT] = {[GEN_OP_CALL] = "call-arg",
                                                    [GEN_OP_IF] = "if-arg",
                                                    [GEN_OP_FOR] = "loop-carried",
                                                    [GEN_OP_BRANCH] = "branch-arg"};
static const char *const block_out[GEN_OP__COUNT] = {[GEN_OP_CALL] = "call-result",
                                                     [GEN_OP_IF] = "if-result",
                                                     [GEN_OP_FOR] = "loop-result",
                                                     [GEN_OP_BRANCH] = "merge-arg"};

/* The case op of the call that created handle h (a stream or an event) before record `before`,
 * or -1. */
static int handle_maker(RtRef h, const RtRec *trace, int ntrace, int before) {
  int k = RT_REF_KIND(h);
  if (k != RT_REF_STREAM && k != RT_REF_EVENT)
    return -1;
  for (int i = (before < ntrace ? before : ntrace) - 1; i >= 0; i--)
    if ((trace[i].call == RT_CALL_STREAM_CREATE || trace[i].call == RT_CALL_EVENT_CREATE) &&
        RT_REF_KIND(trace[i].ret) == k && RT_REF_ID(trace[i].ret) == RT_REF_ID(h))
      return trace[i].op;
  return -1;
}

/* A token on the way back from a use to a handle's maker (handle_travel): the crossing nearest
 * the use so far, and whether a yield was on the way. */
typedef struct Hop {
  int32_t tok;
  const char *near;
  int yielded;
} Hop;

/* Whether a handle made by op `maker` reached a use through token t: the chain of tokens from t
 * back to the maker's (dependencies, block bodies' yields, region inputs and captures, awaited
 * values), searched first dependency first. *via: "yield" where a yield is on the way, else the
 * crossing nearest the use (NULL: none). -1: out of memory. */
static int token_path(const GenCase *c, int32_t t, int maker, const char **via) {
  if (t < 0 || t >= c->ntoks)
    return 0;
  uint8_t *seen = af_calloc((size_t)c->ntoks, 1);
  Hop *stack = af_malloc((size_t)c->ntoks * sizeof *stack);
  int n = 0, found = 0;
  if (seen == NULL || stack == NULL) {
    af_free(seen);
    af_free(stack);
    return -1;
  }
#define PUSH(T, NEAR, Y)                                                                           \
  do {                                                                                             \
    int32_t t_ = (T);                                                                              \
    if (t_ >= 0 && t_ < c->ntoks && !seen[t_]) {                                                   \
      seen[t_] = 1;                                                                                \
      stack[n++] = (Hop){t_, (NEAR), (Y)};                                                         \
    }                                                                                              \
  } while (0)
  PUSH(t, NULL, 0);
  while (n > 0 && !found) {
    Hop h = stack[--n];
    int def = -1;
    for (int i = 0; i < c->nops && def < 0; i++)
      if (c->ops[i].tok == h.tok)
        def = i;
    const GenOp *o = def >= 0 ? &c->ops[def] : NULL;
    if (def == maker) {
      *via = h.yielded ? "yield" : h.near;
      found = 1;
    } else if (o && o->kind == GEN_OP_AWAIT && o->vidx >= 0 && o->region > 0 &&
               o->region < c->nregions && o->vidx < c->regions[o->region].nyields) {
      PUSH(c->regions[o->region].yields[o->vidx], h.near, 1); /* the value a region yielded */
    } else if (o && block_out[o->kind]) {                     /* the token its body yielded */
      if (o->block > 0 && o->block < c->nblocks)
        PUSH(c->blocks[o->block].yield, h.near ? h.near : block_out[o->kind], h.yielded);
    } else if (o) {
      for (int d = o->ndeps - 1; d >= 0; d--)
        PUSH(o->deps[d], h.near, h.yielded);
    } else { /* a region's input (a value another region yielded) or capture; a block's input */
      for (int r = 1; r < c->nregions; r++) {
        const GenRegion *g = &c->regions[r];
        for (int k = 0; k < g->ninputs; k++)
          if (g->inputs[k].tok == h.tok && g->inputs[k].region > 0 &&
              g->inputs[k].region < c->nregions &&
              g->inputs[k].vidx < c->regions[g->inputs[k].region].nyields && g->inputs[k].vidx >= 0)
            PUSH(c->regions[g->inputs[k].region].yields[g->inputs[k].vidx], h.near, 1);
        for (int k = 0; k < g->ncaptures; k++)
          if (g->captures[k].tok == h.tok)
            PUSH(g->captures[k].outer, h.near, h.yielded);
      }
      for (int k = 1; k < c->nblocks; k++)
        for (int q = 0; q < c->blocks[k].ninputs; q++)
          if (c->blocks[k].inputs[q].tok == h.tok) {
            const GenBlock *b = &c->blocks[k];
            const char *in = b->op >= 0 && b->op < c->nops ? block_in[c->ops[b->op].kind] : NULL;
            PUSH(b->inputs[q].outer, h.near ? h.near : in, h.yielded);
          }
    }
  }
#undef PUSH
  af_free(seen);
  af_free(stack);
  return found;
}

/* How a handle made by op `maker` reached op `user`, by the path that carried that handle:
 * yielded out of a region (made in a region the user is not in, awaited as a region's value,
 * or a yield on the path), across the block boundary nearest the user, within one context, or
 * into a region the maker's context encloses (a capture); "unknown" where the maker is not
 * known or no dependency of the user leads back to it. */
static const char *handle_travel(const GenCase *c, int maker, int user) {
  if (maker < 0 || maker >= c->nops || user < 0 || user >= c->nops)
    return "unknown";
  int cm = c->ops[maker].ctx, cu = c->ops[user].ctx, encloses = cm == cu;
  for (int x = cu, guard = 0; !encloses && x > 0 && guard <= c->nregions; guard++) {
    x = x < c->nregions ? c->regions[x].parent : 0;
    encloses = x == cm;
  }
  if (!encloses)
    return "yield"; /* made in a region the user is not in: only a yield leads out of one */
  const GenOp *u = &c->ops[user];
  if ((u->kind == GEN_OP_AWAIT && u->vidx >= 0) || u->kind == GEN_OP_EXECUTE)
    return "yield"; /* (a region op's calls are its yield's) */
  const char *plain = cm == cu ? "own-context" : "into-region";
  if (maker == user)
    return plain;
  for (int d = 0; d < u->ndeps; d++) {
    const char *via = NULL;
    int rc = token_path(c, u->deps[d], maker, &via);
    if (rc < 0)
      return "unknown"; /* (out of memory: the path is not known) */
    if (rc > 0)
      return via ? via : plain;
  }
  return "unknown";
}

const char *oracle_handle_travel(const GenCase *c, RtRef h, const RtRec *trace, int ntrace,
                                 int before, int user) {
  return handle_travel(c, handle_maker(h, trace, ntrace, before), user);
}
