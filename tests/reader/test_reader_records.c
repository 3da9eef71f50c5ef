/* SPDX-License-Identifier: MIT
 *
 * test_reader_records.c - every record type decodes field for field; files of
 * a future minor version are read with their unknown parts skipped (spec.md
 * §5, R-REC-1..4, R-STK-1, R-SMP-1, §7).
 */
#include <string.h>

#include "reader_fixture.h"
#include "vmp_test.h"

static int next_is(vmp_reader *r, vmp_record *rec, int type)
{
    vmp_status st = vmp_reader_next(r, rec);
    if (st != VMP_OK) {
        fprintf(stderr, "next: %d %s\n", st, vmp_reader_errmsg(r));
        return 0;
    }
    if (rec->type != type) {
        fprintf(stderr, "type %d, expected %d\n", rec->type, type);
        return 0;
    }
    return 1;
}

static void test_every_record_type_decodes_field_for_field(void)
{
    tbuf c = {0}, f = {0};
    vmp_reader *r;
    vmp_record rec;
    vmp_reader_info info;
    size_t hdr_len;

    build_all_types(&c);
    f_header(&f, 1, 0);
    hdr_len = f.len;
    f_chunk(&f, &c);
    CHECK(vmp_reader_open_memory(&r, f.p, f.len, "all.vmp", NULL) == VMP_OK);

    CHECK(next_is(r, &rec, VMP_REC_HEADER));
    {
        const vmp_rec_header *h = &rec.u.header;
        CHECK_EQ_U64(rec.raw_type, VMP_REC_HEADER);
        CHECK_EQ_U64(rec.chunk_index, 0);
        CHECK_EQ_U64(rec.chunk_offset, hdr_len);
        CHECK_EQ_U64(rec.record_offset, 0);
        CHECK_EQ_U64(rec.unknown_keys, 0);
        CHECK_STR(h->producer.s, "vmp-test 1.0");
        CHECK_EQ_U64(h->producer.len, 12);
        CHECK_STR(h->vm_name.s, "cog");
        CHECK_STR(h->vm_version.s, "5.0");
        CHECK_EQ_U64(h->pid, 4242);
        CHECK_EQ_U64(h->start_realtime_ns, 1700000000000000000ull);
        CHECK_STR(h->clock.s, "monotonic");
        CHECK_EQ_U64(h->clock_res_ns, 1);
        CHECK_EQ_U64(h->interval_ns, 1000000);
        CHECK_EQ_U64(h->pointer_size, 4);
        CHECK_EQ_U64(h->n_states, 3);
        if (h->n_states == 3) {
            CHECK_STR(h->states[0].s, "interpreter");
            CHECK_STR(h->states[1].s, "jit");
            CHECK_STR(h->states[2].s, "gc");
        }
        CHECK_EQ_U64(h->n_code_kinds, 2);
        if (h->n_code_kinds == 2)
            CHECK_STR(h->code_kinds[1].s, "closed PIC");
        CHECK_EQ_U64(h->n_tiers, 1);
        if (h->n_tiers == 1)
            CHECK_STR(h->tiers[0].s, "c2");
        CHECK_EQ_U64(h->n_event_kinds, 1);
        if (h->n_event_kinds == 1)
            CHECK_STR(h->event_kinds[0].s, "compaction");
        CHECK_EQ_U64(h->n_counter_kinds, 1);
        if (h->n_counter_kinds == 1)
            CHECK_STR(h->counter_kinds[0].s, "heap");
        CHECK_EQ_U64(h->n_failure_reasons, 2);
        if (h->n_failure_reasons == 2) {
            CHECK_STR(h->failure_reasons[0].s, "no frame");
            CHECK_STR(h->failure_reasons[1].s, "");
            CHECK_EQ_U64(h->failure_reasons[1].len, 0);
        }
        CHECK_EQ_U64(h->n_labels, 2);
        if (h->n_labels == 2) {
            CHECK_STR(h->labels[0].s, "benchmark");
            CHECK_STR(h->labels[1].s, "fib");
            CHECK_STR(h->labels[2].s, "commit");
            CHECK_STR(h->labels[3].s, "abc123");
        }
        CHECK_EQ_U64(h->start_monotonic_ns, 99999);
    }

    CHECK(next_is(r, &rec, VMP_REC_MODULE));
    CHECK(rec.record_offset > 0);
    CHECK_EQ_U64(rec.u.module.id, 1);
    CHECK_STR(rec.u.module.path.s, "/usr/bin/vm");
    CHECK_EQ_U64(rec.u.module.build_id_size, 4);
    CHECK(rec.u.module.build_id != NULL &&
          memcmp(rec.u.module.build_id, "\xde\xad\xbe\xef", 4) == 0);
    CHECK_EQ_U64(rec.u.module.bias, 0x1000);
    CHECK_EQ_U64(rec.u.module.start, 0x401000);
    CHECK_EQ_U64(rec.u.module.end, 0x500000);

    CHECK(next_is(r, &rec, VMP_REC_MODULE_SYMBOLS));
    CHECK_EQ_U64(rec.u.module_symbols.module, 1);
    CHECK_EQ_U64(rec.u.module_symbols.n_symbols, 2);
    if (rec.u.module_symbols.n_symbols == 2) {
        CHECK_EQ_U64(rec.u.module_symbols.symbols[0].value, 0x400100);
        CHECK_EQ_U64(rec.u.module_symbols.symbols[0].size, 0x40);
        CHECK_STR(rec.u.module_symbols.symbols[0].name.s, "interpret");
        CHECK_EQ_U64(rec.u.module_symbols.symbols[1].value, 0x400200);
        CHECK_EQ_U64(rec.u.module_symbols.symbols[1].size, 0);
        CHECK_STR(rec.u.module_symbols.symbols[1].name.s, "_ZN2gc7collectEv");
    }

    CHECK(next_is(r, &rec, VMP_REC_THREAD));
    CHECK_EQ_U64(rec.u.thread.id, 77);
    CHECK_STR(rec.u.thread.name.s, "main");
    CHECK_EQ_U64(rec.u.thread.time_ns, 5);
    CHECK_EQ_U64(rec.u.thread.end_time_ns, 900);

    CHECK(next_is(r, &rec, VMP_REC_FUNCTION));
    CHECK_EQ_U64(rec.u.function.id, 10);
    CHECK_STR(rec.u.function.name.s, "benchFib");
    CHECK_STR(rec.u.function.scope.s, "Integer");
    CHECK_STR(rec.u.function.signature.s, "(I)I");
    CHECK_STR(rec.u.function.file.s, "Integer.st");
    CHECK_EQ_U64(rec.u.function.first_line, 12);
    CHECK_EQ_U64(rec.u.function.bytecode_size, 23);
    CHECK_EQ_U64(rec.u.function.n_lines, 2);
    if (rec.u.function.n_lines == 2) {
        CHECK_EQ_U64(rec.u.function.lines[0], 0);
        CHECK_EQ_U64(rec.u.function.lines[1], 12);
        CHECK_EQ_U64(rec.u.function.lines[2], 7);
        CHECK_EQ_U64(rec.u.function.lines[3], 13);
    }

    CHECK(next_is(r, &rec, VMP_REC_CODE_ZONE));
    CHECK_EQ_U64(rec.u.code_zone.id, 1);
    CHECK_STR(rec.u.code_zone.name.s, "machine code zone");
    CHECK_EQ_U64(rec.u.code_zone.start, 0x10000);
    CHECK_EQ_U64(rec.u.code_zone.end, 0x20000);

    CHECK(next_is(r, &rec, VMP_REC_CODE_OBJECT));
    {
        const vmp_rec_code_object *o = &rec.u.code_object;
        CHECK_EQ_U64(o->id, 100);
        CHECK_EQ_U64(o->zone, 1);
        CHECK_EQ_U64(o->kind, 0);
        CHECK_STR(o->name.s, "Integer>>benchFib");
        CHECK_EQ_U64(o->function, 10);
        CHECK_EQ_U64(o->start, 0x10100);
        CHECK_EQ_U64(o->size, 0x80);
        CHECK_EQ_U64(o->generation, 0);
        CHECK_EQ_U64(o->tier, 1);
        CHECK_EQ_U64(o->time_ns, 321);
        /* spec §5.7: the deltas are undone */
        CHECK_EQ_U64(o->pc_map_len, 3);
        if (o->pc_map_len == 3) {
            CHECK_EQ_U64(o->pc_map[0], 4);
            CHECK_EQ_U64(o->pc_map[1], 1);
            CHECK_EQ_U64(o->pc_map[2], 12);
            CHECK_EQ_U64(o->pc_map[3], 5);
            CHECK_EQ_U64(o->pc_map[4], 12);
            CHECK_EQ_U64(o->pc_map[5], 9);
        }
        CHECK_EQ_U64(o->n_inlines, 2);
        if (o->n_inlines == 2) {
            CHECK_EQ_U64(o->inlines[0].mcpc_offset, 0x10);
            CHECK_EQ_U64(o->inlines[0].depth, 2);
            CHECK_EQ_U64(o->inlines[0].frames[0], 11);
            CHECK_EQ_U64(o->inlines[0].frames[1], 3);
            CHECK_EQ_U64(o->inlines[0].frames[2], 10);
            CHECK_EQ_U64(o->inlines[0].frames[3], 0xFFFFFFFFu);
            CHECK_EQ_U64(o->inlines[1].mcpc_offset, 0x40);
            CHECK_EQ_U64(o->inlines[1].depth, 0);
        }
    }

    CHECK(next_is(r, &rec, VMP_REC_CODE_SNAPSHOT));
    CHECK_EQ_U64(rec.u.code_snapshot.zone, 1);
    CHECK_EQ_U64(rec.u.code_snapshot.generation, 1);
    CHECK_EQ_U64(rec.u.code_snapshot.time_ns, 400);
    CHECK_EQ_U64(rec.u.code_snapshot.n, 1);
    if (rec.u.code_snapshot.n == 1) {
        CHECK_EQ_U64(rec.u.code_snapshot.entries[0], 100);
        CHECK_EQ_U64(rec.u.code_snapshot.entries[1], 0x10100);
    }

    CHECK(next_is(r, &rec, VMP_REC_CODE_COMPACTION));
    CHECK_EQ_U64(rec.u.code_compaction.zone, 1);
    CHECK_EQ_U64(rec.u.code_compaction.generation, 2);
    CHECK_EQ_U64(rec.u.code_compaction.time_ns, 500);
    CHECK_EQ_U64(rec.u.code_compaction.duration_ns, 50);
    CHECK_EQ_U64(rec.u.code_compaction.n_moves, 1);
    if (rec.u.code_compaction.n_moves == 1) {
        CHECK_EQ_U64(rec.u.code_compaction.moves[0], 100);
        CHECK_EQ_U64(rec.u.code_compaction.moves[1], 0x10000);
    }
    CHECK_EQ_U64(rec.u.code_compaction.n_frees, 3);
    if (rec.u.code_compaction.n_frees == 3)
        CHECK_EQ_U64(rec.u.code_compaction.frees[2], 103);

    CHECK(next_is(r, &rec, VMP_REC_CODE_FREE));
    CHECK_EQ_U64(rec.u.code_free.generation, 3);
    CHECK_EQ_U64(rec.u.code_free.id, 100);
    CHECK_EQ_U64(rec.u.code_free.time_ns, 600);

    CHECK(next_is(r, &rec, VMP_REC_CODE_MOVE));
    CHECK_EQ_U64(rec.u.code_move.generation, 4);
    CHECK_EQ_U64(rec.u.code_move.id, 104);
    CHECK_EQ_U64(rec.u.code_move.new_start, 0x10200);
    CHECK_EQ_U64(rec.u.code_move.time_ns, 700);

    CHECK(next_is(r, &rec, VMP_REC_STACK_NODE));
    CHECK_EQ_U64(rec.u.stack_node.id, 1);
    CHECK_EQ_U64(rec.u.stack_node.parent, 0);
    CHECK(rec.u.stack_node.is_function == 0);
    CHECK_EQ_U64(rec.u.stack_node.pc, 0x10104);
    CHECK(rec.u.stack_node.has_bcpc == 0);
    CHECK(next_is(r, &rec, VMP_REC_STACK_NODE));
    CHECK_EQ_U64(rec.u.stack_node.id, 2);
    CHECK_EQ_U64(rec.u.stack_node.parent, 1);
    CHECK(rec.u.stack_node.is_function == 1);
    CHECK_EQ_U64(rec.u.stack_node.function, 10);
    CHECK(rec.u.stack_node.has_bcpc == 1);
    CHECK_EQ_U64(rec.u.stack_node.bcpc, 7);

    CHECK(next_is(r, &rec, VMP_REC_SAMPLE));
    CHECK_EQ_U64(rec.u.sample.time_ns, 1000);
    CHECK_EQ_U64(rec.u.sample.thread, 77);
    CHECK_EQ_U64(rec.u.sample.state, 1);
    CHECK(rec.u.sample.has_pc == 1);
    CHECK_EQ_U64(rec.u.sample.pc, 0x10104);
    CHECK_EQ_U64(rec.u.sample.generation, 4);
    CHECK_EQ_U64(rec.u.sample.stack, 2);
    CHECK_EQ_U64(rec.u.sample.weight, 3);
    CHECK_EQ_U64(rec.u.sample.blame, 100);
    CHECK(next_is(r, &rec, VMP_REC_SAMPLE));
    /* defaults: delta 0, weight 1, no pc */
    CHECK_EQ_U64(rec.u.sample.time_ns, 1000);
    CHECK_EQ_U64(rec.u.sample.weight, 1);
    CHECK(rec.u.sample.has_pc == 0);
    CHECK_EQ_U64(rec.u.sample.thread, 0);

    CHECK(next_is(r, &rec, VMP_REC_FAILED_SAMPLE));
    CHECK_EQ_U64(rec.u.sample.time_ns, 600); /* spec R-SMP-1: 1000 - 400 */
    CHECK_EQ_U64(rec.u.sample.thread, 78);
    CHECK_EQ_U64(rec.u.sample.reason, 1);
    CHECK_EQ_U64(rec.u.sample.weight, 1);

    CHECK(next_is(r, &rec, VMP_REC_EVENT));
    CHECK_EQ_U64(rec.u.event.time_ns, 800);
    CHECK_EQ_U64(rec.u.event.kind, 0);
    CHECK_EQ_U64(rec.u.event.duration_ns, 20);
    CHECK_EQ_U64(rec.u.event.thread, 77);
    CHECK(rec.u.event.has_value == 1);
    CHECK(rec.u.event.value == -5);
    CHECK_STR(rec.u.event.text.s, "compacted 3 methods");

    CHECK(next_is(r, &rec, VMP_REC_COUNTER));
    CHECK_EQ_U64(rec.u.counter.time_ns, 850);
    CHECK_EQ_U64(rec.u.counter.kind, 0);
    CHECK(rec.u.counter.value == INT64_MIN);

    CHECK(next_is(r, &rec, VMP_REC_END));
    CHECK_EQ_U64(rec.u.end.time_ns, 1000);
    CHECK_EQ_U64(rec.u.end.samples, 3);
    CHECK_EQ_U64(rec.u.end.dropped_full, 4);
    CHECK_EQ_U64(rec.u.end.dropped_write, 5);
    CHECK_EQ_U64(rec.u.end.failed, 1);
    CHECK_EQ_U64(rec.u.end.chunks, 0);
    CHECK_EQ_U64(rec.u.end.truncated_stacks, 6);
    CHECK_EQ_U64(rec.u.end.generation, 4);

    CHECK(vmp_reader_next(r, &rec) == VMP_END);
    CHECK(vmp_reader_next(r, &rec) == VMP_END);
    vmp_reader_get_info(r, &info);
    CHECK_EQ_U64(info.format_major, 1);
    CHECK_EQ_U64(info.format_minor, 0);
    CHECK_EQ_U64(info.chunks, 1);
    CHECK_EQ_U64(info.records, 19);
    CHECK_EQ_U64(info.unknown_records, 0);
    CHECK_EQ_U64(info.bytes_consumed, f.len);
    CHECK(info.seen_end == 1);
    CHECK(info.seek_table == 0);
    CHECK_STR(vmp_reader_errmsg(r), "");
    vmp_reader_close(r);
    tb_free(&c);
    tb_free(&f);
}

