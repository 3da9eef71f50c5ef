/* SPDX-License-Identifier: MIT
 *
 * vmp_profile.c - aggregate a resolved sample stream into the sums a report
 * or an exporter needs (spec.md §5.9, §5.12, §5.13).  Memory grows with
 * resolved functions, frames, threads and distinct (stack, thread, state)
 * triples, never with samples.
 */
#include <stdlib.h>
#include <string.h>

#include "vmp_analyze.h"
#include "vmp_analyze_int.h"

typedef struct u64vec {
    uint64_t *v;
    size_t n, cap;
} u64vec;

#define THREAD_CACHE 64u
#define BLAME_CACHE  256u

struct vmp_profile {
    vmp_analysis *a;
    vmp_profile_totals t;
    u64vec func_w, frame_w, state_w, state_class_w, fail_w;
    uint64_t *thread_ids;
    u64vec thread_w;
    size_t n_threads, cap_threads;
    vmp_hmap thread_idx;
    vmp_profile_events *events;
    size_t n_events, cap_events;
    vmp_profile_counter *ctrs;
    size_t n_ctrs, cap_ctrs;
    vmp_profile_stack_entry *entries;
    size_t n_entries, cap_entries;
    vmp_hmap entry_idx; /* (stack | state << 32, thread) -> index + 1 */
    /* Per analysis stack id, the two entries (index + 1) of that stack used
     * last, most recent first: most samples repeat a recent (thread, state)
     * of their stack, and this array is far cheaper than entry_idx. */
    uint32_t *stack_recent;
    size_t cap_recent;
    vmp_profile_blame *blame;
    size_t n_blame, cap_blame;
    vmp_hmap blame_idx; /* (code, state) -> index + 1 */

    /* Direct-mapped caches in front of thread_idx and blame_idx. */
    struct {
        uint64_t id;
        uint32_t ti;
    } thread_cache[THREAD_CACHE];

    struct {
        uint64_t code;
        uint32_t state, bi;
    } blame_cache[BLAME_CACHE];

    uint64_t blamed;
    vmp_profile_code *code;
    size_t n_code, cap_code;
    vmp_hmap code_idx;  /* code id -> index + 1 */
    uint32_t last_code; /* index + 1 of the last sample's code, or 0 */
    int any_sample;
};

/* Add w at index i of a zero-filled, growable array. */
static int vec_add(u64vec *v, size_t i, uint64_t w)
{
    if (i >= v->n) {
        if (vmp_grow__((void **)&v->v, &v->cap, i + 1, sizeof *v->v))
            return -1;
        memset(v->v + v->n, 0, (i + 1 - v->n) * sizeof *v->v);
        v->n = i + 1;
    }
    v->v[i] += w;
    return 0;
}

vmp_status vmp_profile_create(vmp_profile **out, const vmp_analysis_options *opts)
{
    vmp_profile *p;
    vmp_status st;
    if (!out)
        return VMP_ERR_INVALID_ARG;
    p = calloc(1, sizeof *p);
    if (!p)
        return VMP_ERR_NOMEM;
    st = vmp_analysis_create(&p->a, opts);
    if (st < 0) {
        free(p);
        return st;
    }
    *out = p;
    return VMP_OK;
}

void vmp_profile_free(vmp_profile *p)
{
    if (!p)
        return;
    vmp_analysis_free(p->a);
    free(p->func_w.v);
    free(p->frame_w.v);
    free(p->state_w.v);
    free(p->state_class_w.v);
    free(p->fail_w.v);
    free(p->thread_ids);
    free(p->thread_w.v);
    vmp_hmap__free(&p->thread_idx);
    free(p->events);
    free(p->ctrs);
    free(p->entries);
    vmp_hmap__free(&p->entry_idx);
    free(p->stack_recent);
    free(p->blame);
    vmp_hmap__free(&p->blame_idx);
    free(p->code);
    vmp_hmap__free(&p->code_idx);
    free(p);
}

/* Vocabulary indexes past this are summed under it: a hostile file cannot
 * make the per-state and per-reason arrays huge. */
#define MAX_INDEX 0xFFFFu

/* Slot of key k in a direct-mapped cache of n (a power of two) slots. */
static size_t cache_slot(uint64_t k, size_t n)
{
    return (size_t)(vmp_hash64(k) & (n - 1));
}

