/* SPDX-License-Identifier: MIT
 *
 * vmp_cmd_decode.c - `vmp decode`: every record of a profile as one line of
 * text or one JSON object (JSON Lines); the records of spec.md §5.
 */
#include <getopt.h>
#include <inttypes.h>
#include <string.h>

#include "vmp_cli.h"

static const char decode_usage[] =
    "usage: vmp decode [--json] [-o FILE] FILE\n"
    "\n"
    "Print every record of the profile FILE ('-' = standard input), in file\n"
    "order, one record per line.  The output is deterministic: the same file\n"
    "always gives the same bytes.  Text lines look like\n"
    "  chunk 0 @12 SAMPLE t=1000123 thread=1 state=0 pc=0x401a2b gen=3 stack=17 weight=1\n"
    "i.e. 'chunk C @R TYPE' (C: 0-based chunk index, R: byte offset of the\n"
    "record in the decompressed chunk) and then the record's fields as\n"
    "name=value: integers in decimal, addresses (pc, start, end, bias, symbol\n"
    "values) in 0x hex, strings double-quoted with \\\" \\\\ \\n \\r \\t and \\xNN\n"
    "escapes, arrays as [a, b], pairs as a:b, build ids as hex.  Optional keys\n"
    "that are absent are omitted (SAMPLE pc, STACK_NODE bcpc, EVENT value).\n"
    "Records of a type this version does not know print as 'UNKNOWN type=N';\n"
    "'unknown_keys=N' is appended when a record had keys this version skips.\n"
    "\n"
    "Fields per record type:\n"
    "  HEADER          producer vm_name vm_version pid start_realtime\n"
    "                  start_monotonic clock clock_res interval pointer_size\n"
    "                  states code_kinds tiers event_kinds counter_kinds\n"
    "                  failure_reasons labels [name_separator]\n"
    "  END             time samples failed dropped_full dropped_write chunks\n"
    "                  truncated_stacks generation\n"
    "  MODULE          id path build_id bias start end\n"
    "  MODULE_SYMBOLS  module symbols (value+size:name)\n"
    "  THREAD          id name time end_time\n"
    "  FUNCTION        id name scope signature file line bytecode_size lines\n"
    "                  (bcpc:line)\n"
    "  CODE_ZONE       id name start end\n"
    "  CODE_OBJECT     id zone kind tier name function start size gen time\n"
    "                  pc_map (offset:bcpc) inline (offset:[function:bcpc ...])\n"
    "  CODE_MAP        id pc_map inline (format 1.2: a code object's maps,\n"
    "                  written after it)\n"
    "  CODE_SNAPSHOT   zone gen time entries (id:start)\n"
    "  CODE_COMPACTION zone gen time duration moves (id:start) frees\n"
    "  CODE_FREE       gen id time\n"
    "  CODE_MOVE       gen id start time\n"
    "  STACK_NODE      id parent, then pc or function [bcpc]\n"
    "  SAMPLE          t thread state [pc] gen stack weight blame\n"
    "  FAILED_SAMPLE   t thread state [pc] gen weight reason\n"
    "  EVENT           t kind duration thread [value] text\n"
    "  COUNTER         t kind value\n"
    "Times (t, time, end_time, duration) are ns since the file's time origin.\n"
    "\n"
    "options:\n"
    "  --json        JSON Lines: one object per record with the keys \"chunk\",\n"
    "                \"offset\", \"type\" (the name above), \"raw_type\" (for\n"
    "                UNKNOWN only), then the fields named above as keys.  All\n"
    "                numbers are decimal integers (addresses too); strings are\n"
    "                JSON strings (invalid UTF-8 becomes U+FFFD); pairs are\n"
    "                2-element arrays; symbols are [value, size, name]; inline\n"
    "                is [[offset, [[function, bcpc], ...]], ...]; labels is an\n"
    "                object; build_id is a hex string.\n"
    "  -o FILE       write to FILE ('-' = standard output, the default)\n"
    "  -h, --help    print this help\n"
    "\n"
    "Exit status: 0 when every record was printed and the input ended cleanly\n"
    "(with or without an END record); 1 when the input is unreadable or\n"
    "damaged (the records before the damage are printed, then the error goes\n"
    "to standard error) or the output cannot be written; 2 usage error.\n";

