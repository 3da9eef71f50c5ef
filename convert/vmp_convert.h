/* SPDX-License-Identifier: MIT
 *
 * vmp_convert.h - exporters of resolved profiles to other tools' formats
 * (built on the resolution of spec.md §5 "Resolution", §5.11, §5.12
 * as done by vmp_analyze.h).
 *
 * Families:
 *
 *   flame graphs  vmp_flame: streams one or two profiles through a
 *                 vmp_analysis, sums sample weights per distinct resolved
 *                 stack and writes them as folded stacks (the text format of
 *                 flamegraph.pl, speedscope and difffolded.pl) or as a
 *                 self-contained interactive SVG flame graph; with two
 *                 profiles (column 0 = BASE, column 1 = NEW), per-function
 *                 changes of share, two-column folded stacks and a
 *                 differential flame graph.
 *
 * Memory grows with the number of distinct stacks (and the analysis's code
 * tables), never with the number of samples.
 *
 * Thread safety: an object is used by one thread at a time.  Nothing here is
 * async-signal-safe.
 */
#ifndef VMP_CONVERT_H
#define VMP_CONVERT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vmp_analyze.h"
#include "vmp_reader.h"
#include "vmp_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Flame graphs ---------------------------------------------------------
 *
 * A folded line is the frames of one distinct stack, outermost first,
 * separated by ';', then a space and the summed weight (with two profiles:
 * a space and BASE's weight, a space and NEW's).  Frame names follow the
 * naming rules of vmp_analyze.h; ';' in a name is written as ':' and control
 * characters as '?', so that every line splits unambiguously.  Lines come in
 * a deterministic order (depth first, siblings by byte-wise name).
 *
 * Synthetic frames:
 *   "[failed: <reason>]"  a FAILED_SAMPLE (reason named by the header), as
 *                         the outermost frame (under the thread and state
 *                         frames when those are asked for), so that the
 *                         weights add up to the total sample weight; with
 *                         a pc, the pc's frame below it (spec R-RES-7: the
 *                         sample counts for the pc's function, as in the
 *                         report), its range and JIT unit as for others;
 *   "[unknown]"           a sample with neither pc nor stack;
 *   thread name           with VMP_FLAME_THREAD_ROOT, the outermost frame;
 *   "[<state>]"           with VMP_FLAME_STATE, the VM state under the root;
 *   "[<JIT unit>]"        with VMP_FLAME_UNITS, below the innermost frame of
 *                         a sample whose pc ran in generated code: the unit
 *                         as vmp_analysis_unit_name() names it (a LuaJIT
 *                         trace, "[TRACE 1 hot.lua:12 loop]"), failed
 *                         samples included.
 *
 * With VMP_FLAME_TIERS the frames of resolved functions get the suffixes of
 * async-profiler's folded output, which flamegraph.pl's java palette colours:
 *   "_[j]"  JIT-compiled code (a code object of any kind but "interpreter")
 *   "_[i]"  inlined code: an innermost frame the analysis placed in an
 *           inlining record by its pc (kind "inlined", vmp_analyze.h)
 *   "_[0]"  interpreted code (a symbolic frame, a frame of kind
 *           "interpreted", or a code object of kind "interpreter")
 *   "_[k]"  C code: the VM's own functions and libraries (module symbols)
 * and no suffix for unknown pcs and synthetic frames.
 */

typedef struct vmp_flame vmp_flame;

#define VMP_FLAME_THREAD_ROOT 1u  /* thread name as the outermost frame */
#define VMP_FLAME_STATE       2u  /* "[state]" frame under the root */
#define VMP_FLAME_RANGES      4u  /* "name A->B" frame below each frame that has a range */
#define VMP_FLAME_TIERS       8u  /* _[j] _[i] _[0] _[k] suffixes */
#define VMP_FLAME_UNITS       16u /* "[JIT unit]" frame below the innermost one */
/* The VM's view (vmp_analysis_vm_stack(), spec R-VIEW-7): VM frames, and
 * inner of the innermost one the code it called, by name or "[<vm> <state>]".
 * Added in 0.7. */
