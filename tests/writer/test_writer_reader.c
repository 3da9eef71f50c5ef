/* SPDX-License-Identifier: MIT
 *
 * test_writer_reader.c - round trip through the project's reader: every
 * record type the writer produces, every field, read back with vmp_reader
 * (spec.md §5).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "vmp_analyze.h"
#include "vmp_block.h"
#include "vmp_reader.h"
#include "vmp_test.h"
#include "vmp_validate.h"
#include "vmp_writer.h"

static _Atomic uint64_t fake_now = 1000000;

static uint64_t fake_clock(void *ud)
{
    (void)ud;
    return atomic_fetch_add(&fake_now, 1000) + 1000;
}

static const char *const states[] = {"running", "gc"};
static const char *const kinds[] = {"method", "block"};
static const char *const tiers[] = {"baseline", "optimized"};
static const char *const ev_kinds[] = {"gc", "compile"};
static const char *const ctr_kinds[] = {"heap"};
static const char *const reasons[] = {"no frame pointer", "in prologue"};
static const char *const labels[] = {"benchmark", "fib"};

static void write_file(const char *path, uint64_t *ids)
{
    vmp_writer_meta m = {.vm_name = "TestVM",
                         .vm_version = "1.2.3",
                         .pid = 77,
                         .sample_interval_ns = 1000000,
                         .states = states,
                         .n_states = 2,
                         .code_kinds = kinds,
                         .n_code_kinds = 2,
                         .tiers = tiers,
                         .n_tiers = 2,
                         .event_kinds = ev_kinds,
                         .n_event_kinds = 2,
                         .counter_kinds = ctr_kinds,
                         .n_counter_kinds = 1,
                         .failure_reasons = reasons,
                         .n_failure_reasons = 2,
                         .labels = labels,
                         .n_labels = 1};
    vmp_writer_options o = VMP_WRITER_OPTIONS_INIT;
    o.clock = fake_clock;
    o.chunk_age_ms = VMP_WRITER_NO_AGE_LIMIT;
    o.format_major = 1; /* every sample field as a SAMPLE record holds it */
    vmp_writer *w = NULL;
    CHECK(vmp_writer_open(&w, path, &m, &o) == VMP_OK);
    if (!w)
        return;
    static const uint8_t bid[] = {1, 2, 3};
    vmp_symbol_desc syms[] = {{0x1000, 0x20, "vm_interpret"}, {0x1020, 0, "_ZN2vm2gcEv"}};
    CHECK(vmp_writer_add_module_symbols(w, &ids[0], "/opt/libvm.so", bid, 3, 0x7000, 0x8000, 0x9000,
                                        syms, 2) == VMP_OK);
    CHECK(vmp_writer_thread(w, 5, "worker", 0) == VMP_OK);
    uint32_t lines[] = {0, 10, 6, 12};
    vmp_function fn = {.id = 9,
                       .name = "fib",
                       .scope = "Integer",
                       .signature = "(I)I",
                       .file = "Integer.st",
                       .first_line = 10,
                       .bytecode_size = 20,
                       .lines = lines,
                       .n_lines = 2};
    CHECK(vmp_writer_function(w, &fn) == VMP_OK);
    CHECK(vmp_writer_code_zone(w, &ids[1], "zone", 0x10000, 0x20000) == VMP_OK);
    vmp_pc_pair map[] = {{0, 0}, {12, 6}};
    vmp_frame chain[] = {{.value = 9, .bcpc = 6, .kind = VMP_FRAME_FUNCTION},
                         {.value = 4, .bcpc = VMP_BCPC_NONE, .kind = VMP_FRAME_FUNCTION}};
    vmp_inline_record inl[] = {{8, chain, 2}};
    vmp_code_object c = {.id = 50,
                         .zone = ids[1],
                         .kind = 1,
                         .tier = 1,
                         .name = "fib",
                         .function = 9,
                         .start = 0x10040,
                         .size = 32,
                         .pc_map = map,
                         .pc_map_len = 2,
                         .inlines = inl,
                         .n_inlines = 1};
    CHECK(vmp_writer_code_add(w, &c) == VMP_OK);
    vmp_code_object c2 = {.id = 51, .zone = ids[1], .start = 0x10080, .size = 16};
    CHECK(vmp_writer_code_add(w, &c2) == VMP_OK);
    vmp_frame fr[] = {{.value = 0x10044, .kind = VMP_FRAME_PC},
                      {.value = 9, .bcpc = 6, .kind = VMP_FRAME_FUNCTION}};
    vmp_sample s = {.thread = 5,
                    .pc = 0x10044,
                    .generation = VMP_GENERATION_CURRENT,
                    .blame = 50,
                    .state = 1,
                    .weight = 2,
                    .frames = fr,
                    .depth = 2};
    CHECK(vmp_writer_sample(w, &s) == VMP_OK);
    CHECK(vmp_writer_code_move(w, 50, 0x10100, NULL) == VMP_OK);
    CHECK(vmp_writer_code_free(w, 51, NULL) == VMP_OK);
    uint64_t moves[] = {50, 0x10200};
    CHECK(vmp_writer_code_compaction(w, ids[1], moves, 1, NULL, 0, 0, 700, NULL) == VMP_OK);
    uint64_t entries[] = {50, 0x10200};
    CHECK(vmp_writer_code_snapshot(w, ids[1], entries, 1, NULL) == VMP_OK);
    vmp_sample f = {.thread = 5, .generation = VMP_GENERATION_CURRENT};
    CHECK(vmp_writer_failed_sample(w, &f, 1) == VMP_OK);
    CHECK(vmp_writer_event(w, 1, 0, 300, 5, -3, "jit") == VMP_OK);
    CHECK(vmp_writer_counter(w, 0, 4096) == VMP_OK);
    CHECK(vmp_writer_close(w, NULL) == VMP_OK);
}

static int str_is(vmp_str s, const char *want)
{
    return s.len == strlen(want) && memcmp(s.s, want, s.len) == 0;
}

