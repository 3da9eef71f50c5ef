/* SPDX-License-Identifier: MIT
 *
 * vmp_resolve.c - exact resolution of samples through the code as it stood
 * at their generation, and the records fed to an analysis (spec.md §5
 * "Generations" R-GEN-3, "Resolution of a pc", §5.11, §5.12).  The tables it
 * resolves through are kept by vmp_functions.c, vmp_code_history.c and
 * vmp_symbols.c.
 *
 * A sample names its innermost stack node.  (node, generation) pairs are
 * resolved once into an interned tree of resolved frames and cached, so a
 * repeated stack costs one hash lookup.  A record that changes what a
 * resolved address or function shows makes them forgotten (vmp_forget.c): a
 * sample resolves with the records before it.
 */
#include <stdlib.h>
#include <string.h>

#include "vmp_analysis_int.h"
#include "vmp_search.h"

#define LEAF_BIT (1ull << 63)

/* ---- resolution ---------------------------------------------------------------------- */

static uint32_t resolve_addr(vmp_analysis *a, uint64_t addr, uint64_t gen)
{
    int failed;
    const span *sp = vmp_code_history__span_at(a, addr, gen, &failed);
    vmp_forget__touch(a, addr);
    a->hit_obj = 0;
    if (failed)
        return 0;
    if (sp) {
        code_obj *o = &a->codes[sp->obj];
        a->hit_obj = (size_t)sp->obj + 1;
        a->hit_off = addr - sp->start;
        uint32_t fn = vmp_functions__code_afunc(a, o);
        uint64_t off = addr - sp->start;
        size_t lo = vmp_upper_bound(o->pc_map, o->n_map, 2 * sizeof *o->pc_map, 0, off);
        uint64_t first, last;
        if (!fn)
            return 0;
        if (lo == 0)
            return vmp_analysis__intern_frame(a, fn, 0, 0, 0);
        first = o->pc_map[2 * (lo - 1) + 1];
        if (lo < o->n_map) {
            uint64_t next = o->pc_map[2 * lo + 1];
            last = next > first ? next - 1 : first;
        } else {
            /* the code object's own function: several functions may
             * share a name (and so an afunction) */
            const fdef *d = vmp_functions__find(a, o->function);
            uint64_t bcs = d ? d->bytecode_size : 0;
            last = bcs && bcs - 1 >= first ? bcs - 1 : first;
        }
        if (first > UINT32_MAX)
            first = UINT32_MAX;
        if (last > UINT32_MAX)
            last = UINT32_MAX;
        return vmp_analysis__intern_frame(a, fn, 1, (uint32_t)first, (uint32_t)last);
    }
    return vmp_symbols__frame_at(a, addr);
}

vmp_status vmp_analysis_resolve_pc(vmp_analysis *a, uint32_t *frame_out, uint64_t pc,
                                   uint64_t generation, int return_address)
{
    uint32_t f;
    if (!a || !frame_out)
        return VMP_ERR_INVALID_ARG;
    f = resolve_addr(a, return_address && pc ? pc - 1 : pc, generation);
    if (!f)
        return VMP_ERR_NOMEM;
    *frame_out = f;
    return VMP_OK;
}

/* Push the frames of machine address `addr` (already adjusted for return
 * addresses) at `gen` onto stack `base`: its code object or symbol, then,
 * with VMP_ANALYSIS_INLINES, the functions inlined at that address, outer
 * to inner.  Returns the new innermost node, 0 on no memory. */
static uint32_t push_addr(vmp_analysis *a, uint32_t base, uint64_t addr, uint64_t gen)
{
    uint32_t fr = resolve_addr(a, addr, gen);
    const uint64_t *rec;
    uint64_t depth, k;
    if (!fr)
        return 0;
    base = vmp_analysis__intern_stack(a, base, fr);
    if (!base || !a->hit_obj || !(a->opts.flags & VMP_ANALYSIS_INLINES))
        return base;
    rec = vmp_code_history__inline_at(&a->codes[a->hit_obj - 1], a->hit_off);
    if (!rec)
        return base;
    depth = rec[1];
    /* the outermost pair is the compiled function itself: already pushed */
    for (k = depth > 1 ? depth - 1 : 0; k > 0 && base; k--) {
        fr = vmp_functions__inlined_frame(a, rec[2 + 2 * (k - 1)], rec[3 + 2 * (k - 1)]);
        base = fr ? vmp_analysis__intern_stack(a, base, fr) : 0;
    }
    return base;
}