#define VMP_FLAME_VM_FRAMES 32u

/** Flame options.  Zero means default for every field but `version`. */
typedef struct vmp_flame_options {
    unsigned int version; /* VMP_FLAME_OPTIONS_VERSION */
    unsigned int flags;   /* VMP_FLAME_* */
} vmp_flame_options;

#define VMP_FLAME_OPTIONS_VERSION 1
#define VMP_FLAME_OPTIONS_INIT       \
    {                                \
        VMP_FLAME_OPTIONS_VERSION, 0 \
    }

/** Create an empty flame graph.
 * @param[out] out  receives it; the caller frees it with vmp_flame_free().
 *                  Untouched on failure.
 * @param opts      options, or NULL for defaults; borrowed for the call.
 * @return VMP_OK, VMP_ERR_NOMEM or VMP_ERR_INVALID_ARG. */
VMP_API vmp_status vmp_flame_create(vmp_flame **out, const vmp_flame_options *opts);

/** Release a flame graph.  Accepts NULL. */
VMP_API void vmp_flame_free(vmp_flame *f);

/** Read every record of `r` (one profile) into column `column` (0, or 1 for
 *  the NEW profile of a diff), resolving samples with a fresh vmp_analysis.
 *  Each column can be read once.
 * @param r  borrowed; read to its end.
 * @return VMP_OK at a clean end; VMP_ERR_NOMEM; VMP_ERR_INVALID_ARG; or the
 *         reader's or the analysis's error (vmp_reader_errmsg() says why for
 *         a reader error).  After an error the column holds the samples read
 *         before it and the object stays usable (a truncated file still
 *         draws). */
VMP_API vmp_status vmp_flame_read(vmp_flame *f, vmp_reader *r, unsigned int column);

/** Add one more profile to `column`, read or not (repeated runs pooled into
 *  one column: their weights add up).  As vmp_flame_read() otherwise; fails
 *  with VMP_ERR_INVALID_ARG once the graph was written or compared.  Added
 *  in 0.4. */
VMP_API vmp_status vmp_flame_read_more(vmp_flame *f, vmp_reader *r, unsigned int column);

/** Add the samples of profile `p` (fed by the caller, vmp_profile_read())
 *  to column `column`: one reading of a file for the flame graph and the
 *  profile's other views.  `p` is borrowed for the call; it must have been
 *  made with the default analysis options (those of vmp_flame_read()).  As
 *  vmp_flame_read_more() otherwise.  Added in 0.5. */
VMP_API vmp_status vmp_flame_add_profile(vmp_flame *f, const vmp_profile *p, unsigned int column);

/** Total sample weight read into `column` (failed samples included). */
VMP_API uint64_t vmp_flame_total(const vmp_flame *f, unsigned int column);

/** Write the folded stacks: one column per profile read (two after reading
 *  column 1).  `scale_base` multiplies column 0's weights (rounded to the
 *  nearest integer); pass 1.0 for the weights as read.
 * @param out  borrowed stream.
 * @return VMP_OK, VMP_ERR_NOMEM, or VMP_ERR_IO when the stream reports an error. */
VMP_API vmp_status vmp_flame_write_folded(vmp_flame *f, FILE *out, double scale_base);

/** SVG options.  Zero means default for every field but `version`. */
typedef struct vmp_flame_svg_options {
    unsigned int version; /* VMP_FLAME_SVG_OPTIONS_VERSION */
    const char *title;    /* NULL == "Flame graph" ("Differential flame graph" for a diff) */
    const char *subtitle; /* NULL == none; e.g. the file name */
    unsigned int width;   /* pixels; 0 == 1200 */
    double min_width;     /* pixels below which frames merge into "..."; 0 == 0.1 */
    int icicle;           /* root at the top */
    int diff;             /* differential: size by column 1, colour by the change of share */
} vmp_flame_svg_options;