static void test_reader_sees_every_field(void)
{
    const char *path = "writer_reader.vmp";
    uint64_t ids[2] = {0, 0};
    write_file(path, ids);
    vmp_reader *r = NULL;
    vmp_status st = vmp_reader_open_file(&r, path, NULL);
    CHECK(st == VMP_OK);
    if (st != VMP_OK) {
        if (r)
            fprintf(stderr, "%s\n", vmp_reader_errmsg(r));
        vmp_reader_close(r);
        return;
    }
    vmp_record rec;
    int seen[VMP_REC_TYPE_MAX_V1_0 + 1] = {0};
    uint64_t node_fn = 0, node_pc = 0, sample_stack = 0;
    while ((st = vmp_reader_next(r, &rec)) == VMP_OK) {
        CHECK(rec.unknown_keys == 0);
        if (rec.type < 0 || rec.type > VMP_REC_TYPE_MAX_V1_0)
            continue;
        int n = seen[rec.type]++;
        switch (rec.type) {
        case VMP_REC_HEADER: {
            const vmp_rec_header *h = &rec.u.header;
            CHECK(str_is(h->vm_name, "TestVM") && str_is(h->vm_version, "1.2.3"));
            CHECK(strncmp(h->producer.s, "vmp-writer", 10) == 0);
            CHECK(str_is(h->clock, "custom"));
            CHECK_EQ_U64(h->pid, 77);
            CHECK_EQ_U64(h->start_monotonic_ns, 1001000);
            CHECK_EQ_U64(h->start_realtime_ns, 0);
            CHECK_EQ_U64(h->interval_ns, 1000000);
            CHECK_EQ_U64(h->pointer_size, sizeof(void *));
            CHECK(h->n_states == 2 && str_is(h->states[1], "gc"));
            CHECK(h->n_code_kinds == 2 && str_is(h->code_kinds[1], "block"));
            CHECK(h->n_tiers == 2 && str_is(h->tiers[0], "baseline"));
            CHECK(h->n_event_kinds == 2 && str_is(h->event_kinds[1], "compile"));
            CHECK(h->n_counter_kinds == 1 && str_is(h->counter_kinds[0], "heap"));
            CHECK(h->n_failure_reasons == 2 && str_is(h->failure_reasons[1], "in prologue"));
            CHECK(h->n_labels == 1 && str_is(h->labels[0], "benchmark") &&
                  str_is(h->labels[1], "fib"));
            break;
        }
        case VMP_REC_MODULE:
            CHECK_EQ_U64(rec.u.module.id, ids[0]);
            CHECK(str_is(rec.u.module.path, "/opt/libvm.so"));
            CHECK(rec.u.module.build_id_size == 3 && rec.u.module.build_id[2] == 3);
            CHECK_EQ_U64(rec.u.module.bias, 0x7000);
            CHECK_EQ_U64(rec.u.module.start, 0x8000);
            CHECK_EQ_U64(rec.u.module.end, 0x9000);
            break;
        case VMP_REC_MODULE_SYMBOLS:
            CHECK_EQ_U64(rec.u.module_symbols.module, ids[0]);
            CHECK_EQ_U64(rec.u.module_symbols.n_symbols, 2);
            if (rec.u.module_symbols.n_symbols == 2) {
                const vmp_rec_symbol *sy = rec.u.module_symbols.symbols;
                CHECK(sy[0].value == 0x1000 && sy[0].size == 0x20 &&
                      str_is(sy[0].name, "vm_interpret"));
                CHECK(sy[1].value == 0x1020 && sy[1].size == 0 &&
                      str_is(sy[1].name, "_ZN2vm2gcEv"));
            }
            break;
        case VMP_REC_THREAD:
            CHECK_EQ_U64(rec.u.thread.id, 5);
            CHECK(str_is(rec.u.thread.name, "worker"));
            CHECK(rec.u.thread.time_ns > 0 && rec.u.thread.end_time_ns == 0);
            break;
        case VMP_REC_FUNCTION: {
            const vmp_rec_function *fn = &rec.u.function;
            CHECK_EQ_U64(fn->id, 9);
            CHECK(str_is(fn->name, "fib") && str_is(fn->scope, "Integer"));
            CHECK(str_is(fn->signature, "(I)I") && str_is(fn->file, "Integer.st"));
            CHECK_EQ_U64(fn->first_line, 10);
            CHECK_EQ_U64(fn->bytecode_size, 20);
            CHECK(fn->n_lines == 2 && fn->lines[0] == 0 && fn->lines[1] == 10 &&
                  fn->lines[2] == 6 && fn->lines[3] == 12);
            break;
        }
        case VMP_REC_CODE_ZONE:
            CHECK_EQ_U64(rec.u.code_zone.id, ids[1]);
            CHECK(str_is(rec.u.code_zone.name, "zone"));
            CHECK(rec.u.code_zone.start == 0x10000 && rec.u.code_zone.end == 0x20000);
            break;
        case VMP_REC_CODE_OBJECT: {
            const vmp_rec_code_object *co = &rec.u.code_object;
            if (n == 1) {
                CHECK(co->id == 51 && co->start == 0x10080 && co->size == 16 && co->tier == 0);
                break;
            }
            CHECK_EQ_U64(co->id, 50);
            CHECK_EQ_U64(co->zone, ids[1]);
            CHECK_EQ_U64(co->kind, 1);
            CHECK_EQ_U64(co->tier, 1);
            CHECK(str_is(co->name, "fib"));
            CHECK_EQ_U64(co->function, 9);
            CHECK_EQ_U64(co->start, 0x10040);
            CHECK_EQ_U64(co->size, 32);
            CHECK_EQ_U64(co->generation, 0);
            CHECK(co->time_ns > 0);
            CHECK(co->pc_map_len == 2 && co->pc_map[0] == 0 && co->pc_map[1] == 0 &&
                  co->pc_map[2] == 12 && co->pc_map[3] == 6);
            CHECK(co->n_inlines == 1);
            if (co->n_inlines == 1) {
                const vmp_rec_inline *in = &co->inlines[0];
                CHECK(in->mcpc_offset == 8 && in->depth == 2);
                CHECK(in->frames[0] == 9 && in->frames[1] == 6 && in->frames[2] == 4 &&
                      in->frames[3] == 0xFFFFFFFFu);
            }
            break;
        }
        case VMP_REC_CODE_MOVE:
            CHECK(rec.u.code_move.generation == 1 && rec.u.code_move.id == 50 &&
                  rec.u.code_move.new_start == 0x10100 && rec.u.code_move.time_ns > 0);
            break;
        case VMP_REC_CODE_FREE:
            CHECK(rec.u.code_free.generation == 2 && rec.u.code_free.id == 51 &&
                  rec.u.code_free.time_ns > 0);
            break;
        case VMP_REC_CODE_COMPACTION: {
            const vmp_rec_code_compaction *cc = &rec.u.code_compaction;
            CHECK(cc->zone == ids[1] && cc->generation == 3 && cc->duration_ns == 700);
            CHECK(cc->time_ns > 0 && cc->n_frees == 0);
            CHECK(cc->n_moves == 1 && cc->moves[0] == 50 && cc->moves[1] == 0x10200);
            break;
        }
        case VMP_REC_CODE_SNAPSHOT: {
            const vmp_rec_code_snapshot *cs = &rec.u.code_snapshot;
            CHECK(cs->zone == ids[1] && cs->generation == 4 && cs->time_ns > 0);
            CHECK(cs->n == 1 && cs->entries[0] == 50 && cs->entries[1] == 0x10200);
            break;
        }
        case VMP_REC_STACK_NODE:
            if (rec.u.stack_node.is_function) {
                CHECK(rec.u.stack_node.function == 9 && rec.u.stack_node.has_bcpc &&
                      rec.u.stack_node.bcpc == 6 && rec.u.stack_node.parent == 0);
                node_fn = rec.u.stack_node.id;
            } else {
                CHECK(rec.u.stack_node.pc == 0x10044 && rec.u.stack_node.parent == node_fn);
                node_pc = rec.u.stack_node.id;
            }
            break;
        case VMP_REC_SAMPLE: {
            const vmp_rec_sample *sm = &rec.u.sample;
            CHECK(sm->thread == 5 && sm->state == 1 && sm->has_pc && sm->pc == 0x10044);
            CHECK(sm->generation == 0 && sm->weight == 2 && sm->blame == 50);
            CHECK(sm->time_ns > 0);
            sample_stack = sm->stack;
            break;
        }
        case VMP_REC_FAILED_SAMPLE:
            CHECK(rec.u.sample.reason == 1 && rec.u.sample.generation == 4 &&
                  rec.u.sample.thread == 5 && !rec.u.sample.has_pc && rec.u.sample.weight == 1);
            break;
        case VMP_REC_EVENT: {
            const vmp_rec_event *ev = &rec.u.event;
            CHECK(ev->kind == 1 && ev->duration_ns == 300 && ev->thread == 5);
            CHECK(ev->has_value && ev->value == -3 && str_is(ev->text, "jit"));
            CHECK(ev->time_ns > 0);
            break;
        }
        case VMP_REC_COUNTER:
            CHECK(rec.u.counter.kind == 0 && rec.u.counter.value == 4096 &&
                  rec.u.counter.time_ns > 0);
            break;
        case VMP_REC_END: {
            const vmp_rec_end *e = &rec.u.end;
            CHECK(e->samples == 2 && e->failed == 1 && e->chunks == 0 && e->generation == 4);
            CHECK(e->dropped_full == 0 && e->dropped_write == 0 && e->truncated_stacks == 0);
            CHECK(e->time_ns > 0);
            break;
        }
        default:
            break;
        }
    }
    CHECK(st == VMP_END);
    if (st < 0)
        fprintf(stderr, "%s\n", vmp_reader_errmsg(r));
    CHECK(sample_stack != 0 && sample_stack == node_pc);
    for (int t = VMP_REC_HEADER; t <= VMP_REC_TYPE_MAX_V1_0; t++) {
        if (!seen[t])
            fprintf(stderr, "record type %d not seen\n", t);
        CHECK(seen[t] > 0);
    }
    vmp_reader_info info;
    vmp_reader_get_info(r, &info);
    CHECK(info.seen_end && info.seek_table && info.chunks == 1);
    vmp_reader_close(r);
}

