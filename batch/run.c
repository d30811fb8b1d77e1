/*
 * run.c: a compiled batch run and judged (batch.h): the manifest, the child processes that
 * run the cases with a watchdog, the verdicts of every run, and the database.
 */
#include "batch.h"

#include "../base/proc.h"
#include "../lower/mlir.h"

#include <cjson/cJSON.h>
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct BatchCase {
  int id, lowered;
  char file[4200];
  GenCase c;
  Verdict lv; /* the lowering verdict of a case not lowered */
  int fault;  /* the child died (1) or hung (2) on this case */
  char why[64];
} BatchCase;

struct Batch {
  char dir[4096];
  LowerSpec spec;
  BatchCase *bc;
  int n, nlow;
  char tools[4096];
  char tdir[4096]; /* the traces ("" before batch_run) */
  Schedule s[CHECK_MAX_SCHED];
  int ns;
};

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* The lowering, as the manifest records it, and the tools as the database records them. */
static void read_lowering(Batch *b, const cJSON *m) {
  LowerSpec *spec = &b->spec;
  memset(spec, 0, sizeof *spec);
  spec->kind = LOWER_MLIR_OPT;
  const char *fields[][2] = {{"lowering", spec->name},
                             {"lowering_arg", spec->arg},
                             {"lowering_version", spec->version},
                             {"pipeline", spec->pipeline}};
  size_t sizes[] = {sizeof spec->name, sizeof spec->arg, sizeof spec->version,
                    sizeof spec->pipeline};
  for (int f = 0; f < 4; f++) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(m, fields[f][0]);
    snprintf((char *)fields[f][1], sizes[f], "%s", cJSON_IsString(j) ? j->valuestring : "");
  }
  /* the target and the signatures' name, as the spec gave them */
  snprintf(spec->target, sizeof spec->target, "%s",
           strstr(spec->pipeline, "convert-gpu-to-rocdl") ? "rocdl" : "nvvm");
  spec->code_object = strstr(spec->pipeline, "format=bin") != NULL;
  snprintf(spec->family, sizeof spec->family, "%s",
           strncmp(spec->arg, "matrix:", 7) == 0 ? "mlir-opt" : spec->name);
  const cJSON *tv = cJSON_GetObjectItemCaseSensitive(m, "mlir_translate");
  const cJSON *lv = cJSON_GetObjectItemCaseSensitive(m, "llc");
  AfBuf tb;
  af_buf_init(&tb);
  af_buf_puts(&tb, "[{\"lowering\": ");
  af_buf_json_str(&tb, spec->name);
  af_buf_puts(&tb, ", \"version\": ");
  af_buf_json_str(&tb, spec->version);
  af_buf_puts(&tb, ", \"pipeline\": ");
  af_buf_json_str(&tb, spec->pipeline);
  af_buf_puts(&tb, ", \"mlir_translate\": ");
  af_buf_json_str(&tb, cJSON_IsString(tv) ? tv->valuestring : "");
  af_buf_puts(&tb, ", \"llc\": ");
  af_buf_json_str(&tb, cJSON_IsString(lv) ? lv->valuestring : "");
  af_buf_puts(&tb, ", \"batch\": true}]");
  snprintf(b->tools, sizeof b->tools, "%s", tb.p && !tb.oom ? tb.p : "[]");
  af_buf_free(&tb);
}

/* Case i of the manifest: its file (loaded and validated) and, when not lowered, its
 * lowering verdict. */
