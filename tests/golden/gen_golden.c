/* SPDX-License-Identifier: MIT
 *
 * gen_golden.c - build the hand-made golden files of formats 1.x and 2.0 under
 * tests/golden/ (spec.md §3 to §8; each invalid file is named after the rule
 * it breaks).  The committed bytes are the reference: this program exists so
 * that the files can be regenerated for inspection (gen_golden.sh), never by
 * the tests.
 *
 * usage: vmp-gen-golden DIR      (writes DIR/valid/... and DIR/invalid/...)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "vmp_test_files.h"

/* ---- raw bytes --------------------------------------------------------------- */

static void put(tf_buf *b, const void *data, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n)
            cap *= 2;
        b->p = realloc(b->p, cap);
        if (b->p == NULL)
            exit(99);
        b->cap = cap;
    }
    memcpy(b->p + b->n, data, n);
    b->n += n;
}

/* Bytes appended to the chunk being filled / to the file itself. */
#define RAW(f, ...)                                        \
    do {                                                   \
        static const unsigned char raw_[] = {__VA_ARGS__}; \
        put(&(f)->chunk, raw_, sizeof raw_);               \
    } while (0)
#define RAW_OUT(f, ...)                                    \
    do {                                                   \
        static const unsigned char raw_[] = {__VA_ARGS__}; \
        put(&(f)->out, raw_, sizeof raw_);                 \
    } while (0)

static const char *dir;

static void save(tf_file *f, const char *sub, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/%s", dir, sub, name);
    FILE *out = fopen(path, "wb");
    if (out == NULL || fwrite(f->out.p, 1, f->out.n, out) != f->out.n || fclose(out) != 0) {
        perror(path);
        exit(1);
    }
    tf_free(f);
}

/* A file header frame with the given fields (spec §3). */
static void begin(tf_file *f, uint32_t frame_size, uint16_t major, uint16_t minor, uint32_t flags)
{
    memset(f, 0, sizeof *f);
    unsigned char h[8 + 16 + 64];
    memset(h, 0, sizeof h);
    h[0] = 0x56, h[1] = 0x2a, h[2] = 0x4d, h[3] = 0x18;
    h[4] = (unsigned char)frame_size, h[5] = (unsigned char)(frame_size >> 8);
    memcpy(h + 8, "\x89VMP\r\n\x1a\n", 8);
    h[16] = (unsigned char)major, h[17] = (unsigned char)(major >> 8);
    h[18] = (unsigned char)minor, h[19] = (unsigned char)(minor >> 8);
    h[20] = (unsigned char)flags, h[21] = (unsigned char)(flags >> 8);
    for (size_t i = 24; i < 8 + frame_size && i < sizeof h; i++)
        h[i] = (unsigned char)(0xa0 + i); /* fields of a later minor version */
    put(&f->out, h, 8 + frame_size);
}

/* A chunk compressed with the given frame flags (R-CHK-1 variants). */
static void chunk_with(tf_file *f, int checksum, int content_size)
{
    ZSTD_CCtx *c = ZSTD_createCCtx();
    size_t cap = ZSTD_compressBound(f->chunk.n);
    unsigned char *dst = malloc(cap);
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, checksum);
    ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, content_size);
    size_t n;
    if (content_size) {
        n = ZSTD_compress2(c, dst, cap, f->chunk.p, f->chunk.n);
    } else {
        /* streaming without a pledged size: no Frame_Content_Size */
        ZSTD_inBuffer in = {f->chunk.p, f->chunk.n, 0};
        ZSTD_outBuffer out = {dst, cap, 0};
        n = ZSTD_compressStream2(c, &out, &in, ZSTD_e_end);
        n = ZSTD_isError(n) ? n : out.pos;
    }
    if (ZSTD_isError(n))
        exit(99);
    put(&f->out, dst, n);
    free(dst);
    ZSTD_freeCCtx(c);
    f->chunk.n = 0;
}

static void minimal_valid_body(tf_file *f)
{
    tf_header(f);
    tf_thread(f, 1, "main");
    tf_node_pc(f, 1, 0, 0x1010);
    tf_sample(f, 100, 1, 0, 1);
    tf_sample(f, 100, 1, 0, 1);
    tf_chunk_end(f);
    tf_end(f, 2, 0, 1, 0);
    tf_chunk_end(f);
}

/* ---- valid files ------------------------------------------------------------ */

/* A file of a later minor version (1.7): a longer header frame with fields
 * this reader does not know, flags set, unknown record types, unknown keys
 * with values of every CBOR kind, an unknown skippable frame.  Readers of
 * 1.0 read it (R-HDR-2, R-HDR-3, R-HDR-4, R-REC-2, R-CHK-4, §7). */
