/* SPDX-License-Identifier: MIT
 *
 * test_combine.c - a sample's machine pc combined with its symbolic innermost
 * frame (the HotSpot agent's AsyncGetCallTrace stacks): compiled, inlined,
 * interpreted and other frames, line-table ranges, thread renames (spec.md
 * §5 "Resolution of a pc", §5.4, §5.5, §5.7, §5.11 "Frame order", §5.12;
 * rules in analyze/vmp_analyze.h).
 */
#include <string.h>

#include "vmp_analyze.h"
#include "vmp_test.h"

static const vmp_str kinds[] = {{"nmethod", 7}, {"interpreter", 11}, {"stub", 4}};
static const vmp_str kinds_inl[] = {{"nmethod", 7}, {"interpreter", 11}, {"inlined", 7}};
static const vmp_str states[] = {{"java", 4}, {"native/vm", 9}};
/* hotLoop's pc map: offset 0 -> bci 0, 0x10 -> 18, 0x40 -> 26, 0x80 -> 40 */
static const uint64_t map[] = {0x0, 0, 0x10, 18, 0x40, 26, 0x80, 40};
/* hotLoop's lines: bci 0 line 40, 10 -> 41, 18 -> 42, 26 -> 42, 40 -> 43 */
static const uint64_t lines[] = {0, 40, 10, 41, 18, 42, 26, 42, 40, 43};
/* at 0x20: helper (bci 7) inlined into hotLoop (bci 20); at 0x60: hotLoop alone */
static const uint64_t chain0[] = {2, 7, 1, 20};
static const uint64_t chain1[] = {1, 30};

static vmp_status feed(vmp_analysis *a, vmp_record *r)
{
    return vmp_analysis_feed(a, r, NULL, NULL);
}

static void function(vmp_analysis *a, uint64_t id, const char *name, uint64_t bcs, int with_lines)
{
    vmp_record r;
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_FUNCTION;
    r.u.function.id = id;
    r.u.function.name.s = name;
    r.u.function.name.len = strlen(name);
    r.u.function.scope.s = "Demo";
    r.u.function.scope.len = 4;
    r.u.function.bytecode_size = bcs;
    if (with_lines) {
        r.u.function.lines = lines;
        r.u.function.n_lines = 5;
    }
    CHECK(feed(a, &r) == VMP_OK);
}

static void code(vmp_analysis *a, uint64_t id, uint64_t kind, uint64_t fn, const char *name,
                 uint64_t start, uint64_t size)
{
    static vmp_rec_inline inl[2];
    vmp_record r;
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_CODE_OBJECT;
    r.u.code_object.id = id;
    r.u.code_object.zone = 1;
    r.u.code_object.kind = kind;
    r.u.code_object.function = fn;
    r.u.code_object.name.s = name;
    r.u.code_object.name.len = strlen(name);
    r.u.code_object.start = start;
    r.u.code_object.size = size;
    if (fn) {
        inl[0].mcpc_offset = 0x20;
        inl[0].frames = chain0;
        inl[0].depth = 2;
        inl[1].mcpc_offset = 0x60;
        inl[1].frames = chain1;
        inl[1].depth = 1;
        r.u.code_object.pc_map = map;
        r.u.code_object.pc_map_len = 4;
        r.u.code_object.inlines = inl;
        r.u.code_object.n_inlines = 2;
    }
    CHECK(feed(a, &r) == VMP_OK);
}

static void node(vmp_analysis *a, uint64_t id, uint64_t parent, int is_fn, uint64_t v, int64_t bc)
{
    vmp_record r;
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_STACK_NODE;
    r.u.stack_node.id = id;
    r.u.stack_node.parent = parent;
    r.u.stack_node.is_function = is_fn;
    if (is_fn)
        r.u.stack_node.function = v;
    else
        r.u.stack_node.pc = v;
    r.u.stack_node.has_bcpc = bc >= 0;
    r.u.stack_node.bcpc = bc >= 0 ? (uint64_t)bc : 0;
    CHECK(feed(a, &r) == VMP_OK);
}

