/* SPDX-License-Identifier: MIT
 *
 * vmp_speedscope.c - `vmp speedscope`: a vmp profile, resolved through the
 * analysis (spec.md §5 "Generations", "Resolution", §5.12), in
 * speedscope's JSON file format.  vmp_convert.h documents the mapping.
 *
 * Outline: one streaming pass resolves every sample and appends (stack,
 * weight) to its thread's spool: a small buffer per thread that is written
 * as a block to one temporary file when full (consecutive equal stacks are
 * merged first).  At the end each thread's blocks are read back in order and
 * written as one "sampled" profile; frame indexes are given on first use, and
 * shared.frames comes last (JSON objects are unordered).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_convert.h"
#include "vmp_convmeta.h"
#include "vmp_textout.h"

#define SPOOL_RECS 1024 /* records per block: 24 KiB per thread */

/* One spooled sample: `stack` (0 == none), `failed` = reason + 1 (0 ==
 * not failed), `leaf` (failed samples only), and the summed weight. */
typedef struct spool_rec {
    uint32_t stack, leaf, failed, pad;
    uint64_t weight;
} spool_rec;

typedef struct thread_spool {
    uint64_t id;
    uint64_t total; /* weight */
    uint64_t n_out; /* samples written after merging */
    spool_rec *buf;
    size_t n;
    long *blocks; /* file offsets of full blocks */
    size_t n_blocks, cap_blocks;
    int have_last;
} thread_spool;

typedef struct ss_conv {
    vmp_analysis *a;
    vmp_convmeta m;
    unsigned flags;
    thread_spool *threads;
    size_t n_threads, cap_threads;
    vmp_hmap thread_idx; /* thread id -> index + 1 */
    FILE *tmp;
    uint64_t samples, weight;
    /* output frame indexes: key -> index + 1; keys are (kind, id) */
    vmp_hmap frame_idx;
    uint64_t *frame_keys; /* index -> key (kind << 32 | id) */
    size_t n_frames, cap_frames;
    uint32_t *chain;
    size_t cap_chain;
} ss_conv;

static int spool_flush(ss_conv *c, thread_spool *t)
{
    long off;
    if (!c->tmp) {
        c->tmp = tmpfile();
        if (!c->tmp)
            return -2;
    }
    if (fseek(c->tmp, 0, SEEK_END) != 0 || (off = ftell(c->tmp)) < 0)
        return -2;
    if (fwrite(t->buf, sizeof *t->buf, t->n, c->tmp) != t->n)
        return -2;
    if (vmp_grow__((void **)&t->blocks, &t->cap_blocks, t->n_blocks + 1, sizeof *t->blocks))
        return -1;
    t->blocks[t->n_blocks++] = off;
    t->n = 0;
    t->have_last = 0;
    return 0;
}

/* Returns 0, -1 out of memory, -2 temporary file error. */
static int take_sample(void *arg, const vmp_asample *s)
{
    ss_conv *c = arg;
    uint32_t idx = vmp_hmap__get(&c->thread_idx, s->thread, 0);
    thread_spool *t;
    spool_rec r;
    c->samples++;
    c->weight += s->weight;
    if (!idx) {
        if (vmp_grow__((void **)&c->threads, &c->cap_threads, c->n_threads + 1, sizeof *c->threads))
            return -1;
        t = &c->threads[c->n_threads];
        memset(t, 0, sizeof *t);
        t->id = s->thread;
        t->buf = malloc(SPOOL_RECS * sizeof *t->buf);
        if (!t->buf || vmp_hmap__put(&c->thread_idx, s->thread, 0, (uint32_t)c->n_threads + 1)) {
            free(t->buf);
            return -1;
        }
        idx = (uint32_t)++c->n_threads;
    }
    t = &c->threads[idx - 1];
    t->total += s->weight;
    memset(&r, 0, sizeof r);
    if (s->failed) {
        r.failed = (s->reason >= UINT32_MAX - 1 ? UINT32_MAX - 2 : s->reason) + 1;
        r.leaf = s->leaf;
    } else {
        r.stack = s->stack;
    }
    r.weight = s->weight;
    if (t->have_last) {
        spool_rec *last = &t->buf[t->n - 1];
        if (last->stack == r.stack && last->leaf == r.leaf && last->failed == r.failed) {
            last->weight += r.weight;
            return 0;
        }
    }
    if (t->n == SPOOL_RECS) {
        int rc = spool_flush(c, t);
        if (rc)
            return rc;
    }
    t->buf[t->n++] = r;
    t->have_last = 1;
    return 0;
}

