/*
 * schedule.c: schedule lists ("lazy,random:4,pct:2@7") and how schedules and backends are
 * written in replay commands.
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

int check_abi(const LowerSpec *spec, const CheckOpts *o) {
  if (o && o->abi > 0)
    return o->abi - 1;
  if (o && o->backend == RT_BACKEND_HIP)
    return RT_ABI_ROCM;
  return lower_is_rocdl(spec) ? RT_ABI_ROCM : RT_ABI_CUDA;
}

const char *check_backend_name(const CheckOpts *o) {
  static const char *const names[RT__BACKEND_COUNT][2] = {
      {"sim", "sim"}, {"cuda", "cuda:raw"}, {"hip", "hip:raw"}};
  return o && o->backend > 0 && o->backend < RT__BACKEND_COUNT ? names[o->backend][!!o->raw_handles]
                                                               : "sim";
}

void check_device_str(const CheckOpts *o, const RtDeviceInfo *d, char *out, size_t n) {
  if (o && o->backend == RT_BACKEND_HIP)
    snprintf(out, n, "%s (%s, %d CUs, %lld MiB, driver %d, built with HIP %d.%d)", d->name, d->arch,
             d->sm_count, (long long)d->mem_mib, d->driver_version, d->cuda_version / 10000000,
             d->cuda_version / 100000 % 100);
  else
    snprintf(out, n, "%s (sm_%d%d, %d SMs, %lld MiB, driver %d.%d, built with CUDA %d.%d)", d->name,
             d->cc_major, d->cc_minor, d->sm_count, (long long)d->mem_mib, d->driver_version / 1000,
             d->driver_version % 1000 / 10, d->cuda_version / 1000, d->cuda_version % 1000 / 10);
}

const char *check_backend_args(const CheckOpts *o) {
  static _Thread_local char buf[96];
  buf[0] = '\0';
  int k = 0;
  if (o && o->backend != RT_BACKEND_SIM) {
    k = snprintf(buf, sizeof buf, " --backend %s", check_backend_name(o));
    if (o->spin > 0)
      k += snprintf(buf + k, sizeof buf - (size_t)k, " --spin %d", o->spin);
  }
  if (o && o->abi > 0 && !(o->backend == RT_BACKEND_HIP && o->abi - 1 == RT_ABI_ROCM))
    snprintf(buf + k, sizeof buf - (size_t)k, " --abi %s", asyncfuzz_rt_abi_name(o->abi - 1));
  return buf;
}

void check_schedule_str(const Schedule *s, char *out, size_t n) {
  snprintf(out, n, "%s@%llu", asyncfuzz_rt_policy_name(s->policy), (unsigned long long)s->seed);
}
