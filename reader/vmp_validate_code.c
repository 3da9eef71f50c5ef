/* SPDX-License-Identifier: MIT
 *
 * vmp_validate_code.c - the validator's code zones and code objects: each
 * zone's live objects in a treap ordered by start, adds, moves, frees,
 * compactions and snapshots checked across generations (spec.md R-GEN-*,
 * §5.7 to §5.10; the outline is at the top of vmp_validate.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vmp_grow.h"
#include "vmp_validate_int.h"

zone_state *vmp_validate__zone_of(vstate *v, uint64_t zone)
{
    uint64_t *ix;
    if (zone == 0)
        return NULL;
    ix = vmp_validate__idmap_find(&v->zones, zone);
    return ix ? &v->zone_v[*ix] : NULL;
}

#define NODE(z, i) ((z)->pool[(i)-1])

static uint32_t treap_prio(void)
{
    /* xorshift; seeded per process so that a file cannot choose the shape */
    static uint64_t x;
    if (!x)
        x = ((uint64_t)(uintptr_t)&x ^ (uint64_t)time(NULL) * 0x9e3779b97f4a7c15u) | 1;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return (uint32_t)(x >> 32);
}

/* Split `t` into the nodes with start < key (*l) and the others (*r).
 * Recursion depth is the treap's depth, O(log n) expected. */
static void treap_split(zone_state *z, uint32_t t, uint64_t key, uint32_t *l, uint32_t *r)
{
    if (!t) {
        *l = *r = 0;
    } else if (NODE(z, t).start < key) {
        treap_split(z, NODE(z, t).right, key, &NODE(z, t).right, r);
        *l = t;
    } else {
        treap_split(z, NODE(z, t).left, key, l, &NODE(z, t).left);
        *r = t;
    }
}

/* Join two treaps whose keys are all ordered (every key of l < every key of r). */
static uint32_t treap_merge(zone_state *z, uint32_t l, uint32_t r)
{
    if (!l || !r)
        return l ? l : r;
    if (NODE(z, l).prio > NODE(z, r).prio) {
        NODE(z, l).right = treap_merge(z, NODE(z, l).right, r);
        return l;
    }
    NODE(z, r).left = treap_merge(z, l, NODE(z, r).left);
    return r;
}

/* The node with the greatest start < key (0: none). */
static uint32_t treap_below(const zone_state *z, uint64_t key)
{
    uint32_t t = z->root, best = 0;
    while (t) {
        if (NODE(z, t).start < key) {
            best = t;
            t = NODE(z, t).right;
        } else {
            t = NODE(z, t).left;
        }
    }
    return best;
}

/* The node with the least start >= key (0: none). */
static uint32_t treap_at_or_above(const zone_state *z, uint64_t key)
{
    uint32_t t = z->root, best = 0;
    while (t) {
        if (NODE(z, t).start >= key) {
            best = t;
            t = NODE(z, t).left;
        } else {
            t = NODE(z, t).right;
        }
    }
    return best;
}

void vmp_validate__live_remove(zone_state *z, const code_slot *c)
{
    uint32_t l, m, r;
    if (!z || c->size == 0)
        return;
    treap_split(z, z->root, c->start, &l, &r);
    if (c->start == UINT64_MAX) {
        m = r; /* nothing starts above */
        r = 0;
    } else {
        treap_split(z, r, c->start + 1, &m, &r);
    }
    if (m && NODE(z, m).id == c->id) { /* m: the one node starting there */
        NODE(z, m).left = z->free_list;
        NODE(z, m).prio = 0; /* free, for live_each() */
        z->free_list = m;
        m = 0;
    }
    z->root = treap_merge(z, treap_merge(z, l, m), r);
}

/* Forget every live object of the zone (the pool's memory stays). */
static void live_clear(zone_state *z)
{
    z->root = z->free_list = 0;
    z->n_pool = 0;
}

/* Call `fn` for every live object of the zone, in no particular order. */
static int live_each(vstate *v, zone_state *z, int (*fn)(vstate *v, uint64_t id))
{
    uint32_t i;
    for (i = 1; i <= z->n_pool; i++) {
        const live_node *n = &NODE(z, i);
        if (n->prio == 0)
            continue; /* free: live nodes have odd priorities */
        if (fn(v, n->id) < 0)
            return -1;
    }
    return 0;
}

