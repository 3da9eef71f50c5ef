/* SPDX-License-Identifier: MIT
 *
 * vmp_replay.c - replay a profile's records through the writer, in file
 * order, with the writer's lazy options on or off:
 *
 *   vmp-replay IN OUT [--lazy]
 *
 * Every metadata record becomes the writer call that makes it (functions,
 * modules with their symbols, zones, code objects with their maps, frees,
 * moves, compactions, snapshots, threads, events, counters) and every sample
 * a vmp_writer_sample() with its frames, generation, weight, state and time
 * (a replayed clock).  A first pass gathers every module's symbols and
 * every CODE_MAP, so a file written lazily replays too: each module gets
 * its whole table and each code object its map when it is added.
 * Replaying one recording with and without --lazy gives
 * two files of the same stream that must resolve alike (spec.md R-ID-2,
 * R-RES-6, R-CODE-3): the tests compare their reports.  Exit status 0, 1 on
 * any error (one line on stderr).
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_reader.h"
#include "vmp_writer.h"

static _Atomic uint64_t now_ns; /* the replayed clock */

static uint64_t replay_clock(void *ud)
{
    (void)ud;
    return atomic_load(&now_ns);
}

typedef struct node {
    uint64_t parent;
    vmp_frame frame;
} node;

typedef struct replay {
    vmp_writer *w;
    node *nodes; /* by stack node id (dense from 1 in writer-made files) */
    size_t n_nodes;
    uint64_t *zones; /* file zone id -> writer zone id, pairs */
    size_t n_zones;

    /* from the first pass: symbols by module, maps by code id */
    struct syms {
        uint64_t module;
        vmp_symbol_desc *v;
        size_t n, cap;
    } * syms;

    size_t n_syms;

    struct cmap {
        uint64_t id;
        uint64_t *pc_map; /* pairs */
        size_t pc_map_len;
        vmp_rec_inline *inl; /* frames point into `frames` */
        size_t n_inl;
        uint64_t *frames;
    } * maps;

    size_t n_maps;
    vmp_frame frames[4096];
} replay;

static int fail(const char *what)
{
    fprintf(stderr, "vmp-replay: %s\n", what);
    return 1;
}

static void *grow(void *p, size_t n, size_t size)
{
    void *q = realloc(p, (n ? n : 1) * size);
    if (!q) {
        fprintf(stderr, "vmp-replay: out of memory\n");
        exit(1);
    }
    return q;
}

/* What lives until exit (the header's strings, symbol names), freed there. */
static void **kept;
static size_t n_kept, cap_kept;

static void *keep(void *p)
{
    if (n_kept == cap_kept) {
        cap_kept = cap_kept ? 2 * cap_kept : 1024;
        kept = grow(kept, cap_kept, sizeof *kept);
    }
    kept[n_kept++] = p;
    return p;
}

static char *dup_str(vmp_str s)
{
    char *p = grow(NULL, s.len + 1, 1);
    memcpy(p, s.s, s.len);
    p[s.len] = '\0';
    return p;
}

static struct syms *syms_of(replay *rp, uint64_t module, int add)
{
    for (size_t i = 0; i < rp->n_syms; i++)
        if (rp->syms[i].module == module)
            return &rp->syms[i];
    if (!add)
        return NULL;
    rp->syms = grow(rp->syms, rp->n_syms + 1, sizeof *rp->syms);
    memset(&rp->syms[rp->n_syms], 0, sizeof rp->syms[0]);
    rp->syms[rp->n_syms].module = module;
    return &rp->syms[rp->n_syms++];
}

static const struct cmap *map_of(const replay *rp, uint64_t id)
{
    for (size_t i = rp->n_maps; i-- > 0;)
        if (rp->maps[i].id == id)
            return &rp->maps[i];
    return NULL;
}

