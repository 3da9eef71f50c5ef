/* SPDX-License-Identifier: MIT
 *
 * vmp_convmeta.c - the metadata the pprof and speedscope exporters keep
 * beside the analysis: FUNCTION files and line tables (spec.md §5.8),
 * MODULE (§5.3) and CODE_ZONE (§5.6) ranges, raw symbol names (§5.4).
 */
#include "vmp_convmeta.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_analyze.h"

uint64_t vmp_convmeta__hash(const char *s, size_t len)
{
    return vmp_hash64(vmp_hash_bytes(s, len) ^ len);
}

static int strtab_rehash(vmp_strtab *t, size_t nslot)
{
    uint32_t *slot = calloc(nslot, sizeof *slot);
    size_t i;
    if (!slot)
        return -1;
    for (i = 0; i < t->n; i++) {
        size_t j = (size_t)vmp_convmeta__hash(t->s[i], t->len[i]) & (nslot - 1);
        while (slot[j])
            j = (j + 1) & (nslot - 1);
        slot[j] = (uint32_t)i + 1;
    }
    free(t->slot);
    t->slot = slot;
    t->nslot = nslot;
    return 0;
}

int64_t vmp_strtab__intern(vmp_strtab *t, const char *s, size_t len)
{
    size_t j;
    char *copy;
    if (t->n == 0 && s != NULL && len > 0 && vmp_strtab__intern(t, "", 0) < 0)
        return -1;
    if ((t->n + 1) * 2 > t->nslot && strtab_rehash(t, t->nslot ? t->nslot * 2 : 1024))
        return -1;
    j = (size_t)vmp_convmeta__hash(s, len) & (t->nslot - 1);
    while (t->slot[j]) {
        uint32_t id = t->slot[j] - 1;
        if (t->len[id] == len && memcmp(t->s[id], s, len) == 0)
            return id;
        j = (j + 1) & (t->nslot - 1);
    }
    if (t->n >= UINT32_MAX - 1)
        return -1;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        char **ns = realloc(t->s, cap * sizeof *ns);
        size_t *nl;
        if (!ns)
            return -1;
        t->s = ns;
        nl = realloc(t->len, cap * sizeof *nl);
        if (!nl)
            return -1;
        t->len = nl;
        t->cap = cap;
    }
    copy = malloc(len + 1);
    if (!copy)
        return -1;
    if (len)
        memcpy(copy, s, len);
    copy[len] = '\0';
    t->s[t->n] = copy;
    t->len[t->n] = len;
    t->slot[j] = (uint32_t)t->n + 1;
    return (int64_t)t->n++;
}

vmp_status vmp_conv__read_all(vmp_reader *r, vmp_convmeta *m, vmp_analysis *a,
                              int (*take)(void *arg, const vmp_asample *s), void *arg, int *take_rc)
{
    vmp_record rec;
    vmp_asample s;
    vmp_status st;
    int is_sample;
    *take_rc = 0;
    while ((st = vmp_reader_next(r, &rec)) == VMP_OK) {
        if (vmp_convmeta__feed(m, &rec))
            return VMP_ERR_NOMEM;
        st = vmp_analysis_feed(a, &rec, &s, &is_sample);
        if (st == VMP_ERR_LIMIT)
            vmp_reader_fail(r, st, vmp_analysis_errmsg(a));
        if (st < 0)
            return st;
        if (is_sample && (*take_rc = take(arg, &s)) != 0)
            return VMP_OK;
    }
    return st;
}

vmp_status vmp_conv__read_profile(vmp_reader *r, vmp_convmeta *m, vmp_profile *p)
{
    vmp_record rec;
    vmp_status st;
    while ((st = vmp_reader_next(r, &rec)) == VMP_OK) {
        if (vmp_convmeta__feed(m, &rec))
            return VMP_ERR_NOMEM;
        st = vmp_profile_feed(p, &rec);
        if (st == VMP_ERR_LIMIT)
            vmp_reader_fail(r, st, vmp_analysis_errmsg(vmp_profile_analysis(p)));
        if (st < 0)
            return st;
    }
    return st;
}

vmp_status vmp_conv__begin(int args_ok, char *err, size_t size)
{
    if (err && size)
        err[0] = '\0';
    if (args_ok)
        return VMP_OK;
    vmp_set_err__(err, size, "invalid argument");
    return VMP_ERR_INVALID_ARG;
}

