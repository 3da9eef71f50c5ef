/* SPDX-License-Identifier: MIT
 *
 * vmp_writer_code.c - the code and metadata records of the writer's API:
 * code zones, code objects and their changes with generations, functions,
 * classes, threads, events and counters (spec.md §5.2 to §5.10, §5.13).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_format.h"
#include "vmp_writer_int.h"

/* lazy_code_maps: kept maps past this many bytes are all written */
#define MAP_BYTES_MAX (16u << 20)

/* ---- code and metadata ------------------------------------------------------ */

vmp_status vmp_writer_code_zone(vmp_writer *w, uint64_t *id_out, const char *name, uint64_t start,
                                uint64_t end)
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

vmp_status vmp_writer_code_compaction(vmp_writer *w, uint64_t zone, const uint64_t *moves,
                                      size_t n_moves, const uint64_t *frees, size_t n_frees,
                                      uint64_t start_ns, uint64_t duration_ns, uint64_t *gen_out)
{
    if (!w || (n_moves && !moves) || (n_frees && !frees) || n_moves > SIZE_MAX / 2)
        return VMP_ERR_INVALID_ARG;
    uint64_t time = start_ns ? vmp_writer__from_clock(w, start_ns) : vmp_writer__now(w);
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

vmp_status vmp_writer_code_snapshot(vmp_writer *w, uint64_t zone, const uint64_t *entries, size_t n,
                                    uint64_t *gen_out)
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

vmp_status vmp_writer_event(vmp_writer *w, uint32_t kind, uint64_t time_ns, uint64_t duration_ns,
                            uint64_t thread, int64_t value, const char *text)
{
    if (!w)
        return VMP_ERR_INVALID_ARG;
    uint64_t time = time_ns ? vmp_writer__from_clock(w, time_ns) : vmp_writer__now(w);
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
