/* SPDX-License-Identifier: MIT
 *
 * test_code_map.c - format 1.2 CODE_MAP records (spec.md §5.7, R-CODE-3) end
 * to end: a file written with the tools' record writer
 * (analyze/vmp_record_writer.h) reads back with the same records and the
 * header's format_minor 2, re-encodes to the same bytes, is valid, resolves
 * a code object without a map only from its CODE_MAP on, and keeps doing so
 * through filter and merge (which renumber code and function ids); the
 * validator flags a CODE_MAP of no earlier code object, or of one with its
 * own map, with R-CODE-3, and accepts a second CODE_MAP.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_analyze.h"
#include "vmp_reader.h"
#include "vmp_record_writer.h"
#include "vmp_rewrite.h"
#include "vmp_test.h"
#include "vmp_validate.h"

#define STR(lit)            \
    {                       \
        lit, sizeof lit - 1 \
    }

static const vmp_str states[] = {STR("running")};
static const vmp_str kinds[] = {STR("method")};
/* the map code object 1 gets: bcpc 7 from offset 0x20, and from offset 0x28
 * function 2 at bcpc 3 inlined into function 1 at bcpc 7 */
static const uint64_t map_pcs[] = {0x20, 7};
static const uint64_t inline_frames[] = {2, 3, 1, 7};
static const vmp_rec_inline map_inlines[] = {{0x28, inline_frames, 2}};

/* What a test file holds, in order. */
enum {
    F_PLAIN = 0,           /* HEADER ... SAMPLE, CODE_MAP, SAMPLE */
    F_NO_MAP = 1,          /* without the CODE_MAP (a 1.0 file) */
    F_MAP_TWICE = 2,       /* a second CODE_MAP for code 1 after the first */
    F_MAP_UNDEFINED = 4,   /* a CODE_MAP for code 9, which nothing defines */
    F_MAP_FIRST = 8,       /* the CODE_MAP before the CODE_OBJECT */
    F_OWN_MAP = 16,        /* code 1's CODE_OBJECT has a pc_map of its own */
    F_MAP_PAST_SIZE = 32,  /* the CODE_MAP's pc_map goes past the code */
    F_FREED_THEN_MAP = 64, /* code 1 freed (generation 1) before its CODE_MAP */
};

typedef struct buf {
    unsigned char *p;
    size_t n;
} buf;

static void slurp(FILE *fp, buf *b)
{
    long n;
    CHECK(fseek(fp, 0, SEEK_END) == 0);
    n = ftell(fp);
    CHECK(n > 0);
    b->n = (size_t)n;
    b->p = malloc(b->n);
    CHECK(b->p != NULL);
    rewind(fp);
    CHECK(fread(b->p, 1, b->n, fp) == b->n);
    fclose(fp);
}

static vmp_record_writer *open_writer(FILE **fp, unsigned min_minor)
{
    vmp_record_writer_options o = VMP_RECORD_WRITER_OPTIONS_INIT;
    vmp_record_writer *w = NULL;
    o.min_minor = min_minor;
    o.format_major = 1; /* the 1.x minors this test is about */
    *fp = tmpfile();
    CHECK(*fp != NULL);
    CHECK(vmp_record_writer_open_fd(&w, fileno(*fp), "test", &o) == VMP_OK);
    return w;
}

static void put(vmp_record_writer *w, const vmp_record *r)
{
    CHECK(vmp_record_writer_write(w, r) == VMP_OK);
}

static void put_function(vmp_record_writer *w, uint64_t id, const char *scope, const char *name)
{
    vmp_record r;
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_FUNCTION;
    r.u.function.id = id;
    r.u.function.scope.s = scope;
    r.u.function.scope.len = strlen(scope);
    r.u.function.name.s = name;
    r.u.function.name.len = strlen(name);
    r.u.function.bytecode_size = 20;
    put(w, &r);
}

static void put_code_map(vmp_record_writer *w, uint64_t id, uint64_t first_offset)
{
    vmp_record r;
    uint64_t pcs[2] = {first_offset, map_pcs[1]};
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_CODE_MAP;
    r.u.code_map.id = id;
    r.u.code_map.pc_map = pcs;
    r.u.code_map.pc_map_len = 1;
    r.u.code_map.inlines = map_inlines;
    r.u.code_map.n_inlines = 1;
    put(w, &r);
}

static void put_sample(vmp_record_writer *w, uint64_t t, uint64_t gen)
{
    vmp_record r;
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_SAMPLE;
    r.u.sample.time_ns = t;
    r.u.sample.thread = 1;
    r.u.sample.generation = gen;
    r.u.sample.stack = 1;
    r.u.sample.weight = 1;
    put(w, &r);
}

