/* SPDX-License-Identifier: MIT
 *
 * test_registry.c - the record registry (format/vmp_record.h) and the
 * generic encoder it drives.  The registry is consistent (keys ascending and
 * unique, names unique, print orders permutations, every field inside its
 * record's member of vmp_record); and a file holding every record type with
 * every field set to a value other than its default, written through the
 * tools' record writer (which encodes with the generic encoder), reads back
 * field by field as written: strings with NUL bytes, negative ints, negative
 * sample time deltas, pc maps, inline records, labels, symbols.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmp_reader.h"
#include "vmp_record.h"
#include "vmp_record_writer.h"
#include "vmp_test.h"

static void *at(vmp_record *rec, size_t off)
{
    return (char *)rec + off;
}

static void test_consistent(void)
{
    int type;
    for (type = 1; type <= VMP_REC_TYPE_MAX; type++) {
        const vmp_record_desc *d = vmp_record_desc_of((uint64_t)type);
        size_t i, j, u = offsetof(vmp_record, u);
        CHECK(d != NULL && d->type == type && d->n_fields > 0 && d->n_fields < 24);
        if (!d)
            continue;
        CHECK_STR(vmp_record_type_name(type), d->name);
        for (i = 0; i < d->n_fields; i++) {
            const vmp_field *f = &d->fields[i];
            CHECK(f->key >= 1 && f->key < 64);
            CHECK(i == 0 || f->key > d->fields[i - 1].key);
            CHECK(f->name != NULL && f->name[0] != '\0');
            CHECK(vmp_record_field(d, f->key) == f);
            CHECK(f->off >= u && f->off + sizeof(uint64_t) <= u + d->size);
            if (f->kind >= VMP_FIELD_BSTR || (f->flags & VMP_FIELD_HAS))
                CHECK(f->aux >= u && f->aux < u + d->size && f->aux != f->off);
            if (f->flags & VMP_FIELD_UNLESS)
                CHECK(vmp_record_field(d, f->other) != NULL && f->other != f->key);
            CHECK(f->group == (f->kind == VMP_FIELD_SYMBOLS  ? 3
                               : f->kind == VMP_FIELD_PC_MAP ? 2
                               : f->kind == VMP_FIELD_UINTS  ? f->group
                                                             : 1) &&
                  f->group >= 1 && f->group <= 2 + (f->kind == VMP_FIELD_SYMBOLS));
            for (j = 0; j < i; j++)
                CHECK(strcmp(f->name, d->fields[j].name) != 0);
        }
        if (d->print_order) {
            for (i = 0; i < d->n_fields; i++) {
                CHECK(vmp_record_field(d, d->print_order[i]) != NULL);
                for (j = 0; j < i; j++)
                    CHECK(d->print_order[i] != d->print_order[j]);
            }
        }
    }
    CHECK(vmp_record_desc_of(0) == NULL && vmp_record_desc_of(VMP_REC_TYPE_MAX + 1) == NULL);
    CHECK_STR(vmp_record_type_name(99), "UNKNOWN");
}

/* ---- every field set ---------------------------------------------------------- */

static const uint64_t u64s[] = {11, 0x400000, 12, 0x400100, 13, 0x400200};
static const uint64_t pc_map[] = {0, 1, 16, 4, 40, 9};
static const uint64_t frames_a[] = {7, 3};
static const uint64_t frames_b[] = {8, 5, 7, 9};
static const vmp_rec_inline inlines[] = {{16, frames_a, 1}, {40, frames_b, 2}};
static const vmp_str strs[] = {{"alpha", 5}, {"be\0ta", 5}, {"gamma", 5}, {"", 0}};
static const vmp_rec_symbol symbols[] = {{0x1000, 32, {"f", 1}}, {0x1040, 8, {"g\0h", 3}}};
static const uint8_t bytes[] = {0xde, 0xad, 0xbe, 0xef, 0x00};
static const int64_t i64s[] = {5, -3, 1000000};

