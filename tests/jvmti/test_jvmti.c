/* SPDX-License-Identifier: MIT
 *
 * test_jvmti.c - runs the Java demo under the HotSpot agent and checks the
 * profile it writes (spec.md §5: END, samples, functions, code objects and
 * their generations, R-GEN-3 resolution).  Every profile must also pass the
 * validator (vmp_validate(): every rule of spec.md it checks).
 *
 * usage: test_jvmti --java JAVA --agent LIB --jar JAR --source DEMO.java
 *                   --workdir DIR [--vmp VMP] CASE
 * CASE is one of:
 *   demo     the whole demo; the file reads to its END record, samples > 0
 *   hot      Demo.hotLoop is the most sampled function and its loop's
 *            bytecode range holds >= 90% of its samples
 *   resolve  the method resolved from the machine pc through the code objects
 *            at the sample's generation equals AsyncGetCallTrace's top frame in
 *            >= 99% of the samples that have both (wall mode, for more
 *            samples; the demo case checks the same in cpu mode)
 *   churn    short-lived hidden classes: CODE_FREE records, several
 *            generations, and still >= 99% agreement (wall mode, which
 *            takes more samples per second than cpu mode's tick-bound timers)
 *   rate     samples per second of the busy thread's CPU time are >= 95% of
 *            the requested rate, at 1ms and at 100us
 *   wall     wall-clock mode: a busy thread gets >= 90% of the requested rate
 *   exit     System.exit(3) from a thread that is not main: exit status 3
 *            and a file that ends with an END record
 *   record   the same under `vmp record -o FILE --` (needs --vmp): the
 *            command's exit status, the profile, the summary line
 *   kill     a recording killed with SIGKILL midway: its complete chunks
 *            break no rule (only truncated), and resolve alone: no function
 *            or code object without its record
 *   threads  every thread of the process (the demo's threads mode, truth
 *            from /proc): sampled CPU >= 85% of the process's; G1's GC
 *            threads by name with G1 functions of libjvm; the busy thread
 *            within 15% of its CPU time; a native thread started from JNI
 *            (--native-lib) and short Java threads sampled and named; with
 *            threads=java, none of the JVM's own threads
 *   metadata the file's fixed part (a recording with no sample due) is
 *            under 100 KB; metadata=used (the default) is smaller than
 *            metadata=all; leaves metadata-all.vmp for the replay test
 *            (tests/writer/replay_lazy.cmake: the same stream written
 *            with and without the lazy options resolves alike)
 * Figures are printed to stdout with labels.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vmp_analyze.h"
#include "vmp_format.h"
#include "vmp_reader.h"
#include "vmp_test.h"
#include "vmp_validate.h"

static const char *java_path, *agent_path, *jar_path, *source_path, *work_dir, *vmp_path;
static const char *native_lib;

/* A sanitizer build's agent needs the sanitizer runtimes in java (named by
 * VMP_TEST_JAVA_PRELOAD); HotSpot handles SIGSEGV itself and never frees some
 * memory. */
static char preload_env[4096];

/* When set, run_demo_with() writes stdout and stderr to this path plus
 * ".stdout" / ".stderr" instead of next to the profile. */
static const char *log_base;
static char java_asan_options[] = "ASAN_OPTIONS=detect_leaks=0:handle_segv=0:handle_sigbus=0:"
                                  "handle_sigfpe=0:allow_user_segv_handler=1:use_sigaltstack=0";

/* ---- Running java ----------------------------------------------------------- */

/* Run argv[0] with stdout and stderr in `out_path` and `err_path`.
 * @return the exit status, or -1 (printed) if it did not exit normally. */
static int run_cmd(const char *const *argv, const char *out_path, const char *err_path)
{
    int status = 0;
    pid_t pid;

    fflush(stdout);
    pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(126);
        if (preload_env[0] != '\0' && strcmp(argv[0], java_path) == 0) {
            putenv(preload_env);
            putenv(java_asan_options);
        }
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return -1;
    }
    if (WIFEXITED(status)) {
        printf("exit status %d\n", WEXITSTATUS(status));
        return WEXITSTATUS(status);
    }
    printf("killed by signal %d\n", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return -1;
}

/* Run java with the agent (options `agent_opts`, the output file appended)
 * and `extra` JVM flags, then the demo with `mode` and `scale`.  stdout and
 * stderr go to files next to the profile.  With `vmp` set, java runs under
 * `vmp record -o PROFILE` instead of with -agentpath.  @return the exit
 * status, or -1. */
static int run_demo_with(const char *vmp, const char *profile, const char *agent_opts,
                         const char *const *extra, const char *mode, const char *scale)
{
    char agent_arg[8192], out_path[4096], err_path[4096];
    const char *argv[40];
    int argc = 0, i;

    snprintf(agent_arg, sizeof agent_arg, "-agentpath:%s=file=%s%s%s", agent_path, profile,
             agent_opts[0] ? "," : "", agent_opts);
    const char *base = log_base ? log_base : profile;
    if (strlen(base) + sizeof ".stdout" > sizeof out_path) {
        fprintf(stderr, "test_jvmti: path too long: %s\n", base);
        return -1;
    }
    snprintf(out_path, sizeof out_path, "%s.stdout", base);
    snprintf(err_path, sizeof err_path, "%s.stderr", base);
    if (vmp != NULL) {
        argv[argc++] = vmp;
        argv[argc++] = "record";
        argv[argc++] = "--agent";
        argv[argc++] = agent_path;
        argv[argc++] = "-o";
        argv[argc++] = profile;
        argv[argc++] = "--label"; /* escaped to the agent, decoded in the header */
        argv[argc++] = "case=record, with a space:1=2%";
        argv[argc++] = "--";
        if (preload_env[0] != '\0') { /* the runtimes go to java, not to vmp */
            argv[argc++] = "/usr/bin/env";
            argv[argc++] = preload_env;
            argv[argc++] = java_asan_options;
        }
    }
    argv[argc++] = java_path;
    argv[argc++] = "-XX:+UnlockDiagnosticVMOptions";
    argv[argc++] = "-XX:+DebugNonSafepoints";
    argv[argc++] = "-Xmx256m";
    for (i = 0; extra != NULL && extra[i] != NULL && argc < 30; i++)
        argv[argc++] = extra[i];
    if (vmp == NULL)
        argv[argc++] = agent_arg;
    argv[argc++] = "-jar";
    argv[argc++] = jar_path;
    argv[argc++] = mode;
    argv[argc++] = scale;
    argv[argc] = NULL;

    unlink(profile);
    printf("  %sjava %s %s (%s): ", vmp ? "vmp record -- " : "", mode, scale, agent_opts);
    return run_cmd(argv, out_path, err_path);
}

static int run_demo(const char *profile, const char *agent_opts, const char *const *extra,
                    const char *mode, const char *scale)
{
    return run_demo_with(NULL, profile, agent_opts, extra, mode, scale);
}

/* Read a whole small text file (malloc'd, NUL-terminated) or NULL. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;

    if (f == NULL)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)n + 1);
        if (buf != NULL) {
            size_t got = fread(buf, 1, (size_t)n, f);
            buf[got] = '\0';
        }
    }
    fclose(f);
    return buf;
}

/* The number after "KEY=" in the demo's standard output for `profile` (the
 * driver keeps it in PROFILE.stdout), or 0. */
static double demo_number(const char *profile, const char *key)
{
    char outp[4200];
    char *out, *at;
    double v = 0;
    size_t n = strlen(key);
    snprintf(outp, sizeof outp, "%s.stdout", profile);
    out = slurp(outp);
    for (at = out; at && (at = strstr(at, key)) != NULL; at += n) {
        if (at[n] == '=' && (at == out || at[-1] == ' ' || at[-1] == '\n')) {
            v = strtod(at + n + 1, NULL);
            break;
        }
    }
    free(out);
    return v;
}

/* ---- The profile in memory --------------------------------------------------- */

typedef struct fn_info {
    uint64_t id;
    char *name, *scope;
    uint64_t *lines; /* pairs */
    size_t n_lines;
    uint64_t bytecode_size;
} fn_info;

typedef struct code_info {
    uint64_t id, kind, function, start, size, gen_from, gen_freed;
    uint64_t *inl_off;  /* n_inl offsets */
    uint64_t *inl_leaf; /* n_inl innermost function ids */
    size_t n_inl;
} code_info;

typedef struct node_info {
    uint64_t parent, function, bcpc;
    int is_function, has_bcpc;
} node_info;

typedef struct sample_info {
    uint64_t thread, state, pc, generation, stack, weight, reason;
    int has_pc, failed;
} sample_info;

typedef struct thread_info {
    uint64_t id;
    char *name;
} thread_info;

typedef struct profile {
    vmp_status status; /* VMP_END when the file read to its end */
    char errmsg[512];
    char *vm_name;
    char *sampler;    /* the header label "sampler", or NULL */
    char *case_label; /* the header label "case" (vmp record --label), or NULL */
    char **code_kinds;
    char **reasons;
    size_t n_reasons;
    size_t n_code_kinds;
    int seen_end;
    vmp_rec_end end;
    fn_info *fns;
    size_t n_fns, cap_fns;
    code_info *codes;
    size_t n_codes, cap_codes;
    node_info *nodes; /* indexed by node id */
    size_t cap_nodes;
    sample_info *samples;
    size_t n_samples, cap_samples;
    thread_info *threads;
    size_t n_threads, cap_threads;
    uint64_t n_free, n_gc_events, max_generation;
} profile;

#define GROW(arr, n, cap)                                  \
    do {                                                   \
        if ((n) == (cap)) {                                \
            size_t c_ = (cap) ? (cap)*2 : 64;              \
            void *p_ = realloc((arr), c_ * sizeof *(arr)); \
            if (p_ == NULL) {                              \
                fprintf(stderr, "out of memory\n");        \
                exit(2);                                   \
            }                                              \
            (arr) = p_;                                    \
            (cap) = c_;                                    \
        }                                                  \
    } while (0)

static char *dupstr(const vmp_str *s)
{
    char *p = malloc(s->len + 1);
    if (p == NULL)
        exit(2);
    memcpy(p, s->s, s->len);
    p[s->len] = '\0';
    return p;
}

/* The innermost function of each inline record of code `c`. */
static void set_inlines(code_info *c, const vmp_rec_inline *in, size_t n)
{
    free(c->inl_off);
    free(c->inl_leaf);
    c->n_inl = n;
    c->inl_off = malloc((n + 1) * sizeof *c->inl_off);
    c->inl_leaf = malloc((n + 1) * sizeof *c->inl_leaf);
    for (size_t i = 0; i < n; i++) {
        c->inl_off[i] = in[i].mcpc_offset;
        c->inl_leaf[i] = in[i].depth > 0 ? in[i].frames[0] : 0;
    }
}

