/*
 * info.c: a finding's info.txt (campaign_int.h): its signature, versions, seeds, sizes,
 * configurations and the commands that replay it, rewritten whenever one of them changes.
 */
#include "campaign_int.h"

#include "../lower/mlir.h"

#include <string.h>

int campaign__write_info(Campaign *k, const Sig *s) {
  char path[4096], tmp[4200];
  snprintf(path, sizeof path, "%s/failures/%s/info.txt", k->c.out, s->f.dir);
  FILE *f = campaign__open_atomic(path, tmp);
  if (f == NULL)
    return -1;
  char fs[64], ss[64], knobs[GEN_CONFIG_ARGS_MAX];
  const LowerSpec *spec = campaign_spec(&k->c, s->f.low);
  check_schedule_str(&s->first_sched, fs, sizeof fs);
  check_schedule_str(&s->f.smallest_sched, ss, sizeof ss);
  gen_config_args(&s->knobs, knobs, sizeof knobs);
  fprintf(f, "signature: %s\n", s->f.signature);
  fprintf(f, "class: %s\n", oracle_verdict_name(s->f.cls));
  fprintf(f, "lowering: %s (version %s)\n", spec->name, lower_version(spec));
  if (spec->kind == LOWER_MLIR_OPT)
    fprintf(f, "mlir-opt: %s\npipeline: %s\n", spec->opt, spec->pipeline);
  fprintf(f, "asyncfuzz: %s\nbackend: %s\ndevice: %s\n", ASYNCFUZZ_VERSION,
          check_backend_name(&k->c.opts), k->c.device);
  fprintf(f, "occurrences: %ld\n", s->f.count);
  fprintf(f, "first: first.json (case seed %llu, schedule %s, after %.1f s)\n",
          (unsigned long long)s->first_seed, fs, s->first_at);
  fprintf(f, "smallest: smallest.json (%d ops, case seed %llu, schedule %s)\n", s->f.smallest_ops,
          (unsigned long long)s->smallest_seed, ss);
  if (s->min_ops > 0)
    fprintf(f, "minimized: minimized.json (%d ops%s), reproducer.mlir (RUN lines for mlir-opt)\n",
            s->min_ops,
            s->min_partial ? "; its time (--reduce-seconds, or the campaign's) ran out before it "
                             "was minimal: asyncfuzz reduce minimized.json goes on"
                           : "");
  uint32_t holds = s->min_ops > 0 ? s->min_holds : s->f.holds;
  if (holds) {
    char h[256];
    gen_forms_str(holds, h, sizeof h);
    fprintf(f, "holds: %s (forms of types and launches its %s case holds: docs/case-format.md)\n",
            h, s->min_ops > 0 ? "minimized" : "smallest");
  }
  if (s->needs[0])
    fprintf(f, "needs: %s (without %s, the %s case does not crash this way)\n", s->needs,
            strchr(s->needs, ',') ? "any one of them" : "it",
            s->min_ops > 0 ? "minimized" : "first");
  if (s->flaky)
    fprintf(f, "note: a re-run of the first case gave a different signature\n");
  if (s->matrix)
    fprintf(f, "configurations: the %s case reproduces on %d of %d%s%s%s\n%s",
            s->min_ops > 0 ? "minimized" : "first", s->f.matrix_rep, s->f.matrix_n,
            s->f.matrix_axes[0] ? " (the verdicts differ by " : "", s->f.matrix_axes,
            s->f.matrix_axes[0] ? ")" : "", s->matrix);
  fprintf(f, "detail: %s\n", s->detail);
  char cp[4200], line[8192];
  const Schedule *sm = &s->f.smallest_sched;
  snprintf(cp, sizeof cp, "%s/failures/%s/smallest.json", k->c.out, s->f.dir);
  fprintf(f, "replay: %s\n",
          check_replay(line, sizeof line, CHECK_REPLAY_CHECK, cp, spec, sm, &k->c.opts));
  if (spec->kind == LOWER_MLIR_OPT)
    fprintf(f, "trace: ASYNCFUZZ_KEEP_TMP=1 %s (keeps the lowered module and traces)\n",
            check_replay(line, sizeof line, CHECK_REPLAY_CHECK, cp, spec, sm, &k->c.opts));
  else
    fprintf(f, "trace: %s\n",
            check_replay(line, sizeof line, CHECK_REPLAY_TRACE, cp, spec, sm, &k->c.opts));
  if (k->c.guided) /* (its seed is the hash of a fuzzer's input, which no seed makes again) */
    fprintf(f, "regenerate: a guided case (asyncfuzz fuzz): smallest.json and first.json are the "
               "cases themselves\n");
  else
    fprintf(f, "regenerate: asyncfuzz gen --seed %llu %s\n", (unsigned long long)s->smallest_seed,
            knobs);
  return campaign__commit_file(f, tmp, path);
}
