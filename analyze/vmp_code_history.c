/* SPDX-License-Identifier: MIT
 *
 * vmp_code_history.c - code objects and where they stood at each generation
 * (spec.md §5 "Generations" R-GEN-3, §5.7-§5.10).
 *
 * Outline.  Every code object has a history of *placements*: (start, end,
 * gen_from, gen_to) with gen_to = UINT64_MAX while it lasts; a move closes one
 * placement and opens another, a free closes it.  The history is kept as a
 * byte log of events in record order (see "code history" below), a few bytes
 * per move; a code object holds only its current start.  The placements alive
 * at the latest generation form `live`, an array sorted by start that is
 * updated in place (binary insertion and removal; a compaction or snapshot
 * rebuilds it).  Lookups at an older generation replay the log into a sorted
 * array of the placements alive then, cached for a few generations.  The
 * replay goes forward from where the last one stopped (hist_cursor) while
 * the generations asked for grow, as the samples of a SAMPLE_BLOCK that
 * spans changes do (spec.md §5.14): a sample costs the events since the
 * previous one's generation and a sort of the live set, not the whole log.
 * When they go back, it starts from a checkpoint (hist_checkpoint), taken
 * every CHECKPOINT_BYTES of log or more as the cursor passes: samples that
 * alternate across old generations cost a bounded replay each, not the log.
 */
#include <stdlib.h>
#include <string.h>

#include "vmp_analysis_int.h"
#include "vmp_search.h"

#define GEN_OPEN UINT64_MAX

/* The code history: events appended in record order, each a varint
 * (zigzag(object index - previous event's object index) << 2 | kind):
 *   HIST_PLACE  then the varint zigzag(start - previous placement's start):
 *               the object is placed there (created, or moved: its previous
 *               placement ends) at the current generation;
 *   HIST_FREE   the object's placement ends at the current generation;
 *   HIST_GEN    (object delta 0) then the varint zigzag(generation - the
 *               current generation): the generation of the events after it.
 * Differences are taken modulo 2^64.  A compaction that slides objects in
 * order costs 3 or 4 bytes per move. */
enum {
    HIST_PLACE = 0,
    HIST_FREE = 1,
    HIST_GEN = 2
};

/* ---- live placements --------------------------------------------------------- */

static size_t span_lower(const span *s, size_t n, uint64_t addr)
{
    /* first index with start > addr */
    return vmp_upper_bound(s, n, sizeof *s, offsetof(span, start), addr);
}

/* The end of code object `obj` placed at `start` (saturating). */
static uint64_t end_at(const vmp_analysis *a, uint32_t obj, uint64_t start)
{
    uint64_t end = start + a->codes[obj].size;
    return end < start ? UINT64_MAX : end;
}

static void set_span(const vmp_analysis *a, span *s, uint32_t obj, uint64_t start, uint32_t place)
{
    s->start = start;
    s->end = end_at(a, obj, start);
    s->obj = obj;
    s->place = place;
}

/* Insert live code object `obj` (at its current placement) into `live`.  A
 * code object of size 0 covers nothing and hides nothing (spec R-GEN-5): it
 * has no span. */
static int live_insert(vmp_analysis *a, uint32_t obj)
{
    const code_obj *o = &a->codes[obj];
    size_t at;
    if (o->size == 0)
        return 0;
    if (vmp_grow__((void **)&a->live, &a->cap_live, a->n_live + 1, sizeof *a->live))
        return -1;
    at = span_lower(a->live, a->n_live, o->start);
    memmove(&a->live[at + 1], &a->live[at], (a->n_live - at) * sizeof *a->live);
    set_span(a, &a->live[at], obj, o->start, o->place);
    a->n_live++;
    return 0;
}

static void live_remove(vmp_analysis *a, uint32_t obj)
{
    const code_obj *o = &a->codes[obj];
    size_t at = span_lower(a->live, a->n_live, o->start);
    while (at > 0) {
        at--;
        if (a->live[at].obj == obj) {
            memmove(&a->live[at], &a->live[at + 1], (a->n_live - at - 1) * sizeof *a->live);
            a->n_live--;
            return;
        }
        if (a->live[at].start != o->start)
            return;
    }
}

