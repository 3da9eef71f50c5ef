/* SPDX-License-Identifier: MIT
 *
 * bench_writer.c - speed and output size of the embedded writer: the sample
 * path (spec.md §5.12 SAMPLE, through the ring), the background drain
 * (§4 chunks, §5.11 STACK_NODE, §5.12) and its CPU cost at a profiling rate.
 *
 * usage:
 *   bench_writer sample [CALLS]
 *       ns per vmp_writer_sample() call, 1 and 4 threads, depths 8/32/128,
 *       next to a plain memcpy of the same bytes (and memcpy + clock read).
 *   bench_writer sustained zipf|zipf-nopc|distinct SAMPLES LEVEL OUT [FORMAT]
 *       8 threads push Java-like stacks (depth 20-60) as fast as the ring
 *       takes them; prints samples per second of writer CPU, file size and
 *       bytes per sample.
 *   bench_writer rate SECONDS HZ THREADS OUT [FORMAT]
 *       THREADS threads sample at HZ each in real time; prints the writer's
 *       CPU time as a share of one core.
 * FORMAT: 1.2 (the default: SAMPLE records), 2.0 (SAMPLE_BLOCKs, times in
 * ns) or 2.0us (times in us).
 * Every mode prints one markdown table row per measurement on stdout.  Not a
 * pass/fail test.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "vmp_writer.h"

/* ---- small helpers ------------------------------------------------------- */

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double quantile(double *v, size_t n, double q)
{
    size_t i;
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, cmp_double);
    i = (size_t)(q * (double)(n - 1) + 0.5);
    return v[i < n ? i : n - 1];
}

static void die(const char *what, vmp_status st)
{
    fprintf(stderr, "bench_writer: %s: %s\n", what, vmp_status_str(st));
    exit(1);
}

/* ---- sample path --------------------------------------------------------- */

#define BATCH          32    /* calls timed together */
#define SP_RING        16384 /* ring slots */
#define SP_ENTRY_BYTES 72u   /* a ring slot's sequence number + entry */

enum {
    SP_WRITER,
    SP_MEMCPY,
    SP_MEMCPY_CLOCK
};

typedef struct sp_shared {
    vmp_writer *w;
    int what;
    unsigned threads;
    uint32_t depth;
    uint64_t rounds, per_round; /* per thread */
    pthread_barrier_t bar;
    uint8_t *floor_buf; /* SP_RING slots of the ring's stride, for the floors */
    size_t stride;
    _Atomic uint64_t floor_pos;
} sp_shared;

typedef struct sp_thread {
    sp_shared *sh;
    unsigned index;
    double *batch_ns; /* ns per call of each batch */
    size_t n_batch;
    pthread_t tid;
} sp_thread;

/* The floor: what a sample costs at least, copying the same bytes into a
 * slot of a buffer as large as the ring (and reading the clock as the sample
 * path does). */
static void floor_copy(sp_shared *sh, const uint8_t *src, size_t bytes, int with_clock)
{
    uint64_t pos = atomic_fetch_add_explicit(&sh->floor_pos, 1, memory_order_relaxed);
    uint8_t *dst = sh->floor_buf + (size_t)(pos & (SP_RING - 1)) * sh->stride;
    if (with_clock) {
        uint64_t t = clock_ns(CLOCK_MONOTONIC);
        memcpy(dst, &t, sizeof t);
    }
    memcpy(dst + 8, src, bytes);
}