/* A code object 1 of function 1 without a map, a sample in it, then its
 * CODE_MAP and a second sample at the same pc (as `what` varies it). */
static void build(buf *out, int what, unsigned min_minor)
{
    FILE *fp;
    vmp_record_writer *w = open_writer(&fp, min_minor);
    vmp_record r;
    uint64_t gen = 0;

    memset(&r, 0, sizeof r);
    r.type = VMP_REC_HEADER;
    r.u.header.producer = (vmp_str)STR("test_code_map");
    r.u.header.states = states;
    r.u.header.n_states = 1;
    r.u.header.code_kinds = kinds;
    r.u.header.n_code_kinds = 1;
    r.u.header.pointer_size = 8;
    put(w, &r);
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_THREAD;
    r.u.thread.id = 1;
    r.u.thread.name = (vmp_str)STR("main");
    put(w, &r);
    put_function(w, 1, "Foo", "bar");
    put_function(w, 2, "Baz", "qux");
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_CODE_ZONE;
    r.u.code_zone.id = 1;
    r.u.code_zone.name = (vmp_str)STR("code");
    r.u.code_zone.start = 0x1000;
    r.u.code_zone.end = 0x9000;
    put(w, &r);
    if (what & F_MAP_FIRST)
        put_code_map(w, 1, map_pcs[0]);
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_CODE_OBJECT;
    r.u.code_object.id = 1;
    r.u.code_object.zone = 1;
    r.u.code_object.function = 1;
    r.u.code_object.start = 0x1000;
    r.u.code_object.size = 0x100;
    if (what & F_OWN_MAP) {
        static const uint64_t own[] = {0x10, 1};
        r.u.code_object.pc_map = own;
        r.u.code_object.pc_map_len = 1;
    }
    put(w, &r);
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_STACK_NODE;
    r.u.stack_node.id = 1;
    r.u.stack_node.pc = 0x1030;
    put(w, &r);
    put_sample(w, 1000, 0);
    if (what & F_FREED_THEN_MAP) {
        memset(&r, 0, sizeof r);
        r.type = VMP_REC_CODE_FREE;
        r.u.code_free.generation = gen = 1;
        r.u.code_free.id = 1;
        put(w, &r);
    }
    if (what & F_MAP_UNDEFINED)
        put_code_map(w, 9, map_pcs[0]);
    else if (!(what & (F_NO_MAP | F_MAP_FIRST)))
        put_code_map(w, 1, what & F_MAP_PAST_SIZE ? 0x100 : map_pcs[0]);
    if (what & F_MAP_TWICE)
        put_code_map(w, 1, 0); /* ignored: the first holds */
    put_sample(w, 2000, 0);
    (void)gen;
    CHECK(vmp_record_writer_finish(w, NULL) == VMP_OK);
    vmp_record_writer_close(w);
    slurp(fp, out);
}

static vmp_reader *open_buf(const buf *b)
{
    vmp_reader *r = NULL;
    CHECK(vmp_reader_open_memory(&r, b->p, b->n, "test", NULL) == VMP_OK);
    return r;
}

static unsigned minor_of(const buf *b)
{
    return b->p[18] | (unsigned)b->p[19] << 8;
}

/* The validator's verdict: "" when valid, else the rule id. */
static const char *validate(const buf *b, char *rule, size_t size)
{
    vmp_reader *r = open_buf(b);
    vmp_validate_report rep;
    vmp_status st = vmp_validate(&rep, r);
    snprintf(rule, size, "%s", st == VMP_OK ? "" : rep.rule);
    if (st != VMP_OK && rep.rule[0] == '\0')
        snprintf(rule, size, "%s", vmp_status_str(st));
    vmp_reader_close(r);
    return rule;
}

/* The samples' innermost frames of `b`, formatted, joined by " | ". */
static void leaves(const buf *b, char *out, size_t size)
{
    vmp_analysis_options o = VMP_ANALYSIS_OPTIONS_INIT;
    vmp_analysis *a = NULL;
    vmp_reader *r = open_buf(b);
    vmp_asample s;
    vmp_status st;
    size_t n = 0;
    o.flags = VMP_ANALYSIS_INLINES;
    CHECK(vmp_analysis_create(&a, &o) == VMP_OK);
    out[0] = '\0';
    while ((st = vmp_analysis_next(a, r, &s)) == VMP_OK) {
        char frame[128];
        vmp_analysis_format_frame(a, frame, sizeof frame, s.leaf);
        n += (size_t)snprintf(out + n, size - n, "%s%s", n ? " | " : "", frame);
        CHECK(n < size);
    }
    CHECK(st == VMP_END);
    vmp_analysis_free(a);
    vmp_reader_close(r);
}

