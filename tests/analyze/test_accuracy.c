/* SPDX-License-Identifier: MIT
 *
 * test_accuracy.c - exact attribution against the simulated VM's ground truth
 * (spec.md §5 "Generations" R-GEN-3, "Resolution of a pc").
 *
 * usage: test_accuracy VMP_SIMVM WORKDIR
 * Runs vmp-simvm with several seeds, from no compaction to heavy compaction,
 * with random stacks and with repeating call paths (--stacks), and checks
 * that every sample, in file order, resolves to the truth's thread, state,
 * code kind, function and bytecode range, and that every return address of
 * its stack does too.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmp_analyze.h"
#include "vmp_test.h"

static const char *simvm;
static const char *workdir;
static int blocks; /* format 2.0 (SAMPLE_BLOCKs, times in microseconds); else 1.2 */

static int run_simvm(const char *out, const char *truth, unsigned seed, unsigned samples,
                     unsigned compactions, unsigned zone, unsigned depth, unsigned stacks)
{
    char s_seed[32], s_samples[32], s_comp[32], s_zone[32], s_depth[32], s_stacks[32];
    pid_t pid;
    int status;
    snprintf(s_seed, sizeof s_seed, "%u", seed);
    snprintf(s_samples, sizeof s_samples, "%u", samples);
    snprintf(s_comp, sizeof s_comp, "%u", compactions);
    snprintf(s_zone, sizeof s_zone, "%u", zone);
    snprintf(s_depth, sizeof s_depth, "%u", depth);
    snprintf(s_stacks, sizeof s_stacks, "%u", stacks);
    pid = fork();
    if (pid == 0) {
        char *argv[] = {
            (char *)simvm, "--seed",      s_seed,        "--samples", s_samples, "--compactions",
            s_comp,        "--zone-size", s_zone,        "--depth",   s_depth,   "-o",
            (char *)out,   "--truth",     (char *)truth, "--stacks",  s_stacks,  NULL,
            NULL,          NULL,          NULL};
        int k = stacks ? 17 : 15; /* 0: the default, random stacks */
        argv[k] = NULL;
        argv[k++] = "--format";
        argv[k++] = blocks ? "2.0" : "1.2";
        argv[k] = NULL;
        execv(simvm, argv);
        _exit(127);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Format "kind\tfunction\trange" of a frame. */
static void leaf_text(const vmp_analysis *a, uint32_t frame, char *out, size_t size)
{
    const vmp_aframe *f = vmp_analysis_frame(a, frame);
    const vmp_afunction *fn = f ? vmp_analysis_function(a, f->function) : NULL;
    if (!fn)
        snprintf(out, size, "unknown\t[unknown]\t");
    else if (f->has_range)
        snprintf(out, size, "%s\t%s\t%" PRIu32 "->%" PRIu32, fn->kind, fn->name, f->bc_first,
                 f->bc_last);
    else
        snprintf(out, size, "%s\t%s\t", fn->kind, fn->name);
}

/* Check one profile against its truth; returns the number of mismatches and
 * sets *n_out to the samples and *hits_out to the samples whose stack was
 * resolved by one lookup (the analysis's cache_hits). */
static uint64_t check_file(const char *vmp, const char *truth_path, uint64_t *n_out,
                           uint64_t *hits_out)
{
    vmp_reader *r = NULL;
    vmp_analysis *a = NULL;
    vmp_asample s;
    vmp_status st;
    FILE *truth = fopen(truth_path, "r");
    static char line[16384], got[16384];
    uint64_t n = 0, bad = 0;

    CHECK(truth != NULL);
    if (!truth)
        return 1;
    st = vmp_reader_open_file(&r, vmp, NULL);
    CHECK(st == VMP_OK);
    CHECK(vmp_analysis_create(&a, NULL) == VMP_OK);
    if (st != VMP_OK) {
        fprintf(stderr, "%s\n", r ? vmp_reader_errmsg(r) : "open failed");
        vmp_reader_close(r);
        vmp_analysis_free(a);
        fclose(truth);
        return 1;
    }
    while ((st = vmp_analysis_next(a, r, &s)) == VMP_OK) {
        size_t len;
        int k;
        len = (size_t)snprintf(got, sizeof got, "%s\t%s\t", vmp_analysis_thread_name(a, s.thread),
                               vmp_analysis_state_name(a, s.state));
        leaf_text(a, s.leaf, got + len, sizeof got - len);
        len = strlen(got);
        got[len++] = '\t';
        got[len] = '\0';
        if (s.stack) {
            const vmp_astack *node = vmp_analysis_stack(a, s.stack);
            for (k = 0; node && node->parent; k++) {
                node = vmp_analysis_stack(a, node->parent);
                if (k)
                    got[len++] = ';';
                len += vmp_analysis_format_frame(a, got + len, sizeof got - len, node->frame);
                if (len >= sizeof got - 256)
                    break;
            }
        }
        got[len] = '\0';
        if (!fgets(line, sizeof line, truth)) {
            fprintf(stderr, "%s: more samples than truth lines\n", vmp);
            bad++;
            break;
        }
        line[strcspn(line, "\n")] = '\0';
        if (strcmp(line, got) != 0) {
            if (bad < 5)
                fprintf(stderr,
                        "%s: sample %" PRIu64 " (gen %" PRIu64 "):\n  truth: %s\n  got:   %s\n",
                        vmp, n, s.generation, line, got);
            bad++;
        }
        n++;
    }
    CHECK(st == VMP_END);
    if (st < 0)
        fprintf(stderr, "%s\n", vmp_reader_errmsg(r));
    if (fgets(line, sizeof line, truth)) {
        fprintf(stderr, "%s: fewer samples than truth lines\n", vmp);
        bad++;
    }
    {
        vmp_analysis_stats stats;
        vmp_analysis_get_stats(a, &stats);
        fprintf(stderr,
                "%s: %" PRIu64 " samples, generation %" PRIu64 ", %" PRIu64
                " code objects, %" PRIu64 " cache hits, %" PRIu64 " misses, %" PRIu64
                " reused at a newer generation\n",
                vmp, n, stats.generation, stats.code_objects, stats.cache_hits, stats.cache_misses,
                stats.generation_reuses);
        *hits_out = stats.cache_hits;
    }
    vmp_reader_close(r);
    vmp_analysis_free(a);
    fclose(truth);
    *n_out = n;
    return bad;
}

static void run_case(unsigned seed, unsigned samples, unsigned compactions, unsigned zone,
                     unsigned depth, unsigned stacks)
{
    char vmp[1024], tsv[1024];
    uint64_t n = 0, hits = 0, bad;
    snprintf(vmp, sizeof vmp, "%s/acc-%u-%u-%u.vmp", workdir, seed, compactions, stacks);
    snprintf(tsv, sizeof tsv, "%s/acc-%u-%u-%u.tsv", workdir, seed, compactions, stacks);
    CHECK(run_simvm(vmp, tsv, seed, samples, compactions, zone, depth, stacks) == 0);
    bad = check_file(vmp, tsv, &n, &hits);
    CHECK_EQ_U64(n, samples);
    CHECK_EQ_U64(bad, 0);
    /* repeating call paths: many samples reuse a stack already resolved */
    if (stacks)
        CHECK(hits >= n / 3);
    remove(vmp);
    remove(tsv);
}

/* spec R-GEN-3: without compaction every sample resolves exactly. */
static void test_accuracy_without_compaction(void)
{
    run_case(1, 5000, 0, 262144, 8, 0);
}

/* spec R-GEN-3: code that moved or was freed still resolves to what was there
 * when the sample was taken, across many compactions and seeds. */
static void test_accuracy_with_heavy_compaction(void)
{
    run_case(2, 20000, 100, 65536, 12, 0);
    run_case(3, 20000, 40, 131072, 8, 0);
    run_case(4, 10000, 200, 32768, 4, 0);
    run_case(5, 8000, 10, 262144, 32, 0);
}

/* spec R-GEN-3 with stacks that repeat, as in a real program's profile: the
 * same call paths run before and after compactions moved, freed and compiled
 * again their methods, so one stack node's address means different code in
 * different generations, and every sample still resolves exactly. */
static void test_accuracy_with_repeating_stacks(void)
{
    run_case(6, 30000, 60, 65536, 12, 300);
}

/* spec R-BLK-1, R-BLK-3: the same samples in SAMPLE_BLOCKs (times in
 * microseconds, pcs stored only where they are not the innermost node's)
 * resolve exactly as well, compactions and repeating stacks included. */
static void test_accuracy_with_sample_blocks(void)
{
    blocks = 1;
    run_case(2, 20000, 100, 65536, 12, 0);
    run_case(6, 30000, 60, 65536, 12, 300);
    blocks = 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_accuracy VMP_SIMVM WORKDIR\n");
        return 2;
    }
    simvm = argv[1];
    workdir = argv[2];
    VMP_TEST_RUN(test_accuracy_without_compaction);
    VMP_TEST_RUN(test_accuracy_with_heavy_compaction);
    VMP_TEST_RUN(test_accuracy_with_repeating_stacks);
    VMP_TEST_RUN(test_accuracy_with_sample_blocks);
    VMP_TEST_EXIT();
}
