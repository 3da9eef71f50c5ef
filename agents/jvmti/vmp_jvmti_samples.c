/* SPDX-License-Identifier: MIT
 *
 * vmp_jvmti_samples.c - the HotSpot agent's samples: the SIGPROF handler
 * (AsyncGetCallTrace, the native frames above the last Java frame: spec.md
 * §5.12) and the samples of other kinds (§5.15): allocations, live objects,
 * lock contention.
 */
#include "vmp_jvmti_int.h"

static const unsigned char reason_state[] = {
    ST_NATIVE_VM, ST_UNKNOWN, ST_GC,   ST_NATIVE_VM, ST_NATIVE_VM, ST_JAVA,   ST_JAVA,
    ST_UNKNOWN,   ST_UNKNOWN, ST_JAVA, ST_NATIVE_VM, ST_UNKNOWN,   ST_UNKNOWN};
_Static_assert(sizeof reason_state == N_FAILURE_REASONS, "one state per failure reason");

/* The state of a sample without Java frames, by the thread's role. */
static const unsigned char role_state[] = {ST_NATIVE_VM, ST_GC, ST_COMPILER};

/* ---- Allocation samples (spec.md §5.15 kind "alloc") ------------------- */

/* Under vmp_jv.lock: the class `name` (function id `id`) described to every open
 * output that lacks it (R-KND-4). */
static void describe_class_locked(uint64_t id, const char *name)
{
    int i;
    for (i = 0; i < N_OUTPUTS; i++) {
        output *o = vmp_jv_outputs[i];
        if (o->w != NULL && vmp_jvmti__idset_add(&o->functions, id) == 1)
            vmp_jvmti__check_write_to(o, vmp_writer_class(o->w, id, name));
    }
}

void vmp_jvmti__define_method_lazily(JNIEnv *jni, jmethodID m);

/* A sample of writer kind `kind` weighing `weight`: the class `klass` over
 * the Java stack of `thread` (the current thread), from a JVMTI callback. */
