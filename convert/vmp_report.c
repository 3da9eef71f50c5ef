/* SPDX-License-Identifier: MIT
 *
 * vmp_report.c - the report's data (vmp_report_write(), vmp_convert.h):
 * functions and frames by weight, JIT units, the blame matrix, and the
 * dispatch to the renderers (spec.md §5 "Generations", §5.12, §5.13).
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_report_int.h"

double vmp_rep__pct(uint64_t a, uint64_t b)
{
    return b ? 100.0 * (double)a / (double)b : 0.0;
}

const vmp_afunction *vmp_rep__fn_of(const report *r, uint32_t id)
{
    return vmp_analysis_function(r->a, id);
}

static int cmp_entry_by_name(const report *r, const entry *x, const entry *y)
{
    const vmp_afunction *a = vmp_rep__fn_of(r, x->id), *b = vmp_rep__fn_of(r, y->id);
    int c = strcmp(a->name, b->name);
    return c ? c : strcmp(a->kind, b->kind);
}

/* qsort has no payload: the report being sorted, per thread */
static _Thread_local const report *sort_ctx;

static int cmp_func_entries(const void *x, const void *y)
{
    const entry *a = x, *b = y;
    if (a->w != b->w)
        return a->w > b->w ? -1 : 1;
    return cmp_entry_by_name(sort_ctx, a, b);
}

static int cmp_frame_entries(const void *x, const void *y)
{
    const entry *a = x, *b = y;
    const vmp_aframe *fa = vmp_analysis_frame(sort_ctx->a, a->id);
    const vmp_aframe *fb = vmp_analysis_frame(sort_ctx->a, b->id);
    if (fa->function != fb->function)
        return fa->function < fb->function ? -1 : 1;
    if (a->w != b->w)
        return a->w > b->w ? -1 : 1;
    if (fa->has_range != fb->has_range)
        return fa->has_range ? -1 : 1;
    if (fa->bc_first != fb->bc_first)
        return fa->bc_first < fb->bc_first ? -1 : 1;
    return fa->bc_last < fb->bc_last ? -1 : fa->bc_last > fb->bc_last;
}

/* The functions of class `cls` (and, when kind_filter is 1/2, only PICs /
 * only non-PICs), sorted by weight.  Caller frees. */
entry *vmp_rep__collect(const report *r, int cls, int pic_filter, size_t *n_out, uint64_t *total)
{
    entry *e = malloc((r->n_fw + 1) * sizeof *e);
    size_t i, n = 0;
    *total = 0;
    if (!e)
        return NULL;
    for (i = 1; i < r->n_fw; i++) {
        const vmp_afunction *f = vmp_rep__fn_of(r, (uint32_t)i);
        int is_pic;
        if (!f || !r->fw[i] || f->code_class != cls)
            continue;
        is_pic = strstr(f->kind, "PIC") != NULL;
        if ((pic_filter == 1 && !is_pic) || (pic_filter == 2 && is_pic))
            continue;
        e[n].id = (uint32_t)i;
        e[n].w = r->fw[i];
        *total += r->fw[i];
        n++;
    }
    sort_ctx = r;
    qsort(e, n, sizeof *e, cmp_func_entries);
    *n_out = n;
    return e;
}