/* 50 functions described; the samples and code name 1 to 4 (4 only in an
 * inline record).  With `lazy`, FUNCTION records are kept back until used. */
static void write_methods(const char *path, int lazy)
{
    vmp_writer_options o = VMP_WRITER_OPTIONS_INIT;
    vmp_writer_meta m = {.vm_name = "TestVM",
                         .states = states,
                         .n_states = 2,
                         .code_kinds = kinds,
                         .n_code_kinds = 2};
    vmp_writer *w = NULL;
    uint64_t zone = 0;
    char name[16];
    int i;

    atomic_store(&fake_now, 1000000);
    o.clock = fake_clock;
    o.chunk_age_ms = VMP_WRITER_NO_AGE_LIMIT;
    o.chunk_bytes = 4096; /* several chunks */
    o.lazy_functions = lazy;
    CHECK(vmp_writer_open(&w, path, &m, &o) == VMP_OK);
    if (!w)
        return;
    for (i = 1; i <= 50; i++) {
        uint32_t lines[] = {0, (uint32_t)i, 4, (uint32_t)i + 1};
        vmp_function fn = {.id = (uint64_t)i,
                           .name = name,
                           .scope = "C",
                           .lines = lines,
                           .n_lines = 2,
                           .bytecode_size = 8};
        snprintf(name, sizeof name, "m%d", i);
        CHECK(vmp_writer_function(w, &fn) == VMP_OK);
    }
    CHECK(vmp_writer_code_zone(w, &zone, "zone", 0x10000, 0x20000) == VMP_OK);
    vmp_pc_pair map[] = {{0, 0}, {12, 4}};
    vmp_frame chain[] = {{.value = 3, .bcpc = 4, .kind = VMP_FRAME_FUNCTION},
                         {.value = 4, .bcpc = 2, .kind = VMP_FRAME_FUNCTION}};
    vmp_inline_record inl[] = {{8, chain, 2}};
    vmp_code_object c = {.id = 70,
                         .zone = zone,
                         .function = 3,
                         .start = 0x10040,
                         .size = 32,
                         .pc_map = map,
                         .pc_map_len = 2,
                         .inlines = inl,
                         .n_inlines = 1};
    CHECK(vmp_writer_code_add(w, &c) == VMP_OK);
    for (i = 0; i < 400; i++) {
        vmp_frame fr[] = {
            {.value = 0x10044 + (uint64_t)(i % 3) * 8, .kind = VMP_FRAME_PC},
            {.value = 1 + (uint64_t)(i % 2), .bcpc = (uint32_t)(i % 7), .kind = VMP_FRAME_FUNCTION},
            {.value = 1, .bcpc = 1, .kind = VMP_FRAME_FUNCTION}};
        vmp_sample s = {.thread = 1 + (uint64_t)(i % 3),
                        .pc = fr[0].value,
                        .generation = VMP_GENERATION_CURRENT,
                        .weight = 1,
                        .frames = i % 4 ? fr + 1 : fr,
                        .depth = i % 4 ? 2 : 3};
        CHECK(vmp_writer_sample(w, &s) == VMP_OK);
        if (i % 100 == 99)
            CHECK(vmp_writer_flush(w) == VMP_OK);
    }
    /* Functions the VM describes after the file named them: function 60 in
     * a stack node, 61 as a code object's function.  Their nodes and the
     * code object are not written again: the records come when described,
     * so that the samples after it show the names (spec R-ID-2). */
    vmp_code_object late = {.id = 71, .zone = zone, .function = 61, .start = 0x10100, .size = 32};
    CHECK(vmp_writer_code_add(w, &late) == VMP_OK);
    for (i = 0; i < 200; i++) {
        vmp_frame fr[] = {{.value = 0x10104, .kind = VMP_FRAME_PC},
                          {.value = 60, .bcpc = 3, .kind = VMP_FRAME_FUNCTION},
                          {.value = 1, .bcpc = 1, .kind = VMP_FRAME_FUNCTION}};
        vmp_sample s = {.thread = 1,
                        .pc = fr[0].value,
                        .generation = VMP_GENERATION_CURRENT,
                        .weight = 1,
                        .frames = i % 2 ? fr + 1 : fr,
                        .depth = i % 2 ? 2 : 3};
        CHECK(vmp_writer_sample(w, &s) == VMP_OK);
        if (i == 99) {
            uint32_t lines[] = {0, 70};
            vmp_function fn = {
                .id = 60, .name = "late", .scope = "C", .lines = lines, .n_lines = 1};
            CHECK(vmp_writer_flush(w) == VMP_OK);
            CHECK(vmp_writer_function(w, &fn) == VMP_OK);
            fn.id = 61;
            fn.name = "later";
            CHECK(vmp_writer_function(w, &fn) == VMP_OK);
        }
    }
    CHECK(vmp_writer_close(w, NULL) == VMP_OK);
}

/* Every frame of `path` as "name range" with its weight, one per line, in the
 * analysis' order (frame ids are interned in the order resolved: the same
 * for the same samples); the FUNCTION records into *functions. */
