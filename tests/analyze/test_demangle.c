/* SPDX-License-Identifier: MIT
 *
 * test_demangle.c - the Itanium demangling used to name module symbols (spec.md §5.3: symbol names
 * are stored mangled; R-RES-3: tools show the Itanium C++ ABI demangled form).
 */
#include <string.h>

#include "vmp_analyze.h"
#include "vmp_test.h"

static const char *dm(const char *mangled)
{
    static char buf[512];
    if (vmp_demangle(buf, sizeof buf, mangled) == 0)
        return "<fail>";
    return buf;
}

static void test_demangle_nested_names_and_params(void)
{
    CHECK_STR(dm("_ZN2vm2gc7collectEv"), "vm::gc::collect()");
    CHECK_STR(dm("_ZN2vm4Heap4growEm"), "vm::Heap::grow(unsigned long)");
    CHECK_STR(dm("_Z3fooiPKc"), "foo(int, char const*)");
    CHECK_STR(dm("_Z3barv"), "bar()");
    CHECK_STR(dm("_ZN2vm4heapE"), "vm::heap");
    CHECK_STR(dm("_ZNK2vm4Heap9bytesUsedEv"), "vm::Heap::bytesUsed() const");
    CHECK_STR(dm("_ZN2vm6interp9lookupSelEPNS_6ObjectEm"),
              "vm::interp::lookupSel(vm::Object*, unsigned long)");
}

static void test_demangle_ctors_dtors_and_substitutions(void)
{
    CHECK_STR(dm("_ZN2vm4HeapC2Ev"), "vm::Heap::Heap()");
    CHECK_STR(dm("_ZN2vm4HeapD1Ev"), "vm::Heap::~Heap()");
    CHECK_STR(dm("_ZN2vm2gc6Marker4markEPNS_6ObjectE"), "vm::gc::Marker::mark(vm::Object*)");
    CHECK_STR(dm("_ZN2vm4Heap4copyERKS0_"), "vm::Heap::copy(vm::Heap const&)");
    CHECK_STR(dm("_ZN2vm1A1fEPNS_1BES2_"), "vm::A::f(vm::B*, vm::B*)");
    CHECK_STR(dm("_ZNSt6vectorIiE9push_backEv"), "std::vector<int>::push_back()");
    CHECK_STR(dm("_ZSt9terminatev"), "std::terminate()");
}

/* HotSpot's own symbols are templates (as `c++filt` shows them). */
static void test_demangle_hotspot_templates(void)
{
    CHECK_STR(dm("_ZN28G1ConcurrentRefineOopClosure11do_oop_workI9narrowOopEEvPT_"),
              "void G1ConcurrentRefineOopClosure::do_oop_work<narrowOop>(narrowOop*)");
    CHECK_STR(dm("_ZN11StringTable9do_lookupEPKtim"),
              "StringTable::do_lookup(unsigned short const*, int, unsigned long)");
}

/* A long hostile name is refused or demangled, never a crash. */
static void test_demangle_hostile_nesting(void)
{
    static char name[4100];
    size_t n;
    memcpy(name, "_Z1f", 4);
    for (n = 4; n < 4090; n++)
        name[n] = 'P';
    name[n++] = 'i';
    name[n] = '\0';
    (void)dm(name);
    name[n++] = 'P';
    for (; n < sizeof name - 1; n++)
        name[n] = 'P';
    name[n] = '\0';
    CHECK_STR(dm(name), "<fail>"); /* past 4096 bytes: shown raw */
}

/* R-RES-3: a compiler's clone keeps its suffix, as c++filt shows it. */
static void test_demangle_clone_suffixes(void)
{
    CHECK_STR(dm("_ZN2vm2gc7collectEv.cold"), "vm::gc::collect() [clone .cold]");
    CHECK_STR(dm("_ZN2vm4Heap4growEm.constprop.0"),
              "vm::Heap::grow(unsigned long) [clone .constprop.0]");
    CHECK_STR(dm("_Z3barv.isra.0.part.0"), "bar() [clone .isra.0] [clone .part.0]");
    CHECK_STR(dm("_ZN2vm.x"), "<fail>"); /* the name before the suffix must demangle */
    CHECK_STR(dm("_ZNSt6vectorIiE9push_backEv.cold"),
              "std::vector<int>::push_back() [clone .cold]");
}

static void test_demangle_rejects_plain_and_broken_names(void)
{
    char small[8];
    CHECK(vmp_demangle(small, sizeof small, "interpret") == 0);
    CHECK(vmp_demangle(small, sizeof small, "_Z") == 0);
    CHECK(vmp_demangle(small, sizeof small, "_ZN2vm") == 0);
    CHECK(vmp_demangle(small, sizeof small, "_Z99x") == 0);
    CHECK(vmp_demangle(small, sizeof small, "_ZN2vm2gc7collectE") == 15); /* "vm::gc::collect" */
    CHECK_EQ_U64(vmp_demangle(small, sizeof small, "_ZN2vm2gc7collectEv"), 17);
    CHECK_STR(small, "vm::gc:"); /* cut to fit, NUL terminated */
    CHECK_EQ_U64(vmp_demangle(NULL, 0, "_ZN2vm2gc7collectEv"), 17);
}

int main(void)
{
    VMP_TEST_RUN(test_demangle_nested_names_and_params);
    VMP_TEST_RUN(test_demangle_ctors_dtors_and_substitutions);
    VMP_TEST_RUN(test_demangle_clone_suffixes);
    VMP_TEST_RUN(test_demangle_hotspot_templates);
    VMP_TEST_RUN(test_demangle_hostile_nesting);
    VMP_TEST_RUN(test_demangle_rejects_plain_and_broken_names);
    VMP_TEST_EXIT();
}
