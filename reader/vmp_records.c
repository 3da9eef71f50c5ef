/* SPDX-License-Identifier: MIT
 *
 * vmp_records.c - decode one record of a chunk into a vmp_record (spec.md §5,
 * R-REC-1..4, R-STK-1, R-SMP-1; §8 limits).
 *
 * Each record type has a table of its known keys: the CBOR type each value
 * must have, where it goes in the record, and whether it is required.  Keys a
 * table does not list are skipped whole and counted; records of unknown types
 * are skipped whole and delivered as VMP_REC_UNKNOWN.  Strings and arrays are
 * copied into the per-record arena; their sizes were checked by the token
 * layer against the bytes left and the items limit before any allocation.
 */
#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include "vmp_reader_int.h"

typedef enum field_kind {
    F_U64,     /* uint -> uint64_t at off */
    F_U64_HAS, /* uint -> uint64_t at off, int flag at off2 */
    F_I64_HAS, /* int -> int64_t at off, int flag at off2 (off2 == NO_OFF: none) */
    F_DELTA,   /* int: a sample's time delta (R-SMP-1) */
    F_STR,     /* tstr -> vmp_str at off */
    F_BSTR,    /* bstr -> const uint8_t * at off, size_t at off2 */
    F_U64S,    /* array of uint, flat groups of `mult` -> pointer at off, groups at off2 */
    F_PCMAP,   /* flat pairs (mcpc delta, bcpc): deltas undone */
    F_STRS,    /* array of tstr -> const vmp_str * at off, count at off2 */
    F_LABELS,  /* map tstr -> tstr -> const vmp_str * at off, pairs at off2 */
    F_SYMBOLS, /* flat triples (uint, uint, tstr) -> const vmp_rec_symbol * at off */
    F_INLINE   /* array of [offset, f, b, ...] -> const vmp_rec_inline * at off */
} field_kind;

#define NO_OFF ((size_t)-1)

typedef struct field {
    uint8_t key;
    uint8_t kind;
    uint8_t required;
    uint8_t mult;
    size_t off;
    size_t off2;
} field;

#define OFF(m) offsetof(vmp_record, u.m)
#define U(k, m)                        \
    {                                  \
        k, F_U64, 0, 1, OFF(m), NO_OFF \
    }
#define UREQ(k, m)                     \
    {                                  \
        k, F_U64, 1, 1, OFF(m), NO_OFF \
    }
#define S(k, m)                        \
    {                                  \
        k, F_STR, 0, 1, OFF(m), NO_OFF \
    }
#define X(k, kind, mult, m, n)           \
    {                                    \
        k, kind, 0, mult, OFF(m), OFF(n) \
    }
#define END_FIELDS       \
    {                    \
        0, 0, 0, 0, 0, 0 \
    }

static const field header_fields[] = {
    S(VMP_HDR_PRODUCER, header.producer),
    S(VMP_HDR_VM_NAME, header.vm_name),
    S(VMP_HDR_VM_VERSION, header.vm_version),
    U(VMP_HDR_PID, header.pid),
    U(VMP_HDR_START_REALTIME, header.start_realtime_ns),
    S(VMP_HDR_CLOCK, header.clock),
    U(VMP_HDR_CLOCK_RES, header.clock_res_ns),
    U(VMP_HDR_INTERVAL, header.interval_ns),
    U(VMP_HDR_POINTER_SIZE, header.pointer_size),
    X(VMP_HDR_STATES, F_STRS, 1, header.states, header.n_states),
    X(VMP_HDR_CODE_KINDS, F_STRS, 1, header.code_kinds, header.n_code_kinds),
    X(VMP_HDR_TIERS, F_STRS, 1, header.tiers, header.n_tiers),
    X(VMP_HDR_EVENT_KINDS, F_STRS, 1, header.event_kinds, header.n_event_kinds),
    X(VMP_HDR_COUNTER_KINDS, F_STRS, 1, header.counter_kinds, header.n_counter_kinds),
    X(VMP_HDR_FAILURE_REASONS, F_STRS, 1, header.failure_reasons, header.n_failure_reasons),
    X(VMP_HDR_LABELS, F_LABELS, 1, header.labels, header.n_labels),
    U(VMP_HDR_START_MONOTONIC, header.start_monotonic_ns),
    S(VMP_HDR_NAME_SEPARATOR, header.name_separator),
    END_FIELDS,
};

