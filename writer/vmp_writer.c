/* SPDX-License-Identifier: MIT
 *
 * vmp_writer.c - open, flush and close, the background thread, and the code
 * and metadata records (spec.md §3, §5, §6).
 *
 * Data flow.  The sample path (vmp_sample.c) fills ring slots.  The metadata
 * functions encode their records at once, under meta_mu, into the record
 * queue; each queued record carries a *stamp*: the ring head (the number of
 * sample slots claimed so far) read under meta_mu.  A drain (background
 * thread, flush, close) merges both streams into chunks:
 *
 *   1. H = ring head;
 *   2. take the whole record queue;
 *   3. for each queued record with stamp S: write the published samples at
 *      positions < S, then the record;
 *   4. write the published samples at positions < H.
 *
 * Ordering.  A record whose call returned before a sample was taken has a
 * stamp <= that sample's position, so it is written first; and a drain that
 * sees the sample's slot (position < H, H read before the queue was taken)
 * also sees the record in the queue.  Generation changes read the stamp
 * before they increment the generation, and the sample path loads the
 * generation before it claims its slot (both sequentially consistent), so a
 * sample that carries a new generation is written after the change's record.
 *
 * Determinism.  The merge order depends only on the order of the calls, not
 * on when drains run, and chunks close only on size, flush and close when the
 * age limit is off: one thread making the same calls with a deterministic
 * clock gets the same bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vmp_format.h"
#include "vmp_writer_int.h"

#define DEFAULT_CHUNK_BYTES (1u << 20)
#define DEFAULT_AGE_MS      1000u
#define DEFAULT_LEVEL       3
#define DEFAULT_SLOTS       8192u
#define DEFAULT_DEPTH       128u
#define MAX_DEPTH_LIMIT     65536u
#define MAX_SAMPLE_KINDS    256u /* kinds a writer declares (spec R-KND-1) */
#define MIN_CHUNK_BYTES     256u
/* samples of a SAMPLE_BLOCK at most (sample_blocks) */
#define BLOCK_SAMPLES 1024u
/* Flush and close wait this long for a claimed slot to be published. */
#define PUBLISH_WAIT_NS 20000000ull
/* END has at most 8 uint fields: bounded by 2 + 8 * (1 + 9) bytes. */
#define END_MAX_BYTES 96u
/* lazy_code_maps: kept maps past this many bytes are all written */
#define MAP_BYTES_MAX (16u << 20)

uint64_t vmp_writer__now(const vmp_writer *w)
{
    uint64_t now = w->clock ? w->clock(w->clock_ud) : vmp_chunk__mono_ns();
    return now > w->origin ? now - w->origin : 0;
}

/* A value of the writer's clock, as ns since the time origin. */
static uint64_t from_clock(const vmp_writer *w, uint64_t raw)
{
    return raw > w->origin ? raw - w->origin : 0;
}

/* ---- the record queue ---------------------------------------------------- */

vmp_status vmp_writer__meta_lock(vmp_writer *w, uint64_t *stamp_out, size_t *mark_out)
{
    pthread_mutex_lock(&w->meta_mu);
    if (atomic_load(&w->stopped)) {
        pthread_mutex_unlock(&w->meta_mu);
        return VMP_ERR_CLOSED;
    }
    *stamp_out = atomic_load(&w->ring.head);
    *mark_out = w->queue.len;
    return VMP_OK;
}

size_t vmp_writer__entry_begin(vmp_writer *w, uint64_t stamp)
{
    size_t at = w->queue.len;
    uint32_t len = 0;
    vmp_buf__append(&w->queue, &stamp, sizeof stamp);
    vmp_buf__append(&w->queue, &len, sizeof len);
    return at;
}

void vmp_writer__entry_end(vmp_writer *w, size_t at)
{
    if (w->queue.failed)
        return;
    uint32_t len = (uint32_t)(w->queue.len - at - sizeof(uint64_t) - sizeof(uint32_t));
    memcpy(w->queue.data + at + sizeof(uint64_t), &len, sizeof len);
}

void vmp_writer__queue_record(vmp_writer *w, uint64_t stamp, const vmp_record *rec)
{
    size_t at = vmp_writer__entry_begin(w, stamp);
    vmp_record_encode(&w->queue, rec, 0);
    vmp_writer__entry_end(w, at);
}

vmp_str vmp_writer__str(const char *s)
{
    vmp_str v = {s ? s : "", s ? strlen(s) : 0};
    return v;
}

vmp_status vmp_writer__meta_unlock(vmp_writer *w, size_t mark, vmp_status st)
{
    if (w->queue.failed || st < 0) {
        w->queue.len = mark;
        if (w->queue.failed)
            st = VMP_ERR_NOMEM;
        w->queue.failed = 0;
    }
    pthread_mutex_unlock(&w->meta_mu);
    return st;
}

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

static void drain(vmp_writer *w, int wait)
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

static void *background(void *arg)
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
        drain(w, 0);
        if (w->chunk_age_ms != VMP_WRITER_NO_AGE_LIMIT && vmp_chunk__open(w) &&
            vmp_chunk__mono_ns() - w->chunk_opened_ns >= (uint64_t)w->chunk_age_ms * 1000000u)
            vmp_chunk__close(w);
        pthread_mutex_unlock(&w->out_mu);
    }
    return NULL;
}

