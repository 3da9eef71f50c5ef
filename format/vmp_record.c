/* SPDX-License-Identifier: MIT
 *
 * vmp_record.c - the record registry: every record type of spec.md §5 with
 * its fields, in key order (the spec's tables), as vmp_record.h describes.
 * The reader, the generic encoder, `vmp decode` and the validator's messages
 * all read these tables; nothing else lists a record's keys.
 */
#include "vmp_record.h"

#include <stddef.h>

#define OFF(m) offsetof(vmp_record, u.m)

/* One field per line, as the spec's tables read: */
/* clang-format off */

/* key, flags, name, value member[, aux member, other key, default] */
#define UINT(k, fl, nm, m) \
    {.key = (k), .kind = VMP_FIELD_UINT, .flags = (fl), .group = 1, .name = (nm), .off = OFF(m)}
#define UINT_DFLT(k, fl, nm, m, d) \
    {.key = (k), .kind = VMP_FIELD_UINT, .flags = (fl), .group = 1, .name = (nm), .off = OFF(m), \
     .dflt = (d)}
#define UINT_HAS(k, fl, nm, m, flag) \
    {.key = (k), .kind = VMP_FIELD_UINT, .flags = VMP_FIELD_HAS | VMP_FIELD_OPTIONAL | (fl), \
     .group = 1, .name = (nm), .off = OFF(m), .aux = OFF(flag)}
#define UINT_UNLESS(k, fl, nm, m, other_, rule_) \
    {.key = (k), .kind = VMP_FIELD_UINT, .flags = VMP_FIELD_UNLESS | (fl), .group = 1, \
     .name = (nm), .off = OFF(m), .other = (other_), .rule = (rule_)}
#define INT(k, fl, nm, m, flag) \
    {.key = (k), .kind = VMP_FIELD_INT, .flags = (fl), .group = 1, .name = (nm), .off = OFF(m), \
     .aux = OFF(flag)}
#define TSTR(k, fl, nm, m) \
    {.key = (k), .kind = VMP_FIELD_TSTR, .flags = (fl), .group = 1, .name = (nm), .off = OFF(m)}
/* arrays and byte strings: the count member, values per item, --help shape */
#define LIST(k, kind_, fl, nm, m, n, g, shape_) \
    {.key = (k), .kind = (kind_), .flags = (fl), .group = (g), .name = (nm), .off = OFF(m), \
     .aux = OFF(n), .shape = (shape_)}
#define TSTRS(k, m) LIST(k, VMP_FIELD_TSTRS, 0, #m, header.m, header.n_##m, 1, NULL)
#define PC_MAP(k, rec) \
    LIST(k, VMP_FIELD_PC_MAP, 0, "pc_map", rec.pc_map, rec.pc_map_len, 2, "(offset:bcpc)")
#define INLINE(k, rec) \
    LIST(k, VMP_FIELD_INLINE, 0, "inline", rec.inlines, rec.n_inlines, 1, \
         "(offset:[function:bcpc ...])")
#define OPT VMP_FIELD_OPTIONAL

