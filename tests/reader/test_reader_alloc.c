/* SPDX-License-Identifier: MIT
 *
 * test_reader_alloc.c - every allocation the reader makes can fail: each
 * failure ends in VMP_ERR_NOMEM, cleanly and without a leak (spec.md §9).
 */
#include <stdlib.h>
#include <string.h>

#include "reader_fixture.h"
#include "vmp_test.h"

typedef struct failing {
    size_t n;         /* allocation number that fails (1-based); 0 = none */
    size_t count;     /* allocations attempted */
    size_t live;      /* blocks not yet freed */
    size_t live_size; /* bytes not yet freed */
    int size_mismatch;
} failing;

typedef struct hdr {
    size_t size;
    size_t pad;
} hdr;

static void *fail_alloc(void *ud, size_t size)
{
    failing *f = ud;
    hdr *h;

    f->count++;
    if (f->count == f->n)
        return NULL;
    h = malloc(sizeof *h + size);
    if (h == NULL)
        return NULL;
    h->size = size;
    f->live++;
    f->live_size += size;
    return h + 1;
}

static void fail_free(void *ud, void *p, size_t size)
{
    failing *f = ud;
    hdr *h = (hdr *)p - 1;

    if (h->size != size)
        f->size_mismatch = 1;
    f->live--;
    f->live_size -= h->size;
    free(h);
}

static void build(tbuf *f)
{
    tbuf c = {0};
    char big[20000];
    int i;

    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    f_header(f, 1, 0);
    rec_start(&c, 3, VMP_REC_HEADER);
    c_uint(&c, VMP_HDR_STATES);
    c_array(&c, 2);
    c_str(&c, "a");
    c_str(&c, "b");
    c_uint(&c, VMP_HDR_LABELS);
    c_map(&c, 1);
    c_str(&c, "k");
    c_str(&c, "v");
    rec_start(&c, 6, VMP_REC_CODE_OBJECT);
    kv_uint(&c, VMP_CODE_ID, 1);
    kv_uint(&c, VMP_CODE_START, 16);
    kv_uint(&c, VMP_CODE_SIZE, 16);
    c_uint(&c, VMP_CODE_PC_MAP);
    c_array(&c, 2);
    c_uint(&c, 1);
    c_uint(&c, 2);
    c_uint(&c, VMP_CODE_INLINE);
    c_array(&c, 1);
    c_array(&c, 3);
    c_uint(&c, 0);
    c_uint(&c, 5);
    c_uint(&c, 6);
    f_chunk(f, &c);
    c.len = 0;
    rec_start(&c, 3, VMP_REC_FUNCTION);
    kv_uint(&c, VMP_FN_ID, 2);
    kv_str(&c, VMP_FN_NAME, big);
    for (i = 0; i < 3; i++) {
        rec_start(&c, 2, VMP_REC_SAMPLE);
        kv_int(&c, VMP_SMP_TIME_DELTA, 5);
    }
    rec_start(&c, 2, VMP_REC_MODULE_SYMBOLS);
    kv_uint(&c, VMP_SYMS_MODULE, 1);
    rec_start(&c, 1, VMP_REC_END);
    f_chunk(f, &c);
    tb_free(&c);
}

/* Read the whole file with allocation `n` failing; return the final status. */
static vmp_status run(const tbuf *file, const char *path, failing *f)
{
    vmp_allocator al = {fail_alloc, fail_free, f};
    vmp_reader_options opts = VMP_READER_OPTIONS_INIT;
    vmp_reader *r;
    vmp_status st;
    uint64_t records = 0;

    opts.alloc = &al;
    if (path != NULL)
        st = vmp_reader_open_file(&r, path, &opts);
    else
        st = vmp_reader_open_memory(&r, file->p, file->len, "mem.vmp", &opts);
    if (st == VMP_OK) {
        st = read_all(r, &records);
        if (st == VMP_END)
            CHECK_EQ_U64(records, 8);
    }
    if (st == VMP_ERR_NOMEM && r != NULL)
        CHECK(strstr(vmp_reader_errmsg(r), "out of memory") != NULL);
    vmp_reader_close(r);
    return st;
}

static void fail_each_allocation(const tbuf *file, const char *path)
{
    size_t n;
    failing f;

    for (n = 1;; n++) {
        vmp_status st;

        memset(&f, 0, sizeof f);
        f.n = n;
        st = run(file, path, &f);
        CHECK_EQ_U64(f.live, 0);
        CHECK_EQ_U64(f.live_size, 0);
        CHECK(!f.size_mismatch);
        if (f.count < n) {
            /* allocation n was never reached: the run had no failure */
            CHECK(st == VMP_END);
            break;
        }
        if (st != VMP_ERR_NOMEM)
            fprintf(stderr, "  allocation %zu failing gave status %d\n", n, (int)st);
        CHECK(st == VMP_ERR_NOMEM);
        if (n > 1000) {
            CHECK(!"too many allocations");
            break;
        }
    }
    fprintf(stderr, "  %zu allocations, each failed in turn\n", n - 1);
    CHECK(n > 5);
}

static void test_every_allocation_failure_is_nomem_memory(void)
{
    tbuf file = {0};

    build(&file);
    fail_each_allocation(&file, NULL);
    tb_free(&file);
}

static void test_every_allocation_failure_is_nomem_file(void)
{
    const char *path = "test_reader_alloc.tmp.vmp";
    tbuf file = {0};
    FILE *fp;

    build(&file);
    fp = fopen(path, "wb");
    CHECK(fp != NULL);
    if (fp == NULL)
        return;
    CHECK(fwrite(file.p, 1, file.len, fp) == file.len);
    fclose(fp);
    fail_each_allocation(&file, path);
    remove(path);
    tb_free(&file);
}

int main(void)
{
    VMP_TEST_RUN(test_every_allocation_failure_is_nomem_memory);
    VMP_TEST_RUN(test_every_allocation_failure_is_nomem_file);
    VMP_TEST_EXIT();
}
