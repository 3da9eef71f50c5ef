/* SPDX-License-Identifier: MIT
 *
 * vmp_jvmti_int.h - what the HotSpot agent's files share: its state, the
 * header's vocabulary and their functions.  Internal: the library exports
 * the Agent_* entry points alone.
 *
 * Files (the outline is at the top of vmp_jvmti.c):
 *   vmp_jvmti.c          life cycle, options, outputs, loop rotation, JVMTI setup
 *   vmp_jvmti_samples.c  the SIGPROF handler (AsyncGetCallTrace, native
 *                        frames) and the samples of other kinds: allocations,
 *                        live objects, lock contention
 *   vmp_jvmti_methods.c  methods, classes and compiled code (JVMTI events)
 *   vmp_jvmti_service.c  threads (JVMTI's and those found in /proc), GC
 *                        events and the service thread
 */
#ifndef VMP_JVMTI_INT_H
#define VMP_JVMTI_INT_H

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <jvmti.h>
#include <jvmticmlr.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "vmp_agent_clock.h"
#include "vmp_agent_file.h"
#include "vmp_agent_interval.h"
#include "vmp_agent_signal.h"
#include "vmp_agent_write.h"
#include "vmp_jvmti_anchor.h"
#include "vmp_jvmti_attach.h"
#include "vmp_jvmti_cmlr.h"
#include "vmp_jvmti_crash.h"
#include "vmp_jvmti_kinds.h"
#include "vmp_jvmti_maps.h"
#include "vmp_jvmti_opts.h"
#include "vmp_jvmti_threads.h"
#include "vmp_jvmti_unwind.h"
#include "vmp_writer.h"

#define TLS_IE __attribute__((tls_model("initial-exec")))

#ifndef sigev_notify_thread_id
#    define sigev_notify_thread_id _sigev_un._tid

#endif

/* ---- Header vocabulary (spec.md §5.1; the names are in vmp_jvmti.c) ---- */

enum {
    ST_JAVA,
    ST_NATIVE_VM,
    ST_GC,
    ST_UNKNOWN,
    ST_COMPILER
};

enum {
    KIND_NMETHOD,
    KIND_INTERPRETER,
    KIND_STUB,
    KIND_ADAPTER
};

enum {
    EVT_GC,
    EVT_CODE_UNLOAD
};

#define LIVE_MAX_BYTES (64u << 20) /* live=: what the tracked allocations may hold */
/* AsyncGetCallTrace's error codes, by name: reason index == -code. */
#define REASON_NO_JNIENV  11 /* the thread has no JNIEnv (ended, or not a Java thread) */
#define N_FAILURE_REASONS 13 /* failure_reasons[] (vmp_jvmti.c) */
#define REASON_OTHER      12 /* a code AsyncGetCallTrace did not have in JDK 17 */

/* ---- AsyncGetCallTrace (exported by libjvm.so, declared by no header) ----- */

typedef struct agct_frame {
    jint lineno; /* the bci for Java frames; negative for native frames */
    jmethodID method_id;
} agct_frame;

typedef struct agct_trace {
    JNIEnv *env_id;
    jint num_frames;
    agct_frame *frames;
} agct_trace;

typedef void (*agct_fn)(agct_trace *trace, jint depth, void *ucontext);

/* ---- Agent state ---------------------------------------------------------- */

#define GC_RING 256

/* One output file and what it has been told.  A recording has one; a
 * recording with the loop option has a second one while it fills the next
 * file, and every description goes to both. */
typedef struct output {
    vmp_writer *w;             /* NULL: none; the handler reads vmp_jv.out.w */
    uint64_t zone;             /* its code zone (the code cache) */
    vmp_jvmti_idset functions; /* the methods described to it */
    vmp_jvmti_codemap code;    /* its live code objects */
    char path[VMP_JVMTI_PATH_MAX];
    int warned;           /* its failure was said (vmp_jvmti__output_failed_locked()) */
    vmp_agent_file_id id; /* the file opened, to notice it deleted or replaced */
} output;

typedef struct vmp_jv_state {
    JavaVM *vm;
    jvmtiEnv *jvmti;
    vmp_jvmti_options opts;
    agct_fn agct;
    int recorded; /* a recording started once: the JVM keeps the library */

    pthread_mutex_t lock;     /* guards everything below up to the atomics */
    output out;               /* the file samples go to; out.w NULL: none */
    output next;              /* loop: the next file while it is filled */
    uint64_t file_no;         /* loop: the number of out's file (vmp_jvmti_loop_path) */
    uint64_t not_opened;      /* loop: files in a row that could not be opened (said once) */
    int dead;                 /* recording stopped (VMDeath, stop): register nothing more */
    int failing;              /* an output failure was said and no file completed since */
    uint64_t dropped_failing; /* the samples the files closed since dropped */
    int sigprof_lost;         /* another handler took SIGPROF: said */
    int mechanism;            /* cpu mode: enum vmp_agent_mechanism */
    uint64_t next_code_id;
    uint64_t threads_unsampled; /* found with every slot taken */
    char process_comm[16];      /* the kernel's name of the process */
    int service_started;
    pthread_t service;
    int rotator_started; /* loop: the thread that starts each new file */
    pthread_t rotator;
    pthread_mutex_t rotate_mu; /* with rotate_cv: wakes the rotator to stop */
    pthread_cond_t rotate_cv;
    int stop_rotator; /* rotate_mu */

    uint32_t kind_alloc, kind_live, kind_lock; /* writer kinds asked for; 0 == none */
    const char *sample_kinds[3], *sample_units[3];
    vmp_jvmti_live live; /* live=: the sampled allocations not freed yet */
    size_t n_sample_kinds;

    atomic_int sampling;   /* the handler samples only while 1 */
    atomic_int in_handler; /* handlers running now */
    atomic_int stop_service;
    atomic_int recording; /* 1 from the writer's opening until stop_recording() */
    _Atomic uint64_t gc_start_ns;
    _Atomic uint64_t gc_head; /* written by the GC callbacks (one at a time) */
    _Atomic uint64_t gc_tail; /* written by the consumer, under `lock` */
    uint64_t gc_ring[GC_RING][2];
    _Atomic uint64_t gc_lost;
} vmp_jv_state;