static int cmp_span(const void *x, const void *y)
{
    const span *a = x, *b = y;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->place < b->place ? -1 : a->place > b->place;
}

static void invalidate_old(vmp_analysis *a, uint64_t gen)
{
    size_t i;
    for (i = 0; i < N_OLD_CACHES; i++)
        if (a->old[i].valid && a->old[i].gen >= gen)
            a->old[i].valid = 0;
    if (gen <= a->cursor.gen)
        a->cursor.valid = 0;
}

/* A change (free, move, compaction, snapshot) at generation `gen`. */
static void note_change(vmp_analysis *a, uint64_t gen)
{
    invalidate_old(a, gen);
    /* Samples at >= gen already resolved saw the code without this change;
     * by R-GEN-3 the change applies to them, so forget them. */
    if (gen <= a->max_sample_gen)
        vmp_forget__all(a);
    if (gen > a->cur_gen)
        a->cur_gen = gen;
    a->stats.generation = a->cur_gen;
}

/* ---- code history ---- */

static uint64_t zigzag(uint64_t d) /* d: a difference modulo 2^64 */
{
    return (d << 1) ^ (0 - (d >> 63));
}

static uint64_t unzigzag(uint64_t z)
{
    return (z >> 1) ^ (0 - (z & 1));
}

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* Varints written by put_varint() into a log this file owns: no bounds or
 * overlong checks needed. */
static const uint8_t *get_varint(const uint8_t *p, uint64_t *v)
{
    uint64_t r = 0;
    unsigned shift = 0;
    while (*p & 0x80) {
        r |= (uint64_t)(*p++ & 0x7f) << shift;
        shift += 7;
    }
    *v = r | (uint64_t)*p++ << shift;
    return p;
}

/* Append an event of `kind` for object `obj` at generation `gen`
 * (HIST_PLACE: at `start`).  Returns 0, or -1 when out of memory. */
static int hist_append(vmp_analysis *a, int kind, uint32_t obj, uint64_t start, uint64_t gen)
{
    hist_log *h = &a->hist;
    uint8_t *p;
    size_t before = h->n;
    /* two events of at most 11 bytes each (a 66-bit first varint is impossible:
     * an object delta is below 2^33) */
    if (vmp_grow__((void **)&h->b, &h->cap, h->n + 32, 1))
        return -1;
    p = h->b + h->n;
    if (gen != h->gen) {
        h->unordered |= gen < h->gen;
        p = put_varint(p, HIST_GEN);
        p = put_varint(p, zigzag(gen - h->gen));
        h->gen = gen;
    }
    p = put_varint(p, zigzag((uint64_t)obj - (uint64_t)h->obj) << 2 | (uint64_t)kind);
    h->obj = obj;
    if (kind == HIST_PLACE) {
        p = put_varint(p, zigzag(start - h->start));
        h->start = start;
    }
    h->n = (size_t)(p - h->b);
    a->stats.memory_bytes += h->n - before;
    return 0;
}

/* Code at [lo, hi) changes at generation `gen` (placed, moved or freed). */
static void mark_changed(vmp_analysis *a, uint64_t lo, uint64_t hi, uint64_t gen)
{
    uint64_t b, first = lo >> TOUCH_SHIFT, last;
    if (hi <= lo)
        return;
    last = (hi - 1) >> TOUCH_SHIFT;
    if (last - first >= TOUCH_BITS) {
        if (gen > a->changed_all)
            a->changed_all = gen;
        return;
    }
    for (b = first;; b++) {
        uint64_t *g = &a->changed_gen[vmp_forget__touch_bit(b)];
        if (gen > *g)
            *g = gen;
        if (b == last)
            break;
    }
}

