/* SPDX-License-Identifier: MIT
 *
 * vmp_merge.c - merge profiles of different processes and runs into one
 * file (spec.md §5 ids and generations, "Merged files").
 *
 * Outline.  The HEADER of every input is read first and the output HEADER
 * written with the union of the vocabularies.  Then each input is streamed
 * in turn through its own analysis (vmp_analyze.h) and rewritten:
 *   - ids: zones, code objects, functions, threads and stack nodes get new
 *     ids from counters of the output, through per-input maps;
 *   - generations: input i's generations are shifted by base_i; before input
 *     i starts, an empty CODE_SNAPSHOT of every zone of the previous input
 *     (and of the merge's own zone, which holds code objects that had no
 *     zone) frees all of its code at a generation of its own, so no pc of one
 *     input resolves to code of another;
 *   - modules are not generation-scoped: a module is copied unless it
 *     overlaps one another input put in the output (the same binary at the
 *     same place is shared).  A frame in a module left out becomes a symbolic
 *     frame of a FUNCTION named after the symbol (demangled); a frame that
 *     resolved to nothing becomes pc 0, which no copied module holds.  Frames
 *     in code objects keep their machine pcs (and so their kinds and bytecode
 *     ranges); so does a sample's pc when it resolves alike in the output;
 *   - stacks: each input stack is resolved by the analysis, then rebuilt as an
 *     interned output stack, memoised per (input node, resolved stack);
 *   - times: shifted to the earliest input's time origin (start_realtime).
 */
#include "vmp_rewrite.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_analyze.h"
#include "vmp_analyze_int.h"

enum {
    V_STATES,
    V_KINDS,
    V_TIERS,
    V_EVENTS,
    V_COUNTERS,
    V_REASONS,
    V_SAMPLE_KINDS, /* spec §5.15: matched by name; kind k is index k - 1 */
    N_VOCAB
};

typedef struct strv {
    vmp_str *v;
    size_t n, cap;
} strv;

typedef struct innode {
    uint64_t parent, value, bcpc;
    int is_function, has_bcpc;
    uint32_t memo_as, memo_out; /* the first (resolved stack -> output node) */
} innode;

/* A module of the output, kept to recognise the same binary in later inputs. */
typedef struct outmod {
    uint32_t id;
    uint64_t bias, start, end;
    unsigned char *build_id;
    size_t build_id_size;
} outmod;

/* A module of the input being merged. */
typedef struct inmod {
    uint64_t id, start, end;
    uint32_t out_id; /* 0: not in the output (it overlaps another input's) */
    int owned;       /* this input wrote it, so it writes its symbols */
} inmod;

typedef struct input {
    uint32_t *vmap[N_VOCAB]; /* input index -> output index */
    size_t n_vmap[N_VOCAB];
    uint64_t shift; /* ns added to every time */
    uint64_t base;  /* generations added */
    uint64_t max_gen;
} input;

typedef struct merger {
    vmp_record_writer *w;
    strv vocab[N_VOCAB];
    strv units; /* the output's sample_units: each kind's from the first input naming it */
    strv labels;
    input *in;
    size_t n_in;
    uint32_t next_fn, next_zone, next_code, next_node, next_thread, next_module;
    outmod *omods;
    size_t n_omods, cap_omods;
    inmod *imods;
    size_t n_imods, cap_imods;
    uint32_t boundary_zone;
    vmp_hmap pc_nodes, fn_nodes; /* output stack nodes, interned */
    /* per input */
    vmp_hmap zones, codes, fns, threads, named, memo, natives;
    innode *nodes;
    size_t n_nodes, cap_nodes;
    vmp_idmap node_ids; /* input node id -> index + 1 */
    uint32_t *in_zones;
    size_t n_in_zones, cap_in_zones;
    uint64_t *tmp;
    size_t cap_tmp;
    vmp_rec_inline *tmp_inl;
    size_t cap_tmp_inl;
    uint32_t *chain_in;
    uint32_t *chain_as;
    size_t cap_chain_in, cap_chain_as;
    /* totals */
    vmp_rec_end end;
    char *err;
    size_t err_size;
} merger;