/* First pass: keep what a lazy file writes after its first use. */
static void gather(replay *rp, const vmp_record *r)
{
    if (r->type == VMP_REC_MODULE_SYMBOLS) {
        struct syms *t = syms_of(rp, r->u.module_symbols.module, 1);
        for (size_t i = 0; i < r->u.module_symbols.n_symbols; i++) {
            const vmp_rec_symbol *y = &r->u.module_symbols.symbols[i];
            if (t->n == t->cap) {
                t->cap = t->cap ? 2 * t->cap : 256;
                t->v = grow(t->v, t->cap, sizeof *t->v);
            }
            t->v[t->n].value = y->value;
            t->v[t->n].size = y->size;
            t->v[t->n].name = keep(dup_str(y->name));
            t->n++;
        }
    } else if (r->type == VMP_REC_CODE_MAP && !map_of(rp, r->u.code_map.id)) {
        const vmp_rec_code_map *c = &r->u.code_map;
        size_t words = 0;
        if ((rp->n_maps & (rp->n_maps - 1)) == 0) /* 0, 1, 2, 4, ...: double */
            rp->maps = grow(rp->maps, rp->n_maps ? 2 * rp->n_maps : 1, sizeof *rp->maps);
        struct cmap *m = &rp->maps[rp->n_maps++];
        m->id = c->id;
        m->pc_map_len = c->pc_map_len;
        m->pc_map = grow(NULL, 2 * c->pc_map_len, sizeof *m->pc_map);
        if (c->pc_map_len)
            memcpy(m->pc_map, c->pc_map, 2 * c->pc_map_len * sizeof *m->pc_map);
        for (size_t i = 0; i < c->n_inlines; i++)
            words += 2 * c->inlines[i].depth;
        m->frames = grow(NULL, words, sizeof *m->frames);
        m->inl = grow(NULL, c->n_inlines, sizeof *m->inl);
        m->n_inl = c->n_inlines;
        words = 0;
        for (size_t i = 0; i < c->n_inlines; i++) {
            m->inl[i] = c->inlines[i];
            if (c->inlines[i].depth)
                memcpy(m->frames + words, c->inlines[i].frames,
                       2 * c->inlines[i].depth * sizeof *m->frames);
            m->inl[i].frames = m->frames + words;
            words += 2 * c->inlines[i].depth;
        }
    }
}

static uint64_t zone_of(const replay *rp, uint64_t file_zone)
{
    for (size_t i = 0; i < rp->n_zones; i++)
        if (rp->zones[2 * i] == file_zone)
            return rp->zones[2 * i + 1];
    return 0;
}

static vmp_status code_object(replay *rp, const vmp_rec_code_object *given)
{
    vmp_rec_code_object with_map = *given, *c = &with_map;
    const struct cmap *m = map_of(rp, given->id);
    if (m && !given->pc_map_len && !given->n_inlines) { /* spec R-CODE-3 */
        with_map.pc_map = m->pc_map;
        with_map.pc_map_len = m->pc_map_len;
        with_map.inlines = m->inl;
        with_map.n_inlines = m->n_inl;
    }
    vmp_pc_pair *map = grow(NULL, c->pc_map_len, sizeof *map);
    vmp_inline_record *inl = grow(NULL, c->n_inlines, sizeof *inl);
    size_t frames = 0, at = 0;
    for (size_t i = 0; i < c->n_inlines; i++)
        frames += c->inlines[i].depth;
    vmp_frame *chain = grow(NULL, frames, sizeof *chain);
    for (size_t i = 0; i < c->pc_map_len; i++) {
        map[i].mcpc_offset = c->pc_map[2 * i];
        map[i].bcpc = (uint32_t)c->pc_map[2 * i + 1];
    }
    for (size_t i = 0; i < c->n_inlines; i++) {
        inl[i].mcpc_offset = c->inlines[i].mcpc_offset;
        inl[i].depth = (uint32_t)c->inlines[i].depth;
        inl[i].frames = chain + at;
        for (size_t k = 0; k < c->inlines[i].depth; k++, at++) {
            chain[at].kind = VMP_FRAME_FUNCTION;
            chain[at].value = c->inlines[i].frames[2 * k];
            chain[at].bcpc = (uint32_t)c->inlines[i].frames[2 * k + 1];
        }
    }
    char *name = dup_str(c->name);
    vmp_code_object co = {.id = c->id,
                          .zone = zone_of(rp, c->zone),
                          .kind = (uint32_t)c->kind,
                          .tier = (uint32_t)c->tier,
                          .name = name,
                          .function = c->function,
                          .start = c->start,
                          .size = c->size,
                          .pc_map = map,
                          .pc_map_len = c->pc_map_len,
                          .inlines = inl,
                          .n_inlines = c->n_inlines};
    vmp_status st = vmp_writer_code_add(rp->w, &co);
    free(name);
    free(map);
    free(inl);
    free(chain);
    return st;
}

