/* SPDX-License-Identifier: MIT
 *
 * test_reader_cbor.c - the reader's token layer (reader/vmp_cbor.h) reads
 * every item head as libcbor does (spec.md §5, R-REC-3; §8 limits): each of
 * the 256 head bytes, followed by several tails, cut at every length and
 * against record limits before, at and past the item's end.  The layer
 * decodes the commonest heads itself; this checks it against libcbor.
 */
#include <cbor.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "vmp_cbor.h"
#include "vmp_test.h"

/* What libcbor says of one item head. */
typedef struct ref {
    vmp_cbor_kind kind;
    uint64_t u;
    int indef;
} ref;

static void r_u8(void *c, uint8_t v)
{
    ((ref *)c)->kind = VMP_CBOR_UINT;
    ((ref *)c)->u = v;
}

static void r_u16(void *c, uint16_t v)
{
    ((ref *)c)->kind = VMP_CBOR_UINT;
    ((ref *)c)->u = v;
}

static void r_u32(void *c, uint32_t v)
{
    ((ref *)c)->kind = VMP_CBOR_UINT;
    ((ref *)c)->u = v;
}

static void r_u64(void *c, uint64_t v)
{
    ((ref *)c)->kind = VMP_CBOR_UINT;
    ((ref *)c)->u = v;
}

static void r_n8(void *c, uint8_t v)
{
    ((ref *)c)->kind = VMP_CBOR_NEGINT;
    ((ref *)c)->u = v;
}

static void r_n16(void *c, uint16_t v)
{
    ((ref *)c)->kind = VMP_CBOR_NEGINT;
    ((ref *)c)->u = v;
}

static void r_n32(void *c, uint32_t v)
{
    ((ref *)c)->kind = VMP_CBOR_NEGINT;
    ((ref *)c)->u = v;
}

static void r_n64(void *c, uint64_t v)
{
    ((ref *)c)->kind = VMP_CBOR_NEGINT;
    ((ref *)c)->u = v;
}

static void r_bstr(void *c, cbor_data d, size_t n)
{
    (void)d;
    ((ref *)c)->kind = VMP_CBOR_BSTR;
    ((ref *)c)->u = n;
}

static void r_tstr(void *c, cbor_data d, size_t n)
{
    (void)d;
    ((ref *)c)->kind = VMP_CBOR_TSTR;
    ((ref *)c)->u = n;
}

static void r_array(void *c, size_t n)
{
    ((ref *)c)->kind = VMP_CBOR_ARRAY;
    ((ref *)c)->u = n;
}

static void r_map(void *c, size_t n)
{
    ((ref *)c)->kind = VMP_CBOR_MAP;
    ((ref *)c)->u = n;
}

static void r_tag(void *c, uint64_t v)
{
    ((ref *)c)->kind = VMP_CBOR_TAG;
    ((ref *)c)->u = v;
}

static void r_indef(void *c)
{
    ((ref *)c)->indef = 1;
}

static void r_float(void *c, float v)
{
    (void)v;
    ((ref *)c)->kind = VMP_CBOR_FLOAT;
}

static void r_double(void *c, double v)
{
    (void)v;
    ((ref *)c)->kind = VMP_CBOR_FLOAT;
}

static void r_simple(void *c)
{
    ((ref *)c)->kind = VMP_CBOR_SIMPLE;
}

static void r_bool(void *c, bool v)
{
    (void)v;
    ((ref *)c)->kind = VMP_CBOR_SIMPLE;
}

static const struct cbor_callbacks ref_callbacks = {
    .uint8 = r_u8,
    .uint16 = r_u16,
    .uint32 = r_u32,
    .uint64 = r_u64,
    .negint8 = r_n8,
    .negint16 = r_n16,
    .negint32 = r_n32,
    .negint64 = r_n64,
    .byte_string_start = r_indef,
    .byte_string = r_bstr,
    .string = r_tstr,
    .string_start = r_indef,
    .indef_array_start = r_indef,
    .array_start = r_array,
    .indef_map_start = r_indef,
    .map_start = r_map,
    .tag = r_tag,
    .float2 = r_float,
    .float4 = r_float,
    .float8 = r_double,
    .undefined = r_simple,
    .null = r_simple,
    .boolean = r_bool,
    .indef_break = r_indef,
};

/* The status the token layer must return for buf[0..avail) with a record
 * limit of `end` bytes, from libcbor's reading and the rules of vmp_cbor.h;
 * *want and *read get the token and its size when it is VMP_OK. */
