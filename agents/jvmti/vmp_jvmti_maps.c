/* SPDX-License-Identifier: MIT
 *
 * vmp_jvmti_maps.c - function set and live code map of the HotSpot agent
 * (keeps R-ID-1 for functions and R-GEN-4 for code objects, spec.md §5).
 */
#include "vmp_jvmti_maps.h"

#include "vmp_grow.h"
#include "vmp_hash.h"
#include "vmp_search.h"
#include <stdlib.h>
#include <string.h>

static void idset_put(uint64_t *slots, size_t cap, uint64_t key)
{
    size_t i = (size_t)vmp_hash64(key) & (cap - 1);
    while (slots[i] != 0 && slots[i] != key)
        i = (i + 1) & (cap - 1);
    slots[i] = key;
}

int vmp_jvmti__idset_add(vmp_jvmti_idset *s, uint64_t key)
{
    if (key == 0)
        return -1;
    if (vmp_jvmti__idset_has(s, key))
        return 0;
    if ((s->n + 1) * 2 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1024, i;
        uint64_t *slots = calloc(cap, sizeof *slots);
        if (slots == NULL)
            return -1;
        for (i = 0; i < s->cap; i++) {
            if (s->slots[i] != 0)
                idset_put(slots, cap, s->slots[i]);
        }
        free(s->slots);
        s->slots = slots;
        s->cap = cap;
    }
    idset_put(s->slots, s->cap, key);
    s->n++;
    return 1;
}

int vmp_jvmti__idset_has(const vmp_jvmti_idset *s, uint64_t key)
{
    size_t i;
    if (s->cap == 0 || key == 0)
        return 0;
    i = (size_t)vmp_hash64(key) & (s->cap - 1);
    while (s->slots[i] != 0) {
        if (s->slots[i] == key)
            return 1;
        i = (i + 1) & (s->cap - 1);
    }
    return 0;
}

void vmp_jvmti__idset_free(vmp_jvmti_idset *s)
{
    free(s->slots);
    memset(s, 0, sizeof *s);
}

/* Index of the first object whose start is >= `start`. */
static size_t lower_bound(const vmp_jvmti_codemap *m, uint64_t start)
{
    return vmp_lower_bound(m->v, m->n, sizeof *m->v, offsetof(vmp_jvmti_code, start), start);
}

static uint64_t end_of(const vmp_jvmti_code *c)
{
    return c->start + c->size < c->start ? UINT64_MAX : c->start + c->size;
}

size_t vmp_jvmti__codemap_overlaps(const vmp_jvmti_codemap *m, uint64_t *ids_out, size_t max,
                                   uint64_t start, uint64_t size)
{
    uint64_t end = start + size < start ? UINT64_MAX : start + size;
    size_t i = lower_bound(m, start), count = 0;

    /* Only the object just before `start` can reach into the range from below. */
    if (i > 0 && end_of(&m->v[i - 1]) > start) {
        if (count < max)
            ids_out[count] = m->v[i - 1].id;
        count++;
    }
    for (; i < m->n && m->v[i].start < end; i++) {
        if (count < max)
            ids_out[count] = m->v[i].id;
        count++;
    }
    return count;
}

int vmp_jvmti__codemap_insert(vmp_jvmti_codemap *m, const vmp_jvmti_code *c)
{
    size_t i;
    uint64_t dummy;

    if (c->size == 0 || vmp_jvmti__codemap_overlaps(m, &dummy, 1, c->start, c->size) != 0)
        return -1;
    if (m->n == m->cap && vmp_grow(&m->v, &m->cap, sizeof *m->v, 256) != 0)
        return -1;
    i = lower_bound(m, c->start);
    memmove(&m->v[i + 1], &m->v[i], (m->n - i) * sizeof *m->v);
    m->v[i] = *c;
    m->n++;
    return 0;
}

const vmp_jvmti_code *vmp_jvmti__codemap_at(const vmp_jvmti_codemap *m, uint64_t start)
{
    size_t i = lower_bound(m, start);
    return i < m->n && m->v[i].start == start ? &m->v[i] : NULL;
}

int vmp_jvmti__codemap_remove(vmp_jvmti_codemap *m, uint64_t id)
{
    size_t i;
    for (i = 0; i < m->n; i++) {
        if (m->v[i].id == id) {
            memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof *m->v);
            m->n--;
            return 1;
        }
    }
    return 0;
}

void vmp_jvmti__codemap_free(vmp_jvmti_codemap *m)
{
    free(m->v);
    memset(m, 0, sizeof *m);
}
