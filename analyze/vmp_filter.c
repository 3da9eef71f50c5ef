/* SPDX-License-Identifier: MIT
 *
 * vmp_filter.c - keep the samples of a profile that pass a set of criteria
 * and copy everything else (spec.md §5; the seek table of §6 for the end).
 *
 * One pass over the input.  The analysis (vmp_analyze.h) runs only when a
 * function regex is given; the regex verdict is cached per resolved stack and
 * per resolved leaf frame, so a repeated stack costs one lookup.
 */
#include "vmp_rewrite.h"

#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_analyze.h"
#include "vmp_analyze_int.h"
#include "vmp_grow.h"
#include "vmp_seek.h"

/* ---- the end of a file -------------------------------------------------------- */

/* The unit of the SAMPLE_BLOCK times of the file at `path` (spec §5.1 key
 * 19): its HEADER's, the first record of chunk 0 (R-HDR-5).  0 when chunk 0
 * cannot be read. */
static uint64_t file_time_unit(const vmp_seek_table *t, const char *path)
{
    void *buf = NULL;
    size_t size = 0;
    vmp_reader *r = NULL;
    vmp_record rec;
    uint64_t unit = 0;
    if (vmp_seek_table_read_chunk(t, path, 0, &buf, &size) == VMP_OK &&
        vmp_reader_open_memory(&r, buf, size, path, NULL) == VMP_OK &&
        vmp_reader_next(r, &rec) == VMP_OK && rec.type == VMP_REC_HEADER)
        unit = rec.u.header.sample_time_unit_ns ? rec.u.header.sample_time_unit_ns : 1;
    vmp_reader_close(r);
    free(buf);
    return unit;
}

/* The greatest sample time of chunk `idx` of the table `t` of the file at
 * `path` (read alone, vmp_seek_table_read_chunk(), with the file's time
 * unit), and whether a sample at `claimed` is in it.  -1 when the chunk
 * cannot be read. */
static int chunk_end_time(const vmp_seek_table *t, const char *path, size_t idx, uint64_t claimed,
                          uint64_t *out, int *confirmed)
{
    vmp_reader_options ro = VMP_READER_OPTIONS_INIT;
    void *buf = NULL;
    size_t size = 0;
    vmp_reader *r = NULL;
    vmp_record rec;
    vmp_status st;

    *out = 0;
    *confirmed = 0;
    ro.sample_time_unit_ns = file_time_unit(t, path);
    if (ro.sample_time_unit_ns == 0 ||
        vmp_seek_table_read_chunk(t, path, idx, &buf, &size) != VMP_OK ||
        vmp_reader_open_memory(&r, buf, size, path, &ro) != VMP_OK) {
        vmp_reader_close(r);
        free(buf);
        return -1;
    }
    while ((st = vmp_reader_next(r, &rec)) == VMP_OK) {
        if (rec.type != VMP_REC_SAMPLE && rec.type != VMP_REC_FAILED_SAMPLE)
            continue;
        if (rec.u.sample.time_ns > *out)
            *out = rec.u.sample.time_ns;
        if (rec.u.sample.time_ns == claimed)
            *confirmed = 1;
    }
    vmp_reader_close(r);
    free(buf);
    return st == VMP_END ? 0 : -1;
}

/* The end from the seek table (spec §6, R-SEEK-3): the greatest sample time
 * of the chunk the table names for its greatest time, once that chunk is
 * read and holds a sample at that time.  -1, with a warning in `warn` when
 * there is a table, when the table cannot be used. */
