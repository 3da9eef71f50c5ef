/* SPDX-License-Identifier: MIT
 *
 * test_reader_mutate.c - hostile chunk contents: deterministic mutations of a
 * valid chunk (flipped, inserted, deleted bytes; cuts) must end in a clean
 * status, never a crash, hang or unbounded allocation (spec.md §9, R-LIM-1).
 * Run under ASan/UBSan to make "never a crash" mean something.
 */
#include <stdlib.h>
#include <string.h>

#include "reader_fixture.h"
#include "vmp_test.h"

static uint32_t rng_state = 0x9e3779b9u;

static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
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

static void mutate(tbuf *m, const tbuf *orig)
{
    int edits = 1 + (int)(rnd() % 4), e;

    m->len = 0;
    tb_put(m, orig->p, orig->len);
    for (e = 0; e < edits && m->len > 0; e++) {
        size_t at = rnd() % m->len;
        switch (rnd() % 5) {
        case 0: /* flip a bit */
            m->p[at] ^= (uint8_t)(1u << (rnd() % 8));
            break;
        case 1: /* random byte */
            m->p[at] = (uint8_t)rnd();
            break;
        case 2: /* interesting byte: big lengths, indefinite, break, tags, floats */
        {
            static const uint8_t hot[] = {0x1b, 0x3b, 0x5b, 0x7b, 0x9b, 0xbb, 0xdb, 0x9f,
                                          0xbf, 0xff, 0xfb, 0xf9, 0xc0, 0x00, 0x17};
            m->p[at] = hot[rnd() % sizeof hot];
            break;
        }
        case 3: /* delete a byte */
            memmove(m->p + at, m->p + at + 1, m->len - at - 1);
            m->len--;
            break;
        default: /* cut */
            m->len = at;
            break;
        }
    }
}

static void test_mutated_chunks_fail_cleanly(void)
{
    tbuf orig = {0}, m = {0}, f = {0};
    peak pk = {0, 0};
    vmp_allocator al = {peak_alloc, peak_free, &pk};
    vmp_reader_options opts = VMP_READER_OPTIONS_INIT;
    int i, ok = 0, corrupt = 0, limit = 0;

    opts.alloc = &al;
    build_all_types(&orig);
    for (i = 0; i < 3000; i++) {
        vmp_reader *r;
        vmp_record rec;
        vmp_status st;

        mutate(&m, &orig);
        f.len = 0;
        f_header(&f, 1, 0);
        f_chunk(&f, &m);
        pk.peak = pk.live = 0;
        CHECK(vmp_reader_open_memory(&r, f.p, f.len, "m.vmp", &opts) == VMP_OK);
        while ((st = vmp_reader_next(r, &rec)) == VMP_OK) {
            if (rec.type == VMP_REC_FUNCTION)
                CHECK(rec.u.function.name.s != NULL && rec.u.function.file.s != NULL);
            if (rec.type == VMP_REC_HEADER)
                CHECK(rec.u.header.n_states == 0 || rec.u.header.states != NULL);
        }
        CHECK(st == VMP_END || st == VMP_ERR_CORRUPT || st == VMP_ERR_LIMIT);
        if (st == VMP_END)
            ok++;
        else if (st == VMP_ERR_CORRUPT)
            corrupt++;
        else if (st == VMP_ERR_LIMIT)
            limit++;
        if (st < 0)
            CHECK(strncmp(vmp_reader_errmsg(r),
                          "m.vmp: offset 24: chunk 0, record at content "
                          "offset ",
                          45) == 0);
        vmp_reader_close(r);
        CHECK_EQ_U64(pk.live, 0);
        /* bounded memory: decoder state, input, chunk and arena, nowhere near
         * what any claimed length could ask for */
        CHECK(pk.peak < ((size_t)4 << 20));
    }
    fprintf(stderr, "  %d read through, %d corrupt, %d limit\n", ok, corrupt, limit);
    CHECK(corrupt > 0);
    tb_free(&orig);
    tb_free(&m);
    tb_free(&f);
}

int main(void)
{
    VMP_TEST_RUN(test_mutated_chunks_fail_cleanly);
    VMP_TEST_EXIT();
}