static void test_absent_strings_and_arrays_are_empty_not_null(void)
{
    tbuf c = {0}, f = {0};
    vmp_reader *r;
    vmp_record rec;

    rec_start(&c, 1, VMP_REC_HEADER);
    rec_start(&c, 2, VMP_REC_FUNCTION);
    kv_uint(&c, VMP_FN_ID, 3);
    rec_start(&c, 5, VMP_REC_CODE_OBJECT);
    kv_uint(&c, VMP_CODE_ID, 1);
    kv_uint(&c, VMP_CODE_START, 1);
    kv_uint(&c, VMP_CODE_SIZE, 1);
    c_uint(&c, VMP_CODE_PC_MAP);
    c_array(&c, 0);
    rec_start(&c, 4, VMP_REC_CODE_COMPACTION);
    kv_uint(&c, VMP_COMP_ZONE, 1);
    kv_uint(&c, VMP_COMP_GENERATION, 1);
    c_uint(&c, VMP_COMP_FREES);
    c_array(&c, 0);
    rec_start(&c, 2, VMP_REC_MODULE);
    kv_uint(&c, VMP_MOD_ID, 1);
    f_header(&f, 1, 0);
    f_chunk(&f, &c);
    CHECK(vmp_reader_open_memory(&r, f.p, f.len, "x", NULL) == VMP_OK);
    CHECK(next_is(r, &rec, VMP_REC_HEADER));
    CHECK(rec.u.header.producer.s != NULL && rec.u.header.producer.len == 0);
    CHECK(rec.u.header.clock.s != NULL);
    CHECK_EQ_U64(rec.u.header.pointer_size, 8);
    CHECK_EQ_U64(rec.u.header.n_states, 0);
    /* arrays are never NULL either, so count-0 memcpy() is well defined */
    CHECK(rec.u.header.states != NULL && rec.u.header.labels != NULL);
    CHECK(rec.u.header.failure_reasons != NULL);
    CHECK(next_is(r, &rec, VMP_REC_FUNCTION));
    CHECK(rec.u.function.name.s != NULL && rec.u.function.name.s[0] == '\0');
    CHECK(rec.u.function.file.s != NULL);
    CHECK(rec.u.function.lines != NULL && rec.u.function.n_lines == 0);
    CHECK(next_is(r, &rec, VMP_REC_CODE_OBJECT));
    CHECK(rec.u.code_object.pc_map != NULL && rec.u.code_object.pc_map_len == 0);
    CHECK(rec.u.code_object.inlines != NULL && rec.u.code_object.n_inlines == 0);
    CHECK(next_is(r, &rec, VMP_REC_CODE_COMPACTION));
    CHECK(rec.u.code_compaction.moves != NULL && rec.u.code_compaction.frees != NULL);
    CHECK_EQ_U64(rec.u.code_compaction.n_frees, 0);
    CHECK(next_is(r, &rec, VMP_REC_MODULE));
    CHECK(rec.u.module.build_id != NULL && rec.u.module.build_id_size == 0);
    vmp_reader_close(r);
    tb_free(&c);
    tb_free(&f);
}

