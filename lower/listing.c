/*
 * listing.c: the builtin lowering's Program as readable text (`asyncfuzz lower`, golden tests).
 */
#include "lower.h"

#include "../runner/kernels.h"

#include <stdio.h>
#include <string.h>

static void put_slot(AfBuf *b, int s) {
  if (s < 0)
    af_buf_puts(b, "null");
  else
    af_buf_printf(b, "%%%d", s);
}

/* Module, stream and event calls. 1 when in is one. */
static int put_handles(AfBuf *b, const LowerInstr *in) {
  switch (in->opc) {
  case LOWER_MODULE_LOAD:
    af_buf_puts(b, "mgpuModuleLoad()");
    return 1;
  case LOWER_GET_FUNCTION:
    af_buf_printf(b, "mgpuModuleGetFunction(\"%s\")", kernel_info(in->kernel)->name);
    return 1;
  case LOWER_MODULE_UNLOAD:
    af_buf_puts(b, "mgpuModuleUnload()");
    return 1;
  case LOWER_STREAM_CREATE:
    af_buf_printf(b, "%%%d = mgpuStreamCreate()%s", in->a, in->imm ? "  (the program's)" : "");
    return 1;
  case LOWER_STREAM_DESTROY:
    af_buf_printf(b, "mgpuStreamDestroy(%%%d)", in->a);
    return 1;
  case LOWER_STREAM_SYNC:
    af_buf_printf(b, "mgpuStreamSynchronize(%%%d)", in->a);
    return 1;
  case LOWER_STREAM_WAIT_EVENT:
    af_buf_printf(b, "mgpuStreamWaitEvent(%%%d, %%%d)", in->a, in->b);
    return 1;
  case LOWER_EVENT_CREATE:
    af_buf_printf(b, "%%%d = mgpuEventCreate()", in->a);
    return 1;
  case LOWER_EVENT_DESTROY:
    af_buf_printf(b, "mgpuEventDestroy(%%%d)", in->a);
    return 1;
  case LOWER_EVENT_SYNC:
    af_buf_printf(b, "mgpuEventSynchronize(%%%d)", in->a);
    return 1;
  case LOWER_EVENT_RECORD:
    af_buf_printf(b, "mgpuEventRecord(%%%d, %%%d)", in->a, in->b);
    return 1;
  default:
    return 0;
  }
}

/* Host buffers, device memory, copies, sets, launches and observations. 1 when in is one. */
static int put_memory(AfBuf *b, const LowerInstr *in) {
  switch (in->opc) {
  case LOWER_HOST_INIT:
    af_buf_printf(b, "asyncfuzz_host_init(b%d, init=%lld)", in->buf, (long long)in->imm);
    return 1;
  case LOWER_MEM_ALLOC:
    af_buf_printf(b, "b%d = mgpuMemAlloc(%lld, ", in->buf, (long long)in->imm);
    put_slot(b, in->b);
    af_buf_printf(b, ", %d)", (int)in->imm2);
    return 1;
  case LOWER_MEM_FREE:
    af_buf_printf(b, "mgpuMemFree(b%d, ", in->buf);
    put_slot(b, in->b);
    af_buf_puts(b, ")");
    return 1;
  case LOWER_MEMCPY:
    af_buf_printf(b, "mgpuMemcpy(b%d", in->buf);
    if (in->off)
      af_buf_printf(b, "+%lld", (long long)in->off);
    af_buf_printf(b, ", b%d", in->buf2);
    if (in->off2)
      af_buf_printf(b, "+%lld", (long long)in->off2);
    af_buf_printf(b, ", %lld, ", (long long)in->imm);
    put_slot(b, in->b);
    af_buf_puts(b, ")");
    return 1;
  case LOWER_MEMSET32:
  case LOWER_MEMSET16:
    af_buf_printf(b, "mgpuMemset%d(b%d", in->opc == LOWER_MEMSET16 ? 16 : 32, in->buf);
    if (in->off)
      af_buf_printf(b, "+%lld", (long long)in->off);
    af_buf_printf(b, ", %lld, %lld, ", (long long)in->imm, (long long)in->imm2);
    put_slot(b, in->b);
    af_buf_puts(b, ")");
    return 1;
  case LOWER_LAUNCH:
    af_buf_printf(b, "mgpuLaunchKernel(%s, [", kernel_info(in->kernel)->name);
    for (int a = 0; a < in->nbufs; a++) {
      af_buf_printf(b, "%sb%d", a ? ", " : "", in->bufs[a]);
      if (in->voff[a] || in->vstride[a] > 1) /* a view: +offset*stride, in elements */
        af_buf_printf(b, "+%d*%d", in->voff[a], in->vstride[a]);
    }
    af_buf_printf(b, "], v=%lld, n=%lld, ", (long long)in->imm, (long long)in->imm2);
    put_slot(b, in->b);
    af_buf_puts(b, ")");
    return 1;
  case LOWER_OBSERVE:
    af_buf_printf(b, "asyncfuzz_observe(%lld, b%d)", (long long)in->imm, in->buf);
    return 1;
  default:
    return 0;
  }
}

/* async.execute regions and their values. 1 when in is one. */
static int put_regions(AfBuf *b, const LowerInstr *in) {
  switch (in->opc) {
  case LOWER_SPAWN:
    af_buf_printf(b, "async.execute @region%d", in->region);
    return 1;
  case LOWER_YIELD:
    af_buf_printf(b, "yield r%d.%d to consumer %d: %%%d", in->region, in->vidx, in->consumer,
                  in->a);
    return 1;
  case LOWER_DONE:
    af_buf_puts(b, "region done");
    return 1;
  case LOWER_AWAIT:
    af_buf_printf(b, "async.await @region%d", in->region);
    return 1;
  case LOWER_TAKE:
    af_buf_printf(b, "%%%d = take r%d.%d as consumer %d", in->a, in->region, in->vidx,
                  in->consumer);
    return 1;
  default:
    return 0;
  }
}

char *lower_program_to_text(const LowerProgram *p) {
  AfBuf b;
  af_buf_init(&b);
  for (int fi = 0; fi < p->nfuncs; fi++) {
    const LowerFunc *f = &p->funcs[fi];
    if (fi == 0)
      af_buf_puts(&b, "func @main {\n");
    else
      af_buf_printf(&b, "func @region%d {\n", fi);
    for (int i = 0; i < f->ninstrs; i++) {
      const LowerInstr *in = &f->instrs[i];
      af_buf_puts(&b, "  ");
      if (!put_handles(&b, in) && !put_memory(&b, in))
        put_regions(&b, in);
      if (in->op >= 0)
        af_buf_printf(&b, "    // op #%d", in->op);
      af_buf_puts(&b, "\n");
    }
    af_buf_puts(&b, "}\n");
  }
  return af_buf_take(&b);
}
