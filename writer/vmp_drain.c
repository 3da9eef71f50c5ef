/* SPDX-License-Identifier: MIT
 *
 * vmp_drain.c - the drain: the record queue and the sample ring merged into
 * chunks (the data flow and the ordering rules are at the top of
 * vmp_writer.c), by the background thread, flush and close (spec.md §5.12,
 * §5.14: samples, stack nodes, sample blocks, the records kept for them).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vmp_format.h"
#include "vmp_writer_int.h"

/* Flush and close wait this long for a claimed slot to be published. */
#define PUBLISH_WAIT_NS 20000000ull

/* ---- draining ------------------------------------------------------------ */

/* lazy_functions: the FUNCTION record of `fn` into the open chunk unless the
 * file holds it before the sample being drained (ring position `pos`). */
static void emit_kept_function(vmp_writer *w, uint64_t fn, uint64_t pos)
{
    vmp_fnstore_slot *slot;
    w->fn_copy.len = 0;
    pthread_mutex_lock(&w->meta_mu); /* out_mu is held: out_mu, then meta_mu */
    slot = vmp_fnstore__due(&w->fns, fn, pos);
    if (slot) {
        vmp_buf__append(&w->fn_copy, w->fns.blob.data + slot->off, slot->len);
        if (!w->fn_copy.failed)
            slot->written = pos;
    }
    pthread_mutex_unlock(&w->meta_mu);
    if (w->fn_copy.failed)
        w->fn_copy.failed = 0; /* out of memory: the node names a function#ID */
    else if (w->fn_copy.len > 0)
        vmp_chunk__add(w, w->fn_copy.data, w->fn_copy.len);
}

/* lazy_symbols: the MODULE_SYMBOLS record of module `t` with the `n`
 * symbols gathered in sym_items, into the open chunk; sym_items emptied. */
static void emit_symbols_record(vmp_writer *w, const vmp_symtab *t, size_t n)
{
    if (n > 0 && !w->sym_items.failed) {
        vmp_rec r;
        w->fn_copy.len = 0;
        vmp_rec__begin(&r, &w->fn_copy, VMP_REC_MODULE_SYMBOLS);
        vmp_rec__uint(&r, VMP_SYMS_MODULE, t->module_id);
        vmp_rec__key(&r, VMP_SYMS_LIST);
        vmp_enc__array(&w->fn_copy, 3 * n);
        vmp_buf__append(&w->fn_copy, w->sym_items.data, w->sym_items.len);
        vmp_rec__end(&r);
        if (!w->fn_copy.failed)
            vmp_chunk__add(w, w->fn_copy.data, w->fn_copy.len);
    }
    /* out of memory: the pcs show as <module>+0x... */
    w->sym_items.len = 0;
    w->sym_items.failed = w->fn_copy.failed = 0;
}

static int symtab_covers(const vmp_symtab *t, uint64_t pc)
{
    return !t->end || (pc >= t->start && pc < t->end);
}

/* lazy_symbols: a MODULE_SYMBOLS record of the symbols `pc` needs that are
 * not written yet (vmp_symtab.h), into the open chunk, for the sample being
 * drained (ring position `pos`: only modules whose MODULE record precedes
 * it). */
static void emit_needed_symbols(vmp_writer *w, uint64_t pc, uint64_t pos)
{
    for (vmp_symtab *t = w->drain_symtabs; t; t = t->next) {
        if (t->stamp > pos || !symtab_covers(t, pc))
            continue;
        w->sym_items.len = 0;
        emit_symbols_record(w, t, vmp_symtab__need(t, pc, &w->sym_items));
        if (t->end)
            return;
    }
}

/* lazy_symbols: the modules whose MODULE record precedes the sample at ring
 * position `pos` and that came after stack nodes were written: those nodes
 * are not written again, so the symbols their pcs need in these modules (as
 * pcs and as return addresses) are written now, before the sample, for the
 * samples that name them from here on (spec R-RES-1). */