static int read_case(Batch *b, const cJSON *e, int i, const char *mpath, AfErr *err) {
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
  const cJSON *file = cJSON_GetObjectItemCaseSensitive(e, "file");
  const cJSON *lowered = cJSON_GetObjectItemCaseSensitive(e, "lowered");
  if (!cJSON_IsNumber(id) || !cJSON_IsString(file) || !cJSON_IsBool(lowered))
    return af_err_set(err, AF_EPARSE, "%s: case %d is malformed", mpath, i);
  BatchCase *c = &b->bc[i];
  c->id = id->valueint;
  c->lowered = cJSON_IsTrue(lowered);
  b->nlow += c->lowered;
  snprintf(c->file, sizeof c->file, "%s/%s", b->dir, file->valuestring);
  AfErr e2 = {0};
  int rc = gen_case_load(&c->c, c->file, &e2);
  if (rc == 0)
    rc = gen_validate(&c->c, &e2);
  if (rc)
    return af_err_set(err, rc == AF_EIO ? AF_EPARSE : rc, "%s: %s", c->file,
                      e2.msg[0] ? e2.msg : af_strerror(rc));
  if (!c->lowered) {
    const cJSON *vj = cJSON_GetObjectItemCaseSensitive(e, "verdict");
    const cJSON *sj = cJSON_GetObjectItemCaseSensitive(e, "signature");
    const cJSON *dj = cJSON_GetObjectItemCaseSensitive(e, "detail");
    Verdict *v = &c->lv;
    v->cls = cJSON_IsString(vj) ? oracle_verdict_lookup(vj->valuestring) : -1;
    if (v->cls < 0)
      v->cls = VERDICT_LOWERING_REJECTED;
    v->hb_first = v->error_seq = -1;
    snprintf(v->signature, sizeof v->signature, "%s", cJSON_IsString(sj) ? sj->valuestring : "");
    snprintf(v->detail, sizeof v->detail, "%s", cJSON_IsString(dj) ? dj->valuestring : "");
    const cJSON *fj = cJSON_GetObjectItemCaseSensitive(e, "detailed");
    snprintf(v->victim, sizeof v->victim, "%s", cJSON_IsString(fj) ? fj->valuestring : "");
  }
  return 0;
}

int batch_open(const char *dir, Batch **out, AfErr *err) {
  *out = NULL;
  char mpath[4200], *text = NULL;
  snprintf(mpath, sizeof mpath, "%s/manifest.json", dir);
  AfErr e2 = {0};
  if (af_read_file(mpath, &text, NULL, &e2))
    return af_err_set(err, AF_EIO, "%s (is %s a batch of compile-batch?)", e2.msg, dir);
  cJSON *m = cJSON_Parse(text);
  af_free(text);
  const cJSON *fmtj = cJSON_GetObjectItemCaseSensitive(m, "format");
  const cJSON *jc = cJSON_GetObjectItemCaseSensitive(m, "cases");
  if (m == NULL || !cJSON_IsString(fmtj) || strcmp(fmtj->valuestring, BATCH_FORMAT) != 0 ||
      !cJSON_IsArray(jc)) {
    cJSON_Delete(m);
    return af_err_set(err, AF_EPARSE, "%s is not a manifest of this asyncfuzz (%s)", mpath,
                      BATCH_FORMAT);
  }
  Batch *b = af_calloc(1, sizeof *b);
  int n = cJSON_GetArraySize(jc);
  if (b)
    b->bc = af_calloc((size_t)(n > 0 ? n : 1), sizeof *b->bc);
  int rc = b && b->bc ? 0 : af_err_set(err, AF_ENOMEM, "out of memory");
  if (rc == 0) {
    snprintf(b->dir, sizeof b->dir, "%s", dir);
    read_lowering(b, m);
    b->n = n;
    for (int i = 0; i < n && rc == 0; i++)
      rc = read_case(b, cJSON_GetArrayItem(jc, i), i, mpath, err);
  }
  cJSON_Delete(m);
  if (rc) {
    batch_free(b);
    return rc;
  }
  *out = b;
  return 0;
}

void batch_free(Batch *b) {
  if (b == NULL)
    return;
  if (b->tdir[0] && !getenv("ASYNCFUZZ_KEEP_TMP"))
    af_rm_tree(b->tdir);
  for (int i = 0; b->bc && i < b->n; i++)
    gen_case_free(&b->bc[i].c);
  af_free(b->bc);
  af_free(b);
}

