/* SPDX-License-Identifier: MIT
 *
 * test_resolve.c - resolution of pcs through code generations, module
 * symbols and stacks, on hand-made records (spec.md §5 "Generations"
 * R-GEN-3, "Resolution of a pc", §5.3, §5.7-§5.12).
 */
#include <stdio.h>
#include <string.h>

#include "vmp_analyze.h"
#include "vmp_test.h"

static const vmp_str kinds[] = {{"method", 6}, {"closed PIC", 10}};
static const vmp_str states[] = {{"jit", 3}, {"gc", 2}};
static const uint64_t map1[] = {0x10, 1, 0x40, 5, 0x80, 3};

static vmp_status feed(vmp_analysis *a, vmp_record *r)
{
    return vmp_analysis_feed(a, r, NULL, NULL);
}

static void feed_module(vmp_analysis *a, uint64_t id, const char *path, uint64_t bias,
                        uint64_t start, uint64_t end)
{
    vmp_record r;
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_MODULE;
    r.u.module.id = id;
    r.u.module.path.s = path;
    r.u.module.path.len = strlen(path);
    r.u.module.bias = bias;
    r.u.module.start = start;
    r.u.module.end = end;
    CHECK(feed(a, &r) == VMP_OK);
}

static void feed_symbols(vmp_analysis *a, uint64_t module, const vmp_rec_symbol *syms, size_t n)
{
    vmp_record r;
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_MODULE_SYMBOLS;
    r.u.module_symbols.module = module;
    r.u.module_symbols.symbols = syms;
    r.u.module_symbols.n_symbols = n;
    CHECK(feed(a, &r) == VMP_OK);
}

/* Build the metadata every test uses: a method (code 1) of function 1 at
 * 0x1000, a module with a size-0 symbol and a mangled one. */
static void setup(vmp_analysis *a)
{
    vmp_record r;
    vmp_rec_symbol syms[2];

    memset(&r, 0, sizeof r);
    r.type = VMP_REC_HEADER;
    r.u.header.code_kinds = kinds;
    r.u.header.n_code_kinds = 2;
    r.u.header.states = states;
    r.u.header.n_states = 2;
    CHECK(feed(a, &r) == VMP_OK);

    memset(&r, 0, sizeof r);
    r.type = VMP_REC_FUNCTION;
    r.u.function.id = 1;
    r.u.function.name.s = "bar";
    r.u.function.name.len = 3;
    r.u.function.scope.s = "Foo";
    r.u.function.scope.len = 3;
    r.u.function.bytecode_size = 20;
    CHECK(feed(a, &r) == VMP_OK);

    memset(&r, 0, sizeof r);
    r.type = VMP_REC_CODE_OBJECT;
    r.u.code_object.id = 1;
    r.u.code_object.zone = 1;
    r.u.code_object.kind = 0;
    r.u.code_object.function = 1;
    r.u.code_object.start = 0x1000;
    r.u.code_object.size = 0x100;
    r.u.code_object.pc_map = map1;
    r.u.code_object.pc_map_len = 3;
    r.u.code_object.name.s = "";
    CHECK(feed(a, &r) == VMP_OK);

    feed_module(a, 1, "", 0x400000, 0x400100, 0x400200);

    syms[0].value = 0x180;
    syms[0].size = 0x10;
    syms[0].name.s = "_ZN2vm2gc7collectEv";
    syms[0].name.len = strlen(syms[0].name.s);
    syms[1].value = 0x100;
    syms[1].size = 0;
    syms[1].name.s = "zero";
    syms[1].name.len = 4;
    feed_symbols(a, 1, syms, 2);
}

static void compaction_moves_1_and_adds_pic(vmp_analysis *a)
{
    vmp_record r;
    uint64_t moves[] = {1, 0x2000};
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_CODE_COMPACTION;
    r.u.code_compaction.zone = 1;
    r.u.code_compaction.generation = 1;
    r.u.code_compaction.moves = moves;
    r.u.code_compaction.n_moves = 1;
    CHECK(feed(a, &r) == VMP_OK);
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_CODE_OBJECT;
    r.u.code_object.id = 2;
    r.u.code_object.zone = 1;
    r.u.code_object.kind = 1;
    r.u.code_object.start = 0x1000;
    r.u.code_object.size = 0x80;
    r.u.code_object.generation = 1;
    r.u.code_object.name.s = "PIC #x";
    r.u.code_object.name.len = 6;
    CHECK(feed(a, &r) == VMP_OK);
}

static void free_1(vmp_analysis *a)
{
    vmp_record r;
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_CODE_FREE;
    r.u.code_free.id = 1;
    r.u.code_free.generation = 2;
    CHECK(feed(a, &r) == VMP_OK);
}

static const char *at(vmp_analysis *a, uint64_t pc, uint64_t gen, int ret)
{
    static char buf[256];
    uint32_t f = 0;
    CHECK(vmp_analysis_resolve_pc(a, &f, pc, gen, ret) == VMP_OK);
    vmp_analysis_format_frame(a, buf, sizeof buf, f);
    return buf;
}

static const char *kind_at(vmp_analysis *a, uint64_t pc, uint64_t gen)
{
    uint32_t f = 0;
    CHECK(vmp_analysis_resolve_pc(a, &f, pc, gen, 0) == VMP_OK);
    return vmp_analysis_function(a, vmp_analysis_frame(a, f)->function)->kind;
}

static void test_resolve_bytecode_ranges(void)
{
    vmp_analysis *a = NULL;
    CHECK(vmp_analysis_create(&a, NULL) == VMP_OK);
    setup(a);
    CHECK_STR(at(a, 0x1005, 0, 0), "Foo>>bar");       /* before the first entry: no range */
    CHECK_STR(at(a, 0x1010, 0, 0), "Foo>>bar 1->4");  /* next bcpc 5 > 1 */
    CHECK_STR(at(a, 0x1050, 0, 0), "Foo>>bar 5->5");  /* next bcpc 3 < 5: B = A */
    CHECK_STR(at(a, 0x1090, 0, 0), "Foo>>bar 3->19"); /* last: bytecode_size - 1 */
    CHECK_STR(at(a, 0x1040, 0, 0), "Foo>>bar 5->5");
    CHECK_STR(at(a, 0x1040, 0, 1), "Foo>>bar 1->4"); /* a return address resolves at -1 */
    CHECK_STR(kind_at(a, 0x1040, 0), "method");
    CHECK_STR(at(a, 0x1100, 0, 0), "[unknown]"); /* end is exclusive */
    vmp_analysis_free(a);
}

/* spec R-RES-1: code object, else module symbol, else unknown */
static void test_resolve_symbols(void)
{
    vmp_analysis *a = NULL;
    CHECK(vmp_analysis_create(&a, NULL) == VMP_OK);
    setup(a);
    CHECK_STR(at(a, 0x400100, 0, 0), "zero");
    CHECK_STR(at(a, 0x40017f, 0, 0), "zero"); /* size 0: up to the next symbol */
    CHECK_STR(at(a, 0x400185, 0, 0), "vm::gc::collect()");
    CHECK_STR(kind_at(a, 0x400185, 0), "C");
    /* A pc inside a module that no symbol covers: module+0xOFFSET, offset =
     * pc - bias; a module without a path is named by its id (spec.md
     * "Resolution of a pc"). */
    CHECK_STR(at(a, 0x400190, 0, 0), "module#1+0x190");
    CHECK_STR(kind_at(a, 0x400190, 0), "C");
    CHECK_STR(at(a, 0x400191, 0, 1), "module#1+0x190"); /* return address: at -1 */
    CHECK_STR(at(a, 0x4000ff, 0, 0), "[unknown]");      /* outside every module */
    CHECK_STR(at(a, 0x400200, 0, 0), "[unknown]");      /* end is exclusive */
    vmp_analysis_free(a);
}

