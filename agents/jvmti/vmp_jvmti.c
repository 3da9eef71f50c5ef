/* SPDX-License-Identifier: MIT
 *
 * vmp_jvmti.c - the HotSpot JVMTI agent: writes a vmp profile (spec.md) of a
 * running JVM: header vocabulary (§5.1), modules (§5.3), threads (§5.4),
 * functions (§5.5), the code cache as a code zone with its nmethods and stubs
 * (§5.6, §5.7, §5.10) and SIGPROF samples walked by AsyncGetCallTrace (§5.12).
 *
 * Outline.  Agent_OnLoad parses the options, asks for the JVMTI events,
 * opens the writer and installs the SIGPROF handler (begin_recording());
 * VMInit starts the recording live (start_live()): it defines every loaded
 * class's methods, records the loaded modules, replays the code generated
 * so far (GenerateEvents), finds the threads alive, starts the service
 * thread and sampling.  Agent_OnAttach (vmp record --pid) does both at once
 * in a running JVM, and its "stop" option ends the recording; a later
 * attach starts another.  With the loop option a rotator thread starts a
 * new file every period (rotate(): the next output is filled while both
 * receive every description, then the handler's writer is switched).  Each Java thread registers
 * itself in ThreadStart (JNIEnv in initial-exec TLS, a slot of the thread table with its frame
 * buffers and, in cpu mode, its own sampling clock, a perf event or a POSIX
 * timer, vmp_agent_clock.h); every other thread (GC, JIT compilers, native
 * threads, and Java threads that ran before an attach) gets a slot from the
 * service thread's scans of /proc/self/task (vmp_jvmti_threads.h).  VMDeath
 * (or Agent_OnUnload, or a stop) stops sampling, waits for handlers in
 * flight and closes the writer (stop_recording()).
 *
 * The signal handler (on_sigprof) takes no locks, allocates nothing and calls
 * no JVMTI or JNI function but GetEnv (which reads the thread's TLS): it
 * reads TLS, walks the native frames above the
 * last Java frame (vmp_jvmti_unwind.h), calls AsyncGetCallTrace and
 * vmp_writer_sample(), all designed for signal context.  Everything else runs
 * in JVMTI callbacks or the service thread and is serialised by `g.lock`;
 * JVMTI calls are made outside that lock, so that a thread holding it never
 * waits for a safepoint.
 */
#include <dlfcn.h>
#include <errno.h>
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
#include "vmp_agent_interval.h"
#include "vmp_agent_signal.h"
#include "vmp_agent_write.h"
#include "vmp_jvmti_anchor.h"
#include "vmp_jvmti_attach.h"
#include "vmp_jvmti_cmlr.h"
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

/* ---- Header vocabulary (spec.md §5.1) ------------------------------------ */

enum {
    ST_JAVA,
    ST_NATIVE_VM,
    ST_GC,
    ST_UNKNOWN,
    ST_COMPILER
};

static const char *const states[] = {"java", "native/vm", "gc", "unknown", "compiler"};

/* The state of a sample without Java frames, by the thread's role. */
static const unsigned char role_state[] = {ST_NATIVE_VM, ST_GC, ST_COMPILER};

enum {
    KIND_NMETHOD,
    KIND_INTERPRETER,
    KIND_STUB,
    KIND_ADAPTER
};

static const char *const code_kinds[] = {"nmethod", "interpreter", "stub", "adapter"};

enum {
    EVT_GC,
    EVT_CODE_UNLOAD
};

static const char *const event_kinds[] = {"gc", "code unload"};

/* Sample kinds beside CPU time (spec.md §5.15), declared in this order
 * when asked for (alloc=, lock=); g.kind_* are their writer kinds. */
static const char *const kind_names[] = {"alloc", "live", "lock"};
static const char *const kind_units[] = {"bytes", "bytes", "nanoseconds"};
#define LIVE_MAX_BYTES (64u << 20) /* live=: what the tracked allocations may hold */

/* AsyncGetCallTrace's error codes, by name: reason index == -code. */
#define REASON_NO_JNIENV 11 /* the thread has no JNIEnv (ended, or not a Java thread) */
#define REASON_OTHER     12 /* a code AsyncGetCallTrace did not have in JDK 17 */
static const char *const failure_reasons[] = {"ticks_no_Java_frame",
                                              "ticks_no_class_load",
                                              "ticks_GC_active",
                                              "ticks_unknown_not_Java",
                                              "ticks_not_walkable_not_Java",
                                              "ticks_unknown_Java",
                                              "ticks_not_walkable_Java",
                                              "ticks_unknown_state",
                                              "ticks_thread_exit",
                                              "ticks_deopt",
                                              "ticks_safepoint",
                                              "no_JNIEnv",
                                              "ticks_other"};
static const unsigned char reason_state[] = {
    ST_NATIVE_VM, ST_UNKNOWN, ST_GC,   ST_NATIVE_VM, ST_NATIVE_VM, ST_JAVA,   ST_JAVA,
    ST_UNKNOWN,   ST_UNKNOWN, ST_JAVA, ST_NATIVE_VM, ST_UNKNOWN,   ST_UNKNOWN};
_Static_assert(sizeof reason_state == sizeof failure_reasons / sizeof failure_reasons[0],
               "one state per failure reason");

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
    vmp_writer *w;             /* NULL: none; the handler reads g.out.w */
    uint64_t zone;             /* its code zone (the code cache) */
    vmp_jvmti_idset functions; /* the methods described to it */
    vmp_jvmti_codemap code;    /* its live code objects */
    char path[VMP_JVMTI_PATH_MAX];
} output;

static struct {
    JavaVM *vm;
    jvmtiEnv *jvmti;
    vmp_jvmti_options opts;
    agct_fn agct;
    int recorded; /* a recording started once: the JVM keeps the library */

    pthread_mutex_t lock; /* guards everything below up to the atomics */
    output out;           /* the file samples go to; out.w NULL: none */
    output next;          /* loop: the next file while it is filled */
    uint64_t file_no;     /* loop: the number of out's file (vmp_jvmti_loop_path) */
    int dead;             /* recording stopped (VMDeath, stop): register nothing more */
    int warned_write;
    int mechanism; /* cpu mode: enum vmp_agent_mechanism */
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
} g = {.lock = PTHREAD_MUTEX_INITIALIZER,
       .rotate_mu = PTHREAD_MUTEX_INITIALIZER,
       .rotate_cv = PTHREAD_COND_INITIALIZER};

/* The outputs in the order descriptions go to them; skip those not open. */
static output *const outputs[2] = {&g.out, &g.next};
#define N_OUTPUTS 2

/* A Java thread's own data; set at ThreadStart, read by the handler. */
static __thread JNIEnv *tls_env TLS_IE;
static __thread int tls_registered_before TLS_IE; /* attached to the VM again */
static __thread int tls_agent_thread TLS_IE;      /* the agent's own: not sampled */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- Allocation samples (spec.md §5.15 kind "alloc") ------------------- */

/* Under g.lock: the class `name` (function id `id`) described to every open
 * output that lacks it (R-KND-4). */
static void describe_class_locked(uint64_t id, const char *name)
{
    int i;
    for (i = 0; i < N_OUTPUTS; i++) {
        output *o = outputs[i];
        if (o->w != NULL && vmp_jvmti__idset_add(&o->functions, id) == 1)
            vmp_agent__check_write(vmp_writer_class(o->w, id, name), g.out.path, &g.warned_write);
    }
}

static void define_method_lazily(JNIEnv *jni, jmethodID m);

/* A sample of writer kind `kind` weighing `weight`: the class `klass` over
 * the Java stack of `thread` (the current thread), from a JVMTI callback. */
