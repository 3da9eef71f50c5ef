/* SPDX-License-Identifier: MIT
 *
 * vmp_ring.h - the lock-free bounded ring between the sample path and the
 * background thread (spec.md §5.12 samples before encoding).
 *
 * Multi-producer, single-consumer, fixed-size slots, after D. Vyukov's
 * bounded queue: every slot carries a sequence number.  A producer claims
 * position p with one CAS on `head` when slot p's sequence equals p, fills the
 * slot and publishes it by storing p + 1 into the sequence.  The consumer
 * reads position p when the sequence equals p + 1 and hands the slot back by
 * storing p + capacity.  A full ring fails the claim at once: producers never
 * wait, never allocate and never make a system call, so the push is
 * async-signal-safe and a nested signal on the same thread simply claims
 * another slot.
 *
 * The push and pop helpers are static inline so that the sample path's object
 * file references no other symbol of the library (tests/signal/).
 */
#ifndef VMP_RING_H
#define VMP_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "vmp_writer.h"

_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "the sample path needs lock-free 64-bit atomics");

enum {
    VMP_ENTRY_FAILED = 1u,    /* a FAILED_SAMPLE */
    VMP_ENTRY_TRUNCATED = 2u, /* the stack was cut at max_depth */
    VMP_ENTRY_KIND = 4u       /* a KIND_SAMPLE of kind `reason` */
};

/* A sample as the sample path stored it; `depth` frames follow the slot. */
typedef struct vmp_ring_entry {
    uint64_t time; /* ns since the time origin */
    uint64_t thread;
    uint64_t pc;
    uint64_t generation;
    uint64_t blame;
    uint64_t weight;
    uint32_t state;
    uint32_t reason; /* failure reason; with VMP_ENTRY_KIND the kind */
    uint32_t depth;
    uint32_t flags; /* VMP_ENTRY_* */
} vmp_ring_entry;

typedef struct vmp_ring_slot {
    _Atomic uint64_t seq;
    vmp_ring_entry e;
    /* vmp_frame frames[max_depth] follow, see vmp_ring__frames() */
} vmp_ring_slot;

typedef struct vmp_ring {
    _Alignas(64) _Atomic uint64_t head; /* next position producers claim */
    _Alignas(64) uint64_t tail;         /* next position the consumer reads */
    uint8_t *slots;                     /* capacity * stride bytes */
    uint64_t mask;                      /* capacity - 1; capacity is a power of 2 */
    size_t stride;                      /* bytes per slot */
    uint32_t max_depth;
} vmp_ring;

/* Allocate a ring of at least `slots` slots (rounded up to a power of 2), each
 * with room for `max_depth` frames.  0 on success, -1 on allocation failure.
 * Not async-signal-safe. */
int vmp_ring__init(vmp_ring *r, uint32_t slots, uint32_t max_depth);
void vmp_ring__free(vmp_ring *r);

static inline vmp_ring_slot *vmp_ring__slot(const vmp_ring *r, uint64_t pos)
{
    return (vmp_ring_slot *)(void *)(r->slots + (size_t)(pos & r->mask) * r->stride);
}

static inline vmp_frame *vmp_ring__frames(vmp_ring_slot *s)
{
    return (vmp_frame *)(void *)(s + 1);
}

/* Claim a slot for writing.  Returns it with its position in *pos_out, or
 * NULL when the ring is full.  Async-signal-safe, lock-free. */
static inline vmp_ring_slot *vmp_ring__claim(vmp_ring *r, uint64_t *pos_out)
{
    uint64_t pos = atomic_load_explicit(&r->head, memory_order_relaxed);
    for (;;) {
        vmp_ring_slot *s = vmp_ring__slot(r, pos);
        uint64_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
        int64_t diff = (int64_t)(seq - pos);
        if (diff == 0) {
            /* seq_cst: orders the claim against the generation and queue
             * stamps of the metadata functions (vmp_writer.c). */
            if (atomic_compare_exchange_weak(&r->head, &pos, pos + 1)) {
                *pos_out = pos;
                return s;
            }
        } else if (diff < 0) {
            return NULL;
        } else {
            pos = atomic_load_explicit(&r->head, memory_order_relaxed);
        }
    }
}

/* Publish a slot filled after vmp_ring__claim().  Async-signal-safe. */
static inline void vmp_ring__commit(vmp_ring_slot *s, uint64_t pos)
{
    atomic_store_explicit(&s->seq, pos + 1, memory_order_release);
}

/* Consumer only: the slot at the tail if it is published, else NULL. */
static inline vmp_ring_slot *vmp_ring__peek(vmp_ring *r)
{
    vmp_ring_slot *s = vmp_ring__slot(r, r->tail);
    if (atomic_load_explicit(&s->seq, memory_order_acquire) != r->tail + 1)
        return NULL;
    return s;
}

/* Consumer only: hand the slot returned by vmp_ring__peek() back. */
static inline void vmp_ring__release(vmp_ring *r, vmp_ring_slot *s)
{
    atomic_store_explicit(&s->seq, r->tail + r->mask + 1, memory_order_release);
    r->tail++;
}

#endif
