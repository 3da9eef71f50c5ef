/* SPDX-License-Identifier: MIT
 *
 * test_rewrite.c - `vmp filter` and `vmp merge` (analyze/vmp_rewrite.h,
 * spec.md "Merged files", §5.2 R-END-1): round trips through the command,
 * checked with the analysis library and the simulated VM's ground truth.
 *
 * usage: test_rewrite VMP VMP-SIMVM WORKDIR
 *
 * A profile's "signature" is what a report shows, as sorted lines: weight per
 * (thread name, state name, resolved stack of frames "name A->B"), per leaf
 * frame, per VM state, per failure reason, and the sample and failure totals.
 * Merging files must give the sum of their signatures.
 */
#include <inttypes.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "vmp_analyze.h"
#include "vmp_record_writer.h"
#include "vmp_test.h"

static const char *vmp, *simvm, *dir;

/* ---- running commands ---------------------------------------------------------- */

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int run(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    int rc;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    rc = system(cmd);
    if (rc == -1 || !WIFEXITED(rc))
        return -1;
    return WEXITSTATUS(rc);
}

static const char *path(const char *name)
{
    static char buf[8][1024];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

/* ---- signatures ------------------------------------------------------------------ */

typedef struct sig {
    char **lines; /* "key\tweight" before summing; "key" after */
    uint64_t *w;
    size_t n, cap;
} sig;

static void sig_add(sig *s, const char *key, uint64_t w)
{
    if (w == 0)
        return;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1024;
        s->lines = realloc(s->lines, s->cap * sizeof *s->lines);
        s->w = realloc(s->w, s->cap * sizeof *s->w);
        if (!s->lines || !s->w)
            abort();
    }
    s->lines[s->n] = strdup(key);
    s->w[s->n++] = w;
}

typedef struct walk {
    sig *s;
    vmp_analysis *a;
} walk;

static int stack_line(const vmp_profile_stack_entry *e, void *payload)
{
    walk *wk = payload;
    char line[16384], frame[1024];
    size_t len = 0;
    uint32_t id = e->stack;
    len +=
        (size_t)snprintf(line, sizeof line, "S|%s|%s|", vmp_analysis_thread_name(wk->a, e->thread),
                         vmp_analysis_state_name(wk->a, e->state));
    while (id && len < sizeof line - 1) {
        const vmp_astack *st = vmp_analysis_stack(wk->a, id);
        vmp_analysis_format_frame(wk->a, frame, sizeof frame, st->frame);
        len += (size_t)snprintf(line + len, sizeof line - len, "%s;", frame);
        id = st->parent;
    }
    sig_add(wk->s, line, e->weight);
    return 0;
}

/* Add the signature of the profile at `file` to `s`. */
static void sig_of(sig *s, const char *file)
{
    vmp_reader *r = NULL;
    vmp_profile *p = NULL;
    vmp_analysis *a;
    const vmp_profile_totals *t;
    const uint64_t *v;
    size_t n, i;
    char key[1200], frame[1024];
    walk wk;
    CHECK(vmp_reader_open_file(&r, file, NULL) == VMP_OK);
    CHECK(vmp_profile_create(&p, NULL) == VMP_OK);
    CHECK(vmp_profile_read(p, r) == VMP_OK);
    a = vmp_profile_analysis(p);
    t = vmp_profile_get_totals(p);
    sig_add(s, "T|samples", t->samples);
    sig_add(s, "T|failed", t->failed);
    v = vmp_profile_frame_weights(p, &n);
    for (i = 1; i < n; i++) {
        vmp_analysis_format_frame(a, frame, sizeof frame, (uint32_t)i);
        snprintf(key, sizeof key, "F|%s", frame);
        sig_add(s, key, v[i]);
    }
    v = vmp_profile_state_weights(p, &n);
    for (i = 0; i < n; i++) {
        snprintf(key, sizeof key, "V|%s", vmp_analysis_state_name(a, (uint32_t)i));
        sig_add(s, key, v[i]);
    }
    v = vmp_profile_failure_weights(p, &n);
    for (i = 0; i < n; i++) {
        snprintf(key, sizeof key, "R|%s", vmp_analysis_failure_reason_name(a, (uint32_t)i));
        sig_add(s, key, v[i]);
    }
    wk.s = s;
    wk.a = a;
    vmp_profile_foreach_stack(p, stack_line, &wk);
    vmp_profile_free(p);
    vmp_reader_close(r);
}