static const field end_fields[] = {
    U(VMP_END_TIME, end.time_ns),
    U(VMP_END_SAMPLES, end.samples),
    U(VMP_END_DROPPED_FULL, end.dropped_full),
    U(VMP_END_DROPPED_WRITE, end.dropped_write),
    U(VMP_END_FAILED, end.failed),
    U(VMP_END_CHUNKS, end.chunks),
    U(VMP_END_TRUNCATED_STACKS, end.truncated_stacks),
    U(VMP_END_GENERATION, end.generation),
    END_FIELDS,
};

static const field module_fields[] = {
    UREQ(VMP_MOD_ID, module.id),
    S(VMP_MOD_PATH, module.path),
    X(VMP_MOD_BUILD_ID, F_BSTR, 1, module.build_id, module.build_id_size),
    U(VMP_MOD_BIAS, module.bias),
    U(VMP_MOD_START, module.start),
    U(VMP_MOD_END, module.end),
    END_FIELDS,
};

static const field module_symbols_fields[] = {
    UREQ(VMP_SYMS_MODULE, module_symbols.module),
    X(VMP_SYMS_LIST, F_SYMBOLS, 3, module_symbols.symbols, module_symbols.n_symbols),
    END_FIELDS,
};

static const field thread_fields[] = {
    UREQ(VMP_THR_ID, thread.id),
    S(VMP_THR_NAME, thread.name),
    U(VMP_THR_TIME, thread.time_ns),
    U(VMP_THR_END_TIME, thread.end_time_ns),
    END_FIELDS,
};

static const field function_fields[] = {
    UREQ(VMP_FN_ID, function.id),
    S(VMP_FN_NAME, function.name),
    S(VMP_FN_SCOPE, function.scope),
    S(VMP_FN_SIGNATURE, function.signature),
    S(VMP_FN_FILE, function.file),
    U(VMP_FN_LINE, function.first_line),
    X(VMP_FN_LINES, F_U64S, 2, function.lines, function.n_lines),
    U(VMP_FN_BC_SIZE, function.bytecode_size),
    END_FIELDS,
};

static const field code_zone_fields[] = {
    UREQ(VMP_ZONE_ID, code_zone.id),
    S(VMP_ZONE_NAME, code_zone.name),
    U(VMP_ZONE_START, code_zone.start),
    U(VMP_ZONE_END, code_zone.end),
    END_FIELDS,
};

static const field code_object_fields[] = {
    UREQ(VMP_CODE_ID, code_object.id),
    U(VMP_CODE_ZONE, code_object.zone),
    U(VMP_CODE_KIND, code_object.kind),
    S(VMP_CODE_NAME, code_object.name),
    U(VMP_CODE_FUNCTION, code_object.function),
    UREQ(VMP_CODE_START, code_object.start),
    UREQ(VMP_CODE_SIZE, code_object.size),
    U(VMP_CODE_GENERATION, code_object.generation),
    U(VMP_CODE_TIER, code_object.tier),
    X(VMP_CODE_PC_MAP, F_PCMAP, 2, code_object.pc_map, code_object.pc_map_len),
    X(VMP_CODE_INLINE, F_INLINE, 1, code_object.inlines, code_object.n_inlines),
    U(VMP_CODE_TIME, code_object.time_ns),
    END_FIELDS,
};

static const field code_map_fields[] = {
    UREQ(VMP_CMAP_ID, code_map.id),
    X(VMP_CMAP_PC_MAP, F_PCMAP, 2, code_map.pc_map, code_map.pc_map_len),
    X(VMP_CMAP_INLINE, F_INLINE, 1, code_map.inlines, code_map.n_inlines),
    END_FIELDS,
};

static const field code_snapshot_fields[] = {
    UREQ(VMP_SNAP_ZONE, code_snapshot.zone),
    UREQ(VMP_SNAP_GENERATION, code_snapshot.generation),
    X(VMP_SNAP_ENTRIES, F_U64S, 2, code_snapshot.entries, code_snapshot.n),
    U(VMP_SNAP_TIME, code_snapshot.time_ns),
    END_FIELDS,
};

static const field code_compaction_fields[] = {
    UREQ(VMP_COMP_ZONE, code_compaction.zone),
    UREQ(VMP_COMP_GENERATION, code_compaction.generation),
    X(VMP_COMP_MOVES, F_U64S, 2, code_compaction.moves, code_compaction.n_moves),
    X(VMP_COMP_FREES, F_U64S, 1, code_compaction.frees, code_compaction.n_frees),
    U(VMP_COMP_TIME, code_compaction.time_ns),
    U(VMP_COMP_DURATION, code_compaction.duration_ns),
    END_FIELDS,
};

