/* SPDX-License-Identifier: MIT
 *
 * vmp_block.c - a SAMPLE_BLOCK record gathered column by column (spec.md
 * §5.14, R-BLK-1 to R-BLK-3): the writer's drain appends each sample's
 * fields to their columns, and the block is encoded when the chunk needs
 * another record or the block is full.
 */
#include "vmp_block.h"

#include <stdlib.h>
#include <string.h>

#include "vmp_format.h"

/* A lookup slot is live when its stamp is the block's; its value packs the
 * table (bit 0: 0 threads, 1 stacks) and the index (the rest). */

int vmp_block__init(vmp_block *b, uint32_t cap)
{
    memset(b, 0, sizeof *b);
    if (cap == 0)
        return -1;
    b->cap = cap;
    b->n_slots = 16;
    while (b->n_slots < 4 * cap)
        b->n_slots *= 2;
    b->times = calloc(cap, sizeof *b->times);
    b->thread = calloc(cap, sizeof *b->thread);
    b->stack = calloc(cap, sizeof *b->stack);
    b->state = calloc(cap, sizeof *b->state);
    b->generation = calloc(cap, sizeof *b->generation);
    b->weight = calloc(cap, sizeof *b->weight);
    b->blame = calloc(cap, sizeof *b->blame);
    b->pcs = calloc(2 * (size_t)cap, sizeof *b->pcs);
    b->failed = calloc(2 * (size_t)cap, sizeof *b->failed);
    b->threads = calloc(cap, sizeof *b->threads);
    b->stacks = calloc(cap, sizeof *b->stacks);
    b->slot_key = calloc(b->n_slots, sizeof *b->slot_key);
    b->slot_val = calloc(b->n_slots, sizeof *b->slot_val);
    b->slot_stamp = calloc(b->n_slots, sizeof *b->slot_stamp);
    b->stamp = 1;
    if (!b->times || !b->thread || !b->stack || !b->state || !b->generation || !b->weight ||
        !b->blame || !b->pcs || !b->failed || !b->threads || !b->stacks || !b->slot_key ||
        !b->slot_val || !b->slot_stamp) {
        vmp_block__free(b);
        return -1;
    }
    return 0;
}

void vmp_block__free(vmp_block *b)
{
    free(b->times);
    free(b->thread);
    free(b->stack);
    free(b->state);
    free(b->generation);
    free(b->weight);
    free(b->blame);
    free(b->pcs);
    free(b->failed);
    free(b->threads);
    free(b->stacks);
    free(b->slot_key);
    free(b->slot_val);
    free(b->slot_stamp);
    memset(b, 0, sizeof *b);
}

/* The largest encoding of one uint or int item (a 9-byte CBOR head). */
#define ITEM_MAX 9u

size_t vmp_block__sample_bytes(void)
{
    /* time, thread, stack, state, generation, weight, blame; a pc pair, a
     * failed pair; a thread and a stack table entry */
    return 7 * ITEM_MAX + 4 * ITEM_MAX + 2 * ITEM_MAX;
}

/* The index of `v` in table `t` (0 threads, 1 stacks), added when new. */
static uint64_t table_index(vmp_block *b, int t, uint64_t v)
{
    uint64_t h = (v ^ (uint64_t)t) * 0x9E3779B97F4A7C15u;
    uint32_t mask = b->n_slots - 1, i = (uint32_t)(h >> 32) & mask;
    for (;; i = (i + 1) & mask) {
        if (b->slot_stamp[i] != b->stamp) {
            uint64_t *tab = t ? b->stacks : b->threads;
            uint32_t *n = t ? &b->n_stacks : &b->n_threads;
            b->slot_stamp[i] = b->stamp;
            b->slot_key[i] = v;
            b->slot_val[i] = *n << 1 | (uint32_t)t;
            tab[*n] = v;
            b->bytes += ITEM_MAX;
            return (*n)++;
        }
        if (b->slot_key[i] == v && (b->slot_val[i] & 1) == (uint32_t)t)
            return b->slot_val[i] >> 1;
    }
}

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
                    uint64_t reason)
{
    uint32_t i = b->n++;
    if (i == 0)
        b->bytes = 64; /* the map, its keys and the array heads */
    b->times[i] = dt;
    b->thread[i] = table_index(b, 0, thread);
    b->stack[i] = table_index(b, 1, stack);
    b->state[i] = state;
    b->generation[i] = generation;
    b->weight[i] = weight;
    b->blame[i] = blame;
    b->bytes += 7 * ITEM_MAX;
    if (has_pc) {
        b->pcs[2 * b->n_pcs] = i;
        b->pcs[2 * b->n_pcs + 1] = pc;
        b->n_pcs++;
        b->bytes += 2 * ITEM_MAX;
    }
    if (failed) {
        b->failed[2 * b->n_failed] = i;
        b->failed[2 * b->n_failed + 1] = reason;
        b->n_failed++;
        b->bytes += 2 * ITEM_MAX;
    }
}

