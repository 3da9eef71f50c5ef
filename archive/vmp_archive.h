/* SPDX-License-Identifier: MIT
 *
 * vmp_archive.h - libvmp-archive, the index of `vmp archive`: a database of
 * profiles, in an SQLite file or on a PostgreSQL server that many machines
 * share (one row per run: the file's content hash, its header and labels, and the
 * self and total weight of every function, the per-run input of the
 * repeated-run statistics of vmp_diffstat()).  The schema is documented for
 * users in docs/archive.md; the SQL that creates it is in
 * vmp_archive_sqlite.c and vmp_archive_pg.c, and tests/archive keeps the
 * three equal.  Both databases give the same answers.
 *
 * Every function that can fail returns 0 on success and -1 after writing a
 * one-line message (naming the database file or server) to `err`.
 *
 * Thread safety: an archive handle is used by one thread at a time.  Several
 * processes may use one archive: SQLite locks the file and writers wait (a
 * busy timeout) for each other's transactions; a PostgreSQL server runs
 * their transactions side by side, and a profile two of them add at once is
 * added once (a unique constraint on its hash).  Nothing is signal-safe.
 */
#ifndef VMP_ARCHIVE_H
#define VMP_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vmp_convert.h"
#include "vmp_record.h"
#include "vmp_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The schema version written in table archive, key 'schema'. */
#define VMP_ARCHIVE_SCHEMA 2

/** Room for one error message. */
#define VMP_ARCHIVE_ERR_SIZE 512

typedef struct vmp_archive vmp_archive;

/** Open the archive `name`: an SQLite file's path, or a PostgreSQL
 *  connection URI (postgresql://[user[:password]@][host][:port][/dbname]
 *  [?param=value...], or postgres://), which libpq completes from the PG*
 *  environment variables (PGHOST, PGUSER, PGDATABASE, PGPASSWORD,
 *  ~/.pgpass...): "postgresql://" alone takes everything from there.
 * @param create  non-zero: create the file and its schema when missing (an
 *                empty existing file, or a database without the tables,
 *                gets the schema too); zero: the file must exist and, on a
 *                server, the tables too.  Either way an existing archive
 *                must be of schema VMP_ARCHIVE_SCHEMA, or of schema 1, which
 *                gains the tables of sample kinds (nothing else changes:
 *                schema 2 is schema 1 and two tables).
 * @param[out] out  receives the handle; the caller closes it.
 * @param err  receives the message on failure (VMP_ARCHIVE_ERR_SIZE bytes):
 *             a server is named without its password.
 * @return 0 or -1. */
VMP_API int vmp_archive_open(vmp_archive **out, const char *name, int create, char *err);

/** Whether vmp_archive_open() takes `name` for a server's URI (it begins
 *  with postgresql:// or postgres://), not a file. */
VMP_API int vmp_archive_is_server(const char *name);

/** The archive as messages name it: the file's path, or the server as
 *  postgresql://user@host:port/dbname (never the password).  Owned by the
 *  handle. */
VMP_API const char *vmp_archive_name(const vmp_archive *a);

/** Close the handle (the database is consistent after every call).  Accepts
 *  NULL. */
VMP_API void vmp_archive_close(vmp_archive *a);

/** What `vmp archive add` stores about one profile besides its weights. */
typedef struct vmp_archive_run {
    const char *path;          /* as given on the command line */
    const char *sha256;        /* 64 lowercase hex digits of the file's bytes */
    uint64_t file_bytes;       /* the file's size */
    const vmp_rec_header *hdr; /* the file's HEADER record */
    unsigned format_minor;     /* the file's format minor version */
    int complete;              /* 1: the file ends with its END record */
    int ranges;                /* 1: the weights hold bytecode range rows */
} vmp_archive_run;

/** Look up a profile by content hash.
 * @param[out] run_id  receives its run id when found.
 * @return 1 found, 0 not found, -1 error. */
VMP_API int vmp_archive_find(vmp_archive *a, const char *sha256, int64_t *run_id, char *err);

/** The weight of the samples whose pc was executing in each function,
 *  failed samples included (the samples column of `vmp report`). */
typedef struct vmp_archive_executing {
    const char **names; /* n function names (vmp_analyze.h naming), borrowed */
    const uint64_t *weights;
    size_t n;
} vmp_archive_executing;

/** The weights of one kind of sample other than CPU time (spec.md §5.15)
 *  of a run: its name and unit, its records and total weight, and per
 *  function as for the CPU samples. */
typedef struct vmp_archive_kind {
    const char *name, *unit; /* borrowed */
    uint64_t samples;        /* its records */
    const vmp_run_weights *w;
    const vmp_archive_executing *ex;
} vmp_archive_kind;

/** Add one run, its labels, its weights `w` (as `vmp diff` counts them) and
 *  `ex`, and those of its `n_kinds` other kinds in one transaction: after a
 *  crash, a kill or a lost connection the database holds all of it or none
 *  of it.
 * @param[out] run_id  receives the new run's id (when 0 is returned).
 * @return 0 added; 1 not added, no error: a run of the same sha256 is in the
 *         archive (another process added it since vmp_archive_find()); or
 *         -1 (nothing added). */
