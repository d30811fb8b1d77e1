/*
 * cmd_case.c: the commands on one case file: gen, render, validate, lower, and device.
 */
#include "cli.h"
#include "../check/check.h"
#include "../base/proc.h"
#include "../lower/mlir.h"
#include "../reduce/reduce.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- gen ---- */

static void gen_help(FILE *f) {
  fprintf(f, "usage: asyncfuzz gen [--seed N] [-o FILE] [--mlir] [knobs]\n"
             "Generates a random valid case. The same seed and knobs give byte-identical "
             "output.\n\n");
  cli_print_knobs_help(f);
}

int cmd_gen(int argc, char **argv) {
  GenConfig cfg;
  gen_config_default(&cfg);
  uint64_t seed = 1;
  const char *out = NULL;
  int mlir = 0, npos;
  const CliOpt opts[] = {CLI_OPT_U64("--seed", &seed), CLI_OPT_STR("-o", &out),
                         CLI_OPT_STR("--out", &out), CLI_OPT_FLAG("--mlir", &mlir, 1), CLI_OPT_END};
  int ex = cli_parse("gen", argc, argv, opts, NULL, &cfg, NULL, 0, &npos, gen_help);
  if (ex)
    return ex < 0 ? 0 : ex;
  GenCase c;
  AfErr err = {0};
  int rc = gen_generate(&c, seed, &cfg, &err);
  if (rc) {
    fprintf(stderr, "asyncfuzz gen: %s\n", err.msg);
    gen_case_free(&c);
    return cli_exit_for(rc);
  }
  char *text = mlir ? gen_render_mlir(&c) : gen_case_to_json(&c);
  gen_case_free(&c);
  if (text == NULL) {
    fprintf(stderr, "asyncfuzz gen: out of memory\n");
    return EXIT_INTERNAL;
  }
  rc = cli_write_text(out, text);
  af_free(text);
  return rc;
}

/* ---- render / validate ---- */

int cmd_render(int argc, char **argv) {
  if (argc != 2 || cli_is_help(argv[1])) {
    printf("usage: asyncfuzz render CASE.json\n"
           "Prints the case as an MLIR module (gpu, func, memref, arith, scf, async dialects)\n"
           "with the sentinel kernels as gpu.func, ready for mlir-opt.\n");
    return argc == 2 ? 0 : EXIT_USAGE;
  }
  GenCase c;
  int ex = cli_load_case(argv[1], &c, 1);
  if (ex) {
    gen_case_free(&c);
    return ex;
  }
  char *text = gen_render_mlir(&c);
  gen_case_free(&c);
  if (text == NULL)
    return EXIT_INTERNAL;
  ex = cli_write_text(NULL, text);
  af_free(text);
  return ex;
}

int cmd_validate(int argc, char **argv) {
  if (argc != 2 || cli_is_help(argv[1])) {
    printf("usage: asyncfuzz validate CASE.json\n"
           "Checks the case format and the rules that give a case one meaning: tokens defined\n"
           "once before use, buffers written before read, no use after dealloc, every\n"
           "conflicting access pair ordered by the token DAG, every region awaited.\n");
    return argc == 2 ? 0 : EXIT_USAGE;
  }
  GenCase c;
  int ex = cli_load_case(argv[1], &c, 1);
  if (ex == 0)
    printf("%s: valid (%d ops, %d buffers, %d regions)\n", argv[1], c.nops, c.nbufs,
           c.nregions - 1);
  gen_case_free(&c);
  return ex;
}

/* ---- lower ---- */

/* The module mlir-opt makes of the case, or its lowering outcome. */
static int lower_with_mlir(const GenCase *c, const LowerSpec *spec) {
  AfErr err = {0};
  char dir[4096];
  if (mlir_tmpdir(dir, sizeof dir, &err)) {
    fprintf(stderr, "asyncfuzz lower: %s\n", err.msg);
    return EXIT_INTERNAL;
  }
  int zero = 0;
  char *chunk = gen_render_mlir_group(&c, &zero, 1, 1);
  MlirLowered l;
  memset(&l, 0, sizeof l);
  int rc = chunk ? mlir_lower_group(spec, dir, &chunk, 1, &l, &err)
                 : af_err_set(&err, AF_ENOMEM, "out of memory");
  af_free(chunk);
  af_rm_tree(dir);
  if (rc) {
    fprintf(stderr, "asyncfuzz lower: %s\n", err.msg);
    return cli_exit_for(rc);
  }
  int ex;
  if (l.outcome == MLIR_OK) {
    ex = cli_write_text(NULL, l.code);
  } else {
    Verdict v;
    check_lowering_verdict(spec, &l, &v);
    printf("%s\nsignature: %s\ndetail: %s\n", oracle_verdict_name(v.cls), v.signature, v.detail);
    ex = EXIT_FOUND;
  }
  mlir_lowered_free(&l, 1);
  return ex;
}

