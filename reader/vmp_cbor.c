/* SPDX-License-Identifier: MIT
 *
 * vmp_cbor.c - pull parser over libcbor's streaming decoder (spec.md §5,
 * R-REC-3; §8 limits; §9 security).
 *
 * cbor_stream_decode() decodes exactly one item head per call and reports it
 * through a callback; the callbacks here only store what they saw in a token,
 * so the parser never allocates and the caller decides what each item means.
 */
#include "vmp_cbor.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include <cbor.h>

/* What the callbacks saw. */
typedef struct tok_ctx {
    vmp_cbor_token tok;
    int bad; /* indefinite-length start or break */
} tok_ctx;

static void on_uint8(void *c, uint8_t v)
{
    ((tok_ctx *)c)->tok.kind = VMP_CBOR_UINT;
    ((tok_ctx *)c)->tok.u = v;
}

static void on_uint16(void *c, uint16_t v)
{
    ((tok_ctx *)c)->tok.kind = VMP_CBOR_UINT;
    ((tok_ctx *)c)->tok.u = v;
}

static void on_uint32(void *c, uint32_t v)
{
    ((tok_ctx *)c)->tok.kind = VMP_CBOR_UINT;
    ((tok_ctx *)c)->tok.u = v;
}

static void on_uint64(void *c, uint64_t v)
{
    ((tok_ctx *)c)->tok.kind = VMP_CBOR_UINT;
    ((tok_ctx *)c)->tok.u = v;
}

static void on_negint8(void *c, uint8_t v)
{
    ((tok_ctx *)c)->tok.kind = VMP_CBOR_NEGINT;
    ((tok_ctx *)c)->tok.u = v;
}

static void on_negint16(void *c, uint16_t v)
{
    ((tok_ctx *)c)->tok.kind = VMP_CBOR_NEGINT;
    ((tok_ctx *)c)->tok.u = v;
}

static void on_negint32(void *c, uint32_t v)
{
    ((tok_ctx *)c)->tok.kind = VMP_CBOR_NEGINT;
    ((tok_ctx *)c)->tok.u = v;
}

static void on_negint64(void *c, uint64_t v)
{
    ((tok_ctx *)c)->tok.kind = VMP_CBOR_NEGINT;
    ((tok_ctx *)c)->tok.u = v;
}

static void on_bstr(void *c, cbor_data d, size_t n)
{
    ((tok_ctx *)c)->tok.kind = VMP_CBOR_BSTR;
    ((tok_ctx *)c)->tok.u = n;
    ((tok_ctx *)c)->tok.ptr = d;
}

static void on_tstr(void *c, cbor_data d, size_t n)
{
    ((tok_ctx *)c)->tok.kind = VMP_CBOR_TSTR;
    ((tok_ctx *)c)->tok.u = n;
    ((tok_ctx *)c)->tok.ptr = d;
}

static void on_indef(void *c)
{
    ((tok_ctx *)c)->bad = 1;
}

static void on_array(void *c, size_t n)
{
    ((tok_ctx *)c)->tok.kind = VMP_CBOR_ARRAY;
    ((tok_ctx *)c)->tok.u = n;
}

static void on_map(void *c, size_t n)
{
    ((tok_ctx *)c)->tok.kind = VMP_CBOR_MAP;
    ((tok_ctx *)c)->tok.u = n;
}

static void on_tag(void *c, uint64_t v)
{
    ((tok_ctx *)c)->tok.kind = VMP_CBOR_TAG;
    ((tok_ctx *)c)->tok.u = v;
}

static void on_float(void *c, float v)
{
    (void)v;
    ((tok_ctx *)c)->tok.kind = VMP_CBOR_FLOAT;
}

static void on_double(void *c, double v)
{
    (void)v;
    ((tok_ctx *)c)->tok.kind = VMP_CBOR_FLOAT;
}

static void on_simple(void *c)
{
    ((tok_ctx *)c)->tok.kind = VMP_CBOR_SIMPLE;
}

static void on_bool(void *c, bool v)
{
    (void)v;
    ((tok_ctx *)c)->tok.kind = VMP_CBOR_SIMPLE;
}

static const struct cbor_callbacks token_callbacks = {
    .uint8 = on_uint8,
    .uint16 = on_uint16,
    .uint32 = on_uint32,
    .uint64 = on_uint64,
    .negint64 = on_negint64,
    .negint32 = on_negint32,
    .negint16 = on_negint16,
    .negint8 = on_negint8,
    .byte_string_start = on_indef,
    .byte_string = on_bstr,
    .string = on_tstr,
    .string_start = on_indef,
    .indef_array_start = on_indef,
    .array_start = on_array,
    .indef_map_start = on_indef,
    .map_start = on_map,
    .tag = on_tag,
    .float2 = on_float,
    .float4 = on_float,
    .float8 = on_double,
    .undefined = on_simple,
    .null = on_simple,
    .boolean = on_bool,
    .indef_break = on_indef,
};

