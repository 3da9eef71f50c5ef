/* SPDX-License-Identifier: MIT
 *
 * bench_attribution.c - how many samples an end-of-run snapshot misattributes
 * compared with resolution at each sample's generation (spec.md §5
 * "Generations"), and how fast resolution runs.
 *
 * usage: bench_attribution [VMP_SIMVM [WORKDIR [SAMPLES]]]
 * For 0, 10 and 100 compactions, runs the simulated VM and prints a table:
 * the share of samples whose function (and function + bytecode range) match
 * the truth, exactly (per-sample generation) and from the final generation
 * only (what the original VMProfiler did), then the throughput of reading
 * alone and of reading + resolving.  Not a pass/fail test.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vmp_analyze.h"

#ifndef VMP_SIMVM_PATH
#    define VMP_SIMVM_PATH "vmp-simvm"
#endif

typedef struct score {
    uint64_t n, fn_ok, range_ok;
} score;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run_simvm(const char *simvm, const char *out, const char *truth, unsigned samples,
                     unsigned compactions)
{
    char s_samples[32], s_comp[32];
    pid_t pid;
    int status;
    snprintf(s_samples, sizeof s_samples, "%u", samples);
    snprintf(s_comp, sizeof s_comp, "%u", compactions);
    pid = fork();
    if (pid == 0) {
        char *argv[] = {(char *)simvm,   "--seed",  "7",           "--samples", s_samples,
                        "--compactions", s_comp,    "--zone-size", "131072",    "-o",
                        (char *)out,     "--truth", (char *)truth, NULL};
        execv(simvm, argv);
        _exit(127);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Compare one resolved sample with a truth line's kind, function and range. */
static void compare(const vmp_analysis *a, const vmp_asample *s, char *line, score *sc)
{
    char *col[6] = {0};
    char want_range[64], got_range[64];
    const vmp_aframe *f = vmp_analysis_frame(a, s->leaf);
    const vmp_afunction *fn = f ? vmp_analysis_function(a, f->function) : NULL;
    int i;
    char *p = line;
    line[strcspn(line, "\n")] = '\0';
    for (i = 0; i < 6 && p; i++) {
        col[i] = p;
        p = strchr(p, '\t');
        if (p)
            *p++ = '\0';
    }
    sc->n++;
    if (!col[4] || !fn)
        return;
    snprintf(want_range, sizeof want_range, "%s", col[4]);
    if (f->has_range)
        snprintf(got_range, sizeof got_range, "%" PRIu32 "->%" PRIu32, f->bc_first, f->bc_last);
    else
        got_range[0] = '\0';
    if (strcmp(col[2], fn->kind) == 0 && strcmp(col[3], fn->name) == 0) {
        sc->fn_ok++;
        if (strcmp(want_range, got_range) == 0)
            sc->range_ok++;
    }
}

static int exact(const char *vmp, const char *tsv, score *sc, double *secs)
{
    vmp_reader *r = NULL;
    vmp_analysis *a = NULL;
    vmp_asample s;
    vmp_status st;
    char line[16384];
    FILE *t = fopen(tsv, "r");
    if (!t || vmp_reader_open_file(&r, vmp, NULL) != VMP_OK ||
        vmp_analysis_create(&a, NULL) != VMP_OK)
        return -1;
    while ((st = vmp_analysis_next(a, r, &s)) == VMP_OK) {
        if (!fgets(line, sizeof line, t))
            break;
        compare(a, &s, line, sc);
    }
    vmp_reader_close(r);
    vmp_analysis_free(a);
    fclose(t);
    (void)secs;
    return st == VMP_END ? 0 : -1;
}

/* Pass 1 loads every record but the samples; pass 2 resolves the samples at
 * the final generation. */