/* Fill every field of a record of `type` with something other than its
 * default, from `seed`; `variant` 1 makes a STACK_NODE a function frame. */
static void fill(vmp_record *rec, int type, uint64_t seed, int variant)
{
    const vmp_record_desc *d = vmp_record_desc_of((uint64_t)type);
    size_t i;
    memset(rec, 0, sizeof *rec);
    rec->type = type;
    for (i = 0; i < d->n_fields; i++) {
        const vmp_field *f = &d->fields[i];
        uint64_t v = seed * 100 + f->key + (f->flags & VMP_FIELD_ADDRESS ? 0x7f0000000000u : 0);
        int64_t neg = -(int64_t)v;
        size_t two = 2;
        if (f->flags & VMP_FIELD_NOT_WRITTEN)
            continue;
        switch ((vmp_field_kind)f->kind) {
        case VMP_FIELD_UINT:
        case VMP_FIELD_TIME_DELTA:
            memcpy(at(rec, f->off), &v, sizeof v);
            break;
        case VMP_FIELD_INT:
            memcpy(at(rec, f->off), &neg, sizeof neg);
            break;
        case VMP_FIELD_TSTR:
            memcpy(at(rec, f->off), &strs[f->key % 3], sizeof(vmp_str));
            break;
        case VMP_FIELD_BSTR: {
            const uint8_t *p = bytes;
            size_t n = sizeof bytes;
            memcpy(at(rec, f->off), &p, sizeof p);
            memcpy(at(rec, f->aux), &n, sizeof n);
            break;
        }
        case VMP_FIELD_UINTS:
        case VMP_FIELD_COLUMN:
        case VMP_FIELD_PC_MAP: {
            const uint64_t *p = f->kind == VMP_FIELD_PC_MAP ? pc_map : u64s;
            size_t n = 3; /* of its group: 3 values, or 3 pairs */
            memcpy(at(rec, f->off), &p, sizeof p);
            memcpy(at(rec, f->aux), &n, sizeof n);
            break;
        }
        case VMP_FIELD_TSTRS:
        case VMP_FIELD_LABELS: {
            const vmp_str *p = strs;
            memcpy(at(rec, f->off), &p, sizeof p);
            memcpy(at(rec, f->aux), &two, sizeof two); /* 2 strings, or 2 pairs */
            break;
        }
        case VMP_FIELD_SYMBOLS: {
            const vmp_rec_symbol *p = symbols;
            memcpy(at(rec, f->off), &p, sizeof p);
            memcpy(at(rec, f->aux), &two, sizeof two);
            break;
        }
        case VMP_FIELD_INLINE: {
            const vmp_rec_inline *p = inlines;
            memcpy(at(rec, f->off), &p, sizeof p);
            memcpy(at(rec, f->aux), &two, sizeof two);
            break;
        }
        case VMP_FIELD_INTS:
        case VMP_FIELD_INT_COLUMN: {
            const int64_t *p = i64s;
            size_t n = 3;
            memcpy(at(rec, f->off), &p, sizeof p);
            memcpy(at(rec, f->aux), &n, sizeof n);
            break;
        }
        }
        if (f->flags & VMP_FIELD_HAS) {
            int one = 1;
            memcpy(at(rec, f->aux), &one, sizeof one);
        }
    }
    if (type == VMP_REC_STACK_NODE) { /* R-STK-1: pc or function (with bcpc) */
        vmp_rec_stack_node *n = &rec->u.stack_node;
        if (variant == 0)
            n->is_function = n->has_bcpc = 0, n->function = n->bcpc = 0;
        else
            n->pc = 0;
    }
}

static int same_bytes(const void *a, const void *b, size_t n)
{
    return n == 0 || memcmp(a, b, n) == 0;
}

/* Compare what was written (`w`) with what was read (`r`), field by field;
 * a key this type does not write reads back as 0. */
