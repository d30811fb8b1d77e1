/* shell_commands: lists the external commands that bash scripts run, for tests/deps_test.sh.
 *
 * The project's scripts and tests must call only tools that a bare Debian 12 (debootstrap
 * minbase) has or that scripts/bootstrap.sh installs. This lexes each script as bash does, far
 * enough to know which words stand in command position: after a newline, `;`, `&`, `|`, `&&`,
 * `||`, `(`, `$(`, a backquote, `{`, `!`, the reserved words that start a list (then, do, else,
 * elif, if, while, until), a case pattern's `)`, and after the wrappers that run their
 * arguments as a command (exec, env, timeout, nohup, taskset, xargs, time, sudo). It follows
 * quotes, command and process substitution (recursively), arithmetic, here-documents, comments,
 * `[[ ]]`, redirections and `bash -c`/`trap`/`eval` strings.
 *
 * Output, one line each, for every FILE given:
 *   cmd NAME FILE:LINE      NAME is run as a command (only plain names; "$x", paths skipped)
 *   func NAME FILE:LINE     NAME is a function the script defines
 *   probe NAME FILE:LINE    the script asks `command -v NAME` / `which NAME` (an optional tool)
 * Exit status: 0, or 2 when a file cannot be read.
 * usage: shell_commands FILE...
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *s; /* the whole text */
  size_t n, i;
  int line;
  const char *file;
  int line_base;        /* line of the text's start in its file (nested strings) */
  char pending[8][256]; /* here-document delimiters waiting for the end of the line */
  int npending;
} Lex;

static void emit(const char *kind, const char *name, const Lex *lx) {
  printf("%s %s %s:%d\n", kind, name, lx->file, lx->line_base + lx->line);
}

static int is_name(const char *w) {
  if (!(isalpha((unsigned char)w[0]) || w[0] == '_'))
    return 0;
  for (const char *p = w; *p; p++)
    if (!(isalnum((unsigned char)*p) || strchr("_.+-", *p)))
      return 0;
  return 1;
}

static int is_assignment(const char *w) {
  const char *eq = strchr(w, '=');
  if (!eq || eq == w)
    return 0;
  for (const char *p = w; p < eq; p++)
    if (!(isalnum((unsigned char)*p) || *p == '_' || (*p == '+' && p + 1 == eq)))
      return 0;
  return isalpha((unsigned char)w[0]) || w[0] == '_';
}

static void lex_list(Lex *lx, char close);
static void lex_text(const char *text, size_t n, const char *file, int line);

static void lex_list(Lex *lx, char close);

/* Skips a here-document body for every delimiter pending at this newline. */
static void skip_heredocs(Lex *lx) {
  for (int k = 0; k < lx->npending; k++) {
    const char *d = lx->pending[k];
    size_t dl = strlen(d);
    while (lx->i < lx->n) {
      size_t start = lx->i;
      while (lx->i < lx->n && lx->s[lx->i] != '\n')
        lx->i++;
      size_t a = start;
      while (a < lx->i && lx->s[a] == '\t')
        a++;
      int done = lx->i - a == dl && memcmp(lx->s + a, d, dl) == 0;
      if (lx->i < lx->n) {
        lx->i++;
        lx->line++;
      }
      if (done)
        break;
    }
  }
  lx->npending = 0;
}

/* Skips to the ')' that closes an arithmetic "$((" or "((" (the opening consumed). */
static void skip_arith(Lex *lx) {
  int depth = 2;
  while (lx->i < lx->n && depth > 0) {
    char c = lx->s[lx->i++];
    if (c == '$' && lx->i + 1 < lx->n && lx->s[lx->i] == '(' && lx->s[lx->i + 1] != '(') {
      lx->i++;
      lex_list(lx, ')'); /* a command substitution inside arithmetic */
    } else if (c == '(')
      depth++;
    else if (c == ')')
      depth--;
    else if (c == '\n')
      lx->line++;
  }
}

/* Reads one word at lx->i into w (quotes removed, substitutions recursed into and kept as a
 * '$' so the word is not taken for a name). Returns its length. */
