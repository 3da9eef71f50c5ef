/* SPDX-License-Identifier: MIT
 *
 * fuzz_analyze.c - libFuzzer target: a whole file through the analysis path
 * that `vmp report` and `vmp flame` use (spec.md §5 "Generations",
 * "Resolution", §5.11, §5.12): every record fed to a vmp_profile,
 * then the same file read into a flame graph and written as folded stacks
 * into memory.  An input that does not start like a vmp file is taken as
 * the content of one chunk and wrapped into a valid file (header frame and
 * one zstd frame with content size and checksum), so that the fuzzer
 * explores the analysis of arbitrary records rather than zstd framing.
 *
 * Invariants beyond "no crash": the profile's total weight equals the flame
 * graph's total and the sum of the folded counts (failed samples included),
 * and that of a bare analysis of the same file; the weights per (stack,
 * thread, state) sum to the weight of the non-failed samples with a
 * non-empty stack; no more samples are counted than the chunks' content
 * could hold; every stack
 * and frame id handed out resolves; formatting a frame never overflows.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "vmp_analyze.h"
#include "vmp_convert.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int add_entry(const vmp_profile_stack_entry *e, void *payload)
{
    uint64_t *sum = payload;
    *sum += e->weight;
    return 0;
}

/* Sum the last number of every folded line ("a;b;c 12"). */
static uint64_t folded_sum(const char *text, size_t len)
{
    uint64_t sum = 0;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (nl == NULL)
            abort(); /* every line ends with a newline */
        const char *sp = nl;
        while (sp > p && sp[-1] != ' ')
            sp--;
        if (sp == p || sp == nl)
            abort(); /* "stack count" */
        sum += strtoull(sp, NULL, 10);
        p = nl + 1;
    }
    return sum;
}

static vmp_reader *open_input(const uint8_t *data, size_t size)
{
    vmp_reader_options opts = VMP_READER_OPTIONS_INIT;
    opts.max_chunk_bytes = 1u << 22; /* keep each run small */
    vmp_reader *r = NULL;
    if (vmp_reader_open_memory(&r, data, size, "fuzz", &opts) != VMP_OK) {
        vmp_reader_close(r);
        return NULL;
    }
    return r;
}

static const uint8_t file_header[24] = {0x56, 0x2a, 0x4d, 0x18, 16, 0, 0, 0, 0x89, 'V', 'M', 'P',
                                        '\r', '\n', 0x1a, '\n', 1,  0, 0, 0, 0,    0,   0,   0};

static int analyze(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= 4 && memcmp(data, file_header, 4) == 0)
        return analyze(data, size);
    if (size > (1u << 20))
        return 0;
    /* Records: wrap them into a file of one chunk. */
    size_t bound = ZSTD_compressBound(size);
    uint8_t *file = malloc(sizeof file_header + bound);
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
    analyze(file, sizeof file_header + z);
    free(file);
    return 0;
}

static int analyze(const uint8_t *data, size_t size)
{
    vmp_reader *r = open_input(data, size);
    if (r == NULL)
        return 0;

    /* The report's path: every record into a profile. */
    vmp_profile *p = NULL;
    if (vmp_profile_create(&p, NULL) != VMP_OK)
        abort();
    vmp_record rec;
    vmp_status st;
    uint64_t sample_records = 0;
    while ((st = vmp_reader_next(r, &rec)) == VMP_OK) {
        if (rec.type == VMP_REC_SAMPLE || rec.type == VMP_REC_FAILED_SAMPLE)
            sample_records++;
        st = vmp_profile_feed(p, &rec);
        if (st < 0)
            break;
    }
    vmp_reader_info info;
    vmp_reader_get_info(r, &info);
    uint64_t rd_chunks = info.chunks;
    vmp_reader_close(r);
    /* Each sample is at least a byte of some chunk's content (a SAMPLE
     * record 3, a block's sample its time delta). */
    if (sample_records > (rd_chunks + 1) * (1u << 22))
        abort();
    const vmp_profile_totals *tot = vmp_profile_get_totals(p);

    /* The same file through a bare analysis: the same total weight, and the
     * profile's (stack, thread, state) entries hold exactly the non-failed
     * samples with a non-empty stack (the empty stack, id 0, has no entry). */
    r = open_input(data, size);
    vmp_analysis *bare = NULL;
    if (r == NULL || vmp_analysis_create(&bare, NULL) != VMP_OK)
        abort();
    vmp_asample as;
    uint64_t all = 0, stacked = 0, failed = 0;
    while (vmp_analysis_next(bare, r, &as) == VMP_OK) {
        all += as.weight;
        if (as.failed)
            failed += as.weight;
        else if (as.stack != 0)
            stacked += as.weight;
    }
    vmp_analysis_free(bare);
    vmp_reader_close(r);
    if (all != tot->samples || failed != tot->failed)
        abort();
    uint64_t stack_sum = 0;
    vmp_profile_foreach_stack(p, add_entry, &stack_sum);
    if (stack_sum != stacked)
        abort();
    vmp_analysis *a = vmp_profile_analysis(p);
    char name[64];
    size_t nframes = vmp_analysis_frame_count(a);
    for (uint32_t i = 1; i < nframes; i++) {
        const vmp_aframe *fr = vmp_analysis_frame(a, i);
        if (fr == NULL || vmp_analysis_function(a, fr->function) == NULL)
            abort();
        vmp_analysis_format_frame(a, name, sizeof name, i);
        if (strlen(name) >= sizeof name)
            abort();
    }
    size_t nstacks = vmp_analysis_stack_count(a);
    for (uint32_t i = 1; i < nstacks; i++) {
        const vmp_astack *s = vmp_analysis_stack(a, i);
        if (s == NULL || s->parent >= i || vmp_analysis_frame(a, s->frame) == NULL)
            abort();
    }
    uint64_t total = tot->samples;
    vmp_profile_free(p);

    /* The flame graph's path: the same file, folded into memory. */
    r = open_input(data, size);
    if (r == NULL)
        abort(); /* it opened a moment ago */
    vmp_flame *f = NULL;
    if (vmp_flame_create(&f, NULL) != VMP_OK)
        abort();
    st = vmp_flame_read(f, r, 0);
    vmp_reader_close(r);
    if (st == VMP_ERR_NOMEM || st == VMP_ERR_INVALID_ARG)
        abort();
    if (vmp_flame_total(f, 0) != total)
        abort();
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (out == NULL)
        abort();
    if (vmp_flame_write_folded(f, out, 1.0) != VMP_OK)
        abort();
    fclose(out);
    if (folded_sum(text, len) != total)
        abort();
    free(text);
    FILE *null = fopen("/dev/null", "w");
    if (null != NULL) {
        vmp_flame_write_svg(f, null, NULL);
        fclose(null);
    }
    vmp_flame_free(f);
    return 0;
}