#define VMP_FLAME_SVG_OPTIONS_VERSION 1
#define VMP_FLAME_SVG_OPTIONS_INIT                              \
    {                                                           \
        VMP_FLAME_SVG_OPTIONS_VERSION, NULL, NULL, 0, 0.0, 0, 0 \
    }

/** Write a self-contained interactive SVG flame graph (no external resource;
 *  an inline script gives tooltips, a details line, click-to-zoom, reset
 *  zoom and search with the matched share).  Frames are coloured by code
 *  kind (JIT, interpreted, inlined, C, GC, unknown, synthetic; a legend says
 *  which), or for a diff red (share grew) and blue (shrank) with saturation
 *  by the size of the change.  Every drawn frame is one <g class="f"> with
 *  one <rect>.
 * @param out   borrowed stream.
 * @param opts  options, or NULL for defaults; borrowed for the call.
 * @return VMP_OK, VMP_ERR_NOMEM, VMP_ERR_INVALID_ARG (a diff without column
 *         1) or VMP_ERR_IO. */
VMP_API vmp_status vmp_flame_write_svg(vmp_flame *f, FILE *out, const vmp_flame_svg_options *opts);

/** As vmp_flame_write_svg() with opts->diff set, but a frame is coloured red
 *  or blue only when `colour_if(name, arg)` returns non-zero for its name
 *  (e.g. a significant change, vmp_diffstat()); the others are drawn grey.
 *  Added in 0.4. */
VMP_API vmp_status vmp_flame_write_svg_marked(vmp_flame *f, FILE *out,
                                              const vmp_flame_svg_options *opts,
                                              int (*colour_if)(const char *name, void *arg),
                                              void *arg);

/** One function's weights in a diff (see vmp_flame_diff()). */
typedef struct vmp_flame_delta {
    const char *name;   /* frame name as in the folded output; owned by the flame */
    uint64_t self[2];   /* weight as the innermost frame, per column */
    uint64_t total[2];  /* weight of samples with the function anywhere on the
                         * stack (once per sample, even when recursive) */
    double self_change; /* share of column 1 minus share of column 0, in [-1, 1] */
    double total_change;
} vmp_flame_delta;

/** Compute the per-function change of share between column 0 (BASE) and
 *  column 1 (NEW), sorted by decreasing magnitude of change (the larger of
 *  the two), then by name.  Functions are matched by name.
 * @param[out] out    receives an array the caller frees with free(); names
 *                    borrowed from `f` (valid until vmp_flame_free()).
 * @param[out] n_out  receives its length.
 * @return VMP_OK or VMP_ERR_NOMEM. */
VMP_API vmp_status vmp_flame_diff(vmp_flame *f, vmp_flame_delta **out, size_t *n_out);

/* ---- Repeated runs: the runs' weights (vmp_diffstat() is in vmp_analyze.h) -- */

/** Read one profile into per-function weights, with the frame names of a
 *  flame graph made with `opts` (vmp_flame_create(); NULL == defaults) and
 *  the weights of vmp_flame_diff().  With VMP_FLAME_RANGES in `opts`, one
 *  row per bytecode range ("name A->B") is added to the functions.
 * @param[out] out  filled; release with vmp_run_weights_free().
 * @param r   borrowed; read to its end.
 * @return VMP_OK, VMP_ERR_NOMEM, or the reader's error (a truncated file:
 *         `out` holds what came before it). */
VMP_API vmp_status vmp_run_weights_read(vmp_run_weights *out, vmp_reader *r,
                                        const vmp_flame_options *opts);

/** The same weights from profile `p`, read by the caller (made with the
 *  default analysis options): a file read once for these and the profile's
 *  own views.  `p` is borrowed for the call.  VMP_OK or VMP_ERR_NOMEM.
 *  Added in 0.5. */
