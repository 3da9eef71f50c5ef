/* SPDX-License-Identifier: MIT
 *
 * vmp_validate.c - the streaming validator: checks the rules of spec.md §5
 * (ids, generations, code objects, samples, END) on top of what the reader
 * already enforces (§3, §4, §8).
 *
 * Outline: one pass over the records.  Every id space the rules speak of is a
 * hash set (or a map to a code-object slot); each zone keeps its live code
 * objects sorted by start, so an add or move is checked for overlap against
 * its two neighbours (R-GEN-4).  Nothing is kept per sample.
 */
#include "vmp_validate.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    int freed;
} code_slot;

typedef struct live_entry {
    uint64_t start, end, id;
} live_entry;

typedef struct zone_state {
    live_entry *live; /* sorted by start; objects of size 0 are not kept */
    size_t n, cap;
} zone_state;

typedef struct vstate {
    vmp_validate_report *rep;
    const vmp_record *rec;              /* the record being checked */
    idmap nodes, zones, modules, codes; /* zones: id -> index into zone_v */
    code_slot *code_v;
    size_t n_code, cap_code;
    zone_state *zone_v;
    size_t n_zone, cap_zone;
    int have_change;
    uint64_t last_gen; /* generation of the latest change record */
    uint64_t max_sample_gen;
    uint64_t max_sample_gen_chunk, max_sample_gen_offset, max_sample_gen_record;
    uint64_t samples, failed;
    int seen_header, seen_end;
    int nomem;
} vstate;

static const char *const type_names[] = {
    "UNKNOWN",   "HEADER",     "END",         "MODULE",        "MODULE_SYMBOLS",  "THREAD",
    "FUNCTION",  "CODE_ZONE",  "CODE_OBJECT", "CODE_SNAPSHOT", "CODE_COMPACTION", "CODE_FREE",
    "CODE_MOVE", "STACK_NODE", "SAMPLE",      "FAILED_SAMPLE", "EVENT",           "COUNTER"};

