/* SPDX-License-Identifier: MIT
 *
 * test_alloc_fail.c - every allocation of the reader, the analysis, the
 * profile and the flame graph fails in turn: each run ends in a clean
 * VMP_ERR_NOMEM, and nothing leaks (spec.md §9: a reader treats every file
 * as untrusted and stays in control of its memory).
 *
 * The reader's allocations go through its allocator hook
 * (vmp_reader_options.alloc).  The analysis, profile and flame graph
 * allocate with malloc and friends; this executable is linked with
 * --wrap=malloc,calloc,realloc,free, so the wrappers below see (and fail) the
 * allocations of the statically linked library.  Both share one counter: run
 * k fails the k-th allocation of the whole pass.  Blocks are tracked in a
 * pointer set, so a leak is found in any build (LSan finds it as well in
 * the sanitizer build).
 *
 * usage: test_alloc_fail PROFILE...
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "vmp_analyze.h"
#include "vmp_convert.h"
#include "vmp_reader.h"
#include "vmp_test.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);

/* ---- counting, failing allocation ------------------------------------------- */

static int armed;         /* count (and maybe fail) allocations */
static uint64_t count;    /* allocations attempted while armed */
static uint64_t fail_at;  /* 1-based allocation that fails; 0 == none */
static uint64_t failures; /* allocations failed */
static uintptr_t *live;   /* open-addressing set of live blocks */
static size_t live_cap = 1u << 20, live_n;
static size_t reader_live; /* blocks of the reader's hook not yet freed */
static int reader_size_mismatch;

static size_t slot_of(uintptr_t p)
{
    uint64_t h = (uint64_t)p * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 44) & (live_cap - 1);
}

static void live_add(void *ptr)
{
    if (live_n + 1 >= live_cap / 2)
        abort(); /* the test's own limit: far more than these files need */
    size_t i = slot_of((uintptr_t)ptr);
    while (live[i] != 0)
        i = (i + 1) & (live_cap - 1);
    live[i] = (uintptr_t)ptr;
    live_n++;
}

/* Remove `ptr` if tracked (blocks allocated before arming are not). */
static void live_del(void *ptr)
{
    size_t i = slot_of((uintptr_t)ptr);
    while (live[i] != 0) {
        if (live[i] == (uintptr_t)ptr) {
            /* backward-shift deletion keeps probe chains intact */
            size_t j = i;
            for (;;) {
                live[i] = 0;
                for (;;) {
                    j = (j + 1) & (live_cap - 1);
                    if (live[j] == 0) {
                        live_n--;
                        return;
                    }
                    size_t k = slot_of(live[j]);
                    if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
                        continue;
                    break;
                }
                live[i] = live[j];
                i = j;
            }
        }
        i = (i + 1) & (live_cap - 1);
    }
}

static int should_fail(void)
{
    if (!armed)
        return 0;
    count++;
    if (count == fail_at) {
        failures++;
        return 1;
    }
    return 0;
}

void *__wrap_malloc(size_t n)
{
    if (should_fail())
        return NULL;
    void *p = __real_malloc(n);
    if (p != NULL && armed)
        live_add(p);
    return p;
}

void *__wrap_calloc(size_t n, size_t size)
{
    if (should_fail())
        return NULL;
    void *p = __real_calloc(n, size);
    if (p != NULL && armed)
        live_add(p);
    return p;
}

void *__wrap_realloc(void *old, size_t n)
{
    if (should_fail())
        return NULL;
    void *p = __real_realloc(old, n);
    if (p != NULL && armed) {
        if (old != NULL)
            live_del(old);
        live_add(p);
    }
    return p;
}

void __wrap_free(void *p)
{
    if (p != NULL && armed)
        live_del(p);
    __real_free(p);
}

typedef struct hdr {
    size_t size;
    size_t pad;
} hdr;

static void *hook_alloc(void *ud, size_t size)
{
    (void)ud;
    if (should_fail())
        return NULL;
    hdr *h = __real_malloc(sizeof *h + size);
    if (h == NULL)
        return NULL;
    h->size = size;
    reader_live++;
    return h + 1;
}

static void hook_free(void *ud, void *ptr, size_t size)
{
    (void)ud;
    if (ptr == NULL)
        return;
    hdr *h = (hdr *)ptr - 1;
    if (h->size != size)
        reader_size_mismatch = 1;
    reader_live--;
    __real_free(h);
}

