/* SPDX-License-Identifier: MIT
 *
 * vmp_record_writer.c - encode vmp_record values into a vmp file: header
 * frame (spec.md §3), chunks (§4), records (§5), END (§5.2), seek table (§6).
 *
 * Outline: each record is encoded into `body` (its key/value pairs, counting
 * them), then its map head, key 0 and type go into the chunk buffer followed
 * by the body.  Before a record is appended the chunk is closed when the
 * record would take its content past the limit; a sample is encoded after that
 * decision because its time delta depends on the chunk it lands in.
 */
#include "vmp_record_writer.h"

#include <cbor.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "vmp_format.h"

#define DEFAULT_CHUNK (1u << 20)

typedef struct buf {
    unsigned char *data;
    size_t len, cap;
    int failed;
} buf;

typedef struct seek_entry {
    uint64_t offset, csize, size, first_time, last_time, samples;
} seek_entry;

struct vmp_record_writer {
    int fd, own_fd, failed, finished, header_done;
    unsigned min_minor; /* options.min_minor */
    size_t chunk_limit;
    ZSTD_CCtx *zc;
    buf chunk, body, zbuf;
    size_t body_items;
    uint64_t prev_time; /* time of the previous sample of the chunk */
    uint64_t chunk_samples, chunk_first, chunk_last;
    int chunk_has_sample;
    seek_entry *seek;
    size_t n_seek, cap_seek;
    vmp_record_writer_totals t;
    char name[256];
    char err[512];
};

/* ---- buffers and CBOR heads ------------------------------------------------ */

static int reserve(buf *b, size_t more)
{
    size_t want;
    unsigned char *p;
    if (b->failed)
        return -1;
    if (b->cap - b->len >= more)
        return 0;
    want = b->cap ? b->cap : 256;
    while (want - b->len < more) {
        if (want > SIZE_MAX / 2) {
            b->failed = 1;
            return -1;
        }
        want *= 2;
    }
    p = realloc(b->data, want);
    if (!p) {
        b->failed = 1;
        return -1;
    }
    b->data = p;
    b->cap = want;
    return 0;
}

