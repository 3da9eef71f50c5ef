/* SPDX-License-Identifier: MIT
 *
 * vmp_cmd_validate.c - `vmp validate`: check a profile against spec.md with
 * the library's streaming validator (reader/vmp_validate.h).
 */
#include <inttypes.h>

#include "vmp_cli.h"
#include "vmp_validate.h"

static const char validate_synopsis[] =
    "usage: vmp validate [-q] FILE\n"
    "\n"
    "Check the profile FILE ('-' = standard input) against every rule of the\n"
    "format specification that one streaming pass can check: everything the\n"
    "reader rejects (framing, checksums, CBOR, types, limits), one HEADER\n"
    "first (R-HDR-5), ids defined before use and never twice (R-ID-1),\n"
    "generations (R-GEN-1, R-GEN-2), no overlapping code in a zone (R-GEN-4),\n"
    "pc maps (R-CODE-1), frees and moves of live code only (R-CODE-2),\n"
    "snapshots (R-SNAP-1), sample generations (R-SMP-3), the END record's\n"
    "counts (R-END-1) and nothing but a seek table after END (R-END-2).\n"
    "Memory grows with the number of ids in the file, not with its samples.\n"
    "\n"
    "Output on success (standard output), exit 0:\n"
    "  FILE: valid: R records, S samples, C chunks, complete[, seek table]\n"
    "Output on the first problem (standard error), exit 1:\n"
    "  FILE: offset N: [R-XXX-n] chunk C @R TYPE: message\n"
    "where N is the file offset of the chunk's frame and R the record's offset\n"
    "inside the decompressed chunk.  Errors found by the reader are printed as\n"
    "the reader words them (they name the file and offset), with the rule id\n"
    "when there is one.  A file that ends early (inside a frame, or without an\n"
    "END record) is invalid: the message says how many complete chunks are\n"
    "readable (`vmp info` and `vmp decode` still read them).\n"
    "\n"
    "options:\n";

static const char validate_epilogue[] =
    "\n"
    "Exit status: 0 valid, 1 invalid or unreadable, 2 usage error.\n";
static const vmp_cli_option validate_options[] = {
    {"quiet", 'q', NULL, NULL, "print nothing on success"}, VMP_CLI_OPTION_HELP};
static const vmp_cli_command validate_command = VMP_CLI_COMMAND(validate, 16);

int vmp_cmd_validate(int argc, char **argv)
{
    vmp_cli_parser p;
    const char *cmd = "validate", *path;
    int c, rc, quiet = 0;
    vmp_reader *r;
    vmp_validate_report rep;
    vmp_status st;

    vmp_cli_begin(&p, &validate_command, argc, argv);
    while ((c = vmp_cli_next(&p)) > 0) {
        switch (c) {
        case 'q':
            quiet = 1;
            break;
        }
    }
    if ((rc = vmp_cli_file_operand(&p, c, &path)) >= 0)
        return rc;

    st = vmp_reader_open_file(&r, path, NULL);
    if (st < 0) {
        /* Not a profile at all, or a version this reader does not know. */
        const char *msg = r ? vmp_reader_errmsg(r) : "";
        const char *rule = st == VMP_ERR_NOT_VMP     ? " [R-HDR-1]"
                           : st == VMP_ERR_VERSION   ? " [R-HDR-3]"
                           : st == VMP_ERR_TRUNCATED ? " [R-CHK-3]"
                           : st == VMP_ERR_CORRUPT   ? " [R-HDR-2]" /* frame size < 16 */
                                                     : "";
        if (msg[0])
            fprintf(stderr, "%s%s\n", msg, rule);
        else
            fprintf(stderr, "%s: %s%s\n", path, vmp_status_str(st), rule);
        vmp_reader_close(r);
        return VMP_EXIT_FAIL;
    }
    st = vmp_validate(&rep, r);
    if (vmp_reader_warning(r)) /* spec R-SEEK-1: a table set aside, not a violation */
        fprintf(stderr, "vmp %s: warning: %s\n", cmd, vmp_reader_warning(r));
    vmp_reader_close(r);
    if (rep.late_functions > 0) /* spec R-ID-2: a SHOULD, reported, not a failure */
        fprintf(stderr,
                "vmp %s: note: %" PRIu64 " function%s named before %s FUNCTION record (R-ID-2), "
                "shown as function#ID until then; the first: %s\n",
                cmd, rep.late_functions, rep.late_functions == 1 ? "" : "s",
                rep.late_functions == 1 ? "its" : "their", rep.late_message);
    if (st == VMP_OK) {
        if (!quiet) {
            printf("%s: valid: %" PRIu64 " records, %" PRIu64 " samples, %" PRIu64
                   " chunks, complete%s\n",
                   path, rep.records, rep.samples, rep.chunks,
                   rep.seek_table ? ", seek table" : "");
            if (fflush(stdout) != 0 || ferror(stdout))
                return vmp_cli_fail(cmd, "standard output: write error");
        }
        return VMP_EXIT_OK;
    }
    if (rep.from_reader) {
        if (rep.rule[0])
            fprintf(stderr, "%s [%s]", rep.message, rep.rule);
        else
            fprintf(stderr, "%s", rep.message);
    } else {
        fprintf(stderr, "%s: offset %" PRIu64 ": ", path, rep.offset);
        if (rep.rule[0])
            fprintf(stderr, "[%s] ", rep.rule);
        fprintf(stderr, "%s", rep.message);
    }
    if (st == VMP_ERR_TRUNCATED)
        fprintf(stderr, " (%" PRIu64 " complete chunk%s, %" PRIu64 " records, are readable)",
                rep.chunks, rep.chunks == 1 ? "" : "s", rep.records);
    fputc('\n', stderr);
    return VMP_EXIT_FAIL;
}
