/*
 * steer.c: steering generation away from bugs already known (campaign_int.h). A finding names
 * its cause: an op shape a lowering rejected or left unconverted, the construct a misused handle
 * travelled through (via:yield, via:call-result), the op that destroyed it (destroyed-by:
 * host-wait), the link a missing edge lacked (merge-arg, capture, own-dep of an op shape), a
 * leaked stream (each stream the program makes is ended); a crash, which names no op, by the
 * forms its case was found to need (check_crash_forms: "gpu.memcpy async ranked",
 * dynamic-extents), else by the block and region kinds of its minimized case. Each becomes an
 * entry of an avoid set (gen.h) on the configurations where the finding reproduces, and the
 * generator builds that ordering in another form for the batches that run there. The entries come
 * from the findings themselves, never from a list of known upstream bugs.
 */
#include "campaign_int.h"

#include <stdio.h>
#include <string.h>

/* The shapes of a lowering's verdict, from its detailed form (LOWERING|CLASS|FORM[,FORM]...|MSG:
 * each form of the op with its dependency count, "gpu.memcpy async deps=0") when there is one,
 * else from its cause (the shape without a count: every count), into a. The name is coarse, for
 * one finding per bug; the steering is only as wide as the forms that failed: a copy with one
 * dependency that lowers is still generated where those with none or two did not. */
static int shape_entries(const char *cause, const char *detailed, GenAvoid *a) {
  const char *from = cause;
  if (detailed && detailed[0]) {
    from = strchr(detailed, '|'); /* (past the lowering) */
    from = from ? from + 1 : detailed;
  }
  from += strcspn(from, "|"); /* the class */
  from += *from == '|';
  size_t len = strcspn(from, "|");
  int ok = 0, bad = 0;
  for (size_t at = 0; at < len;) {
    size_t k = strcspn(from + at, ",|");
    char w[160];
    snprintf(w, sizeof w, "%.*s", (int)(k < 159 ? k : 159), from + at);
    if (gen_avoid_add(a, w) >= 0)
      ok++;
    else
      bad++;
    at += k + 1;
  }
  return ok > 0 && bad == 0;
}

/* The avoid-set entries a signature's cause names (after LOWERING|: CLASS|SHAPE|... for a
 * lowering's verdict on an op shape; missing-edge|..., misused-handle|..., lifetime|... for a
 * run's), into a; detailed: the verdict's detailed form, or NULL. */
