/* SPDX-License-Identifier: MIT
 *
 * vmp_folded.c - flame graph aggregation and folded stacks: sums the weight
 * of resolved samples (spec.md §5.12; stacks of §5.11 resolved as in
 * vmp_analyze.h) per distinct stack and writes them in the folded format.
 *
 * Outline.  vmp_flame_read() streams one profile through a fresh analysis and
 * sums weights per distinct (resolved stack, thread, state, failure) in a hash
 * table: one lookup per sample, memory bounded by distinct stacks.  At the end
 * of the profile, while the analysis's tables are still alive, every distinct
 * entry is turned into a path of named frames in the frame tree, which is
 * shared by both columns of a diff (nodes are matched by name, not by id, so
 * two profiles of different runs line up).  The tree is what the folded, SVG
 * and diff writers walk; vmp_folded_write.c finishes it and writes the
 * folded lines.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_flame_int.h"
#include "vmp_grow.h"
#include "vmp_hash.h"

/* ---- hashing and the u64 -> u32 map ------------------------------------------ */

static void fmap_free(vmp_fmap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* Value of `key`, or UINT32_MAX when absent. */
static uint32_t fmap_get(const vmp_fmap *m, uint64_t key)
{
    size_t i;
    if (!m->cap)
        return UINT32_MAX;
    for (i = (size_t)vmp_hash64(key) & (m->cap - 1); m->vals[i]; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == key)
            return m->vals[i] - 1;
    }
    return UINT32_MAX;
}

static int fmap_put(vmp_fmap *m, uint64_t key, uint32_t val)
{
    size_t i;
    if ((m->used + 1) * 4 > m->cap * 3) {
        size_t cap = m->cap ? m->cap * 2 : 1024, j;
        uint64_t *keys = calloc(cap, sizeof *keys);
        uint32_t *vals = calloc(cap, sizeof *vals);
        if (!keys || !vals) {
            free(keys);
            free(vals);
            return -1;
        }
        for (j = 0; j < m->cap; j++) {
            if (m->vals[j]) {
                for (i = (size_t)vmp_hash64(m->keys[j]) & (cap - 1); vals[i];
                     i = (i + 1) & (cap - 1))
                    ;
                keys[i] = m->keys[j];
                vals[i] = m->vals[j];
            }
        }
        free(m->keys);
        free(m->vals);
        m->keys = keys;
        m->vals = vals;
        m->cap = cap;
    }
    for (i = (size_t)vmp_hash64(key) & (m->cap - 1); m->vals[i]; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == key) {
            m->vals[i] = val + 1;
            return 0;
        }
    }
    m->keys[i] = key;
    m->vals[i] = val + 1;
    m->used++;
    return 0;
}

/* ---- names ------------------------------------------------------------------ */

struct vmp_fblock {
    vmp_fblock *next;
    size_t used, cap;
    char data[];
};

static char *block_alloc(vmp_flame *f, size_t n)
{
    vmp_fblock *b = f->blocks;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        b = malloc(sizeof *b + cap);
        if (!b)
            return NULL;
        b->next = f->blocks;
        b->used = 0;
        b->cap = cap;
        f->blocks = b;
    }
    b->used += n;
    return b->data + b->used - n;
}

/* Intern `len` bytes of `s`.  @return the name id, or UINT32_MAX when out of memory. */
static uint32_t intern(vmp_flame *f, const char *s, size_t len)
{
    size_t i;
    char *p;
    if ((f->n_names + 1) * 2 > f->name_cap) {
        size_t cap = f->name_cap ? f->name_cap * 2 : 1024, j;
        uint32_t *slots = calloc(cap, sizeof *slots);
        if (!slots)
            return UINT32_MAX;
        for (j = 0; j < f->name_cap; j++) {
            if (f->name_slots[j]) {
                const char *n = f->names[f->name_slots[j] - 1];
                for (i = (size_t)vmp_hash_bytes(n, strlen(n)) & (cap - 1); slots[i];
                     i = (i + 1) & (cap - 1))
                    ;
                slots[i] = f->name_slots[j];
            }
        }
        free(f->name_slots);
        f->name_slots = slots;
        f->name_cap = cap;
    }
    for (i = (size_t)vmp_hash_bytes(s, len) & (f->name_cap - 1); f->name_slots[i];
         i = (i + 1) & (f->name_cap - 1)) {
        const char *n = f->names[f->name_slots[i] - 1];
        if (strncmp(n, s, len) == 0 && n[len] == '\0')
            return f->name_slots[i] - 1;
    }
    if (f->n_names == f->cap_names && vmp_grow(&f->names, &f->cap_names, sizeof *f->names, 1024))
        return UINT32_MAX;
    p = block_alloc(f, len + 1);
    if (!p)
        return UINT32_MAX;
    memcpy(p, s, len);
    p[len] = '\0';
    f->names[f->n_names] = p;
    f->name_slots[i] = (uint32_t)f->n_names + 1;
    return (uint32_t)f->n_names++;
}

