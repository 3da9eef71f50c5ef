/* SPDX-License-Identifier: MIT
 *
 * fuzz_reader.c - libFuzzer target: a whole file through the streaming reader
 * (spec.md §3-§5, §8).
 *
 * Invariants beyond "no crash": the reader ends with VMP_END or an error;
 * an error's offset lies inside the input; records come from chunks whose
 * frame offsets lie inside the input and increase; sample times are never
 * negative sums (they are unsigned and below 2^63); no more chunks are
 * delivered than the input could hold (a data frame with content size and
 * checksum takes at least 13 bytes), nor more records than their content
 * could hold (3 bytes each at least, chunks at most max_chunk_bytes); the
 * reader's counters agree with what it delivered.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    vmp_reader_options opts = VMP_READER_OPTIONS_INIT;
    opts.max_chunk_bytes = 1u << 22; /* keep each run small */
    vmp_reader *r = NULL;
    vmp_status st = vmp_reader_open_memory(&r, data, size, "fuzz", &opts);
    if (st == VMP_OK) {
        vmp_record rec;
        uint64_t last_chunk_offset = 0, records = 0, chunks = 0, last_index = 0;
        uint64_t block_more = 0, last_record = UINT64_MAX; /* a block's later samples */
        while ((st = vmp_reader_next(r, &rec)) == VMP_OK) {
            if (rec.raw_type == VMP_REC_SAMPLE_BLOCK && records > 0 &&
                rec.chunk_index == last_index && rec.record_offset == last_record)
                block_more++; /* not a record of its own (R-BLK-1) */
            last_record = rec.raw_type == VMP_REC_SAMPLE_BLOCK ? rec.record_offset : UINT64_MAX;
            if (rec.chunk_offset >= size || rec.chunk_offset < last_chunk_offset)
                abort();
            if (records == 0 || rec.chunk_index != last_index)
                chunks++;
            if (records > 0 && rec.chunk_index < last_index)
                abort();
            last_index = rec.chunk_index;
            last_chunk_offset = rec.chunk_offset;
            records++;
            if ((rec.type == VMP_REC_SAMPLE || rec.type == VMP_REC_FAILED_SAMPLE) &&
                rec.u.sample.time_ns >= (UINT64_C(1) << 63))
                abort();
        }
        if (st != VMP_END && st >= 0)
            abort();
        vmp_reader_info info;
        vmp_reader_get_info(r, &info);
        if (chunks * 13 > size || info.records != records - block_more || info.chunks * 13 > size)
            abort();
        if (records - block_more > (info.chunks + 1) * (opts.max_chunk_bytes / 3))
            abort();
        if (block_more > (info.chunks + 1) * opts.max_chunk_bytes) /* a byte a sample */
            abort();
        /* Once failed, the reader keeps failing the same way. */
        if (st < 0 && vmp_reader_next(r, &rec) != st)
            abort();
    }
    if (st < 0 && r != NULL && (vmp_reader_offset(r) > size || vmp_reader_errmsg(r)[0] == '\0'))
        abort();
    vmp_reader_close(r);
    return 0;
}
