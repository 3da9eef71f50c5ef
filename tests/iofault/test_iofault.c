/* SPDX-License-Identifier: MIT
 *
 * test_iofault.c - the writer under full disks and I/O errors (writer/README.md
 * "Write errors"; spec.md §2 and §4 R-CHK-3: what was written stays a
 * readable, truncated profile).
 *
 * Faults: the file size limit (RLIMIT_FSIZE, SIGXFSZ ignored: EFBIG), a
 * descriptor opened read-only (EBADF), /dev/full (ENOSPC), a pipe whose
 * reader is gone (EPIPE, SIGPIPE ignored), and, through a write() shim in
 * this executable (it interposes the libc function for the statically
 * linked writer), a short write followed by EIO and an ENOSPC after N bytes.
 * In each case the writer stops writing, counts what it drops
 * (totals.dropped_write), reports the error once (the first flush that sees
 * it returns VMP_ERR_IO, later ones VMP_ERR_CLOSED, close VMP_ERR_IO with
 * totals.write_errno set), never blocks and never crashes; and the file holds
 * exactly the samples the totals call written.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vmp_reader.h"
#include "vmp_test.h"
#include "vmp_validate.h"
#include "vmp_writer.h"

/* ---- the write() shim ------------------------------------------------------ */

static volatile int shim_fd = -1;      /* descriptor the shim acts on, -1 == none */
static volatile long shim_budget;      /* bytes it still lets through */
static volatile int shim_errno;        /* then fails with this */
static volatile long shim_short_calls; /* writes cut short so far */

ssize_t write(int fd, const void *buf, size_t n);

ssize_t write(int fd, const void *buf, size_t n)
{
    if (fd == shim_fd && n > 0) {
        long left = __atomic_load_n(&shim_budget, __ATOMIC_SEQ_CST);
        if (left <= 0) {
            errno = shim_errno;
            return -1;
        }
        /* The write that crosses the budget is cut short to what fits, and
         * so is one that would end right at it (by a byte: how the chunks'
         * sizes add up depends on the sample times, so a run may reach the
         * budget exactly at a chunk's end); then the budget is spent. */
        if ((long)n > left || ((long)n == left && left > 1)) {
            n = (long)n > left ? (size_t)left : (size_t)left - 1;
            __atomic_add_fetch(&shim_short_calls, 1, __ATOMIC_SEQ_CST);
            ssize_t done = syscall(SYS_write, fd, buf, n);
            __atomic_store_n(&shim_budget, 0, __ATOMIC_SEQ_CST);
            return done;
        }
        ssize_t done = syscall(SYS_write, fd, buf, n);
        if (done > 0)
            __atomic_sub_fetch(&shim_budget, done, __ATOMIC_SEQ_CST);
        return done;
    }
    return syscall(SYS_write, fd, buf, n);
}

/* ---- helpers ---------------------------------------------------------------- */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static vmp_writer_options small_chunks(void)
{
    vmp_writer_options o = VMP_WRITER_OPTIONS_INIT;
    o.chunk_bytes = 4096;
    o.chunk_age_ms = VMP_WRITER_NO_AGE_LIMIT;
    return o;
}

static void sample_n(vmp_writer *w, int n, uint64_t base)
{
    for (int i = 0; i < n; i++) {
        vmp_frame f[3] = {{base + (uint64_t)i % 97, VMP_BCPC_NONE, VMP_FRAME_PC},
                          {0x5000 + (uint64_t)i % 13, VMP_BCPC_NONE, VMP_FRAME_PC},
                          {0x6000, VMP_BCPC_NONE, VMP_FRAME_PC}};
        vmp_sample s = {.thread = 1 + (uint64_t)i % 3,
                        .pc = f[0].value,
                        .generation = VMP_GENERATION_CURRENT,
                        .frames = f,
                        .depth = 3};
        vmp_writer_sample(w, &s);
    }
}

/* Samples records in the file at `path`: it must read as truncated but
 * readable (no END; records, then VMP_END or VMP_ERR_TRUNCATED), and the
 * validator must report truncation only. */
