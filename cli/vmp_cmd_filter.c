/* SPDX-License-Identifier: MIT
 *
 * vmp_cmd_filter.c - `vmp filter`: keep the samples of a profile that pass
 * the given criteria and write a valid profile (analyze/vmp_rewrite.h;
 * spec.md §5).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_cli.h"
#include "vmp_rewrite.h"

enum {
    OPT_THREAD = VMP_CLI_OPT_END,
    OPT_FROM,
    OPT_TO,
    OPT_STATE,
    OPT_INCLUDE,
    OPT_EXCLUDE,
    OPT_GENERATIONS,
};

static const char filter_synopsis[] =
    "usage: vmp filter [options] FILE -o OUT\n"
    "\n"
    "Copy the profile FILE ('-' = standard input) to OUT ('-' = standard\n"
    "output; required, since the output is binary), keeping only the samples\n"
    "(SAMPLE and FAILED_SAMPLE records) that pass every criterion given; within\n"
    "one repeated option any value passes.  Everything else is copied: the\n"
    "header, modules and symbols, code zones, code objects and their changes,\n"
    "functions, threads, events, counters and every stack node (so that every\n"
    "kept sample finds its stack).  The END record is written anew: its sample,\n"
    "failed and chunk counts are the output's; the dropped and truncated-stack\n"
    "counts, time and generation are the input's.  The output passes\n"
    "`vmp validate` when the input does.  One streaming pass, bounded memory.\n"
    "\n"
    "options:\n";

static const char filter_epilogue[] =
    "\n"
    "Exit status: 0 success, 1 unreadable input or write error, 2 usage error.\n";
static const vmp_cli_option filter_options[] = {
    {"thread", OPT_THREAD, "ID|NAME", NULL,
     "a thread id, or a name a THREAD record gave it\n"
     "before the sample (the writer names a thread\n"
     "before its first sample)"},
    {"state", OPT_STATE, "NAME", NULL, "a VM state of the header (\"gc\", \"jit\", ...)"},
    {NULL, 0, NULL, "--from S, --to S",
     "keep times in [from, to), in seconds (decimals\n"
     "allowed) since the time origin; a negative value\n"
     "counts back from the end, the time of the last\n"
     "sample (from the seek table, or a first pass over\n"
     "FILE when it has none: FILE must then be a file,\n"
     "not standard input)"},
    {"from", OPT_FROM, "S", NULL, NULL},
    {"to", OPT_TO, "S", NULL, NULL},
    {"include", OPT_INCLUDE, "RE", NULL,
     "keep samples whose executing frame or stack has a\n"
     "function whose resolved name matches the POSIX\n"
     "extended regex RE (names as `vmp_analyze.h` gives\n"
     "them: \"Integer>>benchFib\", demangled C names)"},
    {"exclude", OPT_EXCLUDE, "RE", NULL, "drop samples with such a frame"},
    {"generations", OPT_GENERATIONS, "A..B", NULL,
     "generations A to B inclusive (\"A..\" or \"..B\" too)"},
    VMP_CLI_OPTION_FORMAT_VERSION,
    VMP_CLI_OPTION_OUTPUT_OUT,
    VMP_CLI_OPTION_HELP,
};
static const vmp_cli_command filter_command = VMP_CLI_COMMAND(filter, 24);

#define MAX_ARGS 256

static int parse_seconds(const char *s, int64_t *out)
{
    char *end;
    double v;
    errno = 0;
    v = strtod(s, &end);
    if (errno || end == s || *end || v != v || v > 9.2e9 || v < -9.2e9)
        return -1;
    *out = (int64_t)(v * 1e9 + (v < 0 ? -0.5 : 0.5));
    return 0;
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    if (!*s || *s == '-' || *s == '+')
        return -1;
    errno = 0;
    *out = strtoull(s, &end, 10);
    return errno || *end ? -1 : 0;
}

static int parse_gens(const char *s, uint64_t *a, uint64_t *b)
{
    const char *dots = strstr(s, "..");
    char left[32];
    size_t n;
    if (!dots || (size_t)(dots - s) >= sizeof left)
        return -1;
    n = (size_t)(dots - s);
    memcpy(left, s, n);
    left[n] = '\0';
    *a = 0;
    *b = UINT64_MAX;
    if (n && parse_u64(left, a))
        return -1;
    if (dots[2] && parse_u64(dots + 2, b))
        return -1;
    return *a <= *b ? 0 : -1;
}

int vmp_cmd_filter(int argc, char **argv)
{
    vmp_cli_parser p;
    const char *cmd = "filter", *in_path;
    static uint64_t tids[MAX_ARGS];
    static const char *tnames[MAX_ARGS], *states[MAX_ARGS], *inc[MAX_ARGS], *exc[MAX_ARGS];
    vmp_filter_options o = VMP_FILTER_OPTIONS_INIT;
    vmp_reader *r = NULL;
    vmp_reader_info info;
    vmp_record_writer *w = NULL;
    vmp_status st;
    char err[1024] = "";
    int warned;
    int c, rc;
    vmp_cli_begin(&p, &filter_command, argc, argv);
    while ((c = vmp_cli_next(&p)) > 0) {
        uint64_t id;
        switch (c) {
        case OPT_THREAD:
            if (o.n_thread_ids >= MAX_ARGS || o.n_thread_names >= MAX_ARGS)
                return vmp_cli_usage_error(cmd, "too many --thread options");
            if (parse_u64(p.arg, &id) == 0)
                tids[o.n_thread_ids++] = id;
            else
                tnames[o.n_thread_names++] = p.arg;
            break;
        case OPT_STATE:
            if (o.n_states >= MAX_ARGS)
                return vmp_cli_usage_error(cmd, "too many --state options");
            states[o.n_states++] = p.arg;
            break;
        case OPT_FROM:
        case OPT_TO:
            if (parse_seconds(p.arg, c == OPT_FROM ? &o.from_ns : &o.to_ns))
                return vmp_cli_usage_error(cmd, "--%s: not a number of seconds: '%s'",
                                           c == OPT_FROM ? "from" : "to", p.arg);
            if (c == OPT_FROM)
                o.has_from = 1;
            else
                o.has_to = 1;
            break;
        case OPT_INCLUDE:
        case OPT_EXCLUDE:
            if (o.n_include >= MAX_ARGS || o.n_exclude >= MAX_ARGS)
                return vmp_cli_usage_error(cmd, "too many --include/--exclude options");
            if (c == OPT_INCLUDE)
                inc[o.n_include++] = p.arg;
            else
                exc[o.n_exclude++] = p.arg;
            break;
        case OPT_GENERATIONS:
            if (parse_gens(p.arg, &o.gen_first, &o.gen_last))
                return vmp_cli_usage_error(cmd, "--generations: expected A..B, got '%s'", p.arg);
            o.has_generations = 1;
            break;
        }
    }
    if ((rc = vmp_cli_file_operand(&p, c, &in_path)) >= 0)
        return rc;
    if (!p.output)
        return vmp_cli_usage_error(cmd, "missing -o OUT");
    o.thread_ids = tids;
    o.thread_names = tnames;
    o.states = states;
    o.include = inc;
    o.exclude = exc;
    if ((o.has_from && o.from_ns < 0) || (o.has_to && o.to_ns < 0)) {
        if (strcmp(in_path, "-") == 0)
            return vmp_cli_usage_error(cmd, "a negative --from/--to needs the end of the "
                                            "profile: give a file, not standard input");
        st = vmp_filter_end_time(&o.end_ns, in_path, err, sizeof err);
        if (st < 0)
            return vmp_cli_fail(cmd, "%s", err);
        if (err[0])
            fprintf(stderr, "vmp %s: warning: %s\n", cmd, err);
    }
    rc = vmp_cli_open_reader(&r, cmd, in_path);
    if (rc != VMP_EXIT_OK)
        return rc;
    vmp_reader_get_info(r, &info);
    rc = vmp_cli_open_writer(&w, cmd, p.output, p.format_major,
                             info.format_major == 1 ? info.format_minor : 2);
    if (rc != VMP_EXIT_OK) {
        vmp_reader_close(r);
        return rc;
    }
    warned = err[0] != 0;
    st = vmp_filter_run(NULL, w, r, &o, err, sizeof err);
    /* spec R-SEEK-1: a table that contradicts the chunks, seen at the end */
    if (!warned && vmp_reader_warning(r))
        fprintf(stderr, "vmp %s: warning: %s\n", cmd, vmp_reader_warning(r));
    vmp_record_writer_close(w);
    vmp_reader_close(r);
    if (st == VMP_ERR_INVALID_ARG)
        return vmp_cli_usage_error(cmd, "%s", err);
    if (st < 0)
        return vmp_cli_fail(cmd, "%s", err);
    return VMP_EXIT_OK;
}