static sig *sorting;

static int cmp_idx(const void *x, const void *y)
{
    return strcmp(sorting->lines[*(const size_t *)x], sorting->lines[*(const size_t *)y]);
}

/* Sort and sum equal keys. */
static void sig_close(sig *s)
{
    size_t *idx = malloc((s->n + 1) * sizeof *idx), i, k = 0;
    char **lines = malloc((s->n + 1) * sizeof *lines);
    uint64_t *w = malloc((s->n + 1) * sizeof *w);
    if (!idx || !lines || !w)
        abort();
    for (i = 0; i < s->n; i++)
        idx[i] = i;
    sorting = s;
    qsort(idx, s->n, sizeof *idx, cmp_idx);
    for (i = 0; i < s->n; i++) {
        if (k > 0 && strcmp(lines[k - 1], s->lines[idx[i]]) == 0) {
            w[k - 1] += s->w[idx[i]];
            free(s->lines[idx[i]]);
            continue;
        }
        lines[k] = s->lines[idx[i]];
        w[k++] = s->w[idx[i]];
    }
    free(idx);
    free(s->lines);
    free(s->w);
    s->lines = lines;
    s->w = w;
    s->n = k;
}

static void sig_free(sig *s)
{
    size_t i;
    for (i = 0; i < s->n; i++)
        free(s->lines[i]);
    free(s->lines);
    free(s->w);
    memset(s, 0, sizeof *s);
}

/* 1 when equal; prints the first difference. */
static int sig_equal(const sig *x, const sig *y, const char *what)
{
    size_t i;
    for (i = 0; i < x->n && i < y->n; i++) {
        if (strcmp(x->lines[i], y->lines[i]) != 0 || x->w[i] != y->w[i]) {
            fprintf(stderr, "%s: line %zu: '%s' %" PRIu64 " vs '%s' %" PRIu64 "\n", what, i,
                    x->lines[i], x->w[i], y->lines[i], y->w[i]);
            return 0;
        }
    }
    if (x->n != y->n) {
        fprintf(stderr, "%s: %zu vs %zu lines\n", what, x->n, y->n);
        return 0;
    }
    return 1;
}

static void sig_files(sig *s, const char *a, const char *b, const char *c)
{
    memset(s, 0, sizeof *s);
    sig_of(s, a);
    if (b)
        sig_of(s, b);
    if (c)
        sig_of(s, c);
    sig_close(s);
}

/* ---- sample facts read directly ---------------------------------------------------- */

typedef struct facts {
    uint64_t samples, end, in_window, last3, gen0;
} facts;

static facts read_facts(const char *file, uint64_t from, uint64_t to)
{
    facts f;
    vmp_reader *r = NULL;
    vmp_record rec;
    vmp_status st;
    int pass;
    memset(&f, 0, sizeof f);
    for (pass = 0; pass < 2; pass++) {
        CHECK(vmp_reader_open_file(&r, file, NULL) == VMP_OK);
        while ((st = vmp_reader_next(r, &rec)) == VMP_OK) {
            const vmp_rec_sample *s = &rec.u.sample;
            if (rec.type != VMP_REC_SAMPLE && rec.type != VMP_REC_FAILED_SAMPLE)
                continue;
            if (pass == 0) {
                f.samples++;
                if (s->time_ns > f.end)
                    f.end = s->time_ns;
                if (s->time_ns >= from && s->time_ns < to)
                    f.in_window++;
                if (s->generation == 0)
                    f.gen0++;
            } else if (s->time_ns + 3000000000ull >= f.end) {
                f.last3++;
            }
        }
        CHECK(st == VMP_END);
        vmp_reader_close(r);
    }
    return f;
}

static uint64_t samples_in(const char *file)
{
    return read_facts(file, 0, 0).samples;
}

/* ---- the truth ------------------------------------------------------------------------ */

/* Truth lines (one per sample) whose field `col` equals `value`, or, with
 * `re`, whose function or any caller name matches. */