static int seek_table_end(const char *path, uint64_t *out, char *warn, size_t warn_size)
{
    vmp_seek_table *t = NULL;
    vmp_status st = vmp_seek_table_open_file(&t, path, warn, warn_size);
    uint64_t claimed = 0;
    size_t idx = 0;
    int confirmed = 0, rc = -1;

    if (st != VMP_OK)
        return -1; /* VMP_END: no table, no warning; else `warn` says why */
    if (!vmp_seek_table_end(t, &claimed, &idx)) {
        *out = 0; /* no chunk holds a sample */
        rc = 0;
    } else if (chunk_end_time(t, path, idx, claimed, out, &confirmed) != 0 || !confirmed) {
        snprintf(warn, warn_size,
                 "%s: offset %" PRIu64 ": seek table: chunk %zu at offset %" PRIu64
                 " holds no sample at %" PRIu64 " ns, the time the table gives",
                 path, vmp_seek_table_offset(t), idx, vmp_seek_table_entry(t, idx)->offset,
                 claimed);
    } else {
        rc = 0;
    }
    vmp_seek_table_free(t);
    return rc;
}

vmp_status vmp_filter_end_time(uint64_t *out, const char *path, char *err, size_t err_size)
{
    vmp_reader *r = NULL;
    vmp_record rec;
    vmp_status st;
    uint64_t best = 0;
    char warn[512] = "";
    if (!out || !path || strcmp(path, "-") == 0) {
        vmp_set_err__(err, err_size, "the end of standard input cannot be known before reading it");
        return VMP_ERR_INVALID_ARG;
    }
    vmp_set_err__(err, err_size, "%s", "");
    if (seek_table_end(path, out, warn, sizeof warn) == 0)
        return VMP_OK;
    st = vmp_reader_open_file(&r, path, NULL);
    while (st >= 0 && (st = vmp_reader_next(r, &rec)) == VMP_OK) {
        if ((rec.type == VMP_REC_SAMPLE || rec.type == VMP_REC_FAILED_SAMPLE) &&
            rec.u.sample.time_ns > best)
            best = rec.u.sample.time_ns;
    }
    if (st < 0) {
        vmp_set_err__(err, err_size, "%s", r ? vmp_reader_errmsg(r) : "out of memory");
        vmp_reader_close(r);
        return st;
    }
    vmp_reader_close(r);
    *out = best;
    /* the table was set aside: say why, and that the file was read instead */
    if (warn[0])
        vmp_set_err__(err, err_size, "%s; the end is taken from reading every chunk", warn);
    return VMP_OK;
}

/* ---- the filter ---------------------------------------------------------------- */

typedef struct filt {
    const vmp_filter_options *o;
    regex_t *inc, *exc;
    size_t n_inc, n_exc;
    uint64_t *tids; /* kept thread ids */
    size_t n_tids, cap_tids;
    unsigned char *state_ok; /* per header state index */
    size_t n_state_ok;
    uint64_t from, to;
    int has_from, has_to, empty_window;
    vmp_analysis *a;
    unsigned char *stack_memo, *frame_memo; /* bit 0 known, 1 include, 2 exclude */
    size_t cap_stack_memo, cap_frame_memo;
} filt;

#define M_KNOWN 1u
#define M_INC   2u
#define M_EXC   4u

static int add_tid(filt *f, uint64_t id)
{
    size_t i;
    for (i = 0; i < f->n_tids; i++)
        if (f->tids[i] == id)
            return 0;
    if (f->n_tids == f->cap_tids && vmp_grow(&f->tids, &f->cap_tids, sizeof *f->tids, 16) != 0)
        return -1;
    f->tids[f->n_tids++] = id;
    return 0;
}

static int memo_slot(unsigned char **memo, size_t *cap, uint32_t id)
{
    if (id >= *cap) {
        size_t n = *cap ? *cap : 1024;
        unsigned char *p;
        while (n <= id)
            n *= 2;
        p = realloc(*memo, n);
        if (!p)
            return -1;
        memset(p + *cap, 0, n - *cap);
        *memo = p;
        *cap = n;
    }
    return 0;
}

