/* SPDX-License-Identifier: MIT
 *
 * vmp_rewrite.h - profiles in, a valid profile out: filtering samples,
 * merging profiles of different processes and runs (spec.md §5, "Merged
 * files"), and compressing a profile's chunks again (§3-§6).
 *
 *   filter  vmp_filter_run(): streams one input and keeps the samples that
 *           pass every criterion given (threads, VM states, a time window,
 *           generations, function-name regular expressions over the resolved
 *           stack).  Every other record is copied: the header, modules and
 *           symbols, zones, code objects and their changes, functions,
 *           threads, events, counters, and every stack node (simplest
 *           correct choice: a kept sample never names a missing node).  The
 *           END record is written anew with the counts of the output.
 *   merge   vmp_merge_run(): concatenates inputs into one file in which
 *           nothing of one input resolves against another: every id space
 *           is renumbered, each input's generations are moved to a range of
 *           their own (the input's code is freed by empty snapshots before
 *           the next input starts), modules that overlap another input's are
 *           left out and their frames become symbolic frames (modules are not
 *           generation-scoped), unknown frames become pc 0 (spec.md "Merged
 *           files").  Vocabularies are unioned, labels kept as
 *           "input.N.<label>", times moved to the earliest input's origin.
 *   recompress  vmp_recompress_run(): the same records, byte for byte, in
 *           the same chunks, each chunk compressed again at another zstd
 *           level; a new seek table.  Works on chunks: no record is
 *           re-encoded.
 *
 * All stream in bounded memory: filter and merge grow with metadata (code
 * objects, functions, distinct stacks), never with samples; recompress holds
 * one chunk.
 *
 * Thread safety: one thread at a time per call and per object passed.
 * Nothing here is async-signal-safe.
 */
#ifndef VMP_REWRITE_H
#define VMP_REWRITE_H

#include <stddef.h>
#include <stdint.h>

#include "vmp_reader.h"
#include "vmp_record_writer.h"
#include "vmp_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What to keep.  Zero means "no criterion" for every field but `version`;
 *  start from VMP_FILTER_OPTIONS_INIT.  A sample is kept when it passes every
 *  criterion given; within one criterion, any listed value passes. */
typedef struct vmp_filter_options {
    unsigned int version;       /* VMP_FILTER_OPTIONS_VERSION */
    const uint64_t *thread_ids; /* threads by id */
    size_t n_thread_ids;
    const char *const *thread_names; /* threads by any name a THREAD record gave */
    size_t n_thread_names;
    const char *const *states; /* VM state names of the header */
    size_t n_states;
    int has_from, has_to;       /* time window [from, to) */
    int64_t from_ns, to_ns;     /* since the time origin; negative: from end_ns */
    uint64_t end_ns;            /* the end, for negative times (vmp_filter_end_time()) */
    const char *const *include; /* POSIX extended regexes: some frame matches one */
    size_t n_include;
    const char *const *exclude; /* ... no frame matches any */
    size_t n_exclude;
    int has_generations; /* generation in [gen_first, gen_last] */
    uint64_t gen_first, gen_last;
} vmp_filter_options;

#define VMP_FILTER_OPTIONS_VERSION 1
#define VMP_FILTER_OPTIONS_INIT                                                                    \
    {                                                                                              \
        VMP_FILTER_OPTIONS_VERSION, NULL, 0, NULL, 0, NULL, 0, 0, 0, 0, 0, 0, NULL, 0, NULL, 0, 0, \
            0, 0                                                                                   \
    }

/** What a rewrite did. */
typedef struct vmp_rewrite_stats {
    uint64_t records_in;  /* records read, all inputs */
    uint64_t samples_in;  /* SAMPLE and FAILED_SAMPLE records read */
    uint64_t samples_out; /* ... written */
} vmp_rewrite_stats;

/** Find the end of the profile at `path` for negative filter times.  With a
 *  seek table (vmp_seek.h) that passes its checks against the file: the
 *  greatest sample time of the chunk the table names for its greatest time,
 *  read alone, once it holds a sample at that time (one chunk is read, not
 *  the file).  Else the greatest sample time found by reading the whole file
 *  once.  Needs a file that can be read twice: not standard input.
 * @param[out] out  receives the end, ns since the time origin (0 when the
 *                  file holds no sample).
 * @param err       receives a one-line message on failure; on VMP_OK, a
 *                  warning naming the file and the table's offset when a
 *                  seek table was set aside (damaged, or contradicted by the
 *                  file), else ""; `err_size` bytes.
 * @return VMP_OK or the reader's error. */
VMP_API vmp_status vmp_filter_end_time(uint64_t *out, const char *path, char *err, size_t err_size);

