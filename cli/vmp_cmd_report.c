/* SPDX-License-Identifier: MIT
 *
 * vmp_cmd_report.c - `vmp report`: its options and files; the report itself
 * is vmp_report_write() (convert/vmp_report.c).
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_analyze.h"
#include "vmp_cli.h"
#include "vmp_convert.h"

enum {
    OPT_BY = VMP_CLI_OPT_END,
    OPT_TOP,
    OPT_MIN_PERCENT,
    OPT_NO_RANGES,
    OPT_FORMAT,
};

static const char report_synopsis[] =
    "usage: vmp report [--by function|module|thread|state|unit|vm-function]\n"
    "                  [--top N]\n"
    "                  [--min-percent P] [--no-ranges]\n"
    "                  [--format text|json|csv] [-o FILE] FILE\n"
    "\n"
    "Read the profile FILE ('-' = standard input) in one streaming pass,\n"
    "attribute every sample to the code that was at its pc when it was taken\n"
    "(its generation), and print the report:\n"
    "  heading: producer, VM, the header's labels (KEY=VALUE), date, duration,\n"
    "  sampling frequency, samples in\n"
    "  total, in generated vm code, in vanilla vm code (C), unknown, in\n"
    "  symbolic frames only (when there are such samples), failed;\n"
    "  '% of generated vm code': each JIT-compiled method, block, PIC or\n"
    "  trampoline with its share of generated code and of all samples, its\n"
    "  sample count and the cumulative share, and under each its bytecode\n"
    "  ranges ('A->B', with their source lines when the function has a line\n"
    "  table); closed and open PICs are listed apart from methods.  When a\n"
    "  sample has both a pc and a symbolic stack (AsyncGetCallTrace frames of\n"
    "  the HotSpot agent), its innermost method is listed with where it ran:\n"
    "  [nmethod] (compiled: range from the pc map), [inlined] (range from the\n"
    "  inlining record) or [interpreted] (range: the bytecodes of the source\n"
    "  line); see vmp_analyze.h for the exact rules;\n"
    "  '% of vanilla vm code': C functions (demangled);\n"
    "  '% of symbolic frames': innermost symbolic frames whose pc was in none\n"
    "  of the frame's code (C code, a stub, unknown) or who have no pc;\n"
    "  generated code by kind; the four sections sum to the total;\n"
    "  '% of generated vm code by JIT unit', when code objects have names of\n"
    "  their own (a tracing JIT's traces, 'TRACE 3 hot.lua:12 loop'): the\n"
    "  samples whose pc ran in each unit (code objects of one name, at\n"
    "  whatever generation), with its kind and function (json: 'jit_units',\n"
    "  always);\n"
    "  GC, code compactions, events and counters; VM states (summing to 100%);\n"
    "  threads (a renamed thread as 'first (latest)'); failed samples by reason;\n"
    "  when any sample carries a blame (the code id of the JIT unit its thread\n"
    "  last exited, spec.md 5.12 key 8): 'time blamed on JIT units', a matrix of\n"
    "  the samples not in generated code (interpreter, GC, primitives, C, ...):\n"
    "  one row per blamed unit (its name as above, else its method's,\n"
    "  whatever the generation; a freed unit still counts) plus '[no blame]'\n"
    "  for samples without one, one\n"
    "  column per VM state, with row and column totals (json: 'blame', each\n"
    "  unit with its function).\n"
    "\n"
    "With --by module|thread|state|unit, print instead one ranked table of all\n"
    "samples (share, samples, cumulative share) per key:\n"
    "  module: the module (path) of a C function; '[generated code: ZONE]' for\n"
    "  JIT code, by its code zone ('[generated code]' for inlined and\n"
    "  interpreted frames of symbolic stacks); '[symbolic]' for symbolic frames;\n"
    "  '[unknown]' for unknown pcs and samples without any frame;\n"
    "  thread: the thread's name as above (threads of one name are one key);\n"
    "  state: the VM state;\n"
    "  unit: the JIT unit the pc ran in, named as above ('[not in generated\n"
    "  code]' for the rest);\n"
    "  vm-function: the innermost function of the VM's language on the stack\n"
    "  (a Lua function, a Java method: a frame of a FUNCTION record), whatever\n"
    "  C code ran above it, as luajit -jp=f and JFR count (spec.md R-VIEW-7),\n"
    "  with 'own', the samples in its own code; a sample with no such frame\n"
    "  counts as '[<vm> <state>]' ('[LuaJIT gc]', kind state), a failed one as\n";
/* the rest (a C string literal has a portable length limit) */
static const char report_synopsis_more[] =
    "  '[failed: <reason>]' (kind failed); csv: kind,vm-function,samples,own.\n"
    "--top and --min-percent (of all samples) apply to text and json; csv has\n"
    "one row per key (KEY,samples) and sums to the total.\n"
    "A stack deeper than 65536 frames keeps its innermost 65535 under one\n"
    "'[truncated N frames]' frame; the report says how many stacks were (json:\n"
    "'truncated_stacks').\n"
    "\n"
    "options:\n";

static const char report_epilogue[] =
    "\n"
    "Exit status: 0 success (a truncated file is reported up to the damage, with\n"
    "a note); 1 unreadable input or write error; 2 usage error.\n";