static void frame_weights(const char *path, char *out, size_t size, uint64_t *functions)
{
    vmp_profile *p = NULL;
    vmp_reader *r = NULL;
    vmp_record rec;
    size_t n = 0, i, used = 0;

    out[0] = '\0';
    *functions = 0;
    CHECK(vmp_reader_open_file(&r, path, NULL) == VMP_OK);
    while (r && vmp_reader_next(r, &rec) == VMP_OK)
        *functions += rec.type == VMP_REC_FUNCTION;
    vmp_reader_close(r);
    r = NULL;
    CHECK(vmp_profile_create(&p, NULL) == VMP_OK);
    CHECK(vmp_reader_open_file(&r, path, NULL) == VMP_OK);
    if (p && r && vmp_profile_read(p, r) == VMP_OK) {
        const uint64_t *w = vmp_profile_frame_weights(p, &n);
        for (i = 1; i < n && used + 128 < size; i++) {
            char buf[96];
            vmp_analysis_format_frame(vmp_profile_analysis(p), buf, sizeof buf, (uint32_t)i);
            used += (size_t)snprintf(out + used, size - used, "%s %llu\n", buf,
                                     (unsigned long long)w[i]);
        }
    }
    vmp_reader_close(r);
    vmp_profile_free(p);
}

/* lazy_functions: the file holds only the FUNCTION records it names, each
 * before its first use (valid), and resolves exactly as the full file. */
static void test_lazy_functions_resolve_alike(void)
{
    static char full[8192], lazy[8192];
    uint64_t n_full, n_lazy;
    vmp_validate_report rep;
    vmp_reader *r = NULL;

    write_methods("lazy-full.vmp", 0);
    write_methods("lazy-used.vmp", 1);
    frame_weights("lazy-full.vmp", full, sizeof full, &n_full);
    frame_weights("lazy-used.vmp", lazy, sizeof lazy, &n_lazy);
    CHECK_EQ_U64(n_full, 52);
    CHECK_EQ_U64(n_lazy, 6); /* 4 used, and the 2 described after their use */
    CHECK(full[0] != '\0');
    CHECK(strstr(full, "function#60") && strstr(full, "late"));
    CHECK(strstr(full, "function#61") && strstr(full, "later"));
    CHECK_STR(lazy, full);
    CHECK(vmp_reader_open_file(&r, "lazy-used.vmp", NULL) == VMP_OK);
    CHECK(r && vmp_validate(&rep, r) == VMP_OK);
    vmp_reader_close(r);
}

/* Code churn: every round places 4 code objects at the same 4 addresses
 * (pc maps, an inline record, functions), samples some of them as the pc,
 * as machine frames and as blame, moves one, frees them all, and then takes
 * a sample at the generation before the free in an object no sample hit
 * (a sample taken just before a free, drained after it).  With `lazy`,
 * the maps are kept back (lazy_code_maps); FUNCTION records always are. */
static void write_code_churn(const char *path, int lazy)
{
    vmp_writer_options o = VMP_WRITER_OPTIONS_INIT;
    vmp_writer_meta m = {.vm_name = "TestVM",
                         .states = states,
                         .n_states = 2,
                         .code_kinds = kinds,
                         .n_code_kinds = 2};
    vmp_writer *w = NULL;
    uint64_t zone = 0, gen = 0;
    char name[16];

    atomic_store(&fake_now, 1000000);
    o.clock = fake_clock;
    o.chunk_age_ms = VMP_WRITER_NO_AGE_LIMIT;
    o.chunk_bytes = 2048; /* many chunks */
    o.lazy_functions = 1;
    o.lazy_code_maps = lazy;
    CHECK(vmp_writer_open(&w, path, &m, &o) == VMP_OK);
    if (!w)
        return;
    for (int i = 1; i <= 20; i++) {
        uint32_t lines[] = {0, (uint32_t)i, 8, (uint32_t)i + 1};
        vmp_function fn = {.id = (uint64_t)i,
                           .name = name,
                           .scope = "C",
                           .lines = lines,
                           .n_lines = 2,
                           .bytecode_size = 16};
        snprintf(name, sizeof name, "m%d", i);
        CHECK(vmp_writer_function(w, &fn) == VMP_OK);
    }
    CHECK(vmp_writer_code_zone(w, &zone, "zone", 0x10000, 0x20000) == VMP_OK);
    for (uint64_t round = 0; round < 30; round++) {
        uint64_t ids[4];
        for (uint64_t k = 0; k < 4; k++) {
            uint64_t n = round * 4 + k;
            vmp_pc_pair map[] = {{0, 0}, {0x20 + k, 3 + round % 5}, {0x40, 9}};
            vmp_frame chain[] = {{.value = 1 + (n + 7) % 20, .bcpc = 2, .kind = VMP_FRAME_FUNCTION},
                                 {.value = 1 + n % 20, .bcpc = 5, .kind = VMP_FRAME_FUNCTION}};
            vmp_inline_record inl[] = {{0x30, chain, 2}};
            vmp_code_object c = {.id = ids[k] = 100 + n,
                                 .zone = zone,
                                 .function = 1 + n % 20,
                                 .start = 0x10000 + k * 0x100,
                                 .size = 0x80,
                                 .pc_map = map,
                                 .pc_map_len = k == 3 ? 0 : 3,
                                 .inlines = inl,
                                 .n_inlines = k == 1 ? 1 : 0};
            CHECK(vmp_writer_code_add(w, &c) == VMP_OK);
        }
        if (round % 3 == 0) /* object 2 moves up by 0x1000 */
            CHECK(vmp_writer_code_move(w, ids[2], 0x11200, &gen) == VMP_OK);
        for (int i = 0; i < 12; i++) {
            uint64_t k = (round + (uint64_t)i) % 3; /* object 3 only by blame */
            uint64_t pc = (k == 2 && round % 3 == 0 ? 0x11200 : 0x10000 + k * 0x100) +
                          (uint64_t)(i * 0x11) % 0x80;
            vmp_frame fr[] = {
                {.value = pc, .kind = VMP_FRAME_PC},
                {.value = 0x10000 + ((k + 1) % 3) * 0x100 + 0x35, .kind = VMP_FRAME_PC},
                {.value = 1 + (uint64_t)i % 20, .bcpc = 3, .kind = VMP_FRAME_FUNCTION}};
            vmp_sample s = {.thread = 1 + (uint64_t)(i % 2),
                            .pc = pc,
                            .generation = VMP_GENERATION_CURRENT,
                            .weight = 1,
                            .blame = i % 5 == 0 ? ids[3] : 0,
                            .frames = i % 2 ? fr : fr + 2,
                            .depth = i % 2 ? 3 : 1};
            if (round % 4 == 1)
                break; /* some rounds' objects: only the late sample */
            CHECK(vmp_writer_sample(w, &s) == VMP_OK);
        }
        if (round % 7 == 0)
            CHECK(vmp_writer_flush(w) == VMP_OK);
        for (uint64_t k = 0; k < 4; k++)
            CHECK(vmp_writer_code_free(w, ids[k], &gen) == VMP_OK);
        /* taken before the frees, written after them */
        vmp_sample late = {.thread = 3,
                           .pc = 0x10000 + (round % 3) * 0x100 + 0x41,
                           .generation = gen - 4,
                           .weight = 1};
        if (round % 4 == 1)
            CHECK(vmp_writer_sample(w, &late) == VMP_OK);
    }
    CHECK(vmp_writer_close(w, NULL) == VMP_OK);
}

