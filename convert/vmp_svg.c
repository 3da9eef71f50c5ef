/* SPDX-License-Identifier: MIT
 *
 * vmp_svg.c - self-contained interactive SVG flame graphs, plain and
 * differential, of the frame tree built by vmp_folded.c (samples of spec.md
 * §5.12 resolved as in vmp_analyze.h).
 *
 * Layout: the root ("all") spans the width; a node's children follow it one
 * row further from the root, left to right in name order, each as wide as its
 * inclusive weight; children narrower than the minimum width are merged into
 * one "..." frame after the others (dropped when even that is too narrow).
 * Rows have a fixed height, so the image grows with the depth of the stacks.
 * A first pass measures (depth, largest change), a second writes.
 *
 * Every frame is <g class="f" data-s data-n data-d> holding a <title> (name,
 * newline, figures), a <rect> and a <text> label; data-s is its start and
 * data-n its width in samples, data-d its depth.  The inline script (no
 * external resource) reads those to zoom, to label, and to sum the matched
 * share of a search as the union of matched intervals, so that a recursive
 * function's nested frames are not counted twice.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_flame_int.h"
#include "vmp_textout.h"

#define PAD      10.0
#define ROW      16
#define FONT_PX  12
#define CHAR_W   7.2 /* average advance at FONT_PX, used by C and script alike */
#define DIFF_MAX 210

/* ---- XML text ----------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (n bytes available) that XML
 * allows (not U+FFFE or U+FFFF: EF BF BE, EF BF BF), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    size_t len = vmp_utf8__seq(s, n);
    if (len == 3 && s[0] == 0xef && s[1] == 0xbf && (s[2] == 0xbe || s[2] == 0xbf))
        return 0;
    return len;
}

void vmp_flame__put_xml(FILE *out, const char *str, size_t max)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t n = strlen(str), i = 0;
    if (n > max)
        n = max;
    while (i < n) {
        unsigned char c = s[i];
        size_t len;
        switch (c) {
        case '&':
            fputs("&amp;", out);
            break;
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        case '\'':
            fputs("&apos;", out);
            break;
        default:
            if (c < 0x20 || c == 0x7f) {
                fputc(c == '\n' || c == '\t' ? c : '?', out);
            } else if (c < 0x80) {
                fputc(c, out);
            } else if ((len = utf8_len(s + i, n - i)) != 0) {
                fwrite(s + i, 1, len, out);
                i += len;
                continue;
            } else {
                fputs("\xef\xbf\xbd", out);
            }
        }
        i++;
    }
}

/* Bytes of `s` that hold its first `chars` characters. */
static size_t prefix_bytes(const char *s, size_t chars)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (p[i] && chars > 0) {
        i++;
        while ((p[i] & 0xc0) == 0x80)
            i++;
        chars--;
    }
    return i;
}

