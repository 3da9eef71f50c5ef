/* SPDX-License-Identifier: MIT
 *
 * vmp_analyze.h - exact attribution of samples and aggregate profiles
 * (spec.md §5 "Generations", "Resolution of a pc", §5.11, §5.12).
 *
 * Two API families, both streaming over a vmp_reader in bounded memory (the
 * memory grows with code objects, symbols and distinct stacks, never with
 * samples):
 *
 *   resolution   vmp_analysis: loads the metadata of a file as its records
 *                stream by (code zones, code objects with their history across
 *                generations, functions, modules and their symbols, threads,
 *                the header's vocabulary) and resolves every sample through the
 *                code as it stood at the sample's generation.  Each sample is
 *                handed back, in file order, as a vmp_asample naming an interned
 *                resolved stack (vmp_astack) made of resolved frames
 *                (vmp_aframe: a function and a bytecode range) of resolved
 *                functions (vmp_afunction).  Converters (folded stacks, pprof)
 *                and filters build on this.
 *   aggregation  vmp_profile: feeds a vmp_analysis and sums sample weights per
 *                function, per frame (function and bytecode range), per thread,
 *                per VM state, per state x code class, per (stack, thread,
 *                state), plus GC, compaction, event and counter sections.
 *
 * Naming rules (the strings a report prints, and what tests compare):
 *   - a code object with a function: "<scope><separator><name>" when the
 *     function has a non-empty scope, with the header's name_separator, ">>"
 *     when it has none ("Integer>>benchFib", HotSpot "Demo.hotLoop"), else
 *     "<name>".  A hidden class's scope ("Name.0x00007f3c0c01e800",
 *     "Outer$$Lambda$14/0x...") counts without its suffix ("Name",
 *     "Outer$$Lambda"), so that its methods are one function, named with the
 *     number of functions that frames name under that name (spec R-RES-10):
 *     "Name.applyAsLong [x1000]" (the count as of the call of
 *     vmp_analysis_function(); flags
 *     VMP_ANALYSIS_NO_GROUP_HIDDEN, VMP_ANALYSIS_GROUP_NO_COUNT); the function's
 *     kind is the code object's kind name from the header ("method", "block",
 *     "closed PIC", ...; "kind#N" when the index is past the vocabulary);
 *   - a code object without a function: its own name ("code#ID" if empty);
 *   - a module symbol: its demangled name (vmp_demangle()), kind "C";
 *   - an address inside a module's mapping [start, end) that no symbol
 *     covers: "<basename of the module's path>+0x<address - bias>"
 *     ("module#<id>+0x..." without a path), kind "C", code class
 *     VMP_CLASS_NATIVE with the module's id (spec "Resolution of a pc");
 *   - a symbolic stack frame (function id + bcpc): the function's name as
 *     above, kind "function", code class VMP_CLASS_SYMBOLIC, range "b->b"
 *     when its bcpc b is known (outer frames always; the innermost frame
 *     unless the rules below give it another kind);
 *   - anything else: "[unknown]", kind "unknown".
 * A sample's pc and its symbolic innermost frame (function F, bcpc b): when
 * a sample has both, they describe one activation (spec §5.11 "Frame
 * order"), and the innermost frame combines them.  The pc resolves at the
 * sample's generation (as any innermost frame, at its own address); then,
 * first rule that applies:
 *   1. the pc lies in a code object whose inlining record (§5.7) at that
 *      pc has an inline chain of depth >= 2 whose innermost function is F:
 *      F, kind "inlined", code class VMP_CLASS_GENERATED, range "c->c" with
 *      c the record's bcpc for F (no range when that is unknown);
 *   2. the pc lies in a code object whose function is F: that code object's
 *      frame, i.e. F with the code object's kind ("nmethod", "method") and
 *      the pc map's range, exactly as the pc alone resolves;
 *   3. the pc lies in a code object whose kind name is "interpreter" (the
 *      conventional name, spec §5.1): F, kind "interpreted", code class
 *      VMP_CLASS_GENERATED, range: the run of F's line table (§5.5) that
 *      holds b, from its first bcpc to the bcpc before the next line starts
 *      (the function's bytecode_size - 1 after the last line, or b when
 *      that is unknown or not past b), so that samples of one source line
 *      add up; "b->b" when F has no line table or b precedes it; no range
 *      when b is unknown (spec R-RES-11);
 *   4. otherwise (the pc in C code, a stub, another function's code, or
 *      unknown): the symbolic frame, kind "function".
 *   "Same function" means equal function ids or two FUNCTION records with
 *   the same full name.  The code kinds "inlined" and "interpreted" take
 *   the header's code-kind index of that name as their code_kind when the
 *   vocabulary has one, else VMP_CODE_KIND_NONE.  A sample whose innermost
 *   frame is symbolic and that has no pc keeps the symbolic frame.
 * Thread names: the first non-empty name a THREAD record gave the thread
 * (a record without a name renames nothing, spec R-ID-3);
 * when a later record renamed it, "first (latest)": HotSpot renames its
 * main thread at exit, so it reads "main (DestroyJavaVM)".
 * Bytecode ranges "A->B" (inside a code object with a pc map): A is the bcpc of
 * the pc-map entry with the greatest mcpc offset <= pc - start (the last such
 * entry when several share the offset); B is the next entry's bcpc - 1 when
 * that bcpc is > A, else A; for the last entry B is the function's
 * bytecode_size - 1 when that is >= A, else A.  A pc before the first entry,
 * or in a code object without pc map, has no range.  The innermost frame of a
 * stack resolves at its address; every other machine frame is a return
 * address and resolves at address - 1.
 *
 * Thread safety: an analysis or profile is used by one thread at a time.
 * Nothing here is async-signal-safe.
 */
