/*
 * guided.c: guided generation (`asyncfuzz fuzz`, the campaign's --guided): libFuzzer is the engine
 * (clang's runtime without its main: LLVMFuzzerRunDriver), this process's campaign judges, records,
 * reduces, stores and steers every input as a campaign does with the cases it generates.
 *
 * An input is a case in one of two forms. Bytes: the generator's choices (gen_generate_bytes), the
 * first ones choosing the swarm knobs, so libFuzzer's own byte mutations always give a valid case.
 * A case's JSON (it starts with '{'): what the structure-aware mutator writes (reduce_mutate: an
 * edge rewired, an op dropped, a wait added, a view, an element type, a stream...), and the
 * crossover (two byte strings spliced, or two cases one after the other: reduce_splice). The
 * reward: the semantic features the case reached (base/feat.h), one presence counter each in
 * libFuzzer's extra counters; an input that sets a new one enters the corpus.
 *
 * libFuzzer's driver does not return: when the campaign's time or cases are over (or SIGINT or
 * SIGTERM came: libFuzzer's own handlers are off) the callback jumps back out of it, and the
 * command ends with _exit after its summary, past libFuzzer's exit hook.
 */
#include "campaign_int.h"
#include "../reduce/reduce.h"
#include "../base/sha1.h"

#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define GUIDED_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GUIDED_ASAN 1
#endif
#endif
#ifdef GUIDED_ASAN
#include <sanitizer/lsan_interface.h>
#endif

#if ASYNCFUZZ_HAVE_LIBFUZZER
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*cb)(const uint8_t *, size_t));
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

/* libFuzzer's extra counters: one presence byte per feature slot (base/feat.h). */
__attribute__((section("__libfuzzer_extra_counters"), used,
               aligned(64))) static uint8_t g_counters[AF_FEAT_N];
#endif

static struct {
  Campaign *k;
  const CampaignFuzz *f;
  int swarm;
  jmp_buf back;
  int ex;         /* a case's error */
  long rejected;  /* inputs refused: unreadable or invalid JSON, or what steering avoids */
  long steered;   /* of those, valid cases steering avoids */
  long fresh;     /* JSON inputs steering avoids, mutated into fresh choices */
  long drawn;     /* mutations that were fresh draws (--fresh) */
  long moves[32]; /* structure-aware mutations made, per move */
  long spliced;   /* crossovers of two cases */
  int batch;      /* deferred feedback: inputs a batch (1: none) */
  long batches, replays, written, dropped; /* batches checked, inputs credited on reload, ... */
  int leaked; /* a sanitizer build: LeakSanitizer found a leak when the run ended */
} F;

int campaign_fuzz_available(char *why, size_t n) {
#if ASYNCFUZZ_HAVE_LIBFUZZER
  (void)why;
  (void)n;
  return 1;
#else
  snprintf(why, n,
           "this asyncfuzz was built without libFuzzer (clang's runtime: install "
           "libclang-rt-14-dev, or run scripts/bootstrap.sh, and build again)");
  return 0;
#endif
}

int campaign_guided_begin(Campaign *k, const CampaignHooks *hooks, AfErr *err) {
  k->hooks = hooks;
  k->c.jobs = 1;
  k->gslots = af_calloc(1, sizeof *k->gslots);
  if (k->gslots == NULL || campaign__loop_begin(k, k->c.max_cases) != 0)
    return af_err_set(err, AF_ENOMEM, "out of memory");
  return 0;
}

void campaign_guided_knobs(const Campaign *k, GenConfig *out) {
  *out = k->c.cfg;
  long turn = k->nbatch; /* (the configuration the next case goes to: loop.c) */
  GenAvoid av;
  campaign__batch_avoid(k, k->c.nmatrix > 0 ? (int)(turn % k->c.nmatrix) : 0, (uint64_t)turn, &av);
  gen_avoid_union(&out->avoid, &av);
}

int campaign_guided_avoided(const Campaign *k, const GenCase *c) {
  GenConfig cfg;
  campaign_guided_knobs(k, &cfg);
  return gen_avoid_case(&cfg.avoid, c);
}

