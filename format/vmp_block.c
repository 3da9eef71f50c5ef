/* SPDX-License-Identifier: MIT
 *
 * vmp_block.c - a SAMPLE_BLOCK record gathered column by column (spec.md
 * §5.14, R-BLK-1 to R-BLK-3): a writer appends each sample's fields to
 * their columns, and encodes the block when the chunk needs another record
 * or the block is full.  Varying columns are written packed (byte planes),
 * which compresses ids and deltas far better than CBOR items; stack and
 * thread ids are written as they are, since a table repeated in every block
 * costs more than it saves (bench/NOTES.md).  Samples are put in sample
 * contexts (R-BLK-5), kept for the whole file in an open-addressing table.
 */
#include "vmp_block.h"

#include <stdlib.h>
#include <string.h>

#include "vmp_format.h"
#include "vmp_hash.h"

/* key of each column, and the value a reader takes when it is absent */
static const unsigned column_key[VMP_BLOCK_COLUMNS] = {
    VMP_BLK_THREAD, VMP_BLK_STACK, VMP_BLK_STATE,  VMP_BLK_GENERATION,
    VMP_BLK_WEIGHT, VMP_BLK_BLAME, VMP_BLK_CONTEXT};
static const uint64_t column_default[VMP_BLOCK_COLUMNS] = {0, 0, 0, 0, 1, 0, 0};

/* The map's head and keys, the type, time_base, context_base and the heads
 * of the arrays and strings, at most: 16 pairs. */
#define FRAME_MAX (1u + 2u + 16u * (1u + 9u))

/* The largest encoding of one uint item (a 9-byte CBOR head). */
#define ITEM_MAX 9u

int vmp_block__init(vmp_block *b, uint32_t cap)
{
    int k, ok = 1;
    memset(b, 0, sizeof *b);
    if (cap == 0)
        return -1;
    b->cap = cap;
    b->times = calloc(cap, sizeof *b->times);
    for (k = 0; k < VMP_BLOCK_COLUMNS; k++)
        ok &= (b->col[k] = calloc(cap, sizeof *b->col[k])) != NULL;
    b->pcs = calloc(2 * (size_t)cap, sizeof *b->pcs);
    b->failed = calloc(2 * (size_t)cap, sizeof *b->failed);
    b->new_ctx = calloc(3 * (size_t)cap, sizeof *b->new_ctx);
    if (!ok || !b->times || !b->pcs || !b->failed || !b->new_ctx) {
        vmp_block__free(b);
        return -1;
    }
    return 0;
}

void vmp_block__free(vmp_block *b)
{
    free(b->times);
    for (int k = 0; k < VMP_BLOCK_COLUMNS; k++)
        free(b->col[k]);
    free(b->pcs);
    free(b->failed);
    free(b->new_ctx);
    free(b->ctx);
    memset(b, 0, sizeof *b);
}

/* ---- sample contexts (R-BLK-5) ---------------------------------------------- */

static uint32_t context_hash(uint64_t stack, uint64_t state, uint64_t pc)
{
    return (uint32_t)vmp_hash64(stack ^ vmp_hash64(state ^ vmp_hash64(pc)));
}

/* The slot of (stack, state, pc): its own, or the empty one it would take. */
static uint32_t context_slot(const vmp_block *b, uint64_t stack, uint64_t state, uint64_t pc)
{
    uint32_t mask = b->ctx_slots - 1, i = context_hash(stack, state, pc) & mask;
    while (b->ctx[i].id != 0 &&
           (b->ctx[i].stack != stack || b->ctx[i].state != state || b->ctx[i].pc != pc))
        i = (i + 1) & mask;
    return i;
}

/* Twice the slots (4096 at first); -1 when there is no memory. */
static int grow_contexts(vmp_block *b)
{
    uint32_t old = b->ctx_slots, slots = old ? 2 * old : 4096, i;
    struct vmp_block_context *old_ctx = b->ctx, *ctx = calloc(slots, sizeof *ctx);
    if (ctx == NULL)
        return -1;
    b->ctx = ctx;
    b->ctx_slots = slots;
    for (i = 0; i < old; i++) {
        if (old_ctx[i].id != 0)
            b->ctx[context_slot(b, old_ctx[i].stack, old_ctx[i].state, old_ctx[i].pc)] = old_ctx[i];
    }
    free(old_ctx);
    return 0;
}

/* The context of (stack, state, pc), defined in this block when new; 0
 * when the file has all the contexts it may, or there is no memory. */
