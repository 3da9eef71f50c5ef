/* SPDX-License-Identifier: MIT
 *
 * vmp_flame_int.h - internals shared by the flame graph files: the tree of
 * named frames that vmp_folded.c builds from resolved samples (spec.md §5.11,
 * §5.12) and vmp_svg.c and vmp_diff.c draw and compare.
 */
#ifndef VMP_FLAME_INT_H
#define VMP_FLAME_INT_H

#include <stddef.h>
#include <stdint.h>

#include "vmp_convert.h"

/* What a frame is, for colours and legends. */
enum {
    VMP_FCAT_JIT = 0,
    VMP_FCAT_INTERP = 1,
    VMP_FCAT_INLINED = 2,
    VMP_FCAT_C = 3,
    VMP_FCAT_GC = 4,
    VMP_FCAT_UNKNOWN = 5,
    VMP_FCAT_SYNTH = 6,
    VMP_FCAT_CLASS = 7,    /* an allocated or locked class (spec.md R-KND-4) */
    VMP_FCAT_SYMBOLIC = 8, /* a symbolic frame: a function whose tier is not known */
    VMP_FCAT_COUNT = 9
};

/* One node of the frame tree.  Node 0 is the root ("all"); a node's parent
 * always has a smaller index.  Children lists are built by
 * vmp_flame__finalize(), sorted by name. */
typedef struct vmp_fnode {
    uint32_t parent;
    uint32_t name;  /* index into names */
    uint32_t depth; /* 0 for the root */
    uint8_t cat;    /* VMP_FCAT_* */
    uint8_t is_range;
    uint64_t self[2]; /* weight of samples whose innermost frame this is */
} vmp_fnode;

/* An open-addressing map from 64-bit keys to 32-bit values. */
typedef struct vmp_fmap {
    uint64_t *keys;
    uint32_t *vals; /* value + 1; 0 == empty slot */
    size_t cap, used;
} vmp_fmap;

/* A name block: names never move once interned. */
typedef struct vmp_fblock vmp_fblock;

struct vmp_flame {
    unsigned int flags;
    int have[2]; /* column read */
    uint64_t totals[2];
    vmp_fnode *nodes;
    size_t n_nodes, cap_nodes;
    uint64_t *gc_self; /* [2 * node + column]: self weight in state "gc" */
    /* after vmp_flame__finalize(), [2 * node + column]: */
    uint64_t *total;   /* inclusive weight */
    uint64_t *gc;      /* inclusive weight of samples in VM state "gc" */
    vmp_fmap children; /* (parent << 32 | name) -> node */
    /* names */
    const char **names;
    size_t n_names, cap_names;
    uint32_t *name_slots; /* name id + 1; open addressing */
    size_t name_cap;
    vmp_fblock *blocks;
    /* after vmp_flame__finalize(): children of node i are kids[kid_off[i] .. kid_off[i+1]) */
    uint32_t *kids;
    uint32_t *kid_off;
    int finalized;
};

/* Build totals and sorted child lists.  @return VMP_OK or VMP_ERR_NOMEM. */
vmp_status vmp_flame__finalize(vmp_flame *f);

/* A growable text buffer for building names (vmp_folded.c). */
typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;

/* Append n bytes of s to b (NUL-terminated); -1 on no memory. */
int vmp_flame__sb_add(sbuf *b, const char *s, size_t n);

/* Write `s` escaped for XML text and attributes: & < > " ' as entities,
 * control characters as '?', bytes that are not valid UTF-8 as U+FFFD.  At
 * most `max` bytes of `s` (SIZE_MAX: all). */
void vmp_flame__put_xml(FILE *out, const char *s, size_t max);

#endif