/* Emits "name=value" (text) or "\"name\":value" (JSON) fields. */
typedef struct emitter {
    FILE *f;
    int json;
} emitter;

static void key(const emitter *e, const char *name)
{
    if (e->json)
        fprintf(e->f, ",\"%s\":", name);
    else
        fprintf(e->f, " %s=", name);
}

static void put_s(const emitter *e, const vmp_str *s)
{
    if (e->json)
        vmp_cli_put_json_string(e->f, s->s, s->len);
    else
        vmp_cli_put_quoted(e->f, s->s, s->len);
}

static void f_u64(const emitter *e, const char *name, uint64_t v)
{
    key(e, name);
    fprintf(e->f, "%" PRIu64, v);
}

static void f_i64(const emitter *e, const char *name, int64_t v)
{
    key(e, name);
    fprintf(e->f, "%" PRId64, v);
}

static void put_addr(const emitter *e, uint64_t v)
{
    fprintf(e->f, e->json ? "%" PRIu64 : "0x%" PRIx64, v);
}

static void f_addr(const emitter *e, const char *name, uint64_t v)
{
    key(e, name);
    put_addr(e, v);
}

static void f_str(const emitter *e, const char *name, const vmp_str *s)
{
    key(e, name);
    put_s(e, s);
}

static void sep(const emitter *e, size_t i)
{
    if (i)
        fputs(e->json ? "," : ", ", e->f);
}

static void f_str_array(const emitter *e, const char *name, const vmp_str *a, size_t n)
{
    size_t i;
    key(e, name);
    fputc('[', e->f);
    for (i = 0; i < n; i++) {
        sep(e, i);
        put_s(e, &a[i]);
    }
    fputc(']', e->f);
}

/* n pairs; `addr2` prints the second member as an address. */
static void f_pairs(const emitter *e, const char *name, const uint64_t *p, size_t n, int addr2)
{
    size_t i;
    key(e, name);
    fputc('[', e->f);
    for (i = 0; i < n; i++) {
        sep(e, i);
        if (e->json)
            fprintf(e->f, "[%" PRIu64 ",%" PRIu64 "]", p[2 * i], p[2 * i + 1]);
        else if (addr2)
            fprintf(e->f, "%" PRIu64 ":0x%" PRIx64, p[2 * i], p[2 * i + 1]);
        else
            fprintf(e->f, "%" PRIu64 ":%" PRIu64, p[2 * i], p[2 * i + 1]);
    }
    fputc(']', e->f);
}

static void f_u64_array(const emitter *e, const char *name, const uint64_t *a, size_t n)
{
    size_t i;
    key(e, name);
    fputc('[', e->f);
    for (i = 0; i < n; i++) {
        sep(e, i);
        fprintf(e->f, "%" PRIu64, a[i]);
    }
    fputc(']', e->f);
}

static void emit_header(const emitter *e, const vmp_rec_header *h)
{
    size_t i;
    f_str(e, "producer", &h->producer);
    f_str(e, "vm_name", &h->vm_name);
    f_str(e, "vm_version", &h->vm_version);
    f_u64(e, "pid", h->pid);
    f_u64(e, "start_realtime", h->start_realtime_ns);
    f_u64(e, "start_monotonic", h->start_monotonic_ns);
    f_str(e, "clock", &h->clock);
    f_u64(e, "clock_res", h->clock_res_ns);
    f_u64(e, "interval", h->interval_ns);
    f_u64(e, "pointer_size", h->pointer_size);
    f_str_array(e, "states", h->states, h->n_states);
    f_str_array(e, "code_kinds", h->code_kinds, h->n_code_kinds);
    f_str_array(e, "tiers", h->tiers, h->n_tiers);
    f_str_array(e, "event_kinds", h->event_kinds, h->n_event_kinds);
    f_str_array(e, "counter_kinds", h->counter_kinds, h->n_counter_kinds);
    f_str_array(e, "failure_reasons", h->failure_reasons, h->n_failure_reasons);
    key(e, "labels");
    fputc('{', e->f);
    for (i = 0; i < h->n_labels; i++) {
        sep(e, i);
        put_s(e, &h->labels[2 * i]);
        fputc(':', e->f);
        put_s(e, &h->labels[2 * i + 1]);
    }
    fputc('}', e->f);
    if (h->name_separator.len > 0) /* 1.1: only where the file has it */
        f_str(e, "name_separator", &h->name_separator);
}

