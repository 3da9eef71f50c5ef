/* SPDX-License-Identifier: MIT
 *
 * vmp_intern.c - open-addressing hash table of stack nodes (spec.md §5.11).
 */
#include "vmp_intern.h"

#include <stdlib.h>

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

static uint64_t hash(uint64_t parent, uint64_t value, uint32_t bcpc, uint32_t kind)
{
    return mix(parent * 0x9e3779b97f4a7c15ull ^ mix(value) ^ ((uint64_t)bcpc << 1 | kind));
}

int vmp_intern__init(vmp_intern *t)
{
    t->cap = 1024;
    t->count = 0;
    t->next_id = 1;
    t->tab = calloc(t->cap, sizeof *t->tab);
    return t->tab ? 0 : -1;
}

void vmp_intern__free(vmp_intern *t)
{
    free(t->tab);
    t->tab = NULL;
}

static vmp_intern_entry *find(vmp_intern_entry *tab,
                              size_t cap,
                              uint64_t parent,
                              uint64_t value,
                              uint32_t bcpc,
                              uint32_t kind)
{
    size_t i = (size_t)hash(parent, value, bcpc, kind) & (cap - 1);
    for (;;) {
        vmp_intern_entry *e = &tab[i];
        if (e->id == 0 ||
            (e->parent == parent && e->value == value && e->bcpc == bcpc && e->kind == kind))
            return e;
        i = (i + 1) & (cap - 1);
    }
}

static int grow(vmp_intern *t)
{
    size_t cap = t->cap * 2;
    vmp_intern_entry *tab = calloc(cap, sizeof *tab);
    if (!tab)
        return -1;
    for (size_t i = 0; i < t->cap; i++) {
        vmp_intern_entry *e = &t->tab[i];
        if (e->id)
            *find(tab, cap, e->parent, e->value, e->bcpc, e->kind) = *e;
    }
    free(t->tab);
    t->tab = tab;
    t->cap = cap;
    return 0;
}

int vmp_intern__get(vmp_intern *t, uint64_t parent, const vmp_frame *f, uint64_t *id_out)
{
    uint32_t kind = f->kind == VMP_FRAME_FUNCTION ? 1u : 0u;
    uint32_t bcpc = kind ? f->bcpc : 0u; /* a machine frame has no bcpc */
    vmp_intern_entry *e = find(t->tab, t->cap, parent, f->value, bcpc, kind);
    if (e->id) {
        *id_out = e->id;
        return 0;
    }
    if ((t->count + 1) * 4 > t->cap * 3) {
        if (grow(t) < 0)
            return -1;
        e = find(t->tab, t->cap, parent, f->value, bcpc, kind);
    }
    e->parent = parent;
    e->value = f->value;
    e->bcpc = bcpc;
    e->kind = kind;
    e->id = t->next_id++;
    t->count++;
    *id_out = e->id;
    return 1;
}