static void emit_symbols_of_written_nodes(vmp_writer *w, uint64_t pos)
{
    int pending = 0;
    for (vmp_symtab *t = w->drain_symtabs; t; t = t->next) {
        if (t->nodes_done)
            continue;
        if (t->stamp > pos) {
            pending = 1;
            continue;
        }
        t->nodes_done = 1;
        size_t n = 0;
        w->sym_items.len = 0;
        for (size_t i = 0; i < w->intern.cap; i++) {
            const vmp_intern_entry *e = &w->intern.tab[i];
            if (!e->id || e->kind != VMP_FRAME_PC)
                continue;
            if (symtab_covers(t, e->value))
                n += vmp_symtab__need(t, e->value, &w->sym_items);
            if (e->value > 0 && symtab_covers(t, e->value - 1))
                n += vmp_symtab__need(t, e->value - 1, &w->sym_items);
        }
        emit_symbols_record(w, t, n);
    }
    w->symtabs_pending = pending;
}

/* lazy_code_maps, under meta_mu: append to fn_copy the FUNCTION records and
 * the CODE_MAP of kept entry `e` for the sample at ring position `pos`. */
static void copy_kept_map(vmp_writer *w, vmp_mapstore_entry *e, uint64_t pos)
{
    for (size_t i = 0; w->lazy_functions && i < e->n_fns; i++) {
        vmp_fnstore_slot *slot = vmp_fnstore__due(&w->fns, e->fns[i], pos);
        if (slot) {
            vmp_buf__append(&w->fn_copy, w->fns.blob.data + slot->off, slot->len);
            slot->written = pos;
        }
    }
    vmp_buf__append(&w->fn_copy, e->rec, e->len);
    vmp_mapstore__mark(&w->maps, e, pos);
}

/* lazy_code_maps: the kept code maps that the sample in `slot` (ring position
 * `pos`) lands in, by its pc, its machine frames (as pcs and as return
 * addresses) and its blame, into the open chunk before its stack. */
static void emit_kept_maps(vmp_writer *w, vmp_ring_slot *slot, uint64_t pos)
{
    const vmp_ring_entry *e = &slot->e;
    const vmp_frame *frames = vmp_ring__frames(slot);
    vmp_mapstore_entry *hit[8];
    w->fn_copy.len = 0;
    pthread_mutex_lock(&w->meta_mu); /* out_mu is held: out_mu, then meta_mu */
    if (w->maps.n > 0) {
        for (uint32_t i = 0; i <= e->depth; i++) {
            uint64_t pc = i == e->depth ? e->pc : frames[i].value;
            if (i < e->depth && frames[i].kind != VMP_FRAME_PC)
                continue;
            for (int ret = 0; ret < 2 && pc >= (uint64_t)ret; ret++) {
                size_t n =
                    vmp_mapstore__find(&w->maps, pc - (uint64_t)ret, e->generation, pos, hit, 8);
                for (size_t k = 0; k < n; k++)
                    copy_kept_map(w, hit[k], pos);
            }
        }
        vmp_mapstore_entry *b = e->blame ? vmp_mapstore__get(&w->maps, e->blame) : NULL;
        if (b && b->stamp <= pos && b->written > pos)
            copy_kept_map(w, b, pos);
    }
    pthread_mutex_unlock(&w->meta_mu);
    if (w->fn_copy.failed)
        w->fn_copy.failed = 0; /* out of memory: frames without bytecode ranges */
    else if (w->fn_copy.len > 0)
        vmp_chunk__add(w, w->fn_copy.data, w->fn_copy.len);
}