/* Whether entry e aggregates sample s's (stack, thread, state). */
static int entry_is(const vmp_profile_stack_entry *e, const vmp_asample *s)
{
    return e->stack == s->stack && e->state == s->state && e->thread == s->thread;
}

static vmp_status add_sample(vmp_profile *p, const vmp_asample *s)
{
    uint64_t w = s->weight;
    uint32_t state = s->state > MAX_INDEX ? MAX_INDEX : s->state;
    uint32_t reason = s->reason > MAX_INDEX ? MAX_INDEX : s->reason;
    const vmp_aframe *fr = vmp_analysis_frame(p->a, s->leaf);
    const vmp_afunction *fn = fr ? vmp_analysis_function(p->a, fr->function) : NULL;
    int cls = fn ? fn->code_class : VMP_CLASS_UNKNOWN;
    uint32_t ti;
    size_t tslot;

    p->t.samples += w;
    if (!p->any_sample)
        p->t.first_time_ns = s->time_ns;
    p->any_sample = 1;
    if (s->time_ns > p->t.last_time_ns)
        p->t.last_time_ns = s->time_ns;
    if (s->failed) {
        p->t.failed += w;
        if (vec_add(&p->fail_w, reason, w))
            return VMP_ERR_NOMEM;
    }
    if (cls == VMP_CLASS_GENERATED)
        p->t.generated += w;
    else if (cls == VMP_CLASS_NATIVE)
        p->t.native += w;
    else if (cls == VMP_CLASS_UNKNOWN)
        p->t.unknown += w;
    if (fr && (vec_add(&p->func_w, fr->function, w) || vec_add(&p->frame_w, s->leaf, w)))
        return VMP_ERR_NOMEM;
    if (vec_add(&p->state_w, state, w) ||
        vec_add(&p->state_class_w, (size_t)state * 4 + (size_t)cls, w))
        return VMP_ERR_NOMEM;

    if (s->blame)
        p->blamed += w;
    if (cls != VMP_CLASS_GENERATED) {
        size_t slot = cache_slot(s->blame ^ (uint64_t)state << 40, BLAME_CACHE);
        uint32_t bi = p->blame_cache[slot].bi;
        if (!bi || p->blame_cache[slot].code != s->blame || p->blame_cache[slot].state != state)
            bi = vmp_hmap__get(&p->blame_idx, s->blame, state);
        if (!bi) {
            vmp_profile_blame *b;
            if (vmp_grow__((void **)&p->blame, &p->cap_blame, p->n_blame + 1, sizeof *p->blame))
                return VMP_ERR_NOMEM;
            b = &p->blame[p->n_blame++];
            b->code = s->blame;
            b->state = state;
            b->weight = 0;
            bi = (uint32_t)p->n_blame;
            if (vmp_hmap__put(&p->blame_idx, s->blame, state, bi))
                return VMP_ERR_NOMEM;
        }
        p->blame_cache[slot].code = s->blame;
        p->blame_cache[slot].state = state;
        p->blame_cache[slot].bi = bi;
        p->blame[bi - 1].weight += w;
    }

    if (s->code) {
        uint32_t ci = p->last_code;
        if (!ci || p->code[ci - 1].code != s->code)
            ci = vmp_hmap__get(&p->code_idx, s->code, 0);
        if (!ci) {
            if (vmp_grow__((void **)&p->code, &p->cap_code, p->n_code + 1, sizeof *p->code))
                return VMP_ERR_NOMEM;
            p->code[p->n_code].code = s->code;
            p->code[p->n_code].weight = 0;
            ci = (uint32_t)++p->n_code;
            if (vmp_hmap__put(&p->code_idx, s->code, 0, ci))
                return VMP_ERR_NOMEM;
        }
        p->last_code = ci;
        p->code[ci - 1].weight += w;
    }

    tslot = cache_slot(s->thread, THREAD_CACHE);
    ti = p->thread_cache[tslot].ti;
    if (!ti || p->thread_cache[tslot].id != s->thread)
        ti = vmp_hmap__get(&p->thread_idx, s->thread, 0);
    if (!ti) {
        if (vmp_grow__((void **)&p->thread_ids, &p->cap_threads, p->n_threads + 1,
                       sizeof *p->thread_ids))
            return VMP_ERR_NOMEM;
        p->thread_ids[p->n_threads++] = s->thread;
        ti = (uint32_t)p->n_threads;
        if (vmp_hmap__put(&p->thread_idx, s->thread, 0, ti))
            return VMP_ERR_NOMEM;
    }
    p->thread_cache[tslot].id = s->thread;
    p->thread_cache[tslot].ti = ti;
    if (vec_add(&p->thread_w, ti - 1, w))
        return VMP_ERR_NOMEM;

    if (s->stack) {
        uint64_t ka = (uint64_t)s->stack | (uint64_t)s->state << 32;
        uint32_t *recent, ei;
        if (2 * (size_t)s->stack + 1 >= p->cap_recent) {
            size_t old = p->cap_recent;
            if (vmp_grow__((void **)&p->stack_recent, &p->cap_recent, 2 * ((size_t)s->stack + 1),
                           sizeof *p->stack_recent))
                return VMP_ERR_NOMEM;
            memset(p->stack_recent + old, 0, (p->cap_recent - old) * sizeof *p->stack_recent);
        }
        recent = &p->stack_recent[2 * (size_t)s->stack];
        if (recent[0] && entry_is(&p->entries[recent[0] - 1], s)) {
            ei = recent[0];
        } else if (recent[1] && entry_is(&p->entries[recent[1] - 1], s)) {
            ei = recent[1];
            recent[1] = recent[0];
            recent[0] = ei;
        } else {
            ei = vmp_hmap__get(&p->entry_idx, ka, s->thread);
        }
        if (!ei) {
            vmp_profile_stack_entry *e;
            if (vmp_grow__((void **)&p->entries, &p->cap_entries, p->n_entries + 1,
                           sizeof *p->entries))
                return VMP_ERR_NOMEM;
            e = &p->entries[p->n_entries++];
            e->stack = s->stack;
            e->state = s->state;
            e->thread = s->thread;
            e->weight = 0;
            ei = (uint32_t)p->n_entries;
            if (vmp_hmap__put(&p->entry_idx, ka, s->thread, ei))
                return VMP_ERR_NOMEM;
        }
        if (recent[0] != ei) {
            recent[1] = recent[0];
            recent[0] = ei;
        }
        p->entries[ei - 1].weight += w;
    }
    return VMP_OK;
}