static vmp_status sample(replay *rp, const vmp_rec_sample *s, int failed)
{
    uint32_t depth = 0;
    /* the stack, innermost first (a cycle or a missing node ends it) */
    for (uint64_t id = s->stack; id && id <= rp->n_nodes && depth < 4096; depth++) {
        rp->frames[depth] = rp->nodes[id - 1].frame;
        id = rp->nodes[id - 1].parent;
    }
    vmp_sample smp = {.thread = s->thread,
                      .pc = s->pc,
                      .generation = s->generation,
                      .blame = s->blame,
                      .state = (uint32_t)s->state,
                      .weight = (uint32_t)s->weight,
                      .frames = rp->frames,
                      .depth = depth};
    vmp_status st;
    atomic_store(&now_ns, s->time_ns);
    /* the ring may fill while the drain catches up: wait for it */
    while ((st = failed ? vmp_writer_failed_sample(rp->w, &smp, (uint32_t)s->reason)
                        : vmp_writer_sample(rp->w, &smp)) == VMP_ERR_FULL)
        vmp_writer_flush(rp->w);
    return st;
}

static vmp_status replay_record(replay *rp, const vmp_record *r)
{
    switch (r->type) {
    case VMP_REC_MODULE: {
        const vmp_rec_module *mod = &r->u.module;
        const struct syms *t = syms_of(rp, mod->id, 0);
        char *path = dup_str(mod->path);
        vmp_status st = vmp_writer_add_module_symbols(rp->w, NULL, path, mod->build_id,
                                                      mod->build_id_size, mod->bias, mod->start,
                                                      mod->end, t ? t->v : NULL, t ? t->n : 0);
        free(path);
        return st;
    }
    case VMP_REC_THREAD: {
        char *name = dup_str(r->u.thread.name);
        if (r->u.thread.end_time_ns || r->u.thread.time_ns)
            atomic_store(&now_ns,
                         r->u.thread.end_time_ns ? r->u.thread.end_time_ns : r->u.thread.time_ns);
        vmp_status st =
            vmp_writer_thread(rp->w, r->u.thread.id, name, r->u.thread.end_time_ns != 0);
        free(name);
        return st;
    }
    case VMP_REC_FUNCTION: {
        const vmp_rec_function *f = &r->u.function;
        char *name = dup_str(f->name), *scope = dup_str(f->scope), *sig = dup_str(f->signature),
             *file = dup_str(f->file);
        uint32_t *lines = grow(NULL, 2 * f->n_lines, sizeof *lines);
        for (size_t i = 0; i < 2 * f->n_lines; i++)
            lines[i] = (uint32_t)f->lines[i];
        vmp_function fn = {.id = f->id,
                           .name = name,
                           .scope = scope,
                           .signature = sig,
                           .file = file,
                           .first_line = (uint32_t)f->first_line,
                           .lines = lines,
                           .n_lines = f->n_lines,
                           .bytecode_size = (uint32_t)f->bytecode_size};
        vmp_status st = vmp_writer_function(rp->w, &fn);
        free(name);
        free(scope);
        free(sig);
        free(file);
        free(lines);
        return st;
    }
    case VMP_REC_CODE_ZONE: {
        uint64_t id = 0;
        char *name = dup_str(r->u.code_zone.name);
        vmp_status st =
            vmp_writer_code_zone(rp->w, &id, name, r->u.code_zone.start, r->u.code_zone.end);
        free(name);
        rp->zones = grow(rp->zones, 2 * (rp->n_zones + 1), sizeof *rp->zones);
        rp->zones[2 * rp->n_zones] = r->u.code_zone.id;
        rp->zones[2 * rp->n_zones + 1] = id;
        rp->n_zones++;
        return st;
    }
    case VMP_REC_CODE_OBJECT:
        atomic_store(&now_ns, r->u.code_object.time_ns);
        return code_object(rp, &r->u.code_object);
    case VMP_REC_CODE_FREE:
        atomic_store(&now_ns, r->u.code_free.time_ns);
        return vmp_writer_code_free(rp->w, r->u.code_free.id, NULL);
    case VMP_REC_CODE_MOVE:
        atomic_store(&now_ns, r->u.code_move.time_ns);
        return vmp_writer_code_move(rp->w, r->u.code_move.id, r->u.code_move.new_start, NULL);
    case VMP_REC_CODE_COMPACTION: {
        const vmp_rec_code_compaction *c = &r->u.code_compaction;
        return vmp_writer_code_compaction(rp->w, zone_of(rp, c->zone), c->moves, c->n_moves,
                                          c->frees, c->n_frees, c->time_ns, c->duration_ns, NULL);
    }
    case VMP_REC_CODE_SNAPSHOT:
        atomic_store(&now_ns, r->u.code_snapshot.time_ns);
        return vmp_writer_code_snapshot(rp->w, zone_of(rp, r->u.code_snapshot.zone),
                                        r->u.code_snapshot.entries, r->u.code_snapshot.n, NULL);
    case VMP_REC_STACK_NODE: {
        const vmp_rec_stack_node *n = &r->u.stack_node;
        if (n->id == 0 || n->id > (1u << 26))
            return VMP_ERR_CORRUPT;
        if (n->id > rp->n_nodes) {
            size_t cap = rp->n_nodes ? rp->n_nodes : 1024;
            while (cap < n->id)
                cap *= 2;
            rp->nodes = grow(rp->nodes, cap, sizeof *rp->nodes);
            memset(rp->nodes + rp->n_nodes, 0, (cap - rp->n_nodes) * sizeof *rp->nodes);
            rp->n_nodes = cap;
        }
        node *d = &rp->nodes[n->id - 1];
        d->parent = n->parent;
        d->frame.kind = n->is_function ? VMP_FRAME_FUNCTION : VMP_FRAME_PC;
        d->frame.value = n->is_function ? n->function : n->pc;
        d->frame.bcpc = n->is_function && n->has_bcpc ? (uint32_t)n->bcpc : VMP_BCPC_NONE;
        return VMP_OK;
    }
    case VMP_REC_SAMPLE:
    case VMP_REC_FAILED_SAMPLE:
        return sample(rp, &r->u.sample, r->type == VMP_REC_FAILED_SAMPLE);
    case VMP_REC_EVENT: {
        const vmp_rec_event *e = &r->u.event;
        char *text = dup_str(e->text);
        atomic_store(&now_ns, e->time_ns);
        vmp_status st = vmp_writer_event(rp->w, (uint32_t)e->kind, e->time_ns, e->duration_ns,
                                         e->thread, e->value, text);
        free(text);
        return st;
    }
    case VMP_REC_COUNTER:
        atomic_store(&now_ns, r->u.counter.time_ns);
        return vmp_writer_counter(rp->w, (uint32_t)r->u.counter.kind, r->u.counter.value);
    case VMP_REC_END: /* the writer writes its own at close, at this time */
        atomic_store(&now_ns, r->u.end.time_ns);
        return VMP_OK;
    default: /* HEADER (opened from it), MODULE_SYMBOLS and CODE_MAP (gathered) */
        return VMP_OK;
    }
}