static void emit_stack_node(vmp_writer *w, uint64_t id, uint64_t parent, const vmp_frame *f)
{
    vmp_rec r;
    if (w->lazy_symbols && f->kind == VMP_FRAME_PC) {
        /* as the innermost frame (pc) and as a caller (return address - 1) */
        emit_needed_symbols(w, f->value, w->ring.tail);
        if (f->value > 0)
            emit_needed_symbols(w, f->value - 1, w->ring.tail);
    }
    if (w->lazy_functions && f->kind == VMP_FRAME_FUNCTION)
        emit_kept_function(w, f->value, w->ring.tail);
    w->scratch.len = 0;
    vmp_rec__begin(&r, &w->scratch, VMP_REC_STACK_NODE);
    vmp_rec__uint(&r, VMP_NODE_ID, id);
    vmp_rec__uint_nz(&r, VMP_NODE_PARENT, parent);
    if (f->kind == VMP_FRAME_FUNCTION) { /* spec R-STK-1: exactly one of pc, function */
        vmp_rec__uint(&r, VMP_NODE_FUNCTION, f->value);
        if (f->bcpc != VMP_BCPC_NONE)
            vmp_rec__uint(&r, VMP_NODE_BCPC, f->bcpc);
    } else {
        vmp_rec__uint(&r, VMP_NODE_PC, f->value);
    }
    vmp_rec__end(&r);
    if (!w->scratch.failed)
        vmp_chunk__add(w, w->scratch.data, w->scratch.len);
}

/* spec §5.15: a sample of a kind, its time absolute (R-KND-2), encoded by
 * the record registry (they are few: no hand-written encoder as for the
 * CPU samples) */
static void encode_kind_sample(vmp_writer *w, const vmp_ring_entry *e, uint64_t stack)
{
    vmp_record rec = {.type = VMP_REC_KIND_SAMPLE};
    rec.u.sample = (vmp_rec_sample){.time_ns = e->time,
                                    .thread = e->thread,
                                    .state = e->state,
                                    .pc = e->pc,
                                    .has_pc = e->pc != 0,
                                    .generation = e->generation,
                                    .stack = stack,
                                    .weight = e->weight,
                                    .kind = e->reason};
    w->scratch.len = 0;
    vmp_record_encode(&w->scratch, &rec, 0);
}

static void encode_sample(vmp_writer *w, const vmp_ring_entry *e, uint64_t stack)
{
    if (e->flags & VMP_ENTRY_KIND) {
        encode_kind_sample(w, e, stack);
        return;
    }
    int failed = (e->flags & VMP_ENTRY_FAILED) != 0;
    vmp_rec r;
    w->scratch.len = 0;
    vmp_rec__begin(&r, &w->scratch, failed ? VMP_REC_FAILED_SAMPLE : VMP_REC_SAMPLE);
    /* spec R-SMP-1: the delta chain restarts in every chunk */
    int64_t delta = (int64_t)(e->time - w->chunk_prev_time);
    if (delta != 0) {
        vmp_rec__key(&r, VMP_SMP_TIME_DELTA);
        vmp_enc__int(&w->scratch, delta);
    }
    vmp_rec__uint(&r, VMP_SMP_THREAD, e->thread);
    vmp_rec__uint_nz(&r, VMP_SMP_STATE, e->state);
    vmp_rec__uint_nz(&r, VMP_SMP_PC, e->pc);
    vmp_rec__uint(&r, VMP_SMP_GENERATION, e->generation);
    if (!failed) {
        vmp_rec__uint_nz(&r, VMP_SMP_STACK, stack);
        vmp_rec__uint_nz(&r, VMP_SMP_BLAME, e->blame);
    }
    if (e->weight != 1)
        vmp_rec__uint(&r, VMP_SMP_WEIGHT, e->weight);
    if (failed)
        vmp_rec__uint_nz(&r, VMP_SMP_REASON, e->reason);
    vmp_rec__end(&r);
}

/* A sample of entry `e` at (reader's) time `t` went into the open chunk:
 * the base of the next delta (R-SMP-1), the seek table's times (§6) and
 * the chunk's counts for END (R-END-1). */
static void count_sample(vmp_writer *w, const vmp_ring_entry *e, uint64_t t)
{
    if (e->flags & VMP_ENTRY_KIND) { /* not a sample of R-SMP-1 or the seek table */
        w->chunk_kind_samples++;
        w->chunk_truncated += (e->flags & VMP_ENTRY_TRUNCATED) != 0;
        return;
    }
    if (w->chunk_samples == 0)
        w->chunk_first_time = t;
    w->chunk_last_time = t;
    w->chunk_prev_time = t;
    w->chunk_samples++;
    w->chunk_failed += (e->flags & VMP_ENTRY_FAILED) != 0;
    w->chunk_truncated += (e->flags & VMP_ENTRY_TRUNCATED) != 0;
}

