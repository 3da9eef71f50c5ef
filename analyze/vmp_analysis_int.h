/* SPDX-License-Identifier: MIT
 *
 * vmp_analysis_int.h - the vmp_analysis object shared by the sources that
 * implement it (spec.md §5).  Internal: not installed.  (vmp_analyze_int.h
 * holds the helpers of every analyze/ source: the pair-keyed hash map, array
 * growth, error messages.)
 *
 * Files, each calling only those listed above it:
 *   vmp_analysis.c, vmp_forget.c   strings, create/free, header, interned
 *                                  results and their tables; forgetting
 *                                  resolved stacks
 *   vmp_functions.c, vmp_code_history.c, vmp_symbols.c
 *                                  one kind of metadata each (FUNCTION; code
 *                                  objects and their placements; modules and
 *                                  symbols), none calling another
 *   vmp_resolve.c                  resolution of pcs and stacks, and feeding:
 *                                  it hands each record to its file
 *   vmp_vm_view.c                  the VM's view of resolved stacks (spec
 *                                  R-VIEW-7), on the interned tables
 *
 * Invariants across the files:
 *   - Ids of strings (sids), afunctions, aframes and astacks start at 1 and
 *     never change; 0 means none, or no memory.  Interned strings never move.
 *   - A record that changes what an address or function resolves to calls
 *     vmp_forget__all() or vmp_forget__range() as it is taken (the list is
 *     at the top of vmp_forget.c), and every address resolved is
 *     vmp_forget__touch()ed first.
 *   - `epoch` changes whenever all resolved stacks are forgotten: a stack
 *     node's memo and a code object's `hit_epoch` of another epoch are
 *     stale.  Forgetting an address range keeps the epoch and stamps the
 *     range's blocks (`forgets`, `forgot`): a memo with a frame there is
 *     stale.
 *     vmp_code_history__span_at() sets the `hit_epoch` of the code object it
 *     finds.
 *   - resolve_addr() (vmp_resolve.c) sets `hit_obj` and `hit_off`, which its
 *     callers read right after it.
 *   - `cur_gen` is the latest change's generation, `max_sample_gen` the
 *     greatest generation of a sample resolved (when `any_sample`).
 *   - A limit reached (vmp_analysis__hit_limit(), `limit_msg`) stops the
 *     analysis for good (vmp_analysis_feed()).
 */
#ifndef VMP_ANALYSIS_INT_H
#define VMP_ANALYSIS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "vmp_analyze.h"
#include "vmp_analyze_int.h"

#define N_OLD_CACHES 4
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
    uint32_t hit_epoch; /* the epoch a lookup last found it in (vmp_code_history__span_at()) */
    /* The inlining records, each at inl[inl_at[i]] as offset, depth, then
     * depth (function, bcpc) pairs innermost first.  Kept always: a symbolic
     * innermost frame is matched against them; machine frames are expanded
     * through them only with VMP_ANALYSIS_INLINES. */
    uint64_t *inl;
    size_t *inl_at;
    size_t n_inl;
} code_obj;

/* The code history (its encoding: vmp_code_history.c). */
typedef struct hist_log {
    uint8_t *b;
    size_t n, cap;
    uint64_t gen;   /* generation of the last HIST_GEN (0 before any) */
    uint32_t obj;   /* object of the last event */
    uint64_t start; /* start of the last HIST_PLACE */
    int unordered;  /* a HIST_GEN went back: lookups replay the whole log */
} hist_log;

/* Where a forward replay of the log stands: every event at a generation up
 * to `gen` applied to `replay` (vmp_code_history.c, index_at()). */
typedef struct hist_cursor {
    size_t pos;       /* log bytes consumed */
    uint64_t gen;     /* the generation replayed to */
    uint64_t log_gen; /* the log's generation at pos (its last HIST_GEN's) */
    uint32_t obj;     /* the delta bases at pos, as in hist_log */
    uint64_t start;
    uint32_t place;  /* placements seen */
    size_t n_zeroed; /* replay[0..n_zeroed) initialized */
    int valid;
} hist_cursor;

