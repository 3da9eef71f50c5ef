/* SPDX-License-Identifier: MIT
 *
 * vmp_jvmti_crash.h - the JVM's own crash handling.  When HotSpot meets a
 * fatal error (a SIGSEGV in native code, a failed assertion) it writes its
 * hs_err file, then aborts; the threads run on meanwhile.  Whether it has
 * begun is VMError::_first_error_tid (-1 until then), a static of libjvm
 * found in its symbol table.  While it reports, the agent's signal handler
 * takes no samples (it stays out of the JVM's crash path) and the service
 * thread writes what was sampled to the file, so that the profile holds
 * the samples up to the crash.
 *
 * Internal to libvmp-jvmti.
 */
#ifndef VMP_JVMTI_CRASH_H
#define VMP_JVMTI_CRASH_H

/** Find VMError::_first_error_tid in the libjvm that holds
 *  AsyncGetCallTrace (`agct`, its address).  Not async-signal-safe; call
 *  once, before sampling starts.  @return 1 when found, 0 when not (another
 *  JVM, a stripped libjvm): vmp_jvmti__vm_crashing() is then always 0. */
int vmp_jvmti__crash_watch_init(const void *agct);

/** 1 once the JVM has begun reporting a fatal error.  Async-signal-safe
 *  (one load). */
int vmp_jvmti__vm_crashing(void);

#endif
