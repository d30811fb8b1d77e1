/*
 * feat.h: semantic features of what a case made the pipeline do, for guided generation (asyncfuzz
 * fuzz) and for counting coverage the same way in any campaign. A feature is a kind and a short
 * text (an mlir-opt pattern and the op it was tried on, two patterns in a row, a verdict, an mgpu*
 * call sequence, a dependency edge between two op shapes, a cause signature...), hashed to one of
 * AF_FEAT_N slots. The process keeps the set of slots seen (af_feat_count) and, where the fuzzer
 * gives one, sets each slot's presence counter (libFuzzer's extra counters: 1, never a count). Off
 * until af_feat_enable: then every af_feat_add is one branch.
 */
#ifndef BASE_FEAT_H
#define BASE_FEAT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Slots: 2^16 (libFuzzer's feature of a slot, slot * 8 + its bucket, stays under its 2^21
 * features, so no two slots alias there; more slots made its scan of the counters a third of a
 * guided builtin run). */
#define AF_FEAT_N (1u << 16)

/* The kinds: X(ID, name, what). */
#define AF_FEAT_MAP(X)                                                                             \
  X(PATTERN, "pattern", "an mlir-opt rewrite pattern tried on an op (its name, its async tokens)") \
  X(PATTERN_PAIR, "pattern-pair", "two patterns mlir-opt tried one after the other")               \
  X(CALLS, "calls", "three mgpu* calls in a row in one function of the lowered code")              \
  X(VERDICT, "verdict", "a lowering's verdict class on a case, by configuration")                  \
  X(SIGNATURE, "signature", "the cause signature of a failure")                                    \
  X(EDGE, "edge", "a dependency edge: the shapes of the op that made a token and of its user")     \
  X(SHAPE, "shape", "an op shape in its context (main, region, a block kind)")                     \
  X(RUNTIME, "runtime", "a runtime call by the kind of its op, where it ran, refused or not")      \
  X(LINK, "link", "an ordering link a run used (event wait, event or stream sync, await)")         \
  X(HANDLE, "handle", "a buffer an op takes, a token a region or block passes, by kind")           \
  X(UNCONVERTED, "unconverted", "an op mlir-opt left unconverted (its shape)")                     \
  X(SHAPE_VERDICT, "shape-verdict", "an op shape of a case, with a configuration's verdict")       \
  X(DISAGREE, "disagree", "two lowerings, or configurations one axis apart, disagree")

enum {
#define AF__FEAT_ENUM(id, name, what) AF_FEAT_##id,
  AF_FEAT_MAP(AF__FEAT_ENUM)
#undef AF__FEAT_ENUM
      AF_FEAT__COUNT
};

/* Turns the features on (allocating the set: 0, or -1 when out of memory) or off. */
int af_feat_enable(int on);
int af_feat_on(void);
/* libFuzzer's extra counters (n slots, a multiple of 8; NULL: none): a feature also sets its slot
 * there. The fuzzer clears them before each input. */
void af_feat_set_counters(uint8_t *counters, size_t n);
/* Feature (kind, text[0..n)); 1 when its slot is new to this process. */
int af_feat_add(int kind, const char *text, size_t n);
/* The same from a format. */
int af_feat_addf(int kind, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Attribution, for feedback deferred over a batch (asyncfuzz fuzz through mlir-opt): with it on
 * (af_feat_attribute(n): cases 0..n-1), a feature sets no fuzzer counter; it is noted for the
 * current case (af_feat_case; -1: none, for what no one case made), whose slots are then read
 * back (af_feat_case_slots) and credited to its input later (af_feat_credit). n = 0 turns it off
 * and forgets the notes. 0, or -1 when out of memory (off then). */
int af_feat_attribute(int ncases);
void af_feat_case(int j);
int af_feat_current_case(void);
/* Pauses the notes (nested: each pause(1) undone by a pause(0)): for work of a batch that is not
 * one case's own (a finding's reduction, its checks on other configurations). */
void af_feat_pause(int pause);
/* The distinct slots noted for case j (*n of them; NULL and 0 when none). */
const uint32_t *af_feat_case_slots(int j, int *n);
/* Sets the fuzzer's counters of slots[0..n). */
void af_feat_credit(const uint32_t *slots, int n);
/* Distinct slots seen (kind < 0: of every kind), and kind's name. */
long af_feat_count(int kind);
const char *af_feat_name(int kind);
/* Clears the set (the counts), not the fuzzer's counters. */
void af_feat_reset(void);
/* Writes the features seen, a line each: the kind's name, a tab, the text of the first feature
 * that took the slot (tabs and line ends in it as spaces); sorted, so that two runs' lists can
 * be compared line by line (comm). A slot whose text could not be kept (out of memory) is
 * written last, as "?" and "(slot N)". The number of lines, or -1 on a write error. */
long af_feat_write(FILE *f);

#endif
