/* SPDX-License-Identifier: MIT
 *
 * vmp_jvmti_threads.h - the HotSpot agent's table of sampled threads, and the
 * /proc/self/task helpers that find the threads JVMTI does not report (GC
 * workers, JIT compiler threads, the VM thread, native threads).
 *
 * Every sampled thread of the process has a slot: Java threads from JVMTI's
 * ThreadStart (on the thread itself), the others from the agent's scans of
 * /proc/self/task (on the agent's service thread).  A slot holds the thread's
 * sampling clock and its frame buffer; the signal handler finds its own
 * thread's slot without a lock (vmp_jvmti__threads_self()).  Slots live in
 * segments mapped as the table grows and never unmapped, so a handler can
 * never touch freed memory; a slot is reused only after its thread is gone
 * from /proc/self/task.
 *
 * Internal to libvmp-jvmti.  Claiming, finding and releasing slots are
 * serialised by the caller (the agent's lock); vmp_jvmti__threads_self() is
 * async-signal-safe.
 */
#ifndef VMP_JVMTI_THREADS_H
#define VMP_JVMTI_THREADS_H

#include <stddef.h>
#include <stdint.h>

#include "vmp_agent_clock.h"
#include "vmp_writer.h"

/** Threads sampled at once, at most; more are counted, not sampled.  Slots
 *  are mapped 1024 at a time as the threads come (some 300 KB each). */
#define VMP_JVMTI_MAX_THREADS 65536

/** The life of a slot. */
enum vmp_jvmti_slot_status {
    VMP_JVMTI_SLOT_FREE = 0,    /* no thread */
    VMP_JVMTI_SLOT_LIVE = 1,    /* sampled: the handler finds it */
    VMP_JVMTI_SLOT_RETIRED = 2, /* not sampled (ThreadEnd, or it blocks
                                   SIGPROF) until the thread is gone */
};

/** What a thread is, from its kernel name (vmp_jvmti__thread_role()). */
enum vmp_jvmti_role {
    VMP_JVMTI_ROLE_OTHER = 0,
    VMP_JVMTI_ROLE_GC = 1,      /* a garbage collector's thread */
    VMP_JVMTI_ROLE_COMPILER = 2 /* a JIT compiler's thread */
};

/** One sampled thread. */
typedef struct vmp_jvmti_thread {
    uint64_t tid;   /* kernel thread id; 0 == free (written last when claimed) */
    int status;     /* enum vmp_jvmti_slot_status (atomic) */
    int java;       /* registered through JVMTI: the handler has its JNIEnv */
    int role;       /* enum vmp_jvmti_role */
    int blocked;    /* found blocking SIGPROF: checked again at each scan */
    int named;      /* a THREAD record gave its name */
    uint32_t scans; /* scans that have seen it */
    /* The top of its stack (exclusive), 0 until known; written by the
     * service thread from a stack pointer the handler left in probe_sp
     * (vmp_jvmti__stack_tops()).  Both atomic. */
    uint64_t stack_hi;
    uint64_t probe_sp;
    vmp_agent_clock clock;
    vmp_frame *frames; /* the handler's frame buffer (malloc'd, depth + 1) */
    void *java_frames; /* AsyncGetCallTrace's frame buffer (malloc'd, as many
                          entries of the size given to the claim) */
    char comm[16];     /* the kernel's name, read when found */
    char name[128];    /* the name its THREAD record gave (cut), for the next file of a loop */
} vmp_jvmti_thread;

/** The slot of `tid`, or NULL.  Under the caller's lock. */
vmp_jvmti_thread *vmp_jvmti__threads_find(uint64_t tid);

/** A free slot for `tid`, zeroed but for `clock.fd` (-1), with a frame
 *  buffer of `frames` entries and a Java frame buffer of `frames` entries
 *  of `java_frame_size` bytes, its status FREE: the caller fills it, then
 *  publishes it with vmp_jvmti__threads_set_status().  Under the caller's lock.
 *  @return NULL when every slot is taken or memory is short. */
vmp_jvmti_thread *vmp_jvmti__threads_claim(uint64_t tid, size_t frames, size_t java_frame_size);

