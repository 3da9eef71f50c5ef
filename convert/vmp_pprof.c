/* SPDX-License-Identifier: MIT
 *
 * vmp_pprof.c - `vmp pprof`: a vmp profile, resolved through the analysis
 * (spec.md §5 "Generations", "Resolution", §5.12), as one gzip'd
 * pprof Profile message (convert/profile.proto).  vmp_convert.h documents
 * the mapping.
 *
 * Outline: one streaming pass feeds every record to the analysis and to
 * vmp_convmeta (files, line tables, modules, zones), and sums the samples per
 * (stack, thread, state, failure reason).  At the end the Profile is built
 * from those sums and the analysis's tables, packed by protobuf-c straight
 * into a zlib deflate stream with a gzip header.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "vmp_convert.h"
#include "vmp_convmeta.h"
#include "vmp_gzsink.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

#define N_LABELS_MAX 6
/* Kinds in one Profile (spec R-VIEW-6): the CPU samples and 15 more. */
#define VMP_PPROF_MAX_KINDS 16

/* One distinct (stack, thread, state, failure, JIT unit) and its summed
 * weight. */
typedef struct agg {
    uint32_t stack; /* resolved stack; 0 for failed samples */
    uint32_t leaf;  /* the executing frame of a failed sample, 0 == none */
    uint32_t state, reason;
    int failed;
    uint64_t thread;
    uint64_t weight;
    uint64_t records; /* sample records (counted for kinds other than CPU) */
    uint32_t kind;    /* the samples' kind (spec §5.15), 0 == CPU */
    int64_t unit;     /* the name of the JIT unit the pc ran in (vmp_analysis_unit_name()) as
                       * a string of the Profile's table, 0 == none */
} agg;

typedef struct pprof_conv {
    vmp_analysis *a;
    vmp_convmeta m;
    vmp_hmap by_key;   /* (key, thread) -> agg index + 1, kind 0 */
    vmp_hmap *by_kind; /* kinds 1 .. n_kinds - 1: as by_key (spec R-VIEW-6) */
    size_t n_kinds;    /* the analysis's kinds (vmp_analysis_kinds()) */
    uint32_t *col;     /* kind -> its first value's index, UINT32_MAX: no samples */
    size_t n_values;   /* values per sample: 2 per kind with samples */
    agg *aggs;
    size_t n_aggs, cap_aggs;
    uint64_t samples, weight;
    vmp_strtab out;   /* the Profile's string table */
    vmp_hmap unit_of; /* code id -> the unit name's index in `out` (> 0) */
    vmp_hmap pair_of; /* (stack or leaf, unit name index) -> pair number + 1 */
    uint32_t n_pairs;
    int vm_frames; /* VMP_PPROF_VM_FRAMES: the VM's view of each key */
} pprof_conv;

static int64_t ostr(pprof_conv *c, const char *s);

/* The aggregation key's first 32 bits for samples whose stack (or failed
 * leaf) is `base` and whose pc ran in code object `code` (0 for none): base
 * itself, or with a JIT unit a number for the pair (base, unit) and bit 63
 * set.  The unit's name (agg.unit), through *unit.  0 on no memory. */
static int base_key(pprof_conv *c, uint64_t code, uint32_t base, uint64_t *key, int64_t *unit)
{
    uint32_t u, pair;
    *key = base;
    *unit = 0;
    if (!code)
        return 1;
    u = vmp_hmap__get(&c->unit_of, code, 0);
    if (!u) {
        const char *name = vmp_analysis_unit_name(c->a, code);
        int64_t i;
        if (!name)
            return 1;
        i = c->out.n == 0 && ostr(c, "") != 0 ? -1 : ostr(c, name); /* "" is string 0 */
        if (i == 0)                                                 /* an empty name: no label */
            return 1;
        if (i < 0 || i >= UINT32_MAX || vmp_hmap__put(&c->unit_of, code, 0, (uint32_t)i))
            return 0;
        u = (uint32_t)i;
    }
    *unit = u;
    pair = vmp_hmap__get(&c->pair_of, base, u);
    if (!pair) {
        if (c->n_pairs >= UINT32_MAX - 1 || vmp_hmap__put(&c->pair_of, base, u, ++c->n_pairs))
            return 0;
        pair = c->n_pairs;
    }
    *key = (uint64_t)pair | 1ull << 63;
    return 1;
}

