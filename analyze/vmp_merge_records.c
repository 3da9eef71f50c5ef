/* SPDX-License-Identifier: MIT
 *
 * vmp_merge_records.c - one input's records rewritten into the merged file:
 * ids through the input's maps, generations and times shifted, modules kept
 * or left out, stacks resolved and interned as output stack nodes (the
 * outline is at the top of vmp_merge.c).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_merge_int.h"

/* ---- stacks -------------------------------------------------------------------------------- */

static uint32_t intern_node(merger *m, uint32_t parent, int is_fn, uint64_t value, int has_bcpc,
                            uint64_t bcpc, vmp_status *st)
{
    vmp_hmap *h = is_fn ? &m->fn_nodes : &m->pc_nodes;
    uint64_t a = is_fn ? (uint64_t)parent | value << 32 : parent;
    uint64_t b = is_fn ? (has_bcpc ? bcpc + 1 : 0) : value;
    uint32_t id = vmp_hmap__get(h, a, b);
    vmp_record rec;
    if (id)
        return id;
    id = m->next_node++;
    if (vmp_hmap__put(h, a, b, id)) {
        *st = vmp_merge__nomem(m);
        return 0;
    }
    memset(&rec, 0, sizeof rec);
    rec.type = VMP_REC_STACK_NODE;
    rec.u.stack_node.id = id;
    rec.u.stack_node.parent = parent;
    rec.u.stack_node.is_function = is_fn;
    if (is_fn) {
        rec.u.stack_node.function = value;
        rec.u.stack_node.has_bcpc = has_bcpc;
        rec.u.stack_node.bcpc = bcpc;
    } else {
        rec.u.stack_node.pc = value;
    }
    *st = vmp_merge__emit(m, &rec);
    return *st < 0 ? 0 : id;
}

/* The output function standing for resolved native function `af`. */
static uint32_t native_fn(merger *m, vmp_analysis *a, uint32_t af, vmp_status *st)
{
    int fresh;
    uint32_t id = vmp_merge__map_id(&m->natives, af, &m->next_fn, &fresh);
    vmp_record rec;
    const vmp_afunction *f = vmp_analysis_function(a, af);
    if (!id) {
        *st = vmp_merge__nomem(m);
        return 0;
    }
    if (!fresh)
        return id;
    memset(&rec, 0, sizeof rec);
    rec.type = VMP_REC_FUNCTION;
    rec.u.function.id = id;
    rec.u.function.name.s = f ? f->name : "[unknown]";
    rec.u.function.name.len = strlen(rec.u.function.name.s);
    rec.u.function.scope.s = rec.u.function.signature.s = rec.u.function.file.s = "";
    *st = vmp_merge__emit(m, &rec);
    return *st < 0 ? 0 : id;
}

/* The output function for input function `id` named by a symbolic stack
 * frame.  A function the input has not defined yet keeps the label its input
 * shows, spec R-RES-9 and R-ID-2: a stand-in FUNCTION named "function#ID"
 * with the input's id is written for it.  Keys of the fns map: (id, 0) the
 * output id of the definition (code objects and inline records name it even
 * before it, as their resolution waits for it), (id, 2) set once the input
 * defined it, (id, 3) the stand-in's output id. */
static uint32_t fn_ref(merger *m, uint64_t id, vmp_status *st)
{
    uint32_t v;
    vmp_record rec;
    char name[64];
    if (!id)
        return 0;
    if (vmp_hmap__get(&m->fns, id, 2)) {
        v = vmp_merge__map_id(&m->fns, id, &m->next_fn, NULL);
        if (!v)
            *st = vmp_merge__nomem(m);
        return v;
    }
    v = vmp_hmap__get(&m->fns, id, 3);
    if (v)
        return v;
    v = m->next_fn++;
    if (vmp_hmap__put(&m->fns, id, 3, v)) {
        *st = vmp_merge__nomem(m);
        return 0;
    }
    snprintf(name, sizeof name, "function#%" PRIu64, id);
    memset(&rec, 0, sizeof rec);
    rec.type = VMP_REC_FUNCTION;
    rec.u.function.id = v;
    rec.u.function.name.s = name;
    rec.u.function.name.len = strlen(name);
    rec.u.function.scope.s = rec.u.function.signature.s = rec.u.function.file.s = "";
    *st = vmp_merge__emit(m, &rec);
    return *st < 0 ? 0 : v;
}