static int snapshot(const char *vmp, const char *tsv, score *sc)
{
    vmp_reader *r = NULL;
    vmp_analysis *a = NULL;
    vmp_analysis_options o = VMP_ANALYSIS_OPTIONS_INIT;
    vmp_record rec;
    vmp_asample s;
    vmp_status st;
    char line[16384];
    FILE *t = fopen(tsv, "r");
    o.flags = VMP_ANALYSIS_FIXED_GENERATION;
    o.fixed_generation = UINT64_MAX;
    if (!t || vmp_analysis_create(&a, &o) != VMP_OK || vmp_reader_open_file(&r, vmp, NULL))
        return -1;
    while ((st = vmp_reader_next(r, &rec)) == VMP_OK)
        if (rec.type != VMP_REC_SAMPLE && rec.type != VMP_REC_FAILED_SAMPLE)
            vmp_analysis_feed(a, &rec, NULL, NULL);
    vmp_reader_close(r);
    if (vmp_reader_open_file(&r, vmp, NULL) != VMP_OK)
        return -1;
    while ((st = vmp_reader_next(r, &rec)) == VMP_OK) {
        if (rec.type != VMP_REC_SAMPLE && rec.type != VMP_REC_FAILED_SAMPLE)
            continue;
        vmp_analysis_resolve_sample(a, &rec.u.sample, rec.type == VMP_REC_FAILED_SAMPLE, &s);
        if (!fgets(line, sizeof line, t))
            break;
        compare(a, &s, line, sc);
    }
    vmp_reader_close(r);
    vmp_analysis_free(a);
    fclose(t);
    return 0;
}

/* Throughput: records read only, then read + profile. */
static void throughput(const char *vmp, double *read_rate, double *profile_rate,
                       vmp_analysis_stats *stats)
{
    vmp_reader *r = NULL;
    vmp_record rec;
    vmp_profile *p = NULL;
    uint64_t n = 0;
    double t0;
    int rep;
    *read_rate = *profile_rate = 0;
    t0 = now_s();
    for (rep = 0; rep < 3; rep++) {
        if (vmp_reader_open_file(&r, vmp, NULL) != VMP_OK)
            return;
        while (vmp_reader_next(r, &rec) == VMP_OK)
            n += rec.type == VMP_REC_SAMPLE || rec.type == VMP_REC_FAILED_SAMPLE;
        vmp_reader_close(r);
    }
    *read_rate = (double)n / (now_s() - t0);
    n = 0;
    t0 = now_s();
    for (rep = 0; rep < 3; rep++) {
        if (vmp_reader_open_file(&r, vmp, NULL) != VMP_OK || vmp_profile_create(&p, NULL))
            return;
        vmp_profile_read(p, r);
        n += vmp_profile_get_totals(p)->samples;
        if (rep == 2)
            vmp_analysis_get_stats(vmp_profile_analysis(p), stats);
        vmp_profile_free(p);
        vmp_reader_close(r);
    }
    *profile_rate = (double)n / (now_s() - t0);
}

/* The analysis alone, without a reader: `n` sample records over `stacks`
 * distinct stacks of depth 8 (all code alive at one generation), fed through
 * vmp_profile_feed().  Returns samples per second. */
static double synthetic(uint64_t n, uint32_t stacks)
{
    vmp_profile *p = NULL;
    vmp_record r;
    uint64_t map[8], i, node = 0, leaves[4096];
    vmp_rec_header h;
    static const vmp_str kinds[] = {{"method", 6}};
    double t0;
    uint32_t k, d;
    if (stacks > 4096 || vmp_profile_create(&p, NULL) != VMP_OK)
        return 0;
    memset(&h, 0, sizeof h);
    h.code_kinds = kinds;
    h.n_code_kinds = 1;
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_HEADER;
    r.u.header = h;
    vmp_profile_feed(p, &r);
    for (i = 0; i < 4; i++) {
        map[2 * i] = i * 64;
        map[2 * i + 1] = i * 10 + 1;
    }
    for (i = 1; i <= 256; i++) {
        memset(&r, 0, sizeof r);
        r.type = VMP_REC_CODE_OBJECT;
        r.u.code_object.id = i;
        r.u.code_object.zone = 1;
        r.u.code_object.start = 0x100000 + i * 512;
        r.u.code_object.size = 512;
        r.u.code_object.pc_map = map;
        r.u.code_object.pc_map_len = 4;
        vmp_profile_feed(p, &r);
    }
    for (k = 0; k < stacks; k++) {
        uint64_t parent = 0;
        for (d = 0; d < 8; d++) {
            memset(&r, 0, sizeof r);
            r.type = VMP_REC_STACK_NODE;
            r.u.stack_node.id = ++node;
            r.u.stack_node.parent = parent;
            r.u.stack_node.pc = 0x100000 + (1 + (k * 7 + d * 13) % 256) * 512 + (k + d) % 500 + 1;
            vmp_profile_feed(p, &r);
            parent = node;
        }
        leaves[k] = node;
    }
    memset(&r, 0, sizeof r);
    r.type = VMP_REC_SAMPLE;
    r.u.sample.has_pc = 1;
    t0 = now_s();
    for (i = 0; i < n; i++) {
        uint64_t x = i * 0x9e3779b97f4a7c15ull;
        r.u.sample.stack = leaves[(x >> 40) % stacks];
        r.u.sample.thread = 1 + (x >> 20) % 4;
        r.u.sample.state = (uint32_t)((x >> 10) % 3);
        r.u.sample.time_ns = i * 1000;
        vmp_profile_feed(p, &r);
    }
    t0 = now_s() - t0;
    vmp_profile_free(p);
    return (double)n / t0;
}

