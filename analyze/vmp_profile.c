/* SPDX-License-Identifier: MIT
 *
 * vmp_profile.c - aggregate a resolved sample stream into the sums a report
 * or an exporter needs (spec.md §5.9, §5.12, §5.13).  Memory grows with
 * resolved functions, frames, threads and distinct keys of samples (stack,
 * leaf, thread, state, failure reason, code object), never with samples.
 *
 * A sample costs one lookup: it adds its weight to its key (the keys are
 * public, vmp_profile_keys(): converters aggregate them, not samples).  The per-
 * function, per-frame, per-state, per-thread, code and stack tables are sums
 * over keys, brought up to date by fold() when a getter is called after
 * samples were fed.  The blame table is added to per sample (a direct-mapped
 * cache in front of its map): blames vary from sample to sample of one stack
 * (the code a thread last ran), and in the key they would multiply the keys.
 */
#include <stdlib.h>
#include <string.h>

#include "vmp_analyze.h"
#include "vmp_analyze_int.h"

typedef struct u64vec {
    uint64_t *v;
    size_t n, cap;
} u64vec;

#define BLAME_CACHE 256u

/* The table cells (index + 1, 0 for none) of a key (vmp_profile_key), that
 * fold() adds its weight to. */
typedef struct key_cells {
    uint32_t cls; /* the leaf's code class */
    uint32_t ti, ci, ei;
    uint64_t folded; /* of the key's weight, what fold() added to the tables */
} key_cells;

typedef struct key_slot {
    uint32_t hash, ki;
} key_slot;

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
    /* The distinct keys of the samples, in order of first sample, and their
     * open-addressed index (hash, key index + 1; a power of two of slots,
     * at most half full).  A sample adds its weight to its key alone;
     * fold() adds what the keys gained to the tables. */
    vmp_profile_key *keys;
    key_cells *cells; /* of each key */
    size_t n_keys, cap_keys, cap_cells;
    key_slot *key_slots;
    size_t cap_key_slots;
    int unfolded; /* a key gained weight since fold() */
    vmp_profile_blame *blame;
    size_t n_blame, cap_blame;
    vmp_hmap blame_idx; /* (code, state) -> index + 1 */

    struct { /* a direct-mapped cache in front of blame_idx */
        uint64_t code;
        uint32_t state, bi;
    } blame_cache[BLAME_CACHE];

    uint64_t blamed;
    vmp_profile_code *code;
    size_t n_code, cap_code;
    vmp_hmap code_idx; /* code id -> index + 1 */
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
    free(p->keys);
    free(p->cells);
    free(p->key_slots);
    free(p->blame);
    vmp_hmap__free(&p->blame_idx);
    free(p->code);
    vmp_hmap__free(&p->code_idx);
    free(p);
}

/* Vocabulary indexes past this are summed under it: a hostile file cannot
 * make the per-state and per-reason arrays huge. */
#define MAX_INDEX 0xFFFFu

/* A state or failure reason as a vocabulary index of the tables. */
static uint32_t capped(uint32_t v)
{
    return v > MAX_INDEX ? MAX_INDEX : v;
}

/* The table cells of a new key (made on its first sample, with weight 0:
 * the tables keep the order of first samples). */
static vmp_status make_cells(vmp_profile *p, const vmp_profile_key *k, key_cells *c)
{
    const vmp_aframe *fr = vmp_analysis_frame(p->a, k->leaf);
    const vmp_afunction *fn = fr ? vmp_analysis_function(p->a, fr->function) : NULL;
    uint32_t state = capped(k->state);
    c->cls = fn ? (uint32_t)fn->code_class : VMP_CLASS_UNKNOWN;
    c->ti = c->ci = c->ei = 0;
    c->folded = 0;
    if (k->failed && vec_add(&p->fail_w, capped(k->reason), 0))
        return VMP_ERR_NOMEM;
    if (fr && (vec_add(&p->func_w, fr->function, 0) || vec_add(&p->frame_w, k->leaf, 0)))
        return VMP_ERR_NOMEM;
    if (vec_add(&p->state_w, state, 0) || vec_add(&p->state_class_w, (size_t)state * 4 + c->cls, 0))
        return VMP_ERR_NOMEM;
    if (k->code) {
        uint32_t ci = vmp_hmap__get(&p->code_idx, k->code, 0);
        if (!ci) {
            if (vmp_grow__((void **)&p->code, &p->cap_code, p->n_code + 1, sizeof *p->code))
                return VMP_ERR_NOMEM;
            p->code[p->n_code].code = k->code;
            p->code[p->n_code].weight = 0;
            ci = (uint32_t)++p->n_code;
            if (vmp_hmap__put(&p->code_idx, k->code, 0, ci))
                return VMP_ERR_NOMEM;
        }
        c->ci = ci;
    }
    c->ti = vmp_hmap__get(&p->thread_idx, k->thread, 0);
    if (!c->ti) {
        if (vmp_grow__((void **)&p->thread_ids, &p->cap_threads, p->n_threads + 1,
                       sizeof *p->thread_ids))
            return VMP_ERR_NOMEM;
        p->thread_ids[p->n_threads++] = k->thread;
        c->ti = (uint32_t)p->n_threads;
        if (vmp_hmap__put(&p->thread_idx, k->thread, 0, c->ti))
            return VMP_ERR_NOMEM;
    }
    if (vec_add(&p->thread_w, c->ti - 1, 0))
        return VMP_ERR_NOMEM;
    if (k->stack) {
        uint64_t ka = (uint64_t)k->stack | (uint64_t)state << 32;
        uint32_t ei = vmp_hmap__get(&p->entry_idx, ka, k->thread);
        if (!ei) {
            vmp_profile_stack_entry *e;
            if (vmp_grow__((void **)&p->entries, &p->cap_entries, p->n_entries + 1,
                           sizeof *p->entries))
                return VMP_ERR_NOMEM;
            e = &p->entries[p->n_entries++];
            e->stack = k->stack;
            e->state = state;
            e->thread = k->thread;
            e->weight = 0;
            ei = (uint32_t)p->n_entries;
            if (vmp_hmap__put(&p->entry_idx, ka, k->thread, ei))
                return VMP_ERR_NOMEM;
        }
        c->ei = ei;
    }
    return VMP_OK;
}

