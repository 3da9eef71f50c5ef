/* SPDX-License-Identifier: MIT
 *
 * vmp_symtab.c - module symbols written on demand (see the header).
 */
#include "vmp_symtab.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_symchoice.h"

/* spec R-RES-6's choice, as the analysis makes it (format/vmp_symchoice.h) */
static const vmp_symchoice_layout layout = {
    sizeof(vmp_symtab_sym), offsetof(vmp_symtab_sym, addr), offsetof(vmp_symtab_sym, end),
    offsetof(vmp_symtab_sym, seq), offsetof(vmp_symtab_sym, up)};

static int cmp_sym(const void *x, const void *y)
{
    const vmp_symtab_sym *a = x, *b = y;
    if (a->addr != b->addr)
        return a->addr < b->addr ? -1 : 1;
    if (a->size != b->size)
        return a->size > b->size ? -1 : 1; /* the larger symbol first */
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

vmp_symtab *vmp_symtab__build(uint64_t module_id, uint64_t bias, uint64_t start, uint64_t end,
                              const vmp_symbol_desc *syms, size_t n)
{
    vmp_symtab *t = calloc(1, sizeof *t);
    size_t bytes = 0, i;
    if (!t || n > UINT32_MAX - 1)
        goto fail;
    for (i = 0; i < n; i++)
        bytes += strlen(syms[i].name) + 1;
    t->syms = calloc(n ? n : 1, sizeof *t->syms);
    t->names = malloc(bytes ? bytes : 1);
    if (!t->syms || !t->names)
        goto fail;
    t->module_id = module_id;
    t->start = start;
    t->end = end;
    t->n = n;
    bytes = 0;
    for (i = 0; i < n; i++) {
        vmp_symtab_sym *s = &t->syms[i];
        size_t len = strlen(syms[i].name) + 1;
        s->value = syms[i].value;
        s->size = syms[i].size;
        s->addr = syms[i].value + bias;
        s->end = s->addr + s->size < s->addr ? UINT64_MAX : s->addr + s->size;
        s->seq = (uint32_t)i;
        s->name = bytes;
        memcpy(t->names + bytes, syms[i].name, len);
        bytes += len;
    }
    qsort(t->syms, n, sizeof *t->syms, cmp_sym);
    /* spec R-RES-6: a size-0 symbol covers up to the nearest of the next
     * higher address and the module's end, of those above it; only its own
     * address when neither is */
    for (i = n; i-- > 0;) {
        vmp_symtab_sym *s = &t->syms[i];
        size_t k = i + 1;
        if (s->size != 0)
            continue;
        while (k < n && t->syms[k].addr == s->addr)
            k++;
        s->end = end > s->addr ? end : UINT64_MAX;
        if (k < n && t->syms[k].addr < s->end)
            s->end = t->syms[k].addr;
        if (s->end == UINT64_MAX && s->addr < UINT64_MAX)
            s->end = s->addr + 1;
    }
    vmp_symchoice_link(t->syms, n, &layout);
    return t;
fail:
    vmp_symtab__free(t);
    return NULL;
}

/* Index of the symbol R-RES-6 chooses for `pc`, or -1. */
static long choose(const vmp_symtab *t, uint64_t pc)
{
    return (long)vmp_symchoice_find(t->syms, t->n, &layout, pc) - 1;
}

static size_t take(vmp_symtab *t, size_t i, vmp_buf *out)
{
    vmp_symtab_sym *s = &t->syms[i];
    if (s->written)
        return 0;
    s->written = 1;
    vmp_enc__uint(out, s->value);
    vmp_enc__uint(out, s->size);
    vmp_enc__tstr(out, t->names + s->name);
    return 1;
}

size_t vmp_symtab__need(vmp_symtab *t, uint64_t pc, vmp_buf *out)
{
    long b = choose(t, pc);
    size_t got, k;
    if (b < 0)
        return 0;
    got = take(t, (size_t)b, out);
    if (t->syms[b].size == 0) { /* the symbol that ends it */
        for (k = (size_t)b + 1; k < t->n && t->syms[k].addr == t->syms[b].addr; k++)
            ;
        if (k < t->n && t->syms[k].addr == t->syms[b].end)
            got += take(t, k, out);
    }
    return got;
}

void vmp_symtab__free(vmp_symtab *t)
{
    if (!t)
        return;
    free(t->syms);
    free(t->names);
    free(t);
}
