/* SPDX-License-Identifier: MIT
 *
 * vmp_import_pprof.c - `vmp import`: a pprof Profile (convert/profile.proto,
 * gzip'd or raw) written as a vmp profile through the writer (spec.md §5.1
 * HEADER, §5.8 FUNCTION, §5.9 THREAD, §5.11 stack nodes, §5.12 SAMPLE).
 * vmp_convert.h documents the mapping.
 *
 * Outline: inflate (bounded), unpack with protobuf-c, check every index and
 * id the samples will use (so that nothing is written for a bad input), collect
 * the vocabulary (states, threads, other label keys), then open the writer
 * with a virtual clock and write functions, threads and samples.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "vmp_analyze_int.h"
#include "vmp_convert.h"
#include "vmp_convmeta.h"
#include "vmp_writer.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Function pb_function;

#define MAX_SPLIT UINT32_MAX

typedef struct imp {
    const char *name;
    char *err;
    size_t err_size;
    pb_profile *p;
    vmp_hmap fn_by_id, loc_by_id, map_by_id; /* id -> index + 1 */
    unsigned char *pseudo;                   /* per function: a range pseudo-function */
    int64_t k_thread, k_tid, k_state;        /* string indexes of label keys, -1 == absent */
    vmp_strtab states, threads_by_name, other_keys;
    int need_unknown_state;
    uint64_t next_thread_id;
    vmp_hmap thread_seen; /* thread id -> 1 */
    uint64_t now;         /* the virtual clock */
    vmp_frame *frames;
    size_t cap_frames;
} imp;

static vmp_status fail(imp *m, vmp_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static vmp_status fail(imp *m, vmp_status st, const char *fmt, ...)
{
    va_list ap;
    int n;
    if (!m->err || !m->err_size)
        return st;
    n = snprintf(m->err, m->err_size, "%s: ", m->name);
    if (n < 0 || (size_t)n >= m->err_size)
        return st;
    va_start(ap, fmt);
    vsnprintf(m->err + n, m->err_size - (size_t)n, fmt, ap);
    va_end(ap);
    return st;
}

/* ---- input ------------------------------------------------------------------------------ */

static vmp_status inflate_all(imp *m, const unsigned char *data, size_t size, uint64_t limit,
                              unsigned char **out, size_t *out_size)
{
    z_stream z;
    unsigned char *buf = NULL;
    size_t cap = 0, n = 0;
    int zr;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 32) != Z_OK)
        return fail(m, VMP_ERR_NOMEM, "out of memory");
    z.next_in = (Bytef *)(uintptr_t)data;
    z.avail_in = size > UINT32_MAX ? UINT32_MAX : (uInt)size;
    for (;;) {
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : (size < (1u << 20) ? 1u << 20 : size * 4);
            unsigned char *p;
            if (ncap > limit + 1)
                ncap = (size_t)limit + 1;
            if (ncap <= cap) {
                inflateEnd(&z);
                free(buf);
                return fail(m, VMP_ERR_LIMIT, "decompressed profile exceeds %" PRIu64 " bytes",
                            limit);
            }
            p = realloc(buf, ncap);
            if (!p) {
                inflateEnd(&z);
                free(buf);
                return fail(m, VMP_ERR_NOMEM, "out of memory");
            }
            buf = p;
            cap = ncap;
        }
        z.next_out = buf + n;
        z.avail_out = (uInt)(cap - n > UINT32_MAX ? UINT32_MAX : cap - n);
        zr = inflate(&z, Z_NO_FLUSH);
        n = (size_t)((unsigned char *)z.next_out - buf);
        if (zr == Z_STREAM_END)
            break;
        if (zr == Z_BUF_ERROR && z.avail_in == 0) {
            inflateEnd(&z);
            free(buf);
            return fail(m, VMP_ERR_TRUNCATED,
                        "truncated gzip data (the stream ends after %zu compressed bytes)", size);
        }
        if (zr != Z_OK && zr != Z_BUF_ERROR) {
            const char *msg = z.msg ? z.msg : "bad data";
            inflateEnd(&z);
            free(buf);
            return fail(m, zr == Z_MEM_ERROR ? VMP_ERR_NOMEM : VMP_ERR_CORRUPT,
                        "corrupt gzip data at compressed byte %lu: %s", z.total_in, msg);
        }
        if (z.avail_in == 0 && zr == Z_OK && z.avail_out != 0) {
            inflateEnd(&z);
            free(buf);
            return fail(m, VMP_ERR_TRUNCATED, "truncated gzip data");
        }
    }
    inflateEnd(&z);
    *out = buf;
    *out_size = n;
    return VMP_OK;
}