/* Verdict bits of resolved frame `fr`. */
static int frame_bits(filt *f, uint32_t fr, unsigned *bits)
{
    const vmp_aframe *af;
    const vmp_afunction *fn;
    unsigned b = M_KNOWN;
    size_t i;
    if (memo_slot(&f->frame_memo, &f->cap_frame_memo, fr))
        return -1;
    if (f->frame_memo[fr]) {
        *bits = f->frame_memo[fr];
        return 0;
    }
    af = vmp_analysis_frame(f->a, fr);
    fn = af ? vmp_analysis_function(f->a, af->function) : NULL;
    if (fn) {
        for (i = 0; i < f->n_inc && !(b & M_INC); i++)
            if (regexec(&f->inc[i], fn->name, 0, NULL, 0) == 0)
                b |= M_INC;
        for (i = 0; i < f->n_exc && !(b & M_EXC); i++)
            if (regexec(&f->exc[i], fn->name, 0, NULL, 0) == 0)
                b |= M_EXC;
    }
    f->frame_memo[fr] = (unsigned char)b;
    *bits = b;
    return 0;
}

/* Verdict bits of resolved stack `s`: the union of its frames'. */
static int stack_bits(filt *f, uint32_t s, unsigned *bits)
{
    const vmp_astack *st;
    uint32_t top = s, cur;
    unsigned b = 0;
    if (s == 0) {
        *bits = M_KNOWN;
        return 0;
    }
    if (memo_slot(&f->stack_memo, &f->cap_stack_memo, s))
        return -1;
    if (f->stack_memo[s]) {
        *bits = f->stack_memo[s];
        return 0;
    }
    /* up to the root or a memoized stack, without recursion (a stack may be a
     * million frames deep) ... */
    for (cur = s; cur; cur = st->parent) {
        if (memo_slot(&f->stack_memo, &f->cap_stack_memo, cur))
            return -1;
        if (f->stack_memo[cur]) {
            b = f->stack_memo[cur];
            break;
        }
        st = vmp_analysis_stack(f->a, cur);
        if (!st)
            return -1;
        top = cur;
    }
    /* ... then from `top` down to `s`, each stack's bits being its frame's
     * and its parent's, memoized on the way */
    {
        uint32_t *path = NULL;
        size_t n = 0, cap = 0, i;
        for (cur = s;; cur = vmp_analysis_stack(f->a, cur)->parent) {
            if (n == cap) {
                uint32_t *grown = realloc(path, (cap ? 2 * cap : 64) * sizeof *path);
                if (!grown) {
                    free(path);
                    return -1;
                }
                path = grown;
                cap = cap ? 2 * cap : 64;
            }
            path[n++] = cur;
            if (cur == top)
                break;
        }
        for (i = n; i-- > 0;) {
            unsigned fb;
            if (frame_bits(f, vmp_analysis_stack(f->a, path[i])->frame, &fb)) {
                free(path);
                return -1;
            }
            b |= fb;
            /* frame_bits() may grow other memos; this one was sized above */
            f->stack_memo[path[i]] = (unsigned char)b;
        }
        free(path);
    }
    *bits = b;
    return 0;
}

static int keep_sample(filt *f, const vmp_record *rec, const vmp_asample *as, int *keep)
{
    const vmp_rec_sample *s = &rec->u.sample;
    const vmp_filter_options *o = f->o;
    size_t i;
    *keep = 0;
    if (o->n_thread_ids || o->n_thread_names) {
        for (i = 0; i < f->n_tids && f->tids[i] != s->thread; i++)
            ;
        if (i == f->n_tids)
            return 0;
    }
    if (o->n_states && (s->state >= f->n_state_ok || !f->state_ok[s->state]))
        return 0;
    if (f->empty_window || (f->has_from && s->time_ns < f->from) ||
        (f->has_to && s->time_ns >= f->to))
        return 0;
    if (o->has_generations && (s->generation < o->gen_first || s->generation > o->gen_last))
        return 0;
    if (f->n_inc || f->n_exc) {
        unsigned b = 0, lb = 0;
        if (stack_bits(f, as->stack, &b))
            return -1;
        if (as->leaf && frame_bits(f, as->leaf, &lb))
            return -1;
        b |= lb;
        if (f->n_inc && !(b & M_INC))
            return 0;
        if (b & M_EXC)
            return 0;
    }
    *keep = 1;
    return 0;
}

