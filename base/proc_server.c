/*
 * proc_server.c: the harness's side of the tools' fork servers (forkserver.c, preloaded into the
 * tool): af_proc_run hands a run of mlir-opt or mlir-runner to a started copy of that program
 * instead of starting it again. One server per program path and process (a forked worker starts
 * its own); a server that dies or cannot be started leaves the run to a plain start, and is not
 * tried again.
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

#define MAX_SERVERS 8

typedef struct Server {
  char path[1024];
  AfChild c;
  pid_t owner; /* the harness process it serves */
  int dead;
} Server;

static Server servers[MAX_SERVERS];
static int nservers;
static char lib[4096];

void af_proc_servers(const char *preload) {
  snprintf(lib, sizeof lib, "%s", preload && access(preload, R_OK) == 0 ? preload : "");
}

const char *af_proc_servers_lib(void) {
  return lib;
}

typedef struct Start {
  char *const *argv;
} Start;

/* The server: the tool with the library preloaded and the pipe on fds 200 and 201. */
static void exec_server(void *arg, int in, int out) {
  const Start *s = arg;
  setpgid(0, 0);
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  int null = open("/dev/null", O_RDWR);
  if (dup2(in, 200) < 0 || dup2(out, 201) < 0 || null < 0)
    _exit(126);
  for (int fd = 0; fd < 3; fd++)
    dup2(null, fd);
  char pre[4200];
  const char *old = getenv("LD_PRELOAD");
  snprintf(pre, sizeof pre, "%s%s%s", lib, old && old[0] ? ":" : "", old ? old : "");
  setenv("LD_PRELOAD", pre, 1);
  setenv("ASYNCFUZZ_FORKSERVER", "200,201", 1);
  setenv("LD_BIND_NOW", "1", 1);
  execv(s->argv[0], s->argv);
  _exit(127);
}

/* Whether path is an ELF executable (a script's interpreter would take its arguments apart). */
static int is_elf(const char *path) {
  char m[4] = {0};
  int fd = open(path, O_RDONLY);
  if (fd < 0)
    return 0;
  ssize_t n = read(fd, m, sizeof m);
  close(fd);
  return n == 4 && memcmp(m, "\177ELF", 4) == 0;
}

/* The live server of argv[0] for this process, started if need be; NULL: none. */
static Server *server_for(char *const argv[]) {
  pid_t me = getpid();
  for (int i = 0; i < nservers; i++)
    if (servers[i].owner == me && strcmp(servers[i].path, argv[0]) == 0)
      return servers[i].dead ? NULL : &servers[i];
  Server *s = NULL;
  for (int i = 0; i < nservers && s == NULL; i++)
    if (servers[i].owner != me) /* (a parent's: not ours to use or end) */
      s = &servers[i];
  if (s == NULL && nservers < MAX_SERVERS)
    s = &servers[nservers++];
  if (s == NULL || strlen(argv[0]) >= sizeof s->path)
    return NULL;
  memset(s, 0, sizeof *s);
  snprintf(s->path, sizeof s->path, "%s", argv[0]);
  s->owner = me;
  if (!is_elf(argv[0])) {
    s->dead = 1; /* (not tried again) */
    return NULL;
  }
  Start st = {argv};
  AfErr err = {0};
  if (af_child_start(&s->c, exec_server, &st, 1, &err) != 0) {
    s->dead = 1;
    return NULL;
  }
  fcntl(s->c.to, F_SETFD, FD_CLOEXEC);
  fcntl(s->c.from, F_SETFD, FD_CLOEXEC);
  return s;
}

static void server_dead(Server *s) {
  int status;
  s->dead = 1;
  af_child_end(&s->c, SIGKILL, &status);
}

static void put(AfBuf *b, const char *s) {
  af_buf_put(b, s ? s : "", strlen(s ? s : "") + 1);
}

int af__server_run(char *const argv[], char *const env[], const char *in_path, const char *out_path,
                   const char *err_path, double timeout_s, int *status, int *timed_out) {
  if (lib[0] == '\0')
    return 1;
  for (int i = 0; env && env[i]; i++) /* (a preload must be there from the start: not here) */
    if (strncmp(env[i], "LD_PRELOAD=", 11) == 0)
      return 1;
  Server *s = server_for(argv);
  if (s == NULL)
    return 1;
  AfBuf b;
  af_buf_init(&b);
  char num[32];
  put(&b, in_path);
  put(&b, out_path);
  put(&b, err_path);
  int argc = 0, envc = 0;
  while (argv[argc])
    argc++;
  while (env && env[envc])
    envc++;
  snprintf(num, sizeof num, "%d", argc);
  put(&b, num);
  for (int i = 0; i < argc; i++)
    put(&b, argv[i]);
  snprintf(num, sizeof num, "%d", envc);
  put(&b, num);
  for (int i = 0; i < envc; i++)
    put(&b, env[i]);
  uint32_t len = (uint32_t)b.len;
  int32_t pid = -1, st = 0;
  int ok = !b.oom && af_child_write(&s->c, &len, sizeof len) == 0 &&
           af_child_write(&s->c, b.p, b.len) == 0 &&
           af_child_read(&s->c, &pid, sizeof pid, 30) == 0;
  af_buf_free(&b);
  if (!ok || pid <= 0) {
    server_dead(s);
    return 1; /* (nothing ran: a plain start runs it) */
  }
  int r = af_child_read(&s->c, &st, sizeof st, timeout_s > 0 ? timeout_s : -1);
  *timed_out = r == -2;
  if (r == -2) { /* the watchdog: the run's whole group, then its status */
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    r = af_child_read(&s->c, &st, sizeof st, 30);
  }
  kill(-pid, SIGKILL); /* anything the run left in its group */
  if (r != 0) {        /* the server died under the run: it runs again, started plainly */
    server_dead(s);
    if (!*timed_out)
      return 1;
  }
  *status = st;
  return 0;
}