static void add_record(profile *p, const vmp_record *r)
{
    size_t i;

    switch (r->type) {
    case VMP_REC_HEADER:
        p->vm_name = dupstr(&r->u.header.vm_name);
        for (i = 0; i < r->u.header.n_labels; i++)
            if (r->u.header.labels[2 * i].len == 7 &&
                memcmp(r->u.header.labels[2 * i].s, "sampler", 7) == 0)
                p->sampler = dupstr(&r->u.header.labels[2 * i + 1]);
            else if (r->u.header.labels[2 * i].len == 4 &&
                     memcmp(r->u.header.labels[2 * i].s, "case", 4) == 0)
                p->case_label = dupstr(&r->u.header.labels[2 * i + 1]);
        p->n_code_kinds = r->u.header.n_code_kinds;
        p->code_kinds = calloc(p->n_code_kinds + 1, sizeof *p->code_kinds);
        for (i = 0; i < p->n_code_kinds; i++)
            p->code_kinds[i] = dupstr(&r->u.header.code_kinds[i]);
        p->n_reasons = r->u.header.n_failure_reasons;
        p->reasons = calloc(p->n_reasons + 1, sizeof *p->reasons);
        for (i = 0; i < p->n_reasons; i++)
            p->reasons[i] = dupstr(&r->u.header.failure_reasons[i]);
        break;
    case VMP_REC_END:
        p->seen_end = 1;
        p->end = r->u.end;
        break;
    case VMP_REC_FUNCTION: {
        fn_info *f;
        GROW(p->fns, p->n_fns, p->cap_fns);
        f = &p->fns[p->n_fns++];
        f->id = r->u.function.id;
        f->name = dupstr(&r->u.function.name);
        f->scope = dupstr(&r->u.function.scope);
        f->n_lines = r->u.function.n_lines;
        f->lines = malloc((f->n_lines * 2 + 1) * sizeof *f->lines);
        if (f->n_lines > 0)
            memcpy(f->lines, r->u.function.lines, f->n_lines * 2 * sizeof *f->lines);
        f->bytecode_size = r->u.function.bytecode_size;
        break;
    }
    case VMP_REC_CODE_OBJECT: {
        const vmp_rec_code_object *o = &r->u.code_object;
        code_info *c;
        GROW(p->codes, p->n_codes, p->cap_codes);
        c = &p->codes[p->n_codes++];
        memset(c, 0, sizeof *c);
        c->id = o->id;
        c->kind = o->kind;
        c->function = o->function;
        c->start = o->start;
        c->size = o->size;
        c->gen_from = o->generation;
        c->gen_freed = UINT64_MAX;
        set_inlines(c, o->inlines, o->n_inlines);
        break;
    }
    case VMP_REC_CODE_MAP: /* spec R-CODE-3: the inline records come apart */
        for (i = p->n_codes; i-- > 0;) {
            if (p->codes[i].id == r->u.code_map.id) {
                if (p->codes[i].n_inl == 0)
                    set_inlines(&p->codes[i], r->u.code_map.inlines, r->u.code_map.n_inlines);
                break;
            }
        }
        break;
    case VMP_REC_CODE_FREE:
        p->n_free++;
        if (r->u.code_free.generation > p->max_generation)
            p->max_generation = r->u.code_free.generation;
        for (i = p->n_codes; i-- > 0;) {
            if (p->codes[i].id == r->u.code_free.id) {
                p->codes[i].gen_freed = r->u.code_free.generation;
                break;
            }
        }
        break;
    case VMP_REC_STACK_NODE: {
        uint64_t id = r->u.stack_node.id;
        if (id >= p->cap_nodes) {
            size_t cap = p->cap_nodes ? p->cap_nodes : 1024;
            while (cap <= id)
                cap *= 2;
            p->nodes = realloc(p->nodes, cap * sizeof *p->nodes);
            memset(p->nodes + p->cap_nodes, 0, (cap - p->cap_nodes) * sizeof *p->nodes);
            p->cap_nodes = cap;
        }
        p->nodes[id].parent = r->u.stack_node.parent;
        p->nodes[id].is_function = r->u.stack_node.is_function;
        p->nodes[id].function = r->u.stack_node.function;
        p->nodes[id].has_bcpc = r->u.stack_node.has_bcpc;
        p->nodes[id].bcpc = r->u.stack_node.bcpc;
        break;
    }
    case VMP_REC_SAMPLE:
    case VMP_REC_FAILED_SAMPLE: {
        sample_info *s;
        GROW(p->samples, p->n_samples, p->cap_samples);
        s = &p->samples[p->n_samples++];
        s->thread = r->u.sample.thread;
        s->state = r->u.sample.state;
        s->pc = r->u.sample.pc;
        s->has_pc = r->u.sample.has_pc;
        s->generation = r->u.sample.generation;
        s->stack = r->type == VMP_REC_SAMPLE ? r->u.sample.stack : 0;
        s->weight = r->u.sample.weight ? r->u.sample.weight : 1;
        s->reason = r->u.sample.reason;
        s->failed = r->type == VMP_REC_FAILED_SAMPLE;
        break;
    }
    case VMP_REC_THREAD: {
        thread_info *t;
        GROW(p->threads, p->n_threads, p->cap_threads);
        t = &p->threads[p->n_threads++];
        t->id = r->u.thread.id;
        t->name = dupstr(&r->u.thread.name);
        break;
    }
    case VMP_REC_EVENT:
        if (r->u.event.kind == 0) /* "gc" is the agent's event kind 0 */
            p->n_gc_events++;
        break;
    default:
        break;
    }
}

static void load(profile *p, const char *path)
{
    vmp_reader *r = NULL;
    vmp_record rec;

    memset(p, 0, sizeof *p);
    p->status = vmp_reader_open_file(&r, path, NULL);
    if (p->status == VMP_OK) {
        while ((p->status = vmp_reader_next(r, &rec)) == VMP_OK)
            add_record(p, &rec);
    }
    if (r != NULL)
        snprintf(p->errmsg, sizeof p->errmsg, "%s", vmp_reader_errmsg(r));
    vmp_reader_close(r);
}

static void profile_free(profile *p)
{
    size_t i;

    free(p->vm_name);
    free(p->sampler);
    free(p->case_label);
    for (i = 0; i < p->n_code_kinds; i++)
        free(p->code_kinds[i]);
    free(p->code_kinds);
    for (i = 0; i < p->n_reasons; i++)
        free(p->reasons[i]);
    free(p->reasons);
    for (i = 0; i < p->n_fns; i++) {
        free(p->fns[i].name);
        free(p->fns[i].scope);
        free(p->fns[i].lines);
    }
    free(p->fns);
    for (i = 0; i < p->n_codes; i++) {
        free(p->codes[i].inl_off);
        free(p->codes[i].inl_leaf);
    }
    free(p->codes);
    free(p->nodes);
    free(p->samples);
    for (i = 0; i < p->n_threads; i++)
        free(p->threads[i].name);
    free(p->threads);
    memset(p, 0, sizeof *p);
}

static const fn_info *find_fn(const profile *p, uint64_t id)
{
    size_t i;
    for (i = 0; i < p->n_fns; i++) {
        if (p->fns[i].id == id)
            return &p->fns[i];
    }
    return NULL;
}

static const node_info *leaf_node(const profile *p, const sample_info *s)
{
    if (s->failed || s->stack == 0 || s->stack >= p->cap_nodes)
        return NULL;
    return &p->nodes[s->stack];
}

/* The code object covering `pc` at generation `gen` (spec R-GEN-3). */
static const code_info *code_at(const profile *p, uint64_t pc, uint64_t gen)
{
    size_t i;
    for (i = 0; i < p->n_codes; i++) {
        const code_info *c = &p->codes[i];
        if (c->gen_from <= gen && gen < c->gen_freed && pc >= c->start && pc - c->start < c->size)
            return c;
    }
    return NULL;
}

/* The innermost function executing at `pc` in `c`. */
static uint64_t function_at(const code_info *c, uint64_t pc)
{
    uint64_t off = pc - c->start, fn = c->function;
    size_t i;
    for (i = 0; i < c->n_inl && c->inl_off[i] <= off; i++)
        fn = c->inl_leaf[i];
    return fn;
}

static int is_kind(const profile *p, const code_info *c, const char *name)
{
    return c->kind < p->n_code_kinds && strcmp(p->code_kinds[c->kind], name) == 0;
}

/* Every rule of the format the validator checks holds for the file. */
static void check_valid(const char *path)
{
    vmp_reader *r = NULL;
    vmp_validate_report rep;

    memset(&rep, 0, sizeof rep);
    if (vmp_reader_open_file(&r, path, NULL) == VMP_OK)
        vmp_validate(&rep, r);
    else
        rep.status = VMP_ERR_IO;
    if (rep.status != VMP_OK)
        printf("  validate %s: %s %s %s\n", path, vmp_status_str(rep.status),
               rep.rule ? rep.rule : "", rep.message);
    CHECK(rep.status == VMP_OK);
    CHECK(rep.complete);
    vmp_reader_close(r);
}

static void check_readable(const profile *p, const char *path)
{
    if (p->status != VMP_END)
        printf("  reading %s: %s (%s)\n", path, vmp_status_str(p->status), p->errmsg);
    CHECK(p->status == VMP_END);
    CHECK(p->seen_end);
    CHECK(p->vm_name != NULL && strcmp(p->vm_name, "HotSpot") == 0);
    CHECK(p->n_samples > 0);
    CHECK_EQ_U64(p->end.samples, p->n_samples);
    check_valid(path);
}

static void profile_path(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s.vmp", work_dir, name);
}

/* ---- Cases ------------------------------------------------------------------- */

static void check_agreement(const profile *p, const char *label, uint64_t min_samples);

static void case_demo(void)
{
    char path[4096], errp[4200];
    char *err;
    profile p;
    size_t i, k, failed = 0, nmethods = 0, main_thread = 0, churn_threads = 0;

    profile_path(path, sizeof path, "demo");
    CHECK_EQ_U64(run_demo(path, "interval=1ms", NULL, "all", "1"), 0);
    load(&p, path);
    check_readable(&p, path);
    for (i = 0; i < p.n_samples; i++)
        failed += p.samples[i].failed;
    for (i = 0; i < p.n_codes; i++)
        nmethods += is_kind(&p, &p.codes[i], "nmethod");
    for (i = 0; i < p.n_threads; i++) {
        main_thread += strcmp(p.threads[i].name, "main") == 0;
        churn_threads += strncmp(p.threads[i].name, "vmp-churn-", 10) == 0;
    }
    printf("  demo: %zu samples (%zu failed), %zu functions, %zu code objects (%zu nmethods), "
           "%" PRIu64 " code frees, %" PRIu64 " GC events, %zu thread records\n",
           p.n_samples, failed, p.n_fns, p.n_codes, nmethods, p.n_free, p.n_gc_events, p.n_threads);
    for (k = 0; k < p.n_reasons; k++) {
        uint64_t n = 0;
        for (i = 0; i < p.n_samples; i++)
            n += p.samples[i].failed && p.samples[i].reason == k;
        if (n > 0)
            printf("    failed samples, %s: %" PRIu64 "\n", p.reasons[k], n);
    }
    CHECK(p.n_fns > 100);
    CHECK(nmethods > 10);
    printf("  demo: %zu THREAD records of short-lived vmp-churn-* threads\n", churn_threads);
    CHECK(main_thread > 0);
    CHECK(churn_threads >= 32); /* started and ended: two records each */
    CHECK(p.n_gc_events > 0);
    CHECK(failed < p.n_samples / 2);
    check_agreement(&p, "demo (cpu mode)", 30);
    snprintf(errp, sizeof errp, "%s.stderr", path);
    err = slurp(errp);
    CHECK(err != NULL && strstr(err, "vmp: wrote ") != NULL);
    free(err);
    profile_free(&p);
}

