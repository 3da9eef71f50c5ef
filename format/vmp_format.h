/* SPDX-License-Identifier: MIT
 *
 * vmp_format.h - on-disk constants of the vmp file format (spec.md).
 *
 * This header is the registry of every number that appears on disk: magic
 * numbers, versions, record types and map keys.  Never renumber, never reuse;
 * retired entries stay as comments (spec.md Appendix A).
 */
#ifndef VMP_FORMAT_H
#define VMP_FORMAT_H

#include <stdint.h>

/* ---- Container (spec.md §3, §4) ------------------------------------------ */

/** zstd skippable-frame magic of the leading file-header frame (LE on disk). */
#define VMP_FILE_FRAME_MAGIC 0x184D2A56u
/** zstd skippable-frame magic of the optional trailing seek table. */
#define VMP_SEEK_FRAME_MAGIC 0x184D2A57u
/** Any zstd skippable frame has a magic in [0x184D2A50, 0x184D2A5F]. */
#define VMP_SKIPPABLE_MAGIC_MIN 0x184D2A50u
#define VMP_SKIPPABLE_MAGIC_MAX 0x184D2A5Fu
/** zstd data-frame magic. */
#define VMP_ZSTD_MAGIC 0xFD2FB528u

/** The 8 bytes that open the file-header frame's content. */
#define VMP_MAGIC      "\x89VMP\r\n\x1a\n"
#define VMP_MAGIC_SIZE 8
/** Size of the file-header frame content written by this version. */
#define VMP_FILE_HEADER_SIZE 16
/** Size of a skippable frame's own header (magic + size). */
#define VMP_SKIPPABLE_HEADER_SIZE 8

#define VMP_FORMAT_MAJOR 1
/** The newest minor version of major 1 this library knows.  A writer writes
 *  the least minor whose features the file uses: 0 without any 1.1 key. */
#define VMP_FORMAT_MINOR 2
/** The newest major this library reads: 2 (2.0) is 1.2 with SAMPLE_BLOCK
 *  records (spec.md §5.14, §7).  Its writers write major 1. */
#define VMP_FORMAT_MAJOR_MAX 2
/** The newest minor of major 2 this library knows: 1 (2.1) adds sample
 *  kinds (spec.md §5.15). */
#define VMP_FORMAT2_MINOR 1

/** Last 4 bytes of the seek-table frame ("VMPS"), after a u32 frame size. */
#define VMP_SEEK_FOOTER_MAGIC "VMPS"
#define VMP_SEEK_FOOTER_SIZE  8

/* ---- Record types (spec.md §5) -------------------------------------------- */
/* Every record is a CBOR map whose first key is VMP_KEY_TYPE (0). */

#define VMP_KEY_TYPE 0

enum vmp_record_type {
    VMP_REC_HEADER = 1,
    VMP_REC_END = 2,
    VMP_REC_MODULE = 3,
    VMP_REC_MODULE_SYMBOLS = 4,
    VMP_REC_THREAD = 5,
    VMP_REC_FUNCTION = 6,
    VMP_REC_CODE_ZONE = 7,
    VMP_REC_CODE_OBJECT = 8,
    VMP_REC_CODE_SNAPSHOT = 9,
    VMP_REC_CODE_COMPACTION = 10,
    VMP_REC_CODE_FREE = 11,
    VMP_REC_CODE_MOVE = 12,
    VMP_REC_STACK_NODE = 13,
    VMP_REC_SAMPLE = 14,
    VMP_REC_FAILED_SAMPLE = 15,
    VMP_REC_EVENT = 16,
    VMP_REC_COUNTER = 17,
    VMP_REC_TYPE_MAX_V1_0 = 17,
    VMP_REC_CODE_MAP = 18,     /* 1.2 */
    VMP_REC_SAMPLE_BLOCK = 19, /* 2.0: the reader delivers its samples as SAMPLE records */
    VMP_REC_KIND_SAMPLE = 20,  /* 2.1: a sample of a kind the header declares (not CPU time) */
    VMP_REC_TYPE_MAX = 20
};

