/* SPDX-License-Identifier: MIT
 *
 * vmp_cmd_archive.c - `vmp archive`: an index of many profiles in an SQLite
 * file or on a PostgreSQL server (archive/vmp_archive.h, docs/archive.md): add profiles, list runs,
 * compare runs selected by label with the repeated-run statistics of
 * `vmp diff BASE... -- NEW...` without reopening the files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmp_archive.h"
#include "vmp_cli.h"
#include "vmp_convert.h"

static const char archive_synopsis[] =
    "usage: vmp archive add [--ranges] ARCHIVE FILE...\n"
    "       vmp archive ls [--label K=V]... [--format text|csv|json] [-o FILE] ARCHIVE\n"
    "       vmp archive trend [--label K=V]... [--alpha A] [--format text|csv|json|svg]\n"
    "                         [-o FILE] ARCHIVE FUNCTION\n"
    "       vmp archive diff --base K=V... --new K=V... [--alpha A] [--ranges]\n"
    "                        [--format text|csv|json] [-o FILE] ARCHIVE\n"
    "\n"
    "Keep an index of many profiles (nightly or per-commit benchmark runs) in\n"
    "a database: one row per run with its header and labels, and the self and\n"
    "total sample weight of every function (the names of `vmp flame` and\n"
    "`vmp diff`).  docs/archive.md documents its tables.\n"
    "\n"
    "ARCHIVE  an SQLite file (query it with the sqlite3 shell or any language),\n"
    "         or a PostgreSQL server that many machines share, by its URI:\n"
    "         postgresql://[USER[:PASSWORD]@][HOST][:PORT][/DBNAME][?PARAM=V...]\n"
    "         completed from the PG* environment variables (PGHOST, PGUSER,\n"
    "         PGDATABASE, PGPASSWORD...) and ~/.pgpass: postgresql:// alone\n"
    "         takes everything from there.  The same answers from both.\n"
    "\n"
    "add   index each FILE: read it once, skip it when a file with the same\n"
    "      content (SHA-256) is indexed already, report a damaged or truncated\n"
    "      file and skip it (exit status 1 at the end), add each run in one\n"
    "      transaction (an interrupted add leaves every run whole or absent).\n"
    "      Creates ARCHIVE (its tables) when missing.  Processes or machines\n"
    "      adding at once add each content once.  A progress bar on stderr\n"
    "      when it is a terminal.\n"
    "        --ranges   also store each bytecode range (\"name A->B\")\n"
    "ls    list the runs in time order (the header's start time, then the\n"
    "      order of adding): run id, start time, total sample weight, VM,\n"
    "      labels, file.\n"
    "        --label K=V  only the runs with label K equal to V (repeatable: all\n"
    "                     must match)\n"
    "trend FUNCTION's share per run, in time order: self (samples executing in\n"
    "      it, as `vmp report` counts them), total (samples with it on the\n"
    "      stack) and innermost (`vmp diff`'s self), and the runs where a\n"
    "      significant change begins: the split of the runs into before and\n"
    "      after that the repeated-run test of `vmp diff` finds strongest, if\n"
    "      significant at --alpha after adjusting for the splits tried, then\n"
    "      again on each side (docs/archive.md).  --format svg (or -o FILE.svg)\n"
    "      draws the shares with the changes marked.\n"
    "        --label K=V  only the runs with these labels\n"
    "        --alpha A    significance level, 0 < A < 1 (default 0.01)\n"
    "diff  compare the runs labelled --base with those labelled --new function\n"
    "      by function, exactly as `vmp diff BASE... -- NEW...` compares the\n"
    "      files (docs/diff-statistics.md), from the index alone.\n"
    "        --base K=V, --new K=V  the labels of each side (repeatable)\n"
    "        --alpha A    significance level, 0 < A < 1 (default 0.01)\n"
    "        --ranges     also compare bytecode ranges (runs added with --ranges)\n"
    "\n";

static const char archive_epilogue[] =
    "\n"
    "Exit status: 0 success, 1 failure (a damaged profile skipped, an\n"
    "unreadable archive, a write error), 2 usage error.\n";

/* The trend's chart, beside VMP_CLI_DIFFSTAT_TEXT, _CSV and _JSON. */
enum {
    FORMAT_SVG = 3
};