/* Resolve a possibly negative time against the end. */
static int abs_time(int64_t t, uint64_t end, uint64_t *out)
{
    if (t >= 0) {
        *out = (uint64_t)t;
        return 1;
    }
    if ((uint64_t)(-(t + 1)) + 1 > end) {
        *out = 0;
        return 0; /* before the origin */
    }
    *out = end - ((uint64_t)(-(t + 1)) + 1);
    return 1;
}

static int compile(regex_t **out, size_t *n_out, const char *const *pats, size_t n, char *err,
                   size_t err_size)
{
    size_t i;
    *n_out = 0;
    if (n == 0)
        return 0;
    *out = calloc(n, sizeof **out);
    if (!*out)
        return -1;
    for (i = 0; i < n; i++) {
        int rc = regcomp(&(*out)[i], pats[i], REG_EXTENDED | REG_NOSUB);
        if (rc != 0) {
            char msg[256];
            regerror(rc, &(*out)[i], msg, sizeof msg);
            vmp_set_err__(err, err_size, "bad regular expression '%s': %s", pats[i], msg);
            return -2;
        }
        (*n_out)++;
    }
    return 0;
}

static void filt_free(filt *f)
{
    size_t i;
    for (i = 0; i < f->n_inc; i++)
        regfree(&f->inc[i]);
    for (i = 0; i < f->n_exc; i++)
        regfree(&f->exc[i]);
    free(f->inc);
    free(f->exc);
    free(f->tids);
    free(f->state_ok);
    free(f->stack_memo);
    free(f->frame_memo);
    vmp_analysis_free(f->a);
}

static vmp_status take_header(filt *f, const vmp_rec_header *h)
{
    size_t i, j;
    if (!f->o->n_states)
        return VMP_OK;
    free(f->state_ok);
    f->state_ok = calloc(h->n_states + 1, 1);
    if (!f->state_ok)
        return VMP_ERR_NOMEM;
    f->n_state_ok = h->n_states;
    for (i = 0; i < h->n_states; i++)
        for (j = 0; j < f->o->n_states; j++)
            if (strcmp(h->states[i].s, f->o->states[j]) == 0)
                f->state_ok[i] = 1;
    return VMP_OK;
}

static vmp_status take_thread(filt *f, const vmp_rec_thread *t)
{
    size_t j;
    for (j = 0; j < f->o->n_thread_names; j++)
        if (strcmp(t->name.s, f->o->thread_names[j]) == 0 && add_tid(f, t->id))
            return VMP_ERR_NOMEM;
    return VMP_OK;
}