/* One code object's state while the log is replayed. */
typedef struct replay_obj {
    uint64_t start, gen_from;
    uint32_t place;
    int open;
} replay_obj;

/* The cursor's state just before a HIST_GEN event of the log, and `replay`
 * then (at.n_zeroed objects): a lookup at a generation before the
 * cursor's starts from the last checkpoint at or before it, not from the
 * log's start.  The log is only appended to, so a checkpoint stays true. */
typedef struct hist_checkpoint {
    hist_cursor at;
    replay_obj *replay;
} hist_checkpoint;

/* Log bytes between checkpoints: at least this, and at least a
 * checkpoint's own size (so checkpoints take no more memory than the log,
 * and a lookup at an old generation replays at most that much). */
#define CHECKPOINT_BYTES 65536u

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
    int is_class;          /* spec R-KND-4: a class, not code */
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

/* One resolved sample of the sample cache (vmp_resolve.c): the stack, leaf
 * frame and code id that a sample of node `node`, pc `pc` (`flags`: has a
 * pc, failed) at generation `gen` resolved to, in epoch `epoch` with
 * `forgets` forgettings by address. */
typedef struct sample_slot {
    uint64_t node, pc, gen, code;
    uint32_t flags; /* SLOT_USED | SLOT_HAS_PC | SLOT_FAILED */
    uint32_t epoch, forgets;
    uint32_t stack, leaf;
} sample_slot;

#define SAMPLE_SLOTS  16384u /* a power of two */
#define CONTEXT_SLOTS 65536u /* a power of two */

typedef struct snode {
    uint64_t parent, value;
    uint64_t bcpc;
    int is_function, has_bcpc;
    uint32_t depth; /* nodes from the root to this one, 1 for a root (saturates) */
    /* Memo of the last resolution, [0] as a caller frame, [1] as the
     * innermost: most samples are taken at the latest generation, so this
     * answers them without touching the (node, generation) cache. */
    uint64_t memo_gen[2];
    uint64_t memo_thru[2]; /* the memo holds for memo_gen..memo_thru: no
                              code under its frames changed in between */
    uint32_t memo_stack[2];
    uint32_t memo_epoch[2];
    uint32_t memo_stamp[2]; /* `forgets` when made or last checked */
} snode;

struct vmp_analysis {
    vmp_analysis_options opts;

    int have_header, have_end;
    vmp_rec_header hdr;
    vmp_rec_end end;
    void *hdr_mem[10];
    /* spec §5.15: the sample kind delivered (0: CPU; KIND_NONE: a name the
     * header does not declare) and every kind's records and weights so far
     * (index 0 the CPU samples, then the header's kinds and any undeclared
     * kind seen, up to MAX_KINDS) */
    uint32_t kind_sel;
    vmp_akind *kinds;
    size_t n_kinds, cap_kinds;

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
    hist_cursor cursor;   /* the state `replay` holds */
    hist_checkpoint *cps; /* in log order */
    size_t n_cps, cap_cps;
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
    /* The interval index of the modules' mappings (vmp_symbols.c,
     * module_at()): mod_order, indexes into mods sorted by start (then
     * record order); mod_max_end[j], the greatest end among mod_order[0..j]. */
    uint32_t *mod_order;
    uint64_t *mod_max_end;
    size_t cap_mod_order, cap_mod_max_end;
    vmp_hmap mod_by_id; /* (MODULE id, 0) -> index of its first record + 1 */

    vmp_hmap thread_names;
    vmp_hmap zone_names;   /* (CODE_ZONE id, 0) -> name sid */
    vmp_hmap module_names; /* (MODULE id, 0) -> path sid */

    snode *nodes;
    size_t n_nodes, cap_nodes;
    vmp_idmap node_ids; /* STACK_NODE id -> index + 1 */
    uint32_t epoch;     /* memos of another epoch are stale */

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
    /* per block (the same hash), the latest generation at which a code
     * object was placed there, moved from or to it, or freed: a stack
     * resolved at generation g whose addresses' blocks all changed at or
     * before g resolves alike at any later generation (vmp_resolve.c);
     * `changed_all` for a change too large to mark block by block */
    uint64_t changed_gen[TOUCH_BITS];
    uint64_t changed_all;
    /* forgetting by address (vmp_forget__range()): the count of such
     * forgettings, and per block the count when it was last forgotten; a
     * memo made before holds if none of its frames' blocks was */
    uint32_t forgets;
    uint32_t forgot[TOUCH_BITS];

