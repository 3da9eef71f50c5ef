/* SPDX-License-Identifier: MIT
 *
 * vmp_jvmti_cmlr.h - turn HotSpot's per-nmethod debug information (the JVMTI
 * address location map and the jvmticmlr.h inline records) into the pc_map
 * and inline fields of a CODE_OBJECT (spec.md §5.7).
 *
 * HotSpot records a PcDesc at the *end* of the machine code it describes:
 * AsyncGetCallTrace and the deoptimizer look up a pc by taking the first
 * PcDesc whose offset is greater than the pc.  spec.md says a pair or inline
 * record holds from its offset up to the next one.  So the entry HotSpot
 * reports at offset p[i] is written at offset p[i-1] (0 for the first), and a
 * final inline record at the last offset says that the code after it runs only
 * the outermost method, as AsyncGetCallTrace reports it there.
 *
 * Internal to libvmp-jvmti.  Allocates; not async-signal-safe.
 */
#ifndef VMP_JVMTI_CMLR_H
#define VMP_JVMTI_CMLR_H

#include <jvmti.h>
#include <stddef.h>
#include <stdint.h>

#include "vmp_writer.h"

/** The pc map and inline records of one nmethod, in writer form. */
typedef struct vmp_jvmti_debuginfo {
    vmp_pc_pair *pairs;
    size_t n_pairs;
    vmp_inline_record *inlines;
    size_t n_inlines;
    vmp_frame *frames; /* storage the inline records point into */
} vmp_jvmti_debuginfo;

/** Build the pc map of code [start, start + size) from the JVMTI address
 *  location map (`map`, `map_length` entries; entries with a negative bci
 *  are dropped) and the inline records found in the `compile_info` chain
 *  (may be NULL).  `method` is the compiled method (outermost frame).
 *  @param[out] out  filled on success; release with vmp_jvmti__debuginfo_free().
 *  @return 0, or -1 on no memory (then `*out` is empty). */
int vmp_jvmti__debuginfo_build(vmp_jvmti_debuginfo *out, uint64_t start, uint64_t size,
                               const jvmtiAddrLocationMap *map, jint map_length,
                               const void *compile_info, uint64_t method);

/** Release what vmp_jvmti__debuginfo_build() allocated.  Accepts an empty one. */
void vmp_jvmti__debuginfo_free(vmp_jvmti_debuginfo *d);

#endif
