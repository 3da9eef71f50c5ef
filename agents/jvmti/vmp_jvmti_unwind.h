/* SPDX-License-Identifier: MIT
 *
 * vmp_jvmti_unwind.h - native stacks for the HotSpot agent's samples: walks
 * the machine stack of a thread interrupted by the sampling signal with DWARF
 * CFI (.eh_frame), through libunwind's remote interface over a table of the
 * loaded modules prepared outside the signal handler (README.md, "Native
 * frames").  Frames are machine pcs (spec.md §5.11): the interrupted pc
 * first, then return addresses.
 *
 * Internal to libvmp-jvmti.  vmp_jvmti__unwind() and
 * vmp_jvmti__unwind_in_module() are async-signal-safe; the others are not
 * and must not run concurrently with each other.
 */
#ifndef VMP_JVMTI_UNWIND_H
#define VMP_JVMTI_UNWIND_H

#include <stdint.h>

#include "vmp_writer.h"

/** Most native frames one sample takes (the handler's stack buffer). */
#define VMP_JVMTI_NATIVE_MAX 64

/** Read the loaded modules and prepare libunwind.  Call once, outside any
 *  signal handler, before sampling starts.  @return 1 when native stacks are
 *  available, 0 when not (no libunwind in this build, an architecture it
 *  does not support, or memory cannot be probed safely). */
int vmp_jvmti__unwind_init(void);

/** Check the loader's load and unload counters (one dl_iterate_phdr step)
 *  and, when a library was loaded or unloaded since the last call that
 *  returned 1 (or since init), read the module list again.  Also without
 *  native stacks.  Outside any signal handler; one thread at a time.
 *  @return 1 when the list changed (and the tables, if any, were rebuilt),
 *  else 0. */
int vmp_jvmti__unwind_refresh(void);

/** Release every module table.  Only once no handler can run any more. */
void vmp_jvmti__unwind_shutdown(void);

/** @return 1 if `pc` lies in a loaded module's mapped segments, else 0.
 *  ASYNC-SIGNAL-SAFE. */
int vmp_jvmti__unwind_in_module(uint64_t pc);

/** Read the 8 bytes at `addr` into *val if they are mapped and readable:
 *  directly when they lie in [sp, stack_hi) (the interrupted thread's stack
 *  above its stack pointer; stack_hi 0 when its top is not known yet) or in
 *  a module's segments, else through process_vm_readv on this process (no
 *  fault).  @return 1 if read, else 0 (also when native stacks are
 *  unavailable).  ASYNC-SIGNAL-SAFE. */
int vmp_jvmti__unwind_read(uint64_t sp, uint64_t stack_hi, uint64_t addr, uint64_t *val);

/** Walk the native stack of the interrupted context `uc` (a ucontext_t *)
 *  whose stack ends below `stack_hi` (0: not known yet; reads above the
 *  stack pointer are then checked).  Frame rows prepared from .eh_frame
 *  (vmp_jvmti_cfi.h) say where each caller's frame is; where they cannot,
 *  libunwind walks the rest.  Writes VMP_FRAME_PC frames into `out` (at most `max`): the
 * interrupted pc when it lies in a module, then the return addresses of its callers, and stops
 * before the first pc outside every module (JIT code: the Java frames that AsyncGetCallTrace
 * reports), when CFI ends or the stack pointer stops growing.  Memory is read only where it is
 * known to be mapped and readable.  @return the number of frames; 0 when the pc is outside every
 *  module or native stacks are unavailable.  ASYNC-SIGNAL-SAFE: no lock, no
 *  allocation but libunwind's signal-safe pools, no loader call. */
uint32_t vmp_jvmti__unwind(void *uc, uint64_t stack_hi, vmp_frame *out, uint32_t max);

/** For tests: walk with the frame rows (1, the default) or with libunwind
 *  alone (0).  Before sampling starts. */
void vmp_jvmti__unwind_use_rows(int on);

/** For tests and figures: the walks handed to libunwind where the rows could
 *  not say, and the reads checked through process_vm_readv, since the
 *  process started. */
void vmp_jvmti__unwind_counts(uint64_t *handovers, uint64_t *checked_reads);

#endif
