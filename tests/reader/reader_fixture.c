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

/* One record of every type, with every key of this version. */
void build_all_types(tbuf *c)
{
    static const uint8_t build_id[4] = {0xde, 0xad, 0xbe, 0xef};

    /* HEADER: type + 17 keys */
    rec_start(c, 18, VMP_REC_HEADER);
    kv_str(c, VMP_HDR_PRODUCER, "vmp-test 1.0");
    kv_str(c, VMP_HDR_VM_NAME, "cog");
    kv_str(c, VMP_HDR_VM_VERSION, "5.0");
    kv_uint(c, VMP_HDR_PID, 4242);
    kv_uint(c, VMP_HDR_START_REALTIME, 1700000000000000000ull);
    kv_str(c, VMP_HDR_CLOCK, "monotonic");
    kv_uint(c, VMP_HDR_CLOCK_RES, 1);
    kv_uint(c, VMP_HDR_INTERVAL, 1000000);
    kv_uint(c, VMP_HDR_POINTER_SIZE, 4);
    c_uint(c, VMP_HDR_STATES);
    c_array(c, 3);
    c_str(c, "interpreter");
    c_str(c, "jit");
    c_str(c, "gc");
    c_uint(c, VMP_HDR_CODE_KINDS);
    c_array(c, 2);
    c_str(c, "method");
    c_str(c, "closed PIC");
    c_uint(c, VMP_HDR_TIERS);
    c_array(c, 1);
    c_str(c, "c2");
    c_uint(c, VMP_HDR_EVENT_KINDS);
    c_array(c, 1);
    c_str(c, "compaction");
    c_uint(c, VMP_HDR_COUNTER_KINDS);
    c_array(c, 1);
    c_str(c, "heap");
    c_uint(c, VMP_HDR_FAILURE_REASONS);
    c_array(c, 2);
    c_str(c, "no frame");
    c_str(c, "");
    c_uint(c, VMP_HDR_LABELS);
    c_map(c, 2);
    c_str(c, "benchmark");
    c_str(c, "fib");
    c_str(c, "commit");
    c_str(c, "abc123");
    kv_uint(c, VMP_HDR_START_MONOTONIC, 99999);

    /* MODULE */
    rec_start(c, 7, VMP_REC_MODULE);
    kv_uint(c, VMP_MOD_ID, 1);
    kv_str(c, VMP_MOD_PATH, "/usr/bin/vm");
    c_uint(c, VMP_MOD_BUILD_ID);
    c_bstr(c, build_id, sizeof build_id);
    kv_uint(c, VMP_MOD_BIAS, 0x1000);
    kv_uint(c, VMP_MOD_START, 0x401000);
    kv_uint(c, VMP_MOD_END, 0x500000);

    /* MODULE_SYMBOLS */
    rec_start(c, 3, VMP_REC_MODULE_SYMBOLS);
    kv_uint(c, VMP_SYMS_MODULE, 1);
    c_uint(c, VMP_SYMS_LIST);
    c_array(c, 6);
    c_uint(c, 0x400100);
    c_uint(c, 0x40);
    c_str(c, "interpret");
    c_uint(c, 0x400200);
    c_uint(c, 0);
    c_str(c, "_ZN2gc7collectEv");

    /* THREAD */
    rec_start(c, 5, VMP_REC_THREAD);
    kv_uint(c, VMP_THR_ID, 77);
    kv_str(c, VMP_THR_NAME, "main");
    kv_uint(c, VMP_THR_TIME, 5);
    kv_uint(c, VMP_THR_END_TIME, 900);

    /* FUNCTION */
    rec_start(c, 9, VMP_REC_FUNCTION);
    kv_uint(c, VMP_FN_ID, 10);
    kv_str(c, VMP_FN_NAME, "benchFib");
    kv_str(c, VMP_FN_SCOPE, "Integer");
    kv_str(c, VMP_FN_SIGNATURE, "(I)I");
    kv_str(c, VMP_FN_FILE, "Integer.st");
    kv_uint(c, VMP_FN_LINE, 12);
    c_uint(c, VMP_FN_LINES);
    c_array(c, 4);
    c_uint(c, 0);
    c_uint(c, 12);
    c_uint(c, 7);
    c_uint(c, 13);
    kv_uint(c, VMP_FN_BC_SIZE, 23);

    /* CODE_ZONE */
    rec_start(c, 5, VMP_REC_CODE_ZONE);
    kv_uint(c, VMP_ZONE_ID, 1);
    kv_str(c, VMP_ZONE_NAME, "machine code zone");
    kv_uint(c, VMP_ZONE_START, 0x10000);
    kv_uint(c, VMP_ZONE_END, 0x20000);

    /* CODE_OBJECT */
    rec_start(c, 13, VMP_REC_CODE_OBJECT);
    kv_uint(c, VMP_CODE_ID, 100);
    kv_uint(c, VMP_CODE_ZONE, 1);
    kv_uint(c, VMP_CODE_KIND, 0);
    kv_str(c, VMP_CODE_NAME, "Integer>>benchFib");
    kv_uint(c, VMP_CODE_FUNCTION, 10);
    kv_uint(c, VMP_CODE_START, 0x10100);
    kv_uint(c, VMP_CODE_SIZE, 0x80);
    kv_uint(c, VMP_CODE_GENERATION, 0);
    kv_uint(c, VMP_CODE_TIER, 1);
    c_uint(c, VMP_CODE_PC_MAP);
    c_array(c, 6); /* deltas 4, 8, 0 -> offsets 4, 12, 12 */
    c_uint(c, 4);
    c_uint(c, 1);
    c_uint(c, 8);
    c_uint(c, 5);
    c_uint(c, 0);
    c_uint(c, 9);
    c_uint(c, VMP_CODE_INLINE);
    c_array(c, 2);
    c_array(c, 5);
    c_uint(c, 0x10);
    c_uint(c, 11);
    c_uint(c, 3);
    c_uint(c, 10);
    c_uint(c, 0xFFFFFFFFu);
    c_array(c, 1);
    c_uint(c, 0x40);
    kv_uint(c, VMP_CODE_TIME, 321);

    /* CODE_SNAPSHOT */
    rec_start(c, 5, VMP_REC_CODE_SNAPSHOT);
    kv_uint(c, VMP_SNAP_ZONE, 1);
    kv_uint(c, VMP_SNAP_GENERATION, 1);
    c_uint(c, VMP_SNAP_ENTRIES);
    c_array(c, 2);
    c_uint(c, 100);
    c_uint(c, 0x10100);
    kv_uint(c, VMP_SNAP_TIME, 400);

    /* CODE_COMPACTION */
    rec_start(c, 7, VMP_REC_CODE_COMPACTION);
    kv_uint(c, VMP_COMP_ZONE, 1);
    kv_uint(c, VMP_COMP_GENERATION, 2);
    c_uint(c, VMP_COMP_MOVES);
    c_array(c, 2);
    c_uint(c, 100);
    c_uint(c, 0x10000);
    c_uint(c, VMP_COMP_FREES);
    c_array(c, 3);
    c_uint(c, 101);
    c_uint(c, 102);
    c_uint(c, 103);
    kv_uint(c, VMP_COMP_TIME, 500);
    kv_uint(c, VMP_COMP_DURATION, 50);

    /* CODE_FREE */
    rec_start(c, 4, VMP_REC_CODE_FREE);
    kv_uint(c, VMP_FREE_GENERATION, 3);
    kv_uint(c, VMP_FREE_ID, 100);
    kv_uint(c, VMP_FREE_TIME, 600);

    /* CODE_MOVE */
    rec_start(c, 5, VMP_REC_CODE_MOVE);
    kv_uint(c, VMP_MOVE_GENERATION, 4);
    kv_uint(c, VMP_MOVE_ID, 104);
    kv_uint(c, VMP_MOVE_START, 0x10200);
    kv_uint(c, VMP_MOVE_TIME, 700);

    /* STACK_NODE: a machine frame, then a symbolic one with bcpc */
    rec_start(c, 4, VMP_REC_STACK_NODE);
    kv_uint(c, VMP_NODE_ID, 1);
    kv_uint(c, VMP_NODE_PARENT, 0);
    kv_uint(c, VMP_NODE_PC, 0x10104);
    rec_start(c, 5, VMP_REC_STACK_NODE);
    kv_uint(c, VMP_NODE_ID, 2);
    kv_uint(c, VMP_NODE_PARENT, 1);
    kv_uint(c, VMP_NODE_FUNCTION, 10);
    kv_uint(c, VMP_NODE_BCPC, 7);

    /* SAMPLE with every key, then one with defaults */
    rec_start(c, 9, VMP_REC_SAMPLE);
    kv_int(c, VMP_SMP_TIME_DELTA, 1000);
    kv_uint(c, VMP_SMP_THREAD, 77);
    kv_uint(c, VMP_SMP_STATE, 1);
    kv_uint(c, VMP_SMP_PC, 0x10104);
    kv_uint(c, VMP_SMP_GENERATION, 4);
    kv_uint(c, VMP_SMP_STACK, 2);
    kv_uint(c, VMP_SMP_WEIGHT, 3);
    kv_uint(c, VMP_SMP_BLAME, 100);
    rec_start(c, 1, VMP_REC_SAMPLE);

    /* FAILED_SAMPLE with a negative delta */
    rec_start(c, 4, VMP_REC_FAILED_SAMPLE);
    kv_int(c, VMP_SMP_TIME_DELTA, -400);
    kv_uint(c, VMP_SMP_THREAD, 78);
    kv_uint(c, VMP_SMP_REASON, 1);

    /* EVENT */
    rec_start(c, 7, VMP_REC_EVENT);
    kv_uint(c, VMP_EVT_TIME, 800);
    kv_uint(c, VMP_EVT_KIND, 0);
    kv_uint(c, VMP_EVT_DURATION, 20);
    kv_uint(c, VMP_EVT_THREAD, 77);
    kv_int(c, VMP_EVT_VALUE, -5);
    kv_str(c, VMP_EVT_TEXT, "compacted 3 methods");

    /* COUNTER */
    rec_start(c, 4, VMP_REC_COUNTER);
    kv_uint(c, VMP_CTR_TIME, 850);
    kv_uint(c, VMP_CTR_KIND, 0);
    kv_int(c, VMP_CTR_VALUE, INT64_MIN);

    /* END */
    rec_start(c, 9, VMP_REC_END);
    kv_uint(c, VMP_END_TIME, 1000);
    kv_uint(c, VMP_END_SAMPLES, 3);
    kv_uint(c, VMP_END_DROPPED_FULL, 4);
    kv_uint(c, VMP_END_DROPPED_WRITE, 5);
    kv_uint(c, VMP_END_FAILED, 1);
    kv_uint(c, VMP_END_CHUNKS, 0);
    kv_uint(c, VMP_END_TRUNCATED_STACKS, 6);
    kv_uint(c, VMP_END_GENERATION, 4);
}
