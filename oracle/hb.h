/*
 * hb.h: the happens-before checker over a runtime trace
 * (../shared/reference/stream-semantics-and-hb.md, section 5).
 *
 * It replays the trace with vector clocks over agents (host threads and streams): an enqueue
 * on a stream joins the host's clock into the stream's; an event is a snapshot of its stream's
 * clock when recorded; StreamWaitEvent joins a snapshot into a stream; Event/StreamSynchronize
 * join into the host; region spawn, yield and await notes carry clocks between threads. Only
 * orderings the CUDA documentation guarantees create edges: a call that failed creates none
 * (so an EventSynchronize given a stream orders nothing), and mgpuMemFree synchronizes
 * nothing unless the lenient option credits it (the rocm flavour's hipFree does). With
 * legacy_sync the legacy stream orders itself with the created streams. Shadow state per buffer
 * byte range keeps the last write and the reads since, so a missing synchronization is reported
 * from the trace alone, whatever the schedule happened to do.
 *
 * It reads only the trace (no Case): oracle.c maps reports to Case ops for signatures.
 */
#ifndef ORACLE_HB_H
#define ORACLE_HB_H

#include "../runtime/asyncfuzz_rt.h"

/* X(ID, name, is_error) */
#define HB_KIND_MAP(X)                                                                             \
  X(DATA_RACE, "data_race", 1)                                                                     \
  X(HOST_READ_BEFORE_COMPLETE, "host_read_before_complete", 1)                                     \
  X(HOST_WRITE_WHILE_IN_USE, "host_write_while_in_use", 1)                                         \
  X(USE_AFTER_FREE, "use_after_free", 1)                                                           \
  X(USE_BEFORE_ALLOC, "use_before_alloc", 1)                                                       \
  X(FREE_WHILE_IN_USE, "free_while_in_use", 1)                                                     \
  X(DOUBLE_FREE, "double_free", 1)                                                                 \
  X(INVALID_FREE, "invalid_free", 1)                                                               \
  X(LEAK_STREAM, "leaked_stream", 1)                                                               \
  X(LEAK_EVENT, "leaked_event", 1)                                                                 \
  X(LEAK_BUFFER, "leaked_buffer", 1)                                                               \
  X(INVALID_HANDLE, "invalid_handle", 1)                                                           \
  X(USE_OF_DESTROYED_HANDLE, "use_of_destroyed_handle", 1)                                         \
  X(WAIT_ON_UNRECORDED_EVENT, "wait_on_unrecorded_event", 0)

typedef enum HbKind {
#define HB__KENUM(id, name, err) HB_##id,
  HB_KIND_MAP(HB__KENUM)
#undef HB__KENUM
      HB__KIND_COUNT
} HbKind;

#define HB_NO_AGENT INT32_MIN

enum { HB_SUB_NONE, HB_SUB_RAW, HB_SUB_WAR, HB_SUB_WAW, HB_SUB_WRONG_KIND };

typedef struct HbReport {
  int kind;               /* HbKind */
  int subkind;            /* HB_SUB_* */
  int32_t seq1, seq2;     /* the earlier and the later trace call (seq1 = -1 when there is none) */
  int32_t op1, op2;       /* their Case op tags (-1: none) */
  RtRef buf;              /* buffer (RT_REF_BUF / RT_REF_HOST) or handle involved */
  uint32_t lo, hi;        /* byte range */
  int32_t agent1, agent2; /* agents: >= 0 host thread T<n>; < 0 stream s<-1-agent>;
                             HB_NO_AGENT when the report has none (leaks) */
} HbReport;

typedef struct HbOptions {
  int lenient_free; /* credit mgpuMemFree with synchronizing the whole device */
  int legacy_sync;  /* created streams are blocking (the rocm flavour): an enqueue on the
                       legacy stream s0 follows everything enqueued on them before, and their
                       later work follows it */
  int max_reports;  /* 0: 64 */
  /* Optional sizes of the trace's id spaces (RtSummary's max_*), which spare the checker a
   * pass over the trace; all 0: it scans. Ids beyond them count as unknown. */
  int nthreads, nstreams, nevents, nregions, nasync;
  /* > 0: also record what each case op 0..nops-1 knew when it acted (HbResult's know), and
   * each trace record's epoch, for hb_op_knows(). Costs a row copy per tagged record. */
  int nops;
} HbOptions;

typedef struct HbResult {
  int nreports; /* errors and warnings, sorted by (seq2, seq1), deduplicated */
  HbReport *reports;
  int nerrors;      /* reports whose kind is an error */
  int truncated;    /* more were found than max_reports */
  int lenient_free; /* the options the trace was checked with */
  int legacy_sync;
  /* With HbOptions.nops: per case op, the vector clock of the agent that performed its memory
   * access (or free) right after it (its last, for an op in a loop body that acts once per
   * iteration), or for an op without one the join of those after each of its calls; per trace
   * record, the agent that performed it and its own clock after. */
  int nops, nagents, ntrace;
  uint32_t *know;  /* nops x nagents */
  uint8_t *known;  /* per op: 0 no call, 1 from a call without access, 2 from an access */
  int32_t *agent;  /* per record */
  uint32_t *clock; /* per record */
} HbResult;

/* The options for a run of ABI flavour abi (RtAbi), with memfree_sync as the runtime had it:
 * rocm frees synchronize (hipFree) and its streams are blocking. */
void hb_options_for(HbOptions *ho, int abi, int memfree_sync);
/* Checks a trace. *out is owned by the caller (hb_result_free). 0 or AF_ENOMEM. */
int hb_check(const RtRec *trace, int n, const HbOptions *opt, HbResult **out, AfErr *err);
void hb_result_free(HbResult *r);
/* With HbOptions.nops: whether case op `op`, when it acted, knew (happened after) trace
 * record seq: 1 yes, 0 no, -1 unknown (the op made no call, or no knowledge was recorded). */
int hb_op_knows(const HbResult *r, int op, int32_t seq);

const char *hb_kind_name(int kind);
int hb_kind_is_error(int kind);
const char *hb_subkind_name(int sub);
/* One report as text: kind, the two calls (with their trace lines), buffer, range, agents. */
void hb_format_report(AfBuf *b, const HbReport *r, const RtRec *trace, int n);

#endif