int vmp_flame__sb_add(sbuf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        char *p;
        while (cap < b->len + n + 1)
            cap *= 2;
        p = realloc(b->p, cap);
        if (!p)
            return -1;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}

/* Append a frame name so that folded lines split unambiguously: ';' becomes
 * ':', control characters (newlines included) become '?'. */
static int sb_add_name(sbuf *b, const char *s)
{
    size_t start = b->len, i;
    if (!s || !*s)
        s = "[unknown]";
    if (vmp_flame__sb_add(b, s, strlen(s)))
        return -1;
    for (i = start; i < b->len; i++) {
        unsigned char c = (unsigned char)b->p[i];
        if (c == ';')
            b->p[i] = ':';
        else if (c < 0x20 || c == 0x7f)
            b->p[i] = '?';
    }
    return 0;
}

/* ---- the frame tree --------------------------------------------------------- */

/* The child of `parent` named `name`, created with category `cat` when new.
 * @return the node, or UINT32_MAX when out of memory. */
static uint32_t child(vmp_flame *f, uint32_t parent, uint32_t name, int cat, int is_range)
{
    uint64_t key = (uint64_t)parent << 32 | name;
    uint32_t n = fmap_get(&f->children, key);
    vmp_fnode *nd;
    if (n != UINT32_MAX)
        return n;
    if (f->n_nodes >= UINT32_MAX - 1)
        return UINT32_MAX;
    if (f->n_nodes == f->cap_nodes) {
        size_t cap = f->cap_nodes ? f->cap_nodes * 2 : 1024;
        vmp_fnode *nodes = realloc(f->nodes, cap * sizeof *nodes);
        uint64_t *gc;
        if (!nodes)
            return UINT32_MAX;
        f->nodes = nodes;
        gc = realloc(f->gc_self, cap * 2 * sizeof *gc);
        if (!gc)
            return UINT32_MAX;
        f->gc_self = gc;
        f->cap_nodes = cap;
    }
    n = (uint32_t)f->n_nodes;
    if (fmap_put(&f->children, key, n))
        return UINT32_MAX;
    f->n_nodes++;
    nd = &f->nodes[n];
    memset(nd, 0, sizeof *nd);
    nd->parent = parent;
    nd->name = name;
    nd->depth = f->nodes[parent].depth + 1;
    nd->cat = (uint8_t)cat;
    nd->is_range = (uint8_t)is_range;
    f->gc_self[2 * n] = f->gc_self[2 * n + 1] = 0;
    f->finalized = 0;
    return n;
}

static uint32_t child_str(vmp_flame *f, uint32_t parent, const char *s, int cat)
{
    uint32_t name = intern(f, s, strlen(s));
    return name == UINT32_MAX ? UINT32_MAX : child(f, parent, name, cat, 0);
}

vmp_status vmp_flame_create(vmp_flame **out, const vmp_flame_options *opts)
{
    vmp_flame *f;
    if (!out || (opts && opts->version != VMP_FLAME_OPTIONS_VERSION))
        return VMP_ERR_INVALID_ARG;
    f = calloc(1, sizeof *f);
    if (!f)
        return VMP_ERR_NOMEM;
    f->flags = opts ? opts->flags : 0;
    f->nodes = calloc(1024, sizeof *f->nodes);
    f->gc_self = calloc(2048, sizeof *f->gc_self);
    if (!f->nodes || !f->gc_self || intern(f, "all", 3) != 0) {
        vmp_flame_free(f);
        return VMP_ERR_NOMEM;
    }
    f->cap_nodes = 1024;
    f->n_nodes = 1;
    f->nodes[0].cat = VMP_FCAT_SYNTH;
    *out = f;
    return VMP_OK;
}

