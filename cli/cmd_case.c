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

int cmd_gen(int argc, char **argv) {
  GenConfig cfg;
  gen_config_default(&cfg);
  uint64_t seed = 1;
  const char *out = NULL;
  int mlir = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (cli_is_help(a)) {
      printf("usage: asyncfuzz gen [--seed N] [-o FILE] [--mlir] [knobs]\n"
             "Generates a random valid case. The same seed and knobs give byte-identical "
             "output.\n\n");
      cli_print_knobs_help(stdout);
      return 0;
    } else if (strcmp(a, "--seed") == 0) {
      if (cli_u64(a, i + 1 < argc ? argv[++i] : NULL, &seed))
        return EXIT_USAGE;
    } else if (strcmp(a, "-o") == 0 || strcmp(a, "--out") == 0) {
      if (i + 1 >= argc) {
        fprintf(stderr, "asyncfuzz: %s needs a file name\n", a);
        return EXIT_USAGE;
      }
      out = argv[++i];
    } else if (strcmp(a, "--mlir") == 0) {
      mlir = 1;
    } else {
      int k = cli_gen_knob(&cfg, a, i + 1 < argc ? argv[i + 1] : NULL);
      if (k < 0)
        return EXIT_USAGE;
      if (k == 0) {
        fprintf(stderr, "asyncfuzz gen: unknown option %s (see --help)\n", a);
        return EXIT_USAGE;
      }
      i++;
    }
  }
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

static void print_faults(FILE *f) {
  fprintf(f, "builtin fault switches (--lowering builtin:fault=NAME[,NAME]):\n");
  for (int k = 0; k < LOWER_FAULT__COUNT; k++)
    fprintf(f, "  %-22s %s\n", lower_fault_name(k), lower_fault_desc(k));
}

/* The module mlir-opt makes of the case, or its lowering outcome. */
static int lower_with_mlir(const GenCase *c, const LowerSpec *spec) {
  AfErr err = {0};
  char dir[4096];
  if (mlir_tmpdir(dir, sizeof dir, &err)) {
    fprintf(stderr, "asyncfuzz lower: %s\n", err.msg);
    return EXIT_INTERNAL;
  }
  int zero = 0;
  char *chunk = gen_render_mlir_batch(&c, &zero, 1, 1);
  MlirLowered l;
  memset(&l, 0, sizeof l);
  int rc = chunk ? mlir_lower_batch(spec, dir, &chunk, 1, &l, &err)
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

int cmd_lower(int argc, char **argv) {
  const char *path = NULL, *lowering = "builtin", *pipeline = NULL;
  for (int i = 1; i < argc; i++) {
    if (cli_is_help(argv[i])) {
      printf("usage: asyncfuzz lower CASE.json [--lowering SPEC] [--pipeline P]\n"
             "Prints the mgpu* call program the builtin lowering makes of the case, or, with\n"
             "SPEC mlir-opt..., the LLVM-dialect module mlir-opt makes of it (or\n"
             "its outcome class and signature when it does not lower fully; exit 1).\n"
             "SPEC: builtin (default), builtin:fault=NAME[,NAME] or\n"
             "mlir-opt[@VARIANT][/TARGET][+O<n>|+Odefault][:PATH] (+O: the runner's JIT level).\n"
             "TARGET: nvvm (the default; the pipelines below) or rocdl: the kernels through\n"
             "convert-gpu-to-rocdl and rocdl-attach-target{chip=gfx90a}, and\n"
             "gpu-module-to-binary{format=bin} (a code object; format=llvm without the LLVM's\n"
             "ld.lld) with the ROCm device libraries (rocm-device-libs).\n\n");
      printf("mlir-opt pipelines (mlir-opt@VARIANT):\n");
      for (int k = 0; k < mlir_variant_count(); k++)
        printf("  %-14s %s:\n                 %s\n", mlir_variant_name(k), mlir_variant_desc(k),
               mlir_variant_pipeline(k));
      printf("\n");
      print_faults(stdout);
      return 0;
    } else if (strcmp(argv[i], "--list-faults") == 0) {
      print_faults(stdout);
      return 0;
    } else if (strcmp(argv[i], "--lowering") == 0 && i + 1 < argc) {
      lowering = argv[++i];
    } else if (strcmp(argv[i], "--pipeline") == 0 && i + 1 < argc) {
      pipeline = argv[++i];
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "asyncfuzz lower: unknown option %s (see --help)\n", argv[i]);
      return EXIT_USAGE;
    } else if (path == NULL) {
      path = argv[i];
    } else {
      fprintf(stderr, "asyncfuzz lower: one case at a time\n");
      return EXIT_USAGE;
    }
  }
  if (path == NULL) {
    fprintf(stderr, "asyncfuzz lower: which case? (see --help)\n");
    return EXIT_USAGE;
  }
  LowerSpec spec;
  if (cli_parse_lowering("lower", lowering, pipeline, 0, &spec))
    return EXIT_USAGE;
  AfErr err = {0};
  GenCase c;
  int ex = cli_load_case(path, &c, 1);
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
  int rc = lower_builtin(&c, &spec, &p, &err);
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

int cmd_device(int argc, char **argv) {
  CheckOpts o = {0};
  o.backend = RT_BACKEND_CUDA;
  for (int i = 1, bo; i < argc; i++) {
    if (cli_is_help(argv[i])) {
      printf("usage: asyncfuzz device [--backend %s] [--calibrate] [--target-us N]\n"
             "       asyncfuzz device --list-backends\n"
             "Opens the backend's GPU (default cuda; device $ASYNCFUZZ_<BACKEND>_DEVICE, default\n"
             "0) and prints its name, architecture, driver and toolkit versions. --calibrate\n"
             "also measures the sentinel kernel and prints the spin count that makes it last N\n"
             "microseconds (default $ASYNCFUZZ_SPIN_US or 200): the value of --spin auto.\n"
             "Exit 0, or 4 when there is no usable GPU (the reason is printed).\n"
             "--list-backends prints each backend: its name, the ABI flavour it runs, the\n"
             "kernel targets whose code it runs, and whether it is a GPU.\n",
             cli_backend_list(1));
      return 0;
    } else if (strcmp(argv[i], "--list-backends") == 0) {
      for (int b = 0; b < RT__BACKEND_COUNT; b++) {
        const RtBackendInfo *bi = asyncfuzz_rt_backend_info(b);
        printf("%-6s abi=%s targets=%s%s\n", bi->name,
               bi->abi < 0 ? "any" : asyncfuzz_rt_abi_name(bi->abi), bi->targets,
               bi->gpu ? " gpu" : "");
      }
      return 0;
    } else if (strcmp(argv[i], "--calibrate") == 0) {
      o.spin = -1;
    } else if (strcmp(argv[i], "--target-us") == 0 && i + 1 < argc) {
      long v;
      if (cli_int(argv[i], argv[i + 1], 1, 10000000, &v))
        return EXIT_USAGE;
      setenv("ASYNCFUZZ_SPIN_US", argv[++i], 1);
    } else if ((bo = cli_backend_opt(&o, argv[i], i + 1 < argc ? argv[i + 1] : NULL)) != 0) {
      if (bo < 0 || !asyncfuzz_rt_backend_info(o.backend)->gpu)
        return EXIT_USAGE; /* (--backend sim has no device) */
      i++;
    } else {
      fprintf(stderr, "asyncfuzz device: unknown or incomplete option %s (see --help)\n", argv[i]);
      return EXIT_USAGE;
    }
  }
  int ex = cli_open_backend_here(&o);
  if (ex == 0 && o.spin > 0)
    printf("spin %d\n", o.spin);
  return ex;
}
