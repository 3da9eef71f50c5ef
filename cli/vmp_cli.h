/* SPDX-License-Identifier: MIT
 *
 * vmp_cli.h - the `vmp` command: command table entries and the helpers every
 * command shares (option parsing convention, input, output, exit codes).
 * Implements the tool side of spec.md; commands use only public library APIs.
 *
 * Conventions every command follows (documented for users in `vmp --help`):
 *   - `vmp <cmd> --help` prints the command's usage to stdout and exits 0;
 *   - a usage error prints "vmp <cmd>: <problem>" and "try 'vmp <cmd> --help'"
 *     to stderr and exits VMP_EXIT_USAGE (2);
 *   - bad input or a failed write prints one line naming the file (and the
 *     offset, for input) to stderr and exits VMP_EXIT_FAIL (1);
 *   - `-` as an input file reads standard input; `-o FILE` writes the output
 *     to FILE, `-o -` (the default) to standard output.
 *
 * Adding a command: write cli/vmp_cmd_<name>.c with
 * `int vmp_cmd_<name>(int argc, char **argv)`, declare it below, add a line to
 * the table in vmp_main.c and the file to cli/CMakeLists.txt.
 *
 * Thread safety: the CLI is single-threaded; nothing here is signal-safe.
 */
#ifndef VMP_CLI_H
#define VMP_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "vmp_reader.h"
#include "vmp_record_writer.h"

/** Exit codes of every command. */
enum {
    VMP_EXIT_OK = 0,   /* success */
    VMP_EXIT_FAIL = 1, /* failure: unreadable or invalid input, write error */
    VMP_EXIT_USAGE = 2 /* bad command line */
};

/* ---- Commands: argv[0] is the command name, as for main(). -------------- */

int vmp_cmd_archive(int argc, char **argv);
int vmp_cmd_info(int argc, char **argv);
int vmp_cmd_decode(int argc, char **argv);
int vmp_cmd_diff(int argc, char **argv);
int vmp_cmd_validate(int argc, char **argv);
int vmp_cmd_filter(int argc, char **argv);
int vmp_cmd_flame(int argc, char **argv);
int vmp_cmd_merge(int argc, char **argv);
int vmp_cmd_record(int argc, char **argv);
int vmp_cmd_report(int argc, char **argv);
int vmp_cmd_pprof(int argc, char **argv);
int vmp_cmd_speedscope(int argc, char **argv);
int vmp_cmd_import(int argc, char **argv);
int vmp_cmd_recompress(int argc, char **argv);

/* ---- Option parsing ------------------------------------------------------
 * Commands parse with getopt_long().  Call vmp_cli_getopt_begin() first (it
 * resets getopt's global state and silences its own messages), then call
 * vmp_cli_bad_option() when getopt_long() returns '?' or ':'. */

/** Reset getopt_long() for a new argument vector. */
void vmp_cli_getopt_begin(void);

/** Report the option getopt_long() just rejected as a usage error.
 *  @param cmd   command name ("info").
 *  @param argv  the vector being parsed (used to name the bad option).
 *  @param c     getopt_long()'s return value ('?' or ':').
 *  @return VMP_EXIT_USAGE. */
int vmp_cli_bad_option(const char *cmd, char **argv, int c);

/** Print a command's --help text `usage` to stdout (the `-h`/`--help` case).
 *  @return VMP_EXIT_OK, or VMP_EXIT_FAIL when stdout could not be flushed. */
int vmp_cli_help(const char *usage);

/** After option parsing, check that exactly one operand FILE is left in
 *  argv[optind..argc): with none, reports "missing FILE"; with more, "too many
 *  arguments ('<the second>')" (usage errors).
 *  @param[out] path  receives argv[optind] (borrowed) on success.
 *  @return VMP_EXIT_OK or VMP_EXIT_USAGE. */
int vmp_cli_one_file(const char **path, const char *cmd, int argc, char **argv);

/** Print "vmp <cmd>: <problem>" and the --help hint to stderr.
 *  @return VMP_EXIT_USAGE. */
int vmp_cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** Print "vmp <cmd>: <message>" to stderr (a failure, not a usage error).
 *  @return VMP_EXIT_FAIL. */
int vmp_cli_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- Input --------------------------------------------------------------- */

/** Open `path` ("-" == stdin) for reading with the default limits.
 *  On failure prints the reader's one-line message ("FILE: offset N: ...")
 *  to stderr and returns VMP_EXIT_FAIL with `*out` NULL.
 *  @param[out] out  receives the reader; the caller closes it. */
int vmp_cli_open_reader(vmp_reader **out, const char *cmd, const char *path);

/* ---- Output -------------------------------------------------------------- */

/** An output stream opened by vmp_cli_output_open(). */
typedef struct vmp_cli_output {
    FILE *f;          /* write here */
    const char *name; /* for messages: the path, or "standard output" */
    int is_stdout;
} vmp_cli_output;

