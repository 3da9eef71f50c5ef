/* SPDX-License-Identifier: MIT
 *
 * vmp_functions.c - FUNCTION records and the names and frames of bytecode
 * functions (spec.md §5.5, "Resolution" R-RES-2, R-RES-9 to R-RES-11): display
 * names and hidden classes' groups, line tables, and the afunctions and
 * frames of compiled code, symbolic, inlined, interpreted and truncated
 * frames.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_analysis_int.h"

/* ---- FUNCTION records ------------------------------------------------------------ */

/* R-RES-2: scope + the header's separator + name, or name alone. */
static uint32_t full_name_sid(vmp_analysis *a, const char *scope, size_t scope_len,
                              const vmp_str *name)
{
    char stackbuf[256];
    char *buf = stackbuf;
    size_t n = scope_len + a->sep_len + name->len;
    uint32_t sid;
    if (scope_len == 0)
        return vmp_analysis__intern_n(a, name->s, name->len);
    if (n + 1 > sizeof stackbuf) {
        buf = malloc(n + 1);
        if (!buf)
            return 0;
    }
    memcpy(buf, scope, scope_len);
    memcpy(buf + scope_len, a->sep, a->sep_len);
    memcpy(buf + scope_len + a->sep_len, name->s, name->len);
    sid = vmp_analysis__intern_n(a, buf, n);
    if (buf != stackbuf)
        free(buf);
    return sid;
}

/* The length of `scope` without the suffix that makes each hidden class's
 * name unique (spec R-RES-2: the reference tools' grouping): a HotSpot
 * hidden class `Name.0x00007f3c0c01e800` (or `/0x...`) is `Name`, and a
 * lambda's `Outer$$Lambda$14` then is `Outer$$Lambda`.  `len` when the scope
 * has no such suffix. */
size_t vmp_analysis__hidden_scope_len(const char *scope, size_t len)
{
    static const char lambda[] = "$$Lambda";
    size_t i = len, hex = 0;
    while (i > 0 && isxdigit((unsigned char)scope[i - 1])) {
        i--;
        hex++;
    }
    if (hex < 4 || i < 3 || scope[i - 1] != 'x' || scope[i - 2] != '0' ||
        (scope[i - 3] != '.' && scope[i - 3] != '/'))
        return len;
    i -= 3;
    /* Outer$$Lambda$14 -> Outer$$Lambda */
    {
        size_t j = i;
        while (j > 0 && isdigit((unsigned char)scope[j - 1]))
            j--;
        if (j < i && j > sizeof lambda && scope[j - 1] == '$' &&
            memcmp(scope + j - sizeof lambda, lambda, sizeof lambda - 1) == 0)
            i = j - 1;
    }
    return i;
}

/* The display name sid of FUNCTION `f`, its scope without a hidden class's
 * suffix (unless VMP_ANALYSIS_NO_GROUP_HIDDEN); *grouped says whether it had
 * one. */
static uint32_t function_name_sid(vmp_analysis *a, const vmp_rec_function *f, int *grouped)
{
    size_t base = (a->opts.flags & VMP_ANALYSIS_NO_GROUP_HIDDEN)
                      ? f->scope.len
                      : vmp_analysis__hidden_scope_len(f->scope.s, f->scope.len);
    *grouped = base != f->scope.len;
    return full_name_sid(a, f->scope.s, base, &f->name);
}

/* Count `d`, named by a frame, in the group of its display name (spec
 * R-RES-10): the members are the function ids that frames name, whether or
 * not the file describes others, so that a file of the functions its
 * samples need shows the same count as one of every function; a function
 * without a suffix counts too when it has the same display name.  0, or -1
 * (no memory). */
