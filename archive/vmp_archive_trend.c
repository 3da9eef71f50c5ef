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

typedef struct segmenter {
    vmp_run_weights *w; /* the runs with samples, in time order */
    size_t *index;      /* their indexes in the rows */
    double alpha;
    vmp_archive_change *out;
    size_t n_out, cap;
    int nomem;
} segmenter;

static void add_change(segmenter *s, const vmp_archive_change *c)
{
    if (s->n_out == s->cap && vmp_grow(&s->out, &s->cap, sizeof *s->out, 8) != 0) {
        s->nomem = 1;
        return;
    }
    s->out[s->n_out++] = *c;
}

/* Search runs [a, b) for the strongest split; recurse on both sides of a
 * significant one. */
static void segment(segmenter *s, size_t a, size_t b)
{
    vmp_archive_change best;
    double best_score = -1.0, best_p = 1.0;
    size_t i, tried = 0;

    if (b - a < 4 || s->nomem)
        return;
    memset(&best, 0, sizeof best);
    for (i = a + 2; i + 2 <= b; i++) {
        vmp_diffstat_row *rows = NULL;
        size_t n_rows = 0;
        if (vmp_diffstat(s->w + a, i - a, b - i, s->alpha, &rows, &n_rows) != VMP_OK) {
            s->nomem = 1;
            return;
        }
        tried++;
        if (n_rows == 1 && rows[0].score > best_score) {
            best_score = rows[0].score;
            best_p = fmin(rows[0].p_self, rows[0].p_total);
            best.at = i;
            best.self[0] = rows[0].self[0];
            best.self[1] = rows[0].self[1];
            best.total[0] = rows[0].total[0];
            best.total[1] = rows[0].total[1];
        }
        free(rows);
    }
    if (best_score < 0)
        return;
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

    memset(&s, 0, sizeof s);
    s.alpha = alpha;
    s.w = calloc(n ? n : 1, sizeof *s.w);
    s.index = malloc((n ? n : 1) * sizeof *s.index);
    if (!s.w || !s.index) {
        free(s.w);
        free(s.index);
        return -1;
    }
    for (i = 0; i < n; i++) {
        vmp_run_weights *w = &s.w[m];
        if (!rows[i].total_weight)
            continue;
        /* one function; vmp_diffstat() reads these without changing them */
        w->total = rows[i].total_weight;
        w->n = rows[i].executing || rows[i].total ? 1 : 0;
        w->names = (char **)&function;
        w->self = (uint64_t *)&rows[i].executing;
        w->inclusive = (uint64_t *)&rows[i].total;
        s.index[m++] = i;
    }
    segment(&s, 0, m);
    free(s.w);
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