/* The innermost frame of a sample that has both a machine pc and a symbolic
 * innermost node `n` (rules in vmp_analyze.h, "A sample's pc and its
 * symbolic innermost frame").  0 on no memory. */
static uint32_t combined_leaf(vmp_analysis *a, const snode *n, uint64_t pc, uint64_t gen)
{
    uint32_t fr = resolve_addr(a, pc, gen);
    const code_obj *o;
    const uint64_t *rec;
    if (!fr)
        return 0;
    if (!a->hit_obj)
        return vmp_functions__symbolic_frame(a, n);
    o = &a->codes[a->hit_obj - 1];
    rec = vmp_code_history__inline_at(o, a->hit_off);
    if (rec && rec[1] >= 2 && vmp_functions__same(a, rec[2], n->value))
        return vmp_functions__inlined_frame(a, n->value, rec[3]);
    if (o->function && vmp_functions__same(a, o->function, n->value))
        return fr; /* the code object's kind, the pc map's range */
    if (strcmp(vmp_analysis__code_kind_name(a, o->kind), "interpreter") == 0)
        return vmp_functions__interpreted_frame(a, n->value, n->has_bcpc, n->bcpc);
    return vmp_functions__symbolic_frame(a, n);
}

/* Index + 1 of node `id`, 0 when undefined. */
static uint32_t node_index(const vmp_analysis *a, uint64_t id)
{
    return vmp_idmap__get(&a->node_ids, id);
}

static vmp_status take_node(vmp_analysis *a, const vmp_rec_stack_node *r)
{
    snode *n;
    uint32_t idx;
    if (r->id == 0 || node_index(a, r->id))
        return VMP_OK; /* R-ID-1 broken; keep the first definition */
    if (a->n_nodes >= a->max_nodes) {
        vmp_analysis__hit_limit(a, "stack-nodes", a->max_nodes, "stack nodes");
        return VMP_ERR_LIMIT;
    }
    if (a->n_nodes >= UINT32_MAX - 1 ||
        vmp_grow__((void **)&a->nodes, &a->cap_nodes, a->n_nodes + 1, sizeof *a->nodes))
        return VMP_ERR_NOMEM;
    idx = (uint32_t)a->n_nodes;
    if (vmp_idmap__put(&a->node_ids, r->id, idx + 1))
        return VMP_ERR_NOMEM;
    {
        uint32_t pi = r->parent ? node_index(a, r->parent) : 0;
        uint32_t pd = pi ? a->nodes[pi - 1].depth : 0;
        n = &a->nodes[a->n_nodes++];
        memset(n, 0, sizeof *n);
        n->depth = pd < UINT32_MAX ? pd + 1 : pd;
    }
    n->parent = r->parent;
    n->is_function = r->is_function;
    n->value = r->is_function ? r->function : r->pc;
    n->has_bcpc = r->has_bcpc;
    n->bcpc = r->bcpc;
    n->memo_epoch[0] = n->memo_epoch[1] = a->epoch - 1; /* no memo yet */
    a->stats.memory_bytes += sizeof *n;
    return VMP_OK;
}

/* The cached resolution of node index `ni` as innermost (leaf) or caller at
 * `gen`, 0 when unknown.  The memo holds the latest generation the node was
 * resolved at (where samples keep coming); older generations, needed only by
 * samples written after a change, live in the (node, generation) hash. */
static uint32_t memo_holds(vmp_analysis *a, uint32_t ni, int leaf, uint64_t gen);

static uint32_t cache_get(vmp_analysis *a, uint32_t ni, uint64_t id, int leaf, uint64_t gen)
{
    const snode *n = &a->nodes[ni];
    if (n->memo_epoch[leaf] == a->epoch && gen >= n->memo_gen[leaf])
        return memo_holds(a, ni, leaf, gen);
    return a->scache.n ? vmp_hmap__get(&a->scache, id | (leaf ? LEAF_BIT : 0), gen) : 0;
}