static uint64_t read_truncated(const char *path)
{
    vmp_reader *r = NULL;
    vmp_status st = vmp_reader_open_file(&r, path, NULL);
    CHECK(st == VMP_OK);
    if (st != VMP_OK) {
        vmp_reader_close(r);
        return 0;
    }
    vmp_record rec;
    uint64_t samples = 0;
    while ((st = vmp_reader_next(r, &rec)) == VMP_OK)
        samples += rec.type == VMP_REC_SAMPLE || rec.type == VMP_REC_FAILED_SAMPLE;
    CHECK(st == VMP_END || st == VMP_ERR_TRUNCATED);
    vmp_reader_info info;
    vmp_reader_get_info(r, &info);
    CHECK(!info.seen_end);
    vmp_reader_close(r);

    CHECK(vmp_reader_open_file(&r, path, NULL) == VMP_OK);
    vmp_validate_report rep;
    st = vmp_validate(&rep, r);
    if (st != VMP_ERR_TRUNCATED)
        fprintf(stderr, "%s: validate: %s [%s] %s\n", path, vmp_status_str(st), rep.rule,
                rep.message);
    CHECK(st == VMP_ERR_TRUNCATED);
    vmp_reader_close(r);
    return samples;
}

/* Drive an open writer until its output fails: sample, flush, repeat.
 * Checks the reporting contract and returns the final totals. */
static vmp_writer_totals run_until_error(vmp_writer *w, int expect_errno)
{
    vmp_status st = VMP_OK;
    int rounds = 0;
    double t0 = now_ms();
    while (st == VMP_OK && rounds < 10000) {
        sample_n(w, 100, 0x1000 + (uint64_t)rounds * 16);
        st = vmp_writer_flush(w);
        rounds++;
    }
    CHECK(st == VMP_ERR_IO); /* reported once, as an I/O error ... */
    sample_n(w, 100, 0x9000);
    CHECK(vmp_writer_flush(w) == VMP_ERR_CLOSED); /* ... then as closed */
    vmp_writer_totals t;
    vmp_writer_stats(w, &t);
    CHECK(t.write_errno == expect_errno);
    CHECK(t.dropped_write >= 100);
    vmp_frame f = {1, VMP_BCPC_NONE, VMP_FRAME_PC};
    vmp_sample s = {.thread = 1, .pc = 1, .frames = &f, .depth = 1};
    vmp_writer_sample(w, &s); /* samples after the stop are refused and counted */
    uint64_t zone = 0;
    CHECK(vmp_writer_code_zone(w, &zone, "late", 0x100000, 0x200000) == VMP_ERR_CLOSED);
    vmp_writer_totals fin;
    CHECK(vmp_writer_close(w, &fin) == VMP_ERR_IO);
    CHECK(fin.write_errno == expect_errno);
    CHECK(fin.dropped_write >= t.dropped_write + 1);
    CHECK(fin.samples_written == t.samples_written);
    double ms = now_ms() - t0;
    CHECK(ms < 10000.0); /* never blocks */
    if (fin.write_errno != expect_errno)
        fprintf(stderr, "write_errno %d (%s), want %d\n", fin.write_errno,
                strerror(fin.write_errno), expect_errno);
    return fin;
}

static char workdir[4096];

static void path_of(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", workdir, name);
}

/* ---- cases ------------------------------------------------------------------ */

/* RLIMIT_FSIZE with SIGXFSZ ignored: write() fails with EFBIG.  In a child,
 * so that the limit does not touch the test's own output. */
static void file_size_limit(void)
{
    char path[4200];
    path_of(path, sizeof path, "fsize.vmp");
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {48u << 10, 48u << 10};
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(3);
        vmp_writer_options o = small_chunks();
        vmp_writer *w = NULL;
        if (vmp_writer_open(&w, path, NULL, &o) != VMP_OK)
            _exit(4);
        vmp_writer_totals t = run_until_error(w, EFBIG);
        /* Report the totals through the exit status: written samples / 100. */
        if (vmp_test_failures)
            _exit(1);
        FILE *f = fopen(path, "rb");
        if (f == NULL)
            _exit(5);
        fclose(f);
        printf("file size limit: %llu samples written, %llu dropped\n",
               (unsigned long long)t.samples_written, (unsigned long long)t.dropped_write);
        fflush(stdout);
        char buf[4300];
        snprintf(buf, sizeof buf, "%s.count", path);
        f = fopen(buf, "w"); /* small: under the limit */
        if (f == NULL)
            _exit(6);
        fprintf(f, "%llu\n", (unsigned long long)t.samples_written);
        fclose(f);
        _exit(0);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char cpath[4300];
    snprintf(cpath, sizeof cpath, "%s.count", path);
    FILE *f = fopen(cpath, "r");
    unsigned long long written = 0;
    CHECK(f != NULL && fscanf(f, "%llu", &written) == 1);
    if (f)
        fclose(f);
    CHECK(written > 0);
    CHECK_EQ_U64(read_truncated(path), written);
}

