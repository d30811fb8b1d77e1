/*
 * test_kcache.c: the kernel cache (lower/mlir_kcache.c) gives what the whole pipeline gives. For
 * each configuration: cases that lower fully, lowered alone and as one --split-input-file group,
 * with the cache off and mlir-opt started for each run (the reference), and with it on and the
 * tools' fork servers (as the CLI runs them: cold, then warm); every output the same byte for
 * byte but the compile time a gpu.binary's properties record (LLVMIRToISATimeInMs), and the warm
 * runs found their kernels in the cache. Prints mlir-opt's time per case alone both ways.
 *
 *   test_kcache FSLIB MLIR_OPT [CASES [SPEC...]]
 *
 * FSLIB: libasyncfuzz_fs.so (the tools' fork servers, as the CLI runs them; "" for none).
 * SPEC: lowering specs (default: mlir-opt@default/nvvm, @async-region/nvvm and @default/rocdl on
 * MLIR_OPT). bench/kernel_cache.sh runs it on every configuration of the matrix.
 */
#include "test.h"

#include "../base/afbase.h"
#include "../base/proc.h"
#include "../gen/gen.h"
#include "../lower/lower.h"
#include "../lower/mlir.h"

#include <stdlib.h>
#include <string.h>

static const char *fslib = "";

/* text without the digits of "LLVMIRToISATimeInMs = N" (the only thing a cached binary changes). */
static char *masked(const char *text) {
  char *m = af_strdup(text);
  const char *key = "LLVMIRToISATimeInMs = ";
  size_t kl = strlen(key);
  for (char *p = m ? strstr(m, key) : NULL; p; p = strstr(p + kl, key)) {
    size_t d = strspn(p + kl, "0123456789");
    memmove(p + kl, p + kl + d, strlen(p + kl + d) + 1);
  }
  return m;
}

static int same(const char *what, int i, const char *a, const char *b) {
  char *ma = masked(a), *mb = masked(b);
  int eq = ma && mb && strcmp(ma, mb) == 0;
  if (!eq && ma && mb) {
    size_t k = 0;
    while (ma[k] && ma[k] == mb[k])
      k++;
    size_t from = k > 60 ? k - 60 : 0;
    fprintf(stderr, "%s, case %d: outputs differ at byte %zu: \"%.140s\" / \"%.140s\"\n", what, i,
            k, ma + from, mb + from);
  }
  af_free(ma);
  af_free(mb);
  return eq;
}

static void set_cache(int on) {
  if (on)
    unsetenv("ASYNCFUZZ_KERNEL_CACHE");
  else
    setenv("ASYNCFUZZ_KERNEL_CACHE", "0", 1);
}

