/* SPDX-License-Identifier: MIT
 *
 * vmp_archive_trend.h - `vmp archive trend`: where a function's share over a
 * series of runs changes (binary segmentation with the repeated-run test of
 * vmp_diffstat(), docs/archive.md), and the SVG chart of the series.
 *
 * Thread safety: none needed (pure functions of their arguments).
 */
#ifndef VMP_ARCHIVE_TREND_H
#define VMP_ARCHIVE_TREND_H

#include <stddef.h>
#include <stdio.h>

#include "vmp_archive.h"

/** A run where a significant change of the function's share begins. */
typedef struct vmp_archive_change {
    size_t at;                /* index in the rows of the first run of the new level */
    double self[2], total[2]; /* mean shares of the runs before and after (in the
                               * segment that was split), in [0, 1] */
    double q;                 /* the test's p-value, adjusted for the two shares
                               * and the splits tried */
} vmp_archive_change;

/** Find the runs of `rows` (in time order, each with the function's weights:
 *  vmp_archive_select() with a function) where the function's share changes:
 *  the split of the runs into two groups of at least two whose difference
 *  (self share: `executing`; total share: `total`; both over the run's total
 *  weight) vmp_diffstat() finds strongest is a change when its p-value times
 *  2 (two shares) times the number of splits tried is at most `alpha`; then
 *  each side is searched again.  Runs with no samples are left out.
 * @param[out] out    receives the changes in time order; free() it.
 * @param[out] n_out  their number.
 * @return 0, or -1 when out of memory. */
int vmp_archive_changes(const vmp_archive_row *rows,
                        size_t n,
                        const char *function,
                        double alpha,
                        vmp_archive_change **out,
                        size_t *n_out);

/** Draw the self and total share of each run as a line chart (SVG 1.1) with
 *  a dashed vertical line at each change (class "change"), each run a point
 *  with a tooltip (class "run").
 * @return 0, or -1 when a write failed (errno set). */
int vmp_archive_trend_svg(FILE *f,
                          const char *function,
                          const vmp_archive_row *rows,
                          size_t n,
                          const vmp_archive_change *changes,
                          size_t n_changes);

#endif