/* Whether machine address `addr` of the input, which resolved to `f`, resolves
 * alike in the output: generated code always does (the input's generations
 * are its own); a module symbol does when its module is in the output for
 * this input; an unknown address never is sure to (a later input's module may
 * cover it). */
static int keep_pc(const merger *m, const vmp_afunction *f, uint64_t addr)
{
    size_t i;
    if (!f)
        return 0;
    if (f->code_class == VMP_CLASS_GENERATED)
        return 1;
    if (f->code_class != VMP_CLASS_NATIVE)
        return 0;
    for (i = 0; i < m->n_imods; i++)
        if (addr >= m->imods[i].start && addr < m->imods[i].end)
            return m->imods[i].out_id != 0;
    return 0;
}

/* The output node for one level: input node `n` (NULL: the sample's own
 * `pc`) resolved as stack `as`; `leaf` for the innermost frame. */
static uint32_t out_level(merger *m, vmp_analysis *a, uint32_t parent, const innode *n, uint64_t pc,
                          uint32_t as, int leaf, vmp_status *st)
{
    const vmp_astack *s = vmp_analysis_stack(a, as);
    const vmp_aframe *fr = s ? vmp_analysis_frame(a, s->frame) : NULL;
    const vmp_afunction *f = fr ? vmp_analysis_function(a, fr->function) : NULL;
    uint64_t addr;
    if (n && n->is_function) {
        uint32_t fn = fn_ref(m, n->value, st);
        if (*st < 0)
            return 0;
        return intern_node(m, parent, 1, fn, n->has_bcpc, n->bcpc, st);
    }
    if (n)
        pc = n->value;
    addr = !leaf && pc ? pc - 1 : pc;
    if (!keep_pc(m, f, addr) && (!f || f->code_class == VMP_CLASS_UNKNOWN))
        return intern_node(m, parent, 0, 0, 0, 0, st); /* stays unknown: see take_module */
    if (!keep_pc(m, f, addr)) {
        uint32_t fn = native_fn(m, a, fr ? fr->function : 0, st);
        return fn ? intern_node(m, parent, 1, fn, 0, 0, st) : 0;
    }
    return intern_node(m, parent, 0, pc, 0, 0, st);
}

/* Index + 1 of input node `id`, 0 when undefined. */
static uint32_t node_index(const merger *m, uint64_t id)
{
    return vmp_idmap__get(&m->node_ids, id);
}

/* The output stack for input stack node `node` resolved as `as`. */
static uint32_t out_stack(merger *m, vmp_analysis *a, uint64_t node, uint32_t as, vmp_status *st)
{
    size_t depth = 0;
    uint32_t base = 0;
    uint64_t cur = node;
    uint32_t cur_as = as;
    *st = VMP_OK;
    while (cur_as && cur) {
        uint32_t ni = node_index(m, cur);
        uint32_t hit;
        if (!ni)
            break;
        hit = m->nodes[ni - 1].memo_as == cur_as ? m->nodes[ni - 1].memo_out
              : m->memo.n                        ? vmp_hmap__get(&m->memo, cur, cur_as)
                                                 : 0;
        if (hit) {
            base = hit;
            break;
        }
        if (vmp_grow__((void **)&m->chain_in, &m->cap_chain_in, depth + 1, sizeof *m->chain_in) ||
            vmp_grow__((void **)&m->chain_as, &m->cap_chain_as, depth + 1, sizeof *m->chain_as)) {
            *st = vmp_merge__nomem(m);
            return 0;
        }
        m->chain_in[depth] = ni - 1;
        m->chain_as[depth] = cur_as;
        depth++;
        cur = m->nodes[ni - 1].parent;
        cur_as = vmp_analysis_stack(a, cur_as)->parent;
    }
    while (depth > 0) {
        const innode *n;
        uint64_t id;
        depth--;
        n = &m->nodes[m->chain_in[depth]];
        base = out_level(m, a, base, n, 0, m->chain_as[depth], depth == 0, st);
        if (!base)
            return 0;
        id = depth == 0 ? node : m->nodes[m->chain_in[depth - 1]].parent;
        if (!m->nodes[m->chain_in[depth]].memo_as) {
            m->nodes[m->chain_in[depth]].memo_as = m->chain_as[depth];
            m->nodes[m->chain_in[depth]].memo_out = base;
        } else if (vmp_hmap__put(&m->memo, id, m->chain_as[depth], base)) {
            *st = vmp_merge__nomem(m);
            return 0;
        }
    }
    return base;
}

