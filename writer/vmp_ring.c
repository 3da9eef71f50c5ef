/* SPDX-License-Identifier: MIT
 *
 * vmp_ring.c - allocation of the sample ring (see vmp_ring.h).
 */
#include "vmp_ring.h"

#include <stdlib.h>
#include <string.h>

int vmp_ring__init(vmp_ring *r, uint32_t slots, uint32_t max_depth)
{
    uint64_t cap = 1;
    while (cap < slots)
        cap <<= 1;
    size_t stride = sizeof(vmp_ring_slot) + (size_t)max_depth * sizeof(vmp_frame);
    stride = (stride + 15u) & ~(size_t)15u;
    memset(r, 0, sizeof *r);
    if (cap > SIZE_MAX / stride)
        return -1;
    r->slots = aligned_alloc(64, ((size_t)cap * stride + 63u) & ~(size_t)63u);
    if (!r->slots)
        return -1;
    memset(r->slots, 0, (size_t)cap * stride);
    r->mask = cap - 1;
    r->stride = stride;
    r->max_depth = max_depth;
    atomic_init(&r->head, 0);
    r->tail = 0;
    for (uint64_t i = 0; i < cap; i++)
        atomic_init(&vmp_ring__slot(r, i)->seq, i);
    return 0;
}

void vmp_ring__free(vmp_ring *r)
{
    free(r->slots);
    r->slots = NULL;
}
