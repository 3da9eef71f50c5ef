/* SPDX-License-Identifier: MIT
 *
 * vmp_vm_view.c - the VM's view of resolved stacks (spec.md Appendix D,
 * R-VIEW-7): the frames of the VM's own language, with the code they called
 * named by a symbol, a code object's name or the VM state.  Builds on the
 * interned tables of vmp_analysis.c; resolves nothing itself.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "vmp_analysis_int.h"

static const vmp_afunction *func_of_frame(const vmp_analysis *a, uint32_t frame)
{
    const vmp_aframe *fr = vmp_analysis_frame(a, frame);
    return fr ? vmp_analysis_function(a, fr->function) : NULL;
}

int vmp_analysis_is_vm_frame(const vmp_analysis *a, uint32_t frame)
{
    const vmp_afunction *fn = frame ? func_of_frame(a, frame) : NULL;
    return fn && fn->function_id != 0;
}

/* A frame that keeps its name inner of the innermost VM frame: a C function
 * named by a symbol (not "<module>+0x<offset>") or a code object. */
static int has_own_name(const vmp_afunction *fn)
{
    return (fn->code_class == VMP_CLASS_NATIVE && fn->address == 0) ||
           fn->code_class == VMP_CLASS_GENERATED;
}

/* The "[truncated N frames]" root of a deep stack (vmp_functions.c). */
static int is_truncated_root(const vmp_afunction *fn)
{
    return fn->code_class == VMP_CLASS_UNKNOWN && strcmp(fn->kind, "truncated") == 0;
}

uint32_t vmp_analysis_vm_frame(const vmp_analysis *a, uint32_t stack, int *own_out)
{
    const vmp_astack *s = stack ? vmp_analysis_stack(a, stack) : NULL;
    int own = 1;
    uint32_t found = 0;
    for (; s; s = s->parent ? vmp_analysis_stack(a, s->parent) : NULL, own = 0)
        if (vmp_analysis_is_vm_frame(a, s->frame)) {
            found = s->frame;
            break;
        }
    if (own_out)
        *own_out = found && own;
    return found;
}

uint32_t vmp_analysis_vm_state_frame(vmp_analysis *a, uint32_t state)
{
    const char *vm = a->have_header && a->hdr.vm_name.len ? a->hdr.vm_name.s : "vm";
    size_t vm_len = a->have_header && a->hdr.vm_name.len ? a->hdr.vm_name.len : 2;
    char buf[256];
    uint32_t sid, fn;
    snprintf(buf, sizeof buf, "[%.*s %s]", (int)(vm_len > 120 ? 120 : vm_len), vm,
             vmp_analysis_state_name(a, state));
    sid = vmp_analysis__intern(a, buf);
    fn = sid ? vmp_analysis__intern_func(a, sid, "vm state", VMP_CLASS_UNKNOWN, VMP_CODE_KIND_NONE,
                                         0, 0, 0)
             : 0;
    return fn ? vmp_analysis__intern_frame(a, fn, 0, 0, 0) : 0;
}

uint32_t vmp_analysis_vm_leaf(vmp_analysis *a, uint32_t frame, uint32_t state)
{
    const vmp_afunction *fn = frame ? func_of_frame(a, frame) : NULL;
    if (!frame)
        return 0;
    if (fn && (fn->function_id != 0 || has_own_name(fn) || is_truncated_root(fn)))
        return frame;
    return vmp_analysis_vm_state_frame(a, state);
}

vmp_status vmp_analysis_vm_stack(vmp_analysis *a, uint32_t stack, uint32_t state, uint32_t *out)
{
    size_t n = 0, inner_vm = SIZE_MAX, i;
    uint32_t base = 0, last = 0, cur = stack;
    *out = 0;
    /* the frames innermost first (a->chain: scratch between resolutions) */
    while (cur) {
        const vmp_astack *s = vmp_analysis_stack(a, cur);
        if (!s)
            break;
        if (vmp_grow__((void **)&a->chain, &a->cap_chain, n + 1, sizeof *a->chain))
            return VMP_ERR_NOMEM;
        if (inner_vm == SIZE_MAX && vmp_analysis_is_vm_frame(a, s->frame))
            inner_vm = n;
        a->chain[n++] = s->frame;
        cur = s->parent;
    }
    for (i = n; i-- > 0;) {
        uint32_t fr = a->chain[i];
        const vmp_afunction *fn = func_of_frame(a, fr);
        if (i > inner_vm) { /* outer of the innermost VM frame (none: SIZE_MAX) */
            if (!vmp_analysis_is_vm_frame(a, fr) && !(fn && is_truncated_root(fn)))
                continue;
        } else if (i < inner_vm) {
            fr = vmp_analysis_vm_leaf(a, fr, state);
            if (!fr)
                return VMP_ERR_NOMEM;
            if (fr == last && fr != a->chain[i])
                continue; /* one state frame for a run of them */
        }
        base = vmp_analysis__intern_stack(a, base, fr);
        if (!base)
            return a->limit_msg[0] ? VMP_ERR_LIMIT : VMP_ERR_NOMEM;
        last = fr;
    }
    *out = base;
    return VMP_OK;
}

vmp_status vmp_analysis_vm_key(vmp_analysis *a, vmp_profile_key *k)
{
    if (!k->failed)
        return vmp_analysis_vm_stack(a, k->stack, k->state, &k->stack);
    if (k->leaf) {
        k->leaf = vmp_analysis_vm_leaf(a, k->leaf, k->state);
        if (!k->leaf)
            return VMP_ERR_NOMEM;
    }
    return VMP_OK;
}
