/* SPDX-License-Identifier: MIT
 *
 * stress_sample.c - the sample path under fire: four threads each take
 * SIGPROF from their own timer at a high rate and call vmp_writer_sample()
 * from the handler, while other threads add and free code and flush.
 * Every attempt is either written or counted as dropped, no sample is
 * corrupted, errno survives the handler, and nothing deadlocks (ctest
 * TIMEOUT).  (spec.md §5.11, §5.12; writer/README.md)
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vmp_test.h"
#include "vmp_test_decode.h"
#include "vmp_writer.h"

#define N_SAMPLERS  4
#define RUN_MS      1500
#define PC_MASK     0xABCDEFull
#define MAX_NESTING 4

static vmp_writer *writer;
static _Atomic uint64_t attempted, accepted, full_seen, bad_status, errno_clobbered;
static _Atomic int running = 1;
static _Thread_local uint64_t my_tid; /* initial-exec TLS of the test, not the library */
static _Thread_local uint64_t my_seq;
static _Thread_local int in_handler;
static _Atomic uint64_t nested, too_deep;

/* A checkable pattern: v0 names the thread and sequence number; frame i holds
 * v0 + i; the depth and the pc follow from v0. */
static uint32_t depth_of(uint64_t v0)
{
    return 1 + (uint32_t)((v0 >> 8) % 24);
}

static void on_prof(int sig)
{
    (void)sig;
    if (!my_tid)
        return;
    /* The timers run on the monotonic clock: on a loaded machine (or under
     * a sanitizer) a handler can take longer in wall time than the 50 us
     * period, and with SA_NODEFER each signal would then nest one level
     * deeper until the thread's stack overflows.  A few levels prove
     * re-entrancy; deeper signals return at once. */
    if (in_handler >= MAX_NESTING) {
        atomic_fetch_add(&too_deep, 1);
        return;
    }
    int saved = errno;
    if (in_handler++)
        atomic_fetch_add(&nested, 1);
    errno = 4321;
    uint64_t v0 = my_tid << 40 | (my_seq++ & 0xffffffffull) << 8;
    vmp_frame fr[24];
    uint32_t d = depth_of(v0);
    for (uint32_t i = 0; i < d; i++)
        fr[i] = (vmp_frame){.value = v0 + i, .kind = VMP_FRAME_PC};
    vmp_sample s = {.thread = my_tid,
                    .pc = v0 ^ PC_MASK,
                    .frames = fr,
                    .depth = d,
                    .generation = VMP_GENERATION_CURRENT};
    atomic_fetch_add(&attempted, 1);
    vmp_status st = (v0 >> 8) % 97 == 0 ? vmp_writer_failed_sample(writer, &s, 1)
                                        : vmp_writer_sample(writer, &s);
    if (st == VMP_OK)
        atomic_fetch_add(&accepted, 1);
    else if (st == VMP_ERR_FULL)
        atomic_fetch_add(&full_seen, 1);
    else
        atomic_fetch_add(&bad_status, 1);
    if (errno != 4321)
        atomic_fetch_add(&errno_clobbered, 1);
    in_handler--;
    errno = saved;
}

static void *sampler(void *arg)
{
    my_tid = (uint64_t)(uintptr_t)arg;
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
    sev._sigev_un._tid = gettid();
    timer_t timer;
    if (timer_create(CLOCK_MONOTONIC, &sev, &timer) != 0) {
        perror("timer_create");
        return NULL;
    }
    struct itimerspec its = {{0, 50 * 1000}, {0, 50 * 1000}}; /* 20 kHz per thread */
    timer_settime(timer, 0, &its, NULL);
    volatile uint64_t sink = 0;
    while (atomic_load(&running)) {
        void *p = malloc(64 + sink % 512); /* the VM allocates while sampled */
        sink += (uintptr_t)p >> 4;
        free(p);
    }
    timer_delete(timer);
    my_tid = 0;
    return NULL;
}

