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
 *
 * This file: the pass over the records (ids, samples, kinds, END) and the
 * id sets; vmp_validate_code.c: code zones and objects across generations.
 */
#include "vmp_grow.h"
#include "vmp_validate_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *vmp_validate__rec_name(const vmp_record *rec)
{
    /* a sample of a block is located at its block (spec R-BLK-1) */
    return vmp_record_type_name(rec->raw_type == VMP_REC_SAMPLE_BLOCK ? VMP_REC_SAMPLE_BLOCK
                                                                      : rec->type);
}

/* Record the first problem, located at the current record; returns -1. */
int vmp_validate__fail(vstate *v, const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

int vmp_validate__fail(vstate *v, const char *rule, const char *fmt, ...)
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
                 (unsigned long long)v->rec->record_offset, vmp_validate__rec_name(v->rec));
    if (n < 0)
        n = 0;
    if ((size_t)n < sizeof rep->message) {
        va_start(ap, fmt);
        vsnprintf(rep->message + n, sizeof rep->message - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int vmp_validate__oom(vstate *v)
{
    v->nomem = 1;
    v->rep->status = VMP_ERR_NOMEM;
    v->rep->rule = "";
    snprintf(v->rep->message, sizeof v->rep->message, "out of memory");
    return -1;
}

uint64_t vmp_validate__end_of(uint64_t start, uint64_t size)
{
    return (size > UINT64_MAX - start) ? UINT64_MAX : start + size;
}

/* ---- An open-addressing hash map uint64 -> uint64 -------------------------- */

static size_t idmap_slot(uint64_t key, size_t cap)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return (size_t)(key & (uint64_t)(cap - 1));
}

uint64_t *vmp_validate__idmap_find(const idmap *m, uint64_t key)
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
int vmp_validate__idmap_put(idmap *m, uint64_t key, uint64_t val)
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

void vmp_validate__idmap_free(idmap *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    memset(m, 0, sizeof *m);
}

static int named_function(vstate *v, uint64_t fn)
{
    vmp_validate_report *rep = v->rep;
    if (fn == 0 || vmp_validate__idmap_find(&v->fns, fn))
        return 0;
    if (vmp_validate__idmap_put(&v->fns, fn, 1) < 0)
        return vmp_validate__oom(v);
    if (rep->late_functions++ == 0)
        snprintf(rep->late_message, sizeof rep->late_message,
                 "chunk %llu @%llu %s names function %llu before its FUNCTION record",
                 (unsigned long long)v->rec->chunk_index, (unsigned long long)v->rec->record_offset,
                 vmp_validate__rec_name(v->rec), (unsigned long long)fn);
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
            return vmp_validate__fail(v, "R-KND-1", "sample kind %zu has an empty name", i + 1);
        if (k->len == 3 && memcmp(k->s, "cpu", 3) == 0)
            return vmp_validate__fail(
                v, "R-KND-1", "sample kind %zu is named \"cpu\", the name of kind 0", i + 1);
    }
    if (n < 2)
        return 0;
    sorted = malloc(n * sizeof *sorted);
    if (!sorted)
        return vmp_validate__oom(v);
    for (i = 0; i < n; i++)
        sorted[i] = &h->sample_kinds[i];
    qsort(sorted, n, sizeof *sorted, cmp_str);
    for (i = 1; i < n && rc == 0; i++)
        if (cmp_str(&sorted[i - 1], &sorted[i]) == 0)
            rc = vmp_validate__fail(v, "R-KND-1", "two sample kinds are named \"%.*s\"",
                                    (int)(sorted[i]->len > 64 ? 64 : sorted[i]->len), sorted[i]->s);
    free(sorted);
    return rc;
}

/* The live code object `id` a CODE_FREE or CODE_MOVE of generation `gen`
 * changes, taken out of its zone's live set; NULL after reporting. */
static code_slot *take_live_code(vstate *v, uint64_t gen, uint64_t id)
{
    code_slot *c;
    if (vmp_validate__change_generation(v, gen) < 0)
        return NULL;
    c = vmp_validate__live_code(v, id, "R-CODE-2");
    if (c)
        vmp_validate__live_remove(vmp_validate__zone_of(v, c->zone), c);
    return c;
}

/* spec R-SMP-3: a sample comes after the change record that made its
 * generation `gen`. */