/* ---- checks ------------------------------------------------------------------------------ */

static int str_ok(const imp *m, int64_t i)
{
    return i >= 0 && (uint64_t)i < m->p->n_string_table;
}

static const char *str_of(const imp *m, int64_t i)
{
    return m->p->string_table[i];
}

static int64_t find_key(const imp *m, const char *key)
{
    size_t i;
    for (i = 0; i < m->p->n_string_table; i++)
        if (strcmp(m->p->string_table[i], key) == 0)
            return (int64_t)i;
    return -1;
}

/* "<base> A->B" with base == fname: sets *a. */
static int is_range_name(const char *name, const char *base, uint32_t *a)
{
    size_t bl = strlen(base);
    const char *s;
    char *end;
    unsigned long v, w;
    if (strncmp(name, base, bl) != 0 || name[bl] != ' ')
        return 0;
    s = name + bl + 1;
    if (*s < '0' || *s > '9')
        return 0;
    errno = 0;
    v = strtoul(s, &end, 10);
    if (errno || v >= UINT32_MAX || end[0] != '-' || end[1] != '>')
        return 0;
    s = end + 2;
    if (*s < '0' || *s > '9')
        return 0;
    w = strtoul(s, &end, 10);
    if (errno || *end || w < v)
        return 0;
    *a = (uint32_t)v;
    return 1;
}

static const pb_function *fn_at(const imp *m, uint64_t id)
{
    uint32_t i = vmp_hmap__get(&m->fn_by_id, id, 0);
    return i ? m->p->function[i - 1] : NULL;
}

