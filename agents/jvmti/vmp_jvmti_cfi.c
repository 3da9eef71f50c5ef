/* SPDX-License-Identifier: MIT
 *
 * vmp_jvmti_cfi.c - compact frame rules from .eh_frame (vmp_jvmti_cfi.h).
 *
 * The FDEs are found through .eh_frame_hdr's search table (sorted by pc), so
 * the section's length is never needed.  Each FDE's call frame instructions
 * run after its CIE's initial instructions, as DWARF 5 §6.4 and the LSB's
 * .eh_frame chapter describe them; the rules for rsp, rbp and the return
 * address are tracked, every other register is skipped.  A row is written at
 * each location where the rule the handler uses changes.
 */
#include "vmp_jvmti_cfi.h"

#include "vmp_eh_frame_hdr.h"
#include "vmp_grow.h"

#include <stdlib.h>
#include <string.h>

/* x86-64 DWARF register numbers. */
#define DW_RBP 6
#define DW_RSP 7
#define DW_RA  16

/* The depth of DW_CFA_remember_state's stack kept. */
#define STATE_STACK 8

/* A register's rule. */
enum {
    R_SAME = 0,
    R_OFFSET = 1,
    R_UNDEF = 2,
    R_OTHER = 3
};

typedef struct rule {
    int how;
    int64_t off; /* R_OFFSET: saved at CFA + off */
} rule;

typedef struct state {
    int cfa_reg; /* DWARF register, -1: an expression */
    int64_t cfa_off;
    rule fp, ra;
} state;

/* A bounded reader over [p, end). */
typedef struct rd {
    const unsigned char *p, *end;
    int bad;
} rd;

static uint64_t u8(rd *r)
{
    if (r->p >= r->end) {
        r->bad = 1;
        return 0;
    }
    return *r->p++;
}

static uint64_t fixed(rd *r, size_t n)
{
    uint64_t v = 0;
    if ((size_t)(r->end - r->p) < n) {
        r->bad = 1;
        r->p = r->end;
        return 0;
    }
    memcpy(&v, r->p, n); /* little-endian */
    r->p += n;
    return v;
}

static uint64_t uleb(rd *r)
{
    uint64_t v = 0;
    unsigned shift = 0;
    for (;;) {
        uint64_t b = u8(r);
        if (r->bad)
            return 0;
        if (shift < 64)
            v |= (b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80))
            return v;
    }
}

static int64_t sleb(rd *r)
{
    uint64_t v = 0, b;
    unsigned shift = 0;
    do {
        b = u8(r);
        if (r->bad)
            return 0;
        if (shift < 64)
            v |= (b & 0x7f) << shift;
        shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40))
        v |= ~(uint64_t)0 << shift;
    return (int64_t)v;
}

/* A pointer of encoding `enc` (DW_EH_PE_*); pcrel is applied, indirect and
 * the other applications are refused (bad). */
static uint64_t encoded(rd *r, unsigned enc)
{
    uint64_t at = (uint64_t)(uintptr_t)r->p, v;
    if (enc == 0xff)
        return 0;
    switch (enc & 0x0f) {
    case 0x00:
        v = fixed(r, 8);
        break;
    case 0x01:
        v = uleb(r);
        break;
    case 0x02:
        v = fixed(r, 2);
        break;
    case 0x03:
        v = fixed(r, 4);
        break;
    case 0x04:
        v = fixed(r, 8);
        break;
    case 0x09:
        v = (uint64_t)sleb(r);
        break;
    case 0x0a:
        v = (uint64_t)(int64_t)(int16_t)fixed(r, 2);
        break;
    case 0x0b:
        v = (uint64_t)(int64_t)(int32_t)fixed(r, 4);
        break;
    case 0x0c:
        v = fixed(r, 8);
        break;
    default:
        r->bad = 1;
        return 0;
    }
    switch (enc & 0x70) {
    case 0x00:
        break;
    case 0x10:
        v += at;
        break;
    default:
        r->bad = 1;
        return 0;
    }
    if (enc & 0x80)
        r->bad = 1;
    return v;
}

/* What a CIE says. */
typedef struct cie {
    uint64_t code_align;
    int64_t data_align;
    unsigned fde_enc;
    int has_z;
    const unsigned char *insns, *insns_end;
} cie;

/* One length-prefixed entry at `p`: a reader over its body. */
static int entry(const unsigned char *p, const unsigned char *lo, const unsigned char *hi, rd *body)
{
    rd r = {p, hi, 0};
    uint64_t len;
    if (p < lo || p >= hi)
        return -1;
    len = fixed(&r, 4);
    if (len == 0xffffffffu)
        len = fixed(&r, 8);
    if (r.bad || len == 0 || len > (uint64_t)(hi - r.p))
        return -1;
    body->p = r.p;
    body->end = r.p + len;
    body->bad = 0;
    return 0;
}