/* Report R-GEN-4: code `id` at [start, end) in `zone` overlaps live `o`. */
static int overlap(vstate *v, uint64_t id, uint64_t start, uint64_t end, uint64_t zone,
                   const live_node *o)
{
    return vmp_validate__fail(v, "R-GEN-4",
                              "code object %llu [0x%llx, 0x%llx) overlaps code object %llu "
                              "[0x%llx, 0x%llx) in zone %llu at generation %llu",
                              (unsigned long long)id, (unsigned long long)start,
                              (unsigned long long)end, (unsigned long long)o->id,
                              (unsigned long long)o->start, (unsigned long long)o->end,
                              (unsigned long long)zone, (unsigned long long)v->last_gen);
}

/* Insert `c` into its zone's live objects; R-GEN-4 against the neighbours. */
int vmp_validate__live_insert(vstate *v, zone_state *z, const code_slot *c)
{
    uint64_t start = c->start, end = vmp_validate__end_of(c->start, c->size);
    uint32_t below, above, node, l, r;
    if (!z || c->size == 0)
        return 0;
    below = treap_below(z, start);
    above = treap_at_or_above(z, start);
    if (below && NODE(z, below).end > start) /* spec R-GEN-4 */
        return overlap(v, c->id, start, end, c->zone, &NODE(z, below));
    if (above && NODE(z, above).start < end) /* spec R-GEN-4 */
        return overlap(v, c->id, start, end, c->zone, &NODE(z, above));
    if (z->free_list) {
        node = z->free_list;
        z->free_list = NODE(z, node).left;
    } else {
        if (z->n_pool == z->cap_pool) {
            uint32_t cap = z->cap_pool ? z->cap_pool * 2 : 16;
            live_node *p;
            if (cap <= z->cap_pool)
                return vmp_validate__oom(v);
            p = realloc(z->pool, (size_t)cap * sizeof *p);
            if (!p)
                return vmp_validate__oom(v);
            z->pool = p;
            z->cap_pool = cap;
        }
        node = ++z->n_pool;
    }
    NODE(z, node).start = start;
    NODE(z, node).end = end;
    NODE(z, node).id = c->id;
    NODE(z, node).slot = (uint32_t)(c - v->code_v);
    NODE(z, node).left = NODE(z, node).right = 0;
    NODE(z, node).prio = treap_prio() | 1;
    treap_split(z, z->root, start, &l, &r);
    z->root = treap_merge(z, treap_merge(z, l, node), r);
    return 0;
}

/* The live code object `id`, or NULL after reporting R-CODE-2 (or `rule`). */
code_slot *vmp_validate__live_code(vstate *v, uint64_t id, const char *rule)
{
    uint64_t *ix = vmp_validate__idmap_find(&v->codes, id);
    if (!ix) {
        vmp_validate__fail(v, rule, "code object %llu is not defined by an earlier CODE_OBJECT",
                           (unsigned long long)id);
        return NULL;
    }
    if (v->code_v[*ix].freed) {
        vmp_validate__fail(v, "R-CODE-2", "code object %llu was freed before",
                           (unsigned long long)id);
        return NULL;
    }
    return &v->code_v[*ix];
}

/* spec R-GEN-1: every change record's generation exceeds the last one. */
int vmp_validate__change_generation(vstate *v, uint64_t gen)
{
    if (v->have_change && gen <= v->last_gen)
        return vmp_validate__fail(
            v, "R-GEN-1", "generation %llu does not exceed the previous change's generation %llu",
            (unsigned long long)gen, (unsigned long long)v->last_gen);
    v->have_change = 1;
    v->last_gen = gen;
    return 0;
}

int vmp_validate__define_id(vstate *v, idmap *m, uint64_t id, uint64_t val, const char *what)
{
    if (id == 0) /* spec: ids are at least 1 */
        return vmp_validate__fail(v, "R-ID-1", "%s id 0 (ids are at least 1)", what);
    if (vmp_validate__idmap_find(m, id)) /* spec R-ID-1 */
        return vmp_validate__fail(v, "R-ID-1", "%s %llu is defined twice", what,
                                  (unsigned long long)id);
    if (vmp_validate__idmap_put(m, id, val) < 0)
        return vmp_validate__oom(v);
    return 0;
}

