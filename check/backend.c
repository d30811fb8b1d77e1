/*
 * backend.c: how a case runs on a backend (RtBackendInfo, runtime/asyncfuzz_rt.h): the ABI flavour
 * its runs follow, what it refuses to run, and how it is written in what runs record and in
 * replay commands.
 */
#include "check_int.h"

#include <stdio.h>
#include <string.h>

/* The backend of o (the sim without options). */
static const RtBackendInfo *backend_of(const CheckOpts *o) {
  const RtBackendInfo *bi = asyncfuzz_rt_backend_info(o ? o->backend : RT_BACKEND_SIM);
  return bi ? bi : asyncfuzz_rt_backend_info(RT_BACKEND_SIM);
}

int check_abi(const LowerSpec *spec, const CheckOpts *o) {
  if (o && o->abi > 0)
    return o->abi - 1;
  if (backend_of(o)->abi >= 0)
    return backend_of(o)->abi;
  return lower_is_rocdl(spec) ? RT_ABI_ROCM : RT_ABI_CUDA;
}

/* Whether the comma-separated list has item. */
static int listed(const char *list, const char *item) {
  size_t n = strlen(item);
  for (const char *p = list; p && *p;) {
    size_t k = strcspn(p, ",");
    if (k == n && strncmp(p, item, n) == 0)
      return 1;
    p += k + (p[k] == ',');
  }
  return 0;
}

int check_runs_on(const LowerSpec *spec, const CheckOpts *o, AfErr *err) {
  const RtBackendInfo *bi = backend_of(o);
  if (spec->kind == LOWER_MLIR_OPT && !listed(bi->targets, spec->target)) {
    char where[128] = "";
    for (int b = 0; b < RT__BACKEND_COUNT; b++)
      if (listed(asyncfuzz_rt_backend_info(b)->targets, spec->target))
        snprintf(where + strlen(where), sizeof where - strlen(where), "%s%s", where[0] ? ", " : "",
                 asyncfuzz_rt_backend_name(b));
    return af_err_set(err, AF_EUSAGE, "%s: %s code does not run on %s (it runs on: %s)", spec->name,
                      spec->target, check_backend_name(o), where);
  }
  if (lower_is_rocdl(spec) && bi->code_object && !spec->code_object)
    return af_err_set(err, AF_EUSAGE,
                      "%s: its kernels are LLVM bitcode, which an AMD GPU does not load: a code "
                      "object needs the ld.lld of the mlir-opt's LLVM (Debian: lld-22 for LLVM 22)",
                      spec->name);
  if (bi->abi >= 0 && check_abi(spec, o) != bi->abi)
    return af_err_set(err, AF_EUSAGE,
                      "the %s backend runs the %s flavour of the runtime ABI only (the other runs "
                      "on the sim)",
                      bi->name, asyncfuzz_rt_abi_name(bi->abi));
  return 0;
}

const char *check_backend_name(const CheckOpts *o) {
  static _Thread_local char name[48];
  const RtBackendInfo *bi = backend_of(o);
  snprintf(name, sizeof name, "%s%s", bi->name, bi->gpu && o->raw_handles ? ":raw" : "");
  return name;
}

void check_device_str(const CheckOpts *o, const RtDeviceInfo *d, char *out, size_t n) {
  backend_of(o)->describe(d, out, n);
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
  /* --abi when it is not what the backend runs anyway */
  if (o && o->abi > 0 && o->abi - 1 != backend_of(o)->abi)
    snprintf(buf + k, sizeof buf - (size_t)k, " --abi %s", asyncfuzz_rt_abi_name(o->abi - 1));
  return buf;
}