/* ---- open ------------------------------------------------------------------ */

static void enc_str_array(vmp_rec *r, unsigned key, const char *const *v, size_t n)
{
    if (!v || n == 0)
        return;
    vmp_rec__key(r, key);
    vmp_enc__array(r->b, n);
    for (size_t i = 0; i < n; i++)
        vmp_enc__tstr(r->b, v[i]);
}

static void encode_header(vmp_writer *w,
                          const vmp_writer_meta *m,
                          const vmp_writer_options *o,
                          uint64_t realtime)
{
    static const vmp_writer_meta none;
    if (!m)
        m = &none;
    vmp_rec r;
    w->scratch.len = 0;
    vmp_rec__begin(&r, &w->scratch, VMP_REC_HEADER);
    vmp_rec__tstr_ne(&r, VMP_HDR_PRODUCER, VMP_WRITER_PRODUCER);
    vmp_rec__tstr_ne(&r, VMP_HDR_VM_NAME, m->vm_name);
    vmp_rec__tstr_ne(&r, VMP_HDR_VM_VERSION, m->vm_version);
    vmp_rec__uint(&r, VMP_HDR_PID, m->pid ? m->pid : (uint64_t)getpid());
    vmp_rec__uint_nz(&r, VMP_HDR_START_REALTIME, realtime);
    const char *clock_name = o->clock_name ? o->clock_name : o->clock ? "custom" : "monotonic";
    vmp_rec__tstr_ne(&r, VMP_HDR_CLOCK, clock_name);
    if (!o->clock) {
        struct timespec res;
        if (clock_getres(CLOCK_MONOTONIC, &res) == 0)
            vmp_rec__uint_nz(&r, VMP_HDR_CLOCK_RES,
                             (uint64_t)res.tv_sec * 1000000000u + (uint64_t)res.tv_nsec);
    }
    vmp_rec__uint_nz(&r, VMP_HDR_INTERVAL, m->sample_interval_ns);
    vmp_rec__uint(&r, VMP_HDR_POINTER_SIZE, sizeof(void *));
    enc_str_array(&r, VMP_HDR_STATES, m->states, m->n_states);
    enc_str_array(&r, VMP_HDR_CODE_KINDS, m->code_kinds, m->n_code_kinds);
    enc_str_array(&r, VMP_HDR_TIERS, m->tiers, m->n_tiers);
    enc_str_array(&r, VMP_HDR_EVENT_KINDS, m->event_kinds, m->n_event_kinds);
    enc_str_array(&r, VMP_HDR_COUNTER_KINDS, m->counter_kinds, m->n_counter_kinds);
    enc_str_array(&r, VMP_HDR_FAILURE_REASONS, m->failure_reasons, m->n_failure_reasons);
    if (m->labels && m->n_labels) {
        vmp_rec__key(&r, VMP_HDR_LABELS);
        vmp_enc__map(&w->scratch, m->n_labels);
        for (size_t i = 0; i < 2 * m->n_labels; i++)
            vmp_enc__tstr(&w->scratch, m->labels[i]);
    }
    vmp_rec__uint(&r, VMP_HDR_START_MONOTONIC, w->origin);
    vmp_rec__tstr_ne(&r, VMP_HDR_NAME_SEPARATOR, m->name_separator);
    if (w->sample_blocks && w->time_unit > 1)
        vmp_rec__uint(&r, VMP_HDR_SAMPLE_TIME_UNIT, w->time_unit);
    if (w->n_sample_kinds > 0) { /* spec R-KND-1 */
        enc_str_array(&r, VMP_HDR_SAMPLE_KINDS, o->sample_kinds, w->n_sample_kinds);
        if (o->sample_units) {
            vmp_rec__key(&r, VMP_HDR_SAMPLE_UNITS);
            vmp_enc__array(&w->scratch, w->n_sample_kinds);
            for (size_t i = 0; i < w->n_sample_kinds; i++)
                vmp_enc__tstr(&w->scratch, o->sample_units[i] ? o->sample_units[i] : "count");
        }
    }
    vmp_rec__end(&r);
}

static void free_writer(vmp_writer *w)
{
    if (w->cctx)
        ZSTD_freeCCtx(w->cctx);
    vmp_ring__free(&w->ring);
    vmp_intern__free(&w->intern);
    vmp_fnstore__free(&w->fns);
    vmp_mapstore__free(&w->maps);
    vmp_buf__free(&w->map_rec);
    vmp_buf__free(&w->map_fns);
    vmp_buf__free(&w->fn_copy);
    while (w->symtabs) {
        vmp_symtab *next = w->symtabs->next;
        vmp_symtab__free(w->symtabs);
        w->symtabs = next;
    }
    vmp_buf__free(&w->sym_items);
    vmp_buf__free(&w->queue);
    vmp_buf__free(&w->work);
    vmp_buf__free(&w->scratch);
    vmp_buf__free(&w->chunk);
    vmp_block__free(&w->block);
    vmp_buf__free(&w->block_buf);
    vmp_buf__free(&w->zbuf);
    vmp_buf__free(&w->seek);
    free(w->loaded_keys);
    pthread_mutex_destroy(&w->loaded_mu);
    pthread_mutex_destroy(&w->meta_mu);
    pthread_mutex_destroy(&w->out_mu);
    pthread_mutex_destroy(&w->wake_mu);
    pthread_cond_destroy(&w->wake_cv);
    free(w);
}