/* ---- Map keys, per record type --------------------------------------------- */

/* HEADER (1) */
#define VMP_HDR_PRODUCER         1  /* tstr */
#define VMP_HDR_VM_NAME          2  /* tstr */
#define VMP_HDR_VM_VERSION       3  /* tstr */
#define VMP_HDR_PID              4  /* uint */
#define VMP_HDR_START_REALTIME   5  /* uint: ns since the Unix epoch at time origin */
#define VMP_HDR_CLOCK            6  /* tstr: clock name, e.g. "monotonic" */
#define VMP_HDR_CLOCK_RES        7  /* uint: clock resolution, ns */
#define VMP_HDR_INTERVAL         8  /* uint: sampling interval, ns; 0 = unknown */
#define VMP_HDR_POINTER_SIZE     9  /* uint: bytes */
#define VMP_HDR_STATES           10 /* array of tstr: VM states */
#define VMP_HDR_CODE_KINDS       11 /* array of tstr */
#define VMP_HDR_TIERS            12 /* array of tstr */
#define VMP_HDR_EVENT_KINDS      13 /* array of tstr */
#define VMP_HDR_COUNTER_KINDS    14 /* array of tstr */
#define VMP_HDR_FAILURE_REASONS  15 /* array of tstr */
#define VMP_HDR_LABELS           16 /* map tstr -> tstr */
#define VMP_HDR_START_MONOTONIC  17 /* uint: the writer's clock value at time origin */
#define VMP_HDR_NAME_SEPARATOR   18 /* tstr (1.1): between scope and name in display names */
#define VMP_HDR_SAMPLE_TIME_UNIT 19 /* uint (2.0): ns per unit of SAMPLE_BLOCK time deltas */
#define VMP_HDR_SAMPLE_KINDS     20 /* array of tstr (2.1): names of sample kinds 1, 2, ... */
#define VMP_HDR_SAMPLE_UNITS     21 /* array of tstr (2.1): their weights' units */

/* END (2) */
#define VMP_END_TIME             1 /* uint: ns since origin */
#define VMP_END_SAMPLES          2 /* uint: SAMPLE + FAILED_SAMPLE records written */
#define VMP_END_DROPPED_FULL     3 /* uint: samples dropped, ring full */
#define VMP_END_DROPPED_WRITE    4 /* uint: samples lost to write errors */
#define VMP_END_FAILED           5 /* uint: FAILED_SAMPLE records among END_SAMPLES */
#define VMP_END_CHUNKS           6 /* uint: data chunks before the one holding END */
#define VMP_END_TRUNCATED_STACKS 7 /* uint: samples whose stack was cut at max depth */
#define VMP_END_GENERATION       8 /* uint: the writer's final generation */
#define VMP_END_KIND_SAMPLES     9 /* uint (2.1): KIND_SAMPLE records written */

/* MODULE (3) */
#define VMP_MOD_ID       1 /* uint, >= 1 */
#define VMP_MOD_PATH     2 /* tstr */
#define VMP_MOD_BUILD_ID 3 /* bstr */
#define VMP_MOD_BIAS     4 /* uint: runtime address = symbol value + bias */
#define VMP_MOD_START    5 /* uint: lowest mapped runtime address */
#define VMP_MOD_END      6 /* uint: end of mapping, exclusive */

/* MODULE_SYMBOLS (4) */
#define VMP_SYMS_MODULE 1 /* uint: module id */
#define VMP_SYMS_LIST   2 /* array: value, size, name, value, size, name, ... */

/* THREAD (5) */
#define VMP_THR_ID       1 /* uint */
#define VMP_THR_NAME     2 /* tstr */
#define VMP_THR_TIME     3 /* uint: ns since origin when first seen */
#define VMP_THR_END_TIME 4 /* uint: ns since origin when it ended */

