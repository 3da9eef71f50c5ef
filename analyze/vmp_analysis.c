/* SPDX-License-Identifier: MIT
 *
 * vmp_analysis.c - the vmp_analysis object: its interned strings, creation
 * and freeing, the header and its vocabularies (spec.md §5.1, §5.2), the
 * interned resolved functions, frames and stacks, and the tables a caller
 * reads them from (vmp_analyze.h).  The limits that stop an analysis
 * (spec.md §8) are recorded here.  The object's fields and the invariants the
 * other files keep are in vmp_analysis_int.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_analysis_int.h"

/* ---- strings --------------------------------------------------------------- */

/* Interned strings are packed into blocks that never move (no allocation
 * per string). */
#define STR_BLOCK_SIZE (64u << 10)

typedef struct str_block {
    struct str_block *next;
    size_t used, cap;
    char data[];
} str_block;

/* Room for n bytes in the newest block, or NULL when out of memory. */
static char *str_alloc(vmp_analysis *a, size_t n)
{
    str_block *b = a->str_blocks;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > STR_BLOCK_SIZE ? n : STR_BLOCK_SIZE;
        b = malloc(sizeof *b + cap);
        if (!b)
            return NULL;
        b->used = 0;
        b->cap = cap;
        if (a->str_blocks && n > STR_BLOCK_SIZE / 4) {
            /* a large string: keep filling the current block */
            b->next = a->str_blocks->next;
            a->str_blocks->next = b;
        } else {
            b->next = a->str_blocks;
            a->str_blocks = b;
        }
        a->stats.memory_bytes += sizeof *b;
    }
    b->used += n;
    return b->data + b->used - n;
}

uint32_t vmp_analysis__intern_n(vmp_analysis *a, const char *s, size_t n)
{
    uint64_t h;
    if (!s) {
        s = "";
        n = 0;
    }
    h = vmp_hash_bytes(s, n);
    for (;;) {
        uint32_t id = vmp_hmap__get(&a->str_map, h, n);
        char *c;
        if (id) {
            if (memcmp(a->strs[id], s, n) == 0)
                return id;
            h++; /* a 64-bit collision: probe the next key */
            continue;
        }
        if (a->n_strs == 0)
            a->n_strs = 1; /* id 0 is never used */
        if (vmp_grow__((void **)&a->strs, &a->cap_strs, a->n_strs + 1, sizeof *a->strs))
            return 0;
        id = (uint32_t)a->n_strs;
        c = str_alloc(a, n + 1); /* on a failure below, freed with the blocks */
        if (!c || vmp_hmap__put(&a->str_map, h, n, id))
            return 0;
        memcpy(c, s, n);
        c[n] = '\0';
        a->strs[a->n_strs++] = c;
        a->stats.memory_bytes += n + 1 + sizeof(char *);
        return id;
    }
}

uint32_t vmp_analysis__intern(vmp_analysis *a, const char *s)
{
    return vmp_analysis__intern_n(a, s, strlen(s));
}

/* ---- create / free ------------------------------------------------------------ */

/* Process-wide defaults (vmp_analysis_set_defaults()); zero fields: built in. */
static vmp_analysis_options defaults;
static const char *default_kind; /* vmp_analysis_set_default_kind() */

void vmp_analysis_set_default_kind(const char *name)
{
    default_kind = name;
}

/* The name of the kind the analysis delivers: "cpu" unless asked. */
static const char *kind_asked(const vmp_analysis *a)
{
    const char *k = a->opts.kind ? a->opts.kind : default_kind;
    return k ? k : "cpu";
}

/* spec §5.15: kind 0 is "cpu"; a name resolves through the header's kinds */
static uint32_t select_kind(const vmp_analysis *a)
{
    const char *k = kind_asked(a);
    size_t i, n = strlen(k);
    if (strcmp(k, "cpu") == 0)
        return 0;
    for (i = 0; i < a->hdr.n_sample_kinds && i < MAX_KINDS - 1; i++)
        if (a->hdr.sample_kinds[i].len == n && memcmp(a->hdr.sample_kinds[i].s, k, n) == 0)
            return (uint32_t)i + 1;
    return KIND_NONE;
}

