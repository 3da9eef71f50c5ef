/* SPDX-License-Identifier: MIT
 *
 * vmp_jvmti_kinds.h - the HotSpot agent's samples of kinds other than CPU
 * time (spec.md §5.15): what an allocation sample weighs, and the class
 * frames (R-KND-4) at the top of its stack.  Pure functions, unit-tested
 * without a JVM (tests/jvmti/test_jvmti_units.c).
 *
 * Internal to libvmp-jvmti: nothing here is exported from the shared object.
 */
#ifndef VMP_JVMTI_KINDS_H
#define VMP_JVMTI_KINDS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "vmp_writer.h"

/** Function ids of classes: bit 63 set, so that they never meet a
 *  jmethodID (an address below 2^63), the rest a hash of the class name. */
#define VMP_JVMTI_CLASS_ID_BIT (UINT64_C(1) << 63)

/** The Java name of a type from its JVM signature, as a Java programmer
 *  writes it: "Ljava/lang/String;" -> "java.lang.String", "[B" ->
 *  "byte[]", "[[Ljava/lang/Object;" -> "java.lang.Object[][]".  Writes at
 *  most `size` bytes, NUL-terminated.
 *  @return the length written, or 0 for a signature that is not a type.
 *  Any thread; no allocation. */
size_t vmp_jvmti__type_name(char *out, size_t size, const char *sig);

/** The function id of the class named `name` (FNV-1a of the name with
 *  VMP_JVMTI_CLASS_ID_BIT set): the same name always gives the same id. */
uint64_t vmp_jvmti__class_id(const char *name);

/** The bytes an allocation sample of an object of `size` bytes stands for,
 *  when HotSpot samples an allocation every `interval` bytes on average
 *  (SetHeapSamplingInterval: a Poisson process over the bytes allocated):
 *  size / (1 - e^(-size / interval)), the unbiased estimate (Go's heap
 *  profiler weighs its samples so): about `interval` for small objects,
 *  `size` for objects far above it.  `interval` 0: `size`. */
uint64_t vmp_jvmti__alloc_weight(uint64_t size, uint64_t interval);

/* ---- Live objects (live=on, spec.md §5.15 kind "live") ---------------- */

/** The sampled allocations whose objects may still be alive: each with the
 *  stack and weight of its allocation sample, under a tag (its index + 1)
 *  that the agent sets on the object (JVMTI SetTag) and that ObjectFree
 *  gives back.  Bounded by `max_bytes` of entries and frames: past it an
 *  allocation is not tracked, and counted.  Its own mutex: any thread. */
typedef struct vmp_jvmti_live_entry {
    vmp_frame *frames; /* NULL: a free entry */
    uint32_t depth;
    uint64_t weight, thread;
    size_t next_free; /* free list: index + 1 of the next free entry, 0 == none */
} vmp_jvmti_live_entry;

typedef struct vmp_jvmti_live {
    pthread_mutex_t mu;
    vmp_jvmti_live_entry *v;
    size_t n, cap, free_head, live;
    size_t bytes, max_bytes;
    uint64_t untracked; /* allocations not tracked: over max_bytes or no memory */
} vmp_jvmti_live;

/** An empty table of at most `max_bytes`. */
void vmp_jvmti__live_init(vmp_jvmti_live *t, size_t max_bytes);

/** Free every entry and the table (it may be used again after init). */
void vmp_jvmti__live_free(vmp_jvmti_live *t);

/** Track an allocation: a copy of its `depth` frames, its weight and
 *  thread.  @return its tag (>= 1), or 0 when not tracked (counted). */
int64_t vmp_jvmti__live_add(vmp_jvmti_live *t, const vmp_frame *frames, uint32_t depth,
                            uint64_t weight, uint64_t thread);

/** The object of `tag` was freed: forget its allocation.  Unknown tags are
 *  ignored. */
void vmp_jvmti__live_remove(vmp_jvmti_live *t, int64_t tag);

/** The tags tracked now, into a malloc'd array (`*n_out` of them; NULL
 *  when none or out of memory). */
int64_t *vmp_jvmti__live_tags(vmp_jvmti_live *t, size_t *n_out);

/** Call `fn` with the entry of `tag` under the table's lock (so that a
 *  concurrent remove waits); nothing for an unknown tag. */
void vmp_jvmti__live_with(vmp_jvmti_live *t, int64_t tag,
                          void (*fn)(const vmp_jvmti_live_entry *e, void *ctx), void *ctx);

#endif
