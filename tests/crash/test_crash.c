/* SPDX-License-Identifier: MIT
 *
 * test_crash.c - crash recovery (spec.md §2 "a crash loses at most the chunk
 * being filled", §4 R-CHK-3, §5.2 END).
 *
 * A child process writes a profile at a high rate (several sampling threads,
 * a thread adding and freeing code, small chunks that close by size and by
 * age) while a thread publishes the writer's totals to shared memory; the
 * parent kills it with SIGKILL at random moments.  Every file must read as
 * truncated-but-readable (records, then VMP_END or VMP_ERR_TRUNCATED; the
 * validator reports truncation only) and must hold at least the samples of
 * the chunks the child knew were written.  Then: a clean close is told apart
 * from a crash by the END record, and `vmp info` says which; a child that
 * calls _exit() without closing keeps everything flushed before; a child
 * that dies of SIGSEGV or abort() while the writer runs still dies of that
 * signal (the writer installs no handler) and leaves a readable file.
 *
 * usage: test_crash VMP_CLI WORKDIR [KILLS]
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vmp_reader.h"
#include "vmp_test.h"
#include "vmp_validate.h"
#include "vmp_writer.h"

/* What the child tells the parent, in a shared anonymous mapping. */
typedef struct shared {
    atomic_int ready;               /* writer open, threads running */
    atomic_uint_fast64_t samples;   /* totals.samples_written, polled */
    atomic_uint_fast64_t chunks;    /* totals.chunks, polled */
    atomic_int segv_default_before; /* SIGSEGV was SIG_DFL before vmp_writer_open */
    atomic_int segv_unchanged;      /* ... and is the same after it */
} shared;

static shared *sh;
static vmp_writer *w;
static atomic_int stop;

enum {
    SAMPLERS = 3
};

static void *sampler(void *arg)
{
    uint64_t tid = (uint64_t)(uintptr_t)arg;
    vmp_frame frames[8];
    uint64_t n = 0;
    while (!atomic_load(&stop)) {
        uint32_t depth = 1 + (uint32_t)(n % 8);
        for (uint32_t i = 0; i < depth; i++) {
            frames[i].kind = VMP_FRAME_PC;
            frames[i].value = 0x10000 + 64 * ((n + i) % 32) + i;
            frames[i].bcpc = VMP_BCPC_NONE;
        }
        vmp_sample s = {.thread = tid,
                        .pc = frames[0].value,
                        .generation = VMP_GENERATION_CURRENT,
                        .state = (uint32_t)(n % 2),
                        .frames = frames,
                        .depth = depth};
        vmp_writer_sample(w, &s);
        n++;
        if (n % 64 == 0)
            sched_yield();
    }
    return NULL;
}

static void *coder(void *arg)
{
    uint64_t zone = (uint64_t)(uintptr_t)arg, id = 1;
    while (!atomic_load(&stop)) {
        vmp_code_object c = {
            .id = id, .zone = zone, .name = "m", .start = 0x10000 + 64 * (id % 32), .size = 64};
        vmp_writer_code_add(w, &c);
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
        vmp_writer_code_free(w, id, NULL);
        id++;
    }
    return NULL;
}

