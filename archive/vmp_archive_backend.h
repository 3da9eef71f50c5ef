/* SPDX-License-Identifier: MIT
 *
 * vmp_archive_backend.h - inside libvmp-archive: the two databases an
 * archive lives in (an SQLite file, vmp_archive_sqlite.c; a PostgreSQL
 * server, vmp_archive_pg.c) behind one table of functions, which
 * vmp_archive_db.c calls for the public API of vmp_archive.h.  Each function
 * has the contract of the public function of the same name.
 */
#ifndef VMP_ARCHIVE_BACKEND_H
#define VMP_ARCHIVE_BACKEND_H

#include "vmp_archive.h"

typedef struct vmp_archive_backend {
    void (*close)(vmp_archive *a);
    int (*find)(vmp_archive *a, const char *sha256, int64_t *run_id, char *err);
    /* As vmp_archive_add(); returns 1 (nothing added, no error) when a run
     * of the same sha256 was committed by another process meanwhile. */
    int (*add)(vmp_archive *a, const vmp_archive_run *run, const vmp_run_weights *w,
               const vmp_archive_executing *ex, const vmp_archive_kind *kinds, size_t n_kinds,
               int64_t *run_id, char *err);
    int (*select)(vmp_archive *a, const vmp_archive_filter *filter, const char *function,
                  vmp_archive_row **rows, size_t *n_rows, char *err);
    int (*weights)(vmp_archive *a, int64_t run_id, int ranges, const char *kind,
                   vmp_run_weights *out, char *err);
} vmp_archive_backend;

/* The head of every backend's handle. */
struct vmp_archive {
    const vmp_archive_backend *be;
    char *name; /* the file, or the server as "postgresql://user@host:port/db" (no password) */
};

/** Open an SQLite archive (vmp_archive_open()). */
int vmp_archive__sqlite_open(vmp_archive **out, const char *path, int create, char *err);

/** Open an archive on a PostgreSQL server (vmp_archive_open()): `uri` is a
 *  postgresql:// or postgres:// connection URI, completed by libpq from the
 *  PG* environment variables. */
int vmp_archive__pg_open(vmp_archive **out, const char *uri, int create, char *err);

/** Whether kind names the CPU samples (NULL or "cpu"), kept in table
 *  weights, not kind_weights (spec.md §5.15). */
int vmp_archive__is_cpu(const char *kind);

/** Write a message to err (VMP_ARCHIVE_ERR_SIZE bytes) on one line: line
 *  breaks and the tabs after them become one space.  Returns -1. */
int vmp_archive__err(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
