/* SPDX-License-Identifier: MIT
 *
 * vmp_cmd_report.c - `vmp report`: the VMProfiler-style report of a profile,
 * every sample attributed at its own generation (spec.md §5 "Generations",
 * §5.12 samples, §5.13 events and counters).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_analyze.h"
#include "vmp_cli.h"

static const char report_usage[] =
    "usage: vmp report [--by function|module|thread|state|unit|vm-function]\n"
    "                  [--top N]\n"
    "                  [--min-percent P] [--no-ranges]\n"
    "                  [--format text|json|csv] [-o FILE] FILE\n"
    "\n"
    "Read the profile FILE ('-' = standard input) in one streaming pass,\n"
    "attribute every sample to the code that was at its pc when it was taken\n"
    "(its generation), and print the report:\n"
    "  heading: producer, VM, the header's labels (KEY=VALUE), date, duration,\n"
    "  sampling frequency, samples in\n"
    "  total, in generated vm code, in vanilla vm code (C), unknown, in\n"
    "  symbolic frames only (when there are such samples), failed;\n"
    "  '% of generated vm code': each JIT-compiled method, block, PIC or\n"
    "  trampoline with its share of generated code and of all samples, its\n"
    "  sample count and the cumulative share, and under each its bytecode\n"
    "  ranges ('A->B', with their source lines when the function has a line\n"
    "  table); closed and open PICs are listed apart from methods.  When a\n"
    "  sample has both a pc and a symbolic stack (AsyncGetCallTrace frames of\n"
    "  the HotSpot agent), its innermost method is listed with where it ran:\n"
    "  [nmethod] (compiled: range from the pc map), [inlined] (range from the\n"
    "  inlining record) or [interpreted] (range: the bytecodes of the source\n"
    "  line); see vmp_analyze.h for the exact rules;\n"
    "  '% of vanilla vm code': C functions (demangled);\n"
    "  '% of symbolic frames': innermost symbolic frames whose pc was in none\n"
    "  of the frame's code (C code, a stub, unknown) or who have no pc;\n"
    "  generated code by kind; the four sections sum to the total;\n"
    "  '% of generated vm code by JIT unit', when code objects have names of\n"
    "  their own (a tracing JIT's traces, 'TRACE 3 hot.lua:12 loop'): the\n"
    "  samples whose pc ran in each unit (code objects of one name, at\n"
    "  whatever generation), with its kind and function (json: 'jit_units',\n"
    "  always);\n"
    "  GC, code compactions, events and counters; VM states (summing to 100%);\n"
    "  threads (a renamed thread as 'first (latest)'); failed samples by reason;\n"
    "  when any sample carries a blame (the code id of the JIT unit its thread\n"
    "  last exited, spec.md 5.12 key 8): 'time blamed on JIT units', a matrix of\n"
    "  the samples not in generated code (interpreter, GC, primitives, C, ...):\n"
    "  one row per blamed unit (its name as above, else its method's,\n"
    "  whatever the generation; a freed unit still counts) plus '[no blame]'\n"
    "  for samples without one, one\n"
    "  column per VM state, with row and column totals (json: 'blame', each\n"
    "  unit with its function).\n"
    "\n"
    "With --by module|thread|state|unit, print instead one ranked table of all\n"
    "samples (share, samples, cumulative share) per key:\n"
    "  module: the module (path) of a C function; '[generated code: ZONE]' for\n"
    "  JIT code, by its code zone ('[generated code]' for inlined and\n"
    "  interpreted frames of symbolic stacks); '[symbolic]' for symbolic frames;\n"
    "  '[unknown]' for unknown pcs and samples without any frame;\n"
    "  thread: the thread's name as above (threads of one name are one key);\n"
    "  state: the VM state;\n"
    "  unit: the JIT unit the pc ran in, named as above ('[not in generated\n"
    "  code]' for the rest);\n"
    "  vm-function: the innermost function of the VM's language on the stack\n"
    "  (a Lua function, a Java method: a frame of a FUNCTION record), whatever\n"
    "  C code ran above it, as luajit -jp=f and JFR count (spec.md R-VIEW-7),\n"
    "  with 'own', the samples in its own code; a sample with no such frame\n"
    "  counts as '[<vm> <state>]' ('[LuaJIT gc]', kind state), a failed one as\n"
    "  '[failed: <reason>]' (kind failed); csv: kind,vm-function,samples,own.\n"
    "--top and --min-percent (of all samples) apply to text and json; csv has\n"
    "one row per key (KEY,samples) and sums to the total.\n"
    "A stack deeper than 65536 frames keeps its innermost 65535 under one\n"
    "'[truncated N frames]' frame; the report says how many stacks were (json:\n"
    "'truncated_stacks').\n"
    "\n";
/* the rest (a C string literal has a portable length limit) */
static const char report_options[] =
    "options:\n"
    "  --by K            function (default: the full report), module, thread, state,\n"
    "                    unit, vm-function\n"
    "  --top N           list at most N entries per section (0 = all; default 30);\n"
    "                    the rest are summed as '...others...'\n"
    "  --min-percent P   list entries of at least P% of their section (default 0)\n"
    "  --no-ranges       do not list bytecode ranges\n"
    "  --format F        text (default), json (one object) or csv (one row per\n"
    "                    function, or per function and range unless --no-ranges:\n"
    "                    class,kind,function,range,samples)\n"
    "  -o FILE           write to FILE ('-' = standard output, the "
    "default)\n" VMP_CLI_KIND_HELP VMP_CLI_NO_GROUP_HIDDEN_HELP
    "  -h, --help        print this help\n"
    "\n"
    "Exit status: 0 success (a truncated file is reported up to the damage, with\n"
    "a note); 1 unreadable input or write error; 2 usage error.\n";

enum {
    FMT_TEXT,
    FMT_JSON,
    FMT_CSV
};

enum {
    BY_FUNCTION,
    BY_MODULE,
    BY_THREAD,
    BY_STATE,
    BY_UNIT,
    BY_VM_FUNCTION
};

typedef struct rep_opts {
    size_t top;
    double min_percent;
    int ranges;
    int format;
    int by; /* BY_* */
} rep_opts;

typedef struct entry {
    uint32_t id; /* afunction or aframe id */
    uint64_t w;
} entry;

typedef struct report {
    vmp_profile *p;
    vmp_analysis *a;
    const vmp_profile_totals *t;
    const uint64_t *fw, *frw;
    size_t n_fw, n_frw;
    /* frames grouped by function: frames_of[f] .. via sorted index */
    entry *frames; /* (frame id, weight), sorted by function then weight */
    size_t n_frames;
    const char *error; /* reader error message, or NULL */
} report;

static void text_blame(FILE *f, const report *r, const rep_opts *o);
static void json_blame(FILE *f, const report *r, const rep_opts *o);
static void text_units(FILE *f, const report *r, const rep_opts *o);
static void json_units(FILE *f, const report *r, const rep_opts *o);

static double pct(uint64_t a, uint64_t b)
{
    return b ? 100.0 * (double)a / (double)b : 0.0;
}

static const vmp_afunction *fn_of(const report *r, uint32_t id)
{
    return vmp_analysis_function(r->a, id);
}

static int cmp_entry_by_name(const report *r, const entry *x, const entry *y)
{
    const vmp_afunction *a = fn_of(r, x->id), *b = fn_of(r, y->id);
    int c = strcmp(a->name, b->name);
    return c ? c : strcmp(a->kind, b->kind);
}

static const report *sort_ctx; /* qsort has no payload: the CLI is single-threaded */

static int cmp_func_entries(const void *x, const void *y)
{
    const entry *a = x, *b = y;
    if (a->w != b->w)
        return a->w > b->w ? -1 : 1;
    return cmp_entry_by_name(sort_ctx, a, b);
}

static int cmp_frame_entries(const void *x, const void *y)
{
    const entry *a = x, *b = y;
    const vmp_aframe *fa = vmp_analysis_frame(sort_ctx->a, a->id);
    const vmp_aframe *fb = vmp_analysis_frame(sort_ctx->a, b->id);
    if (fa->function != fb->function)
        return fa->function < fb->function ? -1 : 1;
    if (a->w != b->w)
        return a->w > b->w ? -1 : 1;
    if (fa->has_range != fb->has_range)
        return fa->has_range ? -1 : 1;
    if (fa->bc_first != fb->bc_first)
        return fa->bc_first < fb->bc_first ? -1 : 1;
    return fa->bc_last < fb->bc_last ? -1 : fa->bc_last > fb->bc_last;
}

