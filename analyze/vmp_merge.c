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
 *
 * This file: errors, vocabularies, id maps, the header, and the run over
 * the inputs; vmp_merge_records.c rewrites each input's records and stacks
 * (vmp_merge_int.h: what the two share).
 */
#include "vmp_rewrite.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_analyze.h"
#include "vmp_analyze_int.h"
#include "vmp_merge_int.h"

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

vmp_status vmp_merge__nomem(merger *m)
{
    set_err(m, "out of memory");
    return VMP_ERR_NOMEM;
}

vmp_status vmp_merge__emit(merger *m, const vmp_record *rec)
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

uint64_t vmp_merge__remap_vocab(const input *in, int which, uint64_t idx)
{
    /* spec R-ID-4: an index past the vocabulary stays a number; keep it past
     * the union too, so that it still shows as a number */
    if (idx < in->n_vmap[which])
        return in->vmap[which][idx];
    return idx;
}

/* ---- id maps ----------------------------------------------------------------------------- */

uint32_t vmp_merge__map_id(vmp_hmap *h, uint64_t id, uint32_t *next, int *fresh)
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

int vmp_merge__ensure_tmp(merger *m, size_t n)
{
    return vmp_grow__((void **)&m->tmp, &m->cap_tmp, n ? n : 1, sizeof *m->tmp);
}

/* The function ids of inline records, renumbered into m->tmp_inl (valid
 * until the next record); `*inlines` then points there.  -1: no memory. */
int vmp_merge__remap_inlines(merger *m, const vmp_rec_inline **inlines, size_t n)
{
    size_t total = 0, i;
    uint64_t *p;
    if (n == 0)
        return 0;
    for (i = 0; i < n; i++)
        total += 2 * (*inlines)[i].depth;
    if (vmp_merge__ensure_tmp(m, total) ||
        vmp_grow__((void **)&m->tmp_inl, &m->cap_tmp_inl, n, sizeof *m->tmp_inl))
        return -1;
    p = m->tmp;
    for (i = 0; i < n; i++) {
        size_t j;
        m->tmp_inl[i] = (*inlines)[i];
        m->tmp_inl[i].frames = p;
        for (j = 0; j < (*inlines)[i].depth; j++) {
            uint64_t f = (*inlines)[i].frames[2 * j];
            p[2 * j] = f ? vmp_merge__map_id(&m->fns, f, &m->next_fn, NULL) : 0;
            p[2 * j + 1] = (*inlines)[i].frames[2 * j + 1];
        }
        p += 2 * (*inlines)[i].depth;
    }
    *inlines = m->tmp_inl;
    return 0;
}

/* ---- the header ------------------------------------------------------------------------------ */

static vmp_status take_headers(merger *m, vmp_reader *const *inputs, const char *const *names,
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
        return vmp_merge__nomem(m);
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
    st = vmp_merge__emit(m, &rec);
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
    return vmp_merge__emit(m, &rec);
oom:
    free(hs);
    strv_free(&keep);
    return vmp_merge__nomem(m);
}

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
        st = vmp_merge__emit(m, &rec);
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

vmp_status vmp_merge_run(vmp_rewrite_stats *stats_out, vmp_record_writer *w,
                         vmp_reader *const *inputs, const char *const *names, size_t n, char *err,
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
        return vmp_merge__nomem(&m);
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
            st = vmp_merge__nomem(&m);
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
            st = vmp_merge__take_record(&m, in, a, &rec, &as);
            if (st >= 0 && is_sample)
                stats.samples_out++;
        }
        if (st < 0)
            set_err(&m, "%s", vmp_reader_errmsg(inputs[i]));
        else
            st = vmp_merge__name_threads(&m);
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