/* Kinds 0 .. n - 1 listed, with their names and units (R-KND-1, R-KND-2). */
static int grow_kinds(vmp_analysis *a, size_t n)
{
    static const vmp_str count = {"count", 5};
    char buf[32];
    if (n > MAX_KINDS)
        n = MAX_KINDS;
    if (n <= a->n_kinds)
        return 0;
    if (vmp_grow__((void **)&a->kinds, &a->cap_kinds, n, sizeof *a->kinds))
        return -1;
    for (; a->n_kinds < n; a->n_kinds++) {
        size_t k = a->n_kinds;
        vmp_akind *d = &a->kinds[k];
        uint32_t name, unit;
        if (k == 0) {
            name = vmp_analysis__intern(a, "cpu");
            unit = vmp_analysis__intern(a, "samples");
        } else {
            const vmp_str *u = k - 1 < a->hdr.n_sample_units && a->hdr.sample_units[k - 1].len
                                   ? &a->hdr.sample_units[k - 1]
                                   : &count;
            if (k - 1 < a->hdr.n_sample_kinds) {
                name = vmp_analysis__intern_n(a, a->hdr.sample_kinds[k - 1].s,
                                              a->hdr.sample_kinds[k - 1].len);
            } else {
                snprintf(buf, sizeof buf, "kind#%zu", k);
                name = vmp_analysis__intern(a, buf);
            }
            unit = vmp_analysis__intern_n(a, u->s, u->len);
        }
        if (!name || !unit)
            return -1;
        memset(d, 0, sizeof *d);
        d->name = a->strs[name];
        d->unit = a->strs[unit];
    }
    return 0;
}

int vmp_analysis__count_kind(vmp_analysis *a, uint64_t kind, uint64_t weight)
{
    vmp_akind *d;
    if (kind >= MAX_KINDS)
        kind = MAX_KINDS - 1;
    if (kind >= a->n_kinds && grow_kinds(a, (size_t)kind + 1) < 0)
        return -1;
    d = &a->kinds[kind];
    d->records++;
    d->weight = d->weight > UINT64_MAX - weight ? UINT64_MAX : d->weight + weight;
    return 0;
}

/* spec R-KND-3: the kind asked for is not in the file: the analysis stops
 * (as at a limit), its message listing the file's kinds. */
static void no_such_kind(vmp_analysis *a)
{
    size_t used, i;
    int w = snprintf(a->limit_msg, sizeof a->limit_msg,
                     "no samples of kind '%.64s' in this profile (its kinds: cpu", kind_asked(a));
    used = w > 0 ? (size_t)w : 0;
    for (i = 0; i < a->hdr.n_sample_kinds && used + 80 < sizeof a->limit_msg; i++) {
        w = snprintf(a->limit_msg + used, sizeof a->limit_msg - used, ", %.64s",
                     a->hdr.sample_kinds[i].s);
        used += w > 0 ? (size_t)w : 0;
    }
    snprintf(a->limit_msg + used, sizeof a->limit_msg - used, ")");
}

const vmp_akind *vmp_analysis_kinds(vmp_analysis *a, size_t *n_out)
{
    if (a && a->n_kinds == 0)
        (void)grow_kinds(a, 1);
    if (n_out)
        *n_out = a ? a->n_kinds : 0;
    return a ? a->kinds : NULL;
}

int64_t vmp_analysis_kind_selected(const vmp_analysis *a)
{
    if (!a)
        return -1;
    if (a->opts.flags & VMP_ANALYSIS_ALL_KINDS)
        return -2;
    return a->kind_sel == KIND_NONE ? -1 : (int64_t)a->kind_sel;
}

void vmp_analysis_set_defaults(const vmp_analysis_options *opts)
{
    if (opts && opts->version == VMP_ANALYSIS_OPTIONS_VERSION)
        defaults = *opts;
    else if (!opts)
        memset(&defaults, 0, sizeof defaults);
}

void vmp_analysis_add_default_flags(unsigned int flags)
{
    defaults.version = VMP_ANALYSIS_OPTIONS_VERSION;
    defaults.flags |= flags;
}

static uint64_t pick(uint64_t given, uint64_t process_default, uint64_t built_in)
{
    return given ? given : process_default ? process_default : built_in;
}