void vmp_cbor_init(vmp_cbor_parser *p, const uint8_t *base, size_t pos, size_t end, size_t hard_end,
                   uint32_t max_nesting, uint64_t max_items, uint64_t *stack)
{
    p->base = base;
    p->pos = pos;
    p->end = end;
    p->hard_end = hard_end;
    p->max_nesting = max_nesting;
    p->max_items = max_items;
    p->stack = stack;
    p->err_pos = pos;
    p->msg[0] = '\0';
}

vmp_status vmp_cbor_fail(vmp_cbor_parser *p, vmp_status st, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(p->msg, sizeof p->msg, fmt, ap);
    va_end(ap);
    p->rule = NULL;
    return st;
}

vmp_status vmp_cbor_fail_rule(vmp_cbor_parser *p, const char *rule, vmp_status st, const char *fmt,
                              ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(p->msg, sizeof p->msg, fmt, ap);
    va_end(ap);
    p->rule = rule;
    return st;
}

const char *vmp_cbor_kind_name(vmp_cbor_kind k)
{
    static const char *const names[] = {
        [VMP_CBOR_UINT] = "uint",
        [VMP_CBOR_NEGINT] = "negative int",
        [VMP_CBOR_BSTR] = "bstr",
        [VMP_CBOR_TSTR] = "tstr",
        [VMP_CBOR_ARRAY] = "array",
        [VMP_CBOR_MAP] = "map",
        [VMP_CBOR_TAG] = "tag",
        [VMP_CBOR_FLOAT] = "float",
        [VMP_CBOR_SIMPLE] = "simple value",
    };
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "item";
}

/* Fail for an item that needs `need` bytes from p->pos: past the chunk it is
 * corrupt (R-CHK-2), past the record's byte limit it is a limit (R-LIM-1). */
static vmp_status past_end(vmp_cbor_parser *p, uint64_t need, const char *what)
{
    if (need > p->hard_end - p->pos)
        return vmp_cbor_fail_rule(p, "R-CHK-2", VMP_ERR_CORRUPT,
                                  "%s runs past the end of the chunk", what);
    return vmp_cbor_fail(p, VMP_ERR_LIMIT, "%s runs past the record size limit", what);
}

/* The heads that make up most of a profile, decoded without the callback
 * round trip: a uint whose value is in the head byte or follows it in 1, 2,
 * 4 or 8 bytes (RFC 8949 §3.1, major type 0, additional info 0..27), and an
 * array or map head whose count is in the head byte (major types 4 and 5,
 * additional info 0..23).  Returns the bytes the head takes, or 0 when the
 * item is anything else, or needs more bytes than the chunk has left: then
 * libcbor decodes it (and reports those errors) as before. */
static size_t quick_head(const uint8_t *b, size_t avail, vmp_cbor_token *tok)
{
    uint8_t ib = b[0];
    uint8_t info = ib & 0x1f;
    size_t n, i;
    uint64_t v;

    switch (ib >> 5) {
    case 0:
        if (info < 24) {
            tok->kind = VMP_CBOR_UINT;
            tok->u = info;
            return 1;
        }
        if (info > 27)
            return 0;
        n = (size_t)1 << (info - 24); /* 1, 2, 4 or 8 bytes */
        if (n >= avail)
            return 0;
        v = 0;
        for (i = 1; i <= n; i++)
            v = v << 8 | b[i];
        tok->kind = VMP_CBOR_UINT;
        tok->u = v;
        return n + 1;
    case 4:
    case 5:
        if (info >= 24)
            return 0;
        tok->kind = ib >> 5 == 4 ? VMP_CBOR_ARRAY : VMP_CBOR_MAP;
        tok->u = info;
        return 1;
    default:
        return 0;
    }
}