enum {
    OPT_RANGES = 256,
    OPT_LABEL,
    OPT_BASE,
    OPT_NEW,
    OPT_ALPHA,
    OPT_FORMAT,
    OPT_KIND
};

/* The page of `vmp archive --help`, which every subcommand prints. */
static const vmp_cli_option archive_options[] = {
    {"format", OPT_FORMAT, "FMT", NULL, "text (default), csv or json (trend: or svg)"},
    {"kind", OPT_KIND, "NAME", NULL,
     "ls, trend and diff: the weights of one kind of sample\n"
     "(spec.md 5.15): cpu (the default), alloc, live, lock;\n"
     "add stores every kind of each file"},
    VMP_CLI_OPTION_OUTPUT,
    VMP_CLI_OPTION_HELP};

static const vmp_cli_command archive_command = VMP_CLI_COMMAND(archive, 16);

/* The subcommands' options, described on that page. */
static const vmp_cli_option add_options[] = {{"ranges", OPT_RANGES, NULL, NULL, NULL},
                                             VMP_CLI_OPTION_HELP};

static const vmp_cli_option query_options[] = {{"label", OPT_LABEL, "K=V", NULL, NULL},
                                               {"base", OPT_BASE, "K=V", NULL, NULL},
                                               {"new", OPT_NEW, "K=V", NULL, NULL},
                                               {"alpha", OPT_ALPHA, "A", NULL, NULL},
                                               {"ranges", OPT_RANGES, NULL, NULL, NULL},
                                               {"format", OPT_FORMAT, "FMT", NULL, NULL},
                                               {"kind", OPT_KIND, "NAME", NULL, NULL},
                                               VMP_CLI_OPTION_OUTPUT,
                                               VMP_CLI_OPTION_HELP};

/* The subcommand `word` with the options `table`, which prints the page. */
#define SUBCOMMAND(word, table)                                                                 \
    {                                                                                           \
        .name = "archive " word, .options = table, .n_options = sizeof table / sizeof table[0], \
        .help_page = &archive_command                                                           \
    }

static const vmp_cli_command add_command = SUBCOMMAND("add", add_options);
static const vmp_cli_command ls_command = SUBCOMMAND("ls", query_options);
static const vmp_cli_command diff_command = SUBCOMMAND("diff", query_options);
static const vmp_cli_command trend_command = SUBCOMMAND("trend", query_options);

/* ---- options shared by the subcommands -------------------------------------------- */

typedef struct label_list {
    const char **keys, **values;
    char **owned; /* "K=V" copies split at the '=' */
    size_t n;
} label_list;

static void labels_free(label_list *l)
{
    size_t i;
    for (i = 0; i < l->n; i++)
        free(l->owned[i]);
    free(l->owned);
    free(l->keys);
    free(l->values);
    memset(l, 0, sizeof *l);
}

/* Add "K=V" (`opt` names the option in messages); VMP_EXIT_OK or an exit
 * status. */
static int labels_add(label_list *l, const char *cmd, const char *opt, const char *arg)
{
    const char **keys, **values;
    char **owned, *copy, *eq = strchr(arg, '=');
    if (!eq || eq == arg)
        return vmp_cli_usage_error(cmd, "bad %s '%s' (KEY=VALUE)", opt, arg);
    keys = realloc(l->keys, (l->n + 1) * sizeof *keys);
    if (keys)
        l->keys = keys;
    values = realloc(l->values, (l->n + 1) * sizeof *values);
    if (values)
        l->values = values;
    owned = realloc(l->owned, (l->n + 1) * sizeof *owned);
    if (owned)
        l->owned = owned;
    copy = strdup(arg);
    if (!keys || !values || !owned || !copy) {
        free(copy);
        return vmp_cli_fail(cmd, "out of memory");
    }
    copy[eq - arg] = '\0';
    l->owned[l->n] = copy;
    l->keys[l->n] = copy;
    l->values[l->n] = copy + (eq - arg) + 1;
    l->n++;
    return VMP_EXIT_OK;
}

