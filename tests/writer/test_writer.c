/* SPDX-License-Identifier: MIT
 *
 * test_writer.c - the writer's output, decoded independently with zstd and
 * libcbor: every record type field by field, chunking, the seek table,
 * ordering, interning, determinism, and the zstd command line
 * (spec.md §3 to §6).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vmp_test.h"
#include "vmp_test_decode.h"
#include "vmp_writer.h"

static char tmpdir[256];

int main(void);

/* Addresses of functions, as plain integers (no function-to-object casts). */
static uintptr_t main_address(void)
{
    int (*volatile fp)(void) = main;
    uintptr_t a;
    memcpy(&a, (void *)&fp, sizeof a);
    return a;
}

/* A C library function that the sanitizers' runtimes do not intercept. */
static uintptr_t libc_address(void)
{
    int (*volatile fp)(const char *, const char *) = strverscmp;
    uintptr_t a;
    memcpy(&a, (void *)&fp, sizeof a);
    return a;
}

static const char *tmp_path(const char *name)
{
    static char buf[4][512];
    static int i;
    i = (i + 1) % 4;
    snprintf(buf[i], sizeof buf[i], "%s/%s", tmpdir, name);
    return buf[i];
}

/* A deterministic clock: every read advances it by 1000 ns. */
static _Atomic uint64_t fake_now;

static uint64_t fake_clock(void *ud)
{
    (void)ud;
    return atomic_fetch_add(&fake_now, 1000) + 1000;
}

static vmp_writer_options det_options(size_t chunk_bytes)
{
    vmp_writer_options o = VMP_WRITER_OPTIONS_INIT;
    o.format_major = 1; /* SAMPLE records, which the test decoder reads one by one */
    o.chunk_bytes = chunk_bytes;
    o.chunk_age_ms = VMP_WRITER_NO_AGE_LIMIT;
    o.clock = fake_clock;
    o.clock_name = "virtual";
    return o;
}

static const char *const states[] = {"running", "gc", "idle"};
static const char *const kinds[] = {"method", "block", "closed PIC", "trampoline"};
static const char *const tiers[] = {"baseline", "optimized"};
static const char *const ev_kinds[] = {"gc", "compile"};
static const char *const ctr_kinds[] = {"heap"};
static const char *const reasons[] = {"no frame pointer", "in prologue"};
static const char *const labels[] = {"benchmark", "fib", "mode", "test"};

static vmp_writer_meta full_meta(void)
{
    vmp_writer_meta m = {0};
    m.vm_name = "TestVM";
    m.vm_version = "1.2.3";
    m.pid = 4242;
    m.sample_interval_ns = 1000000;
    m.states = states;
    m.n_states = 3;
    m.code_kinds = kinds;
    m.n_code_kinds = 4;
    m.tiers = tiers;
    m.n_tiers = 2;
    m.event_kinds = ev_kinds;
    m.n_event_kinds = 2;
    m.counter_kinds = ctr_kinds;
    m.n_counter_kinds = 1;
    m.failure_reasons = reasons;
    m.n_failure_reasons = 2;
    m.labels = labels;
    m.n_labels = 2;
    return m;
}

static void check_str_array(const td_rec *r, unsigned key, const char *const *v, size_t n)
{
    cbor_item_t *a = td_get(r->map, key);
    CHECK(a && cbor_isa_array(a) && cbor_array_size(a) == n);
    if (!a || cbor_array_size(a) != n)
        return;
    char buf[64];
    for (size_t i = 0; i < n; i++)
        CHECK_STR(td_str(cbor_array_handle(a)[i], buf, sizeof buf), v[i]);
}

/* Walk a sample's stack from its innermost node to the root: frames[0] is
 * the innermost.  Returns the depth, or -1 if a node is missing or defined
 * after the sample. */
static int walk_stack(const td_file *f, size_t sample_idx, uint64_t node, uint64_t *values,
                      uint64_t *kinds_out, int max)
{
    int depth = 0;
    while (node != 0) {
        size_t found = SIZE_MAX;
        for (size_t i = 0; i < sample_idx; i++)
            if (f->recs[i].type == VMP_REC_STACK_NODE &&
                td_uint(&f->recs[i], VMP_NODE_ID, 0) == node) {
                found = i;
                break;
            }
        if (found == SIZE_MAX || depth >= max)
            return -1;
        const td_rec *n = &f->recs[found];
        int has_pc = td_has(n, VMP_NODE_PC), has_fn = td_has(n, VMP_NODE_FUNCTION);
        if (has_pc == has_fn) /* spec R-STK-1 */
            return -1;
        values[depth] = has_pc ? td_uint(n, VMP_NODE_PC, 0) : td_uint(n, VMP_NODE_FUNCTION, 0);
        if (kinds_out)
            kinds_out[depth] = has_pc ? VMP_FRAME_PC : VMP_FRAME_FUNCTION;
        depth++;
        node = td_uint(n, VMP_NODE_PARENT, 0);
    }
    return depth;
}

/* spec R-ID-1, R-STK-2: nodes defined once, parents first, no two nodes
 * with the same parent and frame. */
typedef struct node_key {
    uint64_t parent, value, bcpc, is_fn;
} node_key;

static int cmp_node(const void *a, const void *b)
{
    return memcmp(a, b, sizeof(node_key));
}

static void check_stack_nodes(const td_file *f)
{
    size_t n = td_count(f, VMP_REC_STACK_NODE), k = 0;
    uint64_t max_id = 0;
    for (size_t i = 0; i < f->n; i++)
        if (f->recs[i].type == VMP_REC_STACK_NODE && td_uint(&f->recs[i], VMP_NODE_ID, 0) > max_id)
            max_id = td_uint(&f->recs[i], VMP_NODE_ID, 0);
    unsigned char *defined = calloc(max_id + 1, 1);
    node_key *keys = calloc(n ? n : 1, sizeof *keys);
    size_t twice = 0, orphans = 0, zero = 0;
    for (size_t i = 0; i < f->n; i++) {
        const td_rec *a = &f->recs[i];
        if (a->type != VMP_REC_STACK_NODE)
            continue;
        uint64_t id = td_uint(a, VMP_NODE_ID, 0), parent = td_uint(a, VMP_NODE_PARENT, 0);
        zero += id == 0;
        twice += defined[id];
        orphans += parent != 0 && (parent > max_id || !defined[parent]);
        defined[id] = 1;
        keys[k].parent = parent;
        keys[k].is_fn = td_has(a, VMP_NODE_FUNCTION);
        keys[k].value =
            keys[k].is_fn ? td_uint(a, VMP_NODE_FUNCTION, 0) : td_uint(a, VMP_NODE_PC, 0);
        keys[k].bcpc = td_uint(a, VMP_NODE_BCPC, UINT64_MAX);
        k++;
    }
    qsort(keys, k, sizeof *keys, cmp_node);
    size_t dups = 0;
    for (size_t i = 1; i < k; i++)
        dups += memcmp(&keys[i - 1], &keys[i], sizeof *keys) == 0;
    CHECK_EQ_U64(zero, 0);
    CHECK_EQ_U64(twice, 0);
    CHECK_EQ_U64(orphans, 0);
    CHECK_EQ_U64(dups, 0);
    free(defined);
    free(keys);
}

