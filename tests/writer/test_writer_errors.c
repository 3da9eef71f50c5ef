/* SPDX-License-Identifier: MIT
 *
 * test_writer_errors.c - write errors stop output for good, are reported by
 * flush and close and counted in the totals, and leave a readable prefix
 * (spec.md §2, §4 R-CHK-3).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "vmp_test.h"
#include "vmp_test_decode.h"
#include "vmp_writer.h"

static void sample_n(vmp_writer *w, int n, unsigned *x, uint64_t *ok, uint64_t *lost)
{
    vmp_frame fr[8];
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 8; k++) {
            *x = *x * 1103515245u + 12345u;
            fr[k] = (vmp_frame){.value = ((uint64_t)*x << 20) ^ *x, .kind = VMP_FRAME_PC};
        }
        vmp_sample s = {.thread = 1, .pc = fr[0].value, .frames = fr, .depth = 8};
        vmp_status st = vmp_writer_sample(w, &s);
        CHECK(st == VMP_OK || st == VMP_ERR_CLOSED);
        if (st == VMP_OK)
            (*ok)++;
        else
            (*lost)++;
    }
}

static void test_file_size_limit_stops_output(void)
{
    const char *path = "errors_fsize.vmp";
    /* A host that wants to survive RLIMIT_FSIZE ignores SIGXFSZ; the writer
     * itself never changes signal dispositions. */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = 64 * 1024;
    vmp_writer_options o = VMP_WRITER_OPTIONS_INIT;
    o.format_major = 1; /* SAMPLE records, which the test decoder reads one by one */
    o.chunk_bytes = 8 * 1024;
    o.ring_slots = 1u << 15;
    vmp_writer *w = NULL;
    CHECK(vmp_writer_open(&w, path, NULL, &o) == VMP_OK);
    if (!w)
        return;
    CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    unsigned x = 1;
    uint64_t ok = 0, lost = 0;
    vmp_status st = VMP_OK;
    int rounds = 0;
    while (st == VMP_OK && rounds++ < 200) {
        sample_n(w, 500, &x, &ok, &lost);
        st = vmp_writer_flush(w);
    }
    CHECK(st == VMP_ERR_IO); /* the first flush after the error says so */
    CHECK(vmp_writer_flush(w) == VMP_ERR_CLOSED);
    vmp_code_object c = {.id = 1, .start = 1, .size = 1};
    CHECK(vmp_writer_code_add(w, &c) == VMP_ERR_CLOSED);
    sample_n(w, 10, &x, &ok, &lost);
    CHECK(lost >= 10);
    vmp_writer_totals t;
    CHECK(vmp_writer_close(w, &t) == VMP_ERR_IO);
    setrlimit(RLIMIT_FSIZE, &old);
    CHECK_EQ_U64(t.write_errno, EFBIG);
    CHECK_EQ_U64(t.samples_written + t.dropped_write + t.dropped_full, ok + lost);
    CHECK(t.dropped_write >= lost);
    CHECK(t.samples_written > 0);
    CHECK(t.bytes <= 64 * 1024);

    td_file f;
    int rc = td_load(&f, path);
    if (f.err[0])
        fprintf(stderr, "decode: %s\n", f.err);
    CHECK(rc == 0); /* every complete chunk decodes */
    CHECK(f.good_bytes <= 64 * 1024);
    CHECK_EQ_U64(td_count(&f, VMP_REC_SAMPLE), t.samples_written);
    CHECK_EQ_U64(td_count(&f, VMP_REC_END), 0);
    CHECK_EQ_U64(f.n_chunks, t.chunks);
    td_free(&f);
}

static void test_closed_descriptor_stops_output(void)
{
    const char *path = "errors_badfd.vmp";
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0);
    vmp_writer *w = NULL;
    vmp_writer_options o = VMP_WRITER_OPTIONS_INIT;
    o.format_major = 1; /* SAMPLE records, which the test decoder reads one by one */
    CHECK(vmp_writer_open_fd(&w, fd, NULL, &o) == VMP_OK);
    if (!w)
        return;
    unsigned x = 7;
    uint64_t ok = 0, lost = 0;
    sample_n(w, 100, &x, &ok, &lost);
    CHECK(vmp_writer_flush(w) == VMP_OK);
    close(fd); /* the descriptor goes away under the writer */
    sample_n(w, 100, &x, &ok, &lost);
    CHECK(vmp_writer_counter(w, 0, 1) == VMP_OK);
    CHECK(vmp_writer_flush(w) == VMP_ERR_IO);
    CHECK(vmp_writer_counter(w, 0, 1) == VMP_ERR_CLOSED);
    vmp_writer_totals t;
    vmp_writer_stats(w, &t);
    CHECK_EQ_U64(t.write_errno, EBADF);
    CHECK(vmp_writer_close(w, &t) == VMP_ERR_IO);
    CHECK_EQ_U64(t.write_errno, EBADF);
    CHECK_EQ_U64(t.samples_written, 100);
    CHECK_EQ_U64(t.dropped_write, 100);
    CHECK_EQ_U64(ok + lost, 200);

    td_file f;
    CHECK(td_load(&f, path) == 0);
    CHECK(!f.truncated);
    CHECK_EQ_U64(f.n_chunks, 1);
    CHECK_EQ_U64(td_count(&f, VMP_REC_SAMPLE), 100);
    td_free(&f);
}

int main(void)
{
    VMP_TEST_RUN(test_file_size_limit_stops_output);
    VMP_TEST_RUN(test_closed_descriptor_stops_output);
    VMP_TEST_EXIT();
}
