/* SPDX-License-Identifier: MIT
 *
 * vmp_hmap.c - the pair-keyed hash map, the id map on it and array growth
 * used by the resolution tables (support for spec.md §5 "Resolution of a pc").
 */
#include <stdlib.h>
#include <string.h>

#include "vmp_analyze_int.h"

static size_t slot_of(const vmp_hmap *m, uint64_t a, uint64_t b)
{
    return (size_t)vmp_hash64(a * 0x9e3779b97f4a7c15ull ^ vmp_hash64(b)) & (m->cap - 1);
}

uint32_t vmp_hmap__get(const vmp_hmap *m, uint64_t a, uint64_t b)
{
    size_t i;
    if (m->cap == 0)
        return 0;
    for (i = slot_of(m, a, b);; i = (i + 1) & (m->cap - 1)) {
        const vmp_hmap_entry *e = &m->e[i];
        if (e->v == 0)
            return 0;
        if (e->a == a && e->b == b)
            return e->v;
    }
}

static void put_nogrow(vmp_hmap *m, uint64_t a, uint64_t b, uint32_t v)
{
    size_t i;
    for (i = slot_of(m, a, b);; i = (i + 1) & (m->cap - 1)) {
        vmp_hmap_entry *e = &m->e[i];
        if (e->v == 0) {
            e->a = a;
            e->b = b;
            e->v = v;
            m->n++;
            return;
        }
        if (e->a == a && e->b == b) {
            e->v = v;
            return;
        }
    }
}

int vmp_hmap__put(vmp_hmap *m, uint64_t a, uint64_t b, uint32_t v)
{
    if ((m->n + 1) * 4 >= m->cap * 3) {
        size_t ncap = m->cap ? m->cap * 2 : 64, i;
        vmp_hmap old = *m;
        vmp_hmap_entry *e = calloc(ncap, sizeof *e);
        if (!e)
            return -1;
        m->e = e;
        m->cap = ncap;
        m->n = 0;
        for (i = 0; i < old.cap; i++)
            if (old.e[i].v)
                put_nogrow(m, old.e[i].a, old.e[i].b, old.e[i].v);
        free(old.e);
    }
    put_nogrow(m, a, b, v);
    return 0;
}

void vmp_hmap__clear(vmp_hmap *m)
{
    if (m->cap)
        memset(m->e, 0, m->cap * sizeof *m->e);
    m->n = 0;
}

void vmp_hmap__free(vmp_hmap *m)
{
    free(m->e);
    m->e = NULL;
    m->cap = m->n = 0;
}

int vmp_idmap__put(vmp_idmap *m, uint64_t id, uint32_t v)
{
    if (id >= m->cap && id < 2 * (uint64_t)m->n + 4096) {
        size_t old = m->cap;
        if (vmp_grow__((void **)&m->dense, &m->cap, (size_t)id + 1, sizeof *m->dense))
            return -1;
        memset(m->dense + old, 0, (m->cap - old) * sizeof *m->dense);
    }
    if (id < m->cap)
        m->dense[id] = v;
    else if (vmp_hmap__put(&m->sparse, id, 0, v))
        return -1;
    m->n++;
    return 0;
}

void vmp_idmap__clear(vmp_idmap *m)
{
    if (m->cap)
        memset(m->dense, 0, m->cap * sizeof *m->dense);
    vmp_hmap__clear(&m->sparse);
    m->n = 0;
}

void vmp_idmap__free(vmp_idmap *m)
{
    free(m->dense);
    m->dense = NULL;
    m->cap = m->n = 0;
    vmp_hmap__free(&m->sparse);
}

size_t vmp_idmap__bytes(const vmp_idmap *m)
{
    return m->cap * sizeof *m->dense + m->sparse.cap * sizeof(vmp_hmap_entry);
}

int vmp_grow__(void **p, size_t *cap, size_t need, size_t elem)
{
    size_t ncap;
    void *np;
    if (need <= *cap)
        return 0;
    ncap = *cap ? *cap : 16;
    while (ncap < need)
        ncap *= 2;
    np = realloc(*p, ncap * elem);
    if (!np)
        return -1;
    *p = np;
    *cap = ncap;
    return 0;
}
