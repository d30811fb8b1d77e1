/*
 * db.c: `asyncfuzz db ...` (queries over the regression database) and `asyncfuzz report`.
 */
#define _GNU_SOURCE
#include "../results/store.h"
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_DB "campaign-out/results.db"

static const char db_help[] =
    "usage: asyncfuzz db COMMAND [--db FILE] ...\n"
    "Queries the regression database that campaigns write (default " DEFAULT_DB ").\n"
    "  list [--status S] [--class C] [--lowering L] [--since YYYY-MM-DD]\n"
    "       [--regressions | --fixed]\n"
    "                      findings, new first; --regressions: those present in a newer LLVM\n"
    "                      release and absent in an older one (same pipeline, target and JIT\n"
    "                      level, by each finding's minimized case run on every configuration\n"
    "                      of a campaign's matrix); --fixed: the reverse\n"
    "  show ID             a finding: signature, reproduction rate, versions, pipeline, the\n"
    "                      command that replays it, its verdict on every configuration of the\n"
    "                      matrix, its smallest case and a trace excerpt\n"
    "  stats               counts per status, class and lowering\n"
    "  mark ID --status S  S: new, known, fixed or wontfix (known and wontfix findings are\n"
    "                      counted by later campaigns, not reported again)\n"
    "  export --format json|junit [filters]\n"
    "                      JUnit XML shows each new finding as a failing test case\n"
    "  merge OTHER.db      merges another runner's database (merging twice changes nothing)\n"
    "  recheck [--lowering SPEC]... [--matrix AXIS=V,...]...  (campaign's options)\n"
    "                      verdicts where a finding has none (a build added since)\n"
    "Exit 0, 2 on bad usage, 3 when the file is not an asyncfuzz database, 4 on other errors.\n";

static int parse_since(const char *s, double *out) {
  struct tm tm;
  memset(&tm, 0, sizeof tm);
  if (sscanf(s, "%d-%d-%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday) != 3)
    return -1;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  *out = (double)timegm(&tm);
  return 0;
}

static int open_db(const char *path, int create, Store **s) {
  AfErr err = {0};
  if (store_open(path, create, s, &err)) {
    fprintf(stderr, "asyncfuzz db: %s\n", err.msg);
    return err.rc == AF_EPARSE ? EXIT_INPUT : EXIT_INTERNAL;
  }
  return 0;
}

static int print_buf(AfBuf *b) {
  int ex = b->oom ? EXIT_INTERNAL : 0;
  if (ex == 0 && b->p && fputs(b->p, stdout) == EOF)
    ex = EXIT_INTERNAL;
  if (fflush(stdout) != 0)
    ex = EXIT_INTERNAL;
  af_buf_free(b);
  return ex;
}

static void db_help_print(FILE *f) {
  fputs(db_help, f);
}

static int opt_status(void *dst, const char *val) {
  if ((*(int *)dst = store_status_parse(val)) >= 0)
    return 0;
  fprintf(stderr, "asyncfuzz db: unknown status \"%s\" (new, known, fixed, wontfix)\n", val);
  return EXIT_USAGE;
}

static int opt_since(void *dst, const char *val) {
  if (parse_since(val, dst) == 0)
    return 0;
  fprintf(stderr, "asyncfuzz db: --since needs a date YYYY-MM-DD\n");
  return EXIT_USAGE;
}

/* db's arguments */
typedef struct DbArgs {
  const char *sub, *path, *format, *arg;
  StoreFilter f;
  int status, regressions, fixed;
  int64_t id; /* show, mark */
} DbArgs;

/* Whether the options suit the subcommand (printed when not): 0 or EXIT_USAGE. */
static int db_check_args(DbArgs *d) {
  const char *sub = d->sub;
  d->f.status = strcmp(sub, "mark") == 0 ? -1 : d->status;
  if (d->regressions && d->fixed) {
    fprintf(stderr, "asyncfuzz db: --regressions or --fixed, not both\n");
    return EXIT_USAGE;
  }
  if ((d->regressions || d->fixed) && strcmp(sub, "list") != 0) {
    fprintf(stderr, "asyncfuzz db %s: --regressions and --fixed are options of db list\n", sub);
    return EXIT_USAGE;
  }
  if (strcmp(sub, "show") == 0 || strcmp(sub, "mark") == 0) {
    char *end;
    d->id = d->arg ? strtoll(d->arg, &end, 10) : 0;
    if (d->arg == NULL || *end || d->id <= 0) {
      fprintf(stderr, "asyncfuzz db %s: which finding? (an id from asyncfuzz db list)\n", sub);
      return EXIT_USAGE;
    }
    if (strcmp(sub, "mark") == 0 && d->status < 0) {
      fprintf(stderr, "asyncfuzz db mark: --status new|known|fixed|wontfix is required\n");
      return EXIT_USAGE;
    }
  } else if (strcmp(sub, "merge") == 0 && d->arg == NULL) {
    fprintf(stderr, "asyncfuzz db merge: which database? (asyncfuzz db merge OTHER.db)\n");
    return EXIT_USAGE;
  } else if (strcmp(sub, "export") == 0 &&
             (d->format == NULL || (strcmp(d->format, "json") && strcmp(d->format, "junit")))) {
    fprintf(stderr, "asyncfuzz db export: --format json or --format junit\n");
    return EXIT_USAGE;
  } else if (strcmp(sub, "list") && strcmp(sub, "stats") && strcmp(sub, "export") &&
             strcmp(sub, "merge")) {
    fprintf(stderr, "asyncfuzz db: unknown command \"%s\" (see --help)\n", sub);
    return EXIT_USAGE;
  }
  return 0;
}

/* The subcommand on the open database, its output into b. 0 or an AF_E* code. */
static int db_run(Store *s, const DbArgs *d, AfBuf *b, AfErr *err) {
  const char *sub = d->sub;
  int rc = 0;
  if (strcmp(sub, "list") == 0 && (d->regressions || d->fixed))
    return store_list_versions(s, &d->f, d->fixed, b, err);
  if (strcmp(sub, "list") == 0)
    return store_list(s, &d->f, b, err);
  if (strcmp(sub, "show") == 0)
    return store_show_matrix(s, d->id, b, err);
  if (strcmp(sub, "stats") == 0)
    return store_stats(s, b, err);
  if (strcmp(sub, "export") == 0)
    return strcmp(d->format, "json") == 0 ? store_export_json(s, &d->f, b, err)
                                          : store_export_junit(s, &d->f, b, err);
  if (strcmp(sub, "mark") == 0) {
    rc = store_mark(s, d->id, d->status, err);
    if (rc == 0)
      af_buf_printf(b, "finding %lld: %s\n", (long long)d->id, store_status_name(d->status));
    return rc;
  }
  rc = store_merge(s, d->arg, err);
  if (rc == 0)
    af_buf_printf(b, "merged %s into %s\n", d->arg, d->path);
  return rc;
}

int cmd_db(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "recheck") == 0)
    return cmd_db_recheck(argc - 1, argv + 1);
  if (argc < 2) {
    fputs(db_help, stderr);
    return EXIT_USAGE;
  }
  DbArgs d = {.path = DEFAULT_DB, .f = {-1, NULL, NULL, 0}, .status = -1};
  const char *pos[2] = {NULL, NULL};
  int npos;
  const CliOpt opts[] = {CLI_OPT_STR("--db", &d.path),
                         CLI_OPT_FN("--status", &d.status, opt_status),
                         CLI_OPT_STR("--class", &d.f.cls),
                         CLI_OPT_STR("--lowering", &d.f.lowering),
                         CLI_OPT_FN("--since", &d.f.since, opt_since),
                         CLI_OPT_STR("--format", &d.format),
                         CLI_OPT_FLAG("--regressions", &d.regressions, 1),
                         CLI_OPT_FLAG("--fixed", &d.fixed, 1),
                         CLI_OPT_END};
  int ex = cli_parse("db", argc, argv, opts, NULL, NULL, pos, 2, &npos, db_help_print);
  if (ex)
    return ex < 0 ? 0 : ex;
  d.sub = pos[0];
  d.arg = pos[1];
  if (d.sub == NULL) {
    fputs(db_help, stderr);
    return EXIT_USAGE;
  }
  if (db_check_args(&d))
    return EXIT_USAGE;
  Store *s;
  ex = open_db(d.path, strcmp(d.sub, "merge") == 0, &s);
  if (ex)
    return ex;
  AfErr err = {0};
  AfBuf b;
  af_buf_init(&b);
  int rc = db_run(s, &d, &b, &err);
  store_close(s);
  if (rc) {
    af_buf_free(&b);
    fprintf(stderr, "asyncfuzz db %s: %s\n", d.sub, err.msg);
    return rc == AF_EPARSE ? EXIT_INPUT : rc == AF_EINVALID ? EXIT_USAGE : EXIT_INTERNAL;
  }
  return print_buf(&b);
}