static int cache_put(vmp_analysis *a, uint32_t ni, uint64_t id, int leaf, uint64_t gen,
                     uint32_t stack)
{
    snode *n = &a->nodes[ni];
    if (n->memo_epoch[leaf] == a->epoch && gen < n->memo_gen[leaf])
        return vmp_hmap__put(&a->scache, id | (leaf ? LEAF_BIT : 0), gen, stack);
    n->memo_epoch[leaf] = a->epoch;
    n->memo_gen[leaf] = n->memo_thru[leaf] = gen;
    n->memo_stamp[leaf] = a->forgets;
    n->memo_stack[leaf] = stack;
    return 0;
}

/* The memo of node index `ni` (as innermost or caller), of this epoch and
 * made at a generation <= `gen`, when it holds at `gen`, else 0.
 *  - At a later generation than it covers (memo_thru): a stack's
 *    resolution depends on the generation only through the code objects
 *    placed over its machine frames' addresses
 *    (vmp_code_history__span_at()); when the blocks of all of them last
 *    changed at or before the memo's generation, `gen` sees the same code
 *    there.  A change recorded later at a generation a sample has reached
 *    forgets every memo (note_change(), vmp_forget.c).
 *  - After a forgetting of address ranges (memo_stamp behind `forgets`):
 *    it holds when none of its frames' blocks was forgotten since it was
 *    made (vmp_forget__range()).
 * Either check reads one block a frame, once, instead of resolving each
 * frame again. */
static uint32_t memo_holds(vmp_analysis *a, uint32_t ni, int leaf, uint64_t gen)
{
    snode *n = &a->nodes[ni];
    const snode *m = n;
    uint64_t made = n->memo_gen[leaf];
    uint32_t stamp = n->memo_stamp[leaf];
    int newer = gen > n->memo_thru[leaf], forgot = stamp != a->forgets, ret = !leaf;
    size_t guard = 0;
    if (!newer && !forgot)
        return n->memo_stack[leaf];
    if (newer && a->changed_all > made)
        return 0;
    for (;;) {
        uint32_t pi;
        if (!m->is_function) {
            uint64_t addr = ret && m->value ? m->value - 1 : m->value;
            uint64_t b = vmp_forget__touch_bit(addr >> TOUCH_SHIFT);
            if ((newer && a->changed_gen[b] > made) || (forgot && a->forgot[b] > stamp))
                return 0;
        }
        if (!m->parent || ++guard > a->n_nodes || !(pi = node_index(a, m->parent)))
            break;
        m = &a->nodes[pi - 1];
        ret = 1;
    }
    if (newer) {
        n->memo_thru[leaf] = gen;
        a->stats.generation_reuses++;
    }
    n->memo_stamp[leaf] = a->forgets;
    return n->memo_stack[leaf];
}

/* The stack `base` with node `n` pushed as its innermost frame; `ret`: the
 * node is a caller (a machine frame is then a return address).  0 on no
 * memory. */
static uint32_t push_node(vmp_analysis *a, uint32_t base, const snode *n, int ret, uint64_t gen)
{
    if (n->is_function) {
        uint32_t fr = vmp_functions__symbolic_frame(a, n);
        return fr ? vmp_analysis__intern_stack(a, base, fr) : 0;
    }
    return push_addr(a, base, ret && n->value ? n->value - 1 : n->value, gen);
}

/* resolve_stack() for a node deeper than the limit: its innermost
 * max_depth - 1 nodes under one "[truncated N frames]" root frame.  Only the
 * node itself is cached: its callers' stacks are other windows. */
