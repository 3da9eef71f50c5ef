/* SPDX-License-Identifier: MIT
 *
 * vmp_report_data.c - the JSON and CSV reports (spec.md R-VIEW-2,
 * R-VIEW-3).
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_report_int.h"

void vmp_rep__json_str(FILE *f, const char *s)
{
    vmp_put_json_string(f, s, strlen(s));
}

/* '],"KEY":[{"FIELD":name,"samples":w}, ...' for the n weights of a
 * vocabulary (states, failure reasons) named by `name`. */
static void json_named_weights(FILE *f, vmp_analysis *a, const char *key, const char *field,
                               const char *(*name)(vmp_analysis *, uint32_t), const uint64_t *w,
                               size_t n)
{
    size_t i;
    fprintf(f, "],\"%s\":[", key);
    for (i = 0; i < n; i++) {
        fprintf(f, "%s{\"%s\":", i ? "," : "", field);
        vmp_rep__json_str(f, name(a, (uint32_t)i));
        fprintf(f, ",\"samples\":%" PRIu64 "}", w[i]);
    }
}

static void json_section(FILE *f, const report *r, const rep_opts *o, const char *key, int cls)
{
    size_t n = 0, k, i, j;
    uint64_t total = 0, rest = 0;
    entry *e = vmp_rep__collect(r, cls, 0, &n, &total);
    fprintf(f, ",\"%s\":{\"samples\":%" PRIu64 ",\"functions\":[", key, total);
    if (!e) {
        fprintf(f, "]}");
        return;
    }
    k = vmp_rep__shown(o, e, n, total);
    for (i = 0; i < k; i++) {
        const vmp_afunction *fn = vmp_rep__fn_of(r, e[i].id);
        fprintf(f, "%s{\"name\":", i ? "," : "");
        vmp_rep__json_str(f, fn->name);
        fprintf(f, ",\"kind\":");
        vmp_rep__json_str(f, fn->kind);
        fprintf(f, ",\"samples\":%" PRIu64 ",\"percent\":%.4f,\"percent_total\":%.4f", e[i].w,
                vmp_rep__pct(e[i].w, total), vmp_rep__pct(e[i].w, r->t->samples));
        if (o->ranges && (cls == VMP_CLASS_GENERATED || cls == VMP_CLASS_SYMBOLIC)) {
            int first = 1;
            fprintf(f, ",\"ranges\":[");
            for (j = vmp_rep__frames_begin(r, e[i].id); j < r->n_frames; j++) {
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
    vmp_rep__json_str(f, n ? k[sel].name : "cpu");
    fputs(",\"unit\":", f);
    vmp_rep__json_str(f, n ? k[sel].unit : "samples");
    fputs(",\"kinds\":[", f);
    for (i = 0; i < n; i++) {
        fputs(i ? ",{\"name\":" : "{\"name\":", f);
        vmp_rep__json_str(f, k[i].name);
        fputs(",\"unit\":", f);
        vmp_rep__json_str(f, k[i].unit);
        fprintf(f, ",\"samples\":%" PRIu64 ",\"weight\":%" PRIu64 "}", k[i].records, k[i].weight);
    }
    fputc(']', f);
}

void vmp_rep__json_report(FILE *f, const report *r, const rep_opts *o, const char *path)
{
    const vmp_rec_header *h = vmp_analysis_header(r->a);
    const vmp_profile_totals *t = r->t;
    const uint64_t *sw, *fw;
    const vmp_profile_events *ev;
    size_t n, i;
    uint64_t tid, w;

    fprintf(f, "{\"file\":");
    vmp_rep__json_str(f, path);
    fprintf(f, ",\"producer\":");
    vmp_rep__json_str(f, h ? h->producer.s : "");
    fprintf(f, ",\"vm_name\":");
    vmp_rep__json_str(f, h ? h->vm_name.s : "");
    fprintf(f, ",\"labels\":{");
    for (size_t k = 0; h && k < h->n_labels; k++) {
        if (k)
            fputc(',', f);
        vmp_put_json_string(f, h->labels[2 * k].s, h->labels[2 * k].len);
        fputc(':', f);
        vmp_put_json_string(f, h->labels[2 * k + 1].s, h->labels[2 * k + 1].len);
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
            t->samples, t->generated, t->native, t->unknown, vmp_rep__symbolic_total(t), t->failed,
            t->generations);
    json_section(f, r, o, "generated_code", VMP_CLASS_GENERATED);
    vmp_rep__json_units(f, r, o);
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
        vmp_rep__json_str(f, vmp_analysis_event_kind_name(r->a, (uint32_t)i));
        fprintf(f, ",\"count\":%" PRIu64 ",\"total_ns\":%" PRIu64 "}", ev[i].count,
                ev[i].total_duration_ns);
    }
    sw = vmp_profile_state_weights(r->p, &n);
    json_named_weights(f, r->a, "states", "state", vmp_analysis_state_name, sw, n);
    fprintf(f, "],\"threads\":[");
    for (i = 0; vmp_profile_thread(r->p, i, &tid, &w); i++) {
        fprintf(f, "%s{\"id\":%" PRIu64 ",\"name\":", i ? "," : "", tid);
        vmp_rep__json_str(f, vmp_analysis_thread_name(r->a, tid));
        fprintf(f, ",\"samples\":%" PRIu64 "}", w);
    }
    fw = vmp_profile_failure_weights(r->p, &n);
    json_named_weights(f, r->a, "failures", "reason", vmp_analysis_failure_reason_name, fw, n);
    fprintf(f, "]");
    vmp_rep__json_blame(f, r, o);
    {
        vmp_analysis_stats as;
        vmp_analysis_get_stats(r->a, &as);
        fprintf(f, ",\"truncated_stacks\":%" PRIu64, as.truncated_stacks);
    }
    json_sample_kinds(f, r->a);
    fprintf(f, ",\"error\":");
    if (r->error)
        vmp_rep__json_str(f, r->error);
    else
        fprintf(f, "null");
    fprintf(f, "}\n");
}

void vmp_rep__csv_report(FILE *f, const report *r, const rep_opts *o)
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
        entry *e = vmp_rep__collect(r, classes[c], 0, &n, &total);
        if (!e)
            continue;
        for (i = 0; i < n; i++) {
            const vmp_afunction *fn = vmp_rep__fn_of(r, e[i].id);
            if (frameless && classes[c] == VMP_CLASS_UNKNOWN &&
                strcmp(fn->name, "[unknown]") == 0) {
                e[i].w += frameless;
                for (j = vmp_rep__frames_begin(r, e[i].id); j < r->n_frames; j++) {
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
                vmp_put_csv_field(f, fn->kind);
                fputc(',', f);
                vmp_put_csv_field(f, fn->name);
                fprintf(f, ",,%" PRIu64 "\n", e[i].w);
                continue;
            }
            for (j = vmp_rep__frames_begin(r, e[i].id); j < r->n_frames; j++) {
                const vmp_aframe *fr = vmp_analysis_frame(r->a, r->frames[j].id);
                if (fr->function != e[i].id)
                    break;
                fprintf(f, "%s,", class_names[c]);
                vmp_put_csv_field(f, fn->kind);
                fputc(',', f);
                vmp_put_csv_field(f, fn->name);
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

void vmp_rep__json_units(FILE *f, const report *r, const rep_opts *o)
{
    size_t n, k, i;
    uint64_t total, rest = 0;
    int named;
    unit *u = vmp_rep__units_table(r, &n, &total, &named);
    if (!u)
        return;
    k = vmp_rep__rows_shown(o, u, n, sizeof *u, offsetof(unit, w), total);
    fprintf(f, ",\"jit_units\":{\"samples\":%" PRIu64 ",\"units\":[", total);
    for (i = 0; i < k; i++) {
        const vmp_afunction *fn = u[i].fn ? vmp_rep__fn_of(r, u[i].fn) : NULL;
        fprintf(f, "%s{\"name\":", i ? "," : "");
        vmp_rep__json_str(f, u[i].name);
        fprintf(f, ",\"function\":");
        vmp_rep__json_str(f, fn ? fn->name : "");
        fprintf(f, ",\"kind\":");
        vmp_rep__json_str(f, fn ? fn->kind : "");
        fprintf(f, ",\"samples\":%" PRIu64 "}", u[i].w);
    }
    for (i = k; i < n; i++)
        rest += u[i].w;
    fprintf(f, "],\"others\":{\"units\":%zu,\"samples\":%" PRIu64 "}}", n - k, rest);
    free(u);
}

void vmp_rep__json_blame(FILE *f, const report *r, const rep_opts *o)
{
    bmatrix m;
    size_t i, s, k;
    uint64_t rest = 0;
    if (!vmp_profile_blamed_samples(r->p))
        return;
    if (vmp_rep__bmatrix_build(r, &m) != 0)
        return;
    fprintf(f, ",\"blame\":{\"samples\":%" PRIu64 ",\"blamed\":%" PRIu64 ",\"states\":[", m.total,
            vmp_profile_blamed_samples(r->p));
    for (s = 0; s < m.n_states; s++) {
        fprintf(f, "%s", s ? "," : "");
        vmp_rep__json_str(f, vmp_analysis_state_name(r->a, (uint32_t)s));
    }
    fprintf(f, "],\"totals\":[");
    for (s = 0; s < m.n_states; s++)
        fprintf(f, "%s%" PRIu64, s ? "," : "", m.col[s]);
    fprintf(f, "],\"units\":[");
    k = vmp_rep__rows_shown(o, m.rows, m.n_rows, sizeof *m.rows, offsetof(brow, total), m.total);
    for (i = 0; i < k; i++) {
        const brow *row = &m.rows[i];
        fprintf(f, "%s{\"name\":", i ? "," : "");
        vmp_rep__json_str(f, row->name);
        fprintf(f, ",\"function\":");
        vmp_rep__json_str(f, row->fn ? vmp_rep__fn_of(r, row->fn)->name : "");
        fprintf(f, ",\"kind\":");
        vmp_rep__json_str(f, vmp_rep__brow_kind(r, row));
        fprintf(f, ",\"samples\":%" PRIu64 ",\"by_state\":[", row->total);
        for (s = 0; s < m.n_states; s++)
            fprintf(f, "%s%" PRIu64, s ? "," : "", row->cells[s]);
        fprintf(f, "]}");
    }
    for (i = k; i < m.n_rows; i++)
        rest += m.rows[i].total;
    fprintf(f, "],\"others\":{\"units\":%zu,\"samples\":%" PRIu64 "}}", m.n_rows - k, rest);
    vmp_rep__bmatrix_free(&m);
}
