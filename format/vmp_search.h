/* SPDX-License-Identifier: MIT
 *
 * vmp_search.h - binary search over a sorted array by a uint64_t key inside
 * each element: the one search behind every "last entry starting at or
 * before this address" lookup (symbols, code, unwind segments).  Header
 * only; no state; any thread, async-signal-safe.  Internal to the project,
 * not installed.
 */
#ifndef VMP_SEARCH_H
#define VMP_SEARCH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* How many leading elements of `base` (n elements of `stride` bytes, sorted
 * by the uint64_t at byte `key_off` of each) have a key <= `key`: the index
 * just past the last such element (0: none). */
static inline size_t vmp_upper_bound(const void *base, size_t n, size_t stride, size_t key_off,
                                     uint64_t key)
{
    const unsigned char *p = (const unsigned char *)base;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t k;
        memcpy(&k, p + mid * stride + key_off, sizeof k);
        if (k <= key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The index of the first element of `base` whose key is >= `key`. */
static inline size_t vmp_lower_bound(const void *base, size_t n, size_t stride, size_t key_off,
                                     uint64_t key)
{
    return key == 0 ? 0 : vmp_upper_bound(base, n, stride, key_off, key - 1);
}

#endif
