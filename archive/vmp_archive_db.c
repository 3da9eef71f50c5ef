/* SPDX-License-Identifier: MIT
 *
 * vmp_archive_db.c - the database functions of vmp_archive.h: which
 * database an archive name means (an SQLite file, or a PostgreSQL server
 * by its postgresql:// URI), and the calls into it (vmp_archive_backend.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_archive_backend.h"

int vmp_archive__is_cpu(const char *kind)
{
    return !kind || strcmp(kind, "cpu") == 0;
}

int vmp_archive__err(char *err, const char *fmt, ...)
{
    va_list ap;
    char *r, *w;
    va_start(ap, fmt);
    vsnprintf(err, VMP_ARCHIVE_ERR_SIZE, fmt, ap);
    va_end(ap);
    /* servers' messages come in several lines; a message here is one */
    for (r = w = err; *r; r++) {
        if (*r == '\n' || *r == '\r') {
            while (r[1] == '\n' || r[1] == '\r' || r[1] == '\t' || r[1] == ' ')
                r++;
            if (r[1] && w > err && w[-1] != ' ')
                *w++ = ' ';
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
    return -1;
}

int vmp_archive_is_server(const char *name)
{
    return strncmp(name, "postgresql://", 13) == 0 || strncmp(name, "postgres://", 11) == 0;
}

int vmp_archive_open(vmp_archive **out, const char *name, int create, char *err)
{
    if (vmp_archive_is_server(name))
        return vmp_archive__pg_open(out, name, create, err);
    return vmp_archive__sqlite_open(out, name, create, err);
}

void vmp_archive_close(vmp_archive *a)
{
    if (!a)
        return;
    a->be->close(a);
}

const char *vmp_archive_name(const vmp_archive *a)
{
    return a->name;
}

int vmp_archive_find(vmp_archive *a, const char *sha256, int64_t *run_id, char *err)
{
    return a->be->find(a, sha256, run_id, err);
}

int vmp_archive_add(vmp_archive *a, const vmp_archive_run *run, const vmp_run_weights *w,
                    const vmp_archive_executing *ex, const vmp_archive_kind *kinds, size_t n_kinds,
                    int64_t *run_id, char *err)
{
    return a->be->add(a, run, w, ex, kinds, n_kinds, run_id, err);
}

int vmp_archive_select(vmp_archive *a, const vmp_archive_filter *filter, const char *function,
                       vmp_archive_row **rows, size_t *n_rows, char *err)
{
    return a->be->select(a, filter, function, rows, n_rows, err);
}

int vmp_archive_weights(vmp_archive *a, int64_t run_id, int ranges, const char *kind,
                        vmp_run_weights *out, char *err)
{
    return a->be->weights(a, run_id, ranges, kind, out, err);
}

void vmp_archive_rows_free(vmp_archive_row *rows, size_t n_rows)
{
    size_t i;
    for (i = 0; rows && i < n_rows; i++) {
        free(rows[i].path);
        free(rows[i].sha256);
        free(rows[i].labels);
        free(rows[i].vm_name);
    }
    free(rows);
}
