/* SPDX-License-Identifier: MIT
 *
 * vmp_cmd_pprof.c - `vmp pprof`: convert a profile to pprof's gzip'd
 * profile.proto (resolution of spec.md §5 "Generations", §5.12 samples).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "vmp_cli.h"
#include "vmp_convert.h"

enum {
    OPT_NO_RANGES = VMP_CLI_OPT_END,
    OPT_INLINES,
    OPT_RAW,
};

static const char pprof_synopsis[] =
    "usage: vmp pprof [--no-ranges] [--inlines] [--vm-frames] [--raw] [--stats]\n"
    "                 -o OUT.pb.gz FILE\n"
    "\n"
    "Read the profile FILE ('-' = standard input) in one streaming pass,\n"
    "attribute every sample to the code at its pc when it was taken (its\n"
    "generation), and write a pprof profile (gzip-compressed profile.proto),\n"
    "for `go tool pprof`, Pyroscope, Parca and the other pprof readers:\n"
    "  sample types  samples/count (sample weight) and cpu/nanoseconds (weight x\n"
    "                the sampling interval; 0 when the file gives none);\n"
    "                period cpu/nanoseconds = the interval; time_nanos = the\n"
    "                start time; duration_nanos = the latest time in the file\n"
    "  functions     one per resolved function: the name as `vmp report`\n"
    "                prints it; system_name = the raw (mangled) C symbol, or the\n"
    "                function's signature; file name and first line\n"
    "  locations     one per resolved frame (function + bytecode range).  The\n"
    "                function's Line carries the source line of the range's\n"
    "                first bytecode (from the function's bcpc->line table, else\n"
    "                0).  BYTECODE RANGES: a frame with a range 'A->B' gets one\n"
    "                more Line, inlined into the function: a pseudo-function\n"
    "                named '<function> A->B'.  So pprof's default views list\n"
    "                ranges as the innermost level (as `vmp report` does under\n"
    "                each method; pprof marks them '(inline)'), callees appear\n"
    "                under the range that called them, and `-noinlines` (or\n"
    "                --no-ranges here) gives totals per function\n"
    "  mappings      one per loaded module (path, build id, address range) and\n"
    "                per code zone; C frames point at their module's, JIT frames\n"
    "                at the zone's when there is a single zone; no addresses\n"
    "                (a location stands for every pc of its range)\n"
    "  samples       one per distinct (stack, thread, state, failure reason),\n"
    "                values summed (only time stamps are lost), leaf first.\n"
    "                Labels: thread (name), thread_id (number), state (VM state\n"
    "                name), code_kind (kind of the executing function: a code\n"
    "                kind of the VM such as 'method' or 'closed PIC', 'C',\n"
    "                'function' or 'unknown'), failed (the reason, on failed\n"
    "                samples; their stack is the executing frame alone, or\n"
    "                empty without a pc), jit_unit (the JIT unit the pc ran\n"
    "                in, as `vmp report` names it: a LuaJIT trace 'TRACE 1\n"
    "                hot.lua:12 loop', a method; on samples in generated\n"
    "                code).  Select with e.g.\n"
    "                `go tool pprof -tagfocus=thread=main`, -tagroot=state or\n"
    "                -tagleaf=jit_unit (the trace as the innermost frame)\n"
    "Memory grows with the distinct stacks, not with the samples.\n"
    "\n"
    "options:\n";

static const char pprof_epilogue[] =
    "\n"
    "Exit status: 0 success; 1 unreadable or damaged input (nothing useful is\n"
    "written; an output file is removed) or write error; 2 usage error.\n";
static const vmp_cli_option pprof_options[] = {
    VMP_CLI_OPTION_OUTPUT,
    {"no-ranges", OPT_NO_RANGES, NULL, NULL, "no bytecode range Lines: frames are functions only"},
    {"inlines", OPT_INLINES, NULL, NULL,
     "expand the inlining records of JIT code: the functions\n"
     "inlined at a pc become Lines of their code object's\n"
     "Location, innermost first (pprof marks them '(inline)';\n"
     "-noinlines folds them back); the executing function of\n"
     "such a sample is then the innermost inlined one"},
    {"raw", OPT_RAW, NULL, NULL, "write the protobuf message without gzip"},
    VMP_CLI_OPTION_STATS,
    VMP_CLI_OPTION_VM_FRAMES,
    VMP_CLI_OPTION_NO_GROUP_HIDDEN,
    VMP_CLI_OPTION_HELP,
};
static const vmp_cli_command pprof_command = VMP_CLI_COMMAND(pprof, 16);

static vmp_status write_pprof(vmp_reader *r, FILE *out, const void *o, vmp_convert_stats *stats,
                              char *err, size_t size)
{
    return vmp_pprof_write(r, out, o, stats, err, size);
}

int vmp_cmd_pprof(int argc, char **argv)
{
    vmp_cli_parser p;
    const char *cmd = "pprof", *path;
    vmp_pprof_options o = VMP_PPROF_OPTIONS_INIT;
    vmp_convert_stats stats;
    int c, rc;

    vmp_cli_begin(&p, &pprof_command, argc, argv);
    while ((c = vmp_cli_next(&p)) > 0) {
        switch (c) {
        case OPT_NO_RANGES:
            o.flags |= VMP_PPROF_NO_RANGES;
            break;
        case OPT_INLINES:
            o.flags |= VMP_PPROF_INLINES;
            break;
        case VMP_CLI_OPT_VM_FRAMES:
            o.flags |= VMP_PPROF_VM_FRAMES;
            break;
        case OPT_RAW:
            o.gzip_level = -1;
            break;
        }
    }
    if ((rc = vmp_cli_file_operand(&p, c, &path)) >= 0)
        return rc;

    rc = vmp_cli_convert(cmd, path, p.output, write_pprof, &o, &stats);
    if (rc == VMP_EXIT_OK && p.stats)
        fprintf(stderr,
                "vmp pprof: %" PRIu64 " samples (weight %" PRIu64 ") -> %" PRIu64
                " pprof samples, %" PRIu64 " locations, %" PRIu64 " functions, %" PRIu64 " bytes\n",
                stats.samples, stats.weight, stats.out_samples, stats.locations, stats.functions,
                stats.bytes);
    return rc;
}
