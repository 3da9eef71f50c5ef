/* SPDX-License-Identifier: MIT
 *
 * vmp_cmd_diff.c - `vmp diff`: how the profile of one run differs from
 * another's, per function, as two-column folded stacks or as a differential
 * flame graph (samples of spec.md §5.12 resolved as in vmp_analyze.h,
 * compared by convert/vmp_convert.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_cli.h"
#include "vmp_convert.h"

static const char diff_synopsis[] =
    "usage: vmp diff [options] BASE NEW\n"
    "       vmp diff [options] BASE... -- NEW...\n"
    "\n"
    "Compare the profile NEW with the profile BASE (either may be '-', standard\n"
    "input, but not both).  Functions are matched by name (the names of\n"
    "`vmp flame`).\n"
    "\n"
    "Text output (the default): one line per function, sorted by the magnitude\n"
    "of its change (the larger of the two changes), then by name:\n"
    "  d_self d_total self_base self_new total_base total_new\n"
    "      n_self_base n_self_new n_total_base n_total_new function\n"
    "where self is the share of samples in which the function was executing\n"
    "(the innermost frame), total the share in which it was anywhere on the\n"
    "stack (once per sample, even when recursive), both in percent of the\n"
    "file's total sample weight (failed samples included, as frames\n"
    "\"[failed: <reason>]\"); d_ are NEW's share minus BASE's in percentage\n"
    "points, and n_ the sample weights.  A profile compared with itself gives\n"
    "0.00 on every line.\n"
    "\n"
    "options:\n";

static const char diff_epilogue[] =
    "Text lines: sig (** self and total, *s self, *t total significant),\n"
    "d_self [interval] d_total [interval] (percentage points), self_b self_n\n"
    "total_b total_n (percent), q_self q_total (adjusted p-values), function;\n"
    "first the functions whose self share changed significantly, then those\n"
    "whose total share alone did, then the rest, each by decreasing strength\n"
    "of evidence.\n"
    "\n"
    "Exit status: 0 success, 1 unreadable input or write error, 2 usage error.\n";

enum {
    OPT_NORMALIZE = VMP_CLI_OPT_END,
    OPT_FOLDED,
    OPT_FORMAT,
    OPT_ALPHA,
    OPT_RANGES
};

static const vmp_cli_option diff_options[] = {
    {"normalize", OPT_NORMALIZE, NULL, NULL,
     "scale BASE's sample weights to NEW's total (counts in\n"
     "the text and folded outputs; shares are unchanged)"},
    {"folded", OPT_FOLDED, NULL, NULL,
     "write two-column folded stacks instead:\n"
     "  frame;frame;... count_base count_new\n"
     "(what difffolded.pl writes and flamegraph.pl draws as\n"
     "a differential flame graph)"},
    {"format", OPT_FORMAT, "FMT", NULL,
     "text (default), folded, or svg; an output file whose\n"
     "name ends in .svg implies svg"},
    VMP_CLI_OPTION_OUTPUT,
    {NULL, 0, NULL, "--thread-root, --state, --units, --tiers, --vm-frames",
     "frames as for `vmp flame`"},
    VMP_CLI_OPTION_THREAD_ROOT(NULL),
    VMP_CLI_OPTION_STATE(NULL),
    VMP_CLI_OPTION_UNITS(NULL),
    VMP_CLI_OPTION_TIERS(NULL),
    {"vm-frames", VMP_CLI_OPT_VM_FRAMES, NULL, NULL, NULL},
    VMP_CLI_OPTION_TITLE("SVG title (default \"Differential flame graph: BASE ->\n"
                         "NEW\")"),
    {NULL, 0, NULL, "--icicle, --width PX, --min-width PX", "SVG layout as for `vmp flame`"},
    VMP_CLI_OPTION_ICICLE(NULL),
    VMP_CLI_OPTION_WIDTH(NULL),
    VMP_CLI_OPTION_MIN_WIDTH(NULL),
    {"no-group-hidden", VMP_CLI_OPT_NO_GROUP_HIDDEN, NULL, NULL,
     "as for `vmp flame` (grouped names carry no count\n"
     "here, so that the two files' groups compare)"},
    {"kind", VMP_CLI_OPT_KIND, "NAME", NULL,
     "compare the samples of one kind (spec.md 5.15) of\n"
     "both files: cpu (the default), alloc, live, lock"},
    VMP_CLI_OPTION_HELP,
    {NULL, 0, NULL, NULL,
     "\n"
     "The differential flame graph has the layout of NEW's flame graph (frame\n"
     "widths are NEW's samples; stacks only in BASE are not drawn) and colours\n"
     "each frame by the change of its inclusive share: red grew, blue shrank,\n"
     "white unchanged, deeper for larger changes (relative to the largest).\n"
     "Hover, zoom and search work as in `vmp flame`.\n"
     "\n"
     "Repeated runs (the second form: one or more profiles on each side of --,\n"
     "options before the --): which changes are real and which are noise.  Per\n"
     "function: the mean self and total share of each side's runs, the change\n"
     "with its (1 - alpha) interval, accounting for the sampling noise within a\n"
     "run and the spread between runs, and whether it is significant at\n"
     "--alpha after the Benjamini-Hochberg correction over the functions\n"
     "compared (the model: docs/diff-statistics.md).  With one run on a side\n"
     "the run-to-run noise is unknown and sampling noise alone is used (the\n"
     "output says so).  Options of this form:\n"},
    {"alpha", OPT_ALPHA, "A", NULL, "significance level, 0 < A < 1 (default 0.01)"},
    {"ranges", OPT_RANGES, NULL, NULL, "also compare each bytecode range (\"name A->B\")"},
    {NULL, 0, NULL, "--format FMT",
     "text (default), csv, json, or svg: the differential\n"
     "flame graph of the pooled runs where only functions\n"
     "with a significant change are coloured; an output\n"
     "file whose name ends in .svg implies svg"},
};

static const vmp_cli_command diff_command = VMP_CLI_COMMAND(diff, 20);

static double pct(uint64_t w, uint64_t total)
{
    return total ? 100.0 * (double)w / (double)total : 0.0;
}

/* "+0.00" for no change at all, never "-0.00". */
static double pp(double change)
{
    double v = 100.0 * change;
    return fabs(v) < 0.005 ? 0.0 : v;
}

