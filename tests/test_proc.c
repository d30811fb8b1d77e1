/*
 * test_proc.c: child processes (base/proc.h): a function run in a child with pipes both ways,
 * the watchdog on its answers, how a child ended, and a tool run under a time limit.
 */
#include "../base/proc.h"
#include "test.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

/* Answers each 4-byte number with its double; 0 makes it crash, 1 makes it hang. */
static void doubler(void *arg, int in, int out) {
  (void)arg;
  AfChild parent = {-1, out, in};
  int32_t v;
  while (af_child_read(&parent, &v, sizeof v, -1) == 0) {
    if (v == 0)
      raise(SIGKILL); /* (not SIGSEGV: a sanitizer would catch it) */
    if (v == 1)
      for (;;)
        pause();
    v *= 2;
    if (af_child_write(&parent, &v, sizeof v))
      _exit(1);
  }
  _exit(3);
}

static void test_child(void) {
  AfChild c;
  AfErr err = {0};
  int st;
  char word[32], why[128];
  CHECK_EQ(af_child_start(&c, doubler, NULL, 1, &err), 0);
  int32_t v = 21;
  CHECK_EQ(af_child_write(&c, &v, sizeof v), 0);
  CHECK_EQ(af_child_read(&c, &v, sizeof v, 5), 0);
  CHECK_EQ(v, 42);
  af_child_end(&c, 0, &st); /* end of file: it exits 3 */
  CHECK_EQ(c.pid, -1);
  af_child_how(st, 0, 5, word, sizeof word, why, sizeof why);
  CHECK_STR(word, "exit-3");
  CHECK_STR(why, "exited with status 3");

  CHECK_EQ(af_child_start(&c, doubler, NULL, 1, &err), 0);
  v = 0; /* a crash: the read sees the end of the pipe */
  CHECK_EQ(af_child_write(&c, &v, sizeof v), 0);
  CHECK_EQ(af_child_read(&c, &v, sizeof v, 5), -1);
  af_child_end(&c, 0, &st);
  af_child_how(st, 0, 5, word, sizeof word, why, sizeof why);
  CHECK_STR(word, "signal-9");
  CHECK_CONTAINS(why, "was killed by signal 9");

  CHECK_EQ(af_child_start(&c, doubler, NULL, 1, &err), 0);
  v = 1; /* a hang: the watchdog */
  CHECK_EQ(af_child_write(&c, &v, sizeof v), 0);
  CHECK_EQ(af_child_read(&c, &v, sizeof v, 0.2), -2);
  af_child_end(&c, SIGKILL, &st);
  af_child_how(st, 1, 0.2, word, sizeof word, why, sizeof why);
  CHECK_STR(word, "hang");
  CHECK_STR(why, "hung (no answer in 0.2 s)");
}

static void test_tool(void) {
  char *sleep_argv[] = {"/bin/sleep", "5", NULL}, *true_argv[] = {"/bin/true", NULL};
  ProcResult r;
  AfErr err = {0};
  CHECK_EQ(af_proc_run(sleep_argv, NULL, NULL, NULL, NULL, 0.2, &r, &err), 0);
  CHECK(r.timed_out && !r.exited && !r.signaled);
  CHECK(r.seconds < 4);
  CHECK_EQ(af_proc_run(true_argv, NULL, NULL, NULL, NULL, 5, &r, &err), 0);
  CHECK(r.exited && r.code == 0 && !r.timed_out);
  char *none_argv[] = {"/nonexistent/tool", NULL};
  CHECK_EQ(af_proc_run(none_argv, NULL, NULL, NULL, NULL, 5, &r, &err), 0);
  CHECK(r.exited && r.code == 127);
}

/* A file's first line, as a number. */
static long first_number(const char *path) {
  FILE *f = fopen(path, "r");
  long v = -1;
  if (f) {
    if (fscanf(f, "%ld", &v) != 1)
      v = -1;
    fclose(f);
  }
  return v;
}

/* The fork server (base/forkserver.c): a program named mlir-opt (here /bin/sh under that name)
 * runs through one started copy: each run is a child of the same server, not of this process,
 * with its own arguments, environment, files, status and time limit. */
static void test_server(const char *lib) {
  char dir[] = "/tmp/af_fs_XXXXXX", tool[64], out[96];
  CHECK(mkdtemp(dir) != NULL);
  snprintf(tool, sizeof tool, "%s/mlir-opt", dir);
  snprintf(out, sizeof out, "%s/out", dir);
  CHECK_EQ(symlink("/bin/sh", tool), 0);
  af_proc_servers(lib);
  CHECK_STR(af_proc_servers_lib(), lib);
  char *ppid_argv[] = {tool, "-c", "echo $PPID", NULL};
  ProcResult r;
  AfErr err = {0};
  long server = -1;
  for (int i = 0; i < 3; i++) {
    CHECK_EQ(af_proc_run(ppid_argv, NULL, NULL, out, NULL, 5, &r, &err), 0);
    CHECK(r.exited && r.code == 0);
    long p = first_number(out);
    CHECK(p > 0 && p != (long)getpid()); /* a child of the server */
    if (i == 0)
      server = p;
    CHECK_EQ(p, server); /* the same server every time */
  }
  char *env_argv[] = {tool, "-c", "echo $AF_X; exit 3", NULL}, *env[] = {"AF_X=41", NULL};
  CHECK_EQ(af_proc_run(env_argv, env, NULL, out, NULL, 5, &r, &err), 0);
  CHECK(r.exited && r.code == 3);
  CHECK_EQ(first_number(out), 41);
  char *sleep_argv[] = {tool, "-c", "sleep 5", NULL};
  CHECK_EQ(af_proc_run(sleep_argv, NULL, NULL, NULL, NULL, 0.3, &r, &err), 0);
  CHECK(r.timed_out && r.seconds < 4);
  CHECK_EQ(af_proc_run(ppid_argv, NULL, NULL, out, NULL, 5, &r, &err), 0);
  CHECK_EQ(first_number(out), server); /* the server outlived the run it killed */
  af_proc_servers(NULL);
  CHECK_EQ(af_proc_run(ppid_argv, NULL, NULL, out, NULL, 5, &r, &err), 0);
  CHECK_EQ(first_number(out), (long)getpid()); /* off: a plain start */
  unlink(out);
  unlink(tool);
  rmdir(dir);
}

int main(int argc, char **argv) {
  test_child();
  test_tool();
  if (argc > 1)
    test_server(argv[1]);
  return TEST_DONE("test_proc");
}
