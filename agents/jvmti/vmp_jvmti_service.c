/* SPDX-License-Identifier: MIT
 *
 * vmp_jvmti_service.c - the HotSpot agent's threads (JVMTI's, and those
 * found in /proc/self/task: spec.md §5.4), GC events (§5.13) and the
 * service thread that scans, names and drains them.
 */
#include "vmp_jvmti_int.h"

/* ---- Threads ------------------------------------------------------------------ */

static void write_thread_name(jthread thread, JNIEnv *jni, uint64_t tid, int ended)
{
    jvmtiEnv *j = vmp_jv.jvmti;
    jvmtiThreadInfo info;
    vmp_jvmti_thread *t;
    int i;

    memset(&info, 0, sizeof info);
    if (thread == NULL || (*j)->GetThreadInfo(j, thread, &info) != JVMTI_ERROR_NONE)
        memset(&info, 0, sizeof info);
    pthread_mutex_lock(&vmp_jv.lock);
    t = vmp_jvmti__threads_find(tid);
    if (t != NULL && info.name != NULL) /* for the next file of a loop */
        snprintf(t->name, sizeof t->name, "%s", info.name);
    for (i = 0; i < N_OUTPUTS; i++) {
        if (vmp_jv_outputs[i]->w != NULL)
            vmp_jvmti__check_write(vmp_writer_thread(vmp_jv_outputs[i]->w, tid, info.name, ended));
    }
    pthread_mutex_unlock(&vmp_jv.lock);
    vmp_jvmti__jfree(info.name);
    if (jni != NULL) {
        if (info.thread_group != NULL)
            (*jni)->DeleteLocalRef(jni, info.thread_group);
        if (info.context_class_loader != NULL)
            (*jni)->DeleteLocalRef(jni, info.context_class_loader);
    }
}

/* Start sampling thread `tid` in slot `t` (under vmp_jv.lock): its clock in cpu
 * mode; the handler finds the slot from now on. */
static void start_slot_locked(vmp_jvmti_thread *t, uint64_t tid, int from_birth)
{
    t->blocked = 0;
    /* published first: the clock's first signal may come before its start
     * returns */
    vmp_jvmti__threads_set_status(t, VMP_JVMTI_SLOT_LIVE);
    if (vmp_jv.opts.mode == VMP_JVMTI_MODE_CPU)
        vmp_agent__clock_start(&t->clock, tid, from_birth);
}

/* Runs on the thread itself: ThreadStart (`from_birth`: its CPU time so far
 * belongs to the profile), or VMInit for the main thread.  A thread that a
 * scan of /proc/self/task found first keeps its slot and clock and gains
 * its Java frames. */
void vmp_jvmti__register_thread(JNIEnv *jni, jthread thread, int from_birth)
{
    const size_t depth = (size_t)vmp_jv.opts.depth + 1;
    const uint64_t tid = (uint64_t)syscall(SYS_gettid);
    vmp_jvmti_thread *t;
    int ok = 0;

    if (vmp_jv_tls_env != NULL || vmp_jv_tls_agent_thread)
        return;
    /* a thread that attaches again (DestroyJavaVM) was sampled before: its
     * CPU time since birth is in the profile already */
    if (vmp_jv_tls_registered_before)
        from_birth = 0;
    vmp_jv_tls_registered_before = 1;
    vmp_jv_tls_env = jni;
    atomic_signal_fence(memory_order_seq_cst);

    pthread_mutex_lock(&vmp_jv.lock);
    if (!vmp_jv.dead && vmp_jv.out.w != NULL) {
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
            vmp_jv.threads_unsampled++;
        }
        ok = t != NULL;
    }
    pthread_mutex_unlock(&vmp_jv.lock);
    if (ok)
        write_thread_name(thread, jni, tid, 0);
}