vmp_status vmp_profile_feed(vmp_profile *p, const vmp_record *rec)
{
    vmp_asample s;
    int is_sample = 0;
    vmp_status st;
    if (!p || !rec)
        return VMP_ERR_INVALID_ARG;
    p->t.records++;
    st = vmp_analysis_feed(p->a, rec, &s, &is_sample);
    if (st < 0)
        return st;
    if (is_sample)
        return add_sample(p, &s);
    switch (rec->type) {
    case VMP_REC_CODE_COMPACTION:
        p->t.compactions++;
        p->t.compaction_ns += rec->u.code_compaction.duration_ns;
        p->t.code_frees += rec->u.code_compaction.n_frees;
        p->t.code_moves += rec->u.code_compaction.n_moves;
        if (rec->u.code_compaction.generation > p->t.generations)
            p->t.generations = rec->u.code_compaction.generation;
        break;
    case VMP_REC_CODE_FREE:
        p->t.code_frees++;
        if (rec->u.code_free.generation > p->t.generations)
            p->t.generations = rec->u.code_free.generation;
        break;
    case VMP_REC_CODE_MOVE:
        p->t.code_moves++;
        if (rec->u.code_move.generation > p->t.generations)
            p->t.generations = rec->u.code_move.generation;
        break;
    case VMP_REC_CODE_SNAPSHOT:
        if (rec->u.code_snapshot.generation > p->t.generations)
            p->t.generations = rec->u.code_snapshot.generation;
        break;
    case VMP_REC_EVENT: {
        const vmp_rec_event *e = &rec->u.event;
        size_t k = e->kind > 0xFFFF ? 0xFFFF : (size_t)e->kind;
        if (k >= p->n_events) {
            if (vmp_grow__((void **)&p->events, &p->cap_events, k + 1, sizeof *p->events))
                return VMP_ERR_NOMEM;
            memset(p->events + p->n_events, 0, (k + 1 - p->n_events) * sizeof *p->events);
            p->n_events = k + 1;
        }
        p->events[k].count++;
        p->events[k].total_duration_ns += e->duration_ns;
        break;
    }
    case VMP_REC_COUNTER: {
        const vmp_rec_counter *c = &rec->u.counter;
        size_t k = c->kind > 0xFFFF ? 0xFFFF : (size_t)c->kind;
        vmp_profile_counter *ctr;
        if (k >= p->n_ctrs) {
            if (vmp_grow__((void **)&p->ctrs, &p->cap_ctrs, k + 1, sizeof *p->ctrs))
                return VMP_ERR_NOMEM;
            memset(p->ctrs + p->n_ctrs, 0, (k + 1 - p->n_ctrs) * sizeof *p->ctrs);
            p->n_ctrs = k + 1;
        }
        ctr = &p->ctrs[k];
        if (ctr->count == 0) {
            ctr->first = ctr->min = ctr->max = c->value;
        } else {
            if (c->value < ctr->min)
                ctr->min = c->value;
            if (c->value > ctr->max)
                ctr->max = c->value;
        }
        ctr->last = c->value;
        ctr->count++;
        break;
    }
    case VMP_REC_END:
        if (rec->u.end.time_ns > p->t.last_time_ns)
            p->t.last_time_ns = rec->u.end.time_ns;
        if (rec->u.end.generation > p->t.generations)
            p->t.generations = rec->u.end.generation;
        break;
    default:
        break;
    }
    return VMP_OK;
}