static size_t read_word(Lex *lx, char *w, size_t cap) {
  size_t k = 0;
#define PUT(ch)                                                                                    \
  do {                                                                                             \
    char ch_ = (ch); /* evaluated once, kept or not */                                             \
    if (k + 1 < cap)                                                                               \
      w[k++] = ch_;                                                                                \
  } while (0)
  while (lx->i < lx->n) {
    char c = lx->s[lx->i];
    if (c == '\\' && lx->i + 1 < lx->n) {
      if (lx->s[lx->i + 1] == '\n') {
        lx->i += 2;
        lx->line++;
        continue;
      }
      PUT(lx->s[lx->i + 1]);
      lx->i += 2;
    } else if (c == '\'') {
      lx->i++;
      while (lx->i < lx->n && lx->s[lx->i] != '\'') {
        if (lx->s[lx->i] == '\n')
          lx->line++;
        PUT(lx->s[lx->i++]);
      }
      if (lx->i < lx->n)
        lx->i++;
    } else if (c == '"') {
      lx->i++;
      while (lx->i < lx->n && lx->s[lx->i] != '"') {
        char d = lx->s[lx->i];
        if (d == '\\' && lx->i + 1 < lx->n) {
          if (lx->s[lx->i + 1] == '\n')
            lx->line++;
          PUT(lx->s[lx->i + 1]);
          lx->i += 2;
        } else if (d == '$' && lx->i + 2 < lx->n && lx->s[lx->i + 1] == '(' &&
                   lx->s[lx->i + 2] == '(') {
          lx->i += 3;
          skip_arith(lx);
          PUT('$');
        } else if (d == '$' && lx->i + 1 < lx->n && lx->s[lx->i + 1] == '(') {
          lx->i += 2;
          lex_list(lx, ')');
          PUT('$');
        } else if (d == '`') {
          lx->i++;
          lex_list(lx, '`');
          PUT('$');
        } else {
          if (d == '\n')
            lx->line++;
          PUT(d);
          lx->i++;
        }
      }
      if (lx->i < lx->n)
        lx->i++;
    } else if (c == '$' && lx->i + 2 < lx->n && lx->s[lx->i + 1] == '(' &&
               lx->s[lx->i + 2] == '(') {
      lx->i += 3;
      skip_arith(lx);
      PUT('$');
    } else if (c == '$' && lx->i + 1 < lx->n && lx->s[lx->i + 1] == '(') {
      lx->i += 2;
      lex_list(lx, ')');
      PUT('$');
    } else if (c == '$' && lx->i + 1 < lx->n && lx->s[lx->i + 1] == '{') {
      int depth = 0;
      lx->i++; /* the '$' */
      do {
        char d = lx->s[lx->i++];
        if (d == '{')
          depth++;
        else if (d == '}')
          depth--;
      } while (lx->i < lx->n && depth > 0);
      PUT('$');
    } else if (c == '`') {
      lx->i++;
      lex_list(lx, '`');
      PUT('$');
    } else if (isspace((unsigned char)c) || strchr(";&|()<>", c)) {
      break;
    } else {
      PUT(c);
      lx->i++;
    }
  }
  w[k] = 0;
  return k;
#undef PUT
}

/* A wrapper runs its arguments as a command; returns how many leading non-option arguments
 * it takes before that command (timeout's duration, taskset's mask), or -1 if not one. */
static int wrapper_args(const char *w, const char **opts_with_arg) {
  static const struct {
    const char *name;
    int args;
    const char *opts; /* its short options that take an argument */
  } wr[] = {{"exec", 0, "a"}, {"env", 0, "uCS"},   {"nohup", 0, ""},     {"xargs", 0, "dEIiLlnPs"},
            {"time", 0, ""},  {"sudo", 0, "ugCD"}, {"timeout", 1, "ks"}, {"taskset", 1, ""},
            {"nice", 0, "n"}, {"setsid", 0, ""}};
  for (size_t k = 0; k < sizeof wr / sizeof wr[0]; k++)
    if (strcmp(w, wr[k].name) == 0) {
      *opts_with_arg = wr[k].opts;
      return wr[k].args;
    }
  return -1;
}

static int is_list_word(const char *w) {
  static const char *kw[] = {"then", "do", "else", "elif", "if", "while", "until", "!", "{", 0};
  for (int k = 0; kw[k]; k++)
    if (strcmp(w, kw[k]) == 0)
      return 1;
  return 0;
}