static const field code_free_fields[] = {
    UREQ(VMP_FREE_GENERATION, code_free.generation),
    UREQ(VMP_FREE_ID, code_free.id),
    U(VMP_FREE_TIME, code_free.time_ns),
    END_FIELDS,
};

static const field code_move_fields[] = {
    UREQ(VMP_MOVE_GENERATION, code_move.generation),
    UREQ(VMP_MOVE_ID, code_move.id),
    UREQ(VMP_MOVE_START, code_move.new_start),
    U(VMP_MOVE_TIME, code_move.time_ns),
    END_FIELDS,
};

static const field stack_node_fields[] = {
    UREQ(VMP_NODE_ID, stack_node.id),
    U(VMP_NODE_PARENT, stack_node.parent),
    U(VMP_NODE_PC, stack_node.pc),
    X(VMP_NODE_FUNCTION, F_U64_HAS, 1, stack_node.function, stack_node.is_function),
    X(VMP_NODE_BCPC, F_U64_HAS, 1, stack_node.bcpc, stack_node.has_bcpc),
    END_FIELDS,
};

static const field sample_fields[] = {
    {VMP_SMP_TIME_DELTA, F_DELTA, 0, 1, NO_OFF, NO_OFF},
    U(VMP_SMP_THREAD, sample.thread),
    U(VMP_SMP_STATE, sample.state),
    X(VMP_SMP_PC, F_U64_HAS, 1, sample.pc, sample.has_pc),
    U(VMP_SMP_GENERATION, sample.generation),
    U(VMP_SMP_STACK, sample.stack),
    U(VMP_SMP_WEIGHT, sample.weight),
    U(VMP_SMP_BLAME, sample.blame),
    U(VMP_SMP_REASON, sample.reason),
    END_FIELDS,
};

static const field event_fields[] = {
    U(VMP_EVT_TIME, event.time_ns),
    U(VMP_EVT_KIND, event.kind),
    U(VMP_EVT_DURATION, event.duration_ns),
    U(VMP_EVT_THREAD, event.thread),
    X(VMP_EVT_VALUE, F_I64_HAS, 1, event.value, event.has_value),
    S(VMP_EVT_TEXT, event.text),
    END_FIELDS,
};

static const field counter_fields[] = {
    U(VMP_CTR_TIME, counter.time_ns),
    U(VMP_CTR_KIND, counter.kind),
    {VMP_CTR_VALUE, F_I64_HAS, 0, 1, OFF(counter.value), NO_OFF},
    END_FIELDS,
};

static const field *fields_of(uint64_t type)
{
    switch (type) {
    case VMP_REC_HEADER:
        return header_fields;
    case VMP_REC_END:
        return end_fields;
    case VMP_REC_MODULE:
        return module_fields;
    case VMP_REC_MODULE_SYMBOLS:
        return module_symbols_fields;
    case VMP_REC_THREAD:
        return thread_fields;
    case VMP_REC_FUNCTION:
        return function_fields;
    case VMP_REC_CODE_ZONE:
        return code_zone_fields;
    case VMP_REC_CODE_OBJECT:
        return code_object_fields;
    case VMP_REC_CODE_MAP:
        return code_map_fields;
    case VMP_REC_CODE_SNAPSHOT:
        return code_snapshot_fields;
    case VMP_REC_CODE_COMPACTION:
        return code_compaction_fields;
    case VMP_REC_CODE_FREE:
        return code_free_fields;
    case VMP_REC_CODE_MOVE:
        return code_move_fields;
    case VMP_REC_STACK_NODE:
        return stack_node_fields;
    case VMP_REC_SAMPLE:
    case VMP_REC_FAILED_SAMPLE:
        return sample_fields;
    case VMP_REC_EVENT:
        return event_fields;
    case VMP_REC_COUNTER:
        return counter_fields;
    default:
        return NULL;
    }
}

/* ---- decoding state ------------------------------------------------------ */

typedef struct dec {
    vmp_reader *r;
    vmp_cbor_parser *p;
    vmp_record *rec;
    uint64_t type;
    uint64_t key;
    int has_delta, delta_neg;
    uint64_t delta_mag; /* |time_delta|; meaningful when has_delta */
} dec;

static void put(vmp_record *rec, size_t off, const void *v, size_t n)
{
    memcpy((char *)rec + off, v, n);
}