/** Open `path` for writing ("-" or NULL == standard output).
 *  @return VMP_EXIT_OK, or VMP_EXIT_FAIL after printing why. */
int vmp_cli_output_open(vmp_cli_output *out, const char *cmd, const char *path);

/** Flush and close the output, detecting every write error (a full disk, a
 *  closed pipe), so that a truncated output is never mistaken for a complete
 *  one.  Always releases the stream.
 *  @return VMP_EXIT_OK, or VMP_EXIT_FAIL after printing the error. */
int vmp_cli_output_close(vmp_cli_output *out, const char *cmd);

/** Open the reader of `path` (vmp_cli_open_reader()), then the output
 *  `outpath` (vmp_cli_output_open()); on any failure both are released.
 *  @param[out] r    receives the reader; the caller closes it.
 *  @param[out] out  the output; the caller closes it.
 *  @return VMP_EXIT_OK, or VMP_EXIT_FAIL after printing why. */
int vmp_cli_open_io(
    vmp_reader **r, vmp_cli_output *out, const char *cmd, const char *path, const char *outpath);

/** End an output written by a converter that returned `st` and, on error,
 *  the message `err`: on success as vmp_cli_output_close(); on failure print
 *  `err` (prefixed with the output's name for VMP_ERR_IO) and abandon the
 *  output (vmp_cli_output_abandon(out, outpath)).
 *  @return VMP_EXIT_OK or VMP_EXIT_FAIL. */
int vmp_cli_output_finish(
    vmp_cli_output *out, const char *cmd, const char *outpath, vmp_status st, const char *err);

/** Open a record writer on `path` (vmp_record_writer_open_file()) that
 *  writes format major `major` (0 == 2, the default; 1 == 1.x), in 1.x at
 *  least format minor `minor` (the newest of its inputs': the
 *  records it passes on may need it).  On failure prints the writer's
 *  message (or "out of memory"), releases it and returns VMP_EXIT_FAIL with
 *  `*w` NULL.
 *  @param[out] w  receives the writer; the caller closes it. */
int vmp_cli_open_writer(
    vmp_record_writer **w, const char *cmd, const char *path, unsigned major, unsigned minor);

/** Parse a --format value ("1.2" or "2.0") into its major version; a usage
 *  error (exit 2, reported) for anything else. */
int vmp_cli_format_option(const char *cmd, const char *arg, unsigned *major);

/** The help line of --format, for commands that write profiles. */
#define VMP_CLI_FORMAT_HELP                                                        \
    "  --format 1.2|2.0      the output's format: 2.0 stores the samples column\n" \
    "                        by column (spec.md §5.14), several times smaller;\n" \
    "                        1.2 keeps SAMPLE records for readers older than\n"    \
    "                        format 2.0 (default 2.0)\n"

/** Give up an output after an error was already reported: close it without
 *  another message and remove the partial file, but only when `path` names a
 *  regular file (never a device such as /dev/full, a pipe or a socket). */
void vmp_cli_output_abandon(vmp_cli_output *out, const char *path);

/** Remove a partial output at `path` if it is a regular file. */
void vmp_cli_remove_partial(const char *path);

/* ---- Shared by `vmp flame` and `vmp diff` (cli/vmp_cmd_flame.c) --------- */

struct vmp_flame;
struct vmp_flame_options;
struct vmp_flame_svg_options;

/** getopt_long() values of the options both commands take (--thread-root,
 *  --state, --units, --tiers, --vm-frames, --title, --icicle, --width, --min-width); each command
 *  numbers its own long-only options from VMP_CLI_OPT_FLAME_END. */
enum {
    VMP_CLI_OPT_THREAD_ROOT = 256,
    VMP_CLI_OPT_STATE,
    VMP_CLI_OPT_TIERS,
    VMP_CLI_OPT_TITLE,
    VMP_CLI_OPT_ICICLE,
    VMP_CLI_OPT_WIDTH,
    VMP_CLI_OPT_MIN_WIDTH,
    VMP_CLI_OPT_NO_GROUP_HIDDEN,
    VMP_CLI_OPT_KIND,
    VMP_CLI_OPT_UNITS,
    VMP_CLI_OPT_VM_FRAMES,
    VMP_CLI_OPT_FLAME_END
};

/** The help line of --no-group-hidden, for every command that names
 *  functions. */
/* --kind NAME, for the views that show one sample kind (spec.md §5.15) */
#define VMP_CLI_KIND_HELP                                                           \
    "  --kind NAME       the kind of sample to show (spec.md 5.15): cpu (the\n"     \
    "                    default), or one the file declares, as 'vmp info' lists\n" \
    "                    them: alloc (bytes allocated), live, lock (ns waited)\n"

/* --vm-frames: the VM's view (spec.md R-VIEW-7), for flame, diff and pprof */
#define VMP_CLI_VM_FRAMES_HELP                                                       \
    "  --vm-frames       the VM's view (spec.md R-VIEW-7): only the frames of the\n" \
    "                    VM's language (Lua functions, Java methods) and, above\n"   \
    "                    the innermost one, the C code it called by its symbol,\n"   \
    "                    or as [<vm> <state>] ('[LuaJIT gc]') where no symbol\n"     \
    "                    names it; C frames between VM frames are left out\n"