static int add_place(vmp_analysis *a, uint32_t obj, uint64_t start, uint64_t gen)
{
    if (a->n_pl >= a->max_history) {
        vmp_analysis__hit_limit(a, "history", a->max_history,
                                "code placements (code objects and moves)");
        return -1;
    }
    if (a->n_pl >= UINT32_MAX - 1 || hist_append(a, HIST_PLACE, obj, start, gen))
        return -1;
    if (a->codes[obj].alive) /* a move: the code leaves its place */
        mark_changed(a, a->codes[obj].start, end_at(a, obj, a->codes[obj].start), gen);
    mark_changed(a, start, end_at(a, obj, start), gen);
    a->codes[obj].start = start;
    a->codes[obj].place = (uint32_t)a->n_pl;
    a->n_pl++;
    a->stats.placements = a->n_pl;
    return 0;
}

/* Copy a pc_map and inline records (CODE_OBJECT's or CODE_MAP's) into `o`,
 * which has none. */
static vmp_status take_maps(vmp_analysis *a, code_obj *o, const uint64_t *pc_map, size_t pc_map_len,
                            const vmp_rec_inline *inlines, size_t n_inlines)
{
    size_t i;
    if (pc_map_len) {
        o->pc_map = malloc(pc_map_len * 2 * sizeof *o->pc_map);
        if (!o->pc_map)
            return VMP_ERR_NOMEM;
        memcpy(o->pc_map, pc_map, pc_map_len * 2 * sizeof *o->pc_map);
        o->n_map = pc_map_len;
        /* Offsets are non-decreasing by construction (§5.7); keep it true
         * on hostile input so the binary search stays meaningful. */
        for (i = 1; i < o->n_map; i++)
            if (o->pc_map[2 * i] < o->pc_map[2 * i - 2])
                o->pc_map[2 * i] = o->pc_map[2 * i - 2];
        a->stats.memory_bytes += pc_map_len * 16;
    }
    if (n_inlines) {
        size_t words = 0, at = 0;
        for (i = 0; i < n_inlines; i++)
            words += 2 + 2 * inlines[i].depth;
        o->inl = malloc(words * sizeof *o->inl);
        o->inl_at = malloc(n_inlines * sizeof *o->inl_at);
        if (!o->inl || !o->inl_at) {
            free(o->pc_map);
            free(o->inl);
            free(o->inl_at);
            o->pc_map = NULL;
            o->inl = NULL;
            o->inl_at = NULL;
            o->n_map = 0;
            return VMP_ERR_NOMEM;
        }
        for (i = 0; i < n_inlines; i++) {
            const vmp_rec_inline *in = &inlines[i];
            uint64_t off = in->mcpc_offset;
            /* sorted by offset (§5.7); keep it true on hostile input */
            if (i > 0 && off < o->inl[o->inl_at[i - 1]])
                off = o->inl[o->inl_at[i - 1]];
            o->inl_at[i] = at;
            o->inl[at++] = off;
            o->inl[at++] = in->depth;
            memcpy(o->inl + at, in->frames, 2 * in->depth * sizeof *o->inl);
            at += 2 * in->depth;
        }
        o->n_inl = n_inlines;
        a->stats.memory_bytes += words * 8 + n_inlines * sizeof(size_t);
    }
    return VMP_OK;
}