static void kind_sample(jvmtiEnv *jvmti,
                        JNIEnv *jni,
                        jthread thread,
                        jobject object,
                        jclass klass,
                        uint32_t kind,
                        uint64_t weight)
{
    jvmtiFrameInfo *fi;
    vmp_frame *vf;
    vmp_sample s;
    char name[512], *sig = NULL;
    jint n = 0, i;
    uint64_t cid;

    fi = malloc((size_t)g.opts.depth * sizeof *fi);
    vf = malloc(((size_t)g.opts.depth + 1) * sizeof *vf);
    if (fi == NULL || vf == NULL)
        goto out;
    if ((*jvmti)->GetClassSignature(jvmti, klass, &sig, NULL) != JVMTI_ERROR_NONE ||
        vmp_jvmti__type_name(name, sizeof name, sig) == 0)
        snprintf(name, sizeof name, "%s", "[unknown class]");
    cid = vmp_jvmti__class_id(name);
    if ((*jvmti)->GetStackTrace(jvmti, thread, 0, (jint)g.opts.depth, fi, &n) != JVMTI_ERROR_NONE)
        n = 0;
    vf[0].kind = VMP_FRAME_FUNCTION; /* the class, innermost */
    vf[0].value = cid;
    vf[0].bcpc = VMP_BCPC_NONE;
    for (i = 0; i < n; i++) {
        define_method_lazily(jni, fi[i].method);
        vf[i + 1].kind = VMP_FRAME_FUNCTION;
        vf[i + 1].value = (uint64_t)(uintptr_t)fi[i].method;
        vf[i + 1].bcpc = fi[i].location < 0 || fi[i].location >= (jlocation)UINT32_MAX
                             ? VMP_BCPC_NONE
                             : (uint32_t)fi[i].location;
    }
    memset(&s, 0, sizeof s);
    s.thread = (uint64_t)syscall(SYS_gettid);
    s.generation = VMP_GENERATION_CURRENT;
    s.state = ST_JAVA;
    s.frames = vf;
    s.depth = (uint32_t)n + 1;
    /* under the lock: no output closes meanwhile (stop_recording(), rotate()) */
    pthread_mutex_lock(&g.lock);
    if (g.out.w != NULL && !g.dead) {
        describe_class_locked(cid, name);
        vmp_writer_kind_sample(g.out.w, kind, &s, weight);
    }
    pthread_mutex_unlock(&g.lock);
    /* live=: tracked until ObjectFree says the object is gone */
    if (object != NULL && kind == g.kind_alloc && g.kind_live > 0) {
        int64_t tag = vmp_jvmti__live_add(&g.live, vf, s.depth, weight, s.thread);
        if (tag > 0 && (*jvmti)->SetTag(jvmti, object, (jlong)tag) != JVMTI_ERROR_NONE)
            vmp_jvmti__live_remove(&g.live, tag);
    }
out:
    if (sig != NULL)
        (*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
    free(fi);
    free(vf);
}

/* JVMTI SampledObjectAlloc, on the allocating thread after the allocation
 * (HotSpot samples one every alloc= bytes on average): the allocated class
 * over the thread's Java stack, weighing the bytes it stands for. */
static void JNICALL on_sampled_alloc(
    jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object, jclass klass, jlong size)
{
    if (!atomic_load(&g.sampling) || tls_agent_thread || g.kind_alloc == 0)
        return;
    kind_sample(jvmti, jni, thread, object, klass, g.kind_alloc,
                vmp_jvmti__alloc_weight(size > 0 ? (uint64_t)size : 0, g.opts.alloc_bytes));
}

/* JVMTI ObjectFree: a tracked object (live=) is gone. */
static void JNICALL on_object_free(jvmtiEnv *jvmti, jlong tag)
{
    (void)jvmti;
    vmp_jvmti__live_remove(&g.live, (int64_t)tag);
}

/* Under g.lock: one live sample of a tracked allocation. */
static void write_live_one(const vmp_jvmti_live_entry *e, void *ctx)
{
    vmp_sample s;
    memset(&s, 0, sizeof s);
    s.thread = e->thread;
    s.generation = VMP_GENERATION_CURRENT;
    s.state = ST_JAVA;
    s.frames = e->frames;
    s.depth = e->depth;
    *(uint64_t *)ctx += e->weight;
    vmp_writer_kind_sample(g.out.w, g.kind_live, &s, e->weight);
}

/* live=, as the recording ends: a garbage collection, then a sample of kind
 * "live" for each tracked allocation whose object the JVM still has
 * (GetObjectsWithTags: what ObjectFree has not told yet counts as freed
 * when the JVM no longer has the object). */
static void write_live_samples(void)
{
    size_t n = 0;
    int64_t *tags;
    jint count = 0, i;
    jlong *found = NULL;
    uint64_t bytes = 0;
    if (g.kind_live == 0 || g.jvmti == NULL)
        return;
    (*g.jvmti)->ForceGarbageCollection(g.jvmti);
    tags = vmp_jvmti__live_tags(&g.live, &n);
    if (tags != NULL && n > 0 && n <= INT32_MAX &&
        (*g.jvmti)->GetObjectsWithTags(g.jvmti, (jint)n, (const jlong *)tags, &count, NULL,
                                       &found) == JVMTI_ERROR_NONE) {
        pthread_mutex_lock(&g.lock);
        for (i = 0; g.out.w != NULL && i < count; i++)
            vmp_jvmti__live_with(&g.live, (int64_t)found[i], write_live_one, &bytes);
        pthread_mutex_unlock(&g.lock);
        (*g.jvmti)->Deallocate(g.jvmti, (unsigned char *)found);
    }
    free(tags);
    if (g.live.untracked > 0)
        fprintf(stderr,
                "vmp: live: %llu sampled allocations were not tracked (more than %u MB "
                "of them at once)\n",
                (unsigned long long)g.live.untracked, LIVE_MAX_BYTES >> 20);
}

/* ---- Lock contention (spec.md §5.15 kind "lock") ---------------------- */

static __thread uint64_t tls_contended_since TLS_IE; /* MonitorContendedEnter's time */

/* JVMTI MonitorContendedEnter: this thread starts to wait for a monitor
 * another holds. */
static void JNICALL on_contended_enter(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object)
{
    (void)jvmti, (void)jni, (void)thread, (void)object;
    tls_contended_since = now_ns();
}

/* JVMTI MonitorContendedEntered: it got the monitor.  A wait of at least
 * lock= is a sample: the monitor's class over the waiting stack, weighing
 * the nanoseconds waited. */
static void JNICALL on_contended_entered(jvmtiEnv *jvmti,
                                         JNIEnv *jni,
                                         jthread thread,
                                         jobject object)
{
    uint64_t since = tls_contended_since, waited;
    jclass klass;
    tls_contended_since = 0;
    if (since == 0 || !atomic_load(&g.sampling) || tls_agent_thread || g.kind_lock == 0)
        return;
    waited = now_ns() - since;
    if (waited < g.opts.lock_ns)
        return;
    klass = (*jni)->GetObjectClass(jni, object);
    if (klass == NULL)
        return;
    kind_sample(jvmti, jni, thread, NULL, klass, g.kind_lock, waited);
    (*jni)->DeleteLocalRef(jni, klass);
}

/* Called with g.lock held after each writer call: one warning per run. */
static void check_write(vmp_status st)
{
    vmp_agent__check_write(st, g.out.path, &g.warned_write);
}

/* ---- The signal handler --------------------------------------------------- */

/* Append AsyncGetCallTrace's `n` Java frames to the `nf` native frames
 * (innermost first) in vf, cut at `cap` frames (the writer counts a cut past
 * the depth), and write the sample. */
static void write_mixed(vmp_writer *w,
                        vmp_sample *s,
                        vmp_frame *vf,
                        uint32_t nf,
                        uint32_t cap,
                        const agct_frame *af,
                        jint n)
{
    jint i;
    for (i = 0; i < n && nf < cap; i++, nf++) {
        vf[nf].kind = VMP_FRAME_FUNCTION;
        vf[nf].value = (uint64_t)(uintptr_t)af[i].method_id;
        vf[nf].bcpc = af[i].lineno < 0 ? VMP_BCPC_NONE : (uint32_t)af[i].lineno;
    }
    s->frames = vf;
    s->depth = nf;
    vmp_writer_sample(w, s);
}

/* AsyncGetCallTrace from the caller of the interrupted code, for a pc in a
 * stub of the code cache (arraycopy, a call stub) where it cannot walk
 * (ticks_unknown_Java).  Two guesses at the caller, as async-profiler makes
 * them: a stub that built a frame (push rbp; mov rbp, rsp) has the return
 * address above the saved rbp; one that did not has it on top of the stack.
 * Memory is read through vmp_jvmti__unwind_read() (no fault), and
 * AsyncGetCallTrace checks the frame it is given.  @return the frames found
 * (> 0), else `n`.  ASYNC-SIGNAL-SAFE. */
static jint agct_from_caller(agct_trace *trace, jint cap, void *uc, uint64_t stack_hi, jint n)
{
#if defined(__x86_64__)
    const ucontext_t *u = uc;
    ucontext_t c;
    uint64_t fp = (uint64_t)u->uc_mcontext.gregs[REG_RBP];
    uint64_t sp = (uint64_t)u->uc_mcontext.gregs[REG_RSP];
    uint64_t ret, saved_fp;
    int guess;

    for (guess = 0; guess < 2; guess++) {
        memcpy(&c, u, sizeof c);
        if (guess == 0) {
            /* a frame of at most 64 KiB just above the stack pointer */
            if (fp < sp || fp - sp > 65536 || !vmp_jvmti__unwind_read(sp, stack_hi, fp + 8, &ret) ||
                !vmp_jvmti__unwind_read(sp, stack_hi, fp, &saved_fp))
                continue;
            c.uc_mcontext.gregs[REG_RIP] = (greg_t)ret;
            c.uc_mcontext.gregs[REG_RSP] = (greg_t)(fp + 16);
            c.uc_mcontext.gregs[REG_RBP] = (greg_t)saved_fp;
        } else {
            if (!vmp_jvmti__unwind_read(sp, stack_hi, sp, &ret))
                continue;
            c.uc_mcontext.gregs[REG_RIP] = (greg_t)ret;
            c.uc_mcontext.gregs[REG_RSP] = (greg_t)(sp + 8);
        }
        trace->num_frames = 0;
        g.agct(trace, cap, &c);
        if (trace->num_frames > 0)
            return trace->num_frames;
    }
#else
    (void)trace;
    (void)cap;
    (void)uc;
    (void)stack_hi;
#endif
    return n;
}

/* The top of the interrupted thread's stack, 0 while unknown: then the
 * stack pointer is left for the service thread, which looks its mapping
 * up (scan_threads_locked()).  ASYNC-SIGNAL-SAFE. */
static uint64_t stack_top(vmp_jvmti_thread *t, void *uc)
{
    uint64_t hi = __atomic_load_n(&t->stack_hi, __ATOMIC_ACQUIRE);
    if (hi == 0 && __atomic_load_n(&t->probe_sp, __ATOMIC_RELAXED) == 0)
        __atomic_store_n(&t->probe_sp, vmp_agent__sp(uc), __ATOMIC_RELAXED);
    return hi;
}

/* A thread without a JNIEnv (a GC, compiler or VM thread, a native
 * thread): its native frames, or its pc alone when they cannot be walked. */
static void take_native_sample(vmp_writer *w, vmp_jvmti_thread *t, vmp_sample *s, void *uc)
{
    const uint32_t cap = (uint32_t)g.opts.depth + 1;
    vmp_frame *vf = t->frames;
    uint32_t nf = vmp_jvmti__unwind(uc, stack_top(t, uc), vf, cap);

    s->state = role_state[t->role];
    if (nf == 0) {
        vf[0].kind = VMP_FRAME_PC;
        vf[0].value = s->pc;
        vf[0].bcpc = VMP_BCPC_NONE;
        nf = 1;
    }
    write_mixed(w, s, vf, nf, nf, NULL, 0);
}

/* The JNIEnv of the calling thread when the VM knows it as a Java thread:
 * one that ran before the agent was attached, or before its ThreadStart.
 * HotSpot's GetEnv only reads the thread's TLS, and is asked only once that
 * TLS exists: a native thread, or one of HotSpot's before its TLS is set
 * up, is not asked (the first access would allocate it: JDK-8132510;
 * vmp_jvmti__vm_knows_self()).  glibc may still allocate in a TLS access
 * after a library with TLS was loaded (the thread's dtv grows);
 * async-profiler avoids GetEnv in its handler altogether, reading the
 * JNIEnv from the Thread* through VMStructs.  NULL for any other thread.
 * ASYNC-SIGNAL-SAFE but for that case. */
static JNIEnv *env_of_self(void)
{
    JNIEnv *env = NULL;
    JavaVM *vm = g.vm;
    if (vm == NULL || !vmp_jvmti__vm_knows_self() ||
        (*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_6) != JNI_OK)
        return NULL;
    return env;
}

static void take_sample(vmp_jvmti_thread *t, void *uc)
{
    vmp_writer *w = __atomic_load_n(&g.out.w, __ATOMIC_SEQ_CST);
    JNIEnv *env = tls_env;
    agct_frame *af = t->java_frames;
    vmp_frame *vf = t->frames;
    /* One frame more than the depth, so that the writer sees and counts a cut. */
    const uint32_t cap = (uint32_t)g.opts.depth + 1;
    vmp_sample s;
    agct_trace trace;
    uint64_t stack_hi;
    uint32_t nf;
    jint n;

    memset(&s, 0, sizeof s);
    s.thread = t->tid;
    s.pc = vmp_agent__pc(uc);
    s.generation = VMP_GENERATION_CURRENT;
    /* cpu mode: the intervals of the thread's CPU time since its previous
     * sample, on its random grid (vmp_agent_clock.h); wall mode: 1 */
    s.weight = vmp_agent__clock_weight(&t->clock);
    /* an early signal (weight 0) is no sample: the writer would count its
     * record as 1 (vmp_sample.weight 0 == 1) */
    if (w == NULL || vf == NULL || s.weight == 0)
        return;
    /* the JIT compilers' threads are Java threads too, without Java frames:
     * they keep their role's state */
    if (env == NULL && t->role == VMP_JVMTI_ROLE_OTHER)
        env = env_of_self();
    if (env == NULL) {
        take_native_sample(w, t, &s, uc);
        return;
    }
    if (af == NULL || g.agct == NULL) {
        s.state = ST_UNKNOWN;
        vmp_writer_failed_sample(w, &s, REASON_NO_JNIENV);
        return;
    }
    stack_hi = stack_top(t, uc);
    trace.env_id = env;
    trace.num_frames = 0;
    trace.frames = af;
    g.agct(&trace, (jint)cap, uc);
    n = trace.num_frames;
    /* In VM code called from Java, with a frame anchor that lacks its pc:
     * make it walkable and ask again (vmp_jvmti_anchor.h). */
    if (n == -3 /* ticks_unknown_not_Java */ &&
        vmp_jvmti__anchor_make_walkable(env, vmp_agent__sp(uc), stack_hi)) {
        trace.num_frames = 0;
        g.agct(&trace, (jint)cap, uc);
        vmp_jvmti__anchor_restore(env);
        n = trace.num_frames;
    }
    /* In a stub of the code cache: the stub's pc, then the Java frames of
     * its caller. */
    if (n == -5 /* ticks_unknown_Java */ && !vmp_jvmti__unwind_in_module(s.pc)) {
        n = agct_from_caller(&trace, (jint)cap - 1, uc, stack_hi, n);
        if (n > 0) {
            vf[0].kind = VMP_FRAME_PC;
            vf[0].value = s.pc;
            vf[0].bcpc = VMP_BCPC_NONE;
            s.state = ST_JAVA;
            write_mixed(w, &s, vf, 1, cap, af, n);
            return;
        }
    }
    /* The native frames first (innermost) when the pc is in a module: VM or
     * library code called from the Java frames (README "Native frames"). */
    nf = vmp_jvmti__unwind(uc, stack_hi, vf,
                           cap < VMP_JVMTI_NATIVE_MAX ? cap : VMP_JVMTI_NATIVE_MAX);
    if (n <= 0) {
        uint32_t reason = n >= -10 ? (uint32_t)-n : REASON_OTHER;
        s.state = reason_state[reason];
        if (nf > 0)
            write_mixed(w, &s, vf, nf, nf, NULL, 0);
        else
            vmp_writer_failed_sample(w, &s, reason);
        return;
    }
    s.state = nf > 0 ? ST_NATIVE_VM : ST_JAVA;
    write_mixed(w, &s, vf, nf, cap, af, n);
}

static void on_sigprof(int sig, siginfo_t *si, void *uc)
{
    int saved_errno = errno;
    vmp_jvmti_thread *t;

    (void)sig;
    atomic_fetch_add(&g.in_handler, 1);
    t = vmp_jvmti__threads_self();
    if (t != NULL) {
        if (atomic_load(&g.sampling))
            take_sample(t, uc);
        /* last, so that the walk is not counted in the next interval; also
         * before sampling starts (the grid keeps counting), else a clock
         * whose first signal comes early would stop */
        vmp_agent__clock_rearm(&t->clock, si);
    }
    atomic_fetch_sub(&g.in_handler, 1);
    errno = saved_errno;
}

/* ---- JVMTI helpers ---------------------------------------------------------- */

static void jfree(void *p)
{
    if (p != NULL)
        (*g.jvmti)->Deallocate(g.jvmti, (unsigned char *)p);
}

/* "Ljava/lang/String;" -> "java.lang.String" (malloc'd), NULL for other types. */
static char *java_class_name(const char *sig)
{
    size_t len, i;
    char *out;

    if (sig == NULL || sig[0] != 'L')
        return NULL;
    len = strlen(sig);
    if (len < 3 || sig[len - 1] != ';')
        return NULL;
    out = malloc(len - 1);
    if (out == NULL)
        return NULL;
    for (i = 1; i < len - 1; i++)
        out[i - 1] = sig[i] == '/' ? '.' : sig[i];
    out[len - 2] = '\0';
    return out;
}

static int line_cmp(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Write the FUNCTION record of `m` unless it was written before.  `scope`
 * and `file` describe its class (either may be NULL). */
static void define_method(jmethodID m, const char *scope, const char *file)
{
    jvmtiEnv *j = g.jvmti;
    char *name = NULL, *sig = NULL;
    jvmtiLineNumberEntry *tbl = NULL;
    jint n_tbl = 0, k;
    jlocation lo = 0, hi = -1;
    uint32_t *lines = NULL;
    vmp_function fn;
    vmp_writer *need[N_OUTPUTS]; /* the outputs that lack it */
    int n_need = 0, i, k2;

    if (m == NULL)
        return;
    pthread_mutex_lock(&g.lock);
    for (i = 0; i < N_OUTPUTS; i++) {
        output *o = outputs[i];
        if (o->w != NULL && vmp_jvmti__idset_add(&o->functions, (uint64_t)(uintptr_t)m) == 1)
            need[n_need++] = o->w;
    }
    pthread_mutex_unlock(&g.lock);
    if (n_need == 0)
        return;

    memset(&fn, 0, sizeof fn);
    fn.id = (uint64_t)(uintptr_t)m;
    fn.scope = scope;
    fn.file = file;
    if ((*j)->GetMethodName(j, m, &name, &sig, NULL) == JVMTI_ERROR_NONE) {
        fn.name = name;
        fn.signature = sig;
    }
    if ((*j)->GetLineNumberTable(j, m, &n_tbl, &tbl) == JVMTI_ERROR_NONE && n_tbl > 0) {
        lines = malloc((size_t)n_tbl * 2 * sizeof *lines);
        if (lines != NULL) {
            uint32_t first = UINT32_MAX;
            for (k = 0; k < n_tbl; k++) {
                lines[2 * k] = tbl[k].start_location < 0 ? 0 : (uint32_t)tbl[k].start_location;
                lines[2 * k + 1] = tbl[k].line_number < 0 ? 0 : (uint32_t)tbl[k].line_number;
                if (lines[2 * k + 1] != 0 && lines[2 * k + 1] < first)
                    first = lines[2 * k + 1];
            }
            qsort(lines, (size_t)n_tbl, 2 * sizeof *lines, line_cmp);
            fn.lines = lines;
            fn.n_lines = (size_t)n_tbl;
            fn.first_line = first == UINT32_MAX ? 0 : first;
        }
    }
    if ((*j)->GetMethodLocation(j, m, &lo, &hi) == JVMTI_ERROR_NONE && lo == 0 && hi >= 0 &&
        hi < (jlocation)UINT32_MAX)
        fn.bytecode_size = (uint32_t)hi + 1;

    /* to the outputs that lacked it and are still open (a loop may have
     * moved the next file to out, or closed out, meanwhile) */
    pthread_mutex_lock(&g.lock);
    for (i = 0; i < N_OUTPUTS; i++) {
        for (k2 = 0; k2 < n_need; k2++) {
            if (outputs[i]->w != NULL && outputs[i]->w == need[k2])
                check_write(vmp_writer_function(outputs[i]->w, &fn));
        }
    }
    pthread_mutex_unlock(&g.lock);

    free(lines);
    jfree(tbl);
    jfree(name);
    jfree(sig);
}

/* Describe a class: Java name and source file (each malloc'd or NULL). */
static void class_info(jclass klass, char **name_out, char **file_out)
{
    jvmtiEnv *j = g.jvmti;
    char *sig = NULL, *src = NULL;

    *name_out = NULL;
    *file_out = NULL;
    if ((*j)->GetClassSignature(j, klass, &sig, NULL) == JVMTI_ERROR_NONE)
        *name_out = java_class_name(sig);
    if ((*j)->GetSourceFileName(j, klass, &src) == JVMTI_ERROR_NONE && src != NULL)
        *file_out = strdup(src);
    jfree(sig);
    jfree(src);
}

/* Define every method of a prepared class.  GetClassMethods also makes
 * HotSpot allocate the jmethodIDs that AsyncGetCallTrace needs. */
static void define_class(jclass klass)
{
    jvmtiEnv *j = g.jvmti;
    jint n = 0, k, status = 0;
    jmethodID *methods = NULL;
    char *name, *file;

    if ((*j)->GetClassStatus(j, klass, &status) != JVMTI_ERROR_NONE ||
        (status & (JVMTI_CLASS_STATUS_PREPARED | JVMTI_CLASS_STATUS_ARRAY |
                   JVMTI_CLASS_STATUS_PRIMITIVE)) != JVMTI_CLASS_STATUS_PREPARED)
        return;
    if ((*j)->GetClassMethods(j, klass, &n, &methods) != JVMTI_ERROR_NONE)
        return;
    class_info(klass, &name, &file);
    for (k = 0; k < n; k++)
        define_method(methods[k], name, file);
    free(name);
    free(file);
    jfree(methods);
}

/* Define `m` if it is not yet: a method first seen in compiled code. */
static void define_method_lazily(JNIEnv *jni, jmethodID m)
{
    jvmtiEnv *j = g.jvmti;
    jclass klass = NULL;
    char *name, *file;
    int known = 1, i;

    if (m == NULL)
        return;
    pthread_mutex_lock(&g.lock);
    for (i = 0; i < N_OUTPUTS; i++) {
        if (outputs[i]->w != NULL &&
            !vmp_jvmti__idset_has(&outputs[i]->functions, (uint64_t)(uintptr_t)m))
            known = 0;
    }
    pthread_mutex_unlock(&g.lock);
    if (known || (*j)->GetMethodDeclaringClass(j, m, &klass) != JVMTI_ERROR_NONE)
        return;
    class_info(klass, &name, &file);
    define_method(m, name, file);
    free(name);
    free(file);
    if (jni != NULL && klass != NULL)
        (*jni)->DeleteLocalRef(jni, klass);
}

/* "java.lang.String.hashCode" (malloc'd) or NULL. */
static char *method_display_name(jmethodID m)
{
    jvmtiEnv *j = g.jvmti;
    jclass klass = NULL;
    char *mname = NULL, *cname = NULL, *file = NULL, *out = NULL;

    if ((*j)->GetMethodName(j, m, &mname, NULL, NULL) != JVMTI_ERROR_NONE)
        return NULL;
    if ((*j)->GetMethodDeclaringClass(j, m, &klass) == JVMTI_ERROR_NONE)
        class_info(klass, &cname, &file);
    if (cname != NULL) {
        size_t len = strlen(cname) + strlen(mname) + 2;
        out = malloc(len);
        if (out != NULL)
            snprintf(out, len, "%s.%s", cname, mname);
    } else {
        out = strdup(mname);
    }
    free(cname);
    free(file);
    jfree(mname);
    return out;
}

/* ---- Code objects (spec.md §5.7, §5.10) --------------------------------------- */

/* Add a code object to output `o`; frees whatever it overlaps first
 * (R-GEN-4).  Called with g.lock held.  A repeat of a live object
 * (GenerateEvents replays code already reported) is ignored. */
static void add_code_to(output *o, vmp_code_object *co, uint64_t tag)
{
    const vmp_jvmti_code *same;
    vmp_jvmti_code c;
    uint64_t ids[16];
    size_t n, i;

    if (o->w == NULL || co->size == 0)
        return;
    same = vmp_jvmti__codemap_at(&o->code, co->start);
    if (same != NULL && same->size == co->size && same->tag == tag)
        return;
    while ((n = vmp_jvmti__codemap_overlaps(&o->code, ids, 16, co->start, co->size)) > 0) {
        for (i = 0; i < n && i < 16; i++) {
            check_write(vmp_writer_code_free(o->w, ids[i], NULL));
            vmp_jvmti__codemap_remove(&o->code, ids[i]);
        }
    }
    c.start = co->start;
    c.size = co->size;
    c.id = co->id = ++g.next_code_id;
    c.tag = tag;
    co->zone = o->zone;
    check_write(vmp_writer_code_add(o->w, co));
    vmp_jvmti__codemap_insert(&o->code, &c);
}

/* add_code_to() every output.  With g.lock held. */
static void add_code_locked(vmp_code_object *co, uint64_t tag)
{
    int i;
    for (i = 0; i < N_OUTPUTS; i++)
        add_code_to(outputs[i], co, tag);
}

static void JNICALL on_compiled_method_load(jvmtiEnv *jvmti,
                                            jmethodID method,
                                            jint code_size,
                                            const void *code_addr,
                                            jint map_length,
                                            const jvmtiAddrLocationMap *map,
                                            const void *compile_info)
{
    const jvmtiCompiledMethodLoadRecordHeader *h;
    vmp_jvmti_debuginfo d;
    vmp_code_object co;
    char *name;
    uint64_t start = (uint64_t)(uintptr_t)code_addr;

    (void)jvmti;
    if (code_size <= 0)
        return;
    /* Methods inlined into this one may belong to classes not seen yet. */
    define_method_lazily(NULL, method);
    for (h = compile_info; h != NULL; h = h->next) {
        if (h->kind == JVMTI_CMLR_INLINE_INFO) {
            const jvmtiCompiledMethodLoadInlineRecord *r = (const void *)h;
            jint p, k;
            for (p = 0; p < r->numpcs; p++) {
                for (k = 0; k < r->pcinfo[p].numstackframes; k++)
                    define_method_lazily(NULL, r->pcinfo[p].methods[k]);
            }
        }
    }
    if (vmp_jvmti__debuginfo_build(&d, start, (uint64_t)code_size, map, map_length, compile_info,
                                   (uint64_t)(uintptr_t)method) != 0)
        memset(&d, 0, sizeof d);
    /* The method names the code (R-RES-2); its own name only when every
     * record is kept (metadata=all), as before FUNCTION records came lazily */
    name = g.opts.all_metadata ? method_display_name(method) : NULL;

    memset(&co, 0, sizeof co);
    co.kind = KIND_NMETHOD;
    co.name = name;
    co.function = (uint64_t)(uintptr_t)method;
    co.start = start;
    co.size = (uint64_t)code_size;
    co.pc_map = d.pairs;
    co.pc_map_len = d.n_pairs;
    co.inlines = d.inlines;
    co.n_inlines = d.n_inlines;
    pthread_mutex_lock(&g.lock);
    add_code_locked(&co, (uint64_t)(uintptr_t)method);
    pthread_mutex_unlock(&g.lock);
    free(name);
    vmp_jvmti__debuginfo_free(&d);
}

static void JNICALL on_compiled_method_unload(jvmtiEnv *jvmti,
                                              jmethodID method,
                                              const void *code_addr)
{
    const vmp_jvmti_code *c;
    int i;

    (void)jvmti;
    pthread_mutex_lock(&g.lock);
    for (i = 0; i < N_OUTPUTS; i++) {
        output *o = outputs[i];
        c = vmp_jvmti__codemap_at(&o->code, (uint64_t)(uintptr_t)code_addr);
        /* The method check skips a late unload of code already replaced. */
        if (o->w != NULL && c != NULL && c->tag == (uint64_t)(uintptr_t)method) {
            uint64_t id = c->id;
            check_write(vmp_writer_code_free(o->w, id, NULL));
            check_write(vmp_writer_event(o->w, EVT_CODE_UNLOAD, 0, 0, 0, (int64_t)id, NULL));
            vmp_jvmti__codemap_remove(&o->code, id);
        }
    }
    pthread_mutex_unlock(&g.lock);
}

static uint32_t stub_kind(const char *name)
{
    if (name == NULL)
        return KIND_STUB;
    if (strcmp(name, "Interpreter") == 0)
        return KIND_INTERPRETER;
    if (strstr(name, "adapter") != NULL || strstr(name, "Adapter") != NULL ||
        strstr(name, "I2C") != NULL || strstr(name, "C2I") != NULL)
        return KIND_ADAPTER;
    return KIND_STUB;
}

static void JNICALL on_dynamic_code_generated(jvmtiEnv *jvmti,
                                              const char *name,
                                              const void *address,
                                              jint length)
{
    vmp_code_object co;

    (void)jvmti;
    if (length <= 0)
        return;
    memset(&co, 0, sizeof co);
    co.kind = stub_kind(name);
    co.name = name;
    co.start = (uint64_t)(uintptr_t)address;
    co.size = (uint64_t)length;
    pthread_mutex_lock(&g.lock);
    add_code_locked(&co, 0);
    pthread_mutex_unlock(&g.lock);
}

/* ---- Classes ------------------------------------------------------------------ */

static void JNICALL on_class_load(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
    /* Enabled only because AsyncGetCallTrace refuses to walk stacks
     * (ticks_no_class_load) unless some agent receives ClassLoad events. */
    (void)jvmti;
    (void)jni;
    (void)thread;
    (void)klass;
}

static void JNICALL on_class_prepare(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jclass klass)
{
    (void)jvmti;
    (void)jni;
    (void)thread;
    define_class(klass);
}

/* ---- Threads ------------------------------------------------------------------ */

static void write_thread_name(jthread thread, JNIEnv *jni, uint64_t tid, int ended)
{
    jvmtiEnv *j = g.jvmti;
    jvmtiThreadInfo info;
    vmp_jvmti_thread *t;
    int i;

    memset(&info, 0, sizeof info);
    if (thread == NULL || (*j)->GetThreadInfo(j, thread, &info) != JVMTI_ERROR_NONE)
        memset(&info, 0, sizeof info);
    pthread_mutex_lock(&g.lock);
    t = vmp_jvmti__threads_find(tid);
    if (t != NULL && info.name != NULL) /* for the next file of a loop */
        snprintf(t->name, sizeof t->name, "%s", info.name);
    for (i = 0; i < N_OUTPUTS; i++) {
        if (outputs[i]->w != NULL)
            check_write(vmp_writer_thread(outputs[i]->w, tid, info.name, ended));
    }
    pthread_mutex_unlock(&g.lock);
    jfree(info.name);
    if (jni != NULL) {
        if (info.thread_group != NULL)
            (*jni)->DeleteLocalRef(jni, info.thread_group);
        if (info.context_class_loader != NULL)
            (*jni)->DeleteLocalRef(jni, info.context_class_loader);
    }
}

/* Start sampling thread `tid` in slot `t` (under g.lock): its clock in cpu
 * mode; the handler finds the slot from now on. */
static void start_slot_locked(vmp_jvmti_thread *t, uint64_t tid, int from_birth)
{
    t->blocked = 0;
    /* published first: the clock's first signal may come before its start
     * returns */
    vmp_jvmti__threads_set_status(t, VMP_JVMTI_SLOT_LIVE);
    if (g.opts.mode == VMP_JVMTI_MODE_CPU)
        vmp_agent__clock_start(&t->clock, tid, from_birth);
}

/* Runs on the thread itself: ThreadStart (`from_birth`: its CPU time so far
 * belongs to the profile), or VMInit for the main thread.  A thread that a
 * scan of /proc/self/task found first keeps its slot and clock and gains
 * its Java frames. */
static void register_thread(JNIEnv *jni, jthread thread, int from_birth)
{
    const size_t depth = (size_t)g.opts.depth + 1;
    const uint64_t tid = (uint64_t)syscall(SYS_gettid);
    vmp_jvmti_thread *t;
    int ok = 0;

    if (tls_env != NULL || tls_agent_thread)
        return;
    /* a thread that attaches again (DestroyJavaVM) was sampled before: its
     * CPU time since birth is in the profile already */
    if (tls_registered_before)
        from_birth = 0;
    tls_registered_before = 1;
    tls_env = jni;
    atomic_signal_fence(memory_order_seq_cst);

    pthread_mutex_lock(&g.lock);
    if (!g.dead && g.out.w != NULL) {
        /* a slot a scan found keeps its clock (from birth); a RETIRED one
         * (attached again, or found while it blocked SIGPROF) starts one */
        t = vmp_jvmti__threads_find(tid);
        int start = t == NULL || t->status == VMP_JVMTI_SLOT_RETIRED;
        if (t == NULL)
            t = vmp_jvmti__threads_claim(tid, depth, sizeof(agct_frame));
        if (t != NULL) {
            t->java = t->named = 1;
            if (start) /* on this thread, under the lock that shutdown takes first */
                start_slot_locked(t, tid, from_birth);
        } else {
            g.threads_unsampled++;
        }
        ok = t != NULL;
    }
    pthread_mutex_unlock(&g.lock);
    if (ok)
        write_thread_name(thread, jni, tid, 0);
}

static void unregister_thread(JNIEnv *jni, jthread thread)
{
    const uint64_t tid = (uint64_t)syscall(SYS_gettid);
    vmp_jvmti_thread *t;

    if (tls_env == NULL)
        return;
    /* Sampled no more: a signal still pending finds no slot and records
     * nothing.  The VM's work after ThreadEnd (the thread's exit, tens of
     * microseconds) is not in the profile, as it is not in the CPU time the
     * thread can measure of itself. */
    vmp_jvmti__threads_forget_self();
    pthread_mutex_lock(&g.lock);
    t = vmp_jvmti__threads_find(tid);
    if (t != NULL && t->status != VMP_JVMTI_SLOT_FREE) {
        vmp_jvmti__threads_set_status(t, VMP_JVMTI_SLOT_RETIRED);
        vmp_agent__clock_stop(&t->clock);
        /* With scans, retired, not freed: a scan must not take the thread
         * for a new one while it still runs; the slot is freed once it is
         * gone.  Only this thread's handler uses the buffer, and it finds
         * the slot no more. */
        if (g.opts.threads != VMP_JVMTI_THREADS_ALL)
            vmp_jvmti__threads_release(t);
    }
    pthread_mutex_unlock(&g.lock);
    tls_env = NULL;
    atomic_signal_fence(memory_order_seq_cst);
    write_thread_name(thread, jni, tid, 1);
}

/* ---- Threads JVMTI does not report ---------------------------------------------- */

/* Scans that a new thread may keep the name it inherited (the process's,
 * "java") before it is named so: a Java thread is named by ThreadStart,
 * which a safepoint can hold back. */
#define NAME_WAIT_SCANS 10

/* Name the thread of `t` (found by a scan) from its kernel name (comm) as it
 * is now, unless it still has the process's name and may yet be named
 * (`ended` == 0 and scans < NAME_WAIT_SCANS).  HotSpot names its threads as
 * they start, so a name read a scan after the one that found the thread is
 * the final one.  Under g.lock. */
static void name_from_comm_locked(vmp_jvmti_thread *t, int ended)
{
    char comm[16];
    if (!ended && vmp_jvmti__task_comm(t->tid, comm, sizeof comm) == 0 && comm[0] != '\0') {
        if (t->scans < NAME_WAIT_SCANS && strcmp(comm, g.process_comm) == 0)
            return;
        memcpy(t->comm, comm, sizeof comm);
    }
    t->role = vmp_jvmti__thread_role(t->comm);
    t->named = 1;
    snprintf(t->name, sizeof t->name, "%s", t->comm);
    for (int i = 0; i < N_OUTPUTS; i++) {
        if (outputs[i]->w != NULL)
            check_write(
                vmp_writer_thread(outputs[i]->w, t->tid, t->comm[0] ? t->comm : NULL, ended));
    }
}

/* One scan of /proc/self/task (under g.lock): every thread not yet in the
 * table is sampled from now (`initial`: the threads alive when recording
 * starts) or from its birth; slots of threads that are gone are freed and
 * the threads that JVMTI did not report are said to have ended. */
static void scan_threads_locked(int initial)
{
    const size_t depth = (size_t)g.opts.depth + 1;
    uint64_t *tids;
    unsigned char *known;
    size_t n, i;

    if (g.opts.threads != VMP_JVMTI_THREADS_ALL || g.dead || g.out.w == NULL ||
        vmp_jvmti__list_tasks(&tids, &n) != 0)
        return;
    if (initial)
        vmp_jvmti__task_comm((uint64_t)getpid(), g.process_comm, sizeof g.process_comm);
    known = calloc(n ? n : 1, 1);
    if (known == NULL) {
        free(tids);
        return;
    }
    for (i = 0; i < vmp_jvmti__threads_bound(); i++) {
        vmp_jvmti_thread *t = vmp_jvmti__threads_at(i);
        long at;
        if (t->tid == 0)
            continue;
        at = vmp_jvmti__tasks_index(tids, n, t->tid);
        if (at >= 0) {
            known[at] = 1;
            if (!t->named && t->scans > 0)
                name_from_comm_locked(t, 0);
            /* a thread found blocking SIGPROF may have been a new one in
             * the instant before it set its signal mask (pthread_create
             * starts it with every signal blocked): sampled once it does */
            if (t->blocked && t->status == VMP_JVMTI_SLOT_RETIRED &&
                !vmp_jvmti__task_blocks(t->tid, SIGPROF)) {
                t->blocked = 0;
                start_slot_locked(t, t->tid, 1);
            }
            t->scans++;
            continue;
        }
        /* gone: no handler can run on it any more */
        vmp_agent__clock_stop(&t->clock);
        if (!t->java)
            name_from_comm_locked(t, 1);
        vmp_jvmti__threads_release(t);
    }
    for (i = 0; i < n; i++) {
        vmp_jvmti_thread *t;
        if (known[i])
            continue;
        t = vmp_jvmti__threads_claim(tids[i], depth, sizeof(agct_frame));
        if (t == NULL) {
            g.threads_unsampled++;
            continue;
        }
        vmp_jvmti__task_comm(tids[i], t->comm, sizeof t->comm);
        t->role = vmp_jvmti__thread_role(t->comm);
        if (vmp_jvmti__task_blocks(tids[i], SIGPROF)) {
            /* a signal would stay pending (the agent's and the writer's
             * threads, or a new thread that has not set its signal mask
             * yet): not sampled while it blocks it.  Named by a later scan,
             * as a new thread still starting has its creator's name. */
            t->blocked = 1;
            vmp_jvmti__threads_set_status(t, VMP_JVMTI_SLOT_RETIRED);
            continue;
        }
        start_slot_locked(t, tids[i], !initial);
        if (initial) {
            t->scans = NAME_WAIT_SCANS; /* named already */
            name_from_comm_locked(t, 0);
        }
    }
    free(known);
    free(tids);
}

/* The stack tops of the threads whose handler left a stack pointer
 * (stack_top()): from then on their native walks read the stack without a
 * system call.  A slot is freed only under g.lock after its thread is gone,
 * so a top found for a thread that has just ended is never used by
 * another.  Under g.lock. */
static void find_stack_tops_locked(void)
{
    uint64_t *sps, *tops;
    size_t *slot, n = 0, i, bound = vmp_jvmti__threads_bound();

    for (i = 0; i < bound; i++) {
        const vmp_jvmti_thread *t = vmp_jvmti__threads_at(i);
        if (t->tid != 0 && __atomic_load_n(&t->stack_hi, __ATOMIC_RELAXED) == 0 &&
            __atomic_load_n(&t->probe_sp, __ATOMIC_RELAXED) != 0)
            n++;
    }
    if (n == 0)
        return;
    sps = malloc(n * sizeof *sps);
    tops = malloc(n * sizeof *tops);
    slot = malloc(n * sizeof *slot);
    if (sps != NULL && tops != NULL && slot != NULL) {
        size_t k = 0;
        for (i = 0; i < bound && k < n; i++) {
            const vmp_jvmti_thread *t = vmp_jvmti__threads_at(i);
            uint64_t sp = __atomic_load_n(&t->probe_sp, __ATOMIC_RELAXED);
            if (t->tid != 0 && __atomic_load_n(&t->stack_hi, __ATOMIC_RELAXED) == 0 && sp != 0) {
                sps[k] = sp;
                slot[k++] = i;
            }
        }
        if (vmp_jvmti__stack_tops(sps, tops, k) == 0) {
            for (i = 0; i < k; i++) {
                vmp_jvmti_thread *t = vmp_jvmti__threads_at(slot[i]);
                if (tops[i] != 0)
                    __atomic_store_n(&t->stack_hi, tops[i], __ATOMIC_RELEASE);
                else /* not found (gone?): try again with a newer sp */
                    __atomic_store_n(&t->probe_sp, 0, __ATOMIC_RELAXED);
            }
        }
    }
    free(sps);
    free(tops);
    free(slot);
}

static void JNICALL on_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)jvmti;
    register_thread(jni, thread, 1);
}