void vmp_analysis__hit_limit(vmp_analysis *a, const char *what, uint64_t n, const char *unit)
{
    if (!a->limit_msg[0])
        snprintf(a->limit_msg, sizeof a->limit_msg,
                 "analysis limit '%s' reached: more than %llu %s (raise it with vmp --limit "
                 "%s=N)",
                 what, (unsigned long long)n, unit, what);
}

const char *vmp_analysis_errmsg(const vmp_analysis *a)
{
    return a ? a->limit_msg : "";
}

vmp_status vmp_analysis_create(vmp_analysis **out, const vmp_analysis_options *opts)
{
    vmp_analysis *a;
    if (!out || (opts && opts->version != VMP_ANALYSIS_OPTIONS_VERSION && opts->version != 1))
        return VMP_ERR_INVALID_ARG;
    a = calloc(1, sizeof *a);
    if (!a)
        return VMP_ERR_NOMEM;
    if (opts && opts->version == 1) /* without `kind` */
        memcpy(&a->opts, opts, offsetof(vmp_analysis_options, kind));
    else if (opts)
        a->opts = *opts;
    a->kind_sel = select_kind(a); /* before a header: "cpu" is kind 0, a name none */
    a->opts.flags |= defaults.flags;
    a->sep = ">>";
    a->sep_len = 2;
    a->max_depth = a->opts.max_stack_depth >= 2    ? a->opts.max_stack_depth
                   : defaults.max_stack_depth >= 2 ? defaults.max_stack_depth
                                                   : VMP_ANALYSIS_DEFAULT_MAX_DEPTH;
    a->max_history = pick(a->opts.max_code_history, defaults.max_code_history,
                          VMP_ANALYSIS_DEFAULT_MAX_CODE_HISTORY);
    a->max_symbols =
        pick(a->opts.max_symbols, defaults.max_symbols, VMP_ANALYSIS_DEFAULT_MAX_SYMBOLS);
    a->max_nodes = pick(a->opts.max_stack_nodes, defaults.max_stack_nodes,
                        VMP_ANALYSIS_DEFAULT_MAX_STACK_NODES);
    a->max_stacks = pick(a->opts.max_stacks, defaults.max_stacks, VMP_ANALYSIS_DEFAULT_MAX_STACKS);
    a->n_funcs = a->n_frames = a->n_stacks = 1; /* id 0 reserved */
    if (vmp_grow__((void **)&a->funcs, &a->cap_funcs, 1, sizeof *a->funcs) ||
        vmp_grow__((void **)&a->frames, &a->cap_frames, 1, sizeof *a->frames) ||
        vmp_grow__((void **)&a->stacks, &a->cap_stacks, 1, sizeof *a->stacks)) {
        vmp_analysis_free(a);
        return VMP_ERR_NOMEM;
    }
    memset(&a->funcs[0], 0, sizeof a->funcs[0]);
    memset(&a->frames[0], 0, sizeof a->frames[0]);
    memset(&a->stacks[0], 0, sizeof a->stacks[0]);
    *out = a;
    return VMP_OK;
}

static void free_header(vmp_analysis *a)
{
    size_t i;
    for (i = 0; i < sizeof a->hdr_mem / sizeof a->hdr_mem[0]; i++) {
        free(a->hdr_mem[i]);
        a->hdr_mem[i] = NULL;
    }
}

void vmp_analysis_free(vmp_analysis *a)
{
    size_t i;
    if (!a)
        return;
    free_header(a);
    free(a->kinds);
    while (a->str_blocks) {
        str_block *next = a->str_blocks->next;
        free(a->str_blocks);
        a->str_blocks = next;
    }
    free(a->strs);
    vmp_hmap__free(&a->str_map);
    for (i = 0; i < a->n_codes; i++) {
        free(a->codes[i].pc_map);
        free(a->codes[i].inl);
        free(a->codes[i].inl_at);
    }
    free(a->codes);
    vmp_hmap__free(&a->code_by_id);
    free(a->hist.b);
    free(a->replay);
    for (i = 0; i < a->n_cps; i++)
        free(a->cps[i].replay);
    free(a->cps);
    free(a->live);
    for (i = 0; i < N_OLD_CACHES; i++)
        free(a->old[i].s);
    for (i = 0; i < a->n_fns; i++)
        free(a->fns[i].runs);
    free(a->fns);
    vmp_hmap__free(&a->fn_by_id);
    vmp_hmap__free(&a->fn_shown_unnamed);
    free(a->syms);
    free(a->sym_mods);
    vmp_hmap__free(&a->sym_mod_by_id);
    free(a->mods);
    free(a->mod_order);
    free(a->mod_max_end);
    vmp_hmap__free(&a->mod_by_id);
    vmp_hmap__free(&a->thread_names);
    vmp_hmap__free(&a->zone_names);
    vmp_hmap__free(&a->module_names);
    free(a->nodes);
    vmp_idmap__free(&a->node_ids);
    free(a->funcs);
    vmp_hmap__free(&a->func_key);
    free(a->func_sid);
    free(a->groups);
    vmp_hmap__free(&a->group_by_sid);
    free(a->frames);
    vmp_hmap__free(&a->frame_key);
    free(a->stacks);
    vmp_hmap__free(&a->stack_key);
    free(a->last_child);
    vmp_hmap__free(&a->scache);
    free(a->chain);
    free(a->context_slots);
    free(a->sample_slots);
    free(a);
}

