/*
 * fuzz_case.c: libFuzzer target over case files. Any input must be rejected cleanly or
 * accepted; an accepted (valid) case must pass with the correct builtin lowering under the
 * lazy and random schedules, or the validator, lowering, simulator or oracle disagree about
 * what a valid case means. Built with libFuzzer under clang (-DASYNCFUZZ_FUZZ=ON), and always
 * linked with replay_main.c so ctest replays the seed inputs without libFuzzer.
 */
#include "../check/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 1 << 16)
    return 0;
  char *text = malloc(size + 1);
  if (text == NULL)
    return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  GenCase c;
  AfErr err = {0};
  int rc = gen_case_from_json(&c, text, &err);
  free(text);
  if (rc == 0)
    rc = gen_validate(&c, &err);
  if (rc == 0 && c.nops <= 400) {
    char *json = gen_case_to_json(&c);
    if (json == NULL)
      abort();
    af_free(json);
    LowerSpec spec;
    lower_spec_parse("builtin", &spec, &err);
    Schedule s[2] = {{RT_LAZY, 1}, {RT_RANDOM, 2}};
    CheckResult r;
    if (check_case(&c, &spec, s, 2, NULL, NULL, &r, &err) != 0 || r.first_fail >= 0) {
      fprintf(stderr, "fuzz_case: a valid case fails with the correct lowering: %s\n",
              r.first_fail >= 0 ? r.verdict[r.first_fail].signature : err.msg);
      abort();
    }
  } else if (rc != 0 && err.msg[0] == '\0') {
    fprintf(stderr, "fuzz_case: rejected without a message (rc %d)\n", rc);
    abort();
  }
  gen_case_free(&c);
  return 0;
}
