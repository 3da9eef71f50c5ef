/* SPDX-License-Identifier: MIT
 *
 * reader_fixture.c - build vmp files by hand for the reader tests (spec.md
 * §3, §4, §5, §6).
 */
#include "reader_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cbor.h>
#include <zstd.h>

void tb_put(tbuf *b, const void *data, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        b->p = realloc(b->p, cap);
        if (b->p == NULL)
            abort();
        b->cap = cap;
    }
    if (n > 0)
        memcpy(b->p + b->len, data, n);
    b->len += n;
}

void tb_free(tbuf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

static void put_enc(tbuf *b, const unsigned char *tmp, size_t n)
{
    if (n == 0)
        abort();
    tb_put(b, tmp, n);
}

void c_uint(tbuf *b, uint64_t v)
{
    unsigned char tmp[16];
    put_enc(b, tmp, cbor_encode_uint(v, tmp, sizeof tmp));
}

void c_negint(tbuf *b, uint64_t n)
{
    unsigned char tmp[16];
    put_enc(b, tmp, cbor_encode_negint(n, tmp, sizeof tmp));
}

void c_int(tbuf *b, int64_t v)
{
    if (v >= 0)
        c_uint(b, (uint64_t)v);
    else
        c_negint(b, (uint64_t)(-(v + 1)));
}

void c_str(tbuf *b, const char *s)
{
    unsigned char tmp[16];
    size_t n = strlen(s);
    put_enc(b, tmp, cbor_encode_string_start(n, tmp, sizeof tmp));
    tb_put(b, s, n);
}

void c_bstr(tbuf *b, const void *data, size_t n)
{
    unsigned char tmp[16];
    put_enc(b, tmp, cbor_encode_bytestring_start(n, tmp, sizeof tmp));
    tb_put(b, data, n);
}

void c_array(tbuf *b, size_t n)
{
    unsigned char tmp[16];
    put_enc(b, tmp, cbor_encode_array_start(n, tmp, sizeof tmp));
}

void c_map(tbuf *b, size_t n)
{
    unsigned char tmp[16];
    put_enc(b, tmp, cbor_encode_map_start(n, tmp, sizeof tmp));
}

void c_tag(tbuf *b, uint64_t tag)
{
    unsigned char tmp[16];
    put_enc(b, tmp, cbor_encode_tag(tag, tmp, sizeof tmp));
}

void c_double(tbuf *b, double v)
{
    unsigned char tmp[16];
    put_enc(b, tmp, cbor_encode_double(v, tmp, sizeof tmp));
}

void c_null(tbuf *b)
{
    unsigned char tmp[16];
    put_enc(b, tmp, cbor_encode_null(tmp, sizeof tmp));
}

void c_bool(tbuf *b, int v)
{
    unsigned char tmp[16];
    put_enc(b, tmp, cbor_encode_bool(v != 0, tmp, sizeof tmp));
}

void kv_uint(tbuf *b, uint64_t key, uint64_t v)
{
    c_uint(b, key);
    c_uint(b, v);
}

void kv_int(tbuf *b, uint64_t key, int64_t v)
{
    c_uint(b, key);
    c_int(b, v);
}

void kv_str(tbuf *b, uint64_t key, const char *s)
{
    c_uint(b, key);
    c_str(b, s);
}

void rec_start(tbuf *b, size_t pairs, uint64_t type)
{
    c_map(b, pairs);
    kv_uint(b, VMP_KEY_TYPE, type);
}

static void le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

void f_header(tbuf *file, unsigned major, unsigned minor)
{
    uint8_t h[24] = {0};
    le32(h, VMP_FILE_FRAME_MAGIC);
    le32(h + 4, VMP_FILE_HEADER_SIZE);
    memcpy(h + 8, VMP_MAGIC, VMP_MAGIC_SIZE);
    h[16] = (uint8_t)major;
    h[17] = (uint8_t)(major >> 8);
    h[18] = (uint8_t)minor;
    h[19] = (uint8_t)(minor >> 8);
    tb_put(file, h, sizeof h);
}

void f_chunk_ex(tbuf *file, const void *content, size_t n, int checksum, int content_size)
{
    ZSTD_CCtx *c = ZSTD_createCCtx();
    size_t cap = ZSTD_compressBound(n), ret;
    uint8_t *dst = malloc(cap);
    ZSTD_inBuffer in = {content, n, 0};
    ZSTD_outBuffer out = {dst, cap, 0};

    if (c == NULL || dst == NULL)
        abort();
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, checksum);
    ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, content_size);
    if (content_size)
        ZSTD_CCtx_setPledgedSrcSize(c, n);
    do {
        ret = ZSTD_compressStream2(c, &out, &in, ZSTD_e_end);
        if (ZSTD_isError(ret))
            abort();
    } while (ret != 0);
    tb_put(file, dst, out.pos);
    free(dst);
    ZSTD_freeCCtx(c);
}

void f_chunk(tbuf *file, const tbuf *content)
{
    f_chunk_ex(file, content->p, content->len, 1, 1);
}

void f_skippable(tbuf *file, uint32_t magic, const void *data, size_t n)
{
    uint8_t h[8];
    le32(h, magic);
    le32(h + 4, (uint32_t)n);
    tb_put(file, h, sizeof h);
    tb_put(file, data, n);
}

vmp_status read_all(vmp_reader *r, uint64_t *n)
{
    vmp_record rec;
    vmp_status st;

    *n = 0;
    while ((st = vmp_reader_next(r, &rec)) == VMP_OK)
        (*n)++;
    return st;
}
