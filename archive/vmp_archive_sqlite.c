/* SPDX-License-Identifier: MIT
 *
 * vmp_archive_sqlite.c - an archive in an SQLite file (vmp_archive.h,
 * vmp_archive_backend.h): the schema of docs/archive.md, adding a run in
 * one transaction, selecting runs by label and loading their weights.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "vmp_archive_backend.h"

typedef struct sq_archive {
    vmp_archive base; /* first: the public handle */
    sqlite3 *db;
} sq_archive;

/* The schema, as docs/archive.md documents it (tests/archive compares the
 * two).  Keep both in step; a change of meaning bumps VMP_ARCHIVE_SCHEMA. */
static const char schema_sql[] =
    "CREATE TABLE archive (\n"
    "  name TEXT PRIMARY KEY,\n"
    "  value TEXT NOT NULL\n"
    ");\n"
    "CREATE TABLE runs (\n"
    "  run_id INTEGER PRIMARY KEY,\n"
    "  sha256 TEXT NOT NULL UNIQUE,\n"
    "  path TEXT NOT NULL,\n"
    "  file_bytes INTEGER NOT NULL,\n"
    "  added_ns INTEGER NOT NULL,\n"
    "  format_minor INTEGER NOT NULL,\n"
    "  producer TEXT NOT NULL,\n"
    "  vm_name TEXT NOT NULL,\n"
    "  vm_version TEXT NOT NULL,\n"
    "  pid INTEGER NOT NULL,\n"
    "  start_ns INTEGER NOT NULL,\n"
    "  interval_ns INTEGER NOT NULL,\n"
    "  total_weight INTEGER NOT NULL,\n"
    "  complete INTEGER NOT NULL,\n"
    "  ranges INTEGER NOT NULL\n"
    ");\n"
    "CREATE INDEX runs_time ON runs (start_ns, run_id);\n"
    "CREATE TABLE labels (\n"
    "  run_id INTEGER NOT NULL REFERENCES runs (run_id),\n"
    "  name TEXT NOT NULL,\n"
    "  value TEXT NOT NULL,\n"
    "  PRIMARY KEY (run_id, name)\n"
    ") WITHOUT ROWID;\n"
    "CREATE INDEX labels_value ON labels (name, value, run_id);\n"
    "CREATE TABLE functions (\n"
    "  function_id INTEGER PRIMARY KEY,\n"
    "  name TEXT NOT NULL,\n"
    "  is_range INTEGER NOT NULL,\n"
    "  UNIQUE (name, is_range)\n"
    ");\n"
    "CREATE TABLE weights (\n"
    "  run_id INTEGER NOT NULL REFERENCES runs (run_id),\n"
    "  function_id INTEGER NOT NULL REFERENCES functions (function_id),\n"
    "  self INTEGER NOT NULL,\n"
    "  total INTEGER NOT NULL,\n"
    "  executing INTEGER NOT NULL,\n"
    "  PRIMARY KEY (run_id, function_id)\n"
    ") WITHOUT ROWID;\n"
    "CREATE INDEX weights_function ON weights (function_id, run_id);\n"
    "CREATE TABLE run_kinds (\n"
    "  run_id INTEGER NOT NULL REFERENCES runs (run_id),\n"
    "  kind TEXT NOT NULL,\n"
    "  unit TEXT NOT NULL,\n"
    "  samples INTEGER NOT NULL,\n"
    "  total_weight INTEGER NOT NULL,\n"
    "  PRIMARY KEY (run_id, kind)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE kind_weights (\n"
    "  run_id INTEGER NOT NULL REFERENCES runs (run_id),\n"
    "  kind TEXT NOT NULL,\n"
    "  function_id INTEGER NOT NULL REFERENCES functions (function_id),\n"
    "  self INTEGER NOT NULL,\n"
    "  total INTEGER NOT NULL,\n"
    "  executing INTEGER NOT NULL,\n"
    "  PRIMARY KEY (run_id, kind, function_id)\n"
    ") WITHOUT ROWID;\n"
    "CREATE INDEX kind_weights_function ON kind_weights (kind, function_id, run_id);\n";

/* Schema 1 -> 2: the tables of sample kinds, nothing else (the statements of
 * schema_sql from "CREATE TABLE run_kinds" on). */
static const char *kinds_sql(void)
{
    return strstr(schema_sql, "CREATE TABLE run_kinds");
}

#define set_err vmp_archive__err
#define is_cpu  vmp_archive__is_cpu