#define VMP_CLI_NO_GROUP_HIDDEN_HELP                                                 \
    "  --no-group-hidden show the methods of each hidden class (HotSpot lambdas,\n"  \
    "                    MethodHandle forms, defineHiddenClass) apart; by default\n" \
    "                    they are one name with their count: 'Name.m [x1000]'\n"

/** The `struct option` entries (getopt.h) of those options, for the long
 *  option table of `vmp flame` and `vmp diff`. */
/* clang-format off */
#define VMP_CLI_FLAME_LONGOPTS                                       \
    {"thread-root", no_argument, NULL, VMP_CLI_OPT_THREAD_ROOT},     \
    {"state", no_argument, NULL, VMP_CLI_OPT_STATE},                 \
    {"units", no_argument, NULL, VMP_CLI_OPT_UNITS},                 \
    {"tiers", no_argument, NULL, VMP_CLI_OPT_TIERS},                 \
    {"vm-frames", no_argument, NULL, VMP_CLI_OPT_VM_FRAMES},         \
    {"title", required_argument, NULL, VMP_CLI_OPT_TITLE},           \
    {"icicle", no_argument, NULL, VMP_CLI_OPT_ICICLE},               \
    {"width", required_argument, NULL, VMP_CLI_OPT_WIDTH},           \
    {"min-width", required_argument, NULL, VMP_CLI_OPT_MIN_WIDTH},   \
    {"no-group-hidden", no_argument, NULL, VMP_CLI_OPT_NO_GROUP_HIDDEN}, \
    {"kind", required_argument, NULL, VMP_CLI_OPT_KIND}
/* clang-format on */

/** Apply the option getopt_long() returned as `c` (argument in optarg) to
 *  `fo` and `so` when it is one of the VMP_CLI_OPT_* flame options; --width
 *  and --min-width are checked with vmp_cli_parse_px().  Any other `c` is
 *  reported as vmp_cli_bad_option() does.
 *  @param so  its title borrows optarg (argv).
 *  @return VMP_EXIT_OK, or VMP_EXIT_USAGE after printing the usage error. */
int vmp_cli_flame_option(const char *cmd,
                         char **argv,
                         int c,
                         struct vmp_flame_options *fo,
                         struct vmp_flame_svg_options *so);

/** Close the output of a flame graph written with status `st`: VMP_ERR_NOMEM
 *  is reported as "out of memory"; a write error (VMP_ERR_IO) is reported by
 *  vmp_cli_output_close(), with errno.
 *  @return VMP_EXIT_OK or VMP_EXIT_FAIL. */
int vmp_cli_flame_finish(vmp_cli_output *out, const char *cmd, vmp_status st);

/** Read profile `path` into column `column` of `f` (vmp_flame_read()).  A
 *  truncated file gives a warning on stderr and counts as read; any other
 *  problem prints one line and returns VMP_EXIT_FAIL.
 *  @return VMP_EXIT_OK or VMP_EXIT_FAIL. */
int vmp_cli_flame_read(struct vmp_flame *f, const char *cmd, const char *path, unsigned int column);

/** Parse a number of pixels `arg` in [lo, hi] for option `opt` into `*out`.
 *  @return VMP_EXIT_OK, or VMP_EXIT_USAGE after printing the usage error. */
int vmp_cli_parse_px(
    const char *cmd, const char *opt, const char *arg, double lo, double hi, double *out);

/** 1 when `path` (may be NULL) ends in ".svg". */
int vmp_cli_ends_with_svg(const char *path);

/* ---- Repeated-run comparisons (cli/vmp_diffstat_out.c) ------------------- */

struct vmp_diffstat_row;

enum {
    VMP_CLI_DIFFSTAT_TEXT = 0,
    VMP_CLI_DIFFSTAT_CSV = 1,
    VMP_CLI_DIFFSTAT_JSON = 2
};

/** Parse --alpha `arg`, a significance level in (0, 1), into `*out`.
 *  @return VMP_EXIT_OK, or VMP_EXIT_USAGE after printing the usage error. */
int vmp_cli_parse_alpha(const char *cmd, const char *arg, double *out);

/** Print the rows of vmp_diffstat() to `f` as text (a heading that says
 *  where the noise estimate comes from, then one line per function:
 *  significance mark "**" (self and total), "*s", "*t", the changes in
 *  percentage points with their intervals, the shares, the adjusted
 *  p-values, the name), CSV (one header line) or JSON, all in percent.
 *  `base` and `new_runs` name the runs of each side (file names, run ids). */
void vmp_cli_diffstat_print(FILE *f,
                            const struct vmp_diffstat_row *rows,
                            size_t n,
                            const char *const *base,
                            size_t n_base,
                            const char *const *new_runs,
                            size_t n_new,
                            double alpha,
                            int format);

#endif