static vmp_status check_profile(imp *m, const vmp_import_options *o)
{
    const pb_profile *p = m->p;
    size_t i, j;
    if (p->n_string_table == 0 || p->string_table[0][0] != '\0')
        return fail(m, VMP_ERR_CORRUPT, "string table entry 0 is not the empty string");
    if (p->n_sample_type == 0)
        return fail(m, VMP_ERR_CORRUPT, "no sample type");
    if (o->sample_index >= p->n_sample_type)
        return fail(m, VMP_ERR_INVALID_ARG, "sample index %u: the profile has %zu sample types",
                    o->sample_index, p->n_sample_type);
    for (i = 0; i < p->n_sample_type; i++)
        if (!str_ok(m, p->sample_type[i]->type) || !str_ok(m, p->sample_type[i]->unit))
            return fail(m, VMP_ERR_CORRUPT, "sample type %zu: string index out of range", i);
    if (p->period_type && (!str_ok(m, p->period_type->type) || !str_ok(m, p->period_type->unit)))
        return fail(m, VMP_ERR_CORRUPT, "period type: string index out of range");
    if (!str_ok(m, p->drop_frames) || !str_ok(m, p->keep_frames))
        return fail(m, VMP_ERR_CORRUPT, "drop_frames/keep_frames: string index out of range");
    for (i = 0; i < p->n_comment; i++)
        if (!str_ok(m, p->comment[i]))
            return fail(m, VMP_ERR_CORRUPT, "comment %zu: string index out of range", i);
    for (i = 0; i < p->n_mapping; i++) {
        const Perftools__Profiles__Mapping *mp = p->mapping[i];
        if (mp->id == 0 || vmp_hmap__get(&m->map_by_id, mp->id, 0))
            return fail(m, VMP_ERR_CORRUPT, "mapping %zu: id %" PRIu64 " is 0 or repeated", i,
                        mp->id);
        if (!str_ok(m, mp->filename) || !str_ok(m, mp->build_id))
            return fail(m, VMP_ERR_CORRUPT, "mapping %" PRIu64 ": string index out of range",
                        mp->id);
        if (vmp_hmap__put(&m->map_by_id, mp->id, 0, (uint32_t)i + 1))
            return fail(m, VMP_ERR_NOMEM, "out of memory");
    }
    for (i = 0; i < p->n_function; i++) {
        const pb_function *f = p->function[i];
        if (f->id == 0 || vmp_hmap__get(&m->fn_by_id, f->id, 0))
            return fail(m, VMP_ERR_CORRUPT, "function %zu: id %" PRIu64 " is 0 or repeated", i,
                        f->id);
        if (!str_ok(m, f->name) || !str_ok(m, f->system_name) || !str_ok(m, f->filename))
            return fail(m, VMP_ERR_CORRUPT, "function %" PRIu64 ": string index out of range",
                        f->id);
        if (f->start_line < 0)
            return fail(m, VMP_ERR_CORRUPT, "function %" PRIu64 ": negative start line", f->id);
        if (vmp_hmap__put(&m->fn_by_id, f->id, 0, (uint32_t)i + 1))
            return fail(m, VMP_ERR_NOMEM, "out of memory");
    }
    m->pseudo = calloc(p->n_function + 1, 1);
    if (!m->pseudo)
        return fail(m, VMP_ERR_NOMEM, "out of memory");
    for (i = 0; i < p->n_location; i++) {
        const pb_location *l = p->location[i];
        if (l->id == 0 || vmp_hmap__get(&m->loc_by_id, l->id, 0))
            return fail(m, VMP_ERR_CORRUPT, "location %zu: id %" PRIu64 " is 0 or repeated", i,
                        l->id);
        if (l->mapping_id && !vmp_hmap__get(&m->map_by_id, l->mapping_id, 0))
            return fail(m, VMP_ERR_CORRUPT,
                        "location %" PRIu64 ": mapping id %" PRIu64 " points nowhere", l->id,
                        l->mapping_id);
        for (j = 0; j < l->n_line; j++) {
            uint32_t a;
            if (!fn_at(m, l->line[j]->function_id))
                return fail(m, VMP_ERR_CORRUPT,
                            "location %" PRIu64 ": function id %" PRIu64 " points nowhere", l->id,
                            l->line[j]->function_id);
            if (j + 1 < l->n_line && fn_at(m, l->line[j + 1]->function_id) &&
                is_range_name(str_of(m, fn_at(m, l->line[j]->function_id)->name),
                              str_of(m, fn_at(m, l->line[j + 1]->function_id)->name), &a))
                m->pseudo[vmp_hmap__get(&m->fn_by_id, l->line[j]->function_id, 0) - 1] = 1;
        }
        if (vmp_hmap__put(&m->loc_by_id, l->id, 0, (uint32_t)i + 1))
            return fail(m, VMP_ERR_NOMEM, "out of memory");
    }
    for (i = 0; i < p->n_sample; i++) {
        const pb_sample *s = p->sample[i];
        if (s->n_value != p->n_sample_type)
            return fail(m, VMP_ERR_CORRUPT, "sample %zu: %zu values for %zu sample types", i,
                        s->n_value, p->n_sample_type);
        if (s->value[o->sample_index] < 0)
            return fail(m, VMP_ERR_CORRUPT, "sample %zu: negative value %" PRId64, i,
                        s->value[o->sample_index]);
        if ((uint64_t)s->value[o->sample_index] > o->max_sample_value)
            return fail(m, VMP_ERR_LIMIT,
                        "sample %zu: value %" PRId64 " is larger than the limit %" PRIu64, i,
                        s->value[o->sample_index], o->max_sample_value);
        for (j = 0; j < s->n_location_id; j++)
            if (!vmp_hmap__get(&m->loc_by_id, s->location_id[j], 0))
                return fail(m, VMP_ERR_CORRUPT,
                            "sample %zu: location id %" PRIu64 " points nowhere", i,
                            s->location_id[j]);
        for (j = 0; j < s->n_label; j++) {
            const Perftools__Profiles__Label *l = s->label[j];
            if (!str_ok(m, l->key) || !str_ok(m, l->str) || !str_ok(m, l->num_unit))
                return fail(m, VMP_ERR_CORRUPT, "sample %zu: label string index out of range", i);
        }
    }
    return VMP_OK;
}

/* ---- vocabulary ------------------------------------------------------------------------- */

typedef struct sample_info {
    uint64_t thread;
    const char *thread_name; /* NULL == none */
    const char *state;       /* NULL == none */
} sample_info;

static void sample_labels(const imp *m, const pb_sample *s, sample_info *out)
{
    size_t j;
    memset(out, 0, sizeof *out);
    for (j = 0; j < s->n_label; j++) {
        const Perftools__Profiles__Label *l = s->label[j];
        if (l->key == m->k_tid && l->num > 0)
            out->thread = (uint64_t)l->num;
        else if (l->key == m->k_thread && l->str)
            out->thread_name = str_of(m, l->str);
        else if (l->key == m->k_state && l->str)
            out->state = str_of(m, l->str);
    }
}