#ifndef VMP_ANALYZE_H
#define VMP_ANALYZE_H

#include <stddef.h>
#include <stdint.h>

#include "vmp_reader.h"
#include "vmp_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Demangling ------------------------------------------------------------ */

/** Demangle an Itanium C++ ABI symbol name ("_ZN2vm2gc7collectEv" ->
 *  "vm::gc::collect()") with the C++ runtime's demangler (__cxa_demangle, as
 *  c++filt shows names: templates, operators, clone suffixes
 *  " [clone .cold]").  Names longer than 4096 bytes are not demangled.
 *
 * @param[out] out  buffer for the NUL-terminated result; may be NULL when
 *                  `size` is 0.
 * @param size      bytes at `out`.
 * @param name      NUL-terminated mangled name; borrowed.
 * @return the length of the demangled name (not counting the NUL; the result
 *         is cut to fit when it is >= size), or 0 when `name` is not a
 *         mangled name, does not demangle, or memory ran out (callers then
 *         show it raw).
 * Thread safety: any thread.  Not async-signal-safe (allocates). */
VMP_API size_t vmp_demangle(char *out, size_t size, const char *name);

/* ---- Resolution ------------------------------------------------------------ */

typedef struct vmp_analysis vmp_analysis;

/** What kind of code a resolved function is. */
enum vmp_code_class {
    VMP_CLASS_UNKNOWN = 0,   /* a pc in neither a code object nor a symbol */
    VMP_CLASS_GENERATED = 1, /* a code object: JIT-generated code */
    VMP_CLASS_NATIVE = 2,    /* a module symbol: the VM's own C code, libraries */
    VMP_CLASS_SYMBOLIC = 3   /* a symbolic stack frame (function id + bcpc) */
};

#define VMP_CODE_KIND_NONE UINT32_MAX

/** A resolved function; id 0 is never used.  Strings are owned by the
 *  analysis and valid until vmp_analysis_free(). */
typedef struct vmp_afunction {
    const char *name;       /* see "Naming rules" above */
    const char *kind;       /* code kind name, "inlined", "interpreted", "C",
                               "function" or "unknown" */
    int code_class;         /* enum vmp_code_class */
    uint32_t code_kind;     /* header code-kind index, VMP_CODE_KIND_NONE if not generated */
    uint64_t function_id;   /* FUNCTION id, 0 == none */
    uint64_t module_id;     /* MODULE id for VMP_CLASS_NATIVE, else 0 */
    uint64_t bytecode_size; /* 0 == unknown */
    /* CODE_ZONE id of the code object resolved to this function first, for
     * the code objects' functions (functions are shared by name and kind, so
     * code of one name in two zones counts under the first); 0 for the
     * others ("inlined", "interpreted", C, symbolic, unknown) and for code
     * objects without a zone.  Added in 0.2. */
    uint64_t zone_id;
    /* For a "<module>+0x<offset>" function (an address in a module that no
     * symbol covers): the runtime address it was first resolved at (the
     * address looked up: a return address minus 1); else 0.  Added in 0.2. */
    uint64_t address;
    /* For a grouped name (hidden classes, see "Naming rules"): its members
     * that frames name, as shown in the name; else 0.  Added in 0.3. */
    uint32_t members;
    /* For a C function (VMP_CLASS_NATIVE) named by a symbol: the symbol's
     * raw (mangled) name, of the first symbol resolved to it; else NULL.
     * Added in 0.4. */
    const char *raw_name;
} vmp_afunction;

/** A resolved frame: a function and, when known, a bytecode range. */
typedef struct vmp_aframe {
    uint32_t function; /* vmp_afunction id */
    int has_range;
    uint32_t bc_first; /* A of "A->B" */
    uint32_t bc_last;  /* B of "A->B" */
} vmp_aframe;

/** A node of the resolved stack tree; id 0 is the empty stack. */
typedef struct vmp_astack {
    uint32_t parent; /* caller's node, 0 == outermost */
    uint32_t frame;  /* vmp_aframe id */
    uint32_t depth;  /* 1 for an outermost frame */
} vmp_astack;

/** One sample as resolved, in file order. */
typedef struct vmp_asample {
    uint64_t time_ns;
    uint64_t thread;
    uint64_t generation; /* the sample's generation (even under a fixed generation) */
    uint64_t weight;     /* the record's weight; 0 counts 0 samples */
    uint64_t pc;         /* valid when has_pc */
    uint64_t blame;      /* code id, 0 == none */
    uint32_t state;      /* index into the header's states */
    uint32_t reason;     /* failure reason index, when failed */
    int failed;          /* a FAILED_SAMPLE */
    int has_pc;
    uint32_t stack; /* resolved stack (innermost node), 0 == none (failed or empty) */
    /* resolved frame of the executing pc, 0 == none (no pc and no stack; a
     * failed sample's pc that resolves to nothing, spec R-VIEW-1) */
    uint32_t leaf;
    /* The code object (code id) whose placement at the sample's generation
     * holds its pc (a failed sample's too): the JIT unit it ran in; 0 when
     * it has no pc or its pc is in no generated code.  Added in 0.5. */
    uint64_t code;
    /* The record's sample context id (vmp_rec_sample's `context`), 0 for
     * none.  Added in 0.5. */
    uint64_t context;
    /* The sample's kind (spec §5.15): 0 for the CPU samples, else the
     * KIND_SAMPLE's kind (the header's kind index + 1; UINT32_MAX past it).
     * Its weight is in the kind's unit.  Added in 0.6. */
    uint32_t kind;
} vmp_asample;

