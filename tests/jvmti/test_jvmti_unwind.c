/* SPDX-License-Identifier: MIT
 *
 * test_jvmti_unwind.c - the HotSpot agent's native unwinder
 * (agents/jvmti/vmp_jvmti_unwind.h) in a signal handler, without a JVM: a
 * storm of SIGPROF (1,000 signals/s on each of 4 threads for 3 s) lands in
 * C code 30 frames deep, and every walk must return the interrupted pc and
 * its callers, with no crash and no deadlock (run under ASan/UBSan and TSan
 * by the sanitizer builds), with the frame rows from .eh_frame and with
 * libunwind alone; with the stack's top known, no read needs a system call.
 * Then, on a thread busy in libc (formatting, sorting, allocating), each
 * walk by the rows must equal libunwind's walk of the same context.  Prints
 * the cost of one walk at depth 30 both ways.
 */
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "vmp_jvmti_cfi.h"
#include "vmp_jvmti_threads.h"
#include "vmp_jvmti_unwind.h"
#include "vmp_test.h"

/* ThreadSanitizer defers a signal that lands in its runtime and calls the
 * handler later with the context saved then, whose stack has moved on: the
 * walks of such a context read stale frames, so the checks that compare
 * walks or count reads hold only without it. */
#if defined(__SANITIZE_THREAD__)
#    define STALE_CONTEXTS 1
#elif defined(__has_feature)
#    if __has_feature(thread_sanitizer)
#        define STALE_CONTEXTS 1
#    endif
#endif
#ifndef STALE_CONTEXTS
#    define STALE_CONTEXTS 0
#endif

#define THREADS 4
#define DEPTH   30
#define SECONDS 3

static atomic_int stop;
static atomic_ulong walks, deep_walks, short_walks, walk_ns;
static _Atomic pid_t tids[THREADS];
static _Atomic uint64_t tops[THREADS];
static __thread uint64_t my_top;

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
    uint32_t n = vmp_jvmti__unwind(uc, my_top, f, VMP_JVMTI_NATIVE_MAX);
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

/* The top of the calling thread's stack, as the agent finds it: the
 * mapping of /proc/self/maps that holds its stack pointer (0 if not found:
 * the main thread checks). */
static uint64_t stack_top_of_self(void)
{
    uint64_t sp = (uint64_t)(uintptr_t)__builtin_frame_address(0), top = 0;
    if (vmp_jvmti__stack_tops(&sp, &top, 1) != 0 || top <= sp)
        return 0;
    return top;
}

static void *worker(void *arg)
{
    volatile uint64_t sink = 0;
    my_top = stack_top_of_self();
    atomic_store(&tops[(intptr_t)arg], my_top);
    atomic_store(&tids[(intptr_t)arg], (pid_t)syscall(SYS_gettid));
    dive(DEPTH, &sink);
    return NULL;
}

static void storm(int rows)
{
    pthread_t th[THREADS];
    struct sigaction sa;
    intptr_t i;
    uint64_t end, handovers0, reads0, handovers, reads;
    unsigned long w, d;

    atomic_store(&stop, 0);
    atomic_store(&walks, 0);
    atomic_store(&deep_walks, 0);
    atomic_store(&short_walks, 0);
    atomic_store(&walk_ns, 0);
    for (i = 0; i < THREADS; i++)
        atomic_store(&tids[i], 0);
    CHECK(vmp_jvmti__unwind_init() == 1);
    vmp_jvmti__unwind_use_rows(rows);
    vmp_jvmti__unwind_counts(&handovers0, &reads0);
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_prof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGPROF, &sa, NULL) == 0);
    for (i = 0; i < THREADS; i++)
        CHECK(pthread_create(&th[i], NULL, worker, (void *)i) == 0);
    usleep(50000); /* the workers record their tids and dive */
    for (i = 0; i < THREADS; i++) {
        while (atomic_load(&tids[i]) == 0)
            usleep(1000);
        CHECK(atomic_load(&tops[i]) != 0);
    }
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
    vmp_jvmti__unwind_counts(&handovers, &reads);
    handovers -= handovers0;
    reads -= reads0;
    printf("%s: %lu walks, %lu at depth >= %d, %lu shorter; %.1f us of CPU per walk; "
           "%llu handed to libunwind, %llu reads checked by a system call\n",
           rows ? "frame rows" : "libunwind", w, d, DEPTH, atomic_load(&short_walks),
           w ? (double)atomic_load(&walk_ns) / (double)w / 1000.0 : 0.0,
           (unsigned long long)handovers, (unsigned long long)reads);
    /* Floors for a loaded 2-core machine: most signals arrive (usleep is
     * coarse) and nearly every walk reaches the bottom of the recursion. */
    CHECK(w >= (unsigned long)THREADS * SECONDS * 200);
    CHECK(d * 10 >= w * 9);
    if (rows && !STALE_CONTEXTS) {
        /* the stack's top is known: every read is direct, and the rows say
         * where every frame of dive() and the thread's start is */
        CHECK(reads == 0);
        CHECK(handovers * 100 <= w);
    }
    vmp_jvmti__unwind_use_rows(1);
    vmp_jvmti__unwind_shutdown();
}

