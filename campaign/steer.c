/*
 * steer.c: steering generation away from bugs already known (campaign_int.h). A finding that
 * is a lowering's verdict on an op shape (mlir-opt rejected the case, or left an op of that
 * shape unconverted) stops every case with an op of that shape before it runs, and so hides
 * whatever else the case would find. The shape is taken from the finding itself (its root
 * cause, as the lowering verdict names it), never from a list of known upstream bugs; the
 * campaign then draws such a case again from another seed.
 */
#include "campaign_int.h"

#include <stdio.h>
#include <string.h>

void campaign__avoid(Campaign *k, const char *signature, const char *cls, const char *why) {
  if (!oracle_verdict_names_shape(oracle_verdict_lookup(cls)))
    return;
  /* LOWERING|CLASS|SHAPE[|MESSAGE] */
  const char *p1 = strchr(signature, '|');
  const char *p2 = p1 ? strchr(p1 + 1, '|') : NULL;
  if (p2 == NULL)
    return;
  int ours = 0; /* a finding of another lowering says nothing of these */
  for (int i = 0; i < k->c.nspecs && !ours; i++)
    ours = strlen(k->c.specs[i].name) == (size_t)(p1 - signature) &&
           strncmp(k->c.specs[i].name, signature, (size_t)(p1 - signature)) == 0;
  GenShape sh;
  if (!ours || gen_shape_parse(p2 + 1, &sh) != 0)
    return;
  int n = k->st.navoid;
  for (int i = 0; i < n; i++)
    if (k->avoid[i].kind == sh.kind && k->avoid[i].async == sh.async && k->avoid[i].deps == sh.deps)
      return;
  if (n >= (int)(sizeof k->avoid / sizeof k->avoid[0]))
    return;
  k->avoid[n] = sh;
  snprintf(k->avoid_why[n], sizeof k->avoid_why[n], "%.*s (%s)", (int)strcspn(p2 + 1, "|"), p2 + 1,
           why);
  k->st.navoid = n + 1;
}

void campaign_avoiding(const Campaign *k, char *out, size_t n) {
  size_t len = 0;
  out[0] = '\0';
  for (int i = 0; i < k->st.navoid && len < n; i++) {
    int w = snprintf(out + len, n - len, "%s%s", i ? ", " : "", k->avoid_why[i]);
    len += w > 0 ? (size_t)w : 0;
  }
}