/* Index of the first frame entry of function `fn` in r->frames. */
size_t vmp_rep__frames_begin(const report *r, uint32_t fn)
{
    size_t lo = 0, hi = r->n_frames;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (vmp_analysis_frame(r->a, r->frames[mid].id)->function < fn)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* How many of the `n` rows, ranked by weight, --top and --min-percent (of
 * `total`) keep.  Each row is `stride` bytes with its uint64_t weight at
 * `w_off`: the function entries, the JIT units and the blame matrix rows. */
size_t vmp_rep__rows_shown(const rep_opts *o, const void *rows, size_t n, size_t stride,
                           size_t w_off, uint64_t total)
{
    size_t k = 0;
    while (k < n && (o->top == 0 || k < o->top)) {
        uint64_t w;
        memcpy(&w, (const char *)rows + k * stride + w_off, sizeof w);
        if (vmp_rep__pct(w, total) < o->min_percent)
            break;
        k++;
    }
    return k;
}

size_t vmp_rep__shown(const rep_opts *o, const entry *e, size_t n, uint64_t section_total)
{
    return vmp_rep__rows_shown(o, e, n, sizeof *e, offsetof(entry, w), section_total);
}

/* " line L" or " lines L-M" of a frame's range into buf, or "" */
void vmp_rep__range_lines(const report *r, const vmp_aframe *fr, char *buf, size_t size)
{
    const vmp_afunction *fn = vmp_rep__fn_of(r, fr->function);
    uint64_t lo, hi;
    buf[0] = '\0';
    if (!fn || !fn->function_id || !fr->has_range ||
        !vmp_analysis_lines(r->a, fn->function_id, fr->bc_first, fr->bc_last, &lo, &hi))
        return;
    if (lo == hi)
        snprintf(buf, size, "  line %" PRIu64, lo);
    else
        snprintf(buf, size, "  lines %" PRIu64 "-%" PRIu64, lo, hi);
}

/* Samples whose executing frame is a symbolic frame (no code of its own). */
uint64_t vmp_rep__symbolic_total(const vmp_profile_totals *t)
{
    uint64_t known = t->generated + t->native + t->unknown;
    return t->samples > known ? t->samples - known : 0;
}

/* ---- JIT units ------------------------------------------------------------ */

/* The name a JIT unit (code id) is listed under (vmp_analysis_unit_name()). */
const char *vmp_rep__unit_name(const report *r, uint64_t code)
{
    const char *name = vmp_analysis_unit_name(r->a, code);
    return name ? name : "[undefined code]";
}

static int cmp_unit_name(const void *x, const void *y)
{
    return strcmp(((const unit *)x)->name, ((const unit *)y)->name);
}

static int cmp_unit_weight(const void *x, const void *y)
{
    const unit *a = x, *b = y;
    if (a->w != b->w)
        return a->w > b->w ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* The JIT units that samples ran in (vmp_profile_code_weights()), one per
 * name, ranked by weight then name; `*total` receives their weight, `*named`
 * whether a unit has a name of its own (not its function's).  NULL on no
 * memory; an empty table is not NULL. */
unit *vmp_rep__units_table(const report *r, size_t *n_out, uint64_t *total, int *named)
{
    size_t n, i, m = 0;
    const vmp_profile_code *c = vmp_profile_code_weights(r->p, &n);
    unit *u = malloc((n + 1) * sizeof *u);
    *n_out = 0;
    *total = 0;
    *named = 0;
    if (!u)
        return NULL;
    for (i = 0; i < n; i++) {
        u[i].name = vmp_rep__unit_name(r, c[i].code);
        u[i].fn = vmp_analysis_code_function(r->a, c[i].code);
        u[i].w = c[i].weight;
        *total += c[i].weight;
        if (u[i].fn && strcmp(u[i].name, vmp_rep__fn_of(r, u[i].fn)->name) != 0)
            *named = 1;
    }
    qsort(u, n, sizeof *u, cmp_unit_name); /* stable enough: fn of the first kept */
    for (i = 0; i < n; i++) {
        if (m && strcmp(u[m - 1].name, u[i].name) == 0)
            u[m - 1].w += u[i].w;
        else
            u[m++] = u[i];
    }
    qsort(u, m, sizeof *u, cmp_unit_weight);
    *n_out = m;
    return u;
}

/* Generated code by JIT unit, when units have names of their own (a tracing
 * JIT's traces, where the function table merges every trace of a
 * function). */

/* ---- time blamed on JIT units ---------------------------------------------- */

static int cmp_brow(const void *x, const void *y)
{
    const brow *a = x, *b = y;
    if (a->total != b->total)
        return a->total > b->total ? -1 : 1;
    return strcmp(a->name, b->name);
}

void vmp_rep__bmatrix_free(bmatrix *m)
{
    free(m->rows);
    free(m->cells);
    free(m->col);
}

/* Build the matrix from the profile's (blame, state) cells: one row per
 * blamed JIT unit (code objects of one name are one row, see vmp_rep__unit_name()).
 * -1 on no memory. */
int vmp_rep__bmatrix_build(const report *r, bmatrix *m)
{
    size_t n, i, j;
    const vmp_profile_blame *b = vmp_profile_blame_weights(r->p, &n);
    uint32_t *row_of = malloc((n + 1) * sizeof *row_of);
    memset(m, 0, sizeof *m);
    if (!row_of)
        return -1;
    for (i = 0; i < n; i++)
        if (b[i].state + 1 > m->n_states)
            m->n_states = b[i].state + 1;
    m->rows = calloc(n + 1, sizeof *m->rows);
    m->cells = calloc((n + 1) * (m->n_states + 1), sizeof *m->cells);
    m->col = calloc(m->n_states + 1, sizeof *m->col);
    if (!m->rows || !m->cells || !m->col) {
        free(row_of);
        vmp_rep__bmatrix_free(m);
        return -1;
    }
    for (i = 0; i < n; i++) {
        const char *name = b[i].code ? vmp_rep__unit_name(r, b[i].code) : "[no blame]";
        for (j = 0; j < m->n_rows && strcmp(m->rows[j].name, name) != 0; j++)
            ;
        if (j == m->n_rows) {
            m->rows[j].name = name;
            m->rows[j].fn = b[i].code ? vmp_analysis_code_function(r->a, b[i].code) : 0;
            m->n_rows++;
        }
        row_of[i] = (uint32_t)j;
    }
    for (j = 0; j < m->n_rows; j++)
        m->rows[j].cells = m->cells + j * m->n_states;
    for (i = 0; i < n; i++) {
        brow *row = &m->rows[row_of[i]];
        row->cells[b[i].state] += b[i].weight;
        row->total += b[i].weight;
        m->col[b[i].state] += b[i].weight;
        m->total += b[i].weight;
    }
    free(row_of);
    qsort(m->rows, m->n_rows, sizeof *m->rows, cmp_brow);
    return 0;
}

const char *vmp_rep__brow_kind(const report *r, const brow *row)
{
    return row->fn ? vmp_rep__fn_of(r, row->fn)->kind : "";
}

/* ---- vmp_report_write() ------------------------------------------------------ */

vmp_status vmp_report_write(vmp_profile *p, FILE *out, const vmp_report_options *opts)
{
    vmp_report_options def = VMP_REPORT_OPTIONS_INIT;
    const char *path;
    vmp_status st = VMP_OK;
    rep_opts o;
    report r;
    size_t i;

    if (opts == NULL)
        opts = &def;
    if (p == NULL || out == NULL || opts->version != VMP_REPORT_OPTIONS_VERSION ||
        opts->format < VMP_REPORT_TEXT || opts->format > VMP_REPORT_CSV ||
        opts->by < VMP_REPORT_FULL || opts->by > VMP_REPORT_BY_VM_FUNCTION)
        return VMP_ERR_INVALID_ARG;
    o.top = opts->top;
    o.min_percent = opts->min_percent;
    o.ranges = !opts->no_ranges;
    o.format = opts->format;
    o.by = opts->by;
    path = opts->path ? opts->path : "-";
    memset(&r, 0, sizeof r);
    r.p = p;
    r.error = opts->error;
    r.a = vmp_profile_analysis(p);
    r.t = vmp_profile_get_totals(p);
    r.fw = vmp_profile_function_weights(p, &r.n_fw);
    r.frw = vmp_profile_frame_weights(p, &r.n_frw);
    r.frames = malloc((r.n_frw + 1) * sizeof *r.frames);
    if (!r.frames)
        return VMP_ERR_NOMEM;
    for (i = 1; i < r.n_frw; i++)
        if (r.frw[i]) {
            r.frames[r.n_frames].id = (uint32_t)i;
            r.frames[r.n_frames].w = r.frw[i];
            r.n_frames++;
        }
    sort_ctx = &r;
    qsort(r.frames, r.n_frames, sizeof *r.frames, cmp_frame_entries);
    if (o.by != BY_FUNCTION)
        st = vmp_rep__by(out, &r, &o, path);
    else if (o.format == FMT_JSON)
        vmp_rep__json_report(out, &r, &o, path);
    else if (o.format == FMT_CSV)
        vmp_rep__csv_report(out, &r, &o);
    else
        vmp_rep__text_report(out, &r, &o, path);
    free(r.frames);
    return st;
}