static void future_minor(void)
{
    tf_file f;
    begin(&f, 32, 1, 7, 0x3);
    tf_rec(&f, 1, 3); /* HEADER with an unknown key 40 */
    tf_uint(&f, 1);
    tf_tstr(&f, "vmp 1.7 writer");
    tf_uint(&f, 10);
    tf_array(&f, 1);
    tf_tstr(&f, "running");
    tf_uint(&f, 40); /* key 40: {"x": [1, -2, 1(2)], "y": h'00ff'} */
    RAW(&f, 0xa2, 0x61, 'x', 0x83, 0x01, 0x21, 0xc1, 0x02, 0x61, 'y', 0x42, 0x00, 0xff);
    /* unknown record type 60: keys of every kind */
    tf_rec(&f, 60, 5);
    tf_uint(&f, 1);
    RAW(&f, 0x44, 1, 2, 3, 4); /* bstr */
    tf_uint(&f, 2);
    RAW(&f, 0xa1, 0x01, 0xa1, 0x02, 0x80); /* nested maps and an empty array */
    tf_uint(&f, 3);
    tf_int(&f, -1000000);
    tf_uint(&f, 4);
    RAW(&f, 0xd8, 0x20, 0x63, 'u', 'r', 'i'); /* tag 32 */
    tf_uint(&f, 5);
    RAW(&f, 0xf9, 0x3e, 0x00); /* half float 1.5 */
    /* a THREAD with an unknown key */
    tf_rec(&f, 5, 3);
    tf_ku(&f, 1, 1);
    tf_uint(&f, 2);
    tf_tstr(&f, "main");
    tf_uint(&f, 50);
    RAW(&f, 0x82, 0xf5, 0xf6); /* [true, null] */
    tf_node_pc(&f, 1, 0, 0x1010);
    /* a SAMPLE with an unknown key 30 */
    tf_rec(&f, 14, 4);
    tf_ku(&f, 1, 100);
    tf_ku(&f, 2, 1);
    tf_ku(&f, 6, 1);
    tf_uint(&f, 30);
    tf_tstr(&f, "future");
    tf_chunk_end(&f);
    /* an unknown skippable frame between chunks */
    RAW_OUT(&f, 0x5b, 0x2a, 0x4d, 0x18, 5, 0, 0, 0, 'h', 'e', 'l', 'l', 'o');
    tf_rec(&f, 61, 0); /* an unknown record with no key but its type */
    tf_sample(&f, 50, 1, 0, 1);
    tf_chunk_end(&f);
    tf_end(&f, 2, 0, 2, 0);
    tf_chunk_end(&f);
    save(&f, "valid", "future-minor.vmp");
}

/* Every integer and length in a non-shortest encoding (R-REC-3). */
static void non_shortest(void)
{
    tf_file f;
    begin(&f, 16, 1, 0, 0);
    /* HEADER: map(2) as b8 02, type 0 as 18 00, 1 as 19 00 01; producer
     * with a 1-byte length; states [78 07 "running"] in array 98 01 */
    RAW(&f, 0xb8, 0x03, 0x18, 0x00, 0x19, 0x00, 0x01, 0x18, 0x01, 0x78, 0x04, 'h', 'a', 'n', 'd',
        0x1a, 0x00, 0x00, 0x00, 0x0a, 0x98, 0x01, 0x78, 0x07, 'r', 'u', 'n', 'n', 'i', 'n', 'g');
    /* THREAD {0: 5, 1: 1, 2: "main"} with 8-byte values */
    RAW(&f, 0xa3, 0x1b, 0, 0, 0, 0, 0, 0, 0, 0, 0x1b, 0, 0, 0, 0, 0, 0, 0, 5, 0x18, 0x01, 0x1b, 0,
        0, 0, 0, 0, 0, 0, 1, 0x18, 0x02, 0x79, 0x00, 0x04, 'm', 'a', 'i', 'n');
    /* STACK_NODE {0: 13, 1: 1, 3: 0x1010} */
    RAW(&f, 0xb9, 0x00, 0x03, 0x00, 0x18, 0x0d, 0x01, 0x1a, 0x00, 0x00, 0x00, 0x01, 0x03, 0x1b, 0,
        0, 0, 0, 0, 0, 0x10, 0x10);
    /* SAMPLE {0: 14, 1: 100, 2: 1, 6: 1, 7: 3} */
    RAW(&f, 0xba, 0x00, 0x00, 0x00, 0x05, 0x00, 0x0e, 0x01, 0x19, 0x00, 0x64, 0x02, 0x18, 0x01,
        0x06, 0x1a, 0x00, 0x00, 0x00, 0x01, 0x07, 0x1b, 0, 0, 0, 0, 0, 0, 0, 3);
    /* SAMPLE with a negative delta in a long form: {0: 14, 1: -10, 2: 1} */
    RAW(&f, 0xa3, 0x00, 0x0e, 0x01, 0x3b, 0, 0, 0, 0, 0, 0, 0, 9, 0x02, 0x01);
    tf_chunk_end(&f);
    tf_end(&f, 2, 0, 1, 0);
    tf_chunk_end(&f);
    save(&f, "valid", "non-shortest.vmp");
}

