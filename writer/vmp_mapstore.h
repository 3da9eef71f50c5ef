/* SPDX-License-Identifier: MIT
 *
 * vmp_mapstore.h - the writer's code maps kept back until a sample lands in
 * their code (vmp_writer_options.lazy_code_maps, spec.md R-CODE-3): per code
 * object, its first placement, the encoded CODE_MAP record of its pc_map and
 * inline records, and the functions it names (its own and those of its
 * inline chains), whose FUNCTION records go before the map.
 *
 * Lookups by address and generation answer "which kept maps does a pc at
 * this generation need": every entry whose first placement holds the pc and
 * that exists at the generation (CODE_FREE records its end; a code object
 * that moves has its map written first, and one a snapshot drops counts as
 * alive: a superset of what the reader resolves through, so every sample
 * that needs a map gets it).
 *
 * Internal to libvmp-writer; the caller serialises every call (meta_mu).
 */
#ifndef VMP_MAPSTORE_H
#define VMP_MAPSTORE_H

#include <stddef.h>
#include <stdint.h>

/** Not in the file yet. */
#define VMP_MAPSTORE_UNWRITTEN UINT64_MAX

typedef struct vmp_mapstore_entry {
    uint64_t id, start, end; /* the code's first placement */
    uint64_t gen, free_gen;  /* it exists at generations [gen, free_gen) */
    uint64_t stamp;          /* its CODE_OBJECT precedes the samples from this ring position */
    uint64_t written;        /* the file holds the map before every sample at this ring
                                position or later; VMP_MAPSTORE_UNWRITTEN */
    uint8_t *rec;            /* the CODE_MAP record (len bytes; 0 == no map, functions only) */
    size_t len;
    uint64_t *fns; /* n_fns function ids it names */
    size_t n_fns;
} vmp_mapstore_entry;

typedef struct vmp_mapstore {
    vmp_mapstore_entry *v; /* v[0, n_sorted) sorted by start, then the newest */
    size_t n, cap, n_sorted;
    size_t *by_id;     /* open addressing by id: index in v + 1, or 0 */
    size_t id_cap;     /* a power of two, or 0 */
    uint64_t lo, hi;   /* every entry's range lies in [lo, hi) */
    uint64_t max_size; /* the longest range */
    size_t bytes;      /* held by entries not written */
} vmp_mapstore;

/** Keep code object `id` placed at [start, start + size) from generation
 *  `gen` on, whose CODE_OBJECT precedes the samples from ring position
 *  `stamp`: its CODE_MAP record `rec` (`len` bytes, may be 0) and the
 *  `n_fns` functions it names (copied).
 *  @return 0, or -1 when out of memory (nothing kept). */
int vmp_mapstore__put(vmp_mapstore *s, uint64_t id, uint64_t start, uint64_t size, uint64_t gen,
                      uint64_t stamp, const uint8_t *rec, size_t len, const uint64_t *fns,
                      size_t n_fns);

/** The entry of code `id`, or NULL.  Valid until the next put, find or prune. */
vmp_mapstore_entry *vmp_mapstore__get(vmp_mapstore *s, uint64_t id);

/** Up to `max` entries whose range holds `pc` at generation `gen`, whose
 *  CODE_OBJECT precedes the sample at ring position `pos` and whose map the
 *  file does not hold before that position, into `out`.  Valid until the
 *  next put, find or prune.  @return how many (at most `max`). */
size_t vmp_mapstore__find(vmp_mapstore *s, uint64_t pc, uint64_t gen, uint64_t pos,
                          vmp_mapstore_entry **out, size_t max);

/** Mark `e` written before the samples from ring position `pos` on. */
void vmp_mapstore__mark(vmp_mapstore *s, vmp_mapstore_entry *e, uint64_t pos);

/** Forget the entries written before the samples from ring position `pos`
 *  (no later sample needs them). */
void vmp_mapstore__prune(vmp_mapstore *s, uint64_t pos);

/** Release everything; `s` is empty afterwards. */
void vmp_mapstore__free(vmp_mapstore *s);

#endif
