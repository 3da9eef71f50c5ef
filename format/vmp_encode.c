/* SPDX-License-Identifier: MIT
 *
 * vmp_encode.c - byte buffers and CBOR primitives on top of libcbor's
 * encoders (spec.md §1, §5 R-REC-1, R-REC-3).
 */
#include "vmp_encode.h"

#include <assert.h>
#include <cbor.h>
#include <stdlib.h>
#include <string.h>

int vmp_buf__reserve(vmp_buf *b, size_t extra)
{
    if (b->failed)
        return -1;
    if (b->cap - b->len >= extra)
        return 0;
    size_t need = b->len + extra;
    if (need < b->len) {
        b->failed = 1;
        return -1;
    }
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    uint8_t *p = realloc(b->data, cap);
    if (!p) {
        b->failed = 1;
        return -1;
    }
    b->data = p;
    b->cap = cap;
    return 0;
}

void vmp_buf__append(vmp_buf *b, const void *data, size_t size)
{
    if (size == 0 || vmp_buf__reserve(b, size) < 0)
        return;
    memcpy(b->data + b->len, data, size);
    b->len += size;
}

void vmp_buf__free(vmp_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->failed = 0;
}

/* Every CBOR head fits in 9 bytes. */
#define HEAD_MAX 9

#define ENCODE_HEAD(b, call)                        \
    do {                                            \
        if (vmp_buf__reserve((b), HEAD_MAX) == 0) { \
            size_t n_ = call;                       \
            assert(n_ > 0);                         \
            (b)->len += n_;                         \
        }                                           \
    } while (0)

void vmp_enc__uint(vmp_buf *b, uint64_t v)
{
    ENCODE_HEAD(b, cbor_encode_uint(v, b->data + b->len, HEAD_MAX));
}

void vmp_enc__int(vmp_buf *b, int64_t v)
{
    if (v >= 0)
        ENCODE_HEAD(b, cbor_encode_uint((uint64_t)v, b->data + b->len, HEAD_MAX));
    else /* CBOR negint n encodes -1 - n */
        ENCODE_HEAD(b, cbor_encode_negint((uint64_t)(-(v + 1)), b->data + b->len, HEAD_MAX));
}

void vmp_enc__array(vmp_buf *b, size_t n)
{
    ENCODE_HEAD(b, cbor_encode_array_start(n, b->data + b->len, HEAD_MAX));
}

void vmp_enc__map(vmp_buf *b, size_t n)
{
    ENCODE_HEAD(b, cbor_encode_map_start(n, b->data + b->len, HEAD_MAX));
}

void vmp_enc__tstr(vmp_buf *b, const char *s)
{
    vmp_enc__tstrn(b, s, s ? strlen(s) : 0);
}

void vmp_enc__tstrn(vmp_buf *b, const char *s, size_t n)
{
    if (s == NULL)
        n = 0;
    ENCODE_HEAD(b, cbor_encode_string_start(n, b->data + b->len, HEAD_MAX));
    vmp_buf__append(b, s, n);
}

void vmp_enc__bstr(vmp_buf *b, const void *data, size_t size)
{
    ENCODE_HEAD(b, cbor_encode_bytestring_start(size, b->data + b->len, HEAD_MAX));
    vmp_buf__append(b, data, size);
}

unsigned vmp_enc__width(uint64_t v)
{
    unsigned w = 1;
    while (w < 8 && (v >> (8 * w)) != 0)
        w++;
    return w;
}

size_t vmp_enc__head_size(uint64_t v)
{
    return v < 24 ? 1 : v <= 0xff ? 2 : v <= 0xffff ? 3 : v <= 0xffffffffu ? 5 : 9;
}

size_t vmp_enc__packed_size(size_t n, unsigned w)
{
    return 1 + n * w + vmp_enc__head_size(1 + n * w);
}

