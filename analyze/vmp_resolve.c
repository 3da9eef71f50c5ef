/* SPDX-License-Identifier: MIT
 *
 * vmp_resolve.c - streaming metadata tables and exact resolution of samples
 * through the code as it stood at their generation (spec.md §5 "Generations"
 * R-GEN-3, "Resolution of a pc", §5.3, §5.7-§5.12).
 *
 * Outline.  Every code object has a history of *placements*: (start, end,
 * gen_from, gen_to) with gen_to = UINT64_MAX while it lasts; a move closes one
 * placement and opens another, a free closes it.  The history is kept as a
 * byte log of events in record order (see "code history" below), a few bytes
 * per move; a code object holds only its current start.  The placements alive
 * at the latest generation form `live`, an array sorted by start that is
 * updated in place (binary insertion and removal; a compaction or snapshot
 * rebuilds it).  Lookups at an older generation replay the log into a sorted
 * array of the placements alive then, cached for a few generations (samples
 * at older generations are rare: they come from samples taken just before a
 * change).  Module symbols form one array sorted by runtime address.
 *
 * A sample names its innermost stack node.  (node, generation) pairs are
 * resolved once into an interned tree of resolved frames and cached, so a
 * repeated stack costs one hash lookup.  A record that changes what a
 * resolved address or function shows (code added where an address was
 * resolved, a module, symbols, a CODE_MAP of code found, the FUNCTION of a
 * function shown as function#ID, a code change at a resolved generation)
 * makes them forgotten: a sample resolves with the records before it.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_analyze.h"
#include "vmp_analyze_int.h"
#include "vmp_search.h"

#define GEN_OPEN     UINT64_MAX
#define N_OLD_CACHES 4
#define LEAF_BIT     (1ull << 63)
#define TOUCH_BITS   16384u /* blocks of resolved addresses remembered (a hash) */
#define TOUCH_SHIFT  8      /* of 256 bytes: about one small compiled method */

typedef struct code_obj {
    uint64_t id, zone, function, size, generation;
    uint32_t kind;
    uint32_t name_sid;
    uint64_t *pc_map; /* pairs (offset, bcpc) */
    size_t n_map;
    uint64_t start; /* start of the current placement (valid while alive) */
    uint32_t afunc; /* 0 until resolved once with its function known */
    uint32_t place; /* number of the current placement, in record order */
    int alive;
    int mapped;         /* a CODE_MAP was taken, empty or not: the first holds (R-CODE-3) */
    uint32_t hit_epoch; /* the epoch a lookup last found it in (span_at()) */
    /* The inlining records, each at inl[inl_at[i]] as offset, depth, then
     * depth (function, bcpc) pairs innermost first.  Kept always: a symbolic
     * innermost frame is matched against them; machine frames are expanded
     * through them only with VMP_ANALYSIS_INLINES. */
    uint64_t *inl;
    size_t *inl_at;
    size_t n_inl;
} code_obj;

/* The code history: events appended in record order, each a varint
 * (zigzag(object index - previous event's object index) << 2 | kind):
 *   HIST_PLACE  then the varint zigzag(start - previous placement's start):
 *               the object is placed there (created, or moved: its previous
 *               placement ends) at the current generation;
 *   HIST_FREE   the object's placement ends at the current generation;
 *   HIST_GEN    (object delta 0) then the varint zigzag(generation - the
 *               current generation): the generation of the events after it.
 * Differences are taken modulo 2^64.  A compaction that slides objects in
 * order costs 3 or 4 bytes per move. */
enum {
    HIST_PLACE = 0,
    HIST_FREE = 1,
    HIST_GEN = 2
};

typedef struct hist_log {
    uint8_t *b;
    size_t n, cap;
    uint64_t gen;   /* generation of the last HIST_GEN (0 before any) */
    uint32_t obj;   /* object of the last event */
    uint64_t start; /* start of the last HIST_PLACE */
} hist_log;

/* One code object's state while the log is replayed. */
typedef struct replay_obj {
    uint64_t start, gen_from;
    uint32_t place;
    int open;
} replay_obj;

typedef struct span {
    uint64_t start, end;
    uint32_t obj, place;
} span;

typedef struct gen_index {
    uint64_t gen;
    span *s;
    size_t n, cap;
    int valid;
} gen_index;

typedef struct fdef {
    uint32_t name_sid; /* full name */
    uint64_t bytecode_size;
    uint32_t afunc_sym;    /* symbolic-frame afunction, 0 until used */
    uint32_t afunc_inl;    /* inlined-frame afunction, 0 until used */
    uint32_t afunc_interp; /* interpreted-frame afunction, 0 until used */
    int member_counted;    /* counted in its name's group (count_member()) */
    int grouped;           /* its scope had a hidden class's suffix (R-RES-10) */
    /* Line runs of the line table (§5.5): (bcpc, line) at runs[2i],
     * runs[2i + 1], bcpcs strictly ascending, consecutive lines differing;
     * run i covers bcpcs [runs[2i], runs[2i + 2]). */
    uint32_t *runs;
    size_t n_runs;
} fdef;

typedef struct sym {
    uint64_t addr;
    /* addr + size (saturating) as given; for a size-0 symbol (SYM_SIZE0)
     * the end sort_syms() derives from the next symbol or the module */
    uint64_t end;
    uint32_t raw_sid;
    uint32_t afunc;
    uint32_t seq; /* position in the file, for ties (spec R-RES-6) */
    uint32_t up;  /* 1 + index of the nearest earlier symbol ending past addr, or 0 */
    uint32_t mod; /* index in sym_mods, | SYM_SIZE0 when the size given is 0 */
} sym;

#define SYM_SIZE0 (1u << 31)

/* Symbols a lookup inspects at most on its way out of nested symbols. */
#define SYM_CHAIN_MAX 256

typedef struct module_rec {
    uint64_t id, bias, start, end;
} module_rec;

/* The functions that frames name under one display name (spec R-RES-10,
 * vmp_analyze.h "Naming rules"): its sid, how many there are, and whether
 * one of them had a hidden class's suffix (then the name shows the count). */
typedef struct name_group {
    uint32_t base_sid, members;
    int hidden;
} name_group;

typedef struct snode {
    uint64_t parent, value;
    uint64_t bcpc;
    int is_function, has_bcpc;
    uint32_t depth; /* nodes from the root to this one, 1 for a root (saturates) */
    /* Memo of the last resolution, [0] as a caller frame, [1] as the
     * innermost: most samples are taken at the latest generation, so this
     * answers them without touching the (node, generation) cache. */
    uint64_t memo_gen[2];
    uint32_t memo_stack[2];
    uint32_t memo_epoch[2];
} snode;

struct vmp_analysis {
    vmp_analysis_options opts;

    int have_header, have_end;
    vmp_rec_header hdr;
    vmp_rec_end end;
    void *hdr_mem[8];

    char **strs; /* id -> the string, in str_blocks */
    size_t n_strs, cap_strs;
    vmp_hmap str_map;
    struct str_block *str_blocks; /* newest first */

    code_obj *codes;
    size_t n_codes, cap_codes;
    vmp_hmap code_by_id;

    hist_log hist;
    size_t n_pl; /* placements in the history */
    replay_obj *replay;
    size_t cap_replay;
    span *live;
    size_t n_live, cap_live;
    gen_index old[N_OLD_CACHES];
    size_t old_next;
    uint64_t cur_gen;

    fdef *fns;
    size_t n_fns, cap_fns;
    vmp_hmap fn_by_id;
    vmp_hmap fn_shown_unnamed; /* (function id, 0) -> 1: shown as function#ID */

    sym *syms;
    size_t n_syms, cap_syms;
    int syms_sorted;
    uint64_t *sym_mods; /* the module ids that symbols name */
    size_t n_sym_mods, cap_sym_mods;
    vmp_hmap sym_mod_by_id; /* (module id, 0) -> index in sym_mods + 1 */
    module_rec *mods;
    size_t n_mods, cap_mods;
    vmp_hmap mod_by_id; /* (MODULE id, 0) -> index of its first record + 1 */

    vmp_hmap thread_names;
    vmp_hmap zone_names;   /* (CODE_ZONE id, 0) -> name sid */
    vmp_hmap module_names; /* (MODULE id, 0) -> path sid */

    snode *nodes;
    size_t n_nodes, cap_nodes;
    vmp_hmap node_by_id;  /* ids too sparse for node_dense */
    uint32_t *node_dense; /* id -> index + 1; writers number nodes densely */
    size_t cap_dense;
    uint32_t epoch; /* memos of another epoch are stale */

