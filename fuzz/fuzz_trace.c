/*
 * fuzz_trace.c: libFuzzer target over binary trace files, as `asyncfuzz check-trace --case`
 * reads them (the runtime library writes them, under mlir-runner, from code the harness did not
 * make): any file is read back or refused with a message; a trace read back is printed record
 * by record, goes through the happens-before checker and its report text, and is judged against
 * a case. (The text trace is written, never read: there is no text reader to fuzz.)
 */
#include "../check/check.h"
#include "../oracle/hb.h"
#include "fuzz_stats.h"

#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The case traces are judged against: two streams, a region that yields, an await. */
static const char case_json[] =
    "{\"format\": \"asyncfuzz-case\", \"version\": 1, \"seed\": \"0\", \"spin\": 4, \"buffers\": ["
    "{\"name\": \"h\", \"kind\": \"host\", \"n\": 2, \"init\": 0},"
    "{\"name\": \"m\", \"kind\": \"device\", \"n\": 2}], \"body\": ["
    "{\"op\": \"execute\", \"region\": \"r\", \"inputs\": [], \"body\": ["
    "{\"op\": \"wait_async\", \"deps\": [], \"token\": \"t0\"},"
    "{\"op\": \"alloc\", \"buf\": \"m\", \"mode\": \"async\", \"deps\": [\"t0\"], \"token\": "
    "\"t1\"},"
    "{\"op\": \"launch\", \"kernel\": \"af_fill\", \"args\": [\"m\"], \"value\": 42, \"deps\": "
    "[\"t1\"], \"token\": \"t2\"},"
    "{\"op\": \"memcpy\", \"dst\": \"h\", \"src\": \"m\", \"deps\": [\"t2\"], \"token\": \"t3\"}],"
    " \"yields\": [\"t3\"]},"
    "{\"op\": \"await\", \"value\": \"r.0\", \"token\": \"tok\"},"
    "{\"op\": \"host_wait\", \"deps\": [\"tok\"]}, {\"op\": \"observe\", \"buf\": \"h\"}]}";

static char path[64];

/* The file an input stands for. One that starts with 'A' (a trace's magic) is the file itself;
 * any other is a trace's body, its header made here: a byte for the ABI flavour, the summary,
 * then whole records, numbered in order (so most inputs get past the header and numbering
 * checks and reach the checker). */
static void write_input(FILE *f, const uint8_t *data, size_t size) {
  if (size > 0 && data[0] == 'A') {
    if (fwrite(data, 1, size, f) != size)
      abort();
    return;
  }
  RtSummary sum;
  memset(&sum, 0, sizeof sum);
  size_t at = size > 1 ? 2 : size;
  size_t ns = size - at < sizeof sum ? size - at : sizeof sum;
  memcpy(&sum, data + at, ns);
  at += ns;
  uint32_t n = (uint32_t)((size - at) / sizeof(RtRec));
  uint32_t hdr[6] = {ASYNCFUZZ_TRACE_VERSION,
                     (uint32_t)sizeof(RtRec),
                     n,
                     0,
                     0,
                     size > 1 ? (uint32_t)(data[1] % RT__ABI_COUNT) : 0};
  if (fwrite("AFTRACE1", 1, 8, f) != 8 || fwrite(hdr, sizeof hdr, 1, f) != 1 ||
      fwrite(&sum, sizeof sum, 1, f) != 1)
    abort();
  for (uint32_t i = 0; i < n; i++) {
    RtRec r;
    memcpy(&r, data + at + (size_t)i * sizeof r, sizeof r);
    r.seq = i;
    r.nargs %= RT_REC_ARGS + 1;
    if (fwrite(&r, sizeof r, 1, f) != 1)
      abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (path[0] == '\0') {
    snprintf(path, sizeof path, "/tmp/fuzz_trace_XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0)
      abort();
    close(fd);
  }
  FILE *f = fopen(path, "wb");
  if (f == NULL)
    abort();
  write_input(f, data, size);
  if (fclose(f) != 0)
    abort();
  CheckTrace t;
  AfErr err = {0};
  int rc = check_trace_load(path, &t, &err);
  fz_count("fuzz_trace", rc == 0);
  if (rc != 0) {
    if (err.msg[0] == '\0') {
      fprintf(stderr, "fuzz_trace: refused without a message (rc %d)\n", rc);
      abort();
    }
    return 0;
  }
  HbOptions ho = {0};
  hb_options_for(&ho, t.abi, 0);
  ho.max_reports = 200;
  HbResult *hb = NULL;
  GenCase c;
  OracleExpected *e = NULL;
  if (hb_check(t.recs, t.nrecs, &ho, &hb, &err) || gen_case_from_json(&c, case_json, &err) ||
      oracle_expect(&c, &e, &err)) {
    fprintf(stderr, "fuzz_trace: %s\n", err.msg);
    abort();
  }
  AfBuf b;
  af_buf_init(&b);
  for (int i = 0; i < t.nrecs && i < 4096; i++)
    asyncfuzz_rt_format_rec(&b, &t.recs[i]);
  oracle_format_reports(&b, NULL, hb, t.recs, t.nrecs);
  oracle_format_reports(&b, &c, hb, t.recs, t.nrecs);
  Verdict v;
  if (oracle_judge(&c, e, t.obs, t.nobs, t.recs, t.nrecs, &t.sum, hb, "fuzz", &v) == 0)
    oracle_format_verdict(&b, &v);
  af_buf_free(&b);
  oracle_expected_free(e);
  gen_case_free(&c);
  hb_result_free(hb);
  check_trace_free(&t);
  return 0;
}
