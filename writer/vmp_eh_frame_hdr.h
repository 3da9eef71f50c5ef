/* SPDX-License-Identifier: MIT
 *
 * vmp_eh_frame_hdr.h - the header of an ELF object's .eh_frame_hdr (the
 * DWARF exception-handling ABI's binary-search table of its functions), as
 * both the writer (function starts for unnamed symbols, vmp_modules.c) and
 * the HotSpot agent's unwinder (agents/jvmti/vmp_jvmti_unwind.c) read it.
 *
 * Internal: not installed.  Reads bytes only; async-signal-safe.
 */
#ifndef VMP_EH_FRAME_HDR_H
#define VMP_EH_FRAME_HDR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Pointer encodings (DW_EH_PE_*). */
#define VMP_EH_PE_UDATA4  0x03
#define VMP_EH_PE_SDATA4  0x0b
#define VMP_EH_PE_DATAREL 0x30

/* The table starts this many bytes into the section; each entry is two
 * signed 4-byte offsets from the section's start: the function's initial
 * location and its FDE, sorted by initial location. */
#define VMP_EH_FRAME_HDR_TABLE 12u
#define VMP_EH_FRAME_HDR_ENTRY 8u

/* The number of table entries of the .eh_frame_hdr at `h` (`size` bytes
 * readable, SIZE_MAX when the section is mapped whole), or 0 when it is not
 * the one layout every Linux toolchain emits: version 1, a 4-byte
 * .eh_frame pointer and count, a datarel sdata4 table. */
static inline uint32_t vmp_eh_frame_hdr_count(const unsigned char *h, size_t size)
{
    uint32_t count;
    unsigned ptr_fmt, cnt_fmt;
    if (size < VMP_EH_FRAME_HDR_TABLE || h[0] != 1)
        return 0;
    ptr_fmt = h[1] & 0x0fu; /* any application (pcrel, ...) of a 4-byte value */
    cnt_fmt = h[2];
    if ((ptr_fmt != VMP_EH_PE_UDATA4 && ptr_fmt != VMP_EH_PE_SDATA4) ||
        (cnt_fmt != VMP_EH_PE_UDATA4 && cnt_fmt != VMP_EH_PE_SDATA4) ||
        h[3] != (VMP_EH_PE_DATAREL | VMP_EH_PE_SDATA4))
        return 0;
    memcpy(&count, h + 8, sizeof count);
    if (count > (size - VMP_EH_FRAME_HDR_TABLE) / VMP_EH_FRAME_HDR_ENTRY)
        return 0;
    return count;
}

#endif