#define REQ    VMP_FIELD_REQUIRED
#define ADDR   VMP_FIELD_ADDRESS
#define ALWAYS VMP_FIELD_ALWAYS
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static const vmp_field header_fields[] = {
    TSTR(VMP_HDR_PRODUCER, 0, "producer", header.producer),
    TSTR(VMP_HDR_VM_NAME, 0, "vm_name", header.vm_name),
    TSTR(VMP_HDR_VM_VERSION, 0, "vm_version", header.vm_version),
    UINT(VMP_HDR_PID, ALWAYS, "pid", header.pid),
    UINT(VMP_HDR_START_REALTIME, 0, "start_realtime", header.start_realtime_ns),
    TSTR(VMP_HDR_CLOCK, 0, "clock", header.clock),
    UINT(VMP_HDR_CLOCK_RES, 0, "clock_res", header.clock_res_ns),
    UINT(VMP_HDR_INTERVAL, 0, "interval", header.interval_ns),
    UINT_DFLT(VMP_HDR_POINTER_SIZE, ALWAYS, "pointer_size", header.pointer_size, 8),
    TSTRS(VMP_HDR_STATES, states),
    TSTRS(VMP_HDR_CODE_KINDS, code_kinds),
    TSTRS(VMP_HDR_TIERS, tiers),
    TSTRS(VMP_HDR_EVENT_KINDS, event_kinds),
    TSTRS(VMP_HDR_COUNTER_KINDS, counter_kinds),
    TSTRS(VMP_HDR_FAILURE_REASONS, failure_reasons),
    LIST(VMP_HDR_LABELS, VMP_FIELD_LABELS, 0, "labels", header.labels, header.n_labels, 1, NULL),
    UINT(VMP_HDR_START_MONOTONIC, ALWAYS, "start_monotonic", header.start_monotonic_ns),
    TSTR(VMP_HDR_NAME_SEPARATOR, OPT, "name_separator", header.name_separator),
    UINT(VMP_HDR_SAMPLE_TIME_UNIT, OPT, "sample_time_unit", header.sample_time_unit_ns),
    LIST(VMP_HDR_SAMPLE_KINDS, VMP_FIELD_TSTRS, OPT, "sample_kinds", header.sample_kinds,
         header.n_sample_kinds, 1, NULL),
    LIST(VMP_HDR_SAMPLE_UNITS, VMP_FIELD_TSTRS, OPT, "sample_units", header.sample_units,
         header.n_sample_units, 1, NULL),
};
static const uint8_t header_print[] = {1,  2,  3,  4,  5,  17, 6,  7,  8,  9,  10,
                                       11, 12, 13, 14, 15, 16, 18, 19, 20, 21};

static const vmp_field end_fields[] = {
    UINT(VMP_END_TIME, ALWAYS, "time", end.time_ns),
    UINT(VMP_END_SAMPLES, ALWAYS, "samples", end.samples),
    UINT(VMP_END_DROPPED_FULL, 0, "dropped_full", end.dropped_full),
    UINT(VMP_END_DROPPED_WRITE, 0, "dropped_write", end.dropped_write),
    UINT(VMP_END_FAILED, 0, "failed", end.failed),
    UINT(VMP_END_CHUNKS, ALWAYS, "chunks", end.chunks),
    UINT(VMP_END_TRUNCATED_STACKS, 0, "truncated_stacks", end.truncated_stacks),
    UINT(VMP_END_GENERATION, ALWAYS, "generation", end.generation),
    UINT(VMP_END_KIND_SAMPLES, OPT, "kind_samples", end.kind_samples),
};
static const uint8_t end_print[] = {1, 2, 5, 3, 4, 6, 7, 8, 9};

static const vmp_field module_fields[] = {
    UINT(VMP_MOD_ID, REQ, "id", module.id),
    TSTR(VMP_MOD_PATH, 0, "path", module.path),
    LIST(VMP_MOD_BUILD_ID, VMP_FIELD_BSTR, 0, "build_id", module.build_id, module.build_id_size,
         1, NULL),
    UINT(VMP_MOD_BIAS, ADDR, "bias", module.bias),
    UINT(VMP_MOD_START, ADDR, "start", module.start),
    UINT(VMP_MOD_END, ADDR, "end", module.end),
};

static const vmp_field module_symbols_fields[] = {
    UINT(VMP_SYMS_MODULE, REQ, "module", module_symbols.module),
    LIST(VMP_SYMS_LIST, VMP_FIELD_SYMBOLS, 0, "symbols", module_symbols.symbols,
         module_symbols.n_symbols, 3, "(value+size:name)"),
};

/* time is stated unless the record tells the thread's end */
static const vmp_field thread_fields[] = {
    UINT(VMP_THR_ID, REQ, "id", thread.id),
    TSTR(VMP_THR_NAME, 0, "name", thread.name),
    UINT_UNLESS(VMP_THR_TIME, 0, "time", thread.time_ns, VMP_THR_END_TIME, NULL),
    UINT(VMP_THR_END_TIME, 0, "end_time", thread.end_time_ns),
};