void vmp_flame_free(vmp_flame *f)
{
    vmp_fblock *b, *next;
    if (!f)
        return;
    free(f->nodes);
    free(f->gc_self);
    fmap_free(&f->children);
    free(f->names);
    free(f->name_slots);
    for (b = f->blocks; b; b = next) {
        next = b->next;
        free(b);
    }
    free(f->kids);
    free(f->kid_off);
    free(f->total);
    free(f->gc);
    free(f);
}

uint64_t vmp_flame_total(const vmp_flame *f, unsigned int column)
{
    return f && column < 2 ? f->totals[column] : 0;
}

/* ---- reading: distinct entries --------------------------------------------------- */

enum {
    E_EMPTY = 0,
    E_STACK = 1,
    E_FAILED = 2
};

typedef struct fentry {
    uint64_t thread;
    uint64_t weight;
    uint64_t code;  /* with VMP_FLAME_UNITS: the code object the pc ran in, 0 == none */
    uint32_t stack; /* E_STACK: resolved stack, 0 == none */
    uint32_t state;
    uint32_t reason; /* E_FAILED */
    uint32_t leaf;   /* E_FAILED: the frame of its pc (spec R-RES-7), 0 == none */
    uint32_t kind;   /* E_* */
} fentry;

typedef struct etable {
    fentry *e;
    size_t cap, used;
} etable;

static uint64_t entry_hash(const fentry *e)
{
    return vmp_hash64(e->thread ^ vmp_hash64(e->code ^ (uint64_t)e->leaf << 40) ^
                      vmp_hash64((uint64_t)e->stack << 32 ^ e->state ^ (uint64_t)e->reason << 20 ^
                                 (uint64_t)e->kind << 62));
}

static int entry_same(const fentry *a, const fentry *b)
{
    return a->kind == b->kind && a->stack == b->stack && a->state == b->state &&
           a->thread == b->thread && a->reason == b->reason && a->code == b->code &&
           a->leaf == b->leaf;
}

static int etable_add(etable *t, const fentry *k, uint64_t w)
{
    size_t i;
    if ((t->used + 1) * 2 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 4096, j;
        fentry *e = calloc(cap, sizeof *e);
        if (!e)
            return -1;
        for (j = 0; j < t->cap; j++) {
            if (t->e[j].kind != E_EMPTY) {
                for (i = (size_t)entry_hash(&t->e[j]) & (cap - 1); e[i].kind != E_EMPTY;
                     i = (i + 1) & (cap - 1))
                    ;
                e[i] = t->e[j];
            }
        }
        free(t->e);
        t->e = e;
        t->cap = cap;
    }
    for (i = (size_t)entry_hash(k) & (t->cap - 1); t->e[i].kind != E_EMPTY;
         i = (i + 1) & (t->cap - 1)) {
        if (entry_same(&t->e[i], k)) {
            t->e[i].weight += w;
            return 0;
        }
    }
    t->e[i] = *k;
    t->e[i].weight = w;
    t->used++;
    return 0;
}

/* ---- reading: entries to paths ------------------------------------------------------ */

/* Labels of one analysis frame, computed once per frame. */
typedef struct flabel {
    uint32_t name;  /* name id + 1; 0 == not computed */
    uint32_t range; /* name id + 1 of "name A->B"; 0 == none */
    uint8_t cat;
} flabel;

typedef struct builder {
    vmp_flame *f;
    vmp_analysis *a;
    unsigned int col;
    flabel *labels;
    size_t n_labels;
    /* Where each resolved stack was placed: under memo_prefix[stack] - 1 at
     * memo_node[stack]; other prefixes (another thread or state) in `memo`. */
    uint32_t *memo_node, *memo_prefix;
    size_t n_memo;
    vmp_fmap memo; /* (prefix node << 32 | stack) -> node */
    uint32_t *path;
    size_t cap_path;
    sbuf sb;
} builder;