/* spec R-KND-1: kinds named, not "cpu", none twice; format 2 only */
static int valid_kinds(const vmp_writer_options *o)
{
    if (o->version < 2 || o->n_sample_kinds == 0)
        return 1;
    if (!o->sample_kinds || o->format_major == 1 || o->n_sample_kinds > MAX_SAMPLE_KINDS)
        return 0;
    for (size_t i = 0; i < o->n_sample_kinds; i++) {
        const char *k = o->sample_kinds[i];
        if (!k || !*k || strcmp(k, "cpu") == 0)
            return 0;
        for (size_t j = 0; j < i; j++)
            if (strcmp(k, o->sample_kinds[j]) == 0)
                return 0;
    }
    return 1;
}

static vmp_status open_impl(vmp_writer **out,
                            int fd,
                            int own_fd,
                            const vmp_writer_meta *meta,
                            const vmp_writer_options *opts)
{
    static const vmp_writer_options defaults = VMP_WRITER_OPTIONS_INIT;
    if (!opts)
        opts = &defaults;
    if (opts->version < 1 || (opts->max_depth > MAX_DEPTH_LIMIT) || opts->format_major > 2 ||
        (meta && ((meta->n_states && !meta->states) || (meta->n_labels && !meta->labels))) ||
        !valid_kinds(opts))
        return VMP_ERR_INVALID_ARG;

    /* The ring's head and tail sit on their own cache lines (_Alignas(64)). */
    size_t wsize = (sizeof(vmp_writer) + 63u) & ~(size_t)63u;
    vmp_writer *w = aligned_alloc(_Alignof(vmp_writer), wsize);
    if (!w)
        return VMP_ERR_NOMEM;
    memset(w, 0, wsize);
    pthread_mutex_init(&w->meta_mu, NULL);
    pthread_mutex_init(&w->loaded_mu, NULL);
    pthread_mutex_init(&w->out_mu, NULL);
    pthread_mutex_init(&w->wake_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->wake_cv, &ca);
    pthread_condattr_destroy(&ca);

    w->fd = fd;
    w->own_fd = own_fd;
    w->chunk_bytes = opts->chunk_bytes ? opts->chunk_bytes : DEFAULT_CHUNK_BYTES;
    if (w->chunk_bytes < MIN_CHUNK_BYTES)
        w->chunk_bytes = MIN_CHUNK_BYTES;
    w->chunk_age_ms = opts->chunk_age_ms ? opts->chunk_age_ms : DEFAULT_AGE_MS;
    w->zstd_level = opts->zstd_level ? opts->zstd_level : DEFAULT_LEVEL;
    w->no_seek_table = opts->no_seek_table;
    w->lazy_functions = opts->lazy_functions != 0;
    w->lazy_symbols = opts->lazy_symbols != 0;
    w->lazy_code_maps = opts->lazy_code_maps != 0;
    w->sample_blocks = opts->format_major != 1;
    if (opts->version >= 2 && opts->n_sample_kinds > 0)
        w->n_sample_kinds = (uint32_t)opts->n_sample_kinds;
    if (opts->sample_time_unit_ns)
        w->time_unit = opts->sample_time_unit_ns;
    else /* below 10 us, a microsecond would lose the sampler's resolution */
        w->time_unit = meta && meta->sample_interval_ns >= 10000 ? 1000 : 1;
    w->clock = opts->clock;
    w->clock_ud = opts->clock_ud;
    w->next_zone_id = 1;
    w->next_module_id = 1;
    atomic_init(&w->generation, 0);

    vmp_status st = VMP_ERR_NOMEM;
    uint32_t slots = opts->ring_slots ? opts->ring_slots : DEFAULT_SLOTS;
    uint32_t depth = opts->max_depth ? opts->max_depth : DEFAULT_DEPTH;
    if (slots > (1u << 24))
        slots = 1u << 24;
    if (vmp_ring__init(&w->ring, slots, depth) < 0 || vmp_intern__init(&w->intern) < 0)
        goto fail;
    w->cctx = ZSTD_createCCtx();
    if (!w->cctx)
        goto fail;
    if (ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, w->zstd_level)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_contentSizeFlag, 1))) {
        st = VMP_ERR_INVALID_ARG;
        goto fail;
    }
    if (vmp_buf__reserve(&w->chunk, w->chunk_bytes + 1024) < 0 ||
        vmp_buf__reserve(&w->zbuf, ZSTD_compressBound(w->chunk_bytes + 1024)) < 0 ||
        vmp_buf__reserve(&w->scratch, 4096) < 0 || vmp_buf__reserve(&w->queue, 4096) < 0 ||
        vmp_buf__reserve(&w->work, 4096) < 0 ||
        (w->sample_blocks && vmp_block__init(&w->block, BLOCK_SAMPLES) < 0))
        goto fail;

    /* The time origin (spec R-HDR-5).  A custom clock gives no wall-clock
     * anchor: start_realtime stays 0 so that such files are reproducible. */
    uint64_t realtime = 0;
    if (w->clock) {
        w->origin = w->clock(w->clock_ud);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        w->origin = vmp_chunk__mono_ns();
        realtime = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    }

    off_t pos = lseek(fd, 0, SEEK_CUR);
    w->base_offset = pos > 0 ? (uint64_t)pos : 0;

    /* spec R-HDR-1, R-HDR-2, R-HDR-4: the file header frame */
    uint8_t hdr[VMP_FILE_FRAME_BYTES];
    /* 2.0 for SAMPLE_BLOCK records (spec R-BLK-4); else the least minor of
     * 1 the file needs: 1.2 for CODE_MAP records, 1.1 for its name
     * separator */
    if (w->sample_blocks)
        vmp_enc__file_frame(hdr, 2, w->n_sample_kinds > 0 ? 1 : 0);
    else
        vmp_enc__file_frame(hdr, 1,
                            w->lazy_code_maps                                       ? 2
                            : meta && meta->name_separator && *meta->name_separator ? 1
                                                                                    : 0);
    if (vmp_chunk__write(w, hdr, sizeof hdr) < 0) {
        st = VMP_ERR_IO;
        goto fail;
    }

    /* spec R-HDR-5: HEADER is the first record of the first chunk */
    encode_header(w, meta, opts, realtime);
    if (w->scratch.failed)
        goto fail;
    vmp_chunk__add(w, w->scratch.data, w->scratch.len);

    /* The background thread takes no signals: a sampling signal must land on
     * a VM thread. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&w->thread, NULL, background, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0)
        goto fail;
    w->thread_started = 1;
    *out = w;
    return VMP_OK;
fail:
    free_writer(w);
    return st;
}

vmp_status vmp_writer_open_fd(vmp_writer **out,
                              int fd,
                              const vmp_writer_meta *meta,
                              const vmp_writer_options *opts)
{
    if (!out || fd < 0)
        return VMP_ERR_INVALID_ARG;
    return open_impl(out, fd, 0, meta, opts);
}

vmp_status vmp_writer_open(vmp_writer **out,
                           const char *path,
                           const vmp_writer_meta *meta,
                           const vmp_writer_options *opts)
{
    if (!out || !path)
        return VMP_ERR_INVALID_ARG;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return VMP_ERR_IO;
    vmp_status st = open_impl(out, fd, 1, meta, opts);
    if (st < 0)
        close(fd);
    return st;
}

/* ---- flush and close ------------------------------------------------------ */

