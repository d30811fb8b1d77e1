/*
 * test_case.c: the case JSON format and the validator. Round trips of the corpus and of
 * generated cases are byte-identical; every malformed or ill-formed input is rejected with
 * a message naming the op and the reason. argv[1]: the source directory.
 */
#include "../gen/gen.h"
#include "corpus.h"
#include "test.h"

#include <dirent.h>

static char *wrap(const char *buffers, const char *body) {
  AfBuf b;
  af_buf_init(&b);
  af_buf_printf(&b,
                "{\"format\": \"asyncfuzz-case\", \"version\": 1, \"seed\": \"0\", \"spin\": 4,\n"
                " \"buffers\": [%s],\n \"body\": [%s]}",
                buffers, body);
  return af_buf_take(&b);
}

#define HOSTDEV                                                                                    \
  "{\"name\": \"h\", \"kind\": \"host\", \"n\": 4}, {\"name\": \"d\", \"kind\": \"device\", "      \
  "\"n\": "                                                                                        \
  "4}, {\"name\": \"e\", \"kind\": \"device\", \"n\": 4}, {\"name\": \"h2\", \"kind\": \"host\", " \
  "\"n\": 4}"

typedef struct Bad {
  const char *what;
  const char *buffers;
  const char *body;
  int rc;
  const char *msg;
} Bad;