int campaign_guided_done(const Campaign *k) {
  return k->loop == NULL || campaign__loop_done(k, k->c.max_cases);
}

int campaign_guided_cases(Campaign *k, const GenCase *const *cs, const uint8_t *const *ins,
                          const size_t *ns, int n) {
  double now = campaign__now();
  if (k->guided_last > 0) /* (since the last case: the fuzzer's) */
    k->st.time[CAMPAIGN_T_FUZZER] += now - k->guided_last;
  k->ngiven = n < k->batch ? n : k->batch;
  k->given = (const GenCase **)cs;
  k->given_in = (const uint8_t **)ins;
  k->given_n = (size_t *)ns;
  int rc = campaign__loop_step(k, k->gslots, 0, 1, k->c.max_cases, 1);
  k->ngiven = 0;
  k->given = NULL;
  k->given_in = NULL;
  k->given_n = NULL;
  k->guided_last = campaign__now();
  return rc;
}

int campaign_guided_case(Campaign *k, const GenCase *c, const uint8_t *in, size_t n) {
  const uint8_t *i = c ? NULL : in;
  size_t m = c ? 0 : n;
  return campaign_guided_cases(k, &c, &i, &m, 1);
}

int campaign_guided_batch(const Campaign *k) {
  if (k->batch <= 1)
    return 1;
  return k->c.batch > 0 ? k->batch : k->batch < 16 ? k->batch : 16;
}

int campaign_guided_end(Campaign *k, int ex, CampaignResult *res, AfErr *err) {
  memset(res, 0, sizeof *res);
  int failed = campaign__loop_end(k, k->gslots, 0, ex != 0) != 0;
  failed = campaign__finish_here(k, k->gslots, res, failed);
  af_free(k->gslots);
  k->gslots = NULL;
  return campaign__fill_result(k, res, 1, failed, err);
}

/* The cases of JSON inputs read lately (the mutator's and the crossover's outputs, which libFuzzer
 * runs next, and the corpus entries it mutates again and again), kept as read and validated:
 * reading a case's JSON cost more than checking the case with the builtin lowering. Keyed by the
 * bytes themselves, direct-mapped by their hash. */
#define CACHE_N 4096
static struct Cached {
  uint8_t *bytes; /* NULL: empty */
  size_t n;
  GenCase c;
} g_cache[CACHE_N];
static long g_cache_hits, g_cache_reads;

static struct Cached *cache_slot(const uint8_t *d, size_t n) {
  return &g_cache[af_hash_quick(d, n) % CACHE_N];
}

static void cache_clear(void) {
  for (int i = 0; i < CACHE_N; i++)
    if (g_cache[i].bytes) {
      af_free(g_cache[i].bytes);
      g_cache[i].bytes = NULL;
      gen_case_free(&g_cache[i].c);
    }
}

/* The case of JSON input d[0..n), valid (NULL: it is not one). */
static const GenCase *json_case(const uint8_t *d, size_t n) {
  struct Cached *e = cache_slot(d, n);
  if (e->bytes && e->n == n && memcmp(e->bytes, d, n) == 0) {
    g_cache_hits++;
    return &e->c;
  }
  g_cache_reads++;
  AfErr err = {0};
  char *text = af_malloc(n + 1);
  GenCase c;
  if (text == NULL)
    return NULL;
  memcpy(text, d, n);
  text[n] = '\0';
  int rc = gen_case_from_json(&c, text, &err);
  af_free(text);
  if (rc == 0 && gen_validate(&c, &err) != 0)
    rc = -1;
  if (rc != 0) /* (an unread case still holds its main context) */
    gen_case_free(&c);
  uint8_t *keep = rc == 0 ? af_malloc(n) : NULL;
  if (keep == NULL) { /* (not kept: refused, or out of memory) */
    if (rc == 0)
      gen_case_free(&c);
    return NULL;
  }
  if (e->bytes) {
    af_free(e->bytes);
    gen_case_free(&e->c);
  }
  memcpy(keep, d, n);
  e->bytes = keep;
  e->n = n;
  e->c = c;
  return &e->c;
}

