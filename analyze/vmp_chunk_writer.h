/* SPDX-License-Identifier: MIT
 *
 * vmp_chunk_writer.h - the frame layer of a vmp file being written by a
 * tool: bytes passed as they are (the file header frame, spec.md §3), each
 * chunk's content compressed as one zstd frame with its checksum and
 * content size (§4 R-CHK-1) at a chosen level, and at the end the seek table
 * of the chunks written (§6).  What the record writer (vmp_record_writer.c:
 * records into chunks) and vmp_recompress_run() (chunks passed on
 * unchanged) share.  Internal to libvmp; not installed.
 *
 *     vmp_chunk_writer cw;
 *     if (vmp_chunk_writer__init(&cw, fd, level) < 0) ... cw.what says why
 *     vmp_chunk_writer__bytes(&cw, file_header_frame, n);
 *     vmp_chunk_writer__chunk(&cw, content, size, &samples);   per chunk
 *     vmp_chunk_writer__seek_table(&cw);                        after END
 *     vmp_chunk_writer__free(&cw);
 *
 * The descriptor is borrowed: written with write(2), never closed.  Errors
 * return a negative status and leave a short message in `what` ("write: No
 * space left on device"), which callers prefix with the output's name.
 *
 * Thread safety: one thread at a time per writer.  Not async-signal-safe
 * (the in-VM writer, writer/, has its own allocation-free frame layer).
 */
#ifndef VMP_CHUNK_WRITER_H
#define VMP_CHUNK_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "vmp_encode.h"
#include "vmp_status.h"

struct ZSTD_CCtx_s;

/** The samples of a chunk, for its seek-table entry (spec.md §6, R-SEEK-2:
 *  both times 0 when there is no sample). */
typedef struct vmp_chunk_samples {
    uint64_t count;      /* SAMPLE and FAILED_SAMPLE records */
    uint64_t first_time; /* time of the first of them in file order */
    uint64_t last_time;  /* time of the last of them in file order */
} vmp_chunk_samples;

typedef struct vmp_chunk_writer {
    int fd;                  /* borrowed */
    struct ZSTD_CCtx_s *zc;  /* level, checksum flag, content size flag set */
    vmp_buf frame;           /* the compressed frame of the chunk being written */
    vmp_seek_entry *seek;    /* one entry per chunk written */
    size_t n_seek, cap_seek; /* n_seek: the data chunks written */
    uint64_t bytes;          /* file bytes written */
    char what[256];          /* the first error, without the output's name */
} vmp_chunk_writer;

/** Start writing to `fd` (borrowed) with zstd compression level `level`
 *  (1 to ZSTD_maxCLevel(), or zstd's negative fast levels).
 * @return VMP_OK, VMP_ERR_NOMEM, or VMP_ERR_INVALID_ARG for a level zstd
 *         rejects; free the writer in every case. */
vmp_status vmp_chunk_writer__init(vmp_chunk_writer *cw, int fd, int level);

/** Write `size` bytes as they are (the file header frame).
 * @return VMP_OK or VMP_ERR_IO. */
vmp_status vmp_chunk_writer__bytes(vmp_chunk_writer *cw, const void *data, size_t size);

/** Compress `size` bytes of chunk content (whole records; may be 0 bytes) as
 *  one zstd frame, write it and note its seek-table entry.
 * @param samples  borrowed for the call.
 * @return VMP_OK, VMP_ERR_NOMEM or VMP_ERR_IO (zstd failing included). */
vmp_status vmp_chunk_writer__chunk(vmp_chunk_writer *cw, const void *content, size_t size,
                                   const vmp_chunk_samples *samples);

/** Write the seek-table frame of every chunk written (spec.md §6).
 * @return VMP_OK, VMP_ERR_NOMEM or VMP_ERR_IO. */
vmp_status vmp_chunk_writer__seek_table(vmp_chunk_writer *cw);

/** Release what the writer holds (not the descriptor).  Accepts a writer
 *  whose init failed. */
void vmp_chunk_writer__free(vmp_chunk_writer *cw);

#endif
