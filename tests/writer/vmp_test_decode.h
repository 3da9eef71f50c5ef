/* SPDX-License-Identifier: MIT
 *
 * vmp_test_decode.h - an independent decoder of vmp files for the writer's
 * tests, built on zstd and libcbor only (spec.md §3, §4, §5, §6).  It checks
 * the container rules as it goes and keeps every record as its CBOR map.
 * A SAMPLE_BLOCK (format 2.0, §5.14) stays one map: its samples are not
 * counted or timed here, so tests of samples write format 1.x.
 */
#ifndef VMP_TEST_DECODE_H
#define VMP_TEST_DECODE_H

#include <cbor.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "vmp_format.h"

typedef struct td_rec {
    unsigned type;
    size_t chunk;  /* index of the data chunk holding it */
    uint64_t time; /* SAMPLE/FAILED_SAMPLE: absolute time (spec R-SMP-1) */
    cbor_item_t *map;
} td_rec;

typedef struct td_chunk {
    uint64_t offset, compressed_size, content_size, first_time, last_time, samples;
} td_chunk;

typedef struct td_file {
    td_rec *recs;
    size_t n, cap;
    td_chunk chunks[4096];
    size_t n_chunks;
    int truncated;       /* the file ends inside a frame */
    uint64_t good_bytes; /* bytes up to the end of the last complete frame */
    cbor_item_t *seek;   /* seek table array, or NULL */
    int seek_footer_ok;
    char err[200]; /* first violation found, "" if none */
} td_file;