void vmp_enc__packed(vmp_buf *b, const uint64_t *v, size_t n)
{
    uint64_t all = 0;
    unsigned w, k;
    size_t i;
    uint8_t *p;

    for (i = 0; i < n; i++)
        all |= v[i];
    w = vmp_enc__width(all);
    ENCODE_HEAD(b, cbor_encode_bytestring_start(1 + n * w, b->data + b->len, HEAD_MAX));
    if (vmp_buf__reserve(b, 1 + n * w) < 0)
        return;
    p = b->data + b->len;
    *p++ = (uint8_t)w;
    for (k = 0; k < w; k++)
        for (i = 0; i < n; i++)
            *p++ = (uint8_t)(v[i] >> (8 * k));
    b->len += 1 + n * w;
}

void vmp_rec__begin(vmp_rec *r, vmp_buf *b, unsigned type)
{
    r->b = b;
    r->start = b->len;
    r->n = 0;
    vmp_enc__map(b, 0); /* patched by vmp_rec__end() */
    vmp_rec__uint(r, 0, type);
}

void vmp_rec__key(vmp_rec *r, unsigned key)
{
    r->n++;
    vmp_enc__uint(r->b, key);
}

void vmp_rec__uint(vmp_rec *r, unsigned key, uint64_t v)
{
    vmp_rec__key(r, key);
    vmp_enc__uint(r->b, v);
}

void vmp_rec__uint_nz(vmp_rec *r, unsigned key, uint64_t v)
{
    if (v != 0)
        vmp_rec__uint(r, key, v);
}

void vmp_rec__tstr_ne(vmp_rec *r, unsigned key, const char *s)
{
    if (s && *s) {
        vmp_rec__key(r, key);
        vmp_enc__tstr(r->b, s);
    }
}

void vmp_rec__end(vmp_rec *r)
{
    assert(r->n < 24);
    if (!r->b->failed)
        r->b->data[r->start] = (uint8_t)(0xA0u | r->n); /* map, length in the head byte */
}

static void put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

void vmp_enc__file_frame(uint8_t out[VMP_FILE_FRAME_BYTES], unsigned major, unsigned minor)
{
    memset(out, 0, VMP_FILE_FRAME_BYTES);
    put_le32(out, VMP_FILE_FRAME_MAGIC);
    put_le32(out + 4, VMP_FILE_HEADER_SIZE);
    memcpy(out + 8, VMP_MAGIC, VMP_MAGIC_SIZE);
    out[16] = (uint8_t)major;
    out[18] = (uint8_t)minor;
}

int vmp_enc__seek_frame(vmp_buf *b, const vmp_seek_entry *v, size_t n)
{
    static const uint8_t zeros[VMP_SKIPPABLE_HEADER_SIZE + VMP_SEEK_FOOTER_SIZE];
    size_t start = b->len, i;
    vmp_buf__append(b, zeros, VMP_SKIPPABLE_HEADER_SIZE); /* patched below */
    vmp_enc__array(b, n);
    for (i = 0; i < n; i++) {
        vmp_enc__array(b, 6);
        vmp_enc__uint(b, v[i].offset);
        vmp_enc__uint(b, v[i].compressed_size);
        vmp_enc__uint(b, v[i].content_size);
        vmp_enc__uint(b, v[i].first_time);
        vmp_enc__uint(b, v[i].last_time);
        vmp_enc__uint(b, v[i].samples);
    }
    vmp_buf__append(b, zeros, VMP_SEEK_FOOTER_SIZE);
    if (b->failed || b->len - start > UINT32_MAX)
        return -1;
    uint8_t *f = b->data + start;
    uint32_t size = (uint32_t)(b->len - start);
    put_le32(f, VMP_SEEK_FRAME_MAGIC);
    put_le32(f + 4, size - VMP_SKIPPABLE_HEADER_SIZE);
    put_le32(f + size - VMP_SEEK_FOOTER_SIZE, size);
    memcpy(f + size - 4, VMP_SEEK_FOOTER_MAGIC, 4);
    return 0;
}
