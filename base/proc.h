/*
 * proc.h: processes. An external tool (mlir-opt, mlir-runner) run from an argument vector, never
 * a shell, with its standard streams redirected to files, extra environment variables, and a
 * wall-clock limit after which the tool's whole process group is killed; and a child process
 * running a function of the harness, with pipes and a watchdog (AfChild).
 */
#ifndef BASE_PROC_H
#define BASE_PROC_H

#include "afbase.h"

typedef struct ProcResult {
  int exited;   /* 1: exited with `code` */
  int code;     /* exit status (127: it could not be started) */
  int signaled; /* 1: killed by signal `sig` (not by the time limit) */
  int sig;
  int timed_out; /* 1: ran past the limit and was killed */
  double seconds;
} ProcResult;

/* Runs argv[0] (a path; not looked up in PATH) with argv. in_path/out_path/err_path: files for
 * stdin/stdout/stderr (NULL: /dev/null). env: "NAME=VALUE" strings added to the environment,
 * NULL-terminated, or NULL. timeout_s <= 0: no limit. Returns 0 when the tool ran (whatever
 * its status: see *r), or an error when it could not be started. A bare "NAME" in env
 * removes that variable from the tool's environment. */
int af_proc_run(char *const argv[], char *const env[], const char *in_path, const char *out_path,
                const char *err_path, double timeout_s, ProcResult *r, AfErr *err);

/* Fork servers: with preload the path of libasyncfuzz_fs.so (base/forkserver.c; NULL or a path
 * that is not there: off), af_proc_run runs mlir-opt and mlir-runner through a started copy of
 * each program (one per path, per process), which forks for every run instead of starting the
 * tool again: the same arguments, environment, files, time limit and status. A server that cannot
 * start or dies leaves its runs to plain starts. The library in use ("": none). */
void af_proc_servers(const char *preload);
const char *af_proc_servers_lib(void);
/* (proc.c's use: a run through a server: 0 ran (*status, *timed_out), 1 no server: run it.) */
int af__server_run(char *const argv[], char *const env[], const char *in_path, const char *out_path,
                   const char *err_path, double timeout_s, int *status, int *timed_out);

/* The tools af_proc_run runs, by the name of their program (for where a process's time went). */
enum { AF_TOOL_MLIR_OPT, AF_TOOL_RUNNER, AF_TOOL_OTHER, AF_TOOL__COUNT };
/* The wall seconds this process has spent in af_proc_run, per kind of tool, so far. */
void af_proc_seconds(double out[AF_TOOL__COUNT]);

/* A child process the harness forks to run a function of its own (the GPU child, a batch's
 * runner, a reducer's job), with a pipe each way and a watchdog on every read. The fields are
 * -1 when absent. */
typedef struct AfChild {
  int pid;
  int to;   /* the parent's end of the pipe the child reads (fn's `in`) */
  int from; /* the parent's end of the pipe the child writes (fn's `out`) */
} AfChild;

/* Forks a child that runs fn(arg, in, out); fn ends the child with _exit and never returns.
 * With pipes 0, in and out are -1 and c has no pipes. The child gets SIGPIPE's default action.
 * 0, or AF_EIO (the pipes, the fork) with nothing left open. */
int af_child_start(AfChild *c, void (*fn)(void *arg, int in, int out), void *arg, int pipes,
                   AfErr *err);
/* Reads n bytes the child wrote; timeout_s < 0 waits for ever. 0, -1 (end of file or an error)
 * or -2 (nothing came in time). */
int af_child_read(AfChild *c, void *p, size_t n, double timeout_s);
/* Writes n bytes to the child (a child that died gives -1, not SIGPIPE). 0 or -1. */
int af_child_write(AfChild *c, const void *p, size_t n);
/* Waits for the child to exit, for at most timeout_s (<= 0: for ever); past it, kills the child
 * and its process group. Returns 1 when it was killed for the time, 0 when it exited, -1 when it
 * cannot be waited for (errno); *status: its wait status. */
int af_child_wait(AfChild *c, double timeout_s, int *status);
/* Ends the child: closes the pipes (the child reads end of file), sends sig (0: none), waits for
 * it (*status). Forgets it: c's fields are -1 after. */
void af_child_end(AfChild *c, int sig, int *status);
/* How a child ended, from its wait status (hung: the watchdog killed it after timeout_s): a word
 * for signatures ("hang", "signal-11", "exit-3") and words for people ("hung (no answer in 60 s)",
 * "was killed by signal 11 (Segmentation fault)", "exited with status 3"). */
void af_child_how(int status, int hung, double timeout_s, char *word, size_t wn, char *why,
                  size_t n);

/* CLOCK_MONOTONIC seconds (the watchdogs' clock). */
double af_mono(void);

/* Several children taking items 0..n-1 in turn (the GPU children, a batch's runners): each gets
 * the next item when it answers the last, under a watchdog per item. child[k] lives across runs
 * (pid -1: none yet, or ended: started again on demand). The callbacks, ctx theirs:
 *   start: starts child[slot] (af_pool_start_child); an error where no other child runs is
 *          the run's error, else that slot sits out the run;
 *   send:  hands item to child[slot]; -1 when the child is gone;
 *   recv:  reads child[slot]'s answer for item (it has something to read; left: the seconds its
 *          watchdog has left): 0, -1 (end of file or an error) or -2 (not all of it in time);
 *          it may end the child itself (af_child_end: the next item starts a fresh one);
 *   lost:  child[slot] died (hung 0) or hung on item and was ended (status: its wait status);
 *          nonzero stops the run with that error (err set): no more items are handed out and
 *          the ones in flight finish. */
typedef struct AfPool {
  AfChild *child;
  int k;
  double limit; /* seconds per item */
  void *ctx;
  int (*start)(struct AfPool *p, int slot, AfErr *err);
  int (*send)(struct AfPool *p, int slot, int item);
  int (*recv)(struct AfPool *p, int slot, int item, double left);
  int (*lost)(struct AfPool *p, int slot, int item, int status, int hung, AfErr *err);
} AfPool;

/* Runs items 0..n-1 on p's children, at most p->k at once. 0, or the first error. */
int af_pool_run(AfPool *p, int n, AfErr *err);
/* af_child_start for p->child[slot], its siblings' pipes closed in the new child (so that each
 * sees end of file when the parent closes its own). */
int af_pool_start_child(AfPool *p, int slot, void (*fn)(void *arg, int in, int out), void *arg,
                        AfErr *err);

/* Finds an executable: a name with a slash is taken as it is; otherwise each PATH directory.
 * Returns 1 and fills out, or 0. */
int af_find_exe(const char *name, char *out, size_t n);
/* Removes a directory tree made by the harness (its own temporary directories). */
void af_rm_tree(const char *dir);

#endif