static uint64_t truth_count(const char *file, int col, const char *value, const regex_t *re)
{
    FILE *f = fopen(file, "r");
    char line[65536];
    uint64_t n = 0;
    CHECK(f != NULL);
    while (f && fgets(line, sizeof line, f)) {
        char *fields[6] = {0}, *p = line;
        int k;
        line[strcspn(line, "\n")] = '\0';
        for (k = 0; k < 6 && p; k++) {
            fields[k] = p;
            p = strchr(p, '\t');
            if (p)
                *p++ = '\0';
        }
        if (k < 6)
            continue;
        if (!re) {
            n += strcmp(fields[col], value) == 0;
            continue;
        }
        if (regexec(re, fields[3], 0, NULL, 0) == 0) {
            n++;
            continue;
        }
        /* callers: "name" or "name A->B", separated by ';' */
        for (p = fields[5]; *p;) {
            char name[4096];
            size_t len = strcspn(p, ";");
            char *sp;
            regex_t range;
            snprintf(name, sizeof name, "%.*s", (int)len, p);
            CHECK(regcomp(&range, " [0-9]+->[0-9]+$", REG_EXTENDED) == 0);
            if (regexec(&range, name, 0, NULL, 0) == 0) {
                sp = strrchr(name, ' ');
                *sp = '\0';
            }
            regfree(&range);
            if (regexec(re, name, 0, NULL, 0) == 0) {
                n++;
                break;
            }
            p += len;
            if (*p == ';')
                p++;
        }
    }
    if (f)
        fclose(f);
    return n;
}

/* 1 when `vmp report --format csv` of files x and y print the same rows
 * (in any order). */
static int same_report(const char *x, const char *y)
{
    if (run("'%s' report --format csv --top 0 '%s' | sort > '%s'", vmp, x, path("rx.csv")) != 0 ||
        run("'%s' report --format csv --top 0 '%s' | sort > '%s'", vmp, y, path("ry.csv")) != 0)
        return 0;
    return run("cmp -s '%s' '%s'", path("rx.csv"), path("ry.csv")) == 0;
}

/* ---- tests --------------------------------------------------------------------------------- */

static void check_valid(const char *file)
{
    int rc = run("'%s' validate -q '%s'", vmp, file);
    if (rc != 0)
        fprintf(stderr, "not valid: %s\n", file);
    CHECK(rc == 0);
}

/* spec R-END-1 and the round trip: filtering with no criterion keeps every
 * sample and what a report shows. */
static void test_filter_keeps_everything_without_criteria(void)
{
    sig x, y;
    CHECK(run("'%s' filter '%s' -o '%s'", vmp, path("a.vmp"), path("a-all.vmp")) == 0);
    check_valid(path("a-all.vmp"));
    sig_files(&x, path("a.vmp"), NULL, NULL);
    sig_files(&y, path("a-all.vmp"), NULL, NULL);
    CHECK(sig_equal(&x, &y, "filter without criteria"));
    sig_free(&x);
    sig_free(&y);
}

/* Filter by each thread, merge the parts: the report equals the original's. */
static void test_filter_by_thread_then_merge_is_the_original(void)
{
    static const char *const names[] = {"main", "worker-1", "worker-2"};
    sig x, y;
    int i;
    uint64_t total = 0;
    for (i = 0; i < 3; i++) {
        char out[64];
        uint64_t want = truth_count(path("a.tsv"), 0, names[i], NULL);
        snprintf(out, sizeof out, "a-t%d.vmp", i);
        CHECK(run("'%s' filter --thread '%s' '%s' -o '%s'", vmp, names[i], path("a.vmp"),
                  path(out)) == 0);
        check_valid(path(out));
        CHECK(samples_in(path(out)) == want);
        CHECK(want > 0);
        total += want;
    }
    CHECK(total == samples_in(path("a.vmp")));
    /* by id: the main thread is thread 1 */
    CHECK(run("'%s' filter --thread 1 '%s' -o '%s'", vmp, path("a.vmp"), path("a-id1.vmp")) == 0);
    CHECK(samples_in(path("a-id1.vmp")) == truth_count(path("a.tsv"), 0, "main", NULL));
    CHECK(run("'%s' merge '%s' '%s' '%s' -o '%s'", vmp, path("a-t0.vmp"), path("a-t1.vmp"),
              path("a-t2.vmp"), path("a-parts.vmp")) == 0);
    check_valid(path("a-parts.vmp"));
    sig_files(&x, path("a.vmp"), NULL, NULL);
    sig_files(&y, path("a-parts.vmp"), NULL, NULL);
    CHECK(sig_equal(&x, &y, "merge of the per-thread parts"));
    CHECK(same_report(path("a.vmp"), path("a-parts.vmp")));
    sig_free(&x);
    sig_free(&y);
}