/* The runs with the labels `l`, and the weights of the samples of `kind`
 * (NULL: the CPU samples). */
static vmp_archive_filter filter_of(const label_list *l, const char *kind)
{
    vmp_archive_filter f;
    f.keys = l->keys;
    f.values = l->values;
    f.n = l->n;
    f.kind = kind;
    return f;
}

/* text, csv or json (VMP_CLI_DIFFSTAT_*); -1 after a usage error. */
static int parse_format(const char *cmd, const char *arg)
{
    if (!arg || !strcmp(arg, "text"))
        return VMP_CLI_DIFFSTAT_TEXT;
    if (!strcmp(arg, "csv"))
        return VMP_CLI_DIFFSTAT_CSV;
    if (!strcmp(arg, "json"))
        return VMP_CLI_DIFFSTAT_JSON;
    vmp_cli_usage_error(cmd, "unknown format '%s' (text, csv or json)", arg);
    return -1;
}

static int open_archive(vmp_archive **a, const char *cmd, const char *path, int create)
{
    char err[VMP_ARCHIVE_ERR_SIZE];
    if (vmp_archive_open(a, path, create, err) != 0)
        return vmp_cli_fail(cmd, "%s", err);
    return VMP_EXIT_OK;
}

/* ---- add ------------------------------------------------------------------------------ */

/* A progress bar on stderr ("[#####.....] 37/200 files"), when it is a
 * terminal; erased before any other message and at the end. */
static int progress_drawn;

static void progress_draw(const char *cmd, int done, int total)
{
    char bar[31];
    int i, full = total ? 30 * done / total : 30;
    for (i = 0; i < 30; i++)
        bar[i] = i < full ? '#' : '.';
    bar[30] = '\0';
    fprintf(stderr, "\r\033[Kvmp %s: [%s] %d/%d files", cmd, bar, done, total);
    progress_drawn = 1;
}

static void progress_erase(void)
{
    if (progress_drawn)
        fputs("\r\033[K", stderr);
    progress_drawn = 0;
}

typedef struct add_counts {
    size_t added, known, damaged;
} add_counts;

/* Index one profile; its outcome counted in `c`.  Returns VMP_EXIT_OK when
 * it was added or known (or damaged: said and counted), VMP_EXIT_FAIL when
 * the archive failed. */
static int add_one(vmp_archive *a, const char *cmd, const char *path, int ranges, add_counts *c)
{
    char err[VMP_ARCHIVE_ERR_SIZE];
    int outcome = VMP_ARCHIVE_DAMAGED;
    if (vmp_archive_add_file(a, path, ranges, &outcome, err) != 0) {
        progress_erase();
        return vmp_cli_fail(cmd, "%s", err);
    }
    if (outcome == VMP_ARCHIVE_ADDED) {
        c->added++;
    } else if (outcome == VMP_ARCHIVE_KNOWN) {
        c->known++;
    } else {
        progress_erase();
        fprintf(stderr, "vmp %s: %s (skipped)\n", cmd, err);
        c->damaged++;
    }
    return VMP_EXIT_OK;
}

