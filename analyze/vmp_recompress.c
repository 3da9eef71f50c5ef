/* SPDX-License-Identifier: MIT
 *
 * vmp_recompress.c - vmp_recompress_run() (vmp_rewrite.h): a profile copied
 * frame by frame with every data chunk compressed again at another zstd
 * level (spec.md §3-§6).  Chunks come whole from the reader
 * (vmp_reader_next_chunk(): decompressed, verified, every record checked)
 * and go out through the frame layer the record writer uses
 * (vmp_chunk_writer.h); no record is decoded into values or encoded again.
 */
#include <stdio.h>
#include <string.h>

#include "vmp_analyze_int.h"
#include "vmp_chunk_writer.h"
#include "vmp_rewrite.h"

/* The state of one run: where messages go and what was done. */
typedef struct recompress {
    vmp_reader *r;
    vmp_chunk_writer cw;
    const char *out_name;
    vmp_recompress_stats stats;
    uint64_t chunk_bytes_in; /* bytes of the input's chunk frames */
    char *err;
    size_t err_size;
} recompress;

/* The reader's error `st`, with its message ("FILE: offset N: ..."). */
static vmp_status input_error(recompress *rc, vmp_status st)
{
    const char *msg = vmp_reader_errmsg(rc->r);
    vmp_set_err__(rc->err, rc->err_size, "%s", msg[0] ? msg : vmp_status_str(st));
    return st;
}

/* The frame layer's error `st`, prefixed with the output's name. */
static vmp_status output_error(recompress *rc, vmp_status st)
{
    vmp_set_err__(rc->err, rc->err_size, "%s: %s", rc->out_name, rc->cw.what);
    return st;
}

/* spec §3: the file header frame, as the input holds it. */
static vmp_status copy_file_header(recompress *rc)
{
    const uint8_t *frame;
    size_t size;
    vmp_status st = vmp_reader_file_header(rc->r, &frame, &size);
    if (st == VMP_ERR_LIMIT) { /* "FILE: offset 0: ..." (no chunk read yet) */
        char msg[128];
        snprintf(msg, sizeof msg,
                 "file header frame longer than %d bytes (a later format version): not copied",
                 VMP_READER_FILE_HEADER_MAX);
        vmp_reader_fail(rc->r, st, msg);
    }
    if (st < 0)
        return input_error(rc, st);
    st = vmp_chunk_writer__bytes(&rc->cw, frame, size);
    return st < 0 ? output_error(rc, st) : VMP_OK;
}

/* spec §4: one chunk, its content unchanged in a frame of the new level. */
static vmp_status recompress_chunk(recompress *rc, const vmp_reader_chunk *c)
{
    vmp_chunk_samples samples;
    vmp_status st;
    samples.count = c->samples;
    samples.first_time = c->first_time_ns;
    samples.last_time = c->last_time_ns;
    st = vmp_chunk_writer__chunk(&rc->cw, c->content, c->content_size, &samples);
    if (st < 0)
        return output_error(rc, st);
    rc->stats.chunks++;
    rc->stats.has_end |= c->has_end;
    rc->chunk_bytes_in += c->compressed_size;
    return VMP_OK;
}

/* Every chunk, to the end of the input. */
static vmp_status recompress_chunks(recompress *rc)
{
    vmp_reader_chunk c;
    vmp_status st;
    while ((st = vmp_reader_next_chunk(rc->r, &c)) == VMP_OK) {
        st = recompress_chunk(rc, &c);
        if (st < 0)
            return st;
    }
    return st == VMP_END ? VMP_OK : input_error(rc, st);
}

/* The byte counts: what the input holds besides its file header frame and
 * its chunks are the skippable frames left out. */
static void finish_stats(recompress *rc)
{
    const uint8_t *header;
    size_t header_size;
    vmp_reader_info info;
    vmp_reader_get_info(rc->r, &info);
    if (vmp_reader_file_header(rc->r, &header, &header_size) < 0)
        header_size = 0;
    rc->stats.bytes_in = info.bytes_consumed;
    rc->stats.bytes_out = rc->cw.bytes;
    if (info.bytes_consumed >= header_size + rc->chunk_bytes_in)
        rc->stats.bytes_left_out = info.bytes_consumed - header_size - rc->chunk_bytes_in;
}

vmp_status vmp_recompress_run(vmp_recompress_stats *stats_out, int out_fd, const char *out_name,
                              vmp_reader *r, int level, char *err, size_t err_size)
{
    recompress rc;
    vmp_reader_info info;
    vmp_status st;
    memset(&rc, 0, sizeof rc);
    rc.r = r;
    rc.out_name = out_name ? out_name : "output";
    rc.err = err;
    rc.err_size = err_size;
    vmp_set_err__(err, err_size, "%s", "");
    if (stats_out)
        memset(stats_out, 0, sizeof *stats_out);
    if (r)
        vmp_reader_get_info(r, &info);
    if (!r || out_fd < 0 || level < VMP_RECOMPRESS_LEVEL_MIN || level > VMP_RECOMPRESS_LEVEL_MAX ||
        info.chunks > 0 || info.records > 0) {
        vmp_set_err__(err, err_size,
                      "invalid arguments (zstd level %d: %d to %d; a reader not read yet)", level,
                      VMP_RECOMPRESS_LEVEL_MIN, VMP_RECOMPRESS_LEVEL_MAX);
        return VMP_ERR_INVALID_ARG;
    }
    st = vmp_chunk_writer__init(&rc.cw, out_fd, level);
    if (st < 0)
        st = output_error(&rc, st);
    if (st >= 0)
        st = copy_file_header(&rc);
    if (st >= 0)
        st = recompress_chunks(&rc);
    /* spec §6: a seek table after the END's chunk, with the new offsets */
    if (st >= 0 && rc.stats.has_end) {
        st = vmp_chunk_writer__seek_table(&rc.cw);
        if (st < 0)
            st = output_error(&rc, st);
    }
    finish_stats(&rc);
    vmp_chunk_writer__free(&rc.cw);
    if (stats_out)
        *stats_out = rc.stats;
    return st;
}