/* Copy `from` to `to` without its seek table (spec §6), so that the end of the
 * profile must be found by a first pass. */
static void strip_seek_table(const char *from, const char *to)
{
    FILE *f = fopen(from, "rb"), *g = fopen(to, "wb");
    unsigned char *data;
    long size;
    uint32_t total;
    CHECK(f && g);
    if (!f || !g)
        return;
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    rewind(f);
    data = malloc((size_t)size);
    CHECK(data && fread(data, 1, (size_t)size, f) == (size_t)size);
    CHECK(memcmp(data + size - 4, "VMPS", 4) == 0);
    total = (uint32_t)data[size - 8] | (uint32_t)data[size - 7] << 8 |
            (uint32_t)data[size - 6] << 16 | (uint32_t)data[size - 5] << 24;
    CHECK(fwrite(data, 1, (size_t)size - total, g) == (size_t)size - total);
    free(data);
    fclose(f);
    fclose(g);
}

static void test_filter_by_state_time_generation(void)
{
    facts f = read_facts(path("a.vmp"), 2000000000ull, 5000000000ull);
    CHECK(run("'%s' filter --state gc '%s' -o '%s'", vmp, path("a.vmp"), path("a-gc.vmp")) == 0);
    check_valid(path("a-gc.vmp"));
    CHECK(samples_in(path("a-gc.vmp")) == truth_count(path("a.tsv"), 1, "gc", NULL));
    CHECK(samples_in(path("a-gc.vmp")) > 0);

    CHECK(run("'%s' filter --from 2 --to 5 '%s' -o '%s'", vmp, path("a.vmp"), path("a-w.vmp")) ==
          0);
    check_valid(path("a-w.vmp"));
    CHECK(samples_in(path("a-w.vmp")) == f.in_window);
    CHECK(f.in_window > 0 && f.in_window < f.samples);

    /* negative: counted back from the last sample; by the seek table, and by a
     * first pass over a file without one (the filter output of a pipe) */
    CHECK(run("'%s' filter --from -3 '%s' -o '%s'", vmp, path("a.vmp"), path("a-l3.vmp")) == 0);
    CHECK(samples_in(path("a-l3.vmp")) == f.last3);
    strip_seek_table(path("a.vmp"), path("a-noseek.vmp"));
    CHECK(run("'%s' filter --from -3 '%s' -o '%s'", vmp, path("a-noseek.vmp"), path("a-l3b.vmp")) ==
          0);
    CHECK(samples_in(path("a-l3b.vmp")) == f.last3);

    CHECK(run("'%s' filter --generations 0..0 '%s' -o '%s'", vmp, path("a.vmp"),
              path("a-g0.vmp")) == 0);
    check_valid(path("a-g0.vmp"));
    CHECK(samples_in(path("a-g0.vmp")) == f.gen0);
}

static void test_filter_by_function_regex(void)
{
    regex_t re;
    uint64_t want, total = samples_in(path("a.vmp"));
    CHECK(regcomp(&re, "benchFib|^vm::gc::", REG_EXTENDED | REG_NOSUB) == 0);
    want = truth_count(path("a.tsv"), 0, NULL, &re);
    regfree(&re);
    CHECK(want > 0 && want < total);
    CHECK(run("'%s' filter --include 'benchFib' --include '^vm::gc::' '%s' -o '%s'", vmp,
              path("a.vmp"), path("a-inc.vmp")) == 0);
    check_valid(path("a-inc.vmp"));
    CHECK(samples_in(path("a-inc.vmp")) == want);
    CHECK(run("'%s' filter --exclude 'benchFib' --exclude '^vm::gc::' '%s' -o '%s'", vmp,
              path("a.vmp"), path("a-exc.vmp")) == 0);
    check_valid(path("a-exc.vmp"));
    CHECK(samples_in(path("a-exc.vmp")) == total - want);
}

/* merge(merge(A, B), C) and merge(A, merge(B, C)) report the same, and the
 * sum of A, B and C. */