/* The metadata of a small HotSpot-like profile:
 *   functions 1 Demo>>hotLoop (64 bytes, line table), 2 Demo>>helper (20
 *   bytes, no line table); function 3 is never defined;
 *   code 10: nmethod of hotLoop at 0x1000 (0x100 bytes), with helper
 *   inlined at [0x1020, 0x1060); code 11: the interpreter at 0x5000; code
 *   12: a stub at 0x7000;
 *   stacks: 1 = function 3 @4; 2 = 1 + hotLoop @22; 3 = 2 + helper @7;
 *   4 = machine frame 0x1040; 5 = 4 + helper @7; 6 = 2 + hotLoop @50. */
static void setup(vmp_analysis *a, const vmp_str *code_kinds)
{
    vmp_record r;
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_HEADER;
    r.u.header.code_kinds = code_kinds;
    r.u.header.n_code_kinds = 3;
    r.u.header.states = states;
    r.u.header.n_states = 2;
    CHECK(feed(a, &r) == VMP_OK);
    function(a, 1, "hotLoop", 64, 1);
    function(a, 2, "helper", 20, 0);
    code(a, 10, 0, 1, "", 0x1000, 0x100);
    code(a, 11, 1, 0, "Interpreter", 0x5000, 0x1000);
    code(a, 12, 2, 0, "arraycopy", 0x7000, 0x100);
    node(a, 1, 0, 1, 3, 4);
    node(a, 2, 1, 1, 1, 22);
    node(a, 3, 2, 1, 2, 7);
    node(a, 4, 0, 0, 0x1040, -1);
    node(a, 5, 4, 1, 2, 7);
    node(a, 6, 1, 1, 1, 50);
}

/* Resolve a sample of stack `stack` with pc `pc` (0 = none) at generation
 * `gen`; its innermost frame as "name A->B" into buf, its kind returned. */
static const char *leaf(vmp_analysis *a, uint64_t stack, uint64_t pc, uint64_t gen, char *buf,
                        size_t size)
{
    vmp_rec_sample smp;
    vmp_asample s;
    const vmp_aframe *fr;
    memset(&smp, 0, sizeof smp);
    smp.stack = stack;
    smp.pc = pc;
    smp.has_pc = pc != 0;
    smp.generation = gen;
    CHECK(vmp_analysis_resolve_sample(a, &smp, 0, &s) == VMP_OK);
    CHECK(s.stack != 0);
    CHECK(s.stack == 0 || vmp_analysis_stack(a, s.stack)->frame == s.leaf);
    vmp_analysis_format_frame(a, buf, size, s.leaf);
    fr = vmp_analysis_frame(a, s.leaf);
    return fr ? vmp_analysis_function(a, fr->function)->kind : "";
}

static int leaf_class(vmp_analysis *a, uint64_t stack, uint64_t pc)
{
    vmp_rec_sample smp;
    vmp_asample s;
    memset(&smp, 0, sizeof smp);
    smp.stack = stack;
    smp.pc = pc;
    smp.has_pc = pc != 0;
    CHECK(vmp_analysis_resolve_sample(a, &smp, 0, &s) == VMP_OK);
    return vmp_analysis_function(a, vmp_analysis_frame(a, s.leaf)->function)->code_class;
}

/* The caller of the innermost frame of a sample, formatted. */
static void caller(vmp_analysis *a, uint64_t stack, uint64_t pc, char *buf, size_t size)
{
    vmp_rec_sample smp;
    vmp_asample s;
    const vmp_astack *st;
    memset(&smp, 0, sizeof smp);
    smp.stack = stack;
    smp.pc = pc;
    smp.has_pc = 1;
    CHECK(vmp_analysis_resolve_sample(a, &smp, 0, &s) == VMP_OK);
    st = vmp_analysis_stack(a, s.stack);
    buf[0] = '\0';
    if (st && st->parent)
        vmp_analysis_format_frame(a, buf, size, vmp_analysis_stack(a, st->parent)->frame);
}

/* spec R-RES-5: a pc in the symbolic frame's function's code: one frame, the
 * code object's, with the pc map's range */