/* The case of input d[0..n): a JSON input's (json_case), or bytes made into one with knobs cfg,
 * in *own (which the caller frees either way). NULL: JSON that is not a valid case. */
static const GenCase *case_of(const uint8_t *d, size_t n, const GenConfig *cfg, GenCase *own) {
  memset(own, 0, sizeof *own); /* (nothing to free; gen_case_init would allocate) */
  if (n > 0 && d[0] == '{')
    return json_case(d, n);
  AfErr err = {0};
  return gen_generate_bytes(own, d, n, cfg, F.swarm, &err) == 0 ? own : NULL;
}

/* Valid case m's JSON into out (at most max bytes): its length, or 0 when it does not fit. m is
 * freed, and kept renumbered as its JSON reads back: the case of that input, which libFuzzer runs
 * next, without reading it. */
static size_t put_case(GenCase *m, uint8_t *out, size_t max) {
  GenCase own, *c = &own;
  AfErr err = {0};
  if (gen_case_renumber(m, c, &err) != 0)
    c = m; /* (out of memory: the case as it is, not kept) */
  else
    gen_case_free(m);
  char *json = gen_case_to_json(c);
  size_t len = json ? strlen(json) : 0;
  if (len > max)
    len = 0;
  if (len)
    memcpy(out, json, len);
  uint8_t *keep = len ? af_malloc(len) : NULL;
  if (keep)
    memcpy(keep, json, len);
  af_free(json);
  if (keep == NULL || c == m) {
    af_free(keep);
    gen_case_free(c);
    return len;
  }
  struct Cached *e = cache_slot(keep, len);
  if (e->bytes) {
    af_free(e->bytes);
    gen_case_free(&e->c);
  }
  e->bytes = keep;
  e->n = len;
  e->c = *c; /* (its arrays are the cache's now) */
  memset(c, 0, sizeof *c);
  return len;
}

/* ---- deferred feedback ----
 * Through mlir-opt, checking the inputs one at a time costs a tool run each, where a campaign
 * checks a batch per run. So a guided run queues the inputs libFuzzer gives it (which see no
 * feature then) and checks a batch of them at once, each case's features noted apart
 * (af_feat_attribute: the action log by the lines of each case, the traces and verdicts by case).
 * An input that adds a feature no input was credited with is written into the corpus directory,
 * under the name libFuzzer gives a file (its SHA-1), and kept with its features here: libFuzzer
 * reloads its corpus directory (-reload, every second by default), runs the new file, and the
 * callback credits it with its features at once, so the input enters libFuzzer's corpus with
 * what it reached, one batch late. */
typedef struct Known {
  uint8_t *bytes; /* NULL: empty */
  size_t n;
  uint32_t *slots;
  int nslots;
} Known;

static struct {
  int B;        /* inputs a batch (1: each input checked at once, its features credited then) */
  uint8_t **in; /* the queue: each input's bytes, */
  size_t *n;    /* ... length, */
  GenCase *cs;  /* ... case (JSON inputs: read and validated; bytes: unused) */
  int *json, nq;
  uint64_t *credited; /* AF_FEAT_N bits: the slots some input was credited with */
  Known *known;       /* open addressing by the bytes' hash, capknown a power of 2 */
  int nknown, capknown;
  long batches, replays, written;
  /* Whether an input libFuzzer runs to collect its features was checked at once: until then each
   * is (the empty input libFuzzer tries first, whose features it ignores, among them). Where none
   * of the first inputs reaches a feature, libFuzzer warns that the code may lack coverage
   * instrumentation, and makes up an input. */
  int started;
  char corpus[4096], tmp[4200];
} D;

static size_t known_at(const uint8_t *d, size_t n) {
  return (size_t)af_hash_quick(d, n) & (size_t)(D.capknown - 1);
}

static const Known *known_find(const uint8_t *d, size_t n) {
  if (D.capknown == 0)
    return NULL;
  for (size_t i = known_at(d, n);; i = (i + 1) & (size_t)(D.capknown - 1)) {
    const Known *e = &D.known[i];
    if (e->bytes == NULL)
      return NULL;
    if (e->n == n && memcmp(e->bytes, d, n) == 0)
      return e;
  }
}