static void emit_module(const emitter *e, const vmp_rec_module *m)
{
    size_t i;
    f_u64(e, "id", m->id);
    f_str(e, "path", &m->path);
    key(e, "build_id");
    if (e->json)
        fputc('"', e->f);
    for (i = 0; i < m->build_id_size; i++)
        fprintf(e->f, "%02x", m->build_id[i]);
    if (e->json)
        fputc('"', e->f);
    else if (m->build_id_size == 0)
        fputs("none", e->f);
    f_addr(e, "bias", m->bias);
    f_addr(e, "start", m->start);
    f_addr(e, "end", m->end);
}

static void emit_symbols(const emitter *e, const vmp_rec_module_symbols *ms)
{
    size_t i;
    f_u64(e, "module", ms->module);
    key(e, "symbols");
    fputc('[', e->f);
    for (i = 0; i < ms->n_symbols; i++) {
        const vmp_rec_symbol *s = &ms->symbols[i];
        sep(e, i);
        if (e->json)
            fprintf(e->f, "[%" PRIu64 ",%" PRIu64 ",", s->value, s->size);
        else
            fprintf(e->f, "0x%" PRIx64 "+%" PRIu64 ":", s->value, s->size);
        put_s(e, &s->name);
        if (e->json)
            fputc(']', e->f);
    }
    fputc(']', e->f);
}

/* A code object's pc_map and inline records (CODE_OBJECT and CODE_MAP). */
static void emit_code_maps(const emitter *e,
                           const uint64_t *pc_map,
                           size_t pc_map_len,
                           const vmp_rec_inline *inlines,
                           size_t n_inlines)
{
    size_t i, j;
    f_pairs(e, "pc_map", pc_map, pc_map_len, 0);
    key(e, "inline");
    fputc('[', e->f);
    for (i = 0; i < n_inlines; i++) {
        const vmp_rec_inline *in = &inlines[i];
        sep(e, i);
        fprintf(e->f, e->json ? "[%" PRIu64 ",[" : "%" PRIu64 ":[", in->mcpc_offset);
        for (j = 0; j < in->depth; j++) {
            if (j)
                fputs(e->json ? "," : " ", e->f);
            fprintf(e->f, e->json ? "[%" PRIu64 ",%" PRIu64 "]" : "%" PRIu64 ":%" PRIu64,
                    in->frames[2 * j], in->frames[2 * j + 1]);
        }
        fputs(e->json ? "]]" : "]", e->f);
    }
    fputc(']', e->f);
}

static void emit_code_object(const emitter *e, const vmp_rec_code_object *co)
{
    f_u64(e, "id", co->id);
    f_u64(e, "zone", co->zone);
    f_u64(e, "kind", co->kind);
    f_u64(e, "tier", co->tier);
    f_str(e, "name", &co->name);
    f_u64(e, "function", co->function);
    f_addr(e, "start", co->start);
    f_u64(e, "size", co->size);
    f_u64(e, "gen", co->generation);
    f_u64(e, "time", co->time_ns);
    emit_code_maps(e, co->pc_map, co->pc_map_len, co->inlines, co->n_inlines);
}

