/* SPDX-License-Identifier: MIT
 *
 * vmp_input.c - buffered input and the frame layer of the reader: the file
 * header frame (spec.md §3, R-HDR-1..4), skippable frames and the seek table
 * (§4 R-CHK-4, §6), and data frames decompressed one chunk at a time
 * (§4 R-CHK-1, R-CHK-3, R-CHK-5; §8 limits).
 *
 * Input is either borrowed memory or a descriptor read through one fixed
 * buffer; a frame is never loaded whole.  A data frame's header is parsed
 * before anything is allocated for it, and its content is decompressed with
 * ZSTD_decompressStream() straight into a buffer of exactly the declared
 * content size.
 */
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_getFrameHeader, customMem, stableOutBuffer */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <zstd.h>
#include <zstd_errors.h>

#include "vmp_reader_int.h"
#include "vmp_seek_int.h"

/* ---- buffered input ------------------------------------------------------ */

static size_t avail(const vmp_reader *r)
{
    return r->data_end - r->data_pos;
}

static uint64_t cur_off(const vmp_reader *r)
{
    return r->data_off + r->data_pos;
}

static uint32_t load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t load_le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

/* Try to have at least `need` (<= the buffer size) unread bytes; fewer are
 * available afterwards only at end of input.  Memory input is always full. */
static vmp_status fill(vmp_reader *r, size_t need)
{
    size_t have = avail(r);

    if (r->fd < 0 || r->eof || have >= need)
        return VMP_OK;
    if (r->data_pos > 0) {
        memmove(r->inbuf, r->inbuf + r->data_pos, have);
        r->data_off += r->data_pos;
        r->data_pos = 0;
        r->data_end = have;
    }
    while (r->data_end < need && r->data_end < r->inbuf_size) {
        ssize_t n = read(r->fd, r->inbuf + r->data_end, r->inbuf_size - r->data_end);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return vmp_rd_fail(r, VMP_ERR_IO, r->data_off + r->data_end, "read failed: %s",
                               strerror(errno));
        }
        if (n == 0) {
            r->eof = 1;
            break;
        }
        r->data_end += (size_t)n;
    }
    return VMP_OK;
}

/* Skip `n` bytes of the frame that starts at `frame_off`, keeping the last
 * (up to) 8 skipped bytes in `tail` and, when `copy` is not NULL, all of
 * them in `copy`. */
static vmp_status skip_bytes(vmp_reader *r, uint64_t n, uint64_t frame_off, uint8_t tail[8],
                             uint8_t *copy)
{
    while (n > 0) {
        size_t take;

        if (avail(r) == 0) {
            vmp_status st = fill(r, 1);
            if (st < 0)
                return st;
            if (avail(r) == 0)
                return vmp_rd_fail(r, VMP_ERR_TRUNCATED, frame_off,
                                   "file ends inside a skippable frame");
        }
        take = avail(r);
        if ((uint64_t)take > n)
            take = (size_t)n;
        if (copy != NULL) {
            memcpy(copy, r->data + r->data_pos, take);
            copy += take;
        }
        if (tail != NULL) {
            if (take >= 8) {
                memcpy(tail, r->data + r->data_pos + take - 8, 8);
            } else {
                memmove(tail, tail + take, 8 - take);
                memcpy(tail + 8 - take, r->data + r->data_pos, take);
            }
        }
        r->data_pos += take;
        n -= take;
    }
    return VMP_OK;
}

/* ---- file header frame --------------------------------------------------- */

