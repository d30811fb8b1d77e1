/*
 * cli.h: shared pieces of the asyncfuzz command (the only module that prints or exits).
 *
 * Exit codes (documented in README.md):
 *   0  success (check: every schedule passed)
 *   1  a failure was found (check: some schedule failed; campaign: failures were found)
 *   2  usage error
 *   3  bad input: unreadable, malformed or invalid case file
 *   4  internal or environment error (out of memory, cannot write output)
 */
#ifndef CLI_CLI_H
#define CLI_CLI_H

#include "../gen/gen.h"
#include "../check/check.h"

#include <stdio.h>

enum { EXIT_OK = 0, EXIT_FOUND = 1, EXIT_USAGE = 2, EXIT_INPUT = 3, EXIT_INTERNAL = 4 };

/* Parses an integer option value; prints an error and returns -1 when it is not one. */
int cli_int(const char *opt, const char *val, long lo, long hi, long *out);
int cli_u64(const char *opt, const char *val, uint64_t *out);
/* Applies a generator knob (--ops, --buffers, ...) if `opt` is one. Returns 1 when it was
 * (consuming val), 0 when opt is not a generator knob, -1 on a bad value. */
int cli_gen_knob(GenConfig *cfg, const char *opt, const char *val);
/* Prints the help of the generator knobs (GEN_KNOB_MAP and the op mix). */
void cli_print_knobs_help(FILE *f);
/* Maps an AF_E* code to an exit code. */
int cli_exit_for(int rc);

/* Parses --lowering s and applies --pipeline (NULL: none) to it; with several lowerings
 * (`mixed`) the pipeline goes to the mlir-opt ones only, else a builtin spec refuses it. Prints
 * "asyncfuzz CMD: why" and returns EXIT_USAGE on a bad spec, else 0. */
int cli_parse_lowering(const char *cmd, const char *s, const char *pipeline, int mixed,
                       LowerSpec *spec);
/* --backend sim|cuda|cuda:raw, --spin N|auto (auto: calibrate on the device) and --gpu-jobs N.
 * Returns 1 when opt was one of them (val consumed), 0 when not, -1 on a bad value (printed). */
int cli_backend_opt(CheckOpts *o, const char *opt, const char *val);
/* --abi alone (for commands that run on the sim only), as a CLI_FN option on a CheckOpts. */
int cli_opt_abi(void *o, const char *val);
/* The backends' names as usage lines write them ("sim|cuda|cuda:raw|hip|hip:raw"; gpu_only: the
 * GPU ones, "cuda|hip"), and their --help section, both from the backend table. */
const char *cli_backend_list(int gpu_only);
void cli_print_backend_help(FILE *f);
/* For the cuda backend: starts the GPU child (the device, the calibration) and prints the
 * device line to stderr, prefixed by `cmd`. Fills dev (what runs record: backend, device,
 * versions, spin) for every backend. 0, or an exit code after printing why. */
int cli_backend_start(const char *cmd, CheckOpts *o, char *dev, size_t n);

int cli_is_help(const char *a);

/* A command's option: its name, what it takes, where it goes (a table ends with a NULL name). */
typedef enum CliArg {
  CLI_FLAG, /* no value: *(int *)dst = lo */
  CLI_STR,  /* a string: *(const char **)dst */
  CLI_INT,  /* an integer in lo..hi: *(int *)dst */
  CLI_LONG, /* an integer in lo..hi: *(long *)dst */
  CLI_U64,  /* a non-negative integer: *(uint64_t *)dst */
  CLI_STRS, /* a repeatable string, appended to *(CliStrs *)dst */
  CLI_FN    /* a value given to fn(dst, val): 0, or an exit code after printing why */
} CliArg;
/* The values of a repeatable option (--lowering A --lowering B), in order. */
#define CLI_MAX_STRS 8
typedef struct CliStrs {
  const char *v[CLI_MAX_STRS];
  int n;
} CliStrs;
typedef struct CliOpt {
  const char *name;
  int arg; /* CliArg */
  void *dst;
  long lo, hi;
  int (*fn)(void *dst, const char *val);
} CliOpt;

