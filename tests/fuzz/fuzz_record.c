/* SPDX-License-Identifier: MIT
 *
 * fuzz_record.c - libFuzzer target: arbitrary bytes as the content of one
 * chunk, through the record layer of the reader (spec.md §5, R-REC-1..4,
 * R-CHK-2, §8 limits).
 *
 * The input is wrapped into a valid file: the header frame (§3) and one zstd
 * frame with content size and checksum (R-CHK-1), so the fuzzer explores the
 * CBOR record decoder rather than zstd.
 *
 * Invariants beyond "no crash": the reader ends with VMP_END or an error;
 * every record lies inside the chunk (record offsets increase and stay below
 * the content size; the samples of a SAMPLE_BLOCK share their block's), so
 * no more records are delivered than the content has bytes (a block's
 * samples no more than its bytes: one time delta each, R-BLK-2), and no array or string delivered
 * is longer than the content; an error's offset lies inside the file; after an error the reader
 * repeats it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "vmp_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t file_header[24] = {0x56, 0x2a, 0x4d, 0x18, 16, 0, 0, 0, 0x89, 'V', 'M', 'P',
                                        '\r', '\n', 0x1a, '\n', 1,  0, 0, 0, 0,    0,   0,   0};

static void check_len(size_t n, size_t limit)
{
    if (n > limit)
        abort();
}

/* Every count a record carries is bounded by the bytes that encode it. */
static void check_record(const vmp_record *rec, size_t size)
{
    switch (rec->type) {
    case VMP_REC_HEADER: {
        const vmp_rec_header *h = &rec->u.header;
        check_len(h->producer.len + h->vm_name.len + h->vm_version.len + h->clock.len, size);
        check_len(h->n_states + h->n_code_kinds + h->n_tiers + h->n_event_kinds +
                      h->n_counter_kinds + h->n_failure_reasons + h->n_labels,
                  size);
        for (size_t i = 0; i < h->n_states; i++)
            if (h->states[i].s == NULL || strlen(h->states[i].s) > h->states[i].len)
                abort();
        break;
    }
    case VMP_REC_MODULE_SYMBOLS:
        check_len(rec->u.module_symbols.n_symbols, size / 3);
        break;
    case VMP_REC_FUNCTION:
        check_len(rec->u.function.n_lines, size / 2);
        check_len(rec->u.function.name.len, size);
        break;
    case VMP_REC_CODE_OBJECT:
        check_len(rec->u.code_object.pc_map_len, size / 2);
        check_len(rec->u.code_object.n_inlines, size);
        for (size_t i = 0; i < rec->u.code_object.n_inlines; i++)
            check_len(rec->u.code_object.inlines[i].depth, size / 2);
        break;
    case VMP_REC_CODE_SNAPSHOT:
        check_len(rec->u.code_snapshot.n, size / 2);
        break;
    case VMP_REC_CODE_COMPACTION:
        check_len(rec->u.code_compaction.n_moves + rec->u.code_compaction.n_frees, size);
        break;
    case VMP_REC_EVENT:
        check_len(rec->u.event.text.len, size);
        break;
    default:
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20))
        return 0;
    size_t bound = ZSTD_compressBound(size);
    size_t file_cap = sizeof file_header + bound;
    uint8_t *file = malloc(file_cap);
    ZSTD_CCtx *cctx = ZSTD_createCCtx();
    if (file == NULL || cctx == NULL)
        abort();
    memcpy(file, file_header, sizeof file_header);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1);
    size_t z = ZSTD_compress2(cctx, file + sizeof file_header, bound, data, size);
    ZSTD_freeCCtx(cctx);
    if (ZSTD_isError(z))
        abort();
    size_t file_size = sizeof file_header + z;

    vmp_reader_options opts = VMP_READER_OPTIONS_INIT;
    vmp_reader *r = NULL;
    vmp_status st = vmp_reader_open_memory(&r, file, file_size, "fuzz", &opts);
    if (st != VMP_OK) /* the wrapper is a valid header: opening must succeed */
        abort();
    vmp_record rec;
    uint64_t records = 0, last_offset = 0, block_samples = 0;
    int last_in_block = 0;
    while ((st = vmp_reader_next(r, &rec)) == VMP_OK) {
        int in_block = rec.raw_type == VMP_REC_SAMPLE_BLOCK;
        if (rec.chunk_index != 0 || rec.chunk_offset != sizeof file_header)
            abort();
        if (in_block && last_in_block && rec.record_offset == last_offset) {
            if (++block_samples > size) /* the same block's next sample */
                abort();
            continue;
        }
        if (rec.record_offset >= size || (records > 0 && rec.record_offset <= last_offset))
            abort();
        last_offset = rec.record_offset;
        last_in_block = in_block;
        block_samples += in_block;
        records++;
        check_record(&rec, size);
    }
    if (st != VMP_END && st >= 0)
        abort();
    if (records > size / 3) /* the smallest record, {0: t}, takes 3 bytes */
        abort();
    if (st < 0) {
        if (vmp_reader_offset(r) > file_size || vmp_reader_errmsg(r)[0] == '\0')
            abort();
        if (vmp_reader_next(r, &rec) != st)
            abort();
    }
    vmp_reader_close(r);
    free(file);
    return 0;
}