/* ---- header ------------------------------------------------------------------- */

/* Copy the strings of one vmp_str array into interned storage; the array
 * itself lives in hdr_mem[slot]. */
static int copy_strs(vmp_analysis *a, int slot, const vmp_str **dst, size_t *n_dst,
                     const vmp_str *src, size_t n)
{
    vmp_str *arr;
    size_t i;
    *dst = NULL;
    *n_dst = 0;
    if (n == 0)
        return 0;
    arr = calloc(n, sizeof *arr);
    if (!arr)
        return -1;
    for (i = 0; i < n; i++) {
        uint32_t sid = vmp_analysis__intern_n(a, src[i].s, src[i].len);
        if (!sid) {
            free(arr);
            return -1;
        }
        arr[i].s = a->strs[sid];
        arr[i].len = src[i].len;
    }
    a->hdr_mem[slot] = arr;
    *dst = arr;
    *n_dst = n;
    return 0;
}

static int copy_str(vmp_analysis *a, vmp_str *dst, const vmp_str *src)
{
    uint32_t sid = vmp_analysis__intern_n(a, src->s, src->len);
    if (!sid)
        return -1;
    dst->s = a->strs[sid];
    dst->len = src->len;
    return 0;
}

vmp_status vmp_analysis__take_header(vmp_analysis *a, const vmp_rec_header *h)
{
    vmp_rec_header *d = &a->hdr;
    free_header(a);
    *d = *h;
    if (copy_str(a, &d->producer, &h->producer) || copy_str(a, &d->vm_name, &h->vm_name) ||
        copy_str(a, &d->vm_version, &h->vm_version) || copy_str(a, &d->clock, &h->clock) ||
        copy_strs(a, 0, &d->states, &d->n_states, h->states, h->n_states) ||
        copy_strs(a, 1, &d->code_kinds, &d->n_code_kinds, h->code_kinds, h->n_code_kinds) ||
        copy_strs(a, 2, &d->tiers, &d->n_tiers, h->tiers, h->n_tiers) ||
        copy_strs(a, 3, &d->event_kinds, &d->n_event_kinds, h->event_kinds, h->n_event_kinds) ||
        copy_strs(a, 4, &d->counter_kinds, &d->n_counter_kinds, h->counter_kinds,
                  h->n_counter_kinds) ||
        copy_strs(a, 5, &d->failure_reasons, &d->n_failure_reasons, h->failure_reasons,
                  h->n_failure_reasons) ||
        copy_strs(a, 6, &d->labels, &d->n_labels, h->labels, h->n_labels * 2)) {
        memset(d, 0, sizeof *d);
        a->have_header = 0;
        return VMP_ERR_NOMEM;
    }
    d->n_labels = h->n_labels;
    if (copy_str(a, &d->name_separator, &h->name_separator)) {
        memset(d, 0, sizeof *d);
        a->have_header = 0;
        return VMP_ERR_NOMEM;
    }
    /* R-RES-2: the VM's separator, ">>" without one (1.0 files) */
    a->sep = d->name_separator.len ? d->name_separator.s : ">>";
    a->sep_len = d->name_separator.len ? d->name_separator.len : 2;
    if (copy_strs(a, 7, &d->sample_kinds, &d->n_sample_kinds, h->sample_kinds, h->n_sample_kinds) ||
        copy_strs(a, 8, &d->sample_units, &d->n_sample_units, h->sample_units, h->n_sample_units)) {
        memset(d, 0, sizeof *d);
        a->have_header = 0;
        return VMP_ERR_NOMEM;
    }
    /* spec §5.15: the kinds, their names from this header */
    a->n_kinds = 0;
    if (grow_kinds(a, d->n_sample_kinds + 1) < 0)
        return VMP_ERR_NOMEM;
    a->kind_sel = select_kind(a);
    a->have_header = 1;
    if (a->kind_sel == KIND_NONE && !(a->opts.flags & VMP_ANALYSIS_ALL_KINDS))
        no_such_kind(a);
    return VMP_OK;
}

