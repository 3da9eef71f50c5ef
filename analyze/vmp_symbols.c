/* SPDX-License-Identifier: MIT
 *
 * vmp_symbols.c - modules and their symbols (spec.md §5.3, "Resolution"
 * R-RES-1, R-RES-6): the frame of an address that no code object holds.
 * Module symbols form one array sorted by runtime address.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_analysis_int.h"
#include "vmp_search.h"
#include "vmp_symchoice.h"

/* spec R-RES-6's choice, as the writer makes it (format/vmp_symchoice.h) */
static const vmp_symchoice_layout sym_layout = {
    sizeof(sym), offsetof(sym, addr), offsetof(sym, end), offsetof(sym, seq), offsetof(sym, up)};

/* Put module index `k` (the last one taken) into the interval index: after
 * every module that starts at or before it.  O(modules) a MODULE record;
 * module_at() then costs O(log modules) when mappings do not overlap. */
static void index_module(vmp_analysis *a, uint32_t k)
{
    size_t lo = 0, hi = k, j;
    uint64_t start = a->mods[k].start;
    while (lo < hi) { /* the first position starting after `start` */
        size_t mid = lo + (hi - lo) / 2;
        if (a->mods[a->mod_order[mid]].start <= start)
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(a->mod_order + lo + 1, a->mod_order + lo, (k - lo) * sizeof *a->mod_order);
    a->mod_order[lo] = k;
    for (j = lo; j <= k; j++) {
        uint64_t end = a->mods[a->mod_order[j]].end, before = j ? a->mod_max_end[j - 1] : 0;
        a->mod_max_end[j] = end > before ? end : before;
    }
}

vmp_status vmp_symbols__take_module(vmp_analysis *a, const vmp_rec_module *m)
{
    module_rec *d;
    if (a->n_mods >= UINT32_MAX - 1 ||
        vmp_grow__((void **)&a->mods, &a->cap_mods, a->n_mods + 1, sizeof *a->mods) ||
        vmp_grow__((void **)&a->mod_order, &a->cap_mod_order, a->n_mods + 1,
                   sizeof *a->mod_order) ||
        vmp_grow__((void **)&a->mod_max_end, &a->cap_mod_max_end, a->n_mods + 1,
                   sizeof *a->mod_max_end))
        return VMP_ERR_NOMEM;
    if (!vmp_hmap__get(&a->mod_by_id, m->id, 0) &&
        vmp_hmap__put(&a->mod_by_id, m->id, 0, (uint32_t)a->n_mods + 1))
        return VMP_ERR_NOMEM;
    d = &a->mods[a->n_mods++];
    d->id = m->id;
    d->bias = m->bias;
    d->start = m->start;
    d->end = m->end;
    index_module(a, (uint32_t)(a->n_mods - 1));
    if (m->path.len) {
        uint32_t sid = vmp_analysis__intern_n(a, m->path.s, m->path.len);
        if (!sid || vmp_hmap__put(&a->module_names, m->id, 0, sid))
            return VMP_ERR_NOMEM;
    }
    vmp_forget__range(a, m->start, m->end); /* pcs resolved as unknown */
    return VMP_OK;
}

/* The first MODULE record of `id`, or NULL. */
static const module_rec *find_module(const vmp_analysis *a, uint64_t id)
{
    uint32_t idx = vmp_hmap__get(&a->mod_by_id, id, 0);
    return idx ? &a->mods[idx - 1] : NULL;
}

/* The index in sym_mods of module id `id`, added when new; -1 on no memory. */
static int64_t sym_mod_index(vmp_analysis *a, uint64_t id)
{
    uint32_t idx = vmp_hmap__get(&a->sym_mod_by_id, id, 0);
    if (idx)
        return idx - 1;
    if (a->n_sym_mods >= SYM_SIZE0 - 1 ||
        vmp_grow__((void **)&a->sym_mods, &a->cap_sym_mods, a->n_sym_mods + 1,
                   sizeof *a->sym_mods) ||
        vmp_hmap__put(&a->sym_mod_by_id, id, 0, (uint32_t)a->n_sym_mods + 1))
        return -1;
    a->sym_mods[a->n_sym_mods] = id;
    a->stats.memory_bytes += sizeof *a->sym_mods;
    return (int64_t)a->n_sym_mods++;
}

vmp_status vmp_symbols__take_symbols(vmp_analysis *a, const vmp_rec_module_symbols *ms)
{
    const module_rec *m = find_module(a, ms->module);
    uint64_t bias = m ? m->bias : 0;
    int64_t mod = sym_mod_index(a, ms->module);
    size_t i;
    /* seq and up are 32-bit */
    uint64_t max = a->max_symbols < UINT32_MAX - 1 ? a->max_symbols : UINT32_MAX - 1;
    if (ms->n_symbols > max || a->n_syms > max - ms->n_symbols) {
        vmp_analysis__hit_limit(a, "symbols", max, "module symbols");
        return VMP_ERR_LIMIT;
    }
    if (mod < 0 ||
        vmp_grow__((void **)&a->syms, &a->cap_syms, a->n_syms + ms->n_symbols, sizeof *a->syms))
        return VMP_ERR_NOMEM;
    for (i = 0; i < ms->n_symbols; i++) {
        sym *s = &a->syms[a->n_syms];
        uint64_t size = ms->symbols[i].size;
        s->addr = ms->symbols[i].value + bias;
        s->end = s->addr + size < s->addr ? UINT64_MAX : s->addr + size;
        s->mod = (uint32_t)mod | (size ? 0 : SYM_SIZE0);
        s->afunc = 0;
        s->up = 0;
        s->seq = (uint32_t)a->n_syms;
        s->raw_sid = vmp_analysis__intern_n(a, ms->symbols[i].name.s, ms->symbols[i].name.len);
        if (!s->raw_sid)
            return VMP_ERR_NOMEM;
        a->n_syms++;
    }
    a->syms_sorted = 0;
    a->stats.symbols = a->n_syms;
    a->stats.memory_bytes += ms->n_symbols * sizeof(sym);
    /* a symbol changes the resolution of what it covers, and a size-0 one
     * may end another size-0 symbol sooner: from its address up to its
     * module's end (spec R-RES-6) */
    {
        uint64_t lo = UINT64_MAX, hi = 0;
        for (i = a->n_syms - ms->n_symbols; i < a->n_syms; i++) {
            const sym *y = &a->syms[i];
            uint64_t end =
                y->mod & SYM_SIZE0 ? (m && m->end > y->addr ? m->end : UINT64_MAX) : y->end;
            lo = y->addr < lo ? y->addr : lo;
            hi = end > hi ? end : hi;
        }
        vmp_forget__range(a, lo, hi);
    }
    return VMP_OK;
}

/* The size given for a symbol (0 for SYM_SIZE0; saturated near 2^64). */
static uint64_t sym_size(const sym *s)
{
    return s->mod & SYM_SIZE0 ? 0 : s->end - s->addr;
}

static int cmp_sym(const void *x, const void *y)
{
    const sym *a = x, *b = y;
    uint64_t sa = sym_size(a), sb = sym_size(b);
    if (a->addr != b->addr)
        return a->addr < b->addr ? -1 : 1;
    if (sa != sb)
        return sa > sb ? -1 : 1; /* the larger symbol first */
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Per module, walking the sorted symbols down: the lowest address seen and
 * the lowest one above it. */
typedef struct sym_next {
    uint64_t low, above;
    int seen, has_above;
} sym_next;

static int sort_syms(vmp_analysis *a)
{
    size_t i;
    sym_next *nx;
    if (a->n_syms > 1)
        qsort(a->syms, a->n_syms, sizeof *a->syms, cmp_sym);
    /* spec R-RES-6: size 0 covers up to the nearest of the next higher
     * symbol address of its module and the module's end, of those above it;
     * only its own address when neither is */
    nx = calloc(a->n_sym_mods ? a->n_sym_mods : 1, sizeof *nx);
    if (!nx)
        return -1;
    for (i = a->n_syms; i-- > 0;) {
        sym *s = &a->syms[i];
        sym_next *n = &nx[s->mod & ~SYM_SIZE0];
        if (!n->seen || s->addr < n->low) {
            n->above = n->low;
            n->has_above = n->seen;
            n->low = s->addr;
            n->seen = 1;
        }
        if (s->mod & SYM_SIZE0) {
            const module_rec *m = find_module(a, a->sym_mods[s->mod & ~SYM_SIZE0]);
            s->end = m && m->end > s->addr ? m->end : UINT64_MAX;
            if (n->has_above && n->above < s->end)
                s->end = n->above;
            if (s->end == UINT64_MAX && s->addr < UINT64_MAX)
                s->end = s->addr + 1;
        }
    }
    free(nx);
    vmp_symchoice_link(a->syms, a->n_syms, &sym_layout);
    a->syms_sorted = 1;
    return 0;
}

/* The symbol of addr (spec R-RES-6, as the writer chooses it), or NULL; the
 * symbols must be sorted. */
static const sym *find_sym(const vmp_analysis *a, uint64_t addr)
{
    size_t k = vmp_symchoice_find(a->syms, a->n_syms, &sym_layout, addr);
    return k ? &a->syms[k - 1] : NULL;
}

static uint32_t unknown_func(vmp_analysis *a)
{
    if (!a->unknown_func) {
        uint32_t sid = vmp_analysis__intern(a, "[unknown]");
        a->unknown_func = sid ? vmp_analysis__intern_func(a, sid, "unknown", VMP_CLASS_UNKNOWN,
                                                          VMP_CODE_KIND_NONE, 0, 0, 0)
                              : 0;
    }
    return a->unknown_func;
}

/* The module whose mapping [start, end) holds addr, the first in the file
 * when mappings overlap, or NULL.  Looks at the modules starting at or
 * before addr, from the nearest, while one of them may still end past it. */
static const module_rec *module_at(const vmp_analysis *a, uint64_t addr)
{
    size_t lo = 0, hi = a->n_mods, j;
    uint32_t best = UINT32_MAX;
    while (lo < hi) { /* the modules starting at or before addr: [0, lo) */
        size_t mid = lo + (hi - lo) / 2;
        if (a->mods[a->mod_order[mid]].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (j = lo; j-- > 0 && a->mod_max_end[j] > addr;) {
        uint32_t k = a->mod_order[j];
        if (addr < a->mods[k].end && k < best)
            best = k;
    }
    return best == UINT32_MAX ? NULL : &a->mods[best];
}

/* The function "<module basename>+0x<addr - bias>" (kind "C") of an address
 * inside module m that no symbol covers: the offset is the link-time address
 * that addr2line and objdump take. */
static uint32_t module_offset_func(vmp_analysis *a, const module_rec *m, uint64_t addr)
{
    char buf[512];
    uint32_t path = vmp_hmap__get(&a->module_names, m->id, 0), sid, id;
    const char *base = path ? vmp_analysis__str(a, path) : NULL;
    int n;

    if (base) {
        const char *slash = strrchr(base, '/');
        base = slash ? slash + 1 : base;
    }
    if (base && *base)
        n = snprintf(buf, sizeof buf, "%.400s+0x%llx", base, (unsigned long long)(addr - m->bias));
    else
        n = snprintf(buf, sizeof buf, "module#%llu+0x%llx", (unsigned long long)m->id,
                     (unsigned long long)(addr - m->bias));
    if (n <= 0)
        return 0;
    sid = vmp_analysis__intern_n(a, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
    id = sid ? vmp_analysis__intern_func(a, sid, "C", VMP_CLASS_NATIVE, VMP_CODE_KIND_NONE, 0,
                                         m->id, 0)
             : 0;
    if (id && !a->funcs[id].address)
        a->funcs[id].address = addr;
    return id;
}

uint32_t vmp_symbols__frame_at(vmp_analysis *a, uint64_t addr)
{
    if (!a->syms_sorted && sort_syms(a))
        return 0;
    {
        sym *sy = (sym *)find_sym(a, addr);
        if (sy) {
            if (!sy->afunc) {
                char buf[1024];
                const char *raw = vmp_analysis__str(a, sy->raw_sid);
                uint64_t mod_id = a->sym_mods[sy->mod & ~SYM_SIZE0];
                if (!*raw) {
                    /* a function known only by its start (spec R-RES-2) */
                    const module_rec *m = find_module(a, mod_id);
                    module_rec anon = {mod_id, 0, 0, 0};
                    sy->afunc = module_offset_func(a, m ? m : &anon, sy->addr);
                } else {
                    size_t dn = vmp_demangle(buf, sizeof buf, raw);
                    uint32_t sid =
                        dn && dn < sizeof buf ? vmp_analysis__intern_n(a, buf, dn) : sy->raw_sid;
                    sy->afunc = sid ? vmp_analysis__intern_func(a, sid, "C", VMP_CLASS_NATIVE,
                                                                VMP_CODE_KIND_NONE, 0, mod_id, 0)
                                    : 0;
                }
                if (!sy->afunc)
                    return 0;
                if (*raw && !a->funcs[sy->afunc].raw_name)
                    a->funcs[sy->afunc].raw_name = raw;
            }
            return vmp_analysis__intern_frame(a, sy->afunc, 0, 0, 0);
        }
    }
    {
        const module_rec *m = module_at(a, addr);
        if (m) {
            uint32_t fn = module_offset_func(a, m, addr);
            return fn ? vmp_analysis__intern_frame(a, fn, 0, 0, 0) : 0;
        }
    }
    return vmp_analysis__intern_frame(a, unknown_func(a), 0, 0, 0);
}