vmp_status vmp_rd_read_file_header(vmp_reader *r)
{
    static const uint8_t frame_magic[4] = {0x56, 0x2A, 0x4D, 0x18};
    const size_t hdr = VMP_SKIPPABLE_HEADER_SIZE + VMP_FILE_HEADER_SIZE;
    const uint8_t *p;
    size_t have, cmp;
    uint32_t size;
    unsigned major, minor;
    int keep;
    vmp_status st;

    st = fill(r, hdr);
    if (st < 0)
        return st;
    have = avail(r);
    p = r->data + r->data_pos;
    /* spec R-HDR-1 */
    if (have == 0)
        return vmp_rd_fail(r, VMP_ERR_NOT_VMP, 0, "not a vmp profile (empty file)");
    cmp = have < 4 ? have : 4;
    if (memcmp(p, frame_magic, cmp) != 0)
        return vmp_rd_fail(r, VMP_ERR_NOT_VMP, 0, "not a vmp profile");
    if (have > 8) {
        cmp = have - 8 < VMP_MAGIC_SIZE ? have - 8 : VMP_MAGIC_SIZE;
        if (memcmp(p + 8, VMP_MAGIC, cmp) != 0)
            return vmp_rd_fail(r, VMP_ERR_NOT_VMP, 0, "not a vmp profile");
    }
    if (have < hdr)
        return vmp_rd_fail(r, VMP_ERR_TRUNCATED, 0, "file ends inside the file header");
    size = load_le32(p + 4);
    /* spec R-HDR-2 */
    if (size < VMP_FILE_HEADER_SIZE)
        return vmp_rd_fail_rule(r, "R-HDR-2", VMP_ERR_CORRUPT, 0,
                                "file header frame size %" PRIu32 " is smaller than %d", size,
                                VMP_FILE_HEADER_SIZE);
    major = load_le16(p + 16);
    minor = load_le16(p + 18);
    /* spec R-HDR-3 */
    if (major < 1 || major > VMP_FORMAT_MAJOR_MAX)
        return vmp_rd_fail(r, VMP_ERR_VERSION, 0,
                           "format %u.%u is %s this reader (reads 1.x and 2.x)", major, minor,
                           major > VMP_FORMAT_MAJOR_MAX ? "newer than" : "not supported by");
    /* spec R-HDR-4: flags are ignored */
    r->info.format_major = major;
    r->info.format_minor = minor;
    /* kept as it is for vmp_reader_file_header(), when it fits */
    keep = (uint64_t)size + VMP_SKIPPABLE_HEADER_SIZE <= sizeof r->file_header;
    if (keep)
        memcpy(r->file_header, p, hdr);
    r->data_pos += hdr;
    st = skip_bytes(r, (uint64_t)size - VMP_FILE_HEADER_SIZE, 0, NULL,
                    keep ? r->file_header + hdr : NULL);
    if (st >= 0 && keep)
        r->file_header_size = (size_t)size + VMP_SKIPPABLE_HEADER_SIZE;
    if (st < 0)
        return st;
    r->info.bytes_consumed = cur_off(r);
    return VMP_OK;
}

/* ---- zstd ---------------------------------------------------------------- */

/* zstd's free() does not pass the size; keep it in front of the block. */
typedef union zhdr {
    size_t size;
    max_align_t align;
} zhdr;

static void *zstd_alloc(void *opaque, size_t size)
{
    vmp_reader *r = opaque;
    zhdr *h;

    if (size > SIZE_MAX - sizeof(zhdr))
        return NULL;
    h = vmp_rd_alloc(r, size + sizeof(zhdr));
    if (h == NULL)
        return NULL;
    h->size = size;
    return h + 1;
}

static void zstd_free(void *opaque, void *addr)
{
    zhdr *h;

    if (addr == NULL)
        return;
    h = (zhdr *)addr - 1;
    vmp_rd_free(opaque, h, h->size + sizeof(zhdr));
}

vmp_status vmp_rd_zstd_init(vmp_reader *r)
{
    ZSTD_customMem mem = {zstd_alloc, zstd_free, r};
    int wlog = 27; /* zstd's default limit: 128 MiB */
    ZSTD_DCtx *d;

    while (wlog < 31 && ((uint64_t)1 << wlog) < r->max_chunk)
        wlog++;
    d = ZSTD_createDCtx_advanced(mem);
    if (d == NULL)
        return vmp_rd_fail(r, VMP_ERR_NOMEM, 0, "out of memory");
    /* The content buffer holds the whole frame: zstd writes straight into it
     * and never allocates a window of its own. */
    if (ZSTD_isError(ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, wlog)) ||
        ZSTD_isError(ZSTD_DCtx_setParameter(d, ZSTD_d_stableOutBuffer, 1))) {
        ZSTD_freeDCtx(d);
        return vmp_rd_fail(r, VMP_ERR_INVALID_ARG, 0, "zstd rejected the decoder parameters");
    }
    r->dctx = d;
    return VMP_OK;
}