static void JNICALL on_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)jvmti;
    unregister_thread(jni, thread);
}

/* ---- GC events and the service thread --------------------------------------- */

/* The GC callbacks may call almost no JVMTI function and must not block: they
 * only put timestamps into a ring that the service thread turns into events. */
static void JNICALL on_gc_start(jvmtiEnv *jvmti)
{
    (void)jvmti;
    atomic_store(&g.gc_start_ns, now_ns());
}

static void JNICALL on_gc_finish(jvmtiEnv *jvmti)
{
    uint64_t head = atomic_load(&g.gc_head);

    (void)jvmti;
    if (head - atomic_load(&g.gc_tail) >= GC_RING) {
        atomic_fetch_add(&g.gc_lost, 1);
        return;
    }
    g.gc_ring[head % GC_RING][0] = atomic_load(&g.gc_start_ns);
    g.gc_ring[head % GC_RING][1] = now_ns();
    atomic_store(&g.gc_head, head + 1);
}

static void drain_gc_locked(void)
{
    uint64_t tail = atomic_load(&g.gc_tail), head = atomic_load(&g.gc_head);

    for (; tail != head; tail++) {
        uint64_t s = g.gc_ring[tail % GC_RING][0], e = g.gc_ring[tail % GC_RING][1];
        if (g.out.w != NULL && s != 0 && e >= s)
            check_write(vmp_writer_event(g.out.w, EVT_GC, s, e - s, 0, 0, NULL));
    }
    atomic_store(&g.gc_tail, tail);
}