static void compare(vmp_record *w, vmp_record *r)
{
    const vmp_record_desc *d = vmp_record_desc_of((uint64_t)w->type);
    size_t i, j;
    CHECK_EQ_U64(r->type, w->type);
    CHECK_EQ_U64(r->unknown_keys, 0);
    for (i = 0; i < d->n_fields; i++) {
        const vmp_field *f = &d->fields[i];
        size_t nw = 0, nr = 0;
        const void *pw, *pr;
        if (f->kind >= VMP_FIELD_BSTR) {
            memcpy(&nw, at(w, f->aux), sizeof nw);
            memcpy(&nr, at(r, f->aux), sizeof nr);
            CHECK_EQ_U64(nr, nw);
            if (nr != nw)
                fprintf(stderr, "  %s.%s\n", d->name, f->name);
        }
        memcpy(&pw, at(w, f->off), sizeof pw);
        memcpy(&pr, at(r, f->off), sizeof pr);
        switch ((vmp_field_kind)f->kind) {
        case VMP_FIELD_UINT:
        case VMP_FIELD_INT:
        case VMP_FIELD_TIME_DELTA: {
            uint64_t a, b;
            memcpy(&a, at(w, f->off), sizeof a);
            memcpy(&b, at(r, f->off), sizeof b);
            if (f->flags & VMP_FIELD_NOT_WRITTEN)
                a = f->dflt;
            CHECK_EQ_U64(b, a);
            if (a != b)
                fprintf(stderr, "  %s.%s\n", d->name, f->name);
            if (f->flags & VMP_FIELD_HAS)
                CHECK(*(int *)at(r, f->aux) == *(int *)at(w, f->aux));
            break;
        }
        case VMP_FIELD_TSTR: {
            vmp_str a, b;
            memcpy(&a, at(w, f->off), sizeof a);
            memcpy(&b, at(r, f->off), sizeof b);
            CHECK(a.len == b.len && same_bytes(a.s, b.s, a.len) && b.s[b.len] == '\0');
            break;
        }
        case VMP_FIELD_BSTR:
            CHECK(nr == nw && same_bytes(pw, pr, nw));
            break;
        case VMP_FIELD_UINTS:
        case VMP_FIELD_COLUMN:
        case VMP_FIELD_PC_MAP:
            CHECK(nr == nw && same_bytes(pw, pr, nw * f->group * sizeof(uint64_t)));
            break;
        case VMP_FIELD_INTS:
        case VMP_FIELD_INT_COLUMN:
            CHECK(nr == nw && same_bytes(pw, pr, nw * sizeof(int64_t)));
            break;
        case VMP_FIELD_TSTRS:
        case VMP_FIELD_LABELS:
            for (j = 0; nr == nw && j < nw * (f->kind == VMP_FIELD_LABELS ? 2 : 1); j++) {
                const vmp_str *a = (const vmp_str *)pw + j, *b = (const vmp_str *)pr + j;
                CHECK(a->len == b->len && same_bytes(a->s, b->s, a->len));
            }
            break;
        case VMP_FIELD_SYMBOLS:
            for (j = 0; nr == nw && j < nw; j++) {
                const vmp_rec_symbol *a = (const vmp_rec_symbol *)pw + j,
                                     *b = (const vmp_rec_symbol *)pr + j;
                CHECK(a->value == b->value && a->size == b->size && a->name.len == b->name.len &&
                      same_bytes(a->name.s, b->name.s, a->name.len));
            }
            break;
        case VMP_FIELD_INLINE:
            for (j = 0; nr == nw && j < nw; j++) {
                const vmp_rec_inline *a = (const vmp_rec_inline *)pw + j,
                                     *b = (const vmp_rec_inline *)pr + j;
                CHECK(a->mcpc_offset == b->mcpc_offset && a->depth == b->depth &&
                      same_bytes(a->frames, b->frames, 2 * a->depth * sizeof(uint64_t)));
            }
            break;
        }
    }
}

