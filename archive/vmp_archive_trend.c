/* SPDX-License-Identifier: MIT
 *
 * vmp_archive_trend.c - change points in a function's share over a series
 * of runs, and its SVG chart (vmp_archive.h).
 */
#include "vmp_archive.h"
#include "vmp_grow.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Running sums over the runs with samples, in time order: sums[k] covers
 * the first k, so a segment's sums are two subtractions and every split of
 * a series is tested in time linear in its length.  Shares are taken
 * relative to `shift` (the series' first share), which keeps the sums of
 * squares from cancelling. */
typedef struct share_sums {
    double x[2], xx[2]; /* shares minus shift: [0] self (executing), [1] total */
    double inv_w;       /* 1 / W_r */
    double w[2], all;   /* the function's weight, [0] self, [1] total; the runs' total */
    size_t present;     /* runs where the function has weight */
} share_sums;

typedef struct segmenter {
    share_sums *sums; /* m + 1 of them */
    double shift[2];
    size_t *index; /* the runs' indexes in the rows */
    double alpha;
    vmp_archive_change *out;
    size_t n_out, cap;
    int nomem;
} segmenter;

/* One side, runs [a, b), of share `k` (0 self, 1 total). */
static vmp_share_side side_of(const segmenter *s, size_t a, size_t b, int k)
{
    const share_sums *lo = &s->sums[a], *hi = &s->sums[b];
    vmp_share_side side;
    double n = (double)(b - a), sx = hi->x[k] - lo->x[k];
    side.n = b - a;
    side.mean = sx / n + s->shift[k];
    side.ss = (hi->xx[k] - lo->xx[k]) - sx * sx / n;
    if (side.ss < 0)
        side.ss = 0;
    side.inv_w = hi->inv_w - lo->inv_w;
    return side;
}

static void add_change(segmenter *s, const vmp_archive_change *c)
{
    if (s->n_out == s->cap && vmp_grow(&s->out, &s->cap, sizeof *s->out, 8) != 0) {
        s->nomem = 1;
        return;
    }
    s->out[s->n_out++] = *c;
}

/* Search runs [a, b) for the strongest split (the larger |t| of the self and
 * total shares, the test of vmp_diffstat() for one function); recurse on
 * both sides of a significant one. */
static void segment(segmenter *s, size_t a, size_t b)
{
    vmp_archive_change best;
    double best_score = -1.0, best_p = 1.0, pooled[2], all;
    size_t i, tried = 0;
    int k;

    if (b - a < 4 || s->nomem)
        return;
    if (s->sums[b].present == s->sums[a].present)
        return; /* the function has no weight here: nothing to compare */
    all = s->sums[b].all - s->sums[a].all;
    for (k = 0; k < 2; k++)
        pooled[k] = all > 0 ? (s->sums[b].w[k] - s->sums[a].w[k]) / all : 0;
    memset(&best, 0, sizeof best);
    for (i = a + 2; i + 2 <= b; i++) {
        double score = 0;
        tried++;
        for (k = 0; k < 2; k++) {
            vmp_share_side before = side_of(s, a, i, k), after = side_of(s, i, b, k);
            double t;
            vmp_share_test(&before, &after, pooled[k], &t, NULL, NULL, NULL);
            score = fmax(score, t);
        }
        if (score > best_score) {
            best_score = score;
            best.at = i;
        }
    }
    if (best_score < 0)
        return;
    for (k = 0; k < 2; k++) {
        vmp_share_side before = side_of(s, a, best.at, k), after = side_of(s, best.at, b, k);
        double t, p;
        vmp_share_test(&before, &after, pooled[k], &t, &p, NULL, NULL);
        best_p = fmin(best_p, p);
        (k ? best.total : best.self)[0] = before.mean;
        (k ? best.total : best.self)[1] = after.mean;
    }
    best.q = fmin(1.0, best_p * 2.0 * (double)tried);
    if (!(best.q <= s->alpha))
        return;
    segment(s, a, best.at);
    i = best.at;
    best.at = s->index[i];
    add_change(s, &best);
    segment(s, i, b);
}

int vmp_archive_changes(const vmp_archive_row *rows, size_t n, const char *function, double alpha,
                        vmp_archive_change **out, size_t *n_out)
{
    segmenter s;
    size_t i, m = 0;
    int k, first = 1;

    (void)function;
    memset(&s, 0, sizeof s);
    s.alpha = alpha;
    s.sums = calloc(n + 1, sizeof *s.sums);
    s.index = malloc((n ? n : 1) * sizeof *s.index);
    if (!s.sums || !s.index) {
        free(s.sums);
        free(s.index);
        return -1;
    }
    for (i = 0; i < n; i++) {
        const vmp_archive_row *r = &rows[i];
        double W = (double)r->total_weight, x[2] = {(double)r->executing / W, (double)r->total / W};
        share_sums *next = &s.sums[m + 1];
        if (!r->total_weight)
            continue; /* runs with no samples are left out */
        if (first) {
            s.shift[0] = x[0];
            s.shift[1] = x[1];
            first = 0;
        }
        *next = s.sums[m];
        for (k = 0; k < 2; k++) {
            next->x[k] += x[k] - s.shift[k];
            next->xx[k] += (x[k] - s.shift[k]) * (x[k] - s.shift[k]);
        }
        next->inv_w += 1.0 / W;
        next->w[0] += (double)r->executing;
        next->w[1] += (double)r->total;
        next->all += W;
        next->present += r->executing || r->total;
        s.index[m++] = i;
    }
    segment(&s, 0, m);
    free(s.sums);
    free(s.index);
    if (s.nomem) {
        free(s.out);
        return -1;
    }
    *out = s.out;
    *n_out = s.n_out;
    return 0;
}

/* ---- the chart ----------------------------------------------------------------------- */

enum {
    W = 960,
    H = 400,
    LEFT = 64,
    RIGHT = 24,
    TOP = 48,
    BOTTOM = 56
};

static void put_xml(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '"')
            fputs("&quot;", f);
        else if ((unsigned char)*s >= 0x20 || *s == '\t')
            fputc(*s, f);
    }
}