/* Add the samples of profile key k to their Profile sample (aggregate):
 * keys differ in what a Profile sample does not show (a leaf under its
 * stack, code objects of one unit name).  -1 on no memory. */
static int take_key(pprof_conv *c, const vmp_profile_key *key_in)
{
    vmp_profile_key view = *key_in;
    const vmp_profile_key *k = &view;
    uint64_t key, st = k->state > 0xffff ? 0xffff : k->state;
    uint32_t idx;
    int64_t unit;
    agg *g;
    vmp_hmap *map;
    if (c->vm_frames && vmp_analysis_vm_key(c->a, &view) != VMP_OK) /* spec R-VIEW-7 */
        return -1;
    if (!base_key(c, k->code, k->failed ? k->leaf : k->stack, &key, &unit))
        return -1;
    if (k->failed)
        key |= (st << 32) | ((uint64_t)(k->reason > 0x7ffe ? 0x7ffe : k->reason) + 1) << 48;
    else
        key |= st << 32;
    if (k->kind >= c->n_kinds || (k->kind > 0 && c->col[k->kind] == UINT32_MAX))
        return 0; /* past the kinds a Profile holds */
    map = k->kind == 0 ? &c->by_key : &c->by_kind[k->kind];
    if (k->kind == 0) { /* the CPU samples, as the stats count them */
        c->samples += k->samples;
        c->weight += k->weight;
    }
    idx = vmp_hmap__get(map, key, k->thread);
    if (idx) {
        c->aggs[idx - 1].weight += k->weight;
        c->aggs[idx - 1].records += k->samples;
        return 0;
    }
    if (c->n_aggs >= UINT32_MAX - 1 ||
        vmp_grow__((void **)&c->aggs, &c->cap_aggs, c->n_aggs + 1, sizeof *c->aggs))
        return -1;
    g = &c->aggs[c->n_aggs];
    memset(g, 0, sizeof *g);
    g->stack = k->failed ? 0 : k->stack;
    g->leaf = k->failed ? k->leaf : 0;
    g->state = k->state;
    g->reason = k->reason;
    g->failed = k->failed;
    g->thread = k->thread;
    g->weight = k->weight;
    g->records = k->samples;
    g->kind = k->kind;
    g->unit = unit;
    if (vmp_hmap__put(map, key, k->thread, (uint32_t)c->n_aggs + 1))
        return -1;
    c->n_aggs++;
    return 0;
}

/* The kinds of the file (at most VMP_PPROF_MAX_KINDS with samples; past
 * them a kind's samples are left out) and their maps.  -1 on no memory. */
static int take_kinds(pprof_conv *c)
{
    size_t n = 0, k, with = 1;
    const vmp_akind *kinds = vmp_analysis_kinds(c->a, &n);
    c->n_kinds = n;
    c->by_kind = calloc(n + 1, sizeof *c->by_kind);
    c->col = calloc(n + 1, sizeof *c->col);
    if (!c->by_kind || !c->col)
        return -1;
    /* the CPU samples' two values first, then two per kind with samples */
    for (k = 1; k < n; k++)
        c->col[k] = kinds[k].records > 0 && with < VMP_PPROF_MAX_KINDS ? (uint32_t)(2 * with++)
                                                                       : UINT32_MAX;
    c->n_values = 2 * with;
    return 0;
}

/* Interns into the output string table; -1 when out of memory. */
static int64_t ostr(pprof_conv *c, const char *s)
{
    return vmp_strtab__intern(&c->out, s ? s : "", s ? strlen(s) : 0);
}

/* ---- building the Profile ---------------------------------------------------------------- */

typedef struct build {
    pb_profile prof;
    pb_value_type vt[2 * VMP_PPROF_MAX_KINDS + 1]; /* the sample types, then the period's */
    pb_value_type *vt_ptr[2 * VMP_PPROF_MAX_KINDS];
    pb_location **loc_ptr; /* each Location malloc'd with its Lines */
    size_t cap_locs;
    pb_function *fns;
    pb_function **fn_ptr;
    pb_mapping *maps;
    pb_mapping **map_ptr;
    int64_t *comments;   /* the conversion note, then one "key=value" per header label */
    uint32_t *fn_out;    /* afunction id -> pprof Function index + 1 */
    uint32_t *range_out; /* frame id -> pseudo Function index + 1 */
    uint32_t *loc_out;   /* frame id -> Location index + 1 (single-frame Locations) */
    /* Locations of inline chains (VMP_PPROF_INLINES): frame sequences */
    vmp_hmap seq_map; /* (hash, length | probe << 32) -> Location index + 1 */
    uint32_t *seq_frames;
    size_t n_seq_frames, cap_seq_frames;
    size_t *seq_off; /* per Location: offset in seq_frames, SIZE_MAX == single frame */
    size_t cap_seq_off;
    size_t n_fns, n_locs;
} build;