static uint32_t resolve_deep(vmp_analysis *a, uint32_t leaf_index, uint64_t node, uint64_t gen,
                             int as_leaf)
{
    size_t keep = a->max_depth - 1, n = 0;
    uint64_t cur = node, dropped;
    uint32_t base = 0;
    while (cur && n < keep) {
        uint32_t ni = node_index(a, cur);
        if (!ni)
            break;
        if (vmp_grow__((void **)&a->chain, &a->cap_chain, n + 1, sizeof *a->chain))
            return 0;
        a->chain[n++] = ni - 1;
        cur = a->nodes[ni - 1].parent;
    }
    dropped = a->nodes[leaf_index].depth > n ? a->nodes[leaf_index].depth - n : 1;
    if (cur) {
        uint32_t fr = vmp_functions__truncated_frame(a, dropped);
        base = fr ? vmp_analysis__intern_stack(a, 0, fr) : 0;
        if (!base)
            return 0;
    }
    while (n > 0) {
        n--;
        base = push_node(a, base, &a->nodes[a->chain[n]], n > 0 || !as_leaf, gen);
        if (!base)
            return 0;
    }
    if (cache_put(a, leaf_index, node, as_leaf ? 1 : 0, gen, base))
        return 0;
    a->stats.truncated_stacks++;
    return base;
}

/* Resolve the stack whose innermost node is `node` at `gen`, that node as
 * the sample's innermost frame (`as_leaf`) or as a caller (a machine frame
 * then is a return address); 0 on no memory or an undefined node. */
static uint32_t resolve_stack(vmp_analysis *a, uint64_t node, uint64_t gen, int as_leaf)
{
    uint32_t base = 0, ni = node_index(a, node);
    size_t depth = 0, guard = 0;
    uint64_t cur = node;
    int leaf = as_leaf ? 1 : 0;
    if (!ni)
        return 0;
    base = cache_get(a, ni - 1, node, leaf, gen);
    if (base) {
        a->stats.cache_hits++;
        return base;
    }
    a->stats.cache_misses++;
    if (a->nodes[ni - 1].depth > a->max_depth)
        return resolve_deep(a, ni - 1, node, gen, as_leaf);
    while (cur) {
        uint32_t hit;
        ni = node_index(a, cur);
        if (!ni || ++guard > a->n_nodes)
            break; /* undefined node or a cycle: the stack ends here */
        hit = cache_get(a, ni - 1, cur, leaf, gen);
        if (hit) {
            base = hit;
            break;
        }
        if (vmp_grow__((void **)&a->chain, &a->cap_chain, depth + 1, sizeof *a->chain))
            return 0;
        a->chain[depth++] = ni - 1;
        cur = a->nodes[ni - 1].parent;
        leaf = 0;
    }
    while (depth > 0) {
        const snode *n = &a->nodes[a->chain[--depth]];
        uint64_t id_key;
        base = push_node(a, base, n, depth > 0 || !as_leaf, gen);
        if (!base)
            return 0;
        /* the node's id: found again through the chain's parent links */
        id_key = depth == 0 ? node : a->nodes[a->chain[depth - 1]].parent;
        if (cache_put(a, a->chain[depth], id_key, depth == 0 && as_leaf, gen, base))
            return 0;
    }
    return base;
}

/* The stack, leaf frame and code id of sample `s` at `gen` (the fields
 * vmp_analysis_resolve_sample() does not copy from the sample). */
static vmp_status resolve_uncached(vmp_analysis *a, const vmp_rec_sample *s, int failed,
                                   uint64_t gen, vmp_asample *out)
{
    uint32_t ni;
    if (!failed && s->stack && (ni = node_index(a, s->stack)) != 0) {
        const snode *n = &a->nodes[ni - 1];
        if (s->has_pc && n->is_function) {
            /* the pc and the symbolic innermost frame describe one
             * activation: combine them (rules in vmp_analyze.h) */
            uint64_t parent = n->parent;
            uint32_t base = 0, fr;
            if (parent && parent != s->stack && node_index(a, parent)) {
                base = resolve_stack(a, parent, gen, 0);
                if (!base)
                    return VMP_ERR_NOMEM;
            }
            n = &a->nodes[ni - 1];
            a->stats.cache_misses++; /* the innermost node resolved */
            fr = combined_leaf(a, n, s->pc, gen);
            out->stack = fr ? vmp_analysis__intern_stack(a, base, fr) : 0;
        } else {
            out->stack = resolve_stack(a, s->stack, gen, 1);
        }
        if (!out->stack)
            return VMP_ERR_NOMEM;
        out->leaf = a->stacks[out->stack].frame;
    } else if (s->has_pc) {
        uint32_t st = push_addr(a, 0, s->pc, gen);
        if (!st)
            return VMP_ERR_NOMEM;
        out->leaf = a->stacks[st].frame;
        /* spec R-VIEW-1: a failed sample's pc that resolves to nothing adds
         * no frame to the failure (a merge drops such a pc: alike) */
        if (failed && a->funcs[a->frames[out->leaf].function].code_class == VMP_CLASS_UNKNOWN)
            out->leaf = 0;
        if (!failed)
            out->stack = st;
    }
    if (s->has_pc) {
        int no_index;
        const span *sp = vmp_code_history__span_at(a, s->pc, gen, &no_index);
        if (no_index)
            return VMP_ERR_NOMEM;
        out->code = sp ? a->codes[sp->obj].id : 0;
    }
    return VMP_OK;
}