static void test_written_file_reads_back(void)
{
    buf b, again, plain;
    vmp_reader *r;
    vmp_reader_info info;
    vmp_record rec;
    vmp_status st;
    size_t maps = 0;
    FILE *fp;
    vmp_record_writer *w;
    char rule[64];

    build(&b, F_PLAIN, 2);
    CHECK_EQ_U64(minor_of(&b), 2);
    CHECK_STR(validate(&b, rule, sizeof rule), "");

    /* decode, and re-encode every record: the same bytes */
    r = open_buf(&b);
    vmp_reader_get_info(r, &info);
    w = open_writer(&fp, info.format_minor);
    while ((st = vmp_reader_next(r, &rec)) == VMP_OK) {
        if (rec.type == VMP_REC_END) {
            CHECK(vmp_record_writer_finish(w, &rec.u.end) == VMP_OK);
            continue;
        }
        if (rec.type == VMP_REC_CODE_MAP) {
            const vmp_rec_code_map *m = &rec.u.code_map;
            maps++;
            CHECK_EQ_U64(m->id, 1);
            CHECK_EQ_U64(m->pc_map_len, 1);
            CHECK_EQ_U64(m->pc_map[0], map_pcs[0]);
            CHECK_EQ_U64(m->pc_map[1], map_pcs[1]);
            CHECK_EQ_U64(m->n_inlines, 1);
            CHECK_EQ_U64(m->inlines[0].mcpc_offset, 0x28);
            CHECK_EQ_U64(m->inlines[0].depth, 2);
            CHECK(memcmp(m->inlines[0].frames, inline_frames, sizeof inline_frames) == 0);
        }
        CHECK(vmp_record_writer_write(w, &rec) == VMP_OK);
    }
    CHECK(st == VMP_END);
    vmp_reader_get_info(r, &info);
    CHECK_EQ_U64(info.format_minor, 2);
    CHECK_EQ_U64(info.unknown_records, 0);
    CHECK_EQ_U64(maps, 1);
    vmp_reader_close(r);
    vmp_record_writer_close(w);
    slurp(fp, &again);
    CHECK(again.n == b.n && memcmp(again.p, b.p, b.n) == 0);

    /* without a CODE_MAP and a newer minor asked for, the file stays 1.0 */
    build(&plain, F_NO_MAP, 0);
    CHECK_EQ_U64(minor_of(&plain), 0);
    free(plain.p);
    free(again.p);
    free(b.p);
}

/* spec R-CODE-3: the sample before the CODE_MAP resolves without the map
 * (no bytecode range, no inlined frame), the one after with it. */
static void test_map_applies_from_its_position(void)
{
    buf b;
    char got[512];
    build(&b, F_PLAIN, 2);
    leaves(&b, got, sizeof got);
    CHECK_STR(got, "Foo>>bar | Baz>>qux 3->3");
    free(b.p);

    /* code freed before its CODE_MAP: the map still holds for its samples */
    build(&b, F_FREED_THEN_MAP, 2);
    leaves(&b, got, sizeof got);
    CHECK_STR(got, "Foo>>bar | Baz>>qux 3->3");
    free(b.p);

    /* a second CODE_MAP (here: another pc_map) is ignored */
    build(&b, F_MAP_TWICE, 2);
    leaves(&b, got, sizeof got);
    CHECK_STR(got, "Foo>>bar | Baz>>qux 3->3");
    free(b.p);

    /* a CODE_MAP of unknown code is ignored */
    build(&b, F_MAP_UNDEFINED, 2);
    leaves(&b, got, sizeof got);
    CHECK_STR(got, "Foo>>bar | Foo>>bar");
    free(b.p);
}

/* The first CODE_MAP holds even when it is empty (spec R-CODE-3). */
static void test_empty_first_map_holds(void)
{
    vmp_analysis *a = NULL;
    vmp_record r;
    vmp_asample s;
    char frame[128];
    int is_sample;
    CHECK(vmp_analysis_create(&a, NULL) == VMP_OK);
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_FUNCTION;
    r.u.function.id = 1;
    r.u.function.scope = (vmp_str)STR("Foo");
    r.u.function.name = (vmp_str)STR("bar");
    r.u.function.bytecode_size = 20;
    CHECK(vmp_analysis_feed(a, &r, NULL, NULL) == VMP_OK);
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_CODE_OBJECT;
    r.u.code_object.id = 1;
    r.u.code_object.function = 1;
    r.u.code_object.start = 0x1000;
    r.u.code_object.size = 0x100;
    CHECK(vmp_analysis_feed(a, &r, NULL, NULL) == VMP_OK);
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_CODE_MAP;
    r.u.code_map.id = 1;
    CHECK(vmp_analysis_feed(a, &r, NULL, NULL) == VMP_OK);
    r.u.code_map.pc_map = map_pcs;
    r.u.code_map.pc_map_len = 1;
    CHECK(vmp_analysis_feed(a, &r, NULL, NULL) == VMP_OK);
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_SAMPLE;
    r.u.sample.pc = 0x1030;
    r.u.sample.has_pc = 1;
    r.u.sample.weight = 1;
    CHECK(vmp_analysis_feed(a, &r, &s, &is_sample) == VMP_OK);
    CHECK(is_sample);
    vmp_analysis_format_frame(a, frame, sizeof frame, s.leaf);
    CHECK_STR(frame, "Foo>>bar");
    vmp_analysis_free(a);
}