/* Rows of a command's option table. */
#define CLI_OPT_FLAG(name, dst, value)                                                             \
  { name, CLI_FLAG, dst, value, 0, NULL }
#define CLI_OPT_STR(name, dst)                                                                     \
  { name, CLI_STR, dst, 0, 0, NULL }
#define CLI_OPT_INT(name, dst, lo, hi)                                                             \
  { name, CLI_INT, dst, lo, hi, NULL }
#define CLI_OPT_LONG(name, dst, lo, hi)                                                            \
  { name, CLI_LONG, dst, lo, hi, NULL }
#define CLI_OPT_U64(name, dst)                                                                     \
  { name, CLI_U64, dst, 0, 0, NULL }
#define CLI_OPT_STRS(name, dst)                                                                    \
  { name, CLI_STRS, dst, 0, 0, NULL }
#define CLI_OPT_FN(name, dst, fn)                                                                  \
  { name, CLI_FN, dst, 0, 0, fn }
#define CLI_OPT_END                                                                                \
  { NULL, 0, NULL, 0, 0, NULL }

/* Parses argv[1..argc) of command cmd: --help prints help(stdout) and returns -1; each option of
 * opts, the backend options into o and the generator's knobs into k (each when not NULL);
 * positional arguments into pos (at most maxpos; *npos: how many). Prints what is wrong and
 * returns EXIT_USAGE, else 0. */
int cli_parse(const char *cmd, int argc, char **argv, const CliOpt *opts, CheckOpts *o,
              GenConfig *k, const char **pos, int maxpos, int *npos, void (*help)(FILE *f));
/* Loads (and validates) a case; prints the error. Returns an exit code. */
int cli_load_case(const char *path, GenCase *c, int validate);

/* Writes text to path atomically (a temporary file renamed), or to stdout for NULL or "-".
 * Prints the error. Returns an exit code. */
int cli_write_text(const char *path, const char *text);
/* `run` and `device`: the cuda backend in this process, the spin calibrated when asked
 * (o->spin < 0). Prints the device line, or why it cannot open. Returns an exit code. */
int cli_open_backend_here(CheckOpts *o);

/* The commands: each parses its options, calls the engine and prints. argv[0] is the
 * command's name. Returns an exit code. */
int cmd_gen(int argc, char **argv);         /* cmd_case.c */
int cmd_render(int argc, char **argv);      /* cmd_case.c */
int cmd_validate(int argc, char **argv);    /* cmd_case.c */
int cmd_lower(int argc, char **argv);       /* cmd_case.c */
int cmd_device(int argc, char **argv);      /* cmd_case.c */
int cmd_run(int argc, char **argv);         /* cmd_check.c */
int cmd_check(int argc, char **argv);       /* cmd_check.c */
int cmd_check_trace(int argc, char **argv); /* cmd_check.c */
int cmd_check_mlir(int argc, char **argv);  /* cmd_program.c */
int cmd_import(int argc, char **argv);      /* cmd_program.c */
int cmd_reduce(int argc, char **argv);      /* cmd_reduce.c */
int cmd_campaign(int argc, char **argv);
int cmd_fuzz(int argc, char **argv);       /* campaign.c: guided (campaign/guided.c) */
int cmd_fuzz_child(int argc, char **argv); /* a libFuzzer merge's child process */
int cmd_compile_batch(int argc, char **argv);
int cmd_run_batch(int argc, char **argv);
int cmd_db(int argc, char **argv);
int cmd_db_recheck(int argc, char **argv); /* asyncfuzz db recheck (campaign.c) */
int cmd_report(int argc, char **argv);
int cmd_slurm(int argc, char **argv); /* slurm.c */

#endif