static void *sp_run(void *arg)
{
    sp_thread *t = arg;
    sp_shared *sh = t->sh;
    vmp_frame frames[128];
    uint8_t raw[SP_ENTRY_BYTES + sizeof frames];
    vmp_sample s;
    uint64_t r, b, i, seed = 0x1234567 + t->index;
    size_t bytes = SP_ENTRY_BYTES - 8 + (size_t)sh->depth * sizeof(vmp_frame);

    for (i = 0; i < 128; i++) {
        frames[i].kind = VMP_FRAME_FUNCTION;
        frames[i].value = 1 + xorshift(&seed) % 1000;
        frames[i].bcpc = (uint32_t)(xorshift(&seed) % 200);
    }
    memset(raw, 0x5a, sizeof raw);
    memcpy(raw + SP_ENTRY_BYTES, frames, sizeof frames);
    memset(&s, 0, sizeof s);
    s.thread = 1 + t->index;
    s.pc = 0x7f0000001000u;
    s.generation = VMP_GENERATION_CURRENT;
    s.frames = frames;
    s.depth = sh->depth;
    for (r = 0; r < sh->rounds; r++) {
        pthread_barrier_wait(&sh->bar);
        for (b = 0; b < sh->per_round / BATCH; b++) {
            uint64_t t0, t1;
            /* a different innermost frame per batch: a handful of stacks */
            frames[0].bcpc = (uint32_t)(b & 15);
            t0 = clock_ns(CLOCK_MONOTONIC);
            for (i = 0; i < BATCH; i++) {
                if (sh->what == SP_WRITER)
                    vmp_writer_sample(sh->w, &s);
                else
                    floor_copy(sh, raw, bytes, sh->what == SP_MEMCPY_CLOCK);
            }
            t1 = clock_ns(CLOCK_MONOTONIC);
            t->batch_ns[t->n_batch++] = (double)(t1 - t0) / BATCH;
        }
        pthread_barrier_wait(&sh->bar);
        /* the main thread drains the ring here, outside the timing */
        pthread_barrier_wait(&sh->bar);
    }
    return NULL;
}

/* Runs `calls` calls split over `threads`; appends the ns per call of every
 * batch to out[*n_out...]. */
static void sp_measure(int what, unsigned threads, uint32_t depth, uint64_t calls, double *out,
                       size_t *n_out, uint64_t *dropped)
{
    sp_shared sh;
    sp_thread th[4];
    vmp_writer_options o = VMP_WRITER_OPTIONS_INIT;
    vmp_writer_totals tot;
    vmp_status st;
    uint64_t r;
    unsigned i;

    memset(&sh, 0, sizeof sh);
    sh.what = what;
    sh.threads = threads;
    sh.depth = depth;
    /* each round fills half of the ring */
    sh.per_round = (SP_RING / 2 / threads) / BATCH * BATCH;
    sh.rounds = calls / (sh.per_round * threads);
    if (sh.rounds == 0)
        sh.rounds = 1;
    sh.stride = 8 + SP_ENTRY_BYTES + (size_t)depth * sizeof(vmp_frame);
    o.ring_slots = SP_RING;
    o.max_depth = depth;
    o.zstd_level = 1;
    if (what == SP_WRITER) {
        st = vmp_writer_open(&sh.w, "/dev/null", NULL, &o);
        if (st != VMP_OK)
            die("open /dev/null", st);
    } else {
        sh.floor_buf = malloc((size_t)SP_RING * sh.stride);
        if (!sh.floor_buf)
            die("floor buffer", VMP_ERR_NOMEM);
        memset(sh.floor_buf, 0, (size_t)SP_RING * sh.stride); /* fault the pages in now */
    }
    pthread_barrier_init(&sh.bar, NULL, threads + 1);
    for (i = 0; i < threads; i++) {
        th[i].sh = &sh;
        th[i].index = i;
        th[i].n_batch = 0;
        th[i].batch_ns = malloc(sizeof(double) * (sh.per_round / BATCH) * sh.rounds);
        if (!th[i].batch_ns)
            die("batch buffer", VMP_ERR_NOMEM);
        pthread_create(&th[i].tid, NULL, sp_run, &th[i]);
    }
    for (r = 0; r < sh.rounds; r++) {
        pthread_barrier_wait(&sh.bar);
        pthread_barrier_wait(&sh.bar);
        if (sh.w)
            vmp_writer_flush(sh.w);
        pthread_barrier_wait(&sh.bar);
    }
    for (i = 0; i < threads; i++) {
        pthread_join(th[i].tid, NULL);
        memcpy(out + *n_out, th[i].batch_ns, th[i].n_batch * sizeof(double));
        *n_out += th[i].n_batch;
        free(th[i].batch_ns);
    }
    if (sh.w) {
        vmp_writer_close(sh.w, &tot);
        *dropped += tot.dropped_full;
    }
    free(sh.floor_buf);
    pthread_barrier_destroy(&sh.bar);
}

