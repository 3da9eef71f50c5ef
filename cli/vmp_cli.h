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
 * `int vmp_cmd_<name>(int argc, char **argv)`, its options in a table of
 * vmp_cli_option and its help around them in a vmp_cli_command (parsed with
 * vmp_cli_begin() and vmp_cli_next(), which also answer --help and report
 * usage errors); declare it below, add a line to the table in vmp_main.c and
 * the file to cli/CMakeLists.txt.
 *
 * Thread safety: the CLI is single-threaded; nothing here is signal-safe.
 */
#ifndef VMP_CLI_H
#define VMP_CLI_H

#include <getopt.h>
#include <stddef.h>
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

/* ---- Options ------------------------------------------------------------
 * Each command declares its options once, in a table of vmp_cli_option: the
 * spelling getopt_long() parses, the value it takes and the help line.  The
 * parser (vmp_cli_next()) answers --help from the table and reports every
 * usage error of an option (unknown, missing value) in one wording. */

/** One option of a command, or one entry of its help that is not an option
 *  (key 0: a line naming several options, or free text). */
typedef struct vmp_cli_option {
    const char *name; /* long name without "--" ("format"), or NULL */
    int key;          /* what vmp_cli_next() returns: below 256 also the
                         short option's letter ('o' is -o); long-only
                         options use keys from 256 (VMP_CLI_OPT_*); 0 for
                         help-only entries */
    const char *arg;  /* the value's name in help ("FILE"); NULL: no value */
    const char *spec; /* how help spells it, when not "-c, --name ARG" */
    const char *help; /* the help text, lines joined by '\n' (continued at
                         the command's help column); NULL: not listed */
} vmp_cli_option;

/** A command's options and the help text around them. */
typedef struct vmp_cli_command {
    const char *name;              /* "flame", "archive add": messages */
    const char *synopsis[2];       /* help before the options, in parts (a C
                                      string literal has a portable length
                                      limit); NULL: none */
    const vmp_cli_option *options; /* its options and help entries */
    size_t n_options;
    const char *epilogue;                    /* help after the options, or NULL */
    int column;                              /* where help texts start */
    int stop_at_operand;                     /* 1: options end at the first operand
                                                (`vmp record -- java -X`) */
    const struct vmp_cli_command *help_page; /* print this command's help
                                       instead (subcommands sharing a
                                       page), or NULL */
    void (*write_more)(FILE *f);             /* writes what follows the synopsis,
                                                before the options (help made from
                                                a registry), or NULL */
} vmp_cli_command;

/** The command `cmd` of the tables <cmd>_synopsis, <cmd>_options and
 *  <cmd>_epilogue, its help texts at column `col`. */
#define VMP_CLI_COMMAND(cmd, col)                                                                \
    {                                                                                            \
        .name = #cmd, .synopsis = {cmd##_synopsis}, .options = cmd##_options,                    \
        .n_options = sizeof cmd##_options / sizeof cmd##_options[0], .epilogue = cmd##_epilogue, \
        .column = (col)                                                                          \
    }

/** The most options one command's table may hold. */
#define VMP_CLI_MAX_OPTIONS 40

/** Keys of the long-only options several commands take; each command
 *  numbers its own long-only options from VMP_CLI_OPT_END. */
enum {
    VMP_CLI_OPT_THREAD_ROOT = 256, /* the flame options (vmp_cli_flame_option()) */
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
    VMP_CLI_OPT_FORMAT_VERSION, /* --format 1.2|2.0 */
    VMP_CLI_OPT_STATS,          /* --stats */
    VMP_CLI_OPT_END
};

/** Options that several commands take, with their help lines. */
#define VMP_CLI_OPTION_HELP                                \
    {                                                      \
        "help", 'h', NULL, "-h, --help", "print this help" \
    }
#define VMP_CLI_OPTION_OUTPUT                                                                  \
    {                                                                                          \
        "output", 'o', "FILE", "-o FILE", "write to FILE ('-' = standard output, the default)" \
    }
#define VMP_CLI_OPTION_OUTPUT_OUT                               \
    {                                                           \
        "output", 'o', "OUT", NULL, "where to write the result" \
    }

/* --format for commands that write profiles */
#define VMP_CLI_OPTION_FORMAT_VERSION                              \
    {                                                              \
        "format", VMP_CLI_OPT_FORMAT_VERSION, "1.2|2.0", NULL,     \
            "the output's format: 2.0 stores the samples column\n" \
            "by column (spec.md §5.14), several times smaller;\n" \
            "1.2 keeps SAMPLE records for readers older than\n"    \
            "format 2.0 (default 2.0)"                             \
    }

/* --stats, for the converters */
#define VMP_CLI_OPTION_STATS                                                                       \
    {                                                                                              \
        "stats", VMP_CLI_OPT_STATS, NULL, NULL, "print the conversion's figures to standard error" \
    }

