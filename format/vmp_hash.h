/* SPDX-License-Identifier: MIT
 *
 * vmp_hash.h - the 64-bit mixer of the project's open-addressing tables
 * (MurmurHash3's finaliser, fmix64): every bit of the key moves every bit of
 * the result, so `vmp_hash64(k) & (cap - 1)` spreads ids, addresses and
 * packed keys alike.  Header only; no state; any thread, async-signal-safe.
 * Internal to the project, not installed.
 */
#ifndef VMP_HASH_H
#define VMP_HASH_H

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

#endif
