/* SPDX-License-Identifier: MIT
 *
 * test_jvmti_units.c - unit tests of the HotSpot agent's pure parts: option
 * parsing, the function set, the live code map (R-GEN-4) and the conversion
 * of HotSpot debug information to pc_map and inline records (spec.md §5.7).
 */
#include <jvmti.h>
#include <jvmticmlr.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "vmp_agent_clock.h"
#include "vmp_agent_file.h"
#include "vmp_agent_interval.h"
#include "vmp_jvmti_attach.h"
#include "vmp_jvmti_cmlr.h"
#include "vmp_jvmti_kinds.h"
#include "vmp_jvmti_maps.h"
#include "vmp_jvmti_opts.h"
#include "vmp_jvmti_threads.h"
#include "vmp_test.h"

#define PARSE(text) vmp_agent__parse_interval(&ns, text, strlen(text))

static void test_options_defaults(void)
{
    vmp_jvmti_options o;
    char warn[256];

    CHECK(vmp_jvmti__parse_options(&o, NULL, 42, warn, sizeof warn) == 0);
    CHECK_STR(o.file, "vmp-42.vmp");
    CHECK_EQ_U64(o.interval_ns, 1000000);
    CHECK(o.mode == VMP_JVMTI_MODE_CPU);
    CHECK_EQ_U64(o.depth, 128);
    CHECK(vmp_jvmti__parse_options(&o, "", 42, warn, sizeof warn) == 0);
    CHECK_STR(o.file, "vmp-42.vmp");
}

static void test_options_all_keys(void)
{
    vmp_jvmti_options o;
    char warn[256];

    CHECK(vmp_jvmti__parse_options(&o, "file=out-%p.vmp,interval=100us,mode=wall,depth=64", 7, warn,
                                   sizeof warn) == 0);
    CHECK_STR(o.file, "out-7.vmp");
    CHECK_EQ_U64(o.interval_ns, 100000);
    CHECK(o.mode == VMP_JVMTI_MODE_WALL);
    CHECK_EQ_U64(o.depth, 64);
    CHECK_STR(warn, "");
    /* format=2.0, the default: samples in SAMPLE_BLOCKs; their times in us
     * from a 10us interval on, unless times= says (spec.md §5.14, §5.1 key
     * 19); format=1.2 for older readers */
    CHECK(vmp_jvmti__parse_options(&o, "", 7, warn, sizeof warn) == 0 && o.format_major == 2 &&
          vmp_jvmti__time_unit(&o) == 1000);
    CHECK(vmp_jvmti__parse_options(&o, "format=2.0", 7, warn, sizeof warn) == 0 &&
          o.format_major == 2 && vmp_jvmti__time_unit(&o) == 1000);
    CHECK(vmp_jvmti__parse_options(&o, "format=2.0,interval=5us", 7, warn, sizeof warn) == 0 &&
          vmp_jvmti__time_unit(&o) == 1);
    CHECK(vmp_jvmti__parse_options(&o, "format=2.0,times=ns", 7, warn, sizeof warn) == 0 &&
          vmp_jvmti__time_unit(&o) == 1);
    CHECK(vmp_jvmti__parse_options(&o, "format=1.2,times=us", 7, warn, sizeof warn) == 0 &&
          o.format_major == 1 && vmp_jvmti__time_unit(&o) == 1000);
    CHECK(vmp_jvmti__parse_options(&o, "format=3,times=ps", 7, warn, sizeof warn) == 2 &&
          o.format_major == 2 && strstr(warn, "format '3'") != NULL &&
          strstr(warn, "times 'ps'") != NULL);
}

/* label=KEY:VALUE, %XX-decoded (what `vmp record --label` writes), a later
 * one of a key replacing the earlier; the user's labels replace the agent's
 * own of the same key in the header. */
