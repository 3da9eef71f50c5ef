/* SPDX-License-Identifier: MIT
 *
 * vmp_records.c - decode one record of a chunk into a vmp_record (spec.md §5,
 * R-REC-1..4, R-STK-1, R-SMP-1; §8 limits).
 *
 * The record registry (format/vmp_record.h) gives each record type's known
 * keys: the CBOR type each value must have, where it goes in the record, its
 * default and whether it is required.  Keys it does not list are skipped
 * whole and counted; records of unknown types are skipped whole and delivered
 * as VMP_REC_UNKNOWN.  Strings and arrays are
 * copied into the per-record arena; their sizes were checked by the token
 * layer against the bytes left and the items limit before any allocation.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "vmp_reader_int.h"

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

static uint64_t u64_of(const vmp_record *rec, size_t off)
{
    uint64_t v;
    memcpy(&v, (const char *)rec + off, sizeof v);
    return v;
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

/* The registry's name of key `key` of the record being decoded ("CODE_OBJECT
 * start"), for messages; "" for a type or key it does not know. */
static const char *key_name(const dec *d, uint64_t key, char *buf, size_t size)
{
    const vmp_record_desc *desc = vmp_record_desc_of(d->type);
    const vmp_field *f = desc ? vmp_record_field(desc, key) : NULL;
    if (!f)
        return "";
    snprintf(buf, size, " (%s %s)", desc->name, f->name);
    return buf;
}

