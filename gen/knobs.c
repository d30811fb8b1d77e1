/*
 * knobs.c: the generator's knobs: their defaults, and the variation swarm testing draws
 * around them per case.
 */
#include "gen.h"

#include <string.h>

void gen_config_default(GenConfig *c) {
  memset(c, 0, sizeof *c);
  c->ops = 32;
  c->buffers = 4;
  c->host_bufs = 2;
  c->elems = 16;
  c->max_deps = 3;
  c->extra_dep_pct = 15;
  c->region_pct = 8;
  c->max_nesting = 2;
  c->spin = 64;
  c->host_shared_pct = 10;
  c->sync_pct = 20;
  c->extra_wait_pct = 8;
  c->capture_pct = 30;
  c->stream_pct = 20;
  c->block_pct = 6;
  c->typed_pct = 25;
  c->view_pct = 15;
  c->w_launch = 30;
  c->w_memcpy = 20;
  c->w_memset = 8;
  c->w_alloc = 8;
  c->w_dealloc = 5;
  c->w_wait_async = 8;
  c->w_host_wait = 6;
  c->w_observe = 6;
}

/* Swarm testing: each case gets its own knobs, drawn from seed around the base config, so
 * a campaign also explores cases that leave whole op kinds or features out (a feature that
 * trips the lowering on most cases would otherwise hide everything behind it). */
void gen_config_swarm(const GenConfig *base, uint64_t seed, GenConfig *out) {
  AfRng r;
  af_rng_seed(&r, af_mix64(seed, 0x5377a2d));
  *out = *base;
  int lo = base->ops / 4 > 4 ? base->ops / 4 : 4;
  if (lo > base->ops)
    lo = base->ops;
  out->ops = lo + (int)af_rng_below(&r, (uint32_t)(base->ops - lo + 1));
  if (base->max_deps > 2)
    out->max_deps = 2 + (int)af_rng_below(&r, (uint32_t)(base->max_deps - 1));
  out->extra_dep_pct = af_rng_chance(&r, 50) ? 0 : base->extra_dep_pct;
  uint32_t k = af_rng_below(&r, 3);
  out->region_pct = k == 0 ? 0 : k == 1 ? base->region_pct : 2 * base->region_pct;
  if (out->region_pct > 100)
    out->region_pct = 100;
  k = af_rng_below(&r, 3);
  out->sync_pct = k == 0 ? 0 : k == 1 ? base->sync_pct : 50;
  out->host_shared_pct = af_rng_chance(&r, 50) ? 0 : base->host_shared_pct;
  k = af_rng_below(&r, 3);
  out->root_wait_pct = k == 0 ? base->root_wait_pct : k == 1 ? 50 : 100;
  int *w[] = {&out->w_memcpy,  &out->w_memset,     &out->w_alloc,
              &out->w_dealloc, &out->w_wait_async, &out->w_host_wait};
  for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
    if (af_rng_chance(&r, 33))
      *w[i] = 0;
  if (base->extra_wait_pct > 0) /* last, and only when on: earlier draws stay as they were */
    out->extra_wait_pct = af_rng_chance(&r, 33) ? 0 : base->extra_wait_pct;
  if (base->capture_pct > 0)
    out->capture_pct = af_rng_chance(&r, 33) ? 0 : base->capture_pct;
  if (base->stream_pct > 0)
    out->stream_pct = af_rng_chance(&r, 33) ? 0 : base->stream_pct;
  if (base->block_pct > 0)
    out->block_pct = af_rng_chance(&r, 33) ? 0 : base->block_pct;
  if (base->typed_pct > 0)
    out->typed_pct = af_rng_chance(&r, 33) ? 0 : base->typed_pct;
  if (base->view_pct > 0)
    out->view_pct = af_rng_chance(&r, 33) ? 0 : base->view_pct;
}
