/* SPDX-License-Identifier: MIT
 *
 * selfprof.c - a process that profiles itself with the vmp writer: SIGPROF
 * timer, frame-pointer stack walk in the signal handler, modules with their
 * symbols, named threads (produces files as described by spec.md).
 *
 * usage: vmp-example-selfprof OUT.vmp [seconds]
 *
 * Two worker threads burn CPU in four distinguishable functions
 * (work_hash, work_sort, work_matmul, work_strings) for `seconds` (default 2).
 * A process-wide ITIMER_PROF timer sends SIGPROF about every millisecond of
 * CPU time to whichever thread is running; the handler reads the
 * interrupted pc and frame pointer from the ucontext, walks the frame-pointer
 * chain and calls vmp_writer_sample().  Build with -fno-omit-frame-pointer.
 *
 * The walk never faults: each thread records its stack bounds
 * (pthread_getattr_np) before sampling starts, and the walk only follows a
 * frame pointer that is aligned, lies inside [stack pointer, stack top), and
 * is above the previous one, for at most MAX_DEPTH frames.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "vmp_writer.h"

#define MAX_DEPTH   128
#define N_WORKERS   2
#define INTERVAL_US 1000

enum {
    STATE_RUNNING = 0
};

enum {
    FAIL_NO_BOUNDS = 0,
    FAIL_NO_CONTEXT = 1
};

enum {
    EVENT_ROUND = 0
};

enum {
    COUNTER_ROUNDS = 0
};

/* Per-thread facts the signal handler needs; set before sampling starts. */
typedef struct thread_self {
    uintptr_t stack_lo, stack_hi; /* [lo, hi) from pthread_getattr_np */
    uint64_t tid;
    volatile sig_atomic_t ready;
} thread_self;

static _Thread_local thread_self self;
static _Atomic(vmp_writer *) the_writer;
static atomic_int stop_flag;
static atomic_ullong samples_failed_to_record;

/* ---- The sample path (runs in the SIGPROF handler) ------------------------ */

/* Walk the frame-pointer chain from `fp`: fills frames[1..) with return
 * addresses and returns the new depth.  Only reads words inside the current
 * thread's stack, so it cannot fault.  Not instrumented by ASan: a frame
 * pointer register reused by code built without frame pointers may point
 * anywhere in the stack, including a sanitizer's redzone. */
#if defined(__clang__) || defined(__GNUC__)
__attribute__((no_sanitize_address))
#endif
static uint32_t
walk_frames(vmp_frame *frames, uint32_t depth, uintptr_t fp, uintptr_t sp)
{
    uintptr_t lo = self.stack_lo > sp ? self.stack_lo : sp;
    uintptr_t hi = self.stack_hi;
    uintptr_t prev = 0;
    while (depth < MAX_DEPTH) {
        const uintptr_t *slot;
        uintptr_t next, ret;
        if (fp < lo || fp > hi - 2 * sizeof(uintptr_t) || fp % sizeof(uintptr_t) != 0 || fp <= prev)
            break;
        slot = (const uintptr_t *)fp;
        next = slot[0];
        ret = slot[1];
        if (ret == 0)
            break;
        frames[depth].value = ret;
        frames[depth].bcpc = VMP_BCPC_NONE;
        frames[depth].kind = VMP_FRAME_PC;
        depth++;
        prev = fp;
        fp = next;
    }
    return depth;
}

