/*
 * kernels.h: the sentinel-writing slow kernels every backend runs. Each kernel has one C
 * reference (used by the oracle and by the simulator), a declared access signature (which
 * buffer arguments it reads and writes, used by the checkers) and an MLIR and GPU version
 * elsewhere. On hardware a kernel first writes KERNEL_SENTINEL over its output `spin` times,
 * then its result, so a consumer that runs too early reads sentinels, not a lucky result.
 *
 * Every kernel takes 1 to 3 buffers of one element type (the first is the output), then an i32
 * scalar v and an i32 spin count: kernel(dst, [src...], v, spin). Arithmetic is on 32-bit lanes
 * (kernel_lane) and wraps (uint32).
 */
#ifndef RUNNER_KERNELS_H
#define RUNNER_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#define KERNEL_SENTINEL ((int32_t)0x5E5E5E5E) /* written during the spin phase */
#define KERNEL_UNINIT ((int32_t)0xA110CA7E)   /* content of a fresh device allocation */
#define KERNEL_POISON ((int32_t)0xDEADF4EE)   /* content of freed device memory */
#define KERNEL_MAX_BUFS 3

typedef enum KernelId { KERNEL_FILL, KERNEL_TRANSFORM, KERNEL_COMBINE, KERNEL__COUNT } KernelId;

/* The element types of buffers, one row each: X(ID, name, bytes, class). The first four are the
 * case format's first typed buffers; the order is part of what a seed makes. class: how an
 * integer value v (a memset's value, a host buffer's initial content) becomes an element:
 * KERNEL_EC_INT: v truncated to the width; KERNEL_EC_BOOL: the parity of v's bits (so
 * that consecutive values do not alternate); KERNEL_EC_FLOAT: v converted
 * (f32, f64); KERNEL_EC_HALF, KERNEL_EC_BF16: v modulo 2048 (f16) or 256 (bf16), which the format
 * holds exactly, converted (so a literal of the value and the bits agree). */
#define KERNEL_ELEM_MAP(X)                                                                         \
  X(I32, "i32", 4, KERNEL_EC_INT)                                                                  \
  X(I16, "i16", 2, KERNEL_EC_INT)                                                                  \
  X(I64, "i64", 8, KERNEL_EC_INT)                                                                  \
  X(F32, "f32", 4, KERNEL_EC_FLOAT)                                                                \
  X(I8, "i8", 1, KERNEL_EC_INT)                                                                    \
  X(I1, "i1", 1, KERNEL_EC_BOOL)                                                                   \
  X(F16, "f16", 2, KERNEL_EC_HALF)                                                                 \
  X(BF16, "bf16", 2, KERNEL_EC_BF16)                                                               \
  X(F64, "f64", 8, KERNEL_EC_FLOAT)                                                                \
  X(INDEX, "index", 8, KERNEL_EC_INT)
enum { KERNEL_EC_INT, KERNEL_EC_BOOL, KERNEL_EC_FLOAT, KERNEL_EC_HALF, KERNEL_EC_BF16 };
typedef enum KernelElem {
#define KERNEL__ELEM_ENUM(id, name, bytes, cls) KERNEL_ELEM_##id,
  KERNEL_ELEM_MAP(KERNEL__ELEM_ENUM)
#undef KERNEL__ELEM_ENUM
      KERNEL_ELEM__COUNT
} KernelElem;