static vmp_status output_status(vmp_writer *w, vmp_status st)
{
    if (atomic_load(&w->stopped)) {
        if (!w->io_reported) {
            w->io_reported = 1;
            return VMP_ERR_IO;
        }
        return VMP_ERR_CLOSED;
    }
    return st < 0 ? st : VMP_OK;
}

vmp_status vmp_writer_flush(vmp_writer *w)
{
    if (!w)
        return VMP_ERR_INVALID_ARG;
    pthread_mutex_lock(&w->out_mu);
    drain(w, 1);
    vmp_status st = output_status(w, vmp_chunk__close(w));
    pthread_mutex_unlock(&w->out_mu);
    return st;
}

static void write_end(vmp_writer *w)
{
    vmp_chunk__flush_block(w);
    if (w->chunk.len > 0 && w->chunk.len + END_MAX_BYTES > w->chunk_bytes)
        vmp_chunk__close(w);
    if (atomic_load(&w->stopped))
        return;
    /* spec R-END-1: counts of the file, including the END's own chunk */
    vmp_record rec = {.type = VMP_REC_END};
    rec.u.end = (vmp_rec_end){
        .time_ns = vmp_writer__now(w),
        .samples = atomic_load(&w->samples_written) + w->chunk_samples,
        .dropped_full = atomic_load(&w->dropped_full),
        .dropped_write = atomic_load(&w->dropped_write) + atomic_load(&w->dropped_stopped),
        .failed = atomic_load(&w->failed_written) + w->chunk_failed,
        .chunks = atomic_load(&w->chunks),
        .truncated_stacks = atomic_load(&w->truncated_stacks) + w->chunk_truncated,
        .generation = atomic_load(&w->generation),
        .kind_samples = atomic_load(&w->kind_written) + w->chunk_kind_samples};
    w->scratch.len = 0;
    vmp_record_encode(&w->scratch, &rec, 0);
    if (!w->scratch.failed)
        vmp_chunk__add(w, w->scratch.data, w->scratch.len);
    vmp_chunk__close(w);
}

