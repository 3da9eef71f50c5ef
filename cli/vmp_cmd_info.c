/* SPDX-License-Identifier: MIT
 *
 * vmp_cmd_info.c - `vmp info`: one streaming pass over a profile and a human
 * (or JSON) summary of it (spec.md §5 records, §5.2 END, §6 seek table).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vmp_cli.h"
#include "vmp_convert.h"
#include "vmp_grow.h"
#include "vmp_search.h"

enum {
    OPT_JSON = VMP_CLI_OPT_END,
    OPT_THREADS,
};

static const char info_synopsis[] =
    "usage: vmp info [--json] [--threads] [-o FILE] FILE\n"
    "\n"
    "Read the profile FILE ('-' = standard input) once and summarize it:\n"
    "format version, producer, VM, pid, the header's labels (KEY=VALUE, one a\n"
    "line, in file order; the HotSpot agent's 'sampler' says which clock ran),\n"
    "start time (UTC), duration (the latest\n"
    "time in the file), sampling interval, samples and failed samples, samples\n"
    "dropped (from the END record), threads with their names and sample weights\n"
    "(the 20 with the most samples; --threads lists all), code zones, code\n"
    "objects, code changes and the final generation, modules and symbols,\n"
    "functions, stack nodes, events, counters, chunks, file size and bytes per\n"
    "sample, and the status:\n"
    "  complete (END record[, seek table])\n"
    "  truncated: <why>      the file ends without an END record, or a chunk\n"
    "                        is damaged; every complete chunk before it is\n"
    "                        summarized (\"truncated, no complete chunk\" when\n"
    "                        the file ends inside chunk 0)\n"
    "A seek table is listed only when every entry agrees with the chunks read\n"
    "(offsets, sizes, sample counts and times); one that is damaged or\n"
    "contradicts them counts as absent, with a warning on standard error that\n"
    "names the file and the table's offset.\n"
    "\n"
    "options:\n";

static const char info_epilogue[] =
    "\n"
    "Exit status: 0 when the file could be read, even if it is truncated (its\n"
    "complete chunks are usable; the status line says so); 1 when it cannot be\n"
    "read at all (not a vmp profile, unknown version, no readable record in a\n"
    "file that is not truncated) or\n"
    "the output cannot be written; 2 usage error.\n";
static const vmp_cli_option info_options[] = {
    {"json", OPT_JSON, NULL, NULL,
     "print one JSON object instead of text.  Keys: file, format,\n"
     "producer, vm_name, vm_version, labels ({key: value}; a\n"
     "repeated key keeps its last value), pid, start_realtime_ns,\n"
     "start_utc, clock, clock_res_ns, duration_ns, interval_ns,\n"
     "samples, failed_samples, sample_weight, kinds ([{name,\n"
     "unit, samples, weight}]: the sample kinds other than CPU\n"
     "time, format 2.1; name null for undeclared kinds), dropped_full,\n"
     "dropped_write, truncated_stacks (the last three null without\n"
     "END), threads ([{id, name, samples}], all of them), zones,\n"
     "code_objects, code_maps,\n"
     "code_changes, generation, modules, symbols, functions,\n"
     "stack_nodes, events, counters, unknown_records, records,\n"
     "chunks, file_bytes, bytes_per_sample, complete, seek_table,\n"
     "status, error (null when none)"},
    {"threads", OPT_THREADS, NULL, NULL, "list every thread in the text output"},
    VMP_CLI_OPTION_OUTPUT,
    VMP_CLI_OPTION_HELP,
};
static const vmp_cli_command info_command = VMP_CLI_COMMAND(info, 16);

typedef struct thread_info {
    uint64_t id;
    char *name; /* NULL: no THREAD record */
    size_t name_len;
    uint64_t weight; /* its samples' weight */
} thread_info;

/* A sample kind of the header (spec §5.15) and its KIND_SAMPLE records. */
typedef struct kind_info {
    char *name, *unit;
    size_t name_len, unit_len;
    uint64_t records, weight;
} kind_info;