VMP_API vmp_status vmp_run_weights_of_profile(vmp_run_weights *out, const vmp_profile *p,
                                              const vmp_flame_options *opts);

/* ---- pprof and speedscope --------------------------------------------------
 *
 * vmp_pprof_write() streams a profile through a vmp_analysis and writes one
 * pprof Profile message (convert/profile.proto), gzip-compressed: what
 * `go tool pprof`, Pyroscope, Parca and the other pprof readers load.
 *   sample types   samples/count (the summed sample weight) and
 *                  cpu/nanoseconds (weight x the header's sampling interval;
 *                  0 when the interval is unknown); period_type
 *                  cpu/nanoseconds, period = the interval; time_nanos = the
 *                  header's start_realtime_ns; duration_nanos = the latest
 *                  time in the file.
 *   Function       one per resolved function (vmp_analyze.h naming rules):
 *                  name; system_name = the raw (mangled) symbol of C code,
 *                  else the FUNCTION's signature, else the name; filename and
 *                  start_line from the FUNCTION record.
 *   Location       one per distinct resolved frame (function and bytecode
 *                  range).  Its last Line is the function, with the source
 *                  line of the range's first bcpc in the FUNCTION's
 *                  bcpc->line table (0 when unknown).  A frame with a range
 *                  has one more Line first, as if inlined into the function:
 *                  a pseudo-function named "<name> A->B" (system_name the
 *                  same; filename and start_line the function's), so that
 *                  pprof shows ranges as the innermost level (Cog's
 *                  "Integer>>benchFib 1->23", marked "(inline)" by pprof)
 *                  and callees under the range that called them;
 *                  `-noinlines` gives function totals.  With
 *                  VMP_PPROF_INLINES the analysis expands the inlining
 *                  records of code objects (VMP_ANALYSIS_INLINES) and the
 *                  inlined functions become Lines of the Location of the
 *                  code object they are inlined into, innermost first (each
 *                  with its own range Line); without it they are not shown.
 *                  VMP_PPROF_NO_RANGES leaves the pseudo Lines out.  mapping_id
 *                  = the module's Mapping for C code, the code zone's for
 *                  generated code when the file has a single zone; no address
 *                  (a location stands for many pcs), except for a pc in a
 *                  module that no symbol covers ("libc.so.6+0x9e3c0", one pc
 *                  per function): its runtime address.
 *   Mapping        one per MODULE (path, build id as hex, [start, end)) and
 *                  one per CODE_ZONE (its name, [start, end)); all marked as
 *                  having functions, file names and line numbers so that
 *                  pprof never tries to symbolize them.
 *   Sample         one per distinct (stack, thread, state, failure reason),
 *                  values summed; locations leaf first.  Labels: "thread"
 *                  (name), "thread_id" (number), "state" (VM state name),
 *                  "code_kind" (kind of the executing frame's function: a
 *                  code kind name from the header, "C", "function" or
 *                  "unknown"), and "failed" (the reason) for failed samples,
 *                  whose stack is the executing frame alone when they have a
 *                  pc, else empty.
 *   comment        "converted by vmp pprof from a profile of <vm> ...", then
 *                  one "key=value" per HEADER label (spec.md §5.1), in the
 *                  file's order (`pprof -comments` lists them).
 * Memory grows with distinct stacks, never with samples.
 *
 * vmp_speedscope_write() writes speedscope's JSON file format
 * (https://www.speedscope.app/file-format-schema.json): shared.frames (one
 * per resolved frame, named "name A->B" or "name", with file and line when
 * the FUNCTION record gives them) and one "sampled" profile per thread, in
 * order of first sample, samples root first in file order (consecutive
 * samples of a thread with the same stack merged, their weights summed),
 * weights in nanoseconds (weight x interval) or, when the interval is
 * unknown, unit "none" (the sample weight).  Per-thread samples are spooled
 * to temporary files, so memory grows with distinct stacks only.
 *
 * vmp_pprof_import() reads a pprof Profile (gzip-compressed or not) and
 * writes it as a vmp profile with the writer; see its comment for the
 * mapping.
 */

