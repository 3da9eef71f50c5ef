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

/* The stack cache: whole stacks (frames compared exactly) -> leaf node id,
 * four-way set-associative with LRU replacement, so that a stack seen before
 * costs one hash and one compare instead of a table probe per frame.
 * Entries are never stale: node ids are never reassigned.
 * It starts with VMP_STACK_CACHE_SLOTS slots and doubles, up to
 * VMP_STACK_CACHE_MAX_SLOTS, whenever, in a window of
 * VMP_STACK_CACHE_WINDOW lookups, more than 1 in 2^VMP_STACK_CACHE_EVICT_SHIFT
 * evicted a cached stack (more distinct hot stacks than slots; filling empty
 * slots does not count).  A slot holds
 * VMP_STACK_CACHE_DEPTH frames of 16 bytes: 4 MiB at the start, 16 MiB at
 * most, touched only as slots fill. */
#define VMP_STACK_CACHE_WAYS        4u     /* slots of a set */
#define VMP_STACK_CACHE_SLOTS       4096u  /* power of 2: SLOTS / WAYS sets */
#define VMP_STACK_CACHE_MAX_SLOTS   16384u /* power of 2 */
#define VMP_STACK_CACHE_DEPTH       64u    /* deeper stacks bypass the cache */
#define VMP_STACK_CACHE_WINDOW      8192u
#define VMP_STACK_CACHE_EVICT_SHIFT 8u

typedef struct vmp_stack_cache_entry {
    uint64_t hash;
    uint64_t leaf; /* 0 == empty */
    uint32_t depth;
    uint32_t used; /* the cache's use count at its last use (LRU) */
} vmp_stack_cache_entry;

typedef struct vmp_intern {
    vmp_intern_entry *tab;
    size_t cap; /* power of 2 */
    size_t count;
    uint64_t next_id;
    vmp_stack_cache_entry *cache; /* cache_slots, allocated on first use */
    vmp_frame *cache_frames;      /* VMP_STACK_CACHE_DEPTH frames per slot */
    size_t cache_slots;           /* power of 2 */
    uint32_t cache_lookups;       /* in the current window */
    uint32_t cache_evictions;     /* in the current window */
    uint32_t cache_uses;          /* hits and stores, ever (wraps) */
} vmp_intern;

int vmp_intern__init(vmp_intern *t);
void vmp_intern__free(vmp_intern *t);

/* Look up (parent, frame); assign the next id if absent.  Stores the id in
 * *id_out and returns 1 when the node is new, 0 when it existed, -1 when the
 * table could not grow. */
int vmp_intern__get(vmp_intern *t, uint64_t parent, const vmp_frame *f, uint64_t *id_out);

/* The leaf node id of the stack frames[0..depth) (innermost first) if the
 * stack cache holds it, else 0.  Stores the stack's hash in *hash_out for
 * vmp_intern__stack_put(). */
uint64_t vmp_intern__stack_find(vmp_intern *t, const vmp_frame *frames, uint32_t depth,
                                uint64_t *hash_out);

/* Remember that the stack frames[0..depth) interned to node `leaf` (every
 * node of it exists).  Does nothing when the stack is too deep for the cache
 * or the cache cannot be allocated. */
void vmp_intern__stack_put(vmp_intern *t, uint64_t hash, const vmp_frame *frames, uint32_t depth,
                           uint64_t leaf);

#endif
