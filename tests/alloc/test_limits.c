/* SPDX-License-Identifier: MIT
 *
 * test_limits.c - the reader's limits hold against files that lie about
 * sizes (spec.md §8 R-LIM-1, §9, §4 R-CHK-5).
 *
 * Each hostile input is about 1 KB and claims something huge: a 1 TB chunk,
 * a billion-item array (a pc map, an inline chain, an unknown record's
 * value), a billion-pair map, a gigabyte string, nesting a million deep.
 * Each must fail with VMP_ERR_LIMIT (or VMP_ERR_TRUNCATED/CORRUPT where the
 * bytes run out first), with a message that names the limit or the problem
 * and an offset inside the file, in milliseconds, and the process's peak
 * memory must stay under 64 MB across all of them (getrusage).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <zstd.h>

#include "vmp_analyze.h"
#include "vmp_reader.h"
#include "vmp_test.h"

static const uint8_t file_header[24] = {0x56, 0x2a, 0x4d, 0x18, 16, 0, 0, 0, 0x89, 'V', 'M', 'P',
                                        '\r', '\n', 0x1a, '\n', 1,  0, 0, 0, 0,    0,   0,   0};

enum {
    FILE_SIZE = 1024
};

typedef struct input {
    uint8_t bytes[FILE_SIZE + 256];
    size_t size;
} input;

/* A file holding one chunk whose content is `content`, padded with CBOR
 * zeros (uint 0) up to about 1 KB. */
static void one_chunk(input *in, const uint8_t *content, size_t len)
{
    uint8_t padded[FILE_SIZE];
    memset(padded, 0, sizeof padded);
    memcpy(padded, content, len);
    memcpy(in->bytes, file_header, sizeof file_header);
    ZSTD_CCtx *c = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
    ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 1);
    size_t z = ZSTD_compress2(c, in->bytes + sizeof file_header,
                              sizeof in->bytes - sizeof file_header, padded, sizeof padded);
    ZSTD_freeCCtx(c);
    CHECK(!ZSTD_isError(z));
    in->size = sizeof file_header + z;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static long peak_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* Read `in` to its end with default options, through the reader and then
 * through the analysis; both must stop with `want` and a message holding
 * `needle`, quickly. */
static void expect_fail(const char *what, const input *in, vmp_status want, const char *needle)
{
    double t0 = now_ms();
    vmp_reader *r = NULL;
    vmp_record rec;
    vmp_status st = vmp_reader_open_memory(&r, in->bytes, in->size, what, NULL);
    CHECK(st == VMP_OK);
    while (st == VMP_OK)
        st = vmp_reader_next(r, &rec);
    char msg[300];
    snprintf(msg, sizeof msg, "%s", vmp_reader_errmsg(r));
    if (st != want || strstr(msg, needle) == NULL)
        fprintf(stderr, "%s: got %s, \"%s\"; want %s, \"%s\"\n", what, vmp_status_str(st), msg,
                vmp_status_str(want), needle);
    CHECK(st == want);
    CHECK(strstr(msg, needle) != NULL);
    CHECK(vmp_reader_offset(r) < in->size);
    vmp_reader_close(r);

    vmp_profile *p = NULL;
    CHECK(vmp_profile_create(&p, NULL) == VMP_OK);
    CHECK(vmp_reader_open_memory(&r, in->bytes, in->size, what, NULL) == VMP_OK);
    CHECK(vmp_profile_read(p, r) == want);
    vmp_reader_close(r);
    vmp_profile_free(p);
    double ms = now_ms() - t0;
    printf("%-28s %-18s %.2f ms  \"%s\"\n", what, vmp_status_str(want), ms, msg);
    CHECK(ms < 1000.0); /* milliseconds, even under sanitizers; never a scan of 1 TB */
}

