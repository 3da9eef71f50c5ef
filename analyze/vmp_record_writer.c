/* SPDX-License-Identifier: MIT
 *
 * vmp_record_writer.c - encode vmp_record values into a vmp file: header
 * frame (spec.md §3), chunks (§4), records (§5), END (§5.2), seek table (§6).
 *
 * Outline: each record is encoded by the generic encoder (format/
 * vmp_encode.h, driven by the record registry) into `rec`, then appended to
 * the chunk buffer; the chunk is closed first when the record would take its
 * content past the limit, and a sample is then encoded again, because its
 * time delta depends on the chunk it lands in.  With sample_blocks, samples
 * are gathered into a block (format/vmp_block.h), encoded into the chunk
 * before any record that must follow them (vmp_block__keeps()) and when
 * the chunk closes.  Bytes, zstd frames and the seek table are written by
 * the frame layer, vmp_chunk_writer.h.
 */
#include "vmp_record_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmp_analyze_int.h"
#include "vmp_block.h"
#include "vmp_chunk_writer.h"
#include "vmp_encode.h"
#include "vmp_format.h"

#define DEFAULT_CHUNK (1u << 20)
#define BLOCK_SAMPLES 1024u /* samples of a SAMPLE_BLOCK at most */

struct vmp_record_writer {
    int fd, own_fd, failed, finished, header_done;
    unsigned min_minor; /* options.min_minor */
    size_t chunk_limit;
    vmp_chunk_writer cw; /* frames and seek table */
    vmp_buf chunk, rec;
    uint64_t prev_time; /* time of the previous sample of the chunk */
    vmp_chunk_samples chunk_samples;
    vmp_record_writer_totals t; /* bytes and chunks: cw's */
    /* sample_blocks: the block being filled, the HEADER's time unit, and
     * the machine-frame nodes written, with their pcs (R-BLK-3) */
    int blocks;
    uint64_t time_unit;
    vmp_block block;
    vmp_buf block_buf;
    vmp_idmap machine_nodes; /* machine-frame node id -> index + 1 in pcs */
    uint64_t *machine_pcs;
    size_t n_machine, cap_machine;
    char name[256];
    char err[512];
};

/* ---- errors and output -------------------------------------------------------------- */

