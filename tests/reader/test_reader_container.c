/* SPDX-License-Identifier: MIT
 *
 * test_reader_container.c - the file header frame, frames, chunks, truncation,
 * corruption and inputs (spec.md §3 R-HDR-1..4, §4 R-CHK-1..5, §6, §8).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "reader_fixture.h"
#include "vmp_seek.h"
#include "vmp_test.h"

/* A small file: header frame, 3 chunks of 2, 3 and 1 records. */
typedef struct small_file {
    tbuf f;
    size_t frame_end[4]; /* end offsets: header frame, chunk 0, 1, 2 */
    uint64_t records_before[4];
    size_t content_len[3]; /* decompressed size of chunk 0, 1, 2 */
} small_file;

static void add_samples(tbuf *c, int n, uint64_t first_pc)
{
    int i;
    for (i = 0; i < n; i++) {
        rec_start(c, 3, VMP_REC_SAMPLE);
        kv_int(c, VMP_SMP_TIME_DELTA, 10);
        kv_uint(c, VMP_SMP_PC, first_pc + (uint64_t)i);
    }
}

static void build_small(small_file *s)
{
    tbuf c = {0};

    memset(s, 0, sizeof *s);
    f_header(&s->f, 1, 0);
    s->frame_end[0] = s->f.len;
    rec_start(&c, 2, VMP_REC_HEADER);
    kv_str(&c, VMP_HDR_PRODUCER, "t");
    add_samples(&c, 1, 100);
    s->content_len[0] = c.len;
    f_chunk(&s->f, &c);
    s->frame_end[1] = s->f.len;
    s->records_before[1] = 2;
    c.len = 0;
    add_samples(&c, 3, 200);
    s->content_len[1] = c.len;
    f_chunk(&s->f, &c);
    s->frame_end[2] = s->f.len;
    s->records_before[2] = 5;
    c.len = 0;
    rec_start(&c, 2, VMP_REC_END);
    kv_uint(&c, VMP_END_SAMPLES, 4);
    s->content_len[2] = c.len;
    f_chunk(&s->f, &c);
    s->frame_end[3] = s->f.len;
    s->records_before[3] = 6;
    tb_free(&c);
}

static void test_whole_small_file_reads(void)
{
    small_file s;
    vmp_reader *r;
    uint64_t n;
    vmp_reader_info info;

    build_small(&s);
    CHECK(vmp_reader_open_memory(&r, s.f.p, s.f.len, "small.vmp", NULL) == VMP_OK);
    CHECK(read_all(r, &n) == VMP_END);
    CHECK_EQ_U64(n, 6);
    vmp_reader_get_info(r, &info);
    CHECK_EQ_U64(info.chunks, 3);
    CHECK(info.seen_end);
    CHECK_EQ_U64(info.bytes_consumed, s.f.len);
    vmp_reader_close(r);
    tb_free(&s.f);
}

/* spec R-CHK-3: a file cut anywhere yields the complete chunks before the cut. */
static void test_cut_at_every_offset(void)
{
    small_file s;
    size_t cut;

    build_small(&s);
    for (cut = 0; cut <= s.f.len; cut++) {
        vmp_reader *r;
        vmp_status st = vmp_reader_open_memory(&r, s.f.p, cut, "cut.vmp", NULL);
        uint64_t n = 0, want = 0;
        int boundary = 0, k;

        for (k = 0; k < 4; k++) {
            if (s.frame_end[k] <= cut)
                want = s.records_before[k];
            if (s.frame_end[k] == cut)
                boundary = 1;
        }
        if (cut == 0) {
            CHECK(st == VMP_ERR_NOT_VMP);
        } else if (cut < s.frame_end[0]) {
            CHECK(st == VMP_ERR_TRUNCATED);
            CHECK_EQ_U64(vmp_reader_offset(r), 0);
        } else {
            CHECK(st == VMP_OK);
            st = read_all(r, &n);
            CHECK_EQ_U64(n, want);
            if (boundary) {
                CHECK(st == VMP_END);
            } else {
                CHECK(st == VMP_ERR_TRUNCATED);
                CHECK(vmp_reader_offset(r) < cut);
                CHECK(strstr(vmp_reader_errmsg(r), "cut.vmp: offset ") == vmp_reader_errmsg(r));
            }
        }
        if (st != VMP_END && st != VMP_ERR_TRUNCATED && cut > 0)
            fprintf(stderr, "  cut %zu: %s\n", cut, vmp_reader_errmsg(r));
        vmp_reader_close(r);
    }
    tb_free(&s.f);
}