static void test_compiled_frame_takes_code_kind_and_pc_map_range(void)
{
    vmp_analysis *a = NULL;
    char buf[128];
    int pass;
    for (pass = 0; pass < 2; pass++) { /* twice: the second time from the caches */
        if (pass == 0) {
            CHECK(vmp_analysis_create(&a, NULL) == VMP_OK);
            setup(a, kinds);
        }
        /* 0x1070: hotLoop's own code (inline record of depth 1) */
        CHECK_STR(leaf(a, 2, 0x1070, 0, buf, sizeof buf), "nmethod");
        CHECK_STR(buf, "Demo>>hotLoop 26->39");
        /* 0x1010: before the first inline record */
        CHECK_STR(leaf(a, 2, 0x1010, 0, buf, sizeof buf), "nmethod");
        CHECK_STR(buf, "Demo>>hotLoop 18->25");
        /* 0x1030: helper's inlined code, but the frame says hotLoop: the
         * code object is hotLoop's, so hotLoop ran compiled there */
        CHECK_STR(leaf(a, 2, 0x1030, 0, buf, sizeof buf), "nmethod");
        CHECK_STR(buf, "Demo>>hotLoop 18->25");
        CHECK(leaf_class(a, 2, 0x1070) == VMP_CLASS_GENERATED);
        /* the callers keep their symbolic frames and bcpcs */
        caller(a, 2, 0x1070, buf, sizeof buf);
        CHECK_STR(buf, "function#3 4->4");
    }
    /* the same activation resolved from the pc alone: the same frame */
    {
        vmp_rec_sample smp;
        vmp_asample s1, s2;
        memset(&smp, 0, sizeof smp);
        smp.pc = 0x1070;
        smp.has_pc = 1;
        CHECK(vmp_analysis_resolve_sample(a, &smp, 0, &s1) == VMP_OK);
        smp.stack = 2;
        CHECK(vmp_analysis_resolve_sample(a, &smp, 0, &s2) == VMP_OK);
        CHECK(s1.leaf == s2.leaf);
    }
    vmp_analysis_free(a);
}

static void test_inlined_frame_takes_inline_record_bcpc(void)
{
    vmp_analysis *a = NULL;
    char buf[128];
    const vmp_afunction *f;
    vmp_rec_sample smp;
    vmp_asample s;
    int pass;
    for (pass = 0; pass < 2; pass++) {
        CHECK(vmp_analysis_create(&a, NULL) == VMP_OK);
        setup(a, pass ? kinds_inl : kinds);
        CHECK_STR(leaf(a, 3, 0x1030, 0, buf, sizeof buf), "inlined");
        CHECK_STR(buf, "Demo>>helper 7->7");
        CHECK(leaf_class(a, 3, 0x1030) == VMP_CLASS_GENERATED);
        /* its caller, hotLoop, stays a symbolic frame at its bcpc */
        caller(a, 3, 0x1030, buf, sizeof buf);
        CHECK_STR(buf, "Demo>>hotLoop 22->22");
        /* the code kind: the vocabulary's "inlined" when it has one */
        memset(&smp, 0, sizeof smp);
        smp.stack = 3;
        smp.pc = 0x1030;
        smp.has_pc = 1;
        CHECK(vmp_analysis_resolve_sample(a, &smp, 0, &s) == VMP_OK);
        f = vmp_analysis_function(a, vmp_analysis_frame(a, s.leaf)->function);
        CHECK(f->code_kind == (pass ? 2u : VMP_CODE_KIND_NONE));
        CHECK_EQ_U64(f->function_id, 2);
        /* helper's frame outside its inlined code: another function's code */
        CHECK_STR(leaf(a, 3, 0x1070, 0, buf, sizeof buf), "function");
        CHECK_STR(buf, "Demo>>helper 7->7");
        vmp_analysis_free(a);
    }
}