static uint64_t context_of(vmp_block *b, uint64_t stack, uint64_t state, uint64_t pc)
{
    uint32_t i;
    if (b->ctx_slots == 0 && grow_contexts(b) < 0)
        return 0;
    i = context_slot(b, stack, state, pc);
    if (b->ctx[i].id != 0)
        return b->ctx[i].id;
    if (b->n_ctx >= VMP_BLOCK_MAX_CONTEXTS)
        return 0;
    if (2 * (b->ctx_held + 1) > b->ctx_slots) { /* at most half full */
        if (grow_contexts(b) < 0)
            return 0;
        i = context_slot(b, stack, state, pc);
    }
    b->ctx[i].stack = stack;
    b->ctx[i].state = state;
    b->ctx[i].pc = pc;
    b->ctx[i].id = ++b->n_ctx;
    b->ctx_held++;
    b->new_ctx[3 * b->n_new] = stack;
    b->new_ctx[3 * b->n_new + 1] = state;
    b->new_ctx[3 * b->n_new + 2] = pc;
    b->n_new++;
    return b->n_ctx;
}

void vmp_block__forget_contexts(vmp_block *b)
{
    /* The ids stay given: the file skips them (R-BLK-5 allows gaps), and
     * the contexts are defined again, under new ids, when samples need them. */
    if (b->ctx_slots > 0)
        memset(b->ctx, 0, b->ctx_slots * sizeof *b->ctx);
    b->ctx_held = 0;
    b->n_new = 0;
}

/* The spread of the time deltas above their least, `lo`, when it fits a
 * packed column (below 2^63: R-BLK-2); else times are written as ints. */
static int times_packed(int64_t lo, int64_t hi, uint64_t *spread)
{
    *spread = (uint64_t)hi - (uint64_t)lo;
    return *spread <= (uint64_t)INT64_MAX;
}

size_t vmp_block__bytes(const vmp_block *b, const vmp_block_sample *s)
{
    size_t n = b->n + (s != NULL), bytes = FRAME_MAX + b->pairs_bytes;
    int64_t lo = b->t_min, hi = b->t_max;
    uint64_t spread;
    if (n == 0)
        return 0;
    if (s != NULL) {
        lo = b->n == 0 || s->dt < lo ? s->dt : lo;
        hi = b->n == 0 || s->dt > hi ? s->dt : hi;
        bytes += 7 * ITEM_MAX; /* a pc pair, a failed pair, a new context */
    }
    bytes += times_packed(lo, hi, &spread) ? vmp_enc__packed_size(n, vmp_enc__width(spread))
                                           : n * ITEM_MAX;
    for (int k = 0; k < VMP_BLOCK_COLUMNS; k++) {
        uint64_t v = !s ? 0 : k == VMP_BLOCK_CONTEXT ? b->n_ctx + 1 : s->v[k];
        uint64_t any = b->any[k] | v;
        int varies = b->varies[k] || (s && b->n > 0 && v != b->col[k][0]);
        bytes += varies ? vmp_enc__packed_size(n, vmp_enc__width(any)) : 1 + ITEM_MAX;
    }
    return bytes;
}

size_t vmp_block__bytes_max(const vmp_block *b)
{
    /* the widest block of cap + 1 samples: every value of 8 bytes (a time
     * as an int of ITEM_MAX), every sample to come with a pc pair, a failed
     * pair and a new context */
    size_t n = (size_t)b->cap + 1, col = vmp_enc__packed_size(n, 8);
    size_t times = n * ITEM_MAX > col ? n * ITEM_MAX : col;
    size_t to_come = n - (b->n < n ? b->n : n);
    return FRAME_MAX + b->pairs_bytes + to_come * 7 * ITEM_MAX + times +
           VMP_BLOCK_COLUMNS * (col > 1 + ITEM_MAX ? col : 1 + ITEM_MAX);
}

int vmp_block__fits(const vmp_block *b, const vmp_block_sample *s, size_t used, size_t limit)
{
    return used + vmp_block__bytes_max(b) <= limit || used + vmp_block__bytes(b, s) <= limit;
}

void vmp_block__add(vmp_block *b, const vmp_block_sample *s)
{
    uint32_t i = b->n++;
    uint64_t v[VMP_BLOCK_COLUMNS];
    uint32_t n_new = b->n_new;
    int has_pc = s->has_pc;
    memcpy(v, s->v, sizeof v);
    /* a context's pc 0 means "none of its own": a stored pc 0 keeps its pair */
    v[VMP_BLOCK_CONTEXT] =
        has_pc && s->pc == 0
            ? 0
            : context_of(b, v[VMP_BLOCK_STACK], v[VMP_BLOCK_STATE], has_pc ? s->pc : 0);
    if (v[VMP_BLOCK_CONTEXT] != 0) { /* R-BLK-5: its stack, state and pc */
        v[VMP_BLOCK_STACK] = v[VMP_BLOCK_STATE] = 0;
        has_pc = 0;
    }
    if (b->n_new > n_new)
        b->pairs_bytes += vmp_enc__head_size(s->v[VMP_BLOCK_STACK]) +
                          vmp_enc__head_size(s->v[VMP_BLOCK_STATE]) +
                          vmp_enc__head_size(s->has_pc ? s->pc : 0);
    b->times[i] = s->dt;
    if (i == 0 || s->dt < b->t_min)
        b->t_min = s->dt;
    if (i == 0 || s->dt > b->t_max)
        b->t_max = s->dt;
    for (int k = 0; k < VMP_BLOCK_COLUMNS; k++) {
        b->col[k][i] = v[k];
        b->any[k] |= v[k];
        b->varies[k] |= v[k] != b->col[k][0];
    }
    if (has_pc) {
        b->pcs[2 * b->n_pcs] = i;
        b->pcs[2 * b->n_pcs + 1] = s->pc;
        b->n_pcs++;
        b->pairs_bytes += vmp_enc__head_size(i) + vmp_enc__head_size(s->pc);
    }
    if (s->failed) {
        b->failed[2 * b->n_failed] = i;
        b->failed[2 * b->n_failed + 1] = s->reason;
        b->n_failed++;
        b->pairs_bytes += vmp_enc__head_size(i) + vmp_enc__head_size(s->reason);
    }
}