static void test_merge_is_associative_and_sums(void)
{
    sig s, l, r;
    CHECK(run("'%s' merge '%s' '%s' -o '%s'", vmp, path("a.vmp"), path("b.vmp"), path("ab.vmp")) ==
          0);
    CHECK(run("'%s' merge '%s' '%s' -o '%s'", vmp, path("ab.vmp"), path("c.vmp"),
              path("ab-c.vmp")) == 0);
    CHECK(run("'%s' merge '%s' '%s' -o '%s'", vmp, path("b.vmp"), path("c.vmp"), path("bc.vmp")) ==
          0);
    CHECK(run("cat '%s' | '%s' merge '%s' - -o - > '%s'", path("bc.vmp"), vmp, path("a.vmp"),
              path("a-bc.vmp")) == 0);
    check_valid(path("ab.vmp"));
    check_valid(path("ab-c.vmp"));
    check_valid(path("a-bc.vmp"));
    sig_files(&s, path("a.vmp"), path("b.vmp"), path("c.vmp"));
    sig_files(&l, path("ab-c.vmp"), NULL, NULL);
    sig_files(&r, path("a-bc.vmp"), NULL, NULL);
    CHECK(sig_equal(&s, &l, "merge(merge(A,B),C) vs A+B+C"));
    CHECK(sig_equal(&l, &r, "merge(merge(A,B),C) vs merge(A,merge(B,C))"));
    CHECK(same_report(path("ab-c.vmp"), path("a-bc.vmp")));
    CHECK(samples_in(path("ab-c.vmp")) ==
          samples_in(path("a.vmp")) + samples_in(path("b.vmp")) + samples_in(path("c.vmp")));
    sig_free(&s);
    sig_free(&l);
    sig_free(&r);
}

/* The format major of the file header frame (spec §3: u16 at byte 16). */
static unsigned major_of(const char *file)
{
    unsigned char h[18];
    FILE *f = fopen(file, "rb");
    size_t n = f ? fread(h, 1, sizeof h, f) : 0;
    if (f)
        fclose(f);
    return n == sizeof h ? (unsigned)(h[16] | h[17] << 8) : 0;
}

static long size_of(const char *file)
{
    FILE *f = fopen(file, "rb");
    long n = -1;
    if (f && fseek(f, 0, SEEK_END) == 0)
        n = ftell(f);
    if (f)
        fclose(f);
    return n;
}

/* Format 2.0 (spec §5.14): filter and merge write 2.0 unless --format 1.2
 * says; every way round keeps the profile, and the 2.0 file is the smaller.
 * import likewise. */
