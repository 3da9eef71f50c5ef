/* SPDX-License-Identifier: MIT
 *
 * test_validate.c - the validator (reader/vmp_validate.h) accepts valid files
 * and rejects each invalid one with the rule it breaks (spec.md §3 to §5).
 *
 * usage: test_validate [DIR]
 * With DIR, also writes every case there as <case>.vmp (valid-*.vmp and
 * r-<rule>-<what>.vmp), for the command-line tests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_reader.h"
#include "vmp_test.h"
#include "vmp_test_files.h"
#include "vmp_validate.h"

/* ---- Valid files ---------------------------------------------------------- */

/* One record of every type, code that moves, is compacted, snapshotted and
 * freed, a record of unknown type, three chunks. */
static void build_valid_every_record_type(tf_file *f)
{
    tf_begin(f);
    tf_header(f);
    tf_rec(f, VMP_REC_MODULE, 4);
    tf_ku(f, VMP_MOD_ID, 1);
    tf_uint(f, VMP_MOD_PATH);
    tf_tstr(f, "/bin/vm");
    tf_ku(f, VMP_MOD_START, 0x400000);
    tf_ku(f, VMP_MOD_END, 0x500000);
    tf_rec(f, VMP_REC_MODULE_SYMBOLS, 2);
    tf_ku(f, VMP_SYMS_MODULE, 1);
    tf_uint(f, VMP_SYMS_LIST);
    tf_array(f, 3);
    tf_uint(f, 0x400100);
    tf_uint(f, 16);
    tf_tstr(f, "interpret");
    tf_thread(f, 1, "main");
    tf_rec(f, VMP_REC_FUNCTION, 3);
    tf_ku(f, VMP_FN_ID, 1);
    tf_uint(f, VMP_FN_NAME);
    tf_tstr(f, "fib");
    tf_uint(f, VMP_FN_LINES);
    tf_array(f, 4);
    tf_uint(f, 0);
    tf_uint(f, 10);
    tf_uint(f, 4);
    tf_uint(f, 11);
    tf_zone(f, 1, 0x1000, 0x9000);
    tf_rec(f, VMP_REC_CODE_OBJECT, 7);
    tf_ku(f, VMP_CODE_ID, 1);
    tf_ku(f, VMP_CODE_ZONE, 1);
    tf_ku(f, VMP_CODE_START, 0x1000);
    tf_ku(f, VMP_CODE_SIZE, 0x100);
    tf_ku(f, VMP_CODE_FUNCTION, 1);
    tf_uint(f, VMP_CODE_PC_MAP);
    tf_array(f, 4);
    tf_uint(f, 0);
    tf_uint(f, 0);
    tf_uint(f, 0x10);
    tf_uint(f, 4);
    tf_uint(f, VMP_CODE_INLINE);
    tf_array(f, 1);
    tf_array(f, 3);
    tf_uint(f, 0x10);
    tf_uint(f, 1);
    tf_uint(f, 4);
    tf_node_pc(f, 1, 0, 0x400108);
    tf_node_fn(f, 2, 1, 1, 4);
    tf_rec(f, VMP_REC_SAMPLE, 5);
    tf_ku(f, VMP_SMP_TIME_DELTA, 1000);
    tf_ku(f, VMP_SMP_THREAD, 1);
    tf_ku(f, VMP_SMP_PC, 0x1010);
    tf_ku(f, VMP_SMP_STACK, 2);
    tf_ku(f, VMP_SMP_BLAME, 1);
    tf_chunk_end(f);

    tf_move(f, 1, 1, 0x2000);
    tf_code(f, 2, 1, 0x1000, 0x100, 1);
    tf_rec(f, VMP_REC_CODE_COMPACTION, 4);
    tf_ku(f, VMP_COMP_ZONE, 1);
    tf_ku(f, VMP_COMP_GENERATION, 2);
    tf_uint(f, VMP_COMP_MOVES);
    tf_array(f, 2);
    tf_uint(f, 2);
    tf_uint(f, 0x3000);
    tf_uint(f, VMP_COMP_FREES);
    tf_array(f, 1);
    tf_uint(f, 1);
    tf_code(f, 3, 1, 0x1000, 0x80, 2);
    tf_rec(f, VMP_REC_CODE_SNAPSHOT, 3);
    tf_ku(f, VMP_SNAP_ZONE, 1);
    tf_ku(f, VMP_SNAP_GENERATION, 3);
    tf_uint(f, VMP_SNAP_ENTRIES);
    tf_array(f, 4);
    tf_uint(f, 2);
    tf_uint(f, 0x3000);
    tf_uint(f, 3);
    tf_uint(f, 0x1000);
    tf_code(f, 4, 1, 0x4000, 0x10, 3);
    tf_free_code(f, 4, 4);
    tf_sample(f, 2000, 1, 4, 1);
    tf_rec(f, VMP_REC_FAILED_SAMPLE, 3);
    tf_ku(f, VMP_SMP_TIME_DELTA, 10);
    tf_ku(f, VMP_SMP_THREAD, 2);
    tf_ku(f, VMP_SMP_REASON, 0);
    tf_rec(f, VMP_REC_EVENT, 3);
    tf_ku(f, VMP_EVT_TIME, 3000);
    tf_uint(f, VMP_EVT_TEXT);
    tf_tstr(f, "gc \"full\"\n");
    tf_uint(f, VMP_EVT_VALUE);
    tf_int(f, -7);
    tf_rec(f, VMP_REC_COUNTER, 2);
    tf_ku(f, VMP_CTR_TIME, 3100);
    tf_uint(f, VMP_CTR_VALUE);
    tf_int(f, -3);
    tf_rec(f, 99, 1); /* a record type from the future (R-REC-2) */
    tf_uint(f, 1);
    tf_array(f, 2);
    tf_uint(f, 1);
    tf_map(f, 1);
    tf_tstr(f, "a");
    tf_tstr(f, "b");
    tf_chunk_end(f);

    tf_end(f, 3, 1, 2, 4);
    tf_chunk_end(f);
}