/* The thread id of a sample, assigning ids to named threads without one. */
static int thread_of(imp *m, const sample_info *si, uint64_t *out)
{
    if (si->thread) {
        *out = si->thread;
    } else if (si->thread_name) {
        int64_t k =
            vmp_strtab__intern(&m->threads_by_name, si->thread_name, strlen(si->thread_name));
        if (k < 0)
            return -1;
        *out = m->next_thread_id + (uint64_t)k;
    } else {
        *out = 1;
    }
    return 0;
}

static vmp_status collect(imp *m)
{
    const pb_profile *p = m->p;
    size_t i, j;
    uint64_t max_tid = 1;
    m->k_thread = find_key(m, "thread");
    m->k_tid = find_key(m, "thread_id");
    m->k_state = find_key(m, "state");
    if (vmp_strtab__intern(&m->states, "", 0) < 0 ||
        vmp_strtab__intern(&m->other_keys, "", 0) < 0 ||
        vmp_strtab__intern(&m->threads_by_name, "", 0) < 0)
        return fail(m, VMP_ERR_NOMEM, "out of memory");
    for (i = 0; i < p->n_sample; i++) {
        sample_info si;
        sample_labels(m, p->sample[i], &si);
        if (si.thread > max_tid)
            max_tid = si.thread;
        if (!si.state)
            m->need_unknown_state = 1;
        else if (vmp_strtab__intern(&m->states, si.state, strlen(si.state)) < 0)
            return fail(m, VMP_ERR_NOMEM, "out of memory");
        for (j = 0; j < p->sample[i]->n_label; j++) {
            int64_t k = p->sample[i]->label[j]->key;
            const char *key = str_of(m, k);
            if (k != m->k_thread && k != m->k_tid && k != m->k_state &&
                vmp_strtab__intern(&m->other_keys, key, strlen(key)) < 0)
                return fail(m, VMP_ERR_NOMEM, "out of memory");
        }
    }
    /* named threads without a number come after every numbered one; the
     * name table's entry 0 is "", so the first name gets max_tid + 1 */
    m->next_thread_id = max_tid;
    return VMP_OK;
}

static uint32_t state_index(const imp *m, const char *state)
{
    size_t i;
    uint32_t base = m->need_unknown_state ? 1 : 0;
    if (!state)
        return 0;
    for (i = 1; i < m->states.n; i++)
        if (strcmp(m->states.s[i], state) == 0)
            return base + (uint32_t)(i - 1);
    return 0;
}

/* ---- writing ---------------------------------------------------------------------------- */

static uint64_t virtual_clock(void *ud)
{
    return ((const imp *)ud)->now;
}

/* Frames of sample `s`, innermost first, into m->frames; returns the depth
 * or -1 when out of memory. */
static int64_t sample_frames(imp *m, const pb_sample *s)
{
    size_t i, depth = 0;
    for (i = 0; i < s->n_location_id; i++) {
        const pb_location *l =
            m->p->location[vmp_hmap__get(&m->loc_by_id, s->location_id[i], 0) - 1];
        size_t j;
        uint32_t range_a = VMP_BCPC_NONE;
        for (j = 0; j < l->n_line; j++) {
            uint32_t fi = vmp_hmap__get(&m->fn_by_id, l->line[j]->function_id, 0) - 1;
            const pb_function *f = m->p->function[fi];
            vmp_frame *fr;
            uint32_t a;
            if (m->pseudo[fi] && j + 1 < l->n_line &&
                is_range_name(str_of(m, f->name),
                              str_of(m, fn_at(m, l->line[j + 1]->function_id)->name), &a)) {
                range_a = a;
                continue;
            }
            if (vmp_grow__((void **)&m->frames, &m->cap_frames, depth + 1, sizeof *m->frames))
                return -1;
            fr = &m->frames[depth++];
            fr->kind = VMP_FRAME_FUNCTION;
            fr->value = f->id;
            if (range_a != VMP_BCPC_NONE)
                fr->bcpc = range_a;
            else if (l->line[j]->line > 0 && l->line[j]->line < (int64_t)VMP_BCPC_NONE)
                fr->bcpc = (uint32_t)l->line[j]->line;
            else
                fr->bcpc = VMP_BCPC_NONE;
            range_a = VMP_BCPC_NONE;
        }
    }
    return (int64_t)depth;
}