static void add_ns(struct timespec *ts, uint64_t ns)
{
    uint64_t nsec = (uint64_t)ts->tv_nsec + ns % 1000000000u;
    ts->tv_sec += (time_t)(ns / 1000000000u + nsec / 1000000000u);
    ts->tv_nsec = (long)(nsec % 1000000000u);
}

/* How often the service thread turns GC timestamps into events and scans
 * /proc/self/task for threads that JVMTI does not report.  A native thread
 * that lives less than this may never be seen (README "Threads"). */
#define SCAN_PERIOD_NS 20000000u

/* Emits GC events and scans for new threads; in wall mode also signals every registered thread at
 * each interval (absolute deadlines, so that the rate does not drift). */
static void *service_main(void *arg)
{
    const int wall = g.opts.mode == VMP_JVMTI_MODE_WALL;
    const uint64_t tick =
        wall && g.opts.interval_ns < SCAN_PERIOD_NS ? g.opts.interval_ns : SCAN_PERIOD_NS;
    const pid_t pid = getpid();
    uint64_t last_drain = 0, last_modules = now_ns();
    struct timespec next;

    (void)arg;
    vmp_agent__block_sigprof();
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (!atomic_load(&g.stop_service)) {
        uint64_t t;
        add_ns(&next, tick);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
            ;
        t = now_ns();
        pthread_mutex_lock(&g.lock);
        if (wall && atomic_load(&g.sampling)) {
            size_t i;
            for (i = 0; i < vmp_jvmti__threads_bound(); i++) {
                const vmp_jvmti_thread *th = vmp_jvmti__threads_at(i);
                if (th->status == VMP_JVMTI_SLOT_LIVE)
                    syscall(SYS_tgkill, pid, (pid_t)th->tid, SIGPROF);
            }
        }
        if (t - last_drain >= SCAN_PERIOD_NS) {
            drain_gc_locked();
            scan_threads_locked(0);
            find_stack_tops_locked();
            last_drain = t;
        }
        pthread_mutex_unlock(&g.lock);
        if (t - last_modules >= 100000000u) {
            /* Libraries loaded since: their unwind tables, and their MODULE
             * records (each writer adds only objects it has not recorded). */
            if (vmp_jvmti__unwind_refresh()) {
                pthread_mutex_lock(&g.lock);
                for (int i = 0; i < N_OUTPUTS; i++) {
                    if (outputs[i]->w != NULL)
                        check_write(vmp_writer_add_loaded_modules(outputs[i]->w));
                }
                pthread_mutex_unlock(&g.lock);
            }
            last_modules = t;
        }
        if (wall) { /* after a stall, skip missed ticks instead of bursting */
            struct timespec cur;
            clock_gettime(CLOCK_MONOTONIC, &cur);
            if (cur.tv_sec > next.tv_sec + 1)
                next = cur;
        }
    }
    return NULL;
}