static void test_formats(void)
{
    sig x, y;
    CHECK(run("'%s' --seed 3 --samples 20000 --threads 3 --compactions 6 -o '%s' "
              "2>/dev/null",
              simvm, path("a2.vmp")) == 0);
    CHECK(run("'%s' filter '%s' -o '%s'", vmp, path("a2.vmp"), path("a2-all.vmp")) == 0);
    CHECK(run("'%s' filter --format 1.2 '%s' -o '%s'", vmp, path("a2.vmp"), path("a2-12.vmp")) ==
          0);
    CHECK(run("'%s' filter --format 2.0 '%s' -o '%s'", vmp, path("a.vmp"), path("a-20.vmp")) == 0);
    CHECK(run("'%s' filter --format 1.2 '%s' -o '%s'", vmp, path("a.vmp"), path("a-12.vmp")) == 0);
    CHECK(major_of(path("a2-all.vmp")) == 2 && major_of(path("a2-12.vmp")) == 1 &&
          major_of(path("a-20.vmp")) == 2 && major_of(path("a-12.vmp")) == 1);
    /* stacks that repeat, as real ones do: the 2.0 file is the smaller, and
     * as small as the in-VM writer's 2.0 file of the same run */
    CHECK(run("'%s' --seed 4 --samples 20000 --threads 3 --stacks 300 --depth 20 --format 1.2 "
              "-o '%s' "
              "2>/dev/null",
              simvm, path("s.vmp")) == 0);
    CHECK(run("'%s' --seed 4 --samples 20000 --threads 3 --stacks 300 --depth 20 "
              "--time-unit 1 -o '%s' 2>/dev/null",
              simvm, path("s2.vmp")) == 0);
    CHECK(run("'%s' filter --format 2.0 '%s' -o '%s'", vmp, path("s.vmp"), path("s-20.vmp")) == 0);
    CHECK(run("'%s' filter --format 1.2 '%s' -o '%s'", vmp, path("s.vmp"), path("s-12.vmp")) == 0);
    CHECK(size_of(path("s-20.vmp")) > 0 && size_of(path("s-20.vmp")) < size_of(path("s-12.vmp")));
    CHECK(size_of(path("s-20.vmp")) * 20 <= size_of(path("s2.vmp")) * 21);
    CHECK(same_report(path("s.vmp"), path("s-20.vmp")));
    sig_files(&x, path("a.vmp"), NULL, NULL);
    static const char *const outs[] = {"a2-all.vmp", "a2-12.vmp", "a-20.vmp"};
    for (size_t i = 0; i < 3; i++) {
        check_valid(path(outs[i]));
        sig_files(&y, path(outs[i]), NULL, NULL);
        CHECK(sig_equal(&x, &y, outs[i]));
        CHECK(same_report(path("a.vmp"), path(outs[i])));
        sig_free(&y);
    }
    sig_free(&x);
    /* merge: 2.0 unless asked */
    CHECK(run("'%s' merge '%s' '%s' -o '%s'", vmp, path("a2.vmp"), path("b.vmp"),
              path("a2b.vmp")) == 0);
    CHECK(run("'%s' merge --format 1.2 '%s' '%s' -o '%s'", vmp, path("a.vmp"), path("b.vmp"),
              path("ab1.vmp")) == 0);
    CHECK(major_of(path("a2b.vmp")) == 2 && major_of(path("ab1.vmp")) == 1);
    check_valid(path("a2b.vmp"));
    sig_files(&x, path("ab1.vmp"), NULL, NULL);
    sig_files(&y, path("a2b.vmp"), NULL, NULL);
    CHECK(sig_equal(&x, &y, "merge of a 2.0 and a 1.x file"));
    sig_free(&x);
    sig_free(&y);
    CHECK(run("'%s' merge --format 1.2 '%s' '%s' -o '%s'", vmp, path("a2.vmp"), path("b.vmp"),
              path("a2b-12.vmp")) == 0);
    CHECK(major_of(path("a2b-12.vmp")) == 1);
    CHECK(same_report(path("ab1.vmp"), path("a2b-12.vmp")));
    /* import */
    CHECK(run("'%s' pprof '%s' -o '%s'", vmp, path("a.vmp"), path("a.pb.gz")) == 0);
    CHECK(run("'%s' import --format 1.2 '%s' -o '%s'", vmp, path("a.pb.gz"), path("a-imp.vmp")) ==
          0);
    CHECK(run("'%s' import '%s' -o '%s'", vmp, path("a.pb.gz"), path("a-imp2.vmp")) == 0);
    CHECK(major_of(path("a-imp.vmp")) == 1 && major_of(path("a-imp2.vmp")) == 2);
    check_valid(path("a-imp2.vmp"));
    CHECK(same_report(path("a-imp.vmp"), path("a-imp2.vmp")));
    /* a format vmp does not write */
    CHECK(run("'%s' filter --format 1.1 '%s' -o '%s' 2>/dev/null", vmp, path("a.vmp"),
              path("x.vmp")) == 2);
}

/* Write a tiny profile with the record writer: one module at a fixed range
 * whose one symbol is `sym`, with build id `bid`; `n` samples in it (with a
 * one-node stack) and one failed sample in it. */
