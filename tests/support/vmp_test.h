/* SPDX-License-Identifier: MIT
 *
 * vmp_test.h - minimal assertions for the unit tests.  Each test executable
 * runs its cases with VMP_TEST_RUN() and exits non-zero if any check failed;
 * ctest reports the executable.
 */
#ifndef VMP_TEST_H
#define VMP_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int vmp_test_failures;
static int vmp_test_checks;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        vmp_test_checks++;                                                           \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            vmp_test_failures++;                                                     \
        }                                                                            \
    } while (0)

#define CHECK_EQ_U64(a, b)                                                                    \
    do {                                                                                      \
        uint64_t vmp_a_ = (uint64_t)(a), vmp_b_ = (uint64_t)(b);                              \
        vmp_test_checks++;                                                                    \
        if (vmp_a_ != vmp_b_) {                                                               \
            fprintf(stderr, "%s:%d: %s == %s failed: %" PRIu64 " != %" PRIu64 "\n", __FILE__, \
                    __LINE__, #a, #b, vmp_a_, vmp_b_);                                        \
            vmp_test_failures++;                                                              \
        }                                                                                     \
    } while (0)

#define CHECK_STR(a, b)                                                                           \
    do {                                                                                          \
        const char *vmp_a_ = (a), *vmp_b_ = (b);                                                  \
        vmp_test_checks++;                                                                        \
        if (strcmp(vmp_a_, vmp_b_) != 0) {                                                        \
            fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", __FILE__, __LINE__, #a, \
                    #b, vmp_a_, vmp_b_);                                                          \
            vmp_test_failures++;                                                                  \
        }                                                                                         \
    } while (0)

#define VMP_TEST_RUN(fn)                                                                     \
    do {                                                                                     \
        int vmp_before_ = vmp_test_failures;                                                 \
        fn();                                                                                \
        fprintf(stderr, "%s %s\n", vmp_test_failures == vmp_before_ ? "ok  " : "FAIL", #fn); \
    } while (0)

#define VMP_TEST_EXIT()                                                                \
    do {                                                                               \
        fprintf(stderr, "%d checks, %d failed\n", vmp_test_checks, vmp_test_failures); \
        return vmp_test_failures ? 1 : 0;                                              \
    } while (0)

#endif