/* spec R-LIM-1, R-CHK-5: a frame that declares 1 TB of content. */
static void huge_chunk(void)
{
    input in;
    memset(&in, 0, sizeof in);
    memcpy(in.bytes, file_header, sizeof file_header);
    uint8_t *f = in.bytes + sizeof file_header;
    f[0] = 0x28, f[1] = 0xb5, f[2] = 0x2f, f[3] = 0xfd; /* zstd frame magic */
    f[4] = 0xc4;                                        /* 8-byte content size, checksum */
    f[5] = 0x58;                                        /* window descriptor: 2 MiB */
    uint64_t tb = (uint64_t)1 << 40;
    for (int i = 0; i < 8; i++)
        f[6 + i] = (uint8_t)(tb >> (8 * i));
    for (size_t i = 14; i < FILE_SIZE - sizeof file_header; i++)
        f[i] = (uint8_t)(i * 131);
    in.size = FILE_SIZE;
    expect_fail("1 TB chunk", &in, VMP_ERR_LIMIT, "exceeds the chunk limit");
}

/* A CODE_OBJECT whose pc map claims a billion items (spec §8 items). */
static void billion_pc_map(void)
{
    static const uint8_t c[] = {0xa4, 0x00, 0x08, 0x01, 0x01, 0x07, 0x10,
                                0x0a, 0x9a, 0x3b, 0x9a, 0xca, 0x00};
    input in;
    one_chunk(&in, c, sizeof c);
    expect_fail("billion-item pc map", &in, VMP_ERR_LIMIT, "items limit");
}

/* A CODE_OBJECT with one inline record of a billion frames: the
 * billion-frame stack a hostile file can claim. */
static void billion_inline_chain(void)
{
    static const uint8_t c[] = {0xa5, 0x00, 0x08, 0x01, 0x01, 0x06, 0x00, 0x07, 0x10,
                                0x0b, 0x81, 0x9a, 0x3b, 0x9a, 0xca, 0x00, 0x00};
    input in;
    one_chunk(&in, c, sizeof c);
    expect_fail("billion-frame inline chain", &in, VMP_ERR_LIMIT, "items limit");
}

/* spec R-REC-2: an unknown record is skipped whole, but its billion-item
 * value is still bounded. */
static void billion_unknown(void)
{
    static const uint8_t c[] = {0xa2, 0x00, 0x18, 0x63, 0x01, 0x9a, 0x3b, 0x9a, 0xca, 0x00};
    input in;
    one_chunk(&in, c, sizeof c);
    expect_fail("billion-item unknown value", &in, VMP_ERR_LIMIT, "items limit");
}

/* A record that claims a billion keys. */
static void billion_map(void)
{
    static const uint8_t c[] = {0xba, 0x3b, 0x9a, 0xca, 0x00, 0x00, 0x0e};
    input in;
    one_chunk(&in, c, sizeof c);
    expect_fail("billion-pair record map", &in, VMP_ERR_LIMIT, "items limit");
}

/* A thread name of a gigabyte: the bytes run out before any limit. */
static void gigabyte_string(void)
{
    static const uint8_t c[] = {0xa3, 0x00, 0x05, 0x01, 0x01, 0x02, 0x7a, 0x40, 0x00, 0x00, 0x00};
    input in;
    one_chunk(&in, c, sizeof c);
    expect_fail("gigabyte string", &in, VMP_ERR_CORRUPT, "runs past the end of the chunk");
}

/* Arrays nested 900 deep inside an unknown key (the content is all 0x81). */
static void deep_nesting(void)
{
    uint8_t c[905];
    c[0] = 0xa2, c[1] = 0x00, c[2] = 0x0e, c[3] = 0x18, c[4] = 0x63;
    memset(c + 5, 0x81, sizeof c - 5);
    input in;
    one_chunk(&in, c, sizeof c);
    expect_fail("nesting 900 deep", &in, VMP_ERR_LIMIT, "nesting deeper than the limit");
}

int main(void)
{
    long before = peak_rss_kb();
    VMP_TEST_RUN(huge_chunk);
    VMP_TEST_RUN(billion_pc_map);
    VMP_TEST_RUN(billion_inline_chain);
    VMP_TEST_RUN(billion_unknown);
    VMP_TEST_RUN(billion_map);
    VMP_TEST_RUN(gigabyte_string);
    VMP_TEST_RUN(deep_nesting);
    long after = peak_rss_kb();
    printf("peak RSS: %ld KB before, %ld KB after\n", before, after);
    CHECK(after - before < 64 * 1024);
    CHECK(after < 64 * 1024 || after - before < 8 * 1024); /* sanitizer runtimes start big */
    VMP_TEST_EXIT();
}