static void test_flipped_checksum_byte_is_corrupt_after_earlier_chunks(void)
{
    small_file s;
    vmp_reader *r;
    uint64_t n;
    char want[64];

    build_small(&s);
    s.f.p[s.frame_end[2] - 1] ^= 0x40; /* last byte of chunk 1's checksum */
    CHECK(vmp_reader_open_memory(&r, s.f.p, s.f.len, "flip.vmp", NULL) == VMP_OK);
    CHECK(read_all(r, &n) == VMP_ERR_CORRUPT);
    CHECK_EQ_U64(n, 2); /* chunk 0 only: chunk 1 never delivered unverified */
    CHECK_EQ_U64(vmp_reader_offset(r), s.frame_end[1]);
    snprintf(want, sizeof want, "flip.vmp: offset %zu: chunk 1: zstd checksum mismatch",
             s.frame_end[1]);
    CHECK_STR(vmp_reader_errmsg(r), want);
    vmp_reader_close(r);
    tb_free(&s.f);
}

/* Any byte flipped in chunk 1: chunk 0 is delivered, chunk 1's records never
 * come out damaged, and the reader ends with an error (or reads on). */
static void test_every_flipped_byte_in_a_chunk(void)
{
    small_file s;
    size_t i;
    unsigned bit;

    build_small(&s);
    for (i = s.frame_end[1]; i < s.frame_end[2]; i++) {
        for (bit = 0; bit < 8; bit++) {
            vmp_reader *r;
            vmp_record rec;
            vmp_status st;
            uint64_t n = 0;

            s.f.p[i] ^= (uint8_t)(1u << bit);
            CHECK(vmp_reader_open_memory(&r, s.f.p, s.f.len, "flip.vmp", NULL) == VMP_OK);
            while ((st = vmp_reader_next(r, &rec)) == VMP_OK) {
                n++;
                if (rec.type == VMP_REC_SAMPLE && rec.chunk_index == 1)
                    CHECK(rec.u.sample.pc >= 200 && rec.u.sample.pc < 203);
            }
            CHECK(n >= 2);
            CHECK(st < 0 || st == VMP_END);
            if (st < 0) {
                CHECK(vmp_reader_offset(r) >= s.frame_end[1]);
                CHECK(n == 2);
            }
            vmp_reader_close(r);
            s.f.p[i] ^= (uint8_t)(1u << bit);
        }
    }
    tb_free(&s.f);
}

static void test_frame_without_checksum_or_content_size_is_rejected(void)
{
    tbuf f = {0}, c = {0};
    vmp_reader *r;
    uint64_t n;

    rec_start(&c, 1, VMP_REC_HEADER);
    /* spec R-CHK-1 */
    f_header(&f, 1, 0);
    f_chunk(&f, &c);
    f_chunk_ex(&f, c.p, c.len, 0, 1);
    CHECK(vmp_reader_open_memory(&r, f.p, f.len, "nock.vmp", NULL) == VMP_OK);
    CHECK(read_all(r, &n) == VMP_ERR_CORRUPT);
    CHECK_EQ_U64(n, 1);
    CHECK(strstr(vmp_reader_errmsg(r), "without a content checksum") != NULL);
    vmp_reader_close(r);
    f.len = 0;
    f_header(&f, 1, 0);
    f_chunk_ex(&f, c.p, c.len, 1, 0);
    CHECK(vmp_reader_open_memory(&r, f.p, f.len, "nosize.vmp", NULL) == VMP_OK);
    CHECK(read_all(r, &n) == VMP_ERR_CORRUPT);
    CHECK_EQ_U64(n, 0);
    CHECK(strstr(vmp_reader_errmsg(r), "without a content size") != NULL);
    CHECK_EQ_U64(vmp_reader_offset(r), 24);
    vmp_reader_close(r);
    tb_free(&f);
    tb_free(&c);
}

