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

/** Exit codes of every command. */
enum {
    VMP_EXIT_OK = 0,   /* success */
    VMP_EXIT_FAIL = 1, /* failure: unreadable or invalid input, write error */
    VMP_EXIT_USAGE = 2 /* bad command line */
};

/* ---- Commands: argv[0] is the command name, as for main(). -------------- */

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

/** Give up an output after an error was already reported: close it without
 *  another message and remove the partial file, but only when `path` names a
 *  regular file (never a device such as /dev/full, a pipe or a socket). */
void vmp_cli_output_abandon(vmp_cli_output *out, const char *path);

/** Remove a partial output at `path` if it is a regular file. */
void vmp_cli_remove_partial(const char *path);

/* ---- Text and JSON formatting -------------------------------------------- */

/** Write `len` bytes of `s` as a double-quoted string with C-like escapes:
 *  \" \\ \n \r \t, other control bytes and bytes that are not valid UTF-8
 *  as \xNN.  Valid UTF-8 is copied. */
void vmp_cli_put_quoted(FILE *f, const char *s, size_t len);

/** Write `len` bytes of `s` as a JSON string (RFC 8259).  Bytes that are not
 *  valid UTF-8 become U+FFFD, so the output is always valid JSON. */
void vmp_cli_put_json_string(FILE *f, const char *s, size_t len);

/** Upper-case name of record type `type` ("SAMPLE"), "UNKNOWN" for others. */
const char *vmp_cli_record_name(int type);

/** Format `ns` since the Unix epoch as "YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ" (UTC)
 *  into `buf` (at least 40 bytes). */
void vmp_cli_format_utc(char *buf, size_t size, uint64_t ns);

/* ---- Shared by `vmp flame` and `vmp diff` (cli/vmp_cmd_flame.c) --------- */

struct vmp_flame;

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

#endif