static int frame_category(const vmp_afunction *fn)
{
    if (!fn)
        return VMP_FCAT_UNKNOWN;
    switch (fn->code_class) {
    case VMP_CLASS_GENERATED:
        /* "interpreted" and "inlined": a Java method placed by its pc (see
         * the naming rules in vmp_analyze.h) */
        if (fn->kind &&
            (strcmp(fn->kind, "interpreter") == 0 || strcmp(fn->kind, "interpreted") == 0))
            return VMP_FCAT_INTERP;
        return fn->kind && strcmp(fn->kind, "inlined") == 0 ? VMP_FCAT_INLINED : VMP_FCAT_JIT;
    case VMP_CLASS_SYMBOLIC: /* spec R-KND-4: a class is not code; a symbolic frame (an
                                AsyncGetCallTrace caller) ran in a tier nobody said */
        return fn->kind && strcmp(fn->kind, "class") == 0 ? VMP_FCAT_CLASS : VMP_FCAT_SYMBOLIC;
    case VMP_CLASS_NATIVE:
        return VMP_FCAT_C;
    default:
        return VMP_FCAT_UNKNOWN;
    }
}

static const char *tier_suffix(int cat)
{
    switch (cat) {
    case VMP_FCAT_JIT:
        return "_[j]";
    case VMP_FCAT_INLINED:
    case VMP_FCAT_CLASS: /* async-profiler's suffix of an allocated instance's class */
        return "_[i]";
    case VMP_FCAT_INTERP:
        return "_[0]";
    case VMP_FCAT_C:
        return "_[k]";
    default:
        return "";
    }
}

static const flabel *frame_label(builder *b, uint32_t frame)
{
    vmp_flame *f = b->f;
    flabel *l;
    const vmp_aframe *fr;
    const vmp_afunction *fn;
    const char *sfx;
    uint32_t id;
    if (frame >= b->n_labels)
        return NULL;
    l = &b->labels[frame];
    if (l->name)
        return l;
    fr = vmp_analysis_frame(b->a, frame);
    fn = fr ? vmp_analysis_function(b->a, fr->function) : NULL;
    l->cat = (uint8_t)frame_category(fn);
    sfx = (f->flags & VMP_FLAME_TIERS) ? tier_suffix(l->cat) : "";
    b->sb.len = 0;
    if (sb_add_name(&b->sb, fn ? fn->name : NULL) || vmp_flame__sb_add(&b->sb, sfx, strlen(sfx)))
        return NULL;
    id = intern(f, b->sb.p, b->sb.len);
    if (id == UINT32_MAX)
        return NULL;
    l->name = id + 1;
    if ((f->flags & VMP_FLAME_RANGES) && fr && fr->has_range) {
        char small[256];
        size_t n = vmp_analysis_format_frame(b->a, small, sizeof small, frame);
        b->sb.len = 0;
        if (n < sizeof small) {
            if (sb_add_name(&b->sb, small))
                return NULL;
        } else {
            char *big = malloc(n + 1);
            int bad;
            if (!big)
                return NULL;
            vmp_analysis_format_frame(b->a, big, n + 1, frame);
            bad = sb_add_name(&b->sb, big);
            free(big);
            if (bad)
                return NULL;
        }
        if (vmp_flame__sb_add(&b->sb, sfx, strlen(sfx)))
            return NULL;
        id = intern(f, b->sb.p, b->sb.len);
        if (id == UINT32_MAX)
            return NULL;
        l->range = id + 1;
    }
    return l;
}

static uint32_t memo_get(const builder *b, uint32_t prefix, uint32_t stack)
{
    if (stack < b->n_memo && b->memo_prefix[stack] == prefix + 1)
        return b->memo_node[stack];
    return fmap_get(&b->memo, (uint64_t)prefix << 32 | stack);
}

static int memo_put(builder *b, uint32_t prefix, uint32_t stack, uint32_t node)
{
    if (stack < b->n_memo && b->memo_prefix[stack] == 0) {
        b->memo_prefix[stack] = prefix + 1;
        b->memo_node[stack] = node;
        return 0;
    }
    return fmap_put(&b->memo, (uint64_t)prefix << 32 | stack, node);
}