static void put_u64(vmp_record *rec, size_t off, uint64_t v)
{
    put(rec, off, &v, sizeof v);
}

static void put_size(vmp_record *rec, size_t off, size_t v)
{
    put(rec, off, &v, sizeof v);
}

static void put_int(vmp_record *rec, size_t off, int v)
{
    put(rec, off, &v, sizeof v);
}

static void put_ptr(vmp_record *rec, size_t off, const void *v)
{
    put(rec, off, &v, sizeof v);
}

static vmp_status nomem(dec *d)
{
    return vmp_cbor_fail(d->p, VMP_ERR_NOMEM, "out of memory");
}

static vmp_status wrong_type(dec *d, const char *want, const vmp_cbor_token *t)
{
    /* spec R-REC-4, R-REC-3 */
    return vmp_cbor_fail(d->p, VMP_ERR_CORRUPT,
                         "type %" PRIu64 ", key %" PRIu64 ": expected %s, found %s", d->type,
                         d->key, want, vmp_cbor_kind_name(t->kind));
}

static vmp_status next_of(dec *d, vmp_cbor_kind kind, vmp_cbor_token *t)
{
    vmp_status st = vmp_cbor_next(d->p, t);

    if (st < 0)
        return st;
    if (t->kind != kind)
        return wrong_type(d, vmp_cbor_kind_name(kind), t);
    return VMP_OK;
}

static vmp_status read_uint(dec *d, uint64_t *v)
{
    vmp_cbor_token t;
    vmp_status st = next_of(d, VMP_CBOR_UINT, &t);

    if (st < 0)
        return st;
    *v = t.u;
    return VMP_OK;
}

/* An int as sign and magnitude: value = neg ? -mag : mag (mag may be 2^64
 * only for -2^64, which is reported as out of range by every caller). */
static vmp_status read_int(dec *d, int *neg, uint64_t *mag, int *mag_overflow)
{
    vmp_cbor_token t;
    vmp_status st = vmp_cbor_next(d->p, &t);

    if (st < 0)
        return st;
    *mag_overflow = 0;
    if (t.kind == VMP_CBOR_UINT) {
        *neg = 0;
        *mag = t.u;
    } else if (t.kind == VMP_CBOR_NEGINT) {
        *neg = 1;
        *mag = t.u + 1;
        *mag_overflow = t.u == UINT64_MAX;
    } else {
        return wrong_type(d, "int", &t);
    }
    return VMP_OK;
}

static vmp_status copy_str(dec *d, const vmp_cbor_token *t, vmp_str *out)
{
    char *s = vmp_rd_arena_alloc(d->r, (size_t)t->u + 1);

    if (s == NULL)
        return nomem(d);
    if (t->u > 0)
        memcpy(s, t->ptr, (size_t)t->u);
    s[t->u] = '\0';
    out->s = s;
    out->len = (size_t)t->u;
    return VMP_OK;
}

static vmp_status read_str(dec *d, vmp_str *out)
{
    vmp_cbor_token t;
    vmp_status st = next_of(d, VMP_CBOR_TSTR, &t);

    if (st < 0)
        return st;
    return copy_str(d, &t, out);
}

/* Read an array head at nesting `depth` (its own level) and check that its
 * item count is a multiple of `mult`. */
static vmp_status read_array(dec *d, uint32_t depth, unsigned mult, uint64_t *n)
{
    vmp_cbor_token t;
    vmp_status st = next_of(d, VMP_CBOR_ARRAY, &t);

    if (st < 0)
        return st;
    if (depth > d->p->max_nesting)
        return vmp_cbor_fail(d->p, VMP_ERR_LIMIT, "nesting deeper than the limit %u",
                             (unsigned)d->p->max_nesting);
    if (t.u % mult != 0)
        return vmp_cbor_fail(d->p, VMP_ERR_CORRUPT,
                             "type %" PRIu64 ", key %" PRIu64 ": array of %" PRIu64
                             " items is not a list of %u-tuples",
                             d->type, d->key, t.u, mult);
    *n = t.u;
    return VMP_OK;
}

/* What an empty or absent array points to: arrays are never NULL, so that
 * callers may memcpy() count-0 arrays without undefined behaviour. */
static const union {
    uint64_t u;
    vmp_str s;
    vmp_rec_symbol sym;
    vmp_rec_inline inl;
} empty_items;

