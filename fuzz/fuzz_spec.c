/*
 * fuzz_spec.c: libFuzzer target over the --lowering spec grammar (builtin, builtin:fault=...,
 * mlir-opt[@VARIANT][/TARGET][+O<n>][:PATH], matrix:...) and the --matrix AXIS=V,... grammar:
 * any text is accepted or refused with a message, and an accepted spec names itself so that
 * parsing its name again gives the same spec. No tool is looked for (lower_spec_syntax).
 */
#include "../lower/lower.h"
#include "../lower/mlir.h"
#include "fuzz_stats.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a spec into text (room for n > 512). One whose first byte is 0 mod 8 is the text
 * itself; any other is a sentence the grammar makes, each further byte choosing its next part
 * (a form; then faults and commas, or a variant, target, level and path in turn, or an axis's
 * values; a byte from 250 on puts a stray character instead), so that most inputs get past the
 * grammar's first checks. */
static void spec_text(const uint8_t *data, size_t size, char *text, size_t n) {
  static const char *const forms[] = {"builtin:fault=", "mlir-opt",   "matrix:mlir-opt",
                                      "builds=",        "pipelines=", "targets=",
                                      "jit=",           "builtin"};
  static const char *const faults[] = {
      "yield_stream", "drop_extra_deps", "drop_host_wait", "copy_size_i32",
      "record_early", "wait_destroys",   "free_unordered", "nope"};
  static const char *const mlir[4][8] = {
      {"", "", "@default", "@async-region", "", "@default", "@async-region", "@"},
      {"", "", "/nvvm", "/rocdl", "", "/nvvm", "/rocdl", "/spirv"},
      {"", "", "+O0", "+O3", "+Odefault", "+O1", "+O2", "+O9"},
      {"", "", ":/usr/lib/llvm-22/bin/mlir-opt", ":/opt/mlir-opt", "", "", "", ":"}};
  static const char *const values[] = {"default",  "async-region",     "nvvm", "rocdl", "O0",
                                       "Odefault", "/usr/lib/llvm-19", "O7"};
  size_t len = 0;
  if (size == 0 || data[0] % 8 == 0) {
    len = size > 0 ? size - 1 : 0;
    len = len < n - 1 ? len : n - 1;
    if (len)
      memcpy(text, data + 1, len);
    text[len] = '\0';
    return;
  }
  int form = size > 1 ? data[1] % 8 : 7;
  len = (size_t)snprintf(text, n, "%s", forms[form]);
  for (size_t i = 2, k = 0; i < size && len + 64 < n; i++, k++) {
    char stray[2] = {(char)(' ' + (data[i] - 250) * 13), '\0'};
    const char *p;
    if (data[i] >= 250)
      p = stray;
    else if (form == 0)
      p = faults[data[i] % 8];
    else if (form <= 2)
      p = k < 4 ? mlir[k][data[i] % 8] : "";
    else
      p = values[data[i] % 8];
    int list = data[i] < 250 && (form == 0 || form >= 3) && k > 0; /* (a comma between) */
    len += (size_t)snprintf(text + len, n - len, "%s%s", list ? "," : "", p);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096)
    return 0;
  char text[8192];
  spec_text(data, size, text, sizeof text);
  LowerSpec s;
  AfErr err = {0};
  int rc = lower_spec_syntax(text, &s, &err);
  if (rc != 0 && err.msg[0] == '\0') {
    fprintf(stderr, "fuzz_spec: \"%s\" refused without a message (rc %d)\n", text, rc);
    abort();
  }
  if (rc == 0 && s.kind == LOWER_BUILTIN) { /* (a builtin spec's name is its canonical form) */
    LowerSpec t;
    if (lower_spec_syntax(s.name, &t, &err) != 0 || t.faults != s.faults ||
        strcmp(t.name, s.name) != 0) {
      fprintf(stderr, "fuzz_spec: \"%s\" is named \"%s\", which reads back otherwise\n", text,
              s.name);
      abort();
    }
  }
  MlirMatrixAxes ax;
  memset(&ax, 0, sizeof ax);
  af_err_clear(&err);
  int axis = mlir_matrix_axis(&ax, text, &err);
  fz_count("fuzz_spec", rc == 0 || axis == 0);
  if (axis != 0 && err.msg[0] == '\0') {
    fprintf(stderr, "fuzz_spec: --matrix \"%s\" refused without a message\n", text);
    abort();
  }
  return 0;
}
