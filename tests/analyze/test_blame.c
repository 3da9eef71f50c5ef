/* SPDX-License-Identifier: MIT
 *
 * test_blame.c - the "time blamed on JIT units" matrix (spec.md §5.12 key 8,
 * blame) against a count made without the analysis.
 *
 * usage: test_blame VMP_SIMVM WORKDIR
 * Runs vmp-simvm --blame (random stacks, then repeating call paths with
 * compactions) and counts, independently of the analysis: for every sample
 * whose truth line says its pc was not in generated code (kind "C" or
 * "unknown"), the name and kind of the code object its raw `blame` names
 * (from the CODE_OBJECT and FUNCTION records, whatever happened to the code
 * since), or "[no blame]", per VM state.  The profile's blame cells, resolved
 * with vmp_analysis_code_function(), must give the same matrix, and it must
 * sum to the samples not in generated code.
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

static int run_simvm(const char *out, const char *truth, const char *seed, const char *stacks)
{
    pid_t pid = fork();
    int status;
    if (pid == 0) {
        char *argv[] = {(char *)simvm, "--blame",       "--seed",   (char *)seed,   "--samples",
                        "4000",        "--compactions", "6",        "-o",           (char *)out,
                        "--truth",     (char *)truth,   "--stacks", (char *)stacks, NULL};
        if (!stacks)
            argv[12] = NULL;
        execv(simvm, argv);
        _exit(127);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* ---- a small (key, state) -> weight table ------------------------------------ */

typedef struct cell {
    char key[200]; /* "name [kind]" or "[no blame]" */
    uint32_t state;
    uint64_t w;
} cell;

typedef struct table {
    cell *c;
    size_t n, cap;
} table;

static void table_add(table *t, const char *key, uint32_t state, uint64_t w)
{
    size_t i;
    for (i = 0; i < t->n; i++)
        if (t->c[i].state == state && strcmp(t->c[i].key, key) == 0) {
            t->c[i].w += w;
            return;
        }
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 64;
        t->c = realloc(t->c, t->cap * sizeof *t->c);
        if (!t->c)
            abort();
    }
    snprintf(t->c[t->n].key, sizeof t->c[t->n].key, "%s", key);
    t->c[t->n].state = state;
    t->c[t->n].w = w;
    t->n++;
}

static uint64_t table_get(const table *t, const char *key, uint32_t state)
{
    size_t i;
    for (i = 0; i < t->n; i++)
        if (t->c[i].state == state && strcmp(t->c[i].key, key) == 0)
            return t->c[i].w;
    return 0;
}

/* ---- names from the raw records ------------------------------------------------ */

typedef struct named {
    uint64_t id;
    char name[160];
    uint64_t kind, function; /* code objects only */
} named;

typedef struct names {
    named *v;
    size_t n, cap;
} names;

static named *names_add(names *ns, uint64_t id)
{
    if (ns->n == ns->cap) {
        ns->cap = ns->cap ? 2 * ns->cap : 256;
        ns->v = realloc(ns->v, ns->cap * sizeof *ns->v);
        if (!ns->v)
            abort();
    }
    memset(&ns->v[ns->n], 0, sizeof ns->v[ns->n]);
    ns->v[ns->n].id = id;
    return &ns->v[ns->n++];
}

static const named *names_find(const names *ns, uint64_t id)
{
    size_t i;
    for (i = 0; i < ns->n; i++)
        if (ns->v[i].id == id)
            return &ns->v[i];
    return NULL;
}

/* Count the matrix from the raw records and the truth; returns the number
 * of samples that carried a blame. */
