/* SPDX-License-Identifier: MIT
 *
 * vmp_jvmti_anchor.h - HotSpot's frame anchor (JavaThread::_anchor: the last
 * Java frame's sp and pc, which AsyncGetCallTrace starts from when the thread
 * is in VM or native code).  A thread that calls from the interpreter or
 * compiled code into the VM records the sp but not always the pc; the VM
 * fills the pc in only when it walks the stack itself, and until then
 * AsyncGetCallTrace gives up with ticks_unknown_not_Java.  As HotSpot does,
 * the pc is the return address just below that sp: the handler sets it for
 * the duration of one AsyncGetCallTrace call and clears it again.  Field
 * offsets come from the VM's own table of them (gHotSpotVMStructs); a
 * thread's JavaThread from its JNIEnv, a field of the JavaThread at a fixed
 * offset (so that threads that ran before the agent came need nothing).
 *
 * Internal to libvmp-jvmti.  vmp_jvmti__anchor_make_walkable() and
 * vmp_jvmti__anchor_restore() are async-signal-safe and act on the calling
 * thread only.
 */
#ifndef VMP_JVMTI_ANCHOR_H
#define VMP_JVMTI_ANCHOR_H

#include <jvmti.h>
#include <stdint.h>

/** Find the anchor's field offsets in libjvm's gHotSpotVMStructs, and
 *  where a thread's JNIEnv lies in its JavaThread (from the calling Java
 *  thread: `jni` is its JNIEnv, `thread` its jthread, whose field eetop is
 *  the JavaThread).  Outside any handler.  @return 1 when found, else 0
 *  (the retry is then off). */
int vmp_jvmti__anchor_init(JNIEnv *jni, jthread thread);

/** If the anchor of the calling thread (`env` its JNIEnv) has a last Java
 *  sp but no pc, set the pc to the return address stored just below the sp
 *  (read only when mapped: `sp` and `stack_hi` are the interrupted stack
 *  pointer and the top of the thread's stack, as vmp_jvmti__unwind_read()
 *  takes them).  @return 1 when it did (call vmp_jvmti__anchor_restore()
 *  with the same `env` after AsyncGetCallTrace), else 0.
 *  ASYNC-SIGNAL-SAFE. */
int vmp_jvmti__anchor_make_walkable(JNIEnv *env, uint64_t sp, uint64_t stack_hi);

/** Clear the pc that vmp_jvmti__anchor_make_walkable() set.  ASYNC-SIGNAL-SAFE. */
void vmp_jvmti__anchor_restore(JNIEnv *env);

#endif
