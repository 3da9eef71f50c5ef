/* SPDX-License-Identifier: MIT
 *
 * vmp_demangle.c - Itanium C++ ABI demangling of symbol names (spec.md §5.3:
 * symbol names are stored raw; [R-RES-3]) through the C++ runtime's own
 * demangler, __cxa_demangle (libstdc++, the demangler c++filt and gdb share):
 * templates, operators, lambdas and clone suffixes (" [clone .cold]")
 * included.  A name that does not demangle is shown raw by the callers.
 */
#include <stdlib.h>
#include <string.h>

#include "vmp_analyze.h"

/* Declared by <cxxabi.h> for C++; libstdc++ exports it with C linkage. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *length, int *status);

/* Longer names are shown raw: the demangler recurses over a name's nesting,
 * and a name may be hostile. */
#define DM_NAME_MAX 4096

size_t vmp_demangle(char *out, size_t size, const char *name)
{
    char *res;
    int status = 0;
    size_t n;

    if (!name || name[0] != '_' || name[1] != 'Z' || strnlen(name, DM_NAME_MAX + 1) > DM_NAME_MAX)
        return 0;
    res = __cxa_demangle(name, NULL, NULL, &status);
    if (!res || status != 0) {
        free(res);
        return 0;
    }
    n = strlen(res);
    if (size) {
        size_t k = n < size ? n : size - 1;
        memcpy(out, res, k);
        out[k] = '\0';
    }
    free(res);
    return n;
}