/* Each kernel has a form for every element type, and each of those a view form ("af_fill_v"...):
 * the same computation, its gpu.func taking memref<?xT, strided<[?], offset: ?>> operands, which
 * MLIR code launches on memref.subviews. Id KERNEL_ID(base, view, elem); an i32 form keeps the
 * base name ("af_fill", "af_fill_v"), the others add the type ("af_fill_f16", "af_fill_v_f16").
 * Each of those has a staged form, id KERNEL_STAGED_ID(id) ("af_fill_s", "af_fill_v_s_f16"):
 * each thread puts its result's lane in its slot of the block's dynamic shared memory
 * (KERNEL_SMEM_SLOT bytes per thread, in the thread's linear order in its block), then takes it
 * from there and writes it. A launch of it must give the kernel kernel_smem_need() bytes of
 * dynamic shared memory (gpu.launch_func's dynamic_shared_memory_size); a thread whose slot is
 * not within what the launch gave writes KERNEL_SMEM_SHORT instead (the CUDA kernels check;
 * MLIR's read past the end). Cases name the base kernels only: the type is their buffers', the
 * view and the stage their launch's. */
#define KERNEL__FORMS (2 * KERNEL__COUNT * KERNEL_ELEM__COUNT) /* the ids of one stage */
#define KERNEL_ID(base, view, elem) ((base) + KERNEL__COUNT * ((view) + 2 * (elem)))
#define KERNEL_STAGED_ID(id) ((id) % KERNEL__FORMS + KERNEL__FORMS)
#define KERNEL__IDS (2 * KERNEL__FORMS)
#define KERNEL_BASE(id) ((id) % KERNEL__COUNT)
#define KERNEL_VIEW(id) (((id) / KERNEL__COUNT) % 2)
#define KERNEL_ELEM(id) (((id) / (2 * KERNEL__COUNT)) % KERNEL_ELEM__COUNT)
#define KERNEL_STAGED(id) ((id) / KERNEL__FORMS)
#define KERNEL_SMEM_SLOT 4                      /* bytes of a staged kernel's thread: its lane */
#define KERNEL_SMEM_SHORT ((int32_t)0x5407CAFE) /* a staged thread's result with no slot */

/* The bytes of dynamic shared memory a staged kernel needs on blocks of `threads` threads. */
int64_t kernel_smem_need(int64_t threads);
/* After a staged kernel's result (kernel_ref_strided) on n elements of dst (stride elements
 * apart), each thread i of blocks of `threads` whose slot is not within the smem bytes the launch
 * gave: its element KERNEL_SMEM_SHORT. A kernel that is not staged: nothing. */
void kernel_smem_short(int id, void *dst, int64_t stride, int64_t n, int64_t threads, int64_t smem);

/* A gpu.launch's body (outlined by the pipeline as "<func>_kernel", a name that says nothing of
 * the kernel) first uses, in this order, an i32 constant KERNEL_TAG(id), its value and the spin
 * count: the outlined kernel takes them as its first three arguments, its buffers after them (in
 * the order the body uses them: dst, a, b), and the runtime knows it by its tag. */
#define KERNEL_TAG(id) (0x4AF00000 + (id))
/* Whether name is one outlining gives ("<func>_kernel"). */
int kernel_outlined_name(const char *name);
/* An outlined kernel's parameters (params[0..count), count 0: unknown) put in the order a
 * gpu.func takes them (buffers, value, spin) into std: its kernel id, or -1 when its first is no
 * tag or their number is not the kernel's. */
int kernel_untag(void *const *params, size_t count, void **std);

/* How a kernel accesses one buffer argument (its declared access signature). */
enum { KERNEL_READ = 1, KERNEL_WRITE = 2 };

typedef struct KernelInfo {
  const char *name;                /* the gpu.func / CUDA symbol name */
  int nbufs;                       /* buffer arguments, then (i32 v, i32 spin) */
  uint8_t access[KERNEL_MAX_BUFS]; /* KERNEL_READ / KERNEL_WRITE per buffer argument */
  uint8_t elem;                    /* the element type of its buffers (KernelElem) */
} KernelInfo;

/* Kernel metadata by id (a view form included); NULL for an out-of-range id. */
const KernelInfo *kernel_info(int id);
/* Kernel id for a name (a view form's and a type's included), or -1 when no kernel has it. */
int kernel_lookup(const char *name);