static void set_err(merger *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void set_err(merger *m, const char *fmt, ...)
{
    va_list ap;
    if (!m->err || m->err_size == 0 || m->err[0])
        return;
    va_start(ap, fmt);
    vsnprintf(m->err, m->err_size, fmt, ap);
    va_end(ap);
}

static vmp_status nomem(merger *m)
{
    set_err(m, "out of memory");
    return VMP_ERR_NOMEM;
}

static vmp_status emit(merger *m, const vmp_record *rec)
{
    vmp_status st = vmp_record_writer_write(m->w, rec);
    if (st < 0)
        set_err(m, "%s", vmp_record_writer_errmsg(m->w));
    return st;
}

/* ---- owned strings ---------------------------------------------------------------- */

static int strv_push(strv *v, const char *s, size_t len)
{
    char *c;
    if (vmp_grow__((void **)&v->v, &v->cap, v->n + 1, sizeof *v->v))
        return -1;
    c = malloc(len + 1);
    if (!c)
        return -1;
    memcpy(c, s, len);
    c[len] = '\0';
    v->v[v->n].s = c;
    v->v[v->n].len = len;
    v->n++;
    return 0;
}

static void strv_free(strv *v)
{
    size_t i;
    for (i = 0; i < v->n; i++)
        free((void *)v->v[i].s);
    free(v->v);
}

/* Index of `s` in the union vocabulary, adding it when new; -1 on no memory. */
static int64_t vocab_index(strv *v, const vmp_str *s)
{
    size_t i;
    for (i = 0; i < v->n; i++)
        if (v->v[i].len == s->len && memcmp(v->v[i].s, s->s, s->len) == 0)
            return (int64_t)i;
    if (strv_push(v, s->s, s->len))
        return -1;
    return (int64_t)(v->n - 1);
}

static uint64_t remap_vocab(const input *in, int which, uint64_t idx)
{
    /* spec R-ID-4: an index past the vocabulary stays a number; keep it past
     * the union too, so that it still shows as a number */
    if (idx < in->n_vmap[which])
        return in->vmap[which][idx];
    return idx;
}

/* ---- id maps ----------------------------------------------------------------------------- */

static uint32_t map_id(vmp_hmap *h, uint64_t id, uint32_t *next, int *fresh)
{
    uint32_t v;
    if (fresh)
        *fresh = 0;
    if (id == 0)
        return 0;
    v = vmp_hmap__get(h, id, 0);
    if (v)
        return v;
    v = (*next)++;
    if (vmp_hmap__put(h, id, 0, v))
        return 0;
    if (fresh)
        *fresh = 1;
    return v;
}

static int ensure_tmp(merger *m, size_t n)
{
    return vmp_grow__((void **)&m->tmp, &m->cap_tmp, n ? n : 1, sizeof *m->tmp);
}

/* The function ids of inline records, renumbered into m->tmp_inl (valid
 * until the next record); `*inlines` then points there.  -1: no memory. */
static int remap_inlines(merger *m, const vmp_rec_inline **inlines, size_t n)
{
    size_t total = 0, i;
    uint64_t *p;
    if (n == 0)
        return 0;
    for (i = 0; i < n; i++)
        total += 2 * (*inlines)[i].depth;
    if (ensure_tmp(m, total) ||
        vmp_grow__((void **)&m->tmp_inl, &m->cap_tmp_inl, n, sizeof *m->tmp_inl))
        return -1;
    p = m->tmp;
    for (i = 0; i < n; i++) {
        size_t j;
        m->tmp_inl[i] = (*inlines)[i];
        m->tmp_inl[i].frames = p;
        for (j = 0; j < (*inlines)[i].depth; j++) {
            uint64_t f = (*inlines)[i].frames[2 * j];
            p[2 * j] = f ? map_id(&m->fns, f, &m->next_fn, NULL) : 0;
            p[2 * j + 1] = (*inlines)[i].frames[2 * j + 1];
        }
        p += 2 * (*inlines)[i].depth;
    }
    *inlines = m->tmp_inl;
    return 0;
}

/* ---- the header ------------------------------------------------------------------------------ */

static vmp_status take_headers(merger *m,
                               vmp_reader *const *inputs,
                               const char *const *names,
                               size_t n)
{
    vmp_rec_header out;
    uint64_t min_rt = UINT64_MAX;
    int all_rt = 1;
    size_t i, k, j;
    vmp_status st;
    vmp_rec_header *hs = calloc(n, sizeof *hs);
    strv keep = {0}; /* scalar strings of the first input */
    vmp_record rec;
    if (!hs)
        return nomem(m);
    memset(&out, 0, sizeof out);
    for (i = 0; i < n; i++) {
        const vmp_rec_header *h;
        char label[64];
        st = vmp_reader_next(inputs[i], &rec);
        if (st != VMP_OK || rec.type != VMP_REC_HEADER) {
            if (st < 0)
                set_err(m, "%s", vmp_reader_errmsg(inputs[i]));
            else
                set_err(m, "%s: the first record is not a HEADER",
                        names && names[i] ? names[i] : "input");
            free(hs);
            strv_free(&keep);
            return st < 0 ? st : VMP_ERR_CORRUPT;
        }
        h = &rec.u.header;
        {
            const vmp_str *lists[N_VOCAB] = {h->states,      h->code_kinds,    h->tiers,
                                             h->event_kinds, h->counter_kinds, h->failure_reasons,
                                             h->sample_kinds};
            size_t counts[N_VOCAB] = {h->n_states,      h->n_code_kinds,    h->n_tiers,
                                      h->n_event_kinds, h->n_counter_kinds, h->n_failure_reasons,
                                      h->n_sample_kinds};
            for (k = 0; k < N_VOCAB; k++) {
                m->in[i].vmap[k] = calloc(counts[k] + 1, sizeof *m->in[i].vmap[k]);
                if (!m->in[i].vmap[k])
                    goto oom;
                m->in[i].n_vmap[k] = counts[k];
                for (j = 0; j < counts[k]; j++) {
                    size_t before = m->vocab[k].n;
                    int64_t x = vocab_index(&m->vocab[k], &lists[k][j]);
                    if (x < 0)
                        goto oom;
                    m->in[i].vmap[k][j] = (uint32_t)x;
                    /* a new kind takes its unit from this input (R-KND-1) */
                    if (k == V_SAMPLE_KINDS && m->vocab[k].n > before &&
                        strv_push(
                            &m->units,
                            j < h->n_sample_units && h->sample_units[j].len ? h->sample_units[j].s
                                                                            : "count",
                            j < h->n_sample_units && h->sample_units[j].len ? h->sample_units[j].len
                                                                            : 5))
                        goto oom;
                }
            }
        }
        /* labels: input.N.<key>, plus where the input came from */
        for (j = 0; j < h->n_labels; j++) {
            int len = snprintf(label, sizeof label, "input.%zu.", i);
            size_t kl = h->labels[2 * j].len;
            char *key = malloc((size_t)len + kl + 1);
            if (!key)
                goto oom;
            memcpy(key, label, (size_t)len);
            memcpy(key + len, h->labels[2 * j].s, kl);
            if (strv_push(&m->labels, key, (size_t)len + kl) ||
                strv_push(&m->labels, h->labels[2 * j + 1].s, h->labels[2 * j + 1].len)) {
                free(key);
                goto oom;
            }
            free(key);
        }
        {
            static const char *const what[] = {"source", "producer", "vm_name", "pid"};
            char pid[32];
            const char *vals[4];
            snprintf(pid, sizeof pid, "%" PRIu64, h->pid);
            vals[0] = names && names[i] ? names[i] : "";
            vals[1] = h->producer.s;
            vals[2] = h->vm_name.s;
            vals[3] = pid;
            for (k = 0; k < 4; k++) {
                snprintf(label, sizeof label, "input.%zu.%s", i, what[k]);
                if (vals[k][0] == '\0')
                    continue;
                if (strv_push(&m->labels, label, strlen(label)) ||
                    strv_push(&m->labels, vals[k], strlen(vals[k])))
                    goto oom;
            }
        }
        if (i == 0) {
            /* the first input's separator: inputs of one VM name alike */
            if (strv_push(&keep, h->vm_name.s, h->vm_name.len) ||
                strv_push(&keep, h->vm_version.s, h->vm_version.len) ||
                strv_push(&keep, h->clock.s, h->clock.len) ||
                strv_push(&keep, h->name_separator.s, h->name_separator.len))
                goto oom;
            out.clock_res_ns = h->clock_res_ns;
            out.interval_ns = h->interval_ns;
            out.pointer_size = h->pointer_size;
        }
        hs[i].start_realtime_ns = h->start_realtime_ns;
        hs[i].start_monotonic_ns = h->start_monotonic_ns;
        if (h->start_realtime_ns == 0)
            all_rt = 0;
        if (h->start_realtime_ns < min_rt) {
            min_rt = h->start_realtime_ns;
            out.start_realtime_ns = h->start_realtime_ns;
            out.start_monotonic_ns = h->start_monotonic_ns;
        }
    }
    for (i = 0; i < n; i++)
        m->in[i].shift = all_rt ? hs[i].start_realtime_ns - min_rt : 0;
    if (!all_rt) {
        out.start_realtime_ns = hs[0].start_realtime_ns;
        out.start_monotonic_ns = hs[0].start_monotonic_ns;
    }
    out.producer.s = "vmp merge";
    out.producer.len = strlen(out.producer.s);
    out.vm_name = keep.v[0];
    out.vm_version = keep.v[1];
    out.clock = keep.v[2];
    out.name_separator = keep.v[3];
    out.states = m->vocab[V_STATES].v;
    out.n_states = m->vocab[V_STATES].n;
    out.code_kinds = m->vocab[V_KINDS].v;
    out.n_code_kinds = m->vocab[V_KINDS].n;
    out.tiers = m->vocab[V_TIERS].v;
    out.n_tiers = m->vocab[V_TIERS].n;
    out.event_kinds = m->vocab[V_EVENTS].v;
    out.n_event_kinds = m->vocab[V_EVENTS].n;
    out.counter_kinds = m->vocab[V_COUNTERS].v;
    out.n_counter_kinds = m->vocab[V_COUNTERS].n;
    out.failure_reasons = m->vocab[V_REASONS].v;
    out.n_failure_reasons = m->vocab[V_REASONS].n;
    out.sample_kinds = m->vocab[V_SAMPLE_KINDS].v;
    out.n_sample_kinds = m->vocab[V_SAMPLE_KINDS].n;
    out.sample_units = m->units.v;
    out.n_sample_units = m->units.n;
    out.labels = m->labels.v;
    out.n_labels = m->labels.n / 2;
    memset(&rec, 0, sizeof rec);
    rec.type = VMP_REC_HEADER;
    rec.u.header = out;
    st = emit(m, &rec);
    free(hs);
    strv_free(&keep);
    if (st < 0)
        return st;
    /* the merge's own zone: code objects without a zone, and the generation
     * step between inputs */
    memset(&rec, 0, sizeof rec);
    rec.type = VMP_REC_CODE_ZONE;
    rec.u.code_zone.id = m->boundary_zone = m->next_zone++;
    rec.u.code_zone.name.s = "merge: code objects without a zone";
    rec.u.code_zone.name.len = strlen(rec.u.code_zone.name.s);
    return emit(m, &rec);
oom:
    free(hs);
    strv_free(&keep);
    return nomem(m);
}

/* ---- stacks -------------------------------------------------------------------------------- */

static uint32_t intern_node(merger *m,
                            uint32_t parent,
                            int is_fn,
                            uint64_t value,
                            int has_bcpc,
                            uint64_t bcpc,
                            vmp_status *st)
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
        *st = nomem(m);
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
    *st = emit(m, &rec);
    return *st < 0 ? 0 : id;
}