static void unregister_thread(JNIEnv *jni, jthread thread)
{
    const uint64_t tid = (uint64_t)syscall(SYS_gettid);
    vmp_jvmti_thread *t;

    if (vmp_jv_tls_env == NULL)
        return;
    /* Sampled no more: a signal still pending finds no slot and records
     * nothing.  The VM's work after ThreadEnd (the thread's exit, tens of
     * microseconds) is not in the profile, as it is not in the CPU time the
     * thread can measure of itself. */
    vmp_jvmti__threads_forget_self();
    pthread_mutex_lock(&vmp_jv.lock);
    t = vmp_jvmti__threads_find(tid);
    if (t != NULL && t->status != VMP_JVMTI_SLOT_FREE) {
        vmp_jvmti__threads_set_status(t, VMP_JVMTI_SLOT_RETIRED);
        vmp_agent__clock_stop(&t->clock);
        /* With scans, retired, not freed: a scan must not take the thread
         * for a new one while it still runs; the slot is freed once it is
         * gone.  Only this thread's handler uses the buffer, and it finds
         * the slot no more. */
        if (vmp_jv.opts.threads != VMP_JVMTI_THREADS_ALL)
            vmp_jvmti__threads_release(t);
    }
    pthread_mutex_unlock(&vmp_jv.lock);
    vmp_jv_tls_env = NULL;
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
 * the final one.  Under vmp_jv.lock. */
static void name_from_comm_locked(vmp_jvmti_thread *t, int ended)
{
    char comm[16];
    if (!ended && vmp_jvmti__task_comm(t->tid, comm, sizeof comm) == 0 && comm[0] != '\0') {
        if (t->scans < NAME_WAIT_SCANS && strcmp(comm, vmp_jv.process_comm) == 0)
            return;
        memcpy(t->comm, comm, sizeof comm);
    }
    t->role = vmp_jvmti__thread_role(t->comm);
    t->named = 1;
    snprintf(t->name, sizeof t->name, "%s", t->comm);
    for (int i = 0; i < N_OUTPUTS; i++) {
        if (vmp_jv_outputs[i]->w != NULL)
            vmp_jvmti__check_write(vmp_writer_thread(vmp_jv_outputs[i]->w, t->tid,
                                                     t->comm[0] ? t->comm : NULL, ended));
    }
}

/* One scan of /proc/self/task (under vmp_jv.lock): every thread not yet in the
 * table is sampled from now (`initial`: the threads alive when recording
 * starts) or from its birth; slots of threads that are gone are freed and
 * the threads that JVMTI did not report are said to have ended. */
void vmp_jvmti__scan_threads_locked(int initial)
{
    const size_t depth = (size_t)vmp_jv.opts.depth + 1;
    uint64_t *tids;
    unsigned char *known;
    size_t n, i;

    if (vmp_jv.opts.threads != VMP_JVMTI_THREADS_ALL || vmp_jv.dead || vmp_jv.out.w == NULL ||
        vmp_jvmti__list_tasks(&tids, &n) != 0)
        return;
    if (initial)
        vmp_jvmti__task_comm((uint64_t)getpid(), vmp_jv.process_comm, sizeof vmp_jv.process_comm);
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
            vmp_jv.threads_unsampled++;
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
 * (vmp_jvmti__stack_top()): from then on their native walks read the stack without a
 * system call.  A slot is freed only under vmp_jv.lock after its thread is gone,
 * so a top found for a thread that has just ended is never used by
 * another.  Under vmp_jv.lock. */
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

void JNICALL vmp_jvmti__on_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)jvmti;
    vmp_jvmti__register_thread(jni, thread, 1);
}

void JNICALL vmp_jvmti__on_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
    (void)jvmti;
    unregister_thread(jni, thread);
}

/* ---- GC events and the service thread --------------------------------------- */

/* The GC callbacks may call almost no JVMTI function and must not block: they
 * only put timestamps into a ring that the service thread turns into events. */
void JNICALL vmp_jvmti__on_gc_start(jvmtiEnv *jvmti)
{
    (void)jvmti;
    atomic_store(&vmp_jv.gc_start_ns, vmp_jvmti__now_ns());
}