/* --kind NAME, for the views that show one sample kind (spec.md §5.15) */
#define VMP_CLI_OPTION_KIND                                             \
    {                                                                   \
        "kind", VMP_CLI_OPT_KIND, "NAME", NULL,                         \
            "the kind of sample to show (spec.md 5.15): cpu (the\n"     \
            "default), or one the file declares, as 'vmp info' lists\n" \
            "them: alloc (bytes allocated), live, lock (ns waited)"     \
    }

/* --vm-frames: the VM's view (spec.md R-VIEW-7), for flame, diff and pprof */
#define VMP_CLI_OPTION_VM_FRAMES                                         \
    {                                                                    \
        "vm-frames", VMP_CLI_OPT_VM_FRAMES, NULL, NULL,                  \
            "the VM's view (spec.md R-VIEW-7): only the frames of the\n" \
            "VM's language (Lua functions, Java methods) and, above\n"   \
            "the innermost one, the C code it called by its symbol,\n"   \
            "or as [<vm> <state>] ('[LuaJIT gc]') where no symbol\n"     \
            "names it; C frames between VM frames are left out"          \
    }

/* --no-group-hidden, for every command that names functions */
#define VMP_CLI_OPTION_NO_GROUP_HIDDEN                                   \
    {                                                                    \
        "no-group-hidden", VMP_CLI_OPT_NO_GROUP_HIDDEN, NULL, NULL,      \
            "show the methods of each hidden class (HotSpot lambdas,\n"  \
            "MethodHandle forms, defineHiddenClass) apart; by default\n" \
            "they are one name with their count: 'Name.m [x1000]'"       \
    }

/* The flame options of `vmp flame` and `vmp diff`, each with its help line
 * (NULL: listed by a line of several). */
#define VMP_CLI_OPTION_THREAD_ROOT(help)                         \
    {                                                            \
        "thread-root", VMP_CLI_OPT_THREAD_ROOT, NULL, NULL, help \
    }
#define VMP_CLI_OPTION_STATE(help)                   \
    {                                                \
        "state", VMP_CLI_OPT_STATE, NULL, NULL, help \
    }
#define VMP_CLI_OPTION_UNITS(help)                   \
    {                                                \
        "units", VMP_CLI_OPT_UNITS, NULL, NULL, help \
    }
#define VMP_CLI_OPTION_TIERS(help)                   \
    {                                                \
        "tiers", VMP_CLI_OPT_TIERS, NULL, NULL, help \
    }
#define VMP_CLI_OPTION_TITLE(help)                     \
    {                                                  \
        "title", VMP_CLI_OPT_TITLE, "TEXT", NULL, help \
    }
#define VMP_CLI_OPTION_ICICLE(help)                    \
    {                                                  \
        "icicle", VMP_CLI_OPT_ICICLE, NULL, NULL, help \
    }
#define VMP_CLI_OPTION_WIDTH(help)                   \
    {                                                \
        "width", VMP_CLI_OPT_WIDTH, "PX", NULL, help \
    }
#define VMP_CLI_OPTION_MIN_WIDTH(help)                       \
    {                                                        \
        "min-width", VMP_CLI_OPT_MIN_WIDTH, "PX", NULL, help \
    }

/** The parser of one command line (vmp_cli_begin(), then vmp_cli_next()). */
typedef struct vmp_cli_parser {
    const vmp_cli_command *cmd;
    int argc;
    char **argv;
    const char *arg;       /* the value of the option vmp_cli_next() returned */
    const char *output;    /* -o FILE (key 'o'), which vmp_cli_next() keeps
                              here instead of returning it; NULL: none */
    unsigned format_major; /* --format 1.2|2.0 (VMP_CLI_OPT_FORMAT_VERSION):
                              1 or 2, kept here; 0: not given */
    int stats;             /* --stats (VMP_CLI_OPT_STATS) given, kept here */
    int exit;              /* when vmp_cli_next() returned -1: the exit status */
    struct option longopts[VMP_CLI_MAX_OPTIONS + 1]; /* getopt_long()'s */
    char shortopts[3 * VMP_CLI_MAX_OPTIONS + 3];
} vmp_cli_parser;

/** Begin parsing argv[1..argc) by the table of `cmd` (resets getopt_long()'s
 *  global state; the parser borrows `cmd` and `argv`). */
void vmp_cli_begin(vmp_cli_parser *p, const vmp_cli_command *cmd, int argc, char **argv);

/** The next option: its key (the value in p->arg), but for the options
 *  the parser applies itself: -o (kept in p->output), --format 1.2|2.0
 *  (p->format_major), --stats (p->stats), --no-group-hidden and
 *  --kind (VMP_CLI_OPT_NO_GROUP_HIDDEN, VMP_CLI_OPT_KIND: the analysis's
 *  process-wide defaults, vmp_analysis_add_default_flags() and
 *  vmp_analysis_set_default_kind()); 0 when the options
 *  end (the operands are argv[optind..argc)); -1 when the command is done,
 *  with p->exit its exit status: after printing the help for -h/--help
 *  (VMP_EXIT_OK, or VMP_EXIT_FAIL when stdout failed), or a usage error
 *  (VMP_EXIT_USAGE: "unknown option '--x'", "option '-o' needs a value"),
 *  or VMP_EXIT_FAIL for a table of more than VMP_CLI_MAX_OPTIONS options. */