vmp_status vmp_writer_close(vmp_writer *w, vmp_writer_totals *totals_out)
{
    if (!w) {
        if (totals_out)
            memset(totals_out, 0, sizeof *totals_out);
        return VMP_OK;
    }
    if (w->thread_started) {
        pthread_mutex_lock(&w->wake_mu);
        w->stop = 1;
        pthread_cond_signal(&w->wake_cv);
        pthread_mutex_unlock(&w->wake_mu);
        pthread_join(w->thread, NULL);
    }
    pthread_mutex_lock(&w->out_mu);
    drain(w, 1);
    vmp_status st = VMP_OK;
    if (!atomic_load(&w->stopped)) {
        write_end(w);
        if (!w->no_seek_table && !atomic_load(&w->stopped))
            vmp_chunk__seek_table(w);
    }
    /* Samples claimed but never published (a producer still inside the
     * sample path at close) cannot be written. */
    uint64_t head = atomic_load(&w->ring.head);
    if (head > w->ring.tail)
        atomic_fetch_add(&w->dropped_write, head - w->ring.tail);
    if (atomic_load(&w->write_errno) != 0)
        st = VMP_ERR_IO;
    pthread_mutex_unlock(&w->out_mu);
    vmp_writer_stats(w, totals_out);
    if (w->own_fd && close(w->fd) != 0 && st == VMP_OK)
        st = VMP_ERR_IO;
    free_writer(w);
    return st;
}

/* ---- code and metadata ------------------------------------------------------ */

vmp_status vmp_writer_code_zone(
    vmp_writer *w, uint64_t *id_out, const char *name, uint64_t start, uint64_t end)
{
    if (!w || end < start)
        return VMP_ERR_INVALID_ARG;
    uint64_t stamp;
    size_t mark;
    vmp_status st = vmp_writer__meta_lock(w, &stamp, &mark);
    if (st < 0)
        return st;
    uint64_t id = w->next_zone_id;
    vmp_record rec = {.type = VMP_REC_CODE_ZONE};
    rec.u.code_zone = (vmp_rec_code_zone){id, start, end, vmp_writer__str(name)};
    vmp_writer__queue_record(w, stamp, &rec);
    if (!w->queue.failed) {
        w->next_zone_id++;
        if (id_out)
            *id_out = id;
    }
    return vmp_writer__meta_unlock(w, mark, VMP_OK);
}

static int valid_code(const vmp_code_object *c)
{
    if (!c || c->id == 0 || (c->pc_map_len && !c->pc_map) || (c->n_inlines && !c->inlines))
        return 0;
    uint64_t prev = 0;
    for (size_t i = 0; i < c->pc_map_len; i++) {
        /* spec R-CODE-1; offsets non-decreasing for the delta encoding */
        if (c->pc_map[i].mcpc_offset < prev || c->pc_map[i].mcpc_offset >= c->size)
            return 0;
        prev = c->pc_map[i].mcpc_offset;
    }
    for (size_t i = 0; i < c->n_inlines; i++)
        if (c->inlines[i].depth && !c->inlines[i].frames)
            return 0;
    return 1;
}

/* lazy_functions, under meta_mu: queue the FUNCTION record of `fn` at
 * `stamp` unless the file holds it before that position already. */
static void queue_kept_function(vmp_writer *w, uint64_t fn, uint64_t stamp)
{
    vmp_fnstore_slot *slot = vmp_fnstore__due(&w->fns, fn, stamp);
    if (!slot)
        return;
    size_t at = vmp_writer__entry_begin(w, stamp);
    vmp_buf__append(&w->queue, w->fns.blob.data + slot->off, slot->len);
    vmp_writer__entry_end(w, at);
    if (!w->queue.failed)
        slot->written = stamp;
}

/* The pc_map (key `k_map`) and inline records (key `k_inline`) of `c` into
 * record `r` (spec §5.7: pc_map offsets delta-encoded). */
static void enc_code_maps(vmp_rec *r, const vmp_code_object *c, unsigned k_map, unsigned k_inline)
{
    if (c->pc_map_len) {
        vmp_rec__key(r, k_map);
        vmp_enc__array(r->b, 2 * c->pc_map_len);
        uint64_t prev = 0;
        for (size_t i = 0; i < c->pc_map_len; i++) {
            vmp_enc__uint(r->b, c->pc_map[i].mcpc_offset - prev);
            vmp_enc__uint(r->b, c->pc_map[i].bcpc);
            prev = c->pc_map[i].mcpc_offset;
        }
    }
    if (c->n_inlines) {
        vmp_rec__key(r, k_inline);
        vmp_enc__array(r->b, c->n_inlines);
        for (size_t i = 0; i < c->n_inlines; i++) {
            const vmp_inline_record *in = &c->inlines[i];
            vmp_enc__array(r->b, 1 + 2 * (size_t)in->depth);
            vmp_enc__uint(r->b, in->mcpc_offset);
            for (uint32_t k = 0; k < in->depth; k++) {
                vmp_enc__uint(r->b, in->frames[k].value);
                vmp_enc__uint(r->b, in->frames[k].bcpc);
            }
        }
    }
}

/* lazy_code_maps, under meta_mu: keep the CODE_MAP of `c` and the functions
 * it names (its own too when lazy_functions keeps them) for the samples
 * from `stamp` on.  @return 1 when kept, 0 when `c` has nothing to keep or
 * memory ran out (the caller then writes it all at once). */