/* spec §7, R-REC-2: a 1.7 file with an unknown record type and unknown keys. */
static void test_future_minor_is_read_skipping_unknowns(void)
{
    tbuf c = {0}, c2 = {0}, f = {0};
    static const uint8_t blob[3] = {1, 2, 3};
    vmp_reader *r;
    vmp_record rec;
    vmp_reader_info info;

    rec_start(&c, 2, VMP_REC_HEADER);
    kv_str(&c, VMP_HDR_PRODUCER, "future");
    /* unknown type 99: nested arrays, maps, tags, bstr, floats, simple values */
    rec_start(&c, 5, 99);
    c_uint(&c, 1);
    c_array(&c, 3);
    c_array(&c, 2);
    c_uint(&c, 1);
    c_map(&c, 1);
    c_str(&c, "k");
    c_array(&c, 0);
    c_tag(&c, 1);
    c_uint(&c, 1700000000);
    c_bstr(&c, blob, sizeof blob);
    c_uint(&c, 2);
    c_map(&c, 2);
    c_uint(&c, 7);
    c_double(&c, 1.5);
    c_str(&c, "x");
    c_null(&c);
    c_str(&c, "a text key");
    c_bool(&c, 1);
    c_uint(&c, 3);
    c_tag(&c, 24);
    c_bstr(&c, blob, sizeof blob);
    /* SAMPLE with unknown keys 50 (a nested map) and 51 (a tagged array) */
    rec_start(&c, 6, VMP_REC_SAMPLE);
    kv_int(&c, VMP_SMP_TIME_DELTA, 10);
    c_uint(&c, 50);
    c_map(&c, 1);
    c_uint(&c, 1);
    c_array(&c, 2);
    c_str(&c, "deep");
    c_negint(&c, 4);
    kv_uint(&c, VMP_SMP_PC, 0x1234);
    c_uint(&c, 51);
    c_tag(&c, 55799);
    c_array(&c, 1);
    c_double(&c, -0.0);
    kv_uint(&c, VMP_SMP_THREAD, 9);
    f_header(&f, 1, 7);
    f_chunk(&f, &c);
    /* an unknown skippable frame between chunks (R-CHK-4) */
    f_skippable(&f, 0x184D2A5Au, "ignored", 7);
    rec_start(&c2, 2, VMP_REC_SAMPLE);
    kv_int(&c2, VMP_SMP_TIME_DELTA, 25);
    f_chunk(&f, &c2);

    CHECK(vmp_reader_open_memory(&r, f.p, f.len, "future.vmp", NULL) == VMP_OK);
    CHECK(next_is(r, &rec, VMP_REC_HEADER));
    CHECK_STR(rec.u.header.producer.s, "future");
    CHECK(next_is(r, &rec, VMP_REC_UNKNOWN));
    CHECK_EQ_U64(rec.raw_type, 99);
    CHECK(next_is(r, &rec, VMP_REC_SAMPLE));
    CHECK_EQ_U64(rec.u.sample.time_ns, 10);
    CHECK_EQ_U64(rec.u.sample.pc, 0x1234);
    CHECK(rec.u.sample.has_pc);
    CHECK_EQ_U64(rec.u.sample.thread, 9);
    CHECK_EQ_U64(rec.unknown_keys, 2);
    /* spec R-SMP-1: times restart in every chunk */
    CHECK(next_is(r, &rec, VMP_REC_SAMPLE));
    CHECK_EQ_U64(rec.chunk_index, 1);
    CHECK_EQ_U64(rec.u.sample.time_ns, 25);
    CHECK(vmp_reader_next(r, &rec) == VMP_END);
    vmp_reader_get_info(r, &info);
    CHECK_EQ_U64(info.format_minor, 7);
    CHECK_EQ_U64(info.records, 4);
    CHECK_EQ_U64(info.unknown_records, 1);
    CHECK_EQ_U64(info.chunks, 2);
    CHECK(info.seen_end == 0);
    vmp_reader_close(r);
    tb_free(&c);
    tb_free(&c2);
    tb_free(&f);
}

