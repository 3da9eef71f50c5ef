/* SPDX-License-Identifier: MIT
 *
 * vmp_cmd_flame.c - `vmp flame`: folded stacks or an interactive SVG flame
 * graph of a profile (samples of spec.md §5.12 resolved as in vmp_analyze.h,
 * written by convert/vmp_convert.h).
 */
#include <stdlib.h>
#include <string.h>

#include "vmp_cli.h"
#include "vmp_convert.h"

enum {
    OPT_FORMAT = VMP_CLI_OPT_END,
    OPT_RANGES
};

static const char flame_synopsis[] =
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

static const char flame_epilogue[] =
    "\n"
    "Machine frames other than the innermost are return addresses and are\n"
    "resolved at address - 1 (see `vmp report --help`).  Memory grows with the\n"
    "number of distinct stacks, not with the number of samples.  A truncated\n"
    "file gives a warning on standard error and the graph of its readable\n"
    "part.\n"
    "\n"
    "Exit status: 0 success, 1 unreadable input or write error, 2 usage error.\n";
static const vmp_cli_option flame_options[] = {
    {"format", OPT_FORMAT, "FMT", NULL,
     "folded (default) or svg; an output file whose name ends\n"
     "in .svg implies svg"},
    VMP_CLI_OPTION_OUTPUT,
    VMP_CLI_OPTION_THREAD_ROOT("put the thread's name as the outermost frame"),
    VMP_CLI_OPTION_STATE("put the VM state as a frame \"[state]\" under it"),
    VMP_CLI_OPTION_UNITS("add a frame \"[JIT unit]\" below the innermost frame of\n"
                         "samples in generated code: the unit as `vmp report`\n"
                         "names it (a LuaJIT trace \"[TRACE 1 hot.lua:12 loop]\"),\n"
                         "failed samples with a pc included"),
    {"ranges", OPT_RANGES, NULL, NULL,
     "add a frame \"name A->B\" (bytecode range) below each\n"
     "frame that has one (spec.md R-RES-4, R-RES-11)"},
    VMP_CLI_OPTION_TIERS("suffix frame names as async-profiler does:\n"
                         "  _[j] JIT-compiled code (a code object)\n"
                         "  _[i] inlined code (a method whose pc lies in code\n"
                         "       inlined into another method), or a class\n"
                         "  _[0] interpreted (a method whose pc lies in the\n"
                         "       interpreter, or code of kind \"interpreter\")\n"
                         "  _[k] C code (module symbols: the VM, libraries)\n"
                         "a symbolic frame whose tier nobody said (a caller\n"
                         "from AsyncGetCallTrace), unknown pcs and synthetic\n"
                         "frames get no suffix"),
    VMP_CLI_OPTION_TITLE("SVG title (default \"Flame graph\")"),
    VMP_CLI_OPTION_ICICLE("SVG with the root at the top"),
    VMP_CLI_OPTION_WIDTH("SVG width in pixels (default 1200)"),
    VMP_CLI_OPTION_MIN_WIDTH("narrowest frame drawn, in pixels (default 0.1)"),
    VMP_CLI_OPTION_VM_FRAMES,
    VMP_CLI_OPTION_KIND,
    VMP_CLI_OPTION_NO_GROUP_HIDDEN,
    VMP_CLI_OPTION_HELP,
};

static const vmp_cli_command flame_command = VMP_CLI_COMMAND(flame, 20);

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

int vmp_cli_parse_px(const char *cmd, const char *opt, const char *arg, double lo, double hi,
                     double *out)
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

int vmp_cmd_flame(int argc, char **argv)
{
    const char *cmd = "flame", *format = NULL, *path;
    vmp_flame_options fo = VMP_FLAME_OPTIONS_INIT;
    vmp_flame_svg_options so = VMP_FLAME_SVG_OPTIONS_INIT;
    vmp_flame *f = NULL;
    vmp_cli_parser p;
    vmp_cli_output out;
    vmp_status st;
    int c, svg, rc;

    so.width = 1200;
    so.min_width = 0.1;
    vmp_cli_begin(&p, &flame_command, argc, argv);
    while ((c = vmp_cli_next(&p)) > 0) {
        switch (c) {
        case OPT_FORMAT:
            format = p.arg;
            break;
        case OPT_RANGES:
            fo.flags |= VMP_FLAME_RANGES;
            break;
        default:
            if (vmp_cli_flame_option(cmd, c, p.arg, &fo, &so) != VMP_EXIT_OK)
                return VMP_EXIT_USAGE;
            break;
        }
    }
    if (c < 0)
        return p.exit;
    if (format && strcmp(format, "folded") != 0 && strcmp(format, "svg") != 0)
        return vmp_cli_usage_error(cmd, "unknown format '%s' (folded or svg)", format);
    if ((rc = vmp_cli_file_operand(&p, c, &path)) >= 0)
        return rc;
    svg = format ? strcmp(format, "svg") == 0 : vmp_cli_ends_with_svg(p.output);
    so.subtitle = strcmp(path, "-") == 0 ? "standard input" : path;

    if (vmp_flame_create(&f, &fo) != VMP_OK)
        return vmp_cli_fail(cmd, "out of memory");
    rc = vmp_cli_flame_read(f, cmd, path, 0);
    if (rc != VMP_EXIT_OK) {
        vmp_flame_free(f);
        return rc;
    }
    rc = vmp_cli_output_open(&out, cmd, p.output);
    if (rc != VMP_EXIT_OK) {
        vmp_flame_free(f);
        return rc;
    }
    st = svg ? vmp_flame_write_svg(f, out.f, &so) : vmp_flame_write_folded(f, out.f, 1.0);
    vmp_flame_free(f);
    return vmp_cli_flame_finish(&out, cmd, st);
}