VMP_API int vmp_archive_add(vmp_archive *a, const vmp_archive_run *run, const vmp_run_weights *w,
                            const vmp_archive_executing *ex, const vmp_archive_kind *kinds,
                            size_t n_kinds, int64_t *run_id, char *err);

/** What vmp_archive_add_file() did with a file. */
enum vmp_archive_outcome {
    VMP_ARCHIVE_ADDED,  /* indexed as a new run */
    VMP_ARCHIVE_KNOWN,  /* a file of the same bytes is indexed already */
    VMP_ARCHIVE_DAMAGED /* not a profile that reads to its end: skipped */
};

/** Index the profile file at `path`: its bytes read once, its SHA-256, and
 *  with vmp_archive_add() its run, labels and the weights of every kind of
 *  sample (`ranges`: with its bytecode range rows).  The analysis uses the
 *  process defaults (vmp_analysis_add_default_flags(): `vmp archive add`
 *  groups hidden classes without their count).
 * @param[out] outcome  receives enum vmp_archive_outcome when 0 is returned;
 *                      for VMP_ARCHIVE_DAMAGED `err` says why in one line
 *                      naming the file (and the offset, for bad bytes).
 *                      A profile another process added meanwhile is
 *                      VMP_ARCHIVE_KNOWN.
 * @return 0, or -1 (the archive failed or memory ran out; `err` says so in
 *         one line naming the file, then the archive; nothing of the file
 *         was added). */
VMP_API int vmp_archive_add_file(vmp_archive *a, const char *path, int ranges, int *outcome,
                                 char *err);

/** Runs selected by labels: those with every key=value pair given. */
typedef struct vmp_archive_filter {
    const char **keys; /* n keys, borrowed */
    const char **values;
    size_t n;
    /* the kind of sample whose weights the rows carry (spec.md §5.15):
     * NULL or "cpu" the CPU samples; a run without the kind has total 0 */
    const char *kind;
} vmp_archive_filter;

/** One indexed run, as listed. */
typedef struct vmp_archive_row {
    int64_t run_id;
    char *path;   /* owned by the list */
    char *sha256; /* owned */
    char *labels; /* "k=v k=v" in key order, owned ("" when none) */
    char *vm_name;
    uint64_t start_ns, file_bytes, total_weight;
    int complete, ranges;
    /* the weights of the function asked for (vmp_archive_select()), 0 when
     * the run has none: self and total as `vmp diff`, executing as `vmp
     * report` counts them */
    uint64_t self, total, executing;
} vmp_archive_row;

/** Runs matching `filter` (NULL or n == 0: all), in time order (header
 *  start_realtime_ns, then run id: the order they were added).
 * @param function  NULL, or a function's (or bytecode range's) name whose
 *                  weights fill each row's self, total and executing; a name
 *                  the archive does not hold is an error.
 * @param[out] rows    receives an array; release with vmp_archive_rows_free().
 * @param[out] n_rows  its length.
 * @return 0 or -1. */
VMP_API int vmp_archive_select(vmp_archive *a, const vmp_archive_filter *filter,
                               const char *function, vmp_archive_row **rows, size_t *n_rows,
                               char *err);

/** Release the array of vmp_archive_select().  Accepts NULL. */
VMP_API void vmp_archive_rows_free(vmp_archive_row *rows, size_t n_rows);

/** Load run `run_id`'s weights as vmp_run_weights_read() read them from its
 *  file: the run's total weight and one row per function (with `ranges`,
 *  also its bytecode range rows, which the run must have been added with),
 *  of the samples of `kind` (NULL or "cpu": the CPU samples; a run without
 *  the kind has none, total 0).
 * @param[out] out  filled; release with vmp_run_weights_free().
 * @return 0 or -1. */
VMP_API int vmp_archive_weights(vmp_archive *a, int64_t run_id, int ranges, const char *kind,
                                vmp_run_weights *out, char *err);

/* ---- Trends (`vmp archive trend`): where a function's share over a series
 * of runs changes (binary segmentation with the repeated-run test of
 * vmp_diffstat(), docs/archive.md), and the SVG chart of the series.  Pure
 * functions of their arguments. */

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
VMP_API int vmp_archive_changes(const vmp_archive_row *rows, size_t n, const char *function,
                                double alpha, vmp_archive_change **out, size_t *n_out);

/** Draw the self and total share of each run as a line chart (SVG 1.1) with
 *  a dashed vertical line at each change (class "change"), each run a point
 *  with a tooltip (class "run").
 * @return 0, or -1 when a write failed (errno set). */
VMP_API int vmp_archive_trend_svg(FILE *f, const char *function, const vmp_archive_row *rows,
                                  size_t n, const vmp_archive_change *changes, size_t n_changes);

#ifdef __cplusplus
}
#endif

#endif