static size_t char_count(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

/* ---- colours ------------------------------------------------------------------- */

static unsigned clamp255(double v)
{
    return v < 0 ? 0 : v > 255 ? 255 : (unsigned)(v + 0.5);
}

static void category_rgb(char *buf, size_t size, int cat, double v)
{
    double r, g, b;
    switch (cat) {
    case VMP_FCAT_JIT: /* green */
        r = 50 + 70 * v, g = 185 + 50 * v, b = 50 + 50 * v;
        break;
    case VMP_FCAT_INTERP: /* yellow */
        r = 220 + 30 * v, g = 190 + 40 * v, b = 40 + 50 * v;
        break;
    case VMP_FCAT_INLINED: /* aqua */
        r = 60 + 50 * v, g = 190 + 45 * v, b = 200 + 40 * v;
        break;
    case VMP_FCAT_C: /* red to orange */
        r = 215 + 40 * v, g = 80 + 90 * v, b = 50 + 40 * v;
        break;
    case VMP_FCAT_GC: /* blue violet */
        r = 120 + 50 * v, g = 120 + 50 * v, b = 225 + 30 * v;
        break;
    case VMP_FCAT_SYMBOLIC: /* khaki: a function, tier unknown */
        r = 200 + 30 * v, g = 200 + 30 * v, b = 110 + 40 * v;
        break;
    case VMP_FCAT_CLASS: /* tan */
        r = 210 + 30 * v, g = 170 + 30 * v, b = 120 + 30 * v;
        break;
    case VMP_FCAT_UNKNOWN: /* grey */
        r = g = b = 165 + 40 * v;
        break;
    default: /* synthetic: lavender */
        r = 200 + 20 * v, g = 190 + 20 * v, b = 225 + 20 * v;
        break;
    }
    snprintf(buf, size, "rgb(%u,%u,%u)", clamp255(r), clamp255(g), clamp255(b));
}

static double name_hash01(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return (double)(h >> 16 & 0xffff) / 65535.0;
}

static const char *const cat_names[VMP_FCAT_COUNT] = {"JIT-compiled",
                                                      "interpreted",
                                                      "inlined",
                                                      "C / VM",
                                                      "GC",
                                                      "unknown",
                                                      "thread, state, failed",
                                                      "class (allocated, locked)",
                                                      "function (tier unknown)"};

/* ---- layout and output ---------------------------------------------------------- */

typedef struct svgctx {
    vmp_flame *f;
    FILE *out;
    const vmp_flame_svg_options *o;
    int emit;
    int col;      /* the column frames are sized by */
    double scale; /* pixels per sample */
    double width, min_width;
    uint32_t max_depth;
    double max_change; /* diff: largest |change of share| drawn */
    double header;
    uint64_t frames;
    int (*colour_if)(const char *name, void *arg); /* NULL: colour every frame */
    void *colour_arg;
    int has_class; /* a class frame is drawn: the legend names its colour */
} svgctx;

static double change_of(const svgctx *c, uint64_t base, uint64_t now)
{
    const vmp_flame *f = c->f;
    double a = f->totals[0] ? (double)base / (double)f->totals[0] : 0.0;
    double b = f->totals[1] ? (double)now / (double)f->totals[1] : 0.0;
    return b - a;
}

static double row_y(const svgctx *c, uint32_t depth)
{
    if (c->o->icicle)
        return c->header + (double)depth * ROW;
    return c->header + (double)(c->max_depth - depth) * ROW;
}

static void put_pct(FILE *out, uint64_t n, uint64_t total)
{
    fprintf(out, "%.2f%%", total ? 100.0 * (double)n / (double)total : 0.0);
}

/* One frame.  `node` is UINT32_MAX for a merged "..." of `merged` frames
 * whose base weight is `base`. */
static void frame(svgctx *c, uint32_t node, uint32_t depth, uint64_t start, uint64_t n,
                  uint64_t base, uint64_t merged)
{
    vmp_flame *f = c->f;
    FILE *out = c->out;
    const char *name = node == UINT32_MAX ? "..." : f->names[f->nodes[node].name];
    double x = PAD + (double)start * c->scale, w = (double)n * c->scale, y;
    char fill[40];
    size_t chars;

    c->frames++;
    if (depth > c->max_depth)
        c->max_depth = depth;
    if (c->o->diff) {
        double ch = fabs(change_of(c, base, n));
        if (ch > c->max_change)
            c->max_change = ch;
    }
    if (!c->emit)
        return;
    y = row_y(c, depth);
    if (c->o->diff) {
        double ch = change_of(c, base, n), v = c->max_change > 0 ? fabs(ch) / c->max_change : 0;
        unsigned fade = clamp255(255 - DIFF_MAX * v);
        if (c->colour_if && (node == UINT32_MAX || !c->colour_if(name, c->colour_arg)))
            snprintf(fill, sizeof fill, "rgb(225,225,225)");
        else if (ch > 0)
            snprintf(fill, sizeof fill, "rgb(255,%u,%u)", fade, fade);
        else if (ch < 0)
            snprintf(fill, sizeof fill, "rgb(%u,%u,255)", fade, fade);
        else
            snprintf(fill, sizeof fill, "rgb(250,250,250)");
    } else if (node == UINT32_MAX) {
        snprintf(fill, sizeof fill, "rgb(200,200,200)");
    } else {
        const vmp_fnode *nd = &f->nodes[node];
        int cat = nd->cat;
        if (cat == VMP_FCAT_C && f->gc[2 * node + c->col] * 2 > f->total[2 * node + c->col])
            cat = VMP_FCAT_GC;
        category_rgb(fill, sizeof fill, cat, name_hash01(name));
    }
    fprintf(out, "<g class=\"f\" data-s=\"%llu\" data-n=\"%llu\" data-d=\"%u\"><title>",
            (unsigned long long)start, (unsigned long long)n, depth);
    vmp_flame__put_xml(out, name, SIZE_MAX);
    if (node == UINT32_MAX)
        fprintf(out, "\n%llu frames too narrow to draw: %llu samples, ", (unsigned long long)merged,
                (unsigned long long)n);
    else
        fprintf(out, "\n%llu samples, ", (unsigned long long)n);
    put_pct(out, n, f->totals[c->col]);
    if (c->o->diff) {
        fprintf(out, " (base: %llu samples, ", (unsigned long long)base);
        put_pct(out, base, f->totals[0]);
        fprintf(out, "; change %+.2f pp)", 100.0 * change_of(c, base, n));
    }
    fprintf(out,
            "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"%s\" "
            "rx=\"2\" ry=\"2\"/><text x=\"%.2f\" y=\"%.1f\">",
            x, y, w, ROW - 1, fill, x + 3, y + 12);
    chars = w > 6 ? (size_t)((w - 6) / CHAR_W) : 0;
    if (chars >= 3) {
        if (char_count(name) <= chars) {
            vmp_flame__put_xml(out, name, SIZE_MAX);
        } else {
            vmp_flame__put_xml(out, name, prefix_bytes(name, chars - 2));
            fputs("..", out);
        }
    }
    fputs("</text></g>\n", out);
}

/* A node being drawn: its next child, where that child starts, and the
 * children too narrow to draw, merged into one frame after the others. */
typedef struct draw_item {
    uint32_t node, k;
    uint64_t x, narrow, narrow_base, merged;
} draw_item;

/* Draw the tree depth first, a node before its children, with an explicit
 * stack: a stack of a million frames costs heap, not the C stack. */
static vmp_status draw(svgctx *c)
{
    vmp_flame *f = c->f;
    draw_item *stk;
    size_t n = 1, cap = 64;

    stk = malloc(cap * sizeof *stk);
    if (!stk)
        return VMP_ERR_NOMEM;
    frame(c, 0, f->nodes[0].depth, 0, f->total[c->col], f->total[0], 0);
    memset(&stk[0], 0, sizeof stk[0]);
    stk[0].k = f->kid_off[0];
    while (n) {
        draw_item *it = &stk[n - 1];
        if (it->k < f->kid_off[it->node + 1]) {
            uint32_t kid = f->kids[it->k++];
            uint64_t w = f->total[2 * kid + c->col], start = it->x;
            if (!w)
                continue;
            if ((double)w * c->scale < c->min_width) {
                it->narrow += w;
                it->narrow_base += f->total[2 * kid];
                it->merged++;
                continue;
            }
            it->x += w;
            frame(c, kid, f->nodes[kid].depth, start, w, f->total[2 * kid], 0);
            if (n == cap) {
                draw_item *grown = realloc(stk, 2 * cap * sizeof *stk);
                if (!grown) {
                    free(stk);
                    return VMP_ERR_NOMEM;
                }
                stk = grown;
                cap *= 2;
            }
            memset(&stk[n], 0, sizeof stk[n]);
            stk[n].node = kid;
            stk[n].k = f->kid_off[kid];
            stk[n].x = start;
            n++;
            continue;
        }
        if (it->merged && (double)it->narrow * c->scale >= c->min_width)
            frame(c, UINT32_MAX, f->nodes[it->node].depth + 1, it->x, it->narrow, it->narrow_base,
                  it->merged);
        n--;
    }
    free(stk);
    return VMP_OK;
}

/* The script, one line per string (C compilers need not take long strings). */
static const char *const script[] = {
    "(function () {\n",
    "\"use strict\";\n",
    "var svg = document.documentElement, W = +svg.getAttribute(\"data-w\");\n",
    "var PAD = 10, CW = 7.2, frames = [], total = 0, searching = null;\n",
    "function $(id) { return document.getElementById(id); }\n",
    "var details = $(\"details\"), matched = $(\"matched\"), reset = $(\"reset\"),\n",
    "    searchBtn = $(\"search\");\n",
    "function find(el) {\n",
    "  for (; el && el !== svg; el = el.parentNode)\n",
    "    if (el.vmpFrame !== undefined) return frames[el.vmpFrame];\n",
    "  return null;\n",
    "}\n",
    "function label(f, w) {\n",
    "  var c = Math.floor((w - 6) / CW), s = f.name;\n",
    "  if (c < 3) s = \"\"; else if (s.length > c) s = s.substring(0, c - 2) + \"..\";\n",
    "  f.t.textContent = s;\n",
    "}\n",
    "function place(f, x, w) {\n",
    "  f.r.setAttribute(\"x\", x.toFixed(2));\n",
    "  f.r.setAttribute(\"width\", w.toFixed(2));\n",
    "  f.t.setAttribute(\"x\", (x + 3).toFixed(2));\n",
    "  label(f, w);\n",
    "}\n",
    "function unzoom() {\n",
    "  for (var i = 0; i < frames.length; i++) {\n",
    "    var f = frames[i];\n",
    "    place(f, f.x0, f.w0);\n",
    "    f.g.style.display = \"\";\n",
    "    f.g.removeAttribute(\"opacity\");\n",
    "  }\n",
    "  reset.setAttribute(\"opacity\", \"0\");\n",
    "}\n",
    "function zoom(z) {\n",
    "  var scale = (W - 2 * PAD) / z.n;\n",
    "  for (var i = 0; i < frames.length; i++) {\n",
    "    var f = frames[i], show = true;\n",
    "    if (f.d < z.d) {\n",
    "      if (f.s <= z.s && f.s + f.n >= z.s + z.n) {\n",
    "        place(f, PAD, W - 2 * PAD);\n",
    "        f.g.setAttribute(\"opacity\", \"0.6\");\n",
    "      } else show = false;\n",
    "    } else if (f.s >= z.s && f.s + f.n <= z.s + z.n && (f.d > z.d || f === z)) {\n",
    "      place(f, PAD + (f.s - z.s) * scale, f.n * scale);\n",
    "      f.g.removeAttribute(\"opacity\");\n",
    "    } else show = false;\n",
    "    f.g.style.display = show ? \"\" : \"none\";\n",
    "  }\n",
    "  reset.setAttribute(\"opacity\", z.d > 0 ? \"1\" : \"0\");\n",
    "}\n",
    "function clearSearch() {\n",
    "  for (var i = 0; i < frames.length; i++)\n",
    "    frames[i].r.setAttribute(\"fill\", frames[i].fill);\n",
    "  matched.textContent = \" \";\n",
    "  searchBtn.textContent = \"Search\";\n",
    "  searching = null;\n",
    "}\n",
    "function search(term) {\n",
    "  var re = null, iv = [], sum = 0, end = -1, i;\n",
    "  try { re = new RegExp(term); } catch (e) { re = null; }\n",
    "  for (i = 0; i < frames.length; i++) {\n",
    "    var f = frames[i];\n",
    "    var hit = f.d > 0 && !f.merged &&\n",
    "        (re ? re.test(f.name) : f.name.indexOf(term) >= 0);\n",
    "    f.r.setAttribute(\"fill\", hit ? \"rgb(230,0,230)\" : f.fill);\n",
    "    if (hit) iv.push([f.s, f.s + f.n]);\n",
    "  }\n",
    "  /* union of the matched intervals: nested (recursive) matches count once */\n",
    "  iv.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });\n",
    "  for (i = 0; i < iv.length; i++) {\n",
    "    if (iv[i][0] >= end) { sum += iv[i][1] - iv[i][0]; end = iv[i][1]; }\n",
    "    else if (iv[i][1] > end) { sum += iv[i][1] - end; end = iv[i][1]; }\n",
    "  }\n",
    "  matched.textContent = \"Matched: \" + (total ? (100 * sum / total).toFixed(2) : \"0.00\") "
    "+\n",
    "      \"% (\" + sum + \" samples, \" + iv.length + \" frames)\";\n",
    "  searchBtn.textContent = \"Reset search\";\n",
    "  searching = term;\n",
    "}\n",
    "var gs = svg.getElementsByTagName(\"g\");\n",
    "for (var i = 0; i < gs.length; i++) {\n",
    "  var g = gs[i];\n",
    "  if (g.getAttribute(\"class\") !== \"f\") continue;\n",
    "  var r = g.getElementsByTagName(\"rect\")[0], tip = "
    "g.getElementsByTagName(\"title\")[0].textContent;\n",
    "  var f = {g: g, r: r, t: g.getElementsByTagName(\"text\")[0], tip: tip,\n",
    "      name: tip.split(\"\\n\")[0], s: +g.getAttribute(\"data-s\"), n: "
    "+g.getAttribute(\"data-n\"),\n",
    "      d: +g.getAttribute(\"data-d\"), fill: r.getAttribute(\"fill\"),\n",
    "      x0: +r.getAttribute(\"x\"), w0: +r.getAttribute(\"width\")};\n",
    "  f.merged = f.name === \"...\" && tip.indexOf(\"too narrow\") >= 0;\n",
    "  if (f.d === 0) total = f.n;\n",
    "  g.vmpFrame = frames.length;\n",
    "  frames.push(f);\n",
    "}\n",
    "svg.addEventListener(\"click\", function (e) {\n",
    "  var f = find(e.target);\n",
    "  if (f) zoom(f);\n",
    "});\n",
    "svg.addEventListener(\"mouseover\", function (e) {\n",
    "  var f = find(e.target);\n",
    "  if (f) details.textContent = f.tip.replace(\"\\n\", \": \");\n",
    "});\n",
    "svg.addEventListener(\"mouseout\", function (e) {\n",
    "  if (find(e.target)) details.textContent = \" \";\n",
    "});\n",
    "reset.addEventListener(\"click\", function (e) { e.stopPropagation(); unzoom(); });\n",
    "searchBtn.addEventListener(\"click\", function (e) {\n",
    "  e.stopPropagation();\n",
    "  if (searching !== null) { clearSearch(); return; }\n",
    "  var t = prompt(\"Search frames (regular expression):\", \"\");\n",
    "  if (t) search(t);\n",
    "});\n",
    "var m = /[?&]s=([^&]*)/.exec(document.location ? document.location.search : \"\");\n",
    "if (m) search(decodeURIComponent(m[1].replace(/\\+/g, \" \")));\n",
    "})();\n",
    NULL};

static void legend(svgctx *c, double y)
{
    FILE *out = c->out;
    double x = PAD;
    int i;
    char fill[40];
    if (c->o->diff) {
        fprintf(out,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"rgb(255,80,80)\"/>"
                "<text x=\"%.1f\" y=\"%.1f\">share grew</text>\n",
                x, y - 10, x + 16, y);
        x += 100;
        fprintf(out,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"rgb(80,80,255)\"/>"
                "<text x=\"%.1f\" y=\"%.1f\">share shrank</text>\n",
                x, y - 10, x + 16, y);
        x += 110;
        fprintf(out,
                "<text x=\"%.1f\" y=\"%.1f\">(deeper colour = larger change of inclusive "
                "share; the largest is %.2f pp; widths are NEW's samples%s)</text>\n",
                x, y, 100.0 * c->max_change, c->colour_if ? "; grey: no significant change" : "");
        return;
    }
    for (i = 0; i < VMP_FCAT_COUNT; i++) {
        if (i == VMP_FCAT_CLASS && !c->has_class)
            continue;
        category_rgb(fill, sizeof fill, i, 0.5);
        fprintf(out,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
                x, y - 10, fill, x + 16, y, cat_names[i]);
        x += 26 + CHAR_W * (double)strlen(cat_names[i]);
    }
}

static vmp_status write_svg(vmp_flame *f, FILE *out, const vmp_flame_svg_options *opts,
                            int (*colour_if)(const char *name, void *arg), void *colour_arg);

vmp_status vmp_flame_write_svg(vmp_flame *f, FILE *out, const vmp_flame_svg_options *opts)
{
    return write_svg(f, out, opts, NULL, NULL);
}

vmp_status vmp_flame_write_svg_marked(vmp_flame *f, FILE *out, const vmp_flame_svg_options *opts,
                                      int (*colour_if)(const char *name, void *arg), void *arg)
{
    vmp_flame_svg_options o = VMP_FLAME_SVG_OPTIONS_INIT;
    if (!colour_if || (opts && opts->version != VMP_FLAME_SVG_OPTIONS_VERSION))
        return VMP_ERR_INVALID_ARG;
    if (opts)
        o = *opts;
    o.diff = 1;
    return write_svg(f, out, &o, colour_if, arg);
}

static vmp_status write_svg(vmp_flame *f, FILE *out, const vmp_flame_svg_options *opts,
                            int (*colour_if)(const char *name, void *arg), void *colour_arg)
{
    static const vmp_flame_svg_options defaults = VMP_FLAME_SVG_OPTIONS_INIT;
    svgctx c;
    vmp_status st;
    double height, title_y = 24;
    uint64_t total;
    const char *title;
    size_t i;

    if (!f || !out || (opts && opts->version != VMP_FLAME_SVG_OPTIONS_VERSION))
        return VMP_ERR_INVALID_ARG;
    if (!opts)
        opts = &defaults;
    if (opts->diff && (!f->have[0] || !f->have[1]))
        return VMP_ERR_INVALID_ARG;
    st = vmp_flame__finalize(f);
    if (st != VMP_OK)
        return st;
    c = (svgctx){.f = f, .out = out, .o = opts, .colour_if = colour_if, .colour_arg = colour_arg};
    for (size_t k = 0; k < f->n_nodes && !c.has_class; k++)
        c.has_class = f->nodes[k].cat == VMP_FCAT_CLASS;
    c.col = opts->diff || !f->have[0] ? 1 : 0;
    c.width = opts->width ? (double)opts->width : 1200.0;
    if (c.width < 200)
        c.width = 200;
    c.min_width = opts->min_width > 0 ? opts->min_width : 0.1;
    total = f->total[c.col];
    c.scale = (c.width - 2 * PAD) / (double)(total ? total : 1);
    c.header = opts->subtitle ? 74 : 56;
    title = opts->title ? opts->title : opts->diff ? "Differential flame graph" : "Flame graph";

    /* pass 1: measure */
    st = draw(&c);
    if (st != VMP_OK)
        return st;
    height = c.header + (double)(c.max_depth + 1) * ROW + 30;

    fprintf(out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
            "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
            "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" data-w=\"%.0f\">\n"
            "<style><![CDATA[\n"
            "text { font-family: Verdana, DejaVu Sans, sans-serif; font-size: %dpx; fill: #000; }\n"
            "#title { font-size: 17px; }\n"
            "#reset, #search { cursor: pointer; fill: #333; }\n"
            "g.f { cursor: pointer; }\n"
            "g.f:hover rect { stroke: #000; stroke-width: 0.6; }\n"
            "]]></style>\n"
            "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#f4f4f0\"/>\n",
            c.width, height, c.width, height, c.width, FONT_PX, c.width, height);
    fprintf(out, "<text id=\"title\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", c.width / 2,
            title_y);
    vmp_flame__put_xml(out, title, SIZE_MAX);
    fputs("</text>\n", out);
    if (opts->subtitle) {
        fprintf(out, "<text id=\"subtitle\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
                c.width / 2, title_y + 18);
        vmp_flame__put_xml(out, opts->subtitle, SIZE_MAX);
        fputs("</text>\n", out);
    }
    fprintf(out,
            "<text id=\"reset\" x=\"%.1f\" y=\"%.1f\" opacity=\"0\">Reset Zoom</text>\n"
            "<text id=\"search\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">Search</text>\n",
            PAD, title_y, c.width - PAD, title_y);
    legend(&c, c.header - 12);
    fputs("<g id=\"frames\">\n", out);
    c.emit = 1;
    c.frames = 0;
    st = draw(&c);
    if (st != VMP_OK)
        return st;
    fputs("</g>\n", out);
    fprintf(out,
            "<text id=\"details\" x=\"%.1f\" y=\"%.1f\"> </text>\n"
            "<text id=\"matched\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\"> </text>\n",
            PAD, height - 10, c.width - PAD, height - 10);
    fputs("<script type=\"text/ecmascript\"><![CDATA[\n", out);
    for (i = 0; script[i]; i++)
        fputs(script[i], out);
    fputs("]]></script>\n</svg>\n", out);
    return ferror(out) ? VMP_ERR_IO : VMP_OK;
}