/* Arena space for n items of `size` bytes; n is backed by input bytes. */
static void *alloc_items(dec *d, uint64_t n, size_t size)
{
    if (n == 0)
        return (void *)&empty_items;
    if (n > SIZE_MAX / size)
        return NULL;
    return vmp_rd_arena_alloc(d->r, (size_t)n * size);
}

static vmp_status read_u64s(dec *d, const field *f, int undelta)
{
    uint64_t n, i, sum = 0;
    uint64_t *v;
    vmp_status st = read_array(d, 2, f->mult, &n);

    if (st < 0)
        return st;
    v = alloc_items(d, n, sizeof *v);
    if (n > 0 && v == NULL)
        return nomem(d);
    for (i = 0; i < n; i++) {
        st = read_uint(d, &v[i]);
        if (st < 0)
            return st;
        /* spec §5.7: pc_map holds (mcpc delta, bcpc) pairs */
        if (undelta && i % 2 == 0) {
            if (v[i] > UINT64_MAX - sum)
                return vmp_cbor_fail(d->p, VMP_ERR_CORRUPT,
                                     "type %" PRIu64 ", key %" PRIu64 ": pc map offset overflows",
                                     d->type, d->key);
            sum += v[i];
            v[i] = sum;
        }
    }
    put_ptr(d->rec, f->off, v);
    put_size(d->rec, f->off2, (size_t)(n / f->mult));
    return VMP_OK;
}

static vmp_status read_strs(dec *d, const field *f)
{
    uint64_t n, i;
    vmp_str *v;
    vmp_status st = read_array(d, 2, 1, &n);

    if (st < 0)
        return st;
    v = alloc_items(d, n, sizeof *v);
    if (n > 0 && v == NULL)
        return nomem(d);
    for (i = 0; i < n; i++) {
        st = read_str(d, &v[i]);
        if (st < 0)
            return st;
    }
    put_ptr(d->rec, f->off, v);
    put_size(d->rec, f->off2, (size_t)n);
    return VMP_OK;
}

static vmp_status read_labels(dec *d, const field *f)
{
    vmp_cbor_token t;
    uint64_t i;
    vmp_str *v;
    vmp_status st = next_of(d, VMP_CBOR_MAP, &t);

    if (st < 0)
        return st;
    if (2 > d->p->max_nesting)
        return vmp_cbor_fail(d->p, VMP_ERR_LIMIT, "nesting deeper than the limit %u",
                             (unsigned)d->p->max_nesting);
    v = alloc_items(d, 2 * t.u, sizeof *v); /* t.u <= items limit, checked */
    if (t.u > 0 && v == NULL)
        return nomem(d);
    for (i = 0; i < 2 * t.u; i++) {
        st = read_str(d, &v[i]);
        if (st < 0)
            return st;
    }
    put_ptr(d->rec, f->off, v);
    put_size(d->rec, f->off2, (size_t)t.u);
    return VMP_OK;
}

static vmp_status read_symbols(dec *d, const field *f)
{
    uint64_t n, i;
    vmp_rec_symbol *v;
    vmp_status st = read_array(d, 2, 3, &n);

    if (st < 0)
        return st;
    v = alloc_items(d, n / 3, sizeof *v);
    if (n > 0 && v == NULL)
        return nomem(d);
    for (i = 0; i < n / 3; i++) {
        if ((st = read_uint(d, &v[i].value)) < 0 || (st = read_uint(d, &v[i].size)) < 0 ||
            (st = read_str(d, &v[i].name)) < 0)
            return st;
    }
    put_ptr(d->rec, f->off, v);
    put_size(d->rec, f->off2, (size_t)(n / 3));
    return VMP_OK;
}

static vmp_status read_inlines(dec *d, const field *f)
{
    uint64_t n, i, j;
    vmp_rec_inline *v;
    vmp_status st = read_array(d, 2, 1, &n);

    if (st < 0)
        return st;
    v = alloc_items(d, n, sizeof *v);
    if (n > 0 && v == NULL)
        return nomem(d);
    for (i = 0; i < n; i++) {
        uint64_t m;
        uint64_t *frames;

        st = read_array(d, 3, 1, &m);
        if (st < 0)
            return st;
        /* spec §5.7: [offset, f1, b1, f2, b2, ...] */
        if (m % 2 != 1)
            return vmp_cbor_fail(d->p, VMP_ERR_CORRUPT,
                                 "type %" PRIu64 ", key %" PRIu64 ": inline record of %" PRIu64
                                 " items is not [offset, pairs...]",
                                 d->type, d->key, m);
        st = read_uint(d, &v[i].mcpc_offset);
        if (st < 0)
            return st;
        frames = alloc_items(d, m - 1, sizeof *frames);
        if (m > 1 && frames == NULL)
            return nomem(d);
        for (j = 0; j + 1 < m; j++) {
            st = read_uint(d, &frames[j]);
            if (st < 0)
                return st;
        }
        v[i].frames = frames;
        v[i].depth = (size_t)((m - 1) / 2);
    }
    put_ptr(d->rec, f->off, v);
    put_size(d->rec, f->off2, (size_t)n);
    return VMP_OK;
}

