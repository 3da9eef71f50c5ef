/* SPDX-License-Identifier: MIT
 *
 * vmp_cmd_flame.c - `vmp flame`: folded stacks or an interactive SVG flame
 * graph of a profile (samples of spec.md §5.12 resolved as in vmp_analyze.h,
 * written by convert/vmp_convert.h).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_cli.h"
#include "vmp_convert.h"

static const char flame_usage[] =
    "usage: vmp flame [options] FILE\n"
    "\n"
    "Read the profile FILE ('-' = standard input) once and write its samples as\n"
    "folded stacks (the default) or as an interactive SVG flame graph.\n"
    "\n"
    "Folded stacks: one line per distinct stack, outermost frame first, frames\n"
    "joined by ';', then a space and the summed sample weight; in a fixed\n"
    "order.  flamegraph.pl, speedscope and most flame graph tools read it.\n"
    "The counts add up to the total sample weight (the figure of `vmp info`\n"
    "and `vmp report`): a failed sample appears as a frame\n"
    "\"[failed: <reason>]\" with its pc's frame below it (the function\n"
    "`vmp report` counts it for; alone when it has no pc), a sample with\n"
    "neither pc nor stack as \"[unknown]\".\n"
    "In names, ';' is written as ':' and control characters as '?'.\n"
    "\n"
    "SVG: a self-contained file (no network, no external script) that any\n"
    "browser opens.  Hover a frame for its name, samples and share (tooltip and\n"
    "the details line at the bottom); click a frame to zoom into it, 'Reset\n"
    "Zoom' to go back; 'Search' highlights the frames whose name matches a\n"
    "regular expression and shows their share of all samples (nested matches\n"
    "of a recursive function count once).  Opening FILE.svg?s=REGEX searches at\n"
    "once.  Frames are coloured by code kind: green JIT-compiled, yellow\n"
    "interpreted, aqua inlined, red/orange C (the VM's own code, libraries),\n"
    "blue GC (C code mostly running in VM state \"gc\", and the \"[gc]\" state\n"
    "frame), grey unknown, lavender thread, state and failure frames.  Rows\n"
    "have a fixed height: the image grows with the depth of the stacks.\n"
    "Frames narrower than --min-width pixels are merged into one \"...\"\n"
    "frame per parent (dropped if even that is too narrow; search does not see\n"
    "inside it).\n"
    "\n"
    "options:\n";
/* the rest (a C string literal has a portable length limit) */
static const char flame_options[] =
    "  --format FMT      folded (default) or svg; an output file whose name ends\n"
    "                    in .svg implies svg\n"
    "  -o FILE           write to FILE ('-' = standard output, the default)\n"
    "  --thread-root     put the thread's name as the outermost frame\n"
    "  --state           put the VM state as a frame \"[state]\" under it\n"
    "  --units           add a frame \"[JIT unit]\" below the innermost frame of\n"
    "                    samples in generated code: the unit as `vmp report`\n"
    "                    names it (a LuaJIT trace \"[TRACE 1 hot.lua:12 loop]\"),\n"
    "                    failed samples with a pc included\n"
    "  --ranges          add a frame \"name A->B\" (bytecode range) below each\n"
    "                    frame that has one (spec.md R-RES-4, R-RES-11)\n"
    "  --tiers           suffix frame names as async-profiler does:\n"
    "                      _[j] JIT-compiled code (a code object)\n"
    "                      _[i] inlined code (a method whose pc lies in code\n"
    "                           inlined into another method), or a class\n"
    "                      _[0] interpreted (a method whose pc lies in the\n"
    "                           interpreter, or code of kind \"interpreter\")\n"
    "                      _[k] C code (module symbols: the VM, libraries)\n"
    "                    a symbolic frame whose tier nobody said (a caller\n"
    "                    from AsyncGetCallTrace), unknown pcs and synthetic\n"
    "                    frames get no suffix\n"
    "  --title TEXT      SVG title (default \"Flame graph\")\n"
    "  --icicle          SVG with the root at the top\n"
    "  --width PX        SVG width in pixels (default 1200)\n"
    "  --min-width PX    narrowest frame drawn, in pixels (default "
    "0.1)\n" VMP_CLI_VM_FRAMES_HELP VMP_CLI_KIND_HELP VMP_CLI_NO_GROUP_HIDDEN_HELP
    "  -h, --help        print this help\n"
    "\n"
    "Machine frames other than the innermost are return addresses and are\n"
    "resolved at address - 1 (see `vmp report --help`).  Memory grows with the\n"
    "number of distinct stacks, not with the number of samples.  A truncated\n"
    "file gives a warning on standard error and the graph of its readable\n"
    "part.\n"
    "\n"
    "Exit status: 0 success, 1 unreadable input or write error, 2 usage error.\n";