static const vmp_field function_fields[] = {
    UINT(VMP_FN_ID, REQ, "id", function.id),
    TSTR(VMP_FN_NAME, 0, "name", function.name),
    TSTR(VMP_FN_SCOPE, 0, "scope", function.scope),
    TSTR(VMP_FN_SIGNATURE, 0, "signature", function.signature),
    TSTR(VMP_FN_FILE, 0, "file", function.file),
    UINT(VMP_FN_LINE, 0, "line", function.first_line),
    LIST(VMP_FN_LINES, VMP_FIELD_UINTS, 0, "lines", function.lines, function.n_lines, 2,
         "(bcpc:line)"),
    UINT(VMP_FN_BC_SIZE, 0, "bytecode_size", function.bytecode_size),
    UINT(VMP_FN_IS_CLASS, OPT, "is_class", function.is_class),
};
static const uint8_t function_print[] = {1, 2, 3, 4, 5, 6, 8, 9, 7};

static const vmp_field code_zone_fields[] = {
    UINT(VMP_ZONE_ID, REQ, "id", code_zone.id),
    TSTR(VMP_ZONE_NAME, 0, "name", code_zone.name),
    UINT(VMP_ZONE_START, ALWAYS | ADDR, "start", code_zone.start),
    UINT(VMP_ZONE_END, ALWAYS | ADDR, "end", code_zone.end),
};

static const vmp_field code_object_fields[] = {
    UINT(VMP_CODE_ID, REQ, "id", code_object.id),
    UINT(VMP_CODE_ZONE, 0, "zone", code_object.zone),
    UINT(VMP_CODE_KIND, 0, "kind", code_object.kind),
    TSTR(VMP_CODE_NAME, 0, "name", code_object.name),
    UINT(VMP_CODE_FUNCTION, 0, "function", code_object.function),
    UINT(VMP_CODE_START, REQ | ADDR, "start", code_object.start),
    UINT(VMP_CODE_SIZE, REQ, "size", code_object.size),
    UINT(VMP_CODE_GENERATION, ALWAYS, "gen", code_object.generation),
    UINT(VMP_CODE_TIER, 0, "tier", code_object.tier),
    PC_MAP(VMP_CODE_PC_MAP, code_object),
    INLINE(VMP_CODE_INLINE, code_object),
    UINT(VMP_CODE_TIME, ALWAYS, "time", code_object.time_ns),
};
static const uint8_t code_object_print[] = {1, 2, 3, 9, 4, 5, 6, 7, 8, 12, 10, 11};

static const vmp_field code_map_fields[] = {
    UINT(VMP_CMAP_ID, REQ, "id", code_map.id),
    PC_MAP(VMP_CMAP_PC_MAP, code_map),
    INLINE(VMP_CMAP_INLINE, code_map),
};

static const vmp_field code_snapshot_fields[] = {
    UINT(VMP_SNAP_ZONE, REQ, "zone", code_snapshot.zone),
    UINT(VMP_SNAP_GENERATION, REQ, "gen", code_snapshot.generation),
    LIST(VMP_SNAP_ENTRIES, VMP_FIELD_UINTS, ADDR, "entries", code_snapshot.entries,
         code_snapshot.n, 2, "(id:start)"),
    UINT(VMP_SNAP_TIME, ALWAYS, "time", code_snapshot.time_ns),
};
static const uint8_t code_snapshot_print[] = {1, 2, 4, 3};

