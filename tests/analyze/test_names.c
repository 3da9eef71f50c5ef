/* SPDX-License-Identifier: MIT
 *
 * test_names.c - display names (spec.md R-RES-2): the header's
 * name_separator (1.1) through writer, reader and analysis; a file without
 * it reads as 1.0 with ">>"; hidden classes grouped under one name with
 * their count, their weight the sum of the members' (vmp_analyze.h "Naming
 * rules").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmp_analyze.h"
#include "vmp_analyze_int.h"
#include "vmp_reader.h"
#include "vmp_test.h"
#include "vmp_writer.h"

static void test_hidden_scope_suffix(void)
{
    static const struct {
        const char *scope, *base;
    } cases[] = {
        {"ChurnWorker.0x00007f3c0c01e800", "ChurnWorker"},
        {"ChurnWorker/0x0000000800c04400", "ChurnWorker"},
        {"Demo$$Lambda$14.0x0000000800c03000", "Demo$$Lambda"},
        {"Demo$$Lambda.0x0000000800c03000", "Demo$$Lambda"},
        {"java.lang.invoke.LambdaForm$MH/0x0000000800c04400", "java.lang.invoke.LambdaForm$MH"},
        {"Demo", "Demo"},
        {"Demo$14", "Demo$14"},
        {"Set91", "Set91"},
        {"A.0x12", "A.0x12"}, /* too few hex digits: not a hidden class */
        {"0x00007f3c", "0x00007f3c"},
        {"", ""},
    };

    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = vmp_analysis__hidden_scope_len(cases[i].scope, strlen(cases[i].scope));
        CHECK_EQ_U64(n, strlen(cases[i].base));
        CHECK(strncmp(cases[i].scope, cases[i].base, n) == 0);
    }
}

/* A profile: Demo.hotLoop (2 samples) and applyAsLong of three hidden
 * classes (1, 2 and 3 samples), with `separator` in the header. */
static void write_profile(const char *path, const char *separator)
{
    static const char *const states[] = {"java"};
    static const char *const scopes[] = {"ChurnWorker.0x00007f3c0c01e800",
                                         "ChurnWorker.0x00007f3c0c01f000",
                                         "ChurnWorker.0x00007f3c0c020400"};
    vmp_writer_meta meta;
    vmp_writer *w = NULL;
    vmp_function fn;
    vmp_frame fr;
    vmp_sample s;
    uint64_t i, k;

    memset(&meta, 0, sizeof meta);
    meta.vm_name = "test";
    meta.states = states;
    meta.n_states = 1;
    meta.name_separator = separator;
    vmp_writer_options o = VMP_WRITER_OPTIONS_INIT;
    o.format_major = 1; /* the 1.x minor a name separator needs */
    CHECK(vmp_writer_open(&w, path, &meta, &o) == VMP_OK);
    if (w == NULL)
        return;
    memset(&fn, 0, sizeof fn);
    fn.id = 1;
    fn.scope = "Demo";
    fn.name = "hotLoop";
    CHECK(vmp_writer_function(w, &fn) == VMP_OK);
    for (i = 0; i < 3; i++) {
        fn.id = 2 + i;
        fn.scope = scopes[i];
        fn.name = "applyAsLong";
        CHECK(vmp_writer_function(w, &fn) == VMP_OK);
    }
    memset(&s, 0, sizeof s);
    memset(&fr, 0, sizeof fr);
    s.thread = 1;
    s.generation = VMP_GENERATION_CURRENT;
    s.weight = 1;
    s.frames = &fr;
    s.depth = 1;
    fr.kind = VMP_FRAME_FUNCTION;
    fr.bcpc = VMP_BCPC_NONE;
    for (i = 1; i <= 4; i++) {
        for (k = 0; k < (i == 1 ? 2 : i - 1); k++) {
            fr.value = i;
            CHECK(vmp_writer_sample(w, &s) == VMP_OK);
        }
    }
    CHECK(vmp_writer_close(w, NULL) == VMP_OK);
}

/* Read `path` with analysis `flags`; the weight of every function whose
 * name starts with `prefix` into *weight, their number returned; the
 * format's minor version into *minor. */
static size_t weigh(const char *path, unsigned flags, const char *prefix, uint64_t *weight,
                    unsigned *minor, char *first_name, size_t name_size)
{
    vmp_analysis_options o = VMP_ANALYSIS_OPTIONS_INIT;
    vmp_profile *p = NULL;
    vmp_reader *r = NULL;
    vmp_reader_info ri;
    size_t n = 0, count = 0, i;

    *weight = 0;
    first_name[0] = '\0';
    o.flags = flags;
    CHECK(vmp_profile_create(&p, &o) == VMP_OK);
    CHECK(vmp_reader_open_file(&r, path, NULL) == VMP_OK);
    if (p != NULL && r != NULL && vmp_profile_read(p, r) == VMP_OK) {
        const uint64_t *w = vmp_profile_function_weights(p, &n);
        for (i = 1; i < n; i++) {
            const vmp_afunction *f = vmp_analysis_function(vmp_profile_analysis(p), (uint32_t)i);
            if (f != NULL && w[i] > 0 && strncmp(f->name, prefix, strlen(prefix)) == 0) {
                *weight += w[i];
                if (count++ == 0)
                    snprintf(first_name, name_size, "%s", f->name);
            }
        }
        vmp_reader_get_info(r, &ri);
        *minor = ri.format_minor;
    }
    vmp_reader_close(r);
    vmp_profile_free(p);
    return count;
}

static void test_separator_and_groups(void)
{
    char path[] = "/tmp/vmp-test-names-XXXXXX";
    char name[256];
    uint64_t weight;
    unsigned minor = 99;
    int fd = mkstemp(path);

    CHECK(fd >= 0);
    if (fd < 0)
        return;
    close(fd);

    /* HotSpot's naming: a 1.1 file */
    write_profile(path, ".");
    CHECK_EQ_U64(weigh(path, 0, "Demo", &weight, &minor, name, sizeof name), 1);
    CHECK_STR(name, "Demo.hotLoop");
    CHECK_EQ_U64(weight, 2);
    CHECK_EQ_U64(minor, 1);
    /* three hidden classes: one name with their count and their weight */
    CHECK_EQ_U64(weigh(path, 0, "ChurnWorker", &weight, &minor, name, sizeof name), 1);
    CHECK_STR(name, "ChurnWorker.applyAsLong [x3]");
    CHECK_EQ_U64(weight, 6);
    CHECK_EQ_U64(
        weigh(path, VMP_ANALYSIS_GROUP_NO_COUNT, "ChurnWorker", &weight, &minor, name, sizeof name),
        1);
    CHECK_STR(name, "ChurnWorker.applyAsLong");
    /* apart: one name each, the same weight in all */
    CHECK_EQ_U64(weigh(path, VMP_ANALYSIS_NO_GROUP_HIDDEN, "ChurnWorker.0x", &weight, &minor, name,
                       sizeof name),
                 3);
    CHECK_EQ_U64(weight, 6);

    /* no separator: a 1.0 file, Smalltalk's ">>" */
    write_profile(path, NULL);
    CHECK_EQ_U64(weigh(path, 0, "Demo", &weight, &minor, name, sizeof name), 1);
    CHECK_STR(name, "Demo>>hotLoop");
    CHECK_EQ_U64(minor, 0);
    unlink(path);
}

int main(void)
{
    VMP_TEST_RUN(test_hidden_scope_suffix);
    VMP_TEST_RUN(test_separator_and_groups);
    VMP_TEST_EXIT();
}