/** Set `t`'s status: LIVE makes a claimed slot visible to its thread's
 *  signal handler; a RETIRED slot is no longer found by it.  Under the
 *  lock. */
void vmp_jvmti__threads_set_status(vmp_jvmti_thread *t, int status);

/** Free `t` and its frame buffers (its clock must be stopped) once its thread
 *  is gone, or once no handler can run any more.  Under the lock. */
void vmp_jvmti__threads_release(vmp_jvmti_thread *t);

/** Slots to visit: the index bound of vmp_jvmti__threads_at().  Under the
 *  lock. */
size_t vmp_jvmti__threads_bound(void);

/** The slot at index `i` (< vmp_jvmti__threads_bound(); it may be FREE). */
vmp_jvmti_thread *vmp_jvmti__threads_at(size_t i);

/** In the signal handler: the calling thread's slot when it is LIVE, else
 *  NULL.  Remembers the slot in the thread's TLS.  ASYNC-SIGNAL-SAFE. */
vmp_jvmti_thread *vmp_jvmti__threads_self(void);

/** On the thread itself: forget the remembered slot (before retiring it). */
void vmp_jvmti__threads_forget_self(void);

/** The tops of the stacks holding `n` stack pointers `sps` (each
 *  the sp of a live thread): tops[i] = the end of the readable and writable
 *  mapping of /proc/self/maps that contains sps[i], or 0 when none does.
 *  One read of the file.  Not async-signal-safe.  @return 0, or -1 (tops
 *  all 0). */
int vmp_jvmti__stack_tops(const uint64_t *sps, uint64_t *tops, size_t n);

/** The ids of /proc/self/task in ascending order (malloc'd into *out).
 *  @return 0, or -1 (nothing allocated). */
int vmp_jvmti__list_tasks(uint64_t **out, size_t *n);

/** The index of `tid` in the ascending `tids`, or -1. */
long vmp_jvmti__tasks_index(const uint64_t *tids, size_t n, uint64_t tid);

/** The kernel's name of thread `tid` (/proc/self/task/TID/comm, at most 15
 *  bytes) into `buf`.  @return 0, or -1 with buf "". */
int vmp_jvmti__task_comm(uint64_t tid, char *buf, size_t size);

/** @return 1 if thread `tid` blocks signal `sig` (SigBlk of its status), 0
 *  if not or unknown. */
int vmp_jvmti__task_blocks(uint64_t tid, int sig);

/** What a HotSpot thread named `comm` is: G1's, Parallel's, Serial's, ZGC's
 *  and Shenandoah's threads are GC, "C1 CompilerThre" and "C2 CompilerThre"
 *  compiler threads.  @return an enum vmp_jvmti_role. */
int vmp_jvmti__thread_role(const char *comm);

/** Find HotSpot's pthread key of the current thread's Thread*, from a Java
 *  thread whose JNIEnv is `env`: HotSpot stores each of its threads'
 *  Thread* under one key (ThreadLocalStorage) when the thread starts, after
 *  its own TLS, and a JavaThread holds its JNIEnv within a few KiB of that
 *  address.  Call before sampling starts; not thread-safe.
 *  @return 1 if exactly one key fits (remembered for
 *  vmp_jvmti__vm_knows_self()), 0 if none or several do. */
int vmp_jvmti__find_vm_key(const void *env);

/** @return 1 if the calling thread is one of HotSpot's threads and has set up
 *  its TLS, so that JNI's GetEnv on it reads TLS that exists; 0 for a
 *  native thread the VM never knew, a HotSpot thread before its TLS is set
 *  up or after it ends, or when vmp_jvmti__find_vm_key() found no key.
 *  Without this check a handler's GetEnv may be the thread's first access to
 *  libjvm's TLS, which glibc allocates with malloc: a deadlock if the signal
 *  interrupted malloc.  ASYNC-SIGNAL-SAFE (pthread_getspecific reads the
 *  thread's own key array, as async-profiler's handler does). */
int vmp_jvmti__vm_knows_self(void);

#endif