static void emit_record(const emitter *e, const vmp_record *rec)
{
    const vmp_rec_sample *s = &rec->u.sample;
    if (e->json)
        fprintf(e->f, "{\"chunk\":%" PRIu64 ",\"offset\":%" PRIu64 ",\"type\":\"%s\"",
                rec->chunk_index, rec->record_offset, vmp_record_type_name(rec->type));
    else
        fprintf(e->f, "chunk %" PRIu64 " @%" PRIu64 " %s", rec->chunk_index, rec->record_offset,
                vmp_record_type_name(rec->type));
    switch (rec->type) {
    case VMP_REC_HEADER:
        emit_header(e, &rec->u.header);
        break;
    case VMP_REC_END:
        f_u64(e, "time", rec->u.end.time_ns);
        f_u64(e, "samples", rec->u.end.samples);
        f_u64(e, "failed", rec->u.end.failed);
        f_u64(e, "dropped_full", rec->u.end.dropped_full);
        f_u64(e, "dropped_write", rec->u.end.dropped_write);
        f_u64(e, "chunks", rec->u.end.chunks);
        f_u64(e, "truncated_stacks", rec->u.end.truncated_stacks);
        f_u64(e, "generation", rec->u.end.generation);
        break;
    case VMP_REC_MODULE:
        emit_module(e, &rec->u.module);
        break;
    case VMP_REC_MODULE_SYMBOLS:
        emit_symbols(e, &rec->u.module_symbols);
        break;
    case VMP_REC_THREAD:
        f_u64(e, "id", rec->u.thread.id);
        f_str(e, "name", &rec->u.thread.name);
        f_u64(e, "time", rec->u.thread.time_ns);
        f_u64(e, "end_time", rec->u.thread.end_time_ns);
        break;
    case VMP_REC_FUNCTION:
        f_u64(e, "id", rec->u.function.id);
        f_str(e, "name", &rec->u.function.name);
        f_str(e, "scope", &rec->u.function.scope);
        f_str(e, "signature", &rec->u.function.signature);
        f_str(e, "file", &rec->u.function.file);
        f_u64(e, "line", rec->u.function.first_line);
        f_u64(e, "bytecode_size", rec->u.function.bytecode_size);
        f_pairs(e, "lines", rec->u.function.lines, rec->u.function.n_lines, 0);
        break;
    case VMP_REC_CODE_ZONE:
        f_u64(e, "id", rec->u.code_zone.id);
        f_str(e, "name", &rec->u.code_zone.name);
        f_addr(e, "start", rec->u.code_zone.start);
        f_addr(e, "end", rec->u.code_zone.end);
        break;
    case VMP_REC_CODE_OBJECT:
        emit_code_object(e, &rec->u.code_object);
        break;
    case VMP_REC_CODE_MAP:
        f_u64(e, "id", rec->u.code_map.id);
        emit_code_maps(e, rec->u.code_map.pc_map, rec->u.code_map.pc_map_len,
                       rec->u.code_map.inlines, rec->u.code_map.n_inlines);
        break;
    case VMP_REC_CODE_SNAPSHOT:
        f_u64(e, "zone", rec->u.code_snapshot.zone);
        f_u64(e, "gen", rec->u.code_snapshot.generation);
        f_u64(e, "time", rec->u.code_snapshot.time_ns);
        f_pairs(e, "entries", rec->u.code_snapshot.entries, rec->u.code_snapshot.n, 1);
        break;
    case VMP_REC_CODE_COMPACTION:
        f_u64(e, "zone", rec->u.code_compaction.zone);
        f_u64(e, "gen", rec->u.code_compaction.generation);
        f_u64(e, "time", rec->u.code_compaction.time_ns);
        f_u64(e, "duration", rec->u.code_compaction.duration_ns);
        f_pairs(e, "moves", rec->u.code_compaction.moves, rec->u.code_compaction.n_moves, 1);
        f_u64_array(e, "frees", rec->u.code_compaction.frees, rec->u.code_compaction.n_frees);
        break;
    case VMP_REC_CODE_FREE:
        f_u64(e, "gen", rec->u.code_free.generation);
        f_u64(e, "id", rec->u.code_free.id);
        f_u64(e, "time", rec->u.code_free.time_ns);
        break;
    case VMP_REC_CODE_MOVE:
        f_u64(e, "gen", rec->u.code_move.generation);
        f_u64(e, "id", rec->u.code_move.id);
        f_addr(e, "start", rec->u.code_move.new_start);
        f_u64(e, "time", rec->u.code_move.time_ns);
        break;
    case VMP_REC_STACK_NODE:
        f_u64(e, "id", rec->u.stack_node.id);
        f_u64(e, "parent", rec->u.stack_node.parent);
        if (rec->u.stack_node.is_function) {
            f_u64(e, "function", rec->u.stack_node.function);
            if (rec->u.stack_node.has_bcpc)
                f_u64(e, "bcpc", rec->u.stack_node.bcpc);
        } else {
            f_addr(e, "pc", rec->u.stack_node.pc);
        }
        break;
    case VMP_REC_SAMPLE:
    case VMP_REC_FAILED_SAMPLE:
        f_u64(e, "t", s->time_ns);
        f_u64(e, "thread", s->thread);
        f_u64(e, "state", s->state);
        if (s->has_pc)
            f_addr(e, "pc", s->pc);
        f_u64(e, "gen", s->generation);
        if (rec->type == VMP_REC_SAMPLE) {
            f_u64(e, "stack", s->stack);
            f_u64(e, "weight", s->weight);
            f_u64(e, "blame", s->blame);
        } else {
            f_u64(e, "weight", s->weight);
            f_u64(e, "reason", s->reason);
        }
        break;
    case VMP_REC_EVENT:
        f_u64(e, "t", rec->u.event.time_ns);
        f_u64(e, "kind", rec->u.event.kind);
        f_u64(e, "duration", rec->u.event.duration_ns);
        f_u64(e, "thread", rec->u.event.thread);
        if (rec->u.event.has_value)
            f_i64(e, "value", rec->u.event.value);
        f_str(e, "text", &rec->u.event.text);
        break;
    case VMP_REC_COUNTER:
        f_u64(e, "t", rec->u.counter.time_ns);
        f_u64(e, "kind", rec->u.counter.kind);
        f_i64(e, "value", rec->u.counter.value);
        break;
    default:
        f_u64(e, e->json ? "raw_type" : "type", rec->raw_type);
        break;
    }
    if (rec->unknown_keys)
        f_u64(e, "unknown_keys", rec->unknown_keys);
    fputs(e->json ? "}\n" : "\n", e->f);
}

