/* SPDX-License-Identifier: MIT
 *
 * vmp_test_files.c - byte-level builder of test files (spec.md §3, §4, §5).
 */
#include "vmp_test_files.h"

#include <cbor.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "vmp_format.h"

static void put(tf_buf *b, const void *data, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n)
            cap *= 2;
        b->p = realloc(b->p, cap);
        if (!b->p) {
            fprintf(stderr, "out of memory\n");
            exit(99);
        }
        b->cap = cap;
    }
    memcpy(b->p + b->n, data, n);
    b->n += n;
}

static void put_le32(tf_buf *b, uint32_t v)
{
    unsigned char x[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    put(b, x, 4);
}

void tf_begin(tf_file *f)
{
    static const unsigned char version[8] = {1, 0, 0, 0, 0, 0, 0, 0}; /* major, minor, flags */
    memset(f, 0, sizeof *f);
    put_le32(&f->out, VMP_FILE_FRAME_MAGIC);
    put_le32(&f->out, VMP_FILE_HEADER_SIZE);
    put(&f->out, VMP_MAGIC, VMP_MAGIC_SIZE);
    put(&f->out, version, sizeof version);
}

void tf_chunk_end(tf_file *f)
{
    ZSTD_CCtx *cctx = ZSTD_createCCtx();
    size_t cap = ZSTD_compressBound(f->chunk.n), n;
    unsigned char *dst = malloc(cap);
    if (!cctx || !dst) {
        fprintf(stderr, "out of memory\n");
        exit(99);
    }
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1);
    n = ZSTD_compress2(cctx, dst, cap, f->chunk.p ? f->chunk.p : dst, f->chunk.n);
    if (ZSTD_isError(n)) {
        fprintf(stderr, "zstd: %s\n", ZSTD_getErrorName(n));
        exit(99);
    }
    put(&f->out, dst, n);
    free(dst);
    ZSTD_freeCCtx(cctx);
    f->chunk.n = 0;
}

void tf_free(tf_file *f)
{
    free(f->out.p);
    free(f->chunk.p);
    memset(f, 0, sizeof *f);
}

void tf_uint(tf_file *f, uint64_t v)
{
    unsigned char x[9];
    put(&f->chunk, x, cbor_encode_uint(v, x, sizeof x));
}

void tf_int(tf_file *f, int64_t v)
{
    unsigned char x[9];
    if (v >= 0)
        put(&f->chunk, x, cbor_encode_uint((uint64_t)v, x, sizeof x));
    else
        put(&f->chunk, x, cbor_encode_negint((uint64_t)(-(v + 1)), x, sizeof x));
}

void tf_tstr(tf_file *f, const char *s)
{
    unsigned char x[9];
    size_t n = strlen(s);
    put(&f->chunk, x, cbor_encode_string_start(n, x, sizeof x));
    put(&f->chunk, s, n);
}

void tf_array(tf_file *f, size_t n)
{
    unsigned char x[9];
    put(&f->chunk, x, cbor_encode_array_start(n, x, sizeof x));
}

void tf_map(tf_file *f, size_t n)
{
    unsigned char x[9];
    put(&f->chunk, x, cbor_encode_map_start(n, x, sizeof x));
}

void tf_rec(tf_file *f, uint64_t type, size_t n_keys)
{
    tf_map(f, n_keys + 1);
    tf_uint(f, VMP_KEY_TYPE);
    tf_uint(f, type);
}

void tf_ku(tf_file *f, uint64_t key, uint64_t v)
{
    tf_uint(f, key);
    tf_uint(f, v);
}

void tf_header(tf_file *f)
{
    tf_rec(f, VMP_REC_HEADER, 3);
    tf_uint(f, VMP_HDR_PRODUCER);
    tf_tstr(f, "hand-made test file");
    tf_uint(f, VMP_HDR_STATES);
    tf_array(f, 1);
    tf_tstr(f, "running");
    tf_ku(f, VMP_HDR_INTERVAL, 1000000);
}