/* ---- Life cycle ------------------------------------------------------------------ */

/* Close the writer of `o` (taken out of g: nothing else uses it) and free
 * what it was told.  `report`: one line on stderr with its totals. */
static void close_output(output *o, int report)
{
    vmp_writer_totals tot;

    memset(&tot, 0, sizeof tot);
    if (vmp_writer_close(o->w, &tot) < 0 && !g.warned_write)
        fprintf(stderr, "vmp: error writing %s: %s\n", o->path,
                tot.write_errno ? strerror(tot.write_errno) : "write failed");
    else if (report)
        fprintf(stderr, "vmp: wrote %llu samples (%llu failed, %llu dropped) to %s\n",
                (unsigned long long)tot.samples_written, (unsigned long long)tot.failed_written,
                (unsigned long long)(tot.dropped_full + tot.dropped_write), o->path);
    o->w = NULL;
    vmp_jvmti__idset_free(&o->functions);
    vmp_jvmti__codemap_free(&o->code);
}

static void stop_rotator(void);
static int open_output(output *o, const char *path);

/* Stop sampling, wait for handlers in flight and close the writer: at
 * VMDeath, at Agent_OnUnload, or asked by an attach ("stop").  Another
 * recording may start after it (begin_recording()). */
static void stop_recording(void)
{
    output out;
    size_t i;

    if (!atomic_exchange(&g.recording, 0))
        return;
    stop_rotator();       /* first: it fills and switches files */
    write_live_samples(); /* while the JVM and the file are there */
    atomic_store(&g.sampling, 0);
    pthread_mutex_lock(&g.lock);
    g.dead = 1;
    for (i = 0; i < vmp_jvmti__threads_bound(); i++) {
        vmp_jvmti_thread *t = vmp_jvmti__threads_at(i);
        vmp_agent__clock_stop(&t->clock);
    }
    pthread_mutex_unlock(&g.lock);
    if (g.service_started) {
        atomic_store(&g.stop_service, 1);
        pthread_join(g.service, NULL);
        g.service_started = 0;
    }
    /* Handlers that saw sampling == 1 are counted in in_handler. */
    vmp_agent__wait_handlers(&g.in_handler);
    pthread_mutex_lock(&g.lock);
    drain_gc_locked();
    out = g.out;
    __atomic_store_n(&g.out.w, NULL, __ATOMIC_SEQ_CST);
    memset(&g.out.functions, 0, sizeof g.out.functions);
    memset(&g.out.code, 0, sizeof g.out.code);
    pthread_mutex_unlock(&g.lock);
    if (out.w == NULL)
        return;
    if (atomic_load(&g.in_handler) != 0) {
        /* Leaking the writer is safer than freeing memory a handler uses. */
        fprintf(stderr, "vmp: a sampling handler did not finish; %s left without END\n", out.path);
        return;
    }
    pthread_mutex_lock(&g.lock);
    for (i = 0; i < vmp_jvmti__threads_bound(); i++) {
        vmp_jvmti_thread *t = vmp_jvmti__threads_at(i);
        if (t->tid != 0)
            vmp_jvmti__threads_release(t);
    }
    if (g.threads_unsampled > 0)
        fprintf(stderr, "vmp: %llu threads not sampled: more than %d at once\n",
                (unsigned long long)g.threads_unsampled, VMP_JVMTI_MAX_THREADS);
    pthread_mutex_unlock(&g.lock);
    vmp_jvmti__unwind_shutdown();
    close_output(&out, 1);
}

