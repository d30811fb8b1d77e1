/*
 * spec.c: lowering specs: the builtin lowering's faults, parsing --lowering (mlir-opt specs
 * are mlir_spec.c's), the names and versions results record.
 */
#include "lower.h"
#include "mlir.h"

#include <stdio.h>
#include <string.h>

static const char *const fault_names[] = {
#define LOWER__FNAME(id, name, trigger, desc) name,
    LOWER_FAULT_MAP(LOWER__FNAME)
#undef LOWER__FNAME
};
static const char *const fault_descs[] = {
#define LOWER__FDESC(id, name, trigger, desc) desc,
    LOWER_FAULT_MAP(LOWER__FDESC)
#undef LOWER__FDESC
};
static const char *const fault_triggers[] = {
#define LOWER__FTRIG(id, name, trigger, desc) trigger,
    LOWER_FAULT_MAP(LOWER__FTRIG)
#undef LOWER__FTRIG
};

const char *lower_fault_name(int f) {
  return f >= 0 && f < LOWER_FAULT__COUNT ? fault_names[f] : "?";
}
const char *lower_fault_desc(int f) {
  return f >= 0 && f < LOWER_FAULT__COUNT ? fault_descs[f] : "?";
}
const char *lower_fault_trigger(int f) {
  return f >= 0 && f < LOWER_FAULT__COUNT ? fault_triggers[f] : "";
}
void lower_fault_list(FILE *f) {
  fprintf(f, "builtin fault switches (--lowering builtin:fault=NAME[,NAME]):\n");
  for (int k = 0; k < LOWER_FAULT__COUNT; k++)
    fprintf(f, "  %-22s %s%s%s\n", fault_names[k], fault_descs[k],
            fault_triggers[k][0] ? "; its trigger: " : "", fault_triggers[k]);
}
int lower_fault_lookup(const char *name) {
  for (int f = 0; f < LOWER_FAULT__COUNT; f++)
    if (strcmp(name, fault_names[f]) == 0)
      return f;
  return -1;
}

const char *lower_version(const LowerSpec *spec) {
  if (spec->kind == LOWER_MLIR_OPT)
    return spec->version;
  return "asyncfuzz-builtin-1";
}

const char *lower_family(const LowerSpec *spec) {
  return spec->family[0] ? spec->family : spec->name;
}

/* A spec into out; tools: an mlir-opt spec's tools are looked for and asked their version. */
static int spec_parse(const char *s, LowerSpec *out, int tools, AfErr *err) {
  memset(out, 0, sizeof *out);
  const char *m = strncmp(s, "matrix:", 7) == 0 ? s + 7 : s;
  if (strncmp(m, "mlir-opt", 8) == 0 && (m[8] == '\0' || strchr("@:+/", m[8])))
    return tools ? lower_mlir_spec_parse(s, out, err) : lower_mlir_spec_syntax(s, out, err);
  if (strcmp(s, "builtin") == 0) {
    out->kind = LOWER_BUILTIN;
    snprintf(out->name, sizeof out->name, "builtin");
    snprintf(out->arg, sizeof out->arg, "builtin");
    return 0;
  }
  if (strncmp(s, "builtin:fault=", 14) != 0) {
    AfBuf b;
    af_buf_init(&b);
    for (int f = 0; f < LOWER_FAULT__COUNT; f++)
      af_buf_printf(&b, "%s%s", f ? ", " : "", fault_names[f]);
    int rc = af_err_set(err, AF_EUSAGE,
                        "unknown lowering \"%s\": use builtin, builtin:fault=NAME[,NAME] "
                        "(faults: %s) or mlir-opt[@VARIANT][/TARGET][+O<n>|+Odefault][:PATH]",
                        s, b.p ? b.p : "");
    af_buf_free(&b);
    return rc;
  }
  out->kind = LOWER_BUILTIN;
  char list[256];
  snprintf(list, sizeof list, "%s", s + 14);
  char *save = NULL;
  for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    int f = lower_fault_lookup(tok);
    if (f < 0)
      return af_err_set(err, AF_EUSAGE, "unknown fault \"%s\" (see `asyncfuzz lower --help`)", tok);
    out->faults |= 1u << f;
  }
  AfBuf b;
  af_buf_init(&b);
  af_buf_puts(&b, "builtin:fault=");
  int first = 1;
  for (int f = 0; f < LOWER_FAULT__COUNT; f++)
    if (out->faults & (1u << f)) {
      af_buf_printf(&b, "%s%s", first ? "" : ",", fault_names[f]);
      first = 0;
    }
  int oom = b.oom || b.p == NULL;
  if (!oom) {
    snprintf(out->name, sizeof out->name, "%s", b.p);
    snprintf(out->arg, sizeof out->arg, "%s", b.p);
  }
  af_buf_free(&b);
  return oom ? af_err_set(err, AF_ENOMEM, "out of memory") : 0;
}

int lower_spec_parse(const char *s, LowerSpec *out, AfErr *err) {
  return spec_parse(s, out, 1, err);
}

int lower_spec_syntax(const char *s, LowerSpec *out, AfErr *err) {
  return spec_parse(s, out, 0, err);
}