/* FUNCTION (6) */
#define VMP_FN_ID        1 /* uint, >= 1, chosen by the VM */
#define VMP_FN_NAME      2 /* tstr */
#define VMP_FN_SCOPE     3 /* tstr: class, module or namespace */
#define VMP_FN_SIGNATURE 4 /* tstr */
#define VMP_FN_FILE      5 /* tstr */
#define VMP_FN_LINE      6 /* uint: first line */
#define VMP_FN_LINES     7 /* array: bcpc, line, bcpc, line, ... sorted by bcpc */
#define VMP_FN_BC_SIZE   8 /* uint: bytecode size */
#define VMP_FN_IS_CLASS  9 /* uint (2.1): 1 = a class (allocated or locked), not code */

/* CODE_ZONE (7) */
#define VMP_ZONE_ID    1 /* uint, >= 1 */
#define VMP_ZONE_NAME  2 /* tstr */
#define VMP_ZONE_START 3 /* uint */
#define VMP_ZONE_END   4 /* uint, exclusive */

/* CODE_OBJECT (8) */
#define VMP_CODE_ID         1  /* uint, >= 1, never reused in a file */
#define VMP_CODE_ZONE       2  /* uint: zone id */
#define VMP_CODE_KIND       3  /* uint: index into HEADER code kinds */
#define VMP_CODE_NAME       4  /* tstr */
#define VMP_CODE_FUNCTION   5  /* uint: function id */
#define VMP_CODE_START      6  /* uint */
#define VMP_CODE_SIZE       7  /* uint */
#define VMP_CODE_GENERATION 8  /* uint: first generation it exists in */
#define VMP_CODE_TIER       9  /* uint: index into HEADER tiers */
#define VMP_CODE_PC_MAP     10 /* array: mcpc delta, bcpc, mcpc delta, bcpc, ... */
#define VMP_CODE_INLINE     11 /* array of arrays: [mcpc offset, fn, bcpc, fn, bcpc, ...] */
#define VMP_CODE_TIME       12 /* uint: ns since origin */

/* CODE_MAP (18, format 1.2): a code object's pc_map and inline, written
 * after its CODE_OBJECT (spec R-CODE-3) */
#define VMP_CMAP_ID     1 /* uint: code id */
#define VMP_CMAP_PC_MAP 2 /* array, as VMP_CODE_PC_MAP */
#define VMP_CMAP_INLINE 3 /* array of arrays, as VMP_CODE_INLINE */

/* CODE_SNAPSHOT (9) */
#define VMP_SNAP_ZONE       1 /* uint */
#define VMP_SNAP_GENERATION 2 /* uint */
#define VMP_SNAP_ENTRIES    3 /* array: code id, start, code id, start, ... */
#define VMP_SNAP_TIME       4 /* uint */

/* CODE_COMPACTION (10) */
#define VMP_COMP_ZONE       1 /* uint */
#define VMP_COMP_GENERATION 2 /* uint: the generation the result holds from */
#define VMP_COMP_MOVES      3 /* array: code id, new start, ... */
#define VMP_COMP_FREES      4 /* array: code id, ... */
#define VMP_COMP_TIME       5 /* uint: ns since origin at start */
#define VMP_COMP_DURATION   6 /* uint: ns */

/* CODE_FREE (11) */
#define VMP_FREE_GENERATION 1 /* uint: first generation without the object */
#define VMP_FREE_ID         2 /* uint */
#define VMP_FREE_TIME       3 /* uint */

/* CODE_MOVE (12) */
#define VMP_MOVE_GENERATION 1 /* uint: first generation at the new address */
#define VMP_MOVE_ID         2 /* uint */
#define VMP_MOVE_START      3 /* uint: new start */
#define VMP_MOVE_TIME       4 /* uint */