static void test_options_labels(void)
{
    vmp_jvmti_options o;
    char warn[512];
    const char *own[] = {"mode", "cpu", "bench", "agent's"};
    const char *out[2 * (2 + VMP_JVMTI_MAX_LABELS)];

    CHECK(vmp_jvmti__parse_options(&o,
                                   "label=bench:sieve,label=commit:a%2Cb%20c%3A%25,label=bench:fib,"
                                   "label=nocolon,label=:v,label=k:%zz",
                                   9, warn, sizeof warn) == 3);
    CHECK_EQ_U64(o.n_labels, 2);
    CHECK_STR(o.label_keys[0], "bench");
    CHECK_STR(o.label_values[0], "fib");
    CHECK_STR(o.label_keys[1], "commit");
    CHECK_STR(o.label_values[1], "a,b c:%");
    CHECK(strstr(warn, "label 'nocolon'") != NULL && strstr(warn, "label 'k:%zz'") != NULL);
    CHECK_EQ_U64(vmp_jvmti__header_labels(&o, own, 2, out), 3);
    CHECK_STR(out[0], "mode");
    CHECK_STR(out[1], "cpu");
    CHECK_STR(out[2], "bench");
    CHECK_STR(out[3], "fib");
    CHECK_STR(out[4], "commit");
    CHECK_STR(out[5], "a,b c:%");
}

static void test_options_units(void)
{
    uint64_t ns = 0;

    CHECK(PARSE("250") == 0 && ns == 250);
    CHECK(PARSE("250ns") == 0 && ns == 250);
    CHECK(PARSE("3us") == 0 && ns == 3000);
    CHECK(PARSE("2ms") == 0 && ns == 2000000);
    CHECK(PARSE("1s") == 0 && ns == 1000000000);
    /* a length, not a NUL: the option parsers hand over a slice */
    CHECK(vmp_agent__parse_interval(&ns, "2ms,file=x", 3) == 0 && ns == 2000000);
    CHECK(vmp_agent__parse_interval(&ns, "2ms", 0) != 0);
    CHECK(PARSE("1m") != 0);
    CHECK(PARSE("ms") != 0);
    CHECK(PARSE("-1ms") != 0);
    CHECK(PARSE("99999999999999999999") != 0);
    CHECK(PARSE("18446744073709551615s") != 0);
}