void JNICALL vmp_jvmti__on_gc_finish(jvmtiEnv *jvmti)
{
    uint64_t head = atomic_load(&vmp_jv.gc_head);

    (void)jvmti;
    if (head - atomic_load(&vmp_jv.gc_tail) >= GC_RING) {
        atomic_fetch_add(&vmp_jv.gc_lost, 1);
        return;
    }
    vmp_jv.gc_ring[head % GC_RING][0] = atomic_load(&vmp_jv.gc_start_ns);
    vmp_jv.gc_ring[head % GC_RING][1] = vmp_jvmti__now_ns();
    atomic_store(&vmp_jv.gc_head, head + 1);
}

void vmp_jvmti__drain_gc_locked(void)
{
    uint64_t tail = atomic_load(&vmp_jv.gc_tail), head = atomic_load(&vmp_jv.gc_head);

    for (; tail != head; tail++) {
        uint64_t s = vmp_jv.gc_ring[tail % GC_RING][0], e = vmp_jv.gc_ring[tail % GC_RING][1];
        if (vmp_jv.out.w != NULL && s != 0 && e >= s)
            vmp_jvmti__check_write(vmp_writer_event(vmp_jv.out.w, EVT_GC, s, e - s, 0, 0, NULL));
    }
    atomic_store(&vmp_jv.gc_tail, tail);
}

void vmp_jvmti__add_ns(struct timespec *ts, uint64_t ns)
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
void *vmp_jvmti__service_main(void *arg)
{
    const int wall = vmp_jv.opts.mode == VMP_JVMTI_MODE_WALL;
    const uint64_t tick =
        wall && vmp_jv.opts.interval_ns < SCAN_PERIOD_NS ? vmp_jv.opts.interval_ns : SCAN_PERIOD_NS;
    const pid_t pid = getpid();
    uint64_t last_drain = 0, last_modules = vmp_jvmti__now_ns();
    struct timespec next;
    int flushed_at_crash = 0;

    (void)arg;
    vmp_agent__block_sigprof();
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (!atomic_load(&vmp_jv.stop_service)) {
        uint64_t t;
        vmp_jvmti__add_ns(&next, tick);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
            ;
        t = vmp_jvmti__now_ns();
        pthread_mutex_lock(&vmp_jv.lock);
        if (!flushed_at_crash && vmp_jvmti__vm_crashing()) {
            /* The JVM writes its hs_err file, then dies: what was sampled
             * goes to the file now.  (If the crashed thread holds the lock,
             * this thread waits for the end with it.) */
            flushed_at_crash = 1;
            if (vmp_jv.out.w != NULL)
                vmp_writer_flush(vmp_jv.out.w);
        }
        if (wall && atomic_load(&vmp_jv.sampling)) {
            size_t i;
            for (i = 0; i < vmp_jvmti__threads_bound(); i++) {
                const vmp_jvmti_thread *th = vmp_jvmti__threads_at(i);
                if (th->status == VMP_JVMTI_SLOT_LIVE)
                    syscall(SYS_tgkill, pid, (pid_t)th->tid, SIGPROF);
            }
        }
        if (t - last_drain >= SCAN_PERIOD_NS) {
            vmp_jvmti__check_output_locked();
            vmp_jvmti__check_sigprof_locked();
            vmp_jvmti__drain_gc_locked();
            vmp_jvmti__scan_threads_locked(0);
            find_stack_tops_locked();
            last_drain = t;
        }
        pthread_mutex_unlock(&vmp_jv.lock);
        if (t - last_modules >= 100000000u) {
            /* Libraries loaded since: their unwind tables, and their MODULE
             * records (each writer adds only objects it has not recorded). */
            if (vmp_jvmti__unwind_refresh()) {
                pthread_mutex_lock(&vmp_jv.lock);
                for (int i = 0; i < N_OUTPUTS; i++) {
                    if (vmp_jv_outputs[i]->w != NULL)
                        vmp_jvmti__check_write(vmp_writer_add_loaded_modules(vmp_jv_outputs[i]->w));
                }
                pthread_mutex_unlock(&vmp_jv.lock);
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