/* spec R-CODE-1: the pc_map of code `id` (of `size` bytes) stays inside it */
static int check_pc_map(vstate *v, uint64_t id, const uint64_t *pc_map, size_t n, uint64_t size)
{
    for (size_t i = 0; i < n; i++) {
        if (pc_map[2 * i] >= size)
            return vmp_validate__fail(
                v, "R-CODE-1",
                "code object %llu: pc_map offset %llu is not less than its size %llu",
                (unsigned long long)id, (unsigned long long)pc_map[2 * i],
                (unsigned long long)size);
    }
    return 0;
}

/* spec R-CODE-3: a CODE_MAP names a code object defined before it without
 * a map of its own; more than one CODE_MAP per code is accepted */
int vmp_validate__check_code_map(vstate *v, const vmp_rec_code_map *cm)
{
    uint64_t *ix = vmp_validate__idmap_find(&v->codes, cm->id);
    if (!ix)
        return vmp_validate__fail(v, "R-CODE-3",
                                  "CODE_MAP names code object %llu, which is not defined before",
                                  (unsigned long long)cm->id);
    if (v->code_v[*ix].own_map)
        return vmp_validate__fail(v, "R-CODE-3",
                                  "CODE_MAP for code object %llu, whose CODE_OBJECT has a map",
                                  (unsigned long long)cm->id);
    return check_pc_map(v, cm->id, cm->pc_map, cm->pc_map_len, v->code_v[*ix].size);
}

int vmp_validate__check_code_object(vstate *v, const vmp_rec_code_object *co)
{
    code_slot *c;
    if (co->zone != 0 && !vmp_validate__idmap_find(&v->zones, co->zone)) /* spec R-ID-1 */
        return vmp_validate__fail(v, "R-ID-1",
                                  "code object %llu names zone %llu, which is not defined before",
                                  (unsigned long long)co->id, (unsigned long long)co->zone);
    if (check_pc_map(v, co->id, co->pc_map, co->pc_map_len, co->size) < 0)
        return -1;
    if (co->generation > (v->have_change ? v->last_gen : 0)) /* spec R-GEN-2 */
        return vmp_validate__fail(v, "R-GEN-2",
                                  "code object %llu: generation %llu exceeds the latest change's "
                                  "generation %llu",
                                  (unsigned long long)co->id, (unsigned long long)co->generation,
                                  (unsigned long long)(v->have_change ? v->last_gen : 0));
    if (v->n_code == v->cap_code && vmp_grow(&v->code_v, &v->cap_code, sizeof *v->code_v, 64))
        return vmp_validate__oom(v);
    if (vmp_validate__define_id(v, &v->codes, co->id, (uint64_t)v->n_code, "code object") < 0)
        return -1;
    c = &v->code_v[v->n_code++];
    c->id = co->id;
    c->zone = co->zone;
    c->start = co->start;
    c->size = co->size;
    c->stamp = 0; /* no compaction has listed it (batch_compaction()) */
    c->freed = 0;
    c->own_map = co->pc_map_len > 0 || co->n_inlines > 0;
    return vmp_validate__live_insert(v, vmp_validate__zone_of(v, c->zone), c);
}

static int cmp_live_start(const void *x, const void *y)
{
    const live_node *a = x, *b = y;
    return a->start < b->start ? -1 : a->start > b->start;
}

/* A compaction that moves or frees many of its zone's objects, in
 * O(n + m log m) rather than m treap updates: the zone's objects that stay,
 * in order, merged with the moved ones at their new starts, checked pairwise
 * for overlap (R-GEN-4), and the treap rebuilt from the sorted list in O(n).
 * Returns 1 when the compaction is not one it takes (a moved or freed object
 * of another zone, an id listed twice): the caller then updates one by one. */