static int count_member(vmp_analysis *a, fdef *d)
{
    uint32_t g;
    name_group *grp;
    if (d->member_counted)
        return 0;
    g = vmp_hmap__get(&a->group_by_sid, d->name_sid, 0);
    if (!g) {
        if (vmp_grow__((void **)&a->groups, &a->cap_groups, a->n_groups + 1, sizeof *a->groups))
            return -1;
        memset(&a->groups[a->n_groups], 0, sizeof *a->groups);
        a->groups[a->n_groups].base_sid = d->name_sid;
        g = (uint32_t)++a->n_groups;
        if (vmp_hmap__put(&a->group_by_sid, d->name_sid, 0, g))
            return -1;
        a->stats.memory_bytes += sizeof *a->groups + 24;
    }
    d->member_counted = 1;
    grp = &a->groups[g - 1];
    grp->members++;
    if (d->grouped && !grp->hidden) {
        grp->hidden = 1;
        a->n_hidden_groups++;
    }
    return 0;
}

/* Keep the line runs of a line table (spec R-RES-11): (bcpc, line) where a
 * new line starts (the line of bcpc b is that of the pair with the greatest
 * bcpc <= b, §5.5).  The pairs are read in order: one whose bcpc is below
 * the last kept pair's is skipped (hostile input), and of pairs with one
 * bcpc the later holds.  Returns 0 or -1 (no memory). */
static int take_lines(vmp_analysis *a, fdef *d, const uint64_t *lines, size_t n)
{
    size_t i, k = 0, cap = 0;
    uint32_t prev = 0; /* the last kept pair's bcpc (when i > 0 kept one) */
    int have_prev = 0;
    if (n == 0)
        return 0;
    if (vmp_grow__((void **)&d->runs, &cap, 2 * n, sizeof *d->runs))
        return -1;
    for (i = 0; i < n; i++) {
        uint64_t bc = lines[2 * i], line = lines[2 * i + 1];
        uint32_t b = bc > UINT32_MAX ? UINT32_MAX : (uint32_t)bc;
        uint32_t l = line > UINT32_MAX ? UINT32_MAX : (uint32_t)line;
        if (have_prev && b < prev)
            continue;
        if (have_prev && b == prev && d->runs[2 * k - 2] == b) {
            d->runs[2 * k - 1] = l; /* the later pair of one bcpc wins */
            if (k > 1 && d->runs[2 * k - 3] == l)
                k--; /* now continues the run before it */
            continue;
        }
        /* b > prev, or b == prev inside a run begun at a lower bcpc (its
         * pair at b was the same line): a new line starts at b */
        prev = b;
        have_prev = 1;
        if (k > 0 && l == d->runs[2 * k - 1])
            continue;
        d->runs[2 * k] = b;
        d->runs[2 * k + 1] = l;
        k++;
    }
    d->n_runs = k;
    a->stats.memory_bytes += 2 * k * sizeof *d->runs;
    return 0;
}

vmp_status vmp_functions__take(vmp_analysis *a, const vmp_rec_function *f)
{
    uint32_t idx = vmp_hmap__get(&a->fn_by_id, f->id, 0);
    uint32_t sid;
    int grouped;
    fdef *d;
    if (idx)
        return VMP_OK; /* spec R-ID-5: the first definition wins entirely */
    if (vmp_hmap__get(&a->fn_shown_unnamed, f->id, 0))
        vmp_forget__all(a); /* spec R-ID-2: named from here on */
    sid = function_name_sid(a, f, &grouped);
    if (!sid)
        return VMP_ERR_NOMEM;
    if (vmp_grow__((void **)&a->fns, &a->cap_fns, a->n_fns + 1, sizeof *a->fns))
        return VMP_ERR_NOMEM;
    memset(&a->fns[a->n_fns], 0, sizeof a->fns[0]);
    idx = (uint32_t)++a->n_fns;
    if (vmp_hmap__put(&a->fn_by_id, f->id, 0, idx))
        return VMP_ERR_NOMEM;
    a->stats.memory_bytes += sizeof *d + 24;
    d = &a->fns[idx - 1];
    d->name_sid = sid;
    d->grouped = grouped;
    d->bytecode_size = f->bytecode_size;
    d->is_class = f->is_class == 1;
    return take_lines(a, d, f->lines, f->n_lines) ? VMP_ERR_NOMEM : VMP_OK;
}