/* Late and missing functions, a thread renamed and ended, samples of a
 * thread without a THREAD record, vocabulary indexes past the header's
 * arrays (R-ID-2, R-ID-3, R-ID-4). */
static void ids_late_vocab(void)
{
    tf_file f;
    begin(&f, 16, 1, 0, 0);
    tf_header(&f); /* one state: "running" */
    tf_thread(&f, 1, "main");
    tf_node_fn(&f, 1, 0, 7, 3); /* function 7: defined later */
    tf_node_fn(&f, 2, 1, 8, 1); /* function 8: never defined */
    tf_sample(&f, 100, 1, 0, 2);
    tf_rec(&f, 14, 4); /* state 5: past the states array */
    tf_ku(&f, 1, 100);
    tf_ku(&f, 2, 9); /* thread 9: no THREAD record */
    tf_ku(&f, 3, 5);
    tf_ku(&f, 6, 1);
    tf_rec(&f, 16, 3); /* EVENT of kind 4: past the event kinds */
    tf_ku(&f, 1, 150);
    tf_ku(&f, 2, 4);
    tf_ku(&f, 3, 10);
    tf_rec(&f, 6, 3); /* FUNCTION 7, after its first use */
    tf_ku(&f, 1, 7);
    tf_uint(&f, 2);
    tf_tstr(&f, "late");
    tf_ku(&f, 8, 10);
    tf_rec(&f, 5, 3); /* THREAD 1 again: renamed, ended */
    tf_ku(&f, 1, 1);
    tf_uint(&f, 2);
    tf_tstr(&f, "main (renamed)");
    tf_ku(&f, 4, 400);
    tf_chunk_end(&f);
    tf_end(&f, 2, 0, 1, 0);
    tf_chunk_end(&f);
    save(&f, "valid", "ids-late-vocab.vmp");
}

/* A seek table that contradicts the chunks: treated as absent (R-SEEK-1). */
static void seek_table_lies(void)
{
    tf_file f;
    begin(&f, 16, 1, 0, 0);
    minimal_valid_body(&f);
    /* [[9999, 1, 1, 0, 0, 77]] (11 bytes), then the footer: the frame's
     * size 8 + 11 + 8 = 27 and "VMPS"; the chunk is not at offset 9999 */
    RAW_OUT(&f, 0x57, 0x2a, 0x4d, 0x18, 19, 0, 0, 0, 0x81, 0x86, 0x19, 0x27, 0x0f, 0x01, 0x01, 0x00,
            0x00, 0x18, 0x4d, 27, 0, 0, 0, 'V', 'M', 'P', 'S');
    save(&f, "valid", "seek-table-lies.vmp");
}

/* A file cut inside chunk 0: truncated, no complete chunk (R-CHK-6). */
static void truncated_in_chunk0(void)
{
    tf_file f;
    begin(&f, 16, 1, 0, 0);
    minimal_valid_body(&f);
    f.out.n = 24 + 20; /* the file header frame and 20 bytes of chunk 0 */
    save(&f, "valid", "truncated-in-chunk0.vmp");
}

/* A file that ends cleanly between frames without an END record: truncated
 * (R-CHK-6), every chunk usable. */
static void truncated_no_end(void)
{
    tf_file f;
    begin(&f, 16, 1, 0, 0);
    tf_header(&f);
    tf_thread(&f, 1, "main");
    tf_node_pc(&f, 1, 0, 0x1010);
    tf_sample(&f, 100, 1, 0, 1);
    tf_chunk_end(&f);
    save(&f, "valid", "truncated-no-end.vmp");
}

/* A snapshot and code objects written after it (R-SNAP-2): code 1 is freed by
 * the empty snapshot at generation 1; code 2 (generation 1) and code 3
 * (generation 0) come after the snapshot and are not freed by it. */
