/* SPDX-License-Identifier: MIT
 *
 * vmp_report_text.c - the text report of `vmp report` (its layout is
 * informative: spec.md Appendix D).
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_report_int.h"

static void text_ranges(FILE *f, const report *r, uint32_t fn, uint64_t fw)
{
    size_t i = vmp_rep__frames_begin(r, fn);
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
        vmp_rep__range_lines(r, fr, lines, sizeof lines);
        fprintf(f, "        %-14s %6.2f%%  (%" PRIu64 ")%s\n", rng,
                vmp_rep__pct(r->frames[i].w, fw), r->frames[i].w, lines);
    }
}

static void text_section(FILE *f, const report *r, const rep_opts *o, const char *title, int cls,
                         int pic_filter)
{
    size_t n = 0, k, i;
    uint64_t total = 0, cum = 0, rest = 0;
    entry *e = vmp_rep__collect(r, cls, pic_filter, &n, &total);
    if (!e)
        return;
    fprintf(f, "\n%s (%" PRIu64 " samples, %.2f%% of total)\n", title, total,
            vmp_rep__pct(total, r->t->samples));
    if (n == 0) {
        fprintf(f, "  (none)\n");
        free(e);
        return;
    }
    fprintf(f, "  %8s %8s %10s %8s  %s\n", "%", "% total", "samples", "cumul.", "function");
    k = vmp_rep__shown(o, e, n, total);
    for (i = 0; i < k; i++) {
        const vmp_afunction *fn = vmp_rep__fn_of(r, e[i].id);
        cum += e[i].w;
        if (cls == VMP_CLASS_GENERATED)
            fprintf(f, "  %7.2f%% %7.2f%% %10" PRIu64 " %7.2f%%  %s [%s]\n",
                    vmp_rep__pct(e[i].w, total), vmp_rep__pct(e[i].w, r->t->samples), e[i].w,
                    vmp_rep__pct(cum, total), fn->name, fn->kind);
        else
            fprintf(f, "  %7.2f%% %7.2f%% %10" PRIu64 " %7.2f%%  %s\n", vmp_rep__pct(e[i].w, total),
                    vmp_rep__pct(e[i].w, r->t->samples), e[i].w, vmp_rep__pct(cum, total),
                    fn->name);
        if (o->ranges && (cls == VMP_CLASS_GENERATED || cls == VMP_CLASS_SYMBOLIC))
            text_ranges(f, r, e[i].id, e[i].w);
    }
    for (i = k; i < n; i++)
        rest += e[i].w;
    if (k < n)
        fprintf(f, "  %7.2f%% %7.2f%% %10" PRIu64 " %7.2f%%  ...others... (%zu)\n",
                vmp_rep__pct(rest, total), vmp_rep__pct(rest, r->t->samples), rest, 100.0, n - k);
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
            const vmp_afunction *fn = vmp_rep__fn_of(r, (uint32_t)i);
            if (fn && fn->code_class == VMP_CLASS_GENERATED && fn->code_kind == k)
                w += r->fw[i];
        }
        fprintf(f, "  %-20s %7.2f%% %7.2f%% %10" PRIu64 "\n", h->code_kinds[k].s,
                vmp_rep__pct(w, r->t->generated), vmp_rep__pct(w, r->t->samples), w);
    }
    /* other kind names, each once, sorted */
    for (i = 1; other && i < r->n_fw; i++) {
        const vmp_afunction *fn = vmp_rep__fn_of(r, (uint32_t)i);
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
            const vmp_afunction *fn = vmp_rep__fn_of(r, (uint32_t)i);
            if (fn && fn->code_class == VMP_CLASS_GENERATED && fn->code_kind >= n_kinds &&
                strcmp(fn->kind, other[j]) == 0)
                w += r->fw[i];
        }
        fprintf(f, "  %-20s %7.2f%% %7.2f%% %10" PRIu64 "\n", other[j],
                vmp_rep__pct(w, r->t->generated), vmp_rep__pct(w, r->t->samples), w);
    }
    free(other);
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