static vmp_status expected(const uint8_t *buf, size_t avail, size_t end, uint64_t max_items,
                           ref *want, size_t *read, char *msg, size_t msg_size)
{
    struct cbor_decoder_result res;

    memset(want, 0, sizeof *want);
    want->kind = VMP_CBOR_SIMPLE;
    msg[0] = '\0'; /* empty: the message is not checked */
    if (end == 0)
        return avail == 0 ? VMP_ERR_CORRUPT : VMP_ERR_LIMIT;
    res = cbor_stream_decode(buf, avail, &ref_callbacks, want);
    if (res.status == CBOR_DECODER_NEDATA) {
        snprintf(msg, msg_size, "item runs past the end of the chunk");
        return VMP_ERR_CORRUPT;
    }
    if (res.status != CBOR_DECODER_FINISHED || res.read == 0) {
        snprintf(msg, msg_size, "malformed CBOR (byte 0x%02x)", buf[0]);
        return VMP_ERR_CORRUPT;
    }
    if (want->indef) {
        snprintf(msg, msg_size, "indefinite-length item or break");
        return VMP_ERR_CORRUPT;
    }
    if (res.read > end) {
        snprintf(msg, msg_size, "%s runs past the record size limit",
                 vmp_cbor_kind_name(want->kind));
        return VMP_ERR_LIMIT;
    }
    *read = res.read;
    if ((want->kind == VMP_CBOR_BSTR || want->kind == VMP_CBOR_TSTR) && want->u > max_items)
        return VMP_ERR_LIMIT;
    if (want->kind == VMP_CBOR_ARRAY || want->kind == VMP_CBOR_MAP) {
        uint64_t items = want->u;

        if (items > max_items)
            return VMP_ERR_LIMIT;
        if (want->kind == VMP_CBOR_MAP)
            items *= 2;
        if (items > end - res.read)
            return items > avail - res.read ? VMP_ERR_CORRUPT : VMP_ERR_LIMIT;
    }
    return VMP_OK;
}

/* One head byte, each tail, each length, each record limit. */
static void check_head(unsigned head)
{
    static const uint8_t tails[][9] = {
        {0, 0, 0, 0, 0, 0, 0, 0, 0},
        {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
        {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09},
        {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00},
        {0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x18},
    };
    static const uint64_t limits[] = {3, 1000, UINT64_MAX >> 1};
    uint64_t stack[4];
    size_t t, avail, end, l;

    for (t = 0; t < sizeof tails / sizeof tails[0]; t++) {
        uint8_t buf[1 + sizeof tails[0]];

        buf[0] = (uint8_t)head;
        memcpy(buf + 1, tails[t], sizeof tails[t]);
        for (avail = 1; avail <= sizeof buf; avail++) {
            for (end = 0; end <= avail; end++) {
                for (l = 0; l < sizeof limits / sizeof limits[0]; l++) {
                    vmp_cbor_parser p;
                    vmp_cbor_token tok = {VMP_CBOR_SIMPLE, 0, NULL};
                    ref want;
                    size_t read = 0;
                    char msg[192];
                    vmp_status st, st_want;

                    /* the item starts at offset 2, as records inside a chunk do */
                    uint8_t chunk[2 + sizeof buf];

                    chunk[0] = 0xa1;
                    chunk[1] = 0x00;
                    memcpy(chunk + 2, buf, avail);
                    vmp_cbor_init(&p, chunk, 2, 2 + end, 2 + avail, 4, limits[l], stack);
                    st_want = expected(buf, avail, end, limits[l], &want, &read, msg, sizeof msg);
                    st = vmp_cbor_next(&p, &tok);
                    if (st != st_want)
                        fprintf(stderr,
                                "head 0x%02x tail %zu avail %zu end %zu limit %zu: %d != %d\n",
                                head, t, avail, end, l, (int)st, (int)st_want);
                    CHECK_EQ_U64(st, st_want);
                    CHECK_EQ_U64(p.err_pos, 2);
                    if (st == VMP_OK && st_want == VMP_OK) {
                        CHECK_EQ_U64(tok.kind, want.kind);
                        if (want.kind != VMP_CBOR_FLOAT && want.kind != VMP_CBOR_SIMPLE)
                            CHECK_EQ_U64(tok.u, want.u);
                        CHECK_EQ_U64(p.pos, 2 + read);
                        if (tok.kind == VMP_CBOR_BSTR || tok.kind == VMP_CBOR_TSTR)
                            CHECK(tok.ptr == chunk + 2 + (read - tok.u));
                    } else {
                        CHECK(p.msg[0] != '\0');
                        if (msg[0] != '\0')
                            CHECK_STR(p.msg, msg);
                    }
                }
            }
        }
    }
}

static void test_every_head_byte_reads_as_libcbor_reads_it(void)
{
    unsigned head;
    int before = vmp_test_failures;

    for (head = 0; head < 256 && vmp_test_failures == before; head++)
        check_head(head);
}

int main(void)
{
    VMP_TEST_RUN(test_every_head_byte_reads_as_libcbor_reads_it);
    VMP_TEST_EXIT();
}