static vmp_status read_field(dec *d, const field *f)
{
    vmp_cbor_token t;
    uint64_t u;
    vmp_status st;

    switch ((field_kind)f->kind) {
    case F_U64:
    case F_U64_HAS:
        st = read_uint(d, &u);
        if (st < 0)
            return st;
        put_u64(d->rec, f->off, u);
        if (f->kind == F_U64_HAS)
            put_int(d->rec, f->off2, 1);
        return VMP_OK;
    case F_I64_HAS:
    case F_DELTA: {
        int neg = 0, over = 0;
        uint64_t mag = 0;
        int64_t v;

        st = read_int(d, &neg, &mag, &over);
        if (st < 0)
            return st;
        if (f->kind == F_DELTA) {
            d->has_delta = 1;
            d->delta_neg = neg;
            d->delta_mag = over ? UINT64_MAX : mag;
            if (over) /* -2^64 takes any time below 0 (R-SMP-1) */
                return vmp_cbor_fail(d->p, VMP_ERR_CORRUPT, "sample time is negative");
            return VMP_OK;
        }
        if (over || (!neg && mag > (uint64_t)INT64_MAX) || (neg && mag > (uint64_t)INT64_MAX + 1))
            return vmp_cbor_fail(d->p, VMP_ERR_CORRUPT,
                                 "type %" PRIu64 ", key %" PRIu64 ": integer out of range", d->type,
                                 d->key);
        if (!neg)
            v = (int64_t)mag;
        else if (mag == (uint64_t)INT64_MAX + 1)
            v = INT64_MIN;
        else
            v = -(int64_t)mag;
        put(d->rec, f->off, &v, sizeof v);
        if (f->off2 != NO_OFF)
            put_int(d->rec, f->off2, 1);
        return VMP_OK;
    }
    case F_STR: {
        vmp_str s;

        st = read_str(d, &s);
        if (st < 0)
            return st;
        put(d->rec, f->off, &s, sizeof s);
        return VMP_OK;
    }
    case F_BSTR:
        st = next_of(d, VMP_CBOR_BSTR, &t);
        if (st < 0)
            return st;
        /* Points into the chunk, which lives until the next call. */
        put_ptr(d->rec, f->off, t.ptr);
        put_size(d->rec, f->off2, (size_t)t.u);
        return VMP_OK;
    case F_U64S:
        return read_u64s(d, f, 0);
    case F_PCMAP:
        return read_u64s(d, f, 1);
    case F_STRS:
        return read_strs(d, f);
    case F_LABELS:
        return read_labels(d, f);
    case F_SYMBOLS:
        return read_symbols(d, f);
    case F_INLINE:
        return read_inlines(d, f);
    }
    return vmp_cbor_fail(d->p, VMP_ERR_CORRUPT, "internal: unknown field kind");
}

/* Set the defaults of the record's fields; returns the mask of its required
 * keys (bit k: key k) and adds the table's entries to *n_fields. */
static uint64_t set_defaults(vmp_record *rec, const field *fields, size_t *n_fields)
{
    const field *f;
    uint64_t required = 0;

    for (f = fields; f->key != 0; f++) {
        ++*n_fields;
        if (f->required)
            required |= (uint64_t)1 << f->key;
        if (f->kind == F_STR) {
            vmp_str empty = {"", 0};
            put(rec, f->off, &empty, sizeof empty);
        } else if (f->kind >= F_BSTR) {
            put_ptr(rec, f->off, &empty_items);
        }
    }
    switch (rec->type) {
    case VMP_REC_HEADER:
        rec->u.header.pointer_size = 8;
        break;
    case VMP_REC_SAMPLE:
    case VMP_REC_FAILED_SAMPLE:
        rec->u.sample.weight = 1;
        break;
    default:
        break;
    }
    return required;
}

/* The entry of `fields` for `key`, or NULL.  Most tables list keys 1, 2, ...
 * in order, so entry key-1 is tried first. */