static void test_interpreted_frame_takes_line_range(void)
{
    vmp_analysis *a = NULL;
    char buf[128];
    uint64_t lo = 0, hi = 0;
    CHECK(vmp_analysis_create(&a, NULL) == VMP_OK);
    setup(a, kinds);
    /* bci 22: line 42 spans bcis 18..39 (two table entries, one line) */
    CHECK_STR(leaf(a, 2, 0x5100, 0, buf, sizeof buf), "interpreted");
    CHECK_STR(buf, "Demo>>hotLoop 18->39");
    CHECK(leaf_class(a, 2, 0x5100) == VMP_CLASS_GENERATED);
    /* bci 50: the last line runs to the end of the bytecode */
    CHECK_STR(leaf(a, 6, 0x5100, 0, buf, sizeof buf), "interpreted");
    CHECK_STR(buf, "Demo>>hotLoop 40->63");
    /* no FUNCTION record, so no line table: "b->b" */
    CHECK_STR(leaf(a, 1, 0x5000, 0, buf, sizeof buf), "interpreted");
    CHECK_STR(buf, "function#3 4->4");
    /* lines of ranges */
    CHECK(vmp_analysis_lines(a, 1, 18, 39, &lo, &hi) == 1);
    CHECK(lo == 42 && hi == 42);
    CHECK(vmp_analysis_lines(a, 1, 12, 45, &lo, &hi) == 1);
    CHECK(lo == 41 && hi == 43);
    CHECK(vmp_analysis_lines(a, 1, 0, 0, &lo, &hi) == 1);
    CHECK(lo == 40 && hi == 40);
    CHECK(vmp_analysis_lines(a, 2, 0, 5, &lo, &hi) == 0); /* no line table */
    CHECK(vmp_analysis_lines(a, 3, 0, 5, &lo, &hi) == 0); /* no such function */
    CHECK(vmp_analysis_lines(a, 1, 9, 8, &lo, &hi) == 0); /* empty range */
    vmp_analysis_free(a);
}

/* spec R-RES-5: a pc in no code of the symbolic frame's function keeps the
 * symbolic frame */
static void test_other_pcs_keep_the_symbolic_frame(void)
{
    vmp_analysis *a = NULL;
    vmp_record r;
    char buf[128];
    CHECK(vmp_analysis_create(&a, NULL) == VMP_OK);
    setup(a, kinds);
    /* a stub, an address nothing covers, no pc */
    CHECK_STR(leaf(a, 2, 0x7010, 0, buf, sizeof buf), "function");
    CHECK_STR(buf, "Demo>>hotLoop 22->22");
    CHECK(leaf_class(a, 2, 0x7010) == VMP_CLASS_SYMBOLIC);
    CHECK_STR(leaf(a, 2, 0x9999, 0, buf, sizeof buf), "function");
    CHECK_STR(leaf(a, 2, 0, 0, buf, sizeof buf), "function");
    CHECK_STR(buf, "Demo>>hotLoop 22->22");
    /* at the sample's generation: once the nmethod is freed (generation 1),
     * a sample of generation 1 no longer finds it; one of generation 0 does */
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_CODE_FREE;
    r.u.code_free.id = 10;
    r.u.code_free.generation = 1;
    CHECK(feed(a, &r) == VMP_OK);
    CHECK_STR(leaf(a, 2, 0x1070, 1, buf, sizeof buf), "function");
    CHECK_STR(buf, "Demo>>hotLoop 22->22");
    CHECK_STR(leaf(a, 2, 0x1070, 0, buf, sizeof buf), "nmethod");
    CHECK_STR(buf, "Demo>>hotLoop 26->39");
    vmp_analysis_free(a);
}

/* A machine caller under a symbolic innermost frame is a return address. */
static void test_machine_caller_is_a_return_address(void)
{
    vmp_analysis *a = NULL;
    char buf[128];
    CHECK(vmp_analysis_create(&a, NULL) == VMP_OK);
    setup(a, kinds);
    /* node 4 (0x1040) as the innermost frame resolves at 0x1040 ... */
    CHECK_STR(leaf(a, 4, 0x1040, 0, buf, sizeof buf), "nmethod");
    CHECK_STR(buf, "Demo>>hotLoop 26->39");
    /* ... and as a caller at 0x103f */
    caller(a, 5, 0x1030, buf, sizeof buf);
    CHECK_STR(buf, "Demo>>hotLoop 18->25");
    CHECK_STR(leaf(a, 4, 0x1040, 0, buf, sizeof buf), "nmethod");
    CHECK_STR(buf, "Demo>>hotLoop 26->39");
    vmp_analysis_free(a);
}