/* Lines of the markers in the demo's source. */
static int marker_lines(uint64_t *begin, uint64_t *end)
{
    char *src = slurp(source_path), *s;
    uint64_t line = 1;

    *begin = *end = 0;
    if (src == NULL)
        return -1;
    for (s = src; *s; s++) {
        if (strncmp(s, "vmp-hot-loop-begin", 18) == 0)
            *begin = line;
        else if (strncmp(s, "vmp-hot-loop-end", 16) == 0)
            *end = line;
        else if (*s == '\n')
            line++;
    }
    free(src);
    return *begin && *end > *begin ? 0 : -1;
}

/* The analysis library's view: the function with the greatest leaf weight. */
static void check_top_with_analysis(const char *path, const char *expected)
{
    vmp_profile *prof = NULL;
    vmp_reader *r = NULL;
    const uint64_t *w;
    size_t n = 0, i, best = 0;
    uint64_t total = 0;

    CHECK(vmp_profile_create(&prof, NULL) == VMP_OK);
    CHECK(vmp_reader_open_file(&r, path, NULL) == VMP_OK);
    if (prof != NULL && r != NULL && vmp_profile_read(prof, r) >= 0) {
        w = vmp_profile_function_weights(prof, &n);
        for (i = 1; i < n; i++) {
            total += w[i];
            if (w[i] > w[best])
                best = i;
        }
        if (best != 0) {
            const vmp_afunction *f =
                vmp_analysis_function(vmp_profile_analysis(prof), (uint32_t)best);
            printf("  analysis library: heaviest function %s (%s), %.1f%% of the weight\n", f->name,
                   f->kind, total ? 100.0 * (double)w[best] / (double)total : 0);
            CHECK_STR(f->name, expected);
        } else {
            CHECK(best != 0);
        }
    } else {
        CHECK(!"the analysis library read the profile");
    }
    vmp_reader_close(r);
    vmp_profile_free(prof);
}

/* The analysis library combines the pc with AsyncGetCallTrace's top frame:
 * the hot method must be JIT-compiled code ("nmethod") and the pc-map ranges
 * it ran in must start inside the loop's bci range [lo, hi). */
static void check_loop_with_analysis(const char *path, uint64_t lo, uint64_t hi)
{
    vmp_profile *prof = NULL;
    vmp_reader *r = NULL;
    const uint64_t *fw, *frw;
    size_t nf = 0, nfr = 0, i, best = 0, top = 0;
    uint64_t all = 0, in = 0;

    CHECK(vmp_profile_create(&prof, NULL) == VMP_OK);
    CHECK(vmp_reader_open_file(&r, path, NULL) == VMP_OK);
    if (prof != NULL && r != NULL && vmp_profile_read(prof, r) >= 0) {
        vmp_analysis *a = vmp_profile_analysis(prof);
        fw = vmp_profile_function_weights(prof, &nf);
        frw = vmp_profile_frame_weights(prof, &nfr);
        for (i = 1; i < nf; i++)
            if (fw[i] > fw[best])
                best = i;
        CHECK(best != 0);
        if (best != 0) {
            const vmp_afunction *f = vmp_analysis_function(a, (uint32_t)best);
            CHECK_STR(f->name, "Demo.hotLoop");
            CHECK_STR(f->kind, "nmethod");
            for (i = 1; i < nfr; i++) {
                const vmp_aframe *fr = vmp_analysis_frame(a, (uint32_t)i);
                if (fr == NULL || fr->function != best || frw[i] == 0)
                    continue;
                all += frw[i];
                if (fr->has_range && fr->bc_first >= lo && fr->bc_first < hi)
                    in += frw[i];
                if (top == 0 || frw[i] > frw[top])
                    top = i;
            }
            if (top != 0) {
                const vmp_aframe *fr = vmp_analysis_frame(a, (uint32_t)top);
                printf("  analysis library: %s [%s] ran its loop's bcis in %.1f%% of its weight; "
                       "top range %" PRIu32 "->%" PRIu32 "\n",
                       f->name, f->kind, all ? 100.0 * (double)in / (double)all : 0, fr->bc_first,
                       fr->bc_last);
            }
            CHECK(all > 0 && (double)in >= 0.90 * (double)all);
        }
    } else {
        CHECK(!"the analysis library read the profile");
    }
    vmp_reader_close(r);
    vmp_profile_free(prof);
}

/* Run `vmp ARGS...` (needs --vmp) with its standard output in `out_path`.
 * @return its exit status, or -1. */
static int run_vmp(const char *out_path, const char *a1, const char *a2, const char *a3,
                   const char *a4, const char *a5)
{
    const char *argv[8] = {vmp_path, a1, a2, a3, a4, a5, NULL, NULL};
    char err[4400];
    snprintf(err, sizeof err, "%.4200s.stderr", out_path);
    printf("  vmp %s: ", a1);
    return run_cmd(argv, out_path, err);
}

/* Java's own names in every output of `vmp` (spec R-RES-2, the header's
 * name_separator "."): the report, folded stacks, the SVG and pprof's
 * strings name Demo.hotLoop, and none names a method Smalltalk's way. */
static void check_java_names(const char *path)
{
    static const char *const outs[] = {"report", "folded", "svg", "pprof"};
    char out[4200];
    size_t i;

    if (vmp_path == NULL)
        return;
    for (i = 0; i < sizeof outs / sizeof outs[0]; i++) {
        char *text;
        size_t len = 0;
        FILE *f;
        snprintf(out, sizeof out, "%s.%s", path, outs[i]);
        if (i == 0)
            CHECK_EQ_U64(run_vmp(out, "report", path, NULL, NULL, NULL), 0);
        else if (i == 1)
            CHECK_EQ_U64(run_vmp(out, "flame", path, NULL, NULL, NULL), 0);
        else if (i == 2)
            CHECK_EQ_U64(run_vmp(out, "flame", "--format", "svg", path, NULL), 0);
        else
            CHECK_EQ_U64(run_vmp(out, "pprof", "--raw", path, NULL, NULL), 0);
        /* pprof's string table is binary: read it whole, NULs included */
        text = NULL;
        f = fopen(out, "rb");
        if (f != NULL) {
            text = calloc(1, 64u << 20);
            if (text != NULL)
                len = fread(text, 1, (64u << 20) - 1, f);
            fclose(f);
        }
        CHECK(text != NULL && len > 0);
        if (text != NULL) {
            int has_java = memmem(text, len, "Demo.hotLoop", 12) != NULL;
            int has_smalltalk = memmem(text, len, "Demo>>", 6) != NULL ||
                                (i < 2 && memmem(text, len, ">>", 2) != NULL);
            printf("  vmp %s output: Demo.hotLoop %s, '>>' %s\n", outs[i],
                   has_java ? "found" : "MISSING", has_smalltalk ? "FOUND" : "absent");
            CHECK(has_java);
            CHECK(!has_smalltalk);
        }
        free(text);
    }
}

static void case_hot(void)
{
    char path[4096];
    profile p;
    uint64_t *counts, total = 0, best = 0, begin, end, lo = UINT64_MAX, hi = 0, in = 0, all = 0;
    size_t i, best_i = 0;
    const fn_info *hot;

    profile_path(path, sizeof path, "hot");
    CHECK_EQ_U64(run_demo(path, "interval=1ms", NULL, "hot", "0.75"), 0);
    load(&p, path);
    check_readable(&p, path);
    if (p.n_fns == 0) {
        profile_free(&p);
        return;
    }
    counts = calloc(p.n_fns, sizeof *counts);
    for (i = 0; i < p.n_samples; i++) {
        const node_info *n = leaf_node(&p, &p.samples[i]);
        size_t k;
        if (n == NULL || !n->is_function)
            continue;
        total++;
        for (k = 0; k < p.n_fns; k++) {
            if (p.fns[k].id == n->function) {
                counts[k]++;
                break;
            }
        }
    }
    for (i = 0; i < p.n_fns; i++) {
        if (counts[i] > best) {
            best = counts[i];
            best_i = i;
        }
    }
    hot = &p.fns[best_i];
    printf("  most sampled function (top frame): %s.%s with %" PRIu64 " of %" PRIu64
           " samples (%.1f%%)\n",
           hot->scope, hot->name, best, total, total ? 100.0 * (double)best / (double)total : 0);
    CHECK_STR(hot->scope, "Demo");
    CHECK_STR(hot->name, "hotLoop");
    CHECK(marker_lines(&begin, &end) == 0);

    /* The loop's bytecode range: bcpcs whose line lies between the markers. */
    for (i = 0; i < hot->n_lines; i++) {
        uint64_t bc = hot->lines[2 * i], ln = hot->lines[2 * i + 1];
        uint64_t next = i + 1 < hot->n_lines ? hot->lines[2 * i + 2] : hot->bytecode_size;
        if (ln >= begin && ln <= end) {
            if (bc < lo)
                lo = bc;
            if (next > hi)
                hi = next;
        }
    }
    for (i = 0; i < p.n_samples; i++) {
        const node_info *n = leaf_node(&p, &p.samples[i]);
        if (n == NULL || !n->is_function || n->function != hot->id)
            continue;
        all++;
        if (n->has_bcpc && n->bcpc >= lo && n->bcpc < hi)
            in++;
    }
    printf("  hot loop (lines %" PRIu64 "-%" PRIu64 ") is bci range [%" PRIu64 ", %" PRIu64
           ") of %" PRIu64 " bytecode bytes; it holds %" PRIu64 " of %" PRIu64
           " hotLoop samples (%.1f%%)\n",
           begin, end, lo, hi, hot->bytecode_size, in, all,
           all ? 100.0 * (double)in / (double)all : 0);
    CHECK(lo < hi);
    CHECK(hi - lo < hot->bytecode_size); /* a proper part of the method */
    CHECK(all > 0 && (double)in >= 0.90 * (double)all);
    check_top_with_analysis(path, "Demo.hotLoop");
    check_java_names(path);
    check_loop_with_analysis(path, lo, hi);
    free(counts);
    profile_free(&p);
}

