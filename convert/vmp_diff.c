/* SPDX-License-Identifier: MIT
 *
 * vmp_diff.c - per-function change of share between two profiles read into
 * one frame tree (resolution as in spec.md §5 "Resolution", names as
 * in vmp_analyze.h).
 *
 * A function is a frame name (range frames count for the frame above them).
 * Its self weight is the weight of stacks it ends; its total weight is the
 * weight of stacks it appears in, counted once per stack even when the
 * function recurses: walking up from every node with self weight, a stamp per
 * name says whether the name was already counted for this node.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_flame_int.h"

static double share(uint64_t w, uint64_t total)
{
    return total ? (double)w / (double)total : 0.0;
}

static double magnitude(const vmp_flame_delta *d)
{
    double a = fabs(d->self_change), b = fabs(d->total_change);
    return a > b ? a : b;
}

static int delta_cmp(const void *x, const void *y)
{
    const vmp_flame_delta *a = x, *b = y;
    double ma = magnitude(a), mb = magnitude(b);
    if (ma != mb)
        return ma > mb ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* The node itself, or for a range frame the nearest ancestor that is not one. */
static uint32_t function_node(const vmp_flame *f, uint32_t n)
{
    while (n && f->nodes[n].is_range)
        n = f->nodes[n].parent;
    return n;
}

vmp_status vmp_flame_diff(vmp_flame *f, vmp_flame_delta **out, size_t *n_out)
{
    vmp_flame_delta *per_name, *res;
    uint32_t *stamp;
    size_t i, n = 0;
    vmp_status st;

    if (!f || !out || !n_out)
        return VMP_ERR_INVALID_ARG;
    st = vmp_flame__finalize(f);
    if (st != VMP_OK)
        return st;
    per_name = calloc(f->n_names ? f->n_names : 1, sizeof *per_name);
    stamp = calloc(f->n_names ? f->n_names : 1, sizeof *stamp);
    if (!per_name || !stamp) {
        free(per_name);
        free(stamp);
        return VMP_ERR_NOMEM;
    }
    for (i = 1; i < f->n_nodes; i++) {
        const vmp_fnode *nd = &f->nodes[i];
        uint32_t fnode, a;
        int c;
        if (!nd->self[0] && !nd->self[1])
            continue;
        fnode = function_node(f, (uint32_t)i);
        for (c = 0; c < 2; c++)
            per_name[f->nodes[fnode].name].self[c] += nd->self[c];
        for (a = fnode; a; a = f->nodes[a].parent) {
            uint32_t name = f->nodes[a].name;
            if (f->nodes[a].is_range || stamp[name] == (uint32_t)i)
                continue;
            stamp[name] = (uint32_t)i;
            for (c = 0; c < 2; c++)
                per_name[name].total[c] += nd->self[c];
        }
    }
    free(stamp);
    for (i = 0; i < f->n_names; i++) {
        vmp_flame_delta *d = &per_name[i];
        if (!d->total[0] && !d->total[1])
            continue;
        d->name = f->names[i];
        d->self_change = share(d->self[1], f->totals[1]) - share(d->self[0], f->totals[0]);
        d->total_change = share(d->total[1], f->totals[1]) - share(d->total[0], f->totals[0]);
        per_name[n++] = *d;
    }
    qsort(per_name, n, sizeof *per_name, delta_cmp);
    res = n ? realloc(per_name, n * sizeof *res) : per_name;
    if (!res)
        res = per_name;
    *out = res;
    *n_out = n;
    return VMP_OK;
}