static double pct(uint64_t a, uint64_t b)
{
    return b ? 100.0 * (double)a / (double)b : 0.0;
}

int main(int argc, char **argv)
{
    const char *simvm = argc > 1 ? argv[1] : VMP_SIMVM_PATH;
    const char *dir = argc > 2 ? argv[2] : ".";
    unsigned samples = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 200000;
    static const unsigned comps[] = {0, 10, 100};
    size_t i;

    printf("attribution accuracy vs. the simulated VM's truth (%u samples, seed 7)\n", samples);
    printf("exact: each sample resolved at its own generation; final snapshot: every sample\n"
           "resolved at the last generation only, as an end-of-run code listing would.\n"
           "analysis: samples/s of resolution + aggregation alone (read+report minus read).\n\n");
    printf("%11s %11s | %-17s | %-17s | %-35s | %s\n", "", "", "  exact (per gen)",
           " final snapshot", "  throughput (samples/s)", "memory");
    printf("%11s %11s | %8s %8s | %8s %8s | %11s %11s %11s | %s\n", "compactions", "generations",
           "function", "+range", "function", "+range", "read only", "read+report", "analysis",
           "tables");
    for (i = 0; i < sizeof comps / sizeof comps[0]; i++) {
        char vmp[1024], tsv[1024];
        score ex = {0, 0, 0}, sn = {0, 0, 0};
        double secs = 0, rr, pr, ar;
        vmp_analysis_stats stats;
        memset(&stats, 0, sizeof stats);
        snprintf(vmp, sizeof vmp, "%s/bench-attr-%u.vmp", dir, comps[i]);
        snprintf(tsv, sizeof tsv, "%s/bench-attr-%u.tsv", dir, comps[i]);
        if (run_simvm(simvm, vmp, tsv, samples, comps[i]) != 0) {
            fprintf(stderr, "bench_attribution: running %s failed\n", simvm);
            return 1;
        }
        if (exact(vmp, tsv, &ex, &secs) != 0 || snapshot(vmp, tsv, &sn) != 0) {
            fprintf(stderr, "bench_attribution: reading %s failed\n", vmp);
            return 1;
        }
        throughput(vmp, &rr, &pr, &stats);
        /* the analysis alone: what reading + profiling costs beyond reading */
        ar = rr > 0 && pr > 0 && 1.0 / pr > 1.0 / rr ? 1.0 / (1.0 / pr - 1.0 / rr) : 0.0;
        printf("%11u %11" PRIu64
               " | %7.2f%% %7.2f%% | %7.2f%% %7.2f%% | %11.3g %11.3g %11.3g | %" PRIu64 " KiB\n",
               comps[i], stats.generation, pct(ex.fn_ok, ex.n), pct(ex.range_ok, ex.n),
               pct(sn.fn_ok, sn.n), pct(sn.range_ok, sn.n), rr, pr, ar, stats.memory_bytes / 1024);
        remove(vmp);
        remove(tsv);
    }
    printf("\nanalysis alone, no reader (resolution + aggregation of in-memory records):\n");
    printf("  10M samples over 1000 distinct stacks of depth 8: %.3g samples/s\n",
           synthetic(10000000, 1000));
    return 0;
}
