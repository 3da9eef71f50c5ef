/* SPDX-License-Identifier: MIT
 *
 * vmp_cmd_speedscope.c - `vmp speedscope`: convert a profile to speedscope's
 * JSON file format (resolution of spec.md §5 "Generations", §5.12 samples).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "vmp_cli.h"
#include "vmp_convert.h"

enum {
    OPT_NO_RANGES = VMP_CLI_OPT_END,
    OPT_NAME,
};

static const char speedscope_synopsis[] =
    "usage: vmp speedscope [--no-ranges] [--name NAME] [--stats] -o OUT.json FILE\n"
    "\n"
    "Read the profile FILE ('-' = standard input) in one streaming pass,\n"
    "attribute every sample to the code at its pc when it was taken, and write\n"
    "speedscope's file format (https://www.speedscope.app/file-format-schema.json;\n"
    "open it at speedscope's site or with the speedscope command):\n"
    "  shared.frames  one per resolved frame, named as `vmp report` prints it:\n"
    "                 'function A->B' with its bytecode range, or 'function';\n"
    "                 file and line when the function's record gives them\n"
    "  profiles       one \"sampled\" profile per thread (named after it), in\n"
    "                 order of first sample; samples are frame index arrays,\n"
    "                 root first, in file order (consecutive samples with the\n"
    "                 same stack are merged, weights summed); unit\n"
    "                 \"nanoseconds\" with weight = sample weight x sampling\n"
    "                 interval, or \"none\" (the sample weight) when the file\n"
    "                 gives no interval; startValue 0, endValue the total.\n"
    "                 A failed sample is the frame '[failed: <reason>]' above\n"
    "                 its executing frame (if it has a pc)\n"
    "Memory grows with the distinct stacks; samples are spooled to temporary\n"
    "files.\n"
    "\n"
    "options:\n";

static const char speedscope_epilogue[] =
    "\n"
    "Exit status: 0 success; 1 unreadable or damaged input (an output file is\n"
    "removed) or write error; 2 usage error.\n";
static const vmp_cli_option speedscope_options[] = {
    VMP_CLI_OPTION_OUTPUT,
    {"no-ranges", OPT_NO_RANGES, NULL, NULL, "frames per function, without bytecode ranges"},
    {"name", OPT_NAME, "NAME", NULL, "the file's name (default: FILE)"},
    VMP_CLI_OPTION_STATS,
    VMP_CLI_OPTION_KIND,
    VMP_CLI_OPTION_NO_GROUP_HIDDEN,
    VMP_CLI_OPTION_HELP,
};
static const vmp_cli_command speedscope_command = VMP_CLI_COMMAND(speedscope, 16);

static vmp_status write_speedscope(vmp_reader *r, FILE *out, const void *o,
                                   vmp_convert_stats *stats, char *err, size_t size)
{
    return vmp_speedscope_write(r, out, o, stats, err, size);
}

int vmp_cmd_speedscope(int argc, char **argv)
{
    vmp_cli_parser p;
    const char *cmd = "speedscope", *path;
    vmp_speedscope_options o = VMP_SPEEDSCOPE_OPTIONS_INIT;
    vmp_convert_stats stats;
    int c, rc;

    vmp_cli_begin(&p, &speedscope_command, argc, argv);
    while ((c = vmp_cli_next(&p)) > 0) {
        switch (c) {
        case OPT_NO_RANGES:
            o.flags |= VMP_SPEEDSCOPE_NO_RANGES;
            break;
        case OPT_NAME:
            o.name = p.arg;
            break;
        }
    }
    if ((rc = vmp_cli_file_operand(&p, c, &path)) >= 0)
        return rc;
    if (!o.name)
        o.name = path;

    rc = vmp_cli_convert(cmd, path, p.output, write_speedscope, &o, &stats);
    if (rc == VMP_EXIT_OK && p.stats)
        fprintf(stderr,
                "vmp speedscope: %" PRIu64 " samples (weight %" PRIu64 ") -> %" PRIu64
                " speedscope samples, %" PRIu64 " frames, %" PRIu64 " bytes\n",
                stats.samples, stats.weight, stats.out_samples, stats.functions, stats.bytes);
    return rc;
}