static void test_resolve_module_offset(void)
{
    vmp_analysis *a = NULL;
    uint32_t f = 0;
    CHECK(vmp_analysis_create(&a, NULL) == VMP_OK);
    feed_module(a, 7, "/usr/lib/x86_64-linux-gnu/libc.so.6", 0x7f0000000000, 0x7f0000028000,
                0x7f00001bd000);
    CHECK_STR(at(a, 0x7f000009e3c0, 0, 0), "libc.so.6+0x9e3c0");
    CHECK_STR(kind_at(a, 0x7f000009e3c0, 0), "C");
    CHECK(vmp_analysis_resolve_pc(a, &f, 0x7f000009e3c0, 0, 0) == VMP_OK);
    CHECK(vmp_analysis_function(a, vmp_analysis_frame(a, f)->function)->module_id == 7);
    /* the runtime address, for pprof's Location.address */
    CHECK(vmp_analysis_function(a, vmp_analysis_frame(a, f)->function)->address == 0x7f000009e3c0);
    CHECK_STR(at(a, 0x7f00001bd000, 0, 0), "[unknown]");
    vmp_analysis_free(a);
}

/* A pc in no symbol resolves to the module holding it (R-RES-1 (3)) through
 * an index of the mappings: among many modules, given in no order of
 * address; where mappings overlap, the first MODULE in the file holds it. */
static void test_resolve_module_among_many(void)
{
    vmp_analysis *a = NULL;
    char path[64], want[64];
    uint64_t i;
    CHECK(vmp_analysis_create(&a, NULL) == VMP_OK);
    for (i = 0; i < 2000; i++) { /* lib<k>.so at 0x10000000 + k * 0x10000, shuffled */
        uint64_t k = (i * 7919) % 2000;
        snprintf(path, sizeof path, "/lib/lib%llu.so", (unsigned long long)k);
        feed_module(a, 100 + k, path, 0x10000000 + k * 0x10000, 0x10000000 + k * 0x10000,
                    0x10000000 + k * 0x10000 + 0x8000);
    }
    for (i = 0; i < 2000; i += 111) {
        snprintf(want, sizeof want, "lib%llu.so+0x42", (unsigned long long)i);
        CHECK_STR(at(a, 0x10000000 + i * 0x10000 + 0x42, 0, 0), want);
        CHECK_STR(at(a, 0x10000000 + i * 0x10000 + 0x8000, 0, 0), "[unknown]"); /* the gap */
    }
    CHECK_STR(at(a, 0x10000000 - 1, 0, 0), "[unknown]");
    /* a large mapping over all of them, then one inside lib5.so: the earlier
     * records hold their addresses, the large one the gaps */
    feed_module(a, 1, "/big.so", 0x10000000, 0x10000000, 0x20000000);
    feed_module(a, 2, "/inner.so", 0x10050000, 0x10050000, 0x10050100);
    CHECK_STR(at(a, 0x10050010, 0, 0), "lib5.so+0x10");
    CHECK_STR(at(a, 0x10058000, 0, 0), "big.so+0x58000");
    CHECK_STR(at(a, 0x1fffffff, 0, 0), "big.so+0xfffffff");
    CHECK_STR(at(a, 0x20000000, 0, 0), "[unknown]");
    vmp_analysis_free(a);
}

/* spec R-RES-2: an unnamed symbol is a function known by its start (from a
 * stripped library's unwind table): every pc in it shows as
 * <module>+0x<its start>, up to the next symbol. */
static void test_resolve_unnamed_symbols(void)
{
    vmp_analysis *a = NULL;
    vmp_rec_symbol syms[3];
    CHECK(vmp_analysis_create(&a, NULL) == VMP_OK);
    feed_module(a, 7, "/usr/lib/x86_64-linux-gnu/libz.so.1", 0x7f0000000000, 0x7f0000002000,
                0x7f0000020000);
    memset(syms, 0, sizeof syms);
    syms[0].value = 0x4a00; /* unnamed, size 0 */
    syms[0].name.s = "";
    syms[1].value = 0x4c00;
    syms[1].size = 0x40;
    syms[1].name.s = "deflate";
    syms[1].name.len = 7;
    syms[2].value = 0x5000; /* unnamed, the module's last */
    syms[2].name.s = "";
    feed_symbols(a, 7, syms, 3);
    CHECK_STR(at(a, 0x7f0000004a26, 0, 0), "libz.so.1+0x4a00");
    CHECK_STR(at(a, 0x7f0000004bff, 0, 0), "libz.so.1+0x4a00"); /* up to the next symbol */
    CHECK_STR(kind_at(a, 0x7f0000004a26, 0), "C");
    CHECK_STR(at(a, 0x7f0000004c10, 0, 0), "deflate");
    CHECK_STR(at(a, 0x7f0000004c50, 0, 0), "libz.so.1+0x4c50"); /* past deflate: no symbol */
    CHECK_STR(at(a, 0x7f000001ffff, 0, 0), "libz.so.1+0x5000"); /* to the module's end */
    vmp_analysis_free(a);
}

/* spec R-GEN-3 */
static void test_resolve_through_generations(void)
{
    vmp_analysis *a = NULL;
    CHECK(vmp_analysis_create(&a, NULL) == VMP_OK);
    setup(a);
    compaction_moves_1_and_adds_pic(a);
    CHECK_STR(at(a, 0x1050, 1, 0), "PIC #x");
    CHECK_STR(kind_at(a, 0x1050, 1), "closed PIC");
    CHECK_STR(at(a, 0x2050, 1, 0), "Foo>>bar 5->5");
    CHECK_STR(at(a, 0x1050, 0, 0), "Foo>>bar 5->5"); /* a late sample of generation 0 */
    CHECK_STR(at(a, 0x2050, 0, 0), "[unknown]");
    free_1(a);
    CHECK_STR(at(a, 0x2050, 2, 0), "[unknown]");
    CHECK_STR(at(a, 0x2050, 1, 0), "Foo>>bar 5->5");
    CHECK_STR(at(a, 0x1050, 0, 0), "Foo>>bar 5->5");
    CHECK_STR(at(a, 0x1050, 2, 0), "PIC #x");
    vmp_analysis_free(a);
}

/* The code history is kept delta-encoded (analyze/vmp_code_history.c): replaying
 * it must give back every placement exactly, for starts anywhere in the
 * 64-bit space, objects in any order, and frees; with generations that go
 * back (the whole log replayed) or not (a cursor replaying forward, and
 * from the start when a lookup goes back), looked up in rising and then
 * falling generations. */
#define H_OBJS  40
#define H_STEPS 400
#define H_GENS  60

typedef struct h_place {
    uint64_t start, from, to;
    int obj;
} h_place;

static uint64_t h_rand(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x ^ (*x >> 29);
}