    vmp_afunction *funcs;
    size_t n_funcs, cap_funcs;
    vmp_hmap func_key;
    uint32_t *func_sid; /* per afunction, its name sid (parallel to funcs) */
    size_t cap_func_sid;

    /* Display names: the header's separator (R-RES-2), and the groups of
     * hidden classes' functions. */
    const char *sep;
    size_t sep_len;
    name_group *groups;
    size_t n_groups, cap_groups;
    size_t n_hidden_groups; /* groups with hidden set */
    vmp_hmap group_by_sid;  /* (base sid, 0) -> index + 1 */
    vmp_aframe *frames;
    size_t n_frames, cap_frames;
    vmp_hmap frame_key;
    vmp_astack *stacks;
    size_t n_stacks, cap_stacks;
    vmp_hmap stack_key;
    /* Per stack id, the child interned last: frame << 32 | child id, 0 when
     * none.  Resolving a chain again (a new generation, same code) finds its
     * stacks here without a stack_key lookup. */
    uint64_t *last_child;
    size_t cap_last_child;
    vmp_hmap scache;
    uint64_t max_sample_gen;
    int any_sample;
    /* the blocks (a hash of addr >> TOUCH_SHIFT) of every address resolved
     * since the resolved stacks were last forgotten: a record that changes
     * the resolution of addresses on none of them leaves the stacks */
    uint64_t touched[TOUCH_BITS / 64];

    uint32_t *chain; /* scratch for stack resolution */
    size_t cap_chain;

    uint32_t unknown_func;
    uint64_t max_depth; /* stack nodes resolved per stack; deeper ones are truncated */
    uint64_t max_history, max_symbols, max_nodes, max_stacks; /* the limits in use */
    char limit_msg[256]; /* the limit that stopped the analysis, or "" */
    size_t hit_obj;      /* index + 1 of the code object resolve_addr() last found, or 0 */
    uint64_t hit_off;    /* the address's offset in it */
    vmp_analysis_stats stats;
};

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

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i;
    for (i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

/* Intern the n bytes at s; returns the string id (>= 1) or 0 on no memory. */
static uint32_t intern_n(vmp_analysis *a, const char *s, size_t n)
{
    uint64_t h;
    if (!s) {
        s = "";
        n = 0;
    }
    h = hash_bytes(s, n);
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

static uint32_t intern(vmp_analysis *a, const char *s)
{
    return intern_n(a, s, strlen(s));
}

static const char *str_of(const vmp_analysis *a, uint32_t sid)
{
    return sid ? a->strs[sid] : "";
}

/* ---- create / free ------------------------------------------------------------ */

/* Process-wide defaults (vmp_analysis_set_defaults()); zero fields: built in. */
static vmp_analysis_options defaults;

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

/* Record that limit `what` (`n` of `unit`) stopped the analysis. */
static void hit_limit(vmp_analysis *a, const char *what, uint64_t n, const char *unit)
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
    if (!out || (opts && opts->version != VMP_ANALYSIS_OPTIONS_VERSION))
        return VMP_ERR_INVALID_ARG;
    a = calloc(1, sizeof *a);
    if (!a)
        return VMP_ERR_NOMEM;
    if (opts)
        a->opts = *opts;
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
    vmp_hmap__free(&a->mod_by_id);
    vmp_hmap__free(&a->thread_names);
    vmp_hmap__free(&a->zone_names);
    vmp_hmap__free(&a->module_names);
    free(a->nodes);
    vmp_hmap__free(&a->node_by_id);
    free(a->node_dense);
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
    free(a);
}

/* ---- header ------------------------------------------------------------------- */

/* Copy the strings of one vmp_str array into interned storage; the array
 * itself lives in hdr_mem[slot]. */
static int copy_strs(
    vmp_analysis *a, int slot, const vmp_str **dst, size_t *n_dst, const vmp_str *src, size_t n)
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
        uint32_t sid = intern_n(a, src[i].s, src[i].len);
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
    uint32_t sid = intern_n(a, src->s, src->len);
    if (!sid)
        return -1;
    dst->s = a->strs[sid];
    dst->len = src->len;
    return 0;
}

static vmp_status take_header(vmp_analysis *a, const vmp_rec_header *h)
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
    a->have_header = 1;
    return VMP_OK;
}

static const char *vocab_name(
    vmp_analysis *a, const vmp_str *arr, size_t n, uint32_t i, const char *prefix)
{
    char buf[64];
    uint32_t sid;
    if (i < n)
        return arr[i].s;
    snprintf(buf, sizeof buf, "%s#%" PRIu32, prefix, i);
    sid = intern(a, buf);
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

static const char *code_kind_name(vmp_analysis *a, uint32_t kind)
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
        bs = intern_n(a, both, nf + nl + 3);
        free(both);
        return bs ? a->strs[bs] : f;
    }
    if (sid)
        return a->strs[sid];
    snprintf(buf, sizeof buf, "thread#%" PRIu64, id);
    sid = intern(a, buf);
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

static uint32_t intern_func(vmp_analysis *a,
                            uint32_t name_sid,
                            const char *kind,
                            int cls,
                            uint32_t code_kind,
                            uint64_t function_id,
                            uint64_t module_id,
                            uint64_t bc_size)
{
    uint32_t kind_sid = intern(a, kind);
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
    f->zone_id = 0;     /* code_afunc() sets it */
    f->address = 0;     /* module_offset_func() sets it */
    f->raw_name = NULL; /* the symbol path sets it */
    a->stats.memory_bytes += sizeof *f + 24;
    return id;
}

static uint32_t intern_frame(
    vmp_analysis *a, uint32_t func, int has_range, uint32_t first, uint32_t last)
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

static uint32_t intern_stack(vmp_analysis *a, uint32_t parent, uint32_t frame)
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
        hit_limit(a, "stacks", a->max_stacks, "distinct resolved stacks");
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

/* ---- functions, code objects, placements -------------------------------------------- */