int vmp_block__keeps(uint64_t type)
{
    switch (type) {
    case VMP_REC_STACK_NODE:
    case VMP_REC_THREAD:
    case VMP_REC_EVENT:
    case VMP_REC_COUNTER:
    case VMP_REC_CODE_ZONE:
    case VMP_REC_CODE_FREE:
    case VMP_REC_CODE_MOVE:
    case VMP_REC_CODE_COMPACTION:
    case VMP_REC_CODE_SNAPSHOT:
        return 1;
    default:
        return 0;
    }
}

/* Empty the columns. */
static void empty(vmp_block *b)
{
    b->n = b->n_pcs = b->n_failed = 0;
    b->pairs_bytes = 0;
    memset(b->any, 0, sizeof b->any);
    memset(b->varies, 0, sizeof b->varies);
}

void vmp_block__clear(vmp_block *b)
{
    if (b->n_new > 0) /* contexts no reader will see defined */
        vmp_block__forget_contexts(b);
    empty(b);
}

static void pairs(vmp_buf *out, unsigned key, const uint64_t *v, uint32_t n)
{
    vmp_enc__uint(out, key);
    vmp_enc__array(out, 2 * (size_t)n);
    for (uint32_t i = 0; i < 2 * n; i++)
        vmp_enc__uint(out, v[i]);
}

void vmp_block__encode(vmp_block *b, vmp_buf *out)
{
    uint32_t n = b->n, i;
    uint64_t spread;
    int packed = times_packed(b->t_min, b->t_max, &spread), k;
    uint64_t ctx_base = b->n_ctx - b->n_new + 1;
    size_t entries = 2 + (packed && b->t_min != 0) + (b->n_pcs > 0) + (b->n_failed > 0) +
                     (b->n_new > 0) + (b->n_new > 0 && ctx_base != 1);
    if (n == 0)
        return;
    for (k = 0; k < VMP_BLOCK_COLUMNS; k++)
        entries += b->varies[k] || b->col[k][0] != column_default[k];
    vmp_enc__map(out, entries);
    vmp_enc__uint(out, VMP_KEY_TYPE);
    vmp_enc__uint(out, VMP_REC_SAMPLE_BLOCK);
    vmp_enc__uint(out, VMP_BLK_TIMES);
    if (packed) { /* the spread above the least delta, which time_base holds */
        for (i = 0; i < n; i++)
            b->times[i] = (int64_t)((uint64_t)b->times[i] - (uint64_t)b->t_min);
        vmp_enc__packed(out, (const uint64_t *)b->times, n);
        if (b->t_min != 0) {
            vmp_enc__uint(out, VMP_BLK_TIME_BASE);
            vmp_enc__int(out, b->t_min);
        }
    } else {
        vmp_enc__array(out, n);
        for (i = 0; i < n; i++)
            vmp_enc__int(out, b->times[i]);
    }
    for (k = 0; k < VMP_BLOCK_COLUMNS; k++) {
        if (b->varies[k]) {
            vmp_enc__uint(out, column_key[k]);
            vmp_enc__packed(out, b->col[k], n);
        } else if (b->col[k][0] != column_default[k]) {
            vmp_enc__uint(out, column_key[k]);
            vmp_enc__array(out, 1);
            vmp_enc__uint(out, b->col[k][0]);
        }
    }
    if (b->n_pcs > 0)
        pairs(out, VMP_BLK_PCS, b->pcs, b->n_pcs);
    if (b->n_failed > 0)
        pairs(out, VMP_BLK_FAILED, b->failed, b->n_failed);
    if (b->n_new > 0) { /* R-BLK-5: the contexts its samples are the first in */
        vmp_enc__uint(out, VMP_BLK_CONTEXTS);
        vmp_enc__array(out, 3 * (size_t)b->n_new);
        for (i = 0; i < 3 * b->n_new; i++)
            vmp_enc__uint(out, b->new_ctx[i]);
        if (ctx_base != 1) {
            vmp_enc__uint(out, VMP_BLK_CONTEXT_BASE);
            vmp_enc__uint(out, ctx_base);
        }
    }
    b->n_new = 0;
    empty(b);
}
