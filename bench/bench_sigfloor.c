/* SPDX-License-Identifier: MIT
 *
 * bench_sigfloor.c - the floor of signal-based sampling: what per-thread
 * CPU-time timers delivering SIGPROF to an empty handler cost a CPU-bound
 * thread, at the intervals a profiler uses (the delivery mechanism behind
 * spec.md §5.12 SAMPLE weights, agents/jvmti).
 *
 * usage: bench_sigfloor [ROUNDS [WORK]]
 * Two threads each run a fixed loop of WORK iterations; rounds alternate
 * no timer, a 1 ms and a 100 us CPU-time timer per thread (timer_create on
 * the thread's CPU clock, SIGEV_THREAD_ID).  Prints one markdown row per
 * interval: median CPU time per round, overhead against no timer, and the
 * signals delivered (plus timer overruns) against the expirations the CPU
 * time asked for.  Not a pass/fail test.
 */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define THREADS 2

static _Atomic uint64_t g_signals, g_overruns;

static void on_sigprof(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    atomic_fetch_add_explicit(&g_signals, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&g_overruns, (uint64_t)si->si_overrun, memory_order_relaxed);
}

static uint64_t ns_of(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

typedef struct worker {
    uint64_t interval_ns; /* 0 == no timer */
    uint64_t work;
    uint64_t cpu_ns;
    volatile uint64_t sink;
    pthread_t tid;
} worker;

static void *run(void *arg)
{
    worker *wk = arg;
    timer_t timer;
    int armed = 0;
    uint64_t i, x = 88172645463325252ull, c0;
    if (wk->interval_ns) {
        struct sigevent ev;
        struct itimerspec its;
        memset(&ev, 0, sizeof ev);
        ev.sigev_notify = SIGEV_THREAD_ID;
        ev.sigev_signo = SIGPROF;
        ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
        memset(&its, 0, sizeof its);
        its.it_interval.tv_sec = (time_t)(wk->interval_ns / 1000000000u);
        its.it_interval.tv_nsec = (long)(wk->interval_ns % 1000000000u);
        its.it_value = its.it_interval;
        if (timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &timer) == 0 &&
            timer_settime(timer, 0, &its, NULL) == 0)
            armed = 1;
    }
    c0 = ns_of(CLOCK_THREAD_CPUTIME_ID);
    for (i = 0; i < wk->work; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    wk->cpu_ns = ns_of(CLOCK_THREAD_CPUTIME_ID) - c0;
    wk->sink = x;
    if (armed)
        timer_delete(timer);
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    uint64_t work = argc > 2 ? strtoull(argv[2], NULL, 10) : 400000000u;
    static const uint64_t intervals[] = {0, 1000000, 100000};
    uint64_t cpu[3][64], sig[3] = {0}, over[3] = {0}, cpu_sum[3] = {0}, med[3];
    struct sigaction sa;
    int r, m, t;
    if (rounds < 1 || rounds > 64)
        return 2;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigprof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPROF, &sa, NULL);
    for (r = 0; r < rounds; r++)
        for (m = 0; m < 3; m++) {
            worker wk[THREADS];
            uint64_t s0 = atomic_load(&g_signals), o0 = atomic_load(&g_overruns), c = 0;
            for (t = 0; t < THREADS; t++) {
                memset(&wk[t], 0, sizeof wk[t]);
                wk[t].interval_ns = intervals[m];
                wk[t].work = work;
                pthread_create(&wk[t].tid, NULL, run, &wk[t]);
            }
            for (t = 0; t < THREADS; t++) {
                pthread_join(wk[t].tid, NULL);
                c += wk[t].cpu_ns;
            }
            cpu[m][r] = c;
            cpu_sum[m] += c;
            sig[m] += atomic_load(&g_signals) - s0;
            over[m] += atomic_load(&g_overruns) - o0;
        }
    for (m = 0; m < 3; m++) {
        qsort(cpu[m], (size_t)rounds, sizeof cpu[m][0], cmp_u64);
        med[m] = cpu[m][rounds / 2];
    }
    for (m = 0; m < 3; m++) {
        double req = intervals[m] ? (double)cpu_sum[m] / (double)intervals[m] : 0;
        if (m == 0) {
            printf("| no timer | %.3f | - | - | - | - |\n", (double)med[0] / 1e9);
            continue;
        }
        printf(
            "| %" PRIu64 " us | %.3f | %+.2f%% | %.0f | %.1f%% | %.1f%% |\n", intervals[m] / 1000,
            (double)med[m] / 1e9, 100.0 * ((double)med[m] - (double)med[0]) / (double)med[0],
            (double)sig[m] / ((double)cpu_sum[m] / 1e9), req > 0 ? 100.0 * (double)sig[m] / req : 0,
            req > 0 ? 100.0 * (double)(sig[m] + over[m]) / req : 0);
    }
    return 0;
}