vmp_status vmp_profile_read(vmp_profile *p, vmp_reader *r)
{
    vmp_record rec;
    vmp_status st;
    if (!p || !r)
        return VMP_ERR_INVALID_ARG;
    while ((st = vmp_reader_next(r, &rec)) == VMP_OK) {
        st = vmp_profile_feed(p, &rec);
        if (st == VMP_ERR_LIMIT) /* the file and offset, for the caller's message */
            return vmp_reader_fail(r, st, vmp_analysis_errmsg(p->a));
        if (st < 0)
            return st;
    }
    return st == VMP_END ? VMP_OK : st;
}

vmp_analysis *vmp_profile_analysis(const vmp_profile *p)
{
    return p->a;
}

const vmp_profile_totals *vmp_profile_get_totals(const vmp_profile *p)
{
    return &p->t;
}

const uint64_t *vmp_profile_function_weights(const vmp_profile *p, size_t *n_out)
{
    *n_out = p->func_w.n;
    return p->func_w.v;
}

const uint64_t *vmp_profile_frame_weights(const vmp_profile *p, size_t *n_out)
{
    *n_out = p->frame_w.n;
    return p->frame_w.v;
}

const uint64_t *vmp_profile_state_weights(const vmp_profile *p, size_t *n_out)
{
    *n_out = p->state_w.n;
    return p->state_w.v;
}

const uint64_t *vmp_profile_state_class_weights(const vmp_profile *p, size_t *n_out)
{
    *n_out = p->state_class_w.n;
    return p->state_class_w.v;
}

const uint64_t *vmp_profile_failure_weights(const vmp_profile *p, size_t *n_out)
{
    *n_out = p->fail_w.n;
    return p->fail_w.v;
}

int vmp_profile_thread(const vmp_profile *p, size_t i, uint64_t *id_out, uint64_t *weight_out)
{
    if (i >= p->n_threads)
        return 0;
    *id_out = p->thread_ids[i];
    *weight_out = i < p->thread_w.n ? p->thread_w.v[i] : 0;
    return 1;
}

const vmp_profile_events *vmp_profile_event_totals(const vmp_profile *p, size_t *n_out)
{
    *n_out = p->n_events;
    return p->events;
}

const vmp_profile_counter *vmp_profile_counters(const vmp_profile *p, size_t *n_out)
{
    *n_out = p->n_ctrs;
    return p->ctrs;
}

int vmp_profile_foreach_stack(const vmp_profile *p,
                              int (*fn)(const vmp_profile_stack_entry *e, void *payload),
                              void *payload)
{
    size_t i;
    for (i = 0; i < p->n_entries; i++) {
        int rc = fn(&p->entries[i], payload);
        if (rc)
            return rc;
    }
    return 0;
}

const vmp_profile_blame *vmp_profile_blame_weights(const vmp_profile *p, size_t *n_out)
{
    *n_out = p->n_blame;
    return p->blame;
}

uint64_t vmp_profile_blamed_samples(const vmp_profile *p)
{
    return p->blamed;
}

const vmp_profile_code *vmp_profile_code_weights(const vmp_profile *p, size_t *n_out)
{
    *n_out = p->n_code;
    return p->code;
}
