/*
 * schedule.c: schedule lists ("lazy,random:4,pct:2@7") and how a schedule is written in replay
 * commands.
 */
#include "check_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int check_parse_schedules(const char *spec, uint64_t base_seed, Schedule *out, int max, int *n,
                          AfErr *err) {
  *n = 0;
  char buf[512];
  if (strlen(spec) >= sizeof buf)
    return af_err_set(err, AF_EUSAGE, "schedule list too long");
  snprintf(buf, sizeof buf, "%s", spec);
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    char *at = strchr(tok, '@');
    char *colon = strchr(tok, ':');
    uint64_t seed = 0;
    int has_seed = 0;
    long count = 1;
    if (at) {
      *at = '\0';
      char *end;
      seed = strtoull(at + 1, &end, 0);
      if (*end || end == at + 1)
        return af_err_set(err, AF_EUSAGE, "bad schedule seed in \"%s\"", tok);
      has_seed = 1;
    }
    if (colon) {
      *colon = '\0';
      char *end;
      count = strtol(colon + 1, &end, 10);
      if (*end || count < 1 || count > CHECK_MAX_SCHED)
        return af_err_set(err, AF_EUSAGE, "bad schedule count in \"%s\" (1..%d)", tok,
                          CHECK_MAX_SCHED);
    }
    int pol = asyncfuzz_rt_policy_parse(tok);
    if (pol < 0)
      return af_err_set(err, AF_EUSAGE,
                        "unknown schedule policy \"%s\" (eager, lazy, random, pct; e.g. "
                        "lazy,random:4,pct:2@7)",
                        tok);
    for (long k = 0; k < count; k++) {
      if (*n >= max)
        return af_err_set(err, AF_EUSAGE, "too many schedules (at most %d)", max);
      out[*n].policy = pol;
      out[*n].seed = has_seed ? seed + (uint64_t)k : af_mix64(base_seed, (uint64_t)(*n + 1));
      (*n)++;
    }
  }
  if (*n == 0)
    return af_err_set(err, AF_EUSAGE, "no schedules given");
  return 0;
}

void check_schedule_str(const Schedule *s, char *out, size_t n) {
  snprintf(out, n, "%s@%llu", asyncfuzz_rt_policy_name(s->policy), (unsigned long long)s->seed);
}