/* Expect the first record of a one-chunk file made of `content` to fail. */
static void expect_record_error(const tbuf *content, vmp_status want, const char *needle)
{
    tbuf f = {0};
    vmp_reader *r;
    vmp_record rec;
    vmp_status st;
    uint64_t n;

    f_header(&f, 1, 0);
    f_chunk(&f, content);
    CHECK(vmp_reader_open_memory(&r, f.p, f.len, "bad.vmp", NULL) == VMP_OK);
    st = read_all(r, &n);
    CHECK_EQ_U64((uint64_t)(int64_t)st, (uint64_t)(int64_t)want);
    CHECK(strstr(vmp_reader_errmsg(r), needle) != NULL);
    if (strstr(vmp_reader_errmsg(r), needle) == NULL)
        fprintf(stderr, "  message: %s (wanted \"%s\")\n", vmp_reader_errmsg(r), needle);
    {
        static const char prefix[] = "bad.vmp: offset 24: chunk 0, record at content offset ";
        CHECK(strncmp(vmp_reader_errmsg(r), prefix, sizeof prefix - 1) == 0);
    }
    CHECK_EQ_U64(vmp_reader_offset(r), 24);
    /* first error wins, and sticks */
    CHECK(vmp_reader_next(r, &rec) == st);
    vmp_reader_close(r);
    tb_free(&f);
}