static int keep_code_map(vmp_writer *w, const vmp_code_object *c, uint64_t stamp)
{
    w->map_rec.len = w->map_fns.len = 0;
    if (w->lazy_functions && c->function)
        vmp_buf__append(&w->map_fns, &c->function, sizeof c->function);
    for (size_t i = 0; w->lazy_functions && i < c->n_inlines; i++)
        for (uint32_t k = 0; k < c->inlines[i].depth; k++)
            vmp_buf__append(&w->map_fns, &c->inlines[i].frames[k].value, sizeof(uint64_t));
    if (c->pc_map_len || c->n_inlines) {
        vmp_rec r;
        vmp_rec__begin(&r, &w->map_rec, VMP_REC_CODE_MAP);
        vmp_rec__uint(&r, VMP_CMAP_ID, c->id);
        enc_code_maps(&r, c, VMP_CMAP_PC_MAP, VMP_CMAP_INLINE);
        vmp_rec__end(&r);
    }
    int kept = (w->map_rec.len > 0 || w->map_fns.len > 0) && !w->map_rec.failed &&
               !w->map_fns.failed &&
               vmp_mapstore__put(&w->maps, c->id, c->start, c->size, atomic_load(&w->generation),
                                 stamp, w->map_rec.data, w->map_rec.len,
                                 (const uint64_t *)(void *)w->map_fns.data,
                                 w->map_fns.len / sizeof(uint64_t)) == 0;
    w->map_rec.failed = w->map_fns.failed = 0;
    return kept;
}

/* lazy_code_maps, under meta_mu: queue the kept map of `e` (and the
 * functions it names) at `stamp` unless the file holds it before that. */
static void queue_kept_map(vmp_writer *w, vmp_mapstore_entry *e, uint64_t stamp)
{
    if (e->written <= stamp)
        return;
    for (size_t i = 0; w->lazy_functions && i < e->n_fns; i++)
        queue_kept_function(w, e->fns[i], stamp);
    if (e->len) {
        size_t at = vmp_writer__entry_begin(w, stamp);
        vmp_buf__append(&w->queue, e->rec, e->len);
        vmp_writer__entry_end(w, at);
    }
    if (!w->queue.failed)
        vmp_mapstore__mark(&w->maps, e, stamp);
}

/* lazy_code_maps, under meta_mu: before code `id` moves to `new_start`, its
 * kept map (lookups know its first placement only). */
static void queue_map_of_moved(vmp_writer *w, uint64_t id, uint64_t new_start, uint64_t stamp)
{
    vmp_mapstore_entry *e = w->lazy_code_maps ? vmp_mapstore__get(&w->maps, id) : NULL;
    if (e && e->start != new_start)
        queue_kept_map(w, e, stamp);
}

/* lazy_code_maps, under meta_mu: code `id` is freed from generation `gen`
 * on; its kept map serves the samples of older generations only. */
static void note_map_freed(vmp_writer *w, uint64_t id, uint64_t gen)
{
    vmp_mapstore_entry *e = w->lazy_code_maps ? vmp_mapstore__get(&w->maps, id) : NULL;
    if (e && gen < e->free_gen)
        e->free_gen = gen;
}

vmp_status vmp_writer_code_add(vmp_writer *w, const vmp_code_object *c)
{
    if (!w || !valid_code(c))
        return VMP_ERR_INVALID_ARG;
    uint64_t now = vmp_writer__now(w);
    uint64_t stamp;
    size_t mark;
    vmp_status st = vmp_writer__meta_lock(w, &stamp, &mark);
    if (st < 0)
        return st;
    int kept = w->lazy_code_maps && keep_code_map(w, c, stamp);
    if (w->lazy_functions && !kept) { /* the functions it names first (R-ID-2) */
        queue_kept_function(w, c->function, stamp);
        for (size_t i = 0; i < c->n_inlines; i++)
            for (uint32_t k = 0; k < c->inlines[i].depth; k++)
                queue_kept_function(w, c->inlines[i].frames[k].value, stamp);
    }
    size_t at = vmp_writer__entry_begin(w, stamp);
    vmp_rec r;
    vmp_rec__begin(&r, &w->queue, VMP_REC_CODE_OBJECT);
    vmp_rec__uint(&r, VMP_CODE_ID, c->id);
    vmp_rec__uint_nz(&r, VMP_CODE_ZONE, c->zone);
    vmp_rec__uint_nz(&r, VMP_CODE_KIND, c->kind);
    vmp_rec__tstr_ne(&r, VMP_CODE_NAME, c->name);
    vmp_rec__uint_nz(&r, VMP_CODE_FUNCTION, c->function);
    vmp_rec__uint(&r, VMP_CODE_START, c->start);
    vmp_rec__uint(&r, VMP_CODE_SIZE, c->size);
    /* spec R-GEN-2: the generation current when the code was installed */
    vmp_rec__uint(&r, VMP_CODE_GENERATION, atomic_load(&w->generation));
    vmp_rec__uint_nz(&r, VMP_CODE_TIER, c->tier);
    if (!kept)
        enc_code_maps(&r, c, VMP_CODE_PC_MAP, VMP_CODE_INLINE);
    vmp_rec__uint(&r, VMP_CODE_TIME, now);
    vmp_rec__end(&r);
    vmp_writer__entry_end(w, at);
    if (kept && w->maps.bytes > MAP_BYTES_MAX) /* every kept map, after this code's record */
        for (size_t i = 0; i < w->maps.n; i++)
            queue_kept_map(w, &w->maps.v[i], stamp);
    return vmp_writer__meta_unlock(w, mark, VMP_OK);
}

