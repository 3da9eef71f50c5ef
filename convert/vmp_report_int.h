/* SPDX-License-Identifier: MIT
 *
 * vmp_report_int.h - what the report's files share (vmp_report_write(),
 * vmp_convert.h).  Internal: not installed.
 *
 * Files:
 *   vmp_report.c       the report's data: function and frame weights, JIT
 *                      units, the blame matrix; vmp_report_write()
 *   vmp_report_text.c  the text report
 *   vmp_report_data.c  the JSON and CSV reports
 *   vmp_report_by.c    the ranked tables of --by (module, thread, state, unit,
 *                      vm-function)
 */
#ifndef VMP_REPORT_INT_H
#define VMP_REPORT_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vmp_analyze.h"
#include "vmp_convert.h"

enum {
    FMT_TEXT = VMP_REPORT_TEXT,
    FMT_JSON = VMP_REPORT_JSON,
    FMT_CSV = VMP_REPORT_CSV
};

enum {
    BY_FUNCTION = VMP_REPORT_FULL,
    BY_MODULE = VMP_REPORT_BY_MODULE,
    BY_THREAD = VMP_REPORT_BY_THREAD,
    BY_STATE = VMP_REPORT_BY_STATE,
    BY_UNIT = VMP_REPORT_BY_UNIT,
    BY_VM_FUNCTION = VMP_REPORT_BY_VM_FUNCTION
};

typedef struct rep_opts {
    size_t top;
    double min_percent;
    int ranges;
    int format;
    int by; /* BY_* */
} rep_opts;

typedef struct entry {
    uint32_t id; /* afunction or aframe id */
    uint64_t w;
} entry;

typedef struct report {
    vmp_profile *p;
    vmp_analysis *a;
    const vmp_profile_totals *t;
    const uint64_t *fw, *frw;
    size_t n_fw, n_frw;
    /* frames grouped by function: frames_of[f] .. via sorted index */
    entry *frames; /* (frame id, weight), sorted by function then weight */
    size_t n_frames;
    const char *error; /* reader error message, or NULL */
} report;

typedef struct unit {
    const char *name; /* vmp_rep__unit_name(), borrowed from the analysis */
    uint32_t fn;      /* afunction of its first code object, 0 == none */
    uint64_t w;
} unit;

typedef struct brow {
    const char *name; /* the blamed unit's (vmp_rep__unit_name()), or "[no blame]" */
    uint32_t fn;      /* afunction of its first code object, 0 == none */
    uint64_t total;
    uint64_t *cells; /* n_states weights */
} brow;

typedef struct bmatrix {
    brow *rows;
    size_t n_rows, n_states;
    uint64_t *cells, *col, total;
} bmatrix;

/* ---- vmp_report.c ---- */

double vmp_rep__pct(uint64_t a, uint64_t b);
const vmp_afunction *vmp_rep__fn_of(const report *r, uint32_t id);
/* The functions of class `cls` (and, when pic_filter is 1/2, only PICs /
 * only non-PICs), sorted by weight.  Caller frees. */
entry *vmp_rep__collect(const report *r, int cls, int pic_filter, size_t *n_out, uint64_t *total);
/* Index of the first frame entry of function `fn` in r->frames. */
size_t vmp_rep__frames_begin(const report *r, uint32_t fn);
/* How many of the `n` rows, ranked by weight, --top and --min-percent keep
 * (see vmp_report.c). */
size_t vmp_rep__rows_shown(const rep_opts *o, const void *rows, size_t n, size_t stride,
                           size_t w_off, uint64_t total);
size_t vmp_rep__shown(const rep_opts *o, const entry *e, size_t n, uint64_t section_total);
/* " line L" or " lines L-M" of a frame's range into buf, or "" */
void vmp_rep__range_lines(const report *r, const vmp_aframe *fr, char *buf, size_t size);
/* Samples whose executing frame is a symbolic frame (no code of its own). */
uint64_t vmp_rep__symbolic_total(const vmp_profile_totals *t);
/* The name a JIT unit (code id) is listed under (vmp_analysis_unit_name()). */
const char *vmp_rep__unit_name(const report *r, uint64_t code);
/* The JIT units, ranked (see vmp_report.c); caller frees. */
unit *vmp_rep__units_table(const report *r, size_t *n_out, uint64_t *total, int *named);
int vmp_rep__bmatrix_build(const report *r, bmatrix *m);
void vmp_rep__bmatrix_free(bmatrix *m);
const char *vmp_rep__brow_kind(const report *r, const brow *row);

/* ---- vmp_report_text.c ---- */

void vmp_rep__text_report(FILE *f, const report *r, const rep_opts *o, const char *path);
void vmp_rep__text_units(FILE *f, const report *r, const rep_opts *o);
void vmp_rep__text_blame(FILE *f, const report *r, const rep_opts *o);

/* ---- vmp_report_data.c ---- */

void vmp_rep__json_str(FILE *f, const char *s);
void vmp_rep__json_report(FILE *f, const report *r, const rep_opts *o, const char *path);
void vmp_rep__csv_report(FILE *f, const report *r, const rep_opts *o);
void vmp_rep__json_units(FILE *f, const report *r, const rep_opts *o);
void vmp_rep__json_blame(FILE *f, const report *r, const rep_opts *o);

/* ---- vmp_report_by.c ---- */

/* The table of --by o->by (not BY_FUNCTION) in o->format.  VMP_OK or
 * VMP_ERR_NOMEM. */
vmp_status vmp_rep__by(FILE *f, report *r, const rep_opts *o, const char *path);

#endif