static const field *find_field(const field *fields, uint64_t key, size_t n_fields)
{
    const field *f;

    if (key >= 1 && key <= n_fields && fields[key - 1].key == key)
        return &fields[key - 1];
    for (f = fields; f->key != 0 && f->key != key; f++)
        ;
    return f->key != 0 ? f : NULL;
}

/* Bytes of the union member that a record of `type` uses: all of it for an
 * unknown type, which uses none but is delivered zeroed as before. */
static size_t body_size(int type)
{
    vmp_record *rec = NULL;

    switch (type) {
    case VMP_REC_HEADER:
        return sizeof rec->u.header;
    case VMP_REC_END:
        return sizeof rec->u.end;
    case VMP_REC_MODULE:
        return sizeof rec->u.module;
    case VMP_REC_MODULE_SYMBOLS:
        return sizeof rec->u.module_symbols;
    case VMP_REC_THREAD:
        return sizeof rec->u.thread;
    case VMP_REC_FUNCTION:
        return sizeof rec->u.function;
    case VMP_REC_CODE_ZONE:
        return sizeof rec->u.code_zone;
    case VMP_REC_CODE_OBJECT:
        return sizeof rec->u.code_object;
    case VMP_REC_CODE_MAP:
        return sizeof rec->u.code_map;
    case VMP_REC_CODE_SNAPSHOT:
        return sizeof rec->u.code_snapshot;
    case VMP_REC_CODE_COMPACTION:
        return sizeof rec->u.code_compaction;
    case VMP_REC_CODE_FREE:
        return sizeof rec->u.code_free;
    case VMP_REC_CODE_MOVE:
        return sizeof rec->u.code_move;
    case VMP_REC_STACK_NODE:
        return sizeof rec->u.stack_node;
    case VMP_REC_SAMPLE:
    case VMP_REC_FAILED_SAMPLE:
        return sizeof rec->u.sample;
    case VMP_REC_EVENT:
        return sizeof rec->u.event;
    case VMP_REC_COUNTER:
        return sizeof rec->u.counter;
    default:
        return sizeof rec->u;
    }
}

/* Decode the map entries after the type key; `pairs` are left. */
static vmp_status decode_body(
    dec *d, const field *fields, size_t n_fields, uint64_t required, uint64_t pairs)
{
    uint64_t seen = 0; /* bit k: known key k seen */
    uint64_t i;
    const field *f;
    vmp_status st;

    for (i = 0; i < pairs; i++) {
        vmp_cbor_token t;

        st = vmp_cbor_next(d->p, &t);
        if (st < 0)
            return st;
        f = NULL;
        if (t.kind == VMP_CBOR_UINT && fields != NULL)
            f = find_field(fields, t.u, n_fields);
        if (t.kind == VMP_CBOR_UINT && t.u == VMP_KEY_TYPE)
            /* spec R-REC-1: every key at most once */
            return vmp_cbor_fail(d->p, VMP_ERR_CORRUPT, "duplicate key 0 (type)");
        if (f == NULL) {
            /* spec R-REC-2: skip unknown keys whatever their values */
            st = vmp_cbor_skip(d->p, &t, 1);
            if (st < 0)
                return st;
            st = vmp_cbor_next(d->p, &t);
            if (st < 0)
                return st;
            st = vmp_cbor_skip(d->p, &t, 1);
            if (st < 0)
                return st;
            d->rec->unknown_keys++;
            continue;
        }
        d->key = t.u;
        if (seen & ((uint64_t)1 << f->key))
            return vmp_cbor_fail(d->p, VMP_ERR_CORRUPT, "type %" PRIu64 ": duplicate key %" PRIu64,
                                 d->type, d->key);
        seen |= (uint64_t)1 << f->key;
        st = read_field(d, f);
        if (st < 0)
            return st;
    }
    if (fields == NULL)
        return VMP_OK;
    /* spec R-REC-4: required keys; the loop names the first one missing */
    for (f = fields; (seen & required) != required && f->key != 0; f++) {
        if (f->required && !(seen & ((uint64_t)1 << f->key)))
            return vmp_cbor_fail(d->p, VMP_ERR_CORRUPT, "type %" PRIu64 ": missing required key %u",
                                 d->type, (unsigned)f->key);
    }
    if (d->type == VMP_REC_STACK_NODE) {
        int has_pc = (seen >> VMP_NODE_PC) & 1, has_fn = (seen >> VMP_NODE_FUNCTION) & 1;
        /* spec R-STK-1 */
        if (has_pc == has_fn)
            return vmp_cbor_fail(d->p, VMP_ERR_CORRUPT,
                                 "stack node %" PRIu64 " has %s of pc and function",
                                 d->rec->u.stack_node.id, has_pc ? "both" : "neither");
    }
    return VMP_OK;
}