static void snapshot_later_code(void)
{
    tf_file f;
    begin(&f, 16, 1, 0, 0);
    tf_header(&f);
    tf_zone(&f, 1, 0x1000, 0x9000);
    tf_code(&f, 1, 1, 0x1000, 0x100, 0);
    tf_node_pc(&f, 1, 0, 0x1010);
    tf_node_pc(&f, 2, 0, 0x2010);
    tf_sample(&f, 10, 1, 0, 1);
    tf_rec(&f, 9, 3); /* CODE_SNAPSHOT {zone 1, generation 1, entries []} */
    tf_ku(&f, 1, 1);
    tf_ku(&f, 2, 1);
    tf_uint(&f, 3);
    tf_array(&f, 0);
    tf_code(&f, 2, 1, 0x1000, 0x100, 1);
    tf_code(&f, 3, 1, 0x2000, 0x100, 0);
    tf_sample(&f, 10, 1, 1, 1); /* code 2 */
    tf_sample(&f, 10, 1, 1, 2); /* code 3 */
    tf_chunk_end(&f);
    tf_end(&f, 3, 0, 1, 1);
    tf_chunk_end(&f);
    save(&f, "valid", "snapshot-later-code.vmp");
}

/* A SAMPLE_BLOCK (format 2.0, spec §5.14): times in microseconds, a thread
 * and a stack table, a column of one item, a pc of its own for sample 1,
 * between two SAMPLE records whose times chain through it (R-BLK-1). */
/* What comes before the block: the header (sample_time_unit 1000 ns), two
 * threads, node 1 and its child `node`, and a sample. */
static void block_prelude(tf_file *f, uint64_t node)
{
    tf_rec(f, 1, 1);
    tf_ku(f, 19, 1000);
    tf_thread(f, 1, "main");
    tf_thread(f, 7, "worker");
    tf_node_pc(f, 1, 0, 0x1010);
    tf_node_pc(f, node, 1, 0x1020);
    tf_sample(f, 100, 1, 0, 1);
}

/* What comes after it: a sample of `node` whose time chains through the
 * block, and END. */
static void block_epilogue(tf_file *f, uint64_t node)
{
    tf_sample(f, 100, 7, 0, node);
    tf_chunk_end(f);
    tf_end(f, 5, 0, 1, 0);
    tf_chunk_end(f);
}

static void block_body(tf_file *f, int columns_agree)
{
    block_prelude(f, 2);
    tf_rec(f, 19, 7);
    tf_uint(f, 1); /* times: 5, 1 and 2 us */
    tf_array(f, 3);
    tf_uint(f, 5);
    tf_uint(f, 1);
    tf_uint(f, 2);
    tf_uint(f, 2); /* threads */
    tf_array(f, 2);
    tf_uint(f, 1);
    tf_uint(f, 7);
    tf_uint(f, 3); /* thread: indexes */
    tf_array(f, columns_agree ? 3 : 2);
    tf_uint(f, 0);
    tf_uint(f, 1);
    if (columns_agree)
        tf_uint(f, 0);
    tf_uint(f, 4); /* stacks */
    tf_array(f, 2);
    tf_uint(f, 1);
    tf_uint(f, 2);
    tf_uint(f, 5); /* stack: indexes */
    tf_array(f, 3);
    tf_uint(f, 0);
    tf_uint(f, 1);
    tf_uint(f, 1);
    tf_uint(f, 8); /* weight: 2 for every sample */
    tf_array(f, 1);
    tf_uint(f, 2);
    tf_uint(f, 10); /* pcs: sample 1 ran at 0x1234 */
    tf_array(f, 2);
    tf_uint(f, 1);
    tf_uint(f, 0x1234);
    block_epilogue(f, 2);
}

/* The same samples with packed columns (byte planes) and a time base: the
 * times 5, 1 and 2 us as 1 + 4, 0 and 1; the thread and stack ids without
 * tables, the stack ids of width 2 (node 258 in place of node 2). */
static void block_packed_body(tf_file *f)
{
    block_prelude(f, 258);
    tf_rec(f, 19, 6);
    RAW(f, 0x01, 0x44, 0x01, 0x04, 0x00, 0x01);                   /* times: h'01 04 00 01' */
    RAW(f, 0x0c, 0x01);                                           /* time_base: 1 */
    RAW(f, 0x03, 0x44, 0x01, 0x01, 0x07, 0x01);                   /* thread: h'01 01 07 01' */
    RAW(f, 0x05, 0x47, 0x02, 0x01, 0x02, 0x02, 0x00, 0x01, 0x01); /* stack: 1, 258, 258 */
    RAW(f, 0x08, 0x81, 0x02);                                     /* weight: [2] */
    RAW(f, 0x0a, 0x82, 0x01, 0x19, 0x12, 0x34);                   /* pcs: [1, 0x1234] */
    block_epilogue(f, 258);
}

/* The same samples in sample contexts (R-BLK-5): (1, 0, none), (258, 0,
 * 0x1234) and (258, 0, none), ids 1 to 3, one packed context column. */
