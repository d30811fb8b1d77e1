/*
 * corpus.h: the corpus cases (corpus/NAME.json) the unit tests go through, in one list: each
 * has a golden builtin lowering (tests/golden/NAME.builtin.txt, test_lower) and round-trips
 * through the case format (test_case).
 */
#ifndef TESTS_CORPUS_H
#define TESTS_CORPUS_H

static const char *const corpus[] = {
    "region-launch-yield",
    "launch-two-deps",
    "sync-alloc-dealloc",
    "memcpy-two-deps-dealloc",
    "region-chain",
    "host-wait-twice",
    "region-capture",
    "region-inputs-unused",
    "explicit-stream",
    "call-token-arg",
    "if-token-result",
    "for-carried-token",
    "branch-merge",
    "typed-buffers",
    "views",
    "kernel-views",
    "wide-types",
    "registered-host",
    "memory-space",
    "memory-space-cast",
    "launch-shapes",
    "launch-inline",
    "typed-kernels",
    "ranked",
    "ranked-rows",
};
#define NCORPUS (sizeof corpus / sizeof corpus[0])

#endif
