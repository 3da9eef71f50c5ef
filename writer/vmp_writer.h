/* SPDX-License-Identifier: MIT
 *
 * vmp_writer.h - the embedded profile writer: the only vmp library a VM links.
 *
 * A VM opens one writer per profile, describes its code as it changes (code
 * zones, code objects, compactions, frees, moves, functions, threads, modules)
 * and calls vmp_writer_sample() from its sampling signal handler.  A background
 * thread owned by the writer interns stacks, encodes records as CBOR,
 * compresses chunks with zstd and writes them (spec.md).
 *
 * API families:
 *   open / close             vmp_writer_open(), vmp_writer_open_fd(), vmp_writer_close()
 *   the sample path          vmp_writer_sample(), vmp_writer_failed_sample(),
 *                            vmp_writer_generation(), vmp_writer_stats()
 *   code and metadata        vmp_writer_code_zone(), vmp_writer_code_add(), ...
 *   control                  vmp_writer_flush()
 *
 * Generations: the writer keeps one generation counter for all zones, starting
 * at 0.  Every free, move, compaction and snapshot increments it and returns
 * the new value; a sample records the generation it was taken under, and a
 * reader resolves its pc through the code as it stood at that generation.
 *
 * Errors: functions return vmp_status.  After a write error the writer stops
 * output for good (VMP_ERR_CLOSED from then on), counts what it loses, and
 * keeps accepting calls so that the VM runs on.  The error is reported once
 * as VMP_ERR_IO by the next vmp_writer_flush() and again by
 * vmp_writer_close(); its errno is in vmp_writer_totals.write_errno.  The
 * writer never prints and never changes signal dispositions: a host that
 * must survive RLIMIT_FSIZE ignores SIGXFSZ itself (write() then fails with
 * EFBIG, which the writer handles like ENOSPC).
 *
 * Threads: the writer runs one background thread, created with every signal
 * blocked, so the VM's sampling signal is never delivered to it.
 * writer/README.md states the signal-safety contract and the ordering
 * guarantee in full.
 */
#ifndef VMP_WRITER_H
#define VMP_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "vmp_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vmp_writer vmp_writer;

/** Options for vmp_writer_open().  Zero means "default" for every field
 *  except `version`; start from VMP_WRITER_OPTIONS_INIT. */
