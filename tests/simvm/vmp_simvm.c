/* SPDX-License-Identifier: MIT
 *
 * vmp_simvm.c - `vmp-simvm`, a deterministic simulated Cog-like VM that drives
 * the writer API and writes the ground truth of every sample (exercises
 * spec.md §5 "Generations", §5.3, §5.7, §5.9-§5.12).
 *
 * The machine code zone holds trampolines and enilopmarts at its start, then
 * methods, blocks, closed and open PICs allocated by bumping a pointer.  When
 * the zone is full a compaction frees the least recently used quarter of the
 * compiled code and slides the survivors down; freed addresses are reused by
 * code compiled later.  Occasional single frees and moves happen too.  One
 * real thread does everything on a virtual clock, so the same seed gives the
 * same file and truth, byte for byte.
 *
 * Stacks are random by default (nearly every sample makes new stack nodes);
 * with --stacks N they follow N call paths picked from a Zipf distribution,
 * so distinct stacks stay bounded by paths x hot pcs x generations, as in a
 * real program's profile (see "call paths" below).
 *
 * Truth TSV: one line per sample (failed ones too), in file order:
 *   thread-name TAB state TAB kind TAB function TAB range TAB callers
 * kind: the code object's kind name, "C" for module code, "unknown" otherwise;
 * function: "<scope>>><name>" for code with a function whose scope is not
 * empty, else the function's name, else the code object's name; the demangled
 * name for C symbols; "[unknown]" for unknown pcs.
 * range: "A->B" (see vmp_analyze.h for the rule), empty when there is none
 * (C code, unknown, a pc before the first pc-map entry).
 * callers: the resolved return addresses of the stack, innermost first, each
 * "function" or "function A->B", separated by ";"; empty for failed samples.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_writer.h"

/* ---- PRNG: xoshiro256** seeded by splitmix64 -------------------------------- */

static uint64_t rng_s[4];

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t rnd(void)
{
    uint64_t r = rotl(rng_s[1] * 5, 7) * 9, t = rng_s[1] << 17;
    rng_s[2] ^= rng_s[0];
    rng_s[3] ^= rng_s[1];
    rng_s[1] ^= rng_s[2];
    rng_s[0] ^= rng_s[3];
    rng_s[2] ^= t;
    rng_s[3] = rotl(rng_s[3], 45);
    return r;
}

/* uniform in [0, n) (n > 0) */
static uint64_t below(uint64_t n)
{
    return rnd() % n;
}

/* uniform in [0, 1) */
static double unit(void)
{
    return (double)(rnd() >> 11) / 9007199254740992.0;
}

/* ---- vocabulary ---------------------------------------------------------------- */

enum {
    ST_INTERP,
    ST_JIT,
    ST_GC,
    ST_PRIM,
    ST_IDLE
};

static const char *const states[] = {"interpreter", "jit", "gc", "primitive", "idle"};

enum {
    K_TRAMP,
    K_ENIL,
    K_METHOD,
    K_BLOCK,
    K_CPIC,
    K_OPIC
};

static const char *const kinds[] = {"trampoline", "enilopmart", "method",
                                    "block",      "closed PIC", "open PIC"};
static const char *const event_kinds[] = {"gc", "compaction"};
static const char *const counter_kinds[] = {"heap bytes"};
static const char *const reasons[] = {"no frame pointer", "in signal trampoline",
                                      "stack out of bounds"};

/* ---- the C module ------------------------------------------------------------- */

typedef struct csym {
    const char *mangled, *name; /* name: as the analysis must print it */
    uint64_t size;              /* 0: covers up to the next symbol */
    int group;                  /* 0 interpreter, 1 gc, 2 primitive, 3 idle, 4 other */
} csym;

static const csym csyms[] = {
    {"interpret", "interpret", 4096, 0},
    {"_ZN2vm6interp12sendBytecodeEv", "vm::interp::sendBytecode()", 512, 0},
    {"_ZN2vm6interp9lookupSelEPNS_6ObjectEm", "vm::interp::lookupSel(vm::Object*, unsigned long)",
     768, 0},
    {"ceSendFromInLineCacheMiss", "ceSendFromInLineCacheMiss", 0, 0},
    {"_ZN2vm2gc7collectEv", "vm::gc::collect()", 2048, 1},
    {"_ZN2vm2gc6Marker4markEPNS_6ObjectE", "vm::gc::Marker::mark(vm::Object*)", 1024, 1},
    {"_ZN2vm4Heap4growEm", "vm::Heap::grow(unsigned long)", 384, 1},
    {"_ZN2vm4HeapC2Ev", "vm::Heap::Heap()", 128, 1},
    {"_ZN2vm4HeapD1Ev", "vm::Heap::~Heap()", 96, 1},
    {"_ZNK2vm4Heap9bytesUsedEv", "vm::Heap::bytesUsed() const", 64, 1},
    {"scavengeReferentsOf", "scavengeReferentsOf", 0, 1},
    {"primitiveAdd", "primitiveAdd", 256, 2},
    {"primitiveAt", "primitiveAt", 320, 2},
    {"primitiveStringReplace", "primitiveStringReplace", 640, 2},
    {"_ZN2vm4prim8fileReadEPKcm", "vm::prim::fileRead(char const*, unsigned long)", 512, 2},
    {"ioRelinquishProcessorForMicroseconds", "ioRelinquishProcessorForMicroseconds", 200, 3},
    {"ioProcessEvents", "ioProcessEvents", 0, 3},
    {"memcpy", "memcpy", 300, 4},
};
#define N_CSYMS   (sizeof csyms / sizeof csyms[0])
#define MOD_BIAS  0x400000ull
#define MOD_FIRST 0x1000ull

static uint64_t csym_value[N_CSYMS];
static uint64_t csym_extent[N_CSYMS]; /* bytes a pc may fall in */
static uint64_t mod_end;

static void layout_module(void)
{
    uint64_t v = MOD_FIRST;
    size_t i;
    for (i = 0; i < N_CSYMS; i++) {
        csym_value[i] = v;
        csym_extent[i] = csyms[i].size ? csyms[i].size : 160;
        v += csym_extent[i];
        if (csyms[i].size && i % 3 == 0)
            v += 32; /* a gap: addresses that belong to no symbol */
    }
    /* a size-0 symbol covers up to the next one: no gap after those */
    mod_end = v;
}

/* ---- functions and code ----------------------------------------------------------- */

#define MAX_MAP 12

typedef struct sfunc {
    char name[64], scope[32];
    uint32_t bc_size;
    int is_block;
    uint64_t code; /* live code object index + 1, 0 == not compiled */
    int declared;
    double heat;
} sfunc;

typedef struct scode {
    uint64_t id;
    int kind;
    uint64_t fn; /* index + 1 into funcs, 0 == none */
    char name[64];
    uint64_t start, size;
    uint64_t off[MAX_MAP];
    uint32_t bc[MAX_MAP];
    size_t n_map;
    uint64_t last_used;
    int alive;
} scode;