/* ---- JSON output --------------------------------------------------------------------------- */

static void put_json_string(FILE *f, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    fputc('"', f);
    while (i < n) {
        size_t l;
        if (s[i] == '"' || s[i] == '\\') {
            fputc('\\', f);
            fputc(s[i], f);
            i++;
        } else if (s[i] < 0x20) {
            fprintf(f, "\\u%04x", s[i]);
            i++;
        } else if ((l = vmp_utf8__seq(s + i, n - i)) != 0) {
            fwrite(s + i, 1, l, f);
            i += l;
        } else {
            fputs("\\ufffd", f);
            i++;
        }
    }
    fputc('"', f);
}

enum {
    KEY_FRAME = 1,
    KEY_FUNCTION = 2,
    KEY_FAILED = 3
};

/* Output index of a frame key, assigned on first use; -1 out of memory. */
static int64_t frame_index(ss_conv *c, uint32_t kind, uint32_t id)
{
    uint32_t v = vmp_hmap__get(&c->frame_idx, kind, id);
    if (v)
        return (int64_t)v - 1;
    if (vmp_grow__((void **)&c->frame_keys, &c->cap_frames, c->n_frames + 1,
                   sizeof *c->frame_keys) ||
        vmp_hmap__put(&c->frame_idx, kind, id, (uint32_t)c->n_frames + 1))
        return -1;
    c->frame_keys[c->n_frames] = (uint64_t)kind << 32 | id;
    return (int64_t)c->n_frames++;
}

static int64_t frame_of(ss_conv *c, uint32_t frame)
{
    if (c->flags & VMP_SPEEDSCOPE_NO_RANGES) {
        const vmp_aframe *fr = vmp_analysis_frame(c->a, frame);
        return frame_index(c, KEY_FUNCTION, fr ? fr->function : 0);
    }
    return frame_index(c, KEY_FRAME, frame);
}

/* Write one sample's frame index array, root first.  0 or -1 (no memory). */
static int put_stack(ss_conv *c, FILE *out, const spool_rec *r)
{
    size_t depth = 0, i;
    uint32_t node = r->stack;
    int64_t idx;
    while (node) {
        const vmp_astack *st = vmp_analysis_stack(c->a, node);
        if (!st)
            break;
        if (vmp_grow__((void **)&c->chain, &c->cap_chain, depth + 1, sizeof *c->chain))
            return -1;
        c->chain[depth++] = st->frame;
        node = st->parent;
    }
    if (r->failed && r->leaf) {
        if (vmp_grow__((void **)&c->chain, &c->cap_chain, depth + 1, sizeof *c->chain))
            return -1;
        c->chain[depth++] = r->leaf;
    }
    fputc('[', out);
    if (r->failed) {
        idx = frame_index(c, KEY_FAILED, r->failed - 1);
        if (idx < 0)
            return -1;
        fprintf(out, "%" PRId64 "%s", idx, depth ? "," : "");
    }
    for (i = depth; i-- > 0;) {
        idx = frame_of(c, c->chain[i]);
        if (idx < 0)
            return -1;
        fprintf(out, "%" PRId64 "%s", idx, i ? "," : "");
    }
    fputc(']', out);
    return 0;
}

/* Calls fn for each of t's records in order.  0, -1 no memory, -2 tmp error. */
static int for_each_rec(ss_conv *c, thread_spool *t,
                        int (*fn)(ss_conv *, const spool_rec *, void *), void *payload)
{
    spool_rec *blk;
    size_t b, i;
    int rc = 0;
    if (t->n_blocks) {
        blk = malloc(SPOOL_RECS * sizeof *blk);
        if (!blk)
            return -1;
        for (b = 0; b < t->n_blocks && !rc; b++) {
            if (fseek(c->tmp, t->blocks[b], SEEK_SET) != 0 ||
                fread(blk, sizeof *blk, SPOOL_RECS, c->tmp) != SPOOL_RECS) {
                rc = -2;
                break;
            }
            for (i = 0; i < SPOOL_RECS && !rc; i++)
                rc = fn(c, &blk[i], payload);
        }
        free(blk);
    }
    for (i = 0; i < t->n && !rc; i++)
        rc = fn(c, &t->buf[i], payload);
    return rc;
}

