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
    "  merge OTHER.db      merges another runner's database (running it twice changes\n"
    "                      nothing)\n"
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

int cmd_db(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    fputs(db_help, argc < 2 ? stderr : stdout);
    return argc < 2 ? EXIT_USAGE : EXIT_OK;
  }
  const char *sub = argv[1], *path = DEFAULT_DB, *format = NULL, *arg = NULL;
  StoreFilter f = {-1, NULL, NULL, 0};
  int status = -1, versions = -1; /* 0: --regressions, 1: --fixed */
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(db_help, stdout);
      return EXIT_OK;
    } else if (strcmp(a, "--db") == 0 && val) {
      path = argv[++i];
    } else if (strcmp(a, "--status") == 0 && val) {
      status = store_status_parse(argv[++i]);
      if (status < 0) {
        fprintf(stderr, "asyncfuzz db: unknown status \"%s\" (new, known, fixed, wontfix)\n",
                argv[i]);
        return EXIT_USAGE;
      }
    } else if (strcmp(a, "--class") == 0 && val) {
      f.cls = argv[++i];
    } else if (strcmp(a, "--lowering") == 0 && val) {
      f.lowering = argv[++i];
    } else if (strcmp(a, "--since") == 0 && val) {
      if (parse_since(argv[++i], &f.since)) {
        fprintf(stderr, "asyncfuzz db: --since needs a date YYYY-MM-DD\n");
        return EXIT_USAGE;
      }
    } else if (strcmp(a, "--format") == 0 && val) {
      format = argv[++i];
    } else if (strcmp(a, "--regressions") == 0 || strcmp(a, "--fixed") == 0) {
      if (versions >= 0 && versions != (a[2] == 'f')) {
        fprintf(stderr, "asyncfuzz db: --regressions or --fixed, not both\n");
        return EXIT_USAGE;
      }
      versions = a[2] == 'f';
    } else if (a[0] == '-') {
      fprintf(stderr, "asyncfuzz db: unknown or incomplete option %s (see --help)\n", a);
      return EXIT_USAGE;
    } else if (arg == NULL) {
      arg = a;
    } else {
      fprintf(stderr, "asyncfuzz db: unexpected argument %s\n", a);
      return EXIT_USAGE;
    }
  }
  f.status = strcmp(sub, "mark") == 0 ? -1 : status;
  if (versions >= 0 && strcmp(sub, "list") != 0) {
    fprintf(stderr, "asyncfuzz db %s: --regressions and --fixed are options of db list\n", sub);
    return EXIT_USAGE;
  }
  int64_t id = 0;
  if (strcmp(sub, "show") == 0 || strcmp(sub, "mark") == 0) {
    char *end;
    id = arg ? strtoll(arg, &end, 10) : 0;
    if (arg == NULL || *end || id <= 0) {
      fprintf(stderr, "asyncfuzz db %s: which finding? (an id from asyncfuzz db list)\n", sub);
      return EXIT_USAGE;
    }
    if (strcmp(sub, "mark") == 0 && status < 0) {
      fprintf(stderr, "asyncfuzz db mark: --status new|known|fixed|wontfix is required\n");
      return EXIT_USAGE;
    }
  } else if (strcmp(sub, "merge") == 0 && arg == NULL) {
    fprintf(stderr, "asyncfuzz db merge: which database? (asyncfuzz db merge OTHER.db)\n");
    return EXIT_USAGE;
  } else if (strcmp(sub, "export") == 0 &&
             (format == NULL || (strcmp(format, "json") && strcmp(format, "junit")))) {
    fprintf(stderr, "asyncfuzz db export: --format json or --format junit\n");
    return EXIT_USAGE;
  } else if (strcmp(sub, "list") && strcmp(sub, "stats") && strcmp(sub, "export") &&
             strcmp(sub, "merge")) {
    fprintf(stderr, "asyncfuzz db: unknown command \"%s\" (see --help)\n", sub);
    return EXIT_USAGE;
  }
  Store *s;
  int ex = open_db(path, strcmp(sub, "merge") == 0, &s);
  if (ex)
    return ex;
  AfErr err = {0};
  AfBuf b;
  af_buf_init(&b);
  int rc = 0;
  if (strcmp(sub, "list") == 0 && versions >= 0)
    rc = store_list_versions(s, &f, versions, &b, &err);
  else if (strcmp(sub, "list") == 0)
    rc = store_list(s, &f, &b, &err);
  else if (strcmp(sub, "show") == 0)
    rc = store_show_matrix(s, id, &b, &err);
  else if (strcmp(sub, "stats") == 0)
    rc = store_stats(s, &b, &err);
  else if (strcmp(sub, "export") == 0)
    rc = strcmp(format, "json") == 0 ? store_export_json(s, &f, &b, &err)
                                     : store_export_junit(s, &f, &b, &err);
  else if (strcmp(sub, "mark") == 0) {
    rc = store_mark(s, id, status, &err);
    if (rc == 0)
      af_buf_printf(&b, "finding %lld: %s\n", (long long)id, store_status_name(status));
  } else {
    rc = store_merge(s, arg, &err);
    if (rc == 0)
      af_buf_printf(&b, "merged %s into %s\n", arg, path);
  }
  store_close(s);
  if (rc) {
    af_buf_free(&b);
    fprintf(stderr, "asyncfuzz db %s: %s\n", sub, err.msg);
    return rc == AF_EPARSE ? EXIT_INPUT : rc == AF_EINVALID ? EXIT_USAGE : EXIT_INTERNAL;
  }
  return print_buf(&b);
}

int cmd_report(int argc, char **argv) {
  const char *path = DEFAULT_DB, *html = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      printf("usage: asyncfuzz report --html FILE [--db FILE]\n"
             "Writes a self-contained HTML page of the regression database (default " DEFAULT_DB
             "):\nthe findings table (new first); the findings that regressed or were fixed "
             "between\nLLVM releases and the cases per configuration of the mlir-opt matrix; "
             "counts per\nclass and lowering, findings over time and throughput per run as "
             "inline SVG charts.\n");
      return EXIT_OK;
    } else if (strcmp(a, "--html") == 0 && i + 1 < argc) {
      html = argv[++i];
    } else if (strcmp(a, "--db") == 0 && i + 1 < argc) {
      path = argv[++i];
    } else {
      fprintf(stderr, "asyncfuzz report: unknown or incomplete option %s (see --help)\n", a);
      return EXIT_USAGE;
    }
  }
  if (html == NULL) {
    fprintf(stderr, "asyncfuzz report: --html FILE is required\n");
    return EXIT_USAGE;
  }
  Store *s;
  int ex = open_db(path, 0, &s);
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