vmp_status vmp_code_history__take_code(vmp_analysis *a, const vmp_rec_code_object *c)
{
    code_obj *o;
    uint32_t idx;
    if (vmp_hmap__get(&a->code_by_id, c->id, 0))
        return VMP_ERR_CORRUPT; /* spec R-ID-1: defined twice */
    if (a->n_codes >= UINT32_MAX - 1 ||
        vmp_grow__((void **)&a->codes, &a->cap_codes, a->n_codes + 1, sizeof *a->codes))
        return VMP_ERR_NOMEM;
    o = &a->codes[a->n_codes];
    memset(o, 0, sizeof *o);
    o->hit_epoch = a->epoch - 1; /* not found by a lookup yet */
    o->id = c->id;
    o->zone = c->zone;
    o->function = c->function;
    o->size = c->size;
    o->generation = c->generation;
    o->kind = c->kind > UINT32_MAX ? UINT32_MAX : (uint32_t)c->kind;
    if (c->name.len) {
        o->name_sid = vmp_analysis__intern_n(a, c->name.s, c->name.len);
        if (!o->name_sid)
            return VMP_ERR_NOMEM;
    }
    if (take_maps(a, o, c->pc_map, c->pc_map_len, c->inlines, c->n_inlines) != VMP_OK)
        return VMP_ERR_NOMEM;
    idx = (uint32_t)a->n_codes;
    if (vmp_hmap__put(&a->code_by_id, c->id, 0, idx + 1)) {
        /* not counted in n_codes: vmp_analysis_free() would not see them */
        free(o->pc_map);
        free(o->inl);
        free(o->inl_at);
        return VMP_ERR_NOMEM;
    }
    a->n_codes++;
    a->stats.code_objects++;
    a->stats.memory_bytes += sizeof *o + 24;
    if (add_place(a, idx, c->start, c->generation))
        return VMP_ERR_NOMEM;
    o->alive = 1;
    if (live_insert(a, idx))
        return VMP_ERR_NOMEM;
    if (c->generation < a->cur_gen)
        invalidate_old(a, c->generation);
    /* a stack resolved at a generation the code exists in may have a pc in
     * it (HotSpot runs an nmethod before its load event is posted) */
    if (c->generation <= a->max_sample_gen)
        vmp_forget__range(a, c->start, end_at(a, idx, c->start));
    return VMP_OK;
}

code_obj *vmp_code_history__find(vmp_analysis *a, uint64_t id)
{
    uint32_t idx = vmp_hmap__get(&a->code_by_id, id, 0);
    return idx ? &a->codes[idx - 1] : NULL;
}

vmp_status vmp_code_history__take_code_map(vmp_analysis *a, const vmp_rec_code_map *m)
{
    code_obj *o = vmp_code_history__find(a, m->id);
    if (!o || o->mapped || o->n_map || o->n_inl)
        return VMP_OK; /* unknown code, or a map already: the first holds */
    o->mapped = 1;
    if (!m->pc_map_len && !m->n_inlines)
        return VMP_OK; /* an empty map changes no resolution */
    if (take_maps(a, o, m->pc_map, m->pc_map_len, m->inlines, m->n_inlines) != VMP_OK)
        return VMP_ERR_NOMEM;
    if (o->hit_epoch == a->epoch) /* a resolved stack may hold it */
        vmp_forget__all(a);
    return VMP_OK;
}

static int do_free(vmp_analysis *a, code_obj *o, uint64_t gen)
{
    if (!o || !o->alive)
        return 0;
    if (hist_append(a, HIST_FREE, (uint32_t)(o - a->codes), 0, gen))
        return -1;
    mark_changed(a, o->start, end_at(a, (uint32_t)(o - a->codes), o->start), gen);
    o->alive = 0;
    return 0;
}

static int do_move(vmp_analysis *a, code_obj *o, uint64_t new_start, uint64_t gen)
{
    if (!o || !o->alive)
        return 0;
    return add_place(a, (uint32_t)(o - a->codes), new_start, gen);
}

/* Rebuild `live` from the open placements (after a compaction or snapshot). */
static int rebuild_live(vmp_analysis *a)
{
    size_t i;
    a->n_live = 0;
    for (i = 0; i < a->n_codes; i++) {
        const code_obj *o = &a->codes[i];
        if (!o->alive || o->size == 0)
            continue;
        if (vmp_grow__((void **)&a->live, &a->cap_live, a->n_live + 1, sizeof *a->live))
            return -1;
        set_span(a, &a->live[a->n_live], (uint32_t)i, o->start, o->place);
        a->n_live++;
    }
    if (a->n_live > 1)
        qsort(a->live, a->n_live, sizeof *a->live, cmp_span);
    return 0;
}