static void on_sigprof(int sig, siginfo_t *info, void *context)
{
    int saved_errno = errno;
    vmp_writer *w = atomic_load_explicit(&the_writer, memory_order_acquire);
    vmp_frame frames[MAX_DEPTH];
    vmp_sample s;
    uintptr_t pc = 0, fp = 0, sp = 0;
    int have_context = 0;
    const ucontext_t *uc = context;
    (void)sig;
    (void)info;
    if (!w) {
        errno = saved_errno;
        return;
    }
#if defined(__x86_64__)
    pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
    sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
    have_context = 1;
#elif defined(__aarch64__)
    pc = (uintptr_t)uc->uc_mcontext.pc;
    fp = (uintptr_t)uc->uc_mcontext.regs[29];
    sp = (uintptr_t)uc->uc_mcontext.sp;
    have_context = 1;
#else
    (void)uc;
#endif
    memset(&s, 0, sizeof s);
    s.thread = self.tid;
    s.pc = pc;
    s.generation = VMP_GENERATION_CURRENT;
    s.state = STATE_RUNNING;
    if (!have_context || !self.ready) {
        if (vmp_writer_failed_sample(w, &s, have_context ? FAIL_NO_BOUNDS : FAIL_NO_CONTEXT) !=
            VMP_OK)
            atomic_fetch_add_explicit(&samples_failed_to_record, 1, memory_order_relaxed);
        errno = saved_errno;
        return;
    }
    frames[0].value = pc;
    frames[0].bcpc = VMP_BCPC_NONE;
    frames[0].kind = VMP_FRAME_PC;
    s.frames = frames;
    s.depth = walk_frames(frames, 1, fp, sp);
    if (vmp_writer_sample(w, &s) != VMP_OK)
        atomic_fetch_add_explicit(&samples_failed_to_record, 1, memory_order_relaxed);
    errno = saved_errno;
}

/* ---- Workloads: distinct functions, so the profile tells them apart -------- */

static volatile uint64_t sink; /* keeps the optimizer from deleting the work */

__attribute__((noinline)) static uint64_t work_hash(uint64_t seed)
{
    uint64_t h = 1469598103934665603ULL ^ seed;
    unsigned i;
    for (i = 0; i < 400000; i++) {
        h ^= (uint8_t)(i * 31u + (unsigned)seed);
        h *= 1099511628211ULL;
    }
    return h;
}

static void sift_down(uint32_t *a, size_t start, size_t end)
{
    size_t root = start;
    while (2 * root + 1 < end) {
        size_t child = 2 * root + 1;
        uint32_t t;
        if (child + 1 < end && a[child] < a[child + 1])
            child++;
        if (a[root] >= a[child])
            return;
        t = a[root];
        a[root] = a[child];
        a[child] = t;
        root = child;
    }
}

__attribute__((noinline)) static uint64_t work_sort(uint64_t seed)
{
    enum {
        N = 20000
    };

    static _Thread_local uint32_t a[N];
    uint32_t x = (uint32_t)seed | 1u;
    size_t i;
    for (i = 0; i < N; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        a[i] = x;
    }
    for (i = N / 2; i-- > 0;)
        sift_down(a, i, N);
    for (i = N - 1; i > 0; i--) {
        uint32_t t = a[0];
        a[0] = a[i];
        a[i] = t;
        sift_down(a, 0, i);
    }
    return a[N / 2];
}

__attribute__((noinline)) static uint64_t work_matmul(uint64_t seed)
{
    enum {
        M = 72
    };

    static _Thread_local double a[M][M], b[M][M], c[M][M];
    size_t i, j, k;
    for (i = 0; i < M; i++) {
        for (j = 0; j < M; j++) {
            a[i][j] = (double)((i * 7 + j + seed) % 13);
            b[i][j] = (double)((i + j * 5 + seed) % 11);
        }
    }
    for (i = 0; i < M; i++) {
        for (j = 0; j < M; j++) {
            double sum = 0;
            for (k = 0; k < M; k++)
                sum += a[i][k] * b[k][j];
            c[i][j] = sum;
        }
    }
    return (uint64_t)c[seed % M][(seed / 3) % M];
}

