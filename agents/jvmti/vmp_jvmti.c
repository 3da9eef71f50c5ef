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
 * The signal handler (vmp_jvmti__on_sigprof) takes no locks, allocates nothing and calls
 * no JVMTI or JNI function but GetEnv (which reads the thread's TLS): it
 * reads TLS, walks the native frames above the
 * last Java frame (vmp_jvmti_unwind.h), calls AsyncGetCallTrace and
 * vmp_writer_sample(), all designed for signal context.  Everything else runs
 * in JVMTI callbacks or the service thread and is serialised by `vmp_jv.lock`;
 * JVMTI calls are made outside that lock, so that a thread holding it never
 * waits for a safepoint.
 *
 * This file: the life cycle, options, outputs and loop rotation, and the
 * JVMTI setup; vmp_jvmti_int.h lists the other files.
 */
#include "vmp_jvmti_int.h"

/* ---- Header vocabulary (spec.md §5.1) ------------------------------------ */

static const char *const states[] = {"java", "native/vm", "gc", "unknown", "compiler"};

static const char *const code_kinds[] = {"nmethod", "interpreter", "stub", "adapter"};

static const char *const event_kinds[] = {"gc", "code unload"};

/* Sample kinds beside CPU time (spec.md §5.15), declared in this order
 * when asked for (alloc=, lock=); vmp_jv.kind_* are their writer kinds. */
static const char *const kind_names[] = {"alloc", "live", "lock"};
static const char *const kind_units[] = {"bytes", "bytes", "nanoseconds"};

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
_Static_assert(sizeof failure_reasons / sizeof failure_reasons[0] == N_FAILURE_REASONS,
               "N_FAILURE_REASONS names every failure reason");

vmp_jv_state vmp_jv = {.lock = PTHREAD_MUTEX_INITIALIZER,
                       .rotate_mu = PTHREAD_MUTEX_INITIALIZER,
                       .rotate_cv = PTHREAD_COND_INITIALIZER};

output *const vmp_jv_outputs[2] = {&vmp_jv.out, &vmp_jv.next};

__thread JNIEnv *vmp_jv_tls_env TLS_IE;
__thread int vmp_jv_tls_registered_before TLS_IE;
__thread int vmp_jv_tls_agent_thread TLS_IE;

uint64_t vmp_jvmti__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- Life cycle ------------------------------------------------------------------ */

void vmp_jvmti__output_failed_locked(output *o)
{
    vmp_writer_totals tot;

    if (o->warned)
        return;
    o->warned = 1;
    if (vmp_jv.failing) /* said already: this run of failures goes on */
        return;
    vmp_jv.failing = 1;
    vmp_writer_stats(o->w, &tot);
    fprintf(stderr, "vmp: cannot write %s: %s; samples are dropped and counted %s\n", o->path,
            tot.write_errno ? strerror(tot.write_errno) : "the file is closed",
            vmp_jv.opts.loop_ns > 0 ? "until a next file of the loop can be written"
                                    : "to the end; the program runs on");
}

void vmp_jvmti__check_write_to(output *o, vmp_status st)
{
    if (st == VMP_ERR_IO || st == VMP_ERR_CLOSED)
        vmp_jvmti__output_failed_locked(o);
}

void vmp_jvmti__check_output_locked(void)
{
    vmp_writer_totals tot;

    if (vmp_jv.out.w == NULL)
        return;
    vmp_agent__file_check(&vmp_jv.out.id, vmp_jv.out.path, vmp_jv.opts.loop_ns > 0);
    if (vmp_jv.out.warned)
        return;
    vmp_writer_stats(vmp_jv.out.w, &tot);
    if (tot.write_errno != 0)
        vmp_jvmti__output_failed_locked(&vmp_jv.out);
}

/* Close the writer of `o` (taken out of g: nothing else uses it) and free
 * what it was told.  `report`: one line on stderr with its totals.  Not
 * under vmp_jv.lock. */
static void close_output(output *o, int report)
{
    vmp_writer_totals tot;
    uint64_t dropped, lost = 0, not_opened = 0;
    int failed, say = 0, recovered = 0;

    memset(&tot, 0, sizeof tot);
    failed = vmp_writer_close(o->w, &tot) < 0;
    dropped = tot.dropped_full + tot.dropped_write;
    pthread_mutex_lock(&vmp_jv.lock);
    if (failed) { /* said once a run of failures (vmp_jvmti__output_failed_locked()) */
        say = !o->warned && !vmp_jv.failing;
        vmp_jv.failing = 1;
        vmp_jv.dropped_failing += dropped;
    } else if (vmp_jv.failing) { /* a whole file again: the run of failures ends */
        recovered = 1;
        lost = vmp_jv.dropped_failing;
        not_opened = vmp_jv.not_opened;
        vmp_jv.failing = 0;
        vmp_jv.dropped_failing = 0;
        vmp_jv.not_opened = 0;
    }
    pthread_mutex_unlock(&vmp_jv.lock);
    if (say)
        fprintf(stderr, "vmp: cannot write %s: %s; %llu samples dropped\n", o->path,
                tot.write_errno ? strerror(tot.write_errno) : "write failed",
                (unsigned long long)dropped);
    if (recovered)
        fprintf(stderr,
                "vmp: loop: %s is complete: the files are written again (%llu samples dropped, "
                "%llu files not opened before)\n",
                o->path, (unsigned long long)lost, (unsigned long long)not_opened);
    if (report && !say)
        fprintf(stderr, "vmp: wrote %llu samples (%llu failed, %llu dropped) to %s\n",
                (unsigned long long)tot.samples_written, (unsigned long long)tot.failed_written,
                (unsigned long long)(tot.dropped_full + tot.dropped_write), o->path);
    o->w = NULL;
    o->warned = 0;
    vmp_jvmti__idset_free(&o->functions);
    vmp_jvmti__codemap_free(&o->code);
}

static void stop_rotator(void);
static int open_output(output *o, const char *path);

/* Stop sampling, wait for handlers in flight and close the writer: at
 * VMDeath, at Agent_OnUnload, or asked by an attach ("stop").  Another
 * recording may start after it (begin_recording()). */
void vmp_jvmti__stop_recording(void)
{
    output out;
    size_t i;

    if (!atomic_exchange(&vmp_jv.recording, 0))
        return;
    stop_rotator();                  /* first: it fills and switches files */
    vmp_jvmti__write_live_samples(); /* while the JVM and the file are there */
    atomic_store(&vmp_jv.sampling, 0);
    pthread_mutex_lock(&vmp_jv.lock);
    vmp_jv.dead = 1;
    for (i = 0; i < vmp_jvmti__threads_bound(); i++) {
        vmp_jvmti_thread *t = vmp_jvmti__threads_at(i);
        vmp_agent__clock_stop(&t->clock);
    }
    pthread_mutex_unlock(&vmp_jv.lock);
    if (vmp_jv.service_started) {
        atomic_store(&vmp_jv.stop_service, 1);
        pthread_join(vmp_jv.service, NULL);
        vmp_jv.service_started = 0;
    }
    /* Handlers that saw sampling == 1 are counted in in_handler. */
    vmp_agent__wait_handlers(&vmp_jv.in_handler);
    pthread_mutex_lock(&vmp_jv.lock);
    vmp_jvmti__drain_gc_locked();
    out = vmp_jv.out;
    __atomic_store_n(&vmp_jv.out.w, NULL, __ATOMIC_SEQ_CST);
    memset(&vmp_jv.out.functions, 0, sizeof vmp_jv.out.functions);
    memset(&vmp_jv.out.code, 0, sizeof vmp_jv.out.code);
    pthread_mutex_unlock(&vmp_jv.lock);
    if (out.w == NULL)
        return;
    if (atomic_load(&vmp_jv.in_handler) != 0) {
        /* Leaking the writer is safer than freeing memory a handler uses. */
        fprintf(stderr, "vmp: a sampling handler did not finish; %s left without END\n", out.path);
        return;
    }
    pthread_mutex_lock(&vmp_jv.lock);
    for (i = 0; i < vmp_jvmti__threads_bound(); i++) {
        vmp_jvmti_thread *t = vmp_jvmti__threads_at(i);
        if (t->tid != 0)
            vmp_jvmti__threads_release(t);
    }
    if (vmp_jv.threads_unsampled > 0)
        fprintf(stderr, "vmp: %llu threads not sampled: more than %d at once\n",
                (unsigned long long)vmp_jv.threads_unsampled, VMP_JVMTI_MAX_THREADS);
    pthread_mutex_unlock(&vmp_jv.lock);
    vmp_jvmti__unwind_shutdown();
    close_output(&out, 1);
}

static void define_loaded_classes(JNIEnv *jni)
{
    jvmtiEnv *j = vmp_jv.jvmti;
    jint n = 0, k;
    jclass *classes = NULL;

    if ((*j)->GetLoadedClasses(j, &n, &classes) != JVMTI_ERROR_NONE)
        return;
    for (k = 0; k < n; k++) {
        vmp_jvmti__define_class(classes[k]);
        if (jni != NULL)
            (*jni)->DeleteLocalRef(jni, classes[k]);
    }
    vmp_jvmti__jfree(classes);
}

/* Describe what the JVM holds now to output `o`: every loaded class's
 * methods, the loaded modules, the code generated so far (GenerateEvents
 * replays it; the callbacks give each output what it lacks). */
static void describe_state(JNIEnv *jni, output *o)
{
    define_loaded_classes(jni);
    pthread_mutex_lock(&vmp_jv.lock);
    if (o->w != NULL)
        vmp_jvmti__check_write(vmp_writer_add_loaded_modules(o->w));
    pthread_mutex_unlock(&vmp_jv.lock);
    (*vmp_jv.jvmti)->GenerateEvents(vmp_jv.jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
    (*vmp_jv.jvmti)->GenerateEvents(vmp_jv.jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD);
}

/* ---- Continuous recording: a new file every loop period -------------------------- */

/* Start the next file of a loop: open it, describe the JVM's state to it
 * (what happens meanwhile goes to both files), then switch the samples to
 * it in one store, wait until no handler uses the old file and close that.
 * Every sample goes to exactly one file; each file reads alone.  On the
 * rotator thread (attached to the VM: JVMTI and JNI calls). */
void vmp_jvmti__rotate(JNIEnv *jni)
{
    char path[VMP_JVMTI_PATH_MAX];
    uint64_t n = vmp_jv.file_no + 1;
    output old;
    size_t i;

    if (vmp_jvmti_loop_path(path, sizeof path, vmp_jv.opts.file, n) != 0)
        return;
    if (open_output(&vmp_jv.next, path) != 0) {
        /* its number is skipped (the files stay in time order, none holds
         * what its name's period did not) and the next period tries the
         * next one; samples go on into the current file */
        pthread_mutex_lock(&vmp_jv.lock);
        vmp_jv.file_no = n;
        vmp_jv.not_opened++;
        pthread_mutex_unlock(&vmp_jv.lock);
        return;
    }
    describe_state(jni, &vmp_jv.next);
    pthread_mutex_lock(&vmp_jv.lock);
    for (i = 0; i < vmp_jvmti__threads_bound(); i++) {
        const vmp_jvmti_thread *t = vmp_jvmti__threads_at(i);
        if (t->tid != 0 && t->named &&
            (t->status == VMP_JVMTI_SLOT_LIVE || (t->status == VMP_JVMTI_SLOT_RETIRED && !t->java)))
            vmp_jvmti__check_write(
                vmp_writer_thread(vmp_jv.next.w, t->tid, t->name[0] ? t->name : NULL, 0));
    }
    old = vmp_jv.out;
    vmp_jv.out.zone = vmp_jv.next.zone;
    vmp_jv.out.functions = vmp_jv.next.functions;
    vmp_jv.out.code = vmp_jv.next.code;
    memcpy(vmp_jv.out.path, vmp_jv.next.path, sizeof vmp_jv.out.path);
    vmp_jv.out.warned = vmp_jv.next.warned;
    vmp_jv.out.id = vmp_jv.next.id;
    __atomic_store_n(&vmp_jv.out.w, vmp_jv.next.w,
                     __ATOMIC_SEQ_CST); /* samples go to the new file */
    memset(&vmp_jv.next, 0, sizeof vmp_jv.next);
    vmp_jv.file_no = n;
    pthread_mutex_unlock(&vmp_jv.lock);
    /* then none uses the writer it read before the switch */
    if (!vmp_agent__wait_handlers(&vmp_jv.in_handler)) {
        fprintf(stderr, "vmp: a sampling handler did not finish; %s left without END\n", old.path);
        vmp_jvmti__idset_free(&old.functions);
        vmp_jvmti__codemap_free(&old.code);
        return;
    }
    close_output(&old, 0);
    if (vmp_jv.opts.keep > 0 && n > vmp_jv.opts.keep &&
        vmp_jvmti_loop_path(path, sizeof path, vmp_jv.opts.file, n - vmp_jv.opts.keep) == 0)
        unlink(path);
}

static void *rotator_main(void *arg)
{
    JNIEnv *jni = NULL;
    struct timespec next;

    (void)arg;
    vmp_agent__block_sigprof();
    vmp_jv_tls_agent_thread = 1; /* its ThreadStart registers nothing */
    if ((*vmp_jv.vm)->AttachCurrentThreadAsDaemon(vmp_jv.vm, (void **)&jni, NULL) != JNI_OK ||
        jni == NULL) {
        fprintf(stderr, "vmp: loop: cannot attach a thread to the VM; recording into one file\n");
        return NULL;
    }
    clock_gettime(CLOCK_MONOTONIC, &next);
    pthread_mutex_lock(&vmp_jv.rotate_mu);
    while (!vmp_jv.stop_rotator) {
        vmp_jvmti__add_ns(&next, vmp_jv.opts.loop_ns);
        while (!vmp_jv.stop_rotator &&
               pthread_cond_timedwait(&vmp_jv.rotate_cv, &vmp_jv.rotate_mu, &next) != ETIMEDOUT)
            ;
        if (vmp_jv.stop_rotator)
            break;
        pthread_mutex_unlock(&vmp_jv.rotate_mu);
        vmp_jvmti__rotate(jni);
        pthread_mutex_lock(&vmp_jv.rotate_mu);
    }
    pthread_mutex_unlock(&vmp_jv.rotate_mu);
    (*vmp_jv.vm)->DetachCurrentThread(vmp_jv.vm);
    return NULL;
}

static void start_rotator(void)
{
    pthread_condattr_t ca;

    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_destroy(&vmp_jv.rotate_cv);
    pthread_cond_init(&vmp_jv.rotate_cv, &ca);
    pthread_condattr_destroy(&ca);
    vmp_jv.stop_rotator = 0;
    if (pthread_create(&vmp_jv.rotator, NULL, rotator_main, NULL) == 0)
        vmp_jv.rotator_started = 1;
    else
        fprintf(stderr, "vmp: loop: cannot start its thread; recording into one file\n");
}

static void stop_rotator(void)
{
    if (!vmp_jv.rotator_started)
        return;
    pthread_mutex_lock(&vmp_jv.rotate_mu);
    vmp_jv.stop_rotator = 1;
    pthread_cond_signal(&vmp_jv.rotate_cv);
    pthread_mutex_unlock(&vmp_jv.rotate_mu);
    pthread_join(vmp_jv.rotator, NULL);
    vmp_jv.rotator_started = 0;
}

/* Start recording in the live phase, on Java thread `thread` (`jni` its
 * JNIEnv): describe every loaded class's methods and the loaded modules,
 * replay the code generated so far, find the threads alive now, start the
 * service thread and sampling.  `register_self`: `thread` is the main
 * thread at VMInit (an attach's thread is found by the scan). */
static void start_live(JNIEnv *jni, jthread thread, int register_self)
{
    describe_state(jni, &vmp_jv.out);
    if (vmp_jv.out.w == NULL || vmp_jv.dead)
        return;
    if (!vmp_jvmti__unwind_init())
        fprintf(stderr, "vmp: native stacks are not available; Java frames only\n");
    vmp_jvmti__anchor_init(jni, thread);
    if (!vmp_jvmti__find_vm_key(jni))
        fprintf(stderr, "vmp: HotSpot's thread key not found; threads that ran before the agent "
                        "are sampled without their Java frames\n");
    if (register_self)
        vmp_jvmti__register_thread(jni, thread, 0);
    /* the threads alive now, before the service thread (which blocks the
     * signal and is named, not sampled, by its first scan) */
    pthread_mutex_lock(&vmp_jv.lock);
    vmp_jvmti__scan_threads_locked(1);
    pthread_mutex_unlock(&vmp_jv.lock);
    if (pthread_create(&vmp_jv.service, NULL, vmp_jvmti__service_main, NULL) == 0)
        vmp_jv.service_started = 1;
    atomic_store(&vmp_jv.sampling, 1);
    if (vmp_jv.opts.loop_ns > 0)
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
    vmp_jvmti__stop_recording();
}

/* GetSystemProperty as a malloc'd string, or NULL. */
static char *system_property(const char *name)
{
    char *v = NULL, *out = NULL;
    if ((*vmp_jv.jvmti)->GetSystemProperty(vmp_jv.jvmti, name, &v) == JVMTI_ERROR_NONE && v != NULL)
        out = strdup(v);
    vmp_jvmti__jfree(v);
    return out;
}

/* Open a writer on `path` as output `o` (vmp_jv.out or vmp_jv.next), with its code
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

    vmp_agent__format_interval(interval, sizeof interval, vmp_jv.opts.interval_ns);
    snprintf(depth, sizeof depth, "%u", (unsigned)vmp_jv.opts.depth);
    own[n_own++] = "command";
    own[n_own++] = command ? command : "";
    own[n_own++] = "mode";
    own[n_own++] = vmp_jv.opts.mode == VMP_JVMTI_MODE_WALL ? "wall" : "cpu";
    own[n_own++] = "interval";
    own[n_own++] = interval;
    own[n_own++] = "depth";
    own[n_own++] = depth;
    own[n_own++] = "vm";
    own[n_own++] = vm_long ? vm_long : "";
    own[n_own++] = "sampler"; /* the mechanism that runs (vmp_agent_clock.h) */
    own[n_own++] = vmp_jv.opts.mode == VMP_JVMTI_MODE_WALL
                       ? "wall signals"
                       : vmp_agent__clock_label(vmp_jv.mechanism);
    own[n_own++] = "threads"; /* which threads are sampled */
    own[n_own++] = vmp_jv.opts.threads == VMP_JVMTI_THREADS_JAVA ? "java" : "all";

    /* the user's label= options come after and replace ours of their key */
    size_t n_labels = vmp_jvmti__header_labels(&vmp_jv.opts, own, n_own / 2, labels);

    memset(&meta, 0, sizeof meta);
    meta.vm_name = "HotSpot";
    meta.vm_version = vm_version;
    meta.sample_interval_ns = vmp_jv.opts.interval_ns;
    VMP_WRITER_META_LIST(meta, states, states);
    VMP_WRITER_META_LIST(meta, code_kinds, code_kinds);
    VMP_WRITER_META_LIST(meta, event_kinds, event_kinds);
    VMP_WRITER_META_LIST(meta, failure_reasons, failure_reasons);
    meta.labels = labels;
    meta.n_labels = n_labels;
    meta.name_separator = "."; /* Java's own naming: java.lang.String.hashCode */
    wo.max_depth = vmp_jv.opts.depth;
    /* Unless metadata=all: every method is described (AsyncGetCallTrace
     * needs the jmethodIDs) and the file holds those its stacks and sampled
     * code name; of libjvm's 70,000 symbols those the samples' pcs land in;
     * the pc maps of the compiled code that samples ran. */
    wo.lazy_functions = !vmp_jv.opts.all_metadata;
    wo.lazy_symbols = !vmp_jv.opts.all_metadata;
    wo.lazy_code_maps = !vmp_jv.opts.all_metadata;
    wo.format_major = vmp_jv.opts.format_major;
    wo.sample_time_unit_ns = vmp_jvmti__time_unit(&vmp_jv.opts);
    wo.ring_slots = 16384;
    wo.file_mode = vmp_jv.opts.file_mode;
    wo.chunk_age_ms = vmp_agent__flush_ms(vmp_jv.opts.flush_ns);
    if (vmp_jv.n_sample_kinds > 0) { /* format 2.1: samples of kinds beside CPU time */
        wo.sample_kinds = vmp_jv.sample_kinds;
        wo.sample_units = vmp_jv.sample_units;
        wo.n_sample_kinds = vmp_jv.n_sample_kinds;
    }

    errno = 0;
    st = vmp_writer_open(&w, path, &meta, &wo);
    if (st < 0) {
        int say, err = errno;
        w = NULL;
        pthread_mutex_lock(&vmp_jv.lock);
        say = o == &vmp_jv.out || !vmp_jv.failing; /* a loop says it once a run */
        if (o != &vmp_jv.out)
            vmp_jv.failing = 1;
        pthread_mutex_unlock(&vmp_jv.lock);
        if (say)
            fprintf(stderr, "vmp: cannot open %s: %s; %s\n", path,
                    st == VMP_ERR_IO ? vmp_agent__open_why(err) : vmp_status_str(st),
                    o == &vmp_jv.out ? "the program continues without profiling"
                                     : "the recording goes on in the current file");
    } else {
        pthread_mutex_lock(&vmp_jv.lock);
        /* The code cache's bounds are not published through JVMTI: one zone
         * spans the address space, and code objects give the real extents. */
        vmp_jvmti__check_write(vmp_writer_code_zone(w, &zone, "CodeCache", 0, UINT64_MAX));
        o->zone = zone;
        snprintf(o->path, sizeof o->path, "%s", path);
        vmp_agent__file_note(&o->id, path);
        __atomic_store_n(&o->w, w, __ATOMIC_SEQ_CST); /* JVMTI callbacks describe to it now */
        pthread_mutex_unlock(&vmp_jv.lock);
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
        (*vmp_jv.jvmti)->SetEventNotificationMode(vmp_jv.jvmti, mode, agent_events[i], NULL);
    if (vmp_jv.kind_alloc > 0 || mode == JVMTI_DISABLE)
        (*vmp_jv.jvmti)
            ->SetEventNotificationMode(vmp_jv.jvmti, mode, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
    if (vmp_jv.kind_live > 0 || mode == JVMTI_DISABLE)
        (*vmp_jv.jvmti)
            ->SetEventNotificationMode(vmp_jv.jvmti, mode, JVMTI_EVENT_OBJECT_FREE, NULL);
    if (vmp_jv.kind_lock > 0 || mode == JVMTI_DISABLE) {
        (*vmp_jv.jvmti)
            ->SetEventNotificationMode(vmp_jv.jvmti, mode, JVMTI_EVENT_MONITOR_CONTENDED_ENTER,
                                       NULL);
        (*vmp_jv.jvmti)
            ->SetEventNotificationMode(vmp_jv.jvmti, mode, JVMTI_EVENT_MONITOR_CONTENDED_ENTERED,
                                       NULL);
    }
}

/* The kinds the recording declares (spec.md §5.15), by the options and
 * what the JVM could give. */
static void declare_kind(uint32_t *kind, size_t which)
{
    vmp_jv.sample_kinds[vmp_jv.n_sample_kinds] = kind_names[which];
    vmp_jv.sample_units[vmp_jv.n_sample_kinds] = kind_units[which];
    *kind = (uint32_t)++vmp_jv.n_sample_kinds;
}

/* alloc= and lock=: the capabilities of sampled allocations (JDK 11 and
 * later) and of monitor events, and the kinds they declare.  Without them
 * the recording goes on with the rest. */
static void setup_kinds(jvmtiEnv *j)
{
    jvmtiCapabilities caps;
    vmp_jv.n_sample_kinds = 0;
    vmp_jv.kind_alloc = vmp_jv.kind_live = vmp_jv.kind_lock = 0;
    if (vmp_jv.opts.alloc_bytes > 0) {
        memset(&caps, 0, sizeof caps);
        caps.can_generate_sampled_object_alloc_events = 1;
        if ((*j)->AddCapabilities(j, &caps) != JVMTI_ERROR_NONE ||
            (*j)->SetHeapSamplingInterval(j, (jint)vmp_jv.opts.alloc_bytes) != JVMTI_ERROR_NONE)
            fprintf(stderr, "vmp: this JVM cannot sample allocations (JVMTI SampledObjectAlloc, "
                            "JDK 11 and later); no allocation samples\n");
        else
            declare_kind(&vmp_jv.kind_alloc, 0);
    }
    if (vmp_jv.kind_alloc > 0 && vmp_jv.opts.live) {
        memset(&caps, 0, sizeof caps);
        caps.can_tag_objects = 1;
        caps.can_generate_object_free_events = 1;
        if ((*j)->AddCapabilities(j, &caps) != JVMTI_ERROR_NONE)
            fprintf(stderr, "vmp: this JVM cannot tag objects; no live samples\n");
        else
            declare_kind(&vmp_jv.kind_live, 1);
    }
    if (vmp_jv.opts.lock_ns > 0) {
        memset(&caps, 0, sizeof caps);
        caps.can_generate_monitor_events = 1;
        if ((*j)->AddCapabilities(j, &caps) != JVMTI_ERROR_NONE)
            fprintf(stderr, "vmp: this JVM gives no monitor events; no lock samples\n");
        else
            declare_kind(&vmp_jv.kind_lock, 2);
    }
}

static int setup_jvmti(void)
{
    jvmtiEnv *j = vmp_jv.jvmti;
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
    cb.ThreadStart = vmp_jvmti__on_thread_start;
    cb.ThreadEnd = vmp_jvmti__on_thread_end;
    cb.ClassLoad = vmp_jvmti__on_class_load;
    cb.ClassPrepare = vmp_jvmti__on_class_prepare;
    cb.CompiledMethodLoad = vmp_jvmti__on_compiled_method_load;
    cb.CompiledMethodUnload = vmp_jvmti__on_compiled_method_unload;
    cb.DynamicCodeGenerated = vmp_jvmti__on_dynamic_code_generated;
    cb.GarbageCollectionStart = vmp_jvmti__on_gc_start;
    cb.GarbageCollectionFinish = vmp_jvmti__on_gc_finish;
    setup_kinds(j);
    cb.SampledObjectAlloc = vmp_jvmti__on_sampled_alloc;
    cb.ObjectFree = vmp_jvmti__on_object_free;
    cb.MonitorContendedEnter = vmp_jvmti__on_contended_enter;
    cb.MonitorContendedEntered = vmp_jvmti__on_contended_entered;
    if ((*j)->SetEventCallbacks(j, &cb, (jint)sizeof cb) != JVMTI_ERROR_NONE)
        return -1;
    set_events(JVMTI_ENABLE);
    return 0;
}

static int install_handler(void)
{
    struct sigaction sa;

    if (vmp_agent__sigprof_taken(vmp_jvmti__on_sigprof))
        fprintf(stderr, "vmp: SIGPROF has another handler (another profiler in the JVM?); "
                        "vmp's replaces it while it records\n");
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = vmp_jvmti__on_sigprof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    return sigaction(SIGPROF, &sa, NULL);
}

void vmp_jvmti__check_sigprof_locked(void)
{
    if (vmp_jv.sigprof_lost || !atomic_load(&vmp_jv.sampling) ||
        vmp_agent__sigprof_is(vmp_jvmti__on_sigprof))
        return;
    vmp_jv.sigprof_lost = 1;
    fprintf(stderr,
            "vmp: another SIGPROF handler replaced vmp's (another profiler, or the program): "
            "vmp takes no more samples into %s\n",
            vmp_jv.out.path);
}

/* Forget what a previous recording in this VM run left (a stop, then
 * another attach).  Under vmp_jv.lock, with no recording running. */
static void reset_recording_locked(void)
{
    vmp_jvmti__idset_free(&vmp_jv.out.functions);
    vmp_jvmti__codemap_free(&vmp_jv.out.code);
    vmp_jv.file_no = 1;
    vmp_jv.not_opened = 0;
    vmp_jv.next_code_id = 0;
    vmp_jv.dead = 0;
    vmp_jv.failing = 0;
    vmp_jv.dropped_failing = 0;
    vmp_jv.sigprof_lost = 0;
    vmp_jv.threads_unsampled = 0;
    atomic_store(&vmp_jv.stop_service, 0);
    atomic_store(&vmp_jv.gc_tail, atomic_load(&vmp_jv.gc_head));
    atomic_store(&vmp_jv.gc_lost, 0);
    vmp_jvmti__live_free(&vmp_jv.live);
    vmp_jvmti__live_init(&vmp_jv.live, LIVE_MAX_BYTES);
}

/* The JVMTI environment of `vm` into vmp_jv.jvmti, and AsyncGetCallTrace.
 * @return 0, or -1 (said on stderr). */
static int get_jvmti(JavaVM *vm)
{
    if (vm == NULL || (*vm)->GetEnv(vm, (void **)&vmp_jv.jvmti, JVMTI_VERSION_1_2) != JNI_OK ||
        vmp_jv.jvmti == NULL) {
        vmp_jv.jvmti = NULL;
        fprintf(stderr, "vmp: JVMTI is not available; not profiling\n");
        return -1;
    }
    vmp_jv.vm = vm;
    vmp_jv.agct = (agct_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "AsyncGetCallTrace");
    if (vmp_jv.agct == NULL)
        fprintf(stderr, "vmp: AsyncGetCallTrace not found; every sample will fail\n");
    else
        vmp_jvmti__crash_watch_init((const void *)(uintptr_t)vmp_jv.agct);
    return 0;
}

/* Parse `options` into vmp_jv.opts; each problem is one line on stderr. */
static void parse_options(const char *options)
{
    char warn[1024];
    const char *line;

    vmp_jvmti__parse_options(&vmp_jv.opts, options, (long)getpid(), warn, sizeof warn);
    for (line = warn; *line != '\0';) {
        const char *nl = strchr(line, '\n');
        int len = nl ? (int)(nl - line) : (int)strlen(line);
        fprintf(stderr, "vmp: %.*s\n", len, line);
        line += len + (nl != NULL);
    }
}

/* Ask for the JVMTI events, choose the clock, open the file and install
 * the handler (vmp_jv.opts parsed).  Sampling starts in start_live().
 * @return VMP_JVMTI_ATTACH_OK, or why not (said on stderr; nothing is left
 * running and no file is left behind). */
static int begin_recording(void)
{
    char path[VMP_JVMTI_PATH_MAX];

    pthread_mutex_lock(&vmp_jv.lock);
    reset_recording_locked();
    pthread_mutex_unlock(&vmp_jv.lock);
    if (setup_jvmti() != 0) {
        fprintf(stderr, "vmp: cannot set up JVMTI events; not profiling\n");
        return VMP_JVMTI_ATTACH_NO_JVMTI;
    }
    if (vmp_jv.opts.mode == VMP_JVMTI_MODE_CPU) {
        char why[256];
        vmp_jv.mechanism =
            vmp_agent__clock_setup(vmp_jv.opts.sampler, vmp_jv.opts.interval_ns, why, sizeof why);
        if (why[0])
            fprintf(stderr, "vmp: %s\n", why);
    }
    if (vmp_jv.opts.loop_ns > 0 &&
        vmp_jvmti_loop_path(path, sizeof path, vmp_jv.opts.file, vmp_jv.file_no) != 0) {
        fprintf(stderr, "vmp: file name %s is too long for loop\n", vmp_jv.opts.file);
        set_events(JVMTI_DISABLE);
        return VMP_JVMTI_ATTACH_NO_FILE;
    }
    if (open_output(&vmp_jv.out, vmp_jv.opts.loop_ns > 0 ? path : vmp_jv.opts.file) != 0) {
        set_events(JVMTI_DISABLE);
        return VMP_JVMTI_ATTACH_NO_FILE;
    }
    atomic_store(&vmp_jv.recording, 1);
    if (install_handler() != 0) {
        fprintf(stderr, "vmp: cannot install the SIGPROF handler: %s\n", strerror(errno));
        snprintf(path, sizeof path, "%s", vmp_jv.out.path);
        vmp_jvmti__stop_recording();
        set_events(JVMTI_DISABLE);
        unlink(path);
        return VMP_JVMTI_ATTACH_NO_JVMTI;
    }
    return VMP_JVMTI_ATTACH_OK;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
    (void)reserved;
    if (vmp_jv.jvmti != NULL) {
        fprintf(stderr, "vmp: agent loaded twice; ignoring the second copy\n");
        return JNI_OK;
    }
    if (get_jvmti(vm) != 0)
        return JNI_OK;
    parse_options(options);
    if (begin_recording() == VMP_JVMTI_ATTACH_OK)
        vmp_jv.recorded = 1;
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
        if (!atomic_load(&vmp_jv.recording))
            return VMP_JVMTI_ATTACH_IDLE;
        vmp_jvmti__stop_recording();
        set_events(JVMTI_DISABLE);
        return VMP_JVMTI_ATTACH_OK;
    }
    if (atomic_load(&vmp_jv.recording))
        return VMP_JVMTI_ATTACH_BUSY;
    if (vmp_jv.jvmti == NULL && get_jvmti(vm) != 0)
        return VMP_JVMTI_ATTACH_NO_JVMTI;
    if ((*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK || jni == NULL ||
        (*vmp_jv.jvmti)->GetCurrentThread(vmp_jv.jvmti, &self) != JVMTI_ERROR_NONE)
        rc = VMP_JVMTI_ATTACH_NO_JVMTI;
    else {
        parse_options(options);
        /* the threads that ran before: only a scan finds them */
        if (vmp_jv.opts.threads == VMP_JVMTI_THREADS_JAVA)
            fprintf(stderr, "vmp: threads=java: an attached agent samples every thread\n");
        vmp_jv.opts.threads = VMP_JVMTI_THREADS_ALL;
        rc = begin_recording();
    }
    if (rc != VMP_JVMTI_ATTACH_OK) {
        if (!vmp_jv.recorded) { /* the JVM unloads the library: no callback may remain */
            (*vmp_jv.jvmti)->DisposeEnvironment(vmp_jv.jvmti);
            vmp_jv.jvmti = NULL;
        }
        return rc;
    }
    vmp_jv.recorded = 1;
    start_live(jni, self, 0);
    (*jni)->DeleteLocalRef(jni, self);
    return VMP_JVMTI_ATTACH_OK;
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
    (void)vm;
    vmp_jvmti__stop_recording();
    /* This code may be unmapped after return; a late SIGPROF must not land here.
     * Every clock is gone, so ignoring the signal loses nothing. */
    signal(SIGPROF, SIG_IGN);
}
