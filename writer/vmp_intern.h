/* SPDX-License-Identifier: MIT
 *
 * vmp_intern.h - stack interning: (parent node, frame) -> node id, so that
 * every STACK_NODE is defined once (spec.md §5.11, R-STK-2, R-ID-1).
 * Used by the background thread only; grows as needed.
 */
#ifndef VMP_INTERN_H
#define VMP_INTERN_H

#include <stddef.h>
#include <stdint.h>

#include "vmp_writer.h"

typedef struct vmp_intern_entry {
    uint64_t parent;
    uint64_t value;
    uint64_t id; /* 0 == empty */
    uint32_t bcpc;
    uint32_t kind;
} vmp_intern_entry;

typedef struct vmp_intern {
    vmp_intern_entry *tab;
    size_t cap; /* power of 2 */
    size_t count;
    uint64_t next_id;
} vmp_intern;

int vmp_intern__init(vmp_intern *t);
void vmp_intern__free(vmp_intern *t);

/* Look up (parent, frame); assign the next id if absent.  Stores the id in
 * *id_out and returns 1 when the node is new, 0 when it existed, -1 when the
 * table could not grow. */
int vmp_intern__get(vmp_intern *t, uint64_t parent, const vmp_frame *f, uint64_t *id_out);

#endif
