/*
 * state.c: the campaign's time and its resume state: --until, DIR/campaign-state.json (the
 * next seed of this shard, the cases and seconds done) and --resume.
 */
#define _GNU_SOURCE
#include "campaign_int.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* --until: HH:MM (the next such local time) or YYYY-MM-DDTHH:MM. Seconds from now. */
int campaign_parse_until(const char *v, long *seconds) {
  time_t now = time(NULL);
  struct tm tm;
  localtime_r(&now, &tm);
  int y, mo, d, h, mi;
  if (sscanf(v, "%d-%d-%dT%d:%d", &y, &mo, &d, &h, &mi) == 5) {
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
  } else if (sscanf(v, "%d:%d", &h, &mi) != 2) {
    return -1;
  }
  if (h < 0 || h > 23 || mi < 0 || mi > 59)
    return -1;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = 0;
  tm.tm_isdst = -1;
  time_t t = mktime(&tm);
  if (strchr(v, 'T') == NULL && t <= now)
    t += 24 * 3600; /* tomorrow's */
  if (t <= now)
    return -1;
  *seconds = (long)(t - now);
  return 0;
}

uint64_t campaign__nshards(const Campaign *k) {
  return k->c.nshards > 1 ? (uint64_t)k->c.nshards : 1;
}

/* DIR/campaign-state.json: the seed to go on from (every seed of this shard below it has been
 * checked by some worker), the shard, and the cases and seconds done so far (with the earlier
 * runs this one resumed). */
int campaign__write_state(const Campaign *k, int jobs, const Slot *sl, double elapsed) {
  uint64_t min = UINT64_MAX;
  long cases = 0;
  for (int w = 0; w < jobs; w++) {
    if (sl[w].next < min)
      min = sl[w].next;
    cases += sl[w].cases;
  }
  char path[4096], tmp[4200];
  snprintf(path, sizeof path, "%s/campaign-state.json", k->c.out);
  FILE *f = campaign__open_atomic(path, tmp);
  if (f == NULL)
    return -1;
  fprintf(f,
          "{\"next_seed\": %llu, \"shard\": %d, \"shards\": %d, \"cases\": %ld, "
          "\"seconds\": %.1f}\n",
          (unsigned long long)(k->c.seed + min * (uint64_t)jobs * campaign__nshards(k)),
          k->c.nshards > 1 ? k->c.shard : 0, (int)campaign__nshards(k), k->prior_cases + cases,
          k->prior_seconds + elapsed);
  return campaign__commit_file(f, tmp, path);
}

/* The state written by write_state (an older one has only next_seed: shard 0 of 1, nothing
 * counted). 0, or -1 when there is none or it cannot be read. */
static int read_state(const char *out, uint64_t *seed, int *shard, int *shards, long *cases,
                      double *seconds) {
  char path[4096];
  snprintf(path, sizeof path, "%s/campaign-state.json", out);
  char *text = NULL;
  AfErr err = {0};
  if (af_read_file(path, &text, NULL, &err) != 0)
    return -1;
  /* next_seed may pass 2^53, where a JSON number (a double) loses digits: read from the text */
  const char *ns = strstr(text, "\"next_seed\":");
  char *end = NULL;
  if (ns)
    *seed = strtoull(ns + 12, &end, 10);
  int ok = ns != NULL && end != ns + 12;
  cJSON *j = cJSON_Parse(text);
  af_free(text);
  if (!ok || j == NULL) {
    cJSON_Delete(j);
    return -1;
  }
  const cJSON *v;
  *shard = cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(j, "shard")) ? v->valueint : 0;
  *shards = cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(j, "shards")) ? v->valueint : 1;
  *cases =
      cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(j, "cases")) ? (long)v->valuedouble : 0;
  *seconds =
      cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(j, "seconds")) ? v->valuedouble : 0;
  cJSON_Delete(j);
  return 0;
}

/* --resume: the state's seed, the shard checked against the state's, and what is left of the
 * campaign's cases or seconds (k->nothing_left when none). */
int campaign__resume_state(Campaign *k, AfErr *err) {
  int shard, shards;
  if (read_state(k->c.out, &k->c.seed, &shard, &shards, &k->prior_cases, &k->prior_seconds))
    return af_err_set(err, AF_EUSAGE,
                      "--resume: no campaign to resume in %s (campaign-state.json missing or "
                      "unreadable)",
                      k->c.out);
  int mine = k->c.nshards > 1 ? k->c.shard : 0;
  if (shards != (int)campaign__nshards(k) || shard != mine)
    return af_err_set(err, AF_EPARSE,
                      "--resume: the campaign in %s is shard %d/%d, not %d/%d: its seeds would "
                      "overlap another shard's (resume it with --shard %d/%d, or start anew in "
                      "another directory)",
                      k->c.out, shard, shards, mine, (int)campaign__nshards(k), shard, shards);
  if (k->c.max_cases > 0) {
    k->c.max_cases -= k->prior_cases;
    k->nothing_left = k->c.max_cases <= 0;
  } else if (!k->c.until) {
    k->c.seconds -= (long)k->prior_seconds;
    k->nothing_left = k->c.seconds <= 0;
  }
  return 0;
}

int campaign_nothing_left(const Campaign *k) {
  return k->nothing_left;
}
