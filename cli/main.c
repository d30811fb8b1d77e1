/*
 * main.c: the asyncfuzz command: its help and the table of commands (cli.h).
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

static const char main_help[] =
    "asyncfuzz " ASYNCFUZZ_VERSION
    ": differential testing of GPU async lowerings (gpu.async.token DAGs -> mgpu* calls)\n"
    "\n"
    "usage: asyncfuzz COMMAND [options]     (asyncfuzz COMMAND --help for details)\n"
    "\n"
    "commands:\n"
    "  gen        generate a random valid case (JSON, or MLIR with --mlir)\n"
    "  render     print a case as an MLIR gpu-dialect module\n"
    "  validate   check that a case file is well formed and race-free\n"
    "  lower      print a lowering of a case (builtin: mgpu* call program; mlir-opt)\n"
    "  run        execute a case once and print its observations and trace\n"
    "  check      run a case under several schedules and judge each run\n"
    "  campaign   generate and check cases in a loop, saving failures\n"
    "  fuzz       a campaign whose cases libFuzzer draws, rewarded by what the lowering did\n"
    "  check-trace  check a runtime trace file (e.g. of code run by mlir-runner)\n"
    "  check-mlir  check a program of your own (.mlir): lowered, run, every run judged\n"
    "  import     turn a program in the case language's subset into a case (JSON)\n"
    "  reduce     minimize a failing case to a small reproducer (.json and .mlir)\n"
    "  db         query the regression database (list, show, stats, mark, export, merge)\n"
    "  device     describe the GPU of the cuda backend and calibrate its spin count\n"
    "  compile-batch  lower and compile cases ahead of time into a shared object (mlir-opt)\n"
    "  run-batch  run a compiled batch (GPU runners without MLIR) and judge every case\n"
    "  report     write an HTML report of the regression database\n"
    "  slurm      submit a campaign to Slurm: one job array task per shard, then a merge\n"
    "\n"
    "exit codes: 0 ok/pass, 1 failure found, 2 usage error, 3 bad input, 4 internal error,\n"
    "            5 the scheduler cannot be reached (slurm)\n";

int main(int argc, char **argv) {
  if (argc < 2 || cli_is_help(argv[1]) || strcmp(argv[1], "help") == 0) {
    fputs(main_help, argc < 2 ? stderr : stdout);
    return argc < 2 ? EXIT_USAGE : EXIT_OK;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("asyncfuzz %s\n", ASYNCFUZZ_VERSION);
    return 0;
  }
  static const struct {
    const char *name;
    int (*fn)(int, char **);
  } cmds[] = {{"gen", cmd_gen},
              {"render", cmd_render},
              {"validate", cmd_validate},
              {"lower", cmd_lower},
              {"run", cmd_run},
              {"check", cmd_check},
              {"campaign", cmd_campaign},
              {"fuzz", cmd_fuzz},
              {"--libfuzzer-child", cmd_fuzz_child},
              {"check-trace", cmd_check_trace},
              {"check-mlir", cmd_check_mlir},
              {"import", cmd_import},
              {"reduce", cmd_reduce},
              {"db", cmd_db},
              {"report", cmd_report},
              {"device", cmd_device},
              {"compile-batch", cmd_compile_batch},
              {"run-batch", cmd_run_batch},
              {"slurm", cmd_slurm}};
  if (asyncfuzz_rt_env_seed_error()) {
    fprintf(stderr, "asyncfuzz: %s\n", asyncfuzz_rt_env_seed_error());
    return EXIT_INPUT;
  }
  const char *cmd = argv[1];
  int rc = -1;
  for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++)
    if (strcmp(cmd, cmds[k].name) == 0)
      rc = cmds[k].fn(argc - 1, argv + 1);
  if (rc < 0) {
    fprintf(stderr, "asyncfuzz: unknown command \"%s\"\n\n%s", cmd, main_help);
    rc = EXIT_USAGE;
  }
  check_gpu_stop();
  asyncfuzz_rt_shutdown();
  return rc;
}
