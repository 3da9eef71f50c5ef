/* SPDX-License-Identifier: MIT
 *
 * test_flame_api.c - the flame graph API of convert/vmp_convert.h on a small
 * hand-written profile (spec.md §5.7 code objects, §5.11 stacks, §5.12
 * samples): exact folded lines (names, ';' and control characters replaced,
 * tiers, failed and unknown samples, weights), XML escaping of names that are
 * not valid UTF-8, the per-function diff, and the argument checks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_convert.h"
#include "vmp_test.h"
#include "vmp_writer.h"

enum {
    F_AB = 1,
    F_BAD = 2,
    F_SYM = 3
};

/* The profile, written in the working directory. */
static const char path[] = "flame_api.vmp";

static void write_profile(void)
{
    static const char *const states[] = {"run", "gc"};
    static const char *const kinds[] = {"method", "interpreter"};
    static const char *const reasons[] = {"lost;walk"};
    vmp_writer_meta meta;
    vmp_writer *w = NULL;
    vmp_function fn;
    vmp_code_object co;
    vmp_pc_pair map[2] = {{0, 1}, {0x40, 9}};
    vmp_frame fr[3];
    vmp_sample s;

    memset(&meta, 0, sizeof meta);
    meta.vm_name = "test";
    meta.states = states;
    meta.n_states = 2;
    meta.code_kinds = kinds;
    meta.n_code_kinds = 2;
    meta.failure_reasons = reasons;
    meta.n_failure_reasons = 1;
    CHECK(vmp_writer_open(&w, path, &meta, NULL) == VMP_OK);
    CHECK(vmp_writer_thread(w, 1, "main\nthread", 0) == VMP_OK);

    memset(&fn, 0, sizeof fn);
    fn.id = F_AB;
    fn.name = "a;b";
    fn.scope = "K<&>";
    fn.bytecode_size = 20;
    CHECK(vmp_writer_function(w, &fn) == VMP_OK);
    fn.id = F_BAD;
    fn.name = "bad\xff\x01utf8";
    fn.scope = NULL;
    CHECK(vmp_writer_function(w, &fn) == VMP_OK);
    fn.id = F_SYM;
    fn.name = "sym";
    CHECK(vmp_writer_function(w, &fn) == VMP_OK);

    memset(&co, 0, sizeof co);
    co.id = 1;
    co.kind = 0; /* method: JIT-compiled */
    co.function = F_AB;
    co.start = 0x1000;
    co.size = 0x100;
    co.pc_map = map;
    co.pc_map_len = 2;
    CHECK(vmp_writer_code_add(w, &co) == VMP_OK);
    co.id = 2;
    co.kind = 1; /* interpreter */
    co.function = F_BAD;
    co.start = 0x2000;
    co.pc_map = NULL;
    co.pc_map_len = 0;
    CHECK(vmp_writer_code_add(w, &co) == VMP_OK);

    memset(&s, 0, sizeof s);
    s.thread = 1;
    s.generation = VMP_GENERATION_CURRENT;
    s.frames = fr;
    /* in a;b at range 1->8, weight 3 */
    fr[0].kind = VMP_FRAME_PC;
    fr[0].value = 0x1010;
    s.pc = 0x1010;
    s.depth = 1;
    s.weight = 3;
    CHECK(vmp_writer_sample(w, &s) == VMP_OK);
    /* in bad (interpreter) called from a;b at range 9->19, weight 2, in GC */
    fr[0].value = 0x2010;
    fr[1].kind = VMP_FRAME_PC;
    fr[1].value = 0x1041; /* return address: resolves at 0x1040 */
    s.pc = 0x2010;
    s.depth = 2;
    s.weight = 2;
    s.state = 1;
    CHECK(vmp_writer_sample(w, &s) == VMP_OK);
    /* a symbolic frame called from a;b */
    fr[0].kind = VMP_FRAME_FUNCTION;
    fr[0].value = F_SYM;
    fr[0].bcpc = 5;
    s.pc = 0;
    s.weight = 1;
    s.state = 0;
    CHECK(vmp_writer_sample(w, &s) == VMP_OK);
    /* an unknown pc */
    fr[0].kind = VMP_FRAME_PC;
    fr[0].value = 0x9000;
    s.pc = 0x9000;
    s.depth = 1;
    CHECK(vmp_writer_sample(w, &s) == VMP_OK);
    /* a failed walk, its pc in K<&>.a;b's code (spec R-RES-7: under the
     * failure, the pc's frame) */
    s.depth = 0;
    s.weight = 4;
    s.pc = 0x1010;
    CHECK(vmp_writer_failed_sample(w, &s, 0) == VMP_OK);
    CHECK(vmp_writer_close(w, NULL) == VMP_OK);
}