#define SP_REPEAT 5 /* rounds alternating writer and floors */

static int bench_sample(uint64_t calls)
{
    static const uint32_t depths[] = {8, 32, 128};
    static const unsigned threads[] = {1, 4};
    size_t d, t, cap = (size_t)(calls / BATCH + SP_RING) * 2;
    double *v[3];
    int k;
    for (k = 0; k < 3; k++)
        if (!(v[k] = malloc(cap * sizeof(double))))
            die("result buffer", VMP_ERR_NOMEM);
    printf("| depth | threads | vmp_writer_sample median ns | p99 ns | memcpy floor median ns | "
           "memcpy + clock median ns | sample / memcpy | dropped |\n");
    printf("|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (d = 0; d < 3; d++)
        for (t = 0; t < 2; t++) {
            size_t n[3] = {0, 0, 0};
            uint64_t dr = 0, x = 0;
            double m, fm, cm;
            int r;
            /* ABCABC...: the machine's load drifts; every kind sees the same */
            for (r = 0; r < SP_REPEAT; r++) {
                sp_measure(SP_MEMCPY, threads[t], depths[d], calls / SP_REPEAT, v[1], &n[1], &x);
                sp_measure(SP_WRITER, threads[t], depths[d], calls / SP_REPEAT, v[0], &n[0], &dr);
                sp_measure(SP_MEMCPY_CLOCK, threads[t], depths[d], calls / SP_REPEAT, v[2], &n[2],
                           &x);
            }
            m = quantile(v[0], n[0], 0.5);
            fm = quantile(v[1], n[1], 0.5);
            cm = quantile(v[2], n[2], 0.5);
            printf("| %u | %u | %.1f | %.1f | %.1f | %.1f | %.2fx | %" PRIu64 " |\n", depths[d],
                   threads[t], m, quantile(v[0], n[0], 0.99), fm, cm, fm > 0 ? m / fm : 0.0, dr);
            fflush(stdout);
        }
    for (k = 0; k < 3; k++)
        free(v[k]);
    return 0;
}

/* ---- realistic streams ------------------------------------------------- */

#define N_FUNCS  3000
#define N_STACKS 4000
#define SEQ_LEN  (1u << 20)
#define MAX_D    60

typedef struct stack_def {
    uint32_t depth;
    vmp_frame f[MAX_D]; /* innermost first */
} stack_def;

static stack_def *g_stacks;
static uint32_t *g_seq; /* Zipf-distributed stack indexes */

/* Java-like stacks: depth 20-60, most share an outer part with an earlier
 * stack (a call tree), the rest start afresh. */
static void make_stacks(void)
{
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    double *cdf, sum = 0;
    uint32_t k, i;
    vmp_frame outer[MAX_D];
    g_stacks = calloc(N_STACKS, sizeof *g_stacks);
    g_seq = malloc(sizeof *g_seq * SEQ_LEN);
    cdf = malloc(sizeof *cdf * N_STACKS);
    if (!g_stacks || !g_seq || !cdf)
        die("stacks", VMP_ERR_NOMEM);
    for (k = 0; k < N_STACKS; k++) {
        uint32_t d = 20 + (uint32_t)(xorshift(&seed) % 41), shared = 0;
        if (k > 0 && xorshift(&seed) % 8 != 0) {
            const stack_def *p = &g_stacks[xorshift(&seed) % k];
            uint32_t lim = p->depth < d ? p->depth : d;
            shared = lim / 2 + (uint32_t)(xorshift(&seed) % (lim / 2));
            for (i = 0; i < shared; i++) /* outermost first */
                outer[i] = p->f[p->depth - 1 - i];
        }
        for (i = shared; i < d; i++) {
            outer[i].kind = VMP_FRAME_FUNCTION;
            outer[i].value = 1 + xorshift(&seed) % N_FUNCS;
            outer[i].bcpc = (uint32_t)(xorshift(&seed) % 300);
        }
        g_stacks[k].depth = d;
        for (i = 0; i < d; i++)
            g_stacks[k].f[i] = outer[d - 1 - i];
    }
    /* Zipf, exponent 1 */
    for (k = 0; k < N_STACKS; k++) {
        sum += 1.0 / (double)(k + 1);
        cdf[k] = sum;
    }
    for (i = 0; i < SEQ_LEN; i++) {
        double u = (double)(xorshift(&seed) >> 11) / 9007199254740992.0 * sum;
        uint32_t lo = 0, hi = N_STACKS - 1;
        while (lo < hi) {
            uint32_t mid = (lo + hi) / 2;
            if (cdf[mid] < u)
                lo = mid + 1;
            else
                hi = mid;
        }
        g_seq[i] = lo;
    }
    free(cdf);
}

/* The writer options of FORMAT (see the usage above); 0, or -1 when unknown. */
static int set_format(vmp_writer_options *o, const char *format)
{
    o->format_major = strncmp(format, "2.0", 3) == 0 ? 2 : 1;
    o->sample_time_unit_ns = strcmp(format, "2.0us") == 0 ? 1000 : 1;
    return strcmp(format, "1.2") == 0 || strcmp(format, "2.0") == 0 || strcmp(format, "2.0us") == 0
               ? 0
               : -1;
}

static vmp_writer *open_stream_writer(const char *out, int level, uint64_t interval_ns,
                                      const char *format)
{
    static const char *const states[] = {"java", "native/vm", "gc", "unknown"};
    static const char *const kinds[] = {"nmethod", "interpreter"};
    vmp_writer_meta meta;
    vmp_writer_options o = VMP_WRITER_OPTIONS_INIT;
    vmp_writer *w = NULL;
    vmp_status st;
    char name[64], scope[64];
    uint64_t i;
    memset(&meta, 0, sizeof meta);
    meta.vm_name = "bench";
    meta.states = states;
    meta.n_states = 4;
    meta.code_kinds = kinds;
    meta.n_code_kinds = 2;
    meta.sample_interval_ns = interval_ns;
    o.zstd_level = level;
    o.ring_slots = 65536;
    o.max_depth = MAX_D;
    if (set_format(&o, format) < 0) {
        fprintf(stderr, "bench_writer: unknown format '%s' (1.2, 2.0, 2.0us)\n", format);
        exit(2);
    }
    st = vmp_writer_open(&w, out, &meta, &o);
    if (st != VMP_OK)
        die(out, st);
    for (i = 1; i <= N_FUNCS; i++) {
        vmp_function fn;
        memset(&fn, 0, sizeof fn);
        snprintf(name, sizeof name, "method%" PRIu64, i % 97);
        snprintf(scope, sizeof scope, "com.example.pkg%" PRIu64 ".Class%" PRIu64, i % 13, i / 7);
        fn.id = i;
        fn.name = name;
        fn.scope = scope;
        fn.signature = "(Ljava/lang/Object;I)V";
        fn.file = "Example.java";
        fn.first_line = (uint32_t)(10 + i % 500);
        fn.bytecode_size = 300;
        st = vmp_writer_function(w, &fn);
        if (st != VMP_OK)
            die("function", st);
    }
    for (i = 1; i <= 8; i++) {
        snprintf(name, sizeof name, "worker-%" PRIu64, i);
        vmp_writer_thread(w, i, name, 0);
    }
    return w;
}

typedef struct st_thread {
    vmp_writer *w;
    unsigned index;
    int distinct;
    int no_pc;                /* leave the interrupted pc out (0 == unknown) */
    uint64_t n;               /* samples to take */
    uint64_t hz;              /* 0 == as fast as possible */
    uint64_t until_ns;        /* rate mode: stop at this CLOCK_MONOTONIC time */
    uint64_t cpu_ns;          /* the thread's own CPU time */
    _Atomic uint64_t cpu_now; /* rate mode: the thread's CPU time so far */
    uint64_t taken;           /* samples accepted */
    uint64_t retries;         /* ring full, retried */
    pthread_t tid;
} st_thread;

static void *st_run(void *arg)
{
    st_thread *t = arg;
    uint64_t seed = 0xabcdef12345ull * (t->index + 1), i, c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    uint32_t j = (uint32_t)(t->index * (SEQ_LEN / 8));
    vmp_frame f[MAX_D];
    vmp_sample s;
    struct timespec next;
    memset(&s, 0, sizeof s);
    s.thread = 1 + t->index;
    s.generation = VMP_GENERATION_CURRENT;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (i = 0; t->hz ? clock_ns(CLOCK_MONOTONIC) < t->until_ns : i < t->n; i++) {
        const stack_def *sd = &g_stacks[g_seq[j++ & (SEQ_LEN - 1)]];
        vmp_status st;
        s.depth = sd->depth;
        s.frames = sd->f;
        /* a JIT pc belongs to the leaf frame: a few pcs per (method, bci) */
        s.pc =
            0x7f0000000000u + sd->f[0].value * 4096 + sd->f[0].bcpc * 8 + (xorshift(&seed) & 3) * 2;
        s.state = (uint32_t)(xorshift(&seed) % 16 == 0);
        if (t->distinct) {
            /* the innermost 10 frames drawn afresh: every sample is a new
             * stack, with about 10 new nodes */
            uint32_t k;
            memcpy(f, sd->f, sd->depth * sizeof f[0]);
            for (k = 0; k < 10; k++) {
                f[k].value = 1 + xorshift(&seed) % N_FUNCS;
                f[k].bcpc = (uint32_t)(xorshift(&seed) % 65536);
            }
            s.pc = 0x7f0000000000u + f[0].value * 4096 + (f[0].bcpc & 511) * 8;
            s.frames = f;
        }
        while ((st = vmp_writer_sample(t->w, &s)) == VMP_ERR_FULL) {
            t->retries++;
            sched_yield();
        }
        if (st == VMP_OK)
            t->taken++;
        if (t->hz) {
            atomic_store_explicit(&t->cpu_now, clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0,
                                  memory_order_relaxed);
            next.tv_nsec += (long)(1000000000u / t->hz);
            while (next.tv_nsec >= 1000000000) {
                next.tv_nsec -= 1000000000;
                next.tv_sec++;
            }
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
                ;
        }
    }
    t->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
    return NULL;
}

/* Runs the producers; returns the writer's CPU time (process CPU minus the
 * producers' own), in ns, and fills wall time and totals. */
static uint64_t st_drive(vmp_writer *w, st_thread *th, unsigned n, uint64_t *wall_ns,
                         vmp_writer_totals *tot, uint64_t *steady_cpu_ns, uint64_t *steady_wall_ns)
{
    uint64_t p0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID), w0 = clock_ns(CLOCK_MONOTONIC), prod = 0;
    uint64_t p1;
    unsigned i;
    vmp_status st;
    for (i = 0; i < n; i++)
        pthread_create(&th[i].tid, NULL, st_run, &th[i]);
    if (steady_cpu_ns && th[0].hz) {
        /* steady state: from a third of the run to its end, before close */
        uint64_t span = th[0].until_ns - w0, a, b, pa = 0, pb = 0;
        struct timespec ts;
        ts.tv_sec = (time_t)(w0 + span / 3) / 1000000000;
        ts.tv_nsec = (long)((w0 + span / 3) % 1000000000);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
        a = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
        *steady_wall_ns = clock_ns(CLOCK_MONOTONIC);
        for (i = 0; i < n; i++)
            pa += atomic_load(&th[i].cpu_now);
        ts.tv_sec = (time_t)((th[0].until_ns - 50000000) / 1000000000);
        ts.tv_nsec = (long)((th[0].until_ns - 50000000) % 1000000000);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
        b = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
        *steady_wall_ns = clock_ns(CLOCK_MONOTONIC) - *steady_wall_ns;
        for (i = 0; i < n; i++)
            pb += atomic_load(&th[i].cpu_now);
        *steady_cpu_ns = b - a > pb - pa ? (b - a) - (pb - pa) : 0;
    }
    for (i = 0; i < n; i++) {
        pthread_join(th[i].tid, NULL);
        prod += th[i].cpu_ns;
    }
    st = vmp_writer_close(w, tot);
    if (st != VMP_OK)
        die("close", st);
    p1 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    *wall_ns = clock_ns(CLOCK_MONOTONIC) - w0;
    return p1 - p0 > prod ? p1 - p0 - prod : 0;
}

