/*
 * tool.c: an external tool run from an argument vector (af_proc_run): through its fork server
 * where there is one (proc_server.c), else started in a child (proc.c's AfChild) that execs it in a
 * process group of its own; the time each kind of tool took.
 */
#define _GNU_SOURCE
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int redirect(const char *path, int fd, int flags) {
  int f = open(path ? path : "/dev/null", flags, 0644);
  if (f < 0)
    return -1;
  if (f != fd) {
    if (dup2(f, fd) < 0)
      return -1;
    close(f);
  }
  return 0;
}

/* ---- external tools ---- */

typedef struct Exec {
  char *const *argv, *const *env;
  const char *in, *out, *err;
} Exec;

/* The tool's side: its own process group, default signals, its streams, its environment. */
static void exec_tool(void *arg, int in, int out) {
  const Exec *x = arg;
  (void)in, (void)out;
  setpgid(0, 0);
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  if (redirect(x->in, 0, O_RDONLY) || redirect(x->out, 1, O_WRONLY | O_CREAT | O_TRUNC) ||
      redirect(x->err, 2, O_WRONLY | O_CREAT | O_TRUNC))
    _exit(126);
  for (int i = 0; x->env && x->env[i]; i++) {
    if (strchr(x->env[i], '='))
      putenv(x->env[i]);
    else
      unsetenv(x->env[i]); /* a bare NAME: not inherited */
  }
  execv(x->argv[0], x->argv);
  fprintf(stderr, "cannot execute %s: %s\n", x->argv[0], strerror(errno));
  _exit(127);
}

static double tool_seconds[AF_TOOL__COUNT];

void af_proc_seconds(double out[AF_TOOL__COUNT]) {
  memcpy(out, tool_seconds, sizeof tool_seconds);
}

/* The kind of tool argv0 is, by its program's name (mlir-opt-22, mlir-runner, and LLVM 19's
 * runner, mlir-cpu-runner). */
static int tool_kind(const char *argv0) {
  const char *name = strrchr(argv0, '/');
  name = name ? name + 1 : argv0;
  return strstr(name, "mlir-opt")                                         ? AF_TOOL_MLIR_OPT
         : strstr(name, "mlir-runner") || strstr(name, "mlir-cpu-runner") ? AF_TOOL_RUNNER
                                                                          : AF_TOOL_OTHER;
}

int af_proc_run(char *const argv[], char *const env[], const char *in_path, const char *out_path,
                const char *err_path, double timeout_s, ProcResult *r, AfErr *err) {
  memset(r, 0, sizeof *r);
  double t0 = af_mono();
  int status = 0, w = 0;
  if (tool_kind(argv[0]) == AF_TOOL_OTHER ||
      af__server_run(argv, env, in_path, out_path, err_path, timeout_s, &status, &w) != 0) {
    Exec x = {argv, env, in_path, out_path, err_path};
    AfChild c;
    AfErr e = {0};
    if (af_child_start(&c, exec_tool, &x, 0, &e))
      return af_err_set(err, AF_EIO, "cannot start %s: %s", argv[0], e.msg);
    setpgid(c.pid, c.pid); /* also here: no race with the child's own call */
    w = af_child_wait(&c, timeout_s, &status);
    if (w < 0)
      return af_err_set(err, AF_EIO, "waiting for %s: %s", argv[0], strerror(errno));
    if (!w)
      kill(-c.pid, SIGKILL); /* anything the tool left running in its group */
  }
  r->timed_out = w;
  r->seconds = af_mono() - t0;
  tool_seconds[tool_kind(argv[0])] += r->seconds;
  if (r->timed_out) {
    /* a kill by the watchdog is a timeout, not a crash */
  } else if (WIFEXITED(status)) {
    r->exited = 1;
    r->code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r->signaled = 1;
    r->sig = WTERMSIG(status);
  }
  return 0;
}