/* Keeps input d[0..n) with its slots (copied); 0, or -1 when out of memory. */
static int known_add(const uint8_t *d, size_t n, const uint32_t *slots, int ns) {
  if (known_find(d, n))
    return 0;
  if (2 * (D.nknown + 1) > D.capknown) { /* (half full at most) */
    int cap = D.capknown ? 2 * D.capknown : 256;
    Known *t = af_calloc((size_t)cap, sizeof *t), *old = D.known;
    if (t == NULL)
      return -1;
    int oldcap = D.capknown;
    D.known = t;
    D.capknown = cap;
    for (int i = 0; i < oldcap; i++)
      if (old[i].bytes) {
        size_t j = known_at(old[i].bytes, old[i].n);
        while (t[j].bytes)
          j = (j + 1) & (size_t)(cap - 1);
        t[j] = old[i];
      }
    af_free(old);
  }
  uint8_t *b = af_malloc(n ? n : 1);
  uint32_t *sl = af_malloc(sizeof *sl * (size_t)(ns ? ns : 1));
  if (b == NULL || sl == NULL) {
    af_free(b);
    af_free(sl);
    return -1;
  }
  memcpy(b, d, n);
  memcpy(sl, slots, sizeof *sl * (size_t)ns);
  size_t i = known_at(d, n);
  while (D.known[i].bytes)
    i = (i + 1) & (size_t)(D.capknown - 1);
  D.known[i] = (Known){b, n, sl, ns};
  D.nknown++;
  return 0;
}

/* Whether slots[0..ns) hold one no input was credited with; marks them credited. */
static int credit_new(const uint32_t *slots, int ns) {
  int fresh = 0;
  for (int i = 0; i < ns && D.credited; i++) {
    uint64_t bit = 1ull << (slots[i] % 64);
    fresh |= !(D.credited[slots[i] / 64] & bit);
    D.credited[slots[i] / 64] |= bit;
  }
  return fresh;
}

/* Input d[0..n) into the corpus directory as libFuzzer names it (written beside the campaign's
 * output, then renamed: libFuzzer never reads half a file). A failure is reported and the input
 * only kept here. */
static void corpus_write(const uint8_t *d, size_t n) {
  char sha[41], path[4200];
  af_sha1_hex(d, n, sha);
  af_fmt(path, sizeof path, "%s/%s", D.corpus, sha);
  struct stat st;
  if (stat(path, &st) == 0)
    return; /* (the same bytes, written already: one file, counted once) */
  AfErr err = {0};
  if (af_write_file(D.tmp, (const char *)d, n, &err) == 0 && rename(D.tmp, path) == 0) {
    D.written++;
    return;
  }
  if (err.rc == 0 && af_write_file(path, (const char *)d, n, &err) == 0) { /* (another device) */
    unlink(D.tmp);
    D.written++;
    return;
  }
  unlink(D.tmp);
  campaign__problem(F.k, "cannot write a corpus input into %s: %s", D.corpus,
                    err.rc ? err.msg : strerror(errno));
}

static void queue_free(void) {
  for (int j = 0; j < D.nq; j++) {
    af_free(D.in[j]);
    if (D.json[j])
      gen_case_free(&D.cs[j]);
  }
  D.nq = 0;
}

static void deferred_free(void) {
  queue_free();
  af_free(D.in);
  af_free(D.n);
  af_free(D.cs);
  af_free(D.json);
  af_free(D.credited);
  for (int i = 0; i < D.capknown; i++) {
    af_free(D.known[i].bytes);
    af_free(D.known[i].slots);
  }
  af_free(D.known);
  memset(&D, 0, sizeof D);
}