static int cause_entries(const char *cls, const char *cause, const char *detailed, GenAvoid *a) {
  int n = 0;
  char w[160];
  if (oracle_verdict_names_shape(oracle_verdict_lookup(cls)))
    return shape_entries(cause, detailed, a);
  /* runtime_error|ERROR|DETAIL|SHAPE: a call the runtime refused or failed, by the shape of the
   * op that made it (a view's form, or what names no op the generator has, steers nothing) */
  if (strncmp(cause, "runtime_error|", 14) == 0) {
    const char *last = strrchr(cause, '|') + 1;
    snprintf(w, sizeof w, "%.*s", (int)strcspn(last, "@"), last);
    /* the detailed form's last word, the same op with its element type ("gpu.memset async
     * i16": the call of that width failed), narrows it */
    const char *dl = detailed ? strrchr(detailed, '|') : NULL;
    GenShape s, t;
    if (dl && gen_shape_parse(dl + 1, &t) == 0 && t.elem > 0 && gen_shape_parse(w, &s) == 0 &&
        s.kind == t.kind && s.async == t.async)
      snprintf(w, sizeof w, "%s", dl + 1);
    return gen_avoid_add(a, w) > 0;
  }
  /* missing-edge|MECH|SHAPE...: an op's own ordering by its shape, any other link by its name */
  if (strncmp(cause, "missing-edge|", 13) == 0) {
    const char *mech = cause + 13;
    size_t ml = strcspn(mech, "|");
    snprintf(w, sizeof w, "%.*s", (int)ml, mech);
    if (strcmp(w, "own-dep") == 0 || strcmp(w, "dealloc-order") == 0) {
      /* an op of that kind ordered by a dependency (of any count: the name has none); one
       * after a host wait, with none, is the other form */
      char kind[140];
      snprintf(kind, sizeof kind, "%.*s", (int)strcspn(mech + ml + (mech[ml] == '|'), "|@"),
               mech + ml + (mech[ml] == '|'));
      /* (on an explicit stream, as the detailed form says: only such ops) */
      const char *of = detailed ? strstr(detailed, "|own-dep-of:") : NULL;
      size_t ol = of ? strcspn(of + 12, "|") : 0;
      int st = of && ol >= 7 && strncmp(of + 12 + ol - 7, " stream", 7) == 0;
      af_fmt(w, sizeof w, "%s deps=1 pending%s", kind, st ? " stream" : "");
      int r1 = gen_avoid_add(a, w);
      af_fmt(w, sizeof w, "%s deps=2+%s", kind, st ? " stream" : "");
      int r2 = gen_avoid_add(a, w);
      return r1 >= 0 && r2 >= 0;
    }
    return gen_avoid_add(a, w) >= 0;
  }
  /* a leaked stream (lifetime|leaked_stream|made-by:SHAPE): whoever made it (often the one
   * form the other avoidances leave: a gpu.wait async root token, a join), the program ends
   * each stream it makes with a host wait (stream-end); another leak steers nothing (it is
   * reported beside any other cause of its run, oracle_judge, so it hides none) */
  if (strncmp(cause, "lifetime|leaked_stream|", 23) == 0)
    return gen_avoid_add(a, "leaked_stream") >= 0;
  if (strncmp(cause, "lifetime|leaked_", 16) == 0)
    return 0;
  /* misused-handle|KIND|HOW|via:X or destroyed-by:X */
  for (const char *p = cause; (p = strchr(p, '|')) != NULL; p++) {
    const char *v = p + 1;
    const char *colon = strchr(v, ':');
    size_t len = strcspn(v, "|");
    if (colon == NULL || (size_t)(colon - v) >= len)
      continue;
    snprintf(w, sizeof w, "%.*s", (int)(len - (size_t)(colon + 1 - v)), colon + 1);
    n += gen_avoid_add(a, w) >= 0;
  }
  return n > 0;
}

/* What regions carry, in the order a narrowed finding steers them (the least GPU work first),
 * then the token crossings of the blocks that have another form (a block's finding: its own). */
static const int carried[] = {GEN_CONSTRUCT_BLOCK_REGION, GEN_CONSTRUCT_CAPTURE,
                              GEN_CONSTRUCT_REGION_INPUT, GEN_CONSTRUCT_YIELD,
                              GEN_CONSTRUCT_CALL_TOKEN,   GEN_CONSTRUCT_IF_TOKEN,
                              GEN_CONSTRUCT_BRANCH_TOKEN};
enum { REGION_CARRIED = 4 };

/* The token crossing of block kind kind that has another form, or -1. */
static int block_crossing(int kind) {
  return kind == GEN_OP_CALL     ? GEN_CONSTRUCT_CALL_TOKEN
         : kind == GEN_OP_IF     ? GEN_CONSTRUCT_IF_TOKEN
         : kind == GEN_OP_BRANCH ? GEN_CONSTRUCT_BRANCH_TOKEN
                                 : -1;
}

int campaign__narrow_prefix(const GenAvoid *narrow, int n, GenAvoid *out) {
  memset(out, 0, sizeof *out);
  int k = 0;
  for (size_t i = 0; i < sizeof carried / sizeof carried[0] && k < n; i++)
    if ((narrow->constructs >> carried[i]) & 1) {
      gen_avoid_add(out, gen_construct_name(carried[i]));
      k++;
    }
  return k;
}

