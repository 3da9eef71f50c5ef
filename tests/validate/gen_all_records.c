/* SPDX-License-Identifier: MIT
 *
 * gen_all_records.c - write a profile holding every record type through the
 * writer's public API only (spec.md §5), for the validator and CLI tests.
 *
 * usage: vmp-test-allrecords OUT.vmp
 */
#include <stdio.h>
#include <string.h>

#include "vmp_writer.h"

static uint64_t fake_now;

/* A deterministic clock: the output depends only on the calls made. */
static uint64_t fake_clock(void *ud)
{
    (void)ud;
    return fake_now += 1000;
}

#define TRY(call)                                                                               \
    do {                                                                                        \
        vmp_status st_ = (call);                                                                \
        if (st_ != VMP_OK) {                                                                    \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, vmp_status_str(st_)); \
            return 1;                                                                           \
        }                                                                                       \
    } while (0)

int main(int argc, char **argv)
{
    static const char *const states[] = {"running", "gc"};
    static const char *const kinds[] = {"method", "block", "stub"};
    static const char *const tiers[] = {"baseline", "optimized"};
    static const char *const events[] = {"gc"};
    static const char *const counters[] = {"heap bytes"};
    static const char *const reasons[] = {"no frame pointer"};
    static const char *const labels[] = {"benchmark", "fib \"30\"", "host", "test"};
    static const vmp_symbol_desc syms[] = {{0x100, 0x40, "vm_interpret"}, {0x140, 0x20, "vm_send"}};
    static const uint32_t lines[] = {0, 10, 4, 11, 9, 12};
    static const vmp_pc_pair pcs[] = {{0, 0}, {0x10, 4}, {0x20, 9}};
    vmp_frame inl_frames[] = {{2, 3, VMP_FRAME_FUNCTION}, {1, 4, VMP_FRAME_FUNCTION}};
    vmp_inline_record inl = {0x10, inl_frames, 2};
    vmp_writer_meta meta;
    vmp_writer_options opts = VMP_WRITER_OPTIONS_INIT;
    vmp_writer *w;
    vmp_writer_totals totals;
    vmp_function fn;
    vmp_code_object co;
    vmp_sample s;
    vmp_frame frames[3];
    uint64_t zone, gen, moves[2], frees[1], snap[4];
    unsigned i;

    if (argc != 2) {
        fprintf(stderr, "usage: vmp-test-allrecords OUT.vmp\n");
        return 2;
    }
    memset(&meta, 0, sizeof meta);
    meta.vm_name = "testvm";
    meta.vm_version = "0.0";
    meta.pid = 4242;
    meta.sample_interval_ns = 1000000;
    meta.states = states;
    meta.n_states = 2;
    meta.code_kinds = kinds;
    meta.n_code_kinds = 3;
    meta.tiers = tiers;
    meta.n_tiers = 2;
    meta.event_kinds = events;
    meta.n_event_kinds = 1;
    meta.counter_kinds = counters;
    meta.n_counter_kinds = 1;
    meta.failure_reasons = reasons;
    meta.n_failure_reasons = 1;
    meta.labels = labels;
    meta.n_labels = 2;
    opts.clock = fake_clock;
    opts.clock_name = "fake";
    opts.chunk_age_ms = VMP_WRITER_NO_AGE_LIMIT;
    opts.chunk_bytes = 512; /* several chunks */
    TRY(vmp_writer_open(&w, argv[1], &meta, &opts));

    TRY(vmp_writer_add_module_symbols(w, NULL, "/opt/testvm/bin/vm", "\x01\x02\x03", 3, 0x400000,
                                      0x400000, 0x480000, syms, 2));
    TRY(vmp_writer_thread(w, 1, "main", 0));
    TRY(vmp_writer_thread(w, 2, "worker \xe2\x9c\x93", 0));
    memset(&fn, 0, sizeof fn);
    fn.id = 1;
    fn.name = "fib:";
    fn.scope = "Integer";
    fn.signature = "(I)I";
    fn.file = "Integer.st";
    fn.first_line = 10;
    fn.bytecode_size = 12;
    fn.lines = lines;
    fn.n_lines = 3;
    TRY(vmp_writer_function(w, &fn));
    fn.id = 2;
    fn.name = "+";
    fn.lines = NULL;
    fn.n_lines = 0;
    TRY(vmp_writer_function(w, &fn));
    TRY(vmp_writer_code_zone(w, &zone, "machine code zone", 0x10000, 0x90000));

    memset(&co, 0, sizeof co);
    co.zone = zone;
    co.function = 1;
    co.size = 0x100;
    co.pc_map = pcs;
    co.pc_map_len = 3;
    co.inlines = &inl;
    co.n_inlines = 1;
    for (i = 1; i <= 4; i++) {
        co.id = i;
        co.kind = i % 3;
        co.tier = i % 3;
        co.name = "Integer>>fib:";
        co.start = 0x10000 + 0x1000 * i;
        TRY(vmp_writer_code_add(w, &co));
    }

    memset(&s, 0, sizeof s);
    s.generation = VMP_GENERATION_CURRENT;
    s.frames = frames;
    for (i = 0; i < 40; i++) {
        s.thread = 1 + i % 2;
        s.state = i % 5 == 0;
        s.pc = 0x11010 + 0x1000 * (i % 4);
        s.blame = i % 3 == 0 ? 1 : 0;
        frames[0].kind = VMP_FRAME_PC;
        frames[0].value = s.pc;
        frames[1].kind = VMP_FRAME_FUNCTION;
        frames[1].value = 2;
        frames[1].bcpc = i % 7;
        frames[2].kind = VMP_FRAME_PC;
        frames[2].value = 0x400110;
        s.depth = 3;
        TRY(vmp_writer_sample(w, &s));
        if (i == 10) {
            TRY(vmp_writer_code_move(w, 4, 0x20000, &gen));
            TRY(vmp_writer_flush(w));
        } else if (i == 20) {
            moves[0] = 2;
            moves[1] = 0x30000;
            frees[0] = 3;
            TRY(vmp_writer_code_compaction(w, zone, moves, 1, frees, 1, 0, 5000, &gen));
            TRY(vmp_writer_event(w, 0, 0, 5000, 1, 17, "compaction"));
        } else if (i == 30) {
            snap[0] = 1;
            snap[1] = 0x11000;
            snap[2] = 2;
            snap[3] = 0x30000;
            TRY(vmp_writer_code_snapshot(w, zone, snap, 2, &gen));
            co.id = 5;
            co.start = 0x40000;
            TRY(vmp_writer_code_add(w, &co));
            TRY(vmp_writer_code_free(w, 5, &gen));
            TRY(vmp_writer_counter(w, 0, -12345));
        }
    }
    s.frames = NULL;
    s.depth = 0;
    TRY(vmp_writer_failed_sample(w, &s, 0));
    TRY(vmp_writer_thread(w, 2, "worker \xe2\x9c\x93", 1));
    TRY(vmp_writer_close(w, &totals));
    printf("%s: %llu samples, %llu chunks\n", argv[1], (unsigned long long)totals.samples_written,
           (unsigned long long)totals.chunks);
    return 0;
}