__attribute__((noinline)) static uint64_t work_strings(uint64_t seed)
{
    enum {
        CAP = 1 << 16
    };

    static _Thread_local char buf[CAP];
    static const char *const words[] = {"alpha", "beta", "gamma", "delta", "epsilon"};
    size_t len = 0, rounds;
    uint64_t h = 0;
    for (rounds = 0; rounds < 8; rounds++) {
        size_t i = 0;
        len = 0;
        while (len + 32 < CAP) {
            const char *w = words[(i + seed) % 5];
            while (*w)
                buf[len++] = *w++;
            buf[len++] = (char)('0' + (i % 10));
            buf[len++] = ' ';
            i++;
        }
        buf[len] = '\0';
        h += (uint64_t)strlen(buf) + (uint8_t)buf[len / 2];
    }
    return h;
}

/* ---- Threads ---------------------------------------------------------------- */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Record this thread's id and stack bounds for the handler. */
static int thread_setup(vmp_writer *w, const char *name)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    self.tid = (uint64_t)gettid();
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return -1;
    if (pthread_attr_getstack(&attr, &addr, &size) != 0) {
        pthread_attr_destroy(&attr);
        return -1;
    }
    pthread_attr_destroy(&attr);
    self.stack_lo = (uintptr_t)addr;
    self.stack_hi = (uintptr_t)addr + size;
    atomic_signal_fence(memory_order_seq_cst);
    self.ready = 1;
    pthread_setname_np(pthread_self(), name);
    return vmp_writer_thread(w, self.tid, name, 0) == VMP_OK ? 0 : -1;
}

typedef struct worker_arg {
    vmp_writer *w;
    int index;
    uint64_t deadline_ns;
    uint64_t rounds;
} worker_arg;

static void *worker_main(void *p)
{
    worker_arg *arg = p;
    char name[16];
    uint64_t seed = (uint64_t)arg->index * 7919u, next_event;
    snprintf(name, sizeof name, "worker-%d", arg->index);
    if (thread_setup(arg->w, name) < 0)
        fprintf(stderr, "vmp-example-selfprof: %s: cannot record stack bounds\n", name);
    next_event = now_ns() + 250000000u;
    while (!atomic_load(&stop_flag) && now_ns() < arg->deadline_ns) {
        /* Each worker weighs the functions differently. */
        if (arg->index == 1) {
            sink += work_hash(seed);
            sink += work_hash(seed + 1);
            sink += work_matmul(seed);
            sink += work_strings(seed);
        } else {
            sink += work_sort(seed);
            sink += work_sort(seed + 1);
            sink += work_strings(seed);
            sink += work_matmul(seed);
        }
        seed++;
        arg->rounds++;
        if (now_ns() >= next_event) {
            vmp_writer_event(arg->w, EVENT_ROUND, 0, 0, self.tid, (int64_t)arg->rounds, name);
            vmp_writer_counter(arg->w, COUNTER_ROUNDS, (int64_t)arg->rounds);
            next_event += 250000000u;
        }
    }
    self.ready = 0;
    vmp_writer_thread(arg->w, self.tid, name, 1);
    return NULL;
}