/** Totals of a conversion. */
typedef struct vmp_convert_stats {
    uint64_t samples;     /* sample records read (vmp) or written (import) */
    uint64_t weight;      /* their total weight */
    uint64_t out_samples; /* pprof Sample messages / speedscope samples written */
    uint64_t functions;   /* pprof Functions / speedscope frames / FUNCTION records */
    uint64_t locations;   /* pprof Locations / distinct stacks */
    uint64_t bytes;       /* bytes written */
} vmp_convert_stats;

#define VMP_PPROF_NO_RANGES 1u /* no "<name> A->B" pseudo Lines */
#define VMP_PPROF_INLINES   2u /* inline chains (VMP_ANALYSIS_INLINES) as Lines of one Location */
#define VMP_PPROF_VM_FRAMES 4u /* the VM's view, as VMP_FLAME_VM_FRAMES; added in 0.7 */

/** pprof export options.  Zero means default for every field but `version`. */
typedef struct vmp_pprof_options {
    unsigned int version; /* VMP_PPROF_OPTIONS_VERSION */
    unsigned int flags;   /* VMP_PPROF_* */
    /* 1..9; 0 == 1 (the fastest: on a large profile, a third of level 6's
     * time for a file about 7% larger); -1 == raw protobuf, no gzip */
    int gzip_level;
} vmp_pprof_options;

#define VMP_PPROF_OPTIONS_VERSION 1
#define VMP_PPROF_OPTIONS_INIT          \
    {                                   \
        VMP_PPROF_OPTIONS_VERSION, 0, 0 \
    }

/** Read every record of `r` and write the pprof profile to `out`.
 * @param r          borrowed; read to its end.
 * @param out        borrowed stream, written from its current position.
 * @param opts       options, or NULL for defaults; borrowed for the call.
 * @param[out] stats_out  may be NULL.
 * @param[out] err   receives a one-line message on failure (the reader's
 *                   message for a reader error, naming the file and offset);
 *                   may be NULL when `err_size` is 0.
 * @return VMP_OK; a reader or analysis error (nothing is written then);
 *         VMP_ERR_NOMEM; VMP_ERR_IO when `out` reports a write error. */
VMP_API vmp_status vmp_pprof_write(vmp_reader *r, FILE *out, const vmp_pprof_options *opts,
                                   vmp_convert_stats *stats_out, char *err, size_t err_size);

#define VMP_SPEEDSCOPE_NO_RANGES 1u /* frames per function, without "A->B" */

/** speedscope export options.  Zero means default for every field but `version`. */
typedef struct vmp_speedscope_options {
    unsigned int version; /* VMP_SPEEDSCOPE_OPTIONS_VERSION */
    unsigned int flags;   /* VMP_SPEEDSCOPE_* */
    const char *name;     /* the file's "name"; NULL == "vmp profile" */
} vmp_speedscope_options;

#define VMP_SPEEDSCOPE_OPTIONS_VERSION 1
#define VMP_SPEEDSCOPE_OPTIONS_INIT             \
    {                                           \
        VMP_SPEEDSCOPE_OPTIONS_VERSION, 0, NULL \
    }

/** Read every record of `r` and write the speedscope JSON file to `out`.
 *  Parameters and return values as vmp_pprof_write(); temporary files come
 *  from tmpfile(). */
VMP_API vmp_status vmp_speedscope_write(vmp_reader *r, FILE *out,
                                        const vmp_speedscope_options *opts,
                                        vmp_convert_stats *stats_out, char *err, size_t err_size);