int campaign__region_narrow(const char *cls, const char *cause, const GenCase *min,
                            GenAvoid *narrow, GenAvoid *wide) {
  memset(narrow, 0, sizeof *narrow);
  memset(wide, 0, sizeof *wide);
  if (min == NULL)
    return 0;
  int v = oracle_verdict_lookup(cls);
  int crash = v == VERDICT_JIT_CRASH || v == VERDICT_LOWERING_CRASH;
  GenShape s;
  int shape =
      !crash && oracle_verdict_names_shape(v) && cause &&
      gen_shape_parse(cause + strcspn(cause, "|") + (cause[strcspn(cause, "|")] == '|'), &s) == 0;
  int region = shape && (gen_op_flags(s.kind) & GEN_K_REGION);
  int block = shape && block_crossing(s.kind) >= 0; /* (a block rejected: its token first) */
  if (!crash && !region && !block)
    return 0;
  /* what regions carry, as the minimized case has it: each of them it needed */
  for (size_t i = 0; i < sizeof carried / sizeof carried[0]; i++) {
    if (block ? carried[i] != block_crossing(s.kind) : i >= REGION_CARRIED)
      continue;
    GenAvoid one;
    memset(&one, 0, sizeof one);
    gen_avoid_add(&one, gen_construct_name(carried[i]));
    if (gen_avoid_case(&one, min))
      gen_avoid_union(narrow, &one);
  }
  if (gen_avoid_count(narrow) == 0)
    return 0;
  if (crash)
    gen_avoid_structure(wide, min);
  else
    gen_avoid_add(wide, gen_op_mlir(s.kind));
  return 1;
}

/* The ledger of each entry by the finding it came from: a's entries on confs. */
static void steer_by(Campaign *k, const GenAvoid *a, uint64_t confs, const char *signature) {
  for (int i = 0; i < gen_avoid_count(a); i++) {
    char w[96];
    gen_avoid_text(a, i, w, sizeof w);
    int r = 0;
    while (r < k->nsteer_by &&
           (strcmp(k->steer_by[r].entry, w) != 0 || strcmp(k->steer_by[r].signature, signature)))
      r++;
    if (r == k->nsteer_by) {
      char *sig = af_strdup(signature);
      if (sig == NULL ||
          af_grow((void **)&k->steer_by, &k->capsteer_by, r + 1, sizeof *k->steer_by)) {
        af_free(sig);
        return; /* (the ledger only explains; the steering itself is set) */
      }
      k->steer_by[r].signature = sig;
      snprintf(k->steer_by[r].entry, sizeof k->steer_by[r].entry, "%s", w);
      k->steer_by[r].confs = 0;
      k->nsteer_by++;
    }
    k->steer_by[r].confs |= confs;
  }
}

void campaign__avoid_set(Campaign *k, const GenAvoid *a, uint64_t confs, const char *signature) {
  if (k->c.nmatrix == 0 || confs == 0)
    gen_avoid_union(&k->avoid_all, a);
  else
    for (int c = 0; c < k->c.nmatrix && c < 64; c++)
      if ((confs >> c) & 1)
        gen_avoid_union(&k->avoid_conf[c], a);
  if (signature)
    steer_by(k, a, k->c.nmatrix == 0 || confs == 0 ? UINT64_MAX : confs, signature);
}

const char *campaign__steered_by(const Campaign *k, int conf, const char *entry, int i) {
  int bit = conf >= 0 && conf < 64 ? conf : 0;
  for (int r = 0; r < k->nsteer_by; r++)
    if (((k->steer_by[r].confs >> bit) & 1) && strcmp(k->steer_by[r].entry, entry) == 0 && i-- == 0)
      return k->steer_by[r].signature;
  return NULL;
}