/* ---- records of one input ---------------------------------------------------------------- */

static void note_gen(input *in, uint64_t g)
{
    if (g > in->max_gen)
        in->max_gen = g;
}

static uint64_t map_code(merger *m, uint64_t id)
{
    return vmp_hmap__get(&m->codes, id, 0);
}

static uint64_t map_thread(merger *m, uint64_t id, vmp_status *st)
{
    int fresh;
    uint32_t v = vmp_merge__map_id(&m->threads, id, &m->next_thread, &fresh);
    if (id && !v)
        *st = vmp_merge__nomem(m);
    return v;
}

/* A thread named only by samples or events keeps its name ("thread#ID" of
 * the input) through a THREAD record, written when the input ends so that a
 * THREAD record of the input, wherever it is, stays the thread's only name. */
vmp_status vmp_merge__name_threads(merger *m)
{
    vmp_record rec;
    char name[48];
    size_t i;
    vmp_status st;
    for (i = 0; i < m->threads.cap; i++) {
        const vmp_hmap_entry *e = &m->threads.e[i];
        if (!e->v || vmp_hmap__get(&m->named, e->v, 0))
            continue;
        snprintf(name, sizeof name, "thread#%" PRIu64, e->a);
        memset(&rec, 0, sizeof rec);
        rec.type = VMP_REC_THREAD;
        rec.u.thread.id = e->v;
        rec.u.thread.name.s = name;
        rec.u.thread.name.len = strlen(name);
        st = vmp_merge__emit(m, &rec);
        if (st < 0)
            return st;
    }
    return VMP_OK;
}

/* spec "Merged files": a module goes to the output unless it overlaps a module
 * another input put there; the same binary at the same place (equal build id,
 * bias and range) is shared. */
static vmp_status take_module(merger *m, vmp_record *rec)
{
    vmp_rec_module *mod = &rec->u.module;
    inmod *im;
    outmod *om;
    size_t i;
    for (i = 0; i < m->n_imods; i++)
        if (m->imods[i].id == mod->id)
            return VMP_OK; /* defined twice (R-ID-1): keep the first */
    if (vmp_grow__((void **)&m->imods, &m->cap_imods, m->n_imods + 1, sizeof *m->imods))
        return vmp_merge__nomem(m);
    im = &m->imods[m->n_imods++];
    memset(im, 0, sizeof *im);
    im->id = mod->id;
    im->start = mod->start;
    im->end = mod->end;
    for (i = 0; i < m->n_omods; i++) {
        om = &m->omods[i];
        if (om->build_id_size && om->build_id_size == mod->build_id_size &&
            memcmp(om->build_id, mod->build_id, mod->build_id_size) == 0 && om->bias == mod->bias &&
            om->start == mod->start && om->end == mod->end) {
            im->out_id = om->id;
            return VMP_OK;
        }
    }
    for (i = 0; i < m->n_omods; i++) {
        om = &m->omods[i];
        if (mod->start < om->end && om->start < mod->end)
            return VMP_OK; /* overlaps: its frames become symbolic */
    }
    if (mod->end <= mod->start || mod->start == 0)
        return VMP_OK; /* no range, or one that holds address 0, which stands for
                          the unknown frames of every input */
    if (vmp_grow__((void **)&m->omods, &m->cap_omods, m->n_omods + 1, sizeof *m->omods))
        return vmp_merge__nomem(m);
    om = &m->omods[m->n_omods];
    memset(om, 0, sizeof *om);
    if (mod->build_id_size) {
        om->build_id = malloc(mod->build_id_size);
        if (!om->build_id)
            return vmp_merge__nomem(m);
        memcpy(om->build_id, mod->build_id, mod->build_id_size);
        om->build_id_size = mod->build_id_size;
    }
    m->n_omods++;
    om->id = im->out_id = m->next_module++;
    om->bias = mod->bias;
    om->start = mod->start;
    om->end = mod->end;
    im->owned = 1;
    mod->id = om->id;
    return vmp_merge__emit(m, rec);
}