static vmp_status write_text(vmp_flame *f, FILE *out, const char *base, const char *new_path,
                             double scale)
{
    vmp_flame_delta *d = NULL;
    size_t n = 0, i;
    uint64_t t0 = vmp_flame_total(f, 0), t1 = vmp_flame_total(f, 1);
    vmp_status st = vmp_flame_diff(f, &d, &n);
    if (st != VMP_OK)
        return st;
    fprintf(out, "# base: %s (%llu samples%s)\n# new:  %s (%llu samples)\n", base,
            (unsigned long long)t0, scale != 1.0 ? ", counts normalized to new's total" : "",
            new_path, (unsigned long long)t1);
    fprintf(out, "# %6s %7s %7s %7s %7s %7s %10s %10s %10s %10s  %s\n", "d_self", "d_total",
            "self_b", "self_n", "total_b", "total_n", "n_self_b", "n_self_n", "n_total_b",
            "n_total_n", "function");
    for (i = 0; i < n; i++) {
        const vmp_flame_delta *e = &d[i];
        fprintf(out, "%+8.2f %+7.2f %7.2f %7.2f %7.2f %7.2f %10llu %10llu %10llu %10llu  %s\n",
                pp(e->self_change), pp(e->total_change), pct(e->self[0], t0), pct(e->self[1], t1),
                pct(e->total[0], t0), pct(e->total[1], t1),
                (unsigned long long)llround((double)e->self[0] * scale),
                (unsigned long long)e->self[1],
                (unsigned long long)llround((double)e->total[0] * scale),
                (unsigned long long)e->total[1], e->name);
    }
    free(d);
    return VMP_OK;
}

/* ---- repeated runs: vmp diff BASE... -- NEW... ------------------------------- */

typedef struct sig_names {
    const char **names; /* sorted */
    size_t n;
} sig_names;

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int is_significant(const char *name, void *arg)
{
    const sig_names *s = arg;
    return bsearch(&name, s->names, s->n, sizeof *s->names, name_cmp) != NULL;
}

