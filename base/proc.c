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

/* ---- a pool of children ---- */

typedef struct PoolStart {
  AfPool *p;
  int slot;
  void (*fn)(void *arg, int in, int out);
  void *arg;
} PoolStart;

static void pool_child(void *arg, int in, int out) {
  const PoolStart *ps = arg;
  for (int k = 0; k < ps->p->k; k++) /* (the siblings' ends: theirs alone to close) */
    if (k != ps->slot) {
      if (ps->p->child[k].to >= 0)
        close(ps->p->child[k].to);
      if (ps->p->child[k].from >= 0)
        close(ps->p->child[k].from);
    }
  ps->fn(ps->arg, in, out);
}

int af_pool_start_child(AfPool *p, int slot, void (*fn)(void *arg, int in, int out), void *arg,
                        AfErr *err) {
  PoolStart ps = {p, slot, fn, arg};
  return af_child_start(&p->child[slot], pool_child, &ps, 1, err);
}

int af_pool_run(AfPool *p, int n, AfErr *err) {
  int k = p->k < n ? p->k : n;
  if (k < 1)
    return 0;
  int *item = malloc(sizeof *item * (size_t)k), *out = calloc((size_t)k, sizeof *out);
  double *sent = malloc(sizeof *sent * (size_t)k);
  struct pollfd *pf = malloc(sizeof *pf * (size_t)k);
  if (!item || !out || !sent || !pf) {
    free(item);
    free(out);
    free(sent);
    free(pf);
    return af_err_set(err, AF_ENOMEM, "out of memory");
  }
  for (int s = 0; s < k; s++)
    item[s] = -1;
  int next = 0, rc = 0;
  for (;;) {
    /* the next items to the children that wait for one */
    for (int s = 0; s < k && rc == 0 && next < n; s++) {
      if (item[s] >= 0 || out[s])
        continue;
      if (p->child[s].pid <= 0) {
        AfErr e = {0};
        if (p->start(p, s, &e) != 0) {
          int others = 0; /* (another child that runs, or may yet start) */
          for (int t = 0; t < k; t++)
            others |= t != s && !out[t];
          out[s] = 1;
          if (!others) {
            *err = e;
            rc = e.rc ? e.rc : AF_ERUNTIME;
          }
          continue;
        }
      }
      int it = next++;
      if (p->send(p, s, it) != 0) { /* (gone before it was given the item) */
        int st;
        af_child_end(&p->child[s], SIGKILL, &st);
        if (p->lost(p, s, it, st, 0, err) != 0 && rc == 0)
          rc = err->rc ? err->rc : AF_ERUNTIME;
        s--; /* (this slot again: a fresh child, the next item) */
        continue;
      }
      item[s] = it;
      sent[s] = af_mono();
    }
    int m = 0;
    double wait = p->limit, now = af_mono();
    for (int s = 0; s < k; s++)
      if (item[s] >= 0) {
        pf[m].fd = p->child[s].from;
        pf[m].events = POLLIN;
        pf[m].revents = 0;
        m++;
        if (p->limit - (now - sent[s]) < wait)
          wait = p->limit - (now - sent[s]);
      }
    if (m == 0) { /* (items left here means every slot sat out: no child could start) */
      if (rc == 0 && next < n)
        rc = af_err_set(err, AF_ERUNTIME, "no child process could start");
      break;
    }
    int pr = poll(pf, (nfds_t)m, wait > 0 ? (int)(wait * 1000) + 1 : 0);
    if (pr < 0 && errno != EINTR) {
      rc = af_err_set(err, AF_EIO, "poll: %s", strerror(errno));
      for (int s = 0; s < k; s++) /* (an answer left unread must not reach a later item) */
        if (item[s] >= 0) {
          int st;
          af_child_end(&p->child[s], SIGKILL, &st);
        }
      break;
    }
    now = af_mono();
    m = 0;
    for (int s = 0; s < k; s++) {
      if (item[s] < 0)
        continue;
      short re = pr > 0 ? pf[m].revents : 0;
      m++;
      double left = p->limit - (now - sent[s]);
      int r = re ? p->recv(p, s, item[s], left > 0 ? left : 0.001) : left <= 0 ? -2 : 1;
      if (r == 1) /* (still running) */
        continue;
      if (r != 0) {
        int st;
        af_child_end(&p->child[s], r == -2 ? SIGKILL : 0, &st);
        if (p->lost(p, s, item[s], st, r == -2, err) != 0 && rc == 0)
          rc = err->rc ? err->rc : AF_ERUNTIME;
      }
      item[s] = -1;
    }
  }
  free(item);
  free(out);
  free(sent);
  free(pf);
  return rc;
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
