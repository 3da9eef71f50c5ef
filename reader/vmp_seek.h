/* SPDX-License-Identifier: MIT
 *
 * vmp_seek.h - the seek table at the end of a vmp profile (spec.md §6): find
 * it, decode it in bounded memory, check it against the file, and look up
 * chunks by time.  The only code of vmp that decodes a seek table: the
 * streaming reader checks a table it meets with vmp_seek_table_parse(), and
 * tools that seek (vmp filter) open it with vmp_seek_table_open_file().
 *
 *     vmp_seek_table *t;
 *     char err[256];
 *     vmp_status st = vmp_seek_table_open_file(&t, "prof.vmp", err, sizeof err);
 *     if (st == VMP_OK) { ... vmp_seek_table_end(t, &time, &chunk) ...; }
 *     else if (st != VMP_END) fprintf(stderr, "warning: %s\n", err); // scan instead
 *     vmp_seek_table_free(t);
 *
 * A seek table is a hint (R-SEEK-1): a table that is damaged or contradicts
 * the file is reported, and the caller reads the chunks instead.  Memory is
 * bounded by the table's size (at most 64 MiB, spec.md §8): the entry count
 * is checked against the bytes that must hold the entries before anything is
 * allocated, and nesting is bounded (an entry is an array of uints).
 *
 * Thread safety: a table is immutable once opened; distinct calls are
 * independent.  Nothing here is async-signal-safe.
 */
#ifndef VMP_SEEK_H
#define VMP_SEEK_H

#include <stddef.h>
#include <stdint.h>

#include "vmp_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One chunk as the table describes it (spec.md §6). */
typedef struct vmp_seek_entry {
    uint64_t offset;          /* file offset of the chunk's zstd frame */
    uint64_t compressed_size; /* the frame's size in bytes */
    uint64_t content_size;    /* its decompressed size */
    uint64_t first_time_ns;   /* time of its first sample (meaningless without samples) */
    uint64_t last_time_ns;    /* time of its last sample (meaningless without samples) */
    uint64_t samples;         /* SAMPLE and FAILED_SAMPLE records in it */
} vmp_seek_entry;

typedef struct vmp_seek_table vmp_seek_table;

/** Largest seek table frame accepted (the chunk content limit, spec.md §8). */
#define VMP_SEEK_TABLE_MAX_BYTES ((uint64_t)64 << 20)

/** Decode a seek table's content: the CBOR array of entries, without the
 *  8-byte skippable frame header and without the 8-byte footer.  Checks the
 *  structure (an array of arrays of at least 6 uints; no more entries than
 *  `size` bytes can hold) and each entry alone ([R-SEEK-3]: an entry with 1
 *  sample has equal times; samples <= content_size), but not the file.
 * @param[out] out  the table, freed with vmp_seek_table_free(); NULL on error.
 * @param content   borrowed for the call.
 * @param name      file name for messages (borrowed for the call; NULL: "-").
 * @param table_offset  file offset of the table's frame, for messages.
 * @param err       receives a one-line message "NAME: offset N: seek table:
 *                  ..." on error (may be NULL).
 * @return VMP_OK, VMP_ERR_CORRUPT (malformed) or VMP_ERR_NOMEM. */
VMP_API vmp_status vmp_seek_table_parse(vmp_seek_table **out, const void *content, size_t size,
                                        const char *name, uint64_t table_offset, char *err,
                                        size_t err_size);