static int read_cie(const unsigned char *p, const unsigned char *lo, const unsigned char *hi,
                    cie *c)
{
    const char *aug;
    unsigned version;
    rd r;

    if (entry(p, lo, hi, &r) != 0)
        return -1;
    if (fixed(&r, 4) != 0) /* a CIE's id in .eh_frame */
        return -1;
    version = (unsigned)u8(&r);
    if (version != 1 && version != 3)
        return -1;
    aug = (const char *)r.p;
    while (r.p < r.end && *r.p)
        r.p++;
    u8(&r); /* its NUL */
    if (r.bad || (aug[0] != '\0' && aug[0] != 'z'))
        return -1; /* "eh" and other ancient forms */
    memset(c, 0, sizeof *c);
    c->code_align = uleb(&r);
    c->data_align = sleb(&r);
    if (version == 1)
        u8(&r);
    else
        uleb(&r);   /* the return address register: 16 on x86-64 */
    c->fde_enc = 0; /* absptr */
    if (aug[0] == 'z') {
        uint64_t n = uleb(&r);
        const unsigned char *aug_end;
        const char *a;
        if (r.bad || n > (uint64_t)(r.end - r.p))
            return -1;
        aug_end = r.p + n;
        c->has_z = 1;
        for (a = aug + 1; *a && !r.bad; a++) {
            if (*a == 'R')
                c->fde_enc = (unsigned)u8(&r);
            else if (*a == 'P')
                encoded(&r, (unsigned)u8(&r) & 0x7f); /* the personality: skipped */
            else if (*a == 'L')
                u8(&r);
            else if (*a != 'S' && *a != 'B' && *a != 'G')
                break; /* unknown: the length lets us skip the rest */
        }
        r.p = aug_end;
    }
    if (r.bad)
        return -1;
    c->insns = r.p;
    c->insns_end = r.end;
    return 0;
}

/* The row the handler can use for state `s`. */
static vmp_cfi_row row_of(const state *s, uint32_t loc)
{
    vmp_cfi_row row;
    memset(&row, 0, sizeof row);
    row.loc = loc;
    row.kind = VMP_CFI_NONE;
    if (s->ra.how == R_UNDEF) {
        row.kind = VMP_CFI_END;
        return row;
    }
    if ((s->cfa_reg != DW_RSP && s->cfa_reg != DW_RBP) || s->cfa_off < INT32_MIN ||
        s->cfa_off > INT32_MAX || s->ra.how != R_OFFSET || s->ra.off != -8)
        return row;
    if (s->fp.how == R_SAME)
        row.fp_off = VMP_CFI_FP_SAME;
    else if (s->fp.how == R_OFFSET && s->fp.off > INT16_MIN && s->fp.off <= INT16_MAX)
        row.fp_off = (int16_t)s->fp.off;
    else
        return row;
    row.kind = s->cfa_reg == DW_RSP ? VMP_CFI_SP : VMP_CFI_FP;
    row.cfa_off = (int32_t)s->cfa_off;
    return row;
}

typedef struct rows {
    vmp_cfi_row *v;
    size_t n, cap;
    int oom;
} rows;

/* Append `row`; a row at the last row's location replaces it, one equal in
 * rule to the last is not kept, one before it (overlapping FDEs) is dropped. */
static void put(rows *o, vmp_cfi_row row)
{
    if (o->n > 0) {
        vmp_cfi_row *last = &o->v[o->n - 1];
        if (row.loc < last->loc)
            return;
        if (row.loc == last->loc) {
            *last = row;
            if (o->n > 1) {
                const vmp_cfi_row *prev = &o->v[o->n - 2];
                if (prev->kind == row.kind && prev->cfa_off == row.cfa_off &&
                    prev->fp_off == row.fp_off)
                    o->n--;
            }
            return;
        }
        if (last->kind == row.kind && last->cfa_off == row.cfa_off && last->fp_off == row.fp_off)
            return;
    }
    if (o->n == o->cap && vmp_grow(&o->v, &o->cap, sizeof *o->v, 4096) != 0) {
        o->oom = 1;
        return;
    }
    o->v[o->n++] = row;
}

static void set_rule(state *s, uint64_t reg, int how, int64_t off)
{
    rule *r = reg == DW_RBP ? &s->fp : reg == DW_RA ? &s->ra : NULL;
    if (r != NULL) {
        r->how = how;
        r->off = off;
    }
}

/* Run the instructions [p, end) from state `s` (`init`: the CIE's result,
 * for DW_CFA_restore), writing rows for pcs in [*loc, pc_end) relative to
 * `bias`.  @return 0, or -1 on an instruction it cannot read. */