/* The functions of class `cls` (and, when kind_filter is 1/2, only PICs /
 * only non-PICs), sorted by weight.  Caller frees. */
static entry *collect(const report *r, int cls, int pic_filter, size_t *n_out, uint64_t *total)
{
    entry *e = malloc((r->n_fw + 1) * sizeof *e);
    size_t i, n = 0;
    *total = 0;
    if (!e)
        return NULL;
    for (i = 1; i < r->n_fw; i++) {
        const vmp_afunction *f = fn_of(r, (uint32_t)i);
        int is_pic;
        if (!f || !r->fw[i] || f->code_class != cls)
            continue;
        is_pic = strstr(f->kind, "PIC") != NULL;
        if ((pic_filter == 1 && !is_pic) || (pic_filter == 2 && is_pic))
            continue;
        e[n].id = (uint32_t)i;
        e[n].w = r->fw[i];
        *total += r->fw[i];
        n++;
    }
    sort_ctx = r;
    qsort(e, n, sizeof *e, cmp_func_entries);
    *n_out = n;
    return e;
}

/* Index of the first frame entry of function `fn` in r->frames. */
static size_t frames_begin(const report *r, uint32_t fn)
{
    size_t lo = 0, hi = r->n_frames;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (vmp_analysis_frame(r->a, r->frames[mid].id)->function < fn)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* How many of the `n` rows, ranked by weight, --top and --min-percent (of
 * `total`) keep.  Each row is `stride` bytes with its uint64_t weight at
 * `w_off`: the function entries, the JIT units and the blame matrix rows. */
static size_t rows_shown(
    const rep_opts *o, const void *rows, size_t n, size_t stride, size_t w_off, uint64_t total)
{
    size_t k = 0;
    while (k < n && (o->top == 0 || k < o->top)) {
        uint64_t w;
        memcpy(&w, (const char *)rows + k * stride + w_off, sizeof w);
        if (pct(w, total) < o->min_percent)
            break;
        k++;
    }
    return k;
}

static size_t shown(const rep_opts *o, const entry *e, size_t n, uint64_t section_total)
{
    return rows_shown(o, e, n, sizeof *e, offsetof(entry, w), section_total);
}

/* " line L" or " lines L-M" of a frame's range into buf, or "" */
static void range_lines(const report *r, const vmp_aframe *fr, char *buf, size_t size)
{
    const vmp_afunction *fn = fn_of(r, fr->function);
    uint64_t lo, hi;
    buf[0] = '\0';
    if (!fn || !fn->function_id || !fr->has_range ||
        !vmp_analysis_lines(r->a, fn->function_id, fr->bc_first, fr->bc_last, &lo, &hi))
        return;
    if (lo == hi)
        snprintf(buf, size, "  line %" PRIu64, lo);
    else
        snprintf(buf, size, "  lines %" PRIu64 "-%" PRIu64, lo, hi);
}

static void text_ranges(FILE *f, const report *r, uint32_t fn, uint64_t fw)
{
    size_t i = frames_begin(r, fn);
    /* code without a pc map (trampolines, PICs) has one frame and no range */
    if (i < r->n_frames && !vmp_analysis_frame(r->a, r->frames[i].id)->has_range &&
        (i + 1 == r->n_frames || vmp_analysis_frame(r->a, r->frames[i + 1].id)->function != fn))
        return;
    for (; i < r->n_frames; i++) {
        const vmp_aframe *fr = vmp_analysis_frame(r->a, r->frames[i].id);
        char rng[48], lines[64];
        if (fr->function != fn)
            break;
        if (fr->has_range)
            snprintf(rng, sizeof rng, "%" PRIu32 "->%" PRIu32, fr->bc_first, fr->bc_last);
        else
            snprintf(rng, sizeof rng, "(prologue)");
        range_lines(r, fr, lines, sizeof lines);
        fprintf(f, "        %-14s %6.2f%%  (%" PRIu64 ")%s\n", rng, pct(r->frames[i].w, fw),
                r->frames[i].w, lines);
    }
}

static void text_section(
    FILE *f, const report *r, const rep_opts *o, const char *title, int cls, int pic_filter)
{
    size_t n = 0, k, i;
    uint64_t total = 0, cum = 0, rest = 0;
    entry *e = collect(r, cls, pic_filter, &n, &total);
    if (!e)
        return;
    fprintf(f, "\n%s (%" PRIu64 " samples, %.2f%% of total)\n", title, total,
            pct(total, r->t->samples));
    if (n == 0) {
        fprintf(f, "  (none)\n");
        free(e);
        return;
    }
    fprintf(f, "  %8s %8s %10s %8s  %s\n", "%", "% total", "samples", "cumul.", "function");
    k = shown(o, e, n, total);
    for (i = 0; i < k; i++) {
        const vmp_afunction *fn = fn_of(r, e[i].id);
        cum += e[i].w;
        if (cls == VMP_CLASS_GENERATED)
            fprintf(f, "  %7.2f%% %7.2f%% %10" PRIu64 " %7.2f%%  %s [%s]\n", pct(e[i].w, total),
                    pct(e[i].w, r->t->samples), e[i].w, pct(cum, total), fn->name, fn->kind);
        else
            fprintf(f, "  %7.2f%% %7.2f%% %10" PRIu64 " %7.2f%%  %s\n", pct(e[i].w, total),
                    pct(e[i].w, r->t->samples), e[i].w, pct(cum, total), fn->name);
        if (o->ranges && (cls == VMP_CLASS_GENERATED || cls == VMP_CLASS_SYMBOLIC))
            text_ranges(f, r, e[i].id, e[i].w);
    }
    for (i = k; i < n; i++)
        rest += e[i].w;
    if (k < n)
        fprintf(f, "  %7.2f%% %7.2f%% %10" PRIu64 " %7.2f%%  ...others... (%zu)\n",
                pct(rest, total), pct(rest, r->t->samples), rest, 100.0, n - k);
    free(e);
}

/* Generated code by code kind (method, block, closed PIC, open PIC, ...), in
 * the header's order, then the kinds outside the vocabulary ("inlined",
 * "interpreted", "kind#N") by name. */
static void text_kinds(FILE *f, const report *r)
{
    const vmp_rec_header *h = vmp_analysis_header(r->a);
    size_t k, i, j, n_kinds = h ? h->n_code_kinds : 0, n_other = 0;
    const char **other = malloc(r->n_fw * sizeof *other + 1);
    fprintf(f, "\ngenerated vm code by kind (%% of generated, %% of total)\n");
    for (k = 0; k < n_kinds; k++) {
        uint64_t w = 0;
        for (i = 1; i < r->n_fw; i++) {
            const vmp_afunction *fn = fn_of(r, (uint32_t)i);
            if (fn && fn->code_class == VMP_CLASS_GENERATED && fn->code_kind == k)
                w += r->fw[i];
        }
        fprintf(f, "  %-20s %7.2f%% %7.2f%% %10" PRIu64 "\n", h->code_kinds[k].s,
                pct(w, r->t->generated), pct(w, r->t->samples), w);
    }
    /* other kind names, each once, sorted */
    for (i = 1; other && i < r->n_fw; i++) {
        const vmp_afunction *fn = fn_of(r, (uint32_t)i);
        if (!fn || fn->code_class != VMP_CLASS_GENERATED || fn->code_kind < n_kinds || !r->fw[i])
            continue;
        for (j = 0; j < n_other && strcmp(other[j], fn->kind) != 0; j++)
            ;
        if (j == n_other)
            other[n_other++] = fn->kind;
    }
    for (j = 1; j < n_other; j++) {
        const char *x = other[j];
        for (k = j; k > 0 && strcmp(other[k - 1], x) > 0; k--)
            other[k] = other[k - 1];
        other[k] = x;
    }
    for (j = 0; j < n_other; j++) {
        uint64_t w = 0;
        for (i = 1; i < r->n_fw; i++) {
            const vmp_afunction *fn = fn_of(r, (uint32_t)i);
            if (fn && fn->code_class == VMP_CLASS_GENERATED && fn->code_kind >= n_kinds &&
                strcmp(fn->kind, other[j]) == 0)
                w += r->fw[i];
        }
        fprintf(f, "  %-20s %7.2f%% %7.2f%% %10" PRIu64 "\n", other[j], pct(w, r->t->generated),
                pct(w, r->t->samples), w);
    }
    free(other);
}

/* Samples whose executing frame is a symbolic frame (no code of its own). */
static uint64_t symbolic_total(const vmp_profile_totals *t)
{
    uint64_t known = t->generated + t->native + t->unknown;
    return t->samples > known ? t->samples - known : 0;
}

/* spec R-KND-3: each kind of the file in its unit, and the one shown */
static void text_sample_kinds(FILE *f, vmp_analysis *a)
{
    size_t n = 0, i;
    const vmp_akind *k = vmp_analysis_kinds(a, &n);
    int64_t sel = vmp_analysis_kind_selected(a);
    if (n < 2)
        return;
    fputs("kinds:", f);
    for (i = 0; i < n; i++) {
        fprintf(f, "%s %s %" PRIu64 " samples", i ? ";" : "", k[i].name, k[i].records);
        if (i > 0)
            fprintf(f, " = %" PRIu64 " %s", k[i].weight, k[i].unit);
    }
    if (sel > 0 && (size_t)sel < n)
        fprintf(f, "\nthis report: kind %s, every count below in %s\n", k[sel].name, k[sel].unit);
    else
        fputs("\nthis report: kind cpu (--kind NAME shows another)\n", f);
}

static void text_report(FILE *f, const report *r, const rep_opts *o, const char *path)
{
    const vmp_rec_header *h = vmp_analysis_header(r->a);
    const vmp_profile_totals *t = r->t;
    const uint64_t *sw, *fw;
    const vmp_profile_events *ev;
    const vmp_profile_counter *ctr;
    size_t n, i;
    uint64_t tid, w;
    char date[64];
    double dur = (double)t->last_time_ns / 1e9;
    uint64_t symbolic = symbolic_total(t);

    fprintf(f, "vmp report: %s\n", path);
    if (h && h->start_realtime_ns) {
        vmp_cli_format_utc(date, sizeof date, h->start_realtime_ns);
    } else {
        snprintf(date, sizeof date, "unknown");
    }
    fprintf(f, "producer: %s; vm: %s%s%s\n", h ? h->producer.s : "", h ? h->vm_name.s : "",
            h && h->vm_version.len ? " " : "", h ? h->vm_version.s : "");
    if (h && h->n_labels) {
        fputs("labels:", f);
        for (size_t k = 0; k < h->n_labels; k++)
            fprintf(f, "%s %.*s=%.*s", k ? "," : "", (int)h->labels[2 * k].len, h->labels[2 * k].s,
                    (int)h->labels[2 * k + 1].len, h->labels[2 * k + 1].s);
        fputc('\n', f);
    }
    fprintf(f, "date: %s; duration: %.3f s", date, dur);
    if (h && h->interval_ns)
        fprintf(f, "; sampling frequency: %.1f Hz", 1e9 / (double)h->interval_ns);
    fprintf(f, "\n");
    fprintf(f,
            "samples: %" PRIu64 " total; %" PRIu64 " (%.2f%%) in generated vm code; %" PRIu64
            " (%.2f%%) in vanilla vm code; %" PRIu64 " (%.2f%%) unknown; ",
            t->samples, t->generated, pct(t->generated, t->samples), t->native,
            pct(t->native, t->samples), t->unknown, pct(t->unknown, t->samples));
    if (symbolic)
        fprintf(f, "%" PRIu64 " (%.2f%%) in symbolic frames only; ", symbolic,
                pct(symbolic, t->samples));
    fprintf(f, "%" PRIu64 " (%.2f%%) failed\n", t->failed, pct(t->failed, t->samples));
    text_sample_kinds(f, r->a);
    fprintf(f, "code generations: %" PRIu64 " (every sample attributed at its own)\n",
            t->generations);
    if (r->error)
        fprintf(f, "note: the input is damaged; reported up to: %s\n", r->error);
    {
        vmp_analysis_stats as;
        vmp_analysis_get_stats(r->a, &as);
        if (as.truncated_stacks)
            fprintf(f,
                    "note: %" PRIu64 " stacks were deeper than %u frames: each keeps its "
                    "innermost frames under one '[truncated N frames]' frame\n",
                    as.truncated_stacks, VMP_ANALYSIS_DEFAULT_MAX_DEPTH);
    }

    text_section(f, r, o, "% of generated vm code: methods, blocks and other code",
                 VMP_CLASS_GENERATED, 2);
    text_section(f, r, o, "% of generated vm code: PICs (closed and open)", VMP_CLASS_GENERATED, 1);
    text_kinds(f, r);
    text_units(f, r, o);
    text_section(f, r, o, "% of vanilla vm code", VMP_CLASS_NATIVE, 0);
    if (symbolic > 0)
        text_section(f, r, o,
                     "% of symbolic frames (innermost; the pc in none of their code, or no pc)",
                     VMP_CLASS_SYMBOLIC, 0);

    fprintf(f, "\nGC and code compaction\n");
    ev = vmp_profile_event_totals(r->p, &n);
    {
        int gc_found = 0;
        for (i = 0; i < n; i++)
            if (strcmp(vmp_analysis_event_kind_name(r->a, (uint32_t)i), "gc") == 0 && ev[i].count) {
                fprintf(f, "  gc: %" PRIu64 " events, total %.3f ms (%.2f%% of the run)\n",
                        ev[i].count, (double)ev[i].total_duration_ns / 1e6,
                        t->last_time_ns
                            ? 100.0 * (double)ev[i].total_duration_ns / (double)t->last_time_ns
                            : 0.0);
                gc_found = 1;
            }
        if (!gc_found)
            fprintf(f, "  gc: no events\n");
    }
    fprintf(f,
            "  code compactions: %" PRIu64 ", total %.3f ms; code frees %" PRIu64 ", moves %" PRIu64
            "\n",
            t->compactions, (double)t->compaction_ns / 1e6, t->code_frees, t->code_moves);

    fprintf(f, "\nevents\n");
    if (n == 0)
        fprintf(f, "  (none)\n");
    for (i = 0; i < n; i++)
        if (ev[i].count)
            fprintf(f, "  %-20s %10" PRIu64 " events, total %.3f ms\n",
                    vmp_analysis_event_kind_name(r->a, (uint32_t)i), ev[i].count,
                    (double)ev[i].total_duration_ns / 1e6);
    ctr = vmp_profile_counters(r->p, &n);
    fprintf(f, "\ncounters\n");
    if (n == 0)
        fprintf(f, "  (none)\n");
    for (i = 0; i < n; i++)
        if (ctr[i].count)
            fprintf(f,
                    "  %-20s %10" PRIu64 " values, first %" PRId64 ", last %" PRId64
                    ", min %" PRId64 ", max %" PRId64 "\n",
                    vmp_analysis_counter_kind_name(r->a, (uint32_t)i), ctr[i].count, ctr[i].first,
                    ctr[i].last, ctr[i].min, ctr[i].max);

    sw = vmp_profile_state_weights(r->p, &n);
    {
        size_t n_sc = 0;
        const uint64_t *sc = vmp_profile_state_class_weights(r->p, &n_sc);
        fprintf(f, "\nVM states (%% of total; samples in generated / vanilla / unknown code%s)\n",
                symbolic ? " / symbolic frames" : "");
        for (i = 0; i < n; i++) {
            uint64_t g = 0, v = 0, u = 0, y = 0;
            if (!sw[i])
                continue;
            if (i * 4 + VMP_CLASS_GENERATED < n_sc)
                g = sc[i * 4 + VMP_CLASS_GENERATED];
            if (i * 4 + VMP_CLASS_NATIVE < n_sc)
                v = sc[i * 4 + VMP_CLASS_NATIVE];
            if (i * 4 + VMP_CLASS_UNKNOWN < n_sc)
                u = sc[i * 4 + VMP_CLASS_UNKNOWN];
            if (i * 4 + VMP_CLASS_SYMBOLIC < n_sc)
                y = sc[i * 4 + VMP_CLASS_SYMBOLIC];
            fprintf(f, "  %-20s %7.2f%% %10" PRIu64 "   %" PRIu64 " / %" PRIu64 " / %" PRIu64,
                    vmp_analysis_state_name(r->a, (uint32_t)i), pct(sw[i], t->samples), sw[i], g, v,
                    u);
            if (symbolic)
                fprintf(f, " / %" PRIu64, y);
            fprintf(f, "\n");
        }
    }
    fprintf(f, "\nthreads (%% of total)\n");
    for (i = 0; vmp_profile_thread(r->p, i, &tid, &w); i++)
        fprintf(f, "  %-20s %7.2f%% %10" PRIu64 "\n", vmp_analysis_thread_name(r->a, tid),
                pct(w, t->samples), w);
    fw = vmp_profile_failure_weights(r->p, &n);
    if (t->failed) {
        fprintf(f, "\nfailed samples by reason (%% of failed)\n");
        for (i = 0; i < n; i++)
            if (fw[i])
                fprintf(f, "  %-20s %7.2f%% %10" PRIu64 "\n",
                        vmp_analysis_failure_reason_name(r->a, (uint32_t)i), pct(fw[i], t->failed),
                        fw[i]);
    }
    text_blame(f, r, o);
}

static void json_str(FILE *f, const char *s)
{
    vmp_cli_put_json_string(f, s, strlen(s));
}

/* '],"KEY":[{"FIELD":name,"samples":w}, ...' for the n weights of a
 * vocabulary (states, failure reasons) named by `name`. */
static void json_named_weights(FILE *f,
                               vmp_analysis *a,
                               const char *key,
                               const char *field,
                               const char *(*name)(vmp_analysis *, uint32_t),
                               const uint64_t *w,
                               size_t n)
{
    size_t i;
    fprintf(f, "],\"%s\":[", key);
    for (i = 0; i < n; i++) {
        fprintf(f, "%s{\"%s\":", i ? "," : "", field);
        json_str(f, name(a, (uint32_t)i));
        fprintf(f, ",\"samples\":%" PRIu64 "}", w[i]);
    }
}

static void json_section(FILE *f, const report *r, const rep_opts *o, const char *key, int cls)
{
    size_t n = 0, k, i, j;
    uint64_t total = 0, rest = 0;
    entry *e = collect(r, cls, 0, &n, &total);
    fprintf(f, ",\"%s\":{\"samples\":%" PRIu64 ",\"functions\":[", key, total);
    if (!e) {
        fprintf(f, "]}");
        return;
    }
    k = shown(o, e, n, total);
    for (i = 0; i < k; i++) {
        const vmp_afunction *fn = fn_of(r, e[i].id);
        fprintf(f, "%s{\"name\":", i ? "," : "");
        json_str(f, fn->name);
        fprintf(f, ",\"kind\":");
        json_str(f, fn->kind);
        fprintf(f, ",\"samples\":%" PRIu64 ",\"percent\":%.4f,\"percent_total\":%.4f", e[i].w,
                pct(e[i].w, total), pct(e[i].w, r->t->samples));
        if (o->ranges && (cls == VMP_CLASS_GENERATED || cls == VMP_CLASS_SYMBOLIC)) {
            int first = 1;
            fprintf(f, ",\"ranges\":[");
            for (j = frames_begin(r, e[i].id); j < r->n_frames; j++) {
                const vmp_aframe *fr = vmp_analysis_frame(r->a, r->frames[j].id);
                if (fr->function != e[i].id)
                    break;
                fprintf(f, "%s{", first ? "" : ",");
                first = 0;
                if (fr->has_range) {
                    uint64_t lo, hi;
                    fprintf(f, "\"first\":%" PRIu32 ",\"last\":%" PRIu32 ",", fr->bc_first,
                            fr->bc_last);
                    if (fn->function_id && vmp_analysis_lines(r->a, fn->function_id, fr->bc_first,
                                                              fr->bc_last, &lo, &hi))
                        fprintf(f, "\"line_first\":%" PRIu64 ",\"line_last\":%" PRIu64 ",", lo, hi);
                }
                fprintf(f, "\"samples\":%" PRIu64 "}", r->frames[j].w);
            }
            fprintf(f, "]");
        }
        fprintf(f, "}");
    }
    for (i = k; i < n; i++)
        rest += e[i].w;
    fprintf(f, "],\"others\":{\"functions\":%zu,\"samples\":%" PRIu64 "}}", n - k, rest);
    free(e);
}

/* The kinds as JSON: "kind" (the one shown), "unit", "kinds". */
static void json_sample_kinds(FILE *f, vmp_analysis *a)
{
    size_t n = 0, i;
    const vmp_akind *k = vmp_analysis_kinds(a, &n);
    int64_t sel = vmp_analysis_kind_selected(a);
    if (sel < 0 || (size_t)sel >= n)
        sel = 0;
    fputs(",\"kind\":", f);
    json_str(f, n ? k[sel].name : "cpu");
    fputs(",\"unit\":", f);
    json_str(f, n ? k[sel].unit : "samples");
    fputs(",\"kinds\":[", f);
    for (i = 0; i < n; i++) {
        fputs(i ? ",{\"name\":" : "{\"name\":", f);
        json_str(f, k[i].name);
        fputs(",\"unit\":", f);
        json_str(f, k[i].unit);
        fprintf(f, ",\"samples\":%" PRIu64 ",\"weight\":%" PRIu64 "}", k[i].records, k[i].weight);
    }
    fputc(']', f);
}

static void json_report(FILE *f, const report *r, const rep_opts *o, const char *path)
{
    const vmp_rec_header *h = vmp_analysis_header(r->a);
    const vmp_profile_totals *t = r->t;
    const uint64_t *sw, *fw;
    const vmp_profile_events *ev;
    size_t n, i;
    uint64_t tid, w;

    fprintf(f, "{\"file\":");
    json_str(f, path);
    fprintf(f, ",\"producer\":");
    json_str(f, h ? h->producer.s : "");
    fprintf(f, ",\"vm_name\":");
    json_str(f, h ? h->vm_name.s : "");
    fprintf(f, ",\"labels\":{");
    for (size_t k = 0; h && k < h->n_labels; k++) {
        if (k)
            fputc(',', f);
        vmp_cli_put_json_string(f, h->labels[2 * k].s, h->labels[2 * k].len);
        fputc(':', f);
        vmp_cli_put_json_string(f, h->labels[2 * k + 1].s, h->labels[2 * k + 1].len);
    }
    fputc('}', f);
    fprintf(f,
            ",\"start_realtime_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64
            ",\"interval_ns\":%" PRIu64,
            h ? h->start_realtime_ns : 0, t->last_time_ns, h ? h->interval_ns : 0);
    fprintf(f,
            ",\"samples\":%" PRIu64 ",\"generated\":%" PRIu64 ",\"native\":%" PRIu64
            ",\"unknown\":%" PRIu64 ",\"symbolic\":%" PRIu64 ",\"failed\":%" PRIu64
            ",\"generations\":%" PRIu64,
            t->samples, t->generated, t->native, t->unknown, symbolic_total(t), t->failed,
            t->generations);
    json_section(f, r, o, "generated_code", VMP_CLASS_GENERATED);
    json_units(f, r, o);
    json_section(f, r, o, "vanilla_code", VMP_CLASS_NATIVE);
    json_section(f, r, o, "symbolic_frames", VMP_CLASS_SYMBOLIC);
    fprintf(f,
            ",\"compactions\":{\"count\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"frees\":%" PRIu64
            ",\"moves\":%" PRIu64 "}",
            t->compactions, t->compaction_ns, t->code_frees, t->code_moves);
    ev = vmp_profile_event_totals(r->p, &n);
    fprintf(f, ",\"events\":[");
    for (i = 0; i < n; i++) {
        fprintf(f, "%s{\"kind\":", i ? "," : "");
        json_str(f, vmp_analysis_event_kind_name(r->a, (uint32_t)i));
        fprintf(f, ",\"count\":%" PRIu64 ",\"total_ns\":%" PRIu64 "}", ev[i].count,
                ev[i].total_duration_ns);
    }
    sw = vmp_profile_state_weights(r->p, &n);
    json_named_weights(f, r->a, "states", "state", vmp_analysis_state_name, sw, n);
    fprintf(f, "],\"threads\":[");
    for (i = 0; vmp_profile_thread(r->p, i, &tid, &w); i++) {
        fprintf(f, "%s{\"id\":%" PRIu64 ",\"name\":", i ? "," : "", tid);
        json_str(f, vmp_analysis_thread_name(r->a, tid));
        fprintf(f, ",\"samples\":%" PRIu64 "}", w);
    }
    fw = vmp_profile_failure_weights(r->p, &n);
    json_named_weights(f, r->a, "failures", "reason", vmp_analysis_failure_reason_name, fw, n);
    fprintf(f, "]");
    json_blame(f, r, o);
    {
        vmp_analysis_stats as;
        vmp_analysis_get_stats(r->a, &as);
        fprintf(f, ",\"truncated_stacks\":%" PRIu64, as.truncated_stacks);
    }
    json_sample_kinds(f, r->a);
    fprintf(f, ",\"error\":");
    if (r->error)
        json_str(f, r->error);
    else
        fprintf(f, "null");
    fprintf(f, "}\n");
}

static void csv_report(FILE *f, const report *r, const rep_opts *o)
{
    static const int classes[] = {VMP_CLASS_GENERATED, VMP_CLASS_NATIVE, VMP_CLASS_SYMBOLIC,
                                  VMP_CLASS_UNKNOWN};
    static const char *const class_names[] = {"generated", "vanilla", "symbolic", "unknown"};
    size_t c, i, j;
    /* Samples with neither a pc nor a stack have no frame; they count under
     * the [unknown] row so that the rows sum to the total (see the help). */
    uint64_t frameless = r->t->samples;
    for (i = 1; i < r->n_fw; i++)
        frameless -= r->fw[i] < frameless ? r->fw[i] : frameless;
    fprintf(f, "class,kind,function,range,samples\n");
    for (c = 0; c < 4; c++) {
        size_t n = 0;
        uint64_t total = 0;
        entry *e = collect(r, classes[c], 0, &n, &total);
        if (!e)
            continue;
        for (i = 0; i < n; i++) {
            const vmp_afunction *fn = fn_of(r, e[i].id);
            if (frameless && classes[c] == VMP_CLASS_UNKNOWN &&
                strcmp(fn->name, "[unknown]") == 0) {
                e[i].w += frameless;
                for (j = frames_begin(r, e[i].id); j < r->n_frames; j++) {
                    const vmp_aframe *fr = vmp_analysis_frame(r->a, r->frames[j].id);
                    if (fr->function != e[i].id)
                        break;
                    if (!fr->has_range) {
                        r->frames[j].w += frameless;
                        break;
                    }
                }
                frameless = 0;
            }
            if (!o->ranges) {
                fprintf(f, "%s,", class_names[c]);
                vmp_cli_put_csv_field(f, fn->kind);
                fputc(',', f);
                vmp_cli_put_csv_field(f, fn->name);
                fprintf(f, ",,%" PRIu64 "\n", e[i].w);
                continue;
            }
            for (j = frames_begin(r, e[i].id); j < r->n_frames; j++) {
                const vmp_aframe *fr = vmp_analysis_frame(r->a, r->frames[j].id);
                if (fr->function != e[i].id)
                    break;
                fprintf(f, "%s,", class_names[c]);
                vmp_cli_put_csv_field(f, fn->kind);
                fputc(',', f);
                vmp_cli_put_csv_field(f, fn->name);
                if (fr->has_range)
                    fprintf(f, ",%" PRIu32 "->%" PRIu32, fr->bc_first, fr->bc_last);
                else
                    fputc(',', f);
                fprintf(f, ",%" PRIu64 "\n", r->frames[j].w);
            }
        }
        free(e);
    }
    if (frameless)
        fprintf(f, "unknown,unknown,[unknown],,%" PRIu64 "\n", frameless);
}

/* ---- JIT units ------------------------------------------------------------ */

/* The name a JIT unit (code id) is listed under (vmp_analysis_unit_name()). */
static const char *unit_name(const report *r, uint64_t code)
{
    const char *name = vmp_analysis_unit_name(r->a, code);
    return name ? name : "[undefined code]";
}

typedef struct unit {
    const char *name; /* unit_name(), borrowed from the analysis */
    uint32_t fn;      /* afunction of its first code object, 0 == none */
    uint64_t w;
} unit;

static int cmp_unit_name(const void *x, const void *y)
{
    return strcmp(((const unit *)x)->name, ((const unit *)y)->name);
}

static int cmp_unit_weight(const void *x, const void *y)
{
    const unit *a = x, *b = y;
    if (a->w != b->w)
        return a->w > b->w ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* The JIT units that samples ran in (vmp_profile_code_weights()), one per
 * name, ranked by weight then name; `*total` receives their weight, `*named`
 * whether a unit has a name of its own (not its function's).  NULL on no
 * memory; an empty table is not NULL. */
static unit *units_table(const report *r, size_t *n_out, uint64_t *total, int *named)
{
    size_t n, i, m = 0;
    const vmp_profile_code *c = vmp_profile_code_weights(r->p, &n);
    unit *u = malloc((n + 1) * sizeof *u);
    *n_out = 0;
    *total = 0;
    *named = 0;
    if (!u)
        return NULL;
    for (i = 0; i < n; i++) {
        u[i].name = unit_name(r, c[i].code);
        u[i].fn = vmp_analysis_code_function(r->a, c[i].code);
        u[i].w = c[i].weight;
        *total += c[i].weight;
        if (u[i].fn && strcmp(u[i].name, fn_of(r, u[i].fn)->name) != 0)
            *named = 1;
    }
    qsort(u, n, sizeof *u, cmp_unit_name); /* stable enough: fn of the first kept */
    for (i = 0; i < n; i++) {
        if (m && strcmp(u[m - 1].name, u[i].name) == 0)
            u[m - 1].w += u[i].w;
        else
            u[m++] = u[i];
    }
    qsort(u, m, sizeof *u, cmp_unit_weight);
    *n_out = m;
    return u;
}

/* Generated code by JIT unit, when units have names of their own (a tracing
 * JIT's traces, where the function table merges every trace of a
 * function). */
static void text_units(FILE *f, const report *r, const rep_opts *o)
{
    size_t n, k, i;
    uint64_t total, cum = 0, rest = 0;
    int named;
    unit *u = units_table(r, &n, &total, &named);
    if (!u || !named) {
        free(u);
        return;
    }
    fprintf(f, "\n%% of generated vm code by JIT unit (%" PRIu64 " samples, %.2f%% of total)\n",
            total, pct(total, r->t->samples));
    fprintf(f, "  %8s %8s %10s %8s  %s\n", "%", "% total", "samples", "cumul.",
            "JIT unit [kind] (function)");
    k = rows_shown(o, u, n, sizeof *u, offsetof(unit, w), total);
    for (i = 0; i < n; i++) {
        const vmp_afunction *fn = u[i].fn ? fn_of(r, u[i].fn) : NULL;
        if (i >= k) {
            rest += u[i].w;
            continue;
        }
        cum += u[i].w;
        fprintf(f, "  %7.2f%% %7.2f%% %10" PRIu64 " %7.2f%%  %s", pct(u[i].w, total),
                pct(u[i].w, r->t->samples), u[i].w, pct(cum, total), u[i].name);
        if (fn && strcmp(fn->name, u[i].name) != 0)
            fprintf(f, " [%s] (%s)\n", fn->kind, fn->name);
        else
            fprintf(f, " [%s]\n", fn ? fn->kind : "?");
    }
    if (k < n)
        fprintf(f, "  %7.2f%% %7.2f%% %10" PRIu64 " %7.2f%%  ...others... (%zu)\n",
                pct(rest, total), pct(rest, r->t->samples), rest, 100.0, n - k);
    free(u);
}

static void json_units(FILE *f, const report *r, const rep_opts *o)
{
    size_t n, k, i;
    uint64_t total, rest = 0;
    int named;
    unit *u = units_table(r, &n, &total, &named);
    if (!u)
        return;
    k = rows_shown(o, u, n, sizeof *u, offsetof(unit, w), total);
    fprintf(f, ",\"jit_units\":{\"samples\":%" PRIu64 ",\"units\":[", total);
    for (i = 0; i < k; i++) {
        const vmp_afunction *fn = u[i].fn ? fn_of(r, u[i].fn) : NULL;
        fprintf(f, "%s{\"name\":", i ? "," : "");
        json_str(f, u[i].name);
        fprintf(f, ",\"function\":");
        json_str(f, fn ? fn->name : "");
        fprintf(f, ",\"kind\":");
        json_str(f, fn ? fn->kind : "");
        fprintf(f, ",\"samples\":%" PRIu64 "}", u[i].w);
    }
    for (i = k; i < n; i++)
        rest += u[i].w;
    fprintf(f, "],\"others\":{\"units\":%zu,\"samples\":%" PRIu64 "}}", n - k, rest);
    free(u);
}

/* ---- --by module|thread|state|unit --------------------------------------------- */

typedef struct kentry {
    const char *name; /* borrowed from the analysis, static, or `owned` */
    char *owned;      /* malloc'd name, or NULL */
    uint64_t w;
    const char *kind; /* --by vm-function: "function", "state" or "failed"; else NULL */
    uint64_t own;     /* --by vm-function: the samples in the function's own code */
} kentry;

static void free_table(kentry *e, size_t n)
{
    size_t i;
    for (i = 0; e && i < n; i++)
        free(e[i].owned);
    free(e);
}

static int cmp_kentry_name(const void *x, const void *y)
{
    const kentry *a = x, *b = y;
    int c = strcmp(a->name, b->name);
    return c || !a->kind || !b->kind ? c : strcmp(a->kind, b->kind);
}

static int cmp_kentry_weight(const void *x, const void *y)
{
    const kentry *a = x, *b = y;
    if (a->w != b->w)
        return a->w > b->w ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* The module a resolved function's samples count under (see the help). */
static const char *module_key(const report *r, const vmp_afunction *fn, char *buf, size_t size)
{
    switch (fn->code_class) {
    case VMP_CLASS_NATIVE:
        return vmp_analysis_module_name(r->a, fn->module_id);
    case VMP_CLASS_GENERATED:
        if (!fn->zone_id)
            return "[generated code]";
        snprintf(buf, size, "[generated code: %s]", vmp_analysis_zone_name(r->a, fn->zone_id));
        return buf;
    case VMP_CLASS_SYMBOLIC:
        return "[symbolic]";
    default:
        return "[unknown]";
    }
}

/* Sum the samples per key of `by` (names borrowed from the analysis or
 * static), ranked by weight then name; NULL on no memory.  Keys that read
 * alike (two threads of one name) are one key. */
static kentry *by_table(const report *r, int by, size_t *n_out)
{
    size_t cap = 8, n = 0, i, m;
    kentry *e = malloc(cap * sizeof *e);
    uint64_t sum = 0;
    if (!e)
        return NULL;
/* OWN: NAME when it is ours to free, else NULL */
#define ADD_KEY(NAME, OWN, W)                            \
    do {                                                 \
        if (n == cap) {                                  \
            kentry *g = realloc(e, 2 * cap * sizeof *e); \
            if (!g) {                                    \
                free(OWN);                               \
                free_table(e, n);                        \
                return NULL;                             \
            }                                            \
            e = g;                                       \
            cap *= 2;                                    \
        }                                                \
        e[n].name = (NAME);                              \
        e[n].owned = (OWN);                              \
        e[n].w = (W);                                    \
        e[n].kind = NULL;                                \
        e[n].own = 0;                                    \
        sum += e[n].w;                                   \
        n++;                                             \
    } while (0)
    if (by == BY_THREAD) {
        uint64_t tid, w;
        for (i = 0; vmp_profile_thread(r->p, i, &tid, &w); i++)
            if (w)
                ADD_KEY(vmp_analysis_thread_name(r->a, tid), NULL, w);
    } else if (by == BY_STATE) {
        const uint64_t *sw = vmp_profile_state_weights(r->p, &m);
        for (i = 0; i < m; i++)
            if (sw[i])
                ADD_KEY(vmp_analysis_state_name(r->a, (uint32_t)i), NULL, sw[i]);
    } else if (by == BY_VM_FUNCTION) { /* spec R-VIEW-7 */
        const vmp_profile_key *keys = vmp_profile_keys(r->p, &m);
        for (i = 0; i < m; i++) {
            const vmp_profile_key *k = &keys[i];
            uint32_t fr = 0;
            int own = 0;
            const char *kind = "function";
            char *failed = NULL;
            if (!k->weight)
                continue;
            if (k->failed)
                fr = vmp_analysis_is_vm_frame(r->a, k->leaf) ? k->leaf : 0, own = fr != 0;
            else
                fr = vmp_analysis_vm_frame(r->a, k->stack, &own);
            if (!fr && k->failed) {
                const char *why = vmp_analysis_failure_reason_name(r->a, k->reason);
                size_t len = strlen(why) + 11;
                kind = "failed";
                failed = malloc(len);
                if (!failed) {
                    free_table(e, n);
                    return NULL;
                }
                snprintf(failed, len, "[failed: %s]", why);
            } else if (!fr) {
                kind = "state";
                fr = vmp_analysis_vm_state_frame(r->a, k->state);
                if (!fr) {
                    free_table(e, n);
                    return NULL;
                }
            }
            ADD_KEY(failed ? failed : fn_of(r, vmp_analysis_frame(r->a, fr)->function)->name,
                    failed, k->weight);
            e[n - 1].kind = kind;
            e[n - 1].own = own ? k->weight : 0;
        }
    } else if (by == BY_UNIT) {
        const vmp_profile_code *c = vmp_profile_code_weights(r->p, &m);
        for (i = 0; i < m; i++)
            ADD_KEY(unit_name(r, c[i].code), NULL, c[i].weight);
        if (r->t->samples > sum)
            ADD_KEY("[not in generated code]", NULL, r->t->samples - sum);
    } else {
        for (i = 1; i < r->n_fw; i++) {
            const vmp_afunction *fn = fn_of(r, (uint32_t)i);
            char buf[512];
            const char *k;
            if (!fn || !r->fw[i])
                continue;
            k = module_key(r, fn, buf, sizeof buf);
            if (k == buf) { /* a name of our own: one copy per zone */
                size_t j, len = strlen(buf) + 1;
                char *own;
                for (j = 0; j < n && strcmp(e[j].name, buf) != 0; j++)
                    ;
                if (j < n) {
                    e[j].w += r->fw[i];
                    sum += r->fw[i];
                    continue;
                }
                own = malloc(len);
                if (!own) {
                    free_table(e, n);
                    return NULL;
                }
                memcpy(own, buf, len);
                ADD_KEY(own, own, r->fw[i]);
                continue;
            }
            ADD_KEY(k, NULL, r->fw[i]);
        }
        /* samples with no executing frame at all (failed, no pc) */
        if (r->t->samples > sum)
            ADD_KEY("[unknown]", NULL, r->t->samples - sum);
    }
#undef ADD_KEY
    qsort(e, n, sizeof *e, cmp_kentry_name);
    for (i = 0, m = 0; i < n; i++) {
        if (m && cmp_kentry_name(&e[m - 1], &e[i]) == 0) {
            e[m - 1].w += e[i].w;
            e[m - 1].own += e[i].own;
            free(e[i].owned); /* a duplicate's own copy of the name */
        } else
            e[m++] = e[i];
    }
    qsort(e, m, sizeof *e, cmp_kentry_weight);
    *n_out = m;
    return e;
}

static const char *const by_names[] = {"function", "module", "thread",
                                       "state",    "unit",   "vm-function"};

static void by_report(
    FILE *f, const report *r, const rep_opts *o, const char *path, const kentry *e, size_t n)
{
    uint64_t total = r->t->samples, cum = 0, rest = 0;
    size_t k = 0, i;
    const char *what = by_names[o->by];
    while (k < n && (o->top == 0 || k < o->top) && pct(e[k].w, total) >= o->min_percent)
        k++;
    for (i = k; i < n; i++)
        rest += e[i].w;
    if (o->format == FMT_CSV && o->by == BY_VM_FUNCTION) { /* spec R-VIEW-7 */
        fprintf(f, "kind,%s,samples,own\n", what);
        for (i = 0; i < n; i++) {
            fprintf(f, "%s,", e[i].kind);
            vmp_cli_put_csv_field(f, e[i].name);
            fprintf(f, ",%" PRIu64 ",%" PRIu64 "\n", e[i].w, e[i].own);
        }
        return;
    }
    if (o->format == FMT_CSV) {
        fprintf(f, "%s,samples\n", what);
        for (i = 0; i < n; i++) {
            vmp_cli_put_csv_field(f, e[i].name);
            fprintf(f, ",%" PRIu64 "\n", e[i].w);
        }
        return;
    }
    if (o->format == FMT_JSON) {
        fprintf(f, "{\"file\":");
        json_str(f, path);
        fprintf(f, ",\"by\":\"%s\",\"samples\":%" PRIu64 ",\"entries\":[", what, total);
        for (i = 0; i < k; i++) {
            cum += e[i].w;
            fprintf(f, "%s{\"name\":", i ? "," : "");
            json_str(f, e[i].name);
            fprintf(f, ",\"samples\":%" PRIu64 ",\"percent\":%.4f,\"cumulative\":%.4f", e[i].w,
                    pct(e[i].w, total), pct(cum, total));
            if (e[i].kind)
                fprintf(f, ",\"kind\":\"%s\",\"own\":%" PRIu64, e[i].kind, e[i].own);
            fputc('}', f);
        }
        fprintf(f, "],\"others\":{\"%ss\":%zu,\"samples\":%" PRIu64 "},\"error\":", what, n - k,
                rest);
        if (r->error)
            json_str(f, r->error);
        else
            fprintf(f, "null");
        fprintf(f, "}\n");
        return;
    }
    fprintf(f, "vmp report: %s\n", path);
    fprintf(f, "\nsamples by %s (%" PRIu64 " samples)\n", what, total);
    if (n == 0) {
        fprintf(f, "  (none)\n");
        return;
    }
    if (o->by == BY_VM_FUNCTION) {
        fprintf(f, "  (each sample under the innermost function of the VM's language on its\n"
                   "  stack, with the code it called; 'own': in the function's own code)\n");
        fprintf(f, "  %8s %10s %8s %8s  %-8s  %s\n", "%", "samples", "cumul.", "own", "kind", what);
    } else {
        fprintf(f, "  %8s %10s %8s  %s\n", "%", "samples", "cumul.", what);
    }
    for (i = 0; i < k; i++) {
        cum += e[i].w;
        if (o->by == BY_VM_FUNCTION)
            fprintf(f, "  %7.2f%% %10" PRIu64 " %7.2f%% %7.2f%%  %-8s  %s\n", pct(e[i].w, total),
                    e[i].w, pct(cum, total), pct(e[i].own, e[i].w), e[i].kind, e[i].name);
        else
            fprintf(f, "  %7.2f%% %10" PRIu64 " %7.2f%%  %s\n", pct(e[i].w, total), e[i].w,
                    pct(cum, total), e[i].name);
    }
    if (k < n && o->by == BY_VM_FUNCTION)
        fprintf(f, "  %7.2f%% %10" PRIu64 " %7.2f%% %8s  %-8s  ...others... (%zu)\n",
                pct(rest, total), rest, 100.0, "", "", n - k);
    else if (k < n)
        fprintf(f, "  %7.2f%% %10" PRIu64 " %7.2f%%  ...others... (%zu)\n", pct(rest, total), rest,
                100.0, n - k);
}

/* ---- time blamed on JIT units ---------------------------------------------- */

typedef struct brow {
    const char *name; /* the blamed unit's (unit_name()), or "[no blame]" */
    uint32_t fn;      /* afunction of its first code object, 0 == none */
    uint64_t total;
    uint64_t *cells; /* n_states weights */
} brow;

typedef struct bmatrix {
    brow *rows;
    size_t n_rows, n_states;
    uint64_t *cells, *col, total;
} bmatrix;

static int cmp_brow(const void *x, const void *y)
{
    const brow *a = x, *b = y;
    if (a->total != b->total)
        return a->total > b->total ? -1 : 1;
    return strcmp(a->name, b->name);
}

static void bmatrix_free(bmatrix *m)
{
    free(m->rows);
    free(m->cells);
    free(m->col);
}

/* Build the matrix from the profile's (blame, state) cells: one row per
 * blamed JIT unit (code objects of one name are one row, see unit_name()).
 * -1 on no memory. */
static int bmatrix_build(const report *r, bmatrix *m)
{
    size_t n, i, j;
    const vmp_profile_blame *b = vmp_profile_blame_weights(r->p, &n);
    uint32_t *row_of = malloc((n + 1) * sizeof *row_of);
    memset(m, 0, sizeof *m);
    if (!row_of)
        return -1;
    for (i = 0; i < n; i++)
        if (b[i].state + 1 > m->n_states)
            m->n_states = b[i].state + 1;
    m->rows = calloc(n + 1, sizeof *m->rows);
    m->cells = calloc((n + 1) * (m->n_states + 1), sizeof *m->cells);
    m->col = calloc(m->n_states + 1, sizeof *m->col);
    if (!m->rows || !m->cells || !m->col) {
        free(row_of);
        bmatrix_free(m);
        return -1;
    }
    for (i = 0; i < n; i++) {
        const char *name = b[i].code ? unit_name(r, b[i].code) : "[no blame]";
        for (j = 0; j < m->n_rows && strcmp(m->rows[j].name, name) != 0; j++)
            ;
        if (j == m->n_rows) {
            m->rows[j].name = name;
            m->rows[j].fn = b[i].code ? vmp_analysis_code_function(r->a, b[i].code) : 0;
            m->n_rows++;
        }
        row_of[i] = (uint32_t)j;
    }
    for (j = 0; j < m->n_rows; j++)
        m->rows[j].cells = m->cells + j * m->n_states;
    for (i = 0; i < n; i++) {
        brow *row = &m->rows[row_of[i]];
        row->cells[b[i].state] += b[i].weight;
        row->total += b[i].weight;
        m->col[b[i].state] += b[i].weight;
        m->total += b[i].weight;
    }
    free(row_of);
    qsort(m->rows, m->n_rows, sizeof *m->rows, cmp_brow);
    return 0;
}

static const char *brow_kind(const report *r, const brow *row)
{
    return row->fn ? fn_of(r, row->fn)->kind : "";
}

static void text_blame(FILE *f, const report *r, const rep_opts *o)
{
    bmatrix m;
    size_t i, s, k;
    uint64_t *rest;
    if (!vmp_profile_blamed_samples(r->p))
        return;
    if (bmatrix_build(r, &m) != 0) {
        fprintf(f, "\ntime blamed on JIT units: out of memory\n");
        return;
    }
    fprintf(f,
            "\ntime blamed on JIT units (samples not in generated code, by the JIT unit last "
            "exited; %" PRIu64 " samples, %.2f%% of total)\n",
            m.total, pct(m.total, r->t->samples));
    fprintf(f, "  %8s %10s", "%", "samples");
    for (s = 0; s < m.n_states; s++)
        if (m.col[s])
            fprintf(f, " %12.12s", vmp_analysis_state_name(r->a, (uint32_t)s));
    fprintf(f, "  JIT unit\n");
    k = rows_shown(o, m.rows, m.n_rows, sizeof *m.rows, offsetof(brow, total), m.total);
    rest = m.cells + m.n_rows * m.n_states; /* the spare row */
    for (i = 0; i < m.n_rows; i++) {
        const brow *row = &m.rows[i];
        if (i >= k) {
            for (s = 0; s < m.n_states; s++)
                rest[s] += row->cells[s];
            continue;
        }
        fprintf(f, "  %7.2f%% %10" PRIu64, pct(row->total, m.total), row->total);
        for (s = 0; s < m.n_states; s++)
            if (m.col[s])
                fprintf(f, " %12" PRIu64, row->cells[s]);
        if (row->fn)
            fprintf(f, "  %s [%s]\n", row->name, brow_kind(r, row));
        else
            fprintf(f, "  %s\n", row->name);
    }
    if (k < m.n_rows) {
        uint64_t w = 0;
        for (s = 0; s < m.n_states; s++)
            w += rest[s];
        fprintf(f, "  %7.2f%% %10" PRIu64, pct(w, m.total), w);
        for (s = 0; s < m.n_states; s++)
            if (m.col[s])
                fprintf(f, " %12" PRIu64, rest[s]);
        fprintf(f, "  ...others... (%zu)\n", m.n_rows - k);
    }
    fprintf(f, "  %7.2f%% %10" PRIu64, 100.0, m.total);
    for (s = 0; s < m.n_states; s++)
        if (m.col[s])
            fprintf(f, " %12" PRIu64, m.col[s]);
    fprintf(f, "  total\n");
    bmatrix_free(&m);
}

static void json_blame(FILE *f, const report *r, const rep_opts *o)
{
    bmatrix m;
    size_t i, s, k;
    uint64_t rest = 0;
    if (!vmp_profile_blamed_samples(r->p))
        return;
    if (bmatrix_build(r, &m) != 0)
        return;
    fprintf(f, ",\"blame\":{\"samples\":%" PRIu64 ",\"blamed\":%" PRIu64 ",\"states\":[", m.total,
            vmp_profile_blamed_samples(r->p));
    for (s = 0; s < m.n_states; s++) {
        fprintf(f, "%s", s ? "," : "");
        json_str(f, vmp_analysis_state_name(r->a, (uint32_t)s));
    }
    fprintf(f, "],\"totals\":[");
    for (s = 0; s < m.n_states; s++)
        fprintf(f, "%s%" PRIu64, s ? "," : "", m.col[s]);
    fprintf(f, "],\"units\":[");
    k = rows_shown(o, m.rows, m.n_rows, sizeof *m.rows, offsetof(brow, total), m.total);
    for (i = 0; i < k; i++) {
        const brow *row = &m.rows[i];
        fprintf(f, "%s{\"name\":", i ? "," : "");
        json_str(f, row->name);
        fprintf(f, ",\"function\":");
        json_str(f, row->fn ? fn_of(r, row->fn)->name : "");
        fprintf(f, ",\"kind\":");
        json_str(f, brow_kind(r, row));
        fprintf(f, ",\"samples\":%" PRIu64 ",\"by_state\":[", row->total);
        for (s = 0; s < m.n_states; s++)
            fprintf(f, "%s%" PRIu64, s ? "," : "", row->cells[s]);
        fprintf(f, "]}");
    }
    for (i = k; i < m.n_rows; i++)
        rest += m.rows[i].total;
    fprintf(f, "],\"others\":{\"units\":%zu,\"samples\":%" PRIu64 "}}", m.n_rows - k, rest);
    bmatrix_free(&m);
}

int vmp_cmd_report(int argc, char **argv)
{
    static const struct option longopts[] = {{"top", required_argument, NULL, 't'},
                                             {"min-percent", required_argument, NULL, 'm'},
                                             {"no-ranges", no_argument, NULL, 'R'},
                                             {"format", required_argument, NULL, 'f'},
                                             {"by", required_argument, NULL, 'b'},
                                             {"no-group-hidden", no_argument, NULL, 'G'},
                                             {"kind", required_argument, NULL, 'k'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    rep_opts o = {30, 0.0, 1, FMT_TEXT, BY_FUNCTION};
    const char *out_path = NULL, *path;
    vmp_reader *rd = NULL;
    vmp_cli_output out;
    report r;
    vmp_status st;
    size_t i;
    int c, rc;
    char *end;

    vmp_cli_getopt_begin();
    while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 't': {
            unsigned long long v = strtoull(optarg, &end, 10);
            if (!*optarg || *end || optarg[0] == '-')
                return vmp_cli_usage_error("report", "bad --top '%s'", optarg);
            o.top = (size_t)v;
            break;
        }
        case 'm':
            o.min_percent = strtod(optarg, &end);
            if (!*optarg || *end || o.min_percent < 0 || o.min_percent > 100)
                return vmp_cli_usage_error("report", "bad --min-percent '%s'", optarg);
            break;
        case 'R':
            o.ranges = 0;
            break;
        case 'G':
            vmp_analysis_add_default_flags(VMP_ANALYSIS_NO_GROUP_HIDDEN);
            break;
        case 'k':
            vmp_analysis_set_default_kind(optarg);
            break;
        case 'b': {
            int k;
            const int n_by = (int)(sizeof by_names / sizeof by_names[0]);
            for (k = 0; k < n_by && strcmp(optarg, by_names[k]) != 0; k++)
                ;
            if (k == n_by)
                return vmp_cli_usage_error("report", "unknown --by '%s'", optarg);
            o.by = k;
            break;
        }
        case 'f':
            if (strcmp(optarg, "text") == 0)
                o.format = FMT_TEXT;
            else if (strcmp(optarg, "json") == 0)
                o.format = FMT_JSON;
            else if (strcmp(optarg, "csv") == 0)
                o.format = FMT_CSV;
            else
                return vmp_cli_usage_error("report", "unknown format '%s'", optarg);
            break;
        case 'o':
            out_path = optarg;
            break;
        case 'h':
            fputs(report_usage, stdout);
            return vmp_cli_help(report_options);
        default:
            return vmp_cli_bad_option("report", argv, c);
        }
    }
    if (optind + 1 != argc)
        return vmp_cli_usage_error("report",
                                   optind >= argc ? "no input file" : "one input file only");
    path = argv[optind];

    memset(&r, 0, sizeof r);
    rc = vmp_cli_open_reader(&rd, "report", path);
    if (rc != VMP_EXIT_OK)
        return rc;
    if (vmp_profile_create(&r.p, NULL) != VMP_OK) {
        vmp_reader_close(rd);
        return vmp_cli_fail("report", "out of memory");
    }
    st = vmp_profile_read(r.p, rd);
    if (st == VMP_ERR_LIMIT) { /* not a damaged file: the report would mislead */
        rc = vmp_cli_fail("report", "%s", vmp_reader_errmsg(rd));
        vmp_profile_free(r.p);
        vmp_reader_close(rd);
        return rc;
    }
    if (st == VMP_ERR_NOMEM) {
        vmp_profile_free(r.p);
        vmp_reader_close(rd);
        return vmp_cli_fail("report", "out of memory");
    }
    if (st < 0)
        r.error = vmp_reader_errmsg(rd)[0] ? vmp_reader_errmsg(rd) : vmp_status_str(st);
    r.a = vmp_profile_analysis(r.p);
    r.t = vmp_profile_get_totals(r.p);
    r.fw = vmp_profile_function_weights(r.p, &r.n_fw);
    r.frw = vmp_profile_frame_weights(r.p, &r.n_frw);
    r.frames = malloc((r.n_frw + 1) * sizeof *r.frames);
    if (!r.frames) {
        vmp_profile_free(r.p);
        vmp_reader_close(rd);
        return vmp_cli_fail("report", "out of memory");
    }
    for (i = 1; i < r.n_frw; i++)
        if (r.frw[i]) {
            r.frames[r.n_frames].id = (uint32_t)i;
            r.frames[r.n_frames].w = r.frw[i];
            r.n_frames++;
        }
    sort_ctx = &r;
    qsort(r.frames, r.n_frames, sizeof *r.frames, cmp_frame_entries);
    /* spec R-CHK-6: a file cut inside chunk 0 is an empty, truncated profile */
    if (st < 0 && r.t->records == 0 && st != VMP_ERR_TRUNCATED) {
        rc = vmp_cli_fail("report", "%s", r.error);
    } else if ((rc = vmp_cli_output_open(&out, "report", out_path)) == VMP_EXIT_OK) {
        if (o.by != BY_FUNCTION) {
            size_t n_keys = 0;
            kentry *keys = by_table(&r, o.by, &n_keys);
            if (keys)
                by_report(out.f, &r, &o, path, keys, n_keys);
            else
                r.error = "out of memory";
            free_table(keys, n_keys);
        } else if (o.format == FMT_JSON)
            json_report(out.f, &r, &o, path);
        else if (o.format == FMT_CSV)
            csv_report(out.f, &r, &o);
        else
            text_report(out.f, &r, &o, path);
        rc = vmp_cli_output_close(&out, "report");
        if (rc == VMP_EXIT_OK && r.error)
            fprintf(stderr, "vmp report: warning: %s\n", r.error);
    }
    free(r.frames);
    vmp_profile_free(r.p);
    vmp_reader_close(rd);
    return rc;
}