/* A descriptor open for reading only: the header cannot be written. */
static void read_only_fd(void)
{
    char path[4200];
    path_of(path, sizeof path, "readonly.vmp");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0);
    close(fd);
    fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    vmp_writer *w = NULL;
    vmp_writer_options o = small_chunks();
    vmp_status st = vmp_writer_open_fd(&w, fd, NULL, &o);
    CHECK(st == VMP_ERR_IO);
    CHECK(w == NULL);
    close(fd);
}

/* /dev/full: ENOSPC from the first write on. */
static void dev_full(void)
{
    int fd = open("/dev/full", O_WRONLY);
    if (fd < 0) {
        fprintf(stderr, "no /dev/full: case skipped\n");
        return;
    }
    vmp_writer *w = NULL;
    vmp_writer_options o = small_chunks();
    CHECK(vmp_writer_open_fd(&w, fd, NULL, &o) == VMP_ERR_IO);
    CHECK(w == NULL);
    CHECK(vmp_writer_open(&w, "/dev/full", NULL, &o) == VMP_ERR_IO);
    CHECK(w == NULL);
    close(fd);
}

/* A pipe whose reader has gone: EPIPE with SIGPIPE ignored. */
static void broken_pipe(void)
{
    int p[2];
    CHECK(pipe(p) == 0);
    close(p[0]);
    void (*old)(int) = signal(SIGPIPE, SIG_IGN);
    vmp_writer *w = NULL;
    vmp_writer_options o = small_chunks();
    CHECK(vmp_writer_open_fd(&w, p[1], NULL, &o) == VMP_ERR_IO);
    CHECK(w == NULL);
    close(p[1]);
    signal(SIGPIPE, old);
}

/* The shim lets `budget` bytes through (one fewer when a write would end
 * right at it), cutting the write that reaches it short, then fails with
 * `err`. */
static void shim_case(const char *name, long budget, int err)
{
    char path[4200];
    path_of(path, sizeof path, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0);
    shim_short_calls = 0;
    shim_errno = err;
    shim_budget = budget;
    shim_fd = fd;
    vmp_writer *w = NULL;
    vmp_writer_options o = small_chunks();
    CHECK(vmp_writer_open_fd(&w, fd, NULL, &o) == VMP_OK);
    vmp_writer_totals t = run_until_error(w, err);
    shim_fd = -1;
    close(fd);
    if (shim_short_calls != 1)
        fprintf(stderr, "%s: %ld writes cut short\n", name, (long)shim_short_calls);
    CHECK(shim_short_calls == 1);
    printf("%s: %llu samples written, %llu dropped, %ld bytes let through\n", name,
           (unsigned long long)t.samples_written, (unsigned long long)t.dropped_write, budget);
    CHECK(t.samples_written > 0);
    CHECK_EQ_U64(read_truncated(path), t.samples_written);
}

static void short_write_then_eio(void)
{
    shim_case("eio.vmp", 10007, EIO);
}

static void enospc_after_n_bytes(void)
{
    shim_case("enospc.vmp", 30011, ENOSPC);
}

int main(int argc, char **argv)
{
    snprintf(workdir, sizeof workdir, "%s", argc > 1 ? argv[1] : ".");
    mkdir(workdir, 0777);
    VMP_TEST_RUN(file_size_limit);
    VMP_TEST_RUN(read_only_fd);
    VMP_TEST_RUN(dev_full);
    VMP_TEST_RUN(broken_pipe);
    VMP_TEST_RUN(short_write_then_eio);
    VMP_TEST_RUN(enospc_after_n_bytes);
    VMP_TEST_EXIT();
}