/* Threads listed by the text output unless --threads. */
#define INFO_THREADS_SHOWN 20

typedef struct summary {
    vmp_rec_header hdr; /* strings are copied into the fields below */
    char *producer, *vm_name, *vm_version, *clock;
    size_t producer_len, vm_name_len, vm_version_len, clock_len;
    int have_header;
    char **labels; /* key, value, ...: 2 * n_labels copies, as in the file */
    size_t *label_lens, n_labels;
    vmp_rec_end end;
    int have_end;
    uint64_t last_time, samples, failed, weight, zones, code_objects, code_changes;
    uint64_t generation, modules, symbols, functions, stack_nodes, events, counters, unknown;
    uint64_t code_maps;
    kind_info *kinds; /* the header's sample kinds 1 .. n_kinds, then one for undeclared kinds */
    size_t n_kinds;
    thread_info *threads; /* sorted by id */
    size_t n_threads, cap_threads;
    /* where a thread id last was in `threads` (index + 1; 0 == not known),
     * by the id's low bits: a sample's thread without a search */
    size_t thread_hint[64];
} summary;

static char *dup_str(const vmp_str *s, size_t *len_out)
{
    char *p = malloc(s->len + 1);
    if (p) {
        memcpy(p, s->s, s->len);
        p[s->len] = '\0';
        *len_out = s->len;
    }
    return p;
}

static thread_info *thread_get(summary *sum, uint64_t id)
{
    size_t *hint = &sum->thread_hint[(id ^ id >> 6) & 63], lo;
    if (*hint && sum->threads[*hint - 1].id == id)
        return &sum->threads[*hint - 1];
    lo = vmp_lower_bound(sum->threads, sum->n_threads, sizeof *sum->threads,
                         offsetof(thread_info, id), id);
    if (lo < sum->n_threads && sum->threads[lo].id == id) {
        *hint = lo + 1;
        return &sum->threads[lo];
    }
    if (sum->n_threads == sum->cap_threads &&
        vmp_grow(&sum->threads, &sum->cap_threads, sizeof *sum->threads, 16) != 0)
        return NULL;
    memmove(&sum->threads[lo + 1], &sum->threads[lo], (sum->n_threads - lo) * sizeof *sum->threads);
    sum->n_threads++;
    memset(sum->thread_hint, 0, sizeof sum->thread_hint); /* the entries moved */
    memset(&sum->threads[lo], 0, sizeof sum->threads[lo]);
    sum->threads[lo].id = id;
    return &sum->threads[lo];
}

static void seen_time(summary *sum, uint64_t t)
{
    if (t > sum->last_time)
        sum->last_time = t;
}

/* The header's sample kinds, plus a last entry for KIND_SAMPLE records of
 * kinds it does not declare.  0, or -1 when out of memory. */
static int take_kinds(summary *sum, const vmp_rec_header *h)
{
    static const vmp_str count = {"count", 5}, undeclared = {"(undeclared kinds)", 18};
    size_t i, n = h->n_sample_kinds;
    sum->kinds = calloc(n + 1, sizeof *sum->kinds);
    if (!sum->kinds)
        return -1;
    sum->n_kinds = n;
    for (i = 0; i <= n; i++) {
        const vmp_str *name = i < n ? &h->sample_kinds[i] : &undeclared;
        const vmp_str *unit =
            i < n && i < h->n_sample_units && h->sample_units[i].len ? &h->sample_units[i] : &count;
        sum->kinds[i].name = dup_str(name, &sum->kinds[i].name_len);
        sum->kinds[i].unit = dup_str(unit, &sum->kinds[i].unit_len);
        if (!sum->kinds[i].name || !sum->kinds[i].unit)
            return -1;
    }
    return 0;
}

