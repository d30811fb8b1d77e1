/*
 * proc.h: running an external tool (mlir-opt, mlir-runner) from an argument vector, never a
 * shell, with its standard streams redirected to files, extra environment variables, and a
 * wall-clock limit after which the tool's whole process group is killed.
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

/* Finds an executable: a name with a slash is taken as it is; otherwise each PATH directory.
 * Returns 1 and fills out, or 0. */
int af_find_exe(const char *name, char *out, size_t n);
/* Removes a directory tree made by the harness (its own temporary directories). */
void af_rm_tree(const char *dir);

#endif