const LowerSpec *batch_spec(const Batch *b) {
  return &b->spec;
}
int batch_ncases(const Batch *b) {
  return b->n;
}
int batch_ncompiled(const Batch *b) {
  return b->nlow;
}
const char *batch_case_file(const Batch *b, int i) {
  return b->bc[i].file;
}
const char *batch_tools_json(const Batch *b) {
  return b->tools;
}
const char *batch_trace_dir(const Batch *b) {
  return b->tdir;
}

typedef struct ChildJob {
  const char *so;
  const BatchCase *bc;
  int ns;
} ChildJob;

/* A child: loads the object (its constructors load the kernel modules), then runs the cases
 * whose indices it reads from in, and writes each finished case's index to fd. */
static void batch_child(void *arg, int in, int fd) {
  const ChildJob *j = arg;
  const BatchCase *bc = j->bc;
  int ns = j->ns;
  dup2(2, 1); /* whatever the compiled code prints must not mix with the verdicts */
  void *h = dlopen(j->so, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    fprintf(stderr, "asyncfuzz run-batch: cannot load %s: %s\n", j->so, dlerror());
    _exit(3);
  }
  AfChild parent = {-1, fd, in};
  int32_t i;
  while (af_child_read(&parent, &i, sizeof i, -1) == 0) {
    char name[32];
    snprintf(name, sizeof name, "af_case_%d", bc[i].id);
    void (*fn)(void) = (void (*)(void))dlsym(h, name);
    if (fn == NULL) {
      fprintf(stderr, "asyncfuzz run-batch: %s has no %s\n", j->so, name);
      _exit(3);
    }
    for (int k = 0; k < ns; k++) {
      asyncfuzz_case_begin(bc[i].id, k);
      fn();
      asyncfuzz_case_end(bc[i].id, k);
      if (asyncfuzz_rt_device_broken()) /* a sticky error: the rest goes to a fresh child */
        _exit(75);
    }
    if (write(fd, &i, sizeof i) != sizeof i)
      _exit(1);
  }
  _exit(0);
}

/* The runtime's settings, as mlir-runner gets them. */
static void set_env(const Batch *b, const CheckOpts *o) {
  char sv[4200] = "";
  size_t k = 0;
  for (int j = 0; j < b->ns && k < sizeof sv; j++)
    k += (size_t)snprintf(sv + k, sizeof sv - k, "%s%s@%llu", j ? "," : "",
                          asyncfuzz_rt_policy_name(b->s[j].policy),
                          (unsigned long long)b->s[j].seed);
  setenv("ASYNCFUZZ_SCHEDULES", sv, 1);
  setenv("ASYNCFUZZ_TRACE_DIR", b->tdir, 1);
  setenv("ASYNCFUZZ_MEMFREE_SYNC", o->memfree_sync ? "1" : "0", 1);
  char fail[32];
  snprintf(fail, sizeof fail, "%d", o->fail_pct > 0 ? o->fail_pct : 0);
  setenv("ASYNCFUZZ_FAIL_CALLS", fail, 1);
  setenv("ASYNCFUZZ_BACKEND", check_backend_name(o), 1);
  setenv("ASYNCFUZZ_ABI", asyncfuzz_rt_abi_name(check_abi(&b->spec, o)), 1);
  char spin[32];
  snprintf(spin, sizeof spin, "%d", o->spin > 0 ? o->spin : 0);
  setenv("ASYNCFUZZ_SPIN", spin, 1);
  unsetenv("ASYNCFUZZ_TRACE");
  unsetenv("ASYNCFUZZ_TRACE_BIN");
}

/* A batch run: the lowered cases (run[0..nrun): indices into b->bc), handed to the children
 * one at a time (af_pool_run). */
typedef struct BatchPool {
  Batch *b;
  ChildJob job;
  const int *run;
  BatchRunStats *stats;
  AfChild child[CHECK_GPU_JOBS_MAX];
} BatchPool;

static int pool_start(AfPool *p, int slot, AfErr *err) {
  BatchPool *bp = p->ctx;
  return af_pool_start_child(p, slot, batch_child, &bp->job, err);
}

static int pool_send(AfPool *p, int slot, int item) {
  const BatchPool *bp = p->ctx;
  int32_t i = bp->run[item];
  return af_child_write(&p->child[slot], &i, sizeof i);
}