int vmp_cli_flame_read(vmp_flame *f, const char *cmd, const char *path, unsigned int column)
{
    vmp_reader *r;
    vmp_status st;
    if (vmp_cli_open_reader(&r, cmd, path) != VMP_EXIT_OK)
        return VMP_EXIT_FAIL;
    st = vmp_flame_read(f, r, column);
    if (st == VMP_ERR_TRUNCATED) {
        const char *msg = vmp_reader_errmsg(r);
        fprintf(stderr, "vmp %s: warning: %s%s%s (using the samples before it)\n", cmd,
                msg[0] ? "" : path, msg[0] ? "" : ": ", msg[0] ? msg : "truncated");
        st = VMP_OK;
    }
    if (st != VMP_OK) {
        const char *msg = vmp_reader_errmsg(r);
        if (msg[0] && st != VMP_ERR_NOMEM)
            vmp_cli_fail(cmd, "%s", msg);
        else
            vmp_cli_fail(cmd, "%s: %s", path, vmp_status_str(st));
        vmp_reader_close(r);
        return VMP_EXIT_FAIL;
    }
    vmp_reader_close(r);
    return VMP_EXIT_OK;
}

int vmp_cli_parse_px(
    const char *cmd, const char *opt, const char *arg, double lo, double hi, double *out)
{
    char *end;
    double v = strtod(arg, &end);
    if (end == arg || *end != '\0' || !(v >= lo && v <= hi))
        return vmp_cli_usage_error(cmd, "bad %s '%s' (%g to %g)", opt, arg, lo, hi);
    *out = v;
    return VMP_EXIT_OK;
}

int vmp_cli_ends_with_svg(const char *path)
{
    size_t n = path ? strlen(path) : 0;
    return n > 4 && strcmp(path + n - 4, ".svg") == 0;
}

enum {
    OPT_FORMAT = VMP_CLI_OPT_FLAME_END,
    OPT_RANGES
};

int vmp_cmd_flame(int argc, char **argv)
{
    static const struct option longopts[] = {{"format", required_argument, NULL, OPT_FORMAT},
                                             {"output", required_argument, NULL, 'o'},
                                             {"ranges", no_argument, NULL, OPT_RANGES},
                                             VMP_CLI_FLAME_LONGOPTS,
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *cmd = "flame", *outpath = NULL, *format = NULL, *path;
    vmp_flame_options fo = VMP_FLAME_OPTIONS_INIT;
    vmp_flame_svg_options so = VMP_FLAME_SVG_OPTIONS_INIT;
    vmp_flame *f = NULL;
    vmp_cli_output out;
    vmp_status st;
    int c, svg, rc;

    so.width = 1200;
    so.min_width = 0.1;
    vmp_cli_getopt_begin();
    while ((c = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_FORMAT:
            format = optarg;
            break;
        case 'o':
            outpath = optarg;
            break;
        case OPT_RANGES:
            fo.flags |= VMP_FLAME_RANGES;
            break;
        case 'h':
            fputs(flame_usage, stdout);
            return vmp_cli_help(flame_options);
        default:
            if (vmp_cli_flame_option(cmd, argv, c, &fo, &so) != VMP_EXIT_OK)
                return VMP_EXIT_USAGE;
            break;
        }
    }
    if (format && strcmp(format, "folded") != 0 && strcmp(format, "svg") != 0)
        return vmp_cli_usage_error(cmd, "unknown format '%s' (folded or svg)", format);
    if (vmp_cli_one_file(&path, cmd, argc, argv) != VMP_EXIT_OK)
        return VMP_EXIT_USAGE;
    svg = format ? strcmp(format, "svg") == 0 : vmp_cli_ends_with_svg(outpath);
    so.subtitle = strcmp(path, "-") == 0 ? "standard input" : path;

    if (vmp_flame_create(&f, &fo) != VMP_OK)
        return vmp_cli_fail(cmd, "out of memory");
    rc = vmp_cli_flame_read(f, cmd, path, 0);
    if (rc != VMP_EXIT_OK) {
        vmp_flame_free(f);
        return rc;
    }
    rc = vmp_cli_output_open(&out, cmd, outpath);
    if (rc != VMP_EXIT_OK) {
        vmp_flame_free(f);
        return rc;
    }
    st = svg ? vmp_flame_write_svg(f, out.f, &so) : vmp_flame_write_folded(f, out.f, 1.0);
    vmp_flame_free(f);
    return vmp_cli_flame_finish(&out, cmd, st);
}