static void replay_history_checked(int gens_go_back)
{
    static h_place pl[H_OBJS + H_STEPS];
    int cur[H_OBJS]; /* index in pl of the object's open placement, or -1 */
    size_t n_pl = 0, i;
    uint64_t x = 42, g;
    vmp_analysis *a = NULL;
    vmp_record r;
    char name[16];
    int k, step;
    CHECK(vmp_analysis_create(&a, NULL) == VMP_OK);
    for (k = 0; k < H_OBJS; k++) {
        uint64_t start = k == 0 ? 0 : k == 1 ? UINT64_MAX - 0x100 : h_rand(&x) & ~0xfffull;
        snprintf(name, sizeof name, "c%d", k);
        memset(&r, 0, sizeof r);
        r.type = VMP_REC_CODE_OBJECT;
        r.u.code_object.id = (uint64_t)(H_OBJS - k); /* ids need not follow indices */
        r.u.code_object.zone = 1;
        r.u.code_object.start = start;
        r.u.code_object.size = 0x80;
        r.u.code_object.generation = gens_go_back ? h_rand(&x) % 5 : (uint64_t)k / 10;
        r.u.code_object.name.s = name;
        r.u.code_object.name.len = strlen(name);
        CHECK(feed(a, &r) == VMP_OK);
        pl[n_pl].start = start;
        pl[n_pl].from = r.u.code_object.generation;
        pl[n_pl].to = UINT64_MAX;
        pl[n_pl].obj = k;
        cur[k] = (int)n_pl++;
    }
    for (step = 0; step < H_STEPS; step++) {
        int obj = (int)(h_rand(&x) % H_OBJS);
        uint64_t gen = 5 + (uint64_t)step / 8 - (gens_go_back && h_rand(&x) % 7 == 0 ? 3 : 0);
        uint64_t start = h_rand(&x) % 3 == 0 ? pl[cur[obj] < 0 ? 0 : cur[obj]].start - 0x1000
                                             : h_rand(&x) & ~0xfffull;
        int is_free = h_rand(&x) % 10 == 0;
        memset(&r, 0, sizeof r);
        if (is_free) {
            r.type = VMP_REC_CODE_FREE;
            r.u.code_free.id = (uint64_t)(H_OBJS - obj);
            r.u.code_free.generation = gen;
        } else {
            r.type = VMP_REC_CODE_MOVE;
            r.u.code_move.id = (uint64_t)(H_OBJS - obj);
            r.u.code_move.new_start = start;
            r.u.code_move.generation = gen;
        }
        CHECK(feed(a, &r) == VMP_OK);
        if (cur[obj] < 0)
            continue; /* freed: the record changes nothing */
        pl[cur[obj]].to = gen;
        cur[obj] = -1;
        if (!is_free) {
            pl[n_pl].start = start;
            pl[n_pl].from = gen;
            pl[n_pl].to = UINT64_MAX;
            pl[n_pl].obj = obj;
            cur[obj] = (int)n_pl++;
        }
    }
    for (uint64_t pass = 0; pass < 2 * H_GENS; pass++)
        for (i = 0, g = pass < H_GENS ? pass : 2 * H_GENS - 1 - pass; i < n_pl; i++) {
            const char *want = "[unknown]";
            size_t j;
            /* the newest placement alive at g that covers the address */
            for (j = 0; j < n_pl; j++)
                if (pl[j].from <= g && g < pl[j].to && pl[i].start + 0x10 >= pl[j].start &&
                    pl[i].start + 0x10 < pl[j].start + 0x80) {
                    snprintf(name, sizeof name, "c%d", pl[j].obj);
                    want = name;
                }
            CHECK_STR(at(a, pl[i].start + 0x10, g, 0), want);
        }
    vmp_analysis_free(a);
}

static void test_code_history_replays_every_generation(void)
{
    replay_history_checked(1);
    replay_history_checked(0);
}

/* Lookups that go back to old generations, with a code history long
 * enough for checkpoints: 4000 objects slide between two regions at each
 * of 200 compactions (about 3 MB of log).  Each lookup is right, and those
 * that go back start from a checkpoint, not the log's start. */
static void test_old_generations_replay_from_checkpoints(void)
{
    enum {
        OBJS = 4000,
        GENS = 200
    };

    static uint64_t moves[2 * OBJS];
    const uint64_t base[2] = {0x100000, 0x100000 + 16 * OBJS};
    vmp_analysis *a = NULL;
    vmp_analysis_stats stats;
    vmp_record r;
    char name[16];
    uint64_t x = 7, g;
    int k, q;
    CHECK(vmp_analysis_create(&a, NULL) == VMP_OK);
    for (k = 0; k < OBJS; k++) {
        snprintf(name, sizeof name, "c%d", k);
        memset(&r, 0, sizeof r);
        r.type = VMP_REC_CODE_OBJECT;
        r.u.code_object.id = (uint64_t)k + 1;
        r.u.code_object.zone = 1;
        r.u.code_object.start = base[0] + 16 * (uint64_t)k;
        r.u.code_object.size = 16;
        r.u.code_object.name.s = name;
        r.u.code_object.name.len = strlen(name);
        CHECK(feed(a, &r) == VMP_OK);
    }
    for (g = 1; g <= GENS; g++) { /* odd generations in region 1, even in 0 */
        for (k = 0; k < OBJS; k++) {
            moves[2 * k] = (uint64_t)k + 1;
            moves[2 * k + 1] = base[g & 1] + 16 * (uint64_t)k;
        }
        memset(&r, 0, sizeof r);
        r.type = VMP_REC_CODE_COMPACTION;
        r.u.code_compaction.zone = 1;
        r.u.code_compaction.generation = g;
        r.u.code_compaction.moves = moves;
        r.u.code_compaction.n_moves = OBJS;
        CHECK(feed(a, &r) == VMP_OK);
    }
    for (q = 0; q < 120; q++) { /* generations up and down */
        uint64_t gen = q % 2 ? GENS - 1 - h_rand(&x) % 50 : h_rand(&x) % (GENS - 1);
        int obj = (int)(h_rand(&x) % OBJS);
        snprintf(name, sizeof name, "c%d", obj);
        CHECK_STR(at(a, base[gen & 1] + 16 * (uint64_t)obj + 4, gen, 0), name);
        CHECK_STR(at(a, base[!(gen & 1)] + 16 * (uint64_t)obj + 4, gen, 0), "[unknown]");
    }
    vmp_analysis_get_stats(a, &stats);
    CHECK(stats.checkpoint_restarts > 30);
    vmp_analysis_free(a);
}

static void test_resolve_stacks_are_interned_and_cached(void)
{
    vmp_analysis *a = NULL;
    vmp_record r;
    vmp_asample s, s2;
    vmp_analysis_stats stats;
    const vmp_astack *leaf, *caller;
    char buf[128];
    int is_sample = 0;

    CHECK(vmp_analysis_create(&a, NULL) == VMP_OK);
    setup(a);
    compaction_moves_1_and_adds_pic(a);
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_STACK_NODE;
    r.u.stack_node.id = 1;
    r.u.stack_node.pc = 0x2040; /* return address: the call is at 0x203f */
    CHECK(feed(a, &r) == VMP_OK);
    r.u.stack_node.id = 2;
    r.u.stack_node.parent = 1;
    r.u.stack_node.pc = 0x1050;
    CHECK(feed(a, &r) == VMP_OK);

    memset(&r, 0, sizeof r);
    r.type = VMP_REC_SAMPLE;
    r.u.sample.pc = 0x1050;
    r.u.sample.has_pc = 1;
    r.u.sample.stack = 2;
    r.u.sample.generation = 1;
    r.u.sample.thread = 7;
    r.u.sample.state = 1;
    CHECK(vmp_analysis_feed(a, &r, &s, &is_sample) == VMP_OK);
    CHECK(is_sample == 1);
    CHECK(s.stack != 0);
    leaf = vmp_analysis_stack(a, s.stack);
    CHECK(leaf != NULL && leaf->depth == 2 && leaf->frame == s.leaf);
    vmp_analysis_format_frame(a, buf, sizeof buf, s.leaf);
    CHECK_STR(buf, "PIC #x");
    caller = leaf ? vmp_analysis_stack(a, leaf->parent) : NULL;
    CHECK(caller != NULL && caller->parent == 0);
    if (caller) {
        vmp_analysis_format_frame(a, buf, sizeof buf, caller->frame);
        CHECK_STR(buf, "Foo>>bar 1->4");
    }
    CHECK_STR(vmp_analysis_state_name(a, s.state), "gc");
    CHECK_STR(vmp_analysis_state_name(a, 9), "state#9");
    CHECK_STR(vmp_analysis_thread_name(a, 7), "thread#7");

    CHECK(vmp_analysis_feed(a, &r, &s2, &is_sample) == VMP_OK);
    CHECK(s2.stack == s.stack);
    vmp_analysis_get_stats(a, &stats);
    CHECK_EQ_U64(stats.cache_hits, 1);
    CHECK_EQ_U64(stats.cache_misses, 1);

    /* the same stack at generation 0 resolves differently */
    r.u.sample.generation = 0;
    CHECK(vmp_analysis_feed(a, &r, &s2, &is_sample) == VMP_OK);
    vmp_analysis_format_frame(a, buf, sizeof buf, s2.leaf);
    CHECK_STR(buf, "Foo>>bar 5->5");

    /* a failed sample names its pc but has no stack */
    r.type = VMP_REC_FAILED_SAMPLE;
    r.u.sample.generation = 1;
    CHECK(vmp_analysis_feed(a, &r, &s2, &is_sample) == VMP_OK);
    CHECK(s2.failed == 1 && s2.stack == 0 && s2.leaf == s.leaf);
    vmp_analysis_free(a);
}

/* spec R-CODE-3: a CODE_MAP gives a code object without a map its pc_map
 * from its position on: a stack resolved before it (and cached) resolves
 * with the range after it; a second CODE_MAP, or one for an unknown code
 * id, changes nothing. */