static void define_loaded_classes(JNIEnv *jni)
{
    jvmtiEnv *j = g.jvmti;
    jint n = 0, k;
    jclass *classes = NULL;

    if ((*j)->GetLoadedClasses(j, &n, &classes) != JVMTI_ERROR_NONE)
        return;
    for (k = 0; k < n; k++) {
        define_class(classes[k]);
        if (jni != NULL)
            (*jni)->DeleteLocalRef(jni, classes[k]);
    }
    jfree(classes);
}

/* Describe what the JVM holds now to output `o`: every loaded class's
 * methods, the loaded modules, the code generated so far (GenerateEvents
 * replays it; the callbacks give each output what it lacks). */
static void describe_state(JNIEnv *jni, output *o)
{
    define_loaded_classes(jni);
    pthread_mutex_lock(&g.lock);
    if (o->w != NULL)
        check_write(vmp_writer_add_loaded_modules(o->w));
    pthread_mutex_unlock(&g.lock);
    (*g.jvmti)->GenerateEvents(g.jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
    (*g.jvmti)->GenerateEvents(g.jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD);
}

/* ---- Continuous recording: a new file every loop period -------------------------- */

/* Start the next file of a loop: open it, describe the JVM's state to it
 * (what happens meanwhile goes to both files), then switch the samples to
 * it in one store, wait until no handler uses the old file and close that.
 * Every sample goes to exactly one file; each file reads alone.  On the
 * rotator thread (attached to the VM: JVMTI and JNI calls). */
static void rotate(JNIEnv *jni)
{
    char path[VMP_JVMTI_PATH_MAX];
    uint64_t n = g.file_no + 1;
    output old;
    size_t i;

    if (vmp_jvmti_loop_path(path, sizeof path, g.opts.file, n) != 0 ||
        open_output(&g.next, path) != 0)
        return;
    describe_state(jni, &g.next);
    pthread_mutex_lock(&g.lock);
    for (i = 0; i < vmp_jvmti__threads_bound(); i++) {
        const vmp_jvmti_thread *t = vmp_jvmti__threads_at(i);
        if (t->tid != 0 && t->named &&
            (t->status == VMP_JVMTI_SLOT_LIVE || (t->status == VMP_JVMTI_SLOT_RETIRED && !t->java)))
            check_write(vmp_writer_thread(g.next.w, t->tid, t->name[0] ? t->name : NULL, 0));
    }
    old = g.out;
    g.out.zone = g.next.zone;
    g.out.functions = g.next.functions;
    g.out.code = g.next.code;
    memcpy(g.out.path, g.next.path, sizeof g.out.path);
    __atomic_store_n(&g.out.w, g.next.w, __ATOMIC_SEQ_CST); /* samples go to the new file */
    memset(&g.next, 0, sizeof g.next);
    g.file_no = n;
    pthread_mutex_unlock(&g.lock);
    /* then none uses the writer it read before the switch */
    if (!vmp_agent__wait_handlers(&g.in_handler)) {
        fprintf(stderr, "vmp: a sampling handler did not finish; %s left without END\n", old.path);
        vmp_jvmti__idset_free(&old.functions);
        vmp_jvmti__codemap_free(&old.code);
        return;
    }
    close_output(&old, 0);
    if (g.opts.keep > 0 && n > g.opts.keep &&
        vmp_jvmti_loop_path(path, sizeof path, g.opts.file, n - g.opts.keep) == 0)
        unlink(path);
}

static void *rotator_main(void *arg)
{
    JNIEnv *jni = NULL;
    struct timespec next;

    (void)arg;
    vmp_agent__block_sigprof();
    tls_agent_thread = 1; /* its ThreadStart registers nothing */
    if ((*g.vm)->AttachCurrentThreadAsDaemon(g.vm, (void **)&jni, NULL) != JNI_OK || jni == NULL) {
        fprintf(stderr, "vmp: loop: cannot attach a thread to the VM; recording into one file\n");
        return NULL;
    }
    clock_gettime(CLOCK_MONOTONIC, &next);
    pthread_mutex_lock(&g.rotate_mu);
    while (!g.stop_rotator) {
        add_ns(&next, g.opts.loop_ns);
        while (!g.stop_rotator &&
               pthread_cond_timedwait(&g.rotate_cv, &g.rotate_mu, &next) != ETIMEDOUT)
            ;
        if (g.stop_rotator)
            break;
        pthread_mutex_unlock(&g.rotate_mu);
        rotate(jni);
        pthread_mutex_lock(&g.rotate_mu);
    }
    pthread_mutex_unlock(&g.rotate_mu);
    (*g.vm)->DetachCurrentThread(g.vm);
    return NULL;
}

static void start_rotator(void)
{
    pthread_condattr_t ca;

    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_destroy(&g.rotate_cv);
    pthread_cond_init(&g.rotate_cv, &ca);
    pthread_condattr_destroy(&ca);
    g.stop_rotator = 0;
    if (pthread_create(&g.rotator, NULL, rotator_main, NULL) == 0)
        g.rotator_started = 1;
    else
        fprintf(stderr, "vmp: loop: cannot start its thread; recording into one file\n");
}

static void stop_rotator(void)
{
    if (!g.rotator_started)
        return;
    pthread_mutex_lock(&g.rotate_mu);
    g.stop_rotator = 1;
    pthread_cond_signal(&g.rotate_cv);
    pthread_mutex_unlock(&g.rotate_mu);
    pthread_join(g.rotator, NULL);
    g.rotator_started = 0;
}

/* Start recording in the live phase, on Java thread `thread` (`jni` its
 * JNIEnv): describe every loaded class's methods and the loaded modules,
 * replay the code generated so far, find the threads alive now, start the
 * service thread and sampling.  `register_self`: `thread` is the main
 * thread at VMInit (an attach's thread is found by the scan). */
static void start_live(JNIEnv *jni, jthread thread, int register_self)
{
    describe_state(jni, &g.out);
    if (g.out.w == NULL || g.dead)
        return;
    if (!vmp_jvmti__unwind_init())
        fprintf(stderr, "vmp: native stacks are not available; Java frames only\n");
    vmp_jvmti__anchor_init(jni, thread);
    if (!vmp_jvmti__find_vm_key(jni))
        fprintf(stderr, "vmp: HotSpot's thread key not found; threads that ran before the agent "
                        "are sampled without their Java frames\n");
    if (register_self)
        register_thread(jni, thread, 0);
    /* the threads alive now, before the service thread (which blocks the
     * signal and is named, not sampled, by its first scan) */
    pthread_mutex_lock(&g.lock);
    scan_threads_locked(1);
    pthread_mutex_unlock(&g.lock);
    if (pthread_create(&g.service, NULL, service_main, NULL) == 0)
        g.service_started = 1;
    atomic_store(&g.sampling, 1);
    if (g.opts.loop_ns > 0)
        start_rotator();
}

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)jvmti;
    start_live(jni, thread, 1);
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
    (void)jvmti;
    (void)jni;
    stop_recording();
}

