/* SPDX-License-Identifier: MIT
 *
 * vmp_convert.h - exporters of resolved profiles to other tools' formats
 * (built on the resolution of spec.md §5 "Resolution of a pc", §5.11, §5.12
 * as done by vmp_analyze.h).
 *
 * Families:
 *
 *   flame graphs  vmp_flame: streams one or two profiles through a
 *                 vmp_analysis, sums sample weights per distinct resolved
 *                 stack and writes them as folded stacks (the text format of
 *                 flamegraph.pl, speedscope and difffolded.pl) or as a
 *                 self-contained interactive SVG flame graph; with two
 *                 profiles (column 0 = BASE, column 1 = NEW), per-function
 *                 changes of share, two-column folded stacks and a
 *                 differential flame graph.
 *
 * Memory grows with the number of distinct stacks (and the analysis's code
 * tables), never with the number of samples.
 *
 * Thread safety: an object is used by one thread at a time.  Nothing here is
 * async-signal-safe.
 */
#ifndef VMP_CONVERT_H
#define VMP_CONVERT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vmp_analyze.h"
#include "vmp_reader.h"
#include "vmp_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Flame graphs ---------------------------------------------------------
 *
 * A folded line is the frames of one distinct stack, outermost first,
 * separated by ';', then a space and the summed weight (with two profiles:
 * a space and BASE's weight, a space and NEW's).  Frame names follow the
 * naming rules of vmp_analyze.h; ';' in a name is written as ':' and control
 * characters as '?', so that every line splits unambiguously.  Lines come in
 * a deterministic order (depth first, siblings by byte-wise name).
 *
 * Synthetic frames:
 *   "[failed: <reason>]"  a FAILED_SAMPLE (reason named by the header), as
 *                         the outermost frame (under the thread and state
 *                         frames when those are asked for), so that the
 *                         weights add up to the total sample weight;
 *   "[unknown]"           a sample with neither pc nor stack;
 *   thread name           with VMP_FLAME_THREAD_ROOT, the outermost frame;
 *   "[<state>]"           with VMP_FLAME_STATE, the VM state under the root.
 *
 * With VMP_FLAME_TIERS the frames of resolved functions get the suffixes of
 * async-profiler's folded output, which flamegraph.pl's java palette colours:
 *   "_[j]"  JIT-compiled code (a code object of any kind but "interpreter")
 *   "_[i]"  inlined code (reserved: the analysis does not yet expand inline
 *           chains, so no frame gets it today)
 *   "_[0]"  interpreted code (a symbolic frame, or a code object of kind
 *           "interpreter")
 *   "_[k]"  C code: the VM's own functions and libraries (module symbols)
 * and no suffix for unknown pcs and synthetic frames.
 */

typedef struct vmp_flame vmp_flame;

#define VMP_FLAME_THREAD_ROOT 1u /* thread name as the outermost frame */
#define VMP_FLAME_STATE       2u /* "[state]" frame under the root */
#define VMP_FLAME_RANGES      4u /* "name A->B" frame below each frame that has a range */
#define VMP_FLAME_TIERS       8u /* _[j] _[i] _[0] _[k] suffixes */

/** Flame options.  Zero means default for every field but `version`. */
typedef struct vmp_flame_options {
    unsigned int version; /* VMP_FLAME_OPTIONS_VERSION */
    unsigned int flags;   /* VMP_FLAME_* */
} vmp_flame_options;

#define VMP_FLAME_OPTIONS_VERSION 1
#define VMP_FLAME_OPTIONS_INIT    {VMP_FLAME_OPTIONS_VERSION, 0}

/** Create an empty flame graph.
 * @param[out] out  receives it; the caller frees it with vmp_flame_free().
 *                  Untouched on failure.
 * @param opts      options, or NULL for defaults; borrowed for the call.
 * @return VMP_OK, VMP_ERR_NOMEM or VMP_ERR_INVALID_ARG. */
VMP_API vmp_status vmp_flame_create(vmp_flame **out, const vmp_flame_options *opts);

/** Release a flame graph.  Accepts NULL. */
VMP_API void vmp_flame_free(vmp_flame *f);