static void check_end_and_seek(const td_file *f)
{
    size_t end = td_find(f, VMP_REC_END, 0);
    CHECK(end != SIZE_MAX && end == f->n - 1);
    if (end == SIZE_MAX)
        return;
    const td_rec *e = &f->recs[end];
    size_t samples = td_count(f, VMP_REC_SAMPLE) + td_count(f, VMP_REC_FAILED_SAMPLE);
    /* spec R-END-1 */
    CHECK_EQ_U64(td_uint(e, VMP_END_SAMPLES, 0), samples);
    CHECK_EQ_U64(td_uint(e, VMP_END_FAILED, 0), td_count(f, VMP_REC_FAILED_SAMPLE));
    CHECK_EQ_U64(td_uint(e, VMP_END_CHUNKS, 0), e->chunk);
    CHECK_EQ_U64(e->chunk, f->n_chunks - 1);
    /* spec §6 */
    CHECK(f->seek != NULL && f->seek_footer_ok);
    if (!f->seek)
        return;
    CHECK(cbor_isa_array(f->seek) && cbor_array_size(f->seek) == f->n_chunks);
    for (size_t i = 0; i < f->n_chunks && i < cbor_array_size(f->seek); i++) {
        cbor_item_t *ent = cbor_array_handle(f->seek)[i];
        CHECK(cbor_array_size(ent) == 6);
        CHECK_EQ_U64(td_at(ent, 0), f->chunks[i].offset);
        CHECK_EQ_U64(td_at(ent, 1), f->chunks[i].compressed_size);
        CHECK_EQ_U64(td_at(ent, 2), f->chunks[i].content_size);
        CHECK_EQ_U64(td_at(ent, 3), f->chunks[i].first_time);
        CHECK_EQ_U64(td_at(ent, 4), f->chunks[i].last_time);
        CHECK_EQ_U64(td_at(ent, 5), f->chunks[i].samples);
        /* spec R-SEEK-2: a chunk without samples has times 0, 0 */
        if (td_at(ent, 5) == 0)
            CHECK(td_at(ent, 3) == 0 && td_at(ent, 4) == 0);
    }
}

/* ---- every record type, field by field ----------------------------------- */

static uint64_t zone_id, module_id, sym_module_id, gen_free, gen_move, gen_comp, gen_snap;

static void write_every_record(vmp_writer *w, int with_elf)
{
    static const uint8_t bid[] = {0xde, 0xad, 0xbe, 0xef};
    vmp_symbol_desc syms[] = {{0x1000, 0x20, "vm_interpret"}, {0x1020, 0x10, "_ZN2vm2gcEv"}};
    CHECK(vmp_writer_add_module_symbols(w, &sym_module_id, "/opt/vm/libvm.so", bid, sizeof bid,
                                        0x7f0000000000ull, 0x7f0000001000ull, 0x7f0000002000ull,
                                        syms, 2) == VMP_OK);
    if (with_elf)
        CHECK(vmp_writer_add_module(w, &module_id, "/proc/self/exe", 0x400000, 0x400000,
                                    0x500000) == VMP_OK);
    CHECK(vmp_writer_thread(w, 7, "main", 0) == VMP_OK);
    uint32_t lines[] = {0, 10, 4, 11, 9, 13};
    vmp_function fn = {.id = 3,
                       .name = "benchFib",
                       .scope = "Integer",
                       .signature = "(I)I",
                       .file = "Integer.st",
                       .first_line = 10,
                       .bytecode_size = 24,
                       .lines = lines,
                       .n_lines = 3};
    CHECK(vmp_writer_function(w, &fn) == VMP_OK);
    CHECK(vmp_writer_code_zone(w, &zone_id, "machine code zone", 0x10000, 0x90000) == VMP_OK);
    vmp_pc_pair map[] = {{0, 1}, {8, 4}, {8, 5}, {40, 9}};
    vmp_frame chain0[] = {{.value = 5, .bcpc = 2, .kind = VMP_FRAME_FUNCTION},
                          {.value = 3, .bcpc = 4, .kind = VMP_FRAME_FUNCTION}};
    vmp_frame chain1[] = {{.value = 3, .bcpc = VMP_BCPC_NONE, .kind = VMP_FRAME_FUNCTION}};
    vmp_inline_record inl[] = {{16, chain0, 2}, {32, chain1, 1}};
    vmp_code_object code = {.id = 100,
                            .zone = zone_id,
                            .kind = 1,
                            .tier = 2,
                            .name = "benchFib",
                            .function = 3,
                            .start = 0x10100,
                            .size = 64,
                            .pc_map = map,
                            .pc_map_len = 4,
                            .inlines = inl,
                            .n_inlines = 2};
    CHECK(vmp_writer_code_add(w, &code) == VMP_OK);
    vmp_code_object code2 = {.id = 101, .start = 0x10200, .size = 32};
    CHECK(vmp_writer_code_add(w, &code2) == VMP_OK);
    vmp_code_object code3 = {.id = 102, .zone = zone_id, .start = 0x10300, .size = 32};
    CHECK(vmp_writer_code_add(w, &code3) == VMP_OK);

    vmp_frame frames[] = {{.value = 0x10108, .kind = VMP_FRAME_PC},
                          {.value = 3, .bcpc = 4, .kind = VMP_FRAME_FUNCTION},
                          {.value = 0x401000, .kind = VMP_FRAME_PC}};
    vmp_sample s = {.thread = 7,
                    .pc = 0x10108,
                    .generation = VMP_GENERATION_CURRENT,
                    .blame = 100,
                    .state = 2,
                    .weight = 3,
                    .frames = frames,
                    .depth = 3};
    CHECK(vmp_writer_sample(w, &s) == VMP_OK);

    CHECK(vmp_writer_code_free(w, 101, &gen_free) == VMP_OK);
    CHECK(vmp_writer_code_move(w, 100, 0x20100, &gen_move) == VMP_OK);
    uint64_t moves[] = {100, 0x30100};
    uint64_t frees[] = {102};
    CHECK(vmp_writer_code_compaction(w, zone_id, moves, 1, frees, 1, 0, 5000, &gen_comp) == VMP_OK);
    uint64_t entries[] = {100, 0x30100};
    CHECK(vmp_writer_code_snapshot(w, zone_id, entries, 1, &gen_snap) == VMP_OK);
    CHECK_EQ_U64(vmp_writer_generation(w), 4);

    vmp_sample s2 = {.thread = 8, .generation = 2, .frames = frames, .depth = 3};
    CHECK(vmp_writer_sample(w, &s2) == VMP_OK); /* same stack: no new nodes */
    vmp_sample f1 = {.thread = 7, .pc = 0x999, .generation = VMP_GENERATION_CURRENT};
    CHECK(vmp_writer_failed_sample(w, &f1, 1) == VMP_OK);
    CHECK(vmp_writer_event(w, 1, 0, 2500, 7, -42, "compiled benchFib") == VMP_OK);
    CHECK(vmp_writer_counter(w, 0, -5) == VMP_OK);
    CHECK(vmp_writer_counter(w, 0, 1234567) == VMP_OK);
    CHECK(vmp_writer_thread(w, 7, "main", 1) == VMP_OK);
}