static void put(buf *b, const void *p, size_t n)
{
    if (n == 0 || reserve(b, n))
        return;
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

/* Every head fits 9 bytes; the libcbor encoders pick the shortest form. */
static void head_uint(buf *b, uint64_t v)
{
    if (reserve(b, 9) == 0)
        b->len += cbor_encode_uint(v, b->data + b->len, 9);
}

static void head_int(buf *b, int64_t v)
{
    if (reserve(b, 9))
        return;
    if (v >= 0)
        b->len += cbor_encode_uint((uint64_t)v, b->data + b->len, 9);
    else
        b->len += cbor_encode_negint((uint64_t)(-(v + 1)), b->data + b->len, 9);
}

static void head_array(buf *b, size_t n)
{
    if (reserve(b, 9) == 0)
        b->len += cbor_encode_array_start(n, b->data + b->len, 9);
}

static void head_map(buf *b, size_t n)
{
    if (reserve(b, 9) == 0)
        b->len += cbor_encode_map_start(n, b->data + b->len, 9);
}

static void put_tstr(buf *b, const char *s, size_t n)
{
    if (reserve(b, 9) == 0)
        b->len += cbor_encode_string_start(n, b->data + b->len, 9);
    put(b, s, n);
}

static void put_bstr(buf *b, const void *s, size_t n)
{
    if (reserve(b, 9) == 0)
        b->len += cbor_encode_bytestring_start(n, b->data + b->len, 9);
    put(b, s, n);
}

/* ---- key/value pairs into the body ---------------------------------------------- */

static void key(vmp_record_writer *w, unsigned k)
{
    head_uint(&w->body, k);
    w->body_items++;
}

static void kv_uint(vmp_record_writer *w, unsigned k, uint64_t v, uint64_t dflt)
{
    if (v == dflt)
        return;
    key(w, k);
    head_uint(&w->body, v);
}

static void kv_uint_always(vmp_record_writer *w, unsigned k, uint64_t v)
{
    key(w, k);
    head_uint(&w->body, v);
}

static void kv_int(vmp_record_writer *w, unsigned k, int64_t v)
{
    if (v == 0)
        return;
    key(w, k);
    head_int(&w->body, v);
}

static void kv_str(vmp_record_writer *w, unsigned k, const vmp_str *s)
{
    if (!s->s || s->len == 0)
        return;
    key(w, k);
    put_tstr(&w->body, s->s, s->len);
}

static void kv_strs(vmp_record_writer *w, unsigned k, const vmp_str *v, size_t n)
{
    size_t i;
    if (n == 0)
        return;
    key(w, k);
    head_array(&w->body, n);
    for (i = 0; i < n; i++)
        put_tstr(&w->body, v[i].s ? v[i].s : "", v[i].s ? v[i].len : 0);
}

static void kv_uints(vmp_record_writer *w, unsigned k, const uint64_t *v, size_t n)
{
    size_t i;
    if (n == 0)
        return;
    key(w, k);
    head_array(&w->body, n);
    for (i = 0; i < n; i++)
        head_uint(&w->body, v[i]);
}

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

static vmp_status out_write(vmp_record_writer *w, const void *data, size_t size)
{
    const unsigned char *p = data;
    while (size > 0) {
        ssize_t n = write(w->fd, p, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return fail(w, VMP_ERR_IO, "write: %s", n < 0 ? strerror(errno) : "no progress");
        p += n;
        size -= (size_t)n;
        w->t.bytes += (uint64_t)n;
    }
    return VMP_OK;
}

static void store_le32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

/* Compress and write the open chunk, if it holds anything.  spec R-CHK-1 */
static vmp_status flush_chunk(vmp_record_writer *w)
{
    size_t bound, n;
    seek_entry e;
    vmp_status st;
    if (w->chunk.len == 0)
        return VMP_OK;
    bound = ZSTD_compressBound(w->chunk.len);
    w->zbuf.len = 0;
    if (reserve(&w->zbuf, bound))
        return fail(w, VMP_ERR_NOMEM, "out of memory");
    n = ZSTD_compress2(w->zc, w->zbuf.data, bound, w->chunk.data, w->chunk.len);
    if (ZSTD_isError(n))
        return fail(w, VMP_ERR_IO, "zstd: %s", ZSTD_getErrorName(n));
    e.offset = w->t.bytes;
    e.csize = n;
    e.size = w->chunk.len;
    e.first_time = w->chunk_first;
    e.last_time = w->chunk_last;
    e.samples = w->chunk_samples;
    st = out_write(w, w->zbuf.data, n);
    if (st < 0)
        return st;
    if (w->n_seek == w->cap_seek) {
        size_t cap = w->cap_seek ? 2 * w->cap_seek : 64;
        seek_entry *p = realloc(w->seek, cap * sizeof *p);
        if (!p)
            return fail(w, VMP_ERR_NOMEM, "out of memory");
        w->seek = p;
        w->cap_seek = cap;
    }
    w->seek[w->n_seek++] = e;
    w->t.chunks++;
    w->chunk.len = 0;
    w->prev_time = 0;
    w->chunk_samples = w->chunk_first = w->chunk_last = 0;
    w->chunk_has_sample = 0;
    return VMP_OK;
}

/* Begin a record: clear the body. */
static void begin(vmp_record_writer *w)
{
    w->body.len = 0;
    w->body_items = 0;
}

static size_t head_size(size_t n)
{
    unsigned char tmp[9];
    return cbor_encode_map_start(n, tmp, sizeof tmp);
}

/* Append the record (type `type`, body so far) to the chunk. */
static vmp_status commit(vmp_record_writer *w, unsigned type)
{
    size_t need;
    if (w->body.failed)
        return fail(w, VMP_ERR_NOMEM, "out of memory");
    need = head_size(w->body_items + 1) + 2 + w->body.len;
    if (w->chunk.len > 0 && w->chunk.len + need > w->chunk_limit) {
        vmp_status st = flush_chunk(w);
        if (st < 0)
            return st;
    }
    head_map(&w->chunk, w->body_items + 1);
    head_uint(&w->chunk, VMP_KEY_TYPE); /* spec R-REC-1: key 0 first */
    head_uint(&w->chunk, type);
    put(&w->chunk, w->body.data, w->body.len);
    if (w->chunk.failed)
        return fail(w, VMP_ERR_NOMEM, "out of memory");
    w->t.records++;
    return VMP_OK;
}

/* ---- records ----------------------------------------------------------------------- */

static void enc_header(vmp_record_writer *w, const vmp_rec_header *h)
{
    size_t i;
    kv_str(w, VMP_HDR_PRODUCER, &h->producer);
    kv_str(w, VMP_HDR_VM_NAME, &h->vm_name);
    kv_str(w, VMP_HDR_VM_VERSION, &h->vm_version);
    kv_uint(w, VMP_HDR_PID, h->pid, 0);
    kv_uint(w, VMP_HDR_START_REALTIME, h->start_realtime_ns, 0);
    kv_str(w, VMP_HDR_CLOCK, &h->clock);
    kv_uint(w, VMP_HDR_CLOCK_RES, h->clock_res_ns, 0);
    kv_uint(w, VMP_HDR_INTERVAL, h->interval_ns, 0);
    kv_uint(w, VMP_HDR_POINTER_SIZE, h->pointer_size, 8);
    kv_strs(w, VMP_HDR_STATES, h->states, h->n_states);
    kv_strs(w, VMP_HDR_CODE_KINDS, h->code_kinds, h->n_code_kinds);
    kv_strs(w, VMP_HDR_TIERS, h->tiers, h->n_tiers);
    kv_strs(w, VMP_HDR_EVENT_KINDS, h->event_kinds, h->n_event_kinds);
    kv_strs(w, VMP_HDR_COUNTER_KINDS, h->counter_kinds, h->n_counter_kinds);
    kv_strs(w, VMP_HDR_FAILURE_REASONS, h->failure_reasons, h->n_failure_reasons);
    if (h->n_labels > 0) {
        key(w, VMP_HDR_LABELS);
        head_map(&w->body, h->n_labels);
        for (i = 0; i < 2 * h->n_labels; i++)
            put_tstr(&w->body, h->labels[i].s ? h->labels[i].s : "", h->labels[i].len);
    }
    kv_uint(w, VMP_HDR_START_MONOTONIC, h->start_monotonic_ns, 0);
    kv_str(w, VMP_HDR_NAME_SEPARATOR, &h->name_separator);
}

/* A pc_map (absolute offsets, as the reader delivers them) and inline
 * records under keys `k_map` and `k_inline` (CODE_OBJECT, CODE_MAP). */
static void enc_code_maps(vmp_record_writer *w,
                          unsigned k_map,
                          const uint64_t *pc_map,
                          size_t pc_map_len,
                          unsigned k_inline,
                          const vmp_rec_inline *inlines,
                          size_t n_inlines)
{
    size_t i, j;
    if (pc_map_len > 0) {
        uint64_t prev = 0;
        key(w, k_map);
        head_array(&w->body, 2 * pc_map_len);
        for (i = 0; i < pc_map_len; i++) {
            uint64_t off = pc_map[2 * i];
            /* offsets are non-decreasing (spec §5.7); guard the delta anyway */
            head_uint(&w->body, off >= prev ? off - prev : 0);
            head_uint(&w->body, pc_map[2 * i + 1]);
            prev = off >= prev ? off : prev;
        }
    }
    if (n_inlines > 0) {
        key(w, k_inline);
        head_array(&w->body, n_inlines);
        for (i = 0; i < n_inlines; i++) {
            const vmp_rec_inline *in = &inlines[i];
            head_array(&w->body, 1 + 2 * in->depth);
            head_uint(&w->body, in->mcpc_offset);
            for (j = 0; j < 2 * in->depth; j++)
                head_uint(&w->body, in->frames[j]);
        }
    }
}

static void enc_code_object(vmp_record_writer *w, const vmp_rec_code_object *c)
{
    kv_uint_always(w, VMP_CODE_ID, c->id);
    kv_uint(w, VMP_CODE_ZONE, c->zone, 0);
    kv_uint(w, VMP_CODE_KIND, c->kind, 0);
    kv_str(w, VMP_CODE_NAME, &c->name);
    kv_uint(w, VMP_CODE_FUNCTION, c->function, 0);
    kv_uint_always(w, VMP_CODE_START, c->start);
    kv_uint_always(w, VMP_CODE_SIZE, c->size);
    kv_uint(w, VMP_CODE_GENERATION, c->generation, 0);
    kv_uint(w, VMP_CODE_TIER, c->tier, 0);
    enc_code_maps(w, VMP_CODE_PC_MAP, c->pc_map, c->pc_map_len, VMP_CODE_INLINE, c->inlines,
                  c->n_inlines);
    kv_uint(w, VMP_CODE_TIME, c->time_ns, 0);
}

static vmp_status write_sample(vmp_record_writer *w, const vmp_record *rec)
{
    const vmp_rec_sample *s = &rec->u.sample;
    int failed = rec->type == VMP_REC_FAILED_SAMPLE;
    int attempt;
    for (attempt = 0; attempt < 2; attempt++) {
        size_t need;
        begin(w);
        /* spec R-SMP-1: the delta from the previous sample of this chunk */
        kv_int(w, VMP_SMP_TIME_DELTA, (int64_t)(s->time_ns - w->prev_time));
        kv_uint(w, VMP_SMP_THREAD, s->thread, 0);
        kv_uint(w, VMP_SMP_STATE, s->state, 0);
        if (s->has_pc)
            kv_uint_always(w, VMP_SMP_PC, s->pc);
        kv_uint(w, VMP_SMP_GENERATION, s->generation, 0);
        if (!failed)
            kv_uint(w, VMP_SMP_STACK, s->stack, 0);
        kv_uint(w, VMP_SMP_WEIGHT, s->weight, 1); /* spec R-SMP-4: 0 stays 0 */
        if (!failed)
            kv_uint(w, VMP_SMP_BLAME, s->blame, 0);
        else
            kv_uint(w, VMP_SMP_REASON, s->reason, 0);
        if (w->body.failed)
            return fail(w, VMP_ERR_NOMEM, "out of memory");
        need = head_size(w->body_items + 1) + 2 + w->body.len;
        if (attempt == 0 && w->chunk.len > 0 && w->chunk.len + need > w->chunk_limit) {
            vmp_status st = flush_chunk(w); /* then encode again: deltas restart */
            if (st < 0)
                return st;
            continue;
        }
        break;
    }
    {
        vmp_status st = commit(w, (unsigned)rec->type);
        if (st < 0)
            return st;
    }
    w->prev_time = s->time_ns;
    if (!w->chunk_has_sample)
        w->chunk_first = s->time_ns;
    w->chunk_has_sample = 1;
    w->chunk_last = s->time_ns;
    w->chunk_samples++;
    w->t.samples++;
    if (failed)
        w->t.failed++;
    if (s->time_ns > w->t.last_time)
        w->t.last_time = s->time_ns;
    return VMP_OK;
}

static void note_gen(vmp_record_writer *w, uint64_t g)
{
    if (g > w->t.generation)
        w->t.generation = g;
}

/* The file header frame (spec §3, R-HDR-1..4), with the least minor version
 * the file needs: the options' min_minor (records passed on), at least 1
 * when its HEADER has a name separator (1.1). */
static vmp_status write_file_frame(vmp_record_writer *w, const vmp_rec_header *h)
{
    unsigned char hdr[VMP_SKIPPABLE_HEADER_SIZE + VMP_FILE_HEADER_SIZE] = {0};
    store_le32(hdr, VMP_FILE_FRAME_MAGIC);
    store_le32(hdr + 4, VMP_FILE_HEADER_SIZE);
    memcpy(hdr + 8, VMP_MAGIC, VMP_MAGIC_SIZE);
    hdr[16] = VMP_FORMAT_MAJOR;
    hdr[18] = (unsigned char)(w->min_minor > 0 ? w->min_minor : h->name_separator.len > 0 ? 1 : 0);
    return out_write(w, hdr, sizeof hdr);
}

vmp_status vmp_record_writer_write(vmp_record_writer *w, const vmp_record *rec)
{
    const void *u;
    size_t i;
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
    u = &rec->u;
    if (rec->type == VMP_REC_HEADER && write_file_frame(w, u) < 0)
        return VMP_ERR_IO;
    begin(w);
    switch (rec->type) {
    case VMP_REC_HEADER:
        enc_header(w, u);
        w->header_done = 1;
        break;
    case VMP_REC_MODULE: {
        const vmp_rec_module *m = u;
        kv_uint_always(w, VMP_MOD_ID, m->id);
        kv_str(w, VMP_MOD_PATH, &m->path);
        if (m->build_id_size > 0) {
            key(w, VMP_MOD_BUILD_ID);
            put_bstr(&w->body, m->build_id, m->build_id_size);
        }
        kv_uint(w, VMP_MOD_BIAS, m->bias, 0);
        kv_uint(w, VMP_MOD_START, m->start, 0);
        kv_uint(w, VMP_MOD_END, m->end, 0);
        break;
    }
    case VMP_REC_MODULE_SYMBOLS: {
        const vmp_rec_module_symbols *ms = u;
        kv_uint_always(w, VMP_SYMS_MODULE, ms->module);
        if (ms->n_symbols > 0) {
            key(w, VMP_SYMS_LIST);
            head_array(&w->body, 3 * ms->n_symbols);
            for (i = 0; i < ms->n_symbols; i++) {
                head_uint(&w->body, ms->symbols[i].value);
                head_uint(&w->body, ms->symbols[i].size);
                put_tstr(&w->body, ms->symbols[i].name.s ? ms->symbols[i].name.s : "",
                         ms->symbols[i].name.len);
            }
        }
        break;
    }
    case VMP_REC_THREAD: {
        const vmp_rec_thread *t = u;
        kv_uint_always(w, VMP_THR_ID, t->id);
        kv_str(w, VMP_THR_NAME, &t->name);
        kv_uint(w, VMP_THR_TIME, t->time_ns, 0);
        kv_uint(w, VMP_THR_END_TIME, t->end_time_ns, 0);
        break;
    }
    case VMP_REC_FUNCTION: {
        const vmp_rec_function *f = u;
        kv_uint_always(w, VMP_FN_ID, f->id);
        kv_str(w, VMP_FN_NAME, &f->name);
        kv_str(w, VMP_FN_SCOPE, &f->scope);
        kv_str(w, VMP_FN_SIGNATURE, &f->signature);
        kv_str(w, VMP_FN_FILE, &f->file);
        kv_uint(w, VMP_FN_LINE, f->first_line, 0);
        kv_uints(w, VMP_FN_LINES, f->lines, 2 * f->n_lines);
        kv_uint(w, VMP_FN_BC_SIZE, f->bytecode_size, 0);
        break;
    }
    case VMP_REC_CODE_ZONE: {
        const vmp_rec_code_zone *z = u;
        kv_uint_always(w, VMP_ZONE_ID, z->id);
        kv_str(w, VMP_ZONE_NAME, &z->name);
        kv_uint(w, VMP_ZONE_START, z->start, 0);
        kv_uint(w, VMP_ZONE_END, z->end, 0);
        break;
    }
    case VMP_REC_CODE_OBJECT:
        enc_code_object(w, u);
        break;
    case VMP_REC_CODE_MAP: {
        const vmp_rec_code_map *m = u;
        kv_uint_always(w, VMP_CMAP_ID, m->id);
        enc_code_maps(w, VMP_CMAP_PC_MAP, m->pc_map, m->pc_map_len, VMP_CMAP_INLINE, m->inlines,
                      m->n_inlines);
        break;
    }
    case VMP_REC_CODE_SNAPSHOT: {
        const vmp_rec_code_snapshot *s = u;
        kv_uint_always(w, VMP_SNAP_ZONE, s->zone);
        kv_uint_always(w, VMP_SNAP_GENERATION, s->generation);
        kv_uints(w, VMP_SNAP_ENTRIES, s->entries, 2 * s->n);
        kv_uint(w, VMP_SNAP_TIME, s->time_ns, 0);
        note_gen(w, s->generation);
        break;
    }
    case VMP_REC_CODE_COMPACTION: {
        const vmp_rec_code_compaction *c = u;
        kv_uint_always(w, VMP_COMP_ZONE, c->zone);
        kv_uint_always(w, VMP_COMP_GENERATION, c->generation);
        kv_uints(w, VMP_COMP_MOVES, c->moves, 2 * c->n_moves);
        kv_uints(w, VMP_COMP_FREES, c->frees, c->n_frees);
        kv_uint(w, VMP_COMP_TIME, c->time_ns, 0);
        kv_uint(w, VMP_COMP_DURATION, c->duration_ns, 0);
        note_gen(w, c->generation);
        break;
    }
    case VMP_REC_CODE_FREE: {
        const vmp_rec_code_free *f = u;
        kv_uint_always(w, VMP_FREE_GENERATION, f->generation);
        kv_uint_always(w, VMP_FREE_ID, f->id);
        kv_uint(w, VMP_FREE_TIME, f->time_ns, 0);
        note_gen(w, f->generation);
        break;
    }
    case VMP_REC_CODE_MOVE: {
        const vmp_rec_code_move *m = u;
        kv_uint_always(w, VMP_MOVE_GENERATION, m->generation);
        kv_uint_always(w, VMP_MOVE_ID, m->id);
        kv_uint_always(w, VMP_MOVE_START, m->new_start);
        kv_uint(w, VMP_MOVE_TIME, m->time_ns, 0);
        note_gen(w, m->generation);
        break;
    }
    case VMP_REC_STACK_NODE: {
        const vmp_rec_stack_node *n = u;
        kv_uint_always(w, VMP_NODE_ID, n->id);
        kv_uint(w, VMP_NODE_PARENT, n->parent, 0);
        /* spec R-STK-1: exactly one of pc and function */
        if (n->is_function) {
            kv_uint_always(w, VMP_NODE_FUNCTION, n->function);
            if (n->has_bcpc)
                kv_uint_always(w, VMP_NODE_BCPC, n->bcpc);
        } else {
            kv_uint_always(w, VMP_NODE_PC, n->pc);
        }
        break;
    }
    case VMP_REC_SAMPLE:
    case VMP_REC_FAILED_SAMPLE:
        return write_sample(w, rec);
    case VMP_REC_EVENT: {
        const vmp_rec_event *e = u;
        kv_uint(w, VMP_EVT_TIME, e->time_ns, 0);
        kv_uint(w, VMP_EVT_KIND, e->kind, 0);
        kv_uint(w, VMP_EVT_DURATION, e->duration_ns, 0);
        kv_uint(w, VMP_EVT_THREAD, e->thread, 0);
        if (e->has_value) {
            key(w, VMP_EVT_VALUE);
            head_int(&w->body, e->value);
        }
        kv_str(w, VMP_EVT_TEXT, &e->text);
        break;
    }
    case VMP_REC_COUNTER: {
        const vmp_rec_counter *c = u;
        kv_uint(w, VMP_CTR_TIME, c->time_ns, 0);
        kv_uint(w, VMP_CTR_KIND, c->kind, 0);
        kv_int(w, VMP_CTR_VALUE, c->value);
        break;
    }
    default:
        return fail(w, VMP_ERR_INVALID_ARG, "record type %d unknown to this writer", rec->type);
    }
    return commit(w, (unsigned)rec->type);
}

vmp_status vmp_record_writer_finish(vmp_record_writer *w, const vmp_rec_end *extra)
{
    vmp_status st;
    buf b = {0};
    unsigned char head[VMP_SKIPPABLE_HEADER_SIZE] = {0}, foot[VMP_SEEK_FOOTER_SIZE] = {0};
    uint64_t end_time = w ? w->t.last_time : 0, gen = w ? w->t.generation : 0;
    size_t i;
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
    begin(w);
    kv_uint(w, VMP_END_TIME, end_time, 0);
    kv_uint(w, VMP_END_SAMPLES, w->t.samples, 0);
    kv_uint(w, VMP_END_DROPPED_FULL, extra ? extra->dropped_full : 0, 0);
    kv_uint(w, VMP_END_DROPPED_WRITE, extra ? extra->dropped_write : 0, 0);
    kv_uint(w, VMP_END_FAILED, w->t.failed, 0);
    /* spec R-END-1: chunks before END's chunk.  Flush first if END would not
     * fit, so the count is known when it is encoded. */
    if (w->chunk.len > 0 && w->chunk.len + w->body.len + 64 > w->chunk_limit) {
        st = flush_chunk(w);
        if (st < 0)
            return st;
    }
    kv_uint(w, VMP_END_CHUNKS, w->t.chunks, 0);
    kv_uint(w, VMP_END_TRUNCATED_STACKS, extra ? extra->truncated_stacks : 0, 0);
    kv_uint(w, VMP_END_GENERATION, gen, 0);
    st = commit(w, VMP_REC_END);
    if (st < 0)
        return st;
    w->finished = 1;
    st = flush_chunk(w);
    if (st < 0)
        return st;
    /* spec §6: the seek table */
    put(&b, head, sizeof head);
    head_array(&b, w->n_seek);
    for (i = 0; i < w->n_seek; i++) {
        const seek_entry *e = &w->seek[i];
        head_array(&b, 6);
        head_uint(&b, e->offset);
        head_uint(&b, e->csize);
        head_uint(&b, e->size);
        head_uint(&b, e->first_time);
        head_uint(&b, e->last_time);
        head_uint(&b, e->samples);
    }
    put(&b, foot, sizeof foot);
    if (b.failed || b.len > UINT32_MAX) {
        free(b.data);
        return fail(w, VMP_ERR_NOMEM, "out of memory");
    }
    store_le32(b.data, VMP_SEEK_FRAME_MAGIC);
    store_le32(b.data + 4, (uint32_t)(b.len - VMP_SKIPPABLE_HEADER_SIZE));
    store_le32(b.data + b.len - VMP_SEEK_FOOTER_SIZE, (uint32_t)b.len);
    memcpy(b.data + b.len - 4, VMP_SEEK_FOOTER_MAGIC, 4);
    st = out_write(w, b.data, b.len);
    free(b.data);
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

static vmp_status start(vmp_record_writer **out,
                        int fd,
                        int own,
                        const char *name,
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
    w->zc = ZSTD_createCCtx();
    if (!w->zc || ZSTD_isError(ZSTD_CCtx_setParameter(w->zc, ZSTD_c_compressionLevel, level)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(w->zc, ZSTD_c_checksumFlag, 1)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(w->zc, ZSTD_c_contentSizeFlag, 1)))
        return fail(w, VMP_ERR_NOMEM, "cannot set up zstd");
    return VMP_OK; /* the file header frame comes with the HEADER record */
}

vmp_status vmp_record_writer_open_fd(vmp_record_writer **out,
                                     int fd,
                                     const char *name,
                                     const vmp_record_writer_options *opts)
{
    if (!out || fd < 0)
        return VMP_ERR_INVALID_ARG;
    return start(out, fd, 0, name, opts);
}

vmp_status vmp_record_writer_open_file(vmp_record_writer **out,
                                       const char *path,
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
    ZSTD_freeCCtx(w->zc);
    free(w->chunk.data);
    free(w->body.data);
    free(w->zbuf.data);
    free(w->seek);
    free(w);
}