vmp_status vmp_code_history__take_free(vmp_analysis *a, uint64_t id, uint64_t gen)
{
    code_obj *o = vmp_code_history__find(a, id);
    note_change(a, gen);
    if (o && o->alive) {
        live_remove(a, (uint32_t)(o - a->codes));
        if (do_free(a, o, gen))
            return VMP_ERR_NOMEM;
    }
    return VMP_OK;
}

vmp_status vmp_code_history__take_move(vmp_analysis *a, uint64_t id, uint64_t start, uint64_t gen)
{
    code_obj *o = vmp_code_history__find(a, id);
    note_change(a, gen);
    if (o && o->alive) {
        live_remove(a, (uint32_t)(o - a->codes));
        if (do_move(a, o, start, gen) || live_insert(a, (uint32_t)(o - a->codes)))
            return VMP_ERR_NOMEM;
    }
    return VMP_OK;
}

vmp_status vmp_code_history__take_compaction(vmp_analysis *a, const vmp_rec_code_compaction *c)
{
    size_t i;
    note_change(a, c->generation);
    for (i = 0; i < c->n_frees; i++)
        if (do_free(a, vmp_code_history__find(a, c->frees[i]), c->generation))
            return VMP_ERR_NOMEM;
    for (i = 0; i < c->n_moves; i++)
        if (do_move(a, vmp_code_history__find(a, c->moves[2 * i]), c->moves[2 * i + 1],
                    c->generation))
            return VMP_ERR_NOMEM;
    return rebuild_live(a) ? VMP_ERR_NOMEM : VMP_OK;
}

vmp_status vmp_code_history__take_snapshot(vmp_analysis *a, const vmp_rec_code_snapshot *s)
{
    vmp_hmap listed = {NULL, 0, 0};
    size_t i;
    vmp_status st = VMP_OK;
    note_change(a, s->generation);
    for (i = 0; i < s->n; i++) {
        code_obj *o = vmp_code_history__find(a, s->entries[2 * i]);
        if (vmp_hmap__put(&listed, s->entries[2 * i], 0, 1)) {
            st = VMP_ERR_NOMEM;
            goto out;
        }
        if (o && o->alive && o->start != s->entries[2 * i + 1] &&
            do_move(a, o, s->entries[2 * i + 1], s->generation)) {
            st = VMP_ERR_NOMEM;
            goto out;
        }
    }
    for (i = 0; i < a->n_codes; i++) {
        code_obj *o = &a->codes[i];
        if (o->alive && o->zone == s->zone && !vmp_hmap__get(&listed, o->id, 0) &&
            do_free(a, o, s->generation)) {
            st = VMP_ERR_NOMEM;
            goto out;
        }
    }
    if (rebuild_live(a))
        st = VMP_ERR_NOMEM;
out:
    vmp_hmap__free(&listed);
    return st;
}

/* ---- lookups at a generation ------------------------------------------------ */

/* Add to g the placement of object `obj` described by r when it is alive at
 * `gen`, that is when it began at or before `gen` and ends after it. */
static int replay_keep(vmp_analysis *a, gen_index *g, uint32_t obj, const replay_obj *r,
                       uint64_t gen_to, uint64_t gen)
{
    if (!(r->gen_from <= gen && gen < gen_to) || a->codes[obj].size == 0)
        return 0;
    if (vmp_grow__((void **)&g->s, &g->cap, g->n + 1, sizeof *g->s))
        return -1;
    set_span(a, &g->s[g->n++], obj, r->start, r->place);
    return 0;
}

/* Fill g (unsorted) with the placements alive at `gen`, replaying the whole
 * code history.  Returns 0, or -1 when out of memory. */
