/* SPDX-License-Identifier: MIT
 *
 * vmp_jvmti_maps.h - the HotSpot agent's bookkeeping: the set of functions
 * already written (spec.md §5.5) and the live code objects of the code cache
 * (spec.md §5.7, §5.10), so that unloads become CODE_FREE records and code
 * objects never overlap at one generation (R-GEN-4).
 *
 * Internal to libvmp-jvmti.  Not thread-safe: the agent guards both maps with
 * its mutex.  Nothing here is async-signal-safe (the maps allocate).
 */
#ifndef VMP_JVMTI_MAPS_H
#define VMP_JVMTI_MAPS_H

#include <stddef.h>
#include <stdint.h>

/** A set of non-zero 64-bit keys (open addressing). */
typedef struct vmp_jvmti_idset {
    uint64_t *slots; /* 0 == empty */
    size_t cap;      /* power of 2, or 0 */
    size_t n;
} vmp_jvmti_idset;

/** Add `key` (non-zero).  @return 1 if added, 0 if present, -1 on no memory. */
int vmp_jvmti__idset_add(vmp_jvmti_idset *s, uint64_t key);

/** @return 1 if `key` is in the set, else 0. */
int vmp_jvmti__idset_has(const vmp_jvmti_idset *s, uint64_t key);

/** Release the set's memory; the set is empty afterwards. */
void vmp_jvmti__idset_free(vmp_jvmti_idset *s);

/** One live code object. */
typedef struct vmp_jvmti_code {
    uint64_t start;
    uint64_t size; /* >= 1 */
    uint64_t id;   /* the code id written to the file */
    uint64_t tag;  /* the jmethodID for nmethods, 0 for stubs */
} vmp_jvmti_code;

/** Live code objects sorted by start; they never overlap. */
typedef struct vmp_jvmti_codemap {
    vmp_jvmti_code *v;
    size_t n, cap;
} vmp_jvmti_codemap;

/** Write into ids_out (at most `max`) the ids of live objects that overlap
 *  [start, start + size).  @return the number of overlapping objects (may
 *  exceed `max`: then call again after removing the first ones). */
size_t vmp_jvmti__codemap_overlaps(const vmp_jvmti_codemap *m, uint64_t *ids_out, size_t max,
                                   uint64_t start, uint64_t size);

/** Insert `c`, which must not overlap a live object.
 *  @return 0, or -1 on no memory or overlap. */
int vmp_jvmti__codemap_insert(vmp_jvmti_codemap *m, const vmp_jvmti_code *c);

/** The live object that starts exactly at `start`, or NULL.  The pointer is
 *  valid until the next insert or remove. */
const vmp_jvmti_code *vmp_jvmti__codemap_at(const vmp_jvmti_codemap *m, uint64_t start);

/** Remove the live object with code id `id`.  @return 1 if removed, else 0. */
int vmp_jvmti__codemap_remove(vmp_jvmti_codemap *m, uint64_t id);

/** Release the map's memory. */
void vmp_jvmti__codemap_free(vmp_jvmti_codemap *m);

#endif
