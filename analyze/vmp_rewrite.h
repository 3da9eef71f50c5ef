/* SPDX-License-Identifier: MIT
 *
 * vmp_rewrite.h - profiles in, a valid profile out: filtering samples and
 * merging profiles of different processes and runs (spec.md §5, "Merged
 * files").
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
 *
 * Both stream in bounded memory: memory grows with metadata (code objects,
 * functions, distinct stacks), never with samples.
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
 *         compile); the reader's or the writer's error otherwise. */
VMP_API vmp_status vmp_filter_run(vmp_rewrite_stats *stats_out,
                                  vmp_record_writer *w,
                                  vmp_reader *r,
                                  const vmp_filter_options *opts,
                                  char *err,
                                  size_t err_size);

/** Merge `n` inputs, in order, into `w` and finish it.  Reads the first
 *  record (the HEADER) of every input before it writes anything, then each
 *  input to its end.
 * @param inputs  `n` readers, borrowed; `names[i]` names input i in the
 *                output's labels ("input.i.source"); may be NULL.
 * @return VMP_OK, VMP_ERR_CORRUPT for an input whose first record is not a
 *         HEADER, or the reader's or the writer's error. */
VMP_API vmp_status vmp_merge_run(vmp_rewrite_stats *stats_out,
                                 vmp_record_writer *w,
                                 vmp_reader *const *inputs,
                                 const char *const *names,
                                 size_t n,
                                 char *err,
                                 size_t err_size);

#ifdef __cplusplus
}
#endif

#endif