/* ---- Invalid files, each named after the first rule it breaks -------------- */

static void begin(tf_file *f)
{
    tf_begin(f);
    tf_header(f);
}

static void finish(tf_file *f, uint64_t samples, uint64_t generation)
{
    tf_end(f, samples, 0, 0, generation);
    tf_chunk_end(f);
}

static void build_hdr5_not_first(tf_file *f)
{
    tf_begin(f);
    tf_thread(f, 1, "main");
    tf_header(f);
    finish(f, 0, 0);
}

static void build_hdr5_second_header(tf_file *f)
{
    begin(f);
    tf_header(f);
    finish(f, 0, 0);
}

static void build_id1_undefined_stack_node(tf_file *f)
{
    begin(f);
    tf_node_pc(f, 1, 0, 0x1000);
    tf_sample(f, 10, 1, 0, 7);
    finish(f, 1, 0);
}

static void build_id1_parent_after_child(tf_file *f)
{
    begin(f);
    tf_node_pc(f, 2, 3, 0x1000);
    tf_node_pc(f, 3, 0, 0x2000);
    finish(f, 0, 0);
}

static void build_id1_duplicate_stack_node(tf_file *f)
{
    begin(f);
    tf_node_pc(f, 1, 0, 0x1000);
    tf_node_pc(f, 1, 0, 0x2000);
    finish(f, 0, 0);
}

static void build_id1_duplicate_code_id(tf_file *f)
{
    begin(f);
    tf_zone(f, 1, 0x1000, 0x9000);
    tf_code(f, 5, 1, 0x1000, 0x100, 0);
    tf_code(f, 5, 1, 0x2000, 0x100, 0);
    finish(f, 0, 0);
}

static void build_id1_undefined_zone(tf_file *f)
{
    begin(f);
    tf_code(f, 1, 3, 0x1000, 0x100, 0);
    finish(f, 0, 0);
}

static void build_id1_duplicate_zone(tf_file *f)
{
    begin(f);
    tf_zone(f, 1, 0x1000, 0x9000);
    tf_zone(f, 1, 0x9000, 0xa000);
    finish(f, 0, 0);
}

static void build_id1_undefined_module(tf_file *f)
{
    begin(f);
    tf_rec(f, VMP_REC_MODULE_SYMBOLS, 1);
    tf_ku(f, VMP_SYMS_MODULE, 4);
    finish(f, 0, 0);
}

static void build_gen1_decreasing_generation(tf_file *f)
{
    begin(f);
    tf_zone(f, 1, 0x1000, 0x9000);
    tf_code(f, 1, 1, 0x1000, 0x100, 0);
    tf_code(f, 2, 1, 0x2000, 0x100, 0);
    tf_free_code(f, 2, 1);
    tf_free_code(f, 1, 2);
    finish(f, 0, 2);
}

static void build_gen1_repeated_generation(tf_file *f)
{
    begin(f);
    tf_zone(f, 1, 0x1000, 0x9000);
    tf_code(f, 1, 1, 0x1000, 0x100, 0);
    tf_move(f, 1, 1, 0x3000);
    tf_move(f, 1, 1, 0x4000);
    finish(f, 0, 1);
}

static void build_gen2_code_from_the_future(tf_file *f)
{
    begin(f);
    tf_zone(f, 1, 0x1000, 0x9000);
    tf_code(f, 1, 1, 0x1000, 0x100, 5);
    finish(f, 0, 0);
}

static void build_gen4_overlapping_code_objects(tf_file *f)
{
    begin(f);
    tf_zone(f, 1, 0x1000, 0x9000);
    tf_code(f, 1, 1, 0x1000, 0x100, 0);
    tf_code(f, 2, 1, 0x10f0, 0x100, 0);
    finish(f, 0, 0);
}

