/*
 * proc.c: child processes. AfChild forks a function of the harness with a pipe each way and
 * reads its answers under a watchdog; external tools (tool.c) run through it with fork/execv in
 * a process group of their own, so a timeout kills everything the tool started, and the harness's
 * own signal handling (a campaign's SIGINT) is not inherited by the tool's group.
 */
#define _GNU_SOURCE
#include "proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double af_mono(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- a child running a function of the harness ---- */

int af_child_start(AfChild *c, void (*fn)(void *arg, int in, int out), void *arg, int pipes,
                   AfErr *err) {
  int p2c[2] = {-1, -1}, c2p[2] = {-1, -1};
  c->pid = c->to = c->from = -1;
  if (pipes && (pipe(p2c) != 0 || pipe(c2p) != 0)) {
    int saved = errno;
    for (int k = 0; k < 2; k++)
      if (p2c[k] >= 0)
        close(p2c[k]);
    return af_err_set(err, AF_EIO, "pipe: %s", strerror(saved));
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    if (pipes) {
      close(p2c[1]);
      close(c2p[0]);
    }
    signal(SIGPIPE, SIG_DFL);
    fn(arg, p2c[0], c2p[1]);
    _exit(127); /* (fn does not return) */
  }
  int saved = errno;
  if (pipes) {
    close(p2c[0]);
    close(c2p[1]);
  }
  if (pid < 0) {
    if (pipes) {
      close(p2c[1]);
      close(c2p[0]);
    }
    return af_err_set(err, AF_EIO, "fork: %s", strerror(saved));
  }
  c->pid = pid;
  c->to = p2c[1];
  c->from = c2p[0];
  return 0;
}

int af_child_read(AfChild *c, void *p, size_t n, double timeout_s) {
  char *at = p;
  double t0 = af_mono();
  while (n > 0) {
    if (timeout_s >= 0) {
      double left = timeout_s - (af_mono() - t0);
      if (left <= 0)
        return -2;
      struct pollfd pf = {.fd = c->from, .events = POLLIN};
      int pr = poll(&pf, 1, (int)(left * 1000) + 1);
      if (pr < 0 && errno == EINTR)
        continue;
      if (pr == 0)
        return -2;
      if (pr < 0)
        return -1;
    }
    ssize_t r = read(c->from, at, n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return -1;
    at += r;
    n -= (size_t)r;
  }
  return 0;
}

int af_child_write(AfChild *c, const void *p, size_t n) {
  const char *at = p;
  void (*old)(int) = signal(SIGPIPE, SIG_IGN);
  int rc = 0;
  while (n > 0 && rc == 0) {
    ssize_t w = write(c->to, at, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      rc = -1;
      break;
    }
    at += w;
    n -= (size_t)w;
  }
  signal(SIGPIPE, old);
  return rc;
}

int af_child_wait(AfChild *c, double timeout_s, int *status) {
  double t0 = af_mono();
  long nap_us = 200;
  *status = 0;
  for (;;) {
    pid_t w = waitpid(c->pid, status, WNOHANG);
    if (w == c->pid)
      return 0;
    if (w < 0 && errno != EINTR)
      return -1;
    if (timeout_s > 0 && af_mono() - t0 > timeout_s) {
      kill(-c->pid, SIGKILL); /* its process group, when it made one */
      kill(c->pid, SIGKILL);
      while (waitpid(c->pid, status, 0) < 0 && errno == EINTR)
        ;
      return 1;
    }
    struct timespec ts = {0, nap_us * 1000};
    nanosleep(&ts, NULL);
    if (nap_us < 20000)
      nap_us *= 2;
  }
}

void af_child_end(AfChild *c, int sig, int *status) {
  if (c->to >= 0)
    close(c->to);
  if (c->from >= 0)
    close(c->from);
  *status = 0;
  if (c->pid > 0) {
    if (sig)
      kill(c->pid, sig);
    while (waitpid(c->pid, status, 0) < 0 && errno == EINTR)
      ;
  }
  c->pid = c->to = c->from = -1;
}

void af_child_how(int status, int hung, double timeout_s, char *word, size_t wn, char *why,
                  size_t n) {
  if (hung) {
    snprintf(word, wn, "hang");
    snprintf(why, n, "hung (no answer in %g s)", timeout_s);
  } else if (WIFSIGNALED(status)) {
    snprintf(word, wn, "signal-%d", WTERMSIG(status));
    snprintf(why, n, "was killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
  } else {
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    snprintf(word, wn, "exit-%d", code);
    snprintf(why, n, "exited with status %d", code);
  }
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