static const vmp_field code_compaction_fields[] = {
    UINT(VMP_COMP_ZONE, REQ, "zone", code_compaction.zone),
    UINT(VMP_COMP_GENERATION, REQ, "gen", code_compaction.generation),
    LIST(VMP_COMP_MOVES, VMP_FIELD_UINTS, ADDR, "moves", code_compaction.moves,
         code_compaction.n_moves, 2, "(id:start)"),
    LIST(VMP_COMP_FREES, VMP_FIELD_UINTS, 0, "frees", code_compaction.frees,
         code_compaction.n_frees, 1, NULL),
    UINT(VMP_COMP_TIME, ALWAYS, "time", code_compaction.time_ns),
    UINT(VMP_COMP_DURATION, 0, "duration", code_compaction.duration_ns),
};
static const uint8_t code_compaction_print[] = {1, 2, 5, 6, 3, 4};

static const vmp_field code_free_fields[] = {
    UINT(VMP_FREE_GENERATION, REQ, "gen", code_free.generation),
    UINT(VMP_FREE_ID, REQ, "id", code_free.id),
    UINT(VMP_FREE_TIME, ALWAYS, "time", code_free.time_ns),
};

static const vmp_field code_move_fields[] = {
    UINT(VMP_MOVE_GENERATION, REQ, "gen", code_move.generation),
    UINT(VMP_MOVE_ID, REQ, "id", code_move.id),
    UINT(VMP_MOVE_START, REQ | ADDR, "start", code_move.new_start),
    UINT(VMP_MOVE_TIME, ALWAYS, "time", code_move.time_ns),
};

/* R-STK-1: exactly one of pc and function; is_function says which. */
static const vmp_field stack_node_fields[] = {
    UINT(VMP_NODE_ID, REQ, "id", stack_node.id),
    UINT(VMP_NODE_PARENT, 0, "parent", stack_node.parent),
    UINT_UNLESS(VMP_NODE_PC, VMP_FIELD_EXCLUSIVE | OPT | ADDR, "pc", stack_node.pc,
                VMP_NODE_FUNCTION, "R-STK-1"),
    UINT_HAS(VMP_NODE_FUNCTION, 0, "function", stack_node.function, stack_node.is_function),
    UINT_HAS(VMP_NODE_BCPC, 0, "bcpc", stack_node.bcpc, stack_node.has_bcpc),
};

/* SAMPLE and FAILED_SAMPLE share vmp_rec_sample; a reader accepts every key
 * of either in both (as 1.0 readers did), writers write each its own. */
#define SAMPLE_FIELDS(smp, fail) \
    {.key = VMP_SMP_TIME_DELTA, .kind = VMP_FIELD_TIME_DELTA, .group = 1, .name = "t", \
     .off = OFF(sample.time_ns), .rule = "R-SMP-1"}, \
    UINT(VMP_SMP_THREAD, ALWAYS, "thread", sample.thread), \
    UINT(VMP_SMP_STATE, 0, "state", sample.state), \
    UINT_HAS(VMP_SMP_PC, ADDR, "pc", sample.pc, sample.has_pc), \
    UINT(VMP_SMP_GENERATION, ALWAYS, "gen", sample.generation), \
    UINT(VMP_SMP_STACK, smp, "stack", sample.stack), \
    UINT_DFLT(VMP_SMP_WEIGHT, 0, "weight", sample.weight, 1), \
    UINT(VMP_SMP_BLAME, smp, "blame", sample.blame), \
    UINT(VMP_SMP_REASON, fail, "reason", sample.reason)

static const vmp_field sample_fields[] = {SAMPLE_FIELDS(0, VMP_FIELD_NOT_WRITTEN)};
static const vmp_field failed_sample_fields[] = {SAMPLE_FIELDS(VMP_FIELD_NOT_WRITTEN, 0)};
/* the in-VM writer writes blame before weight */
static const uint8_t sample_write[] = {1, 2, 3, 4, 5, 6, 8, 7, 9};

/* KIND_SAMPLE (2.1): a sample of a declared kind, its time absolute (spec
 * R-KND-2), in the members of vmp_rec_sample */