/* The output function standing for resolved native function `af`. */
static uint32_t native_fn(merger *m, vmp_analysis *a, uint32_t af, vmp_status *st)
{
    int fresh;
    uint32_t id = map_id(&m->natives, af, &m->next_fn, &fresh);
    vmp_record rec;
    const vmp_afunction *f = vmp_analysis_function(a, af);
    if (!id) {
        *st = nomem(m);
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
    *st = emit(m, &rec);
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
        v = map_id(&m->fns, id, &m->next_fn, NULL);
        if (!v)
            *st = nomem(m);
        return v;
    }
    v = vmp_hmap__get(&m->fns, id, 3);
    if (v)
        return v;
    v = m->next_fn++;
    if (vmp_hmap__put(&m->fns, id, 3, v)) {
        *st = nomem(m);
        return 0;
    }
    snprintf(name, sizeof name, "function#%" PRIu64, id);
    memset(&rec, 0, sizeof rec);
    rec.type = VMP_REC_FUNCTION;
    rec.u.function.id = v;
    rec.u.function.name.s = name;
    rec.u.function.name.len = strlen(name);
    rec.u.function.scope.s = rec.u.function.signature.s = rec.u.function.file.s = "";
    *st = emit(m, &rec);
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
static uint32_t out_level(merger *m,
                          vmp_analysis *a,
                          uint32_t parent,
                          const innode *n,
                          uint64_t pc,
                          uint32_t as,
                          int leaf,
                          vmp_status *st)
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
            *st = nomem(m);
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
            *st = nomem(m);
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
    uint32_t v = map_id(&m->threads, id, &m->next_thread, &fresh);
    if (id && !v)
        *st = nomem(m);
    return v;
}