static void test_options_bad_values_keep_defaults(void)
{
    vmp_jvmti_options o;
    char warn[512];

    CHECK(vmp_jvmti__parse_options(&o, "interval=5x,mode=fast,depth=0,bogus=1,novalue,,file=", 9,
                                   warn, sizeof warn) == 6);
    CHECK_EQ_U64(o.interval_ns, 1000000);
    CHECK(o.mode == VMP_JVMTI_MODE_CPU);
    CHECK_EQ_U64(o.depth, 128);
    CHECK_STR(o.file, "vmp-9.vmp");
    CHECK(strstr(warn, "interval '5x'") != NULL);
    CHECK(strstr(warn, "unknown option 'bogus'") != NULL);
    /* sampler: auto (default), perf or posix */
    CHECK(vmp_jvmti__parse_options(&o, "interval=1ms", 9, warn, sizeof warn) == 0);
    CHECK(o.sampler == VMP_AGENT_SAMPLER_AUTO);
    CHECK(vmp_jvmti__parse_options(&o, "sampler=posix", 9, warn, sizeof warn) == 0);
    CHECK(o.sampler == VMP_AGENT_SAMPLER_POSIX);
    CHECK(vmp_jvmti__parse_options(&o, "sampler=perf", 9, warn, sizeof warn) == 0);
    CHECK(o.sampler == VMP_AGENT_SAMPLER_PERF);
    CHECK(vmp_jvmti__parse_options(&o, "sampler=fast", 9, warn, sizeof warn) == 1);
    CHECK(o.sampler == VMP_AGENT_SAMPLER_AUTO && strstr(warn, "sampler 'fast'") != NULL);
    CHECK(vmp_jvmti__parse_options(&o, "interval=10ns,depth=99999", 9, warn, sizeof warn) == 2);
    CHECK(vmp_jvmti__parse_options(&o, "interval=11s", 9, NULL, 0) == 1);
    CHECK(vmp_jvmti__parse_options(&o, "depth=12abc", 9, NULL, 0) == 1);
    /* filemode: octal permission bits, at most 777; 0 (the writer's 0600) by default */
    CHECK(vmp_jvmti__parse_options(&o, "", 9, NULL, 0) == 0 && o.file_mode == 0);
    CHECK(vmp_jvmti__parse_options(&o, "filemode=640", 9, NULL, 0) == 0 && o.file_mode == 0640);
    CHECK(vmp_jvmti__parse_options(&o, "filemode=0644", 9, NULL, 0) == 0 && o.file_mode == 0644);
    CHECK(vmp_jvmti__parse_options(&o, "filemode=4755", 9, warn, sizeof warn) == 1);
    CHECK(o.file_mode == 0 && strstr(warn, "filemode '4755'") != NULL);
    CHECK(vmp_jvmti__parse_options(&o, "filemode=rw,filemode=", 9, NULL, 0) == 2);
    /* flush: 10ms to 60s; 0 (the writer's 1 s) by default */
    CHECK(vmp_jvmti__parse_options(&o, "flush=200ms", 9, NULL, 0) == 0 &&
          o.flush_ns == 200000000u && vmp_agent__flush_ms(o.flush_ns) == 200);
    CHECK(vmp_jvmti__parse_options(&o, "flush=5ms", 9, warn, sizeof warn) == 1 && o.flush_ns == 0 &&
          strstr(warn, "flush '5ms'") != NULL && vmp_agent__flush_ms(o.flush_ns) == 1000);
    /* loop and keep; the names of a loop's files */
    CHECK(vmp_jvmti__parse_options(&o, "", 9, NULL, 0) == 0 && o.loop_ns == 0 && o.keep == 0);
    CHECK(vmp_jvmti__parse_options(&o, "loop=60s,keep=3", 9, NULL, 0) == 0);
    CHECK_EQ_U64(o.loop_ns, 60000000000u);
    CHECK_EQ_U64(o.keep, 3);
    CHECK(vmp_jvmti__parse_options(&o, "loop=10ms,keep=0", 9, warn, sizeof warn) == 2);
    CHECK(o.loop_ns == 0 && o.keep == 0 && strstr(warn, "loop '10ms'") != NULL);
    {
        char name[32];
        CHECK(vmp_jvmti_loop_path(name, sizeof name, "app.vmp", 7) == 0);
        CHECK(strcmp(name, "app-000007.vmp") == 0);
        CHECK(vmp_jvmti_loop_path(name, sizeof name, "/d/app", 1234567) == 0);
        CHECK(strcmp(name, "/d/app-1234567") == 0);
        CHECK(vmp_jvmti_loop_path(name, 8, "app.vmp", 1) == -1);
    }
    /* threads: all (default) or java */
    CHECK(vmp_jvmti__parse_options(&o, "", 9, NULL, 0) == 0 && o.threads == VMP_JVMTI_THREADS_ALL);
    CHECK(vmp_jvmti__parse_options(&o, "threads=java", 9, NULL, 0) == 0 &&
          o.threads == VMP_JVMTI_THREADS_JAVA);
    CHECK(vmp_jvmti__parse_options(&o, "threads=some", 9, warn, sizeof warn) == 1);
    CHECK(o.threads == VMP_JVMTI_THREADS_ALL && strstr(warn, "threads 'some'") != NULL);
    /* wall mode: Java threads unless told otherwise */
    CHECK(vmp_jvmti__parse_options(&o, "mode=wall", 9, NULL, 0) == 0 &&
          o.threads == VMP_JVMTI_THREADS_JAVA);
    CHECK(vmp_jvmti__parse_options(&o, "mode=wall,threads=all", 9, NULL, 0) == 0 &&
          o.threads == VMP_JVMTI_THREADS_ALL);
}

/* HotSpot's thread names (JDK 17, 21, 25), as the kernel cuts them. */
/* alloc=: a size with k, m or g; bad ones leave allocation sampling off */
static void test_options_alloc(void)
{
    vmp_jvmti_options o;
    char warn[512];
    CHECK_EQ_U64(vmp_jvmti__parse_options(&o, "alloc=512k", 7, warn, sizeof warn), 0);
    CHECK_EQ_U64(o.alloc_bytes, 512 * 1024);
    CHECK_EQ_U64(vmp_jvmti__parse_options(&o, "alloc=4096", 7, warn, sizeof warn), 0);
    CHECK_EQ_U64(o.alloc_bytes, 4096);
    CHECK_EQ_U64(vmp_jvmti__parse_options(&o, "alloc=1g", 7, warn, sizeof warn), 0);
    CHECK_EQ_U64(o.alloc_bytes, 1u << 30);
    CHECK_EQ_U64(vmp_jvmti__parse_options(&o, "", 7, warn, sizeof warn), 0);
    CHECK_EQ_U64(o.alloc_bytes, 0);
    CHECK_EQ_U64(vmp_jvmti__parse_options(&o, "lock=10us", 7, warn, sizeof warn), 0);
    CHECK_EQ_U64(o.lock_ns, 10000);
    CHECK_EQ_U64(vmp_jvmti__parse_options(&o, "lock=0", 7, warn, sizeof warn), 1);
    CHECK_EQ_U64(o.lock_ns, 0);
    const char *bad[] = {"alloc=0", "alloc=2g", "alloc=12x", "alloc=k", "alloc=-1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_EQ_U64(vmp_jvmti__parse_options(&o, bad[i], 7, warn, sizeof warn), 1);
        CHECK_EQ_U64(o.alloc_bytes, 0);
        CHECK(strstr(warn, "alloc") != NULL);
    }
}

