/* SPDX-License-Identifier: MIT
 *
 * vmp_validate_int.h - the validator's state, shared by vmp_validate.c (the
 * pass over the records, ids, samples, END) and vmp_validate_code.c (code
 * zones and code objects across generations: R-GEN-*).  Internal: not
 * installed.
 */
#ifndef VMP_VALIDATE_INT_H
#define VMP_VALIDATE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "vmp_validate.h"

/* ---- An open-addressing hash map uint64 -> uint64 -------------------------- */

typedef struct idmap {
    uint64_t *keys;
    uint64_t *vals;
    unsigned char *used;
    size_t cap; /* power of 2, or 0 */
    size_t n;
} idmap;

/* ---- Code objects and zones -------------------------------------------------- */

typedef struct code_slot {
    uint64_t id, zone, start, size;
    uint64_t stamp; /* the compaction that last listed it (batch_compaction()) */
    int freed;
    int own_map; /* its CODE_OBJECT has a pc_map or inline records */
} code_slot;

/* A zone's live code objects of non-zero size, as a treap ordered by start
 * (starts are distinct: equal starts overlap, R-GEN-4).  Nodes live in a pool
 * and link by index + 1; priorities are random, so the expected depth is
 * O(log n) whatever order a file adds objects in. */
typedef struct live_node {
    uint64_t start, end, id;
    uint32_t left, right; /* index + 1, 0 == none */
    uint32_t prio;
    uint32_t slot; /* index of its code_slot */
} live_node;

typedef struct zone_state {
    live_node *pool;
    uint32_t n_pool, cap_pool;
    uint32_t root, free_list; /* index + 1; free nodes link through `left` */
} zone_state;

typedef struct vstate {
    vmp_validate_report *rep;
    unsigned major;                     /* the file's format_major */
    const vmp_record *rec;              /* the record being checked */
    idmap nodes, zones, modules, codes; /* zones: id -> index into zone_v */
    idmap fns;                          /* FUNCTION ids defined, or named late (val 1) */
    code_slot *code_v;
    size_t n_code, cap_code;
    zone_state *zone_v;
    size_t n_zone, cap_zone;
    int have_change;
    uint64_t last_gen; /* generation of the latest change record */
    uint64_t max_sample_gen;
    uint64_t max_sample_gen_chunk, max_sample_gen_offset, max_sample_gen_record;
    uint64_t samples, failed;
    uint64_t kind_samples; /* KIND_SAMPLE records (spec R-KND-2) */
    uint64_t n_kinds;      /* the header's sample kinds */
    int seen_header, seen_end;
    int nomem;
    const idmap *listed; /* the ids a snapshot lists, while it is checked */
    uint64_t stamp;      /* compactions checked */
    live_node *scratch;  /* batch_compaction(): the zone's objects, sorted */
    uint32_t *spine;     /* ... and the right spine of the treap it builds */
    size_t cap_scratch;
} vstate;

/* ---- vmp_validate.c ---- */

const char *vmp_validate__rec_name(const vmp_record *rec);
int vmp_validate__fail(vstate *v, const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int vmp_validate__oom(vstate *v);
uint64_t vmp_validate__end_of(uint64_t start, uint64_t size);
uint64_t *vmp_validate__idmap_find(const idmap *m, uint64_t key);
int vmp_validate__idmap_put(idmap *m, uint64_t key, uint64_t val);
void vmp_validate__idmap_free(idmap *m);

/* ---- vmp_validate_code.c ---- */

zone_state *vmp_validate__zone_of(vstate *v, uint64_t zone);
void vmp_validate__live_remove(zone_state *z, const code_slot *c);
int vmp_validate__live_insert(vstate *v, zone_state *z, const code_slot *c);
code_slot *vmp_validate__live_code(vstate *v, uint64_t id, const char *rule);
int vmp_validate__change_generation(vstate *v, uint64_t gen);
int vmp_validate__define_id(vstate *v, idmap *m, uint64_t id, uint64_t val, const char *what);
int vmp_validate__check_code_map(vstate *v, const vmp_rec_code_map *cm);
int vmp_validate__check_code_object(vstate *v, const vmp_rec_code_object *co);
int vmp_validate__check_compaction(vstate *v, const vmp_rec_code_compaction *cc);
int vmp_validate__check_snapshot(vstate *v, const vmp_rec_code_snapshot *cs);

#endif