/** Analysis options.  Zero means default for every field but `version`. */
typedef struct vmp_analysis_options {
    unsigned int version; /* VMP_ANALYSIS_OPTIONS_VERSION */
    unsigned int flags;   /* VMP_ANALYSIS_* */
    /* With VMP_ANALYSIS_FIXED_GENERATION: resolve every pc at this generation
     * instead of the sample's (what a single end-of-run snapshot would say). */
    uint64_t fixed_generation;
    /* Stack nodes resolved per stack (0: VMP_ANALYSIS_DEFAULT_MAX_DEPTH; at
     * least 2).  A deeper stack keeps its innermost max_stack_depth - 1
     * frames under one root frame "[truncated N frames]" (kind
     * "truncated", class VMP_CLASS_UNKNOWN; N = the nodes left out), as
     * other profilers cap depth; vmp_analysis_stats.truncated_stacks counts
     * them.  Memory and time then grow with the kept frames, never with a
     * stack's depth. */
    uint64_t max_stack_depth;
    /* What the analysis retains, bounded as the reader bounds what it reads
     * (0: the process default of vmp_analysis_set_defaults(), else the
     * built-in VMP_ANALYSIS_DEFAULT_*).  Past a limit the analysis stops:
     * vmp_analysis_feed() returns VMP_ERR_LIMIT from then on and
     * vmp_analysis_errmsg() names the limit.  The built-in values fit a
     * laptop (measured peak RSS of `vmp report` at the limit, in the issue
     * notes and tests/hostile):
     *   max_code_history  code placements: one per CODE_OBJECT and one per
     *                     move (CODE_MOVE, each move of a CODE_COMPACTION or
     *                     CODE_SNAPSHOT), kept delta-encoded: 2 to 4 bytes
     *                     for a compaction that slides code in order, 16
     *                     at most; 16Mi take 32 to 64 MB, 270 MB at most;
     *   max_symbols       module symbols (MODULE_SYMBOLS entries): 40 bytes
     *                     each, about 100 with their names, 250 MB at 2Mi;
     *   max_stack_nodes   STACK_NODE records and
     *   max_stacks        distinct resolved stacks (after generations and
     *                     names): a node with its stack, caches and
     *                     weights takes about 480 bytes, 1 GB at 2Mi. */
    uint64_t max_code_history;
    uint64_t max_symbols;
    uint64_t max_stack_nodes;
    uint64_t max_stacks;
    /* The kind of sample the analysis delivers (spec §5.15; version 2):
     * NULL (the process default of vmp_analysis_set_default_kind(), else
     * "cpu") or "cpu": the CPU samples (SAMPLE, FAILED_SAMPLE, blocks); the
     * name of one of the header's sample kinds ("alloc", "lock"): its
     * KIND_SAMPLE records; when the header does not declare it, feeding the
     * header fails with VMP_ERR_LIMIT, the analysis stops, and
     * vmp_analysis_errmsg() says so and lists the file's kinds (a view of a
     * kind the file lacks would show nothing, misleadingly).
     * The samples of the other kinds are counted
     * (vmp_analysis_kinds()) but never delivered, so that no view adds one
     * kind to another (R-KND-3); with VMP_ANALYSIS_ALL_KINDS every sample is
     * delivered, its kind in vmp_asample.kind.  Borrowed: the string lives
     * as long as the analysis.  Added in 0.6. */
    const char *kind;
} vmp_analysis_options;

/* Version 2 added `kind`; version 1 structures are accepted as before. */
#define VMP_ANALYSIS_OPTIONS_VERSION 2
#define VMP_ANALYSIS_OPTIONS_INIT                               \
    {                                                           \
        VMP_ANALYSIS_OPTIONS_VERSION, 0, 0, 0, 0, 0, 0, 0, NULL \
    }
/* The built-in defaults of vmp_analysis_options. */
#define VMP_ANALYSIS_DEFAULT_MAX_DEPTH        65536u
#define VMP_ANALYSIS_DEFAULT_MAX_CODE_HISTORY (16u << 20)
#define VMP_ANALYSIS_DEFAULT_MAX_SYMBOLS      (2u << 20)
#define VMP_ANALYSIS_DEFAULT_MAX_STACK_NODES  (2u << 20)
#define VMP_ANALYSIS_DEFAULT_MAX_STACKS       (2u << 20)
#define VMP_ANALYSIS_FIXED_GENERATION         1u
/* Expand machine frames through the code objects' inlining records (§5.7):
 * a pc inside inlined code gets, above its code object's frame, one frame per
 * inlined function (outer to inner), of kind "inlined" and code class
 * VMP_CLASS_GENERATED, with the range "bcpc->bcpc".  The innermost inlined
 * function then is the sample's leaf.  (Symbolic stacks need no expansion:
 * their writer lists inlined functions as frames; the innermost one is
 * matched against the records whatever the flags, see the naming rules.) */
#define VMP_ANALYSIS_INLINES 2u
/* Show the functions of hidden classes apart, each under its own scope
 * ("Name.0x00007f3c0c01e800.applyAsLong"), instead of grouped. */
#define VMP_ANALYSIS_NO_GROUP_HIDDEN 4u
/* Group hidden classes without the member count in the name (to compare two
 * profiles by name, whose counts differ). */
#define VMP_ANALYSIS_GROUP_NO_COUNT 8u
/* Deliver the samples of every kind (spec §5.15), each with its
 * vmp_asample.kind, for a view that shows each kind apart (pprof). */