    /* Samples resolved, direct-mapped by (node, pc, generation): a sample
     * like one before it, with nothing forgotten since, costs one lookup
     * (allocated with the first sample). */
    sample_slot *sample_slots;
    /* Samples resolved, by sample context id (spec R-BLK-5): a block's
     * sample in a context resolved before, with nothing forgotten since,
     * costs one array read (allocated with the first such sample). */
    sample_slot *context_slots;

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

/* ---- vmp_analysis.c ---- */

/* The string of sid, "" for 0. */
static inline const char *vmp_analysis__str(const vmp_analysis *a, uint32_t sid)
{
    return sid ? a->strs[sid] : "";
}

/* Intern the n bytes at s; returns the string id (>= 1) or 0 on no memory. */
uint32_t vmp_analysis__intern_n(vmp_analysis *a, const char *s, size_t n);
uint32_t vmp_analysis__intern(vmp_analysis *a, const char *s);

/* Record that limit `what` (`n` of `unit`) stopped the analysis. */
void vmp_analysis__hit_limit(vmp_analysis *a, const char *what, uint64_t n, const char *unit);

/* HEADER: its strings copied, the names' separator taken (R-RES-2). */
vmp_status vmp_analysis__take_header(vmp_analysis *a, const vmp_rec_header *h);

/* spec §5.15: the kind delivered when no header declares the one asked for */
#define KIND_NONE UINT32_MAX
#define MAX_KINDS 65536u /* kinds counted apart; higher ones with the last */
/* Add a sample of `kind` (0: CPU) to the kinds' records and weights.  0, or
 * -1 when out of memory. */
int vmp_analysis__count_kind(vmp_analysis *a, uint64_t kind, uint64_t weight);

/* Whether a sample of `kind` is delivered (R-KND-3). */
static inline int vmp_analysis__delivers(const vmp_analysis *a, uint64_t kind)
{
    return (a->opts.flags & VMP_ANALYSIS_ALL_KINDS) || kind == a->kind_sel;
}

/* The header's name of code kind `kind`, "kind#N" when it has none. */
const char *vmp_analysis__code_kind_name(vmp_analysis *a, uint32_t kind);

/* The ids of a resolved function, frame and stack, added when new; 0 on no
 * memory (or, for a stack, a limit reached). */
uint32_t vmp_analysis__intern_func(vmp_analysis *a, uint32_t name_sid, const char *kind, int cls,
                                   uint32_t code_kind, uint64_t function_id, uint64_t module_id,
                                   uint64_t bc_size);
uint32_t vmp_analysis__intern_frame(vmp_analysis *a, uint32_t func, int has_range, uint32_t first,
                                    uint32_t last);
uint32_t vmp_analysis__intern_stack(vmp_analysis *a, uint32_t parent, uint32_t frame);

/* ---- vmp_forget.c ---- */

static inline uint64_t vmp_forget__touch_bit(uint64_t page)
{
    return page & (TOUCH_BITS - 1);
}

/* Note that address `addr` was resolved. */
static inline void vmp_forget__touch(vmp_analysis *a, uint64_t addr)
{
    uint64_t b = vmp_forget__touch_bit(addr >> TOUCH_SHIFT);
    a->touched[b / 64] |= (uint64_t)1 << (b % 64);
}

/* Forget every resolved stack (the node memos and the (node, generation)
 * hash): a record just read changes what a sample resolves to from here on
 * (spec R-RES-1: a sample resolves with the records before it, so a stack
 * resolved before the record must not answer for a sample after it). */
void vmp_forget__all(vmp_analysis *a);

/* Forget the resolved stacks if an address in [start, end) may have been
 * resolved since they were last forgotten: a record changes the resolution
 * of those addresses only. */
void vmp_forget__range(vmp_analysis *a, uint64_t start, uint64_t end);

/* ---- vmp_functions.c ---- */

/* FUNCTION: the first definition of an id holds (R-ID-5). */
vmp_status vmp_functions__take(vmp_analysis *a, const vmp_rec_function *f);

/* The FUNCTION of id `id`, or NULL. */
const fdef *vmp_functions__find(const vmp_analysis *a, uint64_t id);

/* The afunction of code object `o`; 0 on no memory. */
uint32_t vmp_functions__code_afunc(vmp_analysis *a, code_obj *o);

/* The frame of a symbolic stack node, of an inlined function at bcpc; 0 on
 * no memory. */
uint32_t vmp_functions__symbolic_frame(vmp_analysis *a, const snode *n);
uint32_t vmp_functions__inlined_frame(vmp_analysis *a, uint64_t function, uint64_t bcpc);

/* An interpreted frame of `function` at bytecode pc `bcpc` (known when
 * `has`): the range is the line-table run holding bcpc (from the first bcpc
 * of that line to the bcpc before the next line, or bytecode_size - 1 after
 * the last line); "b->b" without a line table or before its first entry. */
uint32_t vmp_functions__interpreted_frame(vmp_analysis *a, uint64_t function, int has,
                                          uint64_t bcpc);

/* Whether function ids x and y name the same function: equal ids, or two
 * definitions with the same full name (one afunction, see vmp_analyze.h). */
int vmp_functions__same(const vmp_analysis *a, uint64_t x, uint64_t y);

/* The frame "[truncated N frames]" (kind "truncated") that stands for the
 * outermost N frames of a stack deeper than the limit. */
uint32_t vmp_functions__truncated_frame(vmp_analysis *a, uint64_t n);

/* ---- vmp_code_history.c ---- */

/* The records CODE_OBJECT, CODE_FREE, CODE_MOVE, CODE_COMPACTION and
 * CODE_SNAPSHOT. */
vmp_status vmp_code_history__take_code(vmp_analysis *a, const vmp_rec_code_object *c);
vmp_status vmp_code_history__take_free(vmp_analysis *a, uint64_t id, uint64_t gen);
vmp_status vmp_code_history__take_move(vmp_analysis *a, uint64_t id, uint64_t start, uint64_t gen);
vmp_status vmp_code_history__take_compaction(vmp_analysis *a, const vmp_rec_code_compaction *c);
vmp_status vmp_code_history__take_snapshot(vmp_analysis *a, const vmp_rec_code_snapshot *s);

/* CODE_MAP (spec R-CODE-3): the maps of a code object that has none, from
 * here on.  Samples resolved before it keep what they showed; the resolved
 * stacks are forgotten (when a lookup found the code since they were last)
 * so that later samples see the map. */
vmp_status vmp_code_history__take_code_map(vmp_analysis *a, const vmp_rec_code_map *m);

/* The code object of id `id`, or NULL. */
code_obj *vmp_code_history__find(vmp_analysis *a, uint64_t id);

/* The placement at generation gen that holds addr: its span, or NULL (none,
 * or *failed set to 1 when the generation's index could not be built). */
const span *vmp_code_history__span_at(vmp_analysis *a, uint64_t addr, uint64_t gen, int *failed);

/* The inlining record of code object `o` covering offset `off`, or NULL. */
const uint64_t *vmp_code_history__inline_at(const code_obj *o, uint64_t off);

/* ---- vmp_symbols.c ---- */

/* The records MODULE and MODULE_SYMBOLS. */
vmp_status vmp_symbols__take_module(vmp_analysis *a, const vmp_rec_module *m);
vmp_status vmp_symbols__take_symbols(vmp_analysis *a, const vmp_rec_module_symbols *ms);

/* The frame of machine address `addr` that no code object holds: the symbol
 * covering it (spec R-RES-6), else its module's offset, else [unknown]
 * (R-RES-1).  0 on no memory. */
uint32_t vmp_symbols__frame_at(vmp_analysis *a, uint64_t addr);

#endif