static const char *vocab_name(vmp_analysis *a, const vmp_str *arr, size_t n, uint32_t i,
                              const char *prefix)
{
    char buf[64];
    uint32_t sid;
    if (i < n)
        return arr[i].s;
    snprintf(buf, sizeof buf, "%s#%" PRIu32, prefix, i);
    sid = vmp_analysis__intern(a, buf);
    return sid ? a->strs[sid] : prefix;
}

const char *vmp_analysis_state_name(vmp_analysis *a, uint32_t state)
{
    return vocab_name(a, a->hdr.states, a->hdr.n_states, state, "state");
}

const char *vmp_analysis_event_kind_name(vmp_analysis *a, uint32_t kind)
{
    return vocab_name(a, a->hdr.event_kinds, a->hdr.n_event_kinds, kind, "event");
}

const char *vmp_analysis_counter_kind_name(vmp_analysis *a, uint32_t kind)
{
    return vocab_name(a, a->hdr.counter_kinds, a->hdr.n_counter_kinds, kind, "counter");
}

const char *vmp_analysis_failure_reason_name(vmp_analysis *a, uint32_t reason)
{
    return vocab_name(a, a->hdr.failure_reasons, a->hdr.n_failure_reasons, reason, "reason");
}

const char *vmp_analysis__code_kind_name(vmp_analysis *a, uint32_t kind)
{
    return vocab_name(a, a->hdr.code_kinds, a->hdr.n_code_kinds, kind, "kind");
}

const char *vmp_analysis_thread_name(vmp_analysis *a, uint64_t id)
{
    uint32_t sid = vmp_hmap__get(&a->thread_names, id, 0);
    uint32_t last = vmp_hmap__get(&a->thread_names, id, 1);
    char buf[64];
    if (sid && last && last != sid) {
        /* renamed: "first (latest)", e.g. HotSpot's "main (DestroyJavaVM)" */
        const char *f = a->strs[sid], *l = a->strs[last];
        size_t nf = strlen(f), nl = strlen(l);
        char *both = malloc(nf + nl + 4);
        uint32_t bs;
        if (!both)
            return f;
        memcpy(both, f, nf);
        memcpy(both + nf, " (", 2);
        memcpy(both + nf + 2, l, nl);
        memcpy(both + nf + 2 + nl, ")", 2);
        bs = vmp_analysis__intern_n(a, both, nf + nl + 3);
        free(both);
        return bs ? a->strs[bs] : f;
    }
    if (sid)
        return a->strs[sid];
    snprintf(buf, sizeof buf, "thread#%" PRIu64, id);
    sid = vmp_analysis__intern(a, buf);
    return sid ? a->strs[sid] : "thread";
}

const vmp_rec_header *vmp_analysis_header(const vmp_analysis *a)
{
    return a->have_header ? &a->hdr : NULL;
}

const vmp_rec_end *vmp_analysis_end(const vmp_analysis *a)
{
    return a->have_end ? &a->end : NULL;
}

/* ---- interned results -------------------------------------------------------- */