#define VMP_ANALYSIS_ALL_KINDS 16u

/** Create an empty analysis.
 * @param[out] out  receives the analysis; the caller frees it with
 *                  vmp_analysis_free().  Untouched on failure.
 * @param opts      options, or NULL for defaults; borrowed for the call.
 * @return VMP_OK, VMP_ERR_NOMEM or VMP_ERR_INVALID_ARG. */
VMP_API vmp_status vmp_analysis_create(vmp_analysis **out, const vmp_analysis_options *opts);

/** Set the process-wide defaults that analyses created afterwards use for
 *  the fields their own options leave 0, and whose `flags` they add to their
 *  own (NULL: back to the built-in values); `version` must be
 *  VMP_ANALYSIS_OPTIONS_VERSION.  Meant for a
 *  program's start (`vmp --limit`): not thread-safe against
 *  vmp_analysis_create(). */
VMP_API void vmp_analysis_set_defaults(const vmp_analysis_options *opts);

/** Add `flags` (VMP_ANALYSIS_*) to the process-wide defaults' flags, keeping
 *  the rest: for a program's options (`--no-group-hidden`).  Not thread-safe
 *  against vmp_analysis_create(). */
VMP_API void vmp_analysis_add_default_flags(unsigned int flags);

/** The limit that stopped the analysis ("analysis limit 'history' reached:
 *  more than N code placements ..."), or "" when none did.  Borrowed. */
VMP_API const char *vmp_analysis_errmsg(const vmp_analysis *a);

/** Release an analysis and every string and table it lent.  Accepts NULL. */
VMP_API void vmp_analysis_free(vmp_analysis *a);

/** Take in one record, as delivered by vmp_reader_next().  Metadata records
 *  update the tables; a SAMPLE or FAILED_SAMPLE is resolved into `*sample_out`
 *  and `*is_sample_out` is set to 1 (else 0).
 * @param rec            borrowed for the call.
 * @param[out] sample_out  receives a resolved sample; may be NULL to ignore samples.
 * @param[out] is_sample_out  may be NULL.
 * @return VMP_OK, VMP_ERR_NOMEM, VMP_ERR_LIMIT (a limit of the options was
 *         reached: vmp_analysis_errmsg() says which; every later call returns
 *         it too), or VMP_ERR_CORRUPT for records that break the spec in a
 *         way that prevents resolution (a code id defined twice). */
VMP_API vmp_status vmp_analysis_feed(vmp_analysis *a, const vmp_record *rec,
                                     vmp_asample *sample_out, int *is_sample_out);

/** Read records from `r` until the next sample, feeding every record.
 * @return VMP_OK with `*out` filled, VMP_END at the end of input, or an error
 *         (a reader error: see vmp_reader_errmsg()). */
VMP_API vmp_status vmp_analysis_next(vmp_analysis *a, vmp_reader *r, vmp_asample *out);

/** Resolve a sample record against the metadata fed so far, without feeding
 *  it (vmp_analysis_feed() calls this for samples).  `failed` != 0 for a
 *  FAILED_SAMPLE.  @return VMP_OK or VMP_ERR_NOMEM. */
VMP_API vmp_status vmp_analysis_resolve_sample(vmp_analysis *a, const vmp_rec_sample *s, int failed,
                                               vmp_asample *out);

/** One kind of sample (spec §5.15) and what the analysis was fed of it. */
typedef struct vmp_akind {
    const char *name; /* "cpu" (kind 0), the header's name, or "kind#N" (undeclared) */
    const char *unit; /* "samples" (kind 0: samples of the header's interval), the
                         header's unit, or "count" */
    uint64_t records; /* sample records fed (delivered or not) */
    uint64_t weight;  /* their weights summed (saturating) */
} vmp_akind;

/** The sample kinds, indexed by kind: 0 the CPU samples, then the header's
 *  kinds in order (each listed even before a sample), then kinds that no
 *  header declared but a KIND_SAMPLE named (up to kind 65535; higher ones
 *  count as 65535).  `*n_out` receives the count (at least 1).  Borrowed:
 *  valid until the next feed.  Added in 0.6. */
VMP_API const vmp_akind *vmp_analysis_kinds(vmp_analysis *a, size_t *n_out);

/** The kind the analysis delivers (its options' `kind`, resolved by the
 *  header's names): 0 for the CPU samples, else the header's kind index +
 *  1; -1 when the header does not declare the kind asked for (the
 *  analysis then delivers no sample), -2 with VMP_ANALYSIS_ALL_KINDS.
 *  Added in 0.6. */
VMP_API int64_t vmp_analysis_kind_selected(const vmp_analysis *a);

/** Set the kind that analyses created afterwards with a NULL `kind` deliver
 *  (vmp_analysis_options.kind); NULL restores "cpu".  Borrowed: `name`
 *  must outlive those analyses.  Not thread-safe: call it before creating
 *  analyses (a command's option parsing).  Added in 0.6. */
VMP_API void vmp_analysis_set_default_kind(const char *name);

/** Resolve one machine address at `generation` (the fixed generation
 *  option does not apply).  `return_address` != 0 resolves at pc - 1.
 * @param[out] frame_out  receives the resolved frame id (never 0).
 * @return VMP_OK or VMP_ERR_NOMEM. */
VMP_API vmp_status vmp_analysis_resolve_pc(vmp_analysis *a, uint32_t *frame_out, uint64_t pc,
                                           uint64_t generation, int return_address);

/** Tables, borrowed from the analysis: valid until the next feed (ids stay
 *  valid for the life of the analysis; only the returned pointers may move)
 *  or vmp_analysis_free().  Ids past the count return NULL. */