static void *publisher(void *arg)
{
    (void)arg;
    for (;;) {
        vmp_writer_totals t;
        vmp_writer_stats(w, &t);
        /* chunks first: a reader of `samples` then never sees fewer chunks */
        atomic_store(&sh->chunks, t.chunks);
        atomic_store(&sh->samples, t.samples_written);
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

enum child_end {
    END_RUN,
    END_CLOSE,
    END_EXIT_AFTER_FLUSH,
    END_SEGV,
    END_ABORT
};

/* The child: write until killed, or end the way `how` says. */
static void child(const char *path, enum child_end how)
{
    struct sigaction before, after;
    sigaction(SIGSEGV, NULL, &before);
    static const char *const states[] = {"running", "gc"};
    vmp_writer_meta meta = {.vm_name = "crashvm", .states = states, .n_states = 2};
    vmp_writer_options opts = VMP_WRITER_OPTIONS_INIT;
    opts.chunk_bytes = 16u << 10;
    opts.chunk_age_ms = 10;
    opts.ring_slots = 1u << 14;
    if (vmp_writer_open(&w, path, &meta, &opts) != VMP_OK)
        _exit(90);
    sigaction(SIGSEGV, NULL, &after);
    atomic_store(&sh->segv_default_before, before.sa_handler == SIG_DFL);
    atomic_store(&sh->segv_unchanged,
                 before.sa_handler == after.sa_handler && before.sa_flags == after.sa_flags);
    uint64_t zone = 0;
    vmp_writer_code_zone(w, &zone, "zone", 0x10000, 0x20000);

    if (how == END_EXIT_AFTER_FLUSH) {
        /* Known samples, a flush, more samples, then _exit(): what the
         * flush wrote is on disk. */
        vmp_frame f = {.value = 0x10010, .bcpc = VMP_BCPC_NONE, .kind = VMP_FRAME_PC};
        vmp_sample s = {.thread = 1,
                        .pc = 0x10010,
                        .generation = VMP_GENERATION_CURRENT,
                        .frames = &f,
                        .depth = 1};
        for (int i = 0; i < 1000; i++)
            vmp_writer_sample(w, &s);
        if (vmp_writer_flush(w) != VMP_OK)
            _exit(91);
        vmp_writer_totals t;
        vmp_writer_stats(w, &t);
        atomic_store(&sh->samples, t.samples_written);
        for (int i = 0; i < 1000; i++)
            vmp_writer_sample(w, &s);
        _exit(0);
    }

    pthread_t th[SAMPLERS + 2];
    for (int i = 0; i < SAMPLERS; i++)
        pthread_create(&th[i], NULL, sampler, (void *)(uintptr_t)(i + 1));
    pthread_create(&th[SAMPLERS], NULL, coder, (void *)(uintptr_t)zone);
    if (how != END_CLOSE)
        pthread_create(&th[SAMPLERS + 1], NULL, publisher, NULL);
    atomic_store(&sh->ready, 1);

    if (how == END_RUN)
        for (;;)
            pause(); /* until SIGKILL */
    switch (how) {
    case END_CLOSE: {
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
        atomic_store(&stop, 1);
        for (int i = 0; i <= SAMPLERS; i++)
            pthread_join(th[i], NULL);
        _exit(vmp_writer_close(w, NULL) == VMP_OK ? 0 : 92);
    }
    case END_SEGV: {
        struct timespec ts = {0, 30000000};
        nanosleep(&ts, NULL);
        raise(SIGSEGV);
        _exit(93);
    }
    case END_ABORT: {
        struct timespec ts = {0, 30000000};
        nanosleep(&ts, NULL);
        abort();
    }
    default:
        _exit(94);
    }
}

static pid_t spawn(const char *path, enum child_end how)
{
    memset(sh, 0, sizeof *sh);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(2);
    }
    if (pid == 0)
        child(path, how);
    return pid;
}

/* Up to 60 s: a sanitizer build on a loaded machine starts slowly. */
static void wait_ready(pid_t pid)
{
    for (int i = 0; i < 600000 && !atomic_load(&sh->ready); i++) {
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            fprintf(stderr, "child exited early: status %d\n", status);
            exit(1);
        }
        usleep(100);
    }
    CHECK(atomic_load(&sh->ready));
}

/* Read the file: records, then VMP_END or VMP_ERR_TRUNCATED.  Returns the
 * SAMPLE records read; *seen_end says whether an END record came. */
static uint64_t read_back(const char *path, int *seen_end)
{
    vmp_reader *r = NULL;
    vmp_status st = vmp_reader_open_file(&r, path, NULL);
    if (st != VMP_OK)
        fprintf(stderr, "%s: %s\n", path, r ? vmp_reader_errmsg(r) : vmp_status_str(st));
    CHECK(st == VMP_OK);
    vmp_record rec;
    uint64_t samples = 0;
    while ((st = vmp_reader_next(r, &rec)) == VMP_OK)
        samples += rec.type == VMP_REC_SAMPLE || rec.type == VMP_REC_FAILED_SAMPLE;
    if (st != VMP_END && st != VMP_ERR_TRUNCATED)
        fprintf(stderr, "%s: %s\n", path, vmp_reader_errmsg(r));
    CHECK(st == VMP_END || st == VMP_ERR_TRUNCATED);
    vmp_reader_info info;
    vmp_reader_get_info(r, &info);
    *seen_end = info.seen_end;
    vmp_reader_close(r);
    return samples;
}

/* The validator finds a truncated file (no END, or an incomplete frame)
 * and nothing else. */
static void check_truncated(const char *path)
{
    vmp_reader *r = NULL;
    CHECK(vmp_reader_open_file(&r, path, NULL) == VMP_OK);
    vmp_validate_report rep;
    vmp_status st = vmp_validate(&rep, r);
    if (st != VMP_ERR_TRUNCATED)
        fprintf(stderr, "%s: validate: %s [%s] %s\n", path, vmp_status_str(st), rep.rule,
                rep.message);
    CHECK(st == VMP_ERR_TRUNCATED);
    CHECK(!rep.complete);
    vmp_reader_close(r);
}

static void check_valid(const char *path)
{
    vmp_reader *r = NULL;
    CHECK(vmp_reader_open_file(&r, path, NULL) == VMP_OK);
    vmp_validate_report rep;
    vmp_status st = vmp_validate(&rep, r);
    if (st != VMP_OK)
        fprintf(stderr, "%s: validate: [%s] %s\n", path, rep.rule, rep.message);
    CHECK(st == VMP_OK && rep.complete);
    vmp_reader_close(r);
}