static void build_free(build *b)
{
    size_t i;
    for (i = 0; i < b->n_locs; i++) {
        free(b->loc_ptr[i]->line);
        free(b->loc_ptr[i]);
    }
    free(b->loc_ptr);
    vmp_hmap__free(&b->seq_map);
    free(b->seq_frames);
    free(b->seq_off);
    free(b->fns);
    free(b->comments);
    free(b->fn_ptr);
    free(b->maps);
    free(b->map_ptr);
    free(b->fn_out);
    free(b->range_out);
    free(b->loc_out);
}

static int add_function(pprof_conv *c, build *b, uint32_t afn, const char *name_override,
                        uint64_t id)
{
    const vmp_afunction *fn = vmp_analysis_function(c->a, afn);
    const vmp_cm_function *mf = fn ? vmp_convmeta__function(&c->m, fn->function_id) : NULL;
    pb_function *f = &b->fns[b->n_fns];
    const char *sys = NULL;
    int64_t name, sysname, file = 0;
    perftools__profiles__function__init(f);
    if (!fn)
        return -1;
    name = ostr(c, name_override ? name_override : fn->name);
    if (name_override)
        sys = name_override;
    else if (fn->code_class == VMP_CLASS_NATIVE)
        sys = fn->raw_name;
    else if (mf && mf->signature)
        sys = c->m.str.s[mf->signature];
    sysname = ostr(c, sys ? sys : fn->name);
    if (mf && mf->file)
        file = ostr(c, c->m.str.s[mf->file]);
    if (name < 0 || sysname < 0 || file < 0)
        return -1;
    f->id = id;
    f->name = name;
    f->system_name = sysname;
    f->filename = file;
    f->start_line = mf ? (int64_t)mf->first_line : 0;
    b->fn_ptr[b->n_fns] = f;
    b->n_fns++;
    return 0;
}

/* Mapping of a frame's function: 0 == none. */
static uint64_t frame_mapping(pprof_conv *c, const vmp_afunction *fn)
{
    size_t i;
    if (fn->code_class == VMP_CLASS_NATIVE) {
        for (i = 0; i < c->m.n_modules; i++)
            if (c->m.modules[i].id == fn->module_id)
                return i + 1;
        return 0;
    }
    if (fn->code_class == VMP_CLASS_GENERATED && c->m.n_zones == 1)
        return c->m.n_modules + 1;
    return 0;
}

/* Append the Lines of `frame` (its range pseudo Line first) to `lines`. */
static int frame_lines(pprof_conv *c, build *b, uint32_t frame, unsigned flags, pb_line *lines,
                       size_t *n)
{
    const vmp_aframe *fr = vmp_analysis_frame(c->a, frame);
    const vmp_afunction *fn = fr ? vmp_analysis_function(c->a, fr->function) : NULL;
    uint64_t line = 0;
    if (!fn)
        return -1;
    if (fr->has_range) /* the line of A; 0 when unknown (left as is) */
        vmp_analysis_lines(c->a, fn->function_id, fr->bc_first, fr->bc_first, &line, NULL);
    if (!b->fn_out[fr->function]) {
        if (add_function(c, b, fr->function, NULL, fr->function))
            return -1;
        b->fn_out[fr->function] = (uint32_t)b->n_fns;
    }
    if (fr->has_range && !(flags & VMP_PPROF_NO_RANGES)) {
        if (!b->range_out[frame]) {
            char buf[64];
            size_t len = strlen(fn->name);
            char *name = malloc(len + sizeof buf);
            int rc;
            if (!name)
                return -1;
            snprintf(buf, sizeof buf, " %" PRIu32 "->%" PRIu32, fr->bc_first, fr->bc_last);
            memcpy(name, fn->name, len);
            strcpy(name + len, buf);
            rc = add_function(c, b, fr->function, name,
                              vmp_analysis_function_count(c->a) + (uint64_t)frame);
            free(name);
            if (rc)
                return -1;
            b->range_out[frame] = (uint32_t)b->n_fns;
        }
        perftools__profiles__line__init(&lines[*n]);
        lines[*n].function_id = b->fns[b->range_out[frame] - 1].id;
        lines[(*n)++].line = (int64_t)line;
    }
    perftools__profiles__line__init(&lines[*n]);
    lines[*n].function_id = fr->function;
    lines[(*n)++].line = (int64_t)line;
    return 0;
}