static int batch_compaction(vstate *v, zone_state *z, const vmp_rec_code_compaction *cc)
{
    size_t i, n = 0, m = 0, live = 0, k, a, b;
    uint32_t t, *stack;
    live_node *out;

    v->stamp++;
    for (i = 0; i < cc->n_frees + cc->n_moves; i++) {
        uint64_t id = i < cc->n_frees ? cc->frees[i] : cc->moves[2 * (i - cc->n_frees)];
        code_slot *c = vmp_validate__live_code(v, id, "R-CODE-2"); /* spec R-CODE-2 */
        if (!c)
            return -1;
        if (c->zone != cc->zone || c->stamp == v->stamp)
            return 1;
        c->stamp = v->stamp;
    }
    for (i = 1; i <= z->n_pool; i++)
        live += NODE(z, i).prio != 0;
    if (live + cc->n_moves > v->cap_scratch) {
        size_t cap = live + cc->n_moves + 64;
        live_node *p = realloc(v->scratch, 2 * cap * sizeof *p);
        uint32_t *q = realloc(v->spine, cap * sizeof *q);
        if (p)
            v->scratch = p;
        if (q)
            v->spine = q;
        if (!p || !q)
            return vmp_validate__oom(v);
        v->cap_scratch = cap;
    }
    /* the objects that stay, in order (an in-order walk with an explicit
     * stack, kept in `spine`) */
    out = v->scratch + v->cap_scratch; /* second half: the merge's output */
    stack = v->spine;
    t = z->root;
    k = 0;
    while (t || k) {
        while (t) {
            stack[k++] = t;
            t = NODE(z, t).left;
        }
        t = stack[--k];
        if (v->code_v[NODE(z, t).slot].stamp != v->stamp)
            v->scratch[n++] = NODE(z, t);
        t = NODE(z, t).right;
    }
    /* the moved ones, sorted by their new starts (a compactor lists them in
     * order; sort otherwise) */
    for (i = 0; i < cc->n_moves; i++) {
        code_slot *c = &v->code_v[*vmp_validate__idmap_find(&v->codes, cc->moves[2 * i])];
        live_node *e = &out[i];
        c->start = cc->moves[2 * i + 1];
        e->start = c->start;
        e->end = vmp_validate__end_of(c->start, c->size);
        e->id = c->id;
        e->slot = (uint32_t)(c - v->code_v);
        e->prio = c->size != 0; /* objects of size 0 are not kept */
        if (i > 0 && e->start < out[i - 1].start)
            m = 1;
    }
    if (m)
        qsort(out, cc->n_moves, sizeof *out, cmp_live_start);
    for (i = 0; i < cc->n_frees; i++)
        v->code_v[*vmp_validate__idmap_find(&v->codes, cc->frees[i])].freed = 1;
    /* merge the moved ones (of non-zero size) with the staying ones */
    for (i = 0, m = 0; i < cc->n_moves; i++)
        if (out[i].prio)
            out[m++] = out[i];
    /* from the back, so that nothing is overwritten before it is read */
    a = n;
    b = m;
    k = n + m;
    while (b > 0) {
        if (a > 0 && v->scratch[a - 1].start > out[b - 1].start)
            v->scratch[--k] = v->scratch[--a];
        else
            v->scratch[--k] = out[--b];
    }
    n += m;
    for (i = 0; i + 1 < n; i++) {
        const live_node *x = &v->scratch[i], *y = &v->scratch[i + 1];
        if (x->end > y->start) /* spec R-GEN-4 */
            return overlap(v, y->id, y->start, y->end, cc->zone, x);
    }
    /* rebuild: nodes in order, random priorities, a Cartesian tree by its
     * right spine */
    live_clear(z);
    if (n > z->cap_pool) {
        live_node *p = realloc(z->pool, n * sizeof *p);
        if (!p)
            return vmp_validate__oom(v);
        z->pool = p;
        z->cap_pool = (uint32_t)n;
    }
    k = 0;
    for (i = 0; i < n; i++) {
        uint32_t node = (uint32_t)i + 1, last = 0;
        NODE(z, node) = v->scratch[i];
        NODE(z, node).left = NODE(z, node).right = 0;
        NODE(z, node).prio = treap_prio() | 1;
        while (k && NODE(z, stack[k - 1]).prio < NODE(z, node).prio)
            last = stack[--k];
        NODE(z, node).left = last;
        if (k)
            NODE(z, stack[k - 1]).right = node;
        stack[k++] = node;
    }
    z->n_pool = (uint32_t)n;
    z->root = k ? stack[0] : 0;
    return 0;
}