static void build_gen4_overlap_after_move(tf_file *f)
{
    begin(f);
    tf_zone(f, 1, 0x1000, 0x9000);
    tf_code(f, 1, 1, 0x1000, 0x100, 0);
    tf_code(f, 2, 1, 0x2000, 0x100, 0);
    tf_move(f, 1, 2, 0x1080);
    finish(f, 0, 1);
}

static void build_gen4_overlap_after_compaction(tf_file *f)
{
    begin(f);
    tf_zone(f, 1, 0x1000, 0x9000);
    tf_code(f, 1, 1, 0x1000, 0x100, 0);
    tf_code(f, 2, 1, 0x2000, 0x100, 0);
    tf_code(f, 3, 1, 0x3000, 0x100, 0);
    tf_rec(f, VMP_REC_CODE_COMPACTION, 4);
    tf_ku(f, VMP_COMP_ZONE, 1);
    tf_ku(f, VMP_COMP_GENERATION, 1);
    tf_uint(f, VMP_COMP_MOVES);
    tf_array(f, 4); /* 2 and 3 both slide down to 0x1100 */
    tf_uint(f, 2);
    tf_uint(f, 0x1100);
    tf_uint(f, 3);
    tf_uint(f, 0x1100);
    tf_uint(f, VMP_COMP_FREES);
    tf_array(f, 0);
    finish(f, 0, 1);
}

/* 100 code objects of 0x80 bytes at 0x1000 + 0x100 i (the "large" layout
 * that the validator checks as a batch: 64 moves and frees or more). */
static void large_zone(tf_file *f)
{
    uint64_t i;
    begin(f);
    tf_zone(f, 1, 0x1000, 0x90000);
    for (i = 0; i < 100; i++)
        tf_code(f, i + 1, 1, 0x1000 + 0x100 * i, 0x80, 0);
}

/* A compaction of `n` moves (id, new start) listed in `moves` and `n_frees`
 * frees of ids 100, 99, ... */
static void large_compaction(tf_file *f, uint64_t gen, const uint64_t *moves, size_t n,
                             size_t n_frees)
{
    size_t i;
    tf_rec(f, VMP_REC_CODE_COMPACTION, 4);
    tf_ku(f, VMP_COMP_ZONE, 1);
    tf_ku(f, VMP_COMP_GENERATION, gen);
    tf_uint(f, VMP_COMP_MOVES);
    tf_array(f, 2 * n);
    for (i = 0; i < 2 * n; i++)
        tf_uint(f, moves[i]);
    tf_uint(f, VMP_COMP_FREES);
    tf_array(f, n_frees);
    for (i = 0; i < n_frees; i++)
        tf_uint(f, 100 - i);
}

/* spec R-GEN-4 through a large compaction: every object slides down to pack
 * at 0x40000 (listed in reverse order), then 70 of them move back up while
 * the other 30 are freed: valid. */
static void build_valid_large_compactions(tf_file *f)
{
    uint64_t moves[200];
    size_t i;
    large_zone(f);
    for (i = 0; i < 100; i++) {
        moves[2 * i] = 100 - i;
        moves[2 * i + 1] = 0x40000 + 0x80 * (99 - i);
    }
    large_compaction(f, 1, moves, 100, 0);
    for (i = 0; i < 70; i++) {
        moves[2 * i] = i + 1;
        moves[2 * i + 1] = 0x1000 + 0x80 * i;
    }
    large_compaction(f, 2, moves, 70, 30);
    finish(f, 0, 2);
}

/* spec R-GEN-4: a large compaction moves 64 objects; object 64 lands on
 * object 80, which stays. */
static void build_gen4_overlap_after_large_compaction(tf_file *f)
{
    uint64_t moves[128];
    size_t i;
    large_zone(f);
    for (i = 0; i < 64; i++) {
        moves[2 * i] = i + 1;
        moves[2 * i + 1] = 0x40000 + 0x80 * i;
    }
    moves[2 * 63 + 1] = 0x1000 + 0x100 * 79 + 0x40;
    large_compaction(f, 1, moves, 64, 0);
    finish(f, 0, 1);
}

/* spec R-CODE-2: a large compaction moves an object freed before. */
static void build_code2_large_compaction_moves_freed(tf_file *f)
{
    uint64_t moves[128];
    size_t i;
    large_zone(f);
    tf_free_code(f, 1, 5);
    for (i = 0; i < 64; i++) {
        moves[2 * i] = i + 1;
        moves[2 * i + 1] = 0x40000 + 0x80 * i;
    }
    large_compaction(f, 2, moves, 64, 0);
    finish(f, 0, 2);
}