/* One configuration: up to want cases that lower fully. */
static void one_spec(const char *spec_text, int want) {
  LowerSpec spec;
  AfErr err = {0};
  if (lower_spec_parse(spec_text, &spec, &err) != 0) {
    fprintf(stderr, "%s: %s\n", spec_text, err.msg);
    CHECK(0);
    return;
  }
  char dir[4096];
  CHECK_EQ(mlir_tmpdir(dir, sizeof dir, &err), 0);
  GenConfig cfg;
  gen_config_default(&cfg);
  cfg.ops = 12; /* (and past the known rejections: most cases lower fully) */
  cfg.stream_pct = cfg.block_pct = cfg.space_pct = cfg.extra_dep_pct = 0;
  cfg.sync_pct = cfg.view_pct = cfg.region_pct = 0;
  cfg.root_wait_pct = 100;
  cfg.max_deps = 2;
  int n = 0;
  char **chunks = af_calloc((size_t)want, sizeof *chunks);
  char **ref = af_calloc((size_t)want, sizeof *ref);
  double off_s = 0, on_s = 0;
  set_cache(0);
  mlir_kcache_clear();
  af_proc_servers(NULL); /* (the reference: mlir-opt started for each run, as a user runs it) */
  /* the cases that lower fully (the cache off: the reference) */
  for (uint64_t seed = 1; seed < 40 * (uint64_t)want && n < want; seed++) {
    GenCase c;
    if (gen_generate(&c, seed, &cfg, &err) != 0)
      continue;
    const GenCase *one = &c;
    int zero = 0;
    char *chunk = gen_render_mlir_group_map(&one, &zero, 1, 3, NULL);
    gen_case_free(&c);
    MlirLowered l;
    double t0 = af_mono();
    CHECK_EQ(mlir_lower_group(&spec, dir, &chunk, 1, &l, &err), 0);
    if (l.outcome == MLIR_OK) {
      off_s += af_mono() - t0;
      chunks[n] = chunk;
      ref[n++] = l.code;
      l.code = NULL;
    } else {
      af_free(chunk);
    }
    mlir_lowered_free(&l, 1);
  }
  CHECK(n >= 2); /* (async-region rejects most: its own known bugs) */
  if (n == 0)
    return;
  MlirLowered *gref = af_calloc((size_t)n, sizeof *gref), *g = af_calloc((size_t)n, sizeof *g);
  CHECK_EQ(mlir_lower_group(&spec, dir, chunks, n, gref, &err), 0);
  af_proc_servers(fslib); /* (from here, as the CLI runs the tools) */
  /* the cache on: a group (cold), each alone (warm), the group again */
  set_cache(1);
  CHECK_EQ(mlir_lower_group(&spec, dir, chunks, n, g, &err), 0);
  for (int i = 0; i < n; i++) {
    CHECK_EQ(g[i].outcome, MLIR_OK);
    CHECK(g[i].code && gref[i].code && same(spec.name, i, gref[i].code, g[i].code));
  }
  mlir_lowered_free(g, n);
  long h0, h1, m1, stored;
  mlir_kcache_counts(&h0, NULL, NULL);
  for (int i = 0; i < n; i++) {
    MlirLowered l;
    double t0 = af_mono();
    CHECK_EQ(mlir_lower_group(&spec, dir, &chunks[i], 1, &l, &err), 0);
    on_s += af_mono() - t0;
    CHECK_EQ(l.outcome, MLIR_OK);
    CHECK(l.code && same(spec.name, i, ref[i], l.code));
    mlir_lowered_free(&l, 1);
  }
  mlir_kcache_counts(&h1, &m1, &stored);
  CHECK(h1 - h0 >= n); /* (warm: each case's kernels found compiled) */
  CHECK(stored >= 1);
  CHECK_EQ(mlir_lower_group(&spec, dir, chunks, n, g, &err), 0);
  for (int i = 0; i < n; i++)
    CHECK(g[i].code && gref[i].code && same(spec.name, i, gref[i].code, g[i].code));
  printf("%-40s %2d case(s): the same output with the kernel cache; %ld kernel module(s) "
         "compiled; mlir-opt per case alone %.1f ms started each time without it, %.1f ms "
         "with it and a fork server (%.2fx)\n",
         spec.name, n, stored, 1000 * off_s / n, 1000 * on_s / n, on_s > 0 ? off_s / on_s : 0);
  mlir_lowered_free(g, n);
  mlir_lowered_free(gref, n);
  af_free(g);
  af_free(gref);
  for (int i = 0; i < n; i++) {
    af_free(chunks[i]);
    af_free(ref[i]);
  }
  af_free(chunks);
  af_free(ref);
  af_rm_tree(dir);
}

int main(int argc, char **argv) {
  if (argc < 3 || !argv[2][0]) {
    test_skip("the kernel cache against the whole pipeline", "no mlir-opt given (mlir-22-tools)");
    return TEST_DONE("test_kcache");
  }
  fslib = argv[1];
  int want = argc > 3 ? atoi(argv[3]) : 6;
  if (argc > 4) {
    for (int i = 4; i < argc; i++)
      one_spec(argv[i], want);
  } else {
    static const char *const specs[] = {"mlir-opt@default/nvvm", "mlir-opt@async-region/nvvm",
                                        "mlir-opt@default/rocdl"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
      char s[4200];
      snprintf(s, sizeof s, "%s:%s", specs[i], argv[2]);
      one_spec(s, want);
    }
  }
  return TEST_DONE("test_kcache");
}