vmp_status vmp_merge__take_record(merger *m, input *in, vmp_analysis *a, vmp_record *rec,
                                  const vmp_asample *as)
{
    vmp_status st = VMP_OK;
    size_t i;
    uint64_t sh = in->shift;
    switch (rec->type) {
    case VMP_REC_HEADER:
    case VMP_REC_UNKNOWN:
        return VMP_OK;
    case VMP_REC_MODULE:
        return take_module(m, rec);
    case VMP_REC_MODULE_SYMBOLS: {
        vmp_rec_module_symbols *ms = &rec->u.module_symbols;
        for (i = 0; i < m->n_imods && m->imods[i].id != ms->module; i++)
            ;
        if (i == m->n_imods || !m->imods[i].owned)
            return VMP_OK; /* not in the output, or written by an earlier input */
        ms->module = m->imods[i].out_id;
        break;
    }
    case VMP_REC_END: {
        const vmp_rec_end *e = &rec->u.end;
        m->end.dropped_full += e->dropped_full;
        m->end.dropped_write += e->dropped_write;
        m->end.truncated_stacks += e->truncated_stacks;
        if (e->time_ns + sh > m->end.time_ns)
            m->end.time_ns = e->time_ns + sh;
        note_gen(in, e->generation);
        return VMP_OK;
    }
    case VMP_REC_THREAD: {
        vmp_rec_thread *t = &rec->u.thread;
        uint64_t id = map_thread(m, t->id, &st);
        if (st < 0)
            return st;
        if (vmp_hmap__put(&m->named, id, 0, 1))
            return vmp_merge__nomem(m);
        t->id = id;
        if (t->time_ns)
            t->time_ns += sh;
        if (t->end_time_ns)
            t->end_time_ns += sh;
        break;
    }
    case VMP_REC_FUNCTION: {
        uint64_t in_id = rec->u.function.id;
        if (vmp_hmap__get(&m->fns, in_id, 2))
            return VMP_OK; /* defined twice: the first definition holds (R-ID-5) */
        if (vmp_hmap__put(&m->fns, in_id, 2, 1) ||
            !(rec->u.function.id = vmp_merge__map_id(&m->fns, in_id, &m->next_fn, NULL)))
            return vmp_merge__nomem(m);
        break;
    }
    case VMP_REC_CODE_ZONE: {
        int fresh;
        uint32_t id = vmp_merge__map_id(&m->zones, rec->u.code_zone.id, &m->next_zone, &fresh);
        if (!id)
            return vmp_merge__nomem(m);
        if (!fresh)
            return VMP_OK; /* defined twice (R-ID-1): keep the first */
        if (vmp_grow__((void **)&m->in_zones, &m->cap_in_zones, m->n_in_zones + 1,
                       sizeof *m->in_zones))
            return vmp_merge__nomem(m);
        m->in_zones[m->n_in_zones++] = id;
        rec->u.code_zone.id = id;
        break;
    }
    case VMP_REC_CODE_OBJECT: {
        vmp_rec_code_object *c = &rec->u.code_object;
        int fresh;
        c->id = vmp_merge__map_id(&m->codes, c->id, &m->next_code, &fresh);
        if (!c->id)
            return vmp_merge__nomem(m);
        if (!fresh)
            return VMP_OK;
        c->zone = c->zone ? vmp_hmap__get(&m->zones, c->zone, 0) : 0;
        if (!c->zone)
            c->zone = m->boundary_zone;
        c->kind = vmp_merge__remap_vocab(in, V_KINDS, c->kind);
        if (c->tier)
            c->tier = vmp_merge__remap_vocab(in, V_TIERS, c->tier - 1) + 1;
        if (c->function &&
            !(c->function = vmp_merge__map_id(&m->fns, c->function, &m->next_fn, NULL)))
            return vmp_merge__nomem(m);
        note_gen(in, c->generation);
        c->generation += in->base;
        if (c->time_ns)
            c->time_ns += sh;
        if (vmp_merge__remap_inlines(m, &c->inlines, c->n_inlines))
            return vmp_merge__nomem(m);
        break;
    }
    case VMP_REC_CODE_MAP: { /* the maps of a code object of this input */
        vmp_rec_code_map *c = &rec->u.code_map;
        c->id = c->id ? vmp_hmap__get(&m->codes, c->id, 0) : 0;
        if (!c->id)
            return VMP_OK; /* unknown code: a reader ignores it (R-CODE-3) */
        if (vmp_merge__remap_inlines(m, &c->inlines, c->n_inlines))
            return vmp_merge__nomem(m);
        break;
    }
    case VMP_REC_CODE_SNAPSHOT: {
        vmp_rec_code_snapshot *s = &rec->u.code_snapshot;
        if (vmp_merge__ensure_tmp(m, 2 * s->n))
            return vmp_merge__nomem(m);
        for (i = 0; i < s->n; i++) {
            m->tmp[2 * i] = map_code(m, s->entries[2 * i]);
            m->tmp[2 * i + 1] = s->entries[2 * i + 1];
        }
        s->entries = m->tmp;
        s->zone = vmp_hmap__get(&m->zones, s->zone, 0);
        note_gen(in, s->generation);
        s->generation += in->base;
        if (s->time_ns)
            s->time_ns += sh;
        break;
    }
    case VMP_REC_CODE_COMPACTION: {
        vmp_rec_code_compaction *c = &rec->u.code_compaction;
        if (vmp_merge__ensure_tmp(m, 2 * c->n_moves + c->n_frees))
            return vmp_merge__nomem(m);
        for (i = 0; i < c->n_moves; i++) {
            m->tmp[2 * i] = map_code(m, c->moves[2 * i]);
            m->tmp[2 * i + 1] = c->moves[2 * i + 1];
        }
        for (i = 0; i < c->n_frees; i++)
            m->tmp[2 * c->n_moves + i] = map_code(m, c->frees[i]);
        c->moves = m->tmp;
        c->frees = m->tmp + 2 * c->n_moves;
        c->zone = vmp_hmap__get(&m->zones, c->zone, 0);
        note_gen(in, c->generation);
        c->generation += in->base;
        if (c->time_ns)
            c->time_ns += sh;
        break;
    }
    case VMP_REC_CODE_FREE:
        rec->u.code_free.id = map_code(m, rec->u.code_free.id);
        note_gen(in, rec->u.code_free.generation);
        rec->u.code_free.generation += in->base;
        if (rec->u.code_free.time_ns)
            rec->u.code_free.time_ns += sh;
        break;
    case VMP_REC_CODE_MOVE:
        rec->u.code_move.id = map_code(m, rec->u.code_move.id);
        note_gen(in, rec->u.code_move.generation);
        rec->u.code_move.generation += in->base;
        if (rec->u.code_move.time_ns)
            rec->u.code_move.time_ns += sh;
        break;
    case VMP_REC_STACK_NODE: {
        const vmp_rec_stack_node *r = &rec->u.stack_node;
        innode *n;
        if (!r->id || node_index(m, r->id))
            return VMP_OK;
        if (vmp_grow__((void **)&m->nodes, &m->cap_nodes, m->n_nodes + 1, sizeof *m->nodes))
            return vmp_merge__nomem(m);
        if (vmp_idmap__put(&m->node_ids, r->id, (uint32_t)m->n_nodes + 1))
            return vmp_merge__nomem(m);
        n = &m->nodes[m->n_nodes++];
        memset(n, 0, sizeof *n);
        n->parent = r->parent;
        n->is_function = r->is_function;
        n->value = r->is_function ? r->function : r->pc;
        n->has_bcpc = r->has_bcpc;
        n->bcpc = r->bcpc;
        return VMP_OK; /* written when a sample needs it */
    }
    case VMP_REC_KIND_SAMPLE: /* spec R-KND-3: its kind by name in the output */
    case VMP_REC_SAMPLE:
    case VMP_REC_FAILED_SAMPLE: {
        vmp_rec_sample *s = &rec->u.sample;
        uint32_t stack = 0;
        int has_stack = rec->type != VMP_REC_FAILED_SAMPLE;
        if (rec->type == VMP_REC_KIND_SAMPLE && s->kind >= 1)
            s->kind = vmp_merge__remap_vocab(in, V_SAMPLE_KINDS, s->kind - 1) + 1;
        vmp_sample_own_pc__(s, as);
        if (s->has_pc) {
            /* the pc stays when it resolves alike in the output */
            uint32_t fr = as->leaf;
            const innode *leaf = NULL;
            const vmp_aframe *af;
            if (has_stack && as->stack) {
                uint32_t ni = s->stack ? node_index(m, s->stack) : 0;
                leaf = ni ? &m->nodes[ni - 1] : NULL;
                if (s->stack && !(leaf && !leaf->is_function && leaf->value == s->pc) &&
                    vmp_analysis_resolve_pc(a, &fr, s->pc, s->generation, 0) < 0)
                    return vmp_merge__nomem(m);
            }
            af = fr ? vmp_analysis_frame(a, fr) : NULL;
            if (!keep_pc(m, af ? vmp_analysis_function(a, af->function) : NULL, s->pc))
                s->has_pc = 0;
        }
        if (has_stack) {
            if (s->stack && as->stack && node_index(m, s->stack))
                stack = out_stack(m, a, s->stack, as->stack, &st);
            else if (as->stack && !s->has_pc) /* its pc alone made the stack */
                stack = out_level(m, a, 0, NULL, rec->u.sample.pc, as->stack, 1, &st);
            if (st < 0)
                return st;
        }
        s->stack = stack;
        s->context = 0; /* the output's stacks are not the input's */
        s->thread = map_thread(m, s->thread, &st);
        if (st < 0)
            return st;
        s->state = vmp_merge__remap_vocab(in, V_STATES, s->state);
        if (rec->type == VMP_REC_FAILED_SAMPLE)
            s->reason = vmp_merge__remap_vocab(in, V_REASONS, s->reason);
        note_gen(in, s->generation);
        s->generation += in->base;
        s->blame = s->blame ? map_code(m, s->blame) : 0;
        s->time_ns += sh;
        break;
    }
    case VMP_REC_EVENT: {
        vmp_rec_event *e = &rec->u.event;
        e->kind = vmp_merge__remap_vocab(in, V_EVENTS, e->kind);
        e->thread = map_thread(m, e->thread, &st);
        if (st < 0)
            return st;
        e->time_ns += sh;
        break;
    }
    case VMP_REC_COUNTER:
        rec->u.counter.kind = vmp_merge__remap_vocab(in, V_COUNTERS, rec->u.counter.kind);
        rec->u.counter.time_ns += sh;
        break;
    default:
        return VMP_OK;
    }
    return vmp_merge__emit(m, rec);
}

/* Free every code object of the input just merged: an empty snapshot of each
 * of its zones and of the merge's own zone, each at a generation of its own
 * (spec R-GEN-1), after the input's last generation. */