static uint64_t file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

static int bench_sustained(const char *mode, uint64_t n, int level, const char *out,
                           const char *format)
{
    st_thread th[8];
    vmp_writer_totals tot;
    uint64_t wall, cpu, bytes;
    unsigned i;
    vmp_writer *w;
    make_stacks();
    w = open_stream_writer(out, level, 0, format);
    for (i = 0; i < 8; i++) {
        memset(&th[i], 0, sizeof th[i]);
        th[i].w = w;
        th[i].index = i;
        th[i].distinct = strcmp(mode, "distinct") == 0;
        th[i].no_pc = strcmp(mode, "zipf-nopc") == 0;
        th[i].n = n / 8;
    }
    cpu = st_drive(w, th, 8, &wall, &tot, NULL, NULL);
    bytes = file_size(out);
    /* | stream | level | samples | writer CPU s | M samples / writer CPU s | wall M/s |
     *   bytes | bytes/sample | dropped | */
    printf(
        "| %s%s%s | %d | %" PRIu64 " | %.3f | %.2f | %.2f | %" PRIu64 " | %.2f | %" PRIu64 " |\n",
        mode, strcmp(format, "1.2") ? " " : "", strcmp(format, "1.2") ? format : "", level,
        tot.samples_written, (double)cpu / 1e9,
        cpu ? (double)tot.samples_written / ((double)cpu / 1e9) / 1e6 : 0.0,
        (double)tot.samples_written / ((double)wall / 1e9) / 1e6, bytes,
        tot.samples_written ? (double)bytes / (double)tot.samples_written : 0.0, tot.dropped_full);
    return 0;
}