/** Copy `r` to `w`, keeping the samples `opts` selects, then finish `w`
 *  (END with the output's counts; the input's dropped and truncated-stack
 *  counts and its final generation are carried over).
 * @param[out] stats_out  NULL, or receives the counts.
 * @param w     a writer to which nothing was written yet; borrowed.
 * @param r     borrowed; read to its end.
 * @param opts  borrowed for the call.
 * @param err   receives a one-line message on failure ("FILE: offset N: ..."
 *              for input errors, the output's name for write errors, the
 *              pattern for a bad regex); `err_size` bytes.
 * @return VMP_OK; VMP_ERR_INVALID_ARG for bad options (a regex that does not
 *         compile); the reader's or the writer's error otherwise.  Samples
 *         of every kind (spec.md §5.15) pass the same criteria. */
VMP_API vmp_status vmp_filter_run(vmp_rewrite_stats *stats_out, vmp_record_writer *w, vmp_reader *r,
                                  const vmp_filter_options *opts, char *err, size_t err_size);

/** Merge `n` inputs, in order, into `w` and finish it.  Reads the first
 *  record (the HEADER) of every input before it writes anything, then each
 *  input to its end.
 * @param inputs  `n` readers, borrowed; `names[i]` names input i in the
 *                output's labels ("input.i.source"); may be NULL.
 * @return VMP_OK, VMP_ERR_CORRUPT for an input whose first record is not a
 *         HEADER, or the reader's or the writer's error.  Sample kinds
 *         (spec.md §5.15) are matched by name across the inputs. */
VMP_API vmp_status vmp_merge_run(vmp_rewrite_stats *stats_out, vmp_record_writer *w,
                                 vmp_reader *const *inputs, const char *const *names, size_t n,
                                 char *err, size_t err_size);

/** What vmp_recompress_run() did.  Added in 0.5. */
typedef struct vmp_recompress_stats {
    uint64_t bytes_in;       /* input bytes read: every frame, the seek table included */
    uint64_t bytes_out;      /* bytes written */
    uint64_t chunks;         /* data chunks, in and out */
    uint64_t bytes_left_out; /* bytes of the input's skippable frames not copied:
                                its seek table, frames of later versions (R-CHK-4) */
    int has_end;             /* the input has an END record (else, neither has the output) */
} vmp_recompress_stats;

/** Least and greatest zstd level vmp_recompress_run() takes. */
#define VMP_RECOMPRESS_LEVEL_MIN 1
#define VMP_RECOMPRESS_LEVEL_MAX 22

/** Copy the profile `r` reads to `out_fd` with every data chunk compressed
 *  again at zstd level `level`, frame by frame (spec.md §3-§6):
 *  - the file header frame is copied as the input holds it (its version,
 *    and the fields of a later minor, R-HDR-2);
 *  - each data chunk is read whole (vmp_reader_next_chunk(): content size,
 *    checksum, the limits of §8, every record decoded and checked) and its
 *    decompressed content, unchanged, becomes one zstd frame with checksum
 *    and content size (R-CHK-1), the same chunk boundaries: every record
 *    keeps its bytes, chunk index and content offset, and END its counts;
 *  - other skippable frames are left out (their bytes counted in
 *    `bytes_left_out`): the input's seek table, whose offsets no longer
 *    hold, and frames of a later version, whose meaning may depend on the
 *    input's layout;
 *  - when the input has an END record, a new seek table follows the last
 *    chunk, with the output's offsets and frame sizes (§6; also when the
 *    input had none or a damaged one).  An input without END (a writer
 *    that did not close it, R-CHK-6) is copied without one and without a
 *    seek table: what the output holds is what the input held.
 *  `r` must be fresh: no record or chunk read yet.  A damaged or
 *  contradicted input seek table is set aside with vmp_reader_warning().
 * @param[out] stats_out  NULL, or receives the sizes and counts (also on
 *                        error: what was done so far).
 * @param out_fd    written with write(2); borrowed, not closed.  Nothing is
 *                  removed on failure: the caller removes a partial file.
 * @param out_name  names the output in messages; borrowed for the call.
 * @param r         borrowed; read to its end.
 * @param level     VMP_RECOMPRESS_LEVEL_MIN to VMP_RECOMPRESS_LEVEL_MAX.
 * @param err       receives a one-line message on failure: the reader's
 *                  ("FILE: offset N: ...") for bad input, "OUT: write: ..."
 *                  for a write error; `err_size` bytes.
 * @return VMP_OK; VMP_ERR_INVALID_ARG for a bad level or a reader already
 *         used; VMP_ERR_LIMIT for a file header frame longer than
 *         VMP_READER_FILE_HEADER_MAX; the reader's error (VMP_ERR_TRUNCATED,
 *         VMP_ERR_CORRUPT, ...) or VMP_ERR_IO or VMP_ERR_NOMEM otherwise.
 *  Thread safety: one call at a time per reader and descriptor.  Added in
 *  0.5. */
VMP_API vmp_status vmp_recompress_run(vmp_recompress_stats *stats_out, int out_fd,
                                      const char *out_name, vmp_reader *r, int level, char *err,
                                      size_t err_size);

#ifdef __cplusplus
}
#endif

#endif