/* The node of resolved frame `frame` under node `parent`: its function, and
 * with VMP_FLAME_RANGES its range below it.  UINT32_MAX on no memory. */
static uint32_t frame_node(builder *b, uint32_t parent, uint32_t frame)
{
    const flabel *l = frame_label(b, frame);
    uint32_t node;
    if (!l)
        return UINT32_MAX;
    node = child(b->f, parent, l->name - 1, l->cat, 0);
    if (node != UINT32_MAX && l->range)
        node = child(b->f, node, l->range - 1, l->cat, 1);
    return node;
}

/* The node of resolved stack `stack` under node `prefix`.  Walks up to the
 * nearest stack node already placed under `prefix`, then places the rest. */
static uint32_t stack_node(builder *b, uint32_t prefix, uint32_t stack)
{
    size_t n = 0;
    uint32_t node = prefix, s = stack;
    while (s) {
        const vmp_astack *st;
        uint32_t hit = memo_get(b, prefix, s);
        if (hit != UINT32_MAX) {
            node = hit;
            break;
        }
        if (n == b->cap_path && vmp_grow(&b->path, &b->cap_path, sizeof *b->path, 64) != 0)
            return UINT32_MAX;
        b->path[n++] = s;
        st = vmp_analysis_stack(b->a, s);
        if (!st || n > vmp_analysis_stack_count(b->a))
            return UINT32_MAX;
        s = st->parent;
    }
    while (n > 0) {
        uint32_t id = b->path[--n];
        const vmp_astack *st = vmp_analysis_stack(b->a, id);
        node = frame_node(b, node, st->frame);
        if (node == UINT32_MAX || memo_put(b, prefix, id, node))
            return UINT32_MAX;
    }
    return node;
}

static vmp_status place_entry(builder *b, const fentry *e)
{
    vmp_flame *f = b->f;
    const char *state = vmp_analysis_state_name(b->a, e->state);
    int in_gc = state && strcmp(state, "gc") == 0;
    uint32_t node = 0;

    if (f->flags & VMP_FLAME_THREAD_ROOT) {
        b->sb.len = 0;
        if (sb_add_name(&b->sb, vmp_analysis_thread_name(b->a, e->thread)))
            return VMP_ERR_NOMEM;
        node = child_str(f, node, b->sb.p, VMP_FCAT_SYNTH);
    }
    if ((f->flags & VMP_FLAME_STATE) && node != UINT32_MAX) {
        b->sb.len = 0;
        if (vmp_flame__sb_add(&b->sb, "[", 1) || sb_add_name(&b->sb, state) ||
            vmp_flame__sb_add(&b->sb, "]", 1))
            return VMP_ERR_NOMEM;
        node = child_str(f, node, b->sb.p, in_gc ? VMP_FCAT_GC : VMP_FCAT_SYNTH);
    }
    if (node == UINT32_MAX)
        return VMP_ERR_NOMEM;
    if (e->kind == E_FAILED) {
        b->sb.len = 0;
        if (vmp_flame__sb_add(&b->sb, "[failed: ", 9) ||
            sb_add_name(&b->sb, vmp_analysis_failure_reason_name(b->a, e->reason)) ||
            vmp_flame__sb_add(&b->sb, "]", 1))
            return VMP_ERR_NOMEM;
        node = child_str(f, node, b->sb.p, VMP_FCAT_SYNTH);
        if (e->leaf && node != UINT32_MAX) /* its pc's frame: spec R-RES-7 */
            node = frame_node(b, node, e->leaf);
    } else if (e->stack == 0) {
        node = child_str(f, node, "[unknown]", VMP_FCAT_UNKNOWN);
    } else {
        node = stack_node(b, node, e->stack);
    }
    if (e->code && node != UINT32_MAX) {
        const char *unit = vmp_analysis_unit_name(b->a, e->code);
        b->sb.len = 0;
        if (!unit || vmp_flame__sb_add(&b->sb, "[", 1) || sb_add_name(&b->sb, unit) ||
            vmp_flame__sb_add(&b->sb, "]", 1))
            return VMP_ERR_NOMEM;
        node = child_str(f, node, b->sb.p, VMP_FCAT_JIT);
    }
    if (node == UINT32_MAX)
        return VMP_ERR_NOMEM;
    f->nodes[node].self[b->col] += e->weight;
    if (in_gc)
        f->gc_self[2 * node + b->col] += e->weight;
    return VMP_OK;
}

