/* SPDX-License-Identifier: MIT
 *
 * vmp_diffstat.c - which per-function changes of share between two groups
 * of runs stand out of the noise (the model is in vmp_analyze.h and
 * docs/diff-statistics.md).  The runs' weights come from the caller
 * (vmp_run_weights_read() in convert/ reads them from profiles; the archive
 * from its database).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_analyze.h"

/* ---- one run's weights ------------------------------------------------------------ */

void vmp_run_weights_free(vmp_run_weights *w)
{
    size_t i;
    if (!w)
        return;
    for (i = 0; w->names && i < w->n; i++)
        free(w->names[i]);
    free(w->names);
    free(w->self);
    free(w->inclusive);
    free(w->is_range);
    memset(w, 0, sizeof *w);
}

/* ---- distributions ------------------------------------------------------------------ */

/* Continued fraction of the regularized incomplete beta function (modified
 * Lentz), valid for x < (a + 1) / (a + b + 2). */
static double beta_cf(double a, double b, double x)
{
    const double tiny = 1e-300;
    double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0), h;
    int m;
    if (fabs(d) < tiny)
        d = tiny;
    d = 1.0 / d;
    h = d;
    for (m = 1; m <= 300; m++) {
        double m2 = 2.0 * m, aa, del;
        aa = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
        d = 1.0 + aa * d;
        c = 1.0 + aa / c;
        d = fabs(d) < tiny ? 1.0 / tiny : 1.0 / d;
        c = fabs(c) < tiny ? tiny : c;
        h *= d * c;
        aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
        d = 1.0 + aa * d;
        c = 1.0 + aa / c;
        d = fabs(d) < tiny ? 1.0 / tiny : 1.0 / d;
        c = fabs(c) < tiny ? tiny : c;
        del = d * c;
        h *= del;
        if (fabs(del - 1.0) < 1e-15)
            break;
    }
    return h;
}

/* Regularized incomplete beta I_x(a, b). */
static double beta_inc(double a, double b, double x)
{
    double front;
    if (x <= 0.0)
        return 0.0;
    if (x >= 1.0)
        return 1.0;
    front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1.0) / (a + b + 2.0))
        return front * beta_cf(a, b, x) / a;
    return 1.0 - front * beta_cf(b, a, 1.0 - x) / b;
}

/* P(|T| >= t) for Student's t with `df` degrees of freedom (df <= 0 or
 * infinite: the normal distribution). */
static double t_two_sided(double t, double df)
{
    t = fabs(t);
    if (!(df > 0) || isinf(df) || df > 1e7)
        return erfc(t / sqrt(2.0));
    return beta_inc(df / 2.0, 0.5, df / (df + t * t));
}