/* Returns 0, or -1 when out of memory. */
static int add_record(summary *sum, const vmp_record *rec)
{
    thread_info *t;
    switch (rec->type) {
    case VMP_REC_HEADER:
        sum->hdr = rec->u.header;
        sum->have_header = 1;
        sum->producer = dup_str(&rec->u.header.producer, &sum->producer_len);
        sum->vm_name = dup_str(&rec->u.header.vm_name, &sum->vm_name_len);
        sum->vm_version = dup_str(&rec->u.header.vm_version, &sum->vm_version_len);
        sum->clock = dup_str(&rec->u.header.clock, &sum->clock_len);
        if (!sum->producer || !sum->vm_name || !sum->vm_version || !sum->clock)
            return -1;
        if (take_kinds(sum, &rec->u.header) < 0)
            return -1;
        if (rec->u.header.n_labels) {
            size_t i, n = 2 * rec->u.header.n_labels;
            sum->labels = calloc(n, sizeof *sum->labels);
            sum->label_lens = calloc(n, sizeof *sum->label_lens);
            if (!sum->labels || !sum->label_lens)
                return -1;
            sum->n_labels = rec->u.header.n_labels;
            for (i = 0; i < n; i++)
                if (!(sum->labels[i] = dup_str(&rec->u.header.labels[i], &sum->label_lens[i])))
                    return -1;
        }
        break;
    case VMP_REC_END:
        sum->end = rec->u.end;
        sum->have_end = 1;
        seen_time(sum, rec->u.end.time_ns);
        break;
    case VMP_REC_MODULE:
        sum->modules++;
        break;
    case VMP_REC_MODULE_SYMBOLS:
        sum->symbols += rec->u.module_symbols.n_symbols;
        break;
    case VMP_REC_THREAD:
        t = thread_get(sum, rec->u.thread.id);
        if (!t)
            return -1;
        /* spec R-ID-3: a record without a name (one that says the thread
         * ended) renames nothing */
        if (rec->u.thread.name.len > 0 || !t->name) {
            free(t->name);
            t->name = dup_str(&rec->u.thread.name, &t->name_len);
            if (!t->name)
                return -1;
        }
        seen_time(sum, rec->u.thread.time_ns);
        seen_time(sum, rec->u.thread.end_time_ns);
        break;
    case VMP_REC_FUNCTION:
        sum->functions++;
        break;
    case VMP_REC_CODE_ZONE:
        sum->zones++;
        break;
    case VMP_REC_CODE_OBJECT:
        sum->code_objects++;
        seen_time(sum, rec->u.code_object.time_ns);
        break;
    case VMP_REC_CODE_MAP:
        sum->code_maps++;
        break;
    case VMP_REC_CODE_SNAPSHOT:
        sum->code_changes++;
        sum->generation = rec->u.code_snapshot.generation;
        seen_time(sum, rec->u.code_snapshot.time_ns);
        break;
    case VMP_REC_CODE_COMPACTION:
        sum->code_changes++;
        sum->generation = rec->u.code_compaction.generation;
        seen_time(sum, rec->u.code_compaction.time_ns);
        break;
    case VMP_REC_CODE_FREE:
        sum->code_changes++;
        sum->generation = rec->u.code_free.generation;
        seen_time(sum, rec->u.code_free.time_ns);
        break;
    case VMP_REC_CODE_MOVE:
        sum->code_changes++;
        sum->generation = rec->u.code_move.generation;
        seen_time(sum, rec->u.code_move.time_ns);
        break;
    case VMP_REC_STACK_NODE:
        sum->stack_nodes++;
        break;
    case VMP_REC_SAMPLE:
    case VMP_REC_FAILED_SAMPLE:
        sum->samples++;
        sum->weight += rec->u.sample.weight;
        if (rec->type == VMP_REC_FAILED_SAMPLE)
            sum->failed++;
        seen_time(sum, rec->u.sample.time_ns);
        if (rec->u.sample.thread != 0) {
            thread_info *st = thread_get(sum, rec->u.sample.thread);
            if (!st)
                return -1;
            st->weight += rec->u.sample.weight;
        }
        break;
    case VMP_REC_KIND_SAMPLE: {
        /* spec R-KND-2: an undeclared kind apart, never with the CPU samples */
        uint64_t k = rec->u.sample.kind;
        kind_info *ki =
            sum->kinds ? &sum->kinds[k >= 1 && k <= sum->n_kinds ? k - 1 : sum->n_kinds] : NULL;
        if (ki) {
            ki->records++;
            ki->weight += rec->u.sample.weight;
        }
        seen_time(sum, rec->u.sample.time_ns);
        break;
    }
    case VMP_REC_EVENT:
        sum->events++;
        seen_time(sum, rec->u.event.time_ns);
        break;
    case VMP_REC_COUNTER:
        sum->counters++;
        seen_time(sum, rec->u.counter.time_ns);
        break;
    default:
        sum->unknown++;
        break;
    }
    return 0;
}

