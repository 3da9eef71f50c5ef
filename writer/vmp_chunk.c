/* SPDX-License-Identifier: MIT
 *
 * vmp_chunk.c - chunks: zstd frames of whole records, the file writes and the
 * seek table (spec.md §4 R-CHK-1, R-CHK-2, R-CHK-5, §6).
 *
 * Runs under the writer's out_mu, never on the sample path.  After the first
 * write error output stops for good: what reached the file stays a valid,
 * truncated profile, the error is kept in `write_errno`, and the samples of
 * chunks that could not be written are counted as `dropped_write`.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vmp_format.h"
#include "vmp_writer_int.h"

uint64_t vmp_chunk__mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void stop_output(vmp_writer *w, int err)
{
    int zero = 0;
    atomic_compare_exchange_strong(&w->write_errno, &zero, err ? err : EIO);
    atomic_store(&w->stopped, 1);
}

vmp_status vmp_chunk__write(vmp_writer *w, const void *data, size_t size)
{
    const uint8_t *p = data;
    if (atomic_load(&w->stopped))
        return VMP_ERR_CLOSED;
    while (size > 0) {
        ssize_t n = write(w->fd, p, size);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            stop_output(w, errno);
            return VMP_ERR_IO;
        }
        if (n == 0) { /* no progress and no error: treat as a full device */
            stop_output(w, ENOSPC);
            return VMP_ERR_IO;
        }
        p += n;
        size -= (size_t)n;
        atomic_fetch_add_explicit(&w->bytes, (uint64_t)n, memory_order_relaxed);
    }
    return VMP_OK;
}

static void reset_chunk(vmp_writer *w)
{
    w->chunk.len = 0;
    if (w->sample_blocks)
        vmp_block__clear(&w->block);
    w->chunk_prev_time = 0;
    w->chunk_first_time = w->chunk_last_time = 0;
    w->chunk_samples = w->chunk_failed = w->chunk_truncated = w->chunk_kind_samples = 0;
}

/* The open chunk cannot be written (no memory, a failed write, output
 * stopped): its samples are counted lost and it is emptied. */
static void drop_chunk(vmp_writer *w)
{
    atomic_fetch_add(&w->dropped_write, w->chunk_samples + w->chunk_kind_samples);
    if (w->sample_blocks) /* the contexts its blocks defined are lost (R-BLK-5) */
        vmp_block__forget_contexts(&w->block);
    reset_chunk(w);
}

int vmp_chunk__needs_new(const vmp_writer *w, size_t len)
{
    /* spec R-CHK-2: a record never spans chunks; one that does not fit the
     * space left opens a fresh chunk, even when it alone exceeds the limit. */
    return w->chunk.len > 0 && w->chunk.len + len > w->chunk_bytes;
}

int vmp_chunk__open(const vmp_writer *w)
{
    return w->chunk.len > 0 || w->block.n > 0;
}

void vmp_chunk__flush_block(vmp_writer *w)
{
    if (w->block.n == 0)
        return;
    w->block_buf.len = 0;
    vmp_block__encode(&w->block, &w->block_buf);
    if (!w->block_buf.failed)
        vmp_buf__append(&w->chunk, w->block_buf.data, w->block_buf.len);
    if (w->block_buf.failed || w->chunk.failed) {
        /* Out of memory: the chunk's samples cannot be written. */
        w->block_buf.failed = w->chunk.failed = 0;
        drop_chunk(w);
    }
}

/* Whether the record `rec` (its map head, key 0, then its type) lets a
 * pending block's samples follow it (vmp_block__keeps()). */
static int keeps_block(const uint8_t *rec, size_t len)
{
    size_t h = len > 0 && (rec[0] & 0x1f) < 24 ? 1 : 0; /* a map of < 24 pairs */
    if (h == 0 || len < h + 2 || rec[h] != 0 || rec[h + 1] >= 24)
        return 0;
    return vmp_block__keeps(rec[h + 1]);
}

void vmp_chunk__add(vmp_writer *w, const uint8_t *rec, size_t len)
{
    if (!keeps_block(rec, len))
        vmp_chunk__flush_block(w);
    if (vmp_chunk__needs_new(w, len))
        vmp_chunk__close(w);
    if (w->chunk.len == 0)
        w->chunk_opened_ns = vmp_chunk__mono_ns();
    vmp_buf__append(&w->chunk, rec, len);
    if (w->chunk.failed) {
        /* Out of memory for the chunk: what it held cannot be written. */
        w->chunk.failed = 0;
        drop_chunk(w);
        return;
    }
    if (w->chunk.len >= w->chunk_bytes) /* spec R-CHK-5 */
        vmp_chunk__close(w);
}

vmp_status vmp_chunk__close(vmp_writer *w)
{
    vmp_chunk__flush_block(w);
    if (w->chunk.len == 0)
        return VMP_OK;
    if (atomic_load(&w->stopped)) {
        drop_chunk(w);
        return VMP_ERR_CLOSED;
    }
    size_t bound = ZSTD_compressBound(w->chunk.len);
    w->zbuf.len = 0;
    if (vmp_buf__reserve(&w->zbuf, bound) < 0) {
        w->zbuf.failed = 0;
        drop_chunk(w);
        return VMP_ERR_NOMEM;
    }
    /* spec R-CHK-1: one frame per chunk, with checksum and content size
     * (ZSTD_compress2 on the whole input records the size in the header). */
    size_t z = ZSTD_compress2(w->cctx, w->zbuf.data, bound, w->chunk.data, w->chunk.len);
    if (ZSTD_isError(z)) {
        drop_chunk(w);
        return VMP_ERR_NOMEM;
    }
    vmp_seek_entry se = {
        .offset = w->base_offset + atomic_load(&w->bytes),
        .compressed_size = z,
        .content_size = w->chunk.len,
        .first_time = w->chunk_first_time,
        .last_time = w->chunk_last_time,
        .samples = w->chunk_samples,
    };
    vmp_status st = vmp_chunk__write(w, w->zbuf.data, z);
    if (st < 0) {
        drop_chunk(w);
        return st;
    }
    atomic_fetch_add(&w->samples_written, w->chunk_samples);
    atomic_fetch_add(&w->failed_written, w->chunk_failed);
    atomic_fetch_add(&w->kind_written, w->chunk_kind_samples);
    atomic_fetch_add(&w->truncated_stacks, w->chunk_truncated);
    atomic_fetch_add(&w->chunks, 1);
    vmp_buf__append(&w->seek, &se, sizeof se);
    w->seek.failed = 0; /* a seek table missing entries is dropped at close */
    reset_chunk(w);
    return VMP_OK;
}

vmp_status vmp_chunk__seek_table(vmp_writer *w)
{
    size_t n = w->seek.len / sizeof(vmp_seek_entry);
    if (n != atomic_load(&w->chunks))
        return VMP_OK; /* an entry could not be recorded: no table beats a wrong one */
    vmp_buf b = {0};
    /* the entries were appended whole to a malloc'd buffer: aligned */
    if (vmp_enc__seek_frame(&b, (const vmp_seek_entry *)(const void *)w->seek.data, n) < 0) {
        vmp_buf__free(&b);
        return VMP_ERR_NOMEM;
    }
    vmp_status st = vmp_chunk__write(w, b.data, b.len);
    vmp_buf__free(&b);
    return st;
}