/* Counts allocations, to prove that a limit is checked before allocating. */
typedef struct counting {
    size_t allocs, bytes, live;
} counting;

static void *count_alloc(void *ud, size_t size)
{
    counting *c = ud;
    c->allocs++;
    c->bytes += size;
    c->live++;
    return malloc(size);
}

static void count_free(void *ud, void *p, size_t size)
{
    counting *c = ud;
    (void)size;
    c->live--;
    free(p);
}

static void test_huge_declared_content_size_is_a_limit(void)
{
    tbuf f = {0};
    /* zstd frame: magic, FHD (FCS 8 bytes, single segment, checksum), FCS = 1 TB */
    uint8_t frame[] = {0x28, 0xB5, 0x2F, 0xFD, 0xE4, 0, 0, 0, 0, 0, 1, 0, 0, 1, 2, 3, 4, 5};
    counting cnt = {0, 0, 0};
    vmp_allocator al = {count_alloc, count_free, &cnt};
    vmp_reader_options opts = VMP_READER_OPTIONS_INIT;
    vmp_reader *r;
    uint64_t n;
    size_t bytes_at_open;

    f_header(&f, 1, 0);
    tb_put(&f, frame, sizeof frame);
    opts.alloc = &al;
    CHECK(vmp_reader_open_memory(&r, f.p, f.len, "tb.vmp", &opts) == VMP_OK);
    bytes_at_open = cnt.bytes;
    CHECK(read_all(r, &n) == VMP_ERR_LIMIT);
    CHECK_EQ_U64(n, 0);
    CHECK_EQ_U64(vmp_reader_offset(r), 24);
    CHECK(strstr(vmp_reader_errmsg(r), "1099511627776 bytes exceeds the chunk limit") != NULL);
    CHECK(cnt.bytes - bytes_at_open < 4096); /* nothing for the content */
    vmp_reader_close(r);
    CHECK_EQ_U64(cnt.live, 0);
    tb_free(&f);
}