/* Every element type computes in 32-bit lanes, on the element's bits: an element's lane is its
 * bits sign-extended (1 and 2 bytes; i1: its low bit) or truncated (8 bytes); a lane r becomes an
 * element of its low bits (i1: the lowest), or sign-extended (8 bytes). A float's bits are
 * taken as an integer's (no rounding: a GPU computes what the C reference does, bit for bit). */
int32_t kernel_lane(int elem, const void *p);
void kernel_lane_store(int elem, int32_t r, void *p);
/* The lane a kernel of base id `base` computes for element i from its sources' lanes a and b. */
int32_t kernel_result(int base, int64_t i, int32_t a, int32_t b, int32_t v);

/* The C reference: computes dst[i] for i < n from the sources (src[0..nbufs-2]) and v, on
 * elements of the kernel's type; element i of operand k is at [i * stride[k]] (stride[0]: dst;
 * NULL: all 1). dst must not alias a source. */
void kernel_ref_strided(int id, void *dst, const void *const *src, const int64_t *stride, int64_t n,
                        int32_t v);
/* The same, every stride 1. */
void kernel_ref(int id, void *dst, const void *const *src, int64_t n, int32_t v);

/* The value a host buffer holds after asyncfuzz_host_init(init): element i. */
int32_t kernel_host_init_value(int32_t init, int64_t i);

/* Element type e's name ("f16"; "?" out of range), bytes (4 out of range), class. */
const char *kernel_elem_name(int e);
int kernel_elem_bytes(int e);
int kernel_elem_class(int e);
/* The value an element of type e holds for integer v (what a literal of it says: i16 of 70000
 * is 4464, f16 of 3000 is 952, i1 of 7 is 1), and its bits (the low kernel_elem_bytes(e) bytes,
 * little-endian in memory). */
int64_t kernel_elem_value(int e, int64_t v);
uint64_t kernel_elem_bits(int e, int64_t v);
/* Writes that element at p: its kernel_elem_bytes(e) bytes, little-endian. */
void kernel_elem_store(int e, int64_t v, void *p);
/* The element at p of type size `bytes` (1, 2, 4 or 8) as the 32-bit words an observation
 * carries: 1- and 2-byte elements sign-extended, 8-byte ones as their low then high word.
 * Returns the number of words (1 or 2). */
int kernel_elem_words(const void *p, int bytes, int32_t *w);

/* ---- the kernels of a user's program (asyncfuzz check-mlir, docs/check-mlir.md) ----
 * Known by their memory effects, read from the kernels' bodies by the harness: which memref
 * arguments each loads, stores or updates atomically. Their ids follow KERNEL__IDS, in the
 * order of the table; kernel_info() knows none of them. */
#define KERNEL_FOREIGN_ARGS 32
typedef struct KernelForeign {
  char name[128];
  int nargs;                           /* -1: no body known (every buffer read and written) */
  int8_t rank[KERNEL_FOREIGN_ARGS];    /* a memref argument's rank; -1: a scalar */
  uint8_t access[KERNEL_FOREIGN_ARGS]; /* KERNEL_READ / KERNEL_WRITE of a memref argument */
} KernelForeign;
/* Replaces the table with the kernels of text, one per line: "NAME ARG..." with ARG `s` (a
 * scalar) or `m<RANK>:<r|w|rw|->` (a memref and what the body does with it), or "NAME ?" (no
 * body); '#' starts a comment line. 0, or -1 with the reason in msg (the table is then empty). */
int kernel_foreign_set(const char *text, char *msg, size_t n);
int kernel_foreign_count(void);
/* Adds kernel name with no body known ("NAME ?"); its id, or -1 when out of memory. */
int kernel_foreign_unknown(const char *name);
/* The kernel of id (KERNEL__IDS + i), or NULL. */
const KernelForeign *kernel_foreign(int id);
/* The name of any kernel id (asyncfuzz's or a program's), or NULL. */
const char *kernel_name(int id);

#endif