static void test_every_record_type_round_trips(void)
{
    const char *path = tmp_path("every.vmp");
    vmp_writer_meta m = full_meta();
    vmp_writer_options o = det_options(0);
    atomic_store(&fake_now, 1000000);
    vmp_writer *w = NULL;
    CHECK(vmp_writer_open(&w, path, &m, &o) == VMP_OK);
    if (!w)
        return;
    write_every_record(w, 1);
    vmp_writer_totals t;
    CHECK(vmp_writer_close(w, &t) == VMP_OK);
    CHECK_EQ_U64(t.samples_written, 3);
    CHECK_EQ_U64(t.failed_written, 1);
    CHECK_EQ_U64(t.dropped_full, 0);
    CHECK_EQ_U64(t.write_errno, 0);

    td_file f;
    CHECK(td_load(&f, path) == 0);
    if (f.err[0])
        fprintf(stderr, "decode: %s\n", f.err);
    CHECK(!f.truncated);
    CHECK(f.n > 0 && f.recs[0].type == VMP_REC_HEADER && f.recs[0].chunk == 0); /* R-HDR-5 */
    CHECK_EQ_U64(td_count(&f, VMP_REC_HEADER), 1);
    char buf[256];

    const td_rec *h = &f.recs[0];
    CHECK(strncmp(td_rstr(h, VMP_HDR_PRODUCER, buf, sizeof buf), "vmp-writer ", 11) == 0);
    CHECK_STR(td_rstr(h, VMP_HDR_VM_NAME, buf, sizeof buf), "TestVM");
    CHECK_STR(td_rstr(h, VMP_HDR_VM_VERSION, buf, sizeof buf), "1.2.3");
    CHECK_EQ_U64(td_uint(h, VMP_HDR_PID, 0), 4242);
    CHECK_EQ_U64(td_uint(h, VMP_HDR_START_REALTIME, 0), 0); /* custom clock */
    CHECK_STR(td_rstr(h, VMP_HDR_CLOCK, buf, sizeof buf), "virtual");
    CHECK_EQ_U64(td_uint(h, VMP_HDR_INTERVAL, 0), 1000000);
    CHECK_EQ_U64(td_uint(h, VMP_HDR_POINTER_SIZE, 0), sizeof(void *));
    CHECK_EQ_U64(td_uint(h, VMP_HDR_START_MONOTONIC, 0), 1001000);
    check_str_array(h, VMP_HDR_STATES, states, 3);
    check_str_array(h, VMP_HDR_CODE_KINDS, kinds, 4);
    check_str_array(h, VMP_HDR_TIERS, tiers, 2);
    check_str_array(h, VMP_HDR_EVENT_KINDS, ev_kinds, 2);
    check_str_array(h, VMP_HDR_COUNTER_KINDS, ctr_kinds, 1);
    check_str_array(h, VMP_HDR_FAILURE_REASONS, reasons, 2);
    cbor_item_t *lab = td_get(h->map, VMP_HDR_LABELS);
    CHECK(lab && cbor_isa_map(lab) && cbor_map_size(lab) == 2);
    if (lab && cbor_map_size(lab) == 2) {
        CHECK_STR(td_str(cbor_map_handle(lab)[0].key, buf, sizeof buf), "benchmark");
        CHECK_STR(td_str(cbor_map_handle(lab)[0].value, buf, sizeof buf), "fib");
        CHECK_STR(td_str(cbor_map_handle(lab)[1].key, buf, sizeof buf), "mode");
        CHECK_STR(td_str(cbor_map_handle(lab)[1].value, buf, sizeof buf), "test");
    }

    /* MODULE + MODULE_SYMBOLS given by the VM */
    size_t i = td_find(&f, VMP_REC_MODULE, 0);
    CHECK(i != SIZE_MAX);
    if (i != SIZE_MAX) {
        const td_rec *r = &f.recs[i];
        CHECK_EQ_U64(td_uint(r, VMP_MOD_ID, 0), sym_module_id);
        CHECK_STR(td_rstr(r, VMP_MOD_PATH, buf, sizeof buf), "/opt/vm/libvm.so");
        cbor_item_t *b = td_get(r->map, VMP_MOD_BUILD_ID);
        CHECK(b && cbor_isa_bytestring(b) && cbor_bytestring_length(b) == 4 &&
              memcmp(cbor_bytestring_handle(b), "\xde\xad\xbe\xef", 4) == 0);
        CHECK_EQ_U64(td_uint(r, VMP_MOD_BIAS, 0), 0x7f0000000000ull);
        CHECK_EQ_U64(td_uint(r, VMP_MOD_START, 0), 0x7f0000001000ull);
        CHECK_EQ_U64(td_uint(r, VMP_MOD_END, 0), 0x7f0000002000ull);
    }
    i = td_find(&f, VMP_REC_MODULE_SYMBOLS, 0);
    CHECK(i != SIZE_MAX);
    if (i != SIZE_MAX) {
        const td_rec *r = &f.recs[i];
        CHECK_EQ_U64(td_uint(r, VMP_SYMS_MODULE, 0), sym_module_id);
        cbor_item_t *a = td_get(r->map, VMP_SYMS_LIST);
        CHECK(a && cbor_array_size(a) == 6);
        if (a && cbor_array_size(a) == 6) {
            CHECK_EQ_U64(td_at(a, 0), 0x1000);
            CHECK_EQ_U64(td_at(a, 1), 0x20);
            CHECK_STR(td_str(cbor_array_handle(a)[2], buf, sizeof buf), "vm_interpret");
            CHECK_EQ_U64(td_at(a, 3), 0x1020);
            CHECK_EQ_U64(td_at(a, 4), 0x10);
            CHECK_STR(td_str(cbor_array_handle(a)[5], buf, sizeof buf), "_ZN2vm2gcEv");
        }
    }
    /* MODULE from an ELF file: this test's own executable, which has "main" */
    i = td_find(&f, VMP_REC_MODULE, 1);
    CHECK(i != SIZE_MAX);
    if (i != SIZE_MAX) {
        CHECK_EQ_U64(td_uint(&f.recs[i], VMP_MOD_ID, 0), module_id);
        CHECK(module_id != sym_module_id);
        cbor_item_t *b = td_get(f.recs[i].map, VMP_MOD_BUILD_ID);
        CHECK(b && cbor_bytestring_length(b) >= 16); /* GNU build id */
        int found_main = 0;
        for (size_t k = 0; k < f.n; k++) {
            const td_rec *r = &f.recs[k];
            if (r->type != VMP_REC_MODULE_SYMBOLS || td_uint(r, VMP_SYMS_MODULE, 0) != module_id)
                continue;
            cbor_item_t *a = td_get(r->map, VMP_SYMS_LIST);
            CHECK(cbor_array_size(a) % 3 == 0);
            for (size_t s = 2; s < cbor_array_size(a); s += 3)
                if (strcmp(td_str(cbor_array_handle(a)[s], buf, sizeof buf), "main") == 0)
                    found_main = 1;
        }
        CHECK(found_main);
    }

    /* THREAD, twice: start then end */
    i = td_find(&f, VMP_REC_THREAD, 0);
    CHECK(i != SIZE_MAX);
    if (i != SIZE_MAX) {
        CHECK_EQ_U64(td_uint(&f.recs[i], VMP_THR_ID, 0), 7);
        CHECK_STR(td_rstr(&f.recs[i], VMP_THR_NAME, buf, sizeof buf), "main");
        CHECK(td_uint(&f.recs[i], VMP_THR_TIME, 0) > 0);
        CHECK(!td_has(&f.recs[i], VMP_THR_END_TIME));
    }
    i = td_find(&f, VMP_REC_THREAD, 1);
    CHECK(i != SIZE_MAX);
    if (i != SIZE_MAX)
        CHECK(td_uint(&f.recs[i], VMP_THR_END_TIME, 0) > 0);

    /* FUNCTION */
    i = td_find(&f, VMP_REC_FUNCTION, 0);
    CHECK(i != SIZE_MAX);
    if (i != SIZE_MAX) {
        const td_rec *r = &f.recs[i];
        CHECK_EQ_U64(td_uint(r, VMP_FN_ID, 0), 3);
        CHECK_STR(td_rstr(r, VMP_FN_NAME, buf, sizeof buf), "benchFib");
        CHECK_STR(td_rstr(r, VMP_FN_SCOPE, buf, sizeof buf), "Integer");
        CHECK_STR(td_rstr(r, VMP_FN_SIGNATURE, buf, sizeof buf), "(I)I");
        CHECK_STR(td_rstr(r, VMP_FN_FILE, buf, sizeof buf), "Integer.st");
        CHECK_EQ_U64(td_uint(r, VMP_FN_LINE, 0), 10);
        CHECK_EQ_U64(td_uint(r, VMP_FN_BC_SIZE, 0), 24);
        cbor_item_t *a = td_get(r->map, VMP_FN_LINES);
        CHECK(a && cbor_array_size(a) == 6);
        uint64_t want[] = {0, 10, 4, 11, 9, 13};
        for (size_t k = 0; a && k < 6 && k < cbor_array_size(a); k++)
            CHECK_EQ_U64(td_at(a, k), want[k]);
    }

    /* CODE_ZONE */
    i = td_find(&f, VMP_REC_CODE_ZONE, 0);
    CHECK(i != SIZE_MAX && zone_id >= 1);
    if (i != SIZE_MAX) {
        CHECK_EQ_U64(td_uint(&f.recs[i], VMP_ZONE_ID, 0), zone_id);
        CHECK_STR(td_rstr(&f.recs[i], VMP_ZONE_NAME, buf, sizeof buf), "machine code zone");
        CHECK_EQ_U64(td_uint(&f.recs[i], VMP_ZONE_START, 0), 0x10000);
        CHECK_EQ_U64(td_uint(&f.recs[i], VMP_ZONE_END, 0), 0x90000);
    }

    /* CODE_OBJECT */
    i = td_find(&f, VMP_REC_CODE_OBJECT, 0);
    CHECK(i != SIZE_MAX);
    if (i != SIZE_MAX) {
        const td_rec *r = &f.recs[i];
        CHECK_EQ_U64(td_uint(r, VMP_CODE_ID, 0), 100);
        CHECK_EQ_U64(td_uint(r, VMP_CODE_ZONE, 0), zone_id);
        CHECK_EQ_U64(td_uint(r, VMP_CODE_KIND, 0), 1);
        CHECK_STR(td_rstr(r, VMP_CODE_NAME, buf, sizeof buf), "benchFib");
        CHECK_EQ_U64(td_uint(r, VMP_CODE_FUNCTION, 0), 3);
        CHECK_EQ_U64(td_uint(r, VMP_CODE_START, 0), 0x10100);
        CHECK_EQ_U64(td_uint(r, VMP_CODE_SIZE, 0), 64);
        CHECK_EQ_U64(td_uint(r, VMP_CODE_GENERATION, 99), 0);
        CHECK_EQ_U64(td_uint(r, VMP_CODE_TIER, 0), 2);
        CHECK(td_uint(r, VMP_CODE_TIME, 0) > 0);
        cbor_item_t *a = td_get(r->map, VMP_CODE_PC_MAP);
        uint64_t want[] = {0, 1, 8, 4, 0, 5, 32, 9}; /* deltas */
        CHECK(a && cbor_array_size(a) == 8);
        for (size_t k = 0; a && k < 8 && k < cbor_array_size(a); k++)
            CHECK_EQ_U64(td_at(a, k), want[k]);
        cbor_item_t *in = td_get(r->map, VMP_CODE_INLINE);
        CHECK(in && cbor_array_size(in) == 2);
        if (in && cbor_array_size(in) == 2) {
            cbor_item_t *r0 = cbor_array_handle(in)[0], *r1 = cbor_array_handle(in)[1];
            uint64_t w0[] = {16, 5, 2, 3, 4};
            uint64_t w1[] = {32, 3, 0xFFFFFFFFu};
            CHECK(cbor_array_size(r0) == 5 && cbor_array_size(r1) == 3);
            for (size_t k = 0; k < 5 && k < cbor_array_size(r0); k++)
                CHECK_EQ_U64(td_at(r0, k), w0[k]);
            for (size_t k = 0; k < 3 && k < cbor_array_size(r1); k++)
                CHECK_EQ_U64(td_at(r1, k), w1[k]);
        }
        /* defaults are omitted */
        i = td_find(&f, VMP_REC_CODE_OBJECT, 1);
        CHECK(i != SIZE_MAX && !td_has(&f.recs[i], VMP_CODE_ZONE) &&
              !td_has(&f.recs[i], VMP_CODE_NAME) && !td_has(&f.recs[i], VMP_CODE_PC_MAP));
    }

    /* generation changes: strictly increasing, in order (R-GEN-1) */
    CHECK_EQ_U64(gen_free, 1);
    CHECK_EQ_U64(gen_move, 2);
    CHECK_EQ_U64(gen_comp, 3);
    CHECK_EQ_U64(gen_snap, 4);
    i = td_find(&f, VMP_REC_CODE_FREE, 0);
    CHECK(i != SIZE_MAX);
    if (i != SIZE_MAX) {
        CHECK_EQ_U64(td_uint(&f.recs[i], VMP_FREE_GENERATION, 0), 1);
        CHECK_EQ_U64(td_uint(&f.recs[i], VMP_FREE_ID, 0), 101);
        CHECK(td_uint(&f.recs[i], VMP_FREE_TIME, 0) > 0);
    }
    i = td_find(&f, VMP_REC_CODE_MOVE, 0);
    CHECK(i != SIZE_MAX);
    if (i != SIZE_MAX) {
        CHECK_EQ_U64(td_uint(&f.recs[i], VMP_MOVE_GENERATION, 0), 2);
        CHECK_EQ_U64(td_uint(&f.recs[i], VMP_MOVE_ID, 0), 100);
        CHECK_EQ_U64(td_uint(&f.recs[i], VMP_MOVE_START, 0), 0x20100);
        CHECK(td_uint(&f.recs[i], VMP_MOVE_TIME, 0) > 0);
    }
    i = td_find(&f, VMP_REC_CODE_COMPACTION, 0);
    CHECK(i != SIZE_MAX);
    if (i != SIZE_MAX) {
        const td_rec *r = &f.recs[i];
        CHECK_EQ_U64(td_uint(r, VMP_COMP_ZONE, 0), zone_id);
        CHECK_EQ_U64(td_uint(r, VMP_COMP_GENERATION, 0), 3);
        cbor_item_t *mv = td_get(r->map, VMP_COMP_MOVES), *fr = td_get(r->map, VMP_COMP_FREES);
        CHECK(mv && cbor_array_size(mv) == 2 && td_at(mv, 0) == 100 && td_at(mv, 1) == 0x30100);
        CHECK(fr && cbor_array_size(fr) == 1 && td_at(fr, 0) == 102);
        CHECK(td_uint(r, VMP_COMP_TIME, 0) > 0);
        CHECK_EQ_U64(td_uint(r, VMP_COMP_DURATION, 0), 5000);
    }
    i = td_find(&f, VMP_REC_CODE_SNAPSHOT, 0);
    CHECK(i != SIZE_MAX);
    if (i != SIZE_MAX) {
        const td_rec *r = &f.recs[i];
        CHECK_EQ_U64(td_uint(r, VMP_SNAP_ZONE, 0), zone_id);
        CHECK_EQ_U64(td_uint(r, VMP_SNAP_GENERATION, 0), 4);
        cbor_item_t *en = td_get(r->map, VMP_SNAP_ENTRIES);
        CHECK(en && cbor_array_size(en) == 2 && td_at(en, 0) == 100 && td_at(en, 1) == 0x30100);
        CHECK(td_uint(r, VMP_SNAP_TIME, 0) > 0);
    }

    /* SAMPLE, its stack, and the ordering guarantee */
    i = td_find(&f, VMP_REC_SAMPLE, 0);
    CHECK(i != SIZE_MAX);
    if (i != SIZE_MAX) {
        const td_rec *r = &f.recs[i];
        CHECK(i > td_find(&f, VMP_REC_CODE_OBJECT, 2)); /* code added before the sample */
        CHECK(i < td_find(&f, VMP_REC_CODE_FREE, 0));   /* and freed after it */
        CHECK_EQ_U64(td_uint(r, VMP_SMP_THREAD, 0), 7);
        CHECK_EQ_U64(td_uint(r, VMP_SMP_STATE, 0), 2);
        CHECK_EQ_U64(td_uint(r, VMP_SMP_PC, 0), 0x10108);
        CHECK_EQ_U64(td_uint(r, VMP_SMP_GENERATION, 99), 0);
        CHECK(td_has(r, VMP_SMP_GENERATION));
        CHECK_EQ_U64(td_uint(r, VMP_SMP_WEIGHT, 1), 3);
        CHECK_EQ_U64(td_uint(r, VMP_SMP_BLAME, 0), 100);
        CHECK(r->time > 0);
        uint64_t vals[8], kk[8];
        int d = walk_stack(&f, i, td_uint(r, VMP_SMP_STACK, 0), vals, kk, 8);
        CHECK_EQ_U64(d, 3);
        if (d == 3) {
            CHECK_EQ_U64(vals[0], 0x10108);
            CHECK_EQ_U64(kk[0], VMP_FRAME_PC);
            CHECK_EQ_U64(vals[1], 3);
            CHECK_EQ_U64(kk[1], VMP_FRAME_FUNCTION);
            CHECK_EQ_U64(vals[2], 0x401000);
        }
        /* the function frame's bcpc */
        for (size_t k = 0; k < i; k++)
            if (f.recs[k].type == VMP_REC_STACK_NODE && td_has(&f.recs[k], VMP_NODE_FUNCTION))
                CHECK_EQ_U64(td_uint(&f.recs[k], VMP_NODE_BCPC, 0), 4);
    }
    i = td_find(&f, VMP_REC_SAMPLE, 1);
    CHECK(i != SIZE_MAX);
    if (i != SIZE_MAX) {
        const td_rec *r = &f.recs[i];
        CHECK(i > td_find(&f, VMP_REC_CODE_SNAPSHOT, 0));
        CHECK_EQ_U64(td_uint(r, VMP_SMP_THREAD, 0), 8);
        CHECK_EQ_U64(td_uint(r, VMP_SMP_GENERATION, 0), 2);
        CHECK(!td_has(r, VMP_SMP_WEIGHT) && !td_has(r, VMP_SMP_PC) && !td_has(r, VMP_SMP_BLAME));
        CHECK_EQ_U64(td_uint(r, VMP_SMP_STACK, 0),
                     td_uint(&f.recs[td_find(&f, VMP_REC_SAMPLE, 0)], VMP_SMP_STACK, 1));
    }
    CHECK_EQ_U64(td_count(&f, VMP_REC_STACK_NODE), 3);
    check_stack_nodes(&f);
    i = td_find(&f, VMP_REC_FAILED_SAMPLE, 0);
    CHECK(i != SIZE_MAX);
    if (i != SIZE_MAX) {
        const td_rec *r = &f.recs[i];
        CHECK_EQ_U64(td_uint(r, VMP_SMP_REASON, 0), 1);
        CHECK_EQ_U64(td_uint(r, VMP_SMP_GENERATION, 0), 4); /* current at the time */
        CHECK_EQ_U64(td_uint(r, VMP_SMP_PC, 0), 0x999);
        CHECK(!td_has(r, VMP_SMP_STACK));
    }

    /* EVENT, COUNTER */
    i = td_find(&f, VMP_REC_EVENT, 0);
    CHECK(i != SIZE_MAX);
    if (i != SIZE_MAX) {
        const td_rec *r = &f.recs[i];
        CHECK(td_uint(r, VMP_EVT_TIME, 0) > 0);
        CHECK_EQ_U64(td_uint(r, VMP_EVT_KIND, 0), 1);
        CHECK_EQ_U64(td_uint(r, VMP_EVT_DURATION, 0), 2500);
        CHECK_EQ_U64(td_uint(r, VMP_EVT_THREAD, 0), 7);
        CHECK(td_int(r, VMP_EVT_VALUE, 0) == -42);
        CHECK_STR(td_rstr(r, VMP_EVT_TEXT, buf, sizeof buf), "compiled benchFib");
    }
    i = td_find(&f, VMP_REC_COUNTER, 0);
    CHECK(i != SIZE_MAX);
    if (i != SIZE_MAX) {
        CHECK(td_int(&f.recs[i], VMP_CTR_VALUE, 0) == -5);
        CHECK_EQ_U64(td_uint(&f.recs[i], VMP_CTR_KIND, 9), 0);
        CHECK(td_uint(&f.recs[i], VMP_CTR_TIME, 0) > 0);
        CHECK(td_int(&f.recs[td_find(&f, VMP_REC_COUNTER, 1)], VMP_CTR_VALUE, 0) == 1234567);
    }

    /* END */
    i = td_find(&f, VMP_REC_END, 0);
    CHECK(i != SIZE_MAX);
    if (i != SIZE_MAX) {
        const td_rec *r = &f.recs[i];
        CHECK(td_uint(r, VMP_END_TIME, 0) >= f.recs[td_find(&f, VMP_REC_COUNTER, 1)].time);
        CHECK_EQ_U64(td_uint(r, VMP_END_GENERATION, 0), 4);
        CHECK_EQ_U64(td_uint(r, VMP_END_DROPPED_FULL, 0), 0);
        CHECK_EQ_U64(td_uint(r, VMP_END_DROPPED_WRITE, 0), 0);
        CHECK_EQ_U64(td_uint(r, VMP_END_TRUNCATED_STACKS, 0), 0);
    }
    check_end_and_seek(&f);
    td_free(&f);
}