/* lazy_code_maps: the maps of code that samples ran only, in CODE_MAP
 * records, and the same frames, ranges and weights as with every map. */
static void test_lazy_code_maps_resolve_alike(void)
{
    static char full[65536], lazy[65536];
    uint64_t n_full, n_lazy, maps = 0, objects = 0;
    vmp_validate_report rep;
    vmp_reader *r = NULL;
    vmp_record rec;
    vmp_reader_info info;

    write_code_churn("maps-full.vmp", 0);
    write_code_churn("maps-used.vmp", 1);
    frame_weights("maps-full.vmp", full, sizeof full, &n_full);
    frame_weights("maps-used.vmp", lazy, sizeof lazy, &n_lazy);
    CHECK(strstr(full, "m1") != NULL);
    CHECK_STR(lazy, full);
    CHECK(n_lazy <= n_full);
    CHECK(vmp_reader_open_file(&r, "maps-used.vmp", NULL) == VMP_OK);
    while (r && vmp_reader_next(r, &rec) == VMP_OK) {
        maps += rec.type == VMP_REC_CODE_MAP;
        objects += rec.type == VMP_REC_CODE_OBJECT;
    }
    vmp_reader_get_info(r, &info);
    CHECK_EQ_U64(info.format_major, 2); /* the default, which holds CODE_MAP */
    vmp_reader_close(r);
    printf("lazy_code_maps: %llu CODE_MAP records for %llu code objects, %llu of %llu functions\n",
           (unsigned long long)maps, (unsigned long long)objects, (unsigned long long)n_lazy,
           (unsigned long long)n_full);
    CHECK_EQ_U64(objects, 120);
    /* 3 maps a round (object 3 has none); in the 8 rounds sampled late
     * only, 1, and the moved object's in 2 of them (rounds 9 and 21) */
    CHECK_EQ_U64(maps, 22 * 3 + 8 + 2);
    r = NULL;
    CHECK(vmp_reader_open_file(&r, "maps-used.vmp", NULL) == VMP_OK);
    CHECK(r && vmp_validate(&rep, r) == VMP_OK);
    CHECK_EQ_U64(rep.late_functions, 0); /* each before its first use (R-ID-2) */
    vmp_reader_close(r);
}

/* A module whose symbols nest, share addresses, have size 0 (up to the next
 * symbol or the module's end) and leave gaps; samples at pcs all over it, as
 * the sample's pc and as machine frames (return addresses).  With `lazy`,
 * the writer keeps the symbols back and writes those the pcs need.  With
 * `late`, the first 300 samples come before the module is added (a library
 * that the VM loaded before the agent saw it) and the other 300 repeat
 * their stacks: the writer wrote those stack nodes before the module, and
 * the samples after it must still resolve through its symbols.  With
 * `no_end`, the module's end is 0 (unknown): a size-0 symbol then runs to
 * the next symbol, the last one covers its own address (spec R-RES-6). */
static void write_symbols(const char *path, int lazy, int sparse, int late, int no_end)
{
    /* sparse: a few pcs, so that most symbols stay unwritten: a size-0
     * symbol (ended by after_a, by big), a gap, a nested one, the end */
    static const uint64_t few[] = {0x1045, 0x10c5, 0x1250, 0x1142, 0x1305, 0x13f0};
    static const vmp_symbol_desc syms[] = {
        {0x1000, 0x100, "outer"}, {0x1010, 0x20, "inner"},    {0x1010, 0x20, "inner_twin"},
        {0x1040, 0, "unnamed_a"}, {0x1080, 0x10, "after_a"},  {0x10c0, 0, ""},
        {0x1200, 0x40, "lone"},   {0x1300, 0, "last_to_end"}, {0x1300, 0x8, "at_last"},
        {0x1100, 0x100, "big"},   {0x1140, 0x4, "tiny"}};
    vmp_writer_options o = VMP_WRITER_OPTIONS_INIT;
    vmp_writer_meta m = {.vm_name = "TestVM", .states = states, .n_states = 2};
    vmp_writer *w = NULL;
    uint64_t mod = 0;
    int i;

    atomic_store(&fake_now, 1000000);
    o.clock = fake_clock;
    o.chunk_age_ms = VMP_WRITER_NO_AGE_LIMIT;
    o.chunk_bytes = 2048;
    o.lazy_symbols = lazy;
    CHECK(vmp_writer_open(&w, path, &m, &o) == VMP_OK);
    if (!w)
        return;
    for (i = 0; i < 600; i++) {
        int k = late ? i % 300 : i;
        if (i == (late ? 300 : 0))
            CHECK(vmp_writer_add_module_symbols(w, &mod, "/opt/libx.so", NULL, 0, 0x40000, 0x41000,
                                                no_end ? 0 : 0x41400, syms,
                                                sizeof syms / sizeof syms[0]) == VMP_OK);
        uint64_t pc = sparse ? 0x40000 + few[k % 6] : 0x41000 + (uint64_t)((k * 37) % 0x400);
        uint64_t ret =
            sparse ? 0x40000 + (k % 2 ? 0x1081 : 0x1201) : 0x41000 + (uint64_t)((k * 53) % 0x400);
        vmp_frame fr[] = {{.value = pc, .kind = VMP_FRAME_PC},
                          {.value = ret + 1, .kind = VMP_FRAME_PC}};
        vmp_sample s = {.thread = 1,
                        .pc = pc,
                        .generation = VMP_GENERATION_CURRENT,
                        .weight = 1,
                        .frames = fr,
                        .depth = 2};
        CHECK(vmp_writer_sample(w, &s) == VMP_OK);
        if (i % 150 == 149)
            CHECK(vmp_writer_flush(w) == VMP_OK);
    }
    CHECK(vmp_writer_close(w, NULL) == VMP_OK);
}

/* lazy_symbols: fewer symbols, the same frames and weights; also when the
 * module comes after stack nodes in it were written. */