static const Bad bad_cases[] = {
    {"unknown op", HOSTDEV, "{\"op\": \"frobnicate\"}", AF_EPARSE, "unknown op \"frobnicate\""},
    {"unknown kernel", HOSTDEV,
     "{\"op\": \"alloc\", \"buf\": \"d\", \"mode\": \"sync\"},"
     "{\"op\": \"launch\", \"kernel\": \"nope\", \"args\": [\"d\"], \"deps\": [], \"token\": "
     "\"t\"}",
     AF_EINVALID, "unknown kernel \"nope\""},
    {"undefined token", HOSTDEV, "{\"op\": \"wait_async\", \"deps\": [\"t9\"], \"token\": \"t\"}",
     AF_EINVALID, "token t9 is used before it is defined"},
    {"reused token", HOSTDEV,
     "{\"op\": \"wait_async\", \"deps\": [], \"token\": \"t\"},"
     "{\"op\": \"wait_async\", \"deps\": [], \"token\": \"t\"}",
     AF_EINVALID, "token t is defined twice"},
    {"unknown buffer", HOSTDEV, "{\"op\": \"observe\", \"buf\": \"zz\"}", AF_EINVALID,
     "unknown buffer zz"},
    {"sync op with a token", HOSTDEV, "{\"op\": \"host_wait\", \"deps\": [], \"token\": \"t\"}",
     AF_EINVALID, "defines no token"},
    {"read before write", HOSTDEV,
     "{\"op\": \"alloc\", \"buf\": \"d\", \"mode\": \"sync\"},"
     "{\"op\": \"memcpy\", \"dst\": \"h\", \"src\": \"d\", \"deps\": [], \"token\": \"t\"}",
     AF_EINVALID, "reads b1, which is never written before it"},
    {"use before alloc", HOSTDEV,
     "{\"op\": \"memset\", \"dst\": \"d\", \"value\": 1, \"deps\": [], \"token\": \"t\"}",
     AF_EINVALID, "never allocated before it"},
    {"use not ordered after async alloc", HOSTDEV,
     "{\"op\": \"alloc\", \"buf\": \"d\", \"mode\": \"async\", \"deps\": [], \"token\": \"a\"},"
     "{\"op\": \"memset\", \"dst\": \"d\", \"value\": 1, \"deps\": [], \"token\": \"t\"}",
     AF_EINVALID, "without being ordered after its alloc"},
    {"write-write race", HOSTDEV,
     "{\"op\": \"alloc\", \"buf\": \"d\", \"mode\": \"sync\"},"
     "{\"op\": \"memset\", \"dst\": \"d\", \"value\": 1, \"deps\": [], \"token\": \"t1\"},"
     "{\"op\": \"memset\", \"dst\": \"d\", \"value\": 2, \"deps\": [], \"token\": \"t2\"}",
     AF_EINVALID, "op #2 (memset): writes b1, which op #1 also writes, with no token-DAG order"},
    {"read-write race", HOSTDEV,
     "{\"op\": \"alloc\", \"buf\": \"d\", \"mode\": \"sync\"},"
     "{\"op\": \"memset\", \"dst\": \"d\", \"value\": 1, \"deps\": [], \"token\": \"t1\"},"
     "{\"op\": \"memcpy\", \"dst\": \"h\", \"src\": \"d\", \"deps\": [\"t1\"], \"token\": \"t2\"},"
     "{\"op\": \"memset\", \"dst\": \"d\", \"value\": 2, \"deps\": [\"t1\"], \"token\": \"t3\"}",
     AF_EINVALID, "op #3 (memset): writes b1, which op #2 reads, with no token-DAG order"},
    {"host read without a wait", HOSTDEV,
     "{\"op\": \"alloc\", \"buf\": \"d\", \"mode\": \"sync\"},"
     "{\"op\": \"memset\", \"dst\": \"d\", \"value\": 1, \"deps\": [], \"token\": \"t1\"},"
     "{\"op\": \"memcpy\", \"dst\": \"h\", \"src\": \"d\", \"deps\": [\"t1\"], \"token\": \"t2\"},"
     "{\"op\": \"observe\", \"buf\": \"h\"}",
     AF_EINVALID, "op #3 (observe): reads b0, which op #2 writes, with no token-DAG order"},
    {"use after dealloc", HOSTDEV,
     "{\"op\": \"alloc\", \"buf\": \"d\", \"mode\": \"sync\"},"
     "{\"op\": \"memset\", \"dst\": \"d\", \"value\": 1, \"deps\": [], \"token\": \"t1\"},"
     "{\"op\": \"dealloc\", \"buf\": \"d\", \"async\": true, \"deps\": [\"t1\"], \"token\": "
     "\"t2\"},"
     "{\"op\": \"memset\", \"dst\": \"d\", \"value\": 1, \"deps\": [\"t2\"], \"token\": \"t3\"}",
     AF_EINVALID, "op #3 (memset): uses b1 after its dealloc (op #2)"},
    {"dealloc not after use", HOSTDEV,
     "{\"op\": \"alloc\", \"buf\": \"d\", \"mode\": \"sync\"},"
     "{\"op\": \"memset\", \"dst\": \"d\", \"value\": 1, \"deps\": [], \"token\": \"t1\"},"
     "{\"op\": \"dealloc\", \"buf\": \"d\", \"async\": false}",
     AF_EINVALID, "op #2 (dealloc): dealloc of b1 is not ordered after op #1"},
    {"double dealloc", HOSTDEV,
     "{\"op\": \"alloc\", \"buf\": \"d\", \"mode\": \"sync\"},"
     "{\"op\": \"dealloc\", \"buf\": \"d\", \"async\": false},"
     "{\"op\": \"dealloc\", \"buf\": \"d\", \"async\": false}",
     AF_EINVALID, "deallocates b1 twice"},
    {"double alloc", HOSTDEV,
     "{\"op\": \"alloc\", \"buf\": \"d\", \"mode\": \"sync\"},"
     "{\"op\": \"alloc\", \"buf\": \"d\", \"mode\": \"sync\"}",
     AF_EINVALID, "allocates b1 a second time"},
    {"observe device memory", HOSTDEV,
     "{\"op\": \"alloc\", \"buf\": \"d\", \"mode\": \"sync\"},"
     "{\"op\": \"memset\", \"dst\": \"d\", \"value\": 1, \"deps\": [], \"token\": \"t1\"},"
     "{\"op\": \"host_wait\", \"deps\": [\"t1\"]},"
     "{\"op\": \"observe\", \"buf\": \"d\"}",
     AF_EINVALID, "the host can read only host or host_shared memory"},
    {"host to host copy", HOSTDEV,
     "{\"op\": \"memcpy\", \"dst\": \"h\", \"src\": \"h2\", \"deps\": [], \"token\": \"t\"}",
     AF_EINVALID, "copies host to host"},
    {"aliased kernel args", HOSTDEV,
     "{\"op\": \"alloc\", \"buf\": \"d\", \"mode\": \"sync\"},"
     "{\"op\": \"memset\", \"dst\": \"d\", \"value\": 1, \"deps\": [], \"token\": \"t1\"},"
     "{\"op\": \"launch\", \"kernel\": \"af_transform\", \"args\": [\"d\", \"d\"], \"value\": 1, "
     "\"deps\": [\"t1\"], \"token\": \"t2\"}",
     AF_EINVALID, "kernel arguments must not alias"},
    {"memset of a host buffer", HOSTDEV,
     "{\"op\": \"memset\", \"dst\": \"h\", \"value\": 1, \"deps\": [], \"token\": \"t\"}",
     AF_EINVALID, "needs a device buffer"},
    {"region never awaited", HOSTDEV,
     "{\"op\": \"execute\", \"region\": \"r\", \"inputs\": [], \"body\": [], \"yields\": []}",
     AF_EINVALID, "region r1 (op #0) is never awaited"},
    {"token crossing into a region", HOSTDEV,
     "{\"op\": \"wait_async\", \"deps\": [], \"token\": \"t\"},"
     "{\"op\": \"execute\", \"region\": \"r\", \"inputs\": [], \"body\": ["
     "  {\"op\": \"wait_async\", \"deps\": [\"t\"], \"token\": \"u\"}], \"yields\": []},"
     "{\"op\": \"await\", \"region\": \"r\"}",
     AF_EINVALID, "depends on token t0 of another context"},
    {"observe in a region", HOSTDEV,
     "{\"op\": \"execute\", \"region\": \"r\", \"inputs\": [], \"body\": ["
     "  {\"op\": \"observe\", \"buf\": \"h\"}], \"yields\": []},"
     "{\"op\": \"await\", \"region\": \"r\"}",
     AF_EINVALID, "observe must be in the host's main function"},
    {"await of a value not yielded", HOSTDEV,
     "{\"op\": \"execute\", \"region\": \"r\", \"inputs\": [], \"body\": [], \"yields\": []},"
     "{\"op\": \"await\", \"value\": \"r.0\", \"token\": \"t\"}",
     AF_EINVALID, "awaits value 0 of r1, which yields fewer values"},
    {"unknown region", HOSTDEV, "{\"op\": \"await\", \"value\": \"r7.0\", \"token\": \"t\"}",
     AF_EINVALID, "region r7 is used before its execute op"},
    {"too many deps", HOSTDEV,
     "{\"op\": \"wait_async\", \"deps\": [], \"token\": \"a\"},"
     "{\"op\": \"wait_async\", \"deps\": [\"a\",\"a\",\"a\",\"a\",\"a\"], \"token\": \"b\"}",
     AF_EINVALID, "too many dependencies"},
    {"deps not an array", HOSTDEV, "{\"op\": \"wait_async\", \"deps\": 3, \"token\": \"a\"}",
     AF_EPARSE, "\"deps\" must be an array"},
};