/* Whether key k is (the key part of) key q. */
static int key_is(const vmp_profile_key *k, const vmp_profile_key *q)
{
    return k->stack == q->stack && k->leaf == q->leaf && k->state == q->state &&
           k->reason == q->reason && k->thread == q->thread && k->code == q->code &&
           k->failed == q->failed && k->kind == q->kind;
}

/* The fields mixed by odd multipliers, then hashed once. */
static uint32_t key_hash(const vmp_profile_key *q)
{
    uint64_t h = ((uint64_t)q->stack | (uint64_t)q->leaf << 32) * 0x9E3779B97F4A7C15ull;
    h ^= q->thread * 0xC2B2AE3D27D4EB4Full;
    h ^= ((uint64_t)q->state << 40 | (uint64_t)q->reason << 8 | q->failed) * 0x165667B19E3779F9ull;
    h ^= (q->code + ((uint64_t)q->kind << 48)) * 0x94D049BB133111EBull;
    h = vmp_hash64(h);
    return (uint32_t)(h ^ h >> 32);
}

/* Double the key index. */
static int grow_key_slots(vmp_profile *p)
{
    size_t cap = p->cap_key_slots ? 2 * p->cap_key_slots : 1024, i;
    key_slot *ks = calloc(cap, sizeof *ks);
    if (!ks)
        return -1;
    for (i = 0; i < p->cap_key_slots; i++) {
        size_t j;
        if (!p->key_slots[i].ki)
            continue;
        for (j = p->key_slots[i].hash & (cap - 1); ks[j].ki; j = (j + 1) & (cap - 1))
            ;
        ks[j] = p->key_slots[i];
    }
    free(p->key_slots);
    p->key_slots = ks;
    p->cap_key_slots = cap;
    return 0;
}

/* The key of sample s, made with its cells when new; NULL on no memory. */
static vmp_profile_key *key_of(vmp_profile *p, const vmp_asample *s)
{
    vmp_profile_key q;
    key_cells c;
    uint32_t h;
    size_t j;

    q.stack = s->stack;
    q.leaf = s->leaf;
    q.state = s->state;
    q.failed = s->failed ? 1 : 0;
    q.reason = s->failed ? s->reason : 0;
    q.thread = s->thread;
    q.code = s->code;
    q.kind = s->kind;
    h = key_hash(&q);
    if (p->cap_key_slots) {
        for (j = h & (p->cap_key_slots - 1); p->key_slots[j].ki;
             j = (j + 1) & (p->cap_key_slots - 1)) {
            vmp_profile_key *k = &p->keys[p->key_slots[j].ki - 1];
            if (p->key_slots[j].hash == h && key_is(k, &q))
                return k;
        }
    }
    /* a new key */
    q.weight = q.samples = 0;
    if (p->n_keys >= UINT32_MAX - 1 ||
        vmp_grow__((void **)&p->keys, &p->cap_keys, p->n_keys + 1, sizeof *p->keys) ||
        vmp_grow__((void **)&p->cells, &p->cap_cells, p->n_keys + 1, sizeof *p->cells))
        return NULL;
    if (2 * (p->n_keys + 1) > p->cap_key_slots && grow_key_slots(p))
        return NULL;
    if (make_cells(p, &q, &c) < 0)
        return NULL;
    for (j = h & (p->cap_key_slots - 1); p->key_slots[j].ki; j = (j + 1) & (p->cap_key_slots - 1))
        ;
    p->keys[p->n_keys] = q;
    p->cells[p->n_keys] = c;
    p->key_slots[j].hash = h;
    p->key_slots[j].ki = (uint32_t)++p->n_keys;
    return &p->keys[p->n_keys - 1];
}