void vmp_rep__text_report(FILE *f, const report *r, const rep_opts *o, const char *path)
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
    uint64_t symbolic = vmp_rep__symbolic_total(t);

    fprintf(f, "vmp report: %s\n", path);
    if (h && h->start_realtime_ns) {
        vmp_format_utc(date, sizeof date, h->start_realtime_ns);
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
            t->samples, t->generated, vmp_rep__pct(t->generated, t->samples), t->native,
            vmp_rep__pct(t->native, t->samples), t->unknown, vmp_rep__pct(t->unknown, t->samples));
    if (symbolic)
        fprintf(f, "%" PRIu64 " (%.2f%%) in symbolic frames only; ", symbolic,
                vmp_rep__pct(symbolic, t->samples));
    fprintf(f, "%" PRIu64 " (%.2f%%) failed\n", t->failed, vmp_rep__pct(t->failed, t->samples));
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
    vmp_rep__text_units(f, r, o);
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
                    vmp_analysis_state_name(r->a, (uint32_t)i), vmp_rep__pct(sw[i], t->samples),
                    sw[i], g, v, u);
            if (symbolic)
                fprintf(f, " / %" PRIu64, y);
            fprintf(f, "\n");
        }
    }
    fprintf(f, "\nthreads (%% of total)\n");
    for (i = 0; vmp_profile_thread(r->p, i, &tid, &w); i++)
        fprintf(f, "  %-20s %7.2f%% %10" PRIu64 "\n", vmp_analysis_thread_name(r->a, tid),
                vmp_rep__pct(w, t->samples), w);
    fw = vmp_profile_failure_weights(r->p, &n);
    if (t->failed) {
        fprintf(f, "\nfailed samples by reason (%% of failed)\n");
        for (i = 0; i < n; i++)
            if (fw[i])
                fprintf(f, "  %-20s %7.2f%% %10" PRIu64 "\n",
                        vmp_analysis_failure_reason_name(r->a, (uint32_t)i),
                        vmp_rep__pct(fw[i], t->failed), fw[i]);
    }
    vmp_rep__text_blame(f, r, o);
}

void vmp_rep__text_units(FILE *f, const report *r, const rep_opts *o)
{
    size_t n, k, i;
    uint64_t total, cum = 0, rest = 0;
    int named;
    unit *u = vmp_rep__units_table(r, &n, &total, &named);
    if (!u || !named) {
        free(u);
        return;
    }
    fprintf(f, "\n%% of generated vm code by JIT unit (%" PRIu64 " samples, %.2f%% of total)\n",
            total, vmp_rep__pct(total, r->t->samples));
    fprintf(f, "  %8s %8s %10s %8s  %s\n", "%", "% total", "samples", "cumul.",
            "JIT unit [kind] (function)");
    k = vmp_rep__rows_shown(o, u, n, sizeof *u, offsetof(unit, w), total);
    for (i = 0; i < n; i++) {
        const vmp_afunction *fn = u[i].fn ? vmp_rep__fn_of(r, u[i].fn) : NULL;
        if (i >= k) {
            rest += u[i].w;
            continue;
        }
        cum += u[i].w;
        fprintf(f, "  %7.2f%% %7.2f%% %10" PRIu64 " %7.2f%%  %s", vmp_rep__pct(u[i].w, total),
                vmp_rep__pct(u[i].w, r->t->samples), u[i].w, vmp_rep__pct(cum, total), u[i].name);
        if (fn && strcmp(fn->name, u[i].name) != 0)
            fprintf(f, " [%s] (%s)\n", fn->kind, fn->name);
        else
            fprintf(f, " [%s]\n", fn ? fn->kind : "?");
    }
    if (k < n)
        fprintf(f, "  %7.2f%% %7.2f%% %10" PRIu64 " %7.2f%%  ...others... (%zu)\n",
                vmp_rep__pct(rest, total), vmp_rep__pct(rest, r->t->samples), rest, 100.0, n - k);
    free(u);
}

void vmp_rep__text_blame(FILE *f, const report *r, const rep_opts *o)
{
    bmatrix m;
    size_t i, s, k;
    uint64_t *rest;
    if (!vmp_profile_blamed_samples(r->p))
        return;
    if (vmp_rep__bmatrix_build(r, &m) != 0) {
        fprintf(f, "\ntime blamed on JIT units: out of memory\n");
        return;
    }
    fprintf(f,
            "\ntime blamed on JIT units (samples not in generated code, by the JIT unit last "
            "exited; %" PRIu64 " samples, %.2f%% of total)\n",
            m.total, vmp_rep__pct(m.total, r->t->samples));
    fprintf(f, "  %8s %10s", "%", "samples");
    for (s = 0; s < m.n_states; s++)
        if (m.col[s])
            fprintf(f, " %12.12s", vmp_analysis_state_name(r->a, (uint32_t)s));
    fprintf(f, "  JIT unit\n");
    k = vmp_rep__rows_shown(o, m.rows, m.n_rows, sizeof *m.rows, offsetof(brow, total), m.total);
    rest = m.cells + m.n_rows * m.n_states; /* the spare row */
    for (i = 0; i < m.n_rows; i++) {
        const brow *row = &m.rows[i];
        if (i >= k) {
            for (s = 0; s < m.n_states; s++)
                rest[s] += row->cells[s];
            continue;
        }
        fprintf(f, "  %7.2f%% %10" PRIu64, vmp_rep__pct(row->total, m.total), row->total);
        for (s = 0; s < m.n_states; s++)
            if (m.col[s])
                fprintf(f, " %12" PRIu64, row->cells[s]);
        if (row->fn)
            fprintf(f, "  %s [%s]\n", row->name, vmp_rep__brow_kind(r, row));
        else
            fprintf(f, "  %s\n", row->name);
    }
    if (k < m.n_rows) {
        uint64_t w = 0;
        for (s = 0; s < m.n_states; s++)
            w += rest[s];
        fprintf(f, "  %7.2f%% %10" PRIu64, vmp_rep__pct(w, m.total), w);
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
    vmp_rep__bmatrix_free(&m);
}