/* spec R-KND-4: class frames named as Java writes types; the unbiased
 * weight of a sampled allocation */
static void test_kinds_helpers(void)
{
    char buf[64];
    CHECK_EQ_U64(vmp_jvmti__type_name(buf, sizeof buf, "Ljava/lang/String;"), 16);
    CHECK_STR(buf, "java.lang.String");
    CHECK(vmp_jvmti__type_name(buf, sizeof buf, "[B") == 6 && strcmp(buf, "byte[]") == 0);
    CHECK(vmp_jvmti__type_name(buf, sizeof buf, "[[Ljava/lang/Object;") > 0);
    CHECK_STR(buf, "java.lang.Object[][]");
    CHECK_EQ_U64(vmp_jvmti__type_name(buf, sizeof buf, "I"), 0); /* not an object */
    CHECK_EQ_U64(vmp_jvmti__type_name(buf, sizeof buf, "Lx"), 0);
    CHECK_EQ_U64(vmp_jvmti__type_name(buf, sizeof buf, "[Q"), 0);
    CHECK_EQ_U64(vmp_jvmti__type_name(buf, 8, "Ljava/lang/String;"), 0); /* does not fit */
    CHECK(vmp_jvmti__class_id("byte[]") == vmp_jvmti__class_id("byte[]"));
    CHECK(vmp_jvmti__class_id("byte[]") != vmp_jvmti__class_id("char[]"));
    CHECK(vmp_jvmti__class_id("x") & VMP_JVMTI_CLASS_ID_BIT);
    /* small objects stand for about the interval, large ones for themselves */
    CHECK_EQ_U64(vmp_jvmti__alloc_weight(0, 1000), 1000);
    CHECK(vmp_jvmti__alloc_weight(16, 524288) >= 524288 &&
          vmp_jvmti__alloc_weight(16, 524288) < 524300);
    CHECK_EQ_U64(vmp_jvmti__alloc_weight(100u << 20, 524288), 100u << 20);
    CHECK_EQ_U64(vmp_jvmti__alloc_weight(777, 0), 777);
    /* size = interval: s / (1 - 1/e) */
    CHECK(vmp_jvmti__alloc_weight(1000, 1000) == 1582);
}

/* live=: the table of tracked allocations reuses freed entries, gives
 * back unknown tags as nothing, and stops tracking at its byte bound */
static void test_live_table(void)
{
    vmp_jvmti_live t;
    vmp_frame fr[3] = {{1, VMP_BCPC_NONE, VMP_FRAME_FUNCTION},
                       {2, 7, VMP_FRAME_FUNCTION},
                       {3, 9, VMP_FRAME_FUNCTION}};
    int64_t a, b, c, *tags;
    size_t n = 0;
    vmp_jvmti__live_init(&t, 4 * (sizeof(vmp_jvmti_live_entry) + 3 * sizeof(vmp_frame)));
    a = vmp_jvmti__live_add(&t, fr, 3, 100, 7);
    b = vmp_jvmti__live_add(&t, fr, 2, 200, 8);
    CHECK(a == 1 && b == 2);
    vmp_jvmti__live_remove(&t, a);
    vmp_jvmti__live_remove(&t, a);  /* twice: nothing */
    vmp_jvmti__live_remove(&t, 99); /* unknown: nothing */
    c = vmp_jvmti__live_add(&t, fr, 3, 300, 9);
    CHECK_EQ_U64((uint64_t)c, 1); /* the freed entry again */
    tags = vmp_jvmti__live_tags(&t, &n);
    CHECK(n == 2 && tags && tags[0] == 1 && tags[1] == 2);
    free(tags);
    CHECK(vmp_jvmti__live_add(&t, fr, 3, 1, 1) > 0);
    CHECK(vmp_jvmti__live_add(&t, fr, 3, 1, 1) > 0);
    CHECK_EQ_U64((uint64_t)vmp_jvmti__live_add(&t, fr, 3, 1, 1), 0); /* over the bound */
    CHECK_EQ_U64(t.untracked, 1);
    vmp_jvmti__live_free(&t);
}