static void write_tiny(const char *file, const char *sym, unsigned char bid, int n)
{
    vmp_record_writer *w = NULL;
    vmp_record rec;
    vmp_str states[1] = {{"running", 7}}, reasons[1] = {{"no frame pointer", 16}};
    vmp_rec_symbol syms[1];
    int i;
    CHECK(vmp_record_writer_open_file(&w, file, NULL) == VMP_OK);
    memset(&rec, 0, sizeof rec);
    rec.type = VMP_REC_HEADER;
    rec.u.header.producer.s = "test";
    rec.u.header.producer.len = 4;
    rec.u.header.vm_name.s = rec.u.header.vm_version.s = rec.u.header.clock.s = "";
    rec.u.header.states = states;
    rec.u.header.n_states = 1;
    rec.u.header.failure_reasons = reasons;
    rec.u.header.n_failure_reasons = 1;
    rec.u.header.pointer_size = 8;
    CHECK(vmp_record_writer_write(w, &rec) == VMP_OK);
    memset(&rec, 0, sizeof rec);
    rec.type = VMP_REC_MODULE;
    rec.u.module.id = 7;
    rec.u.module.path.s = "/lib/libtiny.so";
    rec.u.module.path.len = strlen(rec.u.module.path.s);
    rec.u.module.build_id = &bid;
    rec.u.module.build_id_size = 1;
    rec.u.module.bias = 0x10000;
    rec.u.module.start = 0x11000;
    rec.u.module.end = 0x12000;
    CHECK(vmp_record_writer_write(w, &rec) == VMP_OK);
    memset(&rec, 0, sizeof rec);
    rec.type = VMP_REC_MODULE_SYMBOLS;
    syms[0].value = 0x1000;
    syms[0].size = 0x100;
    syms[0].name.s = sym;
    syms[0].name.len = strlen(sym);
    rec.u.module_symbols.module = 7;
    rec.u.module_symbols.symbols = syms;
    rec.u.module_symbols.n_symbols = 1;
    CHECK(vmp_record_writer_write(w, &rec) == VMP_OK);
    memset(&rec, 0, sizeof rec);
    rec.type = VMP_REC_STACK_NODE;
    rec.u.stack_node.id = 1;
    rec.u.stack_node.pc = 0x11010;
    CHECK(vmp_record_writer_write(w, &rec) == VMP_OK);
    for (i = 0; i <= n; i++) {
        memset(&rec, 0, sizeof rec);
        rec.type = i < n ? VMP_REC_SAMPLE : VMP_REC_FAILED_SAMPLE;
        rec.u.sample.time_ns = 1000000u * (uint64_t)(i + 1);
        rec.u.sample.thread = 1;
        rec.u.sample.pc = 0x11010;
        rec.u.sample.has_pc = 1;
        rec.u.sample.stack = i < n ? 1 : 0;
        rec.u.sample.weight = 1; /* written as given: 0 would count 0 (R-SMP-4) */
        CHECK(vmp_record_writer_write(w, &rec) == VMP_OK);
    }
    CHECK(vmp_record_writer_finish(w, NULL) == VMP_OK);
    vmp_record_writer_close(w);
}

/* Two different binaries at the same addresses (spec "Merged files"): their
 * symbols never resolve each other's pcs.  The second input's module is left
 * out and its frames become symbolic; the same binary is shared. */
static void test_merge_keeps_modules_apart(void)
{
    sig s, m;
    size_t i;
    uint64_t alpha = 0, beta = 0, beta_fn = 0;
    write_tiny(path("t1.vmp"), "alpha", 1, 5);
    write_tiny(path("t2.vmp"), "beta", 2, 3);
    write_tiny(path("t3.vmp"), "alpha", 1, 4);
    check_valid(path("t1.vmp"));
    CHECK(run("'%s' merge '%s' '%s' '%s' -o '%s'", vmp, path("t1.vmp"), path("t2.vmp"),
              path("t3.vmp"), path("t123.vmp")) == 0);
    check_valid(path("t123.vmp"));
    sig_files(&m, path("t123.vmp"), NULL, NULL);
    sig_files(&s, path("t1.vmp"), path("t2.vmp"), path("t3.vmp"));
    for (i = 0; i < m.n; i++) {
        if (strcmp(m.lines[i], "F|alpha") == 0)
            alpha = m.w[i];
        if (strcmp(m.lines[i], "F|beta") == 0)
            beta = m.w[i];
        if (strcmp(m.lines[i], "S|thread#1|running|beta;") == 0)
            beta_fn = m.w[i];
    }
    /* alpha: 5 + 4 samples and both failed ones (module shared; R-RES-7: a
     * FAILED_SAMPLE is resolved by its pc) */
    CHECK(alpha == 5 + 1 + 4 + 1);
    /* beta: its 3 samples; its failed sample has only a pc, which no module
     * of the output may resolve: it becomes unknown */
    CHECK(beta == 3);
    CHECK(beta_fn == 3);
    for (i = 0; i < s.n; i++)
        if (strcmp(s.lines[i], "F|beta") == 0)
            CHECK(s.w[i] == 4);
    sig_free(&s);
    sig_free(&m);
}

