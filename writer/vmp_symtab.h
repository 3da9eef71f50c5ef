/* SPDX-License-Identifier: MIT
 *
 * vmp_symtab.h - a module's symbols kept back by the writer
 * (vmp_writer_options.lazy_symbols): the symbols in the order spec.md
 * R-RES-6 resolves them, so that the writer finds the symbol a reader would
 * choose for a pc, and the record of the symbols a pc needs.
 *
 * Which symbols a pc needs, so that a file holding only those resolves it as
 * the full table does: the symbol R-RES-6 chooses for it with the full table
 * and, when that symbol has size 0 (it covers up to the next symbol of its
 * module), that next symbol, which ends it.  A symbol another written symbol
 * covers is chosen only if the full table chooses it, and a size-0 symbol
 * ends where it ends with the full table: so every pc that needed its
 * symbols resolves alike, and a pc no symbol covers stays uncovered.
 * (R-RES-6 walks at most 256 nested symbols; a pc under more is the one
 * case where the two may differ.)
 *
 * Internal to libvmp-writer.  A table is built once (vmp_symtab__build()),
 * then read and marked by the drain only.
 */
#ifndef VMP_SYMTAB_H
#define VMP_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

#include "vmp_encode.h"
#include "vmp_writer.h"

typedef struct vmp_symtab_sym {
    uint64_t addr, end; /* runtime range; a size-0 symbol's end derived */
    uint64_t value, size;
    uint32_t seq; /* position in the module's list (R-RES-6 ties) */
    uint32_t up;  /* 1 + index of the nearest earlier symbol ending past addr */
    size_t name;  /* offset in the table's names */
    int written;
} vmp_symtab_sym;

typedef struct vmp_symtab {
    struct vmp_symtab *next; /* the writer's list, newest first */
    uint64_t module_id, start, end;
    uint64_t stamp; /* its MODULE record precedes the samples from here */
    int nodes_done; /* the symbols of the nodes written before it written */
    vmp_symtab_sym *syms;
    size_t n;
    char *names;
} vmp_symtab;

/** A table of `n` symbols of module `module_id` (load bias `bias`, mapped at
 *  [start, end), end 0 == unknown).  @return the table (malloc'd; free it
 *  with vmp_symtab__free()), or NULL when out of memory. */
vmp_symtab *vmp_symtab__build(uint64_t module_id, uint64_t bias, uint64_t start, uint64_t end,
                              const vmp_symbol_desc *syms, size_t n);

/** Append to `out` (an array of triples value, size, name being built) the
 *  symbols that `pc` needs and that were not written, marking them written.
 *  @return the number of symbols appended. */
size_t vmp_symtab__need(vmp_symtab *t, uint64_t pc, vmp_buf *out);

void vmp_symtab__free(vmp_symtab *t);

#endif
