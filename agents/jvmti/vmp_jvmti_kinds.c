/* SPDX-License-Identifier: MIT
 *
 * vmp_jvmti_kinds.c - allocation weights and class frames of the HotSpot
 * agent's samples of kinds (see vmp_jvmti_kinds.h; spec.md §5.15).
 */
#include "vmp_jvmti_kinds.h"
#include "vmp_grow.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    char sig;
    const char *name;
} primitives[] = {{'Z', "boolean"}, {'B', "byte"}, {'C', "char"},  {'S', "short"},
                  {'I', "int"},     {'J', "long"}, {'F', "float"}, {'D', "double"}};

size_t vmp_jvmti__type_name(char *out, size_t size, const char *sig)
{
    size_t dims = 0, len = 0, i, n;
    const char *base = NULL;
    if (out == NULL || size == 0 || sig == NULL)
        return 0;
    while (sig[dims] == '[')
        dims++;
    if (sig[dims] == 'L') {
        const char *end = strchr(sig + dims, ';');
        if (end == NULL || end == sig + dims + 1 || end[1] != '\0')
            return 0;
        n = (size_t)(end - (sig + dims + 1));
        if (n + 1 > size)
            return 0;
        for (i = 0; i < n; i++)
            out[len++] = sig[dims + 1 + i] == '/' ? '.' : sig[dims + 1 + i];
    } else {
        for (i = 0; i < sizeof primitives / sizeof primitives[0]; i++)
            if (sig[dims] == primitives[i].sig && sig[dims + 1] == '\0')
                base = primitives[i].name;
        if (base == NULL || dims == 0) /* a primitive is never an object */
            return 0;
        n = strlen(base);
        if (n + 1 > size)
            return 0;
        memcpy(out, base, n);
        len = n;
    }
    for (i = 0; i < dims; i++) {
        if (len + 3 > size)
            return 0;
        out[len++] = '[';
        out[len++] = ']';
    }
    out[len] = '\0';
    return len;
}

uint64_t vmp_jvmti__class_id(const char *name)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (; *name; name++) {
        h ^= (unsigned char)*name;
        h *= UINT64_C(1099511628211);
    }
    return VMP_JVMTI_CLASS_ID_BIT | h;
}

uint64_t vmp_jvmti__alloc_weight(uint64_t size, uint64_t interval)
{
    double s = (double)size, r, w;
    if (interval == 0)
        return size;
    if (size == 0)
        return interval;
    r = s / (double)interval;
    if (r > 40) /* e^-40: the object is as sure to be sampled as can be */
        return size;
    w = s / -expm1(-r);
    return w >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)(w + 0.5);
}

/* ---- Live objects ------------------------------------------------------ */

void vmp_jvmti__live_init(vmp_jvmti_live *t, size_t max_bytes)
{
    memset(t, 0, sizeof *t);
    pthread_mutex_init(&t->mu, NULL);
    t->max_bytes = max_bytes;
}

void vmp_jvmti__live_free(vmp_jvmti_live *t)
{
    size_t i;
    for (i = 0; i < t->n; i++)
        free(t->v[i].frames);
    free(t->v);
    pthread_mutex_destroy(&t->mu);
    memset(t, 0, sizeof *t);
}

int64_t vmp_jvmti__live_add(vmp_jvmti_live *t, const vmp_frame *frames, uint32_t depth,
                            uint64_t weight, uint64_t thread)
{
    size_t cost = sizeof(vmp_jvmti_live_entry) + (size_t)depth * sizeof *frames, i;
    vmp_frame *copy;
    int64_t tag = 0;
    pthread_mutex_lock(&t->mu);
    if (depth == 0 || t->bytes + cost > t->max_bytes)
        goto out;
    copy = malloc((size_t)depth * sizeof *frames);
    if (!copy)
        goto out;
    if (t->free_head) {
        i = t->free_head - 1;
        t->free_head = t->v[i].next_free;
    } else {
        if (t->n == t->cap && vmp_grow(&t->v, &t->cap, sizeof *t->v, 256) != 0) {
            free(copy);
            goto out;
        }
        i = t->n++;
    }
    memcpy(copy, frames, (size_t)depth * sizeof *frames);
    t->v[i].frames = copy;
    t->v[i].depth = depth;
    t->v[i].weight = weight;
    t->v[i].thread = thread;
    t->v[i].next_free = 0;
    t->bytes += cost;
    t->live++;
    tag = (int64_t)i + 1;
out:
    if (tag == 0)
        t->untracked++;
    pthread_mutex_unlock(&t->mu);
    return tag;
}

void vmp_jvmti__live_remove(vmp_jvmti_live *t, int64_t tag)
{
    size_t i;
    pthread_mutex_lock(&t->mu);
    if (tag >= 1 && (uint64_t)tag <= t->n && t->v[tag - 1].frames) {
        i = (size_t)tag - 1;
        free(t->v[i].frames);
        t->bytes -= sizeof(vmp_jvmti_live_entry) + (size_t)t->v[i].depth * sizeof(vmp_frame);
        t->v[i].frames = NULL;
        t->v[i].next_free = t->free_head;
        t->free_head = i + 1;
        t->live--;
    }
    pthread_mutex_unlock(&t->mu);
}

int64_t *vmp_jvmti__live_tags(vmp_jvmti_live *t, size_t *n_out)
{
    int64_t *tags;
    size_t i, n = 0;
    pthread_mutex_lock(&t->mu);
    tags = t->live ? malloc(t->live * sizeof *tags) : NULL;
    for (i = 0; tags && i < t->n; i++)
        if (t->v[i].frames)
            tags[n++] = (int64_t)i + 1;
    pthread_mutex_unlock(&t->mu);
    *n_out = n;
    return tags;
}

void vmp_jvmti__live_with(vmp_jvmti_live *t, int64_t tag,
                          void (*fn)(const vmp_jvmti_live_entry *e, void *ctx), void *ctx)
{
    pthread_mutex_lock(&t->mu);
    if (tag >= 1 && (uint64_t)tag <= t->n && t->v[tag - 1].frames)
        fn(&t->v[tag - 1], ctx);
    pthread_mutex_unlock(&t->mu);
}
