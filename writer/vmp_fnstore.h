/* SPDX-License-Identifier: MIT
 *
 * vmp_fnstore.h - the writer's FUNCTION records kept back until a record
 * names them (vmp_writer_options.lazy_functions): each function's encoded
 * record, and the ring position from which the file is known to hold it.
 *
 * Internal to libvmp-writer; the caller serialises every call (meta_mu).
 */
#ifndef VMP_FNSTORE_H
#define VMP_FNSTORE_H

#include <stddef.h>
#include <stdint.h>

#include "vmp_encode.h"

/** Not in the file yet. */
#define VMP_FNSTORE_UNWRITTEN UINT64_MAX

typedef struct vmp_fnstore_slot {
    uint64_t id;      /* 0 == empty */
    size_t off;       /* the record's bytes in the store's blob */
    size_t len;       /* 0: no record yet, the file named the function (due) */
    uint64_t written; /* the file holds the record before every sample at
                         this ring position or later; VMP_FNSTORE_UNWRITTEN */
} vmp_fnstore_slot;

typedef struct vmp_fnstore {
    vmp_fnstore_slot *slots; /* open addressing by id */
    size_t cap, n;           /* cap: a power of two, or 0 */
    vmp_buf blob;            /* the encoded records */
} vmp_fnstore;

/** Keep the encoded FUNCTION record `rec` (len > 0) of function `id` (>= 1),
 *  unless one is kept already (spec R-ID-5: the first definition holds).
 *  @return 0; 1 when kept and the file named the function before
 *  (vmp_fnstore__due()): the caller writes it now; -1 when out of
 *  memory (nothing kept). */
int vmp_fnstore__put(vmp_fnstore *s, uint64_t id, const uint8_t *rec, size_t len);

/** The slot of function `id` when its kept record is not in the file before
 *  ring position `pos` (the caller writes it there and sets `written`);
 *  NULL when it is, or when no record is kept.  In that case the file names
 *  a function the VM has not described: the id is remembered, so that its
 *  record, when described, is written at once instead of kept back (the
 *  naming node will not be written again; out of memory: function#ID). */
vmp_fnstore_slot *vmp_fnstore__due(vmp_fnstore *s, uint64_t id, uint64_t pos);

/** The slot of function `id`, or NULL when none was kept. */
vmp_fnstore_slot *vmp_fnstore__get(vmp_fnstore *s, uint64_t id);

/** Release everything; `s` is empty afterwards. */
void vmp_fnstore__free(vmp_fnstore *s);

#endif