/* A resolved stack holds at a newer generation when no code under its
 * frames changed in between (the resolution is used again: counted), and
 * not when its code moved. */
static void test_resolved_stacks_outlive_unrelated_changes(void)
{
    vmp_analysis *a = NULL;
    vmp_record r, smp;
    vmp_asample s;
    vmp_analysis_stats stats;
    uint32_t first;
    char buf[128];
    int is_sample = 0;

    CHECK(vmp_analysis_create(&a, NULL) == VMP_OK);
    setup(a); /* code 1 of Foo>>bar at 0x1000..0x1100 */
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_CODE_OBJECT; /* code 3, far from it */
    r.u.code_object.id = 3;
    r.u.code_object.zone = 1;
    r.u.code_object.start = 0x80000;
    r.u.code_object.size = 0x100;
    r.u.code_object.name.s = "";
    CHECK(feed(a, &r) == VMP_OK);
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_STACK_NODE;
    r.u.stack_node.id = 1;
    r.u.stack_node.pc = 0x1050;
    CHECK(feed(a, &r) == VMP_OK);
    memset(&smp, 0, sizeof smp);
    smp.type = VMP_REC_SAMPLE;
    smp.u.sample.stack = 1;

    CHECK(vmp_analysis_feed(a, &smp, &s, &is_sample) == VMP_OK && is_sample);
    first = s.stack;
    vmp_analysis_format_frame(a, buf, sizeof buf, s.leaf);
    CHECK(strncmp(buf, "Foo>>bar", 8) == 0);

    /* generation 1 frees code 3: the stack's code stays */
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_CODE_FREE;
    r.u.code_free.id = 3;
    r.u.code_free.generation = 1;
    CHECK(feed(a, &r) == VMP_OK);
    smp.u.sample.generation = 1;
    CHECK(vmp_analysis_feed(a, &smp, &s, &is_sample) == VMP_OK && s.stack == first);
    CHECK(vmp_analysis_feed(a, &smp, &s, &is_sample) == VMP_OK && s.stack == first);
    vmp_analysis_get_stats(a, &stats);
    CHECK_EQ_U64(stats.cache_misses, 1);
    CHECK_EQ_U64(stats.generation_reuses, 1);
    CHECK_EQ_U64(stats.cache_hits, 2); /* the reuse, then the memo as it is */

    /* generation 2 moves code 1 away: resolved again, to nothing there */
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_CODE_MOVE;
    r.u.code_move.id = 1;
    r.u.code_move.new_start = 0x3000;
    r.u.code_move.generation = 2;
    CHECK(feed(a, &r) == VMP_OK);
    smp.u.sample.generation = 2;
    CHECK(vmp_analysis_feed(a, &smp, &s, &is_sample) == VMP_OK && s.stack != first);
    vmp_analysis_format_frame(a, buf, sizeof buf, s.leaf);
    CHECK_STR(buf, "[unknown]");
    vmp_analysis_get_stats(a, &stats);
    CHECK_EQ_U64(stats.cache_misses, 2);
    CHECK_EQ_U64(stats.generation_reuses, 1);

    /* generation 1 still sees the code where it was */
    smp.u.sample.generation = 1;
    CHECK(vmp_analysis_feed(a, &smp, &s, &is_sample) == VMP_OK && s.stack == first);
    vmp_analysis_free(a);
}

/* A sample with a pc (a symbolic innermost node and the pc it ran at, or a
 * pc alone) is resolved once per (node, pc, generation): the same sample
 * again is one lookup (counted), a sample at a generation where its code
 * moved is resolved again, and a record that changes what its pc shows
 * makes it resolve again.  Alike when the samples name a sample context
 * (`context`, spec R-BLK-5), also when the context's samples differ (as
 * one id of two merged files may). */
static void samples_with_pcs_resolved_once(uint64_t context)
{
    vmp_analysis *a = NULL;
    vmp_record r, smp;
    vmp_asample s;
    vmp_analysis_stats stats;
    uint32_t first;
    char buf[128];
    int is_sample = 0;

    CHECK(vmp_analysis_create(&a, NULL) == VMP_OK);
    setup(a); /* code 1 of Foo>>bar at 0x1000..0x1100 */
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_STACK_NODE;
    r.u.stack_node.id = 1;
    r.u.stack_node.is_function = 1;
    r.u.stack_node.function = 1;
    CHECK(feed(a, &r) == VMP_OK);
    memset(&smp, 0, sizeof smp);
    smp.type = VMP_REC_SAMPLE;
    smp.u.sample.stack = 1;
    smp.u.sample.pc = 0x1050;
    smp.u.sample.has_pc = 1;
    smp.u.sample.context = context;

    CHECK(vmp_analysis_feed(a, &smp, &s, &is_sample) == VMP_OK && is_sample);
    first = s.stack;
    CHECK_EQ_U64(s.code, 1);
    vmp_analysis_format_frame(a, buf, sizeof buf, s.leaf);
    CHECK_STR(buf, "Foo>>bar 5->5");
    CHECK(vmp_analysis_feed(a, &smp, &s, &is_sample) == VMP_OK && s.stack == first);
    CHECK_EQ_U64(s.code, 1);
    vmp_analysis_get_stats(a, &stats);
    CHECK_EQ_U64(stats.cache_misses, 1);
    CHECK_EQ_U64(stats.cache_hits, 1);

    /* generation 1 moves code 1 away: the pc is in no code there */
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_CODE_MOVE;
    r.u.code_move.id = 1;
    r.u.code_move.new_start = 0x3000;
    r.u.code_move.generation = 1;
    CHECK(feed(a, &r) == VMP_OK);
    smp.u.sample.generation = 1;
    CHECK(vmp_analysis_feed(a, &smp, &s, &is_sample) == VMP_OK && s.stack != first);
    CHECK_EQ_U64(s.code, 0);
    vmp_analysis_format_frame(a, buf, sizeof buf, s.leaf);
    CHECK_STR(buf, "Foo>>bar");
    vmp_analysis_get_stats(a, &stats);
    CHECK_EQ_U64(stats.cache_misses, 2);

    /* generation 0 still sees the code where it was, by one lookup */
    smp.u.sample.generation = 0;
    CHECK(vmp_analysis_feed(a, &smp, &s, &is_sample) == VMP_OK && s.stack == first);
    CHECK_EQ_U64(s.code, 1);
    vmp_analysis_get_stats(a, &stats);
    CHECK_EQ_U64(stats.cache_misses, 2);
    CHECK_EQ_U64(stats.cache_hits, 2);

    /* a pc alone, in the module's vm::gc::collect(), then a stub placed
     * over it at generation 0 (spec R-GEN-3): resolved again, to the stub */
    smp.u.sample.stack = 0;
    smp.u.sample.pc = 0x400185;
    CHECK(vmp_analysis_feed(a, &smp, &s, &is_sample) == VMP_OK);
    vmp_analysis_format_frame(a, buf, sizeof buf, s.leaf);
    CHECK_STR(buf, "vm::gc::collect()");
    CHECK(vmp_analysis_feed(a, &smp, &s, &is_sample) == VMP_OK);
    vmp_analysis_format_frame(a, buf, sizeof buf, s.leaf);
    CHECK_STR(buf, "vm::gc::collect()");
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_CODE_OBJECT;
    r.u.code_object.id = 5;
    r.u.code_object.zone = 1;
    r.u.code_object.kind = 1;
    r.u.code_object.start = 0x400180;
    r.u.code_object.size = 0x40;
    r.u.code_object.name.s = "PIC #y";
    r.u.code_object.name.len = 6;
    CHECK(feed(a, &r) == VMP_OK);
    CHECK(vmp_analysis_feed(a, &smp, &s, &is_sample) == VMP_OK);
    vmp_analysis_format_frame(a, buf, sizeof buf, s.leaf);
    CHECK_STR(buf, "PIC #y");
    CHECK_EQ_U64(s.code, 5);
    vmp_analysis_free(a);
}

static void test_samples_with_pcs_resolved_once(void)
{
    samples_with_pcs_resolved_once(0);
}

static void test_samples_in_contexts_resolved_once(void)
{
    samples_with_pcs_resolved_once(7);
}