/* The t with P(|T| >= t) == p, by bisection. */
static double t_quantile(double p, double df)
{
    double lo = 0.0, hi = 1.0;
    int i;
    while (t_two_sided(hi, df) > p && hi < 1e6)
        hi *= 2.0;
    for (i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (t_two_sided(mid, df) > p)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* ---- the comparison ------------------------------------------------------------------ */

typedef struct fname {
    const char *name;
    size_t run; /* first run that has it, for a stable order */
} fname;

static int fname_cmp(const void *x, const void *y)
{
    return strcmp(((const fname *)x)->name, ((const fname *)y)->name);
}

/* The variance of a side's mean share and its degrees of freedom (0 ==
 * normal: the sampling floor). */
static double side_var(const vmp_share_side *s, double pooled, double *df)
{
    double n = (double)s->n;
    double floor_var = pooled * (1.0 - pooled) * (s->inv_w / n) / n;
    double between = s->n >= 2 ? s->ss / (n - 1) / n : 0.0;
    if (s->n >= 2 && between >= floor_var) {
        *df = n - 1;
        return between;
    }
    *df = 0;
    return floor_var;
}

void vmp_share_test(const vmp_share_side *base, const vmp_share_side *new_side, double pooled,
                    double *t_abs, double *p, double *df, double *se)
{
    double df_b, df_n, vb = side_var(base, pooled, &df_b), vn = side_var(new_side, pooled, &df_n);
    double v = vb + vn, d = new_side->mean - base->mean, den = 0, dof;
    if (df_b > 0)
        den += vb * vb / df_b;
    if (df_n > 0)
        den += vn * vn / df_n;
    /* a side on the sampling floor has (nearly) infinite degrees of freedom */
    dof = den > 0 ? v * v / den : 0;
    if (df)
        *df = dof;
    if (se)
        *se = sqrt(v);
    if (!(sqrt(v) > 0)) {
        *t_abs = d == 0 ? 0.0 : INFINITY;
        if (p)
            *p = d == 0 ? 1.0 : 0.0;
        return;
    }
    *t_abs = fabs(d) / sqrt(v);
    if (p)
        *p = t_two_sided(*t_abs, dof);
}

/* One side's sums of `share` over runs [first, first + n). */
static vmp_share_side side_of(const double *share, const vmp_run_weights *runs, size_t first,
                              size_t n)
{
    vmp_share_side s = {n, 0, 0, 0};
    double sum = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        sum += share[first + i];
        s.inv_w += runs[first + i].total ? 1.0 / (double)runs[first + i].total : 1.0;
    }
    s.mean = sum / (double)n;
    for (i = 0; i < n; i++)
        s.ss += (share[first + i] - s.mean) * (share[first + i] - s.mean);
    return s;
}

/* d, its interval and p-value for one quantity (self or total); `share`
 * holds each run's share of it. */
static void test_one(const double *share, const vmp_run_weights *runs, size_t n_base, size_t n_new,
                     double pooled, double alpha, double *mean, double *d, double *lo, double *hi,
                     double *p, double *t_abs)
{
    vmp_share_side b = side_of(share, runs, 0, n_base), n = side_of(share, runs, n_base, n_new);
    double df, se, half;

    vmp_share_test(&b, &n, pooled, t_abs, p, &df, &se);
    mean[0] = b.mean;
    mean[1] = n.mean;
    *d = n.mean - b.mean;
    if (!(se > 0)) {
        *lo = *hi = *d;
        return;
    }
    half = t_quantile(alpha, df) * se;
    *lo = *d - half;
    *hi = *d + half;
}

typedef struct pidx {
    double p;
    size_t i;
} pidx;

static int p_cmp(const void *x, const void *y)
{
    const pidx *a = x, *b = y;
    if (a->p != b->p)
        return a->p < b->p ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

/* Benjamini-Hochberg: *q[i] = min over j at or after i in p order of
 * m p_j / rank_j, capped at 1. */
static vmp_status adjust(double *const *p, double *const *q, size_t m)
{
    pidx *order = malloc((m ? m : 1) * sizeof *order);
    double run = 1.0;
    size_t i;
    if (!order)
        return VMP_ERR_NOMEM;
    for (i = 0; i < m; i++) {
        order[i].p = *p[i];
        order[i].i = i;
    }
    qsort(order, m, sizeof *order, p_cmp);
    for (i = m; i-- > 0;) {
        double v = order[i].p * (double)m / (double)(i + 1);
        if (v < run)
            run = v;
        *q[order[i].i] = run;
    }
    free(order);
    return VMP_OK;
}

static int row_cmp(const void *x, const void *y)
{
    const vmp_diffstat_row *a = x, *b = y;
    if ((a->significant != 0) != (b->significant != 0))
        return a->significant ? -1 : 1;
    /* a change of self share is where the cost changed; a change of total
     * share alone follows from a callee: self-significant rows first */
    if ((a->significant & 1) != (b->significant & 1))
        return a->significant & 1 ? -1 : 1;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    return strcmp(a->name, b->name);
}

vmp_status vmp_diffstat(const vmp_run_weights *runs, size_t n_base, size_t n_new, double alpha,
                        vmp_diffstat_row **out, size_t *n_out)
{
    size_t n_runs = n_base + n_new, n_all = 0, n_fn = 0, r, i, k;
    fname *all = NULL;
    vmp_diffstat_row *rows = NULL;
    double *self_share = NULL, *total_share = NULL, **ps = NULL, **qs = NULL;
    size_t **where = NULL;
    vmp_status st = VMP_ERR_NOMEM;

    if (!runs || !out || !n_out || !n_base || !n_new || !(alpha > 0 && alpha < 1))
        return VMP_ERR_INVALID_ARG;
    for (r = 0; r < n_runs; r++)
        n_all += runs[r].n;
    all = malloc((n_all ? n_all : 1) * sizeof *all);
    if (!all)
        return VMP_ERR_NOMEM;
    for (r = 0, k = 0; r < n_runs; r++)
        for (i = 0; i < runs[r].n; i++) {
            all[k].name = runs[r].names[i];
            all[k++].run = r;
        }
    qsort(all, n_all, sizeof *all, fname_cmp);
    for (i = 0; i < n_all; i++)
        if (i == 0 || strcmp(all[i].name, all[n_fn - 1].name) != 0)
            all[n_fn++] = all[i];

    rows = calloc(n_fn ? n_fn : 1, sizeof *rows);
    /* where[r][i]: the function index of runs[r].names[i] */
    where = calloc(n_runs, sizeof *where);
    self_share = malloc((n_runs ? n_runs : 1) * sizeof *self_share);
    total_share = malloc((n_runs ? n_runs : 1) * sizeof *total_share);
    ps = malloc((n_fn ? 2 * n_fn : 1) * sizeof *ps);
    qs = malloc((n_fn ? 2 * n_fn : 1) * sizeof *qs);
    if (!rows || !where || !self_share || !total_share || !ps || !qs)
        goto done;
    for (r = 0; r < n_runs; r++) {
        where[r] = malloc((runs[r].n ? runs[r].n : 1) * sizeof *where[r]);
        if (!where[r])
            goto done;
        for (i = 0; i < runs[r].n; i++) {
            fname key = {runs[r].names[i], 0};
            fname *hit = bsearch(&key, all, n_fn, sizeof *all, fname_cmp);
            where[r][i] = (size_t)(hit - all);
        }
    }
    /* per function: gather each run's shares (0 where absent) */
    {
        uint64_t *ws = calloc(n_fn ? n_fn : 1, sizeof *ws),
                 *wt = calloc(n_fn ? n_fn : 1, sizeof *wt);
        uint64_t *rs = calloc(n_runs * (n_fn ? n_fn : 1), sizeof *rs);
        uint64_t *rt = calloc(n_runs * (n_fn ? n_fn : 1), sizeof *rt);
        uint64_t grand = 0;
        if (!ws || !wt || !rs || !rt) {
            free(ws);
            free(wt);
            free(rs);
            free(rt);
            goto done;
        }
        for (r = 0; r < n_runs; r++) {
            grand += runs[r].total;
            for (i = 0; i < runs[r].n; i++) {
                size_t fi = where[r][i];
                ws[fi] += runs[r].self[i];
                wt[fi] += runs[r].inclusive[i];
                rs[fi * n_runs + r] = runs[r].self[i];
                rt[fi * n_runs + r] = runs[r].inclusive[i];
            }
        }
        for (k = 0; k < n_fn; k++) {
            vmp_diffstat_row *row = &rows[k];
            double ts, tt;
            for (r = 0; r < n_runs; r++) {
                double w = runs[r].total ? (double)runs[r].total : 1.0;
                self_share[r] = (double)rs[k * n_runs + r] / w;
                total_share[r] = (double)rt[k * n_runs + r] / w;
            }
            row->name = all[k].name;
            test_one(self_share, runs, n_base, n_new, grand ? (double)ws[k] / (double)grand : 0,
                     alpha, row->self, &row->d_self, &row->self_lo, &row->self_hi, &row->p_self,
                     &ts);
            test_one(total_share, runs, n_base, n_new, grand ? (double)wt[k] / (double)grand : 0,
                     alpha, row->total, &row->d_total, &row->total_lo, &row->total_hi,
                     &row->p_total, &tt);
            row->score = ts > tt ? ts : tt;
            ps[2 * k] = &row->p_self;
            qs[2 * k] = &row->q_self;
            ps[2 * k + 1] = &row->p_total;
            qs[2 * k + 1] = &row->q_total;
        }
        free(ws);
        free(wt);
        free(rs);
        free(rt);
    }
    if (n_fn && adjust(ps, qs, 2 * n_fn) != VMP_OK)
        goto done;
    for (k = 0; k < n_fn; k++)
        rows[k].significant =
            (rows[k].q_self <= alpha ? 1 : 0) | (rows[k].q_total <= alpha ? 2 : 0);
    qsort(rows, n_fn, sizeof *rows, row_cmp);
    *out = rows;
    *n_out = n_fn;
    rows = NULL;
    st = VMP_OK;
done:
    for (r = 0; where && r < n_runs; r++)
        free(where[r]);
    free(where);
    free(rows);
    free(all);
    free(self_share);
    free(total_share);
    free(ps);
    free(qs);
    return st;
}