static void test_thread_roles(void)
{
    CHECK_EQ_U64(vmp_jvmti__thread_role("GC Thread#0"), VMP_JVMTI_ROLE_GC);
    CHECK_EQ_U64(vmp_jvmti__thread_role("G1 Conc#0"), VMP_JVMTI_ROLE_GC);
    CHECK_EQ_U64(vmp_jvmti__thread_role("G1 Refine#0"), VMP_JVMTI_ROLE_GC);
    CHECK_EQ_U64(vmp_jvmti__thread_role("ZWorkerYoung#0"), VMP_JVMTI_ROLE_GC);
    CHECK_EQ_U64(vmp_jvmti__thread_role("C2 CompilerThre"), VMP_JVMTI_ROLE_COMPILER);
    CHECK_EQ_U64(vmp_jvmti__thread_role("C1 CompilerThre"), VMP_JVMTI_ROLE_COMPILER);
    CHECK_EQ_U64(vmp_jvmti__thread_role("VM Thread"), VMP_JVMTI_ROLE_OTHER);
    CHECK_EQ_U64(vmp_jvmti__thread_role("main"), VMP_JVMTI_ROLE_OTHER);
    CHECK_EQ_U64(vmp_jvmti__thread_role(""), VMP_JVMTI_ROLE_OTHER);
}

static pthread_mutex_t named_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t named_cv = PTHREAD_COND_INITIALIZER;
static uint64_t named_tid;
static int named_done;

static void *named_main(void *arg)
{
    sigset_t set;
    (void)arg;
    sigemptyset(&set);
    sigaddset(&set, SIGPROF);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    pthread_setname_np(pthread_self(), "vmp-unit-named");
    pthread_mutex_lock(&named_mu);
    named_tid = (uint64_t)syscall(SYS_gettid);
    pthread_cond_broadcast(&named_cv);
    while (!named_done)
        pthread_cond_wait(&named_cv, &named_mu);
    pthread_mutex_unlock(&named_mu);
    return NULL;
}

/* /proc/self/task: this process's threads, their names, their masks; the
 * table: claim, find, the handler's lookup, release. */