vmp_status vmp_filter_run(vmp_rewrite_stats *stats_out, vmp_record_writer *w, vmp_reader *r,
                          const vmp_filter_options *opts, char *err, size_t err_size)
{
    vmp_analysis_options aopts = VMP_ANALYSIS_OPTIONS_INIT;
    filt f;
    vmp_record rec;
    vmp_rec_end end;
    vmp_rewrite_stats stats;
    vmp_status st = VMP_OK;
    size_t i;
    int rc;
    memset(&f, 0, sizeof f);
    memset(&end, 0, sizeof end);
    memset(&stats, 0, sizeof stats);
    vmp_set_err__(err, err_size, "%s", "");
    if (!w || !r || !opts || opts->version != VMP_FILTER_OPTIONS_VERSION) {
        vmp_set_err__(err, err_size, "invalid arguments");
        return VMP_ERR_INVALID_ARG;
    }
    f.o = opts;
    rc = compile(&f.inc, &f.n_inc, opts->include, opts->n_include, err, err_size);
    if (rc == 0)
        rc = compile(&f.exc, &f.n_exc, opts->exclude, opts->n_exclude, err, err_size);
    if (rc != 0) {
        filt_free(&f);
        if (rc == -1)
            vmp_set_err__(err, err_size, "out of memory");
        return rc == -1 ? VMP_ERR_NOMEM : VMP_ERR_INVALID_ARG;
    }
    for (i = 0; i < opts->n_thread_ids; i++)
        if (add_tid(&f, opts->thread_ids[i])) {
            filt_free(&f);
            vmp_set_err__(err, err_size, "out of memory");
            return VMP_ERR_NOMEM;
        }
    f.has_from = opts->has_from;
    f.has_to = opts->has_to;
    if (f.has_from && !abs_time(opts->from_ns, opts->end_ns, &f.from))
        f.from = 0;
    if (f.has_to && !abs_time(opts->to_ns, opts->end_ns, &f.to))
        f.empty_window = 1;               /* the window ends before the origin */
    aopts.flags = VMP_ANALYSIS_ALL_KINDS; /* the samples of every kind, each filtered */
    if ((f.n_inc || f.n_exc) && vmp_analysis_create(&f.a, &aopts) < 0) {
        filt_free(&f);
        vmp_set_err__(err, err_size, "out of memory");
        return VMP_ERR_NOMEM;
    }
    while ((st = vmp_reader_next(r, &rec)) == VMP_OK) {
        vmp_asample as;
        int is_sample = 0, keep = 1;
        stats.records_in++;
        memset(&as, 0, sizeof as);
        if (f.a) {
            st = vmp_analysis_feed(f.a, &rec, &as, &is_sample);
            if (st == VMP_ERR_LIMIT) {
                vmp_reader_fail(r, st, vmp_analysis_errmsg(f.a));
                vmp_set_err__(err, err_size, "%s", vmp_reader_errmsg(r));
                break;
            }
            if (st < 0) {
                vmp_set_err__(err, err_size, "%s: record %" PRIu64 " of chunk %" PRIu64 ": %s",
                              "input", rec.record_offset, rec.chunk_index, vmp_status_str(st));
                break;
            }
        }
        switch (rec.type) {
        case VMP_REC_HEADER:
            st = take_header(&f, &rec.u.header);
            break;
        case VMP_REC_THREAD:
            st = take_thread(&f, &rec.u.thread);
            break;
        case VMP_REC_END:
            end = rec.u.end;
            keep = 0;
            break;
        case VMP_REC_KIND_SAMPLE: /* spec R-KND-3: by the same criteria, kept apart */
        case VMP_REC_SAMPLE:
        case VMP_REC_FAILED_SAMPLE:
            stats.samples_in += rec.type != VMP_REC_KIND_SAMPLE;
            vmp_sample_own_pc__(&rec.u.sample, &as);
            if (keep_sample(&f, &rec, &as, &keep))
                st = VMP_ERR_NOMEM;
            break;
        default:
            break;
        }
        if (st < 0) {
            vmp_set_err__(err, err_size, "out of memory");
            break;
        }
        if (!keep)
            continue;
        st = vmp_record_writer_write(w, &rec);
        if (st < 0) {
            vmp_set_err__(err, err_size, "%s", vmp_record_writer_errmsg(w));
            break;
        }
        if (rec.type == VMP_REC_SAMPLE || rec.type == VMP_REC_FAILED_SAMPLE)
            stats.samples_out++;
    }
    if (st == VMP_END) {
        vmp_reader_info info;
        vmp_reader_get_info(r, &info);
        if (info.records == 0 || stats.records_in == 0) {
            vmp_set_err__(err, err_size, "input holds no record");
            st = VMP_ERR_CORRUPT;
        }
    } else if (st < 0 && err && err[0] == '\0') {
        vmp_set_err__(err, err_size, "%s", vmp_reader_errmsg(r));
    }
    if (st == VMP_END) {
        /* the input's own time and generation still hold: the metadata was copied */
        st = vmp_record_writer_finish(w, &end);
        if (st < 0)
            vmp_set_err__(err, err_size, "%s", vmp_record_writer_errmsg(w));
    }
    filt_free(&f);
    if (stats_out)
        *stats_out = stats;
    return st < 0 ? st : VMP_OK;
}
