/* SPDX-License-Identifier: MIT
 *
 * vmp_seek_int.h - the seek table's entries one by one, without allocating:
 * what vmp_seek_table_parse() builds on, and what the streaming reader uses
 * to check a table against the chunks it read (every allocation of a reader
 * goes through its own allocator).  Internal to the reader.
 */
#ifndef VMP_SEEK_INT_H
#define VMP_SEEK_INT_H

#include "vmp_seek.h"

/* Decode the table's content (as vmp_seek_table_parse()) and call `each`
 * for every entry, with the entry count (already checked against `size`);
 * stops at the first negative status `each` returns, and returns it.
 * @return VMP_OK, VMP_ERR_CORRUPT (with `err` set as vmp_seek_table_parse()
 *         says), or the status of `each`. */
vmp_status vmp_seek__walk(const void *content, size_t size, const char *name, uint64_t table_offset,
                          char *err, size_t err_size,
                          vmp_status (*each)(void *ctx, size_t count, size_t i,
                                             const vmp_seek_entry *e),
                          void *ctx);

#endif
