/*
 * replay.c: the one writer of replay commands. A stored occurrence's replay, a campaign's
 * info.txt, check's report and a reproducer's header all build their command lines here, so a
 * replay command has one form wherever a triager reads it.
 */
#include "check_int.h"

#include <stdio.h>

char *check_replay(char *out, size_t n, CheckReplay form, const char *path, const LowerSpec *spec,
                   const Schedule *s, const CheckOpts *o) {
  const char *ba = check_backend_args(o);
  if (form == CHECK_REPLAY_TRACE) {
    snprintf(out, n, "asyncfuzz run %s --lowering %s --policy %s --sched-seed %llu --trace -%s",
             path, spec->arg, asyncfuzz_rt_policy_name(s->policy), (unsigned long long)s->seed, ba);
  } else {
    char ss[64];
    check_schedule_str(s, ss, sizeof ss);
    snprintf(out, n, "asyncfuzz check %s --lowering %s --schedules %s%s", path, spec->arg, ss, ba);
  }
  return out;
}