static void kind_sample(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object, jclass klass,
                        uint32_t kind, uint64_t weight)
{
    jvmtiFrameInfo *fi;
    vmp_frame *vf;
    vmp_sample s;
    char name[512], *sig = NULL;
    jint n = 0, i;
    uint64_t cid;

    fi = malloc((size_t)vmp_jv.opts.depth * sizeof *fi);
    vf = malloc(((size_t)vmp_jv.opts.depth + 1) * sizeof *vf);
    if (fi == NULL || vf == NULL)
        goto out;
    if ((*jvmti)->GetClassSignature(jvmti, klass, &sig, NULL) != JVMTI_ERROR_NONE ||
        vmp_jvmti__type_name(name, sizeof name, sig) == 0)
        snprintf(name, sizeof name, "%s", "[unknown class]");
    cid = vmp_jvmti__class_id(name);
    if ((*jvmti)->GetStackTrace(jvmti, thread, 0, (jint)vmp_jv.opts.depth, fi, &n) !=
        JVMTI_ERROR_NONE)
        n = 0;
    vf[0].kind = VMP_FRAME_FUNCTION; /* the class, innermost */
    vf[0].value = cid;
    vf[0].bcpc = VMP_BCPC_NONE;
    for (i = 0; i < n; i++) {
        vmp_jvmti__define_method_lazily(jni, fi[i].method);
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
    /* under the lock: no output closes meanwhile (vmp_jvmti__stop_recording(), vmp_jvmti__rotate())
     */
    pthread_mutex_lock(&vmp_jv.lock);
    if (vmp_jv.out.w != NULL && !vmp_jv.dead) {
        describe_class_locked(cid, name);
        vmp_writer_kind_sample(vmp_jv.out.w, kind, &s, weight);
    }
    pthread_mutex_unlock(&vmp_jv.lock);
    /* live=: tracked until ObjectFree says the object is gone */
    if (object != NULL && kind == vmp_jv.kind_alloc && vmp_jv.kind_live > 0) {
        int64_t tag = vmp_jvmti__live_add(&vmp_jv.live, vf, s.depth, weight, s.thread);
        if (tag > 0 && (*jvmti)->SetTag(jvmti, object, (jlong)tag) != JVMTI_ERROR_NONE)
            vmp_jvmti__live_remove(&vmp_jv.live, tag);
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
void JNICALL vmp_jvmti__on_sampled_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread,
                                         jobject object, jclass klass, jlong size)
{
    if (!atomic_load(&vmp_jv.sampling) || vmp_jv_tls_agent_thread || vmp_jv.kind_alloc == 0)
        return;
    kind_sample(jvmti, jni, thread, object, klass, vmp_jv.kind_alloc,
                vmp_jvmti__alloc_weight(size > 0 ? (uint64_t)size : 0, vmp_jv.opts.alloc_bytes));
}

/* JVMTI ObjectFree: a tracked object (live=) is gone. */
void JNICALL vmp_jvmti__on_object_free(jvmtiEnv *jvmti, jlong tag)
{
    (void)jvmti;
    vmp_jvmti__live_remove(&vmp_jv.live, (int64_t)tag);
}

/* Under vmp_jv.lock: one live sample of a tracked allocation. */
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
    vmp_writer_kind_sample(vmp_jv.out.w, vmp_jv.kind_live, &s, e->weight);
}

/* live=, as the recording ends: a garbage collection, then a sample of kind
 * "live" for each tracked allocation whose object the JVM still has
 * (GetObjectsWithTags: what ObjectFree has not told yet counts as freed
 * when the JVM no longer has the object). */
void vmp_jvmti__write_live_samples(void)
{
    size_t n = 0;
    int64_t *tags;
    jint count = 0, i;
    jlong *found = NULL;
    uint64_t bytes = 0;
    if (vmp_jv.kind_live == 0 || vmp_jv.jvmti == NULL)
        return;
    (*vmp_jv.jvmti)->ForceGarbageCollection(vmp_jv.jvmti);
    tags = vmp_jvmti__live_tags(&vmp_jv.live, &n);
    if (tags != NULL && n > 0 && n <= INT32_MAX &&
        (*vmp_jv.jvmti)
                ->GetObjectsWithTags(vmp_jv.jvmti, (jint)n, (const jlong *)tags, &count, NULL,
                                     &found) == JVMTI_ERROR_NONE) {
        pthread_mutex_lock(&vmp_jv.lock);
        for (i = 0; vmp_jv.out.w != NULL && i < count; i++)
            vmp_jvmti__live_with(&vmp_jv.live, (int64_t)found[i], write_live_one, &bytes);
        pthread_mutex_unlock(&vmp_jv.lock);
        (*vmp_jv.jvmti)->Deallocate(vmp_jv.jvmti, (unsigned char *)found);
    }
    free(tags);
    if (vmp_jv.live.untracked > 0)
        fprintf(stderr,
                "vmp: live: %llu sampled allocations were not tracked (more than %u MB "
                "of them at once)\n",
                (unsigned long long)vmp_jv.live.untracked, LIVE_MAX_BYTES >> 20);
}

/* ---- Lock contention (spec.md §5.15 kind "lock") ---------------------- */

static __thread uint64_t tls_contended_since TLS_IE; /* MonitorContendedEnter's time */

/* JVMTI MonitorContendedEnter: this thread starts to wait for a monitor
 * another holds. */
void JNICALL vmp_jvmti__on_contended_enter(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread,
                                           jobject object)
{
    (void)jvmti, (void)jni, (void)thread, (void)object;
    tls_contended_since = vmp_jvmti__now_ns();
}

/* JVMTI MonitorContendedEntered: it got the monitor.  A wait of at least
 * lock= is a sample: the monitor's class over the waiting stack, weighing
 * the nanoseconds waited. */
void JNICALL vmp_jvmti__on_contended_entered(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread,
                                             jobject object)
{
    uint64_t since = tls_contended_since, waited;
    jclass klass;
    tls_contended_since = 0;
    if (since == 0 || !atomic_load(&vmp_jv.sampling) || vmp_jv_tls_agent_thread ||
        vmp_jv.kind_lock == 0)
        return;
    waited = vmp_jvmti__now_ns() - since;
    if (waited < vmp_jv.opts.lock_ns)
        return;
    klass = (*jni)->GetObjectClass(jni, object);
    if (klass == NULL)
        return;
    kind_sample(jvmti, jni, thread, NULL, klass, vmp_jv.kind_lock, waited);
    (*jni)->DeleteLocalRef(jni, klass);
}

/* Called with vmp_jv.lock held after each writer call: one warning per run. */
void vmp_jvmti__check_write(vmp_status st)
{
    vmp_jvmti__check_write_to(&vmp_jv.out, st);
}

/* ---- The signal handler --------------------------------------------------- */

/* Append AsyncGetCallTrace's `n` Java frames to the `nf` native frames
 * (innermost first) in vf, cut at `cap` frames (the writer counts a cut past
 * the depth), and write the sample. */
static void write_mixed(vmp_writer *w, vmp_sample *s, vmp_frame *vf, uint32_t nf, uint32_t cap,
                        const agct_frame *af, jint n)
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
        vmp_jv.agct(trace, cap, &c);
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
 * up (vmp_jvmti__scan_threads_locked()).  ASYNC-SIGNAL-SAFE. */
uint64_t vmp_jvmti__stack_top(vmp_jvmti_thread *t, void *uc)
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
    const uint32_t cap = (uint32_t)vmp_jv.opts.depth + 1;
    vmp_frame *vf = t->frames;
    uint32_t nf = vmp_jvmti__unwind(uc, vmp_jvmti__stack_top(t, uc), vf, cap);

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
    JavaVM *vm = vmp_jv.vm;
    if (vm == NULL || !vmp_jvmti__vm_knows_self() ||
        (*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_6) != JNI_OK)
        return NULL;
    return env;
}