static void *code_thread(void *arg)
{
    (void)arg;
    uint64_t id = 1;
    while (atomic_load(&running)) {
        vmp_code_object c = {.id = id, .start = 0x100000 + id * 64, .size = 64, .name = "m"};
        if (vmp_writer_code_add(writer, &c) != VMP_OK)
            atomic_fetch_add(&bad_status, 1);
        if (id % 4 == 0 && vmp_writer_code_free(writer, id - 1, NULL) != VMP_OK)
            atomic_fetch_add(&bad_status, 1);
        id++;
        struct timespec ts = {0, 200 * 1000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void *flush_thread(void *arg)
{
    (void)arg;
    while (atomic_load(&running)) {
        if (vmp_writer_flush(writer) != VMP_OK)
            atomic_fetch_add(&bad_status, 1);
        struct timespec ts = {0, 7 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void verify(const char *path, uint64_t written)
{
    td_file f;
    int rc = td_load(&f, path);
    if (f.err[0])
        fprintf(stderr, "decode: %s\n", f.err);
    CHECK(rc == 0);
    /* node id -> record index, for walking stacks */
    size_t max_id = 0;
    for (size_t i = 0; i < f.n; i++)
        if (f.recs[i].type == VMP_REC_STACK_NODE && td_uint(&f.recs[i], VMP_NODE_ID, 0) > max_id)
            max_id = td_uint(&f.recs[i], VMP_NODE_ID, 0);
    size_t *node = calloc(max_id + 1, sizeof *node);
    uint64_t samples = 0, corrupt = 0, last_gen_change = 0, gen_violations = 0;
    for (size_t i = 0; i < f.n; i++) {
        const td_rec *r = &f.recs[i];
        if (r->type == VMP_REC_STACK_NODE) {
            uint64_t id = td_uint(r, VMP_NODE_ID, 0);
            if (node[id] != 0)
                corrupt++; /* defined twice */
            node[id] = i + 1;
            uint64_t parent = td_uint(r, VMP_NODE_PARENT, 0);
            if (parent && (parent > max_id || node[parent] == 0))
                corrupt++; /* parent not defined before */
            continue;
        }
        if (r->type == VMP_REC_CODE_FREE)
            last_gen_change = td_uint(r, VMP_FREE_GENERATION, 0);
        if (r->type != VMP_REC_SAMPLE && r->type != VMP_REC_FAILED_SAMPLE)
            continue;
        samples++;
        uint64_t pc = td_uint(r, VMP_SMP_PC, 0), v0 = pc ^ PC_MASK;
        if (td_uint(r, VMP_SMP_THREAD, 0) != v0 >> 40 || (v0 >> 40) < 1 || (v0 >> 40) > N_SAMPLERS)
            corrupt++;
        /* a sample carrying a generation comes after the change that made it */
        if (td_uint(r, VMP_SMP_GENERATION, 0) > last_gen_change)
            gen_violations++;
        if (r->type == VMP_REC_FAILED_SAMPLE) {
            if ((v0 >> 8) % 97 != 0 || td_uint(r, VMP_SMP_REASON, 0) != 1)
                corrupt++;
            continue;
        }
        uint64_t id = td_uint(r, VMP_SMP_STACK, 0);
        uint32_t d = 0;
        while (id != 0 && id <= max_id && node[id] != 0 && d < 64) {
            const td_rec *n = &f.recs[node[id] - 1];
            if (td_uint(n, VMP_NODE_PC, 0) != v0 + d)
                corrupt++;
            d++;
            id = td_uint(n, VMP_NODE_PARENT, 0);
        }
        if (id != 0 || d != depth_of(v0))
            corrupt++;
    }
    CHECK_EQ_U64(corrupt, 0);
    CHECK_EQ_U64(gen_violations, 0);
    CHECK_EQ_U64(samples, written);
    size_t end = td_find(&f, VMP_REC_END, 0);
    CHECK(end != SIZE_MAX);
    if (end != SIZE_MAX)
        CHECK_EQ_U64(td_uint(&f.recs[end], VMP_END_SAMPLES, 0), samples);
    free(node);
    td_free(&f);
}

int main(void)
{
    const char *path = "stress_sample.vmp";
    vmp_writer_options o = VMP_WRITER_OPTIONS_INIT;
    o.format_major = 1; /* SAMPLE records, which the test decoder reads one by one */
    o.ring_slots = 2048;
    o.chunk_bytes = 64 * 1024;
    o.max_depth = 32;
    if (vmp_writer_open(&writer, path, NULL, &o) != VMP_OK) {
        fprintf(stderr, "cannot open %s\n", path);
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_prof;
    /* SA_NODEFER: a signal may interrupt a sample on the same thread, which
     * must then simply claim another slot (re-entrancy). */
    sa.sa_flags = SA_RESTART | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPROF, &sa, NULL);

    pthread_t th[N_SAMPLERS + 2];
    for (uintptr_t i = 0; i < N_SAMPLERS; i++)
        pthread_create(&th[i], NULL, sampler, (void *)(i + 1));
    pthread_create(&th[N_SAMPLERS], NULL, code_thread, NULL);
    pthread_create(&th[N_SAMPLERS + 1], NULL, flush_thread, NULL);
    struct timespec ts = {RUN_MS / 1000, (RUN_MS % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    atomic_store(&running, 0);
    for (int i = 0; i < N_SAMPLERS + 2; i++)
        pthread_join(th[i], NULL);
    signal(SIGPROF, SIG_IGN);

    vmp_writer_totals t;
    CHECK(vmp_writer_close(writer, &t) == VMP_OK);
    fprintf(stderr, "attempted %llu, written %llu, dropped_full %llu, nested %llu, too deep %llu\n",
            (unsigned long long)attempted, (unsigned long long)t.samples_written,
            (unsigned long long)t.dropped_full, (unsigned long long)nested,
            (unsigned long long)too_deep);
    CHECK(attempted > 1000);
    CHECK_EQ_U64(t.samples_written + t.dropped_full, attempted);
    CHECK_EQ_U64(t.dropped_full, full_seen);
    CHECK_EQ_U64(t.samples_written, accepted);
    CHECK_EQ_U64(t.dropped_write, 0);
    CHECK_EQ_U64(bad_status, 0);
    CHECK_EQ_U64(errno_clobbered, 0);
    verify(path, t.samples_written);
    VMP_TEST_EXIT();
}