void vmp_rd_zstd_free(vmp_reader *r)
{
    ZSTD_freeDCtx(r->dctx);
    r->dctx = NULL;
}

/* ---- frames -------------------------------------------------------------- */

/* One step of the digest of the chunks' (offset, size, content size). */
static uint64_t digest_step(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15u + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdu;
}

/* Fold the finished chunk's samples and their first and last times into the
 * digest (once per chunk: at the next frame). */
static void fold_chunk_samples(vmp_reader *r)
{
    if (!r->chunk_pending)
        return;
    r->chunk_pending = 0;
    r->chunk_digest = digest_step(r->chunk_digest, r->chunk_samples);
    if (r->chunk_samples) { /* spec R-SEEK-2: times of a chunk without samples do not count */
        r->chunk_digest = digest_step(r->chunk_digest, r->chunk_first_time);
        r->chunk_digest = digest_step(r->chunk_digest, r->chunk_last_time);
    }
}

/* The digest of a seek table's entries, as data_frame() and
 * fold_chunk_samples() build it from the chunks. */
typedef struct seek_digest {
    uint64_t h;
    size_t count;
} seek_digest;

static vmp_status digest_entry(void *ctx, size_t count, size_t i, const vmp_seek_entry *e)
{
    seek_digest *d = ctx;
    (void)i;
    d->count = count;
    d->h = digest_step(d->h, e->offset);
    d->h = digest_step(d->h, e->compressed_size);
    d->h = digest_step(d->h, e->content_size);
    d->h = digest_step(d->h, e->samples);
    if (e->samples) {
        d->h = digest_step(d->h, e->first_time_ns);
        d->h = digest_step(d->h, e->last_time_ns);
    }
    return VMP_OK;
}

/* spec R-SEEK-1: whether the seek table's content (without its footer) has
 * one entry per chunk read, each with that chunk's offset, size, content
 * size, sample count and (with samples) first and last sample times.  Sets
 * r->warning when it does not. */
static int seek_table_agrees(vmp_reader *r, const uint8_t *p, size_t n, uint64_t frame_off)
{
    seek_digest d = {0, 0};
    if (vmp_seek__walk(p, n, r->name, frame_off, r->warning, sizeof r->warning, digest_entry, &d) <
        0) {
        size_t len = strlen(r->warning);
        snprintf(r->warning + len, sizeof r->warning - len, "; treated as absent");
        return 0;
    }
    if (d.count == r->chunks_seen && d.h == r->chunk_digest)
        return 1;
    if (d.count != r->chunks_seen)
        snprintf(r->warning, sizeof r->warning,
                 "%s: offset %" PRIu64 ": seek table: %zu entries for %" PRIu64
                 " chunks; treated as absent",
                 r->name, frame_off, d.count, r->chunks_seen);
    else
        snprintf(r->warning, sizeof r->warning,
                 "%s: offset %" PRIu64 ": seek table: its entries contradict the chunks (offsets, "
                 "sizes, sample counts or times); treated as absent",
                 r->name, frame_off);
    return 0;
}