static void report_help(FILE *f) {
  fprintf(f, "usage: asyncfuzz report --html FILE [--db FILE]\n"
             "Writes one self-contained HTML page of the regression database (default " DEFAULT_DB
             "),\nthat works from file:// with no network: the findings one line each (new "
             "first; status,\nclass, cause, count, first and last seen, minimized ops, "
             "reproduction, a cell per\nconfiguration, a regression or fixed badge), sorted by "
             "any column and filtered by\nstatus, class, lowering and text in the page; a "
             "line opens the finding's minimized\nreproducer (.mlir with its RUN lines, a copy "
             "button), its replay command, detailed\nforms and matrix. Then the runs (when, "
             "where, versions, cases, cases/s, executed and\nclean shares), inline SVG "
             "pictures (findings and cases/s over each campaign's time,\nexecuted and clean "
             "shares per configuration), and the findings that regressed or\nwere fixed "
             "between LLVM releases. A URL ending in #fID opens finding ID.\n");
}

int cmd_report(int argc, char **argv) {
  const char *path = DEFAULT_DB, *html = NULL;
  int npos;
  const CliOpt opts[] = {CLI_OPT_STR("--html", &html), CLI_OPT_STR("--db", &path), CLI_OPT_END};
  int ex = cli_parse("report", argc, argv, opts, NULL, NULL, NULL, 0, &npos, report_help);
  if (ex)
    return ex < 0 ? 0 : ex;
  if (html == NULL) {
    fprintf(stderr, "asyncfuzz report: --html FILE is required\n");
    return EXIT_USAGE;
  }
  Store *s;
  ex = open_db(path, 0, &s);
  if (ex)
    return ex;
  AfBuf b;
  af_buf_init(&b);
  AfErr err = {0};
  int rc = store_report_html(s, &b, &err);
  store_close(s);
  if (rc) {
    af_buf_free(&b);
    fprintf(stderr, "asyncfuzz report: %s\n", err.msg);
    return EXIT_INTERNAL;
  }
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp", html);
  FILE *f = fopen(tmp, "w");
  int bad = f == NULL || (b.p && fputs(b.p, f) == EOF);
  if (f)
    bad |= fclose(f) != 0;
  if (bad || rename(tmp, html) != 0) {
    remove(tmp);
    fprintf(stderr, "asyncfuzz report: cannot write %s\n", html);
    af_buf_free(&b);
    return EXIT_INTERNAL;
  }
  af_buf_free(&b);
  printf("wrote %s\n", html);
  return EXIT_OK;
}