static void summary_free(summary *sum)
{
    size_t i;
    for (i = 0; i < sum->n_threads; i++)
        free(sum->threads[i].name);
    free(sum->threads);
    for (i = 0; sum->kinds && i <= sum->n_kinds; i++) {
        free(sum->kinds[i].name);
        free(sum->kinds[i].unit);
    }
    free(sum->kinds);
    for (i = 0; i < 2 * sum->n_labels; i++)
        free(sum->labels[i]);
    free(sum->labels);
    free(sum->label_lens);
    free(sum->producer);
    free(sum->vm_name);
    free(sum->vm_version);
    free(sum->clock);
}

static void put_str(FILE *f, int json, const char *s, size_t len)
{
    if (json)
        vmp_put_json_string(f, s ? s : "", s ? len : 0);
    else
        vmp_put_quoted(f, s ? s : "", s ? len : 0);
}

/* Most samples first, then by id. */
static int by_weight(const void *x, const void *y)
{
    const thread_info *a = *(const thread_info *const *)x, *b = *(const thread_info *const *)y;
    if (a->weight != b->weight)
        return a->weight > b->weight ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

static void print_text(FILE *f, const char *path, const summary *sum, const vmp_reader_info *ri,
                       uint64_t file_bytes, const char *error, int all_threads)
{
    char utc[64];
    const thread_info **order;
    size_t i, shown;
    fprintf(f, "file:             %s\n", path);
    fprintf(f, "format:           %u.%u\n", ri->format_major, ri->format_minor);
    fprintf(f, "producer:         ");
    put_str(f, 0, sum->producer, sum->producer_len);
    fprintf(f, "\nvm:               ");
    put_str(f, 0, sum->vm_name, sum->vm_name_len);
    fputc(' ', f);
    put_str(f, 0, sum->vm_version, sum->vm_version_len);
    fprintf(f, "\npid:              %" PRIu64 "\n", sum->hdr.pid);
    fprintf(f, "labels:           %zu\n", sum->n_labels);
    for (i = 0; i < sum->n_labels; i++) {
        fputs("  ", f);
        put_str(f, 0, sum->labels[2 * i], sum->label_lens[2 * i]);
        fputc('=', f);
        put_str(f, 0, sum->labels[2 * i + 1], sum->label_lens[2 * i + 1]);
        fputc('\n', f);
    }
    if (sum->hdr.start_realtime_ns) {
        vmp_format_utc(utc, sizeof utc, sum->hdr.start_realtime_ns);
        fprintf(f, "start:            %s\n", utc);
    } else {
        fprintf(f, "start:            unknown\n");
    }
    fprintf(f, "clock:            ");
    put_str(f, 0, sum->clock, sum->clock_len);
    fprintf(f, " (resolution %" PRIu64 " ns)\n", sum->hdr.clock_res_ns);
    fprintf(f, "duration:         %" PRIu64 ".%09" PRIu64 " s\n", sum->last_time / 1000000000u,
            sum->last_time % 1000000000u);
    if (sum->hdr.interval_ns)
        fprintf(f, "interval:         %" PRIu64 " ns\n", sum->hdr.interval_ns);
    else
        fprintf(f, "interval:         unknown\n");
    fprintf(f, "samples:          %" PRIu64 " (failed %" PRIu64 ", weight %" PRIu64 ")\n",
            sum->samples, sum->failed, sum->weight);
    for (i = 0; sum->kinds && i <= sum->n_kinds; i++) {
        const kind_info *k = &sum->kinds[i];
        if (i == sum->n_kinds && k->records == 0)
            break;
        fprintf(f, "%s", i == 0 ? "kinds:            " : "                  ");
        put_str(f, 0, k->name, k->name_len);
        fprintf(f, ": %" PRIu64 " samples, ", k->records);
        fprintf(f, "%" PRIu64 " ", k->weight);
        put_str(f, 0, k->unit, k->unit_len);
        fputc('\n', f);
    }
    if (sum->have_end)
        fprintf(f,
                "dropped:          %" PRIu64 " (ring full %" PRIu64 ", write errors %" PRIu64
                "); truncated stacks %" PRIu64 "\n",
                sum->end.dropped_full + sum->end.dropped_write, sum->end.dropped_full,
                sum->end.dropped_write, sum->end.truncated_stacks);
    else
        fprintf(f, "dropped:          unknown (no END record)\n");
    fprintf(f, "threads:          %zu\n", sum->n_threads);
    order = malloc((sum->n_threads ? sum->n_threads : 1) * sizeof *order);
    shown =
        all_threads || sum->n_threads <= INFO_THREADS_SHOWN ? sum->n_threads : INFO_THREADS_SHOWN;
    if (order == NULL) /* out of memory: in id order */
        shown = sum->n_threads;
    for (i = 0; order != NULL && i < sum->n_threads; i++)
        order[i] = &sum->threads[i];
    if (order != NULL)
        qsort(order, sum->n_threads, sizeof *order, by_weight);
    for (i = 0; i < shown; i++) {
        const thread_info *t = order != NULL ? order[i] : &sum->threads[i];
        fprintf(f, "  thread %" PRIu64 " ", t->id);
        if (t->name)
            put_str(f, 0, t->name, t->name_len);
        else
            fputs("(no THREAD record)", f);
        fprintf(f, ": %" PRIu64 " samples\n", t->weight);
    }
    if (shown < sum->n_threads)
        fprintf(f, "  ... and %zu more (--threads lists all)\n", sum->n_threads - shown);
    free(order);
    fprintf(f, "zones:            %" PRIu64 "\n", sum->zones);
    fprintf(f, "code objects:     %" PRIu64 " (%" PRIu64 " changes, final generation %" PRIu64,
            sum->code_objects, sum->code_changes, sum->generation);
    if (sum->code_maps) /* format 1.2: maps written for the code samples ran */
        fprintf(f, "; %" PRIu64 " code maps", sum->code_maps);
    fputs(")\n", f);
    fprintf(f, "modules:          %" PRIu64 " (%" PRIu64 " symbols)\n", sum->modules, sum->symbols);
    fprintf(f, "functions:        %" PRIu64 "\n", sum->functions);
    fprintf(f, "stack nodes:      %" PRIu64 "\n", sum->stack_nodes);
    fprintf(f, "events:           %" PRIu64 "\n", sum->events);
    fprintf(f, "counters:         %" PRIu64 "\n", sum->counters);
    if (sum->unknown)
        fprintf(f, "unknown records:  %" PRIu64 "\n", sum->unknown);
    fprintf(f, "records:          %" PRIu64 "\n", ri->records);
    fprintf(f, "chunks:           %" PRIu64 "\n", ri->chunks);
    fprintf(f, "file bytes:       %" PRIu64, file_bytes);
    if (sum->samples)
        fprintf(f, " (%.1f bytes per sample)", (double)file_bytes / (double)sum->samples);
    fputc('\n', f);
    if (error && ri->chunks == 0)
        fprintf(f, "status:           truncated, no complete chunk: %s\n", error);
    else if (error)
        fprintf(f, "status:           truncated: %s\n", error);
    else if (!sum->have_end)
        fprintf(f, "status:           truncated: no END record (the writer did not close "
                   "the file)\n");
    else
        fprintf(f, "status:           complete (END record%s)\n",
                ri->seek_table ? ", seek table" : "");
}

static void print_json(FILE *f, const char *path, const summary *sum, const vmp_reader_info *ri,
                       uint64_t file_bytes, const char *error)
{
    char utc[64];
    size_t i;
    fputs("{\"file\":", f);
    put_str(f, 1, path, strlen(path));
    fprintf(f, ",\"format\":\"%u.%u\",\"producer\":", ri->format_major, ri->format_minor);
    put_str(f, 1, sum->producer, sum->producer_len);
    fputs(",\"vm_name\":", f);
    put_str(f, 1, sum->vm_name, sum->vm_name_len);
    fputs(",\"vm_version\":", f);
    put_str(f, 1, sum->vm_version, sum->vm_version_len);
    fputs(",\"labels\":{", f);
    for (i = 0; i < sum->n_labels; i++) {
        if (i)
            fputc(',', f);
        put_str(f, 1, sum->labels[2 * i], sum->label_lens[2 * i]);
        fputc(':', f);
        put_str(f, 1, sum->labels[2 * i + 1], sum->label_lens[2 * i + 1]);
    }
    fputc('}', f);
    fprintf(f,
            ",\"pid\":%" PRIu64 ",\"start_realtime_ns\":%" PRIu64 ",\"start_utc\":", sum->hdr.pid,
            sum->hdr.start_realtime_ns);
    if (sum->hdr.start_realtime_ns) {
        vmp_format_utc(utc, sizeof utc, sum->hdr.start_realtime_ns);
        fprintf(f, "\"%s\"", utc);
    } else {
        fputs("null", f);
    }
    fputs(",\"clock\":", f);
    put_str(f, 1, sum->clock, sum->clock_len);
    fprintf(f,
            ",\"clock_res_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64 ",\"interval_ns\":%" PRIu64
            ",\"samples\":%" PRIu64 ",\"failed_samples\":%" PRIu64 ",\"sample_weight\":%" PRIu64,
            sum->hdr.clock_res_ns, sum->last_time, sum->hdr.interval_ns, sum->samples, sum->failed,
            sum->weight);
    if (sum->have_end)
        fprintf(f,
                ",\"dropped_full\":%" PRIu64 ",\"dropped_write\":%" PRIu64
                ",\"truncated_stacks\":%" PRIu64,
                sum->end.dropped_full, sum->end.dropped_write, sum->end.truncated_stacks);
    else
        fputs(",\"dropped_full\":null,\"dropped_write\":null,\"truncated_stacks\":null", f);
    fputs(",\"kinds\":[", f);
    for (i = 0; sum->kinds && i <= sum->n_kinds; i++) {
        const kind_info *k = &sum->kinds[i];
        if (i == sum->n_kinds && k->records == 0)
            break;
        fputs(i ? ",{\"name\":" : "{\"name\":", f);
        if (i < sum->n_kinds)
            put_str(f, 1, k->name, k->name_len);
        else
            fputs("null", f);
        fputs(",\"unit\":", f);
        put_str(f, 1, k->unit, k->unit_len);
        fprintf(f, ",\"samples\":%" PRIu64 ",\"weight\":%" PRIu64 "}", k->records, k->weight);
    }
    fputs("],\"threads\":[", f);
    for (i = 0; i < sum->n_threads; i++) {
        fprintf(f, "%s{\"id\":%" PRIu64 ",\"samples\":%" PRIu64 ",\"name\":", i ? "," : "",
                sum->threads[i].id, sum->threads[i].weight);
        if (sum->threads[i].name)
            put_str(f, 1, sum->threads[i].name, sum->threads[i].name_len);
        else
            fputs("null", f);
        fputc('}', f);
    }
    fprintf(f,
            "],\"zones\":%" PRIu64 ",\"code_objects\":%" PRIu64 ",\"code_maps\":%" PRIu64
            ",\"code_changes\":%" PRIu64 ",\"generation\":%" PRIu64 ",\"modules\":%" PRIu64
            ",\"symbols\":%" PRIu64 ",\"functions\":%" PRIu64 ",\"stack_nodes\":%" PRIu64
            ",\"events\":%" PRIu64 ",\"counters\":%" PRIu64 ",\"unknown_records\":%" PRIu64
            ",\"records\":%" PRIu64 ",\"chunks\":%" PRIu64 ",\"file_bytes\":%" PRIu64
            ",\"bytes_per_sample\":",
            sum->zones, sum->code_objects, sum->code_maps, sum->code_changes, sum->generation,
            sum->modules, sum->symbols, sum->functions, sum->stack_nodes, sum->events,
            sum->counters, sum->unknown, ri->records, ri->chunks, file_bytes);
    if (sum->samples)
        fprintf(f, "%.1f", (double)file_bytes / (double)sum->samples);
    else
        fputs("null", f);
    fprintf(f, ",\"complete\":%s,\"seek_table\":%s,\"status\":",
            (sum->have_end && !error) ? "true" : "false", ri->seek_table ? "true" : "false");
    if (error || !sum->have_end)
        fputs("\"truncated\"", f);
    else
        fputs("\"complete\"", f);
    fputs(",\"error\":", f);
    if (error)
        put_str(f, 1, error, strlen(error));
    else if (!sum->have_end)
        fputs("\"no END record (the writer did not close the file)\"", f);
    else
        fputs("null", f);
    fputs("}\n", f);
}

int vmp_cmd_info(int argc, char **argv)
{
    vmp_cli_parser p;
    const char *cmd = "info", *path;
    int json = 0, all_threads = 0, c, rc;
    vmp_reader *r;
    vmp_record rec;
    vmp_reader_info ri;
    vmp_status st;
    vmp_cli_output out;
    summary sum;
    uint64_t file_bytes;
    struct stat sb;
    const char *error = NULL;

    vmp_cli_begin(&p, &info_command, argc, argv);
    while ((c = vmp_cli_next(&p)) > 0) {
        switch (c) {
        case OPT_JSON:
            json = 1;
            break;
        case OPT_THREADS:
            all_threads = 1;
            break;
        }
    }
    if ((rc = vmp_cli_file_operand(&p, c, &path)) >= 0)
        return rc;

    if (vmp_cli_open_reader(&r, cmd, path) != VMP_EXIT_OK)
        return VMP_EXIT_FAIL;
    memset(&sum, 0, sizeof sum);
    while ((st = vmp_reader_next(r, &rec)) == VMP_OK) {
        if (add_record(&sum, &rec) < 0) {
            summary_free(&sum);
            vmp_reader_close(r);
            return vmp_cli_fail(cmd, "out of memory");
        }
    }
    vmp_reader_get_info(r, &ri);
    if (st < 0)
        error = vmp_reader_errmsg(r);
    if (vmp_reader_warning(r)) /* spec R-SEEK-1: a table set aside */
        fprintf(stderr, "vmp %s: warning: %s\n", cmd, vmp_reader_warning(r));
    /* spec R-CHK-6: a file cut inside chunk 0 still has a version */
    if (ri.records == 0 && !(st == VMP_ERR_TRUNCATED && ri.format_major != 0)) {
        vmp_cli_fail(cmd, "%s", error && error[0] ? error : "no record could be read");
        summary_free(&sum);
        vmp_reader_close(r);
        return VMP_EXIT_FAIL;
    }
    file_bytes = ri.bytes_consumed;
    if (strcmp(path, "-") != 0 && stat(path, &sb) == 0 && S_ISREG(sb.st_mode))
        file_bytes = (uint64_t)sb.st_size;

    rc = vmp_cli_output_open(&out, cmd, p.output);
    if (rc == VMP_EXIT_OK) {
        if (json)
            print_json(out.f, path, &sum, &ri, file_bytes, error);
        else
            print_text(out.f, path, &sum, &ri, file_bytes, error, all_threads);
        rc = vmp_cli_output_close(&out, cmd);
    }
    summary_free(&sum);
    vmp_reader_close(r);
    return rc;
}