static double share(uint64_t w, uint64_t total)
{
    return total ? (double)w / (double)total : 0.0;
}

/* A "nice" step (1, 2 or 5 times a power of ten) for about `ticks` ticks
 * over [0, max]. */
static double nice_step(double max, int ticks)
{
    double raw = max / ticks, p = pow(10.0, floor(log10(raw))), m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

int vmp_archive_trend_svg(FILE *f, const char *function, const vmp_archive_row *rows, size_t n,
                          const vmp_archive_change *changes, size_t n_changes)
{
    const double pw = W - LEFT - RIGHT, ph = H - TOP - BOTTOM;
    double ymax = 0.0, step, y;
    size_t i, k, xstep;
    int series;

    for (i = 0; i < n; i++) {
        ymax = fmax(ymax, 100.0 * share(rows[i].executing, rows[i].total_weight));
        ymax = fmax(ymax, 100.0 * share(rows[i].total, rows[i].total_weight));
    }
    step = nice_step(ymax > 0 ? ymax : 1.0, 5);
    ymax = step * ceil((ymax > 0 ? ymax : 1.0) / step);
#define X(i) (LEFT + (n > 1 ? pw * (double)(i) / (double)(n - 1) : pw / 2))
#define Y(v) (TOP + ph - ph * (v) / ymax)
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
            "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
            "<style>.self{stroke:#c0392b}.total{stroke:#2471a3}line.change{stroke:#7d3c98;"
            "stroke-dasharray:6 4}.run circle{fill-opacity:0.8}</style>\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n"
            "<text x=\"%d\" y=\"24\" font-size=\"16\">",
            W, H, W, H, LEFT);
    put_xml(f, function);
    fprintf(f, ": share of samples per run (%zu runs, %zu change%s)</text>\n", n, n_changes,
            n_changes == 1 ? "" : "s");
    /* axes and grid */
    for (y = 0; y <= ymax + step / 2; y += step)
        fprintf(f,
                "<line x1=\"%d\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#dddddd\"/>"
                "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g%%</text>\n",
                LEFT, LEFT + pw, Y(y), Y(y), LEFT - 6, Y(y) + 4, y);
    xstep = n > 10 ? (size_t)nice_step((double)n, 10) : 1;
    for (i = 0; i < n; i += xstep)
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%lld</text>\n", X(i),
                TOP + ph + 18, (long long)rows[i].run_id);
    fprintf(f,
            "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">run (time order)</text>\n"
            "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%.1f\" stroke=\"#000000\"/>"
            "<line x1=\"%d\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#000000\"/>\n",
            LEFT + pw / 2, H - 12, LEFT, LEFT, TOP, TOP + ph, LEFT, LEFT + pw, TOP + ph, TOP + ph);
    for (k = 0; k < n_changes; k++) {
        const vmp_archive_change *c = &changes[k];
        fprintf(f,
                "<g class=\"change\" data-run=\"%lld\"><line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" "
                "y2=\"%.1f\" class=\"change\"/><text x=\"%.1f\" y=\"%d\" fill=\"#7d3c98\">run "
                "%lld: self %+.2f, total %+.2f pp</text></g>\n",
                (long long)rows[c->at].run_id, X(c->at), X(c->at), TOP, TOP + ph, X(c->at) + 4,
                TOP + 12 + 14 * (int)(k % 3), (long long)rows[c->at].run_id,
                100.0 * (c->self[1] - c->self[0]), 100.0 * (c->total[1] - c->total[0]));
    }
    for (series = 0; series < 2; series++) {
        fprintf(f, "<polyline class=\"%s\" fill=\"none\" stroke-width=\"1.5\" points=\"",
                series ? "total" : "self");
        for (i = 0; i < n; i++) {
            uint64_t w = series ? rows[i].total : rows[i].executing;
            fprintf(f, "%s%.1f,%.1f", i ? " " : "", X(i),
                    Y(100.0 * share(w, rows[i].total_weight)));
        }
        fputs("\"/>\n", f);
    }
    for (i = 0; i < n; i++) {
        double s = 100.0 * share(rows[i].executing, rows[i].total_weight);
        double t = 100.0 * share(rows[i].total, rows[i].total_weight);
        fprintf(f, "<g class=\"run\"><title>run %lld (", (long long)rows[i].run_id);
        put_xml(f, rows[i].path);
        fprintf(f,
                "): self %.3f%%, total %.3f%%</title><circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" "
                "fill=\"#c0392b\"/><circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" "
                "fill=\"#2471a3\"/></g>\n",
                s, t, X(i), Y(s), X(i), Y(t));
    }
    fprintf(f,
            "<text x=\"%.1f\" y=\"%d\" fill=\"#c0392b\" text-anchor=\"end\">self (executing, as "
            "vmp report)</text>\n<text x=\"%.1f\" y=\"%d\" fill=\"#2471a3\" "
            "text-anchor=\"end\">total (on the stack)</text>\n</svg>\n",
            LEFT + pw, 24, LEFT + pw, 40);
#undef X
#undef Y
    return ferror(f) ? -1 : 0;
}