static int deferred_init(int B, const char *corpus, const char *out) {
  memset(&D, 0, sizeof D);
  D.B = B;
  af_fmt(D.corpus, sizeof D.corpus, "%s", corpus);
  af_fmt(D.tmp, sizeof D.tmp, "%s/.corpus-input.tmp", out);
  D.credited = af_calloc(AF_FEAT_N / 64, sizeof *D.credited);
  D.in = af_calloc((size_t)B, sizeof *D.in);
  D.n = af_calloc((size_t)B, sizeof *D.n);
  D.cs = af_calloc((size_t)B, sizeof *D.cs);
  D.json = af_calloc((size_t)B, sizeof *D.json);
  return D.credited && D.in && D.n && D.cs && D.json ? 0 : -1;
}

/* Checks the inputs queued (now: the one input c, or d[0..n) when c is NULL, at once), each
 * case's features noted apart; credits an input checked at once with its features now, and
 * writes each queued input that reached a feature no input was credited with into the corpus.
 * 0, or a case's error. */
static int check_noted(const GenCase *c, const uint8_t *d, size_t n, int now) {
  int m = now ? 1 : D.nq;
  const GenCase *cs[64];
  const uint8_t *ins[64];
  size_t ns[64];
  for (int j = 0; j < m; j++) {
    cs[j] = now ? c : D.json[j] ? &D.cs[j] : NULL;
    ins[j] = now ? (c ? NULL : d) : D.in[j];
    ns[j] = now ? n : D.n[j];
  }
  int noted = af_feat_attribute(m) == 0;
  int rc = campaign_guided_cases(F.k, cs, ins, ns, m);
  D.batches += !now;
  for (int j = 0; j < m && noted && rc == 0; j++) {
    int k;
    const uint32_t *sl = af_feat_case_slots(j, &k);
    if (now) { /* (libFuzzer reads the counters when the callback returns) */
      D.started |= n > 0 && k > 0;
      af_feat_credit(sl, k);
      if (credit_new(sl, k))
        (void)known_add(d, n, sl, k);
    } else if (credit_new(sl, k) && known_add(D.in[j], D.n[j], sl, k) == 0) {
      corpus_write(D.in[j], D.n[j]);
    }
  }
  af_feat_attribute(0);
  if (!now)
    queue_free();
  return rc;
}

/* Queues input d[0..n) (c: its case, a JSON input's); checks the queue when it is full, or
 * holds the campaign's last cases. 0, or a case's error. */
static int defer(const GenCase *c, const uint8_t *d, size_t n) {
  int j = D.nq;
  D.in[j] = af_malloc(n ? n : 1);
  D.json[j] = c != NULL;
  if (D.in[j] == NULL || (c && gen_case_copy(&D.cs[j], c) != 0)) {
    af_free(D.in[j]);
    campaign__problem(F.k, "out of memory");
    return -1;
  }
  memcpy(D.in[j], d, n);
  D.n[j] = n;
  D.nq++;
  long left = F.k->c.max_cases > 0 ? F.k->c.max_cases - F.k->st.cases : D.B;
  return D.nq >= D.B || D.nq >= left ? check_noted(NULL, NULL, 0, 0) : 0;
}

static int one_input(const uint8_t *d, size_t n) {
  if (campaign_guided_done(F.k)) {
    /* a sanitized build: LeakSanitizer's check, here, where libFuzzer's frames still hold what
     * they own (the process ends with _exit, past the check at exit, and after the jump what
     * they held would count as leaked) */
#ifdef GUIDED_ASAN
    F.leaked = __lsan_do_recoverable_leak_check() != 0;
#endif
    longjmp(F.back, 1);
  }
  int rc;
  const Known *kn = D.B > 1 ? known_find(d, n) : NULL;
  if (kn) { /* checked in a batch and written into the corpus: libFuzzer reloaded it */
    af_feat_credit(kn->slots, kn->nslots);
    D.replays++;
    return 0;
  }
  const GenCase *c = NULL;
  if (n > 0 && d[0] == '{') { /* a case */
    c = json_case(d, n);
    if (c == NULL || campaign_guided_avoided(F.k, c)) {
      F.rejected++;
      F.steered += c != NULL;
      return -1; /* (not added to the corpus) */
    }
  }
  if (D.B <= 1) /* each input at once, its features set as they come */
    rc = campaign_guided_case(F.k, c, d, n);
  else if (!D.started || n == 0) /* (see deferred_init) */
    rc = check_noted(c, d, n, 1);
  else
    rc = defer(c, d, n);
  if (rc) {
    F.ex = rc;
    longjmp(F.back, 2);
  }
  return 0;
}