/* Code that appears where a resolved stack has a frame makes that stack
 * resolve again (to the new code); a stack with no frame there keeps its
 * resolution. */
static void test_forgetting_a_range_keeps_other_stacks(void)
{
    vmp_analysis *a = NULL;
    vmp_record r, smp;
    vmp_asample s;
    vmp_analysis_stats stats;
    uint32_t in_code, in_module;
    char buf[128];
    int is_sample = 0;

    CHECK(vmp_analysis_create(&a, NULL) == VMP_OK);
    setup(a);
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_STACK_NODE;
    r.u.stack_node.id = 1;
    r.u.stack_node.pc = 0x1050; /* code 1 */
    CHECK(feed(a, &r) == VMP_OK);
    r.u.stack_node.id = 2;
    r.u.stack_node.pc = 0x400185; /* the module's vm::gc::collect() */
    CHECK(feed(a, &r) == VMP_OK);
    memset(&smp, 0, sizeof smp);
    smp.type = VMP_REC_SAMPLE;
    smp.u.sample.stack = 1;
    CHECK(vmp_analysis_feed(a, &smp, &s, &is_sample) == VMP_OK && is_sample);
    in_code = s.stack;
    smp.u.sample.stack = 2;
    CHECK(vmp_analysis_feed(a, &smp, &s, &is_sample) == VMP_OK);
    in_module = s.stack;
    vmp_analysis_format_frame(a, buf, sizeof buf, s.leaf);
    CHECK_STR(buf, "vm::gc::collect()");

    /* a stub at generation 0 over the module's function (spec R-GEN-3) */
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_CODE_OBJECT;
    r.u.code_object.id = 5;
    r.u.code_object.zone = 1;
    r.u.code_object.kind = 1;
    r.u.code_object.start = 0x400180;
    r.u.code_object.size = 0x40;
    r.u.code_object.name.s = "PIC #y";
    r.u.code_object.name.len = 6;
    CHECK(feed(a, &r) == VMP_OK);
    smp.u.sample.stack = 1;
    CHECK(vmp_analysis_feed(a, &smp, &s, &is_sample) == VMP_OK && s.stack == in_code);
    vmp_analysis_get_stats(a, &stats);
    CHECK_EQ_U64(stats.cache_misses, 2);
    CHECK_EQ_U64(stats.cache_hits, 1);
    smp.u.sample.stack = 2;
    CHECK(vmp_analysis_feed(a, &smp, &s, &is_sample) == VMP_OK && s.stack != in_module);
    vmp_analysis_format_frame(a, buf, sizeof buf, s.leaf);
    CHECK_STR(buf, "PIC #y");
    vmp_analysis_get_stats(a, &stats);
    CHECK_EQ_U64(stats.cache_misses, 3);
    vmp_analysis_free(a);
}

static void test_code_map_applies_from_its_position(void)
{
    static const uint64_t map2[] = {0x20, 7};
    static const uint64_t map3[] = {0, 2};
    vmp_analysis *a = NULL;
    vmp_record r;
    vmp_asample s;
    char buf[128];
    int is_sample = 0;

    CHECK(vmp_analysis_create(&a, NULL) == VMP_OK);
    setup(a);
    memset(&r, 0, sizeof r); /* code 3 of function 1, its map to come */
    r.type = VMP_REC_CODE_OBJECT;
    r.u.code_object.id = 3;
    r.u.code_object.zone = 1;
    r.u.code_object.function = 1;
    r.u.code_object.start = 0x3000;
    r.u.code_object.size = 0x100;
    r.u.code_object.name.s = "";
    CHECK(feed(a, &r) == VMP_OK);
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_STACK_NODE;
    r.u.stack_node.id = 1;
    r.u.stack_node.pc = 0x3030;
    CHECK(feed(a, &r) == VMP_OK);
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_SAMPLE;
    r.u.sample.stack = 1;
    CHECK(vmp_analysis_feed(a, &r, &s, &is_sample) == VMP_OK);
    vmp_analysis_format_frame(a, buf, sizeof buf, s.leaf);
    CHECK_STR(buf, "Foo>>bar"); /* no map yet: no range */

    memset(&r, 0, sizeof r);
    r.type = VMP_REC_CODE_MAP;
    r.u.code_map.id = 3;
    r.u.code_map.pc_map = map2;
    r.u.code_map.pc_map_len = 1;
    CHECK(feed(a, &r) == VMP_OK);
    r.u.code_map.pc_map = map3; /* a second map: the first holds */
    CHECK(feed(a, &r) == VMP_OK);
    r.u.code_map.id = 99; /* unknown code: ignored */
    CHECK(feed(a, &r) == VMP_OK);

    memset(&r, 0, sizeof r);
    r.type = VMP_REC_SAMPLE;
    r.u.sample.stack = 1;
    CHECK(vmp_analysis_feed(a, &r, &s, &is_sample) == VMP_OK);
    vmp_analysis_format_frame(a, buf, sizeof buf, s.leaf);
    CHECK_STR(buf, "Foo>>bar 7->19");
    CHECK_STR(at(a, 0x1010, 0, 0), "Foo>>bar 1->4"); /* code 1 keeps its own map */
    vmp_analysis_free(a);
}

/* The leaf of a sample of stack node `node` at generation 0. */
/* A sample at stack node `node`, resolved. */
static vmp_asample sample_at_node(vmp_analysis *a, uint64_t node)
{
    vmp_record r;
    vmp_asample s;
    int is_sample = 0;
    memset(&r, 0, sizeof r);
    memset(&s, 0, sizeof s);
    r.type = VMP_REC_SAMPLE;
    r.u.sample.stack = node;
    CHECK(vmp_analysis_feed(a, &r, &s, &is_sample) == VMP_OK && is_sample);
    return s;
}

static const char *leaf_of_node(vmp_analysis *a, uint64_t node)
{
    static char buf[128];
    vmp_analysis_format_frame(a, buf, sizeof buf, sample_at_node(a, node).leaf);
    return buf;
}

/* spec R-ID-1: node ids are the writer's to choose.  A sparse id defined
 * first (kept in a hash: the array for dense ids is short) is still found
 * once dense ids have grown the array past it. */
static void test_sparse_node_id_outlives_dense_ones(void)
{
    vmp_analysis *a = NULL;
    vmp_record r;
    uint64_t id;

    CHECK(vmp_analysis_create(&a, NULL) == VMP_OK);
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_STACK_NODE;
    r.u.stack_node.id = 10000;
    r.u.stack_node.pc = 0x5000;
    CHECK(feed(a, &r) == VMP_OK);
    for (id = 1; id <= 9000; id++) {
        r.u.stack_node.id = id;
        r.u.stack_node.pc = 0x6000 + id;
        CHECK(feed(a, &r) == VMP_OK);
    }
    CHECK(sample_at_node(a, 10000).stack != 0);
    CHECK(sample_at_node(a, 9000).stack != 0);
    CHECK(sample_at_node(a, 9999).stack == 0); /* never defined (R-ID-6) */
    vmp_analysis_free(a);
}

/* spec R-RES-1, R-ID-2: a sample resolves with the records before it.  A
 * stack resolved (and cached) before a CODE_OBJECT, MODULE, MODULE_SYMBOLS or
 * FUNCTION record that changes it resolves anew after the record, at the
 * same generation (HotSpot runs an nmethod before its load event is posted;
 * a library is loaded before the agent sees it). */
