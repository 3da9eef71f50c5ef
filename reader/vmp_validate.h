/* SPDX-License-Identifier: MIT
 *
 * vmp_validate.h - check a vmp profile against every rule of spec.md that one
 * streaming pass can check (spec.md §3 to §6; rules are cited by their ids).
 *
 *     vmp_reader *r;
 *     vmp_validate_report rep;
 *     vmp_reader_open_file(&r, "prof.vmp", NULL);
 *     if (vmp_validate(&rep, r) != VMP_OK)
 *         fprintf(stderr, "offset %llu: [%s] %s\n", rep.offset, rep.rule, rep.message);
 *     vmp_reader_close(r);
 *
 * What is checked: everything the reader rejects (framing, checksums, CBOR
 * well-formedness, types, limits), and on top of it R-HDR-5 (one HEADER,
 * first), R-ID-1 (stack nodes, zones, modules and code objects defined before
 * use and never twice, parents before children; also the sample's blame code
 * id), R-GEN-1, R-GEN-2, R-GEN-4 (no overlap within a zone, checked whenever
 * objects are added or moved; zone 0 = "no zone" and objects of size 0 are not
 * checked), R-CODE-1, R-CODE-2, R-SNAP-1, R-SMP-3, R-END-1 and R-END-2
 * (nothing but the seek table after END).  R-STK-1 and R-SMP-1 are enforced
 * by the reader, whose decoded records cannot express a violation; the report
 * still names those rules.  A file
 * without an END record is reported as truncated (R-CHK-3): its complete
 * chunks are readable, but it is not a valid complete profile.
 *
 * Memory grows with the number of ids in the file (hash sets and per-zone
 * ordered sets of live code), never with the number of samples.  Time is
 * proportional to the records' contents times log n (n: live code objects
 * of a zone): O(log n) expected per code object added, moved or freed, so
 * a compaction that moves m objects costs O(m log n), not O(m x n).
 *
 * Thread safety: as the reader it is given (one thread at a time).
 */
#ifndef VMP_VALIDATE_H
#define VMP_VALIDATE_H

#include <stdint.h>

#include "vmp_reader.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Result of vmp_validate(). */
typedef struct vmp_validate_report {
    vmp_status status;      /* as returned */
    const char *rule;       /* rule id of the first problem ("R-ID-1"); "" when valid
                               or when the problem has no rule id; static storage */
    char message[400];      /* the first problem, one line, without file name and offset:
                               the reader's own message when the reader failed */
    int from_reader;        /* 1 when `message` is vmp_reader_errmsg() (which names
                               the file and offset itself) */
    uint64_t offset;        /* file offset of the chunk holding the problem */
    uint64_t chunk_index;   /* chunk of the problem (records: 0-based) */
    uint64_t record_offset; /* offset of the record inside its decompressed chunk */
    uint64_t records;       /* records read */
    uint64_t samples;       /* SAMPLE and FAILED_SAMPLE records read */
    uint64_t chunks;        /* complete chunks read */
    int complete;           /* an END record was read */
    int seek_table;         /* a seek table was found */
    /* Functions that a STACK_NODE or an inline record names before their
     * FUNCTION record, or that none defines (spec R-ID-2: a SHOULD, so not a
     * failure; a reader shows them as function#ID until defined), and the
     * first of them, one line without file name.  Added in 0.4. */
    uint64_t late_functions;
    char late_message[200];
} vmp_validate_report;

/** Read every remaining record of `r` and check it.
 *
 * Call on a freshly opened reader, before any vmp_reader_next(); the pass
 * consumes the reader.
 *
 * @param[out] out  receives the report (always filled).
 * @param r         the reader; borrowed.
 * @return VMP_OK when the file is valid and complete; VMP_ERR_CORRUPT when a
 *         rule is broken (out->rule names it); VMP_ERR_TRUNCATED when the
 *         file ends early (inside a frame, or without an END record); any
 *         other error the reader reports; VMP_ERR_NOMEM; VMP_ERR_INVALID_ARG
 *         for NULL arguments.
 *
 * Thread safety: one thread per reader.  Not async-signal-safe.
 */
VMP_API vmp_status vmp_validate(vmp_validate_report *out, vmp_reader *r);

#ifdef __cplusplus
}
#endif

#endif