/* ---- the zstd command line reads a writer file --------------------------- */

static void test_zstd_cli_decompresses_file(void)
{
    const char *path = tmp_path("cli.vmp");
    vmp_writer_options o = det_options(700);
    vmp_writer *w = NULL;
    CHECK(vmp_writer_open(&w, path, NULL, &o) == VMP_OK);
    if (!w)
        return;
    write_every_record(w, 0);
    CHECK(vmp_writer_close(w, NULL) == VMP_OK);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "%s -q -dc '%s' > /dev/null", VMP_TEST_ZSTD, path);
    CHECK(system(cmd) == 0);
}

/* ---- chunks, deltas and the seek table --------------------------------------- */

static void test_small_chunks_hold_whole_records(void)
{
    const char *path = tmp_path("chunks.vmp");
    vmp_writer_options o = det_options(512);
    vmp_writer *w = NULL;
    CHECK(vmp_writer_open(&w, path, NULL, &o) == VMP_OK);
    if (!w)
        return;
    vmp_frame fr[6];
    for (int n = 0; n < 2000; n++) {
        for (int k = 0; k < 6; k++)
            fr[k] = (vmp_frame){.value = 0x1000u + (uint64_t)((n * 7 + k) % 50), .kind = 0};
        vmp_sample s = {.thread = 1 + (uint64_t)(n % 3),
                        .pc = fr[0].value,
                        .generation = VMP_GENERATION_CURRENT,
                        .frames = fr,
                        .depth = 6};
        CHECK(vmp_writer_sample(w, &s) == VMP_OK);
        if (n % 100 == 0) {
            vmp_code_object c = {.id = 1 + (uint64_t)n,
                                 .start = 0x100000u + (uint64_t)n * 64,
                                 .size = 64,
                                 .name = "a rather long name to fill chunks quickly"};
            CHECK(vmp_writer_code_add(w, &c) == VMP_OK);
        }
        if (n % 500 == 499)
            CHECK(vmp_writer_flush(w) == VMP_OK);
    }
    /* one record bigger than a whole chunk */
    vmp_symbol_desc syms[40];
    for (int k = 0; k < 40; k++)
        syms[k] = (vmp_symbol_desc){(uint64_t)k * 16, 16, "a_symbol_name_of_some_length_xx"};
    CHECK(vmp_writer_add_module_symbols(w, NULL, "big", NULL, 0, 0, 0, 0, syms, 40) == VMP_OK);
    vmp_writer_totals t;
    CHECK(vmp_writer_close(w, &t) == VMP_OK);
    CHECK_EQ_U64(t.samples_written, 2000);

    td_file f;
    CHECK(td_load(&f, path) == 0);
    if (f.err[0])
        fprintf(stderr, "decode: %s\n", f.err);
    CHECK(f.n_chunks > 10);
    CHECK_EQ_U64(t.chunks, f.n_chunks);
    /* a chunk exceeds the limit only by its last record (R-CHK-5) */
    for (size_t c = 0; c < f.n_chunks; c++)
        CHECK(f.chunks[c].content_size < 512 + 400);
    /* the delta chain restarts per chunk: the first sample's delta is its time */
    size_t last_chunk = SIZE_MAX, firsts = 0;
    for (size_t i = 0; i < f.n; i++) {
        const td_rec *r = &f.recs[i];
        if (r->type != VMP_REC_SAMPLE || r->chunk == last_chunk)
            continue;
        last_chunk = r->chunk;
        firsts++;
        CHECK_EQ_U64((uint64_t)td_int(r, VMP_SMP_TIME_DELTA, 0), r->time);
    }
    CHECK(firsts > 10);
    /* sample times increase with the deterministic clock */
    uint64_t prev = 0;
    size_t samples = 0;
    for (size_t i = 0; i < f.n; i++)
        if (f.recs[i].type == VMP_REC_SAMPLE) {
            CHECK(f.recs[i].time > prev);
            prev = f.recs[i].time;
            samples++;
        }
    CHECK_EQ_U64(samples, 2000);
    check_stack_nodes(&f);
    check_end_and_seek(&f);
    td_free(&f);
}