int vmp_validate__check_compaction(vstate *v, const vmp_rec_code_compaction *cc)
{
    size_t i;
    zone_state *z;
    if (!vmp_validate__idmap_find(&v->zones, cc->zone)) /* spec R-ID-1 */
        return vmp_validate__fail(v, "R-ID-1", "zone %llu is not defined before",
                                  (unsigned long long)cc->zone);
    if (vmp_validate__change_generation(v, cc->generation) < 0)
        return -1;
    z = vmp_validate__zone_of(v, cc->zone);
    if (cc->n_moves + cc->n_frees >= 64) {
        int rc = batch_compaction(v, z, cc);
        if (rc <= 0)
            return rc;
    }
    /* Validate every id first, then free, then move: the result must hold
     * together, whatever order the moves are listed in. */
    for (i = 0; i < cc->n_frees; i++) { /* spec R-CODE-2 */
        code_slot *c = vmp_validate__live_code(v, cc->frees[i], "R-CODE-2");
        if (!c)
            return -1;
        vmp_validate__live_remove(vmp_validate__zone_of(v, c->zone), c);
        c->freed = 1;
    }
    for (i = 0; i < cc->n_moves; i++) { /* spec R-CODE-2 */
        code_slot *c = vmp_validate__live_code(v, cc->moves[2 * i], "R-CODE-2");
        if (!c)
            return -1;
        vmp_validate__live_remove(vmp_validate__zone_of(v, c->zone), c);
    }
    for (i = 0; i < cc->n_moves; i++) {
        code_slot *c = &v->code_v[*vmp_validate__idmap_find(&v->codes, cc->moves[2 * i])];
        c->start = cc->moves[2 * i + 1];
        if (vmp_validate__live_insert(
                v, vmp_validate__zone_of(v, c->zone) ? vmp_validate__zone_of(v, c->zone) : z, c) <
            0)
            return -1;
    }
    return 0;
}

/* live_each() callback of a snapshot: free the objects it does not list. */
static int free_unlisted(vstate *v, uint64_t id)
{
    if (!vmp_validate__idmap_find(v->listed, id))
        v->code_v[*vmp_validate__idmap_find(&v->codes, id)].freed = 1;
    return 0;
}

int vmp_validate__check_snapshot(vstate *v, const vmp_rec_code_snapshot *cs)
{
    idmap listed = {0};
    zone_state *z;
    size_t i;
    int rc = 0;
    if (!vmp_validate__idmap_find(&v->zones, cs->zone)) /* spec R-ID-1 */
        return vmp_validate__fail(v, "R-ID-1", "zone %llu is not defined before",
                                  (unsigned long long)cs->zone);
    if (vmp_validate__change_generation(v, cs->generation) < 0)
        return -1;
    z = vmp_validate__zone_of(v, cs->zone);
    for (i = 0; i < cs->n && rc == 0; i++) { /* spec R-SNAP-1, R-CODE-2 */
        uint64_t id = cs->entries[2 * i];
        code_slot *c = vmp_validate__live_code(v, id, "R-SNAP-1");
        if (!c)
            rc = -1;
        else if (!vmp_validate__idmap_find(&listed, id) &&
                 vmp_validate__idmap_put(&listed, id, 0) < 0)
            rc = vmp_validate__oom(v);
    }
    if (rc == 0) {
        /* Objects of the zone that are not listed are freed at this generation. */
        v->listed = &listed;
        rc = live_each(v, z, free_unlisted);
        v->listed = NULL;
        for (i = 0; i < v->n_code; i++) {
            code_slot *c = &v->code_v[i];
            if (c->zone == cs->zone && c->size == 0 && !vmp_validate__idmap_find(&listed, c->id))
                c->freed = 1;
        }
        live_clear(z);
        for (i = 0; i < cs->n && rc == 0; i++) {
            code_slot *c = &v->code_v[*vmp_validate__idmap_find(&v->codes, cs->entries[2 * i])];
            if (c->zone != cs->zone)
                vmp_validate__live_remove(vmp_validate__zone_of(v, c->zone), c);
            c->zone = cs->zone;
            c->start = cs->entries[2 * i + 1];
            rc = vmp_validate__live_insert(v, z, c);
        }
    }
    vmp_validate__idmap_free(&listed);
    return rc;
}

/* spec R-ID-2 (a SHOULD, so a note, not a failure): function `fn`, named
 * by the current record, has no FUNCTION record before it. */