static void test_wrong_value_types_are_corrupt(void)
{
    tbuf c = {0};

    /* spec R-REC-4: tstr where a uint is specified */
    rec_start(&c, 2, VMP_REC_SAMPLE);
    kv_str(&c, VMP_SMP_PC, "0x1234");
    expect_record_error(&c, VMP_ERR_CORRUPT, "key 4: expected uint, found tstr");
    tb_free(&c);

    /* spec R-REC-3: a float where an int is expected */
    rec_start(&c, 2, VMP_REC_SAMPLE);
    c_uint(&c, VMP_SMP_TIME_DELTA);
    c_double(&c, 12.0);
    expect_record_error(&c, VMP_ERR_CORRUPT, "expected int, found float");
    tb_free(&c);

    /* a uint where an array is expected */
    rec_start(&c, 2, VMP_REC_HEADER);
    kv_uint(&c, VMP_HDR_STATES, 3);
    expect_record_error(&c, VMP_ERR_CORRUPT, "expected array, found uint");
    tb_free(&c);

    /* pc map with an odd item count */
    rec_start(&c, 5, VMP_REC_CODE_OBJECT);
    kv_uint(&c, VMP_CODE_ID, 1);
    kv_uint(&c, VMP_CODE_START, 1);
    kv_uint(&c, VMP_CODE_SIZE, 1);
    c_uint(&c, VMP_CODE_PC_MAP);
    c_array(&c, 3);
    c_uint(&c, 1);
    c_uint(&c, 2);
    c_uint(&c, 3);
    expect_record_error(&c, VMP_ERR_CORRUPT, "not a list of 2-tuples");
    tb_free(&c);

    /* event value beyond int64 */
    rec_start(&c, 2, VMP_REC_EVENT);
    kv_uint(&c, VMP_EVT_VALUE, UINT64_MAX);
    expect_record_error(&c, VMP_ERR_CORRUPT, "out of range");
    tb_free(&c);
}