static int check_sample_generation(vstate *v, uint64_t gen)
{
    uint64_t latest = v->have_change ? v->last_gen : 0;
    if (gen > latest)
        return vmp_validate__fail(v, "R-SMP-3",
                                  "generation %llu exceeds the generation %llu of the latest "
                                  "change record before the sample",
                                  (unsigned long long)gen, (unsigned long long)latest);
    return 0;
}

static int check_record(vstate *v, const vmp_record *rec)
{
    v->rec = rec;
    if (v->seen_end) /* spec R-END-2 */
        return vmp_validate__fail(v, "R-END-2",
                                  "record after the END record (only a seek table may follow)");
    if (!v->seen_header) { /* spec R-HDR-5 */
        if (rec->type != VMP_REC_HEADER || rec->chunk_index != 0)
            return vmp_validate__fail(v, "R-HDR-5", "the first record of the file is not a HEADER");
        v->seen_header = 1;
        return check_kinds(v, &rec->u.header);
    }
    switch (rec->type) {
    case VMP_REC_HEADER: /* spec R-HDR-5 */
        return vmp_validate__fail(v, "R-HDR-5", "second HEADER record (exactly one per file)");
    case VMP_REC_END: {
        const vmp_rec_end *e = &rec->u.end;
        uint64_t final_gen = v->have_change ? v->last_gen : 0;
        v->seen_end = 1;
        if (e->samples != v->samples) /* spec R-END-1 */
            return vmp_validate__fail(
                v, "R-END-1", "samples = %llu, but the file holds %llu samples",
                (unsigned long long)e->samples, (unsigned long long)v->samples);
        if (e->failed != v->failed) /* spec R-END-1 */
            return vmp_validate__fail(v, "R-END-1",
                                      "failed = %llu, but the file holds %llu FAILED_SAMPLEs",
                                      (unsigned long long)e->failed, (unsigned long long)v->failed);
        if (e->kind_samples != v->kind_samples) /* spec R-END-1 */
            return vmp_validate__fail(
                v, "R-END-1", "kind_samples = %llu, but the file holds %llu KIND_SAMPLE records",
                (unsigned long long)e->kind_samples, (unsigned long long)v->kind_samples);
        if (e->chunks != rec->chunk_index) /* spec R-END-1 */
            return vmp_validate__fail(
                v, "R-END-1", "chunks = %llu, but %llu chunks precede the END's chunk",
                (unsigned long long)e->chunks, (unsigned long long)rec->chunk_index);
        if (v->samples > 0 && v->max_sample_gen > final_gen) { /* spec R-SMP-3 */
            vmp_record at = *rec;
            at.type = VMP_REC_SAMPLE;
            at.chunk_index = v->max_sample_gen_chunk;
            at.chunk_offset = v->max_sample_gen_offset;
            at.record_offset = v->max_sample_gen_record;
            v->rec = &at;
            vmp_validate__fail(v, "R-SMP-3", "generation %llu exceeds the final generation %llu",
                               (unsigned long long)v->max_sample_gen,
                               (unsigned long long)final_gen);
            v->rec = rec;
            return -1;
        }
        return 0;
    }
    case VMP_REC_MODULE:
        return vmp_validate__define_id(v, &v->modules, rec->u.module.id, 0, "module");
    case VMP_REC_MODULE_SYMBOLS:
        if (!vmp_validate__idmap_find(&v->modules, rec->u.module_symbols.module)) /* spec R-ID-1 */
            return vmp_validate__fail(v, "R-ID-1", "module %llu is not defined before",
                                      (unsigned long long)rec->u.module_symbols.module);
        return 0;
    case VMP_REC_CODE_ZONE:
        if (v->n_zone == v->cap_zone && vmp_grow(&v->zone_v, &v->cap_zone, sizeof *v->zone_v, 8))
            return vmp_validate__oom(v);
        if (vmp_validate__define_id(v, &v->zones, rec->u.code_zone.id, (uint64_t)v->n_zone,
                                    "zone") < 0)
            return -1;
        memset(&v->zone_v[v->n_zone++], 0, sizeof v->zone_v[0]);
        return 0;
    case VMP_REC_FUNCTION: /* spec R-ID-5: a second definition is accepted */
        if (!vmp_validate__idmap_find(&v->fns, rec->u.function.id) &&
            vmp_validate__idmap_put(&v->fns, rec->u.function.id, 0) < 0)
            return vmp_validate__oom(v);
        return 0;
    case VMP_REC_CODE_OBJECT:
        if (named_inline_functions(v, rec->u.code_object.inlines, rec->u.code_object.n_inlines) < 0)
            return -1;
        return vmp_validate__check_code_object(v, &rec->u.code_object);
    case VMP_REC_CODE_MAP:
        if (named_inline_functions(v, rec->u.code_map.inlines, rec->u.code_map.n_inlines) < 0)
            return -1;
        return vmp_validate__check_code_map(v, &rec->u.code_map);
    case VMP_REC_CODE_SNAPSHOT:
        return vmp_validate__check_snapshot(v, &rec->u.code_snapshot);
    case VMP_REC_CODE_COMPACTION:
        return vmp_validate__check_compaction(v, &rec->u.code_compaction);
    case VMP_REC_CODE_FREE: {
        code_slot *c = take_live_code(v, rec->u.code_free.generation, rec->u.code_free.id);
        if (!c)
            return -1;
        c->freed = 1;
        return 0;
    }
    case VMP_REC_CODE_MOVE: {
        code_slot *c = take_live_code(v, rec->u.code_move.generation, rec->u.code_move.id);
        if (!c)
            return -1;
        c->start = rec->u.code_move.new_start;
        return vmp_validate__live_insert(v, vmp_validate__zone_of(v, c->zone), c);
    }
    case VMP_REC_STACK_NODE: {
        const vmp_rec_stack_node *sn = &rec->u.stack_node;
        if (sn->is_function && named_function(v, sn->function) < 0)
            return -1;
        if (sn->parent != 0 && !vmp_validate__idmap_find(&v->nodes, sn->parent)) /* spec R-ID-1 */
            return vmp_validate__fail(v, "R-ID-1", "node %llu: parent %llu is not defined before",
                                      (unsigned long long)sn->id, (unsigned long long)sn->parent);
        return vmp_validate__define_id(v, &v->nodes, sn->id, 0, "stack node");
    }
    case VMP_REC_KIND_SAMPLE: {
        const vmp_rec_sample *s = &rec->u.sample;
        v->kind_samples++;
        if (s->kind == 0 || s->kind > v->n_kinds) /* spec R-KND-2 */
            return vmp_validate__fail(v, "R-KND-2",
                                      "kind %llu is not a kind the HEADER declares (%llu kinds)",
                                      (unsigned long long)s->kind, (unsigned long long)v->n_kinds);
        if (s->stack != 0 && !vmp_validate__idmap_find(&v->nodes, s->stack)) /* spec R-ID-1 */
            return vmp_validate__fail(v, "R-ID-1", "stack node %llu is not defined before",
                                      (unsigned long long)s->stack);
        return check_sample_generation(v, s->generation);
    }
    case VMP_REC_SAMPLE:
    case VMP_REC_FAILED_SAMPLE: {
        const vmp_rec_sample *s = &rec->u.sample;
        v->samples++;
        if (rec->raw_type == VMP_REC_SAMPLE_BLOCK && v->major < 2) /* spec R-BLK-4 */
            return vmp_validate__fail(
                v, "R-BLK-4", "a SAMPLE_BLOCK in a file of format %u.x (blocks are 2.0)", v->major);
        if (rec->type == VMP_REC_FAILED_SAMPLE) {
            v->failed++;
        } else {
            if (s->stack != 0 && !vmp_validate__idmap_find(&v->nodes, s->stack)) /* spec R-ID-1 */
                return vmp_validate__fail(v, "R-ID-1", "stack node %llu is not defined before",
                                          (unsigned long long)s->stack);
            if (s->blame != 0 && !vmp_validate__idmap_find(&v->codes, s->blame)) /* spec R-ID-1 */
                return vmp_validate__fail(v, "R-ID-1",
                                          "blame names code object %llu, which is not defined "
                                          "before",
                                          (unsigned long long)s->blame);
        }
        if (check_sample_generation(v, s->generation) < 0)
            return -1;
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
                vmp_validate__fail(&v, "R-BLK-5",
                                   "a sample names a sample context that is not defined before");
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
    vmp_validate__idmap_free(&v.nodes);
    vmp_validate__idmap_free(&v.zones);
    vmp_validate__idmap_free(&v.modules);
    vmp_validate__idmap_free(&v.codes);
    vmp_validate__idmap_free(&v.fns);
    return out->status;
}
