/* SPDX-License-Identifier: MIT
 *
 * vmp_validate.c - the streaming validator: checks the rules of spec.md §5
 * (ids, generations, code objects, samples, END) on top of what the reader
 * already enforces (§3, §4, §8).
 *
 * Outline: one pass over the records.  Every id space the rules speak of is a
 * hash set (or a map to a code-object slot); each zone keeps its live code
 * objects in a treap ordered by start, so an add or move is checked for
 * overlap against its two neighbours (R-GEN-4).  Nothing is kept per sample.
 *
 * Time: O(log n) expected per code object added, freed or moved (n: the
 * zone's live objects), so a compaction of m moves costs O(m log n); a
 * snapshot costs O(its entries x log n + the zone's objects + all code
 * objects of size 0); every other record O(its size).  In all, proportional
 * to the records' contents times log n, never to records x live objects.
 */
#include "vmp_validate.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- An open-addressing hash map uint64 -> uint64 -------------------------- */

typedef struct idmap {
    uint64_t *keys;
    uint64_t *vals;
    unsigned char *used;
    size_t cap; /* power of 2, or 0 */
    size_t n;
} idmap;

static size_t idmap_slot(uint64_t key, size_t cap)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return (size_t)(key & (uint64_t)(cap - 1));
}

static uint64_t *idmap_find(const idmap *m, uint64_t key)
{
    size_t i;
    if (m->cap == 0)
        return NULL;
    for (i = idmap_slot(key, m->cap); m->used[i]; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == key)
            return &m->vals[i];
    }
    return NULL;
}

static int idmap_grow(idmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64, i;
    idmap g = {calloc(cap, sizeof(uint64_t)), calloc(cap, sizeof(uint64_t)), calloc(cap, 1), cap,
               0};
    if (!g.keys || !g.vals || !g.used) {
        free(g.keys);
        free(g.vals);
        free(g.used);
        return -1;
    }
    for (i = 0; i < m->cap; i++) {
        if (m->used[i]) {
            size_t j = idmap_slot(m->keys[i], cap);
            while (g.used[j])
                j = (j + 1) & (cap - 1);
            g.used[j] = 1;
            g.keys[j] = m->keys[i];
            g.vals[j] = m->vals[i];
            g.n++;
        }
    }
    free(m->keys);
    free(m->vals);
    free(m->used);
    *m = g;
    return 0;
}

/* Insert key (which must be absent).  Returns 0, or -1 when out of memory. */
static int idmap_put(idmap *m, uint64_t key, uint64_t val)
{
    size_t i;
    if ((m->n + 1) * 4 > m->cap * 3 && idmap_grow(m) < 0)
        return -1;
    i = idmap_slot(key, m->cap);
    while (m->used[i])
        i = (i + 1) & (m->cap - 1);
    m->used[i] = 1;
    m->keys[i] = key;
    m->vals[i] = val;
    m->n++;
    return 0;
}

static void idmap_free(idmap *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    memset(m, 0, sizeof *m);
}

/* ---- Code objects and zones -------------------------------------------------- */

typedef struct code_slot {
    uint64_t id, zone, start, size;
    uint64_t stamp; /* the compaction that last listed it (batch_compaction()) */
    int freed;
    int own_map; /* its CODE_OBJECT has a pc_map or inline records */
} code_slot;

/* A zone's live code objects of non-zero size, as a treap ordered by start
 * (starts are distinct: equal starts overlap, R-GEN-4).  Nodes live in a pool
 * and link by index + 1; priorities are random, so the expected depth is
 * O(log n) whatever order a file adds objects in. */
typedef struct live_node {
    uint64_t start, end, id;
    uint32_t left, right; /* index + 1, 0 == none */
    uint32_t prio;
    uint32_t slot; /* index of its code_slot */
} live_node;

typedef struct zone_state {
    live_node *pool;
    uint32_t n_pool, cap_pool;
    uint32_t root, free_list; /* index + 1; free nodes link through `left` */
} zone_state;