/* Agreement of pc resolution with AsyncGetCallTrace's top frame. */
static void check_agreement(const profile *p, const char *label, uint64_t min_samples)
{
    uint64_t both = 0, agree = 0, no_code = 0, not_java_code = 0, inlined = 0;
    size_t i, shown = 0;

    for (i = 0; i < p->n_samples; i++) {
        const sample_info *s = &p->samples[i];
        const node_info *n = leaf_node(p, s);
        const code_info *c;
        uint64_t fn;
        if (n == NULL || !n->is_function || !s->has_pc)
            continue;
        c = code_at(p, s->pc, s->generation);
        if (c == NULL) {
            no_code++;
            continue;
        }
        if (c->function == 0) {
            not_java_code++;
            continue;
        }
        both++;
        fn = function_at(c, s->pc);
        if (fn == n->function) {
            agree++;
            inlined += fn != c->function;
        } else if (shown++ < 5) {
            const fn_info *a = find_fn(p, fn), *b = find_fn(p, n->function);
            printf("    mismatch: pc %#" PRIx64 " (+%#" PRIx64 ") in code %" PRIu64
                   " -> %s.%s; AsyncGetCallTrace says %s.%s bci %" PRIu64 "\n",
                   s->pc, s->pc - c->start, c->id, a ? a->scope : "?", a ? a->name : "?",
                   b ? b->scope : "?", b ? b->name : "?", n->has_bcpc ? n->bcpc : 0);
        }
    }
    printf("  %s: pc->method agrees with AsyncGetCallTrace's top frame in %.2f%% "
           "(%" PRIu64 " of %" PRIu64 " samples whose pc is in compiled Java code; "
           "%" PRIu64 " of the agreeing ones in inlined code; "
           "%" PRIu64 " in stubs or the interpreter, %" PRIu64 " outside code objects)\n",
           label, both ? 100.0 * (double)agree / (double)both : 0, agree, both, inlined,
           not_java_code, no_code);
    CHECK(both >= min_samples);
    CHECK((double)agree >= 0.99 * (double)both);
}

static void case_resolve(void)
{
    char path[4096];
    profile p;

    profile_path(path, sizeof path, "resolve");
    CHECK_EQ_U64(run_demo(path, "interval=1ms,mode=wall", NULL, "all", "1"), 0);
    load(&p, path);
    check_readable(&p, path);
    check_agreement(&p, "resolve", 100);
    profile_free(&p);
}

/* The leaf weight of ChurnWorker's applyAsLong in `path`, read with
 * analysis `flags`: summed over the names that are its (grouped: the one
 * "ChurnWorker.applyAsLong [xN]", N into *members; apart: one name per
 * hidden class, their number into *members). */
static uint64_t churn_weight(const char *path, unsigned flags, uint64_t *members)
{
    vmp_analysis_options o = VMP_ANALYSIS_OPTIONS_INIT;
    vmp_profile *prof = NULL;
    vmp_reader *r = NULL;
    uint64_t sum = 0;

    *members = 0;
    o.flags = flags;
    CHECK(vmp_profile_create(&prof, &o) == VMP_OK);
    CHECK(vmp_reader_open_file(&r, path, NULL) == VMP_OK);
    if (prof != NULL && r != NULL && vmp_profile_read(prof, r) >= 0) {
        size_t n, i;
        const uint64_t *w = vmp_profile_function_weights(prof, &n);
        const vmp_analysis *a = vmp_profile_analysis(prof);
        for (i = 1; i < n; i++) {
            const vmp_afunction *f = vmp_analysis_function(a, (uint32_t)i);
            size_t len = f ? strlen(f->name) : 0;
            if (f == NULL || w[i] == 0)
                continue;
            if (!(flags & VMP_ANALYSIS_NO_GROUP_HIDDEN) &&
                strncmp(f->name, "ChurnWorker.applyAsLong [x", 26) == 0) {
                sum += w[i];
                *members = f->members;
            } else if ((flags & VMP_ANALYSIS_NO_GROUP_HIDDEN) &&
                       strncmp(f->name, "ChurnWorker.0x", 14) == 0 && len > 12 &&
                       strcmp(f->name + len - 12, ".applyAsLong") == 0) {
                sum += w[i];
                (*members)++; /* per kind: nmethod and interpreted may both count */
            }
        }
    }
    vmp_reader_close(r);
    vmp_profile_free(prof);
    return sum;
}

static void case_churn(void)
{
    static const char *const extra[] = {"-XX:ReservedCodeCacheSize=16m", NULL};
    char path[4096];
    profile p;

    profile_path(path, sizeof path, "churn");
    CHECK_EQ_U64(run_demo(path, "interval=1ms,mode=wall", extra, "churn", "1"), 0);
    load(&p, path);
    check_readable(&p, path);
    printf("  churn: %zu code objects, %" PRIu64 " CODE_FREE records, final generation %" PRIu64
           " (END says %" PRIu64 ")\n",
           p.n_codes, p.n_free, p.max_generation, p.end.generation);
    CHECK(p.n_free >= 10);
    CHECK(p.max_generation >= 10);
    CHECK_EQ_U64(p.end.generation, p.max_generation);
    check_agreement(&p, "churn", 100);
    profile_free(&p);
    {
        /* the hidden classes' methods: one name, the members' weight */
        uint64_t grouped_members, apart_names;
        uint64_t grouped = churn_weight(path, 0, &grouped_members);
        uint64_t apart = churn_weight(path, VMP_ANALYSIS_NO_GROUP_HIDDEN, &apart_names);
        printf("  churn: ChurnWorker.applyAsLong [x%" PRIu64 "] weighs %" PRIu64 "; apart, %" PRIu64
               " names weigh %" PRIu64 "\n",
               grouped_members, grouped, apart_names, apart);
        CHECK(grouped_members >= 10);
        CHECK(apart_names >= 2);
        CHECK(grouped > 0);
        CHECK_EQ_U64(grouped, apart);
    }
}

/* Run the spin workload at `interval` in `mode` with `sampler` (NULL: the
 * default); check that the busy thread's weight is within [min_share, 1.1]
 * of its CPU time, and, when perf events ran, that it got at least
 * `min_records` records per CPU-second. */
static void rate_at(const char *interval, double interval_ns, const char *mode, const char *sampler,
                    double min_share, double min_records)
{
    char path[4096], opts[96];
    profile p;
    uint64_t tid = 0, records = 0, weighted = 0;
    double cpu_ns, expected;
    size_t i;

    snprintf(path, sizeof path, "%s/rate-%s-%s-%s.vmp", work_dir, mode, interval,
             sampler ? sampler : "auto");
    snprintf(opts, sizeof opts, "interval=%s,mode=%s%s%s", interval, mode,
             sampler ? ",sampler=" : "", sampler ? sampler : "");
    CHECK_EQ_U64(run_demo(path, opts, NULL, "spin", "0.5"), 0);
    load(&p, path);
    check_readable(&p, path);
    cpu_ns = demo_number(path, "spin_cpu_ns");
    for (i = 0; i < p.n_threads; i++) {
        if (strcmp(p.threads[i].name, "vmp-spin") == 0)
            tid = p.threads[i].id;
    }
    CHECK(tid != 0);
    CHECK(cpu_ns > 1e8);
    for (i = 0; i < p.n_samples; i++) {
        if (p.samples[i].thread == tid) {
            records++;
            weighted += p.samples[i].weight;
        }
    }
    expected = cpu_ns / interval_ns;
    printf("  %s rate at %s (sampler %s): busy thread used %.3f s of CPU; requested %.0f "
           "samples/s; %" PRIu64 " records (%.0f/s), standing for %" PRIu64
           " samples (%.0f/s = %.1f%% of requested)\n",
           mode, interval, p.sampler ? p.sampler : "?", cpu_ns / 1e9, 1e9 / interval_ns, records,
           (double)records / (cpu_ns / 1e9), weighted, (double)weighted / (cpu_ns / 1e9),
           expected > 0 ? 100.0 * (double)weighted / expected : 0);
    CHECK((double)weighted >= min_share * expected);
    if (strcmp(mode, "cpu") == 0) /* wall time exceeds CPU time on a loaded machine */
        CHECK((double)weighted <= 1.1 * expected);
    if (sampler != NULL && strcmp(sampler, "posix") == 0)
        CHECK(p.sampler != NULL && strcmp(p.sampler, "posix cpu timer") == 0);
    if (p.sampler != NULL && strcmp(p.sampler, "perf_event cpu-clock") == 0)
        CHECK((double)records >= min_records * cpu_ns / 1e9);
    else if (strcmp(mode, "cpu") == 0 && sampler == NULL)
        printf("  (perf events refused here: the record floor is not checked)\n");
    profile_free(&p);
}

/* The lines of `text` that begin with `prefix`. */
static size_t count_lines(const char *text, const char *prefix)
{
    size_t n = 0, len = strlen(prefix);
    const char *at = text;
    while (at != NULL && *at != '\0') {
        if (strncmp(at, prefix, len) == 0)
            n++;
        at = strchr(at, '\n');
        if (at != NULL)
            at++;
    }
    return n;
}

/* `vmp info` on a profile of hundreds of threads lists the 20 with the
 * most samples and says how many more; `--threads` lists all. */
static void check_info_threads(const char *path)
{
    char out[4200];
    char *text;
    size_t shown, all, lines;

    if (vmp_path == NULL)
        return;
    snprintf(out, sizeof out, "%s.info", path);
    CHECK_EQ_U64(run_vmp(out, "info", path, NULL, NULL, NULL), 0);
    text = slurp(out);
    shown = text ? count_lines(text, "  thread ") : 0;
    lines = text ? count_lines(text, "") : 0;
    CHECK(text != NULL && strstr(text, "  ... and ") != NULL &&
          strstr(text, " more (--threads lists all)") != NULL);
    free(text);
    CHECK_EQ_U64(run_vmp(out, "info", "--threads", path, NULL, NULL), 0);
    text = slurp(out);
    all = text ? count_lines(text, "  thread ") : 0;
    free(text);
    printf("  vmp info: %zu lines, %zu of %zu threads listed (--threads: all)\n", lines, shown,
           all);
    CHECK_EQ_U64(shown, 20);
    CHECK(all > 400);
    CHECK(lines <= 60);
}

/* 500 threads, each shorter than the interval: their sampled CPU (weight x
 * interval) is not zero and within 40% of their measured CPU (each thread's
 * samples fall on a grid with a random phase, vmp_agent_clock.h). */