/* ---- determinism ---------------------------------------------------------- */

/* With `lazy`, code objects have pc maps kept back (lazy_code_maps) and
 * samples land in them, so the background thread writes maps while this
 * thread adds and frees code (under TSan too). */
static void run_scenario(const char *path, unsigned seed, int nap, int lazy)
{
    atomic_store(&fake_now, 5000);
    vmp_writer_meta m = full_meta();
    vmp_writer_options o = det_options(4096);
    vmp_pc_pair map[] = {{0, 1}, {8, 2}};
    o.lazy_code_maps = lazy;
    vmp_writer *w = NULL;
    CHECK(vmp_writer_open(&w, path, &m, &o) == VMP_OK);
    if (!w)
        return;
    unsigned x = seed;
    uint64_t next_code = 1, last_freed = 0;
    vmp_frame fr[12];
    for (int n = 0; n < 3000; n++) {
        x = x * 1103515245u + 12345u;
        unsigned r = (x >> 16) % 100;
        if (r < 80) {
            uint32_t d = 1 + (x >> 8) % 12;
            for (uint32_t k = 0; k < d; k++)
                fr[k] = (vmp_frame){.value = (x >> (k % 8)) % 40, .bcpc = k, .kind = k % 2};
            vmp_sample s = {.thread = 1 + r % 4,
                            .pc = lazy ? 0x10000 + (uint64_t)(x % (unsigned)(16 * n + 16))
                                       : 0x1000 + r,
                            .frames = fr,
                            .depth = d,
                            .generation = VMP_GENERATION_CURRENT};
            if (r < 3)
                CHECK(vmp_writer_failed_sample(w, &s, r) == VMP_OK);
            else
                CHECK(vmp_writer_sample(w, &s) == VMP_OK);
        } else if (r < 90) {
            vmp_code_object c = {.id = next_code++,
                                 .start = 0x10000 + (uint64_t)n * 16,
                                 .size = 16,
                                 .pc_map = lazy ? map : NULL,
                                 .pc_map_len = lazy ? 2 : 0};
            CHECK(vmp_writer_code_add(w, &c) == VMP_OK);
        } else if (r < 93 && next_code - 1 > last_freed) {
            last_freed = next_code - 1; /* free each code object once (R-CODE-2) */
            CHECK(vmp_writer_code_free(w, last_freed, NULL) == VMP_OK);
        } else if (r < 96) {
            CHECK(vmp_writer_event(w, 0, 0, r, 1, -(int64_t)r, "e") == VMP_OK);
        } else if (r < 99) {
            CHECK(vmp_writer_counter(w, 0, n) == VMP_OK);
        } else {
            CHECK(vmp_writer_flush(w) == VMP_OK);
        }
        if (nap && n % 200 == 0) { /* let the background thread drain at other points */
            struct timespec ts = {0, 60 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    CHECK(vmp_writer_close(w, NULL) == VMP_OK);
}

static int same_bytes(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;
    while (same) {
        int ca = fgetc(fa), cb = fgetc(fb);
        if (ca != cb)
            same = 0;
        if (ca == EOF || cb == EOF)
            break;
    }
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}

static void test_same_calls_give_same_bytes(void)
{
    const char *a = tmp_path("det-a.vmp"), *b = tmp_path("det-b.vmp"), *c = tmp_path("det-c.vmp");
    run_scenario(a, 42, 0, 0);
    run_scenario(b, 42, 1, 0);
    run_scenario(c, 43, 0, 0);
    CHECK(same_bytes(a, b));
    CHECK(!same_bytes(a, c));
    td_file f;
    CHECK(td_load(&f, a) == 0);
    CHECK(f.n_chunks > 2);
    check_stack_nodes(&f);
    check_end_and_seek(&f);
    td_free(&f);
}

/* lazy_code_maps: the maps are written by the background thread as samples
 * land in code the caller adds and frees meanwhile; the bytes still depend
 * on the calls alone, and some maps are written, not all. */
static void test_lazy_code_maps_same_calls_give_same_bytes(void)
{
    const char *a = tmp_path("lazy-a.vmp"), *b = tmp_path("lazy-b.vmp");
    run_scenario(a, 42, 0, 1);
    run_scenario(b, 42, 1, 1);
    CHECK(same_bytes(a, b));
    td_file f;
    CHECK(td_load(&f, a) == 0);
    size_t maps = 0, codes = 0;
    for (size_t i = 0; i < f.n; i++) {
        maps += f.recs[i].type == VMP_REC_CODE_MAP;
        codes += f.recs[i].type == VMP_REC_CODE_OBJECT;
    }
    printf("  lazy scenario: %zu CODE_MAP records for %zu code objects\n", maps, codes);
    CHECK(maps > 0 && maps < codes);
    td_free(&f);
}

/* ---- the sample path ------------------------------------------------------- */

static void test_deep_stacks_are_cut_and_counted(void)
{
    const char *path = tmp_path("deep.vmp");
    vmp_writer_options o = det_options(0);
    o.max_depth = 4;
    vmp_writer *w = NULL;
    CHECK(vmp_writer_open(&w, path, NULL, &o) == VMP_OK);
    if (!w)
        return;
    vmp_frame fr[10];
    for (int k = 0; k < 10; k++)
        fr[k] = (vmp_frame){.value = 100u + (uint64_t)k, .kind = VMP_FRAME_PC};
    vmp_sample s = {.thread = 1, .frames = fr, .depth = 10};
    CHECK(vmp_writer_sample(w, &s) == VMP_OK);
    s.depth = 4;
    CHECK(vmp_writer_sample(w, &s) == VMP_OK);
    vmp_writer_totals t;
    CHECK(vmp_writer_close(w, &t) == VMP_OK);
    CHECK_EQ_U64(t.truncated_stacks, 1);
    td_file f;
    CHECK(td_load(&f, path) == 0);
    size_t i = td_find(&f, VMP_REC_SAMPLE, 0);
    uint64_t vals[16];
    CHECK(i != SIZE_MAX);
    if (i != SIZE_MAX) {
        CHECK_EQ_U64(walk_stack(&f, i, td_uint(&f.recs[i], VMP_SMP_STACK, 0), vals, NULL, 16), 4);
        CHECK_EQ_U64(vals[0], 100); /* the innermost frames are kept */
        CHECK_EQ_U64(vals[3], 103);
    }
    CHECK_EQ_U64(td_uint(&f.recs[f.n - 1], VMP_END_TRUNCATED_STACKS, 0), 1);
    td_free(&f);
}

static void test_sample_preserves_errno_and_counts_drops(void)
{
    const char *path = tmp_path("full.vmp");
    vmp_writer_options o = VMP_WRITER_OPTIONS_INIT;
    o.format_major = 1; /* SAMPLE records, which the test decoder reads one by one */
    o.ring_slots = 4;
    vmp_writer *w = NULL;
    CHECK(vmp_writer_open(&w, path, NULL, &o) == VMP_OK);
    if (!w)
        return;
    vmp_frame fr = {.value = 1};
    vmp_sample s = {.thread = 1, .frames = &fr, .depth = 1};
    uint64_t ok = 0, full = 0;
    for (int n = 0; n < 5000; n++) {
        errno = 1234;
        vmp_status st = vmp_writer_sample(w, &s);
        CHECK(errno == 1234);
        CHECK(st == VMP_OK || st == VMP_ERR_FULL);
        ok += st == VMP_OK;
        full += st == VMP_ERR_FULL;
    }
    CHECK(full > 0);
    vmp_writer_totals t;
    CHECK(vmp_writer_close(w, &t) == VMP_OK);
    CHECK_EQ_U64(t.samples_written, ok);
    CHECK_EQ_U64(t.dropped_full, full);
    td_file f;
    CHECK(td_load(&f, path) == 0);
    CHECK_EQ_U64(td_count(&f, VMP_REC_SAMPLE), ok);
    CHECK_EQ_U64(td_uint(&f.recs[f.n - 1], VMP_END_DROPPED_FULL, 0), full);
    td_free(&f);
}

static void test_old_chunks_close_by_age(void)
{
    const char *path = tmp_path("age.vmp");
    vmp_writer_options o = VMP_WRITER_OPTIONS_INIT;
    o.format_major = 1; /* SAMPLE records, which the test decoder reads one by one */
    o.chunk_age_ms = 20;
    o.no_seek_table = 1;
    vmp_writer *w = NULL;
    CHECK(vmp_writer_open(&w, path, NULL, &o) == VMP_OK);
    if (!w)
        return;
    CHECK(vmp_writer_counter(w, 0, 1) == VMP_OK);
    vmp_writer_totals t = {0};
    /* Up to 10 s: the background thread may be starved on a loaded machine. */
    for (int n = 0; n < 1000 && t.chunks == 0; n++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
        vmp_writer_stats(w, &t);
    }
    CHECK_EQ_U64(t.chunks, 1);
    td_file f;
    CHECK(td_load(&f, path) == 0); /* readable while the writer runs */
    CHECK_EQ_U64(td_count(&f, VMP_REC_COUNTER), 1);
    td_free(&f);
    CHECK(vmp_writer_close(w, NULL) == VMP_OK);
    CHECK(td_load(&f, path) == 0);
    CHECK(f.seek == NULL);
    CHECK_EQ_U64(td_count(&f, VMP_REC_END), 1);
    td_free(&f);
}

/* ---- loaded modules ------------------------------------------------------- */

/* One symbol of a module, as written. */
typedef struct mod_sym {
    uint64_t value, size;
    char name[256];
} mod_sym;

/* The symbols (in file order) of the first module of `f` whose mapping holds
 * `addr`: a malloc'd array (*n_out entries; NULL when none), its id and bias. */
static mod_sym *module_symbols(const td_file *f, uintptr_t addr, size_t *n_out, uint64_t *id_out,
                               uint64_t *bias_out)
{
    mod_sym *v = NULL;
    size_t n = 0, cap = 0;
    *n_out = 0;
    *id_out = *bias_out = 0;
    for (size_t i = 0; i < f->n; i++) {
        const td_rec *m = &f->recs[i];
        if (m->type != VMP_REC_MODULE || addr < td_uint(m, VMP_MOD_START, 0) ||
            addr >= td_uint(m, VMP_MOD_END, 0))
            continue;
        *id_out = td_uint(m, VMP_MOD_ID, 0);
        *bias_out = td_uint(m, VMP_MOD_BIAS, 0);
        for (size_t k = i + 1; k < f->n; k++) {
            const td_rec *r = &f->recs[k];
            if (r->type != VMP_REC_MODULE_SYMBOLS || td_uint(r, VMP_SYMS_MODULE, 0) != *id_out)
                continue;
            cbor_item_t *a = td_get(r->map, VMP_SYMS_LIST);
            for (size_t s = 0; s + 2 < cbor_array_size(a); s += 3) {
                if (n == cap) {
                    cap = cap ? cap * 2 : 1024;
                    mod_sym *nv = realloc(v, cap * sizeof *nv);
                    if (!nv) {
                        free(v);
                        return NULL;
                    }
                    v = nv;
                }
                v[n].value = td_at(a, s);
                v[n].size = td_at(a, s + 1);
                td_str(cbor_array_handle(a)[s + 2], v[n].name, sizeof v[n].name);
                n++;
            }
        }
        break;
    }
    *n_out = n;
    return v;
}

/* Does the module covering `addr` have a symbol named `name` whose runtime
 * range (value + bias, size) covers `addr`?  Returns the module id, 0 if none. */
static uint64_t module_covering(const td_file *f, uintptr_t addr, const char *name)
{
    size_t n;
    uint64_t id, bias, found = 0;
    mod_sym *v = module_symbols(f, addr, &n, &id, &bias);
    for (size_t i = 0; i < n && !found; i++) {
        uint64_t lo = v[i].value + bias;
        if (addr >= lo && addr < lo + (v[i].size ? v[i].size : 1) && strcmp(v[i].name, name) == 0)
            found = id;
    }
    free(v);
    return found;
}

/* Whether the module covering `addr` has a symbol named `name`. */
static int module_has_symbol(const td_file *f, uintptr_t addr, const char *name)
{
    size_t n;
    uint64_t id, bias;
    int found = 0;
    mod_sym *v = module_symbols(f, addr, &n, &id, &bias);
    for (size_t i = 0; i < n && !found; i++)
        found = strcmp(v[i].name, name) == 0;
    free(v);
    return found;
}

/* Whether the system has the separate debug file of the module covering
 * `addr`, by the build id of its MODULE record; its path into `path`. */
static int libc_debug_file(const td_file *f, uintptr_t addr, char *path, size_t size)
{
    for (size_t i = 0; i < f->n; i++) {
        const td_rec *m = &f->recs[i];
        cbor_item_t *b;
        char hex[2 * 64 + 1];
        if (m->type != VMP_REC_MODULE || addr < td_uint(m, VMP_MOD_START, 0) ||
            addr >= td_uint(m, VMP_MOD_END, 0))
            continue;
        b = td_get(m->map, VMP_MOD_BUILD_ID);
        if (!b || !cbor_isa_bytestring(b) || cbor_bytestring_length(b) < 2 ||
            cbor_bytestring_length(b) > 64)
            return 0;
        for (size_t k = 0; k < cbor_bytestring_length(b); k++)
            snprintf(hex + 2 * k, 3, "%02x", cbor_bytestring_handle(b)[k]);
        snprintf(path, size, "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
        return access(path, R_OK) == 0;
    }
    return 0;
}

/* The unnamed size-0 symbols (functions known by their unwind-table start,
 * spec.md [R-RES-2]) of the module covering addr; *named_too counts those
 * that have a size or start inside a named symbol (there must be none). */
static size_t unnamed_symbols(const td_file *f, uintptr_t addr, size_t *named_too)
{
    size_t n, unnamed = 0;
    uint64_t id, bias;
    mod_sym *v = module_symbols(f, addr, &n, &id, &bias);
    *named_too = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].name[0] != '\0')
            continue;
        unnamed++;
        if (v[i].size != 0)
            (*named_too)++;
        for (size_t k = 0; k < n; k++)
            if (v[k].name[0] != '\0' && v[i].value >= v[k].value &&
                (v[i].value < v[k].value + v[k].size || v[i].value == v[k].value))
                (*named_too)++;
    }
    free(v);
    return unnamed;
}

static void test_loaded_modules_resolve_their_symbols(void)
{
    const char *path = tmp_path("modules.vmp");
    vmp_writer_options o = VMP_WRITER_OPTIONS_INIT;
    o.format_major = 1; /* SAMPLE records, which the test decoder reads one by one */
    o.chunk_bytes = 64 * 1024;
    vmp_writer *w = NULL;
    CHECK(vmp_writer_open(&w, path, NULL, &o) == VMP_OK);
    if (!w)
        return;
    CHECK(vmp_writer_add_loaded_modules(w) == VMP_OK);
    CHECK(vmp_writer_close(w, NULL) == VMP_OK);
    td_file f;
    CHECK(td_load(&f, path) == 0);
    CHECK(td_count(&f, VMP_REC_MODULE) >= 2);
    /* this executable (its own .symtab) and the C library (through the bias) */
    uint64_t exe = module_covering(&f, (uintptr_t)main_address(), "main");
    uint64_t libc = module_covering(&f, (uintptr_t)libc_address(), "strverscmp");
    CHECK(exe != 0);
    CHECK(libc != 0 && libc != exe);
    /* a library stripped to .dynsym without a debug file (libzstd): its
     * static functions come from its unwind table, unnamed, never inside a
     * named symbol */
    uintptr_t zstd = (uintptr_t)dlsym(RTLD_DEFAULT, "ZSTD_versionNumber");
    size_t named_too = 0, unnamed = zstd ? unnamed_symbols(&f, zstd, &named_too) : 0;
    printf("  libzstd: %zu functions known by their unwind-table start only\n", unnamed);
    CHECK(zstd != 0 && unnamed > 20);
    CHECK_EQ_U64(named_too, 0);
    /* the C library, stripped too: with its separate debug file (libc6-dbg,
     * by build id) its internal functions are named, as perf names them */
    char dbg[256];
    int has_dbg = libc_debug_file(&f, (uintptr_t)libc_address(), dbg, sizeof dbg);
    size_t libc_unnamed = unnamed_symbols(&f, (uintptr_t)libc_address(), &named_too);
    int int_malloc = module_has_symbol(&f, (uintptr_t)libc_address(), "_int_malloc");
    printf("  libc: debug file %s; _int_malloc %s; %zu functions unnamed\n",
           has_dbg ? dbg : "absent", int_malloc ? "named" : "not named", libc_unnamed);
    CHECK(int_malloc == has_dbg);
    CHECK(has_dbg ? libc_unnamed < 100 : libc_unnamed > 100);
    CHECK_EQ_U64(named_too, 0);
    /* symbol batches stay well under the chunk size */
    for (size_t c = 0; c < f.n_chunks; c++)
        CHECK(f.chunks[c].content_size < 64 * 1024 + 16 * 1024);
    size_t i = td_find(&f, VMP_REC_MODULE, 0);
    char buf[512];
    CHECK(i != SIZE_MAX && td_rstr(&f.recs[i], VMP_MOD_PATH, buf, sizeof buf)[0] == '/');
    /* the vDSO has no file: it is read from memory, with its build id and symbols */
    for (size_t k = 0; k < f.n; k++) {
        const td_rec *m = &f.recs[k];
        if (m->type != VMP_REC_MODULE ||
            strncmp(td_rstr(m, VMP_MOD_PATH, buf, sizeof buf), "linux-vdso", 10) != 0)
            continue;
        CHECK(td_has(m, VMP_MOD_BUILD_ID));
        CHECK(k + 1 < f.n && f.recs[k + 1].type == VMP_REC_MODULE_SYMBOLS &&
              td_uint(&f.recs[k + 1], VMP_SYMS_MODULE, 0) == td_uint(m, VMP_MOD_ID, 1));
    }
    td_free(&f);
}

/* A second call records only the objects loaded since the first. */
static void test_loaded_modules_are_added_once(void)
{
    const char *path = tmp_path("modules-again.vmp");
    vmp_writer *w = NULL;
    void *lib;
    char buf[512];
    size_t k, n_resolv = 0;
    CHECK(vmp_writer_open(&w, path, NULL, NULL) == VMP_OK);
    if (!w)
        return;
    CHECK(vmp_writer_add_loaded_modules(w) == VMP_OK);
    CHECK(vmp_writer_add_loaded_modules(w) == VMP_OK);
    lib = dlopen("libresolv.so.2", RTLD_NOW | RTLD_LOCAL);
    CHECK(vmp_writer_add_loaded_modules(w) == VMP_OK);
    CHECK(vmp_writer_close(w, NULL) == VMP_OK);
    td_file f;
    CHECK(td_load(&f, path) == 0);
    size_t n_mod = td_count(&f, VMP_REC_MODULE);
    for (k = 0; k < f.n; k++)
        if (f.recs[k].type == VMP_REC_MODULE &&
            strstr(td_rstr(&f.recs[k], VMP_MOD_PATH, buf, sizeof buf), "libresolv") != NULL)
            n_resolv++;
    td_free(&f);
    /* the same objects as one call, plus the library loaded in between */
    path = tmp_path("modules-once.vmp");
    CHECK(vmp_writer_open(&w, path, NULL, NULL) == VMP_OK);
    if (!w)
        return;
    CHECK(vmp_writer_add_loaded_modules(w) == VMP_OK);
    CHECK(vmp_writer_close(w, NULL) == VMP_OK);
    CHECK(td_load(&f, path) == 0);
    CHECK_EQ_U64(n_mod, td_count(&f, VMP_REC_MODULE));
    td_free(&f);
    if (lib != NULL) {
        CHECK_EQ_U64(n_resolv, 1);
        dlclose(lib);
    }
}

static void test_misuse_is_rejected(void)
{
    vmp_writer *w = NULL;
    CHECK(vmp_writer_open(&w, NULL, NULL, NULL) == VMP_ERR_INVALID_ARG);
    CHECK(vmp_writer_open(&w, "/nonexistent-dir/x.vmp", NULL, NULL) == VMP_ERR_IO);
    CHECK(w == NULL);
    CHECK(vmp_writer_close(NULL, NULL) == VMP_OK);
    CHECK(vmp_writer_sample(NULL, NULL) == VMP_ERR_INVALID_ARG);
    const char *path = tmp_path("misuse.vmp");
    CHECK(vmp_writer_open(&w, path, NULL, NULL) == VMP_OK);
    if (!w)
        return;
    vmp_pc_pair bad[] = {{8, 1}, {4, 2}};
    vmp_code_object c = {.id = 1, .start = 0, .size = 16, .pc_map = bad, .pc_map_len = 2};
    CHECK(vmp_writer_code_add(w, &c) == VMP_ERR_INVALID_ARG);
    c.id = 0;
    c.pc_map_len = 0;
    CHECK(vmp_writer_code_add(w, &c) == VMP_ERR_INVALID_ARG);
    CHECK(vmp_writer_add_module(w, NULL, "/nonexistent", 0, 0, 0) == VMP_ERR_IO);
    CHECK(vmp_writer_close(w, NULL) == VMP_OK);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s", "test_writer_tmp");
    if (system("mkdir -p test_writer_tmp") != 0)
        return 1;
    VMP_TEST_RUN(test_every_record_type_round_trips);
    VMP_TEST_RUN(test_zstd_cli_decompresses_file);
    VMP_TEST_RUN(test_small_chunks_hold_whole_records);
    VMP_TEST_RUN(test_same_calls_give_same_bytes);
    VMP_TEST_RUN(test_lazy_code_maps_same_calls_give_same_bytes);
    VMP_TEST_RUN(test_deep_stacks_are_cut_and_counted);
    VMP_TEST_RUN(test_sample_preserves_errno_and_counts_drops);
    VMP_TEST_RUN(test_old_chunks_close_by_age);
    VMP_TEST_RUN(test_loaded_modules_resolve_their_symbols);
    VMP_TEST_RUN(test_loaded_modules_are_added_once);
    VMP_TEST_RUN(test_misuse_is_rejected);
    VMP_TEST_EXIT();
}