typedef struct vmp_writer_options {
    unsigned int version;  /* VMP_WRITER_OPTIONS_VERSION */
    size_t chunk_bytes;    /* uncompressed bytes that close a chunk; 0 == 1 MiB */
    uint32_t chunk_age_ms; /* age that closes a non-empty chunk; 0 == 1000,
                              VMP_WRITER_NO_AGE_LIMIT == never */
    int zstd_level;        /* 0 == 3 */
    uint32_t ring_slots;   /* samples the ring holds; 0 == 8192 (rounded up to a power of 2,
                              at most 2^24) */
    uint32_t max_depth;    /* frames kept per sample (the innermost ones); deeper stacks are
                              cut and counted; 0 == 128; more than 65536 is invalid */
    /* Clock for sample and record times, in nanoseconds.  NULL == CLOCK_MONOTONIC.
     * Must be async-signal-safe and never decrease.  A deterministic clock (a
     * simulator's virtual time) together with VMP_WRITER_NO_AGE_LIMIT makes
     * the output a function of the calls made. */
    uint64_t (*clock)(void *clock_ud);
    void *clock_ud;
    const char *clock_name; /* for the header; NULL == "monotonic" (or "custom") */
    int no_seek_table;      /* 1 == do not append the seek table at close */
    /* 1 == keep FUNCTION records back until a STACK_NODE, CODE_OBJECT or
     * inline record names them, and write only those (each before its first
     * use, spec.md R-ID-2): a VM may then describe every method it loads
     * and the file holds those its profile needs.  A function that a record
     * named before the VM described it is written when described.  Added
     * in 0.3. */
    int lazy_functions;
    /* 1 == keep the symbols of modules added afterwards back and write, just
     * before the first STACK_NODE or sample that needs them, only the
     * symbols that its pcs resolve to (spec.md R-RES-6: the symbol a reader
     * chooses with the full table, and the one that ends it when its size is
     * 0), so that those pcs resolve as with the full tables.  Stack nodes
     * written before their module was added get theirs before the first
     * sample after it.  Added in 0.3. */
    int lazy_symbols;
    /* 1 == write each code object's pc_map and inline records in a CODE_MAP
     * record (format 1.2) only before the first sample whose pc, machine
     * frames or blame land in the code (or before the code moves), with the
     * FUNCTION records they name when lazy_functions is set, so that the
     * file holds the maps of the code its samples ran; CODE_OBJECT records
     * and code changes are still written as they happen, so generations stay
     * exact (spec.md R-CODE-3).  Added in 0.4. */
    int lazy_code_maps;
    /* The file's format major: 0 == 2, the default: samples in SAMPLE_BLOCK
     * records, column by column (format 2.0, spec.md §5.14; 1.x readers
     * refuse the file): varying columns packed in byte planes, stack and
     * thread ids as they are; a block closes when another record that
     * changes resolution comes, with its chunk, or at 1024 samples.
     * Samples without a pc whose innermost frame is a machine frame stay
     * SAMPLE records.  1 == format 1.x (SAMPLE records only), for readers
     * older than 2.0.  Anything else is invalid.  Added in 0.5. */
    unsigned int format_major;
    /* Format 2: the unit of the blocks' sample times, ns; 1000 stores them
     * in microseconds, each within 1 us of the clock's reading (spec.md
     * §5.1 key 19).  0 == 1000 when meta's sample_interval_ns is 10 us or
     * more, else 1 (a microsecond would blur a finer sampler's times); 1
     * keeps nanoseconds.  Added in 0.5. */
    uint64_t sample_time_unit_ns;
    /* Sample kinds other than CPU time (format 2.1, spec.md §5.15): the
     * names of kinds 1 .. n_sample_kinds ("alloc", "live", "lock"; never
     * "cpu", none empty, none twice) and the unit of each one's weights
     * ("bytes", "nanoseconds"; NULL == "count"), for
     * vmp_writer_kind_sample().  Borrowed for the call of vmp_writer_open().
     * Kinds need format 2 (format_major 1 with kinds is invalid).  Read
     * only when `version` is 2 or more.  Added in 0.6. */
    const char *const *sample_kinds;
    const char *const *sample_units; /* NULL, or n_sample_kinds units */
    size_t n_sample_kinds;
    /* Permission bits of the file vmp_writer_open() writes (0 to 0777, no
     * set-id or sticky bits): 0 == 0600, for a profile holds the command
     * line, labels and symbol names.  Set on the file whether it is created
     * or was there (the umask does not narrow it).  Read only when
     * `version` is 3 or more (0600 below).  Added in 0.7. */
    unsigned int file_mode;
} vmp_writer_options;

#define VMP_WRITER_OPTIONS_VERSION 3
#define VMP_WRITER_OPTIONS_INIT                                                                    \
    {                                                                                              \
        VMP_WRITER_OPTIONS_VERSION, 0, 0, 0, 0, 0, NULL, NULL, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, \
            0, 0                                                                                   \
    }
#define VMP_WRITER_DEFAULT_FILE_MODE 0600
#define VMP_WRITER_NO_AGE_LIMIT      UINT32_MAX

/** What the header record says about the VM (spec.md §5.1).  Every field may
 *  be zero/NULL.  Strings and arrays are borrowed for the duration of the call. */
