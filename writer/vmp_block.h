/* SPDX-License-Identifier: MIT
 *
 * vmp_block.h - internal to writer/: the samples of a SAMPLE_BLOCK record
 * (format 2.0, spec.md §5.14) being gathered column by column, and its
 * encoding.  Used by the drain thread under out_mu; never on the sample
 * path.
 */
#ifndef VMP_BLOCK_H
#define VMP_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "vmp_encode.h"

/** A block being filled: one column per field, the thread and stack tables
 *  with their lookup (open addressing, stamped per block so that a new
 *  block needs no clearing). */
typedef struct vmp_block {
    uint32_t n, cap;          /* samples held; at most cap */
    int64_t *times;           /* time deltas, in the header's sample_time_unit */
    uint64_t *thread, *stack; /* indexes into threads[] and stacks[] */
    uint64_t *state, *generation, *weight, *blame;
    uint64_t *pcs; /* n_pcs pairs (sample index, pc), R-BLK-3 */
    uint32_t n_pcs;
    uint64_t *failed; /* n_failed pairs (sample index, reason) */
    uint32_t n_failed;
    uint64_t *threads, *stacks; /* the tables, n_threads and n_stacks values */
    uint32_t n_threads, n_stacks;
    uint64_t *slot_key; /* lookup: value, for (table, value) pairs */
    uint32_t *slot_val; /* (stamp << 1 | table) and index packed: see vmp_block.c */
    uint32_t *slot_stamp;
    uint32_t n_slots, stamp;
    size_t bytes; /* an upper bound of the encoded record's size */
} vmp_block;

/** Allocate a block of at most `cap` samples (>= 1).  0, or -1 (no memory). */
int vmp_block__init(vmp_block *b, uint32_t cap);
void vmp_block__free(vmp_block *b);

/** The bytes sample's columns add to the encoding at most (with its table
 *  entries), for the chunk's size limit: a caller checks before adding. */
size_t vmp_block__sample_bytes(void);

/** Append a sample; `has_pc` when its pc must be stored (it is not its
 *  innermost machine node's, R-BLK-3); `failed` for a failed sample, with
 *  its `reason` (its stack and blame are 0).  The block must not be full. */
void vmp_block__add(vmp_block *b,
                    int64_t dt,
                    uint64_t thread,
                    uint64_t stack,
                    uint64_t state,
                    uint64_t generation,
                    uint64_t weight,
                    uint64_t blame,
                    int has_pc,
                    uint64_t pc,
                    int failed,
                    uint64_t reason);

/** Empty the block without encoding it. */
void vmp_block__clear(vmp_block *b);

/** Append the SAMPLE_BLOCK record of the samples held to `out` and empty the
 *  block.  A column whose values are all its default is left out, one whose
 *  values are all equal is written with one item (R-BLK-1). */
void vmp_block__encode(vmp_block *b, vmp_buf *out);

#endif