static int cmd_add(int argc, char **argv)
{
    const char *cmd = "archive add";
    vmp_flame_options fo = VMP_FLAME_OPTIONS_INIT;
    add_counts counts = {0, 0, 0};
    vmp_archive *a = NULL;
    vmp_cli_parser p;
    int c, rc, i, progress, n_files;

    vmp_cli_begin(&p, &add_command, argc, argv);
    while ((c = vmp_cli_next(&p)) > 0)
        if (c == OPT_RANGES)
            fo.flags |= VMP_FLAME_RANGES;
    if (c < 0)
        return p.exit;
    if (optind >= argc)
        return vmp_cli_usage_error(cmd, "missing ARCHIVE");
    if (optind + 1 >= argc)
        return vmp_cli_usage_error(cmd, "missing FILE (the profiles to add)");
    /* names as `vmp diff` compares runs: hidden classes grouped by name alone */
    vmp_analysis_add_default_flags(VMP_ANALYSIS_GROUP_NO_COUNT);
    rc = open_archive(&a, cmd, argv[optind], 1);
    if (rc != VMP_EXIT_OK)
        return rc;
    n_files = argc - optind - 1;
    progress = isatty(STDERR_FILENO) && !getenv("CI");
    for (i = 0; rc == VMP_EXIT_OK && i < n_files; i++) {
        if (progress)
            progress_draw(cmd, i, n_files);
        rc = add_one(a, cmd, argv[optind + 1 + i], (fo.flags & VMP_FLAME_RANGES) != 0, &counts);
    }
    progress_erase();
    vmp_archive_close(a);
    fprintf(stderr, "vmp %s: %zu added, %zu already indexed, %zu damaged (skipped)\n", cmd,
            counts.added, counts.known, counts.damaged);
    if (rc == VMP_EXIT_OK && counts.damaged)
        rc = VMP_EXIT_FAIL;
    return rc;
}

/* ---- ls -------------------------------------------------------------------------------- */

static void print_rows(FILE *f, const vmp_archive_row *rows, size_t n, int format)
{
    char when[40];
    size_t i;

    if (format == VMP_CLI_DIFFSTAT_CSV)
        fputs("run_id,start,total_weight,vm,labels,complete,ranges,sha256,path\n", f);
    else if (format == VMP_CLI_DIFFSTAT_JSON)
        fputs("[", f);
    else
        fprintf(f, "# %4s %-30s %12s %-10s %s\n", "run", "start (UTC)", "weight", "vm",
                "labels  file");
    for (i = 0; i < n; i++) {
        const vmp_archive_row *r = &rows[i];
        vmp_format_utc(when, sizeof when, r->start_ns);
        if (format == VMP_CLI_DIFFSTAT_CSV) {
            fprintf(f, "%lld,%s,%llu,", (long long)r->run_id, when,
                    (unsigned long long)r->total_weight);
            vmp_put_csv_field(f, r->vm_name);
            fputc(',', f);
            vmp_put_csv_field(f, r->labels);
            fprintf(f, ",%d,%d,%s,", r->complete, r->ranges, r->sha256);
            vmp_put_csv_field(f, r->path);
            fputc('\n', f);
        } else if (format == VMP_CLI_DIFFSTAT_JSON) {
            fprintf(f,
                    "%s\n{\"run_id\":%lld,\"start\":\"%s\",\"start_ns\":%llu,\"total_weight\":%llu,"
                    "\"vm\":",
                    i ? "," : "", (long long)r->run_id, when, (unsigned long long)r->start_ns,
                    (unsigned long long)r->total_weight);
            vmp_put_json_string(f, r->vm_name, strlen(r->vm_name));
            fputs(",\"labels\":", f);
            vmp_put_json_string(f, r->labels, strlen(r->labels));
            fprintf(f, ",\"complete\":%s,\"ranges\":%s,\"sha256\":\"%s\",\"path\":",
                    r->complete ? "true" : "false", r->ranges ? "true" : "false", r->sha256);
            vmp_put_json_string(f, r->path, strlen(r->path));
            fputc('}', f);
        } else {
            fprintf(f, "%6lld %-30s %12llu %-10s %s  %s%s\n", (long long)r->run_id, when,
                    (unsigned long long)r->total_weight, r->vm_name, r->labels, r->path,
                    r->complete ? "" : " (no END record)");
        }
    }
    if (format == VMP_CLI_DIFFSTAT_JSON)
        fputs("]\n", f);
}

/* The options of ls and diff: labels, sides, alpha, ranges, format, output.
 * Returns -1 to go on, else the exit status. */
typedef struct query_opts {
    label_list label, base, new_runs;
    double alpha;
    int ranges, format;
    const char *outpath, *db, *function;
    const char *kind; /* --kind: NULL, the CPU samples */
} query_opts;

