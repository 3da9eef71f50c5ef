/* SPDX-License-Identifier: MIT
 *
 * vmp_cmd_recompress.c - `vmp recompress`: copy a profile with every data
 * chunk compressed again at another zstd level, records and chunk
 * boundaries unchanged (vmp_recompress_run(), analyze/vmp_rewrite.h;
 * spec.md §3-§6).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmp_cli.h"
#include "vmp_rewrite.h"

static const char recompress_synopsis[] =
    "usage: vmp recompress [--level N] FILE -o OUT\n"
    "\n"
    "Copy the profile FILE ('-' = standard input) to OUT ('-' = standard\n"
    "output; required, since the output is binary) with every data chunk\n"
    "compressed again at zstd level N (1 to 22; default 19).  The records are\n"
    "not decoded and encoded again: each chunk is decompressed, checked as\n"
    "every reader checks it (content size, checksum, limits, every record\n"
    "whole) and its very bytes compressed again, in the same chunks, so\n"
    "`vmp decode` prints the same for FILE and OUT and OUT passes `vmp\n"
    "validate` when FILE does.  The file header frame is copied as it is; the\n"
    "END record stays in its chunk; a new seek table with OUT's offsets\n"
    "follows it (also when FILE had none, or a damaged one, which is reported).\n"
    "Other skippable frames of FILE are left out.  A FILE without END (its\n"
    "writer did not close it) is copied without one, and without a seek\n"
    "table, with a warning.  One chunk in memory at a time.\n"
    "\n"
    "Prints one line on standard error: the sizes and OUT's size as a share\n"
    "of FILE's, e.g. 'vmp recompress: in.vmp 1,234,567 -> 987,654 bytes\n"
    "(0.800, level 19)'.  A damaged or truncated FILE fails, naming the file and\n"
    "offset, and leaves no OUT.  OUT may not be FILE itself.\n"
    "\n"
    "options:\n";

static const char recompress_epilogue[] =
    "\n"
    "Exit status: 0 success, 1 unreadable input or write error, 2 usage error.\n";
static const vmp_cli_option recompress_options[] = {
    {"level", 'l', "N", NULL, "zstd compression level, 1 (fast) to 22 (small)"},
    VMP_CLI_OPTION_OUTPUT_OUT,
    VMP_CLI_OPTION_HELP,
};
static const vmp_cli_command recompress_command = VMP_CLI_COMMAND(recompress, 22);

#define DEFAULT_LEVEL 19

/* The level in `arg`: decimal digits only, in the range zstd's levels take. */
static int parse_level(const char *arg, int *level)
{
    long v = 0;
    const char *p;
    if (!*arg || strlen(arg) > 3)
        return -1;
    for (p = arg; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (*p - '0');
    }
    if (v < VMP_RECOMPRESS_LEVEL_MIN || v > VMP_RECOMPRESS_LEVEL_MAX)
        return -1;
    *level = (int)v;
    return 0;
}

/* stat() of a path, or of the standard stream it stands for ("-"). */
static int stat_path(const char *path, int std_fd, struct stat *st)
{
    return strcmp(path, "-") == 0 ? fstat(std_fd, st) : stat(path, st);
}

/* 1 when OUT is the regular file FILE is (same device and inode): writing it
 * would truncate the input before it is read. */
static int same_file(const char *in_path, const char *out_path)
{
    struct stat in, out;
    if (stat_path(in_path, STDIN_FILENO, &in) != 0 || stat_path(out_path, STDOUT_FILENO, &out) != 0)
        return 0;
    return S_ISREG(in.st_mode) && in.st_dev == out.st_dev && in.st_ino == out.st_ino;
}

/* `v` with a comma between groups of three digits ("1,234,567"). */
static const char *with_commas(char *buf, size_t size, uint64_t v)
{
    char digits[32];
    size_t n = (size_t)snprintf(digits, sizeof digits, "%" PRIu64, v), i, o = 0;
    for (i = 0; i < n && o + 2 < size; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
    return buf;
}

/* The warnings a run can leave: the input's seek table set aside, no END. */
static void warn_about_input(const char *cmd, vmp_reader *r, const char *in_name,
                             const vmp_recompress_stats *s)
{
    if (vmp_reader_warning(r))
        fprintf(stderr, "vmp %s: warning: %s%s\n", cmd, vmp_reader_warning(r),
                s->has_end ? "; the output has a correct one" : "");
    if (!s->has_end)
        fprintf(stderr,
                "vmp %s: warning: %s: offset %" PRIu64
                ": no END record (the writer did not close the file): the output has none "
                "either, and no seek table\n",
                cmd, in_name, s->bytes_in);
}

/* The line that says what the run did. */
static void print_sizes(const char *cmd, const char *in_name, const vmp_recompress_stats *s,
                        int level)
{
    char in[32], out[32];
    fprintf(stderr, "vmp %s: %s %s -> %s bytes (%.3f, level %d)\n", cmd, in_name,
            with_commas(in, sizeof in, s->bytes_in), with_commas(out, sizeof out, s->bytes_out),
            s->bytes_in ? (double)s->bytes_out / (double)s->bytes_in : 0.0, level);
}

/* Recompress the open reader into the open output and end the output. */
static int run(const char *cmd, vmp_reader *r, vmp_cli_output *out, const char *in_path,
               const char *out_path, int level)
{
    const char *in_name = strcmp(in_path, "-") == 0 ? "standard input" : in_path;
    vmp_recompress_stats stats;
    char err[1024];
    vmp_status st =
        vmp_recompress_run(&stats, fileno(out->f), out->name, r, level, err, sizeof err);
    int rc;
    if (st < 0) {
        vmp_cli_fail(cmd, "%s", err);
        vmp_cli_output_abandon(out, out_path);
        return VMP_EXIT_FAIL;
    }
    rc = vmp_cli_output_close(out, cmd);
    if (rc != VMP_EXIT_OK) {
        vmp_cli_remove_partial(out_path);
        return rc;
    }
    warn_about_input(cmd, r, in_name, &stats);
    print_sizes(cmd, in_name, &stats, level);
    return VMP_EXIT_OK;
}

int vmp_cmd_recompress(int argc, char **argv)
{
    vmp_cli_parser p;
    const char *cmd = "recompress", *in_path;
    int level = DEFAULT_LEVEL, c, rc;
    vmp_reader *r = NULL;
    vmp_cli_output out;
    vmp_cli_begin(&p, &recompress_command, argc, argv);
    while ((c = vmp_cli_next(&p)) > 0) {
        switch (c) {
        case 'l':
            if (parse_level(p.arg, &level))
                return vmp_cli_usage_error(cmd, "--level: expected 1 to 22, got '%s'", p.arg);
            break;
        }
    }
    if ((rc = vmp_cli_file_operand(&p, c, &in_path)) >= 0)
        return rc;
    if (!p.output)
        return vmp_cli_usage_error(cmd, "missing -o OUT");
    if (same_file(in_path, p.output))
        return vmp_cli_usage_error(cmd,
                                   "the output (%s) is the input file itself (same device and "
                                   "inode); write to another file",
                                   strcmp(p.output, "-") == 0 ? "standard output" : p.output);
    if (vmp_cli_open_io(&r, &out, cmd, in_path, p.output) != VMP_EXIT_OK)
        return VMP_EXIT_FAIL;
    rc = run(cmd, r, &out, in_path, p.output, level);
    vmp_reader_close(r);
    return rc;
}