vmp_status vmp_cbor_next_item(vmp_cbor_parser *p, vmp_cbor_token *tok)
{
    size_t left_after, read;

    p->err_pos = p->pos;
    if (p->pos >= p->end)
        return past_end(p, 1, "item");
    tok->ptr = NULL;
    read = quick_head(p->base + p->pos, p->hard_end - p->pos, tok);
    if (read == 0) {
        tok_ctx ctx = {{VMP_CBOR_SIMPLE, 0, NULL}, 0};
        struct cbor_decoder_result res;

        res = cbor_stream_decode(p->base + p->pos, p->hard_end - p->pos, &token_callbacks, &ctx);
        if (res.status == CBOR_DECODER_NEDATA)
            return vmp_cbor_fail_rule(p, "R-CHK-2", VMP_ERR_CORRUPT,
                                      "item runs past the end of the chunk");
        if (res.status != CBOR_DECODER_FINISHED || res.read == 0)
            return vmp_cbor_fail(p, VMP_ERR_CORRUPT, "malformed CBOR (byte 0x%02x)",
                                 p->base[p->pos]);
        /* spec R-REC-3: writers use definite lengths; this reader rejects the rest */
        if (ctx.bad)
            return vmp_cbor_fail_rule(p, "R-REC-3", VMP_ERR_CORRUPT,
                                      "indefinite-length item or break");
        read = res.read;
        /* field by field: a whole-struct copy right after the callbacks'
         * narrow stores defeats store forwarding and costs a stall per token */
        tok->kind = ctx.tok.kind;
        tok->u = ctx.tok.u;
        tok->ptr = ctx.tok.ptr;
    }
    if (read > p->end - p->pos)
        return past_end(p, read, vmp_cbor_kind_name(tok->kind));
    p->pos += read;
    left_after = p->end - p->pos;
    switch (tok->kind) {
    case VMP_CBOR_BSTR:
    case VMP_CBOR_TSTR:
        /* spec §8: the items limit also bounds one string's length */
        if (tok->u > p->max_items)
            return vmp_cbor_fail(p, VMP_ERR_LIMIT,
                                 "string of %llu bytes exceeds the items limit %llu",
                                 (unsigned long long)tok->u, (unsigned long long)p->max_items);
        break;
    case VMP_CBOR_ARRAY:
    case VMP_CBOR_MAP: {
        /* spec R-LIM-1: checked before anyone allocates for it */
        uint64_t items = tok->u;
        if (items > p->max_items)
            return vmp_cbor_fail(p, VMP_ERR_LIMIT, "%s of %llu items exceeds the items limit %llu",
                                 vmp_cbor_kind_name(tok->kind), (unsigned long long)items,
                                 (unsigned long long)p->max_items);
        /* every item takes at least one byte */
        if (tok->kind == VMP_CBOR_MAP)
            items *= 2;
        if (items > left_after) {
            if (items > p->hard_end - p->pos)
                return vmp_cbor_fail(p, VMP_ERR_CORRUPT,
                                     "%s of %llu items cannot fit in the %zu bytes left in the "
                                     "chunk",
                                     vmp_cbor_kind_name(tok->kind), (unsigned long long)tok->u,
                                     p->hard_end - p->pos);
            return vmp_cbor_fail(p, VMP_ERR_LIMIT,
                                 "%s of %llu items runs past the record size "
                                 "limit",
                                 vmp_cbor_kind_name(tok->kind), (unsigned long long)tok->u);
        }
        break;
    }
    default:
        break;
    }
    return VMP_OK;
}

/* Items a container head opens: array n, map 2n, tag 1; 0 for scalars. */
static uint64_t opened_items(const vmp_cbor_token *t, int *is_container)
{
    *is_container = 1;
    switch (t->kind) {
    case VMP_CBOR_ARRAY:
        return t->u;
    case VMP_CBOR_MAP:
        return 2 * t->u; /* t->u <= max_items, checked by vmp_cbor_next() */
    case VMP_CBOR_TAG:
        return 1;
    default:
        *is_container = 0;
        return 0;
    }
}

vmp_status vmp_cbor_skip(vmp_cbor_parser *p, const vmp_cbor_token *tok, uint32_t depth)
{
    uint32_t top = 0; /* open containers inside the skipped item */
    int is_container;
    uint64_t n = opened_items(tok, &is_container);
    vmp_cbor_token t = {VMP_CBOR_SIMPLE, 0, NULL};

    if (is_container) {
        if (depth + 1 > p->max_nesting)
            return vmp_cbor_fail(p, VMP_ERR_LIMIT, "nesting deeper than the limit %u",
                                 (unsigned)p->max_nesting);
        if (n > 0)
            p->stack[top++] = n;
    }
    /* stack[i] counts the items still to read in the i-th open container;
     * a container is closed only when its count is spent, so `top` is the
     * nesting of the next item relative to `depth`. */
    while (top > 0) {
        vmp_status st;

        if (p->stack[top - 1] == 0) {
            top--;
            continue;
        }
        p->stack[top - 1]--;
        st = vmp_cbor_next(p, &t);
        if (st < 0)
            return st;
        n = opened_items(&t, &is_container);
        if (is_container) {
            if (depth + top + 1 > p->max_nesting)
                return vmp_cbor_fail(p, VMP_ERR_LIMIT, "nesting deeper than the limit %u",
                                     (unsigned)p->max_nesting);
            if (n > 0)
                p->stack[top++] = n;
        }
    }
    return VMP_OK;
}