static void test_record_structure_errors_are_corrupt(void)
{
    tbuf c = {0};
    uint8_t indef[2] = {0xbf, 0xff};

    /* spec R-REC-1: not a map */
    c_array(&c, 2);
    c_uint(&c, 0);
    c_uint(&c, 1);
    expect_record_error(&c, VMP_ERR_CORRUPT, "not a map");
    tb_free(&c);

    /* first key not 0 */
    c_map(&c, 2);
    kv_uint(&c, 1, 5);
    kv_uint(&c, 0, 14);
    expect_record_error(&c, VMP_ERR_CORRUPT, "first key");
    tb_free(&c);

    /* type not a uint */
    c_map(&c, 1);
    c_uint(&c, 0);
    c_str(&c, "sample");
    expect_record_error(&c, VMP_ERR_CORRUPT, "record type");
    tb_free(&c);

    /* duplicate key */
    rec_start(&c, 3, VMP_REC_THREAD);
    kv_uint(&c, VMP_THR_ID, 1);
    kv_uint(&c, VMP_THR_ID, 2);
    expect_record_error(&c, VMP_ERR_CORRUPT, "duplicate key 1");
    tb_free(&c);

    /* missing required key */
    rec_start(&c, 2, VMP_REC_CODE_OBJECT);
    kv_uint(&c, VMP_CODE_ID, 1);
    expect_record_error(&c, VMP_ERR_CORRUPT, "missing required key 6");
    tb_free(&c);

    /* spec R-STK-1 */
    rec_start(&c, 2, VMP_REC_STACK_NODE);
    kv_uint(&c, VMP_NODE_ID, 1);
    expect_record_error(&c, VMP_ERR_CORRUPT, "neither");
    tb_free(&c);

    /* spec R-SMP-1: negative time */
    rec_start(&c, 2, VMP_REC_SAMPLE);
    kv_int(&c, VMP_SMP_TIME_DELTA, -1);
    expect_record_error(&c, VMP_ERR_CORRUPT, "negative");
    tb_free(&c);

    /* indefinite-length map as a record */
    tb_put(&c, indef, sizeof indef);
    expect_record_error(&c, VMP_ERR_CORRUPT, "indefinite");
    tb_free(&c);

    /* spec R-CHK-2: the chunk ends inside a record */
    rec_start(&c, 3, VMP_REC_THREAD);
    kv_uint(&c, VMP_THR_ID, 1);
    expect_record_error(&c, VMP_ERR_CORRUPT, "cannot fit in the 4 bytes left in the chunk");
    tb_free(&c);
    rec_start(&c, 2, VMP_REC_THREAD);
    c_uint(&c, VMP_THR_ID);
    tb_put(&c, "\x1b\x00\x00", 3); /* uint64 head with 2 of its 8 bytes */
    expect_record_error(&c, VMP_ERR_CORRUPT, "item runs past the end of the chunk");
    tb_free(&c);

    /* a string that runs past the chunk */
    rec_start(&c, 2, VMP_REC_THREAD);
    c_uint(&c, VMP_THR_NAME);
    tb_put(&c,
           "\x7a\x00\x10\x00\x00"
           "abc",
           8); /* tstr of 1 MiB, 3 bytes present */
    expect_record_error(&c, VMP_ERR_CORRUPT, "past the end of the chunk");
    tb_free(&c);
}

