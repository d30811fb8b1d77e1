/*
 * files.c: what the campaign's files share: problems to the hooks, atomic files, the clock.
 */
#include "campaign_int.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void campaign__problem(const Campaign *k, const char *fmt, ...) {
  if (k->hooks == NULL || k->hooks->problem == NULL)
    return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  k->hooks->problem(msg, k->hooks->ctx);
}

double campaign__now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int campaign__mkdir_p(const char *path) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s", path);
  for (char *p = tmp + 1; *p; p++) {
    if (*p == '/') {
      *p = '\0';
      if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
        return -1;
      *p = '/';
    }
  }
  if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
    return -1;
  return 0;
}

FILE *campaign__open_atomic(const char *path, char tmp[4200]) {
  snprintf(tmp, 4200, "%s.tmp%d", path, (int)getpid()); /* workers share DIR */
  return fopen(tmp, "w");
}

int campaign__commit_file(FILE *f, const char *tmp, const char *path) {
  int bad = ferror(f);
  bad |= fclose(f) != 0;
  if (bad || rename(tmp, path) != 0) {
    remove(tmp);
    return -1;
  }
  return 0;
}

int campaign__stopped(const Campaign *k) {
  return k->c.stop && *k->c.stop;
}

void campaign__timeline(Campaign *k) {
  int w = TIMELINE_FIELDS + 3 * k->c.nmatrix;
  if (k->point_every < 1)
    k->point_every = 1;
  if (k->point_skip++ % k->point_every != 0)
    return;
  if (k->npoints >= TIMELINE_MAX) { /* every other point goes, and later ones are half as many */
    for (int i = 1; i < k->npoints / 2; i++)
      memcpy(k->timeline + (size_t)i * (size_t)w, k->timeline + (size_t)(2 * i) * (size_t)w,
             sizeof(long) * (size_t)w);
    k->npoints /= 2;
    k->point_every *= 2;
  }
  if (af_grow((void **)&k->timeline, &k->cappoints, (k->npoints + 1) * w, sizeof(long)))
    return; /* (out of memory: the timeline stops; nothing else depends on it) */
  long *p = k->timeline + (size_t)k->npoints++ * (size_t)w;
  p[0] = (long)((campaign__now() - k->t0) * 10.0 + 0.5); /* (tenths of a second) */
  p[1] = k->st.cases;
  p[2] = k->st.executed;
  p[3] = k->st.failures;
  p[4] = k->st.new_findings;
  p[5] = k->nsigs;
  p[6] = af_feat_count(-1);
  for (int c = 0; c < k->c.nmatrix; c++) {
    p[TIMELINE_FIELDS + 3 * c] = k->conf[c].cases;
    p[TIMELINE_FIELDS + 3 * c + 1] = k->conf[c].executed;
    p[TIMELINE_FIELDS + 3 * c + 2] = k->conf[c].failures;
  }
}

void campaign__conf_add(CampaignConfCount *to, const CampaignConfCount *from) {
  to->cases += from->cases;
  to->executed += from->executed;
  to->failures += from->failures;
  to->base_cases += from->base_cases;
  for (int i = 0; i < GEN_GPU_MIX__COUNT; i++) {
    to->mix[i] += from->mix[i];
    to->base_mix[i] += from->base_mix[i];
  }
  for (int i = 0; i < GEN_FORM__COUNT; i++) {
    to->forms[i] += from->forms[i];
    to->forms_executed[i] += from->forms_executed[i];
  }
}

void campaign__progress(Campaign *k, int final) {
  k->st.features = af_feat_count(-1);
  k->st.all = k->all;
  if (k->hooks && k->hooks->progress) {
    k->st.elapsed = campaign__now() - k->t0;
    k->st.nspecs = k->c.nspecs;
    k->st.signatures = k->nsigs;
    k->st.nconfigs = k->c.nmatrix;
    k->st.exec_lo = k->st.exec_hi = k->st.clean_lo = k->st.clean_hi = -1;
    for (int i = 0; i < k->c.nmatrix; i++) {
      const CampaignConfCount *cc = &k->conf[i];
      long c = cc->cases;
      if (i == 0 || c < k->st.conf_min)
        k->st.conf_min = c;
      if (i == 0 || c > k->st.conf_max)
        k->st.conf_max = c;
      if (c <= 0)
        continue;
      double ex = 100.0 * (double)cc->executed / (double)c;
      double cl = 100.0 * (double)(c - cc->failures) / (double)c;
      if (k->st.exec_lo < 0 || ex < k->st.exec_lo)
        k->st.exec_lo = ex;
      if (ex > k->st.exec_hi)
        k->st.exec_hi = ex;
      if (k->st.clean_lo < 0 || cl < k->st.clean_lo)
        k->st.clean_lo = cl;
      if (cl > k->st.clean_hi)
        k->st.clean_hi = cl;
    }
    k->hooks->progress(&k->st, final, k->hooks->ctx);
  }
}

const char *campaign_time_name(int i) {
  static const char *const names[] = {
#define CAMPAIGN__TNAME(id, name) name,
      CAMPAIGN_TIME_MAP(CAMPAIGN__TNAME)
#undef CAMPAIGN__TNAME
  };
  return i >= 0 && i < CAMPAIGN_T__COUNT ? names[i] : "?";
}

int campaign__store_progress(Campaign *k, Store *db) {
  int w = TIMELINE_FIELDS + 3 * k->c.nmatrix;
  StoreProgress *p = af_malloc(sizeof(StoreProgress) * (size_t)(k->npoints + 1));
  if (p == NULL) {
    campaign__problem(k, "out of memory storing the run's progress");
    return -1;
  }
  for (int i = 0; i < k->npoints; i++) {
    const long *t = k->timeline + (size_t)i * (size_t)w;
    /* (a parent of workers knows their new findings, not their signatures) */
    p[i] = (StoreProgress){(double)t[0] / 10.0, t[1], t[2], t[3], t[5] >= 0 ? t[5] : t[4]};
  }
  AfErr err = {0};
  int rc = store_progress(db, k->run_id, p, k->npoints, &err);
  af_free(p);
  char json[CAMPAIGN_T__COUNT * 48 + 8]; /* (and where the time went) */
  size_t n = 0;
  for (int i = 0; i < CAMPAIGN_T__COUNT && n < sizeof json; i++)
    n += (size_t)snprintf(json + n, sizeof json - n, "%s\"%s\": %.3f", i ? ", " : "{",
                          campaign_time_name(i), k->st.time[i]);
  if (n < sizeof json)
    snprintf(json + n, sizeof json - n, "}");
  if (rc == 0)
    rc = store_run_time(db, k->run_id, json, &err);
  if (rc) {
    campaign__problem(k, "%s", err.msg);
    return -1;
  }
  return 0;
}
