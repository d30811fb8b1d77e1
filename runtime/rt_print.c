/*
 * rt_print.c: the printing functions of MLIR's runner utils (CRunnerUtils, RunnerUtils) that
 * programs call to show their results: printMemref* of a ranked memref passed unranked, with or
 * without llvm.emit_c_interface, and the scalar prints of vector.print. Each memref print is a
 * host read of the buffer (an observation, asyncfuzz_observe with id -1), ordered like any other
 * against the copies into it, then printed as the runner utils print it. They are here so that
 * those reads are seen, and so that a program links where the runner utils are not installed
 * (Debian's LLVM 19 ships no libmlir_runner_utils beside LLVM 22's). asyncfuzz_read<T> is the
 * same read without the print: check-mlir puts a call of it before each host memref.load.
 */
#include "rt_sim_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* An unranked memref: its rank and its ranked descriptor {allocated, aligned, offset,
 * sizes[rank], strides[rank]}. */
typedef struct Unranked {
  int64_t rank;
  void *desc;
} Unranked;

typedef struct Desc {
  char *allocated, *aligned;
  int64_t offset;
  int64_t rest[];
} Desc;

enum { P_I8, P_I16, P_I32, P_I64, P_IND, P_F32, P_F64 };
static const int esize_of[] = {1, 2, 4, 8, 8, 4, 8};

static void put_elem(int ty, const char *p) {
  switch (ty) {
  case P_I8:
    printf("%d", (int)*(const int8_t *)p);
    break;
  case P_I16:
    printf("%d", (int)*(const int16_t *)p);
    break;
  case P_I32:
    printf("%" PRId32, *(const int32_t *)p);
    break;
  case P_F32:
    printf("%g", (double)*(const float *)p);
    break;
  case P_F64:
    printf("%g", *(const double *)p);
    break;
  default:
    printf("%" PRId64, *(const int64_t *)p);
    break;
  }
}

/* MemRefDataPrinter::print: dimension dim of rank, elements separated by ", " and rows by a
 * newline and an indent, as RunnerUtils.h prints them. */
static void put_data(int ty, const char *base, int64_t dim, int64_t rank, int64_t off,
                     const int64_t *sizes, const int64_t *strides) {
  if (dim == 0) {
    put_elem(ty, base + off * esize_of[ty]);
    return;
  }
  printf("[");
  for (int64_t i = 0; i < sizes[0]; i++) {
    if (i > 0)
      printf("%*s", (int)(rank - dim + 1), "");
    put_data(ty, base, dim - 1, rank, off + i * strides[0], sizes + 1, strides + 1);
    if (i + 1 < sizes[0])
      printf(dim > 1 ? ", \n" : ", ");
  }
  printf("]");
}

/* printMemref of a ranked descriptor: the host reads what it spans, then it is printed (print:
 * 0, a host load check-mlir instrumented: the read alone). */
static void read_memref(int ty, int64_t rank, void *dp, int unranked, int print) {
  Desc *d = dp;
  if (d == NULL || rank < 0 || rank > 16)
    return;
  const int64_t *sizes = d->rest, *strides = d->rest + rank;
  int64_t span = 1, n = 1; /* the elements from the first to the last it reads */
  for (int64_t i = 0; i < rank; i++) {
    n *= sizes[i];
    span += sizes[i] > 0 ? (sizes[i] - 1) * (strides[i] > 0 ? strides[i] : 0) : 0;
  }
  const char *first = d->aligned ? d->aligned + d->offset * esize_of[ty] : NULL;
  fflush(stdout);
  rt__observe(-1, first, n > 0 ? span : 0, 1, esize_of[ty], ty >= P_F32);
  if (!print)
    return;
  printf("%sbase@ = %p rank = %" PRId64 " offset = %" PRId64 " sizes = [",
         unranked ? "Unranked Memref " : "Memref ", (void *)d->aligned, rank, d->offset);
  for (int64_t i = 0; i < rank; i++)
    printf(i ? ", %" PRId64 : "%" PRId64, sizes[i]);
  printf("] strides = [");
  for (int64_t i = 0; i < rank; i++)
    printf(i ? ", %" PRId64 : "%" PRId64, strides[i]);
  printf("] data = \n");
  if (n > 0 && d->aligned)
    put_data(ty, d->aligned, rank, rank, d->offset, sizes, strides);
  printf("\n");
  fflush(stdout);
}

#define RT_PRINT_TYPES(X)                                                                          \
  X(I8, P_I8)                                                                                      \
  X(I16, P_I16)                                                                                    \
  X(I32, P_I32)                                                                                    \
  X(I64, P_I64)                                                                                    \
  X(Ind, P_IND)                                                                                    \
  X(F32, P_F32)                                                                                    \
  X(F64, P_F64)

/* For each type: printMemrefT(rank, descriptor), _mlir_ciface_printMemrefT(&unranked) and the
 * 1-D form _mlir_ciface_printMemref1dT(&descriptor) of RunnerUtils. */
#define RT_PRINT_DEFINE(T, ty)                                                                     \
  void printMemref##T(int64_t rank, void *desc);                                                   \
  void printMemref##T(int64_t rank, void *desc) {                                                  \
    read_memref(ty, rank, desc, 1, 1);                                                             \
  }                                                                                                \
  void _mlir_ciface_printMemref##T(Unranked *m);                                                   \
  void _mlir_ciface_printMemref##T(Unranked *m) {                                                  \
    if (m)                                                                                         \
      read_memref(ty, m->rank, m->desc, 1, 1);                                                     \
  }                                                                                                \
  void _mlir_ciface_printMemref1d##T(void *desc);                                                  \
  void _mlir_ciface_printMemref1d##T(void *desc) {                                                 \
    read_memref(ty, 1, desc, 0, 1);                                                                \
  }                                                                                                \
  void _mlir_ciface_asyncfuzz_read##T(Unranked *m);                                                \
  void _mlir_ciface_asyncfuzz_read##T(Unranked *m) {                                               \
    if (m)                                                                                         \
      read_memref(ty, m->rank, m->desc, 1, 0);                                                     \
  }
RT_PRINT_TYPES(RT_PRINT_DEFINE)

/* The scalar prints of vector.print (CRunnerUtils.cpp). */
void printI64(int64_t i);
void printU64(uint64_t u);
void printF32(float f);
void printF64(double d);
void printString(const char *s);
void printOpen(void);
void printClose(void);
void printComma(void);
void printNewline(void);

void printI64(int64_t i) {
  printf("%" PRId64, i);
}
void printU64(uint64_t u) {
  printf("%" PRIu64, u);
}
void printF32(float f) {
  printf("%g", (double)f);
}
void printF64(double d) {
  printf("%g", d);
}
void printString(const char *s) {
  fputs(s ? s : "", stdout);
}
void printOpen(void) {
  fputs("( ", stdout);
}
void printClose(void) {
  fputs(" )", stdout);
}
void printComma(void) {
  fputs(", ", stdout);
}
void printNewline(void) {
  fputs("\n", stdout);
  fflush(stdout);
}