static void build_code1_pc_map_past_size(tf_file *f)
{
    begin(f);
    tf_zone(f, 1, 0x1000, 0x9000);
    tf_rec(f, VMP_REC_CODE_OBJECT, 4);
    tf_ku(f, VMP_CODE_ID, 1);
    tf_ku(f, VMP_CODE_START, 0x1000);
    tf_ku(f, VMP_CODE_SIZE, 0x40);
    tf_uint(f, VMP_CODE_PC_MAP);
    tf_array(f, 4); /* offsets 0x20 and 0x20 + 0x20 = 0x40: the second is past the end */
    tf_uint(f, 0x20);
    tf_uint(f, 1);
    tf_uint(f, 0x20);
    tf_uint(f, 2);
    finish(f, 0, 0);
}

static void build_code2_free_undefined(tf_file *f)
{
    begin(f);
    tf_free_code(f, 1, 9);
    finish(f, 0, 1);
}

static void build_code2_double_free(tf_file *f)
{
    begin(f);
    tf_zone(f, 1, 0x1000, 0x9000);
    tf_code(f, 1, 1, 0x1000, 0x100, 0);
    tf_free_code(f, 1, 1);
    tf_free_code(f, 2, 1);
    finish(f, 0, 2);
}

static void build_code2_move_freed(tf_file *f)
{
    begin(f);
    tf_zone(f, 1, 0x1000, 0x9000);
    tf_code(f, 1, 1, 0x1000, 0x100, 0);
    tf_free_code(f, 1, 1);
    tf_move(f, 2, 1, 0x2000);
    finish(f, 0, 2);
}

/* A CODE_MAP record (format 1.2) for code `id`: bcpc 7 from offset
 * `offset`, function 1 inlined at bcpc 7 from offset 0x28. */
static void code_map(tf_file *f, uint64_t id, uint64_t offset)
{
    tf_rec(f, VMP_REC_CODE_MAP, 3);
    tf_ku(f, VMP_CMAP_ID, id);
    tf_uint(f, VMP_CMAP_PC_MAP);
    tf_array(f, 2);
    tf_uint(f, offset);
    tf_uint(f, 7);
    tf_uint(f, VMP_CMAP_INLINE);
    tf_array(f, 1);
    tf_array(f, 3);
    tf_uint(f, 0x28);
    tf_uint(f, 1);
    tf_uint(f, 7);
}

/* A format 1.2 file's start: HEADER and function 1, which CODE_MAPs name. */
static void begin_code_map(tf_file *f)
{
    begin(f);
    f->out.p[18] = 2; /* format_minor */
    tf_rec(f, VMP_REC_FUNCTION, 2);
    tf_ku(f, VMP_FN_ID, 1);
    tf_uint(f, VMP_FN_NAME);
    tf_tstr(f, "bar");
}

/* spec R-CODE-3: code 1 gets its maps after a sample in it; a second
 * CODE_MAP for it is accepted (the first holds). */
static void build_valid_code_map(tf_file *f)
{
    begin_code_map(f);
    tf_zone(f, 1, 0x1000, 0x9000);
    tf_code(f, 1, 1, 0x1000, 0x100, 0);
    tf_node_pc(f, 1, 0, 0x1030);
    tf_sample(f, 10, 1, 0, 1);
    code_map(f, 1, 0x20);
    tf_sample(f, 10, 1, 0, 1);
    code_map(f, 1, 0);
    finish(f, 2, 0);
}

static void build_code3_map_before_its_code(tf_file *f)
{
    begin_code_map(f);
    tf_zone(f, 1, 0x1000, 0x9000);
    code_map(f, 1, 0x20);
    tf_code(f, 1, 1, 0x1000, 0x100, 0);
    finish(f, 0, 0);
}

static void build_code1_code_map_past_size(tf_file *f)
{
    begin_code_map(f);
    tf_zone(f, 1, 0x1000, 0x9000);
    tf_code(f, 1, 1, 0x1000, 0x100, 0);
    code_map(f, 1, 0x100);
    finish(f, 0, 0);
}

static void build_snap1_undefined_code(tf_file *f)
{
    begin(f);
    tf_zone(f, 1, 0x1000, 0x9000);
    tf_rec(f, VMP_REC_CODE_SNAPSHOT, 3);
    tf_ku(f, VMP_SNAP_ZONE, 1);
    tf_ku(f, VMP_SNAP_GENERATION, 1);
    tf_uint(f, VMP_SNAP_ENTRIES);
    tf_array(f, 2);
    tf_uint(f, 12);
    tf_uint(f, 0x1000);
    finish(f, 0, 1);
}

static void build_smp3_generation_past_final(tf_file *f)
{
    begin(f);
    tf_node_pc(f, 1, 0, 0x1000);
    tf_sample(f, 10, 1, 3, 1);
    finish(f, 1, 0);
}

/* spec R-SMP-3: a sample at generation 1 written before the generation-1
 * CODE_FREE (a streaming reader would resolve it before the free applies) */