/* Queue one generation change: the caller has called meta_lock(), which read
 * the stamp before this increments the generation (see "Ordering"). */
static vmp_status change_done(vmp_writer *w, size_t mark, uint64_t gen, uint64_t *gen_out)
{
    if (!w->queue.failed) {
        atomic_store(&w->generation, gen); /* spec R-GEN-1 */
        if (gen_out)
            *gen_out = gen;
    }
    return vmp_writer__meta_unlock(w, mark, VMP_OK);
}

vmp_status vmp_writer_code_free(vmp_writer *w, uint64_t id, uint64_t *gen_out)
{
    if (!w || id == 0)
        return VMP_ERR_INVALID_ARG;
    uint64_t now = vmp_writer__now(w);
    uint64_t stamp;
    size_t mark;
    vmp_status st = vmp_writer__meta_lock(w, &stamp, &mark);
    if (st < 0)
        return st;
    uint64_t gen = atomic_load(&w->generation) + 1;
    note_map_freed(w, id, gen);
    vmp_record rec = {.type = VMP_REC_CODE_FREE};
    rec.u.code_free = (vmp_rec_code_free){gen, id, now};
    vmp_writer__queue_record(w, stamp, &rec);
    return change_done(w, mark, gen, gen_out);
}

vmp_status vmp_writer_code_move(vmp_writer *w, uint64_t id, uint64_t new_start, uint64_t *gen_out)
{
    if (!w || id == 0)
        return VMP_ERR_INVALID_ARG;
    uint64_t now = vmp_writer__now(w);
    uint64_t stamp;
    size_t mark;
    vmp_status st = vmp_writer__meta_lock(w, &stamp, &mark);
    if (st < 0)
        return st;
    uint64_t gen = atomic_load(&w->generation) + 1;
    queue_map_of_moved(w, id, new_start, stamp);
    vmp_record rec = {.type = VMP_REC_CODE_MOVE};
    rec.u.code_move = (vmp_rec_code_move){gen, id, new_start, now};
    vmp_writer__queue_record(w, stamp, &rec);
    return change_done(w, mark, gen, gen_out);
}

vmp_status vmp_writer_code_compaction(vmp_writer *w,
                                      uint64_t zone,
                                      const uint64_t *moves,
                                      size_t n_moves,
                                      const uint64_t *frees,
                                      size_t n_frees,
                                      uint64_t start_ns,
                                      uint64_t duration_ns,
                                      uint64_t *gen_out)
{
    if (!w || (n_moves && !moves) || (n_frees && !frees) || n_moves > SIZE_MAX / 2)
        return VMP_ERR_INVALID_ARG;
    uint64_t time = start_ns ? from_clock(w, start_ns) : vmp_writer__now(w);
    uint64_t stamp;
    size_t mark;
    vmp_status st = vmp_writer__meta_lock(w, &stamp, &mark);
    if (st < 0)
        return st;
    uint64_t gen = atomic_load(&w->generation) + 1;
    for (size_t i = 0; i < n_moves; i++)
        queue_map_of_moved(w, moves[2 * i], moves[2 * i + 1], stamp);
    for (size_t i = 0; i < n_frees; i++)
        note_map_freed(w, frees[i], gen);
    vmp_record rec = {.type = VMP_REC_CODE_COMPACTION};
    rec.u.code_compaction =
        (vmp_rec_code_compaction){zone, gen, time, duration_ns, moves, n_moves, frees, n_frees};
    vmp_writer__queue_record(w, stamp, &rec);
    return change_done(w, mark, gen, gen_out);
}

vmp_status vmp_writer_code_snapshot(
    vmp_writer *w, uint64_t zone, const uint64_t *entries, size_t n, uint64_t *gen_out)
{
    if (!w || (n && !entries) || n > SIZE_MAX / 2)
        return VMP_ERR_INVALID_ARG;
    uint64_t now = vmp_writer__now(w);
    uint64_t stamp;
    size_t mark;
    vmp_status st = vmp_writer__meta_lock(w, &stamp, &mark);
    if (st < 0)
        return st;
    uint64_t gen = atomic_load(&w->generation) + 1;
    for (size_t i = 0; i < n; i++)
        queue_map_of_moved(w, entries[2 * i], entries[2 * i + 1], stamp);
    vmp_record rec = {.type = VMP_REC_CODE_SNAPSHOT};
    rec.u.code_snapshot = (vmp_rec_code_snapshot){zone, gen, now, entries, n};
    vmp_writer__queue_record(w, stamp, &rec);
    return change_done(w, mark, gen, gen_out);
}