#if ASYNCFUZZ_HAVE_LIBFUZZER
/* Fresh choices: n random bytes, a byte input (not '{'), so a case the generator makes anew (past
 * the bytes, from a generator their first bytes seed). */
#define FRESH_LEN 64
static void fresh_choices(AfRng *r, uint8_t *d, size_t n) {
  for (size_t i = 0; i < n; i++)
    d[i] = (uint8_t)af_rng_below(r, 256);
  if (n && d[0] == '{')
    d[0] = 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *d, size_t n, size_t max, unsigned int seed) {
  AfRng r;
  af_rng_seed(&r, seed);
  int json = n > 0 && d[0] == '{';
  /* a fresh draw (--fresh; none drawn at 0, so that the mutations stay what they were) */
  if (F.f->fresh > 0 && max >= FRESH_LEN && af_rng_chance(&r, F.f->fresh)) {
    fresh_choices(&r, d, FRESH_LEN);
    F.drawn++;
    return FRESH_LEN;
  }
  if (!json && !af_rng_chance(&r, F.f->structure))
    return LLVMFuzzerMutate(d, n, max);
  GenCase own, m;
  size_t len = 0;
  int move = -1;
  GenConfig cfg;
  campaign_guided_knobs(F.k, &cfg);
  const GenCase *c = case_of(d, n, &cfg, &own);
  if (c && reduce_mutate(c, &r, &cfg.avoid, &m, &move) == 0) {
    len = put_case(&m, d, max);
    gen_case_free(&m);
    if (len && move >= 0 && move < 32)
      F.moves[move]++;
  }
  if (len == 0 && json && c && max > 0 && gen_avoid_case(&cfg.avoid, c)) {
    /* a case with what steering has since come to avoid, which no move frees it of: it would
     * come back unchanged and be refused again, so fresh choices instead (a byte input, which
     * the generator makes under the steering) */
    len = max < FRESH_LEN ? max : FRESH_LEN;
    fresh_choices(&r, d, len);
    F.fresh++;
  }
  gen_case_free(&own);
  if (len == 0 && !json)
    return LLVMFuzzerMutate(d, n, max);
  return len ? len : n;
}

size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t n1, const uint8_t *d2, size_t n2,
                                 uint8_t *out, size_t max, unsigned int seed) {
  AfRng r;
  af_rng_seed(&r, seed);
  int j1 = n1 > 0 && d1[0] == '{', j2 = n2 > 0 && d2[0] == '{';
  if (!j1 && !j2) { /* choices: a head and a tail */
    size_t k1 = af_rng_below(&r, (uint32_t)n1 + 1), k2 = af_rng_below(&r, (uint32_t)n2 + 1);
    size_t len = k1 + (n2 - k2) < max ? k1 + (n2 - k2) : max;
    memcpy(out, d1, k1 < len ? k1 : len);
    if (len > k1)
      memcpy(out + k1, d2 + k2, len - k1);
    return len;
  }
  GenCase own_a, own_b, copy, s;
  size_t len = 0;
  GenConfig cfg;
  campaign_guided_knobs(F.k, &cfg);
  const GenCase *a = case_of(d1, n1, &cfg, &own_a);
  memset(&copy, 0, sizeof copy); /* (the second input's case may take the first's cache slot) */
  if (a && j1 && j2 && cache_slot(d1, n1) == cache_slot(d2, n2))
    a = gen_case_copy(&copy, a) == 0 ? &copy : NULL;
  const GenCase *b = case_of(d2, n2, &cfg, &own_b);
  if (a && b && reduce_splice(a, b, &s) == 0) {
    /* (a splice with what steering avoids would only be refused: none, libFuzzer mutates again) */
    len = gen_avoid_case(&cfg.avoid, &s) ? 0 : put_case(&s, out, max);
    gen_case_free(&s);
    F.spliced += len > 0;
  }
  gen_case_free(&copy);
  gen_case_free(&own_a);
  gen_case_free(&own_b);
  return len;
}
#endif