static void case_short(void)
{
    char path[4096];
    profile p;
    double cpu_ns, sampled_ns = 0;
    uint64_t records = 0;
    size_t i, k;

    snprintf(path, sizeof path, "%s/short.vmp", work_dir);
    CHECK_EQ_U64(run_demo(path, "interval=1ms", NULL, "short", "1"), 0);
    load(&p, path);
    check_readable(&p, path);
    cpu_ns = demo_number(path, "short_cpu_ns");
    for (i = 0; i < p.n_samples; i++) {
        for (k = 0; k < p.n_threads; k++) {
            if (p.threads[k].id == p.samples[i].thread &&
                strncmp(p.threads[k].name, "vmp-short-", 10) == 0) {
                sampled_ns += 1e6 * (double)p.samples[i].weight;
                records++;
                break;
            }
        }
    }
    printf("  short threads (sampler %s): measured %.1f ms of CPU, sampled %.1f ms (%.1f%%) in "
           "%" PRIu64 " records\n",
           p.sampler ? p.sampler : "?", cpu_ns / 1e6, sampled_ns / 1e6,
           cpu_ns > 0 ? 100.0 * sampled_ns / cpu_ns : 0, records);
    CHECK(cpu_ns > 1e7);
    CHECK(sampled_ns > 0);
    CHECK(sampled_ns >= 0.6 * cpu_ns && sampled_ns <= 1.4 * cpu_ns);
    profile_free(&p);
    check_info_threads(path);
}

static void case_rate(void)
{
    /* perf events where allowed: the asked rate in records, not only weight */
    rate_at("1ms", 1e6, "cpu", NULL, 0.95, 600);
    rate_at("100us", 1e5, "cpu", NULL, 0.95, 3000);
    /* the fallback, forced: fewer records, the same weight */
    rate_at("1ms", 1e6, "cpu", "posix", 0.90, 0);
}

/* Wall mode: the agent's thread signals every thread at each interval; a
 * busy thread's wall time is about its CPU time. */
static void case_wall(void)
{
    rate_at("1ms", 1e6, "wall", NULL, 0.90, 0);
}

/* An output file that cannot be created: one warning, the program runs on. */
static void case_nofile(void)
{
    char path[4096], base[4096], errp[4200];
    char *err, *w1, *w2;

    snprintf(path, sizeof path, "%s/no-such-dir/x.vmp", work_dir);
    snprintf(base, sizeof base, "%s/nofile", work_dir);
    log_base = base;
    CHECK_EQ_U64(run_demo(path, "interval=1ms", NULL, "hot", "0.25"), 0);
    log_base = NULL;
    snprintf(errp, sizeof errp, "%s.stderr", base);
    err = slurp(errp);
    CHECK(access(path, F_OK) != 0);
    w1 = err ? strstr(err, "vmp: cannot open") : NULL;
    w2 = w1 ? strstr(w1, "\nvmp: ") : NULL;
    CHECK(w1 != NULL);
    CHECK(w2 == NULL); /* warned once, nothing else */
    if (w1 != NULL)
        printf("  agent said: %.*s\n", (int)strcspn(w1, "\n"), w1);
    free(err);
}

/* `vmp record` runs the command with the agent, writes the profile where -o
 * says and exits with the command's status. */
static void case_record(void)
{
    char path[4096], errp[4200];
    char *err;
    profile p;

    CHECK(vmp_path != NULL);
    if (vmp_path == NULL)
        return;
    profile_path(path, sizeof path, "record");
    CHECK_EQ_U64(run_demo_with(vmp_path, path, "", NULL, "exit", "0.3"), 3);
    load(&p, path);
    check_readable(&p, path);
    printf("  record: label case = \"%s\"\n", p.case_label ? p.case_label : "(none)");
    CHECK(p.case_label != NULL && strcmp(p.case_label, "record, with a space:1=2%") == 0);
    snprintf(errp, sizeof errp, "%s.stderr", path);
    err = slurp(errp);
    CHECK(err != NULL && strstr(err, "vmp record: ") != NULL && strstr(err, " samples (") != NULL);
    if (err != NULL && strstr(err, "vmp record: ") != NULL)
        printf("  %.*s\n", (int)strcspn(strstr(err, "vmp record: "), "\n"),
               strstr(err, "vmp record: "));
    free(err);
    profile_free(&p);
}

/* The innermost function of resolved stack `stack` and its caller's (each
 * NULL when there is none). */
static void leaf_and_caller(vmp_analysis *a, uint32_t stack, const vmp_afunction **leaf,
                            const vmp_afunction **caller)
{
    const vmp_astack *st = vmp_analysis_stack(a, stack);
    const vmp_aframe *fr = st ? vmp_analysis_frame(a, st->frame) : NULL;
    const vmp_astack *up = st && st->parent ? vmp_analysis_stack(a, st->parent) : NULL;
    const vmp_aframe *ufr = up ? vmp_analysis_frame(a, up->frame) : NULL;
    *leaf = fr ? vmp_analysis_function(a, fr->function) : NULL;
    *caller = ufr ? vmp_analysis_function(a, ufr->function) : NULL;
}

/* Allocation samples (spec.md §5.15, kind "alloc"): Demo.allocLarge
 * allocates byte[3072] and Demo.allocSmall byte[1024], as often each, so
 * 3088 of every 4128 bytes (16-byte headers) are allocLarge's (74.8%).  Each
 * method's share of the sampled bytes lies within 5 points of it, the
 * allocated class is the innermost frame of their samples, the bytes they
 * stand for add up to what was allocated, and the CPU samples are there as
 * without allocation sampling (R-KND-3). */
typedef struct alloc_acc {
    vmp_analysis *a;
    uint64_t large, small, other, class_top, records;
} alloc_acc;

static int alloc_visit(const vmp_profile_stack_entry *e, void *payload)
{
    alloc_acc *acc = payload;
    const vmp_afunction *leaf, *caller;
    int is_byte_array;
    leaf_and_caller(acc->a, e->stack, &leaf, &caller);
    is_byte_array = leaf && strcmp(leaf->kind, "class") == 0 && strcmp(leaf->name, "byte[]") == 0;
    if (is_byte_array && caller &&
        (strcmp(caller->name, "Demo.allocLarge") == 0 ||
         strcmp(caller->name, "Demo.keepAlloc") == 0)) {
        acc->large += e->weight;
        acc->class_top += e->weight;
    } else if (is_byte_array && caller &&
               (strcmp(caller->name, "Demo.allocSmall") == 0 ||
                strcmp(caller->name, "Demo.dropAlloc") == 0)) {
        acc->small += e->weight;
        acc->class_top += e->weight;
    } else {
        acc->other += e->weight;
    }
    return 0;
}

/* The number after "key" in the demo's standard output of `path`, 0 when
 * absent. */
static uint64_t stdout_number(const char *path, const char *key)
{
    char outp[4200];
    char *out, *at;
    uint64_t v = 0;
    snprintf(outp, sizeof outp, "%s.stdout", path);
    out = slurp(outp);
    at = out ? strstr(out, key) : NULL;
    if (at)
        v = strtoull(at + strlen(key), NULL, 10);
    free(out);
    return v;
}

/* Visit the stacks of the samples of kind `kind` (unit `unit`) of the
 * profile at `path` with `fn` (*a_slot set to the analysis first); the
 * records of the kind, of the CPU samples, and the number of kinds of the
 * file, through `kr`.  @return 1 when read and the kind has that unit. */
typedef struct kind_read {
    uint64_t records, cpu_records;
    size_t n_kinds;
} kind_read;

static int visit_kind(const char *path, const char *kind, const char *unit, vmp_analysis **a_slot,
                      int (*fn)(const vmp_profile_stack_entry *e, void *payload), void *acc,
                      kind_read *kr)
{
    vmp_analysis_options ao = VMP_ANALYSIS_OPTIONS_INIT;
    vmp_profile *prof = NULL;
    vmp_reader *r = NULL;
    int ok = 0;
    memset(kr, 0, sizeof *kr);
    ao.kind = kind;
    CHECK(vmp_profile_create(&prof, &ao) == VMP_OK);
    CHECK(vmp_reader_open_file(&r, path, NULL) == VMP_OK);
    if (prof != NULL && r != NULL && vmp_profile_read(prof, r) >= 0) {
        size_t nk = 0, i;
        const vmp_akind *k;
        *a_slot = vmp_profile_analysis(prof);
        k = vmp_analysis_kinds(*a_slot, &nk);
        kr->n_kinds = nk;
        kr->cpu_records = nk > 0 ? k[0].records : 0;
        for (i = 1; i < nk; i++)
            if (strcmp(k[i].name, kind) == 0) {
                kr->records = k[i].records;
                ok = strcmp(k[i].unit, unit) == 0;
            }
        vmp_profile_foreach_stack(prof, fn, acc);
    }
    *a_slot = NULL;
    vmp_reader_close(r);
    vmp_profile_free(prof);
    return ok;
}

static void case_alloc(void)
{
    char path[4096];
    alloc_acc acc;
    kind_read kr;
    uint64_t pairs = 0;
    double truth = 3088.0 / 4128.0, share, bytes, sampled;

    profile_path(path, sizeof path, "alloc");
    CHECK_EQ_U64(run_demo(path, "interval=1ms,alloc=32k", NULL, "alloc", "0.75"), 0);
    check_valid(path);
    pairs = stdout_number(path, "alloc_pairs=");
    CHECK(pairs > 0);
    memset(&acc, 0, sizeof acc);
    CHECK(visit_kind(path, "alloc", "bytes", &acc.a, alloc_visit, &acc, &kr));
    bytes = (double)pairs * 4128.0;
    sampled = (double)(acc.large + acc.small);
    share = sampled > 0 ? (double)acc.large / sampled : 0;
    printf("  alloc: %" PRIu64 " allocation samples, %" PRIu64 " CPU samples; allocLarge "
           "%.1f%% of the two methods' sampled bytes (truth %.1f%%), their bytes %.3g of "
           "%.3g allocated (%.1f%%), other stacks %.1f%% of all\n",
           kr.records, kr.cpu_records, 100 * share, 100 * truth, sampled, bytes,
           bytes > 0 ? 100 * sampled / bytes : 0,
           acc.large + acc.small + acc.other
               ? 100.0 * (double)acc.other / (double)(acc.large + acc.small + acc.other)
               : 0.0);
    CHECK_EQ_U64(kr.n_kinds, 2);
    CHECK(kr.records >= 200);
    CHECK(kr.cpu_records > 100); /* CPU samples beside them */
    CHECK(share > truth - 0.05 && share < truth + 0.05);
    /* the bytes the samples stand for: the allocated bytes, give or take
     * the sampling's error and what the JVM allocates besides */
    CHECK(sampled > 0.8 * bytes && sampled < 1.2 * bytes);
}

/* Live objects (spec.md §5.15, kind "live", live=on): Demo.keepAlloc
 * keeps its 16,000 byte[4096], Demo.dropAlloc keeps 64 of as many.  At the
 * end, at least 95% of the live bytes are keepAlloc's, and they are (within
 * 5%) the bytes its allocation samples stood for: every one is alive. */