/** pprof import options.  Zero means default for every field but `version`. */
typedef struct vmp_import_options {
    unsigned int version;      /* VMP_IMPORT_OPTIONS_VERSION */
    unsigned int sample_index; /* which value becomes the sample weight; 0 == first */
    uint64_t max_input_bytes;  /* decompressed size limit; 0 == 1 GiB */
    uint64_t max_sample_value; /* larger values are rejected; 0 == 2^40 */
    unsigned int format_major; /* 0 == 2: samples in SAMPLE_BLOCKs (spec.md §5.14);
                                  1 == format 1.x.  Added in 0.5. */
} vmp_import_options;

#define VMP_IMPORT_OPTIONS_VERSION 1
#define VMP_IMPORT_OPTIONS_INIT                \
    {                                          \
        VMP_IMPORT_OPTIONS_VERSION, 0, 0, 0, 0 \
    }

/** Convert the pprof profile in data[0..size) (gzip or raw protobuf) into a
 *  vmp profile written to `fd` through vmp_writer_open_fd(), with a
 *  deterministic clock (sample i is taken at i x period ns, or i ns without
 *  a period), so the same input gives the same output.
 *    HEADER   vm_name "pprof"; sample_interval_ns = period when the period
 *             unit is nanoseconds; labels: "pprof.sample_types"
 *             ("type/unit,..."), "pprof.sample_index", "pprof.period_type",
 *             "pprof.period", "pprof.time_nanos", "pprof.duration_nanos",
 *             "pprof.comment", "pprof.comment.2", ... (one per comment), "pprof.drop_frames",
 *             "pprof.keep_frames", "pprof.other_labels" (the keys of
 *             per-sample labels not mapped below, comma-separated); states
 *             = the distinct values of the "state" label, in order of first
 *             use ("unknown" first when some sample has none).
 *    FUNCTION one per pprof Function (same id): name; signature =
 *             system_name when it differs; file; first_line = start_line.
 *             A vmp "<name> A->B" pseudo-function (see above) is folded back
 *             into a bytecode pc A on the frame of its function.
 *    frames   every Line of every Location becomes a symbolic frame
 *             (function id, bcpc), outermost Line outermost; bcpc = A for a
 *             range pseudo Line, else the Line's source line when > 0, else
 *             none.  Mappings and addresses are not kept.
 *    THREAD   one per distinct thread: the "thread_id" number label gives
 *             the id (threads with only a "thread" name get ids after the
 *             largest thread_id, in order of first use), "thread" the name;
 *             samples without either go to thread 1 "main".  The header's
 *             pid is 1 (pprof has none).
 *    SAMPLE   the chosen value is the weight; values above UINT32_MAX are
 *             split into several samples; samples with value 0 are skipped.
 * @param data, size  the input; borrowed for the call.
 * @param name        input name for messages; borrowed.
 * @param fd          writable descriptor; borrowed, not closed.
 * @param opts        options, or NULL for defaults; borrowed.
 * @param[out] stats_out  may be NULL.
 * @param[out] err    one-line message on failure, starting with `name`.
 * @return VMP_OK; VMP_ERR_TRUNCATED (gzip or protobuf ends early);
 *         VMP_ERR_CORRUPT (not a profile, wrong field types, ids or string
 *         indexes that point nowhere, negative values); VMP_ERR_LIMIT (a
 *         value or the input is too large); VMP_ERR_INVALID_ARG (no such
 *         sample index); VMP_ERR_NOMEM; VMP_ERR_IO.
 * Thread safety: any thread; the writer runs its own thread meanwhile. */
VMP_API vmp_status vmp_pprof_import(const void *data, size_t size, const char *name, int fd,
                                    const vmp_import_options *opts, vmp_convert_stats *stats_out,
                                    char *err, size_t err_size);

