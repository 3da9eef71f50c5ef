/* SPDX-License-Identifier: MIT
 *
 * vmp_cmd_merge.c - `vmp merge`: combine profiles of different processes
 * and runs into one valid profile (analyze/vmp_rewrite.h; spec.md "Merged
 * files").
 */
#include <stdlib.h>
#include <string.h>

#include "vmp_cli.h"
#include "vmp_rewrite.h"

static const char merge_synopsis[] =
    "usage: vmp merge FILE... -o OUT\n"
    "\n"
    "Merge the profiles FILE... (at most one '-' = standard input) into OUT\n"
    "('-' = standard output; required).  The result is one valid profile whose\n"
    "report (functions, bytecode ranges, stacks, threads, states) is the sum\n"
    "of the inputs' reports; merging is associative.  How (spec.md, \"Merged\n"
    "files\"):\n"
    "  - every id (modules, zones, code objects, functions, threads, stack\n"
    "    nodes) is renumbered, so nothing of one input collides with another;\n"
    "  - each input's generations are moved to a range of their own, and all\n"
    "    of its code is freed (empty CODE_SNAPSHOTs) before the next input's\n"
    "    generations begin: a pc of one input never resolves to code of\n"
    "    another; pcs are kept as they were, never offset;\n"
    "  - modules are not generation-scoped: a module is copied unless it\n"
    "    overlaps a module of another input already in OUT; the same binary at\n"
    "    the same place (equal build id, bias and range) is shared.  A frame in\n"
    "    a module left out becomes a symbolic frame of a FUNCTION named after\n"
    "    the (demangled) symbol: its name is kept, its kind reads \"function\"\n"
    "    instead of \"C\".  A frame that resolved to nothing becomes pc 0 (no\n"
    "    module holding address 0 is copied), so it stays unknown.  A sample's\n"
    "    pc is kept when it resolves in OUT as in its input; a FAILED_SAMPLE\n"
    "    (it has no stack) whose pc cannot be kept loses its attribution;\n"
    "  - vocabularies (states, code kinds, tiers, event and counter kinds,\n"
    "    failure reasons) are unioned and indexes remapped;\n"
    "  - labels are kept as \"input.N.<label>\", with input.N.source (the file\n"
    "    name), input.N.producer, input.N.vm_name and input.N.pid;\n"
    "  - times move to the earliest input's time origin (start_realtime); the\n"
    "    END counts are the output's, dropped counts the inputs' sums.\n"
    "Memory grows with the inputs' metadata and distinct stacks, not samples.\n"
    "\n"
    "options:\n";

static const char merge_epilogue[] =
    "\n"
    "Exit status: 0 success, 1 unreadable input or write error, 2 usage error.\n";
static const vmp_cli_option merge_options[] = {VMP_CLI_OPTION_FORMAT_VERSION,
                                               VMP_CLI_OPTION_OUTPUT_OUT, VMP_CLI_OPTION_HELP};
static const vmp_cli_command merge_command = VMP_CLI_COMMAND(merge, 24);

int vmp_cmd_merge(int argc, char **argv)
{
    vmp_cli_parser p;
    const char *cmd = "merge";
    vmp_reader **rs;
    vmp_record_writer *w = NULL;
    vmp_status st;
    char err[1024];
    int c, rc = VMP_EXIT_OK, n, i, stdin_seen = 0;
    unsigned minor = 0; /* the inputs' newest minor */
    vmp_cli_begin(&p, &merge_command, argc, argv);
    while ((c = vmp_cli_next(&p)) > 0)
        ; /* --format and -o are the parser's */
    if (c < 0)
        return p.exit;
    if (optind >= argc)
        return vmp_cli_usage_error(cmd, "missing FILE");
    if (!p.output)
        return vmp_cli_usage_error(cmd, "missing -o OUT");
    n = argc - optind;
    for (i = 0; i < n; i++)
        if (strcmp(argv[optind + i], "-") == 0 && stdin_seen++)
            return vmp_cli_usage_error(cmd, "standard input ('-') given twice");
    rs = calloc((size_t)n, sizeof *rs);
    if (!rs)
        return vmp_cli_fail(cmd, "out of memory");
    for (i = 0; i < n && rc == VMP_EXIT_OK; i++) {
        rc = vmp_cli_open_reader(&rs[i], cmd, argv[optind + i]);
        if (rc == VMP_EXIT_OK) { /* the output's minor: the newest input's */
            vmp_reader_info info;
            vmp_reader_get_info(rs[i], &info);
            if (info.format_major > 1) /* 2.0 holds what 1.2 does */
                minor = 2;
            minor = info.format_minor > minor && info.format_major == 1 ? info.format_minor : minor;
        }
    }
    if (rc == VMP_EXIT_OK)
        rc = vmp_cli_open_writer(&w, cmd, p.output, p.format_major, minor);
    if (rc == VMP_EXIT_OK) {
        st = vmp_merge_run(NULL, w, rs, (const char *const *)(argv + optind), (size_t)n, err,
                           sizeof err);
        if (st < 0)
            rc = vmp_cli_fail(cmd, "%s", err);
    }
    vmp_record_writer_close(w);
    for (i = 0; i < n; i++)
        vmp_reader_close(rs[i]);
    free(rs);
    return rc;
}