typedef struct vmp_writer_meta {
    const char *vm_name; /* "HotSpot", "Cog", ... */
    const char *vm_version;
    uint64_t pid;                /* 0 == getpid() */
    uint64_t sample_interval_ns; /* 0 == unknown */
    const char *const *states;   /* VM states: index is the value in samples */
    size_t n_states;
    const char *const *code_kinds; /* code object kinds */
    size_t n_code_kinds;
    const char *const *tiers; /* JIT tiers */
    size_t n_tiers;
    const char *const *event_kinds;
    size_t n_event_kinds;
    const char *const *counter_kinds;
    size_t n_counter_kinds;
    const char *const *failure_reasons; /* why a stack walk can fail */
    size_t n_failure_reasons;
    const char *const *labels; /* key, value, key, value, ...: 2 * n_labels strings */
    size_t n_labels;
    /* How the VM writes a qualified name: the text between a function's
     * scope and its name ("." for HotSpot, ">>" for Smalltalk; spec.md
     * §5.1, R-RES-2).  NULL or "": none written (readers use ">>"), and the
     * file stays a 1.0 file. */
    const char *name_separator;
} vmp_writer_meta;

/** Point the list `field` of a vmp_writer_meta `meta` at the array `array`
 *  (not a pointer) and set its count n_<field>:
 *  VMP_WRITER_META_LIST(meta, states, my_states). */