static vmp_status wrong_type(dec *d, const char *want, const vmp_cbor_token *t)
{
    char name[64];
    /* spec R-REC-4, R-REC-3 */
    return vmp_cbor_fail_rule(d->p, "R-REC-4", VMP_ERR_CORRUPT,
                              "type %" PRIu64 ", key %" PRIu64 ": expected %s, found %s%s", d->type,
                              d->key, want, vmp_cbor_kind_name(t->kind),
                              key_name(d, d->key, name, sizeof name));
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

    return st < 0 ? st : copy_str(d, &t, out);
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
        return vmp_cbor_fail_rule(d->p, "R-REC-4", VMP_ERR_CORRUPT,
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

/* The inline record `in` (spec §5.7: [offset, f1, b1, f2, b2, ...]). */
static vmp_status read_inline(dec *d, vmp_rec_inline *in)
{
    uint64_t m = 0, j;
    uint64_t *frames;
    vmp_status st = read_array(d, 3, 1, &m);

    if (st < 0)
        return st;
    if (m % 2 != 1)
        return vmp_cbor_fail_rule(d->p, "R-REC-4", VMP_ERR_CORRUPT,
                                  "type %" PRIu64 ", key %" PRIu64 ": inline record of %" PRIu64
                                  " items is not [offset, pairs...]",
                                  d->type, d->key, m);
    st = read_uint(d, &in->mcpc_offset);
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
    in->frames = frames;
    in->depth = (size_t)((m - 1) / 2);
    return VMP_OK;
}

/* One item of list field `f` into `item`; `sum` carries a pc map's running
 * offset (spec §5.7: (mcpc delta, bcpc) pairs). */
static vmp_status read_item(dec *d, const vmp_field *f, void *item, uint64_t *sum)
{
    uint64_t *u = item;
    vmp_str *s = item;
    vmp_rec_symbol *sym = item;
    vmp_status st = VMP_OK;
    unsigned j;

    switch ((vmp_field_kind)f->kind) {
    case VMP_FIELD_UINTS:
        for (j = 0; j < f->group && st >= 0; j++)
            st = read_uint(d, &u[j]);
        return st;
    case VMP_FIELD_PC_MAP:
        if ((st = read_uint(d, &u[0])) < 0 || (st = read_uint(d, &u[1])) < 0)
            return st;
        if (u[0] > UINT64_MAX - *sum)
            return vmp_cbor_fail_rule(d->p, "R-REC-4", VMP_ERR_CORRUPT,
                                      "type %" PRIu64 ", key %" PRIu64 ": pc map offset overflows",
                                      d->type, d->key);
        *sum += u[0];
        u[0] = *sum;
        return VMP_OK;
    case VMP_FIELD_TSTRS:
        return read_str(d, s);
    case VMP_FIELD_LABELS:
        if ((st = read_str(d, &s[0])) < 0)
            return st;
        return read_str(d, &s[1]);
    case VMP_FIELD_SYMBOLS:
        if ((st = read_uint(d, &sym->value)) < 0 || (st = read_uint(d, &sym->size)) < 0)
            return st;
        return read_str(d, &sym->name);
    case VMP_FIELD_INLINE:
        return read_inline(d, item);
    case VMP_FIELD_COLUMN:
        return read_uint(d, u);
    case VMP_FIELD_INTS:
    case VMP_FIELD_INT_COLUMN: {
        int neg = 0, over = 0;
        uint64_t mag = 0;
        if ((st = read_int(d, &neg, &mag, &over)) < 0)
            return st;
        if (over || (!neg && mag > (uint64_t)INT64_MAX) || (neg && mag > (uint64_t)INT64_MAX))
            return vmp_cbor_fail_rule(d->p, "R-REC-4", VMP_ERR_CORRUPT,
                                      "type %" PRIu64 ", key %" PRIu64 ": integer out of range",
                                      d->type, d->key);
        *(int64_t *)item = neg ? -(int64_t)mag : (int64_t)mag;
        return VMP_OK;
    }
    default:
        return vmp_cbor_fail(d->p, VMP_ERR_CORRUPT, "internal: not a list field");
    }
}

/* Bytes of one item of list field `f` in its C array. */
static size_t item_size(const vmp_field *f)
{
    switch ((vmp_field_kind)f->kind) {
    case VMP_FIELD_TSTRS:
        return sizeof(vmp_str);
    case VMP_FIELD_LABELS:
        return 2 * sizeof(vmp_str);
    case VMP_FIELD_SYMBOLS:
        return sizeof(vmp_rec_symbol);
    case VMP_FIELD_INLINE:
        return sizeof(vmp_rec_inline);
    default: /* UINTS, PC_MAP: `group` uint64_t */
        return f->group * sizeof(uint64_t);
    }
}

/* A packed column (spec §5.14): the byte string `t` of width w and n x w
 * bytes in byte planes, into n arena values (R-BLK-2: w in 1..8, the
 * length 1 + n x w; an INT_COLUMN's values below 2^63). */
static vmp_status read_packed(dec *d, const vmp_field *f, const vmp_cbor_token *t)
{
    const uint8_t *p = t->ptr;
    uint64_t *v, n;
    unsigned w, k;
    size_t i;

    if (t->u < 1 || p[0] < 1 || p[0] > 8 || (t->u - 1) % p[0] != 0)
        return vmp_cbor_fail_rule(d->p, "R-BLK-2", VMP_ERR_CORRUPT,
                                  "type %" PRIu64 ", key %" PRIu64 ": packed column of %" PRIu64
                                  " bytes with width %u: the width must be 1 to 8 and divide the"
                                  " bytes after it",
                                  d->type, d->key, t->u, t->u ? (unsigned)p[0] : 0u);
    w = p[0];
    n = (t->u - 1) / w;
    v = alloc_items(d, n, sizeof *v);
    if (n > 0 && v == NULL)
        return nomem(d);
    for (i = 0; i < n; i++)
        v[i] = p[1 + i];
    for (k = 1; k < w; k++)
        for (i = 0; i < n; i++)
            v[i] |= (uint64_t)p[1 + k * n + i] << (8 * k);
    for (i = 0; f->kind == VMP_FIELD_INT_COLUMN && i < n; i++)
        if (v[i] > (uint64_t)INT64_MAX)
            return vmp_cbor_fail_rule(d->p, "R-BLK-2", VMP_ERR_CORRUPT,
                                      "type %" PRIu64 ", key %" PRIu64 ": packed value %zu is"
                                      " 2^63 or more",
                                      d->type, d->key, i);
    put_ptr(d->rec, f->off, v);
    put_size(d->rec, f->aux, (size_t)n);
    return VMP_OK;
}

/* A list field: an array of `group` values per item (LABELS: a map), into
 * arena items; the pointer at f->off, the number of items at f->aux.  A
 * column may instead be packed (a byte string). */
static vmp_status read_list(dec *d, const vmp_field *f)
{
    uint64_t n = 0, i, sum = 0;
    size_t size = item_size(f);
    char *v;
    vmp_status st;

    if (f->kind == VMP_FIELD_COLUMN || f->kind == VMP_FIELD_INT_COLUMN) {
        vmp_cbor_token t;
        st = vmp_cbor_next(d->p, &t);
        if (st < 0)
            return st;
        if (t.kind == VMP_CBOR_BSTR)
            return read_packed(d, f, &t);
        if (t.kind != VMP_CBOR_ARRAY)
            return wrong_type(d, "array or bstr", &t);
        if (2 > d->p->max_nesting)
            return vmp_cbor_fail(d->p, VMP_ERR_LIMIT, "nesting deeper than the limit %u",
                                 (unsigned)d->p->max_nesting);
        n = t.u;
    } else if (f->kind == VMP_FIELD_LABELS) {
        vmp_cbor_token t;
        st = next_of(d, VMP_CBOR_MAP, &t);
        if (st < 0)
            return st;
        if (2 > d->p->max_nesting)
            return vmp_cbor_fail(d->p, VMP_ERR_LIMIT, "nesting deeper than the limit %u",
                                 (unsigned)d->p->max_nesting);
        n = t.u; /* pairs, <= the items limit, checked */
    } else {
        st = read_array(d, 2, f->group, &n);
        if (st < 0)
            return st;
        n /= f->group;
    }
    v = alloc_items(d, n, size);
    if (n > 0 && v == NULL)
        return nomem(d);
    for (i = 0; i < n; i++) {
        st = read_item(d, f, v + i * size, &sum);
        if (st < 0)
            return st;
    }
    put_ptr(d->rec, f->off, v);
    put_size(d->rec, f->aux, (size_t)n);
    return VMP_OK;
}

static vmp_status read_field(dec *d, const vmp_field *f)
{
    vmp_cbor_token t;
    uint64_t u;
    vmp_status st;

    switch ((vmp_field_kind)f->kind) {
    case VMP_FIELD_UINT:
        st = read_uint(d, &u);
        if (st < 0)
            return st;
        put_u64(d->rec, f->off, u);
        if (f->flags & VMP_FIELD_HAS)
            put_int(d->rec, f->aux, 1);
        return VMP_OK;
    case VMP_FIELD_INT:
    case VMP_FIELD_TIME_DELTA: {
        int neg = 0, over = 0;
        uint64_t mag = 0;
        int64_t v;

        st = read_int(d, &neg, &mag, &over);
        if (st < 0)
            return st;
        if (f->kind == VMP_FIELD_TIME_DELTA) {
            d->has_delta = 1;
            d->delta_neg = neg;
            d->delta_mag = over ? UINT64_MAX : mag;
            if (over) /* -2^64 takes any time below 0 (R-SMP-1) */
                return vmp_cbor_fail_rule(d->p, f->rule, VMP_ERR_CORRUPT,
                                          "sample time is negative");
            return VMP_OK;
        }
        if (over || (!neg && mag > (uint64_t)INT64_MAX) || (neg && mag > (uint64_t)INT64_MAX + 1))
            return vmp_cbor_fail_rule(d->p, "R-REC-4", VMP_ERR_CORRUPT,
                                      "type %" PRIu64 ", key %" PRIu64 ": integer out of range",
                                      d->type, d->key);
        if (!neg)
            v = (int64_t)mag;
        else if (mag == (uint64_t)INT64_MAX + 1)
            v = INT64_MIN;
        else
            v = -(int64_t)mag;
        put(d->rec, f->off, &v, sizeof v);
        if (f->flags & VMP_FIELD_HAS)
            put_int(d->rec, f->aux, 1);
        return VMP_OK;
    }
    case VMP_FIELD_TSTR: {
        vmp_str s;

        st = read_str(d, &s);
        if (st < 0)
            return st;
        put(d->rec, f->off, &s, sizeof s);
        return VMP_OK;
    }
    case VMP_FIELD_BSTR:
        st = next_of(d, VMP_CBOR_BSTR, &t);
        if (st < 0)
            return st;
        /* Points into the chunk, which lives until the next call. */
        put_ptr(d->rec, f->off, t.ptr);
        put_size(d->rec, f->aux, (size_t)t.u);
        return VMP_OK;
    case VMP_FIELD_UINTS:
    case VMP_FIELD_PC_MAP:
    case VMP_FIELD_TSTRS:
    case VMP_FIELD_LABELS:
    case VMP_FIELD_SYMBOLS:
    case VMP_FIELD_INLINE:
    case VMP_FIELD_INTS:
    case VMP_FIELD_COLUMN:
    case VMP_FIELD_INT_COLUMN:
        return read_list(d, f);
    }
    return vmp_cbor_fail(d->p, VMP_ERR_CORRUPT, "internal: unknown field kind");
}

/* Set the defaults of the record's fields (R-REC-4: absent keys take them);
 * returns the mask of the keys checked after decoding (bit k: key k): the
 * required ones, and bit 0 (key 0 is the type, never seen as a field) when
 * a key is present exactly when another is absent. */
static uint64_t set_defaults(vmp_record *rec, const vmp_record_desc *desc)
{
    static const vmp_str empty = {"", 0};
    uint64_t required = 0;
    size_t i;

    for (i = 0; i < desc->n_fields; i++) {
        const vmp_field *f = &desc->fields[i];

        if (f->flags & VMP_FIELD_REQUIRED)
            required |= (uint64_t)1 << f->key;
        if (f->flags & VMP_FIELD_EXCLUSIVE)
            required |= 1;
        if (f->kind == VMP_FIELD_TSTR)
            put(rec, f->off, &empty, sizeof empty);
        else if (f->kind >= VMP_FIELD_BSTR)
            put_ptr(rec, f->off, &empty_items);
        else if (f->dflt != 0)
            put_u64(rec, f->off, f->dflt);
    }
    return required;
}

/* Decode the map entries after the type key; `pairs` are left. */
static vmp_status decode_body(dec *d, const vmp_record_desc *desc, uint64_t required,
                              uint64_t pairs)
{
    uint64_t seen = 0; /* bit k: known key k seen */
    uint64_t i;
    const vmp_field *f;
    vmp_status st;

    for (i = 0; i < pairs; i++) {
        vmp_cbor_token t;

        st = vmp_cbor_next(d->p, &t);
        if (st < 0)
            return st;
        f = NULL;
        if (t.kind == VMP_CBOR_UINT && desc != NULL)
            f = vmp_record_field(desc, t.u);
        if (t.kind == VMP_CBOR_UINT && t.u == VMP_KEY_TYPE)
            /* spec R-REC-1: every key at most once */
            return vmp_cbor_fail_rule(d->p, "R-REC-1", VMP_ERR_CORRUPT, "duplicate key 0 (type)");
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
            return vmp_cbor_fail_rule(d->p, "R-REC-1", VMP_ERR_CORRUPT,
                                      "type %" PRIu64 ": duplicate key %" PRIu64, d->type, d->key);
        seen |= (uint64_t)1 << f->key;
        st = read_field(d, f);
        if (st < 0)
            return st;
    }
    if (desc == NULL || (seen & required) == required)
        return VMP_OK;
    for (i = 0; i < desc->n_fields; i++) {
        f = &desc->fields[i];
        /* spec R-REC-4: required keys; the first one missing is named */
        if ((f->flags & VMP_FIELD_REQUIRED) && !(seen & ((uint64_t)1 << f->key)))
            return vmp_cbor_fail_rule(d->p, "R-REC-4", VMP_ERR_CORRUPT,
                                      "type %" PRIu64 ": missing required key %u (%s %s)", d->type,
                                      (unsigned)f->key, desc->name, f->name);
        /* exactly one of two keys (STACK_NODE pc and function, R-STK-1) */
        if (f->flags & VMP_FIELD_EXCLUSIVE) {
            int has = (seen >> f->key) & 1, has_other = (seen >> f->other) & 1;
            if (has == has_other)
                return vmp_cbor_fail_rule(
                    d->p, f->rule, VMP_ERR_CORRUPT, "%s %" PRIu64 " has %s of %s and %s",
                    desc->name, u64_of(d->rec, desc->fields[0].off), has ? "both" : "neither",
                    f->name, vmp_record_field(desc, f->other)->name);
        }
    }
    return VMP_OK;
}

static vmp_status decode(vmp_reader *r, vmp_record *rec, dec *d)
{
    vmp_cbor_parser *p = &r->cbor;
    vmp_cbor_token t;
    const vmp_record_desc *desc;
    uint64_t pairs, time = r->sample_time, required = 0;
    vmp_status st;

    st = vmp_cbor_next(p, &t);
    if (st < 0)
        return st;
    /* spec R-REC-1 */
    if (t.kind != VMP_CBOR_MAP)
        return vmp_cbor_fail_rule(p, "R-REC-1", VMP_ERR_CORRUPT, "record is a %s, not a map",
                                  vmp_cbor_kind_name(t.kind));
    pairs = t.u;
    if (pairs == 0)
        return vmp_cbor_fail_rule(p, "R-REC-1", VMP_ERR_CORRUPT,
                                  "record is an empty map (no type key)");
    st = vmp_cbor_next(p, &t);
    if (st < 0)
        return st;
    if (t.kind != VMP_CBOR_UINT || t.u != VMP_KEY_TYPE)
        return vmp_cbor_fail_rule(p, "R-REC-1", VMP_ERR_CORRUPT,
                                  "first key of the record is not 0 (type)");
    st = vmp_cbor_next(p, &t);
    if (st < 0)
        return st;
    if (t.kind != VMP_CBOR_UINT)
        return vmp_cbor_fail_rule(p, "R-REC-1", VMP_ERR_CORRUPT, "record type is a %s, not a uint",
                                  vmp_cbor_kind_name(t.kind));
    d->type = t.u;
    rec->raw_type = t.u;
    desc = vmp_record_desc_of(t.u);
    rec->type = desc != NULL ? (int)t.u : VMP_REC_UNKNOWN;
    /* the union member of this type starts all zero (then its defaults);
     * clearing only it spares a sample the size of the largest member */
    memset(&rec->u, 0, desc != NULL ? desc->size : sizeof rec->u);
    if (desc != NULL)
        required = set_defaults(rec, desc);
    st = decode_body(d, desc, required, pairs - 1);
    if (st < 0)
        return st;
    if (rec->type == VMP_REC_SAMPLE || rec->type == VMP_REC_FAILED_SAMPLE) {
        /* spec R-SMP-1 */
        int step = d->has_delta ? vmp_rd_time_step(time, d->delta_neg, d->delta_mag, &time) : 0;
        if (step != 0)
            return vmp_cbor_fail_rule(p, "R-SMP-1", VMP_ERR_CORRUPT,
                                      step < 0 ? "sample time is negative"
                                               : "sample time overflows");
        rec->u.sample.time_ns = time;
        vmp_rd_took_sample(r, time);
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
        return vmp_rd_fail_rule(r, r->cbor.rule, st, r->chunk_offset,
                                "chunk %" PRIu64 ", record at content offset %zu: %s",
                                r->chunk_index, start, r->cbor.msg);
    }
    r->content_pos = r->cbor.pos;
    return VMP_OK;
}
