/* SPDX-License-Identifier: MIT
 *
 * vmp_intern.c - open-addressing hash table of stack nodes (spec.md §5.11).
 */
#include "vmp_intern.h"

#include "vmp_hash.h"
#include <stdlib.h>
#include <string.h>

static uint64_t hash(uint64_t parent, uint64_t value, uint32_t bcpc, uint32_t kind)
{
    return vmp_hash64(parent * 0x9e3779b97f4a7c15ull ^ vmp_hash64(value) ^
                      ((uint64_t)bcpc << 1 | kind));
}

int vmp_intern__init(vmp_intern *t)
{
    t->cap = 1024;
    t->count = 0;
    t->next_id = 1;
    t->tab = calloc(t->cap, sizeof *t->tab);
    t->cache = NULL;
    t->cache_frames = NULL;
    t->cache_slots = VMP_STACK_CACHE_SLOTS;
    t->cache_lookups = 0;
    t->cache_evictions = 0;
    t->cache_uses = 0;
    return t->tab ? 0 : -1;
}

void vmp_intern__free(vmp_intern *t)
{
    free(t->tab);
    t->tab = NULL;
    free(t->cache);
    t->cache = NULL;
    free(t->cache_frames);
    t->cache_frames = NULL;
}

static vmp_intern_entry *find(vmp_intern_entry *tab, size_t cap, uint64_t parent, uint64_t value,
                              uint32_t bcpc, uint32_t kind)
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

static uint64_t frame_word(const vmp_frame *f)
{
    return f->value * 0xff51afd7ed558ccdull + ((uint64_t)f->bcpc << 32 | f->kind);
}

/* Four independent lanes, so that the multiplies of consecutive frames
 * overlap instead of forming one chain of 2 * depth multiplies. */
static uint64_t stack_hash(const vmp_frame *frames, uint32_t depth)
{
    const uint64_t k = 0x9e3779b97f4a7c15ull;
    uint64_t a = depth, b = 0x243f6a8885a308d3ull, c = 0x13198a2e03707344ull,
             d = 0xa4093822299f31d0ull;
    uint32_t i = 0;
    for (; i + 4 <= depth; i += 4) {
        a = (a ^ frame_word(&frames[i])) * k;
        b = (b ^ frame_word(&frames[i + 1])) * k;
        c = (c ^ frame_word(&frames[i + 2])) * k;
        d = (d ^ frame_word(&frames[i + 3])) * k;
    }
    for (; i < depth; i++)
        a = (a ^ frame_word(&frames[i])) * k;
    return vmp_hash64(a ^ vmp_hash64(b ^ vmp_hash64(c ^ vmp_hash64(d))));
}

/* Allocate an empty cache of `slots` slots; -1 (nothing changed) on failure. */
static int cache_alloc(vmp_intern *t, size_t slots)
{
    vmp_stack_cache_entry *c = calloc(slots, sizeof *c);
    vmp_frame *f = malloc(slots * VMP_STACK_CACHE_DEPTH * sizeof *f);
    if (!c || !f) {
        free(c);
        free(f);
        return -1;
    }
    t->cache = c;
    t->cache_frames = f;
    t->cache_slots = slots;
    return 0;
}

static void cache_store(vmp_intern *t, uint64_t hash, const vmp_frame *frames, uint32_t depth,
                        uint64_t leaf)
{
    size_t first =
               ((size_t)hash & (t->cache_slots / VMP_STACK_CACHE_WAYS - 1)) * VMP_STACK_CACHE_WAYS,
           slot = first;
    /* an empty way, else the least recently used */
    for (size_t way = 0; way < VMP_STACK_CACHE_WAYS; way++) {
        const vmp_stack_cache_entry *e = &t->cache[first + way];
        if (!e->leaf) {
            slot = first + way;
            break;
        }
        if ((uint32_t)(t->cache_uses - e->used) > (uint32_t)(t->cache_uses - t->cache[slot].used))
            slot = first + way;
    }
    vmp_stack_cache_entry *c = &t->cache[slot];
    if (c->leaf)
        t->cache_evictions++;
    c->hash = hash;
    c->leaf = leaf;
    c->depth = depth;
    c->used = ++t->cache_uses;
    memcpy(t->cache_frames + slot * VMP_STACK_CACHE_DEPTH, frames, depth * sizeof *frames);
}

/* Double the cache, keeping its entries; keeps the old one on failure. */
static void cache_grow(vmp_intern *t)
{
    vmp_stack_cache_entry *old = t->cache;
    vmp_frame *old_frames = t->cache_frames;
    size_t old_slots = t->cache_slots;
    if (cache_alloc(t, old_slots * 2) < 0)
        return;
    for (size_t i = 0; i < old_slots; i++)
        if (old[i].leaf)
            cache_store(t, old[i].hash, old_frames + i * VMP_STACK_CACHE_DEPTH, old[i].depth,
                        old[i].leaf);
    free(old);
    free(old_frames);
}

uint64_t vmp_intern__stack_find(vmp_intern *t, const vmp_frame *frames, uint32_t depth,
                                uint64_t *hash_out)
{
    *hash_out = 0;
    if (depth == 0 || depth > VMP_STACK_CACHE_DEPTH)
        return 0;
    uint64_t h = stack_hash(frames, depth);
    *hash_out = h;
    if (!t->cache)
        return 0;
    if (++t->cache_lookups == VMP_STACK_CACHE_WINDOW) {
        if (t->cache_evictions > (VMP_STACK_CACHE_WINDOW >> VMP_STACK_CACHE_EVICT_SHIFT) &&
            t->cache_slots < VMP_STACK_CACHE_MAX_SLOTS)
            cache_grow(t);
        t->cache_lookups = 0;
        t->cache_evictions = 0;
    }
    size_t first = ((size_t)h & (t->cache_slots / VMP_STACK_CACHE_WAYS - 1)) * VMP_STACK_CACHE_WAYS;
    for (size_t slot = first; slot < first + VMP_STACK_CACHE_WAYS; slot++) {
        vmp_stack_cache_entry *c = &t->cache[slot];
        /* vmp_frame has no padding: equal bytes are equal frames */
        if (c->leaf && c->hash == h && c->depth == depth &&
            memcmp(t->cache_frames + slot * VMP_STACK_CACHE_DEPTH, frames,
                   depth * sizeof *frames) == 0) {
            c->used = ++t->cache_uses;
            return c->leaf;
        }
    }
    return 0;
}

void vmp_intern__stack_put(vmp_intern *t, uint64_t hash, const vmp_frame *frames, uint32_t depth,
                           uint64_t leaf)
{
    if (depth == 0 || depth > VMP_STACK_CACHE_DEPTH || leaf == 0)
        return;
    if (!t->cache && cache_alloc(t, t->cache_slots) < 0)
        return;
    cache_store(t, hash, frames, depth, leaf);
}
