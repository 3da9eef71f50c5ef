/* SPDX-License-Identifier: MIT
 *
 * vmp_folded_write.c - the finished frame tree (totals per node, children
 * sorted by name: vmp_flame__finalize()) and the folded lines written from
 * it (spec.md R-VIEW-4; the tree is built by vmp_folded.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_flame_int.h"

/* ---- finalize: totals and sorted children -------------------------------------------- */

typedef struct kid_sort {
    const char *name;
    uint32_t node;
} kid_sort;

static int kid_cmp(const void *x, const void *y)
{
    const kid_sort *a = x, *b = y;
    int c = strcmp(a->name, b->name);
    if (c)
        return c;
    return a->node < b->node ? -1 : a->node > b->node;
}

vmp_status vmp_flame__finalize(vmp_flame *f)
{
    size_t n = f->n_nodes, i;
    uint32_t *off, *kids, *fill;
    kid_sort *tmp = NULL;
    size_t max_kids = 0;

    if (f->finalized)
        return VMP_OK;
    free(f->total);
    free(f->gc);
    f->total = malloc(2 * n * sizeof *f->total);
    f->gc = malloc(2 * n * sizeof *f->gc);
    if (!f->total || !f->gc)
        return VMP_ERR_NOMEM;
    for (i = 0; i < n; i++) {
        f->total[2 * i] = f->nodes[i].self[0];
        f->total[2 * i + 1] = f->nodes[i].self[1];
        f->gc[2 * i] = f->gc_self[2 * i];
        f->gc[2 * i + 1] = f->gc_self[2 * i + 1];
    }
    for (i = n; i-- > 1;) {
        size_t p = f->nodes[i].parent;
        f->total[2 * p] += f->total[2 * i];
        f->total[2 * p + 1] += f->total[2 * i + 1];
        f->gc[2 * p] += f->gc[2 * i];
        f->gc[2 * p + 1] += f->gc[2 * i + 1];
    }
    off = calloc(n + 1, sizeof *off);
    kids = malloc((n ? n : 1) * sizeof *kids);
    fill = calloc(n + 1, sizeof *fill);
    if (!off || !kids || !fill)
        goto nomem;
    for (i = 1; i < n; i++)
        off[f->nodes[i].parent + 1]++;
    for (i = 0; i < n; i++) {
        if (off[i + 1] > max_kids)
            max_kids = off[i + 1];
        off[i + 1] += off[i];
    }
    for (i = 1; i < n; i++) {
        uint32_t p = f->nodes[i].parent;
        kids[off[p] + fill[p]++] = (uint32_t)i;
    }
    tmp = malloc((max_kids ? max_kids : 1) * sizeof *tmp);
    if (!tmp)
        goto nomem;
    for (i = 0; i < n; i++) {
        uint32_t j, m = off[i + 1] - off[i];
        if (m < 2)
            continue;
        for (j = 0; j < m; j++) {
            tmp[j].node = kids[off[i] + j];
            tmp[j].name = f->names[f->nodes[tmp[j].node].name];
        }
        qsort(tmp, m, sizeof *tmp, kid_cmp);
        for (j = 0; j < m; j++)
            kids[off[i] + j] = tmp[j].node;
    }
    free(tmp);
    free(fill);
    free(f->kids);
    free(f->kid_off);
    f->kids = kids;
    f->kid_off = off;
    f->finalized = 1;
    return VMP_OK;
nomem:
    free(off);
    free(kids);
    free(fill);
    return VMP_ERR_NOMEM;
}

/* ---- folded output ------------------------------------------------------------------- */

static uint64_t scaled(uint64_t w, double scale)
{
    if (scale == 1.0)
        return w;
    return (uint64_t)llround((double)w * scale);
}

vmp_status vmp_flame_write_folded(vmp_flame *f, FILE *out, double scale_base)
{
    vmp_status st;
    uint32_t *stk = NULL, *pos = NULL;
    size_t *lens = NULL, depth = 0, cap = 0;
    sbuf line = {NULL, 0, 0};
    int two;

    if (!f || !out || !(scale_base >= 0.0))
        return VMP_ERR_INVALID_ARG;
    st = vmp_flame__finalize(f);
    if (st != VMP_OK)
        return st;
    two = f->have[1];
    /* Depth-first walk: stk[d] is the node at depth d + 1, pos[d] the next
     * child of it to visit, lens[d] the line length up to and including it. */
    cap = 64;
    stk = malloc(cap * sizeof *stk);
    pos = malloc(cap * sizeof *pos);
    lens = malloc(cap * sizeof *lens);
    if (!stk || !pos || !lens || vmp_flame__sb_add(&line, "", 0)) {
        st = VMP_ERR_NOMEM;
        goto done;
    }
    stk[0] = 0;
    pos[0] = f->kid_off[0];
    lens[0] = 0;
    depth = 1;
    while (depth > 0) {
        uint32_t parent = stk[depth - 1], node;
        const vmp_fnode *nd;
        const char *name;
        if (pos[depth - 1] >= f->kid_off[parent + 1]) {
            depth--;
            continue;
        }
        node = f->kids[pos[depth - 1]++];
        nd = &f->nodes[node];
        name = f->names[nd->name];
        line.len = lens[depth - 1];
        if ((line.len && vmp_flame__sb_add(&line, ";", 1)) ||
            vmp_flame__sb_add(&line, name, strlen(name))) {
            st = VMP_ERR_NOMEM;
            goto done;
        }
        if (nd->self[0] || (two && nd->self[1])) {
            fwrite(line.p, 1, line.len, out);
            if (two)
                fprintf(out, " %llu %llu\n", (unsigned long long)scaled(nd->self[0], scale_base),
                        (unsigned long long)nd->self[1]);
            else
                fprintf(out, " %llu\n", (unsigned long long)scaled(nd->self[0], scale_base));
        }
        if (f->kid_off[node + 1] > f->kid_off[node]) {
            if (depth == cap) {
                size_t nc = cap * 2;
                uint32_t *s2 = realloc(stk, nc * sizeof *s2), *p2;
                size_t *l2;
                if (s2)
                    stk = s2;
                p2 = realloc(pos, nc * sizeof *p2);
                if (p2)
                    pos = p2;
                l2 = realloc(lens, nc * sizeof *l2);
                if (l2)
                    lens = l2;
                if (!s2 || !p2 || !l2) {
                    st = VMP_ERR_NOMEM;
                    goto done;
                }
                cap = nc;
            }
            stk[depth] = node;
            pos[depth] = f->kid_off[node];
            lens[depth] = line.len;
            depth++;
        }
    }
    st = ferror(out) ? VMP_ERR_IO : VMP_OK;
done:
    free(stk);
    free(pos);
    free(lens);
    free(line.p);
    return st;
}