typedef struct emit_state {
    FILE *out;
    uint64_t scale;
    int first;
    uint64_t n;
} emit_state;

static int emit_sample(ss_conv *c, const spool_rec *r, void *payload)
{
    emit_state *e = payload;
    if (!e->first)
        fputc(',', e->out);
    e->first = 0;
    e->n++;
    return put_stack(c, e->out, r);
}

static int emit_weight(ss_conv *c, const spool_rec *r, void *payload)
{
    emit_state *e = payload;
    (void)c;
    fprintf(e->out, "%s%" PRIu64, e->first ? "" : ",", r->weight * e->scale);
    e->first = 0;
    return 0;
}

static void put_frame(ss_conv *c, FILE *out, uint64_t key)
{
    uint32_t kind = (uint32_t)(key >> 32), id = (uint32_t)key;
    const vmp_aframe *fr = NULL;
    const vmp_afunction *fn = NULL;
    const vmp_cm_function *mf = NULL;
    uint64_t line = 0;
    fputs("{\"name\":", out);
    if (kind == KEY_FAILED) {
        const char *reason = vmp_analysis_failure_reason_name(c->a, id);
        char *s = malloc(strlen(reason) + 16);
        if (s) {
            sprintf(s, "[failed: %s]", reason);
            put_json_string(out, s, strlen(s));
            free(s);
        } else {
            fputs("\"[failed]\"", out);
        }
        fputc('}', out);
        return;
    }
    if (kind == KEY_FRAME) {
        char buf[512];
        size_t n = vmp_analysis_format_frame(c->a, buf, sizeof buf, id);
        char *big = NULL;
        if (n >= sizeof buf && (big = malloc(n + 1)) != NULL)
            vmp_analysis_format_frame(c->a, big, n + 1, id);
        put_json_string(out, big ? big : buf, big ? n : strlen(buf));
        free(big);
        fr = vmp_analysis_frame(c->a, id);
        fn = fr ? vmp_analysis_function(c->a, fr->function) : NULL;
    } else {
        fn = vmp_analysis_function(c->a, id);
        put_json_string(out, fn ? fn->name : "[unknown]", fn ? strlen(fn->name) : 9);
    }
    mf = fn ? vmp_convmeta__function(&c->m, fn->function_id) : NULL;
    if (mf && mf->file) {
        fputs(",\"file\":", out);
        put_json_string(out, c->m.str.s[mf->file], c->m.str.len[mf->file]);
    }
    if (fn && fr && fr->has_range) /* the line of A; 0 when unknown (left as is) */
        vmp_analysis_lines(c->a, fn->function_id, fr->bc_first, fr->bc_first, &line, NULL);
    if (!line && mf)
        line = mf->first_line;
    if (line)
        fprintf(out, ",\"line\":%" PRIu64, line);
    fputc('}', out);
}

static int write_json(ss_conv *c, FILE *out, const vmp_speedscope_options *o)
{
    const vmp_rec_header *h = vmp_analysis_header(c->a);
    uint64_t interval = h ? h->interval_ns : 0;
    const char *unit = interval ? "nanoseconds" : "none";
    size_t i, n_kinds = 0;
    int64_t kind = vmp_analysis_kind_selected(c->a);
    const vmp_akind *kinds = vmp_analysis_kinds(c->a, &n_kinds);
    int rc = 0;
    if (kind > 0 && (size_t)kind < n_kinds) { /* spec R-VIEW-6: the kind's own unit */
        interval = 0;
        unit = strcmp(kinds[kind].unit, "bytes") == 0         ? "bytes"
               : strcmp(kinds[kind].unit, "nanoseconds") == 0 ? "nanoseconds"
                                                              : "none";
    }
    fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"name\":", out);
    put_json_string(out, o->name ? o->name : "vmp profile",
                    strlen(o->name ? o->name : "vmp profile"));
    fputs(",\"exporter\":\"vmp speedscope\",\"activeProfileIndex\":0,\"profiles\":[", out);
    for (i = 0; i < c->n_threads && !rc; i++) {
        thread_spool *t = &c->threads[i];
        const char *tn = vmp_analysis_thread_name(c->a, t->id);
        emit_state e;
        fputs(i ? ",{" : "{", out);
        fputs("\"type\":\"sampled\",\"name\":", out);
        put_json_string(out, tn, strlen(tn));
        fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRIu64 ",\"samples\":[",
                unit, t->total * (interval ? interval : 1));
        memset(&e, 0, sizeof e);
        e.out = out;
        e.first = 1;
        e.scale = interval ? interval : 1;
        rc = for_each_rec(c, t, emit_sample, &e);
        t->n_out = e.n;
        if (rc)
            break;
        fputs("],\"weights\":[", out);
        e.first = 1;
        rc = for_each_rec(c, t, emit_weight, &e);
        fputs("]}", out);
    }
    if (rc)
        return rc;
    fputs("],\"shared\":{\"frames\":[", out);
    for (i = 0; i < c->n_frames; i++) {
        if (i)
            fputc(',', out);
        put_frame(c, out, c->frame_keys[i]);
    }
    fputs("]}}\n", out);
    return 0;
}