/* Read `path` into run weights (a truncated file counts with a warning). */
static int read_run(vmp_run_weights *w, const char *cmd, const char *path,
                    const vmp_flame_options *fo)
{
    vmp_reader *r;
    vmp_status st;
    if (vmp_cli_open_reader(&r, cmd, path) != VMP_EXIT_OK)
        return VMP_EXIT_FAIL;
    st = vmp_run_weights_read(w, r, fo);
    if (st == VMP_ERR_NOMEM || (st < 0 && w->total == 0)) {
        vmp_cli_fail(cmd, "%s", st == VMP_ERR_NOMEM ? "out of memory" : vmp_reader_errmsg(r));
        vmp_reader_close(r);
        return VMP_EXIT_FAIL;
    }
    if (st < 0)
        fprintf(stderr, "vmp %s: warning: %s (the samples before it are used)\n", cmd,
                vmp_reader_errmsg(r));
    vmp_reader_close(r);
    return VMP_EXIT_OK;
}

static vmp_status write_runs_svg(FILE *out, char **paths, size_t n_base, size_t n_new,
                                 const vmp_flame_options *fo, vmp_flame_svg_options *so,
                                 const vmp_diffstat_row *rows, size_t n_rows)
{
    vmp_flame *f = NULL;
    sig_names sn = {NULL, 0};
    vmp_status st;
    size_t i;

    sn.names = malloc((n_rows ? n_rows : 1) * sizeof *sn.names);
    if (!sn.names)
        return VMP_ERR_NOMEM;
    for (i = 0; i < n_rows; i++)
        if (rows[i].significant)
            sn.names[sn.n++] = rows[i].name;
    qsort(sn.names, sn.n, sizeof *sn.names, name_cmp);
    st = vmp_flame_create(&f, fo);
    for (i = 0; st == VMP_OK && i < n_base + n_new; i++) {
        vmp_reader *r = NULL;
        if (vmp_reader_open_file(&r, paths[i], NULL) < 0) {
            vmp_reader_close(r);
            st = VMP_ERR_IO;
            break;
        }
        st = vmp_flame_read_more(f, r, i < n_base ? 0 : 1);
        if (st != VMP_ERR_NOMEM && st != VMP_ERR_INVALID_ARG)
            st = VMP_OK; /* a truncated file draws what it has, as read_run() used */
        vmp_reader_close(r);
    }
    if (st == VMP_OK) {
        if (!so->title)
            so->title = "Differential flame graph of repeated runs (significant changes coloured)";
        st = vmp_flame_write_svg_marked(f, out, so, is_significant, &sn);
    }
    vmp_flame_free(f);
    free(sn.names);
    return st;
}

/* The options of either form. */
typedef struct diff_opts {
    const char *outpath, *format;
    double alpha;
    int normalize, folded;
    vmp_flame_options fo;
    vmp_flame_svg_options so;
} diff_opts;

/* Parse the options in argv[1..argc): those of repeated runs (`runs`, the
 * options before `--`) or of two files.  Returns -1 to go on, else the exit
 * status (after --help or a usage error). */
static int parse_options(int argc, char **argv, int runs, diff_opts *o)
{
    const char *cmd = "diff";
    vmp_cli_parser p;
    int c;

    memset(o, 0, sizeof *o);
    o->alpha = 0.01;
    o->fo = (vmp_flame_options)VMP_FLAME_OPTIONS_INIT;
    o->so = (vmp_flame_svg_options)VMP_FLAME_SVG_OPTIONS_INIT;
    o->so.width = 1200;
    o->so.min_width = 0.1;
    /* hidden classes grouped by name alone: the counts of two runs differ */
    vmp_analysis_add_default_flags(VMP_ANALYSIS_GROUP_NO_COUNT);
    vmp_cli_begin(&p, &diff_command, argc, argv);
    while ((c = vmp_cli_next(&p)) > 0) {
        if ((c == OPT_ALPHA || c == OPT_RANGES) && !runs)
            return vmp_cli_usage_error(cmd, "%s compares repeated runs (BASE... -- NEW...)",
                                       c == OPT_ALPHA ? "--alpha" : "--ranges");
        if ((c == OPT_NORMALIZE || c == OPT_FOLDED) && runs)
            return vmp_cli_usage_error(cmd, "%s applies to two files (BASE NEW)",
                                       c == OPT_NORMALIZE ? "--normalize" : "--folded");
        switch (c) {
        case OPT_ALPHA:
            if (vmp_cli_parse_alpha(cmd, p.arg, &o->alpha) != VMP_EXIT_OK)
                return VMP_EXIT_USAGE;
            break;
        case OPT_RANGES:
            o->fo.flags |= VMP_FLAME_RANGES;
            break;
        case OPT_NORMALIZE:
            o->normalize = 1;
            break;
        case OPT_FOLDED:
            o->folded = 1;
            break;
        case OPT_FORMAT:
            o->format = p.arg;
            break;
        default:
            if (vmp_cli_flame_option(cmd, c, p.arg, &o->fo, &o->so) != VMP_EXIT_OK)
                return VMP_EXIT_USAGE;
            break;
        }
    }
    o->outpath = p.output;
    return c < 0 ? p.exit : -1;
}