static vmp_status skippable_frame(vmp_reader *r, uint32_t magic, uint64_t frame_off)
{
    uint8_t tail[8] = {0};
    uint8_t *table = NULL;
    uint32_t size;
    vmp_status st = fill(r, VMP_SKIPPABLE_HEADER_SIZE);

    if (st < 0)
        return st;
    if (avail(r) < VMP_SKIPPABLE_HEADER_SIZE)
        return vmp_rd_fail(r, VMP_ERR_TRUNCATED, frame_off, "file ends inside a frame header");
    size = load_le32(r->data + r->data_pos + 4);
    r->data_pos += VMP_SKIPPABLE_HEADER_SIZE;
    /* spec R-SEEK-1: a table no larger than a chunk is kept to be checked;
     * a larger one counts as absent */
    if (magic == VMP_SEEK_FRAME_MAGIC)
        fold_chunk_samples(r);
    if (magic == VMP_SEEK_FRAME_MAGIC && size > r->max_chunk)
        snprintf(r->warning, sizeof r->warning,
                 "%s: offset %" PRIu64 ": seek table: %" PRIu32
                 " bytes, more than a chunk; treated as absent",
                 r->name, frame_off, size);
    if (magic == VMP_SEEK_FRAME_MAGIC && size >= VMP_SEEK_FOOTER_SIZE && size <= r->max_chunk) {
        table = vmp_rd_alloc(r, size);
        if (table == NULL)
            return vmp_rd_fail(r, VMP_ERR_NOMEM, frame_off, "seek table: out of memory");
    }
    /* spec R-CHK-4 */
    st = skip_bytes(r, size, frame_off, tail, table);
    /* spec §6, R-SEEK-1: only noted, never required; the footer must agree,
     * and so must every entry with the chunks read */
    if (st >= 0 && table != NULL) {
        if (memcmp(tail + 4, VMP_SEEK_FOOTER_MAGIC, 4) != 0 ||
            load_le32(tail) != (uint64_t)size + VMP_SKIPPABLE_HEADER_SIZE)
            snprintf(r->warning, sizeof r->warning,
                     "%s: offset %" PRIu64 ": seek table: the footer does not match the frame; "
                     "treated as absent",
                     r->name, frame_off);
        else if (seek_table_agrees(r, table, size - VMP_SEEK_FOOTER_SIZE, frame_off))
            r->info.seek_table = 1;
    }
    if (table != NULL)
        vmp_rd_free(r, table, size);
    if (st < 0)
        return st;
    r->info.bytes_consumed = cur_off(r);
    return VMP_OK;
}

static vmp_status ensure_content(vmp_reader *r, size_t size)
{
    if (r->content_cap >= size)
        return VMP_OK;
    vmp_rd_free(r, r->content, r->content_cap);
    r->content = NULL;
    r->content_cap = 0;
    r->content = vmp_rd_alloc(r, size);
    if (r->content == NULL)
        return VMP_ERR_NOMEM;
    r->content_cap = size;
    return VMP_OK;
}