static void test_lazy_symbols_resolve_alike(void)
{
    static char full[16384], lazy[16384];
    uint64_t unused;
    vmp_validate_report rep;
    vmp_reader *r = NULL;

    int mode;
    for (mode = 0; mode < 6; mode++) {
        int sparse = mode & 1, late = mode >> 1 == 1, no_end = mode >> 1 == 2;
        vmp_record rec;
        uint64_t n_full = 0, n_lazy = 0;
        write_symbols("syms-full.vmp", 0, sparse, late, no_end);
        write_symbols("syms-used.vmp", 1, sparse, late, no_end);
        frame_weights("syms-full.vmp", full, sizeof full, &unused);
        frame_weights("syms-used.vmp", lazy, sizeof lazy, &unused);
        CHECK(strstr(full, "libx.so+0x") != NULL);
        CHECK(strstr(full, sparse ? "unnamed_a" : "inner") != NULL);
        if (!no_end) /* unknown: before the module; with no end, past its last symbol */
            CHECK((strstr(full, "[unknown]") != NULL) == late);
        CHECK_STR(lazy, full);
        CHECK(vmp_reader_open_file(&r, "syms-full.vmp", NULL) == VMP_OK);
        while (r && vmp_reader_next(r, &rec) == VMP_OK)
            n_full += rec.type == VMP_REC_MODULE_SYMBOLS ? rec.u.module_symbols.n_symbols : 0;
        vmp_reader_close(r);
        CHECK(vmp_reader_open_file(&r, "syms-used.vmp", NULL) == VMP_OK);
        while (r && vmp_reader_next(r, &rec) == VMP_OK)
            n_lazy += rec.type == VMP_REC_MODULE_SYMBOLS ? rec.u.module_symbols.n_symbols : 0;
        vmp_reader_close(r);
        r = NULL;
        printf("  %s pcs%s%s: %llu of %llu symbols written\n", sparse ? "few" : "many",
               late ? ", module after the stacks" : "", no_end ? ", module end unknown" : "",
               (unsigned long long)n_lazy, (unsigned long long)n_full);
        CHECK_EQ_U64(n_full, 11);
        CHECK(sparse ? n_lazy <= 8 : n_lazy <= 10);
    }
    CHECK(vmp_reader_open_file(&r, "syms-used.vmp", NULL) == VMP_OK);
    CHECK(r && vmp_validate(&rep, r) == VMP_OK);
    vmp_reader_close(r);
}

/* The 600 samples of test_sample_blocks(), with or without blocks. */
static void write_blocks(const char *path, int blocks)
{
    vmp_writer_options o = VMP_WRITER_OPTIONS_INIT;
    vmp_writer_meta m = {.vm_name = "TestVM",
                         .states = states,
                         .n_states = 2,
                         .failure_reasons = reasons,
                         .n_failure_reasons = 2};
    vmp_writer *w = NULL;
    int i;

    atomic_store(&fake_now, 1000000);
    o.clock = fake_clock;
    o.chunk_age_ms = VMP_WRITER_NO_AGE_LIMIT;
    o.chunk_bytes = 2048;
    o.format_major = blocks ? 2 : 1;
    o.sample_time_unit_ns = 1000;
    CHECK(vmp_writer_open(&w, path, &m, &o) == VMP_OK);
    if (!w)
        return;
    for (i = 0; i < 600; i++) {
        vmp_frame fr[2] = {{.value = 0x1000 + (uint64_t)(i % 7), .kind = VMP_FRAME_PC},
                           {.value = 0x2000, .kind = VMP_FRAME_PC}};
        vmp_sample s = {.thread = 1 + (uint64_t)(i % 3),
                        .state = (uint32_t)(i % 2),
                        .pc = fr[0].value,
                        .generation = VMP_GENERATION_CURRENT,
                        .weight = 1 + (uint64_t)(i % 4 == 0),
                        .frames = fr,
                        .depth = 2};
        if (i % 10 == 3)
            s.pc = 0x3000; /* not the innermost node's: stored */
        if (i % 50 == 7)
            s.pc = 0; /* no pc, a machine frame innermost: a SAMPLE record */
        if (i % 25 == 11)
            CHECK(vmp_writer_failed_sample(w, &s, 1) == VMP_OK);
        else
            CHECK(vmp_writer_sample(w, &s) == VMP_OK);
        if (i % 200 == 199)
            CHECK(vmp_writer_flush(w) == VMP_OK);
    }
    CHECK(vmp_writer_close(w, NULL) == VMP_OK);
}

/* sample_blocks (format 2.0, spec R-BLK-1 to R-BLK-3, R-BLK-5): the
 * samples come back in order with every field and their sample contexts,
 * in blocks but for a sample without a pc
 * whose innermost frame is a machine frame (a SAMPLE record); a pc is
 * stored only where it is not the innermost node's; failed samples in
 * blocks; times in microseconds, each within 1 us below the same sample's
 * time in nanoseconds (the file written without blocks); chunks of 2 KiB
 * hold whole blocks; the file is 2.0 and valid. */
static void test_sample_blocks(void)
{
    static uint64_t times[600];
    vmp_reader *r = NULL;
    vmp_record rec;
    vmp_reader_info info;
    vmp_validate_report rep;
    int n = 0, in_blocks = 0, records = 0;

    write_blocks("no-blocks.vmp", 0);
    CHECK(vmp_reader_open_file(&r, "no-blocks.vmp", NULL) == VMP_OK);
    while (r && vmp_reader_next(r, &rec) == VMP_OK)
        if ((rec.type == VMP_REC_SAMPLE || rec.type == VMP_REC_FAILED_SAMPLE) && n < 600)
            times[n++] = rec.u.sample.time_ns;
    vmp_reader_close(r);
    CHECK_EQ_U64((uint64_t)n, 600);

    write_blocks("blocks.vmp", 1);
    n = 0;
    CHECK(vmp_reader_open_file(&r, "blocks.vmp", NULL) == VMP_OK);
    vmp_reader_get_info(r, &info);
    CHECK_EQ_U64(info.format_major, 2);
    while (r && vmp_reader_next(r, &rec) == VMP_OK) {
        const vmp_rec_sample *s = &rec.u.sample;
        if (rec.type != VMP_REC_SAMPLE && rec.type != VMP_REC_FAILED_SAMPLE)
            continue;
        CHECK(n < 600);
        if (n >= 600)
            break;
        in_blocks += rec.raw_type == VMP_REC_SAMPLE_BLOCK;
        records += rec.raw_type != VMP_REC_SAMPLE_BLOCK;
        CHECK((rec.type == VMP_REC_FAILED_SAMPLE) == (n % 25 == 11));
        CHECK((rec.raw_type != VMP_REC_SAMPLE_BLOCK) == (n % 50 == 7 && n % 25 != 11));
        CHECK_EQ_U64(s->thread, 1 + (uint64_t)(n % 3));
        CHECK_EQ_U64(s->state, (uint64_t)(n % 2));
        CHECK_EQ_U64(s->weight, 1 + (uint64_t)(n % 4 == 0));
        CHECK(s->time_ns <= times[n] && times[n] - s->time_ns < 1000);
        /* the reader names a block's sample context (not a failed one's) */
        CHECK((s->context != 0) ==
              (rec.raw_type == VMP_REC_SAMPLE_BLOCK && rec.type == VMP_REC_SAMPLE));
        if (rec.type == VMP_REC_FAILED_SAMPLE) {
            CHECK_EQ_U64(s->reason, 1);
            CHECK(s->has_pc == (n % 50 != 7) && !s->pc_is_leaf);
        } else if (n % 50 == 7) {
            CHECK(!s->has_pc && !s->pc_is_leaf);
        } else if (n % 10 == 3) {
            CHECK(s->has_pc && s->pc == 0x3000);
        } else {
            CHECK(!s->has_pc && s->pc_is_leaf); /* the innermost node's, 0x1000 + n % 7 */
        }
        n++;
    }
    CHECK_EQ_U64((uint64_t)n, 600);
    CHECK(in_blocks > 500 && records == 12);
    vmp_reader_close(r);
    r = NULL;
    CHECK(vmp_reader_open_file(&r, "blocks.vmp", NULL) == VMP_OK);
    CHECK(r && vmp_validate(&rep, r) == VMP_OK);
    vmp_reader_get_info(r, &info);
    CHECK_EQ_U64(info.undefined_contexts, 0);
    vmp_reader_close(r);
}