/** Read every record of `r` (one profile) into column `column` (0, or 1 for
 *  the NEW profile of a diff), resolving samples with a fresh vmp_analysis.
 *  Each column can be read once.
 * @param r  borrowed; read to its end.
 * @return VMP_OK at a clean end; VMP_ERR_NOMEM; VMP_ERR_INVALID_ARG; or the
 *         reader's or the analysis's error (vmp_reader_errmsg() says why for
 *         a reader error).  After an error the column holds the samples read
 *         before it and the object stays usable (a truncated file still
 *         draws). */
VMP_API vmp_status vmp_flame_read(vmp_flame *f, vmp_reader *r, unsigned int column);

/** Total sample weight read into `column` (failed samples included). */
VMP_API uint64_t vmp_flame_total(const vmp_flame *f, unsigned int column);

/** Write the folded stacks: one column per profile read (two after reading
 *  column 1).  `scale_base` multiplies column 0's weights (rounded to the
 *  nearest integer); pass 1.0 for the weights as read.
 * @param out  borrowed stream.
 * @return VMP_OK, VMP_ERR_NOMEM, or VMP_ERR_IO when the stream reports an error. */
VMP_API vmp_status vmp_flame_write_folded(vmp_flame *f, FILE *out, double scale_base);

/** SVG options.  Zero means default for every field but `version`. */
typedef struct vmp_flame_svg_options {
    unsigned int version; /* VMP_FLAME_SVG_OPTIONS_VERSION */
    const char *title;    /* NULL == "Flame graph" ("Differential flame graph" for a diff) */
    const char *subtitle; /* NULL == none; e.g. the file name */
    unsigned int width;   /* pixels; 0 == 1200 */
    double min_width;     /* pixels below which frames merge into "..."; 0 == 0.5 */
    int icicle;           /* root at the top */
    int diff;             /* differential: size by column 1, colour by the change of share */
} vmp_flame_svg_options;

#define VMP_FLAME_SVG_OPTIONS_VERSION 1
#define VMP_FLAME_SVG_OPTIONS_INIT    {VMP_FLAME_SVG_OPTIONS_VERSION, NULL, NULL, 0, 0.0, 0, 0}

/** Write a self-contained interactive SVG flame graph (no external resource;
 *  an inline script gives tooltips, a details line, click-to-zoom, reset
 *  zoom and search with the matched share).  Frames are coloured by code
 *  kind (JIT, interpreted, inlined, C, GC, unknown, synthetic; a legend says
 *  which), or for a diff red (share grew) and blue (shrank) with saturation
 *  by the size of the change.  Every drawn frame is one <g class="f"> with
 *  one <rect>.
 * @param out   borrowed stream.
 * @param opts  options, or NULL for defaults; borrowed for the call.
 * @return VMP_OK, VMP_ERR_NOMEM, VMP_ERR_INVALID_ARG (a diff without column
 *         1) or VMP_ERR_IO. */
VMP_API vmp_status vmp_flame_write_svg(vmp_flame *f, FILE *out, const vmp_flame_svg_options *opts);

/** One function's weights in a diff (see vmp_flame_diff()). */
typedef struct vmp_flame_delta {
    const char *name;   /* frame name as in the folded output; owned by the flame */
    uint64_t self[2];   /* weight as the innermost frame, per column */
    uint64_t total[2];  /* weight of samples with the function anywhere on the
                         * stack (once per sample, even when recursive) */
    double self_change; /* share of column 1 minus share of column 0, in [-1, 1] */
    double total_change;
} vmp_flame_delta;

/** Compute the per-function change of share between column 0 (BASE) and
 *  column 1 (NEW), sorted by decreasing magnitude of change (the larger of
 *  the two), then by name.  Functions are matched by name.
 * @param[out] out    receives an array the caller frees with free(); names
 *                    borrowed from `f` (valid until vmp_flame_free()).
 * @param[out] n_out  receives its length.
 * @return VMP_OK or VMP_ERR_NOMEM. */
VMP_API vmp_status vmp_flame_diff(vmp_flame *f, vmp_flame_delta **out, size_t *n_out);

#ifdef __cplusplus
}
#endif

#endif