/* "<db>: <what>: <sqlite's message>"; returns -1. */
static int db_fail(sq_archive *a, char *err, const char *what)
{
    set_err(err, "%s: %s: %s", a->base.name, what, sqlite3_errmsg(a->db));
    return -1;
}

static int exec(sq_archive *a, const char *sql, char *err)
{
    if (sqlite3_exec(a->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return db_fail(a, err, "database error");
    return 0;
}

static int prepare(sq_archive *a, sqlite3_stmt **st, const char *sql, char *err)
{
    if (sqlite3_prepare_v2(a->db, sql, -1, st, NULL) != SQLITE_OK)
        return db_fail(a, err, "database error");
    return 0;
}

/* Create the schema in an empty database, or check an existing one's
 * version. */
static int init_schema(sq_archive *a, int create, char *err)
{
    sqlite3_stmt *st = NULL;
    int tables = -1, rc;
    char sql[128];

    if (sqlite3_prepare_v2(a->db, "SELECT count(*) FROM sqlite_schema", -1, &st, NULL) ==
            SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        tables = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (tables < 0)
        return db_fail(a, err, "not an SQLite database");
    if (tables == 0) {
        if (!create) {
            set_err(err, "%s: not a vmp archive (an empty database)", a->base.name);
            return -1;
        }
        snprintf(sql, sizeof sql, "INSERT INTO archive VALUES ('schema', '%d');",
                 VMP_ARCHIVE_SCHEMA);
        if (exec(a, "BEGIN IMMEDIATE", err))
            return -1;
        if (exec(a, schema_sql, err) || exec(a, sql, err)) {
            sqlite3_exec(a->db, "ROLLBACK", NULL, NULL, NULL);
            return -1;
        }
        return exec(a, "COMMIT", err);
    }
    if (sqlite3_prepare_v2(a->db, "SELECT value FROM archive WHERE name = 'schema'", -1, &st,
                           NULL) != SQLITE_OK) {
        set_err(err, "%s: not a vmp archive (no table 'archive')", a->base.name);
        return -1;
    }
    rc = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    sqlite3_finalize(st);
    if (rc == 1) { /* schema 1: it gains the tables of kinds, in one transaction */
        if (exec(a, "BEGIN IMMEDIATE", err))
            return -1;
        snprintf(sql, sizeof sql, "UPDATE archive SET value = '%d' WHERE name = 'schema';",
                 VMP_ARCHIVE_SCHEMA);
        if (exec(a, kinds_sql(), err) || exec(a, sql, err)) {
            sqlite3_exec(a->db, "ROLLBACK", NULL, NULL, NULL);
            return -1;
        }
        return exec(a, "COMMIT", err);
    }
    if (rc != VMP_ARCHIVE_SCHEMA) {
        set_err(err, "%s: archive schema %d, this vmp reads schema %d", a->base.name, rc,
                VMP_ARCHIVE_SCHEMA);
        return -1;
    }
    return 0;
}

static const vmp_archive_backend sqlite_backend;

static void sq_close(vmp_archive *handle);

int vmp_archive__sqlite_open(vmp_archive **out, const char *path, int create, char *err)
{
    sq_archive *a = calloc(1, sizeof *a);
    int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);

    *out = NULL;
    if (!a || !(a->base.name = strdup(path))) {
        free(a);
        set_err(err, "%s: out of memory", path);
        return -1;
    }
    a->base.be = &sqlite_backend;
    if (sqlite3_open_v2(path, &a->db, flags, NULL) != SQLITE_OK) {
        set_err(err, "%s: cannot open: %s", path, a->db ? sqlite3_errmsg(a->db) : "out of memory");
        sq_close(&a->base);
        return -1;
    }
    sqlite3_extended_result_codes(a->db, 1);
    /* Writers of one archive wait for each other rather than fail. */
    sqlite3_busy_timeout(a->db, 60000);
    /* Write-ahead log: a transaction per file costs one sync, readers do not
     * block the writer, and a killed writer leaves the committed runs. */
    if (exec(a, "PRAGMA foreign_keys = ON", err) || init_schema(a, create, err) ||
        exec(a, "PRAGMA journal_mode = WAL", err) || exec(a, "PRAGMA synchronous = NORMAL", err)) {
        sq_close(&a->base);
        return -1;
    }
    *out = &a->base;
    return 0;
}

static void sq_close(vmp_archive *handle)
{
    sq_archive *a = (sq_archive *)handle;
    sqlite3_close(a->db);
    free(a->base.name);
    free(a);
}

/* The id the query `sql` (one text parameter, an id in its first column)
 * finds for `key`; 1 found, 0 not, -1 error. */
static int lookup_id(sq_archive *a, const char *sql, const char *key, int64_t *id, char *err)
{
    sqlite3_stmt *st;
    int rc;
    if (prepare(a, &st, sql, err))
        return -1;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return db_fail(a, err, "database error");
    return rc == SQLITE_ROW;
}

static int sq_find(vmp_archive *handle, const char *sha256, int64_t *run_id, char *err)
{
    sq_archive *a = (sq_archive *)handle;
    return lookup_id(a, "SELECT run_id FROM runs WHERE sha256 = ?", sha256, run_id, err);
}

static void bind_str(sqlite3_stmt *st, int i, const vmp_str *s)
{
    sqlite3_bind_text(st, i, s->s, (int)s->len, SQLITE_STATIC);
}

/* 0 added, 1 not: a run of the same sha256 is there already, -1 error. */
static int insert_run(sq_archive *a, const vmp_archive_run *run, uint64_t total, char *err)
{
    static const char sql[] =
        "INSERT INTO runs (sha256, path, file_bytes, added_ns, format_minor, producer, "
        "vm_name, vm_version, pid, start_ns, interval_ns, total_weight, complete, ranges) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (sha256) DO NOTHING";
    const vmp_rec_header *h = run->hdr;
    struct timespec now;
    sqlite3_stmt *st;
    int rc;

    clock_gettime(CLOCK_REALTIME, &now);
    if (prepare(a, &st, sql, err))
        return -1;
    sqlite3_bind_text(st, 1, run->sha256, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, run->path, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)run->file_bytes);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)now.tv_sec * 1000000000 + now.tv_nsec);
    sqlite3_bind_int(st, 5, (int)run->format_minor);
    bind_str(st, 6, &h->producer);
    bind_str(st, 7, &h->vm_name);
    bind_str(st, 8, &h->vm_version);
    sqlite3_bind_int64(st, 9, (sqlite3_int64)h->pid);
    sqlite3_bind_int64(st, 10, (sqlite3_int64)h->start_realtime_ns);
    sqlite3_bind_int64(st, 11, (sqlite3_int64)h->interval_ns);
    sqlite3_bind_int64(st, 12, (sqlite3_int64)total);
    sqlite3_bind_int(st, 13, run->complete);
    sqlite3_bind_int(st, 14, run->ranges);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_fail(a, err, "cannot add the run");
    return sqlite3_changes(a->db) == 0; /* 1: the same bytes are indexed already */
}

