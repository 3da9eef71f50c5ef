/* SPDX-License-Identifier: MIT
 *
 * vmp_reader.h - stream the records of a vmp profile (spec.md), in bounded
 * memory, whatever the file's size.
 *
 *     vmp_reader *r;
 *     vmp_record rec;
 *     vmp_status st;
 *     if (vmp_reader_open_file(&r, "prof.vmp", NULL) < 0) ...
 *     while ((st = vmp_reader_next(r, &rec)) == VMP_OK) {
 *         if (rec.type == VMP_REC_SAMPLE) ... rec.u.sample.pc ...
 *     }
 *     if (st < 0) fprintf(stderr, "%s\n", vmp_reader_errmsg(r));
 *     vmp_reader_close(r);
 *
 * The reader decompresses one chunk (one zstd frame) at a time and delivers
 * its records in order.  A chunk is delivered only after its zstd checksum
 * verified, so a truncated or corrupt file yields every complete chunk before
 * the damage, then an error that names the byte offset.  Unknown record types
 * are delivered as VMP_REC_UNKNOWN (callers ignore them); unknown map keys are
 * skipped.
 *
 * Thread safety: a reader is used by one thread at a time; distinct readers
 * are independent.  Nothing here is async-signal-safe.
 */
#ifndef VMP_READER_H
#define VMP_READER_H

#include <stddef.h>
#include <stdint.h>

#include "vmp_format.h"
#include "vmp_record.h"
#include "vmp_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vmp_reader vmp_reader;

/** Limits and allocator.  Zero means default for every field but `version`;
 *  start from VMP_READER_OPTIONS_INIT.  Limits are checked before the memory
 *  they guard is allocated (spec.md §8). */
typedef struct vmp_reader_options {
    unsigned int version;       /* VMP_READER_OPTIONS_VERSION */
    uint64_t max_chunk_bytes;   /* decompressed size of one chunk; 0 == 64 MiB */
    uint64_t max_record_bytes;  /* encoded size of one record; 0 == 16 MiB */
    uint32_t max_nesting;       /* CBOR nesting depth inside a record; 0 == 16; <= 65536 */
    uint64_t max_array_items;   /* items in one array or map; 0 == 4 Mi */
    const vmp_allocator *alloc; /* NULL == malloc/free */
    uint64_t max_contexts;      /* the greatest sample context id (spec R-BLK-5, 32
                                   bytes each); 0 == 4 Mi.  Added in 0.5. */
    /* The unit of SAMPLE_BLOCK time deltas (spec §5.1 key 19) until a HEADER
     * gives one: reading one chunk of a file alone
     * (vmp_seek_table_read_chunk()), the file's, from chunk 0's HEADER.
     * 0 == 1.  Added in 0.5. */
    uint64_t sample_time_unit_ns;
} vmp_reader_options;

#define VMP_READER_OPTIONS_VERSION 1
#define VMP_READER_OPTIONS_INIT                            \
    {                                                      \
        VMP_READER_OPTIONS_VERSION, 0, 0, 0, 0, NULL, 0, 0 \
    }

/** Open the file at `path` ("-" reads standard input).  Reads and checks the
 *  file header frame.
 * @param[out] out  receives the reader; caller closes it with vmp_reader_close().
 *                  On failure `*out` is still set when it could be allocated,
 *                  so that vmp_reader_errmsg() can tell why; close it too.
 * @return VMP_OK, VMP_ERR_IO, VMP_ERR_NOT_VMP, VMP_ERR_VERSION,
 *         VMP_ERR_TRUNCATED, VMP_ERR_NOMEM. */
VMP_API vmp_status vmp_reader_open_file(vmp_reader **out, const char *path,
                                        const vmp_reader_options *opts);

/** As vmp_reader_open_file() on a readable descriptor (borrowed, not closed).
 *  `name` is used in messages; borrowed for the call. */
VMP_API vmp_status vmp_reader_open_fd(vmp_reader **out, int fd, const char *name,
                                      const vmp_reader_options *opts);

/** As vmp_reader_open_file() over memory.  `data` is borrowed and must stay
 *  valid and unchanged until vmp_reader_close(). */
VMP_API vmp_status vmp_reader_open_memory(vmp_reader **out, const void *data, size_t size,
                                          const char *name, const vmp_reader_options *opts);

/** Decode the next record into `*rec`.
 * @return VMP_OK (a record), VMP_END (clean end of input: not an error, and the
 *         file may still lack an END record: see vmp_reader_info()), or a
 *         negative error: vmp_reader_errmsg() says why, vmp_reader_offset()
 *         where.  After an error, further calls return the same error. */
VMP_API vmp_status vmp_reader_next(vmp_reader *r, vmp_record *rec);

/** A data chunk (spec.md §4) as vmp_reader_next_chunk() delivers it. */
typedef struct vmp_reader_chunk {
    uint64_t index;           /* 0 for the file's first data chunk */
    uint64_t offset;          /* file offset of its zstd frame */
    uint64_t compressed_size; /* bytes of that frame */
    const uint8_t *content;   /* its decompressed, verified content (a CBOR
                                 sequence of whole records); borrowed */
    size_t content_size;      /* bytes of content; 0 for an empty chunk */
    uint64_t records;         /* records in it, END and unknown types included */
    uint64_t samples;         /* SAMPLE and FAILED_SAMPLE records in it */
    uint64_t first_time_ns;   /* time of its first sample in file order; 0 without */
    uint64_t last_time_ns;    /* time of its last sample in file order; 0 without */
    int has_end;              /* it holds the END record */
} vmp_reader_chunk;