static void test_tasks_and_table(void)
{
    uint64_t *tids = NULL, me = (uint64_t)syscall(SYS_gettid);
    size_t n = 0;
    char comm[16];
    pthread_t th;
    vmp_jvmti_thread *t;

    CHECK(pthread_create(&th, NULL, named_main, NULL) == 0);
    pthread_mutex_lock(&named_mu);
    while (named_tid == 0)
        pthread_cond_wait(&named_cv, &named_mu);
    pthread_mutex_unlock(&named_mu);

    CHECK(vmp_jvmti__list_tasks(&tids, &n) == 0);
    CHECK(n >= 2);
    CHECK(vmp_jvmti__tasks_index(tids, n, me) >= 0);
    CHECK(vmp_jvmti__tasks_index(tids, n, named_tid) >= 0);
    CHECK(vmp_jvmti__tasks_index(tids, n, 0) == -1);
    CHECK(n < 2 || tids[0] < tids[1]);
    free(tids);
    CHECK(vmp_jvmti__task_comm(named_tid, comm, sizeof comm) == 0);
    CHECK_STR(comm, "vmp-unit-named");
    CHECK(vmp_jvmti__task_blocks(named_tid, SIGPROF) == 1);
    CHECK(vmp_jvmti__task_blocks(me, SIGPROF) == 0);
    CHECK(vmp_jvmti__task_comm(999999999u, comm, sizeof comm) == -1 && comm[0] == '\0');

    CHECK(vmp_jvmti__threads_self() == NULL);
    t = vmp_jvmti__threads_claim(me, 8, 16);
    CHECK(t != NULL && t->frames != NULL && t->clock.fd == -1);
    CHECK(vmp_jvmti__threads_find(me) == t);
    CHECK(vmp_jvmti__threads_self() == NULL); /* not published yet */
    vmp_jvmti__threads_set_status(t, VMP_JVMTI_SLOT_LIVE);
    CHECK(vmp_jvmti__threads_self() == t);
    vmp_jvmti__threads_set_status(t, VMP_JVMTI_SLOT_RETIRED);
    CHECK(vmp_jvmti__threads_self() == NULL);
    vmp_jvmti__threads_forget_self();
    vmp_jvmti__threads_release(t);
    CHECK(vmp_jvmti__threads_find(me) == NULL);
    CHECK(vmp_jvmti__threads_claim(me, 8, 16) == t); /* the slot is reused */
    vmp_jvmti__threads_release(t);

    /* the table grows past the 4,096 slots it held at first, a segment at
     * a time; released slots are reused without growing it */
    {
        enum {
            MANY = 5000
        };

        static vmp_jvmti_thread *many[MANY];
        size_t i, ok = 1, bound;
        for (i = 0; i < MANY; i++) {
            many[i] = vmp_jvmti__threads_claim(1000000 + i, 2, 8);
            ok &= many[i] != NULL && (i == 0 || many[i] != many[i - 1]);
        }
        CHECK(ok);
        CHECK(vmp_jvmti__threads_find(1000000 + 4500) == many[4500]);
        CHECK(vmp_jvmti__threads_find(1000000 + MANY - 1) == many[MANY - 1]);
        bound = vmp_jvmti__threads_bound();
        CHECK_EQ_U64(bound, MANY);
        for (i = 0; i < MANY; i++)
            vmp_jvmti__threads_release(many[i]);
        for (i = 0; i < 5000; i++)
            ok &= (many[i] = vmp_jvmti__threads_claim(2000000 + i, 2, 8)) != NULL;
        CHECK(ok && vmp_jvmti__threads_bound() == bound);
        for (i = 0; i < 5000; i++)
            vmp_jvmti__threads_release(many[i]);
    }

    pthread_mutex_lock(&named_mu);
    named_done = 1;
    pthread_cond_broadcast(&named_cv);
    pthread_mutex_unlock(&named_mu);
    pthread_join(th, NULL);
}

static void test_format_interval(void)
{
    char buf[32];

    vmp_agent__format_interval(buf, sizeof buf, 1000000);
    CHECK_STR(buf, "1ms");
    vmp_agent__format_interval(buf, sizeof buf, 100000);
    CHECK_STR(buf, "100us");
    vmp_agent__format_interval(buf, sizeof buf, 1500);
    CHECK_STR(buf, "1500ns");
    vmp_agent__format_interval(buf, sizeof buf, 2000000000);
    CHECK_STR(buf, "2s");
}

static void test_idset(void)
{
    vmp_jvmti_idset s;
    uint64_t k;

    memset(&s, 0, sizeof s);
    CHECK(!vmp_jvmti__idset_has(&s, 5));
    for (k = 1; k <= 5000; k++)
        CHECK(vmp_jvmti__idset_add(&s, k * 0x1000) == 1);
    CHECK(vmp_jvmti__idset_add(&s, 0x1000) == 0);
    CHECK(vmp_jvmti__idset_has(&s, 4999 * 0x1000));
    CHECK(!vmp_jvmti__idset_has(&s, 0x1001));
    CHECK_EQ_U64(s.n, 5000);
    vmp_jvmti__idset_free(&s);
    CHECK(!vmp_jvmti__idset_has(&s, 0x1000));
}

