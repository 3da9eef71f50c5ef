/* SPDX-License-Identifier: MIT
 *
 * vmp_hash.h - the hashes of the project's open-addressing tables: the
 * 64-bit mixer (MurmurHash3's finaliser, fmix64: every bit of the key moves
 * every bit of the result, so `vmp_hash64(k) & (cap - 1)` spreads ids,
 * addresses and packed keys alike) and FNV-1a over bytes, for names.
 * Header only; no state; any thread, async-signal-safe.
 * Internal to the project, not installed.
 */
#ifndef VMP_HASH_H
#define VMP_HASH_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t vmp_hash64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

/* FNV-1a of the `n` bytes at `s` (mix it with vmp_hash64() before masking
 * when the low bits must spread). */
static inline uint64_t vmp_hash_bytes(const void *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

#endif