void campaign__avoid(Campaign *k, const char *signature, const char *cls, const GenAvoid *need,
                     const char *detailed, const char *why, uint64_t confs, const GenCase *min) {
  /* LOWERING|CAUSE */
  const char *p1 = strchr(signature, '|');
  if (p1 == NULL)
    return;
  int ours = 0; /* a finding of another lowering says nothing of these */
  for (int i = 0; i < k->c.nspecs && !ours; i++)
    ours = strlen(k->c.specs[i].name) == (size_t)(p1 - signature) &&
           strncmp(k->c.specs[i].name, signature, (size_t)(p1 - signature)) == 0;
  GenAvoid a, wide;
  memset(&a, 0, sizeof a);
  int crash = oracle_verdict_lookup(cls) == VERDICT_JIT_CRASH ||
              oracle_verdict_lookup(cls) == VERDICT_LOWERING_CRASH;
  GenAvoid all;
  int needs = ours && crash && need && gen_avoid_count(need) > 0;
  int narrowed = ours && !needs && campaign__region_narrow(cls, p1 + 1, min, &all, &wide);
  if (needs) /* (the forms without which it does not crash: nothing else of its case) */
    gen_avoid_union(&a, need);
  else if (narrowed) /* (the first its minimized case's regions carry, not the region) */
    campaign__narrow_prefix(&all, 1, &a);
  else if (ours && crash && min) /* (the structure of the smallest case that still crashes) */
    gen_avoid_structure(&a, min);
  else if (!ours || !cause_entries(cls, p1 + 1, detailed, &a))
    return;
  if (gen_avoid_count(&a) == 0)
    return;
  campaign__avoid_set(k, &a, confs, signature);
  uint64_t h = af_hash64(signature, strlen(signature));
  int n = 0; /* (a finding steered again, on more configurations: its entry says so) */
  while (n < k->st.navoid && k->avoid_sig[n] != h)
    n++;
  if (n >= (int)(sizeof k->avoid_why / sizeof k->avoid_why[0]))
    return;
  if (n == k->st.navoid)
    k->avoid_mask[n] = 0;
  k->avoid_sig[n] = h;
  k->avoid_mask[n] |= confs;
  char what[96];
  gen_avoid_text(&a, 0, what, sizeof what);
  if (oracle_verdict_names_shape(oracle_verdict_lookup(cls)) && !narrowed) {
    /* the shape as the name has it (CLASS|SHAPE|...): its forms are in the sets */
    const char *shape = p1 + 1 + strcspn(p1 + 1, "|");
    shape += *shape == '|';
    snprintf(what, sizeof what, "%.*s", (int)strcspn(shape, "|"), shape);
  }
  int nc = 0;
  for (int c = 0; c < k->c.nmatrix && c < 64; c++)
    nc += (int)((k->avoid_mask[n] >> c) & 1);
  if (k->c.nmatrix == 0 || confs == 0)
    snprintf(k->avoid_why[n], sizeof k->avoid_why[n], "%s (%s)", what, why);
  else
    snprintf(k->avoid_why[n], sizeof k->avoid_why[n], "%s (%s, on %d of %d configurations)", what,
             why, nc, k->c.nmatrix);
  if (n == k->st.navoid)
    k->st.navoid = n + 1;
}

void campaign__batch_avoid(const Campaign *k, int conf, uint64_t seed, GenAvoid *out) {
  memset(out, 0, sizeof *out);
  /* exploration: a share of the cases is made with nothing avoided */
  if (af_mix64(seed, 0xe8b1a2e) % 1000 < (uint64_t)k->c.explore_permille)
    return;
  campaign__steering(k, conf, out);
}

void campaign_avoiding(const Campaign *k, char *out, size_t n) {
  size_t len = 0;
  out[0] = '\0';
  for (int i = 0; i < k->st.navoid && len < n; i++) {
    int w = snprintf(out + len, n - len, "%s%s", i ? ", " : "", k->avoid_why[i]);
    len += w > 0 ? (size_t)w : 0;
  }
}

void campaign__steering(const Campaign *k, int conf, GenAvoid *out) {
  memset(out, 0, sizeof *out);
  gen_avoid_union(out, &k->avoid_all);
  if (k->c.nmatrix > 0 && conf >= 0 && conf < k->c.nmatrix)
    gen_avoid_union(out, &k->avoid_conf[conf]);
}

void campaign__trigger_name(const Campaign *k, int conf, char *out, size_t n) {
  if (k->c.nmatrix == 0 || conf < 0 || conf >= k->c.nmatrix) {
    snprintf(out, n, "all");
    return;
  }
  snprintf(out, n, "%s", k->c.matrix[conf].name);
  for (char *p = out; *p; p++)
    if (*p == '/')
      *p = '_';
}

void campaign__save_trigger(Campaign *k, Sig *sig, const GenCase *c, uint64_t confs) {
  if (c == NULL || sig->f.suppressed) /* (a known finding has no folder: the database has it) */
    return;
  for (int i = 0; i < 64; i++) {
    if (!((confs >> i) & 1) || ((sig->trigger_confs >> i) & 1))
      continue;
    char name[200];
    campaign__trigger_name(k, k->c.nmatrix == 0 ? -1 : i, name, sizeof name);
    char file[240];
    snprintf(file, sizeof file, "steered-%s.json", name);
    char path[4096];
    snprintf(path, sizeof path, "%s/failures/%s/%s", k->c.out, sig->f.dir, file);
    AfErr err = {0};
    if (gen_case_save(c, path, &err) == 0)
      sig->trigger_confs |= 1ull << i;
    else
      campaign__problem(k, "%s", err.msg);
  }
}