const fdef *vmp_functions__find(const vmp_analysis *a, uint64_t id)
{
    uint32_t idx = id ? vmp_hmap__get(&a->fn_by_id, id, 0) : 0;
    return idx ? &a->fns[idx - 1] : NULL;
}

/* ---- afunctions and frames ------------------------------------------------------ */

/* The name "function#ID" of a function shown before (or without) its
 * FUNCTION record (spec R-RES-9); its FUNCTION record, when it comes, drops
 * the stacks resolved with this name (vmp_functions__take()).  0 on no memory. */
static uint32_t unnamed_function_sid(vmp_analysis *a, uint64_t function)
{
    char buf[64];
    snprintf(buf, sizeof buf, "function#%" PRIu64, function);
    if (vmp_hmap__put(&a->fn_shown_unnamed, function, 0, 1))
        return 0;
    return vmp_analysis__intern(a, buf);
}

uint32_t vmp_functions__code_afunc(vmp_analysis *a, code_obj *o)
{
    const fdef *f;
    uint32_t name_sid;
    uint32_t id;
    char buf[64];
    if (o->afunc)
        return o->afunc;
    f = vmp_functions__find(a, o->function);
    if (f) {
        name_sid = f->name_sid;
        if (count_member(a, &a->fns[f - a->fns]))
            return 0;
    } else if (o->function) {
        name_sid = unnamed_function_sid(a, o->function);
    } else if (o->name_sid) {
        name_sid = o->name_sid;
    } else {
        snprintf(buf, sizeof buf, "code#%" PRIu64, o->id);
        name_sid = vmp_analysis__intern(a, buf);
    }
    id = vmp_analysis__intern_func(a, name_sid, vmp_analysis__code_kind_name(a, o->kind),
                                   VMP_CLASS_GENERATED, o->kind, o->function, 0,
                                   f ? f->bytecode_size : 0);
    if (id && !a->funcs[id].zone_id)
        a->funcs[id].zone_id = o->zone;
    if (f || !o->function)
        o->afunc = id; /* cache only once the answer cannot change */
    return id;
}

/* Index of "name" in the header's code kinds, VMP_CODE_KIND_NONE if absent. */
static uint32_t vocab_kind(const vmp_analysis *a, const char *name)
{
    size_t i, n = strlen(name);
    for (i = 0; i < a->hdr.n_code_kinds && i < UINT32_MAX; i++)
        if (a->hdr.code_kinds[i].len == n && memcmp(a->hdr.code_kinds[i].s, name, n) == 0)
            return (uint32_t)i;
    return VMP_CODE_KIND_NONE;
}

enum {
    SLOT_SYMBOLIC,
    SLOT_INLINED,
    SLOT_INTERPRETED
};

/* The afunction of bytecode function `function` seen as a symbolic,
 * inlined or interpreted frame: its full name, or "function#ID" when no
 * FUNCTION record defines it.  0 on no memory. */
static uint32_t function_afunc(vmp_analysis *a, uint64_t function, int slot)
{
    static const char *const kinds[] = {"function", "inlined", "interpreted"};
    uint32_t idx = function ? vmp_hmap__get(&a->fn_by_id, function, 0) : 0;
    int cls = slot == SLOT_SYMBOLIC ? VMP_CLASS_SYMBOLIC : VMP_CLASS_GENERATED;
    uint32_t code_kind = slot == SLOT_SYMBOLIC ? VMP_CODE_KIND_NONE : vocab_kind(a, kinds[slot]);
    if (idx) {
        fdef *d = &a->fns[idx - 1];
        uint32_t *memo = slot == SLOT_SYMBOLIC  ? &d->afunc_sym
                         : slot == SLOT_INLINED ? &d->afunc_inl
                                                : &d->afunc_interp;
        /* spec R-KND-4: a class's frame is of kind "class" */
        const char *kind = d->is_class && slot == SLOT_SYMBOLIC ? "class" : kinds[slot];
        if (!*memo)
            *memo = vmp_analysis__intern_func(a, d->name_sid, kind, cls, code_kind, function, 0,
                                              d->bytecode_size);
        if (!*memo || count_member(a, d))
            return 0;
        return *memo;
    } else {
        uint32_t sid = unnamed_function_sid(a, function);
        return sid ? vmp_analysis__intern_func(a, sid, kinds[slot], cls, code_kind, function, 0, 0)
                   : 0;
    }
}