/* The header's string arrays as C strings. */
static const char *const *strs(const vmp_str *v, size_t n)
{
    char **out = keep(grow(NULL, n, sizeof *out));
    for (size_t i = 0; i < n; i++)
        out[i] = keep(dup_str(v[i]));
    return (const char *const *)out;
}

int main(int argc, char **argv)
{
    vmp_reader *r = NULL;
    vmp_record rec;
    vmp_status st;
    replay rp;
    int lazy = argc == 4 && strcmp(argv[3], "--lazy") == 0;

    if (argc != 3 && !lazy)
        return fail("usage: vmp-replay IN OUT [--lazy]");
    memset(&rp, 0, sizeof rp);
    if (vmp_reader_open_file(&r, argv[1], NULL) != VMP_OK)
        return fail("cannot open the input");
    while ((st = vmp_reader_next(r, &rec)) == VMP_OK)
        gather(&rp, &rec);
    vmp_reader_close(r);
    r = NULL;
    if (st != VMP_END)
        return fail("the input does not read to its end");
    if (vmp_reader_open_file(&r, argv[1], NULL) != VMP_OK || vmp_reader_next(r, &rec) != VMP_OK ||
        rec.type != VMP_REC_HEADER)
        return fail("cannot read the input's header");
    const vmp_rec_header *h = &rec.u.header;
    vmp_writer_meta m = {.vm_name = keep(dup_str(h->vm_name)),
                         .vm_version = keep(dup_str(h->vm_version)),
                         .pid = h->pid,
                         .sample_interval_ns = h->interval_ns,
                         .states = strs(h->states, h->n_states),
                         .n_states = h->n_states,
                         .code_kinds = strs(h->code_kinds, h->n_code_kinds),
                         .n_code_kinds = h->n_code_kinds,
                         .tiers = strs(h->tiers, h->n_tiers),
                         .n_tiers = h->n_tiers,
                         .event_kinds = strs(h->event_kinds, h->n_event_kinds),
                         .n_event_kinds = h->n_event_kinds,
                         .counter_kinds = strs(h->counter_kinds, h->n_counter_kinds),
                         .n_counter_kinds = h->n_counter_kinds,
                         .failure_reasons = strs(h->failure_reasons, h->n_failure_reasons),
                         .n_failure_reasons = h->n_failure_reasons,
                         .labels = strs(h->labels, 2 * h->n_labels),
                         .n_labels = h->n_labels,
                         .name_separator = keep(dup_str(h->name_separator))};
    vmp_writer_options o = VMP_WRITER_OPTIONS_INIT;
    o.clock = replay_clock;
    o.clock_name = "replayed";
    o.chunk_age_ms = VMP_WRITER_NO_AGE_LIMIT;
    o.lazy_functions = o.lazy_symbols = o.lazy_code_maps = lazy;
    atomic_store(&now_ns, 0);
    if (vmp_writer_open(&rp.w, argv[2], &m, &o) != VMP_OK)
        return fail("cannot open the output");
    while ((st = vmp_reader_next(r, &rec)) == VMP_OK) {
        st = replay_record(&rp, &rec);
        if (st < 0) {
            fprintf(stderr, "vmp-replay: %s: record of type %d: %s\n", argv[1], rec.type,
                    vmp_status_str(st));
            return 1;
        }
    }
    if (st != VMP_END) {
        fprintf(stderr, "vmp-replay: %s\n", vmp_reader_errmsg(r));
        return 1;
    }
    if (vmp_writer_close(rp.w, NULL) != VMP_OK)
        return fail("cannot write the output");
    vmp_reader_close(r);
    for (size_t i = 0; i < rp.n_syms; i++)
        free(rp.syms[i].v);
    for (size_t i = 0; i < rp.n_maps; i++) {
        free(rp.maps[i].pc_map);
        free(rp.maps[i].inl);
        free(rp.maps[i].frames);
    }
    free(rp.syms);
    free(rp.maps);
    free(rp.nodes);
    free(rp.zones);
    while (n_kept > 0)
        free(kept[--n_kept]);
    free(kept);
    return 0;
}