enum {
    MODE_LS,
    MODE_DIFF,
    MODE_TREND
};

/* Whether option `c` applies to `mode`. */
static int option_applies(int c, int mode)
{
    switch (c) {
    case OPT_LABEL:
        return mode != MODE_DIFF;
    case OPT_BASE:
    case OPT_NEW:
    case OPT_RANGES:
        return mode == MODE_DIFF;
    case OPT_ALPHA:
        return mode != MODE_LS;
    default:
        return 1;
    }
}

static int parse_query(int argc, char **argv, const vmp_cli_command *command, int mode,
                       query_opts *o)
{
    const char *cmd = command->name;
    vmp_cli_parser p;
    char name[64];
    const char *format = NULL;
    int c, rc;

    memset(o, 0, sizeof *o);
    o->alpha = 0.01;
    vmp_cli_begin(&p, command, argc, argv);
    while ((c = vmp_cli_next(&p)) > 0) {
        rc = VMP_EXIT_OK;
        if (!option_applies(c, mode))
            return vmp_cli_usage_error(cmd, "%s does not apply to %s",
                                       vmp_cli_option_name(command, c, name, sizeof name), cmd);
        switch (c) {
        case OPT_FORMAT:
            format = p.arg;
            break;
        case OPT_KIND:
            o->kind = p.arg;
            break;
        case OPT_LABEL:
            rc = labels_add(&o->label, cmd, "--label", p.arg);
            break;
        case OPT_BASE:
            rc = labels_add(&o->base, cmd, "--base", p.arg);
            break;
        case OPT_NEW:
            rc = labels_add(&o->new_runs, cmd, "--new", p.arg);
            break;
        case OPT_RANGES:
            o->ranges = 1;
            break;
        case OPT_ALPHA:
            if (vmp_cli_parse_alpha(cmd, p.arg, &o->alpha) != VMP_EXIT_OK)
                return VMP_EXIT_USAGE;
            break;
        }
        if (rc != VMP_EXIT_OK)
            return rc;
    }
    if (c < 0)
        return p.exit;
    o->outpath = p.output;
    if (mode == MODE_TREND &&
        ((format && !strcmp(format, "svg")) || (!format && vmp_cli_ends_with_svg(o->outpath))))
        o->format = FORMAT_SVG;
    else if ((o->format = parse_format(cmd, format)) < 0)
        return VMP_EXIT_USAGE;
    if (optind >= argc)
        return vmp_cli_usage_error(cmd, "missing ARCHIVE");
    if (mode == MODE_TREND && optind + 1 >= argc)
        return vmp_cli_usage_error(cmd, "missing FUNCTION");
    if (argc - optind > 1 + (mode == MODE_TREND))
        return vmp_cli_usage_error(cmd, "too many arguments ('%s')",
                                   argv[optind + 1 + (mode == MODE_TREND)]);
    o->db = argv[optind];
    o->function = mode == MODE_TREND ? argv[optind + 1] : NULL;
    if (mode == MODE_DIFF && (!o->base.n || !o->new_runs.n))
        return vmp_cli_usage_error(cmd, "give the labels of both sides (--base K=V --new K=V)");
    return -1;
}

static void query_free(query_opts *o)
{
    labels_free(&o->label);
    labels_free(&o->base);
    labels_free(&o->new_runs);
}

/* Open the archive of `o` and select its runs with the labels and kind of
 * `o` (and FUNCTION's weights when not NULL).  VMP_EXIT_OK or the status. */
static int select_runs(const char *cmd, const query_opts *o, const char *function, vmp_archive **a,
                       vmp_archive_row **rows, size_t *n)
{
    char err[VMP_ARCHIVE_ERR_SIZE];
    vmp_archive_filter filter = filter_of(&o->label, o->kind);
    int rc = open_archive(a, cmd, o->db, 0);
    if (rc == VMP_EXIT_OK && vmp_archive_select(*a, &filter, function, rows, n, err) != 0)
        rc = vmp_cli_fail(cmd, "%s", err);
    return rc;
}