static const char *rec_name(const vmp_record *rec)
{
    if (rec->type > 0 && (size_t)rec->type < sizeof type_names / sizeof type_names[0])
        return type_names[rec->type];
    return "UNKNOWN";
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

/* First index whose start >= `start`. */
static size_t live_lower(const zone_state *z, uint64_t start)
{
    size_t lo = 0, hi = z->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (z->live[mid].start < start)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void live_remove(zone_state *z, const code_slot *c)
{
    size_t i;
    if (!z || c->size == 0)
        return;
    for (i = live_lower(z, c->start); i < z->n && z->live[i].start == c->start; i++) {
        if (z->live[i].id == c->id) {
            memmove(&z->live[i], &z->live[i + 1], (z->n - i - 1) * sizeof z->live[0]);
            z->n--;
            return;
        }
    }
}

/* Insert `c` into its zone's live list; R-GEN-4 against the neighbours. */
static int live_insert(vstate *v, zone_state *z, const code_slot *c)
{
    live_entry e = {c->start, end_of(c->start, c->size), c->id};
    size_t i;
    if (!z || c->size == 0)
        return 0;
    i = live_lower(z, e.start);
    if (i > 0 && z->live[i - 1].end > e.start) /* spec R-GEN-4 */
        return fail(v, "R-GEN-4",
                    "code object %llu [0x%llx, 0x%llx) overlaps code object %llu "
                    "[0x%llx, 0x%llx) in zone %llu at generation %llu",
                    (unsigned long long)c->id, (unsigned long long)e.start,
                    (unsigned long long)e.end, (unsigned long long)z->live[i - 1].id,
                    (unsigned long long)z->live[i - 1].start,
                    (unsigned long long)z->live[i - 1].end, (unsigned long long)c->zone,
                    (unsigned long long)v->last_gen);
    if (i < z->n && z->live[i].start < e.end) /* spec R-GEN-4 */
        return fail(v, "R-GEN-4",
                    "code object %llu [0x%llx, 0x%llx) overlaps code object %llu "
                    "[0x%llx, 0x%llx) in zone %llu at generation %llu",
                    (unsigned long long)c->id, (unsigned long long)e.start,
                    (unsigned long long)e.end, (unsigned long long)z->live[i].id,
                    (unsigned long long)z->live[i].start, (unsigned long long)z->live[i].end,
                    (unsigned long long)c->zone, (unsigned long long)v->last_gen);
    if (z->n == z->cap) {
        size_t cap = z->cap ? z->cap * 2 : 16;
        live_entry *p = realloc(z->live, cap * sizeof *p);
        if (!p)
            return oom(v);
        z->live = p;
        z->cap = cap;
    }
    memmove(&z->live[i + 1], &z->live[i], (z->n - i) * sizeof z->live[0]);
    z->live[i] = e;
    z->n++;
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

static int check_code_object(vstate *v, const vmp_rec_code_object *co)
{
    code_slot *c;
    size_t i;
    if (co->zone != 0 && !idmap_find(&v->zones, co->zone)) /* spec R-ID-1 */
        return fail(v, "R-ID-1", "code object %llu names zone %llu, which is not defined before",
                    (unsigned long long)co->id, (unsigned long long)co->zone);
    for (i = 0; i < co->pc_map_len; i++) { /* spec R-CODE-1 */
        uint64_t off = co->pc_map[2 * i];
        if (off >= co->size)
            return fail(v, "R-CODE-1",
                        "code object %llu: pc_map offset %llu is not less than its size %llu",
                        (unsigned long long)co->id, (unsigned long long)off,
                        (unsigned long long)co->size);
    }
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
    c->freed = 0;
    return live_insert(v, zone_of(v, c->zone), c);
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
        for (i = 0; i < z->n; i++) {
            if (!idmap_find(&listed, z->live[i].id))
                v->code_v[*idmap_find(&v->codes, z->live[i].id)].freed = 1;
        }
        for (i = 0; i < v->n_code; i++) {
            code_slot *c = &v->code_v[i];
            if (c->zone == cs->zone && c->size == 0 && !idmap_find(&listed, c->id))
                c->freed = 1;
        }
        z->n = 0;
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

static int check_record(vstate *v, const vmp_record *rec)
{
    v->rec = rec;
    if (v->seen_end) /* spec R-END-2 */
        return fail(v, "R-END-2", "record after the END record (only a seek table may follow)");
    if (!v->seen_header) { /* spec R-HDR-5 */
        if (rec->type != VMP_REC_HEADER || rec->chunk_index != 0)
            return fail(v, "R-HDR-5", "the first record of the file is not a HEADER");
        v->seen_header = 1;
        return 0;
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
    case VMP_REC_CODE_OBJECT:
        return check_code_object(v, &rec->u.code_object);
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
        if (sn->parent != 0 && !idmap_find(&v->nodes, sn->parent)) /* spec R-ID-1 */
            return fail(v, "R-ID-1", "node %llu: parent %llu is not defined before",
                        (unsigned long long)sn->id, (unsigned long long)sn->parent);
        return define_id(v, &v->nodes, sn->id, 0, "stack node");
    }
    case VMP_REC_SAMPLE:
    case VMP_REC_FAILED_SAMPLE: {
        const vmp_rec_sample *s = &rec->u.sample;
        v->samples++;
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

/* The rule behind a corruption the reader reports, recognised by its wording;
 * "" when unknown.  Keep in step with the reader's messages (tests/validate
 * checks each of these). */
static const char *reader_rule(const char *msg)
{
    static const struct {
        const char *text, *rule;
    } rules[] = {
        {"of pc and function", "R-STK-1"},
        {"sample time is negative", "R-SMP-1"},
        {"zstd frame without a content", "R-CHK-1"}, /* size or checksum */
        {"zstd checksum mismatch", "R-CHK-1"},
        {"runs past the end of the chunk", "R-CHK-2"},
        {"not a zstd frame", "R-CHK-4"},
        {"file header frame size", "R-HDR-2"},
        {"first key of the record is not 0", "R-REC-1"},
        {"indefinite-length item", "R-REC-3"},
        {": missing required key", "R-REC-4"},
        {", found ", "R-REC-4"}, /* "type T, key K: expected uint, found tstr" */
    };

    size_t i;
    for (i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        if (strstr(msg, rules[i].text))
            return rules[i].rule;
    }
    return "";
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
    while ((st = vmp_reader_next(r, &rec)) == VMP_OK) {
        out->records++;
        if (rec.type == VMP_REC_SAMPLE || rec.type == VMP_REC_FAILED_SAMPLE)
            out->samples++;
        if (check_record(&v, &rec) < 0)
            break;
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
        switch (st) {
        case VMP_ERR_NOT_VMP:
            out->rule = "R-HDR-1";
            break;
        case VMP_ERR_VERSION:
            out->rule = "R-HDR-3";
            break;
        case VMP_ERR_TRUNCATED:
            out->rule = "R-CHK-3";
            break;
        case VMP_ERR_LIMIT:
            out->rule = "R-LIM-1";
            break;
        default:
            out->rule = reader_rule(vmp_reader_errmsg(r));
            break;
        }
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
        free(v.zone_v[i].live);
    free(v.zone_v);
    free(v.code_v);
    idmap_free(&v.nodes);
    idmap_free(&v.zones);
    idmap_free(&v.modules);
    idmap_free(&v.codes);
    return out->status;
}