static void lower_help(FILE *f) {
  fprintf(f, "usage: asyncfuzz lower CASE.json [--lowering SPEC] [--pipeline P] [--abi cuda|rocm]\n"
             "       asyncfuzz lower --list-faults\n"
             "Prints the mgpu* call program the builtin lowering makes of the case (--abi rocm:\n"
             "for MLIR's ROCm wrappers), or, with SPEC mlir-opt..., the LLVM-dialect module\n"
             "mlir-opt makes of it (or its outcome class and signature when it does not lower\n"
             "fully; exit 1).\n"
             "SPEC: builtin (default), builtin:fault=NAME[,NAME] or\n"
             "mlir-opt[@VARIANT][/TARGET][+O<n>|+Odefault][:PATH] (+O: the runner's JIT level).\n"
             "TARGET: nvvm (the default; the pipelines below) or rocdl: the kernels through\n"
             "convert-gpu-to-rocdl and rocdl-attach-target{chip=gfx90a}, and\n"
             "gpu-module-to-binary{format=bin} (a code object; format=llvm without the LLVM's\n"
             "ld.lld) with the ROCm device libraries (rocm-device-libs).\n\n"
             "mlir-opt pipelines (mlir-opt@VARIANT):\n");
  for (int k = 0; k < mlir_variant_count(); k++)
    fprintf(f, "  %-14s %s:\n                 %s\n", mlir_variant_name(k), mlir_variant_desc(k),
            mlir_variant_pipeline(k));
  fprintf(f, "\n");
  lower_fault_list(f);
}

int cmd_lower(int argc, char **argv) {
  const char *lowering = "builtin", *pipeline = NULL, *path[1];
  int list = 0, npos;
  CheckOpts o = {0};
  const CliOpt opts[] = {CLI_OPT_STR("--lowering", &lowering), CLI_OPT_STR("--pipeline", &pipeline),
                         CLI_OPT_FLAG("--list-faults", &list, 1),
                         CLI_OPT_FN("--abi", &o, cli_opt_abi), CLI_OPT_END};
  int ex = cli_parse("lower", argc, argv, opts, NULL, NULL, path, 1, &npos, lower_help);
  if (ex)
    return ex < 0 ? 0 : ex;
  if (list) {
    lower_fault_list(stdout);
    return 0;
  }
  if (npos == 0) {
    fprintf(stderr, "asyncfuzz lower: which case? (see --help)\n");
    return EXIT_USAGE;
  }
  LowerSpec spec;
  if (cli_parse_lowering("lower", lowering, pipeline, 0, &spec))
    return EXIT_USAGE;
  AfErr err = {0};
  GenCase c;
  ex = cli_load_case(path[0], &c, 1);
  if (ex) {
    gen_case_free(&c);
    return ex;
  }
  if (spec.kind == LOWER_MLIR_OPT) {
    ex = lower_with_mlir(&c, &spec);
    gen_case_free(&c);
    return ex;
  }
  LowerProgram *p;
  int rc = lower_builtin_abi(&c, &spec, check_abi(&spec, &o) == RT_ABI_ROCM, &p, &err);
  gen_case_free(&c);
  if (rc) {
    fprintf(stderr, "asyncfuzz lower: %s\n", err.msg);
    return cli_exit_for(rc);
  }
  char *text = lower_program_to_text(p);
  lower_program_free(p);
  if (text == NULL)
    return EXIT_INTERNAL;
  ex = cli_write_text(NULL, text);
  af_free(text);
  return ex;
}

static void device_help(FILE *f) {
  fprintf(f,
          "usage: asyncfuzz device [--backend %s] [--calibrate] [--target-us N]\n"
          "       asyncfuzz device --list-backends\n"
          "Opens the backend's GPU (default cuda; device $ASYNCFUZZ_<BACKEND>_DEVICE, default\n"
          "0) and prints its name, architecture, driver and toolkit versions. --calibrate\n"
          "also measures the sentinel kernel and prints the spin count that makes it last N\n"
          "microseconds (default $ASYNCFUZZ_SPIN_US or 200): the value of --spin auto.\n"
          "Exit 0, or 4 when there is no usable GPU (the reason is printed).\n"
          "--list-backends prints each backend: its name, the ABI flavour it runs, the\n"
          "kernel targets whose code it runs, and whether it is a GPU.\n",
          cli_backend_list(1));
}

int cmd_device(int argc, char **argv) {
  CheckOpts o = {0};
  o.backend = RT_BACKEND_CUDA;
  const char *target_us = NULL;
  int list = 0, calibrate = 0, npos;
  const CliOpt opts[] = {CLI_OPT_FLAG("--list-backends", &list, 1),
                         CLI_OPT_FLAG("--calibrate", &calibrate, 1),
                         CLI_OPT_STR("--target-us", &target_us), CLI_OPT_END};
  long us;
  int ex = cli_parse("device", argc, argv, opts, &o, NULL, NULL, 0, &npos, device_help);
  if (ex)
    return ex < 0 ? 0 : ex;
  if (list) {
    for (int b = 0; b < RT__BACKEND_COUNT; b++) {
      const RtBackendInfo *bi = asyncfuzz_rt_backend_info(b);
      printf("%-6s abi=%s targets=%s%s\n", bi->name,
             bi->abi < 0 ? "any" : asyncfuzz_rt_abi_name(bi->abi), bi->targets,
             bi->gpu ? " gpu" : "");
    }
    return 0;
  }
  if (!asyncfuzz_rt_backend_info(o.backend)->gpu) {
    fprintf(stderr, "asyncfuzz device: the %s backend has no device\n",
            asyncfuzz_rt_backend_name(o.backend));
    return EXIT_USAGE;
  }
  if (target_us) {
    if (cli_int("--target-us", target_us, 1, 10000000, &us))
      return EXIT_USAGE;
    setenv("ASYNCFUZZ_SPIN_US", target_us, 1);
  }
  if (calibrate)
    o.spin = -1;
  ex = cli_open_backend_here(&o);
  if (ex == 0 && o.spin > 0)
    printf("spin %d\n", o.spin);
  return ex;
}