static int cmd_ls(int argc, char **argv)
{
    const char *cmd = "archive ls";
    vmp_archive *a = NULL;
    vmp_archive_row *rows = NULL;
    vmp_cli_output out;
    query_opts o;
    size_t n = 0;
    int rc = parse_query(argc, argv, &ls_command, MODE_LS, &o);

    if (rc >= 0) {
        query_free(&o);
        return rc;
    }
    rc = select_runs(cmd, &o, NULL, &a, &rows, &n);
    if (rc == VMP_EXIT_OK)
        rc = vmp_cli_output_open(&out, cmd, o.outpath);
    if (rc == VMP_EXIT_OK) {
        print_rows(out.f, rows, n, o.format);
        rc = vmp_cli_output_close(&out, cmd);
    }
    vmp_archive_rows_free(rows, n);
    vmp_archive_close(a);
    query_free(&o);
    return rc;
}

/* ---- diff ------------------------------------------------------------------------------ */

/* Select one side's runs and load their weights into runs[*n ..]; the run
 * names ("run N (path)") into names[*n ..]. */
static int load_side(vmp_archive *a, const char *cmd, const label_list *labels, const query_opts *o,
                     vmp_run_weights **runs, char ***names, size_t *n)
{
    char err[VMP_ARCHIVE_ERR_SIZE];
    vmp_archive_filter filter = filter_of(labels, o->kind);
    vmp_archive_row *rows = NULL;
    size_t n_rows = 0, i;
    int rc = VMP_EXIT_OK;

    if (vmp_archive_select(a, &filter, NULL, &rows, &n_rows, err) != 0)
        return vmp_cli_fail(cmd, "%s", err);
    if (n_rows == 0) {
        vmp_archive_rows_free(rows, n_rows);
        return vmp_cli_fail(cmd, "no run has the labels of a side ('%s=%s'...)", labels->keys[0],
                            labels->values[0]);
    }
    {
        vmp_run_weights *r = realloc(*runs, (*n + n_rows) * sizeof *r);
        char **nm = r ? realloc(*names, (*n + n_rows) * sizeof *nm) : NULL;
        if (r)
            *runs = r;
        if (nm)
            *names = nm;
        if (!r || !nm) {
            vmp_archive_rows_free(rows, n_rows);
            return vmp_cli_fail(cmd, "out of memory");
        }
    }
    for (i = 0; rc == VMP_EXIT_OK && i < n_rows; i++) {
        (*names)[*n] = rows[i].path;
        rows[i].path = NULL; /* moved */
        if (vmp_archive_weights(a, rows[i].run_id, o->ranges, o->kind, &(*runs)[*n], err) != 0) {
            free((*names)[*n]);
            rc = vmp_cli_fail(cmd, "%s", err);
            break;
        }
        (*n)++;
    }
    vmp_archive_rows_free(rows, n_rows);
    return rc;
}

static int cmd_diff(int argc, char **argv)
{
    const char *cmd = "archive diff";
    vmp_archive *a = NULL;
    vmp_run_weights *runs = NULL;
    vmp_diffstat_row *rows = NULL;
    char **names = NULL;
    size_t n = 0, n_base = 0, n_rows = 0, i;
    vmp_cli_output out;
    query_opts o;
    int rc = parse_query(argc, argv, &diff_command, MODE_DIFF, &o);

    if (rc >= 0) {
        query_free(&o);
        return rc;
    }
    rc = open_archive(&a, cmd, o.db, 0);
    if (rc == VMP_EXIT_OK)
        rc = load_side(a, cmd, &o.base, &o, &runs, &names, &n);
    n_base = n;
    if (rc == VMP_EXIT_OK)
        rc = load_side(a, cmd, &o.new_runs, &o, &runs, &names, &n);
    if (rc == VMP_EXIT_OK &&
        vmp_diffstat(runs, n_base, n - n_base, o.alpha, &rows, &n_rows) != VMP_OK)
        rc = vmp_cli_fail(cmd, "out of memory");
    if (rc == VMP_EXIT_OK)
        rc = vmp_cli_output_open(&out, cmd, o.outpath);
    if (rc == VMP_EXIT_OK) {
        vmp_cli_diffstat_print(out.f, rows, n_rows, (const char *const *)names, n_base,
                               (const char *const *)names + n_base, n - n_base, o.alpha, o.format);
        rc = vmp_cli_output_close(&out, cmd);
    }
    for (i = 0; i < n; i++) {
        vmp_run_weights_free(&runs[i]);
        free(names[i]);
    }
    free(runs);
    free(names);
    free(rows);
    vmp_archive_close(a);
    query_free(&o);
    return rc;
}