static int diff_runs(int argc, char **argv, int sep)
{
    const char *cmd = "diff";
    diff_opts o;
    vmp_run_weights *runs = NULL;
    vmp_diffstat_row *rows = NULL;
    char **paths = NULL;
    size_t n_base, n_new, n_rows = 0, i, stdin_uses = 0;
    vmp_cli_output out;
    vmp_status st;
    int rc = parse_options(sep, argv, 1, &o), kind;
    const char *outpath = o.outpath, *format = o.format;
    double alpha = o.alpha;
    vmp_flame_options fo = o.fo;
    vmp_flame_svg_options so = o.so;

    if (rc >= 0)
        return rc;
    rc = VMP_EXIT_OK;
    if (format && strcmp(format, "text") && strcmp(format, "csv") && strcmp(format, "json") &&
        strcmp(format, "svg"))
        return vmp_cli_usage_error(cmd, "unknown format '%s' (text, csv, json or svg)", format);
    kind = !format                   ? (vmp_cli_ends_with_svg(outpath) ? 3 : VMP_CLI_DIFFSTAT_TEXT)
           : !strcmp(format, "csv")  ? VMP_CLI_DIFFSTAT_CSV
           : !strcmp(format, "json") ? VMP_CLI_DIFFSTAT_JSON
           : !strcmp(format, "svg")  ? 3
                                     : VMP_CLI_DIFFSTAT_TEXT;
    n_base = (size_t)(sep - optind);
    n_new = (size_t)(argc - sep - 1);
    if (n_base == 0)
        return vmp_cli_usage_error(cmd, "no BASE profile before --");
    if (n_new == 0)
        return vmp_cli_usage_error(cmd, "no NEW profile after --");
    paths = malloc((n_base + n_new) * sizeof *paths);
    runs = calloc(n_base + n_new, sizeof *runs);
    if (!paths || !runs) {
        free(paths);
        free(runs);
        return vmp_cli_fail(cmd, "out of memory");
    }
    for (i = 0; i < n_base; i++)
        paths[i] = argv[optind + (int)i];
    for (i = 0; i < n_new; i++)
        paths[n_base + i] = argv[sep + 1 + (int)i];
    for (i = 0; i < n_base + n_new; i++) {
        if (paths[i][0] == '-' && paths[i][1] != '\0') {
            vmp_cli_usage_error(cmd, "'%s' after --: options go before the BASE files", paths[i]);
            free(paths);
            free(runs);
            return VMP_EXIT_USAGE;
        }
        stdin_uses += strcmp(paths[i], "-") == 0;
    }
    if (stdin_uses > 1 || (stdin_uses && kind == 3)) {
        free(paths);
        free(runs);
        return vmp_cli_usage_error(cmd, "standard input ('-') can be read once, and not for svg");
    }
    for (i = 0; rc == VMP_EXIT_OK && i < n_base + n_new; i++)
        rc = read_run(&runs[i], cmd, paths[i], &fo);
    if (rc == VMP_EXIT_OK) {
        st = vmp_diffstat(runs, n_base, n_new, alpha, &rows, &n_rows);
        if (st != VMP_OK)
            rc = vmp_cli_fail(cmd, "out of memory");
    }
    if (rc == VMP_EXIT_OK)
        rc = vmp_cli_output_open(&out, cmd, outpath);
    if (rc == VMP_EXIT_OK) {
        st = VMP_OK;
        if (kind == 3)
            st = write_runs_svg(out.f, paths, n_base, n_new, &fo, &so, rows, n_rows);
        else
            vmp_cli_diffstat_print(out.f, rows, n_rows, (const char *const *)paths, n_base,
                                   (const char *const *)paths + n_base, n_new, alpha, kind);
        rc = vmp_cli_flame_finish(&out, cmd, st);
    }
    for (i = 0; i < n_base + n_new; i++)
        vmp_run_weights_free(&runs[i]);
    free(runs);
    free(rows);
    free(paths);
    return rc;
}

