/* SPDX-License-Identifier: MIT
 *
 * vmp_mapstore.c - code maps kept back until a sample needs them (see the
 * header).  Entries are an array sorted by start with a short unsorted tail
 * of the newest; the tail is sorted in once it grows past RECENT_MAX, so a
 * put costs O(n / RECENT_MAX) amortised and a lookup a binary search plus
 * the entries that could reach the pc (ranges overlap only where code was
 * freed and other code placed there).
 */
#include "vmp_mapstore.h"

#include "vmp_grow.h"
#include "vmp_hash.h"
#include "vmp_search.h"
#include <stdlib.h>
#include <string.h>

#define RECENT_MAX 64u

static size_t slot_of(uint64_t id, size_t cap)
{
    return (size_t)vmp_hash64(id) & (cap - 1);
}

/* Rebuild the id index for the current array (cap: >= 2n, a power of two). */
static int index_ids(vmp_mapstore *s)
{
    size_t cap = s->id_cap ? s->id_cap : 1024;
    while (cap < 2 * (s->n + 1))
        cap *= 2;
    if (cap != s->id_cap) {
        size_t *v = calloc(cap, sizeof *v);
        if (v == NULL)
            return -1;
        free(s->by_id);
        s->by_id = v;
        s->id_cap = cap;
    } else {
        memset(s->by_id, 0, cap * sizeof *s->by_id);
    }
    for (size_t i = 0; i < s->n; i++) {
        size_t k = slot_of(s->v[i].id, cap);
        while (s->by_id[k] != 0)
            k = (k + 1) & (cap - 1);
        s->by_id[k] = i + 1;
    }
    return 0;
}

static int by_start(const void *a, const void *b)
{
    const vmp_mapstore_entry *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start ? 1 : 0;
}

static void sort_all(vmp_mapstore *s)
{
    qsort(s->v, s->n, sizeof *s->v, by_start);
    s->n_sorted = s->n;
    if (index_ids(s) != 0)
        s->id_cap = 0; /* out of memory: lookups by id find nothing */
}

vmp_mapstore_entry *vmp_mapstore__get(vmp_mapstore *s, uint64_t id)
{
    for (size_t i = s->n_sorted; i < s->n; i++) /* the newest: not indexed */
        if (s->v[i].id == id)
            return &s->v[i];
    if (s->id_cap == 0)
        return NULL;
    for (size_t k = slot_of(id, s->id_cap); s->by_id[k] != 0; k = (k + 1) & (s->id_cap - 1))
        if (s->v[s->by_id[k] - 1].id == id)
            return &s->v[s->by_id[k] - 1];
    return NULL;
}

int vmp_mapstore__put(vmp_mapstore *s, uint64_t id, uint64_t start, uint64_t size, uint64_t gen,
                      uint64_t stamp, const uint8_t *rec, size_t len, const uint64_t *fns,
                      size_t n_fns)
{
    if (s->n == s->cap && vmp_grow(&s->v, &s->cap, sizeof *s->v, 256) != 0)
        return -1;
    vmp_mapstore_entry *e = &s->v[s->n];
    *e = (vmp_mapstore_entry){.id = id,
                              .start = start,
                              .end = start + size < start ? UINT64_MAX : start + size,
                              .gen = gen,
                              .free_gen = UINT64_MAX,
                              .stamp = stamp,
                              .written = VMP_MAPSTORE_UNWRITTEN,
                              .len = len,
                              .n_fns = n_fns};
    e->rec = len ? malloc(len) : NULL;
    e->fns = n_fns ? malloc(n_fns * sizeof *fns) : NULL;
    if ((len && !e->rec) || (n_fns && !e->fns)) {
        free(e->rec);
        free(e->fns);
        return -1;
    }
    if (len)
        memcpy(e->rec, rec, len);
    if (n_fns)
        memcpy(e->fns, fns, n_fns * sizeof *fns);
    if (s->hi == 0) /* the first entry */
        s->lo = e->start;
    if (e->start < s->lo)
        s->lo = e->start;
    if (e->end > s->hi)
        s->hi = e->end;
    if (e->end - e->start > s->max_size)
        s->max_size = e->end - e->start;
    s->bytes += len;
    s->n++;
    if (s->n - s->n_sorted > RECENT_MAX)
        sort_all(s);
    return 0;
}

static int wanted(const vmp_mapstore_entry *e, uint64_t pc, uint64_t gen, uint64_t pos)
{
    return pc >= e->start && pc < e->end && gen >= e->gen && gen < e->free_gen && e->stamp <= pos &&
           e->written > pos;
}

size_t vmp_mapstore__find(vmp_mapstore *s, uint64_t pc, uint64_t gen, uint64_t pos,
                          vmp_mapstore_entry **out, size_t max)
{
    size_t got = 0;
    if (pc < s->lo || pc >= s->hi)
        return 0;
    /* the sorted part: the last entry starting at or before pc, and those
     * before it that may still reach it */
    size_t lo =
        vmp_upper_bound(s->v, s->n_sorted, sizeof *s->v, offsetof(vmp_mapstore_entry, start), pc);
    for (size_t i = lo; i-- > 0 && got < max;) {
        if (pc - s->v[i].start >= s->max_size)
            break;
        if (wanted(&s->v[i], pc, gen, pos))
            out[got++] = &s->v[i];
    }
    for (size_t i = s->n_sorted; i < s->n && got < max; i++)
        if (wanted(&s->v[i], pc, gen, pos))
            out[got++] = &s->v[i];
    return got;
}

void vmp_mapstore__mark(vmp_mapstore *s, vmp_mapstore_entry *e, uint64_t pos)
{
    if (e->written == VMP_MAPSTORE_UNWRITTEN)
        s->bytes -= e->len;
    if (pos < e->written)
        e->written = pos;
}

void vmp_mapstore__prune(vmp_mapstore *s, uint64_t pos)
{
    size_t k = 0, sorted = 0;
    for (size_t i = 0; i < s->n; i++) {
        vmp_mapstore_entry *e = &s->v[i];
        if (e->written <= pos) {
            free(e->rec);
            free(e->fns);
            continue;
        }
        if (i < s->n_sorted)
            sorted++;
        s->v[k++] = *e;
    }
    if (k == s->n)
        return;
    s->n = k;
    s->n_sorted = sorted; /* order kept: the sorted part stays sorted */
    if (index_ids(s) != 0)
        s->id_cap = 0;
}

void vmp_mapstore__free(vmp_mapstore *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->v[i].rec);
        free(s->v[i].fns);
    }
    free(s->v);
    free(s->by_id);
    memset(s, 0, sizeof *s);
}