static uint32_t clamp32(uint64_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

uint32_t vmp_functions__symbolic_frame(vmp_analysis *a, const snode *n)
{
    uint32_t fn = function_afunc(a, n->value, SLOT_SYMBOLIC);
    uint32_t bc = clamp32(n->bcpc);
    int has = n->has_bcpc && n->bcpc < UINT32_MAX;
    return vmp_analysis__intern_frame(a, fn, has, bc, bc);
}

uint32_t vmp_functions__inlined_frame(vmp_analysis *a, uint64_t function, uint64_t bcpc)
{
    uint32_t fn = function_afunc(a, function, SLOT_INLINED);
    int has = bcpc < UINT32_MAX;
    return vmp_analysis__intern_frame(a, fn, has, has ? (uint32_t)bcpc : 0,
                                      has ? (uint32_t)bcpc : 0);
}

/* 1 + the index of the line run holding bcpc b, 0 when b precedes them. */
static size_t run_of(const fdef *d, uint32_t b)
{
    size_t lo = 0, hi = d->n_runs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->runs[2 * mid] <= b)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int vmp_analysis_lines(const vmp_analysis *a, uint64_t function_id, uint32_t first, uint32_t last,
                       uint64_t *lo_out, uint64_t *hi_out)
{
    const fdef *d = a ? vmp_functions__find(a, function_id) : NULL;
    size_t i;
    uint64_t lo, hi;
    if (!d || !d->n_runs || last < first || (i = run_of(d, first)) == 0)
        return 0;
    lo = hi = d->runs[2 * (i - 1) + 1];
    for (; i < d->n_runs && d->runs[2 * i] <= last; i++) {
        uint64_t l = d->runs[2 * i + 1];
        if (l < lo)
            lo = l;
        if (l > hi)
            hi = l;
    }
    if (lo_out)
        *lo_out = lo;
    if (hi_out)
        *hi_out = hi;
    return 1;
}

uint32_t vmp_functions__interpreted_frame(vmp_analysis *a, uint64_t function, int has,
                                          uint64_t bcpc)
{
    uint32_t fn = function_afunc(a, function, SLOT_INTERPRETED);
    const fdef *d = vmp_functions__find(a, function);
    uint32_t b = clamp32(bcpc), first = b, last = b;
    if (!has || bcpc >= UINT32_MAX)
        return vmp_analysis__intern_frame(a, fn, 0, 0, 0);
    if (d && d->n_runs) {
        size_t lo = run_of(d, b);
        if (lo > 0) {
            first = d->runs[2 * (lo - 1)];
            if (lo < d->n_runs)
                last = d->runs[2 * lo] - 1; /* runs ascend strictly: >= b */
            else if (d->bytecode_size && d->bytecode_size - 1 >= b)
                last = clamp32(d->bytecode_size - 1);
        }
    }
    return vmp_analysis__intern_frame(a, fn, 1, first, last);
}

int vmp_functions__same(const vmp_analysis *a, uint64_t x, uint64_t y)
{
    const fdef *dx, *dy;
    if (x == y)
        return 1;
    dx = vmp_functions__find(a, x);
    dy = vmp_functions__find(a, y);
    return dx && dy && dx->name_sid == dy->name_sid;
}

uint32_t vmp_functions__truncated_frame(vmp_analysis *a, uint64_t n)
{
    char buf[64];
    uint32_t sid, fn;
    snprintf(buf, sizeof buf, "[truncated %llu frames]", (unsigned long long)n);
    sid = vmp_analysis__intern(a, buf);
    fn = sid ? vmp_analysis__intern_func(a, sid, "truncated", VMP_CLASS_UNKNOWN, VMP_CODE_KIND_NONE,
                                         0, 0, 0)
             : 0;
    return fn ? vmp_analysis__intern_frame(a, fn, 0, 0, 0) : 0;
}