/* Lexes a command list up to the unquoted character close (0: end of text). */
static void lex_list(Lex *lx, char close) {
  int cmdpos = 1;             /* the next word is a command */
  int wrap_skip = -1;         /* inside a wrapper: non-option words still to skip */
  const char *wrap_opts = ""; /* the wrapper's options that take an argument */
  int opt_arg = 0;            /* the next word is an option's argument */
  int probe = 0;              /* after `command -v` or `which`: the next words are probes */
  int pass_str = 0;           /* after `bash -c`, `trap`, `eval`: the next string is a script */
  int in_case = 0;            /* 1: after `case`, until `in`; 2: reading a pattern */
  int brackets = 0;           /* inside [[ ]] */
  while (lx->i < lx->n) {
    char c = lx->s[lx->i];
    if (close && c == close) {
      lx->i++;
      return;
    }
    if (c == '\n') {
      lx->i++;
      lx->line++;
      skip_heredocs(lx);
      if (!in_case)
        cmdpos = 1;
      wrap_skip = -1;
      probe = pass_str = 0;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      lx->i++;
      continue;
    }
    if (c == '\\' && lx->i + 1 < lx->n && lx->s[lx->i + 1] == '\n') {
      lx->i += 2;
      lx->line++;
      continue;
    }
    if (c == '#' && (lx->i == 0 || isspace((unsigned char)lx->s[lx->i - 1]) ||
                     strchr(";&|(", lx->s[lx->i - 1]))) {
      while (lx->i < lx->n && lx->s[lx->i] != '\n')
        lx->i++;
      continue;
    }
    if (in_case == 2) {
      /* a pattern up to its ')', then commands; or the end of the case */
      if (c == ')') {
        lx->i++;
        in_case = 0;
        cmdpos = 1;
        continue;
      }
      char w[256];
      size_t at = lx->i;
      read_word(lx, w, sizeof w);
      if (strcmp(w, "esac") == 0) {
        in_case = 0;
        cmdpos = 0;
      } else if (lx->i == at) {
        lx->i++; /* '|' or '(' in a pattern */
      }
      continue;
    }
    if (c == ';' && lx->i + 1 < lx->n && lx->s[lx->i + 1] == ';') {
      lx->i += 2;
      in_case = 2;
      continue;
    }
    if (c == ';' || c == '&' || c == '|') {
      lx->i++;
      if (lx->i < lx->n && (lx->s[lx->i] == '&' || lx->s[lx->i] == '|'))
        lx->i++;
      cmdpos = 1;
      wrap_skip = -1;
      probe = pass_str = 0;
      continue;
    }
    if (c == '(' && lx->i + 1 < lx->n && lx->s[lx->i + 1] == '(') {
      lx->i += 2;
      skip_arith(lx);
      cmdpos = 0;
      continue;
    }
    if (c == '(') {
      lx->i++;
      lex_list(lx, ')');
      cmdpos = 0;
      continue;
    }
    if (c == ')') { /* stray: the end of a subshell that we did not open (nested text) */
      lx->i++;
      continue;
    }
    if (c == '<' || c == '>') {
      /* a redirection: the operator, then a file word (or a process substitution) */
      if (lx->i + 1 < lx->n && lx->s[lx->i + 1] == '(') {
        lx->i += 2;
        lex_list(lx, ')');
        continue;
      }
      int heredoc = c == '<' && lx->i + 1 < lx->n && lx->s[lx->i + 1] == '<' &&
                    !(lx->i + 2 < lx->n && lx->s[lx->i + 2] == '<');
      while (lx->i < lx->n && strchr("<>&|-", lx->s[lx->i]))
        lx->i++;
      while (lx->i < lx->n && (lx->s[lx->i] == ' ' || lx->s[lx->i] == '\t'))
        lx->i++;
      char w[256];
      read_word(lx, w, sizeof w);
      if (heredoc && lx->npending < 8)
        snprintf(lx->pending[lx->npending++], sizeof lx->pending[0], "%s", w);
      continue;
    }
    /* a word */
    size_t at = lx->i;
    int line = lx->line;
    int quoted = c == '\'' || c == '"';
    char w[256];
    read_word(lx, w, sizeof w);
    if (lx->i == at) { /* a character no rule takes: step over it */
      lx->i++;
      continue;
    }
    /* an fd number before a redirection ("2>") is not a word */
    if (lx->i < lx->n && (lx->s[lx->i] == '>' || lx->s[lx->i] == '<') && w[0] &&
        strspn(w, "0123456789") == strlen(w))
      continue;
    if (brackets) {
      if (strcmp(w, "]]") == 0)
        brackets = 0;
      continue;
    }
    if (in_case == 1) {
      if (strcmp(w, "in") == 0)
        in_case = 2;
      continue;
    }
    if (pass_str && quoted) {
      /* the script inside `bash -c '...'`, `trap '...' SIG`, `eval "..."` */
      lex_text(w, strlen(w), lx->file, lx->line_base + line);
      pass_str = 0;
      continue;
    }
    if (probe) {
      if (w[0] != '-' && is_name(w)) {
        Lex tmp = *lx;
        tmp.line = line;
        emit("probe", w, &tmp);
      }
      continue;
    }
    if (wrap_skip >= 0) {
      if (opt_arg) {
        opt_arg = 0;
        continue;
      }
      if (w[0] == '-') {
        opt_arg = w[1] && w[1] != '-' && !w[2] && strchr(wrap_opts, w[1]);
        continue;
      }
      if (is_assignment(w))
        continue;
      if (wrap_skip > 0) {
        wrap_skip--;
        continue;
      }
      wrap_skip = -1;
      cmdpos = 1;
    }
    if (!cmdpos)
      continue;
    if (quoted && w[0] == 0)
      continue;
    if (is_list_word(w))
      continue;
    if (is_assignment(w)) {
      size_t wl = strlen(w);
      if (w[wl - 1] == '=' && lx->i < lx->n && lx->s[lx->i] == '(') {
        /* an array: NAME=(words...) */
        lx->i++;
        while (lx->i < lx->n && lx->s[lx->i] != ')') {
          char e[256];
          size_t at0 = lx->i;
          if (lx->s[lx->i] == '\n')
            lx->line++;
          if (!isspace((unsigned char)lx->s[lx->i]))
            read_word(lx, e, sizeof e);
          if (lx->i == at0)
            lx->i++;
        }
        lx->i++;
      }
      continue; /* VAR=value cmd: still in command position */
    }
    if (strcmp(w, "[[") == 0) {
      brackets = 1;
      cmdpos = 0;
      continue;
    }
    if (strcmp(w, "case") == 0) {
      in_case = 1;
      cmdpos = 0;
      continue;
    }
    cmdpos = 0;
    if (strcmp(w, "}") == 0 || strcmp(w, "fi") == 0 || strcmp(w, "done") == 0 ||
        strcmp(w, "esac") == 0 || strcmp(w, "for") == 0 || strcmp(w, "select") == 0 ||
        strcmp(w, "function") == 0)
      continue;
    if (!is_name(w))
      continue; /* "$af", a path, a substitution */
    size_t j = lx->i;
    while (j < lx->n && (lx->s[j] == ' ' || lx->s[j] == '\t'))
      j++;
    if (j + 1 < lx->n && lx->s[j] == '(' && lx->s[j + 1] == ')') {
      /* name() { ... }: a function definition */
      Lex tmp = *lx;
      tmp.line = line;
      emit("func", w, &tmp);
      lx->i = j + 2;
      cmdpos = 1;
      continue;
    }
    Lex tmp = *lx;
    tmp.line = line;
    emit("cmd", w, &tmp);
    if (strcmp(w, "command") == 0 || strcmp(w, "which") == 0) {
      /* `command -v X` probes X; `command X` runs X (j: the next word's start) */
      if (strcmp(w, "which") == 0 ||
          (j + 1 < lx->n && lx->s[j] == '-' && (lx->s[j + 1] == 'v' || lx->s[j + 1] == 'V')))
        probe = 1;
      else
        cmdpos = 1;
    } else if (strcmp(w, "bash") == 0 || strcmp(w, "sh") == 0 || strcmp(w, "trap") == 0 ||
               strcmp(w, "eval") == 0) {
      pass_str = 1;
    } else {
      int a = wrapper_args(w, &wrap_opts);
      if (a >= 0) {
        wrap_skip = a;
        opt_arg = 0;
      }
    }
  }
}

static void lex_text(const char *text, size_t n, const char *file, int line) {
  Lex lx = {.s = text, .n = n, .file = file, .line_base = line, .line = 0};
  while (lx.i < lx.n)
    lex_list(&lx, 0);
}

int main(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "--help") == 0) {
    fprintf(stderr, "usage: shell_commands FILE...\n"
                    "Lists the commands, functions and probes (command -v) of bash scripts.\n");
    return argc < 2 ? 2 : 0;
  }
  int rc = 0;
  for (int k = 1; k < argc; k++) {
    FILE *f = fopen(argv[k], "rb");
    if (!f) {
      fprintf(stderr, "shell_commands: cannot read %s\n", argv[k]);
      rc = 2;
      continue;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
      if (len + 4096 > cap) {
        cap = cap ? cap * 2 : 65536;
        char *nb = realloc(buf, cap);
        if (!nb) {
          fprintf(stderr, "shell_commands: out of memory\n");
          free(buf);
          fclose(f);
          return 2;
        }
        buf = nb;
      }
      size_t got = fread(buf + len, 1, cap - len, f);
      if (got == 0)
        break;
      len += got;
    }
    fclose(f);
    lex_text(buf, len, argv[k], 1);
    free(buf);
  }
  return rc;
}