static const vmp_allocator hook = {hook_alloc, hook_free, NULL};

/* ---- one pass ------------------------------------------------------------------ */

typedef struct result {
    vmp_status st;
    uint64_t samples, flame_total;
    size_t folded_len;
} result;

/* Read `data` through a reader (with the hook) into a profile, then into a
 * flame graph written as folded stacks.  Stops at the first error. */
static result pass(const void *data, size_t size)
{
    result res = {VMP_OK, 0, 0, 0};
    vmp_reader_options ro = VMP_READER_OPTIONS_INIT;
    ro.alloc = &hook;
    vmp_reader *r = NULL;
    vmp_profile *p = NULL;
    vmp_flame *f = NULL;

    res.st = vmp_reader_open_memory(&r, data, size, "alloc", &ro);
    if (res.st < 0)
        goto done;
    res.st = vmp_profile_create(&p, NULL);
    if (res.st < 0)
        goto done;
    res.st = vmp_profile_read(p, r);
    if (res.st < 0)
        goto done;
    res.samples = vmp_profile_get_totals(p)->samples;
    vmp_reader_close(r);
    r = NULL;

    res.st = vmp_reader_open_memory(&r, data, size, "alloc", &ro);
    if (res.st < 0)
        goto done;
    res.st = vmp_flame_create(&f, NULL);
    if (res.st < 0)
        goto done;
    res.st = vmp_flame_read(f, r, 0);
    if (res.st < 0)
        goto done;
    res.flame_total = vmp_flame_total(f, 0);
    {
        /* The folded text goes to a temporary file: stdio's buffers are
         * libc's own and not counted. */
        FILE *out = tmpfile();
        CHECK(out != NULL);
        if (out != NULL) {
            res.st = vmp_flame_write_folded(f, out, 1.0);
            res.folded_len = (size_t)ftell(out);
            fclose(out);
        }
    }
done:
    vmp_flame_free(f);
    vmp_profile_free(p);
    vmp_reader_close(r);
    return res;
}

static void *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = __real_malloc(n > 0 ? (size_t)n : 1);
    if (buf != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        __real_free(buf);
        buf = NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return buf;
}

static void check_file(const char *path)
{
    size_t size = 0;
    void *data = slurp(path, &size);
    CHECK(data != NULL);
    if (data == NULL)
        return;

    /* Reference pass: nothing fails. */
    armed = 1;
    count = 0;
    fail_at = 0;
    result ref = pass(data, size);
    armed = 0;
    uint64_t total = count;
    CHECK(ref.st == VMP_OK);
    CHECK(live_n == 0 && reader_live == 0);
    CHECK(ref.samples > 0 && ref.flame_total == ref.samples);

    /* Fail each allocation in turn; for big totals, a stride keeps the run
     * short but still covers the first 300, the last 300 and every other
     * region. */
    uint64_t stride = total > 1500 ? total / 800 : 1, runs = 0, bad = 0;
    for (uint64_t k = 1; k <= total; k += (k <= 300 || k + 300 >= total) ? 1 : stride) {
        armed = 1;
        count = 0;
        failures = 0;
        fail_at = k;
        result res = pass(data, size);
        armed = 0;
        runs++;
        int ok = res.st == VMP_ERR_NOMEM && failures == 1 && live_n == 0 && reader_live == 0;
        if (!ok && bad++ < 5)
            fprintf(stderr,
                    "%s: allocation %llu of %llu failed: status %s, %llu live blocks, "
                    "%zu reader blocks\n",
                    path, (unsigned long long)k, (unsigned long long)total, vmp_status_str(res.st),
                    (unsigned long long)live_n, reader_live);
        CHECK(ok);
        live_n = 0; /* a leak was reported; start the next run clean */
        memset(live, 0, live_cap * sizeof *live);
        reader_live = 0;
    }
    CHECK(!reader_size_mismatch);
    printf("%s: %llu allocations, %llu failure runs, %llu samples\n", path,
           (unsigned long long)total, (unsigned long long)runs, (unsigned long long)ref.samples);
    __real_free(data);
}

int main(int argc, char **argv)
{
    live = mmap(NULL, live_cap * sizeof *live, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                -1, 0);
    if (live == MAP_FAILED)
        return 2;
    for (int i = 1; i < argc; i++)
        check_file(argv[i]);
    VMP_TEST_EXIT();
}
