/*
 * listing.c: the builtin lowering's Program as readable text (`asyncfuzz lower`, golden tests),
 * each instruction by its row of LOWER_OPC_MAP (lower.h).
 */
#include "lower.h"

#include "../kernels/kernels.h"

#include <stdio.h>
#include <string.h>

static const char *const opc_call[LOWER__OPC_COUNT] = {
#define X(ID, lc, call, listing) [LOWER_##ID] = call,
    LOWER_OPC_MAP(X)
#undef X
};
static const char *const opc_listing[LOWER__OPC_COUNT] = {
#define X(ID, lc, call, listing) [LOWER_##ID] = listing,
    LOWER_OPC_MAP(X)
#undef X
};

const char *lower_opc_call(int opc) {
  return opc >= 0 && opc < LOWER__OPC_COUNT ? opc_call[opc] : "";
}

const char *lower_opc_listing(int opc) {
  return opc >= 0 && opc < LOWER__OPC_COUNT ? opc_listing[opc] : "?";
}

/* A buffer operand and its byte offset into it ("b3+16"). */
static void put_buf(AfBuf *b, int buf, int64_t off) {
  af_buf_printf(b, "b%d", buf);
  if (off)
    af_buf_printf(b, "+%lld", (long long)off);
}

/* One directive of a listing (LOWER_OPC_MAP's %-letters). */
static void put_directive(AfBuf *b, const LowerInstr *in, char d) {
  switch (d) {
  case 'C':
    af_buf_puts(b, lower_opc_call(in->opc));
    break;
  case 'a':
    af_buf_printf(b, "%%%d", in->a);
    break;
  case 'b':
    af_buf_printf(b, "%%%d", in->b);
    break;
  case 's':
    if (in->b < 0)
      af_buf_puts(b, "null");
    else
      af_buf_printf(b, "%%%d", in->b);
    break;
  case 'B':
    af_buf_printf(b, "b%d", in->buf);
    break;
  case 'u':
    put_buf(b, in->buf, in->off);
    break;
  case 'v':
    put_buf(b, in->buf2, in->off2);
    break;
  case 'k':
    af_buf_puts(b, kernel_info(in->kernel)->name);
    break;
  case 'i':
    af_buf_printf(b, "%lld", (long long)in->imm);
    break;
  case 'j':
    af_buf_printf(b, "%lld", (long long)in->imm2);
    break;
  case 'P':
    af_buf_puts(b, in->imm ? "  (the program's)" : "");
    break;
  case 'r':
    af_buf_printf(b, "%d", in->region);
    break;
  case 'x':
    af_buf_printf(b, "%d", in->vidx);
    break;
  case 'c':
    af_buf_printf(b, "%d", in->consumer);
    break;
  case 'G': /* a launch's grid and blocks, where they are not one block of n threads */
    if (in->dims[0] * in->dims[1] * in->dims[2] != 1 || in->dims[4] * in->dims[5] != 1 ||
        in->dims[3] != in->imm2)
      af_buf_printf(b, ", grid=%dx%dx%d block=%dx%dx%d", in->dims[0], in->dims[1], in->dims[2],
                    in->dims[3], in->dims[4], in->dims[5]);
    if (in->smem) /* its dynamic shared memory */
      af_buf_printf(b, ", smem=%d", in->smem);
    break;
  case 'L':
    for (int a = 0; a < in->nbufs; a++) {
      af_buf_printf(b, "%sb%d", a ? ", " : "", in->bufs[a]);
      if (in->voff[a] || in->vstride[a] > 1) /* a view: +offset*stride, in elements */
        af_buf_printf(b, "+%d*%d", in->voff[a], in->vstride[a]);
    }
    break;
  default:
    af_buf_printf(b, "%%%c", d);
    break;
  }
}

static void put_instr(AfBuf *b, const LowerInstr *in) {
  for (const char *f = lower_opc_listing(in->opc); *f; f++) {
    if (*f == '%' && f[1])
      put_directive(b, in, *++f);
    else
      af_buf_put(b, f, 1);
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
      put_instr(&b, in);
      if (in->op >= 0)
        af_buf_printf(&b, "    // op #%d", in->op);
      af_buf_puts(&b, "\n");
    }
    af_buf_puts(&b, "}\n");
  }
  return af_buf_take(&b);
}
