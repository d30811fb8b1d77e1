/*
 * proc.c: external tools run through fork/execv with a process group of their own, so a
 * timeout kills everything the tool started, and the harness's own signal handling (a
 * campaign's SIGINT) is not inherited by the tool's group.
 */
#define _GNU_SOURCE
#include "proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double mono(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

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

int af_proc_run(char *const argv[], char *const env[], const char *in_path, const char *out_path,
                const char *err_path, double timeout_s, ProcResult *r, AfErr *err) {
  memset(r, 0, sizeof *r);
  double t0 = mono();
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0)
    return af_err_set(err, AF_EIO, "cannot start %s: %s", argv[0], strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    if (redirect(in_path, 0, O_RDONLY) || redirect(out_path, 1, O_WRONLY | O_CREAT | O_TRUNC) ||
        redirect(err_path, 2, O_WRONLY | O_CREAT | O_TRUNC))
      _exit(126);
    for (int i = 0; env && env[i]; i++) {
      if (strchr(env[i], '='))
        putenv(env[i]);
      else
        unsetenv(env[i]); /* a bare NAME: not inherited */
    }
    execv(argv[0], argv);
    fprintf(stderr, "cannot execute %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid); /* also here: no race with the child's own call */
  int status = 0;
  long nap_us = 200;
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid)
      break;
    if (w < 0 && errno != EINTR)
      return af_err_set(err, AF_EIO, "waiting for %s: %s", argv[0], strerror(errno));
    if (timeout_s > 0 && mono() - t0 > timeout_s) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
      r->timed_out = 1;
      break;
    }
    struct timespec ts = {0, nap_us * 1000};
    nanosleep(&ts, NULL);
    if (nap_us < 20000)
      nap_us *= 2;
  }
  if (!r->timed_out)
    kill(-pid, SIGKILL); /* anything the tool left running in its group */
  r->seconds = mono() - t0;
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

int af_find_exe(const char *name, char *out, size_t n) {
  if (strchr(name, '/')) {
    if (access(name, X_OK) != 0)
      return 0;
    snprintf(out, n, "%s", name);
    return 1;
  }
  const char *path = getenv("PATH");
  if (path == NULL)
    path = "/usr/local/bin:/usr/bin:/bin";
  while (*path) {
    const char *e = strchr(path, ':');
    size_t len = e ? (size_t)(e - path) : strlen(path);
    if (len > 0 && len < 3000) {
      char cand[4096];
      snprintf(cand, sizeof cand, "%.*s/%s", (int)len, path, name);
      struct stat st;
      if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0) {
        snprintf(out, n, "%s", cand);
        return 1;
      }
    }
    path = e ? e + 1 : path + len;
  }
  return 0;
}

void af_rm_tree(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
        continue;
      char p[4096];
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      struct stat st;
      if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
        af_rm_tree(p);
      else
        remove(p);
    }
    closedir(d);
  }
  rmdir(dir);
}
