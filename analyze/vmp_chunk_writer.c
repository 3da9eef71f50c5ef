/* SPDX-License-Identifier: MIT
 *
 * vmp_chunk_writer.c - the frame layer of a tool's vmp output
 * (vmp_chunk_writer.h): bytes as they are, one zstd frame per chunk with
 * checksum and content size (spec.md §4 R-CHK-1), the seek table (§6).
 */
#include "vmp_chunk_writer.h"
#include "vmp_grow.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

static vmp_status fail(vmp_chunk_writer *cw, vmp_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Keep the first error's message; return `st`. */
static vmp_status fail(vmp_chunk_writer *cw, vmp_status st, const char *fmt, ...)
{
    va_list ap;
    if (cw->what[0] == '\0') {
        va_start(ap, fmt);
        vsnprintf(cw->what, sizeof cw->what, fmt, ap);
        va_end(ap);
    }
    return st;
}

vmp_status vmp_chunk_writer__init(vmp_chunk_writer *cw, int fd, int level)
{
    memset(cw, 0, sizeof *cw);
    cw->fd = fd;
    cw->zc = ZSTD_createCCtx();
    if (!cw->zc)
        return fail(cw, VMP_ERR_NOMEM, "cannot set up zstd: out of memory");
    /* spec R-CHK-1: every chunk verifiable and sized before it is read */
    if (ZSTD_isError(ZSTD_CCtx_setParameter(cw->zc, ZSTD_c_compressionLevel, level)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(cw->zc, ZSTD_c_checksumFlag, 1)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(cw->zc, ZSTD_c_contentSizeFlag, 1)))
        return fail(cw, VMP_ERR_INVALID_ARG, "cannot set up zstd (level %d)", level);
    return VMP_OK;
}

vmp_status vmp_chunk_writer__bytes(vmp_chunk_writer *cw, const void *data, size_t size)
{
    const unsigned char *p = data;
    while (size > 0) {
        ssize_t n = write(cw->fd, p, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return fail(cw, VMP_ERR_IO, "write: %s", n < 0 ? strerror(errno) : "no progress");
        p += n;
        size -= (size_t)n;
        cw->bytes += (uint64_t)n;
    }
    return VMP_OK;
}

/* Note the seek-table entry of a chunk written. */
static vmp_status add_seek_entry(vmp_chunk_writer *cw, const vmp_seek_entry *e)
{
    if (cw->n_seek == cw->cap_seek && vmp_grow(&cw->seek, &cw->cap_seek, sizeof *cw->seek, 64))
        return fail(cw, VMP_ERR_NOMEM, "out of memory");
    cw->seek[cw->n_seek++] = *e;
    return VMP_OK;
}

vmp_status vmp_chunk_writer__chunk(vmp_chunk_writer *cw, const void *content, size_t size,
                                   const vmp_chunk_samples *samples)
{
    size_t bound = ZSTD_compressBound(size), n;
    vmp_seek_entry e;
    vmp_status st;
    cw->frame.len = 0;
    if (vmp_buf__reserve(&cw->frame, bound))
        return fail(cw, VMP_ERR_NOMEM, "out of memory");
    /* one-shot: the frame header records the content size, even 0 */
    n = ZSTD_compress2(cw->zc, cw->frame.data, bound, size > 0 ? content : "", size);
    if (ZSTD_isError(n))
        return fail(cw, VMP_ERR_IO, "zstd: %s", ZSTD_getErrorName(n));
    e.offset = cw->bytes;
    e.compressed_size = n;
    e.content_size = size;
    e.samples = samples->count; /* spec R-SEEK-2: times 0 without samples */
    e.first_time = samples->count ? samples->first_time : 0;
    e.last_time = samples->count ? samples->last_time : 0;
    st = vmp_chunk_writer__bytes(cw, cw->frame.data, n);
    if (st < 0)
        return st;
    return add_seek_entry(cw, &e);
}

vmp_status vmp_chunk_writer__seek_table(vmp_chunk_writer *cw)
{
    vmp_buf b = {0};
    vmp_status st;
    if (vmp_enc__seek_frame(&b, cw->seek, cw->n_seek) < 0) {
        free(b.data);
        return fail(cw, VMP_ERR_NOMEM, "out of memory");
    }
    st = vmp_chunk_writer__bytes(cw, b.data, b.len);
    free(b.data);
    return st;
}

void vmp_chunk_writer__free(vmp_chunk_writer *cw)
{
    ZSTD_freeCCtx(cw->zc);
    cw->zc = NULL;
    free(cw->frame.data);
    cw->frame.data = NULL;
    free(cw->seek);
    cw->seek = NULL;
    cw->n_seek = cw->cap_seek = 0;
}