static void block_contexts_body(tf_file *f)
{
    block_prelude(f, 258);
    tf_rec(f, 19, 6);
    RAW(f, 0x01, 0x44, 0x01, 0x04, 0x00, 0x01); /* times: h'01 04 00 01' */
    RAW(f, 0x0c, 0x01);                         /* time_base: 1 */
    RAW(f, 0x03, 0x44, 0x01, 0x01, 0x07, 0x01); /* thread: h'01 01 07 01' */
    RAW(f, 0x08, 0x81, 0x02);                   /* weight: [2] */
    RAW(f, 0x0d, 0x89, 0x01, 0x00, 0x00, 0x19, 0x01, 0x02, 0x00, 0x19, 0x12, 0x34, 0x19, 0x01, 0x02,
        0x00, 0x00);                            /* contexts: [1, 0, 0, 258, 0, 0x1234, 258, 0, 0] */
    RAW(f, 0x0f, 0x44, 0x01, 0x01, 0x02, 0x03); /* context: h'01 01 02 03' */
    block_epilogue(f, 258);
}

static void sample_blocks(void)
{
    tf_file f;
    begin(&f, 16, 2, 0, 0); /* a 2.0 file without blocks reads as 1.x files do */
    minimal_valid_body(&f);
    save(&f, "valid", "major-2.vmp");
    begin(&f, 16, 2, 0, 0);
    block_body(&f, 1);
    save(&f, "valid", "sample-blocks.vmp");
    begin(&f, 16, 2, 0, 0);
    block_packed_body(&f);
    save(&f, "valid", "sample-blocks-packed.vmp");
    begin(&f, 16, 2, 0, 0);
    block_contexts_body(&f);
    save(&f, "valid", "sample-blocks-contexts.vmp");
    begin(&f, 16, 2, 0, 0);
    block_body(&f, 0);
    save(&f, "invalid", "r-blk-2-column-length.vmp");
    begin(&f, 16, 1, 2, 0); /* a block in a file of major 1 */
    block_body(&f, 1);
    save(&f, "invalid", "r-blk-4-block-in-major-1.vmp");
}

/* Sample kinds (format 2.1, spec §5.15): a HEADER declaring `alloc` in
 * bytes and `lock` in nanoseconds (or, with `cpu_named`, a kind named
 * "cpu": R-KND-1), a class (FUNCTION is_class, R-KND-4) under a machine
 * frame, two CPU samples with KIND_SAMPLE records between them whose
 * absolute times take no part in the deltas (R-KND-2), and END with
 * kind_samples. */
static void kinds_body(tf_file *f, int cpu_named, uint64_t lock_kind, uint64_t end_kinds)
{
    tf_rec(f, 1, 4);
    tf_ku(f, 8, 1000000);
    tf_uint(f, 10); /* states */
    tf_array(f, 1);
    tf_tstr(f, "running");
    tf_uint(f, 20); /* sample_kinds */
    tf_array(f, 2);
    tf_tstr(f, cpu_named ? "cpu" : "alloc");
    tf_tstr(f, "lock");
    tf_uint(f, 21); /* sample_units */
    tf_array(f, 2);
    tf_tstr(f, "bytes");
    tf_tstr(f, "nanoseconds");
    tf_thread(f, 1, "main");
    tf_rec(f, 6, 3); /* FUNCTION 5: the class byte[] */
    tf_ku(f, 1, 5);
    tf_uint(f, 2);
    tf_tstr(f, "byte[]");
    tf_ku(f, 9, 1);
    tf_node_pc(f, 1, 0, 0x1010);
    tf_rec(f, 13, 3); /* node 2: the class, no bcpc */
    tf_ku(f, 1, 2);
    tf_ku(f, 2, 1);
    tf_ku(f, 4, 5);
    tf_sample(f, 1000, 1, 0, 1);
    tf_rec(f, 20, 5); /* alloc: 512 KiB of byte[] at 5 ms */
    tf_ku(f, 1, 5000000);
    tf_ku(f, 2, 1);
    tf_ku(f, 6, 2);
    tf_ku(f, 7, 524288);
    tf_ku(f, 8, 1);
    tf_rec(f, 20, 5); /* lock: 20 us waited, at 3 ms */
    tf_ku(f, 1, 3000000);
    tf_ku(f, 2, 1);
    tf_ku(f, 6, 1);
    tf_ku(f, 7, 20000);
    tf_ku(f, 8, lock_kind);
    tf_sample(f, 1000, 1, 0, 1); /* at 2000 ns: the KIND_SAMPLEs change no delta */
    tf_chunk_end(f);
    tf_rec(f, 2, 6);
    tf_ku(f, 1, 5000000);
    tf_ku(f, 2, 2);
    tf_ku(f, 5, 0);
    tf_ku(f, 6, 1);
    tf_ku(f, 8, 0);
    tf_ku(f, 9, end_kinds);
    tf_chunk_end(f);
}

