/* SPDX-License-Identifier: MIT
 *
 * vmp_cmd_import.c - `vmp import`: a pprof profile as a vmp profile written
 * by the writer library (spec.md §5 records).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmp_cli.h"
#include "vmp_convert.h"

enum {
    OPT_SAMPLE_INDEX = VMP_CLI_OPT_END,
};

static const char import_synopsis[] =
    "usage: vmp import [--sample-index N] [--stats] -o OUT.vmp FILE\n"
    "\n"
    "Read the pprof profile FILE ('-' = standard input; gzip-compressed or\n"
    "raw profile.proto) and write it as a vmp profile:\n"
    "  header     VM name 'pprof'; sampling interval = the period when its unit\n"
    "             is nanoseconds; labels pprof.sample_types, pprof.sample_index,\n"
    "             pprof.period_type, pprof.period, pprof.time_nanos,\n"
    "             pprof.duration_nanos, pprof.comment, pprof.comment.2, ... (one per\n"
    "             comment),\n"
    "             pprof.drop_frames, pprof.keep_frames, pprof.other_labels;\n"
    "             VM states = the values of the samples' 'state' label\n"
    "  functions  one FUNCTION per pprof Function (same id): name, signature =\n"
    "             system_name when different, file, first line\n"
    "  stacks     each Line of each Location is a symbolic frame (function id,\n"
    "             bytecode pc), inlined Lines inside their caller; the bytecode\n"
    "             pc is A for the '<function> A->B' range Lines that `vmp pprof`\n"
    "             writes, else the Line's source line (when > 0), else unknown.\n"
    "             Mappings and addresses are not kept\n"
    "  threads    the 'thread_id' (number) and 'thread' (name) labels; samples\n"
    "             with neither belong to thread 1 'main'\n"
    "  samples    value N (--sample-index, default 0: the first sample type) is\n"
    "             the weight; values above 4294967295 become several samples,\n"
    "             samples of value 0 are skipped; other labels are dropped (their\n"
    "             keys are listed in pprof.other_labels).  Sample i is stamped\n"
    "             i x period ns (i ns without a period): the same input always\n"
    "             gives the same file\n"
    "So `vmp pprof` then `vmp import` keeps `vmp report --no-ranges`'s function\n"
    "rows (names and samples); code kinds become 'function' and ranges A->A.\n"
    "\n"
    "options:\n";

static const char import_epilogue[] =
    "\n"
    "Exit status: 0 success; 1 unreadable or invalid input (truncated gzip or\n"
    "protobuf, wrong field types, ids that point nowhere, negative or huge\n"
    "values: one line naming the file; an output file is removed) or write\n"
    "error; 2 usage error.\n";
static const vmp_cli_option import_options[] = {
    {"output", 'o', "FILE", "-o FILE", "write to FILE (required; '-' = standard output)"},
    {"sample-index", OPT_SAMPLE_INDEX, "N", NULL,
     "which sample value becomes the weight (default 0)"},
    VMP_CLI_OPTION_STATS,
    {"format", VMP_CLI_OPT_FORMAT_VERSION, "1.2|2.0", NULL,
     "the output's format: 2.0 stores the samples column by\n"
     "column (spec.md §5.14), several times smaller, for\n"
     "readers of format 2.0 (the default); 1.2 keeps\n"
     "SAMPLE records for older readers"},
    VMP_CLI_OPTION_HELP,
};
static const vmp_cli_command import_command = VMP_CLI_COMMAND(import, 21);

/* Read all of `path` ("-" == stdin) into a malloc'd buffer. */
static int slurp(const char *cmd, const char *path, unsigned char **out, size_t *size_out)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    unsigned char *buf = NULL;
    size_t n = 0, cap = 0;
    if (!f)
        return vmp_cli_fail(cmd, "%s: %s", path, strerror(errno));
    for (;;) {
        size_t got;
        if (n == cap) {
            unsigned char *p;
            cap = cap ? cap * 2 : 1 << 16;
            p = realloc(buf, cap);
            if (!p) {
                free(buf);
                if (f != stdin)
                    fclose(f);
                return vmp_cli_fail(cmd, "%s: out of memory", path);
            }
            buf = p;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        int e = errno;
        free(buf);
        if (f != stdin)
            fclose(f);
        return vmp_cli_fail(cmd, "%s: read error: %s", path, strerror(e));
    }
    if (f != stdin)
        fclose(f);
    *out = buf;
    *size_out = n;
    return VMP_EXIT_OK;
}

int vmp_cmd_import(int argc, char **argv)
{
    vmp_cli_parser p;
    const char *cmd = "import", *path;
    vmp_import_options o = VMP_IMPORT_OPTIONS_INIT;
    vmp_convert_stats stats;
    unsigned char *data = NULL;
    size_t size = 0;
    vmp_status st;
    char err[512], *end;
    unsigned long v;
    int c, rc, fd, is_stdout;

    vmp_cli_begin(&p, &import_command, argc, argv);
    while ((c = vmp_cli_next(&p)) > 0) {
        switch (c) {
        case OPT_SAMPLE_INDEX:
            errno = 0;
            v = strtoul(p.arg, &end, 10);
            if (errno || *end || end == p.arg || p.arg[0] == '-' || v > 1000000)
                return vmp_cli_usage_error(cmd, "bad --sample-index '%s'", p.arg);
            o.sample_index = (unsigned)v;
            break;
        }
    }
    if ((rc = vmp_cli_file_operand(&p, c, &path)) >= 0)
        return rc;
    if (!p.output)
        return vmp_cli_usage_error(cmd, "missing -o OUT.vmp");
    o.format_major = p.format_major;

    if (slurp(cmd, path, &data, &size) != VMP_EXIT_OK)
        return VMP_EXIT_FAIL;
    is_stdout = strcmp(p.output, "-") == 0;
    fd = is_stdout ? STDOUT_FILENO : open(p.output, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0) {
        int e = errno;
        free(data);
        return vmp_cli_fail(cmd, "%s: %s", p.output, strerror(e));
    }
    memset(&stats, 0, sizeof stats);
    st = vmp_pprof_import(data, size, strcmp(path, "-") == 0 ? "standard input" : path, fd, &o,
                          &stats, err, sizeof err);
    free(data);
    if (!is_stdout && close(fd) != 0 && st >= 0) {
        snprintf(err, sizeof err, "%s: %s", p.output, strerror(errno));
        st = VMP_ERR_IO;
    }
    if (st < 0) {
        vmp_cli_fail(cmd, "%s", err);
        if (!is_stdout)
            vmp_cli_remove_partial(p.output);
        return VMP_EXIT_FAIL;
    }
    if (p.stats)
        fprintf(stderr,
                "vmp import: %" PRIu64 " samples (weight %" PRIu64 "), %" PRIu64
                " functions, %" PRIu64 " bytes\n",
                stats.samples, stats.weight, stats.functions, stats.bytes);
    return VMP_EXIT_OK;
}