static int pool_recv(AfPool *p, int slot, int item, double left) {
  const BatchPool *bp = p->ctx;
  int32_t done;
  int r = af_child_read(&p->child[slot], &done, sizeof done, left);
  return r == 0 && done != bp->run[item] ? -1 : r;
}

/* The child died or hung on a case: it gets the verdict; the next case starts a fresh child.
 * A child that could not load the object stops the run. */
static int pool_lost(AfPool *p, int slot, int item, int st, int hung, AfErr *err) {
  BatchPool *bp = p->ctx;
  (void)slot;
  if (!hung && WIFEXITED(st) && WEXITSTATUS(st) == 3)
    return af_err_set(err, AF_EPARSE, "%s cannot be run (the child said why)", bp->job.so);
  BatchCase *c = &bp->b->bc[bp->run[item]];
  char why[128];
  c->fault = hung ? 2 : 1;
  af_child_how(st, hung, p->limit, c->why, sizeof c->why, why, sizeof why);
  bp->stats->restarts++;
  return 0;
}

int batch_run(Batch *b, const Schedule *s, int ns, const CheckOpts *o, BatchRunStats *stats,
              AfErr *err) {
  memset(stats, 0, sizeof *stats);
  if (check_runs_on(&b->spec, o, err))
    return err->rc;
  b->ns = ns < CHECK_MAX_SCHED ? ns : CHECK_MAX_SCHED;
  memcpy(b->s, s, sizeof *s * (size_t)b->ns);
  int rc = mlir_tmpdir(b->tdir, sizeof b->tdir, err);
  if (rc)
    return rc;
  char so[4200];
  snprintf(so, sizeof so, "%s/batch.so", b->dir);
  set_env(b, o);
  const char *t = getenv("ASYNCFUZZ_GPU_TIMEOUT");
  BatchPool *bp = af_calloc(1, sizeof *bp);
  int *run = af_malloc(sizeof *run * (size_t)(b->n > 0 ? b->n : 1));
  if (bp == NULL || run == NULL) {
    af_free(bp);
    af_free(run);
    return af_err_set(err, AF_ENOMEM, "out of memory");
  }
  int nrun = 0;
  for (int i = 0; i < b->n; i++)
    if (b->bc[i].lowered)
      run[nrun++] = i;
  for (int k = 0; k < CHECK_GPU_JOBS_MAX; k++)
    bp->child[k].pid = bp->child[k].to = bp->child[k].from = -1;
  bp->b = b;
  bp->job = (ChildJob){so, b->bc, b->ns};
  bp->run = run;
  bp->stats = stats;
  /* on a GPU, several children (contexts) at once; on the sim, one */
  AfPool p = {.child = bp->child,
              .k = asyncfuzz_rt_backend_info(o->backend)->gpu ? check_gpu_jobs(o) : 1,
              .limit = t && atof(t) > 0 ? atof(t) : 60,
              .ctx = bp,
              .start = pool_start,
              .send = pool_send,
              .recv = pool_recv,
              .lost = pool_lost};
  double t0 = now_s();
  rc = af_pool_run(&p, nrun, err);
  for (int k = 0; k < CHECK_GPU_JOBS_MAX; k++) {
    int st;
    af_child_end(&bp->child[k], 0, &st);
  }
  stats->seconds = now_s() - t0;
  stats->children = p.k < nrun ? p.k : nrun;
  af_free(bp);
  af_free(run);
  return rc;
}