/* ---- The report (`vmp report`) ---------------------------------------------
 *
 * The VMProfiler-style report of a profile, or one ranked table of its
 * samples, as text, JSON or CSV (spec.md Appendix D: R-VIEW-2, R-VIEW-3,
 * R-VIEW-7; `vmp report --help` describes every section).  Added in 0.7. */

enum vmp_report_format {
    VMP_REPORT_TEXT = 0,
    VMP_REPORT_JSON = 1,
    VMP_REPORT_CSV = 2
};

/** What the report ranks: the whole report, or one table of all samples. */
enum vmp_report_by {
    VMP_REPORT_FULL = 0, /* the whole report ("function") */
    VMP_REPORT_BY_MODULE,
    VMP_REPORT_BY_THREAD,
    VMP_REPORT_BY_STATE,
    VMP_REPORT_BY_UNIT,
    VMP_REPORT_BY_VM_FUNCTION
};

/** Report options.  Zero means default for every field but `version`. */
typedef struct vmp_report_options {
    unsigned int version; /* VMP_REPORT_OPTIONS_VERSION */
    int format;           /* enum vmp_report_format */
    int by;               /* enum vmp_report_by */
    size_t top;           /* entries per section; the rest summed as "...others..."; 0 = all */
    double min_percent;   /* list entries of at least this share of their section */
    int no_ranges;        /* 1: no bytecode ranges under the functions */
    const char *path;     /* the input's name for the heading; NULL = "-" */
    /* The reader's message when the input is damaged (the report covers the
     * input up to it and says so), else NULL. */
    const char *error;
} vmp_report_options;

#define VMP_REPORT_OPTIONS_VERSION 1
#define VMP_REPORT_OPTIONS_INIT                                 \
    {                                                           \
        VMP_REPORT_OPTIONS_VERSION, 0, 0, 0, 0.0, 0, NULL, NULL \
    }

/** The vmp_report_by value of a --by name ("function", "module", "thread",
 *  "state", "unit", "vm-function"), or -1 when there is none. */
VMP_API int vmp_report_by_key(const char *name);

/** Write the report of profile `p` (fed by the caller, vmp_profile_read();
 *  it may hold the samples of a damaged input up to the damage: give
 *  opts->error) to `out`.
 * @param p     borrowed; the report's tables may add resolved frames to its
 *              analysis (the VM's view).
 * @param out   borrowed stream; write errors are left in it (ferror()).
 * @param opts  borrowed for the call; NULL for defaults.
 * @return VMP_OK; VMP_ERR_NOMEM (the output may be partial);
 *         VMP_ERR_INVALID_ARG.
 * Thread safety: any thread, one call at a time per profile. */
VMP_API vmp_status vmp_report_write(vmp_profile *p, FILE *out, const vmp_report_options *opts);

/* ---- Text output: how the report, the archive and the commands write text ---
 *
 * Thread safety: any thread; each call writes to its stream alone.  Added in 0.7. */

/** Write `len` bytes of `s` as a double-quoted string with C-like escapes:
 *  \" \\ \n \r \t, other control bytes and bytes that are not valid UTF-8
 *  as \xNN.  Valid UTF-8 is copied. */
VMP_API void vmp_put_quoted(FILE *f, const char *s, size_t len);

/** Write `len` bytes of `s` as a JSON string (RFC 8259).  Bytes that are not
 *  valid UTF-8 become U+FFFD, so the output is always valid JSON. */
VMP_API void vmp_put_json_string(FILE *f, const char *s, size_t len);

/** Write `s` as one CSV field (RFC 4180): as is, or in double quotes with
 *  quotes doubled when it holds a comma, quote or line break. */
VMP_API void vmp_put_csv_field(FILE *f, const char *s);

/** Format `ns` since the Unix epoch as "YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ" (UTC)
 *  into `buf` (at least 40 bytes). */
VMP_API void vmp_format_utc(char *buf, size_t size, uint64_t ns);

#ifdef __cplusplus
}
#endif

#endif