/* GetSystemProperty as a malloc'd string, or NULL. */
static char *system_property(const char *name)
{
    char *v = NULL, *out = NULL;
    if ((*g.jvmti)->GetSystemProperty(g.jvmti, name, &v) == JVMTI_ERROR_NONE && v != NULL)
        out = strdup(v);
    jfree(v);
    return out;
}

/* Open a writer on `path` as output `o` (g.out or g.next), with its code
 * zone.  @return 0, or -1 (said on stderr). */
static int open_output(output *o, const char *path)
{
    char interval[32], depth[16];
    char *vm_version = system_property("java.vm.version");
    char *vm_long = system_property("java.vm.name");
    char *command = system_property("sun.java.command");
    const char *own[14], *labels[2 * (7 + VMP_JVMTI_MAX_LABELS)];
    size_t n_own = 0;
    vmp_writer_meta meta;
    vmp_writer_options wo = VMP_WRITER_OPTIONS_INIT;
    vmp_writer *w = NULL;
    uint64_t zone = 0;
    vmp_status st;

    vmp_agent__format_interval(interval, sizeof interval, g.opts.interval_ns);
    snprintf(depth, sizeof depth, "%u", (unsigned)g.opts.depth);
    own[n_own++] = "command";
    own[n_own++] = command ? command : "";
    own[n_own++] = "mode";
    own[n_own++] = g.opts.mode == VMP_JVMTI_MODE_WALL ? "wall" : "cpu";
    own[n_own++] = "interval";
    own[n_own++] = interval;
    own[n_own++] = "depth";
    own[n_own++] = depth;
    own[n_own++] = "vm";
    own[n_own++] = vm_long ? vm_long : "";
    own[n_own++] = "sampler"; /* the mechanism that runs (vmp_agent_clock.h) */
    own[n_own++] =
        g.opts.mode == VMP_JVMTI_MODE_WALL ? "wall signals" : vmp_agent__clock_label(g.mechanism);
    own[n_own++] = "threads"; /* which threads are sampled */
    own[n_own++] = g.opts.threads == VMP_JVMTI_THREADS_JAVA ? "java" : "all";

    /* the user's label= options come after and replace ours of their key */
    size_t n_labels = vmp_jvmti__header_labels(&g.opts, own, n_own / 2, labels);

    memset(&meta, 0, sizeof meta);
    meta.vm_name = "HotSpot";
    meta.vm_version = vm_version;
    meta.sample_interval_ns = g.opts.interval_ns;
    meta.states = states;
    meta.n_states = sizeof states / sizeof states[0];
    meta.code_kinds = code_kinds;
    meta.n_code_kinds = sizeof code_kinds / sizeof code_kinds[0];
    meta.event_kinds = event_kinds;
    meta.n_event_kinds = sizeof event_kinds / sizeof event_kinds[0];
    meta.failure_reasons = failure_reasons;
    meta.n_failure_reasons = sizeof failure_reasons / sizeof failure_reasons[0];
    meta.labels = labels;
    meta.n_labels = n_labels;
    meta.name_separator = "."; /* Java's own naming: java.lang.String.hashCode */
    wo.max_depth = g.opts.depth;
    /* Unless metadata=all: every method is described (AsyncGetCallTrace
     * needs the jmethodIDs) and the file holds those its stacks and sampled
     * code name; of libjvm's 70,000 symbols those the samples' pcs land in;
     * the pc maps of the compiled code that samples ran. */
    wo.lazy_functions = !g.opts.all_metadata;
    wo.lazy_symbols = !g.opts.all_metadata;
    wo.lazy_code_maps = !g.opts.all_metadata;
    wo.format_major = g.opts.format_major;
    wo.sample_time_unit_ns = vmp_jvmti__time_unit(&g.opts);
    wo.ring_slots = 16384;
    if (g.n_sample_kinds > 0) { /* format 2.1: samples of kinds beside CPU time */
        wo.sample_kinds = g.sample_kinds;
        wo.sample_units = g.sample_units;
        wo.n_sample_kinds = g.n_sample_kinds;
    }

    st = vmp_writer_open(&w, path, &meta, &wo);
    if (st < 0) {
        w = NULL;
        fprintf(stderr, "vmp: cannot open %s: %s%s%s; %s\n", path, vmp_status_str(st),
                errno ? ": " : "", errno ? strerror(errno) : "",
                o == &g.out ? "the program continues without profiling"
                            : "the recording goes on in the current file");
    } else {
        pthread_mutex_lock(&g.lock);
        /* The code cache's bounds are not published through JVMTI: one zone
         * spans the address space, and code objects give the real extents. */
        check_write(vmp_writer_code_zone(w, &zone, "CodeCache", 0, UINT64_MAX));
        o->zone = zone;
        snprintf(o->path, sizeof o->path, "%s", path);
        __atomic_store_n(&o->w, w, __ATOMIC_SEQ_CST); /* JVMTI callbacks describe to it now */
        pthread_mutex_unlock(&g.lock);
    }
    free(vm_version);
    free(vm_long);
    free(command);
    return w != NULL ? 0 : -1;
}

/* The events the agent uses. */
static const jvmtiEvent agent_events[] = {
    JVMTI_EVENT_VM_INIT,
    JVMTI_EVENT_VM_DEATH,
    JVMTI_EVENT_THREAD_START,
    JVMTI_EVENT_THREAD_END,
    JVMTI_EVENT_CLASS_LOAD,
    JVMTI_EVENT_CLASS_PREPARE,
    JVMTI_EVENT_COMPILED_METHOD_LOAD,
    JVMTI_EVENT_COMPILED_METHOD_UNLOAD,
    JVMTI_EVENT_DYNAMIC_CODE_GENERATED,
    JVMTI_EVENT_GARBAGE_COLLECTION_START,
    JVMTI_EVENT_GARBAGE_COLLECTION_FINISH,
};

/* Turn the agent's events on (JVMTI_ENABLE) or off (JVMTI_DISABLE), and
 * the allocation samples when alloc= asked for them (and the JVM can). */
