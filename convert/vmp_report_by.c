/* SPDX-License-Identifier: MIT
 *
 * vmp_report_by.c - the ranked tables of `vmp report --by` (module,
 * thread, state, unit, vm-function: spec.md R-VIEW-2, R-VIEW-7).
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "vmp_report_int.h"

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
            ADD_KEY(failed ? failed
                           : vmp_rep__fn_of(r, vmp_analysis_frame(r->a, fr)->function)->name,
                    failed, k->weight);
            e[n - 1].kind = kind;
            e[n - 1].own = own ? k->weight : 0;
        }
    } else if (by == BY_UNIT) {
        const vmp_profile_code *c = vmp_profile_code_weights(r->p, &m);
        for (i = 0; i < m; i++)
            ADD_KEY(vmp_rep__unit_name(r, c[i].code), NULL, c[i].weight);
        if (r->t->samples > sum)
            ADD_KEY("[not in generated code]", NULL, r->t->samples - sum);
    } else {
        for (i = 1; i < r->n_fw; i++) {
            const vmp_afunction *fn = vmp_rep__fn_of(r, (uint32_t)i);
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

static void by_report(FILE *f, const report *r, const rep_opts *o, const char *path,
                      const kentry *e, size_t n)
{
    uint64_t total = r->t->samples, cum = 0, rest = 0;
    size_t k = 0, i;
    const char *what = by_names[o->by];
    while (k < n && (o->top == 0 || k < o->top) && vmp_rep__pct(e[k].w, total) >= o->min_percent)
        k++;
    for (i = k; i < n; i++)
        rest += e[i].w;
    if (o->format == FMT_CSV && o->by == BY_VM_FUNCTION) { /* spec R-VIEW-7 */
        fprintf(f, "kind,%s,samples,own\n", what);
        for (i = 0; i < n; i++) {
            fprintf(f, "%s,", e[i].kind);
            vmp_put_csv_field(f, e[i].name);
            fprintf(f, ",%" PRIu64 ",%" PRIu64 "\n", e[i].w, e[i].own);
        }
        return;
    }
    if (o->format == FMT_CSV) {
        fprintf(f, "%s,samples\n", what);
        for (i = 0; i < n; i++) {
            vmp_put_csv_field(f, e[i].name);
            fprintf(f, ",%" PRIu64 "\n", e[i].w);
        }
        return;
    }
    if (o->format == FMT_JSON) {
        fprintf(f, "{\"file\":");
        vmp_rep__json_str(f, path);
        fprintf(f, ",\"by\":\"%s\",\"samples\":%" PRIu64 ",\"entries\":[", what, total);
        for (i = 0; i < k; i++) {
            cum += e[i].w;
            fprintf(f, "%s{\"name\":", i ? "," : "");
            vmp_rep__json_str(f, e[i].name);
            fprintf(f, ",\"samples\":%" PRIu64 ",\"percent\":%.4f,\"cumulative\":%.4f", e[i].w,
                    vmp_rep__pct(e[i].w, total), vmp_rep__pct(cum, total));
            if (e[i].kind)
                fprintf(f, ",\"kind\":\"%s\",\"own\":%" PRIu64, e[i].kind, e[i].own);
            fputc('}', f);
        }
        fprintf(f, "],\"others\":{\"%ss\":%zu,\"samples\":%" PRIu64 "},\"error\":", what, n - k,
                rest);
        if (r->error)
            vmp_rep__json_str(f, r->error);
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
            fprintf(f, "  %7.2f%% %10" PRIu64 " %7.2f%% %7.2f%%  %-8s  %s\n",
                    vmp_rep__pct(e[i].w, total), e[i].w, vmp_rep__pct(cum, total),
                    vmp_rep__pct(e[i].own, e[i].w), e[i].kind, e[i].name);
        else
            fprintf(f, "  %7.2f%% %10" PRIu64 " %7.2f%%  %s\n", vmp_rep__pct(e[i].w, total), e[i].w,
                    vmp_rep__pct(cum, total), e[i].name);
    }
    if (k < n && o->by == BY_VM_FUNCTION)
        fprintf(f, "  %7.2f%% %10" PRIu64 " %7.2f%% %8s  %-8s  ...others... (%zu)\n",
                vmp_rep__pct(rest, total), rest, 100.0, "", "", n - k);
    else if (k < n)
        fprintf(f, "  %7.2f%% %10" PRIu64 " %7.2f%%  ...others... (%zu)\n",
                vmp_rep__pct(rest, total), rest, 100.0, n - k);
}

int vmp_report_by_key(const char *name)
{
    int k;
    const int n_by = (int)(sizeof by_names / sizeof by_names[0]);
    for (k = 0; name && k < n_by; k++)
        if (strcmp(name, by_names[k]) == 0)
            return k;
    return -1;
}

vmp_status vmp_rep__by(FILE *f, report *r, const rep_opts *o, const char *path)
{
    size_t n_keys = 0;
    kentry *keys = by_table(r, o->by, &n_keys);
    if (!keys)
        return VMP_ERR_NOMEM;
    by_report(f, r, o, path, keys, n_keys);
    free_table(keys, n_keys);
    return VMP_OK;
}