static uint64_t max_gen(uint64_t gen, const vmp_record *x)
{
    uint64_t g = x->type == VMP_REC_CODE_SNAPSHOT     ? x->u.code_snapshot.generation
                 : x->type == VMP_REC_CODE_COMPACTION ? x->u.code_compaction.generation
                 : x->type == VMP_REC_CODE_FREE       ? x->u.code_free.generation
                 : x->type == VMP_REC_CODE_MOVE       ? x->u.code_move.generation
                                                      : 0;
    return g > gen ? g : gen;
}

static void test_round_trip(void)
{
    enum {
        MAX = 2 * VMP_REC_TYPE_MAX
    };

    static vmp_record written[MAX];
    char path[] = "/tmp/vmp-registry-XXXXXX";
    vmp_record_writer_options o = VMP_RECORD_WRITER_OPTIONS_INIT;
    o.format_major = 1; /* every record as it is, SAMPLEs too */
    vmp_record_writer *w = NULL;
    vmp_reader *r = NULL;
    vmp_record rec;
    vmp_rec_end extra;
    size_t n = 0, i, got = 0;
    uint64_t gen = 0, samples = 0, failed = 0;
    int type, fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    fill(&written[n++], VMP_REC_HEADER, 1, 0);
    for (type = 1; type <= VMP_REC_TYPE_MAX; type++) {
        /* a SAMPLE_BLOCK is read as its samples: tests/spec and the golden
         * files check it */
        if (type == VMP_REC_HEADER || type == VMP_REC_END || type == VMP_REC_SAMPLE_BLOCK)
            continue;
        fill(&written[n++], type, (uint64_t)type, 0);
        if (type == VMP_REC_FAILED_SAMPLE) /* before the SAMPLE: a negative delta */
            written[n - 1].u.sample.time_ns = 5;
        if (type == VMP_REC_STACK_NODE)
            fill(&written[n++], type, 40, 1);
    }
    o.min_minor = VMP_FORMAT_MINOR; /* CODE_MAP */
    CHECK(vmp_record_writer_open_file(&w, path, &o) == VMP_OK);
    for (i = 0; i < n; i++) {
        const vmp_record *x = &written[i];
        CHECK(vmp_record_writer_write(w, x) == VMP_OK);
        if (x->type == VMP_REC_SAMPLE || x->type == VMP_REC_FAILED_SAMPLE)
            samples++;
        failed += x->type == VMP_REC_FAILED_SAMPLE;
        gen = max_gen(gen, x);
    }
    memset(&extra, 0, sizeof extra);
    extra.dropped_full = 3;
    extra.dropped_write = 4;
    extra.truncated_stacks = 5;
    extra.time_ns = 1u << 30;
    CHECK(vmp_record_writer_finish(w, &extra) == VMP_OK);
    vmp_record_writer_close(w);

    CHECK(vmp_reader_open_file(&r, path, NULL) == VMP_OK);
    while (vmp_reader_next(r, &rec) == VMP_OK) {
        if (rec.type == VMP_REC_END) {
            CHECK_EQ_U64(rec.u.end.samples, samples);
            CHECK_EQ_U64(rec.u.end.failed, failed);
            CHECK_EQ_U64(rec.u.end.dropped_full, 3);
            CHECK_EQ_U64(rec.u.end.dropped_write, 4);
            CHECK_EQ_U64(rec.u.end.truncated_stacks, 5);
            CHECK_EQ_U64(rec.u.end.time_ns, 1u << 30);
            CHECK_EQ_U64(rec.u.end.generation, gen);
            CHECK_EQ_U64(rec.u.end.chunks, 0);
            got++;
            continue;
        }
        CHECK(got < n);
        if (got < n)
            compare(&written[got], &rec);
        got++;
    }
    CHECK_STR(vmp_reader_errmsg(r), "");
    CHECK_EQ_U64(got, n + 1);
    vmp_reader_close(r);
    remove(path);
}

int main(void)
{
    VMP_TEST_RUN(test_consistent);
    VMP_TEST_RUN(test_round_trip);
    VMP_TEST_EXIT();
}
