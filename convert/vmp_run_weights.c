/* SPDX-License-Identifier: MIT
 *
 * vmp_run_weights.c - one run's per-function weights, the input of the
 * repeated-run statistics (vmp_diffstat(), analyze/vmp_diffstat.c), from
 * the frame tree of vmp_folded.c (samples of spec.md §5.12 resolved as in
 * vmp_analyze.h), so that they name functions as `vmp diff` does.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_flame_int.h"

/* ---- one run's weights ------------------------------------------------------------ */

static uint32_t function_node(const vmp_flame *f, uint32_t n)
{
    while (n && f->nodes[n].is_range)
        n = f->nodes[n].parent;
    return n;
}

/* Self and total weight per name of `f`'s column 0: functions as
 * vmp_flame_diff() counts them, and range frames ("name A->B") by their own
 * nodes.  Total: once per sample, walking up from each node with self weight
 * (a stamp per name says whether the name was counted for this node). */
static vmp_status weights_of(vmp_flame *f, vmp_run_weights *out)
{
    uint64_t *self, *total;
    uint32_t *stamp;
    unsigned char *range;
    size_t i, n = 0, names = f->n_names ? f->n_names : 1;
    vmp_status st = vmp_flame__finalize(f);

    if (st != VMP_OK)
        return st;
    self = calloc(names, sizeof *self);
    total = calloc(names, sizeof *total);
    stamp = calloc(names, sizeof *stamp);
    range = calloc(names, sizeof *range);
    if (!self || !total || !stamp || !range)
        goto nomem;
    for (i = 1; i < f->n_nodes; i++) {
        const vmp_fnode *nd = &f->nodes[i];
        uint32_t a, fnode;
        if (!nd->self[0])
            continue;
        fnode = function_node(f, (uint32_t)i);
        self[f->nodes[fnode].name] += nd->self[0];
        if (nd->is_range) {
            self[nd->name] += nd->self[0];
            range[nd->name] = 1;
        }
        for (a = (uint32_t)i; a; a = f->nodes[a].parent) {
            uint32_t name = f->nodes[a].name;
            if (stamp[name] == (uint32_t)i)
                continue;
            stamp[name] = (uint32_t)i;
            total[name] += nd->self[0];
        }
    }
    out->total = f->totals[0];
    for (i = 0; i < f->n_names; i++)
        n += total[i] != 0;
    out->names = calloc(n ? n : 1, sizeof *out->names);
    out->self = malloc((n ? n : 1) * sizeof *out->self);
    out->inclusive = malloc((n ? n : 1) * sizeof *out->inclusive);
    out->is_range = malloc(n ? n : 1);
    if (!out->names || !out->self || !out->inclusive || !out->is_range)
        goto nomem;
    for (i = 0; i < f->n_names; i++) {
        if (!total[i])
            continue;
        out->names[out->n] = strdup(f->names[i]);
        if (!out->names[out->n])
            goto nomem;
        out->self[out->n] = self[i];
        out->inclusive[out->n] = total[i];
        out->is_range[out->n] = range[i];
        out->n++;
    }
    free(self);
    free(total);
    free(stamp);
    free(range);
    return VMP_OK;
nomem:
    free(self);
    free(total);
    free(stamp);
    free(range);
    vmp_run_weights_free(out);
    return VMP_ERR_NOMEM;
}

vmp_status vmp_run_weights_read(vmp_run_weights *out, vmp_reader *r, const vmp_flame_options *opts)
{
    vmp_profile *p = NULL;
    vmp_status st, st2;

    if (!out || !r)
        return VMP_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    st = vmp_profile_create(&p, NULL);
    if (st != VMP_OK)
        return st;
    st = vmp_profile_read(p, r);
    if (st == VMP_ERR_NOMEM) {
        vmp_profile_free(p);
        return st;
    }
    st2 = vmp_run_weights_of_profile(out, p, opts);
    vmp_profile_free(p);
    return st2 != VMP_OK ? st2 : st;
}

vmp_status vmp_run_weights_of_profile(vmp_run_weights *out, const vmp_profile *p,
                                      const vmp_flame_options *opts)
{
    vmp_flame *f = NULL;
    vmp_status st;

    if (!out || !p)
        return VMP_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    st = vmp_flame_create(&f, opts);
    if (st != VMP_OK)
        return st;
    st = vmp_flame_add_profile(f, p, 0);
    if (st == VMP_OK)
        st = weights_of(f, out);
    vmp_flame_free(f);
    return st;
}
