/* SPDX-License-Identifier: MIT
 *
 * vmp_symchoice.h - spec.md R-RES-6 in one place: which symbol names an
 * address.  The writer (writer/vmp_symtab.c: it writes the symbols its
 * samples' pcs resolve to) and the analysis (analyze/vmp_symbols.c: it
 * resolves them) both choose with these functions, so that a reader finds
 * the symbol the writer kept.  Internal: not installed.
 *
 * The symbols are an array of the caller's own structs, sorted by address
 * (at one address the larger first, then in file order), each with
 *   uint64_t addr, end  its range [addr, end): a size-0 symbol's end as
 *                       R-RES-6 derives it (the next symbol or the end of
 *                       its module), set by the caller;
 *   uint32_t seq        its position in the file (ties);
 *   uint32_t up         set by vmp_symchoice_link(): 1 + the index of the
 *                       nearest earlier symbol that ends past its start,
 *                       or 0.  The chain from the last symbol starting at
 *                       or before a pc passes through every symbol that
 *                       covers the pc (each covers the start of every later
 *                       symbol up to the pc).
 * A vmp_symchoice_layout says where those fields are.
 *
 * Thread safety: pure functions of their arguments; async-signal-safe.
 */
#ifndef VMP_SYMCHOICE_H
#define VMP_SYMCHOICE_H

#include <stddef.h>
#include <stdint.h>

#include "vmp_search.h"

/* R-RES-6 readers walk at most this many nested symbols; a pc under more
 * is named by the innermost of those walked. */
#define VMP_SYMCHOICE_CHAIN_MAX 256

/** Where a symbol struct keeps the fields above (offsetof()), and its size. */
typedef struct vmp_symchoice_layout {
    size_t stride, addr, end, seq, up;
} vmp_symchoice_layout;

static inline uint64_t vmp_symchoice__u64(const void *syms, const vmp_symchoice_layout *l, size_t i,
                                          size_t off)
{
    return *(const uint64_t *)(const void *)((const char *)syms + i * l->stride + off);
}

static inline uint32_t vmp_symchoice__u32(const void *syms, const vmp_symchoice_layout *l, size_t i,
                                          size_t off)
{
    return *(const uint32_t *)(const void *)((const char *)syms + i * l->stride + off);
}

/** Set every symbol's `up` (the symbols sorted, their ends set). */
static inline void vmp_symchoice_link(void *syms, size_t n, const vmp_symchoice_layout *l)
{
    size_t i;
    for (i = 0; i < n; i++) {
        uint64_t addr = vmp_symchoice__u64(syms, l, i, l->addr);
        uint32_t j = (uint32_t)i; /* candidate + 1 */
        while (j && vmp_symchoice__u64(syms, l, j - 1, l->end) <= addr)
            j = vmp_symchoice__u32(syms, l, j - 1, l->up);
        *(uint32_t *)(void *)((char *)syms + i * l->stride + l->up) = j;
    }
}

/** The symbol R-RES-6 chooses for `pc`: the smallest covering it; of equal
 *  sizes the one starting last, then the first in the file.
 *  @return its index + 1, or 0 when no symbol covers pc. */
static inline size_t vmp_symchoice_find(const void *syms, size_t n, const vmp_symchoice_layout *l,
                                        uint64_t pc)
{
    size_t k = vmp_upper_bound(syms, n, l->stride, l->addr, pc), steps = 0, best = 0;
    uint64_t best_addr = 0, best_size = 0;
    uint32_t best_seq = 0;
    while (k && steps++ < VMP_SYMCHOICE_CHAIN_MAX) {
        uint64_t addr = vmp_symchoice__u64(syms, l, k - 1, l->addr);
        uint64_t end = vmp_symchoice__u64(syms, l, k - 1, l->end);
        if (pc < end) {
            uint64_t size = end - addr;
            uint32_t seq = vmp_symchoice__u32(syms, l, k - 1, l->seq);
            if (!best || size < best_size ||
                (size == best_size &&
                 (addr > best_addr || (addr == best_addr && seq < best_seq)))) {
                best = k;
                best_addr = addr;
                best_size = size;
                best_seq = seq;
            }
        }
        k = vmp_symchoice__u32(syms, l, k - 1, l->up);
    }
    return best;
}

#endif