static vmp_status read_column(vmp_flame *f, vmp_reader *r, unsigned int column);
static vmp_status add_profile(vmp_flame *f, const vmp_profile *p, unsigned int column);

vmp_status vmp_flame_read(vmp_flame *f, vmp_reader *r, unsigned int column)
{
    if (!f || !r || column > 1 || f->have[column])
        return VMP_ERR_INVALID_ARG;
    return read_column(f, r, column);
}

vmp_status vmp_flame_read_more(vmp_flame *f, vmp_reader *r, unsigned int column)
{
    if (!f || !r || column > 1 || f->finalized)
        return VMP_ERR_INVALID_ARG;
    return read_column(f, r, column);
}

static vmp_status read_column(vmp_flame *f, vmp_reader *r, unsigned int column)
{
    vmp_profile *p = NULL;
    vmp_status st = vmp_profile_create(&p, NULL), st2;
    if (st != VMP_OK)
        return st;
    st = vmp_profile_read(p, r);
    /* Place what was read, even after an error: a truncated file still draws. */
    st2 = add_profile(f, p, column);
    vmp_profile_free(p);
    return st != VMP_OK ? st : st2;
}

vmp_status vmp_flame_add_profile(vmp_flame *f, const vmp_profile *p, unsigned int column)
{
    if (!f || !p || column > 1 || f->finalized)
        return VMP_ERR_INVALID_ARG;
    return add_profile(f, p, column);
}

static vmp_status add_profile(vmp_flame *f, const vmp_profile *p, unsigned int column)
{
    vmp_analysis *a = vmp_profile_analysis(p);
    etable t = {NULL, 0, 0};
    const vmp_profile_key *keys;
    vmp_status st = VMP_OK;
    builder b;
    size_t i, n_keys;

    f->have[column] = 1;
    keys = vmp_profile_keys(p, &n_keys);
    /* the profile's keys in order of first sample: the entries are made in
     * the order the samples would make them */
    for (i = 0; i < n_keys; i++) {
        vmp_profile_key view = keys[i];
        const vmp_profile_key *s = &view;
        fentry k;
        if ((f->flags & VMP_FLAME_VM_FRAMES) && (st = vmp_analysis_vm_key(a, &view)) != VMP_OK)
            break; /* spec R-VIEW-7 */
        memset(&k, 0, sizeof k);
        k.thread = s->thread;
        k.state = s->state;
        if (s->failed) {
            k.kind = E_FAILED;
            k.reason = s->reason;
            k.leaf = s->leaf;
        } else {
            k.kind = E_STACK;
            k.stack = s->stack;
        }
        if (f->flags & VMP_FLAME_UNITS)
            k.code = s->code;
        if (etable_add(&t, &k, s->weight)) {
            st = VMP_ERR_NOMEM;
            break;
        }
        f->totals[column] += s->weight;
    }

    memset(&b, 0, sizeof b);
    b.f = f;
    b.a = a;
    b.col = column;
    b.n_labels = vmp_analysis_frame_count(a);
    b.labels = calloc(b.n_labels ? b.n_labels : 1, sizeof *b.labels);
    b.n_memo = vmp_analysis_stack_count(a);
    b.memo_node = malloc((b.n_memo ? b.n_memo : 1) * sizeof *b.memo_node);
    b.memo_prefix = calloc(b.n_memo ? b.n_memo : 1, sizeof *b.memo_prefix);
    if (st == VMP_OK && (!b.labels || !b.memo_node || !b.memo_prefix))
        st = VMP_ERR_NOMEM;
    for (i = 0; i < t.cap && st == VMP_OK; i++) {
        if (t.e[i].kind != E_EMPTY)
            st = place_entry(&b, &t.e[i]);
    }
    free(b.labels);
    free(b.memo_node);
    free(b.memo_prefix);
    free(b.path);
    free(b.sb.p);
    fmap_free(&b.memo);
    free(t.e);
    f->finalized = 0;
    return st;
}