static void build_smp3_sample_before_its_change(tf_file *f)
{
    begin(f);
    tf_zone(f, 1, 0x1000, 0x9000);
    tf_code(f, 1, 1, 0x1000, 0x100, 0);
    tf_node_pc(f, 1, 0, 0x1010);
    tf_sample(f, 10, 1, 1, 1);
    tf_free_code(f, 1, 1);
    finish(f, 1, 1);
}

static void build_end1_samples_wrong(tf_file *f)
{
    begin(f);
    tf_node_pc(f, 1, 0, 0x1000);
    tf_sample(f, 10, 1, 0, 1);
    tf_sample(f, 10, 1, 0, 1);
    finish(f, 3, 0);
}

static void build_end1_failed_wrong(tf_file *f)
{
    begin(f);
    tf_end(f, 0, 2, 0, 0);
    tf_chunk_end(f);
}

static void build_end1_chunks_wrong(tf_file *f)
{
    begin(f);
    tf_chunk_end(f);
    tf_end(f, 0, 0, 0, 0); /* one chunk precedes the END's chunk */
    tf_chunk_end(f);
}

static void build_end2_record_after_end(tf_file *f)
{
    begin(f);
    tf_end(f, 0, 0, 0, 0);
    tf_thread(f, 1, "late");
    tf_chunk_end(f);
}

static void build_end2_chunk_after_end(tf_file *f)
{
    begin(f);
    tf_end(f, 0, 0, 0, 0);
    tf_chunk_end(f);
    tf_thread(f, 1, "late");
    tf_chunk_end(f);
}

static void build_stk1_pc_and_function(tf_file *f)
{
    begin(f);
    tf_rec(f, VMP_REC_STACK_NODE, 3);
    tf_ku(f, VMP_NODE_ID, 1);
    tf_ku(f, VMP_NODE_PC, 0x1000);
    tf_ku(f, VMP_NODE_FUNCTION, 1);
    finish(f, 0, 0);
}

static void build_stk1_neither(tf_file *f)
{
    begin(f);
    tf_rec(f, VMP_REC_STACK_NODE, 1);
    tf_ku(f, VMP_NODE_ID, 1);
    finish(f, 0, 0);
}

static void build_smp1_negative_time(tf_file *f)
{
    begin(f);
    tf_rec(f, VMP_REC_SAMPLE, 2);
    tf_uint(f, VMP_SMP_TIME_DELTA);
    tf_int(f, -5);
    tf_ku(f, VMP_SMP_THREAD, 1);
    finish(f, 1, 0);
}

static void build_chk3_no_end(tf_file *f)
{
    begin(f);
    tf_thread(f, 1, "main");
    tf_chunk_end(f);
}

static void build_chk3_cut_inside_frame(tf_file *f)
{
    build_valid_every_record_type(f);
    f->out.n -= 7;
}

static void build_hdr1_not_a_profile(tf_file *f)
{
    build_valid_every_record_type(f);
    f->out.p[9] = 'X';
}

/* spec R-SMP-4: weights 3, 0 and 1 (the default) count 4 samples; none of
 * them has a pc or a stack, so every view shows them as unknown. */
static void build_valid_weight_zero(tf_file *f)
{
    static const uint64_t weights[] = {3, 0, 1};
    size_t i;
    begin(f);
    for (i = 0; i < 3; i++) {
        tf_rec(f, VMP_REC_SAMPLE, 3);
        tf_ku(f, VMP_SMP_TIME_DELTA, 1000);
        tf_ku(f, VMP_SMP_THREAD, 1);
        tf_ku(f, VMP_SMP_WEIGHT, weights[i]);
    }
    finish(f, 3, 0);
}

/* spec R-RES-6: `outer` [0x400100, 0x400200) holds `inner` [0x400110,
 * 0x400120); `last` is the module's last symbol, of size 0.  Samples at
 * 0x400118 (inner), 0x400180 (outer: past inner, inside outer) and 0x400300
 * (last: a size-0 last symbol runs to the module's end). */
static void build_valid_nested_symbols(tf_file *f)
{
    static const uint64_t pcs[] = {0x400118, 0x400180, 0x400300};
    size_t i;
    begin(f);
    tf_rec(f, VMP_REC_MODULE, 4);
    tf_ku(f, VMP_MOD_ID, 1);
    tf_uint(f, VMP_MOD_PATH);
    tf_tstr(f, "/bin/vm");
    tf_ku(f, VMP_MOD_START, 0x400000);
    tf_ku(f, VMP_MOD_END, 0x401000);
    tf_rec(f, VMP_REC_MODULE_SYMBOLS, 2);
    tf_ku(f, VMP_SYMS_MODULE, 1);
    tf_uint(f, VMP_SYMS_LIST);
    tf_array(f, 9);
    tf_uint(f, 0x400100);
    tf_uint(f, 0x100);
    tf_tstr(f, "outer");
    tf_uint(f, 0x400110);
    tf_uint(f, 0x10);
    tf_tstr(f, "inner");
    tf_uint(f, 0x400200);
    tf_uint(f, 0);
    tf_tstr(f, "last");
    for (i = 0; i < 3; i++) {
        tf_rec(f, VMP_REC_SAMPLE, 3);
        tf_ku(f, VMP_SMP_TIME_DELTA, 1000);
        tf_ku(f, VMP_SMP_THREAD, 1);
        tf_ku(f, VMP_SMP_PC, pcs[i]);
    }
    finish(f, 3, 0);
}