typedef struct vstate {
    vmp_validate_report *rep;
    unsigned major;                     /* the file's format_major */
    const vmp_record *rec;              /* the record being checked */
    idmap nodes, zones, modules, codes; /* zones: id -> index into zone_v */
    idmap fns;                          /* FUNCTION ids defined, or named late (val 1) */
    code_slot *code_v;
    size_t n_code, cap_code;
    zone_state *zone_v;
    size_t n_zone, cap_zone;
    int have_change;
    uint64_t last_gen; /* generation of the latest change record */
    uint64_t max_sample_gen;
    uint64_t max_sample_gen_chunk, max_sample_gen_offset, max_sample_gen_record;
    uint64_t samples, failed;
    uint64_t kind_samples; /* KIND_SAMPLE records (spec R-KND-2) */
    uint64_t n_kinds;      /* the header's sample kinds */
    int seen_header, seen_end;
    int nomem;
    const idmap *listed; /* the ids a snapshot lists, while it is checked */
    uint64_t stamp;      /* compactions checked */
    live_node *scratch;  /* batch_compaction(): the zone's objects, sorted */
    uint32_t *spine;     /* ... and the right spine of the treap it builds */
    size_t cap_scratch;
} vstate;

static const char *rec_name(const vmp_record *rec)
{
    /* a sample of a block is located at its block (spec R-BLK-1) */
    return vmp_record_type_name(rec->raw_type == VMP_REC_SAMPLE_BLOCK ? VMP_REC_SAMPLE_BLOCK
                                                                      : rec->type);
}