static void test_bad_inputs(void) {
  for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
    const Bad *b = &bad_cases[i];
    char *json = wrap(b->buffers, b->body);
    GenCase c;
    AfErr err = {0};
    int rc = gen_case_from_json(&c, json, &err);
    if (rc == 0)
      rc = gen_validate(&c, &err);
    if (rc != b->rc || strstr(err.msg, b->msg) == NULL)
      fprintf(stderr, "case \"%s\": rc %d, message: %s\n", b->what, rc, err.msg);
    CHECK_EQ(rc, b->rc);
    CHECK_CONTAINS(err.msg, b->msg);
    CHECK_CONTAINS(err.msg, "op #");
    CHECK(strstr(err.msg, "(null)") == NULL);
    gen_case_free(&c);
    af_free(json);
  }
}

static void test_malformed_files(void) {
  const char *texts[] = {
      "",
      "{",
      "[1, 2]",
      "{\"format\": \"asyncfuzz-case\", \"version\": 99, \"spin\": 1, \"buffers\": [], \"body\": "
      "[]}",
      "{\"format\": \"other\", \"version\": 1}",
      "{\"format\": \"asyncfuzz-case\", \"version\": 1, \"spin\": -1, \"buffers\": [], \"body\": "
      "[]}",
      "{\"format\": \"asyncfuzz-case\", \"version\": 1, \"spin\": 1, \"buffers\": [{\"name\": "
      "\"x\", \"kind\": \"host\", \"n\": 0}], \"body\": []}",
      "{\"format\": \"asyncfuzz-case\", \"version\": 1, \"spin\": 1, \"buffers\": {}, \"body\": "
      "[]}",
  };
  const char *msgs[] = {
      "malformed JSON",
      "malformed JSON",
      "not an asyncfuzz case",
      "version",
      "not an asyncfuzz case",
      "spin",
      "1..1024",
      "\"buffers\" must be an array",
  };
  for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
    GenCase c;
    AfErr err = {0};
    int rc = gen_case_from_json(&c, texts[i], &err);
    CHECK_EQ(rc, AF_EPARSE);
    CHECK_CONTAINS(err.msg, msgs[i]);
    CHECK_EQ(c.nops, 0);
    gen_case_free(&c);
  }
  GenCase c;
  AfErr err = {0};
  CHECK_EQ(gen_case_load(&c, "/nonexistent/asyncfuzz-case.json", &err), AF_EIO);
  CHECK_CONTAINS(err.msg, "cannot open");
  gen_case_free(&c);
}

/* Version 2 (captures): accepted only where declared, checked like any other input; written
 * as version 2 only when a case uses a capture. */