VMP_API size_t vmp_analysis_function_count(const vmp_analysis *a); /* ids 1 .. count-1 */
VMP_API const vmp_afunction *vmp_analysis_function(const vmp_analysis *a, uint32_t id);
VMP_API size_t vmp_analysis_frame_count(const vmp_analysis *a);
VMP_API const vmp_aframe *vmp_analysis_frame(const vmp_analysis *a, uint32_t id);
VMP_API size_t vmp_analysis_stack_count(const vmp_analysis *a);
VMP_API const vmp_astack *vmp_analysis_stack(const vmp_analysis *a, uint32_t id);

/** The HEADER record as seen, or NULL before it.  Strings borrowed as above. */
VMP_API const vmp_rec_header *vmp_analysis_header(const vmp_analysis *a);
/** The END record, or NULL when the file has none (yet). */
VMP_API const vmp_rec_end *vmp_analysis_end(const vmp_analysis *a);

/** Name of VM state `state` from the header; "state#N" past the vocabulary.
 *  Borrowed; valid until vmp_analysis_free(). */
VMP_API const char *vmp_analysis_state_name(vmp_analysis *a, uint32_t state);
/** Name of code zone `id` (its CODE_ZONE record), "zone#ID" when no record
 *  named it.  Borrowed; valid until vmp_analysis_free().  Added in 0.2. */
VMP_API const char *vmp_analysis_zone_name(vmp_analysis *a, uint64_t id);
/** Path of module `id` (its MODULE record), "module#ID" when no record gave
 *  one.  Borrowed; valid until vmp_analysis_free().  Added in 0.2. */
VMP_API const char *vmp_analysis_module_name(vmp_analysis *a, uint64_t id);
/** The name a JIT unit (code object `code_id`, at any generation) is listed
 *  under: the code object's own name (a LuaJIT trace's "TRACE 1 hot.lua:12
 *  loop"), else its resolved function's name (a HotSpot nmethod's method);
 *  code objects of one name are one unit.  NULL when no CODE_OBJECT record
 *  defined `code_id`, or out of memory.  Borrowed; valid until
 *  vmp_analysis_free().  Added in 0.5. */
VMP_API const char *vmp_analysis_unit_name(vmp_analysis *a, uint64_t code_id);
/** The resolved function (vmp_afunction id, named as the naming rules say)
 *  of the code object `code_id` fed so far, at any generation: a code id is
 *  never reused, so a freed code object still answers (this is how a
 *  sample's `blame` resolves).  @return 0 when no CODE_OBJECT record defined
 *  `code_id`, or out of memory.  Added in 0.2. */
VMP_API uint32_t vmp_analysis_code_function(vmp_analysis *a, uint64_t code_id);
/** Name of thread `id`: the first non-empty name of its THREAD records, as
 *  "first (latest)" when a later record renamed it (see "Thread names"
 *  above), or "thread#ID" when it has none.  Borrowed; valid until
 *  vmp_analysis_free().  Changed in 0.1: was the latest name. */
VMP_API const char *vmp_analysis_thread_name(vmp_analysis *a, uint64_t id);
/** Name of event kind, counter kind or failure reason, "event#N" etc. past
 *  the vocabulary. */
VMP_API const char *vmp_analysis_event_kind_name(vmp_analysis *a, uint32_t kind);
VMP_API const char *vmp_analysis_counter_kind_name(vmp_analysis *a, uint32_t kind);
VMP_API const char *vmp_analysis_failure_reason_name(vmp_analysis *a, uint32_t reason);

/** Source lines of the bytecode range [first, last] of function
 *  `function_id` (a FUNCTION id, as vmp_afunction.function_id), from its
 *  line table (spec §5.5: the line of bcpc b is that of the pair with the
 *  greatest bcpc <= b).
 * @param[out] lo_out  receives the smallest line of a bcpc in the range; may be NULL.
 * @param[out] hi_out  receives the greatest; may be NULL.
 * @return 1 when known; 0 (outputs untouched) when the function is unknown,
 *         has no line table, `first` precedes its first entry or last < first.
 * Added in 0.1. */
VMP_API int vmp_analysis_lines(const vmp_analysis *a, uint64_t function_id, uint32_t first,
                               uint32_t last, uint64_t *lo_out, uint64_t *hi_out);

/** Format a frame as "name" or "name A->B" into `out` (cut to fit, NUL
 *  terminated).  @return the full length. */
VMP_API size_t vmp_analysis_format_frame(const vmp_analysis *a, char *out, size_t size,
                                         uint32_t frame);

/* ---- The VM's view (spec R-VIEW-7) ---------------------------------------
 *
 * The frames as a programmer of the VM's language reads them: a VM frame is
 * a frame of a FUNCTION (vmp_afunction.function_id != 0: a symbolic frame,
 * a code object with a function, a function inlined or interpreted).  The
 * view of a stack keeps the VM frames, drops the other frames outer of its
 * innermost VM frame, and inner of it keeps the frames that have a name of
 * their own (a C function named by a symbol, a code object) while a frame
 * that only its module and offset name, or "[unknown]", becomes the frame
 * "[<vm> <state>]" (the header's vm_name, "vm" when empty, and the sample's
 * state: "[LuaJIT gc]"), one for several in a row.  The frames of labels
 * are resolved frames like the others: their function has kind "vm state",
 * code class VMP_CLASS_UNKNOWN.  Added in 0.7. */

/** 1 when resolved frame `frame` is a VM frame, else 0 (0 and ids past the
 *  count too). */
VMP_API int vmp_analysis_is_vm_frame(const vmp_analysis *a, uint32_t frame);