int vmp_cli_next(vmp_cli_parser *p);

/** How an option of `cmd` is spelled on the command line, for messages:
 *  "--name", or "-c" for a short-only option; "?" for an unknown key. */
const char *vmp_cli_option_name(const vmp_cli_command *cmd, int key, char *buf, size_t size);

/** Print the help of `cmd` to stdout (vmp_cli_write_help()).
 *  @return VMP_EXIT_OK, or VMP_EXIT_FAIL when stdout could not be flushed. */
int vmp_cli_print_help(const vmp_cli_command *cmd);

/** Write the help of `cmd` to `f`: the synopsis, each listed option as
 *  "  <spec>" then its text at cmd->column (on the next line when the spec
 *  does not fit), free text as it is, then the epilogue. */
void vmp_cli_write_help(FILE *f, const vmp_cli_command *cmd);

/** After vmp_cli_next() returned `c` (0 or -1): check that exactly one
 *  operand FILE follows the options; with none, reports "missing FILE"; with
 *  more, "too many arguments ('<the second>')" (usage errors).
 *  @param[out] path  receives it (borrowed from argv).
 *  @return -1 to go on with `*path`, else the exit status: p->exit when `c`
 *          is -1 (after --help or a usage error), VMP_EXIT_USAGE. */
int vmp_cli_file_operand(vmp_cli_parser *p, int c, const char **path);

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
int vmp_cli_open_io(vmp_reader **r, vmp_cli_output *out, const char *cmd, const char *path,
                    const char *outpath);

/** End an output written by a converter that returned `st` and, on error,
 *  the message `err`: on success as vmp_cli_output_close(); on failure print
 *  `err` (prefixed with the output's name for VMP_ERR_IO) and abandon the
 *  output (vmp_cli_output_abandon(out, outpath)).
 *  @return VMP_EXIT_OK or VMP_EXIT_FAIL. */
int vmp_cli_output_finish(vmp_cli_output *out, const char *cmd, const char *outpath, vmp_status st,
                          const char *err);

struct vmp_convert_stats;

/** A converter of convert/vmp_convert.h (vmp_pprof_write(),
 *  vmp_speedscope_write()) behind one signature: `opts` is its options. */
typedef vmp_status (*vmp_cli_converter)(vmp_reader *r, FILE *out, const void *opts,
                                        struct vmp_convert_stats *stats, char *err,
                                        size_t err_size);

/** Convert the profile `path` to `outpath` with `convert` (vmp_cli_open_io(),
 *  then vmp_cli_output_finish(): a failed conversion removes a partial
 *  output file).
 *  @param[out] stats  zeroed, then the converter's figures.
 *  @return VMP_EXIT_OK or VMP_EXIT_FAIL (reported). */
int vmp_cli_convert(const char *cmd, const char *path, const char *outpath,
                    vmp_cli_converter convert, const void *opts, struct vmp_convert_stats *stats);

/** Open a record writer on `path` (vmp_record_writer_open_file()) that
 *  writes format major `major` (0 == 2, the default; 1 == 1.x), in 1.x at
 *  least format minor `minor` (the newest of its inputs': the
 *  records it passes on may need it).  On failure prints the writer's
 *  message (or "out of memory"), releases it and returns VMP_EXIT_FAIL with
 *  `*w` NULL.
 *  @param[out] w  receives the writer; the caller closes it. */
int vmp_cli_open_writer(vmp_record_writer **w, const char *cmd, const char *path, unsigned major,
                        unsigned minor);

/** Parse a --format value ("1.2" or "2.0") into its major version; a usage
 *  error (exit 2, reported) for anything else. */
int vmp_cli_format_option(const char *cmd, const char *arg, unsigned *major);

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

/** Apply the flame option `key` (VMP_CLI_OPT_THREAD_ROOT to _VM_FRAMES) with
 *  value `arg` to `fo` and `so`; --width and --min-width are checked with
 *  vmp_cli_parse_px().
 *  @param so  its title borrows `arg` (argv).
 *  @return VMP_EXIT_OK, or VMP_EXIT_USAGE after printing the usage error
 *          (also for a key that is no flame option). */
int vmp_cli_flame_option(const char *cmd, int key, const char *arg, struct vmp_flame_options *fo,
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
int vmp_cli_parse_px(const char *cmd, const char *opt, const char *arg, double lo, double hi,
                     double *out);

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
void vmp_cli_diffstat_print(FILE *f, const struct vmp_diffstat_row *rows, size_t n,
                            const char *const *base, size_t n_base, const char *const *new_runs,
                            size_t n_new, double alpha, int format);

#endif