static int insert_labels(sq_archive *a, int64_t run_id, const vmp_rec_header *h, char *err)
{
    sqlite3_stmt *st;
    size_t i;
    /* a key given twice: the last value wins, as in `vmp report` */
    if (prepare(a, &st, "INSERT OR REPLACE INTO labels VALUES (?, ?, ?)", err))
        return -1;
    for (i = 0; i < h->n_labels; i++) {
        sqlite3_bind_int64(st, 1, run_id);
        bind_str(st, 2, &h->labels[2 * i]);
        bind_str(st, 3, &h->labels[2 * i + 1]);
        if (sqlite3_step(st) != SQLITE_DONE) {
            sqlite3_finalize(st);
            return db_fail(a, err, "cannot add a label");
        }
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return 0;
}

/* One weights row: `self`, `total` and `executing` are added to the row of
 * (run, name) (two functions of one name count as one, as in `vmp report`). */
static int add_weight(sq_archive *a, sqlite3_stmt *const st[3], int64_t run_id, const char *name,
                      int is_range, const uint64_t v[3], char *err)
{
    sqlite3_stmt *fn = st[0], *find = st[1], *wt = st[2];
    int i, ok;
    sqlite3_bind_text(fn, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_int(fn, 2, is_range);
    sqlite3_bind_text(find, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_int(find, 2, is_range);
    if (sqlite3_step(fn) != SQLITE_DONE || sqlite3_step(find) != SQLITE_ROW)
        return db_fail(a, err, "cannot add a function");
    sqlite3_bind_int64(wt, 1, run_id);
    sqlite3_bind_int64(wt, 2, sqlite3_column_int64(find, 0));
    for (i = 0; i < 3; i++)
        sqlite3_bind_int64(wt, 3 + i, (sqlite3_int64)v[i]);
    ok = sqlite3_step(wt) == SQLITE_DONE;
    sqlite3_reset(fn);
    sqlite3_reset(find);
    sqlite3_reset(wt);
    return ok ? 0 : db_fail(a, err, "cannot add a weight");
}

/* The weights of the CPU samples (kind NULL), or of kind `kind`. */
static int insert_weights(sq_archive *a, int64_t run_id, const char *kind, const vmp_run_weights *w,
                          const vmp_archive_executing *ex, char *err)
{
    sqlite3_stmt *st[3] = {NULL, NULL, NULL};
    int rc = -1;
    size_t i;

    if (prepare(a, &st[0], "INSERT OR IGNORE INTO functions (name, is_range) VALUES (?, ?)", err) ||
        prepare(a, &st[1], "SELECT function_id FROM functions WHERE name = ? AND is_range = ?",
                err) ||
        prepare(a, &st[2],
                kind ? "INSERT INTO kind_weights (run_id, function_id, self, total, executing, "
                       "kind) VALUES (?, ?, ?, ?, ?, ?6) ON CONFLICT (run_id, kind, function_id) "
                       "DO UPDATE SET self = self + excluded.self, total = total + "
                       "excluded.total, executing = executing + excluded.executing"
                     : "INSERT INTO weights VALUES (?, ?, ?, ?, ?) ON CONFLICT (run_id, "
                       "function_id) DO UPDATE SET self = self + excluded.self, total = total + "
                       "excluded.total, executing = executing + excluded.executing",
                err))
        goto out;
    if (kind)
        sqlite3_bind_text(st[2], 6, kind, -1, SQLITE_STATIC);
    for (i = 0; i < w->n; i++) {
        const uint64_t v[3] = {w->self[i], w->inclusive[i], 0};
        if (add_weight(a, st, run_id, w->names[i], w->is_range ? w->is_range[i] : 0, v, err))
            goto out;
    }
    for (i = 0; ex && i < ex->n; i++) {
        const uint64_t v[3] = {0, 0, ex->weights[i]};
        if (ex->weights[i] && add_weight(a, st, run_id, ex->names[i], 0, v, err))
            goto out;
    }
    rc = 0;
out:
    for (i = 0; i < 3; i++)
        sqlite3_finalize(st[i]);
    return rc;
}

/* A run's kind other than CPU time: its row in run_kinds and its weights. */
static int insert_kind(sq_archive *a, int64_t run_id, const vmp_archive_kind *k, char *err)
{
    sqlite3_stmt *st;
    int rc;
    if (prepare(a, &st, "INSERT OR REPLACE INTO run_kinds VALUES (?, ?, ?, ?, ?)", err))
        return -1;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_text(st, 2, k->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, k->unit, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)k->samples);
    sqlite3_bind_int64(st, 5, (sqlite3_int64)k->w->total);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_fail(a, err, "cannot add a sample kind");
    return insert_weights(a, run_id, k->name, k->w, k->ex, err);
}

static int sq_add(vmp_archive *handle, const vmp_archive_run *run, const vmp_run_weights *w,
                  const vmp_archive_executing *ex, const vmp_archive_kind *kinds, size_t n_kinds,
                  int64_t *run_id, char *err)
{
    sq_archive *a = (sq_archive *)handle;
    size_t i;
    int rc;
    if (exec(a, "BEGIN IMMEDIATE", err))
        return -1;
    rc = insert_run(a, run, w->total, err);
    if (rc == 1) { /* another process added the same bytes since we looked */
        sqlite3_exec(a->db, "ROLLBACK", NULL, NULL, NULL);
        return 1;
    }
    if (rc == 0) {
        *run_id = sqlite3_last_insert_rowid(a->db);
        int ok = insert_labels(a, *run_id, run->hdr, err) == 0 &&
                 insert_weights(a, *run_id, NULL, w, ex, err) == 0;
        for (i = 0; ok && i < n_kinds; i++)
            ok = insert_kind(a, *run_id, &kinds[i], err) == 0;
        if (ok && exec(a, "COMMIT", err) == 0)
            return 0;
    }
    sqlite3_exec(a->db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

/* ---- selection ------------------------------------------------------------------ */

static char *column_dup(sqlite3_stmt *st, int i)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    return strdup(s ? (const char *)s : "");
}

/* The id of function `name` (a function row before a range row of the same
 * name); 1 found, 0 not, -1 error. */
static int function_id(sq_archive *a, const char *name, int64_t *id, char *err)
{
    return lookup_id(a, "SELECT function_id FROM functions WHERE name = ? ORDER BY is_range", name,
                     id, err);
}

static int sq_select(vmp_archive *handle, const vmp_archive_filter *filter, const char *function,
                     vmp_archive_row **rows, size_t *n_rows, char *err)
{
    sq_archive *a = (sq_archive *)handle;
    static const char head[] =
        "SELECT r.run_id, r.path, r.sha256, "
        "coalesce((SELECT group_concat(name || '=' || value, ' ') FROM "
        "(SELECT name, value FROM labels l WHERE l.run_id = r.run_id ORDER BY name)), ''), "
        "r.vm_name, r.start_ns, r.file_bytes, r.total_weight, r.complete, r.ranges, "
        "coalesce(w.self, 0), coalesce(w.total, 0), coalesce(w.executing, 0) "
        "FROM runs r LEFT JOIN weights w ON w.run_id = r.run_id AND w.function_id = ?";
    /* spec.md §5.15: another kind's weights and total */
    static const char head_kind[] =
        "SELECT r.run_id, r.path, r.sha256, "
        "coalesce((SELECT group_concat(name || '=' || value, ' ') FROM "
        "(SELECT name, value FROM labels l WHERE l.run_id = r.run_id ORDER BY name)), ''), "
        "r.vm_name, r.start_ns, r.file_bytes, "
        "coalesce((SELECT k.total_weight FROM run_kinds k WHERE k.run_id = r.run_id "
        "AND k.kind = ?2), 0), r.complete, r.ranges, "
        "coalesce(w.self, 0), coalesce(w.total, 0), coalesce(w.executing, 0) "
        "FROM runs r LEFT JOIN kind_weights w ON w.run_id = r.run_id AND w.kind = ?2 "
        "AND w.function_id = ?1";
    const char *kind = filter && !is_cpu(filter->kind) ? filter->kind : NULL;
    static const char cond[] =
        " AND r.run_id IN (SELECT run_id FROM labels WHERE name = ? AND value = ?)";
    size_t n_filter = filter ? filter->n : 0, i, n = 0, cap = 0;
    char *sql = malloc(sizeof head_kind + 16 + n_filter * sizeof cond + 64);
    vmp_archive_row *out = NULL;
    sqlite3_stmt *st = NULL;
    int rc;

    int64_t fid = -1;

    *rows = NULL;
    *n_rows = 0;
    if (function) {
        rc = function_id(a, function, &fid, err);
        if (rc <= 0) {
            free(sql);
            if (rc == 0)
                set_err(err, "%s: no function '%s' in any run", a->base.name, function);
            return -1;
        }
    }
    if (!sql) {
        set_err(err, "%s: out of memory", a->base.name);
        return -1;
    }
    strcpy(sql, kind ? head_kind : head);
    strcat(sql, " WHERE 1");
    for (i = 0; i < n_filter; i++)
        strcat(sql, cond);
    strcat(sql, " ORDER BY r.start_ns, r.run_id");
    rc = prepare(a, &st, sql, err);
    free(sql);
    if (rc)
        return -1;
    sqlite3_bind_int64(st, 1, fid);
    if (kind) /* ?2; the labels' parameters come after it */
        sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
    for (i = 0; i < n_filter; i++) {
        sqlite3_bind_text(st, (int)(2 * i + 2 + (kind != NULL)), filter->keys[i], -1,
                          SQLITE_STATIC);
        sqlite3_bind_text(st, (int)(2 * i + 3 + (kind != NULL)), filter->values[i], -1,
                          SQLITE_STATIC);
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        vmp_archive_row *r;
        if (n == cap) {
            vmp_archive_row *grown;
            cap = cap ? 2 * cap : 64;
            grown = realloc(out, cap * sizeof *out);
            if (!grown)
                break;
            out = grown;
        }
        r = &out[n++];
        r->run_id = sqlite3_column_int64(st, 0);
        r->path = column_dup(st, 1);
        r->sha256 = column_dup(st, 2);
        r->labels = column_dup(st, 3);
        r->vm_name = column_dup(st, 4);
        r->start_ns = (uint64_t)sqlite3_column_int64(st, 5);
        r->file_bytes = (uint64_t)sqlite3_column_int64(st, 6);
        r->total_weight = (uint64_t)sqlite3_column_int64(st, 7);
        r->complete = sqlite3_column_int(st, 8);
        r->ranges = sqlite3_column_int(st, 9);
        r->self = (uint64_t)sqlite3_column_int64(st, 10);
        r->total = (uint64_t)sqlite3_column_int64(st, 11);
        r->executing = (uint64_t)sqlite3_column_int64(st, 12);
        if (!r->path || !r->sha256 || !r->labels || !r->vm_name) {
            rc = SQLITE_NOMEM;
            break;
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        vmp_archive_rows_free(out, n);
        if (rc == SQLITE_ROW || rc == SQLITE_NOMEM) {
            set_err(err, "%s: out of memory", a->base.name);
            return -1;
        }
        return db_fail(a, err, "cannot list the runs");
    }
    *rows = out;
    *n_rows = n;
    return 0;
}

static int sq_weights(vmp_archive *handle, int64_t run_id, int ranges, const char *kind,
                      vmp_run_weights *out, char *err)
{
    sq_archive *a = (sq_archive *)handle;
    static const char sql[] =
        "SELECT f.name, w.self, w.total, f.is_range FROM weights w "
        "JOIN functions f USING (function_id) WHERE w.run_id = ?1 AND w.total > 0 "
        "AND (f.is_range = 0 OR ?2) ORDER BY f.name, f.is_range";
    /* spec.md §5.15: another kind's */
    static const char sql_kind[] =
        "SELECT f.name, w.self, w.total, f.is_range FROM kind_weights w "
        "JOIN functions f USING (function_id) WHERE w.run_id = ?1 AND w.kind = ?3 "
        "AND w.total > 0 AND (f.is_range = 0 OR ?2) ORDER BY f.name, f.is_range";
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    int rc;

    memset(out, 0, sizeof *out);
    if (is_cpu(kind))
        kind = NULL;
    if (prepare(a, &st,
                kind ? "SELECT coalesce((SELECT total_weight FROM run_kinds WHERE run_id = ?1 "
                       "AND kind = ?2), 0), ranges FROM runs WHERE run_id = ?1"
                     : "SELECT total_weight, ranges FROM runs WHERE run_id = ?1",
                err))
        return -1;
    sqlite3_bind_int64(st, 1, run_id);
    if (kind)
        sqlite3_bind_text(st, 2, kind, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        out->total = (uint64_t)sqlite3_column_int64(st, 0);
        if (ranges && !sqlite3_column_int(st, 1)) {
            sqlite3_finalize(st);
            set_err(err, "%s: run %lld was added without --ranges", a->base.name,
                    (long long)run_id);
            return -1;
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW) {
        if (rc == SQLITE_DONE)
            set_err(err, "%s: no run %lld", a->base.name, (long long)run_id);
        else
            db_fail(a, err, "cannot read a run");
        return -1;
    }
    if (prepare(a, &st, kind ? sql_kind : sql, err))
        return -1;
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_int(st, 2, ranges);
    if (kind)
        sqlite3_bind_text(st, 3, kind, -1, SQLITE_STATIC);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (out->n == cap) {
            size_t c = cap ? 2 * cap : 256;
            char **names = realloc(out->names, c * sizeof *names);
            uint64_t *self = names ? realloc(out->self, c * sizeof *self) : NULL;
            uint64_t *incl = self ? realloc(out->inclusive, c * sizeof *incl) : NULL;
            unsigned char *is_range = incl ? realloc(out->is_range, c) : NULL;
            if (names)
                out->names = names;
            if (self)
                out->self = self;
            if (incl)
                out->inclusive = incl;
            if (!is_range) {
                rc = SQLITE_NOMEM;
                break;
            }
            out->is_range = is_range;
            cap = c;
        }
        out->names[out->n] = column_dup(st, 0);
        if (!out->names[out->n]) {
            rc = SQLITE_NOMEM;
            break;
        }
        out->self[out->n] = (uint64_t)sqlite3_column_int64(st, 1);
        out->inclusive[out->n] = (uint64_t)sqlite3_column_int64(st, 2);
        out->is_range[out->n] = (unsigned char)sqlite3_column_int(st, 3);
        out->n++;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        vmp_run_weights_free(out);
        if (rc == SQLITE_NOMEM) {
            set_err(err, "%s: out of memory", a->base.name);
            return -1;
        }
        return db_fail(a, err, "cannot read the weights");
    }
    return 0;
}

static const vmp_archive_backend sqlite_backend = {
    .close = sq_close,
    .find = sq_find,
    .add = sq_add,
    .select = sq_select,
    .weights = sq_weights,
};