static vmp_status decode(vmp_reader *r, vmp_record *rec, dec *d)
{
    vmp_cbor_parser *p = &r->cbor;
    vmp_cbor_token t;
    const field *fields;
    uint64_t pairs, time = r->sample_time, required = 0;
    size_t n_fields = 0;
    vmp_status st;

    st = vmp_cbor_next(p, &t);
    if (st < 0)
        return st;
    /* spec R-REC-1 */
    if (t.kind != VMP_CBOR_MAP)
        return vmp_cbor_fail(p, VMP_ERR_CORRUPT, "record is a %s, not a map",
                             vmp_cbor_kind_name(t.kind));
    pairs = t.u;
    if (pairs == 0)
        return vmp_cbor_fail(p, VMP_ERR_CORRUPT, "record is an empty map (no type key)");
    st = vmp_cbor_next(p, &t);
    if (st < 0)
        return st;
    if (t.kind != VMP_CBOR_UINT || t.u != VMP_KEY_TYPE)
        return vmp_cbor_fail(p, VMP_ERR_CORRUPT, "first key of the record is not 0 (type)");
    st = vmp_cbor_next(p, &t);
    if (st < 0)
        return st;
    if (t.kind != VMP_CBOR_UINT)
        return vmp_cbor_fail(p, VMP_ERR_CORRUPT, "record type is a %s, not a uint",
                             vmp_cbor_kind_name(t.kind));
    d->type = t.u;
    rec->raw_type = t.u;
    fields = fields_of(t.u);
    rec->type = fields != NULL ? (int)t.u : VMP_REC_UNKNOWN;
    /* the union member of this type starts all zero (then its defaults);
     * clearing only it spares a sample the size of the largest member */
    memset(&rec->u, 0, body_size(rec->type));
    if (fields != NULL)
        required = set_defaults(rec, fields, &n_fields);
    st = decode_body(d, fields, n_fields, required, pairs - 1);
    if (st < 0)
        return st;
    if (rec->type == VMP_REC_SAMPLE || rec->type == VMP_REC_FAILED_SAMPLE) {
        /* spec R-SMP-1 */
        if (d->has_delta && d->delta_neg) {
            if (d->delta_mag > time)
                return vmp_cbor_fail(p, VMP_ERR_CORRUPT, "sample time is negative");
            time -= d->delta_mag;
        } else if (d->has_delta) {
            if (d->delta_mag > UINT64_MAX - time)
                return vmp_cbor_fail(p, VMP_ERR_CORRUPT, "sample time overflows");
            time += d->delta_mag;
        }
        rec->u.sample.time_ns = time;
        r->sample_time = time;
        if (r->chunk_samples++ == 0) /* for the seek table's check, R-SEEK-1 */
            r->chunk_first_time = time;
        r->chunk_last_time = time;
    }
    return VMP_OK;
}

vmp_status vmp_rd_decode_record(vmp_reader *r, vmp_record *rec)
{
    size_t start = r->content_pos, left = r->content_size - start, end;
    dec d;
    vmp_status st;

    vmp_rd_arena_reset(r);
    /* the common part; decode() clears the member its type uses */
    memset(rec, 0, offsetof(vmp_record, u));
    rec->chunk_index = r->chunk_index;
    rec->chunk_offset = r->chunk_offset;
    rec->record_offset = start;
    /* spec R-LIM-1: a record may not use more than max_record_bytes */
    end = (uint64_t)left > r->max_record ? start + (size_t)r->max_record : r->content_size;
    vmp_cbor_init(&r->cbor, r->content, start, end, r->content_size, r->max_nesting, r->max_items,
                  r->skip_stack);
    memset(&d, 0, sizeof d);
    d.r = r;
    d.p = &r->cbor;
    d.rec = rec;
    st = decode(r, rec, &d);
    if (st < 0) {
        memset(rec, 0, sizeof *rec);
        return vmp_rd_fail(r, st, r->chunk_offset,
                           "chunk %" PRIu64 ", record at content offset %zu: %s", r->chunk_index,
                           start, r->cbor.msg);
    }
    r->content_pos = r->cbor.pos;
    return VMP_OK;
}