static int replay_history(vmp_analysis *a, gen_index *g, uint64_t gen)
{
    const uint8_t *p = a->hist.b, *end = a->hist.b + a->hist.n;
    uint64_t cur_gen = 0, start = 0, v;
    uint32_t obj = 0, place = 0;
    size_t i;
    if (vmp_grow__((void **)&a->replay, &a->cap_replay, a->n_codes, sizeof *a->replay))
        return -1;
    memset(a->replay, 0, a->n_codes * sizeof *a->replay);
    a->cursor.valid = 0; /* `replay` is this function's now */
    while (p < end) {
        replay_obj *r;
        p = get_varint(p, &v);
        if ((v & 3) == HIST_GEN) {
            p = get_varint(p, &v);
            cur_gen += unzigzag(v);
            continue;
        }
        obj = (uint32_t)((uint64_t)obj + unzigzag(v >> 2));
        r = &a->replay[obj];
        if (r->open && replay_keep(a, g, obj, r, cur_gen, gen))
            return -1;
        r->open = 0;
        if ((v & 3) == HIST_PLACE) {
            p = get_varint(p, &v);
            start += unzigzag(v);
            r->start = start;
            r->gen_from = cur_gen;
            r->place = place++;
            r->open = 1;
        }
    }
    for (i = 0; i < a->n_codes; i++)
        if (a->replay[i].open && replay_keep(a, g, (uint32_t)i, &a->replay[i], GEN_OPEN, gen))
            return -1;
    return 0;
}

/* Keep the cursor's state at log position `pos` (before a HIST_GEN event)
 * as a checkpoint when the log has grown enough since the last one.  A
 * checkpoint that cannot be made is not (the lookups stay right, slower). */
static void checkpoint(vmp_analysis *a, size_t pos)
{
    const hist_cursor *c = &a->cursor;
    size_t bytes = c->n_zeroed * sizeof *a->replay,
           last = a->n_cps ? a->cps[a->n_cps - 1].at.pos : 0;
    hist_checkpoint *cp;
    if (pos <= last || pos - last < CHECKPOINT_BYTES || pos - last < bytes)
        return;
    if (vmp_grow__((void **)&a->cps, &a->cap_cps, a->n_cps + 1, sizeof *a->cps))
        return;
    cp = &a->cps[a->n_cps];
    cp->replay = malloc(bytes ? bytes : 1);
    if (!cp->replay)
        return;
    memcpy(cp->replay, a->replay, bytes);
    cp->at = *c;
    cp->at.pos = pos;
    cp->at.gen = c->log_gen;
    a->n_cps++;
    a->stats.memory_bytes += bytes + sizeof *cp;
}

/* Move the cursor back to, or ahead to, the last checkpoint at or before
 * generation `gen` when it is not already there or further: when the
 * cursor is past `gen` (or invalid), from the log's start if there is none. */
static void cursor_restart(vmp_analysis *a, uint64_t gen)
{
    hist_cursor *c = &a->cursor;
    int behind = !c->valid || gen < c->gen;
    size_t lo = 0, hi = a->n_cps;
    while (lo < hi) { /* the first checkpoint past gen */
        size_t mid = lo + (hi - lo) / 2;
        if (a->cps[mid].at.log_gen <= gen)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0) {
        if (behind) {
            memset(c, 0, sizeof *c);
            c->valid = 1;
        }
        return;
    }
    if (!behind && a->cps[lo - 1].at.pos <= c->pos)
        return; /* the cursor is as far */
    *c = a->cps[lo - 1].at;
    memcpy(a->replay, a->cps[lo - 1].replay, c->n_zeroed * sizeof *a->replay);
    a->stats.checkpoint_restarts++;
}

/* Move the cursor to generation `gen`, from where it stands or the last
 * checkpoint before `gen`, whichever is further: apply to
 * `replay` every event at a generation up to `gen`.  The log's generations
 * must not go back.  Returns 0, or -1 when out of memory. */
