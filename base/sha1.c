/*
 * sha1.c: SHA-1 (sha1.h), one block of 64 bytes at a time.
 */
#include "sha1.h"

#include <string.h>

static uint32_t rol(uint32_t x, int k) {
  return (x << k) | (x >> (32 - k));
}

static void block(uint32_t h[5], const uint8_t *p) {
  uint32_t w[80];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
           (uint32_t)p[4 * i + 3];
  for (int i = 16; i < 80; i++)
    w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
  for (int i = 0; i < 80; i++) {
    uint32_t f, k;
    if (i < 20) {
      f = (b & c) | (~b & d);
      k = 0x5A827999u;
    } else if (i < 40) {
      f = b ^ c ^ d;
      k = 0x6ED9EBA1u;
    } else if (i < 60) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8F1BBCDCu;
    } else {
      f = b ^ c ^ d;
      k = 0xCA62C1D6u;
    }
    uint32_t t = rol(a, 5) + f + e + k + w[i];
    e = d;
    d = c;
    c = rol(b, 30);
    b = a;
    a = t;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
}

void af_sha1(const void *data, size_t n, uint8_t out[20]) {
  uint32_t h[5] = {0x67452301u, 0xEFCDAB89u, 0x98BADCFEu, 0x10325476u, 0xC3D2E1F0u};
  const uint8_t *p = data;
  size_t left = n;
  for (; left >= 64; left -= 64, p += 64)
    block(h, p);
  /* the tail, a 1 bit, zeros, and the length in bits (big-endian) in the last 8 bytes */
  uint8_t last[128] = {0};
  memcpy(last, p, left);
  last[left] = 0x80;
  size_t tail = left + 1 + 8 <= 64 ? 64 : 128;
  uint64_t bits = (uint64_t)n * 8;
  for (int i = 0; i < 8; i++)
    last[tail - 1 - i] = (uint8_t)(bits >> (8 * i));
  block(h, last);
  if (tail == 128)
    block(h, last + 64);
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 4; j++)
      out[4 * i + j] = (uint8_t)(h[i] >> (24 - 8 * j));
}

void af_sha1_hex(const void *data, size_t n, char out[41]) {
  static const char hex[] = "0123456789abcdef";
  uint8_t d[20];
  af_sha1(data, n, d);
  for (int i = 0; i < 20; i++) {
    out[2 * i] = hex[d[i] >> 4];
    out[2 * i + 1] = hex[d[i] & 15];
  }
  out[40] = '\0';
}