static vmp_flame *load(unsigned int flags, int both)
{
    vmp_flame_options o = VMP_FLAME_OPTIONS_INIT;
    vmp_flame *f = NULL;
    vmp_reader *r = NULL;
    unsigned int c;
    o.flags = flags;
    CHECK(vmp_flame_create(&f, &o) == VMP_OK);
    for (c = 0; c < (both ? 2u : 1u); c++) {
        CHECK(vmp_reader_open_file(&r, path, NULL) == VMP_OK);
        CHECK(vmp_flame_read(f, r, c) == VMP_OK);
        vmp_reader_close(r);
    }
    return f;
}

/* The folded output of `f` (caller frees). */
static char *folded(vmp_flame *f, double scale)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *m = open_memstream(&buf, &size);
    CHECK(m != NULL);
    CHECK(vmp_flame_write_folded(f, m, scale) == VMP_OK);
    fclose(m);
    return buf;
}

static char *svg(vmp_flame *f, const vmp_flame_svg_options *o)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *m = open_memstream(&buf, &size);
    CHECK(m != NULL);
    CHECK(vmp_flame_write_svg(f, m, o) == VMP_OK);
    fclose(m);
    return buf;
}

static void test_folded_lines(void)
{
    vmp_flame *f = load(0, 0);
    char *out = folded(f, 1.0);
    /* Sorted byte-wise, depth first; ';' -> ':', control characters -> '?'. */
    CHECK_STR(out, "K<&>>>a:b 3\n"
                   "K<&>>>a:b;bad\xff?utf8 2\n"
                   "K<&>>>a:b;sym 1\n"
                   "[failed: lost:walk];K<&>>>a:b 4\n"
                   "[unknown] 1\n");
    CHECK(vmp_flame_total(f, 0) == 11);
    CHECK(vmp_flame_total(f, 1) == 0);
    free(out);
    vmp_flame_free(f);
}

static void test_folded_options(void)
{
    vmp_flame *f =
        load(VMP_FLAME_TIERS | VMP_FLAME_RANGES | VMP_FLAME_THREAD_ROOT | VMP_FLAME_STATE, 0);
    char *out = folded(f, 1.0);
    CHECK_STR(out, "main?thread;[gc];K<&>>>a:b_[j];K<&>>>a:b 9->19_[j];bad\xff?utf8_[0] 2\n"
                   "main?thread;[run];K<&>>>a:b_[j];K<&>>>a:b 1->8_[j] 3\n"
                   "main?thread;[run];K<&>>>a:b_[j];K<&>>>a:b 9->19_[j];sym;sym 5->5 1\n"
                   "main?thread;[run];[failed: lost:walk];K<&>>>a:b_[j];K<&>>>a:b 1->8_[j] 4\n"
                   "main?thread;[run];[unknown] 1\n");
    free(out);
    vmp_flame_free(f);
}

static void test_svg_escapes(void)
{
    vmp_flame *f = load(0, 0);
    vmp_flame_svg_options o = VMP_FLAME_SVG_OPTIONS_INIT;
    char *out;
    o.title = "T<\"'&>";
    o.min_width = 0.01;
    out = svg(f, &o);
    CHECK(strstr(out, "<title>K&lt;&amp;&gt;&gt;&gt;a:b\n") != NULL);
    CHECK(strstr(out, "bad\xef\xbf\xbd?utf8") != NULL);
    CHECK(strchr(out, '\xff') == NULL);
    CHECK(strstr(out, ">T&lt;&quot;&apos;&amp;&gt;</text>") != NULL);
    CHECK(strstr(out, "data-n=\"11\" data-d=\"0\"") != NULL);
    free(out);
    /* A differential graph needs two profiles. */
    o.diff = 1;
    CHECK(vmp_flame_write_svg(f, stdout, &o) == VMP_ERR_INVALID_ARG);
    vmp_flame_free(f);
}