/* A thread named only by samples or events keeps its name ("thread#ID" of
 * the input) through a THREAD record, written when the input ends so that a
 * THREAD record of the input, wherever it is, stays the thread's only name. */
static vmp_status name_threads(merger *m)
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
        st = emit(m, &rec);
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
        return nomem(m);
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
        return nomem(m);
    om = &m->omods[m->n_omods];
    memset(om, 0, sizeof *om);
    if (mod->build_id_size) {
        om->build_id = malloc(mod->build_id_size);
        if (!om->build_id)
            return nomem(m);
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
    return emit(m, rec);
}

static vmp_status take_record(
    merger *m, input *in, vmp_analysis *a, vmp_record *rec, const vmp_asample *as)
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
            return nomem(m);
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
            !(rec->u.function.id = map_id(&m->fns, in_id, &m->next_fn, NULL)))
            return nomem(m);
        break;
    }
    case VMP_REC_CODE_ZONE: {
        int fresh;
        uint32_t id = map_id(&m->zones, rec->u.code_zone.id, &m->next_zone, &fresh);
        if (!id)
            return nomem(m);
        if (!fresh)
            return VMP_OK; /* defined twice (R-ID-1): keep the first */
        if (vmp_grow__((void **)&m->in_zones, &m->cap_in_zones, m->n_in_zones + 1,
                       sizeof *m->in_zones))
            return nomem(m);
        m->in_zones[m->n_in_zones++] = id;
        rec->u.code_zone.id = id;
        break;
    }
    case VMP_REC_CODE_OBJECT: {
        vmp_rec_code_object *c = &rec->u.code_object;
        int fresh;
        c->id = map_id(&m->codes, c->id, &m->next_code, &fresh);
        if (!c->id)
            return nomem(m);
        if (!fresh)
            return VMP_OK;
        c->zone = c->zone ? vmp_hmap__get(&m->zones, c->zone, 0) : 0;
        if (!c->zone)
            c->zone = m->boundary_zone;
        c->kind = remap_vocab(in, V_KINDS, c->kind);
        if (c->tier)
            c->tier = remap_vocab(in, V_TIERS, c->tier - 1) + 1;
        if (c->function && !(c->function = map_id(&m->fns, c->function, &m->next_fn, NULL)))
            return nomem(m);
        note_gen(in, c->generation);
        c->generation += in->base;
        if (c->time_ns)
            c->time_ns += sh;
        if (remap_inlines(m, &c->inlines, c->n_inlines))
            return nomem(m);
        break;
    }
    case VMP_REC_CODE_MAP: { /* the maps of a code object of this input */
        vmp_rec_code_map *c = &rec->u.code_map;
        c->id = c->id ? vmp_hmap__get(&m->codes, c->id, 0) : 0;
        if (!c->id)
            return VMP_OK; /* unknown code: a reader ignores it (R-CODE-3) */
        if (remap_inlines(m, &c->inlines, c->n_inlines))
            return nomem(m);
        break;
    }
    case VMP_REC_CODE_SNAPSHOT: {
        vmp_rec_code_snapshot *s = &rec->u.code_snapshot;
        if (ensure_tmp(m, 2 * s->n))
            return nomem(m);
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
        if (ensure_tmp(m, 2 * c->n_moves + c->n_frees))
            return nomem(m);
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
            return nomem(m);
        if (vmp_idmap__put(&m->node_ids, r->id, (uint32_t)m->n_nodes + 1))
            return nomem(m);
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
            s->kind = remap_vocab(in, V_SAMPLE_KINDS, s->kind - 1) + 1;
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
                    return nomem(m);
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
        s->state = remap_vocab(in, V_STATES, s->state);
        if (rec->type == VMP_REC_FAILED_SAMPLE)
            s->reason = remap_vocab(in, V_REASONS, s->reason);
        note_gen(in, s->generation);
        s->generation += in->base;
        s->blame = s->blame ? map_code(m, s->blame) : 0;
        s->time_ns += sh;
        break;
    }
    case VMP_REC_EVENT: {
        vmp_rec_event *e = &rec->u.event;
        e->kind = remap_vocab(in, V_EVENTS, e->kind);
        e->thread = map_thread(m, e->thread, &st);
        if (st < 0)
            return st;
        e->time_ns += sh;
        break;
    }
    case VMP_REC_COUNTER:
        rec->u.counter.kind = remap_vocab(in, V_COUNTERS, rec->u.counter.kind);
        rec->u.counter.time_ns += sh;
        break;
    default:
        return VMP_OK;
    }
    return emit(m, rec);
}