/* R-RES-2: scope + the header's separator + name, or name alone. */
static uint32_t full_name_sid(vmp_analysis *a,
                              const char *scope,
                              size_t scope_len,
                              const vmp_str *name)
{
    char stackbuf[256];
    char *buf = stackbuf;
    size_t n = scope_len + a->sep_len + name->len;
    uint32_t sid;
    if (scope_len == 0)
        return intern_n(a, name->s, name->len);
    if (n + 1 > sizeof stackbuf) {
        buf = malloc(n + 1);
        if (!buf)
            return 0;
    }
    memcpy(buf, scope, scope_len);
    memcpy(buf + scope_len, a->sep, a->sep_len);
    memcpy(buf + scope_len + a->sep_len, name->s, name->len);
    sid = intern_n(a, buf, n);
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

/* Forget every resolved stack (the node memos and the (node, generation)
 * hash): a record just read changes what a sample resolves to from here on
 * (spec R-RES-1: a sample resolves with the records before it, so a stack
 * resolved before the record must not answer for a sample after it). */
static void forget_resolved(vmp_analysis *a)
{
    if (!a->any_sample)
        return;
    if (a->scache.n)
        vmp_hmap__clear(&a->scache);
    a->epoch++;
    memset(a->touched, 0, sizeof a->touched);
}

static uint64_t touch_bit(uint64_t page)
{
    return page & (TOUCH_BITS - 1);
}

/* Note that address `addr` was resolved. */
static void touch(vmp_analysis *a, uint64_t addr)
{
    uint64_t b = touch_bit(addr >> TOUCH_SHIFT);
    a->touched[b / 64] |= (uint64_t)1 << (b % 64);
}

/* Forget the resolved stacks if an address in [start, end) may have been
 * resolved since they were last forgotten: a record changes the resolution
 * of those addresses only. */
static void forget_resolved_in(vmp_analysis *a, uint64_t start, uint64_t end)
{
    uint64_t p, first = start >> TOUCH_SHIFT, last = (end - 1) >> TOUCH_SHIFT;
    if (!a->any_sample || end <= start)
        return;
    if (last - first >= TOUCH_BITS - 1)
        last = first + TOUCH_BITS - 1; /* every bit */
    for (p = first; p <= last; p++) {
        uint64_t b = touch_bit(p);
        if (a->touched[b / 64] & ((uint64_t)1 << (b % 64))) {
            forget_resolved(a);
            return;
        }
    }
}

static vmp_status take_function(vmp_analysis *a, const vmp_rec_function *f)
{
    uint32_t idx = vmp_hmap__get(&a->fn_by_id, f->id, 0);
    uint32_t sid;
    int grouped;
    fdef *d;
    if (idx)
        return VMP_OK; /* spec R-ID-5: the first definition wins entirely */
    if (vmp_hmap__get(&a->fn_shown_unnamed, f->id, 0))
        forget_resolved(a); /* spec R-ID-2: named from here on */
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
    return take_lines(a, d, f->lines, f->n_lines) ? VMP_ERR_NOMEM : VMP_OK;
}

static const fdef *find_fn(const vmp_analysis *a, uint64_t id)
{
    uint32_t idx = id ? vmp_hmap__get(&a->fn_by_id, id, 0) : 0;
    return idx ? &a->fns[idx - 1] : NULL;
}

static size_t span_lower(const span *s, size_t n, uint64_t addr)
{
    /* first index with start > addr */
    return vmp_upper_bound(s, n, sizeof *s, offsetof(span, start), addr);
}

/* The end of code object `obj` placed at `start` (saturating). */
static uint64_t end_at(const vmp_analysis *a, uint32_t obj, uint64_t start)
{
    uint64_t end = start + a->codes[obj].size;
    return end < start ? UINT64_MAX : end;
}

static void set_span(const vmp_analysis *a, span *s, uint32_t obj, uint64_t start, uint32_t place)
{
    s->start = start;
    s->end = end_at(a, obj, start);
    s->obj = obj;
    s->place = place;
}

/* Insert live code object `obj` (at its current placement) into `live`.  A
 * code object of size 0 covers nothing and hides nothing (spec R-GEN-5): it
 * has no span. */
static int live_insert(vmp_analysis *a, uint32_t obj)
{
    const code_obj *o = &a->codes[obj];
    size_t at;
    if (o->size == 0)
        return 0;
    if (vmp_grow__((void **)&a->live, &a->cap_live, a->n_live + 1, sizeof *a->live))
        return -1;
    at = span_lower(a->live, a->n_live, o->start);
    memmove(&a->live[at + 1], &a->live[at], (a->n_live - at) * sizeof *a->live);
    set_span(a, &a->live[at], obj, o->start, o->place);
    a->n_live++;
    return 0;
}

static void live_remove(vmp_analysis *a, uint32_t obj)
{
    const code_obj *o = &a->codes[obj];
    size_t at = span_lower(a->live, a->n_live, o->start);
    while (at > 0) {
        at--;
        if (a->live[at].obj == obj) {
            memmove(&a->live[at], &a->live[at + 1], (a->n_live - at - 1) * sizeof *a->live);
            a->n_live--;
            return;
        }
        if (a->live[at].start != o->start)
            return;
    }
}

static int cmp_span(const void *x, const void *y)
{
    const span *a = x, *b = y;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->place < b->place ? -1 : a->place > b->place;
}

static void invalidate_old(vmp_analysis *a, uint64_t gen)
{
    size_t i;
    for (i = 0; i < N_OLD_CACHES; i++)
        if (a->old[i].valid && a->old[i].gen >= gen)
            a->old[i].valid = 0;
}

/* A change (free, move, compaction, snapshot) at generation `gen`. */
static void note_change(vmp_analysis *a, uint64_t gen)
{
    invalidate_old(a, gen);
    /* Samples at >= gen already resolved saw the code without this change;
     * by R-GEN-3 the change applies to them, so forget them. */
    if (gen <= a->max_sample_gen)
        forget_resolved(a);
    if (gen > a->cur_gen)
        a->cur_gen = gen;
    a->stats.generation = a->cur_gen;
}

/* ---- code history ---- */

static uint64_t zigzag(uint64_t d) /* d: a difference modulo 2^64 */
{
    return (d << 1) ^ (0 - (d >> 63));
}

static uint64_t unzigzag(uint64_t z)
{
    return (z >> 1) ^ (0 - (z & 1));
}

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* Varints written by put_varint() into a log this file owns: no bounds or
 * overlong checks needed. */
static const uint8_t *get_varint(const uint8_t *p, uint64_t *v)
{
    uint64_t r = 0;
    unsigned shift = 0;
    while (*p & 0x80) {
        r |= (uint64_t)(*p++ & 0x7f) << shift;
        shift += 7;
    }
    *v = r | (uint64_t)*p++ << shift;
    return p;
}

/* Append an event of `kind` for object `obj` at generation `gen`
 * (HIST_PLACE: at `start`).  Returns 0, or -1 when out of memory. */
static int hist_append(vmp_analysis *a, int kind, uint32_t obj, uint64_t start, uint64_t gen)
{
    hist_log *h = &a->hist;
    uint8_t *p;
    size_t before = h->n;
    /* two events of at most 11 bytes each (a 66-bit first varint is impossible:
     * an object delta is below 2^33) */
    if (vmp_grow__((void **)&h->b, &h->cap, h->n + 32, 1))
        return -1;
    p = h->b + h->n;
    if (gen != h->gen) {
        p = put_varint(p, HIST_GEN);
        p = put_varint(p, zigzag(gen - h->gen));
        h->gen = gen;
    }
    p = put_varint(p, zigzag((uint64_t)obj - (uint64_t)h->obj) << 2 | (uint64_t)kind);
    h->obj = obj;
    if (kind == HIST_PLACE) {
        p = put_varint(p, zigzag(start - h->start));
        h->start = start;
    }
    h->n = (size_t)(p - h->b);
    a->stats.memory_bytes += h->n - before;
    return 0;
}

static int add_place(vmp_analysis *a, uint32_t obj, uint64_t start, uint64_t gen)
{
    if (a->n_pl >= a->max_history) {
        hit_limit(a, "history", a->max_history, "code placements (code objects and moves)");
        return -1;
    }
    if (a->n_pl >= UINT32_MAX - 1 || hist_append(a, HIST_PLACE, obj, start, gen))
        return -1;
    a->codes[obj].start = start;
    a->codes[obj].place = (uint32_t)a->n_pl;
    a->n_pl++;
    a->stats.placements = a->n_pl;
    return 0;
}

/* Copy a pc_map and inline records (CODE_OBJECT's or CODE_MAP's) into `o`,
 * which has none. */
static vmp_status take_maps(vmp_analysis *a,
                            code_obj *o,
                            const uint64_t *pc_map,
                            size_t pc_map_len,
                            const vmp_rec_inline *inlines,
                            size_t n_inlines)
{
    size_t i;
    if (pc_map_len) {
        o->pc_map = malloc(pc_map_len * 2 * sizeof *o->pc_map);
        if (!o->pc_map)
            return VMP_ERR_NOMEM;
        memcpy(o->pc_map, pc_map, pc_map_len * 2 * sizeof *o->pc_map);
        o->n_map = pc_map_len;
        /* Offsets are non-decreasing by construction (§5.7); keep it true
         * on hostile input so the binary search stays meaningful. */
        for (i = 1; i < o->n_map; i++)
            if (o->pc_map[2 * i] < o->pc_map[2 * i - 2])
                o->pc_map[2 * i] = o->pc_map[2 * i - 2];
        a->stats.memory_bytes += pc_map_len * 16;
    }
    if (n_inlines) {
        size_t words = 0, at = 0;
        for (i = 0; i < n_inlines; i++)
            words += 2 + 2 * inlines[i].depth;
        o->inl = malloc(words * sizeof *o->inl);
        o->inl_at = malloc(n_inlines * sizeof *o->inl_at);
        if (!o->inl || !o->inl_at) {
            free(o->pc_map);
            free(o->inl);
            free(o->inl_at);
            o->pc_map = NULL;
            o->inl = NULL;
            o->inl_at = NULL;
            o->n_map = 0;
            return VMP_ERR_NOMEM;
        }
        for (i = 0; i < n_inlines; i++) {
            const vmp_rec_inline *in = &inlines[i];
            uint64_t off = in->mcpc_offset;
            /* sorted by offset (§5.7); keep it true on hostile input */
            if (i > 0 && off < o->inl[o->inl_at[i - 1]])
                off = o->inl[o->inl_at[i - 1]];
            o->inl_at[i] = at;
            o->inl[at++] = off;
            o->inl[at++] = in->depth;
            memcpy(o->inl + at, in->frames, 2 * in->depth * sizeof *o->inl);
            at += 2 * in->depth;
        }
        o->n_inl = n_inlines;
        a->stats.memory_bytes += words * 8 + n_inlines * sizeof(size_t);
    }
    return VMP_OK;
}

static vmp_status take_code(vmp_analysis *a, const vmp_rec_code_object *c)
{
    code_obj *o;
    uint32_t idx;
    if (vmp_hmap__get(&a->code_by_id, c->id, 0))
        return VMP_ERR_CORRUPT; /* spec R-ID-1: defined twice */
    if (a->n_codes >= UINT32_MAX - 1 ||
        vmp_grow__((void **)&a->codes, &a->cap_codes, a->n_codes + 1, sizeof *a->codes))
        return VMP_ERR_NOMEM;
    o = &a->codes[a->n_codes];
    memset(o, 0, sizeof *o);
    o->hit_epoch = a->epoch - 1; /* not found by a lookup yet */
    o->id = c->id;
    o->zone = c->zone;
    o->function = c->function;
    o->size = c->size;
    o->generation = c->generation;
    o->kind = c->kind > UINT32_MAX ? UINT32_MAX : (uint32_t)c->kind;
    if (c->name.len) {
        o->name_sid = intern_n(a, c->name.s, c->name.len);
        if (!o->name_sid)
            return VMP_ERR_NOMEM;
    }
    if (take_maps(a, o, c->pc_map, c->pc_map_len, c->inlines, c->n_inlines) != VMP_OK)
        return VMP_ERR_NOMEM;
    idx = (uint32_t)a->n_codes;
    if (vmp_hmap__put(&a->code_by_id, c->id, 0, idx + 1)) {
        /* not counted in n_codes: vmp_analysis_free() would not see them */
        free(o->pc_map);
        free(o->inl);
        free(o->inl_at);
        return VMP_ERR_NOMEM;
    }
    a->n_codes++;
    a->stats.code_objects++;
    a->stats.memory_bytes += sizeof *o + 24;
    if (add_place(a, idx, c->start, c->generation))
        return VMP_ERR_NOMEM;
    o->alive = 1;
    if (live_insert(a, idx))
        return VMP_ERR_NOMEM;
    if (c->generation < a->cur_gen)
        invalidate_old(a, c->generation);
    /* a stack resolved at a generation the code exists in may have a pc in
     * it (HotSpot runs an nmethod before its load event is posted) */
    if (c->generation <= a->max_sample_gen)
        forget_resolved_in(a, c->start, end_at(a, idx, c->start));
    return VMP_OK;
}

static code_obj *find_code(vmp_analysis *a, uint64_t id)
{
    uint32_t idx = vmp_hmap__get(&a->code_by_id, id, 0);
    return idx ? &a->codes[idx - 1] : NULL;
}

/* CODE_MAP (spec R-CODE-3): the maps of a code object that has none, from
 * here on.  Samples resolved before it keep what they showed; the resolved
 * stacks are forgotten (when a lookup found the code since they were last)
 * so that later samples see the map. */
static vmp_status take_code_map(vmp_analysis *a, const vmp_rec_code_map *m)
{
    code_obj *o = find_code(a, m->id);
    if (!o || o->mapped || o->n_map || o->n_inl)
        return VMP_OK; /* unknown code, or a map already: the first holds */
    o->mapped = 1;
    if (!m->pc_map_len && !m->n_inlines)
        return VMP_OK; /* an empty map changes no resolution */
    if (take_maps(a, o, m->pc_map, m->pc_map_len, m->inlines, m->n_inlines) != VMP_OK)
        return VMP_ERR_NOMEM;
    if (o->hit_epoch == a->epoch) /* a resolved stack may hold it */
        forget_resolved(a);
    return VMP_OK;
}

static int do_free(vmp_analysis *a, code_obj *o, uint64_t gen)
{
    if (!o || !o->alive)
        return 0;
    if (hist_append(a, HIST_FREE, (uint32_t)(o - a->codes), 0, gen))
        return -1;
    o->alive = 0;
    return 0;
}

static int do_move(vmp_analysis *a, code_obj *o, uint64_t new_start, uint64_t gen)
{
    if (!o || !o->alive)
        return 0;
    return add_place(a, (uint32_t)(o - a->codes), new_start, gen);
}

/* Rebuild `live` from the open placements (after a compaction or snapshot). */
static int rebuild_live(vmp_analysis *a)
{
    size_t i;
    a->n_live = 0;
    for (i = 0; i < a->n_codes; i++) {
        const code_obj *o = &a->codes[i];
        if (!o->alive || o->size == 0)
            continue;
        if (vmp_grow__((void **)&a->live, &a->cap_live, a->n_live + 1, sizeof *a->live))
            return -1;
        set_span(a, &a->live[a->n_live], (uint32_t)i, o->start, o->place);
        a->n_live++;
    }
    if (a->n_live > 1)
        qsort(a->live, a->n_live, sizeof *a->live, cmp_span);
    return 0;
}

static vmp_status take_free(vmp_analysis *a, uint64_t id, uint64_t gen)
{
    code_obj *o = find_code(a, id);
    note_change(a, gen);
    if (o && o->alive) {
        live_remove(a, (uint32_t)(o - a->codes));
        if (do_free(a, o, gen))
            return VMP_ERR_NOMEM;
    }
    return VMP_OK;
}

static vmp_status take_move(vmp_analysis *a, uint64_t id, uint64_t start, uint64_t gen)
{
    code_obj *o = find_code(a, id);
    note_change(a, gen);
    if (o && o->alive) {
        live_remove(a, (uint32_t)(o - a->codes));
        if (do_move(a, o, start, gen) || live_insert(a, (uint32_t)(o - a->codes)))
            return VMP_ERR_NOMEM;
    }
    return VMP_OK;
}

static vmp_status take_compaction(vmp_analysis *a, const vmp_rec_code_compaction *c)
{
    size_t i;
    note_change(a, c->generation);
    for (i = 0; i < c->n_frees; i++)
        if (do_free(a, find_code(a, c->frees[i]), c->generation))
            return VMP_ERR_NOMEM;
    for (i = 0; i < c->n_moves; i++)
        if (do_move(a, find_code(a, c->moves[2 * i]), c->moves[2 * i + 1], c->generation))
            return VMP_ERR_NOMEM;
    return rebuild_live(a) ? VMP_ERR_NOMEM : VMP_OK;
}

static vmp_status take_snapshot(vmp_analysis *a, const vmp_rec_code_snapshot *s)
{
    vmp_hmap listed = {NULL, 0, 0};
    size_t i;
    vmp_status st = VMP_OK;
    note_change(a, s->generation);
    for (i = 0; i < s->n; i++) {
        code_obj *o = find_code(a, s->entries[2 * i]);
        if (vmp_hmap__put(&listed, s->entries[2 * i], 0, 1)) {
            st = VMP_ERR_NOMEM;
            goto out;
        }
        if (o && o->alive && o->start != s->entries[2 * i + 1] &&
            do_move(a, o, s->entries[2 * i + 1], s->generation)) {
            st = VMP_ERR_NOMEM;
            goto out;
        }
    }
    for (i = 0; i < a->n_codes; i++) {
        code_obj *o = &a->codes[i];
        if (o->alive && o->zone == s->zone && !vmp_hmap__get(&listed, o->id, 0) &&
            do_free(a, o, s->generation)) {
            st = VMP_ERR_NOMEM;
            goto out;
        }
    }
    if (rebuild_live(a))
        st = VMP_ERR_NOMEM;
out:
    vmp_hmap__free(&listed);
    return st;
}

/* Add to g the placement of object `obj` described by r when it is alive at
 * `gen`, that is when it began at or before `gen` and ends after it. */
static int replay_keep(
    vmp_analysis *a, gen_index *g, uint32_t obj, const replay_obj *r, uint64_t gen_to, uint64_t gen)
{
    if (!(r->gen_from <= gen && gen < gen_to) || a->codes[obj].size == 0)
        return 0;
    if (vmp_grow__((void **)&g->s, &g->cap, g->n + 1, sizeof *g->s))
        return -1;
    set_span(a, &g->s[g->n++], obj, r->start, r->place);
    return 0;
}

/* Fill g (unsorted) with the placements alive at `gen`, replaying the whole
 * code history.  Returns 0, or -1 when out of memory. */
static int replay_history(vmp_analysis *a, gen_index *g, uint64_t gen)
{
    const uint8_t *p = a->hist.b, *end = a->hist.b + a->hist.n;
    uint64_t cur_gen = 0, start = 0, v;
    uint32_t obj = 0, place = 0;
    size_t i;
    if (vmp_grow__((void **)&a->replay, &a->cap_replay, a->n_codes, sizeof *a->replay))
        return -1;
    memset(a->replay, 0, a->n_codes * sizeof *a->replay);
    while (p < end) {
        replay_obj *r;
        p = get_varint(p, &v);
        if ((v & 3) == HIST_GEN) {
            p = get_varint(p, &v);
            cur_gen += unzigzag(v);
            continue;
        }
        obj = (uint32_t)((uint64_t)obj + unzigzag(v >> 2));
        r = &a->replay[obj];
        if (r->open && replay_keep(a, g, obj, r, cur_gen, gen))
            return -1;
        r->open = 0;
        if ((v & 3) == HIST_PLACE) {
            p = get_varint(p, &v);
            start += unzigzag(v);
            r->start = start;
            r->gen_from = cur_gen;
            r->place = place++;
            r->open = 1;
        }
    }
    for (i = 0; i < a->n_codes; i++)
        if (a->replay[i].open && replay_keep(a, g, (uint32_t)i, &a->replay[i], GEN_OPEN, gen))
            return -1;
    return 0;
}

/* The sorted spans alive at generation `gen`; NULL with *n_out SIZE_MAX
 * when out of memory. */
static const span *index_at(vmp_analysis *a, uint64_t gen, size_t *n_out)
{
    size_t i;
    gen_index *g;
    if (gen >= a->cur_gen) {
        *n_out = a->n_live;
        return a->live;
    }
    for (i = 0; i < N_OLD_CACHES; i++)
        if (a->old[i].valid && a->old[i].gen == gen) {
            *n_out = a->old[i].n;
            return a->old[i].s;
        }
    g = &a->old[a->old_next];
    a->old_next = (a->old_next + 1) % N_OLD_CACHES;
    g->valid = 0;
    g->n = 0;
    if (replay_history(a, g, gen)) {
        *n_out = SIZE_MAX;
        return NULL;
    }
    if (g->n > 1)
        qsort(g->s, g->n, sizeof *g->s, cmp_span);
    g->gen = gen;
    g->valid = 1;
    a->stats.index_builds++;
    *n_out = g->n;
    return g->s;
}

/* ---- module symbols --------------------------------------------------------------- */

static vmp_status take_module(vmp_analysis *a, const vmp_rec_module *m)
{
    module_rec *d;
    if (vmp_grow__((void **)&a->mods, &a->cap_mods, a->n_mods + 1, sizeof *a->mods))
        return VMP_ERR_NOMEM;
    if (!vmp_hmap__get(&a->mod_by_id, m->id, 0) &&
        vmp_hmap__put(&a->mod_by_id, m->id, 0, (uint32_t)a->n_mods + 1))
        return VMP_ERR_NOMEM;
    d = &a->mods[a->n_mods++];
    d->id = m->id;
    d->bias = m->bias;
    d->start = m->start;
    d->end = m->end;
    if (m->path.len) {
        uint32_t sid = intern_n(a, m->path.s, m->path.len);
        if (!sid || vmp_hmap__put(&a->module_names, m->id, 0, sid))
            return VMP_ERR_NOMEM;
    }
    forget_resolved_in(a, m->start, m->end); /* pcs resolved as unknown */
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

static vmp_status take_symbols(vmp_analysis *a, const vmp_rec_module_symbols *ms)
{
    const module_rec *m = find_module(a, ms->module);
    uint64_t bias = m ? m->bias : 0;
    int64_t mod = sym_mod_index(a, ms->module);
    size_t i;
    /* seq and up are 32-bit */
    uint64_t max = a->max_symbols < UINT32_MAX - 1 ? a->max_symbols : UINT32_MAX - 1;
    if (ms->n_symbols > max || a->n_syms > max - ms->n_symbols) {
        hit_limit(a, "symbols", max, "module symbols");
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
        s->raw_sid = intern_n(a, ms->symbols[i].name.s, ms->symbols[i].name.len);
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
        forget_resolved_in(a, lo, hi);
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
    /* up: the nearest earlier symbol that ends past this one's start.  The
     * chain from the last symbol starting at or before a pc passes through
     * every symbol covering that pc (each covers the start of every later
     * symbol up to the pc).  Found by walking the previous symbols' chains:
     * the symbols a chain skips end at or before this one's start. */
    for (i = 0; i < a->n_syms; i++) {
        sym *s = &a->syms[i];
        uint32_t j = (uint32_t)i; /* candidate + 1 */
        while (j && a->syms[j - 1].end <= s->addr)
            j = a->syms[j - 1].up;
        s->up = j;
    }
    a->syms_sorted = 1;
    return 0;
}

/* The symbol of addr (spec R-RES-6), or NULL; the symbols must be sorted. */
static const sym *find_sym(const vmp_analysis *a, uint64_t addr)
{
    size_t lo = vmp_upper_bound(a->syms, a->n_syms, sizeof *a->syms, offsetof(sym, addr), addr);
    if (lo == 0)
        return NULL;
    /* spec R-RES-6: the smallest symbol covering addr; of equal sizes the
     * one starting last, then the first in the file */
    {
        const sym *best = NULL;
        size_t k = lo, steps = 0;
        while (k && steps++ < SYM_CHAIN_MAX) {
            const sym *s = &a->syms[k - 1];
            if (addr < s->end) {
                uint64_t sz = s->end - s->addr, bsz = best ? best->end - best->addr : 0;
                if (!best || sz < bsz ||
                    (sz == bsz &&
                     (s->addr > best->addr || (s->addr == best->addr && s->seq < best->seq))))
                    best = s;
            }
            k = s->up;
        }
        return best;
    }
}

/* ---- resolution ---------------------------------------------------------------------- */

/* The name "function#ID" of a function shown before (or without) its
 * FUNCTION record (spec R-RES-9); its FUNCTION record, when it comes, drops
 * the stacks resolved with this name (take_function()).  0 on no memory. */
static uint32_t unnamed_function_sid(vmp_analysis *a, uint64_t function)
{
    char buf[64];
    snprintf(buf, sizeof buf, "function#%" PRIu64, function);
    if (vmp_hmap__put(&a->fn_shown_unnamed, function, 0, 1))
        return 0;
    return intern(a, buf);
}

static uint32_t code_afunc(vmp_analysis *a, code_obj *o)
{
    const fdef *f;
    uint32_t name_sid;
    uint32_t id;
    char buf[64];
    if (o->afunc)
        return o->afunc;
    f = find_fn(a, o->function);
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
        name_sid = intern(a, buf);
    }
    id = intern_func(a, name_sid, code_kind_name(a, o->kind), VMP_CLASS_GENERATED, o->kind,
                     o->function, 0, f ? f->bytecode_size : 0);
    if (id && !a->funcs[id].zone_id)
        a->funcs[id].zone_id = o->zone;
    if (f || !o->function)
        o->afunc = id; /* cache only once the answer cannot change */
    return id;
}

static uint32_t unknown_func(vmp_analysis *a)
{
    if (!a->unknown_func) {
        uint32_t sid = intern(a, "[unknown]");
        a->unknown_func =
            sid ? intern_func(a, sid, "unknown", VMP_CLASS_UNKNOWN, VMP_CODE_KIND_NONE, 0, 0, 0)
                : 0;
    }
    return a->unknown_func;
}

/* The module whose mapping [start, end) holds addr, or NULL. */
static const module_rec *module_at(const vmp_analysis *a, uint64_t addr)
{
    size_t i;
    for (i = 0; i < a->n_mods; i++)
        if (a->mods[i].start <= addr && addr < a->mods[i].end)
            return &a->mods[i];
    return NULL;
}

/* The function "<module basename>+0x<addr - bias>" (kind "C") of an address
 * inside module m that no symbol covers: the offset is the link-time address
 * that addr2line and objdump take. */
static uint32_t module_offset_func(vmp_analysis *a, const module_rec *m, uint64_t addr)
{
    char buf[512];
    uint32_t path = vmp_hmap__get(&a->module_names, m->id, 0), sid, id;
    const char *base = path ? str_of(a, path) : NULL;
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
    sid = intern_n(a, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
    id = sid ? intern_func(a, sid, "C", VMP_CLASS_NATIVE, VMP_CODE_KIND_NONE, 0, m->id, 0) : 0;
    if (id && !a->funcs[id].address)
        a->funcs[id].address = addr;
    return id;
}

/* The placement at generation gen that holds addr: its span, or NULL (none,
 * or *failed set to 1 when the generation's index could not be built). */
static const span *span_at(vmp_analysis *a, uint64_t addr, uint64_t gen, int *failed)
{
    size_t n, i;
    const span *s = index_at(a, gen, &n);
    *failed = n == SIZE_MAX;
    if (!s || n == 0 || n == SIZE_MAX)
        return NULL;
    i = span_lower(s, n, addr);
    if (i == 0 || addr >= s[i - 1].end)
        return NULL;
    a->codes[s[i - 1].obj].hit_epoch = a->epoch;
    return &s[i - 1];
}

static uint32_t resolve_addr(vmp_analysis *a, uint64_t addr, uint64_t gen)
{
    int failed;
    const span *sp = span_at(a, addr, gen, &failed);
    touch(a, addr);
    a->hit_obj = 0;
    if (failed)
        return 0;
    if (sp) {
        code_obj *o = &a->codes[sp->obj];
        a->hit_obj = (size_t)sp->obj + 1;
        a->hit_off = addr - sp->start;
        uint32_t fn = code_afunc(a, o);
        uint64_t off = addr - sp->start;
        size_t lo = vmp_upper_bound(o->pc_map, o->n_map, 2 * sizeof *o->pc_map, 0, off);
        uint64_t first, last;
        if (!fn)
            return 0;
        if (lo == 0)
            return intern_frame(a, fn, 0, 0, 0);
        first = o->pc_map[2 * (lo - 1) + 1];
        if (lo < o->n_map) {
            uint64_t next = o->pc_map[2 * lo + 1];
            last = next > first ? next - 1 : first;
        } else {
            /* the code object's own function: several functions may
             * share a name (and so an afunction) */
            const fdef *d = find_fn(a, o->function);
            uint64_t bcs = d ? d->bytecode_size : 0;
            last = bcs && bcs - 1 >= first ? bcs - 1 : first;
        }
        if (first > UINT32_MAX)
            first = UINT32_MAX;
        if (last > UINT32_MAX)
            last = UINT32_MAX;
        return intern_frame(a, fn, 1, (uint32_t)first, (uint32_t)last);
    }
    if (!a->syms_sorted && sort_syms(a))
        return 0;
    {
        sym *sy = (sym *)find_sym(a, addr);
        if (sy) {
            if (!sy->afunc) {
                char buf[1024];
                const char *raw = str_of(a, sy->raw_sid);
                uint64_t mod_id = a->sym_mods[sy->mod & ~SYM_SIZE0];
                if (!*raw) {
                    /* a function known only by its start (spec R-RES-2) */
                    const module_rec *m = find_module(a, mod_id);
                    module_rec anon = {mod_id, 0, 0, 0};
                    sy->afunc = module_offset_func(a, m ? m : &anon, sy->addr);
                } else {
                    size_t dn = vmp_demangle(buf, sizeof buf, raw);
                    uint32_t sid = dn && dn < sizeof buf ? intern_n(a, buf, dn) : sy->raw_sid;
                    sy->afunc = sid ? intern_func(a, sid, "C", VMP_CLASS_NATIVE, VMP_CODE_KIND_NONE,
                                                  0, mod_id, 0)
                                    : 0;
                }
                if (!sy->afunc)
                    return 0;
                if (*raw && !a->funcs[sy->afunc].raw_name)
                    a->funcs[sy->afunc].raw_name = raw;
            }
            return intern_frame(a, sy->afunc, 0, 0, 0);
        }
    }
    {
        const module_rec *m = module_at(a, addr);
        if (m) {
            uint32_t fn = module_offset_func(a, m, addr);
            return fn ? intern_frame(a, fn, 0, 0, 0) : 0;
        }
    }
    return intern_frame(a, unknown_func(a), 0, 0, 0);
}

vmp_status vmp_analysis_resolve_pc(
    vmp_analysis *a, uint32_t *frame_out, uint64_t pc, uint64_t generation, int return_address)
{
    uint32_t f;
    if (!a || !frame_out)
        return VMP_ERR_INVALID_ARG;
    f = resolve_addr(a, return_address && pc ? pc - 1 : pc, generation);
    if (!f)
        return VMP_ERR_NOMEM;
    *frame_out = f;
    return VMP_OK;
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
        if (!*memo)
            *memo = intern_func(a, d->name_sid, kinds[slot], cls, code_kind, function, 0,
                                d->bytecode_size);
        if (!*memo || count_member(a, d))
            return 0;
        return *memo;
    } else {
        uint32_t sid = unnamed_function_sid(a, function);
        return sid ? intern_func(a, sid, kinds[slot], cls, code_kind, function, 0, 0) : 0;
    }
}

static uint32_t clamp32(uint64_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static uint32_t symbolic_frame(vmp_analysis *a, const snode *n)
{
    uint32_t fn = function_afunc(a, n->value, SLOT_SYMBOLIC);
    uint32_t bc = clamp32(n->bcpc);
    int has = n->has_bcpc && n->bcpc < UINT32_MAX;
    return intern_frame(a, fn, has, bc, bc);
}

static uint32_t inlined_frame(vmp_analysis *a, uint64_t function, uint64_t bcpc)
{
    uint32_t fn = function_afunc(a, function, SLOT_INLINED);
    int has = bcpc < UINT32_MAX;
    return intern_frame(a, fn, has, has ? (uint32_t)bcpc : 0, has ? (uint32_t)bcpc : 0);
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

int vmp_analysis_lines(const vmp_analysis *a,
                       uint64_t function_id,
                       uint32_t first,
                       uint32_t last,
                       uint64_t *lo_out,
                       uint64_t *hi_out)
{
    const fdef *d = a ? find_fn(a, function_id) : NULL;
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

/* An interpreted frame of `function` at bytecode pc `bcpc` (known when
 * `has`): the range is the line-table run holding bcpc (from the first bcpc
 * of that line to the bcpc before the next line, or bytecode_size - 1 after
 * the last line); "b->b" without a line table or before its first entry. */
static uint32_t interpreted_frame(vmp_analysis *a, uint64_t function, int has, uint64_t bcpc)
{
    uint32_t fn = function_afunc(a, function, SLOT_INTERPRETED);
    const fdef *d = find_fn(a, function);
    uint32_t b = clamp32(bcpc), first = b, last = b;
    if (!has || bcpc >= UINT32_MAX)
        return intern_frame(a, fn, 0, 0, 0);
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
    return intern_frame(a, fn, 1, first, last);
}

/* The inlining record of code object `o` covering offset `off`, or NULL. */
static const uint64_t *inline_at(const code_obj *o, uint64_t off)
{
    size_t lo = 0, hi = o->n_inl;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (o->inl[o->inl_at[mid]] <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? o->inl + o->inl_at[lo - 1] : NULL;
}

/* Push the frames of machine address `addr` (already adjusted for return
 * addresses) at `gen` onto stack `base`: its code object or symbol, then,
 * with VMP_ANALYSIS_INLINES, the functions inlined at that address, outer
 * to inner.  Returns the new innermost node, 0 on no memory. */
static uint32_t push_addr(vmp_analysis *a, uint32_t base, uint64_t addr, uint64_t gen)
{
    uint32_t fr = resolve_addr(a, addr, gen);
    const uint64_t *rec;
    uint64_t depth, k;
    if (!fr)
        return 0;
    base = intern_stack(a, base, fr);
    if (!base || !a->hit_obj || !(a->opts.flags & VMP_ANALYSIS_INLINES))
        return base;
    rec = inline_at(&a->codes[a->hit_obj - 1], a->hit_off);
    if (!rec)
        return base;
    depth = rec[1];
    /* the outermost pair is the compiled function itself: already pushed */
    for (k = depth > 1 ? depth - 1 : 0; k > 0 && base; k--) {
        fr = inlined_frame(a, rec[2 + 2 * (k - 1)], rec[3 + 2 * (k - 1)]);
        base = fr ? intern_stack(a, base, fr) : 0;
    }
    return base;
}

/* Whether function ids x and y name the same function: equal ids, or two
 * definitions with the same full name (one afunction, see vmp_analyze.h). */
static int same_function(const vmp_analysis *a, uint64_t x, uint64_t y)
{
    const fdef *dx, *dy;
    if (x == y)
        return 1;
    dx = find_fn(a, x);
    dy = find_fn(a, y);
    return dx && dy && dx->name_sid == dy->name_sid;
}

/* The innermost frame of a sample that has both a machine pc and a symbolic
 * innermost node `n` (rules in vmp_analyze.h, "A sample's pc and its
 * symbolic innermost frame").  0 on no memory. */
static uint32_t combined_leaf(vmp_analysis *a, const snode *n, uint64_t pc, uint64_t gen)
{
    uint32_t fr = resolve_addr(a, pc, gen);
    const code_obj *o;
    const uint64_t *rec;
    if (!fr)
        return 0;
    if (!a->hit_obj)
        return symbolic_frame(a, n);
    o = &a->codes[a->hit_obj - 1];
    rec = inline_at(o, a->hit_off);
    if (rec && rec[1] >= 2 && same_function(a, rec[2], n->value))
        return inlined_frame(a, n->value, rec[3]);
    if (o->function && same_function(a, o->function, n->value))
        return fr; /* the code object's kind, the pc map's range */
    if (strcmp(code_kind_name(a, o->kind), "interpreter") == 0)
        return interpreted_frame(a, n->value, n->has_bcpc, n->bcpc);
    return symbolic_frame(a, n);
}

/* Index + 1 of node `id`, 0 when undefined. */
static uint32_t node_index(const vmp_analysis *a, uint64_t id)
{
    if (id < a->cap_dense)
        return a->node_dense[id];
    return vmp_hmap__get(&a->node_by_id, id, 0);
}

static vmp_status take_node(vmp_analysis *a, const vmp_rec_stack_node *r)
{
    snode *n;
    uint32_t idx;
    if (r->id == 0 || node_index(a, r->id))
        return VMP_OK; /* R-ID-1 broken; keep the first definition */
    if (a->n_nodes >= a->max_nodes) {
        hit_limit(a, "stack-nodes", a->max_nodes, "stack nodes");
        return VMP_ERR_LIMIT;
    }
    if (a->n_nodes >= UINT32_MAX - 1 ||
        vmp_grow__((void **)&a->nodes, &a->cap_nodes, a->n_nodes + 1, sizeof *a->nodes))
        return VMP_ERR_NOMEM;
    idx = (uint32_t)a->n_nodes;
    if (r->id >= a->cap_dense && r->id < 2 * (uint64_t)a->n_nodes + 4096) {
        size_t old = a->cap_dense, want = (size_t)r->id + 1;
        if (vmp_grow__((void **)&a->node_dense, &a->cap_dense, want, sizeof *a->node_dense))
            return VMP_ERR_NOMEM;
        memset(a->node_dense + old, 0, (a->cap_dense - old) * sizeof *a->node_dense);
    }
    if (r->id < a->cap_dense)
        a->node_dense[r->id] = idx + 1;
    else if (vmp_hmap__put(&a->node_by_id, r->id, 0, idx + 1))
        return VMP_ERR_NOMEM;
    {
        uint32_t pi = r->parent ? node_index(a, r->parent) : 0;
        uint32_t pd = pi ? a->nodes[pi - 1].depth : 0;
        n = &a->nodes[a->n_nodes++];
        memset(n, 0, sizeof *n);
        n->depth = pd < UINT32_MAX ? pd + 1 : pd;
    }
    n->parent = r->parent;
    n->is_function = r->is_function;
    n->value = r->is_function ? r->function : r->pc;
    n->has_bcpc = r->has_bcpc;
    n->bcpc = r->bcpc;
    n->memo_epoch[0] = n->memo_epoch[1] = a->epoch - 1; /* no memo yet */
    a->stats.memory_bytes += sizeof *n + 4;
    return VMP_OK;
}

/* The cached resolution of node index `ni` as innermost (leaf) or caller at
 * `gen`, 0 when unknown.  The memo holds the latest generation the node was
 * resolved at (where samples keep coming); older generations, needed only by
 * samples written after a change, live in the (node, generation) hash. */
static uint32_t cache_get(vmp_analysis *a, uint32_t ni, uint64_t id, int leaf, uint64_t gen)
{
    const snode *n = &a->nodes[ni];
    if (n->memo_epoch[leaf] == a->epoch) {
        if (n->memo_gen[leaf] == gen)
            return n->memo_stack[leaf];
        if (gen > n->memo_gen[leaf])
            return 0;
    }
    return a->scache.n ? vmp_hmap__get(&a->scache, id | (leaf ? LEAF_BIT : 0), gen) : 0;
}

static int cache_put(
    vmp_analysis *a, uint32_t ni, uint64_t id, int leaf, uint64_t gen, uint32_t stack)
{
    snode *n = &a->nodes[ni];
    if (n->memo_epoch[leaf] == a->epoch && gen < n->memo_gen[leaf])
        return vmp_hmap__put(&a->scache, id | (leaf ? LEAF_BIT : 0), gen, stack);
    n->memo_epoch[leaf] = a->epoch;
    n->memo_gen[leaf] = gen;
    n->memo_stack[leaf] = stack;
    return 0;
}

/* The stack `base` with node `n` pushed as its innermost frame; `ret`: the
 * node is a caller (a machine frame is then a return address).  0 on no
 * memory. */
static uint32_t push_node(vmp_analysis *a, uint32_t base, const snode *n, int ret, uint64_t gen)
{
    if (n->is_function) {
        uint32_t fr = symbolic_frame(a, n);
        return fr ? intern_stack(a, base, fr) : 0;
    }
    return push_addr(a, base, ret && n->value ? n->value - 1 : n->value, gen);
}

/* The frame "[truncated N frames]" (kind "truncated") that stands for the
 * outermost N frames of a stack deeper than the limit. */
static uint32_t truncated_frame(vmp_analysis *a, uint64_t n)
{
    char buf[64];
    uint32_t sid, fn;
    snprintf(buf, sizeof buf, "[truncated %llu frames]", (unsigned long long)n);
    sid = intern(a, buf);
    fn = sid ? intern_func(a, sid, "truncated", VMP_CLASS_UNKNOWN, VMP_CODE_KIND_NONE, 0, 0, 0) : 0;
    return fn ? intern_frame(a, fn, 0, 0, 0) : 0;
}

/* resolve_stack() for a node deeper than the limit: its innermost
 * max_depth - 1 nodes under one "[truncated N frames]" root frame.  Only the
 * node itself is cached: its callers' stacks are other windows. */
static uint32_t resolve_deep(
    vmp_analysis *a, uint32_t leaf_index, uint64_t node, uint64_t gen, int as_leaf)
{
    size_t keep = a->max_depth - 1, n = 0;
    uint64_t cur = node, dropped;
    uint32_t base = 0;
    while (cur && n < keep) {
        uint32_t ni = node_index(a, cur);
        if (!ni)
            break;
        if (vmp_grow__((void **)&a->chain, &a->cap_chain, n + 1, sizeof *a->chain))
            return 0;
        a->chain[n++] = ni - 1;
        cur = a->nodes[ni - 1].parent;
    }
    dropped = a->nodes[leaf_index].depth > n ? a->nodes[leaf_index].depth - n : 1;
    if (cur) {
        uint32_t fr = truncated_frame(a, dropped);
        base = fr ? intern_stack(a, 0, fr) : 0;
        if (!base)
            return 0;
    }
    while (n > 0) {
        n--;
        base = push_node(a, base, &a->nodes[a->chain[n]], n > 0 || !as_leaf, gen);
        if (!base)
            return 0;
    }
    if (cache_put(a, leaf_index, node, as_leaf ? 1 : 0, gen, base))
        return 0;
    a->stats.truncated_stacks++;
    return base;
}

/* Resolve the stack whose innermost node is `node` at `gen`, that node as
 * the sample's innermost frame (`as_leaf`) or as a caller (a machine frame
 * then is a return address); 0 on no memory or an undefined node. */
static uint32_t resolve_stack(vmp_analysis *a, uint64_t node, uint64_t gen, int as_leaf)
{
    uint32_t base = 0, ni = node_index(a, node);
    size_t depth = 0, guard = 0;
    uint64_t cur = node;
    int leaf = as_leaf ? 1 : 0;
    if (!ni)
        return 0;
    base = cache_get(a, ni - 1, node, leaf, gen);
    if (base) {
        a->stats.cache_hits++;
        return base;
    }
    a->stats.cache_misses++;
    if (a->nodes[ni - 1].depth > a->max_depth)
        return resolve_deep(a, ni - 1, node, gen, as_leaf);
    while (cur) {
        uint32_t hit;
        ni = node_index(a, cur);
        if (!ni || ++guard > a->n_nodes)
            break; /* undefined node or a cycle: the stack ends here */
        hit = cache_get(a, ni - 1, cur, leaf, gen);
        if (hit) {
            base = hit;
            break;
        }
        if (vmp_grow__((void **)&a->chain, &a->cap_chain, depth + 1, sizeof *a->chain))
            return 0;
        a->chain[depth++] = ni - 1;
        cur = a->nodes[ni - 1].parent;
        leaf = 0;
    }
    while (depth > 0) {
        const snode *n = &a->nodes[a->chain[--depth]];
        uint64_t id_key;
        base = push_node(a, base, n, depth > 0 || !as_leaf, gen);
        if (!base)
            return 0;
        /* the node's id: found again through the chain's parent links */
        id_key = depth == 0 ? node : a->nodes[a->chain[depth - 1]].parent;
        if (cache_put(a, a->chain[depth], id_key, depth == 0 && as_leaf, gen, base))
            return 0;
    }
    return base;
}

vmp_status vmp_analysis_resolve_sample(vmp_analysis *a,
                                       const vmp_rec_sample *s,
                                       int failed,
                                       vmp_asample *out)
{
    uint64_t gen;
    uint32_t ni;
    vmp_rec_sample leaf_pc;
    if (!a || !s || !out)
        return VMP_ERR_INVALID_ARG;
    /* spec R-BLK-3: a block's sample without a pc of its own ran at its
     * innermost node's address when that is a machine frame */
    if (s->pc_is_leaf && !s->has_pc && !failed && s->stack && (ni = node_index(a, s->stack)) != 0 &&
        !a->nodes[ni - 1].is_function) {
        leaf_pc = *s;
        leaf_pc.pc = a->nodes[ni - 1].value;
        leaf_pc.has_pc = 1;
        s = &leaf_pc;
    }
    gen =
        (a->opts.flags & VMP_ANALYSIS_FIXED_GENERATION) ? a->opts.fixed_generation : s->generation;
    memset(out, 0, sizeof *out);
    out->time_ns = s->time_ns;
    out->thread = s->thread;
    out->generation = s->generation;
    out->weight = s->weight; /* spec R-SMP-4: weight 0 counts 0 samples */
    out->pc = s->pc;
    out->has_pc = s->has_pc;
    out->blame = s->blame;
    out->state = s->state > UINT32_MAX ? UINT32_MAX : (uint32_t)s->state;
    out->reason = s->reason > UINT32_MAX ? UINT32_MAX : (uint32_t)s->reason;
    out->failed = failed ? 1 : 0;
    if (!a->any_sample || gen > a->max_sample_gen)
        a->max_sample_gen = gen;
    a->any_sample = 1;
    if (!failed && s->stack && (ni = node_index(a, s->stack)) != 0) {
        const snode *n = &a->nodes[ni - 1];
        if (s->has_pc && n->is_function) {
            /* the pc and the symbolic innermost frame describe one
             * activation: combine them (rules in vmp_analyze.h) */
            uint64_t parent = n->parent;
            uint32_t base = 0, fr;
            if (parent && parent != s->stack && node_index(a, parent)) {
                base = resolve_stack(a, parent, gen, 0);
                if (!base)
                    return VMP_ERR_NOMEM;
            }
            n = &a->nodes[ni - 1];
            fr = combined_leaf(a, n, s->pc, gen);
            out->stack = fr ? intern_stack(a, base, fr) : 0;
        } else {
            out->stack = resolve_stack(a, s->stack, gen, 1);
        }
        if (!out->stack)
            return VMP_ERR_NOMEM;
        out->leaf = a->stacks[out->stack].frame;
    } else if (s->has_pc) {
        uint32_t st = push_addr(a, 0, s->pc, gen);
        if (!st)
            return VMP_ERR_NOMEM;
        out->leaf = a->stacks[st].frame;
        /* spec R-VIEW-1: a failed sample's pc that resolves to nothing adds
         * no frame to the failure (a merge drops such a pc: alike) */
        if (failed && a->funcs[a->frames[out->leaf].function].code_class == VMP_CLASS_UNKNOWN)
            out->leaf = 0;
        if (!failed)
            out->stack = st;
    }
    if (s->has_pc) {
        int no_index;
        const span *sp = span_at(a, s->pc, gen, &no_index);
        if (no_index)
            return VMP_ERR_NOMEM;
        out->code = sp ? a->codes[sp->obj].id : 0;
    }
    return VMP_OK;
}

/* ---- feeding ---------------------------------------------------------------------------- */

static vmp_status feed_record(vmp_analysis *a,
                              const vmp_record *rec,
                              vmp_asample *sample_out,
                              int *is_sample_out);

vmp_status vmp_analysis_feed(vmp_analysis *a,
                             const vmp_record *rec,
                             vmp_asample *sample_out,
                             int *is_sample_out)
{
    vmp_status st;
    if (is_sample_out)
        *is_sample_out = 0;
    if (!a || !rec)
        return VMP_ERR_INVALID_ARG;
    if (a->limit_msg[0])
        return VMP_ERR_LIMIT; /* a limit stops the analysis for good */
    st = feed_record(a, rec, sample_out, is_sample_out);
    return a->limit_msg[0] ? VMP_ERR_LIMIT : st;
}

static vmp_status feed_record(vmp_analysis *a,
                              const vmp_record *rec,
                              vmp_asample *sample_out,
                              int *is_sample_out)
{
    switch (rec->type) {
    case VMP_REC_HEADER:
        return take_header(a, &rec->u.header);
    case VMP_REC_END:
        a->end = rec->u.end;
        a->have_end = 1;
        return VMP_OK;
    case VMP_REC_MODULE:
        return take_module(a, &rec->u.module);
    case VMP_REC_MODULE_SYMBOLS:
        return take_symbols(a, &rec->u.module_symbols);
    case VMP_REC_THREAD: {
        const vmp_rec_thread *t = &rec->u.thread;
        if (t->name.len) {
            /* (id, 0): the first non-empty name; (id, 1): the latest */
            uint32_t sid = intern_n(a, t->name.s, t->name.len);
            if (!sid ||
                (!vmp_hmap__get(&a->thread_names, t->id, 0) &&
                 vmp_hmap__put(&a->thread_names, t->id, 0, sid)) ||
                vmp_hmap__put(&a->thread_names, t->id, 1, sid))
                return VMP_ERR_NOMEM;
        }
        return VMP_OK;
    }
    case VMP_REC_CODE_ZONE:
        if (rec->u.code_zone.name.len) {
            uint32_t sid = intern_n(a, rec->u.code_zone.name.s, rec->u.code_zone.name.len);
            if (!sid || vmp_hmap__put(&a->zone_names, rec->u.code_zone.id, 0, sid))
                return VMP_ERR_NOMEM;
        }
        return VMP_OK;
    case VMP_REC_FUNCTION:
        return take_function(a, &rec->u.function);
    case VMP_REC_CODE_OBJECT:
        return take_code(a, &rec->u.code_object);
    case VMP_REC_CODE_MAP:
        return take_code_map(a, &rec->u.code_map);
    case VMP_REC_CODE_SNAPSHOT:
        return take_snapshot(a, &rec->u.code_snapshot);
    case VMP_REC_CODE_COMPACTION:
        return take_compaction(a, &rec->u.code_compaction);
    case VMP_REC_CODE_FREE:
        return take_free(a, rec->u.code_free.id, rec->u.code_free.generation);
    case VMP_REC_CODE_MOVE:
        return take_move(a, rec->u.code_move.id, rec->u.code_move.new_start,
                         rec->u.code_move.generation);
    case VMP_REC_STACK_NODE:
        return take_node(a, &rec->u.stack_node);
    case VMP_REC_SAMPLE:
    case VMP_REC_FAILED_SAMPLE:
        if (!sample_out)
            return VMP_OK;
        if (is_sample_out)
            *is_sample_out = 1;
        return vmp_analysis_resolve_sample(a, &rec->u.sample, rec->type == VMP_REC_FAILED_SAMPLE,
                                           sample_out);
    default:
        return VMP_OK;
    }
}

vmp_status vmp_analysis_next(vmp_analysis *a, vmp_reader *r, vmp_asample *out)
{
    vmp_record rec;
    vmp_status st;
    if (!a || !r || !out)
        return VMP_ERR_INVALID_ARG;
    while ((st = vmp_reader_next(r, &rec)) == VMP_OK) {
        int is_sample = 0;
        st = vmp_analysis_feed(a, &rec, out, &is_sample);
        if (st == VMP_ERR_LIMIT) /* the file and offset, for the caller's message */
            return vmp_reader_fail(r, st, vmp_analysis_errmsg(a));
        if (st < 0)
            return st;
        if (is_sample)
            return VMP_OK;
    }
    return st;
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
                sid = intern(m, buf);
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
    out->memory_bytes += (a->str_map.cap + a->code_by_id.cap + a->fn_by_id.cap +
                          a->thread_names.cap + a->node_by_id.cap + a->func_key.cap +
                          a->frame_key.cap + a->stack_key.cap + a->scache.cap) *
                         sizeof(vmp_hmap_entry);
    out->memory_bytes += a->cap_last_child * sizeof *a->last_child;
}

/* ---- zones, modules, code ids ------------------------------------------------------ */

/* The string of sid, else "<prefix>#<id>" interned. */
static const char *name_or_id(vmp_analysis *a, uint32_t sid, const char *prefix, uint64_t id)
{
    char buf[64];
    if (!sid) {
        snprintf(buf, sizeof buf, "%s#%" PRIu64, prefix, id);
        sid = intern(a, buf);
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

const char *vmp_analysis_unit_name(vmp_analysis *a, uint64_t code_id)
{
    code_obj *o = a && code_id ? find_code(a, code_id) : NULL;
    uint32_t fn;
    if (!o)
        return NULL;
    if (o->name_sid)
        return str_of(a, o->name_sid);
    fn = code_afunc(a, o);
    return fn ? vmp_analysis_function(a, fn)->name : NULL;
}

uint32_t vmp_analysis_code_function(vmp_analysis *a, uint64_t code_id)
{
    code_obj *o;
    if (!a || !code_id)
        return 0;
    o = find_code(a, code_id);
    return o ? code_afunc(a, o) : 0;
}