/* Sample s's weight to its (blame, state) cell: every sample whose pc is not
 * in generated code has one, blame 0 for none. */
static vmp_status add_blame(vmp_profile *p, const vmp_asample *s, uint32_t state)
{
    size_t slot = (size_t)(vmp_hash64(s->blame ^ (uint64_t)state << 40) & (BLAME_CACHE - 1));
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
    p->blame[bi - 1].weight += s->weight;
    return VMP_OK;
}

/* A sample adds its weight to its key (the tables get it from fold()) and
 * to its blame cell. */
static vmp_status add_sample(vmp_profile *p, const vmp_asample *s)
{
    vmp_profile_key *k;
    uint32_t cls;

    p->t.samples += s->weight;
    if (!p->any_sample)
        p->t.first_time_ns = s->time_ns;
    p->any_sample = 1;
    if (s->time_ns > p->t.last_time_ns)
        p->t.last_time_ns = s->time_ns;
    k = key_of(p, s);
    if (!k)
        return VMP_ERR_NOMEM;
    k->weight += s->weight;
    k->samples++;
    cls = p->cells[k - p->keys].cls;
    p->unfolded = 1;
    if (s->blame)
        p->blamed += s->weight;
    return cls != VMP_CLASS_GENERATED ? add_blame(p, s, capped(s->state)) : VMP_OK;
}

/* Add to the tables what the keys gained since the last fold: the getters
 * call it first.  Needs no memory (every key's cells exist). */
static void fold(const vmp_profile *cp)
{
    vmp_profile *p = (vmp_profile *)cp; /* the sums, brought up to date */
    size_t i;
    if (!p->unfolded)
        return;
    for (i = 0; i < p->n_keys; i++) {
        const vmp_profile_key *k = &p->keys[i];
        key_cells *c = &p->cells[i];
        uint64_t w = k->weight - c->folded;
        uint32_t state = capped(k->state);
        const vmp_aframe *fr;
        if (!w)
            continue;
        c->folded = k->weight;
        if (k->failed) {
            p->t.failed += w;
            p->fail_w.v[capped(k->reason)] += w;
        }
        if (c->cls == VMP_CLASS_GENERATED)
            p->t.generated += w;
        else if (c->cls == VMP_CLASS_NATIVE)
            p->t.native += w;
        else if (c->cls == VMP_CLASS_UNKNOWN)
            p->t.unknown += w;
        fr = vmp_analysis_frame(p->a, k->leaf);
        if (fr) {
            p->func_w.v[fr->function] += w;
            p->frame_w.v[k->leaf] += w;
        }
        p->state_w.v[state] += w;
        p->state_class_w.v[(size_t)state * 4 + c->cls] += w;
        if (c->ci)
            p->code[c->ci - 1].weight += w;
        p->thread_w.v[c->ti - 1] += w;
        if (c->ei)
            p->entries[c->ei - 1].weight += w;
    }
    p->unfolded = 0;
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
    fold(p);
    return &p->t;
}

const uint64_t *vmp_profile_function_weights(const vmp_profile *p, size_t *n_out)
{
    fold(p);
    *n_out = p->func_w.n;
    return p->func_w.v;
}

const uint64_t *vmp_profile_frame_weights(const vmp_profile *p, size_t *n_out)
{
    fold(p);
    *n_out = p->frame_w.n;
    return p->frame_w.v;
}

const uint64_t *vmp_profile_state_weights(const vmp_profile *p, size_t *n_out)
{
    fold(p);
    *n_out = p->state_w.n;
    return p->state_w.v;
}

const uint64_t *vmp_profile_state_class_weights(const vmp_profile *p, size_t *n_out)
{
    fold(p);
    *n_out = p->state_class_w.n;
    return p->state_class_w.v;
}

const uint64_t *vmp_profile_failure_weights(const vmp_profile *p, size_t *n_out)
{
    fold(p);
    *n_out = p->fail_w.n;
    return p->fail_w.v;
}

int vmp_profile_thread(const vmp_profile *p, size_t i, uint64_t *id_out, uint64_t *weight_out)
{
    fold(p);
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
    fold(p);
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
    fold(p);
    *n_out = p->n_code;
    return p->code;
}

const vmp_profile_key *vmp_profile_keys(const vmp_profile *p, size_t *n_out)
{
    *n_out = p->n_keys;
    return p->keys;
}