int vmp_cmd_diff(int argc, char **argv)
{
    const char *cmd = "diff", *base, *new_path;
    diff_opts o;
    vmp_flame *f = NULL;
    vmp_cli_output out;
    vmp_status st;
    double scale = 1.0;
    int c, rc;
    char *title = NULL;

    enum {
        TEXT,
        FOLDED,
        SVG
    } kind;

    for (c = 1; c < argc; c++)
        if (strcmp(argv[c], "--") == 0)
            return diff_runs(argc, argv, c);
    rc = parse_options(argc, argv, 0, &o);
    if (rc >= 0)
        return rc;
    const char *outpath = o.outpath, *format = o.format;
    int normalize = o.normalize, folded = o.folded;
    vmp_flame_options fo = o.fo;
    vmp_flame_svg_options so = o.so;
    if (format && strcmp(format, "text") != 0 && strcmp(format, "folded") != 0 &&
        strcmp(format, "svg") != 0)
        return vmp_cli_usage_error(cmd, "unknown format '%s' (text, folded or svg)", format);
    if (folded && format && strcmp(format, "folded") != 0)
        return vmp_cli_usage_error(cmd, "--folded contradicts --format %s", format);
    if (argc - optind < 2)
        return vmp_cli_usage_error(cmd,
                                   argc - optind == 0 ? "missing BASE and NEW" : "missing NEW");
    if (argc - optind > 2)
        return vmp_cli_usage_error(cmd, "too many arguments ('%s')", argv[optind + 2]);
    base = argv[optind];
    new_path = argv[optind + 1];
    if (strcmp(base, "-") == 0 && strcmp(new_path, "-") == 0)
        return vmp_cli_usage_error(cmd, "BASE and NEW cannot both be standard input");
    if (folded || (format && strcmp(format, "folded") == 0))
        kind = FOLDED;
    else if (format ? strcmp(format, "svg") == 0 : vmp_cli_ends_with_svg(outpath))
        kind = SVG;
    else
        kind = TEXT;

    if (vmp_flame_create(&f, &fo) != VMP_OK)
        return vmp_cli_fail(cmd, "out of memory");
    rc = vmp_cli_flame_read(f, cmd, base, 0);
    if (rc == VMP_EXIT_OK)
        rc = vmp_cli_flame_read(f, cmd, new_path, 1);
    if (rc == VMP_EXIT_OK)
        rc = vmp_cli_output_open(&out, cmd, outpath);
    if (rc != VMP_EXIT_OK) {
        vmp_flame_free(f);
        return rc;
    }
    if (normalize && vmp_flame_total(f, 0))
        scale = (double)vmp_flame_total(f, 1) / (double)vmp_flame_total(f, 0);
    if (kind == SVG) {
        if (!so.title) {
            size_t len = strlen(base) + strlen(new_path) + 40;
            title = malloc(len);
            if (title)
                snprintf(title, len, "Differential flame graph: %s -> %s", base, new_path);
            so.title = title;
        }
        so.diff = 1;
        st = so.title ? vmp_flame_write_svg(f, out.f, &so) : VMP_ERR_NOMEM;
    } else if (kind == FOLDED) {
        st = vmp_flame_write_folded(f, out.f, scale);
    } else {
        st = write_text(f, out.f, base, new_path, scale);
    }
    free(title);
    vmp_flame_free(f);
    return vmp_cli_flame_finish(&out, cmd, st);
}