void tf_end(tf_file *f, uint64_t samples, uint64_t failed, uint64_t chunks, uint64_t generation)
{
    tf_rec(f, VMP_REC_END, 5);
    tf_ku(f, VMP_END_TIME, 5000000);
    tf_ku(f, VMP_END_SAMPLES, samples);
    tf_ku(f, VMP_END_FAILED, failed);
    tf_ku(f, VMP_END_CHUNKS, chunks);
    tf_ku(f, VMP_END_GENERATION, generation);
}

void tf_zone(tf_file *f, uint64_t id, uint64_t start, uint64_t end)
{
    tf_rec(f, VMP_REC_CODE_ZONE, 4);
    tf_ku(f, VMP_ZONE_ID, id);
    tf_uint(f, VMP_ZONE_NAME);
    tf_tstr(f, "zone");
    tf_ku(f, VMP_ZONE_START, start);
    tf_ku(f, VMP_ZONE_END, end);
}

void tf_code(tf_file *f, uint64_t id, uint64_t zone, uint64_t start, uint64_t size,
             uint64_t generation)
{
    tf_rec(f, VMP_REC_CODE_OBJECT, 5);
    tf_ku(f, VMP_CODE_ID, id);
    tf_ku(f, VMP_CODE_ZONE, zone);
    tf_ku(f, VMP_CODE_START, start);
    tf_ku(f, VMP_CODE_SIZE, size);
    tf_ku(f, VMP_CODE_GENERATION, generation);
}

void tf_free_code(tf_file *f, uint64_t generation, uint64_t id)
{
    tf_rec(f, VMP_REC_CODE_FREE, 2);
    tf_ku(f, VMP_FREE_GENERATION, generation);
    tf_ku(f, VMP_FREE_ID, id);
}

void tf_move(tf_file *f, uint64_t generation, uint64_t id, uint64_t new_start)
{
    tf_rec(f, VMP_REC_CODE_MOVE, 3);
    tf_ku(f, VMP_MOVE_GENERATION, generation);
    tf_ku(f, VMP_MOVE_ID, id);
    tf_ku(f, VMP_MOVE_START, new_start);
}

void tf_node_pc(tf_file *f, uint64_t id, uint64_t parent, uint64_t pc)
{
    tf_rec(f, VMP_REC_STACK_NODE, 3);
    tf_ku(f, VMP_NODE_ID, id);
    tf_ku(f, VMP_NODE_PARENT, parent);
    tf_ku(f, VMP_NODE_PC, pc);
}

void tf_node_fn(tf_file *f, uint64_t id, uint64_t parent, uint64_t function, uint64_t bcpc)
{
    tf_rec(f, VMP_REC_STACK_NODE, 4);
    tf_ku(f, VMP_NODE_ID, id);
    tf_ku(f, VMP_NODE_PARENT, parent);
    tf_ku(f, VMP_NODE_FUNCTION, function);
    tf_ku(f, VMP_NODE_BCPC, bcpc);
}

void tf_sample(tf_file *f, uint64_t delta, uint64_t thread, uint64_t generation, uint64_t stack)
{
    tf_rec(f, VMP_REC_SAMPLE, 5);
    tf_ku(f, VMP_SMP_TIME_DELTA, delta);
    tf_ku(f, VMP_SMP_THREAD, thread);
    tf_ku(f, VMP_SMP_PC, 0x1010);
    tf_ku(f, VMP_SMP_GENERATION, generation);
    tf_ku(f, VMP_SMP_STACK, stack);
}

void tf_thread(tf_file *f, uint64_t id, const char *name)
{
    tf_rec(f, VMP_REC_THREAD, 2);
    tf_ku(f, VMP_THR_ID, id);
    tf_uint(f, VMP_THR_NAME);
    tf_tstr(f, name);
}
