/* SPDX-License-Identifier: MIT
 *
 * vmp_cmd_decode.c - `vmp decode`: every record of a profile as one line of
 * text or one JSON object (JSON Lines); the records of spec.md §5.
 */
#include <inttypes.h>
#include <string.h>

#include "vmp_cli.h"
#include "vmp_convert.h"

enum {
    OPT_JSON = VMP_CLI_OPT_END,
};

static const char decode_synopsis[] =
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
    "Fields per record type (optional ones in brackets):\n";

static const char decode_epilogue[] =
    "\n"
    "Exit status: 0 when every record was printed and the input ended cleanly\n"
    "(with or without an END record); 1 when the input is unreadable or\n"
    "damaged (the records before the damage are printed, then the error goes\n"
    "to standard error) or the output cannot be written; 2 usage error.\n";

/* After the list of fields, which the record registry gives. */
static const char decode_synopsis_tail[] =
    "Times (t, time, end_time, duration) are ns since the file's time origin.\n"
    "\n"
    "options:\n";

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
        vmp_put_json_string(e->f, s->s, s->len);
    else
        vmp_put_quoted(e->f, s->s, s->len);
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

static const void *at(const vmp_record *rec, size_t off)
{
    return (const char *)rec + off;
}

static void emit_bytes(const emitter *e, const char *name, const uint8_t *b, size_t n)
{
    size_t i;
    key(e, name);
    if (e->json)
        fputc('"', e->f);
    for (i = 0; i < n; i++)
        fprintf(e->f, "%02x", b[i]);
    if (e->json)
        fputc('"', e->f);
    else if (n == 0)
        fputs("none", e->f);
}

/* Item `i` of list field `f` (array `p`): a number, a pair a:b ([a,b] in
 * JSON; b in hex for ADDRESS), a string, a label key:value, a symbol
 * value+size:name ([value,size,name]), an inline record offset:[f:b ...]
 * ([offset,[[f,b],...]]). */
static void emit_item(const emitter *e, const vmp_field *f, const void *p, size_t i)
{
    const uint64_t *u = (const uint64_t *)p + i * f->group;
    const vmp_str *s = (const vmp_str *)p + i * (f->kind == VMP_FIELD_LABELS ? 2 : 1);
    const vmp_rec_symbol *sym = (const vmp_rec_symbol *)p + i;
    const vmp_rec_inline *in = (const vmp_rec_inline *)p + i;
    size_t j;

    switch ((vmp_field_kind)f->kind) {
    case VMP_FIELD_UINTS:
    case VMP_FIELD_COLUMN:
    case VMP_FIELD_PC_MAP:
        if (f->group == 1)
            fprintf(e->f, "%" PRIu64, u[0]);
        else if (e->json)
            fprintf(e->f, "[%" PRIu64 ",%" PRIu64 "]", u[0], u[1]);
        else
            fprintf(e->f,
                    f->flags & VMP_FIELD_ADDRESS ? "%" PRIu64 ":0x%" PRIx64
                                                 : "%" PRIu64 ":%" PRIu64,
                    u[0], u[1]);
        return;
    case VMP_FIELD_INTS:
    case VMP_FIELD_INT_COLUMN:
        fprintf(e->f, "%" PRId64, ((const int64_t *)p)[i]);
        return;
    case VMP_FIELD_TSTRS:
        put_s(e, s);
        return;
    case VMP_FIELD_LABELS:
        put_s(e, &s[0]);
        fputc(':', e->f);
        put_s(e, &s[1]);
        return;
    case VMP_FIELD_SYMBOLS:
        if (e->json)
            fprintf(e->f, "[%" PRIu64 ",%" PRIu64 ",", sym->value, sym->size);
        else
            fprintf(e->f, "0x%" PRIx64 "+%" PRIu64 ":", sym->value, sym->size);
        put_s(e, &sym->name);
        if (e->json)
            fputc(']', e->f);
        return;
    case VMP_FIELD_INLINE:
        fprintf(e->f, e->json ? "[%" PRIu64 ",[" : "%" PRIu64 ":[", in->mcpc_offset);
        for (j = 0; j < in->depth; j++) {
            if (j)
                fputs(e->json ? "," : " ", e->f);
            fprintf(e->f, e->json ? "[%" PRIu64 ",%" PRIu64 "]" : "%" PRIu64 ":%" PRIu64,
                    in->frames[2 * j], in->frames[2 * j + 1]);
        }
        fputs(e->json ? "]]" : "]", e->f);
        return;
    default:
        return;
    }
}

/* List field `f`, `n` items at `p`: [a, b] ({...} for labels). */
static void emit_list(const emitter *e, const vmp_field *f, const void *p, size_t n)
{
    size_t i;
    key(e, f->name);
    fputc(f->kind == VMP_FIELD_LABELS ? '{' : '[', e->f);
    for (i = 0; i < n; i++) {
        sep(e, i);
        emit_item(e, f, p, i);
    }
    fputc(f->kind == VMP_FIELD_LABELS ? '}' : ']', e->f);
}