/* A column: left out when every value is `dflt`, one item when all are
 * equal, else one item per sample.  Returns the number of map entries (0
 * or 1) written to `out`, or counts them when `out` is NULL. */
static int column(vmp_buf *out, unsigned key, const uint64_t *v, uint32_t n, uint64_t dflt)
{
    uint32_t i;
    int same = 1;
    for (i = 1; i < n && same; i++)
        same = v[i] == v[0];
    if (same && v[0] == dflt)
        return 0;
    if (out) {
        vmp_enc__uint(out, key);
        vmp_enc__array(out, same ? 1 : n);
        for (i = 0; i < (same ? 1 : n); i++)
            vmp_enc__uint(out, v[i]);
    }
    return 1;
}

static void table(vmp_buf *out, unsigned key, const uint64_t *v, uint32_t n)
{
    vmp_enc__uint(out, key);
    vmp_enc__array(out, n);
    for (uint32_t i = 0; i < n; i++)
        vmp_enc__uint(out, v[i]);
}

void vmp_block__clear(vmp_block *b)
{
    b->n = b->n_pcs = b->n_failed = b->n_threads = b->n_stacks = 0;
    b->bytes = 0;
    if (++b->stamp == 0) { /* wrapped: clear the stamps once */
        memset(b->slot_stamp, 0, b->n_slots * sizeof *b->slot_stamp);
        b->stamp = 1;
    }
}

void vmp_block__encode(vmp_block *b, vmp_buf *out)
{
    uint32_t n = b->n, i;
    size_t pairs;
    if (n == 0)
        return;
    /* the tables are always written: their columns index them */
    pairs = 1 + 1 + 2 + 2 + (size_t)column(NULL, 0, b->state, n, 0) +
            (size_t)column(NULL, 0, b->generation, n, 0) +
            (size_t)column(NULL, 0, b->weight, n, 1) + (size_t)column(NULL, 0, b->blame, n, 0) +
            (b->n_pcs > 0) + (b->n_failed > 0);
    vmp_enc__map(out, pairs);
    vmp_enc__uint(out, VMP_KEY_TYPE);
    vmp_enc__uint(out, VMP_REC_SAMPLE_BLOCK);
    vmp_enc__uint(out, VMP_BLK_TIMES);
    vmp_enc__array(out, n);
    for (i = 0; i < n; i++)
        vmp_enc__int(out, b->times[i]);
    table(out, VMP_BLK_THREADS, b->threads, b->n_threads);
    vmp_enc__uint(out, VMP_BLK_THREAD);
    vmp_enc__array(out, b->n_threads == 1 ? 1 : n);
    for (i = 0; i < (b->n_threads == 1 ? 1 : n); i++)
        vmp_enc__uint(out, b->thread[i]);
    table(out, VMP_BLK_STACKS, b->stacks, b->n_stacks);
    vmp_enc__uint(out, VMP_BLK_STACK);
    vmp_enc__array(out, b->n_stacks == 1 ? 1 : n);
    for (i = 0; i < (b->n_stacks == 1 ? 1 : n); i++)
        vmp_enc__uint(out, b->stack[i]);
    column(out, VMP_BLK_STATE, b->state, n, 0);
    column(out, VMP_BLK_GENERATION, b->generation, n, 0);
    column(out, VMP_BLK_WEIGHT, b->weight, n, 1);
    column(out, VMP_BLK_BLAME, b->blame, n, 0);
    if (b->n_pcs > 0)
        table(out, VMP_BLK_PCS, b->pcs, 2 * b->n_pcs);
    if (b->n_failed > 0)
        table(out, VMP_BLK_FAILED, b->failed, 2 * b->n_failed);
    vmp_block__clear(b);
}
