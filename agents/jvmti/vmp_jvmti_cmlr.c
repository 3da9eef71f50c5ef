/* SPDX-License-Identifier: MIT
 *
 * vmp_jvmti_cmlr.c - HotSpot debug information to CODE_OBJECT pc_map and
 * inline records (spec.md §5.7); see vmp_jvmti_cmlr.h for the offset rule.
 */
#include "vmp_jvmti_cmlr.h"

#include <jvmticmlr.h>
#include <stdlib.h>
#include <string.h>

typedef struct loc {
    uint64_t off;
    size_t index; /* position in the input, to keep the sort stable */
    jlocation bci;
} loc;

static int loc_cmp(const void *a, const void *b)
{
    const loc *x = a, *y = b;
    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static uint32_t bcpc_of(jint bci)
{
    return bci < 0 ? VMP_BCPC_NONE : (uint32_t)bci;
}

static int build_pc_map(vmp_jvmti_debuginfo *d, uint64_t start, uint64_t size,
                        const jvmtiAddrLocationMap *map, jint map_length)
{
    loc *v;
    size_t n = 0, i, out = 0;

    if (map == NULL || map_length <= 0)
        return 0;
    v = malloc((size_t)map_length * sizeof *v);
    d->pairs = malloc((size_t)map_length * sizeof *d->pairs);
    if (v == NULL || d->pairs == NULL) {
        free(v);
        return -1;
    }
    for (i = 0; i < (size_t)map_length; i++) {
        uint64_t a = (uint64_t)(uintptr_t)map[i].start_address;
        if (map[i].location < 0 || map[i].location > (jlocation)UINT32_MAX - 1 || a < start)
            continue;
        v[n].off = a - start;
        v[n].index = i;
        v[n].bci = map[i].location;
        n++;
    }
    qsort(v, n, sizeof *v, loc_cmp);
    for (i = 0; i < n; i++) {
        uint64_t off = i == 0 ? 0 : v[i - 1].off;
        if (off >= size) /* spec R-CODE-1 */
            break;
        /* A later entry at the same offset supersedes an empty range. */
        if (out > 0 && d->pairs[out - 1].mcpc_offset == off)
            out--;
        d->pairs[out].mcpc_offset = off;
        d->pairs[out].bcpc = (uint32_t)v[i].bci;
        out++;
    }
    free(v);
    d->n_pairs = out;
    return 0;
}

static int pcinfo_cmp(const void *a, const void *b)
{
    const PCStackInfo *x = *(const PCStackInfo *const *)a, *y = *(const PCStackInfo *const *)b;
    uintptr_t px = (uintptr_t)x->pc, py = (uintptr_t)y->pc;
    if (px != py)
        return px < py ? -1 : 1;
    return x < y ? -1 : x > y;
}

static int build_inlines(vmp_jvmti_debuginfo *d, uint64_t start, uint64_t size,
                         const jvmtiCompiledMethodLoadInlineRecord *rec, uint64_t method)
{
    const PCStackInfo **v;
    size_t n = 0, i, nframes = 1, out = 0, f = 0;

    if (rec->numpcs <= 0 || rec->pcinfo == NULL)
        return 0;
    v = malloc((size_t)rec->numpcs * sizeof *v);
    if (v == NULL)
        return -1;
    for (i = 0; i < (size_t)rec->numpcs; i++) {
        const PCStackInfo *p = &rec->pcinfo[i];
        if (p->numstackframes <= 0 || p->methods == NULL || p->bcis == NULL ||
            (uint64_t)(uintptr_t)p->pc < start)
            continue;
        v[n++] = p;
        nframes += (size_t)p->numstackframes;
    }
    qsort(v, n, sizeof *v, pcinfo_cmp);
    d->inlines = malloc((n + 1) * sizeof *d->inlines);
    d->frames = malloc(nframes * sizeof *d->frames);
    if (d->inlines == NULL || d->frames == NULL) {
        free(v);
        return -1;
    }
    for (i = 0; i < n; i++) {
        uint64_t off = i == 0 ? 0 : (uint64_t)(uintptr_t)v[i - 1]->pc - start;
        jint k;
        if (off >= size) /* spec R-CODE-1 */
            break;
        if (out > 0 && d->inlines[out - 1].mcpc_offset == off)
            out--;
        d->inlines[out].mcpc_offset = off;
        d->inlines[out].frames = &d->frames[f];
        d->inlines[out].depth = (uint32_t)v[i]->numstackframes;
        for (k = 0; k < v[i]->numstackframes; k++) {
            d->frames[f].kind = VMP_FRAME_FUNCTION;
            d->frames[f].value = (uint64_t)(uintptr_t)v[i]->methods[k];
            d->frames[f].bcpc = bcpc_of(v[i]->bcis[k]);
            f++;
        }
        out++;
    }
    /* Past the last PcDesc AsyncGetCallTrace reports the compiled method only. */
    if (n > 0) {
        uint64_t off = (uint64_t)(uintptr_t)v[n - 1]->pc - start;
        if (off < size && !(out > 0 && d->inlines[out - 1].mcpc_offset >= off)) {
            d->inlines[out].mcpc_offset = off;
            d->inlines[out].frames = &d->frames[f];
            d->inlines[out].depth = 1;
            d->frames[f].kind = VMP_FRAME_FUNCTION;
            d->frames[f].value = method;
            d->frames[f].bcpc = VMP_BCPC_NONE;
            out++;
        }
    }
    free(v);
    d->n_inlines = out;
    return 0;
}

int vmp_jvmti__debuginfo_build(vmp_jvmti_debuginfo *out, uint64_t start, uint64_t size,
                               const jvmtiAddrLocationMap *map, jint map_length,
                               const void *compile_info, uint64_t method)
{
    const jvmtiCompiledMethodLoadRecordHeader *h = compile_info;

    memset(out, 0, sizeof *out);
    if (build_pc_map(out, start, size, map, map_length) != 0)
        goto fail;
    for (; h != NULL; h = h->next) {
        if (h->kind == JVMTI_CMLR_INLINE_INFO) {
            if (build_inlines(out, start, size, (const jvmtiCompiledMethodLoadInlineRecord *)h,
                              method) != 0)
                goto fail;
            break;
        }
    }
    return 0;
fail:
    vmp_jvmti__debuginfo_free(out);
    return -1;
}

void vmp_jvmti__debuginfo_free(vmp_jvmti_debuginfo *d)
{
    free(d->pairs);
    free(d->inlines);
    free(d->frames);
    memset(d, 0, sizeof *d);
}
