/* SPDX-License-Identifier: MIT
 *
 * vmp_sample.c - the sample path: code that runs inside a signal handler
 * (spec.md §5.12: what a SAMPLE records).
 *
 * Everything reachable from vmp_writer_sample() must be async-signal-safe:
 * no malloc/free, no stdio, no locks, no TLS, no system call other than the
 * clock (clock_gettime), errno preserved.  Shared state is touched only
 * through lock-free C11 atomics; the ring helpers are static inline
 * (vmp_ring.h).  No libcbor and no zstd here: the background thread encodes.
 *
 * tests/signal/ checks the undefined symbols of this object against the
 * allow-list in writer/README.md and runs the stress test.
 */
#include <errno.h>
#include <time.h>

#include "vmp_ring.h"
#include "vmp_writer.h"
#include "vmp_writer_int.h"

static uint64_t sample_time(const vmp_writer *w)
{
    uint64_t now;
    if (w->clock) {
        now = w->clock(w->clock_ud);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    }
    return now > w->origin ? now - w->origin : 0;
}

static vmp_status push(vmp_writer *w, const vmp_sample *s, uint32_t flags, uint32_t reason,
                       uint64_t weight)
{
    if (!w || !s)
        return VMP_ERR_INVALID_ARG;
    int saved_errno = errno;
    vmp_status st = VMP_OK;
    uint64_t time = sample_time(w);

    if (atomic_load_explicit(&w->stopped, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&w->dropped_stopped, 1, memory_order_relaxed);
        st = VMP_ERR_CLOSED;
        goto out;
    }
    /* Load the generation before claiming the slot: with the metadata
     * functions reading the ring head before they increment the generation,
     * a sample that sees a new generation is written after that change's
     * record (vmp_writer.c, "ordering"). */
    uint64_t gen = s->generation;
    if (gen == VMP_GENERATION_CURRENT)
        gen = atomic_load(&w->generation);

    uint64_t pos;
    vmp_ring_slot *slot = vmp_ring__claim(&w->ring, &pos);
    if (!slot) {
        atomic_fetch_add_explicit(&w->dropped_full, 1, memory_order_relaxed);
        st = VMP_ERR_FULL;
        goto out;
    }
    vmp_ring_entry *e = &slot->e;
    uint32_t depth = (flags & VMP_ENTRY_FAILED) || !s->frames ? 0 : s->depth;
    if (depth > w->ring.max_depth) {
        depth = w->ring.max_depth;
        flags |= VMP_ENTRY_TRUNCATED;
    }
    e->time = time;
    e->thread = s->thread;
    e->pc = s->pc;
    e->generation = gen;
    e->blame = s->blame;
    e->state = s->state;
    e->weight = weight;
    e->reason = reason;
    e->depth = depth;
    e->flags = flags;
    vmp_frame *frames = vmp_ring__frames(slot);
    for (uint32_t i = 0; i < depth; i++)
        frames[i] = s->frames[i];
    vmp_ring__commit(slot, pos);
out:
    errno = saved_errno;
    return st;
}

vmp_status vmp_writer_sample(vmp_writer *w, const vmp_sample *s)
{
    return s ? push(w, s, 0, 0, s->weight ? s->weight : 1) : VMP_ERR_INVALID_ARG;
}

vmp_status vmp_writer_failed_sample(vmp_writer *w, const vmp_sample *s, uint32_t reason)
{
    return s ? push(w, s, VMP_ENTRY_FAILED, reason, s->weight ? s->weight : 1)
             : VMP_ERR_INVALID_ARG;
}

vmp_status vmp_writer_kind_sample(vmp_writer *w, uint32_t kind, const vmp_sample *s,
                                  uint64_t weight)
{
    if (!w || kind == 0 || kind > w->n_sample_kinds)
        return VMP_ERR_INVALID_ARG;
    return push(w, s, VMP_ENTRY_KIND, kind, weight);
}

uint64_t vmp_writer_generation(const vmp_writer *w)
{
    return w ? atomic_load(&((vmp_writer *)(uintptr_t)w)->generation) : 0;
}

void vmp_writer_stats(const vmp_writer *cw, vmp_writer_totals *out)
{
    vmp_writer *w = (vmp_writer *)(uintptr_t)cw;
    if (!out)
        return;
    if (!w) {
        *out = (vmp_writer_totals){0};
        return;
    }
    out->samples_written = atomic_load_explicit(&w->samples_written, memory_order_relaxed);
    out->failed_written = atomic_load_explicit(&w->failed_written, memory_order_relaxed);
    out->dropped_full = atomic_load_explicit(&w->dropped_full, memory_order_relaxed);
    out->dropped_write = atomic_load_explicit(&w->dropped_write, memory_order_relaxed) +
                         atomic_load_explicit(&w->dropped_stopped, memory_order_relaxed);
    out->truncated_stacks = atomic_load_explicit(&w->truncated_stacks, memory_order_relaxed);
    out->chunks = atomic_load_explicit(&w->chunks, memory_order_relaxed);
    out->bytes = atomic_load_explicit(&w->bytes, memory_order_relaxed);
    out->write_errno = atomic_load_explicit(&w->write_errno, memory_order_relaxed);
}