static const vmp_field kind_sample_fields[] = {
    UINT(VMP_KSMP_TIME, ALWAYS, "t", sample.time_ns),
    UINT(VMP_KSMP_THREAD, ALWAYS, "thread", sample.thread),
    UINT(VMP_KSMP_STATE, 0, "state", sample.state),
    UINT_HAS(VMP_KSMP_PC, ADDR, "pc", sample.pc, sample.has_pc),
    UINT(VMP_KSMP_GENERATION, ALWAYS, "gen", sample.generation),
    UINT(VMP_KSMP_STACK, 0, "stack", sample.stack),
    UINT_DFLT(VMP_KSMP_WEIGHT, 0, "weight", sample.weight, 1),
    {.key = VMP_KSMP_KIND, .kind = VMP_FIELD_UINT, .flags = REQ, .group = 1, .name = "kind",
     .off = OFF(sample.kind), .rule = "R-KND-2"},
};

/* SAMPLE_BLOCK (2.0): columns are arrays of uint or packed (spec §5.14);
 * the tables are arrays */
#define COLUMN(k, m) LIST(k, VMP_FIELD_COLUMN, 0, #m, sample_block.m, sample_block.n_##m, 1, NULL)
#define TABLE(k, m)  LIST(k, VMP_FIELD_UINTS, 0, #m, sample_block.m, sample_block.n_##m, 1, NULL)
static const vmp_field sample_block_fields[] = {
    LIST(VMP_BLK_TIMES, VMP_FIELD_INT_COLUMN, REQ, "times", sample_block.times,
         sample_block.n_times, 1, NULL),
    TABLE(VMP_BLK_THREADS, threads),
    COLUMN(VMP_BLK_THREAD, thread),
    TABLE(VMP_BLK_STACKS, stacks),
    COLUMN(VMP_BLK_STACK, stack),
    COLUMN(VMP_BLK_STATE, state),
    COLUMN(VMP_BLK_GENERATION, generation),
    COLUMN(VMP_BLK_WEIGHT, weight),
    COLUMN(VMP_BLK_BLAME, blame),
    LIST(VMP_BLK_PCS, VMP_FIELD_UINTS, ADDR, "pcs", sample_block.pcs, sample_block.n_pcs, 2,
         "(index:pc)"),
    LIST(VMP_BLK_FAILED, VMP_FIELD_UINTS, 0, "failed", sample_block.failed, sample_block.n_failed,
         2, "(index:reason)"),
    INT(VMP_BLK_TIME_BASE, 0, "time_base", sample_block.time_base, sample_block.time_base),
    LIST(VMP_BLK_CONTEXTS, VMP_FIELD_UINTS, 0, "contexts", sample_block.contexts,
         sample_block.n_contexts, 1, NULL),
    UINT_DFLT(VMP_BLK_CONTEXT_BASE, 0, "context_base", sample_block.context_base, 1),
    COLUMN(VMP_BLK_CONTEXT, context),
};

static const vmp_field event_fields[] = {
    UINT(VMP_EVT_TIME, ALWAYS, "t", event.time_ns),
    UINT(VMP_EVT_KIND, ALWAYS, "kind", event.kind),
    UINT(VMP_EVT_DURATION, 0, "duration", event.duration_ns),
    UINT(VMP_EVT_THREAD, 0, "thread", event.thread),
    INT(VMP_EVT_VALUE, VMP_FIELD_HAS | OPT, "value", event.value, event.has_value),
    TSTR(VMP_EVT_TEXT, 0, "text", event.text),
};

static const vmp_field counter_fields[] = {
    UINT(VMP_CTR_TIME, ALWAYS, "t", counter.time_ns),
    UINT(VMP_CTR_KIND, ALWAYS, "kind", counter.kind),
    INT(VMP_CTR_VALUE, ALWAYS, "value", counter.value, counter.value),
};

#define DESC(t, nm, member, f, print, write, note_) \
    [t] = {.type = (t), .name = (nm), .fields = (f), .n_fields = N_OF(f), .print_order = (print), \
           .write_order = (write), .size = sizeof(((vmp_record *)0)->u.member), .note = (note_)}