static int run(const unsigned char *p, const unsigned char *end, const cie *c, state *s,
               const state *init, uint64_t *loc, uint64_t pc_end, uint64_t bias, rows *o)
{
    state stack[STATE_STACK];
    unsigned depth = 0, lost = 0;
    rd r = {p, end, 0};

    while (r.p < r.end && !r.bad) {
        unsigned op = (unsigned)u8(&r), low = op & 0x3f;
        uint64_t reg, next = *loc;
        int64_t off;

        switch (op >> 6) {
        case 1:
            next = *loc + low * c->code_align;
            break;
        case 2:
            set_rule(s, low, R_OFFSET, (int64_t)uleb(&r) * c->data_align);
            break;
        case 3:
            set_rule(s, low, low == DW_RBP ? init->fp.how : init->ra.how,
                     low == DW_RBP ? init->fp.off : init->ra.off);
            break;
        default:
            switch (op) {
            case 0x00:
                break; /* nop */
            case 0x01:
                next = encoded(&r, c->fde_enc);
                break;
            case 0x02:
                next = *loc + fixed(&r, 1) * c->code_align;
                break;
            case 0x03:
                next = *loc + fixed(&r, 2) * c->code_align;
                break;
            case 0x04:
                next = *loc + fixed(&r, 4) * c->code_align;
                break;
            case 0x05:
                reg = uleb(&r);
                set_rule(s, reg, R_OFFSET, (int64_t)uleb(&r) * c->data_align);
                break;
            case 0x06:
                reg = uleb(&r);
                if (reg == DW_RBP)
                    s->fp = init->fp;
                else if (reg == DW_RA)
                    s->ra = init->ra;
                break;
            case 0x07:
                set_rule(s, uleb(&r), R_UNDEF, 0);
                break;
            case 0x08:
                set_rule(s, uleb(&r), R_SAME, 0);
                break;
            case 0x09:
                reg = uleb(&r);
                uleb(&r);
                set_rule(s, reg, R_OTHER, 0);
                break;
            case 0x0a:
                if (depth < STATE_STACK)
                    stack[depth++] = *s;
                else
                    lost++;
                break;
            case 0x0b:
                if (lost > 0)
                    lost--;
                else if (depth > 0) {
                    /* the CFA is restored too (DWARF 5 §6.4.2.4) */
                    *s = stack[--depth];
                } else
                    return -1;
                break;
            case 0x0c:
                s->cfa_reg = (int)uleb(&r);
                s->cfa_off = (int64_t)uleb(&r);
                break;
            case 0x0d:
                s->cfa_reg = (int)uleb(&r);
                break;
            case 0x0e:
                s->cfa_off = (int64_t)uleb(&r);
                break;
            case 0x0f: /* def_cfa_expression */
                off = (int64_t)uleb(&r);
                if (off < 0 || off > r.end - r.p)
                    return -1;
                r.p += off;
                s->cfa_reg = -1;
                break;
            case 0x10: /* expression */
            case 0x16: /* val_expression */
                reg = uleb(&r);
                off = (int64_t)uleb(&r);
                if (off < 0 || off > r.end - r.p)
                    return -1;
                r.p += off;
                set_rule(s, reg, R_OTHER, 0);
                break;
            case 0x11:
                reg = uleb(&r);
                set_rule(s, reg, R_OFFSET, sleb(&r) * c->data_align);
                break;
            case 0x12:
                s->cfa_reg = (int)uleb(&r);
                s->cfa_off = sleb(&r) * c->data_align;
                break;
            case 0x13:
                s->cfa_off = sleb(&r) * c->data_align;
                break;
            case 0x14: /* val_offset */
                reg = uleb(&r);
                uleb(&r);
                set_rule(s, reg, R_OTHER, 0);
                break;
            case 0x15: /* val_offset_sf */
                reg = uleb(&r);
                sleb(&r);
                set_rule(s, reg, R_OTHER, 0);
                break;
            case 0x2e:
                uleb(&r);
                break; /* GNU_args_size */
            case 0x2f: /* GNU_negative_offset_extended */
                reg = uleb(&r);
                set_rule(s, reg, R_OFFSET, -(int64_t)uleb(&r) * c->data_align);
                break;
            default:
                return -1;
            }
        }
        if (r.bad)
            return -1;
        if (next != *loc) {
            if (next < *loc || next >= pc_end)
                break; /* the rest lies outside the FDE */
            if (o != NULL)
                put(o, row_of(s, (uint32_t)(*loc - bias)));
            *loc = next;
        }
    }
    return r.bad ? -1 : 0;
}

/* Rows for the FDE at `p` (bytes in [lo, hi)).  @return 0, or -1 when it
 * cannot be read (nothing written). */