/* spec R-CHK-6: a file cut inside its first chunk has no complete chunk */
static void build_chk3_cut_inside_chunk0(tf_file *f)
{
    begin(f);
    tf_thread(f, 1, "main");
    finish(f, 0, 0);
    f->out.n -= 7;
}

/* spec R-ID-5, R-RES-2, R-RES-4: FUNCTION 1 "Obj" "first" (bytecode_size 10)
 * defined twice; code object 1 at 0x1000 with pc map offsets 0x10 -> bcpc 2,
 * 0x10 -> 5 (equal offsets: the last wins), 0x20 -> 3 (below 5: the range
 * before it is clamped to 5->5).  Samples at 0x1008 (before the first entry:
 * no range), 0x1018 (5->5) and 0x1030 (the last range, 3->9). */
static void build_valid_pc_map_edges(tf_file *f)
{
    static const uint64_t pcs[] = {0x1008, 0x1018, 0x1030};
    static const char *const names[] = {"first", "second"};
    size_t i;
    begin(f);
    for (i = 0; i < 2; i++) {
        tf_rec(f, VMP_REC_FUNCTION, 4);
        tf_ku(f, VMP_FN_ID, 1);
        tf_uint(f, VMP_FN_SCOPE);
        tf_tstr(f, "Obj");
        tf_uint(f, VMP_FN_NAME);
        tf_tstr(f, names[i]);
        tf_ku(f, VMP_FN_BC_SIZE, i ? 100 : 10);
    }
    tf_zone(f, 1, 0x1000, 0x9000);
    tf_rec(f, VMP_REC_CODE_OBJECT, 6);
    tf_ku(f, VMP_CODE_ID, 1);
    tf_ku(f, VMP_CODE_ZONE, 1);
    tf_ku(f, VMP_CODE_START, 0x1000);
    tf_ku(f, VMP_CODE_SIZE, 0x100);
    tf_ku(f, VMP_CODE_FUNCTION, 1);
    tf_uint(f, VMP_CODE_PC_MAP);
    tf_array(f, 6);
    tf_uint(f, 0x10);
    tf_uint(f, 2);
    tf_uint(f, 0);
    tf_uint(f, 5);
    tf_uint(f, 0x10);
    tf_uint(f, 3);
    for (i = 0; i < 3; i++) {
        tf_rec(f, VMP_REC_SAMPLE, 3);
        tf_ku(f, VMP_SMP_TIME_DELTA, 1000);
        tf_ku(f, VMP_SMP_THREAD, 1);
        tf_ku(f, VMP_SMP_PC, pcs[i]);
    }
    finish(f, 3, 0);
}

/* spec R-SNAP-2: code 1 at 0x1000 is freed by an empty snapshot at
 * generation 1; code 2 (generation 1, at 0x1000) and code 3 (generation 0,
 * at 0x2000) are written after the snapshot and so are not freed by it.
 * Samples: generation 0 at 0x1010 (code#1), generation 1 at 0x1010 (code#2)
 * and at 0x2010 (code#3). */
static void build_valid_snapshot_then_later_code(tf_file *f)
{
    begin(f);
    tf_zone(f, 1, 0x1000, 0x9000);
    tf_code(f, 1, 1, 0x1000, 0x100, 0);
    tf_node_pc(f, 1, 0, 0x1010);
    tf_node_pc(f, 2, 0, 0x2010);
    tf_sample(f, 10, 1, 0, 1);
    tf_rec(f, VMP_REC_CODE_SNAPSHOT, 3);
    tf_ku(f, VMP_SNAP_ZONE, 1);
    tf_ku(f, VMP_SNAP_GENERATION, 1);
    tf_uint(f, VMP_SNAP_ENTRIES);
    tf_array(f, 0);
    tf_code(f, 2, 1, 0x1000, 0x100, 1);
    tf_code(f, 3, 1, 0x2000, 0x100, 0);
    tf_sample(f, 10, 1, 1, 1);
    tf_sample(f, 10, 1, 1, 2);
    finish(f, 3, 1);
}

typedef struct test_case {
    const char *name; /* the file name: the rule it breaks, then what */
    void (*build)(tf_file *f);
    vmp_status status;
    const char *rule;
} test_case;