static void test_validator_rules(void)
{
    static const struct {
        int what;
        const char *rule;
    } cases[] = {
        {F_PLAIN, ""},
        {F_NO_MAP, ""},
        {F_MAP_TWICE, ""},      /* more than one CODE_MAP is accepted */
        {F_FREED_THEN_MAP, ""}, /* at every generation, moved or freed */
        {F_MAP_UNDEFINED, "R-CODE-3"},
        {F_MAP_FIRST, "R-CODE-3"},
        {F_OWN_MAP, "R-CODE-3"},
        {F_MAP_PAST_SIZE, "R-CODE-1"},
    };

    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        buf b;
        char rule[64];
        build(&b, cases[i].what, 2);
        validate(&b, rule, sizeof rule);
        if (strcmp(rule, cases[i].rule) != 0)
            fprintf(stderr, "case %d: got '%s'\n", cases[i].what, rule);
        CHECK_STR(rule, cases[i].rule);
        free(b.p);
    }
}

/* filter passes CODE_MAP on; merge renumbers its code id and the functions
 * of its inline chains as it does a CODE_OBJECT's. */
static void test_filter_and_merge_keep_maps(void)
{
    vmp_filter_options fo = VMP_FILTER_OPTIONS_INIT;
    buf b, f, m;
    vmp_reader *r, *in[2];
    vmp_record_writer *w;
    vmp_record rec;
    vmp_status st;
    FILE *fp;
    char err[256], got[512];
    uint64_t codes[4], n_codes = 0, maps = 0;

    build(&b, F_PLAIN, 2);
    r = open_buf(&b);
    w = open_writer(&fp, 2);
    CHECK(vmp_filter_run(NULL, w, r, &fo, err, sizeof err) == VMP_OK);
    vmp_record_writer_close(w);
    vmp_reader_close(r);
    slurp(fp, &f);
    CHECK_STR(validate(&f, err, sizeof err), "");
    leaves(&f, got, sizeof got);
    CHECK_STR(got, "Foo>>bar | Baz>>qux 3->3");

    in[0] = open_buf(&b);
    in[1] = open_buf(&f);
    w = open_writer(&fp, 2);
    CHECK(vmp_merge_run(NULL, w, in, NULL, 2, err, sizeof err) == VMP_OK);
    vmp_record_writer_close(w);
    vmp_reader_close(in[0]);
    vmp_reader_close(in[1]);
    slurp(fp, &m);
    CHECK_STR(validate(&m, err, sizeof err), "");
    leaves(&m, got, sizeof got);
    CHECK_STR(got, "Foo>>bar | Baz>>qux 3->3 | Foo>>bar | Baz>>qux 3->3");
    /* each CODE_MAP names the code object just defined for its input */
    r = open_buf(&m);
    while ((st = vmp_reader_next(r, &rec)) == VMP_OK) {
        if (rec.type == VMP_REC_CODE_OBJECT && n_codes < 4)
            codes[n_codes++] = rec.u.code_object.id;
        if (rec.type == VMP_REC_CODE_MAP) {
            CHECK(n_codes > 0 && rec.u.code_map.id == codes[n_codes - 1]);
            maps++;
        }
    }
    CHECK(st == VMP_END);
    CHECK_EQ_U64(n_codes, 2);
    CHECK(codes[0] != codes[1]);
    CHECK_EQ_U64(maps, 2);
    vmp_reader_close(r);
    free(b.p);
    free(f.p);
    free(m.p);
}

int main(void)
{
    VMP_TEST_RUN(test_written_file_reads_back);
    VMP_TEST_RUN(test_map_applies_from_its_position);
    VMP_TEST_RUN(test_empty_first_map_holds);
    VMP_TEST_RUN(test_validator_rules);
    VMP_TEST_RUN(test_filter_and_merge_keep_maps);
    VMP_TEST_EXIT();
}