static void test_version_and_magic(void)
{
    tbuf f = {0};
    vmp_reader *r;
    vmp_record rec;
    vmp_reader_info info;

    /* spec R-HDR-3: a future major is refused, naming both versions */
    f_header(&f, 3, 0);
    CHECK(vmp_reader_open_memory(&r, f.p, f.len, "v3.vmp", NULL) == VMP_ERR_VERSION);
    CHECK(r != NULL);
    CHECK_STR(vmp_reader_errmsg(r),
              "v3.vmp: offset 0: format 3.0 is newer than this reader (reads 1.x and 2.x)");
    CHECK(vmp_reader_next(r, &rec) == VMP_ERR_VERSION);
    vmp_reader_close(r);

    /* spec R-HDR-1: bad magic */
    f.len = 0;
    f_header(&f, 1, 0);
    f.p[9] = 'X';
    CHECK(vmp_reader_open_memory(&r, f.p, f.len, "bad.vmp", NULL) == VMP_ERR_NOT_VMP);
    CHECK_STR(vmp_reader_errmsg(r), "bad.vmp: offset 0: not a vmp profile");
    vmp_reader_close(r);
    CHECK(vmp_reader_open_memory(&r, "hello, world, this is text", 26, "t.txt", NULL) ==
          VMP_ERR_NOT_VMP);
    vmp_reader_close(r);

    /* empty file */
    CHECK(vmp_reader_open_memory(&r, NULL, 0, "empty.vmp", NULL) == VMP_ERR_NOT_VMP);
    CHECK(strstr(vmp_reader_errmsg(r), "empty") != NULL);
    vmp_reader_close(r);

    /* header-only file: a clean end without records, and without END */
    f.len = 0;
    f_header(&f, 1, 3);
    CHECK(vmp_reader_open_memory(&r, f.p, f.len, "h.vmp", NULL) == VMP_OK);
    CHECK(vmp_reader_next(r, &rec) == VMP_END);
    vmp_reader_get_info(r, &info);
    CHECK_EQ_U64(info.format_major, 1);
    CHECK_EQ_U64(info.format_minor, 3);
    CHECK_EQ_U64(info.chunks, 0);
    CHECK_EQ_U64(info.records, 0);
    CHECK(info.seen_end == 0);
    vmp_reader_close(r);

    /* spec R-HDR-2: a longer header frame is skipped */
    f.len = 0;
    f_header(&f, 1, 1);
    f.p[4] = 20;
    tb_put(&f, "\1\2\3\4", 4);
    {
        tbuf c = {0};
        rec_start(&c, 1, VMP_REC_HEADER);
        f_chunk(&f, &c);
        tb_free(&c);
    }
    CHECK(vmp_reader_open_memory(&r, f.p, f.len, "h20.vmp", NULL) == VMP_OK);
    CHECK(vmp_reader_next(r, &rec) == VMP_OK);
    CHECK_EQ_U64(rec.chunk_offset, 28);
    CHECK(vmp_reader_next(r, &rec) == VMP_END);
    vmp_reader_close(r);

    /* garbage where a frame should start */
    f.len = 0;
    f_header(&f, 1, 0);
    tb_put(&f, "garbage!", 8);
    CHECK(vmp_reader_open_memory(&r, f.p, f.len, "g.vmp", NULL) == VMP_OK);
    CHECK(vmp_reader_next(r, &rec) == VMP_ERR_CORRUPT);
    CHECK(strstr(vmp_reader_errmsg(r), "g.vmp: offset 24: not a zstd frame") != NULL);
    vmp_reader_close(r);
    tb_free(&f);
}

/* Append a seek table frame to `s`: one entry per chunk when `agree` (its
 * samples and times wrong when `agree` is 2), else an empty table, which
 * contradicts the chunks. */
static void add_seek_table(small_file *s, int agree)
{
    /* chunk 0: one sample at 10; chunk 1: three at 10, 20, 30; chunk 2: END */
    static const uint64_t times[3][3] = {{10, 10, 1}, {10, 30, 3}, {0, 0, 0}};
    tbuf t = {0};
    uint8_t footer[8];
    uint32_t frame_size;
    size_t i;
    c_array(&t, agree ? 3 : 0);
    for (i = 0; agree && i < 3; i++) {
        c_array(&t, 6);
        c_uint(&t, s->frame_end[i]);
        c_uint(&t, s->frame_end[i + 1] - s->frame_end[i]);
        c_uint(&t, s->content_len[i]);
        c_uint(&t, times[i][0]);
        c_uint(&t, times[i][1]);
        c_uint(&t, times[i][2] + (agree == 2 && i == 1)); /* a lie: 4 samples */
    }
    frame_size = (uint32_t)(t.len + 8 + 8);
    footer[0] = (uint8_t)frame_size;
    footer[1] = (uint8_t)(frame_size >> 8);
    footer[2] = 0;
    footer[3] = 0;
    memcpy(footer + 4, "VMPS", 4);
    tb_put(&t, footer, 8);
    f_skippable(&s->f, VMP_SEEK_FRAME_MAGIC, t.p, t.len);
    tb_free(&t);
}

/* spec §6, R-SEEK-1: a seek table is noted when its entries agree with the
 * chunks (sample counts and times included), and treated as absent, with a
 * warning, when they contradict them. */