static void test_codemap_overlaps(void)
{
    vmp_jvmti_codemap m;
    vmp_jvmti_code a = {100, 50, 1, 7}, b = {200, 10, 2, 8}, c = {150, 50, 3, 9};
    uint64_t ids[4];

    memset(&m, 0, sizeof m);
    CHECK(vmp_jvmti__codemap_insert(&m, &b) == 0);
    CHECK(vmp_jvmti__codemap_insert(&m, &a) == 0);
    CHECK(vmp_jvmti__codemap_insert(&m, &c) == 0); /* [150,200) touches neither */
    CHECK_EQ_U64(vmp_jvmti__codemap_overlaps(&m, ids, 4, 149, 2), 2);
    CHECK_EQ_U64(ids[0], 1);
    CHECK_EQ_U64(ids[1], 3);
    CHECK_EQ_U64(vmp_jvmti__codemap_overlaps(&m, ids, 4, 0, 100), 0);
    CHECK_EQ_U64(vmp_jvmti__codemap_overlaps(&m, ids, 4, 210, 1000), 0);
    CHECK_EQ_U64(vmp_jvmti__codemap_overlaps(&m, ids, 4, 0, 1000), 3);
    CHECK(vmp_jvmti__codemap_insert(&m, &(vmp_jvmti_code){120, 1, 4, 0}) == -1);
    CHECK(vmp_jvmti__codemap_at(&m, 200) != NULL && vmp_jvmti__codemap_at(&m, 200)->id == 2);
    CHECK(vmp_jvmti__codemap_at(&m, 201) == NULL);
    CHECK(vmp_jvmti__codemap_remove(&m, 3) == 1);
    CHECK(vmp_jvmti__codemap_remove(&m, 3) == 0);
    CHECK_EQ_U64(vmp_jvmti__codemap_overlaps(&m, ids, 4, 150, 50), 0);
    vmp_jvmti__codemap_free(&m);
}

/* HotSpot's PcDesc at offset p describes the code before p: the converted
 * entries start at the previous PcDesc's offset. */
static void test_debuginfo_shifts_to_range_starts(void)
{
    static char code[512];
    jvmtiAddrLocationMap map[] = {
        {code + 40, 7}, {code + 10, 2}, {code + 25, -1}, {code + 60, 9}, {code + 300, 11}};
    jmethodID outer = (jmethodID)(uintptr_t)0x1000, inl = (jmethodID)(uintptr_t)0x2000;
    jmethodID m1[] = {outer}, m2[] = {inl, outer}, m3[] = {outer};
    jint b1[] = {3}, b2[] = {5, 8}, b3[] = {12};
    PCStackInfo pcs[] = {{code + 50, 2, m2, b2}, {code + 20, 1, m1, b1}, {code + 90, 1, m3, b3}};
    jvmtiCompiledMethodLoadInlineRecord rec;
    vmp_jvmti_debuginfo d;

    memset(&rec, 0, sizeof rec);
    rec.header.kind = JVMTI_CMLR_INLINE_INFO;
    rec.numpcs = 3;
    rec.pcinfo = pcs;
    CHECK(vmp_jvmti__debuginfo_build(&d, (uint64_t)(uintptr_t)code, 200, map, 5, &rec,
                                     (uint64_t)(uintptr_t)outer) == 0);
    /* Sorted: 10->2, 40->7, 60->9, 300->11 (-1 dropped); shifted: 0:2 10:7 40:9 60:11. */
    CHECK_EQ_U64(d.n_pairs, 4);
    if (d.n_pairs == 4) {
        CHECK_EQ_U64(d.pairs[0].mcpc_offset, 0);
        CHECK_EQ_U64(d.pairs[0].bcpc, 2);
        CHECK_EQ_U64(d.pairs[1].mcpc_offset, 10);
        CHECK_EQ_U64(d.pairs[1].bcpc, 7);
        CHECK_EQ_U64(d.pairs[2].mcpc_offset, 40);
        CHECK_EQ_U64(d.pairs[3].mcpc_offset, 60);
        CHECK_EQ_U64(d.pairs[3].bcpc, 11);
    }
    /* Inline: sorted 20,50,90; records at 0 (pc 20's chain), 20 (pc 50's), 50
     * (pc 90's) and 90 (the compiled method alone). */
    CHECK_EQ_U64(d.n_inlines, 4);
    if (d.n_inlines == 4) {
        CHECK_EQ_U64(d.inlines[0].mcpc_offset, 0);
        CHECK_EQ_U64(d.inlines[0].depth, 1);
        CHECK_EQ_U64(d.inlines[0].frames[0].bcpc, 3);
        CHECK_EQ_U64(d.inlines[1].mcpc_offset, 20);
        CHECK_EQ_U64(d.inlines[1].depth, 2);
        CHECK_EQ_U64(d.inlines[1].frames[0].value, 0x2000);
        CHECK_EQ_U64(d.inlines[1].frames[0].bcpc, 5);
        CHECK_EQ_U64(d.inlines[1].frames[1].value, 0x1000);
        CHECK_EQ_U64(d.inlines[2].mcpc_offset, 50);
        CHECK_EQ_U64(d.inlines[2].frames[0].bcpc, 12);
        CHECK_EQ_U64(d.inlines[3].mcpc_offset, 90);
        CHECK_EQ_U64(d.inlines[3].frames[0].value, 0x1000);
        CHECK_EQ_U64(d.inlines[3].frames[0].bcpc, VMP_BCPC_NONE);
    }
    vmp_jvmti__debuginfo_free(&d);
    CHECK(vmp_jvmti__debuginfo_build(&d, (uint64_t)(uintptr_t)code, 200, NULL, 0, NULL, 1) == 0);
    CHECK_EQ_U64(d.n_pairs + d.n_inlines, 0);
    vmp_jvmti__debuginfo_free(&d);
}

