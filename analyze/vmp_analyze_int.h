/* SPDX-License-Identifier: MIT
 *
 * vmp_analyze_int.h - internal helpers shared by the analyze/ sources: a
 * hash map from a pair of 64-bit keys to a 32-bit value, growable arrays
 * and one-line error messages
 * (no spec section: implementation support for spec.md §5 resolution).
 */
#ifndef VMP_ANALYZE_INT_H
#define VMP_ANALYZE_INT_H

#include "vmp_analyze.h"
#include "vmp_hash.h"
#include <stddef.h>
#include <stdint.h>

/* Open-addressing map (a, b) -> v; v == 0 means "absent", so callers store
 * ids >= 1 or index + 1. */
typedef struct vmp_hmap_entry {
    uint64_t a, b;
    uint32_t v;
} vmp_hmap_entry;

typedef struct vmp_hmap {
    vmp_hmap_entry *e;
    size_t cap; /* power of two, or 0 */
    size_t n;
} vmp_hmap;

uint32_t vmp_hmap__get(const vmp_hmap *m, uint64_t a, uint64_t b);
/* Insert or replace; returns 0 on success, -1 when out of memory. */
int vmp_hmap__put(vmp_hmap *m, uint64_t a, uint64_t b, uint32_t v);
void vmp_hmap__clear(vmp_hmap *m);
void vmp_hmap__free(vmp_hmap *m);

/* Ids (>= 1) of a file's records -> index + 1 (0: none).  Writers number
 * densely, so an id below twice the entries + 4096 goes to an array, any
 * other to a hash map; an id put into the map is still found there once
 * the array has grown past it. */
typedef struct vmp_idmap {
    uint32_t *dense; /* id -> v, for ids below cap */
    size_t cap;
    vmp_hmap sparse; /* the ids put past the array's reach */
    size_t n;        /* entries put */
} vmp_idmap;

static inline uint32_t vmp_idmap__get(const vmp_idmap *m, uint64_t id)
{
    if (id < m->cap && (m->dense[id] || !m->sparse.n))
        return m->dense[id];
    return vmp_hmap__get(&m->sparse, id, 0);
}

/* Map id to v (>= 1); the caller has checked that id is absent.  Returns 0,
 * or -1 when out of memory (nothing changed). */
int vmp_idmap__put(vmp_idmap *m, uint64_t id, uint32_t v);
/* Forget every id, keeping the memory. */
void vmp_idmap__clear(vmp_idmap *m);
void vmp_idmap__free(vmp_idmap *m);
/* The bytes it holds. */
size_t vmp_idmap__bytes(const vmp_idmap *m);

/* The length of a function's scope without a hidden class's unique suffix
 * (vmp_analyze.h "Naming rules"); `len` when it has none. */
size_t vmp_analysis__hidden_scope_len(const char *scope, size_t len);

/* Ensure room for `need` elements of `elem` bytes at *p (capacity *cap).
 * Returns 0, or -1 when out of memory (*p unchanged). */
int vmp_grow__(void **p, size_t *cap, size_t need, size_t elem);

/* Format a one-line error message into err (size bytes, cut to fit); does
 * nothing when err is NULL or size is 0.  The messages of vmp_filter_run(),
 * vmp_recompress_run() and the converters.  Thread-safe (no state). */
void vmp_set_err__(char *err, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* For a tool that writes the sample record `s` again: a SAMPLE_BLOCK's
 * sample whose pc is its innermost node's (spec R-BLK-3) gets that pc, as
 * the analysis resolved it into `as`, written out (a SAMPLE record has no
 * other way to say it). */
static inline void vmp_sample_own_pc__(vmp_rec_sample *s, const vmp_asample *as)
{
    if (s->pc_is_leaf && as->has_pc) {
        s->pc = as->pc;
        s->has_pc = 1;
    }
}

#endif