static void case_live(void)
{
    char path[4096];
    alloc_acc alloc, live;
    kind_read kr;
    uint64_t n_alloc = 0, n_live = 0;

    profile_path(path, sizeof path, "live");
    CHECK_EQ_U64(run_demo(path, "interval=1ms,alloc=16k,live=on", NULL, "live", "1"), 0);
    check_valid(path);
    memset(&alloc, 0, sizeof alloc);
    memset(&live, 0, sizeof live);
    CHECK(visit_kind(path, "alloc", "bytes", &alloc.a, alloc_visit, &alloc, &kr));
    n_alloc = kr.records;
    CHECK(visit_kind(path, "live", "bytes", &live.a, alloc_visit, &live, &kr));
    n_live = kr.records;
    CHECK_EQ_U64(kr.n_kinds, 3);
    /* alloc_visit: "large" is keepAlloc, "small" dropAlloc here */
    printf("  live: %" PRIu64 " allocation samples, %" PRIu64 " live; keepAlloc %.1f MB "
           "allocated (truth 65.8), %.1f MB live; dropAlloc %.1f MB allocated, %.2f MB live\n",
           n_alloc, n_live, (double)alloc.large / 1e6, (double)live.large / 1e6,
           (double)alloc.small / 1e6, (double)live.small / 1e6);
    CHECK(n_alloc > 1000 && n_live > 500);
    CHECK((double)live.large >= 0.95 * (double)(live.large + live.small));
    CHECK((double)live.large >= 0.95 * (double)alloc.large && live.large <= alloc.large);
    CHECK((double)alloc.large > 0.8 * 65.8e6 && (double)alloc.large < 1.2 * 65.8e6);
}

/* Lock contention (spec.md §5.15, kind "lock"): the main thread waits in
 * Demo.waitForLock for the monitor of a Demo.Account that "vmp-holder" holds
 * 4 ms at a time; the Java code measures the wait.  The lock samples under
 * waitForLock, with the monitor's class innermost, add up to it within
 * 15%. */
typedef struct lock_acc {
    vmp_analysis *a;
    uint64_t waiter, other;
} lock_acc;

static int lock_visit(const vmp_profile_stack_entry *e, void *payload)
{
    lock_acc *acc = payload;
    const vmp_afunction *leaf, *caller;
    leaf_and_caller(acc->a, e->stack, &leaf, &caller);
    if (leaf && strcmp(leaf->kind, "class") == 0 && strcmp(leaf->name, "Demo$Account") == 0 &&
        caller && strcmp(caller->name, "Demo.waitForLock") == 0)
        acc->waiter += e->weight;
    else
        acc->other += e->weight;
    return 0;
}

static void case_lock(void)
{
    char path[4096];
    lock_acc acc;
    kind_read kr;
    uint64_t truth = 0;

    profile_path(path, sizeof path, "lock");
    CHECK_EQ_U64(run_demo(path, "interval=1ms,lock=10us", NULL, "lock", "0.75"), 0);
    check_valid(path);
    truth = stdout_number(path, "lock_wait_ns=");
    CHECK(truth > 100000000); /* 100 ms at least: the waits are real */
    memset(&acc, 0, sizeof acc);
    CHECK(visit_kind(path, "lock", "nanoseconds", &acc.a, lock_visit, &acc, &kr));
    printf("  lock: %" PRIu64 " lock samples; waitForLock waited %.1f ms by the samples, "
           "%.1f ms by the program (%.1f%%); other stacks %.1f ms\n",
           kr.records, (double)acc.waiter / 1e6, (double)truth / 1e6,
           truth ? 100.0 * (double)acc.waiter / (double)truth : 0.0, (double)acc.other / 1e6);
    CHECK_EQ_U64(kr.n_kinds, 2);
    CHECK((double)acc.waiter > 0.85 * (double)truth && (double)acc.waiter < 1.15 * (double)truth);
}

static void case_exit(void)
{
    char path[4096], outp[4200];
    char *out;
    profile p;

    profile_path(path, sizeof path, "exit");
    CHECK_EQ_U64(run_demo(path, "interval=1ms", NULL, "exit", "0.5"), 3);
    snprintf(outp, sizeof outp, "%s.stdout", path);
    out = slurp(outp);
    CHECK(out != NULL && strstr(out, "exiting from vmp-exiter") != NULL);
    free(out);
    load(&p, path);
    check_readable(&p, path);
    printf("  exit: %zu samples, END record %s\n", p.n_samples, p.seen_end ? "present" : "MISSING");
    profile_free(&p);
}

/* Native frames below Java (mixed stacks): a Java method whose time goes to
 * native code must have the native routine as the innermost frame of its
 * samples, with the method above it in the same stack. */
typedef struct native_acc {
    vmp_analysis *a;
    const char *method;                 /* the Java method, "Demo.deflateWork" */
    const char *stripped;               /* a stripped library's name prefix, or NULL */
    uint64_t under, mixed, stub, in_so; /* weights: under the method, native leaf, stub leaf,
                                           leaf in `stripped` */
    /* the VM's view (spec R-VIEW-7) of the stacks under the method: weight
     * whose innermost Java method is a Deflater method with native code
     * above it; views with a C frame between Java frames, or a stripped
     * library's frame left unnamed; "[HotSpot <state>]" frames */
    uint64_t vm_deflater_native, vm_bad, vm_labels;
} native_acc;

/* Check the VM's view of stack `stack` (state `state`) under acc->method. */
static void native_vm_view(native_acc *acc, uint32_t stack, uint32_t state, uint64_t w)
{
    uint32_t view = 0, id, inner;
    int own = 0, past_inner = 0;
    if (vmp_analysis_vm_stack(acc->a, stack, state, &view) != VMP_OK) {
        acc->vm_bad += w;
        return;
    }
    inner = vmp_analysis_vm_frame(acc->a, view, &own);
    CHECK_EQ_U64(inner, vmp_analysis_vm_frame(acc->a, stack, NULL));
    for (id = view; id != 0; id = vmp_analysis_stack(acc->a, id)->parent) {
        const vmp_astack *st = vmp_analysis_stack(acc->a, id);
        const vmp_afunction *f =
            vmp_analysis_function(acc->a, vmp_analysis_frame(acc->a, st->frame)->function);
        if (st->frame == inner)
            past_inner = 1;
        if (past_inner && !vmp_analysis_is_vm_frame(acc->a, st->frame))
            acc->vm_bad += w; /* a C frame between Java frames */
        if (!past_inner && acc->stripped != NULL &&
            strncmp(f->name, acc->stripped, strlen(acc->stripped)) == 0)
            acc->vm_bad += w; /* a stripped library's frame not labelled */
        if (!past_inner && strcmp(f->kind, "vm state") == 0 &&
            strncmp(f->name, "[HotSpot ", 9) == 0)
            acc->vm_labels += w;
    }
    if (inner && !own &&
        strstr(vmp_analysis_function(acc->a, vmp_analysis_frame(acc->a, inner)->function)->name,
               "Deflater.") != NULL)
        acc->vm_deflater_native += w;
}

static int native_visit(const vmp_profile_stack_entry *e, void *payload)
{
    native_acc *acc = payload;
    const vmp_astack *st = vmp_analysis_stack(acc->a, e->stack);
    const vmp_afunction *leaf = NULL;
    int under = 0;
    uint32_t id = e->stack;
    while (id != 0 && st != NULL) {
        const vmp_aframe *fr = vmp_analysis_frame(acc->a, st->frame);
        const vmp_afunction *f = fr ? vmp_analysis_function(acc->a, fr->function) : NULL;
        if (f != NULL && leaf == NULL)
            leaf = f;
        if (f != NULL && strcmp(f->name, acc->method) == 0)
            under = 1;
        id = st->parent;
        st = id ? vmp_analysis_stack(acc->a, id) : NULL;
    }
    if (under) {
        acc->under += e->weight;
        native_vm_view(acc, e->stack, e->state, e->weight);
        if (leaf != NULL && leaf->code_class == VMP_CLASS_NATIVE)
            acc->mixed += e->weight;
        if (leaf != NULL && strcmp(leaf->kind, "stub") == 0)
            acc->stub += e->weight;
        if (leaf != NULL && acc->stripped != NULL &&
            strncmp(leaf->name, acc->stripped, strlen(acc->stripped)) == 0)
            acc->in_so += e->weight;
    }
    return 0;
}

/* Run the demo's `mode` and check the stacks under `method`: at least
 * `native_floor` of its weight has a native innermost frame, and with the
 * code cache's stubs (once compiled, System.arraycopy runs in one) at least
 * 80%. */
static void check_native_mode(const char *mode, const char *method, const char *stripped,
                              double native_floor)
{
    char path[4096];
    vmp_profile *prof = NULL;
    vmp_reader *r = NULL;
    native_acc acc;

    profile_path(path, sizeof path, mode);
    CHECK_EQ_U64(run_demo(path, "interval=1ms", NULL, mode, "0.75"), 0);
    check_valid(path);
    memset(&acc, 0, sizeof acc);
    acc.method = method;
    acc.stripped = stripped;
    CHECK(vmp_profile_create(&prof, NULL) == VMP_OK);
    CHECK(vmp_reader_open_file(&r, path, NULL) == VMP_OK);
    if (prof != NULL && r != NULL && vmp_profile_read(prof, r) >= 0) {
        const vmp_profile_totals *t = vmp_profile_get_totals(prof);
        acc.a = vmp_profile_analysis(prof);
        vmp_profile_foreach_stack(prof, native_visit, &acc);
        printf("  %s: weight under %s %" PRIu64 ", with a native innermost frame %.1f%%, "
               "a stub %.1f%%, in %s %.1f%%; failed %.1f%% of all\n",
               mode, method, acc.under,
               acc.under ? 100.0 * (double)acc.mixed / (double)acc.under : 0.0,
               acc.under ? 100.0 * (double)acc.stub / (double)acc.under : 0.0,
               stripped ? stripped : "-",
               acc.under ? 100.0 * (double)acc.in_so / (double)acc.under : 0.0,
               t->samples ? 100.0 * (double)t->failed / (double)t->samples : 0.0);
        /* Floors for a loaded machine: the native code does nearly all of
         * the work. */
        CHECK(acc.under > 100);
        CHECK((double)acc.mixed >= native_floor * (double)acc.under);
        CHECK((double)(acc.mixed + acc.stub) >= 0.8 * (double)acc.under);
        /* zlib's internal functions are not in its .dynsym: they show as
         * libz.so.1+0x<start> (spec R-RES-2) */
        if (stripped != NULL)
            CHECK(acc.in_so > 0);
        /* spec R-VIEW-7: the VM's view has the Java methods alone below the
         * innermost one, which for deflate is a Deflater method (native)
         * with zlib's code above it, the stripped part as [HotSpot state] */
        printf("  %s: VM's view: innermost Java method a Deflater one with native code above "
               "%.1f%%, [HotSpot <state>] frames %.1f%%, bad views %" PRIu64 "\n",
               mode, acc.under ? 100.0 * (double)acc.vm_deflater_native / (double)acc.under : 0.0,
               acc.under ? 100.0 * (double)acc.vm_labels / (double)acc.under : 0.0, acc.vm_bad);
        CHECK_EQ_U64(acc.vm_bad, 0);
        if (stripped != NULL) {
            CHECK((double)acc.vm_deflater_native >= native_floor * (double)acc.under);
            CHECK(acc.vm_labels > 0);
        }
    } else {
        CHECK(!"the analysis library read the profile");
    }
    vmp_reader_close(r);
    vmp_profile_free(prof);
}

