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

void campaign__progress(Campaign *k, int final) {
  if (k->hooks && k->hooks->progress) {
    k->st.elapsed = campaign__now() - k->t0;
    k->st.nspecs = k->c.nspecs;
    k->st.signatures = k->nsigs;
    k->st.nconfigs = k->c.nmatrix;
    for (int i = 0; i < k->c.nmatrix; i++) {
      long c = k->conf[i].cases;
      if (i == 0 || c < k->st.conf_min)
        k->st.conf_min = c;
      if (i == 0 || c > k->st.conf_max)
        k->st.conf_max = c;
    }
    k->hooks->progress(&k->st, final, k->hooks->ctx);
  }
}