/* STACK_NODE (13) */
#define VMP_NODE_ID       1 /* uint, >= 1 */
#define VMP_NODE_PARENT   2 /* uint: caller's node, 0 = outermost frame */
#define VMP_NODE_PC       3 /* uint: machine frame */
#define VMP_NODE_FUNCTION 4 /* uint: symbolic frame */
#define VMP_NODE_BCPC     5 /* uint: with VMP_NODE_FUNCTION */

/* SAMPLE (14) and FAILED_SAMPLE (15) */
#define VMP_SMP_TIME_DELTA 1 /* int: ns since the previous sample in the chunk */
#define VMP_SMP_THREAD     2 /* uint */
#define VMP_SMP_STATE      3 /* uint: index into HEADER states */
#define VMP_SMP_PC         4 /* uint */
#define VMP_SMP_GENERATION 5 /* uint */
#define VMP_SMP_STACK      6 /* uint: leaf stack node, 0 = none (SAMPLE only) */
#define VMP_SMP_WEIGHT     7 /* uint, default 1 */
#define VMP_SMP_BLAME      8 /* uint: code id of the last exited JIT unit (SAMPLE only) */
#define VMP_SMP_REASON     9 /* uint: index into HEADER failure reasons (FAILED_SAMPLE only) */

/* SAMPLE_BLOCK (19, format 2.0): samples column by column (spec §5.14).  A
 * column is an array of one item (every sample's value) or of one item per
 * sample. */
#define VMP_BLK_TIMES        1  /* array of int: time deltas in sample_time_unit */
#define VMP_BLK_THREADS      2  /* array of uint: thread table */
#define VMP_BLK_THREAD       3  /* column: thread id, or index into THREADS */
#define VMP_BLK_STACKS       4  /* array of uint: stack table */
#define VMP_BLK_STACK        5  /* column: innermost node, or index into STACKS */
#define VMP_BLK_STATE        6  /* column */
#define VMP_BLK_GENERATION   7  /* column */
#define VMP_BLK_WEIGHT       8  /* column, default 1 */
#define VMP_BLK_BLAME        9  /* column */
#define VMP_BLK_PCS          10 /* array: sample index, pc, ... */
#define VMP_BLK_FAILED       11 /* array: sample index, failure reason, ... */
#define VMP_BLK_TIME_BASE    12 /* int: added to every value of TIMES */
#define VMP_BLK_CONTEXTS     13 /* array: stack, state, pc, ... (R-BLK-5) */
#define VMP_BLK_CONTEXT_BASE 14 /* uint, default 1: the id of the first of CONTEXTS */
#define VMP_BLK_CONTEXT      15 /* column: sample context id, 0 = none */

/* KIND_SAMPLE (20, format 2.1): a sample of a declared kind (spec §5.15) */
#define VMP_KSMP_TIME       1 /* uint: ns since origin (absolute, not a delta) */
#define VMP_KSMP_THREAD     2 /* uint */
#define VMP_KSMP_STATE      3 /* uint: index into HEADER states */
#define VMP_KSMP_PC         4 /* uint */
#define VMP_KSMP_GENERATION 5 /* uint */
#define VMP_KSMP_STACK      6 /* uint: innermost stack node, 0 = none */
#define VMP_KSMP_WEIGHT     7 /* uint, default 1, in the kind's unit */
#define VMP_KSMP_KIND       8 /* uint, required: index into HEADER sample kinds + 1 */

/* EVENT (16) */
#define VMP_EVT_TIME     1 /* uint: ns since origin */
#define VMP_EVT_KIND     2 /* uint: index into HEADER event kinds */
#define VMP_EVT_DURATION 3 /* uint: ns, 0 = instant */
#define VMP_EVT_THREAD   4 /* uint */
#define VMP_EVT_VALUE    5 /* int */
#define VMP_EVT_TEXT     6 /* tstr */

/* COUNTER (17) */
#define VMP_CTR_TIME  1 /* uint: ns since origin */
#define VMP_CTR_KIND  2 /* uint: index into HEADER counter kinds */
#define VMP_CTR_VALUE 3 /* int */

#endif