/* `vmp pprof` of `profile`, read by `go tool pprof -raw` (skipped without
 * go): a function of the stripped zlib is a Location with the Mapping of
 * libz.so.1, so that pprof can symbolize it from the binary. */
static void check_pprof_mapping(const char *vmp_file)
{
    char pb[4200], out[4300], err[4300], env[4][4400];
    static const char *const vars[4] = {"HOME", "GOCACHE", "GOPATH", "PPROF_TMPDIR"};
    const char *text, *maps, *line;
    char *raw;
    int rc, k, found = 0;

    if (vmp_path == NULL)
        return;
    snprintf(pb, sizeof pb, "%s.pb.gz", vmp_file);
    snprintf(out, sizeof out, "%s.pprof.stdout", vmp_file);
    snprintf(err, sizeof err, "%s.pprof.stderr", vmp_file);
    {
        const char *argv[] = {vmp_path, "pprof", "-o", pb, vmp_file, NULL};
        CHECK_EQ_U64(run_cmd(argv, out, err), 0);
    }
    for (k = 0; k < 4; k++) {
        char dir[4300];
        snprintf(dir, sizeof dir, "%s/go-%s", work_dir, vars[k]);
        mkdir(dir, 0755);
        snprintf(env[k], sizeof env[k], "%s=%s", vars[k], dir);
    }
    {
        const char *argv[] = {"/usr/bin/env",
                              env[0],
                              env[1],
                              env[2],
                              env[3],
                              "GOTOOLCHAIN=local",
                              "GOPROXY=off",
                              "PPROF_BINARY_PATH=/nonexistent",
                              "go",
                              "tool",
                              "pprof",
                              "-raw",
                              pb,
                              NULL};
        rc = run_cmd(argv, out, err);
    }
    if (rc == 127) {
        printf("  go not found: the pprof check is skipped\n");
        return;
    }
    CHECK_EQ_U64(rc, 0);
    raw = slurp(out);
    text = raw ? raw : "";
    maps = strstr(text, "Mappings");
    CHECK(maps != NULL && strstr(maps, "libz.so.1") != NULL);
    for (line = text; line != NULL && *line != '\0' && (maps == NULL || line < maps);) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char buf[512];
        snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), line);
        if (strstr(buf, "libz.so.1+0x") != NULL && strstr(buf, "M=") != NULL &&
            strstr(buf, "M=0 ") == NULL)
            found++;
        line = nl ? nl + 1 : NULL;
    }
    printf("  go tool pprof -raw: %d Locations of libz.so.1+0x... with a Mapping\n", found);
    CHECK(found > 0);
    free(raw);
}

/* The separate debug file of this process's C library (the JVM's too), by
 * the build id of its GNU build-id note, into `path` (dl_iterate_phdr). */
static int libc_debug_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    char *path = data;
    (void)size;
    if (!info->dlpi_name || !strstr(info->dlpi_name, "libc.so.6"))
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
        size_t off = 0;
        if (ph->p_type != PT_NOTE)
            continue;
        while (off + sizeof(ElfW(Nhdr)) <= ph->p_memsz) {
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)(const void *)(p + off);
            const unsigned char *name = p + off + sizeof *n;
            const unsigned char *desc = name + ((n->n_namesz + 3) & ~3u);
            if (n->n_type == 3 && n->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
                n->n_descsz >= 2 && n->n_descsz <= 64) {
                char hex[129];
                for (unsigned k = 0; k < n->n_descsz; k++)
                    snprintf(hex + 2 * k, 3, "%02x", desc[k]);
                snprintf(path, 4096, "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
                return 1;
            }
            off += sizeof *n + ((n->n_namesz + 3) & ~3u) + ((n->n_descsz + 3) & ~3u);
        }
    }
    return 0;
}

/* With the C library's debug file on the system (libc6-dbg), every libc
 * frame of the profile at `path` has a name: none is "libc.so.6+0x..." */
static void check_libc_named(const char *path)
{
    char dbg[4096] = "";
    vmp_profile *prof = NULL;
    vmp_reader *r = NULL;
    uint64_t named = 0, unnamed = 0;
    if (!dl_iterate_phdr(libc_debug_cb, dbg) || access(dbg, R_OK) != 0) {
        printf("  libc: no debug file (libc6-dbg): its internal functions stay unnamed\n");
        return;
    }
    CHECK(vmp_profile_create(&prof, NULL) == VMP_OK);
    CHECK(vmp_reader_open_file(&r, path, NULL) == VMP_OK);
    if (prof && r && vmp_profile_read(prof, r) >= 0) {
        vmp_analysis *a = vmp_profile_analysis(prof);
        size_t n = 0, i;
        const uint64_t *fw = vmp_profile_function_weights(prof, &n);
        for (i = 1; i < n; i++) {
            const vmp_afunction *fn = vmp_analysis_function(a, (uint32_t)i);
            const char *m = fn && fn->module_id ? vmp_analysis_module_name(a, fn->module_id) : "";
            if (!fw[i] || !fn || fn->code_class != VMP_CLASS_NATIVE || !strstr(m, "libc.so.6"))
                continue;
            if (strncmp(fn->name, "libc.so.6+0x", 12) == 0)
                unnamed += fw[i];
            else
                named += fw[i];
        }
    }
    printf("  libc (debug file %s): %" PRIu64 " samples in named functions, %" PRIu64
           " in unnamed\n",
           dbg, named, unnamed);
    CHECK_EQ_U64(unnamed, 0);
    vmp_reader_close(r);
    vmp_profile_free(prof);
}

static void case_native(void)
{
    char path[4096];

    /* java.util.zip: libzip and the system's stripped zlib */
    check_native_mode("native", "Demo.deflateWork", "libz.so.1+0x", 0.5);
    profile_path(path, sizeof path, "native");
    check_pprof_mapping(path);
    check_libc_named(path);
    /* System.arraycopy of large arrays: libjvm's copy routines until the
     * method is compiled, then the code cache's arraycopy stubs */
    check_native_mode("copy", "Demo.copyWork", NULL, 0.1);
}

/* The latest name THREAD records gave `tid`, or "". */
static const char *thread_name(const profile *p, uint64_t tid)
{
    const char *name = "";
    size_t i;
    for (i = 0; i < p->n_threads; i++) {
        if (p->threads[i].id == tid && p->threads[i].name[0] != '\0')
            name = p->threads[i].name;
    }
    return name;
}

typedef struct gc_acc {
    const vmp_analysis *a;
    const profile *p;
    uint64_t g1_weight; /* GC threads' weight in stacks with a G1 function */
} gc_acc;

static int gc_visit(const vmp_profile_stack_entry *e, void *payload)
{
    gc_acc *acc = payload;
    uint32_t id = e->stack;
    const vmp_astack *st = vmp_analysis_stack(acc->a, id);

    if (strncmp(thread_name(acc->p, e->thread), "GC Thread#", 10) != 0)
        return 0;
    while (id != 0 && st != NULL) {
        const vmp_aframe *fr = vmp_analysis_frame(acc->a, st->frame);
        const vmp_afunction *f = fr ? vmp_analysis_function(acc->a, fr->function) : NULL;
        if (f != NULL && (strncmp(f->name, "G1", 2) == 0 || strstr(f->name, "::G1") != NULL ||
                          strstr(f->name, "<G1") != NULL)) {
            acc->g1_weight += e->weight;
            break;
        }
        id = st->parent;
        st = id ? vmp_analysis_stack(acc->a, id) : NULL;
    }
    return 0;
}

static void case_threads(void)
{
    char path[4096], outp[4200], lib_arg[4200];
    const char *extra[2] = {NULL, NULL};
    char *out, *at;
    profile p;
    double process_ns, spin_ns, native_ns, sampled_ns = 0;
    double gc_truth = 0, gc_sampled = 0, spin_sampled = 0, native_sampled = 0;
    uint64_t short_named = 0, gc_threads = 0;
    size_t i, k;
    gc_acc acc;
    vmp_profile *prof = NULL;
    vmp_reader *r = NULL;

    CHECK(native_lib != NULL);
    if (native_lib != NULL) {
        snprintf(lib_arg, sizeof lib_arg, "-Dvmp.native=%s", native_lib);
        extra[0] = lib_arg;
    }
    profile_path(path, sizeof path, "threads");
    CHECK_EQ_U64(run_demo(path, "interval=1ms", extra, "threads", "1"), 0);
    check_valid(path);
    load(&p, path);
    check_readable(&p, path);
    process_ns = demo_number(path, "process_cpu_ns");
    spin_ns = demo_number(path, "spin_cpu_ns");
    native_ns = demo_number(path, "native_cpu_ns");
    for (i = 0; i < p.n_samples; i++) {
        const char *name = thread_name(&p, p.samples[i].thread);
        double ns = 1e6 * (double)p.samples[i].weight;
        sampled_ns += ns;
        if (strcmp(name, "vmp-spin") == 0)
            spin_sampled += ns;
        else if (strcmp(name, "vmp-native") == 0)
            native_sampled += ns;
        else if (strncmp(name, "GC Thread#", 10) == 0)
            gc_sampled += ns;
    }
    for (k = 0; k < p.n_threads; k++) {
        if (strncmp(p.threads[k].name, "vmp-short-", 10) == 0)
            short_named++;
    }
    /* the GC threads' truth: their lines "task=TID task_cpu_ns=N" */
    snprintf(outp, sizeof outp, "%s.stdout", path);
    out = slurp(outp);
    for (at = out; at != NULL && (at = strstr(at, "task=")) != NULL; at++) {
        unsigned long long tid;
        double ns;
        if (at != out && at[-1] != '\n')
            continue;
        if (sscanf(at, "task=%llu task_cpu_ns=%lf", &tid, &ns) == 2 &&
            strncmp(thread_name(&p, tid), "GC Thread#", 10) == 0) {
            gc_truth += ns;
            gc_threads++;
        }
    }
    free(out);
    printf("  threads: process used %.3f s of CPU, sampled %.3f s (%.1f%%); vmp-spin %.3f of "
           "%.3f s; vmp-native %.3f of %.3f s; %" PRIu64 " GC threads %.3f of %.3f s; %" PRIu64
           " short threads named\n",
           process_ns / 1e9, sampled_ns / 1e9, process_ns > 0 ? 100 * sampled_ns / process_ns : 0,
           spin_sampled / 1e9, spin_ns / 1e9, native_sampled / 1e9, native_ns / 1e9, gc_threads,
           gc_sampled / 1e9, gc_truth / 1e9, short_named);
    CHECK(process_ns > 1e9);
    CHECK(sampled_ns >= 0.85 * process_ns);
    CHECK(spin_ns > 1e8 && fabs(spin_sampled - spin_ns) <= 0.15 * spin_ns);
    CHECK(native_ns > 1e8 && fabs(native_sampled - native_ns) <= 0.15 * native_ns);
    CHECK(gc_threads > 0 && gc_sampled > 0);
    CHECK(gc_sampled >= 0.5 * gc_truth);
    CHECK(short_named >= 100);

    /* GC threads' stacks name G1's functions (libjvm's symbols) */
    memset(&acc, 0, sizeof acc);
    acc.p = &p;
    CHECK(vmp_profile_create(&prof, NULL) == VMP_OK);
    CHECK(vmp_reader_open_file(&r, path, NULL) == VMP_OK);
    if (prof != NULL && r != NULL && vmp_profile_read(prof, r) >= 0) {
        acc.a = vmp_profile_analysis(prof);
        vmp_profile_foreach_stack(prof, gc_visit, &acc);
    }
    printf("  GC threads: %.1f%% of their weight in stacks with a G1 function\n",
           gc_sampled > 0 ? 100.0 * 1e6 * (double)acc.g1_weight / gc_sampled : 0.0);
    CHECK(acc.g1_weight > 0);
    vmp_reader_close(r);
    vmp_profile_free(prof);
    profile_free(&p);

    /* threads=java: only the threads JVMTI reports */
    profile_path(path, sizeof path, "threads-java");
    CHECK_EQ_U64(run_demo(path, "interval=1ms,threads=java", NULL, "spin", "0.3"), 0);
    load(&p, path);
    check_readable(&p, path);
    for (k = 0; k < p.n_threads; k++) {
        CHECK(strncmp(p.threads[k].name, "GC Thread", 9) != 0);
        CHECK(strstr(p.threads[k].name, "CompilerThre") == NULL);
        CHECK(strcmp(p.threads[k].name, "VM Thread") != 0);
    }
    profile_free(&p);
}