static void take_sample(vmp_jvmti_thread *t, void *uc)
{
    vmp_writer *w = __atomic_load_n(&vmp_jv.out.w, __ATOMIC_SEQ_CST);
    JNIEnv *env = vmp_jv_tls_env;
    agct_frame *af = t->java_frames;
    vmp_frame *vf = t->frames;
    /* One frame more than the depth, so that the writer sees and counts a cut. */
    const uint32_t cap = (uint32_t)vmp_jv.opts.depth + 1;
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
    if (af == NULL || vmp_jv.agct == NULL) {
        s.state = ST_UNKNOWN;
        vmp_writer_failed_sample(w, &s, REASON_NO_JNIENV);
        return;
    }
    stack_hi = vmp_jvmti__stack_top(t, uc);
    trace.env_id = env;
    trace.num_frames = 0;
    trace.frames = af;
    vmp_jv.agct(&trace, (jint)cap, uc);
    n = trace.num_frames;
    /* In VM code called from Java, with a frame anchor that lacks its pc:
     * make it walkable and ask again (vmp_jvmti_anchor.h). */
    if (n == -3 /* ticks_unknown_not_Java */ &&
        vmp_jvmti__anchor_make_walkable(env, vmp_agent__sp(uc), stack_hi)) {
        trace.num_frames = 0;
        vmp_jv.agct(&trace, (jint)cap, uc);
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

void vmp_jvmti__on_sigprof(int sig, siginfo_t *si, void *uc)
{
    int saved_errno = errno;
    vmp_jvmti_thread *t;

    (void)sig;
    atomic_fetch_add(&vmp_jv.in_handler, 1);
    t = vmp_jvmti__threads_self();
    if (t != NULL) {
        /* no walk while the JVM reports a fatal error (vmp_jvmti_crash.h) */
        if (atomic_load(&vmp_jv.sampling) && !vmp_jvmti__vm_crashing())
            take_sample(t, uc);
        /* last, so that the walk is not counted in the next interval; also
         * before sampling starts (the grid keeps counting), else a clock
         * whose first signal comes early would stop */
        vmp_agent__clock_rearm(&t->clock, si);
    }
    atomic_fetch_sub(&vmp_jv.in_handler, 1);
    errno = saved_errno;
}