/* sample_blocks: add the sample in `slot` (innermost node `stack`) to the
 * open chunk's block; 0 when it must be a record of its own (one without a
 * pc whose innermost frame is a machine frame: R-BLK-3). */
static int block_sample(vmp_writer *w, vmp_ring_slot *slot, uint64_t stack)
{
    const vmp_ring_entry *e = &slot->e;
    const vmp_frame *frames = vmp_ring__frames(slot);
    int failed = (e->flags & VMP_ENTRY_FAILED) != 0;
    int leaf_pc = !failed && e->depth > 0 && frames[0].kind == VMP_FRAME_PC;
    if (!e->pc && leaf_pc)
        return 0;
    /* spec R-SMP-1 in the header's unit: truncated toward zero, so the time a
     * reader sums is within a unit of the sample's and never negative */
    uint64_t t;
    vmp_block_sample s = {
        .dt = vmp_block__time_delta(e->time, w->chunk_prev_time, w->time_unit, &t),
        .v = {e->thread, failed ? 0 : stack, e->state, e->generation, e->weight,
              failed ? 0 : e->blame},
        .has_pc = e->pc && !(leaf_pc && frames[0].value == e->pc),
        .pc = e->pc,
        .failed = failed,
        .reason = e->reason,
    };
    /* spec R-CHK-5: the block, with this sample, within the chunk's limit; a
     * new chunk starts the deltas again (R-SMP-1) */
    if (vmp_chunk__open(w) && !vmp_block__fits(&w->block, &s, w->chunk.len, w->chunk_bytes)) {
        vmp_chunk__close(w);
        s.dt = vmp_block__time_delta(e->time, w->chunk_prev_time, w->time_unit, &t);
    }
    if (w->block.n == w->block.cap)
        vmp_chunk__flush_block(w);
    if (!vmp_chunk__open(w))
        w->chunk_opened_ns = vmp_chunk__mono_ns();
    vmp_block__add(&w->block, &s);
    count_sample(w, e, t);
    return 1;
}

static void emit_sample(vmp_writer *w, vmp_ring_slot *slot)
{
    const vmp_ring_entry *e = &slot->e;
    if (atomic_load(&w->stopped)) {
        atomic_fetch_add(&w->dropped_write, 1);
        return;
    }
    if (w->symtabs_pending)
        emit_symbols_of_written_nodes(w, w->ring.tail);
    if (w->lazy_symbols && e->pc)
        emit_needed_symbols(w, e->pc, w->ring.tail);
    if (w->lazy_code_maps)
        emit_kept_maps(w, slot, w->ring.tail);
    /* spec R-ID-1: nodes from the outermost frame in, each before its child
     * and before the sample that names it */
    const vmp_frame *frames = vmp_ring__frames(slot);
    uint64_t hash;
    /* a stack seen before: every node exists, nothing to emit */
    uint64_t parent = vmp_intern__stack_find(&w->intern, frames, e->depth, &hash);
    if (parent == 0) {
        for (uint32_t i = e->depth; i-- > 0;) {
            uint64_t id;
            int fresh = vmp_intern__get(&w->intern, parent, &frames[i], &id);
            if (fresh < 0) {
                atomic_fetch_add(&w->dropped_write, 1);
                return;
            }
            if (fresh)
                emit_stack_node(w, id, parent, &frames[i]);
            parent = id;
        }
        vmp_intern__stack_put(&w->intern, hash, frames, e->depth, parent);
    }
    if (w->sample_blocks && !(e->flags & VMP_ENTRY_KIND) && !atomic_load(&w->stopped) &&
        block_sample(w, slot, parent))
        return;
    encode_sample(w, e, parent);
    if (vmp_chunk__needs_new(w, w->scratch.len)) {
        vmp_chunk__close(w);
        encode_sample(w, e, parent); /* first of the new chunk: delta from 0 */
    }
    if (w->scratch.failed || atomic_load(&w->stopped)) {
        w->scratch.failed = 0;
        atomic_fetch_add(&w->dropped_write, 1);
        return;
    }
    count_sample(w, e, e->time);
    vmp_chunk__add(w, w->scratch.data, w->scratch.len);
}