vmp_status vmp_speedscope_write(vmp_reader *r, FILE *out, const vmp_speedscope_options *opts,
                                vmp_convert_stats *stats_out, char *err, size_t err_size)
{
    vmp_speedscope_options o = VMP_SPEEDSCOPE_OPTIONS_INIT;
    ss_conv c;
    vmp_status st;
    int rc = 0;
    size_t i;
    if (vmp_conv__begin(r && out && (!opts || opts->version == VMP_SPEEDSCOPE_OPTIONS_VERSION), err,
                        err_size) < 0)
        return VMP_ERR_INVALID_ARG;
    if (opts)
        o = *opts;
    memset(&c, 0, sizeof c);
    c.flags = o.flags;
    st = vmp_analysis_create(&c.a, NULL);
    if (st < 0) {
        vmp_set_err__(err, err_size, "out of memory");
        return st;
    }
    st = vmp_conv__read_all(r, &c.m, c.a, take_sample, &c, &rc);
    if (st == VMP_ERR_NOMEM)
        rc = -1;
    if (rc == -1) {
        st = VMP_ERR_NOMEM;
    } else if (rc == -2) {
        vmp_set_err__(err, err_size, "temporary file: %s", strerror(errno ? errno : EIO));
        st = VMP_ERR_IO;
    } else if (st == VMP_END) {
        long pos = ftell(out);
        (void)pos;
        rc = write_json(&c, out, &o);
        if (rc == -1) {
            st = VMP_ERR_NOMEM;
        } else if (rc == -2) {
            vmp_set_err__(err, err_size, "temporary file: %s", strerror(errno ? errno : EIO));
            st = VMP_ERR_IO;
        } else if (fflush(out) != 0 || ferror(out)) {
            vmp_set_err__(err, err_size, "write error: %s", strerror(errno ? errno : EIO));
            st = VMP_ERR_IO;
        } else {
            st = VMP_OK;
        }
    } else if (st < 0) {
        const char *m = vmp_reader_errmsg(r);
        vmp_set_err__(err, err_size, "%s", m && *m ? m : vmp_status_str(st));
    }
    if (st == VMP_ERR_NOMEM)
        vmp_set_err__(err, err_size, "out of memory");
    if (stats_out) {
        memset(stats_out, 0, sizeof *stats_out);
        stats_out->samples = c.samples;
        stats_out->weight = c.weight;
        for (i = 0; i < c.n_threads; i++)
            stats_out->out_samples += c.threads[i].n_out;
        stats_out->functions = c.n_frames;
        stats_out->bytes = (uint64_t)(ftell(out) > 0 ? ftell(out) : 0);
    }
    for (i = 0; i < c.n_threads; i++) {
        free(c.threads[i].buf);
        free(c.threads[i].blocks);
    }
    free(c.threads);
    free(c.frame_keys);
    free(c.chain);
    vmp_hmap__free(&c.frame_idx);
    vmp_hmap__free(&c.thread_idx);
    if (c.tmp)
        fclose(c.tmp);
    vmp_convmeta__free(&c.m);
    vmp_analysis_free(c.a);
    return st;
}