/* the agent's state (vmp_jvmti.c) */
extern vmp_jv_state vmp_jv;

/* The outputs in the order descriptions go to them; skip those not open. */
extern output *const vmp_jv_outputs[2];
#define N_OUTPUTS 2

/* A Java thread's own data; set at ThreadStart, read by the handler. */
extern __thread JNIEnv *vmp_jv_tls_env TLS_IE;
extern __thread int vmp_jv_tls_registered_before TLS_IE; /* attached to the VM again */
extern __thread int vmp_jv_tls_agent_thread TLS_IE;      /* the agent's own: not sampled */

/* CLOCK_MONOTONIC in ns. */
uint64_t vmp_jvmti__now_ns(void);

void vmp_jvmti__stop_recording(void);
void vmp_jvmti__rotate(JNIEnv *jni);
void vmp_jvmti__write_live_samples(void);
void vmp_jvmti__check_write(vmp_status st);
/** As vmp_jvmti__check_write(), for a writer call on output `o`. */
void vmp_jvmti__check_write_to(output *o, vmp_status st);
/** Say, once per run of failures, that output `o` stopped (a full disk, an
 *  I/O error: the writer drops and counts the samples from then on).  Under
 *  vmp_jv.lock. */
void vmp_jvmti__output_failed_locked(output *o);
/** The service thread, each tick under vmp_jv.lock: whether the current
 *  file's output stopped (vmp_jvmti__output_failed_locked()), and whether
 *  its file was deleted or replaced at its path (said once a file: a
 *  cleaner of /tmp, a user; the samples then go to an inode no one can
 *  open). */
void vmp_jvmti__check_output_locked(void);
/** The service thread, each tick under vmp_jv.lock: say once when another
 *  handler replaced the agent's SIGPROF handler (vmp_agent__sigprof_is()). */
void vmp_jvmti__check_sigprof_locked(void);
uint64_t vmp_jvmti__stack_top(vmp_jvmti_thread *t, void *uc);
void vmp_jvmti__jfree(void *p);
void vmp_jvmti__define_class(jclass klass);
void vmp_jvmti__define_method_lazily(JNIEnv *jni, jmethodID m);
void vmp_jvmti__register_thread(JNIEnv *jni, jthread thread, int from_birth);
void vmp_jvmti__scan_threads_locked(int initial);
void vmp_jvmti__drain_gc_locked(void);
void vmp_jvmti__add_ns(struct timespec *ts, uint64_t ns);

/* JVMTI event callbacks, the signal handler and the service thread's body
 * (set up by vmp_jvmti.c) */
void *vmp_jvmti__service_main(void *arg);
void JNICALL vmp_jvmti__on_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);
void JNICALL vmp_jvmti__on_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread);
void JNICALL vmp_jvmti__on_class_load(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass);
void JNICALL vmp_jvmti__on_class_prepare(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread,
                                         jclass klass);
void JNICALL vmp_jvmti__on_compiled_method_load(jvmtiEnv *jvmti, jmethodID method, jint code_size,
                                                const void *code_addr, jint map_length,
                                                const jvmtiAddrLocationMap *map,
                                                const void *compile_info);
void JNICALL vmp_jvmti__on_compiled_method_unload(jvmtiEnv *jvmti, jmethodID method,
                                                  const void *code_addr);
void JNICALL vmp_jvmti__on_dynamic_code_generated(jvmtiEnv *jvmti, const char *name,
                                                  const void *address, jint length);
void JNICALL vmp_jvmti__on_gc_start(jvmtiEnv *jvmti);
void JNICALL vmp_jvmti__on_gc_finish(jvmtiEnv *jvmti);
void JNICALL vmp_jvmti__on_sampled_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread,
                                         jobject object, jclass klass, jlong size);
void JNICALL vmp_jvmti__on_object_free(jvmtiEnv *jvmti, jlong tag);
void JNICALL vmp_jvmti__on_contended_enter(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread,
                                           jobject object);
void JNICALL vmp_jvmti__on_contended_entered(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread,
                                             jobject object);
void vmp_jvmti__on_sigprof(int sig, siginfo_t *si, void *uc);

#endif