/* Run `vmp info FILE` and return 1 when its output holds `needle`. */
static int info_says(const char *cli, const char *path, const char *needle)
{
    char cmd[4096], line[512];
    snprintf(cmd, sizeof cmd, "'%s' info '%s' 2>&1", cli, path);
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL);
    int found = 0;
    while (fgets(line, sizeof line, p) != NULL)
        found |= strstr(line, needle) != NULL;
    pclose(p);
    return found;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_crash VMP_CLI WORKDIR [KILLS]\n");
        return 2;
    }
    const char *cli = argv[1], *dir = argv[2];
    int kills = argc > 3 ? atoi(argv[3]) : 100;
    mkdir(dir, 0777);
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(sh != MAP_FAILED);
    char path[4096];
    unsigned seed = 12345;
    uint64_t total_known = 0, total_read = 0;
    int with_chunks = 0;

    /* 1. SIGKILL at random moments. */
    for (int i = 0; i < kills; i++) {
        snprintf(path, sizeof path, "%s/kill.vmp", dir);
        pid_t pid = spawn(path, END_RUN);
        wait_ready(pid);
        seed = seed * 1103515245u + 12345u;
        useconds_t delay = 1000 + (seed >> 8) % 150000; /* 1 to 151 ms */
        usleep(delay);
        uint64_t known = atomic_load(&sh->samples);
        kill(pid, SIGKILL);
        int status;
        CHECK(waitpid(pid, &status, 0) == pid);
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        int seen_end = 1;
        uint64_t got = read_back(path, &seen_end);
        CHECK(!seen_end);
        if (got < known)
            fprintf(stderr, "kill %d after %u us: %llu samples read, %llu known written\n", i,
                    (unsigned)delay, (unsigned long long)got, (unsigned long long)known);
        CHECK(got >= known);
        check_truncated(path);
        total_known += known;
        total_read += got;
        with_chunks += known > 0;
    }
    CHECK(kills == 0 || with_chunks > kills / 2); /* the kills did land mid-run */

    /* A kill once chunks are out: `vmp info` calls the file truncated. */
    snprintf(path, sizeof path, "%s/kill-info.vmp", dir);
    pid_t killed = spawn(path, END_RUN);
    wait_ready(killed);
    for (int i = 0; i < 50000 && atomic_load(&sh->samples) == 0; i++)
        usleep(100);
    CHECK(atomic_load(&sh->samples) > 0);
    kill(killed, SIGKILL);
    CHECK(waitpid(killed, NULL, 0) == killed);
    CHECK(info_says(cli, path, "status:           truncated"));
    CHECK(!info_says(cli, path, "complete (END record"));

    /* 2. A clean close ends with END, and vmp info says so. */
    snprintf(path, sizeof path, "%s/clean.vmp", dir);
    pid_t pid = spawn(path, END_CLOSE);
    int status, seen_end = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(read_back(path, &seen_end) > 0);
    CHECK(seen_end);
    check_valid(path);
    CHECK(info_says(cli, path, "status:           complete (END record"));

    /* 3. _exit() without close: what the last flush wrote is readable. */
    snprintf(path, sizeof path, "%s/exit.vmp", dir);
    pid = spawn(path, END_EXIT_AFTER_FLUSH);
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(atomic_load(&sh->samples) == 1000);
    CHECK(read_back(path, &seen_end) >= 1000);
    CHECK(!seen_end);
    check_truncated(path);
    CHECK(info_says(cli, path, "no END record"));

    /* 4. SIGSEGV and abort() while the writer runs: the writer changed no
     * disposition, the child dies of the signal as it would without the
     * writer, and the file reads. */
    int sigs[2] = {SIGSEGV, SIGABRT};

    enum child_end ends[2] = {END_SEGV, END_ABORT};

    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/signal%d.vmp", dir, sigs[k]);
        pid = spawn(path, ends[k]);
        CHECK(waitpid(pid, &status, 0) == pid);
        CHECK(atomic_load(&sh->segv_unchanged));
        /* Sanitizer runtimes install their own SIGSEGV handler: then the
         * child exits through it rather than by the signal. */
        if (atomic_load(&sh->segv_default_before) || sigs[k] == SIGABRT)
            CHECK(WIFSIGNALED(status) && WTERMSIG(status) == sigs[k]);
        else
            CHECK(WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0));
        uint64_t known = atomic_load(&sh->samples);
        CHECK(read_back(path, &seen_end) >= known);
        CHECK(!seen_end);
        check_truncated(path);
    }

    printf("crash: %d kills, %llu samples known written, %llu read back\n", kills,
           (unsigned long long)total_known, (unsigned long long)total_read);
    return vmp_test_failures ? 1 : 0;
}
