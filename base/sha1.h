/*
 * sha1.h: SHA-1 (FIPS 180-4) of a byte string, as hex: the name libFuzzer gives a corpus file
 * (its content's SHA-1), so that an input written into a corpus by the harness has the name
 * libFuzzer would give it, and writing one that is there already replaces it.
 */
#ifndef BASE_SHA1_H
#define BASE_SHA1_H

#include <stddef.h>
#include <stdint.h>

/* The 20-byte digest of data[0..n). */
void af_sha1(const void *data, size_t n, uint8_t out[20]);
/* ... as 40 lowercase hex digits and a NUL. */
void af_sha1_hex(const void *data, size_t n, char out[41]);

#endif