static void test_signal_storm(void)
{
    storm(1);
    storm(0);
}

/* ---- Rows against libunwind on libc's code ------------------------------- */

#define COMPARE_SIGNALS 3000

static _Atomic pid_t busy_tid;
static _Atomic uint64_t busy_top;
static atomic_ulong compared, same, rows_deeper, rows_shallower, differ;

static void on_compare(int sig, siginfo_t *si, void *uc)
{
    vmp_frame a[VMP_JVMTI_NATIVE_MAX], b[VMP_JVMTI_NATIVE_MAX];
    int saved = errno;
    uint32_t na, nb, i, common;

    (void)sig;
    (void)si;
    /* one thread takes these signals, and the main thread walks nothing:
     * switching the walker between the two walks is safe here */
    vmp_jvmti__unwind_use_rows(1);
    na = vmp_jvmti__unwind(uc, my_top, a, VMP_JVMTI_NATIVE_MAX);
    vmp_jvmti__unwind_use_rows(0);
    nb = vmp_jvmti__unwind(uc, my_top, b, VMP_JVMTI_NATIVE_MAX);
    vmp_jvmti__unwind_use_rows(1);
    common = na < nb ? na : nb;
    for (i = 0; i < common && a[i].value == b[i].value; i++)
        ;
    atomic_fetch_add(&compared, 1);
    if (i < common)
        atomic_fetch_add(&differ, 1);
    else if (na == nb)
        atomic_fetch_add(&same, 1);
    else if (na > nb)
        atomic_fetch_add(&rows_deeper, 1);
    else
        atomic_fetch_add(&rows_shallower, 1);
    errno = saved;
}

static int by_value(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

__attribute__((noinline)) static uint64_t libc_work(int depth)
{
    char buf[256];
    int v[200];
    uint64_t sum = 0;
    int i, round;

    if (depth > 0)
        return libc_work(depth - 1) + 1;
    for (round = 0; !atomic_load(&stop); round++) {
        void *p = malloc((size_t)(round % 4096) + 16);
        snprintf(buf, sizeof buf, "%d %f %s", round, round * 0.5, "vmp");
        for (i = 0; i < 200; i++)
            v[i] = (int)((round * 7919u + (unsigned)i * 104729u) % 1000u);
        qsort(v, 200, sizeof v[0], by_value);
        if (p != NULL)
            memset(p, round, 16);
        sum += (uint64_t)v[100] + (uint64_t)strlen(buf) + (p != NULL);
        free(p);
    }
    return sum;
}

static void *busy(void *arg)
{
    (void)arg;
    my_top = stack_top_of_self();
    atomic_store(&busy_top, my_top);
    atomic_store(&busy_tid, (pid_t)syscall(SYS_gettid));
    return (void *)(uintptr_t)libc_work(10);
}

static void test_rows_match_libunwind(void)
{
    pthread_t th;
    struct sigaction sa;
    int i;
    unsigned long c, s;

    atomic_store(&stop, 0);
    CHECK(vmp_jvmti__unwind_init() == 1);
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_compare;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGPROF, &sa, NULL) == 0);
    CHECK(pthread_create(&th, NULL, busy, NULL) == 0);
    while (atomic_load(&busy_tid) == 0)
        usleep(1000);
    CHECK(atomic_load(&busy_top) != 0);
    for (i = 0; i < COMPARE_SIGNALS; i++) {
        syscall(SYS_tgkill, getpid(), atomic_load(&busy_tid), SIGPROF);
        usleep(200);
    }
    atomic_store(&stop, 1);
    pthread_join(th, NULL);
    signal(SIGPROF, SIG_IGN);
    c = atomic_load(&compared);
    s = atomic_load(&same);
    printf("rows vs libunwind on libc code: %lu walks, %lu the same, %lu deeper by rows, "
           "%lu shallower, %lu different\n",
           c, s, atomic_load(&rows_deeper), atomic_load(&rows_shallower), atomic_load(&differ));
    CHECK(c >= COMPARE_SIGNALS / 2);
    if (!STALE_CONTEXTS) {
        CHECK(atomic_load(&differ) == 0);
        CHECK(atomic_load(&rows_shallower) * 100 <= c);
    }
    vmp_jvmti__unwind_shutdown();
}