static void test_late_records_apply_to_resolved_stacks(void)
{
    vmp_analysis *a = NULL;
    vmp_record r;
    vmp_rec_symbol sym = {0x100, 0x10, {"mid", 3}};

    CHECK(vmp_analysis_create(&a, NULL) == VMP_OK);
    setup(a);
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_STACK_NODE;
    r.u.stack_node.id = 1;
    r.u.stack_node.pc = 0x5030; /* code to come */
    CHECK(feed(a, &r) == VMP_OK);
    r.u.stack_node.id = 2;
    r.u.stack_node.pc = 0x600108; /* a module to come */
    CHECK(feed(a, &r) == VMP_OK);
    r.u.stack_node.id = 3;
    r.u.stack_node.pc = 0x400150; /* "zero" (size 0) until a symbol ends it */
    CHECK(feed(a, &r) == VMP_OK);
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_STACK_NODE;
    r.u.stack_node.id = 4;
    r.u.stack_node.is_function = 1;
    r.u.stack_node.function = 42; /* a function to come */
    CHECK(feed(a, &r) == VMP_OK);
    CHECK_STR(leaf_of_node(a, 1), "[unknown]");
    CHECK_STR(leaf_of_node(a, 2), "[unknown]");
    CHECK_STR(leaf_of_node(a, 3), "zero");
    CHECK_STR(leaf_of_node(a, 4), "function#42");

    memset(&r, 0, sizeof r);
    r.type = VMP_REC_CODE_OBJECT; /* of function 43, itself to come */
    r.u.code_object.id = 5;
    r.u.code_object.zone = 1;
    r.u.code_object.function = 43;
    r.u.code_object.start = 0x5000;
    r.u.code_object.size = 0x100;
    r.u.code_object.name.s = "";
    CHECK(feed(a, &r) == VMP_OK);
    CHECK_STR(leaf_of_node(a, 1), "function#43");
    feed_module(a, 2, "/opt/liby.so", 0x600000, 0x600000, 0x601000);
    CHECK_STR(leaf_of_node(a, 2), "liby.so+0x108");
    feed_symbols(a, 2, &sym, 1);
    CHECK_STR(leaf_of_node(a, 2), "mid");
    sym.value = 0x140; /* module 1's: ends "zero" at 0x400140 */
    sym.size = 0;
    feed_symbols(a, 1, &sym, 1);
    CHECK_STR(leaf_of_node(a, 3), "mid");

    memset(&r, 0, sizeof r);
    r.type = VMP_REC_FUNCTION;
    r.u.function.id = 42;
    r.u.function.name.s = "baz";
    r.u.function.name.len = 3;
    r.u.function.scope.s = "Qux";
    r.u.function.scope.len = 3;
    CHECK(feed(a, &r) == VMP_OK);
    CHECK_STR(leaf_of_node(a, 4), "Qux>>baz");
    r.u.function.id = 43;
    r.u.function.name.s = "quux";
    r.u.function.name.len = 4;
    CHECK(feed(a, &r) == VMP_OK);
    CHECK_STR(leaf_of_node(a, 1), "Qux>>quux");
    vmp_analysis_free(a);
}

static void test_resolve_at_a_fixed_generation(void)
{
    vmp_analysis *a = NULL;
    vmp_analysis_options o = VMP_ANALYSIS_OPTIONS_INIT;
    vmp_rec_sample smp;
    vmp_asample s;
    char buf[128];
    o.flags = VMP_ANALYSIS_FIXED_GENERATION;
    o.fixed_generation = 2;
    CHECK(vmp_analysis_create(&a, &o) == VMP_OK);
    setup(a);
    compaction_moves_1_and_adds_pic(a);
    free_1(a);
    memset(&smp, 0, sizeof smp);
    smp.pc = 0x1050;
    smp.has_pc = 1;
    smp.generation = 0;
    CHECK(vmp_analysis_resolve_sample(a, &smp, 0, &s) == VMP_OK);
    vmp_analysis_format_frame(a, buf, sizeof buf, s.leaf);
    CHECK_STR(buf, "PIC #x"); /* what an end-of-run snapshot says: wrong */
    CHECK_EQ_U64(s.generation, 0);
    vmp_analysis_free(a);
}

static void test_profile_sums_weights(void)
{
    vmp_profile *p = NULL;
    vmp_record r;
    const vmp_profile_totals *t;
    const uint64_t *w;
    size_t n;
    uint64_t tid, tw;
    CHECK(vmp_profile_create(&p, NULL) == VMP_OK);
    setup(vmp_profile_analysis(p));
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_SAMPLE;
    r.u.sample.pc = 0x1050;
    r.u.sample.has_pc = 1;
    r.u.sample.weight = 3;
    r.u.sample.thread = 1;
    CHECK(vmp_profile_feed(p, &r) == VMP_OK);
    r.u.sample.pc = 0x400185;
    r.u.sample.weight = 1;
    r.u.sample.state = 1;
    CHECK(vmp_profile_feed(p, &r) == VMP_OK);
    r.u.sample.weight = 0; /* spec R-SMP-4: weight 0 counts 0 samples */
    CHECK(vmp_profile_feed(p, &r) == VMP_OK);
    r.u.sample.weight = 1;
    r.type = VMP_REC_FAILED_SAMPLE;
    r.u.sample.has_pc = 0;
    r.u.sample.thread = 2;
    CHECK(vmp_profile_feed(p, &r) == VMP_OK);
    t = vmp_profile_get_totals(p);
    CHECK_EQ_U64(t->samples, 5);
    CHECK_EQ_U64(t->failed, 1);
    CHECK_EQ_U64(t->generated, 3);
    CHECK_EQ_U64(t->native, 1);
    CHECK_EQ_U64(t->unknown, 1);
    w = vmp_profile_state_weights(p, &n);
    CHECK(n == 2 && w[0] == 3 && w[1] == 2);
    CHECK(vmp_profile_thread(p, 1, &tid, &tw) == 1);
    CHECK(tid == 2 && tw == 1);
    CHECK(vmp_profile_thread(p, 2, &tid, &tw) == 0);

    /* samples fed after the sums were read are added to them: to keys seen
     * before and to new ones */
    r.type = VMP_REC_SAMPLE;
    r.u.sample.pc = 0x1050;
    r.u.sample.has_pc = 1;
    r.u.sample.weight = 2;
    r.u.sample.thread = 1;
    r.u.sample.state = 0;
    CHECK(vmp_profile_feed(p, &r) == VMP_OK); /* the first sample's key */
    r.u.sample.thread = 3;
    CHECK(vmp_profile_feed(p, &r) == VMP_OK); /* a new thread */
    t = vmp_profile_get_totals(p);
    CHECK_EQ_U64(t->samples, 9);
    CHECK_EQ_U64(t->generated, 7);
    w = vmp_profile_state_weights(p, &n);
    CHECK(n == 2 && w[0] == 7 && w[1] == 2);
    CHECK(vmp_profile_thread(p, 0, &tid, &tw) == 1);
    CHECK(tid == 1 && tw == 6);
    CHECK(vmp_profile_thread(p, 2, &tid, &tw) == 1);
    CHECK(tid == 3 && tw == 2);

    /* the keys, in order of first sample: weights as weight, records as
     * records (the weight-0 sample counts in its key's records) */
    {
        const vmp_profile_key *k = vmp_profile_keys(p, &n);
        CHECK_EQ_U64(n, 4);
        if (n == 4) {
            CHECK(k[0].thread == 1 && k[0].weight == 5 && k[0].samples == 2 && !k[0].failed);
            CHECK(k[0].code == 1 && k[0].leaf != 0 && k[0].stack != 0);
            CHECK(k[1].state == 1 && k[1].weight == 1 && k[1].samples == 2 && k[1].code == 0);
            CHECK(k[2].failed && k[2].thread == 2 && k[2].stack == 0 && k[2].weight == 1);
            CHECK(k[3].thread == 3 && k[3].weight == 2 && k[3].samples == 1);
            CHECK_EQ_U64(k[0].weight + k[1].weight + k[2].weight + k[3].weight, t->samples);
        }
    }
    vmp_profile_free(p);
}

/* spec §5.7 inline records, expanded with VMP_ANALYSIS_INLINES (R-RES-8:
 * only then do they change the innermost function of a pc-only sample) */