#define SLOT_USED   1u
#define SLOT_HAS_PC 2u
#define SLOT_FAILED 4u

/* What identifies a resolved sample in a slot (the rest of sample_slot is
 * the resolution). */
typedef struct slot_key {
    uint64_t node, pc, gen;
    uint32_t flags;
} slot_key;

/* Whether slot sl holds the resolution of k, still valid. */
static int slot_holds(const vmp_analysis *a, const sample_slot *sl, const slot_key *k)
{
    return sl->flags == k->flags && sl->node == k->node && sl->pc == k->pc && sl->gen == k->gen &&
           sl->epoch == a->epoch && sl->forgets == a->forgets;
}

static void slot_fill(const vmp_analysis *a, sample_slot *sl, const slot_key *k,
                      const vmp_asample *r)
{
    sl->node = k->node;
    sl->pc = k->pc;
    sl->gen = k->gen;
    sl->flags = k->flags;
    sl->epoch = a->epoch;
    sl->forgets = a->forgets;
    sl->stack = r->stack;
    sl->leaf = r->leaf;
    sl->code = r->code;
}

/* Slot i of the direct-mapped table *t of n slots, allocated (and counted)
 * with its first use; NULL on no memory. */
static sample_slot *slot_in(vmp_analysis *a, sample_slot **t, size_t n, uint64_t i)
{
    if (!*t) {
        if (!(*t = calloc(n, sizeof **t)))
            return NULL;
        a->stats.memory_bytes += n * sizeof **t;
    }
    return &(*t)[i & (n - 1)];
}