static int bench_rate(double seconds, uint64_t hz, unsigned threads, const char *out,
                      const char *format)
{
    st_thread th[64];
    vmp_writer_totals tot;
    uint64_t wall, cpu, until, scpu = 0, swall = 1;
    unsigned i;
    vmp_writer *w;
    if (threads < 1 || threads > 64 || hz < 1)
        return 2;
    make_stacks();
    w = open_stream_writer(out, 1, 1000000000u / hz, format);
    until = clock_ns(CLOCK_MONOTONIC) + (uint64_t)(seconds * 1e9);
    for (i = 0; i < threads; i++) {
        memset(&th[i], 0, sizeof th[i]);
        th[i].w = w;
        th[i].index = i;
        th[i].hz = hz;
        th[i].until_ns = until;
    }
    cpu = st_drive(w, th, threads, &wall, &tot, &scpu, &swall);
    /* | rate | seconds | samples | writer CPU ms | % of one core | steady % | bytes/sample | */
    printf("| %" PRIu64 " Hz x %u threads%s%s | %.1f | %" PRIu64
           " | %.1f | %.3f%% | %.3f%% | %.2f |\n",
           hz, threads, strcmp(format, "1.2") ? ", " : "", strcmp(format, "1.2") ? format : "",
           (double)wall / 1e9, tot.samples_written, (double)cpu / 1e6,
           100.0 * (double)cpu / (double)wall, 100.0 * (double)scpu / (double)swall,
           tot.samples_written ? (double)file_size(out) / (double)tot.samples_written : 0.0);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "sample") == 0)
        return bench_sample(argc > 2 ? strtoull(argv[2], NULL, 10) : 4000000);
    if ((argc == 6 || argc == 7) && strcmp(argv[1], "sustained") == 0)
        return bench_sustained(argv[2], strtoull(argv[3], NULL, 10), atoi(argv[4]), argv[5],
                               argc == 7 ? argv[6] : "1.2");
    if ((argc == 6 || argc == 7) && strcmp(argv[1], "rate") == 0)
        return bench_rate(strtod(argv[2], NULL), strtoull(argv[3], NULL, 10),
                          (unsigned)atoi(argv[4]), argv[5], argc == 7 ? argv[6] : "1.2");
    fprintf(stderr, "usage: bench_writer sample [CALLS]\n"
                    "       bench_writer sustained zipf|zipf-nopc|distinct SAMPLES ZSTD_LEVEL OUT"
                    " [FORMAT]\n"
                    "       bench_writer rate SECONDS HZ THREADS OUT [FORMAT]\n"
                    "FORMAT: 1.2 (default), 2.0, 2.0us\n");
    return 2;
}
