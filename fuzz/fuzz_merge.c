/*
 * fuzz_merge.c: libFuzzer target over `asyncfuzz db merge OTHER.db`, whose file comes from
 * another runner: any file is merged into a fresh database or refused with a message, merging
 * it twice changes nothing more, and the merged database answers the queries triage makes (list,
 * stats, show, the fixed and regression lists, the report page).
 */
#include "../results/store.h"
#include "fuzz_stats.h"

#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64], src[96], dst[96];

static void remove_db(const char *p) {
  static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
  char q[128];
  for (int i = 0; i < 4; i++) {
    snprintf(q, sizeof q, "%s%s", p, suffix[i]);
    unlink(q);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 1 << 20)
    return 0;
  if (dir[0] == '\0') {
    snprintf(dir, sizeof dir, "/tmp/fuzz_merge_XXXXXX");
    if (mkdtemp(dir) == NULL)
      abort();
    snprintf(src, sizeof src, "%s/other.db", dir);
    snprintf(dst, sizeof dst, "%s/central.db", dir);
  }
  remove_db(src);
  remove_db(dst);
  FILE *f = fopen(src, "wb");
  if (f == NULL || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
    abort();
  AfErr err = {0};
  Store *o = NULL;
  int opened = store_open(src, 0, &o, &err) == 0; /* (the merge opens it first, as this does) */
  store_close(o);
  fz_count("fuzz_merge", opened);
  Store *s = NULL;
  if (store_open(dst, 1, &s, &err) != 0) {
    fprintf(stderr, "fuzz_merge: a fresh database: %s\n", err.msg);
    abort();
  }
  af_err_clear(&err);
  int rc = store_merge(s, src, &err);
  if (rc != 0 && err.msg[0] == '\0') {
    fprintf(stderr, "fuzz_merge: refused without a message (rc %d)\n", rc);
    abort();
  }
  if (rc == 0) {
    af_err_clear(&err);
    store_merge(s, src, &err);
    StoreFilter all = {-1, NULL, NULL, 0};
    AfBuf b;
    af_buf_init(&b);
    store_list(s, &all, &b, &err);
    store_stats(s, &b, &err);
    for (int64_t id = 1; id <= 3; id++)
      store_show_matrix(s, id, &b, &err);
    store_list_versions(s, &all, 0, &b, &err);
    store_list_versions(s, &all, 1, &b, &err);
    store_report_html(s, &b, &err);
    af_buf_free(&b);
  }
  store_close(s);
  return 0;
}
