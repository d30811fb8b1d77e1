/*
 * workers.c: a campaign of --jobs N: N forked workers, each with its share of the seeds and
 * its own database connection, their counters in shared memory (Slot); the parent shows the
 * status line, passes SIGTERM on, writes the resume state and the totals.
 */
#define _GNU_SOURCE
#include "campaign_int.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Worker w of a forked campaign: its share of the cases, its own database connection. Ends
 * the process: 0 (no failing case), 1 (some), 4 (an error), read by workers_wait. */
static void worker(Campaign *k, Slot *slots, int w, int jobs) {
  long max_cases = k->c.max_cases;
  if (max_cases > 0) { /* the workers share the case count */
    max_cases = max_cases / jobs + (w < max_cases % jobs ? 1 : 0);
    if (max_cases == 0)
      _exit(0);
  }
  AfErr err = {0};
  if (k->c.db_path && store_open(k->c.db_path, 0, &k->db, &err)) {
    campaign__problem(k, "worker %d: %s", w, err.msg);
    _exit(4);
  }
  int ex = campaign__loop(k, slots, w, jobs, max_cases, 0);
  for (int i = 0; i < k->nsigs; i++)
    if (!k->sigs[i].f.suppressed)
      campaign__write_info(k, &k->sigs[i]);
  store_close(k->db);
  fflush(NULL);
  _exit(ex != 0 ? 4 : k->st.failures > 0 ? 1 : 0);
}

/* The workers' counters (their slots) as the campaign's. */
static void sum_slots(Campaign *k, const Slot *sl, int jobs) {
  int navoid = k->st.navoid;
  memset(&k->st, 0, sizeof k->st);
  k->st.navoid = navoid;
  k->nsigs = -1;
  for (int i = 0; i < jobs; i++) {
    k->st.cases += sl[i].cases;
    k->st.failures += sl[i].failures;
    k->st.new_findings += sl[i].new_findings;
    k->st.known_hits += sl[i].known_hits;
    k->st.corpus += sl[i].corpus;
    k->st.differ_cases += sl[i].differ;
    k->st.executed += sl[i].executed;
    k->st.avoided += sl[i].avoided;
    k->st.device_errors += sl[i].device_errors;
    k->st.matrix_checked += sl[i].matrix_checked;
    k->st.matrix_differ += sl[i].matrix_differ;
    for (int b = 0; b < CAMPAIGN_T__COUNT; b++)
      k->st.time[b] += sl[i].time[b];
  }
  memset(k->conf, 0, sizeof k->conf);
  memset(&k->all, 0, sizeof k->all);
  for (int i = 0; i < jobs; i++) {
    for (int c = 0; c < k->c.nmatrix; c++)
      campaign__conf_add(&k->conf[c], &sl[i].conf[c]);
    campaign__conf_add(&k->all, &sl[i].all);
  }
  memset(k->executed_per, 0, sizeof k->executed_per);
  for (int i = 0; i < jobs; i++)
    for (int l = 0; l < k->c.nspecs; l++)
      k->executed_per[l] += sl[i].executed_per[l];
}

/* The parent of workers: the status line from their counters, SIGTERM passed on, the resume
 * state, and the totals (per-signature details are in the database and failures/). */
static int workers_wait(Campaign *k, const pid_t *pids, int started, int jobs, Slot *sl,
                        CampaignResult *res) {
  int alive = started, forwarded = 0, failed = started < jobs;
  int status[256] = {0}, reaped[256] = {0};
  k->t0 = campaign__now();
  double next_point = k->t0;
  while (alive > 0) {
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
    if (campaign__stopped(k) &&
        !forwarded) { /* SIGINT reached the workers too; SIGTERM may have not */
      for (int i = 0; i < started; i++)
        if (!reaped[i])
          kill(pids[i], SIGTERM);
      forwarded = 1;
    }
    for (int i = 0; i < started; i++) {
      int st;
      if (!reaped[i] && waitpid(pids[i], &st, WNOHANG) == pids[i]) {
        reaped[i] = 1;
        alive--;
        status[i] = WIFEXITED(st) ? WEXITSTATUS(st) : 4;
      }
    }
    sum_slots(k, sl, jobs);
    if (alive == 0 || campaign__now() >= next_point) { /* (the workers' sums over time) */
      k->point_skip = alive == 0 ? 0 : k->point_skip;
      campaign__timeline(k);
      next_point = campaign__now() + 1.0;
    }
    campaign__progress(k, alive == 0);
    campaign__write_state(k, jobs, sl, campaign__now() - k->t0);
  }
  double el = campaign__now() - k->t0;
  for (int i = 0; i < started; i++)
    failed |= status[i] != 0 && status[i] != 1;
  res->db_findings = -1;
  if (k->c.db_path) {
    Store *db;
    AfErr err = {0};
    if (store_open(k->c.db_path, 0, &db, &err) == 0) {
      store_run_end(db, k->run_id, k->st.cases, k->st.executed, el, &err);
      if (campaign__config_counts(k, db) != 0 || campaign__store_progress(k, db) != 0)
        failed = 1;
      store_run_findings(db, k->run_id, &res->db_findings, &err);
      store_close(db);
    } else {
      campaign__problem(k, "%s", err.msg);
      failed = 1;
    }
  }
  k->nsigs = 0; /* the workers' signatures are in the database and under failures/ */
  if (campaign__write_summary(k, el) != 0) {
    campaign__problem(k, "cannot write %s/summary.json", k->c.out);
    failed = 1;
  }
  k->st.elapsed = el;
  res->workers = started;
  return failed;
}

int campaign__run_workers(Campaign *k, Slot *slots, int jobs, CampaignResult *res) {
  store_close(k->db); /* a connection does not survive fork: each process opens its own */
  k->db = NULL;
  pid_t pids[256];
  int started = 0;
  for (; started < jobs; started++) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
      break;
    if (pid == 0)
      worker(k, slots, started, jobs); /* does not return */
    pids[started] = pid;
  }
  return workers_wait(k, pids, started, jobs, slots, res);
}