static void test_captures(void) {
  static const char *head =
      "{\"format\": \"asyncfuzz-case\", \"version\": %d, \"seed\": \"0\", \"spin\": 4,"
      " \"buffers\": [{\"name\": \"d\", \"kind\": \"device\", \"n\": 4}],"
      " \"body\": [{\"op\": \"alloc\", \"buf\": \"d\", \"mode\": \"sync\"},"
      " {\"op\": \"memset\", \"dst\": \"d\", \"value\": 1, \"deps\": [], \"token\": \"t0\"},"
      " {\"op\": \"execute\", \"region\": \"r1\", \"inputs\": [], \"captures\": [%s], \"body\": ["
      "  %s], \"yields\": []},"
      " {\"op\": \"await\", \"region\": \"r1\"}]}";
  static const struct {
    int version;
    const char *caps, *body;
    int rc;
    const char *msg;
  } t[] = {
      {1, "{\"token\": \"t0\", \"as\": \"c\"}", "", AF_EINVALID, "needs case format version 2"},
      {2, "{\"token\": \"t7\", \"as\": \"c\"}", "", AF_EINVALID,
       "token t7 is used before it is defined"},
      {2, "{\"as\": \"c\"}", "", AF_EPARSE, "a capture needs \"token\""},
      {3, "", "", AF_EPARSE, "unsupported case format version (this build reads 1 to 2)"},
      {2, "{\"token\": \"t0\", \"as\": \"c\"}",
       "{\"op\": \"execute\", \"region\": \"r2\", \"inputs\": [], \"captures\": [{\"token\": "
       "\"t0\", \"as\": \"c2\"}], \"body\": [], \"yields\": []}, {\"op\": \"await\", \"region\": "
       "\"r2\"}",
       AF_EINVALID, "captures token t0 of another context"},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    char json[2048];
    snprintf(json, sizeof json, head, t[i].version, t[i].caps, t[i].body);
    GenCase c;
    AfErr err = {0};
    int rc = gen_case_from_json(&c, json, &err);
    if (rc == 0)
      rc = gen_validate(&c, &err);
    if (rc != t[i].rc || strstr(err.msg, t[i].msg) == NULL)
      fprintf(stderr, "capture case %zu: rc %d, message: %s\n", i, rc, err.msg);
    CHECK_EQ(rc, t[i].rc);
    CHECK_CONTAINS(err.msg, t[i].msg);
    gen_case_free(&c);
  }
  /* a valid capture: version 2 written; without one: version 1 */
  char json[2048];
  snprintf(json, sizeof json, head, 2, "{\"token\": \"t0\", \"as\": \"c\"}",
           "{\"op\": \"memset\", \"dst\": \"d\", \"value\": 2, \"deps\": [\"c\"], \"token\": "
           "\"t9\"}");
  GenCase c;
  AfErr err = {0};
  CHECK_EQ(gen_case_from_json(&c, json, &err), 0);
  CHECK_EQ(gen_validate(&c, &err), 0);
  char *out = gen_case_to_json(&c);
  CHECK_CONTAINS(out, "\"version\": 2,");
  CHECK_CONTAINS(out, "\"captures\": [{\"token\": \"t0\", \"as\": \"t1\"}]");
  af_free(out);
  gen_case_free(&c);
  snprintf(json, sizeof json, head, 2, "", "");
  CHECK_EQ(gen_case_from_json(&c, json, &err), 0);
  out = gen_case_to_json(&c);
  CHECK_CONTAINS(out, "\"version\": 1,");
  af_free(out);
  gen_case_free(&c);
}

/* An input a version-2 construct makes ill-formed: `body` in a case of `version`, refused with rc
 * and an error containing msg. */
typedef struct Refusal {
  int version;
  const char *body;
  int rc;
  const char *msg;
} Refusal;

/* Each of t[0..n) put into head (version, body) is refused as it says. */
static void expect_refusals(const char *what, const char *head, const Refusal *t, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char json[4096];
    snprintf(json, sizeof json, head, t[i].version, t[i].body);
    GenCase c;
    AfErr err = {0};
    int rc = gen_case_from_json(&c, json, &err);
    if (rc == 0)
      rc = gen_validate(&c, &err);
    if (rc != t[i].rc || strstr(err.msg, t[i].msg) == NULL)
      fprintf(stderr, "%s case %zu: rc %d, message: %s\n", what, i, rc, err.msg);
    CHECK_EQ(rc, t[i].rc);
    CHECK_CONTAINS(err.msg, t[i].msg);
    gen_case_free(&c);
  }
}