static void test_diff_self(void)
{
    vmp_flame *f = load(0, 1);
    vmp_flame_delta *d = NULL;
    size_t n = 0, i;
    char *out = folded(f, 0.5);
    CHECK(strstr(out, "K<&>>>a:b 2 3\n") != NULL); /* 3 * 0.5 rounds to 2 */
    CHECK(strstr(out, "[failed: lost:walk];K<&>>>a:b 2 4\n") != NULL);
    free(out);
    CHECK(vmp_flame_diff(f, &d, &n) == VMP_OK);
    CHECK(n == 5);
    for (i = 0; i < n; i++) {
        CHECK(d[i].self_change == 0.0 && d[i].total_change == 0.0);
        CHECK(d[i].self[0] == d[i].self[1] && d[i].total[0] == d[i].total[1]);
        if (strcmp(d[i].name, "K<&>>>a:b") == 0) /* with the failed sample's 4 (R-RES-7) */
            CHECK(d[i].self[0] == 3 + 4 && d[i].total[0] == 6 + 4);
    }
    free(d);
    out = svg(f, &(vmp_flame_svg_options){VMP_FLAME_SVG_OPTIONS_VERSION, NULL, NULL, 0, 0.0, 1, 1});
    CHECK(strstr(out, "Differential flame graph") != NULL);
    free(out);
    vmp_flame_free(f);
}

/* A flame graph from a profile the caller read (one reading for every
 * view): the lines vmp_flame_read() makes, in both columns. */
static void test_from_profile(void)
{
    vmp_flame_options o = VMP_FLAME_OPTIONS_INIT;
    vmp_flame *f = NULL, *g = load(VMP_FLAME_TIERS | VMP_FLAME_STATE, 1);
    vmp_profile *p = NULL;
    vmp_reader *r = NULL;
    char *want = folded(g, 1.0), *got;
    o.flags = VMP_FLAME_TIERS | VMP_FLAME_STATE;
    CHECK(vmp_flame_create(&f, &o) == VMP_OK);
    CHECK(vmp_profile_create(&p, NULL) == VMP_OK);
    CHECK(vmp_reader_open_file(&r, path, NULL) == VMP_OK);
    CHECK(vmp_profile_read(p, r) == VMP_OK);
    vmp_reader_close(r);
    CHECK(vmp_flame_add_profile(f, p, 0) == VMP_OK);
    CHECK(vmp_flame_add_profile(f, p, 1) == VMP_OK);
    CHECK(vmp_flame_add_profile(f, p, 2) == VMP_ERR_INVALID_ARG);
    CHECK(vmp_flame_add_profile(f, NULL, 0) == VMP_ERR_INVALID_ARG);
    vmp_profile_free(p); /* borrowed for the call only */
    got = folded(f, 1.0);
    CHECK_STR(got, want);
    CHECK(vmp_flame_total(f, 1) == 11);
    free(got);
    free(want);
    vmp_flame_free(f);
    vmp_flame_free(g);
}

static void test_arguments(void)
{
    vmp_flame_options bad = {99, 0};
    vmp_flame *f = NULL;
    vmp_reader *r = NULL;
    CHECK(vmp_flame_create(NULL, NULL) == VMP_ERR_INVALID_ARG);
    CHECK(vmp_flame_create(&f, &bad) == VMP_ERR_INVALID_ARG && f == NULL);
    CHECK(vmp_flame_create(&f, NULL) == VMP_OK);
    CHECK(vmp_reader_open_file(&r, path, NULL) == VMP_OK);
    CHECK(vmp_flame_read(f, r, 2) == VMP_ERR_INVALID_ARG);
    CHECK(vmp_flame_read(f, r, 0) == VMP_OK);
    CHECK(vmp_flame_read(f, r, 0) == VMP_ERR_INVALID_ARG); /* a column is read once */
    vmp_reader_close(r);
    CHECK(vmp_flame_write_folded(f, NULL, 1.0) == VMP_ERR_INVALID_ARG);
    CHECK(vmp_flame_write_folded(f, stdout, -1.0) == VMP_ERR_INVALID_ARG);
    vmp_flame_free(f);
    vmp_flame_free(NULL);
}

int main(void)
{
    write_profile();
    VMP_TEST_RUN(test_folded_lines);
    VMP_TEST_RUN(test_folded_options);
    VMP_TEST_RUN(test_svg_escapes);
    VMP_TEST_RUN(test_diff_self);
    VMP_TEST_RUN(test_from_profile);
    VMP_TEST_RUN(test_arguments);
    VMP_TEST_EXIT();
}