static pthread_key_t vm_key_probe;

static void *knows_self_main(void *arg)
{
    *(int *)arg = vmp_jvmti__vm_knows_self();
    return NULL;
}

/* HotSpot's key of Thread*: found by the JNIEnv a few hundred bytes past
 * the key's value; a thread that never set the key is not the VM's (its
 * GetEnv would be its first access to libjvm's TLS); two keys that fit
 * find none. */
static void test_vm_key(void)
{
    static char area[65536];
    char *vm_thread = area; /* a JavaThread, its JNIEnv at 0x330 */
    pthread_key_t second;
    pthread_t th;
    int fresh = -1;

    CHECK(vmp_jvmti__vm_knows_self() == 0); /* before any search */
    CHECK(pthread_key_create(&vm_key_probe, NULL) == 0);
    CHECK(vmp_jvmti__find_vm_key(vm_thread + 0x330) == 0); /* not set yet */
    CHECK(pthread_setspecific(vm_key_probe, vm_thread) == 0);
    CHECK(vmp_jvmti__find_vm_key(vm_thread + 0x330) == 1);
    CHECK(vmp_jvmti__vm_knows_self() == 1);
    CHECK(pthread_create(&th, NULL, knows_self_main, &fresh) == 0);
    CHECK(pthread_join(th, NULL) == 0);
    CHECK(fresh == 0);                                   /* a thread the VM never knew */
    CHECK(pthread_setspecific(vm_key_probe, NULL) == 0); /* its end */
    CHECK(vmp_jvmti__vm_knows_self() == 0);
    CHECK(pthread_setspecific(vm_key_probe, vm_thread) == 0);
    CHECK(vmp_jvmti__find_vm_key(area + 40000) == 0); /* too far from the env */
    CHECK(vmp_jvmti__vm_knows_self() == 0);
    CHECK(pthread_key_create(&second, NULL) == 0);
    CHECK(pthread_setspecific(second, vm_thread + 8) == 0);
    CHECK(vmp_jvmti__find_vm_key(vm_thread + 0x330) == 0); /* ambiguous */
    CHECK(vmp_jvmti__vm_knows_self() == 0);
    pthread_key_delete(second);
    pthread_key_delete(vm_key_probe);
}

int main(void)
{
    VMP_TEST_RUN(test_options_defaults);
    VMP_TEST_RUN(test_vm_key);
    VMP_TEST_RUN(test_options_all_keys);
    VMP_TEST_RUN(test_options_labels);
    VMP_TEST_RUN(test_options_units);
    VMP_TEST_RUN(test_options_bad_values_keep_defaults);
    VMP_TEST_RUN(test_options_alloc);
    VMP_TEST_RUN(test_kinds_helpers);
    VMP_TEST_RUN(test_live_table);
    VMP_TEST_RUN(test_format_interval);
    VMP_TEST_RUN(test_thread_roles);
    VMP_TEST_RUN(test_tasks_and_table);
    VMP_TEST_RUN(test_idset);
    VMP_TEST_RUN(test_codemap_overlaps);
    VMP_TEST_RUN(test_debuginfo_shifts_to_range_starts);
    VMP_TEST_EXIT();
}