/* Explicit streams (version 2): every misuse named with its op; stream order counts as order. */
static void test_streams(void) {
  static const char *head =
      "{\"format\": \"asyncfuzz-case\", \"version\": %d, \"seed\": \"0\", \"spin\": 4,"
      " \"buffers\": [{\"name\": \"d\", \"kind\": \"device\", \"n\": 4}],"
      " \"body\": [{\"op\": \"alloc\", \"buf\": \"d\", \"mode\": \"sync\"}, %s]}";
#define FILL(s) "{\"op\": \"launch\", \"kernel\": \"af_fill\", \"args\": [\"d\"], " s "}"
  static const Refusal t[] = {
      {1, "{\"op\": \"stream_create\", \"stream\": \"s\"}", AF_EINVALID,
       "need case format version 2"},
      {2, "{\"op\": \"stream_create\"}", AF_EPARSE, "op #1: missing \"stream\""},
      {2, FILL("\"stream\": \"s\", \"deps\": [], \"token\": \"a\""), AF_EINVALID,
       "op #1: stream s is used before its stream_create"},
      {2,
       "{\"op\": \"stream_create\", \"stream\": \"s\"}, {\"op\": \"stream_create\", "
       "\"stream\": \"s\"}",
       AF_EINVALID, "op #2: stream s is created twice"},
      /* two launches on no common stream race; on one stream they are ordered */
      {2,
       "{\"op\": \"stream_create\", \"stream\": \"s\"}, " FILL(
           "\"stream\": \"s\", \"deps\": [], "
           "\"token\": \"a\"") ", " FILL("\"deps\": [], "
                                         "\"token\": \"b\"") ", "
                                                             "{\"op\": "
                                                             "\"stream_destroy\", "
                                                             "\"stream\": \"s\"}",
       AF_EINVALID, "op #3 (launch): writes b0, which op #2 also writes"},
      {2, "{\"op\": \"stream_create\", \"stream\": \"s\"}", AF_EINVALID,
       "stream s0 (created by op #1) is never destroyed"},
      {2,
       "{\"op\": \"stream_create\", \"stream\": \"s\"}, {\"op\": \"stream_destroy\", "
       "\"stream\": \"s\"}, {\"op\": \"stream_sync\", \"stream\": \"s\"}",
       AF_EINVALID, "op #3 (stream_sync): uses stream s0 after its stream_destroy (op #2)"},
      {2,
       "{\"op\": \"stream_create\", \"stream\": \"s\"}, {\"op\": \"execute\", \"region\": "
       "\"r1\", \"inputs\": [], \"body\": [" FILL(
           "\"stream\": \"s\", \"deps\": [], \"token\": \"a\"") "], \"yields\": []}, {\"op\": "
                                                                "\"await\", \"region\": "
                                                                "\"r1\"}, {\"op\": "
                                                                "\"stream_destroy\", "
                                                                "\"stream\": \"s\"}",
       AF_EINVALID, "op #3 (launch): uses stream s0 of another context (r0)"},
  };
  expect_refusals("stream", head, t, sizeof t / sizeof t[0]);
  /* the same two launches on one stream: valid, and written as version 2 with the stream */
  char json[2048];
  snprintf(
      json, sizeof json, head, 2,
      "{\"op\": \"stream_create\", \"stream\": \"s\"}, " FILL(
          "\"stream\": \"s\", \"deps\": [], "
          "\"token\": \"a\"") ", " FILL("\"stream\": \"s\", \"deps\": [], \"token\": \"b\"") ", "
                                                                                             "{\"op"
                                                                                             "\": "
                                                                                             "\"str"
                                                                                             "eam_"
                                                                                             "destr"
                                                                                             "oy\","
                                                                                             " "
                                                                                             "\"str"
                                                                                             "eam\""
                                                                                             ": "
                                                                                             "\"s\""
                                                                                             "}");
#undef FILL
  GenCase c;
  AfErr err = {0};
  CHECK_EQ(gen_case_from_json(&c, json, &err), 0);
  CHECK_EQ(gen_validate(&c, &err), 0);
  CHECK_EQ(c.nstreams, 1);
  char *out = gen_case_to_json(&c);
  CHECK_CONTAINS(out, "\"version\": 2,");
  CHECK_CONTAINS(out, "\"value\": 0, \"stream\": \"s0\", \"deps\": []");
  CHECK_CONTAINS(out, "{\"op\": \"stream_destroy\", \"stream\": \"s0\"}");
  af_free(out);
  gen_case_free(&c);
}