/** Read the next data chunk whole, for tools that work chunk by chunk and
 *  pass the content on unchanged (`vmp recompress`).  The frame is
 *  decompressed and verified as for vmp_reader_next() (content size and
 *  checksum present and checked, R-CHK-1; the limits of spec.md §8), then
 *  every record of the chunk is decoded and checked as vmp_reader_next()
 *  does (a content that ends inside a record is an error, R-CHK-2) but not
 *  delivered; vmp_reader_get_info() counts them.  Skippable frames before
 *  it are skipped and a seek table is checked (vmp_reader_warning()) as by
 *  vmp_reader_next().  An empty chunk is delivered too.
 *  Call it at a chunk boundary: before any vmp_reader_next(), or once that
 *  has returned the last record of a chunk.
 * @param[out] out  receives the chunk; its `content` is borrowed from the
 *                  reader, valid until the next vmp_reader_next(),
 *                  vmp_reader_next_chunk() or vmp_reader_close().
 * @return VMP_OK (a chunk), VMP_END (clean end of input, as for
 *         vmp_reader_next()), VMP_ERR_INVALID_ARG when vmp_reader_next() has
 *         delivered some but not all records of the current chunk (nothing
 *         is read), or a negative error: vmp_reader_errmsg() names the file
 *         and the offset of the damaged chunk.  After an error, further
 *         calls return the same error.  Added in 0.5. */
VMP_API vmp_status vmp_reader_next_chunk(vmp_reader *r, vmp_reader_chunk *out);

/** Longest file header frame vmp_reader_file_header() gives, in bytes. */
#define VMP_READER_FILE_HEADER_MAX 1024

/** The file header frame (spec.md §3) as the file holds it: the skippable
 *  frame's 8-byte header and its content (16 bytes in formats 1.0 to 1.2; a
 *  later minor may add fields after them, R-HDR-2), for tools that copy a
 *  file frame by frame.  Kept at open in a fixed buffer of the reader.
 * @param[out] data  receives the bytes, borrowed from the reader; valid
 *                   until vmp_reader_close().
 * @param[out] size  receives their number.
 * @return VMP_OK; VMP_ERR_LIMIT when the frame is longer than
 *         VMP_READER_FILE_HEADER_MAX (its content was skipped, not kept);
 *         VMP_ERR_INVALID_ARG when the file header was not read (the open
 *         failed) or an argument is NULL.  Added in 0.5. */
VMP_API vmp_status vmp_reader_file_header(const vmp_reader *r, const uint8_t **data, size_t *size);

/** What the reader has learnt so far. */
typedef struct vmp_reader_info {
    unsigned format_major, format_minor;
    uint64_t chunks;             /* data chunks delivered */
    uint64_t bytes_consumed;     /* file bytes of the delivered chunks and frames */
    uint64_t records;            /* records delivered, including UNKNOWN */
    uint64_t unknown_records;    /* records of unknown type */
    int seen_end;                /* an END record was delivered */
    int seek_table;              /* a seek table frame was found */
    uint64_t undefined_contexts; /* samples naming a sample context not defined
                                    (spec R-BLK-5): delivered without stack or pc.
                                    Added in 0.5. */
} vmp_reader_info;

VMP_API void vmp_reader_get_info(const vmp_reader *r, vmp_reader_info *out);

/** One-line message of the first error, naming the file and offset
 *  ("prof.vmp: offset 4096: chunk 3: zstd checksum mismatch").  "" when none.
 *  Owned by the reader; valid until vmp_reader_close(). */
VMP_API const char *vmp_reader_errmsg(const vmp_reader *r);

/** The bytes of the record vmp_reader_next() returned last, as its chunk
 *  holds them (one CBOR map, spec.md §5): for tools that pass records on
 *  unchanged and for checking an encoder against a file.  Borrowed from the
 *  reader; valid until the next vmp_reader_next() or vmp_reader_close().
 * @return VMP_OK, or VMP_ERR_INVALID_ARG when there is no such record (none
 *         returned yet, or the reader failed). */
VMP_API vmp_status vmp_reader_record_bytes(const vmp_reader *r, const uint8_t **data, size_t *size);

/** The spec.md rule the first error says the file breaks ("R-CHK-1"), set
 *  where the error was found; "" when none, or when the error is not about
 *  the file (memory, I/O).  Static storage. */
VMP_API const char *vmp_reader_errrule(const vmp_reader *r);

/** Stop reading with an error found by the caller in what the reader
 *  delivered (an analysis limit, say): records it as the reader's first
 *  error, "<file>: offset <the current chunk's offset>: <msg>", unless an
 *  error came first; vmp_reader_next() returns `st` from then on.
 * @param st   a negative status.
 * @param msg  one line, borrowed for the call (NULL: the status's name).
 * @return the reader's first error: `st` or the earlier one. */
VMP_API vmp_status vmp_reader_fail(vmp_reader *r, vmp_status st, const char *msg);

/** A one-line warning about something the reader set aside without failing,
 *  naming the file and offset, or NULL: today a seek table that is damaged
 *  or contradicts the chunks read, which counts as absent (spec.md
 *  R-SEEK-1; known once the reader has passed the table, at the end).
 *  Borrowed from `r`. */
VMP_API const char *vmp_reader_warning(const vmp_reader *r);

/** File offset of the first error (or of the chunk being read). */
VMP_API uint64_t vmp_reader_offset(const vmp_reader *r);

/** Release the reader.  Accepts NULL. */
VMP_API void vmp_reader_close(vmp_reader *r);

#ifdef __cplusplus
}
#endif

#endif