/* ---- trend ----------------------------------------------------------------------------- */

static double pct_of(uint64_t w, uint64_t total)
{
    return total ? 100.0 * (double)w / (double)total : 0.0;
}

/* The change that begins at row `i`, or NULL. */
static const vmp_archive_change *change_at(const vmp_archive_change *c, size_t n, size_t i)
{
    size_t k;
    for (k = 0; k < n; k++)
        if (c[k].at == i)
            return &c[k];
    return NULL;
}

static void print_trend_head(FILE *f, const query_opts *o, const vmp_archive_row *rows, size_t n,
                             const vmp_archive_change *ch, size_t n_ch)
{
    size_t k;
    if (o->format == VMP_CLI_DIFFSTAT_CSV) {
        fputs("run_id,start,total_weight,self_pct,total_pct,innermost_pct,change,labels,path\n", f);
        return;
    }
    if (o->format == VMP_CLI_DIFFSTAT_JSON) {
        fputs("{\"function\":", f);
        vmp_put_json_string(f, o->function, strlen(o->function));
        fprintf(f, ",\"alpha\":%g,\"changes\":[", o->alpha);
        for (k = 0; k < n_ch; k++)
            fprintf(f,
                    "%s{\"run_id\":%lld,\"index\":%zu,\"self_before_pct\":%.4f,"
                    "\"self_after_pct\":%.4f,\"total_before_pct\":%.4f,\"total_after_pct\":%.4f,"
                    "\"q\":%.3g}",
                    k ? "," : "", (long long)rows[ch[k].at].run_id, ch[k].at, 100.0 * ch[k].self[0],
                    100.0 * ch[k].self[1], 100.0 * ch[k].total[0], 100.0 * ch[k].total[1], ch[k].q);
        fputs("],\"runs\":[", f);
        return;
    }
    fprintf(f, "# trend of %s over %zu runs in time order\n", o->function, n);
    fputs("# self: samples executing in it (vmp report's % of all samples); total: samples\n"
          "# with it on the stack (vmp diff's total); innermost: vmp diff's self\n",
          f);
    fprintf(f,
            "# changes at alpha %g (the repeated-run test at the strongest split, then on "
            "each side): %zu\n",
            o->alpha, n_ch);
    for (k = 0; k < n_ch; k++)
        fprintf(f,
                "#   from run %lld: self %.3f%% -> %.3f%% (%+.3f pp), total %.3f%% -> %.3f%% "
                "(%+.3f pp), q %.2g\n",
                (long long)rows[ch[k].at].run_id, 100.0 * ch[k].self[0], 100.0 * ch[k].self[1],
                100.0 * (ch[k].self[1] - ch[k].self[0]), 100.0 * ch[k].total[0],
                100.0 * ch[k].total[1], 100.0 * (ch[k].total[1] - ch[k].total[0]), ch[k].q);
    fprintf(f, "# %4s %-30s %10s %8s %8s %9s %6s  %s\n", "run", "start (UTC)", "weight", "self%",
            "total%", "innermost", "change", "labels  file");
}