static void test_resolve_expands_inlined_frames(void)
{
    static const uint64_t chain0[] = {2, 7, 1, 5};
    static const uint64_t chain1[] = {1, 9};
    vmp_rec_inline inl[2];
    vmp_analysis_options o = VMP_ANALYSIS_OPTIONS_INIT;
    vmp_analysis *a = NULL;
    vmp_record r;
    vmp_rec_sample smp;
    vmp_asample s;
    const vmp_astack *st;
    char buf[128];
    int pass;

    inl[0].mcpc_offset = 0x20;
    inl[0].frames = chain0;
    inl[0].depth = 2;
    inl[1].mcpc_offset = 0x60;
    inl[1].frames = chain1;
    inl[1].depth = 1;
    for (pass = 0; pass < 2; pass++) {
        o.flags = pass ? VMP_ANALYSIS_INLINES : 0;
        CHECK(vmp_analysis_create(&a, &o) == VMP_OK);
        memset(&r, 0, sizeof r);
        r.type = VMP_REC_FUNCTION;
        r.u.function.id = 2;
        r.u.function.name.s = "qux";
        r.u.function.name.len = 3;
        r.u.function.scope.s = "Baz";
        r.u.function.scope.len = 3;
        CHECK(feed(a, &r) == VMP_OK);
        memset(&r, 0, sizeof r);
        r.type = VMP_REC_FUNCTION;
        r.u.function.id = 1;
        r.u.function.name.s = "bar";
        r.u.function.name.len = 3;
        r.u.function.scope.s = "Foo";
        r.u.function.scope.len = 3;
        r.u.function.bytecode_size = 20;
        CHECK(feed(a, &r) == VMP_OK);
        memset(&r, 0, sizeof r);
        r.type = VMP_REC_CODE_OBJECT;
        r.u.code_object.id = 1;
        r.u.code_object.function = 1;
        r.u.code_object.start = 0x1000;
        r.u.code_object.size = 0x100;
        r.u.code_object.pc_map = map1;
        r.u.code_object.pc_map_len = 3;
        r.u.code_object.inlines = inl;
        r.u.code_object.n_inlines = 2;
        CHECK(feed(a, &r) == VMP_OK);

        memset(&smp, 0, sizeof smp);
        smp.pc = 0x1030;
        smp.has_pc = 1;
        CHECK(vmp_analysis_resolve_sample(a, &smp, 0, &s) == VMP_OK);
        vmp_analysis_format_frame(a, buf, sizeof buf, s.leaf);
        st = vmp_analysis_stack(a, s.stack);
        if (pass) {
            CHECK_STR(buf, "Baz>>qux 7->7");
            CHECK_STR(vmp_analysis_function(a, vmp_analysis_frame(a, s.leaf)->function)->kind,
                      "inlined");
            CHECK(st && st->depth == 2);
            if (st) {
                vmp_analysis_format_frame(a, buf, sizeof buf,
                                          vmp_analysis_stack(a, st->parent)->frame);
                CHECK_STR(buf, "Foo>>bar 1->4");
            }
        } else {
            CHECK_STR(buf, "Foo>>bar 1->4");
            CHECK(st && st->depth == 1);
        }
        smp.pc = 0x1070; /* a record of depth 1: the compiled function only */
        CHECK(vmp_analysis_resolve_sample(a, &smp, 0, &s) == VMP_OK);
        vmp_analysis_format_frame(a, buf, sizeof buf, s.leaf);
        CHECK_STR(buf, "Foo>>bar 5->5");
        smp.pc = 0x1010; /* before the first record */
        CHECK(vmp_analysis_resolve_sample(a, &smp, 0, &s) == VMP_OK);
        vmp_analysis_format_frame(a, buf, sizeof buf, s.leaf);
        CHECK_STR(buf, "Foo>>bar 1->4");
        vmp_analysis_free(a);
    }
}

static uint64_t fz_state = 42;

static uint64_t fz(uint64_t n)
{
    fz_state = fz_state * 6364136223846793005ull + 1442695040888963407ull;
    return (fz_state >> 33) % n;
}

/* Records with random (often inconsistent) contents: ids defined twice or
 * never, cycles among stack nodes, unsorted pc maps, generations going back,
 * overlapping code, huge vocabulary indexes.  Nothing may crash or leak
 * (run under ASan in CI); every sample still resolves. */
static void test_resolve_survives_inconsistent_records(void)
{
    vmp_profile *p = NULL;
    vmp_record r;
    uint64_t map[8], list[8];
    vmp_rec_symbol syms[3];
    vmp_analysis_options o = VMP_ANALYSIS_OPTIONS_INIT;
    uint64_t chain[] = {3, 1, 99, UINT64_MAX, 1, 2};
    vmp_rec_inline inl[2];
    int i, j, failures = 0;
    o.flags = VMP_ANALYSIS_INLINES;
    CHECK(vmp_profile_create(&p, &o) == VMP_OK);
    for (i = 0; i < 30000; i++) {
        memset(&r, 0, sizeof r);
        switch (fz(9)) {
        case 0:
            r.type = VMP_REC_CODE_OBJECT;
            r.u.code_object.id = fz(60);
            r.u.code_object.start = 0x1000 + fz(64) * 16;
            r.u.code_object.size = fz(4) == 0 ? UINT64_MAX - fz(8) : fz(300);
            r.u.code_object.generation = fz(20);
            r.u.code_object.kind = fz(4) == 0 ? UINT64_MAX : fz(3);
            r.u.code_object.function = fz(10);
            r.u.code_object.zone = fz(3);
            for (j = 0; j < 4; j++) {
                map[2 * j] = fz(400);
                map[2 * j + 1] = fz(4) == 0 ? UINT64_MAX : fz(50);
            }
            r.u.code_object.pc_map = map;
            r.u.code_object.pc_map_len = fz(5);
            for (j = 0; j < 2; j++) {
                inl[j].mcpc_offset = fz(300);
                inl[j].frames = chain;
                inl[j].depth = fz(4);
            }
            r.u.code_object.inlines = inl;
            r.u.code_object.n_inlines = fz(3);
            break;
        case 1:
            r.type = VMP_REC_CODE_FREE;
            r.u.code_free.id = fz(60);
            r.u.code_free.generation = fz(25);
            break;
        case 2:
            r.type = VMP_REC_CODE_MOVE;
            r.u.code_move.id = fz(60);
            r.u.code_move.new_start = 0x1000 + fz(64) * 16;
            r.u.code_move.generation = fz(25);
            break;
        case 3:
            r.type = VMP_REC_CODE_COMPACTION;
            for (j = 0; j < 4; j++) {
                list[2 * j] = fz(60);
                list[2 * j + 1] = 0x1000 + fz(64) * 16;
            }
            r.u.code_compaction.moves = list;
            r.u.code_compaction.n_moves = fz(5);
            r.u.code_compaction.frees = list;
            r.u.code_compaction.n_frees = fz(3);
            r.u.code_compaction.generation = fz(25);
            break;
        case 4:
            r.type = VMP_REC_CODE_SNAPSHOT;
            r.u.code_snapshot.entries = list;
            r.u.code_snapshot.n = fz(5);
            r.u.code_snapshot.zone = fz(3);
            r.u.code_snapshot.generation = fz(25);
            break;
        case 5:
            r.type = VMP_REC_STACK_NODE;
            r.u.stack_node.id = fz(4) == 0 ? UINT64_MAX - fz(4) : fz(200);
            r.u.stack_node.parent = fz(200); /* cycles included */
            r.u.stack_node.is_function = fz(3) == 0;
            r.u.stack_node.pc = 0x1000 + fz(1200);
            r.u.stack_node.function = fz(12);
            r.u.stack_node.has_bcpc = (int)fz(2);
            r.u.stack_node.bcpc = fz(4) == 0 ? UINT64_MAX : fz(40);
            break;
        case 6:
            r.type = VMP_REC_MODULE_SYMBOLS;
            for (j = 0; j < 3; j++) {
                syms[j].value = fz(4) == 0 ? UINT64_MAX - fz(8) : fz(2000);
                syms[j].size = fz(3) ? fz(64) : 0;
                syms[j].name.s = j ? "_ZN2vm2gc7collectEv" : "_ZN";
                syms[j].name.len = strlen(syms[j].name.s);
            }
            r.u.module_symbols.module = fz(3);
            r.u.module_symbols.symbols = syms;
            r.u.module_symbols.n_symbols = fz(4);
            break;
        case 7:
            r.type = VMP_REC_FUNCTION;
            r.u.function.id = fz(12);
            r.u.function.name.s = "f";
            r.u.function.name.len = 1;
            r.u.function.bytecode_size = fz(4) == 0 ? UINT64_MAX : fz(60);
            break;
        default:
            r.type = fz(5) == 0 ? VMP_REC_FAILED_SAMPLE : VMP_REC_SAMPLE;
            r.u.sample.pc = 0x1000 + fz(1200);
            r.u.sample.has_pc = (int)fz(2);
            r.u.sample.stack = fz(220);
            r.u.sample.generation = fz(4) == 0 ? UINT64_MAX : fz(25);
            r.u.sample.state = fz(4) == 0 ? UINT64_MAX : fz(4);
            r.u.sample.reason = fz(4) == 0 ? UINT64_MAX : fz(4);
            r.u.sample.thread = fz(5);
            r.u.sample.weight = fz(3); /* 0 included */
            break;
        }
        if (vmp_profile_feed(p, &r) < 0)
            failures++;
    }
    /* only CODE_OBJECT ids defined twice are refused */
    CHECK(failures > 0);
    CHECK(vmp_profile_get_totals(p)->samples > 0);
    vmp_profile_free(p);
}

