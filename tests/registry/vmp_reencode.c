/* SPDX-License-Identifier: MIT
 *
 * vmp-reencode - check that the generic record encoder (format/vmp_encode.h,
 * driven by the record registry) gives, for every record of the files named,
 * exactly the bytes the file holds.  Run on files of the in-VM writer, whose
 * hot path keeps hand-written encoders, it proves the two agree record type
 * by record type.
 *
 *   vmp-reencode [--all-types N] FILE...
 *
 * Samples read out of SAMPLE_BLOCK records have no bytes of their own and
 * are only counted.
 *
 * Prints how many records of each type were compared; exits 1 at the first
 * record whose bytes differ (naming file, chunk, offset and type), or when
 * --all-types N is given and some type 1..N did not occur in the files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_encode.h"
#include "vmp_reader.h"

static uint64_t counts[VMP_REC_TYPE_MAX + 1];
static uint64_t in_blocks; /* samples read from SAMPLE_BLOCKs, not re-encoded */

static int check_file(const char *path, vmp_buf *b)
{
    vmp_reader *r = NULL;
    vmp_record rec;
    vmp_status st;
    uint64_t prev_time = 0, chunk = 0, n = 0;

    if (vmp_reader_open_file(&r, path, NULL) < 0) {
        fprintf(stderr, "vmp-reencode: %s\n", vmp_reader_errmsg(r));
        vmp_reader_close(r);
        return 1;
    }
    while ((st = vmp_reader_next(r, &rec)) == VMP_OK) {
        const uint8_t *raw;
        size_t size, i;
        if (rec.chunk_index != chunk)
            prev_time = 0; /* R-SMP-1: deltas restart in every chunk */
        chunk = rec.chunk_index;
        if (rec.type == VMP_REC_UNKNOWN)
            continue;
        if (vmp_reader_record_bytes(r, &raw, &size) < 0) {
            if (rec.type != VMP_REC_SAMPLE && rec.type != VMP_REC_FAILED_SAMPLE)
                return fprintf(stderr, "vmp-reencode: %s: no record bytes\n", path), 1;
            /* a sample of a SAMPLE_BLOCK: no bytes of its own (the block
             * encoder is format/vmp_block.c, one for every writer) */
            prev_time = rec.u.sample.time_ns;
            in_blocks++;
            continue;
        }
        b->len = 0;
        if (vmp_record_encode(b, &rec, prev_time) < 0 || b->failed)
            return fprintf(stderr, "vmp-reencode: %s: cannot encode\n", path), 1;
        for (i = 0; i < size && i < b->len && raw[i] == b->data[i]; i++)
            ;
        if (size != b->len || i < size) {
            fprintf(stderr,
                    "vmp-reencode: %s: chunk %llu @%llu %s: the generic encoder gives %zu bytes, "
                    "the file holds %zu; first difference at byte %zu\n",
                    path, (unsigned long long)rec.chunk_index,
                    (unsigned long long)rec.record_offset, vmp_record_type_name(rec.type), b->len,
                    size, i);
            vmp_reader_close(r);
            return 1;
        }
        if (rec.type == VMP_REC_SAMPLE || rec.type == VMP_REC_FAILED_SAMPLE)
            prev_time = rec.u.sample.time_ns;
        counts[rec.type]++;
        n++;
    }
    if (st < 0) {
        fprintf(stderr, "vmp-reencode: %s\n", vmp_reader_errmsg(r));
        vmp_reader_close(r);
        return 1;
    }
    printf("%s: %llu records re-encoded to the same bytes\n", path, (unsigned long long)n);
    vmp_reader_close(r);
    return 0;
}

int main(int argc, char **argv)
{
    vmp_buf b = {0};
    int i = 1, all = 0, type, rc = 0;

    if (argc > 2 && strcmp(argv[1], "--all-types") == 0) {
        all = atoi(argv[2]);
        i = 3;
    }
    if (i >= argc) {
        fprintf(stderr, "usage: vmp-reencode [--all-types N] FILE...\n");
        return 2;
    }
    for (; i < argc && rc == 0; i++)
        rc = check_file(argv[i], &b);
    vmp_buf__free(&b);
    if (rc == 0 && in_blocks)
        printf("  %-16s %llu (not re-encoded)\n", "in blocks", (unsigned long long)in_blocks);
    for (type = 1; rc == 0 && type <= VMP_REC_TYPE_MAX; type++) {
        printf("  %-16s %llu\n", vmp_record_type_name(type), (unsigned long long)counts[type]);
        if (type <= all && counts[type] == 0) {
            fprintf(stderr, "vmp-reencode: no %s record in the files\n",
                    vmp_record_type_name(type));
            rc = 1;
        }
    }
    return rc;
}