static const test_case cases[] = {
    {"valid-every-record-type", build_valid_every_record_type, VMP_OK, ""},
    {"valid-weight-zero", build_valid_weight_zero, VMP_OK, ""},
    {"valid-nested-symbols", build_valid_nested_symbols, VMP_OK, ""},
    {"valid-pc-map-edges", build_valid_pc_map_edges, VMP_OK, ""},
    {"valid-snapshot-then-later-code", build_valid_snapshot_then_later_code, VMP_OK, ""},
    {"valid-code-map", build_valid_code_map, VMP_OK, ""},
    {"r-hdr-1-not-a-profile", build_hdr1_not_a_profile, VMP_ERR_NOT_VMP, "R-HDR-1"},
    {"r-hdr-5-header-not-first", build_hdr5_not_first, VMP_ERR_CORRUPT, "R-HDR-5"},
    {"r-hdr-5-second-header", build_hdr5_second_header, VMP_ERR_CORRUPT, "R-HDR-5"},
    {"r-id-1-undefined-stack-node", build_id1_undefined_stack_node, VMP_ERR_CORRUPT, "R-ID-1"},
    {"r-id-1-parent-after-child", build_id1_parent_after_child, VMP_ERR_CORRUPT, "R-ID-1"},
    {"r-id-1-duplicate-stack-node", build_id1_duplicate_stack_node, VMP_ERR_CORRUPT, "R-ID-1"},
    {"r-id-1-duplicate-code-id", build_id1_duplicate_code_id, VMP_ERR_CORRUPT, "R-ID-1"},
    {"r-id-1-undefined-zone", build_id1_undefined_zone, VMP_ERR_CORRUPT, "R-ID-1"},
    {"r-id-1-duplicate-zone", build_id1_duplicate_zone, VMP_ERR_CORRUPT, "R-ID-1"},
    {"r-id-1-undefined-module", build_id1_undefined_module, VMP_ERR_CORRUPT, "R-ID-1"},
    {"r-gen-1-decreasing-generation", build_gen1_decreasing_generation, VMP_ERR_CORRUPT, "R-GEN-1"},
    {"r-gen-1-repeated-generation", build_gen1_repeated_generation, VMP_ERR_CORRUPT, "R-GEN-1"},
    {"r-gen-2-code-from-the-future", build_gen2_code_from_the_future, VMP_ERR_CORRUPT, "R-GEN-2"},
    {"r-gen-4-overlapping-code-objects", build_gen4_overlapping_code_objects, VMP_ERR_CORRUPT,
     "R-GEN-4"},
    {"r-gen-4-overlap-after-move", build_gen4_overlap_after_move, VMP_ERR_CORRUPT, "R-GEN-4"},
    {"r-gen-4-overlap-after-compaction", build_gen4_overlap_after_compaction, VMP_ERR_CORRUPT,
     "R-GEN-4"},
    {"valid-large-compactions", build_valid_large_compactions, VMP_OK, ""},
    {"r-gen-4-overlap-after-large-compaction", build_gen4_overlap_after_large_compaction,
     VMP_ERR_CORRUPT, "R-GEN-4"},
    {"r-code-2-large-compaction-moves-freed", build_code2_large_compaction_moves_freed,
     VMP_ERR_CORRUPT, "R-CODE-2"},
    {"r-code-1-pc-map-past-size", build_code1_pc_map_past_size, VMP_ERR_CORRUPT, "R-CODE-1"},
    {"r-code-2-free-undefined", build_code2_free_undefined, VMP_ERR_CORRUPT, "R-CODE-2"},
    {"r-code-3-map-before-its-code", build_code3_map_before_its_code, VMP_ERR_CORRUPT, "R-CODE-3"},
    {"r-code-1-code-map-past-size", build_code1_code_map_past_size, VMP_ERR_CORRUPT, "R-CODE-1"},
    {"r-code-2-double-free", build_code2_double_free, VMP_ERR_CORRUPT, "R-CODE-2"},
    {"r-code-2-move-freed", build_code2_move_freed, VMP_ERR_CORRUPT, "R-CODE-2"},
    {"r-snap-1-undefined-code", build_snap1_undefined_code, VMP_ERR_CORRUPT, "R-SNAP-1"},
    {"r-smp-3-generation-past-final", build_smp3_generation_past_final, VMP_ERR_CORRUPT, "R-SMP-3"},
    {"r-smp-3-sample-before-its-change", build_smp3_sample_before_its_change, VMP_ERR_CORRUPT,
     "R-SMP-3"},
    {"r-end-1-samples-wrong", build_end1_samples_wrong, VMP_ERR_CORRUPT, "R-END-1"},
    {"r-end-1-failed-wrong", build_end1_failed_wrong, VMP_ERR_CORRUPT, "R-END-1"},
    {"r-end-1-chunks-wrong", build_end1_chunks_wrong, VMP_ERR_CORRUPT, "R-END-1"},
    {"r-end-2-record-after-end", build_end2_record_after_end, VMP_ERR_CORRUPT, "R-END-2"},
    {"r-end-2-chunk-after-end", build_end2_chunk_after_end, VMP_ERR_CORRUPT, "R-END-2"},
    {"r-stk-1-pc-and-function", build_stk1_pc_and_function, VMP_ERR_CORRUPT, "R-STK-1"},
    {"r-stk-1-neither-pc-nor-function", build_stk1_neither, VMP_ERR_CORRUPT, "R-STK-1"},
    {"r-smp-1-negative-time", build_smp1_negative_time, VMP_ERR_CORRUPT, "R-SMP-1"},
    {"r-chk-3-no-end-record", build_chk3_no_end, VMP_ERR_TRUNCATED, "R-CHK-3"},
    {"r-chk-3-cut-inside-frame", build_chk3_cut_inside_frame, VMP_ERR_TRUNCATED, "R-CHK-3"},
    {"r-chk-3-cut-inside-chunk-0", build_chk3_cut_inside_chunk0, VMP_ERR_TRUNCATED, "R-CHK-3"},
};