/* The verdict of run j of case c. */
static int judge_run(Batch *b, const BatchCase *c, int j, const OracleExpected *e,
                     const CheckOpts *o, Verdict *v, AfErr *err) {
  memset(v, 0, sizeof *v);
  v->hb_first = v->error_seq = -1;
  const char *name = b->spec.name;
  if (!c->lowered) {
    *v = c->lv;
  } else if (c->fault) {
    v->cls = c->fault == 2 ? VERDICT_TIMEOUT : VERDICT_RUNTIME_ERROR;
    v->rt_failed = 1;
    snprintf(v->signature, sizeof v->signature, "%s|%s|%s", name,
             c->fault == 2 ? "timeout|device" : "runtime_error|device-process", c->why);
    snprintf(v->detail, sizeof v->detail,
             "the batch's child process stopped on this case (%s); a fresh one went on", c->why);
  } else {
    char tp[4300];
    int found = 1;
    snprintf(tp, sizeof tp, "%s/case-%d-%d.bin", b->tdir, c->id, j);
    int rc = check_judge_trace(tp, &c->c, &b->spec, e, o, v, &found, err);
    if (rc)
      return rc;
    if (!found) {
      v->cls = VERDICT_RUNTIME_ERROR;
      v->rt_failed = 1;
      snprintf(v->signature, sizeof v->signature, "%s|runtime_error|no-trace", name);
      snprintf(v->detail, sizeof v->detail, "the run left no trace");
    }
  }
  return 0;
}

int batch_judge(Batch *b, int i, const CheckOpts *o, CheckResult *res, AfErr *err) {
  const BatchCase *c = &b->bc[i];
  memset(res, 0, sizeof *res);
  res->first_fail = -1;
  res->executed = c->lowered;
  OracleExpected *e = NULL;
  int rc = 0;
  if (c->lowered && !c->fault)
    rc = oracle_expect(&c->c, &e, err);
  for (int j = 0; j < b->ns && rc == 0; j++) {
    Verdict v;
    rc = judge_run(b, c, j, e, o, &v, err);
    if (rc)
      break;
    res->sched[j] = b->s[j];
    res->verdict[j] = v;
    res->nsched = j + 1;
    if (oracle_verdict_phase(v.cls) == ORACLE_PHASE_ENVIRONMENT)
      res->device_errors++; /* (not a failure of the lowering) */
    else if (v.cls != VERDICT_PASS && res->first_fail < 0)
      res->first_fail = j;
    if (!c->lowered)
      break; /* one verdict: nothing ran */
  }
  oracle_expected_free(e);
  return rc;
}

int batch_db_begin(const Batch *b, Store *db, const char *scheds, uint64_t seed, const CheckOpts *o,
                   const char *dev, int64_t *run_id, AfErr *err) {
  StoreRun run;
  store_run_init(&run);
  snprintf(run.tools, sizeof run.tools, "%s", b->tools);
  snprintf(run.device, sizeof run.device, "%s",
           dev && dev[0] ? dev : "sim (deterministic CPU simulator)");
  snprintf(run.config, sizeof run.config,
           "{\"batch\": true, \"schedules\": \"%s\", \"seed\": %llu, \"memfree_sync\": %s, "
           "\"checker\": %s, \"backend\": \"%s\", \"spin\": %d, \"abi\": \"%s\"}",
           scheds, (unsigned long long)seed, o->memfree_sync ? "true" : "false",
           o->no_checker ? "false" : "true", check_backend_name(o), o->spin,
           asyncfuzz_rt_abi_name(check_abi(&b->spec, o)));
  return store_run_begin(db, &run, run_id, err);
}

int batch_db_record(const Batch *b, Store *db, int64_t run_id, int i, const CheckOpts *o,
                    const CheckResult *res, int *nnew, AfErr *err) {
  const BatchCase *bc = &b->bc[i];
  const LowerSpec *spec = &b->spec;
  CheckRecord r;
  StoreOccurrence oc;
  if (check_record(&r, &oc, &bc->c, spec, &res->verdict[res->first_fail],
                   &res->sched[res->first_fail], o, 1))
    return af_err_set(err, AF_ENOMEM, "out of memory");
  char replay[6000];
  check_replay(replay, sizeof replay, CHECK_REPLAY_CHECK, bc->file, spec,
               &res->sched[res->first_fail], o);
  oc.replay = replay;
  int is_new = 0, status = 0;
  int rc = store_record(db, run_id, &oc, &is_new, &status, err);
  *nnew += is_new;
  check_record_free(&r);
  return rc;
}