#define VMP_WRITER_META_LIST(meta, field, array) \
    ((meta).field = (array), (meta).n_##field = sizeof(array) / sizeof((array)[0]))

/** Open a writer that creates (or truncates) the file at `path`.
 *
 * Writes the file header, starts the background thread, and allocates every
 * buffer the sample path will ever use.
 *
 * Safe in a directory others can write to (/tmp): the last component of
 * `path` is never followed if it is a symbolic link (errno ELOOP), and a
 * file already there is truncated only if it is a regular file of one link
 * owned by the caller's effective user (else errno EPERM, or EINVAL for a
 * FIFO, socket, block device or directory; nothing is truncated).  The
 * file gets opts->file_mode (0600 by default).  A character device
 * (/dev/null) is written as it is.  A file this call creates is removed
 * again when the open fails after (the header could not be written: a full
 * disk).
 *
 * @param[out] out  receives the writer on success; untouched on failure.  The
 *                  caller owns it and releases it with vmp_writer_close().
 * @param path      file to create; borrowed.
 * @param meta      header contents, or NULL; borrowed.
 * @param opts      options, or NULL for defaults; borrowed.
 * @return VMP_OK, VMP_ERR_INVALID_ARG, VMP_ERR_NOMEM or VMP_ERR_IO.
 *
 * Thread safety: any thread, once per writer.  Not async-signal-safe.
 */
VMP_API vmp_status vmp_writer_open(vmp_writer **out, const char *path, const vmp_writer_meta *meta,
                                   const vmp_writer_options *opts);

/** As vmp_writer_open(), writing to the open descriptor `fd` instead.  The
 *  descriptor is borrowed: the writer never closes it; it must stay open until
 *  vmp_writer_close() returns. */
VMP_API vmp_status vmp_writer_open_fd(vmp_writer **out, int fd, const vmp_writer_meta *meta,
                                      const vmp_writer_options *opts);

/* ---- The sample path --------------------------------------------------- */

/** Kind of a vmp_frame. */
enum vmp_frame_kind {
    VMP_FRAME_PC = 0,      /* `value` is a machine pc (a return address past frame 0) */
    VMP_FRAME_FUNCTION = 1 /* `value` is a function id, `bcpc` a bytecode pc */
};

#define VMP_BCPC_NONE UINT32_MAX

/** One stack frame. */
typedef struct vmp_frame {
    uint64_t value; /* pc or function id, see `kind` */
    uint32_t bcpc;  /* VMP_BCPC_NONE == unknown; ignored for VMP_FRAME_PC */
    uint32_t kind;  /* enum vmp_frame_kind */
} vmp_frame;

#define VMP_GENERATION_CURRENT UINT64_MAX

/** One sample.  frames[0] is the innermost (executing) frame. */
typedef struct vmp_sample {
    uint64_t thread;         /* the VM's thread id */
    uint64_t pc;             /* machine pc at the interrupt; 0 == unknown */
    uint64_t generation;     /* VMP_GENERATION_CURRENT == the writer's current one */
    uint64_t blame;          /* code id of the last exited JIT unit; 0 == none */
    uint32_t state;          /* index into meta.states */
    uint32_t weight;         /* 0 == 1 */
    const vmp_frame *frames; /* borrowed for the call */
    uint32_t depth;          /* number of frames; more than max_depth are cut */
} vmp_sample;

/** Record one sample.
 *
 * ASYNC-SIGNAL-SAFE.  Lock-free, allocation-free, makes no system call except
 * the clock's (clock_gettime, a vDSO call on Linux), never blocks, preserves
 * errno.  May be called from a signal handler on any thread, concurrently
 * with itself and with every other writer function.
 *
 * @return VMP_OK; VMP_ERR_FULL if the ring is full (the sample is dropped and
 *         counted); VMP_ERR_CLOSED after a write error (counted as lost);
 *         VMP_ERR_INVALID_ARG for a NULL writer or sample.
 */
VMP_API vmp_status vmp_writer_sample(vmp_writer *w, const vmp_sample *s);

/** Record a sample whose stack walk failed: it still counts in totals.
 *  `reason` indexes meta.failure_reasons; `s->frames` is ignored.
 *  Same guarantees as vmp_writer_sample(). */
VMP_API vmp_status vmp_writer_failed_sample(vmp_writer *w, const vmp_sample *s, uint32_t reason);

/** Record a sample of kind `kind` (1 .. opts.n_sample_kinds, spec.md
 *  §5.15): an allocation, a lock wait.  `weight` is in the kind's unit (the
 *  bytes the sample stands for, the nanoseconds waited); s->weight and
 *  s->blame are ignored.  frames[0] is the innermost frame: for an
 *  allocation or a lock, the class (a function written with
 *  vmp_writer_class()).  Same guarantees as vmp_writer_sample() (callable
 *  from a signal handler or from any VM callback); the sample is written
 *  as a KIND_SAMPLE record, never counted among the CPU samples.
 *  @return as vmp_writer_sample(), and VMP_ERR_INVALID_ARG for a kind the
 *          writer was not opened with.  Added in 0.6. */
VMP_API vmp_status vmp_writer_kind_sample(vmp_writer *w, uint32_t kind, const vmp_sample *s,
                                          uint64_t weight);

/** The current generation.  ASYNC-SIGNAL-SAFE (one atomic load). */
VMP_API uint64_t vmp_writer_generation(const vmp_writer *w);

/** Running totals; also what vmp_writer_close() reports. */
typedef struct vmp_writer_totals {
    uint64_t samples_written;  /* SAMPLE and FAILED_SAMPLE records written */
    uint64_t failed_written;   /* FAILED_SAMPLE records among them */
    uint64_t dropped_full;     /* dropped because the ring was full */
    uint64_t dropped_write;    /* lost because output had stopped after a write error */
    uint64_t truncated_stacks; /* samples whose stack was cut at max_depth */
    uint64_t chunks;           /* data chunks written */
    uint64_t bytes;            /* bytes written to the file */
    int write_errno;           /* errno of the first write error, 0 == none */
} vmp_writer_totals;

/** Fill `*out` with the totals so far.  Counters are read with atomic loads;
 *  the figures may lag the ring by the samples not yet drained.
 *  Thread safety: any thread.  ASYNC-SIGNAL-SAFE. */
VMP_API void vmp_writer_stats(const vmp_writer *w, vmp_writer_totals *out);

/* ---- Code and metadata --------------------------------------------------
 * The functions below may block briefly (a mutex guards the record queue) and
 * may allocate.  Call them from ordinary VM threads, never from a signal
 * handler.  They are thread-safe.  A record written by one of them reaches
 * the file before any sample taken after the call returns.
 * Each returns VMP_OK, VMP_ERR_INVALID_ARG, VMP_ERR_NOMEM or VMP_ERR_CLOSED
 * (output stopped after a write error; the call is a no-op). */

/** Record the process's own executable and every loaded shared object with
 *  their symbol tables (read with libelf from the files on disk: .symtab when
 *  present, else .dynsym), build ids and load addresses.  Objects without a
 *  readable file (the vDSO) are recorded from memory when possible, else
 *  skipped.  Objects that an earlier call on the same writer recorded or
 *  skipped (same load bias and address range) are left out, so calling it
 *  again after libraries were loaded adds only those.  May take tens of
 *  milliseconds for large libraries; a call that finds nothing new costs one
 *  dl_iterate_phdr walk. */
VMP_API vmp_status vmp_writer_add_loaded_modules(vmp_writer *w);

/** Record one module from its ELF file.
 *  @param[out] id_out  receives the module id, or NULL.
 *  @param path   ELF file; borrowed.
 *  @param bias   load bias: runtime address = symbol value + bias.
 *  @param start  lowest mapped runtime address; @param end exclusive end. */
VMP_API vmp_status vmp_writer_add_module(vmp_writer *w, uint64_t *id_out, const char *path,
                                         uint64_t bias, uint64_t start, uint64_t end);

/** A symbol of vmp_writer_add_module_symbols(); `name` borrowed. */
typedef struct vmp_symbol_desc {
    uint64_t value; /* link-time address; runtime = value + module bias */
    uint64_t size;
    const char *name; /* raw (mangled) name */
} vmp_symbol_desc;

/** Record a module whose symbols the VM supplies itself (no ELF file).
 *  @param build_id bytes, may be NULL with build_id_size 0. */
VMP_API vmp_status vmp_writer_add_module_symbols(vmp_writer *w, uint64_t *id_out, const char *path,
                                                 const void *build_id, size_t build_id_size,
                                                 uint64_t bias, uint64_t start, uint64_t end,
                                                 const vmp_symbol_desc *syms, size_t n_syms);

/** Declare a code zone [start, end).  @param[out] id_out receives its id (>= 1). */
VMP_API vmp_status vmp_writer_code_zone(vmp_writer *w, uint64_t *id_out, const char *name,
                                        uint64_t start, uint64_t end);

/** One mcpc -> bcpc pair of a code object. */
typedef struct vmp_pc_pair {
    uint64_t mcpc_offset; /* from the code object's start; pairs sorted by it */
    uint32_t bcpc;
} vmp_pc_pair;

/** One inlining record: from `mcpc_offset` (until the next record's offset)
 *  the code executes the inline chain frames[0..depth), innermost first;
 *  each frame is a (function id, bcpc). */
typedef struct vmp_inline_record {
    uint64_t mcpc_offset;
    const vmp_frame *frames; /* kind VMP_FRAME_FUNCTION */
    uint32_t depth;
} vmp_inline_record;

/** A code object: a compiled method, block, PIC, trampoline or stub. */
typedef struct vmp_code_object {
    uint64_t id;       /* >= 1, chosen by the VM, never reused in one file */
    uint64_t zone;     /* zone id, 0 == none */
    uint32_t kind;     /* index into meta.code_kinds */
    uint32_t tier;     /* index into meta.tiers + 1; 0 == not given */
    const char *name;  /* may be NULL */
    uint64_t function; /* function id, 0 == none */
    uint64_t start;
    uint64_t size;
    const vmp_pc_pair *pc_map;
    size_t pc_map_len;
    const vmp_inline_record *inlines;
    size_t n_inlines;
} vmp_code_object;

/** Record a code object that exists from the current generation on.  The
 *  addresses it covers must be free at the current generation (free or move
 *  the old occupant first). */
VMP_API vmp_status vmp_writer_code_add(vmp_writer *w, const vmp_code_object *code);

/** Free code object `id`; increments the generation.
 *  @param[out] gen_out receives the new generation, or NULL. */
VMP_API vmp_status vmp_writer_code_free(vmp_writer *w, uint64_t id, uint64_t *gen_out);

/** Move code object `id` to `new_start`; increments the generation. */
VMP_API vmp_status vmp_writer_code_move(vmp_writer *w, uint64_t id, uint64_t new_start,
                                        uint64_t *gen_out);

/** Record a compaction of `zone` as one change: `moves` holds n_moves pairs
 *  (code id, new start), `frees` n_frees code ids.  Increments the
 *  generation once.  `start_ns` (a value of the writer's clock: opts.clock,
 *  else CLOCK_MONOTONIC; 0 == now) and `duration_ns` say when it ran; the
 *  record stores the start as ns since the time origin. */
VMP_API vmp_status vmp_writer_code_compaction(vmp_writer *w, uint64_t zone, const uint64_t *moves,
                                              size_t n_moves, const uint64_t *frees, size_t n_frees,
                                              uint64_t start_ns, uint64_t duration_ns,
                                              uint64_t *gen_out);

/** Record the full listing of `zone`: n pairs (code id, start).  Objects of
 *  the zone not listed are freed.  Increments the generation. */
VMP_API vmp_status vmp_writer_code_snapshot(vmp_writer *w, uint64_t zone, const uint64_t *entries,
                                            size_t n, uint64_t *gen_out);

/** A bytecode function (a method). */
typedef struct vmp_function {
    uint64_t id; /* >= 1, chosen by the VM */
    const char *name;
    const char *scope;      /* class or module; may be NULL */
    const char *signature;  /* may be NULL */
    const char *file;       /* may be NULL */
    uint32_t first_line;    /* 0 == unknown */
    uint32_t bytecode_size; /* 0 == unknown */
    const uint32_t *lines;  /* n_lines pairs (bcpc, line), sorted by bcpc */
    size_t n_lines;
} vmp_function;

/** Record a function.  Write it before the first sample that names it. */
VMP_API vmp_status vmp_writer_function(vmp_writer *w, const vmp_function *fn);

/** Record a class (spec.md R-KND-4): a FUNCTION record with id `id` (in
 *  the space of function ids), its name the class's `name` as the VM writes
 *  it ("java.lang.String", "byte[]"), that stack frames of kind
 *  VMP_FRAME_FUNCTION name as the innermost frame of a kind sample.  Same
 *  rules as vmp_writer_function() (with lazy_functions, kept back until a
 *  stack names it).  Added in 0.6. */
VMP_API vmp_status vmp_writer_class(vmp_writer *w, uint64_t id, const char *name);

/** Name a thread (again to rename).  `ended` != 0 records that it ended now. */
VMP_API vmp_status vmp_writer_thread(vmp_writer *w, uint64_t id, const char *name, int ended);

/** Record an event.  `time_ns` is a value of the writer's clock (opts.clock,
 *  else CLOCK_MONOTONIC; 0 == now), stored as ns since the time origin;
 *  `thread` 0 == none; `text` may be NULL. */
VMP_API vmp_status vmp_writer_event(vmp_writer *w, uint32_t kind, uint64_t time_ns,
                                    uint64_t duration_ns, uint64_t thread, int64_t value,
                                    const char *text);

/** Record a counter's value now. */
VMP_API vmp_status vmp_writer_counter(vmp_writer *w, uint32_t kind, int64_t value);

/* ---- Control ------------------------------------------------------------ */

/** Drain the ring and the record queue, close the current chunk and write it.
 *  Blocks until written (a sample slot claimed but not yet published by a
 *  stopped thread is waited for at most 20 ms and then left for later).
 *  @return VMP_OK; VMP_ERR_IO the first time a flush sees that a write failed
 *  (here or earlier in the background thread); VMP_ERR_CLOSED after that;
 *  VMP_ERR_NOMEM if the chunk could not be compressed.
 *  Thread safety: any ordinary thread.  Not signal-safe. */
VMP_API vmp_status vmp_writer_flush(vmp_writer *w);

/** Flush, write the END record and the seek table, stop the background
 *  thread, close the file if the writer opened it, and free the writer.
 *  Accepts NULL.  The caller stops calling the sample functions (and every
 *  other writer function) before close; signal handlers must be disarmed or
 *  guarded by the VM.
 *  @param[out] totals_out receives the final totals, or NULL.
 *  @return VMP_OK, or the first write error (the totals still say what was
 *          written).  Thread safety: once, after every other call returned. */
VMP_API vmp_status vmp_writer_close(vmp_writer *w, vmp_writer_totals *totals_out);

#ifdef __cplusplus
}
#endif

#endif