static void test_seek_table_is_noted_not_required(void)
{
    int agree;
    for (agree = 0; agree < 3; agree++) {
        small_file s;
        vmp_reader *r;
        vmp_reader_info info;
        uint64_t n;
        build_small(&s);
        add_seek_table(&s, agree);
        CHECK(vmp_reader_open_memory(&r, s.f.p, s.f.len, "seek.vmp", NULL) == VMP_OK);
        CHECK(read_all(r, &n) == VMP_END);
        CHECK_EQ_U64(n, 6);
        vmp_reader_get_info(r, &info);
        CHECK(info.seek_table == (agree == 1));
        CHECK((vmp_reader_warning(r) == NULL) == (agree == 1));
        if (agree != 1)
            CHECK(vmp_reader_warning(r) && strstr(vmp_reader_warning(r), "seek.vmp: offset ") &&
                  strstr(vmp_reader_warning(r), "treated as absent"));
        CHECK_EQ_U64(info.bytes_consumed, s.f.len);
        vmp_reader_close(r);
        tb_free(&s.f);
    }
}

/* A file larger than the input buffer, with incompressible strings. */
static void build_big(tbuf *f, int chunks, uint64_t *records)
{
    tbuf c = {0};
    uint32_t x = 12345;
    int k, i, j;

    *records = 0;
    f_header(f, 1, 0);
    for (k = 0; k < chunks; k++) {
        c.len = 0;
        for (i = 0; i < 100; i++) {
            uint8_t blob[1000];
            for (j = 0; j < (int)sizeof blob; j++) {
                x = x * 1103515245u + 12345u;
                blob[j] = (uint8_t)(x >> 16);
            }
            rec_start(&c, 3, VMP_REC_MODULE);
            kv_uint(&c, VMP_MOD_ID, (uint64_t)(k * 100 + i + 1));
            c_uint(&c, VMP_MOD_BUILD_ID);
            c_bstr(&c, blob, sizeof blob);
            (*records)++;
        }
        f_chunk(f, &c);
    }
    tb_free(&c);
}