/* bytes of the next ring slot to prefetch: its header and 64 frames */
#define PREFETCH_BYTES 1152u

/* Write the published samples at positions below `limit`.  With `*wait`, a
 * claimed but unpublished slot is waited for, briefly: its producer may be a
 * thread that the scheduler or the VM has stopped.  After one timeout the
 * drain stops waiting (`*wait` = 0), so a stuck producer costs one wait. */
static void drain_samples(vmp_writer *w, uint64_t limit, int *wait)
{
    uint64_t waited = 0;
    while (w->ring.tail < limit) {
        vmp_ring_slot *slot = vmp_ring__peek(&w->ring);
        if (!slot) {
            if (waited >= PUBLISH_WAIT_NS)
                *wait = 0;
            if (!*wait)
                return;
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
            waited += 50000;
            continue;
        }
        /* the next slot was written by another core: start fetching its
         * header and first frames while this one is emitted (a hint only) */
        const char *next = (const char *)vmp_ring__slot(&w->ring, w->ring.tail + 1);
        size_t ahead = w->ring.stride < PREFETCH_BYTES ? w->ring.stride : PREFETCH_BYTES;
        for (size_t b = 0; b < ahead; b += 64)
            __builtin_prefetch(next + b);
        emit_sample(w, slot);
        vmp_ring__release(&w->ring, slot);
    }
}

void vmp_writer__drain(vmp_writer *w, int wait)
{
    uint64_t head = atomic_load(&w->ring.head);

    pthread_mutex_lock(&w->meta_mu);
    vmp_buf tmp = w->queue;
    w->queue = w->work;
    w->work = tmp;
    if (w->drain_symtabs != w->symtabs) /* the tables of the modules just taken */
        w->symtabs_pending = 1;
    w->drain_symtabs = w->symtabs;
    pthread_mutex_unlock(&w->meta_mu);

    size_t off = 0;
    while (off + sizeof(uint64_t) + sizeof(uint32_t) <= w->work.len) {
        uint64_t stamp;
        uint32_t len;
        memcpy(&stamp, w->work.data + off, sizeof stamp);
        memcpy(&len, w->work.data + off + sizeof stamp, sizeof len);
        off += sizeof stamp + sizeof len;
        drain_samples(w, stamp, &wait);
        if (!atomic_load(&w->stopped))
            vmp_chunk__add(w, w->work.data + off, len);
        off += len;
    }
    w->work.len = 0;
    drain_samples(w, head, &wait);
    if (w->lazy_code_maps) { /* the maps written before every later sample */
        pthread_mutex_lock(&w->meta_mu);
        vmp_mapstore__prune(&w->maps, w->ring.tail);
        pthread_mutex_unlock(&w->meta_mu);
    }
}

void *vmp_writer__background(void *arg)
{
    vmp_writer *w = arg;
    uint32_t period_ms = 50;
    if (w->chunk_age_ms != VMP_WRITER_NO_AGE_LIMIT && w->chunk_age_ms / 4 < period_ms)
        period_ms = w->chunk_age_ms / 4 ? w->chunk_age_ms / 4 : 1;
    for (;;) {
        pthread_mutex_lock(&w->wake_mu);
        if (!w->stop) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            ts.tv_nsec += (long)period_ms * 1000000L;
            ts.tv_sec += ts.tv_nsec / 1000000000L;
            ts.tv_nsec %= 1000000000L;
            pthread_cond_timedwait(&w->wake_cv, &w->wake_mu, &ts);
        }
        int stop = w->stop;
        pthread_mutex_unlock(&w->wake_mu);
        if (stop)
            break;
        pthread_mutex_lock(&w->out_mu);
        vmp_writer__drain(w, 0);
        if (w->chunk_age_ms != VMP_WRITER_NO_AGE_LIMIT && vmp_chunk__open(w) &&
            vmp_chunk__mono_ns() - w->chunk_opened_ns >= (uint64_t)w->chunk_age_ms * 1000000u)
            vmp_chunk__close(w);
        pthread_mutex_unlock(&w->out_mu);
    }
    return NULL;
}