/* Blocks (version 2): every ill-formed call, if, for and branch named with its op. */
static void test_blocks(void) {
  static const char *head =
      "{\"format\": \"asyncfuzz-case\", \"version\": %d, \"seed\": \"0\", \"spin\": 4,"
      " \"buffers\": [{\"name\": \"h\", \"kind\": \"host\", \"n\": 4},"
      " {\"name\": \"d\", \"kind\": \"device\", \"n\": 4}, {\"name\": \"e\", \"kind\": "
      "\"device\", \"n\": 4}],"
      " \"body\": [{\"op\": \"alloc\", \"buf\": \"d\", \"mode\": \"sync\"},"
      " {\"op\": \"alloc\", \"buf\": \"e\", \"mode\": \"sync\"},"
      " {\"op\": \"memset\", \"dst\": \"d\", \"value\": 1, \"deps\": [], \"token\": \"t0\"}, %s]}";
#define MS(dst, dep, tok)                                                                          \
  "{\"op\": \"memset\", \"dst\": \"" dst "\", \"value\": 2, \"deps\": [" dep                       \
  "], \"token\": \"" tok "\"}"
  static const Refusal t[] = {
      {1, "{\"op\": \"if\", \"taken\": true, \"body\": []}", AF_EINVALID,
       "\"if\" needs case format version 2"},
      {2, "{\"op\": \"if\", \"body\": []}", AF_EPARSE, "op #3: if needs \"taken\""},
      {2, "{\"op\": \"for\", \"trips\": 0, \"inputs\": [{\"token\": \"t0\", \"as\": \"p\"}]}",
       AF_EINVALID, "for needs \"trips\", 1 to 64"},
      {2, "{\"op\": \"frob\", \"taken\": true}", AF_EPARSE, "unknown op \"frob\""},
      /* a call's body sees only its inputs */
      {2, "{\"op\": \"call\", \"body\": [" MS("e", "\"t0\"", "x") "]}", AF_EINVALID,
       "op #4 (memset): depends on token t0, which is not visible in its block"},
      /* a block's token does not escape it */
      {2,
       "{\"op\": \"if\", \"taken\": true, \"body\": [" MS("e", "\"t0\"",
                                                          "x") "]}, " MS("e", "\"x\"", "y"),
       AF_EINVALID, "op #5 (memset): depends on token t1, which is not visible in its block"},
      {2, "{\"op\": \"if\", \"taken\": true, \"body\": [{\"op\": \"if\", \"taken\": true}]}",
       AF_EINVALID, "a if inside a block body (blocks do not nest)"},
      {2, "{\"op\": \"if\", \"taken\": true, \"body\": [{\"op\": \"observe\", \"buf\": \"h\"}]}",
       AF_EINVALID, "op #4 (observe): cannot be in the body of a if"},
      {2,
       "{\"op\": \"if\", \"taken\": true, \"body\": [" MS("e", "\"t0\"", "x") "], \"yields\": "
                                                                              "[\"x\"]}",
       AF_EINVALID, "exactly when its body yields one"},
      /* a for: every op follows the carried token; no op writes what an earlier one read */
      {2,
       "{\"op\": \"for\", \"trips\": 2, \"inputs\": [{\"token\": \"t0\", \"as\": \"p\"}], "
       "\"body\": [" MS("e", "", "x") "], \"yields\": [\"x\"], \"token\": \"r\"}",
       AF_EINVALID, "op #4 (memset): in a for's body, does not follow the carried token"},
      {2,
       "{\"op\": \"for\", \"trips\": 2, \"inputs\": [{\"token\": \"t0\", \"as\": \"p\"}], "
       "\"body\": [{\"op\": \"memcpy\", \"dst\": \"e\", \"src\": \"d\", \"deps\": [\"p\"], "
       "\"token\": \"x\"}, " MS("d", "\"x\"", "y") "], \"yields\": [\"y\"], \"token\": \"r\"}",
       AF_EINVALID, "op #5 (memset): writes b1, which an earlier op of the for's body reads"},
      {2,
       "{\"op\": \"for\", \"trips\": 2, \"inputs\": [], \"body\": [], \"yields\": [\"t0\"], "
       "\"token\": \"r\"}",
       AF_EINVALID, "op #3 (for): a for carries exactly one token"},
      {2, "{\"op\": \"branch\", \"taken\": true, \"buffer_args\": [\"zz\"]}", AF_EINVALID,
       "a buffer argument is not a known buffer"},
      {2, "{\"op\": \"call\", \"buffer_args\": [\"d\"]}", AF_EINVALID,
       "\"buffer_args\" is a branch's array"},
      {2,
       "{\"op\": \"execute\", \"region\": \"r1\", \"inputs\": [], \"body\": [{\"op\": "
       "\"branch\", \"taken\": true}], \"yields\": []}, {\"op\": \"await\", \"region\": "
       "\"r1\"}",
       AF_EINVALID, "op #4 (branch): a branch is in main only"},
  };
#undef MS
  expect_refusals("block", head, t, sizeof t / sizeof t[0]);
}

