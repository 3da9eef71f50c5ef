/* SPDX-License-Identifier: MIT
 *
 * vmp_fnstore.c - FUNCTION records kept back until first use (see the
 * header).
 */
#include "vmp_fnstore.h"

#include "vmp_hash.h"
#include <stdlib.h>
#include <string.h>

static size_t slot_of(uint64_t id, size_t cap)
{
    return (size_t)vmp_hash64(id) & (cap - 1);
}

static int grow(vmp_fnstore *s)
{
    size_t cap = s->cap ? s->cap * 2 : 1024, i;
    vmp_fnstore_slot *v = calloc(cap, sizeof *v);
    if (v == NULL)
        return -1;
    for (i = 0; i < s->cap; i++) {
        size_t k;
        if (s->slots[i].id == 0)
            continue;
        for (k = slot_of(s->slots[i].id, cap); v[k].id != 0; k = (k + 1) & (cap - 1))
            ;
        v[k] = s->slots[i];
    }
    free(s->slots);
    s->slots = v;
    s->cap = cap;
    return 0;
}

vmp_fnstore_slot *vmp_fnstore__get(vmp_fnstore *s, uint64_t id)
{
    size_t k;
    if (s->cap == 0 || id == 0)
        return NULL;
    for (k = slot_of(id, s->cap); s->slots[k].id != 0; k = (k + 1) & (s->cap - 1)) {
        if (s->slots[k].id == id)
            return &s->slots[k];
    }
    return NULL;
}

/* A new empty slot for `id` (not in the store), or NULL when out of memory. */
static vmp_fnstore_slot *add_slot(vmp_fnstore *s, uint64_t id)
{
    size_t k;
    if ((s->n + 1) * 2 > s->cap && grow(s) != 0)
        return NULL;
    for (k = slot_of(id, s->cap); s->slots[k].id != 0; k = (k + 1) & (s->cap - 1))
        ;
    s->slots[k].id = id;
    s->slots[k].off = s->slots[k].len = 0;
    s->slots[k].written = VMP_FNSTORE_UNWRITTEN;
    s->n++;
    return &s->slots[k];
}

int vmp_fnstore__put(vmp_fnstore *s, uint64_t id, const uint8_t *rec, size_t len)
{
    vmp_fnstore_slot *slot = vmp_fnstore__get(s, id);
    int named = slot != NULL;
    if (slot && slot->len)
        return 0;
    if (vmp_buf__reserve(&s->blob, len) != 0) {
        s->blob.failed = 0;
        return -1;
    }
    if (!slot && !(slot = add_slot(s, id)))
        return -1;
    slot->off = s->blob.len;
    slot->len = len;
    vmp_buf__append(&s->blob, rec, len);
    return named;
}

vmp_fnstore_slot *vmp_fnstore__due(vmp_fnstore *s, uint64_t id, uint64_t pos)
{
    vmp_fnstore_slot *slot = vmp_fnstore__get(s, id);
    if (!slot) {
        if (id != 0)
            (void)add_slot(s, id); /* named, no record (len 0) */
        return NULL;
    }
    return slot->len && slot->written > pos ? slot : NULL;
}

void vmp_fnstore__free(vmp_fnstore *s)
{
    free(s->slots);
    vmp_buf__free(&s->blob);
    memset(s, 0, sizeof *s);
}
