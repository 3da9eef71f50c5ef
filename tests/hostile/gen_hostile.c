/* SPDX-License-Identifier: MIT
 *
 * gen_hostile.c - write well-formed 1.0 profiles that are hostile to the
 * tools' time and memory: each is made from a few numbers, through the
 * tools' record writer (analyze/vmp_record_writer.h).
 *
 * usage: gen_hostile deep DEPTH OUT
 *          one stack of DEPTH symbolic frames (two functions recursing into
 *          each other), 10 samples on it and 2 on a 5-frame prefix of it
 *        gen_hostile compactions OBJECTS COMPACTIONS OUT
 *          one zone of OBJECTS code objects, then COMPACTIONS compactions
 *          that each move every object (one sample after each)
 *        gen_hostile oldgens OBJECTS COMPACTIONS SAMPLES OUT
 *          the same compactions, then SAMPLES samples each at an old
 *          generation far from the one before it (in the code it was in)
 *        gen_hostile stacks N OUT
 *          N distinct two-frame stacks, one sample on each
 *        gen_hostile symbols MODULES SYMBOLS OUT
 *          MODULES modules of SYMBOLS symbols each, one sample in each
 *        gen_hostile aliases MODULES SYMBOLS OUT
 *          the same with every symbol of size 0 at its module's start (the
 *          end of a size-0 symbol is the next symbol's start)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_record_writer.h"

static vmp_record_writer *w;
static uint64_t now;

static vmp_str str(const char *s)
{
    vmp_str v;
    v.s = s;
    v.len = strlen(s);
    return v;
}

static void put(const vmp_record *rec)
{
    if (vmp_record_writer_write(w, rec) != VMP_OK) {
        fprintf(stderr, "gen_hostile: %s\n", vmp_record_writer_errmsg(w));
        exit(1);
    }
}

static void header(void)
{
    static const vmp_str states[] = {{"running", 7}};
    static const vmp_str kinds[] = {{"method", 6}};
    vmp_record r;
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_HEADER;
    r.u.header.producer = str("gen_hostile");
    r.u.header.vm_name = str("hostile");
    r.u.header.vm_version = str("1");
    r.u.header.clock = str("virtual");
    r.u.header.interval_ns = 1000000;
    r.u.header.pointer_size = 8;
    r.u.header.states = states;
    r.u.header.n_states = 1;
    r.u.header.code_kinds = kinds;
    r.u.header.n_code_kinds = 1;
    put(&r);
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_THREAD;
    r.u.thread.id = 1;
    r.u.thread.name = str("main");
    put(&r);
}

static void function(uint64_t id, const char *scope, const char *name)
{
    vmp_record r;
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_FUNCTION;
    r.u.function.id = id;
    r.u.function.scope = str(scope);
    r.u.function.name = str(name);
    r.u.function.signature = str("");
    r.u.function.file = str("");
    r.u.function.bytecode_size = 16;
    put(&r);
}

static void node(uint64_t id, uint64_t parent, int is_function, uint64_t value)
{
    vmp_record r;
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_STACK_NODE;
    r.u.stack_node.id = id;
    r.u.stack_node.parent = parent;
    r.u.stack_node.is_function = is_function;
    if (is_function) {
        r.u.stack_node.function = value;
        r.u.stack_node.has_bcpc = 1;
        r.u.stack_node.bcpc = id % 7;
    } else {
        r.u.stack_node.pc = value;
    }
    put(&r);
}

static void sample(uint64_t stack, uint64_t pc, uint64_t generation)
{
    vmp_record r;
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_SAMPLE;
    r.u.sample.time_ns = now += 1000000;
    r.u.sample.thread = 1;
    r.u.sample.stack = stack;
    r.u.sample.pc = pc;
    r.u.sample.has_pc = pc != 0;
    r.u.sample.generation = generation;
    r.u.sample.weight = 1;
    put(&r);
}

static uint64_t arg(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || end == s) {
        fprintf(stderr, "gen_hostile: bad number '%s'\n", s);
        exit(2);
    }
    return v;
}

static void deep(uint64_t depth)
{
    uint64_t i;
    int k;
    function(1, "Rec", "even:");
    function(2, "Rec", "odd:");
    for (i = 1; i <= depth; i++)
        node(i, i - 1, 1, 1 + (i & 1));
    for (k = 0; k < 10; k++)
        sample(depth, 0, 0);
    for (k = 0; k < 2; k++)
        sample(depth < 5 ? depth : 5, 0, 0);
}

static void compactions(uint64_t objects, uint64_t count);

/* After the compactions, samples that jump between old generations. */
static void old_generations(uint64_t objects, uint64_t count, uint64_t samples)
{
    const uint64_t zone_start = 0x100000, size = 16;
    uint64_t i;
    compactions(objects, count);
    for (i = 0; i < samples && count > 0; i++) {
        uint64_t gen = (i * 7919) % count + 1; /* odd generations in the upper half */
        sample(0, zone_start + ((gen & 1) ? objects * size : 0) + (i % objects) * size + 4, gen);
    }
}