vmp_status vmp_analysis_resolve_sample(vmp_analysis *a, const vmp_rec_sample *s, int failed,
                                       vmp_asample *out)
{
    uint64_t gen;
    uint32_t ni;
    vmp_rec_sample leaf_pc;
    slot_key k;
    sample_slot *slot = NULL, *cslot = NULL, *hslot = NULL;
    vmp_status st;
    if (!a || !s || !out)
        return VMP_ERR_INVALID_ARG;
    ni = s->stack ? node_index(a, s->stack) : 0;
    /* spec R-BLK-3: a block's sample without a pc of its own ran at its
     * innermost node's address when that is a machine frame */
    if (s->pc_is_leaf && !s->has_pc && !failed && ni && !a->nodes[ni - 1].is_function) {
        leaf_pc = *s;
        leaf_pc.pc = a->nodes[ni - 1].value;
        leaf_pc.has_pc = 1;
        s = &leaf_pc;
    }
    gen =
        (a->opts.flags & VMP_ANALYSIS_FIXED_GENERATION) ? a->opts.fixed_generation : s->generation;
    out->time_ns = s->time_ns;
    out->thread = s->thread;
    out->generation = s->generation;
    out->weight = s->weight; /* spec R-SMP-4: weight 0 counts 0 samples */
    out->pc = s->pc;
    out->has_pc = s->has_pc;
    out->blame = s->blame;
    out->state = s->state > UINT32_MAX ? UINT32_MAX : (uint32_t)s->state;
    out->reason = s->reason > UINT32_MAX ? UINT32_MAX : (uint32_t)s->reason;
    out->failed = failed ? 1 : 0;
    out->context = s->context;
    out->kind = s->kind > UINT32_MAX ? UINT32_MAX : (uint32_t)s->kind;
    out->stack = out->leaf = 0;
    out->code = 0;
    if (!a->any_sample || gen > a->max_sample_gen)
        a->max_sample_gen = gen;
    a->any_sample = 1;

    /* A sample with a pc resolves like an earlier one of the same node, pc
     * and generation while nothing was forgotten since: every record that
     * changes a resolution forgets (vmp_forget.c), and a node, once
     * defined, never changes (an undefined one may be defined later: not
     * cached).  The lookup spares a symbolic innermost node's combination
     * with the pc, and every pc's code object (vmp_code_history__span_at());
     * a sample without a pc needs its node's memo alone.  A block's sample
     * that names its sample context (spec R-BLK-5) looks first in the
     * context's slot, which holds its last resolution (pc or not): one
     * array read, where the direct-mapped table of (node, pc, generation)
     * is too small for the contexts of a large program, but keeps a
     * context's older generations. */
    k.flags = SLOT_USED | (s->has_pc ? SLOT_HAS_PC : 0) | (failed ? SLOT_FAILED : 0);
    k.node = s->stack;
    k.pc = s->has_pc ? s->pc : 0;
    k.gen = gen;
    if (!s->stack || ni) {
        if (s->context) { /* a file's ids are dense: one slot each, up to CONTEXT_SLOTS */
            if (!(cslot = slot_in(a, &a->context_slots, CONTEXT_SLOTS, s->context)))
                return VMP_ERR_NOMEM;
            if (slot_holds(a, cslot, &k))
                slot = cslot;
        }
        if (!slot && s->has_pc) {
            uint64_t h = vmp_hash64(s->stack * 0x9E3779B97F4A7C15ull ^
                                    k.pc * 0xC2B2AE3D27D4EB4Full ^ gen * 0x165667B19E3779F9ull);
            if (!(hslot = slot_in(a, &a->sample_slots, SAMPLE_SLOTS, h)))
                return VMP_ERR_NOMEM;
            if (slot_holds(a, hslot, &k)) {
                slot = hslot;
                if (cslot)
                    *cslot = *hslot;
            }
        }
        if (slot) {
            out->stack = slot->stack;
            out->leaf = slot->leaf;
            out->code = slot->code;
            a->stats.cache_hits++;
            return VMP_OK;
        }
    }
    st = resolve_uncached(a, s, failed, gen, out);
    if (st == VMP_OK && cslot)
        slot_fill(a, cslot, &k, out);
    if (st == VMP_OK && hslot)
        slot_fill(a, hslot, &k, out);
    return st;
}

/* ---- feeding ---------------------------------------------------------------------------- */

static vmp_status feed_record(vmp_analysis *a, const vmp_record *rec, vmp_asample *sample_out,
                              int *is_sample_out);

vmp_status vmp_analysis_feed(vmp_analysis *a, const vmp_record *rec, vmp_asample *sample_out,
                             int *is_sample_out)
{
    vmp_status st;
    if (is_sample_out)
        *is_sample_out = 0;
    if (!a || !rec)
        return VMP_ERR_INVALID_ARG;
    if (a->limit_msg[0])
        return VMP_ERR_LIMIT; /* a limit stops the analysis for good */
    st = feed_record(a, rec, sample_out, is_sample_out);
    return a->limit_msg[0] ? VMP_ERR_LIMIT : st;
}