static vmp_status fail(vmp_record_writer *w, vmp_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static vmp_status fail(vmp_record_writer *w, vmp_status st, const char *fmt, ...)
{
    va_list ap;
    if (!w->failed) {
        size_t n = (size_t)snprintf(w->err, sizeof w->err, "%s: ", w->name);
        if (n < sizeof w->err) {
            va_start(ap, fmt);
            vsnprintf(w->err + n, sizeof w->err - n, fmt, ap);
            va_end(ap);
        }
        w->failed = 1;
    }
    return st;
}

/* The frame layer's status `st` (with its message, when an error). */
static vmp_status frames(vmp_record_writer *w, vmp_status st)
{
    w->t.bytes = w->cw.bytes;
    w->t.chunks = w->cw.n_seek;
    return st < 0 ? fail(w, st, "%s", w->cw.what) : st;
}

static vmp_status out_write(vmp_record_writer *w, const void *data, size_t size)
{
    return frames(w, vmp_chunk_writer__bytes(&w->cw, data, size));
}

/* Encode the pending block into the chunk (spec §5.14). */
static vmp_status flush_block(vmp_record_writer *w)
{
    if (w->block.n == 0)
        return VMP_OK;
    w->block_buf.len = 0;
    vmp_block__encode(&w->block, &w->block_buf);
    if (!w->block_buf.failed)
        vmp_buf__append(&w->chunk, w->block_buf.data, w->block_buf.len);
    if (w->block_buf.failed || w->chunk.failed)
        return fail(w, VMP_ERR_NOMEM, "out of memory");
    w->t.records++;
    return VMP_OK;
}

/* Compress and write the open chunk, if it holds anything.  spec R-CHK-1 */
static vmp_status flush_chunk(vmp_record_writer *w)
{
    vmp_status st = flush_block(w);
    if (st < 0)
        return st;
    if (w->chunk.len == 0)
        return VMP_OK;
    st = frames(w, vmp_chunk_writer__chunk(&w->cw, w->chunk.data, w->chunk.len, &w->chunk_samples));
    if (st < 0)
        return st;
    w->chunk.len = 0;
    w->prev_time = 0;
    memset(&w->chunk_samples, 0, sizeof w->chunk_samples);
    return VMP_OK;
}

/* Encode `rec` and append it to the chunk, closing the chunk first when the
 * record would take it past the limit (spec §4); a sample is encoded again
 * in the new chunk, where its time delta restarts (R-SMP-1). */
static vmp_status append(vmp_record_writer *w, const vmp_record *rec)
{
    int attempt;
    if (!vmp_block__keeps((uint64_t)rec->type) && flush_block(w) < 0)
        return VMP_ERR_NOMEM;
    for (attempt = 0; attempt < 2; attempt++) {
        size_t used = w->chunk.len + vmp_block__bytes(&w->block, NULL);
        w->rec.len = 0;
        if (vmp_record_encode(&w->rec, rec, w->prev_time) < 0)
            return fail(w, VMP_ERR_INVALID_ARG, "record type %d unknown to this writer", rec->type);
        if (w->rec.failed)
            return fail(w, VMP_ERR_NOMEM, "out of memory");
        if (used == 0 || used + w->rec.len <= w->chunk_limit)
            break;
        vmp_status st = flush_chunk(w);
        if (st < 0)
            return st;
        if (rec->type != VMP_REC_SAMPLE && rec->type != VMP_REC_FAILED_SAMPLE)
            break; /* the same bytes in any chunk */
    }
    vmp_buf__append(&w->chunk, w->rec.data, w->rec.len);
    if (w->chunk.failed)
        return fail(w, VMP_ERR_NOMEM, "out of memory");
    w->t.records++;
    return VMP_OK;
}

/* A sample at `time` went into the chunk (R-SMP-1, the seek table). */
static void count_sample(vmp_record_writer *w, const vmp_record *rec, uint64_t time)
{
    w->prev_time = time;
    if (w->chunk_samples.count++ == 0)
        w->chunk_samples.first_time = time;
    w->chunk_samples.last_time = time;
    w->t.samples++;
    if (rec->type == VMP_REC_FAILED_SAMPLE)
        w->t.failed++;
    if (time > w->t.last_time)
        w->t.last_time = time;
}

/* sample_blocks: add sample `rec` to the block; 1 when it must be a record
 * of its own instead (no pc, and a machine frame innermost: R-BLK-3). */
static int block_sample(vmp_record_writer *w, const vmp_record *rec, vmp_status *st)
{
    const vmp_rec_sample *s = &rec->u.sample;
    int failed = rec->type == VMP_REC_FAILED_SAMPLE;
    uint64_t leaf = failed ? 0 : s->stack, t;
    uint32_t mi = leaf ? vmp_idmap__get(&w->machine_nodes, leaf) : 0;
    int machine = mi != 0, leaf_pc = machine && w->machine_pcs[mi - 1] == s->pc;
    vmp_block_sample b;
    *st = VMP_OK;
    if (!s->has_pc && !s->pc_is_leaf && machine)
        return 1;
    /* R-SMP-1 in the header's unit, truncated toward zero */
    memset(&b, 0, sizeof b);
    b.dt = vmp_block__time_delta(s->time_ns, w->prev_time, w->time_unit, &t);
    b.v[VMP_BLOCK_THREAD] = s->thread;
    b.v[VMP_BLOCK_STACK] = leaf;
    b.v[VMP_BLOCK_STATE] = s->state;
    b.v[VMP_BLOCK_GENERATION] = s->generation;
    b.v[VMP_BLOCK_WEIGHT] = s->weight;
    b.v[VMP_BLOCK_BLAME] = failed ? 0 : s->blame;
    /* a pc that is its innermost machine node's is not stored (R-BLK-3) */
    b.has_pc = s->has_pc && !leaf_pc;
    b.pc = s->pc;
    b.failed = failed;
    b.reason = s->reason;
    if (!vmp_block__fits(&w->block, &b, w->chunk.len, w->chunk_limit) &&
        (w->chunk.len > 0 || w->block.n > 0)) {
        if ((*st = flush_chunk(w)) < 0)
            return 0;
        b.dt = vmp_block__time_delta(s->time_ns, w->prev_time, w->time_unit, &t);
    }
    if (w->block.n == w->block.cap && (*st = flush_block(w)) < 0)
        return 0;
    vmp_block__add(&w->block, &b);
    count_sample(w, rec, t);
    return 0;
}

static vmp_status write_sample(vmp_record_writer *w, const vmp_record *rec)
{
    vmp_status st;
    if (w->blocks && !block_sample(w, rec, &st))
        return st;
    st = append(w, rec);
    if (st < 0)
        return st;
    count_sample(w, rec, rec->u.sample.time_ns);
    return VMP_OK;
}

/* sample_blocks: remember a machine-frame node (R-BLK-3). */
static vmp_status note_node(vmp_record_writer *w, const vmp_rec_stack_node *n)
{
    if (n->is_function)
        return VMP_OK;
    if (vmp_idmap__get(&w->machine_nodes, n->id))
        return VMP_OK; /* the first definition holds (R-ID-1) */
    if (vmp_grow__((void **)&w->machine_pcs, &w->cap_machine, w->n_machine + 1,
                   sizeof *w->machine_pcs) ||
        vmp_idmap__put(&w->machine_nodes, n->id, (uint32_t)w->n_machine + 1))
        return fail(w, VMP_ERR_NOMEM, "out of memory");
    w->machine_pcs[w->n_machine++] = n->pc;
    return VMP_OK;
}

/* The generation a change record brings (spec R-GEN-1), or 0. */
static uint64_t generation_of(const vmp_record *rec)
{
    switch (rec->type) {
    case VMP_REC_CODE_SNAPSHOT:
        return rec->u.code_snapshot.generation;
    case VMP_REC_CODE_COMPACTION:
        return rec->u.code_compaction.generation;
    case VMP_REC_CODE_FREE:
        return rec->u.code_free.generation;
    case VMP_REC_CODE_MOVE:
        return rec->u.code_move.generation;
    default:
        return 0;
    }
}

/* The file header frame (spec §3, R-HDR-1..4), with the least minor version
 * the file needs: the options' min_minor (records passed on), at least 1
 * when its HEADER has a name separator (1.1). */
static vmp_status write_file_frame(vmp_record_writer *w, const vmp_rec_header *h)
{
    uint8_t hdr[VMP_FILE_FRAME_BYTES];
    if (w->blocks) /* R-BLK-4; 2.1 with kinds */
        vmp_enc__file_frame(hdr, 2, h->n_sample_kinds > 0 ? 1 : 0);
    else
        vmp_enc__file_frame(hdr, VMP_FORMAT_MAJOR,
                            w->min_minor > 0            ? w->min_minor
                            : h->name_separator.len > 0 ? 1
                                                        : 0);
    w->time_unit = h->sample_time_unit_ns ? h->sample_time_unit_ns : 1;
    return out_write(w, hdr, sizeof hdr);
}

vmp_status vmp_record_writer_write(vmp_record_writer *w, const vmp_record *rec)
{
    uint64_t gen;
    if (!w || !rec)
        return VMP_ERR_INVALID_ARG;
    if (w->failed)
        return VMP_ERR_CLOSED;
    if (w->finished)
        return fail(w, VMP_ERR_INVALID_ARG, "record written after the END record");
    if (rec->type == VMP_REC_UNKNOWN)
        return VMP_OK;
    /* spec R-HDR-5 */
    if ((rec->type == VMP_REC_HEADER) == (w->header_done != 0) || rec->type == VMP_REC_END)
        return fail(w, VMP_ERR_INVALID_ARG, "%s",
                    rec->type == VMP_REC_HEADER ? "a second HEADER record"
                    : rec->type == VMP_REC_END  ? "END is written by finish, not write"
                                                : "the first record must be a HEADER");
    if (rec->type == VMP_REC_HEADER) {
        if (write_file_frame(w, &rec->u.header) < 0)
            return VMP_ERR_IO;
        w->header_done = 1;
    }
    if (rec->type == VMP_REC_SAMPLE || rec->type == VMP_REC_FAILED_SAMPLE)
        return write_sample(w, rec);
    if (rec->type == VMP_REC_KIND_SAMPLE) {
        w->t.kind_samples++;
    }
    if (w->blocks && rec->type == VMP_REC_STACK_NODE && note_node(w, &rec->u.stack_node) < 0)
        return VMP_ERR_NOMEM;
    gen = generation_of(rec);
    if (gen > w->t.generation)
        w->t.generation = gen;
    return append(w, rec);
}

vmp_status vmp_record_writer_finish(vmp_record_writer *w, const vmp_rec_end *extra)
{
    vmp_status st;
    vmp_record end;
    uint64_t end_time = w ? w->t.last_time : 0, gen = w ? w->t.generation : 0;
    if (!w)
        return VMP_ERR_INVALID_ARG;
    if (w->failed)
        return VMP_ERR_CLOSED;
    if (!w->header_done || w->finished)
        return fail(w, VMP_ERR_INVALID_ARG, "END without HEADER, or written twice");
    if (extra && extra->time_ns > end_time)
        end_time = extra->time_ns;
    if (extra && extra->generation > gen)
        gen = extra->generation;
    st = flush_block(w);
    if (st < 0)
        return st;
    memset(&end, 0, sizeof end);
    end.type = VMP_REC_END;
    end.u.end.time_ns = end_time;
    end.u.end.samples = w->t.samples;
    end.u.end.dropped_full = extra ? extra->dropped_full : 0;
    end.u.end.dropped_write = extra ? extra->dropped_write : 0;
    end.u.end.failed = w->t.failed;
    end.u.end.chunks = w->t.chunks;
    end.u.end.truncated_stacks = extra ? extra->truncated_stacks : 0;
    end.u.end.generation = gen;
    end.u.end.kind_samples = w->t.kind_samples;
    /* spec R-END-1: chunks before END's chunk.  Flush first if END would not
     * fit (with 64 bytes to spare for a larger count), so that the count is
     * known when it is encoded. */
    w->rec.len = 0;
    vmp_record_encode(&w->rec, &end, 0);
    if (w->chunk.len > 0 && w->chunk.len + w->rec.len + 64 > w->chunk_limit) {
        st = flush_chunk(w);
        if (st < 0)
            return st;
        end.u.end.chunks = w->t.chunks;
    }
    st = append(w, &end);
    if (st < 0)
        return st;
    w->finished = 1;
    st = flush_chunk(w);
    if (st < 0)
        return st;
    /* spec §6: the seek table */
    st = frames(w, vmp_chunk_writer__seek_table(&w->cw));
    if (st < 0)
        return st;
    if (w->own_fd) {
        int fd = w->fd;
        w->own_fd = 0;
        w->fd = -1;
        if (close(fd) != 0)
            return fail(w, VMP_ERR_IO, "close: %s", strerror(errno));
    }
    return VMP_OK;
}

/* ---- open and close ------------------------------------------------------------------ */

static vmp_status start(vmp_record_writer **out, int fd, int own, const char *name,
                        const vmp_record_writer_options *opts)
{
    vmp_record_writer *w = calloc(1, sizeof *w);
    int level = 3;
    *out = w;
    if (!w) {
        if (own)
            close(fd);
        return VMP_ERR_NOMEM;
    }
    w->fd = fd;
    w->own_fd = own;
    snprintf(w->name, sizeof w->name, "%s", name ? name : "output");
    if (opts && opts->version != VMP_RECORD_WRITER_OPTIONS_VERSION)
        return fail(w, VMP_ERR_INVALID_ARG, "unknown options version %u", opts->version);
    w->chunk_limit = opts && opts->chunk_bytes ? opts->chunk_bytes : DEFAULT_CHUNK;
    if (opts && opts->zstd_level)
        level = opts->zstd_level;
    if (opts && opts->min_minor)
        w->min_minor = opts->min_minor < VMP_FORMAT_MINOR ? opts->min_minor : VMP_FORMAT_MINOR;
    if (vmp_chunk_writer__init(&w->cw, fd, level) < 0)
        return fail(w, VMP_ERR_NOMEM, "cannot set up zstd");
    if (opts && opts->format_major > 2)
        return fail(w, VMP_ERR_INVALID_ARG, "no format %u.x", opts->format_major);
    w->blocks = !opts || opts->format_major != 1;
    w->time_unit = 1;
    if (w->blocks && vmp_block__init(&w->block, BLOCK_SAMPLES) < 0)
        return fail(w, VMP_ERR_NOMEM, "out of memory");
    return VMP_OK; /* the file header frame comes with the HEADER record */
}

vmp_status vmp_record_writer_open_fd(vmp_record_writer **out, int fd, const char *name,
                                     const vmp_record_writer_options *opts)
{
    if (!out || fd < 0)
        return VMP_ERR_INVALID_ARG;
    return start(out, fd, 0, name, opts);
}

vmp_status vmp_record_writer_open_file(vmp_record_writer **out, const char *path,
                                       const vmp_record_writer_options *opts)
{
    int fd;
    if (!out || !path)
        return VMP_ERR_INVALID_ARG;
    if (strcmp(path, "-") == 0)
        return start(out, 1, 0, "standard output", opts);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        int e = errno;
        vmp_status st = start(out, -1, 0, path, opts);
        if (*out) {
            (*out)->failed = 0;
            fail(*out, VMP_ERR_IO, "cannot create: %s", strerror(e));
        }
        return st < 0 && st != VMP_ERR_IO ? st : VMP_ERR_IO;
    }
    return start(out, fd, 1, path, opts);
}

void vmp_record_writer_get_totals(const vmp_record_writer *w, vmp_record_writer_totals *out)
{
    if (w && out)
        *out = w->t;
}

const char *vmp_record_writer_errmsg(const vmp_record_writer *w)
{
    return w && w->failed ? w->err : "";
}

void vmp_record_writer_close(vmp_record_writer *w)
{
    if (!w)
        return;
    if (w->own_fd && w->fd >= 0)
        close(w->fd);
    vmp_chunk_writer__free(&w->cw);
    vmp_block__free(&w->block);
    vmp_buf__free(&w->block_buf);
    vmp_idmap__free(&w->machine_nodes);
    free(w->machine_pcs);
    free(w->chunk.data);
    free(w->rec.data);
    free(w);
}
