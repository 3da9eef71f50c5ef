/* SPDX-License-Identifier: MIT
 *
 * vmp_record_writer.h - encode decoded records (vmp_record) into a new vmp
 * file: header frame, zstd chunks, END and seek table (spec.md §3-§6).
 *
 * The tool-side counterpart of the reader: tools that rewrite profiles
 * (`vmp filter`, `vmp merge`) read records with vmp_reader, change them, and
 * hand them to a record writer:
 *
 *     vmp_record_writer *w;
 *     if (vmp_record_writer_open_file(&w, "out.vmp", NULL) < 0) ...
 *     ... vmp_record_writer_write(w, &rec) ...   HEADER first, END never
 *     if (vmp_record_writer_finish(w, NULL) < 0)
 *         fprintf(stderr, "%s\n", vmp_record_writer_errmsg(w));
 *     vmp_record_writer_close(w);
 *
 * Encoding (spec.md §5): definite lengths, shortest integers, key 0 first,
 * keys in ascending order, keys holding their default value omitted, pc maps
 * delta-encoded again, sample time deltas restarted in every chunk.  A chunk
 * is closed when its content would pass the chunk size (1 MiB by default),
 * compressed as one zstd frame with its checksum and content size.
 * In format 2.0 (the default), samples go into SAMPLE_BLOCK records:
 * the writer keeps the machine-frame stack nodes it wrote, so that a pc
 * that is its innermost node's is not stored (R-BLK-3), and the file's
 * sample contexts (R-BLK-5).
 * vmp_record_writer_finish() writes the END record with the totals the writer
 * counted itself (samples, failed samples, chunks, the greatest generation of
 * a change record) and the seek table.  It is not a signal-safe writer: a VM
 * uses writer/vmp_writer.h.
 *
 * Thread safety: one thread at a time per writer.  Not async-signal-safe.
 */
#ifndef VMP_RECORD_WRITER_H
#define VMP_RECORD_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "vmp_record.h"
#include "vmp_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vmp_record_writer vmp_record_writer;

/** Options.  Zero means default for every field but `version`; start from
 *  VMP_RECORD_WRITER_OPTIONS_INIT. */
typedef struct vmp_record_writer_options {
    unsigned int version; /* VMP_RECORD_WRITER_OPTIONS_VERSION */
    size_t chunk_bytes;   /* chunk content limit; 0 == 1 MiB (spec R-CHK-5) */
    int zstd_level;       /* 0 == 3 */
    /* The least format_minor to write in the file header, for records of a
     * newer minor passed on from the input (1.2: CODE_MAP); the writer
     * raises it to 1 itself for a HEADER with a name separator.  Added in
     * 0.4. */
    unsigned int min_minor;
    /* The output's format major: 0 == 2, the default: samples in
     * SAMPLE_BLOCK records (format 2.0, spec.md §5.14; min_minor is then
     * ignored), their times in the HEADER's sample_time_unit: a sample whose
     * time is not a multiple of it is written up to one unit early.  1 ==
     * format 1.x, SAMPLE records, for readers older than 2.0.  Anything else
     * is invalid.  Added in 0.5. */
    unsigned int format_major;
} vmp_record_writer_options;

#define VMP_RECORD_WRITER_OPTIONS_VERSION 1
#define VMP_RECORD_WRITER_OPTIONS_INIT                \
    {                                                 \
        VMP_RECORD_WRITER_OPTIONS_VERSION, 0, 0, 0, 0 \
    }

/** Totals counted by the writer over the records written so far. */
typedef struct vmp_record_writer_totals {
    uint64_t records;      /* records written, END included once written */
    uint64_t samples;      /* SAMPLE and FAILED_SAMPLE records */
    uint64_t failed;       /* FAILED_SAMPLE records */
    uint64_t chunks;       /* data chunks written */
    uint64_t generation;   /* greatest generation of a change record */
    uint64_t last_time;    /* greatest sample time */
    uint64_t bytes;        /* file bytes written */
    uint64_t kind_samples; /* KIND_SAMPLE records (format 2.1) */
} vmp_record_writer_totals;

/** Create `path` (truncating it; "-" writes standard output) and write the
 *  file header frame.
 * @param[out] out  receives the writer; the caller releases it with
 *                  vmp_record_writer_close().  On failure `*out` is still set
 *                  when it could be allocated, so that
 *                  vmp_record_writer_errmsg() tells why; close it too.
 * @param path      borrowed for the call.
 * @param opts      NULL for defaults; borrowed for the call.
 * @return VMP_OK, VMP_ERR_IO, VMP_ERR_NOMEM or VMP_ERR_INVALID_ARG. */
VMP_API vmp_status vmp_record_writer_open_file(vmp_record_writer **out, const char *path,
                                               const vmp_record_writer_options *opts);

/** As vmp_record_writer_open_file() on a writable descriptor, borrowed (not
 *  closed).  `name` is used in messages; borrowed for the call.  Offsets in
 *  the seek table count from the bytes this writer writes. */
VMP_API vmp_status vmp_record_writer_open_fd(vmp_record_writer **out, int fd, const char *name,
                                             const vmp_record_writer_options *opts);

/** Encode one record.  The first record must be a HEADER and no other may be;
 *  END is written only by vmp_record_writer_finish(); VMP_REC_UNKNOWN records
 *  are skipped (their bytes are not kept by the reader).  A SAMPLE's or
 *  FAILED_SAMPLE's `time_ns` is absolute (since the time origin); the writer
 *  computes the deltas.  A CODE_OBJECT's `pc_map` holds absolute offsets, as
 *  the reader delivers them.  A sample's `weight` is written as given: 0
 *  stands for 0 samples (spec R-SMP-4), as the reader delivers it.
 * @param rec  borrowed for the call.
 * @return VMP_OK, VMP_ERR_INVALID_ARG (order broken), VMP_ERR_NOMEM,
 *         VMP_ERR_IO, or VMP_ERR_CLOSED after an earlier error. */
VMP_API vmp_status vmp_record_writer_write(vmp_record_writer *w, const vmp_record *rec);

/** Write the END record and the seek table, and flush.
 * @param extra  NULL, or fields the writer cannot count: `time_ns` (the END
 *               time is the greater of it and the last sample time),
 *               `dropped_full`, `dropped_write`, `truncated_stacks`, and
 *               `generation` (the END generation is the greater of it and the
 *               greatest generation written).  Its `samples`, `failed` and
 *               `chunks` are ignored.  Borrowed for the call.
 *  A file opened by vmp_record_writer_open_file() is closed here, so that a
 *  failing close() is reported too.
 * @return VMP_OK or an error as vmp_record_writer_write(). */
VMP_API vmp_status vmp_record_writer_finish(vmp_record_writer *w, const vmp_rec_end *extra);

/** The totals so far.  `out` receives a copy. */
VMP_API void vmp_record_writer_get_totals(const vmp_record_writer *w,
                                          vmp_record_writer_totals *out);

/** One-line message of the first error ("out.vmp: write: No space left on
 *  device"), "" when none.  Owned by the writer; valid until close. */
VMP_API const char *vmp_record_writer_errmsg(const vmp_record_writer *w);

/** Release the writer, closing the file it opened (never a borrowed fd) if
 *  vmp_record_writer_finish() has not.  Without a successful
 *  vmp_record_writer_finish() the file has no END: it reads as an unfinished
 *  profile.  Accepts NULL. */
VMP_API void vmp_record_writer_close(vmp_record_writer *w);

#ifdef __cplusplus
}
#endif

#endif