static vmp_status feed_record(vmp_analysis *a, const vmp_record *rec, vmp_asample *sample_out,
                              int *is_sample_out)
{
    switch (rec->type) {
    case VMP_REC_HEADER:
        return vmp_analysis__take_header(a, &rec->u.header);
    case VMP_REC_END:
        a->end = rec->u.end;
        a->have_end = 1;
        return VMP_OK;
    case VMP_REC_MODULE:
        return vmp_symbols__take_module(a, &rec->u.module);
    case VMP_REC_MODULE_SYMBOLS:
        return vmp_symbols__take_symbols(a, &rec->u.module_symbols);
    case VMP_REC_THREAD: {
        const vmp_rec_thread *t = &rec->u.thread;
        if (t->name.len) {
            /* (id, 0): the first non-empty name; (id, 1): the latest */
            uint32_t sid = vmp_analysis__intern_n(a, t->name.s, t->name.len);
            if (!sid ||
                (!vmp_hmap__get(&a->thread_names, t->id, 0) &&
                 vmp_hmap__put(&a->thread_names, t->id, 0, sid)) ||
                vmp_hmap__put(&a->thread_names, t->id, 1, sid))
                return VMP_ERR_NOMEM;
        }
        return VMP_OK;
    }
    case VMP_REC_CODE_ZONE:
        if (rec->u.code_zone.name.len) {
            uint32_t sid =
                vmp_analysis__intern_n(a, rec->u.code_zone.name.s, rec->u.code_zone.name.len);
            if (!sid || vmp_hmap__put(&a->zone_names, rec->u.code_zone.id, 0, sid))
                return VMP_ERR_NOMEM;
        }
        return VMP_OK;
    case VMP_REC_FUNCTION:
        return vmp_functions__take(a, &rec->u.function);
    case VMP_REC_CODE_OBJECT:
        return vmp_code_history__take_code(a, &rec->u.code_object);
    case VMP_REC_CODE_MAP:
        return vmp_code_history__take_code_map(a, &rec->u.code_map);
    case VMP_REC_CODE_SNAPSHOT:
        return vmp_code_history__take_snapshot(a, &rec->u.code_snapshot);
    case VMP_REC_CODE_COMPACTION:
        return vmp_code_history__take_compaction(a, &rec->u.code_compaction);
    case VMP_REC_CODE_FREE:
        return vmp_code_history__take_free(a, rec->u.code_free.id, rec->u.code_free.generation);
    case VMP_REC_CODE_MOVE:
        return vmp_code_history__take_move(a, rec->u.code_move.id, rec->u.code_move.new_start,
                                           rec->u.code_move.generation);
    case VMP_REC_STACK_NODE:
        return take_node(a, &rec->u.stack_node);
    case VMP_REC_SAMPLE:
    case VMP_REC_FAILED_SAMPLE:
    case VMP_REC_KIND_SAMPLE: {
        /* spec R-KND-3: counted by kind, delivered when of the kind asked for */
        uint64_t kind = rec->type == VMP_REC_KIND_SAMPLE ? rec->u.sample.kind : 0;
        if (vmp_analysis__count_kind(a, kind, rec->u.sample.weight) < 0)
            return VMP_ERR_NOMEM;
        if (!sample_out || !vmp_analysis__delivers(a, kind))
            return VMP_OK;
        if (is_sample_out)
            *is_sample_out = 1;
        return vmp_analysis_resolve_sample(a, &rec->u.sample, rec->type == VMP_REC_FAILED_SAMPLE,
                                           sample_out);
    }
    default:
        return VMP_OK;
    }
}

vmp_status vmp_analysis_next(vmp_analysis *a, vmp_reader *r, vmp_asample *out)
{
    vmp_record rec;
    vmp_status st;
    if (!a || !r || !out)
        return VMP_ERR_INVALID_ARG;
    while ((st = vmp_reader_next(r, &rec)) == VMP_OK) {
        int is_sample = 0;
        st = vmp_analysis_feed(a, &rec, out, &is_sample);
        if (st == VMP_ERR_LIMIT) /* the file and offset, for the caller's message */
            return vmp_reader_fail(r, st, vmp_analysis_errmsg(a));
        if (st < 0)
            return st;
        if (is_sample)
            return VMP_OK;
    }
    return st;
}

/* ---- code ids ------------------------------------------------------------------ */

const char *vmp_analysis_unit_name(vmp_analysis *a, uint64_t code_id)
{
    code_obj *o = a && code_id ? vmp_code_history__find(a, code_id) : NULL;
    uint32_t fn;
    if (!o)
        return NULL;
    if (o->name_sid)
        return vmp_analysis__str(a, o->name_sid);
    fn = vmp_functions__code_afunc(a, o);
    return fn ? vmp_analysis_function(a, fn)->name : NULL;
}

uint32_t vmp_analysis_code_function(vmp_analysis *a, uint64_t code_id)
{
    code_obj *o;
    if (!a || !code_id)
        return 0;
    o = vmp_code_history__find(a, code_id);
    return o ? vmp_functions__code_afunc(a, o) : 0;
}