uint32_t vmp_analysis__intern_func(vmp_analysis *a, uint32_t name_sid, const char *kind, int cls,
                                   uint32_t code_kind, uint64_t function_id, uint64_t module_id,
                                   uint64_t bc_size)
{
    uint32_t kind_sid = vmp_analysis__intern(a, kind);
    uint32_t id;
    vmp_afunction *f;
    if (!kind_sid || !name_sid)
        return 0;
    id = vmp_hmap__get(&a->func_key, name_sid, (uint64_t)kind_sid | (uint64_t)cls << 32);
    if (id) {
        f = &a->funcs[id];
        if (!f->bytecode_size && bc_size)
            f->bytecode_size = bc_size;
        return id;
    }
    if (a->n_funcs >= UINT32_MAX - 1 ||
        vmp_grow__((void **)&a->funcs, &a->cap_funcs, a->n_funcs + 1, sizeof *a->funcs))
        return 0;
    id = (uint32_t)a->n_funcs;
    if (vmp_hmap__put(&a->func_key, name_sid, (uint64_t)kind_sid | (uint64_t)cls << 32, id))
        return 0;
    if (vmp_grow__((void **)&a->func_sid, &a->cap_func_sid, a->n_funcs + 1, sizeof *a->func_sid))
        return 0;
    a->func_sid[a->n_funcs] = name_sid;
    f = &a->funcs[a->n_funcs++];
    f->name = a->strs[name_sid];
    f->members = 0;
    f->kind = a->strs[kind_sid];
    f->code_class = cls;
    f->code_kind = code_kind;
    f->function_id = function_id;
    f->module_id = module_id;
    f->bytecode_size = bc_size;
    f->zone_id = 0;     /* vmp_functions__code_afunc() sets it */
    f->address = 0;     /* module_offset_func() sets it */
    f->raw_name = NULL; /* the symbol path sets it */
    a->stats.memory_bytes += sizeof *f + 24;
    return id;
}

uint32_t vmp_analysis__intern_frame(vmp_analysis *a, uint32_t func, int has_range, uint32_t first,
                                    uint32_t last)
{
    uint64_t ka = (uint64_t)func | (has_range ? 1ull << 32 : 0);
    uint64_t kb = has_range ? ((uint64_t)first << 32 | last) : 0;
    uint32_t id;
    vmp_aframe *fr;
    if (!func)
        return 0;
    id = vmp_hmap__get(&a->frame_key, ka, kb);
    if (id)
        return id;
    if (a->n_frames >= UINT32_MAX - 1 ||
        vmp_grow__((void **)&a->frames, &a->cap_frames, a->n_frames + 1, sizeof *a->frames))
        return 0;
    id = (uint32_t)a->n_frames;
    if (vmp_hmap__put(&a->frame_key, ka, kb, id))
        return 0;
    fr = &a->frames[a->n_frames++];
    fr->function = func;
    fr->has_range = has_range ? 1 : 0;
    fr->bc_first = has_range ? first : 0;
    fr->bc_last = has_range ? last : 0;
    a->stats.memory_bytes += sizeof *fr + 24;
    return id;
}

uint32_t vmp_analysis__intern_stack(vmp_analysis *a, uint32_t parent, uint32_t frame)
{
    uint64_t last = parent < a->cap_last_child ? a->last_child[parent] : 0;
    uint32_t id;
    vmp_astack *s;
    if (last && (uint32_t)(last >> 32) == frame)
        return (uint32_t)last;
    id = vmp_hmap__get(&a->stack_key, parent, frame);
    if (id) {
        if (parent < a->cap_last_child)
            a->last_child[parent] = (uint64_t)frame << 32 | id;
        return id;
    }
    if (a->n_stacks > a->max_stacks) {
        vmp_analysis__hit_limit(a, "stacks", a->max_stacks, "distinct resolved stacks");
        return 0;
    }
    if (a->n_stacks >= UINT32_MAX - 1 ||
        vmp_grow__((void **)&a->stacks, &a->cap_stacks, a->n_stacks + 1, sizeof *a->stacks))
        return 0;
    if (a->n_stacks + 1 > a->cap_last_child) {
        size_t old = a->cap_last_child;
        if (vmp_grow__((void **)&a->last_child, &a->cap_last_child, a->n_stacks + 1,
                       sizeof *a->last_child))
            return 0;
        memset(a->last_child + old, 0, (a->cap_last_child - old) * sizeof *a->last_child);
    }
    id = (uint32_t)a->n_stacks;
    if (vmp_hmap__put(&a->stack_key, parent, frame, id))
        return 0;
    a->last_child[parent] = (uint64_t)frame << 32 | id;
    a->last_child[id] = 0;
    s = &a->stacks[a->n_stacks++];
    s->parent = parent;
    s->frame = frame;
    s->depth = parent ? a->stacks[parent].depth + 1 : 1;
    a->stats.memory_bytes += sizeof *s + 24;
    return id;
}