/* Views (version 2): outside the buffer, unequal copies, on the wrong op, before a whole write. */
static void test_views(void) {
  static const char *head =
      "{\"format\": \"asyncfuzz-case\", \"version\": %d, \"seed\": \"0\", \"spin\": 4,"
      " \"buffers\": [{\"name\": \"h\", \"kind\": \"host\", \"n\": 8},"
      " {\"name\": \"d\", \"kind\": \"device\", \"n\": 8}],"
      " \"body\": [{\"op\": \"alloc\", \"buf\": \"d\", \"mode\": \"sync\"}, %s]}";
  static const Refusal t[] = {
      {1,
       "{\"op\": \"memcpy\", \"dst\": \"d\", \"src\": \"h\", \"src_view\": [0, 8, 1], "
       "\"deps\": [], \"token\": \"a\"}",
       AF_EINVALID, "\"src_view\" needs case format version 2"},
      {2,
       "{\"op\": \"memcpy\", \"dst\": \"d\", \"src\": \"h\", \"src_view\": [4, 3, 2], "
       "\"deps\": [], \"token\": \"a\"}",
       AF_EINVALID,
       "op #1 (memcpy): its src view [4, 3, 2] (offset, length, stride) lies outside b0 (8 "
       "elements)"},
      {2,
       "{\"op\": \"memcpy\", \"dst\": \"d\", \"src\": \"h\", \"src_view\": [0, 4, 1], "
       "\"deps\": [], \"token\": \"a\"}",
       AF_EINVALID, "op #1 (memcpy): copies between views or buffers of different sizes (4 and 8"},
      {2,
       "{\"op\": \"memset\", \"dst\": \"d\", \"value\": 1, \"dst_view\": [0, 2, 1], "
       "\"deps\": [], \"token\": \"a\"}",
       AF_EINVALID, "op #1 (memset): writes a view of b1 before the whole buffer is written"},
      {2,
       "{\"op\": \"memset\", \"dst\": \"d\", \"value\": 1, \"src_view\": [0, 2, 1], "
       "\"deps\": [], \"token\": \"a\"}",
       AF_EINVALID, "\"src_view\" belongs to a memcpy"},
      {2,
       "{\"op\": \"memset\", \"dst\": \"d\", \"value\": 1, \"dst_view\": [0, 0, 1], "
       "\"deps\": [], \"token\": \"a\"}",
       AF_EPARSE, "\"dst_view\" is [offset, length, stride]"},
  };
  /* a static allocation (cast to the dynamic shape) is for device buffers, in version 2 */
  {
    GenCase c;
    AfErr err = {0};
    const char *host_static =
        "{\"format\": \"asyncfuzz-case\", \"version\": 2, \"seed\": \"0\", \"spin\": 4,"
        " \"buffers\": [{\"name\": \"h\", \"kind\": \"host\", \"n\": 8, \"static\": true}],"
        " \"body\": []}";
    CHECK_EQ(gen_case_from_json(&c, host_static, &err), AF_EPARSE);
    CHECK_CONTAINS(err.msg, "buffer h: \"static\" (true or false) is for device buffers");
    gen_case_free(&c);
  }
  expect_refusals("view", head, t, sizeof t / sizeof t[0]);
}

/* Kernel operands as views (version 2): each one inside its buffer, all of one length, the
 * destination's only after a whole write; the view forms of the kernels are the renderer's. */
