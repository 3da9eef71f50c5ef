/* SPDX-License-Identifier: MIT
 *
 * vmp_jvmti_cfi.h - compact frame rules for the HotSpot agent's native
 * unwinder, prepared from a module's .eh_frame outside the signal handler and
 * binary-searched in it (README.md, "Native frames").
 *
 * On x86-64 almost every frame of compiled C and C++ is described by three
 * facts at each pc: the canonical frame address (CFA) is the stack pointer or
 * the frame pointer plus a constant; the return address is at CFA - 8; the
 * caller's frame pointer is either unchanged or saved at CFA plus a constant.
 * One row per change of those facts, sorted by pc, is all the handler needs,
 * as async-profiler's DWARF walker keeps it.  Whatever the rows cannot say
 * (a CFA computed by an expression, as in PLT entries and signal
 * trampolines, or a register other than rsp and rbp, as in functions that
 * realign their stack) is a row of kind NONE, where the walk falls back to
 * libunwind.
 *
 * Internal to libvmp-jvmti.  Building is not async-signal-safe (it
 * allocates); vmp_jvmti__cfi_find() is.
 */
#ifndef VMP_JVMTI_CFI_H
#define VMP_JVMTI_CFI_H

#include <stddef.h>
#include <stdint.h>

/** What a row says about the CFA. */
enum vmp_cfi_kind {
    VMP_CFI_NONE = 0, /* no rule the rows can hold: ask libunwind */
    VMP_CFI_SP = 1,   /* CFA = rsp + cfa_off */
    VMP_CFI_FP = 2,   /* CFA = rbp + cfa_off */
    VMP_CFI_END = 3   /* the return address is undefined: the outermost frame */
};

/** The caller's rbp is the callee's (fp_off of a row). */
#define VMP_CFI_FP_SAME INT16_MIN

/** The rule from `loc` up to the next row's loc. */
typedef struct vmp_cfi_row {
    uint32_t loc;    /* pc - the module's load bias */
    int32_t cfa_off; /* added to the CFA register */
    int16_t fp_off;  /* the caller's rbp is at CFA + fp_off, or VMP_CFI_FP_SAME */
    uint8_t kind;    /* enum vmp_cfi_kind */
    uint8_t pad;
} vmp_cfi_row;

/** One module's rows (malloc'd). */
typedef struct vmp_cfi_table {
    vmp_cfi_row *rows; /* sorted by loc, no two with the same loc */
    size_t n;
    uint32_t *page; /* page[p]: the rows with loc <= the start of the p-th 4 KiB page
                       from page_lo (n_pages + 1 entries, malloc'd; NULL: none) */
    uint32_t page_lo, n_pages;
    size_t fdes;     /* FDEs read */
    size_t fdes_bad; /* FDEs that could not be read (their pcs: NONE) */
} vmp_cfi_table;

/** Build `out` from the module whose .eh_frame_hdr is mapped at `hdr`, with
 *  load bias `bias`; every byte read lies in [lo, hi) (the module's mapped
 *  segments from the lowest to the highest, all readable: the caller is in
 *  dl_iterate_phdr's callback, or the module is otherwise known mapped).
 *  Only the hdr layout vmp_eh_frame_hdr_count() accepts is read; FDEs whose
 *  bytes are malformed or out of range cover their pcs with NONE rows.
 *  @return 0, or -1 when memory is short or the hdr is unusable (`out`
 *  empty).  Not async-signal-safe. */
int vmp_jvmti__cfi_build(uint64_t hdr, uint64_t bias, uint64_t lo, uint64_t hi, vmp_cfi_table *out);

/** Free `t`'s rows. */
void vmp_jvmti__cfi_free(vmp_cfi_table *t);

/** The row covering `off` (a pc minus the load bias), or NULL before the
 *  first row: a binary search among the rows of its 4 KiB page.
 *  ASYNC-SIGNAL-SAFE. */
const vmp_cfi_row *vmp_jvmti__cfi_find(const vmp_cfi_table *t, uint64_t off);

#endif