static void sample_rec(vmp_record *r, uint64_t stack, uint64_t pc, uint32_t state)
{
    memset(r, 0, sizeof *r);
    r->type = VMP_REC_SAMPLE;
    r->u.sample.stack = stack;
    r->u.sample.pc = pc;
    r->u.sample.has_pc = pc != 0;
    r->u.sample.state = state;
    r->u.sample.weight = 1;
    r->u.sample.thread = 5;
}

/* The profile's classes sum to the total; a Java method compiled, inlined
 * or interpreted counts as generated code. */
static void test_profile_classes_sum_to_total(void)
{
    static const uint64_t stacks[] = {2, 3, 2, 2, 2, 2};
    static const uint64_t pcs[] = {0x1070, 0x1030, 0x5100, 0x7010, 0x9999, 0};
    vmp_profile *p = NULL;
    vmp_record r;
    const vmp_profile_totals *t;
    const uint64_t *sc;
    size_t i, n = 0;
    CHECK(vmp_profile_create(&p, NULL) == VMP_OK);
    setup(vmp_profile_analysis(p), kinds);
    for (i = 0; i < 6; i++) {
        sample_rec(&r, stacks[i], pcs[i], i < 3 ? 0 : 1);
        CHECK(vmp_profile_feed(p, &r) == VMP_OK);
    }
    t = vmp_profile_get_totals(p);
    CHECK_EQ_U64(t->samples, 6);
    CHECK_EQ_U64(t->generated, 3);
    CHECK_EQ_U64(t->native, 0);
    CHECK_EQ_U64(t->unknown, 0);
    sc = vmp_profile_state_class_weights(p, &n);
    CHECK(n > 4 + VMP_CLASS_SYMBOLIC);
    if (n > 4 + VMP_CLASS_SYMBOLIC) {
        CHECK_EQ_U64(sc[VMP_CLASS_GENERATED], 3);
        CHECK_EQ_U64(sc[4 + VMP_CLASS_SYMBOLIC], 3);
    }
    vmp_profile_free(p);
}

static void thread_rec(vmp_analysis *a, uint64_t id, const char *name)
{
    vmp_record r;
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_THREAD;
    r.u.thread.id = id;
    r.u.thread.name.s = name;
    r.u.thread.name.len = strlen(name);
    CHECK(feed(a, &r) == VMP_OK);
}

static void test_renamed_thread_keeps_first_name(void)
{
    vmp_analysis *a = NULL;
    CHECK(vmp_analysis_create(&a, NULL) == VMP_OK);
    thread_rec(a, 5, "main");
    CHECK_STR(vmp_analysis_thread_name(a, 5), "main");
    thread_rec(a, 5, "DestroyJavaVM"); /* HotSpot, at ThreadEnd */
    CHECK_STR(vmp_analysis_thread_name(a, 5), "main (DestroyJavaVM)");
    thread_rec(a, 6, "worker");
    thread_rec(a, 6, "worker"); /* the same name again: no note */
    CHECK_STR(vmp_analysis_thread_name(a, 6), "worker");
    thread_rec(a, 7, ""); /* unnamed at first */
    thread_rec(a, 7, "late");
    CHECK_STR(vmp_analysis_thread_name(a, 7), "late");
    thread_rec(a, 8, "a");
    thread_rec(a, 8, "b");
    thread_rec(a, 8, "a"); /* back to its first name */
    CHECK_STR(vmp_analysis_thread_name(a, 8), "a");
    CHECK_STR(vmp_analysis_thread_name(a, 9), "thread#9");
    vmp_analysis_free(a);
}

int main(void)
{
    VMP_TEST_RUN(test_compiled_frame_takes_code_kind_and_pc_map_range);
    VMP_TEST_RUN(test_inlined_frame_takes_inline_record_bcpc);
    VMP_TEST_RUN(test_interpreted_frame_takes_line_range);
    VMP_TEST_RUN(test_other_pcs_keep_the_symbolic_frame);
    VMP_TEST_RUN(test_machine_caller_is_a_return_address);
    VMP_TEST_RUN(test_profile_classes_sum_to_total);
    VMP_TEST_RUN(test_renamed_thread_keeps_first_name);
    VMP_TEST_EXIT();
}