/** The innermost VM frame of resolved stack `stack`, or 0 when it has none.
 *  If `own_out` is not NULL it receives 1 when that frame is the stack's
 *  innermost one (its own code ran), else 0. */
VMP_API uint32_t vmp_analysis_vm_frame(const vmp_analysis *a, uint32_t stack, int *own_out);

/** The frame "[<vm> <state>]" of VM state `state` (named as
 *  vmp_analysis_state_name() names it), interned on first use.
 *  @return the frame id, or 0 on no memory. */
VMP_API uint32_t vmp_analysis_vm_state_frame(vmp_analysis *a, uint32_t state);

/** What frame `frame` shows as in the view, inner of the innermost VM frame
 *  of a sample in state `state` (a failed sample's frame of its pc): itself
 *  when it is a VM frame or has a name of its own, else the state's frame.
 *  @return a frame id; 0 for `frame` 0, or on no memory. */
VMP_API uint32_t vmp_analysis_vm_leaf(vmp_analysis *a, uint32_t frame, uint32_t state);

/** The view of resolved stack `stack` of a sample in state `state`, as a
 *  resolved stack (interned like the others: stack ids stay valid).
 * @param[out] out  receives the stack id; 0 for `stack` 0.
 * @return VMP_OK, VMP_ERR_NOMEM, or VMP_ERR_LIMIT (the stacks limit of the
 *         options; vmp_analysis_errmsg() says so). */
VMP_API vmp_status vmp_analysis_vm_stack(vmp_analysis *a, uint32_t stack, uint32_t state,
                                         uint32_t *out);

/** Statistics of the resolution machinery (for benchmarks and tuning). */
typedef struct vmp_analysis_stats {
    uint64_t code_objects;        /* CODE_OBJECT records */
    uint64_t placements;          /* (address, generation range) placements kept */
    uint64_t symbols;             /* module symbols */
    uint64_t generation;          /* latest change generation seen */
    uint64_t cache_hits;          /* samples whose stack was resolved by one lookup */
    uint64_t cache_misses;        /* (stack node, generation) pairs resolved */
    uint64_t index_builds;        /* per-generation indexes built for older generations */
    uint64_t memory_bytes;        /* bytes held by the tables, roughly */
    uint64_t truncated_stacks;    /* (stack, generation) pairs deeper than max_stack_depth,
                                     resolved with a "[truncated N frames]" root */
    uint64_t generation_reuses;   /* (stack node, generation) pairs answered by the
                                     node's resolution at an older generation: no
                                     code under its frames changed in between */
    uint64_t checkpoint_restarts; /* lookups at an older generation than the last one
                                     that replayed the code history from a checkpoint,
                                     not its start.  Added in 0.5. */
} vmp_analysis_stats;

VMP_API void vmp_analysis_get_stats(const vmp_analysis *a, vmp_analysis_stats *out);

/* ---- Aggregation ----------------------------------------------------------- */

/* A profile sums samples by their distinct keys as they are fed; the
 * getters below fold those sums into their tables when called after a feed.
 * So no getter may run at the same time as another call on the same profile
 * (one thread at a time, as for every call on a profile). */
typedef struct vmp_profile vmp_profile;

/** Per event kind (or compaction records) totals. */
typedef struct vmp_profile_events {
    uint64_t count;
    uint64_t total_duration_ns;
} vmp_profile_events;

/** Per counter kind. */
typedef struct vmp_profile_counter {
    uint64_t count;
    int64_t first, last, min, max;
} vmp_profile_counter;

/** Totals of a profile.  Weights are sample counts times record weights. */
typedef struct vmp_profile_totals {
    uint64_t samples;       /* weight of SAMPLE and FAILED_SAMPLE */
    uint64_t failed;        /* weight of FAILED_SAMPLE */
    uint64_t generated;     /* weight whose executing pc is generated code */
    uint64_t native;        /* ... a module symbol (C) */
    uint64_t unknown;       /* ... neither, or no pc */
    uint64_t first_time_ns; /* time of the first sample */
    uint64_t last_time_ns;  /* time of the last sample or END */
    uint64_t generations;   /* latest generation */
    uint64_t compactions;   /* CODE_COMPACTION records */
    uint64_t compaction_ns; /* their total duration */
    uint64_t code_frees;    /* CODE_FREE records and compaction frees */
    uint64_t code_moves;    /* CODE_MOVE records and compaction moves */
    uint64_t records;
} vmp_profile_totals;

/** Create an empty profile with its own analysis (options as for
 *  vmp_analysis_create()).  @param[out] out caller frees with vmp_profile_free(). */
VMP_API vmp_status vmp_profile_create(vmp_profile **out, const vmp_analysis_options *opts);

/** Release a profile and its analysis.  Accepts NULL. */
VMP_API void vmp_profile_free(vmp_profile *p);

/** Feed one record (as vmp_analysis_feed()) and add samples to the totals. */
VMP_API vmp_status vmp_profile_feed(vmp_profile *p, const vmp_record *rec);

/** Feed every record of `r` until its end.
 * @return VMP_OK at a clean end, or the reader's or analysis's error (the
 *         profile then holds what came before the error). */
VMP_API vmp_status vmp_profile_read(vmp_profile *p, vmp_reader *r);

/** The profile's analysis: names, frames, stacks.  Borrowed. */
VMP_API vmp_analysis *vmp_profile_analysis(const vmp_profile *p);

VMP_API const vmp_profile_totals *vmp_profile_get_totals(const vmp_profile *p);