static void write_all_and_exit(int fd, const tbuf *f)
{
    size_t off = 0;
    while (off < f->len) {
        ssize_t w = write(fd, f->p + off, f->len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            _exit(1);
        off += (size_t)w;
    }
    close(fd);
    _exit(0);
}

/* vmp_seek.h, spec R-SEEK-3: the table opened to seek, its lookups, and the
 * checks against the file that a table must pass before it is used. */
static void test_seek_table_api(void)
{
    small_file s;
    vmp_seek_table *t = NULL;
    char err[512];
    uint64_t end = 0;
    size_t idx = 9, i;
    const vmp_seek_entry *e;

    build_small(&s);
    CHECK(vmp_seek_table_open_memory(&t, s.f.p, s.f.len, "seek.vmp", err, sizeof err) == VMP_END);
    CHECK(t == NULL);
    add_seek_table(&s, 1);
    CHECK(vmp_seek_table_open_memory(&t, s.f.p, s.f.len, "seek.vmp", err, sizeof err) == VMP_OK);
    CHECK(vmp_seek_table_count(t) == 3);
    CHECK(vmp_seek_table_offset(t) == s.frame_end[3]);
    for (i = 0; i < 3; i++) {
        e = vmp_seek_table_entry(t, i);
        CHECK(e && e->offset == s.frame_end[i] && e->content_size == s.content_len[i]);
    }
    CHECK(vmp_seek_table_entry(t, 3) == NULL);
    CHECK(vmp_seek_table_end(t, &end, &idx) == 1 && end == 30 && idx == 1);
    CHECK(vmp_seek_table_find_time(t, 0) == 0);
    CHECK(vmp_seek_table_find_time(t, 11) == 1);
    CHECK(vmp_seek_table_find_time(t, 31) == 3);
    vmp_seek_table_free(t);
    /* chunk 1 read alone, behind the file header frame: its 3 samples */
    {
        char path[] = "/tmp/vmp-seek-XXXXXX";
        int fd = mkstemp(path);
        void *buf = NULL;
        size_t size = 0;
        uint64_t n = 0;
        vmp_reader *r = NULL;
        CHECK(fd >= 0 && write(fd, s.f.p, s.f.len) == (ssize_t)s.f.len);
        if (fd >= 0)
            close(fd);
        CHECK(vmp_seek_table_open_file(&t, path, err, sizeof err) == VMP_OK);
        CHECK(vmp_seek_table_read_chunk(t, path, 1, &buf, &size) == VMP_OK);
        CHECK(size == s.frame_end[0] + (s.frame_end[2] - s.frame_end[1]));
        CHECK(vmp_seek_table_read_chunk(t, path, 3, &buf, &size) == VMP_ERR_INVALID_ARG);
        CHECK(vmp_reader_open_memory(&r, buf, size, "chunk1", NULL) == VMP_OK);
        CHECK(read_all(r, &n) == VMP_END);
        CHECK_EQ_U64(n, 3);
        vmp_reader_close(r);
        free(buf);
        vmp_seek_table_free(t);
        unlink(path);
    }
    tb_free(&s.f);

    /* an entry whose chunk is not where it says: the table is not used */
    build_small(&s);
    add_seek_table(&s, 1);
    {
        /* the first entry's offset (24, one byte 0x18) becomes 25 */
        size_t k, table = s.frame_end[3] + 8;
        for (k = table; k < s.f.len && s.f.p[k] != 0x18; k++)
            ;
        CHECK(k < s.f.len);
        s.f.p[k] = 0x19;
    }
    CHECK(vmp_seek_table_open_memory(&t, s.f.p, s.f.len, "seek.vmp", err, sizeof err) ==
          VMP_ERR_CORRUPT);
    CHECK(t == NULL && strstr(err, "seek.vmp: offset ") && strstr(err, "entry 0"));
    tb_free(&s.f);

    /* a hostile table: an array claiming 2^31 entries in 5 bytes */
    {
        static const uint8_t hostile[] = {0x9a, 0x80, 0, 0, 0};
        CHECK(vmp_seek_table_parse(&t, hostile, sizeof hostile, "h.vmp", 100, err, sizeof err) ==
              VMP_ERR_CORRUPT);
        CHECK(t == NULL && strstr(err, "h.vmp: offset 100: seek table: "));
    }
    /* one sample, two times */
    {
        /* [[24, 10, 20, 5, 7, 1]]: offset 24, 10 bytes, 20 of content, one
         * sample at 5 and at 7 */
        static const uint8_t two_times[] = {0x81, 0x86, 0x18, 0x18, 0x0a, 0x14, 0x05, 0x07, 0x01};
        CHECK(vmp_seek_table_parse(&t, two_times, sizeof two_times, "h.vmp", 0, err, sizeof err) ==
              VMP_ERR_CORRUPT);
        CHECK(t == NULL && strstr(err, "one sample with two times"));
    }
}

static void test_reads_from_a_pipe_and_stdin(void)
{
    tbuf f = {0};
    uint64_t want, n;
    int fds[2], status;
    pid_t pid;
    vmp_reader *r;
    vmp_reader_info info;

    build_big(&f, 4, &want);
    CHECK(f.len > 3 * 128 * 1024);

    /* descriptor variant */
    CHECK(pipe(fds) == 0);
    pid = fork();
    if (pid == 0) {
        close(fds[0]);
        write_all_and_exit(fds[1], &f);
    }
    close(fds[1]);
    CHECK(vmp_reader_open_fd(&r, fds[0], "pipe", NULL) == VMP_OK);
    CHECK(read_all(r, &n) == VMP_END);
    CHECK_EQ_U64(n, want);
    vmp_reader_get_info(r, &info);
    CHECK_EQ_U64(info.bytes_consumed, f.len);
    vmp_reader_close(r);
    close(fds[0]);
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);

    /* "-" is standard input; the name in messages is "<stdin>" */
    CHECK(pipe(fds) == 0);
    pid = fork();
    if (pid == 0) {
        close(fds[0]);
        write_all_and_exit(fds[1], &f);
    }
    close(fds[1]);
    {
        int saved = dup(STDIN_FILENO);
        CHECK(dup2(fds[0], STDIN_FILENO) == STDIN_FILENO);
        close(fds[0]);
        CHECK(vmp_reader_open_file(&r, "-", NULL) == VMP_OK);
        CHECK(read_all(r, &n) == VMP_END);
        CHECK_EQ_U64(n, want);
        vmp_reader_close(r);
        CHECK(dup2(saved, STDIN_FILENO) == STDIN_FILENO);
        close(saved);
    }
    CHECK(waitpid(pid, &status, 0) == pid);

    /* truncated stdin names "<stdin>" */
    CHECK(pipe(fds) == 0);
    pid = fork();
    if (pid == 0) {
        close(fds[0]);
        f.len -= 10;
        write_all_and_exit(fds[1], &f);
    }
    close(fds[1]);
    {
        int saved = dup(STDIN_FILENO);
        CHECK(dup2(fds[0], STDIN_FILENO) == STDIN_FILENO);
        close(fds[0]);
        CHECK(vmp_reader_open_file(&r, "-", NULL) == VMP_OK);
        CHECK(read_all(r, &n) == VMP_ERR_TRUNCATED);
        CHECK_EQ_U64(n, want - 100);
        CHECK(strncmp(vmp_reader_errmsg(r), "<stdin>: offset ", 16) == 0);
        CHECK(strstr(vmp_reader_errmsg(r), "chunk 3: file ends inside the zstd frame") != NULL);
        vmp_reader_close(r);
        CHECK(dup2(saved, STDIN_FILENO) == STDIN_FILENO);
        close(saved);
    }
    CHECK(waitpid(pid, &status, 0) == pid);
    tb_free(&f);
}

