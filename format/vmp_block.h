/* SPDX-License-Identifier: MIT
 *
 * vmp_block.h - the samples of a SAMPLE_BLOCK record (format 2.0, spec.md
 * §5.14) gathered column by column, and its encoding: shared by the in-VM
 * writer's drain thread and the tools' record writer.  Never on the sample
 * path.  One block is used by one thread at a time.  Internal to the
 * libraries; not installed.
 */
#ifndef VMP_BLOCK_H
#define VMP_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "vmp_encode.h"

/* The columns of a block, in key order from `thread` (spec §5.14). */
enum {
    VMP_BLOCK_THREAD,
    VMP_BLOCK_STACK,
    VMP_BLOCK_STATE,
    VMP_BLOCK_GENERATION,
    VMP_BLOCK_WEIGHT,
    VMP_BLOCK_BLAME,
    VMP_BLOCK_CONTEXT,
    VMP_BLOCK_COLUMNS
};

/** Sample contexts a writer defines at most (spec R-BLK-5: a reader
 *  accepts 4 Mi); past them, samples are written with their stack, state
 *  and pc.  The table takes 32 bytes a slot, up to twice as many slots. */
#define VMP_BLOCK_MAX_CONTEXTS ((uint64_t)1 << 18)

/** A block being filled, and the sample contexts of the file it is written
 *  to (spec R-BLK-5): each sample is put in the context of its (stack,
 *  state, pc), defined by the first block that needs it, while the file
 *  has fewer than VMP_BLOCK_MAX_CONTEXTS; other samples keep their stack
 *  and state columns and their pc.  The columns hold thread ids and stack
 *  node ids themselves (no tables); the encoding writes a column whose
 *  values are all equal as one item (none when that is its default) and
 *  any other packed, `times` packed above `time_base` = the least delta. */
typedef struct vmp_block {
    uint32_t n, cap;                  /* samples held; at most cap */
    int64_t *times;                   /* time deltas, in the header's sample_time_unit */
    int64_t t_min, t_max;             /* of times[0..n) */
    uint64_t *col[VMP_BLOCK_COLUMNS]; /* cap values each */
    uint64_t any[VMP_BLOCK_COLUMNS];  /* the OR of each column's values: its width */
    int varies[VMP_BLOCK_COLUMNS];    /* some value differs from the first */
    uint64_t *pcs;                    /* n_pcs pairs (sample index, pc), R-BLK-3 */
    uint32_t n_pcs;
    uint64_t *failed; /* n_failed pairs (sample index, reason) */
    uint32_t n_failed;
    size_t pairs_bytes; /* the pairs' and new contexts' CBOR items */

    /* the file's contexts: (stack, state, pc) -> id, open addressing; a
     * slot is one 32-byte line part, so a probe reads one cache line */
    struct vmp_block_context {
        uint64_t stack, state, pc;
        uint64_t id; /* 0 = empty slot */
    } * ctx;

    uint32_t ctx_slots; /* a power of 2, or 0 before the first */
    uint32_t ctx_held;  /* slots in use (forgetting empties them) */
    uint64_t n_ctx;     /* ids given: 1..n_ctx */
    uint64_t *new_ctx;  /* the triples this block defines, 3 * cap */
    uint32_t n_new;     /* ... from id n_ctx - n_new + 1 */
} vmp_block;

/** Allocate a block of at most `cap` samples (>= 1).  0, or -1 (no memory). */
int vmp_block__init(vmp_block *b, uint32_t cap);
void vmp_block__free(vmp_block *b);

/** One sample as a block holds it. */
typedef struct vmp_block_sample {
    int64_t dt;                    /* time delta, in the header's sample_time_unit */
    uint64_t v[VMP_BLOCK_COLUMNS]; /* thread, stack node, state, generation, weight, blame;
                                      the context is the block's to choose */
    int has_pc;                    /* its pc must be stored: not its innermost
                                      machine node's (R-BLK-3) */
    uint64_t pc;
    int failed; /* a failed sample (its stack and blame 0) */
    uint64_t reason;
} vmp_block_sample;

/** The bytes vmp_block__encode() would append with `s` added (NULL: as the
 *  block is), at most: a writer checks it against its chunk's size limit
 *  before adding. */
size_t vmp_block__bytes(const vmp_block *b, const vmp_block_sample *s);

/** An upper bound of vmp_block__bytes(b, s) for any sample `s`, and for
 *  every sample added until the block is full: a few operations, where
 *  vmp_block__bytes() looks at every column.  A writer whose chunk has room
 *  for it needs no exact figure. */
size_t vmp_block__bytes_max(const vmp_block *b);

/** Whether `used` bytes and the block with `s` added stay within `limit`
 *  (the check both writers make before adding a sample, spec R-CHK-5):
 *  vmp_block__bytes_max() first, vmp_block__bytes() only when it does not
 *  settle it. */
int vmp_block__fits(const vmp_block *b, const vmp_block_sample *s, size_t used, size_t limit);

/** Sample time `time` as a delta from `prev` in `unit` ns (R-SMP-1),
 *  truncated toward zero; *at receives the time a reader sums it to (within
 *  a unit of `time`, never past it). */
static inline int64_t vmp_block__time_delta(uint64_t time, uint64_t prev, uint64_t unit,
                                            uint64_t *at)
{
    int64_t q = (int64_t)(time - prev) / (int64_t)unit;
    *at = prev + (uint64_t)q * unit;
    return q;
}

/** Append sample `s`.  The block must not be full. */
void vmp_block__add(vmp_block *b, const vmp_block_sample *s);

/** Whether a record of `type` leaves the resolution of the samples before
 *  it as it was, so that a pending block's samples may follow it in the
 *  file: a STACK_NODE (a new id, which no earlier sample names), a THREAD
 *  (names belong to the thread, R-ID-3), an EVENT, a COUNTER, a CODE_ZONE,
 *  and a change record (a sample resolves at its own generation, whatever
 *  changes come after it: spec §5 "Generations"; R-SMP-3 holds, the
 *  samples only move later).  Every other record (code objects and maps,
 *  modules and symbols, functions, samples: R-RES-1, R-SMP-1) must come
 *  after the block: a writer encodes the block first. */
int vmp_block__keeps(uint64_t type);

/** Empty the block without encoding it; the contexts it defined are
 *  forgotten. */
void vmp_block__clear(vmp_block *b);

/** Forget every context defined so far, when some of their definitions
 *  will not reach the file (a chunk was dropped): later samples define
 *  them again, under new ids. */
void vmp_block__forget_contexts(vmp_block *b);

/** Append the SAMPLE_BLOCK record of the samples held to `out` (nothing when
 *  there are none) and empty the block.  Allocation failures set
 *  out->failed. */
void vmp_block__encode(vmp_block *b, vmp_buf *out);

#endif