/* One field of `rec` as the registry describes it, unless it is absent. */
static void emit_field(const emitter *e, const vmp_record *rec, const vmp_field *f)
{
    const void *v = at(rec, f->off);
    size_t n = f->kind >= VMP_FIELD_BSTR ? *(const size_t *)at(rec, f->aux) : 0;

    if ((f->flags & VMP_FIELD_NOT_WRITTEN) ||
        ((f->flags & VMP_FIELD_OPTIONAL) && !vmp_record_field_present(rec, f, 0)))
        return;
    switch ((vmp_field_kind)f->kind) {
    case VMP_FIELD_UINT:
    case VMP_FIELD_TIME_DELTA:
        if (f->flags & VMP_FIELD_ADDRESS)
            f_addr(e, f->name, *(const uint64_t *)v);
        else
            f_u64(e, f->name, *(const uint64_t *)v);
        break;
    case VMP_FIELD_INT:
        f_i64(e, f->name, *(const int64_t *)v);
        break;
    case VMP_FIELD_TSTR:
        f_str(e, f->name, v);
        break;
    case VMP_FIELD_BSTR:
        emit_bytes(e, f->name, *(const uint8_t *const *)v, n);
        break;
    default: /* the lists */
        emit_list(e, f, *(const void *const *)v, n);
        break;
    }
}

/* The key of the i-th field of `d` in the order `vmp decode` prints. */
static uint64_t print_key(const vmp_record_desc *d, size_t i)
{
    return d->print_order != NULL ? d->print_order[i] : d->fields[i].key;
}

static void emit_record(const emitter *e, const vmp_record *rec)
{
    const vmp_record_desc *d = vmp_record_desc_of((uint64_t)rec->type);
    size_t i;
    if (e->json)
        fprintf(e->f, "{\"chunk\":%" PRIu64 ",\"offset\":%" PRIu64 ",\"type\":\"%s\"",
                rec->chunk_index, rec->record_offset, vmp_record_type_name(rec->type));
    else
        fprintf(e->f, "chunk %" PRIu64 " @%" PRIu64 " %s", rec->chunk_index, rec->record_offset,
                vmp_record_type_name(rec->type));
    if (d != NULL) {
        for (i = 0; i < d->n_fields; i++)
            emit_field(e, rec, vmp_record_field(d, print_key(d, i)));
    } else {
        f_u64(e, e->json ? "raw_type" : "type", rec->raw_type);
    }
    if (rec->unknown_keys)
        f_u64(e, "unknown_keys", rec->unknown_keys);
    fputs(e->json ? "}\n" : "\n", e->f);
}

/* The fields of every record type from the registry (wrapped at 78
 * columns), then the rest of the synopsis. */
static void write_fields(FILE *out)
{
    int type;
    for (type = 1; type <= VMP_REC_TYPE_MAX; type++) {
        const vmp_record_desc *d = vmp_record_desc_of((uint64_t)type);
        size_t i, col = (size_t)fprintf(out, "  %-15s", d->name);
        for (i = 0; i <= d->n_fields; i++) {
            const vmp_field *f = i < d->n_fields ? vmp_record_field(d, print_key(d, i)) : NULL;
            char item[96];
            int optional;
            if (f == NULL && d->note == NULL)
                break;
            if (f != NULL && (f->flags & VMP_FIELD_NOT_WRITTEN))
                continue;
            optional = f != NULL && (f->flags & VMP_FIELD_OPTIONAL);
            if (f == NULL)
                snprintf(item, sizeof item, "(%s)", d->note);
            else
                snprintf(item, sizeof item, "%s%s%s%s%s", optional ? "[" : "", f->name,
                         optional ? "]" : "", f->shape ? " " : "", f->shape ? f->shape : "");
            if (col + 1 + strlen(item) > 78) {
                fputs("\n                 ", out);
                col = 17;
            }
            col += (size_t)fprintf(out, " %s", item);
        }
        fputc('\n', out);
    }
    fputs(decode_synopsis_tail, out);
}

static const vmp_cli_option decode_options[] = {
    {"json", OPT_JSON, NULL, NULL,
     "JSON Lines: one object per record with the keys \"chunk\",\n"
     "\"offset\", \"type\" (the name above), \"raw_type\" (for\n"
     "UNKNOWN only), then the fields named above as keys.  All\n"
     "numbers are decimal integers (addresses too); strings are\n"
     "JSON strings (invalid UTF-8 becomes U+FFFD); pairs are\n"
     "2-element arrays; symbols are [value, size, name]; inline\n"
     "is [[offset, [[function, bcpc], ...]], ...]; labels is an\n"
     "object; build_id is a hex string."},
    VMP_CLI_OPTION_OUTPUT,
    VMP_CLI_OPTION_HELP,
};
static const vmp_cli_command decode_command = {
    .name = "decode",
    .synopsis = {decode_synopsis},
    .options = decode_options,
    .n_options = sizeof decode_options / sizeof decode_options[0],
    .epilogue = decode_epilogue,
    .column = 16,
    .write_more = write_fields,
};

int vmp_cmd_decode(int argc, char **argv)
{
    vmp_cli_parser p;
    const char *cmd = "decode", *path;
    int c, rc, rc_close;
    vmp_reader *r;
    vmp_record rec;
    vmp_status st;
    vmp_cli_output out;
    emitter e = {NULL, 0};

    vmp_cli_begin(&p, &decode_command, argc, argv);
    while ((c = vmp_cli_next(&p)) > 0) {
        switch (c) {
        case OPT_JSON:
            e.json = 1;
            break;
        }
    }
    if ((rc = vmp_cli_file_operand(&p, c, &path)) >= 0)
        return rc;

    rc = vmp_cli_open_io(&r, &out, cmd, path, p.output);
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