int campaign_fuzz_run(Campaign *k, const CampaignHooks *hooks, const CampaignFuzz *f,
                      CampaignResult *res, AfErr *err) {
  const CampaignConfig *c = &k->c;
  char why[256];
  if (!campaign_fuzz_available(why, sizeof why))
    return af_err_set(err, AF_EUSAGE, "%s", why);
#if ASYNCFUZZ_HAVE_LIBFUZZER
  char corpus[4096], art[4200], ml[64], sd[64];
  if (f->corpus)
    snprintf(corpus, sizeof corpus, "%s", f->corpus);
  else
    snprintf(corpus, sizeof corpus, "%s/corpus", c->out);
  if (campaign__mkdir_p(corpus) != 0)
    return af_err_set(err, AF_EIO, "cannot create the corpus directory %s: %s", corpus,
                      strerror(errno));
  snprintf(art, sizeof art, "-artifact_prefix=%s/", c->out);
  snprintf(ml, sizeof ml, "-max_len=%d", f->max_len);
  snprintf(sd, sizeof sd, "-seed=%u", /* (a shard of its own: asyncfuzz slurm) */
           (unsigned)((c->seed + (uint64_t)(c->nshards > 1 ? c->shard : 0)) % 4294967291u) + 1u);
  /* libFuzzer: no handlers of its own for SIGINT/SIGTERM (ours stop the campaign), no
   * per-input timeout (a new finding's reduction takes seconds; the tools have theirs) */
  char *args[64], self[4096];
  int na = 0;
  /* (a merge runs this program again through a shell, with these arguments: asyncfuzz
   * --libfuzzer-child, which libFuzzer itself ignores, and the campaign's options from the
   * environment: cli/campaign.c) */
  ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
  self[sl > 0 ? sl : 0] = '\0';
  args[na++] = sl > 0 ? self : (char *)(f->argv0 ? f->argv0 : "asyncfuzz");
  args[na++] = "--libfuzzer-child";
  if (f->merge && !f->child)
    args[na++] = "-merge=1";
  args[na++] = "-handle_int=0";
  args[na++] = "-handle_term=0";
  args[na++] = "-timeout=0";
  /* (a callback that checks a batch, or reduces a finding, is not a slow input) */
  args[na++] = "-report_slow_units=1000000";
  args[na++] = "-print_final_stats=0";
  args[na++] = ml;
  args[na++] = sd;
  args[na++] = art;
  for (int i = 0; i < f->nflags && i < 16; i++)
    args[na++] = (char *)f->flags[i];
  if (!f->child)
    args[na++] = corpus;
  for (int i = 0; i < f->nseeds && i < 16; i++)
    args[na++] = (char *)f->seeds[i];
  args[na] = NULL;
  char **argv = args;
  memset(&F, 0, sizeof F);
  g_cache_hits = g_cache_reads = 0;
  F.k = k;
  F.f = f;
  F.swarm = c->swarm;
  if (af_feat_enable(1) != 0)
    return af_err_set(err, AF_ENOMEM, "out of memory");
  af_feat_set_counters(g_counters, sizeof g_counters);
  int rc = campaign_guided_begin(k, hooks, err);
  if (rc)
    return rc;
  /* (a merge, and its child processes, take each input's features as it runs) */
  int B = f->merge || f->child ? 1 : campaign_guided_batch(k);
  if (deferred_init(B > 64 ? 64 : B, corpus, c->out) != 0) {
    deferred_free();
    return af_err_set(err, AF_ENOMEM, "out of memory");
  }
  if (setjmp(F.back) == 0)
    LLVMFuzzerRunDriver(&na, &argv, one_input);
  af_feat_set_counters(NULL, 0);
  af_feat_attribute(0);
  F.batches = D.batches;
  F.replays = D.replays;
  F.written = D.written;
  F.batch = D.B;
  F.dropped = D.nq; /* (queued, never checked: the run was over) */
  deferred_free();
  cache_clear();
  rc = campaign_guided_end(k, F.ex, res, err);
  if (rc == 0 && F.leaked)
    rc = af_err_set(err, AF_EINTERNAL,
                    "memory leaked while fuzzing (LeakSanitizer's report is above)");
  return rc;
#else
  (void)c;
  (void)hooks;
  (void)f;
  (void)res;
  return 0;
#endif
}