/* Record the first problem, located at the current record; returns -1. */
static int fail(vstate *v, const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(vstate *v, const char *rule, const char *fmt, ...)
{
    vmp_validate_report *rep = v->rep;
    va_list ap;
    int n;
    rep->status = VMP_ERR_CORRUPT;
    rep->rule = rule;
    rep->offset = v->rec->chunk_offset;
    rep->chunk_index = v->rec->chunk_index;
    rep->record_offset = v->rec->record_offset;
    n = snprintf(rep->message, sizeof rep->message,
                 "chunk %llu @%llu %s: ", (unsigned long long)v->rec->chunk_index,
                 (unsigned long long)v->rec->record_offset, rec_name(v->rec));
    if (n < 0)
        n = 0;
    if ((size_t)n < sizeof rep->message) {
        va_start(ap, fmt);
        vsnprintf(rep->message + n, sizeof rep->message - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int oom(vstate *v)
{
    v->nomem = 1;
    v->rep->status = VMP_ERR_NOMEM;
    v->rep->rule = "";
    snprintf(v->rep->message, sizeof v->rep->message, "out of memory");
    return -1;
}

static uint64_t end_of(uint64_t start, uint64_t size)
{
    return (size > UINT64_MAX - start) ? UINT64_MAX : start + size;
}

static zone_state *zone_of(vstate *v, uint64_t zone)
{
    uint64_t *ix;
    if (zone == 0)
        return NULL;
    ix = idmap_find(&v->zones, zone);
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

static void live_remove(zone_state *z, const code_slot *c)
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
static int overlap(
    vstate *v, uint64_t id, uint64_t start, uint64_t end, uint64_t zone, const live_node *o)
{
    return fail(v, "R-GEN-4",
                "code object %llu [0x%llx, 0x%llx) overlaps code object %llu "
                "[0x%llx, 0x%llx) in zone %llu at generation %llu",
                (unsigned long long)id, (unsigned long long)start, (unsigned long long)end,
                (unsigned long long)o->id, (unsigned long long)o->start, (unsigned long long)o->end,
                (unsigned long long)zone, (unsigned long long)v->last_gen);
}

/* Insert `c` into its zone's live objects; R-GEN-4 against the neighbours. */
static int live_insert(vstate *v, zone_state *z, const code_slot *c)
{
    uint64_t start = c->start, end = end_of(c->start, c->size);
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
                return oom(v);
            p = realloc(z->pool, (size_t)cap * sizeof *p);
            if (!p)
                return oom(v);
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
static code_slot *live_code(vstate *v, uint64_t id, const char *rule)
{
    uint64_t *ix = idmap_find(&v->codes, id);
    if (!ix) {
        fail(v, rule, "code object %llu is not defined by an earlier CODE_OBJECT",
             (unsigned long long)id);
        return NULL;
    }
    if (v->code_v[*ix].freed) {
        fail(v, "R-CODE-2", "code object %llu was freed before", (unsigned long long)id);
        return NULL;
    }
    return &v->code_v[*ix];
}

/* spec R-GEN-1: every change record's generation exceeds the last one. */
static int change_generation(vstate *v, uint64_t gen)
{
    if (v->have_change && gen <= v->last_gen)
        return fail(v, "R-GEN-1",
                    "generation %llu does not exceed the previous change's generation %llu",
                    (unsigned long long)gen, (unsigned long long)v->last_gen);
    v->have_change = 1;
    v->last_gen = gen;
    return 0;
}

static int define_id(vstate *v, idmap *m, uint64_t id, uint64_t val, const char *what)
{
    if (id == 0) /* spec: ids are at least 1 */
        return fail(v, "R-ID-1", "%s id 0 (ids are at least 1)", what);
    if (idmap_find(m, id)) /* spec R-ID-1 */
        return fail(v, "R-ID-1", "%s %llu is defined twice", what, (unsigned long long)id);
    if (idmap_put(m, id, val) < 0)
        return oom(v);
    return 0;
}

/* spec R-CODE-1: the pc_map of code `id` (of `size` bytes) stays inside it */
static int check_pc_map(vstate *v, uint64_t id, const uint64_t *pc_map, size_t n, uint64_t size)
{
    for (size_t i = 0; i < n; i++) {
        if (pc_map[2 * i] >= size)
            return fail(v, "R-CODE-1",
                        "code object %llu: pc_map offset %llu is not less than its size %llu",
                        (unsigned long long)id, (unsigned long long)pc_map[2 * i],
                        (unsigned long long)size);
    }
    return 0;
}

/* spec R-CODE-3: a CODE_MAP names a code object defined before it without
 * a map of its own; more than one CODE_MAP per code is accepted */
static int check_code_map(vstate *v, const vmp_rec_code_map *cm)
{
    uint64_t *ix = idmap_find(&v->codes, cm->id);
    if (!ix)
        return fail(v, "R-CODE-3", "CODE_MAP names code object %llu, which is not defined before",
                    (unsigned long long)cm->id);
    if (v->code_v[*ix].own_map)
        return fail(v, "R-CODE-3", "CODE_MAP for code object %llu, whose CODE_OBJECT has a map",
                    (unsigned long long)cm->id);
    return check_pc_map(v, cm->id, cm->pc_map, cm->pc_map_len, v->code_v[*ix].size);
}

static int check_code_object(vstate *v, const vmp_rec_code_object *co)
{
    code_slot *c;
    if (co->zone != 0 && !idmap_find(&v->zones, co->zone)) /* spec R-ID-1 */
        return fail(v, "R-ID-1", "code object %llu names zone %llu, which is not defined before",
                    (unsigned long long)co->id, (unsigned long long)co->zone);
    if (check_pc_map(v, co->id, co->pc_map, co->pc_map_len, co->size) < 0)
        return -1;
    if (co->generation > (v->have_change ? v->last_gen : 0)) /* spec R-GEN-2 */
        return fail(v, "R-GEN-2",
                    "code object %llu: generation %llu exceeds the latest change's "
                    "generation %llu",
                    (unsigned long long)co->id, (unsigned long long)co->generation,
                    (unsigned long long)(v->have_change ? v->last_gen : 0));
    if (v->n_code == v->cap_code) {
        size_t cap = v->cap_code ? v->cap_code * 2 : 64;
        code_slot *p = realloc(v->code_v, cap * sizeof *p);
        if (!p)
            return oom(v);
        v->code_v = p;
        v->cap_code = cap;
    }
    if (define_id(v, &v->codes, co->id, (uint64_t)v->n_code, "code object") < 0)
        return -1;
    c = &v->code_v[v->n_code++];
    c->id = co->id;
    c->zone = co->zone;
    c->start = co->start;
    c->size = co->size;
    c->stamp = 0; /* no compaction has listed it (batch_compaction()) */
    c->freed = 0;
    c->own_map = co->pc_map_len > 0 || co->n_inlines > 0;
    return live_insert(v, zone_of(v, c->zone), c);
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
        code_slot *c = live_code(v, id, "R-CODE-2"); /* spec R-CODE-2 */
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
            return oom(v);
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
        code_slot *c = &v->code_v[*idmap_find(&v->codes, cc->moves[2 * i])];
        live_node *e = &out[i];
        c->start = cc->moves[2 * i + 1];
        e->start = c->start;
        e->end = end_of(c->start, c->size);
        e->id = c->id;
        e->slot = (uint32_t)(c - v->code_v);
        e->prio = c->size != 0; /* objects of size 0 are not kept */
        if (i > 0 && e->start < out[i - 1].start)
            m = 1;
    }
    if (m)
        qsort(out, cc->n_moves, sizeof *out, cmp_live_start);
    for (i = 0; i < cc->n_frees; i++)
        v->code_v[*idmap_find(&v->codes, cc->frees[i])].freed = 1;
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
            return oom(v);
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

static int check_compaction(vstate *v, const vmp_rec_code_compaction *cc)
{
    size_t i;
    zone_state *z;
    if (!idmap_find(&v->zones, cc->zone)) /* spec R-ID-1 */
        return fail(v, "R-ID-1", "zone %llu is not defined before", (unsigned long long)cc->zone);
    if (change_generation(v, cc->generation) < 0)
        return -1;
    z = zone_of(v, cc->zone);
    if (cc->n_moves + cc->n_frees >= 64) {
        int rc = batch_compaction(v, z, cc);
        if (rc <= 0)
            return rc;
    }
    /* Validate every id first, then free, then move: the result must hold
     * together, whatever order the moves are listed in. */
    for (i = 0; i < cc->n_frees; i++) { /* spec R-CODE-2 */
        code_slot *c = live_code(v, cc->frees[i], "R-CODE-2");
        if (!c)
            return -1;
        live_remove(zone_of(v, c->zone), c);
        c->freed = 1;
    }
    for (i = 0; i < cc->n_moves; i++) { /* spec R-CODE-2 */
        code_slot *c = live_code(v, cc->moves[2 * i], "R-CODE-2");
        if (!c)
            return -1;
        live_remove(zone_of(v, c->zone), c);
    }
    for (i = 0; i < cc->n_moves; i++) {
        code_slot *c = &v->code_v[*idmap_find(&v->codes, cc->moves[2 * i])];
        c->start = cc->moves[2 * i + 1];
        if (live_insert(v, zone_of(v, c->zone) ? zone_of(v, c->zone) : z, c) < 0)
            return -1;
    }
    return 0;
}

/* live_each() callback of a snapshot: free the objects it does not list. */
static int free_unlisted(vstate *v, uint64_t id)
{
    if (!idmap_find(v->listed, id))
        v->code_v[*idmap_find(&v->codes, id)].freed = 1;
    return 0;
}

static int check_snapshot(vstate *v, const vmp_rec_code_snapshot *cs)
{
    idmap listed = {0};
    zone_state *z;
    size_t i;
    int rc = 0;
    if (!idmap_find(&v->zones, cs->zone)) /* spec R-ID-1 */
        return fail(v, "R-ID-1", "zone %llu is not defined before", (unsigned long long)cs->zone);
    if (change_generation(v, cs->generation) < 0)
        return -1;
    z = zone_of(v, cs->zone);
    for (i = 0; i < cs->n && rc == 0; i++) { /* spec R-SNAP-1, R-CODE-2 */
        uint64_t id = cs->entries[2 * i];
        code_slot *c = live_code(v, id, "R-SNAP-1");
        if (!c)
            rc = -1;
        else if (!idmap_find(&listed, id) && idmap_put(&listed, id, 0) < 0)
            rc = oom(v);
    }
    if (rc == 0) {
        /* Objects of the zone that are not listed are freed at this generation. */
        v->listed = &listed;
        rc = live_each(v, z, free_unlisted);
        v->listed = NULL;
        for (i = 0; i < v->n_code; i++) {
            code_slot *c = &v->code_v[i];
            if (c->zone == cs->zone && c->size == 0 && !idmap_find(&listed, c->id))
                c->freed = 1;
        }
        live_clear(z);
        for (i = 0; i < cs->n && rc == 0; i++) {
            code_slot *c = &v->code_v[*idmap_find(&v->codes, cs->entries[2 * i])];
            if (c->zone != cs->zone)
                live_remove(zone_of(v, c->zone), c);
            c->zone = cs->zone;
            c->start = cs->entries[2 * i + 1];
            rc = live_insert(v, z, c);
        }
    }
    idmap_free(&listed);
    return rc;
}

/* spec R-ID-2 (a SHOULD, so a note, not a failure): function `fn`, named
 * by the current record, has no FUNCTION record before it. */
static int named_function(vstate *v, uint64_t fn)
{
    vmp_validate_report *rep = v->rep;
    if (fn == 0 || idmap_find(&v->fns, fn))
        return 0;
    if (idmap_put(&v->fns, fn, 1) < 0)
        return oom(v);
    if (rep->late_functions++ == 0)
        snprintf(rep->late_message, sizeof rep->late_message,
                 "chunk %llu @%llu %s names function %llu before its FUNCTION record",
                 (unsigned long long)v->rec->chunk_index, (unsigned long long)v->rec->record_offset,
                 rec_name(v->rec), (unsigned long long)fn);
    return 0;
}

static int named_inline_functions(vstate *v, const vmp_rec_inline *in, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < in[i].depth; k++)
            if (named_function(v, in[i].frames[2 * k]) < 0)
                return -1;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    const vmp_str *x = *(const vmp_str *const *)a, *y = *(const vmp_str *const *)b;
    int c = memcmp(x->s, y->s, x->len < y->len ? x->len : y->len);
    return c != 0 ? c : (x->len > y->len) - (x->len < y->len);
}

/* spec R-KND-1: kinds named, not "cpu", none twice (sorted: a header of
 * many kinds costs n log n) */
static int check_kinds(vstate *v, const vmp_rec_header *h)
{
    const vmp_str **sorted;
    size_t i, n = h->n_sample_kinds;
    int rc = 0;
    v->n_kinds = n;
    for (i = 0; i < n; i++) {
        const vmp_str *k = &h->sample_kinds[i];
        if (k->len == 0)
            return fail(v, "R-KND-1", "sample kind %zu has an empty name", i + 1);
        if (k->len == 3 && memcmp(k->s, "cpu", 3) == 0)
            return fail(v, "R-KND-1", "sample kind %zu is named \"cpu\", the name of kind 0",
                        i + 1);
    }
    if (n < 2)
        return 0;
    sorted = malloc(n * sizeof *sorted);
    if (!sorted)
        return oom(v);
    for (i = 0; i < n; i++)
        sorted[i] = &h->sample_kinds[i];
    qsort(sorted, n, sizeof *sorted, cmp_str);
    for (i = 1; i < n && rc == 0; i++)
        if (cmp_str(&sorted[i - 1], &sorted[i]) == 0)
            rc = fail(v, "R-KND-1", "two sample kinds are named \"%.*s\"",
                      (int)(sorted[i]->len > 64 ? 64 : sorted[i]->len), sorted[i]->s);
    free(sorted);
    return rc;
}

static int check_record(vstate *v, const vmp_record *rec)
{
    v->rec = rec;
    if (v->seen_end) /* spec R-END-2 */
        return fail(v, "R-END-2", "record after the END record (only a seek table may follow)");
    if (!v->seen_header) { /* spec R-HDR-5 */
        if (rec->type != VMP_REC_HEADER || rec->chunk_index != 0)
            return fail(v, "R-HDR-5", "the first record of the file is not a HEADER");
        v->seen_header = 1;
        return check_kinds(v, &rec->u.header);
    }
    switch (rec->type) {
    case VMP_REC_HEADER: /* spec R-HDR-5 */
        return fail(v, "R-HDR-5", "second HEADER record (exactly one per file)");
    case VMP_REC_END: {
        const vmp_rec_end *e = &rec->u.end;
        uint64_t final_gen = v->have_change ? v->last_gen : 0;
        v->seen_end = 1;
        if (e->samples != v->samples) /* spec R-END-1 */
            return fail(v, "R-END-1", "samples = %llu, but the file holds %llu samples",
                        (unsigned long long)e->samples, (unsigned long long)v->samples);
        if (e->failed != v->failed) /* spec R-END-1 */
            return fail(v, "R-END-1", "failed = %llu, but the file holds %llu FAILED_SAMPLEs",
                        (unsigned long long)e->failed, (unsigned long long)v->failed);
        if (e->kind_samples != v->kind_samples) /* spec R-END-1 */
            return fail(v, "R-END-1",
                        "kind_samples = %llu, but the file holds %llu KIND_SAMPLE records",
                        (unsigned long long)e->kind_samples, (unsigned long long)v->kind_samples);
        if (e->chunks != rec->chunk_index) /* spec R-END-1 */
            return fail(v, "R-END-1", "chunks = %llu, but %llu chunks precede the END's chunk",
                        (unsigned long long)e->chunks, (unsigned long long)rec->chunk_index);
        if (v->samples > 0 && v->max_sample_gen > final_gen) { /* spec R-SMP-3 */
            vmp_record at = *rec;
            at.type = VMP_REC_SAMPLE;
            at.chunk_index = v->max_sample_gen_chunk;
            at.chunk_offset = v->max_sample_gen_offset;
            at.record_offset = v->max_sample_gen_record;
            v->rec = &at;
            fail(v, "R-SMP-3", "generation %llu exceeds the final generation %llu",
                 (unsigned long long)v->max_sample_gen, (unsigned long long)final_gen);
            v->rec = rec;
            return -1;
        }
        return 0;
    }
    case VMP_REC_MODULE:
        return define_id(v, &v->modules, rec->u.module.id, 0, "module");
    case VMP_REC_MODULE_SYMBOLS:
        if (!idmap_find(&v->modules, rec->u.module_symbols.module)) /* spec R-ID-1 */
            return fail(v, "R-ID-1", "module %llu is not defined before",
                        (unsigned long long)rec->u.module_symbols.module);
        return 0;
    case VMP_REC_CODE_ZONE:
        if (v->n_zone == v->cap_zone) {
            size_t cap = v->cap_zone ? v->cap_zone * 2 : 8;
            zone_state *p = realloc(v->zone_v, cap * sizeof *p);
            if (!p)
                return oom(v);
            v->zone_v = p;
            v->cap_zone = cap;
        }
        if (define_id(v, &v->zones, rec->u.code_zone.id, (uint64_t)v->n_zone, "zone") < 0)
            return -1;
        memset(&v->zone_v[v->n_zone++], 0, sizeof v->zone_v[0]);
        return 0;
    case VMP_REC_FUNCTION: /* spec R-ID-5: a second definition is accepted */
        if (!idmap_find(&v->fns, rec->u.function.id) &&
            idmap_put(&v->fns, rec->u.function.id, 0) < 0)
            return oom(v);
        return 0;
    case VMP_REC_CODE_OBJECT:
        if (named_inline_functions(v, rec->u.code_object.inlines, rec->u.code_object.n_inlines) < 0)
            return -1;
        return check_code_object(v, &rec->u.code_object);
    case VMP_REC_CODE_MAP:
        if (named_inline_functions(v, rec->u.code_map.inlines, rec->u.code_map.n_inlines) < 0)
            return -1;
        return check_code_map(v, &rec->u.code_map);
    case VMP_REC_CODE_SNAPSHOT:
        return check_snapshot(v, &rec->u.code_snapshot);
    case VMP_REC_CODE_COMPACTION:
        return check_compaction(v, &rec->u.code_compaction);
    case VMP_REC_CODE_FREE: {
        code_slot *c;
        if (change_generation(v, rec->u.code_free.generation) < 0)
            return -1;
        c = live_code(v, rec->u.code_free.id, "R-CODE-2");
        if (!c)
            return -1;
        live_remove(zone_of(v, c->zone), c);
        c->freed = 1;
        return 0;
    }
    case VMP_REC_CODE_MOVE: {
        code_slot *c;
        if (change_generation(v, rec->u.code_move.generation) < 0)
            return -1;
        c = live_code(v, rec->u.code_move.id, "R-CODE-2");
        if (!c)
            return -1;
        live_remove(zone_of(v, c->zone), c);
        c->start = rec->u.code_move.new_start;
        return live_insert(v, zone_of(v, c->zone), c);
    }
    case VMP_REC_STACK_NODE: {
        const vmp_rec_stack_node *sn = &rec->u.stack_node;
        if (sn->is_function && named_function(v, sn->function) < 0)
            return -1;
        if (sn->parent != 0 && !idmap_find(&v->nodes, sn->parent)) /* spec R-ID-1 */
            return fail(v, "R-ID-1", "node %llu: parent %llu is not defined before",
                        (unsigned long long)sn->id, (unsigned long long)sn->parent);
        return define_id(v, &v->nodes, sn->id, 0, "stack node");
    }
    case VMP_REC_KIND_SAMPLE: {
        const vmp_rec_sample *s = &rec->u.sample;
        v->kind_samples++;
        if (s->kind == 0 || s->kind > v->n_kinds) /* spec R-KND-2 */
            return fail(v, "R-KND-2", "kind %llu is not a kind the HEADER declares (%llu kinds)",
                        (unsigned long long)s->kind, (unsigned long long)v->n_kinds);
        if (s->stack != 0 && !idmap_find(&v->nodes, s->stack)) /* spec R-ID-1 */
            return fail(v, "R-ID-1", "stack node %llu is not defined before",
                        (unsigned long long)s->stack);
        if (s->generation > (v->have_change ? v->last_gen : 0)) /* spec R-SMP-3 */
            return fail(v, "R-SMP-3",
                        "generation %llu exceeds the generation %llu of the latest change "
                        "record before the sample",
                        (unsigned long long)s->generation,
                        (unsigned long long)(v->have_change ? v->last_gen : 0));
        return 0;
    }
    case VMP_REC_SAMPLE:
    case VMP_REC_FAILED_SAMPLE: {
        const vmp_rec_sample *s = &rec->u.sample;
        v->samples++;
        if (rec->raw_type == VMP_REC_SAMPLE_BLOCK && v->major < 2) /* spec R-BLK-4 */
            return fail(v, "R-BLK-4", "a SAMPLE_BLOCK in a file of format %u.x (blocks are 2.0)",
                        v->major);
        if (rec->type == VMP_REC_FAILED_SAMPLE) {
            v->failed++;
        } else {
            if (s->stack != 0 && !idmap_find(&v->nodes, s->stack)) /* spec R-ID-1 */
                return fail(v, "R-ID-1", "stack node %llu is not defined before",
                            (unsigned long long)s->stack);
            if (s->blame != 0 && !idmap_find(&v->codes, s->blame)) /* spec R-ID-1 */
                return fail(v, "R-ID-1",
                            "blame names code object %llu, which is not defined "
                            "before",
                            (unsigned long long)s->blame);
        }
        /* spec R-SMP-3: after the change record that made its generation */
        if (s->generation > (v->have_change ? v->last_gen : 0))
            return fail(v, "R-SMP-3",
                        "generation %llu exceeds the generation %llu of the latest change "
                        "record before the sample",
                        (unsigned long long)s->generation,
                        (unsigned long long)(v->have_change ? v->last_gen : 0));
        if (v->samples == 1 || s->generation > v->max_sample_gen) {
            v->max_sample_gen = s->generation;
            v->max_sample_gen_chunk = rec->chunk_index;
            v->max_sample_gen_offset = rec->chunk_offset;
            v->max_sample_gen_record = rec->record_offset;
        }
        return 0;
    }
    default: /* THREAD, FUNCTION, EVENT, COUNTER, unknown: nothing to check */
        return 0;
    }
}

vmp_status vmp_validate(vmp_validate_report *out, vmp_reader *r)
{
    vstate v;
    vmp_record rec;
    vmp_reader_info info;
    vmp_status st;
    size_t i;
    if (!out)
        return VMP_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    out->rule = "";
    if (!r) {
        out->status = VMP_ERR_INVALID_ARG;
        snprintf(out->message, sizeof out->message, "no reader");
        return out->status;
    }
    memset(&v, 0, sizeof v);
    v.rep = out;
    vmp_reader_get_info(r, &info);
    v.major = info.format_major;
    while ((st = vmp_reader_next(r, &rec)) == VMP_OK) {
        out->records++;
        if (rec.type == VMP_REC_SAMPLE || rec.type == VMP_REC_FAILED_SAMPLE)
            out->samples++;
        if (check_record(&v, &rec) < 0)
            break;
        if (rec.raw_type == VMP_REC_SAMPLE_BLOCK) { /* spec R-BLK-5 */
            vmp_reader_get_info(r, &info);
            if (info.undefined_contexts > 0) {
                fail(&v, "R-BLK-5", "a sample names a sample context that is not defined before");
                break;
            }
        }
    }
    vmp_reader_get_info(r, &info);
    out->chunks = info.chunks;
    out->seek_table = info.seek_table;
    out->complete = v.seen_end;
    if (out->status == VMP_OK && st < 0) {
        /* The reader's rules: framing, checksums, CBOR, types, limits. */
        out->status = st;
        out->from_reader = 1;
        out->offset = vmp_reader_offset(r);
        out->chunk_index = info.chunks;
        out->rule = vmp_reader_errrule(r); /* set where the error was found */
        snprintf(out->message, sizeof out->message, "%s", vmp_reader_errmsg(r));
    } else if (out->status == VMP_OK && !v.seen_end) {
        out->status = VMP_ERR_TRUNCATED;
        out->rule = "R-CHK-3";
        out->offset = info.bytes_consumed;
        out->chunk_index = info.chunks;
        if (!v.seen_header)
            snprintf(out->message, sizeof out->message,
                     "the file holds no records (no HEADER record)");
        else
            snprintf(out->message, sizeof out->message,
                     "the file ends without an END record after %llu chunk%s: it was not "
                     "closed cleanly",
                     (unsigned long long)info.chunks, info.chunks == 1 ? "" : "s");
    }
    for (i = 0; i < v.n_zone; i++)
        free(v.zone_v[i].pool);
    free(v.scratch);
    free(v.spine);
    free(v.zone_v);
    free(v.code_v);
    idmap_free(&v.nodes);
    idmap_free(&v.zones);
    idmap_free(&v.modules);
    idmap_free(&v.codes);
    idmap_free(&v.fns);
    return out->status;
}