static int read_fde(const unsigned char *p, const unsigned char *lo, const unsigned char *hi,
                    uint64_t bias, uint64_t *start, uint64_t *stop, rows *o)
{
    const unsigned char *body;
    cie c;
    state init, s;
    uint64_t cie_off, pc, range, loc;
    size_t n0 = o->n;
    rd r;

    if (entry(p, lo, hi, &r) != 0)
        return -1;
    body = r.p;
    cie_off = fixed(&r, 4);
    if (r.bad || cie_off == 0 || cie_off > (uint64_t)(body - lo))
        return -1;
    if (read_cie(body - cie_off, lo, hi, &c) != 0)
        return -1;
    pc = encoded(&r, c.fde_enc);
    range = encoded(&r, c.fde_enc & 0x0f);
    if (c.has_z) {
        uint64_t n = uleb(&r);
        if (n > (uint64_t)(r.end - r.p))
            return -1;
        r.p += n;
    }
    if (r.bad || pc < bias || range == 0 || pc + range < pc || pc + range - bias > UINT32_MAX)
        return -1;
    memset(&init, 0, sizeof init);
    init.cfa_reg = DW_RSP;
    init.ra.how = R_SAME;
    loc = pc;
    if (run(c.insns, c.insns_end, &c, &init, &init, &loc, pc + range, bias, NULL) != 0 || loc != pc)
        return -1;
    s = init;
    if (run(r.p, r.end, &c, &s, &init, &loc, pc + range, bias, o) != 0) {
        o->n = n0;
        return -1;
    }
    put(o, row_of(&s, (uint32_t)(loc - bias)));
    *start = pc;
    *stop = pc + range;
    return 0;
}

int vmp_jvmti__cfi_build(uint64_t hdr, uint64_t bias, uint64_t lo, uint64_t hi, vmp_cfi_table *out)
{
    const unsigned char *h = (const unsigned char *)(uintptr_t)hdr;
    const unsigned char *l = (const unsigned char *)(uintptr_t)lo,
                        *e = (const unsigned char *)(uintptr_t)hi;
    rows o;
    uint32_t count, i;
    uint64_t last_stop = 0;

    memset(out, 0, sizeof *out);
    memset(&o, 0, sizeof o);
    if (hdr < lo || hdr >= hi)
        return -1;
    count = vmp_eh_frame_hdr_count(h, (size_t)(hi - hdr));
    if (count == 0)
        return -1;
    for (i = 0; i < count && !o.oom; i++) {
        int32_t fde_rel;
        uint64_t start = 0, stop = 0;
        vmp_cfi_row gap;
        memcpy(&fde_rel, h + VMP_EH_FRAME_HDR_TABLE + (size_t)i * VMP_EH_FRAME_HDR_ENTRY + 4,
               sizeof fde_rel);
        out->fdes++;
        if (read_fde(h + fde_rel, l, e, bias, &start, &stop, &o) != 0) {
            out->fdes_bad++;
            continue;
        }
        /* the end of the FDE: nothing is known past it unless the next
         * FDE starts there (its first row then replaces this one) */
        memset(&gap, 0, sizeof gap);
        gap.loc = (uint32_t)(stop - bias);
        gap.kind = VMP_CFI_NONE;
        if (stop > last_stop) {
            put(&o, gap);
            last_stop = stop;
        }
    }
    if (o.oom) {
        free(o.v);
        return -1;
    }
    out->rows = o.v;
    out->n = o.n;
    if (o.n > 0) {
        /* the page index: page[p] = the rows at or before page p's start */
        uint32_t p, k = 0;
        out->page_lo = o.v[0].loc >> 12;
        out->n_pages = (o.v[o.n - 1].loc >> 12) - out->page_lo + 1;
        out->page = malloc(((size_t)out->n_pages + 1) * sizeof *out->page);
        for (p = 0; out->page != NULL && p <= out->n_pages; p++) {
            uint64_t start = ((uint64_t)out->page_lo + p) << 12;
            while (k < o.n && o.v[k].loc <= start)
                k++;
            out->page[p] = k;
        }
    }
    return 0;
}

void vmp_jvmti__cfi_free(vmp_cfi_table *t)
{
    free(t->rows);
    free(t->page);
    memset(t, 0, sizeof *t);
}

const vmp_cfi_row *vmp_jvmti__cfi_find(const vmp_cfi_table *t, uint64_t off)
{
    size_t lo = 0, hi = t->n;
    if (off > UINT32_MAX)
        return NULL;
    if (t->page != NULL) {
        uint64_t p = off >> 12;
        if (p < t->page_lo)
            return NULL; /* before the first row's page: before the first row */
        p -= t->page_lo;
        if (p < t->n_pages) {
            /* the answer lies in [page[p] - 1, page[p + 1] - 1] */
            lo = t->page[p];
            hi = t->page[p + 1];
        } else
            return &t->rows[t->n - 1];
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->rows[mid].loc <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == 0 ? NULL : &t->rows[lo - 1];
}