/* ---- tables ------------------------------------------------------------------------------ */

size_t vmp_analysis_function_count(const vmp_analysis *a)
{
    return a->n_funcs;
}

const vmp_afunction *vmp_analysis_function(const vmp_analysis *a, uint32_t id)
{
    vmp_afunction *f;
    if (!id || id >= a->n_funcs)
        return NULL;
    f = &a->funcs[id];
    if (a->n_hidden_groups > 0) {
        /* a grouped name shows its member count as of now (names only:
         * the analysis is not changed otherwise) */
        uint32_t g = vmp_hmap__get(&a->group_by_sid, a->func_sid[id], 0);
        const name_group *grp = g ? &a->groups[g - 1] : NULL;
        if (grp && grp->hidden && f->members != grp->members) {
            vmp_analysis *m = (vmp_analysis *)(uintptr_t)a; /* names are a cache */
            const char *base = a->strs[grp->base_sid];
            size_t n = strlen(base) + 24;
            char *buf = malloc(n);
            uint32_t sid = 0;
            if (buf) {
                if (a->opts.flags & VMP_ANALYSIS_GROUP_NO_COUNT)
                    snprintf(buf, n, "%s", base);
                else
                    snprintf(buf, n, "%s [x%" PRIu32 "]", base, grp->members);
                sid = vmp_analysis__intern(m, buf);
                free(buf);
            }
            if (sid) {
                f->name = a->strs[sid];
                f->members = grp->members;
            }
        }
    }
    return f;
}

size_t vmp_analysis_frame_count(const vmp_analysis *a)
{
    return a->n_frames;
}

const vmp_aframe *vmp_analysis_frame(const vmp_analysis *a, uint32_t id)
{
    return id && id < a->n_frames ? &a->frames[id] : NULL;
}

size_t vmp_analysis_stack_count(const vmp_analysis *a)
{
    return a->n_stacks;
}

const vmp_astack *vmp_analysis_stack(const vmp_analysis *a, uint32_t id)
{
    return id && id < a->n_stacks ? &a->stacks[id] : NULL;
}

size_t vmp_analysis_format_frame(const vmp_analysis *a, char *out, size_t size, uint32_t frame)
{
    const vmp_aframe *f = vmp_analysis_frame(a, frame);
    const vmp_afunction *fn = f ? vmp_analysis_function(a, f->function) : NULL;
    int n;
    if (!fn)
        n = snprintf(out, size, "[none]");
    else if (f->has_range)
        n = snprintf(out, size, "%s %" PRIu32 "->%" PRIu32, fn->name, f->bc_first, f->bc_last);
    else
        n = snprintf(out, size, "%s", fn->name);
    return n < 0 ? 0 : (size_t)n;
}

void vmp_analysis_get_stats(const vmp_analysis *a, vmp_analysis_stats *out)
{
    *out = a->stats;
    out->memory_bytes +=
        (a->str_map.cap + a->code_by_id.cap + a->fn_by_id.cap + a->thread_names.cap +
         a->func_key.cap + a->frame_key.cap + a->stack_key.cap + a->scache.cap) *
        sizeof(vmp_hmap_entry);
    out->memory_bytes += a->cap_last_child * sizeof *a->last_child;
    out->memory_bytes += vmp_idmap__bytes(&a->node_ids);
}

/* ---- zones and modules ------------------------------------------------------ */

/* The string of sid, else "<prefix>#<id>" interned. */
static const char *name_or_id(vmp_analysis *a, uint32_t sid, const char *prefix, uint64_t id)
{
    char buf[64];
    if (!sid) {
        snprintf(buf, sizeof buf, "%s#%" PRIu64, prefix, id);
        sid = vmp_analysis__intern(a, buf);
    }
    return sid ? a->strs[sid] : prefix;
}

const char *vmp_analysis_zone_name(vmp_analysis *a, uint64_t id)
{
    return name_or_id(a, vmp_hmap__get(&a->zone_names, id, 0), "zone", id);
}

const char *vmp_analysis_module_name(vmp_analysis *a, uint64_t id)
{
    return name_or_id(a, vmp_hmap__get(&a->module_names, id, 0), "module", id);
}