static void test_kernel_views(void) {
  static const char *head =
      "{\"format\": \"asyncfuzz-case\", \"version\": %d, \"seed\": \"0\", \"spin\": 4,"
      " \"buffers\": [{\"name\": \"d\", \"kind\": \"device\", \"n\": 8},"
      " {\"name\": \"e\", \"kind\": \"device\", \"n\": 8}],"
      " \"body\": [{\"op\": \"alloc\", \"buf\": \"d\", \"mode\": \"sync\"},"
      " {\"op\": \"alloc\", \"buf\": \"e\", \"mode\": \"sync\"},"
      " {\"op\": \"memset\", \"dst\": \"d\", \"value\": 1, \"deps\": [], \"token\": \"z\"}, %s]}";
#define L "{\"op\": \"launch\", \"kernel\": "
  static const Refusal t[] = {
      {1,
       L "\"af_fill\", \"args\": [\"d\"], \"arg_views\": [[0, 2, 1]], \"deps\": [\"z\"], "
         "\"token\": \"a\"}",
       AF_EINVALID, "\"arg_views\" needs case format version 2"},
      {2,
       L "\"af_fill\", \"args\": [\"d\"], \"arg_views\": [[6, 3, 1]], \"deps\": [\"z\"], "
         "\"token\": \"a\"}",
       AF_EINVALID,
       "op #3 (launch): its argument 0 view [6, 3, 1] (offset, length, stride) lies outside b0 (8 "
       "elements)"},
      {2,
       L "\"af_transform\", \"args\": [\"d\", \"e\"], \"arg_views\": [null, [0, 4, 2]], "
         "\"deps\": [\"z\"], \"token\": \"a\"}",
       AF_EINVALID, "op #3 (launch): passes buffers or views of different sizes (b0, b1)"},
      {2,
       L "\"af_fill\", \"args\": [\"e\"], \"arg_views\": [[0, 2, 1]], \"deps\": [\"z\"], "
         "\"token\": \"a\"}",
       AF_EINVALID, "op #3 (launch): writes a view of b1 before the whole buffer is written"},
      {2,
       L "\"af_fill\", \"args\": [\"d\"], \"arg_views\": [], \"deps\": [\"z\"], "
         "\"token\": \"a\"}",
       AF_EPARSE, "\"arg_views\" is an array with one entry per argument (a view or null)"},
      {2,
       L "\"af_fill\", \"args\": [\"d\"], \"dst_view\": [0, 2, 1], \"deps\": [\"z\"], "
         "\"token\": \"a\"}",
       AF_EINVALID, "\"dst_view\" belongs to a memcpy or memset (a launch has \"arg_views\")"},
      {2, L "\"af_fill_v\", \"args\": [\"d\"], \"deps\": [\"z\"], \"token\": \"a\"}", AF_EINVALID,
       "kernel \"af_fill_v\" is a form the renderer picks (for views, for its buffers' type); name "
       "af_fill"},
      {2,
       "{\"op\": \"memset\", \"dst\": \"d\", \"value\": 1, \"arg_views\": [[0, 2, 1]], "
       "\"deps\": [\"z\"], \"token\": \"a\"}",
       AF_EINVALID, "only a launch has \"arg_views\""},
  };
#undef L
  expect_refusals("kernel view", head, t, sizeof t / sizeof t[0]);
}

static void roundtrip(const GenCase *c) {
  char *j1 = gen_case_to_json(c);
  GenCase d;
  AfErr err = {0};
  CHECK_EQ(gen_case_from_json(&d, j1, &err), 0);
  CHECK_EQ(gen_validate(&d, &err), 0);
  char *j2 = gen_case_to_json(&d);
  CHECK_STR(j2, j1);
  CHECK_EQ(gen_case_hash(&d), gen_case_hash(c));
  af_free(j1);
  af_free(j2);
  gen_case_free(&d);
}

static void test_roundtrips(const char *srcdir) {
  /* the list is the whole corpus: a case added to corpus/ and not to it fails here */
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/corpus", srcdir);
  DIR *dp = opendir(dir);
  size_t files = 0;
  for (struct dirent *e = dp ? readdir(dp) : NULL; e; e = readdir(dp))
    files += strlen(e->d_name) > 5 && strcmp(e->d_name + strlen(e->d_name) - 5, ".json") == 0;
  if (dp)
    closedir(dp);
  CHECK_EQ(files, NCORPUS);
  for (size_t i = 0; i < NCORPUS; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/corpus/%s.json", srcdir, corpus[i]);
    GenCase c;
    AfErr err = {0};
    int rc = gen_case_load(&c, path, &err);
    if (rc)
      fprintf(stderr, "%s: %s\n", path, err.msg);
    CHECK_EQ(rc, 0);
    CHECK_EQ(gen_validate(&c, &err), 0);
    roundtrip(&c);
    gen_case_free(&c);
  }
  GenConfig cfg;
  gen_config_default(&cfg);
  cfg.region_pct = 20;
  for (uint64_t s = 0; s < 300; s++) {
    GenCase c;
    AfErr err = {0};
    CHECK_EQ(gen_generate(&c, s, &cfg, &err), 0);
    roundtrip(&c);
    gen_case_free(&c);
  }
  /* saving is atomic and readable back */
  GenCase c;
  AfErr err = {0};
  CHECK_EQ(gen_generate(&c, 5, &cfg, &err), 0);
  char path[] = "test_case_save.json";
  CHECK_EQ(gen_case_save(&c, path, &err), 0);
  GenCase d;
  CHECK_EQ(gen_case_load(&d, path, &err), 0);
  CHECK_EQ(gen_case_hash(&d), gen_case_hash(&c));
  CHECK_EQ(d.seed, 5);
  CHECK_EQ(gen_case_save(&c, "/nonexistent-dir/x.json", &err), AF_EIO);
  remove(path);
  gen_case_free(&c);
  gen_case_free(&d);
}

int main(int argc, char **argv) {
  test_bad_inputs();
  test_malformed_files();
  test_captures();
  test_streams();
  test_blocks();
  test_views();
  test_kernel_views();
  test_roundtrips(argc > 1 ? argv[1] : "..");
  return TEST_DONE("test_case");
}
