/*
 * lowerings.c: a campaign's lowerings from the command line's specs, and the matrix of
 * configurations among them (campaign.h).
 */
#include "campaign_int.h"

#include "../lower/mlir.h"

#include <stdio.h>
#include <string.h>

const LowerSpec *campaign_spec(const CampaignConfig *c, int low) {
  return low < c->nspecs ? &c->specs[low] : &c->matrix[low - c->nspecs];
}

/* The part of an mlir-opt spec before its build's path ("mlir-opt@async-region"); 0 when the
 * spec names no build. */
static int spec_head(const char *s, char *out, size_t n) {
  const char *colon = strchr(s, ':');
  if (strncmp(s, "mlir-opt", 8) != 0 || colon == NULL)
    return 0;
  snprintf(out, n, "%.*s", (int)(colon - s), s);
  return 1;
}

static int parse(const char *s, const char *pipeline, LowerSpec *out, AfErr *err) {
  int rc = lower_spec_parse(s, out, err);
  if (rc == 0 && pipeline && out->kind == LOWER_MLIR_OPT)
    rc = lower_spec_set_pipeline(out, pipeline, err);
  return rc;
}

int campaign_lowerings(const char *const *lowerings, int nlow, const char *pipeline,
                       const MlirMatrixAxes *axes, int any_axis, CampaignConfig *c,
                       LowerSpec *specs, LowerSpec **matrix, char *notes, size_t nn, AfErr *err) {
  char head[256], other[256], builds[8192] = "";
  const char *names[CAMPAIGN_MAX_LOWERINGS];
  int mlow = -1, nl = 0;
  *matrix = NULL;
  notes[0] = '\0';
  for (int i = 0; i < nlow; i++) {
    int grouped = 0;
    if (spec_head(lowerings[i], head, sizeof head))
      for (int j = 0; j < nlow; j++)
        grouped |=
            j != i && spec_head(lowerings[j], other, sizeof other) && strcmp(head, other) == 0;
    if (strcmp(lowerings[i], "mlir-opt") == 0 || grouped) {
      if (mlow >= 0 &&
          !(grouped && spec_head(names[mlow], other, sizeof other) && strcmp(head, other) == 0))
        return af_err_set(err, AF_EUSAGE,
                          "one matrix per campaign: %s and %s both make one (name its "
                          "configurations with --matrix)",
                          names[mlow], lowerings[i]);
      if (grouped) {
        size_t len = strlen(builds);
        snprintf(builds + len, sizeof builds - len, "%s%s", len ? "," : "",
                 strchr(lowerings[i], ':') + 1);
      }
      if (mlow >= 0)
        continue; /* the matrix's lowering is there already */
      mlow = nl;
    }
    if (nl == CAMPAIGN_MAX_LOWERINGS)
      return af_err_set(err, AF_EUSAGE, "at most %d lowerings", CAMPAIGN_MAX_LOWERINGS);
    names[nl] = lowerings[i];
    int rc = parse(lowerings[i], pipeline, &specs[nl], err);
    if (rc)
      return rc;
    nl++;
  }
  c->specs = specs;
  c->nspecs = nl;
  c->matrix_low = mlow;
  c->matrix = NULL;
  c->nmatrix = 0;
  if (mlow < 0)
    return any_axis ? af_err_set(err, AF_EUSAGE,
                                 "--matrix chooses the configurations of the plain mlir-opt "
                                 "lowering: add --lowering mlir-opt")
                    : 0;
  MlirMatrixAxes ax = *axes;
  LowerSpec *rep = &specs[mlow];
  char pl[32], jit[16];
  if (builds[0]) { /* one spec, several builds: its own pipeline, target and level */
    if (any_axis)
      return af_err_set(err, AF_EUSAGE,
                        "--matrix goes with the plain mlir-opt lowering, not with builds named "
                        "by repeated --lowering options");
    snprintf(pl, sizeof pl, "%s", rep->variant);
    snprintf(jit, sizeof jit, rep->jit_opt < 0 ? "Odefault" : "O%d", rep->jit_opt);
    ax.builds = builds;
    ax.pipelines = pipeline ? NULL : pl;
    ax.targets = rep->target;
    ax.jit = jit;
  }
  int n, rc = mlir_matrix(&ax, matrix, &n, notes, nn, err);
  if (rc)
    return rc;
  c->matrix = *matrix;
  c->nmatrix = n;
  *rep = (*matrix)[0]; /* the matrix's lowering, named as its signatures are */
  snprintf(rep->name, sizeof rep->name, "%s", rep->family);
  return 0;
}

/* Per form of the types and launches (gen.h GEN_FORM_MAP) the cases held it: the most executed
 * share of a configuration of each LLVM release, so that a form no configuration of a release
 * runs shows (the finding that stops it is among the run's). */
static void format_forms(const CampaignConfig *c, const CampaignResult *r, AfBuf *out) {
  int majors[8], nm = 0;
  for (int i = 0; i < c->nmatrix; i++) {
    int seen = 0;
    for (int m = 0; m < nm; m++)
      seen |= majors[m] == c->matrix[i].major;
    if (!seen && nm < 8)
      majors[nm++] = c->matrix[i].major;
  }
  int head = 0;
  for (int f = 0; f < GEN_FORM__COUNT; f++) {
    long n = 0;
    for (int i = 0; i < c->nmatrix; i++)
      n += r->conf[i].forms[f];
    if (n == 0)
      continue;
    if (!head++)
      af_buf_puts(out, "forms of types and launches: cases that hold one; the most executed share "
                       "of a configuration\n  of each LLVM release:\n");
    af_buf_printf(out, "  %-13s %6ld", gen_form_name(f), n);
    for (int m = 0; m < nm; m++) {
      double best = -1;
      for (int i = 0; i < c->nmatrix; i++)
        if (c->matrix[i].major == majors[m] && r->conf[i].forms[f] > 0) {
          double s = (double)r->conf[i].forms_executed[f] / (double)r->conf[i].forms[f];
          best = s > best ? s : best;
        }
      if (best >= 0)
        af_buf_printf(out, "   LLVM %d: %5.1f%%", majors[m], 100.0 * best);
      else
        af_buf_printf(out, "   LLVM %d:   none", majors[m]);
    }
    af_buf_puts(out, "\n");
  }
}

void campaign_format_matrix(const CampaignConfig *c, const CampaignResult *r, AfBuf *out) {
  if (c->nmatrix == 0)
    return;
  af_buf_printf(out, "configurations of %s: %d, cases each (executed, failing):\n",
                c->specs[c->matrix_low].name, c->nmatrix);
  for (int i = 0; i < c->nmatrix; i++) {
    char axes[200];
    mlir_config_axes(&c->matrix[i], axes, sizeof axes);
    long n = r->conf[i].cases;
    af_buf_printf(out, "  %-44s %7ld (%ld, %ld)  executed %5.1f%%  clean %5.1f%%\n", axes, n,
                  r->conf[i].executed, r->conf[i].failures,
                  n > 0 ? 100.0 * (double)r->conf[i].executed / (double)n : 0.0,
                  n > 0 ? 100.0 * (double)(n - r->conf[i].failures) / (double)n : 0.0);
  }
  format_forms(c, r, out);
  char line[300];
  snprintf(line, sizeof line,
           "matrix: %ld new finding(s) checked on every configuration, %ld of them not on all "
           "(asyncfuzz db show ID; db list --regressions / --fixed)",
           r->st.matrix_checked, r->st.matrix_differ);
  af_buf_wrap(out, line, 0, 2, 100);
  af_buf_puts(out, "\n");
}