/* A FUNCTION record; `is_class` for a class (spec R-KND-4). */
static vmp_status write_function(vmp_writer *w, const vmp_function *fn, int is_class)
{
    if (!w || !fn || fn->id == 0 || (fn->n_lines && !fn->lines) || fn->n_lines > SIZE_MAX / 4)
        return VMP_ERR_INVALID_ARG;
    uint64_t stamp;
    size_t mark;
    vmp_status st = vmp_writer__meta_lock(w, &stamp, &mark);
    if (st < 0)
        return st;
    size_t at = vmp_writer__entry_begin(w, stamp);
    vmp_rec r;
    vmp_rec__begin(&r, &w->queue, VMP_REC_FUNCTION);
    vmp_rec__uint(&r, VMP_FN_ID, fn->id);
    vmp_rec__tstr_ne(&r, VMP_FN_NAME, fn->name);
    vmp_rec__tstr_ne(&r, VMP_FN_SCOPE, fn->scope);
    vmp_rec__tstr_ne(&r, VMP_FN_SIGNATURE, fn->signature);
    vmp_rec__tstr_ne(&r, VMP_FN_FILE, fn->file);
    vmp_rec__uint_nz(&r, VMP_FN_LINE, fn->first_line);
    if (fn->n_lines) {
        vmp_rec__key(&r, VMP_FN_LINES);
        vmp_enc__array(&w->queue, 2 * fn->n_lines);
        for (size_t i = 0; i < 2 * fn->n_lines; i++)
            vmp_enc__uint(&w->queue, fn->lines[i]);
    }
    vmp_rec__uint_nz(&r, VMP_FN_BC_SIZE, fn->bytecode_size);
    if (is_class)
        vmp_rec__uint(&r, VMP_FN_IS_CLASS, 1);
    vmp_rec__end(&r);
    if (w->lazy_functions && !w->queue.failed) {
        /* kept back, out of the queue, until a record names it; written now
         * when one did already (its stack nodes are not written again) */
        size_t rec_at = at + sizeof(uint64_t) + sizeof(uint32_t);
        int kept = vmp_fnstore__put(&w->fns, fn->id, w->queue.data + rec_at, w->queue.len - rec_at);
        if (kept == 1) {
            vmp_writer__entry_end(w, at);
            if (!w->queue.failed)
                vmp_fnstore__get(&w->fns, fn->id)->written = stamp;
            return vmp_writer__meta_unlock(w, mark, VMP_OK);
        }
        w->queue.len = at;
        return vmp_writer__meta_unlock(w, mark, kept < 0 ? VMP_ERR_NOMEM : VMP_OK);
    }
    vmp_writer__entry_end(w, at);
    return vmp_writer__meta_unlock(w, mark, VMP_OK);
}

vmp_status vmp_writer_function(vmp_writer *w, const vmp_function *fn)
{
    return write_function(w, fn, 0);
}

vmp_status vmp_writer_class(vmp_writer *w, uint64_t id, const char *name)
{
    return write_function(w, &(vmp_function){.id = id, .name = name}, 1);
}

vmp_status vmp_writer_thread(vmp_writer *w, uint64_t id, const char *name, int ended)
{
    if (!w || id == 0)
        return VMP_ERR_INVALID_ARG;
    uint64_t now = vmp_writer__now(w);
    uint64_t stamp;
    size_t mark;
    vmp_status st = vmp_writer__meta_lock(w, &stamp, &mark);
    if (st < 0)
        return st;
    size_t at = vmp_writer__entry_begin(w, stamp);
    vmp_rec r;
    vmp_rec__begin(&r, &w->queue, VMP_REC_THREAD);
    vmp_rec__uint(&r, VMP_THR_ID, id);
    vmp_rec__tstr_ne(&r, VMP_THR_NAME, name);
    if (ended)
        vmp_rec__uint(&r, VMP_THR_END_TIME, now);
    else
        vmp_rec__uint(&r, VMP_THR_TIME, now);
    vmp_rec__end(&r);
    vmp_writer__entry_end(w, at);
    return vmp_writer__meta_unlock(w, mark, VMP_OK);
}

vmp_status vmp_writer_event(vmp_writer *w,
                            uint32_t kind,
                            uint64_t time_ns,
                            uint64_t duration_ns,
                            uint64_t thread,
                            int64_t value,
                            const char *text)
{
    if (!w)
        return VMP_ERR_INVALID_ARG;
    uint64_t time = time_ns ? from_clock(w, time_ns) : vmp_writer__now(w);
    uint64_t stamp;
    size_t mark;
    vmp_status st = vmp_writer__meta_lock(w, &stamp, &mark);
    if (st < 0)
        return st;
    vmp_record rec = {.type = VMP_REC_EVENT};
    rec.u.event =
        (vmp_rec_event){time, kind, duration_ns, thread, value, value != 0, vmp_writer__str(text)};
    vmp_writer__queue_record(w, stamp, &rec);
    return vmp_writer__meta_unlock(w, mark, VMP_OK);
}

vmp_status vmp_writer_counter(vmp_writer *w, uint32_t kind, int64_t value)
{
    if (!w)
        return VMP_ERR_INVALID_ARG;
    uint64_t now = vmp_writer__now(w);
    uint64_t stamp;
    size_t mark;
    vmp_status st = vmp_writer__meta_lock(w, &stamp, &mark);
    if (st < 0)
        return st;
    vmp_record rec = {.type = VMP_REC_COUNTER};
    rec.u.counter = (vmp_rec_counter){now, kind, value};
    vmp_writer__queue_record(w, stamp, &rec);
    return vmp_writer__meta_unlock(w, mark, VMP_OK);
}