static void test_reads_a_file_by_path(void)
{
    const char *path = "test_reader_container.tmp.vmp";
    small_file s;
    FILE *fp;
    vmp_reader *r;
    uint64_t n;

    build_small(&s);
    fp = fopen(path, "wb");
    CHECK(fp != NULL);
    if (fp == NULL)
        return;
    CHECK(fwrite(s.f.p, 1, s.f.len, fp) == s.f.len);
    fclose(fp);
    CHECK(vmp_reader_open_file(&r, path, NULL) == VMP_OK);
    CHECK(read_all(r, &n) == VMP_END);
    CHECK_EQ_U64(n, 6);
    vmp_reader_close(r);
    remove(path);

    /* a read error (a directory) is an i/o error naming errno's text */
    CHECK(vmp_reader_open_file(&r, ".", NULL) == VMP_ERR_IO);
    CHECK(strstr(vmp_reader_errmsg(r), ".: offset 0: read failed: ") != NULL);
    vmp_reader_close(r);

    CHECK(vmp_reader_open_file(&r, "no/such/file.vmp", NULL) == VMP_ERR_IO);
    CHECK(strstr(vmp_reader_errmsg(r), "no/such/file.vmp: offset 0: cannot open: ") != NULL);
    vmp_reader_close(r);
    tb_free(&s.f);
}

/* An empty chunk is a chunk with no records. */
static void test_empty_chunk(void)
{
    tbuf f = {0}, c = {0};
    vmp_reader *r;
    vmp_reader_info info;
    uint64_t n;

    f_header(&f, 1, 0);
    f_chunk(&f, &c);
    rec_start(&c, 1, VMP_REC_END);
    f_chunk(&f, &c);
    CHECK(vmp_reader_open_memory(&r, f.p, f.len, "e.vmp", NULL) == VMP_OK);
    CHECK(read_all(r, &n) == VMP_END);
    CHECK_EQ_U64(n, 1);
    vmp_reader_get_info(r, &info);
    CHECK_EQ_U64(info.chunks, 2);
    vmp_reader_close(r);
    tb_free(&f);
    tb_free(&c);
}