static vmp_status put_sample(imp *m, vmp_writer *w, vmp_sample *vs)
{
    int tries;
    for (tries = 0; tries < 10000; tries++) {
        vmp_status st = vmp_writer_sample(w, vs);
        struct timespec ts = {0, 1000000};
        if (st != VMP_ERR_FULL)
            return st < 0 ? fail(m, st, "write error: %s", vmp_status_str(st)) : VMP_OK;
        st = vmp_writer_flush(w);
        if (st < 0)
            return fail(m, st, "write error: %s", vmp_status_str(st));
        nanosleep(&ts, NULL);
    }
    return fail(m, VMP_ERR_IO, "the writer stays full");
}

static char *fmt_dup(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *fmt_dup(const char *fmt, ...)
{
    va_list ap;
    int n;
    char *s;
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    s = malloc((size_t)n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

static vmp_status write_vmp(imp *m, int fd, const vmp_import_options *o, vmp_convert_stats *stats)
{
    const pb_profile *p = m->p;
    vmp_writer_meta meta;
    vmp_writer_options wo = VMP_WRITER_OPTIONS_INIT;
    vmp_writer_totals tot;
    vmp_writer *w = NULL;
    vmp_status st = VMP_OK;
    char **labels = NULL, **label_own = NULL;
    const char **states = NULL;
    size_t n_labels = 0, n_own = 0, i, n_states;
    uint64_t period_ns = 0, max_depth = 1;
    char *joined = NULL;

    labels = calloc(2 * (10 + p->n_comment), sizeof *labels);
    label_own = calloc(2 * (10 + p->n_comment), sizeof *label_own);
    n_states = (m->states.n - 1) + (m->need_unknown_state ? 1 : 0);
    states = calloc(n_states + 1, sizeof *states);
    if (!labels || !label_own || !states) {
        st = fail(m, VMP_ERR_NOMEM, "out of memory");
        goto cleanup;
    }
#define ADD_LABEL(key, valexpr)                           \
    do {                                                  \
        char *v_ = (valexpr);                             \
        if (!v_) {                                        \
            st = fail(m, VMP_ERR_NOMEM, "out of memory"); \
            goto cleanup;                                 \
        }                                                 \
        label_own[n_own++] = v_;                          \
        labels[2 * n_labels] = (char *)(key);             \
        labels[2 * n_labels + 1] = v_;                    \
        n_labels++;                                       \
    } while (0)
    {
        size_t len = 1;
        for (i = 0; i < p->n_sample_type; i++)
            len += strlen(str_of(m, p->sample_type[i]->type)) +
                   strlen(str_of(m, p->sample_type[i]->unit)) + 2;
        joined = malloc(len);
        if (!joined) {
            st = fail(m, VMP_ERR_NOMEM, "out of memory");
            goto cleanup;
        }
        joined[0] = '\0';
        for (i = 0; i < p->n_sample_type; i++) {
            if (i)
                strcat(joined, ",");
            strcat(joined, str_of(m, p->sample_type[i]->type));
            strcat(joined, "/");
            strcat(joined, str_of(m, p->sample_type[i]->unit));
        }
        ADD_LABEL("pprof.sample_types", joined);
        joined = NULL;
    }
    ADD_LABEL("pprof.sample_index", fmt_dup("%u", o->sample_index));
    if (p->period_type) {
        ADD_LABEL("pprof.period_type", fmt_dup("%s/%s", str_of(m, p->period_type->type),
                                               str_of(m, p->period_type->unit)));
        if (strcmp(str_of(m, p->period_type->unit), "nanoseconds") == 0 && p->period > 0)
            period_ns = (uint64_t)p->period;
    }
    ADD_LABEL("pprof.period", fmt_dup("%" PRId64, p->period));
    ADD_LABEL("pprof.time_nanos", fmt_dup("%" PRId64, p->time_nanos));
    ADD_LABEL("pprof.duration_nanos", fmt_dup("%" PRId64, p->duration_nanos));
    for (i = 0; i < p->n_comment; i++) {
        /* label keys are unique (a CBOR map): pprof.comment, then
         * pprof.comment.2, pprof.comment.3, ... */
        char *key = i ? fmt_dup("pprof.comment.%zu", i + 1) : fmt_dup("pprof.comment");
        if (!key) {
            st = fail(m, VMP_ERR_NOMEM, "out of memory");
            goto cleanup;
        }
        label_own[n_own++] = key;
        ADD_LABEL(key, fmt_dup("%s", str_of(m, p->comment[i])));
    }
    if (p->drop_frames)
        ADD_LABEL("pprof.drop_frames", fmt_dup("%s", str_of(m, p->drop_frames)));
    if (p->keep_frames)
        ADD_LABEL("pprof.keep_frames", fmt_dup("%s", str_of(m, p->keep_frames)));
    if (m->other_keys.n > 1) {
        size_t len = 1;
        for (i = 1; i < m->other_keys.n; i++)
            len += m->other_keys.len[i] + 1;
        joined = calloc(1, len);
        if (!joined) {
            st = fail(m, VMP_ERR_NOMEM, "out of memory");
            goto cleanup;
        }
        for (i = 1; i < m->other_keys.n; i++) {
            if (i > 1)
                strcat(joined, ",");
            strcat(joined, m->other_keys.s[i]);
        }
        ADD_LABEL("pprof.other_labels", joined);
        joined = NULL;
    }
#undef ADD_LABEL
    i = 0;
    if (m->need_unknown_state)
        states[i++] = "unknown";
    for (size_t k = 1; k < m->states.n; k++)
        states[i++] = m->states.s[k];

    for (i = 0; i < p->n_sample; i++) {
        int64_t d = sample_frames(m, p->sample[i]);
        if (d < 0) {
            st = fail(m, VMP_ERR_NOMEM, "out of memory");
            goto cleanup;
        }
        if ((uint64_t)d > max_depth)
            max_depth = (uint64_t)d;
    }

    memset(&meta, 0, sizeof meta);
    meta.vm_name = "pprof";
    meta.vm_version = "";
    meta.pid = 1;
    meta.sample_interval_ns = period_ns;
    meta.states = states;
    meta.n_states = n_states;
    meta.labels = (const char *const *)labels;
    meta.n_labels = n_labels;
    wo.chunk_age_ms = VMP_WRITER_NO_AGE_LIMIT;
    wo.max_depth = max_depth > 65536 ? 65536 : (uint32_t)max_depth;
    wo.ring_slots = 1u << 14;
    wo.clock = virtual_clock;
    wo.clock_ud = m;
    wo.clock_name = "pprof sample index";
    wo.format_major = o->format_major;
    m->now = 0;
    st = vmp_writer_open_fd(&w, fd, &meta, &wo);
    if (st < 0) {
        w = NULL;
        st = fail(m, st, "cannot open the writer: %s", vmp_status_str(st));
        goto cleanup;
    }
    for (i = 0; i < p->n_function; i++) {
        const pb_function *f = p->function[i];
        vmp_function vf;
        const char *nm = str_of(m, f->name), *sys = str_of(m, f->system_name);
        if (m->pseudo[i])
            continue;
        memset(&vf, 0, sizeof vf);
        vf.id = f->id;
        vf.name = nm;
        vf.signature = sys[0] && strcmp(sys, nm) != 0 ? sys : NULL;
        vf.file = str_of(m, f->filename)[0] ? str_of(m, f->filename) : NULL;
        vf.first_line = f->start_line > UINT32_MAX ? UINT32_MAX : (uint32_t)f->start_line;
        st = vmp_writer_function(w, &vf);
        if (st < 0) {
            st = fail(m, st, "write error: %s", vmp_status_str(st));
            goto cleanup;
        }
        if (stats)
            stats->functions++;
    }
    for (i = 0; i < p->n_sample; i++) {
        const pb_sample *s = p->sample[i];
        uint64_t v = (uint64_t)s->value[o->sample_index], tid;
        sample_info si;
        vmp_sample vs;
        int64_t d;
        if (v == 0)
            continue;
        sample_labels(m, s, &si);
        if (thread_of(m, &si, &tid)) {
            st = fail(m, VMP_ERR_NOMEM, "out of memory");
            goto cleanup;
        }
        if (!vmp_hmap__get(&m->thread_seen, tid, 0)) {
            if (vmp_hmap__put(&m->thread_seen, tid, 0, 1)) {
                st = fail(m, VMP_ERR_NOMEM, "out of memory");
                goto cleanup;
            }
            st = vmp_writer_thread(w, tid, si.thread_name ? si.thread_name : "main", 0);
            if (st < 0) {
                st = fail(m, st, "write error: %s", vmp_status_str(st));
                goto cleanup;
            }
        }
        d = sample_frames(m, s);
        if (d < 0) {
            st = fail(m, VMP_ERR_NOMEM, "out of memory");
            goto cleanup;
        }
        memset(&vs, 0, sizeof vs);
        vs.thread = tid;
        vs.generation = VMP_GENERATION_CURRENT;
        vs.state = state_index(m, si.state);
        vs.frames = m->frames;
        vs.depth = (uint32_t)d;
        while (v > 0) {
            uint64_t part = v > MAX_SPLIT ? MAX_SPLIT : v;
            vs.weight = (uint32_t)part;
            st = put_sample(m, w, &vs);
            if (st < 0)
                goto cleanup;
            if (stats) {
                stats->samples++;
                stats->weight += part;
            }
            /* one period per sample, saturating: a hostile period must not
             * wrap the times around (spec R-SMP-1) */
            {
                uint64_t step = period_ns ? period_ns : 1;
                m->now = m->now > UINT64_MAX - step ? UINT64_MAX : m->now + step;
            }
            v -= part;
        }
    }
cleanup:
    if (w) {
        vmp_status cst = vmp_writer_close(w, &tot);
        if (cst < 0 && st >= 0)
            st = fail(m, cst, "write error: %s",
                      tot.write_errno ? strerror(tot.write_errno) : vmp_status_str(cst));
        if (stats)
            stats->bytes = tot.bytes;
    }
    for (i = 0; i < n_own; i++)
        free(label_own[i]);
    free(label_own);
    free(labels);
    free((void *)states);
    free(joined);
    return st;
}

vmp_status vmp_pprof_import(const void *data, size_t size, const char *name, int fd,
                            const vmp_import_options *opts, vmp_convert_stats *stats_out, char *err,
                            size_t err_size)
{
    vmp_import_options o = VMP_IMPORT_OPTIONS_INIT;
    imp m;
    unsigned char *raw = NULL;
    size_t raw_size = size;
    const unsigned char *bytes = data;
    vmp_status st;
    memset(&m, 0, sizeof m);
    m.name = name ? name : "input";
    m.err = err;
    m.err_size = err_size;
    if (err && err_size)
        err[0] = '\0';
    if ((!data && size) || fd < 0 || (opts && opts->version != VMP_IMPORT_OPTIONS_VERSION))
        return fail(&m, VMP_ERR_INVALID_ARG, "invalid argument");
    if (opts)
        o = *opts;
    if (!o.max_input_bytes)
        o.max_input_bytes = 1ull << 30;
    if (!o.max_sample_value)
        o.max_sample_value = 1ull << 40;
    if (stats_out)
        memset(stats_out, 0, sizeof *stats_out);
    if (size >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b) {
        st = inflate_all(&m, bytes, size, o.max_input_bytes, &raw, &raw_size);
        if (st < 0)
            return st;
        bytes = raw;
    } else if (size > o.max_input_bytes) {
        return fail(&m, VMP_ERR_LIMIT, "profile exceeds %" PRIu64 " bytes", o.max_input_bytes);
    }
    if (raw_size == 0) {
        free(raw);
        return fail(&m, VMP_ERR_CORRUPT, "empty input: not a pprof profile");
    }
    m.p = perftools__profiles__profile__unpack(NULL, raw_size, bytes);
    free(raw);
    if (!m.p)
        return fail(&m, VMP_ERR_CORRUPT,
                    "not a pprof profile: protobuf decoding failed (truncated message or a "
                    "field of the wrong type)");
    st = check_profile(&m, &o);
    if (st >= 0)
        st = collect(&m);
    if (st >= 0)
        st = write_vmp(&m, fd, &o, stats_out);
    perftools__profiles__profile__free_unpacked(m.p, NULL);
    vmp_hmap__free(&m.fn_by_id);
    vmp_hmap__free(&m.loc_by_id);
    vmp_hmap__free(&m.map_by_id);
    vmp_hmap__free(&m.thread_seen);
    vmp_strtab__free(&m.states);
    vmp_strtab__free(&m.threads_by_name);
    vmp_strtab__free(&m.other_keys);
    free(m.pseudo);
    free(m.frames);
    return st;
}