static uint64_t count_independently(const char *vmp, const char *truth_path, table *want)
{
    vmp_reader *r = NULL;
    vmp_record rec;
    FILE *truth = fopen(truth_path, "r");
    names fns = {0}, codes = {0};
    char kinds[8][32], line[8192];
    char states[8][32];
    size_t n_kinds = 0, n_states = 0, i;
    uint64_t blamed = 0;
    CHECK(truth != NULL);
    CHECK(vmp_reader_open_file(&r, vmp, NULL) == VMP_OK);
    if (!truth || !r) {
        vmp_reader_close(r);
        return 0;
    }
    while (vmp_reader_next(r, &rec) == VMP_OK) {
        if (rec.type == VMP_REC_HEADER) {
            const vmp_rec_header *h = &rec.u.header;
            for (i = 0; i < h->n_code_kinds && i < 8; i++, n_kinds++)
                snprintf(kinds[i], sizeof kinds[i], "%.*s", (int)h->code_kinds[i].len,
                         h->code_kinds[i].s);
            for (i = 0; i < h->n_states && i < 8; i++, n_states++)
                snprintf(states[i], sizeof states[i], "%.*s", (int)h->states[i].len,
                         h->states[i].s);
        } else if (rec.type == VMP_REC_FUNCTION) {
            const vmp_rec_function *f = &rec.u.function;
            named *n = names_add(&fns, f->id);
            if (f->scope.len)
                snprintf(n->name, sizeof n->name, "%.*s>>%.*s", (int)f->scope.len, f->scope.s,
                         (int)f->name.len, f->name.s);
            else
                snprintf(n->name, sizeof n->name, "%.*s", (int)f->name.len, f->name.s);
        } else if (rec.type == VMP_REC_CODE_OBJECT) {
            const vmp_rec_code_object *c = &rec.u.code_object;
            named *n = names_add(&codes, c->id);
            snprintf(n->name, sizeof n->name, "%.*s", (int)c->name.len, c->name.s);
            n->kind = c->kind;
            n->function = c->function;
        } else if (rec.type == VMP_REC_SAMPLE || rec.type == VMP_REC_FAILED_SAMPLE) {
            const vmp_rec_sample *s = &rec.u.sample;
            char *state, *kind, *save = NULL;
            char key[200];
            if (!fgets(line, sizeof line, truth)) {
                CHECK(!"truth shorter than the samples");
                break;
            }
            strtok_r(line, "\t", &save); /* thread */
            state = strtok_r(NULL, "\t", &save);
            kind = strtok_r(NULL, "\t", &save);
            if (!state || !kind) {
                CHECK(!"bad truth line");
                break;
            }
            CHECK(s->state < n_states && strcmp(states[s->state], state) == 0);
            if (s->blame) {
                blamed += s->weight;
                /* the simulated VM blames in these states only */
                CHECK(strcmp(state, "interpreter") == 0 || strcmp(state, "gc") == 0 ||
                      strcmp(state, "primitive") == 0);
            }
            if (strcmp(kind, "C") != 0 && strcmp(kind, "unknown") != 0)
                continue; /* generated code: not in the matrix */
            if (!s->blame) {
                snprintf(key, sizeof key, "[no blame]");
            } else {
                const named *c = names_find(&codes, s->blame);
                const named *f = c && c->function ? names_find(&fns, c->function) : NULL;
                CHECK(c != NULL);
                if (!c)
                    continue;
                snprintf(key, sizeof key, "%s [%s]", f ? f->name : c->name,
                         c->kind < n_kinds ? kinds[c->kind] : "?");
            }
            table_add(want, key, (uint32_t)s->state, s->weight);
        }
    }
    CHECK(!fgets(line, sizeof line, truth)); /* no truth lines left over */
    fclose(truth);
    vmp_reader_close(r);
    free(fns.v);
    free(codes.v);
    return blamed;
}

static void check_seed(const char *seed, const char *stacks)
{
    char vmp[512], truth[512], key[200];
    table want = {0}, got = {0};
    vmp_profile *p = NULL;
    vmp_reader *r = NULL;
    const vmp_profile_blame *b;
    const vmp_profile_totals *t;
    size_t n, i;
    uint64_t blamed, sum = 0, no_blame = 0;

    snprintf(vmp, sizeof vmp, "%s/blame-%s.vmp", workdir, seed);
    snprintf(truth, sizeof truth, "%s/blame-%s.tsv", workdir, seed);
    CHECK(run_simvm(vmp, truth, seed, stacks) == 0);
    blamed = count_independently(vmp, truth, &want);
    CHECK(blamed > 0);

    CHECK(vmp_profile_create(&p, NULL) == VMP_OK);
    CHECK(vmp_reader_open_file(&r, vmp, NULL) == VMP_OK);
    if (!p || !r) {
        vmp_reader_close(r);
        vmp_profile_free(p);
        free(want.c);
        return;
    }
    CHECK(vmp_profile_read(p, r) == VMP_OK);
    CHECK_EQ_U64(vmp_profile_blamed_samples(p), blamed);
    t = vmp_profile_get_totals(p);
    b = vmp_profile_blame_weights(p, &n);
    for (i = 0; i < n; i++) {
        if (!b[i].code) {
            snprintf(key, sizeof key, "[no blame]");
            no_blame += b[i].weight;
        } else {
            uint32_t id = vmp_analysis_code_function(vmp_profile_analysis(p), b[i].code);
            const vmp_afunction *fn = vmp_analysis_function(vmp_profile_analysis(p), id);
            CHECK(fn != NULL);
            if (!fn)
                continue;
            snprintf(key, sizeof key, "%s [%s]", fn->name, fn->kind);
        }
        table_add(&got, key, b[i].state, b[i].weight);
        sum += b[i].weight;
    }
    CHECK_EQ_U64(sum, t->samples - t->generated);
    CHECK(no_blame > 0 && no_blame < sum);
    CHECK_EQ_U64(got.n, want.n);
    for (i = 0; i < want.n; i++) {
        uint64_t g = table_get(&got, want.c[i].key, want.c[i].state);
        if (g != want.c[i].w)
            fprintf(stderr, "seed %s: %s, state %" PRIu32 ": %" PRIu64 " != %" PRIu64 "\n", seed,
                    want.c[i].key, want.c[i].state, g, want.c[i].w);
        CHECK_EQ_U64(g, want.c[i].w);
    }
    vmp_reader_close(r);
    vmp_profile_free(p);
    free(want.c);
    free(got.c);
}

static void test_random_stacks(void)
{
    check_seed("3", NULL);
}

static void test_call_paths(void)
{
    check_seed("8", "300");
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_blame VMP_SIMVM WORKDIR\n");
        return 2;
    }
    simvm = argv[1];
    workdir = argv[2];
    VMP_TEST_RUN(test_random_stacks);
    VMP_TEST_RUN(test_call_paths);
    VMP_TEST_EXIT();
}