static void compactions(uint64_t objects, uint64_t count)
{
    const uint64_t zone_start = 0x100000, size = 16;
    uint64_t *moves = malloc(2 * objects * sizeof *moves), i, c;
    vmp_record r;
    if (!moves)
        exit(1);
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_CODE_ZONE;
    r.u.code_zone.id = 1;
    r.u.code_zone.start = zone_start;
    r.u.code_zone.end = zone_start + 4 * objects * size;
    r.u.code_zone.name = str("code");
    put(&r);
    function(1, "Obj", "m");
    for (i = 0; i < objects; i++) {
        memset(&r, 0, sizeof r);
        r.type = VMP_REC_CODE_OBJECT;
        r.u.code_object.id = i + 1;
        r.u.code_object.zone = 1;
        r.u.code_object.function = 1;
        r.u.code_object.start = zone_start + i * size;
        r.u.code_object.size = size;
        r.u.code_object.name = str("m");
        put(&r);
    }
    node(1, 0, 0, zone_start + 4);
    for (c = 1; c <= count; c++) {
        /* odd compactions move every object up by `objects` slots, even ones back */
        uint64_t base = zone_start + ((c & 1) ? objects * size : 0);
        for (i = 0; i < objects; i++) {
            moves[2 * i] = i + 1;
            moves[2 * i + 1] = base + i * size;
        }
        memset(&r, 0, sizeof r);
        r.type = VMP_REC_CODE_COMPACTION;
        r.u.code_compaction.zone = 1;
        r.u.code_compaction.generation = c;
        r.u.code_compaction.moves = moves;
        r.u.code_compaction.n_moves = objects;
        put(&r);
        sample(0, base + 4, c);
    }
    free(moves);
}

static void stacks(uint64_t n)
{
    uint64_t i;
    vmp_record r;
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_MODULE;
    r.u.module.id = 1;
    r.u.module.path = str("/hostile/vm");
    r.u.module.start = 0x400000;
    r.u.module.end = 0x400000 + 16 * n + 0x1000;
    put(&r);
    node(1, 0, 0, 0x400010);
    for (i = 0; i < n; i++) {
        node(i + 2, 1, 0, 0x401000 + 16 * i);
        sample(i + 2, 0, 0);
    }
}

static void symbols(uint64_t modules, uint64_t count, int aliases)
{
    vmp_rec_symbol *syms = malloc(count * sizeof *syms);
    char *names = malloc(count * 24);
    uint64_t m, i;
    vmp_record r;
    if (!syms || !names)
        exit(1);
    for (m = 0; m < modules; m++) {
        uint64_t base = 0x10000000 * (m + 1);
        memset(&r, 0, sizeof r);
        r.type = VMP_REC_MODULE;
        r.u.module.id = m + 1;
        r.u.module.path = str("/hostile/libbig.so");
        r.u.module.start = base;
        r.u.module.end = base + 16 * count;
        put(&r);
        for (i = 0; i < count; i++) {
            int len = snprintf(names + 24 * i, 24, "f%" PRIu64 "_%" PRIu64, m, i);
            syms[i].value = aliases ? base : base + 16 * i;
            syms[i].size = aliases ? 0 : 16;
            syms[i].name.s = names + 24 * i;
            syms[i].name.len = (size_t)len;
        }
        memset(&r, 0, sizeof r);
        r.type = VMP_REC_MODULE_SYMBOLS;
        r.u.module_symbols.module = m + 1;
        r.u.module_symbols.symbols = syms;
        r.u.module_symbols.n_symbols = count;
        put(&r);
        sample(0, base + 8, 0);
    }
    free(syms);
    free(names);
}

int main(int argc, char **argv)
{
    vmp_record_writer_options o = VMP_RECORD_WRITER_OPTIONS_INIT;
    const char *out;
    if (argc < 4) {
        fprintf(stderr, "usage: gen_hostile deep DEPTH OUT | compactions OBJECTS COUNT OUT |\n"
                        "       oldgens OBJECTS COUNT SAMPLES OUT | stacks N OUT | symbols MODULES "
                        "SYMBOLS OUT |\n"
                        "       aliases MODULES SYMBOLS OUT\n");
        return 2;
    }
    out = argv[argc - 1];
    if (vmp_record_writer_open_file(&w, out, &o) != VMP_OK) {
        fprintf(stderr, "gen_hostile: %s: %s\n", out, w ? vmp_record_writer_errmsg(w) : "error");
        return 1;
    }
    header();
    if (strcmp(argv[1], "deep") == 0 && argc == 4)
        deep(arg(argv[2]));
    else if (strcmp(argv[1], "compactions") == 0 && argc == 5)
        compactions(arg(argv[2]), arg(argv[3]));
    else if (strcmp(argv[1], "oldgens") == 0 && argc == 6)
        old_generations(arg(argv[2]), arg(argv[3]), arg(argv[4]));
    else if (strcmp(argv[1], "stacks") == 0 && argc == 4)
        stacks(arg(argv[2]));
    else if (strcmp(argv[1], "symbols") == 0 && argc == 5)
        symbols(arg(argv[2]), arg(argv[3]), 0);
    else if (strcmp(argv[1], "aliases") == 0 && argc == 5)
        symbols(arg(argv[2]), arg(argv[3]), 1);
    else {
        fprintf(stderr, "gen_hostile: unknown mode or arguments\n");
        return 2;
    }
    if (vmp_record_writer_finish(w, NULL) != VMP_OK) {
        fprintf(stderr, "gen_hostile: %s\n", vmp_record_writer_errmsg(w));
        return 1;
    }
    vmp_record_writer_close(w);
    return 0;
}