static const vmp_record_desc descs[VMP_REC_TYPE_MAX + 1] = {
    DESC(VMP_REC_HEADER, "HEADER", header, header_fields, header_print, NULL, NULL),
    DESC(VMP_REC_END, "END", end, end_fields, end_print, NULL, NULL),
    DESC(VMP_REC_MODULE, "MODULE", module, module_fields, NULL, NULL, NULL),
    DESC(VMP_REC_MODULE_SYMBOLS, "MODULE_SYMBOLS", module_symbols, module_symbols_fields, NULL,
         NULL, NULL),
    DESC(VMP_REC_THREAD, "THREAD", thread, thread_fields, NULL, NULL, NULL),
    DESC(VMP_REC_FUNCTION, "FUNCTION", function, function_fields, function_print, NULL, NULL),
    DESC(VMP_REC_CODE_ZONE, "CODE_ZONE", code_zone, code_zone_fields, NULL, NULL, NULL),
    DESC(VMP_REC_CODE_OBJECT, "CODE_OBJECT", code_object, code_object_fields, code_object_print,
         NULL, NULL),
    DESC(VMP_REC_CODE_SNAPSHOT, "CODE_SNAPSHOT", code_snapshot, code_snapshot_fields,
         code_snapshot_print, NULL, NULL),
    DESC(VMP_REC_CODE_COMPACTION, "CODE_COMPACTION", code_compaction, code_compaction_fields,
         code_compaction_print, NULL, NULL),
    DESC(VMP_REC_CODE_FREE, "CODE_FREE", code_free, code_free_fields, NULL, NULL, NULL),
    DESC(VMP_REC_CODE_MOVE, "CODE_MOVE", code_move, code_move_fields, NULL, NULL, NULL),
    DESC(VMP_REC_STACK_NODE, "STACK_NODE", stack_node, stack_node_fields, NULL, NULL,
         "exactly one of pc and function"),
    DESC(VMP_REC_SAMPLE, "SAMPLE", sample, sample_fields, NULL, sample_write, NULL),
    DESC(VMP_REC_FAILED_SAMPLE, "FAILED_SAMPLE", sample, failed_sample_fields, NULL, sample_write,
         NULL),
    DESC(VMP_REC_EVENT, "EVENT", event, event_fields, NULL, NULL, NULL),
    DESC(VMP_REC_COUNTER, "COUNTER", counter, counter_fields, NULL, NULL, NULL),
    DESC(VMP_REC_CODE_MAP, "CODE_MAP", code_map, code_map_fields, NULL, NULL,
         "format 1.2: a code object's maps, written after it"),
    DESC(VMP_REC_SAMPLE_BLOCK, "SAMPLE_BLOCK", sample_block, sample_block_fields, NULL, NULL,
         "format 2.0: samples column by column; read as SAMPLE records"),
    DESC(VMP_REC_KIND_SAMPLE, "KIND_SAMPLE", sample, kind_sample_fields, NULL, NULL,
         "format 2.1: a sample of a kind the header declares (bytes, ns waited)"),
};

/* clang-format on */

const vmp_record_desc *vmp_record_desc_of(uint64_t type)
{
    return type > 0 && type <= VMP_REC_TYPE_MAX ? &descs[type] : NULL;
}

const vmp_field *vmp_record_field(const vmp_record_desc *d, uint64_t key)
{
    size_t i;
    /* most tables list keys 1, 2, ... in order: try entry key-1 first */
    if (key >= 1 && key <= d->n_fields && d->fields[key - 1].key == key)
        return &d->fields[key - 1];
    for (i = 0; i < d->n_fields; i++) {
        if (d->fields[i].key == key)
            return &d->fields[i];
    }
    return NULL;
}

const char *vmp_record_type_name(int type)
{
    const vmp_record_desc *d = type > 0 ? vmp_record_desc_of((uint64_t)type) : NULL;
    return d ? d->name : "UNKNOWN";
}