/* ---- The rows of this process's modules ---------------------------------- */

typedef struct rows_seen {
    unsigned modules, bad_modules;
    unsigned long long fdes, fdes_bad, rows, none, mismatches;
} rows_seen;

/* The row for `off` by a plain binary search over every row. */
static const vmp_cfi_row *find_plain(const vmp_cfi_table *t, uint64_t off)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->rows[mid].loc <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == 0 ? NULL : &t->rows[lo - 1];
}

static int each_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    rows_seen *seen = arg;
    const ElfW(Phdr) *ehf = NULL;
    int i;

    (void)size;
    for (i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
            ehf = &info->dlpi_phdr[i];
    if (ehf == NULL)
        return 0;
    for (i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        uint64_t hdr = info->dlpi_addr + ehf->p_vaddr, lo = info->dlpi_addr + p->p_vaddr;
        vmp_cfi_table t;
        size_t k;
        uint64_t off, end;

        if (p->p_type != PT_LOAD || hdr < lo || hdr >= lo + p->p_memsz)
            continue;
        seen->modules++;
        if (vmp_jvmti__cfi_build(hdr, info->dlpi_addr, lo, lo + p->p_memsz, &t) != 0) {
            seen->bad_modules++;
            break;
        }
        seen->fdes += t.fdes;
        seen->fdes_bad += t.fdes_bad;
        seen->rows += t.n;
        for (k = 0; k < t.n; k++) {
            seen->none += t.rows[k].kind == VMP_CFI_NONE;
            if (k > 0 && t.rows[k].loc <= t.rows[k - 1].loc)
                seen->mismatches++; /* not sorted */
        }
        /* the page index answers as the plain search, everywhere */
        end = t.n > 0 ? (uint64_t)t.rows[t.n - 1].loc + 8192 : 0;
        for (off = 0; off < end; off += off < (t.n ? t.rows[0].loc : 0) ? 4096 : 7)
            if (vmp_jvmti__cfi_find(&t, off) != find_plain(&t, off))
                seen->mismatches++;
        vmp_jvmti__cfi_free(&t);
        break;
    }
    return 0;
}

static void test_rows_of_modules(void)
{
    rows_seen seen;
    memset(&seen, 0, sizeof seen);
    dl_iterate_phdr(each_module, &seen);
    printf("rows of this process's %u modules with .eh_frame_hdr: %llu FDEs (%llu unreadable), "
           "%llu rows (%llu where libunwind walks on), %llu bytes\n",
           seen.modules, seen.fdes, seen.fdes_bad, seen.rows, seen.none,
           seen.rows * (unsigned long long)sizeof(vmp_cfi_row));
    CHECK(seen.modules >= 3); /* the test, libc, the loader at least */
    CHECK(seen.bad_modules == 0);
    CHECK(seen.fdes_bad == 0);
    CHECK(seen.rows > seen.fdes);
    CHECK(seen.mismatches == 0);
}

int main(void)
{
    VMP_TEST_RUN(test_rows_of_modules);
    VMP_TEST_RUN(test_signal_storm);
    VMP_TEST_RUN(test_rows_match_libunwind);
    VMP_TEST_EXIT();
}