/* Free every code object of the input just merged: an empty snapshot of each
 * of its zones and of the merge's own zone, each at a generation of its own
 * (spec R-GEN-1), after the input's last generation. */
static vmp_status close_input(merger *m, input *in, uint64_t *cur)
{
    vmp_record rec;
    size_t i;
    vmp_status st;
    *cur = in->base + in->max_gen;
    memset(&rec, 0, sizeof rec);
    rec.type = VMP_REC_CODE_SNAPSHOT;
    for (i = 0; i <= m->n_in_zones; i++) {
        rec.u.code_snapshot.zone = i < m->n_in_zones ? m->in_zones[i] : m->boundary_zone;
        rec.u.code_snapshot.generation = ++*cur;
        st = emit(m, &rec);
        if (st < 0)
            return st;
    }
    return VMP_OK;
}

static void reset_input(merger *m)
{
    vmp_hmap__clear(&m->zones);
    vmp_hmap__clear(&m->codes);
    vmp_hmap__clear(&m->fns);
    vmp_hmap__clear(&m->threads);
    vmp_idmap__clear(&m->node_ids);
    vmp_hmap__clear(&m->memo);
    vmp_hmap__clear(&m->natives);
    m->n_nodes = 0;
    m->n_in_zones = 0;
    m->n_imods = 0;
}