/* A new Location for frames[0..n) (innermost first: inlined functions, then
 * the code object's frame).  Returns its index + 1, or 0 out of memory. */
static uint32_t new_location(pprof_conv *c, build *b, const uint32_t *frames, size_t n,
                             unsigned flags)
{
    const vmp_aframe *fr = vmp_analysis_frame(c->a, frames[n - 1]);
    const vmp_afunction *fn = fr ? vmp_analysis_function(c->a, fr->function) : NULL;
    pb_location *l;
    pb_line *lines;
    size_t nl = 0, i;
    if (!fn || b->n_locs >= UINT32_MAX - 1 ||
        vmp_grow__((void **)&b->loc_ptr, &b->cap_locs, b->n_locs + 1, sizeof *b->loc_ptr) ||
        vmp_grow__((void **)&b->seq_off, &b->cap_seq_off, b->n_locs + 1, sizeof *b->seq_off))
        return 0;
    l = malloc(sizeof *l);
    /* one block: the Lines, then the pointers to them */
    lines = malloc(2 * n * (sizeof *lines + sizeof(pb_line *)));
    if (!l || !lines) {
        free(l);
        free(lines);
        return 0;
    }
    perftools__profiles__location__init(l);
    l->line = (pb_line **)(void *)lines;
    b->loc_ptr[b->n_locs++] = l; /* owned by b from here on */
    {
        pb_line *tmp = (pb_line *)(void *)((pb_line **)(void *)lines + 2 * n);
        for (i = 0; i < n; i++)
            if (frame_lines(c, b, frames[i], flags, tmp, &nl))
                return 0;
        for (i = 0; i < nl; i++)
            l->line[i] = &tmp[i];
    }
    l->n_line = nl;
    l->id = b->n_locs;
    l->mapping_id = frame_mapping(c, fn);
    if (l->mapping_id && fn->address) /* "<module>+0x...": no symbol, the address */
        l->address = fn->address;
    b->seq_off[b->n_locs - 1] = SIZE_MAX;
    return (uint32_t)b->n_locs;
}

/* The Location of frames[0..n), created on first use; 0 out of memory. */
static uint32_t location_of(pprof_conv *c, build *b, const uint32_t *frames, size_t n,
                            unsigned flags)
{
    uint64_t h = 0x9e3779b97f4a7c15ull, probe;
    size_t i;
    uint32_t idx;
    if (n == 1) {
        if (!b->loc_out[frames[0]])
            b->loc_out[frames[0]] = new_location(c, b, frames, 1, flags);
        return b->loc_out[frames[0]];
    }
    for (i = 0; i < n; i++)
        h = vmp_hash64(h ^ frames[i]);
    for (probe = 0;; probe++) {
        idx = vmp_hmap__get(&b->seq_map, h, n | probe << 32);
        if (!idx)
            break;
        if (memcmp(&b->seq_frames[b->seq_off[idx - 1]], frames, n * sizeof *frames) == 0)
            return idx;
    }
    if (vmp_grow__((void **)&b->seq_frames, &b->cap_seq_frames, b->n_seq_frames + n,
                   sizeof *b->seq_frames))
        return 0;
    idx = new_location(c, b, frames, n, flags);
    if (!idx || vmp_hmap__put(&b->seq_map, h, n | probe << 32, idx))
        return 0;
    memcpy(&b->seq_frames[b->n_seq_frames], frames, n * sizeof *frames);
    b->seq_off[idx - 1] = b->n_seq_frames;
    b->n_seq_frames += n;
    return idx;
}

static int is_inlined(pprof_conv *c, uint32_t frame)
{
    const vmp_aframe *fr = vmp_analysis_frame(c->a, frame);
    const vmp_afunction *fn = fr ? vmp_analysis_function(c->a, fr->function) : NULL;
    return fn && strcmp(fn->kind, "inlined") == 0;
}