int vmp_cmd_decode(int argc, char **argv)
{
    static const struct option longopts[] = {{"json", no_argument, NULL, 'j'},
                                             {"output", required_argument, NULL, 'o'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *cmd = "decode", *outpath = NULL, *path;
    int c, rc, rc_close;
    vmp_reader *r;
    vmp_record rec;
    vmp_status st;
    vmp_cli_output out;
    emitter e = {NULL, 0};

    vmp_cli_getopt_begin();
    while ((c = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
        switch (c) {
        case 'j':
            e.json = 1;
            break;
        case 'o':
            outpath = optarg;
            break;
        case 'h':
            return vmp_cli_help(decode_usage);
        default:
            return vmp_cli_bad_option(cmd, argv, c);
        }
    }
    if (vmp_cli_one_file(&path, cmd, argc, argv) != VMP_EXIT_OK)
        return VMP_EXIT_USAGE;

    rc = vmp_cli_open_io(&r, &out, cmd, path, outpath);
    if (rc != VMP_EXIT_OK)
        return rc;
    e.f = out.f;
    while ((st = vmp_reader_next(r, &rec)) == VMP_OK) {
        emit_record(&e, &rec);
        if (ferror(out.f))
            break; /* reported by vmp_cli_output_close() */
    }
    rc_close = vmp_cli_output_close(&out, cmd);
    if (st < 0)
        rc = vmp_cli_fail(cmd, "%s", vmp_reader_errmsg(r));
    vmp_reader_close(r);
    return rc_close != VMP_EXIT_OK ? rc_close : rc;
}
