/* SPDX-License-Identifier: MIT
 *
 * test_jvmti_unwind.c - the HotSpot agent's native unwinder
 * (agents/jvmti/vmp_jvmti_unwind.h) in a signal handler, without a JVM: a
 * storm of SIGPROF (1,000 signals/s on each of 4 threads for 3 s) lands in
 * C code 30 frames deep, and every walk must return the interrupted pc and
 * its callers, with no crash and no deadlock (run under ASan/UBSan and TSan
 * by the sanitizer builds).  Prints the cost of one walk at depth 30.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "vmp_jvmti_unwind.h"
#include "vmp_test.h"

#define THREADS 4
#define DEPTH   30
#define SECONDS 3

static atomic_int stop;
static atomic_ulong walks, deep_walks, short_walks, walk_ns;
static _Atomic pid_t tids[THREADS];

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

/* The walk's cost as the thread's CPU time: 4 spinning threads share 2
 * cores, and wall time would count the walks preempted midway. */
static uint64_t cpu_ns(void)
{
    return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static void on_prof(int sig, siginfo_t *si, void *uc)
{
    vmp_frame f[VMP_JVMTI_NATIVE_MAX];
    int saved = errno;
    uint64_t t0 = cpu_ns();
    uint32_t n = vmp_jvmti__unwind(uc, f, VMP_JVMTI_NATIVE_MAX);
    uint32_t i;

    (void)sig;
    (void)si;
    atomic_fetch_add(&walk_ns, cpu_ns() - t0);
    atomic_fetch_add(&walks, 1);
    for (i = 0; i < n; i++)
        if (f[i].kind != VMP_FRAME_PC || f[i].value == 0)
            n = 0;
    if (n >= DEPTH)
        atomic_fetch_add(&deep_walks, 1);
    else
        atomic_fetch_add(&short_walks, 1);
    errno = saved;
}

/* Recurse DEPTH times, then spin; noinline and the volatile sum keep the
 * frames real. */
__attribute__((noinline)) static uint64_t dive(int depth, volatile uint64_t *sink)
{
    uint64_t r;
    if (depth > 0) {
        r = dive(depth - 1, sink) + 1;
        *sink += r;
        return r;
    }
    while (!atomic_load(&stop))
        *sink += 1;
    return *sink;
}

static void *worker(void *arg)
{
    volatile uint64_t sink = 0;
    atomic_store(&tids[(intptr_t)arg], (pid_t)syscall(SYS_gettid));
    dive(DEPTH, &sink);
    return NULL;
}

static void test_signal_storm(void)
{
    pthread_t th[THREADS];
    struct sigaction sa;
    intptr_t i;
    uint64_t end;
    unsigned long w, d;

    CHECK(vmp_jvmti__unwind_init() == 1);
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_prof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGPROF, &sa, NULL) == 0);
    for (i = 0; i < THREADS; i++)
        CHECK(pthread_create(&th[i], NULL, worker, (void *)i) == 0);
    usleep(50000); /* the workers record their tids and dive */
    end = now_ns() + SECONDS * 1000000000ull;
    while (now_ns() < end) {
        for (i = 0; i < THREADS; i++) {
            pid_t tid = atomic_load(&tids[i]);
            if (tid != 0)
                syscall(SYS_tgkill, getpid(), tid, SIGPROF);
        }
        usleep(1000);
    }
    atomic_store(&stop, 1);
    for (i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    signal(SIGPROF, SIG_IGN);
    w = atomic_load(&walks);
    d = atomic_load(&deep_walks);
    printf("%lu walks, %lu at depth >= %d, %lu shorter; %.1f us of CPU per walk\n", w, d, DEPTH,
           atomic_load(&short_walks), w ? (double)atomic_load(&walk_ns) / (double)w / 1000.0 : 0.0);
    /* Floors for a loaded 2-core machine: most signals arrive (usleep is
     * coarse) and nearly every walk reaches the bottom of the recursion. */
    CHECK(w >= (unsigned long)THREADS * SECONDS * 200);
    CHECK(d * 10 >= w * 9);
    vmp_jvmti__unwind_shutdown();
}

int main(void)
{
    VMP_TEST_RUN(test_signal_storm);
    VMP_TEST_EXIT();
}