static const vmp_cli_option report_options[] = {
    {"by", OPT_BY, "K", NULL,
     "function (default: the full report), module, thread, state,\n"
     "unit, vm-function"},
    {"top", OPT_TOP, "N", NULL,
     "list at most N entries per section (0 = all; default 30);\n"
     "the rest are summed as '...others...'"},
    {"min-percent", OPT_MIN_PERCENT, "P", NULL,
     "list entries of at least P% of their section (default 0)"},
    {"no-ranges", OPT_NO_RANGES, NULL, NULL, "do not list bytecode ranges"},
    {"format", OPT_FORMAT, "F", NULL,
     "text (default), json (one object) or csv (one row per\n"
     "function, or per function and range unless --no-ranges:\n"
     "class,kind,function,range,samples)"},
    VMP_CLI_OPTION_OUTPUT,
    VMP_CLI_OPTION_KIND,
    VMP_CLI_OPTION_NO_GROUP_HIDDEN,
    VMP_CLI_OPTION_HELP,
};
static const vmp_cli_command report_command = {
    .name = "report",
    .synopsis = {report_synopsis, report_synopsis_more},
    .options = report_options,
    .n_options = sizeof report_options / sizeof report_options[0],
    .epilogue = report_epilogue,
    .column = 20,
};

int vmp_cmd_report(int argc, char **argv)
{
    vmp_cli_parser args;
    vmp_report_options o = VMP_REPORT_OPTIONS_INIT;
    const char *path;
    vmp_reader *rd = NULL;
    vmp_profile *p = NULL;
    vmp_cli_output out;
    vmp_status st;
    int c, rc;
    char *end;

    o.top = 30;
    vmp_cli_begin(&args, &report_command, argc, argv);
    while ((c = vmp_cli_next(&args)) > 0) {
        switch (c) {
        case OPT_TOP: {
            unsigned long long v = strtoull(args.arg, &end, 10);
            if (!*args.arg || *end || args.arg[0] == '-')
                return vmp_cli_usage_error("report", "bad --top '%s'", args.arg);
            o.top = (size_t)v;
            break;
        }
        case OPT_MIN_PERCENT:
            o.min_percent = strtod(args.arg, &end);
            if (!*args.arg || *end || o.min_percent < 0 || o.min_percent > 100)
                return vmp_cli_usage_error("report", "bad --min-percent '%s'", args.arg);
            break;
        case OPT_NO_RANGES:
            o.no_ranges = 1;
            break;
        case OPT_BY:
            o.by = vmp_report_by_key(args.arg);
            if (o.by < 0)
                return vmp_cli_usage_error("report", "unknown --by '%s'", args.arg);
            break;
        case OPT_FORMAT:
            if (strcmp(args.arg, "text") == 0)
                o.format = VMP_REPORT_TEXT;
            else if (strcmp(args.arg, "json") == 0)
                o.format = VMP_REPORT_JSON;
            else if (strcmp(args.arg, "csv") == 0)
                o.format = VMP_REPORT_CSV;
            else
                return vmp_cli_usage_error("report", "unknown format '%s'", args.arg);
            break;
        }
    }
    if (c < 0)
        return args.exit;
    if (optind + 1 != argc)
        return vmp_cli_usage_error("report",
                                   optind >= argc ? "no input file" : "one input file only");
    path = argv[optind];

    rc = vmp_cli_open_reader(&rd, "report", path);
    if (rc != VMP_EXIT_OK)
        return rc;
    if (vmp_profile_create(&p, NULL) != VMP_OK) {
        vmp_reader_close(rd);
        return vmp_cli_fail("report", "out of memory");
    }
    st = vmp_profile_read(p, rd);
    if (st == VMP_ERR_LIMIT) { /* not a damaged file: the report would mislead */
        rc = vmp_cli_fail("report", "%s", vmp_reader_errmsg(rd));
    } else if (st == VMP_ERR_NOMEM) {
        rc = vmp_cli_fail("report", "out of memory");
    } else if (st < 0 && vmp_profile_get_totals(p)->records == 0 && st != VMP_ERR_TRUNCATED) {
        /* spec R-CHK-6: a file cut inside chunk 0 is an empty, truncated profile */
        rc = vmp_cli_fail("report", "%s",
                          vmp_reader_errmsg(rd)[0] ? vmp_reader_errmsg(rd) : vmp_status_str(st));
    } else if ((rc = vmp_cli_output_open(&out, "report", args.output)) == VMP_EXIT_OK) {
        const char *warning = NULL;
        o.path = path;
        if (st < 0)
            o.error = warning =
                vmp_reader_errmsg(rd)[0] ? vmp_reader_errmsg(rd) : vmp_status_str(st);
        if (vmp_report_write(p, out.f, &o) == VMP_ERR_NOMEM)
            warning = "out of memory";
        rc = vmp_cli_output_close(&out, "report");
        if (rc == VMP_EXIT_OK && warning)
            fprintf(stderr, "vmp report: warning: %s\n", warning);
    }
    vmp_profile_free(p);
    vmp_reader_close(rd);
    return rc;
}