static const char *out_dir;

static void run_case(const test_case *tc)
{
    tf_file f;
    vmp_reader *r = NULL;
    vmp_validate_report rep;
    vmp_status st;
    tc->build(&f);
    if (out_dir) {
        char path[4096];
        FILE *fp;
        snprintf(path, sizeof path, "%s/%s.vmp", out_dir, tc->name);
        fp = fopen(path, "wb");
        CHECK(fp != NULL);
        if (fp) {
            CHECK(fwrite(f.out.p, 1, f.out.n, fp) == f.out.n);
            CHECK(fclose(fp) == 0);
        }
    }
    st = vmp_reader_open_memory(&r, f.out.p, f.out.n, tc->name, NULL);
    if (st < 0) {
        /* Only a file the reader refuses at once may fail here. */
        CHECK_EQ_U64((uint64_t)(int64_t)st, (uint64_t)(int64_t)tc->status);
        vmp_reader_close(r);
        tf_free(&f);
        return;
    }
    st = vmp_validate(&rep, r);
    if (st != tc->status || strcmp(rep.rule, tc->rule) != 0)
        fprintf(stderr, "%s: got %s [%s] %s\n", tc->name, vmp_status_str(st), rep.rule,
                rep.message);
    CHECK_EQ_U64((uint64_t)(int64_t)st, (uint64_t)(int64_t)tc->status);
    CHECK_STR(rep.rule, tc->rule);
    CHECK(st == VMP_OK ? rep.message[0] == '\0' : rep.message[0] != '\0');
    vmp_reader_close(r);
    tf_free(&f);
}

static void test_validate_accepts_every_record_type(void)
{
    tf_file f;
    vmp_reader *r;
    vmp_validate_report rep;
    build_valid_every_record_type(&f);
    CHECK(vmp_reader_open_memory(&r, f.out.p, f.out.n, "valid", NULL) == VMP_OK);
    CHECK(vmp_validate(&rep, r) == VMP_OK);
    CHECK_EQ_U64(rep.samples, 3);
    CHECK_EQ_U64(rep.chunks, 3);
    CHECK(rep.complete);
    vmp_reader_close(r);
    tf_free(&f);
}

static void test_validate_rejects_each_broken_rule(void)
{
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(&cases[i]);
}

static void test_validate_reports_location(void)
{
    tf_file f;
    vmp_reader *r;
    vmp_validate_report rep;
    build_id1_undefined_stack_node(&f);
    CHECK(vmp_reader_open_memory(&r, f.out.p, f.out.n, "loc", NULL) == VMP_OK);
    CHECK(vmp_validate(&rep, r) == VMP_ERR_CORRUPT);
    CHECK_EQ_U64(rep.offset, 24); /* the first data frame follows the 24-byte header */
    CHECK_EQ_U64(rep.chunk_index, 0);
    CHECK(rep.record_offset > 0);
    CHECK(strstr(rep.message, "stack node 7") != NULL);
    CHECK(strstr(rep.message, "SAMPLE") != NULL);
    vmp_reader_close(r);
    tf_free(&f);
}

static void test_validate_rejects_null(void)
{
    vmp_validate_report rep;
    CHECK(vmp_validate(&rep, NULL) == VMP_ERR_INVALID_ARG);
    CHECK(vmp_validate(NULL, NULL) == VMP_ERR_INVALID_ARG);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        out_dir = argv[1];
    VMP_TEST_RUN(test_validate_accepts_every_record_type);
    VMP_TEST_RUN(test_validate_rejects_each_broken_rule);
    VMP_TEST_RUN(test_validate_reports_location);
    VMP_TEST_RUN(test_validate_rejects_null);
    VMP_TEST_EXIT();
}