/** Weight per resolved function / frame whose pc was executing (the leaf),
 *  indexed by id; `*n_out` receives the array's length.  Borrowed. */
VMP_API const uint64_t *vmp_profile_function_weights(const vmp_profile *p, size_t *n_out);
VMP_API const uint64_t *vmp_profile_frame_weights(const vmp_profile *p, size_t *n_out);

/** Weight per VM state index (indexes above 65535 are counted as 65535, as
 *  are failure reasons); per state and code class
 *  (`[state * 4 + class]`, class as enum vmp_code_class). */
VMP_API const uint64_t *vmp_profile_state_weights(const vmp_profile *p, size_t *n_out);
VMP_API const uint64_t *vmp_profile_state_class_weights(const vmp_profile *p, size_t *n_out);
/** Weight per failure reason index. */
VMP_API const uint64_t *vmp_profile_failure_weights(const vmp_profile *p, size_t *n_out);

/** The i-th thread seen (in order of first sample): id and weight.
 *  @return 1 when `i` is valid, else 0. */
VMP_API int vmp_profile_thread(const vmp_profile *p, size_t i, uint64_t *id_out,
                               uint64_t *weight_out);

/** Per event kind totals, indexed by kind; per counter kind. */
VMP_API const vmp_profile_events *vmp_profile_event_totals(const vmp_profile *p, size_t *n_out);
VMP_API const vmp_profile_counter *vmp_profile_counters(const vmp_profile *p, size_t *n_out);

/** Weight of samples whose executing frame is not generated code (code
 *  class other than VMP_CLASS_GENERATED: interpreter, GC, primitives, C,
 *  symbolic frames, unknown pcs, failed samples) per (blame, state): blame
 *  is the sample's blame code id (spec §5.12 key 8, the last exited JIT
 *  unit), 0 when it carried none.  This is the "time blamed on JIT units"
 *  matrix; its weights sum to totals.samples - totals.generated. */
typedef struct vmp_profile_blame {
    uint64_t code;  /* blamed code id (vmp_analysis_code_function()), 0 == none */
    uint32_t state; /* VM state index (capped as vmp_profile_state_weights()) */
    uint64_t weight;
} vmp_profile_blame;

/** The (blame, state) cells, in order of first occurrence; `*n_out`
 *  receives their count.  Borrowed: valid until the next feed or
 *  vmp_profile_free().  Added in 0.2. */
VMP_API const vmp_profile_blame *vmp_profile_blame_weights(const vmp_profile *p, size_t *n_out);
/** Weight of the samples that carried a blame (whatever their executing
 *  code): 0 when the file has no blame at all.  Added in 0.2. */
VMP_API uint64_t vmp_profile_blamed_samples(const vmp_profile *p);

/** Weight of the samples whose pc ran in code object `code`
 *  (vmp_asample.code): the JIT units' own time.  Sums to the samples with
 *  such a pc. */
typedef struct vmp_profile_code {
    uint64_t code; /* code id */
    uint64_t weight;
} vmp_profile_code;

/** The code objects that samples ran in, in order of first sample; `*n_out`
 *  receives their count.  Borrowed: valid until the next feed or
 *  vmp_profile_free().  Added in 0.5. */
VMP_API const vmp_profile_code *vmp_profile_code_weights(const vmp_profile *p, size_t *n_out);

/** One distinct (resolved stack, thread, state) with its weight. */
typedef struct vmp_profile_stack_entry {
    uint32_t stack;
    uint32_t state;
    uint64_t thread;
    uint64_t weight;
} vmp_profile_stack_entry;

/** Call `fn` for every distinct (stack, thread, state) of non-failed samples
 *  that have a stack, in an unspecified but deterministic order.  Samples
 *  with the empty stack (id 0) are not visited: their weight is the
 *  difference between the totals and the sum of the visited entries.  A
 *  non-zero return from `fn` stops the walk and is returned. */
VMP_API int vmp_profile_foreach_stack(const vmp_profile *p,
                                      int (*fn)(const vmp_profile_stack_entry *e, void *payload),
                                      void *payload);

/** One distinct key of the samples fed: what a sample is summed under, with
 *  the samples of the key.  A converter builds its own aggregates from the
 *  keys (per key, not per sample). */
typedef struct vmp_profile_key {
    uint32_t stack;  /* vmp_asample's: resolved stack, 0 == none (always 0 when failed) */
    uint32_t leaf;   /* resolved frame of the executing pc, 0 == none */
    uint32_t state;  /* the samples' state, as they had it (not capped) */
    uint32_t reason; /* failure reason index when failed, else 0 */
    uint64_t thread;
    uint64_t code;    /* code object the pc ran in, 0 == none */
    uint64_t weight;  /* of the key's samples */
    uint64_t samples; /* sample records of the key (weight 0 ones too) */
    int failed;       /* FAILED_SAMPLE records */
    /* The samples' kind (vmp_asample.kind; spec §5.15): 0 unless the
     * analysis delivers other kinds (VMP_ANALYSIS_ALL_KINDS), whose keys
     * are apart by kind; the profile's totals and tables then sum weights
     * of different units, and only the keys say which is which.  Added in
     * 0.6. */
    uint32_t kind;
} vmp_profile_key;

/** The distinct keys of the samples fed, in order of first sample; `*n_out`
 *  receives their count.  Their weights sum to totals.samples.  Borrowed:
 *  valid until the next feed or vmp_profile_free().  Added in 0.5. */
VMP_API const vmp_profile_key *vmp_profile_keys(const vmp_profile *p, size_t *n_out);