static void print_trend(FILE *f, const query_opts *o, const vmp_archive_row *rows, size_t n,
                        const vmp_archive_change *ch, size_t n_ch)
{
    char when[40];
    size_t i;

    print_trend_head(f, o, rows, n, ch, n_ch);
    for (i = 0; i < n; i++) {
        const vmp_archive_row *r = &rows[i];
        const vmp_archive_change *c = change_at(ch, n_ch, i);
        double self = pct_of(r->executing, r->total_weight);
        double total = pct_of(r->total, r->total_weight);
        double inner = pct_of(r->self, r->total_weight);
        vmp_format_utc(when, sizeof when, r->start_ns);
        if (o->format == VMP_CLI_DIFFSTAT_CSV) {
            fprintf(f, "%lld,%s,%llu,%.4f,%.4f,%.4f,%d,", (long long)r->run_id, when,
                    (unsigned long long)r->total_weight, self, total, inner, c != NULL);
            vmp_put_csv_field(f, r->labels);
            fputc(',', f);
            vmp_put_csv_field(f, r->path);
            fputc('\n', f);
        } else if (o->format == VMP_CLI_DIFFSTAT_JSON) {
            fprintf(f,
                    "%s\n{\"run_id\":%lld,\"start\":\"%s\",\"total_weight\":%llu,"
                    "\"self_pct\":%.4f,\"total_pct\":%.4f,\"innermost_pct\":%.4f,"
                    "\"change\":%s,\"labels\":",
                    i ? "," : "", (long long)r->run_id, when, (unsigned long long)r->total_weight,
                    self, total, inner, c ? "true" : "false");
            vmp_put_json_string(f, r->labels, strlen(r->labels));
            fputs(",\"path\":", f);
            vmp_put_json_string(f, r->path, strlen(r->path));
            fputc('}', f);
        } else {
            fprintf(f, "%6lld %-30s %10llu %8.3f %8.3f %9.3f %6s  %s  %s\n", (long long)r->run_id,
                    when, (unsigned long long)r->total_weight, self, total, inner, c ? "<<" : "",
                    r->labels, r->path);
        }
    }
    if (o->format == VMP_CLI_DIFFSTAT_JSON)
        fputs("]}\n", f);
}

static int cmd_trend(int argc, char **argv)
{
    const char *cmd = "archive trend";
    vmp_archive *a = NULL;
    vmp_archive_row *rows = NULL;
    vmp_archive_change *ch = NULL;
    vmp_cli_output out;
    query_opts o;
    size_t n = 0, n_ch = 0;
    int rc = parse_query(argc, argv, &trend_command, MODE_TREND, &o);

    if (rc >= 0) {
        query_free(&o);
        return rc;
    }
    rc = select_runs(cmd, &o, o.function, &a, &rows, &n);
    if (rc == VMP_EXIT_OK && vmp_archive_changes(rows, n, o.function, o.alpha, &ch, &n_ch) != 0)
        rc = vmp_cli_fail(cmd, "out of memory");
    if (rc == VMP_EXIT_OK)
        rc = vmp_cli_output_open(&out, cmd, o.outpath);
    if (rc == VMP_EXIT_OK) {
        if (o.format == FORMAT_SVG)
            vmp_archive_trend_svg(out.f, o.function, rows, n, ch, n_ch);
        else
            print_trend(out.f, &o, rows, n, ch, n_ch);
        rc = vmp_cli_output_close(&out, cmd);
    }
    free(ch);
    vmp_archive_rows_free(rows, n);
    vmp_archive_close(a);
    query_free(&o);
    return rc;
}

/* ---- dispatch --------------------------------------------------------------------------- */

int vmp_cmd_archive(int argc, char **argv)
{
    if (argc < 2)
        return vmp_cli_usage_error("archive", "missing subcommand (add, ls, trend or diff)");
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
        return vmp_cli_print_help(&archive_command);
    if (!strcmp(argv[1], "add"))
        return cmd_add(argc - 1, argv + 1);
    if (!strcmp(argv[1], "ls"))
        return cmd_ls(argc - 1, argv + 1);
    if (!strcmp(argv[1], "diff"))
        return cmd_diff(argc - 1, argv + 1);
    if (!strcmp(argv[1], "trend"))
        return cmd_trend(argc - 1, argv + 1);
    return vmp_cli_usage_error("archive", "unknown subcommand '%s' (add, ls, trend or diff)",
                               argv[1]);
}
