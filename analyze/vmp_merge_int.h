/* SPDX-License-Identifier: MIT
 *
 * vmp_merge_int.h - the merger shared by vmp_merge.c (the header and the run
 * over the inputs) and vmp_merge_records.c (each input's records and
 * stacks).  Internal: not installed.
 */
#ifndef VMP_MERGE_INT_H
#define VMP_MERGE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "vmp_analyze.h"
#include "vmp_analyze_int.h"
#include "vmp_rewrite.h"

enum {
    V_STATES,
    V_KINDS,
    V_TIERS,
    V_EVENTS,
    V_COUNTERS,
    V_REASONS,
    V_SAMPLE_KINDS, /* spec §5.15: matched by name; kind k is index k - 1 */
    N_VOCAB
};

typedef struct strv {
    vmp_str *v;
    size_t n, cap;
} strv;

typedef struct innode {
    uint64_t parent, value, bcpc;
    int is_function, has_bcpc;
    uint32_t memo_as, memo_out; /* the first (resolved stack -> output node) */
} innode;

/* A module of the output, kept to recognise the same binary in later inputs. */
typedef struct outmod {
    uint32_t id;
    uint64_t bias, start, end;
    unsigned char *build_id;
    size_t build_id_size;
} outmod;

/* A module of the input being merged. */
typedef struct inmod {
    uint64_t id, start, end;
    uint32_t out_id; /* 0: not in the output (it overlaps another input's) */
    int owned;       /* this input wrote it, so it writes its symbols */
} inmod;

typedef struct input {
    uint32_t *vmap[N_VOCAB]; /* input index -> output index */
    size_t n_vmap[N_VOCAB];
    uint64_t shift; /* ns added to every time */
    uint64_t base;  /* generations added */
    uint64_t max_gen;
} input;

typedef struct merger {
    vmp_record_writer *w;
    strv vocab[N_VOCAB];
    strv units; /* the output's sample_units: each kind's from the first input naming it */
    strv labels;
    input *in;
    size_t n_in;
    uint32_t next_fn, next_zone, next_code, next_node, next_thread, next_module;
    outmod *omods;
    size_t n_omods, cap_omods;
    inmod *imods;
    size_t n_imods, cap_imods;
    uint32_t boundary_zone;
    vmp_hmap pc_nodes, fn_nodes; /* output stack nodes, interned */
    /* per input */
    vmp_hmap zones, codes, fns, threads, named, memo, natives;
    innode *nodes;
    size_t n_nodes, cap_nodes;
    vmp_idmap node_ids; /* input node id -> index + 1 */
    uint32_t *in_zones;
    size_t n_in_zones, cap_in_zones;
    uint64_t *tmp;
    size_t cap_tmp;
    vmp_rec_inline *tmp_inl;
    size_t cap_tmp_inl;
    uint32_t *chain_in;
    uint32_t *chain_as;
    size_t cap_chain_in, cap_chain_as;
    /* totals */
    vmp_rec_end end;
    char *err;
    size_t err_size;
} merger;

/* ---- vmp_merge.c ---- */

vmp_status vmp_merge__nomem(merger *m);
vmp_status vmp_merge__emit(merger *m, const vmp_record *rec);
uint64_t vmp_merge__remap_vocab(const input *in, int which, uint64_t idx);
uint32_t vmp_merge__map_id(vmp_hmap *h, uint64_t id, uint32_t *next, int *fresh);
int vmp_merge__ensure_tmp(merger *m, size_t n);
int vmp_merge__remap_inlines(merger *m, const vmp_rec_inline **inlines, size_t n);

/* ---- vmp_merge_records.c ---- */

vmp_status vmp_merge__name_threads(merger *m);
vmp_status vmp_merge__take_record(merger *m, input *in, vmp_analysis *a, vmp_record *rec,
                                  const vmp_asample *as);

#endif