void campaign_fuzz_report(AfBuf *b) {
  af_buf_printf(b, "guided: %ld input(s) refused (%ld not a valid case, %ld steered away from)",
                F.rejected, F.rejected - F.steered, F.steered);
  long total = 0;
  for (int m = 0; m < reduce_mutation_count() && m < 32; m++)
    total += F.moves[m];
  af_buf_printf(b, "; %ld structure-aware mutation(s)", total);
  const char *sep = ": ";
  for (int m = 0; m < reduce_mutation_count() && m < 32; m++)
    if (F.moves[m]) {
      af_buf_printf(b, "%s%s %ld", sep, reduce_mutation_name(m), F.moves[m]);
      sep = ", ";
    }
  if (F.fresh)
    af_buf_printf(b, "; %ld steered-away case(s) replaced by fresh choices", F.fresh);
  if (F.drawn)
    af_buf_printf(b, "; %ld fresh draw(s)", F.drawn);
  af_buf_printf(b, "; %ld case splice(s); %ld JSON input(s) read, %ld found read before", F.spliced,
                g_cache_reads, g_cache_hits);
  if (F.batch > 1)
    af_buf_printf(b,
                  "; feedback deferred over batches of %d: %ld batch(es), %ld input(s) written "
                  "into the corpus, %ld credited when libFuzzer reloaded them, %ld queued when "
                  "the run ended",
                  F.batch, F.batches, F.written, F.replays, F.dropped);
  af_buf_puts(b, "\n");
}

void campaign_fuzz_save_args(int argc, char *const *argv) {
  AfBuf o;
  af_buf_init(&o);
  for (int i = 0; i < argc; i++)
    af_buf_printf(&o, "%s%s", i ? "\x1f" : "", argv[i]);
  setenv("ASYNCFUZZ_FUZZ_ARGS", o.p ? o.p : "", 1);
  af_buf_free(&o);
}

static char g_child_dir[4096];
static void child_cleanup(void) {
  af_rm_tree(g_child_dir);
}

int campaign_fuzz_child_args(int argc, char **argv, char ***out) {
  const char *env = getenv("ASYNCFUZZ_FUZZ_ARGS"), *tmp = getenv("TMPDIR");
  char *own = af_strdup(env ? env : "");
  snprintf(g_child_dir, sizeof g_child_dir, "%s/asyncfuzz-merge-XXXXXX",
           tmp && *tmp ? tmp : "/tmp");
  char **v = af_calloc((size_t)argc + 256, sizeof *v);
  if (own == NULL || v == NULL || mkdtemp(g_child_dir) == NULL)
    return -1;
  atexit(child_cleanup); /* (libFuzzer ends the process with exit) */
  int n = 0;
  v[n++] = "fuzz";
  for (char *p = own; *p && n < 200;) {
    v[n++] = p;
    char *sep = strchr(p, '\x1f');
    if (sep == NULL)
      break;
    *sep = '\0';
    p = sep + 1;
  }
  static char *tail[] = {"--no-db",    "--no-reduce", "--repro",           "1",    "--cases",
                         "2000000000", "--quiet",     "--libfuzzer-child", "--out"};
  for (size_t i = 0; i < sizeof tail / sizeof tail[0]; i++)
    v[n++] = tail[i];
  v[n++] = g_child_dir;
  for (int i = 1; i < argc && n < argc + 250; i++) { /* libFuzzer's flags, its directories */
    if (argv[i][0] != '-')
      v[n++] = "--seeds";
    v[n++] = argv[i];
  }
  *out = v;
  return n;
}