/* A stack deeper than max_stack_depth keeps its innermost frames under one
 * "[truncated N frames]" root; shallower stacks are untouched. */
static void test_deep_stacks_are_truncated(void)
{
    vmp_analysis_options o = VMP_ANALYSIS_OPTIONS_INIT;
    vmp_analysis *a = NULL;
    vmp_analysis_stats stats;
    vmp_record r;
    vmp_asample as;
    const vmp_astack *st;
    uint64_t i;
    char buf[128];
    o.max_stack_depth = 4;
    CHECK(vmp_analysis_create(&a, &o) == VMP_OK);
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_FUNCTION;
    r.u.function.id = 1;
    r.u.function.name.s = "f";
    r.u.function.name.len = 1;
    r.u.function.scope.s = r.u.function.signature.s = r.u.function.file.s = "";
    CHECK(feed(a, &r) == VMP_OK);
    for (i = 1; i <= 10; i++) { /* a chain of 10 nodes, bcpc = depth */
        memset(&r, 0, sizeof r);
        r.type = VMP_REC_STACK_NODE;
        r.u.stack_node.id = i;
        r.u.stack_node.parent = i - 1;
        r.u.stack_node.is_function = 1;
        r.u.stack_node.function = 1;
        r.u.stack_node.has_bcpc = 1;
        r.u.stack_node.bcpc = i;
        CHECK(feed(a, &r) == VMP_OK);
    }
    for (i = 0; i < 2; i++) { /* twice: the second from the cache */
        memset(&r.u.sample, 0, sizeof r.u.sample);
        r.type = VMP_REC_SAMPLE;
        r.u.sample.stack = 10;
        r.u.sample.weight = 1;
        CHECK(vmp_analysis_resolve_sample(a, &r.u.sample, 0, &as) == VMP_OK);
        st = vmp_analysis_stack(a, as.stack);
        CHECK(st && st->depth == 4);
        while (st && st->parent)
            st = vmp_analysis_stack(a, st->parent);
        CHECK(st != NULL);
        if (st) {
            vmp_analysis_format_frame(a, buf, sizeof buf, st->frame);
            CHECK(strstr(buf, "[truncated 7 frames]") != NULL);
        }
    }
    /* 4 nodes deep: within the limit */
    r.u.sample.stack = 4;
    CHECK(vmp_analysis_resolve_sample(a, &r.u.sample, 0, &as) == VMP_OK);
    st = vmp_analysis_stack(a, as.stack);
    CHECK(st && st->depth == 4);
    vmp_analysis_get_stats(a, &stats);
    CHECK_EQ_U64(stats.truncated_stacks, 1);
    vmp_analysis_free(a);
}

/* The analysis's limits: past one, VMP_ERR_LIMIT for good and a message
 * naming it; the process defaults apply to fields left 0. */
static void test_limits_stop_the_analysis(void)
{
    vmp_analysis_options o = VMP_ANALYSIS_OPTIONS_INIT, d = VMP_ANALYSIS_OPTIONS_INIT;
    vmp_analysis *a = NULL;
    vmp_record r;
    uint64_t i;
    o.max_code_history = 3;
    CHECK(vmp_analysis_create(&a, &o) == VMP_OK);
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_CODE_ZONE;
    r.u.code_zone.id = 1;
    r.u.code_zone.end = 0x100000;
    CHECK(feed(a, &r) == VMP_OK);
    for (i = 1; i <= 4; i++) {
        memset(&r, 0, sizeof r);
        r.type = VMP_REC_CODE_OBJECT;
        r.u.code_object.id = i;
        r.u.code_object.zone = 1;
        r.u.code_object.start = 0x1000 * i;
        r.u.code_object.size = 0x100;
        CHECK(feed(a, &r) == (i <= 3 ? VMP_OK : VMP_ERR_LIMIT));
    }
    CHECK(strstr(vmp_analysis_errmsg(a), "analysis limit 'history' reached: more than 3") != NULL);
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_THREAD;
    r.u.thread.id = 1;
    CHECK(feed(a, &r) == VMP_ERR_LIMIT); /* for good */
    vmp_analysis_free(a);

    d.max_stack_nodes = 2;
    vmp_analysis_set_defaults(&d);
    CHECK(vmp_analysis_create(&a, NULL) == VMP_OK);
    vmp_analysis_set_defaults(NULL);
    for (i = 1; i <= 3; i++) {
        memset(&r, 0, sizeof r);
        r.type = VMP_REC_STACK_NODE;
        r.u.stack_node.id = i;
        r.u.stack_node.pc = 0x1000 + i;
        CHECK(feed(a, &r) == (i <= 2 ? VMP_OK : VMP_ERR_LIMIT));
    }
    CHECK(strstr(vmp_analysis_errmsg(a), "'stack-nodes'") != NULL);
    vmp_analysis_free(a);
    CHECK(vmp_analysis_create(&a, NULL) == VMP_OK); /* the built-in defaults again */
    CHECK(vmp_analysis_errmsg(a)[0] == '\0');
    vmp_analysis_free(a);
}

/* The demangler bounds its nesting: a hostile name is shown as stored. */
static void test_demangler_depth_is_bounded(void)
{
    size_t n = 200000, i;
    char *name = malloc(n + 8), out[64];
    CHECK(name != NULL);
    if (!name)
        return;
    memcpy(name, "_Z1f", 4);
    for (i = 4; i < n; i++)
        name[i] = 'P';
    memcpy(name + n, "i", 2);
    CHECK(vmp_demangle(out, sizeof out, name) == 0);
    free(name);
}

int main(void)
{
    VMP_TEST_RUN(test_resolve_bytecode_ranges);
    VMP_TEST_RUN(test_resolve_symbols);
    VMP_TEST_RUN(test_resolve_module_among_many);
    VMP_TEST_RUN(test_resolve_module_offset);
    VMP_TEST_RUN(test_resolve_unnamed_symbols);
    VMP_TEST_RUN(test_deep_stacks_are_truncated);
    VMP_TEST_RUN(test_demangler_depth_is_bounded);
    VMP_TEST_RUN(test_limits_stop_the_analysis);
    VMP_TEST_RUN(test_resolve_through_generations);
    VMP_TEST_RUN(test_code_history_replays_every_generation);
    VMP_TEST_RUN(test_old_generations_replay_from_checkpoints);
    VMP_TEST_RUN(test_resolve_stacks_are_interned_and_cached);
    VMP_TEST_RUN(test_resolved_stacks_outlive_unrelated_changes);
    VMP_TEST_RUN(test_samples_with_pcs_resolved_once);
    VMP_TEST_RUN(test_samples_in_contexts_resolved_once);
    VMP_TEST_RUN(test_forgetting_a_range_keeps_other_stacks);
    VMP_TEST_RUN(test_code_map_applies_from_its_position);
    VMP_TEST_RUN(test_sparse_node_id_outlives_dense_ones);
    VMP_TEST_RUN(test_late_records_apply_to_resolved_stacks);
    VMP_TEST_RUN(test_resolve_at_a_fixed_generation);
    VMP_TEST_RUN(test_profile_sums_weights);
    VMP_TEST_RUN(test_resolve_expands_inlined_frames);
    VMP_TEST_RUN(test_resolve_survives_inconsistent_records);
    VMP_TEST_EXIT();
}
