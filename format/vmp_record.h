/* SPDX-License-Identifier: MIT
 *
 * vmp_record.h - the decoded form of every record type of spec.md §5
 * (vmp_record), shared by the reader, which produces it, and the tools that
 * encode it again (analyze/vmp_record_writer.h).
 *
 * Strings and arrays are borrowed: whoever fills a vmp_record says how long
 * its pointers stay valid (the reader: until its next vmp_reader_next()).
 * Declarations, and the record registry (vmp_record.c): every record type's
 * name and fields; no dependencies beyond the C library.
 */
#ifndef VMP_RECORD_H
#define VMP_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "vmp_format.h"
#include "vmp_status.h" /* VMP_API */

#ifdef __cplusplus
extern "C" {
#endif

/** A string from the file: NUL-terminated copy, `len` bytes before the NUL
 *  (the text itself may contain NUL bytes; `len` is authoritative). */
typedef struct vmp_str {
    const char *s; /* never NULL: "" when absent */
    size_t len;
} vmp_str;

typedef struct vmp_rec_header {
    vmp_str producer, vm_name, vm_version, clock;
    uint64_t pid, start_realtime_ns, start_monotonic_ns, clock_res_ns, interval_ns, pointer_size;
    const vmp_str *states;
    size_t n_states;
    const vmp_str *code_kinds;
    size_t n_code_kinds;
    const vmp_str *tiers;
    size_t n_tiers;
    const vmp_str *event_kinds;
    size_t n_event_kinds;
    const vmp_str *counter_kinds;
    size_t n_counter_kinds;
    const vmp_str *failure_reasons;
    size_t n_failure_reasons;
    const vmp_str *labels; /* key, value, key, value, ...: 2 * n_labels */
    size_t n_labels;
    vmp_str name_separator;       /* 1.1; "" when absent (display names then use ">>") */
    uint64_t sample_time_unit_ns; /* 2.0: unit of SAMPLE_BLOCK time deltas; 0 (absent) == 1 */
    const vmp_str *sample_kinds;  /* 2.1: names of sample kinds 1 .. n_sample_kinds */
    size_t n_sample_kinds;
    const vmp_str *sample_units; /* 2.1: their units, in the same order (may be fewer) */
    size_t n_sample_units;
} vmp_rec_header;

typedef struct vmp_rec_end {
    uint64_t time_ns, samples, dropped_full, dropped_write, failed, chunks, truncated_stacks,
        generation;
    uint64_t kind_samples; /* 2.1: KIND_SAMPLE records */
} vmp_rec_end;

typedef struct vmp_rec_module {
    uint64_t id, bias, start, end;
    vmp_str path;
    const uint8_t *build_id;
    size_t build_id_size;
} vmp_rec_module;

typedef struct vmp_rec_symbol {
    uint64_t value, size;
    vmp_str name;
} vmp_rec_symbol;

typedef struct vmp_rec_module_symbols {
    uint64_t module;
    const vmp_rec_symbol *symbols;
    size_t n_symbols;
} vmp_rec_module_symbols;

typedef struct vmp_rec_thread {
    uint64_t id, time_ns, end_time_ns; /* 0 == absent */
    vmp_str name;
} vmp_rec_thread;

typedef struct vmp_rec_function {
    uint64_t id;
    vmp_str name, scope, signature, file;
    uint64_t first_line, bytecode_size;
    const uint64_t *lines; /* n_lines pairs (bcpc, line) */
    size_t n_lines;
    uint64_t is_class; /* 2.1: 1 == a class (spec R-KND-4), not code */
} vmp_rec_function;

typedef struct vmp_rec_code_zone {
    uint64_t id, start, end;
    vmp_str name;
} vmp_rec_code_zone;

typedef struct vmp_rec_inline {
    uint64_t mcpc_offset;
    const uint64_t *frames; /* depth pairs (function id, bcpc), innermost first */
    size_t depth;
} vmp_rec_inline;

typedef struct vmp_rec_code_object {
    uint64_t id, zone, kind, function, start, size, generation, time_ns;
    uint64_t tier; /* 0 == absent, else index into header tiers + 1 */
    vmp_str name;
    const uint64_t *pc_map; /* pc_map_len pairs (mcpc offset from start, bcpc);
                               the reader has undone the delta encoding */
    size_t pc_map_len;
    const vmp_rec_inline *inlines;
    size_t n_inlines;
} vmp_rec_code_object;

/** CODE_MAP (1.2): the pc_map and inline of code object `id`, in the forms
 *  of vmp_rec_code_object's (spec R-CODE-3). */
typedef struct vmp_rec_code_map {
    uint64_t id;
    const uint64_t *pc_map; /* pc_map_len pairs (mcpc offset from start, bcpc) */
    size_t pc_map_len;
    const vmp_rec_inline *inlines;
    size_t n_inlines;
} vmp_rec_code_map;

/** SAMPLE_BLOCK (2.0, spec §5.14) as it is on disk.  vmp_reader_next() never
 *  delivers one: it delivers its samples as SAMPLE records (R-BLK-1).  A
 *  column has one item (every sample's) or n_times items. */
typedef struct vmp_rec_sample_block {
    const int64_t *times; /* n_times time deltas less time_base, in the header's
                             sample_time_unit */
    size_t n_times;
    int64_t time_base;
    const uint64_t *threads, *thread, *stacks, *stack, *state, *generation, *weight, *blame;
    size_t n_threads, n_thread, n_stacks, n_stack, n_state, n_generation, n_weight, n_blame;
    const uint64_t *pcs; /* n_pcs pairs (sample index, pc) */
    size_t n_pcs;
    const uint64_t *failed; /* n_failed pairs (sample index, reason) */
    size_t n_failed;
    const uint64_t *contexts; /* n_contexts uints: (stack, state, pc) triples (R-BLK-5) */
    size_t n_contexts;
    uint64_t context_base;   /* the id of the first triple */
    const uint64_t *context; /* column: context ids, 0 = none */
    size_t n_context;
} vmp_rec_sample_block;

typedef struct vmp_rec_code_snapshot {
    uint64_t zone, generation, time_ns;
    const uint64_t *entries; /* n pairs (code id, start) */
    size_t n;
} vmp_rec_code_snapshot;

typedef struct vmp_rec_code_compaction {
    uint64_t zone, generation, time_ns, duration_ns;
    const uint64_t *moves; /* n_moves pairs (code id, new start) */
    size_t n_moves;
    const uint64_t *frees; /* n_frees code ids */
    size_t n_frees;
} vmp_rec_code_compaction;

typedef struct vmp_rec_code_free {
    uint64_t generation, id, time_ns;
} vmp_rec_code_free;

typedef struct vmp_rec_code_move {
    uint64_t generation, id, new_start, time_ns;
} vmp_rec_code_move;

typedef struct vmp_rec_stack_node {
    uint64_t id, parent;
    int is_function; /* 0: machine frame `pc`; 1: `function` at `bcpc` */
    uint64_t pc, function;
    int has_bcpc;
    uint64_t bcpc;
} vmp_rec_stack_node;

/** SAMPLE, FAILED_SAMPLE and (2.1) KIND_SAMPLE. */
typedef struct vmp_rec_sample {
    uint64_t time_ns; /* since time origin; the reader has summed the deltas */
    uint64_t thread, state, pc, generation, stack, weight, blame, reason;
    int has_pc; /* pc key present */
    /* A sample of a SAMPLE_BLOCK without a pc of its own (spec R-BLK-3): its
     * pc is the innermost stack node's when that is a machine frame, which
     * a caller that keeps stack nodes resolves (the analysis does); has_pc
     * is 0.  Always 0 for SAMPLE and FAILED_SAMPLE records.  Added in 0.5. */
    int pc_is_leaf;
    /* The sample context (spec R-BLK-5) of a SAMPLE_BLOCK sample whose
     * stack, state and pc are all its context's, else 0 (always 0 for
     * SAMPLE and FAILED_SAMPLE records).  Ids are scoped to the file: the
     * samples of one file with one context id have one stack, state and pc,
     * so a consumer may key what it derives from them by the id; one that
     * changes a sample's stack, state or pc sets it to 0.  Added in 0.5. */
    uint64_t context;
    /* KIND_SAMPLE (spec §5.15): its kind, >= 1 in a valid file; 0 for
     * SAMPLE and FAILED_SAMPLE records (the CPU samples).  Added in 0.6. */
    uint64_t kind;
} vmp_rec_sample;

typedef struct vmp_rec_event {
    uint64_t time_ns, kind, duration_ns, thread;
    int64_t value;
    int has_value;
    vmp_str text;
} vmp_rec_event;

typedef struct vmp_rec_counter {
    uint64_t time_ns, kind;
    int64_t value;
} vmp_rec_counter;

/** Pseudo-type for a record of a type this reader does not know. */
#define VMP_REC_UNKNOWN 0

/** One decoded record.  Every pointer inside lends the reader's memory and
 *  stays valid until the next vmp_reader_next() or vmp_reader_close(). */
typedef struct vmp_record {
    int type;               /* enum vmp_record_type, or VMP_REC_UNKNOWN */
    uint64_t raw_type;      /* the type number on disk (differs for UNKNOWN) */
    uint64_t chunk_index;   /* 0-based index of the chunk holding the record */
    uint64_t chunk_offset;  /* file offset of that chunk's zstd frame */
    uint64_t record_offset; /* offset of the record inside the decompressed chunk */
    uint64_t unknown_keys;  /* map keys skipped because this reader does not know them */

    union {
        vmp_rec_header header;
        vmp_rec_end end;
        vmp_rec_module module;
        vmp_rec_module_symbols module_symbols;
        vmp_rec_thread thread;
        vmp_rec_function function;
        vmp_rec_code_zone code_zone;
        vmp_rec_code_object code_object;
        vmp_rec_code_map code_map;
        vmp_rec_sample_block sample_block; /* decoded, never delivered */
        vmp_rec_code_snapshot code_snapshot;
        vmp_rec_code_compaction code_compaction;
        vmp_rec_code_free code_free;
        vmp_rec_code_move code_move;
        vmp_rec_stack_node stack_node;
        vmp_rec_sample sample; /* SAMPLE, FAILED_SAMPLE and KIND_SAMPLE */
        vmp_rec_event event;
        vmp_rec_counter counter;
    } u;
} vmp_record;

/* ---- The record registry ---------------------------------------------------
 *
 * One description of every record type of spec.md §5: its name and its
 * fields, each with its map key, its CBOR form, where its value lives in
 * vmp_record, its default, whether it is required, how `vmp decode` prints it
 * and the spec rule that governs it.  The reader decodes with it
 * (reader/vmp_records.c), the generic encoder encodes with it
 * (format/vmp_record_encode.c), `vmp decode` prints with it, its --help lists
 * it.  A new key is one line here (plus its number in vmp_format.h and its
 * row in spec.md).  All tables are static and constant: any thread. */

/** The CBOR form of a field on disk and its C form in vmp_record. */
typedef enum vmp_field_kind {
    VMP_FIELD_UINT,       /* uint -> uint64_t at off */
    VMP_FIELD_INT,        /* int -> int64_t at off */
    VMP_FIELD_TIME_DELTA, /* int on disk: the time since the previous sample of
                             the chunk (R-SMP-1); absolute uint64_t at off */
    VMP_FIELD_TSTR,       /* tstr -> vmp_str at off; absent == "" */
    VMP_FIELD_BSTR,       /* bstr -> const uint8_t * at off, size_t at aux */
    VMP_FIELD_UINTS,      /* array of uint in groups of `group` -> const
                             uint64_t * at off, number of groups (size_t) at aux */
    VMP_FIELD_PC_MAP,     /* as UINTS with group 2, but the first of each pair
                             is a delta from the previous pair's on disk (§5.7);
                             in C the offsets are absolute */
    VMP_FIELD_TSTRS,      /* array of tstr -> const vmp_str * at off, count at aux */
    VMP_FIELD_LABELS,     /* map tstr -> tstr -> const vmp_str * at off (key,
                             value, ...), number of pairs at aux */
    VMP_FIELD_SYMBOLS,    /* flat triples (uint, uint, tstr) -> const
                             vmp_rec_symbol * at off, count at aux */
    VMP_FIELD_INLINE,     /* array of [offset, f1, b1, f2, b2, ...] -> const
                             vmp_rec_inline * at off, count at aux */
    VMP_FIELD_INTS,       /* array of int -> const int64_t * at off, count at aux */
    VMP_FIELD_COLUMN,     /* array of uint, or a packed column (byte string of
                             byte planes, spec §5.14) -> as UINTS, group 1 */
    VMP_FIELD_INT_COLUMN  /* array of int, or a packed column of uint -> as INTS */
} vmp_field_kind;

/** Field flags. */
enum {
    /** R-REC-4: a record without the key is invalid; encoders always write it. */
    VMP_FIELD_REQUIRED = 1,
    /** `vmp decode` prints it in 0x hex (text); for pairs, their second member. */
    VMP_FIELD_ADDRESS = 2,
    /** Decoded into the shared C struct, but not a key of this record type as
     *  written: never encoded, never printed (SAMPLE reason, FAILED_SAMPLE
     *  stack and blame). */
    VMP_FIELD_NOT_WRITTEN = 4,
    /** UINT or INT whose presence is the int at aux: the reader sets it to 1,
     *  encoders write the key exactly when it is set (whatever the value). */
    VMP_FIELD_HAS = 8,
    /** Encoders write it when the field with key `other` is not written, or
     *  when its own value is not its default (STACK_NODE pc: a machine frame
     *  is the node that is not a function; THREAD time: stated unless the
     *  record tells an end). */
    VMP_FIELD_UNLESS = 16,
    /** `vmp decode` prints it only when an encoder would write it (and its
     *  --help shows it in brackets). */
    VMP_FIELD_OPTIONAL = 32,
    /** Encoders write it even when it has its default (HEADER pid, pointer
     *  size and time origin, sample thread and generation, ...: what the
     *  in-VM writer always states). */
    VMP_FIELD_ALWAYS = 64,
    /** With UNLESS: a record must hold exactly one of this key and `other`
     *  (the reader rejects both and neither, under the field's rule). */
    VMP_FIELD_EXCLUSIVE = 128
};

/** One key of a record type. */
typedef struct vmp_field {
    uint8_t key;       /* its map key (vmp_format.h) */
    uint8_t kind;      /* vmp_field_kind */
    uint8_t flags;     /* VMP_FIELD_* above */
    uint8_t group;     /* values per item: UINTS 1 or 2, PC_MAP 2, SYMBOLS 3, else 1 */
    uint8_t other;     /* UNLESS: the key it stands in for */
    const char *name;  /* as `vmp decode` prints it, text and JSON */
    size_t off;        /* offsetof(vmp_record, u.<member>) of the value */
    size_t aux;        /* offset of the count (see kinds) or of the HAS flag */
    uint64_t dflt;     /* UINT: the value when the key is absent */
    const char *shape; /* for --help: how an item prints ("(id:start)"), or NULL */
    const char *rule;  /* the spec rule a bad value breaks (NULL: R-REC-4) */
} vmp_field;

/** One record type. */
typedef struct vmp_record_desc {
    int type;                /* enum vmp_record_type */
    const char *name;        /* as spec.md Appendix A writes it */
    const vmp_field *fields; /* in key order */
    size_t n_fields;
    const uint8_t *print_order; /* keys in `vmp decode`'s order, n_fields of
                                   them; NULL: key order */
    const uint8_t *write_order; /* keys in the order encoders write them (any
                                   order is valid, R-REC-1; this one is the
                                   in-VM writer's), n_fields; NULL: key order */
    size_t size;                /* bytes of its member of vmp_record.u */
    const char *note;           /* for --help, or NULL */
} vmp_record_desc;

/** The description of record type `type`, or NULL for a type this library
 *  does not know.  Static storage; any thread. */
VMP_API const vmp_record_desc *vmp_record_desc_of(uint64_t type);

/** The field of `d` with map key `key`, or NULL. */
VMP_API const vmp_field *vmp_record_field(const vmp_record_desc *d, uint64_t key);

/** Whether an encoder writes field `f` (of rec's type) of `rec`, by its
 *  flags and default; `prev_time` is the time a sample's delta is from.
 *  `vmp decode` prints an OPTIONAL field only then.  Any thread. */
VMP_API int vmp_record_field_present(const vmp_record *rec, const vmp_field *f, uint64_t prev_time);

/** The name of record type `type` as spec.md Appendix A writes it
 *  ("CODE_OBJECT"), or "UNKNOWN" for a type this library does not know.
 *  Static storage; any thread. */
VMP_API const char *vmp_record_type_name(int type);

#ifdef __cplusplus
}
#endif

#endif
