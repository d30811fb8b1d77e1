/*
 * hb_clock.c: the checker's inner loop, the join of two vector clocks (hb_int.h). A clock has an
 * entry per agent (the threads and the streams of the run: about 150 at 256 ops), of which it
 * stores those up to its extent; every enqueue after a synchronization, every event wait and
 * every region start joins a row over the extents.
 * Where the compiler and the C library can pick a version at load time (GCC's target_clones on
 * x86-64 with glibc), an AVX2 version also exists: an unsigned max of 8 lanes in one
 * instruction, where the x86-64 baseline (SSE2) has none and the compiler builds it from a
 * compare, masks and biases for each 4 lanes.
 */
#include "hb_int.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__GLIBC__)
#define HB__CLONES __attribute__((target_clones("avx2", "default")))
#else
#define HB__CLONES
#endif

HB__CLONES void hb__vmax(uint32_t *restrict dst, const uint32_t *restrict src, int n) {
  for (int i = 0; i < n; i++)
    dst[i] = src[i] > dst[i] ? src[i] : dst[i];
}

HB__CLONES int hb__vmax_changed(uint32_t *restrict dst, const uint32_t *restrict src, int n) {
  uint32_t changed = 0;
  for (int i = 0; i < n; i++) {
    uint32_t d = dst[i], m = src[i] > d ? src[i] : d;
    changed |= m ^ d; /* (one xor and one or for each 8 lanes: cheaper than a compare) */
    dst[i] = m;
  }
  return changed != 0;
}
