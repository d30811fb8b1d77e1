/*
 * forkserver.c: libasyncfuzz_fs.so, preloaded (LD_PRELOAD) into mlir-opt and mlir-runner so that
 * one started tool serves many runs: its start (loading LLVM's and MLIR's libraries, relocating,
 * their static initializers: most of a small case's time) happens once, and each run is a fork of
 * the started process that goes on into the tool's main with that run's arguments, environment and
 * files. What AFL's fork server does for a fuzz target, for a tool we do not build.
 *
 * It takes the place of __libc_start_main, so it runs after every library's initializers and
 * before main. Without ASYNCFUZZ_FORKSERVER in the environment it is not there at all: main runs.
 * With ASYNCFUZZ_FORKSERVER=R,W (the file descriptors of a pipe from the harness and one to it)
 * it serves requests until R reaches end of file: a request is a 32-bit length, then
 * NUL-terminated strings: the paths for stdin, stdout and stderr ("": /dev/null), argc, argv[0..),
 * the number of environment entries, the entries ("NAME=VALUE" set, "NAME" unset). It forks; the
 * child (its own process group) takes those files and that environment and returns main(argc,
 * argv)'s value as its exit status; the server answers the child's pid (32 bits), then its wait
 * status (32 bits) when it has ended. The client is base/proc.c (af_proc_run).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef int (*MainFn)(int, char **, char **);
static MainFn real_main;

static int read_all(int fd, void *p, size_t n) {
  char *c = p;
  while (n > 0) {
    ssize_t r = read(fd, c, n);
    if (r <= 0)
      return -1;
    c += r;
    n -= (size_t)r;
  }
  return 0;
}

static int write_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n > 0) {
    ssize_t w = write(fd, c, n);
    if (w <= 0)
      return -1;
    c += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Opens path ("": /dev/null) as file descriptor fd. */
static void redirect(const char *path, int fd, int flags) {
  int f = open(path[0] ? path : "/dev/null", flags, 0666);
  if (f >= 0 && f != fd) {
    dup2(f, fd);
    close(f);
  }
}

/* Whether a run may end without the static destructors (LLVM's and MLIR's: tearing down their
 * registries, a tenth of a small case's run): mlir-opt writing its output to a file of its own
 * (-o FILE), which main closes before it returns. Its stdout (llvm::outs(), which those
 * destructors flush) and every other tool's exit, whose destructors may write (the runtime
 * library's trace at exit), keep them. */
static int quick_exit_ok(int argc, char **argv) {
  const char *name = strrchr(argv[0], '/');
  if (strstr(name ? name + 1 : argv[0], "mlir-opt") == NULL)
    return 0;
  for (int i = 1; i + 1 < argc; i++)
    if (strcmp(argv[i], "-o") == 0 && strcmp(argv[i + 1], "-") != 0)
      return 1;
  return 0;
}

/* The child: the request's files, environment and arguments, then main. */
static void run_child(char *msg, size_t len, char **envp) {
  char *s[4096];
  int n = 0;
  for (size_t i = 0; i < len && n < 4096; i += strlen(msg + i) + 1)
    s[n++] = msg + i;
  if (n < 4)
    _exit(127);
  setpgid(0, 0);
  redirect(s[0], 0, O_RDONLY);
  redirect(s[1], 1, O_WRONLY | O_CREAT | O_TRUNC);
  redirect(s[2], 2, O_WRONLY | O_CREAT | O_TRUNC);
  int argc = atoi(s[3]);
  if (argc < 1 || 4 + argc >= n)
    _exit(127);
  char **argv = calloc((size_t)argc + 1, sizeof *argv);
  if (argv == NULL)
    _exit(127);
  for (int i = 0; i < argc; i++)
    argv[i] = s[4 + i];
  int envc = atoi(s[4 + argc]);
  for (int i = 0; i < envc && 5 + argc + i < n; i++) {
    char *e = s[5 + argc + i];
    if (strchr(e, '='))
      putenv(e);
    else
      unsetenv(e);
  }
  (void)envp;
  if (quick_exit_ok(argc, argv)) {
    int rc = real_main(argc, argv, environ);
    fflush(NULL);
    _exit(rc);
  }
  exit(real_main(argc, argv, environ));
}

static int serve(int rfd, int wfd, char **envp) {
  for (;;) {
    uint32_t len;
    if (read_all(rfd, &len, sizeof len) != 0 || len == 0 || len > (1u << 24))
      _exit(0); /* the harness is gone */
    char *msg = malloc((size_t)len + 1);
    if (msg == NULL || read_all(rfd, msg, len) != 0)
      _exit(1);
    msg[len] = '\0';
    pid_t pid = fork();
    if (pid == 0) {
      close(rfd);
      close(wfd);
      run_child(msg, len, envp);
    }
    free(msg);
    int32_t p = (int32_t)pid, status = 127 << 8;
    if (write_all(wfd, &p, sizeof p) != 0)
      _exit(1);
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    int32_t st = status;
    if (write_all(wfd, &st, sizeof st) != 0)
      _exit(1);
  }
}

static int fs_main(int argc, char **argv, char **envp) {
  const char *v = getenv("ASYNCFUZZ_FORKSERVER");
  int rfd = -1, wfd = -1;
  if (v == NULL || sscanf(v, "%d,%d", &rfd, &wfd) != 2)
    return real_main(argc, argv, envp);
  unsetenv("ASYNCFUZZ_FORKSERVER"); /* (the runs are the tool itself, and what they start too) */
  unsetenv("LD_PRELOAD");
  return serve(rfd, wfd, envp);
}

int __libc_start_main(MainFn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
                      void (*rtld_fini)(void), void *stack_end) {
  typedef int (*StartFn)(MainFn, int, char **, void (*)(void), void (*)(void), void (*)(void),
                         void *);
  StartFn next = (StartFn)dlsym(RTLD_NEXT, "__libc_start_main");
  real_main = main;
  return next(fs_main, argc, argv, init, fini, rtld_fini, stack_end);
}
