/*
 * kernels.c: C references of the sentinel kernels. These formulas are the specification the
 * MLIR (gen/render.c) and CUDA versions must match element for element.
 */
#include "kernels.h"

#include <string.h>

static const KernelInfo kinfo[KERNEL__IDS] = {
    [KERNEL_FILL] = {"af_fill", 1, {KERNEL_WRITE}},
    [KERNEL_TRANSFORM] = {"af_transform", 2, {KERNEL_WRITE, KERNEL_READ}},
    [KERNEL_COMBINE] = {"af_combine", 3, {KERNEL_WRITE, KERNEL_READ, KERNEL_READ}},
    [KERNEL__COUNT + KERNEL_FILL] = {"af_fill_v", 1, {KERNEL_WRITE}},
    [KERNEL__COUNT + KERNEL_TRANSFORM] = {"af_transform_v", 2, {KERNEL_WRITE, KERNEL_READ}},
    [KERNEL__COUNT +
        KERNEL_COMBINE] = {"af_combine_v", 3, {KERNEL_WRITE, KERNEL_READ, KERNEL_READ}},
};

const KernelInfo *kernel_info(int id) {
  if (id < 0 || id >= KERNEL__IDS)
    return NULL;
  return &kinfo[id];
}

int kernel_lookup(const char *name) {
  for (int i = 0; i < KERNEL__IDS; i++)
    if (strcmp(kinfo[i].name, name) == 0)
      return i;
  return -1;
}

void kernel_ref(int id, int32_t *dst, const int32_t *const *src, int64_t n, int32_t v) {
  kernel_ref_strided(id, dst, src, NULL, n, v);
}

void kernel_ref_strided(int id, int32_t *dst, const int32_t *const *src, const int64_t *stride,
                        int64_t n, int32_t v) {
  uint32_t uv = (uint32_t)v;
  int64_t sd = stride ? stride[0] : 1, sa = stride ? stride[1] : 1, sb = stride ? stride[2] : 1;
  for (int64_t i = 0; i < n; i++) {
    uint32_t r;
    switch (KERNEL_BASE(id)) {
    case KERNEL_FILL: /* dst[i] = v * 7 + i */
      r = uv * 7u + (uint32_t)i;
      break;
    case KERNEL_TRANSFORM: /* dst[i] = src[i] * 3 + v */
      r = (uint32_t)src[0][i * sa] * 3u + uv;
      break;
    case KERNEL_COMBINE: /* dst[i] = a[i] + b[i] * 5 + v */
      r = (uint32_t)src[0][i * sa] + (uint32_t)src[1][i * sb] * 5u + uv;
      break;
    default:
      r = 0;
      break;
    }
    dst[i * sd] = (int32_t)r;
  }
}

int32_t kernel_host_init_value(int32_t init, int64_t i) {
  return (int32_t)((uint32_t)init * 1000u + (uint32_t)i);
}
