/* SPDX-License-Identifier: MIT
 *
 * vmp_record_encode.c - one encoder for every record type, driven by the
 * record registry (vmp_record.c): spec.md §5, R-REC-1, R-REC-3 (shortest
 * forms), R-SMP-1 (sample time deltas), §5.7 (pc map deltas).
 */
#include <string.h>

#include "vmp_encode.h"

static const void *at(const vmp_record *rec, size_t off)
{
    return (const char *)rec + off;
}

static uint64_t u64_at(const vmp_record *rec, size_t off)
{
    uint64_t v;
    memcpy(&v, at(rec, off), sizeof v);
    return v;
}

static int int_at(const vmp_record *rec, size_t off)
{
    int v;
    memcpy(&v, at(rec, off), sizeof v);
    return v;
}

static size_t size_at(const vmp_record *rec, size_t off)
{
    size_t v;
    memcpy(&v, at(rec, off), sizeof v);
    return v;
}

static const void *ptr_at(const vmp_record *rec, size_t off)
{
    const void *v;
    memcpy(&v, at(rec, off), sizeof v);
    return v;
}

int vmp_record_field_present(const vmp_record *rec, const vmp_field *f, uint64_t prev_time)
{
    if (f->flags & VMP_FIELD_NOT_WRITTEN)
        return 0;
    if (f->flags & VMP_FIELD_HAS)
        return int_at(rec, f->aux) != 0;
    if (f->flags & VMP_FIELD_UNLESS) {
        const vmp_record_desc *d = vmp_record_desc_of((uint64_t)rec->type);
        const vmp_field *o = vmp_record_field(d, f->other);
        if (o == NULL || !vmp_record_field_present(rec, o, prev_time))
            return 1;
    }
    if (f->flags & (VMP_FIELD_REQUIRED | VMP_FIELD_ALWAYS))
        return 1;
    switch ((vmp_field_kind)f->kind) {
    case VMP_FIELD_UINT:
        return u64_at(rec, f->off) != f->dflt;
    case VMP_FIELD_INT:
        return u64_at(rec, f->off) != 0; /* int64_t 0 has the bits of uint64_t 0 */
    case VMP_FIELD_TIME_DELTA:
        return u64_at(rec, f->off) != prev_time;
    case VMP_FIELD_TSTR: {
        vmp_str s;
        memcpy(&s, at(rec, f->off), sizeof s);
        return s.s != NULL && s.len > 0;
    }
    default: /* strings of bytes and arrays: when not empty */
        return size_at(rec, f->aux) > 0;
    }
}

static void put_str(vmp_buf *b, const vmp_str *s)
{
    vmp_enc__tstrn(b, s->s, s->s ? s->len : 0);
}

static void put_value(vmp_buf *b, const vmp_record *rec, const vmp_field *f, uint64_t prev_time)
{
    size_t i, j, n = f->kind >= VMP_FIELD_BSTR ? size_at(rec, f->aux) : 0;
    const void *p = f->kind >= VMP_FIELD_BSTR ? ptr_at(rec, f->off) : NULL;

    switch ((vmp_field_kind)f->kind) {
    case VMP_FIELD_UINT:
        vmp_enc__uint(b, u64_at(rec, f->off));
        return;
    case VMP_FIELD_INT:
        vmp_enc__int(b, (int64_t)u64_at(rec, f->off));
        return;
    case VMP_FIELD_TIME_DELTA: /* R-SMP-1; wraps like the reader's sum */
        vmp_enc__int(b, (int64_t)(u64_at(rec, f->off) - prev_time));
        return;
    case VMP_FIELD_TSTR: {
        vmp_str s;
        memcpy(&s, at(rec, f->off), sizeof s);
        put_str(b, &s);
        return;
    }
    case VMP_FIELD_BSTR:
        vmp_enc__bstr(b, p, n);
        return;
    case VMP_FIELD_UINTS:
        vmp_enc__array(b, n * f->group);
        for (i = 0; i < n * f->group; i++)
            vmp_enc__uint(b, ((const uint64_t *)p)[i]);
        return;
    case VMP_FIELD_COLUMN: /* §5.14: packed when it has a value per sample */
        if (n > 1) {
            vmp_enc__packed(b, p, n);
            return;
        }
        vmp_enc__array(b, n);
        for (i = 0; i < n; i++)
            vmp_enc__uint(b, ((const uint64_t *)p)[i]);
        return;
    case VMP_FIELD_INT_COLUMN: /* packed values are uint: when none is negative */
        for (i = 0; i < n && ((const int64_t *)p)[i] >= 0; i++)
            ;
        if (n > 1 && i == n) {
            vmp_enc__packed(b, p, n);
            return;
        }
        /* fall through */
    case VMP_FIELD_INTS:
        vmp_enc__array(b, n);
        for (i = 0; i < n; i++)
            vmp_enc__int(b, ((const int64_t *)p)[i]);
        return;
    case VMP_FIELD_PC_MAP: { /* §5.7: offsets as deltas (non-decreasing; guarded) */
        const uint64_t *v = p;
        uint64_t prev = 0;
        vmp_enc__array(b, 2 * n);
        for (i = 0; i < n; i++) {
            vmp_enc__uint(b, v[2 * i] >= prev ? v[2 * i] - prev : 0);
            vmp_enc__uint(b, v[2 * i + 1]);
            prev = v[2 * i] >= prev ? v[2 * i] : prev;
        }
        return;
    }
    case VMP_FIELD_TSTRS:
        vmp_enc__array(b, n);
        for (i = 0; i < n; i++)
            put_str(b, &((const vmp_str *)p)[i]);
        return;
    case VMP_FIELD_LABELS:
        vmp_enc__map(b, n);
        for (i = 0; i < 2 * n; i++)
            put_str(b, &((const vmp_str *)p)[i]);
        return;
    case VMP_FIELD_SYMBOLS:
        vmp_enc__array(b, 3 * n);
        for (i = 0; i < n; i++) {
            const vmp_rec_symbol *s = &((const vmp_rec_symbol *)p)[i];
            vmp_enc__uint(b, s->value);
            vmp_enc__uint(b, s->size);
            put_str(b, &s->name);
        }
        return;
    case VMP_FIELD_INLINE:
        vmp_enc__array(b, n);
        for (i = 0; i < n; i++) {
            const vmp_rec_inline *in = &((const vmp_rec_inline *)p)[i];
            vmp_enc__array(b, 1 + 2 * in->depth);
            vmp_enc__uint(b, in->mcpc_offset);
            for (j = 0; j < 2 * in->depth; j++)
                vmp_enc__uint(b, in->frames[j]);
        }
        return;
    }
}

int vmp_record_encode(vmp_buf *b, const vmp_record *rec, uint64_t prev_time)
{
    const vmp_record_desc *d = vmp_record_desc_of((uint64_t)rec->type);
    vmp_rec r;
    size_t i;

    if (d == NULL)
        return -1;
    vmp_rec__begin(&r, b, (unsigned)rec->type);
    for (i = 0; i < d->n_fields; i++) {
        const vmp_field *f =
            d->write_order ? vmp_record_field(d, d->write_order[i]) : &d->fields[i];
        if (vmp_record_field_present(rec, f, prev_time)) {
            vmp_rec__key(&r, f->key);
            put_value(b, rec, f, prev_time);
        }
    }
    vmp_rec__end(&r);
    return 0;
}