/** Find the seek table at the end of the file at `path`, decode it and check
 *  it against the file ([R-SEEK-3]): its frame's magic and size match the
 *  footer and it is at most VMP_SEEK_TABLE_MAX_BYTES; the entries' chunks
 *  lie after the file header frame, in file order without overlap, before
 *  the table; each entry's offset holds a zstd frame header whose declared
 *  content size is the entry's.  Reads the footer, the table and up to 18
 *  bytes per entry; never the chunks' contents.
 * @param[out] out  the table; NULL unless VMP_OK.
 * @param err  receives a one-line message naming the file and the offset of
 *             the table (or of the entry's chunk) unless VMP_OK or VMP_END.
 * @return VMP_OK; VMP_END when the file ends without a seek table (not an
 *         error; also for a file that is not a regular file, such as a
 *         pipe); VMP_ERR_CORRUPT when a table is there but damaged or
 *         contradicts the file; VMP_ERR_LIMIT for a table larger than
 *         VMP_SEEK_TABLE_MAX_BYTES; VMP_ERR_IO; VMP_ERR_NOMEM. */
VMP_API vmp_status vmp_seek_table_open_file(vmp_seek_table **out, const char *path, char *err,
                                            size_t err_size);

/** As vmp_seek_table_open_file() over a whole file in memory (`data` is
 *  borrowed for the call); `name` names it in messages. */
VMP_API vmp_status vmp_seek_table_open_memory(vmp_seek_table **out, const void *data, size_t size,
                                              const char *name, char *err, size_t err_size);

/* Largest file header frame and chunk frame vmp_seek_table_read_chunk()
 * reads (a chunk's content is at most 64 MiB, spec.md §8). */
#define VMP_SEEK_MAX_HEADER_FRAME ((uint64_t)1 << 20)
#define VMP_SEEK_MAX_CHUNK_FRAME  ((uint64_t)65 << 20)

/** Chunk `i` of the file at `path`, read as a file of its own: the file
 *  header frame, then that chunk's frame (offset and size as the table gives
 *  them, checked when the table was opened), for vmp_reader_open_memory().
 *  Its records decode as in the whole file (sample times restart in every
 *  chunk, R-SMP-1) once the reader knows the unit of the file's
 *  SAMPLE_BLOCK times (vmp_reader_options.sample_time_unit_ns): the HEADER
 *  of chunk 0 gives it.
 * @param t  a table from vmp_seek_table_open_file() or _open_memory() of
 *           the same file.
 * @param[out] out   receives the bytes; the caller frees them with free().
 * @param[out] size  receives their number.
 * @return VMP_OK, VMP_ERR_IO, VMP_ERR_NOMEM, or VMP_ERR_INVALID_ARG (`i` past
 *         the entries, a table from vmp_seek_table_parse(), or frames larger
 *         than VMP_SEEK_MAX_*). */
VMP_API vmp_status vmp_seek_table_read_chunk(const vmp_seek_table *t, const char *path, size_t i,
                                             void **out, size_t *size);

/** Number of entries (one per data chunk). */
VMP_API size_t vmp_seek_table_count(const vmp_seek_table *t);

/** Entry `i` (< vmp_seek_table_count()); borrowed from `t`. */
VMP_API const vmp_seek_entry *vmp_seek_table_entry(const vmp_seek_table *t, size_t i);

/** File offset of the table's frame. */
VMP_API uint64_t vmp_seek_table_offset(const vmp_seek_table *t);

/** The first chunk that holds samples at or after `time_ns` by the table: the
 *  first entry with samples whose first or last time is >= time_ns.  The
 *  times are those of a chunk's first and last samples in file order; samples
 *  of different threads interleave (R-SMP-1), so a reader that must not miss
 *  a sample starts one chunk earlier.
 * @return the entry's index, or vmp_seek_table_count() when there is none. */
VMP_API size_t vmp_seek_table_find_time(const vmp_seek_table *t, uint64_t time_ns);

/** The greatest sample time the table gives (first or last time of an entry
 *  with samples) and the entry that gives it.
 * @return 1 and sets *time_ns and *index; 0 when no entry has samples. */
VMP_API int vmp_seek_table_end(const vmp_seek_table *t, uint64_t *time_ns, size_t *index);

/** Release the table.  Accepts NULL. */
VMP_API void vmp_seek_table_free(vmp_seek_table *t);

#ifdef __cplusplus
}
#endif

#endif