static inline uint32_t td_u32le(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void td_fail(td_file *f, const char *msg, uint64_t off)
{
    if (!f->err[0])
        snprintf(f->err, sizeof f->err, "%s at offset %llu", msg, (unsigned long long)off);
}

static inline cbor_item_t *td_get(const cbor_item_t *map, uint64_t key)
{
    struct cbor_pair *p = cbor_map_handle(map);
    for (size_t i = 0; i < cbor_map_size(map); i++)
        if (cbor_isa_uint(p[i].key) && cbor_get_int(p[i].key) == key)
            return p[i].value;
    return NULL;
}

static inline int td_has(const td_rec *r, uint64_t key)
{
    return td_get(r->map, key) != NULL;
}

static inline uint64_t td_uint(const td_rec *r, uint64_t key, uint64_t dflt)
{
    cbor_item_t *v = td_get(r->map, key);
    return v && cbor_isa_uint(v) ? cbor_get_int(v) : dflt;
}

static inline int64_t td_int(const td_rec *r, uint64_t key, int64_t dflt)
{
    cbor_item_t *v = td_get(r->map, key);
    if (!v)
        return dflt;
    if (cbor_isa_negint(v))
        return -1 - (int64_t)cbor_get_int(v);
    return (int64_t)cbor_get_int(v);
}

/* Copy a text string into buf ("" when absent). */
static inline const char *td_str(const cbor_item_t *v, char *buf, size_t size)
{
    buf[0] = '\0';
    if (v && cbor_isa_string(v) && cbor_string_is_definite(v)) {
        size_t n = cbor_string_length(v);
        if (n >= size)
            n = size - 1;
        memcpy(buf, cbor_string_handle(v), n);
        buf[n] = '\0';
    }
    return buf;
}

static inline const char *td_rstr(const td_rec *r, uint64_t key, char *buf, size_t size)
{
    return td_str(td_get(r->map, key), buf, size);
}

/* Array element i as uint. */
static inline uint64_t td_at(const cbor_item_t *arr, size_t i)
{
    return cbor_get_int(cbor_array_handle(arr)[i]);
}

static inline void td_decode_chunk(td_file *f, const uint8_t *data, size_t size, uint64_t off)
{
    size_t pos = 0;
    uint64_t prev = 0;
    td_chunk *c = &f->chunks[f->n_chunks];
    while (pos < size) {
        struct cbor_load_result res;
        cbor_item_t *item = cbor_load(data + pos, size - pos, &res);
        if (!item || res.error.code != CBOR_ERR_NONE) {
            td_fail(f, "record does not decode (R-CHK-2)", off);
            if (item)
                cbor_decref(&item);
            return;
        }
        pos += res.read;
        /* spec R-REC-1 */
        if (!cbor_isa_map(item) || !cbor_map_is_definite(item) || cbor_map_size(item) == 0 ||
            !cbor_isa_uint(cbor_map_handle(item)[0].key) ||
            cbor_get_int(cbor_map_handle(item)[0].key) != 0 ||
            !cbor_isa_uint(cbor_map_handle(item)[0].value)) {
            td_fail(f, "record is not a map with type first (R-REC-1)", off);
            cbor_decref(&item);
            continue;
        }
        if (f->n == f->cap) {
            f->cap = f->cap ? f->cap * 2 : 1024;
            f->recs = realloc(f->recs, f->cap * sizeof *f->recs);
        }
        td_rec *r = &f->recs[f->n++];
        r->type = (unsigned)cbor_get_int(cbor_map_handle(item)[0].value);
        r->chunk = f->n_chunks;
        r->map = item;
        r->time = 0;
        if (r->type == VMP_REC_SAMPLE || r->type == VMP_REC_FAILED_SAMPLE) {
            int64_t t = (int64_t)prev + td_int(r, VMP_SMP_TIME_DELTA, 0);
            if (t < 0)
                td_fail(f, "negative sample time (R-SMP-1)", off);
            r->time = (uint64_t)t;
            prev = r->time;
            if (c->samples == 0)
                c->first_time = r->time;
            c->last_time = r->time;
            c->samples++;
        }
    }
}

static inline int td_load_mem(td_file *f, const uint8_t *d, size_t size)
{
    memset(f, 0, sizeof *f);
    if (size < 24 || td_u32le(d) != VMP_FILE_FRAME_MAGIC || td_u32le(d + 4) < 16 ||
        memcmp(d + 8, VMP_MAGIC, VMP_MAGIC_SIZE) != 0 || d[16] < 1 || d[16] > 2 || d[17] != 0 ||
        d[18] > (d[16] == 1 ? VMP_FORMAT_MINOR : 0) || /* the versions this project writes */
        d[19] != 0 || td_u32le(d + 20) != 0) {
        td_fail(f, "bad file header (R-HDR-1)", 0);
        return -1;
    }
    size_t pos = 8 + td_u32le(d + 4);
    f->good_bytes = pos;
    while (pos < size) {
        if (size - pos < 8) {
            f->truncated = 1;
            break;
        }
        uint32_t magic = td_u32le(d + pos);
        if (magic >= VMP_SKIPPABLE_MAGIC_MIN && magic <= VMP_SKIPPABLE_MAGIC_MAX) {
            uint64_t len = td_u32le(d + pos + 4);
            if (len > size - pos - 8) {
                f->truncated = 1;
                break;
            }
            if (magic == VMP_SEEK_FRAME_MAGIC) {
                const uint8_t *c = d + pos + 8;
                struct cbor_load_result res;
                f->seek = len >= 8 ? cbor_load(c, len - 8, &res) : NULL;
                f->seek_footer_ok = len >= 8 && td_u32le(c + len - 8) == len + 8 &&
                                    memcmp(c + len - 4, "VMPS", 4) == 0;
            }
            pos += 8 + len;
            f->good_bytes = pos;
            continue;
        }
        if (magic != VMP_ZSTD_MAGIC) {
            td_fail(f, "garbage between frames (R-CHK-4)", pos);
            return -1;
        }
        size_t csize = ZSTD_findFrameCompressedSize(d + pos, size - pos);
        if (ZSTD_isError(csize)) {
            f->truncated = 1;
            break;
        }
        unsigned long long content = ZSTD_getFrameContentSize(d + pos, csize);
        /* Frame_Header_Descriptor bit 2: Content_Checksum_flag (RFC 8878) */
        int checksum = (d[pos + 4] & 0x04) != 0;
        if (content == ZSTD_CONTENTSIZE_UNKNOWN || content == ZSTD_CONTENTSIZE_ERROR || !checksum) {
            td_fail(f, "frame without content size or checksum (R-CHK-1)", pos);
            return -1;
        }
        uint8_t *out = malloc(content ? content : 1);
        size_t got = ZSTD_decompress(out, content, d + pos, csize);
        if (ZSTD_isError(got) || got != content) {
            free(out);
            td_fail(f, "frame does not decompress", pos);
            return -1;
        }
        if (f->n_chunks == sizeof f->chunks / sizeof f->chunks[0]) {
            free(out);
            td_fail(f, "too many chunks for the test decoder", pos);
            return -1;
        }
        f->chunks[f->n_chunks].offset = pos;
        f->chunks[f->n_chunks].compressed_size = csize;
        f->chunks[f->n_chunks].content_size = content;
        td_decode_chunk(f, out, content, pos);
        free(out);
        f->n_chunks++;
        pos += csize;
        f->good_bytes = pos;
    }
    return f->err[0] ? -1 : 0;
}

static inline int td_load(td_file *f, const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        memset(f, 0, sizeof *f);
        snprintf(f->err, sizeof f->err, "cannot open %s", path);
        return -1;
    }
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    uint8_t *d = malloc(n > 0 ? (size_t)n : 1);
    size_t got = fread(d, 1, (size_t)n, fp);
    fclose(fp);
    int rc = td_load_mem(f, d, got);
    free(d);
    return rc;
}

static inline void td_free(td_file *f)
{
    for (size_t i = 0; i < f->n; i++)
        cbor_decref(&f->recs[i].map);
    free(f->recs);
    if (f->seek)
        cbor_decref(&f->seek);
    f->recs = NULL;
    f->n = 0;
}

static inline size_t td_count(const td_file *f, unsigned type)
{
    size_t n = 0;
    for (size_t i = 0; i < f->n; i++)
        n += f->recs[i].type == type;
    return n;
}

/* The index of the n-th record of `type`, or SIZE_MAX. */
static inline size_t td_find(const td_file *f, unsigned type, size_t nth)
{
    for (size_t i = 0; i < f->n; i++)
        if (f->recs[i].type == type && nth-- == 0)
            return i;
    return SIZE_MAX;
}

#endif
