/* SPDX-License-Identifier: MIT
 *
 * make_spec_example.c - write the worked example of spec.md Appendix B: a
 * tiny profile made by the real writer with a fixed clock, so that the bytes
 * are reproducible.  Usage: make_spec_example OUT.vmp
 */
#include <stdio.h>

#include "vmp_writer.h"

static uint64_t fixed_clock(void *ud)
{
    uint64_t *now = ud;
    return *now;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make_spec_example OUT.vmp\n");
        return 2;
    }
    uint64_t now = 1000;
    const char *states[] = {"interpreter", "jit"};
    const char *kinds[] = {"method"};
    vmp_writer_meta meta = {0};
    meta.vm_name = "ExampleVM";
    meta.sample_interval_ns = 1000000;
    meta.pid = 42;
    meta.states = states;
    meta.n_states = 2;
    meta.code_kinds = kinds;
    meta.n_code_kinds = 1;
    vmp_writer_options opts = VMP_WRITER_OPTIONS_INIT;
    opts.clock = fixed_clock;
    opts.clock_ud = &now;
    opts.clock_name = "example";
    opts.chunk_age_ms = VMP_WRITER_NO_AGE_LIMIT;
    opts.no_seek_table = 1;
    opts.ring_slots = 16;
    opts.max_depth = 4;

    vmp_writer *w;
    if (vmp_writer_open(&w, argv[1], &meta, &opts) != VMP_OK)
        return 1;
    uint64_t zone;
    vmp_writer_code_zone(w, &zone, "zone", 0x10000, 0x20000);
    uint32_t lines[] = {0, 10, 4, 11};
    vmp_function fn = {0};
    fn.id = 7;
    fn.name = "fib";
    fn.scope = "Integer";
    fn.bytecode_size = 8;
    fn.lines = lines;
    fn.n_lines = 2;
    vmp_writer_function(w, &fn);
    vmp_pc_pair map[] = {{0, 0}, {16, 4}};
    vmp_code_object code = {0};
    code.id = 1;
    code.zone = zone;
    code.name = "Integer>>fib";
    code.function = 7;
    code.start = 0x10000;
    code.size = 32;
    code.pc_map = map;
    code.pc_map_len = 2;
    vmp_writer_code_add(w, &code);
    vmp_writer_thread(w, 1, "main", 0);

    vmp_frame frames[2] = {{0x10014, VMP_BCPC_NONE, VMP_FRAME_PC},
                           {0x401234, VMP_BCPC_NONE, VMP_FRAME_PC}};
    vmp_sample s = {0};
    s.thread = 1;
    s.pc = 0x10014;
    s.generation = VMP_GENERATION_CURRENT;
    s.state = 1;
    s.frames = frames;
    s.depth = 2;
    now = 2000000;
    vmp_writer_sample(w, &s);
    now = 3000000;
    vmp_writer_sample(w, &s);
    vmp_writer_code_free(w, 1, NULL);
    now = 3500000;
    vmp_writer_totals totals;
    return vmp_writer_close(w, &totals) == VMP_OK ? 0 : 1;
}
