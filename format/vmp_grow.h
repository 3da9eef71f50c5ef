/* SPDX-License-Identifier: MIT
 *
 * vmp_grow.h - growing a dynamic array by doubling: the one description of
 * "make room for one more element" that the project's lists share.  Header
 * only; not for the sample path (it allocates).  Internal to the project, not
 * installed.
 */
#ifndef VMP_GROW_H
#define VMP_GROW_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/** Double the array `*arr` (`arr` points to the array's pointer, of any
 *  object type) of `*cap` elements of `size` bytes, to `first` elements when
 *  it has none.
 *  @return 0, or -1 when out of memory or the size overflows (the array and
 *          `*cap` unchanged, still owned by the caller). */
static inline int vmp_grow(void *arr, size_t *cap, size_t size, size_t first)
{
    void *old, *grown;
    size_t n = *cap ? *cap * 2 : first;
    if (n < *cap || n > SIZE_MAX / size)
        return -1;
    memcpy(&old, arr, sizeof old); /* a T *, read as the void * it converts to */
    grown = realloc(old, n * size);
    if (grown == NULL)
        return -1;
    memcpy(arr, &grown, sizeof grown);
    *cap = n;
    return 0;
}

#endif
