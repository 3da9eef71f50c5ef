/* SPDX-License-Identifier: MIT
 *
 * vmp_cmd_speedscope.c - `vmp speedscope`: convert a profile to speedscope's
 * JSON file format (resolution of spec.md §5 "Generations", §5.12 samples).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "vmp_cli.h"
#include "vmp_convert.h"

static const char speedscope_usage[] =
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
    "options:\n"
    "  -o FILE       write to FILE ('-' = standard output, the default)\n"
    "  --no-ranges   frames per function, without bytecode ranges\n"
    "  --name NAME   the file's name (default: FILE)\n"
    "  --stats       print the conversion's figures to standard "
    "error\n" VMP_CLI_KIND_HELP VMP_CLI_NO_GROUP_HIDDEN_HELP "  -h, --help    print this help\n"
    "\n"
    "Exit status: 0 success; 1 unreadable or damaged input (an output file is\n"
    "removed) or write error; 2 usage error.\n";

int vmp_cmd_speedscope(int argc, char **argv)
{
    static const struct option longopts[] = {{"output", required_argument, NULL, 'o'},
                                             {"no-ranges", no_argument, NULL, 'n'},
                                             {"name", required_argument, NULL, 'N'},
                                             {"stats", no_argument, NULL, 's'},
                                             {"no-group-hidden", no_argument, NULL, 'G'},
                                             {"kind", required_argument, NULL, 'k'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *cmd = "speedscope", *outpath = NULL, *path;
    vmp_speedscope_options o = VMP_SPEEDSCOPE_OPTIONS_INIT;
    vmp_convert_stats stats;
    vmp_cli_output out;
    vmp_reader *r;
    vmp_status st;
    char err[512];
    int c, rc, show_stats = 0;

    vmp_cli_getopt_begin();
    while ((c = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            outpath = optarg;
            break;
        case 'n':
            o.flags |= VMP_SPEEDSCOPE_NO_RANGES;
            break;
        case 'N':
            o.name = optarg;
            break;
        case 'k':
            vmp_analysis_set_default_kind(optarg);
            break;
        case 'G':
            vmp_analysis_add_default_flags(VMP_ANALYSIS_NO_GROUP_HIDDEN);
            break;
        case 's':
            show_stats = 1;
            break;
        case 'h':
            return vmp_cli_help(speedscope_usage);
        default:
            return vmp_cli_bad_option(cmd, argv, c);
        }
    }
    if (vmp_cli_one_file(&path, cmd, argc, argv) != VMP_EXIT_OK)
        return VMP_EXIT_USAGE;
    if (!o.name)
        o.name = path;

    if (vmp_cli_open_io(&r, &out, cmd, path, outpath) != VMP_EXIT_OK)
        return VMP_EXIT_FAIL;
    memset(&stats, 0, sizeof stats);
    st = vmp_speedscope_write(r, out.f, &o, &stats, err, sizeof err);
    vmp_reader_close(r);
    rc = vmp_cli_output_finish(&out, cmd, outpath, st, err);
    if (rc == VMP_EXIT_OK && show_stats)
        fprintf(stderr,
                "vmp speedscope: %" PRIu64 " samples (weight %" PRIu64 ") -> %" PRIu64
                " speedscope samples, %" PRIu64 " frames, %" PRIu64 " bytes\n",
                stats.samples, stats.weight, stats.out_samples, stats.functions, stats.bytes);
    return rc;
}