static const char *const classes[] = {"Integer",  "SmallInteger", "OrderedCollection", "Dictionary",
                                      "String",   "Array",        "BenchmarkRunner",   "Float",
                                      "Interval", "Set"};
static const char *const selectors[] = {
    "benchFib",     "do:",          "at:put:",   "add:", "includes:",        "printOn:",
    "collect:",     "inject:into:", "hash",      "=",    "copyFrom:to:",     "sum",
    "timesRepeat:", "value:",       "sortBlock", "run",  "keysAndValuesDo:", "detect:ifNone:",
    "asString",     "with:collect:"};

#define N_FUNCS 3000
/* The writer drains its ring on its own thread; flushing at fixed points
 * keeps the ring from filling however fast the simulation runs, and keeps
 * the output deterministic. */
#define FLUSH_EVERY 4096

static sfunc funcs[N_FUNCS];
static scode *codes;
static size_t n_codes, cap_codes;
static uint64_t *live; /* indexes of live compiled code (methods, blocks, PICs) */
static size_t n_live;
static uint64_t tramps[12];
static size_t n_tramps;

static vmp_writer *w;
static uint64_t vclock;
static uint64_t zone_id, zone_start, zone_end, region_start, free_ptr;
static uint64_t samples_taken;
static uint64_t n_compactions;
/* --blame: per thread, the code id of the last JIT-compiled unit (method,
 * block, PIC) a sample ran in, i.e. the last one the thread "exited";
 * NULL without --blame. */
static uint64_t *last_exited;

/* Recently taken stacks, replayed to make a profile's stacks repeat as real
 * ones do; forgotten whenever code moves or is freed. */
#define POOL_SIZE  512
#define POOL_DEPTH 64

typedef struct pooled {
    vmp_frame frames[POOL_DEPTH];
    uint32_t depth, state;
} pooled;

static pooled pool[POOL_SIZE];
static size_t pool_n;

static uint64_t sim_clock(void *ud)
{
    (void)ud;
    return vclock;
}

static void die(const char *what, vmp_status st)
{
    fprintf(stderr, "vmp-simvm: %s: %s\n", what, vmp_status_str(st));
    exit(1);
}

static void check(vmp_status st, const char *what)
{
    if (st < 0)
        die(what, st);
}

static scode *new_code(void)
{
    if (n_codes == cap_codes) {
        cap_codes = cap_codes ? cap_codes * 2 : 256;
        codes = realloc(codes, cap_codes * sizeof *codes);
        if (!codes)
            die("code table", VMP_ERR_NOMEM);
    }
    memset(&codes[n_codes], 0, sizeof codes[0]);
    codes[n_codes].id = n_codes + 1;
    return &codes[n_codes++];
}

static void emit_code(const scode *c)
{
    vmp_code_object o;
    vmp_pc_pair pairs[MAX_MAP];
    vmp_frame inl_frames[2][2];
    vmp_inline_record inl[2];
    size_t i;
    memset(&o, 0, sizeof o);
    o.id = c->id;
    o.zone = zone_id;
    o.kind = (uint32_t)c->kind;
    o.name = c->name;
    o.function = c->fn;
    o.start = c->start;
    o.size = c->size;
    for (i = 0; i < c->n_map; i++) {
        pairs[i].mcpc_offset = c->off[i];
        pairs[i].bcpc = c->bc[i];
    }
    o.pc_map = pairs;
    o.pc_map_len = c->n_map;
    if (c->fn && c->n_map >= 3 && c->id % 4 == 0) {
        /* an inlined callee between the second and third map entries */
        uint64_t callee = 1 + (c->id * 7) % N_FUNCS;
        inl_frames[0][0].kind = VMP_FRAME_FUNCTION;
        inl_frames[0][0].value = callee;
        inl_frames[0][0].bcpc = 3;
        inl_frames[0][1].kind = VMP_FRAME_FUNCTION;
        inl_frames[0][1].value = c->fn;
        inl_frames[0][1].bcpc = c->bc[1];
        inl_frames[1][0] = inl_frames[0][1];
        inl_frames[1][0].bcpc = c->bc[2];
        inl[0].mcpc_offset = c->off[1];
        inl[0].frames = inl_frames[0];
        inl[0].depth = 2;
        inl[1].mcpc_offset = c->off[2];
        inl[1].frames = inl_frames[1];
        inl[1].depth = 1;
        o.inlines = inl;
        o.n_inlines = 2;
    }
    check(vmp_writer_code_add(w, &o), "code_add");
}

static void declare_function(size_t fi)
{
    sfunc *f = &funcs[fi];
    vmp_function d;
    uint32_t lines[8];
    size_t i;
    if (f->declared)
        return;
    memset(&d, 0, sizeof d);
    d.id = fi + 1;
    d.name = f->name;
    d.scope = f->scope[0] ? f->scope : NULL;
    d.file = "Kernel.st";
    d.first_line = (uint32_t)(10 + fi * 17);
    d.bytecode_size = f->bc_size;
    for (i = 0; i < 4; i++) {
        lines[2 * i] = (uint32_t)(i * f->bc_size / 4);
        lines[2 * i + 1] = d.first_line + (uint32_t)i;
    }
    d.lines = lines;
    d.n_lines = 4;
    check(vmp_writer_function(w, &d), "function");
    f->declared = 1;
}

static void live_add(uint64_t idx)
{
    live = realloc(live, (n_live + 1) * sizeof *live);
    if (!live)
        die("live table", VMP_ERR_NOMEM);
    live[n_live++] = idx;
}