static int add_label_str(pprof_conv *c, pb_label *l, int64_t key, const char *v)
{
    int64_t s = ostr(c, v);
    perftools__profiles__label__init(l);
    if (s < 0)
        return -1;
    l->key = key;
    l->str = s;
    return 0;
}

/* Write the varint `v` through the sink. */
static void put_varint(gz_sink *g, uint64_t v)
{
    uint8_t buf[10];
    size_t n = 0;
    do {
        buf[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            buf[n] |= 0x80;
        n++;
    } while (v);
    vmp_gz_sink__append(&g->base, n, buf);
}

/* Build and write every Sample, one at a time: a serialized Profile is a
 * sequence of fields in any order and repeated fields concatenate, so each
 * Sample is packed straight into the output as field 2 and nothing per
 * sample is kept.  Locations and Functions are created on first use. */
static int stream_samples(pprof_conv *c, build *b, gz_sink *g, unsigned flags)
{
    const vmp_rec_header *h = vmp_analysis_header(c->a);
    uint64_t interval = h ? h->interval_ns : 0;
    int64_t k_thread = ostr(c, "thread"), k_tid = ostr(c, "thread_id"), k_state = ostr(c, "state"),
            k_kind = ostr(c, "code_kind"), k_failed = ostr(c, "failed"),
            k_unit = ostr(c, "jit_unit");
    uint64_t *loc_ids = NULL;
    uint32_t *chain = NULL;
    size_t cap_ids = 0, cap_chain = 0, i;
    int rc = -1;
    if (k_thread < 0 || k_tid < 0 || k_state < 0 || k_kind < 0 || k_failed < 0 || k_unit < 0)
        return -1;
    for (i = 0; i < c->n_aggs; i++) {
        const agg *ag = &c->aggs[i];
        pb_sample s;
        pb_label lab[N_LABELS_MAX];
        pb_label *labp[N_LABELS_MAX];
        int64_t values[2 * VMP_PPROF_MAX_KINDS];
        uint32_t node = ag->stack, leaf = ag->leaf;
        const vmp_aframe *lf;
        const vmp_afunction *lfn;
        size_t nlab = 0, k, n_ids = 0;
        perftools__profiles__sample__init(&s);
        if (ag->stack) {
            const vmp_astack *st = vmp_analysis_stack(c->a, node);
            size_t run = 0;
            leaf = st ? st->frame : 0;
            while (node) {
                uint32_t loc;
                st = vmp_analysis_stack(c->a, node);
                if (!st)
                    break;
                node = st->parent;
                if (vmp_grow__((void **)&chain, &cap_chain, run + 1, sizeof *chain))
                    goto cleanup;
                chain[run++] = st->frame;
                /* an inlined frame joins the Location of the frame it is inlined into */
                if ((flags & VMP_PPROF_INLINES) && node && is_inlined(c, st->frame))
                    continue;
                loc = location_of(c, b, chain, run, flags);
                run = 0;
                if (!loc || vmp_grow__((void **)&loc_ids, &cap_ids, n_ids + 1, sizeof *loc_ids))
                    goto cleanup;
                loc_ids[n_ids++] = loc;
            }
        } else if (leaf) {
            uint32_t loc = location_of(c, b, &leaf, 1, flags);
            if (!loc || vmp_grow__((void **)&loc_ids, &cap_ids, 1, sizeof *loc_ids))
                goto cleanup;
            loc_ids[n_ids++] = loc;
        }
        s.location_id = loc_ids;
        s.n_location_id = n_ids;
        /* spec R-VIEW-6: 0 but for the sample's kind's two values */
        memset(values, 0, c->n_values * sizeof values[0]);
        if (ag->kind == 0) {
            values[0] = (int64_t)ag->weight;
            values[1] = (int64_t)(ag->weight * interval);
        } else {
            values[c->col[ag->kind]] = (int64_t)ag->records;
            values[c->col[ag->kind] + 1] = (int64_t)ag->weight;
        }
        s.value = values;
        s.n_value = c->n_values;
        if (add_label_str(c, &lab[nlab++], k_thread, vmp_analysis_thread_name(c->a, ag->thread)))
            goto cleanup;
        perftools__profiles__label__init(&lab[nlab]);
        lab[nlab].key = k_tid;
        lab[nlab++].num = (int64_t)ag->thread;
        if (add_label_str(c, &lab[nlab++], k_state, vmp_analysis_state_name(c->a, ag->state)))
            goto cleanup;
        lf = leaf ? vmp_analysis_frame(c->a, leaf) : NULL;
        lfn = lf ? vmp_analysis_function(c->a, lf->function) : NULL;
        if (add_label_str(c, &lab[nlab++], k_kind, lfn ? lfn->kind : "unknown"))
            goto cleanup;
        if (ag->failed && add_label_str(c, &lab[nlab++], k_failed,
                                        vmp_analysis_failure_reason_name(c->a, ag->reason)))
            goto cleanup;
        if (ag->unit) {
            perftools__profiles__label__init(&lab[nlab]);
            lab[nlab].key = k_unit;
            lab[nlab++].str = ag->unit;
        }
        for (k = 0; k < nlab; k++)
            labp[k] = &lab[k];
        s.label = labp;
        s.n_label = nlab;
        put_varint(g, 2u << 3 | 2u); /* Profile.sample, length-delimited */
        put_varint(g, perftools__profiles__sample__get_packed_size(&s));
        perftools__profiles__sample__pack_to_buffer(&s, &g->base);
        if (g->failed)
            break;
    }
    rc = 0;
cleanup:
    free(loc_ids);
    free(chain);
    return rc;
}

/* spec R-VIEW-6: the names go tool pprof knows for a kind's two values */
static const struct {
    const char *kind, *count, *weight;
} known_kinds[] = {{"alloc", "alloc_objects", "alloc_space"},
                   {"live", "inuse_objects", "inuse_space"},
                   {"lock", "contentions", "delay"}};

/* The sample types of the kinds with samples, at their columns (c->col)
 * after the CPU samples' two, and default_sample_type.  -1 on no memory. */
static int kind_types(pprof_conv *c, build *b)
{
    size_t n = 0, k, j;
    const vmp_akind *kinds = vmp_analysis_kinds(c->a, &n);
    char buf[300];
    for (k = 1; k < c->n_kinds && k < n; k++) {
        const char *count = NULL, *weight = NULL;
        int64_t sc, su, sw, swu;
        uint32_t col = c->col[k];
        if (col == UINT32_MAX)
            continue;
        for (j = 0; j < sizeof known_kinds / sizeof known_kinds[0]; j++)
            if (strcmp(kinds[k].name, known_kinds[j].kind) == 0) {
                count = known_kinds[j].count;
                weight = known_kinds[j].weight;
            }
        if (count) {
            sc = ostr(c, count);
            sw = ostr(c, weight);
        } else {
            snprintf(buf, sizeof buf, "%.250s_count", kinds[k].name);
            sc = ostr(c, buf);
            sw = ostr(c, kinds[k].name);
        }
        su = ostr(c, "count");
        swu = ostr(c, kinds[k].unit);
        if (sc < 0 || sw < 0 || su < 0 || swu < 0)
            return -1;
        b->vt[col].type = sc;
        b->vt[col].unit = su;
        b->vt[col + 1].type = sw;
        b->vt[col + 1].unit = swu;
        if (col == 2) /* the first kind: cpu, or with no CPU samples its weight */
            b->prof.default_sample_type = kinds[0].records == 0 ? sw : ostr(c, "cpu");
    }
    return 0;
}

/* Everything but the samples. */
static int prepare_profile(pprof_conv *c, build *b)
{
    const vmp_rec_header *h = vmp_analysis_header(c->a);
    size_t nframes = vmp_analysis_frame_count(c->a), nfuncs = vmp_analysis_function_count(c->a);
    size_t i, n_maps = c->m.n_modules + c->m.n_zones;
    int64_t s_samples, s_count, s_cpu, s_ns;
    pb_profile *p = &b->prof;

    perftools__profiles__profile__init(p);
    if (ostr(c, "") != 0)
        return -1;
    s_samples = ostr(c, "samples");
    s_count = ostr(c, "count");
    s_cpu = ostr(c, "cpu");
    s_ns = ostr(c, "nanoseconds");
    if (s_samples < 0 || s_count < 0 || s_cpu < 0 || s_ns < 0)
        return -1;
    for (i = 0; i < 2 * VMP_PPROF_MAX_KINDS + 1; i++)
        perftools__profiles__value_type__init(&b->vt[i]);
    b->vt[0].type = s_samples;
    b->vt[0].unit = s_count;
    b->vt[1].type = s_cpu;
    b->vt[1].unit = s_ns;
    b->vt[2 * VMP_PPROF_MAX_KINDS].type = s_cpu;
    b->vt[2 * VMP_PPROF_MAX_KINDS].unit = s_ns;
    if (kind_types(c, b) < 0)
        return -1;
    for (i = 0; i < c->n_values; i++)
        b->vt_ptr[i] = &b->vt[i];
    p->n_sample_type = c->n_values;
    p->sample_type = b->vt_ptr;
    p->period_type = &b->vt[2 * VMP_PPROF_MAX_KINDS];
    p->period = h ? (int64_t)h->interval_ns : 0;
    p->time_nanos = h ? (int64_t)h->start_realtime_ns : 0;
    p->duration_nanos = (int64_t)c->m.last_time_ns;

    b->fn_out = calloc(nfuncs + 1, sizeof *b->fn_out);
    b->range_out = calloc(nframes + 1, sizeof *b->range_out);
    b->loc_out = calloc(nframes + 1, sizeof *b->loc_out);
    b->fns = calloc(nfuncs + nframes + 1, sizeof *b->fns);
    b->fn_ptr = calloc(nfuncs + nframes + 1, sizeof *b->fn_ptr);
    b->maps = calloc(n_maps + 1, sizeof *b->maps);
    b->map_ptr = calloc(n_maps + 1, sizeof *b->map_ptr);
    if (!b->fn_out || !b->range_out || !b->loc_out || !b->fns || !b->fn_ptr || !b->maps ||
        !b->map_ptr)
        return -1;
    return 0;
}

/* Locations, functions, mappings, comment and string table, after the samples. */
static int finish_profile(pprof_conv *c, build *b)
{
    const vmp_rec_header *h = vmp_analysis_header(c->a);
    size_t i, n_maps = c->m.n_modules + c->m.n_zones;
    pb_profile *p = &b->prof;
    p->n_location = b->n_locs;
    p->location = b->loc_ptr;
    p->n_function = b->n_fns;
    p->function = b->fn_ptr;
    for (i = 0; i < n_maps; i++) {
        const vmp_cm_range *g =
            i < c->m.n_modules ? &c->m.modules[i] : &c->m.zones[i - c->m.n_modules];
        pb_mapping *mp = &b->maps[i];
        int64_t fname = ostr(c, c->m.str.s[g->name]);
        int64_t bid = g->build_id ? ostr(c, c->m.str.s[g->build_id]) : 0;
        perftools__profiles__mapping__init(mp);
        if (fname < 0 || bid < 0)
            return -1;
        mp->id = i + 1;
        mp->memory_start = g->start;
        mp->memory_limit = g->end;
        mp->filename = fname;
        mp->build_id = bid;
        mp->has_functions = 1;
        mp->has_filenames = 1;
        mp->has_line_numbers = 1;
        b->map_ptr[i] = mp;
    }
    p->n_mapping = n_maps;
    p->mapping = b->map_ptr;

    {
        char buf[512];
        int64_t cm;
        snprintf(buf, sizeof buf, "converted by vmp pprof from a profile of %s %s (%s)",
                 h ? h->vm_name.s : "?", h ? h->vm_version.s : "", h ? h->producer.s : "?");
        cm = ostr(c, buf);
        if (cm < 0)
            return -1;
        b->comments = malloc((1 + (h ? h->n_labels : 0)) * sizeof *b->comments);
        if (!b->comments)
            return -1;
        b->comments[0] = cm;
        p->comment = b->comments;
        p->n_comment = 1;
        for (i = 0; h && i < h->n_labels; i++) { /* `pprof -comments` lists them */
            const vmp_str *k = &h->labels[2 * i], *v = &h->labels[2 * i + 1];
            size_t len = k->len + v->len + 2;
            char *kv = malloc(len);
            if (!kv)
                return -1;
            snprintf(kv, len, "%.*s=%.*s", (int)k->len, k->s, (int)v->len, v->s);
            cm = ostr(c, kv);
            free(kv);
            if (cm < 0)
                return -1;
            b->comments[p->n_comment++] = cm;
        }
    }
    p->n_string_table = c->out.n;
    p->string_table = c->out.s;
    return 0;
}

static vmp_status write_profile(pprof_conv *c, FILE *out, const vmp_pprof_options *o,
                                vmp_convert_stats *stats, char *err, size_t err_size)
{
    build b;
    gz_sink *g;
    vmp_status st = VMP_OK;
    memset(&b, 0, sizeof b);
    g = calloc(1, sizeof *g);
    if (!g || prepare_profile(c, &b)) {
        vmp_set_err__(err, err_size, "out of memory");
        st = VMP_ERR_NOMEM;
        goto cleanup;
    }
    if (vmp_gz_sink__init(g, out, o->gzip_level ? o->gzip_level : 1) != 0) {
        vmp_set_err__(err, err_size, "out of memory");
        st = VMP_ERR_NOMEM;
        goto cleanup;
    }
    if (stream_samples(c, &b, g, o->flags) || finish_profile(c, &b)) {
        vmp_gz_sink__end(g);
        vmp_set_err__(err, err_size, "out of memory");
        st = VMP_ERR_NOMEM;
        goto cleanup;
    }
    protobuf_c_message_pack_to_buffer(&b.prof.base, &g->base);
    vmp_gz_sink__finish(g);
    if (g->failed || fflush(out) != 0 || ferror(out)) {
        vmp_set_err__(err, err_size, "write error: %s", strerror(errno ? errno : EIO));
        st = VMP_ERR_IO;
        goto cleanup;
    }
    if (stats) {
        stats->out_samples = c->n_aggs;
        stats->functions = b.n_fns;
        stats->locations = b.n_locs;
        stats->bytes = g->bytes;
    }
cleanup:
    free(g);
    build_free(&b);
    return st;
}

vmp_status vmp_pprof_write(vmp_reader *r, FILE *out, const vmp_pprof_options *opts,
                           vmp_convert_stats *stats_out, char *err, size_t err_size)
{
    vmp_pprof_options o = VMP_PPROF_OPTIONS_INIT;
    vmp_analysis_options aopts = VMP_ANALYSIS_OPTIONS_INIT;
    pprof_conv c;
    vmp_profile *prof = NULL;
    vmp_status st;
    size_t n_keys = 0, i;
    if (vmp_conv__begin(r && out && (!opts || opts->version == VMP_PPROF_OPTIONS_VERSION), err,
                        err_size) < 0)
        return VMP_ERR_INVALID_ARG;
    if (opts)
        o = *opts;
    if (o.gzip_level > 9) {
        vmp_set_err__(err, err_size, "gzip level %d is not in 1..9", o.gzip_level);
        return VMP_ERR_INVALID_ARG;
    }
    memset(&c, 0, sizeof c);
    aopts.flags = (o.flags & VMP_PPROF_INLINES) ? VMP_ANALYSIS_INLINES : 0;
    aopts.flags |= VMP_ANALYSIS_ALL_KINDS; /* spec R-VIEW-6: every kind, each apart */
    st = vmp_profile_create(&prof, &aopts);
    if (st < 0) {
        vmp_set_err__(err, err_size, "out of memory");
        return st;
    }
    c.a = vmp_profile_analysis(prof);
    c.vm_frames = (o.flags & VMP_PPROF_VM_FRAMES) != 0;
    st = vmp_conv__read_profile(r, &c.m, prof);
    if (st == VMP_END && take_kinds(&c) < 0)
        st = VMP_ERR_NOMEM;
    if (st == VMP_END) {
        const vmp_profile_key *keys = vmp_profile_keys(prof, &n_keys);
        for (i = 0; i < n_keys; i++)
            if (take_key(&c, &keys[i]) != 0) {
                st = VMP_ERR_NOMEM;
                break;
            }
    }
    if (st == VMP_END) {
        st = write_profile(&c, out, &o, stats_out, err, err_size);
    } else if (st == VMP_ERR_NOMEM) {
        vmp_set_err__(err, err_size, "out of memory");
    } else if (st < 0) {
        const char *m = vmp_reader_errmsg(r);
        if (m && *m)
            vmp_set_err__(err, err_size, "%s", m);
        else
            vmp_set_err__(err, err_size, "record %s: %s", "analysis", vmp_status_str(st));
    }
    if (stats_out) {
        stats_out->samples = c.samples;
        stats_out->weight = c.weight;
    }
    vmp_strtab__free(&c.out);
    vmp_convmeta__free(&c.m);
    vmp_hmap__free(&c.by_key);
    for (i = 1; c.by_kind && i < c.n_kinds; i++)
        vmp_hmap__free(&c.by_kind[i]);
    free(c.by_kind);
    free(c.col);
    vmp_hmap__free(&c.unit_of);
    vmp_hmap__free(&c.pair_of);
    free(c.aggs);
    vmp_profile_free(prof);
    return st;
}