/* spec R-BLK-5: a block puts each sample in the context of its (stack,
 * state, pc), defining those new to the file with ids in increasing order;
 * contexts whose definitions will not reach the file (a block cleared, a
 * chunk dropped) are forgotten, and defined again under new ids. */
static void test_block_contexts(void)
{
    vmp_block b;
    vmp_buf out = {0};
    vmp_block_sample s = {.dt = 1, .v = {1, 5, 1, 0, 1, 0}};
    CHECK(vmp_block__init(&b, 16) == 0);
    vmp_block__add(&b, &s); /* context 1 */
    vmp_block__add(&b, &s);
    s.has_pc = 1, s.pc = 0x1234;
    vmp_block__add(&b, &s); /* context 2: the same stack with a pc of its own */
    CHECK(b.n_ctx == 2 && b.n_new == 2 && b.col[VMP_BLOCK_CONTEXT][1] == 1 &&
          b.col[VMP_BLOCK_CONTEXT][2] == 2 && b.n_pcs == 0 && !b.varies[VMP_BLOCK_STACK]);
    vmp_block__encode(&b, &out);
    CHECK(!out.failed && b.n == 0 && b.n_new == 0);
    vmp_block__add(&b, &s); /* context 2, defined before */
    s.v[VMP_BLOCK_STACK] = 6;
    vmp_block__add(&b, &s); /* context 3 */
    CHECK(b.n_ctx == 3 && b.n_new == 1);
    vmp_block__clear(&b); /* context 3 is never written: all are forgotten */
    vmp_block__add(&b, &s);
    s.v[VMP_BLOCK_STACK] = 5;
    vmp_block__add(&b, &s);
    CHECK(b.n_ctx == 5 && b.n_new == 2 && b.col[VMP_BLOCK_CONTEXT][0] == 4 &&
          b.col[VMP_BLOCK_CONTEXT][1] == 5);
    s.pc = 0; /* a pc of 0 stored: no context can say it, its pair does */
    vmp_block__add(&b, &s);
    CHECK(b.n_ctx == 5 && b.col[VMP_BLOCK_CONTEXT][2] == 0 && b.col[VMP_BLOCK_STACK][2] == 5 &&
          b.n_pcs == 1 && b.pcs[0] == 2 && b.pcs[1] == 0);
    vmp_buf__free(&out);
    vmp_block__free(&b);
}

/* vmp_block__bytes() bounds what vmp_block__encode() appends, and
 * vmp_block__bytes_max() bounds vmp_block__bytes() for any next sample until
 * the block is full: blocks of the narrowest and the widest samples, with
 * pcs, failures and new contexts. */
static void test_block_size_bounds(void)
{
    static const int widths[] = {0, 1, 2};
    size_t k;
    for (k = 0; k < sizeof widths / sizeof *widths; k++) {
        vmp_block b;
        vmp_buf out = {0};
        uint64_t x = 88172645463325252ull;
        uint32_t i;
        size_t max_before = 0, bytes_before = 0;
        CHECK(vmp_block__init(&b, 64) == 0);
        for (i = 0; i < 64; i++) {
            vmp_block_sample s;
            int c;
            memset(&s, 0, sizeof s);
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            s.dt = widths[k] == 2 ? (int64_t)(x >> 1) - INT64_MAX / 2 : widths[k];
            for (c = 0; c < VMP_BLOCK_COLUMNS; c++)
                s.v[c] = widths[k] == 2 ? x * (uint64_t)(c + 3) : (uint64_t)widths[k];
            s.v[VMP_BLOCK_CONTEXT] = 0;
            s.has_pc = widths[k] != 0;
            s.pc = widths[k] == 2 ? ~x : 0x1000;
            s.failed = widths[k] == 2 && i % 3 == 0;
            s.reason = s.failed ? x : 0;
            if (s.failed)
                s.v[VMP_BLOCK_STACK] = s.v[VMP_BLOCK_BLAME] = 0;
            max_before = vmp_block__bytes_max(&b);
            CHECK(vmp_block__bytes(&b, &s) <= max_before);
            vmp_block__add(&b, &s);
            bytes_before = vmp_block__bytes(&b, NULL);
            CHECK(bytes_before <= max_before);
        }
        vmp_block__encode(&b, &out);
        CHECK(!out.failed && out.len > 0 && out.len <= bytes_before);
        vmp_buf__free(&out);
        vmp_block__free(&b);
    }
}

/* spec §5.15: a writer with sample kinds writes 2.1; its KIND_SAMPLE
 * records carry their kind, absolute time, stack and 64-bit weight, the
 * class under them (R-KND-4), and END counts them apart (R-KND-2); the CPU
 * samples' times and counts are as without them, and a profile sums the
 * CPU samples alone (R-KND-3).  Kinds need format 2 and names other than
 * "cpu" (R-KND-1). */