static int cursor_to(vmp_analysis *a, uint64_t gen)
{
    hist_cursor *c = &a->cursor;
    const uint8_t *p, *end = a->hist.b + a->hist.n;
    uint64_t v;
    if (vmp_grow__((void **)&a->replay, &a->cap_replay, a->n_codes, sizeof *a->replay))
        return -1;
    cursor_restart(a, gen);
    if (c->n_zeroed < a->n_codes) { /* objects added since: no event yet */
        memset(a->replay + c->n_zeroed, 0, (a->n_codes - c->n_zeroed) * sizeof *a->replay);
        c->n_zeroed = a->n_codes;
    }
    p = a->hist.b + c->pos;
    while (p < end) {
        const uint8_t *q = get_varint(p, &v);
        replay_obj *r;
        if ((v & 3) == HIST_GEN) {
            checkpoint(a, (size_t)(p - a->hist.b));
            q = get_varint(q, &v);
            if (c->log_gen + unzigzag(v) > gen)
                break; /* the events of a later generation */
            c->log_gen += unzigzag(v);
            p = q;
            continue;
        }
        c->obj = (uint32_t)((uint64_t)c->obj + unzigzag(v >> 2));
        r = &a->replay[c->obj];
        r->open = 0;
        if ((v & 3) == HIST_PLACE) {
            q = get_varint(q, &v);
            c->start += unzigzag(v);
            r->start = c->start;
            r->place = c->place++;
            r->open = 1;
        }
        p = q;
    }
    c->pos = (size_t)(p - a->hist.b);
    c->gen = gen;
    return 0;
}

/* Fill g (unsorted) with the placements alive at `gen`: from the cursor,
 * or by replaying the whole log when its generations went back.  Returns 0,
 * or -1 when out of memory. */
static int placements_at(vmp_analysis *a, gen_index *g, uint64_t gen)
{
    size_t i;
    if (a->hist.n == 0) /* no code placed (yet the generation moved) */
        return 0;
    if (a->hist.unordered)
        return replay_history(a, g, gen);
    if (cursor_to(a, gen))
        return -1;
    for (i = 0; i < a->n_codes; i++) {
        const replay_obj *r = &a->replay[i];
        if (!r->open || a->codes[i].size == 0)
            continue;
        if (vmp_grow__((void **)&g->s, &g->cap, g->n + 1, sizeof *g->s))
            return -1;
        set_span(a, &g->s[g->n++], (uint32_t)i, r->start, r->place);
    }
    return 0;
}

/* The sorted spans alive at generation `gen`; NULL with *n_out SIZE_MAX
 * when out of memory. */
static const span *index_at(vmp_analysis *a, uint64_t gen, size_t *n_out)
{
    size_t i;
    gen_index *g;
    if (gen >= a->cur_gen) {
        *n_out = a->n_live;
        return a->live;
    }
    for (i = 0; i < N_OLD_CACHES; i++)
        if (a->old[i].valid && a->old[i].gen == gen) {
            *n_out = a->old[i].n;
            return a->old[i].s;
        }
    g = &a->old[a->old_next];
    a->old_next = (a->old_next + 1) % N_OLD_CACHES;
    g->valid = 0;
    g->n = 0;
    if (placements_at(a, g, gen)) {
        *n_out = SIZE_MAX;
        return NULL;
    }
    if (g->n > 1)
        qsort(g->s, g->n, sizeof *g->s, cmp_span);
    g->gen = gen;
    g->valid = 1;
    a->stats.index_builds++;
    *n_out = g->n;
    return g->s;
}

const span *vmp_code_history__span_at(vmp_analysis *a, uint64_t addr, uint64_t gen, int *failed)
{
    size_t n, i;
    const span *s = index_at(a, gen, &n);
    *failed = n == SIZE_MAX;
    if (!s || n == 0 || n == SIZE_MAX)
        return NULL;
    i = span_lower(s, n, addr);
    if (i == 0 || addr >= s[i - 1].end)
        return NULL;
    a->codes[s[i - 1].obj].hit_epoch = a->epoch;
    return &s[i - 1];
}

const uint64_t *vmp_code_history__inline_at(const code_obj *o, uint64_t off)
{
    size_t lo = 0, hi = o->n_inl;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (o->inl[o->inl_at[mid]] <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? o->inl + o->inl_at[lo - 1] : NULL;
}