void vmp_strtab__free(vmp_strtab *t)
{
    size_t i;
    for (i = 0; i < t->n; i++)
        free(t->s[i]);
    free(t->s);
    free(t->len);
    free(t->slot);
    memset(t, 0, sizeof *t);
}

static int intern_str(vmp_convmeta *m, const vmp_str *s, uint32_t *out)
{
    int64_t id = vmp_strtab__intern(&m->str, s->s, s->len);
    if (id < 0)
        return -1;
    *out = (uint32_t)id;
    return 0;
}

static int take_function(vmp_convmeta *m, const vmp_rec_function *r)
{
    vmp_cm_function *f;
    if (vmp_hmap__get(&m->fn_by_id, r->id, 0))
        return 0; /* spec R-ID-5: the first definition holds, as in the analysis */
    if (vmp_grow__((void **)&m->fns, &m->cap_fns, m->n_fns + 1, sizeof *m->fns))
        return -1;
    f = &m->fns[m->n_fns];
    memset(f, 0, sizeof *f);
    if (vmp_hmap__put(&m->fn_by_id, r->id, 0, (uint32_t)m->n_fns + 1))
        return -1;
    m->n_fns++;
    f->id = r->id;
    f->first_line = r->first_line;
    return intern_str(m, &r->file, &f->file) || intern_str(m, &r->signature, &f->signature) ? -1
                                                                                            : 0;
}

static int add_range(vmp_cm_range **v, size_t *n, size_t *cap, vmp_cm_range **out)
{
    if (vmp_grow__((void **)v, cap, *n + 1, sizeof **v))
        return -1;
    *out = &(*v)[(*n)++];
    memset(*out, 0, sizeof **out);
    return 0;
}

static int take_module(vmp_convmeta *m, const vmp_rec_module *r)
{
    vmp_cm_range *g;
    if (add_range(&m->modules, &m->n_modules, &m->cap_modules, &g))
        return -1;
    g->id = r->id;
    g->start = r->start;
    g->end = r->end;
    if (intern_str(m, &r->path, &g->name))
        return -1;
    if (r->build_id_size) {
        static const char hex[] = "0123456789abcdef";
        char buf[2 * 64];
        size_t i, n = r->build_id_size > 64 ? 64 : r->build_id_size;
        int64_t id;
        for (i = 0; i < n; i++) {
            buf[2 * i] = hex[r->build_id[i] >> 4];
            buf[2 * i + 1] = hex[r->build_id[i] & 15];
        }
        id = vmp_strtab__intern(&m->str, buf, 2 * n);
        if (id < 0)
            return -1;
        g->build_id = (uint32_t)id;
    }
    return 0;
}

static void seen(vmp_convmeta *m, uint64_t t)
{
    if (t > m->last_time_ns)
        m->last_time_ns = t;
}

int vmp_convmeta__feed(vmp_convmeta *m, const vmp_record *rec)
{
    vmp_cm_range *g;
    if (m->str.n == 0 && vmp_strtab__intern(&m->str, "", 0) < 0)
        return -1;
    switch (rec->type) {
    case VMP_REC_FUNCTION:
        return take_function(m, &rec->u.function);
    case VMP_REC_MODULE:
        return take_module(m, &rec->u.module);
    case VMP_REC_CODE_ZONE:
        if (add_range(&m->zones, &m->n_zones, &m->cap_zones, &g))
            return -1;
        g->id = rec->u.code_zone.id;
        g->start = rec->u.code_zone.start;
        g->end = rec->u.code_zone.end;
        return intern_str(m, &rec->u.code_zone.name, &g->name);
    case VMP_REC_SAMPLE:
    case VMP_REC_FAILED_SAMPLE:
        seen(m, rec->u.sample.time_ns);
        break;
    case VMP_REC_END:
        seen(m, rec->u.end.time_ns);
        break;
    default:
        break;
    }
    return 0;
}

const vmp_cm_function *vmp_convmeta__function(const vmp_convmeta *m, uint64_t id)
{
    uint32_t idx = id ? vmp_hmap__get(&m->fn_by_id, id, 0) : 0;
    return idx ? &m->fns[idx - 1] : NULL;
}

void vmp_convmeta__free(vmp_convmeta *m)
{
    free(m->fns);
    vmp_hmap__free(&m->fn_by_id);
    free(m->modules);
    free(m->zones);
    vmp_strtab__free(&m->str);
    memset(m, 0, sizeof *m);
}