static void test_sample_kinds(void)
{
    static const char *const knames[] = {"alloc", "lock"};
    static const char *const kunits[] = {"bytes", "nanoseconds"};
    vmp_writer_meta m = {.vm_name = "TestVM", .sample_interval_ns = 1000000};
    vmp_writer_options o = VMP_WRITER_OPTIONS_INIT;
    vmp_writer *w = NULL;
    vmp_reader *r = NULL;
    vmp_record rec;
    vmp_reader_info info;
    vmp_validate_report rep;
    uint64_t cpu = 0, kind_recs = 0, alloc_bytes = 0, lock_ns = 0, last_cpu_time = 0;
    int saw_class = 0;
    o.clock = fake_clock;
    o.chunk_age_ms = VMP_WRITER_NO_AGE_LIMIT;
    o.chunk_bytes = 4096; /* several chunks */
    o.sample_kinds = knames;
    o.sample_units = kunits;
    o.n_sample_kinds = 2;
    CHECK(vmp_writer_open(&w, "kinds.vmp", &m, &o) == VMP_OK);
    if (!w)
        return;
    CHECK(vmp_writer_class(w, 700, "byte[]") == VMP_OK);
    vmp_function fn = {.id = 9, .name = "fill", .scope = "Demo"};
    CHECK(vmp_writer_function(w, &fn) == VMP_OK);
    for (int i = 0; i < 400; i++) {
        vmp_frame fr[] = {{.value = 700, .bcpc = VMP_BCPC_NONE, .kind = VMP_FRAME_FUNCTION},
                          {.value = 9, .bcpc = (uint32_t)i % 5, .kind = VMP_FRAME_FUNCTION}};
        vmp_sample s = {.thread = 1 + (uint64_t)(i % 2),
                        .generation = VMP_GENERATION_CURRENT,
                        .frames = fr + 1,
                        .depth = 1};
        CHECK(vmp_writer_sample(w, &s) == VMP_OK);
        s.frames = fr;
        s.depth = 2;
        if (i % 4 == 0)
            CHECK(vmp_writer_kind_sample(w, 1, &s, (uint64_t)5 << 30) == VMP_OK); /* > 2^32 */
        if (i % 8 == 1)
            CHECK(vmp_writer_kind_sample(w, 2, &s, 15000) == VMP_OK);
    }
    vmp_sample s0 = {.thread = 1};
    CHECK(vmp_writer_kind_sample(w, 3, &s0, 1) == VMP_ERR_INVALID_ARG);
    CHECK(vmp_writer_kind_sample(w, 0, &s0, 1) == VMP_ERR_INVALID_ARG);
    CHECK(vmp_writer_close(w, NULL) == VMP_OK);

    CHECK(vmp_reader_open_file(&r, "kinds.vmp", NULL) == VMP_OK);
    vmp_reader_get_info(r, &info);
    CHECK_EQ_U64(info.format_major, 2);
    CHECK_EQ_U64(info.format_minor, 1);
    while (r && vmp_reader_next(r, &rec) == VMP_OK) {
        const vmp_rec_sample *s = &rec.u.sample;
        if (rec.type == VMP_REC_HEADER) {
            CHECK_EQ_U64(rec.u.header.n_sample_kinds, 2);
            CHECK(rec.u.header.n_sample_kinds == 2 && str_is(rec.u.header.sample_kinds[1], "lock"));
            CHECK(rec.u.header.n_sample_units == 2 &&
                  str_is(rec.u.header.sample_units[0], "bytes"));
        } else if (rec.type == VMP_REC_FUNCTION && rec.u.function.id == 700) {
            saw_class = 1;
            CHECK_EQ_U64(rec.u.function.is_class, 1);
            CHECK(str_is(rec.u.function.name, "byte[]"));
        } else if (rec.type == VMP_REC_FUNCTION) {
            CHECK_EQ_U64(rec.u.function.is_class, 0);
        } else if (rec.type == VMP_REC_SAMPLE) {
            cpu++;
            CHECK(s->time_ns > last_cpu_time);
            last_cpu_time = s->time_ns;
            CHECK_EQ_U64(s->kind, 0);
        } else if (rec.type == VMP_REC_KIND_SAMPLE) {
            kind_recs++;
            CHECK(s->stack != 0 && s->time_ns > 0);
            if (s->kind == 1)
                alloc_bytes += s->weight;
            else if (s->kind == 2)
                lock_ns += s->weight;
            else
                CHECK(0);
        } else if (rec.type == VMP_REC_END) {
            CHECK_EQ_U64(rec.u.end.samples, 400);
            CHECK_EQ_U64(rec.u.end.kind_samples, 150);
        }
    }
    vmp_reader_close(r);
    CHECK(saw_class);
    CHECK_EQ_U64(cpu, 400);
    CHECK_EQ_U64(kind_recs, 150);
    CHECK_EQ_U64(alloc_bytes, (uint64_t)100 * (5ull << 30));
    CHECK_EQ_U64(lock_ns, 50 * 15000);
    r = NULL;
    CHECK(vmp_reader_open_file(&r, "kinds.vmp", NULL) == VMP_OK);
    CHECK(r && vmp_validate(&rep, r) == VMP_OK);
    vmp_reader_close(r);

    /* spec R-KND-3: the CPU profile holds the CPU samples alone */
    vmp_profile *p = NULL;
    r = NULL;
    CHECK(vmp_profile_create(&p, NULL) == VMP_OK);
    CHECK(vmp_reader_open_file(&r, "kinds.vmp", NULL) == VMP_OK);
    CHECK(p && r && vmp_profile_read(p, r) == VMP_OK);
    if (p)
        CHECK_EQ_U64(vmp_profile_get_totals(p)->samples, 400);
    vmp_reader_close(r);
    vmp_profile_free(p);

    /* spec R-KND-3, R-VIEW-6: an analysis delivers the kind asked for (its
     * class frame of kind "class", R-KND-4), counts every kind, and with
     * VMP_ANALYSIS_ALL_KINDS delivers each sample with its kind */
    for (int all = 0; all < 2; all++) {
        vmp_analysis_options ao = VMP_ANALYSIS_OPTIONS_INIT;
        vmp_analysis *a = NULL;
        vmp_asample as;
        uint64_t delivered = 0, by_kind[3] = {0, 0, 0};
        ao.kind = "alloc";
        ao.flags = all ? VMP_ANALYSIS_ALL_KINDS : 0;
        r = NULL;
        CHECK(vmp_analysis_create(&a, &ao) == VMP_OK);
        CHECK(vmp_reader_open_file(&r, "kinds.vmp", NULL) == VMP_OK);
        while (a && r && vmp_analysis_next(a, r, &as) == VMP_OK) {
            delivered++;
            by_kind[as.kind < 3 ? as.kind : 0]++;
            if (as.kind == 1) {
                const vmp_aframe *fr = vmp_analysis_frame(a, as.leaf);
                const vmp_afunction *af = fr ? vmp_analysis_function(a, fr->function) : NULL;
                CHECK(af && strcmp(af->kind, "class") == 0 && strcmp(af->name, "byte[]") == 0);
                CHECK_EQ_U64(as.weight, 5ull << 30);
            }
        }
        if (a) {
            size_t nk = 0;
            const vmp_akind *k = vmp_analysis_kinds(a, &nk);
            CHECK_EQ_U64(nk, 3);
            if (nk == 3) {
                CHECK(strcmp(k[0].name, "cpu") == 0 && k[0].records == 400);
                CHECK(strcmp(k[1].unit, "bytes") == 0 && k[1].records == 100);
                CHECK(strcmp(k[2].name, "lock") == 0 && k[2].weight == 50 * 15000);
            }
            CHECK(vmp_analysis_kind_selected(a) == (all ? -2 : 1));
        }
        CHECK_EQ_U64(delivered, all ? 550 : 100);
        CHECK_EQ_U64(by_kind[2], all ? 50 : 0);
        vmp_reader_close(r);
        vmp_analysis_free(a);
    }

    /* spec R-KND-1: format 2 only; no kind named "cpu", none twice */
    static const char *const bad[] = {"alloc", "cpu"};
    static const char *const twice[] = {"alloc", "alloc"};
    o.format_major = 1;
    CHECK(vmp_writer_open(&w, "kinds-bad.vmp", &m, &o) == VMP_ERR_INVALID_ARG);
    o.format_major = 0;
    o.sample_kinds = bad;
    CHECK(vmp_writer_open(&w, "kinds-bad.vmp", &m, &o) == VMP_ERR_INVALID_ARG);
    o.sample_kinds = twice;
    CHECK(vmp_writer_open(&w, "kinds-bad.vmp", &m, &o) == VMP_ERR_INVALID_ARG);
}

int main(void)
{
    VMP_TEST_RUN(test_reader_sees_every_field);
    VMP_TEST_RUN(test_lazy_functions_resolve_alike);
    VMP_TEST_RUN(test_lazy_symbols_resolve_alike);
    VMP_TEST_RUN(test_lazy_code_maps_resolve_alike);
    VMP_TEST_RUN(test_sample_blocks);
    VMP_TEST_RUN(test_block_contexts);
    VMP_TEST_RUN(test_block_size_bounds);
    VMP_TEST_RUN(test_sample_kinds);
    VMP_TEST_EXIT();
}