static void test_limits(void)
{
    tbuf c = {0}, f = {0};
    vmp_reader *r;
    vmp_reader_options opts = VMP_READER_OPTIONS_INIT;
    uint64_t n;
    size_t i;

    /* spec R-LIM-1: an array claiming 2^40 items in a tiny chunk */
    rec_start(&c, 3, VMP_REC_CODE_COMPACTION);
    kv_uint(&c, VMP_COMP_ZONE, 1);
    c_uint(&c, VMP_COMP_FREES);
    c_array(&c, (size_t)1 << 40);
    c_uint(&c, 5);
    expect_record_error(&c, VMP_ERR_LIMIT, "exceeds the items limit");
    tb_free(&c);

    /* within the items limit but not within the bytes left: corrupt, quickly */
    rec_start(&c, 3, VMP_REC_CODE_COMPACTION);
    kv_uint(&c, VMP_COMP_ZONE, 1);
    c_uint(&c, VMP_COMP_FREES);
    c_array(&c, 1000000);
    c_uint(&c, 5);
    expect_record_error(&c, VMP_ERR_CORRUPT, "cannot fit");
    tb_free(&c);

    /* nesting 1000 deep in an unknown key */
    rec_start(&c, 2, VMP_REC_SAMPLE);
    c_uint(&c, 60);
    for (i = 0; i < 1000; i++)
        c_array(&c, 1);
    c_uint(&c, 1);
    expect_record_error(&c, VMP_ERR_LIMIT, "nesting");
    tb_free(&c);

    /* a record larger than max_record_bytes, inside a larger chunk */
    rec_start(&c, 2, VMP_REC_THREAD);
    kv_uint(&c, VMP_THR_ID, 1);
    rec_start(&c, 3, VMP_REC_THREAD);
    kv_uint(&c, VMP_THR_ID, 2);
    c_uint(&c, VMP_THR_NAME);
    {
        char name[300];
        memset(name, 'a', sizeof name - 1);
        name[sizeof name - 1] = '\0';
        c_str(&c, name);
    }
    rec_start(&c, 2, VMP_REC_THREAD);
    kv_uint(&c, VMP_THR_ID, 3);
    f_header(&f, 1, 0);
    f_chunk(&f, &c);
    opts.max_record_bytes = 100;
    CHECK(vmp_reader_open_memory(&r, f.p, f.len, "big.vmp", &opts) == VMP_OK);
    CHECK(read_all(r, &n) == VMP_ERR_LIMIT);
    CHECK_EQ_U64(n, 1);
    CHECK(strstr(vmp_reader_errmsg(r), "record size limit") != NULL);
    vmp_reader_close(r);

    /* the same file passes with defaults; with a small items limit it fails */
    CHECK(vmp_reader_open_memory(&r, f.p, f.len, "big.vmp", NULL) == VMP_OK);
    CHECK(read_all(r, &n) == VMP_END);
    CHECK_EQ_U64(n, 3);
    vmp_reader_close(r);
    opts = (vmp_reader_options)VMP_READER_OPTIONS_INIT;
    opts.max_array_items = 100;
    CHECK(vmp_reader_open_memory(&r, f.p, f.len, "big.vmp", &opts) == VMP_OK);
    CHECK(read_all(r, &n) == VMP_ERR_LIMIT);
    CHECK(strstr(vmp_reader_errmsg(r), "string of 299 bytes") != NULL);
    vmp_reader_close(r);
    /* a nesting limit of 1 forbids arrays even in known keys */
    tb_free(&c);
    tb_free(&f);
    rec_start(&c, 2, VMP_REC_HEADER);
    c_uint(&c, VMP_HDR_STATES);
    c_array(&c, 0);
    f_header(&f, 1, 0);
    f_chunk(&f, &c);
    opts = (vmp_reader_options)VMP_READER_OPTIONS_INIT;
    opts.max_nesting = 1;
    CHECK(vmp_reader_open_memory(&r, f.p, f.len, "n.vmp", &opts) == VMP_OK);
    CHECK(read_all(r, &n) == VMP_ERR_LIMIT);
    vmp_reader_close(r);
    tb_free(&c);
    tb_free(&f);
}