typedef struct peak {
    size_t live, peak;
} peak;

static void *peak_alloc(void *ud, size_t size)
{
    peak *p = ud;
    p->live += size;
    if (p->live > p->peak)
        p->peak = p->live;
    return malloc(size);
}

static void peak_free(void *ud, void *ptr, size_t size)
{
    peak *p = ud;
    p->live -= size;
    free(ptr);
}

/* Memory depends on the chunk size, not on the file size. */
static size_t peak_reading(const tbuf *f, uint64_t want)
{
    peak pk = {0, 0};
    vmp_allocator al = {peak_alloc, peak_free, &pk};
    vmp_reader_options opts = VMP_READER_OPTIONS_INIT;
    vmp_reader *r;
    uint64_t n;
    int fds[2], status;
    pid_t pid;

    opts.alloc = &al;
    CHECK(pipe(fds) == 0);
    pid = fork();
    if (pid == 0) {
        close(fds[0]);
        write_all_and_exit(fds[1], f);
    }
    close(fds[1]);
    CHECK(vmp_reader_open_fd(&r, fds[0], "pipe", &opts) == VMP_OK);
    CHECK(read_all(r, &n) == VMP_END);
    CHECK_EQ_U64(n, want);
    vmp_reader_close(r);
    close(fds[0]);
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK_EQ_U64(pk.live, 0);
    return pk.peak;
}

static void test_memory_is_bounded_by_the_chunk_not_the_file(void)
{
    tbuf small = {0}, large = {0};
    uint64_t n_small, n_large;
    size_t p_small, p_large;

    build_big(&small, 2, &n_small);
    build_big(&large, 40, &n_large);
    CHECK(large.len > 4000000);
    p_small = peak_reading(&small, n_small);
    p_large = peak_reading(&large, n_large);
    fprintf(stderr, "  peak %zu bytes for %zu file bytes, %zu for %zu\n", p_small, small.len,
            p_large, large.len);
    CHECK(p_large <= p_small + 1024); /* later chunks hold slightly longer ids */
    CHECK(p_large < ((size_t)1 << 20));
    tb_free(&small);
    tb_free(&large);
}

static void test_bad_arguments(void)
{
    vmp_reader *r = NULL;
    vmp_reader_options opts = VMP_READER_OPTIONS_INIT;

    CHECK(vmp_reader_open_memory(NULL, "", 0, "x", NULL) == VMP_ERR_INVALID_ARG);
    opts.version = 99;
    CHECK(vmp_reader_open_memory(&r, "", 0, "x", &opts) == VMP_ERR_INVALID_ARG);
    CHECK(r == NULL);
    CHECK(vmp_reader_open_fd(&r, -1, "x", NULL) == VMP_ERR_INVALID_ARG);
    vmp_reader_close(NULL);
    CHECK_STR(vmp_reader_errmsg(NULL), "");
}

int main(void)
{
    VMP_TEST_RUN(test_whole_small_file_reads);
    VMP_TEST_RUN(test_cut_at_every_offset);
    VMP_TEST_RUN(test_flipped_checksum_byte_is_corrupt_after_earlier_chunks);
    VMP_TEST_RUN(test_every_flipped_byte_in_a_chunk);
    VMP_TEST_RUN(test_frame_without_checksum_or_content_size_is_rejected);
    VMP_TEST_RUN(test_huge_declared_content_size_is_a_limit);
    VMP_TEST_RUN(test_version_and_magic);
    VMP_TEST_RUN(test_seek_table_is_noted_not_required);
    VMP_TEST_RUN(test_seek_table_api);
    VMP_TEST_RUN(test_reads_from_a_pipe_and_stdin);
    VMP_TEST_RUN(test_reads_a_file_by_path);
    VMP_TEST_RUN(test_empty_chunk);
    VMP_TEST_RUN(test_memory_is_bounded_by_the_chunk_not_the_file);
    VMP_TEST_RUN(test_bad_arguments);
    VMP_TEST_EXIT();
}