static void test_bad_arguments_exit_2_bad_files_exit_1(void)
{
    const char *a = path("a.vmp");
    CHECK(run("'%s' filter 2>/dev/null", vmp) == 2);
    CHECK(run("'%s' filter '%s' 2>/dev/null", vmp, a) == 2); /* no -o */
    CHECK(run("'%s' filter --generations x '%s' -o /dev/null 2>/dev/null", vmp, a) == 2);
    CHECK(run("'%s' filter --from abc '%s' -o /dev/null 2>/dev/null", vmp, a) == 2);
    CHECK(run("'%s' filter --include '(' '%s' -o /dev/null 2>/dev/null", vmp, a) == 2);
    CHECK(run("'%s' filter --bogus '%s' -o /dev/null 2>/dev/null", vmp, a) == 2);
    CHECK(run("'%s' filter --from -1 - -o /dev/null < '%s' 2>/dev/null", vmp, a) == 2);
    CHECK(run("'%s' filter '%s' '%s' -o /dev/null 2>/dev/null", vmp, a, a) == 2);
    CHECK(run("'%s' merge -o /dev/null 2>/dev/null", vmp) == 2);
    CHECK(run("'%s' merge '%s' 2>/dev/null", vmp, a) == 2);
    CHECK(run("'%s' merge - - -o /dev/null < /dev/null 2>/dev/null", vmp) == 2);
    CHECK(run("'%s' filter --help > /dev/null", vmp) == 0);
    CHECK(run("'%s' merge --help > /dev/null", vmp) == 0);

    CHECK(run("echo 'not a profile' > '%s'", path("junk.vmp")) == 0);
    CHECK(run("'%s' filter '%s' -o /dev/null 2>/dev/null", vmp, path("missing.vmp")) == 1);
    CHECK(run("'%s' filter '%s' -o /dev/null 2>/dev/null", vmp, path("junk.vmp")) == 1);
    CHECK(run("'%s' merge '%s' '%s' -o /dev/null 2>/dev/null", vmp, a, path("junk.vmp")) == 1);
    CHECK(run("'%s' filter '%s' -o '%s' 2>/dev/null", vmp, a, path("no/such/dir/x.vmp")) == 1);
    CHECK(run("'%s' merge '%s' -o '%s' 2>/dev/null", vmp, a, path("no/such/dir/x.vmp")) == 1);
    if (run("test -w /dev/full") == 0) {
        CHECK(run("'%s' filter '%s' -o /dev/full 2>/dev/null", vmp, a) == 1);
        CHECK(run("'%s' merge '%s' -o /dev/full 2>/dev/null", vmp, a) == 1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: test_rewrite VMP VMP-SIMVM WORKDIR\n");
        return 2;
    }
    vmp = argv[1];
    simvm = argv[2];
    dir = argv[3];
    CHECK(run("mkdir -p '%s'", dir) == 0);
    CHECK(run("'%s' --seed 3 --samples 20000 --threads 3 --compactions 6 -o '%s' --truth '%s' "
              "2>/dev/null",
              simvm, path("a.vmp"), path("a.tsv")) == 0);
    CHECK(run("'%s' --seed 5 --samples 15000 --threads 2 -o '%s' 2>/dev/null", simvm,
              path("b.vmp")) == 0);
    CHECK(run("'%s' --seed 9 --samples 12000 --threads 4 --depth 12 -o '%s' 2>/dev/null", simvm,
              path("c.vmp")) == 0);
    VMP_TEST_RUN(test_filter_keeps_everything_without_criteria);
    VMP_TEST_RUN(test_filter_by_thread_then_merge_is_the_original);
    VMP_TEST_RUN(test_filter_by_state_time_generation);
    VMP_TEST_RUN(test_filter_by_function_regex);
    VMP_TEST_RUN(test_merge_is_associative_and_sums);
    VMP_TEST_RUN(test_merge_keeps_modules_apart);
    VMP_TEST_RUN(test_bad_arguments_exit_2_bad_files_exit_1);
    VMP_TEST_RUN(test_formats);
    VMP_TEST_EXIT();
}