vmp_status vmp_merge_run(vmp_rewrite_stats *stats_out,
                         vmp_record_writer *w,
                         vmp_reader *const *inputs,
                         const char *const *names,
                         size_t n,
                         char *err,
                         size_t err_size)
{
    vmp_analysis_options aopts = VMP_ANALYSIS_OPTIONS_INIT;
    merger m;
    vmp_rewrite_stats stats;
    vmp_status st;
    uint64_t cur = 0;
    size_t i, k;
    memset(&m, 0, sizeof m);
    memset(&stats, 0, sizeof stats);
    m.w = w;
    m.err = err;
    m.err_size = err_size;
    if (err && err_size)
        err[0] = '\0';
    if (!w || !inputs || n == 0) {
        set_err(&m, "invalid arguments");
        return VMP_ERR_INVALID_ARG;
    }
    aopts.flags = VMP_ANALYSIS_ALL_KINDS; /* every kind, each to its own in the output */
    m.next_fn = m.next_zone = m.next_code = m.next_node = m.next_thread = m.next_module = 1;
    m.in = calloc(n, sizeof *m.in);
    m.n_in = n;
    if (!m.in)
        return nomem(&m);
    st = take_headers(&m, inputs, names, n);
    for (i = 0; st >= 0 && i < n; i++) {
        vmp_analysis *a = NULL;
        vmp_record rec;
        input *in = &m.in[i];
        if (i > 0)
            st = close_input(&m, &m.in[i - 1], &cur);
        reset_input(&m);
        in->base = cur;
        if (st >= 0 && vmp_analysis_create(&a, &aopts) < 0)
            st = nomem(&m);
        while (st >= 0 && (st = vmp_reader_next(inputs[i], &rec)) == VMP_OK) {
            vmp_asample as;
            int is_sample = 0;
            stats.records_in++;
            st = vmp_analysis_feed(a, &rec, &as, &is_sample);
            if (st == VMP_ERR_LIMIT) {
                vmp_reader_fail(inputs[i], st, vmp_analysis_errmsg(a));
                set_err(&m, "%s", vmp_reader_errmsg(inputs[i]));
                break;
            }
            if (st < 0) {
                set_err(&m, "%s: chunk %" PRIu64 ": %s", names && names[i] ? names[i] : "input",
                        rec.chunk_index, vmp_status_str(st));
                break;
            }
            is_sample = is_sample && rec.type != VMP_REC_KIND_SAMPLE; /* counted: CPU samples */
            if (is_sample)
                stats.samples_in++;
            st = take_record(&m, in, a, &rec, &as);
            if (st >= 0 && is_sample)
                stats.samples_out++;
        }
        if (st < 0)
            set_err(&m, "%s", vmp_reader_errmsg(inputs[i]));
        else
            st = name_threads(&m);
        vmp_analysis_free(a);
    }
    if (st >= 0) {
        m.end.generation = m.in[n - 1].base + m.in[n - 1].max_gen;
        st = vmp_record_writer_finish(w, &m.end);
        if (st < 0)
            set_err(&m, "%s", vmp_record_writer_errmsg(w));
    }
    for (k = 0; k < N_VOCAB; k++)
        strv_free(&m.vocab[k]);
    strv_free(&m.units);
    strv_free(&m.labels);
    for (i = 0; i < n; i++)
        for (k = 0; k < N_VOCAB; k++)
            free(m.in[i].vmap[k]);
    free(m.in);
    vmp_hmap__free(&m.pc_nodes);
    vmp_hmap__free(&m.fn_nodes);
    vmp_hmap__free(&m.zones);
    vmp_hmap__free(&m.codes);
    vmp_hmap__free(&m.fns);
    vmp_hmap__free(&m.threads);
    vmp_hmap__free(&m.named);
    vmp_hmap__free(&m.memo);
    vmp_hmap__free(&m.natives);
    for (i = 0; i < m.n_omods; i++)
        free(m.omods[i].build_id);
    free(m.omods);
    free(m.imods);
    free(m.nodes);
    vmp_idmap__free(&m.node_ids);
    free(m.in_zones);
    free(m.tmp);
    free(m.tmp_inl);
    free(m.chain_in);
    free(m.chain_as);
    if (stats_out)
        *stats_out = stats;
    return st < 0 ? st : VMP_OK;
}