static vmp_status data_frame(vmp_reader *r, uint64_t frame_off)
{
    static uint8_t empty[1];
    uint64_t index = r->chunks_seen;
    ZSTD_frameHeader fh;
    ZSTD_outBuffer out;
    size_t ret;
    vmp_status st = fill(r, ZSTD_FRAMEHEADERSIZE_MAX);

    if (st < 0)
        return st;
    ret = ZSTD_getFrameHeader(&fh, r->data + r->data_pos, avail(r));
    if (ZSTD_isError(ret))
        return vmp_rd_fail(r, VMP_ERR_CORRUPT, frame_off,
                           "chunk %" PRIu64 ": bad zstd frame header: %s", index,
                           ZSTD_getErrorName(ret));
    if (ret > 0)
        return vmp_rd_fail(r, VMP_ERR_TRUNCATED, frame_off,
                           "chunk %" PRIu64 ": file ends inside the zstd frame header", index);
    /* spec R-CHK-1 */
    if (fh.frameContentSize == ZSTD_CONTENTSIZE_UNKNOWN)
        return vmp_rd_fail_rule(r, "R-CHK-1", VMP_ERR_CORRUPT, frame_off,
                                "chunk %" PRIu64 ": zstd frame without a content size", index);
    if (!fh.checksumFlag)
        return vmp_rd_fail_rule(r, "R-CHK-1", VMP_ERR_CORRUPT, frame_off,
                                "chunk %" PRIu64 ": zstd frame without a content checksum", index);
    /* spec R-CHK-5, R-LIM-1: before allocating */
    if (fh.frameContentSize > r->max_chunk || fh.frameContentSize > SIZE_MAX)
        return vmp_rd_fail(r, VMP_ERR_LIMIT, frame_off,
                           "chunk %" PRIu64 ": content of %llu bytes exceeds the chunk limit "
                           "%" PRIu64,
                           index, fh.frameContentSize, r->max_chunk);
    if (ensure_content(r, (size_t)fh.frameContentSize) < 0)
        return vmp_rd_fail(r, VMP_ERR_NOMEM, frame_off, "chunk %" PRIu64 ": out of memory", index);

    ZSTD_DCtx_reset(r->dctx, ZSTD_reset_session_only);
    out.dst = fh.frameContentSize > 0 ? r->content : empty;
    out.size = (size_t)fh.frameContentSize;
    out.pos = 0;
    for (;;) {
        ZSTD_inBuffer in;
        size_t out_before = out.pos;

        if (avail(r) == 0) {
            st = fill(r, 1);
            if (st < 0)
                return st;
            if (avail(r) == 0)
                /* spec R-CHK-3 */
                return vmp_rd_fail(r, VMP_ERR_TRUNCATED, frame_off,
                                   "chunk %" PRIu64 ": file ends inside the zstd frame", index);
        }
        in.src = r->data + r->data_pos;
        in.size = avail(r);
        in.pos = 0;
        ret = ZSTD_decompressStream(r->dctx, &out, &in);
        r->data_pos += in.pos;
        if (ZSTD_isError(ret)) {
            switch (ZSTD_getErrorCode(ret)) {
            case ZSTD_error_memory_allocation:
                return vmp_rd_fail(r, VMP_ERR_NOMEM, frame_off, "chunk %" PRIu64 ": out of memory",
                                   index);
            case ZSTD_error_checksum_wrong:
                return vmp_rd_fail_rule(r, "R-CHK-1", VMP_ERR_CORRUPT, frame_off,
                                        "chunk %" PRIu64 ": zstd checksum mismatch", index);
            case ZSTD_error_frameParameter_windowTooLarge:
                return vmp_rd_fail(r, VMP_ERR_LIMIT, frame_off,
                                   "chunk %" PRIu64 ": zstd window too large", index);
            default:
                return vmp_rd_fail(r, VMP_ERR_CORRUPT, frame_off, "chunk %" PRIu64 ": zstd: %s",
                                   index, ZSTD_getErrorName(ret));
            }
        }
        if (ret == 0)
            break;
        if (in.pos == 0 && out.pos == out_before)
            return vmp_rd_fail(r, VMP_ERR_CORRUPT, frame_off,
                               "chunk %" PRIu64 ": content longer than the declared %llu bytes",
                               index, fh.frameContentSize);
    }
    if (out.pos != out.size)
        return vmp_rd_fail(r, VMP_ERR_CORRUPT, frame_off,
                           "chunk %" PRIu64 ": content of %zu bytes, %llu declared", index, out.pos,
                           fh.frameContentSize);

    r->content_size = out.pos;
    r->content_pos = 0;
    r->in_chunk = 1;
    r->chunk_index = index;
    r->chunk_offset = frame_off;
    r->chunk_bytes = cur_off(r) - frame_off;
    r->sample_time = 0;               /* spec R-SMP-1: deltas restart in every chunk */
    r->blk.n_times = r->blk_next = 0; /* a block is one record of one chunk */
    fold_chunk_samples(r);
    r->chunk_pending = 1;
    r->chunk_samples = r->chunk_first_time = r->chunk_last_time = 0;
    r->chunk_digest = digest_step(r->chunk_digest, frame_off);
    r->chunk_digest = digest_step(r->chunk_digest, r->chunk_bytes);
    r->chunk_digest = digest_step(r->chunk_digest, out.pos);
    r->chunks_seen++;
    r->info.chunks++;
    r->info.bytes_consumed = cur_off(r);
    return VMP_OK;
}

vmp_status vmp_rd_next_chunk(vmp_reader *r)
{
    for (;;) {
        uint64_t frame_off = cur_off(r);
        uint32_t magic;
        vmp_status st = fill(r, 4);

        if (st < 0)
            return st;
        if (avail(r) == 0)
            return VMP_END;
        if (avail(r) < 4)
            return vmp_rd_fail(r, VMP_ERR_TRUNCATED, frame_off, "file ends inside a frame header");
        magic = load_le32(r->data + r->data_pos);
        if (magic >= VMP_SKIPPABLE_MAGIC_MIN && magic <= VMP_SKIPPABLE_MAGIC_MAX) {
            st = skippable_frame(r, magic, frame_off);
            if (st < 0)
                return st;
            continue;
        }
        if (magic != VMP_ZSTD_MAGIC)
            /* spec R-CHK-4 */
            return vmp_rd_fail_rule(r, "R-CHK-4", VMP_ERR_CORRUPT, frame_off,
                                    "not a zstd frame (magic 0x%08" PRIx32 ")", magic);
        return data_frame(r, frame_off);
    }
}