typedef struct kill_acc {
    const vmp_analysis *a;
    uint64_t weight, unnamed; /* all, and in frames named function#ID or code#ID */
} kill_acc;

static int kill_visit(const vmp_profile_stack_entry *e, void *payload)
{
    kill_acc *acc = payload;
    uint32_t id = e->stack;
    const vmp_astack *st = vmp_analysis_stack(acc->a, id);
    int unnamed = 0;
    while (id != 0 && st != NULL) {
        const vmp_aframe *fr = vmp_analysis_frame(acc->a, st->frame);
        const vmp_afunction *f = fr ? vmp_analysis_function(acc->a, fr->function) : NULL;
        if (f != NULL &&
            (strncmp(f->name, "function#", 9) == 0 || strncmp(f->name, "code#", 5) == 0))
            unnamed = 1;
        id = st->parent;
        st = id ? vmp_analysis_stack(acc->a, id) : NULL;
    }
    acc->weight += e->weight;
    if (unnamed)
        acc->unnamed += e->weight;
    return 0;
}

/* The demo under the agent, killed with SIGKILL after 4 s: what its
 * complete chunks hold is valid and resolves (functions and symbols are
 * written before their first use, not at exit). */
static void case_kill(void)
{
    char path[4096], agent_arg[4200], outp[4200];
    const char *argv[12];
    vmp_validate_report rep;
    vmp_reader *r = NULL;
    vmp_profile *prof = NULL;
    kill_acc acc;
    int status = 0, argc = 0;
    pid_t pid;

    profile_path(path, sizeof path, "kill");
    unlink(path);
    snprintf(agent_arg, sizeof agent_arg, "-agentpath:%s=file=%s,interval=1ms", agent_path, path);
    snprintf(outp, sizeof outp, "%s.stdout", path);
    argv[argc++] = java_path;
    argv[argc++] = "-Xmx256m";
    argv[argc++] = agent_arg;
    argv[argc++] = "-jar";
    argv[argc++] = jar_path;
    argv[argc++] = "all";
    argv[argc++] = "5";
    argv[argc] = NULL;
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || dup2(o, 1) < 0 || dup2(o, 2) < 0)
            _exit(126);
        if (preload_env[0] != '\0') {
            putenv(preload_env);
            putenv(java_asan_options);
        }
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    CHECK(pid > 0);
    if (pid <= 0)
        return;
    {
        struct timespec ts = {4, 0};
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

    CHECK(vmp_reader_open_file(&r, path, NULL) == VMP_OK);
    if (r == NULL)
        return;
    CHECK(vmp_validate(&rep, r) == VMP_ERR_TRUNCATED);
    vmp_reader_close(r);
    printf("  killed: %" PRIu64 " complete chunks, %" PRIu64 " samples; %s%s%s\n", rep.chunks,
           rep.samples, rep.rule[0] ? rep.rule : "no rule broken", rep.rule[0] ? ": " : "",
           rep.rule[0] ? rep.message : "");
    /* R-CHK-3 is the truncation itself */
    CHECK(rep.rule[0] == '\0' || strcmp(rep.rule, "R-CHK-3") == 0);
    CHECK(rep.chunks >= 1 && rep.samples > 100);

    memset(&acc, 0, sizeof acc);
    r = NULL;
    CHECK(vmp_profile_create(&prof, NULL) == VMP_OK);
    CHECK(vmp_reader_open_file(&r, path, NULL) == VMP_OK);
    if (prof != NULL && r != NULL) {
        vmp_profile_read(prof, r); /* truncated: what was read counts */
        acc.a = vmp_profile_analysis(prof);
        vmp_profile_foreach_stack(prof, kill_visit, &acc);
    }
    printf("  killed: weight %" PRIu64 " in stacks, %" PRIu64
           " with a frame named function#/code#\n",
           acc.weight, acc.unnamed);
    CHECK(acc.weight > 100);
    CHECK(acc.unnamed == 0);
    vmp_reader_close(r);
    vmp_profile_free(prof);
}

static uint64_t file_bytes(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static void case_metadata(void)
{
    char all[4096], used[4096], idle[4096], blocks[4096];
    uint64_t used_samples, block_samples;
    profile p;

    profile_path(all, sizeof all, "metadata-all");
    profile_path(used, sizeof used, "metadata-used");
    profile_path(idle, sizeof idle, "metadata-idle");
    CHECK_EQ_U64(run_demo(all, "interval=1ms,metadata=all", NULL, "all", "1"), 0);
    CHECK_EQ_U64(run_demo(used, "interval=1ms", NULL, "all", "1"), 0);
    /* no thread runs 10 s of CPU: no sample, the file's fixed part */
    CHECK_EQ_U64(run_demo(idle, "interval=10s", NULL, "all", "1"), 0);
    load(&p, all);
    check_readable(&p, all);
    profile_free(&p);
    load(&p, used);
    check_readable(&p, used);
    used_samples = p.n_samples;
    profile_free(&p);
    check_valid(idle);
    /* format=2.0: samples in SAMPLE_BLOCKs, times in us (spec.md §5.14) */
    profile_path(blocks, sizeof blocks, "metadata-blocks");
    CHECK_EQ_U64(run_demo(blocks, "interval=1ms,format=2.0", NULL, "all", "1"), 0);
    load(&p, blocks);
    check_readable(&p, blocks);
    block_samples = p.n_samples;
    profile_free(&p);
    printf("  metadata: bytes per sample record: 1.2 %.2f, 2.0 (blocks, us) %.2f\n",
           used_samples ? (double)file_bytes(used) / (double)used_samples : 0.0,
           block_samples ? (double)file_bytes(blocks) / (double)block_samples : 0.0);
    {
        /* every function a stack names comes before it (spec R-ID-2) */
        vmp_reader *r = NULL;
        vmp_validate_report rep;
        memset(&rep, 0, sizeof rep);
        CHECK(vmp_reader_open_file(&r, used, NULL) == VMP_OK);
        CHECK(r && vmp_validate(&rep, r) == VMP_OK);
        printf("  metadata: used: %" PRIu64 " functions named before their record%s%s\n",
               rep.late_functions, rep.late_functions ? "; the first: " : "", rep.late_message);
        CHECK_EQ_U64(rep.late_functions, 0);
        vmp_reader_close(r);
    }
    printf("  metadata: file bytes: all %" PRIu64 ", used %" PRIu64
           ", no samples (fixed part) %" PRIu64 "\n",
           file_bytes(all), file_bytes(used), file_bytes(idle));
    CHECK(file_bytes(idle) > 0 && file_bytes(idle) < 100000);
    CHECK(file_bytes(used) > 0 && 2 * file_bytes(used) < file_bytes(all));
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*run)(void);
    } cases[] = {{"demo", case_demo},     {"hot", case_hot},           {"resolve", case_resolve},
                 {"churn", case_churn},   {"rate", case_rate},         {"short", case_short},
                 {"wall", case_wall},     {"exit", case_exit},         {"record", case_record},
                 {"nofile", case_nofile}, {"native", case_native},     {"threads", case_threads},
                 {"kill", case_kill},     {"metadata", case_metadata}, {"alloc", case_alloc},
                 {"lock", case_lock},     {"live", case_live}};

    const char *which = NULL;
    size_t k;
    int i;

    if (getenv("VMP_TEST_JAVA_PRELOAD") != NULL && *getenv("VMP_TEST_JAVA_PRELOAD") != '\0')
        snprintf(preload_env, sizeof preload_env, "LD_PRELOAD=%s", getenv("VMP_TEST_JAVA_PRELOAD"));
    for (i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--java") == 0)
            java_path = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--agent") == 0)
            agent_path = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--jar") == 0)
            jar_path = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--source") == 0)
            source_path = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--workdir") == 0)
            work_dir = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--vmp") == 0)
            vmp_path = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--native-lib") == 0)
            native_lib = argv[++i];
        else
            which = argv[i];
    }
    if (!java_path || !agent_path || !jar_path || !source_path || !work_dir || !which) {
        fprintf(
            stderr,
            "usage: test_jvmti --java J --agent LIB --jar JAR --source DEMO.java "
            "--workdir DIR [--vmp VMP] [--native-lib LIB] "
            "demo|hot|resolve|churn|rate|short|wall|exit|record|native|threads|kill|metadata\n");
        return 2;
    }
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        if (strcmp(which, cases[k].name) == 0) {
            printf("case %s\n", which);
            cases[k].run();
            fflush(stdout);
            fprintf(stderr, "%s jvmti %s\n", vmp_test_failures ? "FAIL" : "ok  ", which);
            VMP_TEST_EXIT();
        }
    }
    fprintf(stderr, "test_jvmti: unknown case '%s'\n", which);
    return 2;
}