/** The VM's view (spec R-VIEW-7) of profile key `k`, in place: a failed
 *  key's frame of its pc as vmp_analysis_vm_leaf() shows it, any other
 *  key's stack as vmp_analysis_vm_stack() makes it, both in the key's state.
 *  `a` is the profile's analysis (vmp_profile_analysis()).
 * @return VMP_OK, VMP_ERR_NOMEM or VMP_ERR_LIMIT (`k` partly changed).
 *  Added in 0.7. */
VMP_API vmp_status vmp_analysis_vm_key(vmp_analysis *a, vmp_profile_key *k);

/* ---- Repeated runs: which change is real -----------------------------------
 *
 * vmp_diffstat() compares two groups of runs (BASE and NEW, one or more
 * profiles each) function by function and says which changes of share stand
 * out of the noise.  The model (docs/diff-statistics.md): for run r of a side
 * and function f, the share p_r = w_rf / W_r (self: f is the innermost frame;
 * total: f anywhere on the stack, once per sample).  A side's share is the
 * mean m of its runs' p_r; the variance of m is the larger of
 *   between-run:  s^2 / n   (s^2 the sample variance of the p_r, n >= 2), and
 *   sampling:     p0 (1 - p0) mean_r(1 / W_r) / n   (p0 the share pooled over
 *                 both sides: the binomial noise of counting samples when
 *                 nothing changed),
 * since the spread between runs already holds their sampling noise but five
 * runs can underestimate it.  The difference d = m_new - m_base has variance
 * v_base + v_new; t = d / sqrt(v) with Welch-Satterthwaite degrees of freedom
 * (n - 1 per side whose variance came from the runs; a side on the sampling
 * floor counts as normal), two-sided p-value from Student's t.  Self and
 * total are tested for every function: 2 x F tests, adjusted by
 * Benjamini-Hochberg at `alpha`; a function is significant when either is.
 * The interval is d +- t_(1 - alpha/2, df) sqrt(v) (not adjusted). */

/** One run's per-function weights: the input of vmp_diffstat(). */
typedef struct vmp_run_weights {
    uint64_t total;          /* the run's total sample weight (failed samples included) */
    size_t n;                /* functions */
    char **names;            /* n names (as `vmp diff` names frames) */
    uint64_t *self;          /* n self weights */
    uint64_t *inclusive;     /* n total weights (once per sample) */
    unsigned char *is_range; /* n flags: 1 for a bytecode range row ("name A->B"),
                              * 0 for a function; NULL == all functions.  Added
                              * in 0.5 (vmp_run_weights_read() sets it). */
} vmp_run_weights;

/** Release what vmp_run_weights_read() or the caller allocated with malloc()
 *  in `w` (names, self, inclusive, is_range); leaves it empty.  Accepts NULL. */
VMP_API void vmp_run_weights_free(vmp_run_weights *w);

/** One function of a repeated-run comparison.  Shares in [0, 1]. */
typedef struct vmp_diffstat_row {
    const char *name;          /* borrowed from the runs */
    double self[2], total[2];  /* mean share: [0] BASE, [1] NEW */
    double d_self, d_total;    /* NEW - BASE */
    double self_lo, self_hi;   /* (1 - alpha) interval of d_self */
    double total_lo, total_hi; /* ... of d_total */
    double p_self, p_total;    /* two-sided p-values, before adjustment */
    double q_self, q_total;    /* Benjamini-Hochberg adjusted p-values */
    double score;              /* the larger |t|: rows are sorted by it */
    int significant;           /* 1: self, 2: total, 3: both (q <= alpha) */
} vmp_diffstat_row;

/** Compare runs[0 .. n_base) (BASE) with runs[n_base .. n_base + n_new)
 *  (NEW) as described above.  Rows: every function with weight in some run;
 *  first those whose self share changed significantly, then those whose
 *  total share alone did (a callee's change), then the others; each group by
 *  decreasing score, then by name.
 * @param alpha  in (0, 1).
 * @param[out] out    receives an array the caller frees with free(); names
 *                    borrowed from `runs`.
 * @param[out] n_out  its length.
 * @return VMP_OK, VMP_ERR_NOMEM or VMP_ERR_INVALID_ARG (no run on a side). */
VMP_API vmp_status vmp_diffstat(const vmp_run_weights *runs, size_t n_base, size_t n_new,
                                double alpha, vmp_diffstat_row **out, size_t *n_out);

/** One side of the test of one share (self or total) of one function, by
 *  the sums it needs: vmp_diffstat() fills it from the runs, `vmp archive
 *  trend` from running sums, to test every split of a series in time linear
 *  in its length. */
typedef struct vmp_share_side {
    size_t n;     /* runs, at least 1 */
    double mean;  /* the mean of their shares p_r */
    double ss;    /* sum over r of (p_r - mean)^2 */
    double inv_w; /* sum over r of 1 / W_r (1 for a run of weight 0) */
} vmp_share_side;

/** The difference of one share between two sides, as above: `pooled` is p0.
 * @param[out] t_abs  |t| (0 when nothing differs, INFINITY when the
 *                    variance is 0 and the means differ).
 * @param[out] p      NULL, or receives the two-sided p-value (what costs:
 *                    the t distribution's tail).
 * @param[out] df     NULL, or receives the Welch-Satterthwaite degrees of
 *                    freedom (0: normal).
 * @param[out] se     NULL, or receives the standard error sqrt(v).
 *  Pure; thread-safe.  Added in 0.8. */
VMP_API void vmp_share_test(const vmp_share_side *base, const vmp_share_side *new_side,
                            double pooled, double *t_abs, double *p, double *df, double *se);

#ifdef __cplusplus
}
#endif

#endif
