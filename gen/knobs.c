/*
 * knobs.c: the generator's knobs (GEN_KNOB_MAP, and the op mix of GEN_OP_MAP): their table,
 * defaults and command-line form, and the variation swarm testing draws around them per case.
 */
#include "gen.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

static const GenKnob knobs[GEN_KNOB_COUNT] = {
#define GEN__KNOB_ROW(field, opt, arg, lo, hi, def, always, help)                                  \
  {#field, opt, arg, lo, hi, def, always, help, offsetof(GenConfig, field)},
    GEN_KNOB_MAP(GEN__KNOB_ROW)
#undef GEN__KNOB_ROW
};

const GenKnob *gen_knob(int i) {
  return i >= 0 && i < GEN_KNOB_COUNT ? &knobs[i] : NULL;
}

int *gen_knob_field(GenConfig *c, const GenKnob *k) {
  return (int *)((char *)c + k->off);
}

int gen_knob_value(const GenConfig *c, const GenKnob *k) {
  return *(const int *)((const char *)c + k->off);
}

void gen_config_default(GenConfig *c) {
  memset(c, 0, sizeof *c);
  for (int i = 0; i < GEN_KNOB_COUNT; i++)
    *gen_knob_field(c, &knobs[i]) = knobs[i].def;
  static const int weights[GEN_OP__COUNT] = {
#define GEN__OP_WEIGHT(id, lc, name, mlir, weight, flags) weight,
      GEN_OP_MAP(GEN__OP_WEIGHT)
#undef GEN__OP_WEIGHT
  };
  memcpy(c->w, weights, sizeof c->w);
}

void gen_config_args(const GenConfig *c, char *out, size_t n) {
  size_t len = 0;
  out[0] = '\0';
  for (int i = 0; i < GEN_KNOB_COUNT + GEN_MIX_COUNT && len < n; i++) {
    int w;
    if (i < GEN_KNOB_COUNT)
      w = snprintf(out + len, n - len, "%s%s %d", i ? " " : "", knobs[i].option,
                   gen_knob_value(c, &knobs[i]));
    else
      w = snprintf(out + len, n - len, "%s%d", i == GEN_KNOB_COUNT ? " --mix " : ",",
                   c->w[i - GEN_KNOB_COUNT]);
    len += w > 0 ? (size_t)w : 0;
  }
  for (int i = 0; i < gen_avoid_count(&c->avoid) && len < n; i++) {
    char t[96];
    gen_avoid_text(&c->avoid, i, t, sizeof t);
    int w = snprintf(out + len, n - len, " --avoid %s%s%s", strchr(t, ' ') ? "'" : "", t,
                     strchr(t, ' ') ? "'" : "");
    len += w > 0 ? (size_t)w : 0;
  }
}

void gen_config_widen(const GenConfig *base, GenConfig *out) {
  *out = *base;
  out->ops = base->ops * 2 < 256 ? base->ops * 2 : base->ops > 256 ? base->ops : 256;
  out->max_nesting = base->max_nesting < 4 ? 4 : base->max_nesting;
  out->max_deps = GEN_MAX_DEPS;
  out->buffers = base->buffers * 2 < 200 ? base->buffers * 2 : 200;
  out->host_bufs = base->host_bufs * 2 < 32 ? base->host_bufs * 2 : 32;
  int *pct[] = {&out->region_pct, &out->capture_pct, &out->stream_pct,    &out->block_pct,
                &out->view_pct,   &out->typed_pct,   &out->extra_wait_pct};
  for (size_t i = 0; i < sizeof pct / sizeof pct[0]; i++)
    *pct[i] = *pct[i] * 2 < 100 ? *pct[i] * 2 : 100;
}

/* Swarm testing: each case gets its own knobs, drawn from seed around the base config, so
 * a campaign also explores cases that leave whole op kinds or features out (a feature that
 * trips the lowering on most cases would otherwise hide everything behind it). */
void gen_config_swarm(const GenConfig *base, uint64_t seed, GenConfig *out) {
  AfRng r;
  af_rng_seed(&r, af_mix64(seed, 0x5377a2d));
  gen_config_swarm_rng(base, &r, out);
}

void gen_config_swarm_rng(const GenConfig *base, AfRng *rng, GenConfig *out) {
#define r (*rng)
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
  for (int kind = 0; kind < GEN_OP__COUNT; kind++) /* a kind left out of the mix */
    if ((gen_op_flags(kind) & GEN_K_SWARM) && af_rng_chance(&r, 33))
      out->w[kind] = 0;
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
  if (base->wide_types_pct > 0)
    out->wide_types_pct = af_rng_chance(&r, 33) ? 0 : base->wide_types_pct;
#undef r
}