int main(int argc, char **argv)
{
    static const char *const states[] = {"running"};
    static const char *const reasons[] = {"stack bounds unknown", "no machine context"};
    static const char *const event_kinds[] = {"round"};
    static const char *const counter_kinds[] = {"rounds"};
    static const char *const labels[] = {"example", "selfprof"};
    vmp_writer_meta meta;
    vmp_writer *w;
    vmp_writer_totals totals;
    vmp_status st;
    struct sigaction sa;
    struct itimerval it;
    pthread_t threads[N_WORKERS];
    worker_arg args[N_WORKERS];
    sigset_t block;
    double seconds = 2.0;
    char *end;
    int i, started = 0, rc = 0;
    uint64_t deadline;

    if (argc < 2 || argc > 3 || strcmp(argv[1], "--help") == 0) {
        fprintf(argc < 2 || argc > 3 ? stderr : stdout,
                "usage: vmp-example-selfprof OUT.vmp [seconds]\n"
                "Profile this process's own CPU work (2 threads, default 2 seconds)\n"
                "into OUT.vmp with the vmp writer, then print the totals.\n");
        return (argc == 2 && strcmp(argv[1], "--help") == 0) ? 0 : 2;
    }
    if (argc == 3) {
        errno = 0;
        seconds = strtod(argv[2], &end);
        if (errno || end == argv[2] || *end || seconds <= 0 || seconds > 3600) {
            fprintf(stderr, "vmp-example-selfprof: bad duration '%s'\n", argv[2]);
            return 2;
        }
    }

    memset(&meta, 0, sizeof meta);
    meta.vm_name = "vmp-example-selfprof";
    meta.vm_version = "1";
    meta.sample_interval_ns = INTERVAL_US * 1000u;
    meta.states = states;
    meta.n_states = 1;
    meta.failure_reasons = reasons;
    meta.n_failure_reasons = 2;
    meta.event_kinds = event_kinds;
    meta.n_event_kinds = 1;
    meta.counter_kinds = counter_kinds;
    meta.n_counter_kinds = 1;
    meta.labels = labels;
    meta.n_labels = 1;
    st = vmp_writer_open(&w, argv[1], &meta, NULL);
    if (st != VMP_OK) {
        fprintf(stderr, "vmp-example-selfprof: %s: %s\n", argv[1], vmp_status_str(st));
        return 1;
    }
    st = vmp_writer_add_loaded_modules(w);
    if (st != VMP_OK)
        fprintf(stderr, "vmp-example-selfprof: recording modules: %s\n", vmp_status_str(st));
    if (thread_setup(w, "main") < 0)
        fprintf(stderr, "vmp-example-selfprof: main: cannot record stack bounds\n");

    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigprof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPROF, &sa, NULL);
    atomic_store_explicit(&the_writer, w, memory_order_release);
    memset(&it, 0, sizeof it);
    it.it_interval.tv_usec = INTERVAL_US;
    it.it_value.tv_usec = INTERVAL_US;
    if (setitimer(ITIMER_PROF, &it, NULL) != 0) {
        perror("vmp-example-selfprof: setitimer");
        rc = 1;
    }

    deadline = now_ns() + (uint64_t)(seconds * 1e9);
    for (i = 0; i < N_WORKERS && rc == 0; i++) {
        args[i].w = w;
        args[i].index = i + 1;
        args[i].deadline_ns = deadline;
        args[i].rounds = 0;
        if (pthread_create(&threads[i], NULL, worker_main, &args[i]) != 0) {
            fprintf(stderr, "vmp-example-selfprof: cannot start a thread\n");
            atomic_store(&stop_flag, 1);
            rc = 1;
            break;
        }
        started++;
    }
    for (i = 0; i < started; i++)
        pthread_join(threads[i], NULL);

    /* Stop sampling before close: disarm the timer, then block SIGPROF in the
     * only thread left so that no handler can run during vmp_writer_close(). */
    memset(&it, 0, sizeof it);
    setitimer(ITIMER_PROF, &it, NULL);
    sigemptyset(&block);
    sigaddset(&block, SIGPROF);
    pthread_sigmask(SIG_BLOCK, &block, NULL);
    atomic_store_explicit(&the_writer, NULL, memory_order_release);
    self.ready = 0;
    vmp_writer_thread(w, self.tid, "main", 1);

    st = vmp_writer_close(w, &totals);
    if (st != VMP_OK) {
        fprintf(stderr, "vmp-example-selfprof: %s: %s\n", argv[1], vmp_status_str(st));
        rc = 1;
    }
    printf("%s: %" PRIu64 " samples (%" PRIu64 " failed), dropped %" PRIu64
           " (ring full) + %" PRIu64 " (write errors), %" PRIu64 " truncated stacks, %" PRIu64
           " chunks, %" PRIu64 " bytes\n",
           argv[1], totals.samples_written, totals.failed_written, totals.dropped_full,
           totals.dropped_write, totals.truncated_stacks, totals.chunks, totals.bytes);
    for (i = 0; i < started; i++)
        printf("  worker-%d: %" PRIu64 " rounds\n", args[i].index, args[i].rounds);
    return rc;
}