/* spec R-REC-3: readers accept non-shortest encodings; text keys are unknown keys */
static void test_non_shortest_encodings_and_text_keys(void)
{
    tbuf c = {0}, f = {0};
    vmp_reader *r;
    vmp_record rec;

    tb_put(&c, "\xb8\x04", 2);                             /* map of 4 pairs, 1-byte length */
    tb_put(&c, "\x18\x00\x19\x00\x05", 5);                 /* 0: 5 (THREAD) */
    tb_put(&c, "\x1b\x00\x00\x00\x00\x00\x00\x00\x01", 9); /* key 1, 8-byte form */
    tb_put(&c, "\x1a\x00\x00\x01\x00", 5);                 /* id 256, 4-byte form */
    c_str(&c, "name");                                     /* a text key: unknown */
    c_str(&c, "ignored");
    c_uint(&c, VMP_THR_NAME);
    tb_put(&c, "\x78\x02hi", 4); /* tstr with a 1-byte length */
    f_header(&f, 1, 0);
    f_chunk(&f, &c);
    CHECK(vmp_reader_open_memory(&r, f.p, f.len, "ns.vmp", NULL) == VMP_OK);
    CHECK(next_is(r, &rec, VMP_REC_THREAD));
    CHECK_EQ_U64(rec.u.thread.id, 256);
    CHECK_STR(rec.u.thread.name.s, "hi");
    CHECK_EQ_U64(rec.unknown_keys, 1);
    CHECK(vmp_reader_next(r, &rec) == VMP_END);
    vmp_reader_close(r);
    tb_free(&c);
    tb_free(&f);
}

int main(void)
{
    VMP_TEST_RUN(test_every_record_type_decodes_field_for_field);
    VMP_TEST_RUN(test_absent_strings_and_arrays_are_empty_not_null);
    VMP_TEST_RUN(test_future_minor_is_read_skipping_unknowns);
    VMP_TEST_RUN(test_wrong_value_types_are_corrupt);
    VMP_TEST_RUN(test_record_structure_errors_are_corrupt);
    VMP_TEST_RUN(test_limits);
    VMP_TEST_RUN(test_non_shortest_encodings_and_text_keys);
    VMP_TEST_EXIT();
}