static void sample_kinds(void)
{
    tf_file f;
    begin(&f, 16, 2, 1, 0);
    kinds_body(&f, 0, 2, 2);
    save(&f, "valid", "sample-kinds.vmp");
    begin(&f, 16, 2, 1, 0);
    kinds_body(&f, 1, 2, 2);
    save(&f, "invalid", "r-knd-1-kind-named-cpu.vmp");
    begin(&f, 16, 2, 1, 0);
    kinds_body(&f, 0, 3, 2); /* kind 3 of 2 */
    save(&f, "invalid", "r-knd-2-undeclared-kind.vmp");
    begin(&f, 16, 2, 1, 0);
    kinds_body(&f, 0, 2, 1); /* END says 1 KIND_SAMPLE, the file has 2 */
    save(&f, "invalid", "r-end-1-wrong-kind-sample-count.vmp");
}

/* ---- invalid files, named after the rule they break ------------------------------ */

static void invalid_header(void)
{
    tf_file f;
    begin(&f, 16, 1, 0, 0);
    f.out.p[9] = 'X'; /* "\x89XMP..." */
    minimal_valid_body(&f);
    save(&f, "invalid", "r-hdr-1-bad-magic.vmp");

    begin(&f, 8, 1, 0, 0); /* frame_size 8 < 16 */
    minimal_valid_body(&f);
    save(&f, "invalid", "r-hdr-2-frame-size-8.vmp");

    /* format 2.0 is known since 2.0 (a 2.0 file without blocks); a later
     * major is refused */
    begin(&f, 16, 3, 0, 0);
    minimal_valid_body(&f);
    save(&f, "invalid", "r-hdr-3-major-3.vmp");

    begin(&f, 16, 1, 0, 0);
    tf_thread(&f, 1, "main"); /* not a HEADER first */
    tf_header(&f);
    tf_chunk_end(&f);
    tf_end(&f, 0, 0, 1, 0);
    tf_chunk_end(&f);
    save(&f, "invalid", "r-hdr-5-header-not-first.vmp");
}