static void set_events(jvmtiEventMode mode)
{
    size_t i;
    for (i = 0; i < sizeof agent_events / sizeof agent_events[0]; i++)
        (*g.jvmti)->SetEventNotificationMode(g.jvmti, mode, agent_events[i], NULL);
    if (g.kind_alloc > 0 || mode == JVMTI_DISABLE)
        (*g.jvmti)->SetEventNotificationMode(g.jvmti, mode, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
    if (g.kind_live > 0 || mode == JVMTI_DISABLE)
        (*g.jvmti)->SetEventNotificationMode(g.jvmti, mode, JVMTI_EVENT_OBJECT_FREE, NULL);
    if (g.kind_lock > 0 || mode == JVMTI_DISABLE) {
        (*g.jvmti)->SetEventNotificationMode(g.jvmti, mode, JVMTI_EVENT_MONITOR_CONTENDED_ENTER,
                                             NULL);
        (*g.jvmti)->SetEventNotificationMode(g.jvmti, mode, JVMTI_EVENT_MONITOR_CONTENDED_ENTERED,
                                             NULL);
    }
}

/* The kinds the recording declares (spec.md §5.15), by the options and
 * what the JVM could give. */
static void declare_kind(uint32_t *kind, size_t which)
{
    g.sample_kinds[g.n_sample_kinds] = kind_names[which];
    g.sample_units[g.n_sample_kinds] = kind_units[which];
    *kind = (uint32_t)++g.n_sample_kinds;
}

/* alloc= and lock=: the capabilities of sampled allocations (JDK 11 and
 * later) and of monitor events, and the kinds they declare.  Without them
 * the recording goes on with the rest. */
static void setup_kinds(jvmtiEnv *j)
{
    jvmtiCapabilities caps;
    g.n_sample_kinds = 0;
    g.kind_alloc = g.kind_live = g.kind_lock = 0;
    if (g.opts.alloc_bytes > 0) {
        memset(&caps, 0, sizeof caps);
        caps.can_generate_sampled_object_alloc_events = 1;
        if ((*j)->AddCapabilities(j, &caps) != JVMTI_ERROR_NONE ||
            (*j)->SetHeapSamplingInterval(j, (jint)g.opts.alloc_bytes) != JVMTI_ERROR_NONE)
            fprintf(stderr, "vmp: this JVM cannot sample allocations (JVMTI SampledObjectAlloc, "
                            "JDK 11 and later); no allocation samples\n");
        else
            declare_kind(&g.kind_alloc, 0);
    }
    if (g.kind_alloc > 0 && g.opts.live) {
        memset(&caps, 0, sizeof caps);
        caps.can_tag_objects = 1;
        caps.can_generate_object_free_events = 1;
        if ((*j)->AddCapabilities(j, &caps) != JVMTI_ERROR_NONE)
            fprintf(stderr, "vmp: this JVM cannot tag objects; no live samples\n");
        else
            declare_kind(&g.kind_live, 1);
    }
    if (g.opts.lock_ns > 0) {
        memset(&caps, 0, sizeof caps);
        caps.can_generate_monitor_events = 1;
        if ((*j)->AddCapabilities(j, &caps) != JVMTI_ERROR_NONE)
            fprintf(stderr, "vmp: this JVM gives no monitor events; no lock samples\n");
        else
            declare_kind(&g.kind_lock, 2);
    }
}

static int setup_jvmti(void)
{
    jvmtiEnv *j = g.jvmti;
    jvmtiCapabilities caps;
    jvmtiEventCallbacks cb;

    memset(&caps, 0, sizeof caps);
    caps.can_get_source_file_name = 1;
    caps.can_get_line_numbers = 1;
    caps.can_generate_compiled_method_load_events = 1;
    caps.can_generate_garbage_collection_events = 1;
    if ((*j)->AddCapabilities(j, &caps) != JVMTI_ERROR_NONE) {
        /* Without GC events the profile is still useful. */
        caps.can_generate_garbage_collection_events = 0;
        if ((*j)->AddCapabilities(j, &caps) != JVMTI_ERROR_NONE)
            return -1;
    }
    memset(&cb, 0, sizeof cb);
    cb.VMInit = on_vm_init;
    cb.VMDeath = on_vm_death;
    cb.ThreadStart = on_thread_start;
    cb.ThreadEnd = on_thread_end;
    cb.ClassLoad = on_class_load;
    cb.ClassPrepare = on_class_prepare;
    cb.CompiledMethodLoad = on_compiled_method_load;
    cb.CompiledMethodUnload = on_compiled_method_unload;
    cb.DynamicCodeGenerated = on_dynamic_code_generated;
    cb.GarbageCollectionStart = on_gc_start;
    cb.GarbageCollectionFinish = on_gc_finish;
    setup_kinds(j);
    cb.SampledObjectAlloc = on_sampled_alloc;
    cb.ObjectFree = on_object_free;
    cb.MonitorContendedEnter = on_contended_enter;
    cb.MonitorContendedEntered = on_contended_entered;
    if ((*j)->SetEventCallbacks(j, &cb, (jint)sizeof cb) != JVMTI_ERROR_NONE)
        return -1;
    set_events(JVMTI_ENABLE);
    return 0;
}

static int install_handler(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigprof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    return sigaction(SIGPROF, &sa, NULL);
}

/* Forget what a previous recording in this VM run left (a stop, then
 * another attach).  Under g.lock, with no recording running. */
static void reset_recording_locked(void)
{
    vmp_jvmti__idset_free(&g.out.functions);
    vmp_jvmti__codemap_free(&g.out.code);
    g.file_no = 1;
    g.next_code_id = 0;
    g.dead = 0;
    g.warned_write = 0;
    g.threads_unsampled = 0;
    atomic_store(&g.stop_service, 0);
    atomic_store(&g.gc_tail, atomic_load(&g.gc_head));
    atomic_store(&g.gc_lost, 0);
    vmp_jvmti__live_free(&g.live);
    vmp_jvmti__live_init(&g.live, LIVE_MAX_BYTES);
}

/* The JVMTI environment of `vm` into g.jvmti, and AsyncGetCallTrace.
 * @return 0, or -1 (said on stderr). */
static int get_jvmti(JavaVM *vm)
{
    if (vm == NULL || (*vm)->GetEnv(vm, (void **)&g.jvmti, JVMTI_VERSION_1_2) != JNI_OK ||
        g.jvmti == NULL) {
        g.jvmti = NULL;
        fprintf(stderr, "vmp: JVMTI is not available; not profiling\n");
        return -1;
    }
    g.vm = vm;
    g.agct = (agct_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
    if (g.agct == NULL)
        fprintf(stderr, "vmp: AsyncGetCallTrace not found; every sample will fail\n");
    return 0;
}

/* Parse `options` into g.opts; each problem is one line on stderr. */
static void parse_options(const char *options)
{
    char warn[1024];
    const char *line;

    vmp_jvmti__parse_options(&g.opts, options, (long)getpid(), warn, sizeof warn);
    for (line = warn; *line != '\0';) {
        const char *nl = strchr(line, '\n');
        int len = nl ? (int)(nl - line) : (int)strlen(line);
        fprintf(stderr, "vmp: %.*s\n", len, line);
        line += len + (nl != NULL);
    }
}

/* Ask for the JVMTI events, choose the clock, open the file and install
 * the handler (g.opts parsed).  Sampling starts in start_live().
 * @return VMP_JVMTI_ATTACH_OK, or why not (said on stderr; nothing is left
 * running and no file is left behind). */
static int begin_recording(void)
{
    char path[VMP_JVMTI_PATH_MAX];

    pthread_mutex_lock(&g.lock);
    reset_recording_locked();
    pthread_mutex_unlock(&g.lock);
    if (setup_jvmti() != 0) {
        fprintf(stderr, "vmp: cannot set up JVMTI events; not profiling\n");
        return VMP_JVMTI_ATTACH_NO_JVMTI;
    }
    if (g.opts.mode == VMP_JVMTI_MODE_CPU) {
        char why[256];
        g.mechanism = vmp_agent__clock_setup(g.opts.sampler, g.opts.interval_ns, why, sizeof why);
        if (why[0])
            fprintf(stderr, "vmp: %s\n", why);
    }
    if (g.opts.loop_ns > 0 && vmp_jvmti_loop_path(path, sizeof path, g.opts.file, g.file_no) != 0) {
        fprintf(stderr, "vmp: file name %s is too long for loop\n", g.opts.file);
        set_events(JVMTI_DISABLE);
        return VMP_JVMTI_ATTACH_NO_FILE;
    }
    if (open_output(&g.out, g.opts.loop_ns > 0 ? path : g.opts.file) != 0) {
        set_events(JVMTI_DISABLE);
        return VMP_JVMTI_ATTACH_NO_FILE;
    }
    atomic_store(&g.recording, 1);
    if (install_handler() != 0) {
        fprintf(stderr, "vmp: cannot install the SIGPROF handler: %s\n", strerror(errno));
        snprintf(path, sizeof path, "%s", g.out.path);
        stop_recording();
        set_events(JVMTI_DISABLE);
        unlink(path);
        return VMP_JVMTI_ATTACH_NO_JVMTI;
    }
    return VMP_JVMTI_ATTACH_OK;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    if (g.jvmti != NULL) {
        fprintf(stderr, "vmp: agent loaded twice; ignoring the second copy\n");
        return JNI_OK;
    }
    if (get_jvmti(vm) != 0)
        return JNI_OK;
    parse_options(options);
    if (begin_recording() == VMP_JVMTI_ATTACH_OK)
        g.recorded = 1;
    /* sampling starts at VMInit */
    return JNI_OK;
}

/* Loaded into a running JVM (vmp record --pid): start recording now, or
 * stop the recording when `options` is VMP_JVMTI_STOP_OPTION.  Runs on the
 * JVM's attach listener thread, one request at a time.  HotSpot unloads the
 * library when this returns non-zero, so a failure leaves nothing of the
 * agent running unless an earlier recording keeps the library loaded. */
JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
    JNIEnv *jni = NULL;
    jthread self = NULL;
    int rc;

    (void)reserved;
    if (options != NULL && strcmp(options, VMP_JVMTI_STOP_OPTION) == 0) {
        if (!atomic_load(&g.recording))
            return VMP_JVMTI_ATTACH_IDLE;
        stop_recording();
        set_events(JVMTI_DISABLE);
        return VMP_JVMTI_ATTACH_OK;
    }
    if (atomic_load(&g.recording))
        return VMP_JVMTI_ATTACH_BUSY;
    if (g.jvmti == NULL && get_jvmti(vm) != 0)
        return VMP_JVMTI_ATTACH_NO_JVMTI;
    if ((*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK || jni == NULL ||
        (*g.jvmti)->GetCurrentThread(g.jvmti, &self) != JVMTI_ERROR_NONE)
        rc = VMP_JVMTI_ATTACH_NO_JVMTI;
    else {
        parse_options(options);
        /* the threads that ran before: only a scan finds them */
        if (g.opts.threads == VMP_JVMTI_THREADS_JAVA)
            fprintf(stderr, "vmp: threads=java: an attached agent samples every thread\n");
        g.opts.threads = VMP_JVMTI_THREADS_ALL;
        rc = begin_recording();
    }
    if (rc != VMP_JVMTI_ATTACH_OK) {
        if (!g.recorded) { /* the JVM unloads the library: no callback may remain */
            (*g.jvmti)->DisposeEnvironment(g.jvmti);
            g.jvmti = NULL;
        }
        return rc;
    }
    g.recorded = 1;
    start_live(jni, self, 0);
    (*jni)->DeleteLocalRef(jni, self);
    return VMP_JVMTI_ATTACH_OK;
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
    (void)vm;
    stop_recording();
    /* This code may be unmapped after return; a late SIGPROF must not land here.
     * Every clock is gone, so ignoring the signal loses nothing. */
    signal(SIGPROF, SIG_IGN);
}