static void live_del(uint64_t idx)
{
    size_t i;
    for (i = 0; i < n_live; i++)
        if (live[i] == idx) {
            live[i] = live[--n_live];
            return;
        }
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

static uint64_t lru_key(uint64_t idx)
{
    return codes[idx].last_used << 20 | (codes[idx].id & 0xFFFFF);
}

static int cmp_lru(const void *x, const void *y)
{
    uint64_t a = lru_key(*(const uint64_t *)x), b = lru_key(*(const uint64_t *)y);
    return a < b ? -1 : a > b;
}

static int cmp_addr(const void *x, const void *y)
{
    uint64_t a = codes[*(const uint64_t *)x].start, b = codes[*(const uint64_t *)y].start;
    return a < b ? -1 : a > b;
}

static void free_code(uint64_t idx)
{
    scode *c = &codes[idx];
    pool_n = 0;
    c->alive = 0;
    if (c->fn)
        funcs[c->fn - 1].code = 0;
    live_del(idx);
}

/* Free the least recently used quarter and slide the survivors down. */
static void compact(void)
{
    uint64_t *order = malloc((n_live + 1) * sizeof *order);
    uint64_t *moves = malloc((2 * n_live + 1) * sizeof *moves);
    uint64_t *frees = malloc((n_live + 1) * sizeof *frees);
    size_t i, n = n_live, n_free = n / 4 ? n / 4 : (n ? 1 : 0), n_moves = 0;
    uint64_t at = region_start, dur;
    if (!order || !moves || !frees)
        die("compaction", VMP_ERR_NOMEM);
    memcpy(order, live, n * sizeof *order);
    qsort(order, n, sizeof *order, cmp_lru);
    for (i = 0; i < n_free; i++)
        frees[i] = codes[order[i]].id;
    for (i = 0; i < n_free; i++)
        free_code(order[i]);
    memcpy(order, live, n_live * sizeof *order);
    qsort(order, n_live, sizeof *order, cmp_addr);
    for (i = 0; i < n_live; i++) {
        scode *c = &codes[order[i]];
        if (c->start != at) {
            moves[2 * n_moves] = c->id;
            moves[2 * n_moves + 1] = at;
            n_moves++;
            c->start = at;
        }
        at += c->size;
    }
    free_ptr = at;
    pool_n = 0;
    qsort(frees, n_free, sizeof *frees, cmp_u64);
    dur = 200000 + below(1800000);
    check(vmp_writer_code_compaction(w, zone_id, moves, n_moves, frees, n_free, vclock, dur, NULL),
          "compaction");
    check(vmp_writer_event(w, 1, vclock, dur, 1, (int64_t)n_free, NULL), "event");
    vclock += dur;
    n_compactions++;
    free(order);
    free(moves);
    free(frees);
}

/* Build a pc map: a prologue, then entries whose bcpcs mostly increase (a
 * loop's back jump sometimes makes one go down). */
static void make_map(scode *c, uint32_t bc_size)
{
    size_t n = 2 + (size_t)below(MAX_MAP - 2), i;
    uint64_t off = 8 + below(24);
    uint32_t bc = 1 + (uint32_t)below(3);
    if (off >= c->size)
        off = c->size / 2;
    for (i = 0; i < n && off < c->size && bc < bc_size; i++) {
        c->off[i] = off;
        c->bc[i] = bc;
        /* sometimes two entries share an offset */
        off += (below(8) == 0) ? 0 : 4 + below(c->size / n + 1);
        if (below(6) == 0 && bc > 4)
            bc -= (uint32_t)below(4); /* back jump */
        else
            bc += 1 + (uint32_t)below(bc_size / (uint32_t)n + 1);
    }
    c->n_map = i;
}

/* Compile code of `kind` (for methods and blocks: of function `fi`, which is
 * not compiled) at the free pointer, compacting first when the zone is full.
 * Returns 1, or 0 when it does not fit. */
static int compile_at(int kind, size_t fi)
{
    scode *c;
    uint64_t size;
    if (kind == K_METHOD || kind == K_BLOCK)
        size = 64 + below(funcs[fi].bc_size * 6);
    else
        size = 48 + below(96);
    size = (size + 7) & ~7ull;
    if (free_ptr + size > zone_end) {
        compact();
        if (free_ptr + size > zone_end)
            return 0;
    }
    c = new_code();
    c->kind = kind;
    c->start = free_ptr;
    c->size = size;
    c->last_used = samples_taken;
    c->alive = 1;
    free_ptr += size;
    if (kind == K_METHOD || kind == K_BLOCK) {
        c->fn = fi + 1;
        funcs[fi].code = (uint64_t)(c - codes) + 1;
        declare_function(fi);
        make_map(c, funcs[fi].bc_size);
        snprintf(c->name, sizeof c->name, "%s", funcs[fi].name);
    } else {
        snprintf(c->name, sizeof c->name, "%s #%s", kinds[kind],
                 selectors[below(sizeof selectors / sizeof selectors[0])]);
    }
    emit_code(c);
    live_add((uint64_t)(c - codes));
    return 1;
}

/* Compile code of `kind`; methods and blocks of a random function that is
 * not compiled.  Returns 1, or 0 when nothing was compiled. */
static int compile(int kind)
{
    size_t fi = 0, tries;
    if (kind == K_METHOD || kind == K_BLOCK) {
        for (tries = 0; tries < 16; tries++) {
            fi = (size_t)below(N_FUNCS);
            if (!funcs[fi].code && (funcs[fi].is_block == (kind == K_BLOCK)))
                break;
        }
        if (tries == 16)
            return 0;
    }
    return compile_at(kind, fi);
}

/* ---- truth ------------------------------------------------------------------------ */

/* The truth name and range of address `a` (the executing pc, or a return
 * address - 1).  Writes "kind\tfunction\trange" or "function[ A->B]". */
static void truth_of(uint64_t a, char *kind, size_t ks, char *fn, size_t fs, char *range, size_t rs)
{
    size_t i;
    kind[0] = fn[0] = range[0] = '\0';
    for (i = 0; i < n_live + n_tramps; i++) {
        const scode *c = &codes[i < n_live ? live[i] : tramps[i - n_live]];
        if (c->alive && a >= c->start && a < c->start + c->size) {
            uint64_t off = a - c->start;
            size_t j, k = 0;
            int found = 0;
            snprintf(kind, ks, "%s", kinds[c->kind]);
            if (c->fn) {
                const sfunc *f = &funcs[c->fn - 1];
                if (f->scope[0])
                    snprintf(fn, fs, "%s>>%s", f->scope, f->name);
                else
                    snprintf(fn, fs, "%s", f->name);
            } else {
                snprintf(fn, fs, "%s", c->name);
            }
            for (j = 0; j < c->n_map; j++)
                if (c->off[j] <= off) {
                    k = j;
                    found = 1;
                }
            if (found) {
                uint32_t A = c->bc[k], B;
                if (k + 1 < c->n_map)
                    B = c->bc[k + 1] > A ? c->bc[k + 1] - 1 : A;
                else
                    B = c->fn && funcs[c->fn - 1].bc_size - 1 >= A ? funcs[c->fn - 1].bc_size - 1
                                                                   : A;
                snprintf(range, rs, "%" PRIu32 "->%" PRIu32, A, B);
            }
            return;
        }
    }
    for (i = 0; i < N_CSYMS; i++) {
        uint64_t s = csym_value[i] + MOD_BIAS;
        if (a >= s && a < s + csym_extent[i]) {
            snprintf(kind, ks, "C");
            snprintf(fn, fs, "%s", csyms[i].name);
            return;
        }
    }
    snprintf(kind, ks, "unknown");
    snprintf(fn, fs, "[unknown]");
}

/* ---- samples ------------------------------------------------------------------------ */

static uint64_t pick_live(void)
{
    /* two random choices, the hotter one wins: a skewed profile */
    uint64_t a = live[below(n_live)], b = live[below(n_live)];
    double ha = codes[a].fn ? funcs[codes[a].fn - 1].heat : 0.5;
    double hb = codes[b].fn ? funcs[codes[b].fn - 1].heat : 0.5;
    return ha >= hb ? a : b;
}

static uint64_t pick_method(void)
{
    size_t tries;
    for (tries = 0; tries < 32; tries++) {
        uint64_t i = pick_live();
        if (codes[i].kind == K_METHOD || codes[i].kind == K_BLOCK)
            return i;
    }
    return UINT64_MAX;
}

/* A return address inside method `i`: a call site + 1; half the time the call
 * is the last byte before a pc-map entry, so that resolving at the return
 * address itself would land in the wrong range. */
static uint64_t return_address_in(uint64_t i)
{
    scode *c = &codes[i];
    uint64_t off;
    c->last_used = samples_taken;
    if (c->n_map > 1 && below(2) == 0) {
        size_t j = 1 + (size_t)below(c->n_map - 1);
        off = c->off[j] ? c->off[j] - 1 : 0;
    } else {
        off = below(c->size);
    }
    return c->start + off + 1;
}

static uint64_t pc_in_csym(size_t i)
{
    return csym_value[i] + MOD_BIAS + below(csym_extent[i]);
}

static size_t csym_of_group(int g)
{
    size_t i, n = 0, pick;
    for (i = 0; i < N_CSYMS; i++)
        n += csyms[i].group == g;
    pick = (size_t)below(n);
    for (i = 0; i < N_CSYMS; i++)
        if (csyms[i].group == g && pick-- == 0)
            return i;
    return 0;
}

/* --slow FUNCTION:PCT: samples executing in that function (every function
 * of that name: slow_fn[i] for funcs[i]) are written again with probability PCT/100 (PCT >
 * 100: once plus with probability (PCT-100)/100, ...), as if every call of it
 * took PCT% longer.  Its own generator, so that the other samples of a run
 * are those of the run without --slow. */
static unsigned char slow_fn[N_FUNCS];
static int slow_on;
static double slow_extra;
static uint64_t slow_rng = 0x5eed;

static int in_slow_function(uint64_t pc)
{
    size_t i;
    for (i = 0; i < n_live; i++) {
        const scode *c = &codes[live[i]];
        if (c->alive && pc >= c->start && pc < c->start + c->size)
            return c->fn && slow_fn[c->fn - 1];
    }
    return 0;
}

static void emit_one(FILE *truth, vmp_sample *s, int failed);

/* Write sample `s` (a failed one when `failed`) and, when `truth` is not
 * NULL, its truth line; with --slow, repeated as said above. */
static void emit_sample(FILE *truth, vmp_sample *s, int failed)
{
    emit_one(truth, s, failed);
    if (slow_on && !failed && in_slow_function(s->pc)) {
        double extra = slow_extra;
        for (; extra >= 1.0; extra -= 1.0)
            emit_one(truth, s, failed);
        if ((double)(splitmix(&slow_rng) >> 11) / 9007199254740992.0 < extra)
            emit_one(truth, s, failed);
    }
}

static void emit_one(FILE *truth, vmp_sample *s, int failed)
{
    char kind[32], fn[160], range[32], callers[4096] = "";
    size_t cl = 0;
    uint32_t k;
    if (last_exited && !failed) {
        size_t i;
        const scode *in = NULL;
        for (i = 0; i < n_live; i++) {
            const scode *c = &codes[live[i]];
            if (c->alive && s->pc >= c->start && s->pc < c->start + c->size) {
                in = c;
                break;
            }
        }
        if (s->state == ST_JIT && in)
            last_exited[s->thread] = in->id;
        else if (s->state == ST_INTERP || s->state == ST_GC || s->state == ST_PRIM)
            s->blame = last_exited[s->thread];
    }
    if (failed)
        check(vmp_writer_failed_sample(w, s, (uint32_t)below(3)), "failed_sample");
    else
        check(vmp_writer_sample(w, s), "sample");
    samples_taken++;
    if (!truth)
        return;
    truth_of(s->pc, kind, sizeof kind, fn, sizeof fn, range, sizeof range);
    for (k = 1; !failed && k < s->depth; k++) {
        char ck[32], cf[160], cr[32];
        truth_of(s->frames[k].value - 1, ck, sizeof ck, cf, sizeof cf, cr, sizeof cr);
        cl += (size_t)snprintf(callers + cl, sizeof callers - cl, "%s%s%s%s", k > 1 ? ";" : "", cf,
                               cr[0] ? " " : "", cr);
        if (cl >= sizeof callers)
            cl = sizeof callers - 1;
    }
    if (s->thread == 1)
        fprintf(truth, "main");
    else
        fprintf(truth, "worker-%" PRIu64, s->thread - 1);
    fprintf(truth, "\t%s\t%s\t%s\t%s\t%s\n", states[s->state], kind, fn, range, callers);
}

static void take_sample(FILE *truth, uint64_t n_threads, uint32_t max_depth)
{
    vmp_frame frames[256];
    vmp_sample s;
    uint32_t depth = 0, want;
    double r = unit();
    int failed = 0;
    uint64_t pc, thread;

    memset(&s, 0, sizeof s);
    thread = below(3) == 0 ? 1 + below(n_threads) : 1;
    s.thread = thread;
    s.generation = VMP_GENERATION_CURRENT;
    want = 1 + (uint32_t)below(max_depth);

    if (pool_n && r < 0.6) {
        const pooled *pp = &pool[below(pool_n)];
        memcpy(frames, pp->frames, pp->depth * sizeof frames[0]);
        depth = pp->depth;
        s.state = pp->state;
        s.pc = frames[0].value;
        goto replay;
    }
    r = unit();
    if (r < 0.55 && n_live) {
        uint64_t i = pick_live();
        s.state = ST_JIT;
        if (below(12) == 0 && n_tramps) {
            i = tramps[below(n_tramps)];
        }
        codes[i].last_used = samples_taken;
        pc = codes[i].start + below(codes[i].size);
        if (codes[i].kind == K_TRAMP || codes[i].kind == K_ENIL)
            s.state = ST_INTERP;
    } else if (r < 0.70) {
        s.state = ST_INTERP;
        pc = pc_in_csym(csym_of_group(0));
    } else if (r < 0.80) {
        s.state = ST_GC;
        pc = pc_in_csym(csym_of_group(1));
    } else if (r < 0.88) {
        s.state = ST_PRIM;
        pc = pc_in_csym(csym_of_group(2));
    } else if (r < 0.93) {
        s.state = ST_IDLE;
        pc = pc_in_csym(csym_of_group(3));
    } else if (r < 0.95) {
        s.state = ST_JIT;
        pc = 0x10 + below(0x100); /* an address nothing covers */
    } else {
        s.state = (uint32_t)below(5);
        failed = 1;
        pc = below(2) && n_live ? codes[live[below(n_live)]].start : pc_in_csym(0);
    }
    s.pc = pc;
    frames[depth].kind = VMP_FRAME_PC;
    frames[depth].value = pc;
    frames[depth].bcpc = VMP_BCPC_NONE;
    depth++;
    if (!failed) {
        /* C callers for GC (vm::gc::collect calls the others), then methods */
        if (s.state == ST_GC && depth < want) {
            size_t ci = 4; /* vm::gc::collect() */
            frames[depth].kind = VMP_FRAME_PC;
            frames[depth].value = csym_value[ci] + MOD_BIAS + below(csym_extent[ci] - 1) + 1;
            frames[depth].bcpc = VMP_BCPC_NONE;
            depth++;
        }
        while (depth < want && n_live) {
            uint64_t m = pick_method();
            if (m == UINT64_MAX)
                break;
            frames[depth].kind = VMP_FRAME_PC;
            frames[depth].value = return_address_in(m);
            frames[depth].bcpc = VMP_BCPC_NONE;
            depth++;
        }
        if (depth <= POOL_DEPTH) {
            pooled *pp = &pool[pool_n < POOL_SIZE ? pool_n++ : below(POOL_SIZE)];
            memcpy(pp->frames, frames, depth * sizeof frames[0]);
            pp->depth = depth;
            pp->state = s.state;
        }
    }
replay:
    s.frames = frames;
    s.depth = depth;
    emit_sample(truth, &s, failed);
}

/* ---- call paths (--stacks) ------------------------------------------------------------ */

/* With --stacks N the simulated program runs N call paths again and again, as
 * real programs do: a chain of methods, each calling the next from a fixed
 * call site, down to a leaf (a method, a C function or a trampoline) whose
 * pc is one of three hot pcs of the path.  A sample picks a path from
 * a Zipf distribution.  A method of the path that a compaction freed is
 * compiled again (at a new address) when the path runs next. */

enum {
    LEAF_FUNC,
    LEAF_C,
    LEAF_TRAMP
};

#define ZIPF_S 1.1

typedef struct spath {
    uint32_t first;     /* its first caller in path_fn[] and path_site[] */
    uint32_t n_callers; /* methods calling down to the leaf, outermost first */
    uint32_t leaf_kind; /* LEAF_* */
    uint32_t leaf;      /* function, C symbol or trampoline index */
    uint32_t leaf_site; /* fixes vm::gc::collect()'s call site above a GC leaf */
    uint64_t salt;      /* fixes a C or trampoline leaf's hot pcs */
} spath;

static spath *paths;
static size_t n_paths;
static uint32_t *path_fn, *path_site;
static size_t n_path_elems, cap_path_elems;
static double *zipf_cdf;      /* by rank, the last one is 1 */
static uint32_t *zipf_path;   /* rank -> path */
static double compile_budget; /* code objects to compile before the next sample */

/* A stateless 64-bit mix: fixed "random" choices (call sites, hot pcs). */
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

static void path_push(uint32_t fi, uint32_t site)
{
    if (n_path_elems == cap_path_elems) {
        cap_path_elems = cap_path_elems ? 2 * cap_path_elems : 1024;
        path_fn = realloc(path_fn, cap_path_elems * sizeof *path_fn);
        path_site = realloc(path_site, cap_path_elems * sizeof *path_site);
        if (!path_fn || !path_site)
            die("call paths", VMP_ERR_NOMEM);
    }
    path_fn[n_path_elems] = fi;
    path_site[n_path_elems] = site;
    n_path_elems++;
}

/* Make `n` call paths of at most `max_depth` frames.  They form a call tree:
 * most paths extend an earlier one (its callers and its leaf method become
 * callers), so paths share their outer frames as real ones do. */
static void make_paths(size_t n, uint32_t max_depth)
{
    size_t n_funcs = N_FUNCS < 32 + n / 16 ? N_FUNCS : 32 + n / 16, i;
    uint32_t room = max_depth - 1; /* frames above the leaf */
    double sum = 0;
    paths = calloc(n, sizeof *paths);
    zipf_cdf = malloc(n * sizeof *zipf_cdf);
    zipf_path = malloc(n * sizeof *zipf_path);
    if (!paths || !zipf_cdf || !zipf_path)
        die("call paths", VMP_ERR_NOMEM);
    for (i = 0; i < n; i++) {
        spath *p = &paths[i];
        uint32_t nc = 0, extra, j, r;
        p->first = (uint32_t)n_path_elems;
        if (i > 0 && below(8) != 0) {
            const spath *q = &paths[below(i)];
            for (j = 0; j < q->n_callers && nc < room; j++, nc++)
                path_push(path_fn[q->first + j], path_site[q->first + j]);
            if (q->leaf_kind == LEAF_FUNC && nc < room) {
                path_push(q->leaf, (uint32_t)rnd());
                nc++;
            }
            extra = (uint32_t)below(3);
        } else {
            extra = 1 + (uint32_t)below(3);
        }
        for (; extra > 0 && nc < room; extra--, nc++)
            path_push((uint32_t)below(n_funcs), (uint32_t)rnd());
        r = (uint32_t)below(100);
        if (r < 70) {
            p->leaf_kind = LEAF_FUNC;
            p->leaf = (uint32_t)below(n_funcs);
        } else if (r < 98) {
            p->leaf_kind = LEAF_C;
            p->leaf = (uint32_t)csym_of_group(r < 78 ? 0 : r < 88 ? 1 : r < 95 ? 2 : 3);
            /* a GC leaf other than vm::gc::collect() is called by it */
            if (csyms[p->leaf].group == 1 && p->leaf != 4 && nc == room && nc > 0)
                nc--, n_path_elems--;
        } else {
            p->leaf_kind = LEAF_TRAMP;
            p->leaf = (uint32_t)below(n_tramps);
        }
        p->n_callers = nc;
        p->leaf_site = (uint32_t)rnd();
        p->salt = rnd();
    }
    n_paths = n;
    for (i = 0; i < n; i++) {
        sum += 1.0 / pow((double)(i + 1), ZIPF_S);
        zipf_cdf[i] = sum;
        zipf_path[i] = (uint32_t)i;
    }
    for (i = 0; i < n; i++)
        zipf_cdf[i] /= sum;
    zipf_cdf[n - 1] = 1.0;
    /* which paths are hot is not tied to the order they were made in */
    for (i = n - 1; i > 0; i--) {
        size_t k = (size_t)below(i + 1);
        uint32_t t = zipf_path[i];
        zipf_path[i] = zipf_path[k];
        zipf_path[k] = t;
    }
}

static const spath *pick_path(void)
{
    double u = unit();
    size_t lo = 0, hi = n_paths - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (zipf_cdf[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return &paths[zipf_path[lo]];
}

/* Make sure the methods of path `p` are compiled: a method that a
 * compaction freed is compiled again; that counts against the compile budget
 * so that the number of compactions stays near --compactions.  A method that
 * cannot be compiled (a tiny zone) is left out of the stack. */
static void compile_path(const spath *p)
{
    uint32_t n = p->n_callers + (p->leaf_kind == LEAF_FUNC), j, round;
    for (round = 0; round < 3; round++) {
        int missing = 0;
        for (j = 0; j < n; j++) {
            uint32_t fi = j < p->n_callers ? path_fn[p->first + j] : p->leaf;
            if (funcs[fi].code)
                codes[funcs[fi].code - 1].last_used = samples_taken;
        }
        for (j = 0; j < n; j++) {
            uint32_t fi = j < p->n_callers ? path_fn[p->first + j] : p->leaf;
            if (!funcs[fi].code) {
                missing = 1;
                if (compile_at(funcs[fi].is_block ? K_BLOCK : K_METHOD, fi))
                    compile_budget -= 1.0;
            }
        }
        if (!missing)
            return;
    }
}

/* The return address of the call at fixed call site `site` of code `i`;
 * like return_address_in(), half the sites are the last byte before a pc-map
 * entry. */
static uint64_t return_address_at(uint64_t i, uint32_t site)
{
    const scode *c = &codes[i];
    uint64_t off;
    if (c->n_map > 1 && (site & 1)) {
        size_t j = 1 + (size_t)((site >> 1) % (c->n_map - 1));
        off = c->off[j] ? c->off[j] - 1 : 0;
    } else {
        off = (site >> 1) % c->size;
    }
    return c->start + off + 1;
}

/* One of the three hot pcs of a path's leaf method, code `i`: each lies in a
 * bytecode range fixed by the path's `salt` (the prologue before the first
 * pc-map entry counts as a range), at an offset fixed by the code. */
static uint64_t hot_pc_in(uint64_t i, uint64_t salt)
{
    const scode *c = &codes[i];
    uint64_t h = below(3), r = mix64(salt + h) % (c->n_map + 1);
    uint64_t lo = r ? c->off[r - 1] : 0, hi = r < c->n_map ? c->off[r] : c->size;
    if (hi <= lo) {
        lo = 0;
        hi = c->size;
    }
    return c->start + lo + mix64(c->id << 8 | h << 4 | r) % (hi - lo);
}

static void take_path_sample(FILE *truth, uint64_t n_threads, uint32_t max_depth)
{
    vmp_frame frames[256];
    vmp_sample s;
    const spath *p;
    uint32_t depth = 0, j;
    double r = unit();
    int failed = 0;
    uint64_t pc = 0;

    memset(&s, 0, sizeof s);
    s.thread = below(3) == 0 ? 1 + below(n_threads) : 1;
    s.generation = VMP_GENERATION_CURRENT;
    p = pick_path();
    compile_path(p);
    if (p->leaf_kind == LEAF_FUNC && funcs[p->leaf].code) {
        uint64_t i = funcs[p->leaf].code - 1;
        s.state = ST_JIT;
        pc = hot_pc_in(i, p->salt);
    } else if (p->leaf_kind == LEAF_C || p->leaf_kind == LEAF_FUNC) {
        /* a method that could not be compiled runs in the interpreter */
        static const uint32_t state_of_group[] = {ST_INTERP, ST_GC, ST_PRIM, ST_IDLE, ST_PRIM};
        size_t ci = p->leaf_kind == LEAF_C ? p->leaf : 0;
        s.state = state_of_group[csyms[ci].group];
        pc = csym_value[ci] + MOD_BIAS + mix64(p->salt + below(3)) % csym_extent[ci];
    } else {
        const scode *c = &codes[tramps[p->leaf]];
        s.state = ST_INTERP;
        pc = c->start + mix64(p->salt + below(2)) % c->size;
    }
    if (r < 0.03) {
        failed = 1;
    } else if (r < 0.045) {
        s.state = ST_JIT;
        pc = 0x10 + 16 * below(8); /* an address nothing covers */
    }
    s.pc = pc;
    frames[depth].kind = VMP_FRAME_PC;
    frames[depth].value = pc;
    frames[depth].bcpc = VMP_BCPC_NONE;
    depth++;
    if (!failed) {
        if (p->leaf_kind == LEAF_C && csyms[p->leaf].group == 1 && p->leaf != 4 &&
            depth < max_depth) {
            size_t ci = 4; /* vm::gc::collect() */
            frames[depth].kind = VMP_FRAME_PC;
            frames[depth].value =
                csym_value[ci] + MOD_BIAS + 1 + p->leaf_site % (csym_extent[ci] - 1);
            frames[depth].bcpc = VMP_BCPC_NONE;
            depth++;
        }
        for (j = p->n_callers; j-- > 0 && depth < max_depth;) {
            uint32_t fi = path_fn[p->first + j];
            if (!funcs[fi].code)
                continue;
            frames[depth].kind = VMP_FRAME_PC;
            frames[depth].value = return_address_at(funcs[fi].code - 1, path_site[p->first + j]);
            frames[depth].bcpc = VMP_BCPC_NONE;
            depth++;
        }
    }
    s.frames = frames;
    s.depth = depth;
    emit_sample(truth, &s, failed);
}

/* ---- main ----------------------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f, "usage: vmp-simvm [options]\n"
               "Simulate a Cog-like VM with a JIT and write its profile and the truth.\n"
               "  --seed N          PRNG seed (default 1)\n"
               "  --samples N       samples to take (default 10000)\n"
               "  --threads N       VM threads (default 3)\n"
               "  --compactions N   aim for about N code compactions (default 4)\n"
               "  --zone-size BYTES machine code zone size (default 262144)\n"
               "  --depth N         maximum stack depth (default 8)\n"
               "  --stacks N        the program runs N call paths (chains of methods with\n"
               "                    fixed call sites down to a leaf with three hot pcs), one\n"
               "                    picked per sample from a Zipf distribution (s = 1.1), so\n"
               "                    that stacks repeat as in real profiles; code a compaction\n"
               "                    freed is compiled again when its path runs.  The paths\n"
               "                    use 32 + N/16 methods (at most 3000): when those do not\n"
               "                    fit in the zone, compactions exceed --compactions\n"
               "                    (default 0: random stacks, nearly all distinct)\n"
               "  -o FILE           profile to write (default simvm.vmp)\n"
               "  --truth FILE      truth TSV to write (default: none)\n"
               "  --label KEY=VALUE add a header label (repeatable; the last of a key wins)\n"
               "  --blame           give samples in the interpreter, GC and primitive states\n"
               "                    a blame: the code id of the method, block or PIC its\n"
               "                    thread last ran in (default: no blame; the truth TSV is\n"
               "                    the same either way)\n"
               "  --run-seed N      after the program (its functions and call paths) is made\n"
               "                    from --seed,\n"
               "                    run it with this PRNG seed: runs of one program that\n"
               "                    differ only by noise (default: --seed alone)\n"
               "  --format 1.2|2.0  the file's format (default 2.0: samples in SAMPLE_BLOCK\n"
               "                    records)\n"
               "  --time-unit NS    with format 2.0: the unit of the blocks' sample times\n"
               "                    (default: the writer's, 1000 (microseconds) at\n"
               "                    intervals of 10us or more, else 1)\n"
               "  --slow FUNCTION:PCT\n"
               "                    make FUNCTION (a name as `vmp report` prints it) PCT%%\n"
               "                    more expensive: each sample executing in it is taken\n"
               "                    again with probability PCT/100\n"
               "  --help            this text\n"
               "\n"
               "The truth TSV has one line per sample, in the order the samples are taken\n"
               "(failed samples included), with six tab-separated columns:\n"
               "  1 thread    \"main\" (thread 1) or \"worker-N\" (thread N + 1)\n"
               "  2 state     the VM state: one of the header's states\n"
               "  3 kind      the code kind of the sample's pc (\"method\", \"block\",\n"
               "              \"closed PIC\", ...), \"C\" for a symbol of the VM's\n"
               "              module, \"unknown\" when the pc lies in neither\n"
               "  4 function  the display name of the pc (spec.md R-RES-2: scope>>name,\n"
               "              the code object's name when it has no function, the\n"
               "              symbol's name, or \"[unknown]\")\n"
               "  5 range     the bytecode range \"A->B\" of the pc (spec.md R-RES-4);\n"
               "              empty outside generated code or before the first pc-map\n"
               "              entry\n"
               "  6 callers   the caller frames, innermost first, separated by ';',\n"
               "              each \"function\" or \"function A->B\" (return address - 1);\n"
               "              empty for a failed sample or a one-frame stack\n");
}

#define MAX_LABELS 16

/* Add or replace (same key) the label "KEY=VALUE" in the key, value array
 * `labels` of `*n` pairs.  @return 0, or -1 when malformed or full. */
static int add_label(const char **labels, size_t *n, const char *arg)
{
    static char store[MAX_LABELS][256];
    static size_t used;
    const char *eq = strchr(arg, '=');
    size_t klen = eq ? (size_t)(eq - arg) : 0, i;
    if (!eq || klen == 0 || strlen(arg) >= sizeof store[0] || used == MAX_LABELS)
        return -1;
    memcpy(store[used], arg, strlen(arg) + 1);
    store[used][klen] = '\0';
    for (i = 0; i < *n && strcmp(labels[2 * i], store[used]) != 0; i++)
        ;
    labels[2 * i] = store[used];
    labels[2 * i + 1] = store[used] + klen + 1;
    if (i == *n)
        (*n)++;
    used++;
    return 0;
}

/* --slow "FUNCTION:PCT": find FUNCTION among the program's functions. */
static int set_slow(const char *arg)
{
    const char *colon = strrchr(arg, ':');
    char name[200], *end;
    double pct;
    size_t i;
    if (!colon || (size_t)(colon - arg) >= sizeof name) {
        fprintf(stderr, "vmp-simvm: --slow wants FUNCTION:PCT, not '%s'\n", arg);
        return -1;
    }
    memcpy(name, arg, (size_t)(colon - arg));
    name[colon - arg] = '\0';
    pct = strtod(colon + 1, &end);
    if (*end || end == colon + 1 || !(pct >= 0 && pct <= 10000)) {
        fprintf(stderr, "vmp-simvm: --slow: bad percentage '%s'\n", colon + 1);
        return -1;
    }
    for (i = 0; i < N_FUNCS; i++) {
        char full[200];
        const sfunc *f = &funcs[i];
        if (f->scope[0])
            snprintf(full, sizeof full, "%s>>%s", f->scope, f->name);
        else
            snprintf(full, sizeof full, "%s", f->name);
        if (strcmp(full, name) == 0) {
            slow_fn[i] = 1;
            slow_on = 1;
        }
    }
    slow_extra = pct / 100.0;
    if (!slow_on)
        fprintf(stderr, "vmp-simvm: --slow: no function '%s' in this program\n", name);
    return slow_on ? 0 : -1;
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v;
    if (!s || !*s)
        return -1;
    v = strtoull(s, &end, 0);
    if (*end)
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t seed = 1, n_samples = 10000, n_threads = 3, want_comp = 4, zone_size = 262144,
             max_depth = 8, n_stacks = 0, x, i, avg_size, region, total_bytes, interval = 1000000;
    const char *out = "simvm.vmp", *truth_path = NULL;
    FILE *truth;
    vmp_writer_meta meta;
    vmp_writer_options opts = VMP_WRITER_OPTIONS_INIT;
    vmp_symbol_desc syms[N_CSYMS];
    char tname[32];
    double compile_rate;
    int ai, blame = 0, have_run_seed = 0;
    unsigned format_major = 2;
    uint64_t time_unit = 0;
    uint64_t run_seed = 0;
    const char *slow = NULL;
    const char *labels[2 * (MAX_LABELS + 2)] = {"benchmark", "simulated", "mode", "test"};
    size_t n_labels = 2;

    for (ai = 1; ai < argc; ai++) {
        const char *a = argv[ai];
        uint64_t *dst = NULL;
        if (strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--blame") == 0) {
            blame = 1;
            continue;
        } else if (strcmp(a, "--format") == 0 && ai + 1 < argc &&
                   (strcmp(argv[ai + 1], "1.2") == 0 || strcmp(argv[ai + 1], "2.0") == 0)) {
            format_major = strcmp(argv[++ai], "2.0") == 0 ? 2 : 1;
            continue;
        } else if (strcmp(a, "--time-unit") == 0) {
            dst = &time_unit;
        } else if (strcmp(a, "--label") == 0 && ai + 1 < argc) {
            if (add_label(labels, &n_labels, argv[++ai]) != 0) {
                fprintf(stderr, "vmp-simvm: bad label '%s' (KEY=VALUE, at most %d)\n", argv[ai],
                        MAX_LABELS);
                return 2;
            }
            continue;
        } else if (strcmp(a, "--seed") == 0) {
            dst = &seed;
        } else if (strcmp(a, "--samples") == 0) {
            dst = &n_samples;
        } else if (strcmp(a, "--threads") == 0) {
            dst = &n_threads;
        } else if (strcmp(a, "--compactions") == 0) {
            dst = &want_comp;
        } else if (strcmp(a, "--zone-size") == 0) {
            dst = &zone_size;
        } else if (strcmp(a, "--depth") == 0) {
            dst = &max_depth;
        } else if (strcmp(a, "--stacks") == 0) {
            dst = &n_stacks;
        } else if (strcmp(a, "-o") == 0 && ai + 1 < argc) {
            out = argv[++ai];
            continue;
        } else if (strcmp(a, "--truth") == 0 && ai + 1 < argc) {
            truth_path = argv[++ai];
            continue;
        } else if (strcmp(a, "--run-seed") == 0) {
            dst = &run_seed;
            have_run_seed = 1;
        } else if (strcmp(a, "--slow") == 0 && ai + 1 < argc) {
            slow = argv[++ai];
            continue;
        }
        if (!dst || ai + 1 >= argc || parse_u64(argv[ai + 1], dst)) {
            fprintf(stderr, "vmp-simvm: bad argument '%s'\n", a);
            usage(stderr);
            return 2;
        }
        ai++;
    }
    if (n_threads < 1 || max_depth < 1 || max_depth > 200 || zone_size < 16384 ||
        n_stacks > 10000000) {
        fprintf(stderr, "vmp-simvm: need --threads >= 1, 1 <= --depth <= 200, "
                        "--zone-size >= 16384, --stacks <= 10000000\n");
        return 2;
    }

    if (blame) {
        last_exited = calloc(n_threads + 1, sizeof *last_exited);
        if (!last_exited) {
            fprintf(stderr, "vmp-simvm: out of memory\n");
            return 1;
        }
    }
    x = seed;
    for (i = 0; i < 4; i++)
        rng_s[i] = splitmix(&x);
    layout_module();

    for (i = 0; i < N_FUNCS; i++) {
        sfunc *f = &funcs[i];
        const char *cls = classes[below(sizeof classes / sizeof classes[0])];
        const char *sel = selectors[i % (sizeof selectors / sizeof selectors[0])];
        f->is_block = below(5) == 0;
        if (f->is_block) {
            snprintf(f->name, sizeof f->name, "[] in %s>>%s", cls, sel);
        } else {
            snprintf(f->scope, sizeof f->scope, "%s%s", cls, i >= 20 ? " class" : "");
            if (i >= 40)
                snprintf(f->scope, sizeof f->scope, "%s%" PRIu64, cls, i / 20);
            snprintf(f->name, sizeof f->name, "%s", sel);
        }
        f->bc_size = 8 + (uint32_t)below(120);
        f->heat = unit() * unit();
    }
    if (slow && set_slow(slow) != 0)
        return 2;

    memset(&meta, 0, sizeof meta);
    meta.vm_name = "simvm";
    meta.vm_version = "1.0 (Cog-like)";
    meta.pid = 4242;
    meta.sample_interval_ns = interval;
    meta.states = states;
    meta.n_states = 5;
    meta.code_kinds = kinds;
    meta.n_code_kinds = 6;
    meta.event_kinds = event_kinds;
    meta.n_event_kinds = 2;
    meta.counter_kinds = counter_kinds;
    meta.n_counter_kinds = 1;
    meta.failure_reasons = reasons;
    meta.n_failure_reasons = 3;
    meta.labels = labels;
    meta.n_labels = n_labels;
    opts.clock = sim_clock;
    opts.clock_name = "virtual";
    opts.chunk_age_ms = VMP_WRITER_NO_AGE_LIMIT;
    opts.max_depth = (uint32_t)max_depth;
    opts.chunk_bytes = 64 * 1024;
    opts.format_major = format_major;
    opts.sample_time_unit_ns = time_unit;
    opts.ring_slots = 2 * FLUSH_EVERY;
    vclock = 1000;
    check(vmp_writer_open(&w, out, &meta, &opts), out);

    truth = truth_path ? fopen(truth_path, "w") : NULL;
    if (truth_path && !truth) {
        perror(truth_path);
        return 1;
    }

    for (i = 0; i < N_CSYMS; i++) {
        syms[i].value = csym_value[i];
        syms[i].size = csyms[i].size;
        syms[i].name = csyms[i].mangled;
    }
    check(vmp_writer_add_module_symbols(w, NULL, "/opt/simvm/lib/simvm", "\x01\x02\x03\x04", 4,
                                        MOD_BIAS, MOD_BIAS + MOD_FIRST, MOD_BIAS + mod_end, syms,
                                        N_CSYMS),
          "module");
    for (i = 1; i <= n_threads; i++) {
        if (i == 1)
            snprintf(tname, sizeof tname, "main");
        else
            snprintf(tname, sizeof tname, "worker-%" PRIu64, i - 1);
        check(vmp_writer_thread(w, i, tname, 0), "thread");
    }

    zone_start = 0x10000000ull;
    zone_end = zone_start + zone_size;
    check(vmp_writer_code_zone(w, &zone_id, "machine code zone", zone_start, zone_end), "zone");
    free_ptr = zone_start;
    {
        static const char *const tn[] = {"ceCallCogCodePopReceiverReg",
                                         "ceEnterCogCodePopReceiverReg",
                                         "ceMethodAbort",
                                         "cePICAbort",
                                         "ceReturnToInterpreter",
                                         "ceBaseFrameReturn",
                                         "ceCPICMiss",
                                         "ceNonLocalReturn"};
        static const char *const en[] = {"cePrimReturnEnterCogCode", "ceEnterCogCodeFromInterp",
                                         "ceCallPICAndEnter"};
        for (i = 0; i < 11; i++) {
            scode *c = new_code();
            c->kind = i < 8 ? K_TRAMP : K_ENIL;
            snprintf(c->name, sizeof c->name, "%s", i < 8 ? tn[i] : en[i - 8]);
            c->start = free_ptr;
            c->size = 32 + 8 * (i % 4);
            c->alive = 1;
            free_ptr += c->size;
            emit_code(c);
            tramps[n_tramps++] = (uint64_t)(c - codes);
        }
    }
    region_start = free_ptr;
    if (n_stacks)
        make_paths((size_t)n_stacks, (uint32_t)max_depth);
    if (have_run_seed) {
        x = run_seed ^ 0x72756e7365656421ull;
        for (i = 0; i < 4; i++)
            rng_s[i] = splitmix(&x);
    }
    region = zone_end - region_start;

    /* Fill rate: about 30% of the region up front, then enough code per sample
     * that the region fills once and then `want_comp` times a quarter. */
    avg_size = 64 + 68 * 6 / 2 + 8;
    total_bytes = want_comp ? region * 7 / 10 + want_comp * region / 4 : region * 5 / 10;
    while (free_ptr - region_start < region * 3 / 10)
        compile(below(10) < 7 ? K_METHOD : below(3) ? K_BLOCK : K_CPIC);
    compile_rate = (double)total_bytes / (double)avg_size / (double)(n_samples ? n_samples : 1);

    for (i = 0; i < n_samples; i++) {
        vclock += interval - interval / 10 + below(interval / 5);
        for (compile_budget += compile_rate; compile_budget >= 1.0; compile_budget -= 1.0) {
            uint64_t k = below(20);
            compile(k < 13 ? K_METHOD : k < 17 ? K_BLOCK : k < 19 ? K_CPIC : K_OPIC);
        }
        /* single frees and moves: about 2 + --compactions of each per run */
        if (unit() * (double)n_samples < (double)(2 + want_comp) && n_live > 8) {
            uint64_t victim = live[below(n_live)];
            free_code(victim);
            check(vmp_writer_code_free(w, codes[victim].id, NULL), "code_free");
        }
        if (unit() * (double)n_samples < (double)(2 + want_comp) && n_live > 8) {
            uint64_t m = live[below(n_live)];
            if (free_ptr + codes[m].size <= zone_end) {
                pool_n = 0;
                codes[m].start = free_ptr;
                free_ptr += codes[m].size;
                check(vmp_writer_code_move(w, codes[m].id, codes[m].start, NULL), "code_move");
            }
        }
        if (below(100) == 0) {
            uint64_t d = 50000 + below(500000);
            check(vmp_writer_event(w, 0, vclock, d, 1 + below(n_threads), (int64_t)below(1000),
                                   "scavenge"),
                  "event");
        }
        if (below(250) == 0)
            check(vmp_writer_counter(w, 0, (int64_t)(1000000 + below(5000000))), "counter");
        if (n_stacks)
            take_path_sample(truth, n_threads, (uint32_t)max_depth);
        else
            take_sample(truth, n_threads, (uint32_t)max_depth);
        if ((i + 1) % FLUSH_EVERY == 0)
            check(vmp_writer_flush(w), "flush");
    }
    vclock += interval;
    check(vmp_writer_close(w, NULL), "close");
    if (truth && fclose(truth) != 0) {
        perror(truth_path);
        return 1;
    }
    fprintf(stderr,
            "vmp-simvm: %" PRIu64 " samples, %" PRIu64 " code objects, %" PRIu64 " compactions\n",
            n_samples, (uint64_t)n_codes, n_compactions);
    free(codes);
    free(live);
    free(paths);
    free(path_fn);
    free(path_site);
    free(zipf_cdf);
    free(zipf_path);
    free(last_exited);
    return 0;
}