static void invalid_chunks(void)
{
    tf_file f;
    begin(&f, 16, 1, 0, 0);
    tf_header(&f);
    chunk_with(&f, 0, 1);
    save(&f, "invalid", "r-chk-1-no-checksum.vmp");

    begin(&f, 16, 1, 0, 0);
    tf_header(&f);
    chunk_with(&f, 1, 0);
    save(&f, "invalid", "r-chk-1-no-content-size.vmp");

    begin(&f, 16, 1, 0, 0);
    tf_header(&f);
    tf_chunk_end(&f);
    f.out.p[f.out.n - 1] ^= 0x55; /* the checksum's last byte */
    save(&f, "invalid", "r-chk-1-bad-checksum.vmp");

    begin(&f, 16, 1, 0, 0);
    tf_header(&f);
    tf_rec(&f, 5, 2); /* THREAD whose name is cut by the chunk's end */
    tf_ku(&f, 1, 1);
    tf_uint(&f, 2);
    RAW(&f, 0x64, 'm', 'a');
    tf_chunk_end(&f);
    RAW(&f, 'i', 'n');
    tf_end(&f, 0, 0, 1, 0);
    tf_chunk_end(&f);
    save(&f, "invalid", "r-chk-2-record-spans-chunks.vmp");

    begin(&f, 16, 1, 0, 0);
    minimal_valid_body(&f);
    f.out.n -= 7; /* cut inside the last frame */
    save(&f, "invalid", "r-chk-3-truncated.vmp");

    begin(&f, 16, 1, 0, 0);
    tf_header(&f);
    tf_chunk_end(&f);
    RAW_OUT(&f, 'g', 'a', 'r', 'b', 'a', 'g', 'e', '!');
    tf_end(&f, 0, 0, 1, 0);
    tf_chunk_end(&f);
    save(&f, "invalid", "r-chk-4-garbage-between-frames.vmp");

    begin(&f, 16, 1, 0, 0);
    RAW_OUT(&f, 0x28, 0xb5, 0x2f, 0xfd, 0xc4, 0x58, 0, 0, 0, 0, 0, 1, 0, 0); /* 1 TB content */
    RAW_OUT(&f, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
    save(&f, "invalid", "r-lim-1-chunk-of-1-tb.vmp");
}

static void invalid_records(void)
{
    tf_file f;
    begin(&f, 16, 1, 0, 0);
    tf_header(&f);
    RAW(&f, 0xa2, 0x01, 0x01, 0x00, 0x05); /* {1: 1, 0: 5}: type not first */
    tf_chunk_end(&f);
    tf_end(&f, 0, 0, 1, 0);
    tf_chunk_end(&f);
    save(&f, "invalid", "r-rec-1-type-not-first.vmp");

    begin(&f, 16, 1, 0, 0);
    tf_header(&f);
    RAW(&f, 0xbf, 0x00, 0x05, 0x01, 0x01, 0xff); /* indefinite-length map */
    tf_chunk_end(&f);
    tf_end(&f, 0, 0, 1, 0);
    tf_chunk_end(&f);
    save(&f, "invalid", "r-rec-3-indefinite-length.vmp");

    begin(&f, 16, 1, 0, 0);
    tf_header(&f);
    tf_rec(&f, 5, 2);
    tf_ku(&f, 1, 1);
    tf_ku(&f, 2, 7); /* name as a uint */
    tf_chunk_end(&f);
    tf_end(&f, 0, 0, 1, 0);
    tf_chunk_end(&f);
    save(&f, "invalid", "r-rec-4-wrong-type.vmp");

    begin(&f, 16, 1, 0, 0);
    tf_header(&f);
    tf_zone(&f, 1, 0x1000, 0x9000);
    tf_rec(&f, 8, 2); /* CODE_OBJECT without its required start and size */
    tf_ku(&f, 1, 1);
    tf_ku(&f, 2, 1);
    tf_chunk_end(&f);
    tf_end(&f, 0, 0, 1, 0);
    tf_chunk_end(&f);
    save(&f, "invalid", "r-rec-4-missing-required.vmp");

    begin(&f, 16, 1, 0, 0);
    tf_header(&f);
    tf_rec(&f, 13, 3); /* both pc and function */
    tf_ku(&f, 1, 1);
    tf_ku(&f, 3, 0x1010);
    tf_ku(&f, 4, 1);
    tf_chunk_end(&f);
    tf_end(&f, 0, 0, 1, 0);
    tf_chunk_end(&f);
    save(&f, "invalid", "r-stk-1-pc-and-function.vmp");

    begin(&f, 16, 1, 0, 0);
    tf_header(&f);
    tf_rec(&f, 14, 2);
    tf_uint(&f, 1);
    tf_int(&f, -5); /* first sample of the chunk at time -5 */
    tf_ku(&f, 2, 1);
    tf_chunk_end(&f);
    tf_end(&f, 1, 0, 1, 0);
    tf_chunk_end(&f);
    save(&f, "invalid", "r-smp-1-negative-time.vmp");
}

static void invalid_semantics(void)
{
    tf_file f;
    begin(&f, 16, 1, 0, 0);
    tf_header(&f);
    tf_sample(&f, 100, 1, 0, 7); /* stack node 7 was never defined */
    tf_chunk_end(&f);
    tf_end(&f, 1, 0, 1, 0);
    tf_chunk_end(&f);
    save(&f, "invalid", "r-id-1-undefined-stack-node.vmp");

    begin(&f, 16, 1, 0, 0);
    tf_header(&f);
    tf_zone(&f, 1, 0x1000, 0x9000);
    tf_code(&f, 1, 1, 0x1000, 0x100, 0);
    tf_code(&f, 2, 1, 0x2000, 0x100, 0);
    tf_free_code(&f, 2, 1);
    tf_free_code(&f, 1, 2); /* generation goes back */
    tf_chunk_end(&f);
    tf_end(&f, 0, 0, 1, 2);
    tf_chunk_end(&f);
    save(&f, "invalid", "r-gen-1-generation-decreases.vmp");

    begin(&f, 16, 1, 0, 0);
    tf_header(&f);
    tf_zone(&f, 1, 0x1000, 0x9000);
    tf_code(&f, 1, 1, 0x1000, 0x100, 5); /* generation 5, latest change 0 */
    tf_chunk_end(&f);
    tf_end(&f, 0, 0, 1, 0);
    tf_chunk_end(&f);
    save(&f, "invalid", "r-gen-2-code-from-the-future.vmp");

    begin(&f, 16, 1, 0, 0);
    tf_header(&f);
    tf_zone(&f, 1, 0x1000, 0x9000);
    tf_code(&f, 1, 1, 0x1000, 0x100, 0);
    tf_code(&f, 2, 1, 0x1080, 0x100, 0); /* overlaps code 1 */
    tf_chunk_end(&f);
    tf_end(&f, 0, 0, 1, 0);
    tf_chunk_end(&f);
    save(&f, "invalid", "r-gen-4-overlap.vmp");

    begin(&f, 16, 1, 0, 0);
    tf_header(&f);
    tf_zone(&f, 1, 0x1000, 0x9000);
    tf_rec(&f, 8, 5); /* pc map offset 0x200 in 0x100 bytes */
    tf_ku(&f, 1, 1);
    tf_ku(&f, 2, 1);
    tf_ku(&f, 6, 0x1000);
    tf_ku(&f, 7, 0x100);
    tf_uint(&f, 10);
    tf_array(&f, 2);
    tf_uint(&f, 0x200);
    tf_uint(&f, 3);
    tf_chunk_end(&f);
    tf_end(&f, 0, 0, 1, 0);
    tf_chunk_end(&f);
    save(&f, "invalid", "r-code-1-pc-map-past-size.vmp");

    begin(&f, 16, 1, 0, 0);
    tf_header(&f);
    tf_free_code(&f, 1, 42); /* code 42 was never defined */
    tf_chunk_end(&f);
    tf_end(&f, 0, 0, 1, 1);
    tf_chunk_end(&f);
    save(&f, "invalid", "r-code-2-free-undefined.vmp");

    /* 1.2: a CODE_MAP for a code object never defined */
    begin(&f, 16, 1, 2, 0);
    tf_header(&f);
    tf_rec(&f, 18, 2);
    tf_ku(&f, 1, 42);
    tf_uint(&f, 2);
    tf_array(&f, 2);
    tf_uint(&f, 0);
    tf_uint(&f, 3);
    tf_chunk_end(&f);
    tf_end(&f, 0, 0, 1, 0);
    tf_chunk_end(&f);
    save(&f, "invalid", "r-code-3-map-of-undefined-code.vmp");

    /* 1.2: a CODE_MAP for a code object whose CODE_OBJECT has a pc_map */
    begin(&f, 16, 1, 2, 0);
    tf_header(&f);
    tf_zone(&f, 1, 0x1000, 0x9000);
    tf_rec(&f, 8, 5);
    tf_ku(&f, 1, 1);
    tf_ku(&f, 2, 1);
    tf_ku(&f, 6, 0x1000);
    tf_ku(&f, 7, 0x100);
    tf_uint(&f, 10);
    tf_array(&f, 2);
    tf_uint(&f, 0);
    tf_uint(&f, 3);
    tf_rec(&f, 18, 2);
    tf_ku(&f, 1, 1);
    tf_uint(&f, 2);
    tf_array(&f, 2);
    tf_uint(&f, 0x10);
    tf_uint(&f, 5);
    tf_chunk_end(&f);
    tf_end(&f, 0, 0, 1, 0);
    tf_chunk_end(&f);
    save(&f, "invalid", "r-code-3-map-over-its-own.vmp");

    begin(&f, 16, 1, 0, 0);
    tf_header(&f);
    tf_zone(&f, 1, 0x1000, 0x9000);
    tf_rec(&f, 9, 3); /* snapshot lists code 9, never defined */
    tf_ku(&f, 1, 1);
    tf_ku(&f, 2, 1);
    tf_uint(&f, 3);
    tf_array(&f, 2);
    tf_uint(&f, 9);
    tf_uint(&f, 0x1000);
    tf_chunk_end(&f);
    tf_end(&f, 0, 0, 1, 1);
    tf_chunk_end(&f);
    save(&f, "invalid", "r-snap-1-undefined-code.vmp");

    begin(&f, 16, 1, 0, 0);
    tf_header(&f);
    tf_node_pc(&f, 1, 0, 0x1010);
    tf_sample(&f, 100, 1, 9, 1); /* generation 9; the file ends at 0 */
    tf_chunk_end(&f);
    tf_end(&f, 1, 0, 1, 0);
    tf_chunk_end(&f);
    save(&f, "invalid", "r-smp-3-generation-past-end.vmp");

    begin(&f, 16, 1, 0, 0);
    tf_header(&f);
    tf_node_pc(&f, 1, 0, 0x1010);
    tf_sample(&f, 100, 1, 0, 1);
    tf_chunk_end(&f);
    tf_end(&f, 5, 0, 1, 0); /* says 5 samples, the file has 1 */
    tf_chunk_end(&f);
    save(&f, "invalid", "r-end-1-wrong-sample-count.vmp");

    begin(&f, 16, 1, 0, 0);
    minimal_valid_body(&f);
    tf_thread(&f, 2, "after the end"); /* a chunk after END */
    tf_chunk_end(&f);
    save(&f, "invalid", "r-end-2-chunk-after-end.vmp");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: vmp-gen-golden DIR\n");
        return 2;
    }
    dir = argv[1];
    future_minor();
    non_shortest();
    ids_late_vocab();
    seek_table_lies();
    truncated_in_chunk0();
    truncated_no_end();
    snapshot_later_code();
    sample_blocks();
    sample_kinds();
    invalid_header();
    invalid_chunks();
    invalid_records();
    invalid_semantics();
    return 0;
}
